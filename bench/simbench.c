/* simbench: how fast the simulator runs the test kernels, in-process.
 *
 * For each kernel: wall time per run (best of several), simulated
 * instructions per second and simulated cycles per second, in full mode (real
 * arithmetic) and timing mode.  Each is also given as a ratio against a
 * reference measured in the same run: the time plain C on this CPU takes for
 * the same arithmetic (fp32 GEMM; fp16 vector add through fp32), so numbers
 * from different machines compare.
 * usage: simbench KERNEL_DIR */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fp16.h"
#include "sim.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bench {
	const char *kernel, *soc;
	unsigned blocks;
	uint64_t buf_bytes, n_arg; /* three buffers; n_arg passed if non-zero */
};

/* Best wall time of `reps` runs; fills cycles and instructions. */
static double run(const struct bench *b, enum sim_mode mode, int reps, const char *dir,
		  uint64_t *cycles, uint64_t *insns)
{
	char err[1024], path[1024];
	struct soc_config cfg;
	if (soc_load(b->soc, &cfg, err, sizeof err)) {
		fprintf(stderr, "simbench: %s\n", err);
		exit(1);
	}
	struct sim_options opt = { .mode = mode, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	struct sim_kernel k;
	snprintf(path, sizeof path, "%s/%s", dir, b->kernel);
	if (!dev || sim_kernel_load_file(&k, path, err, sizeof err)) {
		fprintf(stderr, "simbench: %s\n", err);
		exit(1);
	}
	int64_t args[4];
	unsigned nargs = 0;
	for (int i = 0; i < 3; i++) {
		args[nargs] = (int64_t)sim_gm_alloc(dev, b->buf_bytes);
		sim_gm_fill_random_f16(dev, (uint64_t)args[nargs], b->buf_bytes, (uint64_t)i + 1);
		nargs++;
	}
	if (b->n_arg)
		args[nargs++] = (int64_t)b->n_arg;
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		struct sim_result res;
		double t0 = now();
		if (sim_run(dev, &k, b->blocks, args, nargs, &res)) {
			fprintf(stderr, "simbench: %s\n", res.error);
			exit(1);
		}
		double t = now() - t0;
		best = t < best ? t : best;
		*cycles = res.cycles;
		*insns = res.total.scalar_insns;
		sim_result_free(&res);
	}
	sim_kernel_free(&k);
	sim_device_free(dev);
	return best;
}

/* References: the same arithmetic in plain C. */
static double ref_gemm(void)
{
	enum { N = 256 };
	float *a = malloc(N * N * 4), *b = malloc(N * N * 4), *c = malloc(N * N * 4);
	for (int i = 0; i < N * N; i++) {
		a[i] = (float)(i % 7) * 0.25f;
		b[i] = (float)(i % 5) * 0.5f;
	}
	double best = 1e30;
	for (int r = 0; r < 5; r++) {
		double t0 = now();
		memset(c, 0, N * N * 4);
		for (int m = 0; m < N; m++)
			for (int k = 0; k < N; k++) {
				float av = a[m * N + k];
				for (int n = 0; n < N; n++)
					c[m * N + n] += av * b[k * N + n];
			}
		double t = now() - t0;
		best = t < best ? t : best;
	}
	volatile float sink = c[12345];
	(void)sink;
	free(a);
	free(b);
	free(c);
	return best;
}

static double ref_vadd(uint64_t n)
{
	uint16_t *a = calloc(n, 2), *b = calloc(n, 2), *c = calloc(n, 2);
	double best = 1e30;
	for (int r = 0; r < 3; r++) {
		double t0 = now();
		for (uint64_t i = 0; i < n; i++)
			c[i] = dv_f32_to_f16(dv_f16_to_f32(a[i]) + dv_f16_to_f32(b[i]));
		double t = now() - t0;
		best = t < best ? t : best;
	}
	volatile uint16_t sink = c[n / 2];
	(void)sink;
	free(a);
	free(b);
	free(c);
	return best;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/kernels";
	uint64_t n = 8u << 20;
	const struct bench benches[] = {
		{ "gemm_db.s", "Ascend910", 1, 131072, 0 },
		{ "vadd.s", "Ascend910", 32, 2 * n, n },
	};
	double refs[] = { ref_gemm(), ref_vadd(n) };
	printf("%-10s %-6s %10s %8s %11s %14s %16s %12s\n", "kernel", "mode", "cycles", "insns",
	       "wall (ms)", "insns/s", "sim cycles/s", "x reference");
	for (size_t i = 0; i < sizeof benches / sizeof *benches; i++) {
		for (int m = 0; m < 2; m++) {
			uint64_t cycles, insns;
			double t = run(&benches[i], m ? SIM_MODE_TIMING : SIM_MODE_FULL, 5, dir,
				       &cycles, &insns);
			printf("%-10s %-6s %10llu %8llu %11.3f %14.0f %16.0f %12.2f\n",
			       benches[i].kernel, m ? "timing" : "full", (unsigned long long)cycles,
			       (unsigned long long)insns, t * 1e3, (double)insns / t,
			       (double)cycles / t, t / refs[i]);
		}
	}
	printf("reference (plain C, same arithmetic): gemm 256^3 fp32 %.3f ms, "
	       "vector add of %llu fp16 %.3f ms\n",
	       refs[0] * 1e3, (unsigned long long)n, refs[1] * 1e3);
	printf("x reference: simulation wall time / reference wall time\n");
	return 0;
}
