/* sweep_plot.c: a study's metrics against each varied key, drawn by
 * gnuplot.  For every metric and every varied key with numeric values, a
 * data file (one block per combination of the other keys' values, so one
 * line each), a script that draws it as PNG (pngcairo) and SVG, and the
 * drawings.  The scripts name their data relative to their own directory:
 * `cd plots && gnuplot NAME.gp` redraws a restyled chart. */
/* Messages and paths are cut to their buffers on purpose (a long error
 * text loses its tail rather than failing), which this warning flags. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "sweep.h"
#include "sweep_map.h"

static const char *const metric_label[SW_NMETRICS] = {
	"first inference latency (us)", "warm inference latency (us)", "throughput (inferences/s)",
	"S (scalar) utilization", "MTE1 utilization", "MTE2 utilization", "MTE3 utilization",
	"M (cube) utilization", "V (vector) utilization"
};

static int numeric(const char *s, double *v)
{
	char *e;
	*v = strtod(s, &e);
	return e != s && !*e && isfinite(*v);
}

struct xy {
	double x, y;
	unsigned point;
};

static int by_x(const void *a, const void *b)
{
	double d = ((const struct xy *)a)->x - ((const struct xy *)b)->x;
	return d < 0 ? -1 : d > 0;
}

/* gnuplot on PATH? */
static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char dir[PATH_MAX];
	for (const char *p = path;;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		snprintf(dir, sizeof dir, "%.*s/gnuplot", (int)n, n ? p : ".");
		if (access(dir, X_OK) == 0)
			return 1;
		if (!c)
			return 0;
		p = c + 1;
	}
}

/* The file-name form of a key: hbm.bandwidth_gbps -> hbm_bandwidth_gbps. */
static void file_name(char *out, size_t len, const char *metric, const char *key)
{
	size_t n = (size_t)snprintf(out, len, "%s_vs_", metric);
	for (const char *k = key; *k && n + 1 < len; k++)
		out[n++] = *k == '.' ? '_' : *k;
	out[n < len ? n : len - 1] = 0;
}

/* One chart: metric m against dim d.  Returns 1 when written, 0 when
 * there was nothing to draw, -1 on error. */
static int chart(const struct sw_spec *s, const struct sw_row *const *at, unsigned d, unsigned m,
		 const char *dir, char *name, size_t namelen, char *err, size_t errlen)
{
	const struct sw_dim *dm = &s->dims[d];
	unsigned n = sw_npoints(s), ncombo = n / dm->n;
	double xmin = INFINITY, xmax = -INFINITY;
	for (unsigned i = 0; i < dm->n; i++) {
		double v;
		numeric(dm->values[i], &v);
		xmin = fmin(xmin, v);
		xmax = fmax(xmax, v);
	}
	file_name(name, namelen, sw_metric_names[m], dm->name);
	char dat[PATH_MAX + 300], gp[PATH_MAX + 300];
	snprintf(dat, sizeof dat, "%s/%s.dat", dir, name);
	snprintf(gp, sizeof gp, "%s/%s.gp", dir, name);
	FILE *f = fopen(dat, "w");
	FILE *g = f ? fopen(gp, "w") : NULL;
	struct xy *pts = malloc(dm->n * sizeof *pts);
	if (!f || !g || !pts) {
		snprintf(err, errlen, "%s: %s", f ? gp : dat, strerror(errno));
		if (f)
			fclose(f);
		if (g)
			fclose(g);
		free(pts);
		return -1;
	}
	fprintf(f, "# %s against %s, simsweep study %s\n# one block (gnuplot index) per value "
		"of the other varied keys; columns: %s %s point\n", sw_metric_names[m], dm->name,
		s->dir, dm->name, sw_metric_names[m]);
	fprintf(g, "# %s against %s, simsweep study %s\n# one line per value of the other varied "
		"keys; data: %s.dat.  Redraw: cd to this directory, gnuplot %s.gp\n",
		sw_metric_names[m], dm->name, s->dir, name, name);
	const char *mb = strrchr(s->model, '/'), *sb = strrchr(s->soc, '/');
	/* reset: sw_plot runs every script in one gnuplot, and a log axis
	 * must not leak into the next chart */
	fprintf(g, "reset\nset title \"%s vs %s\\n%s on %s\" noenhanced\nset xlabel \"%s\" noenhanced\n"
		"set ylabel \"%s\" noenhanced\nset grid\nset key outside right top noenhanced\n"
		"set yrange [0:*]\n", metric_label[m], dm->name, mb ? mb + 1 : s->model,
		sb ? sb + 1 : s->soc, dm->name, metric_label[m]);
	/* a range of 8x or more is read in ratios (bandwidth, core counts) */
	if (xmin > 0 && xmax / xmin >= 8)
		fprintf(g, "set logscale x 2\n");
	fprintf(g, "set xtics (");
	for (unsigned i = 0; i < dm->n; i++)
		fprintf(g, "%s\"%s\" %s", i ? ", " : "", dm->values[i], dm->values[i]);
	fprintf(g, ")\nset offsets graph 0.03, graph 0.03, graph 0.05, 0\n");
	unsigned blocks = 0;
	char plot[65536];
	size_t pl = 0;
	pl += (size_t)snprintf(plot, sizeof plot, "plot");
	/* the other dims' combinations, in the study's order: the point of
	 * combo c and value i of dim d */
	unsigned inner = 1;
	for (unsigned e = d + 1; e < s->ndims; e++)
		inner *= s->dims[e].n;
	for (unsigned c = 0; c < ncombo; c++) {
		unsigned hi = c / inner, lo = c % inner, np = 0;
		unsigned base = hi * dm->n * inner + lo;
		for (unsigned i = 0; i < dm->n; i++) {
			const struct sw_row *r = at[base + i * inner];
			if (!r || !r->ok)
				continue;
			numeric(dm->values[i], &pts[np].x);
			pts[np].y = r->metric[m];
			pts[np].point = base + i * inner;
			np++;
		}
		if (!np)
			continue;
		qsort(pts, np, sizeof *pts, by_x);
		/* the block's title: the other keys' values at its first point */
		char title[1024] = "";
		size_t tl = 0;
		unsigned k = base, idx[SW_MAX_DIMS];
		for (unsigned e = s->ndims; e-- > 0;) {
			idx[e] = k % s->dims[e].n;
			k /= s->dims[e].n;
		}
		for (unsigned e = 0; e < s->ndims && tl < sizeof title; e++)
			if (e != d)
				tl += (size_t)snprintf(title + tl, sizeof title - tl, "%s%s=%s",
						       tl ? " " : "", s->dims[e].name,
						       s->dims[e].values[idx[e]]);
		if (!tl)
			snprintf(title, sizeof title, "%s", sw_metric_names[m]);
		fprintf(f, "# %s\n", title);
		for (unsigned i = 0; i < np; i++)
			fprintf(f, "%.10g %.6g %u\n", pts[i].x, pts[i].y, pts[i].point);
		fprintf(f, "\n\n");
		if (pl < sizeof plot)
			pl += (size_t)snprintf(plot + pl, sizeof plot - pl,
					       "%s '%s.dat' index %u using 1:2 with linespoints lw 2 "
					       "pt 7 title \"%s\"", blocks ? ", \\\n    " : " ",
					       name, blocks, title);
		blocks++;
	}
	fprintf(g, "set terminal pngcairo size 960,560 noenhanced\nset output '%s.png'\n%s\n"
		"set terminal svg size 960,560 noenhanced\nset output '%s.svg'\nreplot\n"
		"unset output\n", name, plot, name);
	int bad = ferror(f) | ferror(g) | (pl >= sizeof plot);
	bad |= fclose(f) | fclose(g);
	free(pts);
	if (bad) {
		snprintf(err, errlen, "%s: write error", gp);
		return -1;
	}
	if (!blocks) {
		unlink(dat);
		unlink(gp);
		return 0;
	}
	return 1;
}

