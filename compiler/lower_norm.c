/* lower_norm.c: row-wise normalisations and reductions: Softmax,
 * ReduceSum/Mean/Max/Min and LayerNormalization, with their shape inference.
 * One family per file; split out of compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"

/* Softmax or LogSoftmax (log) of xi into out over axis (already in range),
 * in the layouts they have.  mi: pass_fuse_attention.c's mask, or -1. */
static int softmax_into(struct cc_ctx *c, struct cc_node *n, int xi, int out, int64_t axis,
			int log, float scale, int mi)
{
	struct cc_tensor *x = T(c, xi);
	int64_t mask_div = 0;
	if (c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "%s of a constant is not supported yet", n->op);
	if (mi >= 0) {
		/* the pass checked the shapes: one mask row per batch (or one in all) */
		if (axis != x->rank - 1 || dev_5hd(&c->dev[xi]))
			return NODE_FAIL(c, n, "a Softmax mask over an axis other than the last is "
					       "not supported yet");
		if (c->dev[mi].where == W_NONE && cc_weight_place_act(c, n, mi))
			return -1;
		mask_div = c->dev[xi].rows / (T(c, mi)->dims[0] == x->dims[0] ? x->dims[0] : 1);
	}
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, mi >= 0 ? "Softmax+Mask" : n->op);
	char msg[256];
	int64_t rows = c->dev[xi].rows, cols = c->dev[xi].cols, c16 = cc_pad16(cols);
	int rc;
	/* fp32 (mixed precision) needs twice the UB per value: a row too long
	 * for it falls back to fp16, and the report says so */
	for (int retry = 0; retry < 2; retry++) {
		if (retry) {
			cc_prog_free(&t->prog);
			cc_prog_init(&t->prog);
			cc_prec_fp16_only(n, "rows too long for the fp32 kernel's UB tiles");
		}
		if (dev_5hd(&c->dev[xi])) {
			/* [N][C1][H][W][16]: N, H or W is R over the C0 lanes (padding
			 * channels are lanes of their own, never mixed with real ones) */
			const struct dev_tensor *d = &c->dev[xi];
			int64_t c1 = (d->c + 15) / 16, dims[4] = { d->n, c1, d->h, d->w }, A = 1, C = 16;
			for (int64_t i = 0; i < axis; i++)
				A *= dims[i];
			for (int64_t i = axis + 1; i < 4; i++)
				C *= dims[i];
			rc = !t || cc_gen_softmax_any(c->cfg, A, dims[axis], C, C, 0, scale, 0, log,
						      n->fp32, &t->prog, &t->block_dim, msg, sizeof msg);
		} else if (axis == x->rank - 1 && cols <= 128)
			rc = !t || cc_gen_softmax(c->cfg, rows, cols, scale, mask_div, log, n->fp32,
						  &t->prog, &t->block_dim, msg, sizeof msg);
		else if (axis == x->rank - 1)
			rc = !t || cc_gen_softmax_any(c->cfg, rows, 1, c16, cols, 1, scale, mask_div, log,
						      n->fp32, &t->prog, &t->block_dim, msg, sizeof msg);
		else {
			/* [A][R][C]: the padded rows below axis are the contiguous inner part */
			int64_t A = 1, C = c16;
			for (int64_t i = 0; i < axis; i++)
				A *= x->dims[i];
			for (int64_t i = axis + 1; i < x->rank - 1; i++)
				C *= x->dims[i];
			rc = !t || cc_gen_softmax_any(c->cfg, A, x->dims[axis], C, C, 0, scale, 0, log,
						      n->fp32, &t->prog, &t->block_dim, msg, sizeof msg);
		}
		if (!rc || !t || !n->fp32)
			break;
	}
	if (rc)
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	cc_one_in_one_out(c, t, xi, out);
	if (mi >= 0) { /* the mask is argument 2 */
		cc_arg_tensor(c, t, mi);
		cc_io_dev(c, t, 0, mi);
	}
	t->flops = (4 + (scale != 1.0f) + (mi >= 0)) * (uint64_t)cc_tensor_numel(x);
	return 0;
}

/* Softmax and LogSoftmax.  Two cases go through a reshaped copy ([A, B]
 * views or relayouts, cc_view_into): before opset 13 the input is coerced
 * to 2-D at axis ([prod(dims[:axis]), prod(dims[axis:])], one softmax over
 * all the trailing axes); over the channels of an NC1HWC0 tensor, whose
 * lanes hold 16 channels each, the tensor is relaid out as ND [N, C, H*W]
 * so that C is an R of whole rows. */
