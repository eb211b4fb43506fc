/* engine.c: discrete-event execution of a kernel on the device's AI cores.
 *
 * Time advances by events, one per instruction start, never by ticking:
 *  - the scalar unit of each core runs the program in order, executing scalar
 *    instructions itself (core.scalar_cycles each) and pushing the others
 *    into the in-order queue of their pipe; a full queue stalls it;
 *  - a pipe starts its head instruction once the pipe is free and the
 *    instruction was issued; the instruction's cost function gives how long
 *    the pipe stays busy (occ) and when the result is visible (lat);
 *  - set_flag raises its flag once everything its pipe started before it
 *    has completed (the pipe itself goes on: later DMAs keep streaming);
 *    wait_flag blocks its pipe until the flag is set, then clears it;
 *    barrier blocks its pipe (or, for all, the scalar unit) until drained.
 * Kernel launches are queued by sim_submit: a launch starts at its ready
 * time and hands its blocks to idle cores (lowest core id first); a core
 * that finishes a block takes the next block of the same launch, else of the
 * oldest started launch that has blocks left, else goes idle.  So launches of
 * different streams run side by side when cores are free.  Copies occupy
 * the PCIe link of their direction (or main memory, device to device).
 * All cores share one event queue ordered by (time, sequence number), so
 * shared resources (the L2 and main memory servers in gm.c) see requests in
 * time order.  The cores here only time their instructions: in full mode a
 * block's arithmetic runs all at once as the block starts, in program order
 * on one functional core (func.h), which computes what the hardware's order
 * computes when the flags are correct. */
#include "core.h"
#include "func.h"

#include <stdlib.h>
#include <string.h>

enum s_state { S_IDLE, S_RUN, S_WAIT_QUEUE, S_WAIT_FLAG, S_BARRIER, S_END };

#define EV_SCALAR 0xff
#define EV_FLAG 0xfe      /* a set_flag's flag rises */
#define EV_LAUNCH 0xfd    /* a launch reaches its ready time */
#define EV_COPY_DONE 0xfc /* a copy completes */

/* The engine is the device's scheduler state (struct sim_device). */
#define engine sim_device

static int push_ev(struct engine *g, uint64_t t, unsigned core, unsigned kind, uint32_t flag,
		   uint32_t pc, struct sim_launch *l)
{
	struct sim_event e = { t, core, (uint8_t)kind, 0, flag, pc, l };
	return evq_push(&g->evq, &e);
}

static int push(struct engine *g, uint64_t t, unsigned core, unsigned kind)
{
	return push_ev(g, t, core, kind, 0, 0, NULL);
}

static unsigned flag_index(const struct sim_device *dev, int64_t src, int64_t dst, int64_t ev)
{
	return (unsigned)((src * ISA_NPIPES + dst) * dev->cfg.core_event_ids + ev);
}

/* Inlined, the push too: as a call, its entry and exit alone were 1.5% of
 * a timing-mode MobileNetV2 run's instructions. */
static inline __attribute__((always_inline)) void schedule_pipe(struct engine *g,
								 struct sim_core *c, unsigned p,
								 uint64_t t)
{
	struct sim_pipe *pp = &c->pipe[p];
	if (pp->scheduled || pp->count == 0)
		return;
	pp->scheduled = 1;
	struct sim_event e = { t, c->id, (uint8_t)p, 0, 0, 0, NULL };
	if (evq_push(&g->evq, &e))
		g->failed = 1;
}

/* Flag fi of core c, for pipe dst, rises at time t (set_flag at pc): wake
 * whoever waits.  dst comes with fi: dividing it out of fi (two divisions
 * by core.event_ids) cost more than the rest of this. */
