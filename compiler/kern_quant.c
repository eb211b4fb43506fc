/* kern_quant.c: quantization kernels on the vector unit.
 *
 * cc_gen_quant_c0 feeds an int8 convolution: the fp16 NC1HWC0 activation
 * (C0 = 16) becomes int8 NC1HWC0 with C0 = 32, the layout the cube's int8
 * fractals (16 x 32) read.  A 32-channel int8 block is two fp16 blocks'
 * channels, so a unit of work is a pixel range of a pair of input channel
 * planes (2j, 2j + 1): MTE2 brings both into the UB, the vector unit scales
 * each into alternate 32-byte blocks of a [pixels][32] fp16 buffer (the
 * destination block stride interleaves them; a missing odd plane is zeros),
 * one vconv rounds and saturates it to int8 (round half to even, as ONNX's
 * QuantizeLinear), and MTE3 writes the plane pair's [pixels][32] bytes.
 * The scale multiplies in fp16, as the hardware's own quantize op computes:
 * the product's rounding can move a value lying within about 2^-11 of a
 * rounding boundary by one step.  A scale whose inverse fp16 cannot hold
 * well (outside [2^-10, 2^15]) takes an fp32 path instead: convert, scale,
 * round to int32, and narrow through fp16 (exact for |q| <= 2048, and
 * larger values saturate anyway).
 *
 * cc_gen_qlinear is ONNX's QuantizeLinear / DequantizeLinear (per tensor)
 * on the device's fp16 values, which hold the integers exactly: q =
 * clamp(rne(x / s) + zp, lo, hi), x = (q - zp) * s, or both, in fp32 with a
 * true division, as the operator is defined.
 *
 * Both stream double-buffered tiles through the UB (parity flags as in
 * kern_cast.c), the work split over the cores in contiguous runs. */
#include <math.h>
#include <stdio.h>

#include "kern_gen.h"
#include "kern_roll.h"
#include "kernels.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t up(int64_t a, int64_t b) { return cdiv(a, b) * b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* A vector op with explicit strides; v2 a VSCAL's or VDUP's scalar (a VUN
 * has none), kg_vop's s1. */
static void vstr(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t src,
		 int64_t rep, int64_t db, int64_t dr, int64_t s0b, int64_t s0r, int64_t v2)
{
	struct kg_strides st = kg_strides_dflt();
	st.db = db;
	st.dr = dr;
	st.s0b = s0b;
	st.s0r = s0r;
	kg_vop(g, op, dt, dst, src, v2, rep, st);
}

/* dst = op(src, scalar) over n contiguous elements of dt (4 or 2 bytes). */
static void vscal_n(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t src,
		    int64_t n, int64_t bits)
{
	int64_t lanes = 256 / isa_dtype_size(dt), reps = cdiv(n, lanes);
	for (int64_t done = 0; done < reps; done += ISA_VEC_REP_MAX)
		vstr(g, op, dt, dst + done * 256, src + done * 256,
		     min64(ISA_VEC_REP_MAX, reps - done), 1, 8, 1, 8, bits);
}

/* The streaming every generator here shares: units of work double-buffered
 * through the UB (parity par), MTE2 in, V, MTE3 out, as kern_cast.c. */
static void unit_loaded(struct cc_prog *p, int par)
{
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

static void unit_computed(struct cc_prog *p, int par)
{
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
}

/* A quantization kernel's plan: units dealt to the blocks in balanced
 * contiguous runs, one a step (kg_emit_steps: units alike a loop, blocks
 * alike one copy); qlinear's blocks first fill their divisor buffers. */
struct qk {
	int64_t units, blocks;
	int prelude; /* 1: step 0 is the block's setup (qlinear) */
	/* cc_gen_quant_c0 */
	int fp32;
	float inv_scale;
	int64_t hw, c1a, c1b, chunks, np, slot, o_in, o_tmp, o_out, o_big;
	/* cc_gen_quant_nd */
	int64_t rows, k16, k32, R;
	/* cc_gen_qlinear */
	const struct cc_qlinear *ql;
	int64_t elems, T, o_h, o_f, o_s;
};

/* Block b's units [*u0, return). */
static int64_t qk_range(const struct qk *q, int64_t b, int64_t *u0)
{
	*u0 = b * q->units / q->blocks;
	return (b + 1) * q->units / q->blocks;
}

static size_t qk_steps(const void *ctx, int64_t b)
{
	const struct qk *q = ctx;
	int64_t u0, u1 = qk_range(q, b, &u0);
	return (size_t)(u1 - u0 + q->prelude);
}

/* The blocks' steps, each emitting unit u on buffer par. */
static int qk_kernel(struct cc_prog *p, const struct qk *q,
		     void (*step)(struct kg *, const void *, int64_t, size_t), char *err,
		     size_t errlen)
{
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = q->blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .nsteps = qk_steps, .step = step, .ctx = q };
	return kg_emit_kernel(p, 0, 0, &ks, "quantize", err, errlen);
}

