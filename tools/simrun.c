/* simrun: run a model or a kernel on a simulated Ascend device.
 *   simrun --soc Ascend310 model.om [--loop N] [--streams N] [--trace [DIR]] [--json]
 *   simrun --soc Ascend910 --kernel k.s --block-dim 4 [--mode=timing] [--json]
 * Kernel arguments are given in order with --alloc (a GM buffer; its address
 * is the argument) and --arg (a scalar). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "inputs.h"
#include "model.h"
#include "om.h"
#include "point.h"
#include "sim.h"
#include "tensor_io.h"
#include "runtime.h"
#include "summary.h"
#include "trace.h"
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: simrun [--soc SOC] MODEL.om [--input-dir D] [--output-dir O] [options]\n"
		"       simrun --soc SOC --kernel FILE [options]\n"
		"Run a compiled model, or one kernel (.s source or simas output), on a simulated\n"
		"Ascend NPU.\n\n"
		"  --input-dir D         read input_N.pb (ONNX TensorProto); default: seeded random\n"
		"                        (float inputs zero in timing mode, where no value counts)\n"
		"  --image FILE          raw bytes of the first uint8 input (an AIPP model's image,\n"
		"                        in its input_format); the size must match exactly\n"
		"                        (float32 in [-1,1); int32/int64 indices in [0, the\n"
		"                        smallest dimension > 1 of the Gather tables they index))\n"
		"  --output-dir O        write output_N.pb\n"
		"  --loop N              executions per stream (default 2: first and warm); the\n"
		"                        later ones are simulated in timing mode (same cycles)\n"
		"  --streams N           run N model instances concurrently, one per stream\n"
		"  --dynamic-batch N     a dynamic-batch model (simatc --dynamic_batch_size): run\n"
		"                        batch N, on its program for N or, when there is none,\n"
		"                        the next larger one with the inputs padded with zeros\n"
		"                        (the report says so; ACL's aclmdlSetDynamicBatchSize\n"
		"                        takes compiled sizes only); default: the largest\n"
		"  --dynamic-dims V,V..  a dynamic-dims model (simatc --dynamic_dims): run the\n"
		"                        program of that profile (its -1 dimensions' values);\n"
		"                        default: the last profile's\n"
		"  --batch-inputs        every subdirectory of --input-dir is an input set, run\n"
		"                        once each (round robin over the streams); outputs go to\n"
		"                        --output-dir/<subdirectory>/\n"
		"  --trace [DIR]         write op_summary.csv, task_time.csv, timeline.json and\n"
		"                        summary.json (default DIR ./simprof_<model>_<time>)\n"
		"  --soc NAME|FILE.ini   chip configuration (Ascend310, Ascend910, Ascend310P3);\n"
		"                        a model's default: the SoC it was compiled for\n"
		"  --kernel FILE         the kernel\n"
		"  --block-dim N         blocks to run, spread over the AI cores (default 1)\n"
		"  --alloc BYTES[:rand]  allocate a GM buffer (zeroed, or random fp16 in [-1,1))\n"
		"                        and pass its address as the next kernel argument\n"
		"  --arg VALUE           pass an integer as the next kernel argument\n"
		"  --mode full|timing    timing skips the arithmetic; cycles are identical\n"
		"  --set SEC.KEY=VALUE   override a SoC configuration key (repeatable)\n"
		"  --seed N              seed for :rand buffers (default 1)\n"
		"  --json                print {\"cycles\", \"pipes\", ...} as JSON\n"
		"  --stats               print every statistic, gem5 style\n"
		"  --trace-insns FILE    write start, end, done cycle, core, pipe, pc and text\n"
		"                        of every pipe instruction (- for stdout)\n"
		"  --max-cycles N        stop a kernel block that runs past N cycles, with an error\n"
		"                        naming core, pipe and pc (default: one second of\n"
		"                        simulated time at the SoC's clock)\n"
		"  --dump-config         print the effective SoC configuration and exit\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *e;
	errno = 0;
	unsigned long long u = strtoull(s, &e, 0);
	if (errno || e == s || *e || s[0] == '-')
		return -1;
	*v = u;
	return 0;
}

/* A kernel run as a one-task model, so that it gets the same trace
 * directory as a model (simprof reads kernels' traces like models'). */
static int traced_kernel(struct sim_device *dev, const struct sim_kernel *k, unsigned block_dim,
			 const int64_t *args, unsigned nargs, const char *dir, int quiet,
			 const struct trc_spans *spans, struct sim_result *res)
{
	memset(res, 0, sizeof *res);
	const struct soc_config *cfg = sim_device_config(dev);
	struct om_task task = { .kernel = 0, .block_dim = block_dim };
	struct om_kernel kern = { .code = NULL };
	struct om_model om = { .tasks = &task, .ntasks = 1, .kernels = &kern, .nkernels = 1 };
	snprintf(task.name, sizeof task.name, "%s", k->name);
	snprintf(task.op_type, sizeof task.op_type, "kernel");
	snprintf(kern.name, sizeof kern.name, "%s", k->name);
	snprintf(om.name, sizeof om.name, "%s", k->name);
	struct rt_device *rt = rt_device_wrap(dev, res->error, sizeof res->error);
	if (!rt)
		return -1;
	struct rt_stream *s = rt_default_stream(rt);
	int rc = -1, id = rt_exec_begin(s, &om);
	if (id < 0 ||
	    rt_launch_task_async(s, k, args, nargs, &om, 0, id, res->error, sizeof res->error) ||
	    rt_exec_end(s, id)) {
		if (!res->error[0])
			snprintf(res->error, sizeof res->error, "out of memory");
		goto done;
	}
	if (rt_synchronize(rt, res->error, sizeof res->error))
		goto done;
	size_t nt, ne;
	const struct trc_task *t = rt_tasks(rt, &nt);
	const struct trc_exec *e = rt_execs(rt, &ne);
	struct trc_summary sum;
	if (trc_summarize(cfg, &om, t, nt, e, ne, 0, &sum, res->error, sizeof res->error))
		goto done;
	struct trc_input ti = { cfg, &om, t, nt, e, ne, spans, &sum };
	if (trc_write(dir, &ti, res->error, sizeof res->error))
		goto done;
	res->start_cycle = t[0].start;
	res->end_cycle = t[0].end;
	res->cycles = t[0].end - t[0].start;
	res->ncores = t[0].cores;
	res->total = t[0].st;
	res->core = calloc((size_t)cfg->core_count, sizeof *res->core);
	if (!quiet)
		printf("trace written to %s\n", dir);
	rc = res->core ? 0 : -1;
done:
	rt_device_free(rt);
	return rc;
}

