/* serve_sweep.c: latency and throughput against offered QPS (see
 * serve.h): the same arrivals (same seed) scaled to each rate, one serving
 * run per point, the highest rate whose P99 meets the SLO; a data file and
 * a gnuplot script beside it, as simprof --plot writes them. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve.h"

int sv_sweep(const struct sv_config *c, const struct sv_table *t,
	     const struct sv_arrival_opts *o, double lo, double hi, double step,
	     struct sv_sweep_point **points, size_t *npoints, double *best, char *err,
	     size_t errlen)
{
	*points = NULL;
	*npoints = 0;
	*best = 0;
	if (!(lo > 0) || !(hi >= lo) || !(step > 0) || (hi - lo) / step > 10000) {
		snprintf(err, errlen, "--qps-sweep %g:%g:%g: expected LO:HI:STEP with 0 < LO <= HI, "
			 "STEP > 0, at most 10000 points", lo, hi, step);
		return -1;
	}
	if (o->kind == SV_ARRIVE_TRACE || o->kind == SV_ARRIVE_SCHEDULE) {
		snprintf(err, errlen, "--qps-sweep scales Poisson or on/off arrivals, not a "
			 "--trace or a --schedule");
		return -1;
	}
	size_t n = (size_t)((hi - lo) / step + 1e-9) + 1;
	struct sv_sweep_point *p = calloc(n, sizeof *p);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct sv_arrival_opts oi = *o;
		oi.qps = lo + step * (double)i;
		struct sv_arrivals a;
		struct sv_run run;
		char e2[1024];
		p[i].qps = oi.qps;
		if (sv_arrivals_make(&oi, &a, e2, sizeof e2)) {
			snprintf(err, errlen, "QPS %g: %s", oi.qps, e2);
			free(p);
			return -1;
		}
		int rc = sv_simulate(c, t, &a, &run, e2, sizeof e2);
		sv_arrivals_free(&a);
		if (!rc) {
			rc = sv_summarise(c, t, &run, &p[i].s, e2, sizeof e2);
			sv_run_free(&run);
		}
		if (rc) {
			snprintf(err, errlen, "QPS %g: %s", oi.qps, e2);
			free(p);
			return -1;
		}
		if (c->slo_p99_ms > 0 && p[i].s.slo_met)
			*best = oi.qps;
	}
	*points = p;
	*npoints = n;
	return 0;
}

void sv_sweep_print(FILE *f, const struct sv_config *c, const struct sv_sweep_point *p,
		    size_t n, double best, int json)
{
	if (json) {
		fprintf(f, "{\"points\": [");
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s{\"qps\": %.3f, \"throughput_rps\": %.3f, \"p50_us\": %.3f, "
				"\"p99_us\": %.3f, \"queue_p99_us\": %.3f, \"mean_batch\": %.4f, "
				"\"utilisation\": %.6f, \"padding\": %.6f, \"slo_attainment\": %.6f}",
				i ? ", " : "", p[i].qps, p[i].s.throughput_rps, p[i].s.latency.p50,
				p[i].s.latency.p99, p[i].s.queue.p99, p[i].s.mean_batch,
				p[i].s.utilisation, p[i].s.padding, p[i].s.slo_attainment);
		fprintf(f, "]");
		if (c->slo_p99_ms > 0)
			fprintf(f, ", \"slo_p99_ms\": %.3f, \"best_qps\": %.3f", c->slo_p99_ms, best);
		fprintf(f, "}\n");
		return;
	}
	fprintf(f, "%10s %12s %10s %10s %10s %8s %7s %7s%s\n", "qps", "served/s", "p50_ms",
		"p99_ms", "queue_p99", "batch", "util%", "pad%", c->slo_p99_ms > 0 ? "  slo" : "");
	for (size_t i = 0; i < n; i++) {
		const struct sv_summary *s = &p[i].s;
		fprintf(f, "%10.1f %12.1f %10.3f %10.3f %10.3f %8.2f %7.1f %7.1f%s\n", p[i].qps,
			s->throughput_rps, s->latency.p50 / 1e3, s->latency.p99 / 1e3,
			s->queue.p99 / 1e3, s->mean_batch, 100 * s->utilisation, 100 * s->padding,
			c->slo_p99_ms > 0 ? (s->slo_met ? "  met" : "  missed") : "");
	}
	if (c->slo_p99_ms > 0) {
		if (best > 0)
			fprintf(f, "highest QPS with P99 <= %g ms: %.1f\n", c->slo_p99_ms, best);
		else
			fprintf(f, "no QPS of the sweep meets P99 <= %g ms\n", c->slo_p99_ms);
	}
}

/* gnuplot on PATH? */
static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char f[PATH_MAX];
	for (const char *p = path ? path : ""; path;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		snprintf(f, sizeof f, "%.*s/gnuplot", (int)n, n ? p : ".");
		if (!access(f, X_OK))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

int sv_sweep_plot(const char *dir, const struct sv_config *c, const struct sv_table *t,
		  const struct sv_sweep_point *p, size_t n, double best, char *err,
		  size_t errlen)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, errlen, "--plot %s: %s", dir, strerror(errno));
		return -1;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/serve_sweep.dat", dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# simserve --qps-sweep: model %s, %u stream(s), max batch %u\n"
		"# qps served_rps p50_ms p90_ms p99_ms p999_ms queue_p99_ms mean_batch "
		"utilisation\n", t->name, c->streams ? c->streams : 1,
		c->max_batch ? c->max_batch : t->batch[t->nvariants - 1]);
	for (size_t i = 0; i < n; i++) {
		const struct sv_summary *s = &p[i].s;
		fprintf(f, "%.3f %.3f %.4f %.4f %.4f %.4f %.4f %.4f %.6f\n", p[i].qps,
			s->throughput_rps, s->latency.p50 / 1e3, s->latency.p90 / 1e3,
			s->latency.p99 / 1e3, s->latency.p999 / 1e3, s->queue.p99 / 1e3, s->mean_batch,
			s->utilisation);
	}
	if (fclose(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/serve_sweep.gp", dir);
	if (!(f = fopen(path, "w"))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# Latency and throughput against offered QPS (simserve --qps-sweep).\n"
		"# Restyle and redraw: cd to this directory, then `gnuplot serve_sweep.gp`.\n"
		"set datafile commentschars '#'\nset key left top\nset grid\n"
		"set xlabel 'offered load (requests/s)'\n");
	for (int out = 0; out < 2; out++) {
		fprintf(f, "%s\nset output 'serve_sweep.%s'\nset multiplot layout 1,2 title "
			"'%s: %u stream(s), max batch %u'\n",
			out ? "set terminal svg size 1200,480" :
			      "set terminal pngcairo size 1200,480",
			out ? "svg" : "png", t->name, c->streams ? c->streams : 1,
			c->max_batch ? c->max_batch : t->batch[t->nvariants - 1]);
		fprintf(f, "set ylabel 'latency (ms)'\nset logscale y\n");
		if (c->slo_p99_ms > 0)
			fprintf(f, "set arrow 1 from graph 0, first %g to graph 1, first %g nohead "
				"dt 2 lc rgb 'red'\nset label 1 'SLO P99 %g ms' at graph 0.02, first "
				"%g offset 0,0.7 tc rgb 'red'\n", c->slo_p99_ms, c->slo_p99_ms,
				c->slo_p99_ms, c->slo_p99_ms);
		if (best > 0)
			fprintf(f, "set arrow 2 from first %g, graph 0 to first %g, graph 1 nohead "
				"dt 3 lc rgb 'dark-green'\n", best, best);
		fprintf(f, "plot 'serve_sweep.dat' using 1:3 with linespoints title 'P50', \\\n"
			"     '' using 1:5 with linespoints title 'P99', \\\n"
			"     '' using 1:6 with linespoints title 'P99.9'\n"
			"unset arrow\nunset label\nunset logscale y\n"
			"set ylabel 'served (requests/s)'\n"
			"plot 'serve_sweep.dat' using 1:2 with linespoints title 'served', \\\n"
			"     '' using 1:1 with lines dt 2 title 'offered'\n"
			"unset multiplot\n");
	}
	if (fclose(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!have_gnuplot()) {
		snprintf(err, errlen, "gnuplot is not on PATH: wrote %s/serve_sweep.dat and .gp; "
			 "draw with: cd %s && gnuplot serve_sweep.gp", dir, dir);
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char logp[PATH_MAX];
		snprintf(logp, sizeof logp, "%s/gnuplot.log", dir);
		int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (chdir(dir))
			_exit(126);
		execlp("gnuplot", "gnuplot", "serve_sweep.gp", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "gnuplot failed on %s/serve_sweep.gp; see %s/gnuplot.log", dir,
			 dir);
		return -1;
	}
	return 0;
}
