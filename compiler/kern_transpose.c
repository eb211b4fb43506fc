/* kern_transpose.c: swapping the last two axes of a padded ND tensor,
 * y[b][c][r] = x[b][r][c], with the vector unit's 16x16 transpose.
 * A band of 16 input rows is loaded; one vtranspose per 16-column block
 * (a single instruction repeating over the blocks) turns each 16x16 block
 * into 16 output rows' 16-column piece, which one DMA per block writes.
 * Double-buffered; bands dealt to the blocks in contiguous runs.
 * Arguments: 0 x ([batch][R][C16]), 1 y ([batch][C][R16]). */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments x, y in R_SRC, R_DST (kern_gen.h); the vector
 * operands' UB addresses loaded into x16..x18; the kernel builder's cache
 * (the DMAs' UB addresses) x19..x24. */
enum { R_X = R_SRC, R_Y = R_DST, R_UB = 16, R_CACHE = 19, R_CACHE_END = 25 };

/* A kernel's blocks of steps from x and y's arguments. */
static int emit_steps(struct cc_prog *p, const struct kg_steps *ks, char *err, size_t errlen)
{
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_Y, 1);
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, ks, "transpose", err, errlen);
}

/* Swapping the last two axes: its plan, a band of 16 rows a step. */
struct swap {
	int64_t rows, cols, c16, r16, nb, band, bands, total, per;
};

static void swap_band(struct kg *g, const void *ctx, int64_t b, size_t s)
{
	const struct swap *q = ctx;
	struct cc_prog *p = g->p;
	int64_t rows = q->rows, cols = q->cols, c16 = q->c16, r16 = q->r16, nb = q->nb;
	int par = (int)(s % 2);
	int64_t u = b * q->per + (int64_t)s, bt = u / q->bands, i = u % q->bands;
	int64_t n = rows - 16 * i < 16 ? rows - 16 * i : 16;
	int64_t ub_in = par * q->band, ub_out = 2 * q->band + par * q->band;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_X, ((bt * rows + 16 * i) * c16) * 2, ub_in, 1, n * nb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	/* source rows a whole padded row apart, the next 16-column block each
	 * repeat, one 512-byte block out per repeat */
	kg_transpose(g, ub_out, ub_in, nb, 1, nb, 16, 1);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	for (int64_t j = 0; j < nb; j++) {
		int64_t valid = cols - 16 * j < 16 ? cols - 16 * j : 16;
		kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, ((bt * cols + 16 * j) * r16 + 16 * i) * 2,
		       ub_out + j * 512, valid, 1, 0, r16 / 16 - 1);
	}
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_transpose(const struct soc_config *cfg, int64_t batch, int64_t rows, int64_t cols,
		     struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t c16 = cc_pad16(cols), r16 = cc_pad16(rows), nb = c16 / 16;
	int64_t band = 16 * c16 * 2; /* bytes of 16 input rows, and of their transpose */
	if (nb > CC_VT_BAND_MAX || 4 * band > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "transposing rows of %lld elements is not supported yet",
			 (long long)cols);
		return -1;
	}
	int64_t bands = (rows + 15) / 16, total = batch * bands;
	struct swap q = { rows, cols, c16, r16, nb, band, bands, total, 0 };
	int64_t blocks = cc_split_work(total, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .per = q.per, .units = q.total, .step = swap_band,
			       .ctx = &q };
	return emit_steps(p, &ks, err, errlen);
}

/* ---- any permutation, between any two block layouts -------------------- */

/* A DMA of n blocks whose GM side (block gm_blk past base) steps by stride
 * blocks (a single burst when they are contiguous); the UB side is
 * contiguous. */
static void run_dma(struct kg *g, enum isa_op op, int base, int64_t gm_blk, int64_t ub, int64_t n,
		    int64_t stride)
{
	if (stride == 1 || n == 1)
		kg_dma(g, op, base, gm_blk * 32, ub, 1, n, 0, 0);
	else if (op == ISA_OP_MOV_GM_UB)
		kg_dma(g, op, base, gm_blk * 32, ub, n, 1, stride - 1, 0);
	else
		kg_dma(g, op, base, gm_blk * 32, ub, n, 1, 0, stride - 1);
}

/* A permutation's plan (see cc_gen_permute), an item a step. */
struct perm {
	const struct cc_perm *pm;
	int r, lx, ly, lanes, rq, oq;
	int64_t cnt[CC_PERM_MAX_RANK];
	int64_t run, R, O, ochunks, orun, chunks, total, per, buf, sxr, syr;
};


