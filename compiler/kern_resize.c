/* kern_resize.c: Resize/Upsample (nearest, bilinear, bicubic) of NC1HWC0
 * over H, W.
 *
 * A unit of work is one output row of one plane (n, c1); units are dealt to
 * the cores in order, so a chunk of consecutive units is one contiguous run
 * of the output.  Per chunk of R units (double-buffered):
 *   MTE2  the source row of each unit (linear: its two source rows, cubic
 *         four: one per tap);
 *   V     linear/cubic: the rows mixed with the unit's row weights (vmul,
 *         vmla with the weight block broadcast through block stride 0);
 *         then per output column j one instruction per tap over all R rows
 *         (8 rows a repeat, block strides w and wo): nearest a vmov of
 *         source column iw[j], linear/cubic vmul/vmla of the tap's source
 *         columns with the column's weight blocks (block stride 0);
 *   MTE3  the R output rows in one DMA.
 * Every pixel is one 32-byte block of 16 channels, so padding channels stay
 * zero. */
#include <math.h>
#include <stdio.h>

#include "fp16.h"
#include "kern_gen.h"
#include "kern_roll.h"
#include "kern_resize.h"

enum { R_TAB = R_CN }; /* the weight table's argument, past the builder's cache */

/* Keys' cubic convolution weights of the neighbours f - 1 .. f + 2 of x,
 * r = x - f in (0, 1], as ONNX's reference writes them. */
static void cubic_coeffs(double r, double A, double *c)
{
	double q = 1 - r;
	c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
	c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
	c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
	c[3] = ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A;
}

void cc_resize_axis(const struct cc_resize_axis_spec *sp, int64_t *idx, float *wt,
		    uint8_t *outside)
{
	int64_t in = sp->in, out = sp->out;
	double scale = sp->scale, cubic_a = sp->cubic_a;
	enum cc_resize_ctm ctm = sp->ctm;
	enum cc_resize_nearest nm = sp->nm;
	int taps = sp->taps, exclude_outside = sp->exclude_outside;
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
			/* the reference's -0.5 for a length of 1; linear and
			 * nearest clamp it to 0 */
			x = len > 1 ? ((double)o + 0.5) / scale - 0.5 : taps == 4 ? -0.5 : 0;
			break;
		case CC_CTM_ALIGN_CORNERS:
			x = len > 1 ? (double)o * (double)(in - 1) / (len - 1) : 0;
			break;
		case CC_CTM_TF_HALF_PIXEL_FOR_NN:
			x = ((double)o + 0.5) / scale;
			break;
		case CC_CTM_TF_CROP_AND_RESIZE:
			/* as ONNX's reference: from the output's integer size */
			x = out > 1 ? (double)o * (sp->roi1 - sp->roi0) * (double)(in - 1) /
					      (double)(out - 1)
				    : (sp->roi1 - sp->roi0) * (double)(in - 1) / 2;
			x += sp->roi0 * (double)(in - 1);
			break;
		default:
			x = (double)o / scale;
			break;
		}
		if (outside) {
			/* TensorFlow's CropAndResize: the value outside, and
			 * in-range indices for the kernel's loads all the same */
			outside[o] = x < 0 || x > (double)(in - 1);
			if (outside[o])
				x = x < 0 ? 0 : (double)(in - 1);
		}
		if (taps == 4) {
			/* the pixel strictly left of x: on a whole pixel, the one
			 * before, with r = 1 (the reference prefers the left) */
			int64_t f = (int64_t)ceil(x) - 1;
			double c[4], sum = 0;
			cubic_coeffs(x - (double)f, cubic_a, c);
			for (int k = 0; k < 4; k++) {
				int64_t i = f - 1 + k;
				if (exclude_outside && (i < 0 || i >= in))
					c[k] = 0;
				sum += c[k];
				idx[k * out + o] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
			}
			for (int k = 0; k < 4; k++)
				wt[k * out + o] = (float)(exclude_outside && sum != 0 ? c[k] / sum : c[k]);
			continue;
		}
		if (taps == 2) {
			if (x < 0)
				x = 0;
			if (x > (double)(in - 1))
				x = (double)(in - 1);
			int64_t a = (int64_t)floor(x);
			float f = (float)(x - (double)a);
			idx[o] = a;
			idx[out + o] = a + 1 < in ? a + 1 : in - 1;
			wt[o] = 1.0f - f;
			wt[out + o] = f;
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
		idx[o] = a < 0 ? 0 : a > in - 1 ? in - 1 : a;
	}
}

int64_t cc_resize_table_bytes(const struct cc_resize *rs)
{
	return rs->taps > 1 ? rs->taps * (rs->wo + rs->ho) * 32 : 0;
}

static void fill_block(uint16_t *b, float v)
{
	uint16_t h = dv_f32_to_f16(v);
	for (int i = 0; i < 16; i++)
		b[i] = h;
}

