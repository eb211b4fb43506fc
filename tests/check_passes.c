/* check_passes: the graph passes, each on a small graph made for it
 * (tests/pass_models.py): what they change, and that folded weights are
 * the arithmetic the pass claims. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "model.h"
#include "kernels.h"
#include "passes.h"

static char dir[4096];

static void make_models(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof dir, "/tmp/davinci-passes-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const char *src = getenv("srcdir");
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/pass_models.py %s",
		 src && *src ? src : ".", dir);
	ck_assert_msg(system(cmd) == 0, "tests/pass_models.py failed (needs python3-onnx)");
}

static void load(const char *name, struct cc_graph *g)
{
	char path[8192], err[1024];
	make_models();
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	ck_assert_msg(cc_onnx_load(path, g, err, sizeof err) == 0, "%s", err);
}

static int live(const struct cc_graph *g, const char *op)
{
	int n = 0;
	for (int i = 0; i < g->nn; i++)
		n += !g->n[i].dead && !strcmp(g->n[i].op, op);
	return n;
}

static int node(const struct cc_graph *g, const char *name)
{
	for (int i = 0; i < g->nn; i++)
		if (!strcmp(g->n[i].name, name))
			return i;
	return -1;
}

START_TEST(bnfold_folds_and_keeps_arithmetic)
{
	struct cc_graph g;
	struct cc_pass_log log = { 0 };
	char err[256];
	load("conv_bn_relu", &g);
	int ci = node(&g, "conv");
	const float *w0 = g.t[g.n[ci].in[1]].data, *b0 = g.t[g.n[ci].in[2]].data;
	float w[108], b[4];
	memcpy(w, w0, sizeof w);
	memcpy(b, b0, sizeof b);
	const float *s = g.t[cc_tensor_find(&g, "s")].data, *B = g.t[cc_tensor_find(&g, "B")].data;
	const float *m = g.t[cc_tensor_find(&g, "mean")].data;
	const float *v = g.t[cc_tensor_find(&g, "var")].data;
	ck_assert_int_eq(cc_pass_bnfold(&g, &log, err, sizeof err), 1);
	ck_assert_int_eq(live(&g, "BatchNormalization"), 0);
	const struct cc_node *conv = &g.n[ci];
	ck_assert_int_eq(conv->out[0], cc_tensor_find(&g, "n"));
	const float *w1 = g.t[conv->in[1]].data, *b1 = g.t[conv->in[2]].data;
	for (int o = 0; o < 4; o++) {
		double k = s[o] / sqrt(v[o] + 1e-3);
		ck_assert_double_eq_tol(b1[o], (b[o] - m[o]) * k + B[o], 1e-5);
		for (int j = 0; j < 27; j++)
			ck_assert_double_eq_tol(w1[o * 27 + j], w[o * 27 + j] * k, 1e-5);
	}
	ck_assert_ptr_nonnull(strstr(log.buf, "bnfold: 1"));
	ck_assert_int_eq(cc_pass_fuse_act(&g, &log, err, sizeof err), 1);
	ck_assert_int_eq(live(&g, "Relu"), 0);
	ck_assert_int_eq(g.n[ci].act, CC_ACT_RELU);
	ck_assert_str_eq(g.n[ci].fused, "BatchNormalization+Relu");
	ck_assert_int_eq(g.n[ci].out[0], cc_tensor_find(&g, "y"));
	free(log.buf);
	cc_graph_free(&g);
}
END_TEST

START_TEST(fuse_act_reads_clip_bounds_and_respects_sharing)
{
	struct cc_graph g;
	struct cc_pass_log log = { 0 };
	char err[256];
	load("conv_clip", &g);
	ck_assert_int_eq(cc_pass_fuse_act(&g, &log, err, sizeof err), 1);
	int ci = node(&g, "conv");
	ck_assert_int_eq(g.n[ci].act, CC_ACT_CLIP);
	ck_assert_double_eq(g.n[ci].act_lo, 0);
	ck_assert_double_eq(g.n[ci].act_hi, 6);
	cc_graph_free(&g);
	/* the Conv's output feeds two nodes: nothing may be fused */
	load("conv_clip_shared", &g);
	ck_assert_int_eq(cc_pass_fuse_act(&g, &log, err, sizeof err), 0);
	ck_assert_int_eq(live(&g, "Clip"), 1);
	free(log.buf);
	cc_graph_free(&g);
}
END_TEST

