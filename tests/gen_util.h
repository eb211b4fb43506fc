/* gen_util.h: run a kernel generator's program (compiler/kernels.h) on a
 * simulated SoC, for the tests that call generators directly. */
#ifndef DV_GEN_UTIL_H
#define DV_GEN_UTIL_H

#include <stdint.h>

#include "emit.h"
#include "sim.h"

struct rig {
	struct soc_config cfg;
	struct sim_device *dev;
};

/* Load SoC soc and create its device in mode (a failure fails the test). */
void rig_open(struct rig *r, const char *soc, enum sim_mode mode);
void rig_close(struct rig *r);
/* A GM buffer of bytes, with slack past its end for whole-block DMAs. */
uint64_t rig_alloc(struct rig *r, uint64_t bytes);
/* Encode, load and run p (freed) over block_dim blocks with arguments a0
 * and a1; returns the cycles.  what names it in failures. */
uint64_t rig_run(struct rig *r, struct cc_prog *p, unsigned block_dim, uint64_t a0, uint64_t a1,
		 const char *what);
/* xorshift64: the tests' deterministic random numbers. */
uint64_t rig_rnd(uint64_t *s);

#endif
