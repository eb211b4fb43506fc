/* pass_fuse_layernorm.c: the decomposed LayerNorm that torch exports for
 * nn.LayerNorm (before opset 17) folded back into one LayerNormalization
 * node (opset 17 semantics), which lowers to one fused vector kernel
 * (kern_layernorm.c) instead of ~10 kernels and their HBM round trips:
 *
 *   m = ReduceMean(x, axes)      the last axis or trailing axes, keepdims 1
 *   d = Sub(x, m)
 *   p = Pow(d, 2.0) | Mul(d, d)
 *   v = ReduceMean(p, axes)      the same axes
 *   a = Add(v, eps)              eps a constant scalar (either operand)
 *   s = Sqrt(a)
 *   n = Div(d, s) | Mul(d, Reciprocal(s))
 *   y = Mul(n, gamma)            optional, gamma a constant of C values
 *   z = Add(y, beta)             optional, beta a constant of C values
 *
 * Axes come as the attribute or (opset 18) a constant input.  Every
 * intermediate must be read by the pattern only (not a graph output, no
 * other consumer): otherwise its value would be needed and nothing is
 * fused.  gamma/beta with another consumer of n or y simply end the match
 * there (the node then has no scale or bias; the Mul/Add stay).
 *
 * The ReduceMean m becomes the LayerNormalization node (axis = the first
 * normalized axis, epsilon, inputs x, gamma or -1, beta or -1; one output,
 * the last tensor matched), keeping its place in the graph's order: x exists
 * before it, and whatever reads the result comes after the last node
 * matched, so after m.  Runs after shape inference (ranks and constant
 * scalars are known) and before the element-wise fusion, which would
 * otherwise chain the Sub/Pow/... pieces.
 *
 * Then every LayerNormalization whose input is an Add of two activations
 * read by nothing else (a post-LN transformer's x + sublayer(x)) takes the
 * Add in (fuse_add). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* The live nodes reading t, at most max of them (distinct); -1 when t is a
 * graph output or has more readers. */
static int readers(const struct cc_graph *g, int t, int *who, int max)
{
	if (g->t[t].is_output)
		return -1;
	int k = 0;
	for (int i = 0; i < g->nn; i++) {
		if (g->n[i].dead)
			continue;
		for (int j = 0; j < g->n[i].nin; j++)
			if (g->n[i].in[j] == t) {
				if (k == max)
					return -1;
				who[k++] = i;
				break;
			}
	}
	return k;
}

static int is_op(const struct cc_graph *g, int i, const char *op)
{
	return i >= 0 && !g->n[i].dead && !strcmp(g->n[i].op, op) && g->n[i].nout >= 1 &&
	       (!g->n[i].domain || !*g->n[i].domain || !strcmp(g->n[i].domain, "ai.onnx"));
}

/* A constant float scalar's value. */
static int const_scalar(const struct cc_graph *g, int t, float *v)
{
	if (t < 0)
		return 0;
	const struct cc_tensor *c = &g->t[t];
	if (!c->data || cc_tensor_numel(c) != 1)
		return 0;
	if (c->dtype == CC_F32)
		memcpy(v, c->data, 4);
	else if (c->dtype == CC_F64) {
		double d;
		memcpy(&d, c->data, 8);
		*v = (float)d;
	} else
		return 0;
	return 1;
}

/* The normalized axes of ReduceMean node i over x as the first of the
 * trailing axes it reduces, or -1 (not trailing, keepdims 0, unknown). */
static int mean_axis(const struct cc_graph *g, int i, int x)
{
	const struct cc_node *n = &g->n[i];
	int rank = g->t[x].rank;
	if (rank < 1 || n->in[0] != x || cc_attr_int(n, "keepdims", 1) != 1)
		return -1;
	int64_t v[CC_MAX_RANK];
	int cnt = 0;
	const struct cc_attr *a = cc_attr_find(n, "axes");
	if (a && a->type == CC_ATTR_INTS && a->n <= CC_MAX_RANK) {
		cnt = (int)a->n;
		for (int k = 0; k < cnt; k++)
			v[k] = a->ints[k];
	} else if (n->nin > 1 && n->in[1] >= 0) {
		const struct cc_tensor *at = &g->t[n->in[1]];
		int64_t k = cc_tensor_numel(at);
		if (!at->data || at->dtype != CC_I64 || k < 1 || k > CC_MAX_RANK)
			return -1;
		cnt = (int)k;
		memcpy(v, at->data, (size_t)cnt * 8);
	}
	if (cnt < 1) /* all axes (or none with noop_with_empty_axes): not matched */
		return -1;
	unsigned set = 0;
	for (int k = 0; k < cnt; k++) {
		int64_t ax = v[k] < 0 ? v[k] + rank : v[k];
		if (ax < 0 || ax >= rank)
			return -1;
		set |= 1u << ax;
	}
	int first = rank - cnt;
	/* exactly the trailing cnt axes */
	return set == ((1u << rank) - 1) - ((1u << first) - 1) ? first : -1;
}

