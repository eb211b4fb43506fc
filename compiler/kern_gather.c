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

#include "kern_gen.h"
#include "kern_roll.h"

/* Arguments table, indices, output in x1, x2, x8; x9 0 and x10 rows - 1
 * (the clamp), x11, x12 an index's arithmetic: clear of the builder's
 * fixed registers (x3..x7, kern_gen.h); its cache x16..x23. */
enum { R_TAB = R_SRC, R_IDX = R_DST, R_OUT = 8, R_ZERO = 9, R_MAXI = 10, R_V = 11, R_T = 12,
       R_CACHE = 16, R_CACHE_END = 24 };

static void rrr(struct cc_prog *p, enum isa_op op, int rd, int rs1, int rs2)
{
	CC_I(p, RRR, op, .rd = rd, .rs1 = rs1, .rs2 = rs2);
}

static void rri(struct cc_prog *p, enum isa_op op, int rd, int rs1, int64_t imm)
{
	CC_I(p, RRI, op, .rd = rd, .rs1 = rs1, .imm = imm);
}

/* The kernel's steps (kg_emit_steps): a batch of rows, or a piece of one
 * row, each; a batch's GM offsets, the indices' included, move by a
 * batch's rows, so a block's batches run as a loop and blocks alike share
 * one copy. */
struct ga_kern {
	const struct cc_gather *gd;
	int64_t per, units, batch, piece, npieces, ub_half;
};

/* Block b's units [b * per, return). */
static int64_t ga_end(const struct ga_kern *k, int64_t b)
{
	return (b + 1) * k->per < k->units ? (b + 1) * k->per : k->units;
}

static size_t ga_steps(const void *ctx, int64_t b)
{
	const struct ga_kern *k = ctx;
	return (size_t)((ga_end(k, b) - b * k->per + k->batch - 1) / k->batch * k->npieces);
}

/* Gather (outer slice o, row idx[i], byte off) of the table into UB ub. */
static void row_load(struct kg *g, const struct ga_kern *k, int64_t o, int64_t i, int64_t off,
		     int64_t ub, int64_t len)
{
	const struct cc_gather *gd = k->gd;
	struct cc_prog *p = g->p;
	int64_t base = o * gd->rows * gd->row_bytes + off;
	if (gd->cidx) {
		int64_t j = gd->cidx[i] < 0 ? gd->cidx[i] + gd->rows : gd->cidx[i];
		j = j < 0 ? 0 : j > gd->rows - 1 ? gd->rows - 1 : j;
		kg_dma(g, ISA_OP_MOV_GM_UB, R_TAB, base + j * gd->row_bytes, ub, 1, len / 32, 0,
		       0);
		return;
	}
	kg_ldgm(g, gd->idx_bytes == 8 ? ISA_OP_LD_GM : ISA_OP_LDW_GM, R_V, R_IDX,
		i * gd->idx_bytes);
	rri(p, ISA_OP_SHRI, R_T, R_V, 63); /* 1 when negative */
	rri(p, ISA_OP_MULI, R_T, R_T, gd->rows);
	rrr(p, ISA_OP_ADD, R_V, R_V, R_T);
	rrr(p, ISA_OP_MAX, R_V, R_V, R_ZERO);
	rrr(p, ISA_OP_MIN, R_V, R_V, R_MAXI);
	rri(p, ISA_OP_MULI, R_V, R_V, gd->row_bytes);
	/* one outer slice of whole rows: the table's address as the argument
	 * gave it (base 0 for every row, no offset for loops to move) */
	int whole = gd->outer == 1 && k->npieces == 1;
	rrr(p, ISA_OP_ADD, R_GM, whole ? R_TAB : kg_addr(g, R_GM, R_TAB, base), R_V);
	cc_dma(p, ISA_OP_MOV_GM_UB, kg_reg(g, ub), R_GM, 1, len / 32, 0, 0);
}

static void ga_step(struct kg *g, const void *ctx, int64_t b, size_t s)
{
	const struct ga_kern *k = ctx;
	const struct cc_gather *gd = k->gd;
	struct cc_prog *p = g->p;
	int64_t u1 = ga_end(k, b), u0 = b * k->per + (int64_t)s / k->npieces * k->batch;
	int64_t ub = u0 + k->batch < u1 ? u0 + k->batch : u1;
	int64_t off = (int64_t)s % k->npieces * k->piece;
	int64_t len = gd->row_bytes - off < k->piece ? gd->row_bytes - off : k->piece;
	int par = (int)(s % 2);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
	for (int64_t u = u0; u < ub; u++)
		row_load(g, k, u / gd->nidx, u % gd->nidx, off, par * k->ub_half + (u - u0) * len,
			 len);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	/* whole rows: one burst; pieces of one row: also one */
	kg_dma(g, ISA_OP_MOV_UB_GM, R_OUT, u0 * gd->row_bytes + off, par * k->ub_half, 1,
	       (ub - u0) * len / 32, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
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
	struct ga_kern k = { gd, per, units, batch, piece, npieces, ub_half };
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 } },
			       .nsync = 1, .nsteps = ga_steps, .step = ga_step, .ctx = &k };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "gather", err, errlen);
}
