/* simprof: the bottleneck advisor over a trace directory (traces/advisor.h).
 * Argument parsing only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advisor.h"
#include "soc.h"
#include "plot.h"
#include "quantify.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: simprof DIR [--json] [--top N] [--plot [--out D]]\n"
		"               [--model M.onnx [--soc S] [--batch N] [--fusion_switch_file F]\n"
		"                [--work W]]\n"
		"       simprof --thresholds\n"
		"Say what bounds a run from its trace directory (simrun --trace DIR): cube,\n"
		"vector, memory, launch, sync or parallelism, with the evidence and what to do.\n"
		"\n"
		"  --json         the report as JSON (verdict, evidence, recommendations, ops)\n"
		"  --top N        list the N ops with the most time (default 10; 0: all), and\n"
		"                 chart as many with --plot\n"
		"  --plot         also draw the timeline, op breakdown and roofline charts with\n"
		"                 gnuplot (PNG and SVG, with their data and scripts); without\n"
		"                 gnuplot the data and scripts are still written\n"
		"  --out D        where the charts go (default DIR/plots)\n"
		"  --thresholds   print the rules' thresholds (a Markdown table) and exit\n"
		"  --model M      the ONNX model the trace ran: recompile and re-simulate it as\n"
		"                 traced and as the recommendations would change it (batch x4,\n"
		"                 no task gap, 2x memory bandwidth, 2x DMA path, 2x vector\n"
		"                 width, fusion on)\n"
		"                 and report the measured change per image\n"
		"  --soc S        the chip (default: the trace's summary.json); for a trace\n"
		"                 without one (msprof's), its roofs\n"
		"  --batch N      the batch it ran at (default: the trace's)\n"
		"  --fusion_switch_file F  how it was compiled (adds the \"fusion on\" variant)\n"
		"  --work W       where the variants' traces go (default DIR/whatif)\n"
		"\n"
		"Exit status: 0 the report was printed (and the charts, or their data and\n"
		"scripts when gnuplot is missing, written); 1 the trace could not be read\n"
		"(the message names the file and line) or a chart failed; 2 bad arguments.\n");
}

/* The command line. */
struct cli {
	const char *dir, *out;
	int json, plot;
	struct st_quantify_opts q;
	unsigned long top;
	char work[4200]; /* q.work_dir's default: DIR/whatif */
};

/* --model, --soc, --batch, --fusion_switch_file, --work: 0, or 2 with the
 * message printed. */
static int quantify_arg(struct st_quantify_opts *q, const char *a, const char *v)
{
	if (!strcmp(a, "--model"))
		q->model = v;
	else if (!strcmp(a, "--soc"))
		q->soc = v;
	else if (!strcmp(a, "--fusion_switch_file"))
		q->fusion_switch_file = v;
	else if (!strcmp(a, "--work"))
		q->work_dir = v;
	else {
		char *end;
		errno = 0;
		unsigned long b = strtoul(v, &end, 10);
		if (*end || errno || b < 1 || b > 65536 || v[0] == '-') {
			fprintf(stderr, "simprof: --batch '%s': need 1..65536\n", v);
			return 2;
		}
		q->batch = (unsigned)b;
	}
	return 0;
}

/* The command line into c: -1 to go on, or the exit status (0: --help,
 * --thresholds). */
static int parse_args(int argc, char **argv, struct cli *c)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			c->json = 1;
		} else if (!strcmp(a, "--plot")) {
			c->plot = 1;
		} else if (!strcmp(a, "--out")) {
			if (i + 1 >= argc || !argv[i + 1][0]) {
				fprintf(stderr, "simprof: --out needs a directory\n");
				return 2;
			}
			c->out = argv[++i];
		} else if (!strcmp(a, "--model") || !strcmp(a, "--soc") || !strcmp(a, "--batch") ||
			   !strcmp(a, "--fusion_switch_file") || !strcmp(a, "--work")) {
			if (i + 1 >= argc || !argv[i + 1][0]) {
				fprintf(stderr, "simprof: %s needs a value\n", a);
				return 2;
			}
			if (quantify_arg(&c->q, a, argv[++i]))
				return 2;
		} else if (!strcmp(a, "--thresholds")) {
			adv_print_thresholds(stdout);
			return 0;
		} else if (!strcmp(a, "--top")) {
			const char *v = i + 1 < argc ? argv[++i] : "";
			char *end;
			errno = 0;
			unsigned long t = strtoul(v, &end, 10);
			if (!*v || *end || errno || t > 1000000 || v[0] == '-') {
				fprintf(stderr, "simprof: --top '%s': need a count 0..1000000\n", v);
				return 2;
			}
			c->top = t;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "simprof: unknown option '%s' (try --help)\n", a);
			return 2;
		} else if (!c->dir) {
			c->dir = a;
		} else {
			fprintf(stderr, "simprof: one trace directory at a time ('%s' and '%s')\n",
				c->dir, a);
			return 2;
		}
	}
	if (!c->dir) {
		fprintf(stderr, "simprof: a trace directory is required (try --help)\n");
		return 2;
	}
	if (c->out && !c->plot) {
		fprintf(stderr, "simprof: --out is where --plot writes; give --plot too\n");
		return 2;
	}
	return -1;
}

