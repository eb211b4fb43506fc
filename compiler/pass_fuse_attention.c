/* pass_fuse_attention.c: attention's scaling fused into its Softmax.
 *
 * Attention computes softmax(Q K^T / sqrt(d)).  Exporters put the scale
 * either on the scores (HuggingFace: Div(MatMul(Q, K^T), 8)) or on Q
 * before the product (torch's nn.MultiheadAttention: MatMul(Div(Q, 8), K^T)).
 * Either way it is an element-wise pass over a tensor of its own: the
 * scores (B*H*S*S values) or Q.  A product is linear, so both forms equal
 * softmax(s * MatMul(Q, K^T)), and the Softmax kernel multiplies by s as it
 * loads its rows: one vector op in a kernel that runs anyway, instead of a
 * kernel and a round trip through memory.
 *
 * Matched, each intermediate read by nothing else:
 *   Softmax(Mul|Div(X, c))                  -> Softmax(X), scale c or 1/c
 *   Softmax(MatMul(Mul|Div(A, c), B))       -> Softmax(MatMul(A, B)), same
 *   Softmax(MatMul(A, Mul|Div(B, c)))       -> the same
 * with c a constant scalar; the scale is the Softmax node's attribute
 * davinci_scale (lower_norm.c's lower_softmax passes it to the kernel).
 * An attention mask added to the scaled scores, Softmax(S + M) with M one
 * row per batch ([B,1,S] over [B,S,S] scores, or one row for all; not
 * 4-D scores, which the compiler keeps in NC1HWC0), becomes
 * the Softmax's second input: the kernel adds it after the scale, which is
 * the order softmax(s * QK^T + M) asks for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* The scale of a Mul/Div node by a constant scalar, with the index of its
 * other input; 0 when n is not one. */
static int scalar_scale(const struct cc_graph *g, const struct cc_node *n, float *s, int *other)
{
	int mul = !strcmp(n->op, "Mul"), div = !strcmp(n->op, "Div");
	if ((!mul && !div) || n->nin != 2)
		return 0;
	for (int k = 0; k < 2; k++) {
		const struct cc_tensor *c = &g->t[n->in[k]];
		if (!c->data || cc_tensor_numel(c) != 1 || (div && k == 0))
			continue;
		float v;
		if (c->dtype == CC_F32)
			memcpy(&v, c->data, 4);
		else
			continue;
		if (div && v == 0.0f)
			return 0;
		*s = div ? 1.0f / v : v;
		*other = n->in[1 - k];
		return 1;
	}
	return 0;
}

static int set_scale(struct cc_node *n, float scale)
{
	for (int i = 0; i < n->nattrs; i++)
		if (!strcmp(n->attrs[i].name, "davinci_scale")) {
			n->attrs[i].f *= scale;
			return 0;
		}
	struct cc_attr *a = realloc(n->attrs, (size_t)(n->nattrs + 1) * sizeof *a);
	if (!a)
		return -1;
	n->attrs = a;
	memset(&a[n->nattrs], 0, sizeof a[n->nattrs]);
	a[n->nattrs].name = strdup("davinci_scale");
	if (!a[n->nattrs].name)
		return -1;
	a[n->nattrs].type = CC_ATTR_FLOAT;
	a[n->nattrs].f = scale;
	n->nattrs++;
	return 0;
}

/* Which input of Add node a is an attention mask over the other: the same
 * rank, the last axis the other's, every axis between 1 (the mask is the
 * same for every head and query), the first the other's or 1 (one row per
 * batch, or one for all); -1 if neither.  The other is the Add's shape. */
static int mask_operand(const struct cc_graph *g, const struct cc_node *a)
{
	const struct cc_tensor *y = &g->t[a->out[0]];
	for (int k = 0; k < 2; k++) {
		const struct cc_tensor *m = &g->t[a->in[k]], *x = &g->t[a->in[1 - k]];
		/* 4-D scores live in NC1HWC0, whose rows are not the Softmax's */
		if (m->rank != y->rank || x->rank != y->rank || m->rank < 2 || m->rank == 4)
			continue;
		int ok = !memcmp(x->dims, y->dims, (size_t)y->rank * sizeof *y->dims) &&
			 m->dims[m->rank - 1] == y->dims[y->rank - 1] &&
			 (m->dims[0] == y->dims[0] || m->dims[0] == 1);
		for (int d = 1; ok && d + 1 < m->rank; d++)
			ok = m->dims[d] == 1;
		/* a mask as big as the scores is an ordinary Add */
		if (ok && cc_tensor_numel(m) < cc_tensor_numel(y))
			return k;
	}
	return -1;
}

/* The producer of tensor t if t is read only by node `by`, else NULL. */
static struct cc_node *sole_producer(struct cc_graph *g, int t, int by)
{
	int p = g->t[t].producer;
	if (p < 0 || g->n[p].dead || cc_sole_consumer(g, t) != by)
		return NULL;
	return &g->n[p];
}

int cc_pass_fuse_attention(struct cc_graph *g, struct cc_pass_log *log, char *err,
			   size_t errlen)
{
	int fused = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *sm = &g->n[i];
		if (sm->dead || strcmp(sm->op, "Softmax") || sm->nin < 1)
			continue;
		struct cc_node *x = sole_producer(g, sm->in[0], i);
		if (!x)
			continue;
		if (sm->nin == 1 && !strcmp(x->op, "Add") && x->nin == 2) {
			int k = mask_operand(g, x);
			if (k >= 0) { /* Softmax(S + M): M becomes the Softmax's input 1 */
				int *in = realloc(sm->in, 2 * sizeof *in);
				if (!in)
					goto oom;
				sm->in = in;
				sm->in[0] = x->in[1 - k];
				sm->in[1] = x->in[k];
				sm->nin = 2;
				x->dead = 1;
				fused++;
				cc_log(log, "  AttentionSoftmaxFusionPass: mask %s of %s into %s",
				       g->t[sm->in[1]].name, x->name, sm->name);
				if (!(x = sole_producer(g, sm->in[0], i)))
					continue;
			}
		}
		float s;
		int other;
		if (scalar_scale(g, x, &s, &other)) {
			/* Softmax(X * c) */
			if (set_scale(sm, s))
				goto oom;
			sm->in[0] = other;
			x->dead = 1;
			fused++;
			cc_log(log, "  AttentionSoftmaxFusionPass: %s (x %g) into %s", x->name,
			       (double)s, sm->name);
			continue;
		}
		if (strcmp(x->op, "MatMul") || x->nin != 2)
			continue;
		int mm = (int)(x - g->n);
		for (int k = 0; k < 2; k++) {
			struct cc_node *sc = sole_producer(g, x->in[k], mm);
			if (!sc || !scalar_scale(g, sc, &s, &other))
				continue;
			/* the scaled operand must have the shape of its input:
			 * a scalar c never broadcasts it further */
			const struct cc_tensor *a = &g->t[other], *b = &g->t[x->in[k]];
			if (a->rank != b->rank || memcmp(a->dims, b->dims, (size_t)a->rank * sizeof *a->dims))
				continue;
			if (set_scale(sm, s))
				goto oom;
			x->in[k] = other;
			g->t[x->out[0]].altered = 1; /* the product unscaled */
			sc->dead = 1;
			fused++;
			cc_log(log, "  AttentionSoftmaxFusionPass: %s (x %g) moved past %s into %s",
			       sc->name, (double)s, x->name, sm->name);
			break;
		}
	}
	cc_log(log, "  AttentionSoftmaxFusionPass: %d scales and masks fused into Softmax", fused);
	return fused;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}
