/* lower_eltwise.c: element-wise ops: shape inference for broadcasting and
 * variadic ops, and the lowering of unary ops and their fused chains
 * (lower_vchain.c), Clip, Pow, binary ops (same shape, row broadcast, N-D
 * broadcast; integer operands and any other Pow through one cc_gen_logic
 * kernel) and Sum/Mean/Max/Min.  One family per file; it calls the leaves
 * (lower_util.c, lower_move.c, lower_vchain.c), no other family. */
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

/* max(lo, min(hi, x)) with constant bounds (lower_vchain.c). */
int lower_clip(struct cc_ctx *c, struct cc_node *n)
{
	for (int k = 1; k < 3 && k < n->nin; k++)
		if (n->in[k] >= 0 && !T(c, n->in[k])->data)
			return NODE_FAIL(c, n, "bounds that are not constants are not supported yet");
	return lower_eltwise(c, n);
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

/* Add, Sub, Mul, Div of integer tensors: one cc_gen_logic kernel that
 * computes as the type does (wrapping; division toward zero) over the
 * operands expanded to the output's shape. */
static int lower_int_arith(struct cc_ctx *c, struct cc_node *n)
{
	enum cc_dtype dt = T(c, n->out[0])->dtype;
	if (dt != CC_I8 && dt != CC_U8 && dt != CC_I32 && dt != CC_I64)
		return NODE_FAIL(c, n, "%s of %s is not supported yet (int8, uint8, int32 and int64 "
				       "are)", n->op, cc_dtype_name(dt));
	struct cc_logic lg = { .op = !strcmp(n->op, "Add")   ? CC_L_IADD
				     : !strcmp(n->op, "Sub") ? CC_L_ISUB
				     : !strcmp(n->op, "Mul") ? CC_L_IMUL
							     : CC_L_IDIV,
			       .wrap8 = dt == CC_I8 || dt == CC_U8,
			       .sgn = dt == CC_I8 };
	int ins[2];
	for (int k = 0; k < 2; k++)
		if ((ins[k] = cc_operand_full(c, n, n->in[k])) < 0)
			return -1;
	return cc_logic_task(c, n, &lg, ins, 2);
}

/* Pow whose exponent is not one constant scalar (a tensor, broadcast or
 * not, or an input), or whose base is an integer: one cc_gen_logic kernel
 * computing C's pow in fp32 over the operands expanded to the output's
 * shape, rounded to an integer for an integer result. */
static int lower_pow_any(struct cc_ctx *c, struct cc_node *n)
{
	enum cc_dtype dt = T(c, n->out[0])->dtype;
	struct cc_logic lg = { .op = CC_L_POW, .int_out = dt != CC_F32 && dt != CC_F16 };
	int ins[2];
	for (int k = 0; k < 2; k++)
		if ((ins[k] = cc_operand_full(c, n, n->in[k])) < 0)
			return -1;
	return cc_logic_task(c, n, &lg, ins, 2);
}

/* Pow with a constant scalar exponent, as an element-wise chain (see
 * lower_vchain.c: 2, 3, 4, -2 multiply, 0.5 / -1 / -0.5 are sqrt / 1/x /
 * rsqrt, any other value exp(y ln x), which needs x > 0). */
int lower_pow(struct cc_ctx *c, struct cc_node *n)
{
	const struct cc_tensor *y = T(c, n->in[1]);
	enum cc_dtype dx = T(c, n->in[0])->dtype;
	/* any other exponent, or an integer base: lower_logic.c's fp32 kernel */
	if (!y->data || cc_tensor_numel(y) != 1 || (dx != CC_F32 && dx != CC_F16))
		return lower_pow_any(c, n);
	return lower_eltwise(c, n);
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
		int row = y->rank >= 1 && v->rank >= 1 && !dev_5hd(&c->dev[xi]) &&
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

int lower_binary(struct cc_ctx *c, struct cc_node *n)
{
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	const char *op = n->op;
	enum cc_vop vop = cc_binary_vop(op);
	struct cc_vchain ch = { .nin = 1 };
	enum cc_dtype dt = T(c, n->out[0])->dtype;
	if (dt != CC_F32 && dt != CC_F16) /* integers wrap as their type does */
		return lower_int_arith(c, n);
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
	enum cc_vop vop = cc_binary_vop(op); /* Sum, Mean: add, Max, Min */
	struct cc_tensor *y = T(c, n->out[0]);
	/* integers: Max and Min choose a value (cc_need_known) */
	if (y->dtype != CC_F32 && y->dtype != CC_F16 && vop == CC_V_ADD)
		return NODE_FAIL(c, n, "%s of %s is not supported yet", op, cc_dtype_name(y->dtype));
	if (n->nin == 1)
		return cc_alias(c, n);
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
