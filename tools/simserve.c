/* simserve: request-level serving simulation of a model on a simulated
 * Ascend NPU (study/serve.h).
 *   simserve --model m_b1.om,m_b4.om,m_b16.om --qps 800 --requests 20000
 *            --max-batch 16 --max-queue-delay-us 2000 --streams 2 [--json]
 *   simserve --service-table t.csv --qps-sweep 100:2000:100 --slo-p99-ms 15
 *   simserve --model ... --trace arrivals.csv --csv requests.csv
 *   simserve --model a_b1.om,a_b4.om:3 --model b.om:1 --qps 500 --requests 9000 */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om.h"
#include "serve.h"
#include "soc.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: simserve (--model A.om[,B.om...][:W] | --service-table FILE[:W])... ARRIVALS\n"
		"                [options]\n"
		"Simulate serving requests: arrivals, a dynamic batcher, streams on one chip.\n"
		"A model is a set of batch variants (one fixed-batch .om each, or one .om of\n"
		"simatc --dynamic_batch_size holding them all; the batch is dim 0 of the first\n"
		"input); a batch of n items runs the smallest variant >= n, padded.\n\n"
		"model and device:\n"
		"  --model A.om,B.om,...   the variants; their service times are characterised\n"
		"                          once by simulating them (timing mode), with the input\n"
		"                          and output copies over PCIe, at 1..--streams in flight\n"
		"                          (with 2 or more, also as pairs: one start offset per\n"
		"                          kernel of the leader the follower's first one meets)\n"
		"  --model ...:W           (repeated) several models share the chip, each with\n"
		"                          its own batcher queue; W (default 1) is its share of\n"
		"                          generated requests (a trace names each request's model)\n"
		"  --soc NAME|FILE.ini     the chip (default: the one the .om was compiled for)\n"
		"  --set SEC.KEY=VALUE     override a SoC key (repeatable)\n"
		"  --save-table FILE       write the characterised service table (CSV)\n"
		"  --service-table FILE    use a table instead of simulating (batch,concurrency,\n"
		"                          h2d_us,device_us,d2h_us[,fixed_us]); FILE:W, repeated,\n"
		"                          as --model\n"
		"  --batch-sizes B1,B2,..  serve only these compiled variants\n"
		"  --streams N             batches in flight on the chip (default 1)\n"
		"  --loops N               iterations per characterisation (default 2; the last\n"
		"                          is measured)\n"
		"  --exact N               after the run, replay its first N batches on the\n"
		"                          simulated chip (each at its start instant, all\n"
		"                          streams at once) and report the fast mode's error\n"
		"arrivals (one of --qps, --schedule, --trace; and --requests or --duration):\n"
		"  --qps R                 Poisson arrivals, R requests/s on average\n"
		"  --bursty ON_MS,OFF_MS   on/off: Poisson at R*(on+off)/on while on, silent off\n"
		"  --schedule T:R,T:R,...  Poisson at rate R from second T on (T ascending from 0;\n"
		"                          the last rate holds), e.g. 0:500,10:2500,20:500\n"
		"  --trace FILE            replay a CSV: timestamp_us,model[,size] (sorted)\n"
		"  --name NAME             the model name trace lines carry (default: the first\n"
		"                          .om's file name without .om and _b<N>)\n"
		"  --requests N            stop after N arrivals\n"
		"  --duration S            stop arrivals at S seconds\n"
		"  --seed N                the arrivals' seed (default 1)\n"
		"batcher:\n"
		"  --max-batch N           items per batch (default: the largest variant)\n"
		"  --max-queue-delay-us T  wait up to T us for a fuller batch (default 0)\n"
		"  --slo-p99-ms T          the SLO: attainment, feasibility, the sweep's best QPS;\n"
		"                          alone it selects the SLO-aware batcher\n"
		"  --policy fifo|slo       fifo: close a batch at --max-batch items or after\n"
		"                          --max-queue-delay-us; slo: as large a batch as the\n"
		"                          SLO allows, from the queue and the service times\n"
		"                          (default: slo with --slo-p99-ms, else fifo)\n"
		"  --host-us PRE[:POST]    host time per request before the queue and after the\n"
		"                          output copy (default 0)\n"
		"output:\n"
		"  --csv FILE              one line per request\n"
		"  --json                  the summary as JSON (with --exact, a second JSON line\n"
		"                          for the replay)\n"
		"  --qps-sweep LO:HI:STEP  latency and throughput at each QPS (same seed); with\n"
		"                          --slo-p99-ms, the highest QPS meeting it\n"
		"  --plot DIR              with --qps-sweep: DIR/serve_sweep.{dat,gp,png,svg}\n");
}

