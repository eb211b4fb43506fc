/* serve_sim.c: the batcher and the streams (see serve.h).
 *
 * Event-driven over three kinds of instant: a request becomes ready (its
 * host pre-processing done), a stream finishes a batch, a batch's waiting
 * time runs out.  Requests queue FIFO; whenever a stream is free and the
 * queue is not empty the policy either closes a batch (a FIFO prefix of at
 * most max_batch items) or names the instant to look again.
 *
 *   FIFO       close when max_batch items are queued or when the oldest
 *              request has waited max_queue_delay since it and a free
 *              stream met (Triton's dynamic batcher);
 *   SLO-aware  with known service times: wait while one more item would
 *              still meet the SLO for the oldest request; once it cannot
 *              all make it, close the largest prefix that does (the whole
 *              prefix when none does: see decide).
 *
 * A batch of n items runs the smallest compiled variant >= n (padded).
 * The batches in flight share the chip: each works through its standalone
 * time (the table's entry at 1 in flight) at the rate its variant runs
 * with c in flight, T(v,1) / T(v,c), recomputed whenever c changes.  So c
 * identical batches overlapping from start to end take the table's T(v,c),
 * as measured, and a batch that overlaps another for part of its life is
 * slowed for that part only.  A mix of variants in flight is charged with
 * each batch's own variant's slowdown (the table has no mixed entries). */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static sv_ns ns_of_us(double us)
{
	return (sv_ns)llround(us * 1e3);
}

struct stream {
	sv_ns busy_until; /* when busy: its batch's end at the current rate */
	sv_ns idle_since; /* when free: since when */
	int busy;
	double left;      /* standalone nanoseconds of its batch still to run */
	double rate;      /* standalone nanoseconds per nanosecond now */
	sv_ns last;       /* when left and rate were last updated */
	unsigned variant;
	size_t batch;     /* its index in the run */
};

struct state {
	const struct sv_config *c;
	const struct sv_table *t;
	struct sv_record *rec;
	size_t n, head, ready; /* queue = rec[head, ready) */
	struct stream *st;
	unsigned nbusy, max_batch;
	sv_ns budget; /* SLO minus host time, or 0 */
	sv_ns host_post;
};

static sv_ns service_ns(const struct state *s, unsigned variant, unsigned conc)
{
	const struct sv_service *v = sv_table_get(s->t, variant, conc);
	return ns_of_us(v->h2d_us) + ns_of_us(v->device_us) + ns_of_us(v->d2h_us);
}

/* How many requests from the head fit one batch, and their items. */
static size_t prefix(const struct state *s, unsigned *items)
{
	size_t k = 0;
	unsigned sum = 0;
	for (size_t i = s->head; i < s->ready; i++) {
		if (sum + s->rec[i].size > s->max_batch)
			break;
		sum += s->rec[i].size;
		k++;
	}
	*items = sum;
	return k;
}

/* The policy: the number of requests to batch now (> 0), or 0 and *until. */
static size_t decide(const struct state *s, sv_ns now, sv_ns open, sv_ns *until)
{
	unsigned items;
	size_t k = prefix(s, &items);
	/* full: max_batch items, or the next request does not fit */
	int full = items == s->max_batch || s->head + k < s->ready;
	unsigned conc = s->nbusy + 1;
	if (s->c->policy == SV_POLICY_SLO) {
		sv_ns waited = now - s->rec[s->head].ready;
		int v = sv_table_variant(s->t, items);
		if (waited + service_ns(s, (unsigned)v, conc) > s->budget) {
			/* too late for all of them: the largest prefix that still makes
			 * it for the oldest; when none does, its SLO is lost anyway and
			 * the whole prefix goes (a smaller batch would only lower the
			 * throughput and make every later request late too) */
			size_t best = k;
			unsigned sum = 0;
			for (size_t j = 0; j < k; j++) {
				sum += s->rec[s->head + j].size;
				int vj = sv_table_variant(s->t, sum);
				if (waited + service_ns(s, (unsigned)vj, conc) <= s->budget)
					best = j + 1;
			}
			return best;
		}
		if (full)
			return k;
		/* wait while one more item would still make the SLO */
		int vn = sv_table_variant(s->t, items + 1);
		sv_ns t = s->rec[s->head].ready + s->budget - service_ns(s, (unsigned)vn, conc);
		if (s->c->max_queue_delay_us > 0 && open + ns_of_us(s->c->max_queue_delay_us) < t)
			t = open + ns_of_us(s->c->max_queue_delay_us);
		if (t <= now)
			return k;
		*until = t;
		return 0;
	}
	sv_ns delay = ns_of_us(s->c->max_queue_delay_us);
	if (full || delay <= 0 || now >= open + delay)
		return k;
	*until = open + delay;
	return 0;
}

