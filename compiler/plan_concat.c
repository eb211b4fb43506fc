/* plan_concat.c: Concat in place.  Before any node is lowered, decide which
 * tensors live inside a Concat's output: each such input is placed at its
 * channel offset in one buffer, its producer writes it there, and the
 * Concat runs no task and moves no byte (ATC plans concats the same way).
 *
 * Concats that share inputs (DenseNet: layer i concatenates the block's
 * input and layers 1..i-1) or take another concat's output become views of
 * one buffer: the constraints "x lies at channel block o of y" are joined in
 * a union-find with offsets, and a set is accepted when its members agree
 * (every constraint consistent, the tensors no concat makes pairwise
 * disjoint, one member covering the whole extent: the storage).
 *
 * What may be a member (the rest falls back to a copy; the report says
 * which and why): NC1HWC0 (rank 4) concats along the channels whose inputs
 * but the last fill whole 16-channel blocks; tensors computed by a kernel
 * that writes exactly its own blocks (Conv, MaxPool, AveragePool,
 * BatchNormalization, or a Concat of this kind); not graph inputs, outputs
 * or constants.  With one image a member is a dense tensor at an offset, so
 * any kernel reads it.  With several, a member's images are a stride apart
 * (the storage's channel blocks per image), and its producers and readers
 * must take that stride: the cube's convolutions, the pools and
 * BatchNormalization do (cc_conv's x_c1/y_n1, cc_pool's and cc_gen_affine's
 * c1 strides); a set with any other reader stays copied. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "ops.h"

/* A Conv takes a strided x or y on the cube's fp16 path only (the channel
 * slice of cc_conv), without a residual (which would share y's stride). */
static int conv_strided_ok(const struct cc_node *m)
{
	return strcmp(m->op, "Conv") ||
	       (!m->res_in && cc_attr_int(m, "group", 1) == 1 && !(m->q_x_scale > 0));
}


struct uf {
	int *parent;
	int64_t *off; /* channel blocks relative to the parent */
};

static int uf_find(struct uf *u, int x, int64_t *off)
{
	int64_t o = 0;
	int r = x;
	while (u->parent[r] != r) {
		o += u->off[r];
		r = u->parent[r];
	}
	/* path compression: x straight under the root */
	if (x != r) {
		u->parent[x] = r;
		u->off[x] = o;
	}
	*off = o;
	return r;
}

/* x lies at block o of y; 0 when joined (or already so), -1 if the sets
 * disagree. */
static int uf_join(struct uf *u, int x, int y, int64_t o)
{
	int64_t ox, oy;
	int rx = uf_find(u, x, &ox), ry = uf_find(u, y, &oy);
	if (rx == ry)
		return ox == oy + o ? 0 : -1;
	/* pos(x) = pos(rx) + ox = pos(y) + o = pos(ry) + oy + o */
	u->parent[rx] = ry;
	u->off[rx] = oy + o - ox;
	return 0;
}

static int64_t c1_of(const struct cc_tensor *t) { return (t->dims[1] + 15) / 16; }

/* Whether concat n is of the kind that can be in place; why not in *why. */
static int concat_kind_ok(struct cc_ctx *c, const struct cc_node *n, const char **why)
{
	const struct cc_tensor *y = T(c, n->out[0]);
	if (y->rank != 4 || cc_attr_int(n, "axis", 0) % 4 != 1) {
		*why = "not a concat of NC1HWC0 channels";
		return 0;
	}
	for (int k = 0; k < n->nin; k++) {
		const struct cc_tensor *x = T(c, n->in[k]);
		if (x->rank != 4 || cc_tensor_numel(x) <= 0) {
			*why = "an empty input";
			return 0;
		}
		if (k + 1 < n->nin && x->dims[1] % 16) {
			*why = "an input but the last does not fill whole 16-channel blocks";
			return 0;
		}
	}
	return 1;
}

/* Node m reads its input a with images a stride apart (a Concat: one of
 * channel blocks, whose copies take the stride). */
static int strided_reader(struct cc_ctx *c, const struct cc_node *m, int a)
{
	const char *why;
	if (!strcmp(m->op, "Concat"))
		return concat_kind_ok(c, m, &why);
	return cc_op_has(m->op, CC_P_C1_STRIDE) && a == 0 && conv_strided_ok(m);
}

