/* cost.c: the one instruction-cost function (see cost.h). */
#include "cost.h"

#define BLK 32          /* DMA burst lengths count 32-byte blocks */
#define FRAC 512        /* an L1/L0A/L0B fractal: 16x16 b16 or 16x32 b8 */
#define L0C_FRAC 1024   /* an L0C fractal: 16x16 fp32 or s32 */
#define REPEAT_BYTES 256 /* one vector repeat: 8 blocks of 32 bytes */

uint64_t sim_cycles_for(double bytes, double bpc)
{
	double c = bytes / bpc;
	uint64_t u = (uint64_t)c;
	return (double)u < c ? u + 1 : u;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* A latency in time units as the nearest whole cycle (ns * MHz / 1000). */
static uint64_t lat_cycles(double ns, double mhz) { return (uint64_t)(ns * mhz / 1000.0 + 0.5); }

void sim_costcfg_init(struct sim_costcfg *cc, const struct soc_config *cfg)
{
	cc->scalar = (uint64_t)cfg->core_scalar_cycles;
	cc->vec_bpc = (uint64_t)cfg->vector_bytes_per_cycle;
	cc->vec_repeat = ceil_div(REPEAT_BYTES, cc->vec_bpc);
	cc->vec_complex = (uint64_t)cfg->vector_complex_cycles;
	cc->cube_m = (uint64_t)cfg->cube_m;
	cc->cube_k = (uint64_t)cfg->cube_k;
	cc->cube_n = (uint64_t)cfg->cube_n;
	cc->cube_lat = (uint64_t)cfg->cube_latency_cycles;
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

struct sim_cost sim_mem_time(const struct sim_costcfg *cc, uint64_t bytes, uint64_t hbm_bytes,
			     int is_write, double share)
{
	double b = (double)bytes;
	double t = b / cc->path_bpc[is_write ? SIM_PATH_GM_WR : SIM_PATH_GM_RD];
	double l2 = b * share / cc->l2_bpc;
	double hbm = (double)hbm_bytes * share / cc->hbm_bpc;
	if (l2 > t)
		t = l2;
	if (hbm > t)
		t = hbm;
	struct sim_cost c = { sim_cycles_for(t, 1.0), cc->l2_lat };
	if (c.occ == 0)
		c.occ = 1;
	if (hbm_bytes && !is_write)
		c.lat += cc->hbm_lat;
	return c;
}

/* An on-core move of `bytes` on path p. */
static struct sim_cost local(const struct sim_costcfg *cc, enum sim_path p, uint64_t bytes)
{
	struct sim_cost c = { sim_cycles_for((double)bytes, cc->path_bpc[p]), cc->local_lat };
	return c;
}

struct sim_cost sim_insn_cost(const struct sim_costcfg *cc, const struct isa_dec *in,
			      unsigned *pipe_out, uint64_t *bytes_out, enum sim_path *path_out)
{
	const struct isa_info *info = &isa_table[in->op];
	struct sim_cost c = { 0, 0 };
	unsigned pipe = info->pipe;
	enum sim_path path = SIM_PATH_NONE;
	uint64_t bytes = 0, dma = (uint64_t)in->nburst * in->len * BLK;

	switch ((enum isa_op)in->op) {
	case ISA_OP_SET_FLAG:
		pipe = (unsigned)in->src;
		break;
	case ISA_OP_WAIT_FLAG:
		pipe = (unsigned)in->dst;
		break;
	case ISA_OP_BARRIER:
		pipe = (unsigned)in->pipe;
		break;
	case ISA_OP_LD_GM:
	case ISA_OP_LDW_GM: /* the scalar unit stalls for a miss to main memory */
		c.occ = cc->scalar;
		c.lat = cc->l2_lat + cc->hbm_lat;
		break;
	case ISA_OP_MOV_GM_L1:
	case ISA_OP_MOV_GM_UB:
		path = SIM_PATH_GM_RD;
		bytes = dma;
		c = sim_mem_time(cc, bytes, 0, 0, 1.0);
		break;
	case ISA_OP_MOV_UB_GM:
		path = SIM_PATH_GM_WR;
		bytes = dma;
		c = sim_mem_time(cc, bytes, 0, 1, 1.0);
		break;
	case ISA_OP_AIPP_GM_L1: /* priced by its handler: the bytes are in its configuration */
		break;
	case ISA_OP_MOV_L1_UB:
		path = SIM_PATH_L1_UB;
		bytes = dma;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_MOV_UB_L1:
		path = SIM_PATH_UB_L1;
		bytes = dma;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_LOAD2D_L0A:
	case ISA_OP_LOAD2D_L0B:
		path = in->op == ISA_OP_LOAD2D_L0A ? SIM_PATH_L1_L0A : SIM_PATH_L1_L0B;
		bytes = (uint64_t)in->rep * FRAC;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_LOAD3D: /* what it writes into L0A */
		path = SIM_PATH_L1_L0A;
		bytes = (uint64_t)(in->mcnt / 16) * in->k1cnt * FRAC;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_SET_FMATRIX:
	case ISA_OP_VMASK:
	case ISA_OP_VMASKN:
		c.occ = 1;
		break;
	case ISA_OP_MMAD: { /* an int8 step takes twice the depth */
		uint64_t kstep = cc->cube_k * (in->dt == ISA_DT_S8 ? 2 : 1);
		c.occ = ceil_div(in->m, cc->cube_m) * ceil_div(in->k, kstep) *
			ceil_div(in->n, cc->cube_n);
		c.lat = cc->cube_lat;
		break;
	}
	case ISA_OP_MOV_L0C_UB:
		path = SIM_PATH_L0C_UB;
		bytes = (uint64_t)in->nfrac * L0C_FRAC;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_VTRANSPOSE: /* a 16x16 matrix of 2-byte elements a repeat */
		c.occ = (uint64_t)in->rep * ceil_div(2 * REPEAT_BYTES, cc->vec_bpc);
		c.lat = cc->vec_lat;
		break;
	default:
		if (pipe == ISA_PIPE_S) {
			c.occ = cc->scalar;
		} else if (pipe == ISA_PIPE_V) {
			c.occ = (uint64_t)in->rep * cc->vec_repeat;
			if (info->flags & ISA_F_COMPLEX)
				c.occ *= cc->vec_complex;
			c.lat = cc->vec_lat;
		}
		break;
	}
	if (pipe_out)
		*pipe_out = pipe;
	if (bytes_out)
		*bytes_out = bytes;
	if (path_out)
		*path_out = path;
	return c;
}