static int raise_flag(struct engine *g, struct sim_core *c, unsigned fi, unsigned dst, uint64_t t,
		      uint32_t pc)
{
	struct sim_device *dev = c->dev;
	if (c->flags[fi]) {
		unsigned ne = (unsigned)dev->cfg.core_event_ids;
		unsigned src = fi / ne / ISA_NPIPES;
		if (dev->err[0] == 0)
			snprintf(dev->err, dev->errlen,
				 "core %u, pipe %s, pc %u: set_flag src=%s, dst=%s, ev=%u: flag already "
				 "set: a second set_flag before its wait_flag",
				 c->id, isa_pipe_name((enum isa_pipe)src), pc, isa_enum_pipe[src],
				 isa_enum_pipe[dst], fi % ne);
		return -1;
	}
	c->flags[fi] = 1;
	if (dst == ISA_PIPE_S) {
		if (c->s_state == S_WAIT_FLAG && c->s_wait_flag == fi) {
			c->s_state = S_RUN;
			c->st->wait_cycles[ISA_PIPE_S] += t > c->s_wait_since ? t - c->s_wait_since : 0;
			c->s_time = c->s_time > t ? c->s_time : t;
			return push(g, c->s_time, c->id, EV_SCALAR);
		}
		return 0;
	}
	struct sim_pipe *w = &c->pipe[dst];
	if (w->waiting && w->waiting_flag == fi) {
		w->waiting = 0;
		w->scheduled = 0;
		c->st->wait_cycles[dst] += t - w->wait_since;
		schedule_pipe(g, c, dst, t);
	}
	return 0;
}

static int pipes_drained(const struct sim_core *c, uint64_t *done)
{
	uint64_t d = 0;
	for (unsigned p = 0; p < ISA_NPIPES; p++) {
		if (c->pipe[p].count)
			return 0;
		if (c->pipe[p].done_at > d)
			d = c->pipe[p].done_at;
	}
	*done = d;
	return 1;
}

/* The scalar unit waits for the pipes: wake it once they are drained. */
static void maybe_wake_drain(struct engine *g, struct sim_core *c, uint64_t now)
{
	uint64_t done;
	if ((c->s_state == S_BARRIER || c->s_state == S_END) && pipes_drained(c, &done)) {
		int was_end = c->s_state == S_END;
		c->s_state = S_RUN;
		c->s_time = done > now ? done : now;
		if (was_end)
			c->s_state = S_END; /* the scalar event finishes the block */
		if (push(g, c->s_time, c->id, EV_SCALAR))
			g->failed = 1;
	}
}

/* Start the next block of launch l on idle core c at time t. */
static int start_block(struct engine *g, struct sim_core *c, struct sim_launch *l, uint64_t t)
{
	memset(c->x, 0, sizeof c->x);
	memset(c->flags, 0, ISA_NPIPES * ISA_NPIPES * (size_t)c->dev->cfg.core_event_ids);
	c->pc = 0;
	c->mask[0] = c->mask[1] = ~UINT64_C(0);
	c->fmatrix.set = 0;
	c->launch = l;
	c->st = &l->core[c->id];
	c->block_idx = l->next_block++;
	c->block_start = t;
	c->ld_replay = 0;
	if (c->func_err)
		c->func_err[0] = 0;
	/* full mode: the block's arithmetic, all of it now (func.h) */
	if (g->func && g->opt.mode == SIM_MODE_FULL && sim_func_block(g, c, l, c->block_idx))
		return -1;
	if (c->ic_seq != l->seq) {
		c->ic_seq = l->seq;
		c->ic_base = c->ic_end;
	}
	c->ic_first = UINT64_MAX - c->ic_ipl; /* no line: the first instruction fetches one */
	c->insns_at_start = c->st->scalar_insns;
	c->s_state = S_RUN;
	c->s_time = t;
	c->cur = NULL;
	for (unsigned p = 0; p < ISA_NPIPES; p++) {
		struct sim_pipe *pp = &c->pipe[p];
		pp->head = pp->count = 0;
		pp->scheduled = pp->waiting = 0;
		pp->free_at = pp->done_at = t;
	}
	c->st->blocks++;
	if (!l->started) {
		l->started = 1;
		l->start_cycle = t;
	}
	return push(g, t, c->id, EV_SCALAR);
}

/* Hand blocks of started launches, oldest first, to idle cores. */
static int dispatch(struct engine *g, uint64_t t)
{
	size_t k = 0;
	for (int64_t i = 0; i < g->cfg.core_count && k < g->nactive; i++) {
		struct sim_core *c = &g->cores[i];
		if (c->s_state != S_IDLE)
			continue;
		while (k < g->nactive && g->active[k]->next_block >= g->active[k]->block_dim)
			k++;
		if (k < g->nactive && start_block(g, c, g->active[k], t))
			return -1;
	}
	return 0;
}

