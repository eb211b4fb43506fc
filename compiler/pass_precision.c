/* pass_precision.c: which nodes compute in fp32 (ATC's --precision_mode and
 * --keep_dtype).
 *
 *   force_fp16             everything in fp16 (the default).
 *   allow_mix_precision    the numerically sensitive ops compute in fp32 on
 *                          the vector unit: Softmax, LogSoftmax, Exp, Log,
 *                          Pow, LayerNormalization, and ReduceSum/ReduceMean
 *                          over CC_LARGE_REDUCTION values or more (summing
 *                          many fp16 values loses the small ones); the rest
 *                          fp16, as ATC's precision_reduce lists put the
 *                          matrix ops in fp16 and keep these in fp32.
 *   must_keep_origin_dtype every node whose output is float32 in the model
 *                          computes in fp32 where a kernel can.
 *   --keep_dtype=FILE      ATC's file: one entry a line, a node name or
 *                          OpType::<type>; those nodes keep float32 (fp32
 *                          compute) whatever the mode.
 *
 * Where fp32 is wanted but no kernel has it, the node stays fp16 and
 * prec_note says why: the cube multiplies fp16 (or int8) only on these
 * SoCs (ascend.md 1.2: fp32 fractals arrive with the 910B), and the kernels
 * without an fp32 path say so when they are lowered (cc_prec_fp16_only).
 * In every mode the tensors between kernels are fp16 in memory: an fp32
 * node converts its input in the UB and rounds its result once.  Runs
 * after shape inference and the fusions; an element-wise chain computes in
 * fp32 when any of its nodes does. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "ops.h"
#include "passes.h"

#define CC_LARGE_REDUCTION 256

/* A fused element-wise chain's nodes (the earlier ones are dead, linked by
 * chain_prev from the live last one): whether any has property prop. */
static int chain_has(const struct cc_graph *g, const struct cc_node *n, unsigned prop)
{
	for (int k = (int)(n - g->n); k >= 0; k = g->n[k].chain_prev ? g->n[k].chain_prev - 1 : -1)
		if (cc_op_has(g->n[k].op, prop))
			return 1;
	return 0;
}

/* Values a Reduce node sums per output value (input elements / output elements). */
static int64_t reduced(const struct cc_graph *g, const struct cc_node *n)
{
	int64_t in = cc_tensor_numel(&g->t[n->in[0]]), out = cc_tensor_numel(&g->t[n->out[0]]);
	return in > 0 && out > 0 ? in / out : 0;
}

struct keep {
	char **names; /* node names, or "OpType::X" entries */
	int *lines, *used;
	int n;
};

static void keep_free(struct keep *k)
{
	for (int i = 0; i < k->n; i++)
		free(k->names[i]);
	free(k->names);
	free(k->lines);
	free(k->used);
}

/* One entry a line; blank lines and lines starting with '#' are skipped. */
static int keep_read(const char *path, struct keep *k, char *err, size_t errlen)
{
	memset(k, 0, sizeof *k);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "--keep_dtype %s: cannot open", path);
		return -1;
	}
	char line[1024];
	int ln = 0, cap = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		size_t len = strlen(line);
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			snprintf(err, errlen, "%s:%d: line too long", path, ln);
			fclose(f);
			return -1;
		}
		char *a = line, *b = line + len;
		while (*a && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			*--b = 0;
		if (!*a || *a == '#')
			continue;
		if (!strncmp(a, "OpType::", 8) && !a[8]) {
			snprintf(err, errlen, "%s:%d: OpType:: needs an operator type", path, ln);
			fclose(f);
			return -1;
		}
		if (k->n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nn = realloc(k->names, (size_t)cap * sizeof *nn);
			int *nl = nn ? realloc(k->lines, (size_t)cap * sizeof *nl) : NULL;
			if (nn)
				k->names = nn;
			if (nl)
				k->lines = nl;
			if (!nn || !nl) {
				snprintf(err, errlen, "out of memory");
				fclose(f);
				return -1;
			}
		}
		k->lines[k->n] = ln;
		if (!(k->names[k->n] = strdup(a))) {
			snprintf(err, errlen, "out of memory");
			fclose(f);
			return -1;
		}
		k->n++;
	}
	fclose(f);
	k->used = calloc((size_t)k->n + 1, sizeof *k->used);
	if (!k->used) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Whether an entry names n or a node fused into its chain. */
