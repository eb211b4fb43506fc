/* kern_bcast_nd.c: y = a op b with numpy (multidirectional) broadcasting,
 * over block layouts (padded ND rows of nb blocks, or NC1HWC0 seen as rows
 * of one block: see cc_gen_bcast_nd in kernels.h).
 *
 * The output's rows are cut into runs: the longest suffix of row axes over
 * which every operand either walks its rows contiguously ("flat") or stays
 * on one row ("fixed": a leading-axis broadcast).  A tile is a piece of one
 * run, so in a tile each operand is n consecutive rows or a single row: one
 * DMA burst each, and one vector instruction covers many rows (block stride
 * nb, or 0 for a fixed row).  An operand whose last axis is broadcast
 * ("lane": [..., 1] against [..., C]) has one value per row, at lane 0 of a
 * one-block row; vtranspose gathers 16 rows' lane 0 into one block, vbrcb
 * then spreads each value over a whole block, read with block stride 0
 * across the row.  Tiles are split over the cores and double-buffered
 * (event ids 0/1 guard the two buffer sets), as in kern_vchain.c. */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments a, b, y in x1, x2, x8 (clear of the builder's
 * fixed registers x3..x7, kern_gen.h); the vector operands' UB addresses
 * loaded into x16..x18; the builder's cache (the DMAs' UB addresses)
 * x19..x24. */
enum { R_A = R_SRC, R_B = R_DST, R_Y = 8, R_UB = 16, R_CACHE = 19, R_CACHE_END = 25 };

