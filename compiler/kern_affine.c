/* kern_affine.c: a per-channel affine map on NC1HWC0 tensors,
 * y = act(x * scale[c] + shift[c]): BatchNormalization that could not be
 * folded into a Conv.  A pixel is one 32-byte block of 16 channels, so the
 * 16 scales of a C1 plane are one block that every pixel block reads (block
 * and repeat strides 0).  Work is cut into (plane, pixel tile) pieces dealt
 * to the blocks in order; double-buffered like every streaming kernel.
 * x_c1s, y_c1s: channel blocks between images (a tensor inside a concat
 * buffer, plan_concat.c), 0 for the tensor's own.
 * Arguments: 0 x, 1 params (fp16 scale [C16] then shift [C16]), 2 y. */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments x, params, y in x1, x2, x8 (clear of the
 * builder's fixed registers x3..x7, kern_gen.h); the vector operands' UB
 * addresses loaded into x16..x18, a scalar into x25; the builder's cache
 * (the DMAs' UB addresses) x19..x24. */
enum { R_X = R_SRC, R_P = R_DST, R_Y = 8, R_UB = 16, R_S = 25, R_CACHE = 19, R_CACHE_END = 25 };

/* The plan: step 0 loads the parameters, each step after it a (plane,
 * pixel tile) piece, the two buffers in turn; pieces alike run as a loop,
 * blocks alike share one copy (kg_emit_steps). */
struct affine {
	int64_t c1, pix, tile, per_plane, total, per, xs, ys, buf, ub_in, ub_out;
	enum cc_act act;
	float lo, hi;
};

static void affine_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct affine *q = ctx;
	struct cc_prog *p = g->p;
	int64_t c1 = q->c1, pix = q->pix, tile = q->tile, per_plane = q->per_plane;
	int64_t xs = q->xs, ys = q->ys, buf = q->buf, ub_in = q->ub_in, ub_out = q->ub_out;
	enum cc_act act = q->act;
	float lo = q->lo, hi = q->hi;
	if (i == 0) { /* the parameters, once per block */
		kg_dma(g, ISA_OP_MOV_GM_UB, R_P, 0, 0, 1, 2 * c1, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		return;
	}
	int par = (int)((i - 1) % 2);
	int64_t u = b * q->per + (int64_t)i - 1;
	int64_t plane = u / per_plane, p0 = (u % per_plane) * tile;
	int64_t np = pix - p0 < tile ? pix - p0 : tile;
	int64_t cb = plane % c1, img = plane / c1;
	int64_t off = ((img * xs + cb) * pix + p0) * 32;
	int64_t yoff = ((img * ys + cb) * pix + p0) * 32;
	int64_t rep = (np + 7) / 8;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_X, off, ub_in + par * buf, 1, np, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	cc_li(p, R_UB, ub_out + par * buf);
	cc_li(p, R_UB + 1, ub_in + par * buf);
	cc_li(p, R_UB + 2, cb * 32);
	CC_I(p, VBIN, ISA_OP_VMUL, .rd = R_UB, .rs1 = R_UB + 1, .rs2 = R_UB + 2,
	     .dt = ISA_DT_F16, .rep = rep, .s1b = 0, .s1r = 0);
	cc_li(p, R_UB + 2, (c1 + cb) * 32);
	CC_I(p, VBIN, ISA_OP_VADD, .rd = R_UB, .rs1 = R_UB, .rs2 = R_UB + 2,
	     .dt = ISA_DT_F16, .rep = rep, .s1b = 0, .s1r = 0);
	if (act == CC_ACT_RELU) {
		CC_I(p, VUN, ISA_OP_VRELU, .rd = R_UB, .rs1 = R_UB,
		     .dt = ISA_DT_F16, .rep = rep);
	} else if (act == CC_ACT_CLIP) {
		for (int k = 0; k < 2; k++) {
			float v = k ? hi : lo;
			uint32_t bits;
			memcpy(&bits, &v, 4);
			cc_li(p, R_S, bits);
			CC_I(p, VSCAL, k ? ISA_OP_VMINS : ISA_OP_VMAXS, .rd = R_UB,
			     .rs1 = R_UB, .rs2 = R_S, .dt = ISA_DT_F16,
			     .rep = rep);
		}
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, yoff, ub_out + par * buf, 1, np, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_affine(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		  int64_t x_c1s, int64_t y_c1s, enum cc_act act, float lo, float hi,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t c1 = (c + 15) / 16, planes = n * c1, pix = h * w;
	int64_t xs = x_c1s ? x_c1s : c1, ys = y_c1s ? y_c1s : c1;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t params = 2 * c1 * 32;
	int64_t tile = (ub - params - 512) / (4 * 32) / 8 * 8; /* pixels: 2 buffers x in/out */
	if (tile > ISA_VEC_REP_MAX * 8)
		tile = ISA_VEC_REP_MAX * 8;
	if (tile < 8) {
		snprintf(err, errlen, "affine: %lld channels of parameters do not fit the UB",
			 (long long)c);
		return -1;
	}
	int64_t per_plane = (pix + tile - 1) / tile, total = planes * per_plane;
	struct affine q = { c1, pix, tile, per_plane, total, 0, xs, ys, tile * 32, params,
			    params + 2 * tile * 32, act, lo, hi };
	int64_t blocks = cc_split_work(total, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_P, 1);
	cc_ldarg(p, R_Y, 2);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .per = q.per, .units = total, .prelude = 1,
			       .step = affine_step, .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "affine", err, errlen);
}
