/* summary.c: first/warm latency, throughput, pipe utilisation and the top
 * ops of a run, from the runtime's log (see summary.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

double trc_peak_flops(const struct soc_config *cfg)
{
	return (double)cfg->core_count * (double)(cfg->cube_m * cfg->cube_k * cfg->cube_n) * 2.0 *
	       cfg->core_freq_mhz * 1e6;
}

/* An int8 cube task (int8 FRACTAL_Z or FRACTAL_NZ weights) runs 16x32x16
 * steps: twice the fp16 rate (ascend.md 1.2). */
static int int8_cube(const struct om_task *t)
{
	for (uint32_t i = 0; i < t->ninputs; i++)
		if (t->inputs[i].dtype == 3 && /* INT8 */
		    (t->inputs[i].format == 4 || t->inputs[i].format == 29))
			return 1;
	return 0;
}

double trc_roofline_seconds(const struct soc_config *cfg, const struct om_task *t)
{
	double r = (double)t->flops / (trc_peak_flops(cfg) * (int8_cube(t) ? 2.0 : 1.0));
	double b = (double)t->bytes / (cfg->hbm_bandwidth_gbps * 1e9);
	return r > b ? r : b;
}

static int by_time(const void *a, const void *b)
{
	const struct trc_op_time *x = a, *y = b;
	if (x->mean_us != y->mean_us)
		return x->mean_us < y->mean_us ? 1 : -1;
	return x->model_task - y->model_task; /* deterministic order */
}

int trc_summarize(const struct soc_config *cfg, const struct om_model *om,
		  const struct trc_task *tasks, size_t ntasks,
		  const struct trc_exec *execs, size_t nexecs, double load_us,
		  struct trc_summary *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	double mhz = cfg->core_freq_mhz;
	s->load_us = load_us;
	s->batch = om->ninputs && om->inputs[0].rank ? (unsigned)om->inputs[0].dims[0] : 1;
	/* The first execution of the model, and which count as warm: every
	 * execution but the first of its stream, unless no stream ran twice. */
	int first = -1;
	char *warm = calloc(nexecs + 1, 1);
	double *op_us = calloc(om->ntasks + 1, sizeof *op_us);
	if (!warm || !op_us) {
		free(warm);
		free(op_us);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nexecs; i++) {
		if (execs[i].model != om)
			continue;
		if (first < 0)
			first = (int)i;
		s->execs++;
		size_t j = 0;
		while (j < i && !(execs[j].model == om && execs[j].stream_id == execs[i].stream_id))
			j++;
		if (j < i)
			warm[i] = 1;
		else
			s->streams++;
	}
	if (first < 0) {
		free(warm);
		free(op_us);
		snprintf(err, errlen, "model '%s' was not executed", om->name);
		return -1;
	}
	int any_warm = 0;
	for (size_t i = 0; i < nexecs; i++)
		any_warm |= warm[i];
	if (!any_warm)
		for (size_t i = 0; i < nexecs; i++)
			warm[i] = execs[i].model == om;
	uint64_t lo = UINT64_MAX, hi = 0;
	double warm_sum = 0;
	for (size_t i = 0; i < nexecs; i++) {
		if (!warm[i])
			continue;
		s->warm_execs++;
		warm_sum += (double)(execs[i].end - execs[i].start);
		if (execs[i].start < lo)
			lo = execs[i].start;
		if (execs[i].end > hi)
			hi = execs[i].end;
	}
	s->first_latency_us = (double)(execs[first].end - execs[first].start) / mhz;
	s->warm_latency_us = warm_sum / s->warm_execs / mhz;
	s->span_us = (double)(hi - lo) / mhz;
	s->throughput_fps = s->span_us > 0 ? (double)s->batch * s->warm_execs / (s->span_us * 1e-6)
					   : 0;
	uint64_t busy[ISA_NPIPES] = { 0 };
	double task_sum = 0;
	for (size_t i = 0; i < ntasks; i++) {
		const struct trc_task *t = &tasks[i];
		if (t->kind == TRC_TASK_MEMCPY) {
			double us = (double)(t->end - t->start) / mhz;
			if (!strcmp(t->op_type, TRC_MODEL_LOAD_TYPE))
				continue;
			if (t->dir == SIM_COPY_H2D) {
				s->h2d_us += us;
				s->h2d_bytes += t->bytes;
			} else if (t->dir == SIM_COPY_D2H) {
				s->d2h_us += us;
				s->d2h_bytes += t->bytes;
			}
			continue;
		}
		if (t->model != om || t->exec_id < 0 || !warm[t->exec_id] || t->model_task < 0)
			continue;
		for (int p = 0; p < ISA_NPIPES; p++)
			busy[p] += t->st.busy_cycles[p];
		double us = (double)(t->end - t->start) / mhz;
		op_us[t->model_task] += us;
		task_sum += us;
	}
	for (int p = 0; p < ISA_NPIPES; p++)
		s->pipe_util[p] = hi > lo ? (double)busy[p] / ((double)(hi - lo) *
							      (double)cfg->core_count)
					  : 0;
	struct trc_op_time *all = calloc(om->ntasks + 1, sizeof *all);
	if (!all) {
		free(warm);
		free(op_us);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < om->ntasks; i++) {
		all[i].model_task = (int)i;
		all[i].mean_us = op_us[i] / s->warm_execs;
		all[i].share = task_sum > 0 ? op_us[i] / task_sum : 0;
	}
	qsort(all, om->ntasks, sizeof *all, by_time);
	s->ntop = om->ntasks < TRC_TOP ? om->ntasks : TRC_TOP;
	memcpy(s->top, all, s->ntop * sizeof *all);
	free(all);
	double roof = 0;
	for (unsigned i = 0; i < om->ntasks; i++)
		roof += trc_roofline_seconds(cfg, &om->tasks[i]);
	double first_s = s->first_latency_us * 1e-6;
	s->roofline_efficiency = first_s > 0 ? roof / first_s : 0;
	free(warm);
	free(op_us);
	return 0;
}

const char *trc_shorten(char *out, size_t width, const char *name)
{
	size_t n = strlen(name);
	if (n <= width || width < 8) {
		snprintf(out, width + 1, "%s", name);
		return out;
	}
	size_t head = (width - 3) / 2, tail = width - 3 - head;
	memcpy(out, name, head);
	memcpy(out + head, "...", 3);
	memcpy(out + head + 3, name + n - tail, tail);
	out[width] = 0;
	return out;
}
