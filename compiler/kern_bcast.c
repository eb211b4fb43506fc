/* kern_bcast.c: a binary op between a tensor and a row vector broadcast
 * over its rows: y[r][j] = x[r][j] op v[j] (or v[j] op x[r][j]).
 *
 * In the padded ND layout a row is nb = C16/16 blocks, so one repeat (8
 * blocks) can take the same column block of 8 consecutive rows (block
 * stride nb) while the vector's block is read by every one of them (block
 * and repeat stride 0): one instruction per column block per tile.
 * Arguments: 0 x, 1 v (fp16 [C16]), 2 y. */
#include <stdio.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments x, v, y in x1, x2, x8 (clear of the builder's
 * fixed registers x3..x7, kern_gen.h); the vector operands' UB addresses
 * loaded into x16..x18; the builder's cache (the DMAs' UB addresses)
 * x19..x24. */
enum { R_X = R_SRC, R_V = R_DST, R_Y = 8, R_UB = 16, R_CACHE = 19, R_CACHE_END = 25 };

/* The plan: step 0 loads v, each step after it a tile of rows, the two
 * buffers in turn; tiles alike run as a loop, blocks alike share one copy
 * (kg_emit_steps). */
struct rowb {
	enum isa_op op;
	int vec_first;
	int64_t rows, c16, nb, tile, tiles, per, vbytes, buf, ub_in, ub_out;
};

static void rowb_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct rowb *q = ctx;
	struct cc_prog *p = g->p;
	int64_t rows = q->rows, c16 = q->c16, nb = q->nb, tile = q->tile, buf = q->buf;
	int64_t ub_in = q->ub_in, ub_out = q->ub_out;
	if (i == 0) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_V, 0, 0, 1, q->vbytes / 32, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		return;
	}
	int par = (int)((i - 1) % 2);
	int64_t t = b * q->per + (int64_t)i - 1;
	int64_t r0 = t * tile, nr = rows - r0 < tile ? rows - r0 : tile;
	int64_t off = r0 * c16 * 2, rep = (nr + 7) / 8;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_X, off, ub_in + par * buf, 1, nr * nb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	for (int64_t j = 0; j < nb; j++) {
		cc_li(p, R_UB, ub_out + par * buf + j * 32);
		cc_li(p, R_UB + 1, ub_in + par * buf + j * 32);
		cc_li(p, R_UB + 2, j * 32);
		if (!q->vec_first)
			CC_I(p, VBIN, q->op, .rd = R_UB, .rs1 = R_UB + 1,
			     .rs2 = R_UB + 2, .dt = ISA_DT_F16, .rep = rep, .db = nb,
			     .dr = 8 * nb, .s0b = nb, .s0r = 8 * nb, .s1b = 0,
			     .s1r = 0);
		else
			CC_I(p, VBIN, q->op, .rd = R_UB, .rs1 = R_UB + 2,
			     .rs2 = R_UB + 1, .dt = ISA_DT_F16, .rep = rep, .db = nb,
			     .dr = 8 * nb, .s0b = 0, .s0r = 0, .s1b = nb,
			     .s1r = 8 * nb);
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, off, ub_out + par * buf, 1, nr * nb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

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
	int64_t buf = tile * c16 * 2;
	struct rowb q = { isa[op], vec_first, rows, c16, nb, tile, (rows + tile - 1) / tile, 0,
			  vbytes, buf, vbytes, vbytes + 2 * buf };
	int64_t blocks = cc_split_work(q.tiles, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_V, 1);
	cc_ldarg(p, R_Y, 2);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .per = q.per, .units = q.tiles, .prelude = 1,
			       .step = rowb_step, .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "row broadcast", err, errlen);
}