struct model_opts {
	const char *indir, *outdir, *trace;
	int json, batch_inputs;
	unsigned loop, streams;
	uint64_t seed;
	const char *image; /* --image: raw bytes of the first uint8 input */
	uint64_t dyn_batch; /* --dynamic-batch: 0, or the batch to run */
	const char *dyn_dims; /* --dynamic-dims: NULL, or the profile to run */
};

static int run_model(const char *path, const struct soc_config *cfg,
		     const struct sim_options *opt, const struct model_opts *mo);

/* The command line. */
struct cli {
	const char *soc, *kernel, *model;
	const char *sets[256]; /* --set, in order */
	unsigned nsets, block_dim, nargs;
	struct {
		int is_alloc, rand; /* --alloc (a GM buffer, :rand filled) or --arg */
		uint64_t v;         /* the byte count or the value */
	} args[SIM_MAX_ARGS];
	int stats, dump;
	struct model_opts mo;
	struct sim_options opt;
	char trace_default[512]; /* mo.trace points here: --trace without a DIR */
	char om_soc[64];         /* the SoC the model was compiled for, when no --soc */
};

/* --alloc BYTES[:rand|:zero] or --arg VALUE (key says which): 0, or 2 */
static int kernel_arg(struct cli *c, const char *key, const char *s)
{
	if (c->nargs == SIM_MAX_ARGS) {
		fprintf(stderr, "simrun: at most %d kernel arguments\n", SIM_MAX_ARGS);
		return 2;
	}
	char num[64];
	snprintf(num, sizeof num, "%s", s);
	int is_alloc = key[2] == 'a' && key[3] == 'l', rnd = 0;
	char *colon = strchr(num, ':');
	if (is_alloc && colon) {
		if (strcmp(colon, ":rand") && strcmp(colon, ":zero")) {
			fprintf(stderr, "simrun: --alloc '%s': suffix must be :rand or :zero\n", s);
			return 2;
		}
		rnd = !strcmp(colon, ":rand");
		*colon = 0;
	}
	uint64_t v;
	int bad;
	if (is_alloc)
		bad = parse_u64(num, &v) || v == 0;
	else {
		char *e;
		errno = 0;
		v = (uint64_t)strtoll(num, &e, 0);
		bad = errno || e == num || *e;
	}
	if (bad) {
		fprintf(stderr, "simrun: %s '%s': not a valid %s\n", key, s,
			is_alloc ? "byte count" : "integer");
		return 2;
	}
	c->args[c->nargs].is_alloc = is_alloc;
	c->args[c->nargs].rand = rnd;
	c->args[c->nargs].v = v;
	c->nargs++;
	return 0;
}

/* A numeric option key=s: 0, or 2 with the message. */
static int number_arg(struct cli *c, const char *key, const char *s)
{
	uint64_t v;
	if (!strcmp(key, "--block-dim")) {
		if (parse_u64(s, &v) || v < 1 || v > 65535) {
			fprintf(stderr, "simrun: --block-dim '%s': need 1..65535\n", s);
			return 2;
		}
		c->block_dim = (unsigned)v;
	} else if (!strcmp(key, "--max-cycles")) {
		if (parse_u64(s, &c->opt.max_cycles) || c->opt.max_cycles < 1) {
			fprintf(stderr, "simrun: --max-cycles '%s': need a positive number\n", s);
			return 2;
		}
	} else if (!strcmp(key, "--seed")) {
		if (parse_u64(s, &c->mo.seed)) {
			fprintf(stderr, "simrun: --seed '%s': not a number\n", s);
			return 2;
		}
	} else if (!strcmp(key, "--dynamic-batch")) {
		if (parse_u64(s, &c->mo.dyn_batch) || c->mo.dyn_batch < 1 ||
		    c->mo.dyn_batch > 1u << 20) {
			fprintf(stderr, "simrun: --dynamic-batch '%s': need a batch size >= 1\n", s);
			return 2;
		}
	} else { /* --loop, --streams */
		if (parse_u64(s, &v) || v < 1 || v > 100000) {
			fprintf(stderr, "simrun: %s '%s': need 1..100000\n", key, s);
			return 2;
		}
		if (key[2] == 'l')
			c->mo.loop = (unsigned)v;
		else
			c->mo.streams = (unsigned)v;
	}
	return 0;
}

/* The command line into c: -1 to go on, or the exit status (0: --help). */
static int parse_args(int argc, char **argv, struct cli *c)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		char key[32] = "";
		const char *eq = strchr(a, '=');
		if (a[0] == '-' && a[1] == '-' && eq && (size_t)(eq - a) < sizeof key) {
			memcpy(key, a, (size_t)(eq - a));
			val = eq + 1;
		} else {
			snprintf(key, sizeof key, "%s", a);
		}
