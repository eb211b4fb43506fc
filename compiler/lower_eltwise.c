/* lower_eltwise.c: element-wise ops: shape inference for broadcasting and
 * variadic ops, and the lowering of unary ops, vector chains, Clip, Pow,
 * binary ops (same shape, row broadcast, N-D broadcast) and Sum/Mean/Max/Min.
 * One family per file; split out of compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"
#include "ops.h"

int infer_broadcast(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0) || cc_need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	int rank = a->rank > b->rank ? a->rank : b->rank;
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < rank; i++) {
		int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		if (da != db && da != 1 && db != 1) {
			char sa[96], sb[96];
			cc_shape_str(a, sa, sizeof sa);
			cc_shape_str(b, sb, sizeof sb);
			return NODE_FAIL(c, n, "shapes %s and %s do not broadcast", sa, sb);
		}
		d[i] = da == 1 ? db : da;
	}
	return cc_set_shape(T(c, n->out[0]), a->dtype, rank, d);
}

/* Sum/Max/Min/Mean: numpy broadcasting over every input. */
int infer_variadic(struct cc_ctx *c, struct cc_node *n)
{
	int rank = 0;
	int64_t d[CC_MAX_RANK];
	if (n->nin < 1)
		return NODE_FAIL(c, n, "no inputs");
	for (int k = 0; k < n->nin; k++) {
		if (cc_need_known(c, n, k))
			return -1;
		struct cc_tensor *a = T(c, n->in[k]);
		if (a->rank > rank) { /* align what we have to the right */
			int sh = a->rank - rank;
			for (int i = rank - 1; i >= 0; i--)
				d[i + sh] = d[i];
			for (int i = 0; i < sh; i++)
				d[i] = 1;
			rank = a->rank;
		}
		for (int i = 0; i < a->rank; i++) {
			int64_t *o = &d[rank - a->rank + i], v = a->dims[i];
			if (*o != v && *o != 1 && v != 1)
				return NODE_FAIL(c, n, "input %d ('%s') does not broadcast with the others",
						 k, a->name);
			if (*o == 1)
				*o = v;
		}
	}
	return cc_set_shape(T(c, n->out[0]), T(c, n->in[0])->dtype, rank, d);
}

static int lower_eltwise(struct cc_ctx *c, struct cc_node *n);

/* max(lo, min(hi, x)) with constant bounds (eltwise_steps). */
int lower_clip(struct cc_ctx *c, struct cc_node *n)
{
	for (int k = 1; k < 3 && k < n->nin; k++)
		if (n->in[k] >= 0 && !T(c, n->in[k])->data)
			return NODE_FAIL(c, n, "bounds that are not constants are not supported yet");
	return lower_eltwise(c, n);
}

/* The vector op of a binary or variadic op of tensors (ops.def's vop):
 * Add/Sub/Mul/Div, Sum/Mean (add), Max, Min. */
static enum cc_vop binary_vop(const char *op)
{
	const struct cc_op_info *e = cc_op_find(op);
	return e && e->vop >= 0 ? (enum cc_vop)e->vop : CC_V_DIV;
}

/* The vector steps of one element-wise node, in its own slot numbering:
 * slot 0 is its input, step i writes slot i + 1.  Returns the number of
 * steps, 0 for a node that is not element-wise in this sense, -1 on error.
 * *xi receives the input that is not a constant scalar. */
