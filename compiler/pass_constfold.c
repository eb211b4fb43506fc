/* pass_constfold.c: constant folding, above all of the shape subgraphs
 * exporters emit (x.view(x.size(0), -1) becomes Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape).  A node folds when all its inputs are
 * constants, or it is a Shape of a tensor whose shape is known; its outputs
 * become constants and it dies.  It runs node by node inside shape
 * inference, since Shape needs the shapes inferred so far.
 *
 * Folded here: Shape, Gather (any axis, any element type), Range (integer),
 * Identity and Transpose; anything else of constants (Cast, Concat, Slice,
 * Unsqueeze/Squeeze, arithmetic, comparisons, Where, Expand, ScatterND ...)
 * by fold_eval.c. */
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "passes.h"

/* int64 values of a constant: data as int64 or int32. */
static int64_t *as_i64(const struct cc_tensor *t, int64_t *n)
{
	*n = cc_tensor_numel(t);
	if (*n < 0 || !t->data || (t->dtype != CC_I64 && t->dtype != CC_I32))
		return NULL;
	int64_t *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (int64_t i = 0; i < *n; i++)
		v[i] = t->dtype == CC_I64 ? ((const int64_t *)t->data)[i]
					  : ((const int32_t *)t->data)[i];
	return v;
}

static int set_const(struct cc_tensor *t, enum cc_dtype dt, int rank, const int64_t *dims,
		     void *data, size_t nbytes)
{
	free(t->data);
	t->dtype = dt;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->data = data;
	t->nbytes = nbytes;
	return 1;
}

static int set_i64(struct cc_tensor *t, int rank, const int64_t *dims, const int64_t *v,
		   int64_t n)
{
	int64_t *d = malloc((size_t)(n ? n : 1) * sizeof *d);
	if (!d)
		return -1;
	memcpy(d, v, (size_t)n * sizeof *d);
	return set_const(t, CC_I64, rank, dims, d, (size_t)n * sizeof *d);
}

static int is_const(const struct cc_graph *g, int t) { return t < 0 || g->t[t].data != NULL; }

/* Gather of constant data (any rank and element type, any axis) with
 * constant indices: the position embedding's table rows for arange ids.
 * Out-of-range indices (undefined in ONNX) are left to the device. */
static int fold_gather(struct cc_graph *g, const struct cc_node *n, const struct cc_tensor *x,
		       struct cc_tensor *y)
{
	size_t es = cc_dtype_size(x->dtype);
	int64_t axis = cc_attr_int(n, "axis", 0), ni, total = cc_tensor_numel(x);
	if (axis < 0)
		axis += x->rank;
	const struct cc_tensor *it = &g->t[n->in[1]];
	if (!es || x->rank < 1 || axis < 0 || axis >= x->rank || total < 0 ||
	    x->rank + it->rank - 1 > CC_MAX_RANK || x->nbytes < (size_t)total * es)
		return 0;
	int64_t *idx = as_i64(it, &ni);
	if (!idx)
		return 0;
	int64_t outer = 1, inner = 1, dim = x->dims[axis], dims[CC_MAX_RANK];
	int r = 0;
	for (int i = 0; i < axis; i++)
		outer *= dims[r++] = x->dims[i];
	for (int i = 0; i < it->rank; i++)
		dims[r++] = it->dims[i];
	for (int i = (int)axis + 1; i < x->rank; i++)
		inner *= dims[r++] = x->dims[i];
	int ok = 1;
	for (int64_t i = 0; ok && i < ni; i++) {
		idx[i] += idx[i] < 0 ? dim : 0;
		ok = idx[i] >= 0 && idx[i] < dim;
	}
	size_t row = (size_t)inner * es, bytes = (size_t)(outer * ni) * row;
	char *d = ok ? malloc(bytes ? bytes : 1) : NULL;
	if (ok && !d) {
		free(idx);
		return -1;
	}
	for (int64_t o = 0; d && o < outer; o++)
		for (int64_t i = 0; i < ni; i++)
			memcpy(d + (size_t)(o * ni + i) * row,
			       (const char *)x->data + (size_t)(o * dim + idx[i]) * row, row);
	free(idx);
	return d ? set_const(y, x->dtype, r, dims, d, bytes) : 0;
}

