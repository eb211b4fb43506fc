/* kern_convt.c: zero insertion for ConvTranspose (kernels.h,
 * cc_gen_zero_insert).
 *
 * A transposed convolution with strides (sh, sw) is a stride-1 convolution
 * (flipped, transposed weights; lower_conv.c) over the input with sh - 1 zero
 * rows between its rows and sw - 1 zero pixels between its pixels.  This
 * kernel builds that NC1HWC0 tensor: [P][(H-1)*sh+1][(W-1)*sw+1][16] from
 * x [P][H][W][16] (P = N*C1 planes).  The conv's own padding supplies the
 * border, so nothing else is written here.
 *
 * A unit of work is one input row and the sh - 1 zero rows after it (the
 * last row of a plane has none): sh output rows, contiguous in GM.  Its UB
 * buffer is zeroed once per core by vdup; one DMA places the row's W pixels
 * at every sw-th pixel of the buffer's first row (a destination gap of
 * sw - 1 blocks), and since the same pixels are overwritten by every later
 * row, the rest stays zero; one DMA writes the sh rows out.  Units are dealt
 * to the cores; two buffers alternate (MTE2 fills one while MTE3 drains the
 * other).  Arguments: 0 x, 1 y. */
#include <stdio.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* The plan: step 0 zeroes both buffers, each step after it a unit (an
 * input row and its zero rows), the buffers in turn; units alike run as a
 * loop, blocks alike share one copy (kg_emit_steps). */
struct zins {
	int64_t h, w, sh, sw, hz, wz, bufb, units, per;
};

static void zins_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct zins *q = ctx;
	struct cc_prog *p = g->p;
	int64_t h = q->h, w = q->w, sh = q->sh, sw = q->sw, hz = q->hz, wz = q->wz, bufb = q->bufb;
	if (i == 0) {
		kg_mask_all(g);
		for (int64_t d = 0; d < 2 * bufb; d += 8 * ISA_VEC_REP_MAX) {
			int64_t rep = (2 * bufb - d) / 8 < ISA_VEC_REP_MAX ? (2 * bufb - d) / 8
									    : ISA_VEC_REP_MAX;
			int rd = kg_reg(g, d * 32), rv = kg_reg(g, kg_fbits(0.0f));
			KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rv, .dt = ISA_DT_F16, .rep = rep,
			     .db = 1, .dr = 8);
		}
		/* the zeros are in place before any row lands on them */
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		return;
	}
	int par = (int)((i - 1) % 2);
	int64_t u = b * q->per + (int64_t)i - 1;
	int64_t pl = u / h, ih = u % h, rows = ih == h - 1 ? 1 : sh;
	int64_t buf = par * bufb * 32;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
	if (sw == 1)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, u * w * 32, buf, 1, w, 0, 0);
	else
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, u * w * 32, buf, w, 1, 0, sw - 1);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (pl * hz + ih * sh) * wz * 32, buf, 1,
	       rows * wz, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
}

int cc_gen_zero_insert(const struct soc_config *cfg, int64_t planes, int64_t h, int64_t w,
		       int64_t sh, int64_t sw, struct cc_prog *p, unsigned *block_dim, char *err,
		       size_t errlen)
{
	if (planes < 1 || h < 1 || w < 1 || sh < 1 || sw < 1) {
		snprintf(err, errlen, "zero insertion: bad shape");
		return -1;
	}
	int64_t hz = (h - 1) * sh + 1, wz = (w - 1) * sw + 1;
	int64_t bufb = (sh * wz + 7) / 8 * 8; /* blocks of a buffer, whole vdup repeats */
	if (2 * bufb * 32 > (int64_t)cfg->ub_size_kb * 1024 || sh * wz > ISA_DMA_LEN_MAX) {
		snprintf(err, errlen, "ConvTranspose with %lld output columns and stride %lld is not "
				      "supported yet (the zero-inserted rows do not fit the UB)",
			 (long long)wz, (long long)sh);
		return -1;
	}
	struct zins q = { h, w, sh, sw, hz, wz, bufb, planes * h, 0 };
	int64_t blocks = cc_split_work(q.units, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 } },
			       .nsync = 1, .per = q.per, .units = q.units, .prelude = 1,
			       .step = zins_step, .ctx = &q };
	return kg_emit_kernel(p, 0, 0, &ks, "ConvTranspose", err, errlen);
}
