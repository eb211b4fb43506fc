/* check_qconv: QDQ models compiled to int8 convolutions (pass_qdq.c,
 * lower_quant.c, kern_quant.c, kern_conv.c's int8 path), against the QDQ
 * model's own result (PyTorch with the same fake quantization,
 * tests/qdq_models.py) and against ONNX Runtime on the same QDQ model.
 *
 * Tolerances: a conv's int8 arithmetic is exact (int32 sums), then
 * dequantized in fp32 and rounded to fp16; the input's quantization runs in
 * fp16 (x * (1/s) rounded before rounding to the grid), which can move an
 * input lying within ~2^-11 of a rounding boundary by one step.  So single
 * layers agree within fp16 rounding plus a few input steps; whole networks
 * are compared by cosine similarity (the 0.999) and top-1.
 *
 * DAVINCI_QMODELS (default "resnet50:1,mobilenet_v2:1") names the
 * torchvision networks quantized end to end by simquant (quant/, the
 * project's own calibration tool); empty skips them. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"
#include "golden.h"
#include "model.h"
#include "model_util.h"
#include "quant.h"

static char dir[4096];

static void make_models(void)
{
	tu_models(dir, sizeof dir, "qconv", "qdq_models.py", NULL, "python3-torch");
}

struct cmp {
	double cos, maxdiff, peak;
	size_t argmax_got, argmax_want, n;
};

static void compare(const struct om_tensor *got, const struct om_tensor *want, struct cmp *r)
{
	ck_assert_int_eq(got->dtype, 1);
	ck_assert_int_eq(want->dtype, 1);
	ck_assert_uint_eq(got->nbytes, want->nbytes);
	const float *g = got->data, *w = want->data;
	size_t n = want->nbytes / 4;
	double gg = 0, ww = 0, gw = 0;
	memset(r, 0, sizeof *r);
	r->n = n;
	for (size_t i = 0; i < n; i++) {
		gg += (double)g[i] * g[i];
		ww += (double)w[i] * w[i];
		gw += (double)g[i] * w[i];
		r->maxdiff = fmax(r->maxdiff, fabs((double)g[i] - w[i]));
		r->peak = fmax(r->peak, fabs((double)w[i]));
		if (g[i] > g[r->argmax_got])
			r->argmax_got = i;
		if (w[i] > w[r->argmax_want])
			r->argmax_want = i;
	}
	r->cos = gw / sqrt(gg * ww);
}

/* Compile path (with opt) for soc and run it on in_dir/input_0.pb; its
 * golden key check_qconv/NAME/SOC (name: the model and any variant). */
