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
#include "fp16.h"
#include "golden.h"
#include "model.h"
#include "model_util.h"
#include "kernels.h"
#include "passes.h"

static char dir[4096];

static void make_models(void)
{
	tu_models(dir, sizeof dir, "passes", "pass_models.py", NULL, "python3-onnx");
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
	struct cc_options opt = { .report_json = rep, .fusion_switch_file = sw };
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

static int l2_kb; /* a smaller L2 for the next run_switched (0: the SoC's) */
static int small_ch; /* --enable_small_channel=1 for the next run_switched */

/* Compile model name with the pass named on or off, run it on the SoC with
 * fixed inputs: its output and task count. */
static void run_switched(const char *name, const char *pass, int fuse, const char *soc,
			 struct om_tensor *out, unsigned *ntasks)
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
	if (l2_kb) { /* (and no task gap: slices of one image pay here) */
		cfg.l2_size_kb = l2_kb;
		cfg.runtime_task_gap_us = 0;
	}
	struct cc_options opt = { .fusion_switch_file = sw, .small_channel = small_ch };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s", err);
	*ntasks = m.ntasks;
	struct om_tensor in[2];
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
	char key[512];
	snprintf(key, sizeof key, "check_passes/%s/%s/%s_%s", name, soc, pass, fuse ? "on" : "off");
	if (l2_kb)
		snprintf(key + strlen(key), sizeof key - strlen(key), "/l2_%dkb", l2_kb);
	if (small_ch)
		snprintf(key + strlen(key), sizeof key - strlen(key), "/c04");
	tu_golden(key, run.cycles, out, m.noutputs);
	rt_run_free(&run);
	sim_device_free(dev);
	for (unsigned k = 0; k < m.ninputs; k++)
		free(in[k].data);
	om_free(&m);
}

/* Fusing a chain of element-wise nodes changes where intermediates live
 * (UB instead of GM), not their fp16 values: bit-identical outputs. */
static void run_chain_model(const char *name, int fuse, struct om_tensor *out,
			    unsigned *ntasks)
{
	run_switched(name, "ElementwiseFusionPass", fuse, "Ascend310", out, ntasks);
}

/* Models compiled with pass on and off: the same output bytes, and
 * `saved` fewer tasks with it on. */
static void same_bytes_fewer_tasks(const char *const *models, int n, const char *pass,
				   unsigned saved)
{
	for (int k = 0; k < n; k++) {
		struct om_tensor a, b;
		unsigned ta, tb;
		run_switched(models[k], pass, 1, "Ascend310", &a, &ta);
		run_switched(models[k], pass, 0, "Ascend310", &b, &tb);
		ck_assert_msg(ta + saved == tb, "%s: %u tasks with %s, %u without", models[k], ta,
			      pass, tb);
		ck_assert_uint_eq(a.nbytes, b.nbytes);
		ck_assert_msg(!memcmp(a.data, b.data, a.nbytes), "%s: outputs differ", models[k]);
		om_tensor_free(&a);
		om_tensor_free(&b);
	}
}

/* Concat in place moves no arithmetic: the same output bytes with the pass
 * on and off, at one image and at three (views a stride apart; on a 2-core
 * SoC a pool's planes cross images); only the concats that must copy (an
 * unaligned input, a graph input, the graph output) keep tasks: without the
 * pass cat1 copies 3 inputs, cat2 2, cat3 2. */
START_TEST(concat_in_place_is_exact)
{
	make_models();
	static const char *const models[] = { "concat_b1", "concat_b3" };
	same_bytes_fewer_tasks(models, 2, "ConcatInPlacePass", 7);
}
END_TEST

/* Split and Slice of whole blocks as views (SplitInPlacePass): the same
 * bytes with the pass on and off; with one image the split's three outputs
 * are views, with three the Relu's input is copied (it cannot read images a
 * stride apart) and the first image's slice is one (dense) view. */
