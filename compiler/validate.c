/* validate.c: the whole graph checked before any pass runs (issue 20).
 *
 * The passes and the lowerings were written for graphs ONNX's checker would
 * accept; a hostile or broken file reached them anyway (an empty input name
 * read g->t[-1] in the activation fusion, a BatchNormalization without its
 * statistics overflowed in the fold, a kernel_shape that disagreed with W
 * made the weight layout read out of bounds).  So the structure every pass
 * relies on is checked once, here, and a pass never sees a graph that
 * breaks it: every input names a value defined before its node (or is an
 * empty optional where the op allows one), every node has its first output,
 * the attributes the window ops read have the counts and ranges their
 * weights imply, and no tensor holds more elements than the SoC's memory.
 * Checks that need inferred shapes (Reshape's element count, sizes made by
 * shape inference) are made where the shapes appear (cc_check_size). */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

/* Inputs per op: at least min, at most max (-1: any number, all required),
 * and the positions that may not be empty (bit k: input k). */
struct op_arity {
	const char *op;
	int min, max;
	unsigned required;
};

static const struct op_arity arity[] = {
	{ "Identity", 1, 1, 1 }, { "Relu", 1, 1, 1 }, { "Sigmoid", 1, 1, 1 },
	{ "Abs", 1, 1, 1 }, { "Exp", 1, 1, 1 }, { "Log", 1, 1, 1 }, { "Sqrt", 1, 1, 1 },
	{ "Neg", 1, 1, 1 }, { "Reciprocal", 1, 1, 1 }, { "HardSigmoid", 1, 1, 1 },
	{ "HardSwish", 1, 1, 1 }, { "LeakyRelu", 1, 1, 1 }, { "Erf", 1, 1, 1 },
	{ "Tanh", 1, 1, 1 }, { "Gelu", 1, 1, 1 }, { "Not", 1, 1, 1 }, { "Softmax", 1, 1, 1 },
	{ "LogSoftmax", 1, 1, 1 }, { "GlobalAveragePool", 1, 1, 1 }, { "Flatten", 1, 1, 1 },
	{ "Cast", 1, 1, 1 }, { "MaxPool", 1, 1, 1 }, { "AveragePool", 1, 1, 1 },
	{ "Transpose", 1, 1, 1 }, { "Dropout", 1, 3, 1 }, { "Clip", 1, 3, 1 },
	{ "Pow", 2, 2, 3 }, { "Add", 2, 2, 3 }, { "Sub", 2, 2, 3 }, { "Mul", 2, 2, 3 },
	{ "Div", 2, 2, 3 }, { "MatMul", 2, 2, 3 }, { "Equal", 2, 2, 3 }, { "Less", 2, 2, 3 },
	{ "LessOrEqual", 2, 2, 3 }, { "Greater", 2, 2, 3 }, { "GreaterOrEqual", 2, 2, 3 },
	{ "And", 2, 2, 3 }, { "Or", 2, 2, 3 }, { "Xor", 2, 2, 3 }, { "Gather", 2, 2, 3 },
	{ "Expand", 2, 2, 3 }, { "Reshape", 2, 2, 3 }, { "Gemm", 2, 3, 3 },
	{ "Conv", 2, 3, 3 }, { "ConvTranspose", 2, 3, 3 }, { "Sum", 1, -1, 0 },
	{ "Mean", 1, -1, 0 }, { "Max", 1, -1, 0 }, { "Min", 1, -1, 0 }, { "Concat", 1, -1, 0 },
	{ "BatchNormalization", 5, 5, 31 }, { "ReduceSum", 1, 2, 1 }, { "ReduceMean", 1, 2, 1 },
	{ "ReduceMax", 1, 2, 1 }, { "ReduceMin", 1, 2, 1 }, { "Resize", 1, 4, 1 },
	{ "Upsample", 1, 2, 1 }, { "Pad", 1, 4, 1 }, { "Slice", 1, 5, 1 }, { "Split", 1, 2, 1 },
	{ "Squeeze", 1, 2, 1 }, { "Unsqueeze", 1, 2, 1 }, { "Where", 3, 3, 7 },
	{ "LayerNormalization", 2, 3, 3 }, { "QuantizeLinear", 2, 3, 3 },
	{ "DequantizeLinear", 2, 3, 3 },
};

