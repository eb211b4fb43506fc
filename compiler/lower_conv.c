/* lower_conv.c: the NC1HWC0 image ops: Conv, ConvTranspose, MaxPool,
 * AveragePool and GlobalAveragePool, their shape inference (windows, pads,
 * strides), and the 1-D forms lowered as 2-D (BatchNormalization: lower_bn.c).
 * One family per file; split out of compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"

static int ints_attr(const struct cc_node *n, const char *name, int64_t *v, int count,
		     int64_t dflt)
{
	const struct cc_attr *a = cc_attr_find(n, name);
	for (int i = 0; i < count; i++)
		v[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i] : dflt;
	return a && a->type == CC_ATTR_INTS ? (int)a->n : 0;
}

/* Window geometry shared by Conv and the pools: kernel (from the attribute
 * or the weights), strides, pads (with auto_pad resolved), dilations. */
struct window {
	int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, ho, wo;
};

/* A 1-D window (Conv1d, pooling over [N, C, L]): the node's attributes
 * have one value per spatial axis, and it runs as 2-D over [N, C, 1, L]
 * (cc_lower_1d).  Decided by the attributes and weights, not x, which cc_lower_1d
 * swaps for its 4-D view. */
static int is_1d(struct cc_ctx *c, const struct cc_node *n)
{
	int64_t v[1];
	if (ints_attr(n, "kernel_shape", v, 1, 0) == 1)
		return 1;
	return n->nin > 1 && n->in[1] >= 0 && (!strcmp(n->op, "Conv") ||
		!strcmp(n->op, "ConvTranspose")) && T(c, n->in[1])->rank == 3;
}

/* The spatial attribute name of node n as 2-D values (1-D: height 1,
 * pads [begin, end] -> [0, begin, 0, end]); count as ints_attr's. */
static int ints_attr2(struct cc_ctx *c, const struct cc_node *n, const char *name, int64_t *v,
		      int pads, int64_t dflt)
{
	if (!is_1d(c, n))
		return ints_attr(n, name, v, pads ? 4 : 2, dflt);
	int64_t u[2];
	int got = ints_attr(n, name, u, pads ? 2 : 1, dflt);
	if (pads) {
		v[0] = v[2] = 0;
		v[1] = u[0];
		v[3] = u[1];
	} else {
		v[0] = name[0] == 'p' || name[0] == 'o' ? 0 : 1; /* pads, output_*: 0 */
		v[1] = u[0];
	}
	return got ? 2 * got : 0;
}

/* strides, dilations and pads (top, left, bottom, right) as Conv, the
 * pools and ConvTranspose give them (1-D: one value per axis, as 2-D). */
static void strides_pads(struct cc_ctx *c, struct cc_node *n, int64_t *sh, int64_t *sw,
			 int64_t *dh, int64_t *dw, int64_t *pads)
{
	int64_t v[4];
	ints_attr2(c, n, "strides", v, 0, 1);
	*sh = v[0];
	*sw = v[1];
	ints_attr2(c, n, "dilations", v, 0, 1);
	*dh = v[0];
	*dw = v[1];
	ints_attr2(c, n, "pads", pads, 1, 0);
}

