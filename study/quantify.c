/* quantify.c: the advisor's recommendations, measured (see quantify.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantify.h"
#include "sim.h"
#include "trace_read.h"

/* Run one variant of the baseline point into v. */
static void run_variant(const struct st_point *base, struct st_variant *v, const char *name,
			const char *why, const char *set, unsigned batch, int fusion_on,
			const char *work_dir, unsigned idx)
{
	snprintf(v->name, sizeof v->name, "%s", name);
	snprintf(v->why, sizeof v->why, "%s", why);
	snprintf(v->set, sizeof v->set, "%s", set ? set : "");
	struct st_point p = *base;
	/* set: one or more "section.key=value", a space between two */
	char buf[sizeof v->set];
	const char *sets[4];
	unsigned ns = 0;
	snprintf(buf, sizeof buf, "%s", v->set);
	for (char *t = buf; *t && ns < 4;) {
		sets[ns++] = t;
		t += strcspn(t, " ");
		if (*t)
			*t++ = '\0';
	}
	if (ns) {
		p.sets = sets;
		p.nsets = ns;
	}
	p.batch = batch;
	if (fusion_on)
		p.fusion_switch_file = NULL;
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/variant%u", work_dir, idx);
	p.trace_dir = dir;
	st_point_run(&p, &v->r);
	v->us_per_image = v->r.ok && v->r.batch ? v->r.warm_latency_us / v->r.batch : 0;
}

int st_quantify(const struct adv_report *rep, const char *trace_dir,
		const struct st_quantify_opts *o, struct st_variant *v, unsigned *n, char *err,
		size_t errlen)
{
	*n = 0;
	char path[4200], soc[128] = "";
	double batch = o->batch;
	snprintf(path, sizeof path, "%s/summary.json", trace_dir);
	struct trc_json *sum = trc_json_read(path, err, errlen);
	if (!sum)
		return -1;
	const char *s = o->soc ? o->soc : trc_json_str(sum, "soc");
	if (s)
		snprintf(soc, sizeof soc, "%s", s);
	if (!batch && !trc_json_num(sum, "batch", &batch))
		batch = 0;
	trc_json_free(sum);
	if (!soc[0]) {
		snprintf(err, errlen, "%s names no \"soc\": give --soc", path);
		return -1;
	}
	if (st_mkdir_p(o->work_dir, err, errlen))
		return -1;
	struct st_point base = { .model = o->model, .soc = soc, .batch = (unsigned)batch,
				 .fusion_switch_file = o->fusion_switch_file, .loop = 2,
				 .streams = 1 };
	char cache[4200];
	snprintf(cache, sizeof cache, "%s/cache", o->work_dir);
	base.cache_dir = cache;
	run_variant(&base, &v[0], "baseline", "the model as traced", NULL, base.batch, 0,
		    o->work_dir, 0);
	if (!v[0].r.ok) {
		snprintf(err, errlen, "baseline: %s", v[0].r.error);
		return -1;
	}
	unsigned b = v[0].r.batch, k = 1;
	enum adv_bound verdict = adv_verdict(rep);
#define HOLDS(bd) (verdict == (bd) || adv_bound_share(rep, bd) >= ST_QUANTIFY_MIN_SHARE)
	char set[96];
	if (HOLDS(ADV_LAUNCH) || HOLDS(ADV_PARALLELISM)) {
		run_variant(&base, &v[k], "batch x4",
			    "launch/parallelism: the same tasks do 4x the work", NULL, 4 * b, 0,
			    o->work_dir, k);
		k++;
		run_variant(&base, &v[k], "no launch overhead",
			    "launch: what the task gaps and the execution's fixed cost cost",
			    "runtime.task_gap_us=0 runtime.model_exec_us=0", b, 0, o->work_dir, k);
		k++;
	}
	if (HOLDS(ADV_MEMORY) || HOLDS(ADV_DMA)) {
		/* dma too: that faster memory does not help is the evidence */
		struct soc_config cfg;
		if (st_point_configs(&base, NULL, &cfg, err, errlen))
			return -1;
		snprintf(set, sizeof set, "hbm.bandwidth_gbps=%g", 2 * cfg.hbm_bandwidth_gbps);
		char why[96];
		snprintf(why, sizeof why, "memory: main memory (%s) twice as fast", cfg.memory);
		run_variant(&base, &v[k], "2x memory bandwidth", why, set, b, 0, o->work_dir, k);
		k++;
	}
	if (HOLDS(ADV_DMA)) {
		struct soc_config cfg;
		if (st_point_configs(&base, NULL, &cfg, err, errlen))
			return -1;
		snprintf(set, sizeof set,
			 "mte.gm_read_bytes_per_cycle=%g mte.gm_write_bytes_per_cycle=%g",
			 2 * cfg.mte_gm_read_bytes_per_cycle, 2 * cfg.mte_gm_write_bytes_per_cycle);
		run_variant(&base, &v[k], "2x DMA path",
			    "dma: each core's GM read and write paths twice as fast", set, b, 0,
			    o->work_dir, k);
		k++;
	}
	if (HOLDS(ADV_VECTOR)) {
		struct soc_config cfg;
		if (st_point_configs(&base, NULL, &cfg, err, errlen))
			return -1;
		snprintf(set, sizeof set, "vector.bytes_per_cycle=%lld",
			 2 * (long long)cfg.vector_bytes_per_cycle);
		run_variant(&base, &v[k], "2x vector width", "vector: a vector unit twice as wide",
			    set, b, 0, o->work_dir, k);
		k++;
	}
	if (o->fusion_switch_file) {
		run_variant(&base, &v[k], "fusion on",
			    "the passes the fusion switch file turned off, on", NULL, b, 1,
			    o->work_dir, k);
		k++;
	}
#undef HOLDS
	for (unsigned i = 0; i < k; i++)
		v[i].speedup = v[i].us_per_image > 0 ? v[0].us_per_image / v[i].us_per_image : 0;
	*n = k;
	return 0;
}