static int parse_num(const char *flag, const char *s, double lo, double *v)
{
	char *e;
	errno = 0;
	double d = strtod(s, &e);
	if (errno || e == s || *e || !isfinite(d) || d < lo) {
		fprintf(stderr, "simserve: %s '%s': expected a number >= %g\n", flag, s, lo);
		return -1;
	}
	*v = d;
	return 0;
}

static int parse_u(const char *flag, const char *s, unsigned long lo, unsigned long hi,
		   unsigned long long *v)
{
	char *e;
	errno = 0;
	unsigned long long u = strtoull(s, &e, 10);
	if (errno || e == s || *e || s[0] == '-' || u < lo || u > hi) {
		fprintf(stderr, "simserve: %s '%s': expected an integer in %lu..%lu\n", flag, s, lo,
			hi);
		return -1;
	}
	*v = u;
	return 0;
}

/* "a,b,c" -> up to max pieces, each strdup'd into out */
static int split(const char *flag, const char *s, char **out, unsigned max, unsigned *n)
{
	*n = 0;
	for (const char *p = s;;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (!l || *n == max) {
			fprintf(stderr, "simserve: %s '%s': expected 1..%u comma-separated items\n",
				flag, s, max);
			return -1;
		}
		out[(*n)++] = strndup(p, l);
		if (!c)
			return 0;
		p = c + 1;
	}
}

/* One served model: its variants' .om files, or a service table. */
struct served {
	char *paths[SV_MAX_VARIANTS];
	unsigned n;
	char *table;
	double weight;
};

/* The command line. */
struct cli {
	struct sv_config c;
	struct sv_arrival_opts ao;
	struct served m[SV_MAX_MODELS];
	unsigned nserved, nsizes, have_qps, json, sweep;
	unsigned sizes[SV_MAX_VARIANTS];
	unsigned long long loops, exact;
	int policy; /* 0: by --slo-p99-ms, 1: fifo, 2: slo */
	const char *soc, *table_out, *csv, *plot, *name;
	const char *sets[64];
	unsigned nsets;
	double sw_lo, sw_hi, sw_step;
	char socname[64]; /* the SoC the first model was compiled for, when no --soc */
};

/* --model A.om[,B.om...][:W] or --service-table FILE[:W] into a new served
 * model: a last ":W" that is a number is the weight (default 1). */
static int add_served(struct cli *o, const char *flag, const char *v, int table)
{
	if (o->nserved == SV_MAX_MODELS) {
		fprintf(stderr, "simserve: at most %d models (--model and --service-table)\n",
			SV_MAX_MODELS);
		return -1;
	}
	struct served *m = &o->m[o->nserved];
	m->weight = 1;
	char *val = strdup(v), *colon = strrchr(val, ':');
	if (colon && colon[1]) {
		char *e;
		errno = 0;
		double w = strtod(colon + 1, &e);
		if (!*e && !errno) {
			if (!(w > 0) || !isfinite(w)) {
				fprintf(stderr, "simserve: %s '%s': the weight %s must be a number > 0\n",
					flag, v, colon + 1);
				free(val);
				return -1;
			}
			m->weight = w;
			*colon = 0;
		}
	}
	int rc = 0;
	if (table)
		m->table = val;
	else {
		rc = split(flag, val, m->paths, SV_MAX_VARIANTS, &m->n);
		free(val);
	}
	o->nserved++;
	return rc;
}

