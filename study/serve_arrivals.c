/* serve_arrivals.c: when requests arrive (see serve.h): Poisson, on/off
 * bursty (Poisson while on, silent while off), a piecewise-constant rate
 * schedule, or replayed from a CSV trace.  Times are integer nanoseconds; a trace's microseconds are parsed
 * digit by digit (no strtod), so a written trace replays exactly. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static int push(struct sv_arrivals *a, size_t *cap, sv_ns t, unsigned size, unsigned line,
		unsigned model, char *err, size_t errlen)
{
	if (a->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 4096;
		struct sv_request *nr = realloc(a->r, nc * sizeof *nr);
		if (!nr) {
			snprintf(err, errlen, "out of memory (%zu requests)", a->n);
			return -1;
		}
		a->r = nr;
		*cap = nc;
	}
	a->r[a->n++] = (struct sv_request){ .arrival = t, .size = size, .line = line,
					    .model = model };
	return 0;
}

static sv_ns ns_of_s(double s)
{
	return (sv_ns)llround(s * 1e9);
}

/* A unit-rate Poisson process in "cumulative intensity" L, mapped onto the
 * wall clock by inverting L(t) = integral of the rate: exact arrivals for
 * on/off periods (the rate is qps (on+off)/on, then 0) and for a piecewise-
 * constant schedule, with no thinning.  Only + - * / and floor: the same
 * instants on every host. */
static double onoff_time(const struct sv_arrival_opts *o, double L)
{
	double on = o->on_ms * 1e-3, off = o->off_ms * 1e-3;
	double rate = o->qps * (on + off) / on, t_on = L / rate;
	double periods = floor(t_on / on);
	return periods * (on + off) + (t_on - periods * on);
}

/* The instant of intensity L on the schedule, or -1 past its last arrival
 * (a final rate of 0). */
static double schedule_time(const struct sv_arrival_opts *o, double L)
{
	double acc = 0;
	for (unsigned i = 0; i < o->nsched; i++) {
		int last = i + 1 == o->nsched;
		double len = last ? 0 : o->at_s[i + 1] - o->at_s[i], seg = o->rate[i] * len;
		if (o->rate[i] > 0 && (last || L < acc + seg))
			return o->at_s[i] + (L - acc) / o->rate[i];
		acc += seg;
	}
	return -1;
}

/* Model k with probability weight[k] / sum, from its own generator (so the
 * instants do not depend on how many models share them). */
static unsigned pick_model(const struct sv_arrival_opts *o, struct sv_rng *pick)
{
	if (o->nmodels < 2)
		return 0;
	double sum = 0;
	for (unsigned k = 0; k < o->nmodels; k++)
		sum += o->weight[k];
	double u = sv_rng_uniform(pick) * sum, acc = 0;
	for (unsigned k = 0; k + 1 < o->nmodels; k++) {
		acc += o->weight[k];
		if (u <= acc)
			return k;
	}
	return o->nmodels - 1;
}

static int generate(const struct sv_arrival_opts *o, struct sv_arrivals *a, char *err,
		    size_t errlen)
{
	struct sv_rng rng, pick;
	sv_rng_seed(&rng, o->seed);
	sv_rng_seed(&pick, o->seed ^ 0x6d6f64656c73ull); /* "models" */
	size_t cap = 0;
	sv_ns limit = o->duration_s > 0 ? ns_of_s(o->duration_s) : SV_NS_INF;
	double L = 0;
	for (;;) {
		if (o->max_requests && a->n >= o->max_requests)
			break;
		double t;
		if (o->kind == SV_ARRIVE_SCHEDULE) {
			L += sv_rng_exp(&rng, 1.0);
			if ((t = schedule_time(o, L)) < 0)
				break;
		} else if (o->kind == SV_ARRIVE_ONOFF) {
			L += sv_rng_exp(&rng, 1.0);
			t = onoff_time(o, L);
		} else {
			L += sv_rng_exp(&rng, 1.0 / o->qps);
			t = L;
		}
		sv_ns ns = ns_of_s(t);
		if (ns >= limit)
			break;
		if (a->n == SV_MAX_REQUESTS) {
			snprintf(err, errlen, "more than %d arrivals: lower the rate, --requests or "
				 "--duration", SV_MAX_REQUESTS);
			return -1;
		}
		if (push(a, &cap, ns, 1, 0, pick_model(o, &pick), err, errlen))
			return -1;
	}
	return 0;
}

