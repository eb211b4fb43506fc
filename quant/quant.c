/* quant.c: simquant's driver: calibration on the simulator, auto-skip
 * measurements, the QDQ model and the report. */
#include "qt_int.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"
#include "fp16.h"
#include "model.h"
#include "sim.h"
#include "soc.h"

struct ctx {
	const struct qt_options *o;
	unsigned char *buf; /* the model file */
	size_t len;
	struct soc_config cfg;
	struct om_tensor *sets; /* nsets * ninputs */
	unsigned nsets, ninputs, noutputs; /* the model's own inputs / outputs */
	float **ref;      /* per set: the fp32 model's outputs, concatenated */
	size_t ref_n;     /* floats per set */
	struct qt_node *nodes;
	size_t nnodes;
	struct qt_act *acts;
	size_t nacts;
	char *err;
	size_t errlen;
};

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int read_all(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 20, n = 0;
	unsigned char *b = malloc(cap);
	while (b) {
		size_t r = fread(b + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		unsigned char *nb = realloc(b, cap *= 2);
		if (!nb)
			free(b);
		b = nb;
	}
	int bad = ferror(f);
	fclose(f);
	if (!b || bad) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

static Onnx__ModelProto *unpack(struct ctx *c)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, c->len, c->buf);
	if (!m || !m->graph) {
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		fail(c, "%s: not a valid ONNX model (protobuf parse failed)", c->o->model);
		return NULL;
	}
	return m;
}

/* Write m to path through a temporary file renamed into place, so a failed
 * write leaves nothing. */
static int write_model(struct ctx *c, const Onnx__ModelProto *m, const char *path)
{
	size_t n = onnx__model_proto__get_packed_size(m);
	uint8_t *b = malloc(n ? n : 1);
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
	if (!b)
		return fail(c, "out of memory");
	onnx__model_proto__pack(m, b);
	FILE *f = fopen(tmp, "wb");
	int ok = f && fwrite(b, 1, n, f) == n;
	if (f && fclose(f))
		ok = 0;
	free(b);
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return fail(c, "%s: cannot write", path);
	}
	return 0;
}

/* Compile m (written to a temporary file: cc_compile reads a path). */
static int compile(struct ctx *c, const Onnx__ModelProto *m, struct om_model *om)
{
	const char *t = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/simquant-XXXXXX", t && *t ? t : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return fail(c, "%s: cannot create a temporary file", path);
	close(fd);
	if (write_model(c, m, path))
		return -1;
	struct cc_options co = { .input_shape = c->o->input_shape };
	char e[4096];
	if (c->o->progress)
		fprintf(c->o->progress, "simquant: compiling for %s\r", c->cfg.name);
	int rc = cc_compile(path, &c->cfg, &co, om, e, sizeof e);
	if (c->o->progress)
		fprintf(c->o->progress, "\033[K");
	unlink(path);
	if (rc)
		return fail(c, "%s: %s", c->o->model, e);
	return 0;
}

static float *as_floats(const struct om_tensor *t, size_t *n)
{
	size_t cnt = t->dtype == 1 ? t->nbytes / 4 : t->dtype == 10 ? t->nbytes / 2 : 0;
	float *f = malloc(cnt ? cnt * sizeof *f : sizeof *f);
	if (!f || (t->dtype != 1 && t->dtype != 10)) {
		free(f);
		return NULL;
	}
	if (t->dtype == 1)
		memcpy(f, t->data, cnt * 4);
	else
		dv_f16_to_f32_n(t->data, f, cnt);
	*n = cnt;
	return f;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The calibration sets: --calib_dir's test_data_set_* (or its own
 * input_N.pb), or calib_count seeded normal sets; checked against om. */
