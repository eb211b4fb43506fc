/* pass_fuse_act.c: Relu and Clip (ReLU6 and friends) after a Conv (or an
 * unfolded BatchNormalization) become part of its output path (applied as the result leaves L0C), saving
 * a whole pass over the tensor through global memory. */
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "ops.h"
#include "passes.h"

int cc_pass_fuse_act(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen)
{
	int fused = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *a = &g->n[i];
		if (a->dead || (strcmp(a->op, "Relu") && strcmp(a->op, "Clip")))
			continue;
		/* (validate.c refuses empty inputs first; a pass built on its own
		 * must still not index with -1) */
		if (a->nin < 1 || a->in[0] < 0 || a->nout < 1 || a->out[0] < 0)
			continue;
		int x = a->in[0], pi = g->t[x].producer;
		if (pi < 0 || g->n[pi].dead ||
		    !cc_op_has(g->n[pi].op, CC_P_ACT_FUSE) ||
		    g->n[pi].act != CC_ACT_NONE || cc_sole_consumer(g, x) != i)
			continue;
		struct cc_node *conv = &g->n[pi];
		if (!strcmp(a->op, "Relu")) {
			conv->act = CC_ACT_RELU;
		} else {
			float lo, hi;
			if (cc_clip_bounds(g, a, &lo, &hi))
				continue;
			conv->act = CC_ACT_CLIP;
			conv->act_lo = lo;
			conv->act_hi = hi;
		}
		conv->out[0] = a->out[0];
		g->t[a->out[0]].producer = pi;
		a->dead = 1;
		size_t l = strlen(conv->fused);
		snprintf(conv->fused + l, sizeof conv->fused - l, "%s%s", l ? "+" : "", a->op);
		fused++;
	}
	cc_log(log, "  fuse_act: %d Relu/Clip fused into the Conv or BatchNormalization before",
	       fused);
	return fused;
}
