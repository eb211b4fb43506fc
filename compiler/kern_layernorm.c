/* kern_layernorm.c: LayerNormalization over the last axis of a padded ND
 * tensor, one fused vector kernel (what torch's decomposed nn.LayerNorm
 * export becomes after pass_fuse_layernorm.c).
 *
 * Rows are split across cores; each core streams its rows through the UB in
 * tiles of n rows, double-buffered: MTE2 loads tile t+1 into one fp16 buffer
 * while V computes tile t in the other and MTE3 stores the tile before.
 *
 * Statistics in fp32, as CANN's LayerNorm does for fp16 I/O, so that deep
 * models keep their accuracy: the tile is converted to fp32 rows of R
 * 64-lane repeats (R = ceil(C / 64), each row padded to R * 64 floats), then
 *   sum:   the R repeats of each row added element-wise into acc[n][64]
 *          (vadd, rep = n rows), then one vcadd per row: reduce the repeats,
 *          then the partial sums;
 *   mean = sum / C, vbrcb'd to one 32-byte block per row;
 *   d = x - mean (a VBIN reading the row's mean block with block stride 0);
 *   var:   d * d accumulated the same way (vmla) and vcadd'ed, / C;
 *   rstd = vrsqrt(var + eps), vbrcb'd;   d *= rstd;
 * then back to fp16, * gamma, + beta (fp16 rows kept in the UB).  Lanes past
 * C are undefined (the layout's padding, or the next row's data read by a
 * repeat that runs past the row): the repeat holding the row's tail is
 * masked with vmaskn in both sums, and in the conversion back to fp16 so
 * that it writes nothing past the padded row.
 *
 * The per-row ops run as one instruction per repeat column j (rep = n rows,
 * the block read with repeat stride 1 and block stride 0) when the tile has
 * more rows than the row has repeats, else as one per row (rep = R, the
 * block read with block and repeat stride 0).
 *
 * With has_residual the tile of r (a residual, x's shape) is loaded too
 * and added to x in fp16 first, rounded as a separate Add kernel would.
 *
 * Arguments: 0 x, 1 y, 2 params (fp16 gamma [C16] then beta [C16]), then
 * the mean and the rstd when wanted (padded ND [rows, 1]: 16 copies per
 * row), then r with has_residual. */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Arguments: x, y, params in x1, x2, x8 and the optional outputs and the
 * residual in x9, x26, x27, clear of the builder's fixed registers (x3..x7:
 * GM address, block dispatch, loop counters, kern_gen.h); the UB addresses
 * in its cache x11..x18; x24, x25 the lane count and scalar operands. */
enum { R_X = R_SRC, R_Y = R_DST, R_P = 8, R_M = 9, R_V = 26, R_RES = 27, R_N = 24, R_S = 25,
       R_POOL = 11, NPOOL = 8 /* x11..x18 */ };

/* The UB addresses live in the builder's register cache, in the pool
 * registers: the scalar unit issues one instruction a cycle, and a vector
 * instruction of a small tile takes only a few cycles, so reloading three
 * addresses before each one would make the kernel scalar-bound.  Reset
 * where blocks start (a branch target: the registers hold whatever the
 * dispatch left).  Least recently used is reloaded: an instruction's own
 * operands were used last, so none of them is evicted by another. */

static int64_t up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/* A binary vector instruction with its UB operands, looked up in operand
 * order; the other fields as KG_I's. */
#define VOP2(g, op_, dt_, dst, src0, src1, rep, ...)                                       \
	KG_V(g, VBIN, op_, dt_, dst, src0, rep, .rs2 = kg_reg(g, src1), __VA_ARGS__)

/* The *S forms: the scalar (fp32 bits) in R_S. */
static void vscal(struct kg *g, enum isa_op op, int64_t dst, int64_t src, float s, int64_t rep)
{
	uint32_t bits;
	memcpy(&bits, &s, 4);
	cc_li(g->p, R_S, bits);
	KG_V(g, VSCAL, op, ISA_DT_F32, dst, src, rep, .rs2 = R_S);
}

