/* point.c: one what-if point (see point.h): configurations, the compiled-
 * model cache, the simulation, the summary, the trace and the advisor's
 * verdict. */
/* Messages and paths are cut to their buffers on purpose (a long error
 * text loses its tail rather than failing), which this warning flags. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "advisor.h"
#include "bench.h"
#include "compile.h"
#include "om.h"
#include "onnx.pb-c.h"
#include "point.h"
#include "runtime.h"
#include "summary.h"
#include "tensor_io.h"
#include "trace.h"

/* ---- the key classes (compile_keys.def) --------------------------------- */

struct key_row {
	const char *section, *key;
	enum st_key_class cls;
	const char *why;
};

static const struct key_row key_rows[] = {
#define STUDY_KEY(sec, key, cls, why) { #sec, #key, ST_KEY_##cls, why },
#include "compile_keys.def"
};
#define NROWS (sizeof key_rows / sizeof key_rows[0])

unsigned st_nkeys(void)
{
	return (unsigned)NROWS;
}

const char *st_key_name(unsigned i, char *buf, size_t len)
{
	if (i >= NROWS)
		return NULL;
	snprintf(buf, len, "%s.%s", key_rows[i].section, key_rows[i].key);
	return buf;
}

const char *st_key_class_name(enum st_key_class c)
{
	return c == ST_KEY_LAYOUT ? "layout" : c == ST_KEY_TUNING ? "tuning" : "runtime";
}

int st_key_class(const char *dotted, enum st_key_class *cls, const char **why)
{
	const char *dot = strchr(dotted, '.');
	if (!dot)
		return -1;
	size_t sl = (size_t)(dot - dotted);
	for (size_t i = 0; i < NROWS; i++)
		if (strlen(key_rows[i].section) == sl && !strncmp(key_rows[i].section, dotted, sl) &&
		    !strcmp(key_rows[i].key, dot + 1)) {
			if (cls)
				*cls = key_rows[i].cls;
			if (why)
				*why = key_rows[i].why;
			return 0;
		}
	return -1;
}

uint64_t st_hash(const void *data, size_t n, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- configurations ------------------------------------------------------ */

/* The key of an assignment "section.key=value" (spaces around it dropped). */
static int set_key(const char *set, char *key, size_t len)
{
	while (*set == ' ' || *set == '\t')
		set++;
	const char *eq = strchr(set, '=');
	if (!eq)
		return -1;
	size_t n = (size_t)(eq - set);
	while (n && (set[n - 1] == ' ' || set[n - 1] == '\t'))
		n--;
	if (!n || n >= len)
		return -1;
	memcpy(key, set, n);
	key[n] = 0;
	return 0;
}

int st_point_configs(const struct st_point *p, struct soc_config *compile_cfg,
		     struct soc_config *run_cfg, char *err, size_t errlen)
{
	struct soc_config run, comp;
	if (soc_load(p->soc, &run, err, errlen))
		return -1;
	comp = run;
	for (unsigned i = 0; i < p->nsets; i++) {
		char key[128];
		enum st_key_class cls;
		if (set_key(p->sets[i], key, sizeof key)) {
			snprintf(err, errlen, "'%s': expected section.key=value", p->sets[i]);
			return -1;
		}
		/* soc_set first: its message for an unknown key or a bad value
		 * is the one users know from --set */
		if (soc_set(&run, p->sets[i], err, errlen))
			return -1;
		if (st_key_class(key, &cls, NULL)) {
			snprintf(err, errlen, "%s: not in study/compile_keys.def (a key added to "
				 "sim/soc.def must be classified there)", key);
			return -1;
		}
		if (cls == ST_KEY_LAYOUT || (cls == ST_KEY_TUNING && p->retune))
			if (soc_set(&comp, p->sets[i], err, errlen))
				return -1;
	}
	if (compile_cfg)
		*compile_cfg = comp;
	if (run_cfg)
		*run_cfg = run;
	return 0;
}

int st_compile_ident(const struct st_point *p, char *buf, size_t len, char *err, size_t errlen)
{
	struct soc_config c;
	if (st_point_configs(p, &c, NULL, err, errlen))
		return -1;
	size_t n = 0;
#define ADD(...)                                                                        \
	do {                                                                            \
		int w_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);         \
		n += w_ > 0 ? (size_t)w_ : 0;                                           \
	} while (0)
	ADD("soc=%s\nbatch=%u\n", c.name, p->batch);
	/* every key, whatever its class: RUNTIME keys hold the base chip's
	 * values here, so they never split the cache, and the text stays
	 * complete if a key changes class */
	for (unsigned i = 0; i < NROWS; i++) {
		char name[96];
		double v;
		st_key_name(i, name, sizeof name);
		if (soc_get(&c, name, &v)) {
			snprintf(err, errlen, "%s: listed in study/compile_keys.def but not in "
				 "sim/soc.def", name);
			return -1;
		}
		ADD("%s=%.17g\n", name, v);
	}
#undef ADD
	if (n >= len) {
		snprintf(err, errlen, "compile identity: buffer too small");
		return -1;
	}
	return 0;
}

