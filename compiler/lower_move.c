/* lower_move.c: tasks that copy or broadcast one tensor's elements into
 * another tensor of any layout, for every family's lowering: a box of x
 * (cc_box_copy: Slice, Split, Pad's crop), any numpy broadcast of two
 * operands (cc_bcast_nd: binary ops, Expand) and x broadcast into a tensor
 * of the output's shape (cc_expand_into: Expand, logic operands, a MatMul's
 * bias).  A leaf: it calls lower_util.c and the kernel generators only. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"

/* Whether the box b of x (steps sp, the lanes in place) is a view of x's
 * bytes, as ATC plans a Split or Slice of whole blocks: the sliced axes
 * come after axes of extent 1 (one contiguous range), or NC1HWC0's
 * channels of several images when every reader takes images a stride
 * apart (plan_concat.c's rule); a slice that ends inside a channel block
 * of x would show x's next channels in its pad lanes, so it must end at
 * x's end or on a block boundary.  Returns the view's channel-block
 * stride (0: dense), or -1 for a copy. */
static int64_t slice_view(struct cc_ctx *c, int xi, int out, const int64_t *b,
			  const int64_t *sp)
{
	const struct cc_tensor *x = T(c, xi), *y = T(c, out);
	const struct dev_tensor *d = &c->dev[xi];
	int r = x->rank, lane = cc_lane_axis(x), i0 = -1;
	if (!c->split_views || d->where != W_WS || d->view.c1s || y->is_output ||
	    (x->dtype != CC_F32 && x->dtype != CC_F16))
		return -1;
	for (int i = 0; i < r; i++) {
		if (sp[i] != 1)
			return -1;
		if (i0 < 0 && y->dims[i] != x->dims[i])
			i0 = i;
	}
	for (int i = i0 + 1; i0 >= 0 && i < r; i++)
		if (y->dims[i] != x->dims[i])
			return -1;
	if (i0 < 0 || (i0 == lane && (b[lane] + y->dims[lane]) % 16 &&
		       b[lane] + y->dims[lane] != x->dims[lane]))
		return -1;
	int outer1 = 1;
	for (int i = 0; i < i0; i++)
		outer1 &= y->dims[i] == 1;
	if (outer1)
		return 0;
	if (r != 4 || i0 != 1 || !cc_strided_readers_ok(c, out))
		return -1;
	return (x->dims[1] + 15) / 16;
}

/* out = the box of x starting at b with steps sp (NULL: all 1; out's dims
 * are its extents; element k along an axis is x's b + k * sp, sp of any
 * sign): a copy of whole blocks when the lane axis moves with step 1 from a
 * multiple of 16 (the lanes past the box's end land in out's padding; the
 * other axes' steps are source strides, negative ones included);
 * otherwise, for ND, the lanes move through vtransposes
 * (cc_gen_slice_last, cc_gen_slice_last_step), after a block copy of the
 * leading axes' box when those are sliced too.  NC1HWC0's channels at such
 * a start or step: N, H and W are sliced first, then the channels as a
 * leading axis of an ND [N, C, H*W] relayout, and the result relaid out
 * into NC1HWC0 (two relayouts through fp32 each way: slow, but exact). */