#define VALUE()                                                                             \
	(val ? val : (i + 1 < argc ? argv[++i] : (fprintf(stderr, "simrun: %s needs a value\n", \
							  key), exit(2), "")))
		int rc = 0;
		if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(key, "--soc")) {
			c->soc = VALUE();
		} else if (!strcmp(key, "--kernel")) {
			c->kernel = VALUE();
		} else if (!strcmp(key, "--dynamic-dims")) {
			c->mo.dyn_dims = VALUE();
		} else if (!strcmp(key, "--block-dim") || !strcmp(key, "--max-cycles") ||
			   !strcmp(key, "--seed") || !strcmp(key, "--dynamic-batch") ||
			   !strcmp(key, "--loop") || !strcmp(key, "--streams")) {
			rc = number_arg(c, key, VALUE());
		} else if (!strcmp(key, "--mode")) {
			const char *s = VALUE();
			if (!strcmp(s, "full"))
				c->opt.mode = SIM_MODE_FULL;
			else if (!strcmp(s, "timing"))
				c->opt.mode = SIM_MODE_TIMING;
			else {
				fprintf(stderr, "simrun: --mode '%s': need full or timing\n", s);
				return 2;
			}
		} else if (!strcmp(key, "--set")) {
			if (c->nsets == sizeof c->sets / sizeof c->sets[0]) {
				fprintf(stderr, "simrun: too many --set\n");
				return 2;
			}
			c->sets[c->nsets++] = VALUE();
		} else if (!strcmp(key, "--alloc") || !strcmp(key, "--arg")) {
			rc = kernel_arg(c, key, VALUE());
		} else if (!strcmp(key, "--trace-insns")) {
			const char *s = VALUE();
			c->opt.trace = !strcmp(s, "-") ? stdout : fopen(s, "w");
			if (!c->opt.trace) {
				fprintf(stderr, "simrun: --trace-insns %s: cannot write\n", s);
				return 1;
			}
		} else if (!strcmp(key, "--trace")) {
			/* an optional value: --trace=DIR, or a next word that is not an
			 * option or the model */
			const char *nx = i + 1 < argc ? argv[i + 1] : NULL;
			size_t nl = nx ? strlen(nx) : 0;
			if (val)
				c->mo.trace = val;
			else if (nx && nx[0] != '-' && !(nl > 3 && !strcmp(nx + nl - 3, ".om")))
				c->mo.trace = argv[++i];
			else
				c->mo.trace = c->trace_default;
		} else if (!strcmp(key, "--input-dir")) {
			c->mo.indir = VALUE();
		} else if (!strcmp(key, "--image")) {
			c->mo.image = VALUE();
		} else if (!strcmp(key, "--output-dir")) {
			c->mo.outdir = VALUE();
		} else if (!strcmp(key, "--batch-inputs")) {
			c->mo.batch_inputs = 1;
		} else if (!strcmp(key, "--json")) {
			c->mo.json = 1;
		} else if (!strcmp(key, "--stats")) {
			c->stats = 1;
		} else if (!strcmp(key, "--dump-config")) {
			c->dump = 1;
		} else if (a[0] != '-' && !c->model) {
			c->model = a;
		} else {
			fprintf(stderr, "simrun: unknown option '%s' (try --help)\n", a);
			return 2;
		}
#undef VALUE
		if (rc)
			return rc;
	}
	return -1;
}

/* The chip: --soc, or the one the model was compiled for (as ACL takes
 * the device's), with the --set changes.  -1 to go on, or the exit status
 * (0: --dump-config printed it). */
/* A --set of a key that shapes the compiled code (study/compile_keys.def's
 * LAYOUT keys: core.count splits every kernel into blocks, buffer sizes
 * bound its tiles...) changes the hardware the binary runs on, not the
 * binary: say so, as simsweep recompiles such points.  The .om records only
 * the SoC's name, so the value it was compiled for is that SoC's. */
static void warn_layout_sets(const char *model, const struct soc_config *compiled,
			     const struct soc_config *run, const char *const *sets, unsigned nsets)
{
	for (unsigned i = 0; i < nsets; i++) {
		const char *a = sets[i], *eq = strchr(a, '=');
		while (*a == ' ' || *a == '\t')
			a++;
		size_t n = eq ? (size_t)(eq - a) : 0;
		while (n && (a[n - 1] == ' ' || a[n - 1] == '\t'))
			n--;
		char key[128];
		enum st_key_class cls;
		double was, now;
		if (!n || n >= sizeof key)
			continue;
		memcpy(key, a, n);
		key[n] = 0;
		if (st_key_class(key, &cls, NULL) || cls != ST_KEY_LAYOUT ||
		    soc_get(compiled, key, &was) || soc_get(run, key, &now) || was == now)
			continue;
		fprintf(stderr, "simrun: warning: --set %s=%g: %s was compiled for %s's %s = %g, a "
				"key that shapes the compiled code; it runs that code unchanged. "
				"Recompile with simatc --soc_version=%s --set %s=%g to model the "
				"change (simsweep does so per point)\n",
			key, now, model, compiled->name, key, was, compiled->name, key, now);
	}
}

static int load_config(struct cli *c, struct soc_config *cfg)
{
	if (!c->soc && c->model) {
		struct om_model om;
		char oerr[512];
		if (om_read(c->model, &om, NULL, oerr, sizeof oerr)) {
			fprintf(stderr, "simrun: %s\n", oerr);
			return 1;
		}
		snprintf(c->om_soc, sizeof c->om_soc, "%s", om.soc);
		om_free(&om);
		c->soc = c->om_soc;
	}
	if (!c->soc) {
		fprintf(stderr, "simrun: --soc is required with --kernel (try --help)\n");
		return 2;
	}
	char err[2048];
	const char *om_soc = c->om_soc;
	if (soc_load(c->soc, cfg, err, sizeof err)) {
		fprintf(stderr, "simrun: %s%s%s%s\n", err, om_soc[0] ? " (the SoC " : "",
			om_soc[0] ? c->model : "", om_soc[0] ? " was compiled for: give --soc)" : "");
		return 1;
	}
	struct soc_config compiled = *cfg; /* a model's: the SoC as its .om names it */
	for (unsigned i = 0; i < c->nsets; i++)
		if (soc_set(cfg, c->sets[i], err, sizeof err)) {
			fprintf(stderr, "simrun: %s\n", err);
			return 1;
		}
	if (c->model && !c->dump)
		warn_layout_sets(c->model, &compiled, cfg, c->sets, c->nsets);
	if (c->dump) {
		soc_dump(cfg, stdout);
		return 0;
	}
	/* a kernel that loops without end (or an .om whose branch was
	 * corrupted) stops after one simulated second by default, not after
	 * the library's 1e11 cycles (minutes of host time) */
	if (!c->opt.max_cycles)
		c->opt.max_cycles = (uint64_t)(cfg->core_freq_mhz * 1e6);
	return -1;
}

