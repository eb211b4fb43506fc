/* lower_util.c: the helpers every op's shape inference and lowering shares:
 * error reporting (cc_fail, cc_node_fail), shape checks, placing device
 * tensors in the workspace and the weights blob, building tasks and their
 * arguments and I/O records, vector-chain and logic tasks, layout changes
 * (cc_relayout, cc_view_into, cc_lower_as4d, cc_alias) and the host/device
 * edge casts.  Split out of compile.c so the per-family lowering files and
 * the driver can share one copy.  The lowering's leaf, with lower_move.c,
 * lower_vchain.c and lower_fold.c: they call no family file (lower_*.c
 * calls only them and the files below: no cycle among lower_*.c). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"
#include "ops.h"

int cc_fail(struct cc_ctx *c, const char *fmt, ...)
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
int cc_node_fail(struct cc_ctx *c, const struct cc_node *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return cc_fail(c, "node '%s' (%s): %s", n->name, n->op, msg);
}

void cc_shape_str(const struct cc_tensor *t, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < t->rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)t->dims[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* ---- shape inference -------------------------------------------------- */

int cc_set_shape(struct cc_tensor *t, enum cc_dtype dt, int rank, const int64_t *dims)
{
	t->dtype = dt;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	return 0;
}

int cc_need_known(struct cc_ctx *c, struct cc_node *n, int k)
{
	if (k >= n->nin || n->in[k] < 0)
		return NODE_FAIL(c, n, "input %d is missing", k);
	struct cc_tensor *t = T(c, n->in[k]);
	if (t->rank < 0)
		return NODE_FAIL(c, n, "the shape of input '%s' is unknown", t->name);
	/* data movement keeps integer and bool values (fp16 on the device too,
	 * see kern_dtype.c), and so does choosing between values: the fp16
	 * rounding is monotonic, so the max of the rounded values is the rounded
	 * max (exact for 8-bit integers; for wider ones as exact as their
	 * fp16 form, |v| <= 2048).  Add, Sub, Mul and Div wrap as the integer
	 * type does in a kernel of their own (lower_eltwise.c), Pow rounds
	 * its fp32 result (lower_eltwise.c); other arithmetic on integers is
	 * not supported yet */
	int int_op = cc_op_has(n->op, CC_P_INT);
	int isint = t->dtype == CC_I64 || t->dtype == CC_I32 || t->dtype == CC_BOOL ||
		    t->dtype == CC_U8 || t->dtype == CC_I8;
	if (t->dtype != CC_F32 && t->dtype != CC_F16 && !(int_op && isint))
		return NODE_FAIL(c, n, "input '%s' is %s: types other than float32 and float16 "
				       "are not supported yet",
				 t->name, cc_dtype_name(t->dtype));
	return 0;
}

int infer_same(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]);
	return cc_set_shape(T(c, n->out[0]), a->dtype, a->rank, a->dims);
}

/* ---- device tensors, weights, tasks ----------------------------------- */

void cc_rows_cols(const struct cc_tensor *t, int64_t *rows, int64_t *cols)
{
	/* validate.c bounds every tensor's element count, so this product
	 * fits; checked anyway (a graph-less temporary has no such check), and
	 * saturated rather than wrapped on overflow */
	int64_t r = 1;
	for (int i = 0; i + 1 < t->rank; i++)
		if (__builtin_mul_overflow(r, t->dims[i], &r))
			r = INT64_MAX / 2;
	*rows = r;
	*cols = t->rank ? t->dims[t->rank - 1] : 1;
}

static void dev_shape(struct cc_ctx *c, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	struct cc_tensor *t = T(c, ti);
	cc_rows_cols(t, &d->rows, &d->cols);
	d->fmt = t->rank == 4 ? CC_FMT_NC1HWC0 : CC_FMT_ND;
	if (dev_5hd(d)) {
		d->n = t->dims[0];
		d->c = t->dims[1];
		d->h = t->dims[2];
		d->w = t->dims[3];
	}
}

static void ws_own(struct cc_ctx *c, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	dev_shape(c, ti);
	d->where = W_WS;
	d->size = dev_bytes(d);
	d->storage = ti;
	d->view.off = 0;
	d->view.c1s = 0;
	d->first = d->last = -1;
}

/* Its own bytes, or, planned inside a concat buffer (plan_concat.c), a view
 * of the buffer's storage at its channel offset (the storage's entry is
 * made here if its producer has not run yet). */
