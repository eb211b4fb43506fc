/* kern_matmul.c: C = A x B (+ bias) on the cube.
 *
 * C is cut into tm x tn tiles, K into kc-deep chunks; each block takes a
 * contiguous run of tiles (neighbours share A's row panel, which stays in L1
 * when two panels fit: A is then loaded once per panel, not per tile).  Per
 * chunk: MTE2 brings the A and B pieces to L1 ([k1][tm][16] and
 * [n1][kc][16]), MTE1 lays them out as L0A/L0B fractals, the cube
 * accumulates into L0C.  Per tile: V moves groups of 16-column pieces of L0C
 * to the UB as fp16 (adding the bias), MTE3 writes their rows out.  L1 has
 * up to four chunk slots (loads in flight hide the memory latency), L0 and
 * L0C two, the UB two groups.  The tile sizes are chosen by timing each
 * candidate's own busiest block on the simulator's dry run (sim/dryrun.h)
 * and keeping the fastest.
 *
 * A batch of products (cc_gen_matmul_batch) deals batch x tiles to the
 * blocks; each operand has a per-batch stride (0: shared) and a row stride,
 * so a strided view (a folded Transpose) is read in place.  A transposed
 * operand (A given as A^T, B as B^T) is brought to L1 as 16x16 fractals of
 * its own rows and transposed by load2d on the way to L0.
 *
 * An epilogue (cc_matmul.epi, an element-wise chain) runs on each group of
 * pieces in the UB after the bias, through kern_vchain.c's step expansion
 * and buffers shared by liveness (two sets of them, for double-buffering,
 * sized into the tiling search).  Its V work is then comparable to the
 * cube's (Gelu's Erf is 16 vector instructions), so a tile's groups are
 * emitted interleaved with the next tile's chunks: the scalar unit issues
 * in order and stalls on a full pipe queue, and the cube must not wait
 * behind a tile's worth of queued vector work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "cost.h"
#include "dryrun.h"
#include "kern_roll.h"
#include "kernels.h"
#include "tile_cache.h"

/* Registers (kern_gen.h has x3 R_GM, x4/x5 the dispatch, x6/x7 loop
 * counters): x1, x2, x8..x10 the arguments; GM addresses of A and C through
 * R_GM, of B through x11 (a dry run tells a constant B's reads, from main
 * memory, by it); x12 the base of A's row panels in L1, 0 at the start,
 * which loops over K chunks advance (kg_addr), and x13/x14 those of the
 * bias and the dequant scales in the UB, which loops over tiles advance;
 * R_TMP (x5, free once the dispatch is done) addresses relative to them;
 * x26..x31 the builder's constant cache (the epilogue, cc_vchain_emit,
 * uses x16..x18 and x25). */
enum { R_A = 1, R_B = 2, R_C = 8, R_BIAS = 9, R_DEQ = 10, R_GB = 11, R_L1A = 12, R_UBB = 13,
       R_UBD = 14, R_CACHE0 = 26, R_CACHE1 = 32 };

/* 16-column pieces of a tile moved from L0C to the UB at a time */
#define MM_GROUP 4

struct mm_tiling {
	int64_t tm, tn, kc;
	double est;
};

/* UB buffers per group slot: the pieces, and with an epilogue the chain's
 * slots as cc_vchain_buffers shares them (its input is the pieces). */
static int ub_bufs(const struct cc_matmul *mm, int *buf)
{
	if (mm->epi)
		return cc_vchain_buffers(mm->epi, buf);
	buf[0] = 0;
	return 1;
}

/* 16-column pieces per group for tiles of tm rows: MM_GROUP, or with an
 * epilogue as many as its buffers (two sets, for double-buffering) leave
 * room for next to the bias row; 0 when they do not fit. */
static int64_t group_pieces(const struct soc_config *cfg, const struct cc_matmul *mm,
			    int64_t tm)
{
	int buf[CC_MAX_VSTEPS + 16];
	int64_t room = (int64_t)cfg->ub_size_kb * 1024 - cc_pad16(mm->N) * (mm->int8 ? 6 : 2) - 512;
	int64_t g = room / (2 * ub_bufs(mm, buf) * tm * 32);
	if (!mm->epi)
		return g >= MM_GROUP ? MM_GROUP : 0;
	return g > MM_GROUP ? MM_GROUP : g > 0 ? g : 0;
}

/* Whether A's whole row panel (tm x K) stays in L1 across the tiles of a
 * block that share it: two panels (one being read while the next loads)
 * next to the B chunks' double buffer. */
/* L0 [r][c] fractals (row-major, dst) from L1 fractals at src + r * sr +
 * c * sc (in fractals), transposing each when trans: one load2d per row or
 * per column, whichever is fewer instructions. */
