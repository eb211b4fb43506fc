/* serve_report.c: what a serving run measured (see serve.h): latency
 * percentiles split into their parts, throughput, utilisation, padding,
 * batch sizes, SLO attainment; as text, JSON and a per-request CSV. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static int by_ns(const void *a, const void *b)
{
	sv_ns x = *(const sv_ns *)a, y = *(const sv_ns *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentiles of v (sorted in place), in microseconds. */
static void percentiles(sv_ns *v, size_t n, struct sv_pct *p)
{
	memset(p, 0, sizeof *p);
	if (!n)
		return;
	qsort(v, n, sizeof *v, by_ns);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	p->mean = sum / (double)n / 1e3;
	const unsigned q[6] = { 500, 900, 950, 990, 999, 1000 }; /* per mille */
	double *out[6] = { &p->p50, &p->p90, &p->p95, &p->p99, &p->p999, &p->max };
	for (int k = 0; k < 6; k++) {
		size_t rank = (size_t)(((unsigned long long)q[k] * n + 999) / 1000);
		if (rank < 1)
			rank = 1;
		*out[k] = (double)v[rank - 1] / 1e3;
	}
}

int sv_summarise(const struct sv_config *c, const struct sv_table *t, const struct sv_run *run,
		 struct sv_summary *s, char *err, size_t errlen)
{
	return sv_summarise_models(c, t, 1, run, -1, s, err, errlen);
}

