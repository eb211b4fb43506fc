/* kernel_util.c: helpers shared by the kernel tests. */
#include "kernel_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kt_open(struct ktest *t, const char *soc, const char *const *sets, enum sim_mode mode,
	     const char *kernel)
{
	char err[1024], path[1024];
	memset(t, 0, sizeof *t);
	ck_assert_msg(soc_load(soc, &t->cfg, err, sizeof err) == 0, "%s", err);
	for (; sets && *sets; sets++)
		ck_assert_msg(soc_set(&t->cfg, *sets, err, sizeof err) == 0, "%s", err);
	struct sim_options opt = { .mode = mode, .max_cycles = 0 };
	t->dev = sim_device_new(&t->cfg, &opt, err, sizeof err);
	ck_assert_msg(t->dev != NULL, "%s", err);
	const char *dir = getenv("DAVINCI_KERNEL_DIR");
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "tests/kernels", kernel);
	ck_assert_msg(sim_kernel_load_file(&t->k, path, err, sizeof err) == 0, "%s", err);
}

uint64_t kt_alloc(struct ktest *t, uint64_t bytes)
{
	uint64_t a = sim_gm_alloc(t->dev, bytes);
	ck_assert_uint_ne(a, 0);
	kt_arg(t, (int64_t)a);
	return a;
}

void kt_arg(struct ktest *t, int64_t v)
{
	ck_assert_uint_lt(t->nargs, SIM_MAX_ARGS);
	t->args[t->nargs++] = v;
}

int kt_run(struct ktest *t, unsigned block_dim)
{
	sim_result_free(&t->res);
	t->rc = sim_run(t->dev, &t->k, block_dim, t->args, t->nargs, &t->res);
	return t->rc;
}

void kt_close(struct ktest *t)
{
	sim_result_free(&t->res);
	sim_kernel_free(&t->k);
	sim_device_free(t->dev);
}

uint64_t kt_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

uint16_t kt_rand_f16(uint64_t *s)
{
	uint64_t r = kt_rand(s);
	return (uint16_t)((r >> 20 & 1) << 15 | ((r >> 10) % 15) << 10 | (r & 0x3ff));
}
