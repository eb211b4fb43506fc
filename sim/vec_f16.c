/* vec_f16.c: see vec_f16.h.
 *
 * The arithmetic is written as inline assembly with the first source in Intel's SRC1 place:
 * for two NaNs x86 returns SRC1's, and max/min return SRC2 unless SRC1 wins the compare, which
 * is what exec_vec.c's loops (a op b; a > b ? a : b) give.  An intrinsic leaves the order to
 * the compiler, which may commute an add. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "vec_f16.h"

#include <stddef.h>
#include <stdint.h>

#if defined(HAVE_AVX2_TARGET) && defined(HAVE_F16C_TARGET) && defined(__x86_64__) &&      \
	!defined(__clang__)
#define DV_VEC_F16_X86 1
#include <immintrin.h>
#endif

#ifdef DV_VEC_F16_X86

/* One group of lanes: x = op(x, y), with z the old destination (mla).  R is the register
 * constraint ("x" for 256-bit operands, "v" for 512-bit ones). */
#define F16_ADD(R, x, y) __asm__("vaddps %2, %1, %0" : "=" R(x) : R(x), R(y))
#define F16_SUB(R, x, y) __asm__("vsubps %2, %1, %0" : "=" R(x) : R(x), R(y))
#define F16_MUL(R, x, y) __asm__("vmulps %2, %1, %0" : "=" R(x) : R(x), R(y))
#define F16_MAX(R, x, y) __asm__("vmaxps %2, %1, %0" : "=" R(x) : R(x), R(y))
#define F16_MIN(R, x, y) __asm__("vminps %2, %1, %0" : "=" R(x) : R(x), R(y))
/* vec_fma.c's form: x = y * x + z */
#define F16_MLA(R, x, y, z) __asm__("vfmadd213ps %3, %2, %0" : "=" R(x) : "0"(x), R(y), R(z))

/* The loop over rep repeats of 8 blocks of 16 lanes, W lanes at a time, for one operation
 * (BODY uses x, y, z, zero, pd, h): the operation is chosen once, outside it.  LD/ST widen
 * and narrow W lanes at p. */
#define F16_LOOP(W, LD, ST, BODY)                                                           \
	for (uint64_t r = 0; r < rep; r++)                                                  \
		for (unsigned k = 0; k < 8; k++) {                                          \
			const unsigned char *pa = ap + r * ars + k * abs_;                  \
			const unsigned char *pb = bp ? bp + r * brs + k * bbs : NULL;       \
			unsigned char *pd = dp + r * drs + k * dbs;                         \
			for (unsigned h = 0; h < 32; h += 2 * W) {                          \
				x = LD(pa + h);                                             \
				if (pb)                                                     \
					y = LD(pb + h);                                     \
				BODY;                                                       \
				ST(pd + h, x);                                              \
			}                                                                   \
		}

/* The operands' fields in locals: the stores go through unsigned char pointers, which may
 * alias anything, so fields read through a, b, d would be reloaded every block. */
#define F16_LOCALS                                                                          \
	const unsigned char *ap = a->p, *bp = b ? b->p : NULL;                              \
	unsigned char *dp = d->p;                                                           \
	const uint64_t ars = a->rs, abs_ = a->bs, brs = b ? b->rs : 0, bbs = b ? b->bs : 0; \
	const uint64_t drs = d->rs, dbs = d->bs

#define F16_SWITCH(R, W, LD, ST)                                                            \
	switch (op) {                                                                       \
	case DV_F16_ADD: F16_LOOP(W, LD, ST, F16_ADD(R, x, y)) break;                       \
	case DV_F16_SUB: F16_LOOP(W, LD, ST, F16_SUB(R, x, y)) break;                       \
	case DV_F16_MUL: F16_LOOP(W, LD, ST, F16_MUL(R, x, y)) break;                       \
	case DV_F16_MAX: F16_LOOP(W, LD, ST, F16_MAX(R, x, y)) break;                       \
	case DV_F16_MIN: F16_LOOP(W, LD, ST, F16_MIN(R, x, y)) break;                       \
	case DV_F16_MLA: F16_LOOP(W, LD, ST, z = LD(pd + h); F16_MLA(R, x, y, z)) break;    \
	case DV_F16_ADDRELU:                                                                \
		F16_LOOP(W, LD, ST, F16_ADD(R, x, y); F16_MAX(R, x, zero)) break;           \
	case DV_F16_RELU: F16_LOOP(W, LD, ST, F16_MAX(R, x, zero)) break;                   \
	}

#define LD512(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define ST512(p, v)                                                                         \
	_mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT))
#define LD256(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define ST256(p, v)                                                                         \
	_mm_storeu_si128((__m128i *)(void *)(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT))

__attribute__((target("avx512f"))) static void ew_avx512(enum dv_f16_op op, uint64_t rep,
							  const struct dv_f16_opnd *a,
							  const struct dv_f16_opnd *b, const float *bs,
							  const struct dv_f16_opnd *d)
{
	const __m512 zero = _mm512_setzero_ps();
	__m512 x, y = bs ? _mm512_set1_ps(*bs) : zero, z;

	F16_LOCALS;

	F16_SWITCH("v", 16, LD512, ST512)
	(void)z;
}

__attribute__((target("avx2,fma,f16c"))) static void ew_avx2(enum dv_f16_op op, uint64_t rep,
							      const struct dv_f16_opnd *a,
							      const struct dv_f16_opnd *b,
							      const float *bs,
							      const struct dv_f16_opnd *d)
{
	const __m256 zero = _mm256_setzero_ps();
	__m256 x, y = bs ? _mm256_set1_ps(*bs) : zero, z;

	F16_LOCALS;

	F16_SWITCH("x", 8, LD256, ST256)
	(void)z;
}
#endif

int dv_f16_ew_best(void)
{
#ifdef DV_VEC_F16_X86
	/* AVX2 and FMA together: vec_fma.c's condition for the instruction (glibc's for fmaf) */
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
	    !__builtin_cpu_supports("f16c"))
		return 0;
	return __builtin_cpu_supports("avx512f") ? 2 : 1;
#else
	return 0;
#endif
}

int dv_f16_ew_path(int path, enum dv_f16_op op, uint64_t rep, const struct dv_f16_opnd *a,
		   const struct dv_f16_opnd *b, const float *bs, const struct dv_f16_opnd *d)
{
	if ((!b && !bs && op != DV_F16_RELU) || path < 1 || path > dv_f16_ew_best())
		return -1;
#ifdef DV_VEC_F16_X86
	if (path == 2)
		ew_avx512(op, rep, a, b, bs, d);
	else
		ew_avx2(op, rep, a, b, bs, d);
	return 0;
#else
	(void)op, (void)rep, (void)a, (void)b, (void)bs, (void)d;
	return -1;
#endif
}
