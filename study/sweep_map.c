/* sweep_map.c: a study's points as a grid of cells (docs/whatif.md).
 *
 * bound_map: the advisor's bound at every point, a cell per point coloured
 * by bound and named in it: the first varied key across, the combinations
 * of the others down (one row when one key is varied).  With exactly two
 * varied keys, heat_METRIC: each metric as a heat map over the two keys,
 * its value written in each cell.  The keys' values are categories here
 * (equal cells, in the command line's order), so any value, numeric or
 * not, gets a column.  Like the line charts, each is NAME.dat plus NAME.gp
 * drawing NAME.png and NAME.svg; sw_plot runs gnuplot on them. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor.h"
#include "sweep_map.h"

#define MAP_W 960.0	  /* px of the drawings */
#define MAP_PLOT_W 700.0  /* the grid's share of it, about */
#define MAP_TEXT_PX 6.5	  /* a character at font size 9, at most */

/* The bounds in adv_bound order, then a point whose advisor failed, then a
 * failed point: a colour each. */
static const char *const bound_color[ADV_NBOUNDS] = { "#d62728", "#2ca02c", "#1f77b4",
						      "#7f7f7f", "#9467bd", "#ff7f0e",
						      "#17becf" };
#define B_UNKNOWN ADV_NBOUNDS
#define B_FAILED (ADV_NBOUNDS + 1)
#define NB (ADV_NBOUNDS + 2)

static unsigned bound_index(const struct sw_row *r)
{
	if (!r || !r->ok)
		return B_FAILED;
	for (unsigned b = 0; b < ADV_NBOUNDS; b++)
		if (!strcmp(r->bound, adv_bound_name((enum adv_bound)b)))
			return b;
	return B_UNKNOWN;
}

static const char *bound_label(unsigned b)
{
	return b < ADV_NBOUNDS ? adv_bound_name((enum adv_bound)b) : b == B_UNKNOWN ? "unknown"
											: "failed";
}

static const char *bound_rgb(unsigned b)
{
	return b < ADV_NBOUNDS ? bound_color[b] : b == B_UNKNOWN ? "#bcbd22" : "#e8e8e8";
}

/* A gnuplot double-quoted string with noenhanced text: \ and " escaped. */
static void gp_q(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('"', f);
}

/* The name of row r (a combination of dims 1..n-1, the last fastest). */
static void row_name(const struct sw_spec *s, unsigned r, char *b, size_t n)
{
	unsigned idx[SW_MAX_DIMS];
	for (unsigned e = s->ndims; e-- > 1;) {
		idx[e] = r % s->dims[e].n;
		r /= s->dims[e].n;
	}
	size_t l = 0;
	b[0] = 0;
	for (unsigned e = 1; e < s->ndims && l < n; e++)
		l += (size_t)snprintf(b + l, n - l, "%s%s=%s", l ? " " : "", s->dims[e].name,
				      s->dims[e].values[idx[e]]);
}

static int open_pair(const char *dir, const char *name, FILE **f, FILE **g, char *err,
		     size_t errlen)
{
	char p[PATH_MAX + 300];
	snprintf(p, sizeof p, "%s/%s.dat", dir, name);
	*g = NULL;
	if (!(*f = fopen(p, "w"))) {
		snprintf(err, errlen, "%s: %s", p, strerror(errno));
		return -1;
	}
	snprintf(p, sizeof p, "%s/%s.gp", dir, name);
	if (!(*g = fopen(p, "w"))) {
		snprintf(err, errlen, "%s: %s", p, strerror(errno));
		fclose(*f);
		return -1;
	}
	return 0;
}

static int close_pair(const char *dir, const char *name, FILE *f, FILE *g, char *err,
		      size_t errlen)
{
	int bad = ferror(f) | ferror(g);
	bad |= fclose(f) | fclose(g);
	if (bad)
		snprintf(err, errlen, "%s/%s.gp: write error", dir, name);
	return bad ? -1 : 0;
}

