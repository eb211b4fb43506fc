/* kern_pool.c: MaxPool, AveragePool and their global forms over NC1HWC0.
 *
 * Windowed pooling.  A pixel is one 32-byte block (16 fp16 channels), so a
 * vector repeat covers 8 output pixels of a row (block stride sw on the
 * input) and the repeats walk down the output rows (repeat stride sh input
 * rows): one instruction per (tap, group of 8 output columns) covers a whole
 * tile.  The input tile sits in the UB with its padding materialised (-inf for
 * max, 0 for average) and rows of Wp = pl + w + pr' pixels; output rows are
 * padded to a multiple of 8 pixels, and the store skips the padding.  Small
 * planes are stacked, G per tile, each given hop*sh input rows so that output
 * row R of the stack reads input rows R*sh + i whichever plane it is in (the
 * few rows computed between planes are discarded).  Big planes are cut into
 * runs of output rows.
 *
 * When kh, kw > 1 and it costs fewer repeats (3x3: 6 instead of 8 per output
 * row at stride 2, 4 at stride 1), the window is separable: every input row
 * is first reduced over kw columns into a row-sum tile, whose rows are then
 * reduced kh at a time.
 *
 * Max pooling stays in fp16 (vmax is exact).  Average pooling accumulates in
 * fp32: the tile is converted once, the fp32 pixel's two 32-byte halves are
 * summed by two instructions (block stride 2*sw), the sum scaled by
 * 1/(kh*kw) and, without count_include_pad, rows and columns whose windows
 * leave the input rescaled by kh/rows-inside and kw/columns-inside.
 *
 * Global pooling (kh = h, kw = w, one output pixel) transposes the plane to
 * [16 channels][pixels] and reduces each channel row with vcadd (fp32
 * accumulation inside the instruction) or vcmax, 128 pixels per repeat; sums
 * are scaled first so that no partial sum can overflow fp16.  Planes of more
 * than 128 pixels reduce to partial rows that are reduced again the same way.
 *
 * Dilated windows (dh, dw > 1) take their taps dh rows and dw columns apart:
 * the tiles are planned for the effective window (kh-1)*dh+1 x (kw-1)*dw+1
 * (ekh x ekw) and only the taps' offsets change, so that a dilation of 1
 * gives the very program it gave before dilations existed.
 *
 * Tiles are double-buffered like every kernel: the load of tile t+1 is issued
 * before the vector work of tile t.  A block is a sequence of such steps
 * (load one tile, compute and store the one before); steps that repeat with
 * only their GM addresses moving run as a loop, and blocks that do likewise
 * share one copy of the code (kern_roll.h), so the code follows the tiles'
 * kinds rather than their count or the batch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"


#define MAX_BLOCKS 1024

static void vbin(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t s0,
		 int64_t s1, int64_t rep, int64_t db, int64_t s0b, int64_t s1b, int64_t dr,
		 int64_t s0r, int64_t s1r)
{
	int r1 = kg_reg(g, s1);
	KG_V(g, VBIN, op, dt, dst, s0, rep, .rs2 = r1, .db = db, .s0b = s0b, .s1b = s1b, .dr = dr,
	     .s0r = s0r, .s1r = s1r);
}
static void vscal(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t src,
		  float scalar, int64_t rep, int64_t db, int64_t dr)
{
	int rsc = kg_reg(g, kg_fbits(scalar));
	KG_V(g, VSCAL, op, dt, dst, src, rep, .rs2 = rsc, .db = db, .s0b = db, .dr = dr, .s0r = dr);
}
/* dst = src * scalar over n contiguous elements (in place is fine). */
static void flat_muls(struct kg *g, enum isa_dtype dt, int64_t at, int64_t n, float scalar)
{
	int64_t lanes = dt == ISA_DT_F32 ? 64 : 128, reps = (n + lanes - 1) / lanes;
	kg_mask_all(g);
	for (int64_t done = 0; done < reps; done += ISA_VEC_REP_MAX) {
		int64_t k = reps - done < ISA_VEC_REP_MAX ? reps - done : ISA_VEC_REP_MAX;
		vscal(g, ISA_OP_VMULS, dt, at + done * 256, at + done * 256, scalar, k, 1, 8);
	}
}
/* npix pixels (32-byte blocks, fp16) from at on = v; a partial repeat masked. */
static void fill(struct kg *g, int64_t at, int64_t npix, float v)
{
	for (int64_t done = 0; done < npix;) {
		int64_t left = npix - done, rep = left / 8 < ISA_VEC_REP_MAX ? left / 8 : ISA_VEC_REP_MAX;
		if (rep == 0) {
			kg_mask_lanes(g, left * 16);
			rep = 1;
		} else {
			kg_mask_all(g);
		}
		int rd = kg_reg(g, at + done * 32), rv = kg_reg(g, kg_fbits(v));
		KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rv, .dt = ISA_DT_F16, .rep = rep);
		done += rep * 8 < left ? rep * 8 : left;
	}
}

/* ---- plans ---------------------------------------------------------------------- */

struct tile {
	int64_t q0, G;    /* planes q0 .. q0+G-1 (q = image * C1 + c1) */
	int64_t oh0, oh1; /* output rows (all of them when G > 1) */
	int store;        /* global pooling: the tile completes its planes */
	int64_t a, m;     /* global pooling of a big plane: pixels [a, a+m); strip
			   * mode: output columns [a, m) */
	int64_t i;        /* strip mode: the window row (tap row) this step adds */
};

