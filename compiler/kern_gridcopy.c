/* kern_gridcopy.c: a copy between two grids of 32-byte blocks (kernels.h,
 * cc_gen_grid_copy): Slice, Split and Expand of device tensors whose
 * lanes stay in place.
 *
 * The copy's axes, outermost first, become loop levels; adjacent levels
 * that are contiguous on both sides merge, and the innermost contiguous run
 * becomes a chunk.  The innermost remaining level moves as the bursts of
 * one DMA (a source or destination gap between chunks; a stride smaller
 * than a chunk, as Expand's stride 0, falls back to a DMA per chunk); the
 * outer levels are unrolled at compile time.  Work units (a group of
 * chunks, or a piece of a chunk larger than half the UB) split over the
 * cores and alternate between two UB buffers, as cc_gen_copy does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments x, y in R_SRC, R_DST (kern_gen.h); the vector
 * operands' UB addresses loaded into x16, x17, a lane count or scalar into
 * x11; the kernel builder's cache (the DMAs' UB addresses) x18..x23. */
enum { R_UB = 16, R_N = 11, R_CACHE = 18, R_CACHE_END = 24 };

/* A kernel's blocks of steps from x and y's arguments. */
static int emit_steps(struct cc_prog *p, const struct kg_steps *ks, const char *what, char *err,
		      size_t errlen)
{
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, ks, what, err, errlen);
}

/* The grid copy's levels and work units (see the top of the file): each
 * unit a step, the two UB buffers in turn; units alike in their code and
 * moving by a constant (a group of chunks after another) run as a loop. */
struct grid {
	int m;
	int64_t c[CC_GRID_MAX_RANK + 1], s[CC_GRID_MAX_RANK + 1], d[CC_GRID_MAX_RANK + 1];
	int64_t src_off, chunk, piece, npieces, L, group, ngroups, units, per, ub_half;
	int burst_s, burst_d;
};

static void grid_unit(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct grid *q = ctx;
	struct cc_prog *p = g->p;
	int m = q->m, par = (int)(i % 2);
	const int64_t *c = q->c, *s = q->s, *d = q->d;
	int64_t w = b * q->per + (int64_t)i;
	int64_t pc = w % q->npieces, gi = w / q->npieces % q->ngroups, o = w / q->npieces / q->ngroups;
	int64_t so = q->src_off * 32, dof = 0;
	for (int k = m - 2; k >= 0; k--, o /= c[k + 1]) {
		so += o % c[k] * s[k] * 32;
		dof += o % c[k] * d[k] * 32;
	}
	int64_t j0 = gi * q->group, nj = q->L - j0 < q->group ? q->L - j0 : q->group;
	so += j0 * s[m - 1] * 32 + pc * q->piece;
	dof += j0 * d[m - 1] * 32 + pc * q->piece;
	int64_t len = q->chunk - pc * q->piece < q->piece ? q->chunk - pc * q->piece : q->piece;
	int64_t ub = par * q->ub_half;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
	if (q->burst_s)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, so, ub, nj, len / 32,
		       nj > 1 ? s[m - 1] - len / 32 : 0, 0);
	else
		for (int64_t j = 0; j < nj; j++)
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, so + j * s[m - 1] * 32, ub + j * len, 1,
			       len / 32, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE3, par);
	if (q->burst_d)
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, dof, ub, nj, len / 32, 0,
		       nj > 1 ? d[m - 1] - len / 32 : 0);
	else
		for (int64_t j = 0; j < nj; j++)
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, dof + j * d[m - 1] * 32, ub + j * len, 1,
			       len / 32, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, par);
}

