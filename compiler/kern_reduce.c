/* kern_reduce.c: reductions (ReduceSum/Mean/Max/Min) and Softmax over any
 * axis of a padded ND tensor, viewed as [A][R][C] fp16 elements: R the
 * reduced extent, C the contiguous inner extent (a multiple of 16).  When the
 * reduction includes the last logical axis, C is one padded row whose first
 * `cols` lanes are real; the padding lanes are masked out of every reduction.
 *
 * Reductions over R are element-wise vector ops: a halving tree for Reduce
 * (log2 R roundings instead of R), a running max/sum for Softmax (x stays
 * intact).  A row's own lanes are folded 128 at a time into lanes 0..127,
 * then vcadd/vcmax/vcmin finish.  Sums over a row accumulate in fp32 (vconv
 * to f32, vadd, f32 vcadd); sums over R are fp16.  Each tile of whole a's is
 * loaded once; tiles are spread over the cores.
 *
 * f32 (mixed precision, cc_node.fp32): Softmax converts the tile (after the
 * fused scale and mask) to fp32 and runs x - max, exp, the sums, vrec/vln
 * and the final multiply/subtract in fp32 (64 lanes a repeat: twice the
 * repeats of fp16), rounding to fp16 once; e is made in place and
 * LogSoftmax converts x and subtracts the max a second time (the same fp32
 * values) instead of keeping an fp32 e besides x - max, so that rows of
 * 1000 still fit 16 to a tile.  ReduceSum/Mean over R convert
 * to fp32 and run the halving tree and the mean scaling in fp32; R is taken
 * in chunks of rc rows when a group's fp16 and fp32 copies do not fit the
 * UB together, the chunks' partial sums added in an fp32 accumulator.
 * ReduceMax/Min are exact in fp16 and ignore f32, as do row sums along the
 * last axis alone (already fp32). */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

enum { RK_SUM, RK_MEAN, RK_MAX, RK_MIN };
enum { R_MASK = R_CN }; /* the Softmax mask's GM address, past the builder's cache (kern_gen.h) */

/* Rows of nb blocks, 8 a repeat (in place): block j of each op= s1 + j * 32 *
 * s1j with s1 block and repeat strides s1b, s1r. */
static void rows_op(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t x, int64_t s1,
		    int64_t s1j, int64_t s1b, int64_t s1r, int64_t nb, int64_t n16)
{
	kg_mask_all(g);
	for (int64_t j = 0; j < nb; j++)
		kg_vop(g, op, dt, x + j * 32, x + j * 32, s1 + j * 32 * s1j, n16 / 8,
		       (struct kg_strides){ nb, nb, s1b, 8 * nb, 8 * nb, s1r });
}

/* strided's general case: n items of len elements of dt each (a repeat of
 * 256 bytes, the tail masked), item i at base + i * st * 32; s1 VMULS's
 * scalar (fp32 bits), a VBIN source, unused by a VUN. */
static void strided_rows(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst,
			 int64_t s0, int64_t s1, int64_t n, int64_t len, int64_t dst_st,
			 int64_t s0_st, int64_t s1_st)
{
	int64_t es = isa_dtype_size(dt), per = 256 / es;
	if (dst_st > ISA_VEC_RSTRIDE_MAX || s0_st > ISA_VEC_RSTRIDE_MAX || s1_st > ISA_VEC_RSTRIDE_MAX)
		g->bad = 1;
	for (int64_t q = 0; q < len; q += per) {
		kg_mask_lanes(g, len - q >= per ? 128 : len - q);
		for (int64_t i = 0; i < n; i += ISA_VEC_REP_MAX) {
			int64_t k = n - i < ISA_VEC_REP_MAX ? n - i : ISA_VEC_REP_MAX;
			struct kg_strides rs = kg_strides_dflt();
			rs.dr = dst_st;
			rs.s0r = s0_st;
			rs.s1r = s1_st;
			kg_vop(g, op, dt, dst + q * es + i * dst_st * 32, s0 + q * es + i * s0_st * 32,
			       op == ISA_OP_VMULS ? s1 : s1 + q * es + i * s1_st * 32, k, rs);
		}
	}
}

/* op over n "items" at stride `st` blocks: dst[i] = s0[i] op s1[i] over the
 * first len lanes (a multiple of 16 or masked) of each item; rep over items. */
