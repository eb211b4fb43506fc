/* serve_table.c: the service table (see serve.h): how long one batch of a
 * compiled variant takes on one stream while c executions are in flight.
 * Read from and written to CSV, so a characterisation (minutes of
 * simulation) is paid once and tests inject times without a model. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

void sv_table_free(struct sv_table *t)
{
	for (unsigned v = 0; v < SV_MAX_VARIANTS; v++) {
		free(t->kern[v]);
		free(t->pair[v]);
	}
	free(t->svc);
	memset(t, 0, sizeof *t);
}

int sv_table_variant(const struct sv_table *t, unsigned items)
{
	for (unsigned v = 0; v < t->nvariants; v++)
		if (t->batch[v] >= items)
			return (int)v;
	return -1;
}

const struct sv_service *sv_table_get(const struct sv_table *t, unsigned variant, unsigned conc)
{
	if (conc < 1)
		conc = 1;
	if (conc > t->max_conc)
		conc = t->max_conc;
	return &t->svc[(size_t)variant * t->max_conc + conc - 1];
}

static int valid_service(const struct sv_service *s)
{
	return isfinite(s->h2d_us) && isfinite(s->device_us) && isfinite(s->d2h_us) &&
	       s->h2d_us >= 0 && s->device_us > 0 && s->d2h_us >= 0 && s->fixed_us >= 0 &&
	       s->fixed_us < s->device_us;
}

int sv_table_make(struct sv_table *t, const char *name, const unsigned *batch, unsigned n,
		  unsigned max_conc, const struct sv_service *svc, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	if (!n || n > SV_MAX_VARIANTS || !max_conc) {
		snprintf(err, errlen, "service table: %u variants and %u concurrency levels "
			 "(1..%d variants, >= 1 level)", n, max_conc, SV_MAX_VARIANTS);
		return -1;
	}
	for (unsigned v = 0; v < n; v++)
		if (!batch[v] || batch[v] > SV_HIST_MAX || (v && batch[v] <= batch[v - 1])) {
			snprintf(err, errlen, "service table: batch sizes must ascend within 1..%d "
				 "(variant %u has %u)", SV_HIST_MAX, v, batch[v]);
			return -1;
		}
	for (size_t i = 0; i < (size_t)n * max_conc; i++)
		if (!valid_service(&svc[i])) {
			snprintf(err, errlen, "service table: batch %u, concurrency %zu: times must be "
				 "finite, the device's > 0", batch[i / max_conc], i % max_conc + 1);
			return -1;
		}
	t->svc = malloc((size_t)n * max_conc * sizeof *t->svc);
	if (!t->svc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(t->svc, svc, (size_t)n * max_conc * sizeof *t->svc);
	memcpy(t->batch, batch, n * sizeof *batch);
	t->nvariants = n;
	t->max_conc = max_conc;
	snprintf(t->name, sizeof t->name, "%s", name ? name : "model");
	return 0;
}

int sv_table_set_kernels(struct sv_table *t, unsigned v, unsigned core_count,
			 const struct sv_kernel *k, unsigned n, char *err, size_t errlen)
{
	if (v >= t->nvariants || !n || n > SV_MAX_KERNELS || !core_count || core_count > 1024 ||
	    (t->core_count && core_count != t->core_count)) {
		snprintf(err, errlen, "service table: batch %u's kernels: 1..%d kernels on one "
			 "chip's 1..1024 AI cores", v < t->nvariants ? t->batch[v] : 0,
			 SV_MAX_KERNELS);
		return -1;
	}
	const struct sv_service *s = sv_table_get(t, v, 1);
	double sum = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!isfinite(k[i].gap_us) || !isfinite(k[i].run_us) || k[i].gap_us < 0 ||
		    k[i].run_us < 0 || !(k[i].cores > 0) || k[i].cores > core_count) {
			snprintf(err, errlen, "service table: batch %u, kernel %u: times finite and "
				 ">= 0, cores in (0, %u]", t->batch[v], i, core_count);
			return -1;
		}
		sum += k[i].gap_us + k[i].run_us;
	}
	/* the log's cycles in microseconds, summed: a little rounding slack */
	if (sum > s->device_us - s->fixed_us + 1e-3 * n) {
		snprintf(err, errlen, "service table: batch %u's kernels take %.3f us, more than its "
			 "device time less its fixed cost (%.3f us)", t->batch[v], sum,
			 s->device_us - s->fixed_us);
		return -1;
	}
	struct sv_kernel *c = malloc(n * sizeof *c);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(c, k, n * sizeof *c);
	free(t->kern[v]);
	t->kern[v] = c;
	t->nkern[v] = n;
	t->core_count = core_count;
	return 0;
}

