/* tile_cache.h: tilings a compile has already chosen, by the shape they were
 * chosen for.  A generator times each candidate tiling on the dry run, and a
 * network repeats its layers' shapes: the second layer of a shape takes the
 * first one's answer.  One cache per compile (cc_ctx), so nothing outlives
 * the SoC configuration it was chosen for. */
#ifndef DV_TILE_CACHE_H
#define DV_TILE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define CC_TILE_KEY_MAX 192 /* int64 words of a key */
#define CC_TILE_VAL_MAX 8   /* doubles of a value */

struct cc_tile_cache;

struct cc_tile_cache *cc_tile_cache_new(void);
void cc_tile_cache_free(struct cc_tile_cache *tc);
/* The value stored under key (nkey words, tagged by the generator's name
 * so that two generators' keys never meet); 1 if found (val filled in). */
int cc_tile_cache_get(const struct cc_tile_cache *tc, const char *gen, const int64_t *key,
		      size_t nkey, double *val, size_t nval);
/* Store (a full cache or no memory: not stored, which only costs time). */
void cc_tile_cache_put(struct cc_tile_cache *tc, const char *gen, const int64_t *key, size_t nkey,
		       const double *val, size_t nval);

#endif
