/* pass_qdq.c: QDQ models (QuantizeLinear / DequantizeLinear pairs, the
 * ONNX form of a post-training-quantized model) to int8 convolutions and
 * matrix products.
 *
 * A QDQ model says where int8 is allowed: x -> Q -> DQ -> Conv <- DQ <- W8
 * means the Conv may compute on int8 x and int8 W, with the scales telling
 * how to get back.  The pass first folds every Q/DQ whose inputs are all
 * constants (the weights' and biases' DequantizeLinear: their fp32 values
 * are then ordinary constants), remembering, for each folded int8 weight
 * with zero points 0, its scales (one, or one per index of its axis).  Then
 * each Conv, Gemm or MatMul whose input is DQ(Q(x)) per tensor with a
 * symmetric int8 scale s_x (zero point 0 of type int8) and whose weight is
 * such an int8 constant, quantized per output channel (Conv: axis 0) or
 * column (Gemm/MatMul: N) or per tensor, runs on the cube in int8: it reads
 * x itself (the kernel quantizes it, rounding as QuantizeLinear does) and
 * records s_x and the weights' scales per output channel, which
 * BatchNormalization folding later keeps in step.  Q/DQ nodes left without
 * readers die; a pair left for other readers becomes one fake-quantization
 * node (lower_quant.c).
 *
 * A node with quantized inputs stays fp16 when the int8 kernels cannot take
 * it (grouped or depthwise convs, 1-D convs, ConvTranspose, asymmetric,
 * uint8 or per-axis activations, a transposed A): q_note says why, for the
 * compile report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "passes.h"

/* A Q/DQ node's quantization parameters. */
struct qparams {
	const float *scale;
	int64_t nscale;        /* 1: per tensor */
	int64_t zp[1];         /* per tensor: the zero point */
	const struct cc_tensor *zpt; /* NULL: absent (0, uint8) */
	enum cc_dtype qtype;   /* the integer type */
	int64_t axis;
	int zp_all_zero;
};

static int64_t int_at(const struct cc_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case CC_I8:
		return ((const int8_t *)t->data)[i];
	case CC_U8:
		return ((const uint8_t *)t->data)[i];
	case CC_I32:
		return ((const int32_t *)t->data)[i];
	default:
		return 0;
	}
}

/* 0 and *q filled when scale and zero point are constants of usable types. */
static int qparams_of(const struct cc_graph *g, const struct cc_node *n, struct qparams *q)
{
	memset(q, 0, sizeof *q);
	if (n->nin < 2 || n->in[1] < 0)
		return -1;
	const struct cc_tensor *s = &g->t[n->in[1]];
	if (!s->data || s->dtype != CC_F32 || (q->nscale = cc_tensor_numel(s)) < 1)
		return -1;
	q->scale = s->data;
	q->qtype = CC_U8;
	q->zp_all_zero = 1;
	if (n->nin > 2 && n->in[2] >= 0) {
		const struct cc_tensor *z = &g->t[n->in[2]];
		if (!z->data || (z->dtype != CC_I8 && z->dtype != CC_U8 && z->dtype != CC_I32) ||
		    cc_tensor_numel(z) != q->nscale)
			return -1;
		q->zpt = z;
		q->qtype = z->dtype;
		for (int64_t i = 0; i < q->nscale; i++)
			q->zp_all_zero &= int_at(z, i) == 0;
		q->zp[0] = int_at(z, 0);
	}
	q->axis = cc_attr_int(n, "axis", 1);
	return 0;
}

static int64_t zp_at(const struct qparams *q, int64_t c)
{
	return q->zpt ? int_at(q->zpt, q->nscale > 1 ? c : 0) : 0;
}

/* Per-axis: the channel of flat element i of x along axis; else 0. */
static int channel_fn(const struct cc_tensor *x, const struct qparams *q, int64_t *inner,
		      int64_t *dim)
{
	*inner = 1;
	*dim = 1;
	if (q->nscale == 1)
		return 0;
	int64_t axis = q->axis < 0 ? q->axis + x->rank : q->axis;
	if (axis < 0 || axis >= x->rank || x->dims[axis] != q->nscale)
		return -1;
	for (int i = (int)axis + 1; i < x->rank; i++)
		*inner *= x->dims[i];
	*dim = x->dims[axis];
	return 0;
}

