/* kern_resize.c: Resize/Upsample (nearest, bilinear) of NC1HWC0 over H, W.
 *
 * A unit of work is one output row of one plane (n, c1); units are dealt to
 * the cores in order, so a chunk of consecutive units is one contiguous run
 * of the output.  Per chunk of R units (double-buffered):
 *   MTE2  the source row of each unit (linear: its two source rows);
 *   V     linear: the two rows mixed with the unit's row weights (vmul, vmla
 *         with the weight block broadcast through block stride 0);
 *         then per output column j one instruction over all R rows (8 rows
 *         a repeat, block strides w and wo): nearest a vmov of source column
 *         iw0[j], linear vmul/vmla of columns iw0[j], iw1[j] with the
 *         column's weight blocks (block stride 0);
 *   MTE3  the R output rows in one DMA.
 * Every pixel is one 32-byte block of 16 channels, so padding channels stay
 * zero. */
#include <math.h>
#include <stdio.h>

#include "fp16.h"
#include "kern_gen.h"
#include "kern_resize.h"

enum { R_TAB = 6 };

void cc_resize_axis(int64_t in, int64_t out, double scale, enum cc_resize_ctm ctm,
		    enum cc_resize_nearest nm, int linear, int64_t *i0, int64_t *i1, float *f)
{
	/* as ONNX's reference: the resized length is in * scale, not rounded
	 * (with sizes, scale is out / in) */
	double len = (double)in * scale;
	for (int64_t o = 0; o < out; o++) {
		double x;
		switch (ctm) {
		case CC_CTM_HALF_PIXEL:
			x = ((double)o + 0.5) / scale - 0.5;
			break;
		case CC_CTM_PYTORCH_HALF_PIXEL:
			x = len > 1 ? ((double)o + 0.5) / scale - 0.5 : 0;
			break;
		case CC_CTM_ALIGN_CORNERS:
			x = len > 1 ? (double)o * (double)(in - 1) / (len - 1) : 0;
			break;
		default:
			x = (double)o / scale;
			break;
		}
		if (linear) {
			if (x < 0)
				x = 0;
			if (x > (double)(in - 1))
				x = (double)(in - 1);
			int64_t a = (int64_t)floor(x);
			i0[o] = a;
			i1[o] = a + 1 < in ? a + 1 : in - 1;
			f[o] = (float)(x - (double)a);
			continue;
		}
		double r;
		switch (nm) {
		case CC_NEAREST_FLOOR:
			r = floor(x);
			break;
		case CC_NEAREST_CEIL:
			r = ceil(x);
			break;
		case CC_NEAREST_ROUND_PREFER_CEIL:
			r = x == floor(x) + 0.5 ? ceil(x) : round(x);
			break;
		default:
			r = x == floor(x) + 0.5 ? floor(x) : round(x);
			break;
		}
		int64_t a = (int64_t)r;
		i0[o] = a < 0 ? 0 : a > in - 1 ? in - 1 : a;
	}
}

int64_t cc_resize_table_bytes(const struct cc_resize *rs)
{
	return rs->linear ? 2 * (rs->wo + rs->ho) * 32 : 0;
}

static void fill_block(uint16_t *b, float v)
{
	uint16_t h = dv_f32_to_f16(v);
	for (int i = 0; i < 16; i++)
		b[i] = h;
}

void cc_resize_table(const struct cc_resize *rs, uint16_t *out)
{
	for (int64_t j = 0; j < rs->wo; j++) {
		fill_block(out + 16 * j, 1.0f - rs->fw[j]);
		fill_block(out + 16 * (rs->wo + j), rs->fw[j]);
	}
	for (int64_t i = 0; i < rs->ho; i++) {
		fill_block(out + 16 * (2 * rs->wo + i), 1.0f - rs->fh[i]);
		fill_block(out + 16 * (2 * rs->wo + rs->ho + i), rs->fh[i]);
	}
}

/* dst = src0 op src1 over n contiguous blocks, src1 one block broadcast. */
static void row_op(struct kg *g, enum isa_op op, int64_t dst, int64_t s0, int64_t s1, int64_t n)
{
	for (int64_t done = 0; done < n;) {
		int64_t left = n - done, rep = left / 8 > 255 ? 255 : left / 8;
		int64_t blk = rep ? rep * 8 : left;
		kg_mask_lanes(g, rep ? 128 : 16 * left);
		int r2 = kg_reg(g, s1);
		struct isa_insn *in =
			kg_vinsn(g, op, ISA_DT_F16, dst + done * 32, s0 + done * 32, rep ? rep : 1);
		in->rs2 = r2;
		in->db = in->s0b = 1;
		in->s1b = 0;
		in->dr = in->s0r = 8;
		in->s1r = 0;
		done += blk;
	}
}

/* Column j over nr rows (8 a repeat): dst rows wo blocks apart, src rows w
 * apart; op VMOV (nearest) or a binary op with src1 broadcast. */
