/* kern_gen.c: see kern_gen.h. */
#include <string.h>

#include "kern_gen.h"


void kg_reset(struct kg *g)
{
	memset(g->rvalid, 0, sizeof g->rvalid);
	g->mhi = g->mlo = ~UINT64_C(0); /* every block starts with all lanes */
}

/* A register holding v; the least recently used one is reloaded. */
int kg_reg(struct kg *g, int64_t v)
{
	int lru = R_C0;
	for (int r = R_C0; r < R_CN; r++) {
		if (g->rvalid[r] && g->rval[r] == v) {
			g->rage[r] = ++g->clock;
			return r;
		}
		if (!g->rvalid[r] || (g->rvalid[lru] && g->rage[r] < g->rage[lru]))
			lru = r;
	}
	cc_li(g->p, lru, v);
	g->rval[lru] = v;
	g->rvalid[lru] = 1;
	g->rage[lru] = ++g->clock;
	return lru;
}

int64_t kg_fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

void kg_mask(struct kg *g, uint64_t hi, uint64_t lo)
{
	if (g->mhi == hi && g->mlo == lo)
		return;
	int rh = kg_reg(g, (int64_t)hi), rl = kg_reg(g, (int64_t)lo);
	struct isa_insn *in = cc_emit(g->p, ISA_OP_VMASK);
	in->rs1 = rh;
	in->rs2 = rl;
	g->mhi = hi;
	g->mlo = lo;
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

/* A vector instruction with dst and src registers; the caller sets the rest. */
struct isa_insn *kg_vinsn(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst,
			      int64_t src, int64_t rep)
{
	if (rep < 1 || rep > ISA_VEC_REP_MAX)
		g->bad = 1;
	int rd = kg_reg(g, dst), rs = kg_reg(g, src);
	struct isa_insn *in = cc_emit(g->p, op);
	in->rd = rd;
	in->rs1 = rs;
	in->dt = dt;
	in->rep = rep;
	return in;
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
		struct isa_insn *in = kg_vinsn(g, ISA_OP_VCONV, dt, dst + done * 64 * dsz,
					    src + done * 64 * ssz, k);
		in->st = st;
		in->dr = 64 * dsz / 32;
		in->s0r = 64 * ssz / 32;
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
		struct isa_insn *in = kg_vinsn(g, ISA_OP_VCONV, dt, dst + done * lanes * dsz,
					       src + done * lanes * ssz, k);
		in->st = st;
		in->rnd = rnd;
		in->db = 1;
		in->s0b = 1;
		in->dr = lanes * dsz / 32;
		in->s0r = lanes * ssz / 32;
	}
}

/* rep 16x16 transposes: source row i of repeat r at src + r*s0r*32 + i*s0b*32. */
void kg_transpose(struct kg *g, int64_t dst, int64_t src, int64_t rep, int64_t db,
		      int64_t s0b, int64_t dr, int64_t s0r)
{
	struct isa_insn *in = kg_vinsn(g, ISA_OP_VTRANSPOSE, ISA_DT_F16, dst, src, rep);
	in->db = db;
	in->s0b = s0b;
	in->dr = dr;
	in->s0r = s0r;
}

void kg_dma(struct kg *g, enum isa_op op, int gm_base, int64_t gm_off, int64_t ub,
		int64_t nburst, int64_t len, int64_t sgap, int64_t dgap)
{
	int ru = kg_reg(g, ub);
	cc_addi(g->p, R_GM, gm_base, gm_off);
	if (nburst < 1 || nburst > ISA_DMA_NBURST_MAX || len < 1 || len > ISA_DMA_LEN_MAX)
		g->bad = 1;
	if (op == ISA_OP_MOV_GM_UB)
		cc_dma(g->p, op, ru, R_GM, nburst, len, sgap, dgap);
	else
		cc_dma(g->p, op, R_GM, ru, nburst, len, sgap, dgap);
}

