/* core.h: internal state of the device and its AI cores, shared by the
 * engine (engine.c) and the instruction semantics (exec_*.c). */
#ifndef DV_CORE_H
#define DV_CORE_H

#include <stdarg.h>

#include "cost.h"
#include "evq.h"
#include "sim.h"

enum sim_buf { SIM_BUF_L1, SIM_BUF_L0A, SIM_BUF_L0B, SIM_BUF_L0C, SIM_BUF_UB, SIM_NBUFS };
extern const char *const sim_buf_names[SIM_NBUFS];

/* One queued instruction: the decoded form plus the register values the
 * scalar unit read when it issued it (the scalar runs ahead and may change
 * them before the pipe executes). */
struct sim_qent {
	const struct isa_dec *in;
	uint32_t pc;
	uint64_t issue; /* cycle the scalar unit issued it */
	int64_t rd, rs1, rs2, rs3;
};

struct sim_pipe {
	struct sim_qent *q; /* ring of core.queue_depth entries */
	unsigned head, count;
	uint64_t free_at; /* cycle the pipe can start its next instruction */
	uint64_t done_at; /* cycle every instruction it started has completed */
	int scheduled;    /* an event for this pipe is in the event queue */
	int waiting;      /* blocked in wait_flag on flag index waiting_flag */
	unsigned waiting_flag;
	uint64_t wait_since;
};

struct sim_core {
	struct sim_device *dev;
	unsigned id;
	uint8_t *buf[SIM_NBUFS];
	uint64_t buf_size[SIM_NBUFS], buf_align[SIM_NBUFS];
	/* buf.c's populate: chunk i of buffer b (bytes [i << pop_shift[b], ...)) is mapped when
	 * bit i of populated[b] is set */
	uint64_t populated[SIM_NBUFS];
	unsigned pop_shift[SIM_NBUFS];
	int64_t x[ISA_NREGS];
	uint64_t mask[2]; /* vector lane mask: [0] lanes 0..63, [1] lanes 64..127 */
	struct {
		int64_t fh, fw, pt, pb, pl, pr;
		int set;
	} fmatrix;
	struct sim_pipe pipe[ISA_NPIPES];
	uint8_t *flags; /* [src pipe][dst pipe][event id] */
	/* scalar unit */
	uint64_t pc, s_time;
	/* scalar_insns when the block started: a backward branch checks the
	 * block's count against the instruction limit (exec_scalar.c) */
	uint64_t insns_at_start;
	int s_state; /* enum in engine.c */
	unsigned s_wait_pipe, s_wait_flag;
	uint64_t s_wait_since;
	int64_t block_idx;
	struct sim_launch *launch; /* the launch whose block runs here; NULL when idle */
	uint64_t block_start;
	/* instruction cache (core.icache_*): direct-mapped tags, ic_base + line
	 * index + 1 (0: empty).  A block of another launch than the last one
	 * here (ic_seq) starts cold, its code lies elsewhere: ic_base moves past
	 * every tag so far (ic_end, the largest), which no lookup then matches,
	 * instead of clearing the tags (a 4 KiB memset a launch and core, 2.6%
	 * of a timing-mode ResNet-50's instructions).  The scalar unit fetches
	 * from line ic_line, pcs [ic_first, ic_first + ic_ipl) */
	uint64_t *ic_tag, ic_lines, ic_seq, ic_base, ic_end, ic_line, ic_first, ic_ipl;
	struct sim_core_stats *st;
	char *err; /* where a hardware-rule violation is reported */
	size_t errlen;
	const struct sim_qent *cur; /* instruction being executed, for messages */
	unsigned cur_pipe;
	/* full mode's functional pass (func.h).  func_only: this is the functional core, whose
	 * instructions have no timing (sim_gm_timing leaves the L2 and main memory alone) */
	int func_only;
	/* an engine core whose block ran functionally: its ld.gm / ldw.gm take the values the
	 * functional pass loaded, ld_log[ld_next++] of ld_n, in program order as it did */
	int ld_replay;
	int64_t *ld_log;
	size_t ld_n, ld_next, ld_cap;
	/* the block's functional pass failed: its message, for end_block when the engine's own
	 * run of the block does not meet the failure first (NULL or "" when it did not) */
	char *func_err;
};