static void load2d(struct kg *g, enum isa_op op, int base, int64_t src, int64_t dst,
		   int64_t rs, int64_t cs, int64_t sr, int64_t sc, int trans)
{
	int by_row = rs <= cs;
	for (int64_t i = 0; i < (by_row ? rs : cs); i++) {
		int64_t at = src + i * (by_row ? sr : sc) * 512;
		int rx = base ? kg_addr(g, R_TMP, base, at) : kg_reg(g, at);
		int ry = kg_reg(g, dst + i * (by_row ? cs : 1) * 512);
		KG_I(g, LOAD2D, op, .rd = ry, .rs1 = rx, .rep = by_row ? cs : rs,
		     .sstride = by_row ? sc : sr, .dstride = by_row ? 1 : cs, .trans = trans != 0);
	}
}

/* L1 chunk slots: as many loads in flight as there are event ids to track
 * them, to hide the memory latency behind the cube's work. */
static int l1_slots(const struct soc_config *cfg)
{
	return cfg->core_event_ids >= 4 ? 4 : 2;
}

/* A panel P's slot is overwritten once the load of chunk c - slots has
 * been consumed: panel P-1 must span slots - 1 chunks for that to cover
 * panel P-2's reads. */
static int panel_fits(const struct soc_config *cfg, const struct cc_matmul *mm, int64_t tm,
		      int64_t tn, int64_t kc)
{
	int64_t K16 = cc_pad16(mm->K), nsl = l1_slots(cfg);
	return !mm->a_trans && (K16 + kc - 1) / kc >= nsl - 1 &&
	       2 * tm * K16 * 2 + nsl * kc * tn * 2 <= (int64_t)cfg->l1_size_kb * 1024;
}

/* The output path: V moves a tile out of L0C buffer c a group of 16-column
 * pieces at a time (adding the bias, running the epilogue) and MTE3 writes
 * their rows: a write to GM completes a memory latency after it issues, so
 * one group's writes overlap the next group's moves. */
struct mm_out {
	const struct cc_matmul *mm;
	int64_t gp, group_bytes, ub_bias, ub_deq, l0c_half, c_rs;
	int nbuf, out_slot;
	const int *buf;
	int64_t groups; /* emitted in the block: their parity picks the UB set */
	/* the tile being moved out */
	int active, c;
	int64_t tm, m1s, n1s, rows, m0, n0, c_base, g0;
};

/* The next count groups of the pending tile (count < 0: all of them). */
static void out_groups(struct kg *g, struct mm_out *o, int64_t count)
{
	const struct cc_matmul *mm = o->mm;
	struct cc_prog *p = g->p;
	int64_t tm = o->tm, gp = o->gp;
	for (; o->active && count != 0 && o->g0 < o->n1s; count--, o->groups++) {
		int64_t g0 = o->g0, gn = o->n1s - g0 < gp ? o->n1s - g0 : gp;
		int q = (int)(o->groups & 1);
		int64_t slot = q * o->nbuf * o->group_bytes;
		if (g0 == 0)
			cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_V, o->c);
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, q);
		if (mm->int8) { /* each piece with its 16 columns' dequant scales */
			for (int64_t j = 0; j < gn; j++) {
				int rx = kg_reg(g, slot + j * tm * 32);
				int ry = kg_reg(g, o->c * o->l0c_half + (g0 + j) * o->m1s * 1024);
				int rs = kg_addr(g, R_TMP, R_UBD,
						 o->ub_deq + (o->n0 + (g0 + j) * 16) * 4);
				KG_I(g, L0C, ISA_OP_MOV_L0C_UB, .rd = rx, .rs1 = ry, .rs2 = rs,
				     .nfrac = o->m1s, .cvt = ISA_CVT_DEQV);
			}
		} else {
			int rx = kg_reg(g, slot);
			int ry = kg_reg(g, o->c * o->l0c_half + g0 * o->m1s * 1024);
			KG_I(g, L0C, ISA_OP_MOV_L0C_UB, .rd = rx, .rs1 = ry, .nfrac = gn * o->m1s,
			     .cvt = ISA_CVT_F16);
		}
		for (int64_t j = 0; mm->has_bias && j < gn; j++) {
			int rx = kg_reg(g, slot + j * tm * 32);
			int ry = kg_addr(g, R_TMP, R_UBB, o->ub_bias + (o->n0 + (g0 + j) * 16) * 2);
			KG_I(g, VBIN, ISA_OP_VADD, .rd = rx, .rs1 = rx, .rs2 = ry,
			     .dt = ISA_DT_F16, .rep = tm / 8, .s1b = 0, .s1r = 0);
		}
		if (g0 + gn == o->n1s)
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_M, o->c);
		/* the epilogue: the pieces are one run of gn * tm / 8 repeats
		 * (slot 0, buffer 0) */
		if (mm->epi) {
			int64_t addr[CC_MAX_VSTEPS + 16];
			for (int k = 0; k < cc_vchain_nslots(mm->epi); k++)
				addr[k] = slot + o->buf[k] * o->group_bytes;
			cc_vchain_emit(p, mm->epi, addr, gn * tm / 8);
		}
		int64_t res = slot + o->buf[o->out_slot] * o->group_bytes;
		cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, q);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, q);
		for (int64_t j = 0; j < gn; j++)
			kg_dma_via(g, ISA_OP_MOV_UB_GM, R_GM, R_C,
				   (o->c_base + o->m0 * o->c_rs + o->n0 + (g0 + j) * 16) * 2,
				   res + j * tm * 32, o->rows, 1, 0, o->c_rs / 16 - 1);
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, q);
		o->g0 += gn;
	}
	if (o->g0 >= o->n1s)
		o->active = 0;
}

