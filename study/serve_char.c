/* serve_char.c: a service table from compiled models (see serve.h).
 *
 * The runtime runs executions of different streams concurrently on one
 * simulated chip (free AI cores take the blocks; PCIe copies overlap other
 * streams' compute), so concurrency is simulated, not estimated: for c
 * streams, c instances of the model (shared weights, own workspaces) each
 * run `loops` iterations of input copy, execution and output copy at once.
 * The last iteration of each stream is steady state (warm L2, the other
 * streams in flight); its three phases, averaged over the streams, are the
 * table's entry for (variant, c).  Timing mode: the cycles are those of a
 * full simulation. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "om.h"
#include "runtime.h"
#include "serve.h"

struct lane {
	struct rt_stream *s;
	struct rt_model m;
	uint64_t in[16], out[16];
	int loaded;
};

/* The phases of stream sid's last iteration, from the log (in completion
 * order; a stream's tasks complete in its order). */
/* A lane's buffers and model (what was allocated and loaded of them). */
static void lane_free(struct sim_device *sim, const struct om_model *om, struct lane *l)
{
	for (unsigned i = 0; i < om->ninputs; i++)
		if (l->in[i])
			sim_gm_free(sim, l->in[i]);
	for (unsigned i = 0; i < om->noutputs; i++)
		if (l->out[i])
			sim_gm_free(sim, l->out[i]);
	if (l->loaded)
		rt_model_unload(&l->m);
}

/* Stream sid's last execution in the log, or NULL. */
static const struct trc_exec *last_exec(const struct trc_exec *er, size_t ne, unsigned sid)
{
	const struct trc_exec *ex = NULL;
	for (size_t i = 0; i < ne; i++)
		if (er[i].stream_id == sid && (!ex || er[i].exec_id > ex->exec_id))
			ex = &er[i];
	return ex;
}

static int last_iteration(const struct rt_device *d, const struct om_model *om, unsigned sid,
			  double mhz, struct sv_service *s, char *err, size_t errlen)
{
	size_t nt, ne;
	const struct trc_task *tr = rt_tasks(d, &nt);
	const struct trc_exec *er = rt_execs(d, &ne);
	const struct trc_exec *ex = last_exec(er, ne, sid);
	if (!ex) {
		snprintf(err, errlen, "stream %u ran no execution", sid);
		return -1;
	}
	uint64_t in_from = UINT64_MAX, out_to = 0, first_kernel = ex->end;
	unsigned nin = 0, nout = 0;
	for (size_t i = nt; i-- > 0;) {
		const struct trc_task *r = &tr[i];
		if (r->stream_id == sid && r->kind == TRC_TASK_KERNEL && r->start >= ex->start &&
		    r->start < first_kernel)
			first_kernel = r->start;
		if (r->stream_id != sid || r->kind != TRC_TASK_MEMCPY)
			continue;
		if (r->dir == SIM_COPY_D2H && r->start >= ex->end && nout < om->noutputs) {
			nout++;
			if (r->end > out_to)
				out_to = r->end;
		} else if (r->dir == SIM_COPY_H2D && r->end <= ex->start && nin < om->ninputs) {
			nin++;
			/* from its predecessor's end: the wait for the link counts */
			if (r->queued < in_from)
				in_from = r->queued;
		}
	}
	if (nin != om->ninputs || nout != om->noutputs) {
		snprintf(err, errlen, "stream %u: the last iteration's copies are not in the log",
			 sid);
		return -1;
	}
	s->h2d_us = (double)(ex->start - in_from) / mhz;
	s->device_us = (double)(ex->end - ex->start) / mhz;
	s->d2h_us = (double)(out_to - ex->end) / mhz;
	/* before the first kernel: the execution's fixed cost (and, with others
	 * in flight, the wait for a core) */
	s->fixed_us = (double)(first_kernel - ex->start) / mhz;
	if (s->fixed_us >= s->device_us)
		s->fixed_us = 0;
	return 0;
}

/* The kernels of stream sid's last execution, in stream order (the log's
 * completion order is its stream order): *k (caller frees), *n. */
