/* dryrun.h: the time of one block's instruction stream without running it.
 *
 * A compiler choosing a tiling times each candidate by feeding the
 * instructions it would emit, in program order, through sim_dryrun_step:
 * the scalar unit issues in order (stalling on a full queue), each pipe
 * starts its head when free, a set_flag rises once everything its pipe
 * started has completed, a wait_flag holds its pipe until then, and every
 * instruction costs what sim_insn_cost says, as the engine (engine.c)
 * charges it.  Every wait's set_flag must come earlier in program order, so
 * one pass gives the times; branches are not followed (the stream is what
 * the generator emits, not a program to execute).
 *
 * Memory is not simulated: a GM transfer runs at the block's share of the
 * L2 and main memory (sim_mem_time with `share` cores moving data at once),
 * from the L2 unless its address register is one of `cold_regs` (then from
 * main memory, at its latency). */
#ifndef DV_DRYRUN_H
#define DV_DRYRUN_H

#include <stdint.h>

#include "cost.h"

#define SIM_DRYRUN_QCAP 64 /* pipe queue depth followed, at most */
#define SIM_DRYRUN_EVENTS 16 /* event ids per pipe pair (soc.def's core.event_ids, at most) */

struct sim_dryrun {
	const struct sim_costcfg *cc;
	double share;      /* cores moving data at the same time */
	double hbm_share;  /* cores reading from main memory at once (0: share) */
	uint32_t cold_regs; /* bit r: GM reads through register xr come from main memory */
	/* the next GM read comes from the L2 whatever its register (it re-reads
	 * bytes the block read before: sim_dryrun_warm_next) */
	int warm_next;
	/* sim_dryrun_kernel: whether a GM read of nburst bursts of `burst` bytes,
	 * `stride` bytes apart from addr, comes from main memory (NULL: none
	 * does) */
	int (*cold)(void *ctx, uint64_t addr, uint64_t nburst, uint64_t burst, uint64_t stride);
	void *cold_ctx;
	double s;          /* the scalar unit's clock */
	double free[ISA_NPIPES], done[ISA_NPIPES];
	double flag[ISA_NPIPES][ISA_NPIPES][SIM_DRYRUN_EVENTS];
	double start[ISA_NPIPES][SIM_DRYRUN_QCAP]; /* start times of the last qd instructions */
	int64_t n[ISA_NPIPES];
	int qi[ISA_NPIPES]; /* n % qd: where start[] holds the instruction qd back */
	int64_t insns; /* instructions stepped: what timing costs its caller */
	int qd;
	int unrunnable; /* an unknown opcode, or a flag of no single pipe */
};

/* Start a block at cycle 0 on a core whose pipe queues hold queue_depth
 * instructions (SIM_DRYRUN_QCAP at most are followed). */
void sim_dryrun_init(struct sim_dryrun *d, const struct sim_costcfg *cc, int64_t queue_depth,
		     double share, uint32_t cold_regs);
/* Issue one instruction, as a builder fills it in (fields are priced as
 * they are; the encoder checks their ranges when the program is emitted).
 * -1 for an unknown opcode or a flag naming no single pipe or an event id
 * past SIM_DRYRUN_EVENTS: the simulator would refuse the program, and the
 * block's time is infinite. */
int sim_dryrun_step(struct sim_dryrun *d, const struct isa_insn *in);
/* sim_dryrun_step for a scalar-unit instruction (one whose isa_table pipe
 * is ISA_PIPE_S), and for a set_flag / wait_flag (op) of src, dst, ev: what
 * a builder issues most, without an instruction to fill in and price. */
void sim_dryrun_scalar(struct sim_dryrun *d);
/* The next GM read sim_dryrun_step prices comes from the L2 even through a
 * register of cold_regs: a generator that knows the block read those bytes
 * before says so (the L2 still holds them), as the engine would find them. */
static inline void sim_dryrun_warm_next(struct sim_dryrun *d) { d->warm_next = 1; }
int sim_dryrun_flag(struct sim_dryrun *d, int64_t op, int64_t src, int64_t dst, int64_t ev);
/* Run block block_idx of kernel k (of block_dim) through the dry run from
 * pc 0 to its `end`: scalar instructions compute (by the simulator's own
 * semantics, so branches and loops are followed; loads from GM read 0),
 * the rest are issued as sim_dryrun_step issues them, a GM read coming
 * from main memory when d->cold says so (set it after sim_dryrun_init;
 * cold_regs does not apply).  -1 with err on a
 * scalar fault, a flag the simulator refuses, or more than max_insns
 * instructions. */
struct sim_kernel;
int sim_dryrun_kernel(struct sim_dryrun *d, const struct sim_kernel *k, unsigned block_idx,
		      unsigned block_dim, const int64_t *args, unsigned nargs, uint64_t max_insns,
		      char *err, size_t errlen);
/* Cycles until everything issued so far has completed (HUGE_VAL after an
 * instruction the simulator would refuse). */
double sim_dryrun_time(const struct sim_dryrun *d);

#endif
