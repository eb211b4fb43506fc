/* dryrun.c: one block's time from its instruction stream (see dryrun.h). */
#include "dryrun.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

/* Times are never NaN: a plain compare (fmax is a libm call here). */
static inline double dmax(double a, double b) { return a > b ? a : b; }

void sim_dryrun_init(struct sim_dryrun *d, const struct sim_costcfg *cc, int64_t queue_depth,
		     double share, uint32_t cold_regs)
{
	memset(d, 0, sizeof *d);
	d->cc = cc;
	d->share = share;
	d->cold_regs = cold_regs;
	d->qd = (int)(queue_depth < SIM_DRYRUN_QCAP ? queue_depth : SIM_DRYRUN_QCAP);
}

/* A GM transfer at the block's share of the L2 and main memory (cold: the
 * read comes from main memory); anything else costs c, as sim_insn_cost
 * priced it. */
static struct sim_cost at_share(const struct sim_dryrun *d, struct sim_cost c, uint64_t bytes,
				enum sim_path path, int cold)
{
	if (path == SIM_PATH_GM_RD) {
		return sim_mem_time(d->cc, bytes, cold ? bytes : 0, 0, d->share,
				    d->hbm_share > 0 ? d->hbm_share : d->share);
	}
	if (path == SIM_PATH_GM_WR) /* written through to main memory */
		return sim_mem_time(d->cc, bytes, bytes, 1, d->share, d->share);
	return c;
}

/* Issue an instruction of pipe p (set_flag/wait_flag already mapped to
 * theirs) costing c, the ordering the engine gives it. */
static inline __attribute__((always_inline)) void issue(struct sim_dryrun *d, unsigned p,
							int64_t op, int64_t src, int64_t dst,
							int64_t ev, struct sim_cost c)
{
	double sc = (double)d->cc->scalar;
	d->insns++;
	if (op == ISA_OP_BARRIER && p >= ISA_NPIPES) /* pipe=all: the core drains */
		d->s = sim_dryrun_time(d);
	if (p == ISA_PIPE_S || p >= ISA_NPIPES) {
		d->s += sc;
		return;
	}
	double at = d->s;
	int64_t k = d->n[p]++;
	int qi = d->qi[p]; /* k % qd (a division per instruction was a tenth of a step) */
	d->qi[p] = qi + 1 == d->qd ? 0 : qi + 1;
	if (k >= d->qd) /* the queue is full until the instruction qd back starts */
		at = dmax(at, d->start[p][qi]);
	d->s = at + sc;
	double start = dmax(at, d->free[p]);
	if (op == ISA_OP_BARRIER) { /* one pipe: everything it started completes first */
		start = dmax(start, d->done[p]);
		d->free[p] = start;
	} else if (op == ISA_OP_WAIT_FLAG) {
		start = dmax(start, d->flag[src][dst][ev]);
		d->free[p] = start;
	} else if (op == ISA_OP_SET_FLAG) {
		d->flag[src][dst][ev] = dmax(start, d->done[p]);
		d->free[p] = start;
	} else {
		d->free[p] = start + (double)c.occ;
		d->done[p] = dmax(d->done[p], start + (double)(c.occ + c.lat));
	}
	d->start[p][qi] = start;
}

/* A flag the dry run can follow: one pipe each side, an event id it tracks. */
static int flag_ok(int64_t src, int64_t dst, int64_t ev)
{
	return src >= 0 && src < ISA_NPIPES && dst >= 0 && dst < ISA_NPIPES && ev >= 0 &&
	       ev < SIM_DRYRUN_EVENTS;
}

void sim_dryrun_scalar(struct sim_dryrun *d)
{
	d->insns++;
	d->s += (double)d->cc->scalar;
}

int sim_dryrun_flag(struct sim_dryrun *d, int64_t op, int64_t src, int64_t dst, int64_t ev)
{
	if (!flag_ok(src, dst, ev)) {
		d->unrunnable = 1; /* the simulator would refuse it */
		return -1;
	}
	/* a flag costs nothing but its ordering (sim_insn_cost) */
	issue(d, sim_flag_pipe(op, src, dst), op, src, dst, ev, (struct sim_cost){ 0, 0 });
	return 0;
}

