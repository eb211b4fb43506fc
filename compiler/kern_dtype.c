/* kern_dtype.c: integer and bool tensors: the edge conversions between the
 * host's integer/bool bytes and fp32 (the fp32 side then crosses to the
 * device layout through kern_cast.c / kern_transdata.c), and the
 * element-wise comparison, logical, Where and Cast kernels on the device's
 * fp16 values.
 *
 * On the device every activation is fp16, whatever its ONNX type: integers
 * and bools are exact in fp16 for |v| <= 2048 (masks, small ids, 0/1 flags);
 * larger values round to nearest, as ATC's force_fp16 would.  bool is 0/1.
 *
 * int64 to fp32: the low 32-bit words (little-endian) are picked out of the
 * s32 pairs: vbrcb spreads every word over a block of its own, then eight
 * masked vmovs take lane l of output block q from the block of word
 * 2*(8q + l) (block stride 16).  fp32 to int64 is the reverse: the values
 * and their sign words (max(min(v, 0), -1)) are spread by vbrcb, and masked
 * vmovs put value 4B+m at lane 2m and its sign at lane 2m+1 of block B.
 *
 * Both kinds stream tiles through the UB one at a time (flags as in
 * kern_cast.c with one buffer set); the device kernels split their tiles
 * over the cores. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"
#include "kernels.h"

#define EDGE_TILE 512 /* values per tile: vbrcb of 2*512 words is 128 repeats */

static int64_t up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static void vscal(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t src,
		  int64_t scalar_bits, int64_t rep)
{
	int rs = kg_reg(g, scalar_bits);
	KG_V(g, VSCAL, op, dt, dst, src, rep, .rs2 = rs);
}

static int edge_ok(enum cc_dtype dt)
{
	return dt == CC_I32 || dt == CC_I64 || dt == CC_BOOL || dt == CC_U8 || dt == CC_I8 ||
	       dt == CC_F16;
}

/* One direction of the integer edge: to_f32 reads n values of dt and writes
 * n fp32, else the reverse.  Arguments: 0 source, 1 destination. */