static int load_sets(struct ctx *c, const struct om_model *om)
{
	const struct qt_options *o = c->o;
	char **dirs = NULL;
	unsigned nd = 0;
	c->ninputs = om->ninputs;
	if (o->calib_dir) {
		DIR *d = opendir(o->calib_dir);
		if (!d)
			return fail(c, "%s: cannot open the calibration directory", o->calib_dir);
		struct dirent *e;
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "test_data_set_", 14)) {
				char **nd2 = realloc(dirs, (nd + 1) * sizeof *dirs);
				if (!nd2)
					break;
				dirs = nd2;
				dirs[nd] = malloc(strlen(o->calib_dir) + strlen(e->d_name) + 2);
				if (dirs[nd])
					sprintf(dirs[nd++], "%s/%s", o->calib_dir, e->d_name);
			}
		closedir(d);
		if (nd)
			qsort(dirs, nd, sizeof *dirs, cmp_str);
		else if ((dirs = malloc(sizeof *dirs)) && (dirs[0] = strdup(o->calib_dir)))
			nd = 1;
	}
	unsigned ns = o->calib_dir ? nd : o->calib_count;
	c->sets = calloc((size_t)ns * om->ninputs + 1, sizeof *c->sets);
	if (!c->sets) {
		for (unsigned k = 0; k < nd; k++)
			free(dirs[k]);
		free(dirs);
		return fail(c, "out of memory");
	}
	c->nsets = ns;
	int rc = 0;
	for (unsigned k = 0; k < ns && !rc; k++)
		for (unsigned i = 0; i < om->ninputs && !rc; i++) {
			const struct om_tensor_desc *d = &om->inputs[i];
			struct om_tensor *t = &c->sets[(size_t)k * om->ninputs + i];
			if (o->calib_dir) {
				char p[4200];
				snprintf(p, sizeof p, "%s/input_%u.pb", dirs[k], i);
				if (om_tensor_read(p, t, c->err, c->errlen)) {
					rc = -1;
					break;
				}
				int same = t->dtype == d->dtype && t->rank == d->rank;
				for (int r = 0; same && r < d->rank; r++)
					same = t->dims[r] == d->dims[r];
				if (!same) {
					char want[256] = "", got[256] = "";
					for (int r = 0; r < d->rank; r++)
						snprintf(want + strlen(want), sizeof want - strlen(want),
							 "%s%lld", r ? "," : "", (long long)d->dims[r]);
					for (int r = 0; r < t->rank; r++)
						snprintf(got + strlen(got), sizeof got - strlen(got),
							 "%s%lld", r ? "," : "", (long long)t->dims[r]);
					rc = fail(c, "%s: dtype %d shape [%s], but the model's input %u "
						  "'%s' is dtype %d shape [%s]", p, t->dtype, got, i,
						  d->name, d->dtype, want);
				}
				continue;
			}
			if (d->dtype != 1) {
				rc = fail(c, "input '%s': generated calibration data needs float "
					  "inputs (give --calib_dir)", d->name);
				break;
			}
			snprintf(t->name, sizeof t->name, "%s", d->name);
			t->dtype = 1;
			t->rank = d->rank;
			size_t n = 1;
			for (int r = 0; r < d->rank; r++)
				n *= (size_t)(t->dims[r] = d->dims[r]);
			t->nbytes = n * 4;
			float *f = t->data = malloc(n ? n * 4 : 4);
			if (!f) {
				rc = fail(c, "out of memory");
				break;
			}
			/* standard normal, Box-Muller on xorshift64*: the same sets for
			 * the same seed on every host */
			uint64_t s = (o->seed + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)k << 32 | i);
			for (size_t e = 0; e < n; e += 2) {
				double u[2];
				for (int j = 0; j < 2; j++) {
					s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
					u[j] = ((double)((s * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) /
					       9007199254740992.0;
				}
				double r = sqrt(-2 * log(u[0])), th = 6.283185307179586 * u[1];
				f[e] = (float)(r * cos(th));
				if (e + 1 < n)
					f[e + 1] = (float)(r * sin(th));
			}
		}
	for (unsigned k = 0; k < nd; k++)
		free(dirs[k]);
	free(dirs);
	if (!rc && ns == 0)
		rc = fail(c, "%s: no calibration sets (test_data_set_*/ or input_N.pb)",
			  o->calib_dir ? o->calib_dir : "--calib_count");
	return rc;
}

/* Run om on every set; fn(c, k, outputs) sees each set's outputs. */
static int run_all(struct ctx *c, const struct om_model *om,
		   int (*fn)(struct ctx *, unsigned, const struct om_model *, struct om_tensor *,
			     void *), void *arg)
{
	struct sim_options so = { .mode = SIM_MODE_FULL };
	char e[4096];
	struct sim_device *dev = sim_device_new(&c->cfg, &so, e, sizeof e);
	if (!dev)
		return fail(c, "%s", e);
	struct om_tensor *out = calloc(om->noutputs + 1, sizeof *out);
	int rc = out ? 0 : fail(c, "out of memory");
	for (unsigned k = 0; k < c->nsets && !rc; k++) {
		if (c->o->progress)
			fprintf(c->o->progress, "simquant: set %u/%u\r", k + 1, c->nsets);
		struct rt_run run;
		int bad = rt_model_run(dev, om, c->sets + (size_t)k * c->ninputs, c->ninputs, out,
				       &run, e, sizeof e);
		rt_run_free(&run);
		if (bad) {
			rc = fail(c, "%s: simulating set %u: %s", c->o->model, k, e);
			break;
		}
		rc = fn(c, k, om, out, arg);
		for (unsigned i = 0; i < om->noutputs; i++)
			om_tensor_free(&out[i]);
	}
	if (c->o->progress)
		fprintf(c->o->progress, "\033[K");
	free(out);
	sim_device_free(dev);
	return rc;
}

