/* kern_gen.c: see kern_gen.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kern_gen.h"


void kg_init(struct kg *g, struct cc_prog *p, int c0, int cn)
{
	memset(g, 0, sizeof *g);
	g->p = p;
	g->c0 = c0;
	g->cn = cn;
	kg_reset(g);
}

/* Every cached register invalid. */
static void invalidate(struct kg *g)
{
	memset(g->rvalid, 0, sizeof g->rvalid);
	g->vmask = 0;
	g->mru_head = g->mru_tail = 0;
	g->lru_stale = 0;
}

void kg_reset(struct kg *g)
{
	invalidate(g);
	memset(g->bias, 0, sizeof g->bias);
	g->mhi = g->mlo = ~UINT64_C(0); /* every block starts with all lanes */
	g->mask_unknown = 0;
}

void kg_forget(struct kg *g)
{
	invalidate(g);
	g->mask_unknown = 1;
}

/* Register r now holds something the open loops' heads did not give it. */
static void redefined(struct kg *g, int r)
{
	for (int i = 0; i < g->depth; i++)
		g->loop[i].redef[r] = 1;
}

/* The cache's registers: [*lo, *hi). */
static void window(const struct kg *g, int *lo, int *hi)
{
	*lo = g->cn ? g->c0 : R_C0;
	*hi = g->cn ? g->cn : R_CN;
}

static unsigned bucket_of(int64_t v)
{
	return (unsigned)(((uint64_t)v * UINT64_C(0x9e3779b97f4a7c15)) >> 58) & (KG_BUCKETS - 1);
}

static void mru_unlink(struct kg *g, int r)
{
	int p = g->mru_prev[r], n = g->mru_next[r];
	if (p)
		g->mru_next[p] = (unsigned char)n;
	else
		g->mru_head = (unsigned char)n;
	if (n)
		g->mru_prev[n] = (unsigned char)p;
	else
		g->mru_tail = (unsigned char)p;
}

static void mru_front(struct kg *g, int r)
{
	g->mru_prev[r] = 0;
	g->mru_next[r] = g->mru_head;
	if (g->mru_head)
		g->mru_prev[g->mru_head] = (unsigned char)r;
	else
		g->mru_tail = (unsigned char)r;
	g->mru_head = (unsigned char)r;
}

/* Register r (of the window: never x0) now holds v. */
static void hold(struct kg *g, int r, int64_t v)
{
	unsigned b = bucket_of(v);
	g->bucket[g->rbucket[r]] &= ~(UINT32_C(1) << r);
	g->bucket[b] |= UINT32_C(1) << r;
	g->rbucket[r] = (unsigned char)b;
	g->rval[r] = v;
	g->rvalid[r] = 1;
	g->vmask |= UINT32_C(1) << r;
}

/* A register holding v; the least recently used one is reloaded. */
int kg_reg(struct kg *g, int64_t v)
{
	/* (the search's dry runs ask for a register per operand of every
	 * instruction they time, and most ask for something not cached: the
	 * indexes answer both without scanning the window) */
	for (uint32_t m = g->bucket[bucket_of(v)] & g->vmask; m; m &= m - 1) {
		int r = __builtin_ctz(m); /* the lowest first, as a scan finds it */
		if (g->rval[r] == v) {
			g->rage[r] = ++g->clock;
			if (!g->lru_stale && g->mru_head != r) {
				mru_unlink(g, r);
				mru_front(g, r);
			}
			/* read as the loop head left it: every iteration must see it so */
			for (int i = 0; i < g->depth; i++)
				if (!g->loop[i].redef[r])
					g->loop[i].livein[r] = 1;
			return r;
		}
	}
	/* the last register holding nothing, else the least recently used */
	int c0, cn;
	window(g, &c0, &cn);
	uint64_t win = ((UINT64_C(1) << cn) - 1) & ~((UINT64_C(1) << c0) - 1);
	uint64_t empty = win & ~(uint64_t)g->vmask;
	int lru;
	if (empty) {
		lru = 63 - __builtin_clzll(empty);
	} else if (!g->lru_stale) {
		lru = g->mru_tail;
		mru_unlink(g, lru);
	} else {
		lru = c0;
		unsigned oldest = UINT_MAX;
		for (int r = c0; r < cn; r++)
			if (g->rage[r] < oldest) {
				lru = r;
				oldest = g->rage[r];
			}
	}
	cc_li(g->p, lru, v);
	hold(g, lru, v);
	g->rage[lru] = ++g->clock;
	if (!g->lru_stale)
		mru_front(g, lru);
	redefined(g, lru);
	return lru;
}