/* ./simprof_<model>_<time> for what (a path), as msprof names runs; two
 * runs in one second: the second gets _2 (_3 ...), never the first one's
 * folder. */
static void default_trace_dir(const char *what, char *buf, size_t len)
{
	const char *b = strrchr(what, '/');
	b = b ? b + 1 : what;
	const char *dot = strrchr(b, '.');
	size_t bl = dot && dot != b ? (size_t)(dot - b) : strlen(b);
	time_t now = time(NULL);
	struct tm tmv;
	char stamp[32] = "0";
	if (localtime_r(&now, &tmv))
		strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tmv);
	snprintf(buf, len, "./simprof_%.*s_%s", (int)(bl > 200 ? 200 : bl), b, stamp);
	struct stat st;
	size_t n = strlen(buf);
	for (int k = 2; stat(buf, &st) == 0 && k < 10000; k++)
		snprintf(buf + n, len - n, "_%d", k);
}

/* The report of a kernel run (not --json). */
static void print_kernel(const struct sim_kernel *k, const struct soc_config *cfg,
			 unsigned block_dim, int timing, const struct sim_result *res)
{
	double us = (double)res->cycles / cfg->core_freq_mhz;
	printf("kernel %s on %s (%lld cores at %g MHz), block_dim %u, %s mode\n", k->name,
	       cfg->name, (long long)cfg->core_count, cfg->core_freq_mhz, block_dim,
	       timing ? "timing" : "full");
	printf("cycles %llu (%.3f us) on %u core%s\n", (unsigned long long)res->cycles, us,
	       res->ncores, res->ncores > 1 ? "s" : "");
	printf("%-5s %14s %12s %10s\n", "pipe", "busy_cycles", "utilization", "insns");
	for (int p = 0; p < ISA_NPIPES; p++)
		printf("%-5s %14llu %11.1f%% %10llu\n", isa_pipe_name((enum isa_pipe)p),
		       (unsigned long long)res->total.busy_cycles[p],
		       res->cycles ? 100.0 * (double)res->total.busy_cycles[p] /
					     ((double)res->cycles * res->ncores)
				   : 0.0,
		       (unsigned long long)res->total.insns[p]);
	double secs = (double)res->cycles / (cfg->core_freq_mhz * 1e6);
	if (res->total.gm_read_bytes + res->total.gm_write_bytes && secs > 0)
		printf("GM traffic %.3f MB read, %.3f MB written: %.1f GB/s\n",
		       (double)res->total.gm_read_bytes / 1e6, (double)res->total.gm_write_bytes / 1e6,
		       (double)(res->total.gm_read_bytes + res->total.gm_write_bytes) / secs / 1e9);
	if (res->total.cube_flops && secs > 0)
		printf("cube %.3f GFLOP: %.2f TFLOP/s\n", (double)res->total.cube_flops / 1e9,
		       (double)res->total.cube_flops / secs / 1e12);
}

/* --kernel: load it, allocate its arguments, run (traced or not), report. */
static int run_kernel(const struct cli *c, const struct soc_config *cfg)
{
	const char *trace = c->mo.trace;
	if (trace && c->stats) {
		fprintf(stderr, "simrun: --stats and --trace: choose one for a kernel\n");
		return 2;
	}
	char err[2048];
	struct sim_kernel k;
	if (sim_kernel_load_file(&k, c->kernel, err, sizeof err)) {
		fprintf(stderr, "simrun: %s\n", err);
		return 1;
	}
	struct sim_options opt = c->opt;
	struct trc_spans spans = { 0 };
	if (trace) {
		if (trc_spans_init(&spans, (unsigned)cfg->core_count)) {
			fprintf(stderr, "simrun: out of memory\n");
			return 1;
		}
		opt.on_span = trc_span_record;
		opt.span_ctx = &spans;
	}
	struct sim_device *dev = sim_device_new(cfg, &opt, err, sizeof err);
	if (!dev) {
		fprintf(stderr, "simrun: %s\n", err);
		sim_kernel_free(&k);
		return 1;
	}
	int64_t argv_k[SIM_MAX_ARGS];
	for (unsigned i = 0; i < c->nargs; i++) {
		if (!c->args[i].is_alloc) {
			argv_k[i] = (int64_t)c->args[i].v;
			continue;
		}
		uint64_t addr = sim_gm_alloc(dev, c->args[i].v);
		if (!addr) {
			fprintf(stderr, "simrun: --alloc %llu: exceeds the %lld MiB of device memory\n",
				(unsigned long long)c->args[i].v, (long long)cfg->hbm_size_mb);
			return 1;
		}
		if (c->args[i].rand)
			sim_gm_fill_random_f16(dev, addr, c->args[i].v, c->mo.seed + i);
		argv_k[i] = (int64_t)addr;
	}
	struct sim_result res;
	int rc = trace ? traced_kernel(dev, &k, c->block_dim, argv_k, c->nargs, trace, c->mo.json,
				       &spans, &res)
		       : sim_run(dev, &k, c->block_dim, argv_k, c->nargs, &res);
	if (rc)
		fprintf(stderr, "simrun: %s: %s\n", c->kernel, res.error);
	else if (c->mo.json)
		sim_stats_json(stdout, &res, res.ncores);
	else
		print_kernel(&k, cfg, c->block_dim, opt.mode == SIM_MODE_TIMING, &res);
	if (!rc && c->stats)
		sim_stats_print(stdout, &res, res.ncores);
	sim_result_free(&res);
	sim_device_free(dev);
	sim_kernel_free(&k);
	trc_spans_free(&spans);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simrun"))
		return 0;
	struct cli c = { .block_dim = 1,
			 .mo = { .loop = 2, .streams = 1, .seed = 1 },
			 .opt = { .mode = SIM_MODE_FULL, .max_cycles = 0 } };
	int rc = parse_args(argc, argv, &c);
	if (rc >= 0)
		return rc;
	struct soc_config cfg;
	if ((rc = load_config(&c, &cfg)) >= 0)
		return rc;
	if (c.model && c.kernel) {
		fprintf(stderr, "simrun: give a model or --kernel, not both\n");
		return 2;
	}
	if (c.mo.trace == c.trace_default && (c.model || c.kernel))
		default_trace_dir(c.model ? c.model : c.kernel, c.trace_default,
				  sizeof c.trace_default);
	if (c.model)
		return run_model(c.model, &cfg, &c.opt, &c.mo);
	if (!c.kernel) {
		fprintf(stderr, "simrun: a model or --kernel is required (try --help)\n");
		return 2;
	}
	return run_kernel(&c, &cfg);
}

