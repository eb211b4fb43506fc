/* plan_l2.c: L2 fusion (ATC's --buffer_optimize=l2_optimize).  When a chain
 * of layers' activations outgrows the L2, every intermediate is written to
 * main memory and read back from it.  Run the chain a slice of the batch at
 * a time instead: each layer of the chain for images [b, b + S), then the
 * next slice, so that what a layer writes is still in the L2 when the next
 * layer reads it.  The price: the chain's weights are read once per slice.
 *
 * The plan, before lowering, over the graph's node order:
 *  - sliceable nodes: Conv (fp16 or int8), MaxPool, AveragePool, GlobalAveragePool
 *    and BatchNormalization whose activations are all 4-D with the batch N
 *    > 1 as their leading dimension, none a graph output, nor a graph input
 *    other than a float image read as fp16 (converted into the workspace
 *    first), nor a view
 *    inside a concat buffer (plan_concat.c), the batch being N images one
 *    after another in NC1HWC0, so a slice is one contiguous range;
 *  - a node's slice size S = the images whose activations (inputs and
 *    outputs) fit half the L2 (the other half for weights and what the
 *    other cores stream), rounded down to a power of two; bytes as they
 *    move: an int8 conv's input and weights int8, a tensor int8 convs read
 *    written also (or only) in its int8 form (act_bytes);
 *  - a run of consecutive sliceable nodes whose slice sizes are within a
 *    factor of 4 of each other (a stage of the network) is a chain, sliced
 *    by the S of its most demanding node;
 *  - a chain is sliced when the main-memory bytes it saves (each tensor it
 *    both writes and reads, larger than half the L2, is no longer read back
 *    from main memory) exceed what it costs: its weights read once more per
 *    extra slice, and a task gap (runtime.task_gap_us) per extra task,
 *    counted as the bytes main memory would move in that time.
 * Nothing here is fitted: the L2 size is the SoC's, and the simulated L2
 * decides what the slicing actually saves.  compile.c lowers a chain slice
 * by slice through views of each tensor's batch range (cc_view_at), the
 * weights laid out once (cc_weight_add's dedupe while a chain lowers). */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "ops.h"

static int64_t image_bytes(const struct cc_tensor *t)
{
	return (t->dims[1] + 15) / 16 * t->dims[2] * t->dims[3] * 32;
}

/* An image of activation ti as it moves: fp16 NC1HWC0, its int8 form (C0 =
 * 32, half the bytes) when int8 convs read it (lower_quant.c writes both
 * when something else reads the fp16), or only the int8 form when read as
 * an int8 conv's input (int8_in). */
static int64_t act_bytes(struct cc_ctx *c, int ti, int int8_in)
{
	const struct cc_tensor *t = T(c, ti);
	int64_t f16 = image_bytes(t), i8 = (t->dims[1] + 31) / 32 * t->dims[2] * t->dims[3] * 32;
	if (int8_in)
		return i8;
	int fp16;
	float s = cc_q8_readers(c, NULL, ti, &fp16);
	return s > 0 ? i8 + (fp16 ? f16 : 0) : f16;
}

/* The batch of node n when it can run a slice at a time, else 0. */
static int64_t node_batch(struct cc_ctx *c, const struct cc_node *n)
{
	if (!cc_op_has(n->op, CC_P_BATCH_SLICE) || n->fp32 || n->nout < 1 || n->out[0] < 0)
		return 0;
	if (!strcmp(n->op, "Conv") && (n->nin < 2 || !T(c, n->in[1])->data))
		return 0; /* weights computed at run time: laid out per call */
	int64_t N = T(c, n->out[0])->dims[0];
	for (int k = 0; k < n->nin + n->nout; k++) {
		int ti = cc_node_tensor(n, k);
		if (ti < 0 || (k < n->nin && T(c, ti)->data))
			continue; /* omitted, or a constant: weights, bias, statistics */
		const struct cc_tensor *t = T(c, ti);
		if (k >= n->nin + 1 && !cc_tensor_uses(&c->g, ti))
			continue; /* an unused second output (MaxPool's Indices) */
		/* a float image input read as fp16: its TransData or AIPP writes it
		 * to the workspace first (compile.c), a batch of NC1HWC0 (or C04)
		 * images like any activation, so the first conv can join its
		 * stage's chain (its input read from main memory once either way,
		 * its output kept in the L2 for the next layer) */
		int image_in = t->is_input && k == 0 && t->dtype == CC_F32 && n->q_x_scale <= 0;
		if (t->rank != 4 || t->dims[0] != N || (t->is_input && !image_in) || t->is_output ||
		    (ti < c->vplan_n && c->vroot[ti] >= 0))
			return 0;
	}
	return N > 1 ? N : 0;
}

/* Per-image bytes of n's activations, and its constants' bytes (fp16; an
 * int8 conv's weights int8). */
static void node_bytes(struct cc_ctx *c, const struct cc_node *n, int64_t *act, int64_t *wts)
{
	*act = *wts = 0;
	int q = n->q_x_scale > 0;
	for (int k = 0; k < n->nin + n->nout; k++) {
		int ti = cc_node_tensor(n, k);
		const struct cc_tensor *t = ti >= 0 ? T(c, ti) : NULL;
		if (t && k < n->nin && t->data)
			*wts += cc_tensor_numel(t) * (q && k == 1 ? 1 : 2);
		else if (t && t->rank == 4)
			*act += act_bytes(c, ti, q && (k == 0 || (k == n->res_in && n->q_r_scale > 0)));
	}
}

