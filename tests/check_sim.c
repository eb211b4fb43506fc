/* check_sim: the simulator on the hand-written kernels of tests/kernels,
 * each against a C reference: numerics, cycles against the bounds the SoC
 * configuration implies, timing mode, determinism, hardware-rule errors. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dryrun.h"
#include "fp16.h"
#include "kernel_util.h"

/* Latencies off: what is left is bandwidth and occupancy, so a kernel's
 * cycles can be compared with the throughput bounds alone. */
static const char *const no_latency[] = { "hbm.latency_ns=0", "l2.latency_cycles=0",
					  "mte.local_latency_cycles=0", "cube.latency_cycles=0",
					  "vector.latency_cycles=0", NULL };

enum { GM = 256, GK = 256, GN = 256 };

struct gemm_run {
	uint64_t cycles;
	double bound, cube, mte;
	double max_err;
	struct sim_core_stats st;
};

/* Run tests/kernels/<kernel> (C = A x B, 256^3 fp16) and compare with C. */
static struct gemm_run run_gemm(const char *soc, const char *const *sets, enum sim_mode mode,
				const char *kernel)
{
	struct ktest t;
	struct gemm_run r;
	memset(&r, 0, sizeof r);
	kt_open(&t, soc, sets, mode, kernel);
	uint16_t *a = malloc(GM * GK * 2), *b = malloc(GK * GN * 2), *c = malloc(GM * GN * 2);
	uint64_t s = 42;
	for (int i = 0; i < GM * GK; i++)
		a[i] = kt_rand_f16(&s);
	for (int i = 0; i < GK * GN; i++)
		b[i] = kt_rand_f16(&s);
	uint64_t ga = kt_alloc(&t, GM * GK * 2), gb = kt_alloc(&t, GK * GN * 2);
	uint64_t gc = kt_alloc(&t, GM * GN * 2);
	sim_gm_write(t.dev, ga, a, GM * GK * 2);
	sim_gm_write(t.dev, gb, b, GK * GN * 2);
	ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
	sim_gm_read(t.dev, gc, c, GM * GN * 2);
	if (mode == SIM_MODE_FULL) {
		float *fa = malloc(GM * GK * 4), *fb = malloc(GK * GN * 4);
		dv_f16_to_f32_n(a, fa, GM * GK);
		dv_f16_to_f32_n(b, fb, GK * GN);
		for (int m = 0; m < GM; m++)
			for (int n = 0; n < GN; n++) {
				double ref = 0;
				for (int k = 0; k < GK; k++)
					ref += (double)fa[m * GK + k] * fb[k * GN + n];
				double got = dv_f16_to_f32(c[m * GN + n]);
				/* fp16 output: half an ulp of rounding plus fp32 accumulation */
				double tol = fabs(ref) * 1.0 / 1024 + 1e-3;
				double err = fabs(got - ref);
				ck_assert_msg(err <= tol, "C[%d][%d] = %g, reference %g", m, n, got, ref);
				if (err > r.max_err)
					r.max_err = err;
			}
		free(fa);
		free(fb);
	}
	const struct soc_config *cfg = &t.cfg;
	r.cycles = t.res.cycles;
	r.st = t.res.total;
	r.cube = ceil(GM / (double)cfg->cube_m) * ceil(GK / (double)cfg->cube_k) *
		 ceil(GN / (double)cfg->cube_n);
	double mte2 = (GM * GK + GK * GN) * 2.0 / cfg->mte_gm_read_bytes_per_cycle;
	double mte3 = GM * GN * 2.0 / cfg->mte_gm_write_bytes_per_cycle;
	double mte1 = r.st.l1_to_l0a_bytes / cfg->mte_l1_to_l0a_bytes_per_cycle +
		      r.st.l1_to_l0b_bytes / cfg->mte_l1_to_l0b_bytes_per_cycle;
	double fix = r.st.l0c_to_ub_bytes / cfg->mte_l0c_to_ub_bytes_per_cycle;
	r.mte = fmax(fmax(mte1, mte2), fmax(mte3, fix));
	r.bound = fmax(r.cube, r.mte);
	free(a);
	free(b);
	free(c);
	kt_close(&t);
	return r;
}

START_TEST(gemm_double_buffered_near_bound)
{
	struct gemm_run r = run_gemm("Ascend910", no_latency, SIM_MODE_FULL, "gemm_db.s");
	ck_assert_uint_eq(r.st.cube_f16_steps, 4096);
	ck_assert_uint_eq(r.st.gm_read_bytes, (GM * GK + GK * GN) * 2);
	ck_assert_uint_eq(r.st.gm_write_bytes, GM * GN * 2);
	ck_assert_msg(r.cycles >= r.bound, "%llu cycles beat the bound %.0f",
		      (unsigned long long)r.cycles, r.bound);
	ck_assert_msg(r.cycles <= 1.10 * r.bound, "%llu cycles, bound %.0f (cube %.0f, MTE %.0f)",
		      (unsigned long long)r.cycles, r.bound, r.cube, r.mte);
}
END_TEST

