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
 * L0C two, the UB two groups.  The tile sizes are chosen by estimating each
 * candidate's time from the SoC's rates and keeping the fastest.
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
#include <string.h>

#include "fp16.h"
#include "cost.h"
#include "kernels.h"

enum { R_A = 1, R_B = 2, R_C = 3, R_BIAS = 4, R_DEQ = 5, R_BIDX = 20, R_TMP = 21, R_GM = 10,
       R_X = 12, R_Y = 13, R_S = 14 };

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
static void load2d(struct cc_prog *p, enum isa_op op, int64_t src, int64_t dst, int64_t rs,
		   int64_t cs, int64_t sr, int64_t sc, int trans)
{
	int by_row = rs <= cs;
	for (int64_t i = 0; i < (by_row ? rs : cs); i++) {
		cc_li(p, R_X, src + i * (by_row ? sr : sc) * 512);
		cc_li(p, R_Y, dst + i * (by_row ? cs : 1) * 512);
		struct isa_insn *in = cc_emit(p, op);
		in->rd = R_Y;
		in->rs1 = R_X;
		in->rep = by_row ? cs : rs;
		in->sstride = by_row ? sc : sr;
		in->dstride = by_row ? 1 : cs;
		in->trans = trans != 0;
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

/* Estimated cycles of the slowest block for a tiling, from the SoC's rates:
 * the batch's tiles are dealt to the blocks in contiguous runs; a block's
 * time is its busiest pipe (the scalar unit issuing every instruction
 * included) plus the pipeline's fill and drain, and all blocks share the L2
 * and main memory. */
static double estimate(const struct soc_config *cfg, const struct cc_matmul *mm, int64_t tm,
		       int64_t tn, int64_t kc)
{
	int64_t M = mm->M, K16 = cc_pad16(mm->K), N16 = cc_pad16(mm->N);
	int64_t mt = (M + tm - 1) / tm, nt = (N16 + tn - 1) / tn;
	int64_t items = mm->batch * mt * nt;
	int64_t blocks = items < cfg->core_count ? items : cfg->core_count;
	double per_block = (double)((items + blocks - 1) / blocks);
	int64_t chunks = (K16 + kc - 1) / kc, k1s = kc / 16;
	/* the slowest block's tiles are whole ones (the smaller last row and
	 * column tiles do not make up for a block with an extra whole tile) */
	double tmv = (double)(tm < cc_pad16(M) ? tm : cc_pad16(M)), tnv = (double)(tn < N16 ? tn : N16);
	double m1s = tmv / 16, n1s = tnv / 16;
	/* A loads per block: every tile, or once per panel (a run of tiles of
	 * one row, which may straddle two rows) */
	double a_loads = per_block;
	if (panel_fits(cfg, mm, tm, tn, kc))
		a_loads = fmin(per_block, ceil(per_block / (double)nt) + (nt > 1));
	double rd = cfg->mte_gm_read_bytes_per_cycle, af = a_loads / per_block;
	/* per chunk, in the steady state: each pipe's work, and the memory
	 * latency, which the L1 slots hide only part of.  A load waits for the
	 * L2, and for main memory in the share of the loaded bytes that nothing
	 * loaded before (a GEMV's weights: all of them) */
	double chunk_bytes = (af * tmv + tnv) * (double)kc * 2;
	double uniq = (double)mm->batch * (double)M * K16 * 2 +
		      (double)(mm->b_bs ? mm->batch : 1) * K16 * N16 * 2;
	double loaded = (double)blocks * per_block * (double)chunks * chunk_bytes;
	double miss = loaded > 0 ? fmin(1.0, uniq / loaded) : 1.0;
	double lat = (double)cfg->l2_latency_cycles +
		     miss * cfg->hbm_latency_ns * cfg->core_freq_mhz / 1000;
	double cube = m1s * (double)k1s * n1s;
	double mte2 = (af * tmv + tnv) * (double)kc * 2 / rd;
	double mte1 = tmv * kc * 2 / cfg->mte_l1_to_l0a_bytes_per_cycle +
		      tnv * kc * 2 / cfg->mte_l1_to_l0b_bytes_per_cycle;
	/* scalar instructions: the DMAs and load2d loops (3 each), the mmad
	 * and the flags */
	double b_dmas = mm->b_nz ? 1 : mm->b_trans ? (double)k1s : n1s;
	double a_dmas = mm->a_trans ? m1s : (double)k1s;
	double scalar = (3 * (a_dmas * af + b_dmas + fmin(m1s, k1s) + fmin(n1s, k1s)) + 16) *
			(double)cfg->core_scalar_cycles;
	double chunk = fmax(fmax(cube, mte2), fmax(fmax(mte1, scalar), (lat + mte2) / l1_slots(cfg))) + 8;
	double v = tmv * tnv * 4 / cfg->mte_l0c_to_ub_bytes_per_cycle;
	double epi_scalar = 0;
	if (mm->epi) {
		/* the chain over the tile's repeats on V, and its instructions
		 * (three or four scalar ones each) on the scalar unit, which the
		 * chunks' issue shares */
		double per_rep;
		int insns;
		struct sim_costcfg cc;
		sim_costcfg_init(&cc, cfg);
		cc_vchain_cost(mm->epi, &cc, &per_rep, &insns);
		double groups = ceil(n1s / (double)group_pieces(cfg, mm, tm));
		v += tmv * tnv / 128 * per_rep;
		epi_scalar = groups * insns * 4 * (double)cfg->core_scalar_cycles;
		/* measured on the 910 (BERT's FFN1, K = 768): with V setting
		 * the pace, the in-order issue stalls behind V's queue and each
		 * chunk's flags and loads cost V about 30 cycles of its time,
		 * and each group about a memory latency */
		v += (double)chunks * 30 + groups * (double)cfg->l2_latency_cycles;
	}
	/* a tile's first chunk waits for its L0C buffer and, with A, for a
	 * load that no earlier chunk overlapped: about one memory latency
	 * less the slots' hiding, measured as ~150 cycles on the 910 */
	double tile = fmax(fmax((double)chunks * chunk, (double)chunks * scalar + epi_scalar),
			   v + n1s * 6) + 150;
	/* the L2 serves every block's loads; main memory the distinct bytes */
	double l2 = (double)blocks * per_block * chunks * mte2 * rd /
		    (cfg->l2_bandwidth_gbps * 1000.0 / cfg->core_freq_mhz);
	double hbm = uniq / (cfg->hbm_bandwidth_gbps * 1000.0 / cfg->core_freq_mhz);
	/* fill: the memory latency and the first chunk's load; drain: the last
	 * tile's move out of L0C and its writes, a memory latency late */
	double fill = lat + cfg->hbm_latency_ns * cfg->core_freq_mhz / 1000 + (tmv + tnv) * kc * 2 / rd;
	double drain = v + tmv * tnv * 2 / cfg->mte_gm_write_bytes_per_cycle +
		       cfg->l2_latency_cycles;
	return fmax(fmax(per_block * tile, l2), hbm) + fill + drain;
}

static struct mm_tiling choose(const struct soc_config *cfg, const struct cc_matmul *mm)
{
	struct mm_tiling best = { 0, 0, 0, 1e300 };
	int64_t M16 = cc_pad16(mm->M), K16 = cc_pad16(mm->K), N16 = cc_pad16(mm->N);
	int64_t l0a = cfg->l0a_size_kb * 1024 / 2, l0b = cfg->l0b_size_kb * 1024 / 2;
	int64_t l0c = cfg->l0c_size_kb * 1024 / 2, l1 = cfg->l1_size_kb * 1024 / l1_slots(cfg);
	/* every multiple of 16 up to 256: odd sizes (192, 144) deal the work
	 * evenly to the cores where powers of two leave some with an extra tile */
	for (int64_t tm = 16; tm <= 256 && tm <= M16; tm += 16) {
		for (int64_t tn = 16; tn <= 256 && tn <= N16; tn += 16) {
			if (tm * tn * 4 > l0c || group_pieces(cfg, mm, tm) < 1)
				continue;
			for (int64_t kc = 16; kc <= 4096; kc += kc < 128 ? 16 : kc) {
				if (kc > 16 && kc - 16 >= K16)
					break;
				if (tm * kc * 2 > l0a || kc * tn * 2 > l0b ||
				    (tm + tn) * kc * 2 > l1)
					continue;
				double e = estimate(cfg, mm, tm, tn, kc);
				if (e < best.est * 0.999) {
					best.tm = tm;
					best.tn = tn;
					best.kc = kc;
					best.est = e;
				}
			}
		}
	}
	return best;
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
static void out_groups(struct cc_prog *p, struct mm_out *o, int64_t count)
{
	const struct cc_matmul *mm = o->mm;
	int64_t tm = o->tm, gp = o->gp;
	for (; o->active && count != 0 && o->g0 < o->n1s; count--, o->groups++) {
		int64_t g0 = o->g0, gn = o->n1s - g0 < gp ? o->n1s - g0 : gp;
		int q = (int)(o->groups & 1);
		int64_t slot = q * o->nbuf * o->group_bytes;
		if (g0 == 0)
			cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_V, o->c);
		cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, q);
		struct isa_insn *in;
		if (mm->int8) { /* each piece with its 16 columns' dequant scales */
			for (int64_t j = 0; j < gn; j++) {
				cc_li(p, R_X, slot + j * tm * 32);
				cc_li(p, R_Y, o->c * o->l0c_half + (g0 + j) * o->m1s * 1024);
				cc_li(p, R_S, o->ub_deq + (o->n0 + (g0 + j) * 16) * 4);
				in = cc_emit(p, ISA_OP_MOV_L0C_UB);
				in->rd = R_X;
				in->rs1 = R_Y;
				in->rs2 = R_S;
				in->nfrac = o->m1s;
				in->cvt = ISA_CVT_DEQV;
			}
		} else {
			cc_li(p, R_X, slot);
			cc_li(p, R_Y, o->c * o->l0c_half + g0 * o->m1s * 1024);
			in = cc_emit(p, ISA_OP_MOV_L0C_UB);
			in->rd = R_X;
			in->rs1 = R_Y;
			in->nfrac = gn * o->m1s;
			in->cvt = ISA_CVT_F16;
		}
		for (int64_t j = 0; mm->has_bias && j < gn; j++) {
			cc_li(p, R_X, slot + j * tm * 32);
			cc_li(p, R_Y, o->ub_bias + (o->n0 + (g0 + j) * 16) * 2);
			in = cc_emit(p, ISA_OP_VADD);
			in->rd = R_X;
			in->rs1 = R_X;
			in->rs2 = R_Y;
			in->dt = ISA_DT_F16;
			in->rep = tm / 8;
			in->s1b = 0;
			in->s1r = 0;
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
		for (int64_t j = 0; j < gn; j++) {
			cc_li(p, R_X, res + j * tm * 32);
			cc_addi(p, R_GM, R_C,
				(o->c_base + o->m0 * o->c_rs + o->n0 + (g0 + j) * 16) * 2);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_X, o->rows, 1, 0, o->c_rs / 16 - 1);
		}
		cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, q);
		o->g0 += gn;
	}
	if (o->g0 >= o->n1s)
		o->active = 0;
}