static const struct op_arity *arity_of(const struct cc_node *n)
{
	if (n->domain && *n->domain)
		return NULL;
	for (size_t i = 0; i < sizeof arity / sizeof arity[0]; i++)
		if (!strcmp(arity[i].op, n->op))
			return &arity[i];
	return NULL;
}

/* The most elements one tensor may hold: its bytes at fp32 (what a graph
 * input or output is on the host and at the device's edge, the widest form
 * an activation takes) within 1/16 of the SoC's main memory, which must also
 * hold its fp16 form, the tensors it is made from and made into, and the
 * weights (2^29 elements on a 32 GiB SoC, 2^27 on an 8 GiB one: a batch of
 * 128 ResNet-50 images is 2^26.6).  A larger
 * tensor cannot be run on the chip, and the generators' work grows with
 * the elements: sizes from a file must not buy minutes of compile time or
 * overflow the 64-bit products the lowerings compute from dimensions. */
int64_t cc_max_elems(const struct soc_config *cfg)
{
	return (int64_t)cfg->hbm_size_mb * (1 << 20) / 4 / 16;
}

int cc_check_size(struct cc_ctx *c, const struct cc_node *n, int ti)
{
	const struct cc_tensor *t = T(c, ti);
	int64_t e = 1, lim = cc_max_elems(c->cfg);
	char shape[256];
	if (t->rank < 0)
		return 0;
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] < 0) {
			if (!n) /* a value_info's unknown dimension: inference sets it */
				return 0;
			cc_shape_str(t, shape, sizeof shape);
			return NODE_FAIL(c, n, "tensor '%s' gets the negative dimension %lld "
					 "(shape %s)", t->name, (long long)t->dims[d], shape);
		}
		if (__builtin_mul_overflow(e, t->dims[d], &e) || e > lim) {
			cc_shape_str(t, shape, sizeof shape);
			if (n)
				return NODE_FAIL(c, n, "tensor '%s' of shape %s holds more than the "
						 "%lld elements the SoC's %lld MiB of memory can hold",
						 t->name, shape, (long long)lim,
						 (long long)c->cfg->hbm_size_mb);
			return cc_fail(c, "tensor '%s' of shape %s holds more than the %lld "
				       "elements the SoC's %lld MiB of memory can hold", t->name, shape,
				       (long long)lim, (long long)c->cfg->hbm_size_mb);
		}
	}
	return 0;
}

/* An INTS attribute: its count must be want (when want >= 0) and each
 * value at least lo.  Absent is fine (the op's default). */
static int check_ints(struct cc_ctx *c, const struct cc_node *n, const char *name, int want,
		      int64_t lo)
{
	const struct cc_attr *a = cc_attr_find(n, name);
	if (!a)
		return 0;
	if (a->type != CC_ATTR_INTS)
		return NODE_FAIL(c, n, "attribute %s must be a list of integers", name);
	if (want >= 0 && a->n != (size_t)want)
		return NODE_FAIL(c, n, "attribute %s has %zu values; %d expected", name, a->n, want);
	for (size_t i = 0; i < a->n; i++)
		if (a->ints[i] < lo)
			return NODE_FAIL(c, n, "attribute %s[%zu] = %lld is below %lld", name, i,
					 (long long)a->ints[i], (long long)lo);
	return 0;
}

static int check_int(struct cc_ctx *c, const struct cc_node *n, const char *name, int64_t lo)
{
	const struct cc_attr *a = cc_attr_find(n, name);
	if (!a)
		return 0;
	if (a->type != CC_ATTR_INT)
		return NODE_FAIL(c, n, "attribute %s must be an integer", name);
	if (a->i < lo)
		return NODE_FAIL(c, n, "attribute %s = %lld is below %lld", name, (long long)a->i,
				 (long long)lo);
	return 0;
}

