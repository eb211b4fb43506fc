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
 * Tiles are double-buffered like every kernel: the load of tile t+1 is issued
 * before the vector work of tile t. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_gen.h"


#define MAX_BLOCKS 1024

static void vbin(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t s0,
		 int64_t s1, int64_t rep, int64_t db, int64_t s0b, int64_t s1b, int64_t dr,
		 int64_t s0r, int64_t s1r)
{
	int r1 = kg_reg(g, s1);
	struct isa_insn *in = kg_vinsn(g, op, dt, dst, s0, rep);
	in->rs2 = r1;
	in->db = db;
	in->s0b = s0b;
	in->s1b = s1b;
	in->dr = dr;
	in->s0r = s0r;
	in->s1r = s1r;
}
static void vscal(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t src,
		  float scalar, int64_t rep, int64_t db, int64_t dr)
{
	int rsc = kg_reg(g, kg_fbits(scalar));
	struct isa_insn *in = kg_vinsn(g, op, dt, dst, src, rep);
	in->rs2 = rsc;
	in->db = db;
	in->s0b = db;
	in->dr = dr;
	in->s0r = dr;
}
/* dst = src * scalar over n contiguous elements (in place is fine). */
static void flat_muls(struct kg *g, enum isa_dtype dt, int64_t at, int64_t n, float scalar)
{
	int64_t lanes = dt == ISA_DT_F32 ? 64 : 128, reps = (n + lanes - 1) / lanes;
	kg_mask_all(g);
	for (int64_t done = 0; done < reps; done += 255) {
		int64_t k = reps - done < 255 ? reps - done : 255;
		vscal(g, ISA_OP_VMULS, dt, at + done * 256, at + done * 256, scalar, k, 1, 8);
	}
}
/* npix pixels (32-byte blocks, fp16) from at on = v; a partial repeat masked. */
static void fill(struct kg *g, int64_t at, int64_t npix, float v)
{
	for (int64_t done = 0; done < npix;) {
		int64_t left = npix - done, rep = left / 8 < 255 ? left / 8 : 255;
		if (rep == 0) {
			kg_mask_lanes(g, left * 16);
			rep = 1;
		} else {
			kg_mask_all(g);
		}
		int rd = kg_reg(g, at + done * 32), rv = kg_reg(g, kg_fbits(v));
		struct isa_insn *in = cc_emit(g->p, ISA_OP_VDUP);
		in->rd = rd;
		in->rs2 = rv;
		in->dt = ISA_DT_F16;
		in->rep = rep;
		done += rep * 8 < left ? rep * 8 : left;
	}
}

/* ---- plans ---------------------------------------------------------------------- */