START_TEST(split_views_are_exact)
{
	make_models();
	static const char *const models[] = { "split_b1", "split_b3" };
	same_bytes_fewer_tasks(models, 2, "SplitInPlacePass", 3);
}
END_TEST

/* L2 fusion runs a chain a slice of the batch at a time: more tasks, the
 * same bytes out (each image's arithmetic is its own), and fewer
 * main-memory bytes once the activations outgrow the L2 (a 256 KiB L2 here,
 * 8 images of 32 KiB-per-channel-block activations). */
/* model's outputs with and without it, with a 256 KiB L2 (its first conv
 * on the small-channel path when c04). */
static void l2_fusion_exact(const char *model, int c04)
{
	make_models();
	struct om_tensor a, b;
	unsigned ta, tb;
	l2_kb = 256;
	small_ch = c04;
	run_switched(model, "L2FusionPass", 1, "Ascend310P3", &a, &ta);
	run_switched(model, "L2FusionPass", 0, "Ascend310P3", &b, &tb);
	l2_kb = 0;
	small_ch = 0;
	ck_assert_msg(ta > tb, "%u tasks with L2 fusion, %u without", ta, tb);
	ck_assert_uint_eq(a.nbytes, b.nbytes);
	ck_assert_msg(!memcmp(a.data, b.data, a.nbytes), "outputs differ with L2 fusion");
	om_tensor_free(&a);
	om_tensor_free(&b);
}

/* The first conv of an image input joins the stage's chain (plan_l2.c): its
 * slices read batch views of the input's workspace copy, in the small-channel
 * C04 layout here (8 bytes an image pixel), and write the same bytes. */
START_TEST(l2_fusion_stem_c04_is_exact)
{
	l2_fusion_exact("l2stem", 1);
}
END_TEST

START_TEST(l2_fusion_is_exact)
{
	l2_fusion_exact("l2chain", 0);
}
END_TEST

START_TEST(eltwise_fusion_is_exact)
{
	make_models();
	struct om_tensor a, b;
	unsigned ta, tb;
	run_chain_model("chain", 1, &a, &ta);
	run_chain_model("chain", 0, &b, &tb);
	ck_assert_uint_eq(ta, 3); /* TransData, the chain, TransData */
	ck_assert_uint_eq(tb, 8);
	ck_assert_uint_eq(a.nbytes, b.nbytes);
	ck_assert_int_eq(memcmp(a.data, b.data, a.nbytes), 0);
	om_tensor_free(&a);
	om_tensor_free(&b);
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
	om_tensor_free(&a);
	om_tensor_free(&b);
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
		struct om_tensor a, b;
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
		om_tensor_free(&a);
		om_tensor_free(&b);
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
	struct cc_options opt = { 0 };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(m.outputs[0].rank, 2);
	ck_assert_int_eq(m.outputs[0].dims[0], 2);
	ck_assert_int_eq(m.outputs[0].dims[1], 48);
	struct om_tensor in = { .dtype = 1, .rank = 4, .dims = { 2, 3, 4, 4 }, .nbytes = 96 * 4 };
	float x[96];
	for (int i = 0; i < 96; i++)
		x[i] = (float)(i % 13) - 6.0f;
	in.data = x;
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	struct om_tensor out;
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, &in, 1, &out, &run, err, sizeof err) == 0, "%s", err);
	tu_golden("check_passes/view_flatten/Ascend910", run.cycles, &out, 1);
	const float *y = out.data;
	for (int i = 0; i < 96; i++)
		ck_assert_float_eq(y[i], x[i] > 0 ? x[i] : 0);
	om_tensor_free(&out);
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

/* torch's decomposed nn.LayerNorm (pass_models.py) folds into one
 * LayerNormalization node with the scale, bias and epsilon it had; the Mul
 * (d, d) / Reciprocal variant too; an intermediate read elsewhere stops it. */
