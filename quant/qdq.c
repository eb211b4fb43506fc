/* qdq.c: finding the quantizable nodes of an ONNX model and rewriting it
 * into the QDQ form (protobuf-c's unpacked ModelProto, edited in place;
 * everything added is malloc'd so onnx__model_proto__free_unpacked frees it
 * with the rest).
 *
 * The conventions (docs/quantization.md; the compiler relies on them):
 *  - activation X of a quantized node: QuantizeLinear(X, X_scale, X_zero_point)
 *    -> X_QuantizeLinear_Output (int8) -> DequantizeLinear(same scale and zero
 *    point) -> X_DequantizeLinear_Output; scale a float scalar = T / 127, zero
 *    point an int8 scalar 0; one pair per tensor however many nodes read it;
 *  - weight W: initializer W_quantized (int8, W's shape, values in
 *    [-127, 127]), W_scale (float: [C] per channel, scalar per tensor),
 *    W_zero_point (int8 zeros, same shape as the scale), DequantizeLinear
 *    (axis = the output-channel axis when per channel) -> W_DequantizeLinear_Output;
 *  - bias B: B_quantized (int32, B's shape) = round(B / (s_x * s_w[c])),
 *    B_scale = s_x * s_w (float, [C] or scalar), B_zero_point (int32 zeros),
 *    DequantizeLinear (axis 0 when per channel) -> B_DequantizeLinear_Output;
 *  - the default-domain opset is raised to 13 when lower. */
#include "qt_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *xfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xfmt(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int64_t default_opset(const Onnx__ModelProto *m)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const char *d = m->opset_import[i]->domain;
		if (!d || !d[0] || !strcmp(d, "ai.onnx"))
			return m->opset_import[i]->version;
	}
	return -1;
}

const Onnx__TensorProto *qdq_find_init(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
			return g->initializer[i];
	return NULL;
}

static size_t init_count(const Onnx__TensorProto *t)
{
	size_t n = 1;
	for (size_t d = 0; d < t->n_dims; d++)
		n *= (size_t)(t->dims[d] < 0 ? 0 : t->dims[d]);
	return n;
}

