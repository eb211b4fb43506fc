/* simsweep: what-if studies over SoC keys and batch sizes (study/sweep.h).
 *   simsweep --soc Ascend910 --model m.onnx --vary hbm.bandwidth_gbps=300,600,1200
 *            --vary core.count=8,16,32 [--batch 1,8] [-j N] --out study/
 *   simsweep ... --emit-jobs            jobs.txt (GNU parallel), sweep.sbatch (Slurm)
 *   simsweep --spec study/spec.txt --point K
 *   simsweep --merge study/ */
/* Messages and paths are cut to their buffers on purpose (a long error
 * text loses its tail rather than failing), which this warning flags. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: simsweep --soc SOC --model M.onnx --vary KEY=V1,V2,... [--vary ...]\n"
		"                [--batch B1,B2,...] [options] --out DIR\n"
		"       simsweep ... --emit-jobs          write DIR/jobs.txt and DIR/sweep.sbatch\n"
		"       simsweep --spec DIR/spec.txt --point K   run one point of a study\n"
		"       simsweep --spec DIR/spec.txt [-j N]      run (again) a whole study\n"
		"       simsweep --merge DIR              assemble DIR/results.csv and the plots\n"
		"       simsweep --list-keys              which keys make a point recompile\n"
		"Compile and simulate every point of the cartesian product of the varied keys\n"
		"(first --vary outermost), compiling once per distinct binary; write\n"
		"DIR/results.csv (a row per point: the varied keys, latencies, throughput,\n"
		"per-pipe utilization, the advisor's bound, status) and DIR/plots/.\n\n"
		"  --soc NAME|FILE.ini     the base chip (Ascend310, Ascend910, Ascend310P3)\n"
		"  --model FILE.onnx       the model\n"
		"  --vary KEY=V1,V2,...    a SoC key and its values (repeatable)\n"
		"  --batch B1,B2,...       batch sizes (dim 0 of the first input); a varied key\n"
		"                          in the order given (default: the model's own)\n"
		"  --set KEY=VALUE         change the base chip (repeatable): points compile for it\n"
		"  --fusion_switch_file F  ATC's fusion switch file for every point\n"
		"  --loop N                executions per stream (default 2: first and warm)\n"
		"  --streams N             concurrent model instances (default 1)\n"
		"  --mode timing|full      full simulates the arithmetic too (default timing)\n"
		"  --retune                compile every point for its own rates and latencies\n"
		"                          (default: points that change only those reuse the base\n"
		"                          chip's binary; see --list-keys)\n"
		"  --timeline              keep every pipe's busy spans in the points' traces\n"
		"  -j, --jobs N            points run at once on this host (default 1)\n"
		"  --out DIR               the study directory\n"
		"Each finished point prints \"point 3 of 12 (#7)\": 3 points of the 12 done, this\n"
		"one row 7 of results.csv.\n"
		"Exit status: 0 every point ran; 3 the study ran but points failed (their rows'\n"
		"status says why); 1 an error, or points missing (--merge); 2 options refused.\n"
		"--point K exits 0 when its row was written, failed or not.\n");
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *v)
{
	char *e;
	errno = 0;
	unsigned long u = strtoul(s, &e, 10);
	if (errno || e == s || *e || s[0] == '-' || u < lo || u > hi)
		return -1;
	*v = (unsigned)u;
	return 0;
}

static void list_keys(void)
{
	printf("%-36s %-8s %s\n", "key", "class", "why");
	for (unsigned i = 0; i < st_nkeys(); i++) {
		char name[96];
		enum st_key_class c;
		const char *why;
		st_key_name(i, name, sizeof name);
		st_key_class(name, &c, &why);
		printf("%-36s %-8s %s\n", name, st_key_class_name(c), why);
	}
	printf("\nlayout: a point that changes it is compiled for it.  tuning: only the\n"
	       "compiler's cost model reads it; points reuse the base chip's binary unless\n"
	       "--retune.  runtime: the compiler never reads it.  (study/compile_keys.def)\n");
}

/* The command line: a new study in s, or what to do with an existing one. */
struct cli {
	struct sw_spec s;
	const char *spec_path, *merge;
	unsigned jobs, point;
	int have_point, emit;
};

/* --vary KEY=V1,... or --batch B1,... (key says which): 0, or -1 with the
 * message printed. */
