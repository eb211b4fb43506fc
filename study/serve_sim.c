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
 * When the table lists each variant's kernels (a characterised one does),
 * the kernels do not share by rates: the AI cores go to the kernels in
 * launch order, as the chip hands out blocks, so two streams' kernels take
 * turns one for one (a rate over time gave a batch that started ahead
 * that lead in time, where on the chip it keeps one kernel of lead).  What
 * the cores' order cannot give, the memory's slowdown of kernels taking
 * turns, is one factor per variant and number of batches amid their
 * kernels, calibrated so that the characterisation's case (c streams
 * running its loops of batches back to back) takes the table's time at c
 * (calibrate).
 *
 * The L2: each stream has an instance of each variant, and a batch whose
 * instance had k other instances start since its own last batch runs for
 * the table's time after k (when it has it) instead of the warm time
 * (lay_out).
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

/* A batch's life as segments of standalone time.  Without the kernels'
 * list (a table that does not give it) the kernels are one SG_CORES
 * segment, shared by rates from the table; with it, each kernel is a wait
 * (SG_GAP: its stream's task gap, using nothing shared) and a run (SG_RUN)
 * on the AI cores, and the cores go to the kernels in launch order.  With
 * it too, each copy is its transfer (SG_IN, SG_OUT), which holds the PCIe
 * link of its direction, then the link's latency (SG_LAT, nothing shared):
 * the chip queues the transfers of one direction (sim/engine.c), so a
 * copy waits for the one before it rather than sharing the link. */
enum seg_kind { SG_IN, SG_FIXED, SG_CORES, SG_GAP, SG_RUN, SG_OUT, SG_LAT };

struct seg {
	double end;   /* standalone nanoseconds at its end, from the batch's start */
	double cores; /* SG_RUN: the AI cores its kernel keeps busy alone */
	enum seg_kind kind;
};

struct plan { /* one variant's segments */
	struct seg *seg;
	unsigned n;
};

struct stream {
	sv_ns busy_until; /* when busy: the end of its current segment at the current rate */
	sv_ns idle_since; /* when free: since when */
	int busy;
	double done;      /* standalone nanoseconds of its batch run so far */
	double rate;      /* standalone nanoseconds per nanosecond now */
	sv_ns last;       /* when done and rate were last updated */
	const struct plan *plan;
	unsigned seg;     /* the segment it is in */
	sv_ns launched;   /* SG_RUN: when its kernel was launched (the cores' queue order) */
	sv_ns begun;      /* when its batch started (which of two leads) */
	double target;    /* where done is at busy_until */
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
	struct plan *plan[SV_MAX_MODELS]; /* [model][variant] */
	/* [model][variant * SV_MAX_AFTER + k - 1]: after k other instances (no
	 * segments: not known) */
	struct plan *after[SV_MAX_MODELS];
	/* [model][variant * streams + stream]: when the instance last started a
	 * batch (a count of batch starts, the warm-up's first) */
	unsigned long long *stamp[SV_MAX_MODELS];
	unsigned long long stamps;
	double cores;     /* the chip's AI cores when the kernels are known, else 0 */
	const struct factors *f;
	/* with pairs: lead[k * S + j], how far (standalone nanoseconds) stream
	 * j's batch had come when stream k's started; NULL without pairs */
	double *lead;
	unsigned *order;  /* scratch: the streams running a kernel, in launch order */
};

/* The memory's part of kernels taking turns, with the kernels' list:
 * slow[m][v * max_conc + n - 1], how much slower model m's variant v's
 * kernels run with n batches amid their kernels than alone (calibrate);
 * and when two batches of that variant are amid their kernels,
 * pair[m][v * SV_MAX_PAIRS + i] at the table's i-th pair offset between
 * their starts (calibrate_pairs; NULL or no pairs: slow).  So two batches
 * started together slow each other as the chip's pair side by side does,
 * for their whole lives, and staggered ones as its pair at their offset,
 * while they overlap. */
