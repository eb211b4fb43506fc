/* kern_transpose.c: swapping the last two axes of a padded ND tensor,
 * y[b][c][r] = x[b][r][c], with the vector unit's 16x16 transpose.
 * A band of 16 input rows is loaded; one vtranspose per 16-column block
 * (a single instruction repeating over the blocks) turns each 16x16 block
 * into 16 output rows' 16-column piece, which one DMA per block writes.
 * Double-buffered; bands dealt to the blocks in contiguous runs.
 * Arguments: 0 x ([batch][R][C16]), 1 y ([batch][C][R16]). */
#include <stdio.h>

#include "kernels.h"

enum { R_X = 1, R_Y = 2, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16 };

int cc_gen_transpose(const struct soc_config *cfg, int64_t batch, int64_t rows, int64_t cols,
		     struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t c16 = cc_pad16(cols), r16 = cc_pad16(rows), nb = c16 / 16;
	int64_t band = 16 * c16 * 2; /* bytes of 16 input rows, and of their transpose */
	if (nb > 255 || 4 * band > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "transposing rows of %lld elements is not supported yet",
			 (long long)cols);
		return -1;
	}
	int64_t bands = (rows + 15) / 16, total = batch * bands;
	int64_t blocks = total < cfg->core_count ? total : cfg->core_count;
	if (blocks > 1024)
		blocks = 1024;
	int64_t per = (total + blocks - 1) / blocks;
	blocks = (total + per - 1) / per;
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_Y, 1);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 1);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 0);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 1);
		int par = 0;
		for (int64_t u = b * per; u < (b + 1) * per && u < total; u++, par ^= 1) {
			int64_t bt = u / bands, i = u % bands;
			int64_t n = rows - 16 * i < 16 ? rows - 16 * i : 16;
			int64_t ub_in = par * band, ub_out = 2 * band + par * band;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_addi(p, R_GM, R_X, ((bt * rows + 16 * i) * c16) * 2);
			cc_li(p, R_UB, ub_in);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, n * nb, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			cc_li(p, R_UB, ub_out);
			cc_li(p, R_UB + 1, ub_in);
			struct isa_insn *in = cc_emit(p, ISA_OP_VTRANSPOSE);
			in->rd = R_UB;
			in->rs1 = R_UB + 1;
			in->dt = ISA_DT_F16;
			in->rep = nb;
			in->s0b = nb; /* source rows are a whole padded row apart */
			in->s0r = 1;  /* the next 16-column block */
			in->db = 1;
			in->dr = 16;  /* one 512-byte block per repeat */
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			for (int64_t j = 0; j < nb; j++) {
				int64_t valid = cols - 16 * j < 16 ? cols - 16 * j : 16;
				cc_addi(p, R_GM, R_Y, ((bt * cols + 16 * j) * r16 + 16 * i) * 2);
				cc_li(p, R_UB, ub_out + j * 512);
				cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, valid, 1, 0, r16 / 16 - 1);
			}
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 1);
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 0);
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, 1);
		cc_end(p);
	}
	return 0;
}