/* The command line into o: -1 to go on, or the exit status (0: --help). */
static int parse_args(int argc, char **argv, struct cli *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		char key[64];
		const char *eq = strchr(a, '=');
		if (a[0] == '-' && a[1] == '-' && eq && (size_t)(eq - a) < sizeof key &&
		    strncmp(a, "--set", 5)) {
			snprintf(key, sizeof key, "%.*s", (int)(eq - a), a);
			val = eq + 1;
		} else if (!strncmp(a, "--set=", 6)) {
			snprintf(key, sizeof key, "--set");
			val = a + 6;
		} else {
			snprintf(key, sizeof key, "%s", a);
		}
#define VALUE()                                                                              \
	(val ? val : (i + 1 < argc ? argv[++i] : (fprintf(stderr, "simserve: %s needs a value\n", \
							  key), exit(2), "")))
		unsigned long long u;
		if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(key, "--model")) {
			if (add_served(o, key, VALUE(), 0))
				return 2;
		} else if (!strcmp(key, "--soc")) {
			o->soc = VALUE();
		} else if (!strcmp(key, "--set")) {
			if (o->nsets == 64) {
				fprintf(stderr, "simserve: at most 64 --set\n");
				return 2;
			}
			o->sets[o->nsets++] = VALUE();
		} else if (!strcmp(key, "--save-table")) {
			o->table_out = VALUE();
		} else if (!strcmp(key, "--service-table")) {
			if (add_served(o, key, VALUE(), 1))
				return 2;
		} else if (!strcmp(key, "--batch-sizes")) {
			char *p[SV_MAX_VARIANTS];
			if (split(key, VALUE(), p, SV_MAX_VARIANTS, &o->nsizes))
				return 2;
			for (unsigned k = 0; k < o->nsizes; k++) {
				int bad = parse_u(key, p[k], 1, SV_HIST_MAX, &u);
				free(p[k]);
				if (bad)
					return 2;
				o->sizes[k] = (unsigned)u;
			}
		} else if (!strcmp(key, "--streams")) {
			if (parse_u(key, VALUE(), 1, 64, &u))
				return 2;
			o->c.streams = (unsigned)u;
		} else if (!strcmp(key, "--loops")) {
			if (parse_u(key, VALUE(), 2, 100, &o->loops))
				return 2;
		} else if (!strcmp(key, "--exact")) {
			if (parse_u(key, VALUE(), 1, 1000000, &o->exact))
				return 2;
		} else if (!strcmp(key, "--qps")) {
			const char *v = VALUE();
			if (parse_num(key, v, -INFINITY, &o->ao.qps))
				return 2;
			if (!(o->ao.qps > 0)) {
				fprintf(stderr, "simserve: --qps %s: the arrival rate must be > 0\n", v);
				return 2;
			}
			o->have_qps = 1;
		} else if (!strcmp(key, "--bursty")) {
			const char *v = VALUE();
			char *e;
			o->ao.on_ms = strtod(v, &e);
			if (*e != ',' || parse_num(key, e + 1, 0, &o->ao.off_ms) || !(o->ao.on_ms > 0)) {
				fprintf(stderr, "simserve: --bursty '%s': expected ON_MS,OFF_MS (on > 0, "
					"off >= 0)\n", v);
				return 2;
			}
			o->ao.kind = SV_ARRIVE_ONOFF;
		} else if (!strcmp(key, "--schedule")) {
			const char *v = VALUE();
			char *p[SV_MAX_SCHEDULE];
			unsigned n;
			if (split(key, v, p, SV_MAX_SCHEDULE, &n))
				return 2;
			int bad = 0;
			for (unsigned k = 0; k < n; k++) {
				char *colon = strchr(p[k], ':'), *e1, *e2;
				if (!colon) {
					bad = 1;
				} else {
					o->ao.at_s[k] = strtod(p[k], &e1);
					o->ao.rate[k] = strtod(colon + 1, &e2);
					bad |= e1 != colon || *e2 || colon == p[k] || !colon[1] ||
					       !isfinite(o->ao.at_s[k]) || !isfinite(o->ao.rate[k]) ||
					       o->ao.rate[k] < 0 || (k ? o->ao.at_s[k] <= o->ao.at_s[k - 1]
								    : o->ao.at_s[k] != 0);
				}
				free(p[k]);
			}
			if (bad) {
				fprintf(stderr, "simserve: --schedule '%s': expected T_S:QPS,... with "
					"times ascending from 0 and rates >= 0\n", v);
				return 2;
			}
			o->ao.nsched = n;
		} else if (!strcmp(key, "--trace")) {
			o->ao.trace = VALUE();
		} else if (!strcmp(key, "--name")) {
			o->name = VALUE();
		} else if (!strcmp(key, "--requests")) {
			if (parse_u(key, VALUE(), 1, 100000000, &u))
				return 2;
			o->ao.max_requests = (size_t)u;
		} else if (!strcmp(key, "--duration")) {
			if (parse_num(key, VALUE(), 1e-9, &o->ao.duration_s))
				return 2;
		} else if (!strcmp(key, "--seed")) {
			if (parse_u(key, VALUE(), 0, ~0ul, &u))
				return 2;
			o->ao.seed = u;
		} else if (!strcmp(key, "--max-batch")) {
			if (parse_u(key, VALUE(), 1, SV_HIST_MAX, &u))
				return 2;
			o->c.max_batch = (unsigned)u;
		} else if (!strcmp(key, "--max-queue-delay-us")) {
			if (parse_num(key, VALUE(), 0, &o->c.max_queue_delay_us))
				return 2;
		} else if (!strcmp(key, "--slo-p99-ms")) {
			const char *v = VALUE();
			if (parse_num(key, v, 0, &o->c.slo_p99_ms))
				return 2;
			if (!(o->c.slo_p99_ms > 0)) {
				fprintf(stderr, "simserve: --slo-p99-ms %s: must be > 0\n", v);
				return 2;
			}
		} else if (!strcmp(key, "--policy")) {
			const char *v = VALUE();
			if (!strcmp(v, "fifo"))
				o->policy = 1;
			else if (!strcmp(v, "slo"))
				o->policy = 2;
			else {
				fprintf(stderr, "simserve: --policy '%s': expected fifo or slo\n", v);
				return 2;
			}
		} else if (!strcmp(key, "--host-us")) {
			const char *v = VALUE();
			char pre[64];
			const char *colon = strchr(v, ':');
			snprintf(pre, sizeof pre, "%.*s", colon ? (int)(colon - v) : (int)strlen(v), v);
			if (parse_num(key, pre, 0, &o->c.host_pre_us) ||
			    (colon && parse_num(key, colon + 1, 0, &o->c.host_post_us)))
				return 2;
		} else if (!strcmp(key, "--csv")) {
			o->csv = VALUE();
		} else if (!strcmp(key, "--json")) {
			o->json = 1;
		} else if (!strcmp(key, "--qps-sweep")) {
			const char *v = VALUE();
			char *e1, *e2, *e3;
			o->sw_lo = strtod(v, &e1);
			o->sw_hi = *e1 == ':' ? strtod(e1 + 1, &e2) : 0;
			o->sw_step = *e1 == ':' && *e2 == ':' ? strtod(e2 + 1, &e3) : 0;
			if (*e1 != ':' || *e2 != ':' || *e3 || !(o->sw_lo > 0) || !(o->sw_hi >= o->sw_lo) ||
			    !(o->sw_step > 0)) {
				fprintf(stderr, "simserve: --qps-sweep '%s': expected LO:HI:STEP with "
					"0 < LO <= HI and STEP > 0\n", v);
				return 2;
			}
			o->sweep = 1;
		} else if (!strcmp(key, "--plot")) {
			o->plot = VALUE();
		} else {
			fprintf(stderr, "simserve: unknown option '%s' (see --help)\n", a);
			return 2;
		}