static int last_kernels(const struct rt_device *d, unsigned sid, double mhz,
			struct sv_kernel **k, unsigned *n, char *err, size_t errlen)
{
	size_t nt, ne;
	const struct trc_task *tr = rt_tasks(d, &nt);
	const struct trc_exec *er = rt_execs(d, &ne);
	const struct trc_exec *ex = last_exec(er, ne, sid);
	*k = NULL;
	*n = 0;
	size_t cap = 0;
	uint64_t prev = 0;
	for (size_t i = 0; ex && i < nt; i++) {
		const struct trc_task *r = &tr[i];
		if (r->stream_id != sid || r->kind != TRC_TASK_KERNEL || r->start < ex->start ||
		    r->end > ex->end)
			continue;
		if (*n == SV_MAX_KERNELS) {
			snprintf(err, errlen, "more than %d kernels in one execution", SV_MAX_KERNELS);
			return -1;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			struct sv_kernel *g = realloc(*k, cap * sizeof *g);
			if (!g) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			*k = g;
		}
		/* the first kernel's wait is the fixed cost's (the table's) */
		(*k)[*n] = (struct sv_kernel){ .gap_us = *n ? (double)(r->start - prev) / mhz : 0,
					       .run_us = (double)(r->end - r->start) / mhz,
					       .cores = r->end > r->start && r->core_cycles
							? (double)r->core_cycles /
								  (double)(r->end - r->start)
							: 1 };
		(*n)++;
		prev = r->end;
	}
	if (!*n) {
		snprintf(err, errlen, "stream %u: the last execution ran no kernel", sid);
		return -1;
	}
	return 0;
}

/* n instances of om on n streams of d (the first loads the model, the
 * others clone it: shared weights, own workspaces), each with its input and
 * output buffers; ln zeroed, so that lanes_close frees what was made. */
static int lanes_open(struct rt_device *d, const struct om_model *om, struct lane *ln, unsigned n,
		      char *err, size_t errlen)
{
	struct sim_device *sim = rt_device_sim(d);
	for (unsigned k = 0; k < n; k++) {
		struct lane *l = &ln[k];
		if (k == 0 ? rt_model_load(d, om, &l->m, err, errlen)
			   : rt_model_clone(&ln[0].m, &l->m, err, errlen))
			return -1;
		l->loaded = 1;
		l->s = k == 0 ? rt_default_stream(d) : rt_stream_new(d);
		if (!l->s) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		for (unsigned i = 0; i < om->ninputs; i++)
			if (!(l->in[i] = sim_gm_alloc(sim, om->inputs[i].size + RT_BUFFER_SLACK))) {
				snprintf(err, errlen, "%u instances' inputs do not fit the device "
					 "memory", n);
				return -1;
			}
		for (unsigned i = 0; i < om->noutputs; i++)
			if (!(l->out[i] = sim_gm_alloc(sim, om->outputs[i].size + RT_BUFFER_SLACK))) {
				snprintf(err, errlen, "%u instances' outputs do not fit the device "
					 "memory", n);
				return -1;
			}
	}
	return 0;
}

/* What lanes_open made of n lanes, the last first. */
static void lanes_close(struct sim_device *sim, const struct om_model *om, struct lane *ln,
			unsigned n)
{
	for (unsigned k = n; k-- > 0;) {
		lane_free(sim, om, &ln[k]);
		if (k > 0 && ln[k].s)
			rt_stream_free(ln[k].s);
	}
}