int sv_table_set_after(struct sv_table *t, unsigned v, unsigned k, double device_us, char *err,
		       size_t errlen)
{
	if (v >= t->nvariants || !k || k > SV_MAX_AFTER || !isfinite(device_us) ||
	    device_us <= sv_table_get(t, v, 1)->fixed_us) {
		snprintf(err, errlen, "service table: batch %u's device time after %u other "
			 "instances: k in 1..%d, the time finite and above its fixed cost",
			 v < t->nvariants ? t->batch[v] : 0, k, SV_MAX_AFTER);
		return -1;
	}
	t->after_us[v][k - 1] = device_us;
	return 0;
}

int sv_table_add_pair(struct sv_table *t, unsigned v, const struct sv_pair *p, char *err,
		      size_t errlen)
{
	unsigned n = v < t->nvariants ? t->npair[v] : 0;
	if (v >= t->nvariants || n == SV_MAX_PAIRS || !(p->offset_us >= 0) ||
	    !isfinite(p->offset_us) || (n && !(p->offset_us > t->pair[v][n - 1].offset_us)) ||
	    !(p->first_us > 0) || !(p->second_us > 0) || !isfinite(p->first_us + p->second_us)) {
		snprintf(err, errlen, "service table: batch %u's pair at %g us: at most %d pairs, "
			 "offsets >= 0 and ascending, times finite and > 0",
			 v < t->nvariants ? t->batch[v] : 0, p->offset_us, SV_MAX_PAIRS);
		return -1;
	}
	if (!(n & (n - 1))) { /* 0, 1, 2, 4...: room for as many again */
		struct sv_pair *g = realloc(t->pair[v], (n ? 2 * n : 1) * sizeof *g);
		if (!g) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		t->pair[v] = g;
	}
	t->pair[v][t->npair[v]++] = *p;
	return 0;
}

int sv_table_has_kernels(const struct sv_table *t)
{
	for (unsigned v = 0; v < t->nvariants; v++)
		if (!t->nkern[v])
			return 0;
	return t->nvariants > 0;
}

void sv_kernel_launches(const struct sv_table *t, unsigned v, double *launch)
{
	const struct sv_kernel *k = t->kern[v];
	double at = 0;
	for (unsigned i = 0; i < t->nkern[v]; i++) {
		at += i ? k[i].gap_us : 0;
		launch[i] = at;
		at += k[i].run_us;
	}
	launch[t->nkern[v]] = at;
}

unsigned sv_pair_meeting(const struct sv_table *t, unsigned v, const double *launch,
			 double offset_us)
{
	const struct sv_service *e = sv_table_get(t, v, 1);
	double lat = t->pcie_latency_us < e->h2d_us ? t->pcie_latency_us : e->h2d_us;
	double transfer = e->h2d_us - lat;
	double d = offset_us > transfer ? offset_us : transfer;
	/* the launches at or before d: an upper bound over launch[0..n] */
	unsigned lo = 0, hi = t->nkern[v] + 1;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (launch[mid] <= d)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct row {
	unsigned batch, conc;
	struct sv_service s;
	unsigned line;
};

static int by_batch_conc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->batch != y->batch)
		return x->batch < y->batch ? -1 : 1;
	return x->conc < y->conc ? -1 : x->conc > y->conc;
}

struct krow {
	unsigned batch, line;
	struct sv_kernel k;
};

