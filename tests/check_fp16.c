/* check_fp16.c: tests for sim/fp16.  The reference for fp16 <-> fp32 is GCC's _Float16 (soft-float
 * conversions in libgcc), which shares no code with sim/fp16.c; where the CPU has F16C the
 * scalar code is also compared with the hardware, which defines the NaN results we promise. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fp16.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define TEST_HW_F16C 1
#include <immintrin.h>
#include "float_bits.h"
#endif

/* Floats in the random samples; every bit pattern is equally likely. */
#define NRANDOM 50000000u

/* ck_assert records its location on every call, far too slow for loops of millions; this only
 * calls into Check on failure. */
#define CHECK(cond, ...)                          \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)


static float ref_h2f(uint16_t h)
{
	_Float16 v;

	memcpy(&v, &h, sizeof v);
	return (float)v;
}

static uint16_t ref_f2h(float f)
{
	_Float16 v = (_Float16)f;
	uint16_t h;

	memcpy(&h, &v, sizeof h);
	return h;
}

static int h_isnan(uint16_t h)
{
	return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

/* Equal bit patterns, except that two NaNs only need the same sign: the reference's NaN
 * payload rules are not the ones we promise (those are checked separately). */
static int same_f32(float a, float b)
{
	if (isnan(a) && isnan(b))
		return (f2u(a) >> 31) == (f2u(b) >> 31);
	return f2u(a) == f2u(b);
}

static int same_f16(uint16_t a, uint16_t b)
{
	if (h_isnan(a) && h_isnan(b))
		return (a >> 15) == (b >> 15);
	return a == b;
}

/* The NaN we promise for a float NaN (what F16C's VCVTPS2PH gives). */
static uint16_t nan_f2h(uint32_t x)
{
	return (uint16_t)(((x >> 16) & 0x8000) | 0x7e00 | ((x >> 13) & 0x3ff));
}

/* xorshift32: deterministic, and visits every nonzero 32-bit pattern. */
static uint32_t xorshift32(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

#ifdef TEST_HW_F16C
__attribute__((target("f16c"))) static uint16_t hw_f2h(float f)
{
	return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("f16c"))) static float hw_h2f(uint16_t h)
{
	return _cvtsh_ss(h);
}
#endif

/* Whether the CPU's F16C can serve as a second reference. */
static int have_hw(void)
{
#ifdef TEST_HW_F16C
	return __builtin_cpu_supports("f16c");
#else
	return 0;
#endif
}

/* Check one float: against F16C if `hw` (bit for bit, NaNs included; fast, so the big loops
 * use it on every input), against _Float16 if `soft` (libgcc takes ~70 ns a conversion, so the
 * big loops sample it), and a NaN against the promised payload rule. */
static void check_f2h_with(float f, int hw, int soft)
{
	uint16_t got = dv_f32_to_f16(f);

	(void)hw; /* unused without F16C */
#ifdef TEST_HW_F16C
	if (hw)
		CHECK(got == hw_f2h(f), "dv_f32_to_f16(%a) [%08x] = %04x, F16C %04x", (double)f,
		      f2u(f), got, hw_f2h(f));
#endif
	if (soft)
		CHECK(same_f16(got, ref_f2h(f)), "dv_f32_to_f16(%a) [%08x] = %04x, reference %04x",
		      (double)f, f2u(f), got, ref_f2h(f));
	if (isnan(f))
		CHECK(got == nan_f2h(f2u(f)), "dv_f32_to_f16(NaN %08x) = %04x, want %04x", f2u(f),
		      got, nan_f2h(f2u(f)));
}

static void check_f2h(float f)
{
	check_f2h_with(f, have_hw(), 1);
}

static void check_f2h_both_signs(float f)
{
	check_f2h(f);
	check_f2h(u2f(f2u(f) ^ 0x80000000u));
}

START_TEST(test_f16_to_f32_exhaustive)
{
	uint32_t i;

	for (i = 0; i < 0x10000; i++) {
		uint16_t h = (uint16_t)i;
		float got = dv_f16_to_f32(h), ref = ref_h2f(h);

		CHECK(same_f32(got, ref), "dv_f16_to_f32(%04x) = %08x, reference %08x", h,
		      f2u(got), f2u(ref));
		if (h_isnan(h)) {
			/* quiet, same sign, the 10-bit payload in the top of the fraction */
			uint32_t want = (uint32_t)(h & 0x8000) << 16 | 0x7fc00000;

			want |= (h & 0x3ffu) << 13;

			CHECK(f2u(got) == want, "dv_f16_to_f32(NaN %04x) = %08x, want %08x", h,
			      f2u(got), want);
		}
	}
}
END_TEST

START_TEST(test_round_trip)
{
	uint32_t i;

	for (i = 0; i < 0x10000; i++) {
		uint16_t h = (uint16_t)i, back;

		if (h_isnan(h))
			continue;
		back = dv_f32_to_f16(dv_f16_to_f32(h));
		CHECK(back == h, "round trip of %04x gives %04x", h, back);
		CHECK(f2u(dv_round_f16(dv_f16_to_f32(h))) == f2u(dv_f16_to_f32(h)),
		      "dv_round_f16 changes half %04x", h);
	}
}
END_TEST

/* Every half value, and its float neighbours one ulp either side. */
START_TEST(test_f32_to_f16_halves)
{
	uint32_t i;

	for (i = 0; i < 0x10000; i++) {
		float f = ref_h2f((uint16_t)i);
		uint32_t u = f2u(f);

		check_f2h(f);
		if ((u & 0x7fffffff) != 0)
			check_f2h(u2f(u - 1));
		if ((u & 0x7fffffff) < 0x7f800000)
			check_f2h(u2f(u + 1));
	}
}
END_TEST

/* Exact midpoints between adjacent halves (ties to even) and the floats just either side. */
START_TEST(test_f32_to_f16_ties)
{
	uint32_t h;

	for (h = 0; h < 0x7bff; h++) {
		float lo = ref_h2f((uint16_t)h), hi = ref_h2f((uint16_t)(h + 1));
		float mid = (lo + hi) * 0.5f; /* exact: 12 significant bits at most */
		uint32_t m = f2u(mid);
		uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;

		CHECK(mid > lo && mid < hi, "midpoint of %04x not between", h);
		CHECK(dv_f32_to_f16(mid) == even, "tie %a -> %04x, want %04x", (double)mid,
		      dv_f32_to_f16(mid), even);
		CHECK(dv_f32_to_f16(-mid) == (even | 0x8000), "tie %a -> %04x", (double)-mid,
		      dv_f32_to_f16(-mid));
		CHECK(dv_f32_to_f16(u2f(m - 1)) == h, "below tie %04x", h);
		CHECK(dv_f32_to_f16(u2f(m + 1)) == h + 1, "above tie %04x", h);
		check_f2h_both_signs(mid);
		check_f2h_both_signs(u2f(m - 1));
		check_f2h_both_signs(u2f(m + 1));
	}
	/* between 65504 (odd significand) and the would-be 65536: the tie goes to infinity */
	CHECK(dv_f32_to_f16(65520.0f) == 0x7c00, "65520 -> %04x", dv_f32_to_f16(65520.0f));
	CHECK(dv_f32_to_f16(-65520.0f) == 0xfc00, "-65520 -> %04x", dv_f32_to_f16(-65520.0f));
	CHECK(dv_f32_to_f16(nextafterf(65520.0f, 0.0f)) == 0x7bff, "below 65520");
	/* rounding up out of the subnormals into the smallest normal 2^-14 */
	CHECK(dv_f32_to_f16(ldexpf(2047.0f, -25)) == 0x0400, "tie below 2^-14");
	CHECK(dv_f32_to_f16(nextafterf(ldexpf(2047.0f, -25), 0.0f)) == 0x03ff, "below that");
	/* and down into zero: 2^-25 is the tie between 0 and 2^-24 */
	CHECK(dv_f32_to_f16(ldexpf(1.0f, -25)) == 0x0000, "2^-25");
	CHECK(dv_f32_to_f16(-ldexpf(1.0f, -25)) == 0x8000, "-2^-25");
	CHECK(dv_f32_to_f16(nextafterf(ldexpf(1.0f, -25), 1.0f)) == 0x0001, "above 2^-25");
	CHECK(dv_f32_to_f16(ldexpf(3.0f, -25)) == 0x0002, "3 * 2^-25");
}
END_TEST

/* Every float from 65504 to past 65536, both signs. */
START_TEST(test_f32_to_f16_overflow)
{
	uint32_t u;

	for (u = f2u(65504.0f); u <= f2u(65536.0f) + 0x1000; u++) {
		float f = u2f(u);
		uint16_t want = f < 65520.0f ? 0x7bff : 0x7c00;

		CHECK(dv_f32_to_f16(f) == want, "%a -> %04x, want %04x", (double)f,
		      dv_f32_to_f16(f), want);
		check_f2h_both_signs(f);
	}
	check_f2h_both_signs(INFINITY);
	check_f2h_both_signs(FLT_MAX);
	check_f2h_both_signs(1e10f);
}
END_TEST

/* Every float from 2^-26 to just past 2^-14, i.e. every input that rounds to a subnormal half
 * (or up out of them): positive ones all, negative every 3rd; F16C checks them all, _Float16
 * every 37th.  Then a stride through the float subnormals. */
START_TEST(test_f32_to_f16_subnormal)
{
	int hw = have_hw();
	uint32_t u;

	for (u = f2u(ldexpf(1.0f, -26)); u <= f2u(ldexpf(1.0f, -14)) + 16; u++) {
		float f = u2f(u);

		check_f2h_with(f, hw, u % 37 == 0);
		if (u % 3 == 0)
			check_f2h_with(-f, hw, u % 37 == 3);
	}
	for (u = 0; u < f2u(ldexpf(1.0f, -26)); u += 4099)
		check_f2h_both_signs(u2f(u));
}
END_TEST

/* F16C checks every sample, _Float16 every 10th. */
START_TEST(test_f32_to_f16_random)
{
	int hw = have_hw();
	uint32_t s = 0x2545f491u, i;

	for (i = 0; i < NRANDOM; i++)
		check_f2h_with(u2f(xorshift32(&s)), hw, i % 10 == 0);
	/* all the NaN-payload corners */
	check_f2h(u2f(0x7f800001u));
	check_f2h(u2f(0xff800001u));
	check_f2h(u2f(0x7fc00000u));
	check_f2h(u2f(0x7fffffffu));
	check_f2h(u2f(0x7fbfe000u));
	check_f2h(u2f(0x7f801fffu));
}
END_TEST

START_TEST(test_bulk_halves)
{
	static uint16_t h[0x10000], h2[0x10000];
	static float f[0x10000];
	size_t i, off, n;

	for (i = 0; i < 0x10000; i++)
		h[i] = (uint16_t)i;
	/* whole array; then unaligned starts and lengths that are not multiples of 8 */
	for (off = 0; off < 8; off++) {
		for (n = 0; n <= 40; n++) {
			size_t len = n == 40 ? 0x10000 - off - 5 : n;

			if (off == 0 && n == 0)
				len = 0x10000;

			memset(f, 0, sizeof f);
			dv_f16_to_f32_n(h + off, f + off, len);
			for (i = 0; i < len; i++)
				CHECK(f2u(f[off + i]) == f2u(dv_f16_to_f32(h[off + i])),
				      "bulk f16->f32 of %04x (off %zu len %zu) = %08x", h[off + i],
				      off, len, f2u(f[off + i]));
			CHECK(off + len == 0x10000 || f2u(f[off + len]) == 0, "wrote past end");
			memset(h2, 0, sizeof h2);
			dv_f32_to_f16_n(f + off, h2 + off, len);
			for (i = 0; i < len; i++)
				CHECK(h2[off + i] == dv_f32_to_f16(f[off + i]),
				      "bulk f32->f16 of %08x = %04x", f2u(f[off + i]), h2[off + i]);
			CHECK(off + len == 0x10000 || h2[off + len] == 0, "wrote past end");
		}
	}
}
END_TEST

START_TEST(test_bulk_random)
{
	enum { BUF = 4096 + 16 };
	static float f[BUF], f2[BUF];
	static uint16_t h[BUF];
	uint32_t s = 0x9e3779b9u, done = 0, iter = 0;
	size_t i;

	while (done < NRANDOM) {
		size_t off = iter % 8, len = 4096 - iter % 13;

		for (i = 0; i < len; i++)
			f[off + i] = u2f(xorshift32(&s));
		dv_f32_to_f16_n(f + off, h + off, len);
		for (i = 0; i < len; i++)
			CHECK(h[off + i] == dv_f32_to_f16(f[off + i]),
			      "bulk f32->f16 of %08x = %04x", f2u(f[off + i]), h[off + i]);
		/* and back, over random halves (many of them NaNs with odd payloads) */
		dv_f16_to_f32_n(h + off, f2 + off, len);
		for (i = 0; i < len; i++)
			CHECK(f2u(f2[off + i]) == f2u(dv_f16_to_f32(h[off + i])),
			      "bulk f16->f32 of %04x", h[off + i]);
		done += (uint32_t)len;
		iter++;
	}
}
END_TEST

/* fp16 -> fp32 against the CPU, bit for bit and NaNs included, whatever config.h says (the
 * other direction is compared in check_f2h_with). */
START_TEST(test_f16_to_f32_hardware)
{
#ifdef TEST_HW_F16C
	uint32_t i;

	if (!have_hw())
		return;
	for (i = 0; i < 0x10000; i++) {
		float got = dv_f16_to_f32((uint16_t)i), hw = hw_h2f((uint16_t)i);

		CHECK(f2u(got) == f2u(hw), "f16->f32 %04x: %08x, F16C %08x", i, f2u(got), f2u(hw));
	}
#endif
}
END_TEST

/* Reference rounding, written independently of fp16.c: in double, from floor() alone. */
static double ref_round(double v, enum dv_round r)
{
	double fl = floor(v), d = v - fl;

	switch (r) {
	case DV_RND_TRUNC:
		return v < 0 ? -floor(-v) : fl;
	case DV_RND_FLOOR:
		return fl;
	case DV_RND_CEIL:
		return d > 0 ? fl + 1 : fl;
	case DV_RND_AWAY:
		if (v < 0)
			return -ref_round(-v, r);
		return d >= 0.5 ? fl + 1 : fl;
	case DV_RND_RNE:
	default:
		if (d > 0.5 || (d == 0.5 && fmod(fl, 2.0) != 0))
			return fl + 1;
		return fl;
	}
}

static int64_t ref_sat(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

static int32_t ref_f2s32(float x, enum dv_round r)
{
	if (isnan(x))
		return 0;
	if (isinf(x))
		return x > 0 ? INT32_MAX : INT32_MIN;
	return (int32_t)ref_sat(ref_round(x, r), INT32_MIN, INT32_MAX);
}

START_TEST(test_f32_to_s32_table)
{
	static const struct {
		float x;
		int32_t want[5]; /* RNE, TRUNC, FLOOR, CEIL, AWAY */
	} t[] = {
		{ 0.0f, { 0, 0, 0, 0, 0 } },
		{ -0.0f, { 0, 0, 0, 0, 0 } },
		{ 0.5f, { 0, 0, 0, 1, 1 } },
		{ -0.5f, { 0, 0, -1, 0, -1 } },
		{ 1.5f, { 2, 1, 1, 2, 2 } },
		{ -1.5f, { -2, -1, -2, -1, -2 } },
		{ 2.5f, { 2, 2, 2, 3, 3 } },
		{ -2.5f, { -2, -2, -3, -2, -3 } },
		{ 0.49999997f, { 0, 0, 0, 1, 0 } },
		{ -0.49999997f, { 0, 0, -1, 0, 0 } },
		{ 0.50000006f, { 1, 0, 0, 1, 1 } },
		{ 1.0f, { 1, 1, 1, 1, 1 } },
		{ -1.0f, { -1, -1, -1, -1, -1 } },
		{ 2.75f, { 3, 2, 2, 3, 3 } },
		{ -2.75f, { -3, -2, -3, -2, -3 } },
		{ 1e-45f, { 0, 0, 0, 1, 0 } },
		{ -1e-45f, { 0, 0, -1, 0, 0 } },
		{ 8388607.5f, { 8388608, 8388607, 8388607, 8388608, 8388608 } },
		{ -8388606.5f, { -8388606, -8388606, -8388607, -8388606, -8388607 } },
		{ 8388608.0f, { 8388608, 8388608, 8388608, 8388608, 8388608 } },
		{ 2147483520.0f, { 2147483520, 2147483520, 2147483520, 2147483520, 2147483520 } },
		{ 2147483648.0f, { INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX } },
		{ -2147483648.0f, { INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN } },
		{ -2147483904.0f, { INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN } },
		{ 1e30f, { INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX } },
		{ -1e30f, { INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN } },
		{ INFINITY, { INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX } },
		{ -INFINITY, { INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN } },
		{ NAN, { 0, 0, 0, 0, 0 } },
		{ -NAN, { 0, 0, 0, 0, 0 } },
	};
	size_t i;
	int r;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		for (r = 0; r < 5; r++) {
			int32_t got = dv_f32_to_s32(t[i].x, (enum dv_round)r);

			CHECK(got == t[i].want[r], "dv_f32_to_s32(%a, %d) = %d, want %d",
			      (double)t[i].x, r, got, t[i].want[r]);
			CHECK(got == ref_f2s32(t[i].x, (enum dv_round)r),
			      "reference disagrees at %a", (double)t[i].x);
		}
	}
}
END_TEST

/* Random floats against the reference: half over all bit patterns, half with magnitudes from
 * 2^-4 to 2^33 where all the rounding happens. */
START_TEST(test_f32_to_s32_random)
{
	uint32_t s = 0xdeadbeefu, i, u;
	int r;

	for (i = 0; i < 4000000; i++) {
		u = xorshift32(&s);
		if (i & 1)
			u = (u & 0x807fffffu) | (123u + (u >> 23) % 38u) << 23;
		for (r = 0; r < 5; r++) {
			float x = u2f(u);
			int32_t got = dv_f32_to_s32(x, (enum dv_round)r);
			int32_t ref = ref_f2s32(x, (enum dv_round)r);

			CHECK(got == ref, "dv_f32_to_s32(%a, %d) = %d, want %d", (double)x, r, got,
			      ref);
		}
	}
}
END_TEST

START_TEST(test_saturate)
{
	int64_t v;

	ck_assert_int_eq(dv_sat_s8(INT32_MIN), -128);
	ck_assert_int_eq(dv_sat_s8(-129), -128);
	ck_assert_int_eq(dv_sat_s8(-128), -128);
	ck_assert_int_eq(dv_sat_s8(127), 127);
	ck_assert_int_eq(dv_sat_s8(128), 127);
	ck_assert_int_eq(dv_sat_s8(INT32_MAX), 127);
	ck_assert_int_eq(dv_sat_u8(INT32_MIN), 0);
	ck_assert_int_eq(dv_sat_u8(-1), 0);
	ck_assert_int_eq(dv_sat_u8(255), 255);
	ck_assert_int_eq(dv_sat_u8(256), 255);
	ck_assert_int_eq(dv_sat_u8(INT32_MAX), 255);
	ck_assert_int_eq(dv_sat_s16(INT32_MIN), -32768);
	ck_assert_int_eq(dv_sat_s16(-32769), -32768);
	ck_assert_int_eq(dv_sat_s16(-32768), -32768);
	ck_assert_int_eq(dv_sat_s16(32767), 32767);
	ck_assert_int_eq(dv_sat_s16(32768), 32767);
	ck_assert_int_eq(dv_sat_s16(INT32_MAX), 32767);
	for (v = -70000; v <= 70000; v++) {
		int32_t x = (int32_t)v;

		CHECK(dv_sat_s8(x) == ref_sat((double)v, -128, 127), "s8 %d", x);
		CHECK(dv_sat_u8(x) == ref_sat((double)v, 0, 255), "u8 %d", x);
		CHECK(dv_sat_s16(x) == ref_sat((double)v, -32768, 32767), "s16 %d", x);
	}
}
END_TEST

/* Decode a half into a double from the format's definition (no shared code, no _Float16). */
static double ref_half_value(uint16_t h, int *nan)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	*nan = e == 0x1f && m != 0;
	if (e == 0x1f)
		v = INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(m | 0x400, e - 25);
	return (h & 0x8000) ? -v : v;
}