/* Queue one batch on lane l: its inputs in, the execution, its outputs out. */
static int queue_batch(const struct om_model *om, struct lane *l, void *host, char *err,
		       size_t errlen)
{
	for (unsigned i = 0; i < om->ninputs; i++)
		if (rt_memcpy_async(l->s, SIM_COPY_H2D, host, l->in[i], 0, om->inputs[i].size, err,
				    errlen))
			return -1;
	if (rt_model_execute_async(&l->m, l->s, l->in, l->out, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < om->noutputs; i++)
		if (rt_memcpy_async(l->s, SIM_COPY_D2H, host, l->out[i], 0, om->outputs[i].size, err,
				    errlen))
			return -1;
	return 0;
}

/* kern (may be NULL): the kernels of the first stream's last execution */
static int run_conc(const struct soc_config *cfg, const struct om_model *om, unsigned conc,
		    unsigned loops, void *host, struct sv_service *out, struct sv_kernel **kern,
		    unsigned *nkern, char *err, size_t errlen)
{
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	struct rt_device *d = rt_device_new(cfg, &opt, err, errlen);
	if (!d)
		return -1;
	struct sim_device *sim = rt_device_sim(d);
	struct lane *ln = calloc(conc, sizeof *ln);
	int rc = -1;
	if (!ln) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (lanes_open(d, om, ln, conc, err, errlen))
		goto done;
	rt_log_clear(d); /* the weights' load is not serving time */
	for (unsigned it = 0; it < loops; it++)
		for (unsigned k = 0; k < conc; k++)
			if (queue_batch(om, &ln[k], host, err, errlen))
				goto done;
	if (rt_synchronize(d, err, errlen))
		goto done;
	struct sv_service sum = { 0, 0, 0, 0 };
	for (unsigned k = 0; k < conc; k++) {
		struct sv_service s;
		if (last_iteration(d, om, rt_stream_id(ln[k].s), cfg->core_freq_mhz, &s, err,
				   errlen))
			goto done;
		sum.h2d_us += s.h2d_us;
		sum.device_us += s.device_us;
		sum.d2h_us += s.d2h_us;
		sum.fixed_us += s.fixed_us;
	}
	out->h2d_us = sum.h2d_us / conc;
	out->device_us = sum.device_us / conc;
	out->d2h_us = sum.d2h_us / conc;
	out->fixed_us = sum.fixed_us / conc;
	if (kern && last_kernels(d, rt_stream_id(ln[0].s), cfg->core_freq_mhz, kern, nkern, err,
				 errlen))
		goto done;
	rc = 0;
done:
	if (ln)
		lanes_close(sim, om, ln, conc);
	free(ln);
	rt_device_free(d);
	return rc;
}

/* The served model's name, from its first file: "dir/resnet50_b4.om" ->
 * "resnet50" (the .om's own name is its ONNX file's, often "model.onnx",
 * and the variants need not agree on it). */
static void stem(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (n > 3 && !strcmp(b + n - 3, ".om"))
		n -= 3;
	size_t d = n;
	while (d && b[d - 1] >= '0' && b[d - 1] <= '9')
		d--;
	if (d < n && d >= 3 && b[d - 1] == 'b' && b[d - 2] == '_')
		n = d - 2;
	snprintf(out, len, "%.*s", (int)n, b);
}

struct variant {
	const char *path;
	unsigned batch;
	int64_t program; /* a dynamic-batch .om's program of this size; 0: the file's model */
};

/* The program of om a variant runs: the file's model, or one of a
 * dynamic-batch model's (om.h). */
static const struct om_model *program(const struct om_model *om, int64_t b)
{
	return b ? om_variant(om, b) : om;
}

static int by_batch(const void *a, const void *b)
{
	const struct variant *x = a, *y = b;
	return x->batch < y->batch ? -1 : x->batch > y->batch;
}

/* Variant i's device time alone on stream 0 when k other model instances
 * ran since its own last ran, one after another (each with its copies):
 * its clones on the other streams first, then the other variants'
 * instances, stream by stream, in variant order.  The warm entries are
 * measured with k = 0; a serving chip's streams and variants interleave,
 * and the L2 then holds less of the instance's data.  *device_us. */
static int run_after(const struct soc_config *cfg, const struct om_model *const *prog,
		     unsigned n, unsigned i, unsigned streams, unsigned k, void *host,
		     double *device_us, char *err, size_t errlen)
{
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	struct rt_device *d = rt_device_new(cfg, &opt, err, errlen);
	if (!d)
		return -1;
	struct sim_device *sim = rt_device_sim(d);
	struct lane ln[SV_MAX_AFTER + 1];
	unsigned var[SV_MAX_AFTER + 1], on[SV_MAX_AFTER + 1], nl = 0;
	memset(ln, 0, sizeof ln);
	var[nl] = i, on[nl++] = 0;
	for (unsigned st = 1; st < streams && nl <= k; st++)
		var[nl] = i, on[nl++] = st;
	for (unsigned u = 0; u < n; u++)
		for (unsigned st = 0; st < streams && nl <= k && u != i; st++)
			var[nl] = u, on[nl++] = st;
	struct rt_stream *sts[SV_MAX_AFTER + 1] = { NULL };
	int rc = -1;
	for (unsigned j = 0; j < nl; j++) {
		const struct om_model *o = prog[var[j]];
		int first = -1; /* an instance of the same variant to clone */
		for (unsigned q = 0; q < j && first < 0; q++)
			if (var[q] == var[j])
				first = (int)q;
		if (first >= 0 ? rt_model_clone(&ln[first].m, &ln[j].m, err, errlen)
			       : rt_model_load(d, o, &ln[j].m, err, errlen))
			goto done;
		ln[j].loaded = 1;
		if (!on[j])
			ln[j].s = rt_default_stream(d);
		else if (!(ln[j].s = sts[on[j]]) && !(ln[j].s = sts[on[j]] = rt_stream_new(d))) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
		for (unsigned q = 0; q < o->ninputs; q++)
			if (!(ln[j].in[q] = sim_gm_alloc(sim, o->inputs[q].size + RT_BUFFER_SLACK))) {
				snprintf(err, errlen, "%u instances' inputs do not fit the device memory",
					 nl);
				goto done;
			}
		for (unsigned q = 0; q < o->noutputs; q++)
			if (!(ln[j].out[q] = sim_gm_alloc(sim, o->outputs[q].size + RT_BUFFER_SLACK))) {
				snprintf(err, errlen, "%u instances' outputs do not fit the device "
					 "memory", nl);
				goto done;
			}
	}
	rt_log_clear(d);
	/* instance 0, the others, instance 0 again: one at a time */
	for (unsigned r = 0; r <= nl; r++) {
		unsigned j = r < nl ? r : 0;
		const struct om_model *o = prog[var[j]];
		for (unsigned q = 0; q < o->ninputs; q++)
			if (rt_memcpy_async(ln[j].s, SIM_COPY_H2D, host, ln[j].in[q], 0,
					    o->inputs[q].size, err, errlen))
				goto done;
		if (rt_model_execute_async(&ln[j].m, ln[j].s, ln[j].in, ln[j].out, err, errlen) < 0)
			goto done;
		for (unsigned q = 0; q < o->noutputs; q++)
			if (rt_memcpy_async(ln[j].s, SIM_COPY_D2H, host, ln[j].out[q], 0,
					    o->outputs[q].size, err, errlen))
				goto done;
		if (rt_synchronize(d, err, errlen))
			goto done;
	}
	size_t ne;
	const struct trc_exec *e = rt_execs(d, &ne);
	const struct trc_exec *last = NULL;
	for (size_t q = 0; q < ne; q++)
		if (!last || e[q].exec_id > last->exec_id)
			last = &e[q];
	if (!last) {
		snprintf(err, errlen, "the executions are not in the log");
		goto done;
	}
	*device_us = (double)(last->end - last->start) / cfg->core_freq_mhz;
	rc = 0;
done:
	for (unsigned j = nl; j-- > 0;) {
		lane_free(sim, prog[var[j]], &ln[j]);
	}
	for (unsigned st = 1; st <= SV_MAX_AFTER; st++)
		if (sts[st])
			rt_stream_free(sts[st]);
	rt_device_free(d);
	return rc;
}

/* Each variant's device times after 1..SV_MAX_AFTER other instances (as
 * many as streams x variants - 1 allow) into t. */
static int characterise_after(const struct variant *v, unsigned n, const struct soc_config *cfg,
			      unsigned streams, FILE *progress, struct sv_table *t, char *err,
			      size_t errlen)
{
	unsigned K = streams * n - 1 < SV_MAX_AFTER ? streams * n - 1 : SV_MAX_AFTER;
	struct om_model *om = calloc(n, sizeof *om);
	const struct om_model **prog = calloc(n, sizeof *prog);
	unsigned nread = 0;
	int rc = -1;
	size_t hb = 1;
	void *host = NULL;
	if (!om || !prog) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	for (; nread < n; nread++) {
		char e2[1024];
		if (om_read(v[nread].path, &om[nread], cfg->name, e2, sizeof e2)) {
			snprintf(err, errlen, "--model %s: %s", v[nread].path, e2);
			goto done;
		}
		prog[nread] = program(&om[nread], v[nread].program);
		for (unsigned q = 0; q < prog[nread]->ninputs; q++)
			hb = prog[nread]->inputs[q].size > hb ? prog[nread]->inputs[q].size : hb;
		for (unsigned q = 0; q < prog[nread]->noutputs; q++)
			hb = prog[nread]->outputs[q].size > hb ? prog[nread]->outputs[q].size : hb;
	}
	if (!(host = calloc(1, hb))) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 1; k <= K; k++) {
			double us = 0;
			char e2[1024];
			if (run_after(cfg, prog, n, i, streams, k, host, &us, e2, sizeof e2)) {
				snprintf(err, errlen, "--model %s, batch %u after %u other instances: %s",
					 v[i].path, v[i].batch, k, e2);
				goto done;
			}
			if (sv_table_set_after(t, i, k, us, err, errlen))
				goto done;
			if (progress) {
				fprintf(progress, "simserve: %s batch %u, %u other instance%s since its "
					"own: device %.1f us\n", v[i].path, v[i].batch, k,
					k > 1 ? "s" : "", us);
				fflush(progress);
			}
		}
	rc = 0;
done:
	free(host);
	for (unsigned i = 0; i < nread; i++)
		om_free(&om[i]);
	free(om);
	free(prog);
	return rc;
}