static void col_op(struct kg *g, enum isa_op op, int64_t dst, int64_t s0, int64_t s1, int64_t nr,
		   int64_t w, int64_t wo)
{
	for (int64_t done = 0; done < nr;) {
		int64_t left = nr - done, rep = left / 8 > 255 ? 255 : left / 8;
		int64_t rows = rep ? rep * 8 : left;
		kg_mask_lanes(g, rep ? 128 : 16 * left);
		int r2 = op == ISA_OP_VMOV ? 0 : kg_reg(g, s1);
		struct isa_insn *in = kg_vinsn(g, op, ISA_DT_F16, dst + done * wo * 32,
					       s0 + done * w * 32, rep ? rep : 1);
		in->db = wo;
		in->s0b = w;
		in->dr = 8 * wo;
		in->s0r = 8 * w;
		if (op != ISA_OP_VMOV) {
			in->rs2 = r2;
			in->s1b = 0;
			in->s1r = 0;
		}
		done += rows;
	}
}

int cc_gen_resize(const struct soc_config *cfg, const struct cc_resize *rs, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen)
{
	int lin = rs->linear;
	int64_t h = rs->h, w = rs->w, ho = rs->ho, wo = rs->wo;
	int64_t units = rs->planes * ho;
	int64_t tab = cc_resize_table_bytes(rs);
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	/* per unit and buffer set: the source row(s), the mixed row, the output row */
	int64_t unit_bytes = (lin ? 3 * w + wo : w + wo) * 32;
	int64_t per, blocks = units > 0 ? cc_split_work(units, cfg->core_count, &per) : 0;
	/* a repeat spans 8 rows (8 blocks) even when the mask keeps fewer: the
	 * last buffers leave room for the span of a partial repeat */
	int64_t slack = 8 * (w > wo ? w : wo) * 32 + 256;
	int64_t R = ub > tab + slack ? (ub - tab - slack) / 2 / unit_bytes : 0;
	if (R > per)
		R = per;
	if (units < 1 || w < 1 || h < 1 || w > 255 || wo > 255 || R < 1) {
		snprintf(err, errlen, "Resize from %lldx%lld to %lldx%lld is not supported yet "
			 "(rows of at most 255 pixels that fit the UB)",
			 (long long)h, (long long)w, (long long)ho, (long long)wo);
		return -1;
	}
	*block_dim = (unsigned)blocks;
	struct kg g = { .p = p };
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, lin ? 2 : 1);
	if (lin)
		cc_ldarg(p, R_TAB, 1);
	int labels[CC_MAX_BLOCKS];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		kg_reset(&g);
		if (lin) {
			kg_dma(&g, ISA_OP_MOV_GM_UB, R_TAB, 0, 0, 1, tab / 32, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		}
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int64_t end = (b + 1) * per < units ? (b + 1) * per : units;
		int par = 0;
		for (int64_t u0 = b * per; u0 < end; u0 += R, par ^= 1) {
			int64_t nr = end - u0 < R ? end - u0 : R;
			int64_t ua = tab + par * R * unit_bytes, ubb = ua + R * w * 32;
			int64_t um = lin ? ubb + R * w * 32 : ua, uo = um + R * w * 32;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			for (int64_t k = 0; k < nr; k++) {
				int64_t pl = (u0 + k) / ho, i = (u0 + k) % ho;
				kg_dma(&g, ISA_OP_MOV_GM_UB, R_SRC, (pl * h + rs->ih0[i]) * w * 32,
				       ua + k * w * 32, 1, w, 0, 0);
				if (lin)
					kg_dma(&g, ISA_OP_MOV_GM_UB, R_SRC,
					       (pl * h + rs->ih1[i]) * w * 32, ubb + k * w * 32, 1,
					       w, 0, 0);
			}
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			if (lin) {
				for (int64_t k = 0; k < nr; k++) {
					int64_t i = (u0 + k) % ho;
					row_op(&g, ISA_OP_VMUL, um + k * w * 32, ua + k * w * 32,
					       (2 * wo + i) * 32, w);
					row_op(&g, ISA_OP_VMLA, um + k * w * 32, ubb + k * w * 32,
					       (2 * wo + ho + i) * 32, w);
				}
				for (int64_t j = 0; j < wo; j++) {
					col_op(&g, ISA_OP_VMUL, uo + j * 32, um + rs->iw0[j] * 32,
					       j * 32, nr, w, wo);
					col_op(&g, ISA_OP_VMLA, uo + j * 32, um + rs->iw1[j] * 32,
					       (wo + j) * 32, nr, w, wo);
				}
			} else {
				for (int64_t j = 0; j < wo; j++)
					col_op(&g, ISA_OP_VMOV, uo + j * 32, ua + rs->iw0[j] * 32, 0,
					       nr, w, wo);
			}
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			kg_dma(&g, ISA_OP_MOV_UB_GM, R_DST, u0 * wo * 32, uo, nr, wo, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	if (g.bad) {
		snprintf(err, errlen, "Resize to %lldx%lld: a field out of range, not supported yet",
			 (long long)ho, (long long)wo);
		return -1;
	}
	return 0;
}