static void mask_lanes(struct kg *g, int64_t lanes)
{
	cc_li(g->p, R_N, lanes);
	KG_I(g, R1, ISA_OP_VMASKN, .rs1 = R_N);
}

/* dst(dt) = src(st), rounding to nearest even; the other fields as KG_I's. */
#define CONV(g, dt_, st_, dst, src, rep, ...)                                              \
	KG_V(g, VCONV, ISA_OP_VCONV, dt_, dst, src, rep, .st = (st_), .rnd = ISA_RND_RNE,  \
	     __VA_ARGS__)

struct ln_plan {
	int64_t C, c16, R, R16, tail, tail16, tailh;
	int64_t T; /* rows per tile */
	int resid; /* a residual to add first */
	/* UB offsets */
	int64_t prm, xh[2], rh[2], xf, acc, s32, m32, r32, mb, rb, h16, mo[2], ro[2], end;
};

static void plan(struct ln_plan *pl, int64_t T)
{
	int64_t o = 0;
	pl->T = T;
	/* gamma, beta; slack for the masked last repeat of either */
	pl->prm = o;
	o += up(2 * pl->c16 * 2 + 256, 256);
	for (int k = 0; k < 2; k++) {
		/* slack: a conversion repeat of the last row reads up to 128 bytes past it */
		pl->xh[k] = o;
		o += up(T * pl->c16 * 2 + 256, 256);
		pl->rh[k] = o; /* the residual's tile, when there is one */
		o += pl->resid ? up(T * pl->c16 * 2 + 256, 256) : 0;
	}
	pl->xf = o;
	o += T * pl->R * 256;
	pl->acc = o;
	o += T * 256;
	int64_t sc = up(up(T, 64) * 4, 256);
	pl->s32 = o;
	o += sc;
	pl->m32 = o;
	o += sc;
	pl->r32 = o;
	o += sc;
	pl->mb = o;
	o += up(T, 8) * 32;
	pl->rb = o;
	o += up(T, 8) * 32;
	pl->h16 = o;
	o += up(up(T, 64) * 2, 256);
	for (int k = 0; k < 2; k++) {
		pl->mo[k] = o;
		o += up(T, 8) * 32;
		pl->ro[k] = o;
		o += up(T, 8) * 32;
	}
	pl->end = o;
}

/* x (fp32 rows of R repeats) op= the row's broadcast block at bc. */
static void rows_op(struct kg *g, enum isa_op op, const struct ln_plan *pl, int64_t bc,
		    int64_t n)
{
	if (n >= pl->R) {
		for (int64_t j = 0; j < pl->R; j++) {
			VOP2(g, op, ISA_DT_F32, pl->xf + j * 256, pl->xf + j * 256, bc, n,
			     .dr = pl->R * 8, .s0r = pl->R * 8, .s1b = 0, .s1r = 1);
		}
	} else {
		for (int64_t r = 0; r < n; r++) {
			int64_t row = pl->xf + r * pl->R * 256;
			VOP2(g, op, ISA_DT_F32, row, row, bc + r * 32, pl->R, .s1b = 0, .s1r = 0);
		}
	}
}

