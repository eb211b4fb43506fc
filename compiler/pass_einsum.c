/* pass_einsum.c: the Einsum forms that are not a batched matrix product
 * (lower_matmul.c does those), written before shape inference as the ops
 * they are made of:
 *   one operand, no letter twice ("ij->ji", "ij->i", "ijk->"):
 *       ReduceSum over the letters the output drops, then Transpose to the
 *       output's order;
 *   two operands with the same letters ("i,i", "ij,ij->i"):
 *       Mul, then the same.
 *   one operand with one letter twice ("ii->i", "...ii->...i"): a diagonal,
 *       Where(the identity's mask over those two axes, x, 0) summed over
 *       the second (a sum of one value and zeros: exact), then as above.
 * An output left implicit is the letters seen once, in alphabetical order.
 * An ellipsis stands for the axes an operand has beyond its letters (its
 * rank must be known: a graph input's); it takes letters no term uses.
 * Other forms are left to the lowering, which refuses them.  The first op keeps the node's name; the
 * others are "<name>/sum", "<name>/transpose". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

struct form {
	char in[CC_MAX_RANK + 1], out[CC_MAX_RANK + 1];
	int mul;                   /* two operands, multiplied first */
	int nred, red[CC_MAX_RANK]; /* axes of in summed away */
	int nperm, perm[CC_MAX_RANK]; /* then this Transpose, 0: none */
	int dp, dq; /* one operand: axis dq repeats axis dp's letter (dq > 0) */
};

/* Replaces "..." in e (in place, into out) by the letters of the axes x has
 * beyond the term's letters: unused capitals from 'Z' down.  Returns -1
 * when it cannot. */