/* A constant that broadcasts over x like a vector over the normalized axes
 * (from axis on): C values, no dimension beyond x's own, 1 elsewhere. */
static int param_ok(const struct cc_graph *g, int t, int x, int axis)
{
	const struct cc_tensor *c = &g->t[t], *xt = &g->t[x];
	if (!c->data || (c->dtype != CC_F32 && c->dtype != CC_F16) || c->rank > xt->rank)
		return 0;
	for (int i = 1; i <= c->rank; i++) {
		int xd = xt->rank - i;
		int64_t want = xd >= axis ? xt->dims[xd] : 1;
		if (c->dims[c->rank - i] != want)
			return 0;
	}
	return 1;
}

/* The other operand of a binary node whose operand k is t (either order). */
static int other_operand(const struct cc_node *n, int t)
{
	if (n->nin != 2)
		return -1;
	return n->in[0] == t ? n->in[1] : n->in[1] == t ? n->in[0] : -1;
}

struct ln_match {
	int nodes[12], count;
	int axis, gamma, beta, out;
	float eps;
};

/* Match the pattern from the ReduceMean mi; 1 on a match. */
static int match(const struct cc_graph *g, int mi, struct ln_match *lm)
{
	const struct cc_node *m = &g->n[mi];
	int x = m->in[0], r[3];
	if (x < 0 || g->t[x].data || (g->t[x].dtype != CC_F32 && g->t[x].dtype != CC_F16))
		return 0;
	lm->axis = mean_axis(g, mi, x);
	if (lm->axis < 0)
		return 0;
	lm->count = 0;
	lm->nodes[lm->count++] = mi;
	/* d = x - m */
	if (readers(g, m->out[0], r, 1) != 1 || !is_op(g, r[0], "Sub") ||
	    g->n[r[0]].in[0] != x || g->n[r[0]].in[1] != m->out[0])
		return 0;
	int si = r[0], d = g->n[si].out[0];
	lm->nodes[lm->count++] = si;
	/* d feeds the square and the normalization */
	if (readers(g, d, r, 2) != 2)
		return 0;
	int pi = -1, ni = -1;
	for (int j = 0; j < 2; j++) {
		const struct cc_node *c = &g->n[r[j]];
		float e;
		if (is_op(g, r[j], "Pow") && c->nin == 2 && c->in[0] == d &&
		    const_scalar(g, c->in[1], &e) && e == 2.0f)
			pi = r[j];
		else if (is_op(g, r[j], "Mul") && c->nin == 2 && c->in[0] == d && c->in[1] == d)
			pi = r[j];
		else
			ni = r[j];
	}
	if (pi < 0 || ni < 0)
		return 0;
	lm->nodes[lm->count++] = pi;
	/* v = mean(p) over the same axes */
	int p = g->n[pi].out[0];
	if (readers(g, p, r, 1) != 1 || !is_op(g, r[0], "ReduceMean") ||
	    mean_axis(g, r[0], p) != lm->axis)
		return 0;
	int vi = r[0];
	lm->nodes[lm->count++] = vi;
	/* a = v + eps */
	if (readers(g, g->n[vi].out[0], r, 1) != 1 || !is_op(g, r[0], "Add") ||
	    !const_scalar(g, other_operand(&g->n[r[0]], g->n[vi].out[0]), &lm->eps))
		return 0;
	int ai = r[0];
	lm->nodes[lm->count++] = ai;
	/* s = sqrt(a) */
	if (readers(g, g->n[ai].out[0], r, 1) != 1 || !is_op(g, r[0], "Sqrt"))
		return 0;
	int qi = r[0], s = g->n[qi].out[0];
	lm->nodes[lm->count++] = qi;
	/* n = d / s, or d * (1 / s) */
	const struct cc_node *nn = &g->n[ni];
	if (readers(g, s, r, 1) != 1)
		return 0;
	if (r[0] == ni && is_op(g, ni, "Div") && nn->nin == 2 && nn->in[0] == d && nn->in[1] == s) {
		/* the Div itself */
	} else if (is_op(g, r[0], "Reciprocal")) {
		int rec = g->n[r[0]].out[0];
		lm->nodes[lm->count++] = r[0];
		if (readers(g, rec, r, 1) != 1 || r[0] != ni || !is_op(g, ni, "Mul") ||
		    other_operand(nn, d) != rec)
			return 0;
	} else {
		return 0;
	}
	lm->nodes[lm->count++] = ni;
	lm->out = nn->out[0];
	lm->gamma = lm->beta = -1;
	/* the optional scale and bias: each ends the match when it does not fit */
	for (int step = 0; step < 2; step++) {
		if (readers(g, lm->out, r, 1) != 1)
			break;
		const struct cc_node *c = &g->n[r[0]];
		int v = other_operand(c, lm->out);
		if (v < 0 || !param_ok(g, v, x, lm->axis))
			break;
		if (step == 0 && is_op(g, r[0], "Mul")) {
			lm->gamma = v;
		} else if (is_op(g, r[0], "Add")) {
			lm->beta = v;
			step = 1;
		} else {
			break;
		}
		lm->nodes[lm->count++] = r[0];
		lm->out = c->out[0];
	}
	return 1;
}