static int64_t pow2_floor(int64_t x)
{
	int64_t p = 1;
	while (p * 2 <= x)
		p *= 2;
	return p;
}

/* Bytes the chain [a, b] (node indices, live sliceable nodes) saves by
 * slicing: its tensors both written and read inside it that outgrow half
 * the L2, each read back once. */
static int64_t chain_saving(struct cc_ctx *c, int a, int b, int64_t half)
{
	int64_t save = 0;
	for (int i = a; i <= b; i++) {
		const struct cc_node *n = &c->g.n[i];
		if (n->dead)
			continue;
		int y = n->out[0];
		const struct cc_tensor *t = T(c, y);
		int64_t full = act_bytes(c, y, 0) * t->dims[0];
		int inside = 0;
		for (int j = i + 1; j <= b; j++)
			for (int k = 0; !c->g.n[j].dead && k < c->g.n[j].nin; k++)
				inside |= c->g.n[j].in[k] == y;
		if (inside && full > half)
			save += full;
	}
	return save;
}

int cc_plan_l2(struct cc_ctx *c)
{
	int nn = c->g.nn;
	c->l2_at = malloc((size_t)(nn + 1) * sizeof *c->l2_at);
	c->l2 = calloc((size_t)nn + 1, sizeof *c->l2);
	int64_t *S = malloc((size_t)(nn + 1) * sizeof *S);
	if (!c->l2_at || !c->l2 || !S) {
		free(S);
		return cc_fail(c, "out of memory");
	}
	int64_t half = (int64_t)c->cfg->l2_size_kb * 1024 / 2;
	for (int i = 0; i < nn; i++) {
		c->l2_at[i] = -1;
		S[i] = 0;
		const struct cc_node *n = &c->g.n[i];
		int64_t N = n->dead ? 0 : node_batch(c, n), act, wts;
		if (!N)
			continue;
		node_bytes(c, n, &act, &wts);
		int64_t s = act ? half / act : N;
		S[i] = s >= N ? N : pow2_floor(s > 1 ? s : 1);
	}
	c->nl2 = 0;
	int sliced = 0;
	for (int i = 0; i < nn;) {
		if (!S[i]) {
			i++;
			continue;
		}
		/* a run of live sliceable nodes of one batch whose slice sizes are
		 * within a factor of 4 (dead nodes lower to nothing: skipped) */
		int a = i, b = i;
		int64_t N = T(c, c->g.n[i].out[0])->dims[0], lo = S[i], hi = S[i];
		for (int j = i + 1; j < nn; j++) {
			if (c->g.n[j].dead)
				continue;
			if (!S[j] || T(c, c->g.n[j].out[0])->dims[0] != N)
				break;
			int64_t l = S[j] < lo ? S[j] : lo, h = S[j] > hi ? S[j] : hi;
			if (h > 4 * l) /* a stage of other sizes: a chain of its own */
				break;
			lo = l;
			hi = h;
			b = j;
		}
		i = b + 1;
		if (lo >= N || a == b)
			continue;
		int64_t wts = 0, act, w;
		int nodes = 0;
		for (int j = a; j <= b; j++)
			if (!c->g.n[j].dead) {
				node_bytes(c, &c->g.n[j], &act, &w);
				wts += w;
				nodes++;
			}
		int64_t slices = (N + lo - 1) / lo;
		/* a task more costs the scheduler's gap: the bytes main memory
		 * would have moved meanwhile */
		int64_t gaps = (int64_t)((double)((slices - 1) * nodes) * c->cfg->runtime_task_gap_us *
					 1e3 * c->cfg->hbm_bandwidth_gbps);
		int64_t save = chain_saving(c, a, b, half), cost = (slices - 1) * wts + gaps;
		if (save <= cost) {
			cc_log(&c->log, "  l2fusion: '%s' .. '%s' not sliced: the %lld main-memory "
					"bytes it would save cost %lld (weights read again, and the "
					"task gaps of %lld more tasks as bytes)",
			       c->g.n[a].name, c->g.n[b].name, (long long)save, (long long)cost,
			       (long long)((slices - 1) * nodes));
			continue;
		}
		struct cc_l2chain *ch = &c->l2[c->nl2];
		ch->first = a;
		ch->last = b;
		ch->S = lo;
		for (int j = a; j <= b; j++)
			c->l2_at[j] = c->nl2;
		c->nl2++;
		sliced++;
		cc_log(&c->log, "  l2fusion: '%s' .. '%s' (%d nodes) in %lld slices of %lld images: "
				"about %lld main-memory bytes less (%lld of activations not read "
				"back, %lld of weights read again)",
		       c->g.n[a].name, c->g.n[b].name, nodes, (long long)slices, (long long)lo,
		       (long long)(save - (slices - 1) * wts), (long long)save,
		       (long long)((slices - 1) * wts));
	}
	free(S);
	return sliced;
}
