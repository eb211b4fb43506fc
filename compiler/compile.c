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
#include "kernels.h"

enum where { W_NONE, W_WS, W_WEIGHT };

struct dev_tensor {
	enum where where;
	uint64_t offset, size;
	int64_t rows, cols;
};

#define MAX_TASK_ARGS 8
struct task {
	char name[128], op_type[64];
	struct cc_prog prog;
	unsigned block_dim;
	struct om_arg args[MAX_TASK_ARGS];
	unsigned nargs;
	uint64_t flops, bytes;
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
	uint64_t ws_bytes;
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
	if (t->dtype != CC_F32 && t->dtype != CC_F16)
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

static int infer_matmul(struct cc_ctx *c, struct cc_node *n)
{
	if (need_known(c, n, 0) || need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	if (a->rank != 2 || b->rank != 2)
		return NODE_FAIL(c, n, "MatMul of ranks %d and %d is not supported yet (2-D only)",
				 a->rank, b->rank);
	if (a->dims[1] != b->dims[0])
		return NODE_FAIL(c, n, "inner dimensions differ (%lld and %lld)",
				 (long long)a->dims[1], (long long)b->dims[0]);
	int64_t d[2] = { a->dims[0], b->dims[1] };
	return set_shape(T(c, n->out[0]), a->dtype, 2, d);
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

/* ---- device tensors, weights, tasks ----------------------------------- */

static void rows_cols(const struct cc_tensor *t, int64_t *rows, int64_t *cols)
{
	int64_t r = 1;
	for (int i = 0; i + 1 < t->rank; i++)
		r *= t->dims[i];
	*rows = r;
	*cols = t->rank ? t->dims[t->rank - 1] : 1;
}

static uint64_t dev_bytes(int64_t rows, int64_t cols)
{
	uint64_t b = (uint64_t)rows * (uint64_t)cc_pad16(cols) * 2;
	return (b + 511) / 512 * 512 + 512; /* whole repeats and DMA slack */
}

static int ws_place(struct cc_ctx *c, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	rows_cols(T(c, ti), &d->rows, &d->cols);
	d->where = W_WS;
	d->size = dev_bytes(d->rows, d->cols);
	d->offset = c->ws_bytes;
	c->ws_bytes += d->size;
	return 0;
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
	if (cnt < 0 || !t->data || (t->dtype != CC_F32 && t->dtype != CC_F16)) {
		NODE_FAIL(c, n, "constant '%s' must be float32 or float16", t->name);
		return NULL;
	}
	float *f = malloc((size_t)(cnt ? cnt : 1) * sizeof *f);
	if (!f) {
		NODE_FAIL(c, n, "out of memory");
		return NULL;
	}
	if (t->dtype == CC_F32)
		memcpy(f, t->data, (size_t)cnt * 4);
	else
		dv_f16_to_f32_n(t->data, f, (size_t)cnt);
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
	rows_cols(T(c, ti), &d->rows, &d->cols);
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
	d->size = dev_bytes(d->rows, d->cols);
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
	snprintf(t->name, sizeof t->name, "%s", name);
	snprintf(t->op_type, sizeof t->op_type, "%s", op);
	cc_prog_init(&t->prog);
	return t;
}

static void arg_tensor(struct cc_ctx *c, struct task *t, int ti)
{
	struct dev_tensor *d = &c->dev[ti];
	struct om_arg *a = &t->args[t->nargs++];
	a->kind = d->where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE;
	a->value = (int64_t)d->offset;
	a->index = 0;
	t->bytes += (uint64_t)(d->rows * d->cols * 2);
}

/* ---- lowering ------------------------------------------------------------ */

static int run_chain(struct cc_ctx *c, struct cc_node *n, const struct cc_vchain *ch,
		     const int *ins)
{
	int out = n->out[0];
	if (ws_place(c, out))
		return -1;
	struct task *t = task_new(c, n->name, n->op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	int64_t elems = c->dev[out].rows * cc_pad16(c->dev[out].cols);
	char msg[256];
	if (cc_gen_vchain(c->cfg, ch, elems, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	for (int i = 0; i < ch->nin; i++)
		arg_tensor(c, t, ins[i]);
	arg_tensor(c, t, out);
	t->flops = (uint64_t)(c->dev[out].rows * c->dev[out].cols) * (uint64_t)ch->nsteps;
	return 0;
}

static int lower_identity(struct cc_ctx *c, struct cc_node *n)
{
	int in = n->in[0];
	if (c->dev[in].where == W_NONE && weight_place_act(c, n, in))
		return -1;
	c->dev[n->out[0]] = c->dev[in]; /* an alias: same bytes */
	return 0;
}

static int lower_unary(struct cc_ctx *c, struct cc_node *n)
{
	struct cc_vchain ch = { .nin = 1 };
	struct cc_vstep *s = ch.step;
	const char *op = n->op;
	if (!strcmp(op, "Relu"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_RELU, 0, 0, 0 };
	else if (!strcmp(op, "Abs"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_ABS, 0, 0, 0 };
	else if (!strcmp(op, "Exp"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_EXP, 0, 0, 0 };
	else if (!strcmp(op, "Log"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_LN, 0, 0, 0 };
	else if (!strcmp(op, "Sqrt"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_SQRT, 0, 0, 0 };
	else if (!strcmp(op, "Reciprocal"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
	else if (!strcmp(op, "Neg"))
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
	else { /* Sigmoid: 1 / (1 + exp(-x)) */
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_EXP, 1, 0, 0 };
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_ADDS, 2, 0, 1.0f };
		s[ch.nsteps++] = (struct cc_vstep){ CC_V_REC, 3, 0, 0 };
	}
	if (c->dev[n->in[0]].where == W_NONE && weight_place_act(c, n, n->in[0]))
		return -1;
	return run_chain(c, n, &ch, &n->in[0]);
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
	if (sa != sb) {
		int xi = sb ? n->in[0] : n->in[1];
		float *f = const_floats(c, n, sb ? n->in[1] : n->in[0]);
		if (!f)
			return -1;
		float s = f[0];
		free(f);
		struct cc_vstep *st = ch.step;
		if (vop == CC_V_ADD)
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_ADDS, 0, 0, s };
		else if (vop == CC_V_MUL)
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, s };
		else if (vop == CC_V_SUB && sb)
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_ADDS, 0, 0, -s };
		else if (vop == CC_V_SUB) { /* s - x */
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, -1.0f };
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_ADDS, 1, 0, s };
		} else if (sb) { /* x / s, as the hardware would: a multiply by 1/s */
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, 1.0f / s };
		} else { /* s / x */
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_REC, 0, 0, 0 };
			st[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 1, 0, s };
		}
		if (c->dev[xi].where == W_NONE && weight_place_act(c, n, xi))
			return -1;
		return run_chain(c, n, &ch, &xi);
	}
	if (!same_shape(a, b)) {
		char s1[96], s2[96];
		shape_str(a, s1, sizeof s1);
		shape_str(b, s2, sizeof s2);
		return NODE_FAIL(c, n, "broadcasting %s with %s is not supported yet (only equal "
				       "shapes or a constant scalar)", s1, s2);
	}
	for (int k = 0; k < 2; k++)
		if (c->dev[n->in[k]].where == W_NONE && weight_place_act(c, n, n->in[k]))
			return -1;
	ch.nin = 2;
	ch.step[ch.nsteps++] = (struct cc_vstep){ vop, 0, 1, 0 };
	return run_chain(c, n, &ch, n->in);
}

/* C = A x B (+ bias), B either a constant (laid out NZ, scaled by alpha) or
 * an activation. */
static int matmul_common(struct cc_ctx *c, struct cc_node *n, int tb, float alpha, int bias_ti,
			 float beta)
{
	int ai = n->in[0], bi = n->in[1], out = n->out[0];
	struct cc_tensor *a = T(c, ai), *b = T(c, bi);
	int64_t M = a->dims[0], K = a->dims[1], N = tb ? b->dims[0] : b->dims[1];
	if (c->dev[ai].where == W_NONE && weight_place_act(c, n, ai))
		return -1;
	int b_nz = b->data != NULL;
	struct dev_tensor bdev = c->dev[bi];
	if (b_nz) {
		float *f = const_floats(c, n, bi);
		if (!f)
			return -1;
		for (int64_t i = 0; i < K * N; i++)
			f[i] *= alpha;
		uint16_t *h = malloc((size_t)(cc_pad16(K) * cc_pad16(N)) * 2);
		if (!h) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		cc_layout_b_nz(f, K, N, tb, h);
		int64_t off = weight_add(c, h, (uint64_t)(cc_pad16(K) * cc_pad16(N) * 2));
		free(f);
		free(h);
		if (off < 0)
			return NODE_FAIL(c, n, "out of memory");
		bdev.where = W_WEIGHT;
		bdev.offset = (uint64_t)off;
		bdev.rows = K;
		bdev.cols = N;
	} else {
		if (tb || alpha != 1.0f)
			return NODE_FAIL(c, n, "a transposed or scaled B that is not a constant is not supported yet");
		if (bdev.where == W_NONE)
			return NODE_FAIL(c, n, "input '%s' has no device placement", b->name);
	}
	int64_t bias_off = -1;
	if (bias_ti >= 0) {
		struct cc_tensor *bt = T(c, bias_ti);
		int64_t cnt = cc_tensor_numel(bt);
		if (!bt->data || (cnt != N && cnt != 1))
			return NODE_FAIL(c, n, "a C that is not a constant of N (%lld) values or a "
					       "scalar is not supported yet", (long long)N);
		float *f = const_floats(c, n, bias_ti);
		if (!f)
			return -1;
		uint16_t *h = calloc((size_t)cc_pad16(N), 2);
		if (!h) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		for (int64_t j = 0; j < N; j++)
			h[j] = dv_f32_to_f16(beta * f[cnt == 1 ? 0 : j]);
		bias_off = weight_add(c, h, (uint64_t)cc_pad16(N) * 2);
		free(f);
		free(h);
		if (bias_off < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	if (ws_place(c, out))
		return -1;
	struct task *t = task_new(c, n->name, n->op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	char msg[256];
	if (cc_gen_matmul(c->cfg, M, K, N, b_nz, bias_off >= 0, &t->prog, &t->block_dim, msg,
			  sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	arg_tensor(c, t, ai);
	struct om_arg *ba = &t->args[t->nargs++];
	ba->kind = bdev.where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE;
	ba->value = (int64_t)bdev.offset;
	arg_tensor(c, t, out);
	if (bias_off >= 0) {
		struct om_arg *bb = &t->args[t->nargs++];
		bb->kind = OM_ARG_WEIGHT;
		bb->value = bias_off;
	}
	t->flops = 2 * (uint64_t)(M * K * N);
	t->bytes += (uint64_t)(K * N * 2);
	return 0;
}

static int lower_matmul(struct cc_ctx *c, struct cc_node *n)
{
	return matmul_common(c, n, 0, 1.0f, -1, 0);
}

static int lower_gemm(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_attr_int(n, "transA", 0))
		return NODE_FAIL(c, n, "transA=1 is not supported yet");
	int bias = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1;
	return matmul_common(c, n, (int)cc_attr_int(n, "transB", 0), cc_attr_float(n, "alpha", 1),
			     bias, cc_attr_float(n, "beta", 1));
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

/* ---- the driver ---------------------------------------------------------------- */

static void ctx_free(struct cc_ctx *c)
{
	for (unsigned i = 0; i < c->ntasks; i++)
		cc_prog_free(&c->tasks[i].prog);
	free(c->tasks);
	free(c->dev);
	free(c->weights);
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
	}
	m->ninputs = (uint32_t)c->g.ninputs;
	for (int i = 0; i < c->g.ninputs; i++)
		desc_from(&m->inputs[i], T(c, c->g.inputs[i]));
	m->noutputs = (uint32_t)c->g.noutputs;
	for (int i = 0; i < c->g.noutputs; i++)
		desc_from(&m->outputs[i], T(c, c->g.outputs[i]));
	for (int i = 0; i < c->g.nt; i++) {
		struct dev_tensor *d = &c->dev[i];
		if (d->where != W_WS)
			continue;
		struct om_tensor_desc *td = &m->tensors[m->ntensors++];
		memset(td, 0, sizeof *td);
		snprintf(td->name, sizeof td->name, "%s", T(c, i)->name);
		td->dtype = CC_F16;
		td->format = CC_FMT_ND;
		td->rank = 2;
		td->dims[0] = d->rows;
		td->dims[1] = cc_pad16(d->cols);
		td->offset = d->offset;
		td->size = (uint64_t)(d->rows * cc_pad16(d->cols) * 2); /* allocated: d->size */
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
		if (t->dtype != CC_F32) {
			fail(&c, "input '%s' is %s: inputs other than float32 are not supported yet", t->name,
			     cc_dtype_name(t->dtype));
			goto done;
		}
	}
	/* shape inference, in the graph's (topological) order */
	for (int i = 0; i < c.g.nn; i++) {
		struct cc_node *n = &c.g.n[i];
		if (n->dead)
			continue;
		nodes_in++;
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
	c.dev = calloc((size_t)c.g.nt + 1, sizeof *c.dev);
	if (!c.dev) {
		fail(&c, "out of memory");
		goto done;
	}
	/* graph inputs cross the edge: fp32 host -> fp16 device */
	for (int i = 0; i < c.g.ninputs; i++) {
		int ti = c.g.inputs[i];
		ws_place(&c, ti);
		struct task *t = task_new(&c, T(&c, ti)->name, "TransData");
		char msg[256];
		if (!t || cc_gen_cast_in(cfg, c.dev[ti].rows, c.dev[ti].cols, &t->prog,
					 &t->block_dim, msg, sizeof msg)) {
			fail(&c, "input '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
			goto done;
		}
		t->args[0] = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)i };
		t->args[1] = (struct om_arg){ OM_ARG_WORKSPACE, (int64_t)c.dev[ti].offset, 0 };
		t->nargs = 2;
		t->bytes = (uint64_t)(c.dev[ti].rows * c.dev[ti].cols * 6);
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
		struct task *t = task_new(&c, T(&c, ti)->name, "TransData");
		char msg[256];
		if (!t || cc_gen_cast_out(cfg, d->rows, d->cols, &t->prog, &t->block_dim, msg,
					  sizeof msg)) {
			fail(&c, "output '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
			goto done;
		}
		t->args[0] = (struct om_arg){ d->where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE,
					      (int64_t)d->offset, 0 };
		t->args[1] = (struct om_arg){ OM_ARG_OUTPUT, 0, (uint32_t)i };
		t->nargs = 2;
		t->bytes = (uint64_t)(d->rows * d->cols * 6);
	}
	const char *base = strrchr(onnx_path, '/');
	base = base ? base + 1 : onnx_path;
	if (build_model(&c, out, base))
		goto done;
	if (opt && opt->report) {
		FILE *f = opt->report;
		fprintf(f, "simatc: %s for %s\n", onnx_path, cfg->name);
		fprintf(f, "  nodes in: %d, tasks out: %u (%d input and %d output TransData)\n",
			nodes_in, c.ntasks, c.g.ninputs, c.g.noutputs);
		fprintf(f, "  weights: %llu bytes, workspace: %llu bytes\n",
			(unsigned long long)c.wbytes, (unsigned long long)c.ws_bytes);
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
