/* pass_dce.c: Identity elimination and dead-code elimination.
 * An Identity (or an all-zero Pad) whose output is not a graph output forwards:
 * its consumers read the input instead.  Then every node none of whose
 * outputs is used (by a live node or as a graph output) dies, repeatedly. */
#include <string.h>

#include "passes.h"

/* A constant-mode Pad whose pads are all zero (exporters emit them) copies. */
static int zero_pad(const struct cc_graph *g, const struct cc_node *n)
{
	if (strcmp(n->op, "Pad"))
		return 0;
	const struct cc_attr *mode = cc_attr_find(n, "mode");
	if (mode && mode->s && strcmp(mode->s, "constant"))
		return 0;
	if (n->nin < 2 || n->in[1] < 0) { /* opset < 11: pads is an attribute */
		const struct cc_attr *a = cc_attr_find(n, "pads");
		for (size_t i = 0; a && i < a->n; i++)
			if (a->ints[i])
				return 0;
		return a != NULL;
	}
	const struct cc_tensor *p = &g->t[n->in[1]];
	if (!p->data || p->dtype != CC_I64)
		return 0;
	for (int64_t i = 0; i < cc_tensor_numel(p); i++)
		if (((const int64_t *)p->data)[i])
			return 0;
	return 1;
}

int cc_pass_dce(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int ident = 0, dead = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (n->dead || n->nin < 1 || n->in[0] < 0)
			continue;
		if (strcmp(n->op, "Identity") && !zero_pad(g, n))
			continue;
		int from = n->in[0], to = n->out[0];
		if (g->t[to].is_output)
			continue; /* the graph's output keeps its name */
		for (int j = 0; j < g->nn; j++)
			for (int k = 0; k < g->n[j].nin; k++)
				if (g->n[j].in[k] == to)
					g->n[j].in[k] = from;
		n->dead = 1;
		ident++;
	}
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = g->nn - 1; i >= 0; i--) {
			struct cc_node *n = &g->n[i];
			if (n->dead)
				continue;
			int used = 0;
			for (int k = 0; k < n->nout && !used; k++)
				used = n->out[k] >= 0 && cc_tensor_uses(g, n->out[k]) > 0;
			if (!used) {
				n->dead = 1;
				dead++;
				changed = 1;
			}
		}
	}
	cc_log(log, "  dce: %d Identity or zero Pad removed, %d dead nodes removed", ident, dead);
	return ident + dead;
}
