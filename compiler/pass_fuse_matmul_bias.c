/* pass_fuse_matmul_bias.c: a bias Add after a MatMul fused into the MatMul's
 * output path (the kernel adds a bias row as it moves each tile out of
 * L0C), as PyTorch's Linear on a 3-D input exports: MatMul then
 * Add(bias, MatMul).  The product is then written once instead of written,
 * read back and written again.
 *
 * Pattern: a MatMul (no bias yet) whose output's only reader is an Add whose
 * other operand is a constant of N values (shape [N] or [1, ..., 1, N], N
 * the MatMul's last output dimension), in either operand order, and whose
 * result has the MatMul output's shape (the bias broadcasts along the rows
 * only).  The MatMul takes the bias as in[2] (lower_matmul reads it) and
 * the Add's output; the Add is marked dead.  Runs after shape inference and
 * before the element-wise fusion (which would otherwise take the Add).
 *
 * cc_pass_fuse_matmul_eltwise, after the element-wise fusion: a unary
 * element-wise node (or a chain pass_fuse_eltwise.c made of them, one
 * input, at least one activation among them) whose input is a MatMul's
 * or Gemm's output and its only reader
 * becomes the MatMul's epilogue: kern_matmul.c runs the chain on each
 * piece of the product in the UB, after the bias, before writing it out.
 * The steps and their fp16 roundings are the separate kernel's, so the
 * result is bit-identical, and the product never goes through memory.
 * The MatMul takes the chain's output; the chain's last node is marked
 * dead and recorded (epilogue) for the lowering to read its steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "passes.h"

/* A constant row of n values: shape [n] or [1, ..., 1, n]. */
static int bias_row(const struct cc_tensor *t, int64_t n)
{
	if (!t->data || t->rank < 1 || t->dims[t->rank - 1] != n ||
	    (t->dtype != CC_F32 && t->dtype != CC_F16))
		return 0;
	for (int i = 0; i + 1 < t->rank; i++)
		if (t->dims[i] != 1)
			return 0;
	return 1;
}

static int same_dims(const struct cc_tensor *a, const struct cc_tensor *b)
{
	if (a->rank != b->rank || a->rank < 1)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

int cc_pass_fuse_matmul_bias(struct cc_graph *g, struct cc_pass_log *log, char *err,
			     size_t errlen)
{
	int fused = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *a = &g->n[i];
		if (a->dead || strcmp(a->op, "Add") || a->nin != 2 || a->nout < 1 ||
		    a->in[0] < 0 || a->in[1] < 0)
			continue;
		int k;
		for (k = 0; k < 2; k++) {
			int p = g->t[a->in[k]].producer;
			if (p < 0)
				continue;
			const struct cc_node *m = &g->n[p];
			const struct cc_tensor *y = &g->t[a->in[k]];
			if (m->dead || strcmp(m->op, "MatMul") || m->nin != 2 || m->act ||
			    m->fused[0] || cc_sole_consumer(g, a->in[k]) != i || y->rank < 2)
				continue;
			if (bias_row(&g->t[a->in[1 - k]], y->dims[y->rank - 1]) &&
			    same_dims(y, &g->t[a->out[0]]))
				break;
		}
		if (k == 2)
			continue;
		int p = g->t[a->in[k]].producer, bias = a->in[1 - k];
		struct cc_node *m = &g->n[p];
		int *in = realloc(m->in, 3 * sizeof *in);
		if (!in) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		in[2] = bias;
		m->in = in;
		m->nin = 3;
		int y = a->out[0];
		a->dead = 1;
		m->out[0] = y;
		g->t[y].producer = p;
		cc_strlcat(m->fused, sizeof m->fused, "Add");
		fused++;
	}
	cc_log(log, "  fuse_matmul_bias: %d bias Add fused into the MatMul before", fused);
	return fused;
}

/* An element-wise node of one activation input (the chains' members, and
 * Clip with constant bounds): that input, or -1.  *act: whether it is an
 * activation function rather than arithmetic with a constant. */