int cc_fold_node(struct cc_graph *g, int ni)
{
	struct cc_node *n = &g->n[ni];
	if (n->nout != 1 || n->out[0] < 0)
		return 0;
	struct cc_tensor *y = &g->t[n->out[0]];
	if (y->is_output)
		return 0; /* keep graph outputs computed on the device */
	const char *op = n->op;
	if (!strcmp(op, "Size") && n->nin == 1 && n->in[0] >= 0 &&
	    cc_tensor_numel(&g->t[n->in[0]]) >= 0) { /* of a tensor whose shape is known */
		int64_t m = cc_tensor_numel(&g->t[n->in[0]]);
		int rc = set_i64(y, 0, NULL, &m, 1);
		if (rc > 0)
			n->dead = 1;
		return rc;
	}
	if (!strcmp(op, "Shape")) {
		const struct cc_tensor *x = &g->t[n->in[0]];
		if (x->rank < 0)
			return 0;
		for (int i = 0; i < x->rank; i++)
			if (x->dims[i] < 0)
				return 0;
		int64_t d1[1] = { x->rank };
		int rc = set_i64(y, 1, d1, x->dims, x->rank);
		if (rc > 0)
			n->dead = 1;
		return rc;
	}
	for (int k = 0; k < n->nin; k++)
		if (!is_const(g, n->in[k]))
			return 0;
	if (n->nin < 1 || n->in[0] < 0)
		return 0;
	if (cc_op_has(op, CC_P_QLINEAR))
		return cc_fold_qdq(g, ni);
	const struct cc_tensor *x = &g->t[n->in[0]];
	int64_t cnt, *v = NULL;
	int rc = 0;
	if (!strcmp(op, "Identity")) {
		void *d = malloc(x->nbytes ? x->nbytes : 1);
		if (!d)
			return -1;
		memcpy(d, x->data, x->nbytes);
		rc = set_const(y, x->dtype, x->rank, x->dims, d, x->nbytes);
	} else if (!strcmp(op, "Transpose") && x->rank >= 1 && cc_dtype_size(x->dtype)) {
		/* constants get transposed here, e.g. a Linear layer's weight */
		int r = x->rank;
		int64_t perm[CC_MAX_RANK], dims[CC_MAX_RANK], xstride[CC_MAX_RANK];
		const struct cc_attr *a = cc_attr_find(n, "perm");
		for (int i = 0; i < r; i++)
			perm[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i]
										    : r - 1 - i;
		xstride[r - 1] = 1;
		for (int i = r - 2; i >= 0; i--)
			xstride[i] = xstride[i + 1] * x->dims[i + 1];
		for (int i = 0; i < r; i++) {
			if (perm[i] < 0 || perm[i] >= r)
				return 0;
			dims[i] = x->dims[perm[i]];
		}
		size_t es = cc_dtype_size(x->dtype);
		int64_t total = cc_tensor_numel(x);
		char *d = malloc((size_t)(total ? total : 1) * es);
		if (!d)
			return -1;
		int64_t idx[CC_MAX_RANK] = { 0 };
		for (int64_t o = 0; o < total; o++) { /* o walks the output in order */
			int64_t src = 0;
			for (int i = 0; i < r; i++)
				src += idx[i] * xstride[perm[i]];
			memcpy(d + o * (int64_t)es, (const char *)x->data + src * (int64_t)es, es);
			for (int i = r - 1; i >= 0 && ++idx[i] == dims[i]; i--)
				idx[i] = 0;
		}
		rc = set_const(y, x->dtype, r, dims, d, (size_t)total * es);
	} else if (!strcmp(op, "Gather") && n->nin == 2) {
		rc = fold_gather(g, n, x, y);
	} else if (!strcmp(op, "Range") && n->nin == 3 && (v = as_i64(x, &cnt)) && cnt == 1) {
		/* torch's arange(seq) for position ids: integer start, limit, delta */
		int64_t m1, m2, *lim = as_i64(&g->t[n->in[1]], &m1), *dl = as_i64(&g->t[n->in[2]], &m2);
		if (lim && dl && m1 == 1 && m2 == 1 && dl[0] != 0) {
			int64_t span = lim[0] - v[0], len = (span + dl[0] + (dl[0] > 0 ? -1 : 1)) / dl[0];
			len = len < 0 ? 0 : len;
			int64_t *o = len <= (1 << 20) ? malloc((size_t)(len ? len : 1) * sizeof *o) : NULL;
			if (o) {
				for (int64_t i = 0; i < len; i++)
					o[i] = v[0] + i * dl[0];
				int64_t d1[1] = { len };
				rc = set_const(y, x->dtype == CC_I32 ? CC_I32 : CC_I64, 1, d1, o,
					       (size_t)len * sizeof *o);
				if (x->dtype == CC_I32) { /* keep the input's integer type */
					int32_t *o32 = (int32_t *)(void *)o;
					for (int64_t i = 0; i < len; i++)
						o32[i] = (int32_t)o[i];
					y->nbytes = (size_t)len * 4;
				}
			} else {
				rc = -1;
			}
		}
		free(lim);
		free(dl);
	}
	free(v);
	if (rc == 0) /* anything else of constants: evaluated whole (fold_eval.c) */
		rc = cc_fold_eval(g, n, y);
	if (rc > 0) {
		n->dead = 1;
		y->producer = -1;
	}
	return rc;
}
