/* inputs.h: a model's seeded inputs, the ones every tool (simrun without
 * --input-dir, simsweep's points, simprof's re-simulations) runs on. */
#ifndef DV_STUDY_INPUTS_H
#define DV_STUDY_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "tensor_io.h"

struct om_model;

/* Fill in[0..m->ninputs) (zeroed by the caller; each gets a malloc'd
 * buffer) from seed: input i from the stream (seed + i).  float32: values
 * in [-1, 1), left zero when timing (timing mode computes no values, so
 * none can change a cycle, and a model at the size limit is spared seconds
 * of random numbers and their pages); uint8 (an AIPP image): every byte
 * value; int32/int64 (Gather indices, which may become addresses, so made
 * in timing mode too): in [0, the smallest dimension > 1 of the tables
 * they index), or [0, 16) when no Gather says.  A type the runtime
 * converts (om_edge.c) is made as the device's type and converted back.
 * Returns 0, or -1 with err naming the input (another type: the caller
 * must give the values); the tensors made so far stay for the caller to
 * free. */
int st_inputs_make(const struct om_model *m, struct om_tensor *in, uint64_t seed, int timing,
		   char *err, size_t errlen);

#endif
