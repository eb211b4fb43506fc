/* fold_eval.c: constant folding of any node whose inputs are all constants,
 * for the ops exporters put in shape and mask subgraphs.
 *
 * pass_constfold.c folds the common shape chains (Shape -> Gather ->
 * Unsqueeze -> Concat) in place; what it leaves, this evaluates on whole
 * tensors: torchvision's Swin builds its padding from "(w - W % w) % w" and
 * its shifted-window attention mask with zeros(...), slice assignments
 * (ScatterND), Equal/Where and Expand, all of it fixed once --input_shape
 * fixes the input.  ATC folds these the same way before it builds the
 * graph.  Values are held as int64 (integer and bool tensors) or double
 * (float ones) and written back in the node's output type; float results
 * are rounded once, to float32, so the folded bytes do not depend on the
 * host.  Constants larger than FOLD_MAX_ELEMS stay unfolded. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

#define FOLD_MAX_ELEMS (1 << 22)

struct fv {
	int isf; /* values in f (float types), else in i */
	int rank;
	int64_t dims[CC_MAX_RANK];
	int64_t n;
	double *f;
	int64_t *i;
};

static void fv_free(struct fv *v)
{
	free(v->f);
	free(v->i);
	v->f = NULL;
	v->i = NULL;
}

static int is_float(enum cc_dtype dt) { return dt == CC_F32 || dt == CC_F64; }

static int is_int(enum cc_dtype dt)
{
	return dt == CC_U8 || dt == CC_I8 || dt == CC_U16 || dt == CC_I16 || dt == CC_I32 ||
	       dt == CC_I64 || dt == CC_BOOL || dt == CC_U32 || dt == CC_U64;
}

static int64_t numel(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] && n > FOLD_MAX_ELEMS / dims[i]))
			return -1;
		n *= dims[i];
	}
	return n;
}

/* 1 loaded, 0 a type or size it does not fold, -1 out of memory */
static int fv_load(const struct cc_tensor *t, struct fv *v)
{
	memset(v, 0, sizeof *v);
	if (!t->data || t->rank < 0 || (!is_float(t->dtype) && !is_int(t->dtype)))
		return 0;
	v->rank = t->rank;
	memcpy(v->dims, t->dims, sizeof v->dims);
	v->n = numel(t->rank, t->dims);
	if (v->n < 0 || t->nbytes < (size_t)v->n * cc_dtype_size(t->dtype))
		return 0;
	v->isf = is_float(t->dtype);
	size_t cnt = (size_t)(v->n ? v->n : 1);
	if (v->isf) {
		if (!(v->f = malloc(cnt * sizeof *v->f)))
			return -1;
	} else if (!(v->i = malloc(cnt * sizeof *v->i))) {
		return -1;
	}
	const void *d = t->data;
	for (int64_t k = 0; k < v->n; k++) {
		switch (t->dtype) {
		case CC_F32: v->f[k] = ((const float *)d)[k]; break;
		case CC_F64: v->f[k] = ((const double *)d)[k]; break;
		case CC_U8:
		case CC_BOOL: v->i[k] = ((const uint8_t *)d)[k]; break;
		case CC_I8: v->i[k] = ((const int8_t *)d)[k]; break;
		case CC_U16: v->i[k] = ((const uint16_t *)d)[k]; break;
		case CC_I16: v->i[k] = ((const int16_t *)d)[k]; break;
		case CC_I32: v->i[k] = ((const int32_t *)d)[k]; break;
		case CC_U32: v->i[k] = ((const uint32_t *)d)[k]; break;
		default: v->i[k] = ((const int64_t *)d)[k]; break; /* I64, U64 */
		}
	}
	return 1;
}

/* float to integer as a cast truncates; NaN and out-of-range values (whose
 * C conversion is undefined) saturate, NaN to 0 */
static int64_t f2i(double f)
{
	if (f != f)
		return 0;
	if (f >= 9223372036854775807.0)
		return INT64_MAX;
	if (f <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)f;
}

static double fv_get(const struct fv *v, int64_t k) { return v->isf ? v->f[k] : (double)v->i[k]; }
static int64_t fv_geti(const struct fv *v, int64_t k)
{
	return v->isf ? f2i(v->f[k]) : v->i[k];
}

