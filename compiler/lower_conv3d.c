/* lower_conv3d.c: the 3-D (rank-5, [N, C, D, H, W]) forms of Conv,
 * ConvTranspose, MaxPool, AveragePool and BatchNormalization, composed from the tested
 * 2-D kernels at the lowering level (the way lower_util.c's cc_lower_1d runs
 * the 1-D forms as 2-D).  A rank-5 activation is padded ND on the device
 * (W padded to 16); the 2-D kernels want NC1HWC0, so every form moves its
 * data through relayouts (cc_relayout: two TransData through fp32, exact
 * for fp16 values) and permutes (cc_gen_permute).  Slow but exact: the
 * extra passes over the data are the price of not having 3-D kernels.
 *
 * - BatchNormalization: the per-channel affine map of the 4-D view
 *   [N, C, D*H, W] (the same row-major order).
 * - MaxPool / AveragePool: separable over the box.  A 2-D pool over (H, W)
 *   of every depth slice ([N, C*D, H, W]), then a 2-D pool with window
 *   (kd, 1) over [N*C, Ho*Wo, D, 1] (Ho*Wo on the channels, so that rows
 *   stay one pixel long).  The max of maxes is the max; for the average,
 *   each pass divides by its own axis' count (the valid elements,
 *   or the window clipped to the padded input with count_include_pad), and
 *   the product of those counts is the 3-D divisor, so the result is the
 *   3-D average up to the intermediate's fp16 rounding.
 * - Conv: a depth im2col and one 2-D conv.  The input, zero-padded in D,
 *   is gathered (one permute) into X'[n, d, ci, kd, h, w] =
 *   x[n, ci, d*sd + kd*dd - pd, h, w], which is the 4-D
 *   [N*Do, Ci*KD, H, W]; the 2-D conv (lower_conv on the swapped tensors)
 *   with the weights viewed as [Co, Ci/g*KD, kh, kw] (ONNX's
 *   [Co][Ci/g][KD][kh][kw] is that in row-major order, each group's (ci, kd)
 *   channels contiguous) gives [N*Do, Co, Ho, Wo], permuted to
 *   [N, Co, Do, Ho, Wo].  The input is read KD/sd times over.  Weights
 *   that are graph inputs go through lower_wlayout.c on that view.
 * - ConvTranspose: a stride-1 Conv with zeros inserted and flipped weights
 *   (see its section below). */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

/* One spatial axis of a window: kernel, stride, dilation, pads, output. */
struct axis {
	int64_t k, s, d, pb, pe, o;
};

/* The window attributes of node n per axis (D, H, W): the kernel from
 * kernel_shape or the weights' kdims, strides, dilations, pads [Db, Hb,
 * Wb, De, He, We], and (op, when not NULL) ConvTranspose's
 * output_padding; each with 3 values (pads 6). */
static int attrs3(struct cc_ctx *c, struct cc_node *n, const int64_t *kdims, struct axis *ax,
		  int64_t *op)
{
	const struct cc_attr *a;
	for (int i = 0; i < 3; i++) {
		ax[i] = (struct axis){ kdims ? kdims[i] : 0, 1, 1, 0, 0, 0 };
		if (op)
			op[i] = 0;
	}
	static const char *const names[4] = { "kernel_shape", "strides", "dilations",
					      "output_padding" };
	for (int j = 0; j < (op ? 4 : 3); j++)
		if ((a = cc_attr_find(n, names[j])) && a->type == CC_ATTR_INTS) {
			if (a->n != 3)
				return NODE_FAIL(c, n, "%s must have 3 values for a rank-5 input",
						 names[j]);
			for (int i = 0; i < 3; i++)
				*(j == 0 ? &ax[i].k : j == 1 ? &ax[i].s : j == 2 ? &ax[i].d : &op[i]) =
					a->ints[i];
		}
	if ((a = cc_attr_find(n, "pads")) && a->type == CC_ATTR_INTS) {
		if (a->n != 6)
			return NODE_FAIL(c, n, "pads must have 6 values for a rank-5 input");
		for (int i = 0; i < 3; i++) {
			ax[i].pb = a->ints[i];
			ax[i].pe = a->ints[i + 3];
		}
	}
	return 0;
}

