/* pass_fuse_gelu.c: the GELU subgraphs torch (1.13) exports for nn.GELU and
 * F.gelu become one Gelu node (ONNX's op, opset 20), lowered as one vector
 * chain (lower_eltwise.c's eltwise_steps):
 *
 *   erf:  Div(x, 1.4142135) or Mul(x, 0.70710678) -> Erf -> Add 1 ->
 *         Mul with x -> Mul 0.5
 *   tanh: x^3 (Pow(x, 3) or x * (x * x)) -> Mul 0.044715 -> Add x ->
 *         Mul 0.7978846 -> Tanh -> Add 1 -> Mul with x -> Mul 0.5
 *
 * The three factors of the last two Muls (x, 0.5, the 1 + erf/tanh sum)
 * may come in any grouping and order; constants are matched to 1e-5
 * relative, either operand order of Add/Mul.  Every intermediate must have
 * the pattern's node as its only reader (and not be a graph output), else
 * the subgraph stays as it is.  Runs after shape inference (constants are
 * folded then), before the element-wise fusion. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

#define MAX_PARTS 12

struct match {
	int dead[MAX_PARTS]; /* the nodes the Gelu replaces, but the last */
	int ndead;
};

static int is_const(const struct cc_graph *g, int t, double want)
{
	if (t < 0 || !g->t[t].data || cc_tensor_numel(&g->t[t]) != 1)
		return 0;
	double v;
	if (g->t[t].dtype == CC_F32)
		v = *(const float *)g->t[t].data;
	else if (g->t[t].dtype == CC_F64)
		v = *(const double *)g->t[t].data;
	else
		return 0;
	return fabs(v - want) <= 1e-5 * fabs(want);
}

/* The live node of type op producing t, read only by node `user` (and not
 * a graph output), or -1; recorded as replaced. */
static int inner(const struct cc_graph *g, int t, const char *op, int user, struct match *m)
{
	if (t < 0)
		return -1;
	int p = g->t[t].producer;
	if (p < 0 || g->n[p].dead || strcmp(g->n[p].op, op) || g->n[p].nout < 1 ||
	    cc_sole_consumer(g, t) != user || g->t[t].is_output || m->ndead >= MAX_PARTS)
		return -1;
	m->dead[m->ndead++] = p;
	return p;
}

/* Node i (binary): is one input the constant want?  Returns the other, or -1. */
static int other_than_const(const struct cc_graph *g, int i, double want)
{
	const struct cc_node *n = &g->n[i];
	if (n->nin != 2)
		return -1;
	for (int k = 0; k < 2; k++)
		if (is_const(g, n->in[k], want))
			return n->in[1 - k];
	return -1;
}

/* x^3 produced for node user: Pow(x, 3), x * (x * x) or (x * x) * x. */
static int is_cube(const struct cc_graph *g, int t, int x, int user, struct match *m)
{
	int mark = m->ndead;
	int p = inner(g, t, "Pow", user, m);
	if (p >= 0)
		return g->n[p].nin == 2 && g->n[p].in[0] == x && is_const(g, g->n[p].in[1], 3.0);
	p = inner(g, t, "Mul", user, m);
	if (p < 0 || g->n[p].nin != 2)
		return 0;
	for (int k = 0; k < 2; k++) {
		if (g->n[p].in[k] != x)
			continue;
		int mk = m->ndead;
		int sq = inner(g, g->n[p].in[1 - k], "Mul", p, m);
		if (sq >= 0 && g->n[sq].nin == 2 && g->n[sq].in[0] == x && g->n[sq].in[1] == x)
			return 1;
		m->ndead = mk;
	}
	m->ndead = mark;
	return 0;
}

/* a = Add(f(y), 1) read by node user, f Erf or Tanh: 1 (erf) or 2 (tanh)
 * when y is the form's argument computed from x, else 0. */