struct kg_label kg_label(struct kg *g) { return (struct kg_label){ cc_label_new(g->p) }; }

void kg_bind(struct kg *g, struct kg_label l)
{
	cc_label_bind(g->p, l.id);
	kg_forget(g);
}

void kg_branch(struct kg *g, enum isa_op op, int rs1, int rs2, struct kg_label l)
{
	if (op != ISA_OP_BEQ && op != ISA_OP_BNE && op != ISA_OP_BLT && op != ISA_OP_BGE)
		g->bad = 1;
	cc_branch_label(g->p, op, rs1, rs2, l.id);
}

void kg_jump(struct kg *g, struct kg_label l) { cc_jmp_label(g->p, l.id); }

void kg_loop_begin(struct kg *g, const struct kg_loop *lp)
{
	if (g->depth == KG_MAX_LOOPS || lp->count < 1 || lp->nadv < 0 || lp->nadv > KG_MAX_ADV) {
		g->bad = 1;
		return;
	}
	int c0, cn;
	window(g, &c0, &cn);
	for (int i = 0; i < lp->nadv; i++)
		if (lp->reg[i] >= c0 && lp->reg[i] < cn)
			g->bad = 1; /* (a cached constant must not move) */
	cc_li(g->p, R_LC0 + g->depth, lp->count);
	struct kg_frame *f = &g->loop[g->depth++];
	f->lp = *lp;
	f->head = cc_label_new(g->p);
	cc_label_bind(g->p, f->head);
	memcpy(f->hval, g->rval, sizeof f->hval);
	memcpy(f->hvalid, g->rvalid, sizeof f->hvalid);
	memset(f->livein, 0, sizeof f->livein);
	memset(f->redef, 0, sizeof f->redef);
	f->mhi = g->mhi;
	f->mlo = g->mlo;
	f->mask_unknown = g->mask_unknown;
	memcpy(f->bias, g->bias, sizeof f->bias);
}

void kg_loop_end(struct kg *g)
{
	if (g->depth == 0) {
		g->bad = 1;
		return;
	}
	struct kg_frame *f = &g->loop[g->depth - 1];
	/* the back edge: the head's lane mask and live-in registers again (the
	 * mask first: setting it may load registers) */
	if (!f->mask_unknown)
		kg_mask(g, f->mhi, f->mlo);
	int c0, cn;
	window(g, &c0, &cn);
	for (int r = c0; r < cn; r++)
		if (f->livein[r] && !(g->rvalid[r] && g->rval[r] == f->hval[r])) {
			cc_li(g->p, r, f->hval[r]);
			/* valid again at the age it had: out of the recency list's order */
			g->lru_stale |= !g->rvalid[r];
			hold(g, r, f->hval[r]);
			redefined(g, r);
		}
	/* every base to its head value plus the loop's delta: the body's own
	 * loops left theirs moved by their counts (the loop's bases first, in
	 * its order, then any other a loop inside moved) */
	int64_t delta[32] = { 0 }, add[32];
	for (int i = 0; i < f->lp.nadv; i++)
		delta[f->lp.reg[i]] += f->lp.delta[i];
	for (int r = 0; r < 32; r++) {
		add[r] = delta[r] - (g->bias[r] - f->bias[r]);
		g->bias[r] = f->bias[r] + f->lp.count * delta[r];
	}
	for (int i = 0; i < f->lp.nadv; i++) {
		int r = f->lp.reg[i];
		if (add[r])
			cc_addi(g->p, r, r, add[r]);
		add[r] = 0;
	}
	for (int r = 0; r < 32; r++)
		if (add[r])
			cc_addi(g->p, r, r, add[r]);
	int rc = R_LC0 + g->depth - 1;
	cc_addi(g->p, rc, rc, -1);
	cc_branch_label(g->p, ISA_OP_BNE, rc, 0, f->head);
	g->depth--;
}

