/* kern_softmax.c: softmax over the last axis of a padded ND tensor whose
 * rows fit one vector repeat (at most 128 elements).
 *
 * Per tile of rows: vcmax with the lane mask set to the row length gives one
 * maximum per row; the maxima are broadcast back along their rows by copying
 * each group of 16 into a 16x16 block (block stride 0) and transposing it,
 * which turns "16 maxima side by side" into "16 rows of one maximum each";
 * then x - max, exp, vcadd (fp32 accumulation) for the sums, their
 * reciprocals broadcast the same way, and a multiply.  Padding columns are
 * excluded by the mask from both reductions.  A scale other than 1 multiplies
 * x first (attention's 1/sqrt(d), moved here by pass_fuse_attention.c); a
 * mask (argument 2: rows of c16 fp16 values) is added after the scale, row
 * r / mask_div of it to row r (an attention mask [B,1,S] over scores
 * [B,S,S]: mask_div = S).
 * LogSoftmax (log): x - max - ln(sum(exp(x - max))).  The exponentials go
 * to a buffer of their own so that x - max survives to the final subtract:
 * taking ln of exp(x - max) instead would turn every value that exp
 * underflows in fp16 (x - max < -17) into -inf.
 * Arguments: 0 x, 1 y. */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

enum { R_X = 1, R_Y = 2, R_M = 3, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16, R_N = 24 };

static struct isa_insn *vec(struct cc_prog *p, enum isa_op op, int64_t dst, int64_t src0,
			    int64_t src1, int64_t rep)
{
	cc_li(p, R_UB, dst);
	cc_li(p, R_UB + 1, src0);
	if (src1 >= 0)
		cc_li(p, R_UB + 2, src1);
	struct isa_insn *in = cc_emit(p, op);
	in->rd = R_UB;
	in->rs1 = R_UB + 1;
	in->rs2 = R_UB + 2;
	in->dt = ISA_DT_F16;
	in->rep = rep;
	return in;
}

static void mask_lanes(struct cc_prog *p, int64_t lanes)
{
	cc_li(p, R_N, lanes);
	struct isa_insn *in = cc_emit(p, ISA_OP_VMASKN);
	in->rs1 = R_N;
}

/* One value per row at red (n16 of them) -> one 32-byte block per row at bc. */
static void broadcast_rows(struct cc_prog *p, int64_t red, int64_t tmp, int64_t bc, int64_t n16)
{
	for (int64_t g = 0; g < n16 / 16; g++) {
		struct isa_insn *in = vec(p, ISA_OP_VMOV, tmp + g * 512, red + g * 32, -1, 2);
		in->s0b = 0;
		in->s0r = 0;
	}
	struct isa_insn *in = vec(p, ISA_OP_VTRANSPOSE, bc, tmp, -1, n16 / 16);
	in->dr = 16;
	in->s0r = 16;
}

/* x (in place) op= the row's broadcast block, one instruction per column block. */
static void rows_op(struct cc_prog *p, enum isa_op op, int64_t x, int64_t bc, int64_t nb,
		    int64_t n16)
{
	for (int64_t j = 0; j < nb; j++) {
		struct isa_insn *in = vec(p, op, x + j * 32, x + j * 32, bc, n16 / 8);
		in->db = nb;
		in->s0b = nb;
		in->dr = 8 * nb;
		in->s0r = 8 * nb;
		in->s1b = 1;
		in->s1r = 8;
	}
}

