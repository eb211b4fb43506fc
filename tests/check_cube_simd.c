/* check_cube_simd.c: the cube's SIMD MMAD kernels (sim/cube_kern.c) against its scalar
 * reference, bit for bit: random tiles, every k that is not a multiple of k0, init and
 * accumulate, unaligned C, special values (infinities, NaNs, subnormals, -0) and int32
 * wrap-around.  Each available path is called by name, and so is the dispatcher the
 * simulator uses. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cube_kern.h"
#include "fp16.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "float_bits.h"

/* ck_assert records its location on every call, too slow for element loops; this only calls
 * into Check on failure. */
#define CHECK(cond, ...)                          \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

#define MAX1 5 /* largest M1, K1, N1 tried */

struct rng {
	uint64_t s;
};

/* splitmix64: small, and the same sequence on every host. */
static uint64_t next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(struct rng *r, uint32_t n) { return (uint32_t)(next(r) % n); }


static int is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/* Operand kinds. */
enum vals {
	V_SMALL,   /* fp16 in (-2, 2): sums stay finite and carry many rounding steps */
	V_FINITE,  /* any finite fp16 bit pattern, subnormals and -0 included */
	V_SPECIAL, /* mostly special values */
};

static uint16_t gen_f16(struct rng *r, enum vals v)
{
	static const uint16_t special[] = {
		0x0000, 0x8000,		/* +-0 */
		0x7c00, 0xfc00,		/* +-inf */
		0x7e00, 0xfe00, 0x7c01, 0x7d55, 0xffff, /* NaNs, signalling ones too */
		0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200, /* subnormals */
		0x0400, 0x8400,		/* smallest normals */
		0x7bff, 0xfbff,		/* +-65504 */
		0x3c00, 0xbc00,		/* +-1 */
	};
	uint16_t h;

	switch (v) {
	case V_SMALL:
		/* exponent below 16 (|x| < 2), any sign and fraction */
		return (uint16_t)((next(r) & 0x83ff) | (below(r, 16) << 10));
	case V_FINITE:
		do
			h = (uint16_t)next(r);
		while ((h & 0x7c00) == 0x7c00);
		return h;
	case V_SPECIAL:
	default:
		if (below(r, 4))
			return special[below(r, sizeof special / sizeof special[0])];
		return gen_f16(r, V_FINITE);
	}
}

/* fp32 accumulator contents for accumulate mode: any finite float, fp32 subnormals and -0
 * included; with special, infinities and NaNs too. */
static float gen_acc(struct rng *r, int special)
{
	static const uint32_t sp[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f800000,
				      0xff800000, 0x7fc00000, 0xffc12345, 0x7f7fffff};
	uint32_t u;

	if (!below(r, 8))
		return u2f(sp[below(r, special ? 9 : 4)]);
	do
		u = (uint32_t)next(r);
	while ((u & 0x7f800000u) == 0x7f800000u);
	/* mostly values near the products' size, so that the adds do round */
	if (below(r, 4))
		u = (u & 0x807fffffu) | (uint32_t)(120 + below(r, 16)) << 23;
	return u2f(u);
}

struct f32_case {
	int64_t M1, K1, N1, k;
	int init;
	size_t coff; /* bytes C starts past an aligned address (0 or 4) */
};

/* fa, fb: widened operands as the simulator hands them over; the K padding (columns of A,
 * rows of B past k) holds NaNs, which must not reach C. */
static void fill_f32(struct rng *r, const struct f32_case *t, float *fa, float *fb, enum vals v)
{
	for (int64_t m1 = 0; m1 < t->M1; m1++)
		for (int64_t k1 = 0; k1 < t->K1; k1++)
			for (int i = 0; i < 16; i++)
				for (int j = 0; j < 16; j++) {
					int pad = k1 * 16 + j >= t->k;
					fa[((m1 * t->K1 + k1) * 16 + i) * 16 + j] =
						pad ? u2f(0x7fc0dead)
						    : dv_f16_to_f32(gen_f16(r, v));
				}
	for (int64_t k1 = 0; k1 < t->K1; k1++)
		for (int64_t n1 = 0; n1 < t->N1; n1++)
			for (int i = 0; i < 16; i++)
				for (int j = 0; j < 16; j++) {
					int pad = k1 * 16 + i >= t->k;
					fb[((k1 * t->N1 + n1) * 16 + i) * 16 + j] =
						pad ? u2f(0xffc0beef)
						    : dv_f16_to_f32(gen_f16(r, v));
				}
}