static int keep_match(struct keep *k, const struct cc_graph *g, const struct cc_node *n)
{
	int hit = 0;
	for (int j = (int)(n - g->n); j >= 0; j = g->n[j].chain_prev ? g->n[j].chain_prev - 1 : -1)
		for (int i = 0; i < k->n; i++) {
			const char *e = k->names[i];
			const struct cc_node *m = &g->n[j];
			if (!strncmp(e, "OpType::", 8) ? !strcmp(e + 8, m->op)
						       : !strcmp(e, m->name)) {
				k->used[i] = 1;
				hit = 1;
			}
		}
	return hit;
}

int cc_pass_precision(struct cc_graph *g, int mode, const char *keep_dtype, const char *soc,
		      struct cc_pass_log *log, char *err, size_t errlen)
{
	struct keep k = { 0 };
	if (keep_dtype && keep_read(keep_dtype, &k, err, errlen)) {
		keep_free(&k);
		return -1;
	}
	int n32 = 0, n16 = 0;
	for (int i = 0; i < g->nn; i++) {
		struct cc_node *n = &g->n[i];
		if (n->dead)
			continue;
		int floaty = n->nout > 0 && n->out[0] >= 0 && g->t[n->out[0]].dtype == CC_F32;
		int kept = k.n && keep_match(&k, g, n) && floaty;
		const char *why = NULL;
		if (kept)
			why = "pinned to float32 by --keep_dtype";
		else if (mode == CC_PREC_KEEP_ORIGIN && floaty)
			why = "must_keep_origin_dtype: float32 in the model";
		else if (mode == CC_PREC_MIX && chain_has(g, n, CC_P_MIX_FP32))
			why = "allow_mix_precision: numerically sensitive, kept fp32";
		else if (mode == CC_PREC_MIX &&
			 cc_op_has(n->op, CC_P_SUM_REDUCE) &&
			 reduced(g, n) >= CC_LARGE_REDUCTION)
			why = "allow_mix_precision: a large reduction, kept fp32";
		if (!why)
			continue;
		if (n->q_x_scale > 0) {
			snprintf(n->prec_note, sizeof n->prec_note, "int8 (the QDQ model says so)");
			continue;
		}
		if (cc_op_has(n->op, CC_P_CUBE)) {
			snprintf(n->prec_note, sizeof n->prec_note,
				 "the cube has no fp32 mode on %s", soc);
			n16++;
			continue;
		}
		if (cc_op_has(n->op, CC_P_MOVE)) {
			snprintf(n->prec_note, sizeof n->prec_note,
				 "moves or selects values only (exact in fp16)");
			n16++;
			continue;
		}
		if (!cc_op_has(n->op, CC_P_FP32)) {
			snprintf(n->prec_note, sizeof n->prec_note,
				 "%s has no fp32 kernel yet", n->op);
			n16++;
			continue;
		}
		n->fp32 = 1;
		snprintf(n->prec_note, sizeof n->prec_note, "%s", why);
		n32++;
	}
	for (int i = 0; i < k.n; i++)
		if (!k.used[i]) {
			snprintf(err, errlen, "%s:%d: %s matches no node of the model", keep_dtype,
				 k.lines[i], k.names[i]);
			keep_free(&k);
			return -1;
		}
	keep_free(&k);
	static const char *const names[] = { "force_fp16", "allow_mix_precision",
					      "must_keep_origin_dtype" };
	cc_log(log, "  precision: %s%s%s: %d nodes compute in fp32, %d wanted fp32 but stay fp16",
	       names[mode], keep_dtype ? ", --keep_dtype " : "", keep_dtype ? keep_dtype : "", n32,
	       n16);
	return n32;
}

void cc_prec_fp16_only(struct cc_node *n, const char *why)
{
	if (!n->fp32)
		return;
	n->fp32 = 0;
	snprintf(n->prec_note, sizeof n->prec_note, "%s", why);
}