/* The kernel rows, in file order per batch, into t: every batch has them. */
static int read_kernels(const char *path, struct sv_table *t, const struct krow *kr, size_t nk,
			unsigned cores, char *err, size_t errlen)
{
	struct sv_kernel *k = malloc(nk * sizeof *k);
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nk; i++) {
		int v = sv_table_variant(t, kr[i].batch);
		if (v < 0 || t->batch[v] != kr[i].batch) {
			snprintf(err, errlen, "%s:%u: kernel of batch %u, which has no service row",
				 path, kr[i].line, kr[i].batch);
			free(k);
			return -1;
		}
	}
	for (unsigned v = 0; v < t->nvariants; v++) {
		unsigned n = 0, first = 0;
		for (size_t i = 0; i < nk; i++)
			if (kr[i].batch == t->batch[v]) {
				first = first ? first : kr[i].line;
				k[n++] = kr[i].k;
			}
		if (!n) {
			snprintf(err, errlen, "%s: batch %u has no kernel rows (give them for every "
				 "batch or none)", path, t->batch[v]);
			free(k);
			return -1;
		}
		char e2[512];
		if (sv_table_set_kernels(t, v, cores, k, n, e2, sizeof e2)) {
			snprintf(err, errlen, "%s:%u: %s", path, first, e2);
			free(k);
			return -1;
		}
	}
	free(k);
	return 0;
}

