/* advisor.h: the bottleneck advisor.  It reads a trace directory (the files
 * only: op_summary.csv, task_time.csv, summary.json; so a trace made
 * elsewhere works too), classifies every op and the whole run, and says why
 * (the ratios and thresholds behind each verdict) and what to do about it.
 *
 * Bounds:
 *   cube         the cube pipe is the busiest and near its peak
 *   vector       the vector pipe is
 *   memory       MTE2/MTE3 traffic at main-memory (or L2) bandwidth dominates
 *   launch       task gaps and tiny tasks dominate the elapsed time
 *   sync         pipes sit blocked in wait_flag (serialised on flags)
 *   parallelism  block_dim below the AI core count leaves cores idle
 *
 * An op gets the first bound whose rule holds, in the order launch, memory
 * (at a bandwidth roof), parallelism, sync, then its busiest pipe (cube,
 * vector or memory); the run is launch-bound when dispatch gaps and
 * launch-bound ops take LAUNCH_SHARE of its time, else it gets the bound
 * holding the most time.  docs/advisor.md has the rules and thresholds. */
#ifndef DV_ADVISOR_H
#define DV_ADVISOR_H

#include <stdio.h>

/* memory: main memory's (or the L2's) bandwidth is reached; dma: the DMA
 * pipes are the busiest while the bandwidth is not, so the cores' transfer
 * engines, not the memory, set the pace. */
enum adv_bound { ADV_CUBE, ADV_VECTOR, ADV_MEMORY, ADV_LAUNCH, ADV_SYNC, ADV_PARALLELISM,
		 ADV_DMA, ADV_NBOUNDS };

/* "cube", "vector", "memory", "launch", "sync", "parallelism", "dma" */
const char *adv_bound_name(enum adv_bound b);

struct adv_report;

/* Analyse the trace directory dir.  Returns 0, or -1 with err naming the
 * file (and line) that is missing or malformed. */
int adv_analyze(const char *dir, struct adv_report **out, char *err, size_t errlen);
/* The same for a trace that may lack summary.json (msprof writes op_summary
 * and task_time files but none): chip, when not NULL, gives the roofs then.
 * The files may be in simrun's layout or msprof's (trace_read.h trc_find). */
struct soc_config;
int adv_analyze_chip(const char *dir, const struct soc_config *chip, struct adv_report **out,
		     char *err, size_t errlen);
/* The whole run's bound. */
enum adv_bound adv_verdict(const struct adv_report *r);
/* The text report, and the JSON one: {"verdict", "evidence", "recommendations",
 * "ops": [{"name", "bound", "duration_us", ...}], ...}. */
void adv_print_text(FILE *f, const struct adv_report *r);
void adv_print_json(FILE *f, const struct adv_report *r);
void adv_free(struct adv_report *r);

/* How many ops the reports list, largest time first (default 10; 0: all). */
void adv_set_top(struct adv_report *r, unsigned top);

/* One op of the report: the ops are the analysed executions' tasks grouped
 * by name and type, sorted by time, largest first. */
struct adv_op_info {
	const char *name, *type;
	enum adv_bound bound;
	double duration_us; /* mean per execution */
	double share;       /* of the analysed task time */
	unsigned count;     /* tasks grouped */
	unsigned block_dim;
	const char *reason; /* the numbers and the rule behind bound */
};
size_t adv_op_count(const struct adv_report *r);
/* 0, or -1 when i is out of range. */
int adv_op_get(const struct adv_report *r, size_t i, struct adv_op_info *out);
/* The share of the analysed elapsed time that the bound holds. */
double adv_bound_share(const struct adv_report *r, enum adv_bound b);

/* The rules' thresholds as a Markdown table (name, value, rule, source):
 * docs/advisor.md carries this output verbatim (tests/advisor.sh checks). */
void adv_print_thresholds(FILE *f);

#endif