/* Input sets: --input-dir D reads D/input_N.pb; with --batch-inputs every
 * subdirectory of D (sorted by name) is one set; without --input-dir one
 * seeded set (st_inputs_make: float inputs zero in timing mode). */
static int read_set(const struct om_model *m, const char *dir, struct om_tensor *in,
		    uint64_t seed, int timing, char *err, size_t errlen)
{
	if (!dir)
		return st_inputs_make(m, in, seed, timing, err, errlen);
	char p[4200];
	struct stat st;
	/* an input_N.pb beyond the model's inputs: the wrong folder or model */
	snprintf(p, sizeof p, "%s/input_%u.pb", dir, m->ninputs);
	if (stat(p, &st) == 0) {
		snprintf(err, errlen, "%.4000s: the model has %u input%s (input_0.pb to "
			 "input_%u.pb); this one is extra", p, m->ninputs,
			 m->ninputs == 1 ? "" : "s", m->ninputs ? m->ninputs - 1 : 0);
		return -1;
	}
	for (unsigned i = 0; i < m->ninputs; i++) {
		if (snprintf(p, sizeof p, "%s/input_%u.pb", dir, i) >= (int)sizeof p) {
			snprintf(err, errlen, "%.256s...: path too long", dir);
			return -1;
		}
		if (om_tensor_read(p, &in[i], err, errlen))
			return -1;
	}
	return 0;
}

/* --image FILE: the raw bytes of the model's first uint8 input (an AIPP
 * model's image: RGB888 [N,H,W,3], XRGB8888 [N,H,W,4], YUV420SP (NV12)
 * [N,H*3/2,W] or YUV400 [N,H,W]), replacing whatever read_set put there. */
static int read_image(const struct om_model *m, const char *path, struct om_tensor *in,
		      char *err, size_t errlen)
{
	unsigned i = 0;
	while (i < m->ninputs && m->inputs[i].dtype != 2)
		i++;
	if (i == m->ninputs) {
		snprintf(err, errlen, "--image %s: the model has no uint8 input (compile it with "
			 "simatc --insert_op_conf)", path);
		return -1;
	}
	const struct om_tensor_desc *d = &m->inputs[i];
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "--image %s: %s", path, strerror(errno));
		return -1;
	}
	uint8_t *buf = malloc(d->size + 1);
	size_t got = buf ? fread(buf, 1, d->size + 1, f) : 0;
	fclose(f);
	if (!buf || got != d->size) {
		free(buf);
		char shape[160] = "";
		size_t k = 0;
		for (int r = 0; r < d->rank && k < sizeof shape; r++)
			k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", r ? "," : "",
					      (long long)d->dims[r]);
		snprintf(err, errlen, "--image %s: %s bytes; input '%s' (uint8 [%s]) needs exactly "
			 "%llu", path, got > d->size ? "more than the needed" : "too few", d->name,
			 shape, (unsigned long long)d->size);
		return -1;
	}
	free(in[i].data);
	snprintf(in[i].name, sizeof in[i].name, "%s", d->name);
	in[i].dtype = 2;
	in[i].rank = d->rank;
	for (int r = 0; r < d->rank; r++)
		in[i].dims[r] = d->dims[r];
	in[i].data = buf;
	in[i].nbytes = d->size;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The subdirectories of dir, sorted. */
static char **list_sets(const char *dir, unsigned *n, char *err, size_t errlen)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		snprintf(err, errlen, "--input-dir %s: %s", dir, strerror(errno));
		return NULL;
	}
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		char p[4096];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (stat(p, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			char **nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[cnt] = strdup(e->d_name);
		if (v[cnt])
			cnt++;
	}
	closedir(dp);
	if (!cnt) {
		free(v);
		snprintf(err, errlen, "--input-dir %s: --batch-inputs needs subdirectories holding "
			 "input_N.pb (one per input set)", dir);
		return NULL;
	}
	qsort(v, cnt, sizeof *v, name_cmp);
	*n = (unsigned)cnt;
	return v;
}

struct progress {
	int on;
	size_t done, total;
	struct timespec last;
	double mhz;
};

/* A progress line on stderr, at most five times a second. */
static void on_task(void *ctx, const struct trc_task *r)
{
	struct progress *p = ctx;
	p->done++;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - p->last.tv_sec) + (now.tv_nsec - p->last.tv_nsec) * 1e-9;
	if (dt < 0.2 && p->done < p->total)
		return;
	p->last = now;
	fprintf(stderr, "\rsimrun: task %zu/%zu, %.3f ms simulated ", p->done, p->total,
		(double)r->end / p->mhz / 1000.0);
	fflush(stderr);
}


