/* serve_exact.c: how far the fast mode's service table is from the chip
 * (see serve.h): the fast run's batches replayed on the runtime, each at its
 * start instant, every stream on one simulated chip. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "om.h"
#include "runtime.h"
#include "serve.h"

struct inst { /* one variant's model instance on one stream */
	struct rt_model m;
	uint64_t in[16], out[16];
	int loaded;
};

/* Variants are numbered across the models: model m's variant v is
 * off[m] + v. */
struct replay {
	struct rt_device *d;
	struct om_model *om;
	const struct om_model **prog; /* om[v] or, from a dynamic-batch .om, its
				       * program of batch[v] */
	int *have_om;
	unsigned off[SV_MAX_MODELS + 1];
	struct inst *inst; /* [variant * S + stream] */
	struct rt_stream **st;
	struct rt_event **ev; /* [2 * batch]: its start and its end */
	void *host;
	unsigned S, V;
	size_t nb;
};

static int by_ns(const void *a, const void *b)
{
	sv_ns x = *(const sv_ns *)a, y = *(const sv_ns *)b;
	return x < y ? -1 : x > y;
}

static double p99_us(sv_ns *v, size_t n)
{
	qsort(v, n, sizeof *v, by_ns);
	size_t rank = (size_t)(((unsigned long long)990 * n + 999) / 1000);
	return (double)v[rank ? rank - 1 : 0] / 1e3;
}

static void release(struct replay *r)
{
	struct sim_device *sim = r->d ? rt_device_sim(r->d) : NULL;
	for (size_t b = 0; r->ev && b < 2 * r->nb; b++)
		if (r->ev[b])
			rt_event_free(r->ev[b]);
	for (unsigned v = 0; r->inst && v < r->V; v++)
		for (unsigned k = r->S; k-- > 0;) {
			struct inst *x = &r->inst[v * r->S + k];
			for (unsigned i = 0; i < 16; i++) {
				if (x->in[i])
					sim_gm_free(sim, x->in[i]);
				if (x->out[i])
					sim_gm_free(sim, x->out[i]);
			}
			if (x->loaded)
				rt_model_unload(&x->m);
		}
	for (unsigned k = 1; r->st && k < r->S; k++)
		if (r->st[k])
			rt_stream_free(r->st[k]);
	for (unsigned v = 0; r->have_om && v < r->V; v++)
		if (r->have_om[v])
			om_free(&r->om[v]);
	free(r->om);
	free(r->prog);
	free(r->have_om);
	free(r->ev);
	free(r->inst);
	free(r->st);
	free(r->host);
	if (r->d)
		rt_device_free(r->d);
}

/* Model mi's files read for the variants of its (of r->off[mi]...) that
 * the batches use; *hb grows to the largest input or output. */
static int read_model(struct replay *r, unsigned mi, const char *const *om_paths, unsigned n,
		      const struct soc_config *cfg, const struct sv_table *t, const int *used,
		      size_t *hb, char *err, size_t errlen)
{
	unsigned o = r->off[mi];
	for (unsigned i = 0; i < n; i++) {
		/* a dynamic-batch .om holds one program per size: each a variant
		 * of its own here, read (and loaded) separately, as the files of a
		 * fixed-batch set are */
		int64_t sz[OM_MAX_VARIANTS + 1];
		unsigned ns = 1;
		for (unsigned k = 0; k < ns; k++) {
			struct om_model om;
			char e2[1024];
			if (om_read(om_paths[i], &om, cfg->name, e2, sizeof e2)) {
				snprintf(err, errlen, "--model %s: %s", om_paths[i], e2);
				return -1;
			}
			if (k == 0 && om.batch)
				ns = om_batch_sizes(&om, sz);
			const struct om_model *p = om.batch ? om_variant(&om, sz[k]) : &om;
			int v = p->ninputs && p->inputs[0].rank
					? sv_table_variant(t, (unsigned)p->inputs[0].dims[0])
					: -1;
			if (v < 0 || t->batch[v] != p->inputs[0].dims[0] || !used[o + v] ||
			    r->have_om[o + v] || p->ninputs > 16 || p->noutputs > 16) {
				om_free(&om);
				continue;
			}
			v += (int)o;
			r->om[v] = om;
			/* om moved: the program's address is within r->om[v] */
			r->prog[v] = om.batch ? om_variant(&r->om[v], sz[k]) : &r->om[v];
			r->have_om[v] = 1;
			for (unsigned q = 0; q < p->ninputs; q++)
				*hb = p->inputs[q].size > *hb ? p->inputs[q].size : *hb;
			for (unsigned q = 0; q < p->noutputs; q++)
				*hb = p->outputs[q].size > *hb ? p->outputs[q].size : *hb;
		}
	}
	for (unsigned v = 0; v < t->nvariants; v++)
		if (used[o + v] && !r->have_om[o + v]) {
			snprintf(err, errlen, "no --model file%s%s has batch %u (the replay needs "
				 "every variant the run used)", r->off[1] < r->V ? " of " : "",
				 r->off[1] < r->V ? t->name : "", t->batch[v]);
			return -1;
		}
	return 0;
}

