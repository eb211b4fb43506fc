/* exec_aipp.c: aipp.gm.l1, image preprocessing in the MTE2 data path.
 *
 * Modelled on the AI Core's load_image_to_cbuf: the MTE2 reads uint8 image
 * rows from GM and writes fp16 NC1HWC0 pixels (C0 = 16, 32 bytes each) to
 * L1, applying the AIPP configuration (isa/aipp.h) on the way; or, with the
 * config's C0 word 4, NC1HWC0_C04 pixels (4 lanes, 8 bytes each), the layout a
 * small-channel first conv reads (ATC pairs --enable_small_channel with static
 * AIPP, ascend-runtime.md 6.2: the AIPP output is that conv's input).  The order is
 * the hardware's (ascend.md 3.2): channel swap -> crop -> CSC -> (resize:
 * not modelled) -> mean/normalise -> padding.
 *
 * Per pixel, with the source channels in[0..2] (uint8):
 *   swap   RGB888/XRGB8888: rbuv_swap_switch exchanges R and B; XRGB8888 is
 *          X,R,G,B in memory, and ax_swap_switch makes it R,G,B,X (alpha
 *          last).  YUV420SP: NV12 (U then V); rbuv_swap_switch reads NV21.
 *   crop   the window [load_start_pos, +crop_size) of the source image.
 *   CSC    out_c = clamp(((sum_k M[c][k] * (in_k - input_bias_k)) >> 8)
 *                        + output_bias_c, 0, 255)
 *          in 32-bit integers, >> an arithmetic shift (floor), M the
 *          matrix_r*c* integers (scaled by 256 as in ATC's templates).
 *   norm   y_c = ((float)x_c - (float)mean_chn_c - min_chn_c) * var_reci_chn_c
 *          in fp32, rounded to the nearest fp16.
 *   pad    pixels outside the crop window in the padded output are 0, and
 *          so are the lanes past the channel count (as TransData's are).
 *
 * Cost: the MTE2 reads the config block (192 bytes) and the crop window's
 * bytes of each row (plus, for YUV420SP, the UV row's), through the usual GM
 * timing (L2, main memory); it writes 32 bytes per output pixel to L1 (8 with C0 4).  No
 * public figure gives the AIPP unit's throughput: we assume its L1 side runs
 * at the MTE2 path width (mte.gm_read_bytes_per_cycle), so the instruction
 * occupies the MTE2 for max(GM read time, L1 bytes / that rate). */
#include "core.h"
#include "fp16.h"

#include <string.h>

#include "aipp.h"

static int32_t word(const uint8_t *cfg, int i)
{
	uint32_t v;
	memcpy(&v, cfg + 4 * i, 4);
	return (int32_t)v;
}

static float fword(const uint8_t *cfg, int i)
{
	float f;
	memcpy(&f, cfg + 4 * i, 4);
	return f;
}

static const uint8_t *gm_ptr_checked(struct sim_core *c, int64_t addr, uint64_t span)
{
	const uint8_t *p = sim_gm_ptr(c->dev, (uint64_t)addr, span);
	if (!p)
		sim_fail(c, "GM access [0x%llx, 0x%llx) is outside every allocation",
			 (unsigned long long)addr, (unsigned long long)((uint64_t)addr + span));
	return p;
}