/* A tile's rows between GM and the UB (op says which way): rows rows of n
 * blocks, a run of the GM side from block gb, row i at gb + i * rg blocks
 * whose blocks are sr apart, in the UB at ub, R blocks a row.  One transfer
 * when the run's blocks are contiguous and the rows do not overlap, else
 * one run per row. */
static void tile_rows_dma(struct kg *g, enum isa_op op, int base, int64_t gb, int64_t ub,
			  int64_t rows, int64_t n, int64_t rg, int64_t sr, int64_t R)
{
	if ((sr == 1 || n == 1) && rg >= n) {
		int in = op == ISA_OP_MOV_GM_UB;
		kg_dma(g, op, base, gb * 32, ub, rows, n, in ? rg - n : R - n, in ? R - n : rg - n);
	} else {
		for (int64_t i = 0; i < rows; i++)
			run_dma(g, op, base, gb + i * rg, ub + i * R * 32, n, sr);
	}
}
static void perm_item(struct kg *g, const void *ctx, int64_t b, size_t s)
{
	const struct perm *pl = ctx;
	const struct cc_perm *pm = pl->pm;
	struct cc_prog *p = g->p;
	int r = pl->r, lx = pl->lx, ly = pl->ly, lanes = pl->lanes, rq = pl->rq, oq = pl->oq;
	const int64_t *cnt = pl->cnt;
	int64_t run = pl->run, R = pl->R, O = pl->O, ochunks = pl->ochunks, orun = pl->orun;
	int64_t chunks = pl->chunks, buf = pl->buf, sxr = pl->sxr, syr = pl->syr;
	enum isa_pipe mid = lanes ? ISA_PIPE_V : ISA_PIPE_MTE3;
	int par = (int)(s % 2);
	int64_t u = b * pl->per + (int64_t)s;
	/* decode the item: the run chunk, then the other axes' indices */
	int64_t k = u / chunks, t0 = (u % chunks / ochunks) * R;
	int64_t o0 = (u % ochunks) * O, no = orun - o0 < O ? orun - o0 : O;
	int64_t n = run - t0 < R ? run - t0 : R;
	int64_t idx[CC_PERM_MAX_RANK] = { 0 };
	for (int q = r - 1; q >= 0; q--) {
		if (q == rq || q == oq)
			continue;
		idx[q] = k % cnt[q];
		k /= cnt[q];
	}
	if (rq >= 0)
		idx[rq] = t0;
	if (oq >= 0)
		idx[oq] = o0;
	int64_t xb = pm->x0, yb = pm->y0;
	for (int q = 0; q < r; q++) {
		/* in the transposing case the output lane axis is a
		 * 16-row side of the input tile, and vice versa */
		int64_t ix = lanes && q == ly ? 16 * idx[q] : idx[q];
		int64_t iy = lanes && q == lx ? 16 * idx[q] : idx[q];
		xb += ix * pm->sx[q];
		yb += iy * pm->sy[q];
	}
	int64_t ub_in = par * buf, ub_out = 2 * buf + par * buf;
	cc_wait_flag(p, mid, ISA_PIPE_MTE2, par);
	if (!lanes) {
		if (oq >= 0)
			kg_dma(g, ISA_OP_MOV_GM_UB, R_X, xb * 32, ub_in, no, n, pm->sx[oq] - n, 0);
		else
			run_dma(g, ISA_OP_MOV_GM_UB, R_X, xb, ub_in, n, sxr);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
		if (oq >= 0)
			kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, yb * 32, ub_in, no, n, 0, pm->sy[oq] - n);
		else
			run_dma(g, ISA_OP_MOV_UB_GM, R_Y, yb, ub_in, n, syr);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
		return;
	}
	/* rows of the tile: input rows are values of the output's
	 * lane axis, output rows values of the input's */
	int64_t va = pm->dims[ly] - 16 * idx[ly], vb = pm->dims[lx] - 16 * idx[lx];
	va = va < 16 ? va : 16;
	vb = vb < 16 ? vb : 16;
	int64_t ra = pm->sx[ly], rb = pm->sy[lx];
	tile_rows_dma(g, ISA_OP_MOV_GM_UB, R_X, xb, ub_in, va, n, ra, sxr, R);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	if (va < 16) /* the output's padding lanes: zeros, not stale UB */
		cc_ub_zero(p, R_UB, R_UB + 2, ub_in + va * R * 32, (16 - va) * R);
	/* UB rows R blocks apart, the next block of the run each repeat */
	kg_transpose(g, ub_out, ub_in, n, R, R, 1, 1);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	tile_rows_dma(g, ISA_OP_MOV_UB_GM, R_Y, yb, ub_out, vb, n, rb, syr, R);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}