static void strided(struct kg *g, enum isa_op op, int64_t dst, int64_t s0, int64_t s1,
		    int64_t n, int64_t len, int64_t dst_st, int64_t s0_st, int64_t s1_st)
{
	/* one 32-byte block per item (an NC1HWC0 C0 group): 8 items a repeat
	 * through the block stride, instead of 16 of 128 lanes */
	int64_t mx_st = dst_st > s0_st ? dst_st : s0_st;
	if (s1 >= 0 && op != ISA_OP_VMULS && s1_st > mx_st)
		mx_st = s1_st;
	if (len == 16 && mx_st <= ISA_VEC_BSTRIDE_MAX && n >= 8) {
		for (int64_t i = 0; i < n;) {
			int64_t k = (n - i) / 8 < ISA_VEC_REP_MAX ? (n - i) / 8 : ISA_VEC_REP_MAX;
			int64_t items = k * 8;
			if (!k) {
				k = 1;
				items = n - i;
			}
			kg_mask_lanes(g, items < 8 ? items * 16 : 128);
			/* s1: VMULS's scalar, a VBIN source, unused by a VUN */
			kg_vop(g, op, ISA_DT_F16, dst + i * dst_st * 32, s0 + i * s0_st * 32,
			       op == ISA_OP_VMULS ? s1 : s1 + i * s1_st * 32, k,
			       (struct kg_strides){ dst_st, s0_st, s1_st, 8 * dst_st, 8 * s0_st,
						    8 * s1_st });
			i += items;
		}
		return;
	}
	strided_rows(g, op, ISA_DT_F16, dst, s0, s1, n, len, dst_st, s0_st, s1_st);
}

/* fp32 form of strided's general case. */
static void strided32(struct kg *g, enum isa_op op, int64_t dst, int64_t s0, int64_t s1,
		      int64_t n, int64_t len, int64_t dst_st, int64_t s0_st, int64_t s1_st)
{
	strided_rows(g, op, ISA_DT_F32, dst, s0, s1, n, len, dst_st, s0_st, s1_st);
}

/* Flat op over n f16 (or f32) elements; scalar in fp32 bits when sc. */
static void flat(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t src,
		 int64_t n, int64_t scalar)
{
	int64_t per = dt == ISA_DT_F32 ? 64 : 128, reps = (n + per - 1) / per;
	kg_mask_all(g);
	for (int64_t d = 0; d < reps; d += ISA_VEC_REP_MAX) {
		int64_t k = reps - d < ISA_VEC_REP_MAX ? reps - d : ISA_VEC_REP_MAX;
		if (op == ISA_OP_VDUP) {
			int rs = kg_reg(g, scalar);
			KG_VDUP(g, dt, dst + d * 256, k, .rs2 = rs);
		} else { /* VMULS (scalar) or a VUN */
			kg_vop(g, op, dt, dst + d * 256, src + d * 256, scalar, k,
			       kg_strides_dflt());
		}
	}
}

/* Fold rows (n of them at `st` blocks, cols real lanes) to one value each:
 * max/min into f16 at out16 (n contiguous), sums into f32 at out32 through
 * the f32 row accumulators acc32/tmp32 (n rows of 64 f32). */
static void row_reduce(struct kg *g, int kind, int64_t x, int64_t n, int64_t cols, int64_t st,
		       int64_t mx, int64_t out16, int64_t acc32, int64_t tmp32, int64_t out32)
{
	if (kind == RK_MAX || kind == RK_MIN) {
		enum isa_op op = kind == RK_MAX ? ISA_OP_VMAX : ISA_OP_VMIN;
		int64_t src = x, sst = st;
		if (cols > 128) {
			/* lanes 128j.. folded into a 128-lane scratch row per item */
			strided(g, ISA_OP_VMOV, mx, x, -1, n, 128, 8, st, 0);
			for (int64_t j = 1; j * 128 < cols; j++) {
				int64_t len = cols - j * 128 < 128 ? cols - j * 128 : 128;
				strided(g, op, mx, mx, x + j * 256, n, len, 8, 8, st);
			}
			src = mx;
			sst = 8;
		}
		kg_mask_lanes(g, cols);
		for (int64_t i = 0; i < n; i += ISA_VEC_REP_MAX) {
			int64_t k = n - i < ISA_VEC_REP_MAX ? n - i : ISA_VEC_REP_MAX;
			KG_V(g, VRED, kind == RK_MAX ? ISA_OP_VCMAX : ISA_OP_VCMIN, ISA_DT_F16,
			     out16 + i * 2, src + i * sst * 32, k, .s0r = sst);
		}
		return;
	}
	flat(g, ISA_OP_VDUP, ISA_DT_F32, acc32, 0, n * 64, 0);
	for (int64_t h = 0; h * 64 < cols; h++) {
		int64_t len = cols - h * 64 < 64 ? cols - h * 64 : 64;
		kg_mask_lanes(g, len);
		for (int64_t i = 0; i < n; i += ISA_VEC_REP_MAX) {
			int64_t k = n - i < ISA_VEC_REP_MAX ? n - i : ISA_VEC_REP_MAX;
			KG_V(g, VCONV, ISA_OP_VCONV, ISA_DT_F32, tmp32 + i * 256,
			     x + h * 128 + i * st * 32, k, .st = ISA_DT_F16, .dr = 8, .s0r = st);
			kg_vop(g, ISA_OP_VADD, ISA_DT_F32, acc32 + i * 256, acc32 + i * 256,
			       tmp32 + i * 256, k, kg_strides_dflt());
		}
	}
	kg_mask_lanes(g, 64);
	for (int64_t i = 0; i < n; i += ISA_VEC_REP_MAX) {
		int64_t k = n - i < ISA_VEC_REP_MAX ? n - i : ISA_VEC_REP_MAX;
		KG_V(g, VRED, ISA_OP_VCADD, ISA_DT_F32, out32 + i * 4, acc32 + i * 256, k,
		     .s0r = 8);
	}
}

