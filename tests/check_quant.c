/* check_quant.c: simquant's calibration algorithms, its QDQ models (checked
 * by onnx.checker) and their accuracy in ONNX Runtime against the fp32 model. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_util.h"
#include "quant.h"
#include "tensor_io.h"

/* xorshift64*: uniform in (0, 1) */
static double unif(uint64_t *s)
{
	*s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
	return ((double)((*s * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) / 9007199254740992.0;
}

START_TEST(minmax_is_max)
{
	struct qt_stats s;
	qt_stats_init(&s);
	float a[] = { 0.5f, -3.25f, 1.0f }, b[] = { 2.0f, -0.1f };
	qt_stats_add(&s, a, 3);
	qt_stats_add(&s, b, 2);
	ck_assert_double_eq_tol(qt_threshold(&s, QT_MINMAX, 0), 3.25, 1e-12);
	/* a later, larger batch grows the histogram's range */
	float c[] = { 10.0f };
	qt_stats_add(&s, c, 1);
	ck_assert_double_eq_tol(qt_threshold(&s, QT_MINMAX, 0), 10.0, 1e-12);
	ck_assert_uint_eq(s.count, 6);
	uint64_t tot = 0;
	for (int i = 0; i < QT_BINS; i++)
		tot += s.hist[i];
	ck_assert_uint_eq(tot, 6 - s.zeros);
}
END_TEST

START_TEST(percentile_uniform)
{
	/* |x| uniform on [0, 4] in ten batches of growing range: the p-th
	 * percentile of |x| is 4 p / 100, within a couple of bins */
	struct qt_stats s;
	qt_stats_init(&s);
	uint64_t r = 1;
	float *x = malloc(100000 * sizeof *x);
	for (int b = 0; b < 10; b++) {
		for (int i = 0; i < 100000; i++)
			x[i] = (float)((unif(&r) * 2 - 1) * 4.0 * (b + 1) / 10);
		qt_stats_add(&s, x, 100000);
	}
	free(x);
	/* mixture of U[0, 0.4k]: the CDF at t=3 is sum_k min(1, 3/(0.4k))/10 */
	double cdf = 0;
	for (int k = 1; k <= 10; k++)
		cdf += fmin(1.0, 3.0 / (0.4 * k)) / 10;
	ck_assert_double_eq_tol(qt_threshold(&s, QT_PERCENTILE, cdf * 100), 3.0, 0.01);
	ck_assert_double_eq_tol(qt_threshold(&s, QT_PERCENTILE, 100), s.amax, 1e-9);
}
END_TEST

START_TEST(entropy_heavy_tail_and_uniform)
{
	struct qt_stats lap, uni;
	qt_stats_init(&lap);
	qt_stats_init(&uni);
	uint64_t r = 7;
	size_t n = 200000;
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++) {
		double u = unif(&r) - 0.5;
		x[i] = (float)(-(u < 0 ? -1 : 1) * log(1 - 2 * fabs(u))); /* Laplace(0, 1) */
	}
	x[0] = 60.0f, x[1] = -55.0f, x[2] = 40.0f; /* outliers */
	qt_stats_add(&lap, x, n);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(unif(&r) * 2 - 1);
	qt_stats_add(&uni, x, n);
	free(x);
	double tl = qt_threshold(&lap, QT_ENTROPY, 0), tu = qt_threshold(&uni, QT_ENTROPY, 0);
	/* Laplace(1): the bulk is within ~10; the threshold must ignore the outliers */
	ck_assert_msg(tl < 0.35 * lap.amax, "laplace threshold %g, max %g", tl, lap.amax);
	ck_assert_msg(tl > 3.0, "laplace threshold %g clips the bulk", tl);
	ck_assert_msg(tu > 0.95 * uni.amax, "uniform threshold %g, max %g", tu, uni.amax);
	/* min-max would keep the outliers */
	ck_assert_double_eq_tol(qt_threshold(&lap, QT_MINMAX, 0), 60.0, 1e-6);
}
END_TEST

START_TEST(zero_and_sqnr)
{
	struct qt_stats s;
	qt_stats_init(&s);
	float z[4] = { 0 };
	qt_stats_add(&s, z, 4);
	ck_assert_double_eq(qt_threshold(&s, QT_ENTROPY, 0), 0);
	float a[2] = { 1, 1 }, b[2] = { 1, 0.9f };
	ck_assert(isinf(qt_sqnr(a, a, 2)));
	ck_assert_double_eq_tol(qt_sqnr(a, b, 2), 10 * log10(2 / 0.01), 1e-4);
}
END_TEST


/* ---- the tool on the small CNN of tests/quant_models.py ---- */

struct fx {
	char dir[4096];
	char model[4200], calib[4200], eval[4200];
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof *f);
	tu_models(f->dir, sizeof f->dir, "quant", "quant_models.py", NULL,
		  "python3-torch and python3-onnx");
	snprintf(f->model, sizeof f->model, "%s/cnn/model.onnx", f->dir);
	snprintf(f->calib, sizeof f->calib, "%s/cnn/calib", f->dir);
	snprintf(f->eval, sizeof f->eval, "%s/cnn/eval", f->dir);
}

