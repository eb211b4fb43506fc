/* kern_bcast.c: a binary op between a tensor and a row vector broadcast
 * over its rows: y[r][j] = x[r][j] op v[j] (or v[j] op x[r][j]).
 *
 * In the padded ND layout a row is nb = C16/16 blocks, so one repeat (8
 * blocks) can take the same column block of 8 consecutive rows (block
 * stride nb) while the vector's block is read by every one of them (block
 * and repeat stride 0): one instruction per column block per tile.
 * Arguments: 0 x, 1 v (fp16 [C16]), 2 y. */
#include <stdio.h>

#include "kernels.h"

enum { R_X = 1, R_V = 2, R_Y = 3, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16 };

int cc_gen_rowbcast(const struct soc_config *cfg, enum cc_vop op, int64_t rows, int64_t cols,
		    int vec_first, struct cc_prog *p, unsigned *block_dim, char *err,
		    size_t errlen)
{
	static const enum isa_op isa[] = { [CC_V_ADD] = ISA_OP_VADD, [CC_V_SUB] = ISA_OP_VSUB,
					   [CC_V_MUL] = ISA_OP_VMUL, [CC_V_DIV] = ISA_OP_VDIV,
					   [CC_V_MAX] = ISA_OP_VMAX, [CC_V_MIN] = ISA_OP_VMIN };
	if (op > CC_V_MIN) {
		snprintf(err, errlen, "row broadcast: not a binary op");
		return -1;
	}
	int64_t c16 = cc_pad16(cols), nb = c16 / 16;
	if (nb > ISA_VEC_BSTRIDE_MAX) { /* nb is the block stride */
		snprintf(err, errlen, "broadcasting a row of %lld elements is not supported yet",
			 (long long)cols);
		return -1;
	}
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024, vbytes = (c16 * 2 + 31) / 32 * 32;
	int64_t tile = (ub - vbytes - 512) / (4 * c16 * 2) / 8 * 8; /* rows: 2 x (in, out) */
	if (tile > ISA_VEC_REP_MAX * 8)
		tile = ISA_VEC_REP_MAX * 8;
	if (tile < 8) {
		snprintf(err, errlen, "broadcasting a row of %lld elements is not supported yet",
			 (long long)cols);
		return -1;
	}
	int64_t tiles = (rows + tile - 1) / tile;
	int64_t per, blocks = cc_split_work(tiles, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	int64_t buf = tile * c16 * 2, ub_in = vbytes, ub_out = vbytes + 2 * buf;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_V, 1);
	cc_ldarg(p, R_Y, 2);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_li(p, R_UB, 0);
		cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_V, 1, vbytes / 32, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int par = 0;
		for (int64_t t = b * per; t < (b + 1) * per && t < tiles && !p->over; t++, par ^= 1) {
			int64_t r0 = t * tile, nr = rows - r0 < tile ? rows - r0 : tile;
			int64_t off = r0 * c16 * 2, rep = (nr + 7) / 8;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_addi(p, R_GM, R_X, off);
			cc_li(p, R_UB, ub_in + par * buf);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, nr * nb, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			for (int64_t j = 0; j < nb; j++) {
				cc_li(p, R_UB, ub_out + par * buf + j * 32);
				cc_li(p, R_UB + 1, ub_in + par * buf + j * 32);
				cc_li(p, R_UB + 2, j * 32);
				if (!vec_first)
					CC_I(p, VBIN, isa[op], .rd = R_UB, .rs1 = R_UB + 1,
					     .rs2 = R_UB + 2, .dt = ISA_DT_F16, .rep = rep, .db = nb,
					     .dr = 8 * nb, .s0b = nb, .s0r = 8 * nb, .s1b = 0,
					     .s1r = 0);
				else
					CC_I(p, VBIN, isa[op], .rd = R_UB, .rs1 = R_UB + 2,
					     .rs2 = R_UB + 1, .dt = ISA_DT_F16, .rep = rep, .db = nb,
					     .dr = 8 * nb, .s0b = 0, .s0r = 0, .s1b = nb,
					     .s1r = 8 * nb);
			}
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, R_Y, off);
			cc_li(p, R_UB, ub_out + par * buf);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, nr * nb, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	return 0;
}
