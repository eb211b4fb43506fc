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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROLL_PMAX 64 /* the longest period looked for, in steps */

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

/* The advance of each GM base over a run: up to KG_MAX_ADV bases for a
 * loop, whose latch advances each; a shared block's bases are moved once,
 * at its dispatch, so it may move more (any base register: x1..x31). */
#define BLOCK_MAX_ADV 31
struct adv {
	int n;
	int reg[BLOCK_MAX_ADV];
	int64_t d[BLOCK_MAX_ADV];
};

static uint64_t fnv(const uint8_t *b, size_t n)
{
	uint64_t h = UINT64_C(1469598103934665603);
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(1099511628211);
	return h;
}

/* Append a scratch program's code as step (or block) sg's. */
static int add_code(struct roll *r, struct sig *sg, const uint8_t *code, size_t bytes)
{
	sg->c0 = r->ncode;
	sg->clen = 0;
	if (!sg->ok)
		return r->rec.oom ? -1 : 0;
	if (r->ncode + bytes > r->capcode) {
		size_t cap = r->capcode ? r->capcode : 4096;
		while (cap < r->ncode + bytes)
			cap *= 2;
		uint8_t *c = realloc(r->code, cap);
		if (!c)
			return -1;
		r->code = c;
		r->capcode = cap;
	}
	if (bytes)
		memcpy(r->code + r->ncode, code, bytes);
	r->ncode += bytes;
	sg->clen = bytes;
	sg->hash = fnv(r->code + sg->c0, bytes);
	return r->rec.oom ? -1 : 0;
}

/* What a step or block emitted through s (its program sp) becomes sig sg:
 * its GM offsets' count, its code in r. */
static int seal(struct roll *r, struct sig *sg, const struct kg *s, struct cc_prog *sp)
{
	sg->on = r->rec.n - sg->o0;
	uint8_t *code = NULL;
	size_t bytes = 0;
	char err[200];
	sg->ok = !s->bad && !cc_prog_finish(sp, &code, &bytes, err, sizeof err);
	cc_prog_free(sp);
	int rc = add_code(r, sg, code, bytes);
	free(code);
	return rc;
}

static int record(struct roll *r, const struct kg *g, size_t i, kg_step_fn *emit,
		  const void *ctx)
{
	struct cc_prog sp;
	cc_prog_init_scratch(&sp, g->p);
	struct kg s = { .p = &sp, .c0 = g->c0, .cn = g->cn, .rec = &r->rec };
	kg_forget(&s);
	struct sig *sg = &r->sig[i];
	sg->o0 = r->rec.n;
	emit(&s, ctx, i);
	if (sp.work_over) /* the work bound (emit.h): the whole kernel is over */
		g->p->over = g->p->work_over = 1;
	return seal(r, sg, &s, &sp);
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

/* Merge pair (a, b)'s offset moves into v; 0 when they disagree with it or
 * more than KG_MAX_ADV bases move (the latch advances each that moves). */
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
			int moving = 0;
			for (int i = 0; i < v->n; i++)
				moving += v->d[i] != 0;
			if (v->n == BLOCK_MAX_ADV || (d && moving == KG_MAX_ADV))
				return 0;
			v->reg[v->n] = reg;
			v->d[v->n++] = d;
		} else if (v->d[j] != d) {
			return 0;
		}
	}
	return 1;
}

/* Iterations of a loop of period P from step s, within steps before hi
 * (its advances in *v). */
static size_t iterations(const struct roll *r, size_t s, size_t P, size_t hi, struct adv *v)
{
	size_t L = 0;
	v->n = 0;
	for (size_t t = s; t + P < hi && r->match[(P - 1) * r->n + t]; t++, L++) {
		struct adv w = *v;
		if (!merge(r, t, t + P, &w))
			break;
		*v = w;
	}
	size_t k = L / P + 1, fit = (hi - s) / P;
	k = k < fit ? k : fit;
	/* the advances of exactly the pairs the loop relies on */
	v->n = 0;
	for (size_t t = s; t < s + (k > 0 ? k - 1 : 0) * P; t++)
		merge(r, t, t + P, v);
	return k;
}

/* Steps [lo, hi): the loop that saves the most code among those starting
 * within ROLL_PMAX steps of lo, the steps before it likewise, then the rest. */