/* Write v into y as dtype dt; 1, or -1 out of memory. */
static int fv_store(struct cc_tensor *y, const struct fv *v, enum cc_dtype dt)
{
	size_t es = cc_dtype_size(dt), bytes = (size_t)v->n * es;
	char *d = malloc(bytes ? bytes : 1);
	if (!d)
		return -1;
	for (int64_t k = 0; k < v->n; k++) {
		double f = v->isf ? v->f[k] : 0;
		int64_t i = v->isf ? f2i(f) : v->i[k];
		switch (dt) {
		case CC_F32: ((float *)(void *)d)[k] = v->isf ? (float)f : (float)i; break;
		case CC_F64: ((double *)(void *)d)[k] = v->isf ? f : (double)i; break;
		case CC_BOOL: ((uint8_t *)d)[k] = v->isf ? f != 0 : i != 0; break;
		case CC_U8: ((uint8_t *)d)[k] = (uint8_t)i; break;
		case CC_I8: ((int8_t *)d)[k] = (int8_t)i; break;
		case CC_U16: ((uint16_t *)(void *)d)[k] = (uint16_t)i; break;
		case CC_I16: ((int16_t *)(void *)d)[k] = (int16_t)i; break;
		case CC_I32: ((int32_t *)(void *)d)[k] = (int32_t)i; break;
		case CC_U32: ((uint32_t *)(void *)d)[k] = (uint32_t)i; break;
		default: ((int64_t *)(void *)d)[k] = i; break;
		}
	}
	free(y->data);
	y->dtype = dt;
	y->rank = v->rank;
	memcpy(y->dims, v->dims, sizeof y->dims);
	y->data = d;
	y->nbytes = bytes;
	return 1;
}

static int fv_alloc(struct fv *v, int isf, int rank, const int64_t *dims)
{
	memset(v, 0, sizeof *v);
	v->isf = isf;
	v->rank = rank;
	memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
	v->n = numel(rank, dims);
	if (v->n < 0)
		return 0;
	size_t cnt = (size_t)(v->n ? v->n : 1);
	if (isf ? !(v->f = calloc(cnt, sizeof *v->f)) : !(v->i = calloc(cnt, sizeof *v->i)))
		return -1;
	return 1;
}

/* o[k] = s[j] (o and s of one kind, float or integer) */
static inline void fv_put(struct fv *o, int64_t k, const struct fv *s, int64_t j)
{
	if (o->isf)
		o->f[k] = s->f[j];
	else
		o->i[k] = s->i[j];
}

/* numpy broadcasting of a's and b's shapes into out; 0 if they do not */
static int bcast_dims(int ra, const int64_t *da, int rb, const int64_t *db, int *ro,
		      int64_t *dout)
{
	int r = ra > rb ? ra : rb;
	if (r > CC_MAX_RANK)
		return 0;
	for (int i = 0; i < r; i++) {
		int64_t x = i - (r - ra) >= 0 ? da[i - (r - ra)] : 1;
		int64_t y = i - (r - rb) >= 0 ? db[i - (r - rb)] : 1;
		if (x != y && x != 1 && y != 1)
			return 0;
		dout[i] = x == 1 ? y : x;
	}
	*ro = r;
	return 1;
}

/* The element of v (broadcast to out's rank r) at out's multi-index idx. */
static int64_t bcast_at(const struct fv *v, int r, const int64_t *idx)
{
	int64_t off = 0;
	for (int i = 0; i < v->rank; i++) {
		int64_t d = v->dims[i], j = idx[i + r - v->rank];
		off = off * d + (d == 1 ? 0 : j);
	}
	return off;
}

static void next_index(int r, const int64_t *dims, int64_t *idx)
{
	for (int i = r - 1; i >= 0 && ++idx[i] == dims[i]; i--)
		idx[i] = 0;
}

static double pow_exact(double a, double b) { return pow(a, b); }