static void run(const char *name, const char *path, const char *soc,
		const struct cc_options *opt, const char *in_dir, struct om_tensor *out,
		struct om_model *m)
{
	char err[4096], p[8192];
	struct soc_config cfg;
	ck_assert_msg(soc_load(soc, &cfg, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(cc_compile(path, &cfg, opt, m, err, sizeof err) == 0, "%s: %s", path, err);
	struct om_tensor in;
	snprintf(p, sizeof p, "%s/input_0.pb", in_dir);
	ck_assert_msg(om_tensor_read(p, &in, err, sizeof err) == 0, "%s", err);
	struct sim_options so = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &so, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run rr;
	ck_assert_msg(rt_model_run(dev, m, &in, 1, out, &rr, err, sizeof err) == 0, "%s: %s",
		      path, err);
	snprintf(p, sizeof p, "check_qconv/%s/%s", name, soc);
	tu_golden(p, rr.cycles, out, 1);
	om_tensor_free(&in);
	rt_run_free(&rr);
	sim_device_free(dev);
}

/* Tasks of m whose op type starts with prefix, and int8 cube tasks (an
 * int8 FRACTAL_Z input). */
static unsigned count_type(const struct om_model *m, const char *prefix)
{
	unsigned k = 0;
	for (uint32_t i = 0; i < m->ntasks; i++)
		k += !strncmp(m->tasks[i].op_type, prefix, strlen(prefix));
	return k;
}

static unsigned count_fmt8(const struct om_model *m, int format)
{
	unsigned k = 0;
	for (uint32_t i = 0; i < m->ntasks; i++)
		for (uint32_t j = 0; j < m->tasks[i].ninputs; j++)
			if (m->tasks[i].inputs[j].dtype == 3 &&
			    m->tasks[i].inputs[j].format == format) {
				k++;
				break;
			}
	return k;
}

/* int8 convs (FRACTAL_Z int8 weights) and int8 matmuls (FRACTAL_NZ) */
static unsigned count_int8(const struct om_model *m) { return count_fmt8(m, 4); }
static unsigned count_int8_mm(const struct om_model *m) { return count_fmt8(m, 29); }

/* Conv tasks that write an int8 output (requantization in the drain). */
static unsigned count_q8_out(const struct om_model *m)
{
	unsigned k = 0;
	for (uint32_t i = 0; i < m->ntasks; i++)
		for (uint32_t j = 0; j < m->tasks[i].noutputs; j++)
			if (!strncmp(m->tasks[i].op_type, "Conv", 4) &&
			    m->tasks[i].outputs[j].dtype == 3) {
				k++;
				break;
			}
	return k;
}

/* Input TransData tasks that write int8 (the quantization fused). */
static unsigned count_q8_transdata(const struct om_model *m)
{
	unsigned k = 0;
	for (uint32_t i = 0; i < m->ntasks; i++)
		k += !strcmp(m->tasks[i].op_type, "TransData") && m->tasks[i].noutputs == 1 &&
		     m->tasks[i].outputs[0].dtype == 3;
	return k;
}

static void reference(const char *name, struct om_tensor *want)
{
	char p[8192], err[4096];
	snprintf(p, sizeof p, "%s/%s/output_0.pb", dir, name);
	ck_assert_msg(om_tensor_read(p, want, err, sizeof err) == 0, "%s", err);
}

/* A model of tests/qdq_models.py compiled (with opt) and run on its input,
 * compared with its reference. */
struct qrun {
	struct om_tensor got, want;
	struct om_model m;
	struct cmp r;
};

static void qrun_builtin(const char *name, const char *variant, const char *soc,
			 const struct cc_options *opt, struct qrun *q)
{
	char path[8192], in[8192], key[512];
	make_models();
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	snprintf(in, sizeof in, "%s/%s", dir, name);
	snprintf(key, sizeof key, "%s%s%s", name, variant ? "/" : "", variant ? variant : "");
	run(key, path, soc, opt, in, &q->got, &q->m);
	reference(name, &q->want);
	compare(&q->got, &q->want, &q->r);
}

static void qrun_free(struct qrun *q)
{
	om_tensor_free(&q->got);
	om_tensor_free(&q->want);
	om_free(&q->m);
}

/* One Conv on an input already on the int8 grid: only fp16 rounding of the
 * result (and of the bias addition) separates it from the reference. */
START_TEST(conv_int8_exact_input)
{
	struct qrun q;
	qrun_builtin("qconv_exact", NULL, "Ascend910", NULL, &q);
	ck_assert_uint_eq(count_type(&q.m, "AscendQuant"), 1);
	ck_assert_uint_eq(count_int8(&q.m), 1);
	const float *g = q.got.data, *w = q.want.data;
	for (size_t i = 0; i < q.r.n; i++) /* two fp16 roundings of values below the peak */
		ck_assert_msg(fabs((double)g[i] - w[i]) <= 2.0 * ldexp(fabs((double)w[i]) + 1.0, -11),
			      "element %zu: got %g, want %g", i, (double)g[i], (double)w[i]);
	qrun_free(&q);
}
END_TEST

/* Conv -> BatchNormalization -> Relu on a QDQ input: the BN folds into the
 * int8 conv (its factor goes into the channel's scale) and Relu into the
 * drain. */
START_TEST(conv_int8_batchnorm_folded)
{
	struct qrun q;
	qrun_builtin("qconv_bn", NULL, "Ascend310P3", NULL, &q);
	ck_assert_uint_eq(count_int8(&q.m), 1);
	ck_assert_uint_eq(count_type(&q.m, "Conv+BatchNormalization+Relu"), 1);
	ck_assert_msg(q.r.cos > 0.99999 && q.r.maxdiff < 0.01 * q.r.peak,
		      "cos %.7f maxdiff %g peak %g", q.r.cos, q.r.maxdiff, q.r.peak);
	qrun_free(&q);
}
END_TEST

/* The small CNN: four convs and the Linear layer int8, the depthwise conv
 * fp16 (fake-quantized input); the report says which and why. */
START_TEST(net_mixed_int8_fp16)
{
	char rep[8192];
	make_models();
	snprintf(rep, sizeof rep, "%s/qnet_report.json", dir);
	struct cc_options opt = { .report_json = rep };
	struct qrun q;
	qrun_builtin("qnet", NULL, "Ascend910", &opt, &q);
	ck_assert_uint_eq(count_int8(&q.m), 4);
	ck_assert_uint_eq(count_int8_mm(&q.m), 1);
	/* c1 and c2 requantize for c2 and c3 in their output paths; c1's input
	 * (the graph's, 3 channels) is quantized in its TransData; c4's (the
	 * fp16 depthwise conv's) and the Gemm's need a quantize task */
	ck_assert_uint_eq(count_type(&q.m, "AscendQuant"), 2);
	ck_assert_uint_eq(count_q8_out(&q.m), 2);
	ck_assert_uint_eq(count_q8_transdata(&q.m), 1);
	/* the Q/DQ pair before the depthwise conv: one kernel */
	ck_assert_uint_eq(count_type(&q.m, "QuantizeLinear+DequantizeLinear"), 1);
	ck_assert_msg(q.r.cos > 0.9999 && q.r.maxdiff < 0.02 * q.r.peak,
		      "cos %.7f maxdiff %g peak %g", q.r.cos, q.r.maxdiff, q.r.peak);
	FILE *f = fopen(rep, "r");
	ck_assert_ptr_nonnull(f);
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof text - 1, f);
	text[len] = 0;
	fclose(f);
	ck_assert_msg(strstr(text, "\"node\": \"/c2/Conv\", \"op\": \"Conv\", \"precision\": "
				   "\"int8\""), "%s", text);
	ck_assert_msg(strstr(text, "\"node\": \"/dw/Conv\", \"op\": \"Conv\", \"precision\": "
				   "\"fp16\", \"reason\": \"grouped and depthwise"), "%s", text);
	ck_assert_msg(strstr(text, "\"node\": \"/fc/Gemm\", \"op\": \"Gemm\", \"precision\": "
				   "\"int8\""), "%s", text);
	qrun_free(&q);
}
END_TEST

/* With QuantConvFusionPass off, every Q/DQ runs as its own fp16 kernel and
 * every conv in fp16 on dequantized weights: the fake-quantized model, the
 * same function by another route. */
START_TEST(pass_off_runs_fake_quant)
{
	char sw[8192];
	make_models();
	snprintf(sw, sizeof sw, "%s/qdq_off.json", dir);
	FILE *f = fopen(sw, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"Switch\":{\"GraphFusion\":{\"QuantConvFusionPass\":\"off\"}}}\n");
	fclose(f);
	struct cc_options opt = { .fusion_switch_file = sw };
	struct qrun q;
	qrun_builtin("qnet", "QuantConvFusionPass_off", "Ascend910", &opt, &q);
	ck_assert_uint_eq(count_int8(&q.m), 0);
	ck_assert_uint_eq(count_type(&q.m, "QuantizeLinear"), 6);
	ck_assert_uint_eq(count_type(&q.m, "DequantizeLinear"), 6);
	ck_assert_msg(q.r.cos > 0.9999 && q.r.maxdiff < 0.02 * q.r.peak,
		      "cos %.7f maxdiff %g peak %g", q.r.cos, q.r.maxdiff, q.r.peak);
	qrun_free(&q);
}
END_TEST

/* The simulator against ONNX Runtime on the same QDQ models. */
static void versus_ort(const char *name, const char *path, const char *in, double min_cos,
		       int top1)
{
	char odir[8192], p[8192], err[4096];
	snprintf(odir, sizeof odir, "%s/ort_%s", dir, name);
	ck_assert(mkdir(odir, 0700) == 0 || access(odir, F_OK) == 0);
	ck_assert_msg(tu_ort_run(path, in, odir) == 0, "ONNX Runtime failed on %s", path);
	struct om_tensor got, ort;
	struct om_model m;
	run(name, path, "Ascend310P3", NULL, in, &got, &m);
	snprintf(p, sizeof p, "%s/output_0.pb", odir);
	ck_assert_msg(om_tensor_read(p, &ort, err, sizeof err) == 0, "%s", err);
	struct cmp r;
	compare(&got, &ort, &r);
	fprintf(stderr, "%s: simulator vs ONNX Runtime: cosine %.7f, max |diff| %g (peak %g), "
			"top-1 %zu vs %zu; %u int8 tasks of %u\n",
		name, r.cos, r.maxdiff, r.peak, r.argmax_got, r.argmax_want, count_int8(&m),
		(unsigned)m.ntasks);
	ck_assert_msg(r.cos >= min_cos, "%s: cosine %.7f < %g", name, r.cos, min_cos);
	if (top1) {
		/* per image: the same class */
		size_t classes = 1000, n = r.n / classes;
		const float *g = got.data, *o = ort.data;
		for (size_t b = 0; b < n; b++) {
			size_t ig = 0, io = 0;
			for (size_t k = 1; k < classes; k++) {
				ig = g[b * classes + k] > g[b * classes + ig] ? k : ig;
				io = o[b * classes + k] > o[b * classes + io] ? k : io;
			}
			ck_assert_msg(ig == io, "%s image %zu: top-1 %zu, ONNX Runtime %zu", name, b,
				      ig, io);
		}
	}
	om_tensor_free(&got);
	om_tensor_free(&ort);
	om_free(&m);
}

/* Single Conv, Gemm and MatMul with quantized inputs, weights and output
 * (ONNX Runtime's QDQ form): the output lies on a grid of step s_y; every
 * element within one step of ONNX Runtime's (plus the fp16 rounding of the
 * dequantized value).  Most land on the same grid point: y is fp16 before
 * its quantization (ONNX Runtime's is fp32), so a value within about
 * |y| * 2^-11 of a rounding boundary (|y| / s_y up to 127: a few percent of
 * them) may round to the neighbour; 85% guards against a systematic shift. */
/* Model name (a node test, its output quantized) within one output step of
 * ONNX Runtime (plus, with rstep, one step of the residual, NAME/rstep.pb,
 * in whole output steps: the output is on its grid),
 * at least min_same percent of the elements on its grid point; m gets the
 * compiled model (om_free it). */
static void within_one_step(const char *name, int rstep, int min_same, struct om_model *m)
{
	char path[8192], in[8192], odir[8192], p[8192], err[4096];
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	snprintf(in, sizeof in, "%s/%s", dir, name);
	snprintf(odir, sizeof odir, "%s/ort_%s", dir, name);
	ck_assert(mkdir(odir, 0700) == 0 || access(odir, F_OK) == 0);
	ck_assert_msg(tu_ort_run(path, in, odir) == 0, "ONNX Runtime failed on %s", path);
	struct om_tensor got, ort, step;
	run(name, path, "Ascend910", NULL, in, &got, m);
	snprintf(p, sizeof p, "%s/output_0.pb", odir);
	ck_assert_msg(om_tensor_read(p, &ort, err, sizeof err) == 0, "%s", err);
	snprintf(p, sizeof p, "%s/step.pb", in);
	ck_assert_msg(om_tensor_read(p, &step, err, sizeof err) == 0, "%s", err);
	double sy = ((const float *)step.data)[0], sr = 0;
	if (rstep) {
		struct om_tensor rs;
		snprintf(p, sizeof p, "%s/rstep.pb", in);
		ck_assert_msg(om_tensor_read(p, &rs, err, sizeof err) == 0, "%s", err);
		sr = ((const float *)rs.data)[0];
		om_tensor_free(&rs);
	}
	ck_assert_uint_eq(got.nbytes, ort.nbytes);
	const float *g = got.data, *o = ort.data;
	size_t n = ort.nbytes / 4, same = 0;
	for (size_t e = 0; e < n; e++) {
		double d = fabs((double)g[e] - o[e]), r = ldexp(fabs((double)o[e]), -11);
		ck_assert_msg(d <= sy + ceil(sr / sy) * sy + r, "%s element %zu: %g, ONNX Runtime "
			      "%g (step %g)", name, e, (double)g[e], (double)o[e], sy);
		same += d <= r;
	}
	fprintf(stderr, "%s: %zu of %zu on ONNX Runtime's grid point, the rest within the bound "
			"(step %g)\n", name, same, n, sy);
	ck_assert_msg(same >= n * (size_t)min_same / 100, "%s: only %zu of %zu on the same "
		      "grid point", name, same, n);
	om_tensor_free(&got);
	om_tensor_free(&ort);
	om_tensor_free(&step);
}

START_TEST(node_tests_within_one_step)
{
	tu_ort_require("check_qconv");
	make_models();
	static const char *const names[] = { "qnode_conv", "qnode_gemm", "qnode_matmul" };
	for (int i = 0; i < 3; i++) {
		struct om_model m;
		within_one_step(names[i], 0, 85, &m);
		ck_assert_uint_eq(count_int8(&m) + count_int8_mm(&m), 1);
		om_free(&m);
	}
}
END_TEST

/* Tasks of m whose outputs are all int8 (no fp16 form written). */
static unsigned count_int8_only_out(const struct om_model *m)
{
	unsigned k = 0;
	for (uint32_t i = 0; i < m->ntasks; i++) {
		uint32_t j = 0;
		while (j < m->tasks[i].noutputs && m->tasks[i].outputs[j].dtype == 3)
			j++;
		k += m->tasks[i].noutputs && j == m->tasks[i].noutputs;
	}
	return k - count_type(m, "AscendQuant");
}

/* A residual block whose Add reads the residual through the Q/DQ pair of
 * the conv reading it: the conv that adds it reads the int8 form c1's
 * output path writes (an int8 residual input), so c1 writes no fp16 at
 * all, and no quantize task runs (the graph input, 16 channels, is
 * quantized in its TransData).  The bound: the
 * residual r is fp16 before its quantization (ONNX Runtime's is fp32), so
 * an r within fp16's rounding of a boundary can quantize to the
 * neighbouring step, which the Add passes to the output whole: one output
 * step plus one residual step (rounded up to output steps: 2 here), as the
 * same model with the residual in fp16
 * (the Add unfused, a fake-quantization kernel before it) also needs; and
 * more elements off the grid point than a single conv has (two roundings
 * near boundaries). */
START_TEST(residual_int8_within_one_step)
{
	tu_ort_require("check_qconv");
	make_models();
	struct om_model m;
	within_one_step("qnode_res", 1, 80, &m);
	ck_assert_uint_eq(count_int8(&m), 2);
	ck_assert_uint_eq(count_type(&m, "AscendQuant"), 0);
	ck_assert_uint_eq(count_q8_transdata(&m), 1);
	ck_assert_uint_eq(count_int8_only_out(&m), 2);
	unsigned res8 = 0;
	for (uint32_t i = 0; i < m.ntasks; i++) {
		unsigned k = 0;
		for (uint32_t j = 0; j < m.tasks[i].ninputs; j++)
			k += m.tasks[i].inputs[j].dtype == 3 && m.tasks[i].inputs[j].format == 3;
		res8 += !strcmp(m.tasks[i].op_type, "Conv+Add+Relu") && k == 2;
	}
	ck_assert_uint_eq(res8, 1);
	om_free(&m);
}
END_TEST

/* ATC's requantization (RequantFusionPass): a conv whose output only int8
 * convs read, with no clip and no fp16 residual, gets the output's 1 / s_y
 * folded into its dequant scales and bias (and an int8 residual's scale),
 * and its drain scales nothing more (the relu comes with the pass that
 * interleaves the int8 pairs).  In qnode_res that is c1 (Conv+Relu, read
 * by c2 and by the Add as int8); c2 writes the fp16 the output's Q/DQ
 * reads, so it is not folded.  Its accuracy is residual_int8's bound;
 * ResNet-50's identity blocks (an int8 residual folded too) are in
 * simquant_models_vs_onnxruntime. */
START_TEST(requant_folded_into_dequant)
{
	tu_ort_require("check_qconv");
	make_models();
	char path[8192], err[4096], line[1024];
	snprintf(path, sizeof path, "%s/qnode_res.onnx", dir);
	struct soc_config cfg;
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	FILE *rep = tmpfile();
	ck_assert_ptr_nonnull(rep);
	struct cc_options opt = { .report = rep };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &opt, &m, err, sizeof err) == 0, "%s", err);
	rewind(rep);
	unsigned folded = 0;
	while (fgets(line, sizeof line, rep))
		if (strstr(line, "requantization folded")) {
			folded++;
			ck_assert_msg(strstr(line, "c1") != NULL, "folded: %s", line);
		}
	fclose(rep);
	ck_assert_uint_eq(folded, 1);
	om_free(&m);
}
END_TEST

