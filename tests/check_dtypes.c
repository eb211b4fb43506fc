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

/* Element i as a double, for the ONNX element types the tests use. */
static double elem(const struct rt_tensor *t, size_t i)
{
	switch (t->dtype) {
	case 1: return ((const float *)t->data)[i];
	case 6: return ((const int32_t *)t->data)[i];
	case 7: return (double)((const int64_t *)t->data)[i];
	case 3: return ((const int8_t *)t->data)[i];
	case 2:
	case 9: return ((const uint8_t *)t->data)[i];
	default: return NAN;
	}
}

static size_t elem_size(int dtype)
{
	return dtype == 7 ? 8 : dtype == 2 || dtype == 3 || dtype == 9 ? 1 : 4;
}

/* Compile NAME.onnx, run it on NAME/input_*.pb and compare every output:
 * of its declared type and size; floats with check_nodes' fp16 tolerances,
 * integers and bools exactly. */
static void run_model(const char *name)
{
	char path[8192], err[4096];
	struct soc_config cfg;
	make_models();
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, NULL, &m, err, sizeof err) == 0, "%s: %s", name, err);
	struct rt_tensor in[8], out[8], want[8];
	unsigned ni = m.ninputs, no = m.noutputs;
	ck_assert(ni <= 8 && no <= 8);
	for (unsigned i = 0; i < ni; i++) {
		snprintf(path, sizeof path, "%s/%s/input_%u.pb", dir, name, i);
		ck_assert_msg(rt_tensor_read(path, &in[i], err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(m.inputs[i].dtype, in[i].dtype);
	}
	struct sim_options so = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &so, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, in, ni, out, &run, err, sizeof err) == 0, "%s: %s",
		      name, err);
	for (unsigned o = 0; o < no; o++) {
		snprintf(path, sizeof path, "%s/%s/output_%u.pb", dir, name, o);
		ck_assert_msg(rt_tensor_read(path, &want[o], err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(out[o].dtype, want[o].dtype);
		ck_assert_int_eq(m.outputs[o].dtype, want[o].dtype);
		ck_assert_uint_eq(out[o].nbytes, want[o].nbytes);
		size_t n = want[o].nbytes / elem_size(want[o].dtype);
		int exact = want[o].dtype != 1;
		double peak = 0;
		for (size_t i = 0; i < n; i++)
			peak = fmax(peak, fabs(elem(&want[o], i)));
		for (size_t i = 0; i < n; i++) {
			double g = elem(&out[o], i), w = elem(&want[o], i);
			double tol = exact ? 0 : 2e-3 * fmax(1.0, peak) + 4e-3 * fabs(w);
			ck_assert_msg(fabs(g - w) <= tol, "%s output %u element %zu: got %g, want %g",
				      name, o, i, g, w);
		}
		rt_tensor_free(&out[o]);
		rt_tensor_free(&want[o]);
	}
	for (unsigned i = 0; i < ni; i++)
		rt_tensor_free(&in[i]);
	rt_run_free(&run);
	sim_device_free(dev);
	om_free(&m);
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

START_TEST(double_input_is_refused)
{
	char path[8192], err[4096];
	struct soc_config cfg;
	make_models();
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/double_in.onnx", dir);
	struct om_model m;
	ck_assert_int_ne(cc_compile(path, &cfg, NULL, &m, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "float64") && strstr(err, "not supported yet"), "%s", err);
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
	tcase_add_test(tc, double_input_is_refused);
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
