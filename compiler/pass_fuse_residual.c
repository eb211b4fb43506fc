/* pass_fuse_residual.c: a residual Add (ResNet's y = relu(conv(x) + r)) fused
 * into the convolution's output path, as ATC's UB fusion does: the conv's
 * drain brings the tile of r into the UB, adds it after the bias and applies
 * the Relu/Clip that followed the Add, so the conv's result is written once
 * instead of written, read back with r and written again.
 *
 * Pattern: a Conv on the cube (group 1) with no activation of its own, whose
 * output's only reader is an Add; the Add's other operand r is an activation
 * (not a constant) of exactly the output's shape (no broadcasting); the
 * Add's result may go on to a Relu or Clip that is its only reader, which
 * becomes the activation applied after the addition.  The Conv takes r as an
 * extra input (in[3], after the bias slot, which stays -1 without a bias),
 * so that every use count and the memory plan see that r is read by the
 * Conv: r must live until the Conv has run.
 *
 * Nodes are lowered in the graph's order, so r must be computed before the
 * Conv: of a ResNet downsampling block's two convs (both feeding the Add) the
 * later one takes the other's output as r.  Runs after shape inference
 * (shapes are compared) and before the element-wise fusion (which would
 * otherwise make the Add+Relu a chain of its own).
 *
 * An int8 Conv (pass_qdq.c) whose residual is a QDQ pair's output (the
 * graph quantizes the Add's input: the fake-quantization node pass_qdq.c
 * leaves for a reader that is not a Conv) per tensor, symmetric int8, takes
 * the pair's float input as r and its scale as q_r_scale: the kernel reads
 * r as int8 (the form r's producer writes for the int8 convs that read it
 * at the same scale, or a quantize task's) and dequantizes it on chip,
 * which is what DequantizeLinear(QuantizeLinear(r)) computes; r's producer
 * then need not write fp16 at all when every reader takes int8
 * (lower_quant.c).  The pair dies when nothing else reads it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "passes.h"

static int same_shape(const struct cc_tensor *a, const struct cc_tensor *b)
{
	if (a->rank != 4 || b->rank != 4)
		return 0;
	for (int d = 0; d < 4; d++)
		if (a->dims[d] != b->dims[d])
			return 0;
	return 1;
}

/* Whether the Add (node ai) may be fused into the producer of its operand k,
 * the other operand being the residual. */
static int fusable(const struct cc_graph *g, int ai, int k)
{
	const struct cc_node *a = &g->n[ai];
	int c = a->in[k], r = a->in[1 - k], p = g->t[c].producer;
	if (c == r || p < 0)
		return 0;
	const struct cc_node *conv = &g->n[p];
	if (conv->dead || strcmp(conv->op, "Conv") || cc_attr_int(conv, "group", 1) != 1 ||
	    conv->act != CC_ACT_NONE || conv->res_in || conv->nin < 2 || conv->nin > 3 ||
	    cc_sole_consumer(g, c) != ai)
		return 0;
	const struct cc_tensor *rt = &g->t[r];
	if (rt->data || (rt->dtype != CC_F32 && rt->dtype != CC_F16))
		return 0;
	/* r must exist when the Conv runs: a graph input, or computed earlier */
	if (rt->producer < 0 ? !rt->is_input : rt->producer >= p)
		return 0;
	return same_shape(rt, &g->t[c]) && same_shape(rt, &g->t[a->out[0]]);
}

/* The scale of the fake-quantization node (a QDQ pair pass_qdq.c merged:
 * DequantizeLinear on the float input, "QuantizeLinear" fused) producing r
 * when it quantizes per tensor to symmetric int8 at a scale whose
 * dequantization fp16 carries (q * s for |q| <= 128 a normal fp16 number);
 * else 0. */