int cc_gen_matmul_batch(const struct soc_config *cfg, const struct cc_matmul *mm,
			struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t M = mm->M, K = mm->K, N = mm->N, batch = mm->batch;
	int b_nz = mm->b_nz, has_bias = mm->has_bias;
	if (M < 1 || K < 1 || N < 1 || batch < 1) {
		snprintf(err, errlen, "matmul: empty operand (%lld x %lld x %lld x %lld)",
			 (long long)batch, (long long)M, (long long)K, (long long)N);
		return -1;
	}
	if (b_nz && mm->b_trans) {
		snprintf(err, errlen, "matmul: a constant B is laid out, not transposed");
		return -1;
	}
	if (mm->int8 && (!b_nz || mm->a_trans)) {
		snprintf(err, errlen, "matmul: int8 needs a constant B and A not transposed");
		return -1;
	}
	struct mm_tiling t = choose(cfg, mm);
	if (!t.tm) {
		snprintf(err, errlen, "matmul %lldx%lldx%lld: no tiling fits this SoC's buffers",
			 (long long)M, (long long)K, (long long)N);
		return -1;
	}
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N), M16 = cc_pad16(M);
	/* row strides in elements (0: the dense padded rows) */
	int64_t a_rs = mm->a_rs ? mm->a_rs : mm->a_trans ? M16 : K16;
	int64_t b_rs = mm->b_rs ? mm->b_rs : mm->b_trans ? K16 : N16;
	int64_t c_rs = mm->c_rs ? mm->c_rs : N16;
	if (a_rs % 16 || b_rs % 16 || c_rs % 16) {
		snprintf(err, errlen, "matmul: row strides must be whole 32-byte blocks");
		return -1;
	}
	int64_t mt = (M + t.tm - 1) / t.tm, nt = (N16 + t.tn - 1) / t.tn, tiles = mt * nt;
	int64_t items = batch * tiles;
	int64_t blocks = items < cfg->core_count ? items : cfg->core_count;
	if (blocks > 1024)
		blocks = 1024;
	*block_dim = (unsigned)blocks;
	/* buffers */
	int64_t l1_half = t.kc * (t.tm + t.tn) * 2;
	int reuse = panel_fits(cfg, mm, t.tm, t.tn, t.kc), nsl = l1_slots(cfg);
	int64_t panel_bytes = t.tm * K16 * 2;
	int64_t l0a_half = cfg->l0a_size_kb * 1024 / 2, l0b_half = cfg->l0b_size_kb * 1024 / 2;
	int64_t l0c_half = cfg->l0c_size_kb * 1024 / 2;
	/* UB: two sets (one per group parity) of nbuf buffers of a group of
	 * 16-column pieces of a tile, fp16; then the bias row */
	int64_t gp = group_pieces(cfg, mm, t.tm);
	int buf[CC_MAX_VSTEPS + 16];
	int nbuf = ub_bufs(mm, buf);
	int64_t group_bytes = gp * t.tm * 32;
	int64_t ub_bias = 2 * nbuf * group_bytes, ub_deq = ub_bias + N16 * 2;
	int out_slot = mm->epi ? mm->epi->nin + mm->epi->nsteps - 1 : 0;
	if (mm->epi && (mm->epi->nin != 1 || buf[0] != 0)) {
		snprintf(err, errlen, "matmul: an epilogue chain takes the product only");
		return -1;
	}

	cc_ldarg(p, R_A, 0);
	cc_ldarg(p, R_B, 1);
	cc_ldarg(p, R_C, 2);
	if (has_bias)
		cc_ldarg(p, R_BIAS, 3);
	if (mm->int8)
		cc_ldarg(p, R_DEQ, 3 + has_bias);
	struct isa_insn *in;
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		for (int ev = 0; ev < nsl; ev++)
			cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ev);
		for (int ev = 0; ev < 2; ev++) {
			cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, ev);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_M, ev);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, ev);
		}
		if (has_bias) {
			cc_li(p, R_X, ub_bias);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_X, R_BIAS, 1, N16 / 16, 0, 0);
		}
		if (mm->int8) { /* N16 fp32 scales */
			cc_li(p, R_X, ub_deq);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_X, R_DEQ, 1, N16 / 8, 0, 0);
		}
		if (has_bias || mm->int8) {
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		}
		int64_t chunk = 0, tcount = 0, panels = 0, key = -1;
		struct mm_out o = { .mm = mm, .gp = gp, .group_bytes = group_bytes,
				    .ub_bias = ub_bias, .ub_deq = ub_deq, .l0c_half = l0c_half,
				    .c_rs = c_rs,
				    .nbuf = nbuf, .out_slot = out_slot, .buf = buf };
		/* a contiguous run of items: neighbours share A's row panel */
		int64_t lo = items * b / blocks, hi = items * (b + 1) / blocks;
		for (int64_t it = lo; it < hi; it++, tcount++) {
			int64_t bi = it / tiles, ti = it % tiles;
			int64_t a_base = bi * mm->a_bs, b_base = bi * mm->b_bs, c_base = bi * mm->c_bs;
			int64_t m0 = ti / nt * t.tm, n0 = ti % nt * t.tn;
			int64_t rows = M - m0 < t.tm ? M - m0 : t.tm;
			int64_t tm = cc_pad16(rows), m1s = tm / 16; /* the cube's rows this tile */
			int64_t tn = N16 - n0 < t.tn ? N16 - n0 : t.tn, n1s = tn / 16;
			int64_t ncols = N - n0 < tn ? N - n0 : tn; /* B^T rows this tile */
			int c = (int)(tcount & 1);
			/* with the panel kept, A is loaded for the first tile of a row */
			int load_a = !reuse || key != bi * mt + m0 / t.tm;
			if (load_a && reuse) {
				key = bi * mt + m0 / t.tm;
				panels++;
			}
			int64_t panel = (panels & 1) * panel_bytes;
			for (int64_t k0 = 0; k0 < K16; k0 += t.kc, chunk++) {
				int pb = (int)(chunk & 1), sl = (int)(chunk % nsl);
				int64_t kc = K16 - k0 < t.kc ? K16 - k0 : t.kc, k1s = kc / 16;
				int64_t kvalid = K - k0 < kc ? K - k0 : kc;
				/* L1: A's chunk in its panel (the MTE1 -> MTE2 wait below
				 * also orders the panel's reuse: panel P's slot was last read
				 * before panel P-1's first chunk, see panel_fits),
				 * or A and B chunks side by side */
				int64_t l1a = reuse ? panel + k0 * tm * 2 : sl * l1_half;
				int64_t l1b = reuse ? 2 * panel_bytes + sl * t.kc * t.tn * 2
						    : l1a + t.kc * t.tm * 2;
				/* MTE2: A piece [k1][tm][16] (A^T: [m1][kc][16]), B piece
				 * [n1][kc][16] (B^T: [k1][tn][16]) */
				cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, sl);
				if (!load_a) {
					/* in L1 already */
				} else if (mm->a_trans) {
					for (int64_t m1 = 0; m1 < m1s; m1++) {
						cc_addi(p, R_GM, R_A,
							(a_base + k0 * a_rs + m0 + m1 * 16) * 2);
						cc_li(p, R_X, l1a + m1 * kc * 32);
						cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, kvalid, 1,
						       a_rs / 16 - 1, 0);
					}
				} else {
					for (int64_t k1 = 0; k1 < k1s; k1++) {
						cc_addi(p, R_GM, R_A,
							(a_base + m0 * a_rs + k0 + k1 * 16) * 2);
						cc_li(p, R_X, l1a + k1 * tm * 32);
						cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, rows, 1,
						       a_rs / 16 - 1, 0);
					}
				}
				if (b_nz) {
					int64_t kb = (kvalid + 15) / 16 * 16; /* whole rows of 16 */
					cc_addi(p, R_GM, R_B,
						(b_base + ((n0 / 16) * K16 + k0) * 16) * 2);
					cc_li(p, R_X, l1b);
					cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, n1s, kb, K16 - kb, kc - kb);
				} else if (mm->b_trans) {
					for (int64_t k1 = 0; k1 < k1s; k1++) {
						cc_addi(p, R_GM, R_B,
							(b_base + n0 * b_rs + k0 + k1 * 16) * 2);
						cc_li(p, R_X, l1b + k1 * tn * 32);
						cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, ncols, 1,
						       b_rs / 16 - 1, 0);
					}
				} else {
					for (int64_t n1 = 0; n1 < n1s; n1++) {
						cc_addi(p, R_GM, R_B,
							(b_base + k0 * b_rs + n0 + n1 * 16) * 2);
						cc_li(p, R_X, l1b + n1 * kc * 32);
						cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, kvalid, 1,
						       b_rs / 16 - 1, 0);
					}
				}
				cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, sl);
				/* MTE1: L0A [m1][k1], L0B [k1][n1]; a transposed operand's
				 * fractals are transposed on the way (load2d trans) */
				cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, sl);
				cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
				/* fractal (m1, k1) of A in L1, in fractals from l1a */
				int64_t am = mm->a_trans ? kc / 16 : 1, ak = mm->a_trans ? 1 : tm / 16;
				load2d(p, ISA_OP_LOAD2D_L0A, l1a, pb * l0a_half, m1s, k1s, am, ak,
				       mm->a_trans);
				/* fractal (k1, n1) of B in L1 */
				int64_t bk = mm->b_trans ? tn / 16 : 1, bn = mm->b_trans ? 1 : kc / 16;
				load2d(p, ISA_OP_LOAD2D_L0B, l1b, pb * l0b_half, k1s, n1s, bk, bn,
				       mm->b_trans);
				cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, sl);
				cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
				/* M */
				cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
				if (k0 == 0)
					cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_M, c);
				cc_li(p, R_GM, c * l0c_half);
				cc_li(p, R_X, pb * l0a_half);
				cc_li(p, R_Y, pb * l0b_half);
				in = cc_emit(p, ISA_OP_MMAD);
				in->rd = R_GM;
				in->rs1 = R_X;
				in->rs2 = R_Y;
				in->m = tm;
				in->k = mm->int8 ? 2 * kvalid : kvalid; /* int8: value pairs */
				in->n = tn;
				in->init = k0 == 0;
				if (mm->int8)
					in->dt = ISA_DT_S8;
				cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
				/* the previous tile's groups, spaced evenly over this
				 * tile's chunks: V works through them while the cube
				 * computes, and the in-order issue never waits for a
				 * V queue filled with several groups at once */
				if (o.active) {
					int64_t nch = (K16 + t.kc - 1) / t.kc, ci = k0 / t.kc;
					int64_t all = (o.n1s + gp - 1) / gp, done = o.g0 / gp;
					int64_t want = ((ci + 1) * all + nch - 1) / nch;
					if (want > done)
						out_groups(p, &o, want - done);
				}
			}
			cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_V, c);
			/* an epilogue's tile waits for the next tile's chunks
			 * (out_groups) */
			out_groups(p, &o, -1);
			o.active = 1;
			o.c = c;
			o.tm = tm;
			o.m1s = m1s;
			o.n1s = n1s;
			o.rows = rows;
			o.m0 = m0;
			o.n0 = n0;
			o.c_base = c_base;
			o.g0 = 0;
			if (!mm->epi)
				out_groups(p, &o, -1);
		}
		out_groups(p, &o, -1);
		for (int ev = 0; ev < nsl; ev++)
			cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ev);
		for (int ev = 0; ev < 2; ev++) {
			cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, ev);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_M, ev);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, ev);
		}
		cc_end(p);
	}
	return 0;
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
