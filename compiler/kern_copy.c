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
	int64_t blocks = total < cfg->core_count ? total : cfg->core_count;
	if (blocks > 1024)
		blocks = 1024;
	int64_t per = (total + blocks - 1) / blocks;
	blocks = (total + per - 1) / per;
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 1);
		int par = 0;
		for (int64_t w = b * per; w < (b + 1) * per && w < total; w++, par ^= 1) {
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
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 1);
		cc_end(p);
	}
	return 0;
}