float *qdq_init_floats(const Onnx__TensorProto *t, size_t *count)
{
	if (!t || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
	    (t->has_data_location &&
	     t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
		return NULL;
	size_t n = init_count(t);
	float *f = malloc(n ? n * sizeof *f : 1);
	if (!f)
		return NULL;
	if (t->has_raw_data && t->raw_data.len == n * 4) {
		memcpy(f, t->raw_data.data, n * 4); /* little-endian, as the host */
	} else if (t->n_float_data == n) {
		memcpy(f, t->float_data, n * 4);
	} else {
		free(f);
		return NULL;
	}
	*count = n;
	return f;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	return NULL;
}

static int in_list(const char *list, const char *s)
{
	if (!list || !s)
		return 0;
	size_t n = strlen(s);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

static int is_graph_input(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_input; i++)
		if (g->input[i]->name && !strcmp(g->input[i]->name, name))
			return !qdq_find_init(g, name);
	return 0;
}

int qdq_analyze(const Onnx__ModelProto *m, const char *skip_nodes, const char *skip_types,
		struct qt_node **nodes_out, size_t *nnodes, struct qt_act **acts_out,
		size_t *nacts, char *err, size_t errlen)
{
	const Onnx__GraphProto *g = m->graph;
	int64_t opset = default_opset(m);
	*nodes_out = NULL;
	*acts_out = NULL;
	*nnodes = *nacts = 0;
	if (opset < 0)
		return fail(err, errlen, "no opset_import for the default ONNX domain");
	if (opset < 11)
		return fail(err, errlen, "opset %lld is not supported yet (QDQ needs 13; re-export "
			    "the model at opset >= 11)", (long long)opset);
	/* Raising 11/12 to 13 is safe except for the ops whose inputs or
	 * semantics changed in 13. */
	static const char *const changed13 = "Squeeze,Unsqueeze,Split,ReduceSum,Softmax,"
					    "LogSoftmax,Hardmax";
	for (size_t i = 0; opset < 13 && i < g->n_node; i++)
		if (in_list(changed13, g->node[i]->op_type))
			return fail(err, errlen, "node %s: %s changed in opset 13 and the model is "
				    "opset %lld: raising it is not supported yet (re-export at "
				    "opset 13)", g->node[i]->name ? g->node[i]->name : "",
				    g->node[i]->op_type, (long long)opset);
	struct qt_node *nodes = calloc(g->n_node + 1, sizeof *nodes);
	struct qt_act *acts = calloc(g->n_node + 1, sizeof *acts);
	if (!nodes || !acts) {
		free(nodes);
		free(acts);
		return fail(err, errlen, "out of memory");
	}
	size_t nn = 0, na = 0;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *np = g->node[i];
		const char *op = np->op_type ? np->op_type : "";
		if (strcmp(op, "Conv") && strcmp(op, "Gemm") && strcmp(op, "MatMul"))
			continue;
		if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx"))
			continue;
		if (np->n_input < 2)
			continue;
		struct qt_node *q = &nodes[nn++];
		q->index = i;
		q->name = np->name ? np->name : "";
		q->op = op;
		q->x = np->input[0];
		q->w = np->input[1];
		q->b = np->n_input > 2 && np->input[2][0] ? np->input[2] : NULL;
		q->act = -1;
		q->sqnr = NAN;
		const Onnx__TensorProto *w = qdq_find_init(g, q->w);
		const Onnx__TensorProto *b = q->b ? qdq_find_init(g, q->b) : NULL;
		size_t wn = 0;
		float *wf = qdq_init_floats(w, &wn);
		free(wf);
		if (in_list(skip_nodes, q->name)) {
			q->why = QT_SKIP_NAME;
			snprintf(q->detail, sizeof q->detail, "--skip_nodes");
			continue;
		}
		if (in_list(skip_types, op)) {
			q->why = QT_SKIP_TYPE;
			snprintf(q->detail, sizeof q->detail, "--skip_types");
			continue;
		}
		if (!wf || w->n_dims < 1) {
			q->why = QT_NOT_CONST;
			snprintf(q->detail, sizeof q->detail,
				 "weight %.200s is not a float initializer in the file", q->w);
			continue;
		}
		if (qdq_find_init(g, q->x)) {
			q->why = QT_NOT_CONST;
			snprintf(q->detail, sizeof q->detail, "its input %.200s is a constant", q->x);
			continue;
		}
		q->why = QT_INT8;
		int64_t C = 0;
		if (!strcmp(op, "Conv")) {
			q->axis = 0;
		} else if (!strcmp(op, "Gemm")) {
			const Onnx__AttributeProto *tb = attr(np, "transB");
			q->axis = tb && tb->i ? 0 : 1;
			if (w->n_dims != 2) {
				q->why = QT_NOT_CONST;
				snprintf(q->detail, sizeof q->detail, "Gemm weight of rank %zu",
					 w->n_dims);
				continue;
			}
		} else {
			q->axis = w->n_dims >= 2 ? (int)w->n_dims - 1 : -1;
		}
		C = q->axis >= 0 ? w->dims[q->axis] : 1;
		/* int32 bias needs y = s_x s_w (x_q * w_q + b_q): one bias per output
		 * channel added once, i.e. Gemm's alpha = beta = 1 */
		const Onnx__AttributeProto *al = attr(np, "alpha"), *be = attr(np, "beta");
		size_t bn = 0;
		float *bf = qdq_init_floats(b, &bn);
		free(bf);
		q->bias_ok = bf && b->n_dims == 1 && b->dims[0] == C && (!al || al->f == 1.0f) &&
			     (!be || be->f == 1.0f);
		size_t a;
		for (a = 0; a < na; a++)
			if (!strcmp(acts[a].name, q->x))
				break;
		if (a == na) {
			acts[na].name = strdup(q->x);
			if (!acts[na].name) {
				free(nodes);
				free(acts);
				return fail(err, errlen, "out of memory");
			}
			acts[na].graph_input = is_graph_input(g, q->x);
			acts[na].out_index = -1;
			qt_stats_init(&acts[na].st);
			na++;
		}
		q->act = (int)a;
	}
	*nodes_out = nodes;
	*nnodes = nn;
	*acts_out = acts;
	*nacts = na;
	return 0;
}

/* ---- building protobuf-c messages ---- */

struct vec {
	void **p;
	size_t n, cap;
};

static int vec_push(struct vec *v, void *x)
{
	if (!x)
		return -1;
	if (v->n == v->cap) {
		size_t c = v->cap ? 2 * v->cap : 64;
		void **p = realloc(v->p, c * sizeof *p);
		if (!p)
			return -1;
		v->p = p;
		v->cap = c;
	}
	v->p[v->n++] = x;
	return 0;
}

static Onnx__NodeProto *new_node(const char *op, const char *name, const char *const *in,
				 size_t nin, const char *out, int axis)
{
	Onnx__NodeProto *n = malloc(sizeof *n);
	if (!n)
		return NULL;
	onnx__node_proto__init(n);
	n->op_type = strdup(op);
	n->name = strdup(name);
	n->input = calloc(nin, sizeof *n->input);
	n->output = calloc(1, sizeof *n->output);
	int ok = n->op_type && n->name && n->input && n->output;
	n->n_input = nin;
	for (size_t i = 0; ok && i < nin; i++)
		ok = (n->input[i] = strdup(in[i])) != NULL;
	n->n_output = 1;
	if (ok)
		ok = (n->output[0] = strdup(out)) != NULL;
	if (ok && axis >= 0) {
		Onnx__AttributeProto *a = malloc(sizeof *a);
		n->attribute = malloc(sizeof *n->attribute);
		if (a && n->attribute) {
			onnx__attribute_proto__init(a);
			a->name = strdup("axis");
			a->has_type = 1;
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
			a->has_i = 1;
			a->i = axis;
			n->attribute[0] = a;
			n->n_attribute = 1;
			ok = a->name != NULL;
		} else {
			free(a);
			ok = 0;
		}
	}
	if (!ok) {
		onnx__node_proto__free_unpacked(n, NULL);
		return NULL;
	}
	return n;
}

/* An initializer with raw_data (copied). rank 0 = scalar. */
static Onnx__TensorProto *new_init(const char *name, int dtype, const int64_t *dims, size_t rank,
				   const void *data, size_t bytes)
{
	Onnx__TensorProto *t = malloc(sizeof *t);
	if (!t)
		return NULL;
	onnx__tensor_proto__init(t);
	t->name = strdup(name);
	t->has_data_type = 1;
	t->data_type = dtype;
	t->n_dims = rank;
	t->dims = rank ? malloc(rank * sizeof *t->dims) : NULL;
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = malloc(bytes ? bytes : 1);
	if (!t->name || (rank && !t->dims) || !t->raw_data.data) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return NULL;
	}
	if (rank)
		memcpy(t->dims, dims, rank * sizeof *dims);
	memcpy(t->raw_data.data, data, bytes);
	return t;
}