int sw_plot(const struct sw_spec *s, const struct sw_row *rows, unsigned nrows, char *err,
	    size_t errlen)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/plots", s->dir);
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	unsigned n = sw_npoints(s);
	const struct sw_row **at = calloc(n + 1, sizeof *at);
	char **scripts = calloc((size_t)(s->ndims + 1) * SW_NMETRICS + 4, sizeof *scripts);
	if (!at || !scripts) {
		free(at);
		free(scripts);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < nrows; i++)
		if (rows[i].point < n)
			at[rows[i].point] = &rows[i];
	unsigned ns = 0;
	int rc = 0;
	for (unsigned d = 0; d < s->ndims && !rc; d++) {
		int num = s->dims[d].n >= 2;
		for (unsigned i = 0; i < s->dims[d].n && num; i++) {
			double v;
			num = numeric(s->dims[d].values[i], &v);
		}
		if (!num)
			continue;
		for (unsigned m = 0; m < SW_NMETRICS && !rc; m++) {
			char name[256];
			int w = chart(s, at, d, m, dir, name, sizeof name, err, errlen);
			if (w < 0)
				rc = -1;
			else if (w) {
				size_t l = strlen(name) + 4;
				if (!(scripts[ns] = malloc(l)))
					rc = -1;
				else
					snprintf(scripts[ns++], l, "%s.gp", name);
			}
		}
	}
	if (!rc && sw_plot_maps(s, at, dir, metric_label, scripts, &ns, err, errlen))
		rc = -1;
	if (!rc && ns && !have_gnuplot()) {
		snprintf(err, errlen, "gnuplot is not on PATH: wrote the data and scripts to %s; "
			 "draw them with: cd %s && gnuplot *.gp", dir, dir);
		rc = 1;
	} else if (!rc && ns) {
		/* one gnuplot for every script: it starts once, not per chart */
		char **argv = calloc(ns + 2, sizeof *argv);
		char logp[PATH_MAX + 16];
		snprintf(logp, sizeof logp, "%s/gnuplot.log", dir);
		pid_t pid = argv ? fork() : -1;
		if (pid == 0) {
			int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
				close(fd);
			}
			if (chdir(dir))
				_exit(126);
			argv[0] = (char *)"gnuplot";
			for (unsigned i = 0; i < ns; i++)
				argv[i + 1] = scripts[i];
			execvp("gnuplot", argv);
			_exit(127);
		}
		int st = 0;
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (pid < 0) {
			snprintf(err, errlen, "cannot run gnuplot: %s", strerror(errno));
			rc = -1;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			snprintf(err, errlen, "gnuplot failed (exit %d) on the scripts in %s; see %s",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1, dir, logp);
			rc = -1;
		}
		free(argv);
	}
	for (unsigned i = 0; i < ns; i++)
		free(scripts[i]);
	free(scripts);
	free(at);
	return rc;
}