int sv_summarise_models(const struct sv_config *c, const struct sv_table *t, unsigned nt,
			const struct sv_run *run, int model, struct sv_summary *s, char *err,
			size_t errlen)
{
	memset(s, 0, sizeof *s);
	/* one model's records, copied out (the whole run's are used in place) */
	struct sv_record *own = NULL;
	const struct sv_record *r = run->rec;
	size_t n = run->n;
	if (model >= 0 && nt > 1) {
		own = malloc((n ? n : 1) * sizeof *own);
		if (!own) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (r[i].model == (unsigned)model)
				own[k++] = r[i];
		r = own;
		n = k;
	}
	if (!n) {
		free(own);
		snprintf(err, errlen, model >= 0 && nt > 1 ? "model %s: no requests were served"
							   : "no requests were served",
			 model >= 0 ? t[model].name : "");
		return -1;
	}
	sv_ns *v = malloc(n * sizeof *v);
	if (!v) {
		free(own);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the table variants are counted against: the model's, or the only one */
	const struct sv_table *tv = model >= 0 ? &t[model] : nt == 1 ? t : NULL;
	sv_ns last_end = 0, slo = (sv_ns)(c->slo_p99_ms * 1e6 + 0.5);
	size_t within = 0;
	for (size_t i = 0; i < n; i++) {
		s->items += r[i].size;
		if (r[i].end > last_end)
			last_end = r[i].end;
		within += r[i].end - r[i].arrival <= slo;
	}
#define PCT(field, expr)                              \
	do {                                          \
		for (size_t i = 0; i < n; i++)        \
			v[i] = (expr);                \
		percentiles(v, n, &s->field);         \
	} while (0)
	PCT(latency, r[i].end - r[i].arrival);
	PCT(queue, r[i].start - r[i].ready);
	PCT(copy, r[i].copy);
	PCT(device, r[i].device);
	PCT(host, (r[i].ready - r[i].arrival) + (r[i].end - r[i].start - r[i].copy - r[i].device));
#undef PCT
	free(v);
	s->requests = n;
	double window = (double)(r[n - 1].arrival - r[0].arrival) / 1e9;
	/* n arrivals span n-1 gaps */
	s->offered_qps = window > 0 ? (double)(n - 1) / window : 0;
	s->span_s = (double)(last_end - r[0].arrival) / 1e9;
	s->throughput_rps = s->span_s > 0 ? (double)n / s->span_s : 0;
	s->throughput_ips = s->span_s > 0 ? (double)s->items / s->span_s : 0;
	/* busy: the union of the batches' intervals (they start in order) */
	sv_ns busy = 0, cur_s = 0, cur_e = -1, occupied = 0;
	size_t padded = 0, run_items = 0;
	unsigned S = c->streams ? c->streams : 1;
	for (size_t b = 0; b < run->nbatch; b++) {
		const struct sv_batch *x = &run->batch[b];
		if (model >= 0 && x->model != (unsigned)model)
			continue;
		s->batches++;
		occupied += x->end - x->start;
		if (x->start > cur_e) {
			if (cur_e >= 0)
				busy += cur_e - cur_s;
			cur_s = x->start;
			cur_e = x->end;
		} else if (x->end > cur_e) {
			cur_e = x->end;
		}
		unsigned vb = t[x->model].batch[x->variant];
		run_items += vb;
		padded += vb - x->items;
		if (tv)
			s->variant_runs[x->variant]++;
		if (x->items <= SV_HIST_MAX)
			s->hist[x->items]++;
		if (x->items > s->hist_max)
			s->hist_max = x->items;
	}
	if (cur_e >= 0)
		busy += cur_e - cur_s;
	double span_ns = (double)(last_end - r[0].arrival);
	s->utilisation = span_ns > 0 ? (double)busy / span_ns : 0;
	s->stream_occupancy = span_ns > 0 ? (double)occupied / (span_ns * S) : 0;
	s->padding = run_items ? (double)padded / (double)run_items : 0;
	s->mean_batch = s->batches ? (double)s->items / (double)s->batches : 0;
	s->slo_ms = c->slo_p99_ms;
	if (c->slo_p99_ms > 0) {
		s->slo_attainment = (double)within / (double)n;
		s->slo_met = s->latency.p99 <= c->slo_p99_ms * 1e3;
		double ips = s->offered_qps * (double)s->items / (double)n;
		/* a model's check sees its own load only: the chip's other models
		 * take their share of it too, so this is looser still */
		if (tv)
			s->slo_feasible = sv_slo_feasible(c, tv, ips, s->slo_note,
							  sizeof s->slo_note);
		else
			snprintf(s->slo_note, sizeof s->slo_note, "feasibility: see each model");
	}
	free(own);
	return 0;
}

static void pct_row(FILE *f, const char *name, const struct sv_pct *p)
{
	fprintf(f, "  %-9s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", name, p->mean / 1e3,
		p->p50 / 1e3, p->p90 / 1e3, p->p95 / 1e3, p->p99 / 1e3, p->p999 / 1e3, p->max / 1e3);
}

static void print_header(FILE *f, const struct sv_config *c, const struct sv_table *t,
			 const char *weight)
{
	fprintf(f, "model %s%s, variants", t->name, weight);
	for (unsigned v = 0; v < t->nvariants; v++)
		fprintf(f, "%s%u", v ? "," : " ", t->batch[v]);
	fprintf(f, "; %u stream%s, max batch %u, ", c->streams ? c->streams : 1,
		c->streams > 1 ? "s" : "", c->max_batch ? c->max_batch : t->batch[t->nvariants - 1]);
	if (c->policy == SV_POLICY_SLO)
		fprintf(f, "SLO-aware batcher (P99 <= %g ms", c->slo_p99_ms);
	else
		fprintf(f, "FIFO batcher (");
	fprintf(f, "%smax queue delay %g us)\n", c->policy == SV_POLICY_SLO ? ", " : "",
		c->max_queue_delay_us);
}

/* The summary below the header; t NULL: all models (no variants). */
static void print_body(FILE *f, const struct sv_config *c, const struct sv_table *t,
		       const struct sv_summary *s)
{
	fprintf(f, "requests %zu (%zu items), offered %.1f/s, served %.1f requests/s "
		"(%.1f items/s) over %.3f s\n", s->requests, s->items, s->offered_qps,
		s->throughput_rps, s->throughput_ips, s->span_s);
	fprintf(f, "latency (ms)     mean        P50        P90        P95        P99      P99.9"
		"        max\n");
	pct_row(f, "total", &s->latency);
	pct_row(f, "queueing", &s->queue);
	pct_row(f, "copy", &s->copy);
	pct_row(f, "device", &s->device);
	pct_row(f, "host", &s->host);
	fprintf(f, "device utilisation %.1f%% (>= 1 batch in flight), stream occupancy %.1f%%\n",
		100 * s->utilisation, 100 * s->stream_occupancy);
	fprintf(f, "batches %zu, mean %.2f items, padding %.1f%% of the variants' items\n",
		s->batches, s->mean_batch, 100 * s->padding);
	fprintf(f, "batch sizes (items: batches):");
	for (unsigned b = 1; b <= s->hist_max; b++)
		if (s->hist[b])
			fprintf(f, " %u:%zu", b, s->hist[b]);
	fprintf(f, "\n");
	if (t) {
		fprintf(f, "variants run:");
		for (unsigned v = 0; v < t->nvariants; v++)
			fprintf(f, " b%u:%zu", t->batch[v], s->variant_runs[v]);
		fprintf(f, "\n");
	}
	if (c->slo_p99_ms > 0)
		fprintf(f, "SLO P99 <= %g ms: %s (P99 %.3f ms), %.2f%% of requests within it; %s\n",
			c->slo_p99_ms, s->slo_met ? "met" : "MISSED", s->latency.p99 / 1e3,
			100 * s->slo_attainment, s->slo_note);
}

void sv_print_text(FILE *f, const struct sv_config *c, const struct sv_table *t,
		   const struct sv_summary *s)
{
	print_header(f, c, t, "");
	print_body(f, c, t, s);
}

void sv_print_models_text(FILE *f, const struct sv_config *c, const struct sv_table *t,
			  const double *w, unsigned nt, const struct sv_summary *s)
{
	double sum = 0;
	for (unsigned m = 0; m < nt; m++)
		sum += w[m];
	for (unsigned m = 0; m < nt; m++) {
		char wt[64];
		snprintf(wt, sizeof wt, " (weight %g: %.1f%% of the requests)", w[m],
			 100 * w[m] / sum);
		print_header(f, c, &t[m], wt);
		print_body(f, c, &t[m], &s[m]);
		fprintf(f, "\n");
	}
	fprintf(f, "all %u models on one chip:\n", nt);
	print_body(f, c, NULL, &s[nt]);
}

static void pct_json(FILE *f, const char *name, const struct sv_pct *p, int last)
{
	fprintf(f, "\"%s\": {\"mean\": %.3f, \"p50\": %.3f, \"p90\": %.3f, \"p95\": %.3f, "
		"\"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f}%s", name, p->mean, p->p50, p->p90,
		p->p95, p->p99, p->p999, p->max, last ? "" : ", ");
}

/* One summary as a JSON object's members (no braces); t NULL: all models. */
static void json_body(FILE *f, const struct sv_config *c, const struct sv_table *t,
		      const struct sv_summary *s)
{
	if (t) {
		fprintf(f, "\"model\": \"");
		for (const char *p = t->name; *p; p++)
			if (*p == '"' || *p == '\\')
				fprintf(f, "\\%c", *p);
			else if ((unsigned char)*p >= 0x20)
				fputc(*p, f);
		fprintf(f, "\", \"variants\": [");
		for (unsigned v = 0; v < t->nvariants; v++)
			fprintf(f, "%s%u", v ? ", " : "", t->batch[v]);
		fprintf(f, "], ");
	}
	fprintf(f, "\"policy\": \"%s\"", c->policy == SV_POLICY_SLO ? "slo" : "fifo");
	fprintf(f, ", \"streams\": %u, ", c->streams ? c->streams : 1);
	if (t || c->max_batch)
		fprintf(f, "\"max_batch\": %u, ",
			c->max_batch ? c->max_batch : t->batch[t->nvariants - 1]);
	fprintf(f, "\"max_queue_delay_us\": %.3f, "
		"\"requests\": %zu, \"items\": %zu, \"offered_qps\": %.3f, \"throughput_rps\": "
		"%.3f, \"throughput_ips\": %.3f, \"span_s\": %.6f, \"latency_us\": {",
		c->max_queue_delay_us, s->requests, s->items, s->offered_qps, s->throughput_rps,
		s->throughput_ips, s->span_s);
	pct_json(f, "total", &s->latency, 0);
	pct_json(f, "queueing", &s->queue, 0);
	pct_json(f, "copy", &s->copy, 0);
	pct_json(f, "device", &s->device, 0);
	pct_json(f, "host", &s->host, 1);
	fprintf(f, "}, \"utilisation\": %.6f, \"stream_occupancy\": %.6f, \"batches\": %zu, "
		"\"mean_batch\": %.4f, \"padding\": %.6f, \"batch_histogram\": {", s->utilisation,
		s->stream_occupancy, s->batches, s->mean_batch, s->padding);
	int first = 1;
	for (unsigned b = 1; b <= s->hist_max; b++)
		if (s->hist[b]) {
			fprintf(f, "%s\"%u\": %zu", first ? "" : ", ", b, s->hist[b]);
			first = 0;
		}
	fprintf(f, "}");
	if (t) {
		fprintf(f, ", \"variant_runs\": {");
		for (unsigned v = 0; v < t->nvariants; v++)
			fprintf(f, "%s\"%u\": %zu", v ? ", " : "", t->batch[v], s->variant_runs[v]);
		fprintf(f, "}");
	}
	if (c->slo_p99_ms > 0)
		fprintf(f, ", \"slo_p99_ms\": %.3f, \"slo_met\": %s, \"slo_attainment\": %.6f, "
			"\"slo_feasible\": %s, \"slo_note\": \"%s\"", c->slo_p99_ms,
			s->slo_met ? "true" : "false", s->slo_attainment,
			s->slo_feasible ? "true" : "false", s->slo_note);
}

void sv_print_json(FILE *f, const struct sv_config *c, const struct sv_table *t,
		   const struct sv_summary *s)
{
	fprintf(f, "{");
	json_body(f, c, t, s);
	fprintf(f, "}\n");
}

void sv_print_models_json(FILE *f, const struct sv_config *c, const struct sv_table *t,
			  const double *w, unsigned nt, const struct sv_summary *s)
{
	fprintf(f, "{\"models\": [");
	for (unsigned m = 0; m < nt; m++) {
		fprintf(f, "%s{\"weight\": %g, ", m ? ", " : "", w[m]);
		json_body(f, c, &t[m], &s[m]);
		fprintf(f, "}");
	}
	fprintf(f, "], \"all\": {");
	json_body(f, c, NULL, &s[nt]);
	fprintf(f, "}}\n");
}

static void us(FILE *f, sv_ns t)
{
	fprintf(f, "%lld.%03lld", (long long)(t / 1000), (long long)(t % 1000));
}

int sv_write_csv(const char *path, const struct sv_run *run, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "--csv %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "id,arrival_us,start_us,end_us,batch,variant,stream,queue_us,copy_us,"
		"device_us,latency_us%s\n", run->nmodels > 1 ? ",model" : "");
	for (size_t i = 0; i < run->n; i++) {
		const struct sv_record *r = &run->rec[i];
		fprintf(f, "%zu,", i);
		us(f, r->arrival);
		fputc(',', f);
		us(f, r->start);
		fputc(',', f);
		us(f, r->end);
		fprintf(f, ",%u,%u,%u,", r->batch, r->variant, r->stream);
		us(f, r->start - r->ready);
		fputc(',', f);
		us(f, r->copy);
		fputc(',', f);
		us(f, r->device);
		fputc(',', f);
		us(f, r->end - r->arrival);
		if (run->nmodels > 1)
			fprintf(f, ",%u", r->model);
		fputc('\n', f);
	}
	if (fclose(f)) {
		snprintf(err, errlen, "--csv %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