/* Runs every path on the same inputs and compares each with the reference.  strict_nan: NaN
 * results must match bit for bit too (only when no two different NaNs can meet). */
static void run_f32(struct rng *r, const struct f32_case *t, enum vals v, int acc_special,
		    int strict_nan)
{
	static float fa[MAX1 * MAX1 * 256], fb[MAX1 * MAX1 * 256];
	size_t nc = (size_t)(t->M1 * t->N1 * 256);
	float c0[MAX1 * MAX1 * 256];
	unsigned char ref[MAX1 * MAX1 * 1024 + 4], got[MAX1 * MAX1 * 1024 + 4];

	fill_f32(r, t, fa, fb, v);
	for (size_t i = 0; i < nc; i++)
		c0[i] = gen_acc(r, acc_special);
	memcpy(ref + t->coff, c0, nc * 4);
	ck_assert_int_eq(dv_mmad_f32_path(DV_CUBE_REF, fa, fb, ref + t->coff, t->M1, t->K1, t->N1,
					  t->k, t->init),
			 0);
	for (int p = DV_CUBE_REF + 1; p <= DV_CUBE_NPATHS; p++) {
		/* p == DV_CUBE_NPATHS stands for the dispatcher */
		if (p < DV_CUBE_NPATHS && !dv_cube_path_available((enum dv_cube_path)p))
			continue;
		memcpy(got + t->coff, c0, nc * 4);
		if (p < DV_CUBE_NPATHS)
			ck_assert_int_eq(dv_mmad_f32_path((enum dv_cube_path)p, fa, fb,
							  got + t->coff, t->M1, t->K1, t->N1,
							  t->k, t->init),
					 0);
		else
			dv_mmad_f32(fa, fb, got + t->coff, t->M1, t->K1, t->N1, t->k, t->init);
		for (size_t i = 0; i < nc; i++) {
			uint32_t x, y;

			memcpy(&x, ref + t->coff + 4 * i, 4);
			memcpy(&y, got + t->coff + 4 * i, 4);
			if (x == y || (!strict_nan && is_nan_bits(x) && is_nan_bits(y)))
				continue;
			CHECK(0,
			      "path %d, M1 %lld K1 %lld N1 %lld k %lld init %d: C[%zu] is 0x%08x, "
			      "reference 0x%08x",
			      p, (long long)t->M1, (long long)t->K1, (long long)t->N1,
			      (long long)t->k, t->init, i, (unsigned)y, (unsigned)x);
		}
	}
}

static struct f32_case random_case(struct rng *r, int64_t k0)
{
	struct f32_case t;

	t.M1 = 1 + below(r, MAX1);
	t.K1 = 1 + below(r, MAX1);
	t.N1 = 1 + below(r, MAX1);
	t.k = (t.K1 - 1) * k0 + 1 + below(r, (uint32_t)k0);
	t.init = (int)below(r, 2);
	t.coff = below(r, 2) * 4;
	return t;
}

START_TEST(test_f32_random)
{
	struct rng r = {1};

	for (int i = 0; i < 300; i++) {
		struct f32_case t = random_case(&r, 16);

		run_f32(&r, &t, i % 2 ? V_SMALL : V_FINITE, 0, 1);
	}
}
END_TEST

