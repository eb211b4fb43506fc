/* exec_scalar.c: scalar-unit semantics (loops and address arithmetic).
 * They run at issue; the engine has already advanced c->pc to the next
 * instruction, which branches overwrite. */
#include "core.h"

#include <string.h>

#define X(r) c->x[r]
#define SET(r, v)                          \
	do {                               \
		c->x[r] = (int64_t)(v);    \
		c->x[0] = 0; /* x0 is zero */ \
	} while (0)
#define SCALAR(id, expr)                                                                      \
	int exec_##id(struct sim_core *c, const struct sim_qent *e, uint64_t now,            \
		      struct sim_cost *cost)                                                  \
	{                                                                                     \
		const struct isa_dec *in = e->in;                                            \
		uint64_t a = (uint64_t)X(in->rs1), b = (uint64_t)X(in->rs2);                   \
		(void)a;                                                                      \
		(void)b;                                                                      \
		SET(in->rd, (expr));                                                          \
		return 0;                                                                     \
	}

int exec_NOP(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return 0;
}

int exec_END(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return 0; /* the engine ends the block */
}

int exec_LI(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	SET(e->in->rd, e->in->imm);
	return 0;
}

/* Unsigned arithmetic: wrap-around is defined, and the bits are the same. */
SCALAR(ADD, a + b)
SCALAR(SUB, a - b)
SCALAR(MUL, a * b)
SCALAR(AND, a & b)
SCALAR(OR, a | b)
SCALAR(XOR, a ^ b)
SCALAR(SHL, a << (b & 63))
SCALAR(SHR, a >> (b & 63))
SCALAR(MIN, X(in->rs1) < X(in->rs2) ? X(in->rs1) : X(in->rs2))
SCALAR(MAX, X(in->rs1) > X(in->rs2) ? X(in->rs1) : X(in->rs2))
SCALAR(ADDI, a + (uint64_t)in->imm)
SCALAR(MULI, a * (uint64_t)in->imm)
SCALAR(ANDI, a & (uint64_t)in->imm)
SCALAR(SHLI, a << (in->imm & 63))
SCALAR(SHRI, a >> (in->imm & 63))

int exec_DIVU(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	uint64_t b = (uint64_t)X(e->in->rs2);
	if (b == 0)
		return sim_fail(c, "division by zero (x%lld is 0)", (long long)e->in->rs2);
	SET(e->in->rd, (uint64_t)X(e->in->rs1) / b);
	return 0;
}

int exec_REMU(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	uint64_t b = (uint64_t)X(e->in->rs2);
	if (b == 0)
		return sim_fail(c, "division by zero (x%lld is 0)", (long long)e->in->rs2);
	SET(e->in->rd, (uint64_t)X(e->in->rs1) % b);
	return 0;
}

/* A taken branch.  Only a backward one can make a block run forever, so
 * that is where the block's instruction count meets the limit (the dry run
 * has no device: it counts against its own). */
static int branch_to(struct sim_core *c, const struct sim_qent *e)
{
	uint64_t to = (uint64_t)((int64_t)e->pc + e->in->imm);
	if (e->in->imm <= 0 && c->dev && c->st &&
	    c->st->scalar_insns - c->insns_at_start >= c->dev->max_insns)
		return sim_fail(c, "block %lld issued %llu instructions, the limit, in the loop "
				   "back to L%llu (an endless loop?)",
				(long long)c->block_idx, (unsigned long long)c->dev->max_insns,
				(unsigned long long)to);
	c->pc = to;
	return 0;
}

#define BRANCH(id, cond)                                                                      \
	int exec_##id(struct sim_core *c, const struct sim_qent *e, uint64_t now,            \
		      struct sim_cost *cost)                                                  \
	{                                                                                     \
		int64_t a = X(e->in->rs1), b = X(e->in->rs2);                                  \
		return (cond) ? branch_to(c, e) : 0;                                          \
	}
BRANCH(BEQ, a == b)
BRANCH(BNE, a != b)
BRANCH(BLT, a < b)
BRANCH(BGE, a >= b)

int exec_JMP(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return branch_to(c, e);
}

int exec_RDSPR(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	int64_t v = 0;
	switch (e->in->spr) {
	case ISA_SPR_BLOCK_IDX:
		v = c->block_idx;
		break;
	case ISA_SPR_BLOCK_DIM:
		v = c->launch->block_dim;
		break;
	default:
		v = c->id;
		break;
	}
	SET(e->in->rd, v);
	return 0;
}

int exec_LDARG(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	const struct sim_launch *l = c->launch;
	if (e->in->imm < 0 || e->in->imm >= (int64_t)l->nargs)
		return sim_fail(c, "kernel argument %lld requested but the launch passed %u",
				(long long)e->in->imm, l->nargs);
	SET(e->in->rd, l->args[e->in->imm]);
	return 0;
}

/* Scalar loads from global memory (a Gather's indices, say).  They read the
 * bytes as they are at issue: a load after a pipe's write to the same
 * address needs a barrier first, as on the hardware.  The scalar unit stalls
 * for a miss to main memory (the cost's lat; the engine adds it). */
static int gm_load(struct sim_core *c, const struct sim_qent *e, unsigned size,
		   struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	uint64_t addr = (uint64_t)(e->rs1 + in->imm);
	const uint8_t *p = sim_gm_ptr(c->dev, addr, size);
	if (!p)
		return sim_fail(c, "%s: GM address 0x%llx (%u bytes) is not allocated",
				isa_table[in->op].mnemonic, (unsigned long long)addr, size);
	int64_t v;
	if (c->ld_replay && c->ld_next < c->ld_n) {
		v = c->ld_log[c->ld_next++]; /* what program order loaded (func.h) */
	} else if (size == 8) {
		memcpy(&v, p, 8);
	} else {
		int32_t w;
		memcpy(&w, p, 4);
		v = w;
	}
	SET(in->rd, v);
	return 0;
}

int exec_LD_GM(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return gm_load(c, e, 8, cost);
}

int exec_LDW_GM(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return gm_load(c, e, 4, cost);
}