struct plan {
	const struct cc_pool *d;
	int64_t q;
	int global, f32;
	/* windowed */
	int64_t wp, wo8, hneed, ngrp;
	int plane_mode;
	int64_t hop, hp; /* plane mode: output and input rows per stacked plane */
	int sep;         /* rows of the window first, then columns of those sums */
	int strip;       /* window rows one at a time (strip_plan) */
	int64_t snr, snc, snc8, swp, sacc; /* strip: output rows, columns (and
					    * padded to 8) per tile, input
					    * pixels per UB row, accumulator */
	int64_t nrt, nct;                  /* strip: tiles down and across */
	int sdbl;                          /* strip: window rows' maxima by doubling */
	int64_t smrow, sbuf[2];            /* strip doubling: its rows, buffers */
	int64_t gmax, rmax;
	int64_t gtile, rtile; /* planes, or output rows, of a block's tiles */
	/* global */
	int64_t P, chunk, nk;
	int big;
	/* both */
	int64_t nb, per, units;
	int64_t in16[2], in32[2], acc[2], out16[2], hsum[2];
	int64_t in_rows, out_rows; /* rows the slots hold (windowed) */
	int64_t scratch;           /* global: partial rows and transposes */
	float pad;
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Window rows (or columns) of output index o that lie inside [0, n): taps
 * lo + i*dl for i < k (dl the dilation). */
static int64_t inside(int64_t o, int64_t s, int64_t p, int64_t k, int64_t dl, int64_t n)
{
	int64_t lo = o * s - p;
	if (lo >= n)
		return 0;
	int64_t i0 = lo >= 0 ? 0 : (-lo + dl - 1) / dl;     /* the first tap inside */
	int64_t i1 = min64(k, (n - 1 - lo) / dl + 1);        /* past the last one */
	return i1 > i0 ? i1 - i0 : 0;
}

/* The rows (columns) the window spans: its first to its last tap. */
static int64_t ekh(const struct cc_pool *d) { return (d->kh - 1) * d->dh + 1; }
static int64_t ekw(const struct cc_pool *d) { return (d->kw - 1) * d->dw + 1; }

/* ---- windowed pooling ------------------------------------------------------------ */

/* Input rows past the tile's that the discarded output rows between stacked
 * planes read. */
static int64_t extra_rows(const struct cc_pool *d, int64_t G)
{
	return G > 1 ? max64(0, ekh(d) - d->sh) : 0;
}

/* Bytes of a tile of G planes with rin input and rout output rows each; the
 * slack covers the last column group's overrun (up to 7 pixels of stride sw). */
static int64_t win_bytes(const struct plan *pl, int64_t G, int64_t rin, int64_t rout)
{
	const struct cc_pool *d = pl->d;
	int64_t bin = pl->f32 ? 96 : 32, bout = pl->f32 ? 96 : 32, bh = pl->f32 ? 64 : 32;
	int64_t rows = G * rin + extra_rows(d, G);
	int64_t in_px = rows * pl->wp + 8 * d->sw + ekw(d) + 16;
	int64_t out_px = G * rout * pl->wo8 + 16;
	int64_t h_px = pl->sep ? rows * pl->wo8 + 16 : 0;
	return in_px * bin + out_px * bout + h_px * bh + 5 * 256;
}

static int strip_plan(const struct soc_config *cfg, struct plan *pl, char *err, size_t errlen);

static int win_plan(const struct soc_config *cfg, struct plan *pl, char *err, size_t errlen)
{
	const struct cc_pool *d = pl->d;
	int64_t half = (int64_t)cfg->ub_size_kb * 1024 / 2;
	int64_t es = pl->f32 ? 2 : 1;
	pl->wp = max64(d->pl + d->w, (d->wo - 1) * d->sw + ekw(d));
	pl->hneed = (d->ho - 1) * d->sh + ekh(d);
	pl->wo8 = (d->wo + 7) / 8 * 8;
	pl->ngrp = pl->wo8 / 8;
	pl->pad = d->is_max ? -INFINITY : 0.0f;
	/* separable when the row sums of all input rows plus the column sums
	 * cost fewer instructions' repeats than the whole window per output row */
	pl->sep = d->kh > 1 && d->kw > 1 && (d->kw - 1) * d->sh + d->kh - 1 < d->kh * d->kw - 1;
	if (d->kh * d->kw > 256)
		pl->sep = 1; /* (the taps' offsets are listed, 256 at most) */
	if (d->kh > 256 || d->kw > 256) {
		snprintf(err, errlen, "pooling: a %lldx%lld window is not supported yet",
			 (long long)d->kh, (long long)d->kw);
		return -1;
	}
	if (d->is_max && d->sw <= ISA_VEC_BSTRIDE_MAX &&
	    max64(pl->wp, pl->wo8) * d->sh > ISA_VEC_RSTRIDE_MAX) {
		pl->strip = 1; /* (strip rows are at most a UB's width) */
		return strip_plan(cfg, pl, err, errlen);
	}
	if (max64(pl->wp, pl->wo8) * d->sh * es > ISA_VEC_RSTRIDE_MAX ||
	    d->sw * es > ISA_VEC_BSTRIDE_MAX) {
		snprintf(err, errlen, "pooling: rows of %lld pixels or stride %lld are not "
			 "supported yet", (long long)d->w, (long long)d->sw);
		return -1;
	}
	pl->hop = (pl->hneed + d->sh - 1) / d->sh;
	pl->hp = pl->hop * d->sh;
	pl->gmax = 0;
	while (pl->gmax < 4096 && win_bytes(pl, pl->gmax + 1, pl->hp, pl->hop) <= half)
		pl->gmax++;
	pl->rmax = 0;
	while (pl->rmax < d->ho &&
	       win_bytes(pl, 1, pl->rmax * d->sh + ekh(d), pl->rmax + 1) <= half)
		pl->rmax++;
	if (pl->rmax < 1) {
		pl->strip = 1;
		return strip_plan(cfg, pl, err, errlen);
	}
	/* many small blocks: the cores' vector units share the work, while the
	 * bandwidth is shared whatever the split */
	int64_t work = pl->q * d->ho * d->wo;
	int64_t nb = min64(min64((work + 63) / 64, cfg->core_count), MAX_BLOCKS);
	nb = max64(nb, 1);
	pl->plane_mode = pl->gmax >= 2 && pl->q >= nb;
	pl->units = pl->plane_mode ? pl->q : pl->q * d->ho;
	pl->per = (pl->units + nb - 1) / nb;
	pl->nb = (pl->units + pl->per - 1) / pl->per;
	/* two tiles per block or more, so that loads and vector work overlap;
	 * the slots are only as big as those tiles */
	if (pl->plane_mode) {
		int64_t want = max64((pl->per + pl->gmax - 1) / pl->gmax, min64(pl->per, 2));
		pl->gtile = (pl->per + want - 1) / want;
	}
	pl->rtile = min64(pl->rmax, max64(1, (pl->per + 1) / 2));

	int64_t G = pl->plane_mode ? pl->gtile : 1;
	int64_t rin = pl->plane_mode ? pl->hp : (pl->rtile - 1) * d->sh + ekh(d);
	int64_t rout = pl->plane_mode ? pl->hop : pl->rtile;
	pl->in_rows = G * rin + extra_rows(d, G);
	pl->out_rows = G * rout;
	int64_t in_px = pl->in_rows * pl->wp + 8 * d->sw + ekw(d) + 16;
	int64_t out_px = pl->out_rows * pl->wo8 + 16;
	int64_t h_px = pl->in_rows * pl->wo8 + 16;
	int64_t at = 0;
	for (int par = 0; par < 2; par++) {
		pl->in16[par] = at;
		at += in_px * 32;
		if (pl->f32) {
			pl->in32[par] = at;
			at += in_px * 64;
			pl->acc[par] = at;
			at += out_px * 64;
		}
		if (pl->sep) {
			pl->hsum[par] = at;
			at += h_px * 32 * es;
		}
		pl->out16[par] = at;
		at += out_px * 32 + 256;
		at = cc_round_up(at, 256);
	}
	if (at > (int64_t)cfg->ub_size_kb * 1024) {
		snprintf(err, errlen, "pooling: UB plan overflows (internal error)");
		return -1;
	}
	return 0;
}

static size_t win_tiles(const struct plan *pl, int64_t b, struct tile *v, size_t cap)
{
	const struct cc_pool *d = pl->d;
	int64_t u0 = b * pl->per, u1 = min64(u0 + pl->per, pl->units);
	size_t nt = 0;
	if (pl->plane_mode) {
		for (int64_t q = u0; q < u1 && nt < cap; q += pl->gtile) {
			struct tile t = { q, min64(pl->gtile, u1 - q), 0, d->ho, 1, 0, 0, 0 };
			v[nt++] = t;
		}
		return nt;
	}
	/* runs of output rows within one plane */
	int64_t r = pl->rtile;
	for (int64_t u = u0; u < u1 && nt < cap;) {
		int64_t q = u / d->ho, oh0 = u % d->ho;
		int64_t oh1 = min64(min64(oh0 + r, d->ho), oh0 + (u1 - u));
		struct tile t = { q, 1, oh0, oh1, 1, 0, 0, 0 };
		v[nt++] = t;
		u += oh1 - oh0;
	}
	return nt;
}

/* Input rows in the UB per stacked plane. */
static int64_t tile_rin(const struct plan *pl, const struct tile *t)
{
	return pl->plane_mode ? pl->hp : (t->oh1 - t->oh0 - 1) * pl->d->sh + ekh(pl->d);
}

static int64_t tile_rout(const struct plan *pl, const struct tile *t)
{
	return pl->plane_mode ? pl->hop : t->oh1 - t->oh0;
}

/* Padded input rows [base, base+rin) of the tile: the interior part. */
static void interior(const struct plan *pl, const struct tile *t, int64_t *r0, int64_t *r1)
{
	const struct cc_pool *d = pl->d;
	int64_t base = t->oh0 * d->sh, rin = tile_rin(pl, t);
	*r0 = max64(d->pt, base) - base;
	*r1 = min64(d->pt + d->h, base + rin) - base;
	if (*r1 < *r0)
		*r1 = *r0;
}

/* Plane q's place among x's (y's) planes, images x_c1s (y_c1s) channel
 * blocks apart inside a concat buffer (plan_concat.c); and how many planes
 * from q on (of left) are contiguous there, so one transfer moves them. */
static int64_t plane_at(const struct cc_pool *d, int64_t c1s, int64_t q)
{
	int64_t c1 = (d->c + 15) / 16;
	return c1s ? q / c1 * c1s + q % c1 : q;
}
static int64_t plane_run(const struct cc_pool *d, int64_t c1s, int64_t q, int64_t left)
{
	int64_t c1 = (d->c + 15) / 16, r = c1 - q % c1;
	return c1s && r < left ? r : left;
}
static int64_t out_plane(const struct cc_pool *d, int64_t q) { return plane_at(d, d->y_c1s, q); }
static int64_t out_run(const struct cc_pool *d, int64_t q, int64_t left)
{
	return plane_run(d, d->y_c1s, q, left);
}
static int64_t in_plane(const struct cc_pool *d, int64_t q) { return plane_at(d, d->x_c1s, q); }
static int64_t in_run(const struct cc_pool *d, int64_t q, int64_t left)
{
	return plane_run(d, d->x_c1s, q, left);
}

static void win_load(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	const struct cc_pool *d = pl->d;
	int64_t rin = tile_rin(pl, t), r0, r1;
	interior(pl, t, &r0, &r1);
	if (r1 == r0)
		return;
	int64_t ih0 = t->oh0 * d->sh + r0 - d->pt, nr = r1 - r0;
	int64_t dgap = pl->wp - d->w;
	if (t->G > 1 && nr == d->h && rin == d->h) {
		/* stacked planes follow each other as in GM (within an image,
		 * for a view inside a concat buffer) */
		for (int64_t gg = 0, r; gg < t->G; gg += r) {
			r = in_run(d, t->q0 + gg, t->G - gg);
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, in_plane(d, t->q0 + gg) * d->h * d->w * 32,
			       pl->in16[par] + (gg * nr * pl->wp + d->pl) * 32, r * nr, d->w, 0,
			       dgap);
		}
		return;
	}
	for (int64_t gg = 0; gg < t->G; gg++)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (in_plane(d, t->q0 + gg) * d->h + ih0) * d->w * 32,
		    pl->in16[par] + ((gg * rin + r0) * pl->wp + d->pl) * 32, nr, d->w, 0, dgap);
}

