/* dryrun.c: one block's time from its instruction stream (see dryrun.h). */
#include "dryrun.h"

#include <math.h>
#include <string.h>

/* Times are never NaN: a plain compare (fmax is a libm call here). */
static inline double dmax(double a, double b) { return a > b ? a : b; }

double sim_mem_bpc(const struct sim_costcfg *cc, int is_write, int from_hbm, double share)
{
	double r = cc->path_bpc[is_write ? SIM_PATH_GM_WR : SIM_PATH_GM_RD];
	double l2 = cc->l2_bpc / share, hbm = cc->hbm_bpc / share;
	r = fmin(r, l2);
	return from_hbm ? fmin(r, hbm) : r;
}

void sim_dryrun_init(struct sim_dryrun *d, const struct sim_costcfg *cc, int64_t queue_depth,
		     double share, uint32_t cold_regs)
{
	memset(d, 0, sizeof *d);
	d->cc = cc;
	d->share = share;
	d->cold_regs = cold_regs;
	d->qd = (int)(queue_depth < SIM_DRYRUN_QCAP ? queue_depth : SIM_DRYRUN_QCAP);
}

/* What the instruction costs its pipe, the memory at the block's share. */
static struct sim_cost dry_cost(const struct sim_dryrun *d, const struct isa_insn *in)
{
	uint64_t bytes;
	enum sim_path path;
	struct sim_cost c = sim_insn_cost_insn(d->cc, in, NULL, &bytes, &path);
	if (path == SIM_PATH_GM_RD) {
		int cold = in->rs1 >= 0 && in->rs1 < 32 && (d->cold_regs >> in->rs1 & 1);
		c = sim_mem_time(d->cc, bytes, cold ? bytes : 0, 0, d->share);
	} else if (path == SIM_PATH_GM_WR) { /* written through to main memory */
		c = sim_mem_time(d->cc, bytes, bytes, 1, d->share);
	}
	return c;
}

int sim_dryrun_step(struct sim_dryrun *d, const struct isa_insn *in)
{
	const struct isa_info *info = isa_info((unsigned)in->op);
	int sync = info && info->pipe == ISA_PIPE_SYNC && in->op != ISA_OP_BARRIER;
	if (!info || (sync && (in->src < 0 || in->src >= ISA_NPIPES || in->dst < 0 ||
			       in->dst >= ISA_NPIPES || in->ev < 0 ||
			       in->ev >= SIM_DRYRUN_EVENTS))) {
		d->unrunnable = 1; /* the simulator would refuse it */
		return -1;
	}
	double sc = (double)d->cc->scalar;
	unsigned p = info->pipe;
	d->insns++;
	if (sync)
		p = (unsigned)(in->op == ISA_OP_SET_FLAG ? in->src : in->dst);
	if (p == ISA_PIPE_S || p >= ISA_NPIPES) { /* scalar work, barriers */
		d->s += sc;
		return 0;
	}
	double issue = d->s;
	int64_t k = d->n[p]++;
	if (k >= d->qd) /* the queue is full until the instruction qd back starts */
		issue = dmax(issue, d->start[p][k % d->qd]);
	d->s = issue + sc;
	double start = dmax(issue, d->free[p]);
	if (in->op == ISA_OP_WAIT_FLAG) {
		start = dmax(start, d->flag[in->src][in->dst][in->ev]);
		d->free[p] = start;
	} else if (in->op == ISA_OP_SET_FLAG) {
		d->flag[in->src][in->dst][in->ev] = dmax(start, d->done[p]);
		d->free[p] = start;
	} else {
		struct sim_cost c = dry_cost(d, in);
		d->free[p] = start + (double)c.occ;
		d->done[p] = dmax(d->done[p], start + (double)(c.occ + c.lat));
	}
	d->start[p][k % d->qd] = start;
	return 0;
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
