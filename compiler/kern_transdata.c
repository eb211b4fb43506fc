/* kern_transdata.c: the transdata at the graph's edges for 4-D tensors: the
 * host's fp32 NCHW and the device's fp16 NC1HWC0, both ways.
 *
 * A plane is one (image, c1): up to 16 channel rows of H*W pixels on the
 * host, H*W pixels of 32 bytes on the device.  A tile is G whole planes or
 * one pixel chunk of one plane; in the UB it is G*16 channel rows of npad
 * pixels (npad = the chunk rounded up to 16), so the 16x16 vtranspose turns
 * [16 channels][16 pixels] into [16 pixels][16 channels] and back, and a flat
 * vconv converts a run of rows in one go.  H*W = 1 skips the transpose: the
 * device layout is then the host's channel order already.
 *
 * Tiles stream through the UB double-buffered: the load of tile t+1 is issued
 * before the vector work of tile t, so the scalar unit never waits for the
 * vector queue with the next load still unissued.
 *
 * Host rows whose byte length is not a multiple of 32 (H*W % 8 != 0) are read
 * a little past their end (the runtime's 1 KiB slack covers the tensor's end)
 * and, on the way out, written with a spill of up to 31 bytes into the next
 * row.  Rows are then written in increasing address order by one MTE3 queue,
 * so the next row's write repairs the spill; a block's last row, whose next
 * row may belong to another block, ends with an exact 32-byte write of its
 * last 8 pixels, taken from a transpose of the plane's last pixels.  Planes
 * of 2 to 7 pixels have no such 8 pixels: those tensors run as one block, as
 * do those of 1 pixel unless C is a multiple of 8 (no spill then).  Chunks of
 * a split plane are multiples of 8 pixels (the last one is moved back to end
 * at the plane's end), so their writes never spill.
 *
 * For a conv on the small-channel path (kern_conv.c, CC_CONV_X_F16_C04) the
 * input goes to NC1HWC0 with C0 = 4 instead: 8 bytes a pixel, the image's own
 * bytes, packed from the 16-lane pixels by transposes (c04_pack); rows are
 * padded to 64 pixels in the UB for it.
 *
 * Quantized (cc_gen_nchw_in_q8, for an int8 first conv: ATC's AscendQuant
 * fused into the input's TransData): a tensor of at most 16 channels is
 * written as int8 NC1HWC0 with C0 = 32 instead, q = saturate(rne(x *
 * inv_scale)) on the fp16 pixels, computed by the very instructions the
 * quantize kernel runs (kern_quant.c: vmuls into the even blocks of an
 * interleaved pair whose odd blocks, channels 16..31, are zeros, then
 * vconv to int8), so the result is the TransData's then the quantize
 * task's.  The pair is built in the tile's fp32 rows (free once converted,
 * 64 bytes a pixel as the pair needs) and narrowed into the tile's output
 * buffer: an int8 pixel of 32 channels is 32 bytes, as an fp16 one of 16,
 * so the stores are unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"


#define SLACK 512
#define MAX_BLOCKS 1024

/* ---- the plan ---------------------------------------------------------------- */

struct tile {
	int64_t q0, G; /* planes q0 .. q0+G-1 (q = image * C1 + c1) */
	int64_t a, m;  /* pixels [a, a+m) of each plane */
};

struct plan {
	int64_t n, c, hw, c1n, q;
	int to_dev, flat, aligned;
	int c04; /* to_dev into NC1HWC0 with C0 = 4 (8-byte pixels) */
	int chunked;
	int64_t cap;  /* pixels (channel-row length x planes) per tile */
	int64_t npad; /* row length of a whole-plane tile */
	int64_t gmax; /* planes per whole-plane tile */
	int64_t tchunk, nchunk;
	int64_t nb, per; /* blocks, and planes (or chunks) per block */
	int tailfix;
	int64_t slot[2][3]; /* per parity: the three buffers of the stages */
	int64_t tail16, tail32;
	float q8_inv; /* > 0: int8 out at this inverse scale (nchw_in, c <= 16) */
};