static int has_name(const struct vec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->p[i], s))
			return 1;
	return 0;
}

static int replace_input(Onnx__NodeProto *n, size_t k, const char *name)
{
	char *s = strdup(name);
	if (!s)
		return -1;
	free(n->input[k]);
	n->input[k] = s;
	return 0;
}

/* One weight or bias quantized: its int8/int32 values, per-channel scales. */
struct wq {
	size_t n, C, inner; /* elements, channels (1 = per tensor), elements per channel run */
	float *scale;       /* [C] */
};

/* The channel of element e for a tensor of dims split at axis. */
static size_t chan_of(size_t e, size_t C, size_t inner)
{
	return C == 1 ? 0 : (e / inner) % C;
}

int qdq_add_outputs(Onnx__ModelProto *m, char *const *names, size_t n)
{
	Onnx__GraphProto *g = m->graph;
	Onnx__ValueInfoProto **o = realloc(g->output, (g->n_output + n + 1) * sizeof *o);
	if (!o)
		return -1;
	g->output = o;
	for (size_t i = 0; i < n; i++) {
		Onnx__ValueInfoProto *v = malloc(sizeof *v);
		if (!v)
			return -1;
		onnx__value_info_proto__init(v);
		v->name = strdup(names[i]);
		o[g->n_output++] = v;
		if (!v->name)
			return -1;
	}
	return 0;
}

