/* point.h: one what-if point, compiled, simulated and classified.
 *
 * A point is an ONNX model on a SoC configuration (a chip plus overrides),
 * at a batch size, with a fusion switch file or none, run for some loops on
 * some streams.  st_point_run compiles it (cc_compile; a cache shares the
 * .om between points that differ only in keys the binary does not depend
 * on), simulates it (st_bench_run, as simrun runs a model: the same inputs and
 * cycles; timing mode unless asked), summarises
 * it (trc_summarize), writes its trace directory and asks the advisor for
 * its bound.  simsweep runs a cartesian product of points; the advisor runs
 * a point and its variant ("fusion on", "batch x4", "2x HBM") and reports
 * the measured change.
 *
 * Which keys need a recompile is data: compile_keys.def (LAYOUT, TUNING,
 * RUNTIME; read it first).  The configuration a point compiles for is its
 * base chip (soc) with the LAYOUT keys of its overrides applied (and the
 * TUNING keys too when retune is set); the configuration it runs on is the
 * base chip with all its overrides. */
#ifndef DV_STUDY_POINT_H
#define DV_STUDY_POINT_H

#include <stddef.h>

#include "isa.h"
#include "soc.h"

enum st_key_class { ST_KEY_LAYOUT, ST_KEY_TUNING, ST_KEY_RUNTIME };

/* The class of a dotted key ("hbm.bandwidth_gbps"): 0 and *cls (and *why,
 * the reason, if not NULL), or -1 for a key compile_keys.def does not list. */
int st_key_class(const char *dotted, enum st_key_class *cls, const char **why);
const char *st_key_class_name(enum st_key_class c); /* "layout", "tuning", "runtime" */
/* The listed keys, in soc.def order: i < st_nkeys(); the name is "section.key". */
unsigned st_nkeys(void);
const char *st_key_name(unsigned i, char *buf, size_t len);

struct st_point {
	const char *model;              /* the ONNX file */
	const char *soc;                /* the base chip: a name ("Ascend910") or an .ini */
	const char *const *sets;        /* this point's changes, "section.key=value" */
	unsigned nsets;
	unsigned batch;                 /* dim 0 of the first input; 0: as the model has it
					 * (1 when it is dynamic) */
	const char *fusion_switch_file; /* ATC's fusion switch file, or NULL (all passes on) */
	unsigned loop, streams;         /* executions per stream and streams; 0: 2 and 1 */
	int full;                       /* simulate the arithmetic (default: timing mode,
					 * the same cycles, much faster) */
	int retune;                     /* TUNING keys in sets recompile too */
	const char *cache_dir;          /* keep compiled models here (created if missing),
					 * or NULL: compile for this call only */
	const char *trace_dir;          /* write the trace directory here and classify it
					 * with the advisor, or NULL: neither */
	int timeline;                   /* the trace's timeline.json gets every pipe's busy
					 * spans (large: ~10 MB for ResNet-50); the advisor
					 * does not need them */
};

struct st_result {
	int ok;              /* 0: error says why (which stage: config, compile, run...) */
	char error[1024];
	unsigned batch;      /* the batch it ran at */
	unsigned ntasks;     /* the compiled model's tasks */
	double first_latency_us, warm_latency_us, throughput_fps, roofline_efficiency;
	double pipe_util[ISA_NPIPES]; /* busy cycles over (span x AI cores), S..V */
	char bound[16];      /* the advisor's verdict (adv_bound_name); "" without a trace
			      * directory, "unknown" when the advisor failed (bound_error) */
	char bound_error[256];
	int compiled;        /* 1: compiled by this call; 0: the .om came from the cache */
	double compile_s;    /* wall-clock seconds compiling (or loading the cached .om) */
	double simulate_s;   /* wall-clock seconds simulating and writing the trace */
	char compile_key[17]; /* hex: the hash of everything the .om depends on: the
			       * compile identity, the model and fusion file bytes,
			       * the compiler (the running executable) */
};

/* Run the point.  Returns 0 when it ran (r->ok), -1 when it failed: r->error
 * names the stage and the cause ("config: core.count: 0 out of range...",
 * "compile: ...", "run: ..."). */
int st_point_run(const struct st_point *p, struct st_result *r);

/* What decides the compiled binary, except the bytes of the model and the
 * fusion switch file: the batch and every key of the compile configuration,
 * one "name=value" line each.  Two points of one study (same model and
 * fusion file) share a binary exactly when their texts are equal, so a
 * sweep can tell which points reuse a binary without compiling anything.
 * Returns 0, or -1 with err (an unknown key, a value out of range). */
int st_compile_ident(const struct st_point *p, char *buf, size_t len, char *err, size_t errlen);

/* The configurations of a point: the one it compiles for and the one it
 * runs on (either may be NULL).  Returns 0 or -1 with err. */
int st_point_configs(const struct st_point *p, struct soc_config *compile_cfg,
		     struct soc_config *run_cfg, char *err, size_t errlen);

/* mkdir -p: every missing directory of the path.  0, or -1 with err. */
int st_mkdir_p(const char *dir, char *err, size_t errlen);

/* FNV-1a, 64 bits: the cache's and the sweep's content hash. */
uint64_t st_hash(const void *data, size_t n, uint64_t h);
#define ST_HASH_INIT 0xcbf29ce484222325ull

#endif
