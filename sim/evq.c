/* evq.c: the event queue's heap (events far ahead of the window) and slow
 * paths; see evq.h.  The heap is 4-ary: a node's four children are one
 * 64-byte line (the keys start 3 slots into a 64-byte aligned block). */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

#define PAD 3 /* keys before key[0] in keymem: key[4i + 1 .. 4i + 4] share a line */

int evq_grow(struct sim_evq *q)
{
	size_t cap = q->capev ? 2 * q->capev : 256;
	if (cap > EVQ_SLOT_MASK + 1)
		return -1;
	struct sim_event *ev = realloc(q->ev, cap * sizeof *ev);
	if (!ev)
		return -1;
	q->ev = ev;
	uint32_t *next = realloc(q->next, cap * sizeof *next);
	if (!next)
		return -1;
	q->next = next;
	uint32_t *fr = realloc(q->free, cap * sizeof *fr);
	if (!fr)
		return -1;
	q->free = fr;
	/* every slot was in use: the new ones are the free ones */
	for (size_t s = cap; s > q->capev; s--)
		fr[q->nfree++] = (uint32_t)(s - 1);
	q->capev = cap;
	return 0;
}

static int key_less(const struct evq_key *a, const struct evq_key *b)
{
	return a->t < b->t || (a->t == b->t && a->k < b->k);
}

static int heap_grow(struct sim_evq *q)
{
	size_t cap = q->cap ? 2 * q->cap : 256;
	/* cap is a power of 2 from 256: cap + 4 keys are whole lines */
	size_t bytes = (cap + PAD + 1) * sizeof(struct evq_key);
	void *mem = aligned_alloc(64, bytes);
	if (!mem)
		return -1;
	struct evq_key *key = (struct evq_key *)mem + PAD;
	if (q->nheap)
		memcpy(key, q->key, q->nheap * sizeof *key);
	free(q->keymem);
	q->keymem = mem;
	q->key = key;
	q->cap = cap;
	return 0;
}

int evq_heap_push(struct sim_evq *q, uint64_t t, uint32_t slot)
{
	if (q->nheap == q->cap && heap_grow(q))
		return -1;
	if (q->seq == EVQ_SEQ_END)
		evq_renumber(q);
	struct evq_key x = { t, q->seq++ << EVQ_SLOT_BITS | slot };
	struct evq_key *h = q->key;
	size_t i = q->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 4;
		if (!key_less(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
	return 0;
}

uint32_t evq_heap_pop(struct sim_evq *q)
{
	struct evq_key *h = q->key;
	uint32_t slot = (uint32_t)(h[0].k & EVQ_SLOT_MASK);
	struct evq_key x = h[--q->nheap];
	size_t n = q->nheap, i = 0;
	for (;;) {
		size_t c = 4 * i + 1, best = c;
		if (c >= n)
			break;
		for (size_t j = c + 1; j < c + 4 && j < n; j++)
			if (key_less(&h[j], &h[best]))
				best = j;
		if (!key_less(&h[best], &x))
			break;
		h[i] = h[best];
		i = best;
	}
	if (n)
		h[i] = x;
	return slot;
}

static int key_cmp(const void *a, const void *b)
{
	const struct evq_key *x = a, *y = b;
	return key_less(x, y) ? -1 : key_less(y, x);
}

/* A sorted array is a heap; numbering the sorted keys 0, 1, ... keeps their
 * order, and every later push gets a larger seq. */
void evq_renumber(struct sim_evq *q)
{
	qsort(q->key, q->nheap, sizeof *q->key, key_cmp);
	for (size_t i = 0; i < q->nheap; i++)
		q->key[i].k = (uint64_t)i << EVQ_SLOT_BITS | (q->key[i].k & EVQ_SLOT_MASK);
	q->seq = q->nheap;
}

void evq_clear(struct sim_evq *q)
{
	q->n = q->nwin = q->nheap = 0;
	memset(q->used, 0, sizeof q->used);
	q->nfree = 0;
	for (size_t s = q->capev; s > 0; s--)
		q->free[q->nfree++] = (uint32_t)(s - 1);
}

void evq_free(struct sim_evq *q)
{
	free(q->keymem);
	free(q->ev);
	free(q->next);
	free(q->free);
	memset(q, 0, sizeof *q);
}