/* "123.456" microseconds -> nanoseconds, exactly (beyond 3 decimals:
 * rounded half up).  -1 on anything else, -2 when negative. */
static int parse_us(const char *s, const char *end, sv_ns *out)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (s < end && *s == '-')
		return -2;
	if (s < end && *s == '+')
		s++;
	sv_ns whole = 0, frac = 0;
	int digits = 0, fd = 0, round_up = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++, digits++) {
		if (whole > (INT64_MAX / 10 - 10) / 1000)
			return -1;
		whole = whole * 10 + (*s - '0');
	}
	if (s < end && *s == '.') {
		for (s++; s < end && *s >= '0' && *s <= '9'; s++, digits++, fd++) {
			if (fd < 3)
				frac = frac * 10 + (*s - '0');
			else if (fd == 3)
				round_up = *s >= '5';
		}
	}
	if (!digits || s != end)
		return -1;
	for (int k = fd; k < 3; k++)
		frac *= 10;
	*out = whole * 1000 + frac + round_up;
	return 0;
}

static int read_trace(const struct sv_arrival_opts *o, struct sv_arrivals *a, char *err,
		      size_t errlen)
{
	FILE *f = fopen(o->trace, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", o->trace, strerror(errno));
		return -1;
	}
	char line[1024];
	unsigned ln = 0;
	size_t cap = 0;
	sv_ns prev = 0, limit = o->duration_s > 0 ? ns_of_s(o->duration_s) : SV_NS_INF;
	int rc = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu characters", o->trace, ln,
				 sizeof line - 2);
			rc = -1;
			break;
		}
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#' || *p == '\r')
			continue;
		if (ln == 1 && !strncmp(p, "timestamp", 9))
			continue; /* the header */
		char *c1 = strchr(p, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		if (!c1) {
			snprintf(err, errlen, "%s:%u: expected timestamp_us,model[,size]", o->trace, ln);
			rc = -1;
			break;
		}
		sv_ns t;
		int pr = parse_us(p, c1, &t);
		if (pr) {
			snprintf(err, errlen, "%s:%u: %s timestamp '%.*s' (microseconds, >= 0)",
				 o->trace, ln, pr == -2 ? "negative" : "bad", (int)(c1 - p), p);
			rc = -1;
			break;
		}
		if (a->n && t < prev) {
			snprintf(err, errlen, "%s:%u: timestamp %lld.%03lld us is before the previous "
				 "request's %lld.%03lld us (a trace must be sorted by time)", o->trace,
				 ln, (long long)(t / 1000), (long long)(t % 1000),
				 (long long)(prev / 1000), (long long)(prev % 1000));
			rc = -1;
			break;
		}
		char *m = c1 + 1, *me = c2 ? c2 : line + len;
		while (m < me && (*m == ' ' || *m == '\t'))
			m++;
		while (me > m && (me[-1] == ' ' || me[-1] == '\t' || me[-1] == '\r'))
			me--;
		if (m == me) {
			snprintf(err, errlen, "%s:%u: no model named", o->trace, ln);
			rc = -1;
			break;
		}
		unsigned model = 0;
		if (o->nmodels >= 2) {
			while (model < o->nmodels && (strlen(o->names[model]) != (size_t)(me - m) ||
						      strncmp(o->names[model], m, (size_t)(me - m))))
				model++;
			if (model == o->nmodels) {
				char served[512] = "";
				size_t l = 0;
				for (unsigned k = 0; k < o->nmodels; k++)
					l += (size_t)snprintf(served + l, l < sizeof served ?
								  sizeof served - l : 0, "%s'%s'",
							      k ? ", " : "", o->names[k]);
				snprintf(err, errlen, "%s:%u: model '%.*s' is not served (serving %s)",
					 o->trace, ln, (int)(me - m), m, served);
				rc = -1;
				break;
			}
		} else if (o->model && (strlen(o->model) != (size_t)(me - m) ||
					strncmp(o->model, m, (size_t)(me - m)))) {
			snprintf(err, errlen, "%s:%u: model '%.*s' is not served (serving '%s')",
				 o->trace, ln, (int)(me - m), m, o->model);
			rc = -1;
			break;
		}
		unsigned size = 1;
		if (c2) {
			char *e;
			errno = 0;
			long v = strtol(c2 + 1, &e, 10);
			while (*e == ' ' || *e == '\t' || *e == '\r')
				e++;
			if (errno || e == c2 + 1 || *e || v < 1 || v > SV_HIST_MAX) {
				snprintf(err, errlen, "%s:%u: size '%s': expected an integer in 1..%d",
					 o->trace, ln, c2 + 1, SV_HIST_MAX);
				rc = -1;
				break;
			}
			size = (unsigned)v;
		}
		if (t >= limit || (o->max_requests && a->n >= o->max_requests))
			break;
		if (push(a, &cap, t, size, ln, model, err, errlen)) {
			rc = -1;
			break;
		}
		prev = t;
	}
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "%s: read error", o->trace);
		rc = -1;
	}
	fclose(f);
	if (!rc && !a->n) {
		snprintf(err, errlen, "%s: no requests", o->trace);
		rc = -1;
	}
	return rc;
}

