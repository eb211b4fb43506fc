/* check_conv3d: the 3-D (rank-5) Conv, ConvTranspose, MaxPool, AveragePool
 * and BatchNormalization (compiler/lower_conv3d.c) at sizes the ONNX node tests
 * do not reach: 16 -> 32 channels over 8x16x16 (several channel blocks,
 * every core), per-axis strides, pads and dilations, groups that are not
 * whole channel blocks, a fused ReLU, odd sizes; pools with ceil_mode and
 * count_include_pad both ways and a pooled row of 1521 pixels;
 * BatchNorm3d with non-trivial running statistics.  Models exported by
 * tests/conv3d_models.py with torch's outputs as the reference; the
 * tolerances are check_nodes'. */
#include <check.h>
#include <stdlib.h>

#include "model_util.h"

static char dir[4096];

/* model.onnx on its own data set (tests/model_util.c: fp16 tolerances). */
static void run_model(const char *model)
{
	tu_models(dir, sizeof dir, "conv3d", "conv3d_models.py", NULL,
		  "python3-torch, python3-onnx");
	tu_run_compare("check_conv3d", dir, model, model);
}

TU_MODEL_TEST(run_model, conv3d_relu)
TU_MODEL_TEST(run_model, conv3d_groups)
TU_MODEL_TEST(run_model, conv3d_odd)

/* ConvTranspose3d: zeros inserted along D, H and W, flipped weights */
TU_MODEL_TEST(run_model, convt3d_s2_relu)
TU_MODEL_TEST(run_model, convt3d_groups_dil)

TU_MODEL_TEST(run_model, maxpool3d_ceil)
TU_MODEL_TEST(run_model, avgpool3d_ceil_incl)
TU_MODEL_TEST(run_model, avgpool3d_ceil_excl)
TU_MODEL_TEST(run_model, avgpool3d_pads_incl)
TU_MODEL_TEST(run_model, avgpool3d_pads_incl_ceil)
TU_MODEL_TEST(run_model, avgpool3d_wide)
TU_MODEL_TEST(run_model, bn3d_relu)

int main(void)
{
	Suite *s = suite_create("conv3d");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, conv3d_relu);
	tcase_add_test(tc, conv3d_groups);
	tcase_add_test(tc, conv3d_odd);
	tcase_add_test(tc, convt3d_s2_relu);
	tcase_add_test(tc, convt3d_groups_dil);
	tcase_add_test(tc, maxpool3d_ceil);
	tcase_add_test(tc, avgpool3d_ceil_incl);
	tcase_add_test(tc, avgpool3d_ceil_excl);
	tcase_add_test(tc, avgpool3d_pads_incl);
	tcase_add_test(tc, avgpool3d_pads_incl_ceil);
	tcase_add_test(tc, avgpool3d_wide);
	tcase_add_test(tc, bn3d_relu);
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
