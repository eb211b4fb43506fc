/* sweep.c: what-if studies (see sweep.h): the spec file, the points of the
 * cartesian product, running them (locally in worker processes, or as
 * independent jobs), and assembling results.csv. */
/* Messages and paths are cut to their buffers on purpose (a long error
 * text loses its tail rather than failing), which this warning flags. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#define _XOPEN_SOURCE 700 /* realpath */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS: the workers' shared count */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep.h"
#include "trace_read.h"

const char *const sw_metric_names[SW_NMETRICS] = {
	"first_latency_us", "warm_latency_us", "throughput_fps", "util_S", "util_MTE1",
	"util_MTE2",        "util_MTE3",       "util_M",         "util_V"
};

/* ---- small helpers ------------------------------------------------------- */

static char *dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	while (b) {
		if (n + 1 >= cap) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		size_t r = fread(b + n, 1, cap - n - 1, f);
		n += r;
		if (!r)
			break;
	}
	fclose(f);
	if (b) {
		b[n] = 0;
		if (len)
			*len = n;
	}
	return b;
}

/* Write text to path through a temporary file and a rename: readers on any
 * host sharing the directory see the old file or the new one, whole. */
static int write_text(const char *path, const char *text, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 64], host[64] = "host";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = 0;
	snprintf(tmp, sizeof tmp, "%s.tmp.%s.%ld", path, host, (long)getpid());
	FILE *f = fopen(tmp, "w");
	size_t n = strlen(text);
	if (!f || fwrite(text, 1, n, f) != n || fclose(f)) {
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

/* A growing string. */
struct buf {
	char *s;
	size_t n, cap;
	int oom;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap - b->n;
		int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
		va_end(ap);
		if (w < 0) {
			b->oom = 1;
			return;
		}
		if (b->s && (size_t)w < room) {
			b->n += (size_t)w;
			return;
		}
		size_t nc = b->cap ? b->cap : 1024;
		while (nc <= b->n + (size_t)w)
			nc *= 2;
		char *ns = realloc(b->s, nc);
		if (!ns) {
			b->oom = 1;
			return;
		}
		b->s = ns;
		b->cap = nc;
	}
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_field(struct buf *b, const char *s, int force_quote)
{
	if (!force_quote && !strpbrk(s, ",\"\n\r")) {
		bprintf(b, "%s", s);
		return;
	}
	bprintf(b, "\"");
	for (; *s; s++) {
		if (*s == '"')
			bprintf(b, "\"\"");
		else if (*s == '\n' || *s == '\r')
			bprintf(b, " "); /* one row per line, always */
		else
			bprintf(b, "%c", *s);
	}
	bprintf(b, "\"");
}

/* A word for the shell: single-quoted unless it is plain. */
static void sh_word(struct buf *b, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,") ==
			  strlen(s)) {
		bprintf(b, "%s", s);
		return;
	}
	bprintf(b, "'");
	for (; *s; s++)
		if (*s == '\'')
			bprintf(b, "'\\''");
		else
			bprintf(b, "%c", *s);
	bprintf(b, "'");
}

/* ---- the spec ------------------------------------------------------------- */