int cc_gen_int_edge(const struct soc_config *cfg, enum cc_dtype dt, int64_t n, int to_f32,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (!edge_ok(dt)) {
		snprintf(err, errlen, "%s tensors at the graph's edge are not supported yet "
				      "(int32, int64, int8, uint8, bool and float16 are)", cc_dtype_name(dt));
		return -1;
	}
	if (n < 1) {
		snprintf(err, errlen, "empty tensors are not supported yet");
		return -1;
	}
	const int64_t T = EDGE_TILE;
	int64_t isz = (int64_t)cc_dtype_size(dt);
	/* UB: the integer side, fp32, an fp16/s32 staging, two spread buffers */
	int64_t o_int = 0, o_f32 = o_int + up(T * 8, 256) + 256;
	int64_t o_mid = o_f32 + T * 4 + 256, o_b1 = o_mid + T * 4 + 256;
	int64_t o_b2 = o_b1 + (2 * T + 256) * 32, end = o_b2 + (2 * T + 256) * 32;
	if (end > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "integer edge: the UB is too small");
		return -1;
	}
	struct kg g = { .p = p };
	kg_reset(&g);
	*block_dim = 1;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 1);
	cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 1);
	const int64_t every8 = 0x0101010101010101LL;
	for (int64_t v0 = 0; v0 < n; v0 += T) {
		int64_t m = n - v0 < T ? n - v0 : T;
		int64_t sz_in = to_f32 ? isz : 4, sz_out = to_f32 ? 4 : isz;
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		kg_dma(&g, ISA_OP_MOV_GM_UB, R_SRC, v0 * sz_in, to_f32 ? o_int : o_f32, 1,
		       (m * sz_in + 31) / 32, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 0);
		if (to_f32) {
			switch (dt) {
			case CC_I32:
				kg_conv_n(&g, ISA_DT_F32, ISA_DT_S32, o_f32, o_int, m, ISA_RND_RNE);
				break;
			case CC_F16: /* exact */
				kg_conv_n(&g, ISA_DT_F32, ISA_DT_F16, o_f32, o_int, m, ISA_RND_RNE);
				break;
			case CC_I64: {
				/* every word to a block of its own */
				kg_mask_all(&g);
				KG_V(&g, VUN, ISA_OP_VBRCB, ISA_DT_S32, o_b1, o_int,
				     (2 * m + 7) / 8, .db = 1, .dr = 8, .s0b = 1, .s0r = 8);
				/* lane l of block q <- word 2(8q + l): block 16q + 2l */
				for (int l = 0; l < 8; l++) {
					kg_mask(&g, 0, (uint64_t)every8 << l);
					KG_V(&g, VUN, ISA_OP_VMOV, ISA_DT_S32, o_mid,
					     o_b1 + 2 * l * 32, (m + 63) / 64, .db = 1, .dr = 8,
					     .s0b = 16, .s0r = 128);
				}
				kg_conv_n(&g, ISA_DT_F32, ISA_DT_S32, o_f32, o_mid, m, ISA_RND_RNE);
				break;
			}
			default: /* bool, uint8, int8: through fp16 (exact) */
				kg_conv_n(&g, ISA_DT_F16, dt == CC_I8 ? ISA_DT_S8 : ISA_DT_U8, o_mid,
					  o_int, m, ISA_RND_RNE);
				kg_conv_n(&g, ISA_DT_F32, ISA_DT_F16, o_f32, o_mid, m, ISA_RND_RNE);
				break;
			}
		} else {
			switch (dt) {
			case CC_I32:
				kg_conv_n(&g, ISA_DT_S32, ISA_DT_F32, o_int, o_f32, m, ISA_RND_RNE);
				break;
			case CC_F16: /* exact: the values were fp16 on the device */
				kg_conv_n(&g, ISA_DT_F16, ISA_DT_F32, o_int, o_f32, m, ISA_RND_RNE);
				break;
			case CC_I64: {
				kg_conv_n(&g, ISA_DT_S32, ISA_DT_F32, o_mid, o_f32, m, ISA_RND_RNE);
				int64_t r64 = (m + 63) / 64;
				/* the sign words: -1 for negatives, else 0 */
				vscal(&g, ISA_OP_VMINS, ISA_DT_S32, o_f32, o_mid, 0, r64);
				vscal(&g, ISA_OP_VMAXS, ISA_DT_S32, o_f32, o_f32, -1, r64);
				for (int k = 0; k < 2; k++) {
					KG_V(&g, VUN, ISA_OP_VBRCB, ISA_DT_S32, k ? o_b2 : o_b1,
					     k ? o_f32 : o_mid, (m + 7) / 8, .db = 1, .dr = 8,
					     .s0b = 1, .s0r = 8);
				}
				/* block B, lane 2j (+1) <- value (sign) 4B + j: block 4B + j */
				for (int j = 0; j < 8; j++) {
					kg_mask(&g, 0, (uint64_t)every8 << j);
					KG_V(&g, VUN, ISA_OP_VMOV, ISA_DT_S32, o_int,
					     (j & 1 ? o_b2 : o_b1) + (j / 2) * 32, (m + 31) / 32,
					     .db = 1, .dr = 8, .s0b = 4, .s0r = 32);
				}
				kg_mask_all(&g);
				break;
			}
			default:
				kg_conv_n(&g, ISA_DT_F16, ISA_DT_F32, o_mid, o_f32, m, ISA_RND_RNE);
				kg_conv_n(&g, dt == CC_I8 ? ISA_DT_S8 : ISA_DT_U8, ISA_DT_F16, o_int,
					  o_mid, m, ISA_RND_RNE);
				break;
			}
		}
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		/* whole 32-byte blocks: the last may spill into the buffer's slack,
		 * which the tiles write in order (one queue) */
		kg_dma(&g, ISA_OP_MOV_UB_GM, R_DST, v0 * sz_out, to_f32 ? o_f32 : o_int, 1,
		       (m * sz_out + 31) / 32, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 0);
	}
	cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 1);
	cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 1);
	cc_end(p);
	if (g.bad) {
		snprintf(err, errlen, "integer edge: an instruction out of range");
		return -1;
	}
	return 0;
}

/* ---- element-wise logic on fp16 ---------------------------------------- */

#define LG_TILE 4096 /* fp16 elements: vcmp of 32 repeats */

