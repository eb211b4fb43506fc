/* fp16.c: IEEE binary16 numerics; see fp16.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fp16.h"

#include <string.h>

/* F16C exists only on x86; a config.h from another host must not pull in <immintrin.h>.  Clang
 * before 16 rejects __builtin_cpu_supports("f16c"), so clang gets the (identical) scalar path. */
#if defined(HAVE_F16C_TARGET) && (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__)
#define DV_USE_F16C 1
#include <immintrin.h>
#endif

/* memcpy is the defined way to reinterpret bits; compilers turn it into a register move. */
static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

float dv_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;

	if (exp == 0x1f) /* inf, or NaN: payload to the top of the fraction, quiet bit set */
		return bits_f32(sign | 0x7f800000 | (man ? 0x400000 | man << 13 : 0));
	if (exp != 0) /* normal: rebias the exponent from 15 to 127 */
		return bits_f32(sign | (exp + 112) << 23 | man << 13);
	if (man == 0)
		return bits_f32(sign);
	/* Subnormal man * 2^-24: shift the leading one up to the implicit bit position (10);
	 * each shift halves the exponent, which starts at that of 2^-14. */
	exp = 113;
	while (!(man & 0x400)) {
		man <<= 1;
		exp--;
	}
	return bits_f32(sign | exp << 23 | (man & 0x3ff) << 13);
}

uint16_t dv_f32_to_f16(float f)
{
	uint32_t x = f32_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t ax = x & 0x7fffffff;

	/* NaN: quiet bit set, top 10 fraction bits kept; exactly what VCVTPS2PH produces. */
	if (ax > 0x7f800000)
		return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
	/* 65520 is halfway between 65504 (max half, odd significand) and 2^16: the tie goes to
	 * the even side, which is infinity.  This also catches infinity itself. */
	if (ax >= 0x477ff000)
		return (uint16_t)(sign | 0x7c00);
	if (ax >= 0x38800000) {
		/* Normal in half (>= 2^-14).  Adding 0xfff plus the lowest kept bit rounds the 13
		 * dropped bits to nearest-even; a carry out of the fraction correctly bumps the
		 * exponent.  Then rebias from 127 to 15 (112 << 23). */
		uint32_t r = ax + 0xfff + ((ax >> 13) & 1);

		return (uint16_t)(sign | (r - 0x38000000) >> 13);
	}
	/* 2^-25 is halfway between 0 and the smallest subnormal 2^-24; the tie goes to 0. */
	if (ax <= 0x33000000)
		return sign;
	/* Subnormal result in units of 2^-24: the full significand m (implicit bit included) is
	 * m * 2^(e-150), i.e. m >> (126 - e) units; e is 102..112 here, so the shift is 14..24.
	 * Rounding up from 0x3ff gives 0x400, which is the bit pattern of the smallest normal. */
	{
		uint32_t e = ax >> 23;
		uint32_t m = (ax & 0x7fffff) | 0x800000;
		uint32_t s = 126 - e;
		uint32_t q = m >> s;
		uint32_t rem = m & ((1u << s) - 1);
		uint32_t half = 1u << (s - 1);

		if (rem > half || (rem == half && (q & 1)))
			q++;
		return (uint16_t)(sign | q);
	}
}

/* The bulk functions take bytes (a UB repeat, an L0A fractal) of any alignment. */
static uint16_t ld16(const unsigned char *p)
{
	uint16_t h;

	memcpy(&h, p, sizeof h);
	return h;
}

static void st16(unsigned char *p, uint16_t h) { memcpy(p, &h, sizeof h); }

#ifdef DV_USE_F16C
__attribute__((target("f16c"))) static void f16_to_f32_f16c(const unsigned char *src, float *dst,
							     size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * i));

		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
	for (; i < n; i++)
		dst[i] = dv_f16_to_f32(ld16(src + 2 * i));
}

/* The same conversion 16 at a time (VCVTPH2PS on 512-bit registers gives the bits the 256-bit
 * one does); the cube widens every fp16 operand of an MMAD, 6% of a full ResNet-50 run. */
__attribute__((target("avx512f"))) static void f16_to_f32_avx512(const unsigned char *src,
								  float *dst, size_t n)
{
	size_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		__m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(src + 2 * i));

		_mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
	}
	for (; i < n; i++)
		dst[i] = dv_f16_to_f32(ld16(src + 2 * i));
}

