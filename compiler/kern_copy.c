/* kern_copy.c: strided copies in global memory, staged through the UB:
 * nchunks chunks of chunk_bytes, source chunk i at src + i*src_stride,
 * destination at dst + i*dst_stride (all multiples of 32 bytes).  Concat
 * along channels of NC1HWC0 tensors is such a copy per input.
 * Arguments: 0 source, 1 destination. */
#include <stdio.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments in R_SRC, R_DST (kern_gen.h); the vector
 * operands' UB addresses loaded into x16..x18; the kernel builder's cache
 * (the DMAs' UB addresses) x19..x24. */
enum { R_UB = 16, R_CACHE = 19, R_CACHE_END = 25 };

/* cc_gen_copy's plan: a piece of a chunk a step, the two UB halves in turn. */
struct copy {
	int64_t chunk_bytes, src_stride, dst_stride, ub_half, piece, per_chunk, total, per;
};

static void copy_piece(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct copy *q = ctx;
	struct cc_prog *p = g->p;
	int par = (int)(i % 2);
	int64_t w = b * q->per + (int64_t)i;
	int64_t ch = w / q->per_chunk, off = (w % q->per_chunk) * q->piece;
	int64_t len = q->chunk_bytes - off < q->piece ? q->chunk_bytes - off : q->piece;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, ch * q->src_stride + off, par * q->ub_half, 1, len / 32,
	       0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, ch * q->dst_stride + off, par * q->ub_half, 1, len / 32,
	       0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
}

int cc_gen_copy(const struct soc_config *cfg, int64_t nchunks, int64_t chunk_bytes,
		int64_t src_stride, int64_t dst_stride, struct cc_prog *p, unsigned *block_dim,
		char *err, size_t errlen)
{
	if (nchunks < 1 || chunk_bytes < 32 || chunk_bytes % 32 || src_stride % 32 ||
	    dst_stride % 32) {
		snprintf(err, errlen, "copy: sizes must be positive multiples of 32 bytes");
		return -1;
	}
	/* pieces of at most half the UB (two buffers), in whole blocks */
	int64_t ub_half = (int64_t)cfg->ub_size_kb * 1024 / 2 / 32 * 32;
	int64_t piece = chunk_bytes < ub_half ? chunk_bytes : ub_half;
	int64_t per_chunk = (chunk_bytes + piece - 1) / piece, total = nchunks * per_chunk;
	struct copy q = { chunk_bytes, src_stride, dst_stride, ub_half, piece, per_chunk, total, 0 };
	int64_t blocks = cc_split_work(total, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 } },
			       .nsync = 1, .per = q.per, .units = total, .step = copy_piece,
			       .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "copy", err, errlen);
}

/* cc_gen_concat_last's plan: a band of 16 rows a step, two buffer sets. */
struct concat {
	int64_t rows, s, j0, nbk, nbo, yb, a_sz, t_sz, b_sz, set, bands, per;
};

static void concat_band(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct concat *q = ctx;
	struct cc_prog *p = g->p;
	int64_t s = q->s, nbk = q->nbk, nbo = q->nbo, yb = q->yb;
	int par = (int)(i % 2);
	int64_t u = b * q->per + (int64_t)i;
	int64_t r0 = 16 * u, nr = q->rows - r0 < 16 ? q->rows - r0 : 16;
	int64_t ua = par * q->set, ut = ua + q->a_sz * 32, ubb = ut + q->t_sz * 32,
		uc = ubb + q->b_sz * 32;
	int64_t yoff = (r0 * yb + q->j0) * 32;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	if (s) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_DST, yoff, ut, nr, 1, yb - 1, 0);
	}
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, r0 * nbk * 32, ua, 1, nr * nbk, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	if (s) { /* the shared block's columns into column space */
		kg_transpose(g, ubb, ut, 1, 1, 1, 16, 16);
	}
	/* input block j's columns become blocks s + 16j .. s + 16j + 15 (input
	 * rows a padded row apart) */
	kg_transpose(g, ubb + s * 32, ua, nbk, 1, nbk, 16, 1);
	/* and back: 16 columns per output block, output rows of nbo blocks in
	 * the UB */
	kg_transpose(g, uc, ubb, nbo, nbo, 1, 1, 16);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, yoff, uc, nr, nbo, 0, yb - nbo);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

