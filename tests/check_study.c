/* check_study: the what-if point library (study/point.h).
 *  - study/compile_keys.def classifies exactly the keys of sim/soc.def, in
 *    its order, and every listed key exists;
 *  - changing a RUNTIME key compiles to the same bytes (the class's claim,
 *    checked on a real model for every such key);
 *  - compile identities: TUNING keys share a binary unless retune, LAYOUT
 *    keys and the batch do not, RUNTIME keys always do;
 *  - st_point_run: the cache hands out the binary (compiled once), a bad
 *    configuration fails with its stage named, a batch other than the
 *    model's fixed one runs. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "om.h"
#include "point.h"

static const char *conv_model(char *buf, size_t len)
{
	const char *td = getenv("ONNX_TESTDATA");
	snprintf(buf, len, "%s/pytorch-converted/test_Conv2d/model.onnx",
		 td && *td ? td : "/usr/share/libonnx-testdata/data");
	return buf;
}

START_TEST(keys_match_soc_def)
{
	static const char *const soc_keys[] = {
#define SOC_KEY(sec, key, type, min, max, unit, doc) #sec "." #key,
#include "soc.def"
	};
	unsigned n = sizeof soc_keys / sizeof soc_keys[0];
	ck_assert_uint_eq(st_nkeys(), n);
	struct soc_config cfg;
	char err[1024], name[96];
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_str_eq(st_key_name(i, name, sizeof name), soc_keys[i]);
		enum st_key_class c;
		const char *why = NULL;
		ck_assert_msg(st_key_class(soc_keys[i], &c, &why) == 0, "%s unclassified",
			      soc_keys[i]);
		ck_assert_ptr_nonnull(why);
		double v;
		ck_assert_msg(soc_get(&cfg, name, &v) == 0, "%s not in soc.def", name);
	}
	ck_assert_int_eq(st_key_class("hbm.bogus", NULL, NULL), -1);
	ck_assert_int_eq(st_key_class("nodot", NULL, NULL), -1);
}
END_TEST

static void om_bytes(const char *model, const struct soc_config *cfg, char **data, long *n)
{
	struct om_model m;
	char err[4096], path[] = "/tmp/davinci-study-XXXXXX";
	ck_assert_msg(cc_compile(model, cfg, NULL, &m, err, sizeof err) == 0, "%s", err);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_msg(om_write(path, &m, err, sizeof err) == 0, "%s", err);
	om_free(&m);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*data = malloc((size_t)*n);
	ck_assert_uint_eq(fread(*data, 1, (size_t)*n, f), (size_t)*n);
	fclose(f);
	unlink(path);
}

START_TEST(runtime_keys_do_not_change_the_binary)
{
	char model[4096], err[1024], name[96];
	struct soc_config base;
	ck_assert_int_eq(soc_load("Ascend910", &base, err, sizeof err), 0);
	char *ref;
	long nref;
	om_bytes(conv_model(model, sizeof model), &base, &ref, &nref);
	for (unsigned i = 0; i < st_nkeys(); i++) {
		enum st_key_class c;
		st_key_name(i, name, sizeof name);
		st_key_class(name, &c, NULL);
		if (c != ST_KEY_RUNTIME)
			continue;
		/* another valid value: twice the base, or half of it at the top
		 * of the key's range */
		double v;
		soc_get(&base, name, &v);
		struct soc_config cfg = base;
		char set[160];
		snprintf(set, sizeof set, "%s=%.17g", name, v ? v * 2 : 1);
		if (soc_set(&cfg, set, err, sizeof err)) {
			snprintf(set, sizeof set, "%s=%.17g", name, v / 2);
			ck_assert_msg(soc_set(&cfg, set, err, sizeof err) == 0, "%s", err);
		}
		char *other;
		long nother;
		om_bytes(model, &cfg, &other, &nother);
		ck_assert_msg(nother == nref && !memcmp(other, ref, (size_t)nref),
			      "%s changes the compiled model: it is not a runtime key", set);
		free(other);
	}
	free(ref);
}
END_TEST

static void ident(const char *set, unsigned batch, int retune, char *out, size_t len)
{
	char model[4096], err[1024];
	const char *sets[1] = { set };
	struct st_point p = { .model = conv_model(model, sizeof model), .soc = "Ascend910",
			      .sets = sets, .nsets = set ? 1 : 0, .batch = batch,
			      .retune = retune };
	ck_assert_msg(st_compile_ident(&p, out, len, err, sizeof err) == 0, "%s", err);
}

