/* check_precision_kernels: the fp32 compute mode (mixed precision,
 * cc_node.fp32) of the Softmax/LogSoftmax and ReduceSum/Mean kernels, run on
 * the simulated device against float64 references computed here from the
 * same fp16 inputs, next to the fp16 mode on the same inputs.
 *
 * Bounds.  In fp32 mode every step after the fp16 input is fp32 (relative
 * error per step <= 2^-24, a few ulps for expf/logf) and the result is
 * rounded to fp16 once (<= 0.5 fp16 ulp).  The fp32 errors add up to at most
 * ~(number of terms a value goes through) * 2^-24 relative: 4096 terms for a
 * sum over R = 4096 (the tree: 12 levels, far less in practice), 16 + 64 for
 * a softmax row of 1000 (16 terms per accumulator lane, then 64 lanes), i.e.
 * below 2^-12 relative, a quarter of an fp16 ulp (2^-10 relative at worst).
 * So the fp32 result is within 0.5 + 0.25 < 1 fp16 ulp of the reference: the
 * tests assert <= 1 ulp (ulp of the reference; 2^-24 for subnormals).  The
 * fp16 mode rounds at every step (the tree over R: log2 R roundings of
 * values up to 2048, whose ulp is 2), so the fp32 mode must be strictly
 * better on the sums and no worse on Softmax.
 *
 * Both modes run on every SoC the other kernel tests use.  The last test
 * prints the simulated time of Softmax [1024, 1000] and [4096, 128] on
 * Ascend910 in both modes (timing mode: the same cycles as a full run). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "kernels.h"
#include "gen_util.h"
#include "sim.h"


static const char *const socs[] = { "Ascend910", "Ascend310P3", "Ascend310" };


/* Uniform in [lo, hi), rounded to fp16. */
static uint16_t rnd_f16(uint64_t *s, double lo, double hi)
{
	double u = (double)(rig_rnd(s) >> 11) / 9007199254740992.0;
	return dv_f32_to_f16((float)(lo + (hi - lo) * u));
}

/* The fp16 ulp at v: 2^(exponent - 10), 2^-24 among the subnormals. */
static double ulp16(double v)
{
	double a = fabs(v);
	if (a < ldexp(1.0, -14))
		return ldexp(1.0, -24);
	int e;
	frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
	return ldexp(1.0, e - 1 - 10);
}

struct errs {
	double max_ulp, mean_ulp, max_abs;
};

static void err_add(struct errs *e, double got, double ref, int64_t *count)
{
	double d = fabs(got - ref), u = d / ulp16(ref);
	ck_assert_msg(isfinite(got), "non-finite result %g (reference %g)", got, ref);
	if (u > e->max_ulp)
		e->max_ulp = u;
	if (d > e->max_abs)
		e->max_abs = d;
	e->mean_ulp += u;
	(*count)++;
}

/* ---- ReduceSum / ReduceMean over a non-last axis ------------------------------ */

/* x [A][R][C] (C = 16 real lanes), sum or mean over R, one mode. */
static void reduce_run(const char *soc, int kind, int64_t A, int64_t R, int64_t C, int f32,
		       struct errs *e)
{
	struct rig r;
	rig_open(&r, soc, SIM_MODE_FULL);
	int64_t nx = A * R * C;
	uint16_t *x = malloc((size_t)nx * 2), *y = malloc((size_t)(A * C) * 2);
	ck_assert(x && y);
	uint64_t seed = 0x243f6a8885a308d3u;
	for (int64_t i = 0; i < nx; i++)
		x[i] = rnd_f16(&seed, 0.0, 1.0);
	uint64_t gx = rig_alloc(&r, (uint64_t)nx * 2), gy = rig_alloc(&r, (uint64_t)(A * C) * 2);
	ck_assert_int_eq(sim_gm_write(r.dev, gx, x, (size_t)nx * 2), 0);
	char what[160], err[512];
	snprintf(what, sizeof what, "%s over R=%lld of [%lld,%lld,%lld] on %s, %s mode",
		 kind ? "ReduceMean" : "ReduceSum", (long long)R, (long long)A, (long long)R,
		 (long long)C, soc, f32 ? "fp32" : "fp16");
	struct cc_prog p;
	unsigned bd;
	cc_prog_init(&p);
	ck_assert_msg(cc_gen_reduce(&r.cfg, kind, A, R, C, C, 0, 1, f32, &p, &bd, err,
				    sizeof err) == 0, "%s: %s", what, err);
	uint64_t cyc = rig_run(&r, &p, bd, gx, gy, what);
	ck_assert_int_eq(sim_gm_read(r.dev, gy, y, (size_t)(A * C) * 2), 0);
	memset(e, 0, sizeof *e);
	int64_t count = 0;
	for (int64_t a = 0; a < A; a++)
		for (int64_t c = 0; c < C; c++) {
			double s = 0;
			for (int64_t i = 0; i < R; i++)
				s += dv_f16_to_f32(x[(a * R + i) * C + c]);
			if (kind)
				s /= (double)R;
			err_add(e, dv_f16_to_f32(y[a * C + c]), s, &count);
		}
	e->mean_ulp /= (double)count;
	printf("%s: %llu cycles, max error %.3f ulp (%.4g), mean %.3f ulp\n", what,
	       (unsigned long long)cyc, e->max_ulp, e->max_abs, e->mean_ulp);
	free(x);
	free(y);
	sim_device_free(r.dev);
}