/* Sums of fp32 rows (n of them at `st` blocks, cols real lanes) into fp32 at
 * out32, through the row accumulators acc32 (n rows of 64 floats). */
static void row_sum32(struct kg *g, int64_t x, int64_t n, int64_t cols, int64_t st,
		      int64_t acc32, int64_t out32)
{
	flat(g, ISA_OP_VDUP, ISA_DT_F32, acc32, 0, n * 64, 0);
	for (int64_t h = 0; h * 64 < cols; h++) {
		kg_mask_lanes(g, cols - h * 64 < 64 ? cols - h * 64 : 64);
		for (int64_t i = 0; i < n; i += ISA_VEC_REP_MAX) {
			int64_t k = n - i < ISA_VEC_REP_MAX ? n - i : ISA_VEC_REP_MAX;
			struct kg_strides rs = kg_strides_dflt();
			rs.s1r = st;
			kg_vop(g, ISA_OP_VADD, ISA_DT_F32, acc32 + i * 256, acc32 + i * 256,
			       x + h * 256 + i * st * 32, k, rs);
		}
	}
	kg_mask_lanes(g, 64);
	for (int64_t i = 0; i < n; i += ISA_VEC_REP_MAX) {
		int64_t k = n - i < ISA_VEC_REP_MAX ? n - i : ISA_VEC_REP_MAX;
		KG_V(g, VRED, ISA_OP_VCADD, ISA_DT_F32, out32 + i * 4, acc32 + i * 256, k,
		     .s0r = 8);
	}
}

/* fp32 rows of nb32 blocks (in place) op= the row's fp32 block at bc (one
 * per row), one instruction per column block, 8 rows a repeat. */
static void rows_op32(struct kg *g, enum isa_op op, int64_t x, int64_t bc, int64_t nb32,
		      int64_t n16)
{
	rows_op(g, op, ISA_DT_F32, x, bc, 0, 1, 8, nb32, n16);
}

/* n16 fp32 values at v -> one 32-byte block (8 copies) per value at bc. */
static void brcb32(struct kg *g, int64_t bc, int64_t v, int64_t n16)
{
	KG_V(g, VUN, ISA_OP_VBRCB, ISA_DT_F32, bc, v, n16 / 8);
}

/* n16/16 groups of 16 values (f16 at v) -> one 32-byte block per value at bc,
 * the value in lane 0 (zero) or in all 16 lanes (all). */
static void to_blocks(struct kg *g, int64_t v, int64_t tt, int64_t bc, int64_t n16, int all)
{
	if (!all)
		flat(g, ISA_OP_VDUP, ISA_DT_F16, tt, 0, n16 * 16, 0);
	kg_mask_lanes(g, all ? 128 : 16);
	for (int64_t gi = 0; gi < n16 / 16; gi++) {
		KG_V(g, VUN, ISA_OP_VMOV, ISA_DT_F16, tt + gi * 512, v + gi * 32, all ? 2 : 1,
		     .s0b = 0, .s0r = 0);
	}
	kg_mask_all(g);
	kg_transpose(g, bc, tt, n16 / 16, 1, 1, 16, 16);
}

static int plan(const struct soc_config *cfg, int64_t per_a, int64_t mult, int64_t *tile,
		unsigned *block_dim, int64_t A, int64_t *per, char *err, size_t errlen)
{
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024 - 8192;
	int64_t t = ub / per_a;
	if (t > 240)
		t = 240;
	/* no larger than an even share of the cores, so that every core works */
	int64_t share = (A + cfg->core_count - 1) / cfg->core_count;
	share = (share + mult - 1) / mult * mult;
	if (t > share)
		t = share;
	t = t / mult * mult;
	if (t < 1) {
		snprintf(err, errlen, "a reduction whose group of %lld bytes does not fit the UB "
			 "is not supported yet", (long long)(per_a));
		return -1;
	}
	*tile = t;
	int64_t tiles = (A + t - 1) / t;
	int64_t blocks = tiles < cfg->core_count ? tiles : cfg->core_count;
	if (blocks > 1024)
		blocks = 1024;
	*per = (tiles + blocks - 1) / blocks;
	*block_dim = (unsigned)((tiles + *per - 1) / *per);
	return 0;
}

/* Where a tile's per-row results go: D > 1, the results of each group of D
 * rows as one padded output row; else one 32-byte block per row (laid out
 * by to_blocks). */