/* The padding columns of every row of both parities' input slots: the loads
 * never write them, so once per block is enough. */
static void win_pad_columns(struct kg *g, const struct plan *pl)
{
	const struct cc_pool *d = pl->d;
	int64_t cols[2][2] = { { 0, d->pl }, { d->pl + d->w, pl->wp } };
	for (int par = 0; par < 2; par++)
		for (int s = 0; s < 2; s++)
			for (int64_t c0 = cols[s][0]; c0 < cols[s][1]; c0 += 8) {
				int64_t nc = min64(8, cols[s][1] - c0);
				kg_mask_lanes(g, nc * 16);
				for (int64_t r = 0; r < pl->in_rows; r += ISA_VEC_REP_MAX) {
					int64_t rep = min64(ISA_VEC_REP_MAX, pl->in_rows - r);
					int rd = kg_reg(g, pl->in16[par] + (r * pl->wp + c0) * 32);
					int rv = kg_reg(g, kg_fbits(pl->pad));
					KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rv,
					     .dt = ISA_DT_F16, .rep = rep, .dr = pl->wp);
				}
			}
}

/* dst rows [0, nrows) of wo8 pixels, pixel x of row R reducing the taps
 * src + (R*srow + x*spx + off[t]) pixels: one instruction per tap, column
 * group of 8 and (fp32) half pixel, repeating over up to ISA_VEC_REP_MAX rows. */
