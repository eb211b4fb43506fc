/* gen_util.c: see gen_util.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gen_util.h"

/* whole 32-byte blocks (and a vector repeat) may reach past a buffer's end */
#define SLACK_BYTES 4096

void rig_open(struct rig *r, const char *soc, enum sim_mode mode)
{
	char err[1024];
	ck_assert_msg(soc_load(soc, &r->cfg, err, sizeof err) == 0, "%s", err);
	struct sim_options opt = { .mode = mode, .max_cycles = 0 };
	r->dev = sim_device_new(&r->cfg, &opt, err, sizeof err);
	ck_assert_msg(r->dev != NULL, "%s", err);
}

void rig_close(struct rig *r) { sim_device_free(r->dev); }

uint64_t rig_alloc(struct rig *r, uint64_t bytes)
{
	uint64_t a = sim_gm_alloc(r->dev, bytes + SLACK_BYTES);
	ck_assert_uint_ne(a, 0);
	return a;
}

uint64_t rig_run(struct rig *r, struct cc_prog *p, unsigned block_dim, uint64_t a0, uint64_t a1,
		 const char *what)
{
	char err[1024];
	uint8_t *code;
	size_t bytes;
	ck_assert_msg(cc_prog_finish(p, &code, &bytes, err, sizeof err) == 0, "%s: %s", what,
		      err);
	struct sim_kernel k;
	ck_assert_msg(sim_kernel_load(&k, what, code, bytes, err, sizeof err) == 0, "%s: %s",
		      what, err);
	free(code);
	cc_prog_free(p);
	int64_t args[2] = { (int64_t)a0, (int64_t)a1 };
	struct sim_result res;
	memset(&res, 0, sizeof res);
	int rc = sim_run(r->dev, &k, block_dim, args, 2, &res);
	ck_assert_msg(rc == 0, "%s: %s", what, res.error);
	uint64_t cycles = res.cycles;
	sim_result_free(&res);
	sim_kernel_free(&k);
	ck_assert_uint_le(block_dim, (unsigned)r->cfg.core_count);
	return cycles;
}

uint64_t rig_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}