START_TEST(fuse_layernorm_pattern)
{
	static const struct {
		const char *model;
		int axis;
	} ok[] = { { "ln_torch768", 2 }, { "ln_torch100", 2 }, { "ln_mul", 1 } };
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		struct cc_graph g;
		struct cc_pass_log log = { 0 };
		char err[256];
		load(ok[i].model, &g);
		int nodes = 0;
		for (int k = 0; k < g.nn; k++)
			nodes += !g.n[k].dead;
		ck_assert_int_eq(cc_pass_fuse_layernorm(&g, &log, err, sizeof err), 1);
		ck_assert_int_eq(live(&g, "LayerNormalization"), 1);
		int left = 0, ln = -1;
		for (int k = 0; k < g.nn; k++)
			if (!g.n[k].dead) {
				left++;
				ln = k;
			}
		ck_assert_msg(left == 1, "%s: %d of %d nodes left", ok[i].model, left, nodes);
		const struct cc_node *n = &g.n[ln];
		ck_assert_int_eq(cc_attr_int(n, "axis", -1), ok[i].axis);
		ck_assert_double_eq_tol(cc_attr_float(n, "epsilon", 0), 1e-5, 1e-12);
		ck_assert_int_eq(n->nin, 3);
		ck_assert_int_eq(n->in[0], cc_tensor_find(&g, "x"));
		ck_assert_int_ge(n->in[1], 0);
		ck_assert_int_ge(n->in[2], 0);
		ck_assert_ptr_nonnull(g.t[n->in[1]].data);
		ck_assert_ptr_nonnull(g.t[n->in[2]].data);
		ck_assert_int_eq(n->out[0], cc_tensor_find(&g, "y"));
		ck_assert_int_eq(g.t[n->out[0]].producer, ln);
		ck_assert_ptr_nonnull(strstr(log.buf, "fuse_layernorm: 1 "));
		free(log.buf);
		cc_graph_free(&g);
	}
	/* the deviation is a graph output too: nothing fused */
	struct cc_graph g;
	struct cc_pass_log log = { 0 };
	char err[256];
	load("ln_shared", &g);
	ck_assert_int_eq(cc_pass_fuse_layernorm(&g, &log, err, sizeof err), 0);
	ck_assert_int_eq(live(&g, "LayerNormalization"), 0);
	ck_assert_int_eq(live(&g, "ReduceMean"), 2);
	ck_assert_int_eq(live(&g, "Sqrt"), 1);
	free(log.buf);
	cc_graph_free(&g);
}
END_TEST

/* The output of model name, run with the LayerNorm pass on or off, against
 * the reference pass_models.py computed (torch's nn.LayerNorm, or numpy for
 * ln_mul) within fp16 tolerance; the task count. */
static unsigned layernorm_vs_ref(const char *name, int fuse)
{
	struct om_tensor y;
	unsigned ntasks;
	run_switched(name, "LayerNormFusionPass", fuse, "Ascend910", &y, &ntasks);
	char path[8192];
	snprintf(path, sizeof path, "%s/%s.ref", dir, name);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	size_t n = y.nbytes / 4;
	float *want = malloc(y.nbytes);
	ck_assert_uint_eq(fread(want, 4, n, f), n);
	fclose(f);
	const float *got = y.data;
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs(got[i] - want[i]);
		worst = fmax(worst, e);
		ck_assert_msg(e <= 4e-3 + 4e-3 * fabs(want[i]), "%s (pass %s) element %zu: got %g, "
			      "want %g", name, fuse ? "on" : "off", i, got[i], want[i]);
	}
	printf("layernorm %s pass %s: %u tasks, max |error| %g\n", name, fuse ? "on" : "off",
	       ntasks, worst);
	free(want);
	om_tensor_free(&y);
	return ntasks;
}

static int op_supported(const char *op)
{
	char key[64];
	snprintf(key, sizeof key, " %s ", op);
	const char *ops = cc_supported_ops();
	return strstr(ops, key) || !strncmp(ops, key + 1, strlen(key + 1));
}

