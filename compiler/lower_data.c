/* lower_data.c: indexing ops and integer inputs: Gather, Slice, Split and
 * Expand with their shape inference, and the helpers for integer tensors
 * (constant index lists, integer graph inputs read in place).  One family
 * per file; split out of compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"

/* ---- data movement: Gather, Slice, Split, Expand ---------------------------- */

/* An integer or bool graph input.  Consumed only as Gather's indices it
 * stays in place (W_INPUT): the gather kernel reads it with scalar loads.
 * Otherwise an edge kernel (kern_dtype.c) converts it to fp32 and the
 * TransData to the fp16 device layout, as every activation. */
int cc_int_input_check(struct cc_ctx *c, int ti)
{
	struct cc_tensor *t = T(c, ti);
	if (t->dtype != CC_I64 && t->dtype != CC_I32 && t->dtype != CC_BOOL &&
	    t->dtype != CC_U8 && t->dtype != CC_I8 && t->dtype != CC_F16)
		return cc_fail(c, "input '%s' is %s: inputs other than float32, float16, float64, "
			       "bfloat16, int8, uint8, int16, uint16, int32, uint32, int64, uint64 "
			       "and bool are not supported yet", t->name,
			       cc_dtype_name(t->dtype));
	return 0;
}

/* The graph-input index of an int32/int64 input ti (Gather reads such
 * indices in place even when other consumers get them converted), or -1. */
static int raw_input(struct cc_ctx *c, int ti)
{
	struct cc_tensor *t = T(c, ti);
	if (!t->is_input || (t->dtype != CC_I64 && t->dtype != CC_I32))
		return -1;
	for (int i = 0; i < c->g.ninputs; i++)
		if (c->g.inputs[i] == ti)
			return i;
	return -1;
}

/* Is integer input ti read only as Gather's indices (so in place)? */
int cc_int_input_raw(struct cc_ctx *c, int ti)
{
	struct cc_tensor *t = T(c, ti);
	if (t->is_output || (t->dtype != CC_I64 && t->dtype != CC_I32))
		return 0;
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *n = &c->g.n[i];
		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			/* Shape reads only the (known) shape: constant folding removes it */
			if (n->in[k] == ti && (strcmp(n->op, "Gather") || k != 1) &&
			    strcmp(n->op, "Shape"))
				return 0;
	}
	return 1;
}

int infer_gather(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	if (n->nin < 2 || n->in[1] < 0)
		return NODE_FAIL(c, n, "input 1 is missing");
	struct cc_tensor *x = T(c, n->in[0]), *ix = T(c, n->in[1]);
	if (ix->dtype != CC_I64 && ix->dtype != CC_I32)
		return NODE_FAIL(c, n, "indices of type %s are not supported yet (int32 or int64 "
				       "graph inputs or constants)", cc_dtype_name(ix->dtype));
	int64_t axis = cc_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return NODE_FAIL(c, n, "axis out of range");
	/* constant indices out of range are an error, as ONNX says, not a
	 * clamp that gives a plausible wrong result */
	if (ix->data && ix->nbytes >= (size_t)cc_tensor_numel(ix) * cc_dtype_size(ix->dtype))
		for (int64_t i = 0; i < cc_tensor_numel(ix); i++) {
			int64_t v = ix->dtype == CC_I64 ? ((const int64_t *)ix->data)[i]
							: ((const int32_t *)ix->data)[i];
			if (v < -x->dims[axis] || v >= x->dims[axis])
				return NODE_FAIL(c, n, "indices '%s'[%lld] = %lld is out of range for "
						 "an axis of %lld", ix->name, (long long)i, (long long)v,
						 (long long)x->dims[axis]);
		}
	int r = x->rank + ix->rank - 1;
	if (r > CC_MAX_RANK)
		return NODE_FAIL(c, n, "an output of rank %d is not supported yet", r);
	int64_t d[CC_MAX_RANK];
	int k = 0;
	for (int i = 0; i < axis; i++)
		d[k++] = x->dims[i];
	for (int i = 0; i < ix->rank; i++)
		d[k++] = ix->dims[i];
	for (int i = (int)axis + 1; i < x->rank; i++)
		d[k++] = x->dims[i];
	return cc_set_shape(T(c, n->out[0]), x->dtype, r, d);
}

/* Gather along an axis that is not the lane axis: whole rows (the blocks
 * inside the axis) move, into out, which has x's rank with nidx at axis. */