/* Progress so far at the old rates, the ends at the rates of nbusy in
 * flight.  Called whenever nbusy changes.  Only + - * /: the same ends on
 * every host. */
static void reshare(struct state *s, unsigned S, sv_ns now)
{
	for (unsigned k = 0; k < S; k++) {
		struct stream *x = &s->st[k];
		if (!x->busy)
			continue;
		x->left -= (double)(now - x->last) * x->rate;
		if (x->left < 0)
			x->left = 0;
		x->last = now;
		x->rate = (double)service_ns(s, x->variant, 1) /
			  (double)service_ns(s, x->variant, s->nbusy);
		x->busy_until = now + (sv_ns)llround(x->left / x->rate);
	}
}

/* Stream k's batch is done (now = its busy_until): its requests' ends, and
 * their copy and device time in the proportions of the variant's entry at
 * the concurrency it started with. */
static void finish(struct state *s, struct sv_run *run, unsigned k)
{
	struct stream *x = &s->st[k];
	struct sv_batch *b = &run->batch[x->batch];
	b->end = x->busy_until;
	const struct sv_service *sv = sv_table_get(s->t, b->variant, b->conc);
	sv_ns took = b->end - b->start;
	sv_ns copy = (sv_ns)llround((double)took * (sv->h2d_us + sv->d2h_us) /
				    (sv->h2d_us + sv->device_us + sv->d2h_us));
	for (size_t j = b->first; j < b->first + b->nreq; j++) {
		struct sv_record *r = &s->rec[j];
		r->end = b->end + s->host_post;
		r->copy = copy;
		r->device = took - copy;
	}
	x->busy = 0;
	x->idle_since = b->end;
	s->nbusy--;
}

static int check(const struct sv_config *c, const struct sv_table *t,
		 const struct sv_arrivals *a, unsigned max_batch, char *err, size_t errlen)
{
	unsigned largest = t->batch[t->nvariants - 1];
	if (max_batch > largest) {
		snprintf(err, errlen, "--max-batch %u: larger than the largest compiled variant "
			 "(batch %u)", max_batch, largest);
		return -1;
	}
	if (c->streams > 1024) {
		snprintf(err, errlen, "--streams %u: at most 1024", c->streams);
		return -1;
	}
	if (!(c->max_queue_delay_us >= 0) || !(c->host_pre_us >= 0) || !(c->host_post_us >= 0) ||
	    !(c->slo_p99_ms >= 0) || !isfinite(c->max_queue_delay_us + c->host_pre_us +
					       c->host_post_us + c->slo_p99_ms)) {
		snprintf(err, errlen, "--max-queue-delay-us, --host-us and --slo-p99-ms must be "
			 "finite and >= 0");
		return -1;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct sv_request *r = &a->r[i];
		if (r->size > max_batch) {
			if (r->line)
				snprintf(err, errlen, "trace line %u: a request of %u items does not fit "
					 "a batch (--max-batch %u)", r->line, r->size, max_batch);
			else
				snprintf(err, errlen, "request %zu: %u items do not fit a batch "
					 "(--max-batch %u)", i, r->size, max_batch);
			return -1;
		}
		if (r->arrival < 0 || (i && r->arrival < a->r[i - 1].arrival)) {
			snprintf(err, errlen, "request %zu: arrivals must be >= 0 and sorted", i);
			return -1;
		}
	}
	return 0;
}