START_TEST(gemm_single_buffered_is_slower)
{
	struct gemm_run db = run_gemm("Ascend910", NULL, SIM_MODE_TIMING, "gemm_db.s");
	struct gemm_run sb = run_gemm("Ascend910", NULL, SIM_MODE_FULL, "gemm_sb.s");
	ck_assert_msg(sb.cycles > 1.3 * db.cycles, "single %llu vs double %llu",
		      (unsigned long long)sb.cycles, (unsigned long long)db.cycles);
	struct gemm_run db0 = run_gemm("Ascend910", no_latency, SIM_MODE_TIMING, "gemm_db.s");
	struct gemm_run sb0 = run_gemm("Ascend910", no_latency, SIM_MODE_TIMING, "gemm_sb.s");
	ck_assert_msg(sb0.cycles > 1.3 * db0.cycles, "single %llu vs double %llu",
		      (unsigned long long)sb0.cycles, (unsigned long long)db0.cycles);
}
END_TEST

/* tests/kernels/gemm_big.s (bench/gen_gemm_big.py 512 512 512: the large-GEMM
 * schedule bench/aibench.sh times at 4096^3) on 2 blocks, so each block loops
 * over two 256x256 tiles and each tile's K loop runs: C against a reference. */
START_TEST(gemm_big_matches_reference)
{
	enum { N = 512, BLOCKS = 2 };
	struct ktest t;
	kt_open(&t, "Ascend910", NULL, SIM_MODE_FULL, "gemm_big.s");
	uint16_t *a = malloc(N * N * 2), *b = malloc(N * N * 2), *c = malloc(N * N * 2);
	float *fa = malloc(N * N * 4), *fb = malloc(N * N * 4);
	uint64_t s = 11;
	for (int i = 0; i < N * N; i++) {
		a[i] = kt_rand_f16(&s);
		b[i] = kt_rand_f16(&s);
	}
	uint64_t ga = kt_alloc(&t, N * N * 2), gb = kt_alloc(&t, N * N * 2);
	uint64_t gc = kt_alloc(&t, N * N * 2);
	sim_gm_write(t.dev, ga, a, N * N * 2);
	sim_gm_write(t.dev, gb, b, N * N * 2);
	ck_assert_msg(kt_run(&t, BLOCKS) == 0, "%s", t.res.error);
	ck_assert_uint_eq(t.res.total.cube_flops, 2ull * N * N * N);
	sim_gm_read(t.dev, gc, c, N * N * 2);
	dv_f16_to_f32_n(a, fa, N * N);
	dv_f16_to_f32_n(b, fb, N * N);
	for (int m = 0; m < N; m++)
		for (int n = 0; n < N; n++) {
			double ref = 0;
			for (int k = 0; k < N; k++)
				ref += (double)fa[m * N + k] * fb[k * N + n];
			double got = dv_f16_to_f32(c[m * N + n]);
			/* fp16 output: half an ulp of rounding plus fp32 accumulation */
			ck_assert_msg(fabs(got - ref) <= fabs(ref) / 1024 + 2e-3,
				      "C[%d][%d] = %g, reference %g", m, n, got, ref);
		}
	free(a);
	free(b);
	free(c);
	free(fa);
	free(fb);
	kt_close(&t);
}
END_TEST

/* Run vadd.s over n fp16 elements; returns achieved GM bytes per core cycle. */
static double run_vadd(const char *soc, unsigned blocks, uint64_t n, enum sim_mode mode,
		       uint64_t *cycles)
{
	struct ktest t;
	kt_open(&t, soc, NULL, mode, "vadd.s");
	uint16_t *a = malloc(n * 2), *b = malloc(n * 2), *c = malloc(n * 2);
	uint64_t s = 7;
	for (uint64_t i = 0; i < n; i++) {
		a[i] = kt_rand_f16(&s);
		b[i] = kt_rand_f16(&s);
	}
	uint64_t ga = kt_alloc(&t, n * 2), gb = kt_alloc(&t, n * 2), gc = kt_alloc(&t, n * 2);
	kt_arg(&t, (int64_t)n);
	sim_gm_write(t.dev, ga, a, n * 2);
	sim_gm_write(t.dev, gb, b, n * 2);
	ck_assert_msg(kt_run(&t, blocks) == 0, "%s", t.res.error);
	if (mode == SIM_MODE_FULL) {
		sim_gm_read(t.dev, gc, c, n * 2);
		for (uint64_t i = 0; i < n; i++) {
			uint16_t ref = dv_f32_to_f16(dv_f16_to_f32(a[i]) + dv_f16_to_f32(b[i]));
			ck_assert_msg(c[i] == ref, "c[%llu] = 0x%04x, want 0x%04x",
				      (unsigned long long)i, c[i], ref);
		}
	}
	ck_assert_uint_eq(t.res.total.gm_read_bytes, 2 * n * 2);
	ck_assert_uint_eq(t.res.total.gm_write_bytes, n * 2);
	*cycles = t.res.cycles;
	double bpc = 3.0 * n * 2 / (double)t.res.cycles;
	free(a);
	free(b);
	free(c);
	kt_close(&t);
	return bpc;
}

/* l2.write_back: the writes of a vadd whose data fits the L2 stay there
 * (no main-memory write), where a write-through L2 sends every byte on. */