static void vcmp_dt(struct kg *g, enum isa_dtype dt, enum isa_cmp k, int64_t bits, int64_t a,
		    int64_t b, int b_const, int64_t rep)
{
	int rb = kg_reg(g, b);
	KG_V(g, VCMP, ISA_OP_VCMP, dt, bits, a, rep, .rs2 = rb, .cmp = k, .s0b = 1, .s0r = 8,
	     .s1b = 1, .s1r = b_const ? 0 : 8);
}

static void vcmp(struct kg *g, enum isa_cmp k, int64_t bits, int64_t a, int64_t b, int b_const,
		 int64_t rep)
{
	vcmp_dt(g, ISA_DT_F16, k, bits, a, b, b_const, rep);
}

/* A vdup's destination register, 0 (0.0f's bits) then looked up too: the
 * order that fixes which registers the cache evicts, kept as these
 * kernels have always had it. */
static int dup_dst(struct kg *g, int64_t dst)
{
	int r = kg_reg(g, dst);
	kg_reg(g, 0);
	return r;
}

/* dst = bit ? a : b; a constant operand is one repeat read again (stride 0). */
static void vsel_dt(struct kg *g, enum isa_dtype dt, int64_t dst, int64_t a, int a_const,
		    int64_t b, int b_const, int64_t bits, int64_t rep)
{
	int rb = kg_reg(g, b), rm = kg_reg(g, bits);
	KG_V(g, VSEL, ISA_OP_VSEL, dt, dst, a, rep, .rs2 = rb, .rs3 = rm, .db = 1, .dr = 8,
	     .s0b = 1, .s0r = a_const ? 0 : 8, .s1b = 1, .s1r = b_const ? 0 : 8);
}

static void vsel(struct kg *g, int64_t dst, int64_t a, int a_const, int64_t b, int b_const,
		 int64_t bits, int64_t rep)
{
	vsel_dt(g, ISA_DT_F16, dst, a, a_const, b, b_const, bits, rep);
}

/* dst (fp16) = a ** b on m fp16 values, in fp32: |a|^b = exp(b ln|a|);
 * for a < 0 the sign of an odd integer b, NaN for a b that is not an
 * integer; b = 0 gives 1 (0^0 and NaN^0 too), as C's pow does.  w: three
 * fp32 buffers and f3 a fourth; k: fp32 blocks of 0, 1 and NaN; rounded to
 * the nearest integer first when the result is an integer type. */
static void vpow(struct kg *g, int64_t dst, int64_t a, int64_t b, const int64_t *w, int64_t f3,
		 int64_t bits, int64_t bits2, const int64_t *k, int64_t m, int int_out)
{
	int64_t r64 = (m + 63) / 64, x = w[0], y = w[1], r = w[2];
	kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, x, a, m, ISA_RND_RNE);
	kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, y, b, m, ISA_RND_RNE);
	vcmp_dt(g, ISA_DT_F32, ISA_CMP_LT, bits2, x, k[0], 1, r64); /* a < 0 */
	KG_V(g, VUN, ISA_OP_VABS, ISA_DT_F32, r, x, r64);
	KG_V(g, VUN, ISA_OP_VLN, ISA_DT_F32, r, r, r64);
	KG_V(g, VBIN, ISA_OP_VMUL, ISA_DT_F32, r, r, r64, .rs2 = kg_reg(g, y));
	KG_V(g, VUN, ISA_OP_VEXP, ISA_DT_F32, r, r, r64);
	/* b an integer: b == trunc(b) */
	kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, f3, y, m, ISA_RND_TRUNC);
	kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f3, f3, m, ISA_RND_RNE);
	vcmp_dt(g, ISA_DT_F32, ISA_CMP_EQ, bits, y, f3, 0, r64);
	/* the sign 1 - 2p, p = b - 2 floor(b / 2) the parity of an integer b */
	vscal(g, ISA_OP_VMULS, ISA_DT_F32, f3, y, kg_fbits(0.5f), r64);
	kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, f3, f3, m, ISA_RND_FLOOR);
	kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f3, f3, m, ISA_RND_RNE);
	vscal(g, ISA_OP_VMULS, ISA_DT_F32, f3, f3, kg_fbits(-2.0f), r64);
	KG_V(g, VBIN, ISA_OP_VADD, ISA_DT_F32, f3, f3, r64, .rs2 = kg_reg(g, y));
	vscal(g, ISA_OP_VMULS, ISA_DT_F32, f3, f3, kg_fbits(-2.0f), r64);
	vscal(g, ISA_OP_VADDS, ISA_DT_F32, f3, f3, kg_fbits(1.0f), r64);
	KG_V(g, VBIN, ISA_OP_VMUL, ISA_DT_F32, x, r, r64, .rs2 = kg_reg(g, f3));
	vsel_dt(g, ISA_DT_F32, x, x, 0, k[2], 1, bits, r64);  /* not an integer: NaN */
	vsel_dt(g, ISA_DT_F32, r, x, 0, r, 0, bits2, r64);    /* a < 0 */
	vcmp_dt(g, ISA_DT_F32, ISA_CMP_EQ, bits, y, k[0], 1, r64);
	vsel_dt(g, ISA_DT_F32, r, k[1], 1, r, 0, bits, r64);  /* b = 0: 1 */
	if (int_out) {
		kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, r, r, m, ISA_RND_RNE);
		kg_conv_n(g, ISA_DT_F16, ISA_DT_S32, dst, r, m, ISA_RND_RNE);
	} else {
		kg_conv_n(g, ISA_DT_F16, ISA_DT_F32, dst, r, m, ISA_RND_RNE);
	}
}