/* Whether input (output: 1) i of the dynamic-batch model m has the batch
 * as its first dimension: its programs disagree on it. */
static int dyn_dim(const struct om_model *m, size_t i, int output)
{
	if (!m->nvariants)
		return 0;
	const struct om_tensor_desc *a = output ? &m->outputs[i] : &m->inputs[i];
	const struct om_tensor_desc *b =
		output ? &m->variants[0].outputs[i] : &m->variants[0].inputs[i];
	return a->rank > 0 && a->dims[0] != b->dims[0];
}

/* t with its first dimension made b: rows added are zeros, rows dropped
 * are gone.  -1 when out of memory. */
static int resize_batch(struct om_tensor *t, int64_t b)
{
	if (t->rank < 1 || t->dims[0] < 1 || t->dims[0] == b)
		return 0;
	size_t row = t->nbytes / (size_t)t->dims[0], n = row * (size_t)b;
	if (b > t->dims[0]) {
		uint8_t *d = calloc(n ? n : 1, 1);
		if (!d)
			return -1;
		memcpy(d, t->data, t->nbytes);
		free(t->data);
		t->data = d;
	}
	t->nbytes = n;
	t->dims[0] = b;
	return 0;
}

/* The program of m that --dynamic-batch b (0: none) runs, the message
 * printed when there is none.  When b has no program of its own, the next
 * larger one runs padded, and *view is that program with its dynamic
 * inputs at batch b (the shapes the inputs are read at); view->inputs is
 * NULL otherwise. */
static const struct om_model *pick_variant(const char *path, const struct om_model *m,
					   uint64_t b, struct om_model *view)
{
	memset(view, 0, sizeof *view);
	if (!b)
		return m;
	int64_t sz[OM_MAX_VARIANTS + 1];
	unsigned ns = om_batch_sizes(m, sz);
	if (!ns) {
		fprintf(stderr, "simrun: %s: --dynamic-batch %llu: the model has one batch size "
				"(compile it with simatc --dynamic_batch_size)\n", path,
			(unsigned long long)b);
		return NULL;
	}
	const struct om_model *v = om_variant_at_least(m, (int64_t)b);
	if (!v) {
		fprintf(stderr, "simrun: %s: --dynamic-batch %llu: larger than the largest of the "
				"model's batch sizes (", path, (unsigned long long)b);
		for (unsigned k = 0; k < ns; k++)
			fprintf(stderr, "%s%lld", k ? "," : "", (long long)sz[k]);
		fprintf(stderr, ")\n");
		return NULL;
	}
	if (v->batch == (int64_t)b)
		return v;
	*view = *v;
	view->inputs = calloc(v->ninputs + 1, sizeof *view->inputs);
	if (!view->inputs) {
		fprintf(stderr, "simrun: out of memory\n");
		return NULL;
	}
	for (uint32_t i = 0; i < v->ninputs; i++) {
		struct om_tensor_desc *d = &view->inputs[i];
		*d = v->inputs[i];
		if (dyn_dim(m, i, 0)) {
			d->size = d->size / (uint64_t)d->dims[0] * b;
			d->dims[0] = (int64_t)b;
		}
	}
	return v;
}

/* The program of the dynamic-dims model m that --dynamic-dims v names, the
 * message printed when there is none. */
static const struct om_model *pick_dims(const char *path, const struct om_model *m,
					const char *v)
{
	char list[2048] = "";
	size_t o = 0;
	for (unsigned k = 0; k <= m->nvariants && m->ndims && o < sizeof list; k++) {
		char dn[200];
		om_dims_name(om_dims_profile(m, k), dn, sizeof dn);
		o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", k ? ";" : "", dn);
	}
	if (!m->ndims) {
		fprintf(stderr, "simrun: %s: --dynamic-dims %s: the model has no dynamic dims "
				"(compile it with simatc --dynamic_dims)\n", path, v);
		return NULL;
	}
	int64_t d[OM_MAX_DYN_DIMS];
	unsigned n = 0;
	const char *p = v;
	while (*p) {
		char *e;
		long long x = strtoll(p, &e, 10);
		if (e == p || (*e && *e != ',') || x < 1 || n == OM_MAX_DYN_DIMS) {
			fprintf(stderr, "simrun: --dynamic-dims '%s': positive values separated by "
					"commas, one for each -1 dimension (profiles: %s)\n", v, list);
			return NULL;
		}
		d[n++] = x;
		p = *e ? e + 1 : e;
	}
	const struct om_model *q = om_variant_dims(m, d, n);
	if (!q)
		fprintf(stderr, "simrun: %s: --dynamic-dims %s: not one of the model's profiles "
				"(%s)\n", path, v, list);
	return q;
}