static int check_auto_pad(struct cc_ctx *c, const struct cc_node *n)
{
	const struct cc_attr *a = cc_attr_find(n, "auto_pad");
	if (!a)
		return 0;
	if (a->type != CC_ATTR_STRING || !a->s ||
	    (strcmp(a->s, "NOTSET") && strcmp(a->s, "SAME_UPPER") && strcmp(a->s, "SAME_LOWER") &&
	     strcmp(a->s, "VALID")))
		return NODE_FAIL(c, n, "attribute auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER "
				 "or VALID");
	return 0;
}

/* The window of `spatial` axes: kernel_shape, strides, dilations, pads. */
static int check_window(struct cc_ctx *c, const struct cc_node *n, int spatial)
{
	if (check_ints(c, n, "kernel_shape", spatial, 1) ||
	    check_ints(c, n, "strides", spatial, 1) || check_ints(c, n, "dilations", spatial, 1) ||
	    check_ints(c, n, "pads", 2 * spatial, 0) || check_auto_pad(c, n))
		return -1;
	return 0;
}

/* Conv and ConvTranspose: W gives the spatial rank; kernel_shape, when
 * given, must be W's (the weight layout reads W by it). */
static int check_conv(struct cc_ctx *c, const struct cc_node *n)
{
	int transposed = !strcmp(n->op, "ConvTranspose");
	const struct cc_tensor *w = T(c, n->in[1]), *x = T(c, n->in[0]);
	if (check_int(c, n, "group", 1))
		return -1;
	if (w->rank < 0)
		return 0; /* computed weights: the op's inference checks them */
	int spatial = w->rank - 2;
	if (spatial < 1)
		return NODE_FAIL(c, n, "weights '%s' of rank %d: at least 3 expected", w->name,
				 w->rank);
	if (x->rank >= 0 && x->rank != w->rank)
		return NODE_FAIL(c, n, "input '%s' of rank %d and weights '%s' of rank %d", x->name,
				 x->rank, w->name, w->rank);
	if (check_window(c, n, spatial) || check_ints(c, n, "output_padding", spatial, 0))
		return -1;
	const struct cc_attr *ks = cc_attr_find(n, "kernel_shape");
	for (int i = 0; ks && i < spatial; i++)
		if (w->dims[2 + i] >= 0 && ks->ints[i] != w->dims[2 + i])
			return NODE_FAIL(c, n, "kernel_shape[%d] = %lld, but weights '%s' have %lld",
					 i, (long long)ks->ints[i], w->name,
					 (long long)w->dims[2 + i]);
	int64_t group = cc_attr_int(n, "group", 1);
	if (!transposed && w->dims[0] >= 0 && w->dims[0] % group)
		return NODE_FAIL(c, n, "%lld output channels do not split into %lld groups",
				 (long long)w->dims[0], (long long)group);
	if (n->nin > 2 && n->in[2] >= 0 && T(c, n->in[2])->rank >= 0) {
		const struct cc_tensor *b = T(c, n->in[2]);
		int64_t co = transposed ? w->dims[1] * group : w->dims[0];
		if (b->rank != 1 || (co >= 0 && b->dims[0] != co))
			return NODE_FAIL(c, n, "bias '%s' must be 1-D of %lld values", b->name,
					 (long long)co);
	}
	return 0;
}

static int check_pool(struct cc_ctx *c, const struct cc_node *n)
{
	const struct cc_attr *ks = cc_attr_find(n, "kernel_shape");
	if (!ks || ks->type != CC_ATTR_INTS || ks->n < 1)
		return NODE_FAIL(c, n, "attribute kernel_shape is missing");
	return check_window(c, n, (int)ks->n);
}