int cc_gen_grid_copy(const struct soc_config *cfg, int rank, const int64_t *cnt,
		     const int64_t *sst, const int64_t *dst, int64_t src_off, struct cc_prog *p,
		     unsigned *block_dim, char *err, size_t errlen)
{
	/* merge levels (strides in blocks), dropping extents of 1 */
	struct grid q = { .src_off = src_off };
	int64_t *c = q.c, *s = q.s, *d = q.d;
	int m = 0;
	if (rank < 0 || rank > CC_GRID_MAX_RANK) {
		snprintf(err, errlen, "grid copy: rank %d out of range", rank);
		return -1;
	}
	for (int i = 0; i < rank; i++) {
		if (cnt[i] < 1) {
			snprintf(err, errlen, "grid copy: empty extent");
			return -1;
		}
		if (cnt[i] == 1)
			continue;
		if (m && s[m - 1] == cnt[i] * sst[i] && d[m - 1] == cnt[i] * dst[i]) {
			c[m - 1] *= cnt[i]; /* the outer level is a whole run of this one */
			s[m - 1] = sst[i];
			d[m - 1] = dst[i];
			continue;
		}
		c[m] = cnt[i];
		s[m] = sst[i];
		d[m] = dst[i];
		m++;
	}
	/* the chunk: the innermost level when it is contiguous on both sides */
	int64_t chunk = 32;
	if (m && s[m - 1] == 1 && d[m - 1] == 1)
		chunk = 32 * c[--m];
	if (!m) { /* a single chunk: one level of one */
		c[0] = 1;
		s[0] = d[0] = 0;
		m = 1;
	}
	int64_t ub_half = (int64_t)cfg->ub_size_kb * 1024 / 2 / 32 * 32;
	int64_t piece = chunk < ub_half ? chunk : ub_half;
	int64_t npieces = (chunk + piece - 1) / piece;
	int64_t L = c[m - 1];
	int burst_s = s[m - 1] * 32 >= chunk, burst_d = d[m - 1] * 32 >= chunk;
	int64_t group = npieces > 1 ? 1 : ub_half / chunk;
	group = group > L ? L : group;
	/* a single level: spread it over the cores rather than fill one buffer
	 * (outer levels give the cores units of their own) */
	if (m == 1) {
		int64_t fair = (L + cfg->core_count - 1) / cfg->core_count;
		group = fair < group ? fair : group;
	}
	int64_t ngroups = (L + group - 1) / group, outer = 1;
	for (int i = 0; i + 1 < m; i++)
		outer *= c[i];
	int64_t units = outer * ngroups * npieces;
	if (units > 1 << 20) {
		snprintf(err, errlen, "a copy of %lld pieces is not supported yet", (long long)units);
		return -1;
	}
	int64_t per, blocks = cc_split_work(units, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	q.m = m;
	q.chunk = chunk;
	q.piece = piece;
	q.npieces = npieces;
	q.L = L;
	q.group = group;
	q.ngroups = ngroups;
	q.units = units;
	q.per = per;
	q.ub_half = ub_half;
	q.burst_s = burst_s;
	q.burst_d = burst_d;
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 2 } },
			       .nsync = 1, .per = per, .units = units, .step = grid_unit,
			       .ctx = &q };
	return emit_steps(p, &ks, "grid copy", err, errlen);
}

/* The column-space kernels' band of nr <= 16 rows (double-buffered, parity
 * par): MTE2 brings nbi blocks of each row (rows xb blocks apart, from byte
 * gm_off of x) to ua, and one vtranspose per block puts input block j's 16
 * columns at blocks 16j .. 16j + 15 of ubb (column space). */
static void band_in(struct kg *g, int par, int64_t gm_off, int64_t nr, int64_t nbi, int64_t xb,
		    int64_t ua, int64_t ubb)
{
	struct cc_prog *p = g->p;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, gm_off, ua, nr, nbi, nr > 1 ? xb - nbi : 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	/* band rows are nbi blocks apart */
	kg_transpose(g, ubb, ua, nbi, 1, nbi, 16, 1);
}

/* ...and back: the yb output blocks' columns at cols (16 columns a block)
 * vtransposed into rows of yb blocks at uc, and MTE3 writes the band's nr
 * rows to byte gm_off of y. */
static void band_out(struct kg *g, int par, int64_t gm_off, int64_t nr, int64_t yb,
		     int64_t cols, int64_t uc)
{
	struct cc_prog *p = g->p;
	/* output rows of yb blocks in the UB */
	kg_transpose(g, uc, cols, yb, yb, 1, 1, 16);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, gm_off, uc, 1, nr * yb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

/* The column-space kernels' bands of 16 rows, one a step, the two buffer
 * sets in turn (set bytes apart); bands alike run as a loop. */
struct bands {
	int64_t rows, bands, per, set, xb, yb, nbi, a_sz, b_sz, d_sz;
	int64_t in_blk, s; /* the first input block read; slice_last: the start column % 16 */
	const int64_t *map; /* colmap: the output columns' sources */
	int64_t cols;
	uint32_t vbits;
};

/* A band kernel's blocks: bands split over the cores, double-buffered. */
static int band_kernel(const struct soc_config *cfg, struct bands *q,
		       void (*step)(struct kg *, const void *, int64_t, size_t), const char *what,
		       struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	q->bands = (q->rows + 15) / 16;
	int64_t blocks = cc_split_work(q->bands, cfg->core_count, &q->per);
	*block_dim = (unsigned)blocks;
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .per = q->per, .units = q->bands, .step = step,
			       .ctx = q };
	return emit_steps(p, &ks, what, err, errlen);
}

