/* check_pool: the 4-D kernel generators (NCHW <-> NC1HWC0 transdata and
 * pooling) run on the simulated device against plain C references.
 *
 * Transdata must be exact for fp16-representable values and write zeros into
 * the padding channels; max pooling must be exact; average pooling is within
 * fp16 tolerances.  Every run prints its cycles; ResNet's stem pooling also
 * runs in timing mode, which must give the cycles of full mode.  Dilated
 * pooling runs on every SoC.  The Models case compiles and runs
 * tests/pool_bn_models.py's models (dilated MaxPool, BatchNormalization whose
 * parameters are graph inputs) against PyTorch. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "kernels.h"
#include "gen_util.h"
#include "model_util.h"
#include "sim.h"



/* A random fp16 value with |x| < 1 (exponents up to 14), never NaN or inf. */
static uint16_t rnd_f16(uint64_t *s)
{
	uint64_t r = rig_rnd(s);
	return (uint16_t)((r >> 20 & 1) << 15 | ((r >> 10) % 15) << 10 | (r & 0x3ff));
}

static int64_t c1_of(int64_t c) { return (c + 15) / 16; }

/* Device offset (in halves) of (image, channel, pixel) in NC1HWC0. */
static size_t nc1hwc0_at(int64_t c, int64_t hw, int64_t i, int64_t ch, int64_t px)
{
	return (size_t)((((i * c1_of(c) + ch / 16) * hw + px) * 16) + ch % 16);
}

static const char *const socs[] = { "Ascend910", "Ascend310" };

/* ---- transdata ---------------------------------------------------------------- */

/* Generate nchw_in (to_dev) or nchw_out for n x c x h x w and run it. */
static uint64_t transdata_run(struct rig *r, int to_dev, int64_t n, int64_t c, int64_t h,
			      int64_t w, uint64_t src, uint64_t dst, unsigned *bd, char *what,
			      size_t wlen)
{
	char err[1024];
	struct cc_prog p;
	snprintf(what, wlen, "%s %lldx%lldx%lldx%lld on %s", to_dev ? "nchw_in" : "nchw_out",
		 (long long)n, (long long)c, (long long)h, (long long)w, r->cfg.name);
	cc_prog_init(&p);
	int rc = to_dev ? cc_gen_nchw_in(&r->cfg, n, c, h, w, &p, bd, err, sizeof err)
			: cc_gen_nchw_out(&r->cfg, n, c, h, w, &p, bd, err, sizeof err);
	ck_assert_msg(rc == 0, "%s: %s", what, err);
	return rig_run(r, &p, *bd, src, dst, what);
}

/* nchw_out of random device data (padding channels not zero), then nchw_in
 * of random host data and nchw_out back: all exact.  The first run also
 * leaves the UB full of data, so that nothing passes by finding zeros. */