struct factors {
	double *slow[SV_MAX_MODELS];
	double *pair[SV_MAX_MODELS];
	/* with the pairs: launch[m][v], variant v's kernel launches
	 * (sv_kernel_launches), and meet[m][v * SV_MAX_PAIRS + i], where pair
	 * i's batches meet (sv_pair_meeting) */
	double *launch[SV_MAX_MODELS][SV_MAX_VARIANTS];
	unsigned *meet[SV_MAX_MODELS];
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

/* Variant v of table t as segments (kernels: with its kernel list), with
 * its kernels' part stretched to a device time of device_us at 1 in flight
 * (0: the table's warm entry). */
static int make_plan(const struct sv_table *t, unsigned v, int kernels, double device_us,
		     struct plan *p)
{
	const struct sv_service *e = sv_table_get(t, v, 1);
	double scale = device_us > 0 ? (device_us - e->fixed_us) / (e->device_us - e->fixed_us) : 1;
	unsigned nk = kernels ? t->nkern[v] : 0;
	p->seg = malloc((6 + 2 * (size_t)nk) * sizeof *p->seg);
	if (!p->seg)
		return -1;
	p->n = 0;
	double at = 0;
	const struct sv_kernel *k = t->kern[v];
	for (int ph = 0; ph < PH_N; ph++) {
		if (ph == PH_CORES && nk) {
			double kernels_ns = 0;
			for (unsigned i = 0; i < nk; i++) {
				p->seg[p->n++] = (struct seg){ at += k[i].gap_us * 1e3 * scale, 0,
							       SG_GAP };
				p->seg[p->n++] = (struct seg){ at += k[i].run_us * 1e3 * scale,
							       k[i].cores, SG_RUN };
				kernels_ns += (k[i].gap_us + k[i].run_us) * 1e3;
			}
			/* after the last kernel, to the execution's end: no shared unit */
			double tail = (double)phase_ns(t, v, PH_CORES, 1) - kernels_ns;
			p->seg[p->n++] = (struct seg){ at += (tail > 0 ? tail : 0) * scale, 0, SG_GAP };
			continue;
		}
		static const enum seg_kind kind[PH_N] = { SG_IN, SG_FIXED, SG_CORES, SG_OUT };
		double len = (double)phase_ns(t, v, (enum phase)ph, 1) * (ph == PH_CORES ? scale : 1);
		double lat = nk && (ph == PH_IN || ph == PH_OUT) ? t->pcie_latency_us * 1e3 : 0;
		lat = lat < len ? lat : len;
		p->seg[p->n++] = (struct seg){ at += len - lat, 0, kind[ph] };
		if (lat > 0)
			p->seg[p->n++] = (struct seg){ at += lat, 0, SG_LAT };
	}
	return 0;
}

/* Stream x's batch (on stream k) from standalone time 0.  Each stream has
 * an instance of each variant; the more other instances started since
 * this one's last batch, the less of its data the L2 holds, and the
 * table's time after that many (when it has it) replaces the warm one. */
static void lay_out(struct state *s, struct stream *x, unsigned k)
{
	unsigned S = s->c->streams ? s->c->streams : 1;
	unsigned long long *mine = &s->stamp[x->model][x->variant * S + k];
	unsigned others = 0;
	for (unsigned m = 0; m < s->nq; m++)
		for (size_t i = 0; i < (size_t)s->q[m].t->nvariants * S; i++)
			others += s->stamp[m][i] > *mine;
	*mine = ++s->stamps;
	x->plan = &s->plan[x->model][x->variant];
	if (others) {
		unsigned a = others < SV_MAX_AFTER ? others : SV_MAX_AFTER;
		const struct plan *p = &s->after[x->model][x->variant * SV_MAX_AFTER + a - 1];
		if (p->seg)
			x->plan = p;
	}
	x->done = 0;
	x->seg = 0;
}

/* The phase whose table entries rate a segment (SG_IN, SG_CORES, SG_OUT). */
static enum phase phase_of(enum seg_kind k)
{
	return k == SG_IN ? PH_IN : k == SG_OUT ? PH_OUT : PH_CORES;
}

/* Linear in d (microseconds) between the offsets of pairs pr[0..n)
 * around it, factors pf, the first before them and the last beyond
 * (exactly pf[i] at offset i, as calibrated). */
static double between(const struct sv_pair *pr, unsigned n, const double *pf, double at)
{
	unsigned i = 0;
	while (i + 1 < n && pr[i + 1].offset_us <= at)
		i++;
	if (i + 1 == n || at <= pr[i].offset_us)
		return pf[i];
	double w = (at - pr[i].offset_us) / (pr[i + 1].offset_us - pr[i].offset_us);
	return pf[i] + w * (pf[i + 1] - pf[i]);
}

/* The pair factor of model m's variant v for two batches of which the
 * leader had come d standalone nanoseconds when the follower started (a
 * pair alone: its offset).  The chip runs every pair that meets at the
 * same kernel of the leader the same way (sv_pair_meeting), so the pairs
 * that meet where these two do give it, linear between their offsets when
 * there are several; with none there (a table whose offsets were spaced
 * evenly), linear between all the pairs' offsets around d. */
static double pair_factor(const struct sv_table *t, const struct factors *f, unsigned m,
			  unsigned v, double d)
{
	const struct sv_pair *pr = t->pair[v];
	const double *pf = &f->pair[m][v * SV_MAX_PAIRS];
	unsigned n = t->npair[v];
	double at = d / 1e3;
	if (f->launch[m][v]) {
		const unsigned *meet = &f->meet[m][v * SV_MAX_PAIRS];
		unsigned where = sv_pair_meeting(t, v, f->launch[m][v], at), lo = 0, hi = n;
		/* the first pair meeting at or past where: meet ascends with the offset */
		while (lo < hi) {
			unsigned mid = lo + (hi - lo) / 2;
			if (meet[mid] < where)
				lo = mid + 1;
			else
				hi = mid;
		}
		unsigned end = lo;
		while (end < n && meet[end] == where)
			end++;
		if (end > lo)
			return between(pr + lo, end - lo, pf + lo, at);
	}
	return between(pr, n, pf, at);
}

/* How much slower than alone stream x's kernel runs for the memory, with
 * nker batches amid their kernels (amid: the first two). */
static double memory_factor(const struct state *s, const struct stream *x, unsigned nker,
			    const unsigned *amid)
{
	const struct sv_table *t = s->q[x->model].t;
	if (nker == 2 && s->f->pair[x->model] && t->npair[x->variant]) {
		unsigned k = (unsigned)(x - s->st), j = amid[0] == k ? amid[1] : amid[0];
		const struct stream *o = &s->st[j];
		if (o->model == x->model && o->variant == x->variant) {
			/* where the leader was when the follower started: a pair's
			 * offset alone, less when the leader was slowed before (two
			 * busy streams half a period apart) */
			unsigned S = s->c->streams ? s->c->streams : 1;
			double d = o->begun <= x->begun ? s->lead[k * S + j] : s->lead[j * S + k];
			return pair_factor(t, s->f, x->model, x->variant, d);
		}
	}
	unsigned n = nker < t->max_conc ? nker : t->max_conc;
	return s->f->slow[x->model][x->variant * t->max_conc + n - 1];
}

/* Progress so far at the old rates (a stream at its segment's end lands on
 * it exactly), then each batch's segment, and the rates and next segment
 * ends from there.  Called at every segment change and batch start or end.
 *
 * A copy shared by c batches runs at the rate its variant's table entry at
 * c in flight gives it, and so do the kernels when their list is not
 * known: c identical batches side by side take the table's time at c,
 * phase by phase.  With the kernels' list, the AI cores are shared as the
 * chip shares them: a kernel launched earlier keeps the cores its blocks
 * use (on average, alone), and the next in launch order gets what is left
 * (engine.c hands a freed core to the same launch's next block, else to
 * the oldest launch's).  So two streams' kernels alternate, one each, and
 * a batch that started ahead keeps only a kernel of lead, where a rate
 * over time would have kept its lead in time.  The fixed cost and the
 * kernels' gaps use nothing shared.  Only + - * /: the same ends on every
 * host. */
static void reshare(struct state *s, unsigned S, sv_ns now)
{
	unsigned in[PH_N] = { 0 }, nrun = 0, nker = 0;
	unsigned amid[2] = { 0 }; /* the first two streams amid their kernels */
	int link[2] = { -1, -1 }; /* with the kernels: the stream whose transfer holds the
				   * link, in and out (the earliest to ask, then the
				   * lowest stream) */
	for (unsigned k = 0; k < S; k++) {
		struct stream *x = &s->st[k];
		if (!x->busy)
			continue;
		if (now >= x->busy_until)
			x->done = x->target;
		else
			x->done += (double)(now - x->last) * x->rate;
		x->last = now;
		const struct plan *p = x->plan;
		while (x->seg + 1 < p->n && x->done >= p->seg[x->seg].end) {
			x->seg++;
			x->launched = now;
		}
		enum seg_kind kind = p->seg[x->seg].kind;
		if (kind == SG_IN || kind == SG_CORES || kind == SG_OUT)
			in[phase_of(kind)]++;
		if (kind == SG_IN || kind == SG_OUT) {
			int *h = &link[kind == SG_OUT];
			if (*h < 0 || s->st[*h].launched > x->launched)
				*h = (int)k;
		}
		if (kind == SG_GAP || kind == SG_RUN) {
			if (nker < 2)
				amid[nker] = k;
			nker++;
		}
		if (kind == SG_RUN) {
			/* into launch order (ties: stream order) */
			unsigned j = nrun++;
			while (j && s->st[s->order[j - 1]].launched > x->launched) {
				s->order[j] = s->order[j - 1];
				j--;
			}
			s->order[j] = k;
		}
	}
	double free_cores = s->cores;
	for (unsigned j = 0; j < nrun; j++) {
		struct stream *x = &s->st[s->order[j]];
		double want = x->plan->seg[x->seg].cores, got = want < free_cores ? want : free_cores;
		free_cores -= got;
		/* 1 when it has what it has alone */
		x->rate = got / want / memory_factor(s, x, nker, amid);
	}
	for (unsigned k = 0; k < S; k++) {
		struct stream *x = &s->st[k];
		if (!x->busy)
			continue;
		const struct seg *g = &x->plan->seg[x->seg];
		if (s->cores > 0 && (g->kind == SG_IN || g->kind == SG_OUT)) {
			/* its transfer runs once those queued before it are over */
			x->rate = link[g->kind == SG_OUT] == (int)k;
		} else if (g->kind == SG_IN || g->kind == SG_CORES || g->kind == SG_OUT) {
			const struct sv_table *t = s->q[x->model].t;
			enum phase ph = phase_of(g->kind);
			sv_ns alone = phase_ns(t, x->variant, ph, 1),
			      shared = phase_ns(t, x->variant, ph, in[ph]);
			x->rate = alone <= 0 || shared <= 0 ? 1 : (double)alone / (double)shared;
		} else if (g->kind != SG_RUN) {
			x->rate = 1;
		}
		/* alone on the chip every segment runs at full speed: straight to
		 * the batch's end (one event per batch on one stream) */
		x->target = s->nbusy == 1 ? x->plan->seg[x->plan->n - 1].end : g->end;
		double left = x->target - x->done;
		x->busy_until = x->rate > 0 ? now + (sv_ns)llround((left > 0 ? left : 0) / x->rate)
					    : SV_NS_INF; /* waits for cores */
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
	lay_out(s, x, k);
	x->last = now;
	x->launched = now; /* its input copy asks for the link */
	x->begun = now;
	unsigned S = s->c->streams ? s->c->streams : 1;
	for (unsigned j = 0; s->lead && j < S; j++) {
		const struct stream *o = &s->st[j];
		s->lead[k * S + j] = j == k || !o->busy ? 0
				     : now >= o->busy_until ? o->target
				     : o->done + (double)(now - o->last) * o->rate;
	}
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

static void free_plans(struct state *s, const struct sv_table *t, unsigned nt)
{
	for (unsigned m = 0; m < nt; m++) {
		for (unsigned v = 0; s->plan[m] && v < t[m].nvariants; v++)
			free(s->plan[m][v].seg);
		for (size_t i = 0; s->after[m] && i < (size_t)t[m].nvariants * SV_MAX_AFTER; i++)
			free(s->after[m][i].seg);
		free(s->plan[m]);
		free(s->after[m]);
		free(s->stamp[m]);
	}
	free(s->order);
	free(s->lead);
}

int sv_simulate(const struct sv_config *c, const struct sv_table *t, const struct sv_arrivals *a,
		struct sv_run *run, char *err, size_t errlen)
{
	return sv_simulate_models(c, t, 1, a, run, err, errlen);
}

static int simulate(const struct sv_config *c, const struct sv_table *t, unsigned nt,
		    const struct sv_arrivals *a, const struct factors *f, struct sv_run *run,
		    char *err, size_t errlen);

/* The mean time of the last n batches of the run of arrivals a on c with
 * the factor *f at x. */
static int last_mean(const struct sv_config *c, const struct sv_table *t,
		     const struct sv_arrivals *a, const struct factors *fs, double *f, double x,
		     unsigned n, double *mean, char *err, size_t errlen)
{
	struct sv_run run;
	*f = x;
	if (simulate(c, t, 1, a, fs, &run, err, errlen))
		return -1;
	double sum = 0;
	for (size_t b = run.nbatch - n; b < run.nbatch; b++)
		sum += (double)(run.batch[b].end - run.batch[b].start);
	*mean = sum / (double)n;
	sv_run_free(&run);
	return 0;
}

/* *f such that the last n batches of that run take want nanoseconds on
 * average: bisection over [0.25, 4], since the fast model's time grows
 * with the factor. */
static int bisect(const struct sv_config *c, const struct sv_table *t, const struct sv_arrivals *a,
		  const struct factors *fs, double *f, unsigned n, double want, char *err,
		  size_t errlen)
{
	double lo = 0.25, hi = 4;
	for (int it = 0; it < 40; it++) {
		double mean;
		if (last_mean(c, t, a, fs, f, (lo + hi) / 2, n, &mean, err, errlen))
			return -1;
		if (mean > want)
			hi = *f;
		else
			lo = *f;
	}
	*f = (lo + hi) / 2;
	return 0;
}

/* The kernels' list gives the cores' sharing, not the memory's: kernels
 * of two batches taking turns find less of their data in the L2 and
 * share main memory, and run slower than alone.  For each variant and n
 * in 2..max_conc, slow[v * max_conc + n - 1] is the factor with which the
 * case the characterisation measured takes the table's time at n in
 * flight: n streams each running `loops` batches back to back from time
 * 0, the last batches' mean time (the last iteration, staggered as the
 * others left it, is the steady state of busy streams).  Bisection: the fast model's time grows with it. */
static int calibrate(const struct sv_table *t, unsigned streams, double *slow, char *err,
		     size_t errlen)
{
	unsigned mc = t->max_conc;
	for (size_t i = 0; i < (size_t)t->nvariants * mc; i++)
		slow[i] = 1;
	/* a run of S streams has at most S batches amid their kernels */
	for (unsigned v = 0; v < t->nvariants; v++)
		for (unsigned n = 2; n <= mc && n <= streams; n++) {
			const struct sv_service *e = sv_table_get(t, v, n);
			double want = (e->h2d_us + e->device_us + e->d2h_us) * 1e3;
			unsigned loops = t->loops ? t->loops : 2;
			struct sv_request *r = calloc((size_t)loops * n, sizeof *r);
			if (!r) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			for (unsigned k = 0; k < loops * n; k++)
				r[k] = (struct sv_request){ .arrival = 0, .size = t->batch[v] };
			struct sv_arrivals a = { r, (size_t)loops * n };
			struct sv_config c = { .policy = SV_POLICY_FIFO, .streams = n,
					       .max_batch = t->batch[v] };
			/* without the pairs: this factor serves any other two or more */
			const struct factors sl = { .slow = { slow } };
			int rc = bisect(&c, t, &a, &sl, &slow[(size_t)v * mc + n - 1], n, want, err,
					errlen);
			free(r);
			if (rc)
				return -1;
		}
	return 0;
}

/* Variant v's factor at each of its pairs, pair[v * SV_MAX_PAIRS + i], so
 * that the pair's two batches, alone on two streams i's offset apart, take
 * the times the chip gave them on average (bisection, as calibrate; slow
 * is not used: the two are the only batches amid their kernels). */
static int calibrate_pairs(const struct sv_table *t, const struct factors *ft, unsigned m,
			   char *err, size_t errlen)
{
	double *slow = ft->slow[m], *pair = ft->pair[m];
	/* the table alone, as model 0 */
	struct factors fs = { .slow = { slow }, .pair = { pair }, .meet = { ft->meet[m] } };
	memcpy(fs.launch[0], ft->launch[m], sizeof fs.launch[0]);
	for (size_t i = 0; i < (size_t)t->nvariants * SV_MAX_PAIRS; i++)
		pair[i] = 1;
	for (unsigned v = 0; v < t->nvariants; v++) {
		unsigned b = t->batch[v];
		/* its kernels' time alone, the measure of a factor's leverage */
		sv_ns kernels_ns = phase_ns(t, v, PH_CORES, 1);
		struct sv_request *r = calloc(2 * (size_t)b, sizeof *r);
		if (!r) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		for (unsigned i = 0; i < t->npair[v]; i++) {
			const struct sv_pair *pr = &t->pair[v][i];
			double want = (pr->first_us + pr->second_us) / 2 * 1e3;
			for (unsigned k = 0; k < 2 * b; k++)
				r[k] = (struct sv_request){ .arrival = k < b ? 0 : ns_of_us(pr->offset_us),
							    .size = 1 };
			struct sv_arrivals a = { r, 2 * (size_t)b };
			struct sv_config c = { .policy = SV_POLICY_FIFO, .streams = 2, .max_batch = b };
			double *f = &pair[(size_t)v * SV_MAX_PAIRS + i];
			double at_lo, at_hi;
			if (last_mean(&c, t, &a, &fs, f, 0.25, 2, &at_lo, err, errlen) ||
			    last_mean(&c, t, &a, &fs, f, 4, 2, &at_hi, err, errlen)) {
				free(r);
				return -1;
			}
			if (at_hi - at_lo < 0.25 * (double)kernels_ns) {
				/* the two meet amid their kernels for a few kernels at
				 * most here (none beyond): the factor is hardly
				 * determined (ResNet-50 b4, 1004 us apart: 1.87 for 75
				 * us of leverage), and two that meet at this offset in a
				 * busier run are given the nearest offset's below */
				*f = i ? f[-1] : slow[v * t->max_conc + 1];
				continue;
			}
			if (bisect(&c, t, &a, &fs, f, 2, want, err, errlen)) {
				free(r);
				return -1;
			}
		}
		free(r);
	}
	return 0;
}

/* Each variant's kernel launches, launch[v], and where each of its pairs
 * meets, (*meet)[v * SV_MAX_PAIRS + i] (pair_factor). */
static int meetings(const struct sv_table *t, double **launch, unsigned **meet)
{
	*meet = malloc((size_t)t->nvariants * SV_MAX_PAIRS * sizeof **meet);
	if (!*meet)
		return -1;
	for (unsigned v = 0; v < t->nvariants; v++) {
		if (!(launch[v] = malloc((t->nkern[v] + 1) * sizeof *launch[v])))
			return -1;
		sv_kernel_launches(t, v, launch[v]);
		for (unsigned i = 0; i < t->npair[v]; i++)
			(*meet)[v * SV_MAX_PAIRS + i] =
				sv_pair_meeting(t, v, launch[v], t->pair[v][i].offset_us);
	}
	return 0;
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
	struct factors f;
	memset(&f, 0, sizeof f);
	unsigned S = c->streams ? c->streams : 1;
	int rc = 0;
	for (unsigned m = 0; m < nt && !rc; m++) {
		if (!sv_table_has_kernels(&t[m]) || t[m].max_conc > 1024)
			continue;
		f.slow[m] = malloc((size_t)t[m].nvariants * t[m].max_conc * sizeof *f.slow[m]);
		if (!f.slow[m]) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		rc = calibrate(&t[m], S, f.slow[m], err, errlen);
		int pairs = 0;
		for (unsigned v = 0; v < t[m].nvariants; v++)
			pairs = pairs || t[m].npair[v];
		if (rc || !pairs || S < 2 || t[m].max_conc < 2)
			continue;
		f.pair[m] = malloc((size_t)t[m].nvariants * SV_MAX_PAIRS * sizeof *f.pair[m]);
		if (!f.pair[m] || meetings(&t[m], f.launch[m], &f.meet[m])) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		} else {
			rc = calibrate_pairs(&t[m], &f, m, err, errlen);
		}
	}
	if (!rc)
		rc = simulate(c, t, nt, a, &f, run, err, errlen);
	for (unsigned m = 0; m < nt; m++) {
		free(f.slow[m]);
		free(f.pair[m]);
		free(f.meet[m]);
		for (unsigned v = 0; v < SV_MAX_VARIANTS; v++)
			free(f.launch[m][v]);
	}
	return rc;
}

static int simulate(const struct sv_config *c, const struct sv_table *t, unsigned nt,
		    const struct sv_arrivals *a, const struct factors *f, struct sv_run *run,
		    char *err, size_t errlen)
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
	/* the kernels' list shares the cores when every model has it, for
	 * one chip */
	int kernels = 1;
	for (unsigned m = 0; m < nt; m++)
		kernels = kernels && sv_table_has_kernels(&t[m]) && f->slow[m] &&
			  t[m].core_count == t[0].core_count;
	s.f = f;
	s.cores = kernels ? t[0].core_count : 0;
	s.rec = calloc(a->n ? a->n : 1, sizeof *s.rec);
	s.st = calloc(S, sizeof *s.st);
	s.order = calloc(S, sizeof *s.order);
	int pairs = 0;
	for (unsigned m = 0; m < nt; m++)
		pairs = pairs || (kernels && f->pair[m]);
	s.lead = pairs ? calloc((size_t)S * S, sizeof *s.lead) : NULL;
	run->batch = calloc(a->n ? a->n : 1, sizeof *run->batch);
	int oom = !s.rec || !s.st || !s.order || !run->batch || (pairs && !s.lead);
	for (unsigned m = 0; m < nt && !oom; m++) {
		s.plan[m] = calloc(t[m].nvariants, sizeof *s.plan[m]);
		oom = !s.plan[m];
		for (unsigned v = 0; v < t[m].nvariants && !oom; v++)
			oom = make_plan(&t[m], v, kernels, 0, &s.plan[m][v]) != 0;
		s.after[m] = oom ? NULL : calloc((size_t)t[m].nvariants * SV_MAX_AFTER,
						 sizeof *s.after[m]);
		s.stamp[m] = oom ? NULL : calloc((size_t)t[m].nvariants * S, sizeof *s.stamp[m]);
		oom = oom || !s.after[m] || !s.stamp[m];
		/* warmed up, as a server is (and --exact): every instance ran once,
		 * model by model, variant by variant, stream by stream */
		for (size_t i = 0; !oom && i < (size_t)t[m].nvariants * S; i++)
			s.stamp[m][i] = ++s.stamps;
		for (unsigned v = 0; v < t[m].nvariants && !oom; v++)
			for (unsigned k = 0; k < SV_MAX_AFTER && !oom; k++)
				if (t[m].after_us[v][k] > 0)
					oom = make_plan(&t[m], v, kernels, t[m].after_us[v][k],
							&s.after[m][v * SV_MAX_AFTER + k]) != 0;
	}
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
		free_plans(&s, t, nt);
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
				if (s.st[k].busy && s.st[k].seg + 1 == s.st[k].plan->n &&
				    s.st[k].done >= s.st[k].plan->seg[s.st[k].plan->n - 1].end &&
				    s.st[k].busy_until <= now) {
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
	free_plans(&s, t, nt);
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
