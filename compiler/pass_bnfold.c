/* pass_bnfold.c: BatchNormalization folded into the Conv before it.
 *   y = s * (conv(x, W) + b - mean) / sqrt(var + eps) + B
 *     = conv(x, W * k) + (b - mean) * k + B,   k = s / sqrt(var + eps)
 * per output channel.  Needs constant weights and statistics, and a Conv
 * whose output only the BatchNormalization reads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

static const float *f32_const(const struct cc_graph *g, int t, int64_t count)
{
	if (t < 0 || !g->t[t].data || g->t[t].dtype != CC_F32 || cc_tensor_numel(&g->t[t]) != count)
		return NULL;
	return g->t[t].data;
}

static int new_const(struct cc_graph *g, const char *name, int rank, const int64_t *dims,
		     float *data)
{
	int t = cc_tensor_add(g, name, CC_F32, rank, dims);
	if (t < 0)
		return -1;
	g->t[t].data = data;
	g->t[t].nbytes = (size_t)cc_tensor_numel(&g->t[t]) * 4;
	return t;
}

int cc_pass_bnfold(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int folded = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *bn = &g->n[i];
		if (bn->dead || strcmp(bn->op, "BatchNormalization") || bn->nin < 5)
			continue;
		int x = bn->in[0];
		if (x < 0 || bn->nout < 1 || bn->out[0] < 0)
			continue; /* (validate.c refuses it; never index with -1) */
		int ci = g->t[x].producer;
		if (ci < 0 || g->n[ci].dead || strcmp(g->n[ci].op, "Conv") ||
		    cc_sole_consumer(g, x) != i || g->n[ci].nin < 2)
			continue;
		struct cc_node *conv = &g->n[ci];
		if (conv->in[1] < 0)
			continue;
		struct cc_tensor *wt = &g->t[conv->in[1]];
		if (!wt->data || wt->dtype != CC_F32 || wt->rank < 1 || wt->dims[0] < 1 ||
		    cc_tensor_numel(wt) < 1)
			continue; /* (no channels: nothing to fold, and no division by 0) */
		int64_t co = wt->dims[0], per = cc_tensor_numel(wt) / co;
		const float *s = f32_const(g, bn->in[1], co), *B = f32_const(g, bn->in[2], co);
		const float *mean = f32_const(g, bn->in[3], co), *var = f32_const(g, bn->in[4], co);
		const float *b = conv->nin > 2 && conv->in[2] >= 0 ? f32_const(g, conv->in[2], co)
								   : NULL;
		if (!s || !B || !mean || !var || (conv->nin > 2 && conv->in[2] >= 0 && !b))
			continue;
		float eps = cc_attr_float(bn, "epsilon", 1e-5f);
		float *w2 = malloc((size_t)(co * per) * 4), *b2 = malloc((size_t)co * 4);
		if (!w2 || !b2) {
			free(w2);
			free(b2);
			snprintf(err, errlen, "out of memory folding '%s'", bn->name);
			return -1;
		}
		const float *w = wt->data;
		for (int64_t o = 0; o < co; o++) {
			double k = s[o] / sqrt((double)var[o] + eps);
			for (int64_t j = 0; j < per; j++)
				w2[o * per + j] = (float)(w[o * per + j] * k);
			b2[o] = (float)(((b ? b[o] : 0.0) - mean[o]) * k + B[o]);
			/* an int8 conv keeps its integer weights: the channel's
			 * scale takes the factor */
			if (conv->q_w_scale)
				conv->q_w_scale[o] = (float)(conv->q_w_scale[o] * k);
		}
		char name[512];
		int64_t wdims[CC_MAX_RANK]; /* cc_tensor_add may move the tensor array */
		int wrank = wt->rank;
		memcpy(wdims, wt->dims, sizeof wdims);
		snprintf(name, sizeof name, "%s/bnfold_w", conv->name);
		int wi = new_const(g, name, wrank, wdims, w2);
		snprintf(name, sizeof name, "%s/bnfold_b", conv->name);
		int64_t d1[1] = { co };
		int bi = wi >= 0 ? new_const(g, name, 1, d1, b2) : -1;
		conv = &g->n[ci]; /* cc_tensor_add may not move nodes, but be safe */
		bn = &g->n[i];
		if (wi < 0 || bi < 0) {
			if (wi < 0)
				free(w2);
			if (bi < 0)
				free(b2);
			snprintf(err, errlen, "out of memory folding '%s'", bn->name);
			return -1;
		}
		if (conv->nin < 3) {
			int *in = realloc(conv->in, 3 * sizeof *in);
			if (!in) {
				snprintf(err, errlen, "out of memory folding '%s'", bn->name);
				return -1;
			}
			conv->in = in;
			conv->nin = 3;
		}
		conv->in[1] = wi;
		conv->in[2] = bi;
		conv->out[0] = bn->out[0];
		g->t[bn->out[0]].producer = ci;
		bn->dead = 1;
		size_t l = strlen(conv->fused);
		snprintf(conv->fused + l, sizeof conv->fused - l, "%sBatchNormalization",
			 l ? "+" : "");
		folded++;
	}
	cc_log(log, "  bnfold: %d BatchNormalization folded into Conv", folded);
	return folded;
}
