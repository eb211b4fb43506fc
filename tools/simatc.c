/* simatc: compile an ONNX model to an .om offline model, with ATC's flags. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "fusion_switch.h"
#include "om_json.h"
#include "om.h"
#include "soc.h"
#include "version.h"

static void usage(FILE *f)
{
	char passes[512];
	cc_switch_list(passes, sizeof passes);
	fprintf(f,
		"usage: simatc --model=FILE.onnx --framework=5 --output=NAME --soc_version=SOC [options]\n"
		"Compile an ONNX model for a simulated Ascend NPU; writes NAME.om.\n\n"
		"  --model=FILE            the ONNX model\n"
		"  --framework=5           the source framework (5 = ONNX, the only one supported)\n"
		"  --output=NAME           write NAME.om\n"
		"  --soc_version=SOC       Ascend310, Ascend910 (or Ascend910A), Ascend310P3, or an .ini\n"
		"  --input_shape=\"name:1,3,224,224;name2:...\"  fix dynamic input dimensions\n"
		"  --dynamic_batch_size=\"1,2,4,8\"  batch sizes (2 to 100, ascending): one program\n"
		"                          per size in one .om, the weights stored once; the\n"
		"                          dynamic inputs have -1 as the batch in --input_shape\n"
		"  --dynamic_dims=\"224,224;320,320\"  profiles (2 to 100) of values for the -1\n"
		"                          dimensions of --input_shape, in order: one program per\n"
		"                          profile in one .om, the weights stored once\n"
		"  --buffer_optimize=l2_optimize|off_optimize  L2 fusion of memory-bound chains (on\n"
		"                          by default)\n"
		"  --precision_mode=MODE   force_fp16 (the default), allow_mix_precision (Softmax,\n"
		"                          LayerNorm, Exp, Log, Pow, large reductions in fp32) or\n"
		"                          must_keep_origin_dtype (float32 nodes in fp32 where a\n"
		"                          kernel can; the cube stays fp16)\n"
		"  --keep_dtype=FILE       ATC's file: node names or OpType::<type>, one a line,\n"
		"                          kept in fp32\n"
		"  --output_type=TYPE      the type the host receives the outputs in: FP32,\n"
		"                          FP16 or UINT8 for all, or per output\n"
		"                          \"node:index:TYPE;...\" (an ONNX node's output)\n"
		"  --report=FILE.json      write the compile report as JSON\n"
		"  --keep_all_outputs=0|1  1: a debug compile for a layer-by-layer comparison\n"
		"                          (simcmp): every node's output after the passes is\n"
		"                          also a model output, after the model's own\n"
		"                          (--report's kept_outputs: each one's node)\n"
		"  --fusion_switch_file=F  turn passes off (ATC's JSON form): %s\n"
		"  --insert_op_conf=F      AIPP config (ATC's aipp_op format, static): the input\n"
		"                          becomes a uint8 image preprocessed on the AI Core\n"
		"  --enable_small_channel=0|1  1: a first conv of 1-4 input channels reads them\n"
		"                          as C0 = 4 (ATC's small-channel path); 0 (the default)\n"
		"  --input_format=NCHW     ATC's input layout: NCHW, NCDHW or ND (an ONNX model's)\n"
		"  --log=LEVEL             ATC's log level, accepted (errors go to stderr always)\n"
		"  --set SEC.KEY=VALUE     override a SoC configuration key\n"
		"  --mode=N                ATC's run modes: 0 compile (the default); 3 precheck\n"
		"                          (compile and verify, write nothing); 1 with --om=M.om\n"
		"                          --json=M.json: the .om as JSON; 6 with --om=M.om: its\n"
		"                          information\n"
		"  --version               print the version\n"
		"  --ops                   print the supported operators' table (docs/ops.md)\n"
		"Exit status: 0 written; 2 options or a model refused (the message names the\n"
		"node, its op and why); 1 the SoC configuration or the output file failed.\n"
		"Supported operators: %s\n", passes, cc_supported_ops());
}

/* Whether the .om can be written where --output says: found out before a
 * compile of many seconds, not after it. */
static int check_writable(const char *path, char *err, size_t errlen)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	int bad = access(path, F_OK) == 0 ? access(path, W_OK) : access(dir, W_OK | X_OK);
	if (bad)
		snprintf(err, errlen, "cannot write %.3000s: %s", path, strerror(errno));
	return bad ? -1 : 0;
}

/* Progress on a terminal (stderr), one line redrawn: compiling a large
 * model takes seconds of silence otherwise. */