int cc_ws_place(struct cc_ctx *c, int ti)
{
	if (c->dev[ti].pinned)
		return 0;
	int s = ti < c->vplan_n ? c->vroot[ti] : -1;
	if (s < 0 || s == ti) {
		ws_own(c, ti);
		return 0;
	}
	if (c->dev[s].where != W_WS)
		ws_own(c, s);
	struct dev_tensor *d = &c->dev[ti];
	dev_shape(c, ti);
	d->where = W_WS;
	d->size = dev_bytes(d);
	d->storage = s;
	d->view.off = (uint64_t)(c->vc1[ti] * d->h * d->w * 32);
	/* (a view as wide as the buffer is dense) */
	d->view.c1s = d->n > 1 && (d->c + 15) / 16 != (c->dev[s].c + 15) / 16 ? (c->dev[s].c + 15) / 16
									   : 0;
	d->first = d->last = -1;
	return 0;
}

int cc_view_at(struct cc_ctx *c, int xi, int out, uint64_t boff, int64_t c1s)
{
	c->dev[out] = c->dev[xi];
	dev_shape(c, out);
	c->dev[out].view.off += boff;
	c->dev[out].view.c1s = c1s;
	return 0;
}

int64_t cc_c1_stride(const struct cc_ctx *c, int ti)
{
	const struct dev_tensor *d = &c->dev[ti];
	return d->view.c1s ? d->view.c1s : (d->c + 15) / 16;
}

int cc_tensor_new(struct cc_ctx *c, const char *base, const char *what, int rank,
		  const int64_t *dims)
{
	char name[600];
	snprintf(name, sizeof name, "%s#%s%d", base, what, c->g.nt);
	int ti = cc_tensor_add(&c->g, name, CC_F16, rank, dims);
	if (ti < 0)
		return -1;
	struct dev_tensor *dev = realloc(c->dev, (size_t)(c->g.nt + 1) * sizeof *dev);
	if (!dev)
		return -1;
	c->dev = dev;
	memset(&dev[ti], 0, sizeof dev[ti]);
	return ti;
}

/* A workspace buffer no graph tensor names (e.g. the fp32 staging of a
 * relayout); grows the device-tensor table with the graph. */
int cc_scratch_new(struct cc_ctx *c, const char *base, uint64_t bytes)
{
	int64_t d1[1] = { (int64_t)(bytes / 2) };
	int ti = cc_tensor_new(c, base, "scratch", 1, d1);
	if (ti < 0)
		return -1;
	struct dev_tensor *dev = c->dev;
	dev[ti].where = W_WS;
	dev[ti].rows = 1;
	dev[ti].cols = (int64_t)(bytes / 2);
	dev[ti].size = (bytes + 511) / 512 * 512 + 1024;
	dev[ti].storage = ti;
	dev[ti].first = dev[ti].last = -1;
	return ti;
}