/* Fused: one LayerNorm task between the two TransData; the output matches
 * the reference.  torch's export needs Pow (for shape inference, before the
 * pass runs) and its unfused form also the [.., 1] broadcasting of
 * Sub/Div: those parts run once the compiler has them. */
START_TEST(fuse_layernorm_matches_reference)
{
	make_models();
	ck_assert_uint_eq(layernorm_vs_ref("ln_mul", 1), 3);
	/* the kernel over row lengths around the 64-lane (fp32) and 128-lane
	 * (fp16) repeats, whose tails are masked */
	static const char *const widths[] = { "ln_c1", "ln_c17", "ln_c64", "ln_c65", "ln_c129",
					      "ln_c4096" };
	for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
		ck_assert_uint_eq(layernorm_vs_ref(widths[i], 1), 3);
	if (!op_supported("Pow"))
		return;
	ck_assert_uint_eq(layernorm_vs_ref("ln_torch768", 1), 3);
	ck_assert_uint_eq(layernorm_vs_ref("ln_torch100", 1), 3);
	ck_assert_uint_gt(layernorm_vs_ref("ln_torch768", 0), 3);
	ck_assert_uint_gt(layernorm_vs_ref("ln_torch100", 0), 3);
	ck_assert_uint_gt(layernorm_vs_ref("ln_mul", 0), 3);
}
END_TEST

/* ---- GELU fusion, erf/tanh precision, broadcasting ---- */

static const char *gelu_form(const struct cc_graph *g)
{
	for (int i = 0; i < g->nn; i++)
		if (!g->n[i].dead && !strcmp(g->n[i].op, "Gelu")) {
			const struct cc_attr *a = cc_attr_find(&g->n[i], "approximate");
			return a && a->s ? a->s : "?";
		}
	return "";
}

/* Each torch form (and hand-written variants) becomes one Gelu node of x;
 * an intermediate read elsewhere keeps the subgraph. */
START_TEST(fuse_gelu_pattern)
{
	static const struct {
		const char *name, *form;
	} cases[] = { { "gelu_erf", "none" },
		      { "gelu_erf_hand", "none" },
		      { "gelu_tanh", "tanh" },
		      { "gelu_tanh_pow", "tanh" } };
	char err[256];
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		struct cc_graph g;
		struct cc_pass_log log = { 0 };
		load(cases[k].name, &g);
		ck_assert_int_eq(cc_pass_fuse_gelu(&g, &log, err, sizeof err), 1);
		ck_assert_int_eq(live(&g, "Gelu"), 1);
		ck_assert_str_eq(gelu_form(&g), cases[k].form);
		int alive = 0;
		for (int i = 0; i < g.nn; i++)
			if (!g.n[i].dead) {
				alive++;
				ck_assert_int_eq(g.n[i].nin, 1);
				ck_assert_int_eq(g.n[i].in[0], cc_tensor_find(&g, "x"));
				ck_assert_int_eq(g.n[i].out[0], cc_tensor_find(&g, "y"));
			}
		ck_assert_int_eq(alive, 1);
		ck_assert_ptr_nonnull(strstr(log.buf, "fuse_gelu: 1 GELU"));
		free(log.buf);
		cc_graph_free(&g);
	}
	struct cc_graph g;
	struct cc_pass_log log = { 0 };
	load("gelu_erf_shared", &g);
	ck_assert_int_eq(cc_pass_fuse_gelu(&g, &log, err, sizeof err), 0);
	ck_assert_int_eq(live(&g, "Gelu"), 0);
	ck_assert_int_eq(live(&g, "Erf"), 1);
	ck_assert_int_eq(live(&g, "Mul"), 2);
	free(log.buf);
	cc_graph_free(&g);
}
END_TEST

/* Fused: one vector task between the TransData; the output is torch's
 * gelu within fp16 tolerance; for torch's own op orders, bit-identical to
 * the unfused graph. */