int cc_box_copy(struct cc_ctx *c, struct cc_node *n, int xi, const int64_t *b,
		const int64_t *sp, int out)
{
	static const int64_t ones[CC_MAX_RANK] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	if (!sp)
		sp = ones;
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int r = x->rank, lane = cc_lane_axis(x);
	if (y->rank != r || r < 1 || r > CC_MAX_RANK)
		return NODE_FAIL(c, n, "ranks differ");
	for (int i = 0; i < r; i++)
		if (y->dims[i] < 1)
			return NODE_FAIL(c, n, "an empty output is not supported yet");
	int lane_moves = b[lane] % 16 || sp[lane] != 1;
	if (lane_moves && r == 4) {
		int64_t d4[4], b4[4], s4[4], d3[3], e3[3], b3[3] = { 0, b[1], 0 },
			s3[3] = { 1, sp[1], 1 };
		int lead = 0;
		for (int i = 0; i < 4; i++) {
			d4[i] = i == 1 ? x->dims[1] : y->dims[i];
			b4[i] = i == 1 ? 0 : b[i];
			s4[i] = i == 1 ? 1 : sp[i];
			lead |= i != 1 && (y->dims[i] != x->dims[i] || sp[i] != 1);
		}
		d3[0] = e3[0] = d4[0];
		d3[1] = x->dims[1];
		e3[1] = y->dims[1];
		d3[2] = e3[2] = d4[2] * d4[3];
		int src = xi, x3, y3;
		if (lead && ((src = cc_temp_new(c, n, 4, d4)) < 0 || cc_box_copy(c, n, xi, b4, s4, src)))
			return src < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		if ((x3 = cc_temp_new(c, n, 3, d3)) < 0 || (y3 = cc_temp_new(c, n, 3, e3)) < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, src, x3) || cc_box_copy(c, n, x3, b3, s3, y3))
			return -1;
		return cc_relayout(c, n, y3, out);
	}
	if (lane_moves) { /* the lanes move: the leading axes first, if sliced */
		int64_t d[CC_MAX_RANK], b0[CC_MAX_RANK], s0[CC_MAX_RANK], rows = 1,
			xcols = x->dims[lane];
		int lead = 0;
		for (int i = 0; i < r; i++) {
			d[i] = i == lane ? x->dims[i] : y->dims[i];
			b0[i] = i == lane ? 0 : b[i];
			s0[i] = i == lane ? 1 : sp[i];
			lead |= i != lane && (y->dims[i] != x->dims[i] || sp[i] != 1);
			rows *= i == lane ? 1 : y->dims[i];
		}
		int src = xi;
		if (lead && ((src = cc_temp_new(c, n, r, d)) < 0 || cc_box_copy(c, n, xi, b0, s0, src)))
			return src < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		if (cc_ws_place(c, out))
			return NODE_FAIL(c, n, "out of memory");
		struct task *t = cc_task_new(c, n->name, n->op);
		char msg[256];
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		int64_t ycols = T(c, out)->dims[lane];
		if (sp[lane] == 1 ? cc_gen_slice_last(c->cfg, rows, xcols, b[lane], ycols, &t->prog,
						      &t->block_dim, msg, sizeof msg)
				  : cc_gen_slice_last_step(c->cfg, rows, xcols, b[lane], sp[lane], ycols,
							   &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		cc_one_in_one_out(c, t, src, out);
		return 0;
	}
	int64_t cnt[CC_MAX_RANK], sx[CC_MAX_RANK], sy[CC_MAX_RANK], off = 0;
	int whole = 1;
	cc_grid_counts(y, cnt);
	cc_dev_strides(x, sx);
	cc_dev_strides(y, sy);
	for (int i = 0; i < r; i++) {
		off += (i == lane ? b[i] / 16 : b[i]) * sx[i];
		whole &= y->dims[i] == x->dims[i] && sp[i] == 1;
		if (i != lane)
			sx[i] *= sp[i]; /* a step is a source stride (negative: backwards) */
	}
	if (whole) { /* the whole of x: an alias */
		c->dev[out] = c->dev[xi];
		return 0;
	}
	int64_t c1s = slice_view(c, xi, out, b, sp);
	if (c1s >= 0) { /* a view of x's bytes: no task */
		c->slice_views++;
		return cc_view_at(c, xi, out, (uint64_t)off * 32, c1s);
	}
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_grid_copy(c->cfg, r, cnt, sx, sy, off, &t->prog, &t->block_dim, msg,
			     sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, out);
	return 0;
}

/* A constant operand of a broadcast laid out NC1HWC0 in its own dims
 * d[4] (rank-aligned to the output's): a weight offset, or -1. */
static int64_t const_nc1hwc0(struct cc_ctx *c, struct cc_node *n, int ti, const int64_t *d)
{
	float *f = cc_const_floats(c, n, ti);
	if (!f)
		return -1;
	int64_t c1 = (d[1] + 15) / 16, hw = d[2] * d[3];
	uint16_t *h = calloc((size_t)(d[0] * c1 * hw * 16 + 16), 2);
	if (!h) {
		free(f);
		NODE_FAIL(c, n, "out of memory");
		return -1;
	}
	for (int64_t i = 0; i < d[0]; i++)
		for (int64_t ch = 0; ch < d[1]; ch++)
			for (int64_t p = 0; p < hw; p++)
				h[((i * c1 + ch / 16) * hw + p) * 16 + ch % 16] =
					dv_f32_to_f16(f[(i * d[1] + ch) * hw + p]);
	int64_t off = cc_weight_add(c, h, (uint64_t)(d[0] * c1 * hw * 16 + 16) * 2);
	free(f);
	free(h);
	if (off < 0)
		NODE_FAIL(c, n, "out of memory");
	return off;
}

/* Any numpy broadcast of two operands (kern_bcast_nd.c): both in the
 * output's layout kind (padded ND, or NC1HWC0 for a 4-D output, where a
 * constant is laid out to match). */
int cc_bcast_nd(struct cc_ctx *c, struct cc_node *n, enum cc_vop vop)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	int r = y->rank, nc = r == 4;
	if (r < 1 || r - 1 > CC_BCAST_MAX_RANK)
		return NODE_FAIL(c, n, "broadcasting at rank %d is not supported yet", r);
	struct cc_bcast bc = { .op = vop };
	int64_t yd[CC_MAX_RANK], woff[2] = { -1, -1 };
	int moved[2] = { -1, -1 }; /* operands relaid out to 4-D: the originals */
	for (int i = 0; i < r; i++)
		yd[i] = y->dims[i];
	if (nc) { /* rows [N][C1][H][W] of one block */
		bc.rank = 4;
		bc.dims[0] = yd[0];
		bc.dims[1] = (yd[1] + 15) / 16;
		bc.dims[2] = yd[2];
		bc.dims[3] = yd[3];
		bc.nb = 1;
	} else {
		bc.rank = r - 1;
		for (int i = 0; i + 1 < r; i++)
			bc.dims[i] = yd[i];
		bc.nb = cc_pad16(yd[r - 1]) / 16;
	}
	for (int k = 0; k < 2; k++) {
		int ti = n->in[k];
		struct cc_tensor *x = T(c, ti);
		int64_t a[CC_MAX_RANK];
		for (int i = 0; i < r; i++)
			a[i] = i < r - x->rank ? 1 : x->dims[i - (r - x->rank)];
		struct dev_tensor *d = &c->dev[ti];
		if (d->where == W_NONE && x->data) {
			if (nc) {
				if ((woff[k] = const_nc1hwc0(c, n, ti, a)) < 0)
					return -1;
			} else if (cc_weight_place_act(c, n, ti)) {
				return -1;
			}
		} else if (d->where != W_WS && d->where != W_WEIGHT) {
			return NODE_FAIL(c, n, "operand '%s' is not supported yet", x->name);
		} else if (nc && !dev_5hd(d) && d->where == W_WS) {
			/* an ND activation of lower rank (a run-time scalar, a row)
			 * onto a 4-D output: laid out as the 4-D [a0..a3] first */
			int x4 = cc_tensor_new(c, n->name, k ? "operand1_4d" : "operand0_4d", 4, a);
			if (x4 < 0)
				return NODE_FAIL(c, n, "out of memory");
			if (cc_relayout(c, n, ti, x4))
				return -1;
			n->in[k] = x4; /* for the arguments below; put back after */
			moved[k] = ti;
		} else if (nc != dev_5hd(d)) {
			char s1[96], s2[96];
			cc_shape_str(x, s1, sizeof s1);
			cc_shape_str(T(c, out), s2, sizeof s2);
			return NODE_FAIL(c, n, "broadcasting a %s activation to %s (an ND layout into "
					       "NC1HWC0 or back) is not supported yet", s1, s2);
		}
		if (nc) {
			int64_t c1 = (a[1] + 15) / 16;
			bc.rs[k][3] = a[3] == 1 ? 0 : 1;
			bc.rs[k][2] = a[2] == 1 ? 0 : a[3];
			bc.rs[k][1] = a[1] == 1 ? 0 : a[2] * a[3];
			bc.rs[k][0] = a[0] == 1 ? 0 : c1 * a[2] * a[3];
			bc.lane[k] = a[1] == 1 && yd[1] != 1;
		} else {
			int64_t st = 1;
			for (int i = r - 2; i >= 0; i--) {
				bc.rs[k][i] = a[i] == 1 ? 0 : st;
				st *= a[i];
			}
			bc.lane[k] = a[r - 1] == 1 && yd[r - 1] != 1;
		}
	}
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	if (!t || cc_gen_bcast_nd(c->cfg, &bc, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	for (int k = 0; k < 2; k++) {
		int ti = n->in[k];
		if (woff[k] >= 0) {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, woff[k], 0 };
			cc_io_add(t, 0, ti, ti, CC_F16, CC_FMT_NC1HWC0);
		} else {
			cc_arg_tensor(c, t, ti);
			cc_io_dev(c, t, 0, ti);
		}
	}
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 1, out);
	t->flops = (uint64_t)cc_tensor_numel(T(c, out));
	for (int k = 0; k < 2; k++)
		if (moved[k] >= 0)
			n->in[k] = moved[k];
	return 0;
}