static void taps(struct kg *g, const struct plan *pl, int64_t dst, int64_t src, int64_t nrows,
		 int64_t srow, int64_t spx, const int64_t *off, int64_t ntap)
{
	const struct cc_pool *d = pl->d;
	int64_t es = pl->f32 ? 2 : 1; /* 32-byte units per pixel */
	enum isa_op op = d->is_max ? ISA_OP_VMAX : ISA_OP_VADD;
	enum isa_dtype dt = pl->f32 ? ISA_DT_F32 : ISA_DT_F16;
	int64_t db = es, dr = pl->wo8 * es, sb = spx * es, sr = srow * es;
	kg_mask_all(g);
	for (int64_t c = 0; c < pl->ngrp; c++)
		for (int64_t R0 = 0; R0 < nrows; R0 += ISA_VEC_REP_MAX)
			for (int64_t h = 0; h < es; h++) {
				int64_t n = min64(ISA_VEC_REP_MAX, nrows - R0);
				int64_t da = dst + (R0 * pl->wo8 + c * 8) * es * 32 + h * 32;
				int64_t sa = src + (R0 * srow + c * 8 * spx) * es * 32 + h * 32;
				if (ntap == 1) {
					KG_V(g, VUN, ISA_OP_VMOV, dt, da, sa + off[0] * es * 32, n,
					     .db = db, .s0b = sb, .dr = dr, .s0r = sr);
					continue;
				}
				vbin(g, op, dt, da, sa + off[0] * es * 32,
				     sa + off[1] * es * 32, n, db, sb, sb, dr, sr, sr);
				for (int64_t k = 2; k < ntap; k++)
					vbin(g, op, dt, da, sa + off[k] * es * 32, da, n, db, sb,
					     db, dr, sr, dr);
			}
}

static void win_compute(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	const struct cc_pool *d = pl->d;
	int64_t rin = tile_rin(pl, t), rout = tile_rout(pl, t), r0, r1;
	int64_t rt = t->G * rout;
	interior(pl, t, &r0, &r1);
	/* padding rows: above and below the interior of each plane */
	for (int64_t gg = 0; gg < t->G; gg++) {
		int64_t base = pl->in16[par] + gg * rin * pl->wp * 32;
		if (r0 > 0)
			fill(g, base, r0 * pl->wp, pl->pad);
		if (r1 < rin)
			fill(g, base + r1 * pl->wp * 32, (rin - r1) * pl->wp, pl->pad);
	}
	/* (rows past the planes, read only for the discarded output rows
	 * between stacked planes, need no conversion) */
	if (pl->f32)
		kg_flat_conv(g, ISA_DT_F32, ISA_DT_F16, pl->in32[par], pl->in16[par],
			  t->G * rin * pl->wp * 16);
	int64_t src = pl->f32 ? pl->in32[par] : pl->in16[par];
	int64_t dst = pl->f32 ? pl->acc[par] : pl->out16[par];
	int64_t off[256];
	if (pl->sep) {
		for (int64_t j = 0; j < d->kw; j++)
			off[j] = j * d->dw;
		taps(g, pl, pl->hsum[par], src, t->G * rin, pl->wp, d->sw, off, d->kw);
		for (int64_t i = 0; i < d->kh; i++)
			off[i] = i * d->dh * pl->wo8;
		taps(g, pl, dst, pl->hsum[par], rt, d->sh * pl->wo8, 1, off, d->kh);
	} else {
		for (int64_t k = 0; k < d->kh * d->kw; k++)
			off[k] = k / d->kw * d->dh * pl->wp + k % d->kw * d->dw;
		taps(g, pl, dst, src, rt, d->sh * pl->wp, d->sw, off, d->kh * d->kw);
	}
	if (!pl->f32)
		return;
	int64_t acc = pl->acc[par];
	flat_muls(g, ISA_DT_F32, acc, rt * pl->wo8 * 16, 1.0f / (float)(d->kh * d->kw));
	if (!d->count_include_pad) {
		/* windows that leave the input: divide by the taps inside */
		for (int64_t gg = 0; gg < t->G; gg++)
			for (int64_t oh = t->oh0; oh < t->oh1; oh++) {
				int64_t k = inside(oh, d->sh, d->pt, d->kh, d->dh, d->h);
				if (k == d->kh || k == 0)
					continue;
				int64_t R = gg * rout + oh - t->oh0;
				flat_muls(g, ISA_DT_F32, acc + R * pl->wo8 * 64, pl->wo8 * 16,
					  (float)d->kh / (float)k);
			}
		for (int64_t ow = 0; ow < d->wo; ow++) {
			int64_t k = inside(ow, d->sw, d->pl, d->kw, d->dw, d->w);
			if (k == d->kw || k == 0)
				continue;
			kg_mask_lanes(g, 16); /* the pixel's two blocks */
			for (int64_t R0 = 0; R0 < rt; R0 += ISA_VEC_REP_MAX) {
				int64_t at = acc + (R0 * pl->wo8 + ow) * 64;
				vscal(g, ISA_OP_VMULS, ISA_DT_F32, at, at, (float)d->kw / (float)k,
				      min64(ISA_VEC_REP_MAX, rt - R0), 1, pl->wo8 * 2);
			}
		}
	}
	kg_flat_conv(g, ISA_DT_F16, ISA_DT_F32, pl->out16[par], acc, rt * pl->wo8 * 16);
}

static void win_store(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	const struct cc_pool *d = pl->d;
	int64_t rout = tile_rout(pl, t), rows = t->oh1 - t->oh0;
	int64_t sgap = pl->wo8 - d->wo;
	if (t->G == 1 || rout == rows) {
		for (int64_t gg = 0, r; gg < t->G; gg += r) {
			r = out_run(d, t->q0 + gg, t->G - gg);
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST,
			       (out_plane(d, t->q0 + gg) * d->ho + t->oh0) * d->wo * 32,
			       pl->out16[par] + gg * rows * pl->wo8 * 32, r * rows, d->wo, sgap, 0);
		}
		return;
	}
	for (int64_t gg = 0; gg < t->G; gg++)
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, out_plane(d, t->q0 + gg) * d->ho * d->wo * 32,
		    pl->out16[par] + gg * rout * pl->wo8 * 32, rows, d->wo, sgap, 0);
}

/* ---- strip mode: windows too tall or rows too long for the UB ------------------- */

/* When not even one output row's window fits the UB (a 1000x1000 plane
 * pooled by a 591x791 dilated window, a 1-D signal of 10^5 samples), max
 * pooling runs one window row (tap row i) at a time: a step loads, for its
 * tile's nr output rows and nc output columns, the one input row each
 * output row reads at tap row i (rows sh apart in GM: one strided DMA), the
 * kw taps of that row reduce into an accumulator, and the last tap row's
 * result is stored.  Input is read kh times, and the UB holds nr strips of
 * (nc8-1)*sw + ekw pixels whatever kh. */

/* With dw a multiple r of sw (the pytorch-converted tests' dilation 10 at
 * stride 10), output x of a window row is the max of z[x + j*r], j < kw,
 * over z[m] = strip pixel m*sw: a sliding maximum, computed by doubling
 * (L2[m] = max(z[m], z[m+r]), L4[m] = max(L2[m], L2[m+2r]), ...) up to the
 * largest power of two P <= kw, then max(LP[x], LP[x + (kw-P)*r]) (the two
 * windows overlap; max does not mind): about log2(kw) instructions per 8
 * pixels of z instead of kw per 8 outputs.  Each level is computed on the
 * columns the next one reads, rounded up to 8; the pixels past those are
 * junk that only feeds junk. */
