/* pass_bn_training.c: BatchNormalization in training mode (opset 14+) of a
 * 4-D x whose channel count is known, written before shape inference as the
 * ops that compute it (the batch's statistics, as ONNX defines them):
 *   m  = ReduceMean(x, axes 0,2,3)           d = x - m
 *   v  = ReduceMean(d * d, axes 0,2,3)       (the population variance)
 *   y  = d / Sqrt(v + epsilon) * S + B       (S, B reshaped to [1,C,1,1])
 *   running_mean = mean * momentum + m * (1 - momentum)   ([C])
 *   running_var  = var * momentum + v * (1 - momentum)
 * Deterministic (nothing is random), so it needs no more than these ops.
 * The nodes are named "<name>/<what>" (the one writing y "<name>/y"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

#define BN_NODES 20

static int eligible(const struct cc_graph *g, const struct cc_node *n)
{
	if (n->dead || (n->domain && n->domain[0]) || strcmp(n->op, "BatchNormalization") ||
	    !cc_attr_int(n, "training_mode", 0) || n->nin != 5 || n->nout < 1 || n->out[0] < 0)
		return 0;
	for (int k = 0; k < 5; k++)
		if (n->in[k] < 0)
			return 0;
	const struct cc_tensor *x = &g->t[n->in[0]];
	return x->rank == 4 && x->dims[1] > 0 && x->dtype == CC_F32;
}

struct bld {
	struct cc_graph *g;
	const struct cc_node *n;
	struct cc_node *d;
	int k, oom;
};

/* A node "<name>/<what>" op(a, b) into a new tensor (or into out >= 0);
 * returns the tensor. */
static int op2(struct bld *b, const char *what, const char *op, int a, int in2, int out)
{
	if (b->oom)
		return -1;
	char name[512];
	snprintf(name, sizeof name, "%s/%s", b->n->name, what);
	if (out < 0 && (out = cc_tensor_add(b->g, name, CC_F32, -1, NULL)) < 0) {
		b->oom = 1;
		return -1;
	}
	if (cc_node_make(&b->d[b->k++], name, "", op, a, in2, out)) {
		b->oom = 1;
		return -1;
	}
	return out;
}

/* The last node made gets attributes axes (0,2,3) and keepdims 1. */
static void reduce_attrs(struct bld *b)
{
	if (b->oom)
		return;
	struct cc_node *d = &b->d[b->k - 1];
	d->attrs = calloc(2, sizeof *d->attrs);
	if (!d->attrs || !(d->attrs[0].name = strdup("axes")) ||
	    !(d->attrs[0].ints = malloc(3 * sizeof *d->attrs[0].ints)) ||
	    !(d->attrs[1].name = strdup("keepdims"))) {
		b->oom = 1;
		return;
	}
	d->nattrs = 2;
	d->attrs[0].type = CC_ATTR_INTS;
	d->attrs[0].n = 3;
	d->attrs[0].ints[0] = 0;
	d->attrs[0].ints[1] = 2;
	d->attrs[0].ints[2] = 3;
	d->attrs[1].type = CC_ATTR_INT;
	d->attrs[1].i = 1;
}

/* A constant "<name>/<what>": float32 scalar v, or (shape) int64 dims. */
static int constant(struct bld *b, const char *what, float v, const int64_t *dims, int rank)
{
	if (b->oom)
		return -1;
	char name[512];
	snprintf(name, sizeof name, "%s/%s", b->n->name, what);
	int64_t r = rank;
	int t = cc_tensor_add(b->g, name, dims ? CC_I64 : CC_F32, dims ? 1 : 0, &r);
	void *p = t >= 0 ? malloc(dims ? (size_t)rank * 8 : 4) : NULL;
	if (!p) {
		b->oom = 1;
		return -1;
	}
	if (dims)
		memcpy(p, dims, (size_t)rank * 8);
	else
		memcpy(p, &v, 4);
	b->g->t[t].data = p;
	b->g->t[t].nbytes = dims ? (size_t)rank * 8 : 4;
	return t;
}

static int expand(struct cc_graph *g, const struct cc_node *n, struct cc_node *d)
{
	struct bld b = { g, n, d, 0, 0 };
	int x = n->in[0], s = n->in[1], bias = n->in[2], mean = n->in[3], var = n->in[4];
	float eps = cc_attr_float(n, "epsilon", 1e-5f), mom = cc_attr_float(n, "momentum", 0.9f);
	int64_t C = g->t[x].dims[1], c4[4] = { 1, C, 1, 1 }, c1[1] = { C };
	int sh4 = constant(&b, "shape_1c11", 0, c4, 4), sh1 = constant(&b, "shape_c", 0, c1, 1);
	int m = op2(&b, "batch_mean", "ReduceMean", x, -1, -1);
	reduce_attrs(&b);
	int dx = op2(&b, "centered", "Sub", x, m, -1);
	int d2 = op2(&b, "squared", "Mul", dx, dx, -1);
	int v = op2(&b, "batch_var", "ReduceMean", d2, -1, -1);
	reduce_attrs(&b);
	int ve = op2(&b, "var_eps", "Add", v, constant(&b, "epsilon", eps, NULL, 0), -1);
	int sd = op2(&b, "std", "Sqrt", ve, -1, -1);
	int nr = op2(&b, "normalized", "Div", dx, sd, -1);
	int s4 = op2(&b, "scale_1c11", "Reshape", s, sh4, -1);
	int b4 = op2(&b, "bias_1c11", "Reshape", bias, sh4, -1);
	int ys = op2(&b, "scaled", "Mul", nr, s4, -1);
	op2(&b, "y", "Add", ys, b4, n->out[0]);
	for (int o = 1; o < 3 && o < n->nout; o++) {
		if (n->out[o] < 0)
			continue;
		const char *w = o == 1 ? "mean" : "var";
		char what[64];
		snprintf(what, sizeof what, "batch_%s_c", w);
		int bc = op2(&b, what, "Reshape", o == 1 ? m : v, sh1, -1);
		snprintf(what, sizeof what, "running_%s_kept", w);
		int kept = op2(&b, what, "Mul", o == 1 ? mean : var,
			       constant(&b, o == 1 ? "momentum_m" : "momentum_v", mom, NULL, 0), -1);
		snprintf(what, sizeof what, "batch_%s_new", w);
		int nw = op2(&b, what, "Mul", bc,
			     constant(&b, o == 1 ? "rest_m" : "rest_v", 1.0f - mom, NULL, 0), -1);
		snprintf(what, sizeof what, "running_%s", w);
		op2(&b, what, "Add", kept, nw, n->out[o]);
	}
	return b.oom ? -1 : b.k;
}

int cc_pass_bn_training(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int k = 0;
	for (int i = 0; i < g->nn; i++)
		k += eligible(g, &g->n[i]);
	if (!k)
		return 0;
	cc_log(log, "  bn_training: %d BatchNormalization in training mode as batch statistics",
	       k);
	struct cc_node *nn = calloc((size_t)(g->nn + k * BN_NODES), sizeof *nn);
	if (!nn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int j = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (!eligible(g, n)) {
			nn[j++] = *n;
			continue;
		}
		int made = expand(g, n, &nn[j]);
		if (made < 0) {
			free(nn);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		j += made;
		cc_node_free(n);
	}
	cc_graph_set_nodes(g, nn, j); /* the old nodes and the new, in order */
	return k;
}
