/* compile.c: the compiler driver: import, shape inference, lowering of each
 * node to a kernel, the memory plan, and the .om model.
 *
 * Device tensors: every activation lives in the workspace as fp16 in the
 * padded ND layout of kernels.h; constants go to the weights blob in the
 * layout their consumer wants.  Graph inputs and outputs cross the edge with
 * a cast kernel (the transdata), so the host sees ONNX's fp32. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "fp16.h"
#include "graph.h"
#include "kern_resize.h"
#include "kernels.h"
#include "passes.h"
#include "sim.h"

/* W_INPUT: an integer graph input read in place from the host's buffer
 * (offset is the input's index): only index-taking kernels consume them. */
enum where { W_NONE, W_WS, W_WEIGHT, W_INPUT };

struct dev_tensor {
	enum where where;
	uint64_t offset, size; /* offset: in the weights; workspace offsets come from the plan */
	int64_t rows, cols;    /* ND: the leading dimensions' product, the last dimension */
	int nc1hwc0;           /* 4-D: [n][ceil(c/16)][h][w][16] */
	int64_t n, c, h, w;
	int storage;           /* the tensor whose workspace bytes these are (views share) */
	int first, last;       /* tasks that first and last touch the storage */
};

#define MAX_TASK_ARGS 8

/* A tensor a task consumes or produces (see io_add), described at build time. */
struct task_io {
	int ti;              /* the graph tensor: its name */
	int shape;           /* the graph tensor with its logical dims (ti but for scratches) */
	enum cc_dtype dtype; /* as the task moves it */
	enum cc_format fmt;
};

struct task {
	char name[128], op_type[64];
	struct cc_prog prog;
	unsigned block_dim;
	struct om_arg args[MAX_TASK_ARGS];
	int argt[MAX_TASK_ARGS]; /* workspace args: the storage tensor, patched by the plan */
	unsigned nargs;
	uint64_t flops, bytes;
	struct task_io in[MAX_TASK_ARGS], out[MAX_TASK_ARGS];
	unsigned nin, nout;
};

struct cc_ctx {
	const char *path;
	const struct soc_config *cfg;
	struct cc_graph g;
	struct dev_tensor *dev;
	struct task *tasks;
	unsigned ntasks, captasks;
	uint8_t *weights;
	uint64_t wbytes, wcap;
	uint64_t ws_bytes, ws_no_reuse;
	struct cc_pass_log log;
	char *err;
	size_t errlen;
};

static int fail(struct cc_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct cc_ctx *c, const char *fmt, ...)
{
	va_list ap;
	size_t n = (size_t)snprintf(c->err, c->errlen, "%s: ", c->path);
	if (n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

#define NODE_FAIL(c, n, ...) node_fail(c, n, __VA_ARGS__)
static int node_fail(struct cc_ctx *c, const struct cc_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int node_fail(struct cc_ctx *c, const struct cc_node *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return fail(c, "node '%s' (%s): %s", n->name, n->op, msg);
}

static struct cc_tensor *T(struct cc_ctx *c, int i) { return &c->g.t[i]; }

static void shape_str(const struct cc_tensor *t, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < t->rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)t->dims[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* ---- shape inference -------------------------------------------------- */

static int set_shape(struct cc_tensor *t, enum cc_dtype dt, int rank, const int64_t *dims)
{
	t->dtype = dt;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	return 0;
}

static int need_known(struct cc_ctx *c, struct cc_node *n, int k)
{
	if (k >= n->nin || n->in[k] < 0)
		return NODE_FAIL(c, n, "input %d is missing", k);
	struct cc_tensor *t = T(c, n->in[k]);
	if (t->rank < 0)
		return NODE_FAIL(c, n, "the shape of input '%s' is unknown", t->name);
	/* data movement keeps integer and bool values (fp16 on the device too,
	 * see kern_dtype.c); arithmetic on them is not supported yet */
	static const char *const moves[] = { "Identity", "Reshape",   "Flatten", "Squeeze",
					     "Unsqueeze", "Transpose", "Concat",  "Slice",
					     "Split",    "Expand",    "Gather" };
	int move = 0;
	for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++)
		move = move || !strcmp(n->op, moves[i]);
	int isint = t->dtype == CC_I64 || t->dtype == CC_I32 || t->dtype == CC_BOOL ||
		    t->dtype == CC_U8 || t->dtype == CC_I8;
	if (t->dtype != CC_F32 && t->dtype != CC_F16 && !(move && isint))
		return NODE_FAIL(c, n, "input '%s' is %s: types other than float32 and float16 "
				       "are not supported yet",
				 t->name, cc_dtype_name(t->dtype));
	return 0;
}

static int infer_same(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]);
	return set_shape(T(c, n->out[0]), a->dtype, a->rank, a->dims);
}

static int infer_broadcast(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0) || need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	int rank = a->rank > b->rank ? a->rank : b->rank;
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < rank; i++) {
		int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		if (da != db && da != 1 && db != 1) {
			char sa[96], sb[96];
			shape_str(a, sa, sizeof sa);
			shape_str(b, sb, sizeof sb);
			return NODE_FAIL(c, n, "shapes %s and %s do not broadcast", sa, sb);
		}
		d[i] = da == 1 ? db : da;
	}
	return set_shape(T(c, n->out[0]), a->dtype, rank, d);
}

/* Sum/Max/Min/Mean: numpy broadcasting over every input. */
static int infer_variadic(struct cc_ctx *c, struct cc_node *n)
{
	int rank = 0;
	int64_t d[CC_MAX_RANK];
	if (n->nin < 1)
		return NODE_FAIL(c, n, "no inputs");
	for (int k = 0; k < n->nin; k++) {
		if (need_known(c, n, k))
			return -1;
		struct cc_tensor *a = T(c, n->in[k]);
		if (a->rank > rank) { /* align what we have to the right */
			int sh = a->rank - rank;
			for (int i = rank - 1; i >= 0; i--)
				d[i + sh] = d[i];
			for (int i = 0; i < sh; i++)
				d[i] = 1;
			rank = a->rank;
		}
		for (int i = 0; i < a->rank; i++) {
			int64_t *o = &d[rank - a->rank + i], v = a->dims[i];
			if (*o != v && *o != 1 && v != 1)
				return NODE_FAIL(c, n, "input %d ('%s') does not broadcast with the others",
						 k, a->name);
			if (*o == 1)
				*o = v;
		}
	}
	return set_shape(T(c, n->out[0]), T(c, n->in[0])->dtype, rank, d);
}

/* numpy's matmul: the last two axes multiply, the others broadcast. */
static int infer_matmul(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0) || need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	if (a->rank < 2 || b->rank < 2 || a->rank > 6 || b->rank > 6)
		return NODE_FAIL(c, n, "MatMul of ranks %d and %d is not supported yet (ranks 2 "
				       "to 6)", a->rank, b->rank);
	int64_t K = a->dims[a->rank - 1], Kb = b->dims[b->rank - 2];
	if (K != Kb)
		return NODE_FAIL(c, n, "inner dimensions differ (%lld and %lld)", (long long)K,
				 (long long)Kb);
	int rank = a->rank > b->rank ? a->rank : b->rank;
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < rank - 2; i++) {
		int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return NODE_FAIL(c, n, "batch dimensions %lld and %lld do not broadcast",
					 (long long)da, (long long)db);
		d[i] = da == 1 ? db : da;
	}
	d[rank - 2] = a->dims[a->rank - 2];
	d[rank - 1] = b->dims[b->rank - 1];
	return set_shape(T(c, n->out[0]), a->dtype, rank, d);
}

static int infer_gemm(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0) || need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	if (a->rank != 2 || b->rank != 2)
		return NODE_FAIL(c, n, "Gemm needs 2-D A and B");
	int ta = (int)cc_attr_int(n, "transA", 0), tb = (int)cc_attr_int(n, "transB", 0);
	int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
	int64_t Kb = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
	if (K != Kb)
		return NODE_FAIL(c, n, "inner dimensions differ (%lld and %lld)", (long long)K,
				 (long long)Kb);
	int64_t d[2] = { M, N };
	return set_shape(T(c, n->out[0]), a->dtype, 2, d);
}

static int ints_attr(const struct cc_node *n, const char *name, int64_t *v, int count,
		     int64_t dflt)
{
	const struct cc_attr *a = cc_attr_find(n, name);
	for (int i = 0; i < count; i++)
		v[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i] : dflt;
	return a && a->type == CC_ATTR_INTS ? (int)a->n : 0;
}

/* Window geometry shared by Conv and the pools: kernel (from the attribute
 * or the weights), strides, pads (with auto_pad resolved), dilations. */
struct window {
	int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, ho, wo;
};

/* A 1-D window (Conv1d, pooling over [N, C, L]): the node's attributes
 * have one value per spatial axis, and it runs as 2-D over [N, C, 1, L]
 * (lower_1d).  Decided by the attributes and weights, not x, which lower_1d
 * swaps for its 4-D view. */
static int is_1d(struct cc_ctx *c, const struct cc_node *n)
{
	int64_t v[1];
	if (ints_attr(n, "kernel_shape", v, 1, 0) == 1)
		return 1;
	return n->nin > 1 && n->in[1] >= 0 && (!strcmp(n->op, "Conv") ||
		!strcmp(n->op, "ConvTranspose")) && T(c, n->in[1])->rank == 3;
}

/* The spatial attribute name of node n as 2-D values (1-D: height 1,
 * pads [begin, end] -> [0, begin, 0, end]); count as ints_attr's. */
static int ints_attr2(struct cc_ctx *c, const struct cc_node *n, const char *name, int64_t *v,
		      int pads, int64_t dflt)
{
	if (!is_1d(c, n))
		return ints_attr(n, name, v, pads ? 4 : 2, dflt);
	int64_t u[2];
	int got = ints_attr(n, name, u, pads ? 2 : 1, dflt);
	if (pads) {
		v[0] = v[2] = 0;
		v[1] = u[0];
		v[3] = u[1];
	} else {
		v[0] = name[0] == 'p' || name[0] == 'o' ? 0 : 1; /* pads, output_*: 0 */
		v[1] = u[0];
	}
	return got ? 2 * got : 0;
}

static int window_of(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		     int64_t kh, int64_t kw, int pool, struct window *wd)
{
	int64_t v[4];
	if (ints_attr2(c, n, "kernel_shape", v, 0, 0) == 2) {
		kh = v[0];
		kw = v[1];
	}
	if (kh < 1 || kw < 1)
		return NODE_FAIL(c, n, "kernel_shape is missing or not 2-D");
	wd->kh = kh;
	wd->kw = kw;
	ints_attr2(c, n, "strides", v, 0, 1);
	wd->sh = v[0];
	wd->sw = v[1];
	ints_attr2(c, n, "dilations", v, 0, 1);
	wd->dh = v[0];
	wd->dw = v[1];
	ints_attr2(c, n, "pads", v, 1, 0);
	wd->pt = v[0];
	wd->pl = v[1];
	wd->pb = v[2];
	wd->pr = v[3];
	int64_t H = x->rank == 3 ? 1 : x->dims[2], W = x->dims[x->rank - 1];
	const struct cc_attr *ap = cc_attr_find(n, "auto_pad");
	if (ap && ap->s && strcmp(ap->s, "NOTSET")) {
		if (!strcmp(ap->s, "VALID")) {
			wd->pt = wd->pl = wd->pb = wd->pr = 0;
		} else { /* SAME_UPPER / SAME_LOWER: output = ceil(input / stride) */
			int64_t eh = (wd->kh - 1) * wd->dh + 1, ew = (wd->kw - 1) * wd->dw + 1;
			int64_t th = ((H + wd->sh - 1) / wd->sh - 1) * wd->sh + eh - H;
			int64_t tw = ((W + wd->sw - 1) / wd->sw - 1) * wd->sw + ew - W;
			th = th > 0 ? th : 0;
			tw = tw > 0 ? tw : 0;
			int lower = !strcmp(ap->s, "SAME_LOWER");
			wd->pt = lower ? (th + 1) / 2 : th / 2;
			wd->pb = th - wd->pt;
			wd->pl = lower ? (tw + 1) / 2 : tw / 2;
			wd->pr = tw - wd->pl;
		}
	}
	if (wd->sh < 1 || wd->sw < 1 || wd->dh < 1 || wd->dw < 1 || wd->pt < 0 || wd->pl < 0 ||
	    wd->pb < 0 || wd->pr < 0)
		return NODE_FAIL(c, n, "bad strides, dilations or pads");
	int64_t eh = (wd->kh - 1) * wd->dh + 1, ew = (wd->kw - 1) * wd->dw + 1;
	int64_t nh = H + wd->pt + wd->pb - eh, nw = W + wd->pl + wd->pr - ew;
	if (nh < 0 || nw < 0)
		return NODE_FAIL(c, n, "the window is larger than the padded input");
	int ceil_mode = pool && cc_attr_int(n, "ceil_mode", 0);
	wd->ho = (ceil_mode ? (nh + wd->sh - 1) / wd->sh : nh / wd->sh) + 1;
	wd->wo = (ceil_mode ? (nw + wd->sw - 1) / wd->sw : nw / wd->sw) + 1;
	/* a last window that would start in the bottom/right padding is dropped */
	if (ceil_mode && (wd->ho - 1) * wd->sh >= H + wd->pt)
		wd->ho--;
	if (ceil_mode && (wd->wo - 1) * wd->sw >= W + wd->pl)
		wd->wo--;
	return 0;
}

static int need4(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	if (T(c, n->in[0])->rank != 4)
		return NODE_FAIL(c, n, "%s on a rank-%d input is not supported yet (4-D only)",
				 n->op, T(c, n->in[0])->rank);
	return 0;
}

/* 4-D, or 3-D ([N, C, L], run as [N, C, 1, L]: lower_1d). */
static int need34(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	if (T(c, n->in[0])->rank == 3)
		return 0;
	return need4(c, n);
}

/* The kernel size the weights w give (1-D: [cout, cin/g, k]). */
static void weight_window(const struct cc_tensor *w, int64_t *kh, int64_t *kw)
{
	*kh = w->rank == 3 ? 1 : w->dims[2];
	*kw = w->dims[w->rank - 1];
}

