/* bench.c: one benchmark run of a model (see bench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "inputs.h"

/* One seeded set, or NULL with err. */
static struct om_tensor *seeded(const struct om_model *m, uint64_t seed, int timing, char *err,
				size_t errlen)
{
	struct om_tensor *in = calloc(m->ninputs + 1, sizeof *in);
	if (!in) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (st_inputs_make(m, in, seed, timing, err, errlen)) {
		for (unsigned i = 0; i < m->ninputs; i++)
			om_tensor_free(&in[i]);
		free(in);
		return NULL;
	}
	return in;
}

enum st_bench_stage st_bench_run(const struct soc_config *cfg, const struct om_model *m,
				 const struct st_bench_opts *o, const struct om_tensor *inputs,
				 unsigned nsets, struct om_tensor *outputs, struct st_bench *b,
				 char *err, size_t errlen)
{
	memset(b, 0, sizeof *b);
	enum st_bench_stage st = ST_BENCH_SETUP;
	struct sim_options opt = o->sim;
	struct om_tensor *made = NULL, *out = outputs;
	if (!inputs) {
		if (!(made = seeded(m, o->seed, opt.mode == SIM_MODE_TIMING, err, errlen)))
			goto fail;
		inputs = made;
		nsets = 1;
	}
	if (!out && !(out = calloc((size_t)nsets * m->noutputs + 1, sizeof *out))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (o->spans) {
		if (trc_spans_init(&b->spans, (unsigned)cfg->core_count)) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		b->have_spans = 1;
		opt.on_span = trc_span_record;
		opt.span_ctx = &b->spans;
	}
	if (!(b->dev = rt_device_new(cfg, &opt, err, errlen)))
		goto fail;
	if (o->on_task)
		rt_device_on_task(b->dev, o->on_task, o->task_ctx);
	st = ST_BENCH_RUN;
	if (rt_session_run(b->dev, m, &o->session, inputs, nsets, out, &b->load_us, err, errlen))
		goto fail;
	b->tasks = rt_tasks(b->dev, &b->ntasks);
	b->execs = rt_execs(b->dev, &b->nexecs);
	st = ST_BENCH_SUMMARY;
	if (trc_summarize(cfg, m, b->tasks, b->ntasks, b->execs, b->nexecs, b->load_us, &b->sum,
			  err, errlen))
		goto fail;
	st = ST_BENCH_OK;
fail:
	if (out != outputs) { /* the session leaves them allocated only when it ran */
		int ran = st == ST_BENCH_OK || st == ST_BENCH_SUMMARY;
		for (size_t i = 0; ran && i < (size_t)nsets * m->noutputs; i++)
			om_tensor_free(&out[i]);
		free(out);
	}
	for (unsigned i = 0; made && i < m->ninputs; i++)
		om_tensor_free(&made[i]);
	free(made);
	if (st != ST_BENCH_OK)
		st_bench_free(b);
	return st;
}

int st_bench_trace(const struct st_bench *b, const struct soc_config *cfg,
		   const struct om_model *m, const char *dir, char *err, size_t errlen)
{
	struct trc_input ti = { cfg, m, b->tasks, b->ntasks, b->execs, b->nexecs,
				b->have_spans ? &b->spans : NULL, &b->sum };
	return trc_write(dir, &ti, err, errlen);
}

void st_bench_free(struct st_bench *b)
{
	rt_device_free(b->dev);
	trc_spans_free(&b->spans);
	memset(b, 0, sizeof *b);
}
