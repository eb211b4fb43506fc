/* quantify.h: the advisor's recommendations, measured.
 *
 * Given the advisor's report on a trace and the model the trace came from,
 * st_quantify recompiles and re-simulates the model as it ran (the baseline)
 * and as each recommendation would change it, and reports the measured
 * change, not an estimate.  Which variants run follows the bounds that hold
 * a real share of the time (adv_bound_share >= ST_QUANTIFY_MIN_SHARE, or the
 * verdict):
 *   launch, parallelism  "batch x4": the same work per task, 4x the images;
 *                        "no launch overhead": what the task gaps and
 *                        the execution's fixed cost cost
 *   memory               "2x HBM bandwidth" (hbm.bandwidth_gbps doubled)
 *   any, with a fusion switch file turning passes off
 *                        "fusion on": every pass enabled
 *   vector               "2x vector width" (vector.bytes_per_cycle doubled)
 *   cube, sync           none: the cube is the roof the advisor wants ops
 *                        at, and double buffering is a kernel change
 * Variants compare by time per image (warm latency / batch), so "batch x4"
 * and the others share one scale. */
#ifndef DV_STUDY_QUANTIFY_H
#define DV_STUDY_QUANTIFY_H

#include <stdio.h>

#include "advisor.h"
#include "point.h"

#define ST_QUANTIFY_MIN_SHARE 0.2 /* a bound this share of the time gets its variants */
#define ST_MAX_VARIANTS 8

struct st_variant {
	char name[48];  /* "baseline", "batch x4", "2x HBM bandwidth", ... */
	char why[160];  /* the bound or recommendation it measures */
	char set[96];   /* the configuration change, "" for none */
	struct st_result r;
	double us_per_image; /* warm latency / batch */
	double speedup;      /* baseline us_per_image / this one's */
};

struct st_quantify_opts {
	const char *model;              /* the ONNX file the trace ran */
	const char *soc;                /* NULL: the trace's summary.json "soc" */
	unsigned batch;                 /* 0: the trace's summary.json "batch" */
	const char *fusion_switch_file; /* how the traced model was compiled, or NULL */
	const char *work_dir;           /* the variants' traces and compiled models */
};

/* Run the baseline and the variants the report calls for, into v[0..*n-1]
 * (v[0] is the baseline).  trace_dir is the analysed trace (for its soc and
 * batch).  Returns 0 (a failed variant has r.ok == 0 and says why), or -1
 * with err when the baseline itself fails. */
int st_quantify(const struct adv_report *rep, const char *trace_dir,
		const struct st_quantify_opts *o, struct st_variant *v, unsigned *n, char *err,
		size_t errlen);
void st_quantify_print(FILE *f, const struct st_variant *v, unsigned n);
void st_quantify_json(FILE *f, const struct st_variant *v, unsigned n);

#endif