struct sim_device {
	struct soc_config cfg;
	struct sim_options opt;
	/* the handlers skip their data work: always, but while the functional core runs (in
	 * full mode it computes every block, on the device's one set of buffers: func.h) */
	int timing_only;
	struct sim_core *func;
	/* GM: allocations with device addresses */
	struct gm_block {
		uint64_t addr, size;
		uint8_t *host;
		void *map; /* sim_gm_alloc_file's mapping (host lies inside), or NULL */
		size_t maplen;
		uint64_t *popmap; /* sim_gm_ptr_write's chunks of host already mapped, or NULL */
	} *gm;
	size_t ngm, capgm;
	uint64_t gm_next, gm_limit;
	/* L2: set-associative, LRU.  Each set's l2_ways entries are kept most
	 * recently used first, valid ones before invalid ones (0): an entry is
	 * (line address + 1) << 1 | dirty, dirty (l2.write_back) when the line
	 * holds data main memory has not (gm.c).  32 bits: line numbers below
	 * 2^31 - 1 (256 GiB of 128-byte lines; gm.c's gm_add keeps addresses there),
	 * so the 910's tags take 1 MB of the process instead of 2 */
	uint32_t *l2_way;
	uint64_t l2_sets, l2_ways, l2_line;
	/* l2_sets - 1 where it is a power of two, else 0, and log2(l2_line) (gm.c
	 * l2_set_of, l2_line_of): two 64-bit divisions a line looked up were a
	 * sixth of the lookups' time in a timing run */
	uint64_t l2_set_mask;
	unsigned l2_line_shift;
	struct sim_costcfg cc; /* the cost terms, derived from cfg once */
	/* shared bandwidth servers: the cycle each is next free */
	double hbm_free, l2_free;
	/* PCIe links, host -> device and device -> host */
	double pcie_free[2];
	uint64_t gm_used;
	uint64_t now; /* the device clock: the time of the latest event */
	uint64_t launch_seq; /* submits so far (sim_launch.seq) */
	char *err;    /* where the current drain's error goes (errbuf) */
	size_t errlen;
	char errbuf[1024];
	struct sim_core *cores;
	/* cube scratch: one L0A / L0B worth of operands as fp32, filled and
	 * used within one MMAD.  One for the device, not one a core: the
	 * engine runs one instruction at a time, and 32 cores' copies cost
	 * 8 MB of first-touch page faults and 64 unmappings (a parallel engine
	 * would want one a thread). */
	float *cube_fa, *cube_fb;
	void *sram; /* one mapping holding the functional core's buffers (device.c) */
	size_t sramlen;
	/* the scheduler (engine.c): pending events and the kernel launches
	 * that have started and still have blocks to hand out */
	struct sim_evq evq;
	uint64_t drain_start, limit, max_insns;
	int failed;
	struct sim_launch **active;
	size_t nactive, capactive;
	void (*done)(void *ctx, struct sim_launch *l);
	void *done_ctx;
};

/* Report a hardware-rule violation for the instruction being executed;
 * always returns -1. */
int sim_fail(struct sim_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Check that [addr, addr+len) lies in buffer b and addr is aligned to the
 * buffer's rule; returns a host pointer or NULL after sim_fail. */
uint8_t *sim_buf_at(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
		    const char *what);
/* Same check with an explicit alignment (e.g. 512 for fractals). */
uint8_t *sim_buf_at_aligned(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
			    uint64_t align, const char *what);

/* Timing of a GM transfer of `bytes` starting at `now` touching the bursts
 * described (address, count, burst length, stride between burst starts):
 * accounts the L2 and main memory and returns the cost. */
struct sim_cost sim_gm_timing(struct sim_core *c, uint64_t now, uint64_t addr, uint64_t nburst,
			      uint64_t burst_bytes, uint64_t stride, int is_write);

/* sim_gm_ptr for a core's write in full mode: also maps the 64 KB chunks the write touches
 * with one sim_populate the first time (the blocks are fresh zero pages, and a full ResNet-50
 * run's GM writes took a thousand page faults). */
uint8_t *sim_gm_ptr_write(struct sim_device *dev, uint64_t addr, uint64_t n);

/* Release a block's host memory (freed or unmapped, as it was made). */
void sim_gm_block_release(struct gm_block *b);

/* Forget the L2 lines of [addr, addr+bytes) (written behind the L2's back). */
void sim_l2_invalidate(struct sim_device *dev, uint64_t addr, uint64_t bytes);

static inline uint64_t ceil_div_u64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Instruction semantics: one function per instruction of isa.def, grouped
 * by unit in exec_scalar.c, exec_mte.c, exec_cube.c and exec_vec.c.  Sync
 * instructions are the engine's own.  A handler checks the hardware's rules,
 * computes its effect (unless the device is timing-only) and returns 0, or
 * returns -1 after sim_fail.  *cost arrives as sim_insn_cost priced it; only
 * the handlers of transfers to and from GM change it (the memory system's
 * share: gm.c).  Scalar handlers may change c->pc. */
typedef int (*sim_exec_fn)(struct sim_core *c, const struct sim_qent *e, uint64_t now,
			   struct sim_cost *cost);
#define EXEC_PROTO(id) \
	int exec_##id(struct sim_core *c, const struct sim_qent *e, uint64_t now, \
		      struct sim_cost *cost);
#define EXEC_DECL_S(id) EXEC_PROTO(id)
#define EXEC_DECL_MTE1(id) EXEC_PROTO(id)
#define EXEC_DECL_MTE2(id) EXEC_PROTO(id)
#define EXEC_DECL_MTE3(id) EXEC_PROTO(id)
#define EXEC_DECL_M(id) EXEC_PROTO(id)
#define EXEC_DECL_V(id) EXEC_PROTO(id)
#define EXEC_DECL_SYNC(id)
#define ISA_INSN(id, mn, opc, fmt, pipe, flags, syn) EXEC_DECL_##pipe(id)
#include "isa.def"

extern const sim_exec_fn sim_exec_table[ISA_NOPS];

#endif