static int push_init(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
	if (!t)
		return -1;
	Onnx__TensorProto **p = realloc(g->initializer, (g->n_initializer + 1) * sizeof *p);
	if (!p) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return -1;
	}
	g->initializer = p;
	p[g->n_initializer++] = t;
	return 0;
}

static int push_scalar_f(Onnx__GraphProto *g, const char *name, float v)
{
	return push_init(g, new_init(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0, &v, 4));
}

/* Emit the activation pair for act; out = the new name. */
static int emit_act(Onnx__GraphProto *g, struct vec *nodes, const struct qt_act *a, char **out)
{
	const char *x = a->name;
	float s = (float)a->scale;
	char *sn = xfmt("%s_scale", x), *zn = xfmt("%s_zero_point", x);
	char *qo = xfmt("%s_QuantizeLinear_Output", x), *dqo = xfmt("%s_DequantizeLinear_Output", x);
	char *qn = xfmt("%s_QuantizeLinear", x), *dqn = xfmt("%s_DequantizeLinear", x);
	int rc = -1;
	int8_t zero = 0;
	if (!sn || !zn || !qo || !dqo || !qn || !dqn)
		goto out;
	if (push_scalar_f(g, sn, s) ||
	    push_init(g, new_init(zn, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, NULL, 0, &zero, 1)))
		goto out;
	const char *qi[3] = { x, sn, zn }, *di[3] = { qo, sn, zn };
	if (vec_push(nodes, new_node("QuantizeLinear", qn, qi, 3, qo, -1)) ||
	    vec_push(nodes, new_node("DequantizeLinear", dqn, di, 3, dqo, -1)))
		goto out;
	*out = dqo;
	dqo = NULL;
	rc = 0;
out:
	free(sn), free(zn), free(qo), free(dqo), free(qn), free(dqn);
	return rc;
}

/* Quantize weight or bias t into the graph.  wscale: NULL for a weight (its
 * scales are computed here into w->scale); for a bias, the weight's scales
 * times sx.  Returns the dequantized name in *out. */
