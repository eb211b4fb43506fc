/* pass_fuse_eltwise.c: chains of element-wise nodes become one vector
 * kernel.  A node joins the node that produced its input when that input
 * has no other reader and is not a graph output: the intermediate tensor
 * then never leaves the UB.  Element-wise here: the unary activations (Erf,
 * Tanh and a fused Gelu too), Pow with a constant scalar exponent and
 * Add/Sub/Mul/Div with one constant scalar operand; a chain may also start
 * with Add/Sub/Mul/Div of two activations of the same shape (a residual
 * Add followed by its Relu is one kernel, one pass over memory).  Runs
 * after shape inference (the fused nodes' shapes are no longer computed). */
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "ops.h"
#include "passes.h"

#define MAX_CHAIN 6 /* nodes per kernel: keeps the chain's UB slots few */

/* Integer results wrap as their type does (lower_logic.c's kernel), which
 * the fp16 chain does not: only float nodes join chains. */
static int float_out(const struct cc_graph *g, const struct cc_node *n)
{
	if (n->nout < 1 || n->out[0] < 0)
		return 0;
	enum cc_dtype dt = g->t[n->out[0]].dtype;
	return dt == CC_F32 || dt == CC_F16;
}

static int chainable(const struct cc_graph *g, const struct cc_node *n, int *x)
{
	if (!float_out(g, n))
		return 0;
	if (cc_op_has(n->op, CC_P_UNARY)) {
		*x = n->in[0];
		return 1;
	}
	if (!strcmp(n->op, "Pow")) { /* a constant scalar exponent only */
		if (n->nin != 2 || n->in[1] < 0 || !g->t[n->in[1]].data ||
		    cc_tensor_numel(&g->t[n->in[1]]) != 1 || g->t[n->in[0]].data)
			return 0;
		*x = n->in[0];
		return 1;
	}
	if (!cc_op_has(n->op, CC_P_ARITH))
		return 0;
	if (n->nin != 2 || n->in[0] < 0 || n->in[1] < 0)
		return 0;
	const struct cc_tensor *a = &g->t[n->in[0]], *b = &g->t[n->in[1]];
	int sa = a->data && cc_tensor_numel(a) == 1, sb = b->data && cc_tensor_numel(b) == 1;
	if (sa == sb)
		return 0;
	*x = sb ? n->in[0] : n->in[1];
	return 1;
}

/* Add/Sub/Mul/Div of two non-constant tensors of the output's shape: it
 * can only start a chain (the chain kernel has two inputs then). */
static int binary_head(const struct cc_graph *g, const struct cc_node *n)
{
	if (!cc_op_has(n->op, CC_P_ARITH) || n->nin != 2 || n->nout < 1 || n->chain_prev ||
	    !float_out(g, n))
		return 0;
	for (int k = 0; k < 2; k++) {
		if (n->in[k] < 0 || g->t[n->in[k]].data)
			return 0;
		const struct cc_tensor *a = &g->t[n->in[k]], *y = &g->t[n->out[0]];
		if (a->rank != y->rank)
			return 0;
		for (int d = 0; d < a->rank; d++)
			if (a->dims[d] != y->dims[d])
				return 0;
	}
	return 1;
}

/* At most how many vector steps lower_eltwise.c's eltwise_steps gives node
 * n (ops.def's steps; n is a chain member): a chain must stay within
 * CC_MAX_VSTEPS (kernels.h) of them. */
static int steps_of(const struct cc_node *n)
{
	const struct cc_op_info *e = cc_op_find(n->op);
	return e ? e->steps : 1;
}

int cc_pass_fuse_eltwise(struct cc_graph *g, struct cc_pass_log *log, char *err,
			 size_t errlen)
{
	int fused = 0, kernels = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		int x;
		if (n->dead || !chainable(g, n, &x) || x < 0)
			continue;
		int p = g->t[x].producer, px;
		if (p < 0 || g->n[p].dead ||
		    !(chainable(g, &g->n[p], &px) || binary_head(g, &g->n[p])) ||
		    cc_sole_consumer(g, x) != i || g->t[x].is_output)
			continue;
		int len = 1, steps = steps_of(n) + steps_of(&g->n[p]);
		for (int k = p; g->n[k].chain_prev; k = g->n[k].chain_prev - 1) {
			len++;
			steps += steps_of(&g->n[g->n[k].chain_prev - 1]);
		}
		if (len + 1 > MAX_CHAIN || steps > CC_MAX_VSTEPS)
			continue;
		if (!g->n[p].chain_prev)
			kernels++;
		n->chain_prev = p + 1;
		g->n[p].dead = 1;
		/* the chain's ops in the order they run, for the report */
		char names[sizeof n->fused] = "";
		cc_strlcat(names, sizeof names, g->n[p].fused);
		if (names[0])
			cc_strlcat(names, sizeof names, "+");
		cc_strlcat(names, sizeof names, g->n[p].op);
		memcpy(n->fused, names, sizeof names);
		fused++;
	}
	cc_log(log, "  fuse_eltwise: %d element-wise nodes fused into the next (%d chains)",
	       fused, kernels);
	return fused;
}