/* A pair (struct sv_pair) of om's batches at offset_us: two instances on
 * two streams, each warmed by one batch, as a server and --exact warm
 * them; then the first stream's batch at time 0 and the second's at
 * offset_us, each timed from its start to its output copy's end. */
static int run_pair(const struct soc_config *cfg, const struct om_model *om, double offset_us,
		    void *host, struct sv_pair *out, char *err, size_t errlen)
{
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	struct rt_device *d = rt_device_new(cfg, &opt, err, errlen);
	if (!d)
		return -1;
	struct sim_device *sim = rt_device_sim(d);
	struct lane ln[2];
	struct rt_event *ev[4] = { NULL };
	memset(ln, 0, sizeof ln);
	int rc = -1;
	if (lanes_open(d, om, ln, 2, err, errlen))
		goto done;
	for (unsigned k = 0; k < 2; k++)
		if (queue_batch(om, &ln[k], host, err, errlen))
			goto done;
	if (rt_synchronize(d, err, errlen))
		goto done;
	rt_log_clear(d);
	uint64_t base = rt_now(d);
	for (unsigned k = 0; k < 2; k++) {
		uint64_t at = base + (k ? (uint64_t)llround(offset_us * cfg->core_freq_mhz) : 0);
		if (!(ev[2 * k] = rt_event_new(d)) || !(ev[2 * k + 1] = rt_event_new(d)) ||
		    rt_stream_hold(ln[k].s, at) || rt_event_record(ev[2 * k], ln[k].s)) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
		if (queue_batch(om, &ln[k], host, err, errlen))
			goto done;
		if (rt_event_record(ev[2 * k + 1], ln[k].s)) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
	}
	if (rt_synchronize(d, err, errlen))
		goto done;
	double us[2];
	for (unsigned k = 0; k < 2; k++) {
		uint64_t c0, c1;
		rt_event_query(ev[2 * k], &c0);
		rt_event_query(ev[2 * k + 1], &c1);
		us[k] = (double)(c1 - c0) / cfg->core_freq_mhz;
	}
	*out = (struct sv_pair){ offset_us, us[0], us[1] };
	rc = 0;
done:
	for (unsigned k = 0; k < 4; k++)
		if (ev[k])
			rt_event_free(ev[k]);
	lanes_close(sim, om, ln, 2);
	rt_device_free(d);
	return rc;
}