/* dst (fp16) = a op b on m integer values held as fp16 (exact): both to
 * s32, the op there (add/sub/mul wrap at 32 bits as int32 does; division
 * in fp32, exact for these magnitudes, truncated toward zero), then for
 * 8-bit types r mod 256 = r - 256 floor(r / 256) in fp32 (offset by 128
 * when signed), exact; back to fp16, which rounds results past 2048 as
 * the device's integers are (kern_dtype.c). */
static void int_arith(struct kg *g, const struct cc_logic *lg, int64_t dst, int64_t a, int64_t b,
		      int64_t ra, const int64_t *w, int64_t m)
{
	int64_t r64 = (m + 63) / 64, rb = w[0], f0 = w[1], f1 = w[2];
	kg_conv_n(g, ISA_DT_S32, ISA_DT_F16, ra, a, m, ISA_RND_TRUNC);
	kg_conv_n(g, ISA_DT_S32, ISA_DT_F16, rb, b, m, ISA_RND_TRUNC);
	if (lg->op == CC_L_IDIV) {
		kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f0, ra, m, ISA_RND_RNE);
		kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f1, rb, m, ISA_RND_RNE);
		KG_V(g, VBIN, ISA_OP_VDIV, ISA_DT_F32, f0, f0, r64, .rs2 = kg_reg(g, f1));
		kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, ra, f0, m, ISA_RND_TRUNC);
	} else {
		enum isa_op op = lg->op == CC_L_IADD   ? ISA_OP_VADD
				 : lg->op == CC_L_ISUB ? ISA_OP_VSUB
						       : ISA_OP_VMUL;
		KG_V(g, VBIN, op, ISA_DT_S32, ra, ra, r64, .rs2 = kg_reg(g, rb));
	}
	if (!lg->wrap8) {
		kg_conv_n(g, ISA_DT_F16, ISA_DT_S32, dst, ra, m, ISA_RND_RNE);
		return;
	}
	kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f0, ra, m, ISA_RND_RNE);
	if (lg->sgn)
		vscal(g, ISA_OP_VADDS, ISA_DT_F32, f0, f0, kg_fbits(128.0f), r64);
	vscal(g, ISA_OP_VMULS, ISA_DT_F32, f1, f0, kg_fbits(1.0f / 256.0f), r64);
	kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, rb, f1, m, ISA_RND_FLOOR);
	kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f1, rb, m, ISA_RND_RNE);
	vscal(g, ISA_OP_VMULS, ISA_DT_F32, f1, f1, kg_fbits(256.0f), r64);
	KG_V(g, VBIN, ISA_OP_VSUB, ISA_DT_F32, f0, f0, r64, .rs2 = kg_reg(g, f1));
	if (lg->sgn)
		vscal(g, ISA_OP_VADDS, ISA_DT_F32, f0, f0, kg_fbits(-128.0f), r64);
	kg_conv_n(g, ISA_DT_F16, ISA_DT_F32, dst, f0, m, ISA_RND_RNE);
}