int lower_softmax(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	int log = !strcmp(n->op, "LogSoftmax");
	int64_t axis = cc_attr_int(n, "axis", c->g.opset >= 13 ? -1 : 1);
	/* pass_fuse_attention.c: a scale and a mask row per mask_div rows */
	float scale = cc_attr_float(n, "davinci_scale", 1.0f);
	int mi = n->nin > 1 ? n->in[1] : -1;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return NODE_FAIL(c, n, "axis %lld is out of range",
				 (long long)cc_attr_int(n, "axis", 0));
	int rank = x->rank;
	int64_t d[3], kaxis;
	if (c->g.opset < 13 && axis != rank - 1) {
		d[0] = d[1] = 1;
		for (int64_t i = 0; i < rank; i++)
			d[i >= axis] *= x->dims[i];
		rank = 2;
		kaxis = 1;
	} else if (rank == 4 && axis == 1 && dev_5hd(&c->dev[xi])) {
		d[0] = x->dims[0];
		d[1] = x->dims[1];
		d[2] = x->dims[2] * x->dims[3];
		rank = 3;
		kaxis = 1;
	} else {
		return softmax_into(c, n, xi, out, axis, log, scale, mi);
	}
	if (mi >= 0)
		return NODE_FAIL(c, n, "a Softmax mask over an axis other than the last is "
				       "not supported yet");
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "%s of a constant is not supported yet", n->op);
	int kx = cc_temp_new(c, n, rank, d);
	int ky = kx < 0 ? -1 : cc_temp_new(c, n, rank, d);
	if (ky < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_view_into(c, n, xi, kx) || softmax_into(c, n, kx, ky, kaxis, log, scale, -1))
		return -1;
	return cc_view_into(c, n, ky, out);
}

/* The reduced axes of a Reduce* node as a bit set: the "axes" attribute or,
 * from opset 13 (ReduceSum) / 18 (the others), a constant input; none means
 * all unless noop_with_empty_axes.  Returns -1 with the node failed. */
static int reduce_axes(struct cc_ctx *c, struct cc_node *n, unsigned *set)
{
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t v[CC_MAX_RANK];
	int cnt = 0;
	const struct cc_attr *a = cc_attr_find(n, "axes");
	if (a && a->type == CC_ATTR_INTS) {
		if (a->n > CC_MAX_RANK)
			return NODE_FAIL(c, n, "too many axes");
		cnt = (int)a->n;
		for (int i = 0; i < cnt; i++)
			v[i] = a->ints[i];
	} else if (n->nin > 1 && n->in[1] >= 0) {
		struct cc_tensor *at = T(c, n->in[1]);
		if (!at->data || at->dtype != CC_I64)
			return NODE_FAIL(c, n, "axes that are not a constant are not supported yet");
		int64_t k = cc_tensor_numel(at);
		if (k > CC_MAX_RANK)
			return NODE_FAIL(c, n, "too many axes");
		cnt = (int)k;
		for (int i = 0; i < cnt; i++)
			v[i] = ((const int64_t *)at->data)[i];
	}
	*set = 0;
	if (cnt == 0) {
		if (cc_attr_int(n, "noop_with_empty_axes", 0))
			return 0; /* the empty set: the input unchanged */
		*set = (1u << x->rank) - 1;
		return 0;
	}
	for (int i = 0; i < cnt; i++) {
		int64_t ax = v[i] < 0 ? v[i] + x->rank : v[i];
		if (ax < 0 || ax >= x->rank)
			return NODE_FAIL(c, n, "axis %lld is out of range", (long long)v[i]);
		*set |= 1u << ax;
	}
	return 0;
}

int infer_reduce(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	unsigned set;
	if (reduce_axes(c, n, &set))
		return -1;
	int keep = (int)cc_attr_int(n, "keepdims", 1), r = 0;
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		if (!(set >> i & 1))
			d[r++] = x->dims[i];
		else if (keep)
			d[r++] = 1;
	}
	return cc_set_shape(T(c, n->out[0]), x->dtype, r, d);
}

/* ReduceSum/Mean/Max/Min on a padded ND tensor whose reduced axes (size-1
 * ones aside) are adjacent: [A][R][C] (see kern_reduce.c). */