int cc_gen_softmax(const struct soc_config *cfg, int64_t rows, int64_t cols, float scale,
		   int64_t mask_div, int log, struct cc_prog *p, unsigned *block_dim, char *err,
		   size_t errlen)
{
	int64_t c16 = cc_pad16(cols), nb = c16 / 16;
	if (cols < 1 || cols > 128) {
		snprintf(err, errlen, "Softmax over %lld elements is not supported yet (at most "
				      "128)", (long long)cols);
		return -1;
	}
	/* rows per tile: a multiple of 16; repeats of every instruction <= 255 */
	int64_t tile = 32640 / c16 / 16 * 16;
	if (tile > 240)
		tile = 240;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	while (tile > 16 && tile * (c16 * 2 * (log ? 2 : 1) + 2 + 32 + 32) + 512 + c16 * 2 > ub)
		tile -= 16;
	/* with a mask, a tile never spans two mask rows: mask_div rows share one */
	int64_t seg = mask_div > 0 ? mask_div : rows;
	int64_t per_seg = (seg + tile - 1) / tile, segs = (rows + seg - 1) / seg;
	int64_t tiles = per_seg * segs;
	int64_t per, blocks = cc_split_work(tiles, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	int64_t ux = 0, red = tile * c16 * 2, tmp = red + (tile * 2 + 31) / 32 * 32;
	int64_t bc = tmp + tile * 32, mbuf = bc + tile * 32, ebuf = mbuf + c16 * 2;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_Y, 1);
	if (mask_div > 0)
		cc_ldarg(p, R_M, 2);
	struct isa_insn *in;
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
		for (int64_t t = b * per; t < (b + 1) * per && t < tiles; t++) {
			int64_t s0 = t / per_seg * seg, r0 = s0 + t % per_seg * tile;
			int64_t end = s0 + seg < rows ? s0 + seg : rows;
			int64_t n = end - r0 < tile ? end - r0 : tile;
			if (n <= 0)
				continue;
			int64_t n16 = (n + 15) / 16 * 16, off = r0 * c16 * 2;
			int64_t reps = (n16 * c16 + 127) / 128;
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
			cc_addi(p, R_GM, R_X, off);
			cc_li(p, R_UB, ux);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, n * nb, 0, 0);
			if (mask_div > 0) { /* this tile's mask row */
				cc_addi(p, R_GM, R_M, r0 / mask_div * c16 * 2);
				cc_li(p, R_UB, mbuf);
				cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, nb, 0, 0);
			}
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
			if (scale != 1.0f) { /* attention's 1/sqrt(d), fused */
				uint32_t bits;
				memcpy(&bits, &scale, 4);
				cc_li(p, R_N, bits);
				for (int64_t d = 0; d < reps; d += 255) {
					in = vec(p, ISA_OP_VMULS, ux + d * 256, ux + d * 256, -1,
						 reps - d < 255 ? reps - d : 255);
					in->rs2 = R_N;
				}
			}
			if (mask_div > 0) /* + the mask row, read with stride 0 for every row */
				for (int64_t j = 0; j < nb; j++) {
					in = vec(p, ISA_OP_VADD, ux + j * 32, ux + j * 32, mbuf + j * 32,
						 n16 / 8);
					in->db = in->s0b = nb;
					in->dr = in->s0r = 8 * nb;
					in->s1b = 0;
					in->s1r = 0;
				}
			/* max per row, over the row's own lanes */
			mask_lanes(p, cols);
			in = vec(p, ISA_OP_VCMAX, red, ux, -1, n16);
			in->s0r = nb;
			mask_lanes(p, 0);
			broadcast_rows(p, red, tmp, bc, n16);
			rows_op(p, ISA_OP_VSUB, ux, bc, nb, n16);
			int64_t e = log ? ebuf : ux; /* LogSoftmax keeps x - max */
			for (int64_t d = 0; d < reps; d += 255)
				vec(p, ISA_OP_VEXP, e + d * 256, ux + d * 256, -1,
				    reps - d < 255 ? reps - d : 255);
			mask_lanes(p, cols);
			in = vec(p, ISA_OP_VCADD, red, e, -1, n16);
			in->s0r = nb;
			mask_lanes(p, 0);
			vec(p, log ? ISA_OP_VLN : ISA_OP_VREC, red, red, -1, (n16 + 127) / 128);
			broadcast_rows(p, red, tmp, bc, n16);
			rows_op(p, log ? ISA_OP_VSUB : ISA_OP_VMUL, ux, bc, nb, n16);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
			cc_addi(p, R_GM, R_Y, off);
			cc_li(p, R_UB, ux);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, n * nb, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
		}
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
		cc_end(p);
	}
	return 0;
}
