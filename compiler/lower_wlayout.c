/* lower_wlayout.c: conv weights that are not constants (graph inputs, or
 * computed) laid out as FRACTAL_Z on the device, where ATC would insert a
 * TransData to FRACTAL_Z: the compiler cannot rearrange them ahead of time
 * as it does constants (cc_conv_layout_weights).
 *
 * The weights arrive as an activation: [Cout, Cin, kh, kw] in NC1HWC0 (a
 * Conv's; ConvTranspose's are [Cin, Cout, kh, kw]), 1-D ones and 3-D
 * ones (viewed as [Co, Ci*KD, kh, kw]) first relaid out into NC1HWC0.  FRACTAL_Z is [C1*kh*kw][N1][16 k][16 n] with
 * k = ci % 16 a block row and n = co % 16 its lane (kern_conv.c), so the
 * layout is one axis permutation (cc_gen_permute) over the output axes
 * (c1, i, j, co, k), ci split into its block c1 and row k:
 *   Conv: the lanes change (ci -> co): 16x16 vtransposes; the input's
 *     padding channels (zero, the TransData's) fill the rows k >= Cin % 16
 *     and the output's lanes co >= Cout are zeroed by the permute;
 *   ConvTranspose: W'(co, ci, i, j) = W(ci, co, kh-1-i, kw-1-j) keeps co as
 *     the lane: a block copy, the taps walked backwards; the rows ci >= Cin
 *     of the last block have no source and are zeroed first
 *     (cc_gen_zero_runs) when Cin is not a multiple of 16. */
#include <stdio.h>

#include "compile_int.h"

/* One TransData task of node n writing FRACTAL_Z fz from w (or nothing
 * from, for the zero fill: w < 0). */
static struct task *wtask(struct cc_ctx *c, struct cc_node *n, int w, int fz,
			  enum cc_format wfmt)
{
	struct task *t = cc_task_new(c, n->name, "TransData");
	if (!t) {
		NODE_FAIL(c, n, "out of memory");
		return NULL;
	}
	if (w >= 0) {
		cc_arg_tensor(c, t, w);
		cc_io_add(t, 0, w, n->in[1], CC_F16, wfmt);
	}
	cc_arg_tensor(c, t, fz);
	cc_io_add(t, 1, fz, n->in[1], CC_F16, CC_FMT_FRACTAL_Z);
	return t;
}

int cc_conv_weight_fz(struct cc_ctx *c, struct cc_node *n, int transposed, int64_t cout,
		      int64_t cin)
{
	int wi = n->in[1];
	const struct cc_tensor *w = T(c, wi);
	if (c->dev[wi].where != W_WS)
		return NODE_FAIL(c, n, "weights '%s' that are not constants must be float "
				       "activations", w->name);
	int64_t kh = w->rank == 3 ? 1 : w->dims[2], kw = w->dims[w->rank - 1];
	if (!dev_5hd(&c->dev[wi])) {
		/* 1-D weights ([.., kw] padded ND) -> [.., 1, kw] NC1HWC0; a 3-D
		 * conv's [Co, Ci, KD, kh, kw] (padded ND) viewed 4-D by
		 * lower_conv3d.c as [Co, Ci*KD, kh, kw]: the same row-major order */
		int64_t d4[4] = { w->dims[0], w->dims[1], kh, kw };
		int w4 = cc_tensor_new(c, n->name, "w4d", 4, d4);
		if (w4 < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, wi, w4))
			return -1;
		wi = w4;
	}
	int64_t C1 = (cin + 15) / 16, N1 = (cout + 15) / 16, kk = kh * kw;
	int fz = cc_scratch_new(c, n->name, (uint64_t)(C1 * kk * N1 * 512));
	if (fz < 0)
		return NODE_FAIL(c, n, "out of memory");
	int64_t st[4];
	cc_dev_strides(T(c, wi), st); /* NC1HWC0: lane axis 1 */
	char msg[256];
	if (transposed && cin % 16) { /* rows ci >= Cin of the last block */
		struct task *t = wtask(c, n, -1, fz, CC_FMT_ND);
		if (!t || cc_gen_zero_runs(c->cfg, (C1 - 1) * kk * N1 * 16 + cin % 16, kk * N1,
					   16 - cin % 16, 16, &t->prog, &t->block_dim, msg,
					   sizeof msg))
			return t ? NODE_FAIL(c, n, "%s", msg) : -1;
		snprintf(t->op_type, sizeof t->op_type, "ZeroFill");
	}
	/* output axes (c1, i, j, co, k); FRACTAL_Z block strides */
	struct cc_perm pm = { .rank = 5, .lane_y = 3 };
	int64_t sy[5] = { kk * N1 * 16, kw * N1 * 16, N1 * 16, 16, 1 };
	for (int q = 0; q < 5; q++)
		pm.sy[q] = sy[q];
	pm.dims[1] = kh;
	pm.dims[2] = kw;
	pm.dims[3] = cout;
	if (!transposed) { /* W [co][C1][kh][kw][16 ci] */
		int64_t sx[5] = { st[1], st[2], st[3], st[0], st[1] };
		for (int q = 0; q < 5; q++)
			pm.sx[q] = sx[q];
		pm.lane_x = 4;
		pm.dims[0] = C1;
		pm.dims[4] = 16;
		struct task *t = wtask(c, n, wi, fz, CC_FMT_NC1HWC0);
		if (!t || cc_gen_permute(c->cfg, &pm, &t->prog, &t->block_dim, msg, sizeof msg))
			return t ? NODE_FAIL(c, n, "%s", msg) : -1;
		return fz;
	}
	/* W [ci][Co1][kh][kw][16 co], taps reversed; whole ci blocks, then the
	 * last partial one */
	int64_t sx[5] = { 16 * st[0], -st[2], -st[3], st[1], st[0] };
	for (int q = 0; q < 5; q++)
		pm.sx[q] = sx[q];
	pm.lane_x = 3;
	pm.x0 = (kh - 1) * st[2] + (kw - 1) * st[3];
	for (int part = 0; part < 2; part++) {
		int64_t c1 = part ? cin / 16 : 0, nc1 = part ? (cin % 16 != 0) : cin / 16;
		if (!nc1)
			continue;
		struct cc_perm q = pm;
		q.dims[0] = nc1;
		q.dims[4] = part ? cin % 16 : 16;
		q.x0 += 16 * c1 * st[0];
		q.y0 = c1 * sy[0];
		struct task *t = wtask(c, n, wi, fz, CC_FMT_NC1HWC0);
		if (!t || cc_gen_permute(c->cfg, &q, &t->prog, &t->block_dim, msg, sizeof msg))
			return t ? NODE_FAIL(c, n, "%s", msg) : -1;
	}
	return fz;
}
