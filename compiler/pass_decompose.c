/* pass_decompose.c: reductions the kernels do not have, written as the ops
 * they are made of before shape inference:
 *   ReduceL2(x)        = Sqrt(ReduceSum(x * x))   (F.normalize: Swin v2's
 *                                                  cosine attention)
 *   ReduceSumSquare(x) = ReduceSum(x * x)
 *   ReduceL1(x)        = ReduceSum(Abs(x))
 * The ReduceSum keeps the node's name, axes and keepdims; the new nodes are
 * named after it ("<name>/square", "<name>/sqrt").  The element-wise fusion
 * later chains the square into nothing else, so the cost is one
 * element-wise pass over x beside the reduction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

static int kind_of(const struct cc_node *n)
{
	if (n->dead || (n->domain && n->domain[0]) || n->nin < 1 || n->in[0] < 0 || n->nout != 1)
		return 0;
	return !strcmp(n->op, "ReduceL2") ? 1 : !strcmp(n->op, "ReduceSumSquare") ? 2
	       : !strcmp(n->op, "ReduceL1") ? 3 : 0;
}


int cc_pass_decompose(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int k = 0, extra = 0;
	for (int i = 0; i < g->nn; i++) {
		int kind = kind_of(&g->n[i]);
		k += kind != 0;
		extra += kind == 1 ? 2 : kind ? 1 : 0;
	}
	cc_log(log, "  decompose: %d ReduceL2/ReduceSumSquare/ReduceL1 into element-wise ops and "
		    "ReduceSum", k);
	if (!k)
		return 0;
	struct cc_node *nn = calloc((size_t)(g->nn + extra), sizeof *nn);
	if (!nn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int j = 0, made = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		int kind = kind_of(n);
		if (!kind) {
			nn[j++] = *n;
			continue;
		}
		const struct cc_tensor *x = &g->t[n->in[0]];
		char tname[512];
		snprintf(tname, sizeof tname, "%s/%s", n->name, kind == 3 ? "abs" : "square");
		int sq = cc_tensor_add(g, tname, x->dtype, -1, NULL);
		int sum = -1;
		if (sq >= 0 && kind == 1) {
			snprintf(tname, sizeof tname, "%s/sum", n->name);
			sum = cc_tensor_add(g, tname, g->t[n->in[0]].dtype, -1, NULL);
		}
		if (sq < 0 || (kind == 1 && sum < 0))
			goto oom;
		int xin = n->in[0], out = n->out[0];
		if (cc_node_make(&nn[j], n->name, kind == 3 ? "/abs" : "/square",
				kind == 3 ? "Abs" : "Mul", xin, kind == 3 ? -1 : xin, sq)) {
			cc_node_free(&nn[j]);
			goto oom;
		}
		j++;
		char *op = strdup("ReduceSum");
		if (!op)
			goto oom;
		free(n->op);
		n->op = op;
		n->in[0] = sq;
		if (kind == 1)
			n->out[0] = sum;
		nn[j++] = *n;
		if (kind == 1) {
			if (cc_node_make(&nn[j], n->name, "/sqrt", "Sqrt", sum, -1, out)) {
				cc_node_free(&nn[j]);
				goto oom;
			}
			j++;
		}
		made++;
	}
	cc_graph_set_nodes(g, nn, j); /* the old nodes and the new, in order */
	return made;
oom:
	/* nodes moved into nn stay owned by g->n as well: free only nn */
	for (int i = 0; i < j; i++) {
		int old = 0;
		for (int q = 0; q < g->nn && !old; q++)
			old = nn[i].name == g->n[q].name;
		if (!old)
			cc_node_free(&nn[i]);
	}
	free(nn);
	snprintf(err, errlen, "out of memory");
	return -1;
}