void cc_resize_table(const struct cc_resize *rs, uint16_t *out)
{
	int64_t T = rs->taps;
	for (int64_t k = 0; k < T; k++) {
		for (int64_t j = 0; j < rs->wo; j++)
			fill_block(out + 16 * (k * rs->wo + j), rs->fw[k * rs->wo + j]);
		for (int64_t i = 0; i < rs->ho; i++)
			fill_block(out + 16 * (T * rs->wo + k * rs->ho + i), rs->fh[k * rs->ho + i]);
	}
}

/* dst = src0 op src1 over n contiguous blocks, src1 one block broadcast. */
static void row_op(struct kg *g, enum isa_op op, int64_t dst, int64_t s0, int64_t s1, int64_t n)
{
	for (int64_t done = 0; done < n;) {
		int64_t left = n - done, rep = left / 8 > ISA_VEC_REP_MAX ? ISA_VEC_REP_MAX : left / 8;
		int64_t blk = rep ? rep * 8 : left;
		kg_mask_lanes(g, rep ? 128 : 16 * left);
		kg_vop(g, op, ISA_DT_F16, dst + done * 32, s0 + done * 32, s1, rep ? rep : 1,
		       (struct kg_strides){ 1, 1, 0, 8, 8, 0 });
		done += blk;
	}
}

/* Column j over nr rows (8 a repeat): dst rows wo blocks apart, src rows w
 * apart; op VMOV (nearest) or a binary op with src1 broadcast. */
static void col_op(struct kg *g, enum isa_op op, int64_t dst, int64_t s0, int64_t s1, int64_t nr,
		   int64_t w, int64_t wo)
{
	for (int64_t done = 0; done < nr;) {
		int64_t left = nr - done, rep = left / 8 > ISA_VEC_REP_MAX ? ISA_VEC_REP_MAX : left / 8;
		int64_t rows = rep ? rep * 8 : left;
		kg_mask_lanes(g, rep ? 128 : 16 * left);
		/* VMOV a VUN, s1 unused */
		kg_vop(g, op, ISA_DT_F16, dst + done * wo * 32, s0 + done * w * 32, s1,
		       rep ? rep : 1, (struct kg_strides){ wo, w, 0, 8 * wo, 8 * w, 0 });
		done += rows;
	}
}

/* The value over n blocks from dst, db blocks apart (8 a repeat, dr = 8 db
 * blocks between repeats), in the first `valid` lanes of each block (the
 * real channels): an output row (db = 1) or one pixel (n = 1). */
static void dup_blocks(struct kg *g, int64_t dst, int64_t n, int64_t db, float v, int64_t valid)
{
	uint64_t pat = 0;
	for (int l = 0; l < 64; l++)
		if (l % 16 < valid)
			pat |= UINT64_C(1) << l;
	for (int64_t done = 0; done < n;) {
		int64_t left = n - done, rep = left / 8 > ISA_VEC_REP_MAX ? ISA_VEC_REP_MAX : left / 8;
		int64_t lanes = rep ? 128 : 16 * left;
		kg_mask(g, lanes > 64 ? pat & (lanes >= 128 ? ~UINT64_C(0)
							    : (UINT64_C(1) << (lanes - 64)) - 1)
				      : 0,
			lanes >= 64 ? pat : pat & ((UINT64_C(1) << lanes) - 1));
		int rv = kg_reg(g, kg_fbits(v));
		KG_VDUP(g, ISA_DT_F16, dst + done * db * 32, rep ? rep : 1, .rs2 = rv, .db = db,
			.dr = 8 * db);
		done += rep ? rep * 8 : left;
	}
}

/* The plan: with taps, step 0 loads the weight table; each step (after
 * it) a group of R output rows, the two buffer sets in turn; groups alike
 * run as a loop, blocks alike share one copy (kg_emit_steps). */
struct rsz {
	const struct cc_resize *rs;
	int lin;
	int64_t T, h, w, ho, wo, units, per, R, tab, unit_bytes;
};

/* Block b's units [b * per, return). */
static int64_t rsz_end(const struct rsz *q, int64_t b)
{
	return (b + 1) * q->per < q->units ? (b + 1) * q->per : q->units;
}

static size_t rsz_steps(const void *ctx, int64_t b)
{
	const struct rsz *q = ctx;
	return (size_t)q->lin + (size_t)((rsz_end(q, b) - b * q->per + q->R - 1) / q->R);
}

