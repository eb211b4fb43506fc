/* sim.h: the public API of the DaVinci device simulator.
 *
 * A device is N AI cores sharing global memory (GM) through an L2 and a main
 * memory of finite bandwidth.  Kernels are programs of the davinci-sim ISA;
 * sim_run executes one kernel over block_dim blocks on the cores, computing
 * real results in the cores' buffers and GM (unless timing-only) and the
 * cycles it takes.  Everything hangs off the sim_device handle. */
#ifndef DV_SIM_H
#define DV_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "isa.h"
#include "soc.h"
#include "cost.h"

struct sim_device;

enum sim_mode { SIM_MODE_FULL, SIM_MODE_TIMING };

/* Instructions one block may issue before the run stops as an endless loop:
 * far above any kernel's (straight-line code or loops, a few million at
 * most), and reached in seconds where the cycle watchdog takes minutes. */
#define SIM_MAX_BLOCK_INSNS (UINT64_C(1) << 28)

struct sim_options {
	enum sim_mode mode;
	uint64_t max_cycles; /* watchdog per kernel block; 0 = default (1e11) */
	uint64_t max_insns;  /* instructions one block may issue; 0 = SIM_MAX_BLOCK_INSNS */
	FILE *trace;         /* when set: one line per pipe instruction executed */
	/* when set: called for every instruction that occupies a pipe, with the
	 * cycles it occupies it (for timelines) */
	void (*on_span)(void *ctx, unsigned core, unsigned pipe, uint64_t start, uint64_t end);
	void *span_ctx;
};

struct sim_core_stats {
#define STAT_PIPE(name, unit, doc) uint64_t name[ISA_NPIPES];
#define STAT_CORE(name, unit, doc) uint64_t name;
#include "stats.def"
};

struct sim_kernel {
	char name[128];
	struct isa_dec *insns;
	size_t ninsns;
	size_t insns_mapped; /* how insns was allocated (sim/insn_mem.h) */
};

struct sim_result {
	uint64_t start_cycle, end_cycle; /* device cycles */
	uint64_t cycles;                 /* end - start */
	unsigned ncores;                 /* cores used: min(block_dim, core.count) */
	struct sim_core_stats *core;     /* [cfg.core_count], owned by the result */
	struct sim_core_stats total;     /* sum over cores (cycles: the run's cycles) */
	char error[1024];                /* set when sim_run fails */
};

struct sim_device *sim_device_new(const struct soc_config *cfg, const struct sim_options *opt,
				  char *err, size_t errlen);
void sim_device_free(struct sim_device *dev);
const struct soc_config *sim_device_config(const struct sim_device *dev);
/* Full or timing-only simulation from now on (cycles are the same). */
void sim_device_set_mode(struct sim_device *dev, enum sim_mode mode);
enum sim_mode sim_device_mode(const struct sim_device *dev);
/* Set or clear (fn NULL) sim_options.on_span after creation: a profiler
 * switched on while the device exists (aclprofStart). */
void sim_device_set_span_hook(struct sim_device *dev,
			      void (*fn)(void *ctx, unsigned core, unsigned pipe, uint64_t start,
					 uint64_t end),
			      void *ctx);
/* The device clock: runs start here and advance it. */
uint64_t sim_device_now(const struct sim_device *dev);

/* Device (GM) memory.  Addresses are 512-byte aligned and never 0. */
uint64_t sim_gm_alloc(struct sim_device *dev, uint64_t bytes);
int sim_gm_write(struct sim_device *dev, uint64_t addr, const void *src, size_t n);
int sim_gm_read(struct sim_device *dev, uint64_t addr, void *dst, size_t n);
/* A block like sim_gm_alloc's whose first file_bytes (<= bytes) are the
 * bytes at offset of the file fd, mapped copy-on-write: nothing is read or
 * copied until the simulation touches a page, and writes through GM stay in
 * this process (the file never changes).  The rest is zero.  Returns 0 when
 * the device memory is full or the file cannot be mapped.  The file must not
 * change while the block exists (the unwritten pages show the file). */
uint64_t sim_gm_alloc_file(struct sim_device *dev, uint64_t bytes, int fd, uint64_t offset,
			   uint64_t file_bytes);