static int eltwise_steps(struct cc_ctx *c, const struct cc_node *n, struct cc_vstep *s, int *xi)
{
	int ns = 0;
	const char *op = n->op;
	*xi = n->in[0];
	int vop = cc_op_has(op, CC_P_UNARY) ? cc_op_find(op)->vop : -1;
	if (vop >= 0) /* one vector op of the input (ops.def) */
		s[ns++] = (struct cc_vstep){ (enum cc_vop)vop, 0, 0, 0 };
	else if (!strcmp(op, "Neg"))
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
	else if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish")) {
		/* max(0, min(1, alpha x + beta)), times x for HardSwish */
		int sw = !strcmp(op, "HardSwish");
		float alpha = sw ? 1.0f / 6 : cc_attr_float(n, "alpha", 0.2f);
		float beta = sw ? 0.5f : cc_attr_float(n, "beta", 0.5f);
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, alpha };
		s[ns++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, beta };
		s[ns++] = (struct cc_vstep){ CC_V_MAXS, 2, 0, 0.0f };
		s[ns++] = (struct cc_vstep){ CC_V_MINS, 3, 0, 1.0f };
		if (sw)
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 4, 0 };
	} else if (!strcmp(op, "LeakyRelu")) { /* relu(x) + alpha min(x, 0) */
		s[ns++] = (struct cc_vstep){ CC_V_MINS, 0, 0, 0.0f };
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 1, 0, cc_attr_float(n, "alpha", 0.01f) };
		s[ns++] = (struct cc_vstep){ CC_V_RELU, 0, 0, 0 };
		s[ns++] = (struct cc_vstep){ CC_V_ADD, 3, 2, 0 };
	} else if (!strcmp(op, "Sigmoid")) { /* 1 / (1 + exp(-x)) */
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
		s[ns++] = (struct cc_vstep){ CC_V_EXP, 1, 0, 0 };
		s[ns++] = (struct cc_vstep){ CC_V_ADDS, 2, 0, 1.0f };
		s[ns++] = (struct cc_vstep){ CC_V_REC, 3, 0, 0 };
	} else if (!strcmp(op, "Clip")) { /* constant bounds (lower_clip's, a fused epilogue's) */
		float lo = cc_attr_float(n, "min", -65504.0f), hi = cc_attr_float(n, "max", 65504.0f);
		for (int k = 1; k < 3 && k < n->nin; k++) {
			if (n->in[k] < 0)
				continue;
			float *f = cc_const_floats(c, n, n->in[k]);
			if (!f)
				return -1;
			*(k == 1 ? &lo : &hi) = f[0];
			free(f);
		}
		cc_clip_keep_sign(&lo, &hi);
		s[ns++] = (struct cc_vstep){ CC_V_MAXS, 0, 0, lo };
		s[ns++] = (struct cc_vstep){ CC_V_MINS, 1, 0, hi };
	} else if (!strcmp(op, "Gelu")) {
		/* pass_fuse_gelu.c's node (or ONNX's): the steps torch's export
		 * computes, in its order, so fusing does not change a bit */
		const struct cc_attr *ap = cc_attr_find(n, "approximate");
		if (ap && ap->s && !strcmp(ap->s, "tanh")) {
			/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 1, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 2, 0, 0.044715f };
			s[ns++] = (struct cc_vstep){ CC_V_ADD, 0, 3, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 4, 0, 0.7978845608f };
			s[ns++] = (struct cc_vstep){ CC_V_TANH, 5, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 6, 0, 1.0f };
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 7, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 8, 0, 0.5f };
		} else if (!ap || (ap->s && !strcmp(ap->s, "none"))) {
			/* 0.5 x (1 + erf(x / sqrt(2))), the division as a multiply */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f / 1.4142135f };
			s[ns++] = (struct cc_vstep){ CC_V_ERF, 1, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 2, 0, 1.0f };
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 3, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 4, 0, 0.5f };
		} else {
			NODE_FAIL(c, n, "approximate='%s' is not supported", ap->s ? ap->s : "");
			return -1;
		}
	} else if (!strcmp(op, "Pow")) {
		/* a constant scalar exponent (lower_pow checks it) */
		float *f = cc_const_floats(c, n, n->in[1]);
		if (!f)
			return -1;
		float e = f[0];
		free(f);
		if (e == 1.0f)
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f };
		else if (e == 0.0f) { /* 1 for every finite x */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 0.0f };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, 1.0f };
		} else if (e == 2.0f || e == -2.0f || e == 3.0f || e == 4.0f) {
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 0, 0 };
			if (e == 3.0f)
				s[ns++] = (struct cc_vstep){ CC_V_MUL, 1, 0, 0 };
			else if (e == 4.0f)
				s[ns++] = (struct cc_vstep){ CC_V_MUL, 1, 1, 0 };
			else if (e == -2.0f)
				s[ns++] = (struct cc_vstep){ CC_V_REC, 1, 0, 0 };
		} else if (e == 0.5f)
			s[ns++] = (struct cc_vstep){ CC_V_SQRT, 0, 0, 0 };
		else if (e == -1.0f)
			s[ns++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
		else if (e == -0.5f)
			s[ns++] = (struct cc_vstep){ CC_V_RSQRT, 0, 0, 0 };
		else { /* exp(e ln x): defined for x > 0 only (NaN below, as ln is) */
			s[ns++] = (struct cc_vstep){ CC_V_LN, 0, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 1, 0, e };
			s[ns++] = (struct cc_vstep){ CC_V_EXP, 2, 0, 0 };
		}
	} else if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
		   !strcmp(op, "Div")) {
		/* with one constant scalar operand: an immediate of a scalar-form op */
		const struct cc_tensor *a = &c->g.t[n->in[0]], *b = &c->g.t[n->in[1]];
		int sa = a->data && cc_tensor_numel(a) == 1, sb = b->data && cc_tensor_numel(b) == 1;
		if (sa == sb)
			return 0;
		*xi = sb ? n->in[0] : n->in[1];
		float *f = cc_const_floats(c, n, sb ? n->in[1] : n->in[0]);
		if (!f)
			return -1;
		float v = f[0];
		free(f);
		if (!strcmp(op, "Add"))
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 0, 0, v };
		else if (!strcmp(op, "Mul"))
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, v };
		else if (!strcmp(op, "Sub") && sb)
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 0, 0, -v };
		else if (!strcmp(op, "Sub")) { /* v - x */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, v };
		} else if (sb) { /* x / v, as the hardware would: a multiply by 1/v */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f / v };
		} else { /* v / x */
			s[ns++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 1, 0, v };
		}
	}
	return ns;
}

