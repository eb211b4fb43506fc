/* spans.c: pipe busy intervals, merged as they arrive.  Instructions of one
 * pipe arrive in time order, so an interval either extends the pipe's last
 * one or starts a new one. */
#include <stdlib.h>

#include "trace.h"

int trc_spans_init(struct trc_spans *s, unsigned cores)
{
	s->v = NULL;
	s->n = s->cap = 0;
	s->cores = cores;
	s->oom = 0;
	s->last = calloc((size_t)cores * ISA_NPIPES, sizeof *s->last);
	return s->last ? 0 : -1;
}

void trc_spans_free(struct trc_spans *s)
{
	free(s->v);
	free(s->last);
	s->v = NULL;
	s->last = NULL;
	s->n = s->cap = 0;
}

void trc_span_record(void *ctx, unsigned core, unsigned pipe, uint64_t start, uint64_t end)
{
	struct trc_spans *s = ctx;
	if (core >= s->cores || pipe >= ISA_NPIPES || s->oom)
		return;
	size_t lane = (size_t)core * ISA_NPIPES + pipe;
	if (s->last[lane]) {
		struct trc_span *l = &s->v[s->last[lane] - 1];
		if (start <= l->end) {
			if (end > l->end)
				l->end = end;
			return;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct trc_span *v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = 1;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = (struct trc_span){ start, end, (uint16_t)core, (uint16_t)pipe };
	s->last[lane] = ++s->n;
}