/* Host pointer to [addr, addr+n) if it lies inside one allocation, else NULL. */
void *sim_gm_ptr(struct sim_device *dev, uint64_t addr, uint64_t n);

/* Decode a kernel's code; every instruction must decode (error names the pc). */
int sim_kernel_load(struct sim_kernel *k, const char *name, const uint8_t *code, size_t bytes,
		    char *err, size_t errlen);
void sim_kernel_free(struct sim_kernel *k);
/* Load a kernel from a file: assembled when it ends in .s, raw code otherwise. */
int sim_kernel_load_file(struct sim_kernel *k, const char *path, char *err, size_t errlen);
/* Fill GM with seeded pseudo-random fp16 values in [-1, 1). */
int sim_gm_fill_random_f16(struct sim_device *dev, uint64_t addr, uint64_t bytes, uint64_t seed);

#define SIM_MAX_ARGS 32

/* Asynchronous work for the device: a kernel launch (block_dim blocks of a
 * kernel, handed to idle AI cores one block at a time, so launches from
 * different streams share the cores) or a copy over PCIe (host <-> device)
 * or within device memory.  The caller owns the struct and keeps it alive
 * until it completes; sim_drain runs the device and reports completions. */
enum sim_launch_kind { SIM_LAUNCH_KERNEL, SIM_LAUNCH_COPY };
enum sim_copy_dir { SIM_COPY_H2D, SIM_COPY_D2H, SIM_COPY_D2D };

struct sim_launch {
	/* set by the caller */
	enum sim_launch_kind kind;
	uint64_t ready; /* device cycle it may start; never before the device clock */
	void *user;
	const struct sim_kernel *kernel; /* kernels */
	unsigned block_dim;
	int64_t args[SIM_MAX_ARGS];
	unsigned nargs;
	enum sim_copy_dir dir; /* copies: host <-> dev, or src -> dev for D2D */
	void *host;
	uint64_t dev, src, bytes;
	/* filled by the simulator */
	uint64_t start_cycle, end_cycle; /* first block started, last block ended */
	unsigned ncores;                 /* distinct cores that ran its blocks */
	struct sim_core_stats total;     /* summed over cores; cycles = end - start */
	struct sim_core_stats *core;     /* [core.count]; freed by sim_launch_release */
	/* the scheduler's own */
	uint64_t seq; /* the device's count of submits: which launch a core's icache holds */
	unsigned next_block, blocks_done;
	int started;
};

/* Queue l; it starts at l->ready (clamped to the device clock) once cores
 * (or the PCIe link) are free.  Checks the launch; -1 with err on a bad one. */
int sim_submit(struct sim_device *dev, struct sim_launch *l, char *err, size_t errlen);
/* Run the device until every queued launch has completed.  done(ctx, l) is
 * called as each completes (the device clock is then its end) and may
 * submit more.  On a simulation error returns -1 with err (naming core,
 * pipe, pc and instruction), *failed set to the launch at fault, and the
 * device reset to idle with nothing queued. */
int sim_drain(struct sim_device *dev, void (*done)(void *ctx, struct sim_launch *l), void *ctx,
	      struct sim_launch **failed, char *err, size_t errlen);
void sim_launch_release(struct sim_launch *l);
/* Free device memory from sim_gm_alloc (addresses are not reused). */
int sim_gm_free(struct sim_device *dev, uint64_t addr);
/* Bytes of device memory allocated now. */
uint64_t sim_gm_used(const struct sim_device *dev);

/* Run k over block_dim blocks, starting at the device clock.  args are what
 * ldarg reads.  Returns 0, or -1 with res->error naming core, pipe, pc and
 * the instruction.  Free the result with sim_result_free. */
int sim_run(struct sim_device *dev, const struct sim_kernel *k, unsigned block_dim,
	    const int64_t *args, unsigned nargs, struct sim_result *res);
void sim_result_free(struct sim_result *res);

/* s as a JSON string (quotes, backslashes and control characters escaped;
 * NULL as ""): every tool that writes JSON uses this one. */
void sim_json_str(FILE *f, const char *s);

/* Statistics: gem5-style text ("name value # doc (unit)") and JSON. */
void sim_stats_print(FILE *f, const struct sim_result *res, unsigned ncores);
void sim_stats_json(FILE *f, const struct sim_result *res, unsigned ncores);

#endif