/* simrun MODEL --json: the run as one JSON object. */
static void print_model_json(const struct soc_config *cfg, const struct om_model *m,
			     const struct om_model *mp, const struct model_opts *mo, int padded,
			     const struct st_bench *b)
{
	size_t nt = b->ntasks;
	const struct trc_task *tr = b->tasks;
	const struct trc_summary sum = b->sum;
	double mhz = cfg->core_freq_mhz;
	const struct trc_exec *e0 = &b->execs[0];
	printf("{\"soc\": ");
	sim_json_str(stdout, cfg->name);
	if (m->ndims) {
		char dn[200];
		om_dims_name(mp, dn, sizeof dn);
		printf(", \"dynamic_dims\": ");
		sim_json_str(stdout, dn);
	}
	if (m->batch)
		printf(", \"dynamic_batch\": %llu, \"variant_batch\": %lld, \"padded\": %s",
		       (unsigned long long)(mo->dyn_batch ? mo->dyn_batch
							  : (uint64_t)mp->batch),
		       (long long)mp->batch, padded ? "true" : "false");
	printf(", \"model\": ");
	sim_json_str(stdout, mp->name);
	printf(", \"cycles\": %llu, \"latency_us\": %.3f, \"first_latency_us\": %.3f, "
	       "\"warm_latency_us\": %.3f, \"throughput_fps\": %.2f, \"batch\": %u, "
	       "\"executions\": %u, \"streams\": %u, \"load_us\": %.3f, \"h2d_us\": %.3f, "
	       "\"d2h_us\": %.3f, \"roofline_efficiency\": %.4f, \"pipe_utilization\": {",
	       (unsigned long long)(e0->end - e0->start), sum.first_latency_us,
	       sum.first_latency_us, sum.warm_latency_us, sum.throughput_fps, sum.batch,
	       sum.execs, sum.streams, sum.load_us, sum.h2d_us, sum.d2h_us,
	       sum.roofline_efficiency);
	for (int p = 0; p < ISA_NPIPES; p++)
		printf("%s\"%s\": %.4f", p ? ", " : "", isa_pipe_name((enum isa_pipe)p),
		       sum.pipe_util[p]);
	printf("}, \"tasks\": [");
	uint64_t prev_end = e0->start;
	int first = 1;
	for (size_t i = 0; i < nt; i++) {
		const struct trc_task *t = &tr[i];
		if (t->exec_id != 0 || t->model_task < 0)
			continue;
		const struct om_task *ot = &mp->tasks[t->model_task];
		printf("%s{\"name\": ", first ? "" : ", ");
		sim_json_str(stdout, ot->name);
		printf(", \"type\": ");
		sim_json_str(stdout, ot->op_type);
		uint64_t cyc = t->end - t->start;
		printf(", \"stream_id\": %u, \"start_us\": %.3f, \"duration_us\": %.3f, "
		       "\"wait_us\": %.3f, \"block_dim\": %u, \"flops\": %llu, \"bytes\": %llu, "
		       "\"roofline_us\": %.3f, \"mac_ratio\": %.4f}",
		       t->stream_id, (double)(t->start - e0->start) / mhz, (double)cyc / mhz,
		       (double)(t->start - prev_end) / mhz, ot->block_dim,
		       (unsigned long long)ot->flops, (unsigned long long)ot->bytes,
		       trc_roofline_seconds(cfg, ot) * 1e6,
		       cyc && t->cores ? (double)t->st.busy_cycles[ISA_PIPE_M] /
						 ((double)cyc * t->cores)
				       : 0.0);
		prev_end = t->end;
		first = 0;
	}
	printf("]}\n");
}

/* simrun MODEL: the run's report. */
static void print_model_text(const struct soc_config *cfg, const struct om_model *m,
			     const struct om_model *mp, const struct model_opts *mo, int padded,
			     const struct st_bench *b)
{
	const struct trc_summary sum = b->sum;
	double mhz = cfg->core_freq_mhz;
	const struct trc_exec *e0 = &b->execs[0];
	printf("model %s on %s (%lld AI cores at %g MHz): %u tasks, batch %u\n", mp->name,
	       cfg->name, (long long)cfg->core_count, mhz, mp->ntasks, sum.batch);
	if (m->ndims) {
		char dn[200];
		om_dims_name(mp, dn, sizeof dn);
		printf("dynamic dims               %10s    (%u profiles)\n", dn, m->nvariants + 1);
	}
	if (m->batch)
		printf("dynamic batch              %10llu    on the batch-%lld program%s\n",
		       (unsigned long long)(mo->dyn_batch ? mo->dyn_batch
							  : (uint64_t)mp->batch),
		       (long long)mp->batch,
		       padded ? ", padded (no program of that size: the inputs get zero "
				"rows, the outputs lose theirs)" : "");
	printf("load (weights over PCIe)   %10.3f us  (%.2f MB)\n", sum.load_us,
	       (double)mp->weights_bytes / 1e6);
	printf("first inference            %10.3f us  (%llu cycles)\n", sum.first_latency_us,
	       (unsigned long long)(e0->end - e0->start));
	printf("warm inference             %10.3f us  (mean of %u)\n", sum.warm_latency_us,
	       sum.warm_execs);
	printf("throughput                 %10.1f images/s  (%u stream%s)\n",
	       sum.throughput_fps, sum.streams, sum.streams > 1 ? "s" : "");
	printf("input / output copies      %10.3f / %.3f us  (%.2f / %.2f MB)\n", sum.h2d_us,
	       sum.d2h_us, (double)sum.h2d_bytes / 1e6, (double)sum.d2h_bytes / 1e6);
	printf("roofline efficiency        %10.3f  (sum over tasks of max(flops/peak, "
	       "bytes/bandwidth) / first inference)\n", sum.roofline_efficiency);
	printf("pipe utilization          ");
	for (int p = 0; p < ISA_NPIPES; p++)
		printf(" %s %.1f%%", isa_pipe_name((enum isa_pipe)p), 100 * sum.pipe_util[p]);
	printf("\ntop %u ops by time (warm):\n", sum.ntop);
	printf("  %-4s %-20s %-32s %11s %6s %5s %8s\n", "task", "type", "name", "duration_us",
	       "share", "block", "roof_us");
	for (unsigned i = 0; i < sum.ntop; i++) {
		const struct om_task *ot = &mp->tasks[sum.top[i].model_task];
		char nm[33];
		printf("  %-4d %-20.20s %-32s %11.3f %5.1f%% %5u %8.3f\n",
		       sum.top[i].model_task, ot->op_type, trc_shorten(nm, 32, ot->name),
		       sum.top[i].mean_us,
		       100 * sum.top[i].share, ot->block_dim,
		       trc_roofline_seconds(cfg, ot) * 1e6);
	}
}

/* --output-dir: output_N.pb of every set (a padded run's outputs cut back
 * to --dynamic-batch rows first).  0, or -1 with the message printed. */
