/* func.c: a block's arithmetic in program order (see func.h). */
#include "func.h"

#include <stdlib.h>
#include <string.h>

/* The functional core with what it alone owns: statistics its handlers
 * count and no one reads, and where their failures are written. */
struct func_core {
	struct sim_core c;
	struct sim_core_stats st;
	char err[1024];
};

int sim_func_init(struct sim_device *dev, uint8_t *mem, const uint64_t *stride)
{
	struct func_core *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	struct sim_core *c = &f->c;
	const struct sim_core *like = &dev->cores[0]; /* sizes, alignments, chunks */
	c->dev = dev;
	c->func_only = 1;
	c->st = &f->st;
	c->err = f->err;
	c->errlen = sizeof f->err;
	c->cur_pipe = ISA_PIPE_S;
	for (int b = 0; b < SIM_NBUFS; b++) {
		c->buf[b] = mem;
		c->buf_size[b] = like->buf_size[b];
		c->buf_align[b] = like->buf_align[b];
		c->pop_shift[b] = like->pop_shift[b];
		mem += stride[b];
	}
	dev->func = c;
	return 0;
}

void sim_func_free(struct sim_device *dev)
{
	free(dev->func); /* the first member of its func_core */
	dev->func = NULL;
}

/* Keep on's functional failure for the engine (func.h). */
static int defer_failure(struct sim_core *on, const char *msg)
{
	if (!on->func_err && !(on->func_err = malloc(sizeof ((struct func_core *)0)->err)))
		return -1;
	snprintf(on->func_err, sizeof ((struct func_core *)0)->err, "%s", msg);
	return 0;
}

/* Append v to on's log of scalar loads. */
static int log_load(struct sim_core *on, int64_t v)
{
	if (on->ld_n == on->ld_cap) {
		size_t cap = on->ld_cap ? 2 * on->ld_cap : 64;
		int64_t *p = realloc(on->ld_log, cap * sizeof *p);
		if (!p)
			return -1;
		on->ld_log = p;
		on->ld_cap = cap;
	}
	on->ld_log[on->ld_n++] = v;
	return 0;
}

/* Instructions the block may issue here.  The engine stops a block at
 * max_insns through its backward branches, as this pass does (the same
 * handlers), or at its cycle watchdog: every instruction it issues costs
 * the scalar unit cc.scalar cycles, so a block that issues more than
 * limit / cc.scalar + 1 is one the engine stops first. */
static uint64_t insn_bound(const struct sim_device *dev)
{
	uint64_t n = dev->max_insns + 1;
	if (dev->cc.scalar && dev->limit / dev->cc.scalar + 2 < n)
		n = dev->limit / dev->cc.scalar + 2;
	return n;
}

/* The block's instructions from pc 0 to its `end`: 0, or -1 after a
 * failure written to f->err. */
static int run_block(struct sim_core *f, struct sim_core *on, uint64_t bound)
{
	const struct sim_kernel *k = f->launch->kernel;
	for (uint64_t n = 0;; n++) {
		if (f->pc >= k->ninsns) {
			snprintf(f->err, f->errlen,
				 "core %u, pipe S, pc %llu: execution ran past the end of kernel '%s' "
				 "(%zu instructions; missing 'end'?)",
				 f->id, (unsigned long long)f->pc, k->name, k->ninsns);
			return -1;
		}
		if (n == bound) {
			snprintf(f->err, f->errlen,
				 "core %u, pipe S, pc %llu: block %lld ran %llu instructions without "
				 "ending (an endless loop?)",
				 f->id, (unsigned long long)f->pc, (long long)f->block_idx,
				 (unsigned long long)n);
			return -1;
		}
		const struct isa_dec *in = &k->insns[f->pc];
		const struct isa_info *info = &isa_table[in->op];
		f->pc++;
		/* the flags and barriers order what program order already has */
		if (info->pipe == ISA_PIPE_SYNC) {
			f->st->scalar_insns++;
			continue;
		}
		struct sim_qent e = { in, (uint32_t)f->pc - 1, 0, f->x[in->rd], f->x[in->rs1],
				      f->x[in->rs2], f->x[in->rs3] };
		struct sim_cost cost = { 0, 0 }; /* no handler computes from it */
		f->cur = &e;
		f->cur_pipe = info->pipe;
		if (sim_exec_table[in->op](f, &e, 0, &cost))
			return -1;
		if ((in->op == ISA_OP_LD_GM || in->op == ISA_OP_LDW_GM) &&
		    log_load(on, f->x[in->rd])) {
			snprintf(f->err, f->errlen, "out of memory");
			return -1;
		}
		f->st->scalar_insns++;
		if (info->flags & ISA_F_END)
			return 0;
	}
}

int sim_func_block(struct sim_device *dev, struct sim_core *on, struct sim_launch *l,
		   int64_t block_idx)
{
	struct sim_core *f = dev->func;
	memset(f->x, 0, sizeof f->x);
	f->pc = 0;
	f->mask[0] = f->mask[1] = ~UINT64_C(0);
	f->fmatrix.set = 0;
	f->id = on->id;
	f->launch = l;
	f->block_idx = block_idx;
	f->st->scalar_insns = 0;
	f->insns_at_start = 0;
	f->err[0] = 0;
	f->cur = NULL;
	on->ld_n = on->ld_next = 0;
	on->ld_replay = 1;
	if (on->func_err)
		on->func_err[0] = 0;
	/* the handlers do their data work for this core alone */
	dev->timing_only = 0;
	int rc = run_block(f, on, insn_bound(dev));
	dev->timing_only = 1;
	f->cur = NULL;
	f->launch = NULL;
	if (rc && defer_failure(on, f->err[0] ? f->err : "out of memory"))
		return -1;
	return 0;
}
