/* pass_runtime_params.c: float parameters given as run-time tensors (graph
 * inputs, or computed), which the kernels of these ops take only as
 * constants, written before shape inference as the broadcasting
 * element-wise ops that read them on the device:
 *   Clip(x, lo, hi)               = Min(Max(x, lo), hi)   (a constant bound
 *                                   stays Clip's)
 *   Pad(x, pads, v)   (constant)  = Pad(x - v, pads) + v  (one fp16
 *                                   rounding of x - v: within fp16's
 *                                   tolerance, not exact)
 *   LayerNormalization(x, S, B)   = LayerNormalization(x, 1, 0) * S + B
 *                                   (only Y: Mean and InvStdDev do not
 *                                   depend on S and B)
 *   DequantizeLinear(x, s, zp)    = DequantizeLinear(x, 1, zp) * s
 *   QuantizeLinear(x, s, zp)      = QuantizeLinear(x / s, 1, zp)  (x / s in
 *                                   fp16 before the rounding)
 *   QuantizeLinear(x, s, zp) per axis (s of rank 1, at most Q_AXIS_MAX
 *   channels, zp a constant): per channel c, QuantizeLinear(Slice(x, c) /
 *   s[c], 1, zp[c]), the channels concatenated (per-axis quantization is
 *   per-tensor quantization of each slice)
 *   DequantizeLinear(x, s, zp) per axis (s of rank 1, zp a constant)
 *                                 = (Cast(x) - zp') * Reshape(s)  with zp'
 *                                   a float constant, both shaped to
 *                                   broadcast along the axis
 * A run-time parameter of lower rank broadcast onto a 4-D activation is laid
 * out as 4-D by the broadcast's lowering (cc_bcast_nd).
 * The rewritten node keeps its name (and its attributes, but where it
 * becomes another op); the new ones are named after it ("<name>/max_bound",
 * "<name>/scale", ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "passes.h"

/* Input k of n is present and not a constant. */
static int run_time(const struct cc_graph *g, const struct cc_node *n, int k)
{
	return k < n->nin && n->in[k] >= 0 && !g->t[n->in[k]].data;
}

static int float_param(const struct cc_graph *g, const struct cc_node *n, int k)
{
	return run_time(g, n, k) &&
	       (g->t[n->in[k]].dtype == CC_F32 || g->t[n->in[k]].dtype == CC_F16);
}

#define Q_AXIS_MAX 8 /* channels a per-axis QuantizeLinear is split into */

/* A Q/DQ per axis whose scale is a run-time tensor of rank 1 and whose zero
 * point (if any) is an 8-bit constant, its x of a type quant accepts
 * (DequantizeLinear: 8-bit integers; QuantizeLinear: float, at most
 * Q_AXIS_MAX channels): its axis, else -1. */
static int per_axis(const struct cc_graph *g, const struct cc_node *n, int quant)
{
	if (!float_param(g, n, 1) || g->t[n->in[1]].rank != 1)
		return -1;
	const struct cc_tensor *x = &g->t[n->in[0]], *s = &g->t[n->in[1]];
	int64_t axis = cc_attr_int(n, "axis", 1);
	int xok = quant ? x->dtype == CC_F32 || x->dtype == CC_F16
			: x->dtype == CC_U8 || x->dtype == CC_I8;
	if (x->rank < 1 || !xok)
		return -1;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank || s->dims[0] != x->dims[axis] ||
	    (quant && (s->dims[0] < 1 || s->dims[0] > Q_AXIS_MAX)))
		return -1;
	if (n->nin > 2 && n->in[2] >= 0) {
		const struct cc_tensor *z = &g->t[n->in[2]];
		if (!z->data || (z->dtype != CC_U8 && z->dtype != CC_I8) ||
		    cc_tensor_numel(z) != s->dims[0] || z->nbytes < (size_t)s->dims[0])
			return -1;
	}
	return (int)axis;
}