struct tile {
	int64_t q0, G;    /* planes q0 .. q0+G-1 (q = image * C1 + c1) */
	int64_t oh0, oh1; /* output rows (all of them when G > 1) */
	int store;        /* global pooling: the tile completes its planes */
	int64_t a, m;     /* global pooling of a big plane: pixels [a, a+m) */
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

/* Window rows (or columns) of output index o that lie inside [0, n). */
static int64_t inside(int64_t o, int64_t s, int64_t p, int64_t k, int64_t n)
{
	int64_t lo = o * s - p, hi = lo + k;
	lo = lo < 0 ? 0 : lo;
	hi = hi > n ? n : hi;
	return hi > lo ? hi - lo : 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* ---- windowed pooling ------------------------------------------------------------ */

/* Input rows past the tile's that the discarded output rows between stacked
 * planes read. */
static int64_t extra_rows(const struct cc_pool *d, int64_t G)
{
	return G > 1 ? max64(0, d->kh - d->sh) : 0;
}

/* Bytes of a tile of G planes with rin input and rout output rows each; the
 * slack covers the last column group's overrun (up to 7 pixels of stride sw). */
static int64_t win_bytes(const struct plan *pl, int64_t G, int64_t rin, int64_t rout)
{
	const struct cc_pool *d = pl->d;
	int64_t bin = pl->f32 ? 96 : 32, bout = pl->f32 ? 96 : 32, bh = pl->f32 ? 64 : 32;
	int64_t rows = G * rin + extra_rows(d, G);
	int64_t in_px = rows * pl->wp + 8 * d->sw + d->kw + 16;
	int64_t out_px = G * rout * pl->wo8 + 16;
	int64_t h_px = pl->sep ? rows * pl->wo8 + 16 : 0;
	return in_px * bin + out_px * bout + h_px * bh + 5 * 256;
}

static int win_plan(const struct soc_config *cfg, struct plan *pl, char *err, size_t errlen)
{
	const struct cc_pool *d = pl->d;
	int64_t half = (int64_t)cfg->ub_size_kb * 1024 / 2;
	int64_t es = pl->f32 ? 2 : 1;
	pl->wp = max64(d->pl + d->w, (d->wo - 1) * d->sw + d->kw);
	pl->hneed = (d->ho - 1) * d->sh + d->kh;
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
	if (max64(pl->wp, pl->wo8) * d->sh * es > 65535 || d->sw * es > 255) {
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
	       win_bytes(pl, 1, pl->rmax * d->sh + d->kh, pl->rmax + 1) <= half)
		pl->rmax++;
	if (pl->rmax < 1) {
		snprintf(err, errlen, "pooling: a %lld-pixel row does not fit the UB "
			 "(not supported yet)", (long long)d->w);
		return -1;
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
	int64_t rin = pl->plane_mode ? pl->hp : (pl->rtile - 1) * d->sh + d->kh;
	int64_t rout = pl->plane_mode ? pl->hop : pl->rtile;
	pl->in_rows = G * rin + extra_rows(d, G);
	pl->out_rows = G * rout;
	int64_t in_px = pl->in_rows * pl->wp + 8 * d->sw + d->kw + 16;
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
		at = (at + 255) / 256 * 256;
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
			struct tile t = { q, min64(pl->gtile, u1 - q), 0, d->ho, 1, 0, 0 };
			v[nt++] = t;
		}
		return nt;
	}
	/* runs of output rows within one plane */
	int64_t r = pl->rtile;
	for (int64_t u = u0; u < u1 && nt < cap;) {
		int64_t q = u / d->ho, oh0 = u % d->ho;
		int64_t oh1 = min64(min64(oh0 + r, d->ho), oh0 + (u1 - u));
		struct tile t = { q, 1, oh0, oh1, 1, 0, 0 };
		v[nt++] = t;
		u += oh1 - oh0;
	}
	return nt;
}

/* Input rows in the UB per stacked plane. */
static int64_t tile_rin(const struct plan *pl, const struct tile *t)
{
	return pl->plane_mode ? pl->hp : (t->oh1 - t->oh0 - 1) * pl->d->sh + pl->d->kh;
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
		/* stacked planes follow each other as in GM */
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, t->q0 * d->h * d->w * 32,
		    pl->in16[par] + d->pl * 32, t->G * nr, d->w, 0, dgap);
		return;
	}
	for (int64_t gg = 0; gg < t->G; gg++)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, ((t->q0 + gg) * d->h + ih0) * d->w * 32,
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
				for (int64_t r = 0; r < pl->in_rows; r += 255) {
					int64_t rep = min64(255, pl->in_rows - r);
					int rd = kg_reg(g, pl->in16[par] + (r * pl->wp + c0) * 32);
					int rv = kg_reg(g, kg_fbits(pl->pad));
					struct isa_insn *in = cc_emit(g->p, ISA_OP_VDUP);
					in->rd = rd;
					in->rs2 = rv;
					in->dt = ISA_DT_F16;
					in->rep = rep;
					in->dr = pl->wp;
				}
			}
}

/* dst rows [0, nrows) of wo8 pixels, pixel x of row R reducing the taps
 * src + (R*srow + x*spx + off[t]) pixels: one instruction per tap, column
 * group of 8 and (fp32) half pixel, repeating over up to 255 rows. */
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
		for (int64_t R0 = 0; R0 < nrows; R0 += 255)
			for (int64_t h = 0; h < es; h++) {
				int64_t n = min64(255, nrows - R0);
				int64_t da = dst + (R0 * pl->wo8 + c * 8) * es * 32 + h * 32;
				int64_t sa = src + (R0 * srow + c * 8 * spx) * es * 32 + h * 32;
				if (ntap == 1) {
					struct isa_insn *in = kg_vinsn(g, ISA_OP_VMOV, dt, da,
								    sa + off[0] * es * 32, n);
					in->db = db;
					in->s0b = sb;
					in->dr = dr;
					in->s0r = sr;
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
			off[j] = j;
		taps(g, pl, pl->hsum[par], src, t->G * rin, pl->wp, d->sw, off, d->kw);
		for (int64_t i = 0; i < d->kh; i++)
			off[i] = i * pl->wo8;
		taps(g, pl, dst, pl->hsum[par], rt, d->sh * pl->wo8, 1, off, d->kh);
	} else {
		for (int64_t k = 0; k < d->kh * d->kw; k++)
			off[k] = k / d->kw * pl->wp + k % d->kw;
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
				int64_t k = inside(oh, d->sh, d->pt, d->kh, d->h);
				if (k == d->kh || k == 0)
					continue;
				int64_t R = gg * rout + oh - t->oh0;
				flat_muls(g, ISA_DT_F32, acc + R * pl->wo8 * 64, pl->wo8 * 16,
					  (float)d->kh / (float)k);
			}
		for (int64_t ow = 0; ow < d->wo; ow++) {
			int64_t k = inside(ow, d->sw, d->pl, d->kw, d->w);
			if (k == d->kw || k == 0)
				continue;
			kg_mask_lanes(g, 16); /* the pixel's two blocks */
			for (int64_t R0 = 0; R0 < rt; R0 += 255) {
				int64_t at = acc + (R0 * pl->wo8 + ow) * 64;
				vscal(g, ISA_OP_VMULS, ISA_DT_F32, at, at, (float)d->kw / (float)k,
				      min64(255, rt - R0), 1, pl->wo8 * 2);
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
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (t->q0 * d->ho + t->oh0) * d->wo * 32,
		    pl->out16[par], t->G * rows, d->wo, sgap, 0);
		return;
	}
	for (int64_t gg = 0; gg < t->G; gg++)
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (t->q0 + gg) * d->ho * d->wo * 32,
		    pl->out16[par] + gg * rout * pl->wo8 * 32, rows, d->wo, sgap, 0);
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
		struct isa_insn *in = kg_vinsn(g, is_max ? ISA_OP_VCMAX : ISA_OP_VCADD, ISA_DT_F16,
					    dst + k * 32, tr, 16);
		in->s0b = 1;
		in->s0r = 8;
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
	*in_b = (npx * 32 + 512 + 255) / 256 * 256;
	*tr_b = (trb + 256 + 255) / 256 * 256;
	*out_b = (G * 32 + 32 + 255) / 256 * 256;
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
		while (pl->gmax < 255 && gbl_bytes(pl, pl->gmax + 1) <= half)
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
				struct tile t = { q, 1, 0, 1, a + m == pl->P, a, m };
				v[nt++] = t;
			}
		return nt;
	}
	int64_t p = q1 - q0, want = max64((p + pl->gmax - 1) / pl->gmax, min64(p, 2));
	int64_t gsz = (p + want - 1) / want;
	for (int64_t q = q0; q < q1 && nt < cap; q += gsz) {
		struct tile t = { q, min64(gsz, q1 - q), 0, 1, 1, 0, pl->P };
		v[nt++] = t;
	}
	return nt;
}