static void row_results(struct kg *g, int64_t D, int64_t groups, int64_t ostr, int64_t a0,
			int64_t n, int64_t n16, int64_t r16, int64_t tt, int64_t ob, int64_t *src,
			int64_t *obytes, int64_t *goff)
{
	if (D > 1) {
		*src = r16;
		*obytes = groups * ostr * 2;
		*goff = a0 / D * ostr * 2;
	} else {
		to_blocks(g, r16, tt, ob, n16, 0);
		*src = ob;
		*obytes = n * 32;
		*goff = a0 * 32;
	}
}

/* A reduction kernel's plan: a tile of tile a's a step, on one event id;
 * tiles alike (all but a short last one) run as a loop and blocks alike
 * share one copy (kg_emit_steps).  UB offsets: reduce_tile's, sum32_tile's
 * (x16, xf, racc: the chunks of rc rows) and their common ones. */
struct rplan {
	int kind, last;
	int64_t A, R, C, cols, D, ostr, tile, per, N;
	int64_t rc, chunks;
	int64_t ux, x16, xf, racc, acc, r32, r16, tt, ob, mx, tmp;
};

/* A reduction kernel's blocks of tiles (step emits one). */
/* A tile's zlen fp32 row sums in r32 to fp16 results in r16 (a mean's
 * divided by N first). */
static void sums_to_f16(struct kg *g, int kind, int64_t N, int64_t r32, int64_t r16,
			int64_t zlen)
{
	if (kind == RK_MEAN)
		flat(g, ISA_OP_VMULS, ISA_DT_F32, r32, r32, zlen, kg_fbits(1.0f / (float)N));
	kg_flat_conv(g, ISA_DT_F16, ISA_DT_F32, r16, r32, zlen);
}

/* A tile's results out: len 32-byte blocks from UB src to y at goff, once
 * the vector unit is done with them; the next tile's loads wait for it. */
static void store_tile(struct kg *g, int64_t goff, int64_t src, int64_t len)
{
	cc_set_flag(g->p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
	cc_wait_flag(g->p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, goff, src, 1, len, 0, 0);
	cc_set_flag(g->p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
}

static int reduce_kernel(struct cc_prog *p, const struct rplan *q, int64_t blocks,
			 void (*step)(struct kg *, const void *, int64_t, size_t), char *err,
			 size_t errlen)
{
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 1 } },
			       .nsync = 1, .per = q->per, .units = (q->A + q->tile - 1) / q->tile,
			       .step = step, .ctx = q };
	return kg_emit_kernel(p, 0, 0, &ks, "reduce", err, errlen);
}

static void sum32_tile(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct rplan *q = ctx;
	struct cc_prog *p = g->p;
	int kind = q->kind, last = q->last;
	int64_t A = q->A, R = q->R, C = q->C, cols = q->cols, D = q->D, ostr = q->ostr;
	int64_t tile = q->tile, N = q->N, rc = q->rc, chunks = q->chunks;
	int64_t x16 = q->x16, xf = q->xf, acc = q->acc, racc = q->racc, r32 = q->r32, r16 = q->r16,
		tt = q->tt, ob = q->ob;
	int64_t t = b * q->per + (int64_t)i;
	int64_t a0 = t * tile, n = A - a0 < tile ? A - a0 : tile;
	int64_t n16 = (n + 15) / 16 * 16;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
	for (int64_t c = 0; c < chunks; c++) {
		int64_t r0 = c * rc, m = R - r0 < rc ? R - r0 : rc;
		if (c > 0) /* the previous chunk's fp16 copy is converted */
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		if (m == R)
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, a0 * R * C * 2, x16, 1,
			       n * R * C / 16, 0, 0);
		else /* one burst per a: its rows r0 .. r0 + m - 1 */
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (a0 * R + r0) * C * 2, x16, n,
			       m * C / 16, (R - m) * C / 16, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
		kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, xf, x16, n * m * C, ISA_RND_RNE);
		if (c + 1 < chunks)
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, 0);
		/* halving tree over the chunk's rows, in fp32 */
		for (int64_t s = m; s > 1; s = (s + 1) / 2) {
			int64_t h = s / 2, o = s - h;
			strided32(g, ISA_OP_VADD, xf, xf, xf + o * C * 4, n, h * C,
				  m * C / 8, m * C / 8, m * C / 8);
		}
		if (c == 0)
			strided32(g, ISA_OP_VMOV, acc, xf, -1, n, C, C / 8, m * C / 8, 0);
		else
			strided32(g, ISA_OP_VADD, acc, acc, xf, n, C, C / 8, C / 8,
				  m * C / 8);
	}
	int64_t src, obytes, goff;
	if (!last) {
		if (kind == RK_MEAN)
			flat(g, ISA_OP_VMULS, ISA_DT_F32, acc, acc, n * C,
			     kg_fbits(1.0f / (float)N));
		kg_conv_n(g, ISA_DT_F16, ISA_DT_F32, ob, acc, n * C, ISA_RND_RNE);
		src = ob;
		obytes = n * C * 2;
		goff = a0 * C * 2;
	} else {
		int64_t groups = D > 1 ? n / D : 1, gn = D > 1 ? D : n;
		int64_t zlen = D > 1 ? groups * ostr : n16;
		flat(g, ISA_OP_VDUP, ISA_DT_F32, r32, 0, zlen, 0);
		for (int64_t o = 0; o < groups; o++)
			row_sum32(g, acc + o * gn * C * 4, gn, cols, C / 8, racc,
				  r32 + o * ostr * 4);
		sums_to_f16(g, kind, N, r32, r16, zlen);
		row_results(g, D, groups, ostr, a0, n, n16, r16, tt, ob, &src,
			    &obytes, &goff);
	}
	store_tile(g, goff, src, obytes / 32);
}