static int dq_axis(const struct cc_graph *g, const struct cc_node *n) { return per_axis(g, n, 0); }
static int q_axis(const struct cc_graph *g, const struct cc_node *n) { return per_axis(g, n, 1); }

/* How many nodes the rewrite of n adds, -1 when n is left alone. */
static int extra_of(const struct cc_graph *g, const struct cc_node *n)
{
	if (n->dead || (n->domain && n->domain[0]) || n->nin < 1 || n->in[0] < 0 || n->nout < 1 ||
	    n->out[0] < 0)
		return -1;
	if (!strcmp(n->op, "Clip")) {
		int lo = float_param(g, n, 1), hi = float_param(g, n, 2);
		int kept = (n->nin > 1 && n->in[1] >= 0 && !lo) || (n->nin > 2 && n->in[2] >= 0 && !hi);
		return !lo && !hi ? -1 : kept || (lo && hi) ? 1 : 0;
	}
	if (!strcmp(n->op, "Pad")) {
		const struct cc_attr *m = cc_attr_find(n, "mode");
		int constant = !m || !m->s || !strcmp(m->s, "constant");
		return float_param(g, n, 2) && constant ? 2 : -1;
	}
	if (!strcmp(n->op, "LayerNormalization")) {
		int s = float_param(g, n, 1), b = float_param(g, n, 2);
		/* ones of S's shape stand in for it: the shape must be known */
		if ((!s && !b) || (s && g->t[n->in[1]].rank < 0))
			return -1;
		int bb = b || (s && n->nin > 2 && n->in[2] >= 0);
		return s + bb;
	}
	if (!strcmp(n->op, "DequantizeLinear") && dq_axis(g, n) >= 0)
		return 2 + (n->nin > 2 && n->in[2] >= 0);
	if (!strcmp(n->op, "QuantizeLinear") && q_axis(g, n) >= 0)
		return 5 * (int)g->t[n->in[1]].dims[0];
	if (cc_op_has(n->op, CC_P_QLINEAR))
		return float_param(g, n, 1) && g->t[n->in[1]].rank == 0
			       ? 1
			       : -1;
	return -1;
}



/* A new tensor "<node>/<what>" of dtype dt, shape unknown. */
static int new_tensor(struct cc_graph *g, const struct cc_node *n, const char *what,
		      enum cc_dtype dt)
{
	char name[512];
	snprintf(name, sizeof name, "%s/%s", n->name, what);
	return cc_tensor_add(g, name, dt, -1, NULL);
}

/* A float32 constant "<node>/<what>" of the given shape, every value v. */
static int new_const(struct cc_graph *g, const struct cc_node *n, const char *what, int rank,
		     const int64_t *dims, float v)
{
	char name[512];
	snprintf(name, sizeof name, "%s/%s", n->name, what);
	int ti = cc_tensor_add(g, name, CC_F32, rank, dims);
	if (ti < 0)
		return -1;
	int64_t cnt = 1;
	for (int i = 0; i < rank; i++)
		cnt *= dims[i];
	float *p = malloc((size_t)(cnt ? cnt : 1) * sizeof *p);
	if (!p)
		return -1;
	for (int64_t i = 0; i < cnt; i++)
		p[i] = v;
	g->t[ti].data = p;
	g->t[ti].nbytes = (size_t)cnt * sizeof *p;
	return ti;
}

/* DequantizeLinear per axis: Cast and Sub (and the scale's Reshape) into
 * pre, n itself becomes the Mul. */
