/* evq.c: the event queue's slow paths; see evq.h. */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

#define PAD 3 /* keys before key[0] in keymem: key[4i + 1 .. 4i + 4] share a line */

int evq_grow(struct sim_evq *q)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 256;
		/* cap is a power of 2 from 256: cap + 4 keys are whole lines */
		size_t bytes = (cap + PAD + 1) * sizeof(struct evq_key);
		void *mem = aligned_alloc(64, bytes);
		if (!mem)
			return -1;
		struct evq_key *key = (struct evq_key *)mem + PAD;
		if (q->n)
			memcpy(key, q->key, q->n * sizeof *key);
		free(q->keymem);
		q->keymem = mem;
		q->key = key;
		q->cap = cap;
	}
	if (q->nfree == 0) {
		size_t cap = q->capev ? 2 * q->capev : 256;
		if (cap > EVQ_SLOT_MASK + 1)
			return -1;
		struct sim_event *ev = realloc(q->ev, cap * sizeof *ev);
		if (!ev)
			return -1;
		q->ev = ev;
		uint32_t *fr = realloc(q->free, cap * sizeof *fr);
		if (!fr)
			return -1;
		q->free = fr;
		/* every slot was in use: the new ones are the free ones */
		for (size_t s = cap; s > q->capev; s--)
			fr[q->nfree++] = (uint32_t)(s - 1);
		q->capev = cap;
	}
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct evq_key *x = a, *y = b;
	return evq_less(x, y) ? -1 : evq_less(y, x);
}

/* A sorted array is a heap; numbering the sorted keys 0, 1, ... keeps their
 * order, and every later push gets a larger seq. */
void evq_renumber(struct sim_evq *q)
{
	qsort(q->key, q->n, sizeof *q->key, key_cmp);
	for (size_t i = 0; i < q->n; i++)
		q->key[i].k = (uint64_t)i << EVQ_SLOT_BITS | (q->key[i].k & EVQ_SLOT_MASK);
	q->seq = q->n;
}

void evq_clear(struct sim_evq *q)
{
	q->n = 0;
	q->root_taken = 0;
	q->nfree = 0;
	for (size_t s = q->capev; s > 0; s--)
		q->free[q->nfree++] = (uint32_t)(s - 1);
}

void evq_free(struct sim_evq *q)
{
	free(q->keymem);
	free(q->ev);
	free(q->free);
	memset(q, 0, sizeof *q);
}