static int64_t nch_of(const struct plan *pl, int64_t q)
{
	int64_t c1 = q % pl->c1n, left = pl->c - c1 * 16;
	return left < 16 ? left : 16;
}

/* The host channel index of plane q's first channel. */
static int64_t hc_of(const struct plan *pl, int64_t q)
{
	return q / pl->c1n * pl->c + q % pl->c1n * 16;
}

/* C04 packs groups of 64 pixels (c04_pack), so its rows are padded to 64. */
static int64_t pad_row(const struct plan *pl, int64_t m)
{
	return pl->c04 ? (m + 63) / 64 * 64 : cc_pad16(m);
}

static int64_t tile_npad(const struct plan *pl, const struct tile *t)
{
	return pl->flat ? 1 : pad_row(pl, t->m);
}

/* A run of the tile's planes from g0 whose channel rows follow each other on
 * the host (a plane with padding channels ends one); returns its end and
 * counts its rows. */
static int64_t run_end(const struct plan *pl, const struct tile *t, int64_t g0, int64_t *rows)
{
	int64_t g1 = g0;
	*rows = 0;
	while (g1 < t->G) {
		int64_t k = nch_of(pl, t->q0 + g1++);
		*rows += k;
		if (k < 16)
			break;
	}
	return g1;
}

/* ---- nchw_in: fp32 rows -> fp16 pixels ---------------------------------------- */

static void in_load(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int64_t np = tile_npad(pl, t), row32 = pl->slot[par][0];
	for (int64_t g0 = 0; g0 < t->G;) {
		int64_t rows, g1 = run_end(pl, t, g0, &rows);
		int64_t hc = hc_of(pl, t->q0 + g0);
		if (pl->flat) {
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, hc * 4, row32 + g0 * 64, 1,
			    (rows * 4 + 31) / 32, 0, 0);
		} else if (pl->aligned) {
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (hc * pl->hw + t->a) * 4,
			    row32 + g0 * 16 * np * 4, rows, t->m / 8, (pl->hw - t->m) / 8,
			    (np - t->m) / 8);
		} else {
			for (int64_t i = 0; i < rows; i++) {
				int64_t r = g0 * 16 + i;
				kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, ((hc + i) * pl->hw + t->a) * 4,
				    row32 + r * np * 4, 1, (t->m + 7) / 8, 0, 0);
			}
		}
		g0 = g1;
	}
}

/* Channels past c read as 0: lanes nch..15 of every pixel. */
static void zero_pad_channels(struct kg *g, int64_t at, int64_t npix, int64_t nch)
{
	uint64_t pat = 0xffffu & ~((UINT64_C(1) << nch) - 1);
	uint64_t all = pat | pat << 16 | pat << 32 | pat << 48;
	for (int64_t done = 0; done < npix;) {
		int64_t left = npix - done, rep = left / 8 < ISA_VEC_REP_MAX ? left / 8 : ISA_VEC_REP_MAX;
		if (rep == 0) {
			/* fewer than 8 pixels: only their blocks' lanes */
			uint64_t lo = 0, hi = 0;
			for (int64_t b = 0; b < left; b++) {
				if (b < 4)
					lo |= pat << (16 * b);
				else
					hi |= pat << (16 * (b - 4));
			}
			kg_mask(g, hi, lo);
			rep = 1;
		} else {
			kg_mask(g, all, all);
		}
		int rd = kg_reg(g, at + done * 32);
		int rz = kg_reg(g, 0);
		KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rz, .dt = ISA_DT_F16, .rep = rep);
		done += rep * 8 < left ? rep * 8 : left;
	}
}

/* C04: the tile's [G][np][16] pixels at slot 2 (lanes past c zero) packed
 * to [G][np][4] at slot 1 (free once slot 2 is written), through slot 0
 * (free after the conversion).  Per group of 64 pixels: transpose p (p =
 * 0..3) reads the pixels 4r + p (r = 0..15, rows 4 blocks apart) and writes
 * their channels as rows 4p .. 4p+15 of a 16-row matrix M (the rows past
 * 4p+3 hold the zero lanes, and the next transpose overwrites them; the
 * last one's spill goes to M's 16 spare rows), so that row 4p + ch of M is
 * channel ch of pixels p, p+4, ..., p+60; transposing M gives row r =
 * pixels 4r .. 4r+3 of 4 channels each: 8-byte pixels, 4 to a block. */