static void complete(struct engine *g, struct sim_launch *l, uint64_t t)
{
	l->end_cycle = t;
	if (l->kind == SIM_LAUNCH_KERNEL) {
		memset(&l->total, 0, sizeof l->total);
		l->ncores = 0;
		for (int64_t i = 0; i < g->cfg.core_count; i++) {
			const struct sim_core_stats *s = &l->core[i];
			l->ncores += s->blocks > 0;
#define STAT_PIPE(name, unit, doc)             \
	for (int p = 0; p < ISA_NPIPES; p++)   \
		l->total.name[p] += s->name[p];
#define STAT_CORE(name, unit, doc) l->total.name += s->name;
#include "stats.def"
		}
		l->total.cycles = t - l->start_cycle;
		for (size_t i = 0; i < g->nactive; i++)
			if (g->active[i] == l) {
				memmove(&g->active[i], &g->active[i + 1],
					(g->nactive - i - 1) * sizeof *g->active);
				g->nactive--;
				break;
			}
	}
	if (g->done)
		g->done(g->done_ctx, l);
}

/* Where a byte-by-byte search of f[0, n) for a nonzero byte may start: the
 * first 8 bytes with one set, else the tail after the last whole 8.  Every
 * block's end checks its core's flags (144 on the 910) and almost always
 * finds none set: byte by byte from 0, that was 1.5% of a timing-mode
 * MobileNetV2 run's instructions. */
static unsigned first_set(const uint8_t *f, unsigned n)
{
	unsigned i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, f + i, 8);
		if (w)
			return i;
	}
	return i;
}

/* End of a block once every pipe has drained at time t: the core takes
 * the next block of its launch, or of another, or goes idle. */
static int end_block(struct engine *g, struct sim_core *c, uint64_t t)
{
	struct sim_device *dev = c->dev;
	unsigned nflags = ISA_NPIPES * ISA_NPIPES * (unsigned)dev->cfg.core_event_ids;
	for (unsigned i = first_set(c->flags, nflags); i < nflags; i++)
		if (c->flags[i]) {
			unsigned ev = i % (unsigned)dev->cfg.core_event_ids;
			unsigned pair = i / (unsigned)dev->cfg.core_event_ids;
			c->cur = NULL;
			c->cur_pipe = ISA_PIPE_S;
			char msg[160];
			snprintf(msg, sizeof msg,
				 "block %lld ended with flag src=%s dst=%s ev=%u still set "
				 "(a set_flag without its wait_flag)",
				 (long long)c->block_idx, isa_enum_pipe[pair / ISA_NPIPES],
				 isa_enum_pipe[pair % ISA_NPIPES], ev);
			if (dev->err[0] == 0)
				snprintf(dev->err, dev->errlen, "core %u, pipe S, pc %llu: %s", c->id,
					 (unsigned long long)c->pc, msg);
			return -1;
		}
	if (c->func_err && c->func_err[0]) { /* its functional pass failed, the engine did not */
		if (dev->err[0] == 0)
			snprintf(dev->err, dev->errlen, "%s", c->func_err);
		return -1;
	}
	struct sim_launch *l = c->launch;
	c->st->cycles += t - c->block_start;
	l->blocks_done++;
	if (l->next_block < l->block_dim)
		return start_block(g, c, l, t);
	c->s_state = S_IDLE;
	c->launch = NULL;
	c->st = NULL;
	if (l->blocks_done == l->block_dim)
		complete(g, l, t);
	return dispatch(g, t);
}

/* Run the scalar unit of core c from time `now` until it blocks or yields.
 * What stays fixed while it runs (the kernel's instructions, the block's
 * start, the watchdog's limit, the queue depth, the statistics) and the pc
 * are kept in locals: through c, every store to a statistic made the
 * compiler load them again, and this loop was a fifth of a timing-mode run.
 * c->pc is written back before anything that reads or moves it (a scalar
 * handler, end_block, an error message) and before every return. */