#undef VALUE
	}
	return -1;
}

/* The options together: -1 to go on, or 2 with the message printed. */
static int check_args(struct cli *o)
{
	if (!o->nserved) {
		fprintf(stderr, "simserve: give either --model A.om[,B.om...] or --service-table "
			"FILE (see --help)\n");
		return 2;
	}
	if (o->nserved > 1) {
		const char *one = o->name ? "--name" : o->table_out ? "--save-table" :
				  o->nsizes ? "--batch-sizes" : o->sweep ? "--qps-sweep" : NULL;
		if (one) {
			fprintf(stderr, "simserve: %s applies to one model; %u are served (run them "
				"one at a time for it)\n", one, o->nserved);
			return 2;
		}
	}
	int sched = o->ao.nsched > 0, bursty = o->ao.kind == SV_ARRIVE_ONOFF;
	if (!!o->ao.trace + !!o->have_qps + !!o->sweep + sched != 1 ||
	    (bursty && !(o->have_qps || o->sweep))) {
		fprintf(stderr, "simserve: give one of --qps R (optionally --bursty), --schedule, "
			"--trace FILE or --qps-sweep LO:HI:STEP\n");
		return 2;
	}
	if (o->ao.trace)
		o->ao.kind = SV_ARRIVE_TRACE;
	else if (sched)
		o->ao.kind = SV_ARRIVE_SCHEDULE;
	if (o->policy == 2 && !(o->c.slo_p99_ms > 0)) {
		fprintf(stderr, "simserve: --policy slo needs --slo-p99-ms\n");
		return 2;
	}
	o->c.policy = o->policy == 2 || (!o->policy && o->c.slo_p99_ms > 0) ? SV_POLICY_SLO
									    : SV_POLICY_FIFO;
	int all_om = 1;
	for (unsigned m = 0; m < o->nserved; m++)
		all_om &= !o->m[m].table;
	if (o->exact && (!all_om || o->sweep)) {
		fprintf(stderr, "simserve: --exact replays one run's batches on the .om files of "
			"--model (not a --service-table, not a --qps-sweep)\n");
		return 2;
	}
	if (o->plot && !o->sweep) {
		fprintf(stderr, "simserve: --plot draws a --qps-sweep\n");
		return 2;
	}
	if (o->sweep && o->csv) {
		fprintf(stderr, "simserve: --csv writes one run's requests, not a --qps-sweep\n");
		return 2;
	}
	return -1;
}