int sv_table_read(const char *path, struct sv_table *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct row *rows = NULL;
	struct krow *krows = NULL;
	size_t n = 0, cap = 0, nk = 0, kcap = 0;
	char line[512], name[128] = "model";
	unsigned ln = 0, cores = 0, cores_line = 0, na = 0, loops = 0;
	double pcie_lat = 0;
	struct {
		unsigned batch, k, line;
		double device_us;
	} after[SV_MAX_VARIANTS * SV_MAX_AFTER];
	struct prow {
		unsigned batch, line;
		struct sv_pair p;
	} *pair = NULL;
	size_t np = 0, pcap = 0;
	int rc = -1;
	while (fgets(line, sizeof line, f)) {
		ln++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "# model ", 8)) {
			size_t l = strcspn(p + 8, "\r\n");
			snprintf(name, sizeof name, "%.*s", (int)l, p + 8);
			continue;
		}
		if (!strncmp(p, "# loops ", 8)) {
			int used = 0;
			if (sscanf(p + 8, "%u%n", &loops, &used) != 1 || loops < 2 || loops > 1000 ||
			    p[8 + used + strspn(p + 8 + used, " \t\r\n")]) {
				snprintf(err, errlen, "%s:%u: expected '# loops N', N in 2..1000", path, ln);
				goto done;
			}
			continue;
		}
		if (!strncmp(p, "# pcie_latency_us ", 18)) {
			int used = 0;
			if (sscanf(p + 18, "%lf%n", &pcie_lat, &used) != 1 || !(pcie_lat >= 0) ||
			    !(pcie_lat < 1e6) || p[18 + used + strspn(p + 18 + used, " \t\r\n")]) {
				snprintf(err, errlen, "%s:%u: expected '# pcie_latency_us X', X >= 0",
					 path, ln);
				goto done;
			}
			continue;
		}
		if (!strncmp(p, "# ai_cores ", 11)) {
			int used = 0;
			if (sscanf(p + 11, "%u%n", &cores, &used) != 1 || !cores || cores > 1024 ||
			    p[11 + used + strspn(p + 11 + used, " \t\r\n")]) {
				snprintf(err, errlen, "%s:%u: expected '# ai_cores N', N in 1..1024", path,
					 ln);
				goto done;
			}
			cores_line = ln;
			continue;
		}
		if (!*p || *p == '#' || *p == '\n' || *p == '\r' || !strncmp(p, "batch", 5) ||
		    !strncmp(p, "kernel,batch", 12))
			continue;
		if (!strncmp(p, "after,batch", 11) || !strncmp(p, "pair,batch", 10))
			continue;
		if (!strncmp(p, "pair,", 5)) {
			int used = 0;
			if (np == pcap) {
				pcap = pcap ? 2 * pcap : 64;
				struct prow *g = realloc(pair, pcap * sizeof *g);
				if (!g) {
					snprintf(err, errlen, "out of memory");
					goto done;
				}
				pair = g;
			}
			if (sscanf(p + 5, "%u,%lf,%lf,%lf%n", &pair[np].batch, &pair[np].p.offset_us,
				   &pair[np].p.first_us, &pair[np].p.second_us, &used) != 4 ||
			    p[5 + used + strspn(p + 5 + used, " \t\r\n")]) {
				snprintf(err, errlen, "%s:%u: expected pair,batch,offset_us,first_us,"
					 "second_us", path, ln);
				goto done;
			}
			pair[np++].line = ln;
			continue;
		}
		if (!strncmp(p, "after,", 6)) {
			int used = 0;
			if (na == SV_MAX_VARIANTS * SV_MAX_AFTER ||
			    sscanf(p + 6, "%u,%u,%lf%n", &after[na].batch, &after[na].k,
				   &after[na].device_us, &used) != 3 ||
			    p[6 + used + strspn(p + 6 + used, " \t\r\n")]) {
				snprintf(err, errlen, "%s:%u: expected after,batch,k,device_us", path, ln);
				goto done;
			}
			after[na++].line = ln;
			continue;
		}
		if (!strncmp(p, "kernel,", 7)) {
			struct krow k = { .line = ln };
			int used = 0;
			int got = sscanf(p + 7, "%u,%lf,%lf,%lf%n", &k.batch, &k.k.gap_us, &k.k.run_us,
					 &k.k.cores, &used);
			if (got < 4 || p[7 + used + strspn(p + 7 + used, " \t\r\n")]) {
				snprintf(err, errlen, "%s:%u: expected kernel,batch,gap_us,run_us,cores",
					 path, ln);
				goto done;
			}
			if (!cores_line) {
				snprintf(err, errlen, "%s:%u: a kernel row before the '# ai_cores N' line "
					 "(the chip's AI cores)", path, ln);
				goto done;
			}
			if (nk == kcap) {
				kcap = kcap ? kcap * 2 : 256;
				struct krow *nr = realloc(krows, kcap * sizeof *nr);
				if (!nr) {
					snprintf(err, errlen, "out of memory");
					goto done;
				}
				krows = nr;
			}
			krows[nk++] = k;
			continue;
		}
		struct row r = { .line = ln };
		int used = 0, got = sscanf(p, "%u,%u,%lf,%lf,%lf%n,%lf%n", &r.batch, &r.conc,
					   &r.s.h2d_us, &r.s.device_us, &r.s.d2h_us, &used,
					   &r.s.fixed_us, &used);
		while (p[used] == ' ' || p[used] == '\t' || p[used] == '\r' || p[used] == '\n')
			used++;
		if (got < 5 || p[used]) {
			snprintf(err, errlen, "%s:%u: expected batch,concurrency,h2d_us,device_us,"
				 "d2h_us[,fixed_us]", path, ln);
			goto done;
		}
		if (!r.batch || r.batch > SV_HIST_MAX || !r.conc || r.conc > 1024 ||
		    !valid_service(&r.s)) {
			snprintf(err, errlen, "%s:%u: batch in 1..%d, concurrency in 1..1024, times "
				 "finite and >= 0 (the device's > 0 and above fixed_us)", path, ln,
				 SV_HIST_MAX);
			goto done;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct row *nr = realloc(rows, cap * sizeof *nr);
			if (!nr) {
				snprintf(err, errlen, "out of memory");
				goto done;
			}
			rows = nr;
		}
		rows[n++] = r;
	}
	if (!n) {
		snprintf(err, errlen, "%s: no rows (expected batch,concurrency,h2d_us,device_us,"
			 "d2h_us)", path);
		goto done;
	}
	qsort(rows, n, sizeof *rows, by_batch_conc);
	unsigned batch[SV_MAX_VARIANTS], nv = 0, maxc = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && rows[i].batch == rows[i - 1].batch && rows[i].conc == rows[i - 1].conc) {
			snprintf(err, errlen, "%s:%u: batch %u, concurrency %u already given on line %u",
				 path, rows[i].line, rows[i].batch, rows[i].conc, rows[i - 1].line);
			goto done;
		}
		if (!i || rows[i].batch != rows[i - 1].batch) {
			if (nv == SV_MAX_VARIANTS) {
				snprintf(err, errlen, "%s: more than %d batch sizes", path,
					 SV_MAX_VARIANTS);
				goto done;
			}
			batch[nv++] = rows[i].batch;
		}
		if (rows[i].conc > maxc)
			maxc = rows[i].conc;
	}
	if (n != (size_t)nv * maxc) {
		/* name the first hole */
		for (unsigned v = 0, k = 0; v < nv; v++)
			for (unsigned c = 1; c <= maxc; c++, k++)
				if (k >= n || rows[k].batch != batch[v] || rows[k].conc != c) {
					snprintf(err, errlen, "%s: batch %u has no row for concurrency %u "
						 "(every batch needs 1..%u)", path, batch[v], c, maxc);
					goto done;
				}
	}
	struct sv_service *svc = malloc(n * sizeof *svc);
	if (!svc) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		svc[i] = rows[i].s;
	rc = sv_table_make(t, name, batch, nv, maxc, svc, err, errlen);
	free(svc);
	if (!rc) {
		t->loops = loops;
		t->pcie_latency_us = pcie_lat;
	}
	if (!rc && nk && (rc = read_kernels(path, t, krows, nk, cores, err, errlen)))
		sv_table_free(t);
	for (unsigned i = 0; !rc && i < na; i++) {
		int v = sv_table_variant(t, after[i].batch);
		char e2[512];
		if (v < 0 || t->batch[v] != after[i].batch) {
			snprintf(err, errlen, "%s:%u: after row of batch %u, which has no service row",
				 path, after[i].line, after[i].batch);
			rc = -1;
		} else if (sv_table_set_after(t, (unsigned)v, after[i].k, after[i].device_us, e2,
					      sizeof e2)) {
			snprintf(err, errlen, "%s:%u: %s", path, after[i].line, e2);
			rc = -1;
		}
		if (rc)
			sv_table_free(t);
	}
	for (size_t i = 0; !rc && i < np; i++) {
		int v = sv_table_variant(t, pair[i].batch);
		char e2[512];
		if (v < 0 || t->batch[v] != pair[i].batch) {
			snprintf(err, errlen, "%s:%u: pair row of batch %u, which has no service row",
				 path, pair[i].line, pair[i].batch);
			rc = -1;
		} else if (sv_table_add_pair(t, (unsigned)v, &pair[i].p, e2, sizeof e2)) {
			snprintf(err, errlen, "%s:%u: %s", path, pair[i].line, e2);
			rc = -1;
		}
		if (rc)
			sv_table_free(t);
	}
