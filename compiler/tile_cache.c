/* tile_cache.c: a linear list of the tilings chosen in one compile (a few
 * dozen distinct shapes per network: no index needed). */
#include "tile_cache.h"

#include <stdlib.h>
#include <string.h>

struct entry {
	const char *gen;
	size_t nkey, nval;
	int64_t key[CC_TILE_KEY_MAX];
	double val[CC_TILE_VAL_MAX];
};

struct cc_tile_cache {
	struct entry *e;
	size_t n, cap;
};

struct cc_tile_cache *cc_tile_cache_new(void) { return calloc(1, sizeof(struct cc_tile_cache)); }

void cc_tile_cache_free(struct cc_tile_cache *tc)
{
	if (tc)
		free(tc->e);
	free(tc);
}

static struct entry *find(const struct cc_tile_cache *tc, const char *gen, const int64_t *key,
			  size_t nkey)
{
	for (size_t i = 0; tc && i < tc->n; i++) {
		struct entry *e = &tc->e[i];
		if (e->nkey == nkey && !strcmp(e->gen, gen) &&
		    !memcmp(e->key, key, nkey * sizeof *key))
			return e;
	}
	return NULL;
}

int cc_tile_cache_get(const struct cc_tile_cache *tc, const char *gen, const int64_t *key,
		      size_t nkey, double *val, size_t nval)
{
	const struct entry *e = find(tc, gen, key, nkey);
	if (!e || e->nval != nval)
		return 0;
	memcpy(val, e->val, nval * sizeof *val);
	return 1;
}

void cc_tile_cache_put(struct cc_tile_cache *tc, const char *gen, const int64_t *key, size_t nkey,
		       const double *val, size_t nval)
{
	if (!tc || nkey > CC_TILE_KEY_MAX || nval > CC_TILE_VAL_MAX || find(tc, gen, key, nkey))
		return;
	if (tc->n == tc->cap) {
		size_t cap = tc->cap ? 2 * tc->cap : 16;
		struct entry *e = realloc(tc->e, cap * sizeof *e);
		if (!e)
			return;
		tc->e = e;
		tc->cap = cap;
	}
	struct entry *e = &tc->e[tc->n++];
	e->gen = gen;
	e->nkey = nkey;
	e->nval = nval;
	memcpy(e->key, key, nkey * sizeof *key);
	memcpy(e->val, val, nval * sizeof *val);
}