/* cc_gen_logic's plan: step 0 fills the constant blocks (1s, 0s, pow's
 * fp32 0, 1, NaN), each step after it a tile; tiles alike run as a loop,
 * blocks alike share one copy (kg_emit_steps). */
struct lgk {
	const struct cc_logic *lg;
	int nin;
	int64_t elems, T, tiles, per, o_in, o_out, o_tmp, o_s32, o_bits, o_bits2, o_one, o_zero;
	int64_t o_w[3], o_k[3];
};

static void lg_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct lgk *q = ctx;
	const struct cc_logic *lg = q->lg;
	struct cc_prog *p = g->p;
	int nin = q->nin;
	int64_t elems = q->elems, T = q->T, o_in = q->o_in, o_out = q->o_out, o_tmp = q->o_tmp;
	int64_t o_s32 = q->o_s32, o_bits = q->o_bits, o_bits2 = q->o_bits2, o_one = q->o_one;
	int64_t o_zero = q->o_zero;
	const int64_t *o_w = q->o_w, *o_k = q->o_k;
	if (i == 0) {
		kg_mask_all(g);
		/* the scalar's register first: kg_reg may emit an li */
		int r1 = kg_reg(g, kg_fbits(1.0f));
		int rd = dup_dst(g, o_one);
		KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = r1, .dt = ISA_DT_F16, .rep = 1);
		int r0 = kg_reg(g, kg_fbits(0.0f));
		rd = dup_dst(g, o_zero);
		KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = r0, .dt = ISA_DT_F16, .rep = 1);
		for (int k = 0; lg->op == CC_L_POW && k < 3; k++) { /* fp32 0, 1, NaN */
			int rk = kg_reg(g, kg_fbits(k == 0 ? 0.0f : k == 1 ? 1.0f : NAN));
			rd = dup_dst(g, o_k[k]);
			KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rk, .dt = ISA_DT_F32, .rep = 1);
		}
		return;
	}
	int64_t t = b * q->per + (int64_t)i - 1;
	int64_t e0 = t * T, m = elems - e0 < T ? elems - e0 : T;
	int64_t rep = (m + 127) / 128;
	int64_t a = o_in, x = o_in + (T * 2 + 256), y = o_in + 2 * (T * 2 + 256);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
	for (int k = 0; k < nin; k++)
		kg_dma(g, ISA_OP_MOV_GM_UB, 26 + k, e0 * 2, o_in + k * (T * 2 + 256),
		       1, m / 16, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 0);
	switch (lg->op) {
	case CC_L_EQ:
	case CC_L_LT:
	case CC_L_LE:
	case CC_L_GT:
	case CC_L_GE: {
		enum isa_cmp k = lg->op == CC_L_EQ   ? ISA_CMP_EQ
				 : lg->op == CC_L_LT ? ISA_CMP_LT
				 : lg->op == CC_L_LE ? ISA_CMP_LE
				 : lg->op == CC_L_GT ? ISA_CMP_GT
						     : ISA_CMP_GE;
		vcmp(g, k, o_bits, a, x, 0, rep);
		vsel(g, o_out, o_one, 1, o_zero, 1, o_bits, rep);
		break;
	}
	case CC_L_NOT:  /* a == 0 */
	case CC_L_BOOL: /* a != 0 */
		vcmp(g, lg->op == CC_L_NOT ? ISA_CMP_EQ : ISA_CMP_NE, o_bits, a, o_zero, 1, rep);
		vsel(g, o_out, o_one, 1, o_zero, 1, o_bits, rep);
		break;
	case CC_L_AND: /* b ? (a != 0) : 0 */
	case CC_L_OR:  /* b ? 1 : (a != 0) */
	case CC_L_XOR: /* b ? (a == 0) : (a != 0) */
		vcmp(g, ISA_CMP_NE, o_bits, a, o_zero, 1, rep);
		vcmp(g, ISA_CMP_NE, o_bits2, x, o_zero, 1, rep);
		vsel(g, o_tmp, o_one, 1, o_zero, 1, o_bits, rep);
		if (lg->op == CC_L_AND) {
			vsel(g, o_out, o_tmp, 0, o_zero, 1, o_bits2, rep);
		} else if (lg->op == CC_L_OR) {
			vsel(g, o_out, o_one, 1, o_tmp, 0, o_bits2, rep);
		} else {
			vsel(g, y, o_zero, 1, o_one, 1, o_bits, rep);
			vsel(g, o_out, y, 0, o_tmp, 0, o_bits2, rep);
		}
		break;
	case CC_L_WHERE:
		vcmp(g, ISA_CMP_NE, o_bits, a, o_zero, 1, rep);
		vsel(g, o_out, x, 0, y, 0, o_bits, rep);
		break;
	case CC_L_IADD:
	case CC_L_ISUB:
	case CC_L_IMUL:
	case CC_L_IDIV:
		int_arith(g, lg, o_out, a, x, o_s32, o_w, m);
		break;
	case CC_L_POW:
		vpow(g, o_out, a, x, o_w, o_s32, o_bits, o_bits2, o_k, m, lg->int_out);
		break;
	case CC_L_TRUNC: {
		/* toward zero through s32, then the target type's range */
		kg_conv_n(g, ISA_DT_S32, ISA_DT_F16, o_s32, a, m, ISA_RND_TRUNC);
		kg_conv_n(g, ISA_DT_F16, ISA_DT_S32, o_out, o_s32, m, ISA_RND_RNE);
		if (lg->lo > -65504.0f)
			vscal(g, ISA_OP_VMAXS, ISA_DT_F16, o_out, o_out,
			      kg_fbits(lg->lo), rep);
		if (lg->hi < 65504.0f)
			vscal(g, ISA_OP_VMINS, ISA_DT_F16, o_out, o_out,
			      kg_fbits(lg->hi), rep);
		break;
	}
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
	kg_dma(g, ISA_OP_MOV_UB_GM, 26 + nin, e0 * 2, o_out, 1, m / 16, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 0);
}