static int is_sum(const struct cc_graph *g, int a, int x, int user, struct match *m)
{
	int add = inner(g, a, "Add", user, m);
	if (add < 0)
		return 0;
	int e = other_than_const(g, add, 1.0);
	int f = inner(g, e, "Erf", add, m);
	if (f >= 0) { /* x / sqrt(2) or x * (1 / sqrt(2)) */
		int d = inner(g, g->n[f].in[0], "Div", f, m);
		if (d >= 0)
			return g->n[d].nin == 2 && g->n[d].in[0] == x &&
			       is_const(g, g->n[d].in[1], 1.4142135623730951);
		d = inner(g, g->n[f].in[0], "Mul", f, m);
		return d >= 0 && other_than_const(g, d, 0.7071067811865476) == x;
	}
	f = inner(g, e, "Tanh", add, m);
	if (f < 0)
		return 0;
	int k = inner(g, g->n[f].in[0], "Mul", f, m); /* sqrt(2/pi) (x + 0.044715 x^3) */
	if (k < 0)
		return 0;
	int s = inner(g, other_than_const(g, k, 0.7978845608028654), "Add", k, m);
	if (s < 0 || g->n[s].nin != 2)
		return 0;
	for (int j = 0; j < 2; j++) {
		if (g->n[s].in[j] != x)
			continue;
		int mark = m->ndead;
		int w = inner(g, g->n[s].in[1 - j], "Mul", s, m);
		if (w >= 0 && is_cube(g, other_than_const(g, w, 0.044715), x, w, m))
			return 2;
		m->ndead = mark;
	}
	return 0;
}

/* Node i, a Mul: the Gelu it ends, with *x its input; 0 if none. */
static int match_gelu(const struct cc_graph *g, int i, int *x, struct match *m)
{
	const struct cc_node *n = &g->n[i];
	if (n->nin != 2 || n->nout < 1)
		return 0;
	/* the three factors: each input, or the inputs of a Mul only i reads */
	int leaf[4], owner[4], nl = 0;
	for (int k = 0; k < 2; k++) {
		int t = n->in[k];
		int p = t >= 0 ? g->t[t].producer : -1;
		if (p >= 0 && !g->n[p].dead && !strcmp(g->n[p].op, "Mul") && g->n[p].nin == 2 &&
		    cc_sole_consumer(g, t) == i && !g->t[t].is_output) {
			leaf[nl] = g->n[p].in[0];
			owner[nl++] = p;
			leaf[nl] = g->n[p].in[1];
			owner[nl++] = p;
		} else {
			leaf[nl] = t;
			owner[nl++] = i;
		}
	}
	if (nl != 3)
		return 0;
	int half = -1;
	for (int k = 0; k < 3; k++)
		if (is_const(g, leaf[k], 0.5))
			half = k;
	if (half < 0)
		return 0;
	for (int k = 0; k < 3; k++) {
		if (k == half)
			continue;
		int s = 3 - half - k; /* the sum's leaf */
		m->ndead = 0;
		if (owner[0] != i || owner[2] != i) /* the inner Mul */
			m->dead[m->ndead++] = owner[0] != i ? owner[0] : owner[2];
		int form = is_sum(g, leaf[s], leaf[k], owner[s], m);
		if (form && leaf[k] >= 0 && !g->t[leaf[k]].data) {
			*x = leaf[k];
			return form;
		}
	}
	return 0;
}

int cc_pass_fuse_gelu(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int nerf = 0, ntanh = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		struct match m = { .ndead = 0 };
		int x, form;
		if (n->dead || strcmp(n->op, "Mul") || !(form = match_gelu(g, i, &x, &m)))
			continue;
		char *op = strdup("Gelu");
		struct cc_attr *at = calloc(1, sizeof *at);
		char *name = strdup("approximate"), *val = strdup(form == 2 ? "tanh" : "none");
		if (!op || !at || !name || !val) {
			free(op);
			free(at);
			free(name);
			free(val);
			snprintf(err, errlen, "fuse_gelu: out of memory");
			return -1;
		}
		for (int k = 0; k < m.ndead; k++)
			g->n[m.dead[k]].dead = 1;
		cc_attrs_free(n);
		free(n->op);
		n->op = op;
		at->name = name;
		at->type = CC_ATTR_STRING;
		at->s = val;
		n->attrs = at;
		n->nattrs = 1;
		n->in[0] = x;
		n->nin = 1;
		if (form == 2)
			ntanh++;
		else
			nerf++;
	}
	cc_log(log, "  fuse_gelu: %d GELU subgraphs fused into Gelu nodes (%d erf, %d tanh)",
	       nerf + ntanh, nerf, ntanh);
	return nerf + ntanh;
}
