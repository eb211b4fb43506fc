/* kern_affine.c: a per-channel affine map on NC1HWC0 tensors,
 * y = act(x * scale[c] + shift[c]): BatchNormalization that could not be
 * folded into a Conv.  A pixel is one 32-byte block of 16 channels, so the
 * 16 scales of a C1 plane are one block that every pixel block reads (block
 * and repeat strides 0).  Work is cut into (plane, pixel tile) pieces dealt
 * to the blocks in order; double-buffered like every streaming kernel.
 * x_c1s, y_c1s: channel blocks between images (a tensor inside a concat
 * buffer, plan_concat.c), 0 for the tensor's own.
 * Arguments: 0 x, 1 params (fp16 scale [C16] then shift [C16]), 2 y. */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

enum { R_X = 1, R_P = 2, R_Y = 3, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16, R_S = 25 };

int cc_gen_affine(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		  int64_t x_c1s, int64_t y_c1s, enum cc_act act, float lo, float hi,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	int64_t c1 = (c + 15) / 16, planes = n * c1, pix = h * w;
	int64_t xs = x_c1s ? x_c1s : c1, ys = y_c1s ? y_c1s : c1;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t params = 2 * c1 * 32;
	int64_t tile = (ub - params - 512) / (4 * 32) / 8 * 8; /* pixels: 2 buffers x in/out */
	if (tile > ISA_VEC_REP_MAX * 8)
		tile = ISA_VEC_REP_MAX * 8;
	if (tile < 8) {
		snprintf(err, errlen, "affine: %lld channels of parameters do not fit the UB",
			 (long long)c);
		return -1;
	}
	int64_t per_plane = (pix + tile - 1) / tile, total = planes * per_plane;
	int64_t per, blocks = cc_split_work(total, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	int64_t buf = tile * 32, ub_in = params, ub_out = params + 2 * buf;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_P, 1);
	cc_ldarg(p, R_Y, 2);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		/* the parameters, once per block */
		cc_li(p, R_UB, 0);
		cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_P, 1, 2 * c1, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int par = 0;
		for (int64_t u = b * per; u < (b + 1) * per && u < total && !p->over; u++, par ^= 1) {
			int64_t plane = u / per_plane, p0 = (u % per_plane) * tile;
			int64_t np = pix - p0 < tile ? pix - p0 : tile;
			int64_t cb = plane % c1, img = plane / c1;
			int64_t off = ((img * xs + cb) * pix + p0) * 32;
			int64_t yoff = ((img * ys + cb) * pix + p0) * 32;
			int64_t rep = (np + 7) / 8;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_addi(p, R_GM, R_X, off);
			cc_li(p, R_UB, ub_in + par * buf);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, np, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			cc_li(p, R_UB, ub_out + par * buf);
			cc_li(p, R_UB + 1, ub_in + par * buf);
			cc_li(p, R_UB + 2, cb * 32);
			CC_I(p, VBIN, ISA_OP_VMUL, .rd = R_UB, .rs1 = R_UB + 1, .rs2 = R_UB + 2,
			     .dt = ISA_DT_F16, .rep = rep, .s1b = 0, .s1r = 0);
			cc_li(p, R_UB + 2, (c1 + cb) * 32);
			CC_I(p, VBIN, ISA_OP_VADD, .rd = R_UB, .rs1 = R_UB, .rs2 = R_UB + 2,
			     .dt = ISA_DT_F16, .rep = rep, .s1b = 0, .s1r = 0);
			if (act == CC_ACT_RELU) {
				CC_I(p, VUN, ISA_OP_VRELU, .rd = R_UB, .rs1 = R_UB,
				     .dt = ISA_DT_F16, .rep = rep);
			} else if (act == CC_ACT_CLIP) {
				for (int k = 0; k < 2; k++) {
					float v = k ? hi : lo;
					uint32_t bits;
					memcpy(&bits, &v, 4);
					cc_li(p, R_S, bits);
					CC_I(p, VSCAL, k ? ISA_OP_VMINS : ISA_OP_VMAXS, .rd = R_UB,
					     .rs1 = R_UB, .rs2 = R_S, .dt = ISA_DT_F16,
					     .rep = rep);
				}
			}
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, R_Y, yoff);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, np, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	return 0;
}