static int pick_blocks(const struct soc_config *cfg, int64_t units)
{
	int64_t b = min64(units, cfg->core_count);
	return (int)min64(b, 1024);
}

static void c0_unit(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct qk *q = ctx;
	struct cc_prog *p = g->p;
	int fp32 = q->fp32, par = (int)(i & 1);
	float inv_scale = q->inv_scale;
	int64_t hw = q->hw, c1a = q->c1a, c1b = q->c1b, chunks = q->chunks, np = q->np;
	int64_t o_in = q->o_in, o_tmp = q->o_tmp, o_out = q->o_out, o_big = q->o_big;
	int64_t u0;
	qk_range(q, b, &u0);
	int64_t u = u0 + (int64_t)i, base = par * q->slot;
	int64_t img = u / (c1b * chunks), j = u / chunks % c1b, p0 = u % chunks * np;
	int64_t m = min64(np, hw - p0), m8 = up(m, 8);
	int two = 2 * j + 1 < c1a;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, ((img * c1a + 2 * j) * hw + p0) * 32,
	       base + o_in, two ? 2 : 1, m, hw - m, np - m);
	unit_loaded(p, par);
	kg_mask_all(g);
	/* plane h's pixel i -> block 2i + h of tmp: 8 pixels a repeat */
	for (int h = 0; h < 1 + two; h++)
		vstr(g, fp32 ? ISA_OP_VMOV : ISA_OP_VMULS, ISA_DT_F16,
		     base + o_tmp + h * 32, base + o_in + h * np * 32, m8 / 8, 2, 16, 1,
		     8, kg_fbits(inv_scale));
	if (!two)
		vstr(g, ISA_OP_VDUP, ISA_DT_F16, base + o_tmp + 32, base + o_tmp + 32,
		     m8 / 8, 2, 16, 1, 8, 0);
	if (fp32) {
		int64_t e = m8 * 32, big = base + o_big, tmp = base + o_tmp;
		kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, big, tmp, e, ISA_RND_RNE);
		vscal_n(g, ISA_OP_VMULS, ISA_DT_F32, big, big, e, kg_fbits(inv_scale));
		kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, big, big, e, ISA_RND_RNE);
		kg_conv_n(g, ISA_DT_F16, ISA_DT_S32, tmp, big, e, ISA_RND_RNE);
	}
	kg_conv_n(g, ISA_DT_S8, ISA_DT_F16, base + o_out, base + o_tmp, m8 * 32,
		  ISA_RND_RNE);
	unit_computed(p, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, ((img * c1b + j) * hw + p0) * 32,
	       base + o_out, 1, m, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_quant_c0(const struct soc_config *cfg, int64_t n, int64_t c, int64_t hw,
		    float inv_scale, struct cc_prog *p, unsigned *block_dim, char *err,
		    size_t errlen)
{
	if (n < 1 || c < 1 || hw < 1) {
		snprintf(err, errlen, "quantize: empty tensors are not supported yet");
		return -1;
	}
	if (!(inv_scale > 0.0f) || !isfinite(inv_scale)) {
		snprintf(err, errlen, "quantize: scale must be positive and finite (1/scale %g)",
			 (double)inv_scale);
		return -1;
	}
	int fp32 = !(inv_scale >= 1.0f / 1024 && inv_scale <= 32768.0f);
	int64_t c1a = cdiv(c, 16), c1b = cdiv(c, 32);
	/* per buffer and pixel: two fp16 planes in, the interleaved fp16 pair,
	 * the int8 pair, and for fp32 the 32 fp32/int32 values */
	int64_t per_px = 64 + 64 + 32 + (fp32 ? 128 : 0);
	int64_t np = ((int64_t)cfg->ub_size_kb * 1024 / 2 - 1024) / per_px / 8 * 8;
	np = min64(np, 1024);
	np = min64(np, up(hw, 8));
	if (np < 8) {
		snprintf(err, errlen, "quantize: the UB is too small");
		return -1;
	}
	int64_t o_in = 0, o_tmp = o_in + np * 64, o_out = o_tmp + np * 64;
	int64_t o_big = o_out + np * 32, slot = up(o_big + (fp32 ? np * 128 : 0), 256);
	int64_t chunks = cdiv(hw, np), units = n * c1b * chunks;
	int blocks = pick_blocks(cfg, units);
	*block_dim = (unsigned)blocks;
	struct qk q = { .units = units, .blocks = blocks, .fp32 = fp32, .inv_scale = inv_scale,
			.hw = hw, .c1a = c1a, .c1b = c1b, .chunks = chunks, .np = np, .slot = slot,
			.o_in = o_in, .o_tmp = o_tmp, .o_out = o_out, .o_big = o_big };
	return qk_kernel(p, &q, c0_unit, err, errlen);
}

static void nd_unit(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct qk *q = ctx;
	struct cc_prog *p = g->p;
	int par = (int)(i & 1);
	float inv_scale = q->inv_scale;
	int64_t rows = q->rows, k16 = q->k16, k32 = q->k32, R = q->R;
	int64_t o_in = q->o_in, o_tmp = q->o_tmp, o_out = q->o_out;
	int64_t u0;
	qk_range(q, b, &u0);
	int64_t u = u0 + (int64_t)i, base = par * q->slot;
	int64_t r0 = u * R, m = min64(R, rows - r0);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, r0 * k16 * 2, base + o_in, 1,
	       m * k16 * 2 / 32, 0, 0);
	unit_loaded(p, par);
	/* scaled, each row to the int8 row stride: a repeat is one
	 * row's next (up to) 8 blocks */
	for (int64_t c0 = 0; c0 < k16 / 16; c0 += 8) {
		int64_t nb = min64(8, k16 / 16 - c0);
		kg_mask_lanes(g, nb * 16);
		vstr(g, ISA_OP_VMULS, ISA_DT_F16, base + o_tmp + c0 * 32,
		     base + o_in + c0 * 32, m, 1, k32 / 16, 1, k16 / 16,
		     kg_fbits(inv_scale));
	}
	if (k32 != k16) { /* the last block of each int8 row: zeros */
		kg_mask_lanes(g, 16);
		vstr(g, ISA_OP_VDUP, ISA_DT_F16, base + o_tmp + k16 * 2,
		     base + o_tmp + k16 * 2, m, 1, k32 / 16, 1, 8, 0);
	}
	kg_conv_n(g, ISA_DT_S8, ISA_DT_F16, base + o_out, base + o_tmp, m * k32,
		  ISA_RND_RNE);
	unit_computed(p, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, r0 * k32, base + o_out, 1, m * k32 / 32, 0,
	       0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_quant_nd(const struct soc_config *cfg, int64_t rows, int64_t k, float inv_scale,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (rows < 1 || k < 1) {
		snprintf(err, errlen, "quantize: empty tensors are not supported yet");
		return -1;
	}
	if (!(inv_scale >= 1.0f / 1024 && inv_scale <= 32768.0f)) {
		snprintf(err, errlen, "quantize: 1/scale %g is outside fp16's range for an int8 "
				      "matmul input (not supported yet)", (double)inv_scale);
		return -1;
	}
	int64_t k16 = up(k, 16), k32 = up(k, 32);
	/* per buffer and row: the fp16 row, the scaled row at the int8 row
	 * stride, the int8 row */
	int64_t per_row = k16 * 2 + k32 * 2 + k32;
	int64_t R = ((int64_t)cfg->ub_size_kb * 1024 / 2 - 1024) / per_row;
	R = min64(min64(R, ISA_VEC_REP_MAX), rows);
	if (R < 1) {
		snprintf(err, errlen, "quantize: a row of %lld values does not fit the UB",
			 (long long)k);
		return -1;
	}
	int64_t o_in = 0, o_tmp = up(R * k16 * 2, 256), o_out = o_tmp + up(R * k32 * 2, 256);
	int64_t slot = o_out + up(R * k32, 256) + 256;
	int64_t units = cdiv(rows, R);
	int blocks = pick_blocks(cfg, units);
	*block_dim = (unsigned)blocks;
	struct qk q = { .units = units, .blocks = blocks, .inv_scale = inv_scale, .slot = slot,
			.o_in = o_in, .o_tmp = o_tmp, .o_out = o_out, .rows = rows, .k16 = k16,
			.k32 = k32, .R = R };
	return qk_kernel(p, &q, nd_unit, err, errlen);
}

static void ql_unit(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct qk *qk = ctx;
	const struct cc_qlinear *q = qk->ql;
	struct cc_prog *p = g->p;
	int64_t slot = qk->slot, T = qk->T, elems = qk->elems;
	int64_t o_h = qk->o_h, o_f = qk->o_f, o_s = qk->o_s;
	if (i == 0) {
		kg_mask_all(g);
		/* the divisor, a repeat of it in each buffer: vdiv's second operand */
		for (int par = 0; par < 2; par++)
			vstr(g, ISA_OP_VDUP, ISA_DT_F32, par * slot + o_s, par * slot + o_s, 1, 1, 8,
			     1, 8, kg_fbits(q->scale));
		return;
	}
	int par = (int)((i - 1) & 1);
	int64_t u0;
	qk_range(qk, b, &u0);
	int64_t u = u0 + (int64_t)i - 1, base = par * slot;
	int64_t e0 = u * T, m = min64(T, elems - e0);
	int64_t h = base + o_h, f = base + o_f, reps = cdiv(m, 64);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, e0 * 2, h, 1, cdiv(m * 2, 32), 0, 0);
	unit_loaded(p, par);
	kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, f, h, m, ISA_RND_RNE);
	if (q->mode != CC_QL_DEQUANT) {
		for (int64_t done = 0; done < reps; done += ISA_VEC_REP_MAX) {
			/* the divisor's one repeat read again */
			kg_vop(g, ISA_OP_VDIV, ISA_DT_F32, f + done * 256,
			       f + done * 256, base + o_s,
			       min64(ISA_VEC_REP_MAX, reps - done),
			       (struct kg_strides){ 1, 1, 1, 8, 8, 0 });
		}
		kg_conv_n(g, ISA_DT_S32, ISA_DT_F32, f, f, m, ISA_RND_RNE);
		vscal_n(g, ISA_OP_VADDS, ISA_DT_S32, f, f, m, q->zero_point);
		vscal_n(g, ISA_OP_VMAXS, ISA_DT_S32, f, f, m, q->qmin);
		vscal_n(g, ISA_OP_VMINS, ISA_DT_S32, f, f, m, q->qmax);
		kg_conv_n(g, ISA_DT_F32, ISA_DT_S32, f, f, m, ISA_RND_RNE);
	}
	if (q->mode != CC_QL_QUANT) {
		vscal_n(g, ISA_OP_VADDS, ISA_DT_F32, f, f, m,
			kg_fbits((float)-q->zero_point));
		vscal_n(g, ISA_OP_VMULS, ISA_DT_F32, f, f, m, kg_fbits(q->scale));
	}
	/* narrowed in place into f, not back into h: MTE2 refills h for the unit two
	 * ahead once V is done with it (unit_computed), which may be before MTE3 has
	 * stored this unit, while f is rewritten only after the store (MTE3 -> V).
	 * Repeat r of the vconv writes bytes [128r, 128r + 128) of f and reads
	 * [256r, 256r + 256): no repeat reads what an earlier one wrote. */
	kg_conv_n(g, ISA_DT_F16, ISA_DT_F32, f, f, m, ISA_RND_RNE);
	unit_computed(p, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, e0 * 2, f, 1, cdiv(m * 2, 32), 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_qlinear(const struct soc_config *cfg, const struct cc_qlinear *q, int64_t elems,
		   struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (elems < 1) {
		snprintf(err, errlen, "quantize: empty tensors are not supported yet");
		return -1;
	}
	if (!(q->scale > 0.0f) || !isfinite(q->scale)) {
		snprintf(err, errlen, "quantize: scale must be positive and finite (got %g)",
			 (double)q->scale);
		return -1;
	}
	/* per buffer and element: fp16 in/out, fp32 work, the scale's repeat */
	const int64_t T = 4096;
	int64_t o_h = 0, o_f = o_h + T * 2, o_s = o_f + T * 4, slot = o_s + 256;
	if (2 * slot > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "quantize: the UB is too small");
		return -1;
	}
	int64_t units = cdiv(elems, T);
	int blocks = pick_blocks(cfg, units);
	*block_dim = (unsigned)blocks;
	struct qk qq = { .units = units, .blocks = blocks, .prelude = 1, .slot = slot, .ql = q,
			 .elems = elems, .T = T, .o_h = o_h, .o_f = o_f, .o_s = o_s };
	return qk_kernel(p, &qq, ql_unit, err, errlen);
}