/* ---- small file helpers -------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int read_all(const char *path, unsigned char **data, size_t *n, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	unsigned char *b = malloc(cap);
	while (b) {
		if (len == cap) {
			unsigned char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		size_t r = fread(b + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (!b || bad) {
		free(b);
		snprintf(err, errlen, "%s: %s", path, b ? "read error" : "out of memory");
		return -1;
	}
	*data = b;
	*n = len;
	return 0;
}

/* Write data to path through a temporary file in the same directory and a
 * rename, so a reader (another job of the study, maybe on another host
 * sharing the directory) sees the whole file or none. */
static int write_atomic(const char *path, const void *data, size_t n, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 64], host[64] = "host";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = 0;
	snprintf(tmp, sizeof tmp, "%s.tmp.%s.%ld", path, host, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int st_mkdir_p(const char *dir, char *err, size_t errlen)
{
	char b[PATH_MAX];
	if (snprintf(b, sizeof b, "%s", dir) >= (int)sizeof b) {
		snprintf(err, errlen, "%.200s...: path too long", dir);
		return -1;
	}
	for (char *s = b + 1;; s++) {
		int end = !*s;
		if (*s == '/' || end) {
			*s = 0;
			if (mkdir(b, 0777) && errno != EEXIST) {
				snprintf(err, errlen, "%s: %s", b, strerror(errno));
				return -1;
			}
			if (end)
				break;
			*s = '/';
		}
	}
	return 0;
}

/* ---- the model's first input, and a copy at another batch ---------------- */

/* The compiler takes the batch as ATC's --input_shape, which may only fill
 * in dynamic dimensions.  A model exported at a fixed batch (torchvision's
 * exports are) gets a copy whose first input's dim 0 is symbolic; shape
 * inference then carries the new batch through the graph (value_info
 * hints, which would pin the old one, are dropped from the copy). */
struct model_input {
	char shape[1024]; /* "name:B,d1,..." for cc_options.input_shape, or "" */
	int rewrite;      /* dim 0 is fixed at another value */
};

/* The first graph input that is not an initializer (older exporters list
 * the weights as inputs too), or NULL. */
static Onnx__ValueInfoProto *graph_first_input(const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_input; i++) {
		int is_init = 0;
		for (size_t k = 0; k < g->n_initializer && !is_init; k++)
			is_init = g->initializer[k]->name && g->input[i]->name &&
				  !strcmp(g->initializer[k]->name, g->input[i]->name);
		if (!is_init)
			return g->input[i];
	}
	return NULL;
}

static int first_input(const unsigned char *bytes, size_t n, const char *path, unsigned batch,
		       struct model_input *mi, Onnx__ModelProto **keep, char *err,
		       size_t errlen)
{
	memset(mi, 0, sizeof *mi);
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, bytes);
	if (!m || !m->graph) {
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		snprintf(err, errlen, "%s: not a valid ONNX model", path);
		return -1;
	}
	Onnx__GraphProto *g = m->graph;
	Onnx__ValueInfoProto *in = graph_first_input(g);
	int rc = -1;
	Onnx__TensorShapeProto *sh = in && in->type &&
						     in->type->value_case ==
							     ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
						     in->type->tensor_type
					     ? in->type->tensor_type->shape
					     : NULL;
	if (!in || !sh || !sh->n_dim) {
		snprintf(err, errlen, "%s: the first input has no tensor shape with a batch "
			 "dimension", path);
		goto done;
	}
	int64_t d0 = sh->dim[0]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
			     ? sh->dim[0]->dim_value
			     : -1;
	unsigned b = batch ? batch : d0 > 0 ? (unsigned)d0 : 1;
	size_t k = (size_t)snprintf(mi->shape, sizeof mi->shape, "%s:%u", in->name, b);
	for (size_t i = 1; i < sh->n_dim && k < sizeof mi->shape; i++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
		if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
		    d->dim_value < 1) {
			snprintf(err, errlen, "%s: input '%s' dimension %zu is dynamic; a study "
				 "varies only the batch (dimension 0)", path, in->name, i);
			goto done;
		}
		k += (size_t)snprintf(mi->shape + k, sizeof mi->shape - k, ",%lld",
				      (long long)d->dim_value);
	}
	if (k >= sizeof mi->shape) {
		snprintf(err, errlen, "%s: input '%.100s': shape too long", path, in->name);
		goto done;
	}
	mi->rewrite = d0 > 0 && (unsigned)d0 != b;
	if (mi->rewrite)
		for (size_t i = 0; i < g->n_initializer; i++)
			if (g->initializer[i]->has_data_location &&
			    g->initializer[i]->data_location ==
				    ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
				snprintf(err, errlen, "%s: the model fixes the batch at %lld and keeps "
					 "its weights in external files; export it with a dynamic "
					 "batch dimension to run batch %u", path, (long long)d0, b);
				goto done;
			}
	rc = 0;
