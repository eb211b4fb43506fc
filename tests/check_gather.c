/* check_gather: Gather with integer graph inputs read on the device (an
 * embedding exported from PyTorch, int64 ids with negative and
 * out-of-range ones; int32 ids along another axis; constant indices), the
 * folding of Gather on constants, and Slice / Split / Squeeze / Unsqueeze /
 * Expand / Cast, on models and references from tests/gather_models.py. */
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
	tu_models(dir, sizeof dir, "gather", "gather_models.py", NULL, "python3-torch, python3-onnx");
}

/* Compile model.onnx, run it on data set set/ and compare every output
 * with fp16 tolerances (those of check_nodes). */
static void run_model(const char *model, const char *set)
{
	char path[8192], err[4096];
	struct soc_config cfg;
	make_models();
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, NULL, &m, err, sizeof err) == 0, "%s: %s", model, err);
	struct rt_tensor in[8], out[8], want[8];
	unsigned ni = m.ninputs, no = m.noutputs;
	ck_assert(ni <= 8 && no <= 8);
	for (unsigned i = 0; i < ni; i++) {
		snprintf(path, sizeof path, "%s/%s/input_%u.pb", dir, set, i);
		ck_assert_msg(rt_tensor_read(path, &in[i], err, sizeof err) == 0, "%s", err);
	}
	struct sim_options so = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &so, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, in, ni, out, &run, err, sizeof err) == 0, "%s: %s",
		      model, err);
	for (unsigned o = 0; o < no; o++) {
		snprintf(path, sizeof path, "%s/%s/output_%u.pb", dir, set, o);
		ck_assert_msg(rt_tensor_read(path, &want[o], err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(out[o].nbytes, want[o].nbytes);
		const float *g = out[o].data, *w = want[o].data;
		size_t n = want[o].nbytes / 4;
		double peak = 0;
		for (size_t i = 0; i < n; i++)
			peak = fmax(peak, fabs(w[i]));
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(fabs(g[i] - w[i]) <= 2e-3 * fmax(1.0, peak) + 4e-3 * fabs(w[i]),
				      "%s/%s output %u element %zu: got %g, want %g", model, set, o, i,
				      g[i], w[i]);
		rt_tensor_free(&out[o]);
		rt_tensor_free(&want[o]);
	}
	for (unsigned i = 0; i < ni; i++)
		rt_tensor_free(&in[i]);
	rt_run_free(&run);
	sim_device_free(dev);
	om_free(&m);
}

START_TEST(embedding_int64_ids_match_pytorch)
{
	run_model("embed", "embed_torch");
}
END_TEST

START_TEST(embedding_negative_ids_wrap)
{
	run_model("embed", "embed");
}
END_TEST

START_TEST(embedding_out_of_range_ids_clamp)
{
	run_model("embed", "embed_clamp");
}
END_TEST

/* BERT's embeddings: token Gather on the device, the position Gather folded,
 * and a slice of the last axis at 16. */
START_TEST(embedding_with_positions_and_slice)
{
	run_model("embed_pos", "embed_pos");
}
END_TEST

START_TEST(gather_int32_axis1_of_activation)
{
	run_model("gather_axis1", "gather_axis1");
}
END_TEST

START_TEST(gather_constant_indices_of_activation)
{
	run_model("gather_const", "gather_const");
}
END_TEST

START_TEST(slice_split_squeeze_expand_cast)
{
	run_model("shapes", "shapes");
}
END_TEST

/* An int64 input read in place as Gather's indices and converted to fp16
 * for a Cast at once. */
START_TEST(integer_input_gather_and_cast)
{
	run_model("int_mixed", "int_mixed");
}
END_TEST

/* The position embedding: Gather of a constant table with constant ids
 * (torch's arange, folded first) becomes a constant of the rows. */
START_TEST(constfold_gather_of_constants)
{
	char path[8192], err[1024];
	make_models();
	snprintf(path, sizeof path, "%s/embed_pos.onnx", dir);
	struct cc_graph g;
	ck_assert_msg(cc_onnx_load(path, &g, err, sizeof err) == 0, "%s", err);
	int pos = cc_tensor_find(&g, "pos.weight");
	ck_assert_int_ge(pos, 0);
	int gi = -1;
	for (int i = 0; i < g.nn; i++) {
		if (!strcmp(g.n[i].op, "Gather") && g.n[i].in[0] == pos)
			gi = i;
		ck_assert_int_ge(cc_fold_node(&g, i), 0);
	}
	ck_assert_int_ge(gi, 0);
	ck_assert(g.n[gi].dead);
	const struct cc_tensor *y = &g.t[g.n[gi].out[0]], *w = &g.t[pos];
	ck_assert_ptr_nonnull(y->data);
	ck_assert_int_eq(y->rank, 3);
	ck_assert_int_eq(y->dims[1], 12);
	ck_assert_int_eq(y->dims[2], 64);
	/* arange ids: the table's first 12 rows */
	ck_assert_int_eq(memcmp(y->data, w->data, 12 * 64 * 4), 0);
	cc_graph_free(&g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gather");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, embedding_int64_ids_match_pytorch);
	tcase_add_test(tc, embedding_negative_ids_wrap);
	tcase_add_test(tc, embedding_out_of_range_ids_clamp);
	tcase_add_test(tc, embedding_with_positions_and_slice);
	tcase_add_test(tc, gather_int32_axis1_of_activation);
	tcase_add_test(tc, gather_constant_indices_of_activation);
	tcase_add_test(tc, slice_split_squeeze_expand_cast);
	tcase_add_test(tc, integer_input_gather_and_cast);
	tcase_add_test(tc, constfold_gather_of_constants);
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