int64_t kg_fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

void kg_mask(struct kg *g, uint64_t hi, uint64_t lo)
{
	if (!g->mask_unknown && g->mhi == hi && g->mlo == lo)
		return;
	int rh = kg_reg(g, (int64_t)hi), rl = kg_reg(g, (int64_t)lo);
	KG_I(g, R2, ISA_OP_VMASK, .rs1 = rh, .rs2 = rl);
	g->mhi = hi;
	g->mlo = lo;
	g->mask_unknown = 0;
}

/* The first n lanes (n >= 128: all). */
void kg_mask_lanes(struct kg *g, int64_t n)
{
	uint64_t all = ~UINT64_C(0);
	if (n >= 128)
		kg_mask(g, all, all);
	else if (n >= 64)
		kg_mask(g, n == 64 ? 0 : (UINT64_C(1) << (n - 64)) - 1, all);
	else
		kg_mask(g, 0, (UINT64_C(1) << n) - 1);
}

void kg_mask_all(struct kg *g) { kg_mask_lanes(g, 128); }

void kg_vregs(struct kg *g, int64_t dst, int64_t src, int64_t rep, int r[2])
{
	if (rep < 1 || rep > ISA_VEC_REP_MAX)
		g->bad = 1;
	r[0] = kg_reg(g, dst);
	r[1] = kg_reg(g, src);
}

struct kg_strides kg_strides_dflt(void)
{
	const struct isa_insn *d = isa_fmt_defaults[ISA_FMT_VBIN];
	return (struct kg_strides){ d->db, d->s0b, d->s1b, d->dr, d->s0r, d->s1r };
}

void kg_vop(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t s0, int64_t s1,
	    int64_t rep, struct kg_strides st)
{
	switch (isa_table[op].fmt) {
	case ISA_FMT_VBIN: {
		int r1 = kg_reg(g, s1);
		KG_V(g, VBIN, op, dt, dst, s0, rep, .rs2 = r1, .db = st.db, .s0b = st.s0b,
		     .s1b = st.s1b, .dr = st.dr, .s0r = st.s0r, .s1r = st.s1r);
		break;
	}
	case ISA_FMT_VSCAL: {
		int r1 = kg_reg(g, s1);
		KG_V(g, VSCAL, op, dt, dst, s0, rep, .rs2 = r1, .db = st.db, .s0b = st.s0b,
		     .dr = st.dr, .s0r = st.s0r);
		break;
	}
	case ISA_FMT_VDUP: {
		int r1 = kg_reg(g, s1);
		KG_VDUP(g, dt, dst, rep, .rs2 = r1, .db = st.db, .dr = st.dr);
		break;
	}
	case ISA_FMT_VUN:
		KG_V(g, VUN, op, dt, dst, s0, rep, .db = st.db, .s0b = st.s0b, .dr = st.dr,
		     .s0r = st.s0r);
		break;
	default:
		g->bad = 1;
	}
}

/* dst(dt) = src(st), n elements contiguous on both sides. */
void kg_flat_conv(struct kg *g, enum isa_dtype dt, enum isa_dtype st, int64_t dst,
		      int64_t src, int64_t n)
{
	int64_t reps = (n + 63) / 64;
	int64_t dsz = dt == ISA_DT_F32 ? 4 : 2, ssz = st == ISA_DT_F32 ? 4 : 2;
	kg_mask_all(g);
	for (int64_t done = 0; done < reps; done += ISA_VEC_REP_MAX) {
		int64_t k = reps - done < ISA_VEC_REP_MAX ? reps - done : ISA_VEC_REP_MAX;
		KG_V(g, VCONV, ISA_OP_VCONV, dt, dst + done * 64 * dsz, src + done * 64 * ssz, k,
		     .st = st, .dr = 64 * dsz / 32, .s0r = 64 * ssz / 32);
	}
}