/* The chip, from --soc or the first .om's SoC, with the --set keys.  0, or 1
 * with the message. */
static int load_soc(struct cli *o, struct soc_config *cfg)
{
	char err[2048];
	if (!o->soc) {
		const char *first = NULL;
		for (unsigned m = 0; m < o->nserved && !first; m++)
			if (!o->m[m].table)
				first = o->m[m].paths[0];
		if (!first)
			return 0; /* tables only: no chip is simulated */
		struct om_model om;
		if (om_read(first, &om, NULL, err, sizeof err)) {
			fprintf(stderr, "simserve: --model %s: %s\n", first, err);
			return 1;
		}
		snprintf(o->socname, sizeof o->socname, "%s", om.soc);
		om_free(&om);
		o->soc = o->socname;
	}
	if (soc_load(o->soc, cfg, err, sizeof err)) {
		fprintf(stderr, "simserve: --soc %s: %s\n", o->soc, err);
		return 1;
	}
	for (unsigned k = 0; k < o->nsets; k++)
		if (soc_set(cfg, o->sets[k], err, sizeof err)) {
			fprintf(stderr, "simserve: --set %s: %s\n", o->sets[k], err);
			return 1;
		}
	return 0;
}

/* Served model m's service table: read (--service-table) or characterised
 * on cfg from its .om files (and saved with --save-table).  0, or 1 with
 * the message. */