static int unary_input(const struct cc_graph *g, const struct cc_node *n, int *act)
{
	*act = 1;
	if (n->nin < 1 || n->in[0] < 0 || n->nout < 1)
		return -1;
	if (cc_op_has(n->op, CC_P_UNARY))
		return n->in[0];
	if (!strcmp(n->op, "Clip")) {
		for (int k = 1; k < n->nin; k++)
			if (n->in[k] >= 0 && (!g->t[n->in[k]].data ||
					      cc_tensor_numel(&g->t[n->in[k]]) != 1))
				return -1;
		return n->in[0];
	}
	*act = 0;
	if (n->nin != 2 || n->in[1] < 0)
		return -1;
	const struct cc_tensor *a = &g->t[n->in[0]], *b = &g->t[n->in[1]];
	int sa = a->data && cc_tensor_numel(a) == 1, sb = b->data && cc_tensor_numel(b) == 1;
	if (!strcmp(n->op, "Pow"))
		return sb && !a->data ? n->in[0] : -1;
	if (!cc_op_has(n->op, CC_P_ARITH))
		return -1;
	if (sa == sb)
		return -1;
	return sb ? n->in[0] : n->in[1];
}

/* A MatMul or Gemm whose product the kernel writes as it is: no activation
 * or epilogue yet, a C that is a bias row (matmul_common adds any other C
 * in a second kernel), and an ND result (a 4-D one is relaid out after). */
static int epilogue_host(const struct cc_graph *g, const struct cc_node *m)
{
	int gemm = !strcmp(m->op, "Gemm");
	if (m->dead || (!gemm && strcmp(m->op, "MatMul")) || m->act || m->epilogue ||
	    m->res_in || m->nout < 1 || m->out[0] < 0)
		return 0;
	const struct cc_tensor *y = &g->t[m->out[0]];
	if (y->rank < 2 || y->rank == 4)
		return 0;
	if (m->nin > 2 && m->in[2] >= 0) {
		const struct cc_tensor *c = &g->t[m->in[2]];
		int64_t cnt = cc_tensor_numel(c);
		if (!c->data || (cnt != 1 && cnt != y->dims[y->rank - 1]))
			return 0;
	}
	return 1;
}

int cc_pass_fuse_matmul_eltwise(struct cc_graph *g, struct cc_pass_log *log, char *err,
				size_t errlen)
{
	/* the nodes that run: live ones and the members of their chains
	 * (dead, but their inputs are read) */
	char *runs = calloc((size_t)g->nn + 1, 1);
	if (!runs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < g->nn; i++)
		for (int k = i; !g->n[i].dead && k >= 0 && !runs[k];
		     k = g->n[k].chain_prev ? g->n[k].chain_prev - 1 : -1)
			runs[k] = 1;
	int fused = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *t = &g->n[i];
		int act, any_act;
		if (t->dead || unary_input(g, t, &any_act) < 0)
			continue;
		/* the chain's first node: every member must have one input, and
		 * one be an activation (a lone scale or offset is left to the
		 * passes that fold it into the MatMul's neighbours: the
		 * attention fusion takes the scores' scale into the Softmax) */
		int h = i, ok = 1;
		while (ok && g->n[h].chain_prev) {
			h = g->n[h].chain_prev - 1;
			ok = unary_input(g, &g->n[h], &act) >= 0;
			any_act |= act;
		}
		int x = ok && any_act ? unary_input(g, &g->n[h], &act) : -1;
		if (x < 0 || g->t[x].is_output || g->t[x].producer < 0)
			continue;
		int mi = g->t[x].producer;
		struct cc_node *m = &g->n[mi];
		if (m->out[0] != x || !epilogue_host(g, m))
			continue;
		for (int k = 0; ok && k < g->nn; k++)
			for (int j = 0; ok && runs[k] && k != h && j < g->n[k].nin; j++)
				ok = g->n[k].in[j] != x;
		if (!ok)
			continue;
		int y = t->out[0];
		m->out[0] = y;
		g->t[y].producer = mi;
		m->epilogue = i + 1;
		t->dead = 1;
		if (m->fused[0])
			cc_strlcat(m->fused, sizeof m->fused, "+");
		if (t->fused[0]) {
			cc_strlcat(m->fused, sizeof m->fused, t->fused);
			cc_strlcat(m->fused, sizeof m->fused, "+");
		}
		cc_strlcat(m->fused, sizeof m->fused, t->op);
		fused++;
	}
	free(runs);
	cc_log(log, "  fuse_matmul_eltwise: %d element-wise chains fused into the MatMul before",
	       fused);
	return fused;
}
