/* exec_mte.c: data movement: MTE2 (GM in), MTE1 (L1 to L0A/L0B/UB, img2col),
 * MTE3 (out to GM and L1).
 *
 * Burst descriptors (DMA format): nburst bursts of len 32-byte blocks; burst
 * i reads src + i*(len+sgap)*32 and writes dst + i*(len+dgap)*32.
 * Fractals are 512 bytes: 16x16 b16 or 16x32 b8, row-major. */
#include "core.h"
#include "fp16.h"

#include <string.h>

#define BLK 32
#define FRAC 512

struct dma {
	uint64_t nburst, burst, sstride, dstride, sspan, dspan;
};

static int dma_shape(struct sim_core *c, const struct isa_dec *in, struct dma *d)
{
	if (in->nburst < 1)
		return sim_fail(c, "nburst must be at least 1");
	if (in->len < 1)
		return sim_fail(c, "len must be at least 1 block");
	d->nburst = (uint64_t)in->nburst;
	d->burst = (uint64_t)in->len * BLK;
	d->sstride = ((uint64_t)in->len + in->sgap) * BLK;
	d->dstride = ((uint64_t)in->len + in->dgap) * BLK;
	d->sspan = (d->nburst - 1) * d->sstride + d->burst;
	d->dspan = (d->nburst - 1) * d->dstride + d->burst;
	return 0;
}

/* n 32-byte blocks from src to dst (not overlapping), in fixed-size pieces the compiler moves
 * inline: img2col and the fractal loads copy 1 to 16 blocks at a time, millions of times a
 * model, where a call into the C library's memcpy cost more than the move. */
static inline void copy_blocks(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memcpy(dst + i * BLK, src + i * BLK, BLK);
}

/* n blocks to dst from every step-th block of src (img2col of a strided convolution) */
static inline void copy_blocks_step(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n,
				    int64_t step)
{
	for (int64_t i = 0; i < n; i++)
		memcpy(dst + i * BLK, src + i * step * BLK, BLK);
}

static inline void zero_blocks(uint8_t *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memset(dst + i * BLK, 0, BLK);
}

static void dma_copy(uint8_t *dst, const uint8_t *src, const struct dma *d)
{
	for (uint64_t i = 0; i < d->nburst; i++)
		memcpy(dst + i * d->dstride, src + i * d->sstride, d->burst);
}

/* write: the core writes there (in full mode, its pages are mapped a chunk at a time) */
static uint8_t *gm_at(struct sim_core *c, int64_t addr, uint64_t span, int write,
		      const char *what)
{
	uint8_t *p = write && !c->dev->timing_only ? sim_gm_ptr_write(c->dev, (uint64_t)addr, span)
						     : sim_gm_ptr(c->dev, (uint64_t)addr, span);
	if (!p)
		sim_fail(c, "%s: GM access [0x%llx, 0x%llx) is outside every allocation", what,
			 (unsigned long long)addr, (unsigned long long)((uint64_t)addr + span));
	return p;
}

static int gm_in(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		 struct sim_cost *cost, enum sim_buf to)
{
	struct dma d;
	if (dma_shape(c, e->in, &d))
		return -1;
	uint8_t *src = gm_at(c, e->rs1, d.sspan, 0, "src");
	uint8_t *dst = sim_buf_at(c, to, e->rd, d.dspan, "dst");
	if (!src || !dst)
		return -1;
	if (!c->dev->timing_only)
		dma_copy(dst, src, &d);
	*cost = sim_gm_timing(c, now, (uint64_t)e->rs1, d.nburst, d.burst, d.sstride, 0);
	c->st->gm_read_bytes += d.nburst * d.burst;
	return 0;
}

int exec_MOV_GM_L1(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		   struct sim_cost *cost)
{
	return gm_in(c, e, now, cost, SIM_BUF_L1);
}

int exec_MOV_GM_UB(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		   struct sim_cost *cost)
{
	return gm_in(c, e, now, cost, SIM_BUF_UB);
}

int exec_MOV_UB_GM(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		   struct sim_cost *cost)
{
	struct dma d;
	if (dma_shape(c, e->in, &d))
		return -1;
	uint8_t *src = sim_buf_at(c, SIM_BUF_UB, e->rs1, d.sspan, "src");
	uint8_t *dst = src ? gm_at(c, e->rd, d.dspan, 1, "dst") : NULL;
	if (!src || !dst)
		return -1;
	if (!c->dev->timing_only)
		dma_copy(dst, src, &d);
	*cost = sim_gm_timing(c, now, (uint64_t)e->rd, d.nburst, d.burst, d.dstride, 1);
	c->st->gm_write_bytes += d.nburst * d.burst;
	return 0;
}