static void gbl_load(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (t->q0 * pl->P + t->a) * 32, pl->in16[par], 1,
	    t->G * t->m, 0, 0);
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
		struct isa_insn *in2 = kg_vinsn(g, is_max ? ISA_OP_VCMAX : ISA_OP_VCADD, ISA_DT_F16,
					     out + r0 * 2, tr + r0 * ppad * 2, rep);
		in2->s0b = 1;
		in2->s0r = ppad / 16;
	}
	kg_mask_all(g);
}

static void gbl_store(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	if (t->store)
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, t->q0 * 32, pl->out16[par], 1, t->G, 0, 0);
}

/* ---- the program ----------------------------------------------------------------- */

static int check_pool(const struct cc_pool *d, char *err, size_t errlen)
{
	if (d->n < 1 || d->c < 1 || d->h < 1 || d->w < 1 || d->ho < 1 || d->wo < 1 ||
	    d->kh < 1 || d->kw < 1 || d->sh < 1 || d->sw < 1 || d->pt < 0 || d->pl < 0 ||
	    d->pb < 0 || d->pr < 0) {
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

int cc_gen_pool(const struct soc_config *cfg, const struct cc_pool *d, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen)
{
	if (check_pool(d, err, errlen))
		return -1;
	struct plan pl;
	memset(&pl, 0, sizeof pl);
	pl.d = d;
	pl.q = d->n * ((d->c + 15) / 16);
	pl.global = d->kh == d->h && d->kw == d->w && d->ho == 1 && d->wo == 1 && d->pt == 0 &&
		    d->pl == 0;
	pl.f32 = !d->is_max && !pl.global;
	if (pl.global ? gbl_plan(cfg, &pl, err, errlen) : win_plan(cfg, &pl, err, errlen))
		return -1;
	size_t cap = (size_t)(pl.big ? pl.per * ((pl.P + pl.chunk - 1) / pl.chunk) : pl.per) + 8;
	struct tile *tiles = malloc(cap * sizeof *tiles);
	if (!tiles) {
		snprintf(err, errlen, "pooling: out of memory");
		return -1;
	}
	*block_dim = (unsigned)pl.nb;
	struct kg g = { .p = p };
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int labels[MAX_BLOCKS];
	cc_block_dispatch(p, pl.nb, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < pl.nb; b++) {
		cc_label_bind(p, labels[b]);
		kg_reset(&g);
		size_t nt = pl.global ? gbl_tiles(&pl, b, tiles, cap)
				      : win_tiles(&pl, b, tiles, cap);
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		if (!pl.global)
			win_pad_columns(&g, &pl); /* while the first loads run */
		for (size_t t = 0; t <= nt; t++) {
			/* load t (issued one tile ahead), then compute and store t-1 */
			if (t < nt) {
				int par = (int)(t % 2);
				cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
				if (pl.global)
					gbl_load(&g, &pl, &tiles[t], par);
				else
					win_load(&g, &pl, &tiles[t], par);
				cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			}
			if (t == 0)
				continue;
			size_t u = t - 1;
			int par = (int)(u % 2);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			if (pl.global)
				gbl_compute(&g, &pl, &tiles[u], par);
			else
				win_compute(&g, &pl, &tiles[u], par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			if (pl.global)
				gbl_store(&g, &pl, &tiles[u], par);
			else
				win_store(&g, &pl, &tiles[u], par);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	free(tiles);
	if (g.bad) {
		snprintf(err, errlen, "pooling: a field overflows (internal error)");
		return -1;
	}
	return 0;
}