START_TEST(dce_removes_identity_zero_pad_and_dead_nodes)
{
	struct cc_graph g;
	struct cc_pass_log log = { 0 };
	char err[256];
	load("identity_dead", &g);
	ck_assert_int_eq(cc_pass_dce(&g, &log, err, sizeof err), 3);
	ck_assert_int_eq(live(&g, "Identity"), 0);
	ck_assert_int_eq(live(&g, "Pad"), 0);
	ck_assert_int_eq(live(&g, "Exp"), 0);
	int r = node(&g, "relu");
	ck_assert_int_eq(g.n[r].in[0], cc_tensor_find(&g, "x"));
	ck_assert_ptr_nonnull(strstr(log.buf, "2 Identity or zero Pad removed"));
	free(log.buf);
	cc_graph_free(&g);
}
END_TEST

/* The memory plan reuses dead intermediates; the JSON report says so, and a
 * fusion switch file turns passes off by name. */
START_TEST(memplan_reuse_report_and_switches)
{
	char path[8192], rep[8192], sw[8192], err[2048];
	make_models();
	snprintf(path, sizeof path, "%s/chain.onnx", dir);
	snprintf(rep, sizeof rep, "%s/report.json", dir);
	snprintf(sw, sizeof sw, "%s/switch.json", dir);
	FILE *f = fopen(sw, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"Switch\": {\"GraphFusion\": {\"ALL\": \"off\", "
	      "\"ConvActivationFusionPass\": \"on\"}, \"UBFusion\": {}}}\n", f);
	fclose(f);
	struct soc_config cfg;
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct cc_options opt = { NULL, rep, NULL, sw, NULL, NULL, 0 };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_lt(m.workspace_bytes, 4 * 64 * 64 * 2); /* 7 tensors live 2 at a time */
	om_free(&m);
	char json[65536];
	f = fopen(rep, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(json, 1, sizeof json - 1, f);
	fclose(f);
	json[n] = 0;
	ck_assert_ptr_nonnull(strstr(json, "\"workspace_bytes_without_reuse\""));
	ck_assert_ptr_nonnull(strstr(json, "{\"name\": \"IdentityEliminationPass\", "
					  "\"enabled\": false"));
	ck_assert_ptr_nonnull(strstr(json, "{\"name\": \"ConvActivationFusionPass\", "
					  "\"enabled\": true"));
	ck_assert_ptr_nonnull(strstr(json, "\"nodes_before\": 6"));
	/* an unknown pass name is an error that lists the known ones */
	f = fopen(sw, "w");
	fputs("NoSuchPass:off\n", f);
	fclose(f);
	ck_assert_int_eq(cc_compile(path, &cfg, &opt, &m, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "unknown pass 'NoSuchPass'") && strstr(err, "ConvBatchNorm"),
		      "%s", err);
}
END_TEST

/* Compile model name with the pass named on or off, run it on the SoC with
 * fixed inputs: its output and task count. */
static void run_switched(const char *name, const char *pass, int fuse, const char *soc,
			 struct rt_tensor *out, unsigned *ntasks)
{
	char path[8192], sw[8192], err[2048];
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	snprintf(sw, sizeof sw, "%s/switch_%d.json", dir, fuse);
	FILE *f = fopen(sw, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"Switch\": {\"GraphFusion\": {\"%s\": \"%s\"}}}\n", pass,
		fuse ? "on" : "off");
	fclose(f);
	struct soc_config cfg;
	ck_assert_int_eq(soc_load(soc, &cfg, err, sizeof err), 0);
	struct cc_options opt = { NULL, NULL, NULL, sw, NULL, NULL, 0 };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s", err);
	*ntasks = m.ntasks;
	struct rt_tensor in[2];
	for (unsigned k = 0; k < m.ninputs; k++) {
		memset(&in[k], 0, sizeof in[k]);
		in[k].dtype = 1;
		in[k].rank = m.inputs[k].rank;
		memcpy(in[k].dims, m.inputs[k].dims, sizeof in[k].dims);
		in[k].nbytes = m.inputs[k].size;
		float *x = malloc(in[k].nbytes);
		for (size_t i = 0; i < in[k].nbytes / 4; i++)
			x[i] = (float)((int)((i + 13 * k) * 37 % 101) - 50) / 25.0f;
		in[k].data = x;
	}
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, in, m.ninputs, out, &run, err, sizeof err) == 0, "%s",
		      err);
	rt_run_free(&run);
	sim_device_free(dev);
	for (unsigned k = 0; k < m.ninputs; k++)
		free(in[k].data);
	om_free(&m);
}

/* Fusing a chain of element-wise nodes changes where intermediates live
 * (UB instead of GM), not their fp16 values: bit-identical outputs. */