static uint64_t vadd_hbm_writes(const char *wb)
{
	const char *sets[] = { wb, NULL };
	struct ktest t;
	kt_open(&t, "Ascend910", sets, SIM_MODE_TIMING, "vadd.s");
	uint64_t n = 65536;
	uint64_t ga = kt_alloc(&t, n * 2), gb = kt_alloc(&t, n * 2), gc = kt_alloc(&t, n * 2);
	(void)ga, (void)gb, (void)gc;
	kt_arg(&t, (int64_t)n);
	ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
	ck_assert_uint_eq(t.res.total.gm_write_bytes, n * 2);
	uint64_t w = t.res.total.hbm_write_bytes;
	kt_close(&t);
	return w;
}

START_TEST(l2_write_back_keeps_writes)
{
	ck_assert_uint_eq(vadd_hbm_writes("l2.write_back=0"), 65536 * 2);
	ck_assert_uint_eq(vadd_hbm_writes("l2.write_back=1"), 0);
}
END_TEST

START_TEST(vadd_reaches_configured_bandwidth)
{
	/* Ascend310: two cores together are limited by LPDDR4X bandwidth. */
	struct soc_config cfg;
	char err[512];
	ck_assert_int_eq(soc_load("Ascend310", &cfg, err, sizeof err), 0);
	uint64_t cycles;
	double bpc = run_vadd("Ascend310", 2, 4u << 20, SIM_MODE_FULL, &cycles);
	double want = soc_gbps_to_bpc(&cfg, cfg.hbm_bandwidth_gbps);
	ck_assert_msg(fabs(bpc - want) <= 0.05 * want, "achieved %.2f B/cycle, configured %.2f",
		      bpc, want);
}
END_TEST

START_TEST(vadd_all_cores_share_hbm)
{
	struct soc_config cfg;
	char err[512];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	uint64_t c32, c1;
	double bpc = run_vadd("Ascend910", 32, 8u << 20, SIM_MODE_FULL, &c32);
	double hbm = soc_gbps_to_bpc(&cfg, cfg.hbm_bandwidth_gbps);
	/* 32 cores could move 32 x 128 B/cycle; the shared HBM allows 1200 */
	ck_assert_msg(bpc <= hbm * 1.0001 && bpc >= 0.95 * hbm,
		      "achieved %.1f B/cycle, HBM %.1f B/cycle", bpc, hbm);
	ck_assert_msg(32 * cfg.mte_gm_read_bytes_per_cycle > 2 * hbm, "the test needs HBM-bound");
	double one = run_vadd("Ascend910", 1, 8u << 20, SIM_MODE_TIMING, &c1);
	ck_assert_msg(c1 > 5 * c32, "32 cores %llu cycles, 1 core %llu", (unsigned long long)c32,
		      (unsigned long long)c1);
	ck_assert_msg(one < bpc, "one core %.1f B/cycle", one);
}
END_TEST

/* The scalar reads indices from GM (ldw.gm, ld.gm) and addresses rows with
 * them; vbrcb turns 8 elements into 8 blocks.  A load from GM stalls the
 * scalar: the kernel takes longer than five memory latencies. */
START_TEST(scalar_gm_loads_and_vbrcb)
{
	struct ktest t;
	kt_open(&t, "Ascend910", NULL, SIM_MODE_FULL, "gather_brcb.s");
	uint8_t idx[24];
	int32_t i32[4] = { 7, 0, 3, 7 };
	int64_t i64 = 5;
	memcpy(idx, i32, 16);
	memcpy(idx + 16, &i64, 8);
	uint16_t table[8][16], out[13][16];
	uint64_t s = 3;
	for (int r = 0; r < 8; r++)
		for (int j = 0; j < 16; j++)
			table[r][j] = kt_rand_f16(&s);
	uint64_t gi = kt_alloc(&t, sizeof idx), gt = kt_alloc(&t, sizeof table);
	uint64_t go = kt_alloc(&t, sizeof out);
	sim_gm_write(t.dev, gi, idx, sizeof idx);
	sim_gm_write(t.dev, gt, table, sizeof table);
	ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
	sim_gm_read(t.dev, go, out, sizeof out);
	int want[5] = { 7, 0, 3, 7, 5 };
	for (int r = 0; r < 5; r++)
		ck_assert_msg(!memcmp(out[r], table[want[r]], 32), "gathered row %d", r);
	for (int r = 0; r < 8; r++)
		for (int j = 0; j < 16; j++)
			ck_assert_uint_eq(out[5 + r][j], table[0][r]);
	double lat = t.cfg.l2_latency_cycles + t.cfg.hbm_latency_ns * t.cfg.core_freq_mhz / 1000;
	ck_assert_msg((double)t.res.cycles > 5 * lat, "%llu cycles, memory latency %.0f",
		      (unsigned long long)t.res.cycles, lat);
	kt_close(&t);
	/* an index pointing outside GM is reported, naming the instruction */
	kt_open(&t, "Ascend910", NULL, SIM_MODE_FULL, "gather_brcb.s");
	kt_arg(&t, 1 << 20);
	kt_arg(&t, 0);
	kt_arg(&t, 0);
	ck_assert_int_ne(kt_run(&t, 1), 0);
	ck_assert_msg(strstr(t.res.error, "ldw.gm") && strstr(t.res.error, "not allocated"), "%s",
		      t.res.error);
	kt_close(&t);
}
END_TEST

