/* check_models: torchvision architectures end to end.
 *
 * tests/export_models.py exports each model with random weights (and random
 * BatchNorm statistics) and writes PyTorch's output for a seeded input; the
 * test compiles the model for a SoC, runs it on the simulated device and
 * requires, for every image of the batch, cosine similarity >= 0.999 with
 * PyTorch's output and the same top-1 class.  The models are generated at
 * test time (nothing is downloaded).  NAME@dyn is NAME exported with a
 * dynamic batch axis, compiled with --input_shape (the compiler folds the
 * exporter's shape arithmetic).  DAVINCI_MODELS limits the set, e.g.
 * "resnet50:1" (the sanitizer pass uses that to stay fast). */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "golden.h"
#include "model.h"
#include "model_util.h"

#define DEFAULT_MODELS                                                                    \
	"resnet50:1,4 mobilenet_v2:1,4 squeezenet1_1:1,4 densenet121:1,4 resnet50@dyn:2 "  \
	"mobilenet_v2@dyn:2"

static char workdir[4096];

static const char *models(void)
{
	const char *m = getenv("DAVINCI_MODELS");
	return m && *m ? m : DEFAULT_MODELS;
}

static void export_all(void)
{
	tu_models(workdir, sizeof workdir, "models", "export_models.py", models(),
		  "python3-torch, python3-torchvision, python3-onnx");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Every task has the compiler's prediction (compiler/predict.c), and at
 * the median the simulated cycles are within 0.85-1.2 of it: what the
 * dry run leaves out (contention, the L2's contents) is a correction, not
 * the whole story. */
static void check_predictions(const struct om_model *m, const struct rt_run *run,
			      const char *name, int batch, const char *soc)
{
	double *r = malloc((m->ntasks + 1) * sizeof *r);
	ck_assert_ptr_nonnull(r);
	for (uint32_t i = 0; i < m->ntasks; i++) {
		ck_assert_msg(m->tasks[i].predicted_cycles > 0, "%s b%d: task '%s' has no prediction",
			      name, batch, m->tasks[i].name);
		r[i] = (double)run->task[i].cycles / (double)m->tasks[i].predicted_cycles;
	}
	qsort(r, m->ntasks, sizeof *r, cmp_double);
	double med = r[m->ntasks / 2];
	printf("%s batch %d on %s: simulated/predicted median %.3f (%.3f .. %.3f)\n", name, batch,
	       soc, med, r[0], r[m->ntasks - 1]);
	ck_assert_msg(med >= 0.85 && med <= 1.2, "%s b%d on %s: simulated/predicted median %.3f",
		      name, batch, soc, med);
	free(r);
}

static void check_model(const char *name, int batch, const char *soc)
{
	char dir[4096], path[4200], err[8192];
	snprintf(dir, sizeof dir, "%s/%s_b%d", workdir, name, batch);
	struct soc_config cfg;
	ck_assert_msg(soc_load(soc, &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	/* a dynamic batch axis: the batch comes from --input_shape */
	char shape[64];
	snprintf(shape, sizeof shape, "input:%d,3,224,224", batch);
	struct cc_options copt = { .input_shape = strstr(name, "@dyn") ? shape : NULL };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &copt, &m, err, sizeof err) == 0, "%s", err);
	struct om_tensor in, want, out;
	snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
	ck_assert_msg(om_tensor_read(path, &in, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
	ck_assert_msg(om_tensor_read(path, &want, err, sizeof err) == 0, "%s", err);
	struct sim_options opt = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, &in, 1, &out, &run, err, sizeof err) == 0, "%s: %s",
		      name, err);
	char key[512];
	snprintf(key, sizeof key, "check_models/%s_b%d/%s", name, batch, soc);
	tu_golden(key, run.cycles, &out, 1);
	ck_assert_uint_eq(out.nbytes, want.nbytes);
	check_predictions(&m, &run, name, batch, soc);
	/* Concat in place (plan_concat.c): no Concat task is left in these
	 * models, and with the pass off (every concat a copy) the outputs are
	 * the same bytes */
	unsigned concats = 0;
	for (uint32_t i = 0; i < m.ntasks; i++)
		concats += !strncmp(m.tasks[i].op_type, "Concat", 6);
	printf("%s batch %d on %s: %u tasks, %u Concat\n", name, batch, soc, m.ntasks, concats);
	ck_assert_msg(concats == 0, "%s b%d: %u Concat tasks", name, batch, concats);
	char sw[4200];
	snprintf(sw, sizeof sw, "%s/noconcat.json", workdir);
	FILE *f = fopen(sw, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"Switch\":{\"GraphFusion\":{\"ConcatInPlacePass\":\"off\"}}}\n");
	fclose(f);
	struct cc_options offopt = { .fusion_switch_file = sw, .input_shape = copt.input_shape };
	struct om_model moff;
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	ck_assert_msg(cc_compile(path, &cfg, &offopt, &moff, err, sizeof err) == 0, "%s", err);
	if (moff.ntasks != m.ntasks) {
		struct om_tensor out2;
		struct rt_run run2;
		ck_assert_msg(rt_model_run(dev, &moff, &in, 1, &out2, &run2, err, sizeof err) == 0,
			      "%s: %s", name, err);
		snprintf(key, sizeof key, "check_models/%s_b%d/%s/ConcatInPlacePass_off", name,
			 batch, soc);
		tu_golden(key, run2.cycles, &out2, 1);
		printf("%s batch %d, ConcatInPlacePass off: %u tasks, %llu cycles (on: %llu)\n",
		       name, batch, moff.ntasks, (unsigned long long)run2.cycles,
		       (unsigned long long)run.cycles);
		ck_assert_msg(out2.nbytes == out.nbytes && !memcmp(out2.data, out.data, out.nbytes),
			      "%s b%d: outputs differ with ConcatInPlacePass off", name, batch);
		rt_run_free(&run2);
		om_tensor_free(&out2);
	}
	om_free(&moff);
	const float *g = out.data, *w = want.data;
	int64_t classes = want.dims[1];
	for (int b = 0; b < batch; b++) {
		double dot = 0, ng = 0, nw = 0;
		int64_t ag = 0, aw = 0;
		for (int64_t k = 0; k < classes; k++) {
			double x = g[b * classes + k], y = w[b * classes + k];
			dot += x * y;
			ng += x * x;
			nw += y * y;
			if (x > g[b * classes + ag])
				ag = k;
			if (y > w[b * classes + aw])
				aw = k;
		}
		double cosine = dot / (sqrt(ng) * sqrt(nw) + 1e-30);
		printf("%s batch %d image %d on %s: cosine %.6f, top-1 %lld (PyTorch %lld), "
		       "%llu cycles (%.1f us)\n",
		       name, batch, b, soc, cosine, (long long)ag, (long long)aw,
		       (unsigned long long)run.cycles, (double)run.cycles / cfg.core_freq_mhz);
		fflush(stdout);
		ck_assert_msg(cosine >= 0.999, "%s b%d image %d: cosine %.6f", name, batch, b, cosine);
		ck_assert_msg(ag == aw, "%s b%d image %d: top-1 %lld, PyTorch %lld", name, batch, b,
			      (long long)ag, (long long)aw);
	}
	rt_run_free(&run);
	om_tensor_free(&out);
	om_tensor_free(&in);
	om_tensor_free(&want);
	sim_device_free(dev);
	om_free(&m);
}

START_TEST(torchvision_models)
{
	export_all();
	char spec[1024];
	snprintf(spec, sizeof spec, "%s", models());
	char *save = NULL;
	for (char *item = strtok_r(spec, " ", &save); item; item = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(item, ':');
		const char *batches = "1";
		if (colon) {
			*colon = 0;
			batches = colon + 1;
		}
		char bcopy[64];
		snprintf(bcopy, sizeof bcopy, "%s", batches);
		char *s2 = NULL;
		for (char *b = strtok_r(bcopy, ",", &s2); b; b = strtok_r(NULL, ",", &s2))
			check_model(item, atoi(b), "Ascend910");
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("models");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, torchvision_models);
	tcase_set_timeout(tc, 3000);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK); /* one export for the whole run */
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(workdir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