/* L2 fusion of int8 convs (plan_l2.c): qchain_l2's c1..c2 run two images
 * at a time on the 310P3, each slice writing its images of the full int8
 * tensors (cc_q8_plan), which c3, outside the chain, reads whole.  Slicing
 * changes no value: the output equals the unsliced compile's
 * (--buffer_optimize=off_optimize) bit for bit, and the reference's. */
START_TEST(int8_chain_l2_fused)
{
	make_models();
	char path[8192], in[8192];
	snprintf(path, sizeof path, "%s/qchain_l2.onnx", dir);
	snprintf(in, sizeof in, "%s/qchain_l2", dir);
	struct cc_options l2 = { .buffer_optimize = CC_BUF_L2 };
	struct cc_options off = { .buffer_optimize = CC_BUF_OFF };
	struct om_tensor a, b, want;
	struct om_model ma, mb;
	struct cmp r;
	run("qchain_l2", path, "Ascend310P3", &l2, in, &a, &ma);
	run("qchain_l2/off_optimize", path, "Ascend310P3", &off, in, &b, &mb);
	fprintf(stderr, "qchain_l2: %u tasks L2-fused, %u unsliced; %u int8 convs\n", ma.ntasks,
		mb.ntasks, count_int8(&ma));
	ck_assert_uint_gt(ma.ntasks, mb.ntasks);
	ck_assert_uint_eq(count_int8(&mb), 4);
	ck_assert_uint_eq(a.nbytes, b.nbytes);
	ck_assert_msg(!memcmp(a.data, b.data, a.nbytes), "qchain_l2: sliced and unsliced differ");
	reference("qchain_l2", &want);
	compare(&a, &want, &r);
	fprintf(stderr, "qchain_l2: cosine %.7f against the reference\n", r.cos);
	ck_assert(r.cos > 0.999);
	om_tensor_free(&a);
	om_tensor_free(&b);
	om_tensor_free(&want);
	om_free(&ma);
	om_free(&mb);
}
END_TEST

