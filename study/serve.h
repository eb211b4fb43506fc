/* serve.h: a request-level serving simulation on top of the device model
 * (simserve).
 *
 *   arrivals (serve_arrivals.c)  Poisson, on/off bursty, or a CSV trace
 *   service table (serve_table.c) time of one batch on one stream, per
 *                                compiled batch variant and per number of
 *                                executions in flight; characterised once
 *                                from .om files by the simulator
 *                                (serve_char.c) or read from a CSV file
 *   batcher + streams (serve_sim.c) FIFO dynamic batching (max batch, max
 *                                queue delay) or an SLO-aware policy; a
 *                                batch of n runs the smallest variant >= n
 *   report (serve_report.c)      percentiles, utilisation, CSV, JSON
 *   sweep (serve_sweep.c)        latency and throughput against QPS, plots
 *
 * A model is a set of batch-size variants: several fixed-batch .om files or
 * one dynamic-batch .om; only the service table knows which.  Several
 * models may share the chip: each has its own table and batcher queue, and
 * their batches share the streams (serve_sim.c).
 *
 * Time is integer nanoseconds, and the random numbers come from a PRNG in
 * the caller's context with a logarithm of our own (no libm): the same seed
 * gives the same bytes of output on every CPU and C library. */
#ifndef DV_STUDY_SERVE_H
#define DV_STUDY_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "soc.h"

typedef int64_t sv_ns; /* simulated time, nanoseconds */
#define SV_NS_INF INT64_MAX
#define SV_MAX_VARIANTS 32
#define SV_HIST_MAX 1024 /* the largest batch (items) */
#define SV_MAX_MODELS 16 /* models sharing the chip */

/* ---- deterministic random numbers (serve_rng.c) ---- */

struct sv_rng {
	uint64_t s[4]; /* xoshiro256** state, seeded by splitmix64 */
};
void sv_rng_seed(struct sv_rng *r, uint64_t seed);
uint64_t sv_rng_next(struct sv_rng *r);
double sv_rng_uniform(struct sv_rng *r); /* in (0, 1], 53 bits */
/* Natural logarithm from + - * / only: bit-identical on every IEEE host
 * (the library compiles with -ffp-contract=off). x > 0. */
double sv_log(double x);
/* Exponential variate with the given mean. */
double sv_rng_exp(struct sv_rng *r, double mean);

/* ---- the service table (serve_table.c, serve_char.c) ---- */

struct sv_service {
	double h2d_us, device_us, d2h_us; /* one batch on one stream */
	/* of device_us, the execution's fixed cost before its first kernel,
	 * which uses no AI core (the runtime's model_exec_us); 0 when unknown */
	double fixed_us;
};

/* One kernel of a variant's execution alone on the chip (its c = 1 entry):
 * the wait since its predecessor in the stream ended (or since the fixed
 * cost ended: the task scheduler's gap, other tasks), how long its blocks
 * ran, and how many AI cores they kept busy on average over that time (a
 * kernel whose blocks end unevenly leaves cores idle in its last wave,
 * which another stream's kernel takes).  With these the fast mode shares the
 * cores as the chip does: kernels of different streams take the cores in
 * the order they were launched (serve_sim.c). */
struct sv_kernel {
	double gap_us, run_us, cores;
};
#define SV_MAX_KERNELS 65536 /* per variant */
#define SV_MAX_AFTER 3        /* other model instances run since, characterised */
#define SV_MAX_PAIRS 1024     /* start offsets of a pair per variant, at most */

/* Two batches of one variant on two streams of the chip, the second
 * started offset_us after the first (each with its copies, warm, nothing
 * else in flight): each one's time from its start to its output copy's
 * end.  How much two batches slow each other depends on where their lives
 * overlap (ResNet-50 batch 4 on the 310P3: 2448 us side by side, 2574 us
 * for the leader of a pair 140 us apart, 2022 us at 500 us), which the
 * count of batches in flight does not say; the fast mode's memory factor
 * for two batches amid their kernels follows these (serve_sim.c). */
struct sv_pair {
	double offset_us, first_us, second_us;
};