static int check_perm(struct cc_ctx *c, const struct cc_node *n)
{
	const struct cc_attr *a = cc_attr_find(n, "perm");
	if (!a)
		return 0;
	if (a->type != CC_ATTR_INTS || a->n > CC_MAX_RANK)
		return NODE_FAIL(c, n, "attribute perm must be at most %d integers", CC_MAX_RANK);
	for (size_t i = 0; i < a->n; i++) {
		if (a->ints[i] < 0 || a->ints[i] >= (int64_t)a->n)
			return NODE_FAIL(c, n, "perm[%zu] = %lld is not an axis of %zu", i,
					 (long long)a->ints[i], a->n);
		for (size_t j = 0; j < i; j++)
			if (a->ints[j] == a->ints[i])
				return NODE_FAIL(c, n, "perm names axis %lld twice",
						 (long long)a->ints[i]);
	}
	return 0;
}

static int check_node(struct cc_ctx *c, const struct cc_node *n, const unsigned char *ready)
{
	const struct op_arity *ar = arity_of(n);
	if (ar && (n->nin < ar->min || (ar->max >= 0 && n->nin > ar->max))) {
		if (ar->max < 0)
			return NODE_FAIL(c, n, "%d inputs; at least %d expected", n->nin, ar->min);
		return NODE_FAIL(c, n, "%d inputs; %d to %d expected", n->nin, ar->min, ar->max);
	}
	for (int k = 0; k < n->nin; k++) {
		int ti = n->in[k];
		if (ti < 0) {
			/* unknown ops: their first input is required (every op we
			 * could support has one); the op table refuses them later */
			int req = ar ? (ar->max < 0 || (k < 32 && (ar->required >> k & 1))) : k == 0;
			if (req)
				return NODE_FAIL(c, n, "input %d is empty, but the op requires it", k);
			continue;
		}
		if (!ready[ti])
			return NODE_FAIL(c, n, "input '%s' is neither a graph input, an initializer "
					 "nor the output of an earlier node", T(c, ti)->name);
	}
	if (n->nout < 1 || n->out[0] < 0)
		return NODE_FAIL(c, n, "it has no output");
	if (!strcmp(n->op, "Conv") || !strcmp(n->op, "ConvTranspose"))
		return check_conv(c, n);
	if (!strcmp(n->op, "MaxPool") || !strcmp(n->op, "AveragePool"))
		return check_pool(c, n);
	if (!strcmp(n->op, "Transpose"))
		return check_perm(c, n);
	return 0;
}

int cc_validate_graph(struct cc_ctx *c)
{
	struct cc_graph *g = &c->g;
	int live = 0;
	for (int i = 0; i < g->nn; i++)
		live += !g->n[i].dead;
	if (!live)
		return cc_fail(c, "the graph has no nodes: nothing to compile");
	if (!g->noutputs)
		return cc_fail(c, "the graph has no outputs");
	for (int i = 0; i < g->nt; i++)
		if (cc_check_size(c, NULL, i))
			return -1;
	/* a value is ready once defined: graph inputs and constants at the
	 * start, each node's outputs after it (ONNX's topological order) */
	unsigned char *ready = calloc((size_t)g->nt + 1, 1);
	if (!ready)
		return cc_fail(c, "out of memory");
	for (int i = 0; i < g->nt; i++)
		ready[i] = g->t[i].is_input || g->t[i].data != NULL;
	int rc = 0;
	for (int i = 0; i < g->nn && !rc; i++) {
		const struct cc_node *n = &g->n[i];
		if (n->dead)
			continue;
		rc = check_node(c, n, ready);
		for (int k = 0; !rc && k < n->nout; k++)
			if (n->out[k] >= 0)
				ready[n->out[k]] = 1;
	}
	for (int i = 0; i < g->noutputs && !rc; i++)
		if (!ready[g->outputs[i]])
			rc = cc_fail(c, "output '%s' is not computed by any node",
				     T(c, g->outputs[i])->name);
	free(ready);
	return rc;
}