/* The model's own outputs of one run, concatenated as floats. */
static float *collect_outputs(struct ctx *c, struct om_tensor *out, size_t *n)
{
	size_t tot = 0;
	float *all = NULL;
	for (unsigned i = 0; i < c->noutputs; i++) {
		size_t k = 0;
		float *f = as_floats(&out[i], &k);
		float *na = f ? realloc(all, (tot + k + 1) * sizeof *all) : NULL;
		if (!na) {
			free(f);
			free(all);
			fail(c, "output '%s': not a float tensor", out[i].name);
			return NULL;
		}
		all = na;
		memcpy(all + tot, f, k * sizeof *f);
		tot += k;
		free(f);
	}
	*n = tot;
	return all;
}

static int on_calib(struct ctx *c, unsigned k, const struct om_model *om, struct om_tensor *out,
		    void *arg)
{
	(void)arg;
	size_t n;
	float *ref = collect_outputs(c, out, &n);
	if (!ref)
		return -1;
	c->ref[k] = ref;
	c->ref_n = n;
	for (size_t a = 0; a < c->nacts; a++) {
		struct qt_act *q = &c->acts[a];
		const struct om_tensor *t = NULL;
		if (q->graph_input) {
			for (unsigned i = 0; i < c->ninputs; i++)
				if (!strcmp(om->inputs[i].name, q->name))
					t = &c->sets[(size_t)k * c->ninputs + i];
		} else if (q->out_index >= 0) {
			t = &out[q->out_index];
		}
		size_t cnt;
		float *f = t ? as_floats(t, &cnt) : NULL;
		if (!f)
			return fail(c, "tensor %s: no float values to calibrate on", q->name);
		qt_stats_add(&q->st, f, cnt);
		free(f);
	}
	return 0;
}

struct sqnr_acc {
	double sig, noise;
};

static int on_measure(struct ctx *c, unsigned k, const struct om_model *om,
		      struct om_tensor *out, void *arg)
{
	(void)om;
	struct sqnr_acc *s = arg;
	size_t n;
	float *f = collect_outputs(c, out, &n);
	if (!f)
		return -1;
	if (n != c->ref_n) {
		free(f);
		return fail(c, "output size changed");
	}
	for (size_t i = 0; i < n; i++) {
		double r = c->ref[k][i], d = r - f[i];
		s->sig += r * r;
		s->noise += d * d;
	}
	free(f);
	return 0;
}

/* Calibration: compile with every calibrated tensor as an extra output. */
static int calibrate(struct ctx *c)
{
	Onnx__ModelProto *m = unpack(c);
	if (!m)
		return -1;
	c->noutputs = (unsigned)m->graph->n_output;
	char **extra = calloc(c->nacts + 1, sizeof *extra);
	size_t ne = 0;
	for (size_t a = 0; extra && a < c->nacts; a++) {
		struct qt_act *q = &c->acts[a];
		if (q->graph_input)
			continue;
		for (size_t i = 0; i < m->graph->n_output; i++)
			if (!strcmp(m->graph->output[i]->name, q->name))
				q->out_index = (int)i;
		if (q->out_index < 0) {
			q->out_index = (int)(m->graph->n_output + ne);
			extra[ne++] = q->name;
		}
	}
	struct om_model om;
	int rc = !extra || qdq_add_outputs(m, extra, ne) ? fail(c, "out of memory") :
							     compile(c, m, &om);
	free(extra);
	onnx__model_proto__free_unpacked(m, NULL);
	if (rc)
		return -1;
	if (om.noutputs != c->noutputs + ne)
		rc = fail(c, "%s: the compiled calibration model has %u outputs, expected %zu",
			  c->o->model, om.noutputs, c->noutputs + ne);
	if (!rc)
		rc = load_sets(c, &om);
	if (!rc && !(c->ref = calloc(c->nsets, sizeof *c->ref)))
		rc = fail(c, "out of memory");
	if (!rc)
		rc = run_all(c, &om, on_calib, NULL);
	om_free(&om);
	for (size_t a = 0; !rc && a < c->nacts; a++) {
		struct qt_act *q = &c->acts[a];
		if (q->st.nonfinite)
			fprintf(stderr, "simquant: warning: tensor %s: %llu NaN/Inf values ignored\n",
				q->name, (unsigned long long)q->st.nonfinite);
		q->threshold = qt_threshold(&q->st, c->o->algo, c->o->percentile);
		/* an all-zero tensor: any scale is exact; 1 keeps DequantizeLinear valid */
		q->scale = q->threshold > 0 ? q->threshold / 127.0 : 1.0;
	}
	return rc;
}