struct sv_table {
	char name[128];                 /* the model a trace line must name */
	unsigned nvariants;
	unsigned batch[SV_MAX_VARIANTS]; /* ascending */
	unsigned max_conc;              /* executions in flight characterised: 1..max_conc */
	struct sv_service *svc;         /* [variant * max_conc + conc - 1] */
	/* the kernels of each variant, in stream order (nkern[v] 0: not known,
	 * and the fast mode shares the kernels' time by rates instead), on a
	 * chip of core_count AI cores */
	unsigned core_count;
	unsigned loops; /* the characterisation's iterations per stream (0: 2, the default) */
	/* the part of a PCIe copy that overlaps the next copy of its direction
	 * (the link's latency; the transfer itself queues): "# pcie_latency_us X",
	 * 0 when not given (the whole copy queues) */
	double pcie_latency_us;
	unsigned nkern[SV_MAX_VARIANTS];
	struct sv_kernel *kern[SV_MAX_VARIANTS];
	/* after_us[v][k - 1]: variant v's device time alone when k other model
	 * instances (one per variant and stream) ran since its own instance
	 * last ran, so the L2 holds less of its data than in the warm entries;
	 * 0: not known (as warm) */
	double after_us[SV_MAX_VARIANTS][SV_MAX_AFTER];
	/* pair[v][0..npair[v]): variant v's pairs, by ascending offset (none:
	 * not known, and two batches amid their kernels slow each other by the
	 * factor of the table's entry at 2 in flight whatever their offset) */
	unsigned npair[SV_MAX_VARIANTS];
	struct sv_pair *pair[SV_MAX_VARIANTS];
};

/* CSV: "batch,concurrency,h2d_us,device_us,d2h_us[,fixed_us]" (a header
 * line and '#' comments allowed; "# model NAME" names the model).  Every
 * batch needs every concurrency 1..max.  Optionally, each variant's
 * kernels in order, "kernel,batch,gap_us,run_us,cores" (for every batch or
 * none), after a "# ai_cores N" line ("# loops N": the characterisation's
 * iterations per stream, default 2; "# pcie_latency_us X": the part of a
 * copy that overlaps the next copy of its direction, default 0), and its
 * device time when k other instances ran since its own,
 * "after,batch,k,device_us", and its pairs, "pair,batch,offset_us,first_us,
 * second_us" (struct sv_pair).  Errors name the file and line. */
int sv_table_read(const char *path, struct sv_table *t, char *err, size_t errlen);
int sv_table_write(const char *path, const struct sv_table *t, char *err, size_t errlen);
/* A table built in memory (tests): n variants, conc levels, svc copied. */
int sv_table_make(struct sv_table *t, const char *name, const unsigned *batch, unsigned n,
		  unsigned max_conc, const struct sv_service *svc, char *err, size_t errlen);
/* Variant v's kernels (copied), on a chip of core_count AI cores: every
 * kernel's cores in 1..core_count, times finite and >= 0, and their sum
 * within the variant's device time less its fixed cost at 1 in flight. */
int sv_table_set_kernels(struct sv_table *t, unsigned v, unsigned core_count,
			 const struct sv_kernel *k, unsigned n, char *err, size_t errlen);
/* Variant v's device time after k (1..SV_MAX_AFTER) other instances ran:
 * finite and above its fixed cost at 1 in flight. */
int sv_table_set_after(struct sv_table *t, unsigned v, unsigned k, double device_us, char *err,
		       size_t errlen);
/* Variant v's pair at offset_us (>= 0; offsets strictly ascending, at most
 * SV_MAX_PAIRS): both times finite and positive. */
int sv_table_add_pair(struct sv_table *t, unsigned v, const struct sv_pair *p, char *err,
		      size_t errlen);
/* Whether every variant's kernels are known. */
int sv_table_has_kernels(const struct sv_table *t);
/* Where two batches of variant v meet.  A stream launches its next kernel
 * only when its previous one has ended, and the chip gives the cores to
 * the older launch first, so which of the leader's kernels is running when
 * the follower launches its first one fixes the turns the two take for
 * the rest of their lives: between two of the leader's launches, the chip
 * runs a pair the same way in absolute time whatever the offset (ResNet-50
 * batch 4 on the 310P3: the leader takes 2493.800 us both 157.5 and 177.1
 * us apart, and steps to 2477.583 at 188.0, its kernel 6's launch).
 * launch[0..nkern[v]] (caller's, nkern[v] + 1 entries): each kernel's
 * launch alone, from the first kernel's, and the last kernel's end (us). */
