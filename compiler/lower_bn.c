/* lower_bn.c: BatchNormalization (inference) not folded into a Conv, a
 * per-channel affine map y = k x + b over NC1HWC0: its [2][C16] table
 * computed here from constant parameters, or on the device by two vector
 * chains when they are computed (graph inputs); 1-D and 3-D forms run as
 * the 2-D one (cc_lower_1d, lower_conv3d.c).  One family per file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"

/* The affine task of node n: its [2][C16] table (k, then b) in the weights
 * at off (tab < 0) or in the workspace tensor tab. */
static int bn_affine_task(struct cc_ctx *c, struct cc_node *n, int tab, int64_t off)
{
	int xi = n->in[0], out = n->out[0];
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	char op[64] = "BatchNormalization";
	if (n->fused[0]) {
		strncat(op, "+", sizeof op - strlen(op) - 1);
		strncat(op, n->fused, sizeof op - strlen(op) - 1);
	}
	struct task *t = cc_task_new(c, n->name, op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	const struct cc_tensor *x = T(c, xi);
	char msg[256];
	if (cc_gen_affine(c->cfg, x->dims[0], x->dims[1], x->dims[2], x->dims[3],
			  c->dev[xi].view.c1s, c->dev[out].view.c1s, (enum cc_act)n->act, n->act_lo, n->act_hi, &t->prog, &t->block_dim, msg,
			  sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, xi);
	if (tab >= 0)
		cc_arg_tensor(c, t, tab);
	else
		t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 0, xi);
	cc_io_dev(c, t, 1, out);
	t->flops = 2 * (uint64_t)cc_tensor_numel(T(c, xi));
	return 0;
}

/* ---- the table computed at run time ----------------------------------- */

/* One chain task of the BatchNormalization table: inputs ins[0..ch->nin-1]
 * (a negative one: the mask weights at mask_off; a workspace scratch: tab),
 * the result into the scratch tab at byte offset at.  The chain runs over
 * whole 256-byte repeats, so it also writes past its [C16] row: the table
 * rows are written in order and the scratch has a repeat of slack. */
static int bn_chain_task(struct cc_ctx *c, struct cc_node *n, const char *what,
			 const struct cc_vchain *ch, const int *ins, int64_t mask_off, int tab,
			 int64_t at, int64_t elems)
{
	char name[300];
	snprintf(name, sizeof name, "%s#%s", n->name, what);
	struct task *t = cc_task_new(c, name, "BatchNormalization");
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	char msg[256];
	if (cc_gen_vchain(c->cfg, ch, elems, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	for (int i = 0; i < ch->nin; i++) {
		if (ins[i] < 0) {
			t->argt[t->nargs] = -1;
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, mask_off, 0 };
			continue;
		}
		cc_arg_tensor(c, t, ins[i]);
		if (ins[i] != tab)
			cc_io_dev(c, t, 0, ins[i]);
	}
	cc_arg_tensor(c, t, tab);
	t->args[t->nargs - 1].value += at;
	t->flops = (uint64_t)elems * (uint64_t)ch->nsteps;
	return 0;
}

static void vstep(struct cc_vchain *ch, enum cc_vop op, int a, int b, float scalar)
{
	ch->step[ch->nsteps++] = (struct cc_vstep){ op, a, b, scalar };
}

/* Clamp slot a into the finite fp16 range (a new slot; its index returned):
 * finite fp16 values pass unchanged, while inf and the NaN of a garbage
 * padding lane (the simulator's max keeps the scalar then) become finite,
 * so that multiplying by the mask's zeros gives zeros. */
static int clamp_f16(struct cc_vchain *ch, int a)
{
	vstep(ch, CC_V_MAXS, a, 0, -65504.0f);
	vstep(ch, CC_V_MINS, ch->nin + ch->nsteps - 1, 0, 65504.0f);
	return ch->nin + ch->nsteps - 1;
}

/* BatchNormalization (inference) whose scale, bias, mean or var are graph
 * inputs or computed: k = scale / sqrt(var + eps) and b = bias - mean * k
 * by two element-wise chains (in fp32, rounded once) over the [C] vectors
 * into a [2][C16] fp16 scratch, the table cc_gen_affine reads, then the
 * affine task with that scratch as its parameters.  The vectors' padding
 * lanes may hold anything (the edge casts leave them), so the chains
 * multiply by a constant mask (1 for the C channels, 0 past them) after
 * clamping: the table's padding is 0 and y's padding channels stay 0. */
static int lower_bn_dynamic(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0];
	struct cc_tensor *x = T(c, xi);
	if (cc_attr_int(n, "training_mode", 0) ||
	    (n->nout > 1 && n->out[1] >= 0 && cc_tensor_uses(&c->g, n->out[1])) ||
	    (n->nout > 2 && n->out[2] >= 0 && cc_tensor_uses(&c->g, n->out[2])))
		return NODE_FAIL(c, n, "BatchNormalization in training mode (batch statistics, "
				       "running mean and var outputs) is not supported yet");
	int64_t C = x->dims[1], c16 = cc_pad16(C);
	if (n->nin < 5)
		return NODE_FAIL(c, n, "scale, bias, mean and var are missing");
	int p[4];
	for (int k = 0; k < 4; k++) {
		p[k] = n->in[k + 1];
		struct cc_tensor *v = p[k] < 0 ? NULL : T(c, p[k]);
		if (!v || v->rank != 1 || v->dims[0] != C)
			return NODE_FAIL(c, n, "scale, bias, mean and var that are not [%lld] vectors "
					       "are not supported yet", (long long)C);
		if (cc_act_input(c, n, p[k])) /* a constant one: laid out as an activation */
			return -1;
		if (c->dev[p[k]].where != W_WS && c->dev[p[k]].where != W_WEIGHT)
			return NODE_FAIL(c, n, "a %s parameter '%s' is not supported yet",
					 cc_dtype_name(v->dtype), v->name);
	}
	/* the chains run whole repeats of 128 lanes: the mask covers them */
	int64_t lanes = (c16 + 127) / 128 * 128;
	uint16_t *m = calloc((size_t)lanes, 2);
	if (!m)
		return NODE_FAIL(c, n, "out of memory");
	for (int64_t i = 0; i < C; i++)
		m[i] = dv_f32_to_f16(1.0f);
	int64_t moff = cc_weight_add(c, m, (uint64_t)lanes * 2);
	free(m);
	int tab = moff < 0 ? -1 : cc_scratch_new(c, n->name, (uint64_t)(c16 * 2 + lanes * 2));
	if (tab < 0)
		return NODE_FAIL(c, n, "out of memory");
	float eps = cc_attr_float(n, "epsilon", 1e-5f);

	/* k = clamp(scale) * min(rsqrt(max(var, 0) + eps), 65504) * mask */
	struct cc_vchain ck = { .nin = 3, .f32 = 1 };
	vstep(&ck, CC_V_MAXS, 1, 0, 0.0f);
	vstep(&ck, CC_V_ADDS, 3, 0, eps);
	vstep(&ck, CC_V_RSQRT, 4, 0, 0);
	vstep(&ck, CC_V_MINS, 5, 0, 65504.0f); /* var + eps = 0: inf */
	int sc = clamp_f16(&ck, 0);
	vstep(&ck, CC_V_MUL, sc, 6, 0);
	vstep(&ck, CC_V_MUL, ck.nin + ck.nsteps - 1, 2, 0);
	int ink[3] = { p[0], p[3], -1 };
	if (bn_chain_task(c, n, "scale", &ck, ink, moff, tab, 0, c16))
		return -1;
	/* b = (clamp(bias) - clamp(mean) * k) * mask, k from the table's row 0 */
	struct cc_vchain cb = { .nin = 4, .f32 = 1 };
	int mean = clamp_f16(&cb, 1);
	vstep(&cb, CC_V_MUL, mean, 2, 0);
	int mk = cb.nin + cb.nsteps - 1;
	int bias = clamp_f16(&cb, 0);
	vstep(&cb, CC_V_SUB, bias, mk, 0);
	vstep(&cb, CC_V_MUL, cb.nin + cb.nsteps - 1, 3, 0);
	int inb[4] = { p[1], p[2], tab, -1 };
	if (bn_chain_task(c, n, "shift", &cb, inb, moff, tab, c16 * 2, c16))
		return -1;

	return bn_affine_task(c, n, tab, 0);
}

/* BatchNormalization not folded into a Conv: a per-channel affine map. */
int lower_bn(struct cc_ctx *c, struct cc_node *n)
{
	if (T(c, n->in[0])->rank == 5)
		return cc_lower_bn3d(c, n, lower_bn); /* lower_conv3d.c */
	int xi = n->in[0];
	struct cc_tensor *x = T(c, xi);
	if (x->rank == 3 && c->dev[xi].where == W_WS)
		return cc_lower_1d(c, n, lower_bn);
	if (x->rank != 4 || c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "BatchNormalization other than on a 4-D activation is not "
				       "supported yet");
	int64_t C = x->dims[1], c16 = cc_pad16(C);
	for (int k = 1; k < 5 && k < n->nin; k++)
		if (n->in[k] >= 0 && !T(c, n->in[k])->data)
			return lower_bn_dynamic(c, n); /* the table on the device */
	float *v[4];
	for (int k = 0; k < 4; k++) {
		v[k] = n->nin > k + 1 ? cc_const_floats(c, n, n->in[k + 1]) : NULL;
		if (!v[k] || cc_tensor_numel(T(c, n->in[k + 1])) != C) {
			for (int j = 0; j <= k; j++)
				free(v[j]);
			return NODE_FAIL(c, n, "scale, bias, mean and var that are not constants of "
					       "%lld values are not supported yet", (long long)C);
		}
	}
	float eps = cc_attr_float(n, "epsilon", 1e-5f);
	uint16_t *h = calloc((size_t)(2 * c16), 2);
	if (!h) {
		for (int k = 0; k < 4; k++)
			free(v[k]);
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int64_t i = 0; i < C; i++) {
		double k = v[0][i] / sqrt((double)v[3][i] + eps);
		h[i] = dv_f32_to_f16((float)k);
		h[c16 + i] = dv_f32_to_f16((float)(v[1][i] - v[2][i] * k));
	}
	int64_t off = cc_weight_add(c, h, (uint64_t)(2 * c16 * 2));
	free(h);
	for (int k = 0; k < 4; k++)
		free(v[k]);
	if (off < 0)
		return NODE_FAIL(c, n, "out of memory");
	return bn_affine_task(c, n, -1, off);
}
