/* kern_copy.c: strided copies in global memory, staged through the UB:
 * nchunks chunks of chunk_bytes, source chunk i at src + i*src_stride,
 * destination at dst + i*dst_stride (all multiples of 32 bytes).  Concat
 * along channels of NC1HWC0 tensors is such a copy per input.
 * Arguments: 0 source, 1 destination. */
#include <stdio.h>

#include "kernels.h"

enum { R_SRC = 1, R_DST = 2, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16 };

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
	int64_t per, blocks = cc_split_work(total, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2);
		int par = 0;
		for (int64_t w = b * per; w < (b + 1) * per && w < total && !p->over; w++, par ^= 1) {
			int64_t ch = w / per_chunk, off = (w % per_chunk) * piece;
			int64_t len = chunk_bytes - off < piece ? chunk_bytes - off : piece;
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
			cc_addi(p, R_GM, R_SRC, ch * src_stride + off);
			cc_li(p, R_UB, par * ub_half);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, len / 32, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, R_DST, ch * dst_stride + off);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, len / 32, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
		}
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2);
		cc_end(p);
	}
	return 0;
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
	int64_t bands = (rows + 15) / 16;
	int64_t per, blocks = cc_split_work(bands, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int par = 0;
		for (int64_t u = b * per; u < (b + 1) * per && u < bands && !p->over; u++, par ^= 1) {
			int64_t r0 = 16 * u, nr = rows - r0 < 16 ? rows - r0 : 16;
			int64_t ua = par * set, ut = ua + a_sz * 32, ubb = ut + t_sz * 32,
				uc = ubb + b_sz * 32;
			int64_t yoff = (r0 * yb + j0) * 32;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			if (s) {
				cc_addi(p, R_GM, R_DST, yoff);
				cc_li(p, R_UB, ut);
				cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, nr, 1, yb - 1, 0);
			}
			cc_addi(p, R_GM, R_SRC, r0 * nbk * 32);
			cc_li(p, R_UB, ua);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, nr * nbk, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			if (s) { /* the shared block's columns into column space */
				cc_li(p, R_UB, ubb);
				cc_li(p, R_UB + 1, ut);
				CC_I(p, VUN, ISA_OP_VTRANSPOSE, .rd = R_UB, .rs1 = R_UB + 1,
				     .dt = ISA_DT_F16, .rep = 1, .s0b = 1, .db = 1, .s0r = 16,
				     .dr = 16);
			}
			/* input block j's columns become blocks s + 16j .. s + 16j + 15 */
			cc_li(p, R_UB, ubb + s * 32);
			cc_li(p, R_UB + 1, ua);
			CC_I(p, VUN, ISA_OP_VTRANSPOSE, .rd = R_UB, .rs1 = R_UB + 1,
			     .dt = ISA_DT_F16, .rep = nbk,
			     .s0b = nbk /* input rows are a padded row apart */,
			     .s0r = 1, .db = 1, .dr = 16);
			/* and back: 16 columns per output block */
			cc_li(p, R_UB, uc);
			cc_li(p, R_UB + 1, ubb);
			CC_I(p, VUN, ISA_OP_VTRANSPOSE, .rd = R_UB, .rs1 = R_UB + 1,
			     .dt = ISA_DT_F16, .rep = nbo, .s0b = 1, .s0r = 16,
			     .db = nbo /* output rows of nbo blocks in the UB */,
			     .dr = 1);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, R_DST, yoff);
			cc_li(p, R_UB, uc);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, nr, nbo, 0, yb - nbo);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	return 0;
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
	int64_t per, blocks = cc_split_work((nruns + k - 1) / k, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_DST, 0);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_ub_zero(p, R_UB, R_UB + 2, 0, k * run_blocks);
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
		cc_li(p, R_UB, 0);
		for (int64_t w = b * per; w < (b + 1) * per && w * k < nruns && !p->over; w++) {
			int64_t n = nruns - w * k < k ? nruns - w * k : k;
			cc_addi(p, R_GM, R_DST, (off + w * k * stride_blocks) * 32);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, n, run_blocks, 0,
			       stride_blocks - run_blocks);
		}
		cc_end(p);
	}
	return 0;
}