START_TEST(compile_identity_follows_the_classes)
{
	static char a[8192], b[8192];
	ident("hbm.bandwidth_gbps=300", 0, 0, a, sizeof a);
	ident("hbm.bandwidth_gbps=600", 0, 0, b, sizeof b);
	ck_assert_str_eq(a, b);
	ident(NULL, 0, 0, b, sizeof b);
	ck_assert_str_eq(a, b); /* the base chip's binary */
	ident("hbm.bandwidth_gbps=600", 0, 1, b, sizeof b);
	ck_assert_str_ne(a, b); /* retuned */
	ident("pcie.bandwidth_gbps=5", 0, 1, b, sizeof b);
	ident(NULL, 0, 1, a, sizeof a);
	ck_assert_str_eq(a, b);
	ident("core.count=8", 0, 0, a, sizeof a);
	ident("core.count=16", 0, 0, b, sizeof b);
	ck_assert_str_ne(a, b);
	ident("ub.size_kb=128", 0, 0, b, sizeof b);
	ck_assert_str_ne(a, b);
	ident(NULL, 1, 0, a, sizeof a);
	ident(NULL, 4, 0, b, sizeof b);
	ck_assert_str_ne(a, b);
	char err[1024];
	const char *bad[] = { "core.count=0" };
	struct st_point p = { .model = "x.onnx", .soc = "Ascend910", .sets = bad, .nsets = 1 };
	ck_assert_int_eq(st_compile_ident(&p, a, sizeof a, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "count"));
}
END_TEST

START_TEST(points_share_the_cache)
{
	char model[4096], cache[] = "/tmp/davinci-study-XXXXXX", trace[4200];
	ck_assert_ptr_nonnull(mkdtemp(cache));
	snprintf(trace, sizeof trace, "%s/trace", cache);
	const char *slow[] = { "hbm.bandwidth_gbps=20" }, *fewer[] = { "core.count=2" },
		   *bad[] = { "core.count=0" };
	struct st_point p = { .model = conv_model(model, sizeof model), .soc = "Ascend910",
			      .cache_dir = cache, .trace_dir = trace };
	struct st_result r1, r2, r3, r4, r5;
	ck_assert_msg(st_point_run(&p, &r1) == 0, "%s", r1.error);
	ck_assert(r1.ok && r1.compiled);
	ck_assert_uint_eq(r1.batch, 2); /* the model's */
	ck_assert(r1.warm_latency_us > 0 && r1.throughput_fps > 0);
	ck_assert(r1.pipe_util[ISA_PIPE_M] > 0);
	ck_assert_msg(r1.bound[0], "no bound");
	char f[4300];
	snprintf(f, sizeof f, "%s/op_summary.csv", trace);
	ck_assert_int_eq(access(f, R_OK), 0);
	p.sets = slow;
	p.nsets = 1;
	ck_assert_msg(st_point_run(&p, &r2) == 0, "%s", r2.error);
	ck_assert_msg(!r2.compiled, "a TUNING key recompiled");
	ck_assert_str_eq(r1.compile_key, r2.compile_key);
	ck_assert(r2.warm_latency_us > r1.warm_latency_us); /* 20 GB/s instead of 1200 */
	p.sets = fewer;
	ck_assert_msg(st_point_run(&p, &r3) == 0, "%s", r3.error);
	ck_assert_msg(r3.compiled, "a LAYOUT key did not recompile");
	ck_assert_str_ne(r1.compile_key, r3.compile_key);
	p.sets = bad;
	ck_assert_int_eq(st_point_run(&p, &r4), -1);
	ck_assert(!r4.ok);
	ck_assert_msg(!strncmp(r4.error, "config: ", 8) && strstr(r4.error, "core.count"), "%s",
		      r4.error);
	/* batch 4 on a model fixed at 2: compiled from a dynamic-batch copy */
	p.sets = NULL;
	p.nsets = 0;
	p.batch = 4;
	ck_assert_msg(st_point_run(&p, &r5) == 0, "%s", r5.error);
	ck_assert_uint_eq(r5.batch, 4);
	ck_assert(r5.compiled);
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("study");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, keys_match_soc_def);
	tcase_add_test(tc, runtime_keys_do_not_change_the_binary);
	tcase_add_test(tc, compile_identity_follows_the_classes);
	tcase_add_test(tc, points_share_the_cache);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