/* s32[r] = sum over the row's C lanes of x (squares: x * x), x the fp32 tile. */
static void row_sums(struct kg *g, const struct ln_plan *pl, int squares, int64_t n)
{
	int64_t rs = pl->R * 8, src = pl->xf;
	if (pl->R > 1) {
		/* acc = repeat 0 (never the tail when R > 1), then the others added */
		if (squares)
			VOP2(g, ISA_OP_VMUL, ISA_DT_F32, pl->acc, pl->xf, pl->xf, n, .dr = 8,
			     .s0r = rs, .s1r = rs);
		else
			KG_V(g, VUN, ISA_OP_VMOV, ISA_DT_F32, pl->acc, pl->xf, n, .dr = 8,
			     .s0r = rs);
		for (int64_t j = 1; j < pl->R; j++) {
			int64_t xj = pl->xf + j * 256;
			if (j == pl->R - 1 && pl->tail < 64)
				mask_lanes(g, pl->tail);
			if (squares)
				VOP2(g, ISA_OP_VMLA, ISA_DT_F32, pl->acc, xj, xj, n, .dr = 8,
				     .s0r = rs, .s1r = rs);
			else
				VOP2(g, ISA_OP_VADD, ISA_DT_F32, pl->acc, pl->acc, xj, n, .dr = 8,
				     .s0r = 8, .s1r = rs);
		}
		if (pl->tail < 64)
			mask_lanes(g, 0);
		src = pl->acc;
		rs = 8;
	} else if (squares) {
		VOP2(g, ISA_OP_VMUL, ISA_DT_F32, pl->acc, pl->xf, pl->xf, n, .dr = 8, .s0r = 8,
		     .s1r = 8);
		src = pl->acc;
	}
	/* one repeat: only the row's own lanes */
	if (pl->R == 1 && pl->tail < 64)
		mask_lanes(g, pl->tail);
	KG_V(g, VRED, ISA_OP_VCADD, ISA_DT_F32, pl->s32, src, n, .s0r = rs);
	if (pl->R == 1 && pl->tail < 64)
		mask_lanes(g, 0);
}

/* One per-row statistic (fp32 at s) as 16 fp16 copies per row at dst. */
static void stat_blocks(struct kg *g, const struct ln_plan *pl, int64_t s, int64_t dst,
			int64_t n)
{
	CONV(g, ISA_DT_F16, ISA_DT_F32, pl->h16, s, (n + 63) / 64, .dr = 4);
	KG_V(g, VUN, ISA_OP_VBRCB, ISA_DT_F16, dst, pl->h16, (n + 7) / 8);
}

static void compute_tile(struct kg *g, const struct cc_layernorm *ln,
			 const struct ln_plan *pl, int par, int64_t n)
{
	int64_t xh = pl->xh[par], hr = pl->c16 / 16; /* fp16 row stride in 32-byte units */
	/* fp16 -> fp32, one repeat column at a time: lanes past the row are
	 * whatever follows it, masked below */
	for (int64_t j = 0; j < pl->R; j++) {
		CONV(g, ISA_DT_F32, ISA_DT_F16, pl->xf + j * 256, xh + j * 128, n, .dr = pl->R * 8,
		     .s0r = hr);
	}
	float inv_c = 1.0f / (float)pl->C;
	row_sums(g, pl, 0, n);
	int64_t r64 = (n + 63) / 64, r8 = (n + 7) / 8;
	vscal(g, ISA_OP_VMULS, pl->m32, pl->s32, inv_c, r64);
	KG_V(g, VUN, ISA_OP_VBRCB, ISA_DT_F32, pl->mb, pl->m32, r8);
	rows_op(g, ISA_OP_VSUB, pl, pl->mb, n);
	row_sums(g, pl, 1, n);
	vscal(g, ISA_OP_VMULS, pl->r32, pl->s32, inv_c, r64);
	vscal(g, ISA_OP_VADDS, pl->r32, pl->r32, ln->eps, r64);
	KG_V(g, VUN, ISA_OP_VRSQRT, ISA_DT_F32, pl->r32, pl->r32, r64);
	KG_V(g, VUN, ISA_OP_VBRCB, ISA_DT_F32, pl->rb, pl->r32, r8);
	rows_op(g, ISA_OP_VMUL, pl, pl->rb, n);
	/* back to fp16 in place of x; the last column masked to the padded row */
	for (int64_t j = 0; j < pl->R; j++) {
		int last = j == pl->R - 1 && pl->tail16 < 64;
		if (last)
			mask_lanes(g, pl->tail16);
		CONV(g, ISA_DT_F16, ISA_DT_F32, xh + j * 128, pl->xf + j * 256, n, .dr = hr,
		     .s0r = pl->R * 8);
		if (last)
			mask_lanes(g, 0);
	}
	/* gamma and beta: fp16 [c16], the same repeat for every row */
	for (int k = 0; k < 2; k++) {
		if (!(k ? ln->has_beta : ln->has_gamma))
			continue;
		int64_t v = pl->prm + k * pl->c16 * 2;
		for (int64_t j = 0; j < pl->R16; j++) {
			int last = j == pl->R16 - 1 && pl->tailh < 128;
			if (last)
				mask_lanes(g, pl->tailh);
			VOP2(g, k ? ISA_OP_VADD : ISA_OP_VMUL, ISA_DT_F16, xh + j * 256,
			     xh + j * 256, v + j * 256, n, .dr = hr, .s0r = hr, .s1r = 0);
			if (last)
				mask_lanes(g, 0);
		}
	}
	if (ln->want_mean)
		stat_blocks(g, pl, pl->m32, pl->mo[par], n);
	if (ln->want_rstd)
		stat_blocks(g, pl, pl->r32, pl->ro[par], n);
}