/* Every k from 1 to 3 fractals, both modes, so each partial last fractal is covered. */
START_TEST(test_f32_every_k)
{
	struct rng r = {2};

	for (int64_t k = 1; k <= 48; k++)
		for (int init = 0; init < 2; init++) {
			struct f32_case t = {2, (k + 15) / 16, 3, k, init, (size_t)(k & 1) * 4};

			run_f32(&r, &t, V_SMALL, 0, 1);
		}
}
END_TEST

/* The products' finite results are exact and the padding NaNs never reach C: with small
 * operands and init, C holds no NaN at all. */
START_TEST(test_f32_padding_ignored)
{
	struct rng r = {3};
	static float fa[MAX1 * MAX1 * 256], fb[MAX1 * MAX1 * 256];
	float c[MAX1 * MAX1 * 256];
	struct f32_case t = {3, 3, 2, 37, 1, 0};

	fill_f32(&r, &t, fa, fb, V_SMALL);
	for (int p = 0; p < DV_CUBE_NPATHS; p++) {
		if (!dv_cube_path_available((enum dv_cube_path)p))
			continue;
		ck_assert_int_eq(dv_mmad_f32_path((enum dv_cube_path)p, fa, fb, c, t.M1, t.K1,
						  t.N1, t.k, 1),
				 0);
		for (int i = 0; i < 3 * 2 * 256; i++)
			CHECK(!is_nan_bits(f2u(c[i])), "path %d: C[%d] is NaN", p, i);
	}
}
END_TEST

/* Infinities, NaNs (a NaN result must be NaN, whatever payload the host picks when two
 * meet), subnormals and signed zeros, in the operands and in the accumulator. */
START_TEST(test_f32_special)
{
	struct rng r = {4};

	for (int i = 0; i < 300; i++) {
		struct f32_case t = random_case(&r, 16);

		run_f32(&r, &t, V_SPECIAL, 1, 0);
	}
}
END_TEST

/* One NaN source per C element: its payload (quieted) must come through bit for bit. */
START_TEST(test_f32_nan_payload)
{
	struct rng r = {5};
	static float fa[256], fb[256];
	unsigned char ref[1024], got[1024];

	for (int i = 0; i < 64; i++) {
		int row = (int)below(&r, 16), col = (int)below(&r, 16);
		uint16_t nan = (uint16_t)(0x7c01 | (next(&r) & 0x83ff));

		for (int j = 0; j < 256; j++) {
			fa[j] = dv_f16_to_f32(gen_f16(&r, V_SMALL));
			fb[j] = dv_f16_to_f32(gen_f16(&r, V_SMALL));
		}
		fa[row * 16 + col] = dv_f16_to_f32(nan); /* one row of C turns NaN */
		memset(ref, 0, sizeof ref);
		dv_mmad_f32_path(DV_CUBE_REF, fa, fb, ref, 1, 1, 1, 16, 1);
		for (int p = 1; p < DV_CUBE_NPATHS; p++) {
			if (!dv_cube_path_available((enum dv_cube_path)p))
				continue;
			memset(got, 0, sizeof got);
			dv_mmad_f32_path((enum dv_cube_path)p, fa, fb, got, 1, 1, 1, 16, 1);
			CHECK(!memcmp(ref, got, sizeof ref), "path %d: NaN payload differs", p);
		}
		uint32_t x;
		memcpy(&x, ref + row * 64, 4);
		CHECK(is_nan_bits(x), "row %d is not NaN", row);
	}
}
END_TEST

/* A case whose rounding order is visible: 1 + 2^-24 + 2^-24 ... in k order stays 1 in fp32,
 * while any other grouping of the tiny terms first would not. */
START_TEST(test_f32_order)
{
	static float fa[256], fb[256];
	float c[256];

	for (int i = 0; i < 256; i++) {
		fa[i] = 1.0f;
		fb[i] = (i / 16) == 0 ? 1.0f : 0x1p-24f; /* row 0 of B: 1, the others 2^-24 */
	}
	for (int p = 0; p < DV_CUBE_NPATHS; p++) {
		if (!dv_cube_path_available((enum dv_cube_path)p))
			continue;
		dv_mmad_f32_path((enum dv_cube_path)p, fa, fb, c, 1, 1, 1, 16, 1);
		for (int i = 0; i < 256; i++)
			CHECK(c[i] == 1.0f, "path %d: C[%d] = %a, not 1 (k order lost)", p, i,
			      (double)c[i]);
	}
}
END_TEST