static void reduce_tile(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct rplan *q = ctx;
	struct cc_prog *p = g->p;
	int kind = q->kind, last = q->last;
	int64_t A = q->A, R = q->R, C = q->C, cols = q->cols, D = q->D, ostr = q->ostr;
	int64_t tile = q->tile, N = q->N;
	int64_t ux = q->ux, mx = q->mx, acc = q->acc, tmp = q->tmp, r32 = q->r32, r16 = q->r16,
		tt = q->tt, ob = q->ob;
	int64_t t = b * q->per + (int64_t)i;
	int64_t a0 = t * tile, n = A - a0 < tile ? A - a0 : tile;
	int64_t n16 = (n + 15) / 16 * 16;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, a0 * R * C * 2, ux, 1, n * R * C / 16, 0,
	       0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	enum isa_op op = kind == RK_MAX ? ISA_OP_VMAX
			 : kind == RK_MIN ? ISA_OP_VMIN : ISA_OP_VADD;
	/* halving tree over R: x[a][i] op= x[a][i + ceil(s/2)] */
	for (int64_t s = R; s > 1; s = (s + 1) / 2) {
		int64_t h = s / 2, o = s - h;
		strided(g, op, ux, ux, ux + o * C * 2, n, h * C, R * C / 16,
			R * C / 16, R * C / 16);
	}
	int64_t src = ux, obytes, goff;
	if (!last) {
		if (kind == RK_MEAN)
			strided(g, ISA_OP_VMULS, ux, ux, kg_fbits(1.0f / (float)N), n,
				C, R * C / 16, R * C / 16, 0);
		/* gather the rows x[a][0] for the output */
		strided(g, ISA_OP_VMOV, ob, ux, -1, n, C, C / 16, R * C / 16, 0);
		src = ob;
		obytes = n * C * 2;
		goff = a0 * C * 2;
	} else {
		int sum = kind == RK_SUM || kind == RK_MEAN;
		int64_t groups = D > 1 ? n / D : 1, gn = D > 1 ? D : n;
		int64_t zlen = D > 1 ? groups * ostr : n16;
		if (sum)
			flat(g, ISA_OP_VDUP, ISA_DT_F32, r32, 0, zlen, 0);
		else
			flat(g, ISA_OP_VDUP, ISA_DT_F16, r16, 0, zlen, 0);
		for (int64_t o = 0; o < groups; o++)
			row_reduce(g, kind, ux + o * gn * R * C * 2, gn, cols, R * C / 16,
				   mx, r16 + o * ostr * 2, acc, tmp, r32 + o * ostr * 4);
		if (sum) {
			sums_to_f16(g, kind, N, r32, r16, zlen);
		}
		row_results(g, D, groups, ostr, a0, n, n16, r16, tt, ob, &src,
			    &obytes, &goff);
	}
	store_tile(g, goff, src, obytes / 32);
}

/* ReduceSum/Mean with the sum over R in fp32 (see the header): per tile of
 * n a's, each chunk of rc rows is loaded (fp16, x16), converted (xf), summed
 * by the halving tree in fp32 and added into acc[n][C]; then the mean's
 * scaling (and with last the row sums, fp32 as always) and one rounding. */
