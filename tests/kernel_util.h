/* kernel_util.h: run the kernels of tests/kernels on a simulated SoC. */
#ifndef DV_KERNEL_UTIL_H
#define DV_KERNEL_UTIL_H

#include "sim.h"

struct ktest {
	struct soc_config cfg;
	struct sim_device *dev;
	struct sim_kernel k;
	int64_t args[SIM_MAX_ARGS];
	unsigned nargs;
	struct sim_result res;
	int rc;
};

/* Load SoC `soc` with the "key=value" overrides (NULL-terminated, may be
 * NULL), create the device in `mode` and load tests/kernels/<kernel>. */
void kt_open(struct ktest *t, const char *soc, const char *const *sets, enum sim_mode mode,
	     const char *kernel);
/* Allocate a GM buffer and pass it as the next argument; returns its address. */
uint64_t kt_alloc(struct ktest *t, uint64_t bytes);
void kt_arg(struct ktest *t, int64_t v);
/* Run over block_dim blocks; the result is in t->res, the return code in t->rc. */
int kt_run(struct ktest *t, unsigned block_dim);
void kt_close(struct ktest *t);

uint64_t kt_rand(uint64_t *s);
/* A random fp16 value in [-1, 1). */
uint16_t kt_rand_f16(uint64_t *s);

#endif
