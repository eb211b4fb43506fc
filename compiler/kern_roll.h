/* kern_roll.h: a sequence of steps (tiles, window rows) emitted as counted
 * loops where it repeats, so that a kernel's code follows its structure
 * rather than its tile count. */
#ifndef DV_KERN_ROLL_H
#define DV_KERN_ROLL_H

#include <stddef.h>

#include "kern_gen.h"

/* Emits step i through g; a step's code must depend only on i (and ctx),
 * its GM addresses only through kg_dma. */
typedef void kg_step_fn(struct kg *g, const void *ctx, size_t i);

/* Steps 0 .. n-1, in order; runs that repeat with a period of up to 64
 * steps, the same code with GM offsets (and kg_addr's) moving by a constant
 * per period (per base register), become one counted loop each
 * (kg_loop_begin), the steps before such a loop likewise.  Returns 0,
 * or -1 out of memory. */
int kg_emit_rolled(struct kg *g, size_t n, kg_step_fn *emit, const void *ctx);

/* Emits step i through g from *state, what step i - 1 left (which buffer
 * holds what, whose turn it is), and leaves in it what step i leaves. */
typedef void kg_state_step_fn(struct kg *g, const void *ctx, size_t i, void *state);

/* kg_emit_rolled for steps whose code depends on the steps before them:
 * state (size bytes) is what step 0 starts from; each step's starting state
 * is recorded as the builder first emits the steps in order, and step i is
 * always emitted from its own.  On return state holds what the last step
 * left.  Returns 0, or -1 out of memory. */
int kg_emit_rolled_state(struct kg *g, size_t n, kg_state_step_fn *emit, const void *ctx,
			 void *state, size_t size);

/* Emits block b's code, from kg_reset's state to its end instruction. */
typedef void kg_block_fn(struct kg *g, void *ctx, int64_t b);

/* Blocks 0 .. nb-1 behind one block dispatch (cc_block_dispatch_to, registers
 * R_BIDX and R_TMP); blocks b0, b0+Q, b0+2Q ... whose code is the same, GM
 * offsets moving by a constant per Q blocks and base register, share one
 * copy, which first moves its bases on by (block_idx - b0) / Q constants
 * (registers R_TMP and R_GM); such a class whose code an earlier class runs
 * at other offsets enters that class's copy after moving its bases by the
 * difference (a grid of tiles dealt out by rows).  Returns 0, or -1 out of
 * memory. */
int kg_emit_blocks(struct kg *g, int64_t nb, kg_block_fn *emit, void *ctx);

/* A pipe handing buffers to another through event ids 0 .. n-1: each set
 * before a block's first step (the buffers start free) and waited for
 * after its last (the block ends with nothing in flight). */
struct kg_sync {
	enum isa_pipe src, dst;
	int n;
};

/* The syncs of a kernel streaming MTE2 -> V -> MTE3 through n buffer sets
 * (event ids 0 .. n-1): V frees a set for MTE2's next load, MTE3 for V. */
#define KG_SYNC_STREAM(n)                                                                  \
	{                                                                                  \
		{ ISA_PIPE_V, ISA_PIPE_MTE2, (n) }, { ISA_PIPE_MTE3, ISA_PIPE_V, (n) }     \
	}

/* A kernel whose blocks are sequences of steps (tiles, batches of rows). */
struct kg_steps {
	int64_t blocks;
	struct kg_sync sync[2];
	int nsync;
	/* block b's steps: nsteps(ctx, b), or when nsteps is NULL, prelude
	 * steps (a block's setup) and then its share of units dealt out per a
	 * block (kg_block_units) */
	size_t (*nsteps)(const void *ctx, int64_t b);
	int64_t per, units;
	int prelude;
	/* step i of block b: as kg_step_fn's, its code depends only on (b, i)
	 * and ctx, its GM addresses only through the builder (kg_dma, kg_addr,
	 * kg_ldgm) */
	void (*step)(struct kg *g, const void *ctx, int64_t b, size_t i);
	const void *ctx;
};

/* The kernel's blocks through kg_emit_blocks, each: the syncs' flags set,
 * its steps through kg_emit_rolled (alike steps a loop), the flags waited
 * for, the end.  Returns 0, or -1 out of memory. */
int kg_emit_steps(struct kg *g, const struct kg_steps *ks);

/* Block b's share of total units dealt out per a block (cc_split_work):
 * units [b * per, b * per + return). */
size_t kg_block_units(int64_t b, int64_t per, int64_t total);

/* A whole kernel after its arguments are loaded: kg_emit_steps through a
 * builder whose cache is x[c0, cn) (kg_init); on failure a message naming
 * what (out of memory, or a shape that overflows an instruction field: "not
 * supported yet") in err and -1. */
int kg_emit_kernel(struct cc_prog *p, int c0, int cn, const struct kg_steps *ks, const char *what,
		   char *err, size_t errlen);

#endif