static int run_scalar(struct engine *g, struct sim_core *c, uint64_t now)
{
	struct sim_device *dev = c->dev;
	const struct sim_kernel *k = c->launch->kernel;
	uint64_t t = c->s_time > now ? c->s_time : now;
	uint64_t sc = dev->cc.scalar;
	if (c->s_state == S_END) {
		uint64_t done;
		if (!pipes_drained(c, &done))
			return 0;
		return end_block(g, c, t > done ? t : done);
	}
	c->s_state = S_RUN;
	const struct isa_dec *insns = k->insns;
	const uint64_t ninsns = k->ninsns, block_start = c->block_start, limit = g->limit;
	/* the line of a pc and the tag of a line: shifts and masks where the sizes are powers
	 * of two (as every SoC's are), not two 64-bit divisions, which with the tag's miss
	 * were 7.6% of sim_drain's samples (perf, timing-mode MobileNetV2; 2.4% now) */
	const uint64_t ipl = c->ic_ipl, nlines = c->ic_lines;
	const int ipl_pow2 = (ipl & (ipl - 1)) == 0, nlines_pow2 = (nlines & (nlines - 1)) == 0;
	const unsigned ipl_shift = (unsigned)__builtin_ctzll(ipl | UINT64_C(1) << 63);
	const unsigned depth = (unsigned)dev->cfg.core_queue_depth;
	struct sim_core_stats *st = c->st;
	uint64_t pc = c->pc, ic_first = c->ic_first;
	for (;;) {
		/* per block (a kernel's run on one core), so a long run of many
		 * kernels is not cut; --max-cycles sets it in simrun */
		if (t - block_start > limit) {
			c->pc = pc;
			c->cur = NULL;
			snprintf(dev->err, dev->errlen,
				 "core %u, pipe S, pc %llu: watchdog: the kernel ran past %llu cycles "
				 "(--max-cycles; an endless loop?)",
				 c->id, (unsigned long long)c->pc, (unsigned long long)g->limit);
			return -1;
		}
		if (pc >= ninsns) {
			c->pc = pc;
			snprintf(dev->err, dev->errlen,
				 "core %u, pipe S, pc %llu: execution ran past the end of kernel '%s' "
				 "(%zu instructions; missing 'end'?)",
				 c->id, (unsigned long long)c->pc, k->name, k->ninsns);
			return -1;
		}
		/* a new instruction line: the instruction cache, whose miss
		 * stalls the scalar unit (a loop's lines stay; straight-line
		 * code misses on each) */
		if (pc - ic_first >= ipl) {
			c->ic_line = ipl_pow2 ? pc >> ipl_shift : pc / ipl;
			c->ic_first = ic_first = c->ic_line * ipl;
			st->icache_reqs++;
			if (nlines) {
				uint64_t *tag = &c->ic_tag[nlines_pow2 ? c->ic_line & (nlines - 1)
								       : c->ic_line % nlines];
				uint64_t key = c->ic_base + c->ic_line + 1;
				if (*tag != key) {
					*tag = key;
					if (key > c->ic_end)
						c->ic_end = key;
					st->icache_misses++;
					t += dev->cc.icache_miss;
					st->busy_cycles[ISA_PIPE_S] += dev->cc.icache_miss;
				}
			}
		}
		const struct isa_dec *in = &insns[pc];
		const struct isa_info *info = &isa_table[in->op];
		unsigned p = info->pipe;
		if (p == ISA_PIPE_SYNC) {
			if (in->op == ISA_OP_BARRIER) {
				p = (unsigned)in->pipe;
			} else {
				if (in->src == ISA_PIPE_ALL || in->dst == ISA_PIPE_ALL ||
				    in->ev >= dev->cfg.core_event_ids) {
					struct sim_qent e = { in, (uint32_t)pc, t, c->x[in->rd],
							      c->x[in->rs1], c->x[in->rs2],
							      c->x[in->rs3] };
					c->pc = pc;
					c->cur = &e;
					c->cur_pipe = ISA_PIPE_S;
					if (in->src == ISA_PIPE_ALL || in->dst == ISA_PIPE_ALL)
						return sim_fail(c, "set_flag/wait_flag take one pipe, not all");
					return sim_fail(c, "event id %lld out of range: %s has ids 0..%lld",
							(long long)in->ev, dev->cfg.name,
							(long long)dev->cfg.core_event_ids - 1);
				}
				p = (unsigned)(in->op == ISA_OP_SET_FLAG ? in->src : in->dst);
			}
		}
		if (p == ISA_PIPE_S || p == ISA_PIPE_ALL) {
			struct sim_qent e = { in, (uint32_t)pc, t, c->x[in->rd], c->x[in->rs1],
					      c->x[in->rs2], c->x[in->rs3] };
			c->cur = &e;
			c->cur_pipe = ISA_PIPE_S;
			/* Executes in the scalar unit.  Sync with other pipes must
			 * happen at the right time: yield until the clock reaches t. */
			int sync = info->pipe == ISA_PIPE_SYNC;
			if (sync && t > now) {
				c->pc = pc;
				c->s_time = t;
				return push(g, t, c->id, EV_SCALAR);
			}
			if (in->op == ISA_OP_BARRIER) {
				if (p == ISA_PIPE_ALL) {
					uint64_t done;
					if (!pipes_drained(c, &done) || done > t) {
						c->pc = pc;
						c->s_state = S_BARRIER;
						c->s_time = t;
						c->s_wait_since = t;
						maybe_wake_drain(g, c, now);
						return 0;
					}
				}
				pc++;
			} else if (in->op == ISA_OP_SET_FLAG) {
				unsigned fi = flag_index(dev, in->src, in->dst, in->ev);
				if (raise_flag(g, c, fi, (unsigned)in->dst, t, (uint32_t)pc)) {
					c->pc = pc;
					return -1;
				}
				pc++;
			} else if (in->op == ISA_OP_WAIT_FLAG) {
				unsigned fi = flag_index(dev, in->src, in->dst, in->ev);
				if (!c->flags[fi]) {
					c->pc = pc;
					c->s_state = S_WAIT_FLAG;
					c->s_wait_flag = fi;
					c->s_time = t;
					c->s_wait_since = t;
					return 0;
				}
				c->flags[fi] = 0;
				pc++;
			} else {
				struct sim_cost cost = sim_insn_price(&dev->cc, in);
				c->pc = pc + 1; /* a handler may branch */
				if (sim_exec_table[in->op](c, &e, t, &cost))
					return -1;
				pc = c->pc;
				/* a scalar load from GM stalls the scalar unit */
				t += cost.lat;
				st->busy_cycles[ISA_PIPE_S] += cost.lat;
			}
			st->scalar_insns++;
			st->insns[ISA_PIPE_S]++;
			st->busy_cycles[ISA_PIPE_S] += sc;
			t += sc;
			if (info->flags & ISA_F_END) {
				c->pc = pc;
				c->s_time = t;
				c->s_state = S_END;
				uint64_t done;
				if (pipes_drained(c, &done))
					return end_block(g, c, t > done ? t : done);
				return 0;
			}
			continue;
		}
		/* Issue into pipe p's queue: the entry is written in place. */
		struct sim_pipe *pp = &c->pipe[p];
		if (pp->count == depth) {
			c->pc = pc;
			c->s_state = S_WAIT_QUEUE;
			c->s_wait_pipe = p;
			c->s_time = t;
			c->s_wait_since = t;
			return 0;
		}
		/* head < depth and count < depth: one wrap at most (the division
		 * here and in retire_head took 6% of sim_drain's samples) */
		unsigned slot = pp->head + pp->count;
		if (slot >= depth)
			slot -= depth;
		struct sim_qent *q = &pp->q[slot];
		q->in = in;
		q->pc = (uint32_t)pc;
		q->issue = t;
		q->rd = c->x[in->rd];
		q->rs1 = c->x[in->rs1];
		q->rs2 = c->x[in->rs2];
		q->rs3 = c->x[in->rs3];
		pp->count++;
		pc++;
		st->scalar_insns++;
		st->busy_cycles[ISA_PIPE_S] += sc;
		if (!pp->scheduled && !pp->waiting)
			schedule_pipe(g, c, p, t > pp->free_at ? t : pp->free_at);
		t += sc;
	}
}