/* The vector chain of node n and the element-wise nodes fused into it
 * (chain_prev links, set by the element-wise fusion pass); ins[] receives
 * its inputs.  For lower_eltwise and a MatMul's fused epilogue. */
int cc_eltwise_chain(struct cc_ctx *c, struct cc_node *n, struct cc_vchain *out, int *ins)
{
	int chain[16], len = 0;
	for (int i = (int)(n - c->g.n); i >= 0 && len < 16;
	     i = c->g.n[i].chain_prev ? c->g.n[i].chain_prev - 1 : -1)
		chain[len++] = i;
	struct cc_vchain ch = { .nin = 1 };
	int src = 0;
	ins[0] = ins[1] = -1;
	struct cc_node *head = &c->g.n[chain[len - 1]];
	if (len > 1 && head->nin == 2 && !T(c, head->in[0])->data && !T(c, head->in[1])->data) {
		/* a binary op of two activations starts the chain (see
		 * pass_fuse_eltwise.c): two inputs, its result in slot 2 */
		ch.nin = 2;
		ins[0] = head->in[0];
		ins[1] = head->in[1];
		ch.step[ch.nsteps++] = (struct cc_vstep){ binary_vop(head->op), 0, 1, 0 };
		src = 2;
		len--;
	}
	for (int k = len - 1; k >= 0; k--) {
		struct cc_node *m = &c->g.n[chain[k]];
		struct cc_vstep local[16];
		int xi, ns = eltwise_steps(c, m, local, &xi);
		if (ns < 0)
			return -1;
		if (ns == 0 || ch.nsteps + ns > CC_MAX_VSTEPS)
			return NODE_FAIL(c, m, "cannot be lowered as an element-wise chain");
		if (k == len - 1 && ch.nin == 1)
			ins[0] = xi;
		/* local slot 0 is the chain so far, local j >= 1 the result of
		 * this node's step j - 1 */
		int base = ch.nin + ch.nsteps - 1;
		for (int j = 0; j < ns; j++) {
			struct cc_vstep st = local[j];
			st.a = st.a == 0 ? src : base + st.a;
			st.b = st.b == 0 ? src : base + st.b;
			ch.step[ch.nsteps++] = st;
		}
		src = ch.nin + ch.nsteps - 1;
	}
	*out = ch;
	return 0;
}

/* Lower node n and the element-wise nodes fused into it as one vector chain. */
static int lower_eltwise(struct cc_ctx *c, struct cc_node *n)
{
	struct cc_vchain ch;
	int ins[2];
	if (cc_eltwise_chain(c, n, &ch, ins))
		return -1;
	for (int k = 0; k < ch.nin; k++)
		if (c->dev[ins[k]].where == W_NONE && cc_weight_place_act(c, n, ins[k]))
			return -1;
	return cc_run_chain(c, n, &ch, ins);
}

int lower_unary(struct cc_ctx *c, struct cc_node *n)
{
	return lower_eltwise(c, n);
}

/* Pow with a constant scalar exponent, as an element-wise chain (see
 * eltwise_steps: 2, 3, 4, -2 multiply, 0.5 / -1 / -0.5 are sqrt / 1/x /
 * rsqrt, any other value exp(y ln x), which needs x > 0). */