static int gather_rows(struct cc_ctx *c, struct cc_node *n, int xi, int axis, int ii,
		       const int64_t *cidx, int64_t nidx, int out)
{
	struct cc_tensor *x = T(c, xi);
	int64_t cnt[CC_MAX_RANK], st[CC_MAX_RANK];
	cc_grid_counts(x, cnt);
	cc_dev_strides(x, st);
	struct cc_gather gd = { 1, x->dims[axis], st[axis] * 32, nidx, 0, cidx };
	for (int i = 0; i < axis; i++)
		gd.outer *= cnt[i];
	if (!cidx)
		gd.idx_bytes = (int)cc_dtype_size(T(c, ii)->dtype);
	if (c->dev[out].where == W_NONE && cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_gather(c->cfg, &gd, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, xi);
	cc_io_dev(c, t, 0, xi); /* the table first: simrun bounds random indices by it */
	if (cidx) { /* resolved at compile time: a placeholder argument */
		t->args[t->nargs++] = (struct om_arg){ OM_ARG_SCALAR, 0, 0 };
	} else {
		if (c->dev[ii].where == W_INPUT) {
			cc_arg_tensor(c, t, ii);
		} else { /* also converted for other consumers: its raw binding here */
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0,
							       (uint32_t)raw_input(c, ii) };
			t->bytes += (uint64_t)cc_tensor_numel(T(c, ii)) * cc_dtype_size(T(c, ii)->dtype);
		}
		cc_io_add(t, 0, ii, ii, T(c, ii)->dtype, CC_FMT_ND);
	}
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 1, out);
	/* the rows read and written, not the whole table */
	t->bytes = (uint64_t)(2 * gd.outer * nidx * gd.row_bytes) +
		   (uint64_t)(nidx * (gd.idx_bytes ? gd.idx_bytes : 0));
	return 0;
}

/* Gather: indices from an integer graph input (read on the device) or a
 * constant (resolved at compile time) select rows of the table, an
 * activation or a constant laid out as one.  The rows gather into a tensor
 * of the table's rank (its layout); when the output's rank differs
 * (indices not 1-D) that is reshaped into the output, a view or a relayout.
 * Along the lane axis (ND's last, NC1HWC0's C), the table first gets a
 * trailing axis of 1 (a relayout through the edge kernels: slow, but the
 * lanes cannot move otherwise), which turns every element into a row. */
int lower_gather(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], ii = n->in[1], out = n->out[0];
	struct cc_tensor *ix = T(c, ii);
	int64_t nidx = cc_tensor_numel(ix), ncidx = 0;
	int64_t *cidx = cc_const_ints(c, ii, &ncidx);
	int rc = -1;
	if (!cidx && c->dev[ii].where != W_INPUT && raw_input(c, ii) < 0) {
		rc = NODE_FAIL(c, n, "indices computed on the device are not supported yet");
		goto done;
	}
	if (nidx < 1) {
		rc = NODE_FAIL(c, n, "empty indices are not supported yet");
		goto done;
	}
	if (cc_act_input(c, n, xi))
		goto done;
	struct cc_tensor *x = T(c, xi);
	int axis = (int)cc_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += x->rank;
	int src = xi;
	if (axis == cc_lane_axis(x)) {
		if (x->rank + 1 > CC_MAX_RANK) {
			rc = NODE_FAIL(c, n, "Gather along the last axis of a rank-%d tensor is not "
					     "supported yet", x->rank);
			goto done;
		}
		int64_t d[CC_MAX_RANK];
		memcpy(d, x->dims, sizeof d);
		d[x->rank] = 1;
		src = cc_temp_new(c, n, x->rank + 1, d);
		if (src < 0 || cc_relayout(c, n, xi, src) < 0) {
			rc = src < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
			goto done;
		}
	}
	struct cc_tensor *s = T(c, src), *y = T(c, out);
	int64_t g[CC_MAX_RANK];
	memcpy(g, s->dims, sizeof g);
	g[axis] = nidx;
	int same = y->rank == s->rank;
	for (int i = 0; same && i < y->rank; i++)
		same = y->dims[i] == g[i];
	int gi = same ? out : cc_temp_new(c, n, s->rank, g);
	if (gi < 0) {
		rc = NODE_FAIL(c, n, "out of memory");
		goto done;
	}
	if (gather_rows(c, n, src, axis, ii, cidx, nidx, gi))
		goto done;
	rc = same ? 0 : cc_view_into(c, n, gi, out);
done:
	free(cidx);
	return rc;
}

/* Slice's per-axis first index b, count ext and step (any sign), clamped
 * as ONNX says: element k along an axis is x's b + k * step.  Starts,
 * ends, axes: attributes before opset 10, constant inputs (and steps) from
 * it. */