void kg_conv_n(struct kg *g, enum isa_dtype dt, enum isa_dtype st, int64_t dst, int64_t src,
	       int64_t n, enum isa_rnd rnd)
{
	int64_t dsz = isa_dtype_size(dt), ssz = isa_dtype_size(st);
	int64_t big = dsz > ssz ? dsz : ssz, lanes = 256 / big;
	int64_t reps = (n + lanes - 1) / lanes;
	kg_mask_all(g);
	for (int64_t done = 0; done < reps; done += ISA_VEC_REP_MAX) {
		int64_t k = reps - done < ISA_VEC_REP_MAX ? reps - done : ISA_VEC_REP_MAX;
		KG_V(g, VCONV, ISA_OP_VCONV, dt, dst + done * lanes * dsz, src + done * lanes * ssz,
		     k, .st = st, .rnd = rnd, .db = 1, .s0b = 1, .dr = lanes * dsz / 32,
		     .s0r = lanes * ssz / 32);
	}
}

/* rep 16x16 transposes: source row i of repeat r at src + r*s0r*32 + i*s0b*32. */
void kg_transpose(struct kg *g, int64_t dst, int64_t src, int64_t rep, int64_t db,
		      int64_t s0b, int64_t dr, int64_t s0r)
{
	KG_V(g, VUN, ISA_OP_VTRANSPOSE, ISA_DT_F16, dst, src, rep, .db = db, .s0b = s0b, .dr = dr,
	     .s0r = s0r);
}

/* GM offset off past base: recorded for kern_roll's comparison (0 encoded),
 * or less what loops have added to base; the offset to encode. */
static int64_t rel_offset(struct kg *g, int base, int64_t off)
{
	if (!g->rec)
		return off - g->bias[base];
	struct kg_rec *rc = g->rec;
	if (rc->n == rc->cap) {
		size_t cap = rc->cap ? 2 * rc->cap : 64;
		int64_t *o = realloc(rc->off, cap * sizeof *o);
		if (o)
			rc->off = o;
		int *b = realloc(rc->base, cap * sizeof *b);
		if (b)
			rc->base = b;
		if (o && b)
			rc->cap = cap;
	}
	if (rc->n < rc->cap) {
		rc->off[rc->n] = off;
		rc->base[rc->n++] = base;
	} else {
		rc->oom = 1;
	}
	return 0;
}

int kg_addr(struct kg *g, int tmp, int base, int64_t off)
{
	cc_addi(g->p, tmp, base, rel_offset(g, base, off));
	return tmp;
}

void kg_ldgm(struct kg *g, enum isa_op op, int rd, int gm_base, int64_t off)
{
	KG_I(g, RRI, op, .rd = rd, .rs1 = gm_base, .imm = rel_offset(g, gm_base, off));
}

void kg_dma(struct kg *g, enum isa_op op, int gm_base, int64_t gm_off, int64_t ub,
		int64_t nburst, int64_t len, int64_t sgap, int64_t dgap)
{
	kg_dma_via(g, op, R_GM, gm_base, gm_off, ub, nburst, len, sgap, dgap);
}

void kg_dma_via(struct kg *g, enum isa_op op, int areg, int gm_base, int64_t gm_off,
		int64_t local, int64_t nburst, int64_t len, int64_t sgap, int64_t dgap)
{
	kg_dma_reg(g, op, areg, gm_base, gm_off, kg_reg(g, local), nburst, len, sgap, dgap);
}

void kg_dma_reg(struct kg *g, enum isa_op op, int areg, int gm_base, int64_t gm_off, int ru,
		int64_t nburst, int64_t len, int64_t sgap, int64_t dgap)
{
	cc_addi(g->p, areg, gm_base, rel_offset(g, gm_base, gm_off));
	if (nburst < 1 || nburst > ISA_DMA_NBURST_MAX || len < 1 || len > ISA_DMA_LEN_MAX)
		g->bad = 1;
	if (op == ISA_OP_MOV_GM_UB || op == ISA_OP_MOV_GM_L1)
		cc_dma(g->p, op, ru, areg, nburst, len, sgap, dgap);
	else
		cc_dma(g->p, op, areg, ru, nburst, len, sgap, dgap);
}