static int64_t strip_mrow(const struct cc_pool *d, int64_t nc8)
{
	return (nc8 + (d->kw - 1) * (d->dw / d->sw) + 7) / 8 * 8;
}

/* Bytes of the strip slots for nr output rows of nc8 columns: per parity
 * the input strip (doubling: with slack, a level's last group reads up to 8
 * pixels of stride sw past it) and the output, then the accumulator and the
 * doubling buffers. */
static void strip_sizes(const struct plan *pl, int64_t nr, int64_t nc8, int64_t *in,
			int64_t *out, int64_t *buf)
{
	int64_t swp = (nc8 - 1) * pl->d->sw + ekw(pl->d);
	*in = cc_round_up((nr * swp + (pl->sdbl ? 8 * pl->d->sw : 0)) * 32 + 256, 256);
	*out = cc_round_up(nr * nc8 * 32 + 256, 256);
	*buf = pl->sdbl ? cc_round_up(nr * strip_mrow(pl->d, nc8) * 32 + 256, 256) : 0;
}

static int64_t strip_bytes(const struct plan *pl, int64_t nr, int64_t nc8)
{
	int64_t in, out, buf;
	strip_sizes(pl, nr, nc8, &in, &out, &buf);
	return 2 * (in + out) + out + 2 * buf;
}

static int strip_plan(const struct soc_config *cfg, struct plan *pl, char *err, size_t errlen)
{
	const struct cc_pool *d = pl->d;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	if (!d->is_max) {
		snprintf(err, errlen, "pooling: average pooling whose window rows do not fit the "
			 "UB (%lld-pixel rows, a %lldx%lld window) is not supported yet",
			 (long long)d->w, (long long)ekh(d), (long long)ekw(d));
		return -1;
	}
	pl->sdbl = d->dw % d->sw == 0 && d->kw >= 8;
	/* the widest strip, in whole groups of 8 output columns, then the rows */
	int64_t nc8 = (d->wo + 7) / 8 * 8;
	while (nc8 > 8 && strip_bytes(pl, 1, nc8) > ub)
		nc8 -= 8;
	if (strip_bytes(pl, 1, nc8) > ub || d->sw > ISA_VEC_BSTRIDE_MAX) {
		snprintf(err, errlen, "pooling: a %lld-pixel window row at stride %lld does not "
			 "fit the UB (not supported yet)", (long long)ekw(d), (long long)d->sw);
		return -1;
	}
	pl->snc8 = nc8;
	pl->snc = min64(nc8, d->wo);
	pl->swp = (nc8 - 1) * d->sw + ekw(d);
	if (pl->swp > ISA_VEC_RSTRIDE_MAX || nc8 > ISA_VEC_RSTRIDE_MAX) {
		snprintf(err, errlen, "pooling: UB rows of %lld pixels (internal error)",
			 (long long)pl->swp);
		return -1;
	}
	pl->snr = 1;
	while (pl->snr < min64(d->ho, ISA_VEC_REP_MAX) && strip_bytes(pl, pl->snr + 1, nc8) <= ub)
		pl->snr++;
	pl->nrt = (d->ho + pl->snr - 1) / pl->snr;
	pl->nct = (d->wo + pl->snc - 1) / pl->snc;
	pl->units = pl->q * pl->nrt * pl->nct;
	int64_t nb = max64(1, min64(min64(pl->units, cfg->core_count), MAX_BLOCKS));
	pl->per = (pl->units + nb - 1) / nb;
	pl->nb = (pl->units + pl->per - 1) / pl->per;
	int64_t in, out, buf;
	strip_sizes(pl, pl->snr, nc8, &in, &out, &buf);
	for (int par = 0; par < 2; par++) {
		pl->in16[par] = par * (in + out);
		pl->out16[par] = pl->in16[par] + in;
	}
	pl->sacc = 2 * (in + out);
	pl->smrow = pl->sdbl ? strip_mrow(d, nc8) : 0;
	pl->sbuf[0] = pl->sacc + out;
	pl->sbuf[1] = pl->sbuf[0] + buf;
	pl->pad = -INFINITY;
	return 0;
}

/* Every output tile of block b as kh steps, one per window row. */
static size_t strip_tiles(const struct plan *pl, int64_t b, struct tile *v, size_t cap)
{
	const struct cc_pool *d = pl->d;
	int64_t u0 = b * pl->per, u1 = min64(u0 + pl->per, pl->units);
	size_t nt = 0;
	for (int64_t u = u0; u < u1; u++) {
		int64_t q = u / (pl->nrt * pl->nct), rt = u / pl->nct % pl->nrt, ct = u % pl->nct;
		int64_t oh0 = rt * pl->snr, ow0 = ct * pl->snc;
		for (int64_t i = 0; i < d->kh && nt < cap; i++) {
			struct tile t = { q, 1, oh0, min64(oh0 + pl->snr, d->ho), i == d->kh - 1,
					  ow0, min64(ow0 + pl->snc, d->wo), i };
			v[nt++] = t;
		}
	}
	return nt;
}

/* Output rows [*oa, *ob) of the tile whose tap-row-i input row is inside the
 * input, and the strip's input columns inside it: UB pixels [*c0, *c0 + *nw)
 * from input column *x0. */
static void strip_span(const struct plan *pl, const struct tile *t, int64_t *oa, int64_t *ob,
		       int64_t *c0, int64_t *nw, int64_t *x0)
{
	const struct cc_pool *d = pl->d;
	int64_t base = t->i * d->dh - d->pt; /* input row of output row 0 */
	*oa = t->oh0;
	while (*oa < t->oh1 && *oa * d->sh + base < 0)
		(*oa)++;
	*ob = *oa;
	while (*ob < t->oh1 && *ob * d->sh + base < d->h)
		(*ob)++;
	int64_t first = t->a * d->sw - d->pl; /* input column of UB pixel 0 */
	int64_t lo = max64(first, 0), hi = min64(first + pl->swp, d->w);
	*x0 = lo;
	*c0 = lo - first;
	*nw = hi > lo ? hi - lo : 0;
}

static void strip_load(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	const struct cc_pool *d = pl->d;
	int64_t oa, ob, c0, nw, x0;
	strip_span(pl, t, &oa, &ob, &c0, &nw, &x0);
	if (ob == oa || nw == 0)
		return;
	int64_t row0 = oa * d->sh + t->i * d->dh - d->pt;
	int64_t gm = ((in_plane(d, t->q0) * d->h + row0) * d->w + x0) * 32;
	int64_t ubp = pl->in16[par] + ((oa - t->oh0) * pl->swp + c0) * 32;
	int64_t sgap = d->sh * d->w - nw;
	/* 16 bits: this generator's own bound, below the field's ISA_DMA_GAP_MAX
	 * (32 bits); the programs depend on it.  Past it, rows go one by one. */
	if (sgap <= 65535) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, gm, ubp, ob - oa, nw, sgap, pl->swp - nw);
		return;
	}
	for (int64_t r = 0; r < ob - oa; r++)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, gm + r * d->sh * d->w * 32,
		       ubp + r * pl->swp * 32, 1, nw, 0, 0);
}

