/* check_bert: a BERT-base encoder end to end.
 *
 * tests/export_bert.py exports one model with dynamic batch and sequence
 * axes (random weights) and PyTorch's output for seeded token ids at each
 * sequence length and batch; the test compiles the model for each shape
 * with --input_shape (so the compiler folds the exported shape subgraphs),
 * runs it on the simulated Ascend910 and requires, for every sequence of
 * the batch, cosine similarity >= 0.999 with PyTorch's hidden states, and
 * for every token >= 0.99.  A deep post-LayerNorm encoder with random
 * weights drives every token toward one common vector (two tokens' outputs
 * have cosine ~0.97), which would let a plain cosine pass with the
 * token-dependent part wrong; so the test also requires >= 0.999 after
 * removing PyTorch's mean hidden state (over all tokens of the batch) from
 * both.  DAVINCI_BERT picks the shapes ("SEQ:B,B ...",
 * "none" skips), DAVINCI_BERT_LAYERS the depth (12; the sanitizer pass
 * uses fewer to stay fast). */
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

#define DEFAULT_SHAPES "64:1,8 128:1,8 384:1,8"

static char workdir[4096];

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static void export_all(void)
{
	char args[1200];
	snprintf(args, sizeof args, "%s --layers=%s", env_or("DAVINCI_BERT", DEFAULT_SHAPES),
		 env_or("DAVINCI_BERT_LAYERS", "12"));
	tu_models(workdir, sizeof workdir, "bert", "export_bert.py", args,
		  "python3-torch, python3-onnx");
}

static double cosine(const float *a, const float *b, int64_t n)
{
	double dot = 0, na = 0, nb = 0;
	for (int64_t i = 0; i < n; i++) {
		dot += (double)a[i] * b[i];
		na += (double)a[i] * a[i];
		nb += (double)b[i] * b[i];
	}
	return dot / (sqrt(na) * sqrt(nb) + 1e-30);
}

static void check_shape(int seq, int batch)
{
	const char *soc = "Ascend910";
	char dir[4200], path[4300], err[8192], shape[64];
	snprintf(dir, sizeof dir, "%s/bert_s%d_b%d", workdir, seq, batch);
	struct soc_config cfg;
	ck_assert_msg(soc_load(soc, &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/bert/model.onnx", workdir);
	snprintf(shape, sizeof shape, "input_ids:%d,%d", batch, seq);
	struct cc_options o = { .input_shape = shape };
	struct om_model m;
	ck_assert_msg(cc_compile(path, &cfg, &o, &m, err, sizeof err) == 0, "seq %d batch %d: %s",
		      seq, batch, err);
	struct om_tensor in, want, out;
	snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
	ck_assert_msg(om_tensor_read(path, &in, err, sizeof err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
	ck_assert_msg(om_tensor_read(path, &want, err, sizeof err) == 0, "%s", err);
	struct sim_options opt = { .mode = SIM_MODE_FULL, .max_cycles = 0 };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	ck_assert_ptr_nonnull(dev);
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, &in, 1, &out, &run, err, sizeof err) == 0,
		      "seq %d batch %d: %s", seq, batch, err);
	/* the depth makes another model: in the key */
	char key[256];
	snprintf(key, sizeof key, "check_bert/bert_l%d_s%d_b%d/%s",
		 atoi(env_or("DAVINCI_BERT_LAYERS", "12")), seq, batch, soc);
	tu_golden(key, run.cycles, &out, 1);
	ck_assert_uint_eq(out.nbytes, want.nbytes);
	int64_t hidden = want.dims[want.rank - 1], per = (int64_t)seq * hidden;
	const float *g = out.data, *w = want.data;
	/* centred copies: PyTorch's mean hidden state removed from both */
	int64_t ntok = (int64_t)batch * seq;
	double *mean = calloc((size_t)hidden, sizeof *mean);
	float *gc = malloc((size_t)(ntok * hidden) * sizeof *gc);
	float *wc = malloc((size_t)(ntok * hidden) * sizeof *wc);
	ck_assert(mean && gc && wc);
	for (int64_t t = 0; t < ntok; t++)
		for (int64_t j = 0; j < hidden; j++)
			mean[j] += w[t * hidden + j] / (double)ntok;
	for (int64_t t = 0; t < ntok; t++)
		for (int64_t j = 0; j < hidden; j++) {
			gc[t * hidden + j] = (float)(g[t * hidden + j] - mean[j]);
			wc[t * hidden + j] = (float)(w[t * hidden + j] - mean[j]);
		}
	for (int b = 0; b < batch; b++) {
		double cs = cosine(g + b * per, w + b * per, per), worst = 1;
		double cc = cosine(gc + b * per, wc + b * per, per);
		int64_t worst_tok = 0;
		for (int64_t s = 0; s < seq; s++) {
			double ct = cosine(g + b * per + s * hidden, w + b * per + s * hidden, hidden);
			if (ct < worst) {
				worst = ct;
				worst_tok = s;
			}
		}
		printf("bert seq %d batch %d sequence %d on %s: cosine %.6f (worst token %lld: "
		       "%.6f; centred %.6f), %llu cycles (%.1f us)\n",
		       seq, batch, b, soc, cs, (long long)worst_tok, worst, cc,
		       (unsigned long long)run.cycles, (double)run.cycles / cfg.core_freq_mhz);
		fflush(stdout);
		ck_assert_msg(cs >= 0.999, "seq %d batch %d sequence %d: cosine %.6f", seq, batch, b,
			      cs);
		ck_assert_msg(cc >= 0.999, "seq %d batch %d sequence %d: centred cosine %.6f", seq,
			      batch, b, cc);
		ck_assert_msg(worst >= 0.99, "seq %d batch %d sequence %d token %lld: cosine %.6f",
			      seq, batch, b, (long long)worst_tok, worst);
	}
	free(mean);
	free(gc);
	free(wc);
	rt_run_free(&run);
	om_tensor_free(&out);
	om_tensor_free(&in);
	om_tensor_free(&want);
	sim_device_free(dev);
	om_free(&m);
}

START_TEST(bert_base_matches_pytorch)
{
	if (!strcmp(env_or("DAVINCI_BERT", DEFAULT_SHAPES), "none"))
		return;
	export_all();
	char spec[1024];
	snprintf(spec, sizeof spec, "%s", env_or("DAVINCI_BERT", DEFAULT_SHAPES));
	char *save = NULL;
	for (char *item = strtok_r(spec, " ", &save); item; item = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(item, ':');
		ck_assert_msg(colon != NULL, "DAVINCI_BERT: '%s' is not SEQ:BATCH,...", item);
		*colon = 0;
		char *s2 = NULL;
		for (char *b = strtok_r(colon + 1, ",", &s2); b; b = strtok_r(NULL, ",", &s2))
			check_shape(atoi(item), atoi(b));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bert");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, bert_base_matches_pytorch);
	tcase_set_timeout(tc, 3600);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK); /* one export for the whole run */
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tu_models_free(workdir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