int cc_plan_concat(struct cc_ctx *c)
{
	int nt = c->g.nt;
	c->vplan_n = 0;
	c->vroot = malloc((size_t)(nt + 1) * sizeof *c->vroot);
	c->vc1 = malloc((size_t)(nt + 1) * sizeof *c->vc1);
	c->vwhy = calloc((size_t)nt + 1, sizeof *c->vwhy);
	struct uf u = { malloc((size_t)(nt + 1) * sizeof(int)),
			malloc((size_t)(nt + 1) * sizeof(int64_t)) };
	int *prod = malloc((size_t)(nt + 1) * sizeof *prod);
	int *member = calloc((size_t)nt + 1, sizeof *member);
	int *bad = calloc((size_t)nt + 1, sizeof *bad);
	int *store = malloc((size_t)(nt + 1) * sizeof *store);
	/* the bytes some task writes: a member no concat makes (its producer),
	 * or an input a concat of the set copies (cpy: that input); at most a
	 * span per tensor and per concat input */
	struct span {
		int t, cpy;
		int64_t pos, len;
	} *sp = NULL;
	int nsp = 0, views = -1;
	size_t cap = (size_t)nt + 1;
	for (int i = 0; i < c->g.nn; i++)
		if (!c->g.n[i].dead && !strcmp(c->g.n[i].op, "Concat"))
			cap += (size_t)c->g.n[i].nin;
	sp = malloc(cap * sizeof *sp);
	/* a reader of each tensor that cannot take images a stride apart; a
	 * set's extent */
	int *plain = calloc((size_t)nt + 1, sizeof *plain);
	int64_t *lo = malloc((size_t)(nt + 1) * sizeof *lo), *hi = malloc((size_t)(nt + 1) * sizeof *hi);
	if (!c->vroot || !c->vc1 || !c->vwhy || !u.parent || !u.off || !prod || !member || !bad ||
	    !store || !sp || !plain || !lo || !hi) {
		cc_fail(c, "out of memory");
		goto done;
	}
	for (int i = 0; i < nt; i++) {
		u.parent[i] = i;
		u.off[i] = 0;
		prod[i] = -1;
		c->vroot[i] = -1;
		c->vc1[i] = 0;
		store[i] = -1;
	}
	for (int i = 0; i < c->g.nn; i++)
		if (!c->g.n[i].dead)
			for (int k = 0; k < c->g.n[i].nout; k++)
				if (c->g.n[i].out[k] >= 0)
					prod[c->g.n[i].out[k]] = i;
	int concats = 0, joined = 0;
	/* the constraints of every concat of the right kind */
	for (int i = 0; i < c->g.nn; i++) {
		struct cc_node *n = &c->g.n[i];
		if (n->dead || strcmp(n->op, "Concat") || n->out[0] < 0)
			continue;
		concats++;
		const char *why = NULL;
		if (!concat_kind_ok(c, n, &why))
			continue;
		int y = n->out[0];
		int64_t pos = 0;
		for (int k = 0; k < n->nin; k++) {
			int x = n->in[k];
			const struct cc_tensor *xt = T(c, x);
			int dup = 0;
			for (int j = 0; j < k; j++)
				dup |= n->in[j] == x;
			int p = prod[x];
			const char *w2 = NULL;
			if (!dup && p >= 0 && !xt->data && !xt->is_input && !xt->is_output &&
			    !T(c, y)->is_output && cc_op_has(c->g.n[p].op, CC_P_C1_WRITER) &&
			    (strcmp(c->g.n[p].op, "Concat") || concat_kind_ok(c, &c->g.n[p], &w2)) &&
			    xt->dims[0] == T(c, y)->dims[0] && xt->dims[2] == T(c, y)->dims[2] &&
			    xt->dims[3] == T(c, y)->dims[3] && uf_join(&u, x, y, pos) == 0) {
				member[x] = member[y] = 1;
				joined++;
			} else {
				sp[nsp++] = (struct span){ y, x, pos, c1_of(xt) };
			}
			pos += c1_of(xt);
		}
	}
	for (int i = 0; i < nt; i++)
		if (member[i] && strcmp(c->g.n[prod[i]].op, "Concat")) {
			sp[nsp++] = (struct span){ i, -1, 0, c1_of(T(c, i)) };
		}
	for (int k = 0; k < c->g.nn; k++) {
		const struct cc_node *m = &c->g.n[k];
		for (int a = 0; !m->dead && a < m->nin; a++)
			if (m->in[a] >= 0 && !strided_reader(c, m, a))
				plain[m->in[a]] = 1;
	}
	/* each set: its extent, and its storage (a member covering all of it) */
	for (int i = 0; i < nt; i++) {
		lo[i] = INT64_MAX;
		hi[i] = INT64_MIN;
	}
	for (int i = 0; i < nt; i++) {
		int64_t o;
		int r;
		if (!member[i])
			continue;
		r = uf_find(&u, i, &o);
		lo[r] = o < lo[r] ? o : lo[r];
		hi[r] = o + c1_of(T(c, i)) > hi[r] ? o + c1_of(T(c, i)) : hi[r];
	}
	for (int i = 0; i < nt; i++) {
		int64_t o;
		int r;
		if (!member[i])
			continue;
		r = uf_find(&u, i, &o);
		if (o == lo[r] && o + c1_of(T(c, i)) == hi[r] && store[r] < 0)
			store[r] = i; /* (i ascending: the first such member) */
	}
	for (int i = 0; i < nt; i++) {
		int64_t o;
		int r;
		if (!member[i])
			continue;
		r = uf_find(&u, i, &o);
		if (store[r] < 0) {
			bad[r] = 1;
			c->vwhy[r] = "no one tensor covers the buffer";
			continue;
		}
		/* images a stride apart (a member narrower than the buffer): who
		 * writes and reads it must know */
		const struct cc_tensor *t = T(c, i);
		if (t->dims[0] > 1 && c1_of(t) != c1_of(T(c, store[r]))) {
			if (!cc_op_has(c->g.n[prod[i]].op, CC_P_C1_STRIDE) ||
			    !conv_strided_ok(&c->g.n[prod[i]])) {
				bad[r] = 1;
				c->vwhy[r] = "a producer cannot write images a stride apart";
			}
			if (plain[i]) {
				bad[r] = 1;
				c->vwhy[r] = "a reader cannot read images a stride apart";
			}
		}
	}
	/* the written spans of a set pairwise disjoint, but for one tensor
	 * copied to one place by several concats (same bytes); spans of
	 * concats outside any set do not count (lo, hi reused: absolute span) */
	for (int k = 0; k < nsp; k++) {
		int64_t o;
		if (!member[sp[k].t]) {
			sp[k].t = -1;
			continue;
		}
		int r = uf_find(&u, sp[k].t, &o);
		sp[k].pos += o;
		sp[k].t = r;
	}
	for (int k = 0; k < nsp; k++)
		for (int j = 0; j < k && sp[k].t >= 0; j++) {
			if (sp[j].t != sp[k].t || sp[j].pos >= sp[k].pos + sp[k].len ||
			    sp[k].pos >= sp[j].pos + sp[j].len)
				continue;
			if (sp[j].cpy >= 0 && sp[j].cpy == sp[k].cpy && sp[j].pos == sp[k].pos)
				continue;
			bad[sp[k].t] = 1;
			c->vwhy[sp[k].t] = "two of its tensors would share bytes";
		}
	int sets = 0;
	views = 0;
	for (int i = 0; i < nt; i++) {
		if (!member[i])
			continue;
		int64_t o, os;
		int r = uf_find(&u, i, &o);
		if (bad[r]) {
			c->vwhy[i] = c->vwhy[r];
			continue;
		}
		int s = store[r];
		uf_find(&u, s, &os);
		c->vroot[i] = s;
		c->vc1[i] = o - os;
		views += i != s;
		sets += i == s;
	}
	c->vplan_n = nt;
	int badsets = 0;
	for (int i = 0; i < nt; i++)
		badsets += member[i] && u.parent[i] == i && bad[i];
	cc_log(&c->log, "  concat: %d Concat nodes; %d inputs planned in place, %d tensors as "
			"views of %d buffers (%d sets refused)",
	       concats, joined, views, sets, badsets);
done:
	free(u.parent);
	free(u.off);
	free(prod);
	free(member);
	free(bad);
	free(store);
	free(sp);
	free(plain);
	free(lo);
	free(hi);
	return views;
}