static void show_progress(void *ctx, const char *stage, unsigned done, unsigned total)
{
	(void)ctx;
	if (total)
		fprintf(stderr, "\rsimatc: %s %u/%u   ", stage, done + 1, total);
	else
		fprintf(stderr, "\rsimatc: %s          ", stage);
	fflush(stderr);
}

/* ATC's --mode=1 (an .om as JSON, with --om and --json) and --mode=6 (an
 * .om's information, with --om); 0 (compile) and 3 (precheck: compile and
 * verify, write nothing) are main's. */
static int other_mode(const char *mode, const char *om_in, const char *json)
{
	if (strcmp(mode, "1") && strcmp(mode, "6")) {
		fprintf(stderr, "simatc: --mode=%s: not supported (0 compiles, 1 writes an .om as "
				"JSON, 3 prechecks, 6 shows an .om's information; ATC's 5 converts "
				"GE dump graphs, which simatc does not write)\n", mode);
		return 2;
	}
	if (!om_in || (!strcmp(mode, "1") && !json)) {
		fprintf(stderr, "simatc: --mode=%s needs --om=FILE.om%s\n", mode,
			!strcmp(mode, "1") ? " and --json=FILE.json" : "");
		return 2;
	}
	size_t n = strlen(om_in);
	if (n < 3 || strcmp(om_in + n - 3, ".om")) {
		fprintf(stderr, "simatc: --om=%s: --mode=%s reads an .om (an ONNX model's graph: "
				"see simatc --report)\n", om_in, mode);
		return 2;
	}
	char err[4096];
	struct om_model m;
	if (om_read(om_in, &m, NULL, err, sizeof err)) {
		fprintf(stderr, "simatc: %s\n", err);
		return 1;
	}
	int rc = 0;
	if (!strcmp(mode, "6")) {
		uint64_t code = 0;
		for (uint32_t k = 0; k < m.nkernels; k++)
			code += m.kernels[k].bytes;
		printf("model %s (%s), compiled for %s\n", m.name, om_in, m.soc);
		printf("  weights %llu bytes, workspace %llu bytes, kernel code %llu bytes in %u "
		       "kernels, %u tasks, %u inputs, %u outputs\n",
		       (unsigned long long)m.weights_bytes, (unsigned long long)m.workspace_bytes,
		       (unsigned long long)code, m.nkernels, m.ntasks, m.ninputs, m.noutputs);
		om_print_task_types(&m, stdout);
		printf("\n");
		int64_t sz[OM_MAX_VARIANTS + 1];
		unsigned ns = om_batch_sizes(&m, sz);
		for (unsigned k = 0; k < ns; k++) {
			const struct om_model *v = om_variant(&m, sz[k]);
			printf("%s%lld (%u tasks, workspace %llu bytes)", k ? ", " :
			       "  dynamic batch sizes: ", (long long)sz[k], v->ntasks,
			       (unsigned long long)v->workspace_bytes);
		}
		if (ns)
			printf("\n");
		for (unsigned k = 0; m.ndims && k <= m.nvariants; k++) {
			const struct om_model *v = om_dims_profile(&m, k);
			char dn[200];
			om_dims_name(v, dn, sizeof dn);
			printf("%s%s (%u tasks, workspace %llu bytes)", k ? ", " : "  dynamic dims: ", dn,
			       v->ntasks, (unsigned long long)v->workspace_bytes);
		}
		if (m.ndims)
			printf("\n");
	} else {
		FILE *f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "simatc: cannot write %s: %s\n", json, strerror(errno));
			rc = 1;
		} else {
			om_write_json(&m, "simatc " PACKAGE_VERSION, f);
			if (fclose(f)) {
				fprintf(stderr, "simatc: writing %s: %s\n", json, strerror(errno));
				rc = 1;
			} else {
				printf("wrote %s\n", json);
			}
		}
	}
	om_free(&m);
	return rc;
}

/* The command line. */
struct cli {
	const char *model, *output, *soc, *framework;
	const char *mode, *om_in, *json, *dyn_batch, *dyn_dims;
	struct cc_options opt;
	const char *sets[64];
	int nsets;
	/* --dynamic_dims: nprof profiles of ndims values (cc_parse_dynamic_dims) */
	int64_t dims[OM_MAX_VARIANTS * OM_MAX_DYN_DIMS];
	unsigned nprof, ndims;
};

/* An option whose value is one of a few words (key is "--name"): 0 and
 * the choice in c->opt, 1 not such an option, or the exit status (> 1,
 * or 1 for --enable_small_channel as before) with the message printed:
 * returned as -(status). */