static void quantize(const struct fx *f, const char *out, enum qt_algo a, enum qt_gran g,
		     const char *skip)
{
	struct qt_options o = { .model = f->model, .output = out, .soc = "Ascend310P3",
				.calib_dir = f->calib, .algo = a, .percentile = 99.99, .gran = g,
				.skip_nodes = skip };
	char err[4096];
	ck_assert_msg(qt_quantize(&o, err, sizeof err) == 0, "%s", err);
}

/* quant_models.py --check: onnx.checker, weights within half a step; the
 * value of key in its output */
static long check_key(const char *qdq, const char *fp32, const char *key)
{
	const char *src = getenv("srcdir");
	char cmd[16384];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/quant_models.py --check '%s' '%s'",
		 src && *src ? src : ".", qdq, fp32);
	FILE *p = popen(cmd, "r");
	ck_assert(p != NULL);
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof line, p))
		if (!strncmp(line, key, kl) && line[kl] == '=')
			v = atol(line + kl + 1);
	ck_assert_msg(pclose(p) == 0, "%s: onnx.checker or the weight check failed", qdq);
	return v;
}

START_TEST(qdq_structure)
{
	struct fx f;
	fx_init(&f);
	char q[4300];
	for (int g = 0; g < 2; g++) {
		snprintf(q, sizeof q, "%s/q%d.onnx", f.dir, g);
		quantize(&f, q, QT_ENTROPY, g ? QT_PER_TENSOR : QT_PER_CHANNEL, NULL);
		/* 5 activations (input, 3 ReLUs, Flatten); 5 weights and biases */
		ck_assert_int_eq(check_key(q, f.model, "quantize"), 5);
		ck_assert_int_eq(check_key(q, f.model, "dequantize"), 15);
		ck_assert_int_eq(check_key(q, f.model, "int8_weights"), 5);
		ck_assert_int_eq(check_key(q, f.model, "int32_biases"), 5);
		ck_assert_int_eq(check_key(q, f.model, "opset"), 13);
		ck_assert_int_eq(check_key(q, f.model, "fp32_initializers"), 0);
	}
	/* an opset-11 model comes out at opset 13, still valid for onnx.checker */
	char m11[4300];
	snprintf(m11, sizeof m11, "%s/cnn/model_opset11.onnx", f.dir);
	snprintf(q, sizeof q, "%s/q11.onnx", f.dir);
	struct qt_options o = { .model = m11, .output = q, .soc = "Ascend310P3",
				.calib_dir = f.calib, .algo = QT_MINMAX, .gran = QT_PER_CHANNEL };
	char err[4096];
	ck_assert_msg(qt_quantize(&o, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(check_key(q, m11, "opset"), 13);
	ck_assert_int_eq(check_key(q, m11, "int8_weights"), 5);
	/* a skipped Gemm keeps its fp32 weight and bias, and its input no Q/DQ */
	snprintf(q, sizeof q, "%s/qs.onnx", f.dir);
	quantize(&f, q, QT_ENTROPY, QT_PER_CHANNEL, "/fc/Gemm");
	ck_assert_int_eq(check_key(q, f.model, "quantize"), 4);
	ck_assert_int_eq(check_key(q, f.model, "int8_weights"), 4);
	ck_assert_int_eq(check_key(q, f.model, "fp32_initializers"), 2);
	tu_models_free(f.dir);
}
END_TEST

START_TEST(bad_inputs)
{
	struct fx f;
	fx_init(&f);
	char out[4300], err[4096];
	snprintf(out, sizeof out, "%s/never.onnx", f.dir);
	struct qt_options o = { .model = "/nonexistent.onnx", .output = out, .soc = "Ascend310P3",
				.calib_count = 1, .algo = QT_MINMAX, .gran = QT_PER_CHANNEL };
	ck_assert_int_eq(qt_quantize(&o, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "/nonexistent.onnx"), "%s", err);
	/* calibration input of the wrong shape: names the file and both shapes */
	char bad[4300], cmd[9000];
	snprintf(bad, sizeof bad, "%s/bad", f.dir);
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c \"import numpy as np, onnx.numpy_helper as h, "
		 "os; os.makedirs('%s'); open('%s/input_0.pb','wb').write(h.from_array("
		 "np.zeros((1,3,16,16),np.float32),'input').SerializeToString())\"", bad, bad);
	ck_assert_int_eq(system(cmd), 0);
	o.model = f.model;
	o.calib_dir = bad;
	ck_assert_int_eq(qt_quantize(&o, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "input_0.pb") && strstr(err, "[1,3,16,16]") &&
		      strstr(err, "[1,3,32,32]"), "%s", err);
	FILE *x = fopen(out, "rb");
	ck_assert_msg(x == NULL, "%s written after an error", out);
	tu_models_free(f.dir);
}
END_TEST

/* The CLI refuses bad flag values before doing anything (exit 2, nothing
 * written); tests run in the build directory, where ./simquant is. */
START_TEST(cli_flags)
{
	struct fx f;
	fx_init(&f);
	static const char *const bad[] = { "--calibration=kl", "--percentile=0",
					   "--percentile=100.5", "--weight_granularity=row",
					   "--calib_count=-1", "--auto_skip=x", "--bogus=1" };
	char out[4300], cmd[16384];
	snprintf(out, sizeof out, "%s/cli.onnx", f.dir);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(cmd, sizeof cmd, "./simquant --model='%s' --output='%s' %s 2>/dev/null",
			 f.model, out, bad[i]);
		int rc = system(cmd);
		ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "%s: exit %d", bad[i], rc);
		ck_assert_msg(access(out, F_OK) != 0, "%s: %s written", bad[i], out);
	}
	snprintf(cmd, sizeof cmd, "./simquant --model='%s' --output='%s' --calib_count=1 "
		 "--calibration=minmax >/dev/null", f.model, out);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(access(out, F_OK), 0);
	tu_models_free(f.dir);
}
END_TEST

