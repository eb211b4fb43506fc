/* acl_handles.c: the sets of live handles every ACL entry point checks its
 * arguments against, and the growable arrays they (and the state's other
 * tables) are built on. */
#include <stdlib.h>
#include <string.h>

#include "acl_int.h"

int acl_grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 16;
	void *p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

int acl_h_add(struct handles *h, void *p)
{
	if (acl_grow((void **)&h->v, &h->cap, h->n, sizeof *h->v))
		return -1;
	h->v[h->n++] = p;
	return 0;
}

int acl_h_has(const struct handles *h, const void *p)
{
	for (size_t i = 0; p && i < h->n; i++)
		if (h->v[i] == p)
			return 1;
	return 0;
}

void acl_h_del(struct handles *h, const void *p)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i] == p) {
			h->v[i] = h->v[--h->n];
			return;
		}
}

void acl_h_clear(struct handles *h)
{
	free(h->v);
	memset(h, 0, sizeof *h);
}
