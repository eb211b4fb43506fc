/* plot_roofline.c: trc_plot's roofline (docs/plots.md "roofline"): each op
 * at its intensity and achieved FLOP/s under the roofs, the top ops
 * numbered beside their points and named in a key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"

/* An op's main-memory bytes, or its GM traffic when the trace counted none
 * (main_mem is 0 for data the L2 served entirely). */
static double op_bytes(const struct op *o)
{
	return o->mem > 0 ? o->mem : o->gm;
}

static int op_placeable(const struct op *o)
{
	return o->cube + o->vec > 0 && op_bytes(o) > 0 && o->dur > 0;
}

#define ROOF_W 1420
#define ROOF_H 800
#define ROOF_PLOT_X 90.0  /* the plot area of roofline.png (margins fixed), px */
#define ROOF_PLOT_Y 70.0  /* from the top */
#define ROOF_PLOT_W 950.0
#define ROOF_PLOT_H 610.0
#define ROOF_KEY_LINE 14.0 /* a line of the labelled ops' key, font size 8 */
#define ROOF_NUM_PX 7.2	   /* a digit's width at font size 9, at most */
#define ROOF_NUM_H 12.0	   /* and its height */
#define ROOF_SAME_PX 6.0   /* labelled points this close share one number */

/* A box in plot pixels (y up), to keep numbers off each other and the
 * points. */
struct lbox {
	double x0, x1, y0, y1;
};

static int lbox_clear(const struct lbox *b, const struct lbox *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b->x0 < v[i].x1 && v[i].x0 < b->x1 && b->y0 < v[i].y1 && v[i].y0 < b->y1)
			return 0;
	return 1;
}

/* A point's marker radius in px for gnuplot's `ps` (pt 5 and 7 are 2 ps
 * wide in the svg terminal's units, 3.75 px each). */
static double roof_radius(double ps)
{
	return 3.75 * ps + 1;
}

static double roof_ps(const struct op *o, double maxdur)
{
	return 0.6 + 2.4 * sqrt(o->dur / o->rows / maxdur);
}

/* Place a number w px wide beside the point (px, py) of radius r: the
 * first of right, left, above, below and the diagonals, near then further,
 * inside the plot, that clears the numbers placed and the points (and,
 * failing that, the numbers only).  Returns 0 with the box in *out, or -1. */
static int place_number(double px, double py, double r, double w, const struct lbox *marks,
			size_t nmarks, const struct lbox *nums, size_t nnums, struct lbox *out)
{
	static const double dir[8][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 },
					  { 1, 1 }, { -1, 1 }, { 1, -1 }, { -1, -1 } };
	for (int strict = 1; strict >= 0; strict--)
		for (int ring = 0; ring < 3; ring++)
			for (int d = 0; d < 8; d++) {
				double gap = r + 2 + 8 * ring;
				double cx = px + dir[d][0] * (gap + w / 2);
				double cy = py + dir[d][1] * (gap + ROOF_NUM_H / 2);
				struct lbox b = { cx - w / 2, cx + w / 2, cy - ROOF_NUM_H / 2,
						  cy + ROOF_NUM_H / 2 };
				if (b.x0 < 0 || b.x1 > ROOF_PLOT_W || b.y0 < 0 || b.y1 > ROOF_PLOT_H)
					continue;
				if (!lbox_clear(&b, nums, nnums) ||
				    (strict && !lbox_clear(&b, marks, nmarks)))
					continue;
				*out = b;
				return 0;
			}
	return -1;
}

/* The range of a log axis fitted to [lo, hi] with a margin of f each way. */
static void log_range(double lo, double hi, double f, double *a, double *b)
{
	*a = lo / f;
	*b = hi * f;
}