static void c04_pack(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int64_t pm = pl->slot[par][2], mm = pl->slot[par][0], out = pl->slot[par][1];
	int64_t groups = t->G * tile_npad(pl, t) / 64;
	for (int64_t j = 0; j < groups; j += ISA_VEC_REP_MAX) {
		int64_t rep = groups - j < ISA_VEC_REP_MAX ? groups - j : ISA_VEC_REP_MAX;
		for (int p = 0; p < 4; p++)
			kg_transpose(g, mm + j * 1024 + p * 4 * 32, pm + j * 2048 + p * 32, rep, 1, 4,
				     32, 64);
		kg_transpose(g, out + j * 512, mm + j * 1024, rep, 1, 1, 16, 32);
	}
}

static void in_compute(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int64_t np = tile_npad(pl, t);
	int64_t row32 = pl->slot[par][0], row16 = pl->slot[par][1], out = pl->slot[par][2];
	if (pl->flat) {
		kg_flat_conv(g, ISA_DT_F16, ISA_DT_F32, out, row32, t->G * 16);
	} else {
		/* convert the loaded rows; the padding rows are left alone (their
		 * lanes are zeroed after the transpose), a repeat's overrun into
		 * the next run is rewritten by that run's own conversion */
		for (int64_t g0 = 0; g0 < t->G;) {
			int64_t rows, g1 = run_end(pl, t, g0, &rows);
			kg_flat_conv(g, ISA_DT_F16, ISA_DT_F32, row16 + g0 * 16 * np * 2,
				  row32 + g0 * 16 * np * 4, rows * np);
			g0 = g1;
		}
		/* [16 channels][np] per plane -> [np][16] */
		int64_t groups = np / 16;
		if (t->G <= groups) {
			for (int64_t gg = 0; gg < t->G; gg++)
				kg_transpose(g, out + gg * np * 32, row16 + gg * 16 * np * 2, groups,
					  1, np / 16, 16, 1);
		} else {
			for (int64_t j = 0; j < groups; j++)
				kg_transpose(g, out + j * 512, row16 + j * 32, t->G, 1, np / 16, np,
					  np);
		}
	}
	for (int64_t gg = 0; gg < t->G; gg++) {
		int64_t k = nch_of(pl, t->q0 + gg);
		if (k < 16)
			zero_pad_channels(g, out + gg * np * 32, np, k);
	}
	if (pl->c04)
		c04_pack(g, pl, t, par);
}

/* The tile's fp16 pixels (its output buffer) to int8 pixels of 32
 * channels in place, through the interleaved pair in its fp32 rows. */
static void in_quant(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int64_t px = t->G * tile_npad(pl, t), tmp = pl->slot[par][0], out = pl->slot[par][2];
	kg_mask_all(g);
	int rs = kg_reg(g, kg_fbits(pl->q8_inv)), rz = kg_reg(g, 0);
	/* pixel i -> block 2i of tmp, zeros in block 2i + 1: 8 pixels a repeat */
	for (int h = 0; h < 2; h++)
		for (int64_t done = 0; done < px; done += 8 * ISA_VEC_REP_MAX) {
			int64_t rep = px - done < 8 * ISA_VEC_REP_MAX ? (px - done) / 8 : ISA_VEC_REP_MAX;
			int64_t d = tmp + h * 32 + done * 64, s = out + done * 32;
			if (!h) {
				KG_V(g, VSCAL, ISA_OP_VMULS, ISA_DT_F16, d, s, rep, .rs2 = rs,
				     .db = 2, .dr = 16, .s0b = 1, .s0r = 8);
				continue;
			}
			/* the zeros: a vdup has no source, but the pixels' address is
			 * looked up as for the vmuls, which keeps the cache's choices
			 * (and so the program) as they always were */
			int r[2];
			kg_vregs(g, d, s, rep, r);
			KG_I(g, VDUP, ISA_OP_VDUP, .rd = r[0], .rs2 = rz, .dt = ISA_DT_F16,
			     .rep = rep, .db = 2, .dr = 16);
		}
	kg_conv_n(g, ISA_DT_S8, ISA_DT_F16, out, tmp, px * 32, ISA_RND_RNE);
}