/* The three axes (D, H, W) of node n's window over x [N, C, D, H, W]
 * (attrs3) with auto_pad resolved as lower_conv.c's window_of does for
 * 2-D, ceil_mode for the pools. */
static int geom3(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		 const int64_t *kdims, int pool, struct axis *ax)
{
	if (attrs3(c, n, kdims, ax, NULL))
		return -1;
	int ceil_mode = pool && cc_attr_int(n, "ceil_mode", 0);
	const struct cc_attr *ap = cc_attr_find(n, "auto_pad");
	const char *mode = ap && ap->s ? ap->s : "NOTSET";
	for (int i = 0; i < 3; i++) {
		struct axis *v = &ax[i];
		int64_t in = x->dims[2 + i];
		if (v->k < 1 || v->s < 1 || v->d < 1)
			return NODE_FAIL(c, n, "kernel_shape is missing or bad strides or dilations");
		int64_t e = (v->k - 1) * v->d + 1;
		if (!strcmp(mode, "VALID")) {
			v->pb = v->pe = 0;
		} else if (!strncmp(mode, "SAME", 4)) { /* output = ceil(input / stride) */
			int64_t t = ((in + v->s - 1) / v->s - 1) * v->s + e - in;
			t = t > 0 ? t : 0;
			v->pb = !strcmp(mode, "SAME_LOWER") ? (t + 1) / 2 : t / 2;
			v->pe = t - v->pb;
		}
		if (v->pb < 0 || v->pe < 0)
			return NODE_FAIL(c, n, "bad pads");
		int64_t span = in + v->pb + v->pe - e;
		if (span < 0)
			return NODE_FAIL(c, n, "the window is larger than the padded input");
		v->o = (ceil_mode ? (span + v->s - 1) / v->s : span / v->s) + 1;
		/* a last window that would start in the end padding is dropped */
		if (ceil_mode && (v->o - 1) * v->s >= in + v->pb)
			v->o--;
	}
	return 0;
}

static int geomt3(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		  const struct cc_tensor *w, struct axis *ax, int64_t *op);

/* Conv's and ConvTranspose's output shapes */
int cc_infer_conv3d(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (n->nin < 2 || n->in[1] < 0 || T(c, n->in[1])->rank != 5)
		return NODE_FAIL(c, n, "the weights must be a 5-D tensor");
	struct cc_tensor *w = T(c, n->in[1]);
	struct axis ax[3];
	int64_t op[3], d[5] = { x->dims[0], w->dims[0], 0, 0, 0 };
	if (!strcmp(n->op, "ConvTranspose")) { /* weights [Ci, Co/g, ...] */
		if (geomt3(c, n, x, w, ax, op))
			return -1;
		d[1] = w->dims[1] * cc_attr_int(n, "group", 1);
	} else if (geom3(c, n, x, w->dims + 2, 0, ax)) {
		return -1;
	}
	for (int i = 0; i < 3; i++)
		d[2 + i] = ax[i].o;
	return cc_set_shape(T(c, n->out[0]), x->dtype, 5, d);
}

int cc_infer_pool3d(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	struct axis ax[3];
	if (geom3(c, n, x, NULL, 1, ax))
		return -1;
	if (ax[0].d != 1 || ax[1].d != 1 || ax[2].d != 1)
		return NODE_FAIL(c, n, "dilated 3-D pooling is not supported yet");
	int64_t d[5] = { x->dims[0], x->dims[1], ax[0].o, ax[1].o, ax[2].o };
	return cc_set_shape(T(c, n->out[0]), x->dtype, 5, d);
}

/* A 5-D input that is an activation in the workspace (constants are not). */
static int need_act(struct cc_ctx *c, struct cc_node *n, int xi)
{
	if (c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "a rank-5 input that is not an activation (a constant or "
				       "an integer input) is not supported yet");
	return 0;
}