static int by_sqnr(const void *a, const void *b)
{
	const struct qt_node *x = *(struct qt_node *const *)a, *y = *(struct qt_node *const *)b;
	return x->sqnr < y->sqnr ? -1 : x->sqnr > y->sqnr;
}

/* auto_skip: quantize one node at a time (the compiler runs it in int8),
 * measure the output's SQNR against the fp32 run, keep the worst N fp32. */
static int auto_skip(struct ctx *c)
{
	struct qt_node **cand = calloc(c->nnodes + 1, sizeof *cand);
	size_t nc = 0;
	if (!cand)
		return fail(c, "out of memory");
	for (size_t k = 0; k < c->nnodes; k++) {
		if (c->nodes[k].why != QT_INT8)
			continue;
		Onnx__ModelProto *m = unpack(c);
		if (!m) {
			free(cand);
			return -1;
		}
		struct om_model om;
		int rc = qdq_rewrite(m, c->nodes, c->nnodes, c->acts, c->o->gran, (long)k, 0, c->err,
				     c->errlen);
		if (!rc)
			rc = compile(c, m, &om);
		onnx__model_proto__free_unpacked(m, NULL);
		struct sqnr_acc s = { 0, 0 };
		if (!rc) {
			rc = run_all(c, &om, on_measure, &s);
			om_free(&om);
		}
		if (rc) {
			free(cand);
			return -1;
		}
		c->nodes[k].sqnr = s.noise > 0 ? 10 * log10(s.sig / s.noise) : INFINITY;
		if (c->o->progress)
			fprintf(c->o->progress, "simquant: %s alone int8: output SQNR %.2f dB\n",
				c->nodes[k].name, c->nodes[k].sqnr);
		cand[nc++] = &c->nodes[k];
	}
	qsort(cand, nc, sizeof *cand, by_sqnr);
	for (size_t i = 0; i < nc && i < c->o->auto_skip; i++) {
		cand[i]->why = QT_SKIP_AUTO;
		snprintf(cand[i]->detail, sizeof cand[i]->detail,
			 "--auto_skip: alone int8, output SQNR %.2f dB (among the %u worst)",
			 cand[i]->sqnr, c->o->auto_skip);
	}
	free(cand);
	return 0;
}