int sim_dryrun_step(struct sim_dryrun *d, const struct isa_insn *in)
{
	const struct isa_info *info = isa_info((unsigned)in->op);
	if (info && info->pipe == ISA_PIPE_S) { /* the common case: nothing to price */
		sim_dryrun_scalar(d);
		return 0;
	}
	if (in->op == ISA_OP_SET_FLAG || in->op == ISA_OP_WAIT_FLAG)
		return sim_dryrun_flag(d, in->op, in->src, in->dst, in->ev);
	int sync = info && info->pipe == ISA_PIPE_SYNC && in->op != ISA_OP_BARRIER;
	if (!info || (sync && !flag_ok(in->src, in->dst, in->ev))) {
		d->unrunnable = 1; /* the simulator would refuse it */
		return -1;
	}
	unsigned p;
	uint64_t bytes;
	enum sim_path path;
	struct sim_cost c = sim_insn_cost_insn(d->cc, in, &p, &bytes, &path);
	int cold = in->rs1 >= 0 && in->rs1 < 32 && (d->cold_regs >> in->rs1 & 1);
	if (path == SIM_PATH_GM_RD) {
		cold &= !d->warm_next;
		d->warm_next = 0;
	}
	issue(d, p, in->op, in->src, in->dst, in->ev, at_share(d, c, bytes, path, cold));
	return 0;
}

int sim_dryrun_kernel(struct sim_dryrun *d, const struct sim_kernel *k, unsigned block_idx,
		      unsigned block_dim, const int64_t *args, unsigned nargs, uint64_t max_insns,
		      char *err, size_t errlen)
{
	struct sim_launch l;
	struct sim_core c;
	memset(&l, 0, sizeof l);
	memset(&c, 0, sizeof c);
	l.kernel = k;
	l.block_dim = block_dim;
	l.nargs = nargs < SIM_MAX_ARGS ? nargs : SIM_MAX_ARGS;
	memcpy(l.args, args, l.nargs * sizeof *args);
	c.launch = &l;
	c.block_idx = block_idx;
	c.err = err;
	c.errlen = errlen;
	if (err && errlen)
		err[0] = 0;
	c.cur_pipe = ISA_PIPE_S;
	for (uint64_t n = 0;; n++) {
		if (c.pc >= k->ninsns || n == max_insns) {
			if (err)
				snprintf(err, errlen, "kernel '%s', block %u, pc %llu: %s", k->name,
					 block_idx, (unsigned long long)c.pc,
					 n == max_insns ? "past the instruction limit (an endless loop?)"
							: "ran past the end (missing 'end'?)");
			return -1;
		}
		const struct isa_dec *in = &k->insns[c.pc];
		const struct isa_info *info = &isa_table[in->op];
		struct sim_qent e = { in, (uint32_t)c.pc, 0, c.x[in->rd], c.x[in->rs1], c.x[in->rs2],
				      c.x[in->rs3] };
		c.cur = &e;
		unsigned p;
		uint64_t bytes;
		enum sim_path path;
		struct sim_cost cost = sim_insn_cost(d->cc, in, &p, &bytes, &path);
		int sync = info->pipe == ISA_PIPE_SYNC && in->op != ISA_OP_BARRIER;
		if (sync && !flag_ok(in->src, in->dst, in->ev)) {
			d->unrunnable = 1;
			return sim_fail(&c, "a flag the simulator refuses");
		}
		c.pc++;
		if (info->pipe == ISA_PIPE_S) {
			if (in->op == ISA_OP_LD_GM || in->op == ISA_OP_LDW_GM) {
				c.x[in->rd] = 0; /* no data in a dry run */
				c.x[0] = 0;
			} else if (sim_exec_table[in->op](&c, &e, 0, &cost)) {
				return -1;
			}
			d->s += (double)cost.lat; /* a load from GM stalls the scalar unit */
		}
		int cold = 0;
		if (path == SIM_PATH_GM_RD && d->cold) /* DMA bursts count 32-byte blocks */
			cold = d->cold(d->cold_ctx, (uint64_t)e.rs1, in->nburst, (uint64_t)in->len * 32,
				       ((uint64_t)in->len + in->sgap) * 32);
		issue(d, p, in->op, in->src, in->dst, in->ev, at_share(d, cost, bytes, path, cold));
		if (info->flags & ISA_F_END)
			return 0;
	}
}

double sim_dryrun_time(const struct sim_dryrun *d)
{
	if (d->unrunnable)
		return HUGE_VAL;
	double t = d->s;
	for (unsigned p = 0; p < ISA_NPIPES; p++)
		t = dmax(t, dmax(d->free[p], d->done[p]));
	return t;
}