done:
	if (rc || !mi->rewrite || !keep)
		onnx__model_proto__free_unpacked(m, NULL);
	else
		*keep = m;
	return rc;
}

/* Write m with its first input's dim 0 symbolic to path. */
static int write_dynamic_batch(Onnx__ModelProto *m, const char *path, char *err, size_t errlen)
{
	Onnx__GraphProto *g = m->graph;
	Onnx__ValueInfoProto *in = graph_first_input(g);
	Onnx__TensorShapeProto__Dimension *d = in->type->tensor_type->shape->dim[0];
	/* changed in place and restored before the message is freed (its
	 * strings belong to protobuf-c's allocator) */
	Onnx__TensorShapeProto__Dimension saved = *d;
	size_t nvi = g->n_value_info;
	char param[] = "batch";
	d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	d->dim_param = param;
	g->n_value_info = 0;
	size_t n = onnx__model_proto__get_packed_size(m);
	unsigned char *buf = malloc(n ? n : 1);
	int rc = -1;
	if (!buf)
		snprintf(err, errlen, "out of memory");
	else if (onnx__model_proto__pack(m, buf) != n)
		snprintf(err, errlen, "%s: packing the model failed", path);
	else
		rc = write_atomic(path, buf, n, err, errlen);
	free(buf);
	*d = saved;
	g->n_value_info = nvi;
	return rc;
}

/* Compile the point's model for cfg; tmpdir holds the dynamic-batch copy
 * when one is needed. */
