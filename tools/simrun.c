/* simrun: run a kernel on a simulated Ascend device.
 *   simrun --soc Ascend910 --kernel k.s --block-dim 4 [--mode=timing] [--json]
 * Kernel arguments are given in order with --alloc (a GM buffer; its address
 * is the argument) and --arg (a scalar). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "om.h"
#include "sim.h"
#include "tensor_io.h"
#include "trace.h"
#include <time.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: simrun --soc SOC MODEL.om [--input-dir D] [--output-dir O] [options]\n"
		"       simrun --soc SOC --kernel FILE [options]\n"
		"Run a compiled model, or one kernel (.s source or simas output), on a simulated\n"
		"Ascend NPU.\n\n"
		"  --input-dir D         read input_N.pb (ONNX TensorProto); default: seeded random\n"
		"  --output-dir O        write output_N.pb\n"
		"  --trace [DIR]         write op_summary.csv, task_time.csv, timeline.json and\n"
		"                        summary.json (default DIR ./simprof_<model>_<time>)\n"
		"  --soc NAME|FILE.ini   chip configuration (Ascend310, Ascend910, Ascend310P3)\n"
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

static int run_model(const char *path, const struct soc_config *cfg,
		     const struct sim_options *opt, const char *indir, const char *outdir, int json,
		     uint64_t seed, const char *trace);

int main(int argc, char **argv)
{
	const char *soc = NULL, *kernel = NULL, *model = NULL, *indir = NULL, *outdir = NULL;
	const char *trace = NULL;
	char trace_default[512] = "";
	const char *sets[256];
	unsigned nsets = 0, block_dim = 1;
	struct {
		int is_alloc, rand;
		uint64_t v;
	} args[SIM_MAX_ARGS];
	unsigned nargs = 0;
	int json = 0, stats = 0, dump = 0;
	uint64_t seed = 1;
	struct sim_options opt = { .mode = SIM_MODE_FULL, .max_cycles = 0 };

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
		if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(key, "--soc")) {
			soc = VALUE();
		} else if (!strcmp(key, "--kernel")) {
			kernel = VALUE();
		} else if (!strcmp(key, "--block-dim")) {
			uint64_t v;
			const char *s = VALUE();
			if (parse_u64(s, &v) || v < 1 || v > 65535) {
				fprintf(stderr, "simrun: --block-dim '%s': need 1..65535\n", s);
				return 2;
			}
			block_dim = (unsigned)v;
		} else if (!strcmp(key, "--mode")) {
			const char *s = VALUE();
			if (!strcmp(s, "full"))
				opt.mode = SIM_MODE_FULL;
			else if (!strcmp(s, "timing"))
				opt.mode = SIM_MODE_TIMING;
			else {
				fprintf(stderr, "simrun: --mode '%s': need full or timing\n", s);
				return 2;
			}
		} else if (!strcmp(key, "--set")) {
			if (nsets == sizeof sets / sizeof sets[0]) {
				fprintf(stderr, "simrun: too many --set\n");
				return 2;
			}
			sets[nsets++] = VALUE();
		} else if (!strcmp(key, "--alloc") || !strcmp(key, "--arg")) {
			const char *s = VALUE();
			if (nargs == SIM_MAX_ARGS) {
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
			args[nargs].is_alloc = is_alloc;
			args[nargs].rand = rnd;
			args[nargs].v = v;
			nargs++;
		} else if (!strcmp(key, "--seed")) {
			const char *s = VALUE();
			if (parse_u64(s, &seed)) {
				fprintf(stderr, "simrun: --seed '%s': not a number\n", s);
				return 2;
			}
		} else if (!strcmp(key, "--trace-insns")) {
			const char *s = VALUE();
			opt.trace = !strcmp(s, "-") ? stdout : fopen(s, "w");
			if (!opt.trace) {
				fprintf(stderr, "simrun: --trace-insns %s: cannot write\n", s);
				return 1;
			}
		} else if (!strcmp(key, "--trace")) {
			/* an optional value: --trace=DIR, or a next word that is not an
			 * option or the model */
			const char *nx = i + 1 < argc ? argv[i + 1] : NULL;
			size_t nl = nx ? strlen(nx) : 0;
			if (val)
				trace = val;
			else if (nx && nx[0] != '-' && !(nl > 3 && !strcmp(nx + nl - 3, ".om")))
				trace = argv[++i];
			else
				trace = trace_default;
		} else if (!strcmp(key, "--input-dir")) {
			indir = VALUE();
		} else if (!strcmp(key, "--output-dir")) {
			outdir = VALUE();
		} else if (!strcmp(key, "--json")) {
			json = 1;
		} else if (!strcmp(key, "--stats")) {
			stats = 1;
		} else if (!strcmp(key, "--dump-config")) {
			dump = 1;
		} else if (a[0] != '-' && !model) {
			model = a;
		} else {
			fprintf(stderr, "simrun: unknown option '%s' (try --help)\n", a);
			return 2;
		}
	}
	if (!soc) {
		fprintf(stderr, "simrun: --soc is required (try --help)\n");
		return 2;
	}
	char err[2048];
	struct soc_config cfg;
	if (soc_load(soc, &cfg, err, sizeof err)) {
		fprintf(stderr, "simrun: %s\n", err);
		return 1;
	}
	for (unsigned i = 0; i < nsets; i++)
		if (soc_set(&cfg, sets[i], err, sizeof err)) {
			fprintf(stderr, "simrun: %s\n", err);
			return 1;
		}
	if (dump) {
		soc_dump(&cfg, stdout);
		return 0;
	}
	if (model && kernel) {
		fprintf(stderr, "simrun: give a model or --kernel, not both\n");
		return 2;
	}
	if (model && trace == trace_default) { /* ./simprof_<model>_<time>, as msprof names runs */
		const char *b = strrchr(model, '/');
		b = b ? b + 1 : model;
		size_t bl = strlen(b) > 3 && !strcmp(b + strlen(b) - 3, ".om") ? strlen(b) - 3
									 : strlen(b);
		time_t now = time(NULL);
		struct tm tmv;
		char stamp[32] = "0";
		if (localtime_r(&now, &tmv))
			strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tmv);
		snprintf(trace_default, sizeof trace_default, "./simprof_%.*s_%s", (int)(bl > 200 ? 200 : bl), b,
			 stamp);
	}
	if (model)
		return run_model(model, &cfg, &opt, indir, outdir, json, seed, trace);
	if (!kernel) {
		fprintf(stderr, "simrun: a model or --kernel is required (try --help)\n");
		return 2;
	}
	struct sim_kernel k;
	if (sim_kernel_load_file(&k, kernel, err, sizeof err)) {
		fprintf(stderr, "simrun: %s\n", err);
		return 1;
	}
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	if (!dev) {
		fprintf(stderr, "simrun: %s\n", err);
		sim_kernel_free(&k);
		return 1;
	}
	int64_t argv_k[SIM_MAX_ARGS];
	for (unsigned i = 0; i < nargs; i++) {
		if (!args[i].is_alloc) {
			argv_k[i] = (int64_t)args[i].v;
			continue;
		}
		uint64_t addr = sim_gm_alloc(dev, args[i].v);
		if (!addr) {
			fprintf(stderr, "simrun: --alloc %llu: exceeds the %lld MiB of device memory\n",
				(unsigned long long)args[i].v, (long long)cfg.hbm_size_mb);
			return 1;
		}
		if (args[i].rand)
			sim_gm_fill_random_f16(dev, addr, args[i].v, seed + i);
		argv_k[i] = (int64_t)addr;
	}
	struct sim_result res;
	int rc = sim_run(dev, &k, block_dim, argv_k, nargs, &res);
	if (rc) {
		fprintf(stderr, "simrun: %s: %s\n", kernel, res.error);
	} else if (json) {
		sim_stats_json(stdout, &res, res.ncores);
	} else {
		double us = (double)res.cycles / cfg.core_freq_mhz;
		printf("kernel %s on %s (%lld cores at %g MHz), block_dim %u, %s mode\n", k.name,
		       cfg.name, (long long)cfg.core_count, cfg.core_freq_mhz, block_dim,
		       opt.mode == SIM_MODE_TIMING ? "timing" : "full");
		printf("cycles %llu (%.3f us) on %u core%s\n", (unsigned long long)res.cycles, us,
		       res.ncores, res.ncores > 1 ? "s" : "");
		printf("%-5s %14s %12s %10s\n", "pipe", "busy_cycles", "utilization", "insns");
		for (int p = 0; p < ISA_NPIPES; p++)
			printf("%-5s %14llu %11.1f%% %10llu\n", isa_pipe_name((enum isa_pipe)p),
			       (unsigned long long)res.total.busy_cycles[p],
			       res.cycles ? 100.0 * (double)res.total.busy_cycles[p] /
						    ((double)res.cycles * res.ncores)
					  : 0.0,
			       (unsigned long long)res.total.insns[p]);
		double secs = (double)res.cycles / (cfg.core_freq_mhz * 1e6);
		if (res.total.gm_read_bytes + res.total.gm_write_bytes && secs > 0)
			printf("GM traffic %.3f MB read, %.3f MB written: %.1f GB/s\n",
			       (double)res.total.gm_read_bytes / 1e6,
			       (double)res.total.gm_write_bytes / 1e6,
			       (double)(res.total.gm_read_bytes + res.total.gm_write_bytes) / secs / 1e9);
		if (res.total.cube_flops && secs > 0)
			printf("cube %.3f GFLOP: %.2f TFLOP/s\n", (double)res.total.cube_flops / 1e9,
			       (double)res.total.cube_flops / secs / 1e12);
	}
	if (!rc && stats)
		sim_stats_print(stdout, &res, res.ncores);
	sim_result_free(&res);
	sim_device_free(dev);
	sim_kernel_free(&k);
	return rc ? 1 : 0;
}