static int word_option(struct cli *c, const char *key, const char *v)
{
	struct cc_options *opt = &c->opt;
	if (!strcmp(key, "--enable_small_channel") || !strcmp(key, "--keep_all_outputs")) {
		int small = key[2] == 'e';
		if (strcmp(v, "0") && strcmp(v, "1")) {
			fprintf(stderr, "simatc: %s takes 0 or 1, not '%s'\n", key, v);
			return small ? -1 : -2;
		}
		if (small)
			opt->small_channel = !strcmp(v, "1");
		else
			opt->keep_all_outputs = !strcmp(v, "1");
	} else if (!strcmp(key, "--precision_mode")) {
		if (!strcmp(v, "force_fp16"))
			opt->precision_mode = CC_PREC_FORCE_FP16;
		else if (!strcmp(v, "allow_mix_precision") || !strcmp(v, "allow_mix_precision_fp16"))
			opt->precision_mode = CC_PREC_MIX;
		else if (!strcmp(v, "must_keep_origin_dtype"))
			opt->precision_mode = CC_PREC_KEEP_ORIGIN;
		else {
			fprintf(stderr, "simatc: --precision_mode=%s is not supported yet "
					"(force_fp16, allow_mix_precision, "
					"must_keep_origin_dtype are)\n", v);
			return -2;
		}
	} else if (!strcmp(key, "--buffer_optimize")) {
		if (!strcmp(v, "l2_optimize"))
			opt->buffer_optimize = CC_BUF_L2;
		else if (!strcmp(v, "off_optimize"))
			opt->buffer_optimize = CC_BUF_OFF;
		else {
			fprintf(stderr, "simatc: --buffer_optimize=%s: l2_optimize or "
					"off_optimize\n", v);
			return -2;
		}
	} else if (!strcmp(key, "--input_format")) {
		/* ATC's layout of the model's inputs: an ONNX model's are
		 * NCHW (NCDHW for 3-D, ND otherwise); NHWC is TensorFlow's */
		if (strcmp(v, "NCHW") && strcmp(v, "ND") && strcmp(v, "NCDHW")) {
			fprintf(stderr, "simatc: --input_format=%s: an ONNX model's inputs are "
					"NCHW, NCDHW or ND\n", v);
			return -2;
		}
	} else if (!strcmp(key, "--log")) {
		/* ATC's log level: errors go to stderr at every level */
		if (strcmp(v, "debug") && strcmp(v, "info") && strcmp(v, "warning") &&
		    strcmp(v, "error") && strcmp(v, "null")) {
			fprintf(stderr, "simatc: --log=%s: debug, info, warning, error or "
					"null\n", v);
			return -2;
		}
		fprintf(stderr, "simatc: note: --log=%s accepted; simatc prints its errors "
				"on stderr at every level\n", v);
	} else {
		return 1;
	}
	return 0;
}

/* The command line into c: -1 to go on, or the exit status (0: --help). */
static int parse_args(int argc, char **argv, struct cli *c)
{
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		char *eq = strchr(a, '=');
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
		size_t klen = eq ? (size_t)(eq - a) : strlen(a);
		char key[64];
		snprintf(key, sizeof key, "%.*s", (int)(klen < sizeof key ? klen : 0), a);
#define IS(k) (strlen(k) == klen && strncmp(a, k, klen) == 0)
		int takes = !IS("--help") && !IS("-h");
		if (takes && !v) {
			fprintf(stderr, "simatc: %s needs a value\n", a);
			return 2;
		}
		int w;
		if (IS("--help") || IS("-h")) {
			usage(stdout);
			return 0;
		} else if (IS("--model"))
			c->model = v;
		else if (IS("--output"))
			c->output = v;
		else if (IS("--soc_version"))
			c->soc = v;
		else if (IS("--framework"))
			c->framework = v;
		else if (IS("--input_shape"))
			c->opt.input_shape = v;
		else if (IS("--dynamic_batch_size"))
			c->dyn_batch = v;
		else if (IS("--dynamic_dims"))
			c->dyn_dims = v;
		else if (IS("--report"))
			c->opt.report_json = v;
		else if (IS("--fusion_switch_file"))
			c->opt.fusion_switch_file = v;
		else if (IS("--insert_op_conf"))
			c->opt.insert_op_conf = v;
		else if (IS("--output_type"))
			c->opt.output_type = v;
		else if (IS("--keep_dtype"))
			c->opt.keep_dtype = v;
		else if (IS("--mode"))
			c->mode = v;
		else if (IS("--om"))
			c->om_in = v;
		else if (IS("--json"))
			c->json = v;
		else if (IS("--set")) {
			if (c->nsets == 64) {
				fprintf(stderr, "simatc: too many --set\n");
				return 2;
			}
			c->sets[c->nsets++] = v;
		} else if ((w = word_option(c, key, v)) < 0) {
			return -w;
		} else if (w) {
			fprintf(stderr, "simatc: unknown option '%s' (try --help)\n", a);
			return 2;
		}
#undef IS
		if (!eq)
			i++;
	}
	return -1;
}