START_TEST(small_models_vs_onnxruntime)
{
	tu_ort_require("check_qconv");
	make_models();
	static const char *const names[] = { "qconv_exact", "qconv_bn", "qnet" };
	for (int i = 0; i < 3; i++) {
		char path[8192], in[8192];
		snprintf(path, sizeof path, "%s/%s.onnx", dir, names[i]);
		snprintf(in, sizeof in, "%s/%s", dir, names[i]);
		versus_ort(names[i], path, in, 0.9999, 0);
	}
}
END_TEST

/* torchvision networks (random weights, tests/export_models.py) quantized
 * by simquant (percentile calibration on two seeded sets, weights per
 * channel), compiled to int8 and compared with ONNX Runtime running the
 * same QDQ model on another input (DAVINCI_QMODELS). */
START_TEST(simquant_models_vs_onnxruntime)
{
	const char *spec = getenv("DAVINCI_QMODELS");
	if (!spec)
		spec = "resnet50:1,mobilenet_v2:1";
	if (!*spec)
		return;
	tu_ort_require("check_qconv");
	char list[1024], args[1100];
	snprintf(list, sizeof list, "%s", spec);
	for (char *c = list; *c; c++)
		if (*c == ',')
			*c = ' ';
	char mdir[4096] = "";
	snprintf(args, sizeof args, "%s", list);
	tu_models(mdir, sizeof mdir, "qconv-tv", "export_models.py", args, "python3-torchvision");
	char *save = NULL;
	for (char *tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char tag[256], name[300], fp32[8192], qdq[8192], in[8192], err[4096];
		snprintf(tag, sizeof tag, "%s", tok);
		char *colon = strchr(tag, ':');
		ck_assert_ptr_nonnull(colon);
		*colon = 0;
		snprintf(name, sizeof name, "%s_b%s_qdq", tag, colon + 1); /* (its golden key) */
		snprintf(fp32, sizeof fp32, "%s/%s_b%s/model.onnx", mdir, tag, colon + 1);
		snprintf(qdq, sizeof qdq, "%s/%s_b%s/qdq.onnx", mdir, tag, colon + 1);
		snprintf(in, sizeof in, "%s/%s_b%s/test_data_set_0", mdir, tag, colon + 1);
		struct qt_options o = { .model = fp32, .output = qdq, .soc = "Ascend310P3",
					.calib_count = 2, .seed = 7, .algo = QT_PERCENTILE,
					.percentile = 99.999, .gran = QT_PER_CHANNEL };
		ck_assert_msg(qt_quantize(&o, err, sizeof err) == 0, "simquant %s: %s", tag, err);
		char saved[4096];
		memcpy(saved, dir, sizeof saved);
		memcpy(dir, mdir, sizeof dir);
		versus_ort(name, qdq, in, 0.999, 1);
		memcpy(dir, saved, sizeof dir);
	}
	tu_models_free(mdir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qconv");
	TCase *tc = tcase_create("qconv");
	tcase_set_timeout(tc, 1800);
	tcase_add_test(tc, conv_int8_exact_input);
	tcase_add_test(tc, conv_int8_batchnorm_folded);
	tcase_add_test(tc, net_mixed_int8_fp16);
	tcase_add_test(tc, pass_off_runs_fake_quant);
	tcase_add_test(tc, node_tests_within_one_step);
	tcase_add_test(tc, residual_int8_within_one_step);
	tcase_add_test(tc, requant_folded_into_dequant);
	tcase_add_test(tc, int8_chain_l2_fused);
	tcase_add_test(tc, small_models_vs_onnxruntime);
	tcase_add_test(tc, simquant_models_vs_onnxruntime);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
