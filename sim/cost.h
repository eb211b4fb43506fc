/* cost.h: what an instruction costs, computed in one place.
 *
 * The simulator charges every instruction through sim_insn_cost (the engine
 * calls it before the instruction's handler runs), and the compiler prices
 * its tiling candidates with the same function, so the two cannot drift.
 * The terms it needs are derived from the SoC's keys once
 * (sim_costcfg_init): a latency given in ns or us becomes the nearest whole
 * cycle; bytes over a rate are rounded up to whole cycles (sim_cycles_for).
 *
 * A transfer to or from global memory is priced here as it would run alone
 * on one core with its data in the L2 (the core's own path and the L2's
 * latency); the simulator's memory model (gm.c) then adds what the L2, main
 * memory and the other cores' traffic cost.  sim_mem_time is that memory
 * model's uncontended part, for a transfer that n cores make together. */
#ifndef DV_COST_H
#define DV_COST_H

#include <stdint.h>

#include "isa.h"
#include "soc.h"

/* What an instruction costs its pipe: busy for occ cycles, its result
 * visible lat cycles after that. */
struct sim_cost {
	uint64_t occ, lat;
};

/* The data paths an instruction's bytes take. */
enum sim_path {
	SIM_PATH_NONE,
	SIM_PATH_GM_RD,  /* GM -> L1/UB (MTE2) */
	SIM_PATH_GM_WR,  /* UB -> GM (MTE3) */
	SIM_PATH_L1_L0A, /* load2d/load3d into L0A */
	SIM_PATH_L1_L0B, /* load2d into L0B */
	SIM_PATH_L1_UB,
	SIM_PATH_UB_L1,
	SIM_PATH_L0C_UB, /* counted in L0C bytes */
	SIM_NPATHS
};

/* An SoC's cost terms, derived from its keys by sim_costcfg_init. */
struct sim_costcfg {
	uint64_t scalar;      /* cycles the scalar unit spends on each instruction it issues */
	uint64_t icache_miss; /* the scalar unit's stall on an instruction cache miss (engine.c) */
	uint64_t vec_bpc;     /* vector datapath, bytes per cycle */
	uint64_t vec_repeat;  /* cycles one 256-byte vector repeat occupies the V pipe */
	uint64_t vec_complex; /* multiplier of a repeat of exp/ln/sqrt/rec/rsqrt/div */
	uint64_t cube_m, cube_k, cube_n; /* one cube step (fp16; int8 doubles k) */
	double cube_eff;                  /* cube.efficiency: steps a cycle, at most 1 */
	uint64_t cube_lat, vec_lat, local_lat, l2_lat, hbm_lat, pcie_lat; /* cycles */
	double path_bpc[SIM_NPATHS]; /* one core's path, bytes per cycle */
	double l2_bpc, hbm_bpc, pcie_bpc; /* shared by all cores, bytes per cycle */
};

/* Derive the terms from cfg (whose ranges soc_load/soc_set have checked:
 * every rate is positive, so every cost is defined). */
void sim_costcfg_init(struct sim_costcfg *cc, const struct soc_config *cfg);

/* The cost of one decoded instruction.  *pipe gets the pipe that runs it
 * (a set_flag's source, a wait_flag's destination, a barrier's pipe), and
 * *bytes / *path what it moves, when the caller wants them (may be NULL).
 * Scalar instructions cost the scalar unit occ cycles plus lat (a load from
 * GM stalls it for the memory latency).  Total: fields out of the ISA's
 * ranges give some cost; the instruction's handler refuses them.
 * aipp.gm.l1's bytes come from its configuration in GM: its handler prices
 * them with sim_mem_time; here it costs nothing. */
struct sim_cost sim_insn_cost(const struct sim_costcfg *cc, const struct isa_dec *in,
			      unsigned *pipe, uint64_t *bytes, enum sim_path *path);

/* sim_insn_cost(cc, in, NULL, NULL, NULL), its cost only, as the engine asks it. */
struct sim_cost sim_insn_price(const struct sim_costcfg *cc, const struct isa_dec *in);

/* The pipe a set_flag (src's) or wait_flag (dst's) is issued on. */
static inline unsigned sim_flag_pipe(int64_t op, int64_t src, int64_t dst)
{
	return (unsigned)(op == ISA_OP_SET_FLAG ? src : dst);
}

/* The same for an instruction as a builder fills it in (a compiler's dry
 * run): fields out of their encoding's range are priced as they are. */
struct sim_cost sim_insn_cost_insn(const struct sim_costcfg *cc, const struct isa_insn *in,
				   unsigned *pipe, uint64_t *bytes, enum sim_path *path);

/* A transfer between one core and GM while other cores move data at the
 * same time, nothing else running: `bytes` over the core's path and its
 * share of the L2 (1/l2_share of it), and `hbm_bytes` of them (line fills,
 * write-through) over its share of main memory (1/hbm_share).  lat: the
 * L2's latency, plus main memory's for a read that misses (hbm_bytes > 0). */
struct sim_cost sim_mem_time(const struct sim_costcfg *cc, uint64_t bytes, uint64_t hbm_bytes,
			     int is_write, double l2_share, double hbm_share);

/* Main memory moving `bytes` at its whole bandwidth (all cores' shares
 * together), nothing else running: the least time a kernel whose data must
 * all pass main memory takes (occ), the first byte arriving after lat. */
struct sim_cost sim_hbm_stream(const struct sim_costcfg *cc, double bytes);

/* The bytes per cycle one of `share` cores moving data together gets from
 * GM (is_write 0) or to it; from_hbm: the bytes also pass main memory (a
 * read that misses the L2, any write: the L2 writes through). */
double sim_mem_bpc(const struct sim_costcfg *cc, int is_write, int from_hbm, double share);

/* Whole cycles to move bytes at bpc bytes per cycle (rounded up). */
uint64_t sim_cycles_for(double bytes, double bpc);

/* A time in cycles rounded up to whole cycles: sim_cycles_for(c, 1.0) without its division
 * (by 1.0, which is exact, so the same value), for the memory model's hot path. */
static inline uint64_t sim_ceil_cycles(double c)
{
	uint64_t u = (uint64_t)c;
	return (double)u < c ? u + 1 : u;
}

#endif
