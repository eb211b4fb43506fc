/* check_matmul: MatMul and Gemm on the cube (kern_matmul.c, matmul_common in
 * compile.c) against numpy, on the graphs of tests/matmul_models.py:
 * batched products in one kernel, Transposes folded into the operands' loads
 * (no Transpose task), broadcasting, the MatMul + bias fusion
 * (pass_fuse_matmul_bias.c) and the element-wise epilogue fusion (same
 * file), whose outputs must equal the unfused ones bit for bit. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "golden.h"
#include "kernels.h"
#include "model.h"
#include "model_util.h"
#include "passes.h"

static char dir[4096];

static void make_models(void)
{
	tu_models(dir, sizeof dir, "matmul", "matmul_models.py", NULL, "python3-onnx");
}

static void *read_file(const char *name, const char *ext, size_t *n)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *p = malloc((size_t)len + 1);
	ck_assert_uint_eq(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* Compile NAME for soc (the fusion pass named on or off), run it on the
 * model's inputs; its output and the number of tasks of op type op. */
static void run_pass(const char *name, const char *soc, const char *pass, int fuse,
		     struct om_tensor *out, const char *op, unsigned *nop)
{
	char path[8192], sw[8192], err[2048];
	make_models();
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	snprintf(sw, sizeof sw, "%s/switch_%s_%d.json", dir, pass, fuse);
	FILE *f = fopen(sw, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"Switch\": {\"GraphFusion\": {\"%s\": \"%s\"}}}\n", pass,
		fuse ? "on" : "off");
	fclose(f);
	struct soc_config cfg;
	ck_assert_int_eq(soc_load(soc, &cfg, err, sizeof err), 0);
	struct cc_options opt = { .fusion_switch_file = sw };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s: %s", name,
		      err);
	*nop = 0;
	for (unsigned i = 0; i < m.ntasks; i++)
		*nop += !strcmp(m.tasks[i].op_type, op);
	struct om_tensor in[3];
	ck_assert_uint_le(m.ninputs, 3);
	for (unsigned k = 0; k < m.ninputs; k++) {
		char ext[8];
		snprintf(ext, sizeof ext, "in%u", k);
		memset(&in[k], 0, sizeof in[k]);
		in[k].dtype = 1;
		in[k].rank = m.inputs[k].rank;
		memcpy(in[k].dims, m.inputs[k].dims, sizeof in[k].dims);
		size_t n;
		in[k].data = read_file(name, ext, &n);
		in[k].nbytes = n;
		ck_assert_uint_eq(n, m.inputs[k].size);
	}
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	struct rt_run r;
	ck_assert_msg(rt_model_run(dev, &m, in, m.ninputs, out, &r, err, sizeof err) == 0, "%s",
		      err);
	char key[512];
	snprintf(key, sizeof key, "check_matmul/%s/%s/%s_%s", name, soc, pass, fuse ? "on" : "off");
	tu_golden(key, r.cycles, out, m.noutputs);
	rt_run_free(&r);
	sim_device_free(dev);
	for (unsigned k = 0; k < m.ninputs; k++)
		free(in[k].data);
	om_free(&m);
}

static void run(const char *name, const char *soc, int fuse, struct om_tensor *out,
		const char *op, unsigned *nop)
{
	run_pass(name, soc, "MatMulBiasAddFusionPass", fuse, out, op, nop);
}

/* The output against numpy's: the operands are exact in fp16 and the cube
 * sums in fp32, so only the fp16 rounding of the result (and of the bias
 * sum) differs. */
static void check_ref(const char *name, const struct om_tensor *y)
{
	size_t n;
	float *ref = read_file(name, "ref", &n);
	ck_assert_uint_eq(y->nbytes, n);
	const float *got = y->data;
	for (size_t i = 0; i < n / 4; i++)
		ck_assert_msg(fabsf(got[i] - ref[i]) <= 1.5e-3f * fabsf(ref[i]) + 2e-3f,
			      "%s element %zu: got %g, want %g", name, i, got[i], ref[i]);
	free(ref);
}

static const char *const socs[] = { "Ascend910", "Ascend310" };

/* Each case: its Transposes read in place (none runs as a task), and the
 * MatMul tasks: one kernel per batch where the strides allow (bcast_5d's
 * [2,3,1] x [3,4] batch broadcast has no single stride: 6 kernels of 4). */
