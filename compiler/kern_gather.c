/* kern_gather.c: Gather of whole rows (kernels.h, cc_gen_gather).
 *
 * Unit u = o * nidx + i copies table row idx[i] of outer slice o to output
 * row u; rows are row_bytes of the device layout (a multiple of 32), so a
 * row is one DMA burst each way.  The indices live in GM as the host gave
 * them (int32 or int64): the scalar unit reads each with ldw.gm / ld.gm,
 * wraps a negative one (+rows, ONNX's convention) and clamps the result to
 * [0, rows-1].  ONNX leaves out-of-range indices undefined; clamping keeps
 * every DMA inside the table whatever the host sends.  Constant indices are
 * resolved at compile time (no scalar loads at all).
 *
 * Several rows are batched per synchronisation: they gather into one UB
 * buffer (one GM->UB burst each) and leave in one UB->GM DMA, since the
 * output rows of a batch are consecutive.  Two buffers alternate so the
 * gathering of one batch overlaps the write-back of the other, and units
 * are split over the cores.  A row larger than half the UB moves in pieces.
 * Arguments: 0 table, 1 indices (unused with cidx), 2 output. */
#include <stdio.h>

#include "kernels.h"

enum { R_TAB = 1, R_IDX = 2, R_OUT = 3, R_ZERO = 4, R_MAXI = 5, R_V = 6, R_T = 7, R_GM = 10,
       R_UB = 16, R_BIDX = 20, R_TMP = 21 };

static void rrr(struct cc_prog *p, enum isa_op op, int rd, int rs1, int rs2)
{
	CC_I(p, RRR, op, .rd = rd, .rs1 = rs1, .rs2 = rs2);
}

static void rri(struct cc_prog *p, enum isa_op op, int rd, int rs1, int64_t imm)
{
	CC_I(p, RRI, op, .rd = rd, .rs1 = rs1, .imm = imm);
}

/* R_GM = the GM address of (outer slice o, row idx[i], byte off) of the table. */
static void row_addr(struct cc_prog *p, const struct cc_gather *gd, int64_t o, int64_t i,
		     int64_t off)
{
	int64_t base = o * gd->rows * gd->row_bytes + off;
	if (gd->cidx) {
		int64_t j = gd->cidx[i] < 0 ? gd->cidx[i] + gd->rows : gd->cidx[i];
		j = j < 0 ? 0 : j > gd->rows - 1 ? gd->rows - 1 : j;
		cc_addi(p, R_GM, R_TAB, base + j * gd->row_bytes);
		return;
	}
	rri(p, gd->idx_bytes == 8 ? ISA_OP_LD_GM : ISA_OP_LDW_GM, R_V, R_IDX, i * gd->idx_bytes);
	rri(p, ISA_OP_SHRI, R_T, R_V, 63); /* 1 when negative */
	rri(p, ISA_OP_MULI, R_T, R_T, gd->rows);
	rrr(p, ISA_OP_ADD, R_V, R_V, R_T);
	rrr(p, ISA_OP_MAX, R_V, R_V, R_ZERO);
	rrr(p, ISA_OP_MIN, R_V, R_V, R_MAXI);
	rri(p, ISA_OP_MULI, R_V, R_V, gd->row_bytes);
	rrr(p, ISA_OP_ADD, R_GM, R_TAB, R_V);
	if (base)
		cc_addi(p, R_GM, R_GM, base);
}

int cc_gen_gather(const struct soc_config *cfg, const struct cc_gather *gd, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen)
{
	if (gd->rows < 1 || gd->nidx < 1 || gd->outer < 1 || gd->row_bytes < 32 ||
	    gd->row_bytes % 32 || (!gd->cidx && gd->idx_bytes != 4 && gd->idx_bytes != 8)) {
		snprintf(err, errlen, "gather: rows of a positive multiple of 32 bytes, int32 or "
			 "int64 indices expected");
		return -1;
	}
	int64_t ub_half = (int64_t)cfg->ub_size_kb * 1024 / 2 / 32 * 32;
	int64_t piece = gd->row_bytes < ub_half ? gd->row_bytes : ub_half;
	int64_t npieces = (gd->row_bytes + piece - 1) / piece;
	/* rows per batch: as many as a buffer holds, at most 32 so that the
	 * scalar's index loads of one batch overlap the other's DMAs */
	int64_t batch = npieces > 1 ? 1 : ub_half / gd->row_bytes;
	batch = batch > 32 ? 32 : batch;
	int64_t units = gd->outer * gd->nidx;
	int64_t per, blocks = cc_split_work(units, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_TAB, 0);
	if (!gd->cidx)
		cc_ldarg(p, R_IDX, 1);
	cc_ldarg(p, R_OUT, 2);
	cc_li(p, R_ZERO, 0);
	cc_li(p, R_MAXI, gd->rows - 1);
	int labels[CC_MAX_BLOCKS];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2);
		int64_t u1 = (b + 1) * per < units ? (b + 1) * per : units;
		int par = 0;
		for (int64_t u0 = b * per; u0 < u1 && !p->over; u0 += batch) {
			int64_t ub = u0 + batch < u1 ? u0 + batch : u1;
			for (int64_t pc = 0; pc < npieces; pc++, par ^= 1) {
				int64_t off = pc * piece;
				int64_t len = gd->row_bytes - off < piece ? gd->row_bytes - off : piece;
				cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
				for (int64_t u = u0; u < ub; u++) {
					row_addr(p, gd, u / gd->nidx, u % gd->nidx, off);
					cc_li(p, R_UB, par * ub_half + (u - u0) * len);
					cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, len / 32, 0, 0);
				}
				cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
				cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
				cc_addi(p, R_GM, R_OUT, u0 * gd->row_bytes + off);
				cc_li(p, R_UB, par * ub_half);
				/* whole rows: one burst; pieces of one row: also one */
				cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, (ub - u0) * len / 32, 0, 0);
				cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
			}
		}
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2);
		cc_end(p);
	}
	return 0;
}