static void in_store(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int64_t np = tile_npad(pl, t), out = pl->slot[par][2];
	if (pl->c04) { /* 4 pixels a block; planes (images) m pixels apart in GM */
		int64_t at = (t->q0 * pl->hw + t->a) * 8;
		out = pl->slot[par][1];
		if (t->G > 1 && np != t->m)
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, at, out, t->G, t->m / 4, (np - t->m) / 4,
			       0);
		else
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, at, out, 1, t->G * t->m / 4, 0, 0);
		return;
	}
	int64_t off = (t->q0 * pl->hw + t->a) * 32;
	if (t->G > 1 && np != t->m)
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, off, out, t->G, t->m, np - t->m, 0);
	else
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, off, out, 1, t->G * t->m, 0, 0);
}

/* ---- nchw_out: fp16 pixels -> fp32 rows --------------------------------------- */

static void out_load(struct kg *g, const struct plan *pl, const struct tile *t, int par)
{
	int64_t np = tile_npad(pl, t), in16 = pl->slot[par][0];
	int64_t off = (t->q0 * pl->hw + t->a) * 32;
	if (t->G > 1 && np != t->m)
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, off, in16, t->G, t->m, 0, np - t->m);
	else
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, off, in16, 1, t->G * t->m, 0, 0);
}

static void out_compute(struct kg *g, const struct plan *pl, const struct tile *t, int par,
			int last)
{
	int64_t np = tile_npad(pl, t);
	int64_t in16 = pl->slot[par][0], row16 = pl->slot[par][1], row32 = pl->slot[par][2];
	if (pl->flat) {
		kg_flat_conv(g, ISA_DT_F32, ISA_DT_F16, row32, in16, t->G * 16);
		return;
	}
	int64_t groups = np / 16;
	if (t->G <= groups) {
		for (int64_t gg = 0; gg < t->G; gg++)
			kg_transpose(g, row16 + gg * 16 * np * 2, in16 + gg * np * 32, groups,
				  np / 16, 1, 1, 16);
	} else {
		for (int64_t j = 0; j < groups; j++)
			kg_transpose(g, row16 + j * 32, in16 + j * 512, t->G, np / 16, 1, np, np);
	}
	for (int64_t g0 = 0; g0 < t->G;) {
		int64_t rows, g1 = run_end(pl, t, g0, &rows);
		kg_flat_conv(g, ISA_DT_F32, ISA_DT_F16, row32 + g0 * 16 * np * 4,
			  row16 + g0 * 16 * np * 2, rows * np);
		g0 = g1;
	}
	if (last && pl->tailfix) {
		/* pixels hw-8 .. hw+7 of the last plane: row i's first 8 are the
		 * last 8 pixels of channel i, 32-byte aligned in tail32 */
		kg_transpose(g, pl->tail16, in16 + ((t->G - 1) * np + pl->hw - 8) * 32, 1, 1, 1, 16,
			  16);
		kg_flat_conv(g, ISA_DT_F32, ISA_DT_F16, pl->tail32, pl->tail16, 256);
	}
}