static const struct {
	const char *name;
	unsigned matmuls;
} cases[] = {
	{ "attn_qk", 1 },  { "attn_pv", 1 },  { "swap_both", 1 }, { "bcast_2d", 1 },
	{ "bstride0", 1 }, { "bcast_5d", 6 }, { "const_b3", 1 },
};

START_TEST(batched_folded_matches_numpy)
{
	for (int s = 0; s < 2; s++) {
		const char *name = cases[_i].name;
		struct om_tensor y;
		unsigned nt, nmm;
		run(name, socs[s], 1, &y, "Transpose", &nt);
		ck_assert_msg(nt == 0, "%s: %u Transpose tasks", name, nt);
		check_ref(name, &y);
		om_tensor_free(&y);
		run(name, socs[s], 1, &y, "MatMul", &nmm);
		ck_assert_msg(nmm == cases[_i].matmuls, "%s: %u MatMul tasks", name, nmm);
		om_tensor_free(&y);
	}
}
END_TEST

START_TEST(gemm_transposed_activations)
{
	for (int s = 0; s < 2; s++) {
		struct om_tensor y;
		unsigned nt;
		run("gemm_tt", socs[s], 1, &y, "Transpose", &nt);
		ck_assert_uint_eq(nt, 0);
		check_ref("gemm_tt", &y);
		om_tensor_free(&y);
	}
}
END_TEST

/* Gemm's C broadcast over [M, N]: a column as an input and as a constant
 * (M = N: it must not be taken for a row vector), one value as an input. */
START_TEST(gemm_c_broadcast)
{
	static const char *const names[] = { "gemm_col_c", "gemm_col_c_const", "gemm_one_c" };
	for (int k = 0; k < 3; k++) {
		struct om_tensor y;
		unsigned nt;
		run(names[k], "Ascend910", 1, &y, "Gemm", &nt);
		check_ref(names[k], &y);
		om_tensor_free(&y);
	}
}
END_TEST