static int window_of(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		     int64_t kh, int64_t kw, int pool, struct window *wd)
{
	int64_t v[4];
	if (ints_attr2(c, n, "kernel_shape", v, 0, 0) == 2) {
		kh = v[0];
		kw = v[1];
	}
	if (kh < 1 || kw < 1)
		return NODE_FAIL(c, n, "kernel_shape is missing or not 2-D");
	wd->kh = kh;
	wd->kw = kw;
	strides_pads(c, n, &wd->sh, &wd->sw, &wd->dh, &wd->dw, v);
	wd->pt = v[0];
	wd->pl = v[1];
	wd->pb = v[2];
	wd->pr = v[3];
	int64_t H = x->rank == 3 ? 1 : x->dims[2], W = x->dims[x->rank - 1];
	const struct cc_attr *ap = cc_attr_find(n, "auto_pad");
	if (ap && ap->s && strcmp(ap->s, "NOTSET")) {
		if (!strcmp(ap->s, "VALID")) {
			wd->pt = wd->pl = wd->pb = wd->pr = 0;
		} else { /* SAME_UPPER / SAME_LOWER: output = ceil(input / stride) */
			int64_t eh = (wd->kh - 1) * wd->dh + 1, ew = (wd->kw - 1) * wd->dw + 1;
			int64_t th = ((H + wd->sh - 1) / wd->sh - 1) * wd->sh + eh - H;
			int64_t tw = ((W + wd->sw - 1) / wd->sw - 1) * wd->sw + ew - W;
			th = th > 0 ? th : 0;
			tw = tw > 0 ? tw : 0;
			int lower = !strcmp(ap->s, "SAME_LOWER");
			wd->pt = lower ? (th + 1) / 2 : th / 2;
			wd->pb = th - wd->pt;
			wd->pl = lower ? (tw + 1) / 2 : tw / 2;
			wd->pr = tw - wd->pl;
		}
	}
	if (wd->sh < 1 || wd->sw < 1 || wd->dh < 1 || wd->dw < 1 || wd->pt < 0 || wd->pl < 0 ||
	    wd->pb < 0 || wd->pr < 0)
		return NODE_FAIL(c, n, "bad strides, dilations or pads");
	int64_t eh = (wd->kh - 1) * wd->dh + 1, ew = (wd->kw - 1) * wd->dw + 1;
	int64_t nh = H + wd->pt + wd->pb - eh, nw = W + wd->pl + wd->pr - ew;
	if (nh < 0 || nw < 0)
		return NODE_FAIL(c, n, "the window is larger than the padded input");
	int ceil_mode = pool && cc_attr_int(n, "ceil_mode", 0);
	wd->ho = (ceil_mode ? (nh + wd->sh - 1) / wd->sh : nh / wd->sh) + 1;
	wd->wo = (ceil_mode ? (nw + wd->sw - 1) / wd->sw : nw / wd->sw) + 1;
	/* a last window that would start in the bottom/right padding is dropped */
	if (ceil_mode && (wd->ho - 1) * wd->sh >= H + wd->pt)
		wd->ho--;
	if (ceil_mode && (wd->wo - 1) * wd->sw >= W + wd->pl)
		wd->wo--;
	return 0;
}

/* 4-D, or 3-D ([N, C, L], run as [N, C, 1, L]: cc_lower_1d). */
static int need34(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	if (T(c, n->in[0])->rank == 3)
		return 0;
	return cc_need4(c, n);
}

/* The kernel size the weights w give (1-D: [cout, cin/g, k]). */
static void weight_window(const struct cc_tensor *w, int64_t *kh, int64_t *kw)
{
	*kh = w->rank == 3 ? 1 : w->dims[2];
	*kw = w->dims[w->rank - 1];
}