void sv_kernel_launches(const struct sv_table *t, unsigned v, double *launch);
/* The leader's launches (launch, as above) at or before the follower's
 * first, for a pair offset_us apart: the follower's input copy waits for
 * the leader's transfer on the link, then pays the same copy and fixed
 * cost.  1..nkern[v]: the leader's kernel then running, plus one;
 * nkern[v] + 1: past its kernels (the two do not meet). */
unsigned sv_pair_meeting(const struct sv_table *t, unsigned v, const double *launch,
			 double offset_us);
/* Keep only the variants whose batch is listed; a size that is not
 * compiled is an error naming the compiled ones. */
int sv_table_select(struct sv_table *t, const unsigned *sizes, unsigned n, char *err,
		    size_t errlen);
void sv_table_free(struct sv_table *t);
/* Index of the smallest variant >= items, or -1. */
int sv_table_variant(const struct sv_table *t, unsigned items);
const struct sv_service *sv_table_get(const struct sv_table *t, unsigned variant, unsigned conc);

/* Characterise .om files (one per batch variant; the batch is dim 0 of the
 * first input; the name is the first file's without ".om" and "_b<N>") on cfg: for each variant and each concurrency c in
 * 1..streams, c instances on c streams run loops iterations of (inputs in
 * over PCIe, execute, outputs out) at once in timing mode; the last
 * iteration's mean per stream is the entry.  progress (may be NULL) gets
 * one line per simulation. */
int sv_table_characterise(const char *const *om_paths, unsigned n, const struct soc_config *cfg,
			  unsigned streams, unsigned loops, FILE *progress, struct sv_table *t,
			  char *err, size_t errlen);

/* ---- arrivals (serve_arrivals.c) ---- */

struct sv_request {
	sv_ns arrival;
	unsigned size; /* items (images) it carries; 1 unless a trace says */
	unsigned line; /* its trace line, 0 when generated */
	unsigned model; /* which of the served models (0 with one) */
};

struct sv_arrivals {
	struct sv_request *r;
	size_t n;
};

enum sv_arrival_kind { SV_ARRIVE_POISSON, SV_ARRIVE_ONOFF, SV_ARRIVE_SCHEDULE, SV_ARRIVE_TRACE };
#define SV_MAX_SCHEDULE 64
#define SV_MAX_REQUESTS 100000000 /* arrivals one run may generate */

struct sv_arrival_opts {
	enum sv_arrival_kind kind;
	double qps;            /* mean rate, requests/s (Poisson, on/off) */
	double on_ms, off_ms;  /* on/off: Poisson at qps*(on+off)/on while on, none while off */
	/* schedule: Poisson at rate[i] (>= 0) from at_s[i] (ascending, at_s[0] = 0)
	 * until the next; the last rate holds to the end */
	double at_s[SV_MAX_SCHEDULE], rate[SV_MAX_SCHEDULE];
	unsigned nsched;
	uint64_t seed;
	size_t max_requests;   /* 0: no limit (then duration_s must be set, unless trace) */
	double duration_s;     /* 0: no limit */
	const char *trace;     /* CSV "timestamp_us,model[,size]" */
	const char *model;     /* the name trace lines must carry (NULL: any) */
	/* several models (nmodels >= 2): a trace line's model is looked up in
	 * names; a generated request is given model k with probability
	 * weight[k] / sum, drawn from a generator of its own so the arrival
	 * instants are those of a one-model run with the same seed */
	unsigned nmodels;
	const char *names[SV_MAX_MODELS];
	double weight[SV_MAX_MODELS];
};

int sv_arrivals_make(const struct sv_arrival_opts *o, struct sv_arrivals *a, char *err,
		     size_t errlen);
void sv_arrivals_free(struct sv_arrivals *a);
/* Write arrivals as a trace (timestamps exact to the nanosecond). */
int sv_trace_write(const char *path, const struct sv_arrivals *a, const char *model, char *err,
		   size_t errlen);

/* ---- the serving simulation (serve_sim.c) ---- */

enum sv_policy {
	SV_POLICY_FIFO, /* close at max_batch items or after max_queue_delay */
	SV_POLICY_SLO   /* as large a batch as the SLO allows (serve_sim.c) */
};