static int emit_const(Onnx__GraphProto *g, struct vec *nodes, const Onnx__TensorProto *t,
		      int axis, enum qt_gran gran, const struct wq *wt, float sx, struct wq *res,
		      char **out)
{
	const char *name = t->name;
	size_t n = 0;
	float *f = qdq_init_floats(t, &n);
	if (!f)
		return -1;
	int bias = wt != NULL;
	size_t C = 1, inner = 1;
	if (bias) {
		C = wt->C; /* a bias is 1-D: its channel is its index */
	} else if (gran == QT_PER_CHANNEL && axis >= 0) {
		C = (size_t)t->dims[axis];
		for (size_t d = (size_t)axis + 1; d < t->n_dims; d++)
			inner *= (size_t)t->dims[d];
	}
	float *scale = calloc(C ? C : 1, sizeof *scale);
	void *q = malloc(n ? n * (bias ? 4 : 1) : 1);
	int rc = -1;
	char *sn = xfmt("%s_scale", name), *zn = xfmt("%s_zero_point", name),
	     *qn = xfmt("%s_quantized", name), *dqo = xfmt("%s_DequantizeLinear_Output", name),
	     *dqn = xfmt("%s_DequantizeLinear", name);
	if (!scale || !q || !sn || !zn || !qn || !dqo || !dqn)
		goto out;
	if (bias) {
		for (size_t c = 0; c < C; c++)
			scale[c] = sx * wt->scale[c];
	} else {
		/* scale = max|w| / 127 per channel; an all-zero channel gets 1 (any
		 * scale quantizes it exactly, and DequantizeLinear needs a nonzero one) */
		for (size_t e = 0; e < n; e++) {
			size_t c = chan_of(e, C, inner);
			float a = fabsf(f[e]);
			if (a > scale[c])
				scale[c] = a;
		}
		for (size_t c = 0; c < C; c++)
			scale[c] = scale[c] > 0 ? scale[c] / 127.0f : 1.0f;
	}
	for (size_t e = 0; e < n; e++) {
		size_t c = bias ? (C == 1 ? 0 : e) : chan_of(e, C, inner);
		float s = scale[c] > 0 ? scale[c] : 1.0f;
		double v = nearbyint((double)f[e] / s);
		if (bias) {
			v = v > 2147483647.0 ? 2147483647.0 : v < -2147483647.0 ? -2147483647.0 : v;
			((int32_t *)q)[e] = (int32_t)v;
		} else {
			v = v > 127 ? 127 : v < -127 ? -127 : v;
			((int8_t *)q)[e] = (int8_t)v;
		}
	}
	{
		int64_t cdim = (int64_t)C;
		size_t srank = C > 1 ? 1 : 0;
		void *zero = calloc(C, 4);
		int ok = zero &&
			 !push_init(g, new_init(qn, bias ? ONNX__TENSOR_PROTO__DATA_TYPE__INT32 :
							   ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
						t->dims, t->n_dims, q, n * (bias ? 4 : 1))) &&
			 !push_init(g, new_init(sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &cdim, srank,
						scale, C * 4)) &&
			 !push_init(g, new_init(zn, bias ? ONNX__TENSOR_PROTO__DATA_TYPE__INT32 :
							   ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
						&cdim, srank, zero, C * (bias ? 4 : 1)));
		free(zero);
		const char *di[3] = { qn, sn, zn };
		int ax = C > 1 ? (bias ? 0 : axis) : -1;
		if (!ok || vec_push(nodes, new_node("DequantizeLinear", dqn, di, 3, dqo, ax)))
			goto out;
	}
	if (res) {
		res->n = n;
		res->C = C;
		res->inner = inner;
		res->scale = scale;
		scale = NULL;
	}
	*out = dqo;
	dqo = NULL;
	rc = 0;
out:
	free(f), free(scale), free(q);
	free(sn), free(zn), free(qn), free(dqo), free(dqn);
	return rc;
}

/* Whether tensor name is computed by a Conv (directly, or through the
 * BatchNormalization the compiler folds into it): an Add of it and a
 * residual becomes the Conv's output path in the compiler. */
static int conv_made(const Onnx__GraphProto *g, const char *name)
{
	for (int hop = 0; hop < 2; hop++) {
		const Onnx__NodeProto *p = NULL;
		for (size_t i = 0; i < g->n_node && !p; i++)
			for (size_t k = 0; k < g->node[i]->n_output; k++)
				if (!strcmp(g->node[i]->output[k], name))
					p = g->node[i];
		if (!p)
			return 0;
		if (!strcmp(p->op_type, "Conv"))
			return 1;
		if (strcmp(p->op_type, "BatchNormalization") || p->n_input < 1)
			return 0;
		name = p->input[0];
	}
	return 0;
}

/* For residual Adds (add_q): add_r[i] = 1 + the input of node i that is
 * the residual, when node i is an Add of a Conv's result and another
 * tensor; else 0. */
static int residual_adds(const Onnx__GraphProto *g, int **add_r)
{
	*add_r = calloc(g->n_node + 1, sizeof **add_r);
	if (!*add_r)
		return -1;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		if (strcmp(n->op_type, "Add") || n->n_input != 2 ||
		    !strcmp(n->input[0], n->input[1]))
			continue;
		for (int k = 0; k < 2 && !(*add_r)[i]; k++)
			if (conv_made(g, n->input[1 - k]) && !conv_made(g, n->input[k]))
				(*add_r)[i] = 1 + k;
	}
	return 0;
}