START_TEST(reduce_r4096)
{
	for (int kind = 0; kind < 2; kind++) {
		struct errs h, f;
		reduce_run(socs[_i], kind, 2, 4096, 16, 0, &h);
		reduce_run(socs[_i], kind, 2, 4096, 16, 1, &f);
		ck_assert_msg(f.max_ulp <= 1.0, "fp32 mode: %.3f ulp", f.max_ulp);
		ck_assert_msg(f.max_abs < h.max_abs && f.mean_ulp < h.mean_ulp,
			      "fp32 mode (max %.4g, mean %.3f ulp) not better than fp16 (max %.4g, "
			      "mean %.3f ulp)", f.max_abs, f.mean_ulp, h.max_abs, h.mean_ulp);
	}
}
END_TEST

/* A small R, a C of two 64-lane repeats and several tiles: the fp32 path's
 * strides and tiling, exact-ish against the reference as well. */
START_TEST(reduce_small)
{
	struct errs f;
	reduce_run(socs[_i], 1, 37, 7, 144, 1, &f);
	ck_assert_msg(f.max_ulp <= 1.0, "fp32 mode: %.3f ulp", f.max_ulp);
}
END_TEST

/* ---- Softmax / LogSoftmax over the last axis -------------------------------- */

/* rows x cols logits in [-8, 8); cols <= 128: cc_gen_softmax, else
 * cc_gen_softmax_any (rows of c16). */
static uint64_t softmax_run(struct rig *r, int64_t rows, int64_t cols, int lg, int f32,
			    struct errs *e)
{
	int64_t c16 = cc_pad16(cols), nx = rows * c16;
	uint16_t *x = malloc((size_t)nx * 2), *y = malloc((size_t)nx * 2);
	ck_assert(x && y);
	uint64_t seed = 0x13198a2e03707344u ^ (uint64_t)(rows * 7919 + cols);
	for (int64_t i = 0; i < nx; i++) /* padding lanes random too: they must not count */
		x[i] = rnd_f16(&seed, -8.0, 8.0);
	uint64_t gx = rig_alloc(r, (uint64_t)nx * 2), gy = rig_alloc(r, (uint64_t)nx * 2);
	ck_assert_int_eq(sim_gm_write(r->dev, gx, x, (size_t)nx * 2), 0);
	char what[160], err[512];
	snprintf(what, sizeof what, "%s [%lld, %lld] on %s, %s mode", lg ? "LogSoftmax" : "Softmax",
		 (long long)rows, (long long)cols, r->cfg.name, f32 ? "fp32" : "fp16");
	struct cc_prog p;
	unsigned bd;
	cc_prog_init(&p);
	int rc = cols <= 128
			 ? cc_gen_softmax(&r->cfg, rows, cols, 1.0f, 0, lg, f32, &p, &bd, err,
					  sizeof err)
			 : cc_gen_softmax_any(&r->cfg, rows, 1, c16, cols, 1, 1.0f, 0, lg, f32, &p,
					      &bd, err, sizeof err);
	ck_assert_msg(rc == 0, "%s: %s", what, err);
	uint64_t cyc = rig_run(r, &p, bd, gx, gy, what);
	if (e) {
		ck_assert_int_eq(sim_gm_read(r->dev, gy, y, (size_t)nx * 2), 0);
		memset(e, 0, sizeof *e);
		int64_t count = 0;
		for (int64_t i = 0; i < rows; i++) {
			const uint16_t *xr = x + i * c16;
			double mx = -INFINITY, s = 0;
			for (int64_t j = 0; j < cols; j++)
				mx = fmax(mx, dv_f16_to_f32(xr[j]));
			for (int64_t j = 0; j < cols; j++)
				s += exp(dv_f16_to_f32(xr[j]) - mx);
			for (int64_t j = 0; j < cols; j++) {
				double d = dv_f16_to_f32(xr[j]) - mx;
				double ref = lg ? d - log1p(s - 1.0) : exp(d) / s;
				err_add(e, dv_f16_to_f32(y[i * c16 + j]), ref, &count);
			}
		}
		e->mean_ulp /= (double)count;
		printf("%s: %llu cycles, max error %.3f ulp (%.4g), mean %.4f ulp\n", what,
		       (unsigned long long)cyc, e->max_ulp, e->max_abs, e->mean_ulp);
	}
	free(x);
	free(y);
	return cyc;
}