struct sv_config {
	enum sv_policy policy;
	unsigned streams;          /* executions in flight; 0: 1 */
	unsigned max_batch;        /* items per batch; 0: the largest variant */
	double max_queue_delay_us; /* how long a batch may wait for more requests while a
				    * stream is free; 0: never waits */
	double slo_p99_ms;         /* > 0: the target: SLO attainment, feasibility, the
				    * sweep's best QPS; the SLO policy's budget */
	double host_pre_us, host_post_us; /* per request, before the queue and after the
					   * output copy (the host has threads to spare) */
};

struct sv_record {
	sv_ns arrival, ready; /* ready = arrival + host pre-processing */
	sv_ns open;           /* when its batch began to form: a stream was free and it
			       * was ready */
	sv_ns start, end;     /* its batch's input copy starts; its result is back
			       * and post-processed */
	sv_ns copy, device;   /* its batch's copies (in + out) and execution */
	unsigned size, batch, variant, stream; /* batch: items in its batch */
	unsigned batch_id, model;
};

struct sv_batch {
	sv_ns start, end; /* on the stream: input copy start to output copy end */
	unsigned items, variant, stream, conc, nreq; /* conc: in flight at its start */
	unsigned model;
	size_t first;     /* its first request's place among its model's requests */
};

struct sv_run {
	struct sv_record *rec;
	size_t n;
	struct sv_batch *batch;
	size_t nbatch;
	unsigned nmodels;
};

int sv_simulate(const struct sv_config *c, const struct sv_table *t, const struct sv_arrivals *a,
		struct sv_run *run, char *err, size_t errlen);
/* nt models (t[0..nt-1], one table each) on one chip: each model's requests
 * queue apart and are batched by its own table; a free stream goes to the
 * model whose oldest ready request is oldest and whose batcher sends a
 * batch now.  A batch sharing a phase (copy, kernels) with others is slowed
 * by its own variant's factor at the number in that phase, whatever model
 * they belong to; when every table lists its kernels, the AI cores go to
 * the kernels in launch order instead (serve_sim.c).  sv_simulate is this
 * with nt = 1. */
int sv_simulate_models(const struct sv_config *c, const struct sv_table *t, unsigned nt,
		       const struct sv_arrivals *a, struct sv_run *run, char *err,
		       size_t errlen);
void sv_run_free(struct sv_run *run);
/* Whether the SLO can be met at this offered load at all: 1, or 0 with
 * why (no variant's service time fits the SLO, or no batch size that fits
 * serves the load).  A necessary condition; the run says the rest. */
int sv_slo_feasible(const struct sv_config *c, const struct sv_table *t, double items_per_s,
		    char *why, size_t len);

/* ---- the fast mode's error (serve_exact.c) ---- */

struct sv_exact {
	size_t batches, requests;   /* replayed: the run's first batches and their requests */
	double service_err_mean;    /* |exact - fast| / fast service time of a batch */
	double service_err_max;
	double end_shift_mean_us;   /* |exact - fast| completion of a batch */
	double end_shift_max_us;
	double fast_p99_us, exact_p99_us; /* latency P99 of the replayed requests */
	double fast_mean_us, exact_mean_us;
};

/* Replay the first max_batches batches of a fast run on the runtime: every
 * batch's input copy, execution and output copy queued on its stream at
 * its start instant (rt_stream_hold), all streams on one simulated chip,
 * so each batch meets the contention it really meets.  The schedule is the
 * fast run's (the batcher's decisions are not re-made); a batch whose
 * stream is still busy in the replay starts late, as it would.  Every
 * model instance runs once before time 0 (warm, as the table was measured
 * and as a server warms up).  om_paths
 * are the variants of t (matched by batch). */
int sv_exact_replay(const char *const *om_paths, unsigned n, const struct soc_config *cfg,
		    const struct sv_config *c, const struct sv_table *t, const struct sv_run *run,
		    size_t max_batches, struct sv_exact *x, char *err, size_t errlen);
/* The same for nt models on the one chip: model m's files are
 * om_paths[m][0..n[m]-1], its table t[m]. */
int sv_exact_replay_models(const char *const *const *om_paths, const unsigned *n, unsigned nt,
			   const struct soc_config *cfg, const struct sv_config *c,
			   const struct sv_table *t, const struct sv_run *run, size_t max_batches,
			   struct sv_exact *x, char *err, size_t errlen);