/* The scalar unit of c, stalled on a full queue that just lost its head,
 * goes on at `now`. */
static __attribute__((noinline)) void wake_queue_full(struct engine *g, struct sim_core *c,
						      uint64_t now)
{
	c->s_state = S_RUN;
	c->st->queue_full_cycles += now > c->s_wait_since ? now - c->s_wait_since : 0;
	c->s_time = c->s_time > now ? c->s_time : now;
	if (push(g, c->s_time, c->id, EV_SCALAR))
		g->failed = 1;
}

/* Retire the head of pipe p at time `now`; wakes a scalar unit stalled on
 * the full queue.  Inlined, the rare wake apart: as a call, entering and
 * leaving it cost more than the retiring. */
static inline void retire_head(struct engine *g, struct sim_core *c, unsigned p, uint64_t now)
{
	struct sim_pipe *pp = &c->pipe[p];
	if (++pp->head == (unsigned)c->dev->cfg.core_queue_depth)
		pp->head = 0;
	pp->count--;
	c->st->insns[p]++;
	if (c->s_state == S_WAIT_QUEUE && c->s_wait_pipe == p)
		wake_queue_full(g, c, now);
}

static int run_pipe(struct engine *g, struct sim_core *c, unsigned p, uint64_t now)
{
	struct sim_pipe *pp = &c->pipe[p];
	struct sim_device *dev = c->dev;
	pp->scheduled = 0;
	while (pp->count) {
		const struct sim_qent *e = &pp->q[pp->head];
		const struct isa_dec *in = e->in;
		uint64_t start = now;
		if (e->issue > start)
			start = e->issue;
		if (pp->free_at > start)
			start = pp->free_at;
		c->cur = e;
		c->cur_pipe = p;
		if (in->op == ISA_OP_WAIT_FLAG || in->op == ISA_OP_SET_FLAG ||
		    in->op == ISA_OP_BARRIER) {
			/* barrier waits for completion, not just issue */
			if (in->op == ISA_OP_BARRIER && pp->done_at > start)
				start = pp->done_at;
			if (start > now) {
				schedule_pipe(g, c, p, start);
				return 0;
			}
			if (in->op == ISA_OP_WAIT_FLAG) {
				unsigned fi = flag_index(dev, in->src, in->dst, in->ev);
				if (!c->flags[fi]) {
					pp->waiting = 1;
					pp->waiting_flag = fi;
					pp->wait_since = now;
					return 0;
				}
				c->flags[fi] = 0;
			} else if (in->op == ISA_OP_SET_FLAG) {
				/* The flag rises once everything this pipe started has
				 * completed; the pipe itself goes on (a DMA engine keeps
				 * later transfers streaming while earlier ones land). */
				unsigned fi = flag_index(dev, in->src, in->dst, in->ev);
				if (pp->done_at > now) {
					struct sim_event f = { pp->done_at, c->id, EV_FLAG,
							       (uint8_t)in->dst, fi, e->pc, NULL };
					if (evq_push(&g->evq, &f))
						return -1;
				} else if (raise_flag(g, c, fi, (unsigned)in->dst, now, e->pc)) {
					return -1;
				}
			}
			pp->free_at = now;
			retire_head(g, c, p, now);
			continue;
		}
		if (start > now) {
			schedule_pipe(g, c, p, start);
			return 0;
		}
		struct sim_cost cost = sim_insn_price(&dev->cc, in);
		if (sim_exec_table[in->op](c, e, now, &cost))
			return -1;
		if (dev->opt.trace) {
			char text[256];
			isa_disasm(in, text, sizeof text);
			fprintf(dev->opt.trace, "%llu\t%llu\t%llu\tcore%u\t%s\t%u\t%s\n",
				(unsigned long long)now, (unsigned long long)(now + cost.occ),
				(unsigned long long)(now + cost.occ + cost.lat), c->id,
				isa_pipe_name((enum isa_pipe)p), e->pc, text);
		}
		if (dev->opt.on_span && cost.occ)
			dev->opt.on_span(dev->opt.span_ctx, c->id, p, now, now + cost.occ);
		pp->free_at = now + cost.occ;
		if (pp->free_at + cost.lat > pp->done_at)
			pp->done_at = pp->free_at + cost.lat;
		c->st->busy_cycles[p] += cost.occ;
		retire_head(g, c, p, now);
	}
	maybe_wake_drain(g, c, now);
	return 0;
}

