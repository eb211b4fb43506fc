/* summary.h: the numbers a performance engineer reads first, computed once
 * from the log of a run (run_log.h) so the text summary, --json and summary.json agree.
 *
 *   first_latency  the first model execution: from its stream releasing its
 *                  first task to its last task's end (cold L2, and the task
 *                  scheduler's gap before every task included)
 *   warm_latency   the mean of the later executions (L2 as the previous one
 *                  left it); equals first_latency when there is only one
 *   throughput     images per second over the warm executions of every
 *                  stream: batch x executions / their span; with one
 *                  execution, over that one
 *   pipe_util      busy cycles of each pipe over (span x AI cores), in the
 *                  span of the executions counted for throughput
 *   top            the model's tasks by mean duration in those executions */
#ifndef DV_SUMMARY_H
#define DV_SUMMARY_H

#include "run_log.h"

#define TRC_TOP 10

struct trc_op_time {
	int model_task; /* index into the model's tasks */
	double mean_us; /* mean duration per execution */
	double share;   /* of the summed task time */
};

struct trc_summary {
	unsigned execs, warm_execs, streams, batch;
	double first_latency_us, warm_latency_us, throughput_fps;
	double span_us;            /* of the executions counted for throughput */
	double load_us;            /* weights host -> device */
	double h2d_us, d2h_us;     /* summed input and output copies */
	uint64_t h2d_bytes, d2h_bytes;
	double pipe_util[ISA_NPIPES];
	double roofline_efficiency; /* of the first execution */
	struct trc_op_time top[TRC_TOP];
	unsigned ntop;
};

/* Summarise the executions of model om in the log.  load_us is passed
 * through (the caller measured it); batch is the model's first input's
 * leading dimension. */
int trc_summarize(const struct soc_config *cfg, const struct om_model *om,
		  const struct trc_task *tasks, size_t ntasks,
		  const struct trc_exec *execs, size_t nexecs, double load_us,
		  struct trc_summary *s, char *err, size_t errlen);
/* The chip's peak cube rate, FLOP/s (every core's fractal per cycle). */
double trc_peak_flops(const struct soc_config *cfg);
/* Each task's roofline time in seconds: its FLOPs at the chip's peak cube
 * rate (int8's for a task with int8 weights) or its bytes at main-memory
 * bandwidth, whichever is longer. */
double trc_roofline_seconds(const struct soc_config *cfg, const struct om_task *t);

/* name in at most width characters for a column of a table: cut in the
 * middle ("/layer4/la...mple.0/Conv"), which keeps the end that tells apart
 * layers of one prefix; out has room for width + 1 bytes. */
const char *trc_shorten(char *out, size_t width, const char *name);

#endif