static int reduce_sum32(const struct soc_config *cfg, int kind, int64_t A, int64_t R,
			int64_t C, int64_t cols, int last, int64_t D, struct cc_prog *p,
			unsigned *block_dim, char *err, size_t errlen)
{
	int64_t ostr = cc_pad16(D), mult = last && D > 1 ? D : 1;
	/* per a besides the chunk: acc, the row accumulator, r32, r16, tt, ob */
	int64_t fixed = C * 4 + 256 + 64 + 32 + 32 + C * 2 + 32 + ostr * 8 + 64;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024 - 8192, rc = R;
	if (mult * (R * C * 6 + fixed) > ub)
		rc = (ub / mult - fixed) / (C * 6);
	if (rc < 1) {
		snprintf(err, errlen, "an fp32 reduction whose group of %lld bytes does not fit the "
			 "UB is not supported yet", (long long)(C * 6 + fixed));
		return -1;
	}
	int64_t tile, per;
	if (plan(cfg, rc * C * 6 + fixed, mult, &tile, block_dim, A, &per, err, errlen))
		return -1;
	int64_t t16 = (tile + 15) / 16 * 16, chunks = (R + rc - 1) / rc;
	int64_t x16 = 0, xf = (tile * rc * C * 2 + 31) / 32 * 32, acc = xf + tile * rc * C * 4,
		racc = acc + tile * C * 4, r32 = racc + tile * 256, r16 = r32 + t16 * 4 * 16 + 256,
		tt = r16 + t16 * 2 * 16 + 256, ob = tt + t16 * 32;
	struct rplan q = { .kind = kind, .A = A, .R = R, .C = C, .cols = cols, .last = last,
			   .D = D, .ostr = ostr, .tile = tile, .per = per, .N = R * (last ? cols : 1),
			   .rc = rc, .chunks = chunks, .x16 = x16, .xf = xf, .acc = acc,
			   .racc = racc, .r32 = r32, .r16 = r16, .tt = tt, .ob = ob };
	return reduce_kernel(p, &q, *block_dim, sum32_tile, err, errlen);
}

int cc_gen_reduce(const struct soc_config *cfg, int kind, int64_t A, int64_t R, int64_t C,
		  int64_t cols, int last, int64_t D, int f32, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen)
{
	int64_t ostr = cc_pad16(D);
	if (last && D > 1 && D > 240) {
		snprintf(err, errlen, "a reduction with %lld results per output row is not "
			 "supported yet", (long long)D);
		return -1;
	}
	/* fp32 changes only sums over R (row sums are fp32; max/min are exact) */
	if (f32 && (kind == RK_SUM || kind == RK_MEAN) && (R > 1 || !last))
		return reduce_sum32(cfg, kind, A, R, C, cols, last, D, p, block_dim, err, errlen);
	int64_t tile, per;
	if (plan(cfg, R * C * 2 + C * 2 + 256 * 3 + 32 * 4 + ostr * 8 + 64, last && D > 1 ? D : 1,
		 &tile, block_dim, A, &per, err, errlen))
		return -1;
	int64_t t16 = (tile + 15) / 16 * 16;
	int64_t ux = 0, mx = (tile * R * C * 2 + 31) / 32 * 32, acc = mx + t16 * 256,
		tmp = acc + t16 * 256, r32 = tmp + t16 * 256, r16 = r32 + t16 * 4 * 16 + 256,
		tt = r16 + t16 * 2 * 16 + 256, ob = tt + t16 * 32;
	struct rplan q = { .kind = kind, .A = A, .R = R, .C = C, .cols = cols, .last = last,
			   .D = D, .ostr = ostr, .tile = tile, .per = per, .N = R * (last ? cols : 1),
			   .ux = ux, .acc = acc, .r32 = r32, .r16 = r16, .tt = tt, .ob = ob, .mx = mx,
			   .tmp = tmp };
	return reduce_kernel(p, &q, *block_dim, reduce_tile, err, errlen);
}

/* Softmax over any axis: its plan, a tile of a's a step (as rplan's). */
struct smplan {
	int64_t R, C, cols;
	int last, log, f32;
	float scale;
	int64_t mask_div, A, tile, per, seg, per_seg, tiles;
	int64_t ux, m, mx, acc, tmp, r32, r16, tt, bc, mbuf, ebuf, xf, m32, s32;
};