static int write_outputs(const struct model_opts *mo, const struct om_model *m,
			 const struct om_model *mp, int padded, char **sets, unsigned nsets,
			 struct om_tensor *out)
{
	char err[4096];
	if (mo->outdir && mkdir(mo->outdir, 0777) && errno != EEXIST) {
		fprintf(stderr, "simrun: --output-dir %s: %s\n", mo->outdir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; padded && i < (size_t)nsets * mp->noutputs; i++)
		if (dyn_dim(m, i % mp->noutputs, 1))
			resize_batch(&out[i], (int64_t)mo->dyn_batch);
	for (unsigned k = 0; mo->outdir && k < nsets; k++)
		for (unsigned i = 0; i < mp->noutputs; i++) {
			char p[4096];
			if (sets) {
				snprintf(p, sizeof p, "%s/%s", mo->outdir, sets[k]);
				mkdir(p, 0777);
				snprintf(p, sizeof p, "%s/%s/output_%u.pb", mo->outdir, sets[k], i);
			} else {
				snprintf(p, sizeof p, "%s/output_%u.pb", mo->outdir, i);
			}
			if (om_tensor_write(p, &out[(size_t)k * mp->noutputs + i], err, sizeof err)) {
				fprintf(stderr, "simrun: %s\n", err);
				return -1;
			}
		}
	return 0;
}

static int run_model(const char *path, const struct soc_config *cfg,
		     const struct sim_options *opt, const struct model_opts *mo)
{
	char err[4096];
	struct st_bench bench = { 0 };
	struct om_model m;
	if (om_read(path, &m, cfg->name, err, sizeof err)) {
		fprintf(stderr, "simrun: %s\n", err);
		return 1;
	}
	/* the program to run: the model's, or one of its batch variants */
	struct om_model view;
	const struct om_model *mp = mo->dyn_dims ? pick_dims(path, &m, mo->dyn_dims)
					      : pick_variant(path, &m, mo->dyn_batch, &view);
	if (mo->dyn_dims)
		memset(&view, 0, sizeof view);
	if (!mp) {
		om_free(&m);
		return 2;
	}
	const int padded = view.inputs != NULL;
	unsigned nsets = 1;
	char **sets = NULL;
	struct om_tensor *in = NULL, *out = NULL;
	int rc = 1;
	if (mo->batch_inputs) {
		if (!mo->indir) {
			fprintf(stderr, "simrun: --batch-inputs needs --input-dir\n");
			goto done;
		}
		if (!(sets = list_sets(mo->indir, &nsets, err, sizeof err))) {
			fprintf(stderr, "simrun: %s\n", err);
			goto done;
		}
	}
	in = calloc((size_t)nsets * mp->ninputs + 1, sizeof *in);
	out = calloc((size_t)nsets * mp->noutputs + 1, sizeof *out);
	if (!in || !out) {
		fprintf(stderr, "simrun: out of memory\n");
		goto done;
	}
	for (unsigned k = 0; k < nsets; k++) {
		char dir[4096];
		if (sets)
			snprintf(dir, sizeof dir, "%s/%s", mo->indir, sets[k]);
		if (read_set(padded ? &view : mp, sets ? dir : mo->indir, in + (size_t)k * mp->ninputs, mo->seed,
			     opt->mode == SIM_MODE_TIMING, err, sizeof err) ||
		    (mo->image && read_image(padded ? &view : mp, mo->image, in + (size_t)k * mp->ninputs, err,
					     sizeof err))) {
			fprintf(stderr, "simrun: %s\n", err);
			goto done;
		}
	}
	for (size_t i = 0; padded && i < (size_t)nsets * mp->ninputs; i++)
		if (dyn_dim(&m, i % mp->ninputs, 0) && resize_batch(&in[i], mp->batch)) {
			fprintf(stderr, "simrun: out of memory\n");
			goto done;
		}
	struct progress prog = { .on = isatty(2), .mhz = cfg->core_freq_mhz };
	unsigned S = mo->streams;
	prog.total = 1 + (size_t)mp->ntasks * (sets ? nsets : (size_t)S * mo->loop) +
		     (size_t)(mp->ninputs + mp->noutputs) * (sets ? nsets : S);
	clock_gettime(CLOCK_MONOTONIC, &prog.last);
	struct st_bench_opts bo = { .sim = *opt, .spans = mo->trace != NULL,
				    .on_task = prog.on ? on_task : NULL, .task_ctx = &prog,
				    .session = { .loop = mo->loop, .streams = S,
						 .sets_each = sets != NULL, .timing_warm = 1 } };
	enum st_bench_stage st = st_bench_run(cfg, mp, &bo, in, nsets, out, &bench, err, sizeof err);
	if (prog.on)
		fprintf(stderr, "\r\033[K");
	if (st == ST_BENCH_RUN)
		fprintf(stderr, "simrun: %s: %s\n", path, err);
	else if (st != ST_BENCH_OK)
		fprintf(stderr, "simrun: %s\n", err);
	if (st != ST_BENCH_OK)
		goto done;
	if (mo->json)
		print_model_json(cfg, &m, mp, mo, padded, &bench);
	else
		print_model_text(cfg, &m, mp, mo, padded, &bench);
	if (mo->trace) {
		if (st_bench_trace(&bench, cfg, mp, mo->trace, err, sizeof err)) {
			fprintf(stderr, "simrun: --trace: %s\n", err);
			goto done;
		}
		if (!mo->json)
			printf("trace written to %s (op_summary.csv, task_time.csv, timeline.json, "
			       "summary.json)\n", mo->trace);
	}
	if (write_outputs(mo, &m, mp, padded, sets, nsets, out))
		goto done;
	rc = 0;
done:
	for (size_t i = 0; in && i < (size_t)nsets * mp->ninputs; i++)
		om_tensor_free(&in[i]);
	for (size_t i = 0; out && i < (size_t)nsets * mp->noutputs; i++)
		om_tensor_free(&out[i]);
	for (unsigned k = 0; sets && k < nsets; k++)
		free(sets[k]);
	free(sets);
	free(in);
	free(out);
	st_bench_free(&bench);
	free(view.inputs);
	om_free(&m);
	return rc;
}
