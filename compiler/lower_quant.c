/* lower_quant.c: int8 convolutions (pass_qdq.c marks them) and ONNX's
 * QuantizeLinear / DequantizeLinear on activations.
 *
 * An int8 Conv is two tasks: a quantize kernel (kern_quant.c) turns x into
 * int8 NC1HWC0 (C0 = 32) in a scratch tensor, and the conv kernel runs the
 * cube in int8 (twice the MACs per step of fp16, half the bytes of x and
 * w), dequantizing each output channel by s_x * s_w[c] as results leave
 * L0C; bias, residual and activation follow in fp16 as in the fp16 kernel.
 * This is ATC's AscendQuant -> Conv2D(int8) -> AscendDequant with the
 * dequantization fused into the convolution's output path.  The integer
 * weights come back from the fp32 constant exactly: the pass folded the
 * DequantizeLinear into q * s[c] (and BatchNormalization folding multiplied
 * weights and scales by the same factor), so w / s[c] rounds to q. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

float cc_q8_readers(struct cc_ctx *c, const struct cc_node *n, int t, int *fp16)
{
	float s = 0;
	*fp16 = T(c, t)->is_output;
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *u = &c->g.n[i];
		if (u->dead || u == n)
			continue;
		for (int k = 0; k < u->nin; k++) {
			if (u->in[k] != t)
				continue;
			/* an int8 conv's residual read as int8 counts as its input */
			float us = k == 0 ? u->q_x_scale
					  : k == u->res_in && u->q_x_scale > 0 ? u->q_r_scale : 0;
			if (us > 0 && !strcmp(u->op, "Conv") && (!s || us == s))
				s = us;
			else if (us > 0)
				return -1; /* two scales: each conv quantizes for itself */
			else
				*fp16 = 1;
		}
	}
	return s;
}

int cc_q8_slice(struct cc_ctx *c, int t, int64_t b0, int64_t cnt)
{
	const struct dev_tensor *d = &c->dev[t];
	int64_t img = cdiv(d->c, 32) * d->h * d->w * 32, sc = d->q8 - 1;
	int64_t dims[1] = { img * cnt / 2 };
	int v = cc_tensor_new(c, T(c, (int)sc)->name, "b", 1, dims);
	if (v < 0)
		return -1;
	cc_view_at(c, (int)sc, v, (uint64_t)(b0 * img), 0);
	return v;
}

/* For a batch slice (an L2-fused chain), the int8 scratch is the full
 * tensor's, planned by the first slice, whose readers decide it; each
 * slice writes its images of it, and readers outside the chain read it
 * whole. */
int cc_q8_plan(struct cc_ctx *c, const struct cc_node *n, int out, struct cc_conv *cv)
{
	int fp16;
	if (cv->groups != 1 || cv->x_c1 || cv->y_n1)
		return -1;
	int full = c->dev[out].slice_of ? c->dev[out].slice_of - 1 : out;
	float s;
	if (full != out && c->dev[full].q8) { /* a later slice */
		if (!c->dev[out].q8)
			return -1;
		s = c->dev[full].q8_scale;
		cc_q8_readers(c, n, full, &fp16);
		cv->y_form = fp16 ? CC_CONV_Y_F16_S8 : CC_CONV_Y_S8;
		cv->q8_inv_scale = 1.0f / s;
		return c->dev[out].q8 - 1;
	}
	if (c->dev[out].q8)
		return -1;
	s = cc_q8_readers(c, n, full, &fp16);
	float inv = s > 0 ? 1.0f / s : 0;
	if (!(s > 0) || !(inv >= 1.0f / 1024 && inv <= 32768.0f)) /* kern_quant.c's fp16 range */
		return -1;
	int64_t N = T(c, full)->dims[0];
	uint64_t bytes = (uint64_t)(N * ((cv->cout + 31) / 32) * cc_conv_ho(cv) *
				    cc_conv_wo(cv) * 32);
	int sc = cc_scratch_new(c, T(c, full)->name, bytes);
	if (sc < 0) {
		NODE_FAIL(c, n, "out of memory");
		return -2;
	}
	c->dev[full].q8 = sc + 1;
	c->dev[full].q8_scale = s;
	if (full != out) {
		int v = cc_q8_slice(c, full, c->dev[out].slice_b0, cv->n);
		if (v < 0) {
			NODE_FAIL(c, n, "out of memory");
			return -2;
		}
		c->dev[out].q8 = v + 1;
		c->dev[out].q8_scale = s;
		sc = v;
	}
	cv->y_form = fp16 ? CC_CONV_Y_F16_S8 : CC_CONV_Y_S8;
	cv->q8_inv_scale = inv;
	return sc;
}