/* FNV-1a over a blob: the key of cc_weight_add's dedupe. */
static uint64_t blob_hash(const void *data, uint64_t bytes)
{
	const unsigned char *p = data;
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 0; i < bytes; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

int64_t cc_weight_add(struct cc_ctx *c, const void *data, uint64_t bytes)
{
	uint64_t hash = 0;
	if (c->wdedupe) { /* an L2-fused chain's later slices: the first's copy */
		hash = blob_hash(data, bytes);
		for (unsigned i = 0; i < c->nwblobs; i++) {
			const struct cc_wblob *b = &c->wblobs[i];
			if (b->hash == hash && b->bytes == bytes &&
			    !memcmp(c->weights + b->off, data, bytes))
				return (int64_t)b->off;
		}
		if (c->nwblobs == c->capwblobs) {
			unsigned cap = c->capwblobs ? 2 * c->capwblobs : 64;
			struct cc_wblob *w = realloc(c->wblobs, cap * sizeof *w);
			if (!w)
				return -1;
			c->wblobs = w;
			c->capwblobs = cap;
		}
	}
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
	if (c->wdedupe)
		c->wblobs[c->nwblobs++] = (struct cc_wblob){ hash, off, bytes };
	return (int64_t)off;
}

/* A constant's values as floats (float32 or float16 data). */
float *cc_const_floats(struct cc_ctx *c, const struct cc_node *n, int ti)
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
	if (t->nbytes < (size_t)cnt * cc_dtype_size(t->dtype)) { /* never read past its bytes */
		NODE_FAIL(c, n, "constant '%s' holds %zu bytes, fewer than its shape needs",
			  t->name, t->nbytes);
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
int cc_weight_place_act(struct cc_ctx *c, const struct cc_node *n, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	if (d->where != W_NONE)
		return 0;
	float *f = cc_const_floats(c, n, ti);
	if (!f)
		return -1;
	dev_shape(c, ti);
	int64_t c16 = cc_pad16(d->cols), elems = dev_elems(d);
	uint16_t *h = calloc((size_t)elems, 2);
	if (!h) {
		free(f);
		return NODE_FAIL(c, n, "out of memory");
	}
	if (dev_5hd(d)) { /* [N][C1][H][W][16], the channels past C zero */
		int64_t hw = d->h * d->w, c1n = (d->c + 15) / 16;
		for (int64_t b = 0; b < d->n; b++)
			for (int64_t ch = 0; ch < d->c; ch++)
				for (int64_t p = 0; p < hw; p++)
					dv_f32_to_f16_n(f + (b * d->c + ch) * hw + p,
							h + ((b * c1n + ch / 16) * hw + p) * 16 + ch % 16,
							1);
	} else {
		for (int64_t r = 0; r < d->rows; r++)
			dv_f32_to_f16_n(f + r * d->cols, h + r * c16, (size_t)d->cols);
	}
	int64_t off = cc_weight_add(c, h, (uint64_t)elems * 2);
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

struct task *cc_task_new(struct cc_ctx *c, const char *name, const char *op)
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
	t->prog.max_n = cc_max_insns(c->cfg);
	t->prog.max_work = cc_max_work(c->cfg);
	return t;
}

void cc_arg_tensor(struct cc_ctx *c, struct task *t, int ti)
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
	/* (a workspace view: its place in the storage; the plan adds the storage's) */
	a->value = d->where == W_WEIGHT ? (int64_t)d->offset : (int64_t)d->view.off;
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
void cc_io_add(struct task *t, int output, int ti, int shape, enum cc_dtype dt,
	       enum cc_format fmt)
{
	struct task_io *v = output ? t->out : t->in;
	unsigned *n = output ? &t->nout : &t->nin;
	if (*n < MAX_TASK_ARGS)
		v[(*n)++] = (struct task_io){ ti, shape, dt, fmt };
}

/* A tensor in its device layout: fp16, NC1HWC0 for 4-D activations, else ND. */
void cc_io_dev(struct cc_ctx *c, struct task *t, int output, int ti)
{
	const struct dev_tensor *d = &c->dev[ti];
	cc_io_add(t, output, ti, ti, CC_F16, dev_format(d));
}

/* The common shape of a one-input kernel: its output placed in the
 * workspace and a task named after the node (NULL after NODE_FAIL)... */
struct task *cc_output_task(struct cc_ctx *c, struct cc_node *n, int out)
{
	struct task *t = cc_ws_place(c, out) ? NULL : cc_task_new(c, n->name, n->op);
	if (!t)
		NODE_FAIL(c, n, "out of memory");
	return t;
}

/* ...and its arguments: the input, then the output, both recorded as the
 * task's tensors. */
void cc_one_in_one_out(struct cc_ctx *c, struct task *t, int xi, int out)
{
	cc_arg_tensor(c, t, xi);
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 0, xi);
	cc_io_dev(c, t, 1, out);
}

/* A tensor in the host's plain layout (the edge kernels' other side): NCHW
 * when shape is 4-D, else ND. */
void cc_io_host(struct cc_ctx *c, struct task *t, int output, int ti, int shape,
		enum cc_dtype dt)
{
	cc_io_add(t, output, ti, shape, dt, T(c, shape)->rank == 4 ? CC_FMT_NCHW : CC_FMT_ND);
}

/* ---- lowering ------------------------------------------------------------ */

int cc_run_chain(struct cc_ctx *c, struct cc_node *n, const struct cc_vchain *ch,
		 const int *ins)
{
	int out = n->out[0];
	if (cc_ws_place(c, out))
		return -1;
	char op[64] = ""; /* a fused chain: its ops in the order they run */
	if (n->fused[0] && n->chain_prev) {
		cc_strlcat(op, sizeof op, n->fused);
		cc_strlcat(op, sizeof op, "+");
	}
	cc_strlcat(op, sizeof op, n->op);
	struct task *t = cc_task_new(c, n->name, op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	int64_t elems = dev_elems(&c->dev[out]);
	char msg[256];
	/* mixed precision: a chain computes in fp32 when any of its nodes does,
	 * and then all of them do */
	struct cc_vchain chain = *ch;
	for (int k = (int)(n - c->g.n); k >= 0;
	     k = c->g.n[k].chain_prev ? c->g.n[k].chain_prev - 1 : -1)
		chain.f32 |= c->g.n[k].fp32;
	for (int k = (int)(n - c->g.n); chain.f32 && k >= 0;
	     k = c->g.n[k].chain_prev ? c->g.n[k].chain_prev - 1 : -1)
		if (!c->g.n[k].fp32) {
			c->g.n[k].fp32 = 1;
			snprintf(c->g.n[k].prec_note, sizeof c->g.n[k].prec_note,
				 "fused into a chain that computes in fp32");
		}
	if (cc_gen_vchain(c->cfg, &chain, elems, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	for (int i = 0; i < ch->nin; i++) {
		cc_arg_tensor(c, t, ins[i]);
		cc_io_dev(c, t, 0, ins[i]);
	}
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 1, out);
	t->flops = (uint64_t)dev_elems(&c->dev[out]) * (uint64_t)ch->nsteps;
	return 0;
}

/* One cc_gen_logic kernel over the output's padded layout. */
int cc_logic_task(struct cc_ctx *c, struct cc_node *n, const struct cc_logic *lg,
		      const int *ins, int nin)
{
	int out = n->out[0];
	if (cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct task *t = cc_task_new(c, n->name, n->op);
	char msg[256];
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_gen_logic(c->cfg, lg, dev_elems(&c->dev[out]), &t->prog, &t->block_dim, msg,
			 sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	for (int k = 0; k < nin; k++) {
		cc_arg_tensor(c, t, ins[k]);
		cc_io_dev(c, t, 0, ins[k]);
	}
	cc_arg_tensor(c, t, out);
	cc_io_dev(c, t, 1, out);
	t->flops = (uint64_t)cc_tensor_numel(T(c, out)) * (uint64_t)nin;
	return 0;
}

/* The TransData kernel between the host's plain fp32 layout and a device
 * tensor's (NC1HWC0 for 4-D, padded ND otherwise), in either direction. */
int cc_gen_edge(struct cc_ctx *c, const struct dev_tensor *d, int to_device,
		struct task *t, char *msg, size_t len)
{
	if (dev_c04(d) && to_device)
		return cc_gen_nchw_in_c04(c->cfg, d->n, d->c, d->h, d->w, &t->prog, &t->block_dim,
					  msg, len);
	if (dev_5hd(d))
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
int cc_relayout(struct cc_ctx *c, struct cc_node *n, int in, int out)
{
	int64_t numel = cc_tensor_numel(T(c, in));
	int sc = cc_scratch_new(c, n->name, (uint64_t)numel * 4);
	if (sc < 0 || cc_ws_place(c, out))
		return NODE_FAIL(c, n, "out of memory");
	struct dev_tensor *d = &c->dev[in], *e = &c->dev[out];
	char msg[256];
	for (int k = 0; k < 2; k++) {
		struct task *t = cc_task_new(c, n->name, "TransData");
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_gen_edge(c, k ? e : d, k, t, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		/* the scratch holds fp32 in the plain layout of in, which is out's too */
		if (k == 0) {
			cc_arg_tensor(c, t, in);
			cc_arg_tensor(c, t, sc);
			cc_io_dev(c, t, 0, in);
			cc_io_host(c, t, 1, sc, in, CC_F32);
		} else {
			cc_arg_tensor(c, t, sc);
			cc_arg_tensor(c, t, out);
			cc_io_host(c, t, 0, sc, out, CC_F32);
			cc_io_dev(c, t, 1, out);
		}
		d = &c->dev[in]; /* cc_arg_tensor does not move c->dev, cc_scratch_new did */
		e = &c->dev[out];
	}
	return 0;
}

/* Flatten / Reshape as views: the device bytes stay where they are when the
 * layouts agree: ND to ND with the same last dimension, or NC1HWC0 with
 * H = W = 1 (which is [N][C16], the ND layout) to [N, C].  Otherwise the
 * data is laid out anew (relayout). */
int cc_view_into(struct cc_ctx *c, struct cc_node *n, int in, int out)
{
	struct cc_tensor *x = T(c, in), *y = T(c, out);
	struct dev_tensor *d = &c->dev[in];
	if (d->where == W_NONE && x->data && cc_weight_place_act(c, n, in))
		return -1;
	if (d->where == W_NONE || d->where == W_INPUT)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	int ok = 0;
	if (dev_5hd(d))
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
		return cc_relayout(c, n, in, out);
	struct dev_tensor v = *d;
	v.fmt = CC_FMT_ND;
	cc_rows_cols(y, &v.rows, &v.cols);
	c->dev[out] = v;
	return 0;
}

/* Block strides (in 32-byte blocks) of each logical axis of a tensor in its
 * device layout, and its lane axis (whose index % 16 is the lane; its stride
 * is per 16 elements): NC1HWC0 for 4-D, padded ND otherwise. */
int cc_dev_strides(const struct cc_tensor *t, int64_t *st)
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
int cc_act_input(struct cc_ctx *c, struct cc_node *n, int xi)
{
	if (c->dev[xi].where == W_NONE && cc_weight_place_act(c, n, xi))
		return -1;
	return 0;
}

/* A workspace tensor of the given shape that no graph node names, for an
 * intermediate a lowering introduces (a transposed or scaled operand). */
int cc_temp_new(struct cc_ctx *c, const struct cc_node *n, int rank, const int64_t *dims)
{
	int ti = cc_tensor_new(c, n->name, "tmp", rank, dims);
	if (ti >= 0)
		cc_ws_place(c, ti);
	return ti;
}

int cc_need4(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0))
		return -1;
	if (T(c, n->in[0])->rank != 4)
		return NODE_FAIL(c, n, "%s on a rank-%d input is not supported yet (4-D only)",
				 n->op, T(c, n->in[0])->rank);
	return 0;
}

int cc_same_shape(const struct cc_tensor *a, const struct cc_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

/* The int64 values of a constant integer tensor (NULL if it is not one). */
int64_t *cc_const_ints(struct cc_ctx *c, int ti, int64_t *cnt)
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

/* A 1-D Conv, pool or BatchNormalization ([N, C, L], padded ND on the
 * device) as the 2-D one over [N, C, 1, L]: relayout (two TransData
 * through fp32, cc_view_into's path) into NC1HWC0, the 2-D lowering with the
 * node's input and output swapped for the 4-D views, and back.  The
 * window attributes stay 1-D (lower_conv.c's is_1d reads them as height 1). */
int cc_lower_1d(struct cc_ctx *c, struct cc_node *n,
		int (*lower)(struct cc_ctx *, struct cc_node *))
{
	int xi = n->in[0], out = n->out[0];
	if (c->dev[xi].where == W_NONE || c->dev[xi].where == W_INPUT)
		return NODE_FAIL(c, n, "a constant input is not supported yet");
	const struct cc_tensor *x = T(c, xi), *y = T(c, out);
	int64_t dx[4] = { x->dims[0], x->dims[1], 1, x->dims[2] };
	int64_t dy[4] = { y->dims[0], y->dims[1], 1, y->dims[2] };
	return cc_lower_as4d(c, n, dx, dy, lower);
}

int cc_lower_as4d(struct cc_ctx *c, struct cc_node *n, const int64_t *dx, const int64_t *dy,
		  int (*lower)(struct cc_ctx *, struct cc_node *))
{
	int xi = n->in[0], out = n->out[0];
	int x4 = cc_tensor_new(c, n->name, "in4d", 4, dx);
	int y4 = x4 < 0 ? -1 : cc_tensor_new(c, n->name, "out4d", 4, dy);
	if (y4 < 0)
		return NODE_FAIL(c, n, "out of memory");
	if (cc_relayout(c, n, xi, x4))
		return -1;
	n->in[0] = x4;
	n->out[0] = y4;
	int rc = lower(c, n);
	n->in[0] = xi;
	n->out[0] = out;
	if (rc)
		return -1;
	return cc_relayout(c, n, y4, out);
}

int cc_alias(struct cc_ctx *c, struct cc_node *n)
{
	int in = n->in[0];
	if (c->dev[in].where == W_NONE && cc_weight_place_act(c, n, in))
		return -1;
	c->dev[n->out[0]] = c->dev[in]; /* an alias: same bytes, same storage */
	return 0;
}

/* The lane axis of t's device layout (ND's last, NC1HWC0's C). */
int cc_lane_axis(const struct cc_tensor *t) { return t->rank == 4 ? 1 : t->rank - 1; }

/* Block-grid counts of a tensor's device layout, per logical axis. */
void cc_grid_counts(const struct cc_tensor *t, int64_t *cnt)
{
	int lane = cc_lane_axis(t);
	for (int i = 0; i < t->rank; i++)
		cnt[i] = i == lane ? (t->dims[i] + 15) / 16 : t->dims[i];
}