static void slice_band(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct bands *q = ctx;
	int par = (int)(i % 2);
	int64_t u = b * q->per + (int64_t)i;
	int64_t r0 = 16 * u, nr = q->rows - r0 < 16 ? q->rows - r0 : 16;
	int64_t ua = par * q->set, ubb = ua + q->a_sz * 32, uc = ubb + q->b_sz * 32;
	band_in(g, par, (r0 * q->xb + q->in_blk) * 32, nr, q->nbi, q->xb, ua, ubb);
	/* and back from column s */
	band_out(g, par, r0 * q->yb * 32, nr, q->yb, ubb + q->s * 32, uc);
}

/* Slice of ND rows along the padded last axis at a start b that is not a
 * multiple of 16 (kernels.h): the lanes must move, so a band of 16 rows goes
 * through "column space" as in cc_gen_concat_last: a 16x16 vtranspose per
 * input block turns every column into one block, and a second, starting at
 * column b % 16, turns 16 columns at a time back into output blocks.  Only
 * the input blocks the slice touches are read.  Bands split over the cores,
 * double-buffered.  Arguments: 0 x, 1 y. */
int cc_gen_slice_last(const struct soc_config *cfg, int64_t rows, int64_t xcols, int64_t b,
		      int64_t cols, struct cc_prog *p, unsigned *block_dim, char *err,
		      size_t errlen)
{
	int64_t s = b % 16, xb = cc_pad16(xcols) / 16, yb = cc_pad16(cols) / 16;
	int64_t nbi = (s + cols + 15) / 16; /* input blocks touched */
	/* per buffer set, in blocks: A the input band, B the column space (one
	 * spare tile: the last output block may read past the input's), C the
	 * output band */
	int64_t a_sz = 16 * nbi, b_sz = 16 * (nbi + 1), c_sz = 16 * yb;
	int64_t set = (a_sz + b_sz + c_sz) * 32;
	if (rows < 1 || cols < 1 || b < 0 || b + cols > xcols || nbi > CC_VT_BAND_MAX ||
	    yb > CC_VT_BAND_MAX ||
	    2 * set > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "Slice of %lld of %lld elements along the last axis is not "
			 "supported yet", (long long)cols, (long long)xcols);
		return -1;
	}
	struct bands q = { .rows = rows, .set = set, .xb = xb, .yb = yb, .nbi = nbi,
			   .a_sz = a_sz, .b_sz = b_sz, .in_blk = b / 16, .s = s };
	return band_kernel(cfg, &q, slice_band, "Slice along the last axis", p, block_dim, err,
			   errlen);
}

/* Output columns of ND rows from any input columns (kernels.h,
 * cc_gen_colmap): column j of y is column map[j] of x, or the value where
 * map[j] < 0.  As in cc_gen_slice_last, a band of 16 rows goes to column
 * space (one 16x16 vtranspose per input block the map touches: every column
 * one block); the output's columns are assembled in a second column space,
 * up to 8 a vector instruction: a run whose sources advance by a constant
 * 0..ISA_VEC_BSTRIDE_MAX blocks (the block stride: 0 repeats one column, as Pad's
 * edge mode does) is one vmov, a run of border columns one vdup of the
 * value; the columns past cols are zeroed so that the padding lanes are 0;
 * a vtranspose per output block turns 16 columns back into rows.  Bands
 * split over the cores, double-buffered.  Arguments: 0 x, 1 y. */