static int dq_per_axis(struct cc_graph *g, struct cc_node *n, struct cc_node *pre, int *npre)
{
	int x = n->in[0], s = n->in[1], axis = dq_axis(g, n), rank = g->t[x].rank;
	int64_t C = g->t[s].dims[0], bd[CC_MAX_RANK];
	for (int i = 0; i < rank; i++)
		bd[i] = i == axis ? C : 1;
	int xf = new_tensor(g, n, "float", CC_F32);
	if (xf < 0 || cc_node_make(&pre[*npre], n->name, "/float", "Cast", x, -1, xf))
		return -1;
	struct cc_node *cast = &pre[(*npre)++];
	cast->nin = 1;
	cast->attrs = calloc(1, sizeof *cast->attrs);
	if (!cast->attrs || !(cast->attrs[0].name = strdup("to")))
		return -1;
	cast->attrs[0].type = CC_ATTR_INT;
	cast->attrs[0].i = CC_F32;
	cast->nattrs = 1;
	int cur = xf;
	if (n->nin > 2 && n->in[2] >= 0) {
		const struct cc_tensor *z = &g->t[n->in[2]];
		int zdt = z->dtype;
		const void *zd = z->data;
		int zf = new_const(g, n, "zero_point", rank, bd, 0.0f);
		int xs = new_tensor(g, n, "centered", CC_F32);
		if (zf < 0 || xs < 0)
			return -1;
		float *v = g->t[zf].data;
		for (int64_t i = 0; i < C; i++)
			v[i] = zdt == CC_U8 ? ((const uint8_t *)zd)[i] : ((const int8_t *)zd)[i];
		if (cc_node_make(&pre[(*npre)++], n->name, "/centered", "Sub", xf, zf, xs))
			return -1;
		cur = xs;
	}
	char name[512];
	int64_t r64 = rank;
	snprintf(name, sizeof name, "%s/scale_shape", n->name);
	int shape = cc_tensor_add(g, name, CC_I64, 1, &r64);
	int64_t *sv = shape >= 0 ? malloc((size_t)rank * sizeof *sv) : NULL;
	if (!sv)
		return -1;
	memcpy(sv, bd, (size_t)rank * sizeof *sv);
	g->t[shape].data = sv;
	g->t[shape].nbytes = (size_t)rank * sizeof *sv;
	int s2 = new_tensor(g, n, "scale_shaped", g->t[s].dtype);
	if (s2 < 0 || cc_node_make(&pre[(*npre)++], n->name, "/scale_shaped", "Reshape", s, shape, s2))
		return -1;
	/* n becomes the Mul: its attributes (axis) mean nothing to it */
	char *op = strdup("Mul");
	if (!op)
		return -1;
	free(n->op);
	n->op = op;
	n->nin = 2;
	n->in[0] = cur;
	n->in[1] = s2;
	cc_attrs_free(n);
	return 0;
}

/* An int64 constant [v] "<node>/<what>". */
static int int1(struct cc_graph *g, const struct cc_node *n, const char *what, int64_t v)
{
	char name[512];
	int64_t one = 1;
	snprintf(name, sizeof name, "%s/%s", n->name, what);
	int t = cc_tensor_add(g, name, CC_I64, 1, &one);
	int64_t *p = t >= 0 ? malloc(sizeof *p) : NULL;
	if (!p)
		return -1;
	*p = v;
	g->t[t].data = p;
	g->t[t].nbytes = sizeof *p;
	return t;
}

/* A Slice node of input a, [c, c + 1) on axis, into a new tensor. */
static int slice1(struct cc_graph *g, struct cc_node *n, const char *what, int a, int64_t c,
		  int axis, struct cc_node *d)
{
	char w[64];
	snprintf(w, sizeof w, "%.30s_start", what);
	int st = int1(g, n, w, c);
	snprintf(w, sizeof w, "%.30s_end", what);
	int en = st >= 0 ? int1(g, n, w, c + 1) : -1;
	snprintf(w, sizeof w, "%.30s_axis", what);
	int ax = en >= 0 ? int1(g, n, w, axis) : -1;
	int o = ax >= 0 ? new_tensor(g, n, what, g->t[a].dtype) : -1;
	snprintf(w, sizeof w, "/%.30s", what);
	if (o < 0 || cc_node_make(d, n->name, w, "Slice", a, st, o))
		return -1;
	int *in = realloc(d->in, 4 * sizeof *in);
	if (!in)
		return -1;
	d->in = in;
	d->in[2] = en;
	d->in[3] = ax;
	d->nin = 4;
	return o;
}