static void roundtrip(const char *soc, int64_t n, int64_t c, int64_t h, int64_t w,
		      uint64_t *cyc_in, uint64_t *cyc_out, unsigned *bd_in, unsigned *bd_out)
{
	struct rig r;
	rig_open(&r, soc, SIM_MODE_FULL);
	int64_t hw = h * w, total = n * c * hw, dev_halves = n * c1_of(c) * hw * 16;
	float *host = malloc((size_t)total * sizeof *host);
	float *back = malloc((size_t)total * sizeof *back);
	uint16_t *devb = malloc((size_t)dev_halves * 2);
	ck_assert(host && back && devb);
	uint64_t seed = 0x9e3779b97f4a7c15u ^ (uint64_t)(n * 1000003 + c * 1009 + hw);
	for (int64_t i = 0; i < total; i++)
		host[i] = dv_f16_to_f32(rnd_f16(&seed));
	for (int64_t i = 0; i < dev_halves; i++)
		devb[i] = rnd_f16(&seed);
	uint64_t src = rig_alloc(&r, (uint64_t)total * 4);
	uint64_t dv = rig_alloc(&r, (uint64_t)dev_halves * 2);
	uint64_t dst = rig_alloc(&r, (uint64_t)total * 4);
	ck_assert_int_eq(sim_gm_write(r.dev, src, host, (size_t)total * 4), 0);
	ck_assert_int_eq(sim_gm_write(r.dev, dv, devb, (size_t)dev_halves * 2), 0);
	char what[128];

	transdata_run(&r, 0, n, c, h, w, dv, dst, bd_out, what, sizeof what);
	ck_assert_int_eq(sim_gm_read(r.dev, dst, back, (size_t)total * 4), 0);
	for (int64_t i = 0; i < n; i++)
		for (int64_t ch = 0; ch < c; ch++)
			for (int64_t px = 0; px < hw; px++) {
				float want = dv_f16_to_f32(devb[nc1hwc0_at(c, hw, i, ch, px)]);
				float got = back[(i * c + ch) * hw + px];
				ck_assert_msg(got == want, "%s: image %lld channel %lld "
					      "pixel %lld: %g, want %g", what, (long long)i,
					      (long long)ch, (long long)px, got, want);
			}

	*cyc_in = transdata_run(&r, 1, n, c, h, w, src, dv, bd_in, what, sizeof what);
	ck_assert_int_eq(sim_gm_read(r.dev, dv, devb, (size_t)dev_halves * 2), 0);
	for (int64_t i = 0; i < n; i++)
		for (int64_t ch = 0; ch < c1_of(c) * 16; ch++)
			for (int64_t px = 0; px < hw; px++) {
				/* channels past c must be zeros */
				uint16_t want =
					ch < c ? dv_f32_to_f16(host[(i * c + ch) * hw + px]) : 0;
				uint16_t got = devb[nc1hwc0_at(c, hw, i, ch, px)];
				ck_assert_msg(got == want, "%s: image %lld channel %lld "
					      "pixel %lld: 0x%04x, want 0x%04x", what,
					      (long long)i, (long long)ch, (long long)px, got,
					      want);
			}

	*cyc_out = transdata_run(&r, 0, n, c, h, w, dv, dst, bd_out, what, sizeof what);
	ck_assert_int_eq(sim_gm_read(r.dev, dst, back, (size_t)total * 4), 0);
	for (int64_t i = 0; i < total; i++)
		ck_assert_msg(back[i] == host[i], "%s: element %lld: %g, want %g", what,
			      (long long)i, back[i], host[i]);
	free(host);
	free(back);
	free(devb);
	rig_close(&r);
}

START_TEST(transdata_roundtrip)
{
	static const int64_t shapes[][4] = {
		{ 1, 3, 224, 224 }, { 2, 20, 7, 9 },   { 1, 1, 1, 1 },   { 1, 2048, 7, 7 },
		{ 2, 37, 1, 1 },    { 3, 5, 2, 3 },    { 1, 40, 50, 50 }, { 2, 16, 3, 8 },
		{ 1, 24, 1, 1 },    { 1, 19, 61, 67 }, { 2, 48, 4, 4 },
	};
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			uint64_t ci, co;
			unsigned bi, bo;
			const int64_t *d = shapes[i];
			roundtrip(socs[s], d[0], d[1], d[2], d[3], &ci, &co, &bi, &bo);
			fprintf(stderr, "transdata %lldx%lldx%lldx%lld on %s: in %llu cycles "
				"(%u blocks), out %llu cycles (%u blocks)\n", (long long)d[0],
				(long long)d[1], (long long)d[2], (long long)d[3], socs[s],
				(unsigned long long)ci, bi, (unsigned long long)co, bo);
			/* the big ones are split on the 910 */
			if (s == 0 && (i == 0 || i == 3))
				ck_assert(bi > 1 && bo > 1);
		}
}
END_TEST

/* ---- pooling ----------------------------------------------------------------- */

struct pool_case {
	int64_t n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr;
	int is_max, count_include_pad, ceil_mode;
};

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int ceil_mode)
{
	int64_t span = in + p0 + p1 - k;
	int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
	/* ONNX: the last window must start inside the input or its left padding */
	if (ceil_mode && (o - 1) * s >= in + p0)
		o--;
	return o;
}