/* The reduced axes of set over x, size-1 ones aside: the first and last
 * (k0, k1), and whether they are adjacent. */
static int reduce_span(const struct cc_tensor *x, unsigned set, int *k0, int *k1)
{
	*k0 = *k1 = -1;
	for (int i = 0; i < x->rank; i++)
		if (set >> i & 1 && x->dims[i] > 1) {
			if (*k0 < 0)
				*k0 = i;
			*k1 = i;
		}
	if (*k0 < 0) /* only size-1 axes: a reduction of one element each */
		for (int i = 0; i < x->rank; i++)
			if (set >> i & 1)
				*k0 = *k1 = i;
	for (int i = *k0; i <= *k1; i++)
		if (!(set >> i & 1) && x->dims[i] > 1)
			return 0;
	return 1;
}

static int reduce_adjacent(struct cc_ctx *c, struct cc_node *n, int xi, int out, unsigned set);

/* Reductions the kernel cannot take as they come (a 4-D input or output,
 * which live in NC1HWC0, or axes that are not adjacent): one permute into
 * a padded ND tensor with the kept axes first and the reduced ones last
 * (a leading 1 when that would be 4-D), the reduction of its trailing axes
 * into [kept..., 1...], and a view (or relayout) to the output's shape. */
static int reduce_permuted(struct cc_ctx *c, struct cc_node *n, int xi, int out, unsigned set)
{
	const struct cc_tensor *x = T(c, xi);
	int r = x->rank, lead = r == 4, q = lead;
	int64_t dp[CC_MAX_RANK + 1], dt[CC_MAX_RANK + 1], sx[CC_MAX_RANK];
	int src[CC_MAX_RANK + 1];
	if (r + lead > CC_PERM_MAX_RANK)
		return NODE_FAIL(c, n, "%s of rank %d over these axes is not supported yet", n->op,
				 r);
	if (lead) {
		dp[0] = dt[0] = 1;
		src[0] = -1;
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < r; i++)
			if ((set >> i & 1) == (unsigned)pass) {
				src[q] = i;
				dp[q] = x->dims[i];
				dt[q++] = pass ? 1 : x->dims[i];
			}
	int lx = cc_dev_strides(x, sx);
	int xp = cc_tensor_new(c, n->name, "rperm", q, dp);
	int yt = xp < 0 ? -1 : cc_tensor_new(c, n->name, "rsum", q, dt);
	if (yt < 0 || cc_ws_place(c, xp))
		return NODE_FAIL(c, n, "out of memory");
	struct cc_perm pm = { .rank = q };
	pm.lane_y = cc_dev_strides(T(c, xp), pm.sy);
	for (int k = 0; k < q; k++) {
		pm.dims[k] = dp[k];
		pm.sx[k] = src[k] < 0 ? 0 : sx[src[k]];
		if (src[k] == lx)
			pm.lane_x = k;
	}
	struct task *t = cc_task_new(c, n->name, "Transpose");
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_permute(c->cfg, &pm, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, xp);
	unsigned tail = ((1u << q) - 1) & ~((1u << (q - __builtin_popcount(set))) - 1);
	if (reduce_adjacent(c, n, xp, yt, tail))
		return -1;
	return cc_view_into(c, n, yt, out);
}

int lower_reduce(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	unsigned set;
	if (reduce_axes(c, n, &set))
		return -1;
	if (!set) /* noop_with_empty_axes: an alias, as Identity */
		return cc_alias(c, n);
	if (c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "%s of a constant is not supported yet", n->op);
	for (int i = 0; i < x->rank; i++)
		if (x->dims[i] < 1)
			return NODE_FAIL(c, n, "empty tensors are not supported yet");
	int k0, k1;
	if (dev_5hd(&c->dev[xi]) || y->rank == 4 || !reduce_span(x, set, &k0, &k1))
		return reduce_permuted(c, n, xi, out, set);
	return reduce_adjacent(c, n, xi, out, set);
}