/* A tiling and what follows from it: the operands' strides, the blocks and
 * the buffers. */
struct mm_plan {
	const struct soc_config *cfg;
	const struct cc_matmul *mm;
	struct mm_tiling t;
	int64_t K16, N16, a_rs, b_rs, c_rs;
	int64_t mt, nt, tiles, items, blocks;
	int64_t l1_half, panel_bytes, l0a_half, l0b_half, l0c_half;
	int64_t gp, group_bytes, ub_bias, ub_deq;
	int reuse, nsl, nbuf, out_slot;
	int buf[CC_MAX_VSTEPS + 16];
};

static void plan_tiling(const struct soc_config *cfg, const struct cc_matmul *mm,
			struct mm_tiling t, struct mm_plan *pl)
{
	memset(pl, 0, sizeof *pl);
	pl->cfg = cfg;
	pl->mm = mm;
	pl->t = t;
	int64_t M16 = cc_pad16(mm->M);
	pl->K16 = cc_pad16(mm->K);
	pl->N16 = cc_pad16(mm->N);
	/* row strides in elements (0: the dense padded rows) */
	pl->a_rs = mm->a_rs ? mm->a_rs : mm->a_trans ? M16 : pl->K16;
	pl->b_rs = mm->b_rs ? mm->b_rs : mm->b_trans ? pl->K16 : pl->N16;
	pl->c_rs = mm->c_rs ? mm->c_rs : pl->N16;
	pl->mt = (mm->M + t.tm - 1) / t.tm;
	pl->nt = (pl->N16 + t.tn - 1) / t.tn;
	pl->tiles = pl->mt * pl->nt;
	pl->items = mm->batch * pl->tiles;
	pl->blocks = pl->items < cfg->core_count ? pl->items : cfg->core_count;
	if (pl->blocks > CC_MAX_BLOCKS)
		pl->blocks = CC_MAX_BLOCKS;
	pl->l1_half = t.kc * (t.tm + t.tn) * 2;
	pl->reuse = panel_fits(cfg, mm, t.tm, t.tn, t.kc);
	pl->nsl = l1_slots(cfg);
	pl->panel_bytes = t.tm * pl->K16 * 2;
	pl->l0a_half = cfg->l0a_size_kb * 1024 / 2;
	pl->l0b_half = cfg->l0b_size_kb * 1024 / 2;
	pl->l0c_half = cfg->l0c_size_kb * 1024 / 2;
	/* UB: two sets (one per group parity) of nbuf buffers of a group of
	 * 16-column pieces of a tile, fp16; then the bias row */
	pl->gp = group_pieces(cfg, mm, t.tm);
	pl->nbuf = ub_bufs(mm, pl->buf);
	pl->group_bytes = pl->gp * t.tm * 32;
	pl->ub_bias = 2 * pl->nbuf * pl->group_bytes;
	pl->ub_deq = pl->ub_bias + pl->N16 * 2;
	pl->out_slot = mm->epi ? mm->epi->nin + mm->epi->nsteps - 1 : 0;
}

/* Block b's items: a contiguous run (neighbours share A's row panel). */
static int64_t items_lo(const struct mm_plan *pl, int64_t b)
{
	return pl->items * b / pl->blocks;
}

/* The arguments into registers. */
static void emit_args(const struct mm_plan *pl, struct cc_prog *p)
{
	cc_li(p, R_L1A, 0);
	if (pl->mm->has_bias)
		cc_li(p, R_UBB, 0);
	if (pl->mm->int8)
		cc_li(p, R_UBD, 0);
	cc_ldarg(p, R_A, 0);
	cc_ldarg(p, R_B, 1);
	cc_ldarg(p, R_C, 2);
	if (pl->mm->has_bias)
		cc_ldarg(p, R_BIAS, 3);
	if (pl->mm->int8)
		cc_ldarg(p, R_DEQ, 3 + pl->mm->has_bias);
}