/* On-core copies: bytes over the path's rate plus the local latency. */
static int local_copy(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost,
		      enum sim_buf from, enum sim_buf to, double bpc, uint64_t *stat)
{
	struct dma d;
	if (dma_shape(c, e->in, &d))
		return -1;
	uint8_t *src = sim_buf_at(c, from, e->rs1, d.sspan, "src");
	uint8_t *dst = src ? sim_buf_at(c, to, e->rd, d.dspan, "dst") : NULL;
	if (!src || !dst)
		return -1;
	if (!c->dev->timing_only)
		dma_copy(dst, src, &d);
	*stat += d.nburst * d.burst;
	return 0;
}

int exec_MOV_L1_UB(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		   struct sim_cost *cost)
{
	return local_copy(c, e, cost, SIM_BUF_L1, SIM_BUF_UB, c->dev->cfg.mte_l1_to_ub_bytes_per_cycle,
			  &c->st->l1_to_ub_bytes);
}

int exec_MOV_UB_L1(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		   struct sim_cost *cost)
{
	return local_copy(c, e, cost, SIM_BUF_UB, SIM_BUF_L1, c->dev->cfg.mte_ub_to_l1_bytes_per_cycle,
			  &c->st->ub_to_l1_bytes);
}

/* load2d: rep fractals, strides in fractals; trans transposes each 16x16
 * b16 fractal (so a row-major K x N block becomes N x K). */
static int load2d(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost,
		  enum sim_buf to, double bpc, uint64_t *stat)
{
	const struct isa_dec *in = e->in;
	if (in->rep < 1)
		return sim_fail(c, "rep must be at least 1 fractal");
	uint64_t rep = (uint64_t)in->rep;
	uint64_t sspan = (rep - 1) * (uint64_t)in->sstride * FRAC + FRAC;
	uint64_t dspan = (rep - 1) * (uint64_t)in->dstride * FRAC + FRAC;
	uint8_t *src = sim_buf_at(c, SIM_BUF_L1, e->rs1, sspan, "src");
	uint8_t *dst = src ? sim_buf_at(c, to, e->rd, dspan, "dst") : NULL;
	if (!src || !dst)
		return -1;
	if (!c->dev->timing_only) {
		for (uint64_t i = 0; i < rep; i++) {
			const uint8_t *s = src + i * (uint64_t)in->sstride * FRAC;
			uint8_t *d = dst + i * (uint64_t)in->dstride * FRAC;
			if (!in->trans) { /* L1 to L0A/L0B: different buffers */
				copy_blocks(d, s, FRAC / BLK);
				continue;
			}
			uint16_t t[256];
			memcpy(t, s, FRAC);
			for (int r = 0; r < 16; r++)
				for (int k = 0; k < 16; k++)
					memcpy(d + (k * 16 + r) * 2, &t[r * 16 + k], 2);
		}
	}
	*stat += rep * FRAC;
	return 0;
}

int exec_LOAD2D_L0A(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		    struct sim_cost *cost)
{
	return load2d(c, e, cost, SIM_BUF_L0A, c->dev->cfg.mte_l1_to_l0a_bytes_per_cycle,
		      &c->st->l1_to_l0a_bytes);
}

int exec_LOAD2D_L0B(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		    struct sim_cost *cost)
{
	return load2d(c, e, cost, SIM_BUF_L0B, c->dev->cfg.mte_l1_to_l0b_bytes_per_cycle,
		      &c->st->l1_to_l0b_bytes);
}

int exec_SET_FMATRIX(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		     struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	if (in->fh < 1 || in->fw < 1)
		return sim_fail(c, "feature map height and width must be at least 1");
	c->fmatrix.fh = in->fh;
	c->fmatrix.fw = in->fw;
	c->fmatrix.pt = in->pt;
	c->fmatrix.pb = in->pb;
	c->fmatrix.pl = in->pl;
	c->fmatrix.pr = in->pr;
	c->fmatrix.set = 1;
	return 0;
}