START_TEST(conv_img2col_matches_reference)
{
	struct ktest t;
	kt_open(&t, "Ascend310", NULL, SIM_MODE_FULL, "conv.s");
	enum { H = 8, W = 8, C = 16, O = 16 };
	uint16_t x[H * W * C], w[9 * C * O], y[H * W * O];
	uint64_t s = 99;
	for (int i = 0; i < H * W * C; i++)
		x[i] = kt_rand_f16(&s);
	/* FRACTAL_Z: [k1 = (i,j)][cin][cout] */
	for (int i = 0; i < 9 * C * O; i++)
		w[i] = kt_rand_f16(&s);
	uint64_t gx = kt_alloc(&t, sizeof x), gw = kt_alloc(&t, sizeof w), gy = kt_alloc(&t, sizeof y);
	sim_gm_write(t.dev, gx, x, sizeof x);
	sim_gm_write(t.dev, gw, w, sizeof w);
	ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
	sim_gm_read(t.dev, gy, y, sizeof y);
	for (int oh = 0; oh < H; oh++)
		for (int ow = 0; ow < W; ow++)
			for (int o = 0; o < O; o++) {
				double ref = 0;
				for (int i = 0; i < 3; i++)
					for (int j = 0; j < 3; j++) {
						int ih = oh - 1 + i, iw = ow - 1 + j;
						if (ih < 0 || ih >= H || iw < 0 || iw >= W)
							continue;
						for (int ci = 0; ci < C; ci++)
							ref += (double)dv_f16_to_f32(x[(ih * W + iw) * C + ci]) *
							       dv_f16_to_f32(w[((i * 3 + j) * C + ci) * O + o]);
					}
				double got = dv_f16_to_f32(y[(oh * W + ow) * O + o]);
				ck_assert_msg(fabs(got - ref) <= fabs(ref) / 1024 + 1e-3,
					      "y[%d][%d][%d] = %g, reference %g", oh, ow, o, got, ref);
			}
	kt_close(&t);
}
END_TEST

/* load3d c04=1 (the small-channel path): 8-byte pixels of 4 channels, K
 * element kx of the 13 fractals = tap kx / 4, channel kx % 4, against a
 * direct 7x7 stride-2 convolution in C. */
START_TEST(conv_c04_img2col_matches_reference)
{
	struct ktest t;
	kt_open(&t, "Ascend310P3", NULL, SIM_MODE_FULL, "conv_c04.s");
	enum { H = 8, W = 8, C = 4, O = 16, K1 = 13, HO = 4, WO = 4 };
	uint16_t x[H * W * C], w[K1 * 16 * O], y[HO * WO * O];
	uint64_t s = 17;
	for (int i = 0; i < H * W * C; i++)
		x[i] = kt_rand_f16(&s);
	for (int i = 0; i < K1 * 16 * O; i++)
		w[i] = kt_rand_f16(&s);
	uint64_t gx = kt_alloc(&t, sizeof x), gw = kt_alloc(&t, sizeof w), gy = kt_alloc(&t, sizeof y);
	sim_gm_write(t.dev, gx, x, sizeof x);
	sim_gm_write(t.dev, gw, w, sizeof w);
	ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
	sim_gm_read(t.dev, gy, y, sizeof y);
	for (int oh = 0; oh < HO; oh++)
		for (int ow = 0; ow < WO; ow++)
			for (int o = 0; o < O; o++) {
				double ref = 0;
				for (int i = 0; i < 7; i++)
					for (int j = 0; j < 7; j++) {
						int ih = oh * 2 - 3 + i, iw = ow * 2 - 3 + j;
						if (ih < 0 || ih >= H || iw < 0 || iw >= W)
							continue;
						for (int ci = 0; ci < C; ci++) {
							int kx = (i * 7 + j) * 4 + ci;
							ref += (double)dv_f16_to_f32(x[(ih * W + iw) * C + ci]) *
							       dv_f16_to_f32(w[kx * O + o]);
						}
					}
				double got = dv_f16_to_f32(y[(oh * WO + ow) * O + o]);
				ck_assert_msg(fabs(got - ref) <= fabs(ref) / 1024 + 2e-3,
					      "y[%d][%d][%d] = %g, reference %g", oh, ow, o, got, ref);
			}
	/* L1 -> L0A moved the 13 expanded fractals, not 49 */
	ck_assert_uint_eq(t.res.total.l1_to_l0a_bytes, 13 * 512);
	kt_close(&t);
}
END_TEST

