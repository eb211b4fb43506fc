/* check_shape_ops: the variants of LogSoftmax/Softmax, Slice, Split,
 * Concat, Pad and Resize that the ONNX node tests do not reach: opset 11's
 * coercion to 2-D at the axis, the channels of a 4-D (NC1HWC0) tensor, rows
 * over 128 and a spread of values that underflows exp in fp16 (LogSoftmax
 * keeps x - max); Slice steps along the lanes (positive, negative, more
 * than 255 blocks apart) and the leading axes; NC1HWC0 channel slices,
 * splits and concats at any channel; Pad along the lane axis (ND's last,
 * NC1HWC0's channels) in constant, reflect and edge modes, reflect pads
 * past the axis, negative pads, an int32 Pad with an integer
 * constant_value; Resize cubic against torch's bicubic, tf_crop_and_resize
 * and exclude_outside against ONNX's reference; an empty Slice feeding a
 * Concat and an element-wise op; Reduce* of 4-D tensors and over axes that
 * are not adjacent.  Models and
 * numpy/torch references from tests/shape_ops_models.py; the tolerances
 * are check_nodes'. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "graph.h"
#include "model.h"
#include "model_util.h"
#include "passes.h"

static char dir[4096];

static void make_models(void)
{
	tu_models(dir, sizeof dir, "shapeops", "shape_ops_models.py", NULL,
		  "python3-torch, python3-onnx");
}

/* model.onnx on its own data set (tests/model_util.c: fp16 tolerances). */
static void run_model(const char *model)
{
	make_models();
	tu_run_compare("check_shape_ops", dir, model, model);
}

START_TEST(softmax_opset11_axis1_4d)
{
	run_model("softmax_opset11_axis1_4d");
}
END_TEST

START_TEST(softmax_opset11_axis0_3d)
{
	run_model("softmax_opset11_axis0_3d");
}
END_TEST

START_TEST(softmax_channels_4d)
{
	run_model("softmax_channels_4d");
}
END_TEST

START_TEST(softmax_rows300)
{
	run_model("softmax_rows300");
}
END_TEST

START_TEST(softmax_mid_axis)
{
	run_model("softmax_mid_axis");
}
END_TEST

START_TEST(softmax_rows40_spread)
{
	run_model("softmax_rows40_spread");
}
END_TEST

START_TEST(logsoftmax_opset11_axis1_4d)
{
	run_model("logsoftmax_opset11_axis1_4d");
}
END_TEST

START_TEST(logsoftmax_opset11_axis0_3d)
{
	run_model("logsoftmax_opset11_axis0_3d");
}
END_TEST

START_TEST(logsoftmax_channels_4d)
{
	run_model("logsoftmax_channels_4d");
}
END_TEST

START_TEST(logsoftmax_rows300)
{
	run_model("logsoftmax_rows300");
}
END_TEST

START_TEST(logsoftmax_mid_axis)
{
	run_model("logsoftmax_mid_axis");
}
END_TEST

START_TEST(logsoftmax_rows40_spread)
{
	run_model("logsoftmax_rows40_spread");
}
END_TEST

START_TEST(slice_last_step3)
{
	run_model("slice_last_step3");
}
END_TEST

START_TEST(slice_last_neg5)
{
	run_model("slice_last_neg5");
}
END_TEST

START_TEST(slice_last_step290)
{
	run_model("slice_last_step290");
}
END_TEST

START_TEST(slice_last_neg1_3d)
{
	run_model("slice_last_neg1_3d");
}
END_TEST

START_TEST(slice_lead_steps)
{
	run_model("slice_lead_steps");
}
END_TEST

START_TEST(slice_channels_step)
{
	run_model("slice_channels_step");
}
END_TEST

START_TEST(slice_channels_start5)
{
	run_model("slice_channels_start5");
}
END_TEST

START_TEST(split_channels_4d)
{
	run_model("split_channels_4d");
}
END_TEST

START_TEST(pad_last_constant)
{
	run_model("pad_last_constant");
}
END_TEST

START_TEST(pad_last_reflect)
{
	run_model("pad_last_reflect");
}
END_TEST

START_TEST(pad_last_edge)
{
	run_model("pad_last_edge");
}
END_TEST

START_TEST(pad_channels_constant)
{
	run_model("pad_channels_constant");
}
END_TEST

START_TEST(pad_channels_reflect)
{
	run_model("pad_channels_reflect");
}
END_TEST

START_TEST(pad_channels_edge)
{
	run_model("pad_channels_edge");
}
END_TEST

START_TEST(pad_reflect_large)
{
	run_model("pad_reflect_large");
}
END_TEST