int sv_arrivals_make(const struct sv_arrival_opts *o, struct sv_arrivals *a, char *err,
		     size_t errlen)
{
	memset(a, 0, sizeof *a);
	int rc;
	if (o->kind == SV_ARRIVE_TRACE) {
		rc = read_trace(o, a, err, errlen);
	} else {
		if (o->kind != SV_ARRIVE_SCHEDULE && (!(o->qps > 0) || !isfinite(o->qps))) {
			snprintf(err, errlen, "--qps %g: the arrival rate must be > 0", o->qps);
			return -1;
		}
		if (o->kind == SV_ARRIVE_ONOFF && (!(o->on_ms > 0) || !(o->off_ms >= 0))) {
			snprintf(err, errlen, "--bursty %g,%g: the on period must be > 0 ms and the "
				 "off period >= 0 ms", o->on_ms, o->off_ms);
			return -1;
		}
		if (o->kind == SV_ARRIVE_SCHEDULE) {
			int ok = o->nsched >= 1 && o->nsched <= SV_MAX_SCHEDULE && o->at_s[0] == 0;
			for (unsigned i = 0; ok && i < o->nsched; i++)
				ok = isfinite(o->rate[i]) && o->rate[i] >= 0 && isfinite(o->at_s[i]) &&
				     (!i || o->at_s[i] > o->at_s[i - 1]);
			if (!ok) {
				snprintf(err, errlen, "--schedule: 1..%d T_S:QPS pairs, times ascending "
					 "from 0, rates >= 0", SV_MAX_SCHEDULE);
				return -1;
			}
		}
		for (unsigned k = 0; k < o->nmodels; k++)
			if (!(o->weight[k] > 0) || !isfinite(o->weight[k])) {
				snprintf(err, errlen, "model %s: weight %g (a share of the requests: > 0)",
					 o->names[k] ? o->names[k] : "?", o->weight[k]);
				return -1;
			}
		if (o->nmodels > SV_MAX_MODELS) {
			snprintf(err, errlen, "at most %d models", SV_MAX_MODELS);
			return -1;
		}
		if (!o->max_requests && !(o->duration_s > 0)) {
			snprintf(err, errlen, "give --requests N or --duration S");
			return -1;
		}
		rc = generate(o, a, err, errlen);
		if (!rc && !a->n) {
			snprintf(err, errlen, "no request arrives within --duration %g s at that rate",
				 o->duration_s);
			rc = -1;
		}
	}
	if (rc)
		sv_arrivals_free(a);
	return rc;
}

void sv_arrivals_free(struct sv_arrivals *a)
{
	free(a->r);
	a->r = NULL;
	a->n = 0;
}

int sv_trace_write(const char *path, const struct sv_arrivals *a, const char *model, char *err,
		   size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "timestamp_us,model,size\n");
	for (size_t i = 0; i < a->n; i++)
		fprintf(f, "%lld.%03lld,%s,%u\n", (long long)(a->r[i].arrival / 1000),
			(long long)(a->r[i].arrival % 1000), model, a->r[i].size);
	if (fclose(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