int cc_fold_qdq(struct cc_graph *g, int ni)
{
	struct cc_node *n = &g->n[ni];
	int dq = !strcmp(n->op, "DequantizeLinear");
	if ((!dq && strcmp(n->op, "QuantizeLinear")) || n->nout != 1 || n->in[0] < 0)
		return 0;
	struct qparams q;
	if (qparams_of(g, n, &q))
		return 0;
	const struct cc_tensor *x = &g->t[n->in[0]];
	int64_t total = cc_tensor_numel(x), inner, dim;
	if (!x->data || total < 0 || channel_fn(x, &q, &inner, &dim))
		return 0;
	if (dq && x->dtype != CC_I8 && x->dtype != CC_U8 && x->dtype != CC_I32)
		return 0;
	if (!dq && x->dtype != CC_F32)
		return 0;
	struct cc_tensor *y = &g->t[n->out[0]];
	enum cc_dtype yt = dq ? CC_F32 : q.qtype;
	size_t es = cc_dtype_size(yt);
	void *d = malloc((size_t)(total ? total : 1) * es);
	if (!d)
		return -1;
	int64_t lo = q.qtype == CC_I8 ? INT8_MIN : 0, hi = q.qtype == CC_I8 ? INT8_MAX : UINT8_MAX;
	for (int64_t i = 0; i < total; i++) {
		int64_t c = i / inner % dim;
		float s = q.scale[q.nscale > 1 ? c : 0];
		int64_t z = zp_at(&q, c);
		if (dq) {
			((float *)d)[i] = (float)(int_at(x, i) - z) * s;
			continue;
		}
		double v = nearbyint((double)((const float *)x->data)[i] / (double)s) + (double)z;
		v = v < (double)lo ? (double)lo : v > (double)hi ? (double)hi : v;
		if (yt == CC_I8)
			((int8_t *)d)[i] = (int8_t)v;
		else
			((uint8_t *)d)[i] = (uint8_t)v;
	}
	free(y->data);
	y->dtype = yt;
	y->rank = x->rank;
	for (int i = 0; i < x->rank; i++)
		y->dims[i] = x->dims[i];
	y->data = d;
	y->nbytes = (size_t)total * es;
	y->producer = -1;
	n->dead = 1;
	return 1;
}

/* An int8 weight folded by the pass: its scales, one (per tensor) or one
 * per index of axis. */
struct wq {
	int t;      /* the fp32 constant the DequantizeLinear became */
	float *s;
	int64_t n;
	int axis;
};

static const struct wq *wq_find(const struct wq *v, int nv, int t)
{
	for (int i = 0; i < nv; i++)
		if (v[i].t == t)
			return &v[i];
	return NULL;
}

/* The producer of t when it is a live node of type op, else NULL. */
static struct cc_node *made_by(struct cc_graph *g, int t, const char *op)
{
	int p = t >= 0 ? g->t[t].producer : -1;
	if (p < 0 || g->n[p].dead || strcmp(g->n[p].op, op))
		return NULL;
	return &g->n[p];
}

/* Why the Conv n with the activation pair dq(q(x)) cannot run in int8, or
 * NULL; *sx the activation's scale. */
static const char *conv_refusal(struct cc_graph *g, const struct cc_node *n,
				const struct cc_node *dq, const struct cc_node *q,
				const struct wq *w, float *sx)
{
	struct qparams a, b;
	if (!q)
		return "its input is dequantized but not quantized in the graph";
	if (qparams_of(g, dq, &a) || qparams_of(g, q, &b))
		return "its input's scale or zero point is not a constant";
	if (a.nscale != 1 || b.nscale != 1)
		return "its input is quantized per axis";
	if (a.scale[0] != b.scale[0] || a.zp[0] != b.zp[0] || a.qtype != b.qtype)
		return "its input's QuantizeLinear and DequantizeLinear disagree";
	if (a.qtype != CC_I8)
		return "its input is quantized to uint8 (int8 needed)";
	if (a.zp[0] != 0)
		return "its input has a nonzero zero point (symmetric needed)";
	if (!(a.scale[0] > 0.0f) || !isfinite(a.scale[0]))
		return "its input's scale is not positive";
	if (!w)
		return "its weights are not a symmetric int8 DequantizeLinear";
	*sx = a.scale[0];
	if (strcmp(n->op, "Conv")) { /* Gemm, MatMul: scales along N */
		const struct cc_tensor *wt = &g->t[n->in[1]];
		int tb = !strcmp(n->op, "Gemm") && cc_attr_int(n, "transB", 0);
		if (wt->rank != 2)
			return "only 2-D constant weights run in int8";
		if (!strcmp(n->op, "Gemm") && cc_attr_int(n, "transA", 0))
			return "a transposed A (transA) runs in fp16";
		if (w->axis >= 0 && w->axis != (tb ? 0 : 1))
			return "its weights are quantized along K, not per output column";
		return NULL;
	}
	if (w->axis > 0)
		return "its weights are quantized along an axis other than the output channels";
	if (cc_attr_int(n, "group", 1) != 1)
		return "grouped and depthwise convolutions run in fp16";
	if (g->t[n->in[1]].rank != 4)
		return "only 2-D convolutions run in int8";
	return NULL;
}

