/* serve_sim.c: the batcher and the streams (see serve.h).
 *
 * Event-driven over three kinds of instant: a request becomes ready (its
 * host pre-processing done), a stream's batch ends a phase (the last ends
 * the batch), a batch's waiting time runs out.  Requests queue FIFO; whenever a stream is free and the
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
 * The batches in flight share the chip phase by phase (reshare): a batch
 * copies its input over PCIe, pays the execution's fixed cost, runs its
 * kernels on the AI cores and copies its output back.  In each phase it
 * works through its standalone time (the table's entry at 1 in flight) at
 * the rate its variant's entry gives that phase with c batches in the same
 * phase, recomputed whenever a batch starts, ends or changes phase.  So c
 * identical batches side by side take the table's T(v,c), as measured,
 * while one batch's copy or fixed cost does not slow another's kernels (a
 * rate over the whole batch made two staggered ResNet-50 batches slow each
 * other for their whole lives, 28% per batch off the chip; docs/serving.md).
 * A mix of variants in a phase is charged each batch's own variant's
 * slowdown (the table has no mixed entries).
 *
 * Several models: each has its own queue (its requests in arrival order)
 * and is batched against its own table; the streams are the chip's and
 * shared.  A free stream is offered to the models in the order of their
 * oldest ready request; the first whose policy closes a batch takes it. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static sv_ns ns_of_us(double us)
{
	return (sv_ns)llround(us * 1e3);
}

/* A batch's life, in the order it lives it, and what each phase shares:
 * the input copy (PCIe to the device), the execution's fixed cost (no
 * shared unit), the kernels (the AI cores), the output copy (PCIe back). */
enum phase { PH_IN, PH_FIXED, PH_CORES, PH_OUT, PH_N };

struct stream {
	sv_ns busy_until; /* when busy: the end of its current phase at the current rate */
	sv_ns idle_since; /* when free: since when */
	int busy;
	double done;      /* standalone nanoseconds of its batch run so far */
	double rate;      /* standalone nanoseconds per nanosecond now */
	sv_ns last;       /* when done and rate were last updated */
	double bound[PH_N]; /* standalone nanoseconds at each phase's end */
	double target;    /* where done is at busy_until */
	enum phase ph;    /* the phase it is in */
	unsigned variant, model;
	size_t batch;     /* its index in the run */
};

/* One model's requests: idx[0..n) are its records in arrival order (NULL:
 * every record, the one-model case), the queue is [head, ready). */
struct queue {
	const struct sv_table *t;
	size_t *idx;
	size_t n, head, ready;
	unsigned max_batch;
};

struct state {
	const struct sv_config *c;
	struct sv_record *rec;
	size_t n, ready; /* records ready so far, all models */
	struct queue *q;
	unsigned nq;
	struct stream *st;
	unsigned nbusy;
	sv_ns budget; /* SLO minus host time, or 0 */
	sv_ns host_post;
};

/* The record at place i of queue q. */
static struct sv_record *at(const struct state *s, const struct queue *q, size_t i)
{
	return &s->rec[q->idx ? q->idx[i] : i];
}

static sv_ns service_ns(const struct sv_table *t, unsigned variant, unsigned conc)
{
	const struct sv_service *v = sv_table_get(t, variant, conc);
	return ns_of_us(v->h2d_us) + ns_of_us(v->device_us) + ns_of_us(v->d2h_us);
}

/* How many requests from the head fit one batch, and their items. */
static size_t prefix(const struct state *s, const struct queue *q, unsigned *items)
{
	size_t k = 0;
	unsigned sum = 0;
	for (size_t i = q->head; i < q->ready; i++) {
		unsigned z = at(s, q, i)->size;
		if (sum + z > q->max_batch)
			break;
		sum += z;
		k++;
	}
	*items = sum;
	return k;
}

/* The policy for queue q: the number of requests to batch now (> 0), or 0
 * and *until. */
