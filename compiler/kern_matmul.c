/* kern_matmul.c: C = A x B (+ bias) on the cube.
 *
 * C is cut into tm x tn tiles, K into kc-deep chunks; the tiles are dealt to
 * the blocks round-robin.  Per chunk: MTE2 brings the A and B pieces to L1
 * ([k1][tm][16] and [n1][kc][16]), MTE1 lays them out as L0A/L0B fractals,
 * the cube accumulates into L0C.  Per tile: V moves each 16-column piece of
 * L0C to the UB as fp16 (adding the bias), MTE3 writes its rows out.  Every
 * stage is double-buffered: L1 and L0 by chunk, L0C by tile, UB by piece.
 * The tile sizes are chosen by estimating each candidate's time from the
 * SoC's rates and keeping the fastest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fp16.h"
#include "kernels.h"

enum { R_A = 1, R_B = 2, R_C = 3, R_BIAS = 4, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_X = 12,
       R_Y = 13 };

struct mm_tiling {
	int64_t tm, tn, kc;
	double est;
};

/* Estimated cycles of the slowest block for a tiling, from the SoC's rates. */
static double estimate(const struct soc_config *cfg, int64_t M, int64_t K, int64_t N, int64_t tm,
		       int64_t tn, int64_t kc)
{
	int64_t K16 = cc_pad16(K);
	int64_t tiles = ((M + tm - 1) / tm) * ((cc_pad16(N) + tn - 1) / tn);
	int64_t blocks = tiles < cfg->core_count ? tiles : cfg->core_count;
	int64_t per_block = (tiles + blocks - 1) / blocks;
	int64_t chunks = (K16 + kc - 1) / kc;
	double cube = (double)(tm / 16) * (double)(K16 / 16) * (double)(tn / 16);
	double mte2 = (double)(tm + tn) * (double)K16 * 2 / cfg->mte_gm_read_bytes_per_cycle;
	double mte1 = (double)tm * K16 * 2 / cfg->mte_l1_to_l0a_bytes_per_cycle +
		      (double)tn * K16 * 2 / cfg->mte_l1_to_l0b_bytes_per_cycle;
	double v = (double)tm * tn * 4 / cfg->mte_l0c_to_ub_bytes_per_cycle;
	/* each chunk waits for its data from GM; with two L1 slots, half the
	 * memory latency per chunk cannot be hidden behind the other slot */
	double lat = (double)cfg->l2_latency_cycles + cfg->hbm_latency_ns * cfg->core_freq_mhz / 1000;
	double per_tile = fmax(fmax(cube, mte2), fmax(mte1, v)) + (8.0 + lat / 2) * (double)chunks;
	/* all blocks share main memory */
	double hbm = (double)tiles * (tm + tn) * K16 * 2 /
		     (cfg->hbm_bandwidth_gbps * 1000.0 / cfg->core_freq_mhz);
	return fmax((double)per_block * per_tile, hbm) + mte2 / (double)chunks + v / (tn / 16);
}

static struct mm_tiling choose(const struct soc_config *cfg, int64_t M, int64_t K, int64_t N)
{
	struct mm_tiling best = { 0, 0, 0, 1e300 };
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N);
	int64_t l0a = cfg->l0a_size_kb * 1024 / 2, l0b = cfg->l0b_size_kb * 1024 / 2;
	int64_t l0c = cfg->l0c_size_kb * 1024 / 2, l1 = cfg->l1_size_kb * 1024 / 2;
	int64_t ub = cfg->ub_size_kb * 1024;
	for (int64_t tm = 16; tm <= 256; tm *= 2) {
		if (tm > 16 && tm / 2 >= M)
			break;
		for (int64_t tn = 16; tn <= 256; tn *= 2) {
			if (tn > 16 && tn / 2 >= N16)
				break;
			if (tm * tn * 4 > l0c || 2 * tm * 16 * 2 + N16 * 2 + 512 > ub)
				continue;
			for (int64_t kc = 16; kc <= 4096; kc *= 2) {
				if (kc > 16 && kc / 2 >= K16)
					break;
				if (tm * kc * 2 > l0a || kc * tn * 2 > l0b ||
				    (tm + tn) * kc * 2 > l1)
					continue;
				double e = estimate(cfg, M, K, N, tm, tn, kc);
				if (e < best.est) {
					best.tm = tm;
					best.tn = tn;
					best.kc = kc;
					best.est = e;
				}
			}
		}
	}
	return best;
}