int infer_conv(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin > 0 && n->in[0] >= 0 && T(c, n->in[0])->rank == 5)
		return cc_infer_conv3d(c, n); /* lower_conv3d.c */
	if (need34(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (n->nin < 2 || n->in[1] < 0 || T(c, n->in[1])->rank != x->rank)
		return NODE_FAIL(c, n, "the weights must be a %d-D tensor", x->rank);
	struct cc_tensor *w = T(c, n->in[1]);
	struct window wd;
	int64_t kh, kw;
	weight_window(w, &kh, &kw);
	if (window_of(c, n, x, kh, kw, 0, &wd))
		return -1;
	int64_t d[4] = { x->dims[0], w->dims[0], wd.ho, wd.wo };
	if (x->rank == 3)
		d[2] = wd.wo;
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

int infer_pool(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin > 0 && n->in[0] >= 0 && T(c, n->in[0])->rank == 5)
		return cc_infer_pool3d(c, n); /* lower_conv3d.c */
	if (need34(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (x->rank == 3 && !is_1d(c, n))
		return NODE_FAIL(c, n, "kernel_shape must have one value for a 3-D input");
	struct window wd;
	if (window_of(c, n, x, 0, 0, 1, &wd))
		return -1;
	int64_t d[4] = { x->dims[0], x->dims[1], wd.ho, wd.wo };
	if (x->rank == 3)
		d[2] = wd.wo;
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

/* ConvTranspose's geometry (2-D, or 1-D as height 1): the kernel, strides,
 * dilations, output padding, the pads (from output_shape or auto_pad when
 * given: ONNX's total padding, the odd one at the end except for
 * SAME_UPPER... as the reference implementation splits it) and the output
 * size. */
struct convt {
	int64_t kh, kw, sh, sw, dh, dw, oph, opw, pt, pl, pb, pr, ho, wo;
};

static int64_t floordiv2(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

static int convt_geom(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		      const struct cc_tensor *w, struct convt *g)
{
	int64_t v[4], H = x->rank == 3 ? 1 : x->dims[2], W = x->dims[x->rank - 1];
	weight_window(w, &g->kh, &g->kw);
	if (ints_attr2(c, n, "kernel_shape", v, 0, 0) == 2) {
		g->kh = v[0];
		g->kw = v[1];
	}
	strides_pads(c, n, &g->sh, &g->sw, &g->dh, &g->dw, v);
	g->pt = v[0];
	g->pl = v[1];
	g->pb = v[2];
	g->pr = v[3];
	ints_attr2(c, n, "output_padding", v, 0, 0);
	g->oph = v[0];
	g->opw = v[1];
	if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1 ||
	    g->oph < 0 || g->opw < 0)
		return NODE_FAIL(c, n, "bad kernel, strides, dilations or output_padding");
	/* the output before any padding is taken off */
	int64_t fh = g->sh * (H - 1) + g->oph + (g->kh - 1) * g->dh + 1;
	int64_t fw = g->sw * (W - 1) + g->opw + (g->kw - 1) * g->dw + 1;
	const struct cc_attr *ap = cc_attr_find(n, "auto_pad");
	const char *mode = ap && ap->s ? ap->s : "NOTSET";
	int64_t oh = -1, ow = -1;
	if (ints_attr2(c, n, "output_shape", v, 0, 0) == 2) {
		oh = is_1d(c, n) ? 1 : v[0];
		ow = v[1];
	} else if (!strncmp(mode, "SAME", 4)) {
		oh = H * g->sh;
		ow = W * g->sw;
	} else if (!strcmp(mode, "VALID")) {
		g->pt = g->pl = g->pb = g->pr = 0;
	}
	if (oh >= 0) {
		int64_t th = fh - oh, tw = fw - ow;
		int upper = !strcmp(mode, "SAME_UPPER");
		g->pt = upper ? floordiv2(th) : th - floordiv2(th);
		g->pb = th - g->pt;
		g->pl = upper ? floordiv2(tw) : tw - floordiv2(tw);
		g->pr = tw - g->pl;
	}
	g->ho = fh - g->pt - g->pb;
	g->wo = fw - g->pl - g->pr;
	if (g->ho < 1 || g->wo < 1)
		return NODE_FAIL(c, n, "the output would be empty");
	return 0;
}

int infer_convt(struct cc_ctx *c, struct cc_node *n)
{
	if (!cc_need_known(c, n, 0) && T(c, n->in[0])->rank == 5)
		return cc_infer_conv3d(c, n); /* lower_conv3d.c */
	if (need34(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (n->nin < 2 || n->in[1] < 0 || T(c, n->in[1])->rank != x->rank)
		return NODE_FAIL(c, n, "the weights must be a %d-D tensor", x->rank);
	struct cc_tensor *w = T(c, n->in[1]);
	struct convt g;
	if (convt_geom(c, n, x, w, &g))
		return -1;
	int64_t d[4] = { x->dims[0], w->dims[1] * cc_attr_int(n, "group", 1), g.ho, g.wo };
	if (x->rank == 3)
		d[2] = g.wo;
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

int infer_gap(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need4(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t d[4] = { x->dims[0], x->dims[1], 1, 1 };
	return cc_set_shape(T(c, n->out[0]), x->dtype, 4, d);
}

/* Weights that are not constants: the device lays them out (lower_wlayout.c)
 * for one group, with a constant bias. */
static int dyn_weights(struct cc_ctx *c, struct cc_node *n, int transposed, int64_t cout,
		       int64_t cin)
{
	if (cc_attr_int(n, "group", 1) != 1)
		return NODE_FAIL(c, n, "grouped convolution with weights that are not constants "
				       "is not supported yet");
	if (n->nin > 2 && n->in[2] >= 0 && !T(c, n->in[2])->data)
		return NODE_FAIL(c, n, "a bias that is not a constant is not supported yet");
	return cc_conv_weight_fz(c, n, transposed, cout, cin);
}

/* The conv task of node n: y (out) = conv(x (xi), w) with cv's geometry, w
 * ONNX's [cout][cin/groups][kh][kw] fp32; the bias bi, the residual ri when
 * >= 0.  A grouped conv that is not depthwise is cut into slices of k
 * groups whose channels fill whole 16-channel blocks (k = 1 when a group's
 * channels are multiples of 16), each reading its channel blocks of x and
 * writing its own of y, the k groups of a slice as one block-diagonal conv
 * (k times their MACs); the slices run as one task, as ATC runs a grouped
 * conv, their tiles dealt to the cores together (cc_conv.slices), so that a
 * ResNeXt is not launch-bound on a task per slice.  When no k < groups
 * fits, one block-diagonal conv over all the channels (groups times the
 * MACs).  Weights that are not constants come laid out by the device (fz,
 * cc_conv_weight_fz; f is NULL then, one group). */
static int conv_tasks(struct cc_ctx *c, struct cc_node *n, const char *opname, int xi, int wi,
		      int fz, int bi, int ri, int out, const struct cc_conv *full, const float *f)
{
	int64_t G = full->groups;
	if (G < 1 || full->cin % G || full->cout % G)
		return NODE_FAIL(c, n, "group %lld does not divide %lld input and %lld output "
				       "channels", (long long)G, (long long)full->cin,
 (long long)full->cout);
	int64_t cpg = full->cin / G, opg = full->cout / G, k = G;
	int dw = G > 1 && G == full->cin && G == full->cout;
	for (int64_t d = 1; G > 1 && !dw && d < G; d++)
		if (G % d == 0 && d * cpg % 16 == 0 && d * opg % 16 == 0) {
			k = d;
			break;
		}
	int64_t boff = -1;
	if (bi >= 0) {
		float *bf = cc_const_floats(c, n, bi);
		if (!bf)
			return -1;
		uint16_t *bh = calloc((size_t)cc_pad16(full->cout), 2);
		if (!bh) {
			free(bf);
			return NODE_FAIL(c, n, "out of memory");
		}
		dv_f32_to_f16_n(bf, bh, (size_t)full->cout);
		boff = cc_weight_add(c, bh, (uint64_t)cc_pad16(full->cout) * 2);
		free(bf);
		free(bh);
		if (boff < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	if (cc_ws_place(c, out))
		return -1;
	int64_t ho = cc_conv_ho(full), wo = cc_conv_wo(full), S = G / k;
	struct cc_conv cv = *full;
	if (k < G) { /* the slices side by side: x's and y's whole channel blocks */
		cv.cin = k * cpg;
		cv.cout = k * opg;
		cv.groups = k;
		cv.slices = S;
		cv.x_c1 = (full->cin + 15) / 16;
		cv.y_n1 = (full->cout + 15) / 16;
	}
	/* images a stride apart inside a concat buffer (plan_concat.c): the
	 * view's argument points at its first block, the stride is the
	 * buffer's (plan_concat.c gives grouped convs no such view) */
	if (c->dev[xi].view.c1s)
		cv.x_c1 = c->dev[xi].view.c1s;
	if (c->dev[out].view.c1s)
		cv.y_n1 = c->dev[out].view.c1s;
	/* all the slices' weights, one after another (slice s at s * wb / S) */
	uint64_t wb = cc_conv_weight_bytes(&cv);
	int64_t woff = 0;
	if (fz < 0) {
		uint16_t *h = calloc(1, wb ? wb : 1);
		if (!h)
			return NODE_FAIL(c, n, "out of memory");
		cc_conv_layout_weights(&cv, f, h);
		woff = cc_weight_add(c, h, wb);
		free(h);
		if (woff < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	/* int8 convs reading y: it is also written as int8 (lower_quant.c) */
	int y8 = k == G && !dw ? cc_q8_plan(c, n, out, &cv) : -1;
	if (y8 == -2)
		return -1;
	/* depthwise weights are [C1][kh][kw][16]: the NC1HWC0 of [1, C, kh, kw] */
	struct cc_conv_task d = {
		.op = opname,
		.x = { xi, xi, CC_F16, dev_format(&c->dev[xi]) },
		.w = { fz, wi, CC_F16, dw ? CC_FMT_NC1HWC0 : CC_FMT_FRACTAL_Z },
		.w_off = woff,
		.bias = bi,
		.b_off = boff,
		.r = { ri, ri, CC_F16, ri >= 0 ? dev_format(&c->dev[ri]) : CC_FMT_ND },
		.deq_off = -1,
		.y = out,
		.y8 = y8,
		/* the MACs the cube does: a slice's block-diagonal conv, S times */
		.flops = 2 * (uint64_t)S * (uint64_t)(cv.n * cv.cout * ho * wo) *
			 (uint64_t)(cv.cin / cv.groups * cv.kh * cv.kw),
		.bytes = fz < 0 ? wb : 0, /* (cc_arg_tensor counts a workspace fz) */
	};
	if (ri >= 0) /* the addition */
		d.flops += (uint64_t)(full->n * full->cout * ho * wo);
	return cc_conv_task(c, n, &cv, &d);
}

int lower_conv(struct cc_ctx *c, struct cc_node *n)
{
	if (T(c, n->in[0])->rank == 5)
		return cc_lower_conv3d(c, n, lower_conv); /* lower_conv3d.c */
	int xi = n->in[0], wi = n->in[1], out = n->out[0];
	int bi = n->nin > 2 ? n->in[2] : -1;
	int ri = n->res_in ? n->in[n->res_in] : -1; /* pass_fuse_residual.c */
	struct cc_tensor *x = T(c, xi), *w = T(c, wi);
	if (x->rank == 3)
		return cc_lower_1d(c, n, lower_conv);
	struct window wd;
	int64_t kh, kw;
	weight_window(w, &kh, &kw);
	if (window_of(c, n, x, kh, kw, 0, &wd))
		return -1;
	if (w->dims[1] * cc_attr_int(n, "group", 1) != x->dims[1])
		return NODE_FAIL(c, n, "weights of %lld input channels per group do not fit %lld "
				       "input channels in %lld groups", (long long)w->dims[1],
				 (long long)x->dims[1], (long long)cc_attr_int(n, "group", 1));
	struct cc_conv cv = { 0 };
	cv.n = x->dims[0];
	cv.cin = x->dims[1];
	cv.h = x->dims[2];
	cv.w = x->dims[3];
	cv.cout = w->dims[0];
	cv.kh = wd.kh;
	cv.kw = wd.kw;
	cv.sh = wd.sh;
	cv.sw = wd.sw;
	cv.pt = wd.pt;
	cv.pl = wd.pl;
	cv.pb = wd.pb;
	cv.pr = wd.pr;
	cv.dh = wd.dh;
	cv.dw = wd.dw;
	cv.groups = cc_attr_int(n, "group", 1);
	cv.has_bias = bi >= 0;
	cv.act = (enum cc_act)n->act;
	cv.clip_lo = n->act_lo;
	cv.clip_hi = n->act_hi;
	cv.r_form = ri >= 0 ? CC_CONV_R_F16 : CC_CONV_R_NONE;
	/* the input was laid out for it (cc_conv_c04_input) */
	cv.x_form = dev_c04(&c->dev[xi]) ? CC_CONV_X_F16_C04 : CC_CONV_X_F16;
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	/* the kernel reads the residual in the output's own layout */
	if (ri >= 0 && (c->dev[ri].where != W_WS || !dev_5hd(&c->dev[ri])))
		return NODE_FAIL(c, n, "a residual '%s' that is not a 4-D activation is not "
				       "supported", T(c, ri)->name);
	/* pass_fuse_residual.c gives an int8 residual to int8 convs only */
	if (n->q_r_scale > 0 && (!w->data || !(n->q_x_scale > 0)))
		return NODE_FAIL(c, n, "a residual read as int8 needs an int8 convolution");
	if (!w->data) {
		int fz = dyn_weights(c, n, 0, cv.cout, cv.cin);
		return fz < 0 ? -1 : conv_tasks(c, n, "Conv", xi, wi, fz, bi, ri, out, &cv, NULL);
	}
	float *f = cc_const_floats(c, n, wi);
	if (!f)
		return -1;
	int rc = n->q_x_scale > 0 ? cc_conv_int8_tasks(c, n, xi, wi, bi, ri, out, &cv, f)
				  : conv_tasks(c, n, "Conv", xi, wi, -1, bi, ri, out, &cv, f);
	free(f);
	return rc;
}

/* ConvTranspose as a stride-1 Conv: the input with sh - 1 zero rows and
 * sw - 1 zero columns inserted (cc_gen_zero_insert, into a scratch tensor;
 * none for stride 1), padded by dh*(kh-1) - pads (+ output_padding at the
 * end) and convolved with the weights flipped in both spatial axes and
 * transposed per group ([cin][cout/g] -> [cout][cin/g]).  The scatter costs
 * a pass over the inserted tensor and the conv sh*sw times the MACs of
 * the transposed conv (it multiplies the inserted zeros). */
int lower_convt(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], wi = n->in[1], out = n->out[0];
	int bi = n->nin > 2 ? n->in[2] : -1;
	struct cc_tensor *x = T(c, xi), *w = T(c, wi);
	if (x->rank == 5) /* lower_conv3d.c: as a Conv3d */
		return cc_lower_convt3d(c, n, lower_conv);
	if (x->rank == 3)
		return cc_lower_1d(c, n, lower_convt);
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	struct convt g;
	if (convt_geom(c, n, x, w, &g))
		return -1;
	int64_t G = cc_attr_int(n, "group", 1), cin = x->dims[1], opg = w->dims[1];
	if (G < 1 || cin % G || w->dims[0] != cin)
		return NODE_FAIL(c, n, "weights [%lld, %lld, ...] do not fit %lld input channels in "
				       "%lld groups", (long long)w->dims[0], (long long)opg,
				 (long long)cin, (long long)G);
	int64_t cpg = cin / G, cout = opg * G, kh = g.kh, kw = g.kw;
	struct cc_conv cv = { 0 };
	cv.n = x->dims[0];
	cv.cin = cin;
	cv.h = (x->dims[2] - 1) * g.sh + 1;
	cv.w = (x->dims[3] - 1) * g.sw + 1;
	cv.cout = cout;
	cv.kh = kh;
	cv.kw = kw;
	cv.sh = cv.sw = 1;
	cv.dh = g.dh;
	cv.dw = g.dw;
	cv.pt = g.dh * (kh - 1) - g.pt;
	cv.pb = g.dh * (kh - 1) - g.pb + g.oph;
	cv.pl = g.dw * (kw - 1) - g.pl;
	cv.pr = g.dw * (kw - 1) - g.pr + g.opw;
	cv.groups = G;
	cv.has_bias = bi >= 0;
	cv.act = (enum cc_act)n->act;
	cv.clip_lo = n->act_lo;
	cv.clip_hi = n->act_hi;
	if (cv.pt < 0 || cv.pb < 0 || cv.pl < 0 || cv.pr < 0)
		return NODE_FAIL(c, n, "pads larger than the dilated kernel (a cropped output) are "
				       "not supported yet");
	if (cc_conv_ho(&cv) != g.ho || cc_conv_wo(&cv) != g.wo)
		return NODE_FAIL(c, n, "internal: transposed conv geometry mismatch");
	int fz = -1;
	float *f = NULL, *ft = NULL;
	if (!w->data) {
		if ((fz = dyn_weights(c, n, 1, cout, cin)) < 0)
			return -1;
		goto weights_done;
	}
	f = cc_const_floats(c, n, wi);
	if (!f)
		return -1;
	ft = malloc((size_t)(cout * cpg * kh * kw) * sizeof *ft);
	if (!ft) {
		free(f);
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int64_t co = 0; co < cout; co++)
		for (int64_t i = 0; i < cpg; i++)
			for (int64_t a = 0; a < kh; a++)
				for (int64_t b = 0; b < kw; b++)
					ft[((co * cpg + i) * kh + a) * kw + b] =
						f[(((co / opg * cpg + i) * opg + co % opg) * kh +
						   kh - 1 - a) * kw + kw - 1 - b];
	free(f);
weights_done:;
	int zi = xi;
	if (g.sh > 1 || g.sw > 1) {
		int64_t dz[4] = { cv.n, cin, cv.h, cv.w };
		zi = cc_tensor_new(c, n->name, "zeroins", 4, dz);
		struct task *t = zi < 0 ? NULL : cc_output_task(c, n, zi);
		if (!t) {
			free(ft);
			return zi < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		}
		snprintf(t->op_type, sizeof t->op_type, "ZeroInsert");
		char msg[256];
		if (cc_gen_zero_insert(c->cfg, cv.n * ((cin + 15) / 16), x->dims[2], x->dims[3], g.sh,
				       g.sw, &t->prog, &t->block_dim, msg, sizeof msg)) {
			free(ft);
			return NODE_FAIL(c, n, "%s", msg);
		}
		cc_one_in_one_out(c, t, xi, zi);
	}
	int rc = conv_tasks(c, n, "ConvTranspose", zi, wi, fz, bi, -1, out, &cv, ft);
	free(ft);
	return rc;
}

static int lower_pool_common(struct cc_ctx *c, struct cc_node *n, int global, int is_max)
{
	if (!global && T(c, n->in[0])->rank == 5)
		return cc_lower_pool3d(c, n, is_max); /* lower_conv3d.c */
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	if (n->nout > 1 && n->out[1] >= 0 && cc_tensor_uses(&c->g, n->out[1]))
		return NODE_FAIL(c, n, "the Indices output is not supported yet");
	if (x->rank == 3)
		return cc_lower_1d(c, n, is_max ? lower_maxpool : lower_avgpool);
	struct cc_pool pl = { 0 };
	pl.n = x->dims[0];
	pl.c = x->dims[1];
	pl.h = x->dims[2];
	pl.w = x->dims[3];
	pl.is_max = is_max;
	if (global) {
		pl.kh = pl.h;
		pl.kw = pl.w;
		pl.sh = pl.sw = 1;
		pl.ho = pl.wo = 1;
	} else {
		struct window wd;
		if (window_of(c, n, x, 0, 0, 1, &wd))
			return -1;
		pl.dh = wd.dh; /* kern_pool.c takes the taps dh rows, dw columns apart */
		pl.dw = wd.dw;
		pl.kh = wd.kh;
		pl.kw = wd.kw;
		pl.sh = wd.sh;
		pl.sw = wd.sw;
		pl.pt = wd.pt;
		pl.pl = wd.pl;
		pl.pb = wd.pb;
		pl.pr = wd.pr;
		pl.ho = wd.ho;
		pl.wo = wd.wo;
		pl.count_include_pad = (int)cc_attr_int(n, "count_include_pad", 0);
	}
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	struct task *t = cc_output_task(c, n, out);
	if (!t)
		return -1;
	pl.x_c1s = c->dev[xi].view.c1s; /* inside a concat buffer (plan_concat.c) */
	pl.y_c1s = c->dev[out].view.c1s;
	char msg[256];
	if (cc_gen_pool(c->cfg, &pl, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	t->flops = (uint64_t)(pl.n * pl.c * pl.ho * pl.wo * pl.kh * pl.kw);
	return 0;
}

int lower_maxpool(struct cc_ctx *c, struct cc_node *n)
{
	return lower_pool_common(c, n, 0, 1);
}

int lower_avgpool(struct cc_ctx *c, struct cc_node *n)
{
	return lower_pool_common(c, n, 0, 0);
}

int lower_gap(struct cc_ctx *c, struct cc_node *n)
{
	return lower_pool_common(c, n, 1, 0);
}

/* Whether graph input ti can be laid out as NC1HWC0 with C0 = 4 for ATC's
 * small-channel path: every live node reading it is a 2-D fp16 Conv with
 * constant weights that reads it as its x only and takes that path
 * (cc_conv_c04_ok).  Then its TransData writes the image's own bytes (8 a
 * pixel for up to 4 channels instead of 32) and those convs read them.
 * asked: --enable_small_channel=1; otherwise the path is taken only when a
 * reader has no tiling with C0 = 16 (cc_conv_has_tiling). */
int cc_conv_c04_input(struct cc_ctx *c, int ti, int asked)
{
	int needed = 0;
	const struct cc_tensor *x = T(c, ti);
	if (x->rank != 4 || x->is_output || x->dims[1] > 4)
		return 0;
	int readers = 0;
	for (int k = 0; k < c->g.nn; k++) {
		struct cc_node *n = &c->g.n[k];
		int reads = 0;
		for (int i = 0; i < n->nin; i++)
			reads |= n->in[i] == ti;
		if (n->dead || !reads)
			continue;
		readers++;
		if (strcmp(n->op, "Conv") || (n->domain && n->domain[0]) || n->in[0] != ti ||
		    n->q_x_scale > 0 || n->nin < 2 || n->in[1] < 0 || !T(c, n->in[1])->data ||
		    T(c, n->in[1])->rank != 4)
			return 0;
		for (int i = 1; i < n->nin; i++)
			if (n->in[i] == ti)
				return 0;
		const struct cc_tensor *w = T(c, n->in[1]);
		struct window wd;
		if (window_of(c, n, x, w->dims[2], w->dims[3], 0, &wd))
			return 0; /* its lowering reports the error */
		struct cc_conv cv = { .n = x->dims[0], .cin = x->dims[1], .h = x->dims[2],
				      .w = x->dims[3], .cout = w->dims[0], .kh = wd.kh, .kw = wd.kw,
				      .sh = wd.sh, .sw = wd.sw, .pt = wd.pt, .pl = wd.pl,
				      .pb = wd.pb, .pr = wd.pr, .dh = wd.dh, .dw = wd.dw,
				      .groups = cc_attr_int(n, "group", 1) };
		if (!cc_conv_c04_ok(&cv) || cv.h * cv.w % 4)
			return 0;
		needed |= !asked && !cc_conv_has_tiling(c->cfg, &cv);
	}
	return readers > 0 && (asked || needed);
}