/* The kernel's steps (kg_emit_steps): a block's gamma and beta first when
 * there are any, then its tiles of rows; tiles of one parity and size
 * repeat with their GM offsets moving by a tile's rows, so a block's tiles
 * run as a loop, and blocks of as many rows share one copy of the code. */
struct ln_kern {
	const struct cc_layernorm *ln;
	const struct ln_plan *pl;
	int64_t per;
	int params; /* 1: step 0 loads gamma and beta */
};

/* Block b's rows [*r0, *r1) and its first tile's rows: a half tile (and
 * so, usually, a half tile last): the load before the first computation
 * and the store after the last one are not overlapped, so they are made
 * short. */
static int64_t block_rows(const struct ln_kern *k, int64_t b, int64_t *r0, int64_t *r1)
{
	int64_t T = k->pl->T;
	*r0 = b * k->per;
	*r1 = *r0 + k->per < k->ln->rows ? *r0 + k->per : k->ln->rows;
	int64_t first = *r1 - *r0 > T ? (T + 1) / 2 : T;
	return first < *r1 - *r0 ? first : *r1 - *r0;
}

static size_t ln_steps(const void *ctx, int64_t b)
{
	const struct ln_kern *k = ctx;
	int64_t r0, r1, first = block_rows(k, b, &r0, &r1);
	return (size_t)k->params + 1 + (size_t)((r1 - r0 - first + k->pl->T - 1) / k->pl->T);
}

/* Block b's tile t: its first row and rows. */
static int64_t tile_rows(const struct ln_kern *k, int64_t b, size_t t, int64_t *r)
{
	int64_t r0, r1, first = block_rows(k, b, &r0, &r1);
	*r = r0 + (t ? first + (int64_t)(t - 1) * k->pl->T : 0);
	int64_t n = t ? k->pl->T : first;
	return r1 - *r < n ? r1 - *r : n;
}