static void run_chain_model(const char *name, int fuse, struct rt_tensor *out,
			    unsigned *ntasks)
{
	run_switched(name, "ElementwiseFusionPass", fuse, "Ascend310", out, ntasks);
}

START_TEST(eltwise_fusion_is_exact)
{
	make_models();
	struct rt_tensor a, b;
	unsigned ta, tb;
	run_chain_model("chain", 1, &a, &ta);
	run_chain_model("chain", 0, &b, &tb);
	ck_assert_uint_eq(ta, 3); /* TransData, the chain, TransData */
	ck_assert_uint_eq(tb, 8);
	ck_assert_uint_eq(a.nbytes, b.nbytes);
	ck_assert_int_eq(memcmp(a.data, b.data, a.nbytes), 0);
	rt_tensor_free(&a);
	rt_tensor_free(&b);
	/* a residual Add of two activations heads a chain: Add+Relu+Mul */
	run_chain_model("residual", 1, &a, &ta);
	run_chain_model("residual", 0, &b, &tb);
	ck_assert_uint_eq(ta, 4); /* two input TransData, the chain, TransData */
	ck_assert_uint_eq(tb, 6);
	ck_assert_uint_eq(a.nbytes, b.nbytes);
	ck_assert_int_eq(memcmp(a.data, b.data, a.nbytes), 0);
	/* and it computes 0.5 * relu(r1 + r2) (the inputs run_chain_model made) */
	const float *y = a.data;
	for (size_t i = 0; i < a.nbytes / 4; i++) {
		float r1 = (float)((int)(i * 37 % 101) - 50) / 25.0f;
		float r2 = (float)((int)((i + 13) * 37 % 101) - 50) / 25.0f;
		float want = 0.5f * fmaxf(0.0f, r1 + r2);
		ck_assert_msg(fabsf(y[i] - want) <= 2e-3f + 2e-3f * fabsf(want),
			      "residual element %zu: got %g, want %g", i, y[i], want);
	}
	rt_tensor_free(&a);
	rt_tensor_free(&b);
}
END_TEST

/* The residual Adds of conv_residual (pass_models.py): which fuse into
 * which Conv, with which activation, and what the Conv then reads. */
START_TEST(fuse_residual_pattern)
{
	struct cc_graph g;
	struct cc_pass_log log = { 0 };
	char err[256];
	load("conv_residual", &g);
	ck_assert_int_eq(cc_pass_fuse_act(&g, &log, err, sizeof err), 2); /* relu1, relu4 */
	ck_assert_int_eq(cc_pass_fuse_residual(&g, &log, err, sizeof err), 2);
	ck_assert_int_eq(live(&g, "Add"), 1);
	ck_assert_int_eq(live(&g, "Relu"), 0);
	ck_assert_int_eq(live(&g, "Clip"), 0);
	/* the basic block: conv2 reads x, the Relu after the Add is its act */
	const struct cc_node *c2 = &g.n[node(&g, "conv2")];
	ck_assert_int_eq(c2->nin, 4);
	ck_assert_int_eq(c2->res_in, 3);
	ck_assert_int_eq(c2->in[3], cc_tensor_find(&g, "x"));
	ck_assert_int_eq(c2->in[2], cc_tensor_find(&g, "b2"));
	ck_assert_int_eq(c2->act, CC_ACT_RELU);
	ck_assert_str_eq(c2->fused, "Add+Relu");
	ck_assert_int_eq(c2->out[0], cc_tensor_find(&g, "y1"));
	ck_assert_int_eq(g.t[c2->out[0]].producer, node(&g, "conv2"));
	/* the shortcut: "down" comes after conv3, so it takes conv3's output */
	const struct cc_node *d = &g.n[node(&g, "down")], *c3 = &g.n[node(&g, "conv3")];
	ck_assert_int_eq(c3->res_in, 0);
	ck_assert_int_eq(c3->act, CC_ACT_NONE);
	ck_assert_int_eq(d->res_in, 3);
	ck_assert_int_eq(d->in[3], cc_tensor_find(&g, "c3"));
	ck_assert_int_eq(d->act, CC_ACT_CLIP);
	ck_assert_double_eq(d->act_lo, 0);
	ck_assert_double_eq(d->act_hi, 6);
	ck_assert_int_eq(d->out[0], cc_tensor_find(&g, "z"));
	/* c3 is now read by the Conv: it must live until then */
	ck_assert_int_eq(cc_sole_consumer(&g, cc_tensor_find(&g, "c3")), node(&g, "down"));
	/* conv4 already applies a Relu: its Add stays */
	ck_assert_int_eq(g.n[node(&g, "conv4")].res_in, 0);
	ck_assert_int_eq(g.n[node(&g, "add3")].dead, 0);
	ck_assert_ptr_nonnull(strstr(log.buf, "fuse_residual: 2 Add fused"));
	free(log.buf);
	cc_graph_free(&g);
}
END_TEST