/* QuantizeLinear per axis: per channel Slice, Slice of the scale, its
 * Reshape, Div and QuantizeLinear into pre (n itself is the last channel's
 * QuantizeLinear), the Concat into post. */
static int q_per_axis(struct cc_graph *g, struct cc_node *n, struct cc_node *pre, int *npre,
		      struct cc_node *post, int *npost)
{
	int x = n->in[0], s = n->in[1], y = n->out[0], axis = q_axis(g, n), rank = g->t[x].rank;
	int64_t C = g->t[s].dims[0], ones[CC_MAX_RANK], r64 = rank;
	const struct cc_tensor *z = n->nin > 2 && n->in[2] >= 0 ? &g->t[n->in[2]] : NULL;
	enum cc_dtype zdt = z ? z->dtype : CC_U8;
	uint8_t zb[Q_AXIS_MAX] = { 0 };
	if (z)
		memcpy(zb, z->data, (size_t)C);
	for (int i = 0; i < rank; i++)
		ones[i] = 1;
	char name[512], w[64];
	snprintf(name, sizeof name, "%s/scale_shape", n->name);
	int shape = cc_tensor_add(g, name, CC_I64, 1, &r64);
	int64_t *sv = shape >= 0 ? malloc((size_t)rank * sizeof *sv) : NULL;
	int one = sv ? new_const(g, n, "unit_scale", 0, NULL, 1.0f) : -1;
	if (one < 0) {
		free(sv);
		return -1;
	}
	memcpy(sv, ones, (size_t)rank * sizeof *sv);
	g->t[shape].data = sv;
	g->t[shape].nbytes = (size_t)rank * sizeof *sv;
	int parts[Q_AXIS_MAX];
	for (int64_t c = 0; c < C; c++) {
		snprintf(w, sizeof w, "x%lld", (long long)c);
		int xc = slice1(g, n, w, x, c, axis, &pre[(*npre)++]);
		snprintf(w, sizeof w, "s%lld", (long long)c);
		int sc = xc >= 0 ? slice1(g, n, w, s, c, 0, &pre[(*npre)++]) : -1;
		snprintf(w, sizeof w, "s%lld_shaped", (long long)c);
		int s4 = sc >= 0 ? new_tensor(g, n, w, g->t[s].dtype) : -1;
		char w2[64];
		snprintf(w2, sizeof w2, "/%.50s", w);
		if (s4 < 0 || cc_node_make(&pre[(*npre)++], n->name, w2, "Reshape", sc, shape, s4))
			return -1;
		snprintf(w, sizeof w, "x%lld_divided", (long long)c);
		int q = new_tensor(g, n, w, g->t[x].dtype);
		snprintf(w2, sizeof w2, "/%.50s", w);
		if (q < 0 || cc_node_make(&pre[(*npre)++], n->name, w2, "Div", xc, s4, q))
			return -1;
		snprintf(w, sizeof w, "zero_point%lld", (long long)c);
		snprintf(name, sizeof name, "%s/%s", n->name, w);
		int zc = cc_tensor_add(g, name, zdt, 0, ones);
		uint8_t *zv = zc >= 0 ? malloc(1) : NULL;
		if (!zv)
			return -1;
		*zv = zb[c];
		g->t[zc].data = zv;
		g->t[zc].nbytes = 1;
		snprintf(w, sizeof w, "q%lld", (long long)c);
		if ((parts[c] = new_tensor(g, n, w, zdt)) < 0)
			return -1;
		if (c < C - 1) {
			snprintf(w2, sizeof w2, "/%.50s", w);
			struct cc_node *qn = &pre[(*npre)++];
			if (cc_node_make(qn, n->name, w2, "QuantizeLinear", q, one, parts[c]))
				return -1;
			int *in = realloc(qn->in, 3 * sizeof *in);
			if (!in)
				return -1;
			qn->in = in;
			qn->in[2] = zc;
			qn->nin = 3;
		} else { /* n is the last channel's, per tensor: no axis */
			n->in[0] = q;
			n->in[1] = one;
			if (n->nin < 3) {
				int *in = realloc(n->in, 3 * sizeof *in);
				if (!in)
					return -1;
				n->in = in;
				n->nin = 3;
			}
			n->in[2] = zc;
			n->out[0] = parts[c];
			for (int a = 0; a < n->nattrs; a++)
				if (!strcmp(n->attrs[a].name, "axis"))
					n->attrs[a].i = 1; /* ignored per tensor */
		}
	}
	struct cc_node *cn = &post[(*npost)++];
	if (cc_node_make(cn, n->name, "/concat", "Concat", parts[0], -1, y))
		return -1;
	int *in = realloc(cn->in, (size_t)C * sizeof *in);
	cn->attrs = calloc(1, sizeof *cn->attrs);
	if (!in || !cn->attrs || !(cn->attrs[0].name = strdup("axis")))
		return -1;
	cn->in = in;
	for (int64_t c = 0; c < C; c++)
		cn->in[c] = parts[c];
	cn->nin = (int)C;
	cn->attrs[0].type = CC_ATTR_INT;
	cn->attrs[0].i = axis;
	cn->nattrs = 1;
	return 0;
}

