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
 * before the element-wise fusion (which would otherwise take the Add). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