/* Tensor ti (fp16 NC1HWC0) as int8 NC1HWC0 (C0 = 32) at scale s, for node
 * n: the scratch its producer's output path writes (cc_q8_plan) when it
 * has that scale, else one a quantize task (named after n, with suffix)
 * writes now, which later readers at that scale reuse.  Returns the
 * scratch, or -1 (reported). */
static int q8_form(struct cc_ctx *c, struct cc_node *n, int ti, float s, const char *suffix)
{
	struct dev_tensor *d = &c->dev[ti];
	if (d->q8 && d->q8_scale == s)
		return d->q8 - 1;
	if (!dev_5hd(d))
		return NODE_FAIL(c, n, "'%s' read as int8 is not a 4-D activation", T(c, ti)->name);
	uint64_t qbytes = (uint64_t)(d->n * cdiv(d->c, 32) * d->h * d->w * 32);
	int sc = cc_scratch_new(c, n->name, qbytes);
	d = &c->dev[ti]; /* (the new scratch may have moved the table) */
	char name[300], msg[256];
	snprintf(name, sizeof name, "%s#%s", n->name, suffix);
	struct task *t = sc < 0 ? NULL : cc_task_new(c, name, "AscendQuant");
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_quant_c0(c->cfg, d->n, d->c, d->h * d->w, 1.0f / s, &t->prog, &t->block_dim,
			    msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, ti);
	cc_arg_tensor(c, t, sc);
	cc_io_dev(c, t, 0, ti);
	cc_io_add(t, 1, sc, ti, CC_I8, CC_FMT_NC1HWC0);
	t->flops = (uint64_t)(d->n * d->c * d->h * d->w);
	/* other int8 readers at this scale reuse it */
	if (!d->q8) {
		d->q8 = sc + 1;
		d->q8_scale = s;
	}
	return sc;
}

/* ATC's RequantFusionPass: when only the int8 form of the output is written
 * and no clip follows, the output's 1 / s_y is folded into the dequant
 * scales, the bias and the residual's scale, so that the drain computes
 * y / s_y and needs no pass to scale it (CC_CONV_Y_S8_FOLDED).  Not when a
 * folded value would leave fp16's range, nor with an fp16 residual (added
 * as it is, in y's units). */
static int q8_fold(const struct cc_conv *cv, const float *bias, int64_t nb)
{
	if (cv->y_form != CC_CONV_Y_S8 || cv->act == CC_ACT_CLIP ||
	    cv->r_form == CC_CONV_R_F16) /* (an fp16 residual is in y's units) */
		return 0;
	float inv = cv->q8_inv_scale;
	for (int64_t i = 0; i < nb; i++)
		if (!(fabsf(bias[i] * inv) <= 60000.0f))
			return 0;
	float r = cv->r_scale * inv;
	return cv->r_form != CC_CONV_R_S8 || (r >= 1.0f / 16384 && r <= 60000.0f);
}