START_TEST(int8_cube_accumulates_exactly)
{
	struct ktest t;
	kt_open(&t, "Ascend310P3", NULL, SIM_MODE_FULL, "gemm_s8.s");
	int8_t a[2 * 2 * 16 * 32], b[2 * 32 * 16];
	int32_t c[32 * 16];
	uint64_t s = 5;
	for (size_t i = 0; i < sizeof a; i++)
		a[i] = (int8_t)(kt_rand(&s) & 0xff);
	for (size_t i = 0; i < sizeof b; i++)
		b[i] = (int8_t)(kt_rand(&s) & 0xff);
	a[0] = -128; /* extremes */
	b[0] = -128;
	uint64_t ga = kt_alloc(&t, sizeof a), gb = kt_alloc(&t, sizeof b), gc = kt_alloc(&t, sizeof c);
	sim_gm_write(t.dev, ga, a, sizeof a);
	sim_gm_write(t.dev, gb, b, sizeof b);
	ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
	sim_gm_read(t.dev, gc, c, sizeof c);
	for (int m = 0; m < 32; m++)
		for (int n = 0; n < 16; n++) {
			int32_t ref = 0;
			for (int k = 0; k < 64; k++) {
				int8_t av = a[((m / 16) * 2 + k / 32) * 512 + (m % 16) * 32 + k % 32];
				int8_t bv = b[(k / 32) * 512 + (k % 32) * 16 + n];
				ref += av * bv;
			}
			ck_assert_int_eq(c[m * 16 + n], 2 * ref);
		}
	ck_assert_uint_eq(t.res.total.cube_s8_steps, 2 * 2 * 1 * 2);
	kt_close(&t);
}
END_TEST

/* Every test kernel gives the same cycles with and without arithmetic, and
 * the same cycles run after run. */
START_TEST(timing_mode_and_determinism)
{
	static const char *const kernels[] = { "gemm_db.s", "gemm_sb.s", "conv.s", "gemm_s8.s",
					       "vadd.s" };
	static const char *const socs[] = { "Ascend310", "Ascend910", "Ascend310P3" };
	for (size_t si = 0; si < 3; si++)
		for (size_t ki = 0; ki < sizeof kernels / sizeof *kernels; ki++) {
			uint64_t cyc[3];
			for (int run = 0; run < 3; run++) {
				struct ktest t;
				kt_open(&t, socs[si], NULL, run == 2 ? SIM_MODE_TIMING : SIM_MODE_FULL,
					kernels[ki]);
				for (int i = 0; i < 3; i++)
					kt_alloc(&t, 2u << 20);
				kt_arg(&t, 1 << 20); /* vadd: elements */
				unsigned blocks = ki == 4 ? (unsigned)t.cfg.core_count : 1;
				ck_assert_msg(kt_run(&t, blocks) == 0, "%s", t.res.error);
				cyc[run] = t.res.cycles;
				kt_close(&t);
			}
			ck_assert_msg(cyc[0] == cyc[1] && cyc[1] == cyc[2],
				      "%s on %s: full %llu, again %llu, timing %llu", kernels[ki],
				      socs[si], (unsigned long long)cyc[0],
				      (unsigned long long)cyc[1], (unsigned long long)cyc[2]);
		}
}
END_TEST

static void expect_failure(const char *kernel, const char *const *needles)
{
	struct ktest t;
	kt_open(&t, "Ascend910", NULL, SIM_MODE_FULL, kernel);
	ck_assert_int_eq(kt_run(&t, 1), -1);
	for (; *needles; needles++)
		ck_assert_msg(strstr(t.res.error, *needles), "'%s' lacks '%s'", t.res.error, *needles);
	kt_close(&t);
}

START_TEST(deadlock_is_reported)
{
	static const char *const n[] = { "deadlock", "core 0, pipe V, pc 1",
					 "wait_flag src=mte2, dst=v, ev=0", NULL };
	expect_failure("deadlock.s", n);
}
END_TEST

START_TEST(out_of_bounds_is_reported)
{
	static const char *const n[] = { "core 0, pipe V, pc 2", "vadd x2, x1, x1",
					 "outside the 262144-byte buffer", NULL };
	expect_failure("oob.s", n);
}
END_TEST

/* Small programs assembled here: each breaks one hardware rule. */
static void expect_rule(const char *src, const char *needle)
{
	struct soc_config cfg;
	char err[1024];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct sim_options opt = { .mode = SIM_MODE_FULL, .max_cycles = 1000000 }; /* a short watchdog */
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	struct isa_program p;
	ck_assert_msg(isa_assemble(src, "rule.s", &p, err, sizeof err) == 0, "%s", err);
	struct sim_kernel k;
	ck_assert_int_eq(sim_kernel_load(&k, "rule", p.code, p.ninsns * ISA_INSN_BYTES, err,
					 sizeof err), 0);
	struct sim_result res;
	ck_assert_int_eq(sim_run(dev, &k, 1, NULL, 0, &res), -1);
	ck_assert_msg(strstr(res.error, needle), "'%s' lacks '%s'", res.error, needle);
	ck_assert_msg(strstr(res.error, "core 0, pipe "), "'%s' names no core/pipe", res.error);
	ck_assert_msg(strstr(res.error, "pc "), "'%s' names no pc", res.error);
	sim_result_free(&res);
	sim_kernel_free(&k);
	isa_program_free(&p);
	sim_device_free(dev);
}

/* A loop that never ends stops at the instruction limit (long before the
 * cycle watchdog), naming the core, the pc and the loop's label. */