int cc_gen_matmul(const struct soc_config *cfg, int64_t M, int64_t K, int64_t N, int b_nz,
		  int has_bias, struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (M < 1 || K < 1 || N < 1) {
		snprintf(err, errlen, "matmul: empty operand (%lld x %lld x %lld)", (long long)M,
			 (long long)K, (long long)N);
		return -1;
	}
	struct mm_tiling t = choose(cfg, M, K, N);
	if (!t.tm) {
		snprintf(err, errlen, "matmul %lldx%lldx%lld: no tiling fits this SoC's buffers",
			 (long long)M, (long long)K, (long long)N);
		return -1;
	}
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N);
	int64_t mt = (M + t.tm - 1) / t.tm, nt = (N16 + t.tn - 1) / t.tn, tiles = mt * nt;
	int64_t blocks = tiles < cfg->core_count ? tiles : cfg->core_count;
	if (blocks > 1024)
		blocks = 1024;
	*block_dim = (unsigned)blocks;
	/* buffers */
	int64_t l1_half = t.kc * (t.tm + t.tn) * 2;
	int64_t l0a_half = cfg->l0a_size_kb * 1024 / 2, l0b_half = cfg->l0b_size_kb * 1024 / 2;
	int64_t l0c_half = cfg->l0c_size_kb * 1024 / 2;
	int64_t piece = t.tm * 32; /* one 16-column piece of a tile, fp16 */
	int64_t ub_bias = 2 * piece;

	cc_ldarg(p, R_A, 0);
	cc_ldarg(p, R_B, 1);
	cc_ldarg(p, R_C, 2);
	if (has_bias)
		cc_ldarg(p, R_BIAS, 3);
	struct isa_insn *in;
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		for (int ev = 0; ev < 2; ev++) {
			cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ev);
			cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, ev);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_M, ev);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, ev);
		}
		if (has_bias) {
			cc_li(p, R_X, ub_bias);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_X, R_BIAS, 1, N16 / 16, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 2);
		}
		int64_t chunk = 0, tcount = 0, pieces = 0;
		for (int64_t ti = b; ti < tiles; ti += blocks, tcount++) {
			int64_t m0 = ti / nt * t.tm, n0 = ti % nt * t.tn;
			int64_t rows = M - m0 < t.tm ? M - m0 : t.tm;
			int64_t tn = N16 - n0 < t.tn ? N16 - n0 : t.tn, n1s = tn / 16;
			int c = (int)(tcount & 1);
			for (int64_t k0 = 0; k0 < K16; k0 += t.kc, chunk++) {
				int pb = (int)(chunk & 1);
				int64_t kc = K16 - k0 < t.kc ? K16 - k0 : t.kc, k1s = kc / 16;
				int64_t kvalid = K - k0 < kc ? K - k0 : kc;
				int64_t l1a = pb * l1_half, l1b = l1a + t.kc * t.tm * 2;
				/* MTE2: A piece [k1][tm][16], B piece [n1][kc][16] */
				cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, pb);
				for (int64_t k1 = 0; k1 < k1s; k1++) {
					cc_addi(p, R_GM, R_A, (m0 * K16 + k0 + k1 * 16) * 2);
					cc_li(p, R_X, l1a + k1 * t.tm * 32);
					cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, rows, 1, K16 / 16 - 1, 0);
				}
				if (b_nz) {
					int64_t kb = (kvalid + 15) / 16 * 16; /* whole rows of 16 */
					cc_addi(p, R_GM, R_B, ((n0 / 16) * K16 + k0) * 32);
					cc_li(p, R_X, l1b);
					cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, n1s, kb, K16 - kb, kc - kb);
				} else {
					for (int64_t n1 = 0; n1 < n1s; n1++) {
						cc_addi(p, R_GM, R_B, (k0 * N16 + n0 + n1 * 16) * 2);
						cc_li(p, R_X, l1b + n1 * kc * 32);
						cc_dma(p, ISA_OP_MOV_GM_L1, R_X, R_GM, kvalid, 1,
						       N16 / 16 - 1, 0);
					}
				}
				cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, pb);
				/* MTE1: L0A [m1][k1], L0B [k1][n1] */
				cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, pb);
				cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
				for (int64_t m1 = 0; m1 < t.tm / 16; m1++) {
					cc_li(p, R_X, l1a + m1 * 512);
					cc_li(p, R_Y, pb * l0a_half + m1 * k1s * 512);
					in = cc_emit(p, ISA_OP_LOAD2D_L0A);
					in->rd = R_Y;
					in->rs1 = R_X;
					in->rep = k1s;
					in->sstride = t.tm / 16;
				}
				for (int64_t k1 = 0; k1 < k1s; k1++) {
					cc_li(p, R_X, l1b + k1 * 512);
					cc_li(p, R_Y, pb * l0b_half + k1 * n1s * 512);
					in = cc_emit(p, ISA_OP_LOAD2D_L0B);
					in->rd = R_Y;
					in->rs1 = R_X;
					in->rep = n1s;
					in->sstride = kc / 16;
				}
				cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, pb);
				cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
				/* M */
				cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
				if (k0 == 0)
					cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_M, c);
				cc_li(p, R_GM, c * l0c_half);
				cc_li(p, R_X, pb * l0a_half);
				cc_li(p, R_Y, pb * l0b_half);
				in = cc_emit(p, ISA_OP_MMAD);
				in->rd = R_GM;
				in->rs1 = R_X;
				in->rs2 = R_Y;
				in->m = t.tm;
				in->k = kvalid;
				in->n = tn;
				in->init = k0 == 0;
				cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
			}
			cc_set_flag(p, ISA_PIPE_M, ISA_PIPE_V, c);
			/* V + MTE3, one 16-column piece at a time */
			cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_V, c);
			for (int64_t n1 = 0; n1 < n1s; n1++, pieces++) {
				int q = (int)(pieces & 1);
				cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, q);
				cc_li(p, R_X, q * piece);
				cc_li(p, R_Y, c * l0c_half + n1 * (t.tm / 16) * 1024);
				in = cc_emit(p, ISA_OP_MOV_L0C_UB);
				in->rd = R_X;
				in->rs1 = R_Y;
				in->nfrac = t.tm / 16;
				in->cvt = ISA_CVT_F16;
				if (has_bias) {
					cc_li(p, R_Y, ub_bias + (n0 + n1 * 16) * 2);
					in = cc_emit(p, ISA_OP_VADD);
					in->rd = R_X;
					in->rs1 = R_X;
					in->rs2 = R_Y;
					in->dt = ISA_DT_F16;
					in->rep = t.tm / 8;
					in->s1b = 0;
					in->s1r = 0;
				}
				if (n1 == n1s - 1)
					cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_M, c);
				cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, q);
				cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, q);
				cc_addi(p, R_GM, R_C, (m0 * N16 + n0 + n1 * 16) * 2);
				cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_X, rows, 1, 0, N16 / 16 - 1);
				cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, q);
			}
		}
		for (int ev = 0; ev < 2; ev++) {
			cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ev);
			cc_wait_flag(p, ISA_PIPE_M, ISA_PIPE_MTE1, ev);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_M, ev);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, ev);
		}
		cc_end(p);
	}
	return 0;
}

void cc_layout_b_nz(const float *b, int64_t K, int64_t N, int transposed, uint16_t *out)
{
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N);
	for (int64_t n1 = 0; n1 < N16 / 16; n1++)
		for (int64_t k = 0; k < K16; k++)
			for (int64_t j = 0; j < 16; j++) {
				int64_t n = n1 * 16 + j;
				float v = 0;
				if (k < K && n < N)
					v = transposed ? b[n * K + k] : b[k * N + n];
				out[(n1 * K16 + k) * 16 + j] = dv_f32_to_f16(v);
			}
}
