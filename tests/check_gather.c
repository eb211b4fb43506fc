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

/* model.onnx on data set set/ (tests/model_util.c: fp16 tolerances). */
static void run_model(const char *model, const char *set)
{
	make_models();
	tu_run_compare("check_gather", dir, model, set);
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
