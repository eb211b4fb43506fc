/* trace.h: msprof-style traces of a model run.
 *
 * trc_spans collects, while the device runs, every pipe's busy intervals
 * (instruction spans merged when they touch); trc_write turns a run into
 * the trace directory msprof users know:
 *   op_summary.csv  one row per task: times, block dim, the input and output
 *                   shapes, data types and formats, cycles, per-pipe busy
 *                   time and ratios, FLOPs
 *   task_time.csv   kernel_name, task_id, stream_id, task_time/start/stop
 *   timeline.json   Chrome trace events (opens in Perfetto): a process per
 *                   AI core with a thread per pipe, one for the streams
 *                   (a thread per stream) and one for host <-> device copies
 *   summary.json    latency, throughput, per-pipe utilization, top ops */
#ifndef DV_TRACE_H
#define DV_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "run_log.h"

struct trc_span {
	uint64_t start, end; /* device cycles */
	uint16_t core, pipe;
};

struct trc_spans {
	struct trc_span *v;
	size_t n, cap;
	size_t *last; /* per core*pipe lane: index of its latest span + 1, or 0 */
	unsigned cores;
	int oom;
};

int trc_spans_init(struct trc_spans *s, unsigned cores);
void trc_spans_free(struct trc_spans *s);
/* The sim_options.on_span callback (ctx is the struct trc_spans). */
void trc_span_record(void *ctx, unsigned core, unsigned pipe, uint64_t start, uint64_t end);

struct trc_summary;

/* What a trace directory describes: the log of a run of model om
 * (tasks of other models are written without tensor columns), the pipe
 * spans collected meanwhile, and the run's summary. */
struct trc_input {
	const struct soc_config *cfg;
	const struct om_model *om;
	const struct trc_task *tasks;
	size_t ntasks;
	const struct trc_exec *execs;
	size_t nexecs;
	const struct trc_spans *spans;
	const struct trc_summary *sum;
};

/* Write the trace directory (created if missing).  Returns 0 or -1. */
int trc_write(const char *dir, const struct trc_input *in, char *err, size_t errlen);

#endif