static int add_dim(struct sw_spec *s, const char *key, const char *v)
{
	char name[128], err[2048];
	const char *values = v;
	if (key[2] == 'b') {
		snprintf(name, sizeof name, "batch");
	} else {
		const char *e = strchr(v, '=');
		if (!e || e == v || (size_t)(e - v) >= sizeof name) {
			fprintf(stderr, "simsweep: --vary '%s': expected KEY=V1,V2,...\n", v);
			return -1;
		}
		snprintf(name, sizeof name, "%.*s", (int)(e - v), v);
		values = e + 1;
	}
	if (sw_spec_add_dim(s, name, values, err, sizeof err)) {
		fprintf(stderr, "simsweep: %s\n", err);
		return -1;
	}
	return 0;
}

/* --loop, --streams, -j/--jobs, --point: 0, or -1 with the message printed. */
static int count_arg(struct cli *c, const char *key, const char *v)
{
	unsigned u;
	int is_point = !strcmp(key, "--point");
	if (parse_uint(v, is_point ? 0 : 1, is_point ? 999999 : 100000, &u)) {
		fprintf(stderr, "simsweep: %s '%s': not a valid count\n", key, v);
		return -1;
	}
	if (is_point) {
		c->point = u;
		c->have_point = 1;
	} else if (!strcmp(key, "--loop")) {
		c->s.loop = u;
	} else if (!strcmp(key, "--streams")) {
		c->s.streams = u;
	} else {
		c->jobs = u;
	}
	return 0;
}

/* The command line into c: -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct cli *c)
{
	struct sw_spec *s = &c->s;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		char key[64] = "";
		const char *eq = strchr(a, '=');
		/* --key=value and --key value; --vary's value has an '=' of its own */
		if (a[0] == '-' && a[1] == '-' && eq && (size_t)(eq - a) < sizeof key &&
		    strncmp(a, "--vary", 6) && strncmp(a, "--set", 5)) {
			memcpy(key, a, (size_t)(eq - a));
			val = eq + 1;
		} else if (!strncmp(a, "--vary=", 7) || !strncmp(a, "--set=", 6)) {
			snprintf(key, sizeof key, "%.*s", (int)(eq - a), a);
			val = eq + 1;
		} else if (a[0] == '-' && a[1] == 'j' && a[2]) { /* -jN, as make takes it */
			snprintf(key, sizeof key, "-j");
			val = a + 2;
		} else {
			snprintf(key, sizeof key, "%s", a);
		}
#define VALUE()                                                                               \
	(val ? val : (i + 1 < argc ? argv[++i] : (fprintf(stderr, "simsweep: %s needs a value\n", \
							  key), exit(2), "")))
		if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(key, "--list-keys")) {
			list_keys();
			return 0;
		} else if (!strcmp(key, "--soc")) {
			free(s->soc);
			s->soc = strdup(VALUE());
		} else if (!strcmp(key, "--model")) {
			free(s->model);
			s->model = strdup(VALUE());
		} else if (!strcmp(key, "--fusion_switch_file") || !strcmp(key, "--fusion-switch-file")) {
			free(s->fusion);
			s->fusion = strdup(VALUE());
		} else if (!strcmp(key, "--out")) {
			free(s->dir);
			s->dir = strdup(VALUE());
		} else if (!strcmp(key, "--vary") || !strcmp(key, "--batch")) {
			if (add_dim(s, key, VALUE()))
				return 2;
		} else if (!strcmp(key, "--set")) {
			const char *v = VALUE();
			if (s->nsets == SW_MAX_SETS || !strchr(v, '=') || strchr(v, '\n')) {
				fprintf(stderr, "simsweep: --set '%s': expected KEY=VALUE (at most %d)\n",
					v, SW_MAX_SETS);
				return 2;
			}
			s->sets[s->nsets++] = strdup(v);
		} else if (!strcmp(key, "--loop") || !strcmp(key, "--streams") ||
			   !strcmp(key, "-j") || !strcmp(key, "--jobs") || !strcmp(key, "--point")) {
			if (count_arg(c, key, VALUE()))
				return 2;
		} else if (!strcmp(key, "--mode")) {
			const char *v = VALUE();
			if (strcmp(v, "full") && strcmp(v, "timing")) {
				fprintf(stderr, "simsweep: --mode '%s': need full or timing\n", v);
				return 2;
			}
			s->full = !strcmp(v, "full");
		} else if (!strcmp(key, "--retune")) {
			s->retune = 1;
		} else if (!strcmp(key, "--timeline")) {
			s->timeline = 1;
		} else if (!strcmp(key, "--emit-jobs")) {
			c->emit = 1;
		} else if (!strcmp(key, "--spec")) {
			c->spec_path = VALUE();
		} else if (!strcmp(key, "--merge")) {
			c->merge = VALUE();
		} else {
			fprintf(stderr, "simsweep: unknown option '%s' (try --help)\n", a);
			return 2;
		}