int sw_spec_add_dim(struct sw_spec *s, const char *name, const char *values, char *err,
		    size_t errlen)
{
	if (s->ndims == SW_MAX_DIMS) {
		snprintf(err, errlen, "at most %d varied keys", SW_MAX_DIMS);
		return -1;
	}
	char nm[128];
	snprintf(nm, sizeof nm, "%s", name);
	char *n = trim(nm);
	if (strcmp(n, "batch") && st_key_class(n, NULL, NULL)) {
		snprintf(err, errlen, "--vary %s: no such SoC key (simsweep --list-keys lists "
			 "them)", n);
		return -1;
	}
	for (unsigned i = 0; i < s->ndims; i++)
		if (!strcmp(s->dims[i].name, n)) {
			snprintf(err, errlen, "%s is varied twice", n);
			return -1;
		}
	struct sw_dim d = { .name = dupstr(n) };
	char *copy = dupstr(values);
	if (!d.name || !copy) {
		free(d.name);
		free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = 0;
	for (char *save = NULL, *v = strtok_r(copy, ",", &save); v && !rc;
	     v = strtok_r(NULL, ",", &save)) {
		v = trim(v);
		char *e;
		long long b = strtoll(v, &e, 10);
		if (!*v || strchr(v, '\n') || strlen(v) > 100) {
			snprintf(err, errlen, "%s: bad value '%s'", n, v);
			rc = -1;
		} else if (!strcmp(n, "batch") && (*e || b < 1 || b > 1000000)) {
			snprintf(err, errlen, "batch: '%s' is not a batch size (1..1000000)", v);
			rc = -1;
		} else {
			char **nv = realloc(d.values, (d.n + 1) * sizeof *nv);
			if (!nv || !(nv[d.n] = dupstr(v))) {
				if (nv)
					d.values = nv;
				snprintf(err, errlen, "out of memory");
				rc = -1;
			} else {
				d.values = nv;
				d.n++;
			}
		}
	}
	free(copy);
	if (!rc && !d.n) {
		snprintf(err, errlen, "%s: no values", n);
		rc = -1;
	}
	if (rc) {
		for (unsigned i = 0; i < d.n; i++)
			free(d.values[i]);
		free(d.values);
		free(d.name);
		return -1;
	}
	s->dims[s->ndims++] = d;
	return 0;
}

void sw_spec_free(struct sw_spec *s)
{
	free(s->dir);
	free(s->soc);
	free(s->model);
	free(s->fusion);
	for (unsigned i = 0; i < s->nsets; i++)
		free(s->sets[i]);
	for (unsigned d = 0; d < s->ndims; d++) {
		for (unsigned i = 0; i < s->dims[d].n; i++)
			free(s->dims[d].values[i]);
		free(s->dims[d].values);
		free(s->dims[d].name);
	}
	memset(s, 0, sizeof *s);
}

unsigned sw_npoints(const struct sw_spec *s)
{
	unsigned long long n = 1;
	for (unsigned d = 0; d < s->ndims; d++)
		n *= s->dims[d].n;
	return n > 1000000 ? 0 : (unsigned)n;
}

static int batch_dim(const struct sw_spec *s)
{
	for (unsigned d = 0; d < s->ndims; d++)
		if (!strcmp(s->dims[d].name, "batch"))
			return (int)d;
	return -1;
}

static char *spec_text(const struct sw_spec *s)
{
	struct buf b = { 0 };
	bprintf(&b, "# simsweep study, %u points: `simsweep --spec THIS --point K` runs point K "
		"(0-based),\n# `simsweep --merge DIR` assembles DIR/results.csv.  The chip is "
		"soc.ini next to this file.\nsimsweep-spec 1\n", sw_npoints(s));
	bprintf(&b, "soc %s\nmodel %s\n", s->soc, s->model);
	if (s->fusion)
		bprintf(&b, "fusion %s\n", s->fusion);
	for (unsigned i = 0; i < s->nsets; i++)
		bprintf(&b, "set %s\n", s->sets[i]);
	bprintf(&b, "batch %u\nloop %u\nstreams %u\nmode %s\nretune %s\ntimeline %s\n", s->batch,
		s->loop ? s->loop : 2, s->streams ? s->streams : 1, s->full ? "full" : "timing",
		s->retune ? "yes" : "no", s->timeline ? "yes" : "no");
	for (unsigned d = 0; d < s->ndims; d++) {
		bprintf(&b, "vary %s ", s->dims[d].name);
		for (unsigned i = 0; i < s->dims[d].n; i++)
			bprintf(&b, "%s%s", i ? "," : "", s->dims[d].values[i]);
		bprintf(&b, "\n");
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static unsigned long long spec_hash(const char *spec, const char *soc_ini)
{
	uint64_t h = st_hash(spec, strlen(spec), ST_HASH_INIT);
	return (unsigned long long)st_hash(soc_ini, strlen(soc_ini), h);
}

static char *abs_path(const char *p, char *err, size_t errlen)
{
	char r[PATH_MAX];
	if (!realpath(p, r)) {
		snprintf(err, errlen, "%s: %s", p, strerror(errno));
		return NULL;
	}
	char *d = dupstr(r);
	if (!d)
		snprintf(err, errlen, "out of memory");
	return d;
}

int sw_spec_write(struct sw_spec *s, char *err, size_t errlen)
{
	char e2[1024];
	if (!s->dir || !s->soc || !s->model) {
		snprintf(err, errlen, "a study needs --out, --soc and --model");
		return -1;
	}
	if (!sw_npoints(s)) {
		snprintf(err, errlen, "more than 1000000 points");
		return -1;
	}
	if (st_mkdir_p(s->dir, err, errlen))
		return -1;
	char *d = abs_path(s->dir, err, errlen), *m, *f = NULL;
	if (!d)
		return -1;
	free(s->dir);
	s->dir = d;
	if (!(m = abs_path(s->model, err, errlen)))
		return -1;
	free(s->model);
	s->model = m;
	if (s->fusion) {
		if (!(f = abs_path(s->fusion, err, errlen)))
			return -1;
		free(s->fusion);
		s->fusion = f;
	}
	/* the base chip: a bad --set fails the study, not every point */
	struct soc_config cfg;
	if (soc_load(s->soc, &cfg, e2, sizeof e2)) {
		snprintf(err, errlen, "%s", e2);
		return -1;
	}
	for (unsigned i = 0; i < s->nsets; i++)
		if (soc_set(&cfg, s->sets[i], e2, sizeof e2)) {
			snprintf(err, errlen, "%s", e2); /* soc_set names the --set */
			return -1;
		}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/soc.ini", s->dir);
	char *ini = NULL;
	size_t inilen = 0;
	FILE *mf = open_memstream(&ini, &inilen);
	if (!mf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	soc_dump(&cfg, mf);
	fclose(mf);
	char *spec = spec_text(s);
	int rc = -1;
	if (!spec) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (write_text(path, ini, err, errlen))
		goto done;
	snprintf(path, sizeof path, "%s/spec.txt", s->dir);
	if (write_text(path, spec, err, errlen))
		goto done;
	s->hash = spec_hash(spec, ini);
	rc = 0;
done:
	free(ini);
	free(spec);
	return rc;
}

int sw_spec_read(const char *path, struct sw_spec *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	char file[PATH_MAX + 32];
	struct stat st;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		snprintf(file, sizeof file, "%s/spec.txt", path);
	else
		snprintf(file, sizeof file, "%s", path);
	char *text = read_text(file, NULL);
	if (!text) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	char *absf = abs_path(file, err, errlen);
	if (!absf) {
		free(text);
		return -1;
	}
	char *slash = strrchr(absf, '/');
	*slash = 0;
	s->dir = absf;
	char *copy = dupstr(text);
	int rc = 0, lineno = 0, magic = 0;
	for (char *save = NULL, *ln = copy ? strtok_r(copy, "\n", &save) : NULL; ln && !rc;
	     ln = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (ln[0] == '#' || !*trim(ln))
			continue;
		char *sp = strchr(ln, ' ');
		char *val = sp ? (*sp = 0, sp + 1) : ln + strlen(ln);
		char **slot = NULL;
		if (!strcmp(ln, "simsweep-spec")) {
			magic = atoi(val) == 1;
		} else if (!strcmp(ln, "soc")) {
			slot = &s->soc;
		} else if (!strcmp(ln, "model")) {
			slot = &s->model;
		} else if (!strcmp(ln, "fusion")) {
			slot = &s->fusion;
		} else if (!strcmp(ln, "set")) {
			if (s->nsets == SW_MAX_SETS || !(s->sets[s->nsets++] = dupstr(val)))
				rc = -1;
		} else if (!strcmp(ln, "batch") || !strcmp(ln, "loop") || !strcmp(ln, "streams")) {
			char *e;
			unsigned long v = strtoul(val, &e, 10);
			if (*e || v > 1000000)
				rc = -1;
			else if (ln[0] == 'b')
				s->batch = (unsigned)v;
			else if (ln[0] == 'l')
				s->loop = (unsigned)v;
			else
				s->streams = (unsigned)v;
		} else if (!strcmp(ln, "mode")) {
			s->full = !strcmp(val, "full");
			rc = s->full || !strcmp(val, "timing") ? 0 : -1;
		} else if (!strcmp(ln, "retune") || !strcmp(ln, "timeline")) {
			int yes = !strcmp(val, "yes");
			if (!yes && strcmp(val, "no"))
				rc = -1;
			*(ln[0] == 'r' ? &s->retune : &s->timeline) = yes;
		} else if (!strcmp(ln, "vary")) {
			char *sp2 = strchr(val, ' ');
			char e2[256];
			if (!sp2)
				rc = -1;
			else {
				*sp2 = 0;
				if (sw_spec_add_dim(s, val, sp2 + 1, e2, sizeof e2)) {
					snprintf(err, errlen, "%s:%d: %s", file, lineno, e2);
					free(copy);
					free(text);
					sw_spec_free(s);
					return -1;
				}
			}
		} else {
			rc = -1;
		}
		if (slot && !rc) {
			free(*slot);
			if (!(*slot = dupstr(val)))
				rc = -1;
		}
	}
	free(copy);
	if (rc || !magic || !s->soc || !s->model) {
		snprintf(err, errlen, rc ? "%s:%d: not a simsweep spec line" :
			 "%s: not a simsweep spec (no simsweep-spec 1, soc or model line)", file,
			 lineno);
		free(text);
		sw_spec_free(s);
		return -1;
	}
	char inip[PATH_MAX + 32];
	snprintf(inip, sizeof inip, "%s/soc.ini", s->dir);
	char *ini = read_text(inip, NULL);
	if (!ini) {
		snprintf(err, errlen, "%s: %s", inip, strerror(errno));
		free(text);
		sw_spec_free(s);
		return -1;
	}
	s->hash = spec_hash(text, ini);
	free(ini);
	free(text);
	return 0;
}

/* ---- points ------------------------------------------------------------------ */

static void decode(const struct sw_spec *s, unsigned k, unsigned *idx)
{
	for (unsigned d = s->ndims; d-- > 0;) {
		idx[d] = k % s->dims[d].n;
		k /= s->dims[d].n;
	}
}

int sw_point(const struct sw_spec *s, unsigned k, struct sw_point_buf *b, char *err,
	     size_t errlen)
{
	memset(b, 0, sizeof *b);
	if (k >= sw_npoints(s)) {
		snprintf(err, errlen, "point %u: the study has points 0..%u", k, sw_npoints(s) - 1);
		return -1;
	}
	decode(s, k, b->value);
	struct st_point *p = &b->p;
	snprintf(b->soc, sizeof b->soc, "%s/soc.ini", s->dir);
	snprintf(b->cache, sizeof b->cache, "%s/cache", s->dir);
	snprintf(b->trace, sizeof b->trace, "%s/points/%u/trace", s->dir, k);
	p->model = s->model;
	p->soc = b->soc;
	p->batch = s->batch;
	for (unsigned d = 0; d < s->ndims; d++) {
		const char *v = s->dims[d].values[b->value[d]];
		if (!strcmp(s->dims[d].name, "batch")) {
			p->batch = (unsigned)strtoul(v, NULL, 10);
			continue;
		}
		snprintf(b->set[p->nsets], sizeof b->set[0], "%s=%s", s->dims[d].name, v);
		b->sets[p->nsets] = b->set[p->nsets];
		p->nsets++;
	}
	p->sets = b->sets;
	p->fusion_switch_file = s->fusion;
	p->loop = s->loop;
	p->streams = s->streams;
	p->full = s->full;
	p->retune = s->retune;
	p->cache_dir = b->cache;
	p->trace_dir = b->trace;
	p->timeline = s->timeline;
	return 0;
}

static char *ident_of(const struct sw_spec *s, unsigned k)
{
	struct sw_point_buf *b = malloc(sizeof *b);
	char *id = malloc(8192), e[512];
	if (!b || !id || sw_point(s, k, b, e, sizeof e) ||
	    st_compile_ident(&b->p, id, 8192, e, sizeof e)) {
		free(id);
		id = NULL;
	}
	free(b);
	return id;
}

int sw_compile_reused(const struct sw_spec *s, unsigned k)
{
	char *mine = ident_of(s, k);
	int found = 0;
	for (unsigned j = 0; mine && j < k && !found; j++) {
		char *other = ident_of(s, j);
		found = other && !strcmp(other, mine);
		free(other);
	}
	free(mine);
	return found;
}

int sw_header(const struct sw_spec *s, char *buf, size_t len)
{
	struct buf b = { 0 };
	bprintf(&b, "point");
	for (unsigned d = 0; d < s->ndims; d++)
		bprintf(&b, ",%s", s->dims[d].name);
	if (batch_dim(s) < 0)
		bprintf(&b, ",batch");
	for (unsigned m = 0; m < SW_NMETRICS; m++)
		bprintf(&b, ",%s", sw_metric_names[m]);
	bprintf(&b, ",bound,compile_reused,status");
	int rc = b.oom || b.n >= len ? -1 : 0;
	if (!rc)
		memcpy(buf, b.s, b.n + 1);
	free(b.s);
	return rc;
}

static int point_dir(const struct sw_spec *s, unsigned k, char *buf, size_t len, char *err,
		     size_t errlen)
{
	snprintf(buf, len, "%s/points/%u", s->dir, k);
	return st_mkdir_p(buf, err, errlen);
}

/* points/k/result.csv (the header and the row) and points/k/point.txt. */
static int write_point(const struct sw_spec *s, unsigned k, const struct sw_point_buf *pb,
		       const struct st_result *r, int reused, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], hdr[8192];
	if (point_dir(s, k, dir, sizeof dir, err, errlen) || sw_header(s, hdr, sizeof hdr))
		return -1;
	struct buf b = { 0 };
	bprintf(&b, "%s\n%u", hdr, k);
	for (unsigned d = 0; d < s->ndims; d++) {
		bprintf(&b, ",");
		csv_field(&b, s->dims[d].values[pb->value[d]], 0);
	}
	if (batch_dim(s) < 0) {
		if (r->ok)
			bprintf(&b, ",%u", r->batch);
		else if (s->batch)
			bprintf(&b, ",%u", s->batch);
		else
			bprintf(&b, ",");
	}
	if (r->ok) {
		bprintf(&b, ",%.3f,%.3f,%.2f", r->first_latency_us, r->warm_latency_us,
			r->throughput_fps);
		for (int i = 0; i < ISA_NPIPES; i++)
			bprintf(&b, ",%.4f", r->pipe_util[i]);
		bprintf(&b, ",%s,%s,ok\n", r->bound, reused ? "yes" : "no");
	} else {
		for (unsigned m = 0; m < SW_NMETRICS; m++)
			bprintf(&b, ",");
		bprintf(&b, ",,%s,", reused ? "yes" : "no");
		csv_field(&b, r->error, 1);
		bprintf(&b, "\n");
	}
	struct buf t = { 0 };
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	bprintf(&t, "spec %016llx\nhost %s\ncompiled %s\ncompile_key %s\ncompile_s %.3f\n"
		"simulate_s %.3f\n", s->hash, host, r->compiled ? "yes" : "no",
		r->compile_key[0] ? r->compile_key : "-", r->compile_s, r->simulate_s);
	if (r->bound_error[0])
		bprintf(&t, "bound_error %s\n", r->bound_error);
	int rc = -1;
	if (b.oom || t.oom) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	/* point.txt first: a result.csv is only taken with a point.txt that
	 * names this spec, and result.csv appears last, whole */
	snprintf(path, sizeof path, "%s/point.txt", dir);
	if (write_text(path, t.s, err, errlen))
		goto done;
	snprintf(path, sizeof path, "%s/result.csv", dir);
	rc = write_text(path, b.s, err, errlen);
done:
	free(b.s);
	free(t.s);
	return rc;
}

/* nth: how many of the study's points have finished with this one (a
 * local run counts them); 0 for a point run alone (--point K) */
static void progress(const struct sw_spec *s, unsigned k, unsigned nth,
		     const struct sw_point_buf *pb, const struct st_result *r)
{
	struct buf b = { 0 };
	if (nth)
		bprintf(&b, "simsweep: point %u of %u (#%u) [", nth, sw_npoints(s), k);
	else
		bprintf(&b, "simsweep: point %u of 0..%u [", k, sw_npoints(s) - 1);
	for (unsigned d = 0; d < s->ndims; d++)
		bprintf(&b, "%s%s=%s", d ? " " : "", s->dims[d].name,
			s->dims[d].values[pb->value[d]]);
	if (r->ok)
		bprintf(&b, "] warm %.3f us, %.1f /s, %s-bound; %s %.1f s, simulated %.1f s\n",
			r->warm_latency_us, r->throughput_fps, r->bound[0] ? r->bound : "?",
			r->compiled ? "compiled" : "cached binary", r->compile_s, r->simulate_s);
	else
		bprintf(&b, "] FAILED: %s\n", r->error);
	/* one write, so the lines of parallel workers do not interleave */
	if (!b.oom && write(2, b.s, b.n) < 0)
		b.oom = 1;
	free(b.s);
}

/* done: the local run's count of finished points (shared by its workers),
 * or NULL */
static int run_point(const struct sw_spec *s, unsigned k, int quiet, atomic_uint *done, char *err,
		     size_t errlen)
{
	struct sw_point_buf *pb = malloc(sizeof *pb);
	struct st_result *r = malloc(sizeof *r);
	int rc = -1;
	if (!pb || !r) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (sw_point(s, k, pb, err, errlen))
		goto done;
	char dir[PATH_MAX];
	if (point_dir(s, k, dir, sizeof dir, err, errlen))
		goto done;
	st_point_run(&pb->p, r);
	int reused = sw_compile_reused(s, k);
	if (!quiet)
		progress(s, k, done ? atomic_fetch_add(done, 1) + 1 : 0, pb, r);
	rc = write_point(s, k, pb, r, reused, err, errlen);
done:
	free(pb);
	free(r);
	return rc;
}

int sw_run_point(const struct sw_spec *s, unsigned k, int quiet, char *err, size_t errlen)
{
	return run_point(s, k, quiet, NULL, err, errlen);
}

int sw_fail_point(const struct sw_spec *s, unsigned k, const char *why, char *err, size_t errlen)
{
	struct sw_point_buf *pb = malloc(sizeof *pb);
	struct st_result *r = calloc(1, sizeof *r);
	int rc = -1;
	if (pb && r && !sw_point(s, k, pb, err, errlen)) {
		snprintf(r->error, sizeof r->error, "%s", why);
		rc = write_point(s, k, pb, r, sw_compile_reused(s, k), err, errlen);
	} else if (!pb || !r) {
		snprintf(err, errlen, "out of memory");
	}
	free(pb);
	free(r);
	return rc;
}

/* ---- running locally ------------------------------------------------------ */

static void clear_point(const struct sw_spec *s, unsigned k)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/points/%u/result.csv", s->dir, k);
	unlink(p);
	snprintf(p, sizeof p, "%s/points/%u/point.txt", s->dir, k);
	unlink(p);
}

int sw_run_local(const struct sw_spec *s, unsigned jobs, unsigned *failed, char *err,
		 size_t errlen)
{
	unsigned n = sw_npoints(s);
	unsigned *order = malloc(n * sizeof *order);
	pid_t *pid_of = calloc(n, sizeof *pid_of);
	char **ids = calloc(n, sizeof *ids);
	/* the finished points' count, which every worker adds its point to */
	atomic_uint *done = mmap(NULL, sizeof *done, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED)
		done = NULL;
	else
		atomic_init(done, 0);
	if (!order || !pid_of || !ids || !done) {
		free(order);
		free(pid_of);
		free(ids);
		if (done)
			munmap(done, sizeof *done);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* The first point of each compile identity goes first: the distinct
	 * compiles then run side by side, and the points after them find the
	 * binaries in the cache rather than waiting on each other's locks. */
	unsigned no = 0, nbin = 0;
	for (unsigned k = 0; k < n; k++)
		ids[k] = ident_of(s, k);
	for (int pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < n; k++) {
			int first = 1;
			for (unsigned j = 0; j < k && first && ids[k]; j++)
				first = !ids[j] || strcmp(ids[j], ids[k]);
			if (first == !pass)
				order[no++] = k;
			nbin += !pass && first && ids[k];
		}
	for (unsigned k = 0; k < n; k++)
		free(ids[k]);
	free(ids);
	if (!jobs)
		jobs = 1;
	fprintf(stderr, "simsweep: %u points in %s, %u distinct binar%s, %u job%s\n", n, s->dir,
		nbin, nbin == 1 ? "y" : "ies", jobs, jobs > 1 ? "s" : "");
	unsigned next = 0, running = 0;
	int rc = 0;
	while (next < n || running) {
		while (running < jobs && next < n) {
			unsigned k = order[next++];
			clear_point(s, k);
			fflush(stdout);
			fflush(stderr);
			pid_t pid = fork();
			if (pid < 0) {
				snprintf(err, errlen, "fork: %s", strerror(errno));
				rc = -1;
				next = n;
				break;
			}
			if (pid == 0) {
				char e[1024];
				int r = run_point(s, k, 0, done, e, sizeof e);
				if (r)
					fprintf(stderr, "simsweep: point %u: %s\n", k, e);
				fflush(stderr);
				_exit(r ? 1 : 0);
			}
			pid_of[k] = pid;
			running++;
		}
		if (!running)
			break;
		int st;
		pid_t w = wait(&st);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "wait: %s", strerror(errno));
			rc = -1;
			break;
		}
		running--;
		for (unsigned k = 0; k < n; k++) {
			if (pid_of[k] != w)
				continue;
			pid_of[k] = 0;
			char res[PATH_MAX + 64], why[128], e[1024];
			snprintf(res, sizeof res, "%s/points/%u/result.csv", s->dir, k);
			if (access(res, F_OK) == 0)
				break;
			/* the worker died before it could record the point */
			if (WIFSIGNALED(st))
				snprintf(why, sizeof why, "worker crashed: signal %d (%s)", WTERMSIG(st),
					 strsignal(WTERMSIG(st)));
			else
				snprintf(why, sizeof why, "worker exited with status %d",
					 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			fprintf(stderr, "simsweep: point %u of %u (#%u): %s\n",
				atomic_fetch_add(done, 1) + 1, n, k, why);
			if (sw_fail_point(s, k, why, e, sizeof e))
				fprintf(stderr, "simsweep: point %u: %s\n", k, e);
			break;
		}
	}
	free(order);
	free(pid_of);
	munmap(done, sizeof *done);
	if (rc)
		return -1;
	int missing = sw_merge(s, stderr, failed, err, errlen);
	return missing < 0 ? -1 : missing ? (snprintf(err, errlen, "%d points missing", missing), -1)
					  : 0;
}

/* ---- merge ----------------------------------------------------------------- */

static const char *txt_field(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == ' ') {
			const char *e = strchr(l + kl + 1, '\n');
			size_t n = e ? (size_t)(e - l - kl - 1) : strlen(l + kl + 1);
			snprintf(out, len, "%.*s", (int)n, l + kl + 1);
			return out;
		}
	return NULL;
}

int sw_merge(const struct sw_spec *s, FILE *log, unsigned *failed, char *err, size_t errlen)
{
	unsigned n = sw_npoints(s);
	char hdr[8192], want[32];
	if (sw_header(s, hdr, sizeof hdr)) {
		snprintf(err, errlen, "too many columns");
		return -1;
	}
	snprintf(want, sizeof want, "%016llx", s->hash);
	struct buf out = { 0 }, tim = { 0 }, miss = { 0 };
	bprintf(&out, "%s\n", hdr);
	bprintf(&tim, "point,host,compiled,compile_key,compile_s,simulate_s\n");
	unsigned nmiss = 0, nfail = 0;
	size_t hl = strlen(hdr);
	for (unsigned k = 0; k < n; k++) {
		char p[PATH_MAX + 64], v[256];
		snprintf(p, sizeof p, "%s/points/%u/point.txt", s->dir, k);
		char *pt = read_text(p, NULL);
		snprintf(p, sizeof p, "%s/points/%u/result.csv", s->dir, k);
		char *rs = pt ? read_text(p, NULL) : NULL;
		int good = pt && rs && txt_field(pt, "spec", v, sizeof v) && !strcmp(v, want) &&
			   !strncmp(rs, hdr, hl) && rs[hl] == '\n' && rs[hl + 1];
		if (good) {
			const char *row = rs + hl + 1;
			bprintf(&out, "%s", row);
			if (row[strlen(row) - 1] != '\n')
				bprintf(&out, "\n");
			nfail += !strstr(row, ",ok\n");
			char host[256] = "", comp[8] = "", key[32] = "", cs[32] = "", ss[32] = "";
			txt_field(pt, "host", host, sizeof host);
			txt_field(pt, "compiled", comp, sizeof comp);
			txt_field(pt, "compile_key", key, sizeof key);
			txt_field(pt, "compile_s", cs, sizeof cs);
			txt_field(pt, "simulate_s", ss, sizeof ss);
			bprintf(&tim, "%u,", k);
			csv_field(&tim, host, 0);
			bprintf(&tim, ",%s,%s,%s,%s\n", comp, key, cs, ss);
		} else {
			bprintf(&miss, "%s%u%s", nmiss ? ", " : "", k, pt && !rs ? "" :
			       pt ? " (stale: run for another spec)" : "");
			nmiss++;
		}
		free(pt);
		free(rs);
	}
	int rc = -1;
	char path[PATH_MAX + 32];
	if (out.oom || tim.oom || miss.oom) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	snprintf(path, sizeof path, "%s/results.csv", s->dir);
	if (write_text(path, out.s, err, errlen))
		goto done;
	snprintf(path, sizeof path, "%s/timing.csv", s->dir);
	if (write_text(path, tim.s, err, errlen))
		goto done;
	if (nmiss && log)
		fprintf(log, "simsweep: %u of %u points missing: %s\n  run each with: simsweep --spec "
			"%s/spec.txt --point K; then simsweep --merge %s\n", nmiss, n, miss.s, s->dir,
			s->dir);
	if (log)
		fprintf(log, "simsweep: %s/results.csv: %u points, %u failed%s\n", s->dir, n - nmiss,
			nfail, nmiss ? " (incomplete)" : "");
	/* the plots, from the file just written (the parser is trace_read's) */
	struct trc_csv t;
	snprintf(path, sizeof path, "%s/results.csv", s->dir);
	if (trc_csv_read(path, &t, err, errlen))
		goto done;
	struct sw_row *rows = calloc(t.nrows + 1, sizeof *rows);
	if (!rows) {
		trc_csv_free(&t);
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	const char *pn[] = { "point", NULL }, *sn[] = { "status", NULL }, *bn[] = { "bound", NULL };
	int pc = trc_csv_col(&t, pn), sc = trc_csv_col(&t, sn), bc = trc_csv_col(&t, bn);
	for (size_t i = 0; i < t.nrows; i++) {
		rows[i].point = (unsigned)strtoul(trc_csv_cell(&t, i, pc), NULL, 10);
		rows[i].ok = !strcmp(trc_csv_cell(&t, i, sc), "ok");
		snprintf(rows[i].bound, sizeof rows[i].bound, "%s", trc_csv_cell(&t, i, bc));
		for (unsigned m = 0; m < SW_NMETRICS && rows[i].ok; m++) {
			const char *mn[] = { sw_metric_names[m], NULL };
			rows[i].metric[m] = strtod(trc_csv_cell(&t, i, trc_csv_col(&t, mn)), NULL);
		}
	}
	/* a chart that cannot be drawn costs the charts, not the study */
	char e2[1024];
	int pr = sw_plot(s, rows, (unsigned)t.nrows, e2, sizeof e2);
	if (pr && log)
		fprintf(log, "simsweep: plots: %s\n", e2);
	else if (log && s->ndims)
		fprintf(log, "simsweep: plots in %s/plots\n", s->dir);
	free(rows);
	trc_csv_free(&t);
	rc = (int)nmiss;
	if (failed)
		*failed = nfail;
done:
	free(out.s);
	free(tim.s);
	free(miss.s);
	return rc;
}

/* ---- scale-out -------------------------------------------------------------- */

int sw_emit_jobs(const struct sw_spec *s, const char *self, char *err, size_t errlen)
{
	unsigned n = sw_npoints(s);
	char spec[PATH_MAX + 32];
	snprintf(spec, sizeof spec, "%s/spec.txt", s->dir);
	struct buf j = { 0 }, b = { 0 };
	for (unsigned k = 0; k < n; k++) {
		sh_word(&j, self);
		bprintf(&j, " --spec ");
		sh_word(&j, spec);
		bprintf(&j, " --point %u\n", k);
	}
	bprintf(&b, "#!/bin/bash\n"
		"# Slurm array job: one task per point of the simsweep study in\n# %s\n"
		"# (written by simsweep --emit-jobs).  Submit, then merge when all have run:\n"
		"#   jid=$(sbatch --parsable %s/sweep.sbatch)\n"
		"#   sbatch --dependency=afterany:$jid --wrap '%s --merge %s'\n"
		"# The study directory must be shared with the compute nodes; compiling\n"
		"# ResNet-50 takes about 1 GB of memory.\n"
		"#SBATCH --job-name=simsweep\n#SBATCH --array=0-%u\n#SBATCH --ntasks=1\n"
		"#SBATCH --cpus-per-task=1\n#SBATCH --output=%s/points/slurm-%%A_%%a.out\n"
		"exec ", s->dir, s->dir, self, s->dir, n - 1, s->dir);
	sh_word(&b, self);
	bprintf(&b, " --spec ");
	sh_word(&b, spec);
	bprintf(&b, " --point \"$SLURM_ARRAY_TASK_ID\"\n");
	int rc = -1;
	char path[PATH_MAX + 32];
	if (j.oom || b.oom) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	snprintf(path, sizeof path, "%s/points", s->dir);
	if (st_mkdir_p(path, err, errlen))
		goto done;
	snprintf(path, sizeof path, "%s/jobs.txt", s->dir);
	if (write_text(path, j.s, err, errlen))
		goto done;
	snprintf(path, sizeof path, "%s/sweep.sbatch", s->dir);
	if (write_text(path, b.s, err, errlen))
		goto done;
	chmod(path, 0755);
	rc = 0;
done:
	free(j.s);
	free(b.s);
	return rc;
}
