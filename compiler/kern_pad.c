/* kern_pad.c: Pad over a block grid (see kernels.h, struct cc_pad).
 *
 * The output is written one row of the grid's last axis at a time.  Every
 * other axis maps its output index to an input index at compile time
 * (constant mode: none, the row is all border; edge: clamped; reflect:
 * mirrored), so a row is either a row of border or an input row with its
 * ends padded.  An input row comes into the UB by one DMA burst at its place
 * in the output row; in edge and reflect mode the end blocks are one-block
 * DMAs of the input blocks they copy, and the whole row goes out in one
 * burst.  In constant mode the border comes from a UB buffer of the value,
 * filled once per core by vdup (a second one for the last channel block of
 * NC1HWC0, whose padding channels stay zero), and goes out beside the
 * input's burst.  Rows are dealt to the cores; double-buffered.
 * Arguments: 0 x, 1 y. */
#include <stdio.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* The input index output index o of axis q reads, or -1 for the border. */
static int64_t pad_map(const struct cc_pad *pd, int q, int64_t o)
{
	int64_t n = pd->xcnt[q], i = o - pd->before[q];
	if (i >= 0 && i < n)
		return i;
	if (pd->mode == CC_PAD_CONSTANT)
		return -1;
	if (pd->mode == CC_PAD_EDGE)
		return i < 0 ? 0 : n - 1;
	return cc_pad_reflect(i, n);
}

static void vdup_blocks(struct kg *g, int64_t ub, int64_t nblk, float v)
{
	for (int64_t d = 0; d < nblk; d += 8 * ISA_VEC_REP_MAX) {
		int64_t rep = (nblk - d + 7) / 8 < ISA_VEC_REP_MAX ? (nblk - d + 7) / 8 : ISA_VEC_REP_MAX;
		int rd = kg_reg(g, ub + d * 32), rv = kg_reg(g, kg_fbits(v));
		KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rv, .dt = ISA_DT_F16, .rep = rep,
		     .db = 1, .dr = 8);
	}
}

/* The plan: in constant mode step 0 fills the value buffers; each step
 * (after it) an output row, the two row buffers in turn; rows alike run as
 * a loop, blocks alike share one copy (kg_emit_steps). */
struct padk {
	const struct cc_pad *pd;
	int r, cst, chan;
	int64_t rows, per, xw, yw, bw, rowb, ub_c, ub_c2;
};

static void pad_step(struct kg *g, const void *ctx, int64_t b, size_t s)
{
	const struct padk *pk = ctx;
	const struct cc_pad *pd = pk->pd;
	struct cc_prog *p = g->p;
	int r = pk->r, cst = pk->cst, chan = pk->chan;
	int64_t xw = pk->xw, yw = pk->yw, bw = pk->bw, rowb = pk->rowb, ub_c = pk->ub_c, ub_c2 = pk->ub_c2;
	if (cst && s == 0) {
		kg_mask_all(g);
		vdup_blocks(g, ub_c, rowb, pd->value);
		if (chan) {
			vdup_blocks(g, ub_c2, rowb, 0.0f);
			uint64_t m = 0;
			for (int l = 0; l < 64; l++)
				if (l % 16 < pd->chan_valid)
					m |= UINT64_C(1) << l;
			kg_mask(g, m, m);
			vdup_blocks(g, ub_c2, rowb, pd->value);
			kg_mask_all(g);
		}
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		return;
	}
	int par = (int)((s - (size_t)cst) % 2);
	int64_t u = b * pk->per + (int64_t)(s - (size_t)cst);
	int64_t idx[CC_PAD_MAX_RANK], k = u, xrow = 0, border = 0, last_c = 0;
	for (int q = r - 2; q >= 0; q--) {
		idx[q] = k % pd->ycnt[q];
		k /= pd->ycnt[q];
	}
	for (int q = 0; q + 1 < r; q++) {
		int64_t i = pad_map(pd, q, idx[q]);
		border |= i < 0;
		xrow = xrow * pd->xcnt[q] + (i < 0 ? 0 : i);
		if (q == pd->chan_axis)
			last_c = idx[q] == pd->ycnt[q] - 1;
	}
	int64_t cub = chan && last_c ? ub_c2 : ub_c;
	int64_t buf = par * rowb * 32, xoff = xrow * xw * 32, yoff = u * yw * 32;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
	if (!border) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, xoff, buf + bw * 32, 1, xw, 0, 0);
		if (!cst)
			for (int64_t j = 0; j < yw; j++) {
				if (j >= bw && j < bw + xw)
					continue;
				int64_t i = pad_map(pd, r - 1, j);
				kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, xoff + i * 32,
				       buf + j * 32, 1, 1, 0, 0);
			}
	}
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	if (border) {
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, yoff, cub, 1, yw, 0, 0);
	} else if (cst) {
		int64_t aw = yw - bw - xw;
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, yoff + bw * 32, buf + bw * 32, 1, xw,
		       0, 0);
		if (bw)
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, yoff, cub, 1, bw, 0, 0);
		if (aw)
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, yoff + (bw + xw) * 32, cub, 1,
			       aw, 0, 0);
	} else {
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, yoff, buf, 1, yw, 0, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
}

int cc_gen_pad(const struct soc_config *cfg, const struct cc_pad *pd, struct cc_prog *p,
	       unsigned *block_dim, char *err, size_t errlen)
{
	int r = pd->rank;
	if (r < 1 || r > CC_PAD_MAX_RANK) {
		snprintf(err, errlen, "Pad of rank %d is not supported yet", r);
		return -1;
	}
	int64_t rows = 1;
	for (int q = 0; q < r; q++) {
		int64_t after = pd->ycnt[q] - pd->xcnt[q] - pd->before[q];
		if (pd->xcnt[q] < 1 || pd->before[q] < 0 || after < 0) {
			snprintf(err, errlen, "Pad: this padding is not supported yet");
			return -1;
		}
		if (q + 1 < r)
			rows *= pd->ycnt[q];
	}
	int64_t xw = pd->xcnt[r - 1], yw = pd->ycnt[r - 1], bw = pd->before[r - 1];
	int64_t rowb = (yw + 7) / 8 * 8; /* blocks of a row buffer */
	int cst = pd->mode == CC_PAD_CONSTANT;
	int chan = cst && pd->chan_axis >= 0 && pd->chan_axis + 1 < r && pd->chan_valid < 16;
	int64_t ub_need = (2 + cst + chan) * rowb * 32;
	if (rowb > ISA_DMA_LEN_MAX || ub_need > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "Pad of rows of %lld blocks is not supported yet", (long long)yw);
		return -1;
	}
	int64_t ub_c = 2 * rowb * 32, ub_c2 = 3 * rowb * 32;
	struct padk q = { pd, r, cst, chan, rows, 0, xw, yw, bw, rowb, ub_c, ub_c2 };
	int64_t blocks = cc_split_work(rows, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 } },
			       .nsync = 1, .per = q.per, .units = rows, .prelude = cst,
			       .step = pad_step, .ctx = &q };
	return kg_emit_kernel(p, 0, 0, &ks, "Pad", err, errlen);
}
