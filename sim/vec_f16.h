/* vec_f16.h: the vector unit's common fp16 element-wise operations in one pass (internal to
 * sim/).
 *
 * exec_vec.c's general path widens each fp16 operand of a repeat into a float array, computes,
 * and narrows the result: three calls and three arrays a repeat, 30% of a full-mode
 * MobileNetV2 run.  Here each group of 16 (or 8) lanes is widened, computed and narrowed in
 * registers, over every repeat at once when the operands are one run each.  The bits are the
 * general path's: F16C's exact widening and its narrowing with an explicit round to nearest
 * even, the FMA in vec_fma.c's form, and for two NaNs the first source's payload (x86's rule
 * with the first source first; the general path's add and multiply leave that order to the
 * compiler).  check_vec's test_f16_one_pass checks both widths lane by lane. */
#ifndef DV_VEC_F16_H
#define DV_VEC_F16_H

#include <stdint.h>

enum dv_f16_op {
	DV_F16_ADD,     /* a + b */
	DV_F16_SUB,     /* a - b */
	DV_F16_MUL,     /* a * b */
	DV_F16_MAX,     /* a > b ? a : b */
	DV_F16_MIN,     /* a < b ? a : b */
	DV_F16_MLA,     /* fmaf(a, b, d) */
	DV_F16_ADDRELU, /* a + b, then (> 0 ? it : 0) */
	DV_F16_RELU,    /* a > 0 ? a : 0 (b unused) */
};

/* The widest path this host has: 2 = AVX-512 (16 lanes a step), 1 = AVX2 with FMA and F16C
 * (8), 0 = none (the caller's general path). */
int dv_f16_ew_best(void);

/* One operand: rep repeats of 8 blocks of 16 fp16 lanes (32 bytes, host byte order, any
 * alignment), block k of repeat r at p + r * rs + k * bs. */
struct dv_f16_opnd {
	unsigned char *p;
	uint64_t bs, rs;
};

/* d = op(a, b) lane by lane over rep repeats, computed in float and rounded to fp16 once, by
 * path (dv_f16_ew_best's numbering; every path gives the same bits).  b NULL: *bs is the
 * float every lane of src1 holds (vadds/vmuls/vmaxs/vmins), or nothing for relu.  The blocks
 * are taken in order, repeat by repeat, each read before it is written: the caller makes sure
 * that gives what reading a whole repeat first would (vec_ew: a source laid out exactly as d,
 * or apart from it).  0 if done; -1 (nothing written) if the host lacks the path. */
int dv_f16_ew_path(int path, enum dv_f16_op op, uint64_t rep, const struct dv_f16_opnd *a,
		   const struct dv_f16_opnd *b, const float *bs, const struct dv_f16_opnd *d);

#endif