/* dh, dw: the dilations (the window spans (k-1)*d+1 rows, columns) */
static struct cc_pool pool_desc(const struct pool_case *pc, int64_t dh, int64_t dw)
{
	struct cc_pool d = { pc->n, pc->c, pc->h, pc->w, pc->kh, pc->kw, pc->sh, pc->sw,
			     pc->pt, pc->pl, pc->pb, pc->pr, 0, 0, pc->is_max,
			     pc->count_include_pad, dh, dw, 0, 0 };
	d.ho = out_dim(pc->h, (pc->kh - 1) * dh + 1, pc->sh, pc->pt, pc->pb, pc->ceil_mode);
	d.wo = out_dim(pc->w, (pc->kw - 1) * dw + 1, pc->sw, pc->pl, pc->pr, pc->ceil_mode);
	return d;
}

/* Plain C pooling of one output of the NC1HWC0 input x (halves). */
static double pool_ref_at(const struct cc_pool *d, const uint16_t *x, int64_t i, int64_t ch,
			  int64_t oh, int64_t ow)
{
	double acc = d->is_max ? -INFINITY : 0;
	int64_t cnt = 0;
	for (int64_t a = 0; a < d->kh; a++)
		for (int64_t b = 0; b < d->kw; b++) {
			int64_t ih = oh * d->sh - d->pt + a * d->dh;
			int64_t iw = ow * d->sw - d->pl + b * d->dw;
			if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w)
				continue;
			double v = dv_f16_to_f32(x[nc1hwc0_at(d->c, d->h * d->w, i, ch,
							       ih * d->w + iw)]);
			acc = d->is_max ? fmax(acc, v) : acc + v;
			cnt++;
		}
	if (!d->is_max)
		acc /= d->count_include_pad ? (double)(d->kh * d->kw) : (double)cnt;
	return acc;
}

/* ref[n][c][ho][wo] */
static void pool_ref(const struct cc_pool *d, const uint16_t *x, double *ref)
{
	for (int64_t i = 0; i < d->n; i++)
		for (int64_t ch = 0; ch < d->c; ch++)
			for (int64_t oh = 0; oh < d->ho; oh++)
				for (int64_t ow = 0; ow < d->wo; ow++)
					ref[((i * d->c + ch) * d->ho + oh) * d->wo + ow] =
						pool_ref_at(d, x, i, ch, oh, ow);
}

/* Run one pooling with dilations dh, dw; checks the results in full mode.
 * Returns the cycles. */
static uint64_t pool_run_d(const char *soc, const struct pool_case *pc, int64_t dh, int64_t dw,
			   enum sim_mode mode, unsigned *bd_out)
{
	struct rig r;
	rig_open(&r, soc, mode);
	struct cc_pool d = pool_desc(pc, dh, dw);
	int64_t c16 = c1_of(d.c) * 16;
	int64_t nin = d.n * c16 * d.h * d.w, nout = d.n * c16 * d.ho * d.wo;
	uint16_t *x = malloc((size_t)nin * 2), *y = malloc((size_t)nout * 2);
	double *ref = malloc((size_t)(d.n * d.c * d.ho * d.wo) * sizeof *ref);
	ck_assert(x && y && ref);
	uint64_t seed = 0x2545f4914f6cdd1du ^ (uint64_t)(nin * 31 + d.kh * 7 + d.is_max);
	/* a per-channel offset, so that averages are far from 0 and a wrong
	 * divisor shows; the padding channels get values too (finite, not 0) */
	for (int64_t i = 0; i < nin; i++) {
		int64_t ch = i / 16 / (d.h * d.w) % c1_of(d.c) * 16 + i % 16;
		float off = (float)((ch * 5 % 9 - 4) * 2);
		x[i] = dv_f32_to_f16(off + dv_f16_to_f32(rnd_f16(&seed)) / 2);
	}
	uint64_t gx = rig_alloc(&r, (uint64_t)nin * 2), gy = rig_alloc(&r, (uint64_t)nout * 2);
	ck_assert_int_eq(sim_gm_write(r.dev, gx, x, (size_t)nin * 2), 0);