static int slice_ranges(struct cc_ctx *c, struct cc_node *n, int64_t *b, int64_t *ext,
			int64_t *step)
{
	struct cc_tensor *x = T(c, n->in[0]);
	for (int i = 0; i < x->rank; i++) {
		b[i] = 0;
		ext[i] = x->dims[i];
		step[i] = 1;
	}
	int64_t *st = NULL, *en = NULL, *ax = NULL, *sp = NULL, ns = 0, ne = 0, na = 0, np = 0;
	int rc = -1;
	if (c->g.opset < 10) {
		const struct cc_attr *a[3] = { cc_attr_find(n, "starts"), cc_attr_find(n, "ends"),
					       cc_attr_find(n, "axes") };
		int64_t **v[3] = { &st, &en, &ax }, *cn[3] = { &ns, &ne, &na };
		for (int k = 0; k < 3; k++) {
			if (!a[k] || a[k]->type != CC_ATTR_INTS)
				continue;
			*cn[k] = (int64_t)a[k]->n;
			*v[k] = malloc((a[k]->n + 1) * sizeof **v[k]);
			if (!*v[k])
				goto out;
			memcpy(*v[k], a[k]->ints, a[k]->n * sizeof **v[k]);
		}
	} else {
		for (int k = 1; k < n->nin && k < 5; k++)
			if (n->in[k] >= 0 && !T(c, n->in[k])->data) {
				rc = NODE_FAIL(c, n, "starts, ends, axes and steps that are not constants "
						     "are not supported yet");
				goto out;
			}
		st = cc_const_ints(c, n->nin > 1 ? n->in[1] : -1, &ns);
		en = cc_const_ints(c, n->nin > 2 ? n->in[2] : -1, &ne);
		ax = cc_const_ints(c, n->nin > 3 ? n->in[3] : -1, &na);
		sp = cc_const_ints(c, n->nin > 4 ? n->in[4] : -1, &np);
	}
	if (!st || !en || ns != ne || (ax && na != ns) || (sp && np != ns)) {
		rc = NODE_FAIL(c, n, "starts and ends (and axes, steps) of different lengths");
		goto out;
	}
	for (int64_t k = 0; k < ns; k++) {
		int64_t a = ax ? ax[k] : k;
		if (a < 0)
			a += x->rank;
		if (a < 0 || a >= x->rank) {
			rc = NODE_FAIL(c, n, "axis out of range");
			goto out;
		}
		int64_t dim = x->dims[a], s0 = st[k], e0 = en[k], sk = sp ? sp[k] : 1;
		if (sk == 0) {
			rc = NODE_FAIL(c, n, "a step of 0");
			goto out;
		}
		/* INT64_MIN/MAX mean "to the end": no overflow past the clamps */
		s0 = s0 < 0 ? (s0 < -dim ? -1 : s0 + dim) : s0;
		e0 = e0 < 0 ? (e0 < -dim ? -1 : e0 + dim) : e0;
		if (sk > 0) {
			s0 = s0 < 0 ? 0 : s0 > dim ? dim : s0;
			e0 = e0 < 0 ? 0 : e0 > dim ? dim : e0;
			ext[a] = e0 > s0 ? (e0 - s0 + sk - 1) / sk : 0;
		} else {
			s0 = s0 < 0 ? 0 : s0 > dim - 1 ? dim - 1 : s0;
			e0 = e0 < -1 ? -1 : e0 > dim - 1 ? dim - 1 : e0;
			ext[a] = s0 > e0 ? (s0 - e0 + (-sk) - 1) / -sk : 0;
		}
		b[a] = s0;
		/* a single element: its step does not matter */
		step[a] = ext[a] > 1 ? sk : 1;
	}
	rc = 0;
out:
	free(st);
	free(en);
	free(ax);
	free(sp);
	return rc;
}

int infer_slice(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	int64_t b[CC_MAX_RANK], ext[CC_MAX_RANK], sp[CC_MAX_RANK];
	if (slice_ranges(c, n, b, ext, sp))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, ext);
}

int lower_slice(struct cc_ctx *c, struct cc_node *n)
{
	int64_t b[CC_MAX_RANK], ext[CC_MAX_RANK], sp[CC_MAX_RANK];
	if (slice_ranges(c, n, b, ext, sp) || cc_act_input(c, n, n->in[0]))
		return -1;
	return cc_box_copy(c, n, n->in[0], b, sp, n->out[0]);
}

/* Split's part sizes: the 'split' input (opset 13) or attribute, else
 * equal parts (the last smaller when the axis does not divide, opset 18). */
