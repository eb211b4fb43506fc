/* plot_timeline.c: trc_plot's Gantt chart (docs/plots.md "timeline"): the
 * pipes' busy spans per AI core (or the fraction of cores per pipe), the
 * streams' tasks, and the top ops' labels, placed so that none collide. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"

#define DEFAULT_CORE_ROWS 8
#define GANTT_WIDTH 1600   /* px of timeline.png */
#define GANTT_PLOT_PX 1440 /* its plot area (margins fixed in the script): a pixel of time */
#define LABEL_LEVELS 8	   /* most label rows above the streams */
#define LABEL_MAX 60	   /* characters of a label (longer names keep their tail) */
#define LABEL_DOT_PX 4.0   /* from a timeline label's dot to its text */

static int by_lane(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->pipe != y->pipe)
		return x->pipe < y->pipe ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int by_start(const void *a, const void *b)
{
	const struct task *x = *(const struct task *const *)a, *y = *(const struct task *const *)b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* longest first; of equals, the earliest */
static int by_duration_start(const void *a, const void *b)
{
	const struct task *x = *(const struct task *const *)a, *y = *(const struct task *const *)b;
	double dx = x->e - x->s, dy = y->e - y->s;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int by_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* A block of the data file (gnuplot's `index`) and how the script plots it. */
enum blk { BLK_PIPE, BLK_KERNELS, BLK_COPIES, BLK_LABELS };

struct gantt {
	int empty;		     /* nothing to draw */
	double t0, t1, margin, px;   /* the window, the x range's margin, a pixel (µs) */
	int per_core;		     /* rows per (core, pipe), else per pipe */
	unsigned nrows, nstreams, npipes, nbusy;
	unsigned *streams;	     /* the stream ids, sorted */
	int pipe_row[MAX_PIPES];     /* position among the used pipes, or -1 */
	int *core_row;		     /* per core: position among the busy cores, or -1 */
	struct span *v;		     /* the spans in the window, by lane */
	size_t nv;
	const struct task **tasks;   /* the tasks in the window */
	size_t ntasks;
	double row_px, level_dy;     /* a row's height; a label row's, in rows */
	int nlevels;		     /* label rows used */
	enum blk blk[MAX_PIPES + 3]; /* the blocks written, in order */
	unsigned blk_pipe[MAX_PIPES + 3];
	unsigned nblk;
};

/* y of a row counted from the top (the streams first), so row 0 is drawn
 * highest. */
static double gantt_y(const struct gantt *g, unsigned row)
{
	return (double)(g->nrows - 1 - row);
}

static unsigned stream_row(const struct gantt *g, unsigned stream)
{
	unsigned lo = 0, hi = g->nstreams;
	while (lo + 1 < hi) {
		unsigned mid = (lo + hi) / 2;
		if (g->streams[mid] <= stream)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static unsigned lane_row(const struct gantt *g, unsigned core, unsigned pipe)
{
	unsigned p = (unsigned)g->pipe_row[pipe];
	return g->nstreams + (g->per_core ? (unsigned)g->core_row[core] * g->npipes + p : p);
}

/* A box of the chart: times from the window's start. */
static void box(FILE *f, const struct gantt *g, double s, double e, double ylo, double yhi)
{
	fprintf(f, "%.4f %.4f %.3f %.3f\n", s - g->t0, e - g->t0, ylo, yhi);
}

/* The window, the rows, and the spans and tasks in them.  -1 when out of
 * memory. */
static int gantt_layout(struct gantt *g, const struct trace *t, const struct trc_plot_opts *o)
{
	/* The window: the tasks but the weights' load (a one-off that would
	 * squash the rest to a sliver), else the spans. */
	g->t0 = INFINITY;
	g->t1 = -INFINITY;
	for (size_t i = 0; i < t->ntasks; i++)
		if (!t->tasks[i].load) {
			g->t0 = fmin(g->t0, t->tasks[i].s);
			g->t1 = fmax(g->t1, t->tasks[i].e);
		}
	if (g->t0 > g->t1)
		for (size_t i = 0; i < t->nspans; i++) {
			g->t0 = fmin(g->t0, t->spans[i].s);
			g->t1 = fmax(g->t1, t->spans[i].e);
		}
	g->empty = g->t0 > g->t1;
	if (g->empty)
		g->t0 = g->t1 = 0;
	if (g->t1 - g->t0 < 1e-3)
		g->t1 = g->t0 + 1e-3;
	g->margin = (g->t1 - g->t0) * 0.01;
	g->px = (g->t1 - g->t0 + 2 * g->margin) / GANTT_PLOT_PX;

	g->core_row = malloc(t->cores * sizeof *g->core_row);
	g->streams = malloc((t->ntasks + 1) * sizeof *g->streams);
	g->v = malloc((t->nspans + 1) * sizeof *g->v);
	g->tasks = malloc((t->ntasks + 1) * sizeof *g->tasks);
	if (!g->core_row || !g->streams || !g->v || !g->tasks)
		return -1;
	/* which cores and pipes were busy in the window */
	for (size_t i = 0; !g->empty && i < t->nspans; i++)
		if (t->spans[i].e > g->t0 && t->spans[i].s < g->t1)
			g->v[g->nv++] = t->spans[i];
	qsort(g->v, g->nv, sizeof *g->v, by_lane);
	for (unsigned c = 0; c < t->cores; c++)
		g->core_row[c] = -1;
	for (unsigned p = 0; p < MAX_PIPES; p++)
		g->pipe_row[p] = -1;
	for (size_t i = 0; i < g->nv; i++) {
		g->core_row[g->v[i].core] = 0;
		g->pipe_row[g->v[i].pipe] = 0;
	}
	for (unsigned c = 0; c < t->cores; c++)
		if (!g->core_row[c])
			g->core_row[c] = (int)g->nbusy++;
	for (unsigned p = 0; p < MAX_PIPES; p++)
		if (!g->pipe_row[p])
			g->pipe_row[p] = (int)g->npipes++;
	unsigned max_rows = o->max_core_rows ? o->max_core_rows : DEFAULT_CORE_ROWS;
	g->per_core = o->rows == TRC_GANTT_CORES ||
		      (o->rows == TRC_GANTT_AUTO && g->nbusy <= max_rows);
	/* the streams with tasks in the window */
	for (size_t i = 0; !g->empty && i < t->ntasks; i++)
		if (!t->tasks[i].load && t->tasks[i].e >= g->t0 && t->tasks[i].s <= g->t1) {
			g->tasks[g->ntasks++] = &t->tasks[i];
			g->streams[g->nstreams++] = t->tasks[i].stream;
		}
	qsort(g->streams, g->nstreams, sizeof *g->streams, by_uint);
	unsigned ns = 0;
	for (unsigned i = 0; i < g->nstreams; i++)
		if (!i || g->streams[i] != g->streams[i - 1])
			g->streams[ns++] = g->streams[i];
	g->nstreams = ns;
	g->nrows = g->nstreams + (g->per_core ? g->nbusy * g->npipes : g->npipes);
	/* rows are taller per pipe, where their boxes' heights are fractions */
	g->row_px = g->per_core ? 18 : 44;
	g->level_dy = 15 / g->row_px;
	return 0;
}

/* The busy spans of one pipe: per core, merged where closer than a pixel
 * (what the PNG would show anyway, and it bounds the SVG's size); or the
 * fraction of all cores busy in pixel-wide bins. */
static void gantt_pipe_block(FILE *f, const struct trace *t, const struct gantt *g,
			     const struct span *v, size_t n, double *bins, unsigned nbins)
{
	if (g->per_core) {
		size_t i = 0;
		while (i < n) {
			double s = fmax(v[i].s, g->t0), e = fmin(v[i].e, g->t1);
			unsigned core = v[i].core;
			for (i++; i < n && v[i].core == core && v[i].s - e < g->px; i++)
				e = fmax(e, fmin(v[i].e, g->t1));
			double y = gantt_y(g, lane_row(g, core, v[0].pipe));
			box(f, g, s, e, y - 0.4, y + 0.4);
		}
		return;
	}
	double bw = (g->t1 - g->t0) / nbins;
	memset(bins, 0, nbins * sizeof *bins);
	for (size_t i = 0; i < n; i++) {
		double s = fmax(v[i].s, g->t0), e = fmin(v[i].e, g->t1);
		unsigned b0 = (unsigned)fmin((s - g->t0) / bw, nbins - 1);
		unsigned b1 = (unsigned)fmin((e - g->t0) / bw, nbins - 1);
		for (unsigned b = b0; b <= b1; b++) {
			double lo = g->t0 + b * bw, hi = lo + bw;
			bins[b] += fmax(0, fmin(e, hi) - fmax(s, lo));
		}
	}
	double y = gantt_y(g, lane_row(g, 0, v[0].pipe));
	for (unsigned b = 0; b < nbins;) {
		double frac = fmin(1, bins[b] / (bw * t->cores));
		unsigned e = b + 1;
		/* runs of one level (cores all busy, say) are one box */
		while (e < nbins && fabs(fmin(1, bins[e] / (bw * t->cores)) - frac) < 1e-6)
			e++;
		if (frac > 1e-6)
			box(f, g, g->t0 + b * bw, g->t0 + e * bw, y - 0.4, y - 0.4 + 0.8 * frac);
		b = e;
	}
}

static void block_head(FILE *f, struct gantt *g, enum blk kind, unsigned pipe, const char *what)
{
	fprintf(f, "%s# index %u: %s\n", g->nblk ? "\n\n" : "", g->nblk, what);
	g->blk_pipe[g->nblk] = pipe;
	g->blk[g->nblk++] = kind;
}

/* Labels, in plot pixels: a label's box, and the dot its leader line drops
 * from (the leader runs straight down from the label's row to the task). */
struct glabel {
	const struct task *k;
	int level;	    /* label row, 0 just above the streams */
	double dot, x0, x1; /* px: the leader's x, the text's extent */
};

/* Whether a label of this level and extent, with its leader at dot, keeps
 * clear of the labels placed: no two texts in one row touch, no leader
 * crosses a text (a leader passes the rows below its own label). */
static int label_clear(const struct glabel *placed, size_t n, int level, double dot, double x0,
		       double x1)
{
	const double gap = 6, lgap = 3; /* px between texts; between a text and a leader */
	for (size_t i = 0; i < n; i++) {
		const struct glabel *p = &placed[i];
		if (p->level == level && x0 < p->x1 + gap && p->x0 < x1 + gap)
			return 0;
		if (p->level < level && dot > p->x0 - lgap && dot < p->x1 + lgap)
			return 0; /* the new leader through p's text */
		if (p->level > level && p->dot > x0 - lgap && p->dot < x1 + lgap)
			return 0; /* p's leader through the new text */
	}
	return 1;
}

static int by_label_start(const void *a, const void *b)
{
	const struct glabel *x = a, *y = b;
	return x->k->s < y->k->s ? -1 : x->k->s > y->k->s;
}

static int by_label_start_desc(const void *a, const void *b)
{
	return by_label_start(b, a);
}

/* Labels: the top_n ops by their longest task, each op labelled once (at
 * that task; the earliest of equals), in rows above the streams.  From
 * the right, each label takes the lowest row right of its dot, or else the
 * lowest left of it, where label_clear holds: clustered labels climb a
 * staircase to the left, whose leaders pass beside the texts below.  A label with no
 * such place is dropped (the data file says which), so no two labels
 * collide and no leader line crosses a label.  Text widths are estimated
 * from the font. */
static void gantt_labels(FILE *f, struct gantt *g, unsigned top_n)
{
	qsort(g->tasks, g->ntasks, sizeof *g->tasks, by_duration_start);
	struct glabel *lab = malloc((top_n + 1) * sizeof *lab);
	const struct task **dropped = malloc((top_n + 1) * sizeof *dropped);
	size_t nl = 0, nd = 0, ncand = 0;
	double x_lo = g->t0 - g->margin;
	/* the candidates, in lab[] for now */
	for (size_t i = 0; lab && dropped && i < g->ntasks && ncand < top_n; i++) {
		const struct task *k = g->tasks[i];
		size_t j = 0;
		while (j < i && strcmp(g->tasks[j]->name, k->name))
			j++;
		if (j == i) /* else this op has its label, at a longer task */
			lab[ncand++] = (struct glabel){ k, 0, (k->s - x_lo) / g->px, 0, 0 };
	}
	if (lab)
		qsort(lab, ncand, sizeof *lab, by_label_start_desc);
	for (size_t i = 0; i < ncand; i++) {
		struct glabel c = lab[i];
		char text[200];
		snprintf(text, sizeof text, "%s (%.1f µs)", c.k->name, c.k->e - c.k->s);
		double w = LABEL_CHAR_PX * (double)pl_text_chars(text, LABEL_MAX);
		int done = 0;
		for (int left = 0; left < 2 && !done; left++)
			for (int l = 0; l < LABEL_LEVELS && !done; l++) {
				double x0 = left ? c.dot - LABEL_DOT_PX - w : c.dot + LABEL_DOT_PX;
				if (x0 < 0 || x0 + w > GANTT_PLOT_PX ||
				    !label_clear(lab, nl, l, c.dot, x0, x0 + w))
					continue;
				lab[nl++] = (struct glabel){ c.k, l, c.dot, x0, x0 + w };
				done = 1;
				g->nlevels = l >= g->nlevels ? l + 1 : g->nlevels;
			}
		if (!done)
			dropped[nd++] = c.k;
	}
	if (nl) {
		qsort(lab, nl, sizeof *lab, by_label_start);
		char what[96];
		snprintf(what, sizeof what, "the %zu longest ops' labels, at their longest task", nl);
		block_head(f, g, BLK_LABELS, 0, what);
		if (nd) {
			fprintf(f, "# not labelled (no room clear of the other labels):");
			for (size_t i = 0; i < nd; i++) {
				fputc(' ', f);
				pl_comment_str(f, dropped[i]->name);
			}
			fputc('\n', f);
		}
		fprintf(f, "# start_us y_label y_task x_text \"name (duration)\"\n");
	}
	for (size_t i = 0; i < nl; i++) {
		const struct task *k = lab[i].k;
		char text[200];
		snprintf(text, sizeof text, "%s (%.1f µs)", k->name, k->e - k->s);
		fprintf(f, "%.4f %.3f %.3f %.4f ", k->s - g->t0,
			g->nrows - 0.2 + lab[i].level * g->level_dy,
			gantt_y(g, stream_row(g, k->stream)) + 0.4,
			x_lo + lab[i].x0 * g->px - g->t0);
		pl_dat_str(f, text, LABEL_MAX);
		fputc('\n', f);
	}
	free(lab);
	free(dropped);
}

static void gantt_write_dat(FILE *f, const struct trace *t, struct gantt *g, unsigned top_n)
{
	fprintf(f, "# timeline.dat: the Gantt chart's boxes, from timeline.json of ");
	pl_comment_str(f, t->dir);
	fprintf(f, "\n# time in µs since the start of the traced execution (its first task "
		   "but the weights' load);\n# y is the row (timeline.gp's ytics name them)\n");
	if (g->empty)
		return;
	fprintf(f, "# window %.3f .. %.3f µs of device time (as in op_summary.csv): every task "
		   "but the weights' load\n", g->t0, g->t1);
	if (g->per_core)
		fprintf(f, "# pipe blocks: busy spans per AI core, merged where less than %.4f µs "
			   "(one pixel) apart\n", g->px);
	else
		fprintf(f, "# pipe blocks: per %.4f µs bin, box height = the fraction of all %u AI "
			   "cores that kept the pipe busy\n", (g->t1 - g->t0) / GANTT_PLOT_PX,
			t->cores);
	fprintf(f, "# blocks (gnuplot index) are separated by two blank lines\n");
	double bins[GANTT_PLOT_PX];
	for (size_t i = 0; i < g->nv;) {
		size_t j = i;
		while (j < g->nv && g->v[j].pipe == g->v[i].pipe)
			j++;
		char what[64];
		snprintf(what, sizeof what, "pipe %s", t->pipe_name[g->v[i].pipe]);
		block_head(f, g, BLK_PIPE, g->v[i].pipe, what);
		fprintf(f, "# start_us end_us y_low y_high\n");
		gantt_pipe_block(f, t, g, g->v + i, j - i, bins, GANTT_PLOT_PX);
		i = j;
	}
	/* the tasks, by stream and start, kernels alternating in shade */
	qsort(g->tasks, g->ntasks, sizeof *g->tasks, by_start);
	for (int copies = 0; copies < 2; copies++) {
		unsigned n = 0, parity = 0;
		for (size_t i = 0; i < g->ntasks; i++) {
			const struct task *k = g->tasks[i];
			if (k->copy != copies)
				continue;
			if (!n++) {
				block_head(f, g, copies ? BLK_COPIES : BLK_KERNELS, 0,
					   copies ? "copy tasks" : "kernel tasks");
				fprintf(f, "# start_us end_us y_low y_high alternate\n");
			}
			double y = gantt_y(g, stream_row(g, k->stream));
			fprintf(f, "%.4f %.4f %.3f %.3f %u\n", fmax(k->s, g->t0) - g->t0,
				fmin(k->e, g->t1) - g->t0, y - 0.4, y + 0.4, parity ^= 1);
		}
	}
	gantt_labels(f, g, top_n);
}

/* The name of row r, for the y axis. */
static void gantt_row_name(const struct gantt *g, const struct trace *t, unsigned r, char *b,
			   size_t n)
{
	if (r < g->nstreams) {
		snprintf(b, n, "stream %u", g->streams[r]);
		return;
	}
	unsigned k = r - g->nstreams, core = 0, pos = k, pipe = 0;
	if (g->per_core) {
		pos = k % g->npipes;
		while (g->core_row[core] != (int)(k / g->npipes))
			core++;
	}
	while (g->pipe_row[pipe] != (int)pos)
		pipe++;
	if (g->per_core)
		snprintf(b, n, "core %u %s", core, t->pipe_name[pipe]);
	else
		snprintf(b, n, "%s (all cores)", t->pipe_name[pipe]);
}

static void hrule(FILE *f, double y, const char *color)
{
	fprintf(f, "set arrow from graph 0, first %g to graph 1, first %g nohead lc rgb '%s' back\n",
		y, y, color);
}

static void gantt_write_gp(FILE *f, const struct trace *t, const struct gantt *g)
{
	pl_gp_begin(f, t, "timeline", "the Gantt chart of the pipes and the streams' tasks");
	unsigned height = (unsigned)(150 + g->row_px * (g->nrows + 0.5) + 15 * g->nlevels);
	height = height < 320 ? 320 : height > 8000 ? 8000 : height;
	if (g->empty) {
		pl_gp_png(f, "timeline", GANTT_WIDTH, height);
		pl_gp_nothing(f, "timeline.json has no tasks or pipe spans");
		pl_gp_svg(f, "timeline");
		return;
	}
	char title[512], pre[256];
	pl_title_prefix(pre, sizeof pre, t);
	if (g->per_core)
		snprintf(title, sizeof title, "%s: pipe busy spans of the %u busy AI core%s (of %u), "
			 "tasks per stream", pre, g->nbusy, g->nbusy == 1 ? "" : "s", t->cores);
	else
		snprintf(title, sizeof title, "%s: fraction of all %u AI cores keeping each pipe "
			 "busy (%u busy), tasks per stream", pre, t->cores, g->nbusy);
	fprintf(f, "set title ");
	pl_gp_str(f, title);
	fprintf(f, "\nset xlabel 'time (µs since the start of the traced execution, at %.3f µs of "
		   "device time)'\n", g->t0);
	fprintf(f, "set xrange [%.4f:%.4f]\n", -g->margin, g->t1 - g->t0 + g->margin);
	/* fixed margins: the pixel the spans were merged at, and the labels'
	 * room, were computed for this plot area */
	fprintf(f, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n",
		(GANTT_WIDTH - GANTT_PLOT_PX - 24.0) / GANTT_WIDTH,
		(GANTT_WIDTH - 24.0) / GANTT_WIDTH);
	fprintf(f, "set yrange [-0.7:%.2f]\n",
		g->nrows - 0.4 + (g->nlevels ? g->nlevels * g->level_dy + 0.2 : 0));
	fprintf(f, "set grid xtics lc rgb '#e0e0e0'\nset key outside below horizontal height 1\n"
		   "set style fill solid 1.0 noborder\nset ytics scale 0 font ',9' (");
	for (unsigned r = 0; r < g->nrows; r++) {
		char name[96];
		gantt_row_name(g, t, r, name, sizeof name);
		fprintf(f, "%s", r ? ", " : "");
		pl_gp_str(f, name);
		fprintf(f, " %g", gantt_y(g, r));
	}
	fprintf(f, ")\n");
	/* rules under the streams and between cores; per pipe, its 0 and 100 % */
	for (unsigned k = 0; k < (g->per_core ? g->nbusy : 1); k++)
		if (g->nstreams || k)
			hrule(f, gantt_y(g, g->nstreams + k * g->npipes) + 0.5, "#b0b0b0");
	for (unsigned r = g->nstreams; !g->per_core && r < g->nrows; r++) {
		hrule(f, gantt_y(g, r) - 0.4, "#e4e4e4");
		hrule(f, gantt_y(g, r) + 0.4, "#e4e4e4");
	}
	pl_gp_png(f, "timeline", GANTT_WIDTH, height);
	fprintf(f, "box = \"using (($1+$2)/2):(($3+$4)/2):1:2:3:4\"\nplot ");
	for (unsigned k = 0; k < g->nblk; k++) {
		fprintf(f, "%s'timeline.dat' index %u ", k ? ", \\\n     " : "", k);
		switch (g->blk[k]) {
		case BLK_PIPE:
			fprintf(f, "@box with boxxyerror lc rgb '%s' title ",
				pl_pipe_color[g->blk_pipe[k] % PL_NCOLORS]);
			pl_gp_str(f, t->pipe_name[g->blk_pipe[k]]);
			break;
		case BLK_KERNELS:
			fprintf(f, "@box:($5 > 0 ? 0x4a78c0 : 0x2c4f8a) with boxxyerror "
				   "lc rgb variable fs solid 1.0 border lc rgb 'white' "
				   "title 'kernel tasks'");
			break;
		case BLK_COPIES:
			fprintf(f, "@box with boxxyerror lc rgb '#ff7f0e' fs solid 1.0 border "
				   "lc rgb 'white' title 'copies'");
			break;
		case BLK_LABELS:
			fprintf(f, "using 1:2:(0):($3-$2) with vectors nohead dt 3 "
				   "lc rgb '#909090' notitle, \\\n     'timeline.dat' index %u "
				   "using 1:2 with points pt 7 ps 0.4 lc rgb 'black' notitle, \\\n"
				   "     'timeline.dat' index %u using 4:2:5 with labels left "
				   "font ',8' notitle", k, k);
			break;
		}
	}
	fprintf(f, "\n");
	pl_gp_svg(f, "timeline");
}

int pl_chart_timeline(const char *out, const struct trace *t, const struct trc_plot_opts *o,
		      unsigned top_n, char *err, size_t errlen)
{
	struct gantt g;
	memset(&g, 0, sizeof g);
	FILE *f = NULL;
	int rc = -1;
	if (gantt_layout(&g, t, o)) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (!(f = pl_open_out(out, "timeline.dat", err, errlen)))
		goto done;
	gantt_write_dat(f, t, &g, top_n);
	int bad = pl_close_out(f, out, "timeline.dat", err, errlen);
	f = NULL;
	if (bad || !(f = pl_open_out(out, "timeline.gp", err, errlen)))
		goto done;
	gantt_write_gp(f, t, &g);
	rc = pl_close_out(f, out, "timeline.gp", err, errlen);
	f = NULL;
done:
	if (f)
		fclose(f);
	free(g.core_row);
	free(g.streams);
	free(g.v);
	free(g.tasks);
	return rc;
}