/* The instruction cache: a line missed stalls the scalar unit by
 * core.icache_miss_cycles; straight-line code misses on every line, a loop
 * on its lines once; a block of another launch starts cold. */
static uint64_t icache_run(const char *src, int miss, uint64_t *misses)
{
	struct soc_config cfg;
	char err[1024], set[64];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	snprintf(set, sizeof set, "core.icache_miss_cycles=%d", miss);
	ck_assert_int_eq(soc_set(&cfg, set, err, sizeof err), 0);
	ck_assert_int_eq(soc_set(&cfg, "core.icache_line_bytes=64", err, sizeof err), 0);
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct isa_program p;
	ck_assert_msg(isa_assemble(src, "ic.s", &p, err, sizeof err) == 0, "%s", err);
	struct sim_kernel k;
	ck_assert_int_eq(sim_kernel_load(&k, "ic", p.code, p.ninsns * ISA_INSN_BYTES, err,
					 sizeof err), 0);
	struct sim_result res;
	ck_assert_msg(sim_run(dev, &k, 1, NULL, 0, &res) == 0, "%s", res.error);
	uint64_t cycles = res.cycles;
	*misses = res.total.icache_misses;
	/* a second run is another launch: cold again, the same cycles */
	sim_result_free(&res);
	ck_assert_msg(sim_run(dev, &k, 1, NULL, 0, &res) == 0, "%s", res.error);
	ck_assert_uint_eq(res.cycles, cycles);
	sim_result_free(&res);
	sim_kernel_free(&k);
	isa_program_free(&p);
	sim_device_free(dev);
	return cycles;
}

START_TEST(icache_misses_stall_the_scalar_unit)
{
	char straight[4096] = "";
	for (int i = 0; i < 63; i++)
		strcat(straight, "addi x1, x1, 1\n");
	strcat(straight, "end\n"); /* 64 instructions: 16 lines of 4 */
	const char *loop = "li x2, 64\nl: addi x1, x1, 1\naddi x2, x2, -1\nbne x2, x0, l\nend\n";
	uint64_t m0, m1;
	uint64_t s0 = icache_run(straight, 0, &m0), s1 = icache_run(straight, 10, &m1);
	ck_assert_uint_eq(m0, 16);
	ck_assert_uint_eq(m1, 16);
	ck_assert_uint_eq(s1 - s0, 16 * 10);
	uint64_t l0 = icache_run(loop, 0, &m0), l1 = icache_run(loop, 10, &m1);
	ck_assert_uint_eq(m1, 2); /* 5 instructions: lines 0 and 1, each missed once */
	ck_assert_uint_eq(l1 - l0, 2 * 10);
}
END_TEST

START_TEST(endless_loop_stops_at_the_instruction_limit)
{
	struct soc_config cfg;
	char err[1024];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct sim_options opt = { .mode = SIM_MODE_FULL, .max_insns = 100000 };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	struct isa_program p;
	ck_assert_msg(isa_assemble("nop\nloop: addi x1, x1, 1\njmp loop\n", "loop.s", &p, err,
				   sizeof err) == 0,
		      "%s", err);
	struct sim_kernel k;
	ck_assert_int_eq(sim_kernel_load(&k, "loop", p.code, p.ninsns * ISA_INSN_BYTES, err,
					 sizeof err), 0);
	struct sim_result res;
	ck_assert_int_eq(sim_run(dev, &k, 1, NULL, 0, &res), -1);
	ck_assert_msg(strstr(res.error, "core 0, pipe S, pc 2: "), "%s", res.error);
	ck_assert_msg(strstr(res.error, "issued 100000 instructions, the limit, in the loop "
					"back to L1"),
		      "%s", res.error);
	sim_result_free(&res);
	sim_kernel_free(&k);
	isa_program_free(&p);
	sim_device_free(dev);
}
END_TEST

START_TEST(hardware_rules_are_enforced)
{
	expect_rule("set_flag src=v, dst=mte3, ev=4\nend\n", "event id 4 out of range");
	expect_rule("set_flag src=v, dst=mte3, ev=0\nset_flag src=v, dst=mte3, ev=0\n"
		    "wait_flag src=v, dst=mte3, ev=0\nend\n",
		    "flag already set");
	expect_rule("set_flag src=v, dst=mte3, ev=1\nend\n", "still set");
	expect_rule("li x1, 16\nvadd x1, x0, x0, dt=f16\nend\n", "not 32-byte aligned");
	expect_rule("li x1, 256\nload2d.l0a x1, x0, rep=1\nend\n", "not 512-byte aligned");
	expect_rule("li x1, 0x100000\nmov.gm.ub x0, x1, len=1\nend\n", "outside every allocation");
	expect_rule("ldarg x1, 0\nend\n", "kernel argument 0");
	expect_rule("divu x1, x1, x0\nend\n", "division by zero");
	expect_rule("nop\n", "past the end");
	expect_rule("loop: jmp loop\n", "watchdog");
	expect_rule("vexp x0, x0, dt=s32\nend\n", "s32");
	expect_rule("mmad x0, x0, x0, m=16, k=16, n=16, dt=f32\nend\n", "mmad supports");
	expect_rule("load3d x0, x0, x0, x0, kh=1, kw=1, mcnt=16, k1cnt=1\nend\n", "set_fmatrix");
	expect_rule("set_fmatrix fh=4, fw=4\nload3d x0, x0, x0, x0, kh=3, kw=3, mcnt=16, "
		    "k1cnt=4, c04=1\nend\n", "past the 3");
	expect_rule("set_fmatrix fh=4, fw=4\nload3d x0, x0, x0, x0, kh=3, kw=3, mcnt=16, "
		    "k1cnt=1, dt=s8, c04=1\nend\n", "f16 only");
}
END_TEST

