/* exec_cube.c: the cube unit.
 *
 * mmad c, a, b, m, k, n: C (m x n) = or += A (m x k) x B (k x n).
 * Layouts, in 16-row fractals (k0 = 16 for f16, 32 for s8):
 *   L0A  A as [M1][K1][16][k0]   (fractals row-major, each row-major)
 *   L0B  B as [K1][N1][k0][16]
 *   L0C  C as [N1][M1][16][16]   fp32 or s32 (NZ: one column block after another)
 * Whole fractals are computed; only the first k columns of A / rows of B
 * take part, so padding in the last K fractal need not be zero.
 * fp16 products are exact in fp32 and are accumulated in fp32 in k order;
 * int8 products accumulate in int32 (wrapping).  The arithmetic is cube_kern.c's: SIMD
 * kernels giving the same bits as its scalar reference.
 * Cost (sim_insn_cost, cost.c): ceil(m/cube.m) * ceil(k/k_step) *
 * ceil(n/cube.n) cycles, k_step = cube.k (f16) or 2*cube.k (s8), plus
 * cube.latency_cycles before the result is in L0C. */
#include "core.h"
#include "cube_kern.h"

#define FR 512

int exec_MMAD(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	if (in->m < 1 || in->k < 1 || in->n < 1)
		return sim_fail(c, "m, k and n must be at least 1");
	if (in->dt != ISA_DT_F16 && in->dt != ISA_DT_S8)
		return sim_fail(c, "mmad supports dt=f16 (fp32 result) and dt=s8 (s32 result)");
	int s8 = in->dt == ISA_DT_S8;
	int64_t k0 = s8 ? 32 : 16;
	int64_t M1 = (in->m + 15) / 16, K1 = (in->k + k0 - 1) / k0, N1 = (in->n + 15) / 16;
	uint8_t *a = sim_buf_at(c, SIM_BUF_L0A, e->rs1, (uint64_t)(M1 * K1) * FR, "a");
	uint8_t *b = a ? sim_buf_at(c, SIM_BUF_L0B, e->rs2, (uint64_t)(K1 * N1) * FR, "b") : NULL;
	uint8_t *cc = b ? sim_buf_at(c, SIM_BUF_L0C, e->rd, (uint64_t)(N1 * M1) * 1024, "c") : NULL;
	if (!cc)
		return -1;
	if (!c->dev->timing_only) {
		if (s8)
			dv_mmad_s8((const int8_t *)a, (const int8_t *)b, cc, M1, K1, N1, in->k,
				   (int)in->init);
		else
			dv_mmad_f16(a, b, cc, M1, K1, N1, in->k, (int)in->init, c->dev->cube_fa,
				    c->dev->cube_fb);
	}
	uint64_t steps = cost->occ; /* a cube step a cycle */
	if (s8)
		c->st->cube_s8_steps += steps;
	else
		c->st->cube_f16_steps += steps;
	c->st->cube_flops += 2 * (uint64_t)in->m * in->k * in->n; /* 16-bit members: widen first */
	return 0;
}