START_TEST(auto_skip)
{
	struct fx f;
	fx_init(&f);
	char out[4300], rep[4300], err[4096];
	snprintf(out, sizeof out, "%s/qa.onnx", f.dir);
	snprintf(rep, sizeof rep, "%s/qa.json", f.dir);
	struct qt_options o = { .model = f.model, .output = out, .soc = "Ascend310P3",
				.calib_dir = f.calib, .algo = QT_ENTROPY, .gran = QT_PER_CHANNEL,
				.auto_skip = 2, .report_json = rep };
	ck_assert_msg(qt_quantize(&o, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(check_key(out, f.model, "int8_weights"), 3);
	FILE *r = fopen(rep, "r");
	ck_assert(r != NULL);
	char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, r);
	fclose(r);
	buf[n] = 0;
	/* every candidate measured; two kept fp32 with their reason */
	int meas = 0, autos = 0;
	for (char *p = buf; (p = strstr(p, "\"alone_int8_sqnr_db\": ")); p++) {
		double v = atof(p + 22);
		ck_assert_msg(v > 10 && v < 200, "alone-int8 SQNR %g", v);
		meas++;
	}
	for (char *p = buf; (p = strstr(p, "skipped by auto_skip")); p++)
		autos++;
	ck_assert_int_eq(meas, 5);
	ck_assert_int_eq(autos, 2);
	tu_models_free(f.dir);
}
END_TEST

/* The output of model on input set in_dir, through ONNX Runtime. */
static float *ort_output(const char *dir, const char *model, const char *in_dir, size_t *n)
{
	char out[4300], p[4400], err[4096];
	snprintf(out, sizeof out, "%s/ort_out", dir);
	ck_assert_msg(tu_ort_run(model, in_dir, out) == 0, "ONNX Runtime failed on %s", model);
	snprintf(p, sizeof p, "%s/output_0.pb", out);
	struct om_tensor t;
	ck_assert_msg(om_tensor_read(p, &t, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(t.dtype, 1);
	*n = t.nbytes / 4;
	float *f = t.data;
	t.data = NULL;
	om_tensor_free(&t);
	remove(p);
	return f;
}

START_TEST(accuracy_in_ort)
{
	struct fx f;
	fx_init(&f);
	size_t n, m;
	float *ref = ort_output(f.dir, f.model, f.eval, &n);
	char q[4300];
	double sq[3][2];
	for (int a = 0; a < 3; a++)
		for (int g = 0; g < 2; g++) {
			snprintf(q, sizeof q, "%s/q.onnx", f.dir);
			quantize(&f, q, (enum qt_algo)a, g ? QT_PER_TENSOR : QT_PER_CHANNEL, NULL);
			float *y = ort_output(f.dir, q, f.eval, &m);
			ck_assert_uint_eq(m, n);
			sq[a][g] = qt_sqnr(ref, y, n);
			free(y);
			printf("%s %s: SQNR %.2f dB\n", qt_algo_name((enum qt_algo)a),
			       g ? "per_tensor" : "per_channel", sq[a][g]);
			/* 5 quantized layers, each int8 quantizer at best ~6 dB per bit;
			 * 30 dB is the floor of a working quantizer here (measured ~52-55) */
			ck_assert_msg(isfinite(sq[a][g]) && sq[a][g] > 30, "SQNR %g", sq[a][g]);
		}
	for (int a = 0; a < 3; a++)
		ck_assert_msg(sq[a][0] > sq[a][1], "%s: per channel %g <= per tensor %g",
			      qt_algo_name((enum qt_algo)a), sq[a][0], sq[a][1]);
	/* skipping the Gemm changes the output (its int8 noise is gone) */
	snprintf(q, sizeof q, "%s/qs.onnx", f.dir);
	quantize(&f, q, QT_ENTROPY, QT_PER_CHANNEL, "/fc/Gemm");
	float *y = ort_output(f.dir, q, f.eval, &m);
	double s = qt_sqnr(ref, y, n);
	printf("entropy per_channel, Gemm fp32: SQNR %.2f dB\n", s);
	ck_assert_msg(s != sq[2][0] && isfinite(s), "skip list had no effect");
	free(y);
	free(ref);
	tu_models_free(f.dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant");
	TCase *t = tcase_create("algorithms");
	tcase_add_test(t, minmax_is_max);
	tcase_add_test(t, percentile_uniform);
	tcase_add_test(t, entropy_heavy_tail_and_uniform);
	tcase_add_test(t, zero_and_sqnr);
	suite_add_tcase(s, t);
	TCase *m = tcase_create("model");
	tcase_set_timeout(m, 600);
	tcase_add_test(m, qdq_structure);
	tcase_add_test(m, bad_inputs);
	tcase_add_test(m, cli_flags);
	tcase_add_test(m, auto_skip);
	const char *no_ort = tu_ort_missing();
	if (!no_ort)
		tcase_add_test(m, accuracy_in_ort);
	suite_add_tcase(s, m);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!nf && no_ort) {
		/* the rest passed; the ONNX Runtime comparison could not run */
		printf("check_quant: SKIP accuracy_in_ort: %s\n", no_ort);
		return 77;
	}
	return nf ? 1 : 0;
}