static int run_model(const char *path, const struct soc_config *cfg,
		     const struct sim_options *opt, const char *indir, const char *outdir, int json,
		     uint64_t seed, const char *trace)
{
	char err[4096];
	struct trc_spans spans = { 0 };
	struct sim_options dopt = *opt;
	struct om_model m;
	if (om_read(path, &m, cfg->name, err, sizeof err)) {
		fprintf(stderr, "simrun: %s\n", err);
		return 1;
	}
	struct rt_tensor *in = calloc(m.ninputs + 1, sizeof *in);
	struct rt_tensor *out = calloc(m.noutputs + 1, sizeof *out);
	int rc = 1;
	struct sim_device *dev = NULL;
	struct rt_run run = { 0, 0, NULL };
	if (!in || !out) {
		fprintf(stderr, "simrun: out of memory\n");
		goto done;
	}
	for (unsigned i = 0; i < m.ninputs; i++) {
		if (indir) {
			char p[4096];
			snprintf(p, sizeof p, "%s/input_%u.pb", indir, i);
			if (rt_tensor_read(p, &in[i], err, sizeof err)) {
				fprintf(stderr, "simrun: %s\n", err);
				goto done;
			}
			continue;
		}
		/* seeded random inputs in [-1, 1) of the model's type and shape */
		const struct om_tensor_desc *d = &m.inputs[i];
		snprintf(in[i].name, sizeof in[i].name, "%s", d->name);
		in[i].dtype = d->dtype;
		in[i].rank = d->rank;
		for (int r = 0; r < d->rank; r++)
			in[i].dims[r] = d->dims[r];
		in[i].nbytes = d->size;
		in[i].data = malloc(d->size ? d->size : 1);
		if (!in[i].data || d->dtype != 1) {
			fprintf(stderr, "simrun: input '%s': random inputs need float32\n", d->name);
			goto done;
		}
		uint64_t s = (seed + i) * 0x9E3779B97F4A7C15ull + 1;
		float *f = in[i].data;
		for (uint64_t e = 0; e < d->size / 4; e++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			f[e] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
		}
	}
	if (trace) {
		if (trc_spans_init(&spans, (unsigned)cfg->core_count)) {
			fprintf(stderr, "simrun: out of memory\n");
			goto done;
		}
		dopt.on_span = trc_span_record;
		dopt.span_ctx = &spans;
	}
	dev = sim_device_new(cfg, &dopt, err, sizeof err);
	if (!dev) {
		fprintf(stderr, "simrun: %s\n", err);
		goto done;
	}
	if (rt_model_run(dev, &m, in, m.ninputs, out, &run, err, sizeof err)) {
		fprintf(stderr, "simrun: %s: %s\n", path, err);
		goto done;
	}
	double mhz = cfg->core_freq_mhz;
	/* The roofline of each task: the time its useful work needs at the chip's
	 * peak cube rate or its bytes need at main-memory bandwidth, whichever is
	 * longer; efficiency is the sum of those over the simulated time. */
	double peak_flops = (double)cfg->core_count * (double)(cfg->cube_m * cfg->cube_k *
							       cfg->cube_n) * 2.0 * mhz * 1e6;
	double bw = cfg->hbm_bandwidth_gbps * 1e9, roof_total = 0;
	for (unsigned i = 0; i < m.ntasks; i++) {
		double r = (double)m.tasks[i].flops / peak_flops;
		double b = (double)m.tasks[i].bytes / bw;
		roof_total += r > b ? r : b;
	}
	double seconds = (double)run.cycles / (mhz * 1e6);
	if (json) {
		printf("{\"soc\": \"%s\", \"model\": \"%s\", \"cycles\": %llu, "
		       "\"latency_us\": %.3f, \"roofline_efficiency\": %.4f, \"tasks\": [",
		       cfg->name, m.name, (unsigned long long)run.cycles, (double)run.cycles / mhz,
		       seconds > 0 ? roof_total / seconds : 0);
		for (unsigned i = 0; i < m.ntasks; i++)
			printf("%s{\"name\": \"%s\", \"type\": \"%s\", \"start_us\": %.3f, "
			       "\"duration_us\": %.3f, \"block_dim\": %u, \"flops\": %llu, "
			       "\"bytes\": %llu}",
			       i ? ", " : "", m.tasks[i].name, m.tasks[i].op_type,
			       (double)(run.task[i].start_cycle - run.start_cycle) / mhz,
			       (double)run.task[i].cycles / mhz, m.tasks[i].block_dim,
			       (unsigned long long)m.tasks[i].flops,
			       (unsigned long long)m.tasks[i].bytes);
		printf("]}\n");
	} else {
		printf("model %s on %s: %u tasks, %llu cycles (%.3f us)\n", m.name, cfg->name,
		       m.ntasks, (unsigned long long)run.cycles, (double)run.cycles / mhz);
		printf("%-4s %-20s %-32s %9s %11s %5s %8s %6s\n", "task", "type", "name", "start_us",
		       "duration_us", "block", "roof_us", "cube%");
		for (unsigned i = 0; i < m.ntasks; i++) {
			const struct rt_task_time *tt = &run.task[i];
			double r = (double)m.tasks[i].flops / peak_flops;
			double b = (double)m.tasks[i].bytes / bw;
			double cube = tt->cycles && tt->cores
					      ? 100.0 * (double)(tt->st.cube_f16_steps + tt->st.cube_s8_steps) /
							((double)tt->cycles * tt->cores)
					      : 0;
			printf("%-4u %-20.20s %-32.32s %9.3f %11.3f %5u %8.3f %6.1f\n", i,
			       m.tasks[i].op_type, m.tasks[i].name,
			       (double)(tt->start_cycle - run.start_cycle) / mhz,
			       (double)tt->cycles / mhz, m.tasks[i].block_dim,
			       (r > b ? r : b) * 1e6, cube);
		}
		printf("roofline efficiency %.3f (sum over tasks of max(flops/peak, bytes/bandwidth) "
		       "/ simulated time)\n", seconds > 0 ? roof_total / seconds : 0);
	}
	if (trace) {
		if (trc_write(trace, cfg, &m, &run, &spans, err, sizeof err)) {
			fprintf(stderr, "simrun: --trace: %s\n", err);
			goto done;
		}
		if (!json)
			printf("trace written to %s (op_summary.csv, task_time.csv, timeline.json, "
			       "summary.json)\n", trace);
	}
	if (outdir)
		for (unsigned i = 0; i < m.noutputs; i++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/output_%u.pb", outdir, i);
			if (rt_tensor_write(p, &out[i], err, sizeof err)) {
				fprintf(stderr, "simrun: %s\n", err);
				goto done;
			}
		}
	rc = 0;
done:
	for (unsigned i = 0; in && i < m.ninputs; i++)
		rt_tensor_free(&in[i]);
	for (unsigned i = 0; out && i < m.noutputs; i++)
		rt_tensor_free(&out[i]);
	free(in);
	free(out);
	rt_run_free(&run);
	sim_device_free(dev);
	trc_spans_free(&spans);
	om_free(&m);
	return rc;
}
