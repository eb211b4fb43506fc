/* cube_kern.h: the cube's MMAD arithmetic on whole fractals (internal to sim/ and its tests).
 *
 * Layouts as in exec_cube.c: A [M1][K1][16][k0], B [K1][N1][k0][16], C [N1][M1][16][16],
 * k0 = 16 for fp32 operands (fp16 already widened, which is exact) and 32 for int8.  Only the
 * first k columns of A / rows of B take part.  init: C = A x B, else C += A x B.
 *
 * Every path gives the same bits as the scalar reference: each C element sums its products in
 * k order, one rounding for the product (exact anyway: fp16 x fp16 fits in fp32) and one for
 * the add, never a fused multiply-add on fp32 operands (this library is built with
 * -ffp-contract=off); the fp16 entry points may fuse, as their products are exact.  Int8
 * products accumulate in int32 with wrap-around, which no order changes.  The one thing the
 * host decides is which payload a NaN result carries when two NaNs meet (x86 keeps the first
 * operand's, and the compiler orders commutative operands as it likes). */
#ifndef DV_CUBE_KERN_H
#define DV_CUBE_KERN_H

#include <stdint.h>

/* The implementations; a test asks for each one by name. */
enum dv_cube_path {
	DV_CUBE_REF = 0, /* scalar loops: the reference */
	DV_CUBE_VEC,     /* GCC vector extensions, the build's baseline instruction set (fp32
			  * only: a generic int32 kernel lacks a 32-bit vector multiply on SSE2
			  * and loses to the reference, which GCC vectorises with widening
			  * multiplies) */
	DV_CUBE_AVX2,    /* the fp32 kernel compiled for AVX2; int8 with VPMADDWD (x86 only) */
	DV_CUBE_AVX512,  /* the fp32 kernel compiled for AVX-512F (x86 only; int8: none, the
			  * dispatcher runs AVX2's, which AVX-512 machines have) */
	DV_CUBE_NPATHS
};

/* Whether this build and CPU can run path p. */
int dv_cube_path_available(enum dv_cube_path p);

/* c: N1 * M1 fractals of 16x16 fp32; a and b as above.  c may be unaligned.  Returns -1 (and
 * does nothing) if p is not available, else 0. */
int dv_mmad_f32_path(enum dv_cube_path p, const float *a, const float *b, void *c, int64_t M1,
		     int64_t K1, int64_t N1, int64_t k, int init);
/* c: N1 * M1 fractals of 16x16 int32.  Returns -1 for DV_CUBE_VEC and DV_CUBE_AVX512. */
int dv_mmad_s8_path(enum dv_cube_path p, const int8_t *a, const int8_t *b, void *c, int64_t M1,
		    int64_t K1, int64_t N1, int64_t k, int init);

/* fp16 operands: a M1 * K1 and b K1 * N1 fractals of 16x16 fp16 (any alignment), C as for
 * fp32; the bits of widening both exactly and running the fp32 path p.  fa and fb: scratch for
 * the widened operands, M1 * K1 * 256 and K1 * N1 * 256 floats.  DV_CUBE_AVX512 widens as it
 * goes (B a row at a time, A a row of fractals at a time, into fa).  Returns -1 if p is not
 * available, else 0. */
int dv_mmad_f16_path(enum dv_cube_path p, const void *a, const void *b, void *c, int64_t M1,
		     int64_t K1, int64_t N1, int64_t k, int init, float *fa, float *fb);

/* The fastest path the CPU has (what the simulator runs). */
void dv_mmad_f16(const void *a, const void *b, void *c, int64_t M1, int64_t K1, int64_t N1,
		 int64_t k, int init, float *fa, float *fb);
void dv_mmad_f32(const float *a, const float *b, void *c, int64_t M1, int64_t K1, int64_t N1,
		 int64_t k, int init);
void dv_mmad_s8(const int8_t *a, const int8_t *b, void *c, int64_t M1, int64_t K1, int64_t N1,
		int64_t k, int init);

#endif