int cc_gen_logic(const struct soc_config *cfg, const struct cc_logic *lg, int64_t elems,
		 struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int nin = lg->op == CC_L_WHERE ? 3
		  : lg->op == CC_L_NOT || lg->op == CC_L_TRUNC || lg->op == CC_L_BOOL ? 1
										    : 2;
	if (elems < 1 || elems % 16) {
		snprintf(err, errlen, "logic: bad element count");
		return -1;
	}
	const int64_t T = LG_TILE;
	/* UB: inputs, output, a temporary, s32 staging, two bit masks, 1s, 0s,
	 * and for integer arithmetic three more 32-bit buffers */
	int64_t o_in = 0, o_out = o_in + 3 * (T * 2 + 256), o_tmp = o_out + T * 2 + 256;
	int64_t o_s32 = o_tmp + T * 2 + 256, o_bits = o_s32 + T * 4 + 256;
	int64_t o_bits2 = o_bits + T / 8 + 256, o_one = o_bits2 + T / 8 + 256;
	int64_t o_zero = o_one + 256, end = o_zero + 256;
	int64_t o_w[3] = { end, end + T * 4 + 256, end + 2 * (T * 4 + 256) };
	int64_t o_k[3] = { o_w[2] + T * 4 + 256, o_w[2] + T * 4 + 512, o_w[2] + T * 4 + 768 };
	if (lg->op >= CC_L_IADD)
		end += 3 * (T * 4 + 256) + (lg->op == CC_L_POW ? 3 * 256 : 0);
	if (end > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "logic: the UB is too small");
		return -1;
	}
	struct lgk q = { lg, nin, elems, T, (elems + T - 1) / T, 0, o_in, o_out, o_tmp, o_s32,
			 o_bits, o_bits2, o_one, o_zero, { o_w[0], o_w[1], o_w[2] },
			 { o_k[0], o_k[1], o_k[2] } };
	int64_t blocks = cc_split_work(q.tiles, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	for (int k = 0; k <= nin; k++)
		cc_ldarg(p, 26 + k, k); /* x26..x29: outside kern_gen's registers */
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(1),
			       .nsync = 2, .per = q.per, .units = q.tiles, .prelude = 1,
			       .step = lg_step, .ctx = &q };
	return kg_emit_kernel(p, 0, 0, &ks, "logic", err, errlen);
}