/* Every busy core is blocked and nothing can wake it. */
static struct sim_launch *report_deadlock(struct sim_device *dev)
{
	struct sim_launch *first = NULL;
	size_t n = (size_t)snprintf(dev->err, dev->errlen, "deadlock: nothing can make progress.");
	for (int64_t i = 0; i < dev->cfg.core_count && n < dev->errlen; i++) {
		struct sim_core *c = &dev->cores[i];
		if (c->s_state == S_IDLE)
			continue;
		if (!first)
			first = c->launch;
		static const char *const st[] = { "idle", "running", "stalled on a full queue",
						  "in wait_flag", "in barrier all", "at end" };
		char text[256] = "end reached";
		if (c->pc < c->launch->kernel->ninsns)
			isa_disasm(&c->launch->kernel->insns[c->pc], text, sizeof text);
		n += (size_t)snprintf(dev->err + n, dev->errlen - n,
				      "\n  core %u, pipe S, pc %llu: %s (scalar unit %s)", c->id,
				      (unsigned long long)c->pc, text, st[c->s_state]);
		for (unsigned p = 0; p < ISA_NPIPES && n < dev->errlen; p++) {
			struct sim_pipe *pp = &c->pipe[p];
			if (!pp->count)
				continue;
			const struct sim_qent *e = &pp->q[pp->head];
			isa_disasm(e->in, text, sizeof text);
			n += (size_t)snprintf(dev->err + n, dev->errlen - n,
					      "\n  core %u, pipe %s, pc %u: %s%s", c->id,
					      isa_pipe_name((enum isa_pipe)p), e->pc, text,
					      pp->waiting ? " (waits for a flag no one will set)"
							  : "");
		}
	}
	return first;
}