static int load_table(struct cli *o, unsigned m, struct sv_table *t,
		      const struct soc_config *cfg)
{
	char err[2048];
	const struct served *sm = &o->m[m];
	if (sm->table) {
		if (sv_table_read(sm->table, t, err, sizeof err)) {
			fprintf(stderr, "simserve: --service-table %s\n", err);
			return 1;
		}
		if (t->max_conc < o->c.streams) {
			fprintf(stderr, "simserve: --service-table %s: characterised up to %u in "
				"flight, --streams %u needs %u\n", sm->table, t->max_conc, o->c.streams,
				o->c.streams);
			sv_table_free(t);
			return 1;
		}
		return 0;
	}
	if (sv_table_characterise((const char *const *)sm->paths, sm->n, cfg, o->c.streams,
				  (unsigned)o->loops, stderr, t, err, sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		return 1;
	}
	if (o->table_out && sv_table_write(o->table_out, t, err, sizeof err)) {
		fprintf(stderr, "simserve: --save-table %s\n", err);
		sv_table_free(t);
		return 1;
	}
	return 0;
}

/* Every model's table, after checking that the models given as .om files
 * fit the chip's memory together.  0, or 1 with the message. */
static int load_tables(struct cli *o, struct sv_table *t, struct soc_config *cfg)
{
	char err[2048];
	if (load_soc(o, cfg))
		return 1;
	const char *const *paths[SV_MAX_MODELS];
	unsigned n[SV_MAX_MODELS], nom = 0;
	for (unsigned m = 0; m < o->nserved; m++)
		if (!o->m[m].table) {
			paths[nom] = (const char *const *)o->m[m].paths;
			n[nom++] = o->m[m].n;
		}
	/* one model alone is checked by its characterisation */
	if (nom > 1 && sv_fit_check(paths, n, nom, cfg, o->c.streams, err, sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		return 1;
	}
	for (unsigned m = 0; m < o->nserved; m++)
		if (load_table(o, m, &t[m], cfg)) {
			while (m-- > 0)
				sv_table_free(&t[m]);
			return 1;
		}
	for (unsigned m = 0; m < o->nserved; m++)
		for (unsigned j = 0; j < m; j++)
			if (!strcmp(t[m].name, t[j].name)) {
				fprintf(stderr, "simserve: two models are named '%s' (a trace tells "
					"them apart by name): rename a file or a table's '# model' "
					"line\n", t[m].name);
				for (unsigned k = 0; k < o->nserved; k++)
					sv_table_free(&t[k]);
				return 1;
			}
	return 0;
}

/* A --qps-sweep of one model.  The exit status. */
static int sweep(struct cli *o, struct sv_table *t)
{
	char err[2048];
	struct sv_sweep_point *p;
	size_t n;
	double best;
	if (sv_sweep(&o->c, t, &o->ao, o->sw_lo, o->sw_hi, o->sw_step, &p, &n, &best, err,
		     sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		return 1;
	}
	sv_sweep_print(stdout, &o->c, p, n, best, o->json);
	int rc = 0;
	if (o->plot) {
		int pr = sv_sweep_plot(o->plot, &o->c, t, p, n, best, err, sizeof err);
		if (pr) {
			fprintf(stderr, "simserve: --plot: %s\n", err);
			rc = pr < 0 ? 1 : 0;
		} else if (!o->json) {
			printf("plots: %s/serve_sweep.png, .svg (data serve_sweep.dat, script "
			       "serve_sweep.gp)\n", o->plot);
		}
	}
	free(p);
	return rc;
}

/* The summary of a run: one model's, or each model's and all together. */
static int report(struct cli *o, const struct sv_table *t, const struct sv_run *run)
{
	char err[2048];
	unsigned nt = o->nserved;
	if (nt == 1) {
		struct sv_summary s;
		if (sv_summarise(&o->c, t, run, &s, err, sizeof err)) {
			fprintf(stderr, "simserve: %s\n", err);
			return 1;
		}
		if (o->json)
			sv_print_json(stdout, &o->c, t, &s);
		else
			sv_print_text(stdout, &o->c, t, &s);
		return 0;
	}
	struct sv_summary *s = calloc(nt + 1, sizeof *s);
	double w[SV_MAX_MODELS];
	if (!s) {
		fprintf(stderr, "simserve: out of memory\n");
		return 1;
	}
	for (unsigned m = 0; m <= nt; m++) {
		if (m < nt)
			w[m] = o->m[m].weight;
		if (sv_summarise_models(&o->c, t, nt, run, m < nt ? (int)m : -1, &s[m], err,
					sizeof err)) {
			fprintf(stderr, "simserve: %s\n", err);
			free(s);
			return 1;
		}
	}
	if (o->json)
		sv_print_models_json(stdout, &o->c, t, w, nt, s);
	else
		sv_print_models_text(stdout, &o->c, t, w, nt, s);
	free(s);
	return 0;
}

/* The arrivals served from the tables t: one run (and its --exact replay)
 * or a --qps-sweep.  The exit status. */
static int serve(struct cli *o, struct sv_table *t, const struct soc_config *cfg)
{
	char err[2048];
	unsigned nt = o->nserved;
	if (o->nsizes && sv_table_select(t, o->sizes, o->nsizes, err, sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		return 1;
	}
	o->ao.model = o->name ? o->name : t->name;
	if (nt > 1) {
		o->ao.nmodels = nt;
		for (unsigned m = 0; m < nt; m++) {
			o->ao.names[m] = t[m].name;
			o->ao.weight[m] = o->m[m].weight;
		}
	}
	if (o->sweep)
		return sweep(o, t);
	struct sv_arrivals a;
	if (sv_arrivals_make(&o->ao, &a, err, sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		return 1;
	}
	struct sv_run run;
	if (sv_simulate_models(&o->c, t, nt, &a, &run, err, sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		sv_arrivals_free(&a);
		return 1;
	}
	sv_arrivals_free(&a);
	if (o->csv && sv_write_csv(o->csv, &run, err, sizeof err)) {
		fprintf(stderr, "simserve: %s\n", err);
		sv_run_free(&run);
		return 1;
	}
	int rc = report(o, t, &run);
	if (!rc && o->exact) {
		struct sv_exact x;
		const char *const *paths[SV_MAX_MODELS];
		unsigned n[SV_MAX_MODELS];
		for (unsigned m = 0; m < nt; m++) {
			paths[m] = (const char *const *)o->m[m].paths;
			n[m] = o->m[m].n;
		}
		if (sv_exact_replay_models(paths, n, nt, cfg, &o->c, t, &run, (size_t)o->exact, &x,
					   err, sizeof err)) {
			fprintf(stderr, "simserve: --exact: %s\n", err);
			rc = 1;
		} else {
			sv_exact_print(stdout, &x, o->json);
		}
	}
	sv_run_free(&run);
	return rc;
}

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simserve"))
		return 0;
	struct cli o = { .c = { .streams = 1 },
			 .ao = { .kind = SV_ARRIVE_POISSON, .seed = 1 },
			 .loops = 2 };
	int rc = parse_args(argc, argv, &o);
	if (rc < 0)
		rc = check_args(&o);
	if (rc < 0) {
		struct sv_table t[SV_MAX_MODELS];
		struct soc_config cfg;
		if (load_tables(&o, t, &cfg)) {
			rc = 1;
		} else {
			rc = serve(&o, t, &cfg);
			for (unsigned m = 0; m < o.nserved; m++)
				sv_table_free(&t[m]);
		}
	}
	for (unsigned m = 0; m < o.nserved; m++) {
		for (unsigned k = 0; k < o.m[m].n; k++)
			free(o.m[m].paths[k]);
		free(o.m[m].table);
	}
	return rc;
}