void st_quantify_print(FILE *f, const struct st_variant *v, unsigned n)
{
	fprintf(f, "\nmeasured (recompiled and re-simulated; time per image of the warm "
		   "executions):\n");
	fprintf(f, "  %-20s %6s %12s %12s %9s  %-12s %s\n", "variant", "batch", "warm_us",
		"us/image", "speedup", "bound", "what it measures");
	for (unsigned i = 0; i < n; i++) {
		if (!v[i].r.ok) {
			fprintf(f, "  %-20s failed: %s\n", v[i].name, v[i].r.error);
			continue;
		}
		fprintf(f, "  %-20s %6u %12.3f %12.3f %8.2fx  %-12s %s%s%s%s\n", v[i].name,
			v[i].r.batch, v[i].r.warm_latency_us, v[i].us_per_image, v[i].speedup,
			v[i].r.bound[0] ? v[i].r.bound : "-", v[i].why, v[i].set[0] ? " (" : "",
			v[i].set, v[i].set[0] ? ")" : "");
	}
}


void st_quantify_json(FILE *f, const struct st_variant *v, unsigned n)
{
	fprintf(f, "[");
	for (unsigned i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		sim_json_str(f, v[i].name);
		fprintf(f, ", \"measures\": ");
		sim_json_str(f, v[i].why);
		fprintf(f, ", \"set\": ");
		sim_json_str(f, v[i].set);
		fprintf(f, ", \"ok\": %s", v[i].r.ok ? "true" : "false");
		if (!v[i].r.ok) {
			fprintf(f, ", \"error\": ");
			sim_json_str(f, v[i].r.error);
			fprintf(f, "}");
			continue;
		}
		fprintf(f, ", \"batch\": %u, \"warm_latency_us\": %.3f, \"us_per_image\": %.3f, "
			   "\"throughput_fps\": %.2f, \"speedup\": %.4f, \"bound\": ",
			v[i].r.batch, v[i].r.warm_latency_us, v[i].us_per_image,
			v[i].r.throughput_fps, v[i].speedup);
		sim_json_str(f, v[i].r.bound);
		fprintf(f, "}");
	}
	fprintf(f, "]");
}