static void colmap_band(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct bands *q = ctx;
	struct cc_prog *p = g->p;
	const int64_t *map = q->map;
	int64_t cols = q->cols, yb = q->yb, blo = q->in_blk;
	int par = (int)(i % 2);
	int64_t u = b * q->per + (int64_t)i;
	int64_t r0 = 16 * u, nr = q->rows - r0 < 16 ? q->rows - r0 : 16;
	int64_t ua = par * q->set, ubb = ua + q->a_sz * 32, ud = ubb + q->b_sz * 32,
		uc = ud + q->d_sz * 32;
	band_in(g, par, (r0 * q->xb + blo) * 32, nr, q->nbi, q->xb, ua, ubb);
	/* the output's columns: runs of up to 8, then the padding as 0 */
	for (int64_t j = 0, n; j < 16 * yb; j += n) {
		int64_t m0 = j < cols ? map[j] : -2, st = 1;
		n = 1;
		if (m0 < 0) {
			while (n < 8 && j + n < 16 * yb &&
			       (j + n < cols ? map[j + n] : -2) == m0)
				n++;
		} else if (j + 1 < cols && map[j + 1] >= m0 &&
			   map[j + 1] - m0 <= ISA_VEC_BSTRIDE_MAX) {
			st = map[j + 1] - m0;
			while (n < 8 && j + n < cols && map[j + n] == m0 + n * st)
				n++;
		}
		cc_li(p, R_N, 16 * n);
		CC_I(p, R1, ISA_OP_VMASKN, .rs1 = R_N);
		cc_li(p, R_UB, ud + j * 32);
		if (m0 < 0) {
			cc_li(p, R_N, m0 == -2 ? 0 : q->vbits);
			CC_I(p, VDUP, ISA_OP_VDUP, .rd = R_UB, .rs2 = R_N,
			     .dt = ISA_DT_F16, .rep = 1, .db = 1, .dr = 8);
		} else {
			cc_li(p, R_UB + 1, ubb + (m0 - 16 * blo) * 32);
			CC_I(p, VUN, ISA_OP_VMOV, .rd = R_UB, .rs1 = R_UB + 1,
			     .s0b = st, .s0r = 8, .dt = ISA_DT_F16, .rep = 1,
			     .db = 1, .dr = 8);
		}
	}
	cc_li(p, R_N, 0); /* all lanes again */
	CC_I(p, R1, ISA_OP_VMASKN, .rs1 = R_N);
	band_out(g, par, r0 * yb * 32, nr, yb, ud, uc);
}

int cc_gen_colmap(const struct soc_config *cfg, int64_t rows, int64_t xcols, int64_t cols,
		  const int64_t *map, float value, struct cc_prog *p, unsigned *block_dim,
		  char *err, size_t errlen)
{
	int64_t lo = -1, hi = -1;
	for (int64_t j = 0; j < cols; j++)
		if (map[j] >= 0) {
			lo = lo < 0 || map[j] < lo ? map[j] : lo;
			hi = map[j] > hi ? map[j] : hi;
		}
	int64_t blo = lo / 16, nbi = hi / 16 - blo + 1;
	int64_t xb = cc_pad16(xcols) / 16, yb = cc_pad16(cols) / 16;
	/* per buffer set, in blocks: A the input band, B its column space, D
	 * the assembled columns, C the output band */
	int64_t a_sz = 16 * nbi, b_sz = 16 * nbi, d_sz = 16 * yb, c_sz = 16 * yb;
	int64_t set = (a_sz + b_sz + d_sz + c_sz) * 32;
	if (rows < 1 || cols < 1 || lo < 0 || hi >= xcols || nbi > CC_VT_BAND_MAX ||
	    yb > CC_VT_BAND_MAX ||
	    2 * set > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "moving the lanes of rows of %lld elements into rows of %lld "
			 "is not supported yet (the columns must fit the UB)", (long long)xcols,
			 (long long)cols);
		return -1;
	}
	struct bands q = { .rows = rows, .set = set, .xb = xb, .yb = yb, .nbi = nbi,
			   .a_sz = a_sz, .b_sz = b_sz, .d_sz = d_sz, .in_blk = blo, .map = map,
			   .cols = cols };
	memcpy(&q.vbits, &value, 4);
	return band_kernel(cfg, &q, colmap_band, "column map", p, block_dim, err, errlen);
}

/* Slice along the last axis with a step other than 1: a column map. */
int cc_gen_slice_last_step(const struct soc_config *cfg, int64_t rows, int64_t xcols, int64_t b,
			   int64_t step, int64_t cols, struct cc_prog *p, unsigned *block_dim,
			   char *err, size_t errlen)
{
	int64_t *map = malloc((size_t)(cols > 0 ? cols : 1) * sizeof *map);
	if (!map) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int64_t j = 0; j < cols; j++)
		map[j] = b + j * step;
	int rc = cc_gen_colmap(cfg, rows, xcols, cols, map, 0.0f, p, block_dim, err, errlen);
	free(map);
	return rc;
}