	char err[1024], what[160];
	snprintf(what, sizeof what, "%s %lldx%lldx%lldx%lld k%lldx%lld s%lldx%lld "
		 "p%lld,%lld,%lld,%lld d%lldx%lld%s -> %lldx%lld on %s",
		 d.is_max ? "maxpool" : d.count_include_pad ? "avgpool(incl)" : "avgpool",
		 (long long)d.n, (long long)d.c, (long long)d.h, (long long)d.w, (long long)d.kh,
		 (long long)d.kw, (long long)d.sh, (long long)d.sw, (long long)d.pt,
		 (long long)d.pl, (long long)d.pb, (long long)d.pr, (long long)dh, (long long)dw,
		 pc->ceil_mode ? " ceil" : "",
		 (long long)d.ho, (long long)d.wo, soc);
	struct cc_prog p;
	unsigned bd;
	cc_prog_init(&p);
	ck_assert_msg(cc_gen_pool(&r.cfg, &d, &p, &bd, err, sizeof err) == 0, "%s: %s", what,
		      err);
	uint64_t cycles = rig_run(&r, &p, bd, gx, gy, what);
	double worst = 0;
	if (mode == SIM_MODE_FULL) {
		ck_assert_int_eq(sim_gm_read(r.dev, gy, y, (size_t)nout * 2), 0);
		pool_ref(&d, x, ref);
		double peak = 0;
		for (int64_t i = 0; i < d.n * d.c * d.ho * d.wo; i++)
			peak = fmax(peak, fabs(ref[i]));
		for (int64_t i = 0; i < d.n; i++)
			for (int64_t ch = 0; ch < d.c; ch++)
				for (int64_t o = 0; o < d.ho * d.wo; o++) {
					double w = ref[(i * d.c + ch) * d.ho * d.wo + o];
					uint16_t gb = y[nc1hwc0_at(d.c, d.ho * d.wo, i, ch, o)];
					double got = dv_f16_to_f32(gb);
					double tol = 2e-3 * fmax(1, peak) + 4e-3 * fabs(w);
					worst = fmax(worst, fabs(got - w) / tol);
					int ok = d.is_max ? gb == dv_f32_to_f16((float)w)
							  : fabs(got - w) <= tol;
					ck_assert_msg(ok, "%s: image %lld channel %lld pixel "
						      "%lld,%lld: %.6g, want %.6g", what,
						      (long long)i, (long long)ch,
						      (long long)(o / d.wo), (long long)(o % d.wo),
						      got, w);
				}
	}
	fprintf(stderr, "%s: %llu cycles%s, %u blocks", what, (unsigned long long)cycles,
		mode == SIM_MODE_TIMING ? " (timing mode)" : "", bd);
	if (mode == SIM_MODE_FULL && !d.is_max)
		fprintf(stderr, ", worst error %.0f%% of the tolerance", worst * 100);
	fprintf(stderr, "\n");
	if (bd_out)
		*bd_out = bd;
	free(x);
	free(y);
	free(ref);
	rig_close(&r);
	return cycles;
}

static uint64_t pool_run(const char *soc, const struct pool_case *pc, enum sim_mode mode,
			 unsigned *bd_out)
{
	return pool_run_d(soc, pc, 1, 1, mode, bd_out);
}

/* ResNet's stem pooling: timing mode, the same cycles in full mode (checked) */
START_TEST(maxpool_resnet_stem)
{
	struct pool_case pc = { 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0 };
	unsigned bd;
	uint64_t t = pool_run("Ascend910", &pc, SIM_MODE_TIMING, &bd);
	ck_assert_uint_gt(bd, 1);
	uint64_t f = pool_run("Ascend910", &pc, SIM_MODE_FULL, NULL);
	ck_assert_uint_eq(t, f);
	pool_run("Ascend310", &pc, SIM_MODE_TIMING, NULL);
}
END_TEST