/* f16 -> int8/uint8/int16 as the vector unit does it: widen, round, saturate. */
START_TEST(test_f16_to_small_ints)
{
	uint32_t i;
	int r, nan;

	for (i = 0; i < 0x10000; i++) {
		double v = ref_half_value((uint16_t)i, &nan);
		float f = dv_f16_to_f32((uint16_t)i);

		CHECK(nan ? isnan(f) : (double)f == v, "half %04x decodes differently", i);
		if (!nan && !isinf(v))
			/* the reference rounding agrees with the C library's in its default mode */
			CHECK(ref_round(v, DV_RND_RNE) == nearbyint(v), "ref_round(%a)", v);
		for (r = 0; r < 5; r++) {
			int32_t s = dv_f32_to_s32(f, (enum dv_round)r);
			double rv = nan ? NAN : ref_round(v, (enum dv_round)r);

			CHECK(dv_sat_s8(s) == ref_sat(rv, -128, 127),
			      "s8 of half %04x mode %d = %d", i, r, dv_sat_s8(s));
			CHECK(dv_sat_u8(s) == ref_sat(rv, 0, 255), "u8 of half %04x mode %d", i, r);
			CHECK(dv_sat_s16(s) == ref_sat(rv, -32768, 32767),
			      "s16 of half %04x mode %d", i, r);
		}
	}
}
END_TEST

static Suite *fp16_suite(void)
{
	Suite *s = suite_create("fp16");
	TCase *tc = tcase_create("fp16");

	/* the sample loops run well past Check's 4 s default under sanitizers */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_f16_to_f32_exhaustive);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_f32_to_f16_halves);
	tcase_add_test(tc, test_f32_to_f16_ties);
	tcase_add_test(tc, test_f32_to_f16_overflow);
	tcase_add_test(tc, test_f32_to_f16_subnormal);
	tcase_add_test(tc, test_f32_to_f16_random);
	tcase_add_test(tc, test_bulk_halves);
	tcase_add_test(tc, test_bulk_random);
	tcase_add_test(tc, test_f16_to_f32_hardware);
	tcase_add_test(tc, test_f32_to_s32_table);
	tcase_add_test(tc, test_f32_to_s32_random);
	tcase_add_test(tc, test_saturate);
	tcase_add_test(tc, test_f16_to_small_ints);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fp16_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
