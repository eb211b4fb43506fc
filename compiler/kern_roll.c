/* kern_roll.c: see kern_roll.h.
 *
 * Every step is first emitted on its own into a scratch program, from a
 * builder that holds nothing (no cached register, the lane mask unknown)
 * and with its GM offsets recorded rather than encoded: two steps whose
 * scratch code is the same byte for byte ask for the same work whatever
 * the builder held before them, so one body can run both.  Steps t and
 * t + P "pair" when their code is the same and, per GM base register, every
 * transfer's offset moved by the same amount D.  A run of pairs t .. t+L-1
 * with the same D per base is a loop of floor(L/P) + 1 iterations of steps
 * t .. t+P-1, the bases advancing by D each iteration. */
#include "kern_roll.h"

#include <stdlib.h>
#include <string.h>

#define ROLL_PMAX 16 /* the longest period looked for, in steps */

struct sig {
	size_t c0, clen; /* code: bytes [c0, c0 + clen) of the scratch copy */
	size_t o0, on;   /* GM offsets: rec entries [o0, o0 + on) */
	uint64_t hash;
	int ok; /* the scratch program encoded (else it pairs with nothing) */
};

struct roll {
	size_t n;
	struct sig *sig;
	uint8_t *code;
	size_t ncode, capcode;
	struct kg_rec rec;
	unsigned char *match; /* [P-1][t]: steps t and t+P have the same code */
};

/* The advance of each GM base over a run: up to KG_MAX_ADV bases. */
struct adv {
	int n;
	int reg[KG_MAX_ADV];
	int64_t d[KG_MAX_ADV];
};

static uint64_t fnv(const uint8_t *b, size_t n)
{
	uint64_t h = UINT64_C(1469598103934665603);
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(1099511628211);
	return h;
}

static int record(struct roll *r, struct kg *g, size_t i, kg_step_fn *emit, const void *ctx)
{
	struct cc_prog sp;
	cc_prog_init(&sp);
	struct kg s = { .p = &sp, .rec = &r->rec };
	kg_forget(&s);
	struct sig *sg = &r->sig[i];
	sg->o0 = r->rec.n;
	emit(&s, ctx, i);
	sg->on = r->rec.n - sg->o0;
	uint8_t *code = NULL;
	size_t bytes = 0;
	char err[200];
	sg->ok = !s.bad && !cc_prog_finish(&sp, &code, &bytes, err, sizeof err);
	cc_prog_free(&sp);
	(void)g;
	sg->c0 = r->ncode;
	sg->clen = 0;
	if (!sg->ok)
		return r->rec.oom ? -1 : 0;
	if (r->ncode + bytes > r->capcode) {
		size_t cap = r->capcode ? r->capcode : 4096;
		while (cap < r->ncode + bytes)
			cap *= 2;
		uint8_t *c = realloc(r->code, cap);
		if (!c) {
			free(code);
			return -1;
		}
		r->code = c;
		r->capcode = cap;
	}
	if (bytes)
		memcpy(r->code + r->ncode, code, bytes);
	free(code);
	r->ncode += bytes;
	sg->clen = bytes;
	sg->hash = fnv(r->code + sg->c0, bytes);
	return r->rec.oom ? -1 : 0;
}

static int same_code(const struct roll *r, size_t a, size_t b)
{
	const struct sig *x = &r->sig[a], *y = &r->sig[b];
	if (!x->ok || !y->ok || x->hash != y->hash || x->clen != y->clen || x->on != y->on)
		return 0;
	if (memcmp(r->code + x->c0, r->code + y->c0, x->clen))
		return 0;
	for (size_t k = 0; k < x->on; k++)
		if (r->rec.base[x->o0 + k] != r->rec.base[y->o0 + k])
			return 0;
	return 1;
}

/* Merge pair (a, b)'s offset moves into v; 0 when they disagree with it. */
static int merge(const struct roll *r, size_t a, size_t b, struct adv *v)
{
	const struct sig *x = &r->sig[a], *y = &r->sig[b];
	for (size_t k = 0; k < x->on; k++) {
		int reg = r->rec.base[x->o0 + k];
		int64_t d = r->rec.off[y->o0 + k] - r->rec.off[x->o0 + k];
		int j = 0;
		while (j < v->n && v->reg[j] != reg)
			j++;
		if (j == v->n) {
			if (v->n == KG_MAX_ADV)
				return 0;
			v->reg[v->n] = reg;
			v->d[v->n++] = d;
		} else if (v->d[j] != d) {
			return 0;
		}
	}
	return 1;
}

/* Iterations of a loop of period P from step s (its advances in *v). */
static size_t iterations(const struct roll *r, size_t s, size_t P, struct adv *v)
{
	size_t L = 0;
	v->n = 0;
	for (size_t t = s; t + P < r->n && r->match[(P - 1) * r->n + t]; t++, L++) {
		struct adv w = *v;
		if (!merge(r, t, t + P, &w))
			break;
		*v = w;
	}
	size_t k = L / P + 1, fit = (r->n - s) / P;
	k = k < fit ? k : fit;
	/* the advances of exactly the pairs the loop relies on */
	v->n = 0;
	for (size_t t = s; t < s + (k > 0 ? k - 1 : 0) * P; t++)
		merge(r, t, t + P, v);
	return k;
}

int kg_emit_rolled(struct kg *g, size_t n, kg_step_fn *emit, const void *ctx)
{
	if (g->depth == KG_MAX_LOOPS || n < 4) {
		for (size_t i = 0; i < n; i++)
			emit(g, ctx, i);
		return 0;
	}
	struct roll r = { .n = n };
	r.sig = calloc(n, sizeof *r.sig);
	r.match = calloc(ROLL_PMAX * n, 1);
	int rc = r.sig && r.match ? 0 : -1;
	for (size_t i = 0; i < n && !rc; i++)
		rc = record(&r, g, i, emit, ctx);
	for (size_t P = 1; P <= ROLL_PMAX && !rc; P++)
		for (size_t t = 0; t + P < n; t++)
			r.match[(P - 1) * n + t] = (unsigned char)same_code(&r, t, t + P);
	for (size_t cur = 0; cur < n && !rc;) {
		size_t bs = 0, bp = 0, bk = 0, saved = 0;
		struct adv bv = { 0 };
		for (size_t s = cur; s < n && s < cur + ROLL_PMAX; s++)
			for (size_t P = 1; P <= ROLL_PMAX && s + 2 * P <= n; P++) {
				struct adv v;
				size_t k = iterations(&r, s, P, &v);
				if (k >= 2 && (k - 1) * P > saved) {
					saved = (k - 1) * P;
					bs = s;
					bp = P;
					bk = k;
					bv = v;
				}
			}
		if (!saved) {
			emit(g, ctx, cur++);
			continue;
		}
		while (cur < bs)
			emit(g, ctx, cur++);
		struct kg_loop lp = { .count = (int64_t)bk };
		for (int j = 0; j < bv.n; j++)
			if (bv.d[j]) {
				lp.reg[lp.nadv] = bv.reg[j];
				lp.delta[lp.nadv++] = bv.d[j];
			}
		kg_loop_begin(g, &lp);
		for (size_t t = bs; t < bs + bp; t++)
			emit(g, ctx, t);
		kg_loop_end(g);
		cur = bs + bk * bp;
	}
	free(r.sig);
	free(r.match);
	free(r.code);
	free(r.rec.off);
	free(r.rec.base);
	return rc;
}