/* The pass: the Add joins the MatMul as its bias, in either order. */
START_TEST(fuse_matmul_bias_pattern)
{
	static const char *const names[] = { "mm_bias", "mm_bias_act" };
	make_models();
	for (int i = 0; i < 2; i++) {
		struct cc_graph g;
		struct cc_pass_log log = { 0 };
		char path[8192], err[256];
		snprintf(path, sizeof path, "%s/%s.onnx", dir, names[i]);
		ck_assert_msg(cc_onnx_load(path, &g, err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(cc_pass_fuse_matmul_bias(&g, &log, err, sizeof err), 1);
		int mi = -1, adds = 0;
		for (int k = 0; k < g.nn; k++) {
			if (!strcmp(g.n[k].op, "MatMul"))
				mi = k;
			adds += !g.n[k].dead && !strcmp(g.n[k].op, "Add");
		}
		ck_assert_int_eq(adds, 0);
		ck_assert_int_ge(mi, 0);
		const struct cc_node *m = &g.n[mi];
		ck_assert_int_eq(m->nin, 3);
		ck_assert_int_eq(m->in[2], cc_tensor_find(&g, "bias"));
		ck_assert_int_eq(m->out[0], cc_tensor_find(&g, "y"));
		ck_assert_int_eq(g.t[m->out[0]].producer, mi);
		ck_assert_str_eq(m->fused, "Add");
		ck_assert_ptr_nonnull(strstr(log.buf, "fuse_matmul_bias: 1 bias Add fused"));
		free(log.buf);
		cc_graph_free(&g);
	}
}
END_TEST

/* Fused, the kernel adds the fp16 bias to the fp16 product as the separate
 * Add did: bit-identical outputs, one task fewer, and numpy's values. */
START_TEST(fuse_matmul_bias_is_exact)
{
	static const char *const names[] = { "mm_bias", "mm_bias_act" };
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < 2; i++) {
			struct om_tensor a, b;
			unsigned na, nb;
			run(names[i], socs[s], 1, &a, "Add", &na);
			run(names[i], socs[s], 0, &b, "Add", &nb);
			ck_assert_uint_eq(na, 0);
			ck_assert_uint_eq(nb, 1);
			ck_assert_uint_eq(a.nbytes, b.nbytes);
			ck_assert_int_eq(memcmp(a.data, b.data, a.nbytes), 0);
			check_ref(names[i], &a);
			om_tensor_free(&a);
			om_tensor_free(&b);
		}
}
END_TEST

/* The epilogue pass: the Gelu (after the bias and Gelu fusions), a Relu
 * after a Gemm, a Sigmoid+Mul chain, a Clip join the MatMul; a product
 * read twice stays as it is. */
START_TEST(fuse_matmul_eltwise_pattern)
{
	static const struct {
		const char *name, *host, *fused;
		int n;
	} cs[] = { { "mm_gelu", "MatMul", "Add+Gelu", 1 },
		   { "gemm_relu", "Gemm", "Relu", 1 },
		   { "mm_sig_scale", "MatMul", "Sigmoid+Mul", 1 },
		   { "mm_clip", "MatMul", "Clip", 1 },
		   { "mm_two_readers", "MatMul", "", 0 } };
	make_models();
	for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
		struct cc_graph g;
		struct cc_pass_log log = { 0 };
		char path[8192], err[256];
		snprintf(path, sizeof path, "%s/%s.onnx", dir, cs[i].name);
		ck_assert_msg(cc_onnx_load(path, &g, err, sizeof err) == 0, "%s", err);
		ck_assert_int_ge(cc_pass_fuse_matmul_bias(&g, &log, err, sizeof err), 0);
		ck_assert_int_ge(cc_pass_fuse_gelu(&g, &log, err, sizeof err), 0);
		ck_assert_int_ge(cc_pass_fuse_eltwise(&g, &log, err, sizeof err), 0);
		ck_assert_int_eq(cc_pass_fuse_matmul_eltwise(&g, &log, err, sizeof err), cs[i].n);
		int mi = -1, live = 0;
		for (int k = 0; k < g.nn; k++) {
			if (!strcmp(g.n[k].op, cs[i].host))
				mi = k;
			live += !g.n[k].dead;
		}
		ck_assert_int_ge(mi, 0);
		const struct cc_node *m = &g.n[mi];
		if (cs[i].n) {
			ck_assert_int_eq(live, 1);
			ck_assert_int_eq(m->out[0], cc_tensor_find(&g, "y"));
			ck_assert_int_eq(g.t[m->out[0]].producer, mi);
			ck_assert_int_gt(m->epilogue, 0);
			ck_assert_str_eq(m->fused, cs[i].fused);
		} else {
			ck_assert_int_eq(m->epilogue, 0);
			ck_assert_int_eq(m->out[0], cc_tensor_find(&g, "t"));
		}
		free(log.buf);
		cc_graph_free(&g);
	}
}
END_TEST

/* Fused, the MatMul kernel runs the chain's very instructions on the
 * product in the UB: bit-identical outputs, the chain's task gone, and
 * numpy's values (to the Erf expansion's error). */
START_TEST(fuse_matmul_eltwise_is_exact)
{
	static const struct {
		const char *name, *chain_op;
	} cs[] = { { "mm_gelu", "Gelu" },	  { "mm_gelu_big", "Gelu" },
		   { "gemm_relu", "Relu" },	  { "mm_sig_scale", "Sigmoid+Mul" },
		   { "mm_clip", "Clip" } };
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
			struct om_tensor a, b;
			unsigned na, nb;
			run_pass(cs[i].name, socs[s], "MatMulEltwiseFusionPass", 1, &a,
				 cs[i].chain_op, &na);
			run_pass(cs[i].name, socs[s], "MatMulEltwiseFusionPass", 0, &b,
				 cs[i].chain_op, &nb);
			ck_assert_msg(na == 0 && nb == 1, "%s: %u and %u %s tasks", cs[i].name, na,
				      nb, cs[i].chain_op);
			ck_assert_uint_eq(a.nbytes, b.nbytes);
			ck_assert_msg(memcmp(a.data, b.data, a.nbytes) == 0, "%s on %s differs",
				      cs[i].name, socs[s]);
			size_t n;
			float *ref = read_file(cs[i].name, "ref", &n);
			ck_assert_uint_eq(a.nbytes, n);
			const float *got = a.data;
			for (size_t k = 0; k < n / 4; k++)
				ck_assert_msg(fabsf(got[k] - ref[k]) <= 4e-3f * fabsf(ref[k]) + 4e-3f,
					      "%s element %zu: got %g, want %g", cs[i].name, k,
					      got[k], ref[k]);
			free(ref);
			om_tensor_free(&a);
			om_tensor_free(&b);
		}
}
END_TEST

