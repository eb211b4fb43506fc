/* model_util.c: see model_util.h. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include "model_util.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "golden.h"
#include "model.h"

void tu_models(char *dir, size_t len, const char *tag, const char *script, const char *args,
	       const char *needs)
{
	if (dir[0])
		return;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/davinci-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s failed", dir);
	const char *src = getenv("srcdir");
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/%s %s %s > %s/log 2>&1",
		 src && *src ? src : ".", script, dir, args ? args : "", dir);
	ck_assert_msg(system(cmd) == 0, "tests/%s failed (needs %s): see %s/log", script, needs,
		      dir);
}

void tu_models_free(const char *dir)
{
	if (!dir[0])
		return;
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static const char *tu_srcdir(void)
{
	const char *src = getenv("srcdir");
	return src && *src ? src : ".";
}

const char *tu_ort_missing(void)
{
	if (system("command -v node >/dev/null 2>&1") != 0)
		return "node is not installed (apt-get install nodejs npm, then "
		       "cd tests/ort && npm ci --ignore-scripts)";
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/ort/node_modules/onnxruntime-node/package.json",
		 tu_srcdir());
	if (access(path, R_OK) != 0)
		return "ONNX Runtime is not installed: cd tests/ort && npm ci --ignore-scripts";
	return NULL;
}

void tu_ort_require(const char *test)
{
	const char *why = tu_ort_missing();
	if (!why)
		return;
	printf("%s: SKIP: %s\n", test, why);
	exit(77);
}

int tu_ort_run(const char *model, const char *in_dir, const char *out_dir)
{
	char cmd[16384];
	snprintf(cmd, sizeof cmd, "node '%s/tests/ort_run.js' '%s' '%s' '%s'", tu_srcdir(), model,
		 in_dir, out_dir);
	int rc = system(cmd);
	return rc == 0 ? 0 : (rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : 128));
}

/* Element i as a double, for the ONNX element types the tests use. */
static double elem(const struct om_tensor *t, size_t i)
{
	switch (t->dtype) {
	case 1: return ((const float *)t->data)[i];
	case 6: return ((const int32_t *)t->data)[i];
	case 7: return (double)((const int64_t *)t->data)[i];
	case 3: return ((const int8_t *)t->data)[i];
	case 2:
	case 9: return ((const uint8_t *)t->data)[i];
	case 4: return ((const uint16_t *)t->data)[i];
	case 5: return ((const int16_t *)t->data)[i];
	case 11: return ((const double *)t->data)[i];
	case 12: return ((const uint32_t *)t->data)[i];
	case 13: return (double)((const uint64_t *)t->data)[i];
	default: return NAN;
	}
}

static size_t elem_size(int dtype)
{
	return dtype == 7 || dtype == 11 || dtype == 13 ? 8
	       : dtype == 4 || dtype == 5		 ? 2
	       : dtype == 2 || dtype == 3 || dtype == 9 ? 1
							 : 4;
}

void tu_run_compare(const char *test, const char *dir, const char *model, const char *set)
{
	char path[8192], err[4096];
	struct soc_config cfg;
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, NULL, &m, err, sizeof err) == 0, "%s: %s", model, err);
	struct om_tensor in[8], out[8], want[8];
	unsigned ni = m.ninputs, no = m.noutputs;
	ck_assert(ni <= 8 && no <= 8);
	for (unsigned i = 0; i < ni; i++) {
		snprintf(path, sizeof path, "%s/%s/input_%u.pb", dir, set, i);
		ck_assert_msg(om_tensor_read(path, &in[i], err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(m.inputs[i].dtype, in[i].dtype);
	}
	struct sim_options so = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &so, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, in, ni, out, &run, err, sizeof err) == 0, "%s: %s",
		      model, err);
	/* the set only when it is not the model's own */
	snprintf(path, sizeof path, "%s/%s%s%s/Ascend910", test, model, strcmp(model, set) ? "/" : "",
		 strcmp(model, set) ? set : "");
	tu_golden(path, run.cycles, out, no);
	for (unsigned o = 0; o < no; o++) {
		snprintf(path, sizeof path, "%s/%s/output_%u.pb", dir, set, o);
		ck_assert_msg(om_tensor_read(path, &want[o], err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(out[o].dtype, want[o].dtype);
		ck_assert_int_eq(m.outputs[o].dtype, want[o].dtype);
		ck_assert_uint_eq(out[o].nbytes, want[o].nbytes);
		size_t n = want[o].nbytes / elem_size(want[o].dtype);
		int exact = want[o].dtype != 1 && want[o].dtype != 11;
		double peak = 0;
		for (size_t i = 0; i < n; i++)
			if (isfinite(elem(&want[o], i)))
				peak = fmax(peak, fabs(elem(&want[o], i)));
		for (size_t i = 0; i < n; i++) {
			double g = elem(&out[o], i), w = elem(&want[o], i);
			double tol = exact ? 0 : 2e-3 * fmax(1.0, peak) + 4e-3 * fabs(w);
			/* NaN wants NaN, an infinity the same infinity */
			int ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs(g - w) <= tol;
			ck_assert_msg(ok, "%s/%s output %u element %zu: got %g, want %g", model, set,
				      o, i, g, w);
		}
		om_tensor_free(&out[o]);
		om_tensor_free(&want[o]);
	}
	for (unsigned i = 0; i < ni; i++)
		om_tensor_free(&in[i]);
	rt_run_free(&run);
	sim_device_free(dev);
	om_free(&m);
}