/* What both kinds of map share: the grid's axes, the size, the title. */
static void grid_head(FILE *g, const struct sw_spec *s, const char *name, const char *what,
		      unsigned rows, double *height)
{
	const struct sw_dim *x = &s->dims[0];
	const char *mb = strrchr(s->model, '/'), *sb = strrchr(s->soc, '/');
	*height = 160 + 34.0 * rows;
	*height = *height < 300 ? 300 : *height > 4000 ? 4000 : *height;
	fprintf(g, "# %s, simsweep study %s: a cell per point\n# data: %s.dat.  Redraw: cd to "
		   "this directory, gnuplot %s.gp\nreset\nset encoding utf8\n",
		what, s->dir, name, name);
	fprintf(g, "set title ");
	char t[1024];
	snprintf(t, sizeof t, "%s: %s on %s", what, mb ? mb + 1 : s->model, sb ? sb + 1 : s->soc);
	gp_q(g, t);
	fprintf(g, " noenhanced\nset xlabel ");
	gp_q(g, x->name);
	fprintf(g, " noenhanced\nset xrange [-0.5:%u.5]\nset yrange [-0.5:%u.5]\n"
		   "set xtics scale 0 (", x->n - 1, rows - 1);
	for (unsigned i = 0; i < x->n; i++) {
		fprintf(g, "%s", i ? ", " : "");
		gp_q(g, x->values[i]);
		fprintf(g, " %u", i);
	}
	fprintf(g, ")\nset ytics scale 0 (");
	/* the first row on top */
	for (unsigned r = 0; r < rows; r++) {
		char n[1024];
		row_name(s, r, n, sizeof n);
		fprintf(g, "%s", r ? ", " : "");
		gp_q(g, n);
		fprintf(g, " %u", rows - 1 - r);
	}
	fprintf(g, ")\nset style fill solid 1.0 border lc rgb 'white'\nunset grid\n");
}

static void grid_terminals(FILE *g, const char *name, double height, const char *plot)
{
	fprintf(g, "set terminal pngcairo size %.0f,%.0f font 'sans,10' noenhanced\n"
		   "set output '%s.png'\n%s\n"
		   "set terminal svg size %.0f,%.0f font 'sans,10' noenhanced background rgb 'white'\n"
		   "set output '%s.svg'\nreplot\nunset output\n",
		MAP_W, height, name, plot, MAP_W, height, name);
}

/* The bound of every point.  Returns 1 when written, -1 on error. */
static int bound_map(const struct sw_spec *s, const struct sw_row *const *at, const char *dir,
		     char *err, size_t errlen)
{
	const char *name = "bound_map";
	unsigned n = sw_npoints(s), cols = s->dims[0].n, rows = n / cols;
	FILE *f, *g;
	if (open_pair(dir, name, &f, &g, err, errlen))
		return -1;
	fprintf(f, "# the advisor's bound at every point of simsweep study %s\n"
		   "# x: the value of %s (its index); y: the row (bound_map.gp's ytics name the "
		   "other keys' values), the first on top\n# x y bound_index \"bound\" point\n",
		s->dir, s->dims[0].name);
	int seen[NB] = { 0 };
	for (unsigned k = 0; k < n; k++) {
		unsigned b = bound_index(at[k]), x = k / rows, r = k % rows;
		seen[b] = 1;
		fprintf(f, "%u %u %u \"%s\" %u\n", x, rows - 1 - r, b, bound_label(b), k);
	}
	double height;
	grid_head(g, s, name, "the advisor's bound at each point", rows, &height);
	fprintf(g, "set key outside right top noenhanced title 'bound'\n");
	/* the colours by bound_index, for `lc rgb variable` */
	fprintf(g, "array C[%u] = [", NB);
	for (unsigned b = 0; b < NB; b++)
		fprintf(g, "%s0x%s", b ? ", " : "", bound_rgb(b) + 1);
	fprintf(g, "]\n");
	char plot[8192];
	size_t pl = (size_t)snprintf(plot, sizeof plot,
				     "plot '%s.dat' using 1:2:(0.5):(0.5):(C[$3 + 1]) with boxxyerror "
				     "lc rgb variable notitle",
				     name);
	/* a name fits its cell? (else the colours and the key say it) */
	if (MAP_PLOT_W / cols >= MAP_TEXT_PX * 11 + 8)
		pl += (size_t)snprintf(plot + pl, sizeof plot - pl,
				       ", \\\n     '%s.dat' using 1:2:4 with labels font ',9' notitle",
				       name);
	for (unsigned b = 0; b < NB; b++)
		if (seen[b] && pl < sizeof plot)
			pl += (size_t)snprintf(plot + pl, sizeof plot - pl,
					       ", \\\n     NaN with boxes fs solid 1.0 lc rgb '%s' "
					       "title '%s'",
					       bound_rgb(b), bound_label(b));
	grid_terminals(g, name, height, plot);
	if (close_pair(dir, name, f, g, err, errlen))
		return -1;
	return 1;
}

/* Metric m as a heat map over the two varied keys.  Returns 1 when
 * written, 0 when no point succeeded, -1 on error. */