static int compile_model(const struct st_point *p, const unsigned char *bytes, size_t nbytes,
			 const struct soc_config *cfg, const char *tmpdir, struct om_model *om,
			 char *err, size_t errlen)
{
	struct model_input mi;
	Onnx__ModelProto *m = NULL;
	if (first_input(bytes, nbytes, p->model, p->batch, &mi, &m, err, errlen))
		return -1;
	const char *path = p->model;
	char copy[PATH_MAX + 64] = "", dir[PATH_MAX] = "";
	int rc = -1;
	if (mi.rewrite) {
		/* the copy keeps the model's file name: the .om and the traces
		 * are named after it */
		const char *base = strrchr(p->model, '/');
		base = base ? base + 1 : p->model;
		snprintf(dir, sizeof dir, "%s/batch.XXXXXX", tmpdir);
		if (!mkdtemp(dir)) {
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			dir[0] = 0;
			goto done;
		}
		snprintf(copy, sizeof copy, "%s/%s", dir, base);
		if (write_dynamic_batch(m, copy, err, errlen))
			goto done;
		path = copy;
	}
	struct cc_options o = { .input_shape = mi.shape,
				.fusion_switch_file = p->fusion_switch_file };
	rc = cc_compile(path, cfg, &o, om, err, errlen);
	if (rc && copy[0]) {
		/* messages name the model the user gave, not the temporary copy
		 * (whose random name would make results differ between runs) */
		char *hit = strstr(err, copy);
		if (hit) {
			char tail[1024];
			snprintf(tail, sizeof tail, "%s", hit + strlen(copy));
			snprintf(hit, errlen - (size_t)(hit - err), "%s%s", p->model, tail);
		}
	}
done:
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	if (copy[0])
		unlink(copy);
	if (dir[0])
		rmdir(dir);
	return rc;
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The compiled model of the point: from the cache, or compiled (and put in
 * the cache).  A compile error is cached too, so the other points that
 * share the binary report it without compiling again. */
static int get_model(const struct st_point *p, const struct soc_config *ccfg, const char *key,
		     const char *ident, const unsigned char *bytes, size_t nbytes,
		     struct om_model *om, struct st_result *r)
{
	char *err = r->error;
	size_t errlen = sizeof r->error;
	char e2[1024];
	if (!p->cache_dir) {
		const char *t = getenv("TMPDIR");
		r->compiled = 1;
		if (compile_model(p, bytes, nbytes, ccfg, t && *t ? t : "/tmp", om, e2, sizeof e2)) {
			snprintf(err, errlen, "compile: %s", e2);
			return -1;
		}
		return 0;
	}
	if (st_mkdir_p(p->cache_dir, e2, sizeof e2)) {
		snprintf(err, errlen, "cache: %s", e2);
		return -1;
	}
	char omp[PATH_MAX], errp[PATH_MAX], keyp[PATH_MAX], lockp[PATH_MAX];
	snprintf(omp, sizeof omp, "%s/%s.om", p->cache_dir, key);
	snprintf(errp, sizeof errp, "%s/%s.err", p->cache_dir, key);
	snprintf(keyp, sizeof keyp, "%s/%s.key", p->cache_dir, key);
	snprintf(lockp, sizeof lockp, "%s/%s.lock", p->cache_dir, key);
	/* Jobs that need the same binary at the same time: the first compiles,
	 * the others wait on the lock and then read its result instead of
	 * compiling it again.  POSIX record locks, because NFS passes them
	 * between hosts; where the file system has none, the jobs compile side
	 * by side and the renames keep that safe. */
	int lfd = open(lockp, O_RDWR | O_CREAT, 0666);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	while (lfd >= 0 && fcntl(lfd, F_SETLKW, &fl)) {
		if (errno == EINTR)
			continue;
		close(lfd);
		lfd = -1;
	}
	int rc = -1;
	unsigned char *kt = NULL;
	size_t kn = 0;
	if (file_exists(omp) || file_exists(errp)) {
		/* the identity must match: a hash collision (or a tampered
		 * cache) must not hand out the wrong binary */
		if (read_all(keyp, &kt, &kn, e2, sizeof e2) || kn != strlen(ident) ||
		    memcmp(kt, ident, kn)) {
			snprintf(err, errlen, "cache: %s does not describe this point (a hash "
				 "collision or a damaged cache: delete %s)", keyp, p->cache_dir);
			goto done;
		}
		if (file_exists(omp)) {
			if (om_read(omp, om, ccfg->name, e2, sizeof e2)) {
				snprintf(err, errlen, "cache: %s", e2);
				goto done;
			}
			rc = 0;
			goto done;
		}
		unsigned char *et = NULL;
		size_t en = 0;
		if (read_all(errp, &et, &en, e2, sizeof e2)) {
			snprintf(err, errlen, "cache: %s", e2);
			goto done;
		}
		snprintf(err, errlen, "compile: %.*s", (int)en, (const char *)et);
		free(et);
		goto done;
	}
	r->compiled = 1;
	if (write_atomic(keyp, ident, strlen(ident), e2, sizeof e2)) {
		snprintf(err, errlen, "cache: %s", e2);
		goto done;
	}
	if (compile_model(p, bytes, nbytes, ccfg, p->cache_dir, om, e2, sizeof e2)) {
		char e3[256];
		snprintf(err, errlen, "compile: %s", e2);
		/* "out of memory" may pass on another host or a later run */
		if (!strstr(e2, "out of memory"))
			write_atomic(errp, e2, strlen(e2), e3, sizeof e3);
		goto done;
	}
	char tmp[PATH_MAX + 64], host[64] = "host";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = 0;
	snprintf(tmp, sizeof tmp, "%s.tmp.%s.%ld.om", omp, host, (long)getpid());
	e2[0] = 0;
	if (om_write(tmp, om, e2, sizeof e2) || rename(tmp, omp)) {
		snprintf(err, errlen, "cache: %s", e2[0] ? e2 : strerror(errno));
		unlink(tmp);
		om_free(om);
		goto done;
	}
	rc = 0;
done:
	free(kt);
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	return rc;
}

/* ---- simulation ---------------------------------------------------------- */

/* The run: st_bench_run, as simrun runs a model (its seeded inputs too),
 * so both report the same cycles for the same point. */
static int simulate(const struct st_point *p, const struct soc_config *cfg,
		    const struct om_model *om, struct st_result *r)
{
	char e2[1024];
	struct st_bench_opts o = {
		.sim = { .mode = p->full ? SIM_MODE_FULL : SIM_MODE_TIMING },
		.session = { .loop = p->loop ? p->loop : 2, .streams = p->streams ? p->streams : 1,
			     .timing_warm = 1 },
		.seed = 1, /* simrun's default --seed */
		.spans = p->trace_dir && p->timeline,
	};
	struct st_bench b;
	enum st_bench_stage st = st_bench_run(cfg, om, &o, NULL, 1, NULL, &b, e2, sizeof e2);
	if (st != ST_BENCH_OK) {
		snprintf(r->error, sizeof r->error, "%s: %s",
			 st == ST_BENCH_SUMMARY ? "summary" : "run", e2);
		return -1;
	}
	const struct trc_summary *sum = &b.sum;
	r->batch = sum->batch;
	r->first_latency_us = sum->first_latency_us;
	r->warm_latency_us = sum->warm_latency_us;
	r->throughput_fps = sum->throughput_fps;
	r->roofline_efficiency = sum->roofline_efficiency;
	for (int i = 0; i < ISA_NPIPES; i++)
		r->pipe_util[i] = sum->pipe_util[i];
	int rc = 0;
	if (p->trace_dir && st_bench_trace(&b, cfg, om, p->trace_dir, e2, sizeof e2)) {
		snprintf(r->error, sizeof r->error, "trace: %s", e2);
		rc = -1;
	}
	st_bench_free(&b);
	return rc;
}

/* The advisor's verdict on the trace.  Its failure does not fail the point:
 * the numbers stand without a bound. */
static void classify(const char *dir, struct st_result *r)
{
	struct adv_report *rep = NULL;
	if (adv_analyze(dir, &rep, r->bound_error, sizeof r->bound_error)) {
		snprintf(r->bound, sizeof r->bound, "unknown");
		return;
	}
	snprintf(r->bound, sizeof r->bound, "%s", adv_bound_name(adv_verdict(rep)));
	adv_free(rep);
}

int st_point_run(const struct st_point *p, struct st_result *r)
{
	memset(r, 0, sizeof *r);
	char e2[1024];
	struct soc_config ccfg, rcfg;
	if (st_point_configs(p, &ccfg, &rcfg, e2, sizeof e2)) {
		snprintf(r->error, sizeof r->error, "config: %s", e2);
		return -1;
	}
	enum { IDENT_MAX = 8192 };
	char *ident = malloc(IDENT_MAX);
	unsigned char *bytes = NULL;
	size_t nbytes = 0;
	struct om_model om;
	int have_om = 0, rc = -1;
	if (!ident) {
		snprintf(r->error, sizeof r->error, "out of memory");
		return -1;
	}
	if (st_compile_ident(p, ident, IDENT_MAX - 128, e2, sizeof e2)) {
		snprintf(r->error, sizeof r->error, "config: %s", e2);
		goto done;
	}
	double t0 = now_s();
	if (read_all(p->model, &bytes, &nbytes, e2, sizeof e2)) {
		snprintf(r->error, sizeof r->error, "model: %s", e2);
		goto done;
	}
	/* the content, not the path: a re-exported model must not hit an old
	 * binary */
	uint64_t fh = 0;
	if (p->fusion_switch_file) {
		unsigned char *fb;
		size_t fn;
		if (read_all(p->fusion_switch_file, &fb, &fn, e2, sizeof e2)) {
			snprintf(r->error, sizeof r->error, "fusion switch file: %s", e2);
			goto done;
		}
		fh = st_hash(fb, fn, ST_HASH_INIT);
		free(fb);
	}
	/* the compiler is part of the binary's identity: a rebuilt simsweep
	 * (a changed compiler/) must not pick up the old build's .om files;
	 * hashing the executable is cheap next to a compile */
	uint64_t xh = 0;
	unsigned char *xb;
	size_t xn;
	if (!read_all("/proc/self/exe", &xb, &xn, e2, sizeof e2)) {
		xh = st_hash(xb, xn, ST_HASH_INIT);
		free(xb);
	}
	size_t il = strlen(ident);
	snprintf(ident + il, IDENT_MAX - il, "model=%016llx\nfusion=%016llx\ncompiler=%016llx\n",
		 (unsigned long long)st_hash(bytes, nbytes, ST_HASH_INIT),
		 (unsigned long long)fh, (unsigned long long)xh);
	snprintf(r->compile_key, sizeof r->compile_key, "%016llx",
		 (unsigned long long)st_hash(ident, strlen(ident), ST_HASH_INIT));
	int got = get_model(p, &ccfg, r->compile_key, ident, bytes, nbytes, &om, r);
	double t1 = now_s();
	r->compile_s = t1 - t0;
	if (got)
		goto done;
	have_om = 1;
	free(bytes);
	bytes = NULL;
	r->ntasks = om.ntasks;
	if (simulate(p, &rcfg, &om, r))
		goto done;
	r->simulate_s = now_s() - t1;
	if (p->trace_dir)
		classify(p->trace_dir, r);
	r->ok = 1;
	rc = 0;
done:
	if (have_om)
		om_free(&om);
	free(bytes);
	free(ident);
	return rc;
}