/* The epilogue's buffers are shared by liveness: Gelu's nine slots (the
 * product, five steps, three Erf temporaries) fit in five buffers, the
 * product in buffer 0; and the tiling leaves room for two sets of them. */
START_TEST(epilogue_buffers)
{
	struct cc_vchain ch = { .nin = 1 };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 0.70710678f };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_ERF, 1, 0, 0 };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_ADDS, 2, 0, 1.0f };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MUL, 0, 3, 0 };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 4, 0, 0.5f };
	int buf[64];
	ck_assert_int_eq(cc_vchain_nslots(&ch), 9);
	ck_assert_int_eq(cc_vchain_buffers(&ch, buf), 5);
	ck_assert_int_eq(buf[0], 0);
	/* the product lives until step 3 reads it: no step before writes its buffer */
	for (int s = 1; s <= 3; s++)
		ck_assert_int_ne(buf[s], buf[0]);
	/* the temporaries are the chain's own */
	for (int t = 6; t < 9; t++)
		for (int s = 0; s < 6; s++)
			ck_assert_int_ne(buf[t], buf[s]);
	struct soc_config cfg;
	char err[256];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct cc_matmul mm = { .batch = 1, .M = 1024, .K = 768, .N = 3072, .b_nz = 1,
				.has_bias = 1, .epi = &ch };
	struct cc_prog p;
	unsigned bd;
	cc_prog_init(&p);
	ck_assert_int_eq(cc_gen_matmul_batch(&cfg, &mm, &p, &bd, err, sizeof err), 0);
	cc_prog_free(&p);
	/* the chain's V work makes the kernel slower than the bare product */
	struct cc_matmul bare = mm;
	bare.epi = NULL;
	ck_assert_double_gt(cc_matmul_estimate(&cfg, &mm), cc_matmul_estimate(&cfg, &bare));
}
END_TEST

/* The tiling search sees the batch: a batch of small products spreads over
 * the cores rather than running one product per kernel. */
START_TEST(batch_spreads_over_cores)
{
	struct soc_config cfg;
	char err[256];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct cc_matmul mm = { .batch = 96, .M = 128, .K = 64, .N = 128, .b_trans = 1,
				.a_bs = 64, .b_bs = 64, .c_bs = 128 * 128, .a_rs = 96 * 64,
				.b_rs = 96 * 64 };
	struct cc_prog p;
	unsigned bd;
	cc_prog_init(&p);
	ck_assert_int_eq(cc_gen_matmul_batch(&cfg, &mm, &p, &bd, err, sizeof err), 0);
	ck_assert_uint_eq(bd, (unsigned)cfg.core_count);
	cc_prog_free(&p);
	struct cc_matmul one = mm;
	one.batch = 1;
	/* 96 products on 32 cores: about 3 products' time, not 96 */
	ck_assert_double_lt(cc_matmul_estimate(&cfg, &mm), 8 * cc_matmul_estimate(&cfg, &one));
	mm.b_rs = 72; /* not whole 32-byte blocks */
	cc_prog_init(&p);
	ck_assert_int_ne(cc_gen_matmul_batch(&cfg, &mm, &p, &bd, err, sizeof err), 0);
	cc_prog_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("matmul");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, batched_folded_matches_numpy, 0,
			    (int)(sizeof cases / sizeof cases[0]));
	tcase_add_test(tc, gemm_transposed_activations);
	tcase_add_test(tc, gemm_c_broadcast);
	tcase_add_test(tc, fuse_matmul_bias_pattern);
	tcase_add_test(tc, fuse_matmul_bias_is_exact);
	tcase_add_test(tc, batch_spreads_over_cores);
	tcase_add_test(tc, fuse_matmul_eltwise_pattern);
	tcase_add_test(tc, fuse_matmul_eltwise_is_exact);
	tcase_add_test(tc, epilogue_buffers);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