/* ---- fp16 operands (dv_mmad_f16: what the simulator runs for an fp16 MMAD) ---- */

/* a, b: fp16 operands as in L0A / L0B; the K padding holds fp16 NaNs, which must not reach C.
 * fa, fb: the same widened, for the fp32 reference. */
static void fill_f16(struct rng *r, const struct f32_case *t, uint16_t *a, uint16_t *b,
		     float *fa, float *fb, enum vals v)
{
	size_t na = (size_t)(t->M1 * t->K1 * 256), nb = (size_t)(t->K1 * t->N1 * 256);

	for (size_t i = 0; i < na; i++) {
		int64_t k = (int64_t)(i / 256 % (size_t)t->K1) * 16 + (int64_t)(i % 16);
		a[i] = k >= t->k ? 0x7e5a : gen_f16(r, v);
		fa[i] = dv_f16_to_f32(a[i]);
	}
	for (size_t i = 0; i < nb; i++) {
		int64_t k = (int64_t)(i / 256 / (size_t)t->N1) * 16 + (int64_t)(i % 256 / 16);
		b[i] = k >= t->k ? 0xfe77 : gen_f16(r, v);
		fb[i] = dv_f16_to_f32(b[i]);
	}
}

/* Every fp16 path, and the dispatcher, against the fp32 reference on the widened operands. */
static void run_f16(struct rng *r, const struct f32_case *t, enum vals v, int acc_special,
		    int strict_nan)
{
	static uint16_t a[MAX1 * MAX1 * 256], b[MAX1 * MAX1 * 256];
	static float fa[MAX1 * MAX1 * 256], fb[MAX1 * MAX1 * 256];
	static float sa[MAX1 * MAX1 * 256], sb[MAX1 * MAX1 * 256];
	size_t nc = (size_t)(t->M1 * t->N1 * 256);
	float c0[MAX1 * MAX1 * 256];
	unsigned char ref[MAX1 * MAX1 * 1024 + 4], got[MAX1 * MAX1 * 1024 + 4];

	fill_f16(r, t, a, b, fa, fb, v);
	for (size_t i = 0; i < nc; i++)
		c0[i] = gen_acc(r, acc_special);
	memcpy(ref + t->coff, c0, nc * 4);
	ck_assert_int_eq(dv_mmad_f32_path(DV_CUBE_REF, fa, fb, ref + t->coff, t->M1, t->K1, t->N1,
					  t->k, t->init),
			 0);
	for (int p = DV_CUBE_REF; p <= DV_CUBE_NPATHS; p++) {
		if (p < DV_CUBE_NPATHS && !dv_cube_path_available((enum dv_cube_path)p))
			continue;
		memcpy(got + t->coff, c0, nc * 4);
		if (p < DV_CUBE_NPATHS)
			ck_assert_int_eq(dv_mmad_f16_path((enum dv_cube_path)p, a, b, got + t->coff,
							  t->M1, t->K1, t->N1, t->k, t->init,
							  sa, sb),
					 0);
		else
			dv_mmad_f16(a, b, got + t->coff, t->M1, t->K1, t->N1, t->k, t->init, sa,
				    sb);
		for (size_t i = 0; i < nc; i++) {
			uint32_t x, y;

			memcpy(&x, ref + t->coff + 4 * i, 4);
			memcpy(&y, got + t->coff + 4 * i, 4);
			if (x == y || (!strict_nan && is_nan_bits(x) && is_nan_bits(y)))
				continue;
			CHECK(0,
			      "fp16 path %d, M1 %lld K1 %lld N1 %lld k %lld init %d: C[%zu] is "
			      "0x%08x, reference 0x%08x",
			      p, (long long)t->M1, (long long)t->K1, (long long)t->N1,
			      (long long)t->k, t->init, i, (unsigned)y, (unsigned)x);
		}
	}
}

