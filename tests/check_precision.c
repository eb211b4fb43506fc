/* check_precision: --precision_mode (force_fp16, allow_mix_precision,
 * must_keep_origin_dtype) and --keep_dtype (pass_precision.c): which nodes
 * the report says compute in fp32 and why, that those kernels really are
 * more accurate (against float64 references from tests/precision_models.py),
 * and the keep_dtype file's errors naming the line. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "golden.h"
#include "model.h"
#include "model_util.h"

static char dir[4096];

static void make_models(void)
{
	tu_models(dir, sizeof dir, "precision", "precision_models.py", NULL, "python3-onnx");
}

struct result {
	double maxerr[4]; /* per output: max |got - want| */
	char report[1 << 16];
};

/* Compile NAME.onnx with mode (and keep_dtype), run it on its inputs, and
 * compare every output with the reference. */
static void run(const char *name, enum cc_precision_mode mode, const char *keep,
		struct result *r)
{
	char path[8192], rep[8192], err[4096];
	struct soc_config cfg;
	make_models();
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	snprintf(rep, sizeof rep, "%s/%s_report.json", dir, name);
	struct cc_options opt = { .report_json = rep, .precision_mode = mode, .keep_dtype = keep };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s: %s", name, err);
	FILE *f = fopen(rep, "r");
	ck_assert_ptr_nonnull(f);
	size_t len = fread(r->report, 1, sizeof r->report - 1, f);
	r->report[len] = 0;
	fclose(f);
	struct om_tensor in[4], out[4], want;
	ck_assert(m.ninputs <= 4 && m.noutputs <= 4);
	for (unsigned i = 0; i < m.ninputs; i++) {
		snprintf(path, sizeof path, "%s/%s/input_%u.pb", dir, name, i);
		ck_assert_msg(om_tensor_read(path, &in[i], err, sizeof err) == 0, "%s", err);
	}
	struct sim_options so = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &so, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, in, m.ninputs, out, &run, err, sizeof err) == 0,
		      "%s: %s", name, err);
	/* the mode's ATC name, and the keep_dtype file's name (not its temp dir) */
	static const char *const modes[] = { "force_fp16", "allow_mix_precision",
					     "must_keep_origin_dtype" };
	char key[512];
	snprintf(key, sizeof key, "check_precision/%s/Ascend910/%s/keep_%s", name, modes[mode],
		 keep ? strrchr(keep, '/') + 1 : "none");
	tu_golden(key, run.cycles, out, m.noutputs);
	for (unsigned o = 0; o < m.noutputs; o++) {
		snprintf(path, sizeof path, "%s/%s/output_%u.pb", dir, name, o);
		ck_assert_msg(om_tensor_read(path, &want, err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(out[o].nbytes, want.nbytes);
		const float *g = out[o].data, *w = want.data;
		r->maxerr[o] = 0;
		for (size_t i = 0; i < want.nbytes / 4; i++)
			r->maxerr[o] = fmax(r->maxerr[o], fabs((double)g[i] - w[i]));
		om_tensor_free(&out[o]);
		om_tensor_free(&want);
	}
	for (unsigned i = 0; i < m.ninputs; i++)
		om_tensor_free(&in[i]);
	rt_run_free(&run);
	sim_device_free(dev);
	om_free(&m);
}

/* The report's precision entry of node: "fp32", "fp16", "int8". */
static void expect(const struct result *r, const char *node, const char *op, const char *prec,
		   const char *reason)
{
	char want[512];
	snprintf(want, sizeof want, "{\"node\": \"%s\", \"op\": \"%s\", \"precision\": \"%s\", "
				    "\"reason\": \"%s",
		 node, op, prec, reason ? reason : "");
	ck_assert_msg(strstr(r->report, want), "no %s in the report: %s", want, r->report);
}

/* Log(Exp(x)) for |x| <= 0.05 (x fp16 values): fp16's exp(x) ~ 1 has steps
 * of 2^-10, so the fp16 chain is off by up to ~5e-4; computed in fp32 the
 * chain returns x to within fp32's rounding, which the final fp16 rounding
 * of x itself does not change (at most 2.5e-5 allowed: half an fp16 step). */
START_TEST(mixed_chain_is_fp32_and_more_accurate)
{
	static struct result f16, mix;
	run("mixchain", CC_PREC_FORCE_FP16, NULL, &f16);
	run("mixchain", CC_PREC_MIX, NULL, &mix);
	/* Exp is fused into the Log's chain: the chain is the node "log" */
	expect(&f16, "log", "Log", "fp16", "the default");
	expect(&mix, "log", "Log", "fp32", "allow_mix_precision");
	fprintf(stderr, "Log(Exp(x)): max error fp16 %g, allow_mix_precision %g\n", f16.maxerr[0],
		mix.maxerr[0]);
	ck_assert_msg(mix.maxerr[0] < 3e-5, "fp32 chain error %g", mix.maxerr[0]);
	ck_assert_msg(f16.maxerr[0] > 4 * mix.maxerr[0], "fp16 %g vs fp32 %g", f16.maxerr[0],
		      mix.maxerr[0]);
}
END_TEST

/* allow_mix_precision: the large reduction and the Softmax fp32, the Relu and
 * the MatMul fp16; the sum of 2048 values in [0, 1) (about 1024, where fp16's
 * step is 1) within half a step, closer than force_fp16's halving tree. */
START_TEST(mix_lists_and_large_reduction)
{
	static struct result f16, mix;
	run("mixnet", CC_PREC_FORCE_FP16, NULL, &f16);
	run("mixnet", CC_PREC_MIX, NULL, &mix);
	expect(&mix, "big_sum", "ReduceSum", "fp32", "allow_mix_precision: a large reduction");
	expect(&mix, "softmax", "Softmax", "fp32", "allow_mix_precision: numerically sensitive");
	expect(&mix, "keep_me", "Relu", "fp16", "the default");
	expect(&mix, "matmul", "MatMul", "fp16", "the default");
	fprintf(stderr, "ReduceSum over 2048 (sums ~1024): max error fp16 %g, mixed %g; "
			"Softmax: fp16 %g, mixed %g\n",
		f16.maxerr[0], mix.maxerr[0], f16.maxerr[1], mix.maxerr[1]);
	ck_assert_msg(mix.maxerr[0] <= 0.5 + 1e-3, "fp32 sum error %g (fp16 step at 1024: 1)",
		      mix.maxerr[0]);
	ck_assert_msg(mix.maxerr[0] < f16.maxerr[0], "mixed %g vs fp16 %g", mix.maxerr[0],
		      f16.maxerr[0]);
	ck_assert_msg(mix.maxerr[1] <= f16.maxerr[1], "softmax mixed %g vs fp16 %g",
		      mix.maxerr[1], f16.maxerr[1]);
}
END_TEST

/* must_keep_origin_dtype: every float32 node fp32 where a kernel can; the
 * cube stays fp16 and the report says so. */
START_TEST(keep_origin_dtype)
{
	static struct result r;
	run("mixnet", CC_PREC_KEEP_ORIGIN, NULL, &r);
	expect(&r, "big_sum", "ReduceSum", "fp32", "must_keep_origin_dtype");
	expect(&r, "keep_me", "Relu", "fp32", "must_keep_origin_dtype");
	expect(&r, "softmax", "Softmax", "fp32", "must_keep_origin_dtype");
	expect(&r, "matmul", "MatMul", "fp16", "the cube has no fp32 mode on Ascend910");
}
END_TEST

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* --keep_dtype pins by name and by OpType::, in force_fp16 mode. */
START_TEST(keep_dtype_file)
{
	static struct result r;
	char keep[8192];
	make_models();
	snprintf(keep, sizeof keep, "%s/keep.cfg", dir);
	write_file(keep, "# ATC's --keep_dtype file\nkeep_me\n\nOpType::Softmax\n");
	run("mixnet", CC_PREC_FORCE_FP16, keep, &r);
	expect(&r, "keep_me", "Relu", "fp32", "pinned to float32 by --keep_dtype");
	expect(&r, "softmax", "Softmax", "fp32", "pinned to float32 by --keep_dtype");
	expect(&r, "big_sum", "ReduceSum", "fp16", "the default");
}
END_TEST

START_TEST(keep_dtype_errors)
{
	char keep[8192], path[8192], err[4096];
	struct soc_config cfg;
	make_models();
	ck_assert(soc_load("Ascend910", &cfg, err, sizeof err) == 0);
	snprintf(path, sizeof path, "%s/mixnet.onnx", dir);
	snprintf(keep, sizeof keep, "%s/bad.cfg", dir);
	write_file(keep, "keep_me\nno_such_node\n");
	struct cc_options opt = { .keep_dtype = keep };
	struct om_model m;
	ck_assert(cc_compile(path, &cfg, &opt, &m, err, sizeof err) != 0);
	ck_assert_msg(strstr(err, "bad.cfg:2: no_such_node matches no node"), "%s", err);
	write_file(keep, "OpType::\n");
	ck_assert(cc_compile(path, &cfg, &opt, &m, err, sizeof err) != 0);
	ck_assert_msg(strstr(err, "bad.cfg:1: OpType:: needs an operator type"), "%s", err);
	snprintf(keep, sizeof keep, "%s/missing.cfg", dir);
	ck_assert(cc_compile(path, &cfg, &opt, &m, err, sizeof err) != 0);
	ck_assert_msg(strstr(err, "missing.cfg: cannot open"), "%s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("precision");
	TCase *tc = tcase_create("precision");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, mixed_chain_is_fp32_and_more_accurate);
	tcase_add_test(tc, mix_lists_and_large_reduction);
	tcase_add_test(tc, keep_origin_dtype);
	tcase_add_test(tc, keep_dtype_file);
	tcase_add_test(tc, keep_dtype_errors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