static int rewrite(struct cc_graph *g, const struct ln_match *lm)
{
	struct cc_node *n = &g->n[lm->nodes[0]];
	char *op = strdup("LayerNormalization");
	struct cc_attr *at = calloc(2, sizeof *at);
	int *in = malloc(3 * sizeof *in);
	char *an = strdup("axis"), *en = strdup("epsilon");
	if (!op || !at || !in || !an || !en) {
		free(op);
		free(at);
		free(in);
		free(an);
		free(en);
		return -1;
	}
	cc_attrs_free(n);
	at[0] = (struct cc_attr){ .name = an, .type = CC_ATTR_INT, .i = lm->axis, .tensor = -1 };
	at[1] = (struct cc_attr){ .name = en, .type = CC_ATTR_FLOAT, .f = lm->eps, .tensor = -1 };
	n->attrs = at;
	n->nattrs = 2;
	in[0] = n->in[0];
	in[1] = lm->gamma;
	in[2] = lm->beta;
	free(n->in);
	n->in = in;
	n->nin = 3;
	/* the fused ops, for the report */
	n->fused[0] = 0;
	for (int k = 0; k < lm->count; k++) {
		if (k)
			cc_strlcat(n->fused, sizeof n->fused, "+");
		cc_strlcat(n->fused, sizeof n->fused, g->n[lm->nodes[k]].op);
	}
	free(n->op);
	n->op = op;
	for (int k = 1; k < lm->count; k++)
		g->n[lm->nodes[k]].dead = 1;
	n->out[0] = lm->out;
	n->nout = 1;
	g->t[lm->out].producer = lm->nodes[0];
	return 0;
}

/* LayerNorm(a + b), the post-LN transformer's residual: the Add moves into
 * the LayerNorm kernel, which loads both and adds them (rounded to fp16, as
 * the Add kernel would) before its statistics; the sum is never written.
 * Same shapes, both activations, the sum read by nothing else.  The second
 * addend becomes input 3 (node->res_in, as in pass_fuse_residual.c).
 * Returns 1 when fused, 0 when not, -1 out of memory. */
static int fuse_add(struct cc_graph *g, int ln)
{
	struct cc_node *n = &g->n[ln];
	if (n->res_in || n->nin < 1 || n->in[0] < 0)
		return 0;
	int x = n->in[0], p = g->t[x].producer;
	if (p < 0 || g->n[p].dead || strcmp(g->n[p].op, "Add") || g->n[p].nin != 2 ||
	    cc_sole_consumer(g, x) != ln)
		return 0;
	const struct cc_node *a = &g->n[p];
	const struct cc_tensor *y = &g->t[x];
	for (int k = 0; k < 2; k++) {
		const struct cc_tensor *t = &g->t[a->in[k]];
		if (t->data || t->rank != y->rank ||
		    memcmp(t->dims, y->dims, (size_t)y->rank * sizeof *y->dims))
			return 0;
	}
	int *in = realloc(n->in, 4 * sizeof *in);
	if (!in)
		return -1;
	n->in = in;
	for (int k = n->nin; k < 3; k++)
		in[k] = -1; /* omitted Scale / B */
	in[0] = a->in[0];
	in[3] = a->in[1];
	n->nin = 4;
	n->res_in = 3;
	g->n[p].dead = 1;
	char f[sizeof n->fused] = "Add";
	if (n->fused[0]) {
		cc_strlcat(f, sizeof f, "+");
		cc_strlcat(f, sizeof f, n->fused);
	}
	memcpy(n->fused, f, sizeof f);
	return 1;
}

int cc_pass_fuse_layernorm(struct cc_graph *g, struct cc_pass_log *log, char *err,
			   size_t errlen)
{
	int fused = 0, scaled = 0, added = 0;
	for (int i = 0; i < g->nn; i++) {
		if (!is_op(g, i, "ReduceMean"))
			continue;
		struct ln_match lm;
		if (!match(g, i, &lm))
			continue;
		if (rewrite(g, &lm)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		fused++;
		scaled += lm.gamma >= 0 || lm.beta >= 0;
	}
	for (int i = 0; i < g->nn; i++) {
		if (g->n[i].dead || strcmp(g->n[i].op, "LayerNormalization"))
			continue;
		int r = fuse_add(g, i);
		if (r < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		added += r;
	}
	cc_log(log, "  fuse_layernorm: %d decomposed LayerNorm fused into LayerNormalization "
		    "(%d with scale/bias), %d residual Add fused into a LayerNormalization",
	       fused, scaled, added);
	return fused + added;
}
