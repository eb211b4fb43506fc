/* evq.h: the engine's event queue: events popped in (time, push order).
 *
 * A 4-ary min-heap of 16-byte keys, the events' other fields kept aside in a
 * pool.  The binary heap of 40-byte events it replaces took a third of a
 * timing-mode run (ResNet-50 on the 910): each level of its pop was a
 * dependent load of two children that the work between pops had pushed out
 * of the host's L1.  Here a node's four children are one 64-byte line (the
 * keys start 3 slots into a 64-byte aligned block) and the tree is half as
 * deep.  Keys (t, seq) are all distinct, so any correct heap pops the same
 * sequence: this cannot move a cycle.
 *
 * A key is the event's time and k = seq << EVQ_SLOT_BITS | slot: seq, the
 * push count, orders events of the same time; slot is where its payload
 * lies.  When seq would pass 2^(64 - EVQ_SLOT_BITS), the pending events are
 * renumbered 0, 1, ... in their order (evq.c), which keeps every order. */
#ifndef DV_EVQ_H
#define DV_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct sim_launch;

struct sim_event {
	uint64_t t;
	uint32_t core;
	uint8_t kind;      /* EV_* in engine.c, or a pipe */
	uint32_t flag, pc; /* EV_FLAG: which flag, and the set_flag's pc */
	struct sim_launch *l; /* EV_LAUNCH, EV_COPY_DONE */
};

#define EVQ_SLOT_BITS 24 /* 16 Mi pending events at most */
#define EVQ_SLOT_MASK ((UINT64_C(1) << EVQ_SLOT_BITS) - 1)
#define EVQ_SEQ_END (UINT64_C(1) << (64 - EVQ_SLOT_BITS))

struct evq_key {
	uint64_t t, k;
};

struct sim_evq {
	struct evq_key *key; /* key[0] the earliest; key[-3] is 64-byte aligned */
	void *keymem;
	size_t n, cap;
	struct sim_event *ev; /* the payloads, by slot */
	uint32_t *free;       /* free slots, a stack */
	size_t nfree, capev;
	uint64_t seq;
	int root_taken; /* key[0] is an event evq_take took (see there) */
};

/* Slow paths (evq.c): room for one more push (0, or -1 out of memory), the
 * renumbering, and release. */
int evq_grow(struct sim_evq *q);
void evq_renumber(struct sim_evq *q);
/* Drop every pending event. */
void evq_clear(struct sim_evq *q);
void evq_free(struct sim_evq *q);

/* Branch-free: which of two keys comes first is as likely either way. */
static inline int evq_less(const struct evq_key *a, const struct evq_key *b)
{
	return (a->t < b->t) | ((a->t == b->t) & (a->k < b->k));
}

/* The earlier of children c and c + 1 (both exist). */
static inline size_t evq_min2(const struct evq_key *h, size_t c)
{
	return c + (size_t)evq_less(&h[c + 1], &h[c]);
}

/* The keys below node c's siblings, c's generation's children: 16 keys, four lines (the
 * heap's walks are chains of dependent loads that the work between events pushed out of
 * the host's L1: fetching a level ahead overlaps them). */
static inline void evq_prefetch_below(const struct evq_key *h, size_t c, size_t n)
{
	size_t g = 4 * c + 1;
	if (g < n) {
		const char *p = (const char *)(h + g);
		__builtin_prefetch(p);
		__builtin_prefetch(p + 64);
		__builtin_prefetch(p + 128);
		__builtin_prefetch(p + 192);
	}
}

/* Put x in the root's place among keys h[0, n) (the root's own key gone):
 * the hole sinks to a leaf along the earliest child of each node, then x
 * rises from there.  x is usually a late key (the last leaf's, or a new
 * event's, which is later than the one just taken), so it rarely rises far. */

/* Key x into the hole at i, moved up past the keys it precedes. */
static inline void evq_sift_up(struct evq_key *h, size_t i, struct evq_key x)
{
	while (i > 0) {
		size_t p = (i - 1) / 4;
		if (!evq_less(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}
static inline void evq_sift_root(struct evq_key *h, size_t n, struct evq_key x)
{
	size_t i = 0;
	for (;;) {
		size_t c = 4 * i + 1;
		evq_prefetch_below(h, c, n);
		if (c + 3 < n) {
			size_t a = evq_min2(h, c), b = evq_min2(h, c + 2);
			c = evq_less(&h[b], &h[a]) ? b : a;
		} else if (c < n) {
			for (size_t j = c + 1; j < n; j++)
				if (evq_less(&h[j], &h[c]))
					c = j;
		} else {
			break;
		}
		h[i] = h[c];
		i = c;
	}
	evq_sift_up(h, i, x);
}

/* Take the earliest event (q->n > 0).  Its key stays at the root until the
 * next push replaces it (one sift where a pop and a push take two: most
 * events schedule the next one) or evq_settle removes it. */
static inline struct sim_event evq_take(struct sim_evq *q)
{
	uint32_t slot = (uint32_t)(q->key[0].k & EVQ_SLOT_MASK);
	q->free[q->nfree++] = slot;
	q->root_taken = 1;
	return q->ev[slot];
}

/* Remove the taken root if no push has replaced it. */
static inline void evq_settle(struct sim_evq *q)
{
	if (q->root_taken) {
		q->root_taken = 0;
		struct evq_key last = q->key[--q->n];
		if (q->n)
			evq_sift_root(q->key, q->n, last);
	}
}

static inline int evq_push(struct sim_evq *q, const struct sim_event *e)
{
	if ((q->n == q->cap || q->nfree == 0) && evq_grow(q))
		return -1;
	if (q->seq == EVQ_SEQ_END)
		evq_renumber(q);
	uint32_t slot = q->free[--q->nfree];
	q->ev[slot] = *e;
	struct evq_key x = { e->t, q->seq++ << EVQ_SLOT_BITS | slot };
	struct evq_key *h = q->key;
	if (q->root_taken) {
		q->root_taken = 0;
		evq_sift_root(h, q->n, x);
		return 0;
	}
	size_t i = q->n++;
	evq_sift_up(h, i, x);
	return 0;
}

#endif