int cc_pass_qdq(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int nodes = g->nn, folded = 0, convs = 0, kept = 0, removed = 0;
	struct wq *w = calloc((size_t)nodes + 1, sizeof *w);
	int nw = 0;
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* constant Q/DQ: weights, biases */
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (n->dead || !cc_op_has(n->op, CC_P_QLINEAR))
			continue;
		struct qparams q;
		int sym8 = 0;
		int xt = n->in[0];
		int axis = 0;
		if (!strcmp(n->op, "DequantizeLinear") && xt >= 0 && g->t[xt].data &&
		    g->t[xt].dtype == CC_I8 && g->t[xt].rank >= 1 && !qparams_of(g, n, &q) &&
		    q.zp_all_zero) {
			axis = (int)(q.axis < 0 ? q.axis + g->t[xt].rank : q.axis);
			sym8 = q.nscale == 1 || (axis >= 0 && axis < g->t[xt].rank &&
						 q.nscale == g->t[xt].dims[axis]);
		}
		int64_t cout = sym8 ? q.nscale : 0;
		float *s = NULL;
		if (sym8) {
			s = malloc((size_t)cout * sizeof *s);
			if (!s)
				goto oom;
			memcpy(s, q.scale, (size_t)cout * sizeof *s);
		}
		int rc = cc_fold_qdq(g, i);
		if (rc < 0) {
			free(s);
			goto oom;
		}
		if (rc == 0) {
			free(s);
			continue;
		}
		folded++;
		if (s)
			w[nw++] = (struct wq){ g->n[i].out[0], s, cout, cout > 1 ? axis : -1 };
	}
	/* Convs on DQ(Q(x)) with int8 weights */
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (n->dead || n->nin < 2 || n->in[1] < 0)
			continue;
		struct cc_node *dq = made_by(g, n->in[0], "DequantizeLinear");
		if (!dq)
			continue;
		if (!strcmp(n->op, "ConvTranspose")) {
			snprintf(n->q_note, sizeof n->q_note, "int8 %s is not supported yet: fp16 on "
				 "the dequantized values", n->op);
			kept++;
			continue;
		}
		if (!cc_op_has(n->op, CC_P_QDQ_INT8))
			continue;
		struct cc_node *q = dq->in[0] >= 0 ? made_by(g, dq->in[0], "QuantizeLinear") : NULL;
		const struct wq *wv = wq_find(w, nw, n->in[1]);
		float sx = 0;
		const char *why = conv_refusal(g, n, dq, q, wv, &sx);
		if (why) {
			snprintf(n->q_note, sizeof n->q_note, "%s", why);
			kept++;
			continue;
		}
		/* one scale per output channel (Conv: axis 0) or column (N) */
		const struct cc_tensor *wt = &g->t[n->in[1]];
		int tb = !strcmp(n->op, "Gemm") && cc_attr_int(n, "transB", 0);
		int64_t nout = !strcmp(n->op, "Conv") ? wt->dims[0] : wt->dims[tb ? 0 : 1];
		n->q_w_scale = malloc((size_t)nout * sizeof *n->q_w_scale);
		if (!n->q_w_scale)
			goto oom;
		for (int64_t c = 0; c < nout; c++)
			n->q_w_scale[c] = wv->s[wv->n > 1 ? c : 0];
		n->q_x_scale = sx;
		n->in[0] = q->in[0];
		convs++;
	}
	/* a pair left for fp16 readers (a depthwise conv, a Gemm) becomes one
	 * fake-quantization node: the DequantizeLinear reads the float input
	 * (lower_qlinear quantizes and dequantizes in one kernel) */
	int pairs = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *dq = &g->n[i];
		if (dq->dead || strcmp(dq->op, "DequantizeLinear") || dq->in[0] < 0 ||
		    !cc_tensor_uses(g, dq->out[0]))
			continue;
		struct cc_node *q = made_by(g, dq->in[0], "QuantizeLinear");
		struct qparams a, b;
		if (!q || cc_sole_consumer(g, dq->in[0]) != i || qparams_of(g, dq, &a) ||
		    qparams_of(g, q, &b) || a.nscale != 1 || b.nscale != 1 ||
		    a.scale[0] != b.scale[0] || a.zp[0] != b.zp[0] || a.qtype != b.qtype)
			continue;
		dq->in[0] = q->in[0];
		q->dead = 1;
		snprintf(dq->fused, sizeof dq->fused, "QuantizeLinear");
		pairs++;
	}
	/* Q/DQ nodes nobody reads any more */
	for (int again = 1; again;) {
		again = 0;
		for (int i = 0; i < g->nn; i++) {
			struct cc_node *n = &g->n[i];
			if (n->dead || !cc_op_has(n->op, CC_P_QLINEAR))
				continue;
			if (n->nout == 1 && !cc_tensor_uses(g, n->out[0])) {
				n->dead = 1;
				removed++;
				again = 1;
			}
		}
	}
	for (int i = 0; i < nw; i++)
		free(w[i].s);
	free(w);
	cc_log(log, "  qdq: %d constant Q/DQ folded, %d Conv/Gemm/MatMul to int8, %d Q/DQ nodes absorbed, "
		    "%d Q/DQ pairs to one fake-quantization kernel; %d nodes with quantized "
		    "inputs kept fp16", folded, convs, removed, pairs, kept);
	for (int i = 0; i < g->nn; i++)
		if (!g->n[i].dead && g->n[i].q_note[0])
			cc_log(log, "    %s stays fp16: %s", g->n[i].name, g->n[i].q_note);
	return folded + convs + removed + pairs;
oom:
	for (int i = 0; i < nw; i++)
		free(w[i].s);
	free(w);
	snprintf(err, errlen, "out of memory");
	return -1;
}