/* A launch reaches its ready time: kernels join the active list and take
 * idle cores; copies occupy their link and complete later. */
static int start_launch(struct engine *g, struct sim_launch *l, uint64_t t)
{
	if (l->kind == SIM_LAUNCH_KERNEL) {
		if (g->nactive == g->capactive) {
			size_t cap = g->capactive ? 2 * g->capactive : 16;
			struct sim_launch **a = realloc(g->active, cap * sizeof *a);
			if (!a)
				return -1;
			g->active = a;
			g->capactive = cap;
		}
		g->active[g->nactive++] = l;
		return dispatch(g, t);
	}
	double start, end;
	if (l->dir == SIM_COPY_D2D) { /* read and write through main memory */
		start = g->hbm_free > (double)t ? g->hbm_free : (double)t;
		g->hbm_free = start + 2.0 * (double)l->bytes / g->cc.hbm_bpc;
		end = g->hbm_free + (double)g->cc.hbm_lat;
	} else { /* PCIe: transfers of one direction queue; latency overlaps */
		double *link = &g->pcie_free[l->dir == SIM_COPY_D2H];
		start = *link > (double)t ? *link : (double)t;
		*link = start + (double)l->bytes / g->cc.pcie_bpc;
		end = *link + (double)g->cc.pcie_lat;
	}
	l->started = 1;
	l->start_cycle = (uint64_t)start;
	uint64_t e = (uint64_t)end;
	return push_ev(g, (double)e < end ? e + 1 : e, 0, EV_COPY_DONE, 0, 0, l);
}

/* The copy's data moves when it completes, so earlier work of its stream
 * has finished; a host write to device memory drops the L2 lines it
 * overwrites (the link writes main memory directly). */
static void finish_copy(struct engine *g, struct sim_launch *l, uint64_t t)
{
	if (l->bytes) {
		if (l->dir == SIM_COPY_H2D)
			sim_gm_write(g, l->dev, l->host, l->bytes);
		else if (l->dir == SIM_COPY_D2H)
			sim_gm_read(g, l->dev, l->host, l->bytes);
		else
			memmove(sim_gm_ptr(g, l->dev, l->bytes), sim_gm_ptr(g, l->src, l->bytes),
				l->bytes);
	}
	if (l->dir != SIM_COPY_D2H)
		sim_l2_invalidate(g, l->dev, l->bytes);
	complete(g, l, t);
}