/* VDUP of the pad value over columns [x0, x1) of UB rows [r0, r1). */
static void strip_fill(struct kg *g, const struct plan *pl, int64_t at, int64_t r0, int64_t r1,
		       int64_t x0, int64_t x1)
{
	for (int64_t c = x0; c < x1; c += 8) {
		kg_mask_lanes(g, min64(8, x1 - c) * 16);
		for (int64_t r = r0; r < r1; r += ISA_VEC_REP_MAX) {
			int rd = kg_reg(g, at + (r * pl->swp + c) * 32);
			int rv = kg_reg(g, kg_fbits(pl->pad));
			KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rv, .dt = ISA_DT_F16,
			     .rep = min64(ISA_VEC_REP_MAX, r1 - r), .dr = pl->swp);
		}
	}
}

/* The window row's maxima by doubling (strip_mrow's comment) into dst, max
 * with the accumulator after the first window row. */
static void strip_doubling(struct kg *g, const struct plan *pl, const struct tile *t,
			   int64_t src, int64_t dst, int64_t nr, int64_t ngrp)
{
	const struct cc_pool *d = pl->d;
	int64_t r = d->dw / d->sw, P = 1, lv = 0, nc8 = ngrp * 8, M = pl->smrow;
	while (P * 2 <= d->kw)
		P *= 2;
	int64_t need = nc8 + (d->kw - P) * r; /* columns of LP read */
	int64_t at = src, ab = d->sw, ar = pl->swp; /* level L(1 << lv): z itself */
	for (int64_t w = 2; w <= P; w *= 2, lv++) {
		/* L(w)[m] = max(L(w/2)[m], L(w/2)[m + (w/2)*r]) on the columns the
		 * levels above read */
		int64_t n = need + (P - w) * r, to = pl->sbuf[lv % 2];
		for (int64_t c = 0; c * 8 < n; c++) {
			int64_t s0 = at + c * 8 * ab * 32;
			vbin(g, ISA_OP_VMAX, ISA_DT_F16, to + c * 8 * 32, s0, s0 + w / 2 * r * ab * 32,
			     nr, 1, ab, ab, M, ar, ar);
		}
		at = to;
		ab = 1;
		ar = M;
	}
	for (int64_t c = 0; c < ngrp; c++) {
		int64_t s0 = at + c * 8 * ab * 32, da = dst + c * 8 * 32;
		int64_t s1 = s0 + (d->kw - P) * r * ab * 32, aa = pl->sacc + c * 8 * 32;
		if (t->i == 0) {
			vbin(g, ISA_OP_VMAX, ISA_DT_F16, da, s0, s1, nr, 1, ab, ab, pl->snc8, ar,
			     ar);
			continue;
		}
		/* (dst may be the accumulator itself) */
		vbin(g, ISA_OP_VMAX, ISA_DT_F16, da, s0, aa, nr, 1, ab, 1, pl->snc8, ar, pl->snc8);
		vbin(g, ISA_OP_VMAX, ISA_DT_F16, da, s1, da, nr, 1, ab, 1, pl->snc8, ar, pl->snc8);
	}
}

static void strip_compute(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	const struct cc_pool *d = pl->d;
	int64_t oa, ob, c0, nw, x0, nr = t->oh1 - t->oh0;
	strip_span(pl, t, &oa, &ob, &c0, &nw, &x0);
	int64_t src = pl->in16[par];
	/* what the load did not write: rows outside the input, and the columns
	 * outside it of the others */
	if (nw == 0) {
		oa = ob = t->oh0;
	}
	strip_fill(g, pl, src, 0, oa - t->oh0, 0, pl->swp);
	strip_fill(g, pl, src, ob - t->oh0, nr, 0, pl->swp);
	strip_fill(g, pl, src, oa - t->oh0, ob - t->oh0, 0, c0);
	strip_fill(g, pl, src, oa - t->oh0, ob - t->oh0, c0 + nw, pl->swp);
	/* acc (or, at the last window row, the output) = max(acc, taps of row i) */
	int64_t dst = t->store ? pl->out16[par] : pl->sacc;
	int64_t ngrp = (t->m - t->a + 7) / 8;
	kg_mask_all(g);
	if (pl->sdbl) {
		strip_doubling(g, pl, t, src, dst, nr, ngrp);
		return;
	}
	for (int64_t c = 0; c < ngrp; c++) {
		int64_t da = dst + c * 8 * 32, aa = pl->sacc + c * 8 * 32;
		int64_t sa = src + c * 8 * d->sw * 32;
		for (int64_t j = 0; j < d->kw; j++) {
			int64_t s0 = sa + j * d->dw * 32;
			if (j == 0 && t->i == 0 && d->kw == 1) {
				KG_V(g, VUN, ISA_OP_VMOV, ISA_DT_F16, da, s0, nr, .db = 1,
				     .s0b = d->sw, .dr = pl->snc8, .s0r = pl->swp);
				continue;
			}
			if (j == 0 && t->i == 0)
				continue; /* paired with tap 1 */
			int64_t s1 = j == 1 && t->i == 0 ? sa : j == 0 ? aa : da;
			int64_t s1b = j == 1 && t->i == 0 ? d->sw : 1;
			int64_t s1r = j == 1 && t->i == 0 ? pl->swp : pl->snc8;
			vbin(g, ISA_OP_VMAX, ISA_DT_F16, da, s0, s1, nr, 1, d->sw, s1b, pl->snc8,
			     pl->swp, s1r);
		}
	}
}

static void strip_store(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	const struct cc_pool *d = pl->d;
	if (!t->store)
		return;
	int64_t nc = t->m - t->a;
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST,
	       ((out_plane(d, t->q0) * d->ho + t->oh0) * d->wo + t->a) * 32,
	       pl->out16[par], t->oh1 - t->oh0, nc, pl->snc8 - nc, d->wo - nc);
}

/* ---- global pooling ---------------------------------------------------------------- */

#define GCHUNK 3968 /* pixels per tile of a big plane: 31 x 128, a transpose row < 4080 */

/* Reduce n rows of 16 lanes at src ([n][16] fp16) to ceil(n/128) partial rows at
 * dst, 128 rows per partial; sums are scaled by scale first.  tr: 4 KiB + slack. */
