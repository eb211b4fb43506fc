/* plot_int.h: what the files of trc_plot share, inside traces/ only: the
 * trace as plot.c reads it, plot.c's output helpers, and the charts drawn
 * in files of their own (plot_timeline.c, plot_roofline.c). */
#ifndef DV_PLOT_INT_H
#define DV_PLOT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "plot.h"

#define MAX_PIPES 16	   /* an AI core's threads (pipes) charted, by tid */
#define OP_PIPES 6	   /* op_summary.csv's pipe columns */
#define LABEL_CHAR_PX 6.4  /* a label character's width at font size 8 in the PNG, at most */
#define PL_NCOLORS 8

/* one colour per pipe (by tid), the same in every chart */
extern const char *const pl_pipe_color[PL_NCOLORS];

struct span {
	double s, e; /* µs */
	unsigned core, pipe;
};

struct task {
	char name[128];
	double s, e;
	unsigned stream;
	int copy; /* a memcpy task, else a kernel */
	int load; /* the weights' load: before the run proper, so outside the Gantt's window */
};

/* One op name's AI_CORE rows of op_summary.csv, summed. */
struct op {
	char name[256];
	unsigned rows;
	double dur, pipe[OP_PIPES], cube, vec, mem, gm;
};

struct trace {
	const char *dir;
	/* summary.json */
	double peak_tflops, hbm_gbps, l2_gbps;
	unsigned cores;
	char soc[64], model[128];
	/* timeline.json */
	struct span *spans;
	size_t nspans, capspans;
	struct task *tasks;
	size_t ntasks, captasks;
	char pipe_name[MAX_PIPES][32];
	/* op_summary.csv */
	struct op *ops;
	size_t nops;
};

/* ---- output helpers (plot.c) ---- */

/* A gnuplot single-quoted string. */
void pl_gp_str(FILE *f, const char *s);
/* A string field of a data file, at most max characters (a long name
 * keeps its tail, where op names say what they are). */
void pl_dat_str(FILE *f, const char *s, size_t max);
/* How many characters of s pl_dat_str(s, max) shows. */
size_t pl_text_chars(const char *s, size_t max);
/* A comment line's text. */
void pl_comment_str(FILE *f, const char *s);
/* dir/name opened for writing, or NULL with err; closed, -1 with err on a
 * write error. */
FILE *pl_open_out(const char *dir, const char *name, char *err, size_t errlen);
int pl_close_out(FILE *f, const char *dir, const char *name, char *err, size_t errlen);
/* What every script starts with; the PNG's terminal (W and H size both
 * images); the SVG from the plot command just written; a chart with
 * nothing to show. */
void pl_gp_begin(FILE *f, const struct trace *t, const char *base, const char *what);
void pl_gp_png(FILE *f, const char *base, unsigned w, unsigned h);
void pl_gp_svg(FILE *f, const char *base);
void pl_gp_nothing(FILE *f, const char *why);
/* "MODEL on SOC", for titles. */
void pl_title_prefix(char *b, size_t n, const struct trace *t);
/* The ops by mean duration, longest first (malloc'd), or NULL. */
const struct op **pl_ops_by_mean(const struct trace *t);

/* ---- the charts: NAME.dat and NAME.gp into out; 0, or -1 with err ---- */

int pl_chart_timeline(const char *out, const struct trace *t, const struct trc_plot_opts *o,
		      unsigned top_n, char *err, size_t errlen);
int pl_chart_roofline(const char *out, const struct trace *t, unsigned top_n, char *err,
		      size_t errlen);

#endif