/* x (an activation or a constant) broadcast into out, a workspace tensor of
 * the broadcast shape: the broadcast kernel's max(x, x) (exact, NaN kept),
 * which moves lanes as well as rows.  An ND x going to a 4-D out is first
 * given out's rank (a relayout into NC1HWC0). */
int cc_expand_into(struct cc_ctx *c, struct cc_node *n, int xi, int out)
{
	struct cc_tensor *x = T(c, xi);
	if (T(c, out)->rank == 4 && x->rank != 4) {
		int64_t d[4];
		for (int i = 0; i < 4; i++)
			d[i] = i < 4 - x->rank ? 1 : x->dims[i - (4 - x->rank)];
		if (c->dev[xi].where == W_NONE && cc_weight_place_act(c, n, xi))
			return -1;
		int x4 = cc_temp_new(c, n, 4, d);
		if (x4 < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_relayout(c, n, xi, x4))
			return -1;
		xi = x4;
	}
	struct cc_node fk = *n;
	int fin[2] = { xi, xi }, fout[1] = { out };
	fk.in = fin;
	fk.nin = 2;
	fk.out = fout;
	fk.nout = 1;
	return cc_bcast_nd(c, &fk, CC_V_MAX);
}

/* Input ti of n in the output's shape: itself, or expanded into a temporary. */
int cc_operand_full(struct cc_ctx *c, struct cc_node *n, int ti)
{
	struct cc_tensor *x = T(c, ti), *y = T(c, n->out[0]);
	if (c->dev[ti].where == W_INPUT)
		return NODE_FAIL(c, n, "input '%s' read in place is not supported yet", x->name);
	if (cc_same_shape(x, y) && (y->rank != 4 || c->dev[ti].where != W_NONE)) {
		if (c->dev[ti].where == W_NONE && cc_weight_place_act(c, n, ti))
			return -1;
		return ti;
	}
	int64_t d[CC_MAX_RANK];
	memcpy(d, y->dims, sizeof d);
	int tmp = cc_temp_new(c, n, y->rank, d);
	if (tmp < 0)
		return NODE_FAIL(c, n, "out of memory");
	return cc_expand_into(c, n, ti, tmp) ? -1 : tmp;
}