START_TEST(kernel_load_rejects_bad_code)
{
	uint8_t code[2 * ISA_INSN_BYTES] = { ISA_OP_NOP };
	code[ISA_INSN_BYTES] = 0xee; /* unknown opcode at pc 1 */
	struct sim_kernel k;
	char err[256];
	ck_assert_int_eq(sim_kernel_load(&k, "bad", code, sizeof code, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "pc 1") && strstr(err, "0xee"), "%s", err);
	ck_assert_int_eq(sim_kernel_load(&k, "bad", code, 7, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "whole number"), "%s", err);
}
END_TEST

/* sim_insn_cost gives what the exec handlers used to compute inline; the
 * figures below are the SoC file's (Ascend910) worked by hand. */
START_TEST(insn_cost_from_one_function)
{
	struct soc_config cfg;
	char err[256];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	ck_assert_int_eq(soc_set(&cfg, "vector.bytes_per_cycle=100", err, sizeof err), 0);
	struct sim_costcfg cc;
	sim_costcfg_init(&cc, &cfg);
	struct isa_dec in;
	unsigned pipe;
	uint64_t bytes;
	enum sim_path path;

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_MMAD;
	in.m = 33, in.k = 64, in.n = 16, in.dt = ISA_DT_F16;
	struct sim_cost c = sim_insn_cost(&cc, &in, &pipe, &bytes, &path);
	ck_assert_uint_eq(pipe, ISA_PIPE_M);
	ck_assert_uint_eq(c.occ, 3 * 4 * 1); /* ceil(33/16) x 64/16 x 16/16 */
	ck_assert_uint_eq(c.lat, (uint64_t)cfg.cube_latency_cycles);
	in.dt = ISA_DT_S8; /* an int8 step is twice as deep */
	ck_assert_uint_eq(sim_insn_cost(&cc, &in, NULL, NULL, NULL).occ, 3 * 2 * 1);

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_VEXP;
	in.rep = 3;
	c = sim_insn_cost(&cc, &in, &pipe, NULL, NULL);
	ck_assert_uint_eq(pipe, ISA_PIPE_V);
	/* ceil(256 / 100) cycles a repeat, times the complex-op factor */
	ck_assert_uint_eq(c.occ, 3 * 3 * (uint64_t)cfg.vector_complex_cycles);
	ck_assert_uint_eq(c.lat, (uint64_t)cfg.vector_latency_cycles);

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_LOAD3D;
	in.mcnt = 32, in.k1cnt = 3;
	c = sim_insn_cost(&cc, &in, &pipe, &bytes, &path);
	ck_assert_uint_eq(pipe, ISA_PIPE_MTE1);
	ck_assert_uint_eq(path, SIM_PATH_L1_L0A);
	ck_assert_uint_eq(bytes, 2 * 3 * 512);
	ck_assert_uint_eq(c.occ, 2 * 3 * 512 / 512); /* 512 B/cycle into L0A */
	ck_assert_uint_eq(c.lat, (uint64_t)cfg.mte_local_latency_cycles);

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_MOV_GM_L1;
	in.nburst = 3, in.len = 5; /* 480 bytes at 128 B/cycle: 3.75 -> 4 */
	c = sim_insn_cost(&cc, &in, &pipe, &bytes, &path);
	ck_assert_uint_eq(pipe, ISA_PIPE_MTE2);
	ck_assert_uint_eq(path, SIM_PATH_GM_RD);
	ck_assert_uint_eq(bytes, 480);
	ck_assert_uint_eq(c.occ, 4);
	ck_assert_uint_eq(c.lat, (uint64_t)cfg.l2_latency_cycles);

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_SET_FLAG;
	in.src = ISA_PIPE_MTE2, in.dst = ISA_PIPE_M;
	c = sim_insn_cost(&cc, &in, &pipe, NULL, NULL);
	ck_assert_uint_eq(pipe, ISA_PIPE_MTE2);
	ck_assert_uint_eq(c.occ, 0);

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_LD_GM; /* stalls the scalar unit for a miss to main memory */
	c = sim_insn_cost(&cc, &in, &pipe, NULL, NULL);
	ck_assert_uint_eq(pipe, ISA_PIPE_S);
	ck_assert_uint_eq(c.lat, (uint64_t)cfg.l2_latency_cycles +
					 (uint64_t)(cfg.hbm_latency_ns * cfg.core_freq_mhz / 1000));

	/* one core alone runs at its path's rate; 32 cores streaming together
	 * each get 1/32 of the L2, and of main memory for what misses */
	uint64_t mb = 1 << 20;
	struct sim_cost one = sim_mem_time(&cc, mb, 0, 0, 1.0, 1.0);
	ck_assert_uint_eq(one.occ, mb / 128);
	struct sim_cost all = sim_mem_time(&cc, mb, mb, 0, 32.0, 32.0);
	double l2 = cfg.l2_bandwidth_gbps * 1000.0 / cfg.core_freq_mhz / 32.0;
	double hbm = cfg.hbm_bandwidth_gbps * 1000.0 / cfg.core_freq_mhz / 32.0;
	double rate = fmin(128.0, fmin(l2, hbm));
	ck_assert_uint_eq(all.occ, (uint64_t)ceil((double)mb / rate));
	ck_assert_uint_eq(all.lat, one.lat + cc.hbm_lat);
}
END_TEST