START_TEST(fuse_gelu_matches_gelu)
{
	static const char *const names[] = { "gelu_erf", "gelu_erf_hand", "gelu_tanh",
					     "gelu_tanh_pow" };
	make_models();
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		struct om_tensor a, b;
		unsigned ta, tb;
		int tanh_form = strstr(names[k], "tanh") != NULL;
		run_switched(names[k], "GeluFusionPass", 1, "Ascend910", &a, &ta);
		run_switched(names[k], "GeluFusionPass", 0, "Ascend910", &b, &tb);
		ck_assert_uint_eq(ta, 3);
		ck_assert_uint_gt(tb, 3);
		ck_assert_uint_eq(a.nbytes, b.nbytes);
		if (!strcmp(names[k], "gelu_erf") || !strcmp(names[k], "gelu_tanh"))
			ck_assert_int_eq(memcmp(a.data, b.data, a.nbytes), 0);
		const float *y = a.data;
		double worst = 0;
		for (size_t i = 0; i < a.nbytes / 4; i++) {
			double x = (double)((int)(i * 37 % 101) - 50) / 25.0, want;
			if (tanh_form)
				want = 0.5 * x *
				       (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
			else
				want = 0.5 * x * (1 + erf(x / sqrt(2.0)));
			double e = fabs(y[i] - want);
			worst = fmax(worst, e);
			ck_assert_msg(e <= 3e-3 + 3e-3 * fabs(want), "%s element %zu (x = %g): got %g, "
				      "want %g", names[k], i, x, y[i], want);
		}
		printf("gelu %s: %u tasks fused, %u unfused, max |error| %g\n", names[k], ta, tb,
		       worst);
		om_tensor_free(&a);
		om_tensor_free(&b);
	}
}
END_TEST

/* Compile model name (default options) and run it on one input x. */
static void run_on(const char *name, const float *x, size_t n, struct om_tensor *out)
{
	char path[8192], err[2048];
	make_models();
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	struct soc_config cfg;
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, NULL, &m, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(m.ninputs, 1);
	struct om_tensor in;
	memset(&in, 0, sizeof in);
	in.dtype = 1;
	in.rank = m.inputs[0].rank;
	memcpy(in.dims, m.inputs[0].dims, sizeof in.dims);
	in.nbytes = m.inputs[0].size;
	ck_assert_uint_eq(in.nbytes, n * 4);
	in.data = (void *)x;
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, &in, 1, out, &run, err, sizeof err) == 0, "%s", err);
	char key[512];
	snprintf(key, sizeof key, "check_passes/%s/Ascend910", name);
	tu_golden(key, run.cycles, out, 1);
	rt_run_free(&run);
	sim_device_free(dev);
	om_free(&m);
}

/* Erf and tanh (clipped rational approximations, kern_vchain.c) on every
 * fp16 value in [-8, 8] against libm: within 4 fp16 ulps of the true value
 * (an fp16 emulation of the kernel's steps measures 4.0 at most) and 2e-3
 * absolute. */