static size_t decide(const struct state *s, const struct queue *q, sv_ns now, sv_ns open,
		     sv_ns *until)
{
	unsigned items;
	size_t k = prefix(s, q, &items);
	/* full: max_batch items, or the next request does not fit */
	int full = items == q->max_batch || q->head + k < q->ready;
	unsigned conc = s->nbusy + 1;
	const struct sv_table *t = q->t;
	if (s->c->policy == SV_POLICY_SLO) {
		sv_ns waited = now - at(s, q, q->head)->ready;
		int v = sv_table_variant(t, items);
		if (waited + service_ns(t, (unsigned)v, conc) > s->budget) {
			/* too late for all of them: the largest prefix that still makes
			 * it for the oldest; when none does, its SLO is lost anyway and
			 * the whole prefix goes (a smaller batch would only lower the
			 * throughput and make every later request late too) */
			size_t best = k;
			unsigned sum = 0;
			for (size_t j = 0; j < k; j++) {
				sum += at(s, q, q->head + j)->size;
				int vj = sv_table_variant(t, sum);
				if (waited + service_ns(t, (unsigned)vj, conc) <= s->budget)
					best = j + 1;
			}
			return best;
		}
		if (full)
			return k;
		/* wait while one more item would still make the SLO */
		int vn = sv_table_variant(t, items + 1);
		sv_ns w = at(s, q, q->head)->ready + s->budget - service_ns(t, (unsigned)vn, conc);
		if (s->c->max_queue_delay_us > 0 && open + ns_of_us(s->c->max_queue_delay_us) < w)
			w = open + ns_of_us(s->c->max_queue_delay_us);
		if (w <= now)
			return k;
		*until = w;
		return 0;
	}
	sv_ns delay = ns_of_us(s->c->max_queue_delay_us);
	if (full || delay <= 0 || now >= open + delay)
		return k;
	*until = open + delay;
	return 0;
}

/* A phase's standalone length at c in flight, nanoseconds.  The kernels'
 * share is the device time less the fixed cost, which does not grow with
 * c (those in flight pay it side by side). */
static sv_ns phase_ns(const struct sv_table *t, unsigned variant, enum phase p, unsigned c)
{
	const struct sv_service *v = sv_table_get(t, variant, c);
	sv_ns fixed = ns_of_us(sv_table_get(t, variant, 1)->fixed_us);
	switch (p) {
	case PH_IN:
		return ns_of_us(v->h2d_us);
	case PH_FIXED:
		return fixed;
	case PH_CORES:
		return ns_of_us(v->device_us) - fixed;
	default:
		return ns_of_us(v->d2h_us);
	}
}

/* Stream x's batch laid out in standalone time from 0. */
static void lay_out(const struct state *s, struct stream *x)
{
	const struct sv_table *t = s->q[x->model].t;
	double at = 0;
	for (int p = 0; p < PH_N; p++) {
		at += (double)phase_ns(t, x->variant, (enum phase)p, 1);
		x->bound[p] = at;
	}
	x->done = 0;
	x->ph = PH_IN;
}

/* Progress so far at the old rates (a stream at its phase's end lands on
 * it exactly), then each batch's phase, the number of batches in each, and
 * the rates and next phase ends at those numbers.  Called at every phase
 * change and batch start or end.  A phase shared by c batches runs at the
 * rate its variant's table entry at c in flight gives it, so c identical
 * batches side by side take the table's time at c, phase by phase, while a
 * batch copying its input or paying the execution's fixed cost does not
 * slow another's kernels.  Only + - * /: the same ends on every host. */