/* Concat along the padded last axis, one input per kernel (kernels.h).
 * DMA moves whole 32-byte blocks, so an input landing at a column that is
 * not a multiple of 16 needs its lanes moved: a band of 16 rows goes
 * through "column space", where a 16x16 vtranspose has turned every column
 * into one block; there a column can be put at any block, i.e. any column,
 * and a second vtranspose turns the band back into rows.  The output block
 * shared with the previous input is read back first and transposed into the
 * same column space, so its columns left of off survive the merge. */
int cc_gen_concat_last(const struct soc_config *cfg, int64_t rows, int64_t cols, int64_t off,
		       int64_t ycols, struct cc_prog *p, unsigned *block_dim, char *err,
		       size_t errlen)
{
	int64_t s = off % 16, j0 = off / 16, nbk = cc_pad16(cols) / 16;
	int64_t nbo = (s + cols + 15) / 16, yb = cc_pad16(ycols) / 16;
	/* per buffer set, in blocks: A the input band, T the read-back block,
	 * B the column space (one spare tile for the input's last one), C the
	 * output band */
	int64_t a_sz = 16 * nbk, t_sz = 16, b_sz = 16 * (nbo + 1), c_sz = 16 * nbo;
	int64_t set = (a_sz + t_sz + b_sz + c_sz) * 32;
	if (rows < 1 || cols < 1 || off + cols > ycols || nbk > CC_VT_BAND_MAX ||
	    nbo > CC_VT_BAND_MAX ||
	    2 * set > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "Concat of rows of %lld elements along the last axis is not "
			 "supported yet", (long long)ycols);
		return -1;
	}
	struct concat q = { rows, s, j0, nbk, nbo, yb, a_sz, t_sz, b_sz, set, (rows + 15) / 16, 0 };
	int64_t blocks = cc_split_work(q.bands, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .per = q.per, .units = q.bands, .step = concat_band,
			       .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "Concat along the last axis", err,
			      errlen);
}

/* cc_gen_zero_runs' plan: step 0 zeroes the UB once per core, each step
 * after it one DMA of k runs. */
struct zeros {
	int64_t off, nruns, run_blocks, stride_blocks, k, per;
};

static void zero_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct zeros *q = ctx;
	struct cc_prog *p = g->p;
	if (i == 0) {
		cc_ub_zero(p, R_UB, R_UB + 2, 0, q->k * q->run_blocks);
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		return;
	}
	int64_t w = b * q->per + (int64_t)i - 1;
	int64_t n = q->nruns - w * q->k < q->k ? q->nruns - w * q->k : q->k;
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (q->off + w * q->k * q->stride_blocks) * 32, 0, n,
	       q->run_blocks, 0, q->stride_blocks - q->run_blocks);
}

/* Zeros at nruns runs of run_blocks 32-byte blocks, stride_blocks apart,
 * from block off of the destination (the padding rows of a weight layout
 * built on the device).  The vector unit zeroes one UB buffer of whole runs
 * once per core; each DMA then writes as many runs as it holds, its bursts
 * reading the same zeros.  Arguments: 0 destination. */
int cc_gen_zero_runs(const struct soc_config *cfg, int64_t off, int64_t nruns, int64_t run_blocks,
		     int64_t stride_blocks, struct cc_prog *p, unsigned *block_dim, char *err,
		     size_t errlen)
{
	int64_t ub_blocks = (int64_t)cfg->ub_size_kb * 1024 / 32;
	if (nruns < 1 || run_blocks < 1 || stride_blocks < run_blocks || off < 0 ||
	    run_blocks > ub_blocks || run_blocks > ISA_DMA_LEN_MAX) {
		snprintf(err, errlen, "zero fill: bad runs (%lld of %lld blocks, stride %lld)",
			 (long long)nruns, (long long)run_blocks, (long long)stride_blocks);
		return -1;
	}
	/* runs per DMA: as many as the UB's zeros cover and one DMA's bursts
	 * count, but no more than there are (the vector unit zeroes them all) */
	int64_t k = ub_blocks / run_blocks;
	k = k < ISA_DMA_NBURST_MAX ? k : ISA_DMA_NBURST_MAX;
	k = k < nruns ? k : nruns;
	struct zeros q = { off, nruns, run_blocks, stride_blocks, k, 0 };
	int64_t blocks = cc_split_work((nruns + k - 1) / k, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_DST, 0);
	struct kg_steps ks = { .blocks = blocks, .sync = { { 0 } }, .nsync = 0, .per = q.per,
			       .units = (nruns + k - 1) / k, .prelude = 1, .step = zero_step,
			       .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "zero fill", err, errlen);
}
