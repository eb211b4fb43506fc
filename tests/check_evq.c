/* check_evq.c: the engine's event queue (sim/evq.h) against a plain list scanned for the
 * earliest (time, push order): random pushes, near (the window) and far (the heap) and of
 * one time in both, takes between them, many events at one time, growth past the first
 * allocation, clearing, and the heap's renumbering when its push count reaches its limit. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "evq.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                          \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* The reference: pending (t, order) pairs; an event's pc field carries its order. */
struct ref {
	uint64_t t[4096];
	uint32_t id[4096];
	size_t n;
};

static size_t ref_min(const struct ref *r)
{
	size_t b = 0;
	for (size_t i = 1; i < r->n; i++)
		if (r->t[i] < r->t[b] || (r->t[i] == r->t[b] && r->id[i] < r->id[b]))
			b = i;
	return b;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A push's time from now: often now itself; one in `far` (0: none) past the window, up to
 * three windows ahead, where it may meet the window's later pushes of its time. */
static uint64_t ahead(uint64_t *s, uint64_t spread, unsigned far)
{
	if (far && rnd(s) % far == 0)
		return EVQ_WINDOW - 8 + rnd(s) % (2 * EVQ_WINDOW);
	return rnd(s) % 3 == 0 ? 0 : rnd(s) % spread;
}

/* steps of: push (a time at or after now), or take the earliest and then push 0-2 events,
 * as the engine's handlers do.  seq0: the heap's first push count (near EVQ_SEQ_END tests
 * the renumbering). */
static void run(uint64_t seed, int steps, size_t maxn, uint64_t spread, unsigned far,
		uint64_t seq0)
{
	struct sim_evq q;
	static struct ref r;
	memset(&q, 0, sizeof q);
	memset(&r, 0, sizeof r);
	q.seq = seq0;
	uint64_t s = seed, now = 0;
	uint32_t next_id = 0;
	for (int i = 0; i < steps; i++) {
		int pushes;
		if (r.n && (rnd(&s) % 2 || r.n >= maxn)) {
			CHECK(q.n == r.n, "step %d: %zu events, expected %zu", i, q.n, r.n);
			size_t m = ref_min(&r);
			struct sim_event e = evq_take(&q);
			CHECK(e.t == r.t[m] && e.pc == r.id[m],
			      "step %d: took (%llu, #%u), expected (%llu, #%u)", i,
			      (unsigned long long)e.t, e.pc, (unsigned long long)r.t[m], r.id[m]);
			CHECK(e.core == e.pc * 7u && e.l == NULL, "step %d: payload of #%u lost", i,
			      e.pc);
			now = e.t;
			r.t[m] = r.t[r.n - 1];
			r.id[m] = r.id[r.n - 1];
			r.n--;
			pushes = (int)(rnd(&s) % 3);
		} else {
			pushes = 1;
		}
		for (int p = 0; p < pushes && r.n < maxn; p++) {
			uint64_t t = now + ahead(&s, spread, far);
			struct sim_event e = { t, next_id * 7u, (uint8_t)(next_id & 0xff), 0, 0,
					       next_id, NULL };
			CHECK(evq_push(&q, &e) == 0, "step %d: push failed", i);
			r.t[r.n] = t;
			r.id[r.n++] = next_id++;
		}
		CHECK(q.n == r.n, "step %d: %zu events after pushing, expected %zu", i, q.n, r.n);
		CHECK(q.seq < EVQ_SEQ_END || q.seq == EVQ_SEQ_END, "step %d: seq past its end", i);
	}
	evq_clear(&q);
	CHECK(q.n == 0 && q.nfree == q.capev, "clear left %zu events, %zu of %zu slots free", q.n,
	      q.nfree, q.capev);
	struct sim_event e = { 5, 0, 0, 0, 0, 0, NULL };
	CHECK(evq_push(&q, &e) == 0 && q.n == 1, "push after clear");
	evq_free(&q);
}

START_TEST(random_small)
{
	run(1, 20000, 40, 50, 0, 0);
	run(2, 20000, 300, 4, 0, 0); /* many ties */
	run(6, 20000, 40, 50, 4, 0); /* the heap too */
	run(7, 20000, 300, 4, 2, 0); /* ties between window and heap */
	run(8, 20000, 40, 3 * EVQ_WINDOW, 0, 0); /* the window's ring wraps */
}
END_TEST

START_TEST(growth)
{
	run(3, 40000, 4000, 1000, 3, 0); /* past 256 keys and slots, more than once */
}
END_TEST

START_TEST(renumber)
{
	/* a few hundred pushes before the limit: renumbered once or more mid-run */
	run(4, 20000, 200, 30, 2, EVQ_SEQ_END - 300);
	run(5, 20000, 3000, 30, 2, EVQ_SEQ_END - 5);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("evq");
	TCase *tc = tcase_create("evq");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, random_small);
	tcase_add_test(tc, growth);
	tcase_add_test(tc, renumber);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