static int infer_conv(struct cc_ctx *c, struct cc_node *n)
{
	if (need34(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (n->nin < 2 || n->in[1] < 0 || T(c, n->in[1])->rank != x->rank)
		return NODE_FAIL(c, n, "the weights must be a %d-D tensor", x->rank);
	struct cc_tensor *w = T(c, n->in[1]);
	struct window wd;
	int64_t kh, kw;
	weight_window(w, &kh, &kw);
	if (window_of(c, n, x, kh, kw, 0, &wd))
		return -1;
	int64_t d[4] = { x->dims[0], w->dims[0], wd.ho, wd.wo };
	if (x->rank == 3)
		d[2] = wd.wo;
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

static int infer_pool(struct cc_ctx *c, struct cc_node *n)
{
	if (need34(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (x->rank == 3 && !is_1d(c, n))
		return NODE_FAIL(c, n, "kernel_shape must have one value for a 3-D input");
	struct window wd;
	if (window_of(c, n, x, 0, 0, 1, &wd))
		return -1;
	/* refused before the input's edge kernel sees a 1-D input's long rows */
	if (wd.dh != 1 || wd.dw != 1)
		return NODE_FAIL(c, n, "dilated pooling is not supported yet");
	int64_t d[4] = { x->dims[0], x->dims[1], wd.ho, wd.wo };
	if (x->rank == 3)
		d[2] = wd.wo;
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

/* ConvTranspose's geometry (2-D, or 1-D as height 1): the kernel, strides,
 * dilations, output padding, the pads (from output_shape or auto_pad when
 * given: ONNX's total padding, the odd one at the end except for
 * SAME_UPPER... as the reference implementation splits it) and the output
 * size. */
struct convt {
	int64_t kh, kw, sh, sw, dh, dw, oph, opw, pt, pl, pb, pr, ho, wo;
};

static int64_t floordiv2(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

static int convt_geom(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x,
		      const struct cc_tensor *w, struct convt *g)
{
	int64_t v[4], H = x->rank == 3 ? 1 : x->dims[2], W = x->dims[x->rank - 1];
	weight_window(w, &g->kh, &g->kw);
	if (ints_attr2(c, n, "kernel_shape", v, 0, 0) == 2) {
		g->kh = v[0];
		g->kw = v[1];
	}
	ints_attr2(c, n, "strides", v, 0, 1);
	g->sh = v[0];
	g->sw = v[1];
	ints_attr2(c, n, "dilations", v, 0, 1);
	g->dh = v[0];
	g->dw = v[1];
	ints_attr2(c, n, "output_padding", v, 0, 0);
	g->oph = v[0];
	g->opw = v[1];
	ints_attr2(c, n, "pads", v, 1, 0);
	g->pt = v[0];
	g->pl = v[1];
	g->pb = v[2];
	g->pr = v[3];
	if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1 ||
	    g->oph < 0 || g->opw < 0)
		return NODE_FAIL(c, n, "bad kernel, strides, dilations or output_padding");
	/* the output before any padding is taken off */
	int64_t fh = g->sh * (H - 1) + g->oph + (g->kh - 1) * g->dh + 1;
	int64_t fw = g->sw * (W - 1) + g->opw + (g->kw - 1) * g->dw + 1;
	const struct cc_attr *ap = cc_attr_find(n, "auto_pad");
	const char *mode = ap && ap->s ? ap->s : "NOTSET";
	int64_t oh = -1, ow = -1;
	if (ints_attr2(c, n, "output_shape", v, 0, 0) == 2) {
		oh = is_1d(c, n) ? 1 : v[0];
		ow = v[1];
	} else if (!strncmp(mode, "SAME", 4)) {
		oh = H * g->sh;
		ow = W * g->sw;
	} else if (!strcmp(mode, "VALID")) {
		g->pt = g->pl = g->pb = g->pr = 0;
	}
	if (oh >= 0) {
		int64_t th = fh - oh, tw = fw - ow;
		int upper = !strcmp(mode, "SAME_UPPER");
		g->pt = upper ? floordiv2(th) : th - floordiv2(th);
		g->pb = th - g->pt;
		g->pl = upper ? floordiv2(tw) : tw - floordiv2(tw);
		g->pr = tw - g->pl;
	}
	g->ho = fh - g->pt - g->pb;
	g->wo = fw - g->pl - g->pr;
	if (g->ho < 1 || g->wo < 1)
		return NODE_FAIL(c, n, "the output would be empty");
	return 0;
}

static int infer_convt(struct cc_ctx *c, struct cc_node *n)
{
	if (need34(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	if (n->nin < 2 || n->in[1] < 0 || T(c, n->in[1])->rank != x->rank)
		return NODE_FAIL(c, n, "the weights must be a %d-D tensor", x->rank);
	struct cc_tensor *w = T(c, n->in[1]);
	struct convt g;
	if (convt_geom(c, n, x, w, &g))
		return -1;
	int64_t d[4] = { x->dims[0], w->dims[1] * cc_attr_int(n, "group", 1), g.ho, g.wo };
	if (x->rank == 3)
		d[2] = g.wo;
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

static int infer_gap(struct cc_ctx *c, struct cc_node *n)
{
	if (need4(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t d[4] = { x->dims[0], x->dims[1], 1, 1 };
	return set_shape(T(c, n->out[0]), x->dtype, 4, d);
}

static int infer_flatten(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t axis = cc_attr_int(n, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	int64_t a = 1, b = 1;
	for (int i = 0; i < x->rank; i++)
		*(i < axis ? &a : &b) *= x->dims[i];
	int64_t d[2] = { a, b };
	return set_shape(T(c, n->out[0]), x->dtype, 2, d);
}

static int infer_reshape(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
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
	int infer = -1;
	for (int i = 0; i < rank; i++) {
		d[i] = sv[i] == 0 && !cc_attr_int(n, "allowzero", 0) ? x->dims[i] : sv[i];
		if (d[i] == -1)
			infer = i;
		else
			known *= d[i];
	}
	if (infer >= 0)
		d[infer] = known ? total / known : 0;
	return set_shape(T(c, n->out[0]), x->dtype, rank, d);
}

static int infer_transpose(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t perm[CC_MAX_RANK], d[CC_MAX_RANK];
	const struct cc_attr *a = cc_attr_find(n, "perm");
	for (int i = 0; i < x->rank; i++)
		perm[i] = a && a->type == CC_ATTR_INTS && (size_t)i < a->n ? a->ints[i]
									    : x->rank - 1 - i;
	for (int i = 0; i < x->rank; i++) {
		if (perm[i] < 0 || perm[i] >= x->rank)
			return NODE_FAIL(c, n, "perm has an axis out of range");
		d[i] = x->dims[perm[i]];
	}
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

static int infer_concat(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t axis = cc_attr_int(n, "axis", 0), d[CC_MAX_RANK];
	if (axis < 0)
		axis += x->rank;
	memcpy(d, x->dims, sizeof d);
	for (int k = 1; k < n->nin; k++) {
		if (need_known(c, n, k))
			return -1;
		struct cc_tensor *y = T(c, n->in[k]);
		if (y->rank != x->rank)
			return NODE_FAIL(c, n, "inputs of different ranks");
		d[axis] += y->dims[axis];
	}
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

/* ---- device tensors, weights, tasks ----------------------------------- */

static void rows_cols(const struct cc_tensor *t, int64_t *rows, int64_t *cols)
{
	int64_t r = 1;
	for (int i = 0; i + 1 < t->rank; i++)
		r *= t->dims[i];
	*rows = r;
	*cols = t->rank ? t->dims[t->rank - 1] : 1;
}

static int64_t dev_elems(const struct dev_tensor *d)
{
	if (d->nc1hwc0)
		return d->n * ((d->c + 15) / 16) * d->h * d->w * 16;
	return d->rows * cc_pad16(d->cols);
}

/* Whole 256-byte repeats plus DMA slack past the last element. */
static uint64_t dev_bytes(const struct dev_tensor *d)
{
	uint64_t b = (uint64_t)dev_elems(d) * 2;
	return (b + 511) / 512 * 512 + 512;
}

static void dev_shape(struct cc_ctx *c, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	struct cc_tensor *t = T(c, ti);
	rows_cols(t, &d->rows, &d->cols);
	d->nc1hwc0 = t->rank == 4;
	if (d->nc1hwc0) {
		d->n = t->dims[0];
		d->c = t->dims[1];
		d->h = t->dims[2];
		d->w = t->dims[3];
	}
}

static int ws_place(struct cc_ctx *c, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	dev_shape(c, ti);
	d->where = W_WS;
	d->size = dev_bytes(d);
	d->storage = ti;
	d->first = d->last = -1;
	return 0;
}

/* A workspace buffer no graph tensor names (e.g. the fp32 staging of a
 * relayout); grows the device-tensor table with the graph. */
static int scratch_new(struct cc_ctx *c, const char *base, uint64_t bytes)
{
	char name[600];
	snprintf(name, sizeof name, "%s#scratch%d", base, c->g.nt);
	int64_t d1[1] = { (int64_t)(bytes / 2) };
	int ti = cc_tensor_add(&c->g, name, CC_F16, 1, d1);
	if (ti < 0)
		return -1;
	struct dev_tensor *dev = realloc(c->dev, (size_t)(c->g.nt + 1) * sizeof *dev);
	if (!dev)
		return -1;
	c->dev = dev;
	memset(&dev[ti], 0, sizeof dev[ti]);
	dev[ti].where = W_WS;
	dev[ti].rows = 1;
	dev[ti].cols = (int64_t)(bytes / 2);
	dev[ti].size = (bytes + 511) / 512 * 512 + 1024;
	dev[ti].storage = ti;
	dev[ti].first = dev[ti].last = -1;
	return ti;
}

static int64_t weight_add(struct cc_ctx *c, const void *data, uint64_t bytes)
{
	uint64_t off = (c->wbytes + 511) / 512 * 512;
	uint64_t need = off + bytes + 512;
	if (need > c->wcap) {
		uint64_t cap = c->wcap ? c->wcap : 1 << 16;
		while (cap < need)
			cap *= 2;
		uint8_t *w = realloc(c->weights, cap);
		if (!w)
			return -1;
		memset(w + c->wcap, 0, cap - c->wcap);
		c->weights = w;
		c->wcap = cap;
	}
	memcpy(c->weights + off, data, bytes);
	c->wbytes = off + bytes + 512; /* slack for whole-block reads */
	return (int64_t)off;
}

/* A constant's values as floats (float32 or float16 data). */
static float *const_floats(struct cc_ctx *c, const struct cc_node *n, int ti)
{
	struct cc_tensor *t = T(c, ti);
	int64_t cnt = cc_tensor_numel(t);
	int isint = t->dtype == CC_I64 || t->dtype == CC_I32 || t->dtype == CC_BOOL ||
		    t->dtype == CC_U8 || t->dtype == CC_I8;
	if (cnt < 0 || !t->data || (t->dtype != CC_F32 && t->dtype != CC_F16 && !isint)) {
		NODE_FAIL(c, n, "constant '%s' must be float32, float16, an integer or bool",
			  t->name);
		return NULL;
	}
	float *f = malloc((size_t)(cnt ? cnt : 1) * sizeof *f);
	if (!f) {
		NODE_FAIL(c, n, "out of memory");
		return NULL;
	}
	if (t->dtype == CC_F32)
		memcpy(f, t->data, (size_t)cnt * 4);
	else if (t->dtype == CC_F16)
		dv_f16_to_f32_n(t->data, f, (size_t)cnt);
	else /* held as fp16 on the device like every value (kern_dtype.c) */
		for (int64_t i = 0; i < cnt; i++)
			f[i] = t->dtype == CC_I64   ? (float)((const int64_t *)t->data)[i]
			       : t->dtype == CC_I32 ? (float)((const int32_t *)t->data)[i]
			       : t->dtype == CC_I8  ? (float)((const int8_t *)t->data)[i]
						    : (float)((const uint8_t *)t->data)[i];
	return f;
}

/* Put a constant into the weights in the device activation layout. */
static int weight_place_act(struct cc_ctx *c, const struct cc_node *n, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	if (d->where != W_NONE)
		return 0;
	float *f = const_floats(c, n, ti);
	if (!f)
		return -1;
	if (T(c, ti)->rank == 4)
		return NODE_FAIL(c, n, "a 4-D constant operand ('%s') is not supported yet",
				 T(c, ti)->name);
	dev_shape(c, ti);
	int64_t c16 = cc_pad16(d->cols);
	uint16_t *h = calloc((size_t)(d->rows * c16), 2);
	if (!h) {
		free(f);
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int64_t r = 0; r < d->rows; r++)
		dv_f32_to_f16_n(f + r * d->cols, h + r * c16, (size_t)d->cols);
	int64_t off = weight_add(c, h, (uint64_t)(d->rows * c16 * 2));
	free(f);
	free(h);
	if (off < 0)
		return NODE_FAIL(c, n, "out of memory");
	d->where = W_WEIGHT;
	d->offset = (uint64_t)off;
	d->size = dev_bytes(d);
	d->storage = -1;
	return 0;
}

static struct task *task_new(struct cc_ctx *c, const char *name, const char *op)
{
	if (c->ntasks == c->captasks) {
		unsigned cap = c->captasks ? 2 * c->captasks : 32;
		struct task *t = realloc(c->tasks, cap * sizeof *t);
		if (!t)
			return NULL;
		c->tasks = t;
		c->captasks = cap;
	}
	struct task *t = &c->tasks[c->ntasks++];
	memset(t, 0, sizeof *t);
	for (int i = 0; i < MAX_TASK_ARGS; i++)
		t->argt[i] = -1;
	snprintf(t->name, sizeof t->name, "%s", name);
	snprintf(t->op_type, sizeof t->op_type, "%s", op);
	cc_prog_init(&t->prog);
	return t;
}

static void arg_tensor(struct cc_ctx *c, struct task *t, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	t->argt[t->nargs] = d->where == W_WS ? d->storage : -1;
	struct om_arg *a = &t->args[t->nargs++];
	if (d->where == W_INPUT) {
		*a = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)d->offset };
		t->bytes += (uint64_t)cc_tensor_numel(T(c, ti)) * cc_dtype_size(T(c, ti)->dtype);
		return;
	}
	a->kind = d->where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE;
	a->value = d->where == W_WEIGHT ? (int64_t)d->offset : 0;
	a->index = 0;
	t->bytes += (uint64_t)dev_elems(d) * 2;
}

/* The tensors a task lists as its inputs and outputs (the .om's per-task
 * descriptors: msprof's Input/Output Shapes, Data Types and Formats): the
 * operands the kernel reads and the results it writes, with their logical
 * (ONNX) dims, the dtype the task moves them in (fp16 on the device) and the
 * format of their bytes.  A fused task lists its group's external tensors.
 * Constants count when the kernel reads them as tensors of their own shape
 * (Conv's weights and bias, MatMul/Gemm's B and C, a broadcast row vector,
 * a constant operand laid out as an activation); constants that become
 * immediates (scalar operands, Clip's bounds) or are merged into a derived
 * table (BatchNormalization's four vectors, a per-channel scale) do not.
 * Every listed tensor is also an argument of the task, so the lists never
 * outgrow MAX_TASK_ARGS. */
static void io_add(struct task *t, int output, int ti, int shape, enum cc_dtype dt,
		   enum cc_format fmt)
{
	struct task_io *v = output ? t->out : t->in;
	unsigned *n = output ? &t->nout : &t->nin;
	if (*n < MAX_TASK_ARGS)
		v[(*n)++] = (struct task_io){ ti, shape, dt, fmt };
}

/* A tensor in its device layout: fp16, NC1HWC0 for 4-D activations, else ND. */
static void io_dev(struct cc_ctx *c, struct task *t, int output, int ti)
{
	io_add(t, output, ti, ti, CC_F16, c->dev[ti].nc1hwc0 ? CC_FMT_NC1HWC0 : CC_FMT_ND);
}

/* The common shape of a one-input kernel: its output placed in the
 * workspace and a task named after the node (NULL after NODE_FAIL)... */
static struct task *output_task(struct cc_ctx *c, struct cc_node *n, int out)
{
	struct task *t = ws_place(c, out) ? NULL : task_new(c, n->name, n->op);
	if (!t)
		NODE_FAIL(c, n, "out of memory");
	return t;
}

/* ...and its arguments: the input, then the output, both recorded as the
 * task's tensors. */
static void one_in_one_out(struct cc_ctx *c, struct task *t, int xi, int out)
{
	arg_tensor(c, t, xi);
	arg_tensor(c, t, out);
	io_dev(c, t, 0, xi);
	io_dev(c, t, 1, out);
}

/* A tensor in the host's plain layout (the edge kernels' other side): NCHW
 * when shape is 4-D, else ND. */
static void io_host(struct cc_ctx *c, struct task *t, int output, int ti, int shape,
		    enum cc_dtype dt)
{
	io_add(t, output, ti, shape, dt, T(c, shape)->rank == 4 ? CC_FMT_NCHW : CC_FMT_ND);
}

/* ---- lowering ------------------------------------------------------------ */

static int run_chain(struct cc_ctx *c, struct cc_node *n, const struct cc_vchain *ch,
		     const int *ins)
{
	int out = n->out[0];
	if (ws_place(c, out))
		return -1;
	char op[64] = ""; /* a fused chain: its ops in the order they run */
	if (n->fused[0] && n->chain_prev) {
		cc_strlcat(op, sizeof op, n->fused);
		cc_strlcat(op, sizeof op, "+");
	}
	cc_strlcat(op, sizeof op, n->op);
	struct task *t = task_new(c, n->name, op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	int64_t elems = dev_elems(&c->dev[out]);
	char msg[256];
	if (cc_gen_vchain(c->cfg, ch, elems, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	for (int i = 0; i < ch->nin; i++) {
		arg_tensor(c, t, ins[i]);
		io_dev(c, t, 0, ins[i]);
	}
	arg_tensor(c, t, out);
	io_dev(c, t, 1, out);
	t->flops = (uint64_t)dev_elems(&c->dev[out]) * (uint64_t)ch->nsteps;
	return 0;
}

static int lower_identity(struct cc_ctx *c, struct cc_node *n)
{
	int in = n->in[0];
	if (n->nout > 1 && n->out[1] >= 0 && cc_tensor_uses(&c->g, n->out[1]))
		return NODE_FAIL(c, n, "the mask output is not supported yet");
	if (!strcmp(n->op, "Dropout") && n->nin > 2 && n->in[2] >= 0) {
		/* training mode drops at random unless the ratio is a constant 0 */
		const struct cc_tensor *tm = T(c, n->in[2]);
		const struct cc_tensor *ra = n->nin > 1 && n->in[1] >= 0 ? T(c, n->in[1]) : NULL;
		int off = tm->data && tm->nbytes >= 1 && !*(const uint8_t *)tm->data;
		int zero = ra && ra->data && ra->dtype == CC_F32 && !*(const float *)ra->data;
		if (!off && !zero)
			return NODE_FAIL(c, n, "training mode is not supported yet");
	}
	if (c->dev[in].where == W_NONE && weight_place_act(c, n, in))
		return -1;
	c->dev[n->out[0]] = c->dev[in]; /* an alias: same bytes, same storage */
	return 0;
}

/* The TransData kernel between the host's plain fp32 layout and a device
 * tensor's (NC1HWC0 for 4-D, padded ND otherwise), in either direction. */
static int gen_edge(struct cc_ctx *c, const struct dev_tensor *d, int to_device,
		    struct task *t, char *msg, size_t len)
{
	if (d->nc1hwc0)
		return to_device ? cc_gen_nchw_in(c->cfg, d->n, d->c, d->h, d->w, &t->prog,
						  &t->block_dim, msg, len)
				 : cc_gen_nchw_out(c->cfg, d->n, d->c, d->h, d->w, &t->prog,
						   &t->block_dim, msg, len);
	return to_device ? cc_gen_cast_in(c->cfg, d->rows, d->cols, &t->prog, &t->block_dim, msg,
					  len)
			 : cc_gen_cast_out(c->cfg, d->rows, d->cols, &t->prog, &t->block_dim, msg,
					   len);
}

/* A reshape that changes the padded layout: through the host's plain fp32
 * layout in a scratch buffer (the edge kernels, exact for fp16 values). */
static int relayout(struct cc_ctx *c, struct cc_node *n, int in, int out)
{
	int64_t numel = cc_tensor_numel(T(c, in));
	int sc = scratch_new(c, n->name, (uint64_t)numel * 4);
	if (sc < 0 || ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct dev_tensor *d = &c->dev[in], *e = &c->dev[out];
	char msg[256];
	for (int k = 0; k < 2; k++) {
		struct task *t = task_new(c, n->name, "TransData");
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		if (gen_edge(c, k ? e : d, k, t, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		/* the scratch holds fp32 in the plain layout of in, which is out's too */
		if (k == 0) {
			arg_tensor(c, t, in);
			arg_tensor(c, t, sc);
			io_dev(c, t, 0, in);
			io_host(c, t, 1, sc, in, CC_F32);
		} else {
			arg_tensor(c, t, sc);
			arg_tensor(c, t, out);
			io_host(c, t, 0, sc, out, CC_F32);
			io_dev(c, t, 1, out);
		}
		d = &c->dev[in]; /* arg_tensor does not move c->dev, scratch_new did */
		e = &c->dev[out];
	}
	return 0;
}

/* Flatten / Reshape as views: the device bytes stay where they are when the
 * layouts agree: ND to ND with the same last dimension, or NC1HWC0 with
 * H = W = 1 (which is [N][C16], the ND layout) to [N, C].  Otherwise the
 * data is laid out anew (relayout). */
static int view_into(struct cc_ctx *c, struct cc_node *n, int in, int out)
{
	struct cc_tensor *x = T(c, in), *y = T(c, out);
	struct dev_tensor *d = &c->dev[in];
	if (d->where == W_NONE && x->data && weight_place_act(c, n, in))
		return -1;
	if (d->where == W_NONE || d->where == W_INPUT)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	int ok = 0;
	if (d->nc1hwc0)
		ok = y->rank == 2 && d->h == 1 && d->w == 1 && y->dims[1] == d->c;
	else
		/* the same last dimension, or last dimensions that are whole
		 * blocks on both sides (no padding: the bytes are the plain
		 * row-major tensor either way, as attention's head split
		 * [S, B, 768] -> [S, B*12, 64] is) */
		ok = y->rank != 4 && y->rank >= 1 && x->rank >= 1 &&
		     (y->dims[y->rank - 1] == x->dims[x->rank - 1] ||
		      (y->dims[y->rank - 1] % 16 == 0 && x->dims[x->rank - 1] % 16 == 0));
	if (!ok)
		return relayout(c, n, in, out);
	struct dev_tensor v = *d;
	v.nc1hwc0 = 0;
	rows_cols(y, &v.rows, &v.cols);
	c->dev[out] = v;
	return 0;
}

static int lower_view(struct cc_ctx *c, struct cc_node *n)
{
	return view_into(c, n, n->in[0], n->out[0]);
}

static int lower_maxpool(struct cc_ctx *c, struct cc_node *n);
static int lower_avgpool(struct cc_ctx *c, struct cc_node *n);

/* A graph-less tensor of 4-D dims for a lowering's intermediate (lower_1d's
 * views), with a device-tensor entry; grows the table as scratch_new does. */
static int tensor4_new(struct cc_ctx *c, const char *base, const char *what, const int64_t *d)
{
	char name[600];
	snprintf(name, sizeof name, "%s#%s%d", base, what, c->g.nt);
	int ti = cc_tensor_add(&c->g, name, CC_F16, 4, d);
	if (ti < 0)
		return -1;
	struct dev_tensor *dev = realloc(c->dev, (size_t)(c->g.nt + 1) * sizeof *dev);
	if (!dev)
		return -1;
	c->dev = dev;
	memset(&dev[ti], 0, sizeof dev[ti]);
	return ti;
}

/* A 1-D Conv, pool or BatchNormalization ([N, C, L], padded ND on the
 * device) as the 2-D one over [N, C, 1, L]: relayout (two TransData
 * through fp32, view_into's path) into NC1HWC0, the 2-D lowering with the
 * node's input and output swapped for the 4-D views, and back.  The
 * window attributes stay 1-D (is_1d reads them as height 1). */
static int lower_1d(struct cc_ctx *c, struct cc_node *n,
		    int (*lower)(struct cc_ctx *, struct cc_node *))
{
	int xi = n->in[0], out = n->out[0];
	if (c->dev[xi].where == W_NONE || c->dev[xi].where == W_INPUT)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	const struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int64_t dx[4] = { x->dims[0], x->dims[1], 1, x->dims[2] };
	int64_t dy[4] = { y->dims[0], y->dims[1], 1, y->dims[2] };
	int x4 = tensor4_new(c, n->name, "in4d", dx);
	int y4 = x4 < 0 ? -1 : tensor4_new(c, n->name, "out4d", dy);
	if (y4 < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (relayout(c, n, xi, x4))
		return -1;
	n->in[0] = x4;
	n->out[0] = y4;
	int rc = lower(c, n);
	n->in[0] = xi;
	n->out[0] = out;
	if (rc)
		return -1;
	return relayout(c, n, y4, out);
}

/* The conv tasks of node n: y (out) = conv(x (xi), w) with cv's geometry, w
 * ONNX's [cout][cin/groups][kh][kw] fp32; the bias bi, the residual ri when
 * >= 0.  A grouped conv that is not depthwise runs as one task per slice of
 * k groups whose channels fill whole 16-channel blocks (k = 1 when a
 * group's channels are multiples of 16), each reading its channel blocks of
 * x and writing its own of y, the k groups of a slice as one block-diagonal
 * conv (k times their MACs); when no k < groups fits, one block-diagonal
 * conv over all the channels (groups times the MACs). */
static int conv_tasks(struct cc_ctx *c, struct cc_node *n, const char *opname, int xi, int wi,
		      int bi, int ri, int out, const struct cc_conv *full, const float *f)
{
	int64_t G = full->groups;
	if (G < 1 || full->cin % G || full->cout % G)
		return NODE_FAIL(c, n, "group %lld does not divide %lld input and %lld output "
				       "channels", (long long)G, (long long)full->cin,
				 (long long)full->cout);
	int64_t cpg = full->cin / G, opg = full->cout / G, k = G;
	int dw = G > 1 && G == full->cin && G == full->cout;
	for (int64_t d = 1; G > 1 && !dw && d < G; d++)
		if (G % d == 0 && d * cpg % 16 == 0 && d * opg % 16 == 0) {
			k = d;
			break;
		}
	int64_t boff = -1;
	if (bi >= 0) {
		float *bf = const_floats(c, n, bi);
		if (!bf)
			return -1;
		uint16_t *bh = calloc((size_t)cc_pad16(full->cout), 2);
		if (!bh) {
			free(bf);
			return NODE_FAIL(c, n, "out of memory");
		}
		dv_f32_to_f16_n(bf, bh, (size_t)full->cout);
		boff = weight_add(c, bh, (uint64_t)cc_pad16(full->cout) * 2);
		free(bf);
		free(bh);
		if (boff < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	if (ws_place(c, out))
		return -1;
	char op[64]; /* the fused ops, as far as they fit */
	snprintf(op, sizeof op, "%s", opname);
	if (n->fused[0]) {
		strncat(op, "+", sizeof op - strlen(op) - 1);
		strncat(op, n->fused, sizeof op - strlen(op) - 1);
	}
	int64_t ho = cc_conv_ho(full), wo = cc_conv_wo(full);
	for (int64_t s = 0; s < G / k; s++) {
		struct cc_conv cv = *full;
		if (k < G) {
			cv.cin = k * cpg;
			cv.cout = k * opg;
			cv.groups = k;
			cv.x_c1 = (full->cin + 15) / 16;
			cv.x_c1o = s * k * cpg / 16;
			cv.y_n1 = (full->cout + 15) / 16;
			cv.y_n1o = s * k * opg / 16;
		}
		uint64_t wb = cc_conv_weight_bytes(&cv);
		uint16_t *h = calloc(1, wb ? wb : 1);
		if (!h)
			return NODE_FAIL(c, n, "out of memory");
		cc_conv_layout_weights(&cv, f + s * k * opg * cpg * full->kh * full->kw, h);
		int64_t woff = weight_add(c, h, wb);
		free(h);
		if (woff < 0)
			return NODE_FAIL(c, n, "out of memory");
		char name[300];
		if (k < G)
			snprintf(name, sizeof name, "%s#g%lld", n->name, (long long)(s * k));
		struct task *t = task_new(c, k < G ? name : n->name, op);
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		char msg[256];
		if (cc_gen_conv(c->cfg, &cv, &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		arg_tensor(c, t, xi);
		t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, woff, 0 };
		arg_tensor(c, t, out);
		if (bi >= 0)
			t->args[t->nargs++] =
				(struct om_arg){ OM_ARG_WEIGHT, boff + s * k * opg * 2, 0 };
		if (ri >= 0) /* an argument: the memory plan keeps it alive up to this task */
			arg_tensor(c, t, ri);
		/* depthwise weights are [C1][kh][kw][16]: the NC1HWC0 of [1, C, kh, kw] */
		io_dev(c, t, 0, xi);
		io_add(t, 0, wi, wi, CC_F16, dw ? CC_FMT_NC1HWC0 : CC_FMT_FRACTAL_Z);
		if (bi >= 0)
			io_add(t, 0, bi, bi, CC_F16, CC_FMT_ND);
		if (ri >= 0)
			io_dev(c, t, 0, ri);
		io_dev(c, t, 1, out);
		t->flops = 2 * (uint64_t)(cv.n * cv.cout * ho * wo) *
			   (uint64_t)(cv.cin / cv.groups * cv.kh * cv.kw);
		if (ri >= 0) /* the addition */
			t->flops += (uint64_t)(cv.n * cv.cout * ho * wo);
		t->bytes += wb;
	}
	return 0;
}

static int lower_conv(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], wi = n->in[1], out = n->out[0];
	int bi = n->nin > 2 ? n->in[2] : -1;
	int ri = n->res_in ? n->in[n->res_in] : -1; /* pass_fuse_residual.c */
	struct cc_tensor *x = T(c, xi), *w = T(c, wi);
	if (!w->data)
		return NODE_FAIL(c, n, "weights that are not constants are not supported yet");
	if (x->rank == 3)
		return lower_1d(c, n, lower_conv);
	struct window wd;
	int64_t kh, kw;
	weight_window(w, &kh, &kw);
	if (window_of(c, n, x, kh, kw, 0, &wd))
		return -1;
	if (w->dims[1] * cc_attr_int(n, "group", 1) != x->dims[1])
		return NODE_FAIL(c, n, "weights of %lld input channels per group do not fit %lld "
				       "input channels in %lld groups", (long long)w->dims[1],
				 (long long)x->dims[1], (long long)cc_attr_int(n, "group", 1));
	struct cc_conv cv = { 0 };
	cv.n = x->dims[0];
	cv.cin = x->dims[1];
	cv.h = x->dims[2];
	cv.w = x->dims[3];
	cv.cout = w->dims[0];
	cv.kh = wd.kh;
	cv.kw = wd.kw;
	cv.sh = wd.sh;
	cv.sw = wd.sw;
	cv.pt = wd.pt;
	cv.pl = wd.pl;
	cv.pb = wd.pb;
	cv.pr = wd.pr;
	cv.dh = wd.dh;
	cv.dw = wd.dw;
	cv.groups = cc_attr_int(n, "group", 1);
	cv.has_bias = bi >= 0;
	cv.act = (enum cc_act)n->act;
	cv.clip_lo = n->act_lo;
	cv.clip_hi = n->act_hi;
	cv.has_residual = ri >= 0;
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	/* the kernel reads the residual in the output's own layout */
	if (ri >= 0 && (c->dev[ri].where != W_WS || !c->dev[ri].nc1hwc0))
		return NODE_FAIL(c, n, "a residual '%s' that is not a 4-D activation is not "
				       "supported", T(c, ri)->name);
	float *f = const_floats(c, n, wi);
	if (!f)
		return -1;
	int rc = conv_tasks(c, n, "Conv", xi, wi, bi, ri, out, &cv, f);
	free(f);
	return rc;
}

/* ConvTranspose as a stride-1 Conv: the input with sh - 1 zero rows and
 * sw - 1 zero columns inserted (cc_gen_zero_insert, into a scratch tensor;
 * none for stride 1), padded by dh*(kh-1) - pads (+ output_padding at the
 * end) and convolved with the weights flipped in both spatial axes and
 * transposed per group ([cin][cout/g] -> [cout][cin/g]).  The scatter costs
 * a pass over the inserted tensor and the conv sh*sw times the MACs of
 * the transposed conv (it multiplies the inserted zeros). */
static int lower_convt(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], wi = n->in[1], out = n->out[0];
	int bi = n->nin > 2 ? n->in[2] : -1;
	struct cc_tensor *x = T(c, xi), *w = T(c, wi);
	if (!w->data)
		return NODE_FAIL(c, n, "weights that are not constants are not supported yet");
	if (x->rank == 3)
		return lower_1d(c, n, lower_convt);
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	struct convt g;
	if (convt_geom(c, n, x, w, &g))
		return -1;
	int64_t G = cc_attr_int(n, "group", 1), cin = x->dims[1], opg = w->dims[1];
	if (G < 1 || cin % G || w->dims[0] != cin)
		return NODE_FAIL(c, n, "weights [%lld, %lld, ...] do not fit %lld input channels in "
				       "%lld groups", (long long)w->dims[0], (long long)opg,
				 (long long)cin, (long long)G);
	int64_t cpg = cin / G, cout = opg * G, kh = g.kh, kw = g.kw;
	struct cc_conv cv = { 0 };
	cv.n = x->dims[0];
	cv.cin = cin;
	cv.h = (x->dims[2] - 1) * g.sh + 1;
	cv.w = (x->dims[3] - 1) * g.sw + 1;
	cv.cout = cout;
	cv.kh = kh;
	cv.kw = kw;
	cv.sh = cv.sw = 1;
	cv.dh = g.dh;
	cv.dw = g.dw;
	cv.pt = g.dh * (kh - 1) - g.pt;
	cv.pb = g.dh * (kh - 1) - g.pb + g.oph;
	cv.pl = g.dw * (kw - 1) - g.pl;
	cv.pr = g.dw * (kw - 1) - g.pr + g.opw;
	cv.groups = G;
	cv.has_bias = bi >= 0;
	cv.act = (enum cc_act)n->act;
	cv.clip_lo = n->act_lo;
	cv.clip_hi = n->act_hi;
	if (cv.pt < 0 || cv.pb < 0 || cv.pl < 0 || cv.pr < 0)
		return NODE_FAIL(c, n, "pads larger than the dilated kernel (a cropped output) are "
				       "not supported yet");
	if (cc_conv_ho(&cv) != g.ho || cc_conv_wo(&cv) != g.wo)
		return NODE_FAIL(c, n, "internal: transposed conv geometry mismatch");
	float *f = const_floats(c, n, wi);
	if (!f)
		return -1;
	float *ft = malloc((size_t)(cout * cpg * kh * kw) * sizeof *ft);
	if (!ft) {
		free(f);
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int64_t co = 0; co < cout; co++)
		for (int64_t i = 0; i < cpg; i++)
			for (int64_t a = 0; a < kh; a++)
				for (int64_t b = 0; b < kw; b++)
					ft[((co * cpg + i) * kh + a) * kw + b] =
						f[(((co / opg * cpg + i) * opg + co % opg) * kh +
						   kh - 1 - a) * kw + kw - 1 - b];
	free(f);
	int zi = xi;
	if (g.sh > 1 || g.sw > 1) {
		int64_t dz[4] = { cv.n, cin, cv.h, cv.w };
		zi = tensor4_new(c, n->name, "zeroins", dz);
		struct task *t = zi < 0 ? NULL : output_task(c, n, zi);
		if (!t) {
			free(ft);
			return zi < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		}
		snprintf(t->op_type, sizeof t->op_type, "ZeroInsert");
		char msg[256];
		if (cc_gen_zero_insert(c->cfg, cv.n * ((cin + 15) / 16), x->dims[2], x->dims[3], g.sh,
				       g.sw, &t->prog, &t->block_dim, msg, sizeof msg)) {
			free(ft);
			return NODE_FAIL(c, n, "%s", msg);
		}
		one_in_one_out(c, t, xi, zi);
	}
	int rc = conv_tasks(c, n, "ConvTranspose", zi, wi, bi, -1, out, &cv, ft);
	free(ft);
	return rc;
}

static int lower_pool_common(struct cc_ctx *c, struct cc_node *n, int global, int is_max)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	if (n->nout > 1 && n->out[1] >= 0 && cc_tensor_uses(&c->g, n->out[1]))
		return NODE_FAIL(c, n, "the Indices output is not supported yet");
	if (x->rank == 3)
		return lower_1d(c, n, is_max ? lower_maxpool : lower_avgpool);
	struct cc_pool pl = { 0 };
	pl.n = x->dims[0];
	pl.c = x->dims[1];
	pl.h = x->dims[2];
	pl.w = x->dims[3];
	pl.is_max = is_max;
	if (global) {
		pl.kh = pl.h;
		pl.kw = pl.w;
		pl.sh = pl.sw = 1;
		pl.ho = pl.wo = 1;
	} else {
		struct window wd;
		if (window_of(c, n, x, 0, 0, 1, &wd))
			return -1;
		if (wd.dh != 1 || wd.dw != 1)
			return NODE_FAIL(c, n, "dilated pooling is not supported yet");
		pl.kh = wd.kh;
		pl.kw = wd.kw;
		pl.sh = wd.sh;
		pl.sw = wd.sw;
		pl.pt = wd.pt;
		pl.pl = wd.pl;
		pl.pb = wd.pb;
		pl.pr = wd.pr;
		pl.ho = wd.ho;
		pl.wo = wd.wo;
		pl.count_include_pad = (int)cc_attr_int(n, "count_include_pad", 0);
	}
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	struct task *t = output_task(c, n, out);
	if (!t)
		return -1;
	char msg[256];
	if (cc_gen_pool(c->cfg, &pl, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	one_in_one_out(c, t, xi, out);
	t->flops = (uint64_t)(pl.n * pl.c * pl.ho * pl.wo * pl.kh * pl.kw);
	return 0;
}

static int lower_maxpool(struct cc_ctx *c, struct cc_node *n)
{
	return lower_pool_common(c, n, 0, 1);
}

static int lower_avgpool(struct cc_ctx *c, struct cc_node *n)
{
	return lower_pool_common(c, n, 0, 0);
}

static int lower_gap(struct cc_ctx *c, struct cc_node *n)
{
	return lower_pool_common(c, n, 1, 0);
}

/* Block strides (in 32-byte blocks) of each logical axis of a tensor in its
 * device layout, and its lane axis (whose index % 16 is the lane; its stride
 * is per 16 elements): NC1HWC0 for 4-D, padded ND otherwise. */
static int dev_strides(const struct cc_tensor *t, int64_t *st)
{
	int r = t->rank;
	if (r == 4) {
		int64_t h = t->dims[2], w = t->dims[3];
		st[3] = 1;
		st[2] = w;
		st[1] = h * w;
		st[0] = (t->dims[1] + 15) / 16 * h * w;
		return 1;
	}
	st[r - 1] = 1;
	for (int i = r - 2; i >= 0; i--)
		st[i] = st[i + 1] * (i + 1 == r - 1 ? cc_pad16(t->dims[i + 1]) / 16 : t->dims[i + 1]);
	return r - 1;
}

/* An input of Concat or Transpose: an activation, or a constant laid out as
 * one (4-D constants are not). */
static int act_input(struct cc_ctx *c, struct cc_node *n, int xi)
{
	if (c->dev[xi].where == W_NONE && weight_place_act(c, n, xi))
		return -1;
	return 0;
}

/* Concat along any axis, one kernel per input, in order (the last-axis
 * kernel merges with what its left neighbour wrote).  Along an axis that is
 * not the lane axis, or along NC1HWC0's channels when every input but the
 * last fills whole C1 blocks, each input is a strided copy of whole blocks:
 * chunks of the input's extent along the axis times the blocks inside it.
 * Along ND's padded last axis the lanes move (cc_gen_concat_last). */
static int lower_concat(struct cc_ctx *c, struct cc_node *n)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	int r = y->rank;
	int64_t axis = cc_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += r;
	if (r < 1 || axis < 0 || axis >= r)
		return NODE_FAIL(c, n, "Concat's axis is out of range");
	for (int k = 0; k < n->nin; k++)
		if (act_input(c, n, n->in[k]))
			return -1;
	int nc = r == 4;
	if (nc && axis == 1)
		for (int k = 0; k + 1 < n->nin; k++)
			if (T(c, n->in[k])->dims[1] % 16)
				return NODE_FAIL(c, n, "Concat along channels of inputs whose channels "
						       "are not a multiple of 16 (but the last) is not "
						       "supported yet");
	if (ws_place(c, out))
		return -1;
	/* the block grid: NC1HWC0 [N][C1][H][W], ND [d0].. [d(r-2)][C16/16] */
	int lane = nc ? 1 : r - 1;
	int64_t at = 0; /* elements along axis before this input */
	for (int k = 0; k < n->nin; k++) {
		int xi = n->in[k];
		struct cc_tensor *x = T(c, xi);
		int64_t ext = x->dims[axis];
		if (ext == 0)
			continue;
		struct task *t = task_new(c, n->name, "Concat");
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
			dev_strides(x, sx);
			dev_strides(y, sy);
			for (int i = 0; i < axis; i++)
				outer *= i == lane ? cc_pad16(y->dims[i]) / 16 : y->dims[i];
			/* the axis' block extent: along the channels whole C1 blocks */
			int64_t blk = axis == lane ? (ext + 15) / 16 : ext;
			if (cc_gen_copy(c->cfg, outer, blk * sx[axis] * 32, blk * sx[axis] * 32,
					(axis == lane ? (y->dims[axis] + 15) / 16 : y->dims[axis]) *
						sy[axis] * 32,
					&t->prog, &t->block_dim, msg, sizeof msg))
				return NODE_FAIL(c, n, "%s", msg);
			yoff = (axis == lane ? at / 16 : at) * sy[axis] * 32;
		}
		arg_tensor(c, t, xi);
		arg_tensor(c, t, out);
		t->args[1].value += yoff; /* added to the planned offset */
		io_dev(c, t, 0, xi);
		io_dev(c, t, 1, out);
		at += ext;
	}
	return 0;
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
		if (!vt->data || cc_tensor_numel(vt) != 1 ||
		    (vt->dtype != CC_F32 && vt->dtype != CC_F16))
			return NODE_FAIL(c, n, "a constant_value that is not a constant scalar is "
					       "not supported yet");
		*value = vt->dtype == CC_F32 ? *(const float *)vt->data
					     : dv_f16_to_f32(*(const uint16_t *)vt->data);
	}
	return 0;
}

static int infer_pad(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t pads[2 * CC_MAX_RANK], d[CC_MAX_RANK];
	enum cc_pad_mode mode;
	float value;
	if (pad_params(c, n, x->rank, pads, &mode, &value))
		return -1;
	for (int i = 0; i < x->rank; i++) {
		if (pads[i] < 0 || pads[i + x->rank] < 0)
			return NODE_FAIL(c, n, "negative pads are not supported yet");
		d[i] = x->dims[i] + pads[i] + pads[i + x->rank];
	}
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, d);
}

/* Pad: cc_gen_pad over the block grid of the device layouts; padding along
 * the lane axis (NC1HWC0's channels, ND's last axis) is not done yet. */
static int lower_pad(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int r = x->rank;
	int64_t pads[2 * CC_MAX_RANK];
	struct cc_pad pd = { .rank = r, .chan_axis = -1 };
	if (pad_params(c, n, r, pads, &pd.mode, &pd.value))
		return -1;
	if (r < 1 || r > CC_PAD_MAX_RANK)
		return NODE_FAIL(c, n, "Pad of rank %d is not supported yet", r);
	int nc = r == 4, lane = nc ? 1 : r - 1;
	if (pads[lane] || pads[lane + r])
		return NODE_FAIL(c, n, "Pad along %s is not supported yet",
				 nc ? "the channels of a 4-D tensor" : "the last axis");
	if (act_input(c, n, xi))
		return -1;
	for (int q = 0; q < r; q++) {
		pd.xcnt[q] = q == lane ? (x->dims[q] + 15) / 16 : x->dims[q];
		pd.ycnt[q] = q == lane ? (y->dims[q] + 15) / 16 : y->dims[q];
		pd.before[q] = q == lane ? 0 : pads[q];
	}
	if (nc) {
		pd.chan_axis = 1;
		pd.chan_valid = x->dims[1] % 16 ? x->dims[1] % 16 : 16;
	}
	struct task *t = output_task(c, n, out);
	if (!t)
		return -1;
	char msg[256];
	if (cc_gen_pad(c->cfg, &pd, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	one_in_one_out(c, t, xi, out);
	return 0;
}

/* BatchNormalization not folded into a Conv: a per-channel affine map. */
static int lower_bn(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	if (x->rank == 3 && c->dev[xi].where == W_WS)
		return lower_1d(c, n, lower_bn);
	if (x->rank != 4 || c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "BatchNormalization other than on a 4-D activation is not "
				       "supported yet");
	int64_t C = x->dims[1], c16 = cc_pad16(C);
	float *v[4];
	for (int k = 0; k < 4; k++) {
		v[k] = n->nin > k + 1 ? const_floats(c, n, n->in[k + 1]) : NULL;
		if (!v[k] || cc_tensor_numel(T(c, n->in[k + 1])) != C) {
			for (int j = 0; j <= k; j++)
				free(v[j]);
			return NODE_FAIL(c, n, "scale, bias, mean and var that are not constants of "
					       "%lld values are not supported yet", (long long)C);
		}
	}
	float eps = cc_attr_float(n, "epsilon", 1e-5f);
	uint16_t *h = calloc((size_t)(2 * c16), 2);
	if (!h) {
		for (int k = 0; k < 4; k++)
			free(v[k]);
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int64_t i = 0; i < C; i++) {
		double k = v[0][i] / sqrt((double)v[3][i] + eps);
		h[i] = dv_f32_to_f16((float)k);
		h[c16 + i] = dv_f32_to_f16((float)(v[1][i] - v[2][i] * k));
	}
	int64_t off = weight_add(c, h, (uint64_t)(2 * c16 * 2));
	free(h);
	for (int k = 0; k < 4; k++)
		free(v[k]);
	if (off < 0 || ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	char op[64] = "BatchNormalization";
	if (n->fused[0]) {
		strncat(op, "+", sizeof op - strlen(op) - 1);
		strncat(op, n->fused, sizeof op - strlen(op) - 1);
	}
	struct task *t = task_new(c, n->name, op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	char msg[256];
	if (cc_gen_affine(c->cfg, x->dims[0], C, x->dims[2], x->dims[3], (enum cc_act)n->act,
			  n->act_lo, n->act_hi, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	arg_tensor(c, t, xi);
	t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
	arg_tensor(c, t, out);
	io_dev(c, t, 0, xi);
	io_dev(c, t, 1, out);
	t->flops = 2 * (uint64_t)cc_tensor_numel(x);
	return 0;
}

static int lower_softmax(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	int64_t axis = cc_attr_int(n, "axis", c->g.opset >= 13 ? -1 : 1);
	/* pass_fuse_attention.c: a scale and a mask row per mask_div rows */
	float scale = cc_attr_float(n, "davinci_scale", 1.0f);
	int mi = n->nin > 1 ? n->in[1] : -1;
	int64_t mask_div = 0;
	if (axis < 0)
		axis += x->rank;
	/* before opset 13 the input is coerced to 2-D at axis: the same as
	 * opset 13's per-axis softmax only when axis is the last dimension */
	if (axis < 0 || axis >= x->rank || (c->g.opset < 13 && axis != x->rank - 1))
		return NODE_FAIL(c, n, "Softmax coerced to 2-D at an axis other than the last "
				       "is not supported yet");
	if (c->dev[xi].where != W_WS || (c->dev[xi].nc1hwc0 && axis == 1))
		return NODE_FAIL(c, n, "Softmax over the channels of a 4-D activation or of a "
				       "constant is not supported yet");
	if (mi >= 0) {
		/* the pass checked the shapes: one mask row per batch (or one in all) */
		if (axis != x->rank - 1 || c->dev[xi].nc1hwc0)
			return NODE_FAIL(c, n, "a Softmax mask over an axis other than the last is "
					       "not supported yet");
		if (c->dev[mi].where == W_NONE && weight_place_act(c, n, mi))
			return -1;
		mask_div = c->dev[xi].rows / (T(c, mi)->dims[0] == x->dims[0] ? x->dims[0] : 1);
	}
	if (ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, mi >= 0 ? "Softmax+Mask" : n->op);
	char msg[256];
	int64_t rows = c->dev[xi].rows, cols = c->dev[xi].cols, c16 = cc_pad16(cols);
	int rc;
	if (c->dev[xi].nc1hwc0) {
		/* [N][C1][H][W][16]: N, H or W is R over the C0 lanes (padding
		 * channels are lanes of their own, never mixed with real ones) */
		const struct dev_tensor *d = &c->dev[xi];
		int64_t c1 = (d->c + 15) / 16, dims[4] = { d->n, c1, d->h, d->w }, A = 1, C = 16;
		for (int64_t i = 0; i < axis; i++)
			A *= dims[i];
		for (int64_t i = axis + 1; i < 4; i++)
			C *= dims[i];
		rc = !t || cc_gen_softmax_any(c->cfg, A, dims[axis], C, C, 0, scale, 0, &t->prog,
					      &t->block_dim, msg, sizeof msg);
	} else if (axis == x->rank - 1 && cols <= 128)
		rc = !t || cc_gen_softmax(c->cfg, rows, cols, scale, mask_div, &t->prog,
					  &t->block_dim, msg, sizeof msg);
	else if (axis == x->rank - 1)
		rc = !t || cc_gen_softmax_any(c->cfg, rows, 1, c16, cols, 1, scale, mask_div,
					      &t->prog, &t->block_dim, msg, sizeof msg);
	else {
		/* [A][R][C]: the padded rows below axis are the contiguous inner part */
		int64_t A = 1, C = c16;
		for (int64_t i = 0; i < axis; i++)
			A *= x->dims[i];
		for (int64_t i = axis + 1; i < x->rank - 1; i++)
			C *= x->dims[i];
		rc = !t || cc_gen_softmax_any(c->cfg, A, x->dims[axis], C, C, 0, scale, 0,
					      &t->prog, &t->block_dim, msg, sizeof msg);
	}
	if (rc)
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	one_in_one_out(c, t, xi, out);
	if (mi >= 0) { /* the mask is argument 2 */
		arg_tensor(c, t, mi);
		io_dev(c, t, 0, mi);
	}
	t->flops = (4 + (scale != 1.0f) + (mi >= 0)) * (uint64_t)cc_tensor_numel(x);
	return 0;
}

/* The reduced axes of a Reduce* node as a bit set: the "axes" attribute or,
 * from opset 13 (ReduceSum) / 18 (the others), a constant input; none means
 * all unless noop_with_empty_axes.  Returns -1 with the node failed. */
static int reduce_axes(struct cc_ctx *c, struct cc_node *n, unsigned *set)
{
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t v[CC_MAX_RANK];
	int cnt = 0;
	const struct cc_attr *a = cc_attr_find(n, "axes");
	if (a && a->type == CC_ATTR_INTS) {
		if (a->n > CC_MAX_RANK)
			return NODE_FAIL(c, n, "too many axes");
		cnt = (int)a->n;
		for (int i = 0; i < cnt; i++)
			v[i] = a->ints[i];
	} else if (n->nin > 1 && n->in[1] >= 0) {
		struct cc_tensor *at = T(c, n->in[1]);
		if (!at->data || at->dtype != CC_I64)
			return NODE_FAIL(c, n, "axes that are not a constant are not supported yet");
		int64_t k = cc_tensor_numel(at);
		if (k > CC_MAX_RANK)
			return NODE_FAIL(c, n, "too many axes");
		cnt = (int)k;
		for (int i = 0; i < cnt; i++)
			v[i] = ((const int64_t *)at->data)[i];
	}
	*set = 0;
	if (cnt == 0) {
		if (cc_attr_int(n, "noop_with_empty_axes", 0))
			return 0; /* the empty set: the input unchanged */
		*set = (1u << x->rank) - 1;
		return 0;
	}
	for (int i = 0; i < cnt; i++) {
		int64_t ax = v[i] < 0 ? v[i] + x->rank : v[i];
		if (ax < 0 || ax >= x->rank)
			return NODE_FAIL(c, n, "axis %lld is out of range", (long long)v[i]);
		*set |= 1u << ax;
	}
	return 0;
}

static int infer_reduce(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	unsigned set;
	if (reduce_axes(c, n, &set))
		return -1;
	int keep = (int)cc_attr_int(n, "keepdims", 1), r = 0;
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		if (!(set >> i & 1))
			d[r++] = x->dims[i];
		else if (keep)
			d[r++] = 1;
	}
	return set_shape(T(c, n->out[0]), x->dtype, r, d);
}

/* ReduceSum/Mean/Max/Min on a padded ND tensor whose reduced axes (size-1
 * ones aside) are adjacent: [A][R][C] (see kern_reduce.c). */
static int lower_reduce(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	unsigned set;
	if (reduce_axes(c, n, &set))
		return -1;
	if (!set) /* noop_with_empty_axes: an alias, as Identity */
		return lower_identity(c, n);
	int kind = !strcmp(n->op, "ReduceSum") ? 0 : !strcmp(n->op, "ReduceMean") ? 1
		 : !strcmp(n->op, "ReduceMax") ? 2 : 3;
	if (c->dev[xi].where != W_WS || c->dev[xi].nc1hwc0 || y->rank == 4)
		return NODE_FAIL(c, n, "%s of a 4-D tensor, to a 4-D tensor or of a constant is "
				       "not supported yet", n->op);
	for (int i = 0; i < x->rank; i++)
		if (x->dims[i] < 1)
			return NODE_FAIL(c, n, "empty tensors are not supported yet");
	int k0 = -1, k1 = -1;
	for (int i = 0; i < x->rank; i++)
		if (set >> i & 1 && x->dims[i] > 1) {
			if (k0 < 0)
				k0 = i;
			k1 = i;
		}
	if (k0 < 0) /* only size-1 axes: a reduction of one element each */
		for (int i = 0; i < x->rank; i++)
			if (set >> i & 1)
				k0 = k1 = i;
	for (int i = k0; i <= k1; i++)
		if (!(set >> i & 1) && x->dims[i] > 1)
			return NODE_FAIL(c, n, "%s over axes that are not adjacent is not "
					       "supported yet", n->op);
	int last = k1 == x->rank - 1;
	int64_t A = 1, R = 1, cols = x->dims[x->rank - 1], C = cc_pad16(cols);
	for (int i = 0; i < k0; i++)
		A *= x->dims[i];
	for (int i = k0; i <= k1 && i < x->rank - 1; i++)
		R *= x->dims[i];
	for (int i = k1 + 1; i < x->rank - 1; i++)
		C *= x->dims[i];
	int64_t D = y->rank ? y->dims[y->rank - 1] : 1;
	if (ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, n->op);
	char msg[256];
	if (!t || cc_gen_reduce(c->cfg, kind, A, R, C, cols, last, last ? D : 1, &t->prog,
				&t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	one_in_one_out(c, t, xi, out);
	t->flops = (uint64_t)cc_tensor_numel(x);
	return 0;
}

static int transpose_folds(struct cc_ctx *c, const struct cc_node *tr);

/* Transpose: the identity is a view; swapping the last two axes of a 2-D or
 * 3-D activation is the vtranspose kernel built for it; any other
 * permutation (any rank, NC1HWC0 included) is the general block kernel,
 * cc_gen_permute, over both tensors' device layouts. */
static int lower_transpose(struct cc_ctx *c, struct cc_node *n)
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
	if (transpose_folds(c, n))
		return 0;
	if (x->rank > CC_PERM_MAX_RANK)
		return NODE_FAIL(c, n, "Transpose of rank %d is not supported yet", x->rank);
	if (act_input(c, n, xi))
		return -1;
	swap_last &= x->rank >= 2 && perm[x->rank - 2] == x->rank - 1 &&
		     perm[x->rank - 1] == x->rank - 2;
	struct task *t = output_task(c, n, out);
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
		int lx = dev_strides(x, sx);
		pm.lane_y = dev_strides(T(c, out), pm.sy);
		for (int q = 0; q < x->rank; q++) {
			pm.dims[q] = x->dims[perm[q]];
			pm.sx[q] = sx[perm[q]];
			if (perm[q] == lx)
				pm.lane_x = q;
		}
		if (cc_gen_permute(c->cfg, &pm, &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
	}
	one_in_one_out(c, t, xi, out);
	return 0;
}

static int lower_eltwise(struct cc_ctx *c, struct cc_node *n);

/* max(lo, min(hi, x)) with constant bounds (eltwise_steps). */
static int lower_clip(struct cc_ctx *c, struct cc_node *n)
{
	for (int k = 1; k < 3 && k < n->nin; k++)
		if (n->in[k] >= 0 && !T(c, n->in[k])->data)
			return NODE_FAIL(c, n, "bounds that are not constants are not supported yet");
	return lower_eltwise(c, n);
}

/* The vector steps of one element-wise node, in its own slot numbering:
 * slot 0 is its input, step i writes slot i + 1.  Returns the number of
 * steps, 0 for a node that is not element-wise in this sense, -1 on error.
 * *xi receives the input that is not a constant scalar. */
static int eltwise_steps(struct cc_ctx *c, const struct cc_node *n, struct cc_vstep *s, int *xi)
{
	int ns = 0;
	const char *op = n->op;
	*xi = n->in[0];
	if (!strcmp(op, "Relu"))
		s[ns++] = (struct cc_vstep){ CC_V_RELU, 0, 0, 0 };
	else if (!strcmp(op, "Abs"))
		s[ns++] = (struct cc_vstep){ CC_V_ABS, 0, 0, 0 };
	else if (!strcmp(op, "Exp"))
		s[ns++] = (struct cc_vstep){ CC_V_EXP, 0, 0, 0 };
	else if (!strcmp(op, "Log"))
		s[ns++] = (struct cc_vstep){ CC_V_LN, 0, 0, 0 };
	else if (!strcmp(op, "Sqrt"))
		s[ns++] = (struct cc_vstep){ CC_V_SQRT, 0, 0, 0 };
	else if (!strcmp(op, "Reciprocal"))
		s[ns++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
	else if (!strcmp(op, "Neg"))
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
	else if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish")) {
		/* max(0, min(1, alpha x + beta)), times x for HardSwish */
		int sw = !strcmp(op, "HardSwish");
		float alpha = sw ? 1.0f / 6 : cc_attr_float(n, "alpha", 0.2f);
		float beta = sw ? 0.5f : cc_attr_float(n, "beta", 0.5f);
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, alpha };
		s[ns++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, beta };
		s[ns++] = (struct cc_vstep){ CC_V_MAXS, 2, 0, 0.0f };
		s[ns++] = (struct cc_vstep){ CC_V_MINS, 3, 0, 1.0f };
		if (sw)
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 4, 0 };
	} else if (!strcmp(op, "LeakyRelu")) { /* relu(x) + alpha min(x, 0) */
		s[ns++] = (struct cc_vstep){ CC_V_MINS, 0, 0, 0.0f };
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 1, 0, cc_attr_float(n, "alpha", 0.01f) };
		s[ns++] = (struct cc_vstep){ CC_V_RELU, 0, 0, 0 };
		s[ns++] = (struct cc_vstep){ CC_V_ADD, 3, 2, 0 };
	} else if (!strcmp(op, "Sigmoid")) { /* 1 / (1 + exp(-x)) */
		s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
		s[ns++] = (struct cc_vstep){ CC_V_EXP, 1, 0, 0 };
		s[ns++] = (struct cc_vstep){ CC_V_ADDS, 2, 0, 1.0f };
		s[ns++] = (struct cc_vstep){ CC_V_REC, 3, 0, 0 };
	} else if (!strcmp(op, "Clip")) { /* constant bounds (lower_clip's, a fused epilogue's) */
		float lo = cc_attr_float(n, "min", -65504.0f), hi = cc_attr_float(n, "max", 65504.0f);
		for (int k = 1; k < 3 && k < n->nin; k++) {
			if (n->in[k] < 0)
				continue;
			float *f = const_floats(c, n, n->in[k]);
			if (!f)
				return -1;
			*(k == 1 ? &lo : &hi) = f[0];
			free(f);
		}
		s[ns++] = (struct cc_vstep){ CC_V_MAXS, 0, 0, lo };
		s[ns++] = (struct cc_vstep){ CC_V_MINS, 1, 0, hi };
	} else if (!strcmp(op, "Erf")) {
		s[ns++] = (struct cc_vstep){ CC_V_ERF, 0, 0, 0 };
	} else if (!strcmp(op, "Tanh")) {
		s[ns++] = (struct cc_vstep){ CC_V_TANH, 0, 0, 0 };
	} else if (!strcmp(op, "Gelu")) {
		/* pass_fuse_gelu.c's node (or ONNX's): the steps torch's export
		 * computes, in its order, so fusing does not change a bit */
		const struct cc_attr *ap = cc_attr_find(n, "approximate");
		if (ap && ap->s && !strcmp(ap->s, "tanh")) {
			/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 1, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 2, 0, 0.044715f };
			s[ns++] = (struct cc_vstep){ CC_V_ADD, 0, 3, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 4, 0, 0.7978845608f };
			s[ns++] = (struct cc_vstep){ CC_V_TANH, 5, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 6, 0, 1.0f };
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 7, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 8, 0, 0.5f };
		} else if (!ap || (ap->s && !strcmp(ap->s, "none"))) {
			/* 0.5 x (1 + erf(x / sqrt(2))), the division as a multiply */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f / 1.4142135f };
			s[ns++] = (struct cc_vstep){ CC_V_ERF, 1, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 2, 0, 1.0f };
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 3, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 4, 0, 0.5f };
		} else {
			NODE_FAIL(c, n, "approximate='%s' is not supported", ap->s ? ap->s : "");
			return -1;
		}
	} else if (!strcmp(op, "Pow")) {
		/* a constant scalar exponent (lower_pow checks it) */
		float *f = const_floats(c, n, n->in[1]);
		if (!f)
			return -1;
		float e = f[0];
		free(f);
		if (e == 1.0f)
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f };
		else if (e == 0.0f) { /* 1 for every finite x */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 0.0f };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, 1.0f };
		} else if (e == 2.0f || e == -2.0f || e == 3.0f || e == 4.0f) {
			s[ns++] = (struct cc_vstep){ CC_V_MUL, 0, 0, 0 };
			if (e == 3.0f)
				s[ns++] = (struct cc_vstep){ CC_V_MUL, 1, 0, 0 };
			else if (e == 4.0f)
				s[ns++] = (struct cc_vstep){ CC_V_MUL, 1, 1, 0 };
			else if (e == -2.0f)
				s[ns++] = (struct cc_vstep){ CC_V_REC, 1, 0, 0 };
		} else if (e == 0.5f)
			s[ns++] = (struct cc_vstep){ CC_V_SQRT, 0, 0, 0 };
		else if (e == -1.0f)
			s[ns++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
		else if (e == -0.5f)
			s[ns++] = (struct cc_vstep){ CC_V_RSQRT, 0, 0, 0 };
		else { /* exp(e ln x): defined for x > 0 only (NaN below, as ln is) */
			s[ns++] = (struct cc_vstep){ CC_V_LN, 0, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 1, 0, e };
			s[ns++] = (struct cc_vstep){ CC_V_EXP, 2, 0, 0 };
		}
	} else if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
		   !strcmp(op, "Div")) {
		/* with one constant scalar operand: an immediate of a scalar-form op */
		const struct cc_tensor *a = &c->g.t[n->in[0]], *b = &c->g.t[n->in[1]];
		int sa = a->data && cc_tensor_numel(a) == 1, sb = b->data && cc_tensor_numel(b) == 1;
		if (sa == sb)
			return 0;
		*xi = sb ? n->in[0] : n->in[1];
		float *f = const_floats(c, n, sb ? n->in[1] : n->in[0]);
		if (!f)
			return -1;
		float v = f[0];
		free(f);
		if (!strcmp(op, "Add"))
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 0, 0, v };
		else if (!strcmp(op, "Mul"))
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, v };
		else if (!strcmp(op, "Sub") && sb)
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 0, 0, -v };
		else if (!strcmp(op, "Sub")) { /* v - x */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
			s[ns++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, v };
		} else if (sb) { /* x / v, as the hardware would: a multiply by 1/v */
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f / v };
		} else { /* v / x */
			s[ns++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
			s[ns++] = (struct cc_vstep){ CC_V_MULS, 1, 0, v };
		}
	}
	return ns;
}

/* The vector chain of node n and the element-wise nodes fused into it
 * (chain_prev links, set by the element-wise fusion pass); ins[] receives
 * its inputs.  For lower_eltwise and a MatMul's fused epilogue. */
static int eltwise_chain(struct cc_ctx *c, struct cc_node *n, struct cc_vchain *out, int *ins)
{
	int chain[16], len = 0;
	for (int i = (int)(n - c->g.n); i >= 0 && len < 16;
	     i = c->g.n[i].chain_prev ? c->g.n[i].chain_prev - 1 : -1)
		chain[len++] = i;
	struct cc_vchain ch = { .nin = 1 };
	int src = 0;
	ins[0] = ins[1] = -1;
	struct cc_node *head = &c->g.n[chain[len - 1]];
	if (len > 1 && head->nin == 2 && !T(c, head->in[0])->data && !T(c, head->in[1])->data) {
		/* a binary op of two activations starts the chain (see
		 * pass_fuse_eltwise.c): two inputs, its result in slot 2 */
		ch.nin = 2;
		ins[0] = head->in[0];
		ins[1] = head->in[1];
		enum cc_vop vop = !strcmp(head->op, "Add")   ? CC_V_ADD
				  : !strcmp(head->op, "Sub") ? CC_V_SUB
				  : !strcmp(head->op, "Mul") ? CC_V_MUL
							     : CC_V_DIV;
		ch.step[ch.nsteps++] = (struct cc_vstep){ vop, 0, 1, 0 };
		src = 2;
		len--;
	}
	for (int k = len - 1; k >= 0; k--) {
		struct cc_node *m = &c->g.n[chain[k]];
		struct cc_vstep local[16];
		int xi, ns = eltwise_steps(c, m, local, &xi);
		if (ns < 0)
			return -1;
		if (ns == 0 || ch.nsteps + ns > CC_MAX_VSTEPS)
			return NODE_FAIL(c, m, "cannot be lowered as an element-wise chain");
		if (k == len - 1 && ch.nin == 1)
			ins[0] = xi;
		/* local slot 0 is the chain so far, local j >= 1 the result of
		 * this node's step j - 1 */
		int base = ch.nin + ch.nsteps - 1;
		for (int j = 0; j < ns; j++) {
			struct cc_vstep st = local[j];
			st.a = st.a == 0 ? src : base + st.a;
			st.b = st.b == 0 ? src : base + st.b;
			ch.step[ch.nsteps++] = st;
		}
		src = ch.nin + ch.nsteps - 1;
	}
	*out = ch;
	return 0;
}

/* Lower node n and the element-wise nodes fused into it as one vector chain. */
static int lower_eltwise(struct cc_ctx *c, struct cc_node *n)
{
	struct cc_vchain ch;
	int ins[2];
	if (eltwise_chain(c, n, &ch, ins))
		return -1;
	for (int k = 0; k < ch.nin; k++)
		if (c->dev[ins[k]].where == W_NONE && weight_place_act(c, n, ins[k]))
			return -1;
	return run_chain(c, n, &ch, ins);
}

static int lower_unary(struct cc_ctx *c, struct cc_node *n)
{
	return lower_eltwise(c, n);
}

/* Pow with a constant scalar exponent, as an element-wise chain (see
 * eltwise_steps: 2, 3, 4, -2 multiply, 0.5 / -1 / -0.5 are sqrt / 1/x /
 * rsqrt, any other value exp(y ln x), which needs x > 0). */
static int lower_pow(struct cc_ctx *c, struct cc_node *n)
{
	const struct cc_tensor *y = T(c, n->in[1]);
	if (!y->data)
		return NODE_FAIL(c, n, "an exponent that is not a constant is not supported yet");
	if (cc_tensor_numel(y) != 1)
		return NODE_FAIL(c, n, "an exponent tensor (not one constant scalar) is not "
				       "supported yet");
	if (T(c, n->in[0])->dtype != CC_F32 && T(c, n->in[0])->dtype != CC_F16)
		return NODE_FAIL(c, n, "a %s base is not supported yet",
				 cc_dtype_name(T(c, n->in[0])->dtype));
	return lower_eltwise(c, n);
}

static int same_shape(const struct cc_tensor *a, const struct cc_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

/* The broadcasts CNNs and MLPs use: a row vector over an ND tensor's rows,
 * and a constant per-channel vector over an NC1HWC0 tensor.  Returns 0 when
 * lowered, 1 when the shapes are not one of these, -1 on error. */
static int bcast_binary(struct cc_ctx *c, struct cc_node *n, enum cc_vop vop)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	for (int k = 0; k < 2; k++) {
		int xi = n->in[k], vi = n->in[1 - k];
		struct cc_tensor *x = T(c, xi), *v = T(c, vi);
		if (!same_shape(x, y) || c->dev[xi].where != W_WS)
			continue;
		int64_t vn = cc_tensor_numel(v);
		/* per channel: v is [C, 1, 1] or [1, C, 1, 1], constant */
		if (y->rank == 4 && v->data && vn == y->dims[1] && (vop == CC_V_ADD ||
		    vop == CC_V_MUL || (k == 0 && (vop == CC_V_SUB || vop == CC_V_DIV))) &&
		    (v->rank < 2 || v->dims[v->rank - 1] == 1)) {
			float *f = const_floats(c, n, vi);
			if (!f)
				return -1;
			int64_t C = y->dims[1], c16 = cc_pad16(C);
			uint16_t *h = calloc((size_t)(2 * c16), 2);
			if (!h) {
				free(f);
				return NODE_FAIL(c, n, "out of memory");
			}
			for (int64_t i = 0; i < C; i++) {
				float sc = vop == CC_V_MUL ? f[i] : vop == CC_V_DIV ? 1.0f / f[i] : 1.0f;
				float sh = vop == CC_V_ADD ? f[i] : vop == CC_V_SUB ? -f[i] : 0.0f;
				h[i] = dv_f32_to_f16(sc);
				h[c16 + i] = dv_f32_to_f16(sh);
			}
			int64_t off = weight_add(c, h, (uint64_t)(2 * c16 * 2));
			free(f);
			free(h);
			if (off < 0 || ws_place(c, out))
				return NODE_FAIL(c, n, "out of memory");
			struct task *t = task_new(c, n->name, n->op);
			char msg[256];
			if (!t || cc_gen_affine(c->cfg, y->dims[0], C, y->dims[2], y->dims[3],
						CC_ACT_NONE, 0, 0, &t->prog, &t->block_dim, msg,
						sizeof msg))
				return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
			arg_tensor(c, t, xi);
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
			arg_tensor(c, t, out);
			io_dev(c, t, 0, xi);
			io_dev(c, t, 1, out);
			return 0;
		}
		/* a row vector: every dimension of v but the last is 1 */
		int row = y->rank >= 1 && v->rank >= 1 && !c->dev[xi].nc1hwc0 &&
			  v->dims[v->rank - 1] == y->dims[y->rank - 1] &&
			  vn == y->dims[y->rank - 1];
		if (!row)
			continue;
		if (c->dev[vi].where == W_NONE && weight_place_act(c, n, vi))
			return -1;
		if (ws_place(c, out))
			return NODE_FAIL(c, n, "out of memory");
		struct task *t = task_new(c, n->name, n->op);
		char msg[256];
		if (!t || cc_gen_rowbcast(c->cfg, vop, c->dev[xi].rows, c->dev[xi].cols, k == 1,
					  &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
		arg_tensor(c, t, xi);
		arg_tensor(c, t, vi);
		arg_tensor(c, t, out);
		io_dev(c, t, 0, xi);
		io_dev(c, t, 0, vi);
		io_dev(c, t, 1, out);
		t->flops = (uint64_t)cc_tensor_numel(y);
		return 0;
	}
	return 1;
}

/* A constant operand of a broadcast laid out NC1HWC0 in its own dims
 * d[4] (rank-aligned to the output's): a weight offset, or -1. */
static int64_t const_nc1hwc0(struct cc_ctx *c, struct cc_node *n, int ti, const int64_t *d)
{
	float *f = const_floats(c, n, ti);
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
	int64_t off = weight_add(c, h, (uint64_t)(d[0] * c1 * hw * 16 + 16) * 2);
	free(f);
	free(h);
	if (off < 0)
		NODE_FAIL(c, n, "out of memory");
	return off;
}

/* Any numpy broadcast of two operands (kern_bcast_nd.c): both in the
 * output's layout kind (padded ND, or NC1HWC0 for a 4-D output, where a
 * constant is laid out to match). */
static int bcast_nd(struct cc_ctx *c, struct cc_node *n, enum cc_vop vop)
{
	int out = n->out[0];
	struct cc_tensor *y = T(c, out);
	int r = y->rank, nc = r == 4;
	if (r < 1 || r - 1 > CC_BCAST_MAX_RANK)
		return NODE_FAIL(c, n, "broadcasting at rank %d is not supported yet", r);
	struct cc_bcast bc = { .op = vop };
	int64_t yd[CC_MAX_RANK], woff[2] = { -1, -1 };
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
			} else if (weight_place_act(c, n, ti)) {
				return -1;
			}
		} else if (d->where != W_WS && d->where != W_WEIGHT) {
			return NODE_FAIL(c, n, "operand '%s' is not supported yet", x->name);
		} else if (nc != d->nc1hwc0) {
			char s1[96], s2[96];
			shape_str(x, s1, sizeof s1);
			shape_str(y, s2, sizeof s2);
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
	if (ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, n->op);
	char msg[256];
	if (!t || cc_gen_bcast_nd(c->cfg, &bc, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", t ? msg : "out of memory");
	for (int k = 0; k < 2; k++) {
		int ti = n->in[k];
		if (woff[k] >= 0) {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, woff[k], 0 };
			io_add(t, 0, ti, ti, CC_F16, CC_FMT_NC1HWC0);
		} else {
			arg_tensor(c, t, ti);
			io_dev(c, t, 0, ti);
		}
	}
	arg_tensor(c, t, out);
	io_dev(c, t, 1, out);
	t->flops = (uint64_t)cc_tensor_numel(y);
	return 0;
}

static int lower_binary(struct cc_ctx *c, struct cc_node *n)
{
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	const char *op = n->op;
	enum cc_vop vop = !strcmp(op, "Add")   ? CC_V_ADD
			  : !strcmp(op, "Sub") ? CC_V_SUB
			  : !strcmp(op, "Mul") ? CC_V_MUL
					       : CC_V_DIV;
	struct cc_vchain ch = { .nin = 1 };
	/* a constant scalar operand becomes an immediate of a scalar-form op */
	int sa = a->data && cc_tensor_numel(a) == 1, sb = b->data && cc_tensor_numel(b) == 1;
	if (sa != sb)
		return lower_eltwise(c, n);
	if (!same_shape(a, b)) {
		int r = bcast_binary(c, n, vop);
		if (r <= 0)
			return r;
		return bcast_nd(c, n, vop);
	}
	for (int k = 0; k < 2; k++)
		if (c->dev[n->in[k]].where == W_NONE && weight_place_act(c, n, n->in[k]))
			return -1;
	ch.nin = 2;
	ch.step[ch.nsteps++] = (struct cc_vstep){ vop, 0, 1, 0 };
	return run_chain(c, n, &ch, n->in);
}

/* Sum/Max/Min/Mean of any number of inputs: one element-wise chain when
 * they all have the output's shape, a broadcast kernel for two inputs of
 * Sum/Max/Min. */
static int lower_variadic(struct cc_ctx *c, struct cc_node *n)
{
	const char *op = n->op;
	enum cc_vop vop = !strcmp(op, "Max") ? CC_V_MAX : !strcmp(op, "Min") ? CC_V_MIN : CC_V_ADD;
	struct cc_tensor *y = T(c, n->out[0]);
	if (y->dtype != CC_F32 && y->dtype != CC_F16)
		return NODE_FAIL(c, n, "%s of %s is not supported yet", op, cc_dtype_name(y->dtype));
	if (n->nin == 1)
		return lower_identity(c, n);
	int same = 1;
	for (int k = 0; k < n->nin; k++)
		same = same && n->in[k] >= 0 && same_shape(T(c, n->in[k]), y);
	if (!same) {
		if (n->nin == 2 && strcmp(op, "Mean"))
			return bcast_nd(c, n, vop);
		return NODE_FAIL(c, n, "%s of %d inputs that broadcast is not supported yet (2 "
				       "inputs of Sum/Max/Min are)", op, n->nin);
	}
	if (n->nin > 8)
		return NODE_FAIL(c, n, "%s of %d inputs is not supported yet (8 at most)", op,
				 n->nin);
	struct cc_vchain ch = { .nin = n->nin };
	int acc = 0;
	for (int k = 1; k < n->nin; k++) {
		ch.step[ch.nsteps++] = (struct cc_vstep){ vop, acc, k, 0 };
		acc = ch.nin + ch.nsteps - 1;
	}
	if (!strcmp(op, "Mean"))
		ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, acc, 0, 1.0f / (float)n->nin };
	for (int k = 0; k < n->nin; k++)
		if (c->dev[n->in[k]].where == W_NONE && weight_place_act(c, n, n->in[k]))
			return -1;
	return run_chain(c, n, &ch, n->in);
}

/* A workspace tensor of the given shape that no graph node names, for an
 * intermediate a lowering introduces (a transposed or scaled operand). */
static int temp_new(struct cc_ctx *c, const struct cc_node *n, int rank, const int64_t *dims)
{
	char name[600];
	snprintf(name, sizeof name, "%s#tmp%d", n->name, c->g.nt);
	int ti = cc_tensor_add(&c->g, name, CC_F16, rank, dims);
	if (ti < 0)
		return -1;
	struct dev_tensor *dev = realloc(c->dev, (size_t)(c->g.nt + 1) * sizeof *dev);
	if (!dev)
		return -1;
	c->dev = dev;
	memset(&dev[ti], 0, sizeof dev[ti]);
	ws_place(c, ti);
	return ti;
}

/* An activation times a constant, into a new workspace tensor. */
static int scaled(struct cc_ctx *c, struct cc_node *n, int xi, float k)
{
	struct cc_tensor *x = T(c, xi);
	int64_t d[CC_MAX_RANK];
	int rank = x->rank;
	for (int i = 0; i < rank; i++)
		d[i] = x->dims[i];
	if (c->dev[xi].where == W_NONE && weight_place_act(c, n, xi))
		return -1;
	int ti = temp_new(c, n, rank, d);
	struct task *t = ti >= 0 ? task_new(c, n->name, "Muls") : NULL;
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	struct cc_vchain ch = { .nin = 1 };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, k };
	char msg[256];
	if (cc_gen_vchain(c->cfg, &ch, dev_elems(&c->dev[xi]), &t->prog, &t->block_dim, msg,
			  sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	one_in_one_out(c, t, xi, ti);
	return ti;
}

/* ---- MatMul, Gemm (kern_matmul.c) ----------------------------------------
 *
 * numpy semantics: the last two axes are the matrices, the others batch axes
 * broadcast against each other.  Each operand is read through a strided
 * view (struct mm_view): the tensor holding its bytes and an element stride
 * per axis, so a Transpose that feeds a MatMul is folded into the view (its
 * input read in place, see mm_fold_ok) and Gemm's transA/transB swap two
 * strides.  The axis with stride 1 is the padded lane axis: when it is the
 * operand's second-last axis the operand is stored transposed, which the
 * kernel transposes fractal by fractal.  The batch axes are then merged:
 * into M when B is shared and A's rows run on (one big GEMM), with their
 * neighbours when the strides agree, the innermost into the kernel's batch
 * and any others into one task each. */
struct mm_view {
	int ti; /* the tensor whose device bytes hold the operand */
	int rank;
	int64_t dims[CC_MAX_RANK];
	int64_t st[CC_MAX_RANK]; /* elements; the lane axis has 1 */
};

/* Element strides of the padded ND layout of dims (rank >= 2). */
static void nd_strides(int rank, const int64_t *dims, int64_t *st)
{
	st[rank - 1] = 1;
	for (int i = rank - 2; i >= 0; i--)
		st[i] = i == rank - 2 ? cc_pad16(dims[rank - 1]) : st[i + 1] * dims[i + 1];
}

static int transpose_perm(const struct cc_node *t, int rank, int64_t *perm)
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
	if (r < 2 || r > 6 || r == 4 || c->dev[xi].where != W_WS || c->dev[xi].nc1hwc0 ||
	    transpose_perm(tr, r, perm))
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
static int transpose_folds(struct cc_ctx *c, const struct cc_node *tr)
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

/* The view of operand ti of node n: a folded Transpose's input, or ti. */
static int mm_view_of(struct cc_ctx *c, struct cc_node *n, int ti, struct mm_view *v)
{
	struct cc_tensor *t = T(c, ti);
	int p = t->producer;
	v->rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		v->dims[i] = t->dims[i];
	if (c->dev[ti].where == W_NONE && !t->data && p >= 0 &&
	    !strcmp(c->g.n[p].op, "Transpose")) {
		int xi = c->g.n[p].in[0];
		int64_t perm[CC_MAX_RANK], sx[CC_MAX_RANK];
		if (transpose_perm(&c->g.n[p], t->rank, perm))
			return NODE_FAIL(c, n, "bad Transpose perm");
		nd_strides(t->rank, T(c, xi)->dims, sx);
		for (int i = 0; i < t->rank; i++)
			v->st[i] = sx[perm[i]];
		v->ti = xi;
		return 0;
	}
	if (c->dev[ti].where == W_NONE && weight_place_act(c, n, ti))
		return -1;
	v->ti = ti;
	if (c->dev[ti].nc1hwc0) {
		/* a 4-D activation: relaid out as padded ND [d0*d1, d2, d3], whose
		 * bytes are those of the ND layout of its own dims */
		int64_t d3[3] = { t->dims[0] * t->dims[1], t->dims[2], t->dims[3] };
		int tmp = temp_new(c, n, 3, d3);
		if (tmp < 0 || relayout(c, n, ti, tmp))
			return tmp < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		v->ti = tmp;
	}
	nd_strides(t->rank, t->dims, v->st);
	return 0;
}

static void mm_swap_last(struct mm_view *v)
{
	int r = v->rank;
	int64_t d = v->dims[r - 2], s = v->st[r - 2];
	v->dims[r - 2] = v->dims[r - 1];
	v->st[r - 2] = v->st[r - 1];
	v->dims[r - 1] = d;
	v->st[r - 1] = s;
}

/* The stride of output batch axis i (of nb) in an operand of rank r: 0 where
 * it broadcasts. */
static int64_t mm_bstride(const struct mm_view *v, int i, int nb)
{
	int j = i - (nb - (v->rank - 2));
	return j < 0 || v->dims[j] == 1 ? 0 : v->st[j];
}

static int matmul_common(struct cc_ctx *c, struct cc_node *n, int ai, int bi, int ta, int tb,
			 float alpha, int bias_ti, float beta)
{
	int out = n->out[0];
	struct cc_tensor *b = T(c, bi), *y = T(c, out);
	struct mm_view va, vb = { 0 };
	if (mm_view_of(c, n, ai, &va))
		return -1;
	if (ta)
		mm_swap_last(&va);
	int b_nz = b->data != NULL;
	int64_t M = va.dims[va.rank - 2], K = va.dims[va.rank - 1];
	int64_t N = tb ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N);
	struct dev_tensor bdev = c->dev[bi];
	if (b_nz) {
		/* each matrix laid out NZ (alpha and transB folded in), one after
		 * another: the view's strides count in those units */
		int64_t nmat = cc_tensor_numel(b) / (K * N);
		float *f = const_floats(c, n, bi);
		if (!f)
			return -1;
		for (int64_t i = 0; i < nmat * K * N; i++)
			f[i] *= alpha;
		uint16_t *h = malloc((size_t)(nmat * K16 * N16) * 2);
		if (!h) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		for (int64_t i = 0; i < nmat; i++)
			cc_layout_b_nz(f + i * K * N, K, N, tb, h + i * K16 * N16);
		int64_t off = weight_add(c, h, (uint64_t)(nmat * K16 * N16 * 2));
		free(f);
		free(h);
		if (off < 0)
			return NODE_FAIL(c, n, "out of memory");
		bdev.where = W_WEIGHT;
		bdev.offset = (uint64_t)off;
		bdev.rows = K;
		bdev.cols = N;
		vb.ti = bi;
		vb.rank = b->rank;
		for (int i = 0; i < b->rank; i++)
			vb.dims[i] = b->dims[i];
		if (tb) {
			vb.dims[b->rank - 2] = K;
			vb.dims[b->rank - 1] = N;
		}
		vb.st[b->rank - 1] = 1;
		vb.st[b->rank - 2] = N16;
		for (int i = b->rank - 3; i >= 0; i--)
			vb.st[i] = (i == b->rank - 3 ? K16 * N16 : vb.st[i + 1] * vb.dims[i + 1]);
	} else {
		if (mm_view_of(c, n, bi, &vb))
			return -1;
		if (tb)
			mm_swap_last(&vb);
		if (alpha != 1.0f) {
			/* scale A: an elementwise copy keeps the view's strides */
			if ((va.ti = scaled(c, n, va.ti, alpha)) < 0)
				return -1;
		}
		bdev = c->dev[vb.ti];
		if (bdev.where == W_NONE)
			return NODE_FAIL(c, n, "input '%s' has no device placement", b->name);
	}
	int64_t bias_off = -1;
	int add_c = -1; /* a C added by a second kernel: an activation or an M x N constant */
	if (bias_ti >= 0) {
		struct cc_tensor *bt = T(c, bias_ti);
		int64_t cnt = cc_tensor_numel(bt);
		if (!bt->data || (cnt != N && cnt != 1)) {
			if (y->rank != 2 || (cnt != N && cnt != M * N) ||
			    (c->dev[bias_ti].where == W_NONE && weight_place_act(c, n, bias_ti)))
				return NODE_FAIL(c, n, "this C (%lld values, beta %g) is not supported "
						       "yet", (long long)cnt, (double)beta);
			add_c = beta == 1.0f ? bias_ti : scaled(c, n, bias_ti, beta);
			if (add_c < 0)
				return -1;
		}
	}
	if (bias_ti >= 0 && add_c < 0) {
		struct cc_tensor *bt = T(c, bias_ti);
		int64_t cnt = cc_tensor_numel(bt);
		float *f = const_floats(c, n, bias_ti);
		if (!f)
			return -1;
		uint16_t *h = calloc((size_t)N16, 2);
		if (!h) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		for (int64_t j = 0; j < N; j++)
			h[j] = dv_f32_to_f16(beta * f[cnt == 1 ? 0 : j]);
		bias_off = weight_add(c, h, (uint64_t)N16 * 2);
		free(f);
		free(h);
		if (bias_off < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	if (ws_place(c, out))
		return -1;
	int prod = out; /* where the products go: out, or a scratch when C is added after */
	if (add_c >= 0) {
		prod = scratch_new(c, n->name, (uint64_t)(M * N16 * 2));
		if (prod < 0)
			return NODE_FAIL(c, n, "out of memory");
		c->dev[prod].rows = M;
		c->dev[prod].cols = N;
		bdev = b_nz ? bdev : c->dev[vb.ti];
	} else if (c->dev[out].nc1hwc0) {
		/* a 4-D result: computed in ND, relaid out after */
		int64_t d3[3] = { y->dims[0] * y->dims[1], y->dims[2], y->dims[3] };
		if ((prod = temp_new(c, n, 3, d3)) < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	int64_t cst[CC_MAX_RANK];
	nd_strides(y->rank, y->dims, cst);
	/* the batch axes: size-1 axes dropped, then merged where possible */
	int nb = 0;
	int64_t ob[CC_MAX_RANK], sa[CC_MAX_RANK], sb[CC_MAX_RANK], sc[CC_MAX_RANK];
	for (int i = 0; i < y->rank - 2; i++) {
		if (y->dims[i] == 1)
			continue;
		ob[nb] = y->dims[i];
		sa[nb] = mm_bstride(&va, i, y->rank - 2);
		sb[nb] = mm_bstride(&vb, i, y->rank - 2);
		sc[nb] = cst[i];
		nb++;
	}
	struct cc_matmul mm = { .batch = 1, .K = K, .N = N, .b_nz = b_nz,
				.has_bias = bias_off >= 0 };
	struct cc_vchain epi; /* pass_fuse_matmul_bias.c's element-wise epilogue */
	if (n->epilogue) {
		int ins[2];
		if (eltwise_chain(c, &c->g.n[n->epilogue - 1], &epi, ins))
			return -1;
		if (epi.nin != 1 || add_c >= 0 || prod != out)
			return NODE_FAIL(c, n, "an element-wise epilogue with a second input, a C "
					       "matrix or a 4-D result is not supported yet");
		mm.epi = &epi;
	}
	int r = va.rank;
	mm.a_trans = va.st[r - 1] != 1;
	mm.a_rs = mm.a_trans ? va.st[r - 1] : va.st[r - 2];
	r = vb.rank;
	mm.b_trans = !b_nz && vb.st[r - 1] != 1;
	mm.b_rs = b_nz ? 0 : mm.b_trans ? vb.st[r - 1] : vb.st[r - 2];
	mm.c_rs = cst[y->rank - 2];
	/* B shared and A's rows running on: the batch is more rows of one GEMM */
	while (nb > 0 && !mm.a_trans && sb[nb - 1] == 0 && sa[nb - 1] == M * mm.a_rs &&
	       sc[nb - 1] == M * mm.c_rs)
		M *= ob[--nb];
	for (int i = nb - 2; i >= 0; i--)
		if (sa[i] == sa[i + 1] * ob[i + 1] && sb[i] == sb[i + 1] * ob[i + 1] &&
		    sc[i] == sc[i + 1] * ob[i + 1]) {
			ob[i + 1] *= ob[i];
			for (int j = i; j + 1 < nb; j++) {
				ob[j] = ob[j + 1];
				sa[j] = sa[j + 1];
				sb[j] = sb[j + 1];
				sc[j] = sc[j + 1];
			}
			nb--;
		}
	mm.M = M;
	if (nb > 0) {
		mm.batch = ob[nb - 1];
		mm.a_bs = sa[nb - 1];
		mm.b_bs = sb[nb - 1];
		mm.c_bs = sc[nb - 1];
	}
	int64_t outer = 1;
	for (int i = 0; i + 1 < nb; i++)
		outer *= ob[i];
	char msg[256];
	for (int64_t o = 0; o < outer; o++) {
		int64_t oa = 0, obb = 0, oc = 0, rem = o;
		for (int i = nb - 2; i >= 0; i--) {
			int64_t idx = rem % ob[i];
			rem /= ob[i];
			oa += idx * sa[i];
			obb += idx * sb[i];
			oc += idx * sc[i];
		}
		struct task *t = task_new(c, n->name, n->op);
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_gen_matmul_batch(c->cfg, &mm, &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		arg_tensor(c, t, va.ti);
		t->args[t->nargs - 1].value += oa * 2;
		t->argt[t->nargs] = bdev.where == W_WS ? bdev.storage : -1;
		struct om_arg *ba = &t->args[t->nargs++];
		ba->kind = bdev.where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE;
		ba->value = (bdev.where == W_WEIGHT ? (int64_t)bdev.offset : 0) + obb * 2;
		arg_tensor(c, t, prod);
		t->args[t->nargs - 1].value += oc * 2;
		if (bias_off >= 0) {
			struct om_arg *bb = &t->args[t->nargs++];
			bb->kind = OM_ARG_WEIGHT;
			bb->value = bias_off;
		}
		/* the tasks each list the whole tensors their matrices come from */
		io_dev(c, t, 0, va.ti);
		if (b_nz)
			io_add(t, 0, bi, bi, CC_F16, CC_FMT_FRACTAL_NZ);
		else
			io_dev(c, t, 0, vb.ti);
		if (bias_off >= 0)
			io_add(t, 0, bias_ti, bias_ti, CC_F16, CC_FMT_ND);
		io_add(t, 1, prod, add_c >= 0 ? out : prod, CC_F16, CC_FMT_ND);
		t->flops = 2 * (uint64_t)(mm.batch * M * K * N);
		if (mm.epi)
			t->flops += (uint64_t)(mm.batch * M * cc_pad16(N) * epi.nsteps);
		t->bytes += (uint64_t)(K * N * 2);
	}
	if (prod != out && add_c < 0)
		return relayout(c, n, prod, out);
	if (add_c < 0)
		return 0;
	/* C added after the products: a row vector, or a matrix of the same shape */
	struct task *t = task_new(c, n->name, "Add");
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	int bad;
	if (cc_tensor_numel(T(c, add_c)) == N) {
		bad = cc_gen_rowbcast(c->cfg, CC_V_ADD, M, N, 0, &t->prog, &t->block_dim, msg,
				      sizeof msg);
		arg_tensor(c, t, prod);
		arg_tensor(c, t, add_c);
	} else {
		struct cc_vchain ch = { .nin = 2 };
		ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_ADD, 0, 1, 0 };
		bad = cc_gen_vchain(c->cfg, &ch, M * N16, &t->prog, &t->block_dim, msg,
				    sizeof msg);
		arg_tensor(c, t, prod);
		arg_tensor(c, t, add_c);
	}
	if (bad)
		return NODE_FAIL(c, n, "%s", msg);
	arg_tensor(c, t, out);
	io_add(t, 0, prod, out, CC_F16, CC_FMT_ND);
	io_dev(c, t, 0, add_c);
	io_dev(c, t, 1, out);
	return 0;
}

/* MatMul, with the bias pass_fuse_matmul_bias.c folded into it as in[2]. */
static int lower_matmul(struct cc_ctx *c, struct cc_node *n)
{
	int bias = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1;
	return matmul_common(c, n, n->in[0], n->in[1], 0, 0, 1.0f, bias, 1.0f);
}

/* Gemm: Y = alpha * A' x B' + beta * C.  A constant B takes transB and alpha
 * in its layout; an activation operand's transposition is a view, and alpha
 * scales A. */
static int lower_gemm(struct cc_ctx *c, struct cc_node *n)
{
	int ta = (int)cc_attr_int(n, "transA", 0), tb = (int)cc_attr_int(n, "transB", 0);
	float alpha = cc_attr_float(n, "alpha", 1);
	int bias = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1;
	return matmul_common(c, n, n->in[0], n->in[1], ta, tb, alpha, bias,
			     cc_attr_float(n, "beta", 1));
}

/* ---- Resize, Upsample (kern_resize.c) ----------------------------------- */

struct resize_spec {
	int linear;
	enum cc_resize_ctm ctm;
	enum cc_resize_nearest nm;
	double sh, sw; /* the scales the coordinates use */
	int64_t ho, wo;
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
	if (need4(c, n))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int upsample = !strcmp(n->op, "Upsample");
	int old = upsample || c->g.opset < 11; /* Upsample and Resize-10: asymmetric, floor */
	const char *mode = str_attr(n, "mode", "nearest");
	if (!strcmp(mode, "nearest"))
		rp->linear = 0;
	else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear"))
		rp->linear = 1;
	else
		return NODE_FAIL(c, n, "%s mode '%s' is not supported yet (nearest and linear only)",
				 n->op, mode);
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

static int infer_resize(struct cc_ctx *c, struct cc_node *n)
{
	struct resize_spec rp;
	if (resize_spec(c, n, &rp))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t d[4] = { x->dims[0], x->dims[1], rp.ho, rp.wo };
	return set_shape(T(c, n->out[0]), x->dtype, 4, d);
}

static int lower_resize(struct cc_ctx *c, struct cc_node *n)
{
	struct resize_spec rp;
	if (resize_spec(c, n, &rp))
		return -1;
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	if (c->dev[xi].where == W_NONE)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	int64_t h = x->dims[2], w = x->dims[3], ho = rp.ho, wo = rp.wo;
	int64_t *ix = malloc((size_t)(2 * (ho + wo)) * sizeof *ix);
	float *fx = malloc((size_t)(ho + wo) * sizeof *fx);
	uint16_t *tab = NULL;
	int rc = -1;
	if (!ix || !fx) {
		NODE_FAIL(c, n, "out of memory");
		goto done;
	}
	struct cc_resize rs = { x->dims[0] * (cc_pad16(x->dims[1]) / 16), h, w, ho, wo,
				rp.linear, ix, ix + ho, ix + 2 * ho, ix + 2 * ho + wo, fx, fx + ho };
	cc_resize_axis(h, ho, rp.sh, rp.ctm, rp.nm, rp.linear, ix, ix + ho, fx);
	cc_resize_axis(w, wo, rp.sw, rp.ctm, rp.nm, rp.linear, ix + 2 * ho, ix + 2 * ho + wo,
		       fx + ho);
	int64_t off = -1;
	if (rp.linear) {
		int64_t bytes = cc_resize_table_bytes(&rs);
		tab = malloc((size_t)bytes);
		if (!tab) {
			NODE_FAIL(c, n, "out of memory");
			goto done;
		}
		cc_resize_table(&rs, tab);
		off = weight_add(c, tab, (uint64_t)bytes);
		if (off < 0) {
			NODE_FAIL(c, n, "out of memory");
			goto done;
		}
	}
	if (ws_place(c, out))
		goto done;
	struct task *t = task_new(c, n->name, n->op);
	if (!t) {
		NODE_FAIL(c, n, "out of memory");
		goto done;
	}
	char msg[256];
	if (cc_gen_resize(c->cfg, &rs, &t->prog, &t->block_dim, msg, sizeof msg)) {
		NODE_FAIL(c, n, "%s", msg);
		goto done;
	}
	arg_tensor(c, t, xi);
	if (rp.linear)
		t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
	arg_tensor(c, t, out);
	io_dev(c, t, 0, xi);
	io_dev(c, t, 1, out);
	t->flops = rp.linear ? 4 * (uint64_t)cc_tensor_numel(T(c, out)) : 0;
	rc = 0;
done:
	free(ix);
	free(fx);
	free(tab);
	return rc;
}

/* ---- data movement: Gather, Slice, Split, Squeeze/Unsqueeze, Expand, Cast -- */

/* An integer or bool graph input.  Consumed only as Gather's indices it
 * stays in place (W_INPUT): the gather kernel reads it with scalar loads.
 * Otherwise an edge kernel (kern_dtype.c) converts it to fp32 and the
 * TransData to the fp16 device layout, as every activation. */
static int int_input_check(struct cc_ctx *c, int ti)
{
	struct cc_tensor *t = T(c, ti);
	if (t->dtype != CC_I64 && t->dtype != CC_I32 && t->dtype != CC_BOOL &&
	    t->dtype != CC_U8 && t->dtype != CC_I8 && t->dtype != CC_F16)
		return fail(c, "input '%s' is %s: inputs other than float32, float16, int32, int64, "
			       "int8, uint8 and bool are not supported yet", t->name,
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
static int int_input_raw(struct cc_ctx *c, int ti)
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

/* The int64 values of a constant integer tensor (NULL if it is not one). */
static int64_t *const_ints(struct cc_ctx *c, int ti, int64_t *cnt)
{
	if (ti < 0)
		return NULL;
	const struct cc_tensor *t = T(c, ti);
	*cnt = cc_tensor_numel(t);
	if (*cnt < 0 || !t->data || (t->dtype != CC_I64 && t->dtype != CC_I32))
		return NULL;
	int64_t *v = malloc((size_t)(*cnt ? *cnt : 1) * sizeof *v);
	for (int64_t i = 0; v && i < *cnt; i++)
		v[i] = t->dtype == CC_I64 ? ((const int64_t *)t->data)[i]
					  : ((const int32_t *)t->data)[i];
	return v;
}

static int infer_gather(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
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
	return set_shape(T(c, n->out[0]), x->dtype, r, d);
}

/* Is axis the lane axis of t's device layout (ND's last, NC1HWC0's C)? */
static int lane_axis(const struct cc_tensor *t) { return t->rank == 4 ? 1 : t->rank - 1; }

/* Block-grid counts of a tensor's device layout, per logical axis. */
static void grid_counts(const struct cc_tensor *t, int64_t *cnt)
{
	int lane = lane_axis(t);
	for (int i = 0; i < t->rank; i++)
		cnt[i] = i == lane ? (t->dims[i] + 15) / 16 : t->dims[i];
}

/* Gather along an axis that is not the lane axis: whole rows (the blocks
 * inside the axis) move, into out, which has x's rank with nidx at axis. */
static int gather_rows(struct cc_ctx *c, struct cc_node *n, int xi, int axis, int ii,
		       const int64_t *cidx, int64_t nidx, int out)
{
	struct cc_tensor *x = T(c, xi);
	int64_t cnt[CC_MAX_RANK], st[CC_MAX_RANK];
	grid_counts(x, cnt);
	dev_strides(x, st);
	struct cc_gather gd = { 1, x->dims[axis], st[axis] * 32, nidx, 0, cidx };
	for (int i = 0; i < axis; i++)
		gd.outer *= cnt[i];
	if (!cidx)
		gd.idx_bytes = (int)cc_dtype_size(T(c, ii)->dtype);
	if (c->dev[out].where == W_NONE && ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_gather(c->cfg, &gd, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	arg_tensor(c, t, xi);
	io_dev(c, t, 0, xi); /* the table first: simrun bounds random indices by it */
	if (cidx) { /* resolved at compile time: a placeholder argument */
		t->args[t->nargs++] = (struct om_arg){ OM_ARG_SCALAR, 0, 0 };
	} else {
		if (c->dev[ii].where == W_INPUT) {
			arg_tensor(c, t, ii);
		} else { /* also converted for other consumers: its raw binding here */
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0,
							       (uint32_t)raw_input(c, ii) };
			t->bytes += (uint64_t)cc_tensor_numel(T(c, ii)) * cc_dtype_size(T(c, ii)->dtype);
		}
		io_add(t, 0, ii, ii, T(c, ii)->dtype, CC_FMT_ND);
	}
	arg_tensor(c, t, out);
	io_dev(c, t, 1, out);
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
static int lower_gather(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], ii = n->in[1], out = n->out[0];
	struct cc_tensor *ix = T(c, ii);
	int64_t nidx = cc_tensor_numel(ix), ncidx = 0;
	int64_t *cidx = const_ints(c, ii, &ncidx);
	int rc = -1;
	if (!cidx && c->dev[ii].where != W_INPUT && raw_input(c, ii) < 0) {
		rc = NODE_FAIL(c, n, "indices computed on the device are not supported yet");
		goto done;
	}
	if (nidx < 1) {
		rc = NODE_FAIL(c, n, "empty indices are not supported yet");
		goto done;
	}
	if (act_input(c, n, xi))
		goto done;
	struct cc_tensor *x = T(c, xi);
	int axis = (int)cc_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += x->rank;
	int src = xi;
	if (axis == lane_axis(x)) {
		if (x->rank + 1 > CC_MAX_RANK) {
			rc = NODE_FAIL(c, n, "Gather along the last axis of a rank-%d tensor is not "
					     "supported yet", x->rank);
			goto done;
		}
		int64_t d[CC_MAX_RANK];
		memcpy(d, x->dims, sizeof d);
		d[x->rank] = 1;
		src = temp_new(c, n, x->rank + 1, d);
		if (src < 0 || relayout(c, n, xi, src) < 0) {
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
	int gi = same ? out : temp_new(c, n, s->rank, g);
	if (gi < 0) {
		rc = NODE_FAIL(c, n, "out of memory");
		goto done;
	}
	if (gather_rows(c, n, src, axis, ii, cidx, nidx, gi))
		goto done;
	rc = same ? 0 : view_into(c, n, gi, out);
done:
	free(cidx);
	return rc;
}

/* Slice's per-axis ranges [b, b + ext) of x, clamped as ONNX says; steps
 * of 1 only.  Starts, ends, axes: attributes before opset 10, constant
 * inputs from it. */
static int slice_ranges(struct cc_ctx *c, struct cc_node *n, int64_t *b, int64_t *ext)
{
	struct cc_tensor *x = T(c, n->in[0]);
	for (int i = 0; i < x->rank; i++) {
		b[i] = 0;
		ext[i] = x->dims[i];
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
		st = const_ints(c, n->nin > 1 ? n->in[1] : -1, &ns);
		en = const_ints(c, n->nin > 2 ? n->in[2] : -1, &ne);
		ax = const_ints(c, n->nin > 3 ? n->in[3] : -1, &na);
		sp = const_ints(c, n->nin > 4 ? n->in[4] : -1, &np);
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
		if (sp && sp[k] != 1) {
			rc = NODE_FAIL(c, n, "steps other than 1 are not supported yet");
			goto out;
		}
		int64_t dim = x->dims[a], s0 = st[k], e0 = en[k];
		s0 = s0 < 0 ? s0 + dim : s0;
		e0 = e0 < 0 ? e0 + dim : e0;
		s0 = s0 < 0 ? 0 : s0 > dim ? dim : s0;
		e0 = e0 < 0 ? 0 : e0 > dim ? dim : e0;
		b[a] = s0;
		ext[a] = e0 > s0 ? e0 - s0 : 0;
	}
	rc = 0;
out:
	free(st);
	free(en);
	free(ax);
	free(sp);
	return rc;
}

static int infer_slice(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	int64_t b[CC_MAX_RANK], ext[CC_MAX_RANK];
	if (slice_ranges(c, n, b, ext))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	return set_shape(T(c, n->out[0]), x->dtype, x->rank, ext);
}

/* out = the box of x starting at b (out's dims are its extents): a copy of
 * whole blocks when b along the lane axis is a multiple of 16 (the lanes
 * past the box's end land in out's padding); otherwise, for ND, the lanes
 * move through vtransposes (cc_gen_slice_last), after a block copy of the
 * leading axes' box when those are sliced too. */
static int box_copy(struct cc_ctx *c, struct cc_node *n, int xi, const int64_t *b, int out)
{
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int r = x->rank, lane = lane_axis(x);
	if (y->rank != r || r < 1)
		return NODE_FAIL(c, n, "ranks differ");
	for (int i = 0; i < r; i++)
		if (y->dims[i] < 1)
			return NODE_FAIL(c, n, "an empty output is not supported yet");
	if (b[lane] % 16 && r == 4)
		return NODE_FAIL(c, n, "a start of %lld along the channel axis is not supported "
				       "yet (multiples of 16 only)", (long long)b[lane]);
	if (b[lane] % 16) { /* the lanes move: the leading axes first, if sliced */
		int64_t d[CC_MAX_RANK], b0[CC_MAX_RANK], rows = 1, xcols = x->dims[lane];
		int lead = 0;
		for (int i = 0; i < r; i++) {
			d[i] = i == lane ? x->dims[i] : y->dims[i];
			b0[i] = i == lane ? 0 : b[i];
			lead |= i != lane && y->dims[i] != x->dims[i];
			rows *= i == lane ? 1 : y->dims[i];
		}
		int src = xi;
		if (lead && ((src = temp_new(c, n, r, d)) < 0 || box_copy(c, n, xi, b0, src)))
			return src < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		if (ws_place(c, out))
			return NODE_FAIL(c, n, "out of memory");
		struct task *t = task_new(c, n->name, n->op);
		char msg[256];
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_gen_slice_last(c->cfg, rows, xcols, b[lane], T(c, out)->dims[lane], &t->prog,
				      &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		one_in_one_out(c, t, src, out);
		return 0;
	}
	int64_t cnt[CC_MAX_RANK], sx[CC_MAX_RANK], sy[CC_MAX_RANK], off = 0;
	int whole = 1;
	grid_counts(y, cnt);
	dev_strides(x, sx);
	dev_strides(y, sy);
	for (int i = 0; i < r; i++) {
		off += (i == lane ? b[i] / 16 : b[i]) * sx[i];
		whole &= y->dims[i] == x->dims[i];
	}
	if (whole) { /* the whole of x: an alias */
		c->dev[out] = c->dev[xi];
		return 0;
	}
	if (ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_grid_copy(c->cfg, r, cnt, sx, sy, off, &t->prog, &t->block_dim, msg,
			     sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	one_in_one_out(c, t, xi, out);
	return 0;
}

static int lower_slice(struct cc_ctx *c, struct cc_node *n)
{
	int64_t b[CC_MAX_RANK], ext[CC_MAX_RANK];
	if (slice_ranges(c, n, b, ext) || act_input(c, n, n->in[0]))
		return -1;
	return box_copy(c, n, n->in[0], b, n->out[0]);
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
		if (!(v = const_ints(c, n->in[1], &cnt)))
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

static int infer_split(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
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
		set_shape(T(c, n->out[i]), x->dtype, x->rank, d);
	}
	return 0;
}

/* One box copy per output. */
static int lower_split(struct cc_ctx *c, struct cc_node *n)
{
	int64_t axis, sz[64], b[CC_MAX_RANK] = { 0 };
	if (split_sizes(c, n, &axis, sz) || act_input(c, n, n->in[0]))
		return -1;
	for (int i = 0; i < n->nout; b[axis] += sz[i], i++)
		if (n->out[i] >= 0 && box_copy(c, n, n->in[0], b, n->out[i]))
			return -1;
	return 0;
}

/* Squeeze / Unsqueeze: axes an attribute before opset 13, a constant
 * input from it; lowered as views (lower_view). */
static int infer_squeeze(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int unsq = !strcmp(n->op, "Unsqueeze");
	int64_t axes[CC_MAX_RANK], na = 0, *v = NULL;
	const struct cc_attr *a = cc_attr_find(n, "axes");
	if (n->nin > 1 && n->in[1] >= 0) {
		if (!(v = const_ints(c, n->in[1], &na)))
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
	return set_shape(T(c, n->out[0]), x->dtype, k, d);
}

static int infer_expand(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int64_t ns = 0, *s = const_ints(c, n->nin > 1 ? n->in[1] : -1, &ns);
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
	return set_shape(T(c, n->out[0]), x->dtype, r, d);
}

static int expand_into(struct cc_ctx *c, struct cc_node *n, int xi, int out);

/* Expand as a copy whose source strides are 0 along the broadcast axes when
 * the lanes stay in place (the same layout kind on both sides, no
 * broadcasting along the lane axis); otherwise through the broadcast kernel
 * (expand_into), which moves lanes and goes from ND to NC1HWC0. */
static int lower_expand(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi), *y = T(c, out);
	if (c->dev[xi].where == W_INPUT)
		return NODE_FAIL(c, n, "input '%s' read in place is not supported yet", x->name);
	int r = y->rank, lane = lane_axis(y), sh = r - x->rank;
	for (int i = 0; i < r; i++)
		if (y->dims[i] < 1)
			return NODE_FAIL(c, n, "an empty output is not supported yet");
	if ((r == 4) != (x->rank == 4) || x->rank < 1 || r < 1 ||
	    x->dims[x->rank - 1 - (r - 1 - lane)] != y->dims[lane])
		return ws_place(c, out) ? NODE_FAIL(c, n, "out of memory")
					: expand_into(c, n, xi, out);
	if (act_input(c, n, xi))
		return -1;
	int64_t cnt[CC_MAX_RANK], sx[CC_MAX_RANK], xs[CC_MAX_RANK], sy[CC_MAX_RANK];
	grid_counts(y, cnt);
	dev_strides(x, xs);
	dev_strides(y, sy);
	for (int i = 0; i < r; i++) {
		if (y->dims[i] < 1)
			return NODE_FAIL(c, n, "an empty output is not supported yet");
		sx[i] = i < sh || x->dims[i - sh] != y->dims[i] ? 0 : xs[i - sh];
	}
	if (ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_grid_copy(c->cfg, r, cnt, sx, sy, 0, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	one_in_one_out(c, t, xi, out);
	return 0;
}

/* ---- integer and bool values: comparisons, logic, Where, Cast ----------
 *
 * The device holds every value as fp16 (kern_dtype.c): integers and bools
 * are exact for |v| <= 2048, bools are 0/1.  Operands that broadcast are
 * first expanded to the output's shape (expand_into), then one element-wise
 * kernel (cc_gen_logic) runs over the padded layout. */

static int dev_dtype_ok(enum cc_dtype t)
{
	return t == CC_F32 || t == CC_F16 || t == CC_I32 || t == CC_I64 || t == CC_I8 ||
	       t == CC_U8 || t == CC_I16 || t == CC_U16 || t == CC_BOOL;
}

/* Input k known, of a type the device holds (float, integer or bool). */
static int need_any(struct cc_ctx *c, struct cc_node *n, int k)
{
	if (k >= n->nin || n->in[k] < 0)
		return NODE_FAIL(c, n, "input %d is missing", k);
	struct cc_tensor *t = T(c, n->in[k]);
	if (t->rank < 0)
		return NODE_FAIL(c, n, "the shape of input '%s' is unknown", t->name);
	if (!dev_dtype_ok(t->dtype))
		return NODE_FAIL(c, n, "input '%s' is %s: not supported yet (float, integer and "
				       "bool values are)", t->name, cc_dtype_name(t->dtype));
	return 0;
}

/* numpy broadcasting over every input; the output is of type dt (or, for
 * CC_UNDEFINED, input 1's: Where's x). */
static int infer_bcast_all(struct cc_ctx *c, struct cc_node *n, enum cc_dtype dt)
{
	int rank = 0;
	int64_t d[CC_MAX_RANK];
	for (int k = 0; k < n->nin; k++) {
		if (need_any(c, n, k))
			return -1;
		struct cc_tensor *x = T(c, n->in[k]);
		int r = x->rank > rank ? x->rank : rank;
		int64_t e[CC_MAX_RANK];
		for (int i = 0; i < r; i++) {
			int ia = i - (r - x->rank), ib = i - (r - rank);
			int64_t da = ia >= 0 ? x->dims[ia] : 1, db = ib >= 0 ? d[ib] : 1;
			if (da != db && da != 1 && db != 1)
				return NODE_FAIL(c, n, "input shapes do not broadcast");
			e[i] = da == 1 ? db : da;
		}
		rank = r;
		memcpy(d, e, sizeof e);
	}
	if (dt == CC_UNDEFINED)
		dt = T(c, n->in[1])->dtype;
	return set_shape(T(c, n->out[0]), dt, rank, d);
}

static int infer_compare(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin != (strcmp(n->op, "Not") ? 2 : 1))
		return NODE_FAIL(c, n, "%d inputs", n->nin);
	return infer_bcast_all(c, n, CC_BOOL);
}

static int infer_where(struct cc_ctx *c, struct cc_node *n)
{
	if (n->nin != 3)
		return NODE_FAIL(c, n, "%d inputs", n->nin);
	return infer_bcast_all(c, n, CC_UNDEFINED);
}

/* x (an activation or a constant) broadcast into out, a workspace tensor of
 * the broadcast shape: the broadcast kernel's max(x, x) (exact, NaN kept),
 * which moves lanes as well as rows.  An ND x going to a 4-D out is first
 * given out's rank (a relayout into NC1HWC0). */
static int expand_into(struct cc_ctx *c, struct cc_node *n, int xi, int out)
{
	struct cc_tensor *x = T(c, xi);
	if (T(c, out)->rank == 4 && x->rank != 4) {
		int64_t d[4];
		for (int i = 0; i < 4; i++)
			d[i] = i < 4 - x->rank ? 1 : x->dims[i - (4 - x->rank)];
		if (c->dev[xi].where == W_NONE && weight_place_act(c, n, xi))
			return -1;
		int x4 = temp_new(c, n, 4, d);
		if (x4 < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (relayout(c, n, xi, x4))
			return -1;
		xi = x4;
	}
	struct cc_node fk = *n;
	int fin[2] = { xi, xi }, fout[1] = { out };
	fk.in = fin;
	fk.nin = 2;
	fk.out = fout;
	fk.nout = 1;
	return bcast_nd(c, &fk, CC_V_MAX);
}

/* Input ti of n in the output's shape: itself, or expanded into a temporary. */
static int operand_full(struct cc_ctx *c, struct cc_node *n, int ti)
{
	struct cc_tensor *x = T(c, ti), *y = T(c, n->out[0]);
	if (c->dev[ti].where == W_INPUT)
		return NODE_FAIL(c, n, "input '%s' read in place is not supported yet", x->name);
	if (same_shape(x, y) && (y->rank != 4 || c->dev[ti].where != W_NONE)) {
		if (c->dev[ti].where == W_NONE && weight_place_act(c, n, ti))
			return -1;
		return ti;
	}
	int64_t d[CC_MAX_RANK];
	memcpy(d, y->dims, sizeof d);
	int tmp = temp_new(c, n, y->rank, d);
	if (tmp < 0)
		return NODE_FAIL(c, n, "out of memory");
	return expand_into(c, n, ti, tmp) ? -1 : tmp;
}

/* One cc_gen_logic kernel over the output's padded layout. */
static int logic_task(struct cc_ctx *c, struct cc_node *n, const struct cc_logic *lg,
		      const int *ins, int nin)
{
	int out = n->out[0];
	if (ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_logic(c->cfg, lg, dev_elems(&c->dev[out]), &t->prog, &t->block_dim, msg,
			 sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	for (int k = 0; k < nin; k++) {
		arg_tensor(c, t, ins[k]);
		io_dev(c, t, 0, ins[k]);
	}
	arg_tensor(c, t, out);
	io_dev(c, t, 1, out);
	t->flops = (uint64_t)cc_tensor_numel(T(c, out)) * (uint64_t)nin;
	return 0;
}

static int lower_logic(struct cc_ctx *c, struct cc_node *n)
{
	static const struct {
		const char *op;
		enum cc_lop l;
	} tab[] = { { "Equal", CC_L_EQ },	  { "Less", CC_L_LT },
		    { "LessOrEqual", CC_L_LE },	  { "Greater", CC_L_GT },
		    { "GreaterOrEqual", CC_L_GE }, { "Not", CC_L_NOT },
		    { "And", CC_L_AND },	  { "Or", CC_L_OR },
		    { "Xor", CC_L_XOR },	  { "Where", CC_L_WHERE } };
	struct cc_logic lg = { CC_L_EQ, 0, 0 };
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (!strcmp(n->op, tab[i].op))
			lg.op = tab[i].l;
	int ins[3];
	for (int k = 0; k < n->nin && k < 3; k++)
		if ((ins[k] = operand_full(c, n, n->in[k])) < 0)
			return -1;
	return logic_task(c, n, &lg, ins, n->nin);
}

/* Cast: float types are views (the device holds fp16 whatever the type);
 * to bool is x != 0; float to an integer type truncates toward zero and
 * saturates to the type's range, as does narrowing between integer types
 * (where numpy would wrap); widening integer casts and bool sources are
 * views. */
static int infer_cast(struct cc_ctx *c, struct cc_node *n)
{
	if (need_any(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]), *y = T(c, n->out[0]);
	int64_t to = cc_attr_int(n, "to", 0);
	if (to == CC_F32 || to == CC_F16 || to == CC_BOOL || to == CC_I8 || to == CC_U8 ||
	    to == CC_I16 || to == CC_U16 || to == CC_I32 || to == CC_I64) {
		if ((to == CC_I16 || to == CC_U16) && y->is_output)
			return NODE_FAIL(c, n, "a %s graph output is not supported yet",
					 cc_dtype_name((enum cc_dtype)to));
		return set_shape(y, (enum cc_dtype)to, x->rank, x->dims);
	}
	return NODE_FAIL(c, n, "Cast to %s is not supported yet (float32, float16, integers up "
			       "to 64 bits and bool are)", cc_dtype_name((enum cc_dtype)to));
}

static int lower_cast(struct cc_ctx *c, struct cc_node *n)
{
	enum cc_dtype from = T(c, n->in[0])->dtype, to = T(c, n->out[0])->dtype;
	int isf = from == CC_F32 || from == CC_F16;
	struct cc_logic lg = { CC_L_TRUNC, -65504.0f, 65504.0f };
	switch (to) {
	case CC_BOOL:
		lg.op = CC_L_BOOL;
		break;
	case CC_I8: lg.lo = -128, lg.hi = 127; break;
	case CC_U8: lg.lo = 0, lg.hi = 255; break;
	case CC_I16: lg.lo = -32768, lg.hi = 32767; break;
	case CC_U16: lg.lo = 0; break;
	case CC_I32:
	case CC_I64: break;
	default: return lower_identity(c, n); /* to a float type */
	}
	if (from == CC_BOOL || from == to)
		return lower_identity(c, n);
	/* an integer source within the target's range needs nothing (the
	 * device's values are within int32's anyway) */
	if (!isf && lg.op == CC_L_TRUNC &&
	    (to == CC_I32 || to == CC_I64 || (from == CC_U8 && to != CC_I8) ||
	     (from == CC_I8 && to == CC_I16)))
		return lower_identity(c, n);
	int xi = n->in[0];
	if (act_input(c, n, xi))
		return -1;
	if (c->dev[xi].where == W_INPUT)
		return NODE_FAIL(c, n, "input read in place is not supported yet");
	return logic_task(c, n, &lg, &xi, 1);
}

/* ---- LayerNormalization (opset 17; also what pass_fuse_layernorm.c makes) ---- */

/* The normalized axis, from axis to the last: -1 with the node failed. */
static int ln_axis(struct cc_ctx *c, struct cc_node *n, const struct cc_tensor *x)
{
	int64_t axis = cc_attr_int(n, "axis", -1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return NODE_FAIL(c, n, "axis %lld is out of range for rank %d",
				 (long long)cc_attr_int(n, "axis", -1), x->rank);
	return (int)axis;
}

static int infer_layernorm(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0))
		return -1;
	struct cc_tensor *x = T(c, n->in[0]);
	int axis = ln_axis(c, n, x);
	if (axis < 0 || set_shape(T(c, n->out[0]), x->dtype, x->rank, x->dims))
		return -1;
	/* Mean and InvStdDev: x's shape with the normalized axes 1, in the stash type */
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		d[i] = i < axis ? x->dims[i] : 1;
	for (int k = 1; k < 3 && k < n->nout; k++)
		if (n->out[k] >= 0 && set_shape(T(c, n->out[k]), CC_F32, x->rank, d))
			return -1;
	return 0;
}

/* Scale or B as fp16 [c16] (zero-padded) at h; 0 absent, 1 present, -1 failed. */
static int ln_param(struct cc_ctx *c, struct cc_node *n, int k, int64_t C, uint16_t *h)
{
	int ti = k < n->nin ? n->in[k] : -1;
	if (ti < 0)
		return 0;
	struct cc_tensor *t = T(c, ti);
	int64_t cnt = cc_tensor_numel(t);
	if (!t->data || (cnt != C && cnt != 1))
		return NODE_FAIL(c, n, "%s that is not a constant of %lld values is not supported "
				       "yet", k == 1 ? "a Scale" : "a B", (long long)C);
	float *f = const_floats(c, n, ti);
	if (!f)
		return -1;
	for (int64_t i = 0; i < C; i++)
		h[i] = dv_f32_to_f16(f[cnt == 1 ? 0 : i]);
	free(f);
	return 1;
}

/* One kernel over the last axis of a padded ND tensor.  Any other axis, and
 * 4-D inputs (NC1HWC0, whose last axis is not the lane axis), go through a
 * 2-D [rows, C] copy of x in the ND layout (relayout), and the results back;
 * a view suffices when the normalized axes are dense in the ND layout (only
 * size-1 axes before the last, or a last axis without padding). */
static int lower_layernorm(struct cc_ctx *c, struct cc_node *n)
{
	int xi = n->in[0], out = n->out[0];
	struct cc_tensor *x = T(c, xi);
	int axis = ln_axis(c, n, x);
	if (axis < 0)
		return -1;
	if (c->dev[xi].where != W_WS)
		return NODE_FAIL(c, n, "LayerNormalization of a constant is not supported yet");
	int64_t rows = 1, C = 1;
	for (int i = 0; i < x->rank; i++)
		*(i < axis ? &rows : &C) *= x->dims[i];
	if (rows < 1 || C < 1)
		return NODE_FAIL(c, n, "empty tensors are not supported yet");
	int st[2] = { n->nout > 1 ? n->out[1] : -1, n->nout > 2 ? n->out[2] : -1 };
	for (int k = 0; k < 2; k++)
		if (st[k] >= 0 && !cc_tensor_uses(&c->g, st[k]))
			st[k] = -1;
	int64_t c16 = cc_pad16(C);
	uint16_t *h = calloc((size_t)(2 * c16), 2);
	if (!h)
		return NODE_FAIL(c, n, "out of memory");
	int hg = ln_param(c, n, 1, C, h), hb = hg < 0 ? -1 : ln_param(c, n, 2, C, h + c16);
	int64_t off = hg < 0 || hb < 0 ? -1 : weight_add(c, h, (uint64_t)(2 * c16 * 2));
	free(h);
	if (hg < 0 || hb < 0)
		return -1;
	if (off < 0)
		return NODE_FAIL(c, n, "out of memory");
	/* the kernel's tensors: x, y and the statistics as ND [rows, C] / [rows, 1] */
	int last_only = x->rank != 4 && (x->dims[x->rank - 1] == C || x->dims[x->rank - 1] % 16 == 0);
	int kx = xi, ky = out, ks[2] = { st[0], st[1] };
	int64_t d2[2] = { rows, C }, d1[2] = { rows, 1 };
	if (!last_only) {
		kx = temp_new(c, n, 2, d2);
		ky = kx < 0 ? -1 : temp_new(c, n, 2, d2);
		if (ky < 0)
			return NODE_FAIL(c, n, "out of memory");
		if (relayout(c, n, xi, kx))
			return -1;
	} else if (x->dims[x->rank - 1] != C) {
		/* dense rows: [rows, C] is a view of x, and of y */
		kx = temp_new(c, n, 2, d2);
		if (kx < 0)
			return NODE_FAIL(c, n, "out of memory");
		c->dev[kx] = c->dev[xi];
		rows_cols(T(c, kx), &c->dev[kx].rows, &c->dev[kx].cols);
		if (ws_place(c, out))
			return NODE_FAIL(c, n, "out of memory");
		ky = temp_new(c, n, 2, d2);
		if (ky < 0)
			return NODE_FAIL(c, n, "out of memory");
		c->dev[ky] = c->dev[out];
		rows_cols(T(c, ky), &c->dev[ky].rows, &c->dev[ky].cols);
	} else if (ws_place(c, out)) {
		return NODE_FAIL(c, n, "out of memory");
	}
	for (int k = 0; k < 2; k++) {
		if (st[k] < 0)
			continue;
		if (T(c, st[k])->rank == 4) { /* NC1HWC0: through a [rows, 1] copy */
			ks[k] = temp_new(c, n, 2, d1);
			if (ks[k] < 0)
				return NODE_FAIL(c, n, "out of memory");
		} else if (ws_place(c, st[k])) {
			return NODE_FAIL(c, n, "out of memory");
		}
	}
	struct task *t = task_new(c, n->name, n->fused[0] ? "LayerNorm" : n->op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	/* pass_fuse_layernorm.c's residual Add: r of x's shape, rows as x's */
	int ri = n->res_in ? n->in[n->res_in] : -1;
	if (ri >= 0 && (kx != xi || c->dev[ri].where != W_WS || c->dev[ri].nc1hwc0))
		return NODE_FAIL(c, n, "a residual Add on a LayerNormalization whose rows need a "
				       "layout change is not supported yet");
	struct cc_layernorm ln = { rows, C, cc_attr_float(n, "epsilon", 1e-5f), hg, hb,
				   st[0] >= 0, st[1] >= 0, ri >= 0 };
	char msg[256];
	if (cc_gen_layernorm(c->cfg, &ln, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	arg_tensor(c, t, kx);
	arg_tensor(c, t, ky);
	t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
	io_dev(c, t, 0, kx);
	io_dev(c, t, 1, ky);
	for (int k = 0; k < 2; k++)
		if (st[k] >= 0) {
			arg_tensor(c, t, ks[k]);
			io_dev(c, t, 1, ks[k]);
		}
	if (ri >= 0) {
		arg_tensor(c, t, ri);
		io_dev(c, t, 0, ri);
	}
	t->flops = (8 + (ri >= 0)) * (uint64_t)(rows * C);
	if (!last_only && relayout(c, n, ky, out))
		return -1;
	for (int k = 0; k < 2; k++)
		if (st[k] >= 0 && ks[k] != st[k] && relayout(c, n, ks[k], st[k]))
			return -1;
	return 0;
}

struct op_entry {
	const char *name;
	int (*infer)(struct cc_ctx *, struct cc_node *);
	int (*lower)(struct cc_ctx *, struct cc_node *);
};

static const struct op_entry ops[] = {
#define CC_OP(name, infer, lower) { #name, infer, lower },
#include "ops.def"
};

const char *cc_supported_ops(void)
{
	return ""
#define CC_OP(name, infer, lower) #name " "
#include "ops.def"
		;
}

static const struct op_entry *op_find(const char *name)
{
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

/* ---- --input_shape ---------------------------------------------------------------- */

static int apply_input_shape(struct cc_ctx *c, const char *spec)
{
	if (!spec || !*spec)
		return 0;
	char *copy = strdup(spec);
	if (!copy)
		return fail(c, "out of memory");
	int rc = 0;
	for (char *save = NULL, *item = strtok_r(copy, ";", &save); item && !rc;
	     item = strtok_r(NULL, ";", &save)) {
		char *colon = strrchr(item, ':');
		if (!colon) {
			rc = fail(c, "--input_shape '%s': expected name:d1,d2,...", item);
			break;
		}
		*colon = 0;
		int ti = cc_tensor_find(&c->g, item);
		if (ti < 0 || !T(c, ti)->is_input) {
			rc = fail(c, "--input_shape names '%s', which is not an input of the model",
				  item);
			break;
		}
		struct cc_tensor *t = T(c, ti);
		int64_t dims[CC_MAX_RANK];
		int rank = 0;
		for (char *s2 = NULL, *d = strtok_r(colon + 1, ",", &s2); d;
		     d = strtok_r(NULL, ",", &s2)) {
			char *e;
			long long v = strtoll(d, &e, 10);
			if (*e || v < 1 || rank == CC_MAX_RANK) {
				rc = fail(c, "--input_shape '%s': bad dimension '%s'", item, d);
				break;
			}
			dims[rank++] = v;
		}
		if (rc)
			break;
		if (t->rank >= 0 && t->rank != rank) {
			rc = fail(c, "--input_shape gives '%s' %d dimensions; the model has %d", item,
				  rank, t->rank);
			break;
		}
		for (int i = 0; i < rank && t->rank >= 0; i++)
			if (t->dims[i] >= 0 && t->dims[i] != dims[i]) {
				rc = fail(c, "--input_shape gives '%s' dimension %d = %lld; the model "
					     "fixes it at %lld", item, i, (long long)dims[i],
					  (long long)t->dims[i]);
				break;
			}
		if (!rc) {
			t->rank = rank;
			for (int i = 0; i < rank; i++)
				t->dims[i] = dims[i];
		}
	}
	free(copy);
	return rc;
}

/* ---- --fusion_switch_file ------------------------------------------------------- */

enum { SW_IDENTITY, SW_BNFOLD, SW_ACT, SW_ELTWISE, SW_CONSTFOLD, SW_RESIDUAL, SW_MATMUL_BIAS,
       SW_GELU, SW_LAYERNORM, SW_ATTENTION, SW_MATMUL_ELTWISE, SW_N };
static const char *const switch_names[SW_N] = { "IdentityEliminationPass",
						"ConvBatchNormFusionPass",
						"ConvActivationFusionPass", "ElementwiseFusionPass",
						"ConstantFoldingPass", "ConvEltwiseFusionPass",
						"MatMulBiasAddFusionPass", "GeluFusionPass",
						"LayerNormFusionPass", "AttentionSoftmaxFusionPass",
						"MatMulEltwiseFusionPass" };

/* ATC's JSON form {"Switch":{"GraphFusion":{"Name":"off","ALL":"off"},...}} or
 * its older "Name:off" lines: every "name" : "on|off" pair counts, wherever
 * it is nested; ALL sets the default, named passes override it. */
static int read_switches(struct cc_ctx *c, const char *path, int on[SW_N])
{
	for (int i = 0; i < SW_N; i++)
		on[i] = 1;
	if (!path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(c, "--fusion_switch_file %s: cannot open", path);
	char text[65536];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	int all = -1, named[SW_N];
	for (int i = 0; i < SW_N; i++)
		named[i] = -1;
	char *p = text;
	while (*p) {
		while (*p && (isspace((unsigned char)*p) || strchr("{},", *p)))
			p++;
		if (!*p)
			break;
		char key[128], val[16];
		size_t k = 0;
		int quoted = *p == '"';
		if (quoted)
			p++;
		while (*p && (quoted ? *p != '"' : (isalnum((unsigned char)*p) || *p == '_'))) {
			if (k + 1 < sizeof key)
				key[k++] = *p;
			p++;
		}
		key[k] = 0;
		if (quoted && *p == '"')
			p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':') {
			if (!k && *p)
				p++; /* an unexpected character */
			continue;
		}
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '{')
			continue; /* a section such as "Switch" or "GraphFusion" */
		int vq = *p == '"';
		if (vq)
			p++;
		size_t v = 0;
		while (*p && (vq ? *p != '"' : !isspace((unsigned char)*p) && *p != ',' && *p != '}')) {
			if (v + 1 < sizeof val)
				val[v++] = *p;
			p++;
		}
		val[v] = 0;
		if (vq && *p == '"')
			p++;
		int state = !strcmp(val, "on") ? 1 : !strcmp(val, "off") ? 0 : -1;
		if (state < 0)
			return fail(c, "--fusion_switch_file %s: '%s' must be on or off, not '%s'", path,
				    key, val);
		if (!strcmp(key, "ALL")) {
			all = state;
			continue;
		}
		int found = 0;
		for (int i = 0; i < SW_N; i++)
			if (!strcmp(key, switch_names[i])) {
				named[i] = state;
				found = 1;
			}
		if (!found)
			return fail(c, "--fusion_switch_file %s: unknown pass '%s' (passes: %s)", path,
				    key, CC_PASS_NAMES);
	}
	for (int i = 0; i < SW_N; i++)
		on[i] = named[i] >= 0 ? named[i] : all >= 0 ? all : 1;
	return 0;
}


static int write_report_json(struct cc_ctx *c, const char *path, int nodes_in, int nodes_out,
			     const int changes[SW_N], const int on[SW_N])
{
	FILE *f = fopen(path, "w");
	if (!f)
		return fail(c, "--report %s: cannot write", path);
	fprintf(f, "{\"model\": ");
	sim_json_str(f, c->path);
	fprintf(f, ", \"soc\": ");
	sim_json_str(f, c->cfg->name);
	fprintf(f, ", \"nodes_before\": %d, \"nodes_after\": %d, \"tasks\": %u, "
		   "\"weights_bytes\": %llu, \"workspace_bytes\": %llu, "
		   "\"workspace_bytes_without_reuse\": %llu, \"passes\": [",
		nodes_in, nodes_out, c->ntasks, (unsigned long long)c->wbytes,
		(unsigned long long)c->ws_bytes, (unsigned long long)c->ws_no_reuse);
	for (int i = 0; i < SW_N; i++)
		fprintf(f, "%s{\"name\": \"%s\", \"enabled\": %s, \"changes\": %d}", i ? ", " : "",
			switch_names[i], on[i] ? "true" : "false", changes[i]);
	fprintf(f, "], \"task_list\": [");
	for (unsigned i = 0; i < c->ntasks; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		sim_json_str(f, c->tasks[i].name);
		fprintf(f, ", \"type\": ");
		sim_json_str(f, c->tasks[i].op_type);
		fprintf(f, ", \"block_dim\": %u, \"instructions\": %zu, \"flops\": %llu}",
			c->tasks[i].block_dim, c->tasks[i].prog.n,
			(unsigned long long)c->tasks[i].flops);
	}
	fprintf(f, "]}\n");
	if (fclose(f))
		return fail(c, "--report %s: cannot write", path);
	return 0;
}

/* ---- the driver ---------------------------------------------------------------- */

/* The memory plan: each workspace storage tensor lives from the first to
 * the last task that touches it; tensors whose lifetimes do not overlap may
 * share bytes.  Greedy in order of first use, lowest offset that fits. */
static int plan_memory(struct cc_ctx *c)
{
	int nt = c->g.nt;
	for (int i = 0; i < nt; i++)
		if (c->dev[i].where == W_WS && c->dev[i].storage == i)
			c->dev[i].first = c->dev[i].last = -1;
	for (unsigned k = 0; k < c->ntasks; k++)
		for (unsigned a = 0; a < c->tasks[k].nargs; a++) {
			int s = c->tasks[k].argt[a];
			if (s < 0)
				continue;
			struct dev_tensor *d = &c->dev[s];
			if (d->first < 0)
				d->first = (int)k;
			d->last = (int)k;
		}
	int *order = malloc((size_t)(nt + 1) * sizeof *order), n = 0;
	if (!order)
		return fail(c, "out of memory");
	for (int i = 0; i < nt; i++)
		if (c->dev[i].where == W_WS && c->dev[i].storage == i && c->dev[i].first >= 0)
			order[n++] = i;
	/* insertion sort by first use: n is the number of tensors, small */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && c->dev[order[j]].first < c->dev[order[j - 1]].first; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	uint64_t peak = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		struct dev_tensor *d = &c->dev[order[i]];
		sum += d->size;
		uint64_t off = 0;
		for (int moved = 1; moved;) { /* lowest offset clear of every live tensor */
			moved = 0;
			for (int j = 0; j < i; j++) {
				struct dev_tensor *e = &c->dev[order[j]];
				if (e->last < d->first)
					continue;
				if (off < e->offset + e->size && e->offset < off + d->size) {
					off = e->offset + e->size;
					moved = 1;
				}
			}
		}
		d->offset = off;
		if (off + d->size > peak)
			peak = off + d->size;
	}
	free(order);
	for (int i = 0; i < nt; i++) /* views share their storage's offset */
		if (c->dev[i].where == W_WS && c->dev[i].storage != i && c->dev[i].storage >= 0)
			c->dev[i].offset = c->dev[c->dev[i].storage].offset;
	for (unsigned k = 0; k < c->ntasks; k++)
		for (unsigned a = 0; a < c->tasks[k].nargs; a++)
			if (c->tasks[k].argt[a] >= 0)
				c->tasks[k].args[a].value +=
					(int64_t)c->dev[c->tasks[k].argt[a]].offset;
	c->ws_bytes = peak;
	c->ws_no_reuse = sum;
	cc_log(&c->log, "  memplan: %d workspace tensors, %llu bytes without reuse, %llu with",
	       n, (unsigned long long)sum, (unsigned long long)peak);
	return 0;
}

static void ctx_free(struct cc_ctx *c)
{
	for (unsigned i = 0; i < c->ntasks; i++)
		cc_prog_free(&c->tasks[i].prog);
	free(c->tasks);
	free(c->dev);
	free(c->weights);
	free(c->log.buf);
	cc_graph_free(&c->g);
}

static void desc_from(struct om_tensor_desc *d, const struct cc_tensor *t)
{
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", t->name);
	d->dtype = t->dtype;
	d->format = t->rank == 4 ? CC_FMT_NCHW : CC_FMT_ND;
	d->rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		d->dims[i] = t->dims[i];
	d->size = (uint64_t)cc_tensor_numel(t) * cc_dtype_size(t->dtype);
}

/* A task's tensor: its logical dims, at the dtype and in the format the task
 * moves it; size is the logical bytes at that dtype (om_read checks it). */
static void desc_io(struct cc_ctx *c, struct om_tensor_desc *d, const struct task_io *io)
{
	const struct cc_tensor *s = T(c, io->shape);
	desc_from(d, s);
	snprintf(d->name, sizeof d->name, "%s", T(c, io->ti)->name);
	d->dtype = io->dtype;
	d->format = io->fmt;
	d->size = (uint64_t)cc_tensor_numel(s) * cc_dtype_size(io->dtype);
}

static int build_model(struct cc_ctx *c, struct om_model *m, const char *name)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", name);
	snprintf(m->soc, sizeof m->soc, "%s", c->cfg->name);
	m->nkernels = m->ntasks = c->ntasks;
	m->kernels = calloc(c->ntasks ? c->ntasks : 1, sizeof *m->kernels);
	m->tasks = calloc(c->ntasks ? c->ntasks : 1, sizeof *m->tasks);
	m->inputs = calloc((size_t)c->g.ninputs + 1, sizeof *m->inputs);
	m->outputs = calloc((size_t)c->g.noutputs + 1, sizeof *m->outputs);
	m->tensors = calloc((size_t)c->g.nt + 1, sizeof *m->tensors);
	if (!m->kernels || !m->tasks || !m->inputs || !m->outputs || !m->tensors)
		return fail(c, "out of memory");
	for (unsigned i = 0; i < c->ntasks; i++) {
		struct task *t = &c->tasks[i];
		struct om_kernel *k = &m->kernels[i];
		snprintf(k->name, sizeof k->name, "k%u_", i);
		size_t l = strlen(k->name);
		for (const char *s = t->op_type; *s && l + 1 < sizeof k->name; s++)
			k->name[l++] = isalnum((unsigned char)*s) ? *s : '_';
		k->name[l] = 0;
		size_t bytes;
		char msg[256];
		if (cc_prog_finish(&t->prog, &k->code, &bytes, msg, sizeof msg))
			return fail(c, "task '%s': %s", t->name, msg);
		k->bytes = bytes;
		struct om_task *ot = &m->tasks[i];
		snprintf(ot->name, sizeof ot->name, "%s", t->name);
		snprintf(ot->op_type, sizeof ot->op_type, "%s", t->op_type);
		ot->kernel = i;
		ot->block_dim = t->block_dim;
		ot->nargs = t->nargs;
		ot->args = calloc(t->nargs ? t->nargs : 1, sizeof *ot->args);
		if (!ot->args)
			return fail(c, "out of memory");
		memcpy(ot->args, t->args, t->nargs * sizeof *ot->args);
		ot->flops = t->flops;
		ot->bytes = t->bytes;
		ot->inputs = calloc(t->nin ? t->nin : 1, sizeof *ot->inputs);
		ot->outputs = calloc(t->nout ? t->nout : 1, sizeof *ot->outputs);
		if (!ot->inputs || !ot->outputs)
			return fail(c, "out of memory");
		ot->ninputs = t->nin;
		for (unsigned j = 0; j < t->nin; j++)
			desc_io(c, &ot->inputs[j], &t->in[j]);
		ot->noutputs = t->nout;
		for (unsigned j = 0; j < t->nout; j++)
			desc_io(c, &ot->outputs[j], &t->out[j]);
	}
	m->ninputs = (uint32_t)c->g.ninputs;
	for (int i = 0; i < c->g.ninputs; i++)
		desc_from(&m->inputs[i], T(c, c->g.inputs[i]));
	m->noutputs = (uint32_t)c->g.noutputs;
	for (int i = 0; i < c->g.noutputs; i++)
		desc_from(&m->outputs[i], T(c, c->g.outputs[i]));
	for (int i = 0; i < c->g.nt; i++) {
		struct dev_tensor *d = &c->dev[i];
		if (d->where != W_WS || d->storage != i || d->first < 0)
			continue;
		struct om_tensor_desc *td = &m->tensors[m->ntensors++];
		memset(td, 0, sizeof *td);
		snprintf(td->name, sizeof td->name, "%s", T(c, i)->name);
		td->dtype = CC_F16;
		td->format = CC_FMT_ND;
		if (d->nc1hwc0) {
			td->format = CC_FMT_NC1HWC0;
			td->rank = 5;
			td->dims[0] = d->n;
			td->dims[1] = (d->c + 15) / 16;
			td->dims[2] = d->h;
			td->dims[3] = d->w;
			td->dims[4] = 16;
		} else {
			td->rank = 2;
			td->dims[0] = d->rows;
			td->dims[1] = cc_pad16(d->cols);
		}
		td->offset = d->offset;
		td->size = (uint64_t)dev_elems(d) * 2; /* allocated: d->size */
	}
	m->weights_bytes = c->wbytes;
	m->weights = calloc(1, c->wbytes ? c->wbytes : 1);
	if (!m->weights)
		return fail(c, "out of memory");
	if (c->wbytes)
		memcpy(m->weights, c->weights, c->wbytes);
	m->workspace_bytes = c->ws_bytes;
	return 0;
}

int cc_compile(const char *onnx_path, const struct soc_config *cfg, const struct cc_options *opt,
	       struct om_model *out, char *err, size_t errlen)
{
	struct cc_ctx c;
	memset(&c, 0, sizeof c);
	memset(out, 0, sizeof *out);
	c.path = onnx_path;
	c.cfg = cfg;
	c.err = err;
	c.errlen = errlen;
	if (cc_onnx_load(onnx_path, &c.g, err, errlen))
		return -1;
	int rc = -1;
	int nodes_in = 0;
	if (apply_input_shape(&c, opt ? opt->input_shape : NULL))
		goto done;
	for (unsigned f = 0; opt && f < opt->nfrozen; f++) {
		int ti = cc_tensor_find(&c.g, opt->frozen_names[f]);
		if (ti < 0 || !T(&c, ti)->is_input) {
			fail(&c, "'%s' is not an input of the model", opt->frozen_names[f]);
			goto done;
		}
		struct cc_tensor *t = T(&c, ti);
		const struct rt_tensor *v = &opt->frozen[f];
		t->data = malloc(v->nbytes ? v->nbytes : 1);
		if (!t->data) {
			fail(&c, "out of memory");
			goto done;
		}
		memcpy(t->data, v->data, v->nbytes);
		t->nbytes = v->nbytes;
		t->dtype = (enum cc_dtype)v->dtype;
		t->rank = v->rank;
		for (int d = 0; d < v->rank; d++)
			t->dims[d] = v->dims[d];
		t->is_input = 0;
		int k = 0;
		for (int i = 0; i < c.g.ninputs; i++)
			if (c.g.inputs[i] != ti)
				c.g.inputs[k++] = c.g.inputs[i];
		c.g.ninputs = k;
	}
	for (int i = 0; i < c.g.ninputs; i++) {
		struct cc_tensor *t = T(&c, c.g.inputs[i]);
		char dyn[256] = "";
		size_t nd = 0;
		for (int d = 0; d < t->rank; d++)
			if (t->dims[d] < 0)
				nd += (size_t)snprintf(dyn + nd, sizeof dyn - nd, "%s%s",
						       nd ? ", " : "",
						       t->dim_param[d] ? t->dim_param[d] : "?");
		if (t->rank < 0) {
			fail(&c, "input '%s' has no tensor shape (a sequence, map or optional?): "
				 "not supported yet", t->name);
			goto done;
		}
		if (nd) {
			fail(&c, "input '%s' has dynamic dimensions (%s): give them with "
				 "--input_shape=\"%s:...\"", t->name, dyn, t->name);
			goto done;
		}
		if (t->dtype != CC_F32 && int_input_check(&c, c.g.inputs[i]))
			goto done;
	}
	int on[SW_N], changes[SW_N] = { 0 };
	if (read_switches(&c, opt ? opt->fusion_switch_file : NULL, on))
		goto done;
	for (int i = 0; i < c.g.nn; i++)
		nodes_in += !c.g.n[i].dead;
	cc_log(&c.log, "passes:");
	if (on[SW_IDENTITY] && (changes[SW_IDENTITY] = cc_pass_dce(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	if (on[SW_BNFOLD] && (changes[SW_BNFOLD] = cc_pass_bnfold(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	if (on[SW_ACT] && (changes[SW_ACT] = cc_pass_fuse_act(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	for (int i = 0; i < SW_N; i++)
		if (!on[i])
			cc_log(&c.log, "  %s: off (fusion switch file)", switch_names[i]);
	/* shape inference, in the graph's (topological) order */
	for (int i = 0; i < c.g.nn; i++) {
		struct cc_node *n = &c.g.n[i];
		if (n->dead)
			continue;
		if (on[SW_CONSTFOLD]) {
			int f = cc_fold_node(&c.g, i);
			if (f < 0) {
				fail(&c, "out of memory folding constants");
				goto done;
			}
			if (f) {
				changes[SW_CONSTFOLD]++;
				continue;
			}
		}
		const struct op_entry *e = op_find(n->op);
		if (!e || (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))) {
			node_fail(&c, n, "operator %s%s%s is not supported (supported: %s)",
				  n->domain && *n->domain ? n->domain : "",
				  n->domain && *n->domain ? "." : "", n->op, cc_supported_ops());
			goto done;
		}
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && T(&c, n->in[k])->rank < 0 && !T(&c, n->in[k])->data) {
				node_fail(&c, n, "input '%s' is not computed before this node",
					  T(&c, n->in[k])->name);
				goto done;
			}
		if (e->infer(&c, n))
			goto done;
	}
	cc_log(&c.log, "  constfold: %d nodes folded into constants", changes[SW_CONSTFOLD]);
	/* the residual Add into the Conv first: otherwise the element-wise
	 * fusion would make the Add and its Relu a chain of their own */
	if (on[SW_RESIDUAL] &&
	    (changes[SW_RESIDUAL] = cc_pass_fuse_residual(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	/* the bias Add into the MatMul before the element-wise fusion takes it */
	if (on[SW_MATMUL_BIAS] &&
	    (changes[SW_MATMUL_BIAS] = cc_pass_fuse_matmul_bias(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	if (on[SW_ATTENTION] &&
	    (changes[SW_ATTENTION] = cc_pass_fuse_attention(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	/* before the element-wise fusion, which would chain the GELU's pieces */
	if (on[SW_GELU] && (changes[SW_GELU] = cc_pass_fuse_gelu(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	/* before the element-wise fusion, which would chain the LayerNorm's pieces */
	if (on[SW_LAYERNORM] &&
	    (changes[SW_LAYERNORM] = cc_pass_fuse_layernorm(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	if (on[SW_ELTWISE] &&
	    (changes[SW_ELTWISE] = cc_pass_fuse_eltwise(&c.g, &c.log, err, errlen)) < 0)
		goto done;
	if (on[SW_MATMUL_ELTWISE] && (changes[SW_MATMUL_ELTWISE] = cc_pass_fuse_matmul_eltwise(
					      &c.g, &c.log, err, errlen)) < 0)
		goto done;
	c.dev = calloc((size_t)c.g.nt + 1, sizeof *c.dev);
	if (!c.dev) {
		fail(&c, "out of memory");
		goto done;
	}
	/* graph inputs cross the edge: fp32 host -> fp16 device */
	for (int i = 0; i < c.g.ninputs; i++) {
		int ti = c.g.inputs[i];
		enum cc_dtype dt = T(&c, ti)->dtype;
		if (dt != CC_F32 && int_input_raw(&c, ti)) { /* in place (int_input_raw) */
			c.dev[ti].where = W_INPUT;
			c.dev[ti].offset = (uint64_t)i;
			c.dev[ti].storage = -1;
			continue;
		}
		char msg[256];
		int64_t numel = cc_tensor_numel(T(&c, ti));
		int sc = -1; /* integer/bool: converted to fp32 in a scratch first */
		if (dt != CC_F32) {
			struct task *t = (sc = scratch_new(&c, T(&c, ti)->name, (uint64_t)numel * 4)) < 0
						 ? NULL
						 : task_new(&c, T(&c, ti)->name, "Cast");
			if (!t || cc_gen_int_edge(cfg, dt, numel, 1, &t->prog, &t->block_dim, msg,
						  sizeof msg)) {
				fail(&c, "input '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
				goto done;
			}
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)i };
			arg_tensor(&c, t, sc);
			io_host(&c, t, 0, ti, ti, dt);
			io_host(&c, t, 1, sc, ti, CC_F32);
			t->bytes = (uint64_t)numel * (cc_dtype_size(dt) + 4);
		}
		ws_place(&c, ti);
		struct dev_tensor *d = &c.dev[ti];
		struct task *t = task_new(&c, T(&c, ti)->name, "TransData");
		if (!t || gen_edge(&c, d, 1, t, msg, sizeof msg)) {
			fail(&c, "input '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
			goto done;
		}
		if (sc >= 0) {
			arg_tensor(&c, t, sc);
			io_host(&c, t, 0, sc, ti, CC_F32);
		} else {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)i };
			io_host(&c, t, 0, ti, ti, dt);
		}
		t->args[t->nargs] = (struct om_arg){ OM_ARG_WORKSPACE, 0, 0 };
		t->argt[t->nargs++] = ti;
		io_dev(&c, t, 1, ti);
		t->bytes = (uint64_t)numel * 6;
	}
	for (int i = 0; i < c.g.nn; i++) {
		struct cc_node *n = &c.g.n[i];
		if (!n->dead && op_find(n->op)->lower(&c, n))
			goto done;
	}
	for (int i = 0; i < c.g.noutputs; i++) {
		int ti = c.g.outputs[i];
		struct dev_tensor *d = &c.dev[ti];
		if (d->where == W_NONE) {
			fail(&c, "output '%s' is not computed by any supported node", T(&c, ti)->name);
			goto done;
		}
		enum cc_dtype dt = T(&c, ti)->dtype;
		int64_t numel = cc_tensor_numel(T(&c, ti));
		int sc = -1; /* integer/bool: through fp32 in a scratch, then kern_dtype.c */
		if (dt != CC_F32) {
			if ((sc = scratch_new(&c, T(&c, ti)->name, (uint64_t)numel * 4)) < 0) {
				fail(&c, "out of memory");
				goto done;
			}
			d = &c.dev[ti];
		}
		struct task *t = task_new(&c, T(&c, ti)->name, "TransData");
		char msg[256];
		if (!t || gen_edge(&c, d, 0, t, msg, sizeof msg)) {
			fail(&c, "output '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
			goto done;
		}
		t->args[0] = (struct om_arg){ d->where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE,
					      d->where == W_WEIGHT ? (int64_t)d->offset : 0, 0 };
		t->argt[0] = d->where == W_WS ? d->storage : -1;
		t->nargs = 1;
		io_dev(&c, t, 0, ti);
		if (sc >= 0) {
			arg_tensor(&c, t, sc);
			io_host(&c, t, 1, sc, ti, CC_F32);
		} else {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_OUTPUT, 0, (uint32_t)i };
			io_host(&c, t, 1, ti, ti, dt);
		}
		t->bytes = (uint64_t)numel * 6;
		if (sc >= 0) {
			t = task_new(&c, T(&c, ti)->name, "Cast");
			if (!t || cc_gen_int_edge(cfg, dt, numel, 0, &t->prog, &t->block_dim, msg,
						  sizeof msg)) {
				fail(&c, "output '%s': %s", T(&c, ti)->name,
				     t ? msg : "out of memory");
				goto done;
			}
			arg_tensor(&c, t, sc);
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_OUTPUT, 0, (uint32_t)i };
			io_host(&c, t, 0, sc, ti, CC_F32);
			io_host(&c, t, 1, ti, ti, dt);
			t->bytes = (uint64_t)numel * (cc_dtype_size(dt) + 4);
		}
	}
	if (plan_memory(&c))
		goto done;
	int nodes_out = 0;
	for (int i = 0; i < c.g.nn; i++)
		nodes_out += !c.g.n[i].dead;
	if (opt && opt->report_json &&
	    write_report_json(&c, opt->report_json, nodes_in, nodes_out, changes, on))
		goto done;
	const char *base = strrchr(onnx_path, '/');
	base = base ? base + 1 : onnx_path;
	if (build_model(&c, out, base))
		goto done;
	if (opt && opt->report) {
		FILE *f = opt->report;
		fprintf(f, "simatc: %s for %s\n", onnx_path, cfg->name);
		fprintf(f, "  nodes: %d in the model, %d after the passes; %u tasks (%d input and "
			   "%d output TransData)\n",
			nodes_in, nodes_out, c.ntasks, c.g.ninputs, c.g.noutputs);
		fprintf(f, "  weights: %llu bytes, workspace: %llu bytes (%llu without reuse)\n",
			(unsigned long long)c.wbytes, (unsigned long long)c.ws_bytes,
			(unsigned long long)c.ws_no_reuse);
		if (c.log.buf)
			fputs(c.log.buf, f);
		for (unsigned i = 0; i < c.ntasks; i++)
			fprintf(f, "  task %3u %-12s %-32s block_dim %2u, %6zu insns\n", i,
				c.tasks[i].op_type, c.tasks[i].name, c.tasks[i].block_dim,
				c.tasks[i].prog.n);
	}
	rc = 0;
done:
	if (rc)
		om_free(out);
	ctx_free(&c);
	return rc;
}