/* out = a OP b for one element; compare ops return 0/1. */
static int binary_op(const char *op, int isf, double fa, double fb, int64_t ia, int64_t ib,
		     double *fo, int64_t *io, int fmod_sign)
{
	if (!strcmp(op, "Equal")) { *io = isf ? fa == fb : ia == ib; return 1; }
	if (!strcmp(op, "Less")) { *io = isf ? fa < fb : ia < ib; return 1; }
	if (!strcmp(op, "Greater")) { *io = isf ? fa > fb : ia > ib; return 1; }
	if (!strcmp(op, "LessOrEqual")) { *io = isf ? fa <= fb : ia <= ib; return 1; }
	if (!strcmp(op, "GreaterOrEqual")) { *io = isf ? fa >= fb : ia >= ib; return 1; }
	if (!strcmp(op, "And")) { *io = ia && ib; return 1; }
	if (!strcmp(op, "Or")) { *io = ia || ib; return 1; }
	if (!strcmp(op, "Xor")) { *io = !ia != !ib; return 1; }
	if (isf) {
		if (!strcmp(op, "Add")) *fo = fa + fb;
		else if (!strcmp(op, "Sub")) *fo = fa - fb;
		else if (!strcmp(op, "Mul")) *fo = fa * fb;
		else if (!strcmp(op, "Div")) *fo = fa / fb;
		else if (!strcmp(op, "Pow")) *fo = pow_exact(fa, fb);
		else if (!strcmp(op, "Max")) *fo = fa > fb ? fa : fb;
		else if (!strcmp(op, "Min")) *fo = fa < fb ? fa : fb;
		else if (!strcmp(op, "Sum")) *fo = fa + fb;
		else if (!strcmp(op, "Mod")) *fo = fmod(fa, fb);
		else return 0;
		*fo = (double)(float)*fo; /* float32 arithmetic, rounded once per op */
		return 1;
	}
	if (!strcmp(op, "Add") || !strcmp(op, "Sum")) *io = (int64_t)((uint64_t)ia + (uint64_t)ib);
	else if (!strcmp(op, "Sub")) *io = (int64_t)((uint64_t)ia - (uint64_t)ib);
	else if (!strcmp(op, "Mul")) *io = (int64_t)((uint64_t)ia * (uint64_t)ib);
	else if (!strcmp(op, "Max")) *io = ia > ib ? ia : ib;
	else if (!strcmp(op, "Min")) *io = ia < ib ? ia : ib;
	else if (!strcmp(op, "Div") || !strcmp(op, "Mod")) {
		if (ib == 0 || (ia == INT64_MIN && ib == -1))
			return 0;
		if (op[0] == 'D') {
			*io = ia / ib;
		} else {
			*io = ia % ib;
			if (!fmod_sign && *io != 0 && (*io < 0) != (ib < 0))
				*io += ib; /* fmod=0: the divisor's sign */
		}
	} else if (!strcmp(op, "Pow")) {
		int64_t r = 1;
		if (ib < 0)
			return 0;
		for (int64_t k = 0; k < ib && k < 64; k++)
			r = (int64_t)((uint64_t)r * (uint64_t)ia);
		*io = r;
	} else {
		return 0;
	}
	return 1;
}

static int is_compare(const char *op)
{
	return !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") ||
	       !strcmp(op, "LessOrEqual") || !strcmp(op, "GreaterOrEqual") || !strcmp(op, "And") ||
	       !strcmp(op, "Or") || !strcmp(op, "Xor");
}

/* a OP b with broadcasting into *o; 1, 0 (not folded), -1 out of memory */
static int eval_binary(const char *op, const struct fv *a, const struct fv *b, int fmod_sign,
		       struct fv *o)
{
	int r;
	int64_t dims[CC_MAX_RANK];
	if (!bcast_dims(a->rank, a->dims, b->rank, b->dims, &r, dims) || a->isf != b->isf)
		return 0;
	int cmp = is_compare(op);
	int rc = fv_alloc(o, a->isf && !cmp, r, dims);
	if (rc <= 0)
		return rc;
	int64_t idx[CC_MAX_RANK] = { 0 };
	for (int64_t k = 0; k < o->n; k++, next_index(r, dims, idx)) {
		int64_t ka = bcast_at(a, r, idx), kb = bcast_at(b, r, idx);
		double fo = 0;
		int64_t io = 0;
		if (!binary_op(op, a->isf, a->isf ? a->f[ka] : 0, b->isf ? b->f[kb] : 0,
			       a->isf ? 0 : a->i[ka], b->isf ? 0 : b->i[kb], &fo, &io, fmod_sign)) {
			fv_free(o);
			return 0;
		}
		if (o->isf)
			o->f[k] = fo;
		else
			o->i[k] = io;
	}
	return 1;
}