int sim_submit(struct sim_device *dev, struct sim_launch *l, char *err, size_t errlen)
{
	l->seq = ++dev->launch_seq;
	l->started = 0;
	l->next_block = l->blocks_done = 0;
	l->start_cycle = l->end_cycle = 0;
	l->ncores = 0;
	memset(&l->total, 0, sizeof l->total);
	if (l->kind == SIM_LAUNCH_KERNEL) {
		if (!l->kernel || l->kernel->ninsns == 0) {
			snprintf(err, errlen, "launch without a kernel");
			return -1;
		}
		if (l->block_dim < 1) {
			snprintf(err, errlen, "kernel '%s': block_dim must be at least 1",
				 l->kernel->name);
			return -1;
		}
		if (l->nargs > SIM_MAX_ARGS) {
			snprintf(err, errlen, "kernel '%s': at most %d kernel arguments",
				 l->kernel->name, SIM_MAX_ARGS);
			return -1;
		}
		free(l->core);
		l->core = calloc((size_t)dev->cfg.core_count, sizeof *l->core);
		if (!l->core) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	} else {
		static const char *const dirs[] = { "host to device", "device to host",
						    "device to device" };
		if (l->dir > SIM_COPY_D2D || (l->dir != SIM_COPY_D2D && !l->host && l->bytes) ||
		    (l->bytes && !sim_gm_ptr(dev, l->dev, l->bytes)) ||
		    (l->dir == SIM_COPY_D2D && l->bytes && !sim_gm_ptr(dev, l->src, l->bytes))) {
			snprintf(err, errlen,
				 "copy of %llu bytes %s: device address 0x%llx%s is not inside one "
				 "allocation", (unsigned long long)l->bytes,
				 dirs[l->dir <= SIM_COPY_D2D ? l->dir : 0],
				 (unsigned long long)l->dev, l->dir == SIM_COPY_D2D ? " or its source" : "");
			return -1;
		}
	}
	uint64_t t = l->ready > dev->now ? l->ready : dev->now;
	if (push_ev(dev, t, 0, EV_LAUNCH, 0, 0, l)) {
		snprintf(err, errlen, "out of memory in the event queue");
		return -1;
	}
	return 0;
}

void sim_launch_release(struct sim_launch *l)
{
	free(l->core);
	l->core = NULL;
}

/* After an error: drop every pending event and leave the cores idle. */
static void reset(struct engine *g)
{
	evq_clear(&g->evq);
	g->nactive = 0;
	for (int64_t i = 0; i < g->cfg.core_count; i++) {
		struct sim_core *c = &g->cores[i];
		c->s_state = S_IDLE;
		c->launch = NULL;
		c->st = NULL;
		c->cur = NULL;
	}
}

int sim_drain(struct sim_device *dev, void (*done)(void *ctx, struct sim_launch *l), void *ctx,
	      struct sim_launch **failed, char *err, size_t errlen)
{
	struct engine *g = dev;
	g->limit = dev->opt.max_cycles ? dev->opt.max_cycles : UINT64_C(100000000000);
	g->max_insns = dev->opt.max_insns ? dev->opt.max_insns : SIM_MAX_BLOCK_INSNS;
	g->drain_start = dev->now;
	g->done = done;
	g->done_ctx = ctx;
	g->failed = 0;
	dev->errbuf[0] = 0;
	struct sim_launch *bad = NULL;
	int rc = 0;
	while (!rc && g->evq.n) {
		/* the event's fields are read before its handler runs: a push there may
		 * reuse its slot */
		const struct sim_event *ev = &g->evq.ev[evq_take_slot(&g->evq)];
		uint64_t t = ev->t;
		unsigned kind = ev->kind;
		struct sim_core *c = &dev->cores[ev->core];
		dev->now = t > dev->now ? t : dev->now;
		if (kind < ISA_NPIPES) {
			rc = run_pipe(g, c, kind, t);
			bad = c->launch;
		} else if (kind == EV_FLAG) {
			rc = raise_flag(g, c, ev->flag, ev->pipe, t, ev->pc);
			bad = c->launch;
		} else if (kind == EV_SCALAR) {
			rc = run_scalar(g, c, t);
			bad = c->launch;
		} else if (kind == EV_LAUNCH) {
			struct sim_launch *l = ev->l;
			rc = start_launch(g, l, t);
			bad = l;
		} else {
			finish_copy(g, ev->l, t);
		}
		if (g->failed && !rc) {
			snprintf(dev->err, dev->errlen, "out of memory in the event queue");
			rc = -1;
		}
	}
	if (!rc)
		for (int64_t i = 0; i < dev->cfg.core_count; i++)
			if (dev->cores[i].s_state != S_IDLE) {
				bad = report_deadlock(dev);
				rc = -1;
				break;
			}
	g->done = NULL;
	if (rc) {
		if (dev->errbuf[0] == 0)
			snprintf(dev->errbuf, sizeof dev->errbuf, "out of memory");
		snprintf(err, errlen, "%s", dev->errbuf);
		if (failed)
			*failed = bad;
		reset(g);
	}
	return rc;
}