static void partials(struct kg *g, int is_max, int64_t src, int64_t n, int64_t dst,
		     float scale, int64_t tr)
{
	if (!is_max && scale != 1.0f)
		flat_muls(g, ISA_DT_F16, src, n * 16, scale);
	for (int64_t k = 0; k * 128 < n; k++) {
		int64_t m = min64(128, n - k * 128), groups = (m + 15) / 16;
		kg_mask_all(g);
		kg_transpose(g, tr, src + k * 128 * 32, groups, 8, 1, 1, 16);
		kg_mask_lanes(g, m);
		KG_V(g, VRED, is_max ? ISA_OP_VCMAX : ISA_OP_VCADD, ISA_DT_F16, dst + k * 32, tr,
		     16, .s0b = 1, .s0r = 8);
	}
	kg_mask_all(g);
}

/* Reduce [n][16] at src to one row at dst; the sums' remaining factor is scale.
 * Scratch at tmp: the transposes, then each level's partial rows. */
static void reduce(struct kg *g, int is_max, int64_t src, int64_t n, int64_t dst, float scale,
		   int64_t tmp)
{
	while (n > 128) {
		int64_t part = tmp + 4096 + 512, nk = (n + 127) / 128;
		partials(g, is_max, src, n, part, 1.0f / 128, tmp);
		scale *= 128;
		src = part;
		n = nk;
		tmp = part + (nk * 32 + 511) / 512 * 512;
	}
	partials(g, is_max, src, n, dst, scale, tmp);
}

/* Per parity: the input pixels, the transposed rows, the output pixels. */
static void gbl_slots(const struct plan *pl, int64_t G, int64_t *in_b, int64_t *tr_b,
		      int64_t *out_b)
{
	int64_t npx = pl->big ? pl->chunk : G * pl->P;
	int64_t trb = pl->big ? 16 * 128 * 2 : G * cc_pad16(pl->P) * 32;
	/* slack: transposes read up to 15 pixels past, reductions 256 bytes */
	*in_b = cc_round_up(npx * 32 + 512, 256);
	*tr_b = cc_round_up(trb + 256, 256);
	*out_b = cc_round_up(G * 32 + 32, 256);
}

static int64_t gbl_bytes(const struct plan *pl, int64_t G)
{
	int64_t a, b, c;
	gbl_slots(pl, G, &a, &b, &c);
	return a + b + c;
}

static int gbl_plan(const struct soc_config *cfg, struct plan *pl, char *err, size_t errlen)
{
	const struct cc_pool *d = pl->d;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	pl->P = d->h * d->w;
	pl->big = pl->P > 128;
	/* scratch: the partial rows of every level and their transposes */
	int64_t nk = (pl->P + 127) / 128, scratch = 0;
	for (int64_t n = nk; n > 1; n = (n + 127) / 128)
		scratch += (n * 32 + 511) / 512 * 512 + 4096 + 512;
	if (scratch > ub / 4) {
		snprintf(err, errlen, "global pooling over %lld pixels is not supported yet",
			 (long long)pl->P);
		return -1;
	}
	int64_t half = (ub - scratch) / 2 / 256 * 256;
	int64_t work = pl->q * pl->P;
	int64_t nb = min64(min64((work + 127) / 128, cfg->core_count), MAX_BLOCKS);
	nb = max64(nb, 1);
	pl->units = pl->q;
	pl->per = (pl->q + nb - 1) / nb;
	pl->nb = (pl->q + pl->per - 1) / pl->per;
	pl->nk = nk;
	if (pl->big) {
		pl->gmax = 1;
		pl->chunk = GCHUNK;
		while (pl->chunk > 128 && gbl_bytes(pl, 1) > half)
			pl->chunk -= 128;
	} else {
		pl->gmax = 0;
		while (pl->gmax < ISA_VEC_REP_MAX && gbl_bytes(pl, pl->gmax + 1) <= half)
			pl->gmax++;
	}
	if (pl->gmax < 1 || gbl_bytes(pl, pl->gmax) > half) {
		snprintf(err, errlen, "global pooling: UB plan overflows (internal error)");
		return -1;
	}
	int64_t in_b, tr_b, out_b;
	gbl_slots(pl, pl->gmax, &in_b, &tr_b, &out_b);
	for (int par = 0; par < 2; par++) {
		pl->in16[par] = par * half;
		pl->acc[par] = pl->in16[par] + in_b; /* the transposed rows */
		pl->out16[par] = pl->acc[par] + tr_b;
	}
	pl->scratch = 2 * half;
	return 0;
}

static size_t gbl_tiles(const struct plan *pl, int64_t b, struct tile *v, size_t cap)
{
	int64_t q0 = b * pl->per, q1 = min64(q0 + pl->per, pl->q);
	size_t nt = 0;
	if (pl->big) {
		for (int64_t q = q0; q < q1; q++)
			for (int64_t a = 0; a < pl->P && nt < cap; a += pl->chunk) {
				int64_t m = min64(pl->chunk, pl->P - a);
				struct tile t = { q, 1, 0, 1, a + m == pl->P, a, m, 0 };
				v[nt++] = t;
			}
		return nt;
	}
	int64_t p = q1 - q0, want = max64((p + pl->gmax - 1) / pl->gmax, min64(p, 2));
	int64_t gsz = (p + want - 1) / want;
	for (int64_t q = q0; q < q1 && nt < cap; q += gsz) {
		struct tile t = { q, min64(gsz, q1 - q), 0, 1, 1, 0, pl->P, 0 };
		v[nt++] = t;
	}
	return nt;
}

static void gbl_load(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	for (int64_t gg = 0, r; gg < t->G; gg += r) { /* (G > 1: whole planes) */
		r = in_run(pl->d, t->q0 + gg, t->G - gg);
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (in_plane(pl->d, t->q0 + gg) * pl->P + t->a) * 32,
		       pl->in16[par] + gg * t->m * 32, 1, r * t->m, 0, 0);
	}
}

static void gbl_compute(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int is_max = pl->d->is_max;
	int64_t in = pl->in16[par], tr = pl->acc[par], out = pl->out16[par];
	if (pl->big) {
		/* partial rows of this chunk into the block's partial buffer; the
		 * plane's last chunk reduces them to the output pixel */
		int64_t part = pl->scratch;
		partials(g, is_max, in, t->m, part + t->a / 128 * 32, 1.0f / 128, tr);
		if (t->store)
			reduce(g, is_max, part, pl->nk, out, 128.0f / (float)pl->P,
			       part + (pl->nk * 32 + 511) / 512 * 512);
		return;
	}
	/* G whole planes of P <= 128 pixels: [G][P][16] -> [G*16][ppad] rows, one
	 * reduction repeat per row */
	int64_t P = pl->P, ppad = cc_pad16(P), groups = ppad / 16;
	if (!is_max)
		flat_muls(g, ISA_DT_F16, in, t->G * P * 16, 1.0f / (float)P);
	kg_mask_all(g);
	if (t->G <= groups)
		for (int64_t gg = 0; gg < t->G; gg++)
			kg_transpose(g, tr + gg * 16 * ppad * 2, in + gg * P * 32, groups,
				  ppad / 16, 1, 1, 16);
	else
		for (int64_t j = 0; j < groups; j++)
			kg_transpose(g, tr + j * 32, in + j * 512, t->G, ppad / 16, 1, ppad, P);
	kg_mask_lanes(g, P);
	for (int64_t r0 = 0; r0 < t->G * 16; r0 += 240) {
		int64_t rep = min64(240, t->G * 16 - r0);
		KG_V(g, VRED, is_max ? ISA_OP_VCMAX : ISA_OP_VCADD, ISA_DT_F16, out + r0 * 2,
		     tr + r0 * ppad * 2, rep, .s0b = 1, .s0r = ppad / 16);
	}
	kg_mask_all(g);
}