/* load3d c04=1: img2col of a small-channel map, [H][W][4] f16 (C0 = 4, 8
 * bytes a pixel, the NC1HWC0_C04 of ACL's formats).  K runs over (tap,
 * channel) with the channel fastest: element k of column fractal k1 is tap t
 * = (k1*16 + k) / 4 = (i, j) = (t / kw, t % kw), channel (k1*16 + k) % 4, so
 * one 16-element fractal row holds 4 taps of 4 channels and the kernel's
 * ceil(kh*kw*4 / 16) fractals cover every tap (those past kh*kw read zero);
 * FRACTAL_Z weights laid out in the same K order match it.  Fractals past
 * the last tap do not exist: asking for one is an error. */
static int load3d_c04(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost,
		      int64_t H, int64_t W, int64_t Ho, int64_t Wo, int64_t m0, int64_t k10)
{
	const struct isa_dec *in = e->in;
	if (in->dt != ISA_DT_F16)
		return sim_fail(c, "load3d c04=1 supports dt=f16 only");
	int64_t kk = in->kh * in->kw, k1n = (kk * 4 + 15) / 16;
	if (k10 + in->k1cnt > k1n)
		return sim_fail(c, "load3d c04=1: fractals [%lld, %lld) past the %lld of a %dx%d "
				"kernel", (long long)k10, (long long)(k10 + in->k1cnt),
				(long long)k1n, (int)in->kh, (int)in->kw);
	uint64_t sspan = (uint64_t)(H * W) * 8;
	uint64_t dspan = (uint64_t)(in->mcnt / 16) * (uint64_t)in->k1cnt * FRAC;
	uint8_t *src = sim_buf_at(c, SIM_BUF_L1, e->rs1, sspan, "src");
	uint8_t *dst = src ? sim_buf_at(c, SIM_BUF_L0A, e->rd, dspan, "dst") : NULL;
	if (!src || !dst)
		return -1;
	if (!c->dev->timing_only) {
		/* per group of 4 K elements (one tap): the tap's 4 channels, 8 bytes */
		int64_t HoWo = Ho * Wo, frac_stride = in->k1cnt * FRAC;
		for (int64_t q = 0; q < in->k1cnt * 4; q++) {
			int64_t t = k10 * 4 + q, i = t / in->kw, j = t % in->kw;
			int64_t ih0 = i * in->dh - c->fmatrix.pt, iw0 = j * in->dw - c->fmatrix.pl;
			uint8_t *dq = dst + (q / 4) * FRAC + (q % 4) * 8;
			int64_t oh = m0 / Wo, ow = m0 % Wo;
			for (int64_t m = 0; m < in->mcnt; m++) {
				int64_t ih = oh * in->sh + ih0, iw = ow * in->sw + iw0;
				uint8_t *d = dq + (m / 16) * frac_stride + (m % 16) * BLK;
				if (t >= kk || m0 + m >= HoWo || ih < 0 || ih >= H || iw < 0 || iw >= W)
					memset(d, 0, 8);
				else
					memcpy(d, src + (ih * W + iw) * 8, 8);
				if (++ow == Wo) {
					ow = 0;
					oh++;
				}
			}
		}
	}
	c->st->l1_to_l0a_bytes += dspan;
	return 0;
}

/* load3d: img2col.  The feature map at L1[src] is one batch image in
 * NC1HWC0 ([C1][H][W][C0], C0 = 16 f16 or 32 s8, 32 bytes per pixel).
 * Matrix row m is output pixel (m / Wo, m % Wo); column fractal k1 is
 * (c1, i, j) = (k1 / (kh*kw), k1 / kw % kh, k1 % kw), matching FRACTAL_Z
 * weights.  Rows [m_start, +mcnt) and column fractals [k1_start, +k1cnt) go
 * to L0A as [m1][k1][m0][k0]; padding and rows past Ho*Wo read as zero. */
/* The smallest of four run bounds. */
static int64_t run_len(int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t r = a < b ? a : b;
	r = r < c ? r : c;
	return r < d ? r : d;
}