int pl_chart_roofline(const char *out, const struct trace *t, unsigned top_n, char *err,
		      size_t errlen)
{
	const struct op **v = pl_ops_by_mean(t);
	size_t cap = (size_t)t->nops + 1;
	struct lbox *marks = malloc(cap * sizeof *marks), *nums = malloc(cap * sizeof *nums);
	unsigned *group = malloc(cap * sizeof *group);
	size_t *lead = malloc(cap * sizeof *lead); /* per group: its first op's index in v */
	FILE *f = NULL;
	int rc = -1;
	if (!v || !marks || !nums || !group || !lead) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	size_t placed = 0;
	double imin = INFINITY, imax = 0, amin = INFINITY, amax = 0, maxdur = 0;
	for (size_t i = 0; i < t->nops; i++) {
		const struct op *o = v[i];
		if (!op_placeable(o))
			continue;
		double in = (o->cube + o->vec) / op_bytes(o), ach = (o->cube + o->vec) / o->dur / 1e6;
		placed++;
		imin = fmin(imin, in);
		imax = fmax(imax, in);
		amin = fmin(amin, ach);
		amax = fmax(amax, ach);
		maxdur = fmax(maxdur, o->dur / o->rows);
	}
	/* Ranges fitted to the points: x also takes in the ridge, so the roof's
	 * knee shows, and y the peak, so the flat roof does. */
	double ridge = t->peak_tflops * 1e3 / t->hbm_gbps;
	double x0 = 1, x1 = 10, y0 = 1, y1 = 10;
	if (placed) {
		log_range(fmin(imin, ridge), fmax(imax, ridge), 2, &x0, &x1);
		log_range(amin, fmax(amax, t->peak_tflops), 1.6, &y0, &y1);
	}
#define ROOF_PX(in) ((log10(in) - log10(x0)) / (log10(x1) - log10(x0)) * ROOF_PLOT_W)
#define ROOF_PY(a) ((log10(a) - log10(y0)) / (log10(y1) - log10(y0)) * ROOF_PLOT_H)

	/* The labelled ops (the top_n placeable by mean duration, as in the
	 * other charts): ops at one point (same shape, same time) share a
	 * number, which sits beside the point; the key names each op. */
	size_t nmarks = 0, nnums = 0, nlab = 0, ngroups = 0;
	for (size_t i = 0; i < t->nops; i++) {
		const struct op *o = v[i];
		if (!op_placeable(o))
			continue;
		double in = (o->cube + o->vec) / op_bytes(o), ach = (o->cube + o->vec) / o->dur / 1e6;
		double px = ROOF_PX(in), py = ROOF_PY(ach), r = roof_radius(roof_ps(o, maxdur));
		marks[nmarks++] = (struct lbox){ px - r, px + r, py - r, py + r };
	}
	unsigned dropped = 0;
	size_t nlab_end = 0; /* v[] past the last labelled op */
	for (size_t i = 0; i < t->nops && nlab < top_n; i++) {
		const struct op *o = v[i];
		group[i] = 0;
		if (!op_placeable(o))
			continue;
		nlab++;
		nlab_end = i + 1;
		double px = ROOF_PX((o->cube + o->vec) / op_bytes(o));
		double py = ROOF_PY((o->cube + o->vec) / o->dur / 1e6);
		size_t g = 0;
		for (; g < ngroups; g++) {
			const struct op *l = v[lead[g]];
			if (fabs(ROOF_PX((l->cube + l->vec) / op_bytes(l)) - px) < ROOF_SAME_PX &&
			    fabs(ROOF_PY((l->cube + l->vec) / l->dur / 1e6) - py) < ROOF_SAME_PX)
				break;
		}
		if (g == ngroups) {
			char num[16];
			int digits = snprintf(num, sizeof num, "%zu", g + 1);
			if (place_number(px, py, roof_radius(roof_ps(o, maxdur)),
					 ROOF_NUM_PX * digits, marks, nmarks, nums, nnums,
					 &nums[nnums])) {
				group[i] = 0; /* no room for its number: left out of the key */
				dropped++;
				continue;
			}
			nnums++;
			lead[ngroups++] = i;
		}
		group[i] = (unsigned)g + 1;
	}

	if (!(f = pl_open_out(out, "roofline.dat", err, errlen)))
		goto done;
	fprintf(f, "# roofline.dat: every AI-core op of op_summary.csv of ");
	pl_comment_str(f, t->dir);
	fprintf(f, "\n# intensity = (cube_fops + vector_fops) / main_mem(B) (gm_read + gm_write "
		   "when main_mem is 0), summed over the op's rows;\n# achieved = those FLOPs / the "
		   "summed Task Duration; mean_us = mean duration\n"
		   "# roofs (summary.json): peak_cube_tflops %g, hbm_bandwidth_gbps %g, "
		   "l2_bandwidth_gbps %g\n", t->peak_tflops, t->hbm_gbps, t->l2_gbps);
	/* index 0: cube ops, 1: vector ops, 2: the labelled ops with their
	 * number (ops at one point share it), 3: the numbers' places */
	int blk_of[4] = { -1, -1, -1, -1 }, nblk = 0;
	for (int kind = 0; kind < 3; kind++) {
		size_t k = 0;
		for (size_t i = 0; i < t->nops; i++) {
			const struct op *o = v[i];
			if (!op_placeable(o) || (kind < 2 && (o->cube >= o->vec) != (kind == 0)))
				continue;
			if (kind == 2 && (i >= nlab_end || !group[i]))
				continue;
			double in = (o->cube + o->vec) / op_bytes(o);
			double ach = (o->cube + o->vec) / o->dur / 1e6;
			if (!k++) {
				fprintf(f, "%s# index %d: %s\n# intensity_flop_per_byte "
					   "achieved_tflops mean_us \"name\"%s\n",
					nblk ? "\n\n" : "", nblk,
					kind == 0 ? "cube ops (cube_fops >= vector_fops)"
					: kind == 1 ? "vector ops"
						    : "the labelled ops, by mean duration",
					kind == 2 ? " number" : "");
				blk_of[kind] = nblk++;
			}
			fprintf(f, "%.6g %.6g %.4f ", in, ach, o->dur / o->rows);
			pl_dat_str(f, o->name, 40);
			if (kind == 2)
				fprintf(f, " %u", group[i]);
			fputc('\n', f);
		}
	}
	if (nnums) {
		fprintf(f, "%s# index %d: where the numbers are drawn (centre)\n"
			   "# intensity_flop_per_byte achieved_tflops number\n", nblk ? "\n\n" : "",
			nblk);
		blk_of[3] = nblk++;
		for (size_t g = 0; g < nnums; g++)
			fprintf(f, "%.6g %.6g %zu\n",
				pow(10, log10(x0) + (nums[g].x0 + nums[g].x1) / 2 / ROOF_PLOT_W *
							    (log10(x1) - log10(x0))),
				pow(10, log10(y0) + (nums[g].y0 + nums[g].y1) / 2 / ROOF_PLOT_H *
							    (log10(y1) - log10(y0))),
				g + 1);
	}
	if (dropped)
		fprintf(f, "# %u of the top %u not numbered: no room beside their points\n", dropped,
			top_n);
	size_t unplaced = t->nops - placed;
	if (unplaced) {
		fprintf(f, "# not placed (no FLOPs, no bytes or no time):");
		for (size_t i = 0; i < t->nops; i++)
			if (!op_placeable(v[i])) {
				fputc(' ', f);
				pl_comment_str(f, v[i]->name);
			}
		fputc('\n', f);
	}
	int bad = pl_close_out(f, out, "roofline.dat", err, errlen);
	f = NULL;
	if (bad || !(f = pl_open_out(out, "roofline.gp", err, errlen)))
		goto done;
	pl_gp_begin(f, t, "roofline", "the ops under the main-memory and L2 roofs");
	if (!placed) {
		pl_gp_png(f, "roofline", ROOF_W, ROOF_H);
		pl_gp_nothing(f, "no AI-core op in op_summary.csv has both FLOPs and bytes");
		pl_gp_svg(f, "roofline");
		rc = pl_close_out(f, out, "roofline.gp", err, errlen);
		f = NULL;
		goto done;
	}
	char pre[256], title[512];
	pl_title_prefix(pre, sizeof pre, t);
	snprintf(title, sizeof title, "%s: roofline of %zu AI-core op%s", pre, placed,
		 placed > 1 ? "s" : "");
	fprintf(f, "set title ");
	pl_gp_str(f, title);
	snprintf(title, sizeof title, "point area ~ mean duration; the top %zu by mean duration "
				      "numbered (key on the right)", nlab);
	fprintf(f, " . \"\\n\" . ");
	pl_gp_str(f, title);
	if (unplaced)
		fprintf(f, " . '; not shown: %zu op%s without FLOPs or bytes (see roofline.dat)'",
			unplaced, unplaced > 1 ? "s" : "");
	fprintf(f, "\nset xlabel 'arithmetic intensity (FLOP per byte of main-memory traffic)'\n"
		   "set ylabel 'achieved TFLOP/s (the op''s FLOPs / its duration)'\n"
		   "set logscale xy\nset format x '%%g'\nset format y '%%g'\n"
		   "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n"
		   "set grid xtics ytics mxtics mytics lc rgb '#e8e8e8'\n"
		   "set key outside below horizontal\nset samples 2000\n",
		x0, x1, y0, y1);
	/* fixed margins: the numbers were placed for this plot area; taller
	 * for a key longer than it */
	double h = fmax(ROOF_H, ROOF_PLOT_Y + 8 + ROOF_KEY_LINE * (double)(nlab + 1) + 20);
	fprintf(f, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
		   "set tmargin at screen %.4f\nset bmargin at screen %.4f\n",
		ROOF_PLOT_X / ROOF_W, (ROOF_PLOT_X + ROOF_PLOT_W) / ROOF_W, 1 - ROOF_PLOT_Y / h,
		1 - (ROOF_PLOT_Y + ROOF_PLOT_H) / h);
	/* the key of the numbers, right of the plot: an op per line, by number */
	double kx = (ROOF_PLOT_X + ROOF_PLOT_W + 20) / ROOF_W;
	unsigned line = 0;
	fprintf(f, "set label %u 'numbered ops (mean µs):' at screen %.4f, screen %.4f left "
		   "font ',8'\n", ++line, kx, 1 - (ROOF_PLOT_Y + 8) / h);
	for (size_t i = 0, gi = 1; gi <= ngroups; i = i + 1 < nlab_end ? i + 1 : (gi++, 0)) {
		const struct op *o = v[i];
		if (group[i] != gi)
			continue;
		char text[320], name[64];
		size_t n = strlen(o->name);
		/* the tail says what the op is (dat_str's rule, 40 characters) */
		const char *tail = o->name + (n > 40 ? n - 37 : 0);
		while ((*tail & 0xc0) == 0x80)
			tail++;
		snprintf(name, sizeof name, "%s%.40s", n > 40 ? "..." : "", tail);
		snprintf(text, sizeof text, "%2u  %s (%.1f)", group[i], name, o->dur / o->rows);
		fprintf(f, "set label %u ", ++line);
		pl_gp_str(f, text);
		fprintf(f, " at screen %.4f, screen %.4f left font ',8'\n", kx,
			1 - (ROOF_PLOT_Y + 8 + ROOF_KEY_LINE * (line - 1)) / h);
	}
	fprintf(f, "peak = %g # TFLOP/s, the cube peak of all AI cores (summary.json)\n"
		   "hbm = %g # GB/s, main memory\nl2 = %g # GB/s, the L2\n"
		   "maxdur = %g # µs, the longest op's mean duration (point size)\n"
		   "roof(x, bw) = x * bw / 1000.0 < peak ? x * bw / 1000.0 : peak\n",
		t->peak_tflops, t->hbm_gbps, t->l2_gbps, maxdur);
	pl_gp_png(f, "roofline", ROOF_W, (unsigned)h);
	fprintf(f, "plot roof(x, hbm) lw 2 lc rgb 'black' title sprintf('main memory %%g GB/s, cube "
		   "peak %%g TFLOP/s', hbm, peak)");
	if (t->l2_gbps > 0)
		fprintf(f, ", \\\n     roof(x, l2) lw 1.5 dt 2 lc rgb '#606060' "
			   "title sprintf('L2 %%g GB/s', l2)");
	static const char *const kind_style[2] = { "pt 7 lc rgb '#d62728' title 'cube ops'",
						   "pt 5 lc rgb '#2ca02c' title 'vector ops'" };
	for (int kind = 0; kind < 2; kind++)
		if (blk_of[kind] >= 0)
			fprintf(f, ", \\\n     'roofline.dat' index %d using 1:2:(0.6 + 2.4 * "
				   "sqrt($3 / maxdur)) with points ps variable %s",
				blk_of[kind], kind_style[kind]);
	if (blk_of[3] >= 0)
		fprintf(f, ", \\\n     'roofline.dat' index %d using 1:2:(sprintf('%%d', $3)) "
			   "with labels center font ',9' notitle", blk_of[3]);
	fprintf(f, "\n");
	pl_gp_svg(f, "roofline");
	rc = pl_close_out(f, out, "roofline.gp", err, errlen);
	f = NULL;
#undef ROOF_PX
#undef ROOF_PY
done:
	if (f)
		fclose(f);
	free(v);
	free(marks);
	free(nums);
	free(group);
	free(lead);
	return rc;
}
