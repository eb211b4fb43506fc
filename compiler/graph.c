/* graph.c: the small helpers of the graph IR (see graph.h); the importer and the passes build
 * on these. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "graph.h"

#include <stdlib.h>
#include <string.h>

static void free_attr(struct cc_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->ints);
	free(a->floats);
}

void cc_attrs_free(struct cc_node *n)
{
	for (int a = 0; a < n->nattrs; a++)
		free_attr(&n->attrs[a]);
	free(n->attrs);
	n->attrs = NULL;
	n->nattrs = 0;
}

void cc_node_free(struct cc_node *n)
{
	free(n->name);
	free(n->op);
	free(n->domain);
	free(n->in);
	free(n->out);
	free(n->q_w_scale);
	cc_attrs_free(n);
}

void cc_graph_set_nodes(struct cc_graph *g, struct cc_node *nn, int n)
{
	free(g->n);
	g->n = nn;
	g->nn = n;
	g->capn = n;
	for (int t = 0; t < g->nt; t++)
		g->t[t].producer = -1;
	for (int i = 0; i < g->nn; i++)
		for (int o = 0; o < g->n[i].nout; o++)
			if (g->n[i].out[o] >= 0)
				g->t[g->n[i].out[o]].producer = i;
}

void cc_graph_free(struct cc_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nt; i++) {
		struct cc_tensor *t = &g->t[i];

		free(t->name);
		for (int d = 0; d < CC_MAX_RANK; d++)
			free(t->dim_param[d]);
		free(t->data);
	}
	for (int i = 0; i < g->nn; i++)
		cc_node_free(&g->n[i]);
	free(g->t);
	free(g->n);
	free(g->inputs);
	free(g->outputs);
	free(g->name);
	/* leave an empty graph behind so a second free, or reuse, is harmless */
	memset(g, 0, sizeof *g);
}

int cc_tensor_find(const struct cc_graph *g, const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < g->nt; i++)
		if (g->t[i].name && strcmp(g->t[i].name, name) == 0)
			return i;
	return -1;
}

/* Does not check for an existing tensor of the same name: the caller knows whether it wants a
 * new one.  Pointers into g->t are invalidated when the array grows. */
int cc_tensor_add(struct cc_graph *g, const char *name, enum cc_dtype dt, int rank,
		  const int64_t *dims)
{
	struct cc_tensor *t;

	if (rank > CC_MAX_RANK || rank < -1)
		return -1;
	if (g->nt == g->capt) {
		int cap = g->capt ? 2 * g->capt : 16;
		struct cc_tensor *nt = realloc(g->t, (size_t)cap * sizeof *nt);

		if (!nt)
			return -1;
		g->t = nt;
		g->capt = cap;
	}
	t = &g->t[g->nt];
	memset(t, 0, sizeof *t);
	t->name = strdup(name ? name : "");
	if (!t->name)
		return -1;
	t->dtype = dt;
	t->rank = rank;
	for (int d = 0; d < rank; d++)
		t->dims[d] = dims ? dims[d] : -1;
	t->producer = -1;
	return g->nt++;
}

const struct cc_attr *cc_attr_find(const struct cc_node *n, const char *name)
{
	for (int i = 0; i < n->nattrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

/* Type mismatches give the default: ONNX fixes each attribute's type, so a mismatch is a
 * malformed model that the op's checks should report, not something to convert silently. */
int64_t cc_attr_int(const struct cc_node *n, const char *name, int64_t dflt)
{
	const struct cc_attr *a = cc_attr_find(n, name);

	return a && a->type == CC_ATTR_INT ? a->i : dflt;
}

float cc_attr_float(const struct cc_node *n, const char *name, float dflt)
{
	const struct cc_attr *a = cc_attr_find(n, name);

	return a && a->type == CC_ATTR_FLOAT ? a->f : dflt;
}

size_t cc_dtype_size(enum cc_dtype dt)
{
	switch (dt) {
	case CC_F32: case CC_I32: case CC_U32:
		return 4;
	case CC_F16: case CC_BF16: case CC_I16: case CC_U16:
		return 2;
	case CC_I64: case CC_U64: case CC_F64:
		return 8;
	case CC_I8: case CC_U8: case CC_BOOL:
		return 1;
	default:
		return 0;
	}
}

const char *cc_dtype_name(enum cc_dtype dt)
{
	switch ((int)dt) {
	case CC_UNDEFINED: return "undefined";
	case CC_F32: return "float32";
	case CC_U8: return "uint8";
	case CC_I8: return "int8";
	case CC_U16: return "uint16";
	case CC_I16: return "int16";
	case CC_I32: return "int32";
	case CC_I64: return "int64";
	case CC_STRING: return "string";
	case CC_BOOL: return "bool";
	case CC_F16: return "float16";
	case CC_F64: return "float64";
	case CC_U32: return "uint32";
	case CC_U64: return "uint64";
	/* not in enum cc_dtype, but imported models can carry them on non-constant tensors */
	case 14: return "complex64";
	case 15: return "complex128";
	case CC_BF16: return "bfloat16";
	default: return "unknown";
	}
}

int64_t cc_tensor_numel(const struct cc_tensor *t)
{
	int64_t n = 1;

	if (t->rank < 0)
		return -1;
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] < 0)
			return -1;
		if (t->dims[d] != 0 && n > INT64_MAX / t->dims[d])
			return -1; /* no real tensor is this big: say unknown, not overflow */
		n *= t->dims[d];
	}
	return n;
}