START_TEST(maxpool_shapes)
{
	static const struct pool_case cases[] = {
		{ 2, 24, 17, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0 },
		{ 1, 32, 20, 20, 2, 2, 2, 2, 0, 0, 0, 0, 1, 0, 0 },
		{ 1, 20, 9, 11, 2, 2, 2, 2, 0, 0, 0, 0, 1, 0, 1 },  /* ceil mode */
		{ 1, 40, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0 }, /* Inception */
		{ 3, 7, 6, 5, 1, 1, 2, 2, 0, 0, 0, 0, 1, 0, 0 },    /* one tap */
		{ 1, 16, 13, 30, 3, 2, 1, 3, 2, 0, 1, 2, 1, 0, 0 }, /* asymmetric */
		{ 1, 16, 8, 600, 2, 2, 2, 2, 0, 0, 0, 0, 1, 0, 0 }, /* wide rows */
	};
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			pool_run(socs[s], &cases[i], SIM_MODE_FULL, NULL);
}
END_TEST

START_TEST(avgpool_shapes)
{
	static const struct pool_case cases[] = {
		{ 2, 24, 17, 17, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0 },
		{ 2, 24, 17, 17, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0 },
		{ 1, 40, 14, 14, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0 },
		{ 1, 128, 56, 56, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0 }, /* DenseNet */
		{ 1, 20, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1 },   /* ceil mode */
		{ 1, 24, 35, 35, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0 },  /* Inception v3 */
		{ 1, 16, 40, 40, 20, 20, 20, 20, 0, 0, 0, 0, 0, 0, 0 }, /* big window */
		{ 1, 16, 9, 9, 5, 1, 1, 2, 2, 0, 2, 0, 0, 0, 0 },   /* columns only */
	};
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			pool_run(socs[s], &cases[i], SIM_MODE_FULL, NULL);
}
END_TEST

/* Dilated windows (ONNX dilations): the taps dh rows, dw columns apart.  The
 * big cases spread over several cores and several tiles per core (both
 * checked on the Ascend910), in row-run and stacked-plane tiling, direct and
 * separable windows, with ceil_mode and average pooling too; the last four
 * run in strip mode, window row by window row (a window of 166x137 pixels;
 * a 1-D signal of 30000 samples, cut across its columns; two whose column
 * dilation is a multiple of the stride, the window rows' maxima by
 * doubling). */
START_TEST(dilated_pool)
{
	static const struct {
		struct pool_case pc;
		int64_t dh, dw;
		int many; /* several blocks expected on the Ascend910 */
	} cases[] = {
		{ { 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0 }, 2, 2, 1 }, /* row runs */
		{ { 4, 48, 20, 20, 3, 3, 1, 1, 2, 2, 2, 2, 1, 0, 0 }, 2, 2, 1 },
		{ { 8, 256, 10, 10, 3, 3, 1, 1, 2, 2, 2, 2, 1, 0, 0 }, 2, 2, 1 }, /* stacked */
		{ { 1, 32, 9, 10, 2, 3, 2, 3, 0, 1, 0, 1, 1, 0, 1 }, 3, 2, 0 },    /* ceil */
		{ { 1, 16, 31, 29, 2, 2, 1, 1, 1, 0, 1, 0, 1, 0, 1 }, 1, 3, 0 },   /* ceil, one axis */
		{ { 2, 24, 17, 17, 3, 3, 2, 1, 2, 2, 2, 2, 0, 0, 0 }, 2, 3, 0 },   /* average */
		{ { 2, 24, 17, 17, 3, 2, 1, 2, 2, 1, 2, 1, 0, 1, 1 }, 2, 2, 0 },   /* incl, ceil */
		{ { 1, 16, 40, 40, 20, 20, 20, 20, 0, 0, 0, 0, 1, 0, 0 }, 1, 1, 0 },
		{ { 1, 16, 40, 40, 17, 17, 2, 2, 0, 0, 0, 0, 1, 0, 0 }, 2, 2, 0 }, /* 289 taps */
		/* strip mode (kern_pool.c): no output row's window fits the UB */
		{ { 1, 32, 200, 180, 12, 9, 7, 6, 5, 8, 5, 8, 1, 0, 1 }, 15, 17, 1 },
		{ { 2, 16, 1, 30000, 1, 50, 1, 4, 0, 7, 0, 7, 1, 0, 0 }, 1, 3, 1 }, /* 1-D */
		/* dw a multiple of sw: sliding maxima by doubling */
		{ { 1, 32, 300, 200, 9, 10, 4, 5, 4, 9, 4, 9, 1, 0, 1 }, 20, 5, 1 },
		{ { 1, 16, 1, 20000, 1, 12, 1, 3, 0, 5, 0, 5, 1, 0, 0 }, 1, 6, 1 },
	};
	/* every SoC of sim/soc: the tiling must fit each UB */
	static const char *const all[] = { "Ascend910", "Ascend310", "Ascend310P3" };
	for (size_t s = 0; s < 3; s++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			unsigned bd;
			pool_run_d(all[s], &cases[i].pc, cases[i].dh, cases[i].dw, SIM_MODE_FULL,
				   &bd);
			if (s == 0 && cases[i].many)
				ck_assert_uint_gt(bd, 1);
		}
}
END_TEST