static int eval_unary(const char *op, const struct fv *a, struct fv *o)
{
	int rc = fv_alloc(o, a->isf && strcmp(op, "Not"), a->rank, a->dims);
	if (rc <= 0)
		return rc;
	for (int64_t k = 0; k < a->n; k++) {
		if (!a->isf) {
			int64_t x = a->i[k];
			if (!strcmp(op, "Neg")) o->i[k] = (int64_t)(0 - (uint64_t)x);
			else if (!strcmp(op, "Abs")) o->i[k] = x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
			else if (!strcmp(op, "Not")) o->i[k] = !x;
			else if (!strcmp(op, "Sign")) o->i[k] = (x > 0) - (x < 0);
			else if (!strcmp(op, "Relu")) o->i[k] = x > 0 ? x : 0;
			else if (!strcmp(op, "Floor") || !strcmp(op, "Ceil")) o->i[k] = x;
			else goto no;
			continue;
		}
		double x = a->f[k], y;
		if (!strcmp(op, "Neg")) y = -x;
		else if (!strcmp(op, "Abs")) y = fabs(x);
		else if (!strcmp(op, "Sqrt")) y = sqrt(x);
		else if (!strcmp(op, "Floor")) y = floor(x);
		else if (!strcmp(op, "Ceil")) y = ceil(x);
		else if (!strcmp(op, "Reciprocal")) y = 1.0 / x;
		else if (!strcmp(op, "Exp")) y = exp(x);
		else if (!strcmp(op, "Log")) y = log(x);
		else if (!strcmp(op, "Relu")) y = x > 0 ? x : 0;
		else if (!strcmp(op, "Sign")) y = (x > 0) - (x < 0);
		else goto no;
		o->f[k] = (double)(float)y;
	}
	return 1;
no:
	fv_free(o);
	return 0;
}

/* The int64 values of a constant input k (shape, axes, repeats ...). */
static int64_t *ints_of(const struct cc_graph *g, const struct cc_node *n, int k, int64_t *cnt)
{
	if (k >= n->nin || n->in[k] < 0)
		return NULL;
	struct fv v;
	if (fv_load(&g->t[n->in[k]], &v) <= 0 || v.isf) {
		fv_free(&v);
		return NULL;
	}
	*cnt = v.n;
	if (!v.i)
		v.i = malloc(sizeof *v.i);
	return v.i;
}

/* Expand: x broadcast to shape (numpy's rule: the larger of each pair). */
static int eval_expand(const struct fv *x, const int64_t *shape, int64_t ns, struct fv *o)
{
	struct fv s = { .rank = (int)ns };
	if (ns > CC_MAX_RANK)
		return 0;
	memcpy(s.dims, shape, (size_t)ns * sizeof *shape);
	int r;
	int64_t dims[CC_MAX_RANK];
	if (!bcast_dims(x->rank, x->dims, s.rank, s.dims, &r, dims))
		return 0;
	int rc = fv_alloc(o, x->isf, r, dims);
	if (rc <= 0)
		return rc;
	int64_t idx[CC_MAX_RANK] = { 0 };
	for (int64_t k = 0; k < o->n; k++, next_index(r, dims, idx)) {
		int64_t j = bcast_at(x, r, idx);
		fv_put(o, k, x, j);
	}
	return 1;
}

static int eval_where(const struct fv *c, const struct fv *a, const struct fv *b, struct fv *o)
{
	int r1, r;
	int64_t d1[CC_MAX_RANK], dims[CC_MAX_RANK];
	if (c->isf || a->isf != b->isf ||
	    !bcast_dims(c->rank, c->dims, a->rank, a->dims, &r1, d1) ||
	    !bcast_dims(r1, d1, b->rank, b->dims, &r, dims))
		return 0;
	int rc = fv_alloc(o, a->isf, r, dims);
	if (rc <= 0)
		return rc;
	int64_t idx[CC_MAX_RANK] = { 0 };
	for (int64_t k = 0; k < o->n; k++, next_index(r, dims, idx)) {
		const struct fv *s = c->i[bcast_at(c, r, idx)] ? a : b;
		int64_t j = bcast_at(s, r, idx);
		fv_put(o, k, s, j);
	}
	return 1;
}