static void reshare(struct state *s, unsigned S, sv_ns now)
{
	unsigned in[PH_N] = { 0 };
	for (unsigned k = 0; k < S; k++) {
		struct stream *x = &s->st[k];
		if (!x->busy)
			continue;
		if (now >= x->busy_until)
			x->done = x->target;
		else
			x->done += (double)(now - x->last) * x->rate;
		x->last = now;
		while (x->ph < PH_OUT && x->done >= x->bound[x->ph])
			x->ph++;
		in[x->ph]++;
	}
	for (unsigned k = 0; k < S; k++) {
		struct stream *x = &s->st[k];
		if (!x->busy)
			continue;
		const struct sv_table *t = s->q[x->model].t;
		sv_ns alone = phase_ns(t, x->variant, x->ph, 1),
		      shared = phase_ns(t, x->variant, x->ph, in[x->ph]);
		x->rate = x->ph == PH_FIXED || alone <= 0 || shared <= 0 ? 1
			  : (double)alone / (double)shared;
		/* alone on the chip every phase runs at full speed: straight to
		 * the batch's end (one event per batch on one stream) */
		x->target = s->nbusy == 1 ? x->bound[PH_OUT] : x->bound[x->ph];
		double left = x->target - x->done;
		x->busy_until = now + (sv_ns)llround((left > 0 ? left : 0) / x->rate);
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
	const struct queue *q = &s->q[b->model];
	const struct sv_service *sv = sv_table_get(q->t, b->variant, b->conc);
	sv_ns took = b->end - b->start;
	sv_ns copy = (sv_ns)llround((double)took * (sv->h2d_us + sv->d2h_us) /
				    (sv->h2d_us + sv->device_us + sv->d2h_us));
	for (size_t j = b->first; j < b->first + b->nreq; j++) {
		struct sv_record *r = at(s, q, j);
		r->end = b->end + s->host_post;
		r->copy = copy;
		r->device = took - copy;
	}
	x->busy = 0;
	x->idle_since = b->end;
	s->nbusy--;
}

/* The run's inputs: -1 with the culprit named. */
static int check(const struct sv_config *c, const struct sv_table *t, unsigned nt,
		 const struct sv_arrivals *a, const struct queue *q, char *err, size_t errlen)
{
	for (unsigned m = 0; m < nt; m++) {
		unsigned largest = t[m].batch[t[m].nvariants - 1];
		if (q[m].max_batch > largest) {
			if (nt == 1)
				snprintf(err, errlen, "--max-batch %u: larger than the largest compiled "
					 "variant (batch %u)", q[m].max_batch, largest);
			else
				snprintf(err, errlen, "--max-batch %u: larger than model %s's largest "
					 "compiled variant (batch %u)", q[m].max_batch, t[m].name,
					 largest);
			return -1;
		}
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
		if (r->model >= nt) {
			snprintf(err, errlen, "request %zu: model %u, but %u served", i, r->model, nt);
			return -1;
		}
		unsigned max_batch = q[r->model].max_batch;
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

/* Queue q (model m) closes a batch of take requests now on stream k. */
static void start_batch(struct state *s, struct sv_run *run, unsigned m, size_t take,
			unsigned k, sv_ns now, sv_ns open)
{
	struct queue *q = &s->q[m];
	unsigned items = 0;
	for (size_t j = 0; j < take; j++)
		items += at(s, q, q->head + j)->size;
	unsigned v = (unsigned)sv_table_variant(q->t, items);
	struct sv_batch *b = &run->batch[run->nbatch];
	*b = (struct sv_batch){ .start = now, .items = items, .variant = v, .stream = k,
				.conc = s->nbusy + 1, .nreq = (unsigned)take, .model = m,
				.first = q->head };
	for (size_t j = 0; j < take; j++) {
		struct sv_record *r = at(s, q, q->head + j);
		r->open = r->ready > open ? r->ready : open;
		r->start = now;
		r->batch = items;
		r->variant = q->t->batch[v];
		r->stream = k;
		r->batch_id = (unsigned)run->nbatch;
	}
	struct stream *x = &s->st[k];
	x->busy = 1;
	x->variant = v;
	x->model = m;
	x->batch = run->nbatch;
	lay_out(s, x);
	x->last = now;
	x->rate = 1;
	x->busy_until = SV_NS_INF; /* not at a phase's end: reshare sets it */
	run->nbatch++;
	q->head += take;
	s->nbusy++;
}

/* Fill free streams from the queues; the earliest instant a waiting
 * batcher wants to look again, or SV_NS_INF. */
static sv_ns dispatch(struct state *s, struct sv_run *run, unsigned S, sv_ns now)
{
	sv_ns timer = SV_NS_INF;
	unsigned long long waiting = 0; /* models whose batcher waits (bit m) */
	while (s->nbusy < S) {
		/* the model with the oldest ready request that does not wait */
		int m = -1;
		for (unsigned j = 0; j < s->nq; j++) {
			const struct queue *q = &s->q[j];
			if (q->head < q->ready && !(waiting >> j & 1) &&
			    (m < 0 || at(s, q, q->head)->ready <
					      at(s, &s->q[m], s->q[m].head)->ready))
				m = (int)j;
		}
		if (m < 0)
			break;
		struct queue *q = &s->q[m];
		/* one model: the first free stream.  Several: the one free the
		 * longest, so that a model's batch, formed while another model
		 * takes the stream it waited on, still forms from the earliest
		 * instant a stream was free for it and its wait stays within
		 * the delay */
		unsigned k = 0;
		while (s->st[k].busy)
			k++;
		for (unsigned j = k + 1; s->nq > 1 && j < S; j++)
			if (!s->st[j].busy && s->st[j].idle_since < s->st[k].idle_since)
				k = j;
		sv_ns ready = at(s, q, q->head)->ready;
		sv_ns open = ready > s->st[k].idle_since ? ready : s->st[k].idle_since;
		sv_ns until = SV_NS_INF;
		size_t take = decide(s, q, now, open, &until);
		if (!take) {
			if (until < timer)
				timer = until;
			waiting |= 1ull << m;
			continue;
		}
		start_batch(s, run, (unsigned)m, take, k, now, open);
		reshare(s, S, now);
	}
	return timer;
}

int sv_simulate(const struct sv_config *c, const struct sv_table *t, const struct sv_arrivals *a,
		struct sv_run *run, char *err, size_t errlen)
{
	return sv_simulate_models(c, t, 1, a, run, err, errlen);
}

int sv_simulate_models(const struct sv_config *c, const struct sv_table *t, unsigned nt,
		       const struct sv_arrivals *a, struct sv_run *run, char *err,
		       size_t errlen)
{
	memset(run, 0, sizeof *run);
	if (!nt || nt > SV_MAX_MODELS) {
		snprintf(err, errlen, "1..%d models, not %u", SV_MAX_MODELS, nt);
		return -1;
	}
	for (unsigned m = 0; m < nt; m++)
		if (!t[m].nvariants) {
			snprintf(err, errlen, "no compiled variant to serve");
			return -1;
		}
	unsigned S = c->streams ? c->streams : 1;
	struct queue q[SV_MAX_MODELS];
	memset(q, 0, sizeof q);
	for (unsigned m = 0; m < nt; m++) {
		q[m].t = &t[m];
		q[m].max_batch = c->max_batch ? c->max_batch : t[m].batch[t[m].nvariants - 1];
	}
	if (check(c, t, nt, a, q, err, errlen))
		return -1;
	struct state s = { .c = c, .n = a->n, .q = q, .nq = nt,
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
	int oom = !s.rec || !s.st || !run->batch;
	for (size_t i = 0; i < a->n; i++)
		q[a->r[i].model].n++;
	for (unsigned m = 0; m < nt && nt > 1 && !oom; m++) {
		q[m].idx = malloc((q[m].n ? q[m].n : 1) * sizeof *q[m].idx);
		oom = !q[m].idx;
		q[m].n = 0;
	}
	if (nt == 1)
		q[0].n = a->n;
	if (oom) {
		for (unsigned m = 0; m < nt; m++)
			free(q[m].idx);
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
		s.rec[i].model = a->r[i].model;
		struct queue *qm = &q[a->r[i].model];
		if (qm->idx)
			qm->idx[qm->n++] = i;
	}
	sv_ns now = 0;
	for (;;) {
		/* ready in arrival order overall, so in each model's order too */
		while (s.ready < s.n && s.rec[s.ready].ready <= now)
			q[s.rec[s.ready++].model].ready++;
		/* phase ends: the streams whose batch is over free up */
		int changed = 0;
		for (unsigned k = 0; k < S && !changed; k++)
			changed = s.st[k].busy && s.st[k].busy_until <= now;
		if (changed) {
			reshare(&s, S, now);
			changed = 0;
			for (unsigned k = 0; k < S; k++)
				if (s.st[k].busy && s.st[k].ph == PH_OUT &&
				    s.st[k].done >= s.st[k].bound[PH_OUT] && s.st[k].busy_until <= now) {
					finish(&s, run, k);
					changed = 1;
				}
			if (changed)
				reshare(&s, S, now);
		}
		sv_ns next = dispatch(&s, run, S, now);
		if (s.ready < s.n && s.rec[s.ready].ready < next)
			next = s.rec[s.ready].ready;
		for (unsigned k = 0; k < S; k++)
			if (s.st[k].busy && s.st[k].busy_until < next)
				next = s.st[k].busy_until;
		if (next == SV_NS_INF)
			break;
		now = next;
	}
	for (unsigned m = 0; m < nt; m++)
		free(q[m].idx);
	free(s.st);
	run->rec = s.rec;
	run->n = s.n;
	run->nmodels = nt;
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
