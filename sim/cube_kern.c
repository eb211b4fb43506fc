/* cube_kern.c: the cube's MMAD arithmetic; see cube_kern.h.
 *
 * The reference is the plain triple loop.  The fast paths (cube_kern_body.h) vectorise across
 * the 16 output columns n of a C fractal and keep, for every element, the reference's order of
 * k; they keep a block of rows of C in registers for the whole K loop.
 *
 * Multiply and add stay separate operations: the library's -ffp-contract=off keeps the
 * compiler from fusing them in the reference or in a kernel (a build for a target with FMA
 * could otherwise round differently from the baseline build).  The one exception is chosen,
 * not left to the compiler: the fp16 kernel for AVX-512 (mmad_f16_avx512) uses fused
 * multiply-adds, because a product of two fp16 values is exact in fp32 (11 x 11 significant
 * bits, magnitudes from 2^-48 to under 2^32), so rounding a*b + c once is rounding the exact
 * product plus c, as the separate add does; infinities and NaNs come out alike, and only which
 * NaN payload wins when two NaNs meet is the host's choice, as it is for every path. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cube_kern.h"
#include "fp16.h"

#include <string.h>

/* Only x86 has AVX2, and only GCC-compatible compilers the target attribute. */
#if defined(HAVE_AVX2_TARGET) && (defined(__x86_64__) || defined(__i386__))
#define DV_CUBE_HAVE_AVX2 1
#include <immintrin.h>
#endif

#define F32_FR 256 /* elements in an fp32 operand fractal (16 x 16) */
#define S8_FR 512  /* bytes in an int8 operand fractal (16 x 32) */
#define C_FR 1024  /* bytes in a C fractal (16 x 16 x 4) */
#define F16_FR 512 /* bytes in an fp16 operand fractal (16 x 16) */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- the reference: plain loops, the definition of the results ---- */

static void mmad_f32_ref(const float *a, const float *b, unsigned char *c, int64_t M1,
			 int64_t K1, int64_t N1, int64_t k, int init)
{
	for (int64_t n1 = 0; n1 < N1; n1++)
		for (int64_t m1 = 0; m1 < M1; m1++) {
			float acc[16][16];
			unsigned char *out = c + (n1 * M1 + m1) * C_FR;
			if (init)
				memset(acc, 0, sizeof acc);
			else
				memcpy(acc, out, sizeof acc);
			for (int64_t k1 = 0; k1 < K1; k1++) {
				const float *af = a + (m1 * K1 + k1) * F32_FR;
				const float *bf = b + (k1 * N1 + n1) * F32_FR;
				int64_t kn = min64(k - k1 * 16, 16);
				for (int m = 0; m < 16; m++)
					for (int64_t kk = 0; kk < kn; kk++) {
						float av = af[m * 16 + kk];
						const float *brow = bf + kk * 16;
						for (int n = 0; n < 16; n++)
							acc[m][n] += av * brow[n];
					}
			}
			memcpy(out, acc, sizeof acc);
		}
}

static void mmad_s8_ref(const int8_t *a, const int8_t *b, unsigned char *c, int64_t M1,
			int64_t K1, int64_t N1, int64_t k, int init)
{
	for (int64_t n1 = 0; n1 < N1; n1++)
		for (int64_t m1 = 0; m1 < M1; m1++) {
			int32_t acc[16][16];
			unsigned char *out = c + (n1 * M1 + m1) * C_FR;
			if (init)
				memset(acc, 0, sizeof acc);
			else
				memcpy(acc, out, sizeof acc);
			for (int64_t k1 = 0; k1 < K1; k1++) {
				const int8_t *af = a + (m1 * K1 + k1) * S8_FR;
				const int8_t *bf = b + (k1 * N1 + n1) * S8_FR;
				int64_t kn = min64(k - k1 * 32, 32);
				for (int m = 0; m < 16; m++)
					for (int64_t kk = 0; kk < kn; kk++) {
						int32_t av = af[m * 32 + kk];
						const int8_t *brow = bf + kk * 16;
						for (int n = 0; n < 16; n++) /* wraps like hardware */
							acc[m][n] = (int32_t)((uint32_t)acc[m][n] +
									      (uint32_t)(av * brow[n]));
					}
			}
			memcpy(out, acc, sizeof acc);
		}
}

/* ---- the vector kernels: cube_kern_body.h, once per instruction set ----
 * Each build gets the vector width its registers hold: 32-byte vectors split into pairs of
 * SSE registers are lowered badly (broadcasts through the stack, spills), so the baseline
 * uses 16-byte vectors and the AVX2 build 32-byte ones. */

typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));

/* Baseline: 2 rows x 4 vectors = 8 of the 16 SSE registers, 4 more for a B row. */
#define KERN_F32 mmad_f32_vec
#define KERN_ATTR
#define KERN_R 2
#define VF v4f
#include "cube_kern_body.h"

#ifdef DV_CUBE_HAVE_AVX2
/* AVX2 without FMA: the target adds wider registers, not a different rounding.  4 rows x 2
 * vectors = 8 of the 16 registers, 2 more for a B row.  int8 has its own kernel below. */
#define KERN_F32 mmad_f32_avx2
#define KERN_ATTR __attribute__((target("avx2")))
#define KERN_R 4
#define VF v8f
#include "cube_kern_body.h"

/* The same for fp16 operands only (widened first): their products are exact, so a fused
 * multiply-add gives the bits of the multiply and add above (see the top of this file), one
 * instruction for two.  For AVX2 hosts without AVX-512; every AVX2 CPU has FMA, but it is
 * asked for anyway. */
#define KERN_F32 mmad_f32_avx2fma
#define KERN_ATTR __attribute__((target("avx2,fma")))
#define KERN_R 4
#define VF v8f
#define KERN_MADD(acc, a, b) ((VF)_mm256_fmadd_ps(_mm256_set1_ps(a), (__m256)(b), (__m256)(acc)))
#include "cube_kern_body.h"

/* AVX-512F without FMA: a whole row of C is one 64-byte vector, twice the columns per
 * instruction of AVX2, same rounding.  All 16 rows of a C fractal = 16 of the 32 registers, 1
 * more for a B row: each B row loaded then serves the whole fractal (8 rows ran at 0.85x of
 * this on the AMD EPYC the simulator was measured on, 2 x 256-bit AVX2 at 0.55x).
 * A compiler that has target("avx2") (GCC 4.9+, clang) has target("avx512f") too. */
#define KERN_F32 mmad_f32_avx512
#define KERN_ATTR __attribute__((target("avx512f")))
#define KERN_R 16
#define VF v16f
#include "cube_kern_body.h"

/* fp16 operands on AVX-512F: B rows are widened as they are loaded (VCVTPH2PS, the
 * conversion dv_f16_to_f32_n runs), A one row of fractals at a time into scratch, and each
 * product is added with a fused multiply-add (exact products: see the top of this file).  Per
 * C element the same products are added in the same order: the bits of the reference on
 * widened operands.  The separate multiply and add of mmad_f32_avx512 are two instructions
 * where this is one, and the cube kernel is bound by them: a full ResNet-50 run on the
 * Ascend910 went from 347 to 281 ms of CPU.  Each B row is converted once per row of A
 * fractals (one instruction against the 16 FMAs it serves) rather than once into scratch. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
f16b_rows_avx512(const float *af, const unsigned char *bf, int64_t bstride, unsigned char *crow,
		 int64_t K1, int64_t k, int init)
{
	__m512 acc[16];

	_Pragma("GCC unroll 16")
	for (int r = 0; r < 16; r++)
		acc[r] = init ? _mm512_setzero_ps() : _mm512_loadu_ps(crow + r * 64);
	for (int64_t k1 = 0; k1 < K1; k1++, af += F32_FR, bf += bstride) {
		int64_t kn = min64(k - k1 * 16, 16);
		for (int64_t kk = 0; kk < kn; kk++) {
			__m512 brow = _mm512_cvtph_ps(
				_mm256_loadu_si256((const void *)(bf + kk * 32)));
			_Pragma("GCC unroll 16")
			for (int r = 0; r < 16; r++)
				acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(af[r * 16 + kk]), brow,
							 acc[r]);
		}
	}
	_Pragma("GCC unroll 16")
	for (int r = 0; r < 16; r++)
		_mm512_storeu_ps(crow + r * 64, acc[r]);
}

__attribute__((target("avx512f"))) static void mmad_f16_avx512(const unsigned char *a,
								const unsigned char *b,
								unsigned char *c, int64_t M1,
								int64_t K1, int64_t N1, int64_t k,
								int init, float *fa)
{
	for (int64_t m1 = 0; m1 < M1; m1++) {
		dv_f16_to_f32_n(a + m1 * K1 * F16_FR, fa, (size_t)(K1 * F32_FR));
		for (int64_t n1 = 0; n1 < N1; n1++)
			f16b_rows_avx512(fa, b + n1 * F16_FR, N1 * F16_FR,
					 c + (n1 * M1 + m1) * C_FR, K1, k, init);
	}
}

/* int8 with VPMADDWD: two k steps per instruction, each int32 lane getting
 * a[k] * b[k][n] + a[k+1] * b[k+1][n] from int16 pairs.  Both products are at most 2^14 in
 * magnitude, so the pair sum is exact, and adding it to the wrapping int32 accumulator gives
 * the reference's bits (wrapping addition does not care about grouping).  An odd last k pairs
 * with a zero from A, so the B row past it (inside the fractal, maybe garbage) adds 0. */