#define SV_PAIR_MAX_STRETCHES 128
#define SV_PAIR_MIN_US 0.5
/* The stretches' middles for kernel launches launch[0..n] from the first
 * that meets first, each at least min long but the last; into off when
 * not NULL.  How many. */
static unsigned stretches(const double *launch, unsigned n, unsigned first, double min,
			  double *off)
{
	unsigned count = 0;
	double from = 0;
	for (unsigned i = first; i <= n && count < SV_MAX_PAIRS; i++) {
		if (launch[i] - from < min && i < n)
			continue;
		if (launch[i] > from && off)
			off[count] = (double)llround((from + launch[i]) / 2 * 1e3) / 1e3;
		count += launch[i] > from;
		from = launch[i];
	}
	return count;
}

/* The offsets at which to run variant v's pairs, into off (ascending,
 * whole nanoseconds), how many: one in the middle of each stretch of
 * offsets over which the follower's first kernel meets the same kernel of
 * the leader (sv_pair_meeting), for the chip runs every pair of such a
 * stretch the same way in absolute time, and one pair gives the stretch's.
 * Evenly spaced offsets fell between the leader's launches and missed
 * whole stretches (ResNet-50 batch 4, 64 offsets 19.7 us apart: none of
 * 280.7-290.3 us, whose pairs take 2.5% more than the offsets around it
 * gave).  A stretch shorter than SV_PAIR_MIN_US joins the next (its pair
 * then stands for both), and so, for a model of more kernels than
 * SV_PAIR_MAX_STRETCHES, does one shorter than the kernels' time over it. */