static int64_t pad(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* A vector instruction of format FMT: dst, src0 (rs1) and src1 (rs2, where
 * the format has it) loaded into R_UB.. R_UB + 2, fp16, rep repeats; the
 * strides as CC_I's fields. */
#define VOP(p, FMT, op, d, s0, s1, rep_, ...)                                              \
	do {                                                                               \
		cc_li(p, R_UB, d);                                                         \
		cc_li(p, R_UB + 1, s0);                                                    \
		cc_li(p, R_UB + 2, s1);                                                    \
		CC_I(p, FMT, op, .rd = R_UB, .rs1 = R_UB + 1, .dt = ISA_DT_F16,            \
		     .rep = (rep_), __VA_ARGS__);                                          \
	} while (0)

/* The plan (see cc_gen_bcast_nd): a tile a step, the two buffer sets in
 * turn; tiles alike run as a loop, blocks alike share one copy
 * (kg_emit_steps). */
struct bnd {
	const struct cc_bcast *bc;
	enum isa_op op;
	int s, form_a, flat[2];
	int64_t nb, dims[CC_BCAST_MAX_RANK], rs[2][CC_BCAST_MAX_RANK], rb[2];
	int64_t run, tile, tpr, tiles, per, set, off_buf[2], off_t[2], off_e[2], off_y;
};

static void bnd_tile(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct bnd *q = ctx;
	const struct cc_bcast *bc = q->bc;
	struct cc_prog *p = g->p;
	int s = q->s;
	const int *flat = q->flat;
	const int64_t *dims = q->dims, *rb = q->rb, *off_buf = q->off_buf, *off_t = q->off_t,
		      *off_e = q->off_e;
	int64_t nb = q->nb, run = q->run, tile = q->tile, tpr = q->tpr;
	int par = (int)(i % 2);
	int64_t t = b * q->per + (int64_t)i;
	int64_t o = t / tpr, r0 = t % tpr * tile;
	int64_t n = run - r0 < tile ? run - r0 : tile;
	/* each operand's first row: the outer index's digits */
	int64_t row[2] = { 0, 0 }, rem = o;
	for (int j = s - 1; j >= 0; j--) {
		int64_t d = rem % dims[j];
		rem /= dims[j];
		row[0] += d * q->rs[0][j];
		row[1] += d * q->rs[1][j];
	}
	int64_t base = par * q->set;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	for (int k = 0; k < 2; k++) {
		int64_t first = row[k] + (flat[k] ? r0 : 0);
		int64_t cnt = flat[k] ? n : 1;
		kg_dma(g, ISA_OP_MOV_GM_UB, k ? R_B : R_A, first * rb[k] * 32, base + off_buf[k], 1,
		       cnt * rb[k], 0, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	/* where row r, column block j of each operand is: addr + r*rstep + j*cstep */
	int64_t addr[2], rstep[2], cstep[2];
	for (int k = 0; k < 2; k++) {
		if (bc->lane[k]) {
			int64_t cnt = flat[k] ? n : 1, grp = (cnt + 15) / 16;
			/* lane 0 of 16 rows per repeat into one block:
			 * group g's row 0 lands at block g (db = groups) */
			VOP(p, VUN, ISA_OP_VTRANSPOSE, base + off_t[k],
			    base + off_buf[k], 0, grp, .db = grp, .dr = 1, .s0b = 1,
			    .s0r = 16);
			VOP(p, VUN, ISA_OP_VBRCB, base + off_e[k], base + off_t[k],
			    0, (cnt + 7) / 8, .db = 1, .dr = 8);
			addr[k] = base + off_e[k];
			rstep[k] = flat[k] ? 1 : 0;
			cstep[k] = 0;
		} else {
			addr[k] = base + off_buf[k];
			rstep[k] = flat[k] ? nb : 0;
			cstep[k] = 1;
		}
	}
	int64_t ya = base + q->off_y;
	if (q->form_a) {
		for (int64_t j = 0; j < nb; j++) {
			VOP(p, VBIN, q->op, ya + j * 32,
			    addr[0] + j * cstep[0] * 32, addr[1] + j * cstep[1] * 32,
			    (n + 7) / 8, .rs2 = R_UB + 2, .db = nb, .dr = 8 * nb,
			    .s0b = rstep[0], .s0r = 8 * rstep[0], .s1b = rstep[1],
			    .s1r = 8 * rstep[1]);
		}
	} else {
		for (int64_t r = 0; r < n; r++) {
			VOP(p, VBIN, q->op, ya + r * nb * 32,
			    addr[0] + r * rstep[0] * 32, addr[1] + r * rstep[1] * 32,
			    (nb + 7) / 8, .rs2 = R_UB + 2, .db = 1, .dr = 8,
			    .s0b = cstep[0], .s0r = 8 * cstep[0], .s1b = cstep[1],
			    .s1r = 8 * cstep[1]);
		}
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, (o * run + r0) * nb * 32, ya, 1, n * nb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_bcast_nd(const struct soc_config *cfg, const struct cc_bcast *bc, struct cc_prog *p,
		    unsigned *block_dim, char *err, size_t errlen)
{
	static const enum isa_op isa[] = { [CC_V_ADD] = ISA_OP_VADD, [CC_V_SUB] = ISA_OP_VSUB,
					   [CC_V_MUL] = ISA_OP_VMUL, [CC_V_DIV] = ISA_OP_VDIV,
					   [CC_V_MAX] = ISA_OP_VMAX, [CC_V_MIN] = ISA_OP_VMIN };
	if (bc->op > CC_V_MIN || bc->rank < 0 || bc->rank > CC_BCAST_MAX_RANK || bc->nb < 1) {
		snprintf(err, errlen, "broadcast: bad arguments");
		return -1;
	}
	const int64_t nb = bc->nb;
	/* drop row axes of size 1: they never move an index */
	int rank = 0;
	int64_t dims[CC_BCAST_MAX_RANK] = { 0 }, rs[2][CC_BCAST_MAX_RANK] = { { 0 } };
	for (int i = 0; i < bc->rank; i++)
		if (bc->dims[i] != 1) {
			dims[rank] = bc->dims[i];
			rs[0][rank] = bc->rs[0][i];
			rs[1][rank] = bc->rs[1][i];
			rank++;
		}
	/* the run: the longest suffix where each operand is flat or fixed */
	int flat[2] = { 1, 1 }, fixed[2] = { 1, 1 }, s = rank;
	int64_t run = 1;
	while (s > 0) {
		int f2[2], x2[2], ok = 1;
		for (int k = 0; k < 2; k++) {
			f2[k] = flat[k] && rs[k][s - 1] == run;
			x2[k] = fixed[k] && rs[k][s - 1] == 0;
			ok = ok && (f2[k] || x2[k]);
		}
		if (!ok)
			break;
		s--;
		run *= dims[s];
		for (int k = 0; k < 2; k++) {
			flat[k] = f2[k];
			fixed[k] = x2[k];
		}
	}
	int64_t outer = 1;
	for (int i = 0; i < s; i++)
		outer *= dims[i];
	/* a run of one row: both "fixed", which is the same thing */
	for (int k = 0; k < 2; k++)
		if (fixed[k])
			flat[k] = 0;
	int64_t rb[2] = { bc->lane[0] ? 1 : nb, bc->lane[1] ? 1 : nb };

	/* the buffer set for a tile of `tile` rows: each operand's rows (one
	 * row for a fixed one), for a lane operand also the transposed and the
	 * spread blocks (whole transpose groups of 16 rows: one block a row),
	 * then the output; full rows come in whole repeats of 8 (form A), or
	 * exactly (form B only: rows too wide for 8 to fit), 8 spare blocks
	 * each as form B's last repeat reaches past a row */
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t tile = run < 2032 ? run : 2032; /* vtranspose groups, repeats <= ISA_VEC_REP_MAX */
	/* small enough that every core gets a tile, if there are rows for it
	 * (8 at least: a whole repeat) */
	int64_t spread = pad((outer * run + cfg->core_count - 1) / cfg->core_count, 8);
	if (tile > spread)
		tile = spread;
	int64_t off_buf[2], off_t[2] = { 0, 0 }, off_e[2] = { 0, 0 }, off_y = 0, set = 0;
	int only_b = 0;
	for (;;) {
		for (int exact = 0; exact < 2; exact++) {
			int64_t t16 = pad(tile, 16), rows = exact ? tile : pad(tile, 8), o = 0;
			for (int k = 0; k < 2; k++) {
				off_buf[k] = o;
				o += ((bc->lane[k] ? t16 : flat[k] ? rows * rb[k] : rb[k]) + 8) * 32;
				if (bc->lane[k]) {
					off_t[k] = o;
					o += t16 * 32;
					off_e[k] = o;
					o += (t16 + 8) * 32;
				}
			}
			off_y = o;
			o += (rows * nb + 8) * 32;
			set = o;
			only_b = exact;
			if (2 * set <= ub || tile >= 8)
				break;
		}
		if (2 * set <= ub || tile == 1)
			break;
		tile = tile > 32 ? tile / 16 * 16 - 16 : tile / 2;
	}
	/* form A: one instruction per column block, 8 rows a repeat (strides
	 * nb <= ISA_VEC_BSTRIDE_MAX); form B: one per row, 8 blocks a repeat */
	if (2 * set > ub || pad(nb, 8) / 8 > ISA_VEC_REP_MAX) {
		snprintf(err, errlen, "broadcasting rows of %lld blocks is not supported yet",
			 (long long)nb);
		return -1;
	}
	int64_t ca = nb * (4 + pad(tile, 8) / 8), cb = tile * (4 + pad(nb, 8) / 8);
	int form_a = !only_b && nb <= ISA_VEC_BSTRIDE_MAX && ca <= cb;
	int64_t tpr = (run + tile - 1) / tile; /* tiles per run */
	int64_t tiles = outer * tpr;
	struct bnd q = { .bc = bc, .op = isa[bc->op], .s = s, .form_a = form_a,
			 .flat = { flat[0], flat[1] }, .nb = nb, .rb = { rb[0], rb[1] }, .run = run,
			 .tile = tile, .tpr = tpr, .tiles = tiles, .set = set,
			 .off_buf = { off_buf[0], off_buf[1] }, .off_t = { off_t[0], off_t[1] },
			 .off_e = { off_e[0], off_e[1] }, .off_y = off_y };
	memcpy(q.dims, dims, sizeof dims);
	memcpy(q.rs, rs, sizeof rs);
	int64_t blocks = cc_split_work(tiles, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_A, 0);
	cc_ldarg(p, R_B, 1);
	cc_ldarg(p, R_Y, 2);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .per = q.per, .units = tiles, .step = bnd_tile,
			       .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "broadcast", err, errlen);
}
