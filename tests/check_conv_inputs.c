/* check_conv_inputs: Conv and ConvTranspose whose weights are graph inputs
 * or computed by a node, laid out as FRACTAL_Z on the device
 * (compiler/lower_wlayout.c): 2-D, 1-D and 3-D, several 16-channel blocks and
 * counts that are not multiples of 16 on both sides (the permute's zeroed
 * lanes, ConvTranspose's zero-filled rows), strides, pads, dilations,
 * output_padding, a constant bias and a fused Relu, a layer large enough
 * to tile over every core.  Models and PyTorch references from
 * tests/conv_input_models.py; the tolerances are check_nodes'. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "gen_util.h"
#include "kernels.h"
#include "graph.h"
#include "model.h"
#include "model_util.h"
#include "sim.h"

static char dir[4096];

static void run_model(const char *model)
{
	tu_models(dir, sizeof dir, "convin", "conv_input_models.py", NULL,
		  "python3-torch, python3-onnx");
	tu_run_compare("check_conv_inputs", dir, model, model);
}

#define MODEL_TEST(name) TU_MODEL_TEST(run_model, name)

MODEL_TEST(conv_s2_bias_relu)
MODEL_TEST(conv_1x1)
MODEL_TEST(conv_3x3_big)
MODEL_TEST(conv_computed_w)
MODEL_TEST(conv1d_dil)
MODEL_TEST(conv3d_s2)
MODEL_TEST(convt_s2_op1)
MODEL_TEST(convt_40_33)
MODEL_TEST(convt_32_dil)
MODEL_TEST(convt1d_s3)
MODEL_TEST(convt3d_s2)

/* The layout is tasks of the model: a TransData to FRACTAL_Z before the
 * conv, which reads it from the workspace (no weight bytes in the .om). */
START_TEST(layout_tasks)
{
	tu_models(dir, sizeof dir, "convin", "conv_input_models.py", NULL,
		  "python3-torch, python3-onnx");
	char path[8192], err[4096];
	struct soc_config cfg;
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/convt_40_33.onnx", dir);
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, NULL, &m, err, sizeof err) == 0, "%s", err);
	int layout = 0, zero = 0, conv = -1;
	for (unsigned i = 0; i < m.ntasks; i++) {
		const struct om_task *t = &m.tasks[i];
		int fz = t->noutputs == 1 && t->outputs[0].format == CC_FMT_FRACTAL_Z;
		if (!strcmp(t->op_type, "ZeroFill") && fz)
			zero++;
		else if (!strcmp(t->op_type, "TransData") && fz && conv < 0)
			layout++;
		else if (!strncmp(t->op_type, "ConvTranspose", 13))
			conv = (int)i;
	}
	/* 40 input channels: two whole 16-channel blocks, one partial (its
	 * rows past channel 40 zeroed) */
	ck_assert_int_eq(zero, 1);
	ck_assert_int_eq(layout, 2);
	ck_assert_int_ge(conv, 0);
	for (unsigned a = 0; a < m.tasks[conv].nargs; a++)
		ck_assert_int_ne(m.tasks[conv].args[a].kind, OM_ARG_WEIGHT);
	om_free(&m);
}
END_TEST

/* cc_gen_zero_runs, ConvTranspose's zero rows, on its own: zeros exactly
 * at the runs, nothing else written (a NaN sentinel elsewhere), on a
 * 32-core and a 2-core SoC, with runs per DMA limited by burst count and by
 * the UB. */
START_TEST(zero_runs)
{
	static const char *const socs[] = { "Ascend910", "Ascend310" };
	static const int64_t cases[][4] = { /* off, nruns, run, stride (blocks) */
					    { 3, 1000, 5, 16 },
					    { 0, 3, 7000, 7001 },
					    { 17, 1, 1, 1 } };
	for (int si = 0; si < 2; si++)
		for (int k = 0; k < 3; k++) {
			int64_t off = cases[k][0], nr = cases[k][1], run = cases[k][2];
			int64_t stride = cases[k][3], nb = off + (nr - 1) * stride + run + 64;
			struct rig r;
			rig_open(&r, socs[si], SIM_MODE_FULL);
			uint16_t *buf = malloc((size_t)nb * 32);
			ck_assert_ptr_nonnull(buf);
			for (int64_t i = 0; i < nb * 16; i++)
				buf[i] = 0x7e00;
			uint64_t g = rig_alloc(&r, (uint64_t)nb * 32);
			ck_assert_int_eq(sim_gm_write(r.dev, g, buf, (size_t)nb * 32), 0);
			struct cc_prog p;
			cc_prog_init(&p);
			unsigned bd;
			char err[256];
			ck_assert_msg(cc_gen_zero_runs(&r.cfg, off, nr, run, stride, &p, &bd, err,
						       sizeof err) == 0, "%s", err);
			rig_run(&r, &p, bd, g, 0, "zero runs");
			ck_assert_int_eq(sim_gm_read(r.dev, g, buf, (size_t)nb * 32), 0);
			for (int64_t b = 0; b < nb; b++) {
				int64_t q = b - off;
				int in = q >= 0 && q / stride < nr && q % stride < run;
				for (int e = 0; e < 16; e++)
					ck_assert_msg(buf[b * 16 + e] == (in ? 0 : 0x7e00),
						      "%s case %d: block %lld lane %d is %#x", socs[si],
						      k, (long long)b, e, buf[b * 16 + e]);
			}
			free(buf);
			rig_close(&r);
		}
}
END_TEST

START_TEST(grouped_refused)
{
	tu_models(dir, sizeof dir, "convin", "conv_input_models.py", NULL,
		  "python3-torch, python3-onnx");
	char path[8192], err[4096];
	struct soc_config cfg;
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/conv_grouped_input_w.onnx", dir);
	struct om_model m;
	ck_assert_int_ne(cc_compile(path, &cfg, NULL, &m, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "(Conv)") && strstr(err, "grouped convolution with weights "
							   "that are not constants is not "
							   "supported yet"), "%s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conv_inputs");
	TCase *tc = tcase_create("models");
	tcase_add_test(tc, conv_s2_bias_relu);
	tcase_add_test(tc, conv_1x1);
	tcase_add_test(tc, conv_3x3_big);
	tcase_add_test(tc, conv_computed_w);
	tcase_add_test(tc, conv1d_dil);
	tcase_add_test(tc, conv3d_s2);
	tcase_add_test(tc, convt_s2_op1);
	tcase_add_test(tc, convt_40_33);
	tcase_add_test(tc, convt_32_dil);
	tcase_add_test(tc, convt1d_s3);
	tcase_add_test(tc, convt3d_s2);
	tcase_add_test(tc, layout_tasks);
	tcase_add_test(tc, zero_runs);
	tcase_add_test(tc, grouped_refused);
	tcase_set_timeout(tc, 600);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK); /* one export for the whole run */
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