/* Slice of any rank: starts, ends, axes, steps (ONNX's clamping). */
static int eval_slice(const struct cc_graph *g, const struct cc_node *n, const struct fv *x,
		      struct fv *o)
{
	int64_t ns, ne, na = 0, nst = 0;
	int64_t *st = ints_of(g, n, 1, &ns), *en = ints_of(g, n, 2, &ne);
	int64_t *ax = ints_of(g, n, 3, &na), *sp = ints_of(g, n, 4, &nst);
	int64_t b[CC_MAX_RANK], step[CC_MAX_RANK], dims[CC_MAX_RANK];
	int ok = st && en && ns == ne && (!ax || na == ns) && (!sp || nst == ns), rc = 0;
	for (int i = 0; i < x->rank; i++) {
		b[i] = 0;
		step[i] = 1;
		dims[i] = x->dims[i];
	}
	for (int64_t k = 0; ok && k < ns; k++) {
		int64_t a = ax ? ax[k] : k;
		a += a < 0 ? x->rank : 0;
		int64_t s = sp ? sp[k] : 1, d = x->dims[a >= 0 && a < x->rank ? a : 0];
		ok = a >= 0 && a < x->rank && s != 0;
		if (!ok)
			break;
		int64_t lo = st[k], hi = en[k];
		lo += lo < 0 ? d : 0;
		hi += hi < 0 ? d : 0;
		if (s > 0) {
			lo = lo < 0 ? 0 : lo > d ? d : lo;
			hi = hi < 0 ? 0 : hi > d ? d : hi;
			dims[a] = hi > lo ? (hi - lo + s - 1) / s : 0;
		} else {
			lo = lo < 0 ? -1 : lo > d - 1 ? d - 1 : lo;
			hi = hi < -1 ? -1 : hi > d - 1 ? d - 1 : hi;
			dims[a] = lo > hi ? (lo - hi - s - 1) / -s : 0;
		}
		b[a] = lo;
		step[a] = s;
	}
	if (ok && (rc = fv_alloc(o, x->isf, x->rank, dims)) > 0) {
		int64_t idx[CC_MAX_RANK] = { 0 };
		for (int64_t k = 0; k < o->n; k++, next_index(x->rank, dims, idx)) {
			int64_t off = 0;
			for (int i = 0; i < x->rank; i++)
				off = off * x->dims[i] + b[i] + idx[i] * step[i];
			fv_put(o, k, x, off);
		}
	}
	free(st);
	free(en);
	free(ax);
	free(sp);
	return ok ? rc : 0;
}

static int eval_concat(const struct cc_graph *g, const struct cc_node *n, struct fv *o)
{
	struct fv in[64];
	int nin = n->nin, rc = 0, isf = -1;
	if (nin < 1 || nin > 64)
		return 0;
	memset(in, 0, sizeof in);
	int64_t axis = cc_attr_int(n, "axis", 0), dims[CC_MAX_RANK];
	int r = -1, ok = 1;
	for (int k = 0; k < nin && ok; k++) {
		int l = fv_load(&g->t[n->in[k]], &in[k]);
		if (l < 0) {
			rc = -1;
			ok = 0;
			break;
		}
		ok = l > 0 && (isf < 0 || isf == in[k].isf) && (r < 0 || r == in[k].rank);
		isf = in[k].isf;
		r = in[k].rank;
	}
	if (ok) {
		axis += axis < 0 ? r : 0;
		ok = axis >= 0 && axis < r;
	}
	for (int k = 0; ok && k < nin; k++)
		for (int i = 0; i < r; i++) {
			if (i == axis)
				continue;
			ok = ok && in[k].dims[i] == in[0].dims[i];
		}
	if (ok) {
		memcpy(dims, in[0].dims, sizeof dims);
		dims[axis] = 0;
		for (int k = 0; k < nin; k++)
			dims[axis] += in[k].dims[axis];
		rc = fv_alloc(o, isf, r, dims);
	}
	if (rc > 0) {
		int64_t outer = 1, inner = 1, at = 0;
		for (int i = 0; i < axis; i++)
			outer *= dims[i];
		for (int i = (int)axis + 1; i < r; i++)
			inner *= dims[i];
		for (int64_t p = 0; p < outer; p++)
			for (int k = 0; k < nin; k++) {
				int64_t run = in[k].dims[axis] * inner;
				for (int64_t j = 0; j < run; j++, at++)
					fv_put(o, at, &in[k], p * run + j);
			}
	}
	for (int k = 0; k < nin; k++)
		fv_free(&in[k]);
	return rc;
}