static int expand_ellipsis(const char *e, int xrank, char *out, size_t len)
{
	const char *dots = strstr(e, "...");
	if (!dots) {
		snprintf(out, len, "%s", e);
		return 0;
	}
	int letters = 0;
	for (const char *p = e; *p && *p != ',' && *p != '-'; p++)
		letters += (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
	int extra = xrank - letters;
	char fill[CC_MAX_RANK + 1];
	int nf = 0;
	for (char c = 'Z'; c >= 'A' && nf < extra; c--)
		if (!strchr(e, c))
			fill[nf++] = c;
	if (extra < 0 || nf < extra)
		return -1;
	fill[nf] = 0;
	/* every "..." (input and output) stands for the same axes */
	size_t o = 0;
	for (const char *p = e; *p && o + 1 < len;) {
		if (!strncmp(p, "...", 3)) {
			for (int i = 0; i < nf && o + 1 < len; i++)
				out[o++] = fill[i];
			p += 3;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = 0;
	return 0;
}

/* Parses n's equation into f; 0 when it is one of the forms above. */
static int parse(const struct cc_graph *g, const struct cc_node *n, struct form *f)
{
	const struct cc_attr *a = cc_attr_find(n, "equation");
	if (n->dead || (n->domain && n->domain[0]) || strcmp(n->op, "Einsum") || !a ||
	    a->type != CC_ATTR_STRING || !a->s || n->nin < 1 || n->nin > 2 || n->nout != 1 ||
	    n->in[0] < 0)
		return -1;
	char eq[256];
	if (strlen(a->s) >= sizeof eq - CC_MAX_RANK * 3)
		return -1;
	if (strstr(a->s, "...") && (n->nin != 1 || g->t[n->in[0]].rank < 0))
		return -1;
	if (expand_ellipsis(a->s, g->t[n->in[0]].rank, eq, sizeof eq))
		return -1;
	char t[3][CC_MAX_RANK + 1];
	int len[3] = { 0 }, k = 0, arrow = 0, dp = -1, dq = -1;
	for (const char *p = eq; *p; p++) {
		if (*p == ' ')
			continue;
		if (*p == ',' && k == 0 && !arrow) {
			k = 1;
		} else if (p[0] == '-' && p[1] == '>' && !arrow) {
			arrow = 1;
			k = 2;
			p++;
		} else if (((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
			   len[k] < CC_MAX_RANK) {
			const char *twice = memchr(t[k], *p, (size_t)len[k]);
			if (twice) { /* a diagonal: one, of the one operand */
				if (k != 0 || n->nin != 1 || dq >= 0)
					return -1;
				dp = (int)(twice - t[k]);
				dq = len[k];
			}
			t[k][len[k]++] = *p;
		} else {
			return -1; /* an ellipsis, or something else */
		}
	}
	int nops = n->nin;
	if (nops == 2 && k < 1) /* one term for two operands */
		return -1;
	if (nops == 2 && (len[1] != len[0] || memcmp(t[0], t[1], (size_t)len[0])))
		return -1; /* a contraction of different terms */
	if (nops == 1 && k == 1)
		return -1;
	memset(f, 0, sizeof *f);
	if (dq >= 0) { /* the diagonal's sum takes axis dq away */
		const struct cc_tensor *x = &g->t[n->in[0]];
		if (x->rank != len[0] || x->dims[dp] != x->dims[dq] || x->dtype != CC_F32)
			return -1;
		memmove(t[0] + dq, t[0] + dq + 1, (size_t)(len[0] - dq - 1));
		len[0]--;
		f->dp = dp;
		f->dq = dq;
	}
	memcpy(f->in, t[0], (size_t)len[0]);
	f->mul = nops == 2;
	if (arrow) {
		memcpy(f->out, t[2], (size_t)len[2]);
	} else { /* implicit: letters seen once over all terms, sorted */
		int o = 0;
		for (char c = 'A'; c <= 'z'; c++) {
			int seen = 0;
			for (int q = 0; q < nops; q++)
				seen += memchr(t[q], c, (size_t)len[q]) != NULL;
			if (seen == 1)
				f->out[o++] = c;
		}
	}
	int r = len[0], ro = (int)strlen(f->out);
	for (int i = 0; i < ro; i++)
		if (!memchr(f->in, f->out[i], (size_t)r) ||
		    memchr(f->out + i + 1, f->out[i], (size_t)(ro - i - 1)))
			return -1;
	char kept[CC_MAX_RANK + 1] = "";
	int nk = 0;
	for (int i = 0; i < r; i++) {
		if (memchr(f->out, f->in[i], (size_t)ro))
			kept[nk++] = f->in[i];
		else
			f->red[f->nred++] = i;
	}
	int ident = 1;
	for (int i = 0; i < ro; i++) {
		f->perm[i] = (int)((char *)memchr(kept, f->out[i], (size_t)nk) - kept);
		ident &= f->perm[i] == i;
	}
	f->nperm = ident ? 0 : ro;
	return 0;
}

static int count_ops(const struct form *f)
{
	int c = f->mul + (f->nred > 0) + (f->nperm > 0) + (f->dq > 0 ? 2 : 0);
	return c ? c : 1; /* an Identity */
}

static int set_ints(struct cc_attr *a, const char *name, const int *v, int nv)
{
	a->name = strdup(name);
	a->type = CC_ATTR_INTS;
	a->n = (size_t)nv;
	a->ints = malloc((size_t)(nv ? nv : 1) * sizeof *a->ints);
	if (!a->name || !a->ints)
		return -1;
	for (int i = 0; i < nv; i++)
		a->ints[i] = v[i];
	return 0;
}

/* The ops of n's form into d[0..count_ops). */
static int expand(struct cc_graph *g, const struct cc_node *n, const struct form *f,
		  struct cc_node *d)
{
	int k = 0, cur = n->in[0], y = n->out[0], left = count_ops(f);
	enum cc_dtype dt = g->t[cur].dtype;
	char tname[512];
	if (f->dq > 0) { /* the diagonal: Where(mask, x, 0), summed over dq */
		const struct cc_tensor *x = &g->t[cur];
		int rank = x->rank;
		int64_t md[CC_MAX_RANK], cnt = 1, zero_dims[1] = { 0 };
		for (int i = 0; i < rank; i++) {
			md[i] = i == f->dp || i == f->dq ? x->dims[i] : 1;
			cnt *= md[i];
		}
		int64_t dn = x->dims[f->dp];
		snprintf(tname, sizeof tname, "%s/diagonal_mask", n->name);
		int mask = cc_tensor_add(g, tname, CC_BOOL, rank, md);
		snprintf(tname, sizeof tname, "%s/zero", n->name);
		int zero = mask >= 0 ? cc_tensor_add(g, tname, dt, 0, zero_dims) : -1;
		uint8_t *mv = zero >= 0 ? calloc((size_t)cnt, 1) : NULL;
		float *zv = mv ? calloc(1, sizeof *zv) : NULL;
		if (!zv) {
			free(mv);
			return -1;
		}
		for (int64_t i = 0; i < dn; i++)
			mv[i * dn + i] = 1; /* [.., i, .., i, ..]: the only non-1 dims */
		g->t[mask].data = mv;
		g->t[mask].nbytes = (size_t)cnt;
		g->t[zero].data = zv;
		g->t[zero].nbytes = sizeof *zv;
		snprintf(tname, sizeof tname, "%s/diagonal_only", n->name);
		int w = cc_tensor_add(g, tname, dt, -1, NULL);
		if (w < 0 || cc_node_make(&d[k++], n->name, "/diagonal_only", "Where", mask, cur, w))
			return -1;
		struct cc_node *wn = &d[k - 1];
		int *in3 = realloc(wn->in, 3 * sizeof *in3);
		if (!in3)
			return -1;
		wn->in = in3;
		wn->in[0] = mask;
		wn->in[1] = cur;
		wn->in[2] = zero;
		wn->nin = 3;
		left--;
		int o = y;
		if (--left) {
			snprintf(tname, sizeof tname, "%s/diagonal", n->name);
			if ((o = cc_tensor_add(g, tname, dt, -1, NULL)) < 0)
				return -1;
		}
		struct cc_node *r = &d[k++];
		int ax = f->dq;
		if (cc_node_make(r, n->name, "/diagonal", "ReduceSum", w, -1, o))
			return -1;
		r->attrs = calloc(2, sizeof *r->attrs);
		if (!r->attrs || set_ints(&r->attrs[0], "axes", &ax, 1) ||
		    !(r->attrs[1].name = strdup("keepdims")))
			return -1;
		r->attrs[1].type = CC_ATTR_INT;
		r->attrs[1].i = 0;
		r->nattrs = 2;
		cur = o;
	}
	if (f->mul) {
		int o = y;
		if (--left) {
			snprintf(tname, sizeof tname, "%s/product", n->name);
			if ((o = cc_tensor_add(g, tname, dt, -1, NULL)) < 0)
				return -1;
		}
		if (cc_node_make(&d[k++], n->name, "", "Mul", cur, n->in[1], o))
			return -1;
		cur = o;
	}
	if (f->nred) {
		int o = y;
		if (--left) {
			snprintf(tname, sizeof tname, "%s/sum", n->name);
			if ((o = cc_tensor_add(g, tname, dt, -1, NULL)) < 0)
				return -1;
		}
		struct cc_node *r = &d[k++];
		if (cc_node_make(r, n->name, k == 1 ? "" : "/sum", "ReduceSum", cur, -1, o))
			return -1;
		r->attrs = calloc(2, sizeof *r->attrs);
		if (!r->attrs || set_ints(&r->attrs[0], "axes", f->red, f->nred))
			return -1;
		r->nattrs = 1;
		if (!(r->attrs[1].name = strdup("keepdims")))
			return -1;
		r->attrs[1].type = CC_ATTR_INT;
		r->attrs[1].i = 0;
		r->nattrs = 2;
		cur = o;
	}
	if (f->nperm) {
		struct cc_node *t = &d[k++];
		if (cc_node_make(t, n->name, k == 1 ? "" : "/transpose", "Transpose", cur, -1, y))
			return -1;
		t->attrs = calloc(1, sizeof *t->attrs);
		if (!t->attrs || set_ints(&t->attrs[0], "perm", f->perm, f->nperm))
			return -1;
		t->nattrs = 1;
	}
	if (!k && cc_node_make(&d[k++], n->name, "", "Identity", cur, -1, y))
		return -1;
	return 0;
}

int cc_pass_einsum(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int k = 0, extra = 0;
	struct form f;
	for (int i = 0; i < g->nn; i++)
		if (!parse(g, &g->n[i], &f)) {
			k++;
			extra += count_ops(&f);
		}
	if (!k)
		return 0;
	cc_log(log, "  einsum: %d Einsum as Mul/ReduceSum/Transpose", k);
	struct cc_node *nn = calloc((size_t)(g->nn + extra), sizeof *nn);
	if (!nn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int j = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (parse(g, n, &f)) {
			nn[j++] = *n;
			continue;
		}
		if (expand(g, n, &f, &nn[j])) {
			free(nn); /* what expand made is lost with the compile */
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		j += count_ops(&f);
		n->dead = 1; /* freed with the graph's old array below */
		struct cc_node old = *n;
		cc_node_free(&old);
	}
	cc_graph_set_nodes(g, nn, j); /* the old nodes and the new, in order */
	return k;
}