START_TEST(erf_tanh_precision)
{
	enum { N = 40960 };
	float *x = calloc(N, sizeof *x);
	size_t n = 0;
	for (unsigned h = 0; h < 0x7c00 && n + 2 <= N; h++) {
		float v = dv_f16_to_f32((uint16_t)h);
		if (v > 8.0f)
			break;
		x[n++] = v;
		if (v != 0.0f)
			x[n++] = -v;
	}
	ck_assert_uint_gt(n, 36000);
	for (int k = 0; k < 2; k++) {
		struct om_tensor y;
		run_on(k ? "tanh_range" : "erf_range", x, N, &y);
		const float *got = y.data;
		double worst = 0, worst_ulp = 0;
		for (size_t i = 0; i < N; i++) {
			double want = k ? tanh((double)x[i]) : erf((double)x[i]);
			double a = fabs(want), e = fabs(got[i] - want);
			int ex;
			frexp(a, &ex); /* a in [2^(ex-1), 2^ex): an fp16 ulp is 2^(ex-11) */
			double ulp = a < ldexp(1, -14) ? ldexp(1, -24) : ldexp(1, ex - 11);
			worst = fmax(worst, e);
			worst_ulp = fmax(worst_ulp, e / ulp);
			ck_assert_msg(e <= 4.25 * ulp && e <= 2e-3, "%s(%g): got %.8g, want %.8g",
				      k ? "tanh" : "erf", x[i], got[i], want);
		}
		printf("%s over %zu fp16 values in [-8, 8]: max |error| %g, %.2f ulps\n",
		       k ? "tanh" : "erf", n, worst, worst_ulp);
		om_tensor_free(&y);
	}
	free(x);
}
END_TEST

/* Broadcasting Add/Sub/Mul/Div (kern_bcast_nd.c) against numpy's result
 * (pass_models.py's BCAST_CASES): last-axis, leading-axis, both operands,
 * NC1HWC0 ([N,C,1,1], one channel, an attention mask), constants, rows
 * too wide for one repeat's block stride. */
/* Attention's scale (on Q or on the scores) and a [B,1,S] mask move into the
 * Softmax: one task fewer per fused node, the same softmax within fp16
 * tolerance; a scaled tensor that is also a graph output stays. */
START_TEST(fuse_attention_scale_and_mask)
{
	static const struct {
		const char *name;
		unsigned saved;
	} cases[] = { { "att_pre", 1 }, { "att_post", 1 }, { "att_mask", 2 } };
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		struct om_tensor y[2];
		unsigned nt[2];
		for (int fuse = 0; fuse < 2; fuse++)
			run_switched(cases[k].name, "AttentionSoftmaxFusionPass", fuse, "Ascend910",
				     &y[fuse], &nt[fuse]);
		ck_assert_msg(nt[0] == nt[1] + cases[k].saved, "%s: %u tasks unfused, %u fused",
			      cases[k].name, nt[0], nt[1]);
		char path[8192];
		snprintf(path, sizeof path, "%s/%s.ref", dir, cases[k].name);
		FILE *f = fopen(path, "rb");
		ck_assert_ptr_nonnull(f);
		size_t n = y[1].nbytes / 4;
		float *want = malloc(y[1].nbytes);
		ck_assert_uint_eq(fread(want, 4, n, f), n);
		fclose(f);
		for (int fuse = 0; fuse < 2; fuse++) {
			const float *got = y[fuse].data;
			for (size_t i = 0; i < n; i++)
				ck_assert_msg(fabs(got[i] - want[i]) <= 2e-3 + 4e-3 * want[i],
					      "%s (fused %d) element %zu: got %g, want %g",
					      cases[k].name, fuse, i, got[i], want[i]);
			om_tensor_free(&y[fuse]);
		}
		free(want);
	}
	struct cc_graph g;
	char err[1024];
	struct cc_pass_log log = { 0 };
	load("att_shared", &g);
	ck_assert_int_eq(cc_pass_fuse_attention(&g, &log, err, sizeof err), 0);
	ck_assert_int_eq(live(&g, "Div"), 1);
	cc_graph_free(&g);
	free(log.buf);
}
END_TEST

/* The residual Add before a LayerNormalization rides in its kernel: one task
 * fewer, and bit-identical outputs (the kernel rounds the sum to fp16 as the
 * Add kernel does). */
START_TEST(fuse_layernorm_residual_is_exact)
{
	struct om_tensor y[2];
	unsigned nt[2];
	for (int fuse = 0; fuse < 2; fuse++)
		run_switched("ln_residual", "LayerNormFusionPass", fuse, "Ascend910", &y[fuse],
			     &nt[fuse]);
	ck_assert_uint_eq(nt[0], nt[1] + 1);
	ck_assert_uint_eq(y[0].nbytes, y[1].nbytes);
	ck_assert(!memcmp(y[0].data, y[1].data, y[0].nbytes));
	for (int fuse = 0; fuse < 2; fuse++)
		om_tensor_free(&y[fuse]);
}
END_TEST