int qdq_rewrite(Onnx__ModelProto *m, struct qt_node *qn, size_t nq, const struct qt_act *acts,
		enum qt_gran gran, long only, int add_q, char *err, size_t errlen)
{
	Onnx__GraphProto *g = m->graph;
	struct vec nodes = { 0 }, done_act = { 0 }, done_w = { 0 }, done_b = { 0 }, dropped = { 0 };
	struct vec wscales = { 0 }; /* struct wq * per done_w entry */
	struct vec bscale = { 0 };  /* float * (its s_x) per done_b entry */
	int rc = -1, *add_r = NULL;
	if (add_q && residual_adds(g, &add_r)) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *np = g->node[i];
		/* a residual Add reads its residual through the pair already
		 * made for the int8 convs reading the same tensor (a pair that
		 * precedes it): the residual crosses the Add as int8, which the
		 * compiler then reads as int8 in the conv's output path */
		if (add_r && add_r[i]) {
			size_t k = (size_t)add_r[i] - 1;
			char *rin = has_name(&done_act, np->input[k])
					    ? xfmt("%s_DequantizeLinear_Output", np->input[k])
					    : NULL;
			if (has_name(&done_act, np->input[k]) && (!rin || replace_input(np, k, rin))) {
				free(rin);
				fail(err, errlen, "node %s: out of memory", np->name);
				goto out;
			}
			free(rin);
		}
		struct qt_node *q = NULL;
		for (size_t k = 0; k < nq; k++)
			if (qn[k].index == i && (only >= 0 ? (long)k == only : qn[k].why == QT_INT8))
				q = &qn[k];
		if (q && q->act >= 0) {
			const struct qt_act *a = &acts[q->act];
			char *xin = NULL;
			if (has_name(&done_act, a->name)) {
				xin = xfmt("%s_DequantizeLinear_Output", a->name);
			} else if (emit_act(g, &nodes, a, &xin) == 0) {
				if (vec_push(&done_act, strdup(a->name))) {
					free(xin);
					xin = NULL;
				}
			}
			if (!xin || replace_input(np, 0, xin)) {
				free(xin);
				fail(err, errlen, "node %s: out of memory", q->name);
				goto out;
			}
			free(xin);
			/* the weight: once per name */
			struct wq *w = NULL;
			char *win = NULL;
			for (size_t k = 0; k < done_w.n; k++)
				if (!strcmp(done_w.p[k], q->w)) {
					w = wscales.p[k];
					win = xfmt("%s_DequantizeLinear_Output", q->w);
				}
			if (!w) {
				w = calloc(1, sizeof *w);
				const Onnx__TensorProto *t = qdq_find_init(g, q->w);
				if (!w || !t || emit_const(g, &nodes, t, q->axis, gran, NULL, 0, w, &win) ||
				    vec_push(&done_w, strdup(q->w)) || vec_push(&wscales, w) ||
				    vec_push(&dropped, strdup(q->w))) {
					free(w);
					free(win);
					fail(err, errlen, "node %s: weight %s: out of memory or unreadable",
					     q->name, q->w);
					goto out;
				}
			}
			if (!win || replace_input(np, 1, win)) {
				free(win);
				fail(err, errlen, "node %s: out of memory", q->name);
				goto out;
			}
			free(win);
			/* the bias: int32 at s_x * s_w, once per name (a bias shared with a
			 * node of another input scale stays fp32 there) */
			float sx = (float)a->scale;
			int bdone = -1;
			for (size_t k = 0; q->b && k < done_b.n; k++)
				if (!strcmp(done_b.p[k], q->b))
					bdone = (int)k;
			if (q->b && q->bias_ok && (bdone < 0 || *(float *)bscale.p[bdone] == sx)) {
				char *bin = NULL;
				if (bdone >= 0) {
					bin = xfmt("%s_DequantizeLinear_Output", q->b);
				} else {
					float *sp = malloc(sizeof *sp);
					const Onnx__TensorProto *t = qdq_find_init(g, q->b);
					if (sp)
						*sp = sx;
					if (!sp || !t ||
					    emit_const(g, &nodes, t, 0, gran, w, sx, NULL, &bin) ||
					    vec_push(&done_b, strdup(q->b)) || vec_push(&bscale, sp) ||
					    vec_push(&dropped, strdup(q->b))) {
						free(bin);
						fail(err, errlen, "node %s: bias %s: out of memory",
						     q->name, q->b);
						goto out;
					}
				}
				if (!bin || replace_input(np, 2, bin)) {
					free(bin);
					fail(err, errlen, "node %s: out of memory", q->name);
					goto out;
				}
				free(bin);
			}
		}
		if (vec_push(&nodes, np)) {
			fail(err, errlen, "out of memory");
			goto out;
		}
		g->node[i] = NULL; /* now owned by nodes */
	}
	free(g->node);
	g->node = (Onnx__NodeProto **)nodes.p;
	g->n_node = nodes.n;
	nodes.p = NULL;
	nodes.n = 0;
	/* Drop the float weights and biases nothing reads any more (and their
	 * graph inputs, which old exporters list: left alone they would become
	 * inputs the caller must feed). */
	for (size_t d = 0; d < dropped.n; d++) {
		const char *nm = dropped.p[d];
		int used = 0;
		for (size_t i = 0; i < g->n_node && !used; i++)
			for (size_t k = 0; k < g->node[i]->n_input; k++)
				used |= !strcmp(g->node[i]->input[k], nm);
		for (size_t i = 0; i < g->n_output; i++)
			used |= g->output[i]->name && !strcmp(g->output[i]->name, nm);
		if (used)
			continue;
		for (size_t i = 0; i < g->n_initializer; i++)
			if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, nm)) {
				onnx__tensor_proto__free_unpacked(g->initializer[i], NULL);
				memmove(g->initializer + i, g->initializer + i + 1,
					(g->n_initializer - i - 1) * sizeof *g->initializer);
				g->n_initializer--;
				break;
			}
		for (size_t i = 0; i < g->n_input; i++)
			if (g->input[i]->name && !strcmp(g->input[i]->name, nm)) {
				onnx__value_info_proto__free_unpacked(g->input[i], NULL);
				memmove(g->input + i, g->input + i + 1,
					(g->n_input - i - 1) * sizeof *g->input);
				g->n_input--;
				break;
			}
	}
	for (size_t i = 0; i < m->n_opset_import; i++) {
		Onnx__OperatorSetIdProto *o = m->opset_import[i];
		if ((!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx")) && o->version < 13)
			o->version = 13;
	}
	rc = 0;
out:
	if (rc) {
		/* the caller frees the model on error: give every node (the moved
		 * originals, the new ones, the rest) back to the graph so it does */
		for (size_t i = 0; i < g->n_node; i++)
			if (g->node[i] && vec_push(&nodes, g->node[i]) == 0)
				g->node[i] = NULL;
		free(g->node);
		g->node = (Onnx__NodeProto **)nodes.p;
		g->n_node = nodes.n;
		nodes.p = NULL;
	}
	free(nodes.p);
	free(add_r);
	for (size_t k = 0; k < done_act.n; k++)
		free(done_act.p[k]);
	for (size_t k = 0; k < done_w.n; k++) {
		free(done_w.p[k]);
		struct wq *w = wscales.p[k];
		if (w)
			free(w->scale);
		free(w);
	}
	for (size_t k = 0; k < done_b.n; k++) {
		free(done_b.p[k]);
		free(bscale.p[k]);
	}
	for (size_t k = 0; k < dropped.n; k++)
		free(dropped.p[k]);
	free(done_act.p), free(done_w.p), free(wscales.p), free(done_b.p), free(bscale.p);
	free(dropped.p);
	return rc;
}
