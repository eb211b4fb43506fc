/* lower_fold.c: which Transposes MatMul and Gemm read in place: their
 * operands' views take the Transpose's input with permuted strides, so
 * lower_transpose (lower_shape.c) emits nothing for such a Transpose and
 * lower_matmul.c reads through it.  A leaf both ask, calling no family. */
#include <string.h>

#include "compile_int.h"

int cc_transpose_perm(const struct cc_node *t, int rank, int64_t *perm)
{
	const struct cc_attr *a = cc_attr_find(t, "perm");
	for (int i = 0; i < rank; i++) {
		perm[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i]
									    : rank - 1 - i;
		if (perm[i] < 0 || perm[i] >= rank)
			return -1;
	}
	return 0;
}

/* Whether input k of node m may read the Transpose node tr's input in place.
 * B (and Gemm's operands) may be any view whose lane axis is one of its two
 * matrix axes.  A only when it ends up transposed: a Transpose keeping A's
 * rows in place but moving batch axes ([B,S,E] -> [S,B,E]) would make a
 * batch of tiny products, so it stays a kernel. */
static int mm_fold_ok(struct cc_ctx *c, const struct cc_node *tr, const struct cc_node *m, int k)
{
	int xi = tr->in[0];
	const struct cc_tensor *x = T(c, xi);
	int r = x->rank;
	int64_t perm[CC_MAX_RANK];
	if (r < 2 || r > 6 || r == 4 || c->dev[xi].where != W_WS || dev_5hd(&c->dev[xi]) ||
 cc_transpose_perm(tr, r, perm))
		return 0;
	int gemm = !strcmp(m->op, "Gemm");
	if (m->dead || (strcmp(m->op, "MatMul") && !gemm) || k > 1)
		return 0;
	int trans = perm[r - 2] == r - 1;
	if (!trans && perm[r - 1] != r - 1)
		return 0;
	if (gemm) {
		/* alpha may scale A: an element-wise copy of x, same strides */
		return 1;
	}
	return k == 1 || trans;
}

/* A Transpose all of whose readers are MatMul/Gemm operands that fold it
 * produces no kernel and no tensor: they read its input. */
int cc_transpose_folds(struct cc_ctx *c, const struct cc_node *tr)
{
	int y = tr->out[0], uses = 0;
	if (T(c, y)->is_output)
		return 0;
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *m = &c->g.n[i];
		if (m->dead)
			continue;
		for (int k = 0; k < m->nin; k++)
			if (m->in[k] == y) {
				if (!mm_fold_ok(c, tr, m, k))
					return 0;
				uses++;
			}
	}
	return uses > 0;
}
