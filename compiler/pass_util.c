/* pass_util.c: helpers shared by the graph passes. */
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

void cc_log(struct cc_pass_log *log, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = sizeof line - 1;
	if (log->len + (size_t)n + 2 > log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 4096;
		while (cap < log->len + (size_t)n + 2)
			cap *= 2;
		char *b = realloc(log->buf, cap);
		if (!b)
			return;
		log->buf = b;
		log->cap = cap;
	}
	for (int i = 0; i < n; i++)
		log->buf[log->len++] = line[i];
	log->buf[log->len++] = '\n';
	log->buf[log->len] = 0;
}

int cc_tensor_uses(const struct cc_graph *g, int t)
{
	int uses = g->t[t].is_output;
	for (int i = 0; i < g->nn; i++) {
		if (g->n[i].dead)
			continue;
		for (int k = 0; k < g->n[i].nin; k++)
			uses += g->n[i].in[k] == t;
	}
	return uses;
}

int cc_sole_consumer(const struct cc_graph *g, int t)
{
	if (g->t[t].is_output)
		return -1;
	int who = -1;
	for (int i = 0; i < g->nn; i++) {
		if (g->n[i].dead)
			continue;
		for (int k = 0; k < g->n[i].nin; k++)
			if (g->n[i].in[k] == t) {
				if (who >= 0 && who != i)
					return -1;
				who = i;
			}
	}
	return who;
}

void cc_strlcat(char *dst, size_t size, const char *src)
{
	size_t l = strlen(dst);
	while (*src && l + 1 < size)
		dst[l++] = *src++;
	if (l < size)
		dst[l] = 0;
}

int cc_clip_bounds(const struct cc_graph *g, const struct cc_node *n, float *lo, float *hi)
{
	*lo = cc_attr_float(n, "min", -FLT_MAX);
	*hi = cc_attr_float(n, "max", FLT_MAX);
	for (int k = 1; k < 3 && k < n->nin; k++) {
		int t = n->in[k];
		if (t < 0)
			continue;
		const struct cc_tensor *c = &g->t[t];
		if (!c->data || c->dtype != CC_F32 || cc_tensor_numel(c) != 1)
			return -1;
		*(k == 1 ? lo : hi) = *(const float *)c->data;
	}
	cc_clip_keep_sign(lo, hi);
	return 0;
}

void cc_clip_keep_sign(float *lo, float *hi)
{
	/* A bound between zero and fp16's smallest step (2^-24) would round to
	 * zero where the kernel computes in fp16, and x / max(|x|, eps) with
	 * eps = 1e-12 (F.normalize) would make 0 / 0 = NaN of what PyTorch
	 * keeps 0: the bound keeps its sign as the smallest subnormal. */
	const float tiny = 0x1p-24f;
	if (*lo > 0 && *lo < tiny)
		*lo = tiny;
	if (*hi < 0 && *hi > -tiny)
		*hi = -tiny;
}

int cc_node_make(struct cc_node *d, const char *base, const char *suffix, const char *op,
		 int in, int in2, int out)
{
	memset(d, 0, sizeof *d);
	size_t len = strlen(base) + strlen(suffix) + 1;
	d->name = malloc(len);
	d->op = strdup(op);
	d->domain = strdup("");
	d->nin = in2 >= 0 ? 2 : 1;
	d->in = malloc(2 * sizeof *d->in);
	d->out = malloc(sizeof *d->out);
	d->nout = 1;
	if (!d->name || !d->op || !d->domain || !d->in || !d->out)
		return -1;
	snprintf(d->name, len, "%s%s", base, suffix);
	d->in[0] = in;
	d->in[1] = in2;
	d->out[0] = out;
	return 0;
}