int cc_conv_int8_tasks(struct cc_ctx *c, struct cc_node *n, int xi, int wi, int bi, int ri,
		       int out, const struct cc_conv *cv0, const float *w)
{
	struct cc_conv cv = *cv0;
	if (cv.x_form != CC_CONV_X_F16) /* (cc_conv_c04_input keeps int8 convs' inputs) */
		return NODE_FAIL(c, n, "an int8 convolution of a small-channel input is not "
				       "supported");
	cv.x_form = CC_CONV_X_S8;
	int64_t per = cv.cin * cv.kh * cv.kw, c16 = cc_pad16(cv.cout);
	uint64_t wb = cc_conv_weight_bytes(&cv);

	/* x (and a residual read as int8) as int8 NC1HWC0 (C0 = 32) */
	int sc = q8_form(c, n, xi, n->q_x_scale, "quant");
	int r8 = ri >= 0 && n->q_r_scale > 0 ? q8_form(c, n, ri, n->q_r_scale, "quant_r") : -1;
	if (sc < 0 || (ri >= 0 && n->q_r_scale > 0 && r8 < 0))
		return -1;
	if (r8 >= 0) {
		cv.r_form = CC_CONV_R_S8;
		cv.r_scale = n->q_r_scale;
	}
	if (cc_ws_place(c, out))
		return -1;
	int y8 = cc_q8_plan(c, n, out, &cv);
	if (y8 == -2)
		return -1;

	int8_t *wq = malloc((size_t)(cv.cout * per)), *wl = calloc(1, wb ? wb : 1);
	float *deq = calloc((size_t)c16, sizeof *deq), *bf = NULL;
	uint16_t *bh = calloc((size_t)c16, 2);
	int64_t woff = -1, doff = -1, boff = -1;
	if (!wq || !wl || !deq || !bh)
		goto oom;
	if (bi >= 0 && !(bf = cc_const_floats(c, n, bi)))
		goto fail;
	/* the output scale folded in (requantization), or 1 */
	int folded = q8_fold(&cv, bf, bi >= 0 ? cv.cout : 0);
	float fold = folded ? cv.q8_inv_scale : 1.0f;
	if (folded) {
		cv.y_form = CC_CONV_Y_S8_FOLDED;
		cv.r_scale *= fold;
		cv.q8_inv_scale = 1.0f;
	}
	for (int64_t co = 0; co < cv.cout; co++) {
		float s = n->q_w_scale[co];
		for (int64_t j = 0; j < per; j++) {
			float v = s != 0.0f ? nearbyintf(w[co * per + j] / s) : 0.0f;
			wq[co * per + j] = (int8_t)(v < -128.0f ? -128 : v > 127.0f ? 127 : v);
		}
		deq[co] = n->q_x_scale * s * fold;
	}
	cc_conv_layout_weights_s8(&cv, wq, wl);
	woff = cc_weight_add(c, wl, wb);
	doff = woff < 0 ? -1 : cc_weight_add(c, deq, (uint64_t)c16 * sizeof *deq);
	if (doff < 0)
		goto oom;
	if (bf) {
		for (int64_t co = 0; co < cv.cout; co++)
			bf[co] *= fold;
		dv_f32_to_f16_n(bf, bh, (size_t)cv.cout);
		if ((boff = cc_weight_add(c, bh, (uint64_t)c16 * 2)) < 0)
			goto oom;
	}
	free(wq);
	free(wl);
	free(deq);
	free(bh);
	free(bf);
	if (folded)
		cc_log(&c->log, "  '%s': requantization folded into its dequant scales (1/%g)",
		       n->name, (double)(1.0f / fold));

	/* the convolution */
	int64_t ho = cc_conv_ho(&cv), wo = cc_conv_wo(&cv);
	struct cc_conv_task d = {
		.op = "Conv",
		.x = { sc, xi, CC_I8, CC_FMT_NC1HWC0 },
		.w = { -1, wi, CC_I8, CC_FMT_FRACTAL_Z },
		.w_off = woff,
		.bias = bi,
		.b_off = boff,
		.r = { -1, -1, CC_F16, CC_FMT_ND }, /* none */
		.deq_off = doff,
		.y = out,
		.y8 = y8,
		.flops = 2 * (uint64_t)(cv.n * cv.cout * ho * wo) * (uint64_t)per,
		.bytes = wb + (uint64_t)c16 * 4 + (bi >= 0 ? (uint64_t)c16 * 2 : 0),
	};
	if (r8 >= 0) /* the residual as int8, or in its own layout */
		d.r = (struct task_io){ r8, ri, CC_I8, CC_FMT_NC1HWC0 };
	else if (ri >= 0)
		d.r = (struct task_io){ ri, ri, CC_F16, dev_format(&c->dev[ri]) };
	if (ri >= 0)
		d.flops += (uint64_t)(cv.n * cv.cout * ho * wo);
	return cc_conv_task(c, n, &cv, &d);
oom:
	NODE_FAIL(c, n, "out of memory");
fail:
	free(wq);
	free(wl);
	free(deq);
	free(bh);
	free(bf);
	return -1;
}

/* ---- QuantizeLinear / DequantizeLinear on activations ---------------------- */

static int int_const(struct cc_ctx *c, int ti, int64_t *v)
{
	const struct cc_tensor *t = T(c, ti);
	if (!t->data || cc_tensor_numel(t) != 1)
		return -1;
	switch (t->dtype) {
	case CC_I8:
		*v = *(const int8_t *)t->data;
		return 0;
	case CC_U8:
		*v = *(const uint8_t *)t->data;
		return 0;
	case CC_I32:
		*v = *(const int32_t *)t->data;
		return 0;
	default:
		return -1;
	}
}

int infer_qlinear(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin < 2 || n->in[1] < 0)
		return NODE_FAIL(c, n, "needs x and a scale");
	const struct cc_tensor *x = T(c, n->in[0]);
	enum cc_dtype dt = CC_F32;
	if (!strcmp(n->op, "QuantizeLinear"))
		dt = n->nin > 2 && n->in[2] >= 0 ? T(c, n->in[2])->dtype : CC_U8;
	if (dt != CC_F32 && dt != CC_U8 && dt != CC_I8)
		return NODE_FAIL(c, n, "quantization to %s is not supported yet", cc_dtype_name(dt));
	return cc_set_shape(T(c, n->out[0]), dt, x->rank, x->dims) ? NODE_FAIL(c, n, "bad shape")
								   : 0;
}

