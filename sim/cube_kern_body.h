/* cube_kern_body.h: the fp32 vector MMAD kernel, included by cube_kern.c once per instruction
 * set (C has no templates).  The includer defines:
 *   KERN_F32   the function's name
 *   KERN_ATTR  its target attribute (or nothing)
 *   KERN_R     rows of C kept in registers
 *   VF         a vector of L floats (L divides 16)
 * and may define
 *   KERN_MADD(acc, a, b)  acc + a * b for a vector acc and b and a float a (default: a
 *              multiply and an add; a fused multiply-add only for exact products, fp16's)
 * and this file undefines them again.
 *
 * For each 16x16 C fractal, R rows at a time: the rows' accumulators (16 / L vectors each)
 * stay in registers over the whole K loop, and every B row loaded serves R rows.  Per element
 * of C the products are added in the reference's order (K fractal by K fractal, each in k
 * order); only the work across columns n is done side by side.
 *
 * The loops over rows and vectors are unrolled completely (up to 16 each), so the accumulators
 * live in registers, not in a stack array.
 *
 * Loads and stores go through memcpy, one vector at a time (a memcpy of a whole array keeps
 * the array in memory): C need only be 4-byte aligned (L0C addresses are 64-byte aligned, but
 * the kernel does not rely on it), and the compiler emits plain unaligned vector moves. */

#ifndef KERN_MADD
#define KERN_MADD(acc, a, b) ((acc) + (a) * (b))
#endif
#define KERN_L ((int)(sizeof(VF) / sizeof(float)))
#define KERN_NV (16 / KERN_L) /* vectors per row of C */
#define KERN_CAT2(a, b) a##b
#define KERN_CAT(a, b) KERN_CAT2(a, b)
#define KERN_ROWS KERN_CAT(KERN_F32, _rows)

/* Rows m0..m0+R-1 of one C fractal (crow: row m0); af: row m0 of the first A fractal of the
 * row of fractals, bf: the first B fractal of the column, bstride: floats from one to the
 * next. */
KERN_ATTR static inline __attribute__((always_inline)) void
KERN_ROWS(const float *af, const float *bf, int64_t bstride, unsigned char *crow, int64_t K1,
	  int64_t k, int init)
{
	VF acc[KERN_R][KERN_NV];

	_Pragma("GCC unroll 16")
	for (int r = 0; r < KERN_R; r++)
		_Pragma("GCC unroll 16")
		for (int v = 0; v < KERN_NV; v++) {
			if (init)
				acc[r][v] = (VF){0};
			else
				memcpy(&acc[r][v], crow + r * 64 + v * sizeof(VF), sizeof(VF));
		}
	for (int64_t k1 = 0; k1 < K1; k1++, af += F32_FR, bf += bstride) {
		int64_t kn = min64(k - k1 * 16, 16);
		for (int64_t kk = 0; kk < kn; kk++) {
			VF brow[KERN_NV];
			_Pragma("GCC unroll 16")
			for (int v = 0; v < KERN_NV; v++)
				memcpy(&brow[v], bf + kk * 16 + v * KERN_L, sizeof(VF));
			_Pragma("GCC unroll 16")
			for (int r = 0; r < KERN_R; r++) {
				/* a scalar operand is broadcast exactly (-0, NaN bits) */
				float av = af[r * 16 + kk];
				_Pragma("GCC unroll 16")
				for (int v = 0; v < KERN_NV; v++)
					acc[r][v] = KERN_MADD(acc[r][v], av, brow[v]);
			}
		}
	}
	_Pragma("GCC unroll 16")
	for (int r = 0; r < KERN_R; r++)
		_Pragma("GCC unroll 16")
		for (int v = 0; v < KERN_NV; v++)
			memcpy(crow + r * 64 + v * sizeof(VF), &acc[r][v], sizeof(VF));
}

KERN_ATTR static void KERN_F32(const float *a, const float *b, unsigned char *c, int64_t M1,
			       int64_t K1, int64_t N1, int64_t k, int init)
{
	for (int64_t n1 = 0; n1 < N1; n1++)
		for (int64_t m1 = 0; m1 < M1; m1++)
			for (int m0 = 0; m0 < 16; m0 += KERN_R)
				KERN_ROWS(a + m1 * K1 * F32_FR + m0 * 16, b + n1 * F32_FR,
					  N1 * F32_FR, c + (n1 * M1 + m1) * C_FR + m0 * 64, K1, k,
					  init);
}

#undef KERN_MADD
#undef KERN_L
#undef KERN_NV
#undef KERN_CAT2
#undef KERN_CAT
#undef KERN_ROWS
#undef KERN_F32
#undef KERN_ATTR
#undef KERN_R
#undef VF