/* Random tiles: any finite fp16 (subnormal products, -0) and small ones whose sums round at
 * every step; every k of up to 3 fractals; accumulators with infinities and NaNs; operands
 * mostly special.  The AVX-512 path multiplies and adds in one rounding (an fp16 product is
 * exact in fp32, so that rounding is the add's): these are where it would show if not. */
START_TEST(test_f16_random)
{
	struct rng r = {11};

	for (int i = 0; i < 300; i++) {
		struct f32_case t = random_case(&r, 16);

		run_f16(&r, &t, i % 2 ? V_SMALL : V_FINITE, 0, 1);
	}
	for (int64_t k = 1; k <= 48; k++)
		for (int init = 0; init < 2; init++) {
			struct f32_case t = {2, (k + 15) / 16, 3, k, init, (size_t)(k & 1) * 4};

			run_f16(&r, &t, V_FINITE, 0, 1);
		}
	for (int i = 0; i < 300; i++) {
		struct f32_case t = random_case(&r, 16);

		run_f16(&r, &t, V_SPECIAL, 1, 0);
	}
}
END_TEST

/* One NaN source per C element: its payload (quieted) must come through bit for bit. */
START_TEST(test_f16_nan_payload)
{
	struct rng r = {12};
	static uint16_t a[256], b[256];
	static float fa[256], fb[256], sa[256], sb[256];
	unsigned char ref[1024], got[1024];

	for (int i = 0; i < 64; i++) {
		int row = (int)below(&r, 16), col = (int)below(&r, 16);

		for (int j = 0; j < 256; j++) {
			a[j] = gen_f16(&r, V_SMALL);
			b[j] = gen_f16(&r, V_SMALL);
		}
		a[row * 16 + col] = (uint16_t)(0x7c01 | (next(&r) & 0x83ff));
		for (int j = 0; j < 256; j++) {
			fa[j] = dv_f16_to_f32(a[j]);
			fb[j] = dv_f16_to_f32(b[j]);
		}
		memset(ref, 0, sizeof ref);
		dv_mmad_f32_path(DV_CUBE_REF, fa, fb, ref, 1, 1, 1, 16, 1);
		for (int p = 0; p < DV_CUBE_NPATHS; p++) {
			if (!dv_cube_path_available((enum dv_cube_path)p))
				continue;
			memset(got, 0, sizeof got);
			dv_mmad_f16_path((enum dv_cube_path)p, a, b, got, 1, 1, 1, 16, 1, sa, sb);
			CHECK(!memcmp(ref, got, sizeof ref), "fp16 path %d: NaN payload differs", p);
		}
	}
}
END_TEST

/* ---- int8 ---- */

static void run_s8(struct rng *r, const struct f32_case *t, int extremes)
{
	static int8_t a[MAX1 * MAX1 * 512], b[MAX1 * MAX1 * 512];
	size_t nc = (size_t)(t->M1 * t->N1 * 256);
	int32_t c0[MAX1 * MAX1 * 256];
	unsigned char ref[MAX1 * MAX1 * 1024 + 4], got[MAX1 * MAX1 * 1024 + 4];

	for (size_t i = 0; i < (size_t)(t->M1 * t->K1 * 512); i++)
		a[i] = extremes ? (below(r, 2) ? -128 : 127) : (int8_t)next(r);
	for (size_t i = 0; i < (size_t)(t->K1 * t->N1 * 512); i++)
		b[i] = extremes ? -128 : (int8_t)next(r);
	for (size_t i = 0; i < nc; i++)
		c0[i] = extremes ? (below(r, 2) ? INT32_MAX - 100 : INT32_MIN + 100)
				 : (int32_t)(uint32_t)next(r);
	memcpy(ref + t->coff, c0, nc * 4);
	ck_assert_int_eq(dv_mmad_s8_path(DV_CUBE_REF, a, b, ref + t->coff, t->M1, t->K1, t->N1,
					 t->k, t->init),
			 0);
	for (int p = DV_CUBE_REF + 1; p <= DV_CUBE_NPATHS; p++) {
		memcpy(got + t->coff, c0, nc * 4);
		if (p == DV_CUBE_NPATHS)
			dv_mmad_s8(a, b, got + t->coff, t->M1, t->K1, t->N1, t->k, t->init);
		else if (dv_mmad_s8_path((enum dv_cube_path)p, a, b, got + t->coff, t->M1, t->K1,
					 t->N1, t->k, t->init))
			continue; /* no such kernel here */
		CHECK(!memcmp(ref + t->coff, got + t->coff, nc * 4),
		      "s8 path %d, M1 %lld K1 %lld N1 %lld k %lld init %d differs", p,
		      (long long)t->M1, (long long)t->K1, (long long)t->N1, (long long)t->k,
		      t->init);
	}
}

