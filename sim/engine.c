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
 * All cores share one event queue ordered by (time, sequence number), so
 * shared resources (the L2 and main memory servers in gm.c) see requests in
 * time order.  Functional effects happen when an instruction starts; with
 * correct flags that order is the order the hardware guarantees. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

enum s_state { S_RUN, S_WAIT_QUEUE, S_WAIT_FLAG, S_BARRIER, S_END, S_DONE };

#define EV_SCALAR 0xff
#define EV_FLAG 0xfe /* a set_flag's flag rises */

struct event {
	uint64_t t, seq;
	uint32_t core;
	uint8_t kind;     /* EV_SCALAR, EV_FLAG or a pipe */
	uint32_t flag, pc; /* EV_FLAG: which flag, and the set_flag's pc */
};

struct engine {
	struct sim_device *dev;
	struct event *heap;
	size_t n, cap;
	uint64_t seq, limit;
	int failed;
};

static int ev_less(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int push_ev(struct engine *g, uint64_t t, unsigned core, unsigned kind, uint32_t flag,
		   uint32_t pc)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 256;
		struct event *h = realloc(g->heap, cap * sizeof *h);
		if (!h)
			return -1;
		g->heap = h;
		g->cap = cap;
	}
	struct event e = { t, g->seq++, core, (uint8_t)kind, flag, pc };
	size_t i = g->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&e, &g->heap[p]))
			break;
		g->heap[i] = g->heap[p];
		i = p;
	}
	g->heap[i] = e;
	return 0;
}

static int push(struct engine *g, uint64_t t, unsigned core, unsigned kind)
{
	return push_ev(g, t, core, kind, 0, 0);
}

static struct event pop(struct engine *g)
{
	struct event top = g->heap[0], last = g->heap[--g->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct event *best = &last;
		if (l < g->n && ev_less(&g->heap[l], best))
			m = l, best = &g->heap[l];
		if (r < g->n && ev_less(&g->heap[r], best))
			m = r;
		if (m == i)
			break;
		g->heap[i] = g->heap[m];
		i = m;
	}
	if (g->n)
		g->heap[i] = last;
	return top;
}

static unsigned flag_index(const struct sim_device *dev, int64_t src, int64_t dst, int64_t ev)
{
	return (unsigned)((src * ISA_NPIPES + dst) * dev->cfg.core_event_ids + ev);
}

static void schedule_pipe(struct engine *g, struct sim_core *c, unsigned p, uint64_t t)
{
	struct sim_pipe *pp = &c->pipe[p];
	if (pp->scheduled || pp->count == 0)
		return;
	pp->scheduled = 1;
	if (push(g, t, c->id, p))
		g->failed = 1;
}

