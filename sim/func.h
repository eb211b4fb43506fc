/* func.h: full mode's arithmetic, one block at a time, in program order.
 *
 * Full mode runs the engine (engine.c) as timing mode runs it, its cores
 * moving no tensor bytes, and computes every block's results apart: when
 * the engine starts a block on a core, sim_func_block runs the whole block
 * at once on one functional core, the device's only set of buffers (L1,
 * L0A, L0B, L0C, UB).  The ISA has no synchronisation between cores, so a
 * kernel's blocks are independent; within a block, set_flag / wait_flag /
 * barrier only order what program order already orders, so a correctly
 * synchronised block computes in program order what it computes in the
 * engine's time order.  The engine's start of a block keeps launches,
 * streams, events and host copies in the order they had: a block's results
 * land in GM when it starts, before anything that may read them.
 *
 * A block with a missing flag (a race) computes program order's result
 * here, where the hardware's depends on which pipe wins: the race shows in
 * the cycles, no longer in the outputs.  (The engine computing in time
 * order had one kernel store its next unit's input for its results:
 * cc_gen_qlinear raised V->MTE2 before MTE3 had stored the buffer.)
 *
 * One buffer set instead of one a core: 32 cores' buffers were half of a
 * full MobileNetV2 run's memory and a large share of its cache misses. */
#ifndef DV_FUNC_H
#define DV_FUNC_H

#include "core.h"

/* Make dev's functional core on buffers of the device's configuration at
 * mem (sim_device_new's mapping: buf_size and buf_align per buffer,
 * stride bytes apart).  -1 when out of memory. */
int sim_func_init(struct sim_device *dev, uint8_t *mem, const uint64_t *stride);
void sim_func_free(struct sim_device *dev);

/* Run block block_idx of launch l, which starts on engine core `on`, from
 * pc 0 to its `end` with the data work of every instruction and none of
 * its timing: GM and the shared buffers change, the L2, main memory and
 * every statistic stay as they were.  Its scalar loads from GM go to on's
 * log for the engine to replay (exec_scalar.c), so both see program
 * order's values.  A failure (a rule broken, an endless loop) is not
 * reported here: its message is kept on `on` (func_err), and the engine,
 * which runs the same instructions with the same operands, usually meets it
 * first, at the time it happens (end_block reports it otherwise).
 * -1 only when out of memory. */
int sim_func_block(struct sim_device *dev, struct sim_core *on, struct sim_launch *l,
		   int64_t block_idx);

#endif