static void gbl_store(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	for (int64_t gg = 0, r; t->store && gg < t->G; gg += r) {
		r = out_run(pl->d, t->q0 + gg, t->G - gg);
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, out_plane(pl->d, t->q0 + gg) * 32,
		       pl->out16[par] + gg * 32, 1, r, 0, 0);
	}
}

/* ---- the program ----------------------------------------------------------------- */

/* Step t of a block: load tile t (issued one tile ahead), then compute and
 * store tile t-1; steps 0 .. nt. */
static void step(struct kg *g, const struct plan *pl, const struct tile *tiles, size_t nt,
		 size_t t)
{
	struct cc_prog *p = g->p;
	if (t < nt) {
		int par = (int)(t % 2);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
		if (pl->global)
			gbl_load(g, pl, &tiles[t], par);
		else if (pl->strip)
			strip_load(g, pl, &tiles[t], par);
		else
			win_load(g, pl, &tiles[t], par);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	}
	if (t == 0)
		return;
	size_t u = t - 1;
	int par = (int)(u % 2);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	if (pl->global)
		gbl_compute(g, pl, &tiles[u], par);
	else if (pl->strip)
		strip_compute(g, pl, &tiles[u], par);
	else
		win_compute(g, pl, &tiles[u], par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	if (pl->global)
		gbl_store(g, pl, &tiles[u], par);
	else if (pl->strip)
		strip_store(g, pl, &tiles[u], par);
	else
		win_store(g, pl, &tiles[u], par);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

struct steps {
	const struct plan *pl;
	const struct tile *tiles;
	size_t nt;
};

static void step_fn(struct kg *g, const void *ctx, size_t t)
{
	const struct steps *st = ctx;
	step(g, st->pl, st->tiles, st->nt, t);
}

/* A block's steps, repeated runs of them (the interior tiles of a plane,
 * the planes of a stack, the middle window rows of a strip) as loops. */
static int emit_steps(struct kg *g, const struct plan *pl, const struct tile *tiles, size_t nt)
{
	struct steps st = { pl, tiles, nt };
	return kg_emit_rolled(g, nt + 1, step_fn, &st);
}

static int check_pool(const struct cc_pool *d, char *err, size_t errlen)
{
	if (d->n < 1 || d->c < 1 || d->h < 1 || d->w < 1 || d->ho < 1 || d->wo < 1 ||
	    d->kh < 1 || d->kw < 1 || d->sh < 1 || d->sw < 1 || d->dh < 1 || d->dw < 1 ||
	    d->pt < 0 || d->pl < 0 || d->pb < 0 || d->pr < 0) {
		snprintf(err, errlen, "pooling: bad shape");
		return -1;
	}
	/* every window must start inside the padded input */
	if ((d->ho - 1) * d->sh >= d->pt + d->h + d->pb ||
	    (d->wo - 1) * d->sw >= d->pl + d->w + d->pr) {
		snprintf(err, errlen, "pooling: %lldx%lld output windows start past the padded "
			 "%lldx%lld input", (long long)d->ho, (long long)d->wo, (long long)d->h,
			 (long long)d->w);
		return -1;
	}
	return 0;
}

struct blocks {
	const struct plan *pl;
	struct tile *tiles; /* a block's, cap of them */
	size_t cap;
	int oom;
};

static void block_fn(struct kg *g, void *ctx, int64_t b)
{
	struct blocks *bl = ctx;
	const struct plan *pl = bl->pl;
	struct cc_prog *p = g->p;
	size_t nt = pl->global ? gbl_tiles(pl, b, bl->tiles, bl->cap)
		    : pl->strip ? strip_tiles(pl, b, bl->tiles, bl->cap)
				: win_tiles(pl, b, bl->tiles, bl->cap);
	cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
	cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
	if (!pl->global && !pl->strip)
		win_pad_columns(g, pl); /* while the first loads run */
	if (emit_steps(g, pl, bl->tiles, nt))
		bl->oom = 1;
	cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
	cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
	cc_end(p);
}

int cc_gen_pool(const struct soc_config *cfg, const struct cc_pool *dp, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen)
{
	/* dilations left 0 by callers that know none mean 1 */
	struct cc_pool dd = *dp;
	const struct cc_pool *d = &dd;
	dd.dh = dd.dh ? dd.dh : 1;
	dd.dw = dd.dw ? dd.dw : 1;
	if (check_pool(d, err, errlen))
		return -1;
	struct plan pl;
	memset(&pl, 0, sizeof pl);
	pl.d = d;
	pl.q = d->n * ((d->c + 15) / 16);
	pl.global = d->kh == d->h && d->kw == d->w && d->ho == 1 && d->wo == 1 && d->pt == 0 &&
		    d->pl == 0 && d->dh == 1 && d->dw == 1;
	pl.f32 = !d->is_max && !pl.global;
	if (pl.global ? gbl_plan(cfg, &pl, err, errlen) : win_plan(cfg, &pl, err, errlen))
		return -1;
	struct blocks bl = { &pl, NULL, 0, 0 };
	bl.cap = (size_t)(pl.big ? pl.per * ((pl.P + pl.chunk - 1) / pl.chunk)
			  : pl.strip ? pl.per * d->kh : pl.per) + 8;
	bl.tiles = malloc(bl.cap * sizeof *bl.tiles);
	if (!bl.tiles) {
		snprintf(err, errlen, "pooling: out of memory");
		return -1;
	}
	*block_dim = (unsigned)pl.nb;
	struct kg g = { .p = p };
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int rc = kg_emit_blocks(&g, pl.nb, block_fn, &bl);
	free(bl.tiles);
	if (rc || bl.oom) {
		snprintf(err, errlen, "pooling: out of memory");
		return -1;
	}
	if (g.bad) {
		snprintf(err, errlen, "pooling: a field overflows (internal error)");
		return -1;
	}
	return 0;
}