START_TEST(global_pool)
{
	static const struct pool_case cases[] = {
		{ 1, 2048, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, 0, 0 },
		{ 2, 40, 5, 3, 5, 3, 1, 1, 0, 0, 0, 0, 0, 0, 0 },
		{ 1, 1280, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, 0, 0 },
		{ 1, 32, 112, 112, 112, 112, 1, 1, 0, 0, 0, 0, 0, 0, 0 }, /* SE block */
		{ 1, 16, 150, 160, 150, 160, 1, 1, 0, 0, 0, 0, 0, 0, 0 }, /* 3 levels */
		{ 2, 40, 5, 3, 5, 3, 1, 1, 0, 0, 0, 0, 1, 0, 0 },       /* global max */
		{ 1, 24, 30, 30, 30, 30, 1, 1, 0, 0, 0, 0, 1, 0, 0 },
		{ 1, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0 },     /* 1 pixel */
		{ 1, 16, 8, 16, 8, 16, 1, 1, 0, 0, 0, 0, 0, 0, 0 },   /* 128 pixels */
		{ 1, 24, 3, 43, 3, 43, 1, 1, 0, 0, 0, 0, 0, 0, 0 },   /* 129 */
	};
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			unsigned bd;
			pool_run(socs[s], &cases[i], SIM_MODE_FULL, &bd);
			if (s == 0 && i == 0)
				ck_assert_uint_gt(bd, 1);
		}
}
END_TEST

/* ---- models (tests/pool_bn_models.py), compiled and run against PyTorch ---------- */

static char models_dir[4096];

static void run_model(const char *model)
{
	tu_models(models_dir, sizeof models_dir, "poolbn", "pool_bn_models.py", NULL,
		  "python3-torch, python3-onnx");
	tu_run_compare("check_pool", models_dir, model, model);
}

#define MODEL_TEST(name) TU_MODEL_TEST(run_model, name)

MODEL_TEST(maxpool_dil_ceil)
MODEL_TEST(maxpool1d_dil)
MODEL_TEST(maxpool1d_long)
MODEL_TEST(bn_inputs_relu)
MODEL_TEST(bn1d_mixed)

int main(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("Transdata");
	tcase_add_test(tc, transdata_roundtrip);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	TCase *tp = tcase_create("Pooling");
	tcase_add_test(tp, maxpool_resnet_stem);
	tcase_add_test(tp, maxpool_shapes);
	tcase_add_test(tp, avgpool_shapes);
	tcase_add_test(tp, global_pool);
	tcase_add_test(tp, dilated_pool);
	tcase_set_timeout(tp, 300);
	suite_add_tcase(s, tp);
	TCase *tm = tcase_create("Models");
	tcase_add_test(tm, maxpool_dil_ceil);
	tcase_add_test(tm, maxpool1d_dil);
	tcase_add_test(tm, maxpool1d_long);
	tcase_add_test(tm, bn_inputs_relu);
	tcase_add_test(tm, bn1d_mixed);
	tcase_set_timeout(tm, 300);
	suite_add_tcase(s, tm);
	/* one process, so that the models are made once */
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(models_dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