/* Rows m0..m0+3 of one C fractal (crow: row m0); af: row m0 of the first A fractal of the row
 * of fractals, bf: the first B fractal of the column, bstride: bytes from one to the next. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
s8_rows_avx2(const int8_t *af, const int8_t *bf, int64_t bstride, unsigned char *crow,
	     int64_t K1, int64_t k, int init)
{
	__m256i acc[4][2];

	for (int r = 0; r < 4; r++)
		for (int v = 0; v < 2; v++) {
			const void *p = crow + r * 64 + v * 32;
			acc[r][v] = init ? _mm256_setzero_si256() : _mm256_loadu_si256(p);
		}
	for (int64_t k1 = 0; k1 < K1; k1++, af += S8_FR, bf += bstride) {
		int64_t kn = min64(k - k1 * 32, 32);
		for (int64_t kk = 0; kk < kn; kk += 2) {
			int two = kk + 1 < kn;
			/* rows kk and kk + 1 of B (at most row 31: inside the fractal) */
			__m128i b0 = _mm_loadu_si128((const void *)(bf + kk * 16));
			__m128i b1 = _mm_loadu_si128((const void *)(bf + kk * 16 + 16));
			/* (b[kk][n], b[kk+1][n]) as int16 pairs, n 0-7 and 8-15 */
			__m256i blo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(b0, b1));
			__m256i bhi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(b0, b1));
			for (int r = 0; r < 4; r++) {
				uint32_t a0 = (uint16_t)af[r * 32 + kk];
				uint32_t a1 = two ? (uint16_t)af[r * 32 + kk + 1] : 0;
				__m256i ap = _mm256_set1_epi32((int)(a0 | a1 << 16));
				acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(ap, blo));
				acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(ap, bhi));
			}
		}
	}
	for (int r = 0; r < 4; r++)
		for (int v = 0; v < 2; v++)
			_mm256_storeu_si256((void *)(crow + r * 64 + v * 32), acc[r][v]);
}

__attribute__((target("avx2"))) static void mmad_s8_avx2(const int8_t *a, const int8_t *b,
							  unsigned char *c, int64_t M1,
							  int64_t K1, int64_t N1, int64_t k,
							  int init)
{
	for (int64_t n1 = 0; n1 < N1; n1++)
		for (int64_t m1 = 0; m1 < M1; m1++)
			for (int m0 = 0; m0 < 16; m0 += 4)
				s8_rows_avx2(a + m1 * K1 * S8_FR + m0 * 32, b + n1 * S8_FR,
					     N1 * S8_FR, c + (n1 * M1 + m1) * C_FR + m0 * 64, K1,
					     k, init);
}
#endif

int dv_cube_path_available(enum dv_cube_path p)
{
	switch (p) {
	case DV_CUBE_REF:
	case DV_CUBE_VEC:
		return 1;
	case DV_CUBE_AVX2:
#ifdef DV_CUBE_HAVE_AVX2
		/* Asked per call, not cached: it reads a word libgcc filled in at startup. */
		return __builtin_cpu_supports("avx2") != 0;
#else
		return 0;
#endif
	case DV_CUBE_AVX512:
#ifdef DV_CUBE_HAVE_AVX2
		return __builtin_cpu_supports("avx512f") != 0;
#else
		return 0;
#endif
	case DV_CUBE_NPATHS:
		break;
	}
	return 0;
}

int dv_mmad_f32_path(enum dv_cube_path p, const float *a, const float *b, void *c, int64_t M1,
		     int64_t K1, int64_t N1, int64_t k, int init)
{
	if (!dv_cube_path_available(p))
		return -1;
	switch (p) {
	case DV_CUBE_REF:
		mmad_f32_ref(a, b, c, M1, K1, N1, k, init);
		break;
	case DV_CUBE_VEC:
		mmad_f32_vec(a, b, c, M1, K1, N1, k, init);
		break;
	case DV_CUBE_AVX2:
#ifdef DV_CUBE_HAVE_AVX2
		mmad_f32_avx2(a, b, c, M1, K1, N1, k, init);
#endif
		break;
	case DV_CUBE_AVX512:
#ifdef DV_CUBE_HAVE_AVX2
		mmad_f32_avx512(a, b, c, M1, K1, N1, k, init);
#endif
		break;
	case DV_CUBE_NPATHS:
		return -1;
	}
	return 0;
}

