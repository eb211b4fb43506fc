/* bench.h: one benchmark run of a model, as every tool runs it.
 *
 * simrun, simsweep's points and simprof's re-simulations (study/point.c)
 * all come here: the seeded inputs (inputs.h) unless the caller reads its
 * own, a device, the session (rt_session_run: loads, executions over loops
 * and streams, copies), the summary (trc_summarize) and, on request, the
 * trace directory.  One model and one configuration therefore give the
 * same cycles in every tool. */
#ifndef DV_STUDY_BENCH_H
#define DV_STUDY_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "runtime.h"
#include "summary.h"
#include "tensor_io.h"
#include "trace.h"

struct st_bench_opts {
	struct sim_options sim;    /* mode, max_cycles, --trace-insns; on_span is the
				    * runner's when spans is set */
	struct rt_session session; /* loops, streams, per-set inputs, timing_warm */
	uint64_t seed;             /* of the seeded inputs (without inputs) */
	int spans;                 /* record every pipe's busy spans (the trace's
				    * timeline; ~10 MB for ResNet-50) */
	void (*on_task)(void *ctx, const struct trc_task *r); /* progress, or NULL */
	void *task_ctx;
};

/* What a run leaves: the device (its log: tasks and executions), the
 * summary and the spans. */
struct st_bench {
	struct rt_device *dev;
	const struct trc_task *tasks;
	size_t ntasks;
	const struct trc_exec *execs;
	size_t nexecs;
	double load_us;
	struct trc_summary sum;
	struct trc_spans spans;
	int have_spans;
};

/* Where a run failed: making the inputs or the device, the session (the
 * model's own error), or the summary. */
enum st_bench_stage { ST_BENCH_OK, ST_BENCH_SETUP, ST_BENCH_RUN, ST_BENCH_SUMMARY };

/* Run model m on cfg.  inputs: nsets sets of m->ninputs tensors (as
 * rt_session_run takes them), or NULL for one seeded set (st_inputs_make
 * with o->seed, float inputs zero in timing mode).  outputs: room for the
 * outputs (as rt_session_run fills them), or NULL to drop them.  Returns
 * ST_BENCH_OK with *b filled (st_bench_free it), or the failed stage with
 * err (and *b freed). */
enum st_bench_stage st_bench_run(const struct soc_config *cfg, const struct om_model *m,
				 const struct st_bench_opts *o, const struct om_tensor *inputs,
				 unsigned nsets, struct om_tensor *outputs, struct st_bench *b,
				 char *err, size_t errlen);
/* Write the run's trace directory (with the busy spans when recorded).
 * 0, or -1 with err. */
int st_bench_trace(const struct st_bench *b, const struct soc_config *cfg,
		   const struct om_model *m, const char *dir, char *err, size_t errlen);
void st_bench_free(struct st_bench *b);

#endif