int lower_pow(struct cc_ctx *c, struct cc_node *n)
{
	const struct cc_tensor *y = T(c, n->in[1]);
	enum cc_dtype dx = T(c, n->in[0])->dtype;
	/* any other exponent, or an integer base: lower_logic.c's fp32 kernel */
	if (!y->data || cc_tensor_numel(y) != 1 || (dx != CC_F32 && dx != CC_F16))
		return cc_lower_pow_any(c, n);
	return lower_eltwise(c, n);
}

int cc_same_shape(const struct cc_tensor *a, const struct cc_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

/* The broadcasts CNNs and MLPs use: a row vector over an ND tensor's rows,
 * and a constant per-channel vector over an NC1HWC0 tensor.  Returns 0 when
 * lowered, 1 when the shapes are not one of these, -1 on error. */
static int bcast_binary(struct cc_ctx *c, struct cc_node *n, enum cc_vop vop)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	for (int k = 0; k < 2; k++) {
		int xi = n->in[k], vi = n->in[1 - k];
		struct cc_tensor *x = T(c, xi), *v = T(c, vi);
		if (!cc_same_shape(x, y) || c->dev[xi].where != W_WS)
			continue;
		int64_t vn = cc_tensor_numel(v);
		/* per channel: v is [C, 1, 1] or [1, C, 1, 1], constant */
		if (y->rank == 4 && v->data && vn == y->dims[1] && (vop == CC_V_ADD ||
		    vop == CC_V_MUL || (k == 0 && (vop == CC_V_SUB || vop == CC_V_DIV))) &&
		    (v->rank < 2 || v->dims[v->rank - 1] == 1)) {
			float *f = cc_const_floats(c, n, vi);
			if (!f)
				return -1;
			int64_t C = y->dims[1], c16 = cc_pad16(C);
			uint16_t *h = calloc((size_t)(2 * c16), 2);
			if (!h) {
				free(f);
				return NODE_FAIL(c, n, "out of memory");
			}
			for (int64_t i = 0; i < C; i++) {
				float sc = vop == CC_V_MUL ? f[i] : vop == CC_V_DIV ? 1.0f / f[i] : 1.0f;
				float sh = vop == CC_V_ADD ? f[i] : vop == CC_V_SUB ? -f[i] : 0.0f;
				h[i] = dv_f32_to_f16(sc);
				h[c16 + i] = dv_f32_to_f16(sh);
			}
			int64_t off = cc_weight_add(c, h, (uint64_t)(2 * c16 * 2));
			free(f);
			free(h);
			if (off < 0 || cc_ws_place(c, out))
				return NODE_FAIL(c, n, "out of memory");
			struct task *t = cc_task_new(c, n->name, n->op);
			char msg[256];
			if (!t || cc_gen_affine(c->cfg, y->dims[0], C, y->dims[2], y->dims[3], 0, 0,
						CC_ACT_NONE, 0, 0, &t->prog, &t->block_dim, msg,
						sizeof msg))
				return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
			cc_arg_tensor(c, t, xi);
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
			cc_arg_tensor(c, t, out);
			cc_io_dev(c, t, 0, xi);
			cc_io_dev(c, t, 1, out);
			return 0;
		}
		/* a row vector: every dimension of v but the last is 1 */
		int row = y->rank >= 1 && v->rank >= 1 && !c->dev[xi].nc1hwc0 &&
			  v->dims[v->rank - 1] == y->dims[y->rank - 1] &&
			  vn == y->dims[y->rank - 1];
		if (!row)
			continue;
		if (c->dev[vi].where == W_NONE && cc_weight_place_act(c, n, vi))
			return -1;
		if (cc_ws_place(c, out))
			return NODE_FAIL(c, n, "out of memory");
		struct task *t = cc_task_new(c, n->name, n->op);
		char msg[256];
		if (!t || cc_gen_rowbcast(c->cfg, vop, c->dev[xi].rows, c->dev[xi].cols, k == 1,
					  &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
		cc_arg_tensor(c, t, xi);
		cc_arg_tensor(c, t, vi);
		cc_arg_tensor(c, t, out);
		cc_io_dev(c, t, 0, xi);
		cc_io_dev(c, t, 0, vi);
		cc_io_dev(c, t, 1, out);
		t->flops = (uint64_t)cc_tensor_numel(y);
		return 0;
	}
	return 1;
}

/* A constant operand of a broadcast laid out NC1HWC0 in its own dims
 * d[4] (rank-aligned to the output's): a weight offset, or -1. */
static int64_t const_nc1hwc0(struct cc_ctx *c, struct cc_node *n, int ti, const int64_t *d)
{
	float *f = cc_const_floats(c, n, ti);
	if (!f)
		return -1;
	int64_t c1 = (d[1] + 15) / 16, hw = d[2] * d[3];
	uint16_t *h = calloc((size_t)(d[0] * c1 * hw * 16 + 16), 2);
	if (!h) {
		free(f);
		NODE_FAIL(c, n, "out of memory");
		return -1;
	}
	for (int64_t i = 0; i < d[0]; i++)
		for (int64_t ch = 0; ch < d[1]; ch++)
			for (int64_t p = 0; p < hw; p++)
				h[((i * c1 + ch / 16) * hw + p) * 16 + ch % 16] =
					dv_f32_to_f16(f[(i * d[1] + ch) * hw + p]);
	int64_t off = cc_weight_add(c, h, (uint64_t)(d[0] * c1 * hw * 16 + 16) * 2);
	free(f);
	free(h);
	if (off < 0)
		NODE_FAIL(c, n, "out of memory");
	return off;
}

/* Any numpy broadcast of two operands (kern_bcast_nd.c): both in the
 * output's layout kind (padded ND, or NC1HWC0 for a 4-D output, where a
 * constant is laid out to match). */
int cc_bcast_nd(struct cc_ctx *c, struct cc_node *n, enum cc_vop vop)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	int r = y->rank, nc = r == 4;
	if (r < 1 || r - 1 > CC_BCAST_MAX_RANK)
		return NODE_FAIL(c, n, "broadcasting at rank %d is not supported yet", r);
	struct cc_bcast bc = { .op = vop };
	int64_t yd[CC_MAX_RANK], woff[2] = { -1, -1 };
	int moved[2] = { -1, -1 }; /* operands relaid out to 4-D: the originals */
	for (int i = 0; i < r; i++)
		yd[i] = y->dims[i];
	if (nc) { /* rows [N][C1][H][W] of one block */
		bc.rank = 4;
		bc.dims[0] = yd[0];
		bc.dims[1] = (yd[1] + 15) / 16;
		bc.dims[2] = yd[2];
		bc.dims[3] = yd[3];
		bc.nb = 1;
	} else {
		bc.rank = r - 1;
		for (int i = 0; i + 1 < r; i++)
			bc.dims[i] = yd[i];
		bc.nb = cc_pad16(yd[r - 1]) / 16;
	}
	for (int k = 0; k < 2; k++) {
		int ti = n->in[k];
		struct cc_tensor *x = T(c, ti);
		int64_t a[CC_MAX_RANK];
		for (int i = 0; i < r; i++)
			a[i] = i < r - x->rank ? 1 : x->dims[i - (r - x->rank)];
		struct dev_tensor *d = &c->dev[ti];
		if (d->where == W_NONE && x->data) {
			if (nc) {
				if ((woff[k] = const_nc1hwc0(c, n, ti, a)) < 0)
					return -1;
			} else if (cc_weight_place_act(c, n, ti)) {
				return -1;
			}
		} else if (d->where != W_WS && d->where != W_WEIGHT) {
			return NODE_FAIL(c, n, "operand '%s' is not supported yet", x->name);
		} else if (nc && !d->nc1hwc0 && d->where == W_WS) {
			/* an ND activation of lower rank (a run-time scalar, a row)
			 * onto a 4-D output: laid out as the 4-D [a0..a3] first */
			int x4 = cc_tensor_new(c, n->name, k ? "operand1_4d" : "operand0_4d", 4, a);
			if (x4 < 0)
				return NODE_FAIL(c, n, "out of memory");
			if (cc_relayout(c, n, ti, x4))
				return -1;
			n->in[k] = x4; /* for the arguments below; put back after */
			moved[k] = ti;
		} else if (nc != d->nc1hwc0) {
			char s1[96], s2[96];
			cc_shape_str(x, s1, sizeof s1);
			cc_shape_str(T(c, out), s2, sizeof s2);
			return NODE_FAIL(c, n, "broadcasting a %s activation to %s (an ND layout into "
					       "NC1HWC0 or back) is not supported yet", s1, s2);
		}
		if (nc) {
			int64_t c1 = (a[1] + 15) / 16;
			bc.rs[k][3] = a[3] == 1 ? 0 : 1;
			bc.rs[k][2] = a[2] == 1 ? 0 : a[3];
			bc.rs[k][1] = a[1] == 1 ? 0 : a[2] * a[3];
			bc.rs[k][0] = a[0] == 1 ? 0 : c1 * a[2] * a[3];
			bc.lane[k] = a[1] == 1 && yd[1] != 1;
		} else {
			int64_t st = 1;
			for (int i = r - 2; i >= 0; i--) {
				bc.rs[k][i] = a[i] == 1 ? 0 : st;
				st *= a[i];
			}
			bc.lane[k] = a[r - 1] == 1 && yd[r - 1] != 1;
		}
	}
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	if (!t || cc_gen_bcast_nd(c->cfg, &bc, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	for (int k = 0; k < 2; k++) {
		int ti = n->in[k];
		if (woff[k] >= 0) {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, woff[k], 0 };
			cc_io_add(t, 0, ti, ti, CC_F16, CC_FMT_NC1HWC0);
		} else {
			cc_arg_tensor(c, t, ti);
			cc_io_dev(c, t, 0, ti);
		}
	}
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 1, out);
	t->flops = (uint64_t)cc_tensor_numel(T(c, out));
	for (int k = 0; k < 2; k++)
		if (moved[k] >= 0)
			n->in[k] = moved[k];
	return 0;
}

int lower_binary(struct cc_ctx *c, struct cc_node *n)
{
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	const char *op = n->op;
	enum cc_vop vop = binary_vop(op);
	struct cc_vchain ch = { .nin = 1 };
	enum cc_dtype dt = T(c, n->out[0])->dtype;
	if (dt != CC_F32 && dt != CC_F16) /* integers wrap as their type does */
		return cc_lower_int_arith(c, n);
	/* a constant scalar operand becomes an immediate of a scalar-form op */
	int sa = a->data && cc_tensor_numel(a) == 1, sb = b->data && cc_tensor_numel(b) == 1;
	if (sa != sb)
		return lower_eltwise(c, n);
	if (!cc_same_shape(a, b)) {
		cc_prec_fp16_only(n, "the broadcasting kernels have no fp32 mode yet");
		int r = bcast_binary(c, n, vop);
		if (r <= 0)
			return r;
		return cc_bcast_nd(c, n, vop);
	}
	for (int k = 0; k < 2; k++)
		if (c->dev[n->in[k]].where == W_NONE && cc_weight_place_act(c, n, n->in[k]))
			return -1;
	ch.nin = 2;
	ch.step[ch.nsteps++] = (struct cc_vstep){ vop, 0, 1, 0 };
	return cc_run_chain(c, n, &ch, n->in);
}

/* Sum/Max/Min/Mean of any number of inputs: one element-wise chain when
 * they all have the output's shape, a broadcast kernel for two inputs of
 * Sum/Max/Min. */
int lower_variadic(struct cc_ctx *c, struct cc_node *n)
{
	const char *op = n->op;
	enum cc_vop vop = binary_vop(op); /* Sum, Mean: add, Max, Min */
	struct cc_tensor *y = T(c, n->out[0]);
	/* integers: Max and Min choose a value (cc_need_known) */
	if (y->dtype != CC_F32 && y->dtype != CC_F16 && vop == CC_V_ADD)
		return NODE_FAIL(c, n, "%s of %s is not supported yet", op, cc_dtype_name(y->dtype));
	if (n->nin == 1)
		return lower_identity(c, n);
	int same = 1;
	for (int k = 0; k < n->nin; k++)
		same = same && n->in[k] >= 0 && cc_same_shape(T(c, n->in[k]), y);
	if (!same) {
		if (n->nin == 2 && strcmp(op, "Mean"))
			return cc_bcast_nd(c, n, vop);
		return NODE_FAIL(c, n, "%s of %d inputs that broadcast is not supported yet (2 "
				       "inputs of Sum/Max/Min are)", op, n->nin);
	}
	if (n->nin > 8)
		return NODE_FAIL(c, n, "%s of %d inputs is not supported yet (8 at most)", op,
				 n->nin);
	struct cc_vchain ch = { .nin = n->nin };
	int acc = 0;
	for (int k = 1; k < n->nin; k++) {
		ch.step[ch.nsteps++] = (struct cc_vstep){ vop, acc, k, 0 };
		acc = ch.nin + ch.nsteps - 1;
	}
	if (!strcmp(op, "Mean"))
		ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, acc, 0, 1.0f / (float)n->nin };
	for (int k = 0; k < n->nin; k++)
		if (c->dev[n->in[k]].where == W_NONE && cc_weight_place_act(c, n, n->in[k]))
			return -1;
	return cc_run_chain(c, n, &ch, n->in);
}