/* The report on stdout: text or JSON, with the measured variants when
 * --model re-simulated them.  0, or 1. */
static int print_report(const struct cli *c, const struct adv_report *r,
			const struct st_variant *var, unsigned nvar)
{
	if (c->json && c->q.model) {
		/* the report's object with the measured variants added */
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (!m)
			return 1;
		adv_print_json(m, r);
		fclose(m);
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
			len--;
		if (len && buf[len - 1] == '}')
			len--;
		fwrite(buf, 1, len, stdout);
		printf(", \"measured\": ");
		st_quantify_json(stdout, var, nvar);
		printf("}\n");
		free(buf);
	} else if (c->json) {
		adv_print_json(stdout, r);
	} else {
		adv_print_text(stdout, r);
		if (c->q.model)
			st_quantify_print(stdout, var, nvar);
	}
	return 0;
}

/* --plot: the charts (their news on stderr: the report went to stdout,
 * maybe JSON for a tool).  The exit status. */
static int plot(const struct cli *c)
{
	char err[1024];
	int rc = trc_plot(c->dir, c->out, (unsigned)c->top, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "simprof: %s\n", err);
		return 1;
	}
	if (rc > 0) /* no gnuplot: the data and scripts are there to draw later */
		fprintf(stderr, "simprof: %s\n", err);
	else
		fprintf(stderr, "simprof: charts written to %s%s\n", c->out ? c->out : c->dir,
			c->out ? "" : "/plots");
	return 0;
}

/* The advisor's report on dir (with --model, the re-simulated variants):
 * the exit status. */
static int report(struct cli *c)
{
	const char *dir = c->dir;
	struct st_quantify_opts *q = &c->q;
	struct adv_report *r;
	char err[1024];
	/* a trace without summary.json (msprof's): --soc gives the chip's roofs */
	char sum[4200];
	snprintf(sum, sizeof sum, "%s/summary.json", dir);
	int bare = access(sum, F_OK) != 0;
	struct soc_config chip;
	if (q->soc && bare && soc_load(q->soc, &chip, err, sizeof err)) {
		fprintf(stderr, "simprof: %s\n", err);
		return 1;
	}
	if (adv_analyze_chip(dir, q->soc && bare ? &chip : NULL, &r, err, sizeof err)) {
		fprintf(stderr, "simprof: %s\n", err);
		if (bare && !q->soc)
			fprintf(stderr, "simprof: for an msprof trace, name the chip: --soc S\n");
		return 1;
	}
	if (((q->soc && !bare) || q->batch || q->fusion_switch_file || q->work_dir) && !q->model) {
		fprintf(stderr, "simprof: --soc (but for a trace without summary.json), --batch, "
				"--fusion_switch_file and --work go with --model\n");
		adv_free(r);
		return 2;
	}
	adv_set_top(r, (unsigned)c->top);
	struct st_variant var[ST_MAX_VARIANTS];
	unsigned nvar = 0;
	if (q->model) {
		if (!q->work_dir) {
			snprintf(c->work, sizeof c->work, "%s/whatif", dir);
			q->work_dir = c->work;
		}
		if (st_quantify(r, dir, q, var, &nvar, err, sizeof err)) {
			fprintf(stderr, "simprof: --model %s: %s\n", q->model, err);
			adv_free(r);
			return 1;
		}
	}
	int rc = print_report(c, r, var, nvar);
	adv_free(r);
	return rc;
}

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simprof"))
		return 0;
	struct cli c = { .top = 10 };
	int rc = parse_args(argc, argv, &c);
	if (rc >= 0)
		return rc;
	if ((rc = report(&c)))
		return rc;
	if (fflush(stdout)) {
		fprintf(stderr, "simprof: cannot write the report\n");
		return 1;
	}
	return c.plot ? plot(&c) : 0;
}