/* The rewrites before shape inference against numpy: run-time Clip bounds
 * (both, the lower above a constant upper, a constant lower, both onto a
 * computed 4-D tensor: cc_bcast_nd lays the scalars out as 4-D), Pad's value,
 * LayerNormalization's Scale and B, a DequantizeLinear scale and a per-axis
 * QuantizeLinear scale (pass_runtime_params.c); an Einsum sum-transpose and
 * a diagonal under an ellipsis (pass_einsum.c); BatchNormalization in
 * training mode with its running statistics (pass_bn_training.c). */
START_TEST(rewrites_match_numpy)
{
	static const char *const names[] = { "rt_clip_both", "rt_clip_lo_above_hi",
					     "rt_clip_const_lo", "rt_clip_computed_4d",
					     "rt_pad_value",
					     "rt_layernorm", "rt_dequant",
					     "rt_quant_axis", "einsum_sum_transpose",
					     "einsum_diagonal", "bn_training" };
	make_models();
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		tu_run_compare("check_passes", dir, names[k], names[k]);
}
END_TEST

START_TEST(bcast_matches_numpy)
{
	static const char *const names[] = { "bc_last",	   "bc_last_rev", "bc_lead",
					     "bc_lead_rev", "bc_mask",	  "bc_both",
					     "bc_se",	   "bc_chan1",	  "bc_wide",
					     "bc_rows",	   "bc_act_scalar", "bc_const_nd",
					     "bc_const_nc" };
	make_models();
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		struct om_tensor y;
		unsigned ntasks;
		run_switched(names[k], "ElementwiseFusionPass", 1, "Ascend910", &y, &ntasks);
		char path[8192];
		snprintf(path, sizeof path, "%s/%s.ref", dir, names[k]);
		FILE *f = fopen(path, "rb");
		ck_assert_ptr_nonnull(f);
		size_t n = y.nbytes / 4;
		float *want = malloc(y.nbytes);
		ck_assert_uint_eq(fread(want, 4, n, f), n);
		fclose(f);
		const float *got = y.data;
		for (size_t i = 0; i < n; i++) {
			if (isnan(want[i]) || isinf(want[i])) {
				ck_assert_msg(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i],
					      "%s element %zu: got %g, want %g", names[k], i, got[i],
					      want[i]);
				continue;
			}
			ck_assert_msg(fabs(got[i] - want[i]) <= 4e-3 + 4e-3 * fabs(want[i]),
				      "%s element %zu: got %g, want %g", names[k], i, got[i], want[i]);
		}
		free(want);
		om_tensor_free(&y);
	}
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
	tcase_add_test(tc, concat_in_place_is_exact);
	tcase_add_test(tc, split_views_are_exact);
	tcase_add_test(tc, l2_fusion_is_exact);
	tcase_add_test(tc, l2_fusion_stem_c04_is_exact);
	tcase_add_test(tc, constfold_shape_subgraph);
	tcase_add_test(tc, fuse_residual_pattern);
	tcase_add_test(tc, fuse_residual_is_exact);
	tcase_add_test(tc, fuse_layernorm_pattern);
	tcase_add_test(tc, fuse_layernorm_matches_reference);
	tcase_add_test(tc, fuse_gelu_pattern);
	tcase_add_test(tc, fuse_gelu_matches_gelu);
	tcase_add_test(tc, erf_tanh_precision);
	tcase_add_test(tc, bcast_matches_numpy);
	tcase_add_test(tc, rewrites_match_numpy);
	tcase_add_test(tc, fuse_attention_scale_and_mask);
	tcase_add_test(tc, fuse_layernorm_residual_is_exact);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