static void roll_range(const struct roll *r, struct kg *g, size_t lo, size_t hi,
		       kg_step_fn *emit, const void *ctx)
{
	if (g->depth == KG_MAX_LOOPS) { /* no counter left for another loop */
		for (size_t t = lo; t < hi; t++)
			emit(g, ctx, t);
		return;
	}
	for (size_t cur = lo; cur < hi;) {
		size_t bs = 0, bp = 0, bk = 0, saved = 0;
		struct adv bv = { 0 };
		for (size_t s = cur; s < hi && s < cur + ROLL_PMAX; s++)
			for (size_t P = 1; P <= ROLL_PMAX && s + 2 * P <= hi; P++) {
				/* a loop from s runs at most (hi - s) / P periods: skip
				 * what could not save more than the best found (the walk
				 * of a long run per start and period was quadratic) */
				if (((hi - s) / P - 1) * P <= saved)
					continue;
				struct adv v;
				size_t k = iterations(r, s, P, hi, &v);
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
		roll_range(r, g, cur, bs, emit, ctx);
		struct kg_loop lp = { .count = (int64_t)bk };
		for (int j = 0; j < bv.n; j++)
			if (bv.d[j]) {
				lp.reg[lp.nadv] = bv.reg[j];
				lp.delta[lp.nadv++] = bv.d[j];
			}
		kg_loop_begin(g, &lp);
		/* the body's own repetition as a loop inside (an image's tiles
		 * in a loop over images) */
		roll_range(r, g, bs, bs + bp, emit, ctx);
		kg_loop_end(g);
		cur = bs + bk * bp;
	}
}

int kg_emit_rolled(struct kg *g, size_t n, kg_step_fn *emit, const void *ctx)
{
	if (g->p->work_over) /* past the work bound: the kernel fails, stop */
		return 0;
	if (g->depth == KG_MAX_LOOPS || n < 4) {
		for (size_t i = 0; i < n; i++)
			emit(g, ctx, i);
		return 0;
	}
	struct roll r = { .n = n };
	r.sig = calloc(n, sizeof *r.sig);
	r.match = calloc(ROLL_PMAX * n, 1);
	int rc = r.sig && r.match ? 0 : -1;
	for (size_t i = 0; i < n && !rc && !g->p->work_over; i++)
		rc = record(&r, g, i, emit, ctx);
	for (size_t P = 1; P <= ROLL_PMAX && !rc && !g->p->work_over; P++)
		for (size_t t = 0; t + P < n; t++)
			r.match[(P - 1) * n + t] = (unsigned char)same_code(&r, t, t + P);
	if (!rc && !g->p->work_over)
		roll_range(&r, g, 0, n, emit, ctx);
	free(r.sig);
	free(r.match);
	free(r.code);
	free(r.rec.off);
	free(r.rec.base);
	return rc;
}

/* kg_emit_rolled_state's steps: snap holds n + 1 states of size bytes. */
struct stateful {
	kg_state_step_fn *emit;
	const void *ctx;
	unsigned char *snap, *cur;
	size_t size;
};

static void state_step(struct kg *g, const void *ctx, size_t i)
{
	const struct stateful *s = ctx;
	memcpy(s->cur, s->snap + i * s->size, s->size);
	s->emit(g, s->ctx, i, s->cur);
	memcpy(s->snap + (i + 1) * s->size, s->cur, s->size);
}

int kg_emit_rolled_state(struct kg *g, size_t n, kg_state_step_fn *emit, const void *ctx,
			 void *state, size_t size)
{
	struct stateful s = { emit, ctx, malloc((n + 1) * size), malloc(size), size };
	int rc = s.snap && s.cur ? 0 : -1;
	if (!rc) {
		memcpy(s.snap, state, size);
		rc = kg_emit_rolled(g, n, state_step, &s);
		memcpy(state, s.snap + n * size, size);
	}
	free(s.snap);
	free(s.cur);
	return rc;
}

/* ---- blocks ---------------------------------------------------------------------- */

/* Block b's code emitted alone, its GM offsets recorded. */
static int record_block(struct roll *r, const struct kg *g, int64_t b, kg_block_fn *emit,
			void *ctx)
{
	struct cc_prog sp;
	cc_prog_init_scratch(&sp, g->p);
	struct kg s = { .p = &sp, .c0 = g->c0, .cn = g->cn, .rec = &r->rec };
	kg_reset(&s);
	struct sig *sg = &r->sig[b];
	sg->o0 = r->rec.n;
	emit(&s, ctx, b);
	if (sp.work_over)
		g->p->over = g->p->work_over = 1;
	return seal(r, sg, &s, &sp);
}

/* Whether block b runs block b0's code with its offsets moved by j advances
 * (v: set by the first member, j = 1). */
static int member(struct roll *r, int64_t b0, int64_t b, int64_t j, struct adv *v)
{
	if (!same_code(r, (size_t)b0, (size_t)b))
		return 0;
	const struct sig *x = &r->sig[b0], *y = &r->sig[b];
	struct adv w = { 0 };
	for (size_t k = 0; k < x->on; k++) {
		int64_t d = r->rec.off[y->o0 + k] - r->rec.off[x->o0 + k];
		if (j == 1) {
			int reg = r->rec.base[x->o0 + k], i = 0;
			while (i < w.n && w.reg[i] != reg)
				i++;
			if (i == w.n) {
				if (w.n == BLOCK_MAX_ADV)
					return 0;
				w.reg[w.n] = reg;
				w.d[w.n++] = d;
			} else if (w.d[i] != d) {
				return 0;
			}
			continue;
		}
		int i = 0;
		while (i < v->n && v->reg[i] != r->rec.base[x->o0 + k])
			i++;
		if (i == v->n || v->d[i] * j != d)
			return 0;
	}
	if (j == 1)
		*v = w;
	return 1;
}

/* Block b0's class: b0 and every Q-th block after it that runs its code
 * (count of them, their bases' advances per Q blocks in *v). */
static void find_class(struct roll *r, const int64_t *cls, int64_t nb, int64_t b0, int64_t *Q,
		       int64_t *count, struct adv *v)
{
	v->n = 0;
	*Q = 0;
	*count = 1;
	for (int64_t b = b0 + 1; b < nb && !*Q; b++)
		if (cls[b] < 0 && member(r, b0, b, 1, v))
			*Q = b - b0;
	if (*Q)
		for (*count = 2; b0 + *count * *Q < nb && cls[b0 + *count * *Q] < 0 &&
				 member(r, b0, b0 + *count * *Q, *count, v);
		     ++*count)
			;
}

/* Moves the bases of a shared copy of b0's code on for the block running
 * it: j = (block_idx - b0) / Q, each base += j * its advance. */
static void move_bases(struct cc_prog *p, int64_t b0, int64_t Q, const struct adv *v)
{
	int rj = R_BIDX;
	if (b0) {
		cc_addi(p, R_TMP, R_BIDX, -b0);
		rj = R_TMP;
	}
	if (Q > 1 && (Q & (Q - 1)) == 0) {
		int sh = 0;
		while ((INT64_C(1) << sh) < Q)
			sh++;
		CC_I(p, RRI, ISA_OP_SHRI, .rd = R_TMP, .rs1 = rj, .imm = sh);
		rj = R_TMP;
	} else if (Q > 1) {
		cc_li(p, R_GM, Q);
		CC_I(p, RRR, ISA_OP_DIVU, .rd = R_TMP, .rs1 = rj, .rs2 = R_GM);
		rj = R_TMP;
	}
	for (int i = 0; i < v->n; i++) {
		if (!v->d[i])
			continue;
		CC_I(p, RRI, ISA_OP_MULI, .rd = R_GM, .rs1 = rj, .imm = v->d[i]);
		CC_I(p, RRR, ISA_OP_ADD, .rd = v->reg[i], .rs1 = v->reg[i], .rs2 = R_GM);
	}
}

/* The deltas that move a block joining class h's code from block h's
 * offsets to its own, then on to the class's code after its base moves. */
static void emit_join(struct cc_prog *p, const struct adv *v, int body)
{
	for (int i = 0; i < v->n; i++) {
		if (!v->d[i])
			continue;
		cc_li(p, R_GM, v->d[i]);
		CC_I(p, RRR, ISA_OP_ADD, .rd = v->reg[i], .rs1 = v->reg[i], .rs2 = R_GM);
	}
	cc_jmp_label(p, body);
}

int kg_emit_blocks(struct kg *g, int64_t nb, kg_block_fn *emit, void *ctx)
{
	struct cc_prog *p = g->p;
	struct roll r = { .n = (size_t)nb };
	r.sig = calloc((size_t)nb, sizeof *r.sig);
	int64_t *cls = malloc((size_t)nb * sizeof *cls); /* block -> its class's first */
	int64_t *q = malloc((size_t)nb * sizeof *q);
	int64_t *join = malloc((size_t)nb * sizeof *join); /* a class it joins, or -1 */
	struct adv *v = malloc((size_t)nb * sizeof *v);
	struct adv *vj = malloc((size_t)nb * sizeof *vj); /* a joining class's move */
	int *labels = calloc((size_t)nb, sizeof *labels);
	int *body = calloc((size_t)nb, sizeof *body);
	int rc = r.sig && cls && q && join && v && vj && labels && body ? 0 : -1;
	for (int64_t b = 0; b < nb && !rc; b++) {
		cls[b] = -1;
		labels[b] = body[b] = -1;
		join[b] = -1;
		if (!p->work_over)
			rc = record_block(&r, g, b, emit, ctx);
	}
	if (p->work_over) /* past the work bound (emit.h): the kernel fails */
		rc = 1;
	/* the classes, then one label each; block 0's class falls through */
	for (int64_t b0 = 0; b0 < nb && !rc; b0++) {
		if (cls[b0] >= 0)
			continue;
		int64_t count;
		find_class(&r, cls, nb, b0, &q[b0], &count, &v[b0]);
		int l = b0 ? cc_label_new(p) : -1;
		for (int64_t j = 0; j < count; j++) {
			cls[b0 + j * q[b0]] = b0;
			labels[b0 + j * q[b0]] = l;
		}
	}
	/* A class whose code an earlier class runs at other offsets (blocks
	 * whose offsets are no progression in the block index: a grid of tiles
	 * dealt out by rows) joins that class: its entry moves its bases as its
	 * own code would, then by the difference from the earlier class's first
	 * block, and jumps to that class's code. */
	for (int64_t b = 1; b < nb && !rc; b++) {
		if (cls[b] != b)
			continue;
		for (int64_t h = 0; h < b; h++) {
			if (cls[h] != h || join[h] >= 0 || !member(&r, h, b, 1, &vj[b]))
				continue;
			join[b] = h;
			if (body[h] < 0)
				body[h] = cc_label_new(p);
			break;
		}
	}
	if (!rc)
		cc_block_dispatch_to(p, nb, labels, R_BIDX, R_TMP);
	for (int64_t b0 = 0; b0 < nb && !rc; b0++) {
		if (cls[b0] != b0 || join[b0] >= 0)
			continue;
		if (b0)
			cc_label_bind(p, labels[b0]);
		kg_reset(g);
		if (q[b0])
			move_bases(p, b0, q[b0], &v[b0]);
		if (body[b0] >= 0)
			cc_label_bind(p, body[b0]);
		emit(g, ctx, b0);
	}
	for (int64_t b = 0; b < nb && !rc; b++)
		if (join[b] >= 0) {
			cc_label_bind(p, labels[b]);
			if (q[b])
				move_bases(p, b, q[b], &v[b]);
			emit_join(p, &vj[b], body[join[b]]);
		}
	free(r.sig);
	free(cls);
	free(q);
	free(join);
	free(v);
	free(vj);
	free(labels);
	free(body);
	free(r.code);
	free(r.rec.off);
	free(r.rec.base);
	return rc < 0 ? -1 : 0; /* 1: over the work bound, which finishing says */
}

/* ---- blocks of steps ---------------------------------------------------------------- */

struct block_steps {
	const struct kg_steps *ks;
	int64_t b;
};

static void block_step(struct kg *g, const void *ctx, size_t i)
{
	const struct block_steps *bs = ctx;
	bs->ks->step(g, bs->ks->ctx, bs->b, i);
}

static void steps_block(struct kg *g, void *ctx, int64_t b)
{
	const struct kg_steps *ks = ctx;
	const struct block_steps bs = { ks, b };
	for (int k = 0; k < ks->nsync; k++)
		cc_prime_flags(g->p, ks->sync[k].src, ks->sync[k].dst, ks->sync[k].n);
	size_t n = ks->nsteps ? ks->nsteps(ks->ctx, b)
			      : (size_t)ks->prelude + kg_block_units(b, ks->per, ks->units);
	if (kg_emit_rolled(g, n, block_step, &bs))
		g->bad = 2; /* out of memory: kg_emit_steps says so */
	for (int k = 0; k < ks->nsync; k++)
		cc_drain_flags(g->p, ks->sync[k].src, ks->sync[k].dst, ks->sync[k].n);
	cc_end(g->p);
}

int kg_emit_steps(struct kg *g, const struct kg_steps *ks)
{
	int rc = kg_emit_blocks(g, ks->blocks, steps_block, (void *)ks);
	return rc || g->bad == 2 ? -1 : 0;
}

size_t kg_block_units(int64_t b, int64_t per, int64_t total)
{
	int64_t u1 = (b + 1) * per < total ? (b + 1) * per : total;
	return u1 > b * per ? (size_t)(u1 - b * per) : 0;
}

int kg_emit_kernel(struct cc_prog *p, int c0, int cn, const struct kg_steps *ks, const char *what,
		   char *err, size_t errlen)
{
	struct kg g;
	kg_init(&g, p, c0, cn);
	if (kg_emit_steps(&g, ks)) {
		snprintf(err, errlen, "%s: out of memory", what);
		return -1;
	}
	if (g.bad) {
		/* an instruction field the shape overflows (a stride, a repeat) */
		snprintf(err, errlen, "%s: a shape outside the ISA's field ranges is not supported "
			 "yet", what);
		return -1;
	}
	return 0;
}