static float residual_q8_scale(const struct cc_graph *g, int r)
{
	int p = g->t[r].producer;
	if (p < 0)
		return 0;
	const struct cc_node *dq = &g->n[p];
	if (dq->dead || strcmp(dq->op, "DequantizeLinear") || strcmp(dq->fused, "QuantizeLinear") ||
	    dq->nin < 3 || dq->in[0] < 0 || dq->in[1] < 0 || dq->in[2] < 0)
		return 0;
	const struct cc_tensor *x = &g->t[dq->in[0]], *s = &g->t[dq->in[1]],
			       *z = &g->t[dq->in[2]];
	if (x->data || (x->dtype != CC_F32 && x->dtype != CC_F16) || !s->data ||
	    s->dtype != CC_F32 || cc_tensor_numel(s) != 1 || !z->data || z->dtype != CC_I8 ||
	    cc_tensor_numel(z) != 1 || *(const int8_t *)z->data != 0)
		return 0;
	float sc = *(const float *)s->data;
	return sc >= 0x1p-14f && sc * 128.0f <= 65504.0f && isfinite(sc) ? sc : 0;
}

int cc_pass_fuse_residual(struct cc_graph *g, struct cc_pass_log *log, char *err,
			  size_t errlen)
{
	int fused = 0, acts = 0, r8 = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *a = &g->n[i];
		if (a->dead || strcmp(a->op, "Add") || a->nin != 2 || a->nout < 1 ||
		    a->in[0] < 0 || a->in[1] < 0)
			continue;
		int k = fusable(g, i, 0) ? 0 : fusable(g, i, 1) ? 1 : -1;
		if (k < 0)
			continue;
		int p = g->t[a->in[k]].producer, r = a->in[1 - k];
		struct cc_node *conv = &g->n[p];
		int *in = realloc(conv->in, 4 * sizeof *in);
		if (!in) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (conv->nin < 3)
			in[2] = -1; /* no bias */
		in[3] = r;
		conv->in = in;
		conv->nin = 4;
		conv->res_in = 3;
		int y = a->out[0];
		a->dead = 1;
		cc_strlcat(conv->fused, sizeof conv->fused, conv->fused[0] ? "+Add" : "Add");
		/* the activation after the Add becomes the Conv's, applied after r */
		int ai = cc_sole_consumer(g, y);
		struct cc_node *act = ai >= 0 ? &g->n[ai] : NULL;
		float lo = 0, hi = 0;
		if (act && !strcmp(act->op, "Relu")) {
			conv->act = CC_ACT_RELU;
		} else if (act && !strcmp(act->op, "Clip") && !cc_clip_bounds(g, act, &lo, &hi)) {
			conv->act = CC_ACT_CLIP;
			conv->act_lo = lo;
			conv->act_hi = hi;
		} else {
			act = NULL;
		}
		if (act) {
			act->dead = 1;
			y = act->out[0];
			cc_strlcat(conv->fused, sizeof conv->fused, "+");
			cc_strlcat(conv->fused, sizeof conv->fused, act->op);
			acts++;
		}
		conv->out[0] = y;
		g->t[y].producer = p;
		fused++;
		/* an int8 conv reads a quantized residual as int8 */
		float rs = conv->q_x_scale > 0 ? residual_q8_scale(g, r) : 0;
		if (rs > 0) {
			struct cc_node *dq = &g->n[g->t[r].producer];
			conv->in[3] = dq->in[0];
			conv->q_r_scale = rs;
			if (!cc_tensor_uses(g, r))
				dq->dead = 1;
			cc_log(log, "    %s reads its residual %s as int8 (scale %g)", conv->name,
			       g->t[dq->in[0]].name, (double)rs);
			r8++;
		}
	}
	cc_log(log, "  fuse_residual: %d Add fused into the Conv before (%d with the Relu/Clip "
		    "after)", fused, acts);
	if (r8)
		cc_log(log, "  fuse_residual: %d int8 Conv read their residual as int8", r8);
	return fused;
}