int exec_LOAD3D(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	if (!c->fmatrix.set)
		return sim_fail(c, "load3d before any set_fmatrix");
	if (in->dt != ISA_DT_F16 && in->dt != ISA_DT_S8)
		return sim_fail(c, "load3d supports dt=f16 and dt=s8");
	if (in->kh < 1 || in->kw < 1 || in->sh < 1 || in->sw < 1 || in->dh < 1 || in->dw < 1)
		return sim_fail(c, "kernel size, stride and dilation must be at least 1");
	if (in->mcnt < 16 || in->mcnt % 16)
		return sim_fail(c, "mcnt must be a positive multiple of 16");
	if (in->k1cnt < 1)
		return sim_fail(c, "k1cnt must be at least 1");
	int64_t H = c->fmatrix.fh, W = c->fmatrix.fw;
	int64_t Ho = (H + c->fmatrix.pt + c->fmatrix.pb - in->dh * (in->kh - 1) - 1) / in->sh + 1;
	int64_t Wo = (W + c->fmatrix.pl + c->fmatrix.pr - in->dw * (in->kw - 1) - 1) / in->sw + 1;
	if (Ho < 1 || Wo < 1)
		return sim_fail(c, "the kernel does not fit the padded %lldx%lld feature map",
				(long long)H, (long long)W);
	int64_t m0 = e->rs2, k10 = e->rs3;
	if (m0 < 0 || k10 < 0)
		return sim_fail(c, "negative m_start or k1_start");
	if (in->c04)
		return load3d_c04(c, e, cost, H, W, Ho, Wo, m0, k10);
	int64_t kk = in->kh * in->kw;
	int64_t c1_last = (k10 + in->k1cnt - 1) / kk;
	uint64_t sspan = (uint64_t)(c1_last + 1) * (uint64_t)(H * W) * BLK;
	uint64_t dspan = (uint64_t)(in->mcnt / 16) * (uint64_t)in->k1cnt * FRAC;
	uint8_t *src = sim_buf_at(c, SIM_BUF_L1, e->rs1, sspan, "src");
	uint8_t *dst = src ? sim_buf_at(c, SIM_BUF_L0A, e->rd, dspan, "dst") : NULL;
	if (!src || !dst)
		return -1;
	if (!c->dev->timing_only) {
		/* k outer, m inner: the divisions that split k1 into (c1, i, j) run once per k,
		 * and the output position (oh, ow) steps along without dividing.  Each 32-byte
		 * block goes to the same place as in any order (L1 and L0A do not overlap). */
		int64_t HoWo = Ho * Wo, frac_stride = in->k1cnt * FRAC;
		for (int64_t k = 0; k < in->k1cnt; k++) {
			int64_t k1 = k10 + k, c1 = k1 / kk;
			int64_t i = k1 / in->kw % in->kh, j = k1 % in->kw;
			int64_t ih0 = i * in->dh - c->fmatrix.pt, iw0 = j * in->dw - c->fmatrix.pl;
			const uint8_t *plane = src + c1 * H * W * BLK;
			uint8_t *dk = dst + k * FRAC;
			int64_t oh = m0 / Wo, ow = m0 % Wo;
			for (int64_t m = 0; m < in->mcnt;) {
				int64_t ih = oh * in->sh + ih0, iw = ow * in->sw + iw0, r;
				uint8_t *d = dk + (m / 16) * frac_stride + (m % 16) * BLK;
				/* A run of the fractal row's blocks at a time, all padding or all from
				 * this input row, sw blocks apart: 27 % of ResNet-50's blocks come
				 * from stride-2 convolutions and 10 % are padding, which went a block
				 * at a time. */
				if (m0 + m >= HoWo) { /* past the last pixel: the row's rest */
					r = 16 - m % 16;
					zero_blocks(d, r);
				} else {
					int64_t rest = run_len(16 - m % 16, Wo - ow, HoWo - (m0 + m), 16);
					if (ih < 0 || ih >= H || iw >= W) { /* to the output row's end */
						r = rest;
						zero_blocks(d, r);
					} else if (iw < 0) { /* left padding: until iw reaches 0 */
						r = run_len(rest, (-iw + in->sw - 1) / in->sw, 16, 16);
						zero_blocks(d, r);
					} else { /* until the input row's end */
						r = run_len(rest, (W - 1 - iw) / in->sw + 1, 16, 16);
						copy_blocks_step(d, plane + (ih * W + iw) * BLK, r, in->sw);
					}
				}
				m += r;
				if ((ow += r) >= Wo) {
					ow = 0;
					oh++;
				}
			}
		}
	}
	c->st->l1_to_l0a_bytes += dspan;
	return 0;
}