#undef VALUE
	}
	return -1;
}

/* --merge DIR, or --spec with or without --point: the exit status. */
static int run_existing(const struct cli *c)
{
	const struct sw_spec *s = &c->s;
	char err[2048];
	/* an existing study: everything else comes from its spec */
	if (s->soc || s->model || s->ndims || s->nsets || s->dir || c->emit) {
		fprintf(stderr, "simsweep: --spec and --merge take the study from its spec.txt; "
			"drop the other study options\n");
		return 2;
	}
	struct sw_spec r;
	if (sw_spec_read(c->merge ? c->merge : c->spec_path, &r, err, sizeof err)) {
		fprintf(stderr, "simsweep: %s\n", err);
		return 1;
	}
	int x, rc;
	unsigned failed = 0;
	if (c->merge) {
		x = sw_merge(&r, stderr, &failed, err, sizeof err);
		rc = x < 0 ? (fprintf(stderr, "simsweep: %s\n", err), 1) : x ? 1 : failed ? 3 : 0;
	} else if (c->have_point) {
		x = sw_run_point(&r, c->point, 0, err, sizeof err);
		rc = x ? (fprintf(stderr, "simsweep: %s\n", err), 1) : 0;
	} else {
		x = sw_run_local(&r, c->jobs, &failed, err, sizeof err);
		rc = x ? (fprintf(stderr, "simsweep: %s\n", err), 1) : failed ? 3 : 0;
	}
	sw_spec_free(&r);
	return rc;
}

/* --emit-jobs: the job files for the study s (written): the exit status. */
static int emit_jobs(const struct sw_spec *s, const char *argv0)
{
	char err[2048];
	/* jobs run this very binary, by its absolute path: another host
	 * sharing the file system finds it there */
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0)
		self[n] = 0;
	else if (!realpath(argv0, self))
		snprintf(self, sizeof self, "simsweep");
	if (sw_emit_jobs(s, self, err, sizeof err)) {
		fprintf(stderr, "simsweep: %s\n", err);
		return 1;
	}
	unsigned np = sw_npoints(s);
	printf("%u points: %s/jobs.txt (one command per point) and %s/sweep.sbatch\n"
	       "  GNU parallel:  parallel -j N < %s/jobs.txt   (several hosts sharing the "
	       "directory: add --sshlogin host1,host2)\n"
	       "  Slurm:         sbatch %s/sweep.sbatch\n"
	       "then:            %s --merge %s\n",
	       np, s->dir, s->dir, s->dir, s->dir, self, s->dir);
	return 0;
}

/* A new study: its spec written, then run here or emitted as jobs. */
static int run_new(struct cli *c, const char *argv0)
{
	struct sw_spec *s = &c->s;
	char err[2048];
	if (c->have_point) {
		fprintf(stderr, "simsweep: --point needs --spec\n");
		return 2;
	}
	if (!s->soc || !s->model || !s->dir) {
		fprintf(stderr, "simsweep: --soc, --model and --out are required (try --help)\n");
		return 2;
	}
	if (sw_spec_write(s, err, sizeof err)) {
		fprintf(stderr, "simsweep: %s\n", err);
		return 1;
	}
	if (c->emit)
		return emit_jobs(s, argv0);
	unsigned failed = 0;
	if (sw_run_local(s, c->jobs, &failed, err, sizeof err)) {
		fprintf(stderr, "simsweep: %s\n", err);
		return 1;
	}
	return failed ? 3 : 0;
}

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simsweep"))
		return 0;
	struct cli c;
	memset(&c, 0, sizeof c);
	c.jobs = 1;
	int rc = parse_args(argc, argv, &c);
	if (rc < 0)
		rc = c.merge || c.spec_path ? run_existing(&c) : run_new(&c, argv[0]);
	sw_spec_free(&c.s);
	return rc;
}