/* Rewrite n into pre[0..*npre), n itself, post[0..*npost). */
static int rewrite(struct cc_graph *g, struct cc_node *n, struct cc_node *pre, int *npre,
		   struct cc_node *post, int *npost)
{
	int x = n->in[0], y = n->out[0];
	enum cc_dtype xt = g->t[x].dtype;
	*npre = *npost = 0;
	if (!strcmp(n->op, "Clip")) {
		int lo = float_param(g, n, 1) ? n->in[1] : -1;
		int hi = float_param(g, n, 2) ? n->in[2] : -1;
		int keep = (n->nin > 1 && n->in[1] >= 0 && lo < 0) ||
			   (n->nin > 2 && n->in[2] >= 0 && hi < 0);
		for (int k = 1; k < 3 && k < n->nin; k++)
			if (n->in[k] >= 0 && (n->in[k] == lo || n->in[k] == hi))
				n->in[k] = -1;
		if (keep) { /* Clip keeps its constant bound; the lower bound first
			     * (min(max(x, lo), hi) is hi when lo > hi) */
			int mid = new_tensor(g, n, "const_bound", xt);
			if (mid < 0)
				return -1;
			if (lo >= 0) { /* Max(x, lo), then Clip to the constant hi */
				n->in[0] = mid;
				return cc_node_make(&pre[(*npre)++], n->name, "/min_bound", "Max", x, lo,
						mid);
			}
			n->out[0] = mid; /* Clip to the constant lo, then Min(., hi) */
			return cc_node_make(&post[(*npost)++], n->name, "/max_bound", "Min", mid, hi, y);
		}
		/* every bound a run-time tensor: n becomes the Max (or Min) */
		char *op = strdup(lo >= 0 ? "Max" : "Min");
		if (!op)
			return -1;
		free(n->op);
		n->op = op;
		n->nin = 2;
		n->in[1] = lo >= 0 ? lo : hi;
		if (lo >= 0 && hi >= 0) {
			int mid = new_tensor(g, n, "min_bound", xt);
			if (mid < 0)
				return -1;
			n->out[0] = mid;
			return cc_node_make(&post[(*npost)++], n->name, "/max_bound", "Min", mid, hi, y);
		}
		return 0;
	}
	if (!strcmp(n->op, "Pad")) {
		int v = n->in[2], sub = new_tensor(g, n, "minus_value", xt), pad = new_tensor(g, n, "padded", xt);
		if (v < 0 || sub < 0 || pad < 0)
			return -1;
		if (cc_node_make(&pre[(*npre)++], n->name, "/minus_value", "Sub", x, v, sub))
			return -1;
		n->in[0] = sub;
		n->in[2] = -1;
		n->out[0] = pad;
		return cc_node_make(&post[(*npost)++], n->name, "/plus_value", "Add", pad, v, y);
	}
	if (!strcmp(n->op, "LayerNormalization")) {
		int s = float_param(g, n, 1) ? n->in[1] : -1;
		int b = n->nin > 2 && n->in[2] >= 0 && (s >= 0 || float_param(g, n, 2)) ? n->in[2]
											 : -1;
		int cur = new_tensor(g, n, "normalized", xt);
		if (cur < 0)
			return -1;
		if (s >= 0) {
			int64_t dims[CC_MAX_RANK];
			int rank = g->t[s].rank;
			memcpy(dims, g->t[s].dims, sizeof dims);
			int ones = new_const(g, n, "ones", rank, dims, 1.0f);
			if (ones < 0)
				return -1;
			n->in[1] = ones;
		}
		if (b >= 0)
			n->in[2] = -1;
		n->out[0] = cur;
		if (s >= 0) {
			int next = b >= 0 ? new_tensor(g, n, "scaled", xt) : y;
			if (next < 0 ||
			    cc_node_make(&post[(*npost)++], n->name, "/scale", "Mul", cur, s, next))
				return -1;
			cur = next;
		}
		if (b >= 0)
			return cc_node_make(&post[(*npost)++], n->name, "/bias", "Add", cur, b, y);
		return 0;
	}
	if (!strcmp(n->op, "DequantizeLinear") && dq_axis(g, n) >= 0)
		return dq_per_axis(g, n, pre, npre);
	if (!strcmp(n->op, "QuantizeLinear") && q_axis(g, n) >= 0)
		return q_per_axis(g, n, pre, npre, post, npost);
	/* QuantizeLinear, DequantizeLinear: scale 1 in the node, s outside */
	int s = n->in[1], one = new_const(g, n, "unit_scale", 0, NULL, 1.0f);
	if (one < 0)
		return -1;
	n->in[1] = one;
	if (!strcmp(n->op, "DequantizeLinear")) {
		int mid = new_tensor(g, n, "unscaled", CC_F32);
		if (mid < 0)
			return -1;
		n->out[0] = mid;
		return cc_node_make(&post[(*npost)++], n->name, "/scale", "Mul", mid, s, y);
	}
	int q = new_tensor(g, n, "divided", xt);
	if (q < 0)
		return -1;
	n->in[0] = q;
	return cc_node_make(&pre[(*npre)++], n->name, "/scale", "Div", x, s, q);
}