static int pair_offsets(const struct sv_table *t, unsigned v, double *off)
{
	unsigned n = t->nkern[v];
	double *launch = malloc((n + 1) * sizeof *launch);
	if (!launch)
		return -1;
	sv_kernel_launches(t, v, launch);
	/* the stretches in offsets: [from, launch[i]) meets kernel i - 1; the
	 * first reachable one begins at 0 (the follower's copy queued behind
	 * the leader's transfer meets where one started at the transfer's end) */
	unsigned first = sv_pair_meeting(t, v, launch, 0);
	double min = SV_PAIR_MIN_US;
	if (stretches(launch, n, first, min, NULL) > SV_PAIR_MAX_STRETCHES &&
	    launch[n] / SV_PAIR_MAX_STRETCHES > min)
		min = launch[n] / SV_PAIR_MAX_STRETCHES;
	unsigned count = stretches(launch, n, first, min, off);
	free(launch);
	return (int)count;
}

/* Each variant's pairs at pair_offsets, into t. */
static int characterise_pairs(const struct variant *v, unsigned n, const struct soc_config *cfg,
			      FILE *progress, struct sv_table *t, char *err, size_t errlen)
{
	for (unsigned i = 0; i < n; i++) {
		struct om_model om;
		char e2[1024];
		if (om_read(v[i].path, &om, cfg->name, e2, sizeof e2)) {
			snprintf(err, errlen, "--model %s: %s", v[i].path, e2);
			return -1;
		}
		const struct om_model *p = program(&om, v[i].program);
		size_t hb = 1;
		for (unsigned k = 0; k < p->ninputs; k++)
			hb = p->inputs[k].size > hb ? p->inputs[k].size : hb;
		for (unsigned k = 0; k < p->noutputs; k++)
			hb = p->outputs[k].size > hb ? p->outputs[k].size : hb;
		void *host = calloc(1, hb);
		int rc = host ? 0 : -1;
		if (!host)
			snprintf(err, errlen, "out of memory");
		double *offs = host ? malloc(SV_MAX_PAIRS * sizeof *offs) : NULL;
		int noff = offs ? pair_offsets(t, i, offs) : -1;
		if (host && noff < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
		for (int k = 0; k < noff && !rc; k++) {
			struct sv_pair q;
			/* whole nanoseconds: the offset is written and read back exact */
			double off = offs[k];
			if (run_pair(cfg, p, off, host, &q, e2, sizeof e2)) {
				snprintf(err, errlen, "--model %s, batch %u, a pair %.3f us apart: %s",
					 v[i].path, v[i].batch, off, e2);
				rc = -1;
			} else if ((rc = sv_table_add_pair(t, i, &q, err, errlen)) == 0 && progress) {
				fprintf(progress, "simserve: %s batch %u, a pair %.1f us apart: %.1f and "
					"%.1f us\n", v[i].path, v[i].batch, off, q.first_us, q.second_us);
				fflush(progress);
			}
		}
		free(offs);
		free(host);
		om_free(&om);
		if (rc)
			return -1;
	}
	return 0;
}

int sv_table_characterise(const char *const *om_paths, unsigned n, const struct soc_config *cfg,
			  unsigned streams, unsigned loops, FILE *progress, struct sv_table *t,
			  char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	if (!n || n > SV_MAX_VARIANTS) {
		snprintf(err, errlen, "--model: 1..%d .om files, one per batch size (or dynamic-batch "
			 ".om files, one program per size)", SV_MAX_VARIANTS);
		return -1;
	}
	if (!streams)
		streams = 1;
	if (loops < 2)
		loops = 2;
	struct variant v[SV_MAX_VARIANTS];
	char name[128] = "";
	unsigned nv = 0;
	for (unsigned i = 0; i < n; i++) {
		struct om_model om;
		char e2[1024];
		if (om_read(om_paths[i], &om, cfg->name, e2, sizeof e2)) {
			snprintf(err, errlen, "--model %s: %s", om_paths[i], e2);
			return -1;
		}
		/* a dynamic-batch .om brings one variant per size */
		int64_t sz[OM_MAX_VARIANTS + 1];
		unsigned ns = om_batch_sizes(&om, sz);
		for (unsigned k = 0; k < (ns ? ns : 1); k++) {
			const struct om_model *p = program(&om, ns ? sz[k] : 0);
			if (!p->ninputs || p->inputs[0].rank < 1 || p->inputs[0].dims[0] < 1 ||
			    p->inputs[0].dims[0] > SV_HIST_MAX || p->ninputs > 16 ||
			    p->noutputs > 16 || nv == SV_MAX_VARIANTS) {
				snprintf(err, errlen, "--model %s: the batch is dim 0 of the first "
					 "input, in 1..%d (and at most 16 inputs and outputs, %d "
					 "variants)", om_paths[i], SV_HIST_MAX, SV_MAX_VARIANTS);
				om_free(&om);
				return -1;
			}
			v[nv].path = om_paths[i];
			v[nv].program = ns ? sz[k] : 0;
			v[nv++].batch = (unsigned)p->inputs[0].dims[0];
		}
		om_free(&om);
	}
	n = nv;
	stem(om_paths[0], name, sizeof name);
	qsort(v, n, sizeof *v, by_batch);
	unsigned batch[SV_MAX_VARIANTS];
	for (unsigned i = 0; i < n; i++) {
		if (i && v[i].batch == v[i - 1].batch) {
			snprintf(err, errlen, "--model: %s and %s both have batch %u", v[i - 1].path,
				 v[i].path, v[i].batch);
			return -1;
		}
		batch[i] = v[i].batch;
	}
	struct sv_service *svc = calloc((size_t)n * streams, sizeof *svc);
	if (!svc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct sv_kernel *kern[SV_MAX_VARIANTS] = { NULL };
	unsigned nkern[SV_MAX_VARIANTS] = { 0 };
	int rc = 0;
	for (unsigned i = 0; i < n && !rc; i++) {
		struct om_model om;
		char e2[1024];
		if (om_read(v[i].path, &om, cfg->name, e2, sizeof e2)) {
			snprintf(err, errlen, "--model %s: %s", v[i].path, e2);
			rc = -1;
			break;
		}
		const struct om_model *p = program(&om, v[i].program);
		size_t hb = 1;
		for (unsigned k = 0; k < p->ninputs; k++)
			hb = p->inputs[k].size > hb ? p->inputs[k].size : hb;
		for (unsigned k = 0; k < p->noutputs; k++)
			hb = p->outputs[k].size > hb ? p->outputs[k].size : hb;
		void *host = calloc(1, hb);
		if (!host) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
		for (unsigned c = 1; c <= streams && !rc; c++) {
			struct sv_service *s = &svc[(size_t)i * streams + c - 1];
			if (run_conc(cfg, p, c, loops, host, s, c == 1 ? &kern[i] : NULL, &nkern[i], e2,
				     sizeof e2)) {
				snprintf(err, errlen, "--model %s, %u stream%s: %s", v[i].path, c,
					 c > 1 ? "s" : "", e2);
				rc = -1;
			} else if (progress) {
				fprintf(progress, "simserve: %s batch %u, %u in flight: copy in %.1f us, "
					"device %.1f us, copy out %.1f us\n", v[i].path, v[i].batch, c,
					s->h2d_us, s->device_us, s->d2h_us);
				fflush(progress);
			}
		}
		free(host);
		om_free(&om);
	}
	if (!rc)
		rc = sv_table_make(t, name, batch, n, streams, svc, err, errlen);
	for (unsigned i = 0; i < n && !rc; i++)
		if ((rc = sv_table_set_kernels(t, i, (unsigned)cfg->core_count, kern[i], nkern[i], err,
					       errlen)))
			sv_table_free(t);
	if (!rc) {
		t->loops = loops;
		t->pcie_latency_us = cfg->pcie_latency_us;
	}
	if (!rc && streams * n > 1 && (rc = characterise_after(v, n, cfg, streams, progress, t, err,
							       errlen)))
		sv_table_free(t);
	if (!rc && streams > 1 && (rc = characterise_pairs(v, n, cfg, progress, t, err, errlen)))
		sv_table_free(t);
	for (unsigned i = 0; i < n; i++)
		free(kern[i]);
	free(svc);
	return rc;
}