done:
	free(rows);
	free(krows);
	free(pair);
	fclose(f);
	return rc;
}

int sv_table_write(const char *path, const struct sv_table *t, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# model %s\n# one batch on one stream while `concurrency` batches are in "
		"flight (simserve); fixed_us: the part of device_us that uses no AI core\n"
		"batch,concurrency,h2d_us,device_us,d2h_us,fixed_us\n", t->name);
	for (unsigned v = 0; v < t->nvariants; v++)
		for (unsigned c = 1; c <= t->max_conc; c++) {
			const struct sv_service *s = sv_table_get(t, v, c);
			fprintf(f, "%u,%u,%.3f,%.3f,%.3f,%.3f\n", t->batch[v], c, s->h2d_us,
				s->device_us, s->d2h_us, s->fixed_us);
		}
	if (t->loops)
		fprintf(f, "# loops %u\n", t->loops);
	if (t->pcie_latency_us > 0)
		fprintf(f, "# pcie_latency_us %.3f\n", t->pcie_latency_us);
	if (sv_table_has_kernels(t)) {
		fprintf(f, "# each variant's kernels alone on the chip, in order: the wait since "
			"the previous one ended, their run, the AI cores they kept busy on average\n# ai_cores %u\n"
			"kernel,batch,gap_us,run_us,cores\n", t->core_count);
		for (unsigned v = 0; v < t->nvariants; v++)
			for (unsigned i = 0; i < t->nkern[v]; i++)
				fprintf(f, "kernel,%u,%.3f,%.3f,%.3f\n", t->batch[v], t->kern[v][i].gap_us,
					t->kern[v][i].run_us, t->kern[v][i].cores);
	}
	int first = 1;
	for (unsigned v = 0; v < t->nvariants; v++)
		for (unsigned k = 1; k <= SV_MAX_AFTER; k++)
			if (t->after_us[v][k - 1] > 0) {
				if (first)
					fprintf(f, "# each variant's device time alone when k other model "
						"instances ran since its own last ran\n"
						"after,batch,k,device_us\n");
				first = 0;
				fprintf(f, "after,%u,%u,%.3f\n", t->batch[v], k, t->after_us[v][k - 1]);
			}
	first = 1;
	for (unsigned v = 0; v < t->nvariants; v++)
		for (unsigned i = 0; i < t->npair[v]; i++) {
			const struct sv_pair *q = &t->pair[v][i];
			if (first)
				fprintf(f, "# two batches of a variant on two streams, the second started "
					"offset_us after the first: each one's time to its output\n"
					"pair,batch,offset_us,first_us,second_us\n");
			first = 0;
			fprintf(f, "pair,%u,%.3f,%.3f,%.3f\n", t->batch[v], q->offset_us, q->first_us,
				q->second_us);
		}
	if (fclose(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int sv_table_select(struct sv_table *t, const unsigned *sizes, unsigned n, char *err,
		    size_t errlen)
{
	unsigned keep[SV_MAX_VARIANTS], nk = 0;
	for (unsigned v = 0; v < t->nvariants; v++)
		for (unsigned i = 0; i < n; i++)
			if (sizes[i] == t->batch[v]) {
				keep[nk++] = v;
				break;
			}
	for (unsigned i = 0; i < n; i++) {
		if (sv_table_variant(t, sizes[i]) >= 0 && t->batch[sv_table_variant(t, sizes[i])] ==
								  sizes[i])
			continue;
		char have[256] = "";
		size_t l = 0;
		for (unsigned v = 0; v < t->nvariants; v++)
			l += (size_t)snprintf(have + l, l < sizeof have ? sizeof have - l : 0, "%s%u",
					      v ? "," : "", t->batch[v]);
		snprintf(err, errlen, "--batch-sizes: batch %u is not compiled (variants: %s)",
			 sizes[i], have);
		return -1;
	}
	size_t mc = t->max_conc;
	for (unsigned k = 0; k < nk; k++) {
		memmove(&t->svc[k * mc], &t->svc[keep[k] * mc], mc * sizeof *t->svc);
		t->batch[k] = t->batch[keep[k]];
		memmove(t->after_us[k], t->after_us[keep[k]], sizeof t->after_us[k]);
		if (keep[k] != k) {
			free(t->kern[k]);
			t->kern[k] = t->kern[keep[k]];
			t->nkern[k] = t->nkern[keep[k]];
			t->kern[keep[k]] = NULL;
			t->nkern[keep[k]] = 0;
			free(t->pair[k]);
			t->pair[k] = t->pair[keep[k]];
			t->npair[k] = t->npair[keep[k]];
			t->pair[keep[k]] = NULL;
			t->npair[keep[k]] = 0;
		}
	}
	for (unsigned k = nk; k < t->nvariants; k++) {
		free(t->pair[k]);
		t->pair[k] = NULL;
		t->npair[k] = 0;
		free(t->kern[k]);
		t->kern[k] = NULL;
		t->nkern[k] = 0;
	}
	t->nvariants = nk;
	return 0;
}