static int heat_map(const struct sw_spec *s, const struct sw_row *const *at, unsigned m,
		    const char *label, const char *dir, char *name, size_t namelen, char *err,
		    size_t errlen)
{
	unsigned n = sw_npoints(s), cols = s->dims[0].n, rows = n / cols, good = 0;
	for (unsigned k = 0; k < n; k++)
		good += at[k] && at[k]->ok;
	if (!good)
		return 0;
	snprintf(name, namelen, "heat_%s", sw_metric_names[m]);
	FILE *f, *g;
	if (open_pair(dir, name, &f, &g, err, errlen))
		return -1;
	fprintf(f, "# %s at every point of simsweep study %s\n"
		   "# x: the value of %s (its index); y: the value of %s (its index), the first "
		   "on top\n# index 0: the points that ran: x y %s point\n",
		sw_metric_names[m], s->dir, s->dims[0].name, s->dims[1].name, sw_metric_names[m]);
	double lo = INFINITY, hi = -INFINITY;
	for (unsigned k = 0; k < n; k++)
		if (at[k] && at[k]->ok) {
			fprintf(f, "%u %u %.6g %u\n", k / rows, rows - 1 - k % rows,
				at[k]->metric[m], k);
			lo = fmin(lo, at[k]->metric[m]);
			hi = fmax(hi, at[k]->metric[m]);
		}
	/* the failed points, grey and named (plotted only when there are
	 * any: gnuplot fails on an empty block) */
	fprintf(f, "\n\n# index 1: the failed (or missing) points: x y point\n");
	int nfailed = 0;
	for (unsigned k = 0; k < n; k++)
		if (!at[k] || !at[k]->ok) {
			fprintf(f, "%u %u %u\n", k / rows, rows - 1 - k % rows, k);
			nfailed++;
		}
	double height;
	char what[256];
	snprintf(what, sizeof what, "%s", label);
	grid_head(g, s, name, what, rows, &height);
	fprintf(g, "set ylabel ");
	gp_q(g, s->dims[1].name);
	fprintf(g, " noenhanced\nset ytics scale 0 (");
	for (unsigned r = 0; r < rows; r++) {
		fprintf(g, "%s", r ? ", " : "");
		gp_q(g, s->dims[1].values[r]);
		fprintf(g, " %u", rows - 1 - r);
	}
	fprintf(g, ")\nset palette defined (0 '#f7fbff', 1 '#6baed6', 2 '#08306b')\n"
		   "mid = %.6g # values above it are written in white, on the dark cells\n"
		   "set cblabel ", (lo + hi) / 2);
	gp_q(g, label);
	fprintf(g, " noenhanced\nunset key\n");
	char plot[4096];
	size_t pl = (size_t)snprintf(plot, sizeof plot,
				     "plot '%s.dat' index 0 using 1:2:(0.5):(0.5):3 with boxxyerror "
				     "fc palette notitle",
				     name);
	if (nfailed)
		pl += (size_t)snprintf(plot + pl, sizeof plot - pl,
				       ", \\\n     '%s.dat' index 1 using 1:2:(0.5):(0.5) with "
				       "boxxyerror lc rgb '%s' notitle, \\\n     '%s.dat' index 1 "
				       "using 1:2:('failed') with labels font ',9' notitle",
				       name, bound_rgb(B_FAILED), name);
	/* the value in the cell (white on the dark half), if it fits */
	if (MAP_PLOT_W / cols >= MAP_TEXT_PX * 8 + 8)
		snprintf(plot + pl, sizeof plot - pl,
			 ", \\\n     '%s.dat' index 0 using 1:2:(sprintf('%%.4g', $3)):($3 > mid ? "
			 "0xffffff : 0x000000) with labels tc rgb variable font ',9' notitle",
			 name);
	grid_terminals(g, name, height, plot);
	if (close_pair(dir, name, f, g, err, errlen))
		return -1;
	return 1;
}

int sw_plot_maps(const struct sw_spec *s, const struct sw_row *const *at, const char *dir,
		 const char *const *labels, char **scripts, unsigned *ns, char *err,
		 size_t errlen)
{
	if (!s->ndims)
		return 0;
	int w = bound_map(s, at, dir, err, errlen);
	if (w < 0 || !(scripts[(*ns)++] = strdup("bound_map.gp")))
		return -1;
	if (s->ndims != 2)
		return 0;
	for (unsigned m = 0; m < SW_NMETRICS; m++) {
		char name[128];
		w = heat_map(s, at, m, labels[m], dir, name, sizeof name, err, errlen);
		if (w < 0)
			return -1;
		if (w) {
			size_t l = strlen(name) + 4;
			if (!(scripts[*ns] = malloc(l)))
				return -1;
			snprintf(scripts[(*ns)++], l, "%s.gp", name);
		}
	}
	return 0;
}