/* ---- several models in the device memory (serve_fit.c) ---- */

/* Whether nt models fit the memory of one cfg chip together: every variant
 * of every model (each program of a dynamic-batch .om counted as a model of
 * its own, as the characterisation and --exact load them) with one instance
 * per stream and its input and output buffers, loaded in the order given.
 * 0, or -1 with err naming the first model that does not fit beside those
 * before it. */
int sv_fit_check(const char *const *const *om_paths, const unsigned *n, unsigned nt,
		 const struct soc_config *cfg, unsigned streams, char *err, size_t errlen);
void sv_exact_print(FILE *f, const struct sv_exact *x, int json);

/* ---- the report (serve_report.c) ---- */

struct sv_pct {
	double mean, p50, p90, p95, p99, p999, max; /* microseconds */
};

struct sv_summary {
	size_t requests, items, batches;
	double offered_qps;     /* requests over the arrival window */
	double span_s;          /* first arrival to last completion */
	double throughput_rps, throughput_ips; /* requests and items per second */
	struct sv_pct latency, queue, copy, device, host;
	double utilisation;     /* time with >= 1 batch on the device over the span */
	double stream_occupancy; /* summed stream busy time over (streams x span) */
	double padding;         /* padded items over variant items run */
	double mean_batch;
	unsigned hist_max;      /* hist[1..hist_max]: batches by items */
	size_t hist[SV_HIST_MAX + 1];
	size_t variant_runs[SV_MAX_VARIANTS];
	double slo_ms, slo_attainment; /* share of requests within the SLO */
	int slo_met;            /* P99 <= SLO */
	int slo_feasible;
	char slo_note[256];
};

int sv_summarise(const struct sv_config *c, const struct sv_table *t, const struct sv_run *run,
		 struct sv_summary *s, char *err, size_t errlen);
/* One model's requests and batches (model >= 0, its table t[model]) or all
 * of them (model < 0: no variant counts and no SLO feasibility unless nt
 * is 1, since variants are per model). */
int sv_summarise_models(const struct sv_config *c, const struct sv_table *t, unsigned nt,
			const struct sv_run *run, int model, struct sv_summary *s, char *err,
			size_t errlen);
void sv_print_text(FILE *f, const struct sv_config *c, const struct sv_table *t,
		   const struct sv_summary *s);
void sv_print_json(FILE *f, const struct sv_config *c, const struct sv_table *t,
		   const struct sv_summary *s);
/* Several models: each one's summary s[m] (its weight w[m]), then all of
 * them together (s[nt]). */
void sv_print_models_text(FILE *f, const struct sv_config *c, const struct sv_table *t,
			  const double *w, unsigned nt, const struct sv_summary *s);
void sv_print_models_json(FILE *f, const struct sv_config *c, const struct sv_table *t,
			  const double *w, unsigned nt, const struct sv_summary *s);
/* id, arrival_us, start_us, end_us, batch, variant, stream, queue_us,
 * copy_us, device_us, latency_us: one line per request (with several
 * models, a last column: model, the model's index). */
int sv_write_csv(const char *path, const struct sv_run *run, char *err, size_t errlen);

/* ---- QPS sweep (serve_sweep.c) ---- */

struct sv_sweep_point {
	double qps;
	struct sv_summary s;
};

/* Run the arrivals o at qps lo, lo+step, ... hi (o->qps ignored), each with
 * the same seed; points gets one entry per QPS (caller frees).  *best is
 * the highest QPS with P99 <= SLO (0 when none or no SLO). */
int sv_sweep(const struct sv_config *c, const struct sv_table *t,
	     const struct sv_arrival_opts *o, double lo, double hi, double step,
	     struct sv_sweep_point **points, size_t *npoints, double *best, char *err,
	     size_t errlen);
/* dir/serve_sweep.dat and dir/serve_sweep.gp (latency and throughput against
 * QPS); runs gnuplot there when it is on PATH.  0, 1 when gnuplot is
 * missing (err says so), -1 on error. */
int sv_sweep_plot(const char *dir, const struct sv_config *c, const struct sv_table *t,
		  const struct sv_sweep_point *p, size_t n, double best, char *err,
		  size_t errlen);
void sv_sweep_print(FILE *f, const struct sv_config *c, const struct sv_sweep_point *p,
		    size_t n, double best, int json);

#endif
