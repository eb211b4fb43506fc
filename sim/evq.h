/* evq.h: the engine's event queue: events popped in (time, push order).
 *
 * Almost every event is pushed for a time less than a thousand cycles ahead
 * of the event being handled (ResNet-50 on the 910: 341,187 events, 254 of
 * them 512 cycles or more ahead, 3 over 4096).  Those go to a window of
 * EVQ_WINDOW cycles from the time of the latest take, one FIFO a cycle
 * (push order is the order within a cycle), found through a bitmap of the
 * non-empty ones: a push and a take are a few loads and stores.  The
 * 4-ary heap this replaces took a quarter of a timing-mode run in its
 * sifts.  The rest (far ahead, or before the latest take) go to that heap,
 * kept for them, of 16-byte keys (t, seq).
 *
 * Why the two merge in (time, push order): the window holds times
 * [now, now + EVQ_WINDOW) (now: the latest take's time, which only grows;
 * everything earlier was taken), so one cycle's FIFO holds one time.  Of
 * two events of the same time t, one in the heap and one in the window, the
 * heap's was pushed first: it went to the heap because t was at least
 * EVQ_WINDOW past the time then, and the window's was pushed when t was
 * less than that past it, later.  So a take compares times only, the heap
 * first on a tie.
 *
 * A heap key is the event's time and k = seq << EVQ_SLOT_BITS | slot: seq,
 * the heap's push count, orders its events of the same time; slot is where
 * the payload lies.  When seq would pass 2^(64 - EVQ_SLOT_BITS), the heap's
 * events are renumbered 0, 1, ... in their order (evq.c), which keeps every
 * order. */
#ifndef DV_EVQ_H
#define DV_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct sim_launch;

struct sim_event {
	uint64_t t;
	uint32_t core;
	uint8_t kind;      /* EV_* in engine.c, or a pipe */
	uint8_t pipe;      /* EV_FLAG: the pipe the flag is for */
	uint32_t flag, pc; /* EV_FLAG: which flag, and the set_flag's pc */
	struct sim_launch *l; /* EV_LAUNCH, EV_COPY_DONE */
};

#define EVQ_SLOT_BITS 24 /* 16 Mi pending events at most */
#define EVQ_SLOT_MASK ((UINT64_C(1) << EVQ_SLOT_BITS) - 1)
#define EVQ_SEQ_END (UINT64_C(1) << (64 - EVQ_SLOT_BITS))

/* Cycles the window spans: a power of 2, a multiple of 64.  Its heads and
 * tails (8 KiB) stay in the host's L1 cache alongside the rest. */
#define EVQ_WINDOW 1024u
#define EVQ_WORDS (EVQ_WINDOW / 64)

struct evq_key {
	uint64_t t, k;
};

struct sim_evq {
	size_t n; /* pending events, window and heap */
	/* the window: cycle now + i's events are the FIFO of cycle (now + i) %
	 * EVQ_WINDOW, its slots linked through next[], when bit of it is set in
	 * used (head and tail mean nothing otherwise: a zeroed queue is empty) */
	uint64_t now;
	size_t nwin;
	uint64_t used[EVQ_WORDS];
	uint32_t head[EVQ_WINDOW], tail[EVQ_WINDOW];
	/* the heap */
	struct evq_key *key; /* key[0] the earliest; key[-3] is 64-byte aligned */
	void *keymem;
	size_t nheap, cap;
	uint64_t seq;
	/* the payloads, by slot */
	struct sim_event *ev;
	uint32_t *next;   /* a window event's successor in its cycle's FIFO */
	uint32_t *free;   /* free slots, a stack */
	size_t nfree, capev;
};

/* Slow paths (evq.c): room for one more push (0, or -1 out of memory), the
 * heap's push, pop and renumbering, and release. */
int evq_grow(struct sim_evq *q);
int evq_heap_push(struct sim_evq *q, uint64_t t, uint32_t slot);
uint32_t evq_heap_pop(struct sim_evq *q);
void evq_renumber(struct sim_evq *q);
/* Drop every pending event. */
void evq_clear(struct sim_evq *q);
void evq_free(struct sim_evq *q);

static inline int evq_push(struct sim_evq *q, const struct sim_event *e)
{
	if (q->nfree == 0 && evq_grow(q))
		return -1;
	uint32_t slot = q->free[--q->nfree];
	q->ev[slot] = *e;
	uint64_t ahead = e->t - q->now;
	if (e->t < q->now || ahead >= EVQ_WINDOW) {
		if (evq_heap_push(q, e->t, slot)) {
			q->free[q->nfree++] = slot;
			return -1;
		}
		q->n++;
		return 0;
	}
	unsigned b = (unsigned)(e->t % EVQ_WINDOW);
	uint64_t bit = UINT64_C(1) << (b % 64);
	q->next[slot] = UINT32_MAX;
	if (q->used[b / 64] & bit) {
		q->next[q->tail[b]] = slot;
	} else {
		q->used[b / 64] |= bit;
		q->head[b] = slot;
	}
	q->tail[b] = slot;
	q->nwin++;
	q->n++;
	return 0;
}

/* The window's earliest non-empty cycle (q->nwin > 0): the first set bit
 * from now's, around the ring. */
static inline unsigned evq_win_first(const struct sim_evq *q)
{
	unsigned b = (unsigned)(q->now % EVQ_WINDOW), w = b / 64;
	uint64_t m = q->used[w] & (~UINT64_C(0) << (b % 64));
	while (!m) {
		w = (w + 1) % EVQ_WORDS;
		m = q->used[w]; /* back at b's word, its bits below b: the ring's last cycles */
	}
	return w * 64 + (unsigned)__builtin_ctzll(m);
}

/* Take the earliest event (q->n > 0): its slot, whose payload q->ev[slot] stays as it is
 * until the next push (which may reuse the slot first).  The engine reads the fields it
 * needs from there instead of copying the whole event. */
static inline uint32_t evq_take_slot(struct sim_evq *q)
{
	uint32_t slot;
	uint64_t t = 0;
	unsigned b = 0;
	if (q->nwin) {
		b = evq_win_first(q);
		t = q->now + ((b - q->now) % EVQ_WINDOW);
	}
	if (q->nwin && (q->nheap == 0 || t < q->key[0].t)) {
		slot = q->head[b];
		if (slot == q->tail[b])
			q->used[b / 64] &= ~(UINT64_C(1) << (b % 64));
		else
			q->head[b] = q->next[slot];
		q->nwin--;
	} else {
		slot = evq_heap_pop(q);
		t = q->ev[slot].t;
	}
	q->n--;
	if (t > q->now)
		q->now = t;
	q->free[q->nfree++] = slot;
	return slot;
}

/* Take the earliest event (q->n > 0). */
static inline struct sim_event evq_take(struct sim_evq *q)
{
	return q->ev[evq_take_slot(q)];
}

#endif