int cc_strided_readers_ok(struct cc_ctx *c, int ti)
{
	if (T(c, ti)->is_output)
		return 0;
	for (int k = 0; k < c->g.nn; k++) {
		const struct cc_node *m = &c->g.n[k];
		for (int a = 0; !m->dead && a < m->nin; a++)
			if (m->in[a] == ti && !strided_reader(c, m, a))
				return 0;
	}
	return 1;
}

const char *cc_concat_why(struct cc_ctx *c, const struct cc_node *n, int k)
{
	const char *why = NULL;
	if (!concat_kind_ok(c, n, &why))
		return why;
	const struct cc_tensor *x = T(c, n->in[k]);
	if (x->data)
		return "a constant";
	if (x->is_input)
		return "a graph input";
	if (x->is_output || T(c, n->out[0])->is_output)
		return "a graph output";
	for (int j = 0; j < k; j++)
		if (n->in[j] == n->in[k])
			return "an input given twice";
	if (n->in[k] < c->vplan_n && c->vwhy[n->in[k]])
		return c->vwhy[n->in[k]];
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *m = &c->g.n[i];
		for (int o = 0; !m->dead && o < m->nout; o++)
			if (m->out[o] == n->in[k] && !cc_op_has(m->op, CC_P_C1_WRITER))
				return "its producer's kernel does not write in place";
	}
	return "its producer did not write it in place";
}