START_TEST(pad_reflect_large_4d)
{
	run_model("pad_reflect_large_4d");
}
END_TEST

START_TEST(pad_crop_last)
{
	run_model("pad_crop_last");
}
END_TEST

START_TEST(pad_crop_and_pad_4d)
{
	run_model("pad_crop_and_pad_4d");
}
END_TEST

START_TEST(pad_int32_constant)
{
	run_model("pad_int32_constant");
}
END_TEST

/* Reduce* of 4-D tensors and over axes that are not adjacent */
START_TEST(reduce_any_axes)
{
	static const char *const m[] = { "reduce_mean_hw_4d", "reduce_sum_c_4d",
					 "reduce_max_nh_4d", "reduce_min_02_3d",
					 "reduce_mean_134_5d" };
	for (int k = 0; k < 5; k++)
		run_model(m[k]);
}
END_TEST

START_TEST(concat_empty)
{
	run_model("concat_empty");
}
END_TEST

START_TEST(concat_channels_4d)
{
	run_model("concat_channels_4d");
}
END_TEST

START_TEST(resize_crop_linear)
{
	run_model("resize_crop_linear");
}
END_TEST

START_TEST(resize_crop_cubic)
{
	run_model("resize_crop_cubic");
}
END_TEST

START_TEST(resize_cubic_exclude)
{
	run_model("resize_cubic_exclude");
}
END_TEST

START_TEST(resize_cubic_torch)
{
	run_model("resize_cubic_torch");
}
END_TEST

START_TEST(resize_cubic_torch_align)
{
	run_model("resize_cubic_torch_align");
}
END_TEST

START_TEST(resize_cubic_torch_down)
{
	run_model("resize_cubic_torch_down");
}
END_TEST

/* Einsum's batched products, the L2/L1 reductions and F.normalize with
 * zero rows, a Swin-style mask folded from constants */
START_TEST(zoo_ops)
{
	static const char *const m[] = { "einsum_qk", "einsum_av", "normalize_zero_rows",
					 "reduce_sumsquare_l1", "folded_window_mask" };
	for (int k = 0; k < 5; k++)
		run_model(m[k]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shape_ops");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, softmax_opset11_axis1_4d);
	tcase_add_test(tc, zoo_ops);
	tcase_add_test(tc, softmax_opset11_axis0_3d);
	tcase_add_test(tc, softmax_channels_4d);
	tcase_add_test(tc, softmax_rows300);
	tcase_add_test(tc, softmax_mid_axis);
	tcase_add_test(tc, softmax_rows40_spread);
	tcase_add_test(tc, logsoftmax_opset11_axis1_4d);
	tcase_add_test(tc, logsoftmax_opset11_axis0_3d);
	tcase_add_test(tc, logsoftmax_channels_4d);
	tcase_add_test(tc, logsoftmax_rows300);
	tcase_add_test(tc, logsoftmax_mid_axis);
	tcase_add_test(tc, logsoftmax_rows40_spread);
	tcase_add_test(tc, slice_last_step3);
	tcase_add_test(tc, slice_last_neg5);
	tcase_add_test(tc, slice_last_step290);
	tcase_add_test(tc, slice_last_neg1_3d);
	tcase_add_test(tc, slice_lead_steps);
	tcase_add_test(tc, slice_channels_step);
	tcase_add_test(tc, slice_channels_start5);
	tcase_add_test(tc, split_channels_4d);
	tcase_add_test(tc, concat_channels_4d);
	tcase_add_test(tc, pad_last_constant);
	tcase_add_test(tc, pad_last_reflect);
	tcase_add_test(tc, pad_last_edge);
	tcase_add_test(tc, pad_channels_constant);
	tcase_add_test(tc, pad_channels_reflect);
	tcase_add_test(tc, pad_channels_edge);
	tcase_add_test(tc, pad_reflect_large);
	tcase_add_test(tc, pad_reflect_large_4d);
	tcase_add_test(tc, pad_crop_last);
	tcase_add_test(tc, pad_crop_and_pad_4d);
	tcase_add_test(tc, pad_int32_constant);
	tcase_add_test(tc, concat_empty);
	tcase_add_test(tc, reduce_any_axes);
	tcase_add_test(tc, resize_crop_linear);
	tcase_add_test(tc, resize_crop_cubic);
	tcase_add_test(tc, resize_cubic_exclude);
	tcase_add_test(tc, resize_cubic_torch);
	tcase_add_test(tc, resize_cubic_torch_align);
	tcase_add_test(tc, resize_cubic_torch_down);
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