static void softmax_tile(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct smplan *q = ctx;
	struct cc_prog *p = g->p;
	int last = q->last, log = q->log, f32 = q->f32;
	int64_t A = q->A, R = q->R, C = q->C, cols = q->cols, tile = q->tile, seg = q->seg;
	int64_t per_seg = q->per_seg, mask_div = q->mask_div;
	int64_t ux = q->ux, m = q->m, mx = q->mx, acc = q->acc, tmp = q->tmp, r32 = q->r32,
		r16 = q->r16, tt = q->tt, bc = q->bc, mbuf = q->mbuf, ebuf = q->ebuf, xf = q->xf,
		m32 = q->m32, s32 = q->s32;
	int64_t st = R * C / 16, nb = C / 16, st32 = R * C / 8, nb32 = C / 8;
	float scale = q->scale;
	int64_t t = b * q->per + (int64_t)i;
	int64_t s0 = t / per_seg * seg, a0 = s0 + t % per_seg * tile;
	int64_t end = s0 + seg < A ? s0 + seg : A;
	int64_t n = end - a0 < tile ? end - a0 : tile;
	if (n <= 0)
		return;
	int64_t n16 = (n + 15) / 16 * 16;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, a0 * R * C * 2, ux, 1, n * R * C / 16, 0,
	       0);
	if (mask_div > 0) /* this tile's mask row */
		kg_dma(g, ISA_OP_MOV_GM_UB, R_MASK, a0 / mask_div * C * 2, mbuf, 1,
		       C / 16, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	if (scale != 1.0f) { /* attention's 1/sqrt(d), fused */
		uint32_t bits;
		memcpy(&bits, &scale, 4);
		flat(g, ISA_OP_VMULS, ISA_DT_F16, ux, ux, n * R * C, (int64_t)bits);
	}
	if (mask_div > 0) { /* + the mask row, read with stride 0 for every row */
		rows_op(g, ISA_OP_VADD, ISA_DT_F16, ux, mbuf, 1, 0, 0, nb, n16);
	}
	if (f32 && last) {
		/* the max from fp16 (exact), then fp32 from x - max on */
		row_reduce(g, RK_MAX, ux, n, cols, nb, mx, r16, acc, tmp, r32);
		kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, r32, r16, n16, ISA_RND_RNE);
		brcb32(g, bc, r32, n16);
		kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, xf, ux, n16 * C, ISA_RND_RNE);
		rows_op32(g, ISA_OP_VSUB, xf, bc, nb32, n16);
		flat(g, ISA_OP_VEXP, ISA_DT_F32, xf, xf, n16 * C, 0);
		row_sum32(g, xf, n, cols, nb32, acc, r32);
		flat(g, log ? ISA_OP_VLN : ISA_OP_VREC, ISA_DT_F32, r32, r32, n16, 0);
		brcb32(g, tt, r32, n16);
		if (log) { /* x - max again, exactly as the first time */
			kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, xf, ux, n16 * C,
				  ISA_RND_RNE);
			rows_op32(g, ISA_OP_VSUB, xf, bc, nb32, n16);
		}
		rows_op32(g, log ? ISA_OP_VSUB : ISA_OP_VMUL, xf, tt, nb32, n16);
		kg_conv_n(g, ISA_DT_F16, ISA_DT_F32, ux, xf, n16 * C, ISA_RND_RNE);
	} else if (f32) {
		kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, xf, ux, n * R * C, ISA_RND_RNE);
		strided32(g, ISA_OP_VMOV, m32, xf, -1, n, C, nb32, st32, 0);
		for (int64_t r = 1; r < R; r++)
			strided32(g, ISA_OP_VMAX, m32, m32, xf + r * C * 4, n, C, nb32,
				  nb32, st32);
		for (int64_t r = 0; r < R; r++)
			strided32(g, ISA_OP_VSUB, xf + r * C * 4, xf + r * C * 4, m32, n,
				  C, st32, st32, nb32);
		flat(g, ISA_OP_VEXP, ISA_DT_F32, xf, xf, n * R * C, 0);
		strided32(g, ISA_OP_VMOV, s32, xf, -1, n, C, nb32, st32, 0);
		for (int64_t r = 1; r < R; r++)
			strided32(g, ISA_OP_VADD, s32, s32, xf + r * C * 4, n, C, nb32,
				  nb32, st32);
		flat(g, log ? ISA_OP_VLN : ISA_OP_VREC, ISA_DT_F32, s32, s32, n * C, 0);
		if (log) { /* x - max again, exactly as the first time */
			kg_conv_n(g, ISA_DT_F32, ISA_DT_F16, xf, ux, n * R * C,
				  ISA_RND_RNE);
			for (int64_t r = 0; r < R; r++)
				strided32(g, ISA_OP_VSUB, xf + r * C * 4, xf + r * C * 4,
					  m32, n, C, st32, st32, nb32);
		}
		for (int64_t r = 0; r < R; r++)
			strided32(g, log ? ISA_OP_VSUB : ISA_OP_VMUL, xf + r * C * 4,
				  xf + r * C * 4, s32, n, C, st32, st32, nb32);
		kg_conv_n(g, ISA_DT_F16, ISA_DT_F32, ux, xf, n * R * C, ISA_RND_RNE);
	} else if (last) {
		row_reduce(g, RK_MAX, ux, n, cols, nb, mx, r16, acc, tmp, r32);
		to_blocks(g, r16, tt, bc, n16, 1);
		/* x -= max, one instruction per column block, 8 rows a repeat */
		rows_op(g, ISA_OP_VSUB, ISA_DT_F16, ux, bc, 0, 1, 8, nb, n16);
		int64_t e = log ? ebuf : ux;
		flat(g, ISA_OP_VEXP, ISA_DT_F16, e, ux, n16 * C, 0);
		row_reduce(g, RK_SUM, e, n, cols, nb, mx, r16, acc, tmp, r32);
		flat(g, log ? ISA_OP_VLN : ISA_OP_VREC, ISA_DT_F32, r32, r32, n16, 0);
		kg_flat_conv(g, ISA_DT_F16, ISA_DT_F32, r16, r32, n16);
		to_blocks(g, r16, tt, bc, n16, 1);
		rows_op(g, log ? ISA_OP_VSUB : ISA_OP_VMUL, ISA_DT_F16, ux, bc, 0,
			1, 8, nb, n16);
	} else {
		strided(g, ISA_OP_VMOV, m, ux, -1, n, C, nb, st, 0);
		for (int64_t r = 1; r < R; r++)
			strided(g, ISA_OP_VMAX, m, m, ux + r * C * 2, n, C, nb, nb, st);
		for (int64_t r = 0; r < R; r++)
			strided(g, ISA_OP_VSUB, ux + r * C * 2, ux + r * C * 2, m, n, C, st,
				st, nb);
		int64_t e = log ? ebuf : ux;
		flat(g, ISA_OP_VEXP, ISA_DT_F16, e, ux, n * R * C, 0);
		strided(g, ISA_OP_VMOV, m, e, -1, n, C, nb, st, 0);
		for (int64_t r = 1; r < R; r++)
			strided(g, ISA_OP_VADD, m, m, e + r * C * 2, n, C, nb, nb, st);
		flat(g, log ? ISA_OP_VLN : ISA_OP_VREC, ISA_DT_F16, m, m, n * C, 0);
		for (int64_t r = 0; r < R; r++)
			strided(g, log ? ISA_OP_VSUB : ISA_OP_VMUL, ux + r * C * 2,
				ux + r * C * 2, m, n, C, st, st, nb);
	}
	store_tile(g, a0 * R * C * 2, ux, n * R * C / 16);
}

