/* lower_shape.c: ops that move data without arithmetic on it: Identity,
 * the views (Reshape, Flatten, Squeeze, Unsqueeze), Transpose, Concat, Pad and
 * Resize, with their shape inference.  One family per file; split out of
 * compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"

int infer_flatten(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t axis = cc_attr_int(n, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	int64_t a = 1, b = 1;
	for (int i = 0; i < x->rank; i++)
		*(i < axis ? &a : &b) *= x->dims[i];
	int64_t d[2] = { a, b };
	return cc_set_shape(T(c, n->out[0]), x->dtype, 2, d);
}

int infer_reshape(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (n->nin < 2 || n->in[1] < 0 || !T(c, n->in[1])->data ||
	    T(c, n->in[1])->dtype != CC_I64)
		return NODE_FAIL(c, n, "a shape that is not a constant is not supported yet");
	struct cc_tensor *st = T(c, n->in[1]);
	int rank = (int)cc_tensor_numel(st);
	if (rank > CC_MAX_RANK)
		return NODE_FAIL(c, n, "rank %d is not supported yet", rank);
	const int64_t *sv = st->data;
	int64_t d[CC_MAX_RANK], known = 1, total = cc_tensor_numel(x);
	int infer = -1, allowzero = (int)cc_attr_int(n, "allowzero", 0);
	/* ONNX's rules, checked: a wrong shape must be an error, not a
	 * reshape that pads with zeros or drops elements */
	for (int i = 0; i < rank; i++) {
		if (sv[i] == 0 && !allowzero && i >= x->rank)
			return NODE_FAIL(c, n, "shape[%d] = 0 copies a dimension the input (rank %d) "
					 "does not have", i, x->rank);
		d[i] = sv[i] == 0 && !allowzero ? x->dims[i] : sv[i];
		if (d[i] < -1)
			return NODE_FAIL(c, n, "shape[%d] = %lld is negative", i, (long long)d[i]);
		if (d[i] == -1) {
			if (infer >= 0)
				return NODE_FAIL(c, n, "shape has more than one -1");
			infer = i;
		} else if (__builtin_mul_overflow(known, d[i], &known)) {
			return NODE_FAIL(c, n, "shape's element count overflows");
		}
	}
	if (infer >= 0) {
		if (known && total % known)
			return NODE_FAIL(c, n, "the input's %lld elements do not fill a shape of %lld "
					 "elements per -1", (long long)total, (long long)known);
		d[infer] = known ? total / known : 0; /* (an empty shape: ONNX leaves it open) */
	} else if (known != total) {
		char xs[160];
		cc_shape_str(x, xs, sizeof xs);
		return NODE_FAIL(c, n, "the input %s has %lld elements, the shape asks for %lld", xs,
				 (long long)total, (long long)known);
	}
	return cc_set_shape(T(c, n->out[0]), x->dtype, rank, d);
}

