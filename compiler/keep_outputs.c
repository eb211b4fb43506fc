/* keep_outputs.c: --keep_all_outputs, a debug compile for a layer-by-layer
 * accuracy comparison (tools/simcmp.py): the output of every node that
 * survives the passes becomes a model output, after the model's own.
 *
 * The outputs are chosen after the fusion and precision passes, so the
 * kernels and their precision are the ones a normal compile makes: a fused
 * task's output is the tensor of the last ONNX node it covers (a Conv with
 * its Relu: the Relu's output), and the intermediates inside a fusion are
 * not available.  They are chosen before the concat-in-place and L2 plans
 * and the lowering, which leave graph outputs whole in the workspace; the
 * memory plan then keeps each alive until its output TransData, at the
 * end.  A kept tensor the lowering did not place in memory (computed
 * inside another node's kernel) is dropped again (cc_keep_all_prune), and a
 * tensor a pass changed the meaning of (cc_tensor.altered) is never kept:
 * shown under the model's name it would be compared with the wrong value. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

/* The tensor node i's kernel writes for its output k: a MatMul with an
 * element-wise epilogue writes the epilogue's last output, not its own. */
static int written(const struct cc_graph *g, int i, int k)
{
	const struct cc_node *n = &g->n[i];
	if (k == 0 && n->epilogue > 0)
		return g->n[n->epilogue - 1].out[0];
	return n->out[k];
}

/* Not a model output already, computed, not empty, holding the model's
 * value (not altered by a pass), of a type a graph output may have
 * (lower_logic.c refuses 16-bit integer outputs). */
static int keepable(const struct cc_tensor *t)
{
	return !t->is_output && !t->is_input && !t->data && !t->altered && t->rank >= 0 &&
	       cc_tensor_numel(t) > 0 && cc_dtype_size(t->dtype) > 0 && t->dtype != CC_STRING &&
	       t->dtype != CC_I16 && t->dtype != CC_U16;
}

/* The live node whose kernel writes tensor ti, or -1 (an input, a constant). */
static int writer(const struct cc_graph *g, int ti)
{
	for (int i = 0; i < g->nn; i++)
		for (int k = 0; !g->n[i].dead && k < g->n[i].nout; k++)
			if (written(g, i, k) == ti)
				return i;
	return -1;
}

int cc_keep_all_mark(struct cc_ctx *c)
{
	struct cc_graph *g = &c->g;
	int n = g->noutputs;
	for (int i = 0; i < g->nn; i++)
		n += g->n[i].dead ? 0 : g->n[i].nout;
	int *outs = realloc(g->outputs, (size_t)(n + 1) * sizeof *outs);
	int *node = malloc((size_t)(n + 1) * sizeof *node);
	if (outs)
		g->outputs = outs;
	if (!outs || !node) {
		free(node);
		return cc_fail(c, "out of memory");
	}
	c->keep_from = g->noutputs;
	c->keep_node = node;
	for (int i = 0; i < g->noutputs; i++)
		node[i] = writer(g, g->outputs[i]);
	for (int i = 0; i < g->nn; i++) {
		if (g->n[i].dead)
			continue;
		for (int k = 0; k < g->n[i].nout; k++) {
			int ti = written(g, i, k);
			if (ti < 0 || !keepable(&g->t[ti]))
				continue;
			g->t[ti].is_output = 1;
			node[g->noutputs] = i;
			g->outputs[g->noutputs++] = ti;
		}
	}
	cc_log(&c->log, "  keep_all_outputs: %d node outputs kept as model outputs",
	       g->noutputs - c->keep_from);
	return 0;
}

void cc_keep_all_prune(struct cc_ctx *c)
{
	struct cc_graph *g = &c->g;
	int k = c->keep_from, dropped = 0;
	for (int i = c->keep_from; i < g->noutputs; i++) {
		int ti = g->outputs[i];
		if (c->dev[ti].where == W_NONE) { /* inside another node's kernel */
			g->t[ti].is_output = 0;
			dropped++;
			continue;
		}
		c->keep_node[k] = c->keep_node[i];
		g->outputs[k++] = ti;
	}
	g->noutputs = k;
	if (dropped)
		cc_log(&c->log, "  keep_all_outputs: %d of them computed inside another "
			        "node's kernel, not kept", dropped);
}

void cc_keep_all_json(struct cc_ctx *c, FILE *f)
{
	for (int i = 0; c->keep_node && i < c->g.noutputs; i++) {
		fprintf(f, "%s{\"output\": %d, \"model_output\": %s, \"tensor\": ", i ? ", " : "",
			i, i < c->keep_from ? "true" : "false");
		sim_json_str(f, T(c, c->g.outputs[i])->name);
		if (c->keep_node[i] < 0) {
			fprintf(f, ", \"node\": null}");
			continue;
		}
		const struct cc_node *n = &c->g.n[c->keep_node[i]];
		fprintf(f, ", \"node\": ");
		sim_json_str(f, n->name);
		fprintf(f, ", \"op\": ");
		sim_json_str(f, n->op);
		fprintf(f, ", \"fused\": ");
		sim_json_str(f, n->fused);
		fprintf(f, "}");
	}
}
