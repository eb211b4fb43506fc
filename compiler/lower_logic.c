/* lower_logic.c: Cast, the comparisons (Equal, Less, ...), the logic ops
 * (Not, And, Or, Xor) and Where, with their shape inference.  One family
 * per file; split out of compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"

/* ---- integer and bool values: comparisons, logic, Where, Cast ----------
 *
 * The device holds every value as fp16 (kern_dtype.c): integers and bools
 * are exact for |v| <= 2048, bools are 0/1.  Operands that broadcast are
 * first expanded to the output's shape (cc_expand_into), then one element-wise
 * kernel (cc_gen_logic) runs over the padded layout. */

static int dev_dtype_ok(enum cc_dtype t)
{
	return t == CC_F32 || t == CC_F16 || t == CC_I32 || t == CC_I64 || t == CC_I8 ||
	       t == CC_U8 || t == CC_I16 || t == CC_U16 || t == CC_BOOL;
}

/* Input k known, of a type the device holds (float, integer or bool). */
static int need_any(struct cc_ctx *c, struct cc_node *n, int k)
{
	if (k >= n->nin || n->in[k] < 0)
		return NODE_FAIL(c, n, "input %d is missing", k);
	struct cc_tensor *t = T(c, n->in[k]);
	if (t->rank < 0)
		return NODE_FAIL(c, n, "the shape of input '%s' is unknown", t->name);
	if (!dev_dtype_ok(t->dtype))
		return NODE_FAIL(c, n, "input '%s' is %s: not supported yet (float, integer and "
				       "bool values are)", t->name, cc_dtype_name(t->dtype));
	return 0;
}

/* numpy broadcasting over every input; the output is of type dt (or, for
 * CC_UNDEFINED, input 1's: Where's x). */
static int infer_bcast_all(struct cc_ctx *c, struct cc_node *n, enum cc_dtype dt)
{
	int rank = 0;
	int64_t d[CC_MAX_RANK];
	for (int k = 0; k < n->nin; k++) {
		if (need_any(c, n, k))
			return -1;
		struct cc_tensor *x = T(c, n->in[k]);
		int r = x->rank > rank ? x->rank : rank;
		int64_t e[CC_MAX_RANK];
		for (int i = 0; i < r; i++) {
			int ia = i - (r - x->rank), ib = i - (r - rank);
			int64_t da = ia >= 0 ? x->dims[ia] : 1, db = ib >= 0 ? d[ib] : 1;
			if (da != db && da != 1 && db != 1)
				return NODE_FAIL(c, n, "input shapes do not broadcast");
			e[i] = da == 1 ? db : da;
		}
		rank = r;
		memcpy(d, e, sizeof e);
	}
	if (dt == CC_UNDEFINED)
		dt = T(c, n->in[1])->dtype;
	return cc_set_shape(T(c, n->out[0]), dt, rank, d);
}

int infer_compare(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin != (strcmp(n->op, "Not") ? 2 : 1))
		return NODE_FAIL(c, n, "%d inputs", n->nin);
	return infer_bcast_all(c, n, CC_BOOL);
}

int infer_where(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin != 3)
		return NODE_FAIL(c, n, "%d inputs", n->nin);
	return infer_bcast_all(c, n, CC_UNDEFINED);
}

int lower_logic(struct cc_ctx *c, struct cc_node *n)
{
	static const struct {
		const char *op;
		enum cc_lop l;
	} tab[] = { { "Equal", CC_L_EQ },	  { "Less", CC_L_LT },
		    { "LessOrEqual", CC_L_LE },	  { "Greater", CC_L_GT },
		    { "GreaterOrEqual", CC_L_GE }, { "Not", CC_L_NOT },
		    { "And", CC_L_AND },	  { "Or", CC_L_OR },
		    { "Xor", CC_L_XOR },	  { "Where", CC_L_WHERE } };
	struct cc_logic lg = { .op = CC_L_EQ };
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (!strcmp(n->op, tab[i].op))
			lg.op = tab[i].l;
	int ins[3];
	for (int k = 0; k < n->nin && k < 3; k++)
		if ((ins[k] = cc_operand_full(c, n, n->in[k])) < 0)
			return -1;
	return cc_logic_task(c, n, &lg, ins, n->nin);
}

/* Cast: float types are views (the device holds fp16 whatever the type);
 * to bool is x != 0; float to an integer type truncates toward zero and
 * saturates to the type's range, as does narrowing between integer types
 * (where numpy would wrap); widening integer casts and bool sources are
 * views. */
int infer_cast(struct cc_ctx *c, struct cc_node *n)
{
	if (need_any(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]), *y = T(c, n->out[0]);
	int64_t to = cc_attr_int(n, "to", 0);
	if (to == CC_F32 || to == CC_F16 || to == CC_BOOL || to == CC_I8 || to == CC_U8 ||
	    to == CC_I16 || to == CC_U16 || to == CC_I32 || to == CC_I64) {
		if ((to == CC_I16 || to == CC_U16) && y->is_output)
			return NODE_FAIL(c, n, "a %s graph output is not supported yet",
					 cc_dtype_name((enum cc_dtype)to));
		return cc_set_shape(y, (enum cc_dtype)to, x->rank, x->dims);
	}
	return NODE_FAIL(c, n, "Cast to %s is not supported yet (float32, float16, bool and "
			       "integers up to 64 bits are; float64, bfloat16, uint32 and uint64 as "
			       "a graph output)", cc_dtype_name((enum cc_dtype)to));
}

int lower_cast(struct cc_ctx *c, struct cc_node *n)
{
	enum cc_dtype from = T(c, n->in[0])->dtype, to = T(c, n->out[0])->dtype;
	int isf = from == CC_F32 || from == CC_F16;
	struct cc_logic lg = { .op = CC_L_TRUNC, .lo = -65504.0f, .hi = 65504.0f };
	switch (to) {
	case CC_BOOL:
		lg.op = CC_L_BOOL;
		break;
	case CC_I8: lg.lo = INT8_MIN, lg.hi = INT8_MAX; break;
	case CC_U8: lg.lo = 0, lg.hi = UINT8_MAX; break;
	case CC_I16: lg.lo = INT16_MIN, lg.hi = INT16_MAX; break;
	case CC_U16: lg.lo = 0; break;
	case CC_I32:
	case CC_I64: break;
	default: return cc_alias(c, n); /* to a float type */
	}
	if (from == CC_BOOL || from == to)
		return cc_alias(c, n);
	/* an integer source within the target's range needs nothing (the
	 * device's values are within int32's anyway) */
	if (!isf && lg.op == CC_L_TRUNC &&
	    (to == CC_I32 || to == CC_I64 || (from == CC_U8 && to != CC_I8) ||
	     (from == CC_I8 && to == CC_I16)))
		return cc_alias(c, n);
	int xi = n->in[0];
	if (cc_act_input(c, n, xi))
		return -1;
	if (c->dev[xi].where == W_INPUT)
		return NODE_FAIL(c, n, "input read in place is not supported yet");
	return cc_logic_task(c, n, &lg, &xi, 1);
}