static void out_store(struct kg *g, const struct plan *pl, const struct tile *t, int par,
		      int last)
{
	int64_t np = tile_npad(pl, t), row32 = pl->slot[par][2];
	for (int64_t g0 = 0; g0 < t->G;) {
		int64_t rows, g1 = run_end(pl, t, g0, &rows);
		int64_t hc = hc_of(pl, t->q0 + g0);
		int fin = last && g1 == t->G;
		if (pl->flat) {
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, hc * 4, row32 + g0 * 64, 1,
			    (rows * 4 + 31) / 32, 0, 0);
		} else if (pl->aligned) {
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (hc * pl->hw + t->a) * 4,
			    row32 + g0 * 16 * np * 4, rows, t->m / 8, (np - t->m) / 8,
			    (pl->hw - t->m) / 8);
		} else {
			for (int64_t i = 0; i < rows; i++) {
				int64_t r = g0 * 16 + i, goff = ((hc + i) * pl->hw + t->a) * 4;
				if (fin && i == rows - 1 && pl->tailfix) {
					if (t->m >= 8)
						kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, goff,
						    row32 + r * np * 4, 1, t->m / 8, 0, 0);
					kg_dma(g, ISA_OP_MOV_UB_GM, R_DST,
					    ((hc + i) * pl->hw + pl->hw - 8) * 4,
					    pl->tail32 + i % 16 * 64, 1, 1, 0, 0);
				} else {
					kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, goff, row32 + r * np * 4,
					    1, (t->m + 7) / 8, 0, 0);
				}
			}
		}
		g0 = g1;
	}
}

/* ---- planning and the per-block programs --------------------------------------- */

static int make_plan(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		     int to_dev, int c04, struct plan *pl, char *err, size_t errlen)
{
	memset(pl, 0, sizeof *pl);
	if (c04 && (c > 4 || h * w % 4)) {
		snprintf(err, errlen, "transdata to C04: %lld channels (at most 4) and %lldx%lld "
			 "pixels (a multiple of 4) do not fit", (long long)c, (long long)h,
			 (long long)w);
		return -1;
	}
	pl->c04 = c04;
	if (n < 1 || c < 1 || h < 1 || w < 1) {
		snprintf(err, errlen, "transdata: empty tensor %lldx%lldx%lldx%lld", (long long)n,
			 (long long)c, (long long)h, (long long)w);
		return -1;
	}
	pl->n = n;
	pl->c = c;
	pl->hw = h * w;
	pl->c1n = (c + 15) / 16;
	pl->q = n * pl->c1n;
	pl->to_dev = to_dev;
	pl->flat = pl->hw == 1;
	pl->aligned = pl->hw % 8 == 0;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t half = (ub - 2048) / 2; /* the tail buffers: 512 + 1024 bytes */
	/* per pixel of 16 channels: 64 bytes fp32 + 32 fp16 + 32 for the
	 * transposed copy; the vtranspose row stride field caps a row at 4080 */
	pl->cap = (half - 3 * SLACK) / 128;
	if (!pl->flat)
		pl->cap = pl->cap / 16 * 16 < 4080 ? pl->cap / 16 * 16 : 4080;
	if (c04) /* whole groups of 64 (c04_pack) */
		pl->cap = pl->cap / 64 * 64;
	if (pl->cap < 16) {
		snprintf(err, errlen, "transdata: the %lld KiB UB is too small",
			 (long long)cfg->ub_size_kb);
		return -1;
	}
	pl->npad = pl->flat ? 1 : pad_row(pl, pl->hw);
	pl->chunked = pl->npad > pl->cap;
	pl->gmax = pl->chunked ? 1 : pl->cap / pl->npad;
	if (pl->gmax > ISA_VEC_REP_MAX)
		pl->gmax = ISA_VEC_REP_MAX; /* transposes repeat over planes */

	/* blocks: at least ~4 KiB of device data each */
	int64_t work = pl->q * pl->hw;
	int64_t nb = (work + 127) / 128;
	if (nb > cfg->core_count)
		nb = cfg->core_count;
	if (nb > MAX_BLOCKS)
		nb = MAX_BLOCKS;
	if (nb < 1)
		nb = 1;
	if (!to_dev && !pl->aligned && (pl->flat ? c % 8 != 0 : pl->hw < 8))
		nb = 1; /* rows spill into the next row: one ordered writer */
	if (pl->chunked) {
		/* chunks of a multiple of 16 pixels; 2 per block or more */
		int64_t k = (pl->hw + pl->cap - 1) / pl->cap;
		int64_t want = (2 * nb + pl->q - 1) / pl->q;
		if (k < want)
			k = want;
		pl->tchunk = pad_row(pl, (pl->hw + k - 1) / k);
		if (pl->tchunk > pl->cap)
			pl->tchunk = pl->cap;
		pl->nchunk = (pl->hw + pl->tchunk - 1) / pl->tchunk;
		int64_t items = pl->q * pl->nchunk;
		pl->per = (items + nb - 1) / nb;
		pl->nb = (items + pl->per - 1) / pl->per;
	} else {
		pl->per = (pl->q + nb - 1) / nb;
		pl->nb = (pl->q + pl->per - 1) / pl->per;
	}
	pl->tailfix = !to_dev && !pl->aligned && !pl->flat && !pl->chunked && pl->nb > 1;

	int64_t s32 = pl->cap * 64 + SLACK, s16 = pl->cap * 32 + SLACK;
	int64_t at = 0;
	for (int par = 0; par < 2; par++) {
		if (to_dev) {
			pl->slot[par][0] = at;
			pl->slot[par][1] = at + s32;
			pl->slot[par][2] = at + s32 + s16;
			at += s32 + 2 * s16;
		} else {
			pl->slot[par][0] = at;
			pl->slot[par][1] = at + s16;
			pl->slot[par][2] = at + 2 * s16;
			at += s32 + 2 * s16;
		}
	}
	pl->tail16 = at;
	pl->tail32 = at + 512;
	if (at + 512 + 1024 > ub) {
		snprintf(err, errlen, "transdata: UB plan overflows (internal error)");
		return -1;
	}
	return 0;
}