/* ScatterND without reduction: data with updates written at the indices. */
static int eval_scatter_nd(const struct fv *x, const struct fv *ix, const struct fv *up,
			   struct fv *o)
{
	if (ix->isf || x->isf != up->isf || ix->rank < 1)
		return 0;
	int64_t q = ix->dims[ix->rank - 1];
	if (q < 1 || q > x->rank)
		return 0;
	int64_t nidx = ix->n / q, slice = 1;
	for (int i = (int)q; i < x->rank; i++)
		slice *= x->dims[i];
	if (up->n != nidx * slice)
		return 0;
	int rc = fv_alloc(o, x->isf, x->rank, x->dims);
	if (rc <= 0)
		return rc;
	if (o->isf)
		memcpy(o->f, x->f, (size_t)x->n * sizeof *o->f);
	else
		memcpy(o->i, x->i, (size_t)x->n * sizeof *o->i);
	for (int64_t k = 0; k < nidx; k++) {
		int64_t off = 0;
		for (int64_t j = 0; j < q; j++) {
			int64_t v = ix->i[k * q + j], d = x->dims[j];
			v += v < 0 ? d : 0;
			if (v < 0 || v >= d) {
				fv_free(o);
				return 0;
			}
			off = off * d + v;
		}
		off *= slice;
		for (int64_t j = 0; j < slice; j++) {
			fv_put(o, off + j, up, k * slice + j);
		}
	}
	return 1;
}

static int eval_tile(const struct fv *x, const int64_t *rep, int64_t nr, struct fv *o)
{
	int64_t dims[CC_MAX_RANK];
	if (nr != x->rank)
		return 0;
	for (int i = 0; i < x->rank; i++) {
		if (rep[i] < 0)
			return 0;
		dims[i] = x->dims[i] * rep[i];
	}
	int rc = fv_alloc(o, x->isf, x->rank, dims);
	if (rc <= 0)
		return rc;
	int64_t idx[CC_MAX_RANK] = { 0 };
	for (int64_t k = 0; k < o->n; k++, next_index(x->rank, dims, idx)) {
		int64_t off = 0;
		for (int i = 0; i < x->rank; i++)
			off = off * x->dims[i] + idx[i] % x->dims[i];
		fv_put(o, k, x, off);
	}
	return 1;
}

/* Reshape / Flatten of a constant: the values unchanged, new dims. */
static int eval_reshape(const struct cc_graph *g, const struct cc_node *n, struct fv *x)
{
	int64_t dims[CC_MAX_RANK], ns = 0, known = 1, infer = -1;
	if (!strcmp(n->op, "Flatten")) {
		int64_t axis = cc_attr_int(n, "axis", 1);
		axis += axis < 0 ? x->rank : 0;
		if (axis < 0 || axis > x->rank)
			return 0;
		dims[0] = 1;
		for (int i = 0; i < axis; i++)
			dims[0] *= x->dims[i];
		dims[1] = dims[0] ? x->n / dims[0] : 0;
		x->rank = 2;
		memcpy(x->dims, dims, sizeof dims);
		return 1;
	}
	int64_t *s = ints_of(g, n, 1, &ns);
	int ok = s && ns <= CC_MAX_RANK;
	int allowzero = (int)cc_attr_int(n, "allowzero", 0);
	for (int64_t i = 0; ok && i < ns; i++) {
		dims[i] = s[i] == 0 && !allowzero ? (i < x->rank ? x->dims[i] : -2) : s[i];
		if (dims[i] == -1 && infer < 0)
			infer = i;
		else if (dims[i] < 0)
			ok = 0;
		else
			known *= dims[i];
	}
	if (ok && infer >= 0) {
		ok = known > 0 && x->n % known == 0;
		if (ok)
			dims[infer] = x->n / known;
	} else if (ok) {
		ok = known == x->n;
	}
	if (ok) {
		x->rank = (int)ns;
		memcpy(x->dims, dims, (size_t)ns * sizeof *dims);
	}
	free(s);
	return ok;
}

/* Unsqueeze / Squeeze: axes from the attribute (before opset 13) or input 1. */
static int squeeze_dims(const struct cc_graph *g, const struct cc_node *n, struct fv *x)
{
	int64_t axes[CC_MAX_RANK], na = 0, dims[CC_MAX_RANK];
	const struct cc_attr *a = cc_attr_find(n, "axes");
	if (a && a->type == CC_ATTR_INTS) {
		for (size_t i = 0; i < a->n && na < CC_MAX_RANK; i++)
			axes[na++] = a->ints[i];
	} else if (n->nin > 1 && n->in[1] >= 0) {
		int64_t m, *ax = ints_of(g, n, 1, &m);
		if (!ax || m > CC_MAX_RANK) {
			free(ax);
			return 0;
		}
		for (int64_t i = 0; i < m; i++)
			axes[na++] = ax[i];
		free(ax);
	}
	int rank = 0;
	if (!strcmp(n->op, "Unsqueeze")) {
		int out_rank = x->rank + (int)na, src = 0;
		if (out_rank > CC_MAX_RANK)
			return 0;
		for (int i = 0; i < out_rank; i++) {
			int hit = 0;
			for (int k = 0; k < na; k++)
				hit |= (axes[k] < 0 ? axes[k] + out_rank : axes[k]) == i;
			if (!hit && src >= x->rank)
				return 0;
			dims[rank++] = hit ? 1 : x->dims[src++];
		}
	} else {
		for (int i = 0; i < x->rank; i++) {
			int hit = na == 0 && x->dims[i] == 1;
			for (int k = 0; k < na; k++)
				hit |= (axes[k] < 0 ? axes[k] + x->rank : axes[k]) == i;
			if (!hit)
				dims[rank++] = x->dims[i];
		}
	}
	x->rank = rank;
	memcpy(x->dims, dims, (size_t)rank * sizeof *dims);
	return 1;
}