/* Flag fi of core c rises at time t (set_flag at pc): wake whoever waits. */
static int raise_flag(struct engine *g, struct sim_core *c, unsigned fi, uint64_t t, uint32_t pc)
{
	struct sim_device *dev = c->dev;
	unsigned ne = (unsigned)dev->cfg.core_event_ids;
	unsigned src = fi / ne / ISA_NPIPES, dst = fi / ne % ISA_NPIPES;
	if (c->flags[fi]) {
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

static void start_block(struct sim_core *c, int64_t block)
{
	memset(c->x, 0, sizeof c->x);
	c->pc = 0;
	c->mask[0] = c->mask[1] = ~UINT64_C(0);
	c->fmatrix.set = 0;
	c->block_idx = block;
	c->s_state = S_RUN;
	c->st->blocks++;
}

/* End of a block once every pipe has drained at time t: start the next
 * block of this core or finish. */
static int end_block(struct engine *g, struct sim_core *c, uint64_t t)
{
	struct sim_device *dev = c->dev;
	unsigned nflags = ISA_NPIPES * ISA_NPIPES * (unsigned)dev->cfg.core_event_ids;
	for (unsigned i = 0; i < nflags; i++)
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
	c->st->cycles = t - c->first_start;
	if (c->block_next < dev->block_dim) {
		start_block(c, c->block_next);
		c->block_next += dev->cfg.core_count < dev->block_dim ? (unsigned)dev->cfg.core_count
								     : dev->block_dim;
		c->s_time = t;
		return push(g, t, c->id, EV_SCALAR);
	}
	c->s_state = S_DONE;
	return 0;
}

/* Run the scalar unit of core c from time `now` until it blocks or yields. */
static int run_scalar(struct engine *g, struct sim_core *c, uint64_t now)
{
	struct sim_device *dev = c->dev;
	const struct sim_kernel *k = dev->kernel;
	uint64_t t = c->s_time > now ? c->s_time : now;
	uint64_t sc = (uint64_t)dev->cfg.core_scalar_cycles;
	if (c->s_state == S_END) {
		uint64_t done;
		if (!pipes_drained(c, &done))
			return 0;
		return end_block(g, c, t > done ? t : done);
	}
	c->s_state = S_RUN;
	for (;;) {
		if (t - dev->now > g->limit) {
			c->cur = NULL;
			snprintf(dev->err, dev->errlen,
				 "core %u, pipe S, pc %llu: watchdog: the kernel ran past %llu cycles "
				 "(an endless loop?)",
				 c->id, (unsigned long long)c->pc, (unsigned long long)g->limit);
			return -1;
		}
		if (c->pc >= k->ninsns) {
			snprintf(dev->err, dev->errlen,
				 "core %u, pipe S, pc %llu: execution ran past the end of kernel '%s' "
				 "(%zu instructions; missing 'end'?)",
				 c->id, (unsigned long long)c->pc, k->name, k->ninsns);
			return -1;
		}
		const struct isa_insn *in = &k->insns[c->pc];
		const struct isa_info *info = &isa_table[in->op];
		struct sim_qent e = { in, (uint32_t)c->pc, t, c->x[in->rd], c->x[in->rs1],
				      c->x[in->rs2], c->x[in->rs3] };
		c->cur = &e;
		c->cur_pipe = ISA_PIPE_S;
		unsigned p = info->pipe;
		if (info->pipe == ISA_PIPE_SYNC) {
			if (in->op == ISA_OP_BARRIER) {
				p = (unsigned)in->pipe;
			} else {
				if (in->src == ISA_PIPE_ALL || in->dst == ISA_PIPE_ALL)
					return sim_fail(c, "set_flag/wait_flag take one pipe, not all");
				if (in->ev >= dev->cfg.core_event_ids)
					return sim_fail(c, "event id %lld out of range: %s has ids 0..%lld",
							(long long)in->ev, dev->cfg.name,
							(long long)dev->cfg.core_event_ids - 1);
				p = (unsigned)(in->op == ISA_OP_SET_FLAG ? in->src : in->dst);
			}
		}
		if (p == ISA_PIPE_S || p == ISA_PIPE_ALL) {
			/* Executes in the scalar unit.  Sync with other pipes must
			 * happen at the right time: yield until the clock reaches t. */
			int sync = info->pipe == ISA_PIPE_SYNC;
			if (sync && t > now) {
				c->s_time = t;
				return push(g, t, c->id, EV_SCALAR);
			}
			if (in->op == ISA_OP_BARRIER) {
				if (p == ISA_PIPE_ALL) {
					uint64_t done;
					if (!pipes_drained(c, &done) || done > t) {
						c->s_state = S_BARRIER;
						c->s_time = t;
						c->s_wait_since = t;
						maybe_wake_drain(g, c, now);
						return 0;
					}
				}
				c->pc++;
			} else if (in->op == ISA_OP_SET_FLAG) {
				unsigned fi = flag_index(dev, in->src, in->dst, in->ev);
				if (raise_flag(g, c, fi, t, (uint32_t)c->pc))
					return -1;
				c->pc++;
			} else if (in->op == ISA_OP_WAIT_FLAG) {
				unsigned fi = flag_index(dev, in->src, in->dst, in->ev);
				if (!c->flags[fi]) {
					c->s_state = S_WAIT_FLAG;
					c->s_wait_flag = fi;
					c->s_time = t;
					c->s_wait_since = t;
					return 0;
				}
				c->flags[fi] = 0;
				c->pc++;
			} else {
				struct sim_cost cost = { 0, 0 };
				c->pc++;
				if (sim_exec_table[in->op](c, &e, t, &cost))
					return -1;
			}
			c->st->scalar_insns++;
			c->st->insns[ISA_PIPE_S]++;
			c->st->busy_cycles[ISA_PIPE_S] += sc;
			t += sc;
			if (info->flags & ISA_F_END) {
				c->s_time = t;
				c->s_state = S_END;
				uint64_t done;
				if (pipes_drained(c, &done))
					return end_block(g, c, t > done ? t : done);
				return 0;
			}
			continue;
		}
		/* Issue into pipe p's queue. */
		struct sim_pipe *pp = &c->pipe[p];
		if (pp->count == (unsigned)dev->cfg.core_queue_depth) {
			c->s_state = S_WAIT_QUEUE;
			c->s_wait_pipe = p;
			c->s_time = t;
			c->s_wait_since = t;
			return 0;
		}
		unsigned slot = (pp->head + pp->count) % (unsigned)dev->cfg.core_queue_depth;
		pp->q[slot] = e;
		pp->count++;
		c->pc++;
		c->st->scalar_insns++;
		c->st->busy_cycles[ISA_PIPE_S] += sc;
		if (!pp->scheduled && !pp->waiting)
			schedule_pipe(g, c, p, t > pp->free_at ? t : pp->free_at);
		t += sc;
	}
}

/* Retire the head of pipe p at time `now`; wakes a scalar unit stalled on
 * the full queue. */
static void retire_head(struct engine *g, struct sim_core *c, unsigned p, uint64_t now)
{
	struct sim_pipe *pp = &c->pipe[p];
	pp->head = (pp->head + 1) % (unsigned)c->dev->cfg.core_queue_depth;
	pp->count--;
	c->st->insns[p]++;
	if (c->s_state == S_WAIT_QUEUE && c->s_wait_pipe == p) {
		c->s_state = S_RUN;
		c->st->queue_full_cycles += now > c->s_wait_since ? now - c->s_wait_since : 0;
		c->s_time = c->s_time > now ? c->s_time : now;
		if (push(g, c->s_time, c->id, EV_SCALAR))
			g->failed = 1;
	}
}

static int run_pipe(struct engine *g, struct sim_core *c, unsigned p, uint64_t now)
{
	struct sim_pipe *pp = &c->pipe[p];
	struct sim_device *dev = c->dev;
	pp->scheduled = 0;
	while (pp->count) {
		const struct sim_qent *e = &pp->q[pp->head];
		const struct isa_insn *in = e->in;
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
					if (push_ev(g, pp->done_at, c->id, EV_FLAG, fi, e->pc))
						return -1;
				} else if (raise_flag(g, c, fi, now, e->pc)) {
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
		struct sim_cost cost = { 0, 0 };
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

/* Every core that has not finished is blocked and nothing can wake it. */
static void report_deadlock(struct sim_device *dev, unsigned ncores)
{
	size_t n = (size_t)snprintf(dev->err, dev->errlen, "deadlock: nothing can make progress.");
	for (unsigned i = 0; i < ncores && n < dev->errlen; i++) {
		struct sim_core *c = &dev->cores[i];
		if (c->s_state == S_DONE)
			continue;
		static const char *const st[] = { "running", "stalled on a full queue",
						  "in wait_flag", "in barrier all", "at end",
						  "done" };
		char text[256] = "end reached";
		if (c->pc < dev->kernel->ninsns)
			isa_disasm(&dev->kernel->insns[c->pc], text, sizeof text);
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
}

int sim_engine_run(struct sim_device *dev, unsigned ncores);

int sim_engine_run(struct sim_device *dev, unsigned ncores)
{
	struct engine g = { .dev = dev };
	g.limit = dev->opt.max_cycles ? dev->opt.max_cycles : UINT64_C(100000000000);
	int rc = 0;
	for (unsigned i = 0; i < ncores && !rc; i++) {
		struct sim_core *c = &dev->cores[i];
		start_block(c, i);
		c->block_next = i + ncores;
		c->s_time = dev->now;
		c->first_start = dev->now;
		for (unsigned p = 0; p < ISA_NPIPES; p++)
			c->pipe[p].free_at = c->pipe[p].done_at = dev->now;
		rc = push(&g, dev->now, i, EV_SCALAR);
	}
	while (!rc && g.n) {
		struct event ev = pop(&g);
		struct sim_core *c = &dev->cores[ev.core];
		if (ev.kind == EV_SCALAR)
			rc = run_scalar(&g, c, ev.t);
		else if (ev.kind == EV_FLAG)
			rc = raise_flag(&g, c, ev.flag, ev.t, ev.pc);
		else
			rc = run_pipe(&g, c, ev.kind, ev.t);
		if (g.failed && !rc) {
			snprintf(dev->err, dev->errlen, "out of memory in the event queue");
			rc = -1;
		}
	}
	if (!rc)
		for (unsigned i = 0; i < ncores; i++)
			if (dev->cores[i].s_state != S_DONE) {
				report_deadlock(dev, ncores);
				rc = -1;
				break;
			}
	free(g.heap);
	return rc;
}