/* The tiles of block b, in increasing address order. */
static size_t block_tiles(const struct plan *pl, int64_t b, struct tile *v, size_t cap)
{
	size_t nt = 0;
	if (pl->chunked) {
		int64_t items = pl->q * pl->nchunk;
		int64_t i0 = b * pl->per, i1 = i0 + pl->per < items ? i0 + pl->per : items;
		for (int64_t i = i0; i < i1 && nt < cap; i++) {
			struct tile t = { i / pl->nchunk, 1, i % pl->nchunk * pl->tchunk, 0 };
			t.m = pl->hw - t.a < pl->tchunk ? pl->hw - t.a : pl->tchunk;
			if (t.m % 8) {
				/* end exactly at the plane's end with whole 32-byte rows */
				int64_t m8 = (t.m + 7) / 8 * 8;
				t.a = pl->hw - m8;
				t.m = m8;
			}
			v[nt++] = t;
		}
		return nt;
	}
	int64_t q0 = b * pl->per, q1 = q0 + pl->per < pl->q ? q0 + pl->per : pl->q;
	int64_t p = q1 - q0;
	int64_t nt_want = (p + pl->gmax - 1) / pl->gmax;
	if (nt_want < (p < 2 ? p : 2))
		nt_want = p < 2 ? p : 2; /* both buffers' loads in flight at once */
	int64_t gsz = (p + nt_want - 1) / nt_want;
	for (int64_t q = q0; q < q1 && nt < cap; q += gsz) {
		struct tile t = { q, q1 - q < gsz ? q1 - q : gsz, 0, pl->hw };
		v[nt++] = t;
	}
	return nt;
}

/* The kernel's steps: step t loads tile t (issued one tile ahead), then
 * computes and stores tile t - 1; steps of one parity repeat, so a block's
 * tiles run as a loop (kern_roll.h), and blocks whose code is alike share
 * one copy. */
struct td {
	const struct plan *pl;
	int to_dev;
	struct tile *tiles;
	size_t cap, nt;
};