static void ln_params(struct kg *g, const struct ln_plan *pl)
{
	kg_dma(g, ISA_OP_MOV_GM_UB, R_P, 0, pl->prm, 1, 2 * pl->c16 / 16, 0, 0);
	cc_set_flag(g->p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
	cc_wait_flag(g->p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
}

static void ln_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct ln_kern *k = ctx;
	const struct cc_layernorm *ln = k->ln;
	const struct ln_plan *pl = k->pl;
	struct cc_prog *p = g->p;
	if (k->params && i == 0) {
		ln_params(g, pl);
		return;
	}
	size_t t = i - (size_t)k->params;
	int par = (int)(t % 2);
	int64_t r, n = tile_rows(k, b, t, &r), rowb = pl->c16 * 2; /* bytes of a padded fp16 row */
	/* the buffers of par are free once the store of two tiles ago is done */
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_X, r * rowb, pl->xh[par], 1, n * pl->c16 / 16, 0, 0);
	if (ln->has_residual)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_RES, r * rowb, pl->rh[par], 1, n * pl->c16 / 16, 0,
		       0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	if (ln->has_residual) /* x += r in fp16, the whole tile at once */
		for (int64_t e = 0, reps = (n * pl->c16 + 127) / 128; e < reps;
		     e += ISA_VEC_REP_MAX) {
			int64_t m = reps - e < ISA_VEC_REP_MAX ? reps - e : ISA_VEC_REP_MAX;
			VOP2(g, ISA_OP_VADD, ISA_DT_F16, pl->xh[par] + e * 256,
			     pl->xh[par] + e * 256, pl->rh[par] + e * 256, m);
		}
	compute_tile(g, ln, pl, par, n);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, r * rowb, pl->xh[par], 1, n * pl->c16 / 16, 0, 0);
	for (int s = 0; s < 2; s++) {
		if (!(s ? ln->want_rstd : ln->want_mean))
			continue;
		kg_dma(g, ISA_OP_MOV_UB_GM, s ? R_V : R_M, r * 32, s ? pl->ro[par] : pl->mo[par],
		       1, n, 0, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
}

int cc_gen_layernorm(const struct soc_config *cfg, const struct cc_layernorm *ln,
		     struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	struct ln_plan pl;
	memset(&pl, 0, sizeof pl);
	pl.C = ln->cols;
	pl.c16 = cc_pad16(ln->cols);
	pl.R = (ln->cols + 63) / 64;
	pl.tail = ln->cols - 64 * (pl.R - 1);
	pl.R16 = (pl.c16 + 127) / 128;
	pl.tail16 = pl.c16 - 64 * (pl.R - 1); /* padded lanes of the last fp32 column */
	pl.tailh = pl.c16 - 128 * (pl.R16 - 1); /* and of the last fp16 one */
	pl.resid = ln->has_residual;
	if (ln->rows < 1 || ln->cols < 1) {
		snprintf(err, errlen, "LayerNormalization of an empty tensor is not supported yet");
		return -1;
	}
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024, T = ISA_VEC_REP_MAX; /* rows: repeats */
	for (;;) {
		plan(&pl, T);
		if (pl.end <= ub || T == 1)
			break;
		T = T * ub / pl.end < T ? T * ub / pl.end : T - 1;
		if (T < 1)
			T = 1;
	}
	if (pl.end > ub || pl.R * 8 > ISA_VEC_RSTRIDE_MAX) {
		snprintf(err, errlen, "LayerNormalization over %lld elements (one row does not fit "
				      "the %lld KiB UB) is not supported yet",
			 (long long)ln->cols, (long long)cfg->ub_size_kb);
		return -1;
	}
	int64_t per, blocks = cc_split_work(ln->rows, cfg->core_count, &per);
	/* several tiles per core, so that loads and stores overlap the
	 * computation; not below 8 rows, where per-instruction costs dominate */
	int64_t nt = (per + T - 1) / T, want = (per + 7) / 8 < 4 ? (per + 7) / 8 : 4;
	if (nt < want)
		nt = want;
	T = (per + nt - 1) / nt;
	plan(&pl, T);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_Y, 1);
	cc_ldarg(p, R_P, 2);
	int a = 3;
	if (ln->want_mean)
		cc_ldarg(p, R_M, a++);
	if (ln->want_rstd)
		cc_ldarg(p, R_V, a++);
	if (ln->has_residual)
		cc_ldarg(p, R_RES, a++);
	struct ln_kern k = { ln, &pl, per, ln->has_gamma || ln->has_beta };
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 } },
			       .nsync = 1, .nsteps = ln_steps, .step = ln_step, .ctx = &k };
	return kg_emit_kernel(p, R_POOL, R_POOL + NPOOL, &ks, "LayerNormalization", err, errlen);
}