int infer_transpose(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t perm[CC_MAX_RANK], d[CC_MAX_RANK];
	const struct cc_attr *a = cc_attr_find(n, "perm");
	if (a && a->type == CC_ATTR_INTS && a->n != (size_t)x->rank)
		return NODE_FAIL(c, n, "perm has %zu axes; the input has %d", a->n, x->rank);
	for (int i = 0; i < x->rank; i++)
		perm[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i]
									    : x->rank - 1 - i;
	for (int i = 0; i < x->rank; i++) {
		if (perm[i] < 0 || perm[i] >= x->rank)
			return NODE_FAIL(c, n, "perm has an axis out of range");
		d[i] = x->dims[perm[i]];
	}
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

int infer_concat(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t axis = cc_attr_int(n, "axis", 0), d[CC_MAX_RANK];
	if (axis < 0)
		axis += x->rank;
	memcpy(d, x->dims, sizeof d);
	for (int k = 1; k < n->nin; k++) {
		if (cc_need_known(c, n, k))
			return -1;
		struct cc_tensor *y = T(c, n->in[k]);
		if (y->rank != x->rank)
			return NODE_FAIL(c, n, "inputs of different ranks");
		d[axis] += y->dims[axis];
	}
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

/* Dropout: y as x; the mask, bool of x's shape */
int infer_dropout(struct cc_ctx *c, struct cc_node *n)
{
	if (infer_same(c, n))
		return -1;
	const struct cc_tensor *x = T(c, n->in[0]);
	if (n->nout > 1 && n->out[1] >= 0)
		return cc_set_shape(T(c, n->out[1]), CC_BOOL, x->rank, x->dims);
	return 0;
}

int lower_identity(struct cc_ctx *c, struct cc_node *n)
{
	int mask = n->nout > 1 && n->out[1] >= 0 && cc_tensor_uses(&c->g, n->out[1]);
	if (mask && strcmp(n->op, "Dropout"))
		return NODE_FAIL(c, n, "the mask output is not supported yet");
	if (!strcmp(n->op, "Dropout") && n->nin > 2 && n->in[2] >= 0) {
		/* training mode drops at random unless the ratio is a constant 0 */
		const struct cc_tensor *tm = T(c, n->in[2]);
		const struct cc_tensor *ra = n->nin > 1 && n->in[1] >= 0 ? T(c, n->in[1]) : NULL;
		int off = tm->data && tm->nbytes >= 1 && !*(const uint8_t *)tm->data;
		int zero = ra && ra->data && ra->dtype == CC_F32 && !*(const float *)ra->data;
		if (!off && !zero)
			return NODE_FAIL(c, n, "training mode is not supported yet (it drops at random "
					       "unless the ratio is a constant 0; this ratio is %s)",
					 ra && !ra->data ? "a run-time input" : "not 0");
	}
	if (mask) { /* nothing is dropped: the mask is all true, a constant */
		struct cc_tensor *m = T(c, n->out[1]);
		int64_t cnt = cc_tensor_numel(m);
		if (cnt < 0 || m->data || m->dtype != CC_BOOL)
			return NODE_FAIL(c, n, "a mask output that is not a bool tensor of known "
					       "shape is not supported yet");
		uint8_t *ones = malloc((size_t)(cnt ? cnt : 1));
		if (!ones)
			return NODE_FAIL(c, n, "out of memory");
		memset(ones, 1, (size_t)(cnt ? cnt : 1));
		m->data = ones;
		m->nbytes = (size_t)cnt;
		if (cc_weight_place_act(c, n, n->out[1]))
			return -1;
	}
	return cc_alias(c, n);
}

int lower_view(struct cc_ctx *c, struct cc_node *n)
{
	return cc_view_into(c, n, n->in[0], n->out[0]);
}

/* Concat along any axis, one kernel per input, in order (the last-axis
 * kernel merges with what its left neighbour wrote).  Along an axis that is
 * not the lane axis, or along NC1HWC0's channels when every input but the
 * last fills whole C1 blocks, each input is a strided copy of whole blocks:
 * chunks of the input's extent along the axis times the blocks inside it.
 * Along ND's padded last axis the lanes move (cc_gen_concat_last). */
static int concat_into(struct cc_ctx *c, struct cc_node *n, const int *ins, int nin, int out,
		       int64_t axis)
{
	struct cc_tensor *y = T(c, out);
	int r = y->rank;
	int nc = r == 4;
	if (cc_ws_place(c, out))
		return -1;
	/* the block grid: NC1HWC0 [N][C1][H][W], ND [d0].. [d(r-2)][C16/16] */
	int lane = nc ? 1 : r - 1;
	int64_t at = 0; /* elements along axis before this input */
	for (int k = 0; k < nin; k++) {
		int xi = ins[k];
		struct cc_tensor *x = T(c, xi);
		int64_t ext = x->dims[axis];
		if (ext == 0)
			continue;
		if (nc && axis == lane && at % 16 == 0 && c->dev[xi].where == W_WS &&
		    c->dev[xi].storage == c->dev[out].storage &&
		    c->dev[xi].view.off == c->dev[out].view.off + (uint64_t)(at / 16 * y->dims[2] *
								     y->dims[3] * 32)) {
			at += ext; /* written in place by its producer (plan_concat.c) */
			c->concat_inplace++;
			continue;
		}
		if (ins == n->in) {
			cc_log(&c->log, "  concat: '%s' input %d ('%s') copied: %s", n->name, k,
			       x->name, cc_concat_why(c, n, k));
			c->concat_copies++;
		}
		struct task *t = cc_task_new(c, n->name, "Concat");
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		char msg[256];
		int64_t yoff = 0;
		if (!nc && axis == lane) {
			int64_t rows = 1;
			for (int i = 0; i + 1 < r; i++)
				rows *= y->dims[i];
			if (cc_gen_concat_last(c->cfg, rows, ext, at, y->dims[axis], &t->prog,
					       &t->block_dim, msg, sizeof msg))
				return NODE_FAIL(c, n, "%s", msg);
		} else {
			int64_t sx[CC_MAX_RANK], sy[CC_MAX_RANK], outer = 1;
			cc_dev_strides(x, sx);
			cc_dev_strides(y, sy);
			for (int i = 0; i < axis; i++)
				outer *= i == lane ? cc_pad16(y->dims[i]) / 16 : y->dims[i];
			/* the axis' block extent: along the channels whole C1 blocks */
			int64_t blk = axis == lane ? (ext + 15) / 16 : ext;
			/* images a stride apart inside a concat buffer (cc_c1_stride) */
			int64_t xs = nc && axis == 1 ? cc_c1_stride(c, xi) : blk;
			int64_t ys = nc && axis == 1 ? cc_c1_stride(c, out)
				     : axis == lane ? (y->dims[axis] + 15) / 16
						    : y->dims[axis];
			if (cc_gen_copy(c->cfg, outer, blk * sx[axis] * 32, xs * sx[axis] * 32,
					ys * sy[axis] * 32,
					&t->prog, &t->block_dim, msg, sizeof msg))
				return NODE_FAIL(c, n, "%s", msg);
			yoff = (axis == lane ? at / 16 : at) * sy[axis] * 32;
		}
		cc_arg_tensor(c, t, xi);
		cc_arg_tensor(c, t, out);
		t->args[1].value += yoff; /* added to the planned offset */
		cc_io_dev(c, t, 0, xi);
		cc_io_dev(c, t, 1, out);
		at += ext;
	}
	return 0;
}

/* Along NC1HWC0's channels when an input but the last does not fill whole
 * C1 blocks (its successor would start inside a block), the inputs are
 * relaid out as ND [N, C_k, H*W], concatenated along that leading axis, and
 * the result relaid out back (relayouts through fp32: slow, exact). */
int lower_concat(struct cc_ctx *c, struct cc_node *n)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	int r = y->rank;
	int64_t axis = cc_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += r;
	if (r < 1 || axis < 0 || axis >= r)
		return NODE_FAIL(c, n, "Concat's axis is out of range");
	if (n->nin > 64)
		return NODE_FAIL(c, n, "Concat of more than 64 inputs is not supported yet");
	/* empty inputs add nothing: the concat of the others */
	int full[64], nfull = 0;
	for (int k = 0; k < n->nin; k++)
		if (cc_tensor_numel(T(c, n->in[k])) != 0)
			full[nfull++] = n->in[k];
	if (nfull < n->nin) {
		int *in = n->in, nin = n->nin;
		n->in = full;
		n->nin = nfull;
		int rc = lower_concat(c, n);
		n->in = in;
		n->nin = nin;
		return rc;
	}
	for (int k = 0; k < n->nin; k++)
		if (cc_act_input(c, n, n->in[k]))
			return -1;
	int split = 0;
	if (r == 4 && axis == 1)
		for (int k = 0; k + 1 < n->nin; k++)
			split |= T(c, n->in[k])->dims[1] % 16 != 0;
	if (!split)
		return concat_into(c, n, n->in, n->nin, out, axis);
	cc_log(&c->log, "  concat: '%s' copied through relayouts: %s", n->name,
	       cc_concat_why(c, n, 0));
	c->concat_copies += n->nin;
	int ins[64];
	int64_t e3[3] = { y->dims[0], y->dims[1], y->dims[2] * y->dims[3] };
	for (int k = 0; k < n->nin; k++) {
		struct cc_tensor *x = T(c, n->in[k]);
		int64_t d3[3] = { x->dims[0], x->dims[1], x->dims[2] * x->dims[3] };
		if ((ins[k] = cc_temp_new(c, n, 3, d3)) < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, n->in[k], ins[k]))
			return -1;
	}
	int y3 = cc_temp_new(c, n, 3, e3);
	if (y3 < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (concat_into(c, n, ins, n->nin, y3, 1))
		return -1;
	return cc_relayout(c, n, y3, out);
}

/* Pad's parameters: pads (rank begins, then rank ends), mode and value; as
 * attributes before opset 11, as constant inputs from it (axes from 18). */
static int pad_params(struct cc_ctx *c, struct cc_node *n, int rank, int64_t *pads,
		      enum cc_pad_mode *mode, float *value)
{
	const struct cc_attr *m = cc_attr_find(n, "mode");
	*mode = CC_PAD_CONSTANT;
	*value = 0;
	if (m && m->s && !strcmp(m->s, "reflect"))
		*mode = CC_PAD_REFLECT;
	else if (m && m->s && !strcmp(m->s, "edge"))
		*mode = CC_PAD_EDGE;
	else if (m && m->s && strcmp(m->s, "constant"))
		return NODE_FAIL(c, n, "mode '%s' is not supported yet", m->s);
	for (int i = 0; i < 2 * rank; i++)
		pads[i] = 0;
	if (n->nin < 2 || n->in[1] < 0) {
		const struct cc_attr *a = cc_attr_find(n, "pads");
		if (!a || a->type != CC_ATTR_INTS || a->n != (size_t)(2 * rank))
			return NODE_FAIL(c, n, "pads that are not %d values are not supported yet",
					 2 * rank);
		for (int i = 0; i < 2 * rank; i++)
			pads[i] = a->ints[i];
		*value = cc_attr_float(n, "value", 0.0f);
		return 0;
	}
	const struct cc_tensor *pt = T(c, n->in[1]);
	if (!pt->data || pt->dtype != CC_I64)
		return NODE_FAIL(c, n, "pads that are not a constant are not supported yet");
	const int64_t *pv = pt->data;
	int64_t np = cc_tensor_numel(pt);
	if (n->nin > 3 && n->in[3] >= 0) {
		const struct cc_tensor *at = T(c, n->in[3]);
		int64_t na = cc_tensor_numel(at);
		if (!at->data || (at->dtype != CC_I64 && at->dtype != CC_I32) || np != 2 * na)
			return NODE_FAIL(c, n, "axes that are not a constant are not supported yet");
		for (int64_t k = 0; k < na; k++) {
			int64_t ax = at->dtype == CC_I64 ? ((const int64_t *)at->data)[k]
							  : ((const int32_t *)at->data)[k];
			if (ax < 0)
				ax += rank;
			if (ax < 0 || ax >= rank)
				return NODE_FAIL(c, n, "axis %lld is out of range", (long long)ax);
			pads[ax] = pv[k];
			pads[ax + rank] = pv[k + na];
		}
	} else {
		if (np != 2 * rank)
			return NODE_FAIL(c, n, "pads that are not %d values are not supported yet",
					 2 * rank);
		for (int i = 0; i < 2 * rank; i++)
			pads[i] = pv[i];
	}
	if (n->nin > 2 && n->in[2] >= 0) {
		const struct cc_tensor *vt = T(c, n->in[2]);
		/* integer tensors pad with an integer of their type (fp16 on the
		 * device, as their values are) */
		if (!vt->data || cc_tensor_numel(vt) != 1 ||
		    (vt->dtype != CC_F32 && vt->dtype != CC_F16 && vt->dtype != CC_I32 &&
		     vt->dtype != CC_I64 && vt->dtype != CC_I8 && vt->dtype != CC_U8 &&
		     vt->dtype != CC_BOOL))
			return NODE_FAIL(c, n, "a constant_value that is not a constant scalar is "
					       "not supported yet");
		switch (vt->dtype) {
		case CC_F32:
			*value = *(const float *)vt->data;
			break;
		case CC_F16:
			*value = dv_f16_to_f32(*(const uint16_t *)vt->data);
			break;
		case CC_I32:
			*value = (float)*(const int32_t *)vt->data;
			break;
		case CC_I64:
			*value = (float)*(const int64_t *)vt->data;
			break;
		case CC_I8:
			*value = (float)*(const int8_t *)vt->data;
			break;
		default: /* uint8, bool */
			*value = (float)*(const uint8_t *)vt->data;
			break;
		}
	}
	return 0;
}

int infer_pad(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t pads[2 * CC_MAX_RANK], d[CC_MAX_RANK];
	enum cc_pad_mode mode;
	float value;
	if (pad_params(c, n, x->rank, pads, &mode, &value))
		return -1;
	for (int i = 0; i < x->rank; i++) {
		d[i] = x->dims[i] + pads[i] + pads[i + x->rank];
		/* negative pads crop; what is left must not be empty */
		if (d[i] < 1 || x->dims[i] + (pads[i] < 0 ? pads[i] : 0) +
					(pads[i + x->rank] < 0 ? pads[i + x->rank] : 0) < 1)
			return NODE_FAIL(c, n, "pads that crop axis %d to nothing are not supported "
					       "yet", i);
	}
	return cc_set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

/* Pad of xi into out along the axes that are not the lane axis (pads[lane]
 * and pads[lane + r] are ignored: out's lane extent must be xi's). */
static int pad_grid(struct cc_ctx *c, struct cc_node *n, int xi, int out, const int64_t *pads,
		    enum cc_pad_mode mode, float value)
{
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int r = x->rank, nc = r == 4, lane = nc ? 1 : r - 1;
	struct cc_pad pd = { .rank = r, .chan_axis = -1, .mode = mode, .value = value };
	for (int q = 0; q < r; q++) {
		pd.xcnt[q] = q == lane ? (x->dims[q] + 15) / 16 : x->dims[q];
		pd.ycnt[q] = q == lane ? (y->dims[q] + 15) / 16 : y->dims[q];
		pd.before[q] = q == lane ? 0 : pads[q];
	}
	if (nc) {
		pd.chan_axis = 1;
		pd.chan_valid = x->dims[1] % 16 ? x->dims[1] % 16 : 16;
	}
	struct task *t = cc_output_task(c, n, out);
	if (!t)
		return -1;
	char msg[256];
	if (cc_gen_pad(c->cfg, &pd, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	return 0;
}

/* Pad along ND's last axis (its lanes) of xi into out, the other axes
 * equal: every output column is an input column (edge: the end one;
 * reflect: its mirror) or the value, a column map (cc_gen_colmap). */
static int pad_last(struct cc_ctx *c, struct cc_node *n, int xi, int out, int64_t before,
		    enum cc_pad_mode mode, float value)
{
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int64_t xc = x->dims[x->rank - 1], yc = y->dims[y->rank - 1], rows = 1;
	for (int q = 0; q + 1 < x->rank; q++)
		rows *= x->dims[q];
	int64_t *map = malloc((size_t)yc * sizeof *map);
	if (!map)
		return NODE_FAIL(c, n, "out of memory");
	for (int64_t j = 0; j < yc; j++) {
		int64_t i = j - before;
		if (i < 0 || i >= xc)
			i = mode == CC_PAD_CONSTANT ? -1
			    : mode == CC_PAD_EDGE  ? (i < 0 ? 0 : xc - 1)
						   : cc_pad_reflect(i, xc);
		map[j] = i;
	}
	struct task *t = cc_output_task(c, n, out);
	char msg[256];
	int rc = !t || cc_gen_colmap(c->cfg, rows, xc, yc, map, value, &t->prog, &t->block_dim,
				     msg, sizeof msg);
	free(map);
	if (rc)
		return t ? NODE_FAIL(c, n, "%s", msg) : -1;
	cc_one_in_one_out(c, t, xi, out);
	return 0;
}

/* Pad.  Negative pads crop first (ONNX Runtime's order): a Slice of the
 * kept box (cc_box_copy).  Along the lane axis: ND's last axis pads the
 * other axes first (the block-grid kernel, into a temporary) then the lanes
 * (a column map); NC1HWC0's channels go through an ND [N, C, H*W]
 * relayout, where C is a leading axis the block-grid kernel pads, and back
 * (relayouts through fp32: slow, exact). */
int lower_pad(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int r = x->rank;
	int64_t pads[2 * CC_MAX_RANK];
	enum cc_pad_mode mode;
	float value;
	if (pad_params(c, n, r, pads, &mode, &value))
		return -1;
	if (r < 1 || r > CC_PAD_MAX_RANK)
		return NODE_FAIL(c, n, "Pad of rank %d is not supported yet", r);
	int nc = r == 4, lane = nc ? 1 : r - 1;
	if (cc_act_input(c, n, xi))
		return -1;
	int64_t b[CC_MAX_RANK], kept[CC_MAX_RANK], crop = 0;
	for (int q = 0; q < r; q++) {
		b[q] = pads[q] < 0 ? -pads[q] : 0;
		kept[q] = x->dims[q] - b[q] - (pads[q + r] < 0 ? -pads[q + r] : 0);
		crop |= pads[q] < 0 || pads[q + r] < 0;
	}
	if (crop) {
		int pos = 0;
		for (int q = 0; q < 2 * r; q++) {
			pads[q] = pads[q] < 0 ? 0 : pads[q];
			pos |= pads[q] > 0;
		}
		if (!pos) /* only cropping: the Slice is the Pad */
			return cc_box_copy(c, n, xi, b, NULL, out);
		int kx = cc_temp_new(c, n, r, kept);
		if (kx < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_box_copy(c, n, xi, b, NULL, kx))
			return -1;
		xi = kx;
		x = T(c, xi);
		y = T(c, out);
	}
	if (!pads[lane] && !pads[lane + r])
		return pad_grid(c, n, xi, out, pads, mode, value);
	int64_t d[CC_MAX_RANK], other = 0;
	for (int q = 0; q < r; q++) {
		d[q] = q == lane ? x->dims[q] : y->dims[q];
		other |= q != lane && (pads[q] || pads[q + r]);
	}
	int src = xi;
	if (other && ((src = cc_temp_new(c, n, r, d)) < 0 ||
		      pad_grid(c, n, xi, src, pads, mode, value)))
		return src < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
	if (!nc)
		return pad_last(c, n, src, out, pads[lane], mode, value);
	/* NC1HWC0: the channels as a leading axis of ND [N, C, H*W] */
	x = T(c, xi); /* cc_temp_new may have moved the tensors */
	y = T(c, out);
	int64_t d3[3] = { d[0], x->dims[1], d[2] * d[3] }, e3[3] = { d[0], y->dims[1], d3[2] };
	int64_t p3[6] = { 0, pads[1], 0, 0, pads[1 + r], 0 };
	int x3 = cc_temp_new(c, n, 3, d3), y3 = x3 < 0 ? -1 : cc_temp_new(c, n, 3, e3);
	if (y3 < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_relayout(c, n, src, x3) || pad_grid(c, n, x3, y3, p3, mode, value))
		return -1;
	return cc_relayout(c, n, y3, out);
}

/* Transpose: the identity is a view; swapping the last two axes of a 2-D or
 * 3-D activation is the vtranspose kernel built for it; any other
 * permutation (any rank, NC1HWC0 included) is the general block kernel,
 * cc_gen_permute, over both tensors' device layouts. */
int lower_transpose(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	const struct cc_attr *a = cc_attr_find(n, "perm");
	int64_t perm[CC_MAX_RANK];
	int ident = 1, swap_last = x->rank >= 2;
	for (int i = 0; i < x->rank; i++) {
		perm[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i]
									    : x->rank - 1 - i;
		ident &= perm[i] == i;
		if (i < x->rank - 2)
			swap_last &= perm[i] == i;
	}
	if (ident)
		return lower_identity(c, n);
	/* moving only axes of size 1 ([1,S,E] -> [S,1,E]) keeps every byte in
	 * place when the last axis stays last and neither side is NC1HWC0 */
	int keeps = x->rank != 4 && perm[x->rank - 1] == x->rank - 1;
	for (int i = 0, prev = -1; keeps && i < x->rank; i++)
		if (x->dims[perm[i]] != 1) {
			keeps = perm[i] > prev;
			prev = (int)perm[i];
		}
	if (keeps)
		return lower_view(c, n);
	/* read in place by the MatMuls it feeds (their operands' views) */
	if (cc_transpose_folds(c, n))
		return 0;
	if (x->rank > CC_PERM_MAX_RANK)
		return NODE_FAIL(c, n, "Transpose of rank %d is not supported yet", x->rank);
	if (cc_act_input(c, n, xi))
		return -1;
	swap_last &= x->rank >= 2 && perm[x->rank - 2] == x->rank - 1 &&
		     perm[x->rank - 1] == x->rank - 2;
	struct task *t = cc_output_task(c, n, out);
	if (!t)
		return -1;
	char msg[256];
	int done = 0;
	if (swap_last && x->rank <= 3) {
		int64_t batch = x->rank == 3 ? x->dims[0] : 1;
		/* it refuses long rows; the general kernel takes those */
		done = !cc_gen_transpose(c->cfg, batch, x->dims[x->rank - 2],
					 x->dims[x->rank - 1], &t->prog, &t->block_dim, msg,
					 sizeof msg);
		if (!done) {
			cc_prog_free(&t->prog);
			cc_prog_init(&t->prog);
		}
	}
	if (!done) {
		struct cc_perm pm = { .rank = x->rank };
		int64_t sx[CC_MAX_RANK];
		int lx = cc_dev_strides(x, sx);
		pm.lane_y = cc_dev_strides(T(c, out), pm.sy);
		for (int q = 0; q < x->rank; q++) {
			pm.dims[q] = x->dims[perm[q]];
			pm.sx[q] = sx[perm[q]];
			if (perm[q] == lx)
				pm.lane_x = q;
		}
		if (cc_gen_permute(c->cfg, &pm, &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
	}
	cc_one_in_one_out(c, t, xi, out);
	return 0;
}

/* ---- Resize, Upsample (kern_resize.c) ----------------------------------- */

struct resize_spec {
	int taps; /* 1 nearest, 2 linear, 4 cubic */
	double cubic_a;
	int exclude;
	enum cc_resize_ctm ctm;
	enum cc_resize_nearest nm;
	double sh, sw; /* the scales the coordinates use */
	int64_t ho, wo;
	double roi[8]; /* tf_crop_and_resize: starts, then ends, per axis */
	float extrapolation;
};

static const char *str_attr(const struct cc_node *n, const char *name, const char *dflt)
{
	const struct cc_attr *a = cc_attr_find(n, name);
	return a && a->type == CC_ATTR_STRING && a->s ? a->s : dflt;
}

/* Mode, coordinates and output size of a Resize (opset 10..19) or Upsample
 * (opset 7, 9): scales or sizes must be constants (or frozen inputs). */
static int resize_spec(struct cc_ctx *c, struct cc_node *n, struct resize_spec *rp)
{
	if (cc_need4(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int upsample = !strcmp(n->op, "Upsample");
	int old = upsample || c->g.opset < 11; /* Upsample and Resize-10: asymmetric, floor */
	const char *mode = str_attr(n, "mode", "nearest");
	if (!strcmp(mode, "nearest"))
		rp->taps = 1;
	else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear"))
		rp->taps = 2;
	else if (!strcmp(mode, "cubic") && !upsample)
		rp->taps = 4;
	else
		return NODE_FAIL(c, n, "%s mode '%s' is not supported yet (nearest, linear and "
				       "cubic only)", n->op, mode);
	for (int i = 0; i < 8; i++)
		rp->roi[i] = i < 4 ? 0 : 1;
	rp->extrapolation = 0;
	rp->cubic_a = cc_attr_float(n, "cubic_coeff_a", -0.75f);
	rp->exclude = (int)cc_attr_int(n, "exclude_outside", 0);
	const char *ctm = str_attr(n, "coordinate_transformation_mode",
				   old ? "asymmetric" : "half_pixel");
	if (!strcmp(ctm, "half_pixel"))
		rp->ctm = CC_CTM_HALF_PIXEL;
	else if (!strcmp(ctm, "pytorch_half_pixel"))
		rp->ctm = CC_CTM_PYTORCH_HALF_PIXEL;
	else if (!strcmp(ctm, "asymmetric"))
		rp->ctm = CC_CTM_ASYMMETRIC;
	else if (!strcmp(ctm, "align_corners"))
		rp->ctm = CC_CTM_ALIGN_CORNERS;
	else if (!strcmp(ctm, "tf_half_pixel_for_nn"))
		rp->ctm = CC_CTM_TF_HALF_PIXEL_FOR_NN;
	else if (!strcmp(ctm, "tf_crop_and_resize") && !upsample && c->g.opset >= 11)
		rp->ctm = CC_CTM_TF_CROP_AND_RESIZE;
	else
		return NODE_FAIL(c, n, "coordinate_transformation_mode '%s' is not supported yet",
				 ctm);
	const char *nm = str_attr(n, "nearest_mode", old ? "floor" : "round_prefer_floor");
	if (!strcmp(nm, "round_prefer_floor"))
		rp->nm = CC_NEAREST_ROUND_PREFER_FLOOR;
	else if (!strcmp(nm, "round_prefer_ceil"))
		rp->nm = CC_NEAREST_ROUND_PREFER_CEIL;
	else if (!strcmp(nm, "floor"))
		rp->nm = CC_NEAREST_FLOOR;
	else if (!strcmp(nm, "ceil"))
		rp->nm = CC_NEAREST_CEIL;
	else
		return NODE_FAIL(c, n, "nearest_mode '%s' is not supported yet", nm);
	if (cc_attr_int(n, "antialias", 0))
		return NODE_FAIL(c, n, "antialias is not supported yet");
	if (cc_attr_find(n, "axes"))
		return NODE_FAIL(c, n, "the axes attribute is not supported yet");
	if (strcmp(str_attr(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
		return NODE_FAIL(c, n, "keep_aspect_ratio_policy other than stretch is not "
				       "supported yet");
	double s[4] = { 1, 1, 1, 1 };
	int64_t sz[4] = { 0 };
	int have = 0; /* 1 scales, 2 sizes */
	int si = -1, zi = -1;
	if (upsample || c->g.opset < 11)
		si = n->nin > 1 ? n->in[1] : -1;
	else {
		si = n->nin > 2 ? n->in[2] : -1;
		zi = n->nin > 3 ? n->in[3] : -1;
	}
	const struct cc_attr *sa = cc_attr_find(n, "scales");
	if (upsample && sa && sa->type == CC_ATTR_FLOATS && sa->n == 4) {
		for (int i = 0; i < 4; i++)
			s[i] = sa->floats[i];
		have = 1;
	}
	if (si >= 0 && cc_tensor_numel(T(c, si)) != 0) {
		struct cc_tensor *st = T(c, si);
		if (!st->data || st->dtype != CC_F32 || cc_tensor_numel(st) != 4)
			return NODE_FAIL(c, n, "scales that are not a constant of 4 float32 values "
					       "are not supported yet");
		for (int i = 0; i < 4; i++)
			s[i] = ((const float *)st->data)[i];
		have = 1;
	}
	if (zi >= 0 && cc_tensor_numel(T(c, zi)) != 0) {
		struct cc_tensor *zt = T(c, zi);
		if (!zt->data || zt->dtype != CC_I64 || cc_tensor_numel(zt) != 4)
			return NODE_FAIL(c, n, "sizes that are not a constant of 4 int64 values are "
					       "not supported yet");
		for (int i = 0; i < 4; i++)
			sz[i] = ((const int64_t *)zt->data)[i];
		have = 2;
	}
	if (!have)
		return NODE_FAIL(c, n, "%s without constant scales or sizes is not supported yet",
				 n->op);
	if (rp->ctm == CC_CTM_TF_CROP_AND_RESIZE) {
		/* the crop box (roi, input 1): N and C must keep all of theirs */
		const struct cc_tensor *rt = n->nin > 1 && n->in[1] >= 0 ? T(c, n->in[1]) : NULL;
		if (!rt || !rt->data || rt->dtype != CC_F32 || cc_tensor_numel(rt) != 8)
			return NODE_FAIL(c, n, "tf_crop_and_resize with a roi that is not a constant "
					       "of 8 float32 values is not supported yet");
		for (int i = 0; i < 8; i++)
			rp->roi[i] = ((const float *)rt->data)[i];
		if (rp->roi[0] != 0 || rp->roi[1] != 0 || rp->roi[4] != 1 || rp->roi[5] != 1)
			return NODE_FAIL(c, n, "tf_crop_and_resize cropping N or C is not supported "
					       "yet");
		rp->extrapolation = cc_attr_float(n, "extrapolation_value", 0.0f);
	}
	if (have == 2) {
		if (sz[0] != x->dims[0] || sz[1] != x->dims[1])
			return NODE_FAIL(c, n, "resizing N or C is not supported yet");
		rp->ho = sz[2];
		rp->wo = sz[3];
		rp->sh = (double)sz[2] / (double)x->dims[2];
		rp->sw = (double)sz[3] / (double)x->dims[3];
	} else {
		if (s[0] != 1 || s[1] != 1)
			return NODE_FAIL(c, n, "resizing N or C is not supported yet");
		rp->ho = (int64_t)floor((double)x->dims[2] * s[2]);
		rp->wo = (int64_t)floor((double)x->dims[3] * s[3]);
		rp->sh = s[2];
		rp->sw = s[3];
	}
	if (rp->ho < 1 || rp->wo < 1 || x->dims[2] < 1 || x->dims[3] < 1)
		return NODE_FAIL(c, n, "an empty output (%lldx%lld) is not supported yet",
				 (long long)rp->ho, (long long)rp->wo);
	return 0;
}

int infer_resize(struct cc_ctx *c, struct cc_node *n)
{
	struct resize_spec rp;
	if (resize_spec(c, n, &rp))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t d[4] = { x->dims[0], x->dims[1], rp.ho, rp.wo };
	return cc_set_shape(T(c, n->out[0]), x->dtype, 4, d);
}

int lower_resize(struct cc_ctx *c, struct cc_node *n)
{
	struct resize_spec rp;
	if (resize_spec(c, n, &rp))
		return -1;
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	int64_t h = x->dims[2], w = x->dims[3], ho = rp.ho, wo = rp.wo;
	int taps = rp.taps;
	int64_t *ix = malloc((size_t)(taps * (ho + wo)) * sizeof *ix);
	float *fx = malloc((size_t)(taps * (ho + wo)) * sizeof *fx);
	uint8_t *outside = malloc((size_t)(ho + wo));
	uint16_t *tab = NULL;
	int rc = -1;
	if (!ix || !fx || !outside) {
		NODE_FAIL(c, n, "out of memory");
		goto done;
	}
	int crop = rp.ctm == CC_CTM_TF_CROP_AND_RESIZE;
	int64_t c1 = cc_pad16(x->dims[1]) / 16;
	struct cc_resize rs = { x->dims[0] * c1, h, w, ho, wo, taps, ix, ix + taps * ho, fx,
				fx + taps * ho, crop ? outside : NULL, crop ? outside + ho : NULL,
				rp.extrapolation, c1, x->dims[1] - 16 * (c1 - 1) };
	struct cc_resize_axis_spec ah = { h, ho, rp.sh, rp.ctm, rp.nm, taps, rp.cubic_a,
					  rp.exclude, rp.roi[2], rp.roi[6] },
				   aw = { w, wo, rp.sw, rp.ctm, rp.nm, taps, rp.cubic_a,
					  rp.exclude, rp.roi[3], rp.roi[7] };
	cc_resize_axis(&ah, ix, fx, crop ? outside : NULL);
	cc_resize_axis(&aw, ix + taps * ho, fx + taps * ho, crop ? outside + ho : NULL);
	int64_t off = -1;
	if (taps > 1) {
		int64_t bytes = cc_resize_table_bytes(&rs);
		tab = malloc((size_t)bytes);
		if (!tab) {
			NODE_FAIL(c, n, "out of memory");
			goto done;
		}
		cc_resize_table(&rs, tab);
		off = cc_weight_add(c, tab, (uint64_t)bytes);
		if (off < 0) {
			NODE_FAIL(c, n, "out of memory");
			goto done;
		}
	}
	if (cc_ws_place(c, out))
		goto done;
	struct task *t = cc_task_new(c, n->name, n->op);
	if (!t) {
		NODE_FAIL(c, n, "out of memory");
		goto done;
	}
	char msg[256];
	if (cc_gen_resize(c->cfg, &rs, &t->prog, &t->block_dim, msg, sizeof msg)) {
		NODE_FAIL(c, n, "%s", msg);
		goto done;
	}
	cc_arg_tensor(c, t, xi);
	if (taps > 1)
		t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 0, xi);
	cc_io_dev(c, t, 1, out);
	t->flops = taps > 1 ? 2 * (uint64_t)taps * (uint64_t)cc_tensor_numel(T(c, out)) : 0;
	rc = 0;
done:
	free(ix);
	free(fx);
	free(outside);
	free(tab);
	return rc;
}

/* Squeeze / Unsqueeze: axes an attribute before opset 13, a constant
 * input from it; lowered as views (lower_view). */
int infer_squeeze(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int unsq = !strcmp(n->op, "Unsqueeze");
	int64_t axes[CC_MAX_RANK], na = 0, *v = NULL;
	const struct cc_attr *a = cc_attr_find(n, "axes");
	if (n->nin > 1 && n->in[1] >= 0) {
		if (!(v = cc_const_ints(c, n->in[1], &na)))
			return NODE_FAIL(c, n, "axes that are not a constant are not supported yet");
	} else if (a && a->type == CC_ATTR_INTS) {
		na = (int64_t)a->n;
		v = malloc((a->n + 1) * sizeof *v);
		if (v)
			memcpy(v, a->ints, a->n * sizeof *v);
	}
	int r = unsq ? x->rank + (int)na : x->rank;
	if (na > CC_MAX_RANK || r > CC_MAX_RANK || (na && !v)) {
		free(v);
		return NODE_FAIL(c, n, "too many axes");
	}
	for (int64_t i = 0; i < na; i++)
		axes[i] = v[i] < 0 ? v[i] + r : v[i];
	free(v);
	unsigned set = 0;
	for (int64_t i = 0; i < na; i++) {
		if (axes[i] < 0 || axes[i] >= r || (set >> axes[i] & 1))
			return NODE_FAIL(c, n, "axes out of range or repeated");
		set |= 1u << axes[i];
	}
	int64_t d[CC_MAX_RANK];
	int k = 0;
	for (int i = 0, s = 0; i < r; i++) {
		if (unsq)
			d[k++] = set >> i & 1 ? 1 : x->dims[s++];
		else if (set >> i & 1 ? x->dims[i] != 1 : 0)
			return NODE_FAIL(c, n, "squeezing an axis that is not 1");
		else if (!(set >> i & 1) && (na || x->dims[i] != 1))
			d[k++] = x->dims[i];
	}
	return cc_set_shape(T(c, n->out[0]), x->dtype, k, d);
}
