/* lower_vchain.c: the vector chain of an element-wise node and the nodes
 * fused into it (cc_eltwise_chain), each node's steps from ops.def's vector
 * ops and its constant scalars.  A leaf shared by lower_eltwise.c and a
 * MatMul's fused epilogue (lower_matmul.c): it calls lower_util.c only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "ops.h"

/* The vector op of a binary or variadic op of tensors (ops.def's vop):
 * Add/Sub/Mul/Div, Sum/Mean (add), Max, Min. */
enum cc_vop cc_binary_vop(const char *op)
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
		ch.step[ch.nsteps++] = (struct cc_vstep){ cc_binary_vop(head->op), 0, 1, 0 };
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