static void td_step(struct kg *g, const void *ctx, size_t t)
{
	const struct td *d = ctx;
	const struct plan *pl = d->pl;
	struct cc_prog *p = g->p;
	if (t < d->nt) {
		int par = (int)(t % 2);
		cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
		if (d->to_dev)
			in_load(g, pl, &d->tiles[t], par);
		else
			out_load(g, pl, &d->tiles[t], par);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	}
	if (t == 0)
		return;
	size_t u = t - 1;
	int par = (int)(u % 2), last = u + 1 == d->nt;
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	if (d->to_dev) {
		in_compute(g, pl, &d->tiles[u], par);
		if (pl->q8_inv > 0)
			in_quant(g, pl, &d->tiles[u], par);
	} else {
		out_compute(g, pl, &d->tiles[u], par, last);
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	if (d->to_dev)
		in_store(g, pl, &d->tiles[u], par);
	else
		out_store(g, pl, &d->tiles[u], par, last);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

static void td_block(struct kg *g, void *ctx, int64_t b)
{
	struct td *d = ctx;
	struct cc_prog *p = g->p;
	d->nt = block_tiles(d->pl, b, d->tiles, d->cap);
	cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
	cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
	if (kg_emit_rolled(g, d->nt + 1, td_step, d))
		g->bad = 2; /* out of memory */
	cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
	cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
	cc_end(p);
}

static int gen_transdata(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
			 int to_dev, int c04, float q8_inv, struct cc_prog *p, unsigned *block_dim,
			 char *err, size_t errlen)
{
	struct plan pl;
	if (make_plan(cfg, n, c, h, w, to_dev, c04, &pl, err, errlen))
		return -1;
	pl.q8_inv = q8_inv;
	/* every tile costs several instructions: more tiles than the kernel
	 * may hold instructions is refused before the tile table is allocated
	 * (a size from the file asked for a 1.1 TB malloc here) */
	if (p->max_n && (uint64_t)pl.per > p->max_n) {
		snprintf(err, errlen, "transdata %lldx%lldx%lldx%lld: %lld tiles per block, more "
			 "than the %zu instructions a kernel may hold", (long long)n, (long long)c,
			 (long long)h, (long long)w, (long long)pl.per, p->max_n);
		return -1;
	}
	struct td d = { .pl = &pl, .to_dev = to_dev, .cap = (size_t)pl.per + 8 };
	d.tiles = malloc(d.cap * sizeof *d.tiles);
	if (!d.tiles) {
		snprintf(err, errlen, "transdata: out of memory");
		return -1;
	}
	*block_dim = (unsigned)pl.nb;
	struct kg g;
	kg_init(&g, p, 0, 0);
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int rc = kg_emit_blocks(&g, pl.nb, td_block, &d); /* (over: cc_prog_finish says so) */
	free(d.tiles);
	if (rc || g.bad == 2) {
		snprintf(err, errlen, "transdata: out of memory");
		return -1;
	}
	if (g.bad) {
		snprintf(err, errlen, "transdata %lldx%lldx%lldx%lld: a field overflows "
			 "(internal error)", (long long)n, (long long)c, (long long)h,
			 (long long)w);
		return -1;
	}
	return 0;
}

int cc_gen_nchw_in(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		   struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	return gen_transdata(cfg, n, c, h, w, 1, 0, 0, p, block_dim, err, errlen);
}

int cc_gen_nchw_in_c04(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		       struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	return gen_transdata(cfg, n, c, h, w, 1, 1, 0, p, block_dim, err, errlen);
}

int cc_gen_nchw_in_q8(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		      float inv_scale, struct cc_prog *p, unsigned *block_dim, char *err,
		      size_t errlen)
{
	/* (kern_quant.c computes in fp32 outside this range: not the same ops) */
	if (c > 16 || h * w == 1 || !(inv_scale >= 1.0f / 1024 && inv_scale <= 32768.0f)) {
		snprintf(err, errlen, "transdata: int8 output needs at most 16 channels, more than "
			 "one pixel and an inverse scale in [1/1024, 32768]");
		return -1;
	}
	return gen_transdata(cfg, n, c, h, w, 1, 0, inv_scale, p, block_dim, err, errlen);
}

int cc_gen_nchw_out(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	return gen_transdata(cfg, n, c, h, w, 0, 0, 0, p, block_dim, err, errlen);
}
