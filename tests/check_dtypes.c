/* check_dtypes: integer and bool tensors at the graph's edges (int32, int64,
 * int8, uint8, bool in and out, kern_dtype.c), comparisons, logic, Where and
 * Cast on the device, and BERT's attention-mask subgraph (an int64 mask cast,
 * scaled, unsqueezed and added to the scores before Softmax), against numpy
 * references from tests/dtype_models.py.  Integer and bool outputs must be
 * exact (their values are within fp16's exact range, |v| <= 2048). */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "model.h"
#include "model_util.h"

static char dir[4096];

static void make_models(void)
{
	tu_models(dir, sizeof dir, "dtypes", "dtype_models.py", NULL, "python3-onnx");
}

/* NAME.onnx on NAME/input_*.pb against NAME/output_*.pb (integers and bools
 * exactly, tests/model_util.c). */
static void run_model(const char *name)
{
	make_models();
	tu_run_compare("check_dtypes", dir, name, name);
}

START_TEST(attention_mask_int64_3d)
{
	run_model("attn_mask");
}
END_TEST

/* the mask [B, 1, 1, S] into NC1HWC0 scores [B, H, S, S] */
START_TEST(attention_mask_int64_4d)
{
	run_model("attn_mask4");
}
END_TEST

/* Greater/Not/Less/Xor, Where, Cast to int32/int8 (truncation, saturation),
 * int64 and bool outputs */
START_TEST(compare_logic_where_cast_outputs)
{
	run_model("logic");
}
END_TEST

/* int32 Equal broadcast, bool Not/And/Or, uint8 and int8 to float, int32 to
 * an int64 output */
START_TEST(integer_and_bool_inputs)
{
	run_model("edges");
}
END_TEST

/* the int64 edge over several tiles, in and out */
START_TEST(int64_edges_many_tiles)
{
	run_model("wide");
}
END_TEST

/* Add/Sub/Mul/Div wrapping as uint8 and int8 do (a broadcast and a
 * constant scalar operand among them) */
START_TEST(integer_arithmetic_8bit)
{
	run_model("int_arith8");
}
END_TEST

/* int32/int64 division toward zero, products, a broadcast sum; Max, Min
 * and Clip on integers */
START_TEST(integer_arithmetic_32bit)
{
	run_model("int_arith32");
}
END_TEST

/* Pow with tensor exponents: negative bases (integer exponents keep the
 * sign, others give NaN), 0 ** 0, 0 ** -1, a broadcast, integer Pow */
START_TEST(pow_tensor_exponents)
{
	run_model("pow_any");
}
END_TEST

/* float64, int16, uint16, uint32 and uint64 inputs and outputs, converted
 * by the runtime at the edge (om/om_edge.c), the .om describing them
 * with the user's type */
START_TEST(edge_converted_types)
{
	run_model("edge_types");
}
END_TEST

START_TEST(complex_input_is_refused)
{
	char path[8192], err[4096];
	struct soc_config cfg;
	make_models();
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/complex_in.onnx", dir);
	struct om_model m;
	ck_assert_int_ne(cc_compile(path, &cfg, NULL, &m, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "'c'") && strstr(err, "not supported yet"), "%s", err);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dtypes");
	TCase *tc = tcase_create("Core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, attention_mask_int64_3d);
	tcase_add_test(tc, attention_mask_int64_4d);
	tcase_add_test(tc, compare_logic_where_cast_outputs);
	tcase_add_test(tc, integer_and_bool_inputs);
	tcase_add_test(tc, int64_edges_many_tiles);
	tcase_add_test(tc, integer_arithmetic_8bit);
	tcase_add_test(tc, integer_arithmetic_32bit);
	tcase_add_test(tc, pow_tensor_exponents);
	tcase_add_test(tc, edge_converted_types);
	tcase_add_test(tc, complex_input_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_set_fork_status(sr, CK_NOFORK); /* one model generation for the run */
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