START_TEST(softmax_rows)
{
	static const int64_t shape[][2] = { { 64, 1000 }, { 256, 100 }, { 40, 60 } };
	struct rig r;
	rig_open(&r, socs[_i], SIM_MODE_FULL);
	for (int s = 0; s < 3; s++)
		for (int lg = 0; lg < 2; lg++) {
			struct errs h, f;
			softmax_run(&r, shape[s][0], shape[s][1], lg, 0, &h);
			softmax_run(&r, shape[s][0], shape[s][1], lg, 1, &f);
			ck_assert_msg(f.max_ulp <= 1.0, "fp32 mode: %.3f ulp", f.max_ulp);
			ck_assert_msg(f.max_ulp <= h.max_ulp && f.mean_ulp <= h.mean_ulp,
				      "fp32 mode (max %.3f, mean %.4f ulp) worse than fp16 (max "
				      "%.3f, mean %.4f ulp)", f.max_ulp, f.mean_ulp, h.max_ulp,
				      h.mean_ulp);
		}
	sim_device_free(r.dev);
}
END_TEST

/* Softmax over R (a non-last axis, cc_gen_softmax_any's element-wise path):
 * [A][R][C] = [3][50][32], in fp32 mode within 1 ulp. */
START_TEST(softmax_over_r)
{
	struct rig r;
	rig_open(&r, socs[_i], SIM_MODE_FULL);
	int64_t A = 3, R = 50, C = 32, nx = A * R * C;
	uint16_t *x = malloc((size_t)nx * 2), *y = malloc((size_t)nx * 2);
	ck_assert(x && y);
	uint64_t seed = 0xa4093822299f31d0u;
	for (int64_t i = 0; i < nx; i++)
		x[i] = rnd_f16(&seed, -8.0, 8.0);
	uint64_t gx = rig_alloc(&r, (uint64_t)nx * 2), gy = rig_alloc(&r, (uint64_t)nx * 2);
	ck_assert_int_eq(sim_gm_write(r.dev, gx, x, (size_t)nx * 2), 0);
	for (int lg = 0; lg < 2; lg++) {
		char err[512];
		struct cc_prog p;
		unsigned bd;
		cc_prog_init(&p);
		ck_assert_msg(cc_gen_softmax_any(&r.cfg, A, R, C, C, 0, 1.0f, 0, lg, 1, &p, &bd,
						 err, sizeof err) == 0, "%s", err);
		rig_run(&r, &p, bd, gx, gy, lg ? "LogSoftmax over R" : "Softmax over R");
		ck_assert_int_eq(sim_gm_read(r.dev, gy, y, (size_t)nx * 2), 0);
		struct errs e = { 0, 0, 0 };
		int64_t count = 0;
		for (int64_t a = 0; a < A; a++)
			for (int64_t c = 0; c < C; c++) {
				double mx = -INFINITY, s = 0;
				for (int64_t i = 0; i < R; i++)
					mx = fmax(mx, dv_f16_to_f32(x[(a * R + i) * C + c]));
				for (int64_t i = 0; i < R; i++)
					s += exp(dv_f16_to_f32(x[(a * R + i) * C + c]) - mx);
				for (int64_t i = 0; i < R; i++) {
					double d = dv_f16_to_f32(x[(a * R + i) * C + c]) - mx;
					err_add(&e, dv_f16_to_f32(y[(a * R + i) * C + c]),
						lg ? d - log(s) : exp(d) / s, &count);
				}
			}
		printf("%s over R=50 on %s, fp32 mode: max error %.3f ulp\n",
		       lg ? "LogSoftmax" : "Softmax", socs[_i], e.max_ulp);
		ck_assert_msg(e.max_ulp <= 1.0, "fp32 mode: %.3f ulp", e.max_ulp);
	}
	free(x);
	free(y);
	sim_device_free(r.dev);
}
END_TEST

/* The cost of the fp32 mode, printed: simulated microseconds on Ascend910. */
START_TEST(softmax_cost)
{
	static const int64_t shape[][2] = { { 1024, 1000 }, { 4096, 128 } };
	struct rig r;
	rig_open(&r, "Ascend910", SIM_MODE_TIMING);
	for (int s = 0; s < 2; s++) {
		uint64_t c16 = softmax_run(&r, shape[s][0], shape[s][1], 0, 0, NULL);
		uint64_t c32 = softmax_run(&r, shape[s][0], shape[s][1], 0, 1, NULL);
		double us = soc_cycle_ns(&r.cfg) / 1000.0;
		printf("Softmax [%lld, %lld] on Ascend910: fp16 mode %.2f us, fp32 mode %.2f us "
		       "(x%.2f)\n", (long long)shape[s][0], (long long)shape[s][1],
		       (double)c16 * us, (double)c32 * us, (double)c32 / (double)c16);
		/* fp32 repeats hold half the lanes: the mode is slower, never faster */
		ck_assert_uint_gt(c32, c16);
	}
	sim_device_free(r.dev);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("precision_kernels");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, reduce_r4096, 0, 3);
	tcase_add_loop_test(tc, reduce_small, 0, 3);
	tcase_add_loop_test(tc, softmax_rows, 0, 3);
	tcase_add_loop_test(tc, softmax_over_r, 0, 3);
	tcase_add_test(tc, softmax_cost);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