static int clamp255(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* Bytes per pixel of the (first) plane. */
static int plane_bpp(int fmt)
{
	return fmt == AIPP_RGB888_U8 ? 3 : fmt == AIPP_XRGB8888_U8 ? 4 : 1;
}

int exec_AIPP_GM_L1(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		    struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	const uint8_t *cfg = gm_ptr_checked(c, e->rs2, AIPP_CFG_WORDS * 4);
	if (!cfg)
		return -1;
	if ((uint32_t)word(cfg, AIPP_W_MAGIC) != AIPP_CFG_MAGIC)
		return sim_fail(c, "xcfg 0x%llx is not an AIPP config block (no magic)",
				(unsigned long long)e->rs2);
	int fmt = word(cfg, AIPP_W_FORMAT);
	int64_t sw = word(cfg, AIPP_W_SRC_W), sh = word(cfg, AIPP_W_SRC_H);
	int64_t cx = word(cfg, AIPP_W_CROP_X), cy = word(cfg, AIPP_W_CROP_Y);
	int64_t cw = word(cfg, AIPP_W_CROP_W), ch = word(cfg, AIPP_W_CROP_H);
	int64_t pl = word(cfg, AIPP_W_PAD_L), pr = word(cfg, AIPP_W_PAD_R);
	int64_t pt = word(cfg, AIPP_W_PAD_T), pb = word(cfg, AIPP_W_PAD_B);
	int nch = word(cfg, AIPP_W_CHANNELS);
	int c0 = word(cfg, AIPP_W_C0) ? word(cfg, AIPP_W_C0) : 16;
	long long img = aipp_image_bytes(fmt, sw, sh);
	if (img <= 0 || cw < 1 || ch < 1 || cx < 0 || cy < 0 || cx + cw > sw || cy + ch > sh ||
	    pl < 0 || pr < 0 || pt < 0 || pb < 0 || nch < 1 || nch > 4 ||
	    (c0 != 16 && c0 != 4))
		return sim_fail(c, "the AIPP config block at 0x%llx is inconsistent",
				(unsigned long long)e->rs2);
	int64_t wo = pl + cw + pr, ho = pt + ch + pb;
	int64_t r0 = e->rs3, nrow = in->nrow;
	if (nrow < 1 || r0 < 0 || r0 + nrow > ho)
		return sim_fail(c, "rows [%lld, +%lld) are outside the %lld-row output image",
				(long long)r0, (long long)nrow, (long long)ho);
	const uint8_t *src = gm_ptr_checked(c, e->rs1, (uint64_t)img);
	uint64_t pxb = (uint64_t)c0 * 2; /* bytes a pixel in L1 */
	uint64_t dbytes = (uint64_t)(nrow * wo) * pxb;
	uint8_t *dst = src ? sim_buf_at(c, SIM_BUF_L1, e->rd, dbytes, "dst") : NULL;
	if (!src || !dst)
		return -1;
	int bpp = plane_bpp(fmt);
	/* the source rows this instruction reads: those of the crop window */
	int64_t y0 = r0 - pt < 0 ? 0 : r0 - pt;
	int64_t y1 = r0 + nrow - pt > ch ? ch : r0 + nrow - pt;
	if (!c->dev->timing_only) {
		int swap = word(cfg, AIPP_W_RBUV_SWAP), ax = word(cfg, AIPP_W_AX_SWAP);
		int csc = word(cfg, AIPP_W_CSC);
		int32_t m[9], ib[3], ob[3];
		float mean[4], mn[4], var[4];
		for (int k = 0; k < 9; k++)
			m[k] = word(cfg, AIPP_W_MATRIX + k);
		for (int k = 0; k < 3; k++) {
			ib[k] = word(cfg, AIPP_W_IN_BIAS + k);
			ob[k] = word(cfg, AIPP_W_OUT_BIAS + k);
		}
		for (int k = 0; k < 4; k++) {
			mean[k] = (float)word(cfg, AIPP_W_MEAN + k);
			mn[k] = fword(cfg, AIPP_W_MIN + k);
			var[k] = fword(cfg, AIPP_W_VAR + k);
		}
		memset(dst, 0, dbytes);
		for (int64_t r = 0; r < nrow; r++) {
			int64_t y = r0 + r - pt;
			if (y < 0 || y >= ch)
				continue; /* top / bottom padding */
			int64_t sy = cy + y;
			const uint8_t *row = src + sy * sw * bpp;
			const uint8_t *uv = src + sw * sh + (sy / 2) * sw;
			for (int64_t x = 0; x < cw; x++) {
				int64_t sx = cx + x;
				int32_t v[3] = { 0, 0, 0 };
				const uint8_t *p = row + sx * bpp;
				switch (fmt) {
				case AIPP_RGB888_U8:
					v[0] = p[0], v[1] = p[1], v[2] = p[2];
					break;
				case AIPP_XRGB8888_U8:
					if (ax)
						v[0] = p[0], v[1] = p[1], v[2] = p[2];
					else
						v[0] = p[1], v[1] = p[2], v[2] = p[3];
					break;
				case AIPP_YUV420SP_U8:
					v[0] = p[0];
					v[1] = uv[(sx / 2) * 2];
					v[2] = uv[(sx / 2) * 2 + 1];
					break;
				default: /* YUV400 */
					v[0] = p[0];
				}
				if (swap && fmt != AIPP_YUV400_U8) {
					int32_t t = fmt == AIPP_YUV420SP_U8 ? v[1] : v[0];
					if (fmt == AIPP_YUV420SP_U8)
						v[1] = v[2], v[2] = t;
					else
						v[0] = v[2], v[2] = t;
				}
				if (csc) {
					int32_t o[3];
					for (int k = 0; k < 3; k++) {
						int32_t acc = 0;
						for (int j = 0; j < 3; j++)
							acc += m[k * 3 + j] * (v[j] - ib[j]);
						/* >> of a negative int: arithmetic
						 * (floor) on every compiler we build with;
						 * spelled out to avoid the
						 * implementation-defined shift */
						int32_t q = acc >= 0 ? acc / 256 : -((-acc + 255) / 256);
						o[k] = clamp255(q + ob[k]);
					}
					memcpy(v, o, sizeof o);
				}
				uint16_t *d = (uint16_t *)(void *)(dst + (uint64_t)(r * wo + pl + x) * pxb);
				for (int k = 0; k < nch && k < 3; k++) {
					float f = ((float)v[k] - mean[k] - mn[k]) * var[k];
					d[k] = dv_f32_to_f16(f);
				}
			}
		}
	}
	uint64_t rd_bytes = 0;
	struct sim_cost g = sim_gm_timing(c, now, (uint64_t)e->rs2, 1, AIPP_CFG_WORDS * 4, 0, 0);
	rd_bytes += AIPP_CFG_WORDS * 4;
	cost->occ = g.occ;
	cost->lat = g.lat;
	if (y1 > y0) {
		uint64_t n = (uint64_t)(y1 - y0), row = (uint64_t)(cw * bpp);
		uint64_t a = (uint64_t)e->rs1 + (uint64_t)(((cy + y0) * sw + cx) * bpp);
		g = sim_gm_timing(c, now + cost->occ, a, n, row, (uint64_t)(sw * bpp), 0);
		cost->occ += g.occ;
		rd_bytes += n * row;
		if (fmt == AIPP_YUV420SP_U8) {
			/* the UV rows of the window (one per two Y rows) */
			uint64_t u0 = (uint64_t)(cy + y0) / 2, u1 = (uint64_t)(cy + y1 - 1) / 2;
			uint64_t ua = (uint64_t)e->rs1 + (uint64_t)(sw * sh) + u0 * (uint64_t)sw +
				      (uint64_t)(cx / 2 * 2);
			uint64_t uw = (uint64_t)((cx + cw + 1) / 2 * 2 - cx / 2 * 2);
			g = sim_gm_timing(c, now + cost->occ, ua, u1 - u0 + 1, uw, (uint64_t)sw, 0);
			cost->occ += g.occ;
			rd_bytes += (u1 - u0 + 1) * uw;
		}
		if (g.lat > cost->lat)
			cost->lat = g.lat;
	}
	uint64_t wr = sim_cycles_for((double)dbytes, c->dev->cc.path_bpc[SIM_PATH_GM_RD]);
	if (wr > cost->occ)
		cost->occ = wr;
	c->st->gm_read_bytes += rd_bytes;
	return 0;
}
