/* vec_fma.c: see vec_fma.h.
 *
 * Any fused multiply-add rounds a finite or infinite result the same (one rounding of the exact
 * a * b + d), so only a NaN's payload could tell two implementations apart: an x86 FMA
 * instruction returns the first NaN among its operands in encoding order.  glibc's fmaf, on a
 * CPU with FMA and AVX2 (its condition for using the instruction), is one VFMADD213SS with x,
 * y, z as operands 1, 2, 3 (x = y * x + z); the packed VFMADD213PS with the same operands gives
 * each lane that instruction's result.  The operands are placed by inline assembly, since a
 * compiler may pick any of the 132/213/231 forms for an intrinsic.  Elsewhere (no FMA, another
 * architecture) the lanes go through fmaf itself.  So when NaNs meet, src0's wins, then src1's,
 * then dst's, where the plain fmaf loop gave whichever operand the compiler passed first. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "vec_fma.h"

#include <math.h>

#if defined(HAVE_AVX2_TARGET) && defined(__x86_64__)
#define DV_VEC_FMA_X86 1
#include <immintrin.h>
#endif

/* fmaf with its operands in this order: called directly, GCC may swap a and b (they commute
 * but for a NaN's payload), so the call goes through a pointer the compiler cannot see. */
static float (*volatile const fmaf_fn)(float, float, float) = fmaf;

static void fmaf_lanes(const float *a, const float *b, float *d, unsigned i, unsigned n)
{
	float (*f)(float, float, float) = fmaf_fn;

	for (; i < n; i++)
		d[i] = f(a[i], b[i], d[i]);
}

#ifdef DV_VEC_FMA_X86
__attribute__((target("avx512f"))) static void fma_avx512(const float *a, const float *b,
							   float *d, unsigned n)
{
	unsigned i = 0;

	for (; i + 16 <= n; i += 16) {
		__m512 x = _mm512_loadu_ps(a + i), y = _mm512_loadu_ps(b + i);
		__m512 z = _mm512_loadu_ps(d + i);

		__asm__("vfmadd213ps %3, %2, %0" : "=v"(x) : "0"(x), "v"(y), "v"(z));
		_mm512_storeu_ps(d + i, x);
	}
	fmaf_lanes(a, b, d, i, n);
}

__attribute__((target("avx2,fma"))) static void fma_avx2(const float *a, const float *b,
							  float *d, unsigned n)
{
	unsigned i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 x = _mm256_loadu_ps(a + i), y = _mm256_loadu_ps(b + i);
		__m256 z = _mm256_loadu_ps(d + i);

		__asm__("vfmadd213ps %3, %2, %0" : "=x"(x) : "0"(x), "x"(y), "x"(z));
		_mm256_storeu_ps(d + i, x);
	}
	fmaf_lanes(a, b, d, i, n);
}
#endif

int dv_fmaf_n_path(enum dv_fma_path p, const float *a, const float *b, float *d, unsigned n)
{
	switch (p) {
	case DV_FMA_LIBM:
		fmaf_lanes(a, b, d, 0, n);
		return 0;
#ifdef DV_VEC_FMA_X86
	/* both need FMA and AVX2: glibc's condition for its fmaf to be the instruction */
	case DV_FMA_AVX2:
		if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2"))
			return -1;
		fma_avx2(a, b, d, n);
		return 0;
	case DV_FMA_AVX512:
		if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2") ||
		    !__builtin_cpu_supports("avx512f"))
			return -1;
		fma_avx512(a, b, d, n);
		return 0;
#else
	case DV_FMA_AVX2:
	case DV_FMA_AVX512:
		return -1;
#endif
	}
	return -1;
}

void dv_fmaf_n(const float *a, const float *b, float *d, unsigned n)
{
	/* the widest path the host has (asked per call, not cached: __builtin_cpu_supports reads
	 * a word libgcc filled in at startup) */
	if (dv_fmaf_n_path(DV_FMA_AVX512, a, b, d, n) && dv_fmaf_n_path(DV_FMA_AVX2, a, b, d, n))
		fmaf_lanes(a, b, d, 0, n);
}