/* Softmax (log: LogSoftmax, x - max - ln(sum(exp(x - max))), the
 * exponentials in a buffer of their own (e) so that x - max survives to the
 * final subtract) over R (last = 0: element-wise over [A][R][C]) or over a row of
 * cols real lanes (last = 1, R = 1).  Arguments: 0 x, 1 y. */
int cc_gen_softmax_any(const struct soc_config *cfg, int64_t A, int64_t R, int64_t C,
		       int64_t cols, int last, float scale, int64_t mask_div, int log, int f32,
		       struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t tile, per;
	if (mask_div > 0 && !last) {
		snprintf(err, errlen, "a Softmax mask over an axis other than the last is not "
			 "supported yet");
		return -1;
	}
	/* f32: an fp32 copy of x (e is made in place: LogSoftmax converts x and
	 * subtracts the max again rather than keep an fp32 e besides), and over R
	 * the max and the sums in fp32 */
	int64_t per_a = f32 ? R * C * 6 + C * 4 + (last ? 0 : C * 8) + 256 * 3 + 4 + 2 + 32 * 2 +
				      64 + 32
			    : R * C * 2 * (log ? 2 : 1) + C * 2 + 256 * 3 + 4 + 2 + 32 * 2 + 64;
	if (plan(cfg, per_a, last ? 16 : 1, &tile, block_dim, A, &per, err, errlen))
		return -1;
	/* with a mask, a tile never spans two mask rows: mask_div rows share one */
	int64_t seg = mask_div > 0 ? mask_div : A;
	int64_t per_seg = (seg + tile - 1) / tile, tiles = per_seg * ((A + seg - 1) / seg);
	if (mask_div > 0) {
		int64_t blocks = tiles < cfg->core_count ? tiles : cfg->core_count;
		blocks = blocks > 1024 ? 1024 : blocks;
		per = (tiles + blocks - 1) / blocks;
		*block_dim = (unsigned)((tiles + per - 1) / per);
	}
	int64_t t16 = tile;
	int64_t ux = 0, m = (tile * R * C * 2 + 31) / 32 * 32, mx = m + t16 * C * 2,
		acc = mx + t16 * 256, tmp = acc + t16 * 256, r32 = tmp + t16 * 256,
		r16 = r32 + t16 * 4 + 256, tt = r16 + t16 * 2 + 256, bc = tt + t16 * 32,
		mbuf = bc + t16 * 32, ebuf = (mbuf + C * 2 + 31) / 32 * 32;
	/* f32: xf (x, then e, in fp32) where the fp16 e would be; over R the max
	 * m32 and the sums s32; along the last axis tt holds the second row of
	 * broadcast blocks (the max stays in bc for LogSoftmax) */
	int64_t xf = ebuf, m32 = xf + tile * R * C * 4, s32 = m32 + tile * C * 4;
	struct smplan q = { .R = R, .C = C, .cols = cols, .last = last, .log = log, .f32 = f32,
			    .scale = scale, .mask_div = mask_div, .A = A, .tile = tile, .per = per,
			    .seg = seg, .per_seg = per_seg, .tiles = tiles, .ux = ux, .m = m, .mx = mx,
			    .acc = acc, .tmp = tmp, .r32 = r32, .r16 = r16, .tt = tt, .bc = bc,
			    .mbuf = mbuf, .ebuf = ebuf, .xf = xf, .m32 = m32, .s32 = s32 };
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	if (mask_div > 0)
		cc_ldarg(p, R_MASK, 2);
	struct kg_steps ks = { .blocks = *block_dim,
			       .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 1 } }, .nsync = 1,
			       .per = per, .units = tiles, .step = softmax_tile, .ctx = &q };
	return kg_emit_kernel(p, 0, 0, &ks, "softmax", err, errlen);
}