/* Compile c->model for cfg and write the .om (--mode=3: verify only). */
static int compile(struct cli *c, const struct soc_config *cfg, const int64_t *sizes,
		   unsigned nsizes)
{
	char err[4096], path[4096];
	int precheck = !strcmp(c->mode, "3"); /* compile and verify, write nothing */
	snprintf(path, sizeof path, "%s.om", c->output ? c->output : "");
	if (!precheck && check_writable(path, err, sizeof err)) {
		fprintf(stderr, "simatc: %s\n", err);
		return 1;
	}
	/* the model is named after the .om, as ATC names it */
	const char *slash = c->output ? strrchr(c->output, '/') : NULL;
	c->opt.model_name = slash ? slash + 1 : c->output;
	int tty = isatty(STDERR_FILENO);
	if (tty) {
		fprintf(stderr, "simatc: compiling %s for %s\n", c->model, cfg->name);
		c->opt.progress = show_progress;
	}
	struct om_model m;
	int failed = nsizes ? cc_compile_dynamic(c->model, cfg, &c->opt, sizes, nsizes, &m, err,
						 sizeof err)
		     : c->nprof ? cc_compile_dynamic_dims(c->model, cfg, &c->opt, c->dims, c->ndims,
							  c->nprof, &m, err, sizeof err)
				: cc_compile(c->model, cfg, &c->opt, &m, err, sizeof err);
	if (tty) /* the progress line ends */
		fprintf(stderr, "\r%60s\r", "");
	if (failed) {
		/* a model that cannot be compiled: the message names the node,
		 * its op and why; 2, as for options refused */
		fprintf(stderr, "simatc: %s\n", err);
		return 2;
	}
	if (precheck) {
		printf("precheck passed: %s compiles for %s (%u tasks, every one verified on "
		       "the simulator); no .om written\n", c->model, cfg->name, m.ntasks);
		om_free(&m);
		return 0;
	}
	int rc = om_write(path, &m, err, sizeof err);
	if (rc)
		fprintf(stderr, "simatc: %s\n", err);
	else
		printf("wrote %s\n", path);
	om_free(&m);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--ops"))
		return cc_ops_markdown(stdout) || fflush(stdout) ? 1 : 0;
	if (tool_version(argc, argv, "simatc"))
		return 0;
	struct cli c = { .mode = "0", .opt = { .report = stdout } };
	int rc = parse_args(argc, argv, &c);
	if (rc >= 0)
		return rc;
	if (strcmp(c.mode, "0") && strcmp(c.mode, "3"))
		return other_mode(c.mode, c.om_in, c.json);
	if (!c.model || (!c.output && strcmp(c.mode, "3")) || !c.soc) {
		fprintf(stderr, "simatc: --model, --output and --soc_version are required "
				"(try --help)\n");
		return 2;
	}
	if (c.framework && strcmp(c.framework, "5")) {
		fprintf(stderr, "simatc: --framework=%s: only 5 (ONNX) is supported\n", c.framework);
		return 2;
	}
	int64_t sizes[OM_MAX_VARIANTS];
	unsigned nsizes = 0;
	char err[4096];
	if (c.dyn_batch && cc_parse_dynamic_batch(c.dyn_batch, sizes, &nsizes, err, sizeof err)) {
		fprintf(stderr, "simatc: %s\n", err);
		return 2;
	}
	if (c.dyn_batch && c.dyn_dims) {
		fprintf(stderr, "simatc: --dynamic_batch_size and --dynamic_dims exclude each other "
				"(give the batch as a dim of --dynamic_dims)\n");
		return 2;
	}
	if (c.dyn_dims && cc_parse_dynamic_dims(c.dyn_dims, c.dims, &c.nprof, &c.ndims, err,
						sizeof err)) {
		fprintf(stderr, "simatc: %s\n", err);
		return 2;
	}
	const char *soc = !strcmp(c.soc, "Ascend910A") ? "Ascend910" : c.soc;
	struct soc_config cfg;
	if (soc_load(soc, &cfg, err, sizeof err)) {
		fprintf(stderr, "simatc: %s\n", err);
		return 1;
	}
	for (int i = 0; i < c.nsets; i++)
		if (soc_set(&cfg, c.sets[i], err, sizeof err)) {
			fprintf(stderr, "simatc: %s\n", err);
			return 1;
		}
	return compile(&c, &cfg, sizes, nsizes);
}