/* A register holding L1 address at: relative to base (kg_addr), or a constant. */
static int l1_reg(struct kg *g, int base, int64_t at)
{
	return base ? kg_addr(g, R_TMP, base, at) : kg_reg(g, at);
}

/* Progress through a block's program: what a chunk's code depends on
 * besides its place. */
struct mm_state {
	int64_t chunk, tcount, panels, key;
	int load_a; /* the current tile loads A's chunks */
	struct mm_out o;
};

/* K chunks per tile. */
static int64_t chunks_of(const struct mm_plan *pl) { return (pl->K16 + pl->t.kc - 1) / pl->t.kc; }

/* Chunk ci of item it (its tile begins at ci == 0 and is handed to the
 * output path after its last chunk). */
static void emit_chunk(const struct mm_plan *pl, struct kg *g, struct mm_state *st, int64_t it,
		       int64_t ci)
{
	const struct cc_matmul *mm = pl->mm;
	const struct mm_tiling t = pl->t;
	struct cc_prog *p = g->p;
	int64_t M = mm->M, K = mm->K, N = mm->N, K16 = pl->K16, N16 = pl->N16;
	int64_t a_rs = pl->a_rs, b_rs = pl->b_rs, nt = pl->nt, mt = pl->mt, tiles = pl->tiles;
	int64_t l0a_half = pl->l0a_half, l0b_half = pl->l0b_half, l0c_half = pl->l0c_half;
	int64_t panel_bytes = pl->panel_bytes, l1_half = pl->l1_half, gp = pl->gp;
	int reuse = pl->reuse, nsl = pl->nsl, b_nz = mm->b_nz;
	struct mm_out *o = &st->o;
	int64_t bi = it / tiles, ti = it % tiles;
	int64_t a_base = bi * mm->a_bs, b_base = bi * mm->b_bs, c_base = bi * mm->c_bs;
	int64_t m0 = ti / nt * t.tm, n0 = ti % nt * t.tn;
	int64_t rows = M - m0 < t.tm ? M - m0 : t.tm;
	int64_t tm = cc_pad16(rows), m1s = tm / 16; /* the cube's rows this tile */
	int64_t tn = N16 - n0 < t.tn ? N16 - n0 : t.tn, n1s = tn / 16;
	int64_t ncols = N - n0 < tn ? N - n0 : tn; /* B^T rows this tile */
	int c = (int)(st->tcount & 1);
	if (ci == 0) {
		/* with the panel kept, A is loaded for the first tile of a row */
		st->load_a = !reuse || st->key != bi * mt + m0 / t.tm;
		if (st->load_a && reuse) {
			st->key = bi * mt + m0 / t.tm;
			st->panels++;
		}
	}
	int64_t panel = (st->panels & 1) * panel_bytes, k0 = ci * t.kc;
	int pb = (int)(st->chunk & 1), sl = (int)(st->chunk % nsl);
	int64_t kc = K16 - k0 < t.kc ? K16 - k0 : t.kc, k1s = kc / 16;
	int64_t kvalid = K - k0 < kc ? K - k0 : kc;
	/* L1: A's chunk in its panel (the MTE1 -> MTE2 wait below also orders
	 * the panel's reuse: panel P's slot was last read before panel P-1's
	 * first chunk, see panel_fits), or A and B chunks side by side */
	int64_t l1a = reuse ? panel + k0 * tm * 2 : sl * l1_half;
	int64_t l1b = reuse ? 2 * panel_bytes + sl * t.kc * t.tn * 2 : l1a + t.kc * t.tm * 2;
	/* MTE2: A piece [k1][tm][16] (A^T: [m1][kc][16]), B piece [n1][kc][16]
	 * (B^T: [k1][tn][16]) */
	cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, sl);
	/* a panel's chunks move on by a constant: relative to R_L1A (loops
	 * advance it); chunk slots rotate: constants */
	int abase = reuse ? R_L1A : 0;
	if (!st->load_a) {
		/* in L1 already */
	} else if (mm->a_trans) {
		for (int64_t m1 = 0; m1 < m1s; m1++)
			kg_dma_reg(g, ISA_OP_MOV_GM_L1, R_GM, R_A, (a_base + k0 * a_rs + m0 + m1 * 16) * 2,
				   l1_reg(g, abase, l1a + m1 * kc * 32), kvalid, 1, a_rs / 16 - 1, 0);
	} else {
		for (int64_t k1 = 0; k1 < k1s; k1++)
			kg_dma_reg(g, ISA_OP_MOV_GM_L1, R_GM, R_A, (a_base + m0 * a_rs + k0 + k1 * 16) * 2,
				   l1_reg(g, abase, l1a + k1 * tm * 32), rows, 1, a_rs / 16 - 1, 0);
	}
	if (b_nz) {
		int64_t kb = (kvalid + 15) / 16 * 16; /* whole rows of 16 */
		kg_dma_via(g, ISA_OP_MOV_GM_L1, R_GB, R_B, (b_base + ((n0 / 16) * K16 + k0) * 16) * 2,
			   l1b, n1s, kb, K16 - kb, kc - kb);
	} else if (mm->b_trans) {
		for (int64_t k1 = 0; k1 < k1s; k1++)
			kg_dma_via(g, ISA_OP_MOV_GM_L1, R_GB, R_B, (b_base + n0 * b_rs + k0 + k1 * 16) * 2,
				   l1b + k1 * tn * 32, ncols, 1, b_rs / 16 - 1, 0);
	} else {
		for (int64_t n1 = 0; n1 < n1s; n1++)
			kg_dma_via(g, ISA_OP_MOV_GM_L1, R_GB, R_B, (b_base + k0 * b_rs + n0 + n1 * 16) * 2,
				   l1b + n1 * kc * 32, kvalid, 1, b_rs / 16 - 1, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, sl);
	/* MTE1: L0A [m1][k1], L0B [k1][n1]; a transposed operand's fractals are
	 * transposed on the way (load2d trans) */
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, sl);
	cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
	/* fractal (m1, k1) of A in L1, in fractals from l1a */
	int64_t am = mm->a_trans ? kc / 16 : 1, ak = mm->a_trans ? 1 : tm / 16;
	load2d(g, ISA_OP_LOAD2D_L0A, abase, l1a, pb * l0a_half, m1s, k1s, am, ak, mm->a_trans);
	/* fractal (k1, n1) of B in L1 */
	int64_t bk = mm->b_trans ? tn / 16 : 1, bn = mm->b_trans ? 1 : kc / 16;
	load2d(g, ISA_OP_LOAD2D_L0B, 0, l1b, pb * l0b_half, k1s, n1s, bk, bn, mm->b_trans);
	cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, sl);
	cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
	/* M */
	cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
	if (k0 == 0)
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_M, c);
	int rc = kg_reg(g, c * l0c_half), ra = kg_reg(g, pb * l0a_half);
	int rb = kg_reg(g, pb * l0b_half);
	/* int8: k counts value pairs */
	KG_I(g, MMAD, ISA_OP_MMAD, .rd = rc, .rs1 = ra, .rs2 = rb, .m = tm,
	     .k = mm->int8 ? 2 * kvalid : kvalid, .n = tn, .init = k0 == 0,
	     .dt = mm->int8 ? ISA_DT_S8 : ISA_DT_F16);
	cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
	/* the previous tile's groups, spaced evenly over this tile's chunks: V
	 * works through them while the cube computes, and the in-order issue
	 * never waits for a V queue filled with several groups at once */
	if (o->active) {
		int64_t nch = chunks_of(pl);
		int64_t all = (o->n1s + gp - 1) / gp, done = o->g0 / gp;
		int64_t want = ((ci + 1) * all + nch - 1) / nch;
		if (want > done)
			out_groups(g, o, want - done);
	}
	st->chunk++;
	if (ci < chunks_of(pl) - 1)
		return;
	cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_V, c);
	/* an epilogue's tile waits for the next tile's chunks (out_groups) */
	out_groups(g, o, -1);
	o->active = 1;
	o->c = c;
	o->tm = tm;
	o->m1s = m1s;
	o->n1s = n1s;
	o->rows = rows;
	o->m0 = m0;
	o->n0 = n0;
	o->c_base = c_base;
	o->g0 = 0;
	if (!mm->epi)
		out_groups(g, o, -1);
	st->tcount++;
}