__attribute__((target("f16c"))) static void f32_to_f16_f16c(const float *src, unsigned char *dst,
							     size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		/* An explicit rounding mode, so a caller's MXCSR setting cannot change results. */
		__m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);

		_mm_storeu_si128((__m128i *)(void *)(dst + 2 * i), h);
	}
	for (; i < n; i++)
		st16(dst + 2 * i, dv_f32_to_f16(src[i]));
}

/* The same 16 at a time (VCVTPS2PH on 512-bit registers, the same explicit rounding and so the
 * same bits): the vector unit narrows every fp16 result repeat, 4% of a full MobileNetV2 run
 * with 8 lanes an instruction. */
__attribute__((target("avx512f"))) static void f32_to_f16_avx512(const float *src,
								  unsigned char *dst, size_t n)
{
	size_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		__m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);

		_mm256_storeu_si256((__m256i *)(void *)(dst + 2 * i), h);
	}
	for (; i < n; i++)
		st16(dst + 2 * i, dv_f32_to_f16(src[i]));
}
#endif

void dv_f16_to_f32_n(const void *src_, float *dst, size_t n)
{
	const unsigned char *src = src_;
	size_t i;

#ifdef DV_USE_F16C
	/* Checked per call rather than cached: it reads a word libgcc filled in at startup. */
	if (__builtin_cpu_supports("avx512f")) {
		f16_to_f32_avx512(src, dst, n);
		return;
	}
	if (__builtin_cpu_supports("f16c")) {
		f16_to_f32_f16c(src, dst, n);
		return;
	}
#endif
	for (i = 0; i < n; i++)
		dst[i] = dv_f16_to_f32(ld16(src + 2 * i));
}

void dv_f32_to_f16_n(const float *src, void *dst_, size_t n)
{
	unsigned char *dst = dst_;
	size_t i;

#ifdef DV_USE_F16C
	if (__builtin_cpu_supports("avx512f")) {
		f32_to_f16_avx512(src, dst, n);
		return;
	}
	if (__builtin_cpu_supports("f16c")) {
		f32_to_f16_f16c(src, dst, n);
		return;
	}
#endif
	for (i = 0; i < n; i++)
		st16(dst + 2 * i, dv_f32_to_f16(src[i]));
}

int32_t dv_f32_to_s32(float x, enum dv_round r)
{
	int32_t t;
	float frac;

	if (x != x)
		return 0;
	/* -2^31 and 2^31 are exact floats; every float strictly between converts in range, and
	 * none of them rounds out of it (the largest below 2^31 is an integer). */
	if (x >= 2147483648.0f)
		return INT32_MAX;
	if (x < -2147483648.0f)
		return INT32_MIN;
	t = (int32_t)x; /* truncates; in range, so defined */
	/* From 2^23 up every float is an integer, so there is nothing to round (and t +- 1 below
	 * cannot overflow). */
	if (x >= 8388608.0f || x <= -8388608.0f)
		return t;
	frac = x - (float)t; /* exact: both are multiples of x's ulp and differ by less than 1 */
	switch (r) {
	case DV_RND_TRUNC:
		return t;
	case DV_RND_FLOOR:
		return frac < 0.0f ? t - 1 : t;
	case DV_RND_CEIL:
		return frac > 0.0f ? t + 1 : t;
	case DV_RND_AWAY:
		if (frac >= 0.5f)
			return t + 1;
		if (frac <= -0.5f)
			return t - 1;
		return t;
	case DV_RND_RNE:
	default:
		/* A tie moves away from t only if t is odd; the neighbour is then even. */
		if (frac > 0.5f || (frac == 0.5f && (t & 1)))
			return t + 1;
		if (frac < -0.5f || (frac == -0.5f && (t & 1)))
			return t - 1;
		return t;
	}
}

int8_t dv_sat_s8(int32_t v)
{
	return (int8_t)(v < INT8_MIN ? INT8_MIN : v > INT8_MAX ? INT8_MAX : v);
}

uint8_t dv_sat_u8(int32_t v)
{
	return (uint8_t)(v < 0 ? 0 : v > UINT8_MAX ? UINT8_MAX : v);
}

int16_t dv_sat_s16(int32_t v)
{
	return (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
}