static enum cc_dtype out_type(const char *op, const struct cc_tensor *first, int isf)
{
	if (is_compare(op) || !strcmp(op, "Not"))
		return CC_BOOL;
	(void)isf;
	return first->dtype;
}

int cc_fold_eval(struct cc_graph *g, struct cc_node *n, struct cc_tensor *y)
{
	const char *op = n->op;
	struct fv x = { 0 }, b = { 0 }, c = { 0 }, o = { 0 };
	int rc = 0, have_o = 0;
	int64_t cnt = 0, *v = NULL;
	if (!strcmp(op, "ConstantOfShape")) {
		v = ints_of(g, n, 0, &cnt);
		const struct cc_attr *a = cc_attr_find(n, "value");
		const struct cc_tensor *val = a && a->type == CC_ATTR_TENSOR ? &g->t[a->tensor] : NULL;
		struct fv vv = { 0 };
		int l = val ? fv_load(val, &vv) : 1;
		if (v && cnt <= CC_MAX_RANK && l > 0 && (!val || vv.n == 1) &&
		    (rc = fv_alloc(&o, val ? vv.isf : 1, (int)cnt, v)) > 0) {
			for (int64_t k = 0; k < o.n; k++) {
				if (o.isf)
					o.f[k] = val ? vv.f[0] : 0;
				else
					o.i[k] = vv.i[0];
			}
			rc = fv_store(y, &o, val ? val->dtype : CC_F32);
		} else if (l < 0) {
			rc = -1;
		}
		fv_free(&vv);
		fv_free(&o);
		free(v);
		return rc;
	}
	if (n->nin < 1 || n->in[0] < 0)
		return 0;
	const struct cc_tensor *t0 = &g->t[n->in[0]];
	if (!strcmp(op, "Size")) {
		int64_t m = cc_tensor_numel(t0), d0[1] = { 0 };
		if (m < 0)
			return 0;
		struct fv s = { .rank = 0, .n = 1 };
		(void)d0;
		s.i = malloc(sizeof *s.i);
		if (!s.i)
			return -1;
		s.i[0] = m;
		rc = fv_store(y, &s, CC_I64);
		fv_free(&s);
		return rc;
	}
	if ((rc = fv_load(t0, &x)) <= 0)
		return rc;
	rc = 0;
	if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
	    !strcmp(op, "Mod") || !strcmp(op, "Pow") || is_compare(op) || !strcmp(op, "Max") ||
	    !strcmp(op, "Min") || !strcmp(op, "Sum")) {
		int fmod_sign = (int)cc_attr_int(n, "fmod", 0);
		struct fv acc = x;
		memset(&x, 0, sizeof x);
		rc = 1;
		for (int k = 1; k < n->nin && rc > 0; k++) {
			if (n->in[k] < 0 || (rc = fv_load(&g->t[n->in[k]], &b)) <= 0)
				break;
			/* Pow's exponent may be another type: follow the base */
			if (!strcmp(op, "Pow") && b.isf != acc.isf) {
				struct fv t2;
				if ((rc = fv_alloc(&t2, acc.isf, b.rank, b.dims)) <= 0)
					break;
				for (int64_t j = 0; j < b.n; j++) {
					if (t2.isf)
						t2.f[j] = fv_get(&b, j);
					else
						t2.i[j] = fv_geti(&b, j);
				}
				fv_free(&b);
				b = t2;
			}
			rc = eval_binary(op, &acc, &b, fmod_sign, &o);
			fv_free(&b);
			fv_free(&acc);
			acc = o;
			memset(&o, 0, sizeof o);
		}
		if (rc > 0 && n->nin >= 2)
			rc = fv_store(y, &acc, out_type(op, t0, acc.isf));
		else if (rc > 0)
			rc = 0;
		fv_free(&acc);
		return rc;
	}
	if (!strcmp(op, "Neg") || !strcmp(op, "Abs") || !strcmp(op, "Not") || !strcmp(op, "Sqrt") ||
	    !strcmp(op, "Floor") || !strcmp(op, "Ceil") || !strcmp(op, "Reciprocal") ||
	    !strcmp(op, "Exp") || !strcmp(op, "Log") || !strcmp(op, "Sign") || !strcmp(op, "Relu")) {
		rc = eval_unary(op, &x, &o);
		have_o = 1;
	} else if (!strcmp(op, "Clip")) {
		/* min and max: optional inputs (opset 11+) or attributes */
		double lo = -INFINITY, hi = INFINITY;
		for (int k = 1; k < 3 && k < n->nin; k++) {
			if (n->in[k] < 0)
				continue;
			struct fv m;
			int l = fv_load(&g->t[n->in[k]], &m);
			if (l > 0 && m.n == 1)
				*(k == 1 ? &lo : &hi) = fv_get(&m, 0);
			fv_free(&m);
			if (l < 0) {
				fv_free(&x);
				return -1;
			}
			if (l == 0 || m.n != 1) {
				fv_free(&x);
				return 0;
			}
		}
		if (cc_attr_find(n, "min"))
			lo = cc_attr_float(n, "min", 0);
		if (cc_attr_find(n, "max"))
			hi = cc_attr_float(n, "max", 0);
		for (int64_t k = 0; k < x.n; k++) {
			if (x.isf)
				x.f[k] = x.f[k] < lo ? lo : x.f[k] > hi ? hi : x.f[k];
			else
				x.i[k] = (double)x.i[k] < lo ? f2i(lo)
					 : (double)x.i[k] > hi ? f2i(hi) : x.i[k];
		}
		rc = fv_store(y, &x, t0->dtype);
	} else if (!strcmp(op, "Where") && n->nin == 3) {
		if ((rc = fv_load(&g->t[n->in[1]], &b)) > 0 &&
		    (rc = fv_load(&g->t[n->in[2]], &c)) > 0) {
			rc = eval_where(&x, &b, &c, &o);
			if (rc > 0)
				rc = fv_store(y, &o, g->t[n->in[1]].dtype);
		}
		fv_free(&x);
		fv_free(&b);
		fv_free(&c);
		fv_free(&o);
		return rc;
	} else if (!strcmp(op, "Expand") && (v = ints_of(g, n, 1, &cnt))) {
		rc = eval_expand(&x, v, cnt, &o);
		have_o = 1;
	} else if (!strcmp(op, "Tile") && (v = ints_of(g, n, 1, &cnt))) {
		rc = eval_tile(&x, v, cnt, &o);
		have_o = 1;
	} else if (!strcmp(op, "Slice") && n->nin >= 3) {
		rc = eval_slice(g, n, &x, &o);
		have_o = 1;
	} else if (!strcmp(op, "Concat")) {
		rc = eval_concat(g, n, &o);
		have_o = 1;
	} else if (!strcmp(op, "ScatterND") && n->nin == 3 &&
		   !cc_attr_find(n, "reduction")) {
		if ((rc = fv_load(&g->t[n->in[1]], &b)) > 0 &&
		    (rc = fv_load(&g->t[n->in[2]], &c)) > 0)
			rc = eval_scatter_nd(&x, &b, &c, &o);
		have_o = 1;
	} else if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten")) {
		if ((rc = eval_reshape(g, n, &x)) > 0)
			rc = fv_store(y, &x, t0->dtype);
	} else if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) {
		/* float constants (pass_constfold.c folds the integer ones) */
		if ((rc = squeeze_dims(g, n, &x)) > 0)
			rc = fv_store(y, &x, t0->dtype);
	} else if (!strcmp(op, "Cast")) {
		enum cc_dtype to = (enum cc_dtype)cc_attr_int(n, "to", 0);
		if (is_float(to) || is_int(to)) {
			if (to == CC_BOOL && x.isf)
				for (int64_t k = 0; k < x.n; k++)
					x.f[k] = x.f[k] != 0;
			rc = fv_store(y, &x, to);
		}
	}
	if (have_o && rc > 0)
		rc = fv_store(y, &o, out_type(op, t0, o.isf));
	fv_free(&x);
	fv_free(&b);
	fv_free(&c);
	fv_free(&o);
	free(v);
	return rc;
}