int lower_qlinear(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	const struct cc_tensor *s = T(c, n->in[1]);
	if (!s->data || s->dtype != CC_F32)
		return NODE_FAIL(c, n, "a scale that is not a float32 constant is not supported yet");
	if (cc_tensor_numel(s) != 1)
		return NODE_FAIL(c, n, "per-axis quantization of an activation is not supported yet");
	struct cc_qlinear q = { 0 };
	q.mode = !strcmp(n->op, "QuantizeLinear") ? CC_QL_QUANT : CC_QL_DEQUANT;
	/* a DequantizeLinear on a float input: a Q/DQ pair pass_qdq.c merged */
	if (q.mode == CC_QL_DEQUANT && T(c, xi)->dtype == CC_F32)
		q.mode = CC_QL_QDQ;
	q.scale = *(const float *)s->data;
	enum cc_dtype qt = q.mode == CC_QL_QUANT ? T(c, out)->dtype : T(c, xi)->dtype;
	if (q.mode == CC_QL_QDQ) /* the pair's integer type: its zero point's */
		qt = n->nin > 2 && n->in[2] >= 0 ? T(c, n->in[2])->dtype : CC_U8;
	if (n->nin > 2 && n->in[2] >= 0 && int_const(c, n->in[2], &q.zero_point))
		return NODE_FAIL(c, n, "a zero point that is not a scalar constant is not "
				       "supported yet");
	if (qt == CC_I32 && q.mode == CC_QL_DEQUANT)
		return NODE_FAIL(c, n, "dequantizing an int32 activation is not supported yet");
	q.qmin = qt == CC_I8 ? INT8_MIN : 0;
	q.qmax = qt == CC_I8 ? INT8_MAX : UINT8_MAX;
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	struct task *t = cc_output_task(c, n, out);
	if (!t)
		return -1;
	if (q.mode == CC_QL_QDQ)
		snprintf(t->op_type, sizeof t->op_type, "QuantizeLinear+DequantizeLinear");
	char msg[256];
	if (cc_gen_qlinear(c->cfg, &q, dev_elems(&c->dev[xi]), &t->prog, &t->block_dim, msg,
			   sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	t->flops = (uint64_t)cc_tensor_numel(T(c, xi)) * 4;
	return 0;
}

/* A node's precision and why: int8 (QDQ), fp32 (pass_precision.c) or fp16. */
static const char *prec_of(const struct cc_node *n, const char **why)
{
	if (n->q_x_scale > 0) {
		*why = n->q_r_scale > 0 ? "quantized input, weights and residual (QDQ; the "
					  "residual read as int8)"
					: "quantized input and weights (QDQ)";
		return "int8";
	}
	*why = n->prec_note[0] ? n->prec_note : n->q_note[0] ? n->q_note : "the default, force_fp16";
	if (n->q_note[0] && !n->prec_note[0])
		*why = n->q_note;
	return n->fp32 ? "fp32" : "fp16";
}

void cc_precision_json(struct cc_ctx *c, FILE *f)
{
	int k = 0;
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *n = &c->g.n[i];
		if (n->dead)
			continue;
		const char *why, *p = prec_of(n, &why);
		fprintf(f, "%s{\"node\": ", k++ ? ", " : "");
		sim_json_str(f, n->name);
		fprintf(f, ", \"op\": ");
		sim_json_str(f, n->op);
		fprintf(f, ", \"precision\": \"%s\", \"reason\": ", p);
		sim_json_str(f, why);
		fprintf(f, "}");
	}
}

void cc_precision_text(struct cc_ctx *c, FILE *f)
{
	int n8 = 0, n16 = 0, n32 = 0, noted = 0;
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *n = &c->g.n[i];
		if (n->dead)
			continue;
		n8 += n->q_x_scale > 0;
		n32 += n->fp32;
		n16 += !(n->q_x_scale > 0) && !n->fp32;
		noted += n->q_note[0] != 0 || n->prec_note[0] != 0;
	}
	if (!n8 && !noted)
		return; /* fp16 throughout, the default: nothing to say */
	fprintf(f, "  precision: %d nodes int8, %d fp32, %d fp16\n", n8, n32, n16);
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *n = &c->g.n[i];
		const char *why, *p = prec_of(n, &why);
		if (!n->dead && (n->q_note[0] || n->prec_note[0]) && !(n->q_x_scale > 0))
			fprintf(f, "    %s (%s) %s: %s\n", n->name, n->op, p, why);
	}
}
