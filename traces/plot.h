/* plot.h: charts of a trace directory (docs/plots.md), drawn by gnuplot.
 *
 * Only the trace files are read (summary.json, op_summary.csv,
 * timeline.json), so a trace written elsewhere plots the same.  For each
 * chart a data file (NAME.dat, whitespace-separated, with a header comment)
 * and a gnuplot script (NAME.gp) are written side by side; the script reads
 * its data by a path relative to its own directory and draws both NAME.png
 * (pngcairo) and NAME.svg, so `cd DIR && gnuplot NAME.gp` redraws a
 * restyled chart.  The charts:
 *   timeline      Gantt: pipe busy spans per AI core (or, for many busy
 *                 cores, per pipe: the fraction of cores busy over time),
 *                 and a row of tasks per stream with the longest labelled
 *   op_breakdown  the top ops by mean duration: their duration, and each
 *                 pipe's busy time beside it (pipes overlap, so not stacked)
 *   roofline      the ops at their arithmetic intensity and achieved
 *                 FLOP/s, under the main-memory and L2 roofs */
#ifndef DV_PLOT_H
#define DV_PLOT_H

#include <stddef.h>

/* How the Gantt lays out the AI cores. */
enum trc_gantt_rows {
	TRC_GANTT_AUTO,  /* per core when at most max_core_rows cores were busy */
	TRC_GANTT_CORES, /* a row per (busy core, pipe) */
	TRC_GANTT_PIPES  /* a row per pipe: fraction of all cores busy over time */
};

struct trc_plot_opts {
	unsigned top_n;        /* ops charted, tasks and points labelled; 0: 10 */
	enum trc_gantt_rows rows;
	unsigned max_core_rows; /* for TRC_GANTT_AUTO; 0: 8 */
};

/* Plot the trace directory trace_dir into out_dir (NULL: trace_dir/plots;
 * created if missing) with the default options but top_n.  Returns 0 when
 * every chart was drawn; 1 when gnuplot is not on PATH (the data files and
 * scripts are written, and err says where); -1 on error, with err naming
 * the file (and line) that is missing or malformed, or the script gnuplot
 * failed on. */
int trc_plot(const char *trace_dir, const char *out_dir, unsigned top_n, char *err,
	     size_t errlen);
/* The same with every option; opts NULL means the defaults. */
int trc_plot_with(const char *trace_dir, const char *out_dir, const struct trc_plot_opts *opts,
		  char *err, size_t errlen);

#endif