static void rsz_step(struct kg *g, const void *ctx, int64_t b, size_t s)
{
	const struct rsz *q = ctx;
	const struct cc_resize *rs = q->rs;
	struct cc_prog *p = g->p;
	int lin = q->lin;
	int64_t T = q->T, h = q->h, w = q->w, ho = q->ho, wo = q->wo, R = q->R, tab = q->tab;
	int64_t unit_bytes = q->unit_bytes, end = rsz_end(q, b);
	if (lin && s == 0) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_TAB, 0, 0, 1, tab / 32, 0, 0);
		cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		return;
	}
	int64_t step = (int64_t)s - lin, u0 = b * q->per + step * R;
	int par = (int)(step % 2);
	int64_t nr = end - u0 < R ? end - u0 : R;
	/* tap t's source rows at ua + t * R * w blocks */
	int64_t ua = tab + par * R * unit_bytes;
	int64_t um = lin ? ua + T * R * w * 32 : ua, uo = um + R * w * 32;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	for (int64_t k = 0; k < nr; k++) {
		int64_t pl = (u0 + k) / ho, i = (u0 + k) % ho;
		for (int64_t t = 0; t < T; t++)
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC,
			       (pl * h + rs->ih[t * ho + i]) * w * 32,
			       ua + (t * R + k) * w * 32, 1, w, 0, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	if (lin) {
		for (int64_t k = 0; k < nr; k++) {
			int64_t i = (u0 + k) % ho;
			for (int64_t t = 0; t < T; t++)
				row_op(g, t ? ISA_OP_VMLA : ISA_OP_VMUL,
				       um + k * w * 32, ua + (t * R + k) * w * 32,
				       (T * wo + t * ho + i) * 32, w);
		}
		for (int64_t j = 0; j < wo; j++)
			for (int64_t t = 0; t < T; t++)
				col_op(g, t ? ISA_OP_VMLA : ISA_OP_VMUL, uo + j * 32,
				       um + rs->iw[t * wo + j] * 32,
				       (t * wo + j) * 32, nr, w, wo);
	} else {
		for (int64_t j = 0; j < wo; j++)
			col_op(g, ISA_OP_VMOV, uo + j * 32, ua + rs->iw[j] * 32, 0,
			       nr, w, wo);
	}
	/* tf_crop_and_resize: the value where the source leaves x,
	 * in the real channels */
	for (int64_t k = 0; (rs->hout || rs->wout) && k < nr; k++) {
		int64_t i = (u0 + k) % ho, pl = (u0 + k) / ho;
		int64_t valid = pl % rs->c1 == rs->c1 - 1 ? rs->last_valid : 16;
		if (rs->hout && rs->hout[i]) {
			dup_blocks(g, uo + k * wo * 32, wo, 1, rs->extrapolation,
				   valid);
			continue;
		}
		for (int64_t j = 0; rs->wout && j < wo; j++)
			if (rs->wout[j])
				dup_blocks(g, uo + (k * wo + j) * 32, 1, 1,
					   rs->extrapolation, valid);
	}
	kg_mask_all(g);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, u0 * wo * 32, uo, nr, wo, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

int cc_gen_resize(const struct soc_config *cfg, const struct cc_resize *rs, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen)
{
	int64_t T = rs->taps;
	int lin = T > 1;
	int64_t h = rs->h, w = rs->w, ho = rs->ho, wo = rs->wo;
	int64_t units = rs->planes * ho;
	int64_t tab = cc_resize_table_bytes(rs);
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	/* per unit and buffer set: the source row(s), the mixed row, the output row */
	int64_t unit_bytes = (lin ? (T + 1) * w + wo : w + wo) * 32;
	int64_t per, blocks = units > 0 ? cc_split_work(units, cfg->core_count, &per) : 0;
	/* a repeat spans 8 rows (8 blocks) even when the mask keeps fewer: the
	 * last buffers leave room for the span of a partial repeat */
	int64_t slack = 8 * (w > wo ? w : wo) * 32 + 256;
	int64_t R = ub > tab + slack ? (ub - tab - slack) / 2 / unit_bytes : 0;
	if (R > per)
		R = per;
	if (units < 1 || w < 1 || h < 1 || w > ISA_VEC_BSTRIDE_MAX || wo > ISA_VEC_BSTRIDE_MAX ||
	    R < 1 || T < 1 ||
	    T > CC_RESIZE_MAX_TAPS || T == 3) {
		snprintf(err, errlen, "Resize from %lldx%lld to %lldx%lld is not supported yet "
			 "(rows of at most %lld pixels that fit the UB)",
			 (long long)h, (long long)w, (long long)ho, (long long)wo,
			 (long long)ISA_VEC_BSTRIDE_MAX);
		return -1;
	}
	*block_dim = (unsigned)blocks;
	struct rsz q = { rs, lin, T, h, w, ho, wo, units, per, R, tab, unit_bytes };
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, lin ? 2 : 1);
	if (lin)
		cc_ldarg(p, R_TAB, 1);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .nsteps = rsz_steps, .step = rsz_step, .ctx = &q };
	return kg_emit_kernel(p, 0, 0, &ks, "Resize", err, errlen);
}