int cc_gen_permute(const struct soc_config *cfg, const struct cc_perm *pm, struct cc_prog *p,
		   unsigned *block_dim, char *err, size_t errlen)
{
	int r = pm->rank, lx = pm->lane_x, ly = pm->lane_y, lanes = lx != ly;
	int64_t cnt[CC_PERM_MAX_RANK];
	for (int q = 0; q < r; q++) {
		/* a lane axis advances its block index every 16 elements; in the
		 * transposing case its 16 elements are one tile side */
		cnt[q] = (q == lx || q == ly) ? (pm->dims[q] + 15) / 16 : pm->dims[q];
		if (pm->dims[q] < 1) {
			snprintf(err, errlen, "transpose: empty tensors are not supported yet");
			return -1;
		}
	}
	/* the run axis: R of its blocks move per DMA burst (and per vtranspose
	 * repeat), preferably contiguous on both sides */
	int rq = -1;
	for (int q = 0; q < r; q++) {
		/* DMA gaps cannot step backwards: a reversed axis is walked item by item */
		if ((lanes && (q == lx || q == ly)) || cnt[q] < 2 || pm->sx[q] < 1 || pm->sy[q] < 1)
			continue;
		if (rq < 0)
			rq = q;
		int cq = (pm->sx[q] == 1) + (pm->sy[q] == 1), cr = (pm->sx[rq] == 1) + (pm->sy[rq] == 1);
		if (cq > cr || (cq == cr && cnt[q] > cnt[rq]))
			rq = q;
	}
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	/* transposing: 4 buffers (in/out, double-buffered) of 16 rows of R
	 * blocks; vtranspose's block strides are 8 bits.  Copying: 2 buffers */
	int64_t rmax = lanes ? ub / (4 * 16 * 32) : ub / (2 * 32);
	if (lanes && rmax > ISA_VEC_BSTRIDE_MAX)
		rmax = ISA_VEC_BSTRIDE_MAX;
	if (rmax > 4095)
		rmax = 4095;
	/* copying whole contiguous runs: a second, outer axis makes the bursts
	 * of one DMA (its strides must clear a run), so that an item moves
	 * more than a short row: per-DMA latency, not bandwidth, bounds
	 * small items */
	int oq = -1;
	if (!lanes && rq >= 0 && pm->sx[rq] == 1 && pm->sy[rq] == 1 && cnt[rq] <= rmax / 2)
		for (int q = 0; q < r; q++)
			if (q != rq && cnt[q] > 1 && pm->sx[q] >= cnt[rq] && pm->sy[q] >= cnt[rq] &&
			    (oq < 0 || cnt[q] > cnt[oq]))
				oq = q;
	int64_t run = rq >= 0 ? cnt[rq] : 1, others = 1;
	for (int q = 0; q < r; q++)
		if (q != rq && q != oq)
			others *= cnt[q];
	int64_t R, O = 1, ochunks = 1, orun = oq >= 0 ? cnt[oq] : 1;
	if (oq >= 0) {
		/* whole runs; split the outer axis so that every core gets work */
		R = run;
		int64_t split = others >= cfg->core_count ? 1
							  : (cfg->core_count + others - 1) / others;
		O = (orun + split - 1) / split;
		if (O > rmax / R)
			O = rmax / R;
		if (O > 4095)
			O = 4095;
		ochunks = (orun + O - 1) / O;
	} else {
		/* split the run so that every core gets work */
		int64_t split = others >= cfg->core_count ? 1
							  : (cfg->core_count + others - 1) / others;
		R = (run + split - 1) / split;
		if (R > rmax)
			R = rmax;
		if (R < 1)
			R = 1;
	}
	int64_t chunks = (run + R - 1) / R * ochunks, total = others * chunks;
	struct perm q = { pm, r, lx, ly, lanes, rq, oq, { 0 }, run, R, O, ochunks, orun, chunks,
			  total, 0, 0, 0, 0 };
	memcpy(q.cnt, cnt, sizeof cnt);
	int64_t blocks = cc_split_work(total, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	q.buf = lanes ? 16 * R * 32 : R * O * 32;
	q.sxr = rq >= 0 ? pm->sx[rq] : 1;
	q.syr = rq >= 0 ? pm->sy[rq] : 1;
	/* the buffers pass from the middle pipe (V transposing, else MTE3) back to MTE2 */
	struct kg_steps ks = { .blocks = blocks,
			       .sync = { { lanes ? ISA_PIPE_V : ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 },
					 { ISA_PIPE_MTE3, ISA_PIPE_V, 2 } },
			       .nsync = lanes ? 2 : 1, .per = q.per, .units = total,
			       .step = perm_item, .ctx = &q };
	return emit_steps(p, &ks, err, errlen);
}