int cc_pass_runtime_params(struct cc_graph *g, struct cc_pass_log *log, char *err,
			   size_t errlen)
{
	int k = 0, extra = 0;
	for (int i = 0; i < g->nn; i++) {
		int e = extra_of(g, &g->n[i]);
		k += e >= 0;
		extra += e > 0 ? e : 0;
	}
	if (!k)
		return 0;
	cc_log(log, "  runtime_params: %d Clip/Pad/LayerNormalization/QuantizeLinear/"
		    "DequantizeLinear with run-time float parameters into element-wise ops", k);
	struct cc_node *nn = calloc((size_t)(g->nn + extra), sizeof *nn);
	if (!nn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int j = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (extra_of(g, n) < 0) {
			nn[j++] = *n;
			continue;
		}
		struct cc_node pre[5 * Q_AXIS_MAX], post[4];
		int npre = 0, npost = 0;
		memset(pre, 0, sizeof pre);
		memset(post, 0, sizeof post);
		if (rewrite(g, n, pre, &npre, post, &npost)) {
			for (int q = 0; q < npre; q++)
				cc_node_free(&pre[q]);
			for (int q = 0; q < npost; q++)
				cc_node_free(&post[q]);
			free(nn); /* the nodes moved into nn stay owned by g->n */
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		for (int q = 0; q < npre; q++)
			nn[j++] = pre[q];
		nn[j++] = *n;
		for (int q = 0; q < npost; q++)
			nn[j++] = post[q];
	}
	cc_graph_set_nodes(g, nn, j); /* the old nodes and the new, in order */
	return k;
}
