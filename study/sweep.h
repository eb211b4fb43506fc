/* sweep.h: what-if studies: the cartesian product of SoC keys (and batch
 * sizes) over one model, each point run by st_point_run (point.h).
 *
 * A study lives in one directory:
 *   spec.txt        what the study is (sw_spec_write); every job reads it
 *   soc.ini         the base chip with the study's --set applied (soc_dump),
 *                   so the study does not depend on sim/soc changing later
 *   cache/          compiled models, one per distinct compile identity
 *   points/<k>/     result.csv (the point's row), point.txt (host, wall
 *                   clock, the spec's hash), trace/ (its trace directory)
 *   results.csv     every point's row, in point order (sw_merge)
 *   timing.csv      the wall-clock side: compile and simulate seconds per
 *                   point, where it ran, whether it compiled
 *   plots/          each metric against each varied key (sweep_plot.c)
 *   jobs.txt, sweep.sbatch   the scale-out forms (sw_emit_jobs)
 * Point k is the k-th of the product with the first varied key outermost
 * (the last one changes fastest), so the order is the command line's and
 * never depends on which job finished first.  results.csv holds only what
 * the simulation decides, so runs of one study on one host or on many give
 * the same bytes; wall-clock figures go to timing.csv. */
#ifndef DV_STUDY_SWEEP_H
#define DV_STUDY_SWEEP_H

#include <stdio.h>

#include "point.h"

#define SW_MAX_DIMS 16
#define SW_MAX_SETS 256

struct sw_dim {
	char *name;     /* "section.key", or "batch" */
	char **values;  /* as given on the command line */
	unsigned n;
};

struct sw_spec {
	char *dir;     /* the study directory, absolute */
	char *soc;     /* the base chip as given (provenance; points run dir/soc.ini) */
	char *model;   /* absolute */
	char *fusion;  /* absolute, or NULL */
	char *sets[SW_MAX_SETS]; /* the study's --set: baked into soc.ini */
	unsigned nsets;
	struct sw_dim dims[SW_MAX_DIMS];
	unsigned ndims;
	unsigned batch;          /* when no dim is "batch"; 0: the model's own */
	unsigned loop, streams;  /* 0: 2 and 1 */
	int full, retune, timeline;
	unsigned long long hash; /* of spec.txt and soc.ini, set by write and read:
				  * points/<k>/point.txt names it, so a point
				  * run for another spec is not merged */
};

/* Add "key=v1,v2,..." (or name "batch" with "1,8") as the next dimension. */
int sw_spec_add_dim(struct sw_spec *s, const char *name, const char *values, char *err,
		    size_t errlen);
/* Check the spec, make dir absolute, create it, write soc.ini (the base
 * chip with sets applied) and spec.txt. */
int sw_spec_write(struct sw_spec *s, char *err, size_t errlen);
/* Read dir/spec.txt (path is the file, or the study directory). */
int sw_spec_read(const char *path, struct sw_spec *s, char *err, size_t errlen);
void sw_spec_free(struct sw_spec *s);
unsigned sw_npoints(const struct sw_spec *s);

/* Point k as an st_point; its strings live in b. */
struct sw_point_buf {
	struct st_point p;
	const char *sets[SW_MAX_DIMS];
	char set[SW_MAX_DIMS][256];
	char soc[4096], cache[4096], trace[4200];
	unsigned value[SW_MAX_DIMS]; /* the value index of each dim */
};
int sw_point(const struct sw_spec *s, unsigned k, struct sw_point_buf *b, char *err,
	     size_t errlen);

/* Whether an earlier point of the study has point k's compile identity
 * (the study's answer to "compile reused", the same wherever it runs). */
int sw_compile_reused(const struct sw_spec *s, unsigned k);

/* Run point k and write dir/points/k/.  A failed point is a result (its
 * row says why): returns -1 only when nothing could be written.  quiet: no
 * progress line on stderr. */
int sw_run_point(const struct sw_spec *s, unsigned k, int quiet, char *err, size_t errlen);
/* Record point k as failed with why (a worker that crashed). */
int sw_fail_point(const struct sw_spec *s, unsigned k, const char *why, char *err, size_t errlen);

/* Run every point on this host with up to jobs worker processes (each
 * point in its own process, so a crash fails only that point), then merge;
 * *failed (if not NULL): the points that ran and failed.  Each finished
 * point prints "point 3 of 12 (#7) [...]": how many have finished, and its
 * number in results.csv. */
int sw_run_local(const struct sw_spec *s, unsigned jobs, unsigned *failed, char *err,
		 size_t errlen);

/* Assemble results.csv and timing.csv from dir/points/ and draw the plots.
 * Returns the number of points missing (or stale: run for another spec),
 * listed on log; -1 on error.  *failed (if not NULL): the points present
 * whose status is not ok. */
int sw_merge(const struct sw_spec *s, FILE *log, unsigned *failed, char *err, size_t errlen);

/* Write dir/jobs.txt (one command per point: `SELF --spec DIR/spec.txt
 * --point K`, for GNU parallel) and dir/sweep.sbatch (a Slurm array over
 * the points).  self is the simsweep to run, an absolute path. */
int sw_emit_jobs(const struct sw_spec *s, const char *self, char *err, size_t errlen);

/* The results.csv header (the columns depend on the varied keys). */
int sw_header(const struct sw_spec *s, char *buf, size_t len);

/* One row per point, parsed back from results.csv for the plots. */
struct sw_row {
	unsigned point;
	int ok;
	double metric[9]; /* SW_METRICS order */
	char bound[16];   /* the advisor's bound (results.csv's column) */
};
#define SW_NMETRICS 9
/* "first_latency_us", "warm_latency_us", "throughput_fps", "util_S" ... "util_V" */
extern const char *const sw_metric_names[SW_NMETRICS];

/* Draw each metric against each varied key into dir/plots, and the maps
 * of sweep_map.h (the bound per point; heat maps of two keys): NAME.dat,
 * NAME.gp, NAME.png and NAME.svg.  Returns 0, 1 when gnuplot is not on
 * PATH (data and scripts written; err says so), -1 on error. */
int sw_plot(const struct sw_spec *s, const struct sw_row *rows, unsigned nrows, char *err,
	    size_t errlen);

#endif