static int every_read(void *ctx, uint64_t addr, uint64_t nburst, uint64_t burst,
		      uint64_t stride)
{
	(void)ctx, (void)addr, (void)nburst, (void)burst, (void)stride;
	return 1;
}

/* The dry run the compiler times its candidates and predicts its tasks with
 * (sim/dryrun.c) follows the engine: a kernel alone on one core, every GM
 * read from main memory (no L2), takes the cycles the dry run predicts, but
 * for what the dry run leaves out: one core's reads and writes sharing the
 * L2 and main memory when they overlap.  vadd.s is a loop: the dry run
 * follows its branches by the simulator's scalar semantics. */
START_TEST(dryrun_matches_the_engine)
{
	static const char *const kernels[] = { "gemm_db.s", "gemm_sb.s", "conv.s", "gemm_s8.s",
					       "vadd.s" };
	static const char *const socs[] = { "Ascend310", "Ascend910", "Ascend310P3" };
	static const char *const no_l2[] = { "l2.size_kb=0", NULL };
	/* where reads and writes overlap on the 310's DDR, the dry run gives
	 * each pipe the memory alone: gemm_db 8.6 %, vadd 15 % fewer cycles;
	 * everything else agrees to the cycle or within 2 */
	static const double tol[3][5] = { { 0.1, 0.001, 0.001, 0.001, 0.2 },
					  { 0.001, 0.001, 0.001, 0.001, 0.001 },
					  { 0.001, 0.001, 0.001, 0.001, 0.001 } };
	for (size_t si = 0; si < 3; si++)
		for (size_t ki = 0; ki < sizeof kernels / sizeof *kernels; ki++) {
			struct ktest t;
			kt_open(&t, socs[si], no_l2, SIM_MODE_TIMING, kernels[ki]);
			for (int i = 0; i < 3; i++)
				kt_alloc(&t, 2u << 20);
			kt_arg(&t, 1 << 16); /* vadd: elements */
			ck_assert_msg(kt_run(&t, 1) == 0, "%s", t.res.error);
			struct sim_costcfg cc;
			sim_costcfg_init(&cc, &t.cfg);
			struct sim_dryrun d;
			sim_dryrun_init(&d, &cc, t.cfg.core_queue_depth, 1.0, 0);
			d.cold = every_read; /* no L2: every read from main memory */
			char err[256];
			ck_assert_msg(sim_dryrun_kernel(&d, &t.k, 0, 1, t.args, t.nargs, 1000000, err,
							sizeof err) == 0, "%s", err);
			double want = (double)t.res.cycles, got = sim_dryrun_time(&d);
			ck_assert_msg(fabs(got - want) <= tol[si][ki] * want,
				      "%s on %s: dry run %.0f, engine %.0f", kernels[ki], socs[si], got,
				      want);
			kt_close(&t);
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("Kernels");
	tcase_add_test(tc, gemm_double_buffered_near_bound);
	tcase_add_test(tc, gemm_single_buffered_is_slower);
	tcase_add_test(tc, gemm_big_matches_reference);
	tcase_add_test(tc, vadd_reaches_configured_bandwidth);
	tcase_add_test(tc, vadd_all_cores_share_hbm);
	tcase_add_test(tc, scalar_gm_loads_and_vbrcb);
	tcase_add_test(tc, conv_img2col_matches_reference);
	tcase_add_test(tc, conv_c04_img2col_matches_reference);
	tcase_add_test(tc, int8_cube_accumulates_exactly);
	tcase_add_test(tc, timing_mode_and_determinism);
	tcase_add_test(tc, insn_cost_from_one_function);
	tcase_add_test(tc, dryrun_matches_the_engine);
	tcase_set_timeout(tc, 600);
	suite_add_tcase(s, tc);
	TCase *tl = tcase_create("Limits");
	tcase_add_test(tl, deadlock_is_reported);
	tcase_add_test(tl, out_of_bounds_is_reported);
	tcase_add_test(tl, hardware_rules_are_enforced);
	tcase_add_test(tl, endless_loop_stops_at_the_instruction_limit);
	tcase_add_test(tl, icache_misses_stall_the_scalar_unit);
	tcase_add_test(tl, l2_write_back_keeps_writes);
	tcase_add_test(tl, kernel_load_rejects_bad_code);
	tcase_set_timeout(tl, 120);
	suite_add_tcase(s, tl);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