static const char *why_name(enum qt_why w)
{
	switch (w) {
	case QT_INT8: return "int8";
	case QT_SKIP_NAME: return "skipped by name";
	case QT_SKIP_TYPE: return "skipped by type";
	case QT_SKIP_AUTO: return "skipped by auto_skip";
	default: return "not quantizable";
	}
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

static int report(struct ctx *c)
{
	const struct qt_options *o = c->o;
	size_t n8 = 0;
	for (size_t k = 0; k < c->nnodes; k++)
		n8 += c->nodes[k].why == QT_INT8;
	if (o->report) {
		FILE *f = o->report;
		/* the percentile itself, not the algorithm's name again */
		char pct[64] = "";
		if (o->algo == QT_PERCENTILE)
			snprintf(pct, sizeof pct, " (the %gth of |x|)", o->percentile);
		fprintf(f, "simquant: %s -> %s: %zu of %zu Conv/Gemm/MatMul nodes int8; "
			"calibration %s%s on %u set(s), weights %s\n", o->model, o->output, n8,
			c->nnodes, qt_algo_name(o->algo), pct, c->nsets,
			o->gran == QT_PER_CHANNEL ? "per channel" : "per tensor");
		fprintf(f, "%-40s %12s %12s %12s\n", "tensor", "max|x|", "threshold", "scale");
		for (size_t a = 0; a < c->nacts; a++)
			fprintf(f, "%-40s %12.6g %12.6g %12.6g\n", c->acts[a].name, c->acts[a].st.amax,
				c->acts[a].threshold, c->acts[a].scale);
		fprintf(f, "%-40s %-8s %s\n", "node", "type", "precision");
		for (size_t k = 0; k < c->nnodes; k++) {
			const struct qt_node *q = &c->nodes[k];
			fprintf(f, "%-40s %-8s %s%s%s%s\n", q->name, q->op,
				q->why == QT_INT8 ? "int8" : "fp32", q->why == QT_INT8 ? "" : " (",
				q->why == QT_INT8 ? "" : q->detail, q->why == QT_INT8 ? "" : ")");
		}
	}
	if (!o->report_json)
		return 0;
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", o->report_json, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return fail(c, "%s: cannot write", o->report_json);
	fprintf(f, "{\n  \"model\": ");
	sim_json_str(f, o->model);
	fprintf(f, ",\n  \"output\": ");
	sim_json_str(f, o->output);
	fprintf(f, ",\n  \"calibration\": \"%s\",\n  \"percentile\": ", qt_algo_name(o->algo));
	json_num(f, o->percentile);
	fprintf(f, ",\n  \"weight_granularity\": \"%s\",\n  \"calibration_sets\": %u,\n"
		"  \"tensors\": [", o->gran == QT_PER_CHANNEL ? "per_channel" : "per_tensor",
		c->nsets);
	for (size_t a = 0; a < c->nacts; a++) {
		fprintf(f, "%s\n    {\"name\": ", a ? "," : "");
		sim_json_str(f, c->acts[a].name);
		fprintf(f, ", \"algorithm\": \"%s\", \"max\": ", qt_algo_name(o->algo));
		json_num(f, c->acts[a].st.amax);
		fprintf(f, ", \"threshold\": ");
		json_num(f, c->acts[a].threshold);
		fprintf(f, ", \"scale\": ");
		json_num(f, (float)c->acts[a].scale);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n  \"nodes\": [");
	for (size_t k = 0; k < c->nnodes; k++) {
		const struct qt_node *q = &c->nodes[k];
		fprintf(f, "%s\n    {\"name\": ", k ? "," : "");
		sim_json_str(f, q->name);
		fprintf(f, ", \"op_type\": ");
		sim_json_str(f, q->op);
		fprintf(f, ", \"precision\": \"%s\", \"reason\": \"%s\"",
			q->why == QT_INT8 ? "int8" : "fp32", why_name(q->why));
		if (q->why != QT_INT8) {
			fprintf(f, ", \"detail\": ");
			sim_json_str(f, q->detail);
		}
		if (!isnan(q->sqnr)) {
			fprintf(f, ", \"alone_int8_sqnr_db\": ");
			json_num(f, q->sqnr);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) || rename(tmp, o->report_json)) {
		unlink(tmp);
		return fail(c, "%s: cannot write", o->report_json);
	}
	return 0;
}

int qt_quantize(const struct qt_options *o, char *err, size_t errlen)
{
	struct ctx c = { .o = o, .err = err, .errlen = errlen };
	Onnx__ModelProto *base = NULL, *m = NULL;
	int rc = -1;
	if (o->algo == QT_PERCENTILE && !(o->percentile > 0 && o->percentile <= 100))
		return fail(&c, "--percentile=%g: need a value in (0, 100]", o->percentile);
	if (!o->calib_dir && o->calib_count == 0)
		return fail(&c, "--calib_count must be at least 1 without --calib_dir");
	if (read_all(o->model, &c.buf, &c.len))
		return fail(&c, "%s: cannot read the model", o->model);
	if (soc_load(o->soc, &c.cfg, err, errlen))
		goto out;
	/* base stays unpacked to the end: the node records point into it */
	base = unpack(&c);
	if (!base)
		goto out;
	rc = qdq_analyze(base, o->skip_nodes, o->skip_types, &c.nodes, &c.nnodes, &c.acts,
			 &c.nacts, err, errlen);
	if (rc)
		goto out;
	if ((rc = calibrate(&c)))
		goto out;
	if (o->auto_skip && (rc = auto_skip(&c)))
		goto out;
	/* the QDQ model, written only once everything else succeeded */
	if (!(m = unpack(&c))) {
		rc = -1;
		goto out;
	}
	rc = qdq_rewrite(m, c.nodes, c.nnodes, c.acts, o->gran, -1, !o->fp32_residual, err,
			 errlen);
	if (!rc)
		rc = report(&c);
	if (!rc)
		rc = write_model(&c, m, o->output);
	if (rc && o->report_json)
		unlink(o->report_json);
	onnx__model_proto__free_unpacked(m, NULL);
out:
	if (base)
		onnx__model_proto__free_unpacked(base, NULL);
	free(c.buf);
	for (size_t i = 0; c.sets && i < (size_t)c.nsets * c.ninputs; i++)
		om_tensor_free(&c.sets[i]);
	free(c.sets);
	for (unsigned k = 0; c.ref && k < c.nsets; k++)
		free(c.ref[k]);
	free(c.ref);
	for (size_t a = 0; a < c.nacts; a++)
		free(c.acts[a].name);
	free(c.acts);
	free(c.nodes);
	return rc;
}