int sv_simulate(const struct sv_config *c, const struct sv_table *t, const struct sv_arrivals *a,
		struct sv_run *run, char *err, size_t errlen)
{
	memset(run, 0, sizeof *run);
	if (!t->nvariants) {
		snprintf(err, errlen, "no compiled variant to serve");
		return -1;
	}
	unsigned S = c->streams ? c->streams : 1;
	unsigned max_batch = c->max_batch ? c->max_batch : t->batch[t->nvariants - 1];
	if (check(c, t, a, max_batch, err, errlen))
		return -1;
	struct state s = { .c = c, .t = t, .n = a->n, .max_batch = max_batch,
			   .host_post = ns_of_us(c->host_post_us) };
	if (c->policy == SV_POLICY_SLO && !(c->slo_p99_ms > 0)) {
		snprintf(err, errlen, "the SLO-aware batcher needs --slo-p99-ms");
		return -1;
	}
	if (c->policy == SV_POLICY_SLO) {
		s.budget = ns_of_us(c->slo_p99_ms * 1e3 - c->host_pre_us - c->host_post_us);
		if (s.budget <= 0)
			s.budget = 1; /* host time alone breaks the SLO: batch 1, as soon as possible */
	}
	s.rec = calloc(a->n ? a->n : 1, sizeof *s.rec);
	s.st = calloc(S, sizeof *s.st);
	run->batch = calloc(a->n ? a->n : 1, sizeof *run->batch);
	if (!s.rec || !s.st || !run->batch) {
		free(s.rec);
		free(s.st);
		free(run->batch);
		run->batch = NULL;
		snprintf(err, errlen, "out of memory (%zu requests)", a->n);
		return -1;
	}
	sv_ns pre = ns_of_us(c->host_pre_us);
	for (size_t i = 0; i < a->n; i++) {
		s.rec[i].arrival = a->r[i].arrival;
		s.rec[i].ready = a->r[i].arrival + pre;
		s.rec[i].size = a->r[i].size;
	}
	sv_ns now = 0;
	for (;;) {
		while (s.ready < s.n && s.rec[s.ready].ready <= now)
			s.ready++;
		int changed = 0;
		for (unsigned k = 0; k < S; k++)
			if (s.st[k].busy && s.st[k].busy_until <= now) {
				finish(&s, run, k);
				changed = 1;
			}
		if (changed)
			reshare(&s, S, now);
		sv_ns timer = SV_NS_INF;
		while (s.head < s.ready && s.nbusy < S) {
			unsigned k = 0;
			while (s.st[k].busy)
				k++;
			sv_ns open = s.rec[s.head].ready > s.st[k].idle_since ? s.rec[s.head].ready
									      : s.st[k].idle_since;
			sv_ns until = SV_NS_INF;
			size_t take = decide(&s, now, open, &until);
			if (!take) {
				timer = until;
				break;
			}
			unsigned items = 0;
			for (size_t j = 0; j < take; j++)
				items += s.rec[s.head + j].size;
			unsigned v = (unsigned)sv_table_variant(t, items);
			struct sv_batch *b = &run->batch[run->nbatch];
			*b = (struct sv_batch){ .start = now, .items = items, .variant = v, .stream = k,
						.conc = s.nbusy + 1, .nreq = (unsigned)take,
						.first = s.head };
			for (size_t j = 0; j < take; j++) {
				struct sv_record *r = &s.rec[s.head + j];
				r->open = r->ready > open ? r->ready : open;
				r->start = now;
				r->batch = items;
				r->variant = t->batch[v];
				r->stream = k;
				r->batch_id = (unsigned)run->nbatch;
			}
			struct stream *x = &s.st[k];
			x->busy = 1;
			x->variant = v;
			x->batch = run->nbatch;
			x->left = (double)service_ns(&s, v, 1);
			x->last = now;
			x->rate = 1;
			run->nbatch++;
			s.head += take;
			s.nbusy++;
			reshare(&s, S, now);
		}
		sv_ns next = timer;
		if (s.ready < s.n && s.rec[s.ready].ready < next)
			next = s.rec[s.ready].ready;
		for (unsigned k = 0; k < S; k++)
			if (s.st[k].busy && s.st[k].busy_until < next)
				next = s.st[k].busy_until;
		if (next == SV_NS_INF)
			break;
		now = next;
	}
	free(s.st);
	run->rec = s.rec;
	run->n = s.n;
	return 0;
}

void sv_run_free(struct sv_run *run)
{
	free(run->rec);
	free(run->batch);
	memset(run, 0, sizeof *run);
}

int sv_slo_feasible(const struct sv_config *c, const struct sv_table *t, double items_per_s,
		    char *why, size_t len)
{
	double budget_us = c->slo_p99_ms * 1e3 - c->host_pre_us - c->host_post_us;
	unsigned S = c->streams ? c->streams : 1;
	unsigned max_batch = c->max_batch ? c->max_batch : t->batch[t->nvariants - 1];
	double best_cap = 0, fastest = -1;
	unsigned best_b = 0;
	for (unsigned v = 0; v < t->nvariants && t->batch[v] <= max_batch; v++)
		for (unsigned k = 1; k <= S; k++) {
			const struct sv_service *sv = sv_table_get(t, v, k);
			double T = sv->h2d_us + sv->device_us + sv->d2h_us;
			if (fastest < 0 || T < fastest)
				fastest = T;
			if (T > budget_us)
				continue;
			double cap = k * t->batch[v] / (T * 1e-6);
			if (cap > best_cap) {
				best_cap = cap;
				best_b = t->batch[v];
			}
		}
	if (best_cap == 0) {
		snprintf(why, len, "impossible: the fastest batch takes %.3f ms on the device and "
			 "its copies, over the SLO's %.3f ms left after host time", fastest / 1e3,
			 budget_us / 1e3);
		return 0;
	}
	if (items_per_s >= best_cap) {
		snprintf(why, len, "impossible at this load: %.1f items/s offered, but the batches "
			 "that fit the SLO serve at most %.1f/s (batch %u)", items_per_s, best_cap,
			 best_b);
		return 0;
	}
	snprintf(why, len, "feasible: up to %.1f items/s at batch %u within the SLO's service "
		 "time", best_cap, best_b);
	return 1;
}