int dv_mmad_s8_path(enum dv_cube_path p, const int8_t *a, const int8_t *b, void *c, int64_t M1,
		    int64_t K1, int64_t N1, int64_t k, int init)
{
	if (!dv_cube_path_available(p))
		return -1;
	switch (p) {
	case DV_CUBE_REF:
		mmad_s8_ref(a, b, c, M1, K1, N1, k, init);
		break;
	case DV_CUBE_VEC: /* no such kernel: see cube_kern.h */
	case DV_CUBE_AVX512:
		return -1;
	case DV_CUBE_AVX2:
#ifdef DV_CUBE_HAVE_AVX2
		mmad_s8_avx2(a, b, c, M1, K1, N1, k, init);
#endif
		break;
	case DV_CUBE_NPATHS:
		return -1;
	}
	return 0;
}

/* Widen both operands into the scratch, then the fp32 path p (DV_CUBE_NPATHS: the fastest);
 * on AVX2 with FMA, its kernel with fused multiply-adds. */
static void mmad_f16_widened(enum dv_cube_path p, const void *a, const void *b, void *c,
			     int64_t M1, int64_t K1, int64_t N1, int64_t k, int init, float *fa,
			     float *fb)
{
	dv_f16_to_f32_n(a, fa, (size_t)(M1 * K1 * F32_FR));
	dv_f16_to_f32_n(b, fb, (size_t)(K1 * N1 * F32_FR));
#ifdef DV_CUBE_HAVE_AVX2
	if ((p == DV_CUBE_AVX2 || (p == DV_CUBE_NPATHS && __builtin_cpu_supports("avx2"))) &&
	    __builtin_cpu_supports("fma")) {
		mmad_f32_avx2fma(fa, fb, c, M1, K1, N1, k, init);
		return;
	}
#endif
	if (p == DV_CUBE_NPATHS)
		dv_mmad_f32(fa, fb, c, M1, K1, N1, k, init);
	else
		dv_mmad_f32_path(p, fa, fb, c, M1, K1, N1, k, init);
}

int dv_mmad_f16_path(enum dv_cube_path p, const void *a, const void *b, void *c, int64_t M1,
		     int64_t K1, int64_t N1, int64_t k, int init, float *fa, float *fb)
{
	if (p == DV_CUBE_NPATHS || !dv_cube_path_available(p))
		return -1;
#ifdef DV_CUBE_HAVE_AVX2
	if (p == DV_CUBE_AVX512) {
		mmad_f16_avx512(a, b, c, M1, K1, N1, k, init, fa);
		return 0;
	}
#endif
	mmad_f16_widened(p, a, b, c, M1, K1, N1, k, init, fa, fb);
	return 0;
}

void dv_mmad_f16(const void *a, const void *b, void *c, int64_t M1, int64_t K1, int64_t N1,
		 int64_t k, int init, float *fa, float *fb)
{
#ifdef DV_CUBE_HAVE_AVX2
	if (__builtin_cpu_supports("avx512f")) {
		mmad_f16_avx512(a, b, c, M1, K1, N1, k, init, fa);
		return;
	}
#endif
	mmad_f16_widened(DV_CUBE_NPATHS, a, b, c, M1, K1, N1, k, init, fa, fb);
}

void dv_mmad_f32(const float *a, const float *b, void *c, int64_t M1, int64_t K1, int64_t N1,
		 int64_t k, int init)
{
#ifdef DV_CUBE_HAVE_AVX2
	if (__builtin_cpu_supports("avx512f")) {
		mmad_f32_avx512(a, b, c, M1, K1, N1, k, init);
		return;
	}
	if (__builtin_cpu_supports("avx2")) {
		mmad_f32_avx2(a, b, c, M1, K1, N1, k, init);
		return;
	}
#endif
	mmad_f32_vec(a, b, c, M1, K1, N1, k, init);
}

void dv_mmad_s8(const int8_t *a, const int8_t *b, void *c, int64_t M1, int64_t K1, int64_t N1,
		int64_t k, int init)
{
#ifdef DV_CUBE_HAVE_AVX2
	if (__builtin_cpu_supports("avx2")) {
		mmad_s8_avx2(a, b, c, M1, K1, N1, k, init);
		return;
	}
#endif
	mmad_s8_ref(a, b, c, M1, K1, N1, k, init);
}