/* Models, instances and buffers for the variants the batches use. */
static int setup(struct replay *r, const char *const *const *om_paths, const unsigned *n,
		 unsigned nt, const struct soc_config *cfg, const struct sv_table *t,
		 const struct sv_run *run, char *err, size_t errlen)
{
	r->om = calloc(r->V, sizeof *r->om);
	r->prog = calloc(r->V, sizeof *r->prog);
	r->have_om = calloc(r->V, sizeof *r->have_om);
	int *used = calloc(r->V, sizeof *used);
	if (!r->om || !r->prog || !r->have_om || !used) {
		free(used);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t b = 0; b < r->nb; b++)
		used[r->off[run->batch[b].model] + run->batch[b].variant] = 1;
	size_t hb = 1;
	for (unsigned m = 0; m < nt; m++)
		if (read_model(r, m, om_paths[m], n[m], cfg, &t[m], used, &hb, err, errlen)) {
			free(used);
			return -1;
		}
	free(used);
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	if (!(r->d = rt_device_new(cfg, &opt, err, errlen)))
		return -1;
	struct sim_device *sim = rt_device_sim(r->d);
	r->host = calloc(1, hb);
	r->inst = calloc((size_t)r->V * r->S, sizeof *r->inst);
	r->st = calloc(r->S, sizeof *r->st);
	r->ev = calloc(2 * r->nb, sizeof *r->ev);
	if (!r->host || !r->inst || !r->st || !r->ev) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < r->S; k++)
		if (!(r->st[k] = k ? rt_stream_new(r->d) : rt_default_stream(r->d))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	for (unsigned v = 0; v < r->V; v++) {
		if (!r->have_om[v])
			continue;
		const struct om_model *om = r->prog[v];
		for (unsigned k = 0; k < r->S; k++) {
			struct inst *x = &r->inst[v * r->S + k];
			if (k ? rt_model_clone(&r->inst[v * r->S].m, &x->m, err, errlen)
			      : rt_model_load(r->d, om, &x->m, err, errlen))
				return -1;
			x->loaded = 1;
			for (unsigned i = 0; i < om->ninputs; i++)
				if (!(x->in[i] = sim_gm_alloc(sim, om->inputs[i].size + RT_BUFFER_SLACK))) {
					snprintf(err, errlen, "the replay's buffers do not fit the device");
					return -1;
				}
			for (unsigned i = 0; i < om->noutputs; i++)
				if (!(x->out[i] = sim_gm_alloc(sim, om->outputs[i].size + RT_BUFFER_SLACK))) {
					snprintf(err, errlen, "the replay's buffers do not fit the device");
					return -1;
				}
		}
	}
	for (size_t b = 0; b < 2 * r->nb; b++)
		if (!(r->ev[b] = rt_event_new(r->d))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	return 0;
}

/* When each of the first nb batches may start in the replay, at the
 * earliest; it starts then or when its stream is done with the batch
 * before it, whichever is later (the stream's order).  The fast run's start
 * instant is where its batcher closed the batch, and that instant
 * includes the fast model's own completions: a batch closed when its
 * stream freed started when the *fast* stream freed.  Replayed at that
 * instant, it kept the fast run's schedule near capacity: the chip's
 * streams, done earlier, sat idle until then, so its batches overlapped
 * less than the fast run's (docs/serving.md).  A FIFO batch of max_batch
 * items closes as soon as its last request is ready and a stream is free,
 * whatever the delay, and its requests are the next max_batch in arrival
 * order whenever the batches before it are: so it may start once that
 * request is ready, and the chip's own completions decide the rest.  Other
 * batches (closed by the delay or by the SLO-aware policy, whose content
 * depends on when the stream freed) keep the fast run's instant. */
static int replay_holds(const struct sv_config *c, const struct sv_table *t,
			const struct sv_run *run, size_t nb, sv_ns *hold)
{
	for (size_t b = 0; b < nb; b++)
		hold[b] = run->batch[b].start;
	if (c->policy != SV_POLICY_FIFO)
		return 0;
	sv_ns *last = calloc(nb, sizeof *last); /* the latest ready request of each */
	if (!last)
		return -1;
	for (size_t i = 0; i < run->n; i++) {
		const struct sv_record *q = &run->rec[i];
		if (q->batch_id < nb && q->ready > last[q->batch_id])
			last[q->batch_id] = q->ready;
	}
	for (size_t b = 0; b < nb; b++) {
		const struct sv_batch *sb = &run->batch[b];
		const struct sv_table *tm = &t[sb->model];
		unsigned max_batch = c->max_batch ? c->max_batch : tm->batch[tm->nvariants - 1];
		if (sb->items == max_batch && last[b] < hold[b])
			hold[b] = last[b];
	}
	free(last);
	return 0;
}

int sv_exact_replay(const char *const *om_paths, unsigned n, const struct soc_config *cfg,
		    const struct sv_config *c, const struct sv_table *t, const struct sv_run *run,
		    size_t max_batches, struct sv_exact *x, char *err, size_t errlen)
{
	return sv_exact_replay_models(&om_paths, &n, 1, cfg, c, t, run, max_batches, x, err,
				      errlen);
}

int sv_exact_replay_models(const char *const *const *om_paths, const unsigned *n, unsigned nt,
			   const struct soc_config *cfg, const struct sv_config *c,
			   const struct sv_table *t, const struct sv_run *run, size_t max_batches,
			   struct sv_exact *x, char *err, size_t errlen)
{
	memset(x, 0, sizeof *x);
	struct replay r = { .S = c->streams ? c->streams : 1,
			    .nb = max_batches < run->nbatch ? max_batches : run->nbatch };
	if (!nt || nt > SV_MAX_MODELS) {
		snprintf(err, errlen, "1..%d models, not %u", SV_MAX_MODELS, nt);
		return -1;
	}
	for (unsigned m = 0; m < nt; m++)
		r.off[m + 1] = r.off[m] + t[m].nvariants;
	r.V = r.off[nt];
	if (!r.nb) {
		snprintf(err, errlen, "no batches to replay");
		return -1;
	}
	int rc = -1;
	sv_ns *hold = NULL; /* each batch's start instant in the replay, at the earliest */
	if (setup(&r, om_paths, n, nt, cfg, t, run, err, errlen))
		goto done;
	/* a server warms its models up before it takes traffic, and the table
	 * was measured warm: one execution of each variant on each stream */
	for (unsigned v = 0; v < r.V; v++)
		for (unsigned k = 0; r.have_om[v] && k < r.S; k++) {
			struct inst *in = &r.inst[v * r.S + k];
			const struct om_model *om = r.prog[v];
			for (unsigned i = 0; i < om->ninputs; i++)
				if (rt_memcpy_async(r.st[k], SIM_COPY_H2D, r.host, in->in[i], 0,
						    om->inputs[i].size, err, errlen))
					goto done;
			if (rt_model_execute_async(&in->m, r.st[k], in->in, in->out, err, errlen) < 0)
				goto done;
		}
	if (rt_synchronize(r.d, err, errlen))
		goto done;
	rt_log_clear(r.d);
	/* the loads and the warm-up are over: the run's time 0 is now */
	uint64_t base = rt_now(r.d);
	double mhz = cfg->core_freq_mhz;
	hold = malloc(r.nb * sizeof *hold);
	if (!hold || replay_holds(c, t, run, r.nb, hold)) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	for (size_t b = 0; b < r.nb; b++) {
		const struct sv_batch *sb = &run->batch[b];
		struct rt_stream *s = r.st[sb->stream];
		unsigned g = r.off[sb->model] + sb->variant;
		struct inst *in = &r.inst[g * r.S + sb->stream];
		const struct om_model *om = r.prog[g];
		uint64_t at = base + (uint64_t)llround((double)hold[b] * mhz / 1e3);
		if (rt_stream_hold(s, at) || rt_event_record(r.ev[2 * b], s)) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
		for (unsigned i = 0; i < om->ninputs; i++)
			if (rt_memcpy_async(s, SIM_COPY_H2D, r.host, in->in[i], 0, om->inputs[i].size,
					    err, errlen))
				goto done;
		if (rt_model_execute_async(&in->m, s, in->in, in->out, err, errlen) < 0)
			goto done;
		for (unsigned i = 0; i < om->noutputs; i++)
			if (rt_memcpy_async(s, SIM_COPY_D2H, r.host, in->out[i], 0, om->outputs[i].size,
					    err, errlen))
				goto done;
		if (rt_event_record(r.ev[2 * b + 1], s)) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
	}
	if (rt_synchronize(r.d, err, errlen))
		goto done;
	sv_ns *end = malloc(r.nb * sizeof *end);
	size_t nreq = 0;
	for (size_t b = 0; b < r.nb; b++)
		nreq += run->batch[b].nreq;
	sv_ns *fast = malloc((nreq + 1) * sizeof *fast), *exact = malloc((nreq + 1) * sizeof *exact);
	if (!end || !fast || !exact) {
		free(end);
		free(fast);
		free(exact);
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	double sum_err = 0, sum_shift = 0;
	for (size_t b = 0; b < r.nb; b++) {
		const struct sv_batch *sb = &run->batch[b];
		uint64_t c0, c1;
		rt_event_query(r.ev[2 * b], &c0);
		rt_event_query(r.ev[2 * b + 1], &c1);
		double s_us = (double)(c0 - base) / mhz, e_us = (double)(c1 - base) / mhz;
		double fast_service = (double)(sb->end - sb->start) / 1e3;
		double e = fabs((e_us - s_us) - fast_service) / fast_service;
		double shift = fabs(e_us - (double)sb->end / 1e3);
		sum_err += e;
		sum_shift += shift;
		if (e > x->service_err_max)
			x->service_err_max = e;
		if (shift > x->end_shift_max_us)
			x->end_shift_max_us = shift;
		end[b] = (sv_ns)llround(e_us * 1e3);
	}
	/* the replayed requests' latencies: fast, and with the exact batch ends */
	size_t k = 0;
	double sf = 0, se = 0;
	for (size_t i = 0; i < run->n; i++) {
		const struct sv_record *q = &run->rec[i];
		if (q->batch_id >= r.nb)
			continue;
		fast[k] = q->end - q->arrival;
		exact[k] = end[q->batch_id] + (q->end - run->batch[q->batch_id].end) - q->arrival;
		sf += (double)fast[k];
		se += (double)exact[k];
		k++;
	}
	x->batches = r.nb;
	x->requests = k;
	x->service_err_mean = sum_err / (double)r.nb;
	x->end_shift_mean_us = sum_shift / (double)r.nb;
	x->fast_mean_us = k ? sf / (double)k / 1e3 : 0;
	x->exact_mean_us = k ? se / (double)k / 1e3 : 0;
	x->fast_p99_us = k ? p99_us(fast, k) : 0;
	x->exact_p99_us = k ? p99_us(exact, k) : 0;
	free(end);
	free(fast);
	free(exact);
	rc = 0;
done:
	free(hold);
	release(&r);
	return rc;
}

void sv_exact_print(FILE *f, const struct sv_exact *x, int json)
{
	if (json) {
		fprintf(f, "{\"exact_replay\": {\"batches\": %zu, \"requests\": %zu, "
			"\"service_err_mean\": %.6f, \"service_err_max\": %.6f, "
			"\"end_shift_mean_us\": %.3f, \"end_shift_max_us\": %.3f, \"fast_mean_us\": "
			"%.3f, \"exact_mean_us\": %.3f, \"fast_p99_us\": %.3f, \"exact_p99_us\": "
			"%.3f}}\n", x->batches, x->requests, x->service_err_mean, x->service_err_max,
			x->end_shift_mean_us, x->end_shift_max_us, x->fast_mean_us, x->exact_mean_us,
			x->fast_p99_us, x->exact_p99_us);
		return;
	}
	fprintf(f, "exact replay of the first %zu batches (%zu requests) on the simulated chip:\n"
		"  batch service time: fast mode off by %.2f%% on average, %.2f%% at most\n"
		"  batch completion:   %.1f us apart on average, %.1f us at most\n"
		"  latency of these requests: mean %.3f ms fast, %.3f ms exact; P99 %.3f ms fast, "
		"%.3f ms exact\n", x->batches, x->requests, 100 * x->service_err_mean,
		100 * x->service_err_max, x->end_shift_mean_us, x->end_shift_max_us,
		x->fast_mean_us / 1e3, x->exact_mean_us / 1e3, x->fast_p99_us / 1e3,
		x->exact_p99_us / 1e3);
}