static int split_sizes(struct cc_ctx *c, struct cc_node *n, int64_t *axis, int64_t *sz)
{
	struct cc_tensor *x = T(c, n->in[0]);
	*axis = cc_attr_int(n, "axis", 0);
	if (*axis < 0)
		*axis += x->rank;
	if (*axis < 0 || *axis >= x->rank)
		return NODE_FAIL(c, n, "axis out of range");
	int64_t dim = x->dims[*axis], cnt = 0, *v = NULL;
	const struct cc_attr *a = cc_attr_find(n, "split");
	if (n->nin > 1 && n->in[1] >= 0) {
		if (!(v = cc_const_ints(c, n->in[1], &cnt)))
			return NODE_FAIL(c, n, "a split that is not a constant is not supported yet");
	} else if (a && a->type == CC_ATTR_INTS) {
		cnt = (int64_t)a->n;
		v = malloc((a->n + 1) * sizeof *v);
		if (!v)
			return NODE_FAIL(c, n, "out of memory");
		memcpy(v, a->ints, a->n * sizeof *v);
	}
	if (v) {
		int64_t sum = 0;
		for (int64_t i = 0; i < cnt; i++)
			sum += v[i];
		int bad = cnt != n->nout || sum != dim;
		for (int64_t i = 0; !bad && i < cnt; i++)
			sz[i] = v[i];
		free(v);
		if (bad)
			return NODE_FAIL(c, n, "split sizes do not match the outputs or the axis");
		return 0;
	}
	int64_t part = (dim + n->nout - 1) / n->nout;
	for (int i = 0; i < n->nout; i++) {
		int64_t left = dim - part * i;
		sz[i] = left < 0 ? 0 : left < part ? left : part;
	}
	return 0;
}

int infer_split(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	if (n->nout > 64)
		return NODE_FAIL(c, n, "more than 64 outputs are not supported yet");
	int64_t axis, sz[64];
	if (split_sizes(c, n, &axis, sz))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	for (int i = 0; i < n->nout; i++) {
		if (n->out[i] < 0)
			continue;
		int64_t d[CC_MAX_RANK];
		memcpy(d, x->dims, sizeof d);
		d[axis] = sz[i];
		cc_set_shape(T(c, n->out[i]), x->dtype, x->rank, d);
	}
	return 0;
}

/* One box copy per output. */
int lower_split(struct cc_ctx *c, struct cc_node *n)
{
	int64_t axis, sz[64], b[CC_MAX_RANK] = { 0 };
	if (split_sizes(c, n, &axis, sz) || cc_act_input(c, n, n->in[0]))
		return -1;
	for (int i = 0; i < n->nout; b[axis] += sz[i], i++)
		if (n->out[i] >= 0 && cc_box_copy(c, n, n->in[0], b, NULL, n->out[i]))
			return -1;
	return 0;
}

int infer_expand(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t ns = 0, *s = cc_const_ints(c, n->nin > 1 ? n->in[1] : -1, &ns);
	if (!s)
		return NODE_FAIL(c, n, "a shape that is not a constant is not supported yet");
	int r = x->rank > ns ? x->rank : (int)ns;
	if (r > CC_MAX_RANK) {
		free(s);
		return NODE_FAIL(c, n, "rank %d is not supported yet", r);
	}
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < r; i++) {
		int64_t a = i - (r - x->rank) >= 0 ? x->dims[i - (r - x->rank)] : 1;
		int64_t b = i - (r - (int)ns) >= 0 ? s[i - (r - (int)ns)] : 1;
		if (a != b && a != 1 && b != 1) {
			free(s);
			return NODE_FAIL(c, n, "shapes that do not broadcast");
		}
		d[i] = a == 1 ? b : a;
	}
	free(s);
	return cc_set_shape(T(c, n->out[0]), x->dtype, r, d);
}

/* Expand as a copy whose source strides are 0 along the broadcast axes when
 * the lanes stay in place (the same layout kind on both sides, no
 * broadcasting along the lane axis); otherwise through the broadcast kernel
 * (cc_expand_into), which moves lanes and goes from ND to NC1HWC0. */
int lower_expand(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	if (c->dev[xi].where == W_INPUT)
		return NODE_FAIL(c, n, "input '%s' read in place is not supported yet", x->name);
	int r = y->rank, lane = cc_lane_axis(y), sh = r - x->rank;
	for (int i = 0; i < r; i++)
		if (y->dims[i] < 1)
			return NODE_FAIL(c, n, "an empty output is not supported yet");
	if ((r == 4) != (x->rank == 4) || x->rank < 1 || r < 1 ||
	    x->dims[x->rank - 1 - (r - 1 - lane)] != y->dims[lane])
		return cc_ws_place(c, out) ? NODE_FAIL(c, n, "out of memory")
					: cc_expand_into(c, n, xi, out);
	if (cc_act_input(c, n, xi))
		return -1;
	int64_t cnt[CC_MAX_RANK], sx[CC_MAX_RANK], xs[CC_MAX_RANK], sy[CC_MAX_RANK];
	cc_grid_counts(y, cnt);
	cc_dev_strides(x, xs);
	cc_dev_strides(y, sy);
	for (int i = 0; i < r; i++) {
		if (y->dims[i] < 1)
			return NODE_FAIL(c, n, "an empty output is not supported yet");
		sx[i] = i < sh || x->dims[i - sh] != y->dims[i] ? 0 : xs[i - sh];
	}
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_grid_copy(c->cfg, r, cnt, sx, sy, 0, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	return 0;
}