/* A block's chunks as kg_emit_rolled_state steps, from item it0 on. */
struct mm_run {
	const struct mm_plan *pl;
	int64_t it0;
};

static void chunk_step(struct kg *g, const void *ctx, size_t i, void *state)
{
	const struct mm_run *r = ctx;
	int64_t nch = chunks_of(r->pl);
	emit_chunk(r->pl, g, state, r->it0 + (int64_t)i / nch, (int64_t)i % nch);
}

/* The flags a block's buffers are handed round by, primed at its start or
 * drained at its end (f): nsl L1 slots (MTE1 -> MTE2), two halves each of
 * L0 (M -> MTE1), L0C (V -> M) and the UB (MTE3 -> V). */
static void mm_syncs(struct cc_prog *p, int nsl,
		     void (*f)(struct cc_prog *, enum isa_pipe, enum isa_pipe, int))
{
	f(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, nsl);
	f(p, ISA_PIPE_M, ISA_PIPE_MTE1, 2);
	f(p, ISA_PIPE_V, ISA_PIPE_M, 2);
	f(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
}

/* Block b's code after the dispatch; roll: its chunks as loops where they
 * repeat (the program), else straight (a dry run, which does not follow
 * branches). */
static void emit_block(const struct mm_plan *pl, struct kg *g, int64_t b, int roll)
{
	const struct cc_matmul *mm = pl->mm;
	struct cc_prog *p = g->p;
	int64_t N16 = pl->N16;
	int nsl = pl->nsl, has_bias = mm->has_bias;
	/* every buffer free: the L1 slots, then the L0, L0C and UB halves */
	mm_syncs(p, nsl, cc_prime_flags);
	/* (through R_TMP: the dispatch is done with it) */
	if (has_bias)
		kg_dma_via(g, ISA_OP_MOV_GM_UB, R_TMP, R_BIAS, 0, pl->ub_bias, 1, N16 / 16, 0, 0);
	if (mm->int8) /* N16 fp32 scales */
		kg_dma_via(g, ISA_OP_MOV_GM_UB, R_TMP, R_DEQ, 0, pl->ub_deq, 1, N16 / 8, 0, 0);
	if (has_bias || mm->int8) {
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
	}
	struct mm_state st = { .key = -1,
			       .o = { .mm = mm, .gp = pl->gp, .group_bytes = pl->group_bytes,
				      .ub_bias = pl->ub_bias, .ub_deq = pl->ub_deq,
				      .l0c_half = pl->l0c_half, .c_rs = pl->c_rs, .nbuf = pl->nbuf,
				      .out_slot = pl->out_slot, .buf = pl->buf } };
	int64_t it0 = items_lo(pl, b), n = (items_lo(pl, b + 1) - it0) * chunks_of(pl);
	if (roll) {
		struct mm_run r = { pl, it0 };
		if (kg_emit_rolled_state(g, (size_t)n, chunk_step, &r, &st, sizeof st))
			g->bad = 1;
	} else {
		for (int64_t i = 0; i < n; i++)
			emit_chunk(pl, g, &st, it0 + i / chunks_of(pl), i % chunks_of(pl));
	}
	out_groups(g, &st.o, -1);
	mm_syncs(p, nsl, cc_drain_flags);
	cc_end(p);
}

/* The output elements of block b's tiles (edge tiles are smaller). */
static int64_t block_area(const struct mm_plan *pl, int64_t b)
{
	int64_t area = 0;
	for (int64_t it = items_lo(pl, b), hi = items_lo(pl, b + 1); it < hi; it++) {
		int64_t ti = it % pl->tiles;
		int64_t m0 = ti / pl->nt * pl->t.tm, n0 = ti % pl->nt * pl->t.tn;
		int64_t rows = pl->mm->M - m0 < pl->t.tm ? pl->mm->M - m0 : pl->t.tm;
		int64_t tn = pl->N16 - n0 < pl->t.tn ? pl->N16 - n0 : pl->t.tn;
		area += cc_pad16(rows) * tn;
	}
	return area;
}

/* A tiling's cycles: its busiest block (the first with the largest tiles
 * in all) run through the dry run, from the arguments and the
 * dispatch to its end, its GM transfers at its share of the L2 and main
 * memory.  A constant B comes from main memory; the blocks that read the
 * same columns of it (other rows of tiles) find them in the L2, so main
 * memory serves the distinct bytes: its bandwidth is shared by as many
 * blocks as read distinct bytes at once. */
static double time_tiling(const struct sim_costcfg *cc, const struct mm_plan *pl,
			  int64_t *work)
{
	const struct cc_matmul *mm = pl->mm;
	int64_t b = 0, most = -1;
	for (int64_t i = 0; i < pl->blocks; i++) {
		int64_t area = block_area(pl, i);
		if (area > most) {
			most = area;
			b = i;
		}
	}
	/* Bounded work: a block of more K chunks than 1/64 of the instructions a
	 * kernel may hold is not a tiling to time (the dry run alone would emit
	 * millions of instructions per candidate; sizes come from a file) */
	int64_t steps = (items_lo(pl, b + 1) - items_lo(pl, b)) * chunks_of(pl);
	if (steps > (int64_t)(cc_max_insns(pl->cfg) / 64))
		return 1e300;
	*work += steps;
	struct sim_dryrun d;
	sim_dryrun_init(&d, cc, pl->cfg->core_queue_depth, (double)pl->blocks,
			mm->b_nz ? UINT32_C(1) << R_GB : 0);
	d.hbm_share = 1;
	struct cc_prog p;
	cc_prog_init_dryrun(&p, &d);
	emit_args(pl, &p);
	cc_block_dispatch_path(&p, pl->blocks, b, R_BIDX, R_TMP);
	struct kg g;
	kg_init(&g, &p, R_CACHE0, R_CACHE1);
	emit_block(pl, &g, b, 0);
	double cycles = cc_prog_dry_time(&p);
	cc_prog_free(&p);
	if (mm->b_nz) { /* main memory streams the constant B once */
		double uniq = (double)(mm->b_bs ? mm->batch : 1) * (double)(pl->K16 * pl->N16) * 2;
		struct sim_cost h = sim_hbm_stream(cc, uniq);
		cycles = fmax(cycles, (double)(h.occ + h.lat));
	}
	return cycles;
}

/* What the choice depends on, as cache key words: every field but the
 * cache, the epilogue by its steps. */
static size_t cache_key(const struct cc_matmul *mm, int64_t *key)
{
	size_t n = 0;
	int64_t f[] = { mm->batch, mm->M, mm->K, mm->N, mm->b_nz, mm->a_trans, mm->b_trans,
			mm->has_bias, mm->a_bs, mm->b_bs, mm->c_bs, mm->a_rs, mm->b_rs, mm->c_rs,
			mm->int8, mm->epi ? mm->epi->nin : -1, mm->epi ? mm->epi->nsteps : -1,
			mm->epi ? mm->epi->f32 : -1 };
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		key[n++] = f[i];
	_Static_assert(18 + 4 * CC_MAX_VSTEPS <= CC_TILE_KEY_MAX, "a chain's key fits");
	for (int i = 0; mm->epi && i < mm->epi->nsteps; i++) {
		const struct cc_vstep *st = &mm->epi->step[i];
		uint32_t u;
		memcpy(&u, &st->scalar, sizeof u);
		key[n++] = st->op;
		key[n++] = st->a;
		key[n++] = st->b;
		key[n++] = u;
	}
	return n;
}

/* The fastest tiling by the dry run; est 1e300 and tm 0 when none fits. */
static struct mm_tiling choose(const struct soc_config *cfg, const struct cc_matmul *mm)
{
	struct mm_tiling best = { 0, 0, 0, 1e300 };
	int64_t key[CC_TILE_KEY_MAX];
	size_t nkey = cache_key(mm, key);
	double v[4];
	if (cc_tile_cache_get(mm->cache, "matmul", key, nkey, v, 4))
		return (struct mm_tiling){ (int64_t)v[0], (int64_t)v[1], (int64_t)v[2], v[3] };
	struct sim_costcfg cc;
	/* Bounded work: the search times at most as many block steps as a
	 * kernel may hold instructions, and at most 8 M (seconds), then keeps
	 * the best tiling found so far; the test suite's largest search
	 * (BERT-base, sequence 384, batch 8, on the 910) times 1.7 M, and the
	 * 4096x1024x4096 MatMul of tests/advisor.sh needs more than 2 M to
	 * reach its best tiling (133 k cycles, 180 k with 2 M).  A tiling of
	 * more steps than the generator may emit instructions is not timed:
	 * it would be refused (cc_gen_matmul_batch), and at the size limit
	 * every tiling is, so the search ends at once. */
	int64_t work = 0, budget = (int64_t)cc_max_insns(cfg);
	budget = budget < (INT64_C(1) << 23) ? budget : INT64_C(1) << 23;
	int64_t max_steps = (int64_t)cc_max_work(cfg);
	sim_costcfg_init(&cc, cfg);
	int64_t M16 = cc_pad16(mm->M), K16 = cc_pad16(mm->K), N16 = cc_pad16(mm->N);
	int64_t l0a = cfg->l0a_size_kb * 1024 / 2, l0b = cfg->l0b_size_kb * 1024 / 2;
	int64_t l0c = cfg->l0c_size_kb * 1024 / 2, l1 = cfg->l1_size_kb * 1024 / l1_slots(cfg);
	/* every multiple of 16 up to 256: odd sizes (192, 144) deal the work
	 * evenly to the cores where powers of two leave some with an extra tile */
	for (int64_t tm = 16; tm <= 256 && tm <= M16; tm += 16) {
		for (int64_t tn = 16; tn <= 256 && tn <= N16; tn += 16) {
			if (tm * tn * 4 > l0c || group_pieces(cfg, mm, tm) < 1)
				continue;
			for (int64_t kc = 16; kc <= 4096 && work <= budget; kc += kc < 128 ? 16 : kc) {
				if (kc > 16 && kc - 16 >= K16)
					break;
				if (tm * kc * 2 > l0a || kc * tn * 2 > l0b ||
				    (tm + tn) * kc * 2 > l1)
					continue;
				struct mm_plan pl;
				plan_tiling(cfg, mm, (struct mm_tiling){ tm, tn, kc, 0 }, &pl);
				if (items_lo(&pl, pl.blocks) * chunks_of(&pl) > max_steps)
					continue;
				double e = time_tiling(&cc, &pl, &work);
				if (e < best.est * 0.999) {
					best.tm = tm;
					best.tn = tn;
					best.kc = kc;
					best.est = e;
				}
			}
		}
	}
	cc_tile_cache_put(mm->cache, "matmul", key, nkey,
			  (double[]){ (double)best.tm, (double)best.tn, (double)best.kc, best.est }, 4);
	return best;
}

static void block_fn(struct kg *g, void *ctx, int64_t b) { emit_block(ctx, g, b, 1); }

int cc_gen_matmul_batch(const struct soc_config *cfg, const struct cc_matmul *mm,
			struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t M = mm->M, K = mm->K, N = mm->N, batch = mm->batch;
	if (M < 1 || K < 1 || N < 1 || batch < 1) {
		snprintf(err, errlen, "matmul: empty operand (%lld x %lld x %lld x %lld)",
			 (long long)batch, (long long)M, (long long)K, (long long)N);
		return -1;
	}
	if (mm->b_nz && mm->b_trans) {
		snprintf(err, errlen, "matmul: a constant B is laid out, not transposed");
		return -1;
	}
	if (mm->int8 && (!mm->b_nz || mm->a_trans)) {
		snprintf(err, errlen, "matmul: int8 needs a constant B and A not transposed");
		return -1;
	}
	if ((mm->a_rs | mm->b_rs | mm->c_rs) % 16) {
		snprintf(err, errlen, "matmul: row strides must be whole 32-byte blocks");
		return -1;
	}
	int buf[CC_MAX_VSTEPS + 16];
	if (mm->epi && (mm->epi->nin != 1 || (ub_bufs(mm, buf), buf[0] != 0))) {
		snprintf(err, errlen, "matmul: an epilogue chain takes the product only");
		return -1;
	}
	struct mm_tiling t = choose(cfg, mm);
	if (!t.tm) {
		snprintf(err, errlen, "matmul %lldx%lldx%lld: no tiling fits this SoC's buffers "
			 "with at most %zu steps per block", (long long)M, (long long)K, (long long)N,
			 cc_max_insns(cfg) / 64);
		return -1;
	}
	struct mm_plan pl;
	plan_tiling(cfg, mm, t, &pl);
	*block_dim = (unsigned)pl.blocks;
	/* every step emits an instruction at least: a kernel of more steps than
	 * its generator may emit instructions (emit.h) is refused before the
	 * builder spends seconds finding that out */
	int64_t steps = 0;
	for (int64_t i = 0; i < pl.blocks; i++)
		steps += (items_lo(&pl, i + 1) - items_lo(&pl, i)) * chunks_of(&pl);
	if (p->max_work && !p->dry && steps > (int64_t)p->max_work) {
		p->over = p->work_over = 1;
		return 0;
	}
	emit_args(&pl, p);
	struct kg g;
	kg_init(&g, p, R_CACHE0, R_CACHE1);
	int rc = kg_emit_blocks(&g, pl.blocks, block_fn, &pl);
	if (rc || g.bad || p->oom) {
		snprintf(err, errlen, rc || p->oom ? "matmul: out of memory"
						   : "matmul: a transfer exceeds the DMA's burst limits");
		return -1;
	}
	return 0;
}

int cc_gen_matmul(const struct soc_config *cfg, int64_t M, int64_t K, int64_t N, int b_nz,
		  int has_bias, struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	struct cc_matmul mm = { .batch = 1, .M = M, .K = K, .N = N, .b_nz = b_nz,
				.has_bias = has_bias };
	return cc_gen_matmul_batch(cfg, &mm, p, block_dim, err, errlen);
}


double cc_matmul_estimate(const struct soc_config *cfg, const struct cc_matmul *mm)
{
	return choose(cfg, mm).est;
}

void cc_layout_b_nz(const float *b, int64_t K, int64_t N, int transposed, uint16_t *out)
{
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N);
	for (int64_t n1 = 0; n1 < N16 / 16; n1++)
		for (int64_t k = 0; k < K16; k++)
			for (int64_t j = 0; j < 16; j++) {
				int64_t n = n1 * 16 + j;
				float v = 0;
				if (k < K && n < N)
					v = transposed ? b[n * K + k] : b[k * N + n];
				out[(n1 * K16 + k) * 16 + j] = dv_f32_to_f16(v);
			}
}

void cc_layout_b_nz_s8(const int8_t *bq, int64_t K, int64_t N, int transposed, int8_t *out)
{
	int64_t K32 = (K + 31) / 32 * 32, N16 = cc_pad16(N);
	for (int64_t n1 = 0; n1 < N16 / 16; n1++)
		for (int64_t k = 0; k < K32; k++)
			for (int64_t j = 0; j < 16; j++) {
				int64_t n = n1 * 16 + j;
				out[(n1 * K32 + k) * 16 + j] =
					k < K && n < N ? (transposed ? bq[n * K + k] : bq[k * N + n]) : 0;
			}
}