/* Fused, the Conv rounds to fp16 where the separate kernels did (after
 * L0C, after the bias, after the residual; the activation is exact), so
 * the outputs are bit-identical; each fused Add+act saves a task. */
START_TEST(fuse_residual_is_exact)
{
	make_models();
	static const char *socs[] = { "Ascend310", "Ascend910" };
	for (int i = 0; i < 2; i++) {
		struct rt_tensor a, b;
		unsigned ta, tb;
		run_switched("conv_residual", "ConvEltwiseFusionPass", 1, socs[i], &a, &ta);
		run_switched("conv_residual", "ConvEltwiseFusionPass", 0, socs[i], &b, &tb);
		/* TransData, conv1, conv2+Add+Relu, conv3, down+Add+Clip, conv4, Add,
		 * TransData; unfused Add+Relu, Add and Clip are tasks of their own
		 * (the element-wise fusion does not chain Clip) */
		ck_assert_uint_eq(ta, 8);
		ck_assert_uint_eq(tb, 11);
		ck_assert_uint_eq(a.nbytes, b.nbytes);
		ck_assert_int_eq(memcmp(a.data, b.data, a.nbytes), 0);
		const float *y = a.data;
		float lo = INFINITY, hi = -INFINITY;
		for (size_t k = 0; k < a.nbytes / 4; k++) {
			lo = fminf(lo, y[k]);
			hi = fmaxf(hi, y[k]);
		}
		ck_assert_msg(hi > lo && isfinite(lo) && isfinite(hi), "%g..%g", lo, hi);
		rt_tensor_free(&a);
		rt_tensor_free(&b);
	}
}
END_TEST

/* The shape subgraph of x.view(x.size(0), -1) folds to a constant shape,
 * and the model then runs: y = relu(x) as [2, 48]. */
START_TEST(constfold_shape_subgraph)
{
	char path[8192], err[2048];
	make_models();
	snprintf(path, sizeof path, "%s/view_flatten.onnx", dir);
	struct soc_config cfg;
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct cc_options opt = { NULL, NULL, NULL, NULL, NULL, NULL, 0 };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(m.outputs[0].rank, 2);
	ck_assert_int_eq(m.outputs[0].dims[0], 2);
	ck_assert_int_eq(m.outputs[0].dims[1], 48);
	struct rt_tensor in = { .dtype = 1, .rank = 4, .dims = { 2, 3, 4, 4 }, .nbytes = 96 * 4 };
	float x[96];
	for (int i = 0; i < 96; i++)
		x[i] = (float)(i % 13) - 6.0f;
	in.data = x;
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	struct rt_tensor out;
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, &in, 1, &out, &run, err, sizeof err) == 0, "%s", err);
	const float *y = out.data;
	for (int i = 0; i < 96; i++)
		ck_assert_float_eq(y[i], x[i] > 0 ? x[i] : 0);
	rt_tensor_free(&out);
	rt_run_free(&run);
	sim_device_free(dev);
	om_free(&m);
	/* with folding off, Shape is an operator the compiler does not have */
	char sw[8192];
	snprintf(sw, sizeof sw, "%s/nofold.json", dir);
	FILE *f = fopen(sw, "w");
	ck_assert_ptr_nonnull(f);
	fputs("ConstantFoldingPass:off\n", f);
	fclose(f);
	opt.fusion_switch_file = sw;
	ck_assert_int_eq(cc_compile(path, &cfg, &opt, &m, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "(Shape)") != NULL, "%s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("passes");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, bnfold_folds_and_keeps_arithmetic);
	tcase_add_test(tc, fuse_act_reads_clip_bounds_and_respects_sharing);
	tcase_add_test(tc, dce_removes_identity_zero_pad_and_dead_nodes);
	tcase_add_test(tc, memplan_reuse_report_and_switches);
	tcase_add_test(tc, eltwise_fusion_is_exact);
	tcase_add_test(tc, constfold_shape_subgraph);
	tcase_add_test(tc, fuse_residual_pattern);
	tcase_add_test(tc, fuse_residual_is_exact);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (dir[0]) {
		char cmd[8192];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