/* The kernel's case: x padded ND, its reduced axes adjacent. */
static int reduce_adjacent(struct cc_ctx *c, struct cc_node *n, int xi, int out, unsigned set)
{
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int kind = !strcmp(n->op, "ReduceSum") ? 0 : !strcmp(n->op, "ReduceMean") ? 1
		 : !strcmp(n->op, "ReduceMax") ? 2 : 3;
	int k0, k1;
	reduce_span(x, set, &k0, &k1);
	int last = k1 == x->rank - 1;
	int64_t A = 1, R = 1, cols = x->dims[x->rank - 1], C = cc_pad16(cols);
	for (int i = 0; i < k0; i++)
		A *= x->dims[i];
	for (int i = k0; i <= k1 && i < x->rank - 1; i++)
		R *= x->dims[i];
	for (int i = k1 + 1; i < x->rank - 1; i++)
		C *= x->dims[i];
	int64_t D = y->rank ? y->dims[y->rank - 1] : 1;
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	int rc = !t || cc_gen_reduce(c->cfg, kind, A, R, C, cols, last, last ? D : 1, n->fp32,
				     &t->prog, &t->block_dim, msg, sizeof msg);
	if (rc && t && n->fp32) { /* as Softmax: fp32 needs twice the UB */
		cc_prog_free(&t->prog);
		cc_prog_init(&t->prog);
		cc_prec_fp16_only(n, "groups too large for the fp32 kernel's UB tiles");
		rc = cc_gen_reduce(c->cfg, kind, A, R, C, cols, last, last ? D : 1, 0, &t->prog,
				   &t->block_dim, msg, sizeof msg);
	}
	if (rc)
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	cc_one_in_one_out(c, t, xi, out);
	t->flops = (uint64_t)cc_tensor_numel(x);
	return 0;
}

/* ---- LayerNormalization (opset 17; also what pass_fuse_layernorm.c makes) ---- */

/* The normalized axis, from axis to the last: -1 with the node failed. */
static int ln_axis(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x)
{
	int64_t axis = cc_attr_int(n, "axis", -1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return NODE_FAIL(c, n, "axis %lld is out of range for rank %d",
				 (long long)cc_attr_int(n, "axis", -1), x->rank);
	return (int)axis;
}

int infer_layernorm(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int axis = ln_axis(c, n, x);
	if (axis < 0 || cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, x->dims))
		return -1;
	/* Mean and InvStdDev: x's shape with the normalized axes 1, in the stash type */
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		d[i] = i < axis ? x->dims[i] : 1;
	for (int k = 1; k < 3 && k < n->nout; k++)
		if (n->out[k] >= 0 && cc_set_shape(T(c, n->out[k]), CC_F32, x->rank, d))
			return -1;
	return 0;
}

/* Scale or B as fp16 [c16] (zero-padded) at h; 0 absent, 1 present, -1 failed. */
static int ln_param(struct cc_ctx *c, struct cc_node *n, int k, int64_t C, uint16_t *h)
{
	int ti = k < n->nin ? n->in[k] : -1;
	if (ti < 0)
		return 0;
	struct cc_tensor *t = T(c, ti);
	int64_t cnt = cc_tensor_numel(t);
	if (!t->data || (cnt != C && cnt != 1))
		return NODE_FAIL(c, n, "%s that is not a constant of %lld values is not supported "
				       "yet", k == 1 ? "a Scale" : "a B", (long long)C);
	float *f = cc_const_floats(c, n, ti);
	if (!f)
		return -1;
	for (int64_t i = 0; i < C; i++)
		h[i] = dv_f32_to_f16(f[cnt == 1 ? 0 : i]);
	free(f);
	return 1;
}

/* One kernel over the last axis of a padded ND tensor.  Any other axis, and
 * 4-D inputs (NC1HWC0, whose last axis is not the lane axis), go through a
 * 2-D [rows, C] copy of x in the ND layout (relayout), and the results back;
 * a view suffices when the normalized axes are dense in the ND layout (only
 * size-1 axes before the last, or a last axis without padding). */