/* A permute task out = x with pm's geometry. */
static int permute_task(struct cc_ctx *c, struct cc_node *n, int xi, int out,
			const struct cc_perm *pm, const char *op)
{
	struct task *t = cc_output_task(c, n, out);
	if (!t)
		return -1;
	snprintf(t->op_type, sizeof t->op_type, "%s", op);
	char msg[256];
	if (cc_gen_permute(c->cfg, pm, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	return 0;
}

/* One 2-D pool task of out = pool(xi) with pl's geometry (n, c, h, w of
 * xi's NC1HWC0). */
static int pool_task(struct cc_ctx *c, struct cc_node *n, int xi, int out,
		     const struct cc_pool *pl)
{
	struct task *t = cc_output_task(c, n, out);
	if (!t)
		return -1;
	char msg[256];
	if (cc_gen_pool(c->cfg, pl, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	t->flops = (uint64_t)(pl->n * pl->c * pl->ho * pl->wo * pl->kh * pl->kw);
	return 0;
}

int cc_lower_pool3d(struct cc_ctx *c, struct cc_node *n, int is_max)
{
	int xi = n->in[0], out = n->out[0];
	if (n->nout > 1 && n->out[1] >= 0 && cc_tensor_uses(&c->g, n->out[1]))
		return NODE_FAIL(c, n, "the Indices output is not supported yet");
	if (need_act(c, n, xi))
		return -1;
	const struct cc_tensor *x = T(c, xi);
	struct axis ax[3];
	if (geom3(c, n, x, NULL, 1, ax))
		return -1;
	if (ax[0].d != 1 || ax[1].d != 1 || ax[2].d != 1)
		return NODE_FAIL(c, n, "dilated 3-D pooling is not supported yet");
	int64_t N = x->dims[0], C = x->dims[1], D = x->dims[2], H = x->dims[3], W = x->dims[4];
	int cip = (int)cc_attr_int(n, "count_include_pad", 0);
	/* (H, W) of every depth slice: [N, C*D, H, W] -> [N, C*D, Ho, Wo] */
	int64_t d1[4] = { N, C * D, H, W }, d2[4] = { N, C * D, ax[1].o, ax[2].o };
	int a = cc_tensor_new(c, n->name, "hw_in", 4, d1);
	int b = a < 0 ? -1 : cc_tensor_new(c, n->name, "hw_out", 4, d2);
	if (b < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_relayout(c, n, xi, a))
		return -1;
	struct cc_pool pl = { .n = N, .c = C * D, .h = H, .w = W, .kh = ax[1].k, .kw = ax[2].k,
			      .sh = ax[1].s, .sw = ax[2].s, .pt = ax[1].pb, .pl = ax[2].pb,
			      .pb = ax[1].pe, .pr = ax[2].pe, .ho = ax[1].o, .wo = ax[2].o,
			      .is_max = is_max, .count_include_pad = cip };
	if (pool_task(c, n, a, b, &pl))
		return -1;
	if (ax[0].k == 1 && ax[0].s == 1 && ax[0].pb == 0 && ax[0].pe == 0)
		return cc_relayout(c, n, b, out); /* nothing to pool over D */
	/* D: the [N*C, D, Ho*Wo] of the result (padded ND, a relayout), its
	 * Ho*Wo moved to the channels of a 4-D [N*C, Ho*Wo, D, 1] (a copy: both
	 * sides' lanes are Ho*Wo), a (kd, 1) window over its D rows of one
	 * pixel (whatever Ho*Wo, the rows fit the UB), and back */
	int64_t A = N * C, hw = ax[1].o * ax[2].o, Do = ax[0].o;
	int64_t d3[3] = { A, D, hw }, de[4] = { A, hw, D, 1 }, df[4] = { A, hw, Do, 1 };
	int64_t dg[3] = { A, Do, hw };
	int g3 = cc_tensor_new(c, n->name, "d_nd", 3, d3);
	int e = g3 < 0 ? -1 : cc_tensor_new(c, n->name, "d_in", 4, de);
	int f = e < 0 ? -1 : cc_tensor_new(c, n->name, "d_out", 4, df);
	int g = f < 0 ? -1 : cc_tensor_new(c, n->name, "d_back", 3, dg);
	if (g < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_relayout(c, n, b, g3))
		return -1;
	int64_t s3[CC_MAX_RANK], sf[CC_MAX_RANK];
	cc_dev_strides(T(c, g3), s3);
	struct cc_perm pe = { .rank = 4, .lane_x = 1 };
	memcpy(pe.dims, de, sizeof de);
	int64_t sxe[4] = { s3[0], s3[2], s3[1], 0 };
	memcpy(pe.sx, sxe, sizeof sxe);
	pe.lane_y = cc_dev_strides(T(c, e), pe.sy);
	if (permute_task(c, n, g3, e, &pe, "Transpose"))
		return -1;
	struct cc_pool pd = { .n = A, .c = hw, .h = D, .w = 1, .kh = ax[0].k, .kw = 1,
			      .sh = ax[0].s, .sw = 1, .pt = ax[0].pb, .pb = ax[0].pe,
			      .ho = Do, .wo = 1, .is_max = is_max, .count_include_pad = cip };
	if (pool_task(c, n, e, f, &pd))
		return -1;
	cc_dev_strides(T(c, f), sf);
	struct cc_perm pg = { .rank = 3, .lane_x = 2 };
	memcpy(pg.dims, dg, sizeof dg);
	int64_t sxg[3] = { sf[0], sf[2], sf[1] };
	memcpy(pg.sx, sxg, sizeof sxg);
	pg.lane_y = cc_dev_strides(T(c, g), pg.sy);
	if (permute_task(c, n, f, g, &pg, "Transpose"))
		return -1;
	return cc_relayout(c, n, g, out);
}

/* BatchNormalization over [N, C, D, H, W] as the 4-D one over the view
 * [N, C, D*H, W]: relayout in, lower (the 4-D lowering on the swapped
 * tensors), relayout out. */
int cc_lower_bn3d(struct cc_ctx *c, struct cc_node *n,
		  int (*lower4)(struct cc_ctx *, struct cc_node *))
{
	int xi = n->in[0];
	if (need_act(c, n, xi))
		return -1;
	const struct cc_tensor *x = T(c, xi);
	int64_t d4[4] = { x->dims[0], x->dims[1], x->dims[2] * x->dims[3], x->dims[4] };
	return cc_lower_as4d(c, n, d4, d4, lower4);
}

int cc_lower_conv3d(struct cc_ctx *c, struct cc_node *n,
		    int (*lower4)(struct cc_ctx *, struct cc_node *))
{
	int xi = n->in[0], wi = n->in[1], out = n->out[0];
	if (need_act(c, n, xi))
		return -1;
	if (n->q_x_scale > 0)
		return NODE_FAIL(c, n, "an int8 3-D Conv is not supported yet");
	if (n->res_in)
		return NODE_FAIL(c, n, "a 3-D Conv with a fused residual is not supported yet");
	const struct cc_tensor *x = T(c, xi), *w = T(c, wi);
	struct axis ax[3];
	if (geom3(c, n, x, w->dims + 2, 0, ax))
		return -1;
	/* (cc_tensor_new may move the tensor table: x and w are not used after it) */
	int64_t N = x->dims[0], Ci = x->dims[1], D = x->dims[2], H = x->dims[3], W = x->dims[4];
	int64_t KD = ax[0].k, Do = ax[0].o, Co = w->dims[0];
	int wrank = w->rank;
	int64_t wdims[CC_MAX_RANK];
	memcpy(wdims, w->dims, sizeof wdims);
	int64_t G = cc_attr_int(n, "group", 1);
	if (w->dims[2] != KD || G < 1 || w->dims[1] * G != Ci)
		return NODE_FAIL(c, n, "weights [%lld, %lld, %lld, ...] do not fit %lld input "
				       "channels in %lld groups with a depth kernel of %lld",
				 (long long)w->dims[0], (long long)w->dims[1],
				 (long long)w->dims[2], (long long)Ci, (long long)G, (long long)KD);
	/* zero-pad D: xp [N, Ci, Dp, H, W] (a block grid copy, kern_pad.c) */
	int xp = xi;
	int64_t Dp = D + ax[0].pb + ax[0].pe;
	if (Dp != D) {
		int64_t dp[5] = { N, Ci, Dp, H, W };
		xp = cc_tensor_new(c, n->name, "dpad", 5, dp);
		if (xp < 0)
			return NODE_FAIL(c, n, "out of memory");
		/* as the grid [N*Ci][D][H*W16/16] of 32-byte blocks: each depth
		 * slice is one contiguous run (long DMA bursts, not one per row) */
		int64_t hb = H * ((W + 15) / 16);
		struct cc_pad pd = { .rank = 3, .chan_axis = -1, .mode = CC_PAD_CONSTANT,
				     .xcnt = { N * Ci, D, hb }, .ycnt = { N * Ci, Dp, hb },
				     .before = { 0, ax[0].pb, 0 } };
		struct task *t = cc_output_task(c, n, xp);
		if (!t)
			return -1;
		snprintf(t->op_type, sizeof t->op_type, "Pad");
		char msg[256];
		if (cc_gen_pad(c->cfg, &pd, &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		cc_one_in_one_out(c, t, xi, xp);
	}
	/* the depth im2col X'[n, d, ci, kd, h, w] = xp[n, ci, d*sd + kd*dd, h, w]:
	 * one permute whose input strides step the depth by sd and dd */
	int64_t d6[6] = { N, Do, Ci, KD, H, W };
	int x6 = cc_tensor_new(c, n->name, "im2col", 6, d6);
	if (x6 < 0)
		return NODE_FAIL(c, n, "out of memory");
	int64_t sp[CC_MAX_RANK];
	cc_dev_strides(T(c, xp), sp);
	struct cc_perm pm = { .rank = 6, .lane_x = 5 };
	memcpy(pm.dims, d6, sizeof d6);
	int64_t sx6[6] = { sp[0], ax[0].s * sp[2], sp[1], ax[0].d * sp[2], sp[3], sp[4] };
	memcpy(pm.sx, sx6, sizeof sx6);
	pm.lane_y = cc_dev_strides(T(c, x6), pm.sy);
	if (permute_task(c, n, xp, x6, &pm, "Im2colD"))
		return -1;
	/* ...which is the 4-D [N*Do, Ci*KD, H, W] in row-major order */
	int64_t dx4[4] = { N * Do, Ci * KD, H, W }, dy4[4] = { N * Do, Co, ax[1].o, ax[2].o };
	int x4 = cc_tensor_new(c, n->name, "in4d", 4, dx4);
	int y4 = x4 < 0 ? -1 : cc_tensor_new(c, n->name, "out4d", 4, dy4);
	if (y4 < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_relayout(c, n, x6, x4))
		return -1;
	/* the 2-D conv: the node's tensors swapped for the 4-D views, the
	 * weights viewed as [Co, Ci/g*KD, kh, kw], the attributes as 2-D */
	int64_t ks[2] = { ax[1].k, ax[2].k }, st[2] = { ax[1].s, ax[2].s };
	int64_t dl[2] = { ax[1].d, ax[2].d }, pads[4] = { ax[1].pb, ax[2].pb, ax[1].pe, ax[2].pe };
	struct cc_attr at[5] = {
		{ .name = "kernel_shape", .type = CC_ATTR_INTS, .ints = ks, .n = 2 },
		{ .name = "strides", .type = CC_ATTR_INTS, .ints = st, .n = 2 },
		{ .name = "dilations", .type = CC_ATTR_INTS, .ints = dl, .n = 2 },
		{ .name = "pads", .type = CC_ATTR_INTS, .ints = pads, .n = 4 },
		{ .name = "group", .type = CC_ATTR_INT, .i = G },
	};
	struct cc_attr *attrs = n->attrs;
	int nattrs = n->nattrs;
	int64_t w4[4] = { Co, wdims[1] * KD, wdims[3], wdims[4] };
	n->attrs = at;
	n->nattrs = 5;
	n->in[0] = x4;
	n->out[0] = y4;
	T(c, wi)->rank = 4;
	memcpy(T(c, wi)->dims, w4, sizeof w4);
	int rc = lower4(c, n);
	/* (the tensor table may have moved: T() again) */
	T(c, wi)->rank = wrank;
	memcpy(T(c, wi)->dims, wdims, sizeof wdims);
	n->attrs = attrs;
	n->nattrs = nattrs;
	n->in[0] = xi;
	n->out[0] = out;
	if (rc)
		return -1;
	/* [N*Do, Co, Ho, Wo] (NC1HWC0, lanes: Co) -> [N, Co, Do, Ho, Wo] (padded
	 * ND, lanes: Wo) */
	int64_t sy[CC_MAX_RANK];
	cc_dev_strides(T(c, y4), sy);
	const struct cc_tensor *y = T(c, out);
	struct cc_perm po = { .rank = 5, .lane_x = 1 };
	memcpy(po.dims, y->dims, 5 * sizeof po.dims[0]);
	int64_t sxo[5] = { Do * sy[0], sy[1], sy[0], sy[2], sy[3] };
	memcpy(po.sx, sxo, sizeof sxo);
	po.lane_y = cc_dev_strides(y, po.sy);
	return permute_task(c, n, y4, out, &po, "Transpose");
}

/* ---- ConvTranspose over [N, C, D, H, W] ----------------------------------
 *
 * As the 2-D one (lower_conv.c): a stride-1 Conv3d over the input with s - 1
 * zeros inserted along each axis, padded d*(k-1) - pads (+ output_padding at
 * the end), with the weights flipped along the three axes and transposed
 * per group.  The zeros: along H and W by the 2-D ZeroInsert kernel on the
 * view [N, C*D, H, W]; along D by a zero fill of the padded-ND result and
 * one permute placing every input depth slice at its sd-th slot.  Constant
 * weights are flipped at compile time; weights that are graph inputs by
 * one permute on the device, from the NC1HWC0 view [Ci, Co, KD*kh, kw]
 * (the lane: Co) to the padded ND [Co, Ci, KD, kh, kw] (the lane: kw), the
 * three taps walked backwards. */

/* floor(a / 2) for a of either sign */
static int64_t half_floor(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

/* Node n's transposed-conv window per axis (D, H, W): kernel (kernel_shape
 * or the weights), strides, dilations, pads, output_padding (in o's
 * place until the output size is known), and the output size. */
static int geomt3(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		  const struct cc_tensor *w, struct axis *ax, int64_t *op)
{
	if (attrs3(c, n, w->dims + 2, ax, op))
		return -1;
	const struct cc_attr *ap = cc_attr_find(n, "auto_pad");
	const char *mode = ap && ap->s ? ap->s : "NOTSET";
	const struct cc_attr *os = cc_attr_find(n, "output_shape");
	if (os && (os->type != CC_ATTR_INTS || os->n != 3))
		return NODE_FAIL(c, n, "output_shape must have 3 values for a rank-5 input");
	for (int i = 0; i < 3; i++) {
		struct axis *v = &ax[i];
		if (v->k < 1 || v->s < 1 || v->d < 1 || op[i] < 0)
			return NODE_FAIL(c, n, "bad kernel, strides, dilations or output_padding");
		int64_t in = x->dims[2 + i];
		/* the output before any padding is taken off */
		int64_t full = v->s * (in - 1) + op[i] + (v->k - 1) * v->d + 1, o = -1;
		if (os)
			o = os->ints[i];
		else if (!strncmp(mode, "SAME", 4))
			o = in * v->s;
		else if (!strcmp(mode, "VALID"))
			v->pb = v->pe = 0;
		if (o >= 0) {
			int64_t t = full - o;
			v->pb = !strcmp(mode, "SAME_UPPER") ? half_floor(t) : t - half_floor(t);
			v->pe = t - v->pb;
		}
		v->o = full - v->pb - v->pe;
		if (v->o < 1)
			return NODE_FAIL(c, n, "the output would be empty");
	}
	return 0;
}

/* x [N, C, D, H, W] with s - 1 zeros inserted along each axis: the tensor
 * (x itself when every stride is 1), or -1. */
static int zero_insert3(struct cc_ctx *c, struct cc_node *n, int xi, const struct axis *ax)
{
	const struct cc_tensor *x = T(c, xi);
	int64_t N = x->dims[0], C = x->dims[1], D = x->dims[2], H = x->dims[3], W = x->dims[4];
	int64_t Hz = (H - 1) * ax[1].s + 1, Wz = (W - 1) * ax[2].s + 1, Dz = (D - 1) * ax[0].s + 1;
	char msg[256];
	int cur = xi;
	if (ax[1].s > 1 || ax[2].s > 1) { /* H, W: the 2-D kernel on [N, C*D, H, W] */
		int64_t d4[4] = { N, C * D, H, W }, z4[4] = { N, C * D, Hz, Wz };
		int64_t d5[5] = { N, C, D, Hz, Wz };
		int a = cc_tensor_new(c, n->name, "zi_in", 4, d4);
		int b = a < 0 ? -1 : cc_tensor_new(c, n->name, "zi_out", 4, z4);
		int e = b < 0 ? -1 : cc_tensor_new(c, n->name, "zi_hw", 5, d5);
		if (e < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, xi, a))
			return -1;
		struct task *t = cc_output_task(c, n, b);
		if (!t)
			return -1;
		snprintf(t->op_type, sizeof t->op_type, "ZeroInsert");
		if (cc_gen_zero_insert(c->cfg, N * ((C * D + 15) / 16), H, W, ax[1].s, ax[2].s,
				       &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		cc_one_in_one_out(c, t, a, b);
		if (cc_relayout(c, n, b, e))
			return -1;
		cur = e;
	}
	if (ax[0].s == 1)
		return cur;
	/* D: zero every depth slice of the result, then one permute puts the
	 * input's slices at every sd-th */
	int64_t dz[5] = { N, C, Dz, Hz, Wz };
	int z = cc_tensor_new(c, n->name, "zi_d", 5, dz);
	if (z < 0 || cc_ws_place(c, z))
		return NODE_FAIL(c, n, "out of memory");
	int64_t slab = Hz * ((Wz + 15) / 16); /* blocks of one depth slice */
	struct task *t = cc_task_new(c, n->name, "ZeroFill");
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_zero_runs(c->cfg, 0, N * C * Dz, slab, slab, &t->prog, &t->block_dim, msg,
			     sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, z);
	cc_io_dev(c, t, 1, z);
	int64_t sx[CC_MAX_RANK];
	struct cc_perm pm = { .rank = 5, .lane_x = 4, .lane_y = 4 };
	cc_dev_strides(T(c, cur), sx);
	cc_dev_strides(T(c, z), pm.sy);
	for (int q = 0; q < 5; q++) {
		pm.dims[q] = T(c, cur)->dims[q];
		pm.sx[q] = sx[q];
	}
	pm.sy[2] *= ax[0].s;
	t = cc_task_new(c, n->name, "ZeroInsert");
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_permute(c->cfg, &pm, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, cur, z);
	return z;
}

/* The transposed conv's weights as a Conv3d's [Co, Ci/g, KD, kh, kw],
 * flipped along the taps: a new constant, or (one group) a permute on the
 * device.  The tensor, or -1. */
static int flipped_weights(struct cc_ctx *c, struct cc_node *n, int wi, int64_t G)
{
	const struct cc_tensor *w = T(c, wi);
	int64_t Ci = w->dims[0], opg = w->dims[1], KD = w->dims[2], kh = w->dims[3];
	int64_t kw = w->dims[4], cpg = Ci / G, Co = opg * G, kk = KD * kh * kw;
	int64_t d5[5] = { Co, cpg, KD, kh, kw };
	if (w->data) {
		float *f = cc_const_floats(c, n, wi);
		if (!f)
			return -1;
		int ti = cc_tensor_new(c, n->name, "wflip", 5, d5);
		float *ft = ti < 0 ? NULL : malloc((size_t)(Co * cpg * kk) * sizeof *ft);
		if (!ft) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		for (int64_t co = 0; co < Co; co++)
			for (int64_t i = 0; i < cpg; i++)
				for (int64_t t = 0; t < kk; t++)
					ft[(co * cpg + i) * kk + t] =
						f[((co / opg * cpg + i) * opg + co % opg) * kk + kk - 1 - t];
		free(f);
		struct cc_tensor *wt = T(c, ti);
		wt->dtype = CC_F32;
		wt->data = ft;
		wt->nbytes = (size_t)(Co * cpg * kk) * sizeof *ft;
		return ti;
	}
	if (G != 1)
		return NODE_FAIL(c, n, "grouped convolution with weights that are not constants "
				       "is not supported yet");
	if (c->dev[wi].where != W_WS)
		return NODE_FAIL(c, n, "weights '%s' that are not constants must be float "
				       "activations", w->name);
	/* [Ci, Co, KD*kh, kw] NC1HWC0 (lane Co) -> [Co, Ci, KD, kh, kw] ND (lane kw) */
	int64_t d4[4] = { Ci, Co, KD * kh, kw };
	int w4 = cc_tensor_new(c, n->name, "w4d", 4, d4);
	int wf = w4 < 0 ? -1 : cc_tensor_new(c, n->name, "wflip", 5, d5);
	if (wf < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_relayout(c, n, wi, w4))
		return -1;
	int64_t st[CC_MAX_RANK];
	cc_dev_strides(T(c, w4), st); /* Ci, Co (per 16), row, column */
	struct cc_perm pm = { .rank = 5, .lane_x = 0 };
	memcpy(pm.dims, d5, sizeof d5);
	int64_t sx[5] = { st[1], st[0], -kh * st[2], -st[2], -st[3] };
	memcpy(pm.sx, sx, sizeof sx);
	pm.x0 = (KD * kh - 1) * st[2] + (kw - 1) * st[3];
	pm.lane_y = cc_dev_strides(T(c, wf), pm.sy);
	struct task *t = cc_output_task(c, n, wf);
	if (!t)
		return -1;
	snprintf(t->op_type, sizeof t->op_type, "TransData");
	char msg[256];
	if (cc_gen_permute(c->cfg, &pm, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, w4, wf);
	return wf;
}

int cc_lower_convt3d(struct cc_ctx *c, struct cc_node *n,
		     int (*lower4)(struct cc_ctx *, struct cc_node *))
{
	int xi = n->in[0], wi = n->in[1];
	if (need_act(c, n, xi))
		return -1;
	const struct cc_tensor *x = T(c, xi), *w = T(c, wi);
	struct axis ax[3];
	int64_t op[3];
	if (geomt3(c, n, x, w, ax, op))
		return -1;
	int64_t G = cc_attr_int(n, "group", 1), Ci = x->dims[1];
	if (G < 1 || Ci % G || w->dims[0] != Ci)
		return NODE_FAIL(c, n, "weights [%lld, %lld, ...] do not fit %lld input channels in "
				       "%lld groups", (long long)w->dims[0], (long long)w->dims[1],
				 (long long)Ci, (long long)G);
	/* the equivalent conv's pads */
	int64_t ks[3], dl[3], pads[6], one[3] = { 1, 1, 1 };
	for (int i = 0; i < 3; i++) {
		ks[i] = ax[i].k;
		dl[i] = ax[i].d;
		pads[i] = ax[i].d * (ax[i].k - 1) - ax[i].pb;
		pads[i + 3] = ax[i].d * (ax[i].k - 1) - ax[i].pe + op[i];
		if (pads[i] < 0 || pads[i + 3] < 0)
			return NODE_FAIL(c, n, "pads larger than the dilated kernel (a cropped "
					       "output) are not supported yet");
	}
	int zi = zero_insert3(c, n, xi, ax);
	int wf = zi < 0 ? -1 : flipped_weights(c, n, wi, G);
	if (wf < 0)
		return -1;
	struct cc_attr at[5] = {
		{ .name = "kernel_shape", .type = CC_ATTR_INTS, .ints = ks, .n = 3 },
		{ .name = "strides", .type = CC_ATTR_INTS, .ints = one, .n = 3 },
		{ .name = "dilations", .type = CC_ATTR_INTS, .ints = dl, .n = 3 },
		{ .name = "pads", .type = CC_ATTR_INTS, .ints = pads, .n = 6 },
		{ .name = "group", .type = CC_ATTR_INT, .i = G },
	};
	struct cc_attr *attrs = n->attrs;
	int nattrs = n->nattrs;
	n->attrs = at;
	n->nattrs = 5;
	n->in[0] = zi;
	n->in[1] = wf;
	int rc = cc_lower_conv3d(c, n, lower4);
	n->attrs = attrs;
	n->nattrs = nattrs;
	n->in[0] = xi;
	n->in[1] = wi;
	return rc;
}