START_TEST(test_s8_random)
{
	struct rng r = {6};

	for (int i = 0; i < 300; i++) {
		struct f32_case t = random_case(&r, 32);

		run_s8(&r, &t, 0);
	}
	for (int64_t k = 1; k <= 64; k++) {
		struct f32_case t = {2, (k + 31) / 32, 2, k, (int)(k & 1), 0};

		run_s8(&r, &t, 0);
	}
}
END_TEST

/* -128 x -128 products summed into accumulators near INT32_MAX/MIN: wraps, same bits. */
START_TEST(test_s8_wrap)
{
	struct rng r = {7};

	for (int i = 0; i < 50; i++) {
		struct f32_case t = random_case(&r, 32);

		t.init = 0;
		run_s8(&r, &t, 1);
	}
}
END_TEST

/* A known result, so the reference itself is pinned down: all -128, k = 40: 40 * 16384. */
START_TEST(test_s8_known)
{
	static int8_t a[2 * 512], b[2 * 512];
	int32_t c[256];

	memset(a, 0x80, sizeof a);
	memset(b, 0x80, sizeof b);
	ck_assert_int_eq(dv_mmad_s8_path(DV_CUBE_REF, a, b, c, 1, 2, 1, 40, 1), 0);
	for (int p = 0; p < DV_CUBE_NPATHS; p++) {
		if (dv_mmad_s8_path((enum dv_cube_path)p, a, b, c, 1, 2, 1, 40, 1))
			continue;
		for (int i = 0; i < 256; i++)
			CHECK(c[i] == 40 * 16384, "path %d: C[%d] = %d", p, i, (int)c[i]);
	}
}
END_TEST

static Suite *cube_suite(void)
{
	Suite *s = suite_create("cube_simd");
	TCase *tc = tcase_create("cube_simd");

	tcase_set_timeout(tc, 300); /* sanitizer builds are slow */
	tcase_add_test(tc, test_f32_random);
	tcase_add_test(tc, test_f32_every_k);
	tcase_add_test(tc, test_f32_padding_ignored);
	tcase_add_test(tc, test_f32_special);
	tcase_add_test(tc, test_f32_nan_payload);
	tcase_add_test(tc, test_f32_order);
	tcase_add_test(tc, test_f16_random);
	tcase_add_test(tc, test_f16_nan_payload);
	tcase_add_test(tc, test_s8_random);
	tcase_add_test(tc, test_s8_wrap);
	tcase_add_test(tc, test_s8_known);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cube_suite());
	int failed;

	for (int p = 0; p < DV_CUBE_NPATHS; p++) {
		static const int8_t a[512], b[512];
		int32_t c[256];

		printf("cube path %d: fp32 %s, int8 %s\n", p,
		       dv_cube_path_available((enum dv_cube_path)p) ? "tested" : "not available",
		       dv_mmad_s8_path((enum dv_cube_path)p, a, b, c, 1, 1, 1, 32, 1) ? "none"
										 : "tested");
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