int lower_layernorm(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	int axis = ln_axis(c, n, x);
	if (axis < 0)
		return -1;
	if (c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "LayerNormalization of a constant is not supported yet");
	int64_t rows = 1, C = 1;
	for (int i = 0; i < x->rank; i++)
		*(i < axis ? &rows : &C) *= x->dims[i];
	if (rows < 1 || C < 1)
		return NODE_FAIL(c, n, "empty tensors are not supported yet");
	int st[2] = { n->nout > 1 ? n->out[1] : -1, n->nout > 2 ? n->out[2] : -1 };
	for (int k = 0; k < 2; k++)
		if (st[k] >= 0 && !cc_tensor_uses(&c->g, st[k]))
			st[k] = -1;
	int64_t c16 = cc_pad16(C);
	uint16_t *h = calloc((size_t)(2 * c16), 2);
	if (!h)
		return NODE_FAIL(c, n, "out of memory");
	int hg = ln_param(c, n, 1, C, h), hb = hg < 0 ? -1 : ln_param(c, n, 2, C, h + c16);
	int64_t off = hg < 0 || hb < 0 ? -1 : cc_weight_add(c, h, (uint64_t)(2 * c16 * 2));
	free(h);
	if (hg < 0 || hb < 0)
		return -1;
	if (off < 0)
		return NODE_FAIL(c, n, "out of memory");
	/* the kernel's tensors: x, y and the statistics as ND [rows, C] / [rows, 1] */
	int last_only = x->rank != 4 && (x->dims[x->rank - 1] == C || x->dims[x->rank - 1] % 16 == 0);
	int kx = xi, ky = out, ks[2] = { st[0], st[1] };
	int64_t d2[2] = { rows, C }, d1[2] = { rows, 1 };
	if (!last_only) {
		kx = cc_temp_new(c, n, 2, d2);
		ky = kx < 0 ? -1 : cc_temp_new(c, n, 2, d2);
		if (ky < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, xi, kx))
			return -1;
	} else if (x->dims[x->rank - 1] != C) {
		/* dense rows: [rows, C] is a view of x, and of y */
		kx = cc_temp_new(c, n, 2, d2);
		if (kx < 0)
			return NODE_FAIL(c, n, "out of memory");
		c->dev[kx] = c->dev[xi];
		cc_rows_cols(T(c, kx), &c->dev[kx].rows, &c->dev[kx].cols);
		if (cc_ws_place(c, out))
			return NODE_FAIL(c, n, "out of memory");
		ky = cc_temp_new(c, n, 2, d2);
		if (ky < 0)
			return NODE_FAIL(c, n, "out of memory");
		c->dev[ky] = c->dev[out];
		cc_rows_cols(T(c, ky), &c->dev[ky].rows, &c->dev[ky].cols);
	} else if (cc_ws_place(c, out)) {
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int k = 0; k < 2; k++) {
		if (st[k] < 0)
			continue;
		if (T(c, st[k])->rank == 4) { /* NC1HWC0: through a [rows, 1] copy */
			ks[k] = cc_temp_new(c, n, 2, d1);
			if (ks[k] < 0)
				return NODE_FAIL(c, n, "out of memory");
		} else if (cc_ws_place(c, st[k])) {
			return NODE_FAIL(c, n, "out of memory");
		}
	}
	/* pass_fuse_layernorm.c's residual Add: r of x's shape, rows as x's */
	int ri = n->res_in ? n->in[n->res_in] : -1;
	if (ri >= 0 && !last_only && c->dev[ri].where == W_WS) {
		/* x went through a relayout to [rows, C]: so does the residual */
		int kr = cc_temp_new(c, n, 2, d2);
		if (kr < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, ri, kr))
			return -1;
		ri = kr;
	} else if (ri >= 0 && (kx != xi || c->dev[ri].where != W_WS || dev_5hd(&c->dev[ri])))
		return NODE_FAIL(c, n, "a residual Add on a LayerNormalization whose rows need a "
				       "layout change is not supported yet");
	/* after the relayouts above: tasks run in the order they are made */
	struct task *t = cc_task_new(c, n->name, n->fused[0] ? "LayerNorm" : n->op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	struct cc_layernorm ln = { rows, C, cc_attr_float(n, "epsilon", 1e-5f), hg, hb,
				   st[0] >= 0, st[1] >= 0, ri >= 0 };
	char msg[256];
	if (cc_gen_layernorm(c->cfg, &ln, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, kx);
	cc_arg_tensor(c, t, ky);
	t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
	cc_io_dev(c, t, 0, kx);
	cc_io_dev(c, t, 1, ky);
	for (int k = 0; k < 2; k++)
		if (st[k] >= 0) {
			cc_arg_tensor(c, t, ks[k]);
			cc_io_dev(c, t, 1, ks[k]);
		}
	if (ri >= 0) {
		cc_arg_tensor(c, t, ri);
		cc_io_dev(c, t, 0, ri);
	}
	t->flops = (8 + (ri >= 0)) * (uint64_t)(rows * C);
	if (!last_only && cc_relayout(c, n, ky, out))
		return -1;
	for (int k = 0; k < 2; k++)
		if (st[k] >= 0 && ks[k] != st[k] && cc_relayout(c, n, ks[k], st[k]))
			return -1;
	return 0;
}
