/* cost.c: the one instruction-cost function (see cost.h). */
#include "cost.h"

#define BLK 32          /* DMA burst lengths count 32-byte blocks */
#define FRAC 512        /* an L1/L0A/L0B fractal: 16x16 b16 or 16x32 b8 */
#define L0C_FRAC 1024   /* an L0C fractal: 16x16 fp32 or s32 */
#define REPEAT_BYTES 256 /* one vector repeat: 8 blocks of 32 bytes */

uint64_t sim_cycles_for(double bytes, double bpc) { return sim_ceil_cycles(bytes / bpc); }

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* A latency in time units as the nearest whole cycle (ns * MHz / 1000). */
static uint64_t lat_cycles(double ns, double mhz) { return (uint64_t)(ns * mhz / 1000.0 + 0.5); }

void sim_costcfg_init(struct sim_costcfg *cc, const struct soc_config *cfg)
{
	cc->scalar = (uint64_t)cfg->core_scalar_cycles;
	cc->icache_miss = cfg->core_icache_kb ? (uint64_t)cfg->core_icache_miss_cycles : 0;
	cc->vec_bpc = (uint64_t)cfg->vector_bytes_per_cycle;
	cc->vec_repeat = ceil_div(REPEAT_BYTES, cc->vec_bpc);
	cc->vec_complex = (uint64_t)cfg->vector_complex_cycles;
	cc->cube_m = (uint64_t)cfg->cube_m;
	cc->cube_k = (uint64_t)cfg->cube_k;
	cc->cube_n = (uint64_t)cfg->cube_n;
	cc->cube_lat = (uint64_t)cfg->cube_latency_cycles;
	cc->cube_eff = cfg->cube_efficiency;
	cc->vec_lat = (uint64_t)cfg->vector_latency_cycles;
	cc->local_lat = (uint64_t)cfg->mte_local_latency_cycles;
	cc->l2_lat = (uint64_t)cfg->l2_latency_cycles;
	cc->hbm_lat = lat_cycles(cfg->hbm_latency_ns, cfg->core_freq_mhz);
	cc->pcie_lat = lat_cycles(cfg->pcie_latency_us * 1000.0, cfg->core_freq_mhz);
	cc->path_bpc[SIM_PATH_NONE] = 1;
	cc->path_bpc[SIM_PATH_GM_RD] = cfg->mte_gm_read_bytes_per_cycle;
	cc->path_bpc[SIM_PATH_GM_WR] = cfg->mte_gm_write_bytes_per_cycle;
	cc->path_bpc[SIM_PATH_L1_L0A] = cfg->mte_l1_to_l0a_bytes_per_cycle;
	cc->path_bpc[SIM_PATH_L1_L0B] = cfg->mte_l1_to_l0b_bytes_per_cycle;
	cc->path_bpc[SIM_PATH_L1_UB] = cfg->mte_l1_to_ub_bytes_per_cycle;
	cc->path_bpc[SIM_PATH_UB_L1] = cfg->mte_ub_to_l1_bytes_per_cycle;
	cc->path_bpc[SIM_PATH_L0C_UB] = cfg->mte_l0c_to_ub_bytes_per_cycle;
	cc->l2_bpc = soc_gbps_to_bpc(cfg, cfg->l2_bandwidth_gbps);
	cc->hbm_bpc = soc_gbps_to_bpc(cfg, cfg->hbm_bandwidth_gbps);
	cc->pcie_bpc = soc_gbps_to_bpc(cfg, cfg->pcie_bandwidth_gbps);
}

double sim_mem_bpc(const struct sim_costcfg *cc, int is_write, int from_hbm, double share)
{
	double r = cc->path_bpc[is_write ? SIM_PATH_GM_WR : SIM_PATH_GM_RD];
	/* x / 1.0 is x exactly: the simulator's share, one core, skips two slow divisions */
	double l2 = share == 1.0 ? cc->l2_bpc : cc->l2_bpc / share;
	double hbm = share == 1.0 ? cc->hbm_bpc : cc->hbm_bpc / share;
	r = l2 < r ? l2 : r;
	return from_hbm && hbm < r ? hbm : r;
}

struct sim_cost sim_hbm_stream(const struct sim_costcfg *cc, double bytes)
{
	struct sim_cost c = { sim_cycles_for(bytes, cc->hbm_bpc), cc->hbm_lat };
	return c;
}

/* Not inlined into sim_insn_cost (nor local, nor mmad_cost): their registers made every
 * instruction's pricing save and restore six, a third of what pricing a plain scalar or
 * vector instruction took. */
__attribute__((noinline)) struct sim_cost sim_mem_time(const struct sim_costcfg *cc,
						       uint64_t bytes, uint64_t hbm_bytes,
						       int is_write, double l2_share,
						       double hbm_share)
{
	/* the core's path and its share of the L2; then what main memory's share adds */
	double t = (double)bytes / sim_mem_bpc(cc, is_write, 0, l2_share);
	if (hbm_bytes) {
		double hbm = hbm_share == 1.0 ? cc->hbm_bpc : cc->hbm_bpc / hbm_share;
		if ((double)hbm_bytes / hbm > t)
			t = (double)hbm_bytes / hbm;
	}
	struct sim_cost c = { sim_ceil_cycles(t), cc->l2_lat };
	if (c.occ == 0)
		c.occ = 1;
	if (hbm_bytes && !is_write)
		c.lat += cc->hbm_lat;
	return c;
}

/* An on-core move of `bytes` on path p. */
static __attribute__((noinline)) struct sim_cost local(const struct sim_costcfg *cc,
						       enum sim_path p, uint64_t bytes)
{
	struct sim_cost c = { sim_cycles_for((double)bytes, cc->path_bpc[p]), cc->local_lat };
	return c;
}

/* mmad: ceil(m/cube.m) * ceil(k/k_step) * ceil(n/cube.n) steps, k_step doubled for int8,
 * at cube.efficiency steps a cycle. */
static __attribute__((noinline)) struct sim_cost mmad_cost(const struct sim_costcfg *cc,
							   uint64_t m, uint64_t k, uint64_t n,
							   int is_s8)
{
	uint64_t kstep = cc->cube_k * (is_s8 ? 2 : 1);
	struct sim_cost c = { ceil_div(m, cc->cube_m) * ceil_div(k, kstep) * ceil_div(n, cc->cube_n),
			      cc->cube_lat };
	if (cc->cube_eff < 1.0) /* a sustained rate below the peak */
		c.occ = sim_cycles_for((double)c.occ, cc->cube_eff);
	return c;
}

/* One body, two instruction forms (C has no templates): the decoded form the
 * simulator runs and the builder's form a compiler's dry run prices. */
#define COST_FN sim_insn_cost
#define COST_INSN struct isa_dec
#include "cost_body.h"
#define COST_FN sim_insn_cost_insn
#define COST_INSN struct isa_insn
#include "cost_body.h"

/* sim_insn_cost without the outputs, for the engine, which prices every instruction it runs:
 * the same body, inlined here with the three NULL outputs, saves their tests and
 * arguments. */
__attribute__((flatten)) struct sim_cost sim_insn_price(const struct sim_costcfg *cc,
							const struct isa_dec *in)
{
	return sim_insn_cost(cc, in, NULL, NULL, NULL);
}
