/* advisor.c: the bottleneck advisor (advisor.h).
 *
 * The analysis, in the order it runs:
 *   1. read op_summary.csv (columns by name), summary.json (the roofs and
 *      the chip), task_time.csv when present (kernel names, a cross-check);
 *   2. keep the warm executions: the AI_CORE tasks whose Infer ID is above
 *      their stream's first (all of them when there is only one execution),
 *      so the verdict describes the steady state rather than a cold L2;
 *      MEMCPY tasks are host <-> device copies, listed apart;
 *   3. group the tasks by op (name and type), weighting every ratio by task
 *      time, and give each op one bound by the first rule that holds:
 *        launch       its dispatch wait is a large share of its own time
 *        memory       it reaches the main-memory or L2 roof
 *        parallelism  its blocks leave AI cores idle
 *        sync         no pipe is busy while some pipe sits in wait_flag
 *        cube/vector/dma  else its busiest pipe (msprof's memory_bound):
 *                     DMA pipes busiest with no roof reached is "dma", the
 *                     cores' transfer engines, which faster memory would
 *                     not speed up
 *      The order is the order of the fixes: a task that costs mostly its
 *      dispatch gains nothing from faster pipes; a saturated memory is not
 *      helped by more cores; idle cores are the largest, cheapest gain
 *      (up to ai_cores / block_dim) before any kernel rewrite; a stalled
 *      schedule hides what its pipes could do;
 *   4. the run: dispatch overhead (task waits, each at most the task gap:
 *      beyond it a task queues for cores busy with other streams' work)
 *      plus the launch-bound ops' time, if at least LAUNCH_SHARE of the
 *      task time plus that overhead, makes the run launch-bound; otherwise
 *      the bound that holds the most of that time wins.
 * Every threshold is in ADV_THRESHOLDS, with where it comes from. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advisor.h"
#include "sim.h"
#include "summary.h"
#include "trace_read.h"

/* X(name, value, rule, source) */
#define ADV_THRESHOLDS(X)                                                                         \
	X(LAUNCH_SHARE, 0.4,                                                                      \
	  "launch: an op's dispatch wait / (wait + duration), and the run's (dispatch waits + "    \
	  "launch-bound ops' time) / (task time + dispatch waits), at or above this; a dispatch "  \
	  "wait is a Task Wait Time, at most task_gap_us",                                        \
	  "msprof-analyze advisor's host_threshold (its fusible_operator rule flags host-bound " \
	  "op sequences with it), reused for the share of time lost to dispatch")                \
	X(MEM_BW_SHARE, 0.8,                                                                      \
	  "memory: main_mem_bw / hbm_bandwidth_gbps, or (l2_read_bw + l2_write_bw) / "            \
	  "l2_bandwidth_gbps, at or above this and at or above the op's mac and vec ratios",      \
	  "msprof-analyze advisor's mte_threshold (the same rule), reused for the share of a "    \
	  "bandwidth roof that counts as reached")                                                \
	X(CORE_USE_MIN, 0.8,                                                                      \
	  "parallelism: block_dim / (waves x ai_cores), waves = ceil(block_dim / ai_cores), "     \
	  "below this",                                                                           \
	  "MindStudio Advisor's Chip Utilization, green from 80% (ascend.md 3.4)")                \
	X(SYNC_BUSY_MAX, 0.5,                                                                     \
	  "sync, with SYNC_WAIT_MIN: the busiest pipe's ratio (mte1, mte2, mte3, mac, vec) "      \
	  "below this",                                                                           \
	  "ours: no pipe works half of the op's time, so the time goes elsewhere")                \
	X(SYNC_WAIT_MIN, 0.5,                                                                     \
	  "sync, with SYNC_BUSY_MAX: some pipe's waitflag ratio at or above this",                \
	  "ours: that pipe spends more of the op blocked on a flag than any pipe spends working") \
	X(MEMORY_BOUND_MIN, 1.0,                                                                  \
	  "dma (by pipes, no bandwidth roof reached): max(mte1, mte2, mte3 ratio) / "              \
	  "max(mac, vec ratio) above this; else cube if mac_ratio >= vec_ratio, else vector",     \
	  "msprof's memory_bound = mte2_ratio / max(mac_ratio, vec_ratio), memory-bound above "   \
	  "1; MTE3 (stores) and MTE1 (L1 to L0) counted too")                                     \
	X(SECONDARY_SHARE, 0.2,                                                                  \
	  "recommendations also cover every other bound holding at least this share of the "     \
	  "time", "ours")

enum adv_thr {
#define X(id, v, rule, src) id,
	ADV_THRESHOLDS(X)
#undef X
	N_THR
};

static const struct {
	const char *name;
	double value;
	const char *rule, *source;
} thr[N_THR] = {
#define X(id, v, rule, src) { #id, v, rule, src },
	ADV_THRESHOLDS(X)
#undef X
};

#define TH(id) (thr[id].value)

/* ops the reports list unless told otherwise: as many as simrun's summary */
#define DEFAULT_TOP 10
/* recommendations name at most this many ops each */
#define REC_OPS 5

static const char *const bound_names[ADV_NBOUNDS] = { "cube", "vector", "memory", "launch",
						      "sync", "parallelism", "dma" };
static const char *const bound_what[ADV_NBOUNDS] = {
	"the cube pipe is the busiest and near its peak",
	"the vector pipe is the busiest",
	"traffic at the bandwidth of main memory (or the L2) dominates",
	"task gaps and tiny tasks dominate the elapsed time",
	"pipes sit blocked in wait_flag (serialised on flags)",
	"block_dim below the AI core count leaves cores idle",
	"the DMA pipes (MTE) are the busiest while main memory and the L2 stay below their "
	"bandwidth: the cores' transfer engines set the pace, not the memory",
};

const char *adv_bound_name(enum adv_bound b)
{
	return b < ADV_NBOUNDS ? bound_names[b] : "?";
}

/* the pipes of op_summary.csv's <pipe>_ratio columns */
enum { P_SCALAR, P_MTE1, P_MTE2, P_MTE3, P_MAC, P_VEC, NP };
static const char *const pipe_names[NP] = { "scalar", "mte1", "mte2", "mte3", "mac", "vec" };

/* op_summary.csv's columns that the analysis reads: (id, required, names:
 * msprof's, then any older alias) */
#define OP_COLUMNS(X)                                                                            \
	X(C_NAME, 1, "Op Name", NULL) X(C_TYPE, 0, "OP Type", NULL)                             \
	X(C_TASK_TYPE, 1, "Task Type", NULL) X(C_STREAM, 0, "Stream ID", NULL)                  \
	X(C_TASK_ID, 0, "Task ID", NULL) X(C_INFER, 0, "Infer ID", NULL)                        \
	X(C_DUR, 1, "Task Duration(us)", NULL) X(C_WAIT, 1, "Task Wait Time(us)", NULL)         \
	X(C_BLOCK, 1, "Block Dim", "Block Num") X(C_IN_SHAPES, 0, "Input Shapes", NULL)         \
	X(C_OUT_SHAPES, 0, "Output Shapes", NULL) X(C_MEM_BW, 0, "main_mem_bw(GB/s)", NULL)     \
	X(C_L2_RD, 0, "l2_read_bw(GB/s)", NULL) X(C_L2_WR, 0, "l2_write_bw(GB/s)", NULL)        \
	X(C_L2_HIT, 0, "l2_hit_ratio", NULL) X(C_CUBE_FOPS, 0, "cube_fops", NULL)               \
	X(C_MAIN_MEM, 0, "main_mem(B)", NULL) X(C_SIZE, 0, "size(B)", NULL)                     \
	X(C_IQ, 0, "iq_full_ratio", NULL) X(C_PRED, 0, "simulated/predicted", NULL)             \
	X(C_R_SCALAR, 0, "scalar_ratio", NULL) X(C_R_MTE1, 0, "mte1_ratio", NULL)               \
	X(C_R_MTE2, 1, "mte2_ratio", NULL) X(C_R_MTE3, 1, "mte3_ratio", NULL)                   \
	X(C_R_MAC, 1, "mac_ratio", NULL) X(C_R_VEC, 1, "vec_ratio", NULL)                       \
	X(C_W_SCALAR, 0, "scalar_waitflag_ratio", NULL) X(C_W_MTE1, 0, "mte1_waitflag_ratio", NULL) \
	X(C_W_MTE2, 0, "mte2_waitflag_ratio", NULL) X(C_W_MTE3, 0, "mte3_waitflag_ratio", NULL)   \
	X(C_W_MAC, 0, "mac_waitflag_ratio", NULL) X(C_W_VEC, 0, "vec_waitflag_ratio", NULL)

enum op_col {
#define X(id, req, name, alias) id,
	OP_COLUMNS(X)
#undef X
	NCOL
};

static const struct {
	int required;
	const char *names[3];
} col_spec[NCOL] = {
#define X(id, req, name, alias) { req, { name, alias, NULL } },
	OP_COLUMNS(X)
#undef X
};

/* one op_summary.csv row */
struct row {
	const char *name, *type, *in_shapes, *out_shapes;
	int copy;
	long stream, task_id, infer;
	double dur, wait, block;
	double ratio[NP], wf[NP], iq, mem_bw, l2_bw, l2_hit, cube_fops, main_mem, size;
	double pred; /* simulated over the compiler's prediction; 0: none */
};

/* an op: the analysed tasks of one name and type */
struct op {
	const char *name, *type, *in_shapes, *out_shapes, *kernel;
	unsigned count, block_dim;
	double dur, wait, overhead; /* sums over the tasks */
	double ratio[NP], wf[NP], iq, mem_bw, l2_bw, l2_hit; /* time-weighted means */
	double weight;                                        /* their weights' sum */
	double pred, pred_weight; /* simulated/predicted, time-weighted over the predicted tasks */
	double cube_fops, main_mem;                           /* sums */
	enum adv_bound bound;
	char reason[400];
};

struct copy {
	const char *name;
	unsigned count;
	double dur, bytes;
};

struct rec {
	enum adv_bound bound;
	const char *action;
	char *text;
	size_t ops[REC_OPS];
	unsigned nops;
};

struct adv_report {
	char *dir;
	struct trc_csv csv, tt;
	int have_tt;
	struct trc_json *sum;
	const char *soc, *model;
	double ai_cores, mhz, gap, hbm_bw, l2_bw, peak_tflops; /* gap < 0, bw 0: unknown */
	double exec_us; /* runtime.model_exec_us: before an execution's first task (0: none) */
	const char *memory; /* main memory's name (summary.json's main_memory) */
	char chip[64], chip_memory[32]; /* the chip given for a trace without summary.json */
	struct op *op;
	size_t nops;
	size_t *seq; /* ops in the order of the first analysed execution */
	size_t nseq;
	struct copy *copy;
	size_t ncopies;
	unsigned ntasks, nexecs, all_execs, nstreams;
	int warm_only, have_waitflag;
	/* elapsed: task time + waits; basis: task time + dispatch overhead,
	 * what the bounds share (waits beyond the gap are queueing for cores
	 * busy with other streams' tasks, which no bound owns) */
	double elapsed, basis, task_time, waits, overhead, median;
	double bucket[ADV_NBOUNDS];
	enum adv_bound verdict;
	char **evid;
	size_t nevid;
	char **note;
	size_t nnotes;
	struct rec *rec;
	size_t nrec;
	unsigned top;
	int oom;
};

/* ---- small helpers ------------------------------------------------------ */

static char *vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *s = n < 0 ? NULL : malloc((size_t)n + 1);
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

/* Append a formatted string to a list; an allocation failure marks the
 * report, which adv_analyze then refuses. */
__attribute__((format(printf, 4, 5))) static void addf(struct adv_report *r, char ***v, size_t *n,
						      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	char **nv = s ? realloc(*v, (*n + 1) * sizeof *nv) : NULL;
	if (!nv) {
		free(s);
		r->oom = 1;
		return;
	}
	nv[(*n)++] = s;
	*v = nv;
}

/* Append to the string in buf (n bytes), truncating at the end of buf. */
__attribute__((format(printf, 3, 4))) static void appendf(char *buf, size_t n, const char *fmt,
							 ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

static double maxd(double a, double b)
{
	return a > b ? a : b;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* element-wise operator types (ONNX's, and msprof's names for the same),
 * the ones a fusion pass can chain */
static int elementwise(const char *type)
{
	static const char *const ew[] = {
		"Relu", "Abs", "Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Sigmoid", "HardSigmoid",
		"HardSwish", "LeakyRelu", "Reciprocal", "Clip", "Add", "Sub", "Mul", "Div", "Tanh",
		"Cast", "Pow", "Erf", "Gelu", "Elu", "Softplus", "Square", "Maximum", "Minimum",
		"Adds", "Muls", "RealDiv", "Mish", "Swish", "Relu6", "Floor", "Ceil", "Round",
		"ClipByValue", "AccumulateNV2", "LogicalNot", "LogicalAnd", "LogicalOr", "SelectV2",
	};
	for (size_t i = 0; i < sizeof ew / sizeof *ew; i++)
		if (!strcmp(type, ew[i]))
			return 1;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

static int path_in(char *buf, size_t n, const char *dir, const char *name)
{
	return snprintf(buf, n, "%s/%s", dir, name) >= (int)n ? -1 : 0;
}

/* Parse every op_summary.csv row into rows[]. */
static int read_rows(struct adv_report *r, struct row **out, char *err, size_t errlen)
{
	const struct trc_csv *t = &r->csv;
	int col[NCOL];
	for (int c = 0; c < NCOL; c++) {
		col[c] = trc_csv_col(t, col_spec[c].names);
		if (col[c] < 0 && col_spec[c].required) {
			snprintf(err, errlen, "%s:1: no column '%s'", t->path, col_spec[c].names[0]);
			return -1;
		}
	}
	r->have_waitflag = col[C_W_MTE2] >= 0 && col[C_W_VEC] >= 0;
	struct row *rows = calloc(t->nrows + 1, sizeof *rows);
	if (!rows) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < t->nrows; i++) {
		struct row *w = &rows[i];
		w->name = trc_csv_cell(t, i, col[C_NAME]);
		w->type = trc_csv_cell(t, i, col[C_TYPE]);
		w->in_shapes = trc_csv_cell(t, i, col[C_IN_SHAPES]);
		w->out_shapes = trc_csv_cell(t, i, col[C_OUT_SHAPES]);
		/* msprof's task types: AI_CORE, AI_VECTOR_CORE, MIX_AIC, AI_CPU ...
		 * and MEMCPY_ASYNC for the copies */
		w->copy = !strncmp(trc_csv_cell(t, i, col[C_TASK_TYPE]), "MEMCPY", 6);
		double v[NCOL] = { 0 };
		for (int c = 0; c < NCOL; c++) {
			if (col[c] < 0 || c == C_NAME || c == C_TYPE || c == C_TASK_TYPE ||
			    c == C_IN_SHAPES || c == C_OUT_SHAPES)
				continue;
			/* an empty optional cell is "not measured" */
			if (!col_spec[c].required && !*trc_csv_cell(t, i, col[c]))
				continue;
			if (trc_csv_num(t, i, col[c], &v[c], err, errlen)) {
				free(rows);
				return -1;
			}
		}
		w->stream = (long)v[C_STREAM];
		w->task_id = col[C_TASK_ID] >= 0 ? (long)v[C_TASK_ID] : -1;
		w->infer = col[C_INFER] >= 0 ? (long)v[C_INFER] : 0;
		w->dur = v[C_DUR];
		w->wait = v[C_WAIT];
		if (w->dur < 0 || w->wait < 0) {
			snprintf(err, errlen, "%s:%u: a negative task duration or wait", t->path,
				 t->line[i]);
			free(rows);
			return -1;
		}
		w->block = v[C_BLOCK];
		for (int p = 0; p < NP; p++) {
			w->ratio[p] = v[C_R_SCALAR + p];
			w->wf[p] = v[C_W_SCALAR + p];
		}
		w->iq = v[C_IQ];
		w->mem_bw = v[C_MEM_BW];
		w->l2_bw = v[C_L2_RD] + v[C_L2_WR];
		w->l2_hit = v[C_L2_HIT];
		w->cube_fops = v[C_CUBE_FOPS];
		w->main_mem = v[C_MAIN_MEM];
		w->size = v[C_SIZE];
		w->pred = col[C_PRED] >= 0 ? v[C_PRED] : 0;
	}
	*out = rows;
	return 0;
}

static int read_summary(struct adv_report *r, const char *path, char *err, size_t errlen)
{
	if (!(r->sum = trc_json_read(path, err, errlen)))
		return -1;
	if (r->sum->type != TRC_JSON_OBJ) {
		snprintf(err, errlen, "%s: not a JSON object", path);
		return -1;
	}
	if (!trc_json_num(r->sum, "ai_cores", &r->ai_cores) || r->ai_cores < 1) {
		snprintf(err, errlen, "%s: no 'ai_cores' (a number >= 1)", path);
		return -1;
	}
	r->soc = trc_json_str(r->sum, "soc");
	r->model = trc_json_str(r->sum, "model");
	if (!trc_json_num(r->sum, "task_gap_us", &r->gap) || r->gap < 0)
		r->gap = -1;
	if (!trc_json_num(r->sum, "model_exec_us", &r->exec_us) || r->exec_us < 0)
		r->exec_us = 0; /* a trace from before the key */
	if (!trc_json_num(r->sum, "hbm_bandwidth_gbps", &r->hbm_bw) || r->hbm_bw < 0)
		r->hbm_bw = 0;
	r->memory = trc_json_str(r->sum, "main_memory");
	if (!r->memory || !r->memory[0]) /* a trace from before the key */
		r->memory = "main memory";
	if (!trc_json_num(r->sum, "l2_bandwidth_gbps", &r->l2_bw) || r->l2_bw < 0)
		r->l2_bw = 0;
	if (!trc_json_num(r->sum, "peak_cube_tflops", &r->peak_tflops))
		r->peak_tflops = 0;
	if (!trc_json_num(r->sum, "aic_frequency_mhz", &r->mhz))
		r->mhz = 0;
	return 0;
}

/* A trace with no summary.json (msprof writes none): the chip's figures
 * from its configuration, as simrun would have written them. */
static void chip_roofs(struct adv_report *r, const struct soc_config *cfg)
{
	snprintf(r->chip, sizeof r->chip, "%s", cfg->name);
	snprintf(r->chip_memory, sizeof r->chip_memory, "%s", cfg->memory);
	r->soc = r->chip;
	r->memory = r->chip_memory;
	r->ai_cores = (double)cfg->core_count;
	r->mhz = cfg->core_freq_mhz;
	r->gap = cfg->runtime_task_gap_us;
	r->exec_us = cfg->runtime_model_exec_us;
	r->hbm_bw = cfg->hbm_bandwidth_gbps;
	r->l2_bw = cfg->l2_bandwidth_gbps;
	r->peak_tflops = trc_peak_flops(cfg) / 1e12;
}

struct tt_key {
	long stream, task;
	size_t row;
};

static int cmp_tt(const void *a, const void *b)
{
	const struct tt_key *x = a, *y = b;
	if (x->stream != y->stream)
		return (x->stream > y->stream) - (x->stream < y->stream);
	return (x->task > y->task) - (x->task < y->task);
}

/* task_time.csv, when present: each op's kernel name (by stream and task
 * id), and a count of kernel tasks to check op_summary.csv against. */
static int read_task_time(struct adv_report *r, const char *path, const struct row *rows,
			  size_t nrows, const size_t *row_op, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) && errno == ENOENT) {
		addf(r, &r->note, &r->nnotes, "no task_time.csv: kernel names not known");
		return 0;
	}
	if (trc_csv_read(path, &r->tt, err, errlen))
		return -1;
	r->have_tt = 1;
	static const char *const kname[] = { "kernel_name", NULL };
	static const char *const ktype[] = { "kernel_type", NULL };
	static const char *const ksid[] = { "stream_id", NULL };
	static const char *const ktid[] = { "task_id", NULL };
	int cn = trc_csv_col(&r->tt, kname), cty = trc_csv_col(&r->tt, ktype),
	    cs = trc_csv_col(&r->tt, ksid), ct = trc_csv_col(&r->tt, ktid);
	if (cn < 0 || cs < 0 || ct < 0) {
		snprintf(err, errlen, "%s:1: no column '%s'", path,
			 cn < 0 ? "kernel_name" : cs < 0 ? "stream_id" : "task_id");
		return -1;
	}
	struct tt_key *k = malloc((r->tt.nrows + 1) * sizeof *k);
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t nk = 0, op_kernels = 0;
	for (size_t i = 0; i < r->tt.nrows; i++) {
		if (!strncmp(trc_csv_cell(&r->tt, i, cty), "MEMCPY", 6))
			continue;
		double s, t;
		if (trc_csv_num(&r->tt, i, cs, &s, err, errlen) ||
		    trc_csv_num(&r->tt, i, ct, &t, err, errlen)) {
			free(k);
			return -1;
		}
		k[nk++] = (struct tt_key){ (long)s, (long)t, i };
	}
	qsort(k, nk, sizeof *k, cmp_tt);
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].copy)
			continue;
		op_kernels++;
		struct tt_key key = { rows[i].stream, rows[i].task_id, 0 };
		const struct tt_key *hit = rows[i].task_id >= 0 && row_op[i] != SIZE_MAX
						   ? bsearch(&key, k, nk, sizeof *k, cmp_tt) : NULL;
		if (hit && !r->op[row_op[i]].kernel)
			r->op[row_op[i]].kernel = trc_csv_cell(&r->tt, hit->row, cn);
	}
	if (nk != op_kernels)
		addf(r, &r->note, &r->nnotes,
		     "task_time.csv lists %zu kernel tasks, op_summary.csv %zu: the files are "
		     "from different runs?", nk, op_kernels);
	free(k);
	return 0;
}

/* ---- the analysis ------------------------------------------------------- */

/* Whether row i is the first task of its execution: the stream's previous
 * task (rows are in start order) belongs to another Infer ID, or none. */
static int first_of_exec(const struct row *rows, size_t i)
{
	for (size_t j = i; j-- > 0;)
		if (!rows[j].copy && rows[j].stream == rows[i].stream)
			return rows[j].infer != rows[i].infer;
	return 1;
}

/* The dispatch share of a task: its wait, at most the scheduler's gap when
 * the summary says what that is (beyond it, a task waits for cores busy
 * with other streams' work, which is not launch overhead), and for the
 * first task of an execution (first) also the execution's fixed cost. */
static double overhead_of(const struct adv_report *r, double wait, int first)
{
	double cap = r->gap + (first ? r->exec_us : 0);
	return r->gap >= 0 && wait > cap ? cap : wait;
}

/* the busiest pipe's ratio and the longest flag wait, scalar unit aside */
/* The busiest of the pipes past the scalar unit. */
static int busiest_pipe(const struct op *o)
{
	int b = P_MTE1;
	for (int p = P_MTE1; p < NP; p++)
		if (o->ratio[p] > o->ratio[b])
			b = p;
	return b;
}

static double busiest_ratio(const struct op *o)
{
	double m = 0;
	for (int p = P_MTE1; p < NP; p++)
		m = maxd(m, o->ratio[p]);
	return m;
}

static double wait_max(const struct op *o)
{
	double m = 0;
	for (int p = P_MTE1; p < NP; p++)
		m = maxd(m, o->wf[p]);
	return m;
}

/* The share of the cores an op's blocks keep busy: block_dim over the
 * slots of the waves it needs. */
static double core_use(const struct adv_report *r, const struct op *o)
{
	double b = o->block_dim ? o->block_dim : 1;
	return b / (ceil(b / r->ai_cores) * r->ai_cores);
}

static void classify(const struct adv_report *r, struct op *o)
{
	size_t n = sizeof o->reason;
	double d = o->dur / o->count, w = o->overhead / o->count;
	double b = o->block_dim ? o->block_dim : 1, c = r->ai_cores;
	double waves = ceil(b / c), use = core_use(r, o);
	int busiest = P_MTE1, waiting = P_MTE1;
	for (int p = P_MTE1; p < NP; p++) {
		if (o->ratio[p] > o->ratio[busiest])
			busiest = p;
		if (o->wf[p] > o->wf[waiting])
			waiting = p;
	}
	double mte = maxd(o->ratio[P_MTE1], maxd(o->ratio[P_MTE2], o->ratio[P_MTE3]));
	double compute = maxd(o->ratio[P_MAC], o->ratio[P_VEC]);
	if (w + d > 0 && w / (w + d) >= TH(LAUNCH_SHARE)) {
		o->bound = ADV_LAUNCH;
		snprintf(o->reason, n, "dispatch wait %.3f us / (wait + duration %.3f us) = %.0f%% "
			 ">= %.0f%% (LAUNCH_SHARE)", w, d, pct(w, w + d), 100 * TH(LAUNCH_SHARE));
	} else if (r->hbm_bw > 0 && o->mem_bw >= TH(MEM_BW_SHARE) * r->hbm_bw &&
		   o->mem_bw >= compute * r->hbm_bw) {
		/* a roof counts when it is the busiest resource: a GEMM whose
		 * cube works 87% of the time next to an 85%-busy L2 is cube-bound */
		o->bound = ADV_MEMORY;
		snprintf(o->reason, n, "main_mem_bw %.0f GB/s = %.0f%% of the %.0f GB/s %s >= "
			 "%.0f%% (MEM_BW_SHARE)", o->mem_bw, pct(o->mem_bw, r->hbm_bw), r->hbm_bw,
			 r->memory, 100 * TH(MEM_BW_SHARE));
	} else if (r->l2_bw > 0 && o->l2_bw >= TH(MEM_BW_SHARE) * r->l2_bw &&
		   o->l2_bw >= compute * r->l2_bw) {
		o->bound = ADV_MEMORY;
		snprintf(o->reason, n, "L2 read + write %.0f GB/s = %.0f%% of the %.0f GB/s L2 >= "
			 "%.0f%% (MEM_BW_SHARE)", o->l2_bw, pct(o->l2_bw, r->l2_bw), r->l2_bw,
			 100 * TH(MEM_BW_SHARE));
	} else if (use < TH(CORE_USE_MIN)) {
		o->bound = ADV_PARALLELISM;
		snprintf(o->reason, n, "block_dim %.0f on %.0f AI cores (%.0f wave%s): %.0f%% of "
			 "the cores busy < %.0f%% (CORE_USE_MIN)", b, c, waves, waves > 1 ? "s" : "",
			 100 * use, 100 * TH(CORE_USE_MIN));
	} else if (o->ratio[busiest] < TH(SYNC_BUSY_MAX) && o->wf[waiting] >= TH(SYNC_WAIT_MIN)) {
		o->bound = ADV_SYNC;
		snprintf(o->reason, n, "busiest pipe %s_ratio %.2f < %.2f (SYNC_BUSY_MAX) while "
			 "%s_waitflag_ratio %.2f >= %.2f (SYNC_WAIT_MIN)", pipe_names[busiest],
			 o->ratio[busiest], TH(SYNC_BUSY_MAX), pipe_names[waiting], o->wf[waiting],
			 TH(SYNC_WAIT_MIN));
	} else if (mte == 0 && compute == 0) {
		/* nothing ran: the task is all fixed cost */
		o->bound = ADV_LAUNCH;
		snprintf(o->reason, n, "no pipe did any work: the task's time is fixed overhead");
	} else {
		double mb = compute > 0 ? mte / compute : INFINITY;
		if (mb > TH(MEMORY_BOUND_MIN))
			o->bound = ADV_DMA;
		else
			o->bound = o->ratio[P_MAC] >= o->ratio[P_VEC] ? ADV_CUBE : ADV_VECTOR;
		int top = o->bound == ADV_DMA ? busiest : o->bound == ADV_CUBE ? P_MAC : P_VEC;
		snprintf(o->reason, n, "%s_ratio %.2f is the busiest pipe; memory_bound "
			 "max(mte)/max(mac,vec) = ", pipe_names[top], o->ratio[top]);
		if (isfinite(mb))
			appendf(o->reason, n, "%.2f %s %.0f (MEMORY_BOUND_MIN)", mb,
				mb > TH(MEMORY_BOUND_MIN) ? ">" : "<=", TH(MEMORY_BOUND_MIN));
		else
			appendf(o->reason, n, "inf (no compute)");
		if (o->bound == ADV_DMA && r->hbm_bw > 0)
			appendf(o->reason, n, "; main_mem_bw %.0f GB/s = %.0f%% of the %.0f GB/s %s",
				o->mem_bw, pct(o->mem_bw, r->hbm_bw), r->hbm_bw, r->memory);
		if (o->bound == ADV_DMA && r->l2_bw > 0)
			appendf(o->reason, n, ", L2 %.0f%%", pct(o->l2_bw, r->l2_bw));
		if (o->bound == ADV_CUBE && r->peak_tflops > 0 && o->dur > 0 && o->cube_fops > 0) {
			double tf = o->cube_fops / (o->dur * 1e-6) / 1e12;
			appendf(o->reason, n, "; %.1f TFLOP/s = %.0f%% of the %.0f TFLOP/s peak", tf,
				pct(tf, r->peak_tflops), r->peak_tflops);
		}
	}
	if (o->bound != ADV_LAUNCH && o->ratio[P_SCALAR] > o->ratio[busiest])
		appendf(o->reason, n, "; the scalar unit (%.2f) is busier than any pipe",
			o->ratio[P_SCALAR]);
}

/* Group the analysed rows into ops; fill row_op (SIZE_MAX: not analysed). */
static int group(struct adv_report *r, const struct row *rows, size_t nrows,
		 const char *use, size_t *row_op)
{
	r->op = calloc(nrows + 1, sizeof *r->op);
	r->seq = calloc(nrows + 1, sizeof *r->seq);
	if (!r->op || !r->seq)
		return -1;
	size_t last = 0;
	long seq_exec = 0;
	int seq_started = 0, seq_done = 0;
	for (size_t i = 0; i < nrows; i++) {
		row_op[i] = SIZE_MAX;
		if (!use[i])
			continue;
		const struct row *w = &rows[i];
		/* tasks come in model order, so the next op is usually the one
		 * after the last: try it first */
		size_t k = r->nops;
		for (size_t t = 0; t < r->nops; t++) {
			size_t j = (last + 1 + t) % r->nops;
			if (!strcmp(r->op[j].name, w->name) && !strcmp(r->op[j].type, w->type)) {
				k = j;
				break;
			}
		}
		if (k == r->nops) {
			r->op[k] = (struct op){ .name = w->name, .type = w->type,
						.in_shapes = w->in_shapes, .out_shapes = w->out_shapes };
			r->nops++;
		}
		last = k;
		row_op[i] = k;
		struct op *o = &r->op[k];
		double wt = w->dur > 0 ? w->dur : 1e-9; /* time weights; zero-length tasks count a little */
		o->count++;
		o->weight += wt;
		o->dur += w->dur;
		o->wait += w->wait;
		/* an op's own dispatch share: the gap only (the execution's
		 * fixed cost is the run's, whichever op comes first) */
		o->overhead += overhead_of(r, w->wait, 0);
		if (w->block > o->block_dim)
			o->block_dim = (unsigned)w->block;
		for (int p = 0; p < NP; p++) {
			o->ratio[p] += wt * w->ratio[p];
			o->wf[p] += wt * w->wf[p];
		}
		o->iq += wt * w->iq;
		o->mem_bw += wt * w->mem_bw;
		o->l2_bw += wt * w->l2_bw;
		o->l2_hit += wt * w->l2_hit;
		o->cube_fops += w->cube_fops;
		o->main_mem += w->main_mem;
		if (w->pred > 0) {
			o->pred += wt * w->pred;
			o->pred_weight += wt;
		}
		/* the op order of one execution (the first analysed one, its
		 * stream), for finding adjacent ops to fuse */
		if (!seq_started) {
			seq_started = 1;
			seq_exec = w->infer;
		}
		if (!seq_done && w->infer == seq_exec) {
			for (size_t s = 0; s < r->nseq && !seq_done; s++)
				seq_done = r->seq[s] == k; /* the model repeats */
			if (!seq_done)
				r->seq[r->nseq++] = k;
		}
	}
	for (size_t k = 0; k < r->nops; k++) {
		struct op *o = &r->op[k];
		double wsum = o->weight;
		for (int p = 0; p < NP; p++) {
			o->ratio[p] /= wsum;
			o->wf[p] /= wsum;
		}
		o->iq /= wsum;
		o->mem_bw /= wsum;
		o->l2_bw /= wsum;
		o->l2_hit /= wsum;
		if (o->pred_weight > 0)
			o->pred /= o->pred_weight;
	}
	return 0;
}

struct op_key {
	double dur;
	size_t idx;
};

static int cmp_op_key(const void *a, const void *b)
{
	const struct op_key *x = a, *y = b;
	if (x->dur != y->dur)
		return (x->dur < y->dur) - (x->dur > y->dur);
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Which executions to analyse: the warm ones (Infer ID above the stream's
 * first), or every kernel task when no stream ran twice. */
static void select_rows(struct adv_report *r, const struct row *rows, size_t nrows, char *use)
{
	long *first = malloc((nrows + 1) * 2 * sizeof *first);
	size_t ns = 0, nwarm = 0;
	if (!first) {
		r->oom = 1;
		return;
	}
	/* per stream (few of them: a linear list), its first Infer ID */
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].copy || rows[i].infer < 0)
			continue;
		size_t s = 0;
		while (s < ns && first[2 * s] != rows[i].stream)
			s++;
		if (s == ns) {
			first[2 * ns] = rows[i].stream;
			first[2 * ns++ + 1] = rows[i].infer;
		} else if (rows[i].infer < first[2 * s + 1]) {
			first[2 * s + 1] = rows[i].infer;
		}
	}
	r->nstreams = (unsigned)ns;
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].copy || rows[i].infer < 0)
			continue;
		size_t s = 0;
		while (first[2 * s] != rows[i].stream)
			s++;
		use[i] = rows[i].infer > first[2 * s + 1];
		nwarm += use[i];
	}
	r->warm_only = nwarm > 0;
	for (size_t i = 0; i < nrows; i++)
		if (!rows[i].copy && (!r->warm_only || rows[i].infer < 0))
			use[i] = 1;
	/* executions: distinct Infer IDs, counted over all and over the analysed */
	long *ids = first; /* reuse: the stream list is no longer needed */
	size_t nid = 0, nall = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t *cnt = pass ? &nid : &nall;
		size_t m = 0;
		for (size_t i = 0; i < nrows; i++) {
			if (rows[i].copy || (pass && !use[i]))
				continue;
			size_t j = 0;
			while (j < m && ids[j] != rows[i].infer)
				j++;
			if (j == m)
				ids[m++] = rows[i].infer;
		}
		*cnt = m;
	}
	r->nexecs = (unsigned)nid;
	r->all_execs = (unsigned)nall;
	if (!r->nstreams)
		r->nstreams = 1;
	free(first);
}

/* ---- evidence and recommendations -------------------------------------- */

static struct rec *add_rec(struct adv_report *r, enum adv_bound b, const char *action,
			   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static struct rec *add_rec(struct adv_report *r, enum adv_bound b, const char *action,
			   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	struct rec *nr = s ? realloc(r->rec, (r->nrec + 1) * sizeof *nr) : NULL;
	if (!nr) {
		free(s);
		r->oom = 1;
		return NULL;
	}
	r->rec = nr;
	struct rec *x = &r->rec[r->nrec++];
	*x = (struct rec){ .bound = b, .action = action, .text = s };
	return x;
}

static void rec_op(struct rec *x, size_t op)
{
	if (x && x->nops < REC_OPS)
		x->ops[x->nops++] = op;
}

/* "a, b and c" of the largest ops of bound b (at most REC_OPS), into buf;
 * their indices into x. */
static void name_ops(const struct adv_report *r, enum adv_bound b, char *buf, size_t n,
		     size_t *idx, unsigned *nidx)
{
	size_t len = 0;
	unsigned k = 0, total = 0;
	buf[0] = 0;
	for (size_t i = 0; i < r->nops; i++)
		total += r->op[i].bound == b;
	for (size_t i = 0; i < r->nops && k < REC_OPS; i++) {
		if (r->op[i].bound != b)
			continue;
		const char *sep = k == 0 ? "" : (k + 1 == total || k + 1 == REC_OPS) ? " and " : ", ";
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", sep, r->op[i].name);
		idx[k++] = i;
	}
	if (total > k && len < n)
		snprintf(buf + len, n - len, " (and %u more)", total - k);
	*nidx = k;
}

/* Runs of two or more adjacent element-wise ops, each feeding the next (its
 * output shape among the next one's input shapes, when the trace says),
 * with a bound in mask: up to max runs as "a -> b -> c (3 ops)". */
static unsigned fusible_runs(const struct adv_report *r, unsigned mask, char *buf, size_t n,
			     unsigned max, size_t *first_op)
{
	size_t len = 0;
	unsigned runs = 0;
	buf[0] = 0;
	for (size_t s = 0; s < r->nseq;) {
		size_t e = s;
		while (e < r->nseq) {
			const struct op *o = &r->op[r->seq[e]];
			if (!elementwise(o->type) || !(mask >> o->bound & 1))
				break;
			if (e > s) {
				const struct op *p = &r->op[r->seq[e - 1]];
				if (*p->out_shapes && *o->in_shapes && !strstr(o->in_shapes, p->out_shapes))
					break;
			}
			e++;
		}
		if (e - s >= 2) {
			if (runs == 0 && first_op)
				*first_op = r->seq[s];
			if (runs < max && len < n) {
				len += (size_t)snprintf(buf + len, n - len, "%s%s", runs ? "; " : "",
							r->op[r->seq[s]].name);
				for (size_t k = s + 1; k < e && len < n; k++) {
					if (e - s > 4 && k == s + 2) {
						len += (size_t)snprintf(buf + len, n - len, " -> ...");
						k = e - 2;
						continue;
					}
					len += (size_t)snprintf(buf + len, n - len, " -> %s",
								r->op[r->seq[k]].name);
				}
				if (len < n)
					len += (size_t)snprintf(buf + len, n - len, " (%zu ops)", e - s);
			}
			runs++;
		}
		s = e > s ? e : s + 1;
	}
	if (runs > max && len < n)
		snprintf(buf + len, n - len, "; and %u more chains", runs - max);
	return runs;
}

/* the op of bound b with the most time, or SIZE_MAX */
static size_t top_of(const struct adv_report *r, enum adv_bound b)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->op[i].bound == b)
			return i;
	return SIZE_MAX;
}

static void recommend(struct adv_report *r, enum adv_bound b)
{
	char names[600], runs[600];
	size_t idx[REC_OPS];
	unsigned nidx;
	name_ops(r, b, names, sizeof names, idx, &nidx);
	double per_exec = r->nexecs ? 1.0 / r->nexecs : 1.0;
	size_t t = top_of(r, b);
	const struct op *o = t != SIZE_MAX ? &r->op[t] : NULL;
	struct rec *x;
	switch (b) {
	case ADV_LAUNCH: {
		size_t first = SIZE_MAX;
		unsigned nr = fusible_runs(r, 1u << ADV_LAUNCH | 1u << ADV_MEMORY | 1u << ADV_DMA |
						      1u << ADV_VECTOR,
					   runs, sizeof runs, 3, &first);
		if (nr) {
			x = add_rec(r, b, "fuse",
				    "fuse the adjacent element-wise ops %s: each op fused away saves a "
				    "task and its %.3g us dispatch gap, and its intermediate's round trip "
				    "through global memory (simatc's ElementwiseFusionPass fuses chains "
				    "of up to six; check that --fusion_switch_file does not turn it off)",
				    runs, r->gap >= 0 ? r->gap : r->overhead / (r->ntasks ? r->ntasks : 1));
			rec_op(x, first);
		}
		x = add_rec(r, b, "batch",
			    "batch more: each execution runs %.0f tasks with a median duration of %.3f "
			    "us against a %.3g us gap per task; a larger batch (or more inputs per "
			    "execution) does more work per task for the same number of gaps",
			    r->ntasks * per_exec, r->median,
			    r->gap >= 0 ? r->gap : r->overhead / (r->ntasks ? r->ntasks : 1));
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		break;
	}
	case ADV_MEMORY: {
		size_t first = SIZE_MAX;
		unsigned nr = fusible_runs(r, 1u << ADV_MEMORY | 1u << ADV_DMA | 1u << ADV_LAUNCH |
						      1u << ADV_VECTOR,
					   runs, sizeof runs, 3, &first);
		if (nr) {
			x = add_rec(r, b, "fuse",
				    "fuse the adjacent element-wise ops %s so that their intermediates "
				    "stay in the UB instead of crossing main memory twice each "
				    "(simatc's ElementwiseFusionPass, up to six per kernel)", runs);
			rec_op(x, first);
		}
		x = add_rec(r, b, "cut_bytes",
			    "cut the bytes that %s move (%.1f MB through main memory per execution "
			    "for the largest, %s, L2 hit ratio %.2f): smaller data types, fewer "
			    "layout changes (TransData), tiles that reuse what the L2 holds; "
			    "`simrun --set hbm.bandwidth_gbps=...` shows what faster %s would give",
			    names, o ? o->main_mem * per_exec / 1e6 : 0, o ? o->name : "-",
			    o ? o->l2_hit : 0, r->memory);
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		break;
	}
	case ADV_DMA: {
		size_t first = SIZE_MAX;
		unsigned nr = fusible_runs(r, 1u << ADV_DMA | 1u << ADV_MEMORY | 1u << ADV_LAUNCH |
						      1u << ADV_VECTOR,
					   runs, sizeof runs, 3, &first);
		if (nr) {
			x = add_rec(r, b, "fuse",
				    "fuse the adjacent element-wise ops %s: each op fused away is a "
				    "round trip of its intermediate through the DMA engines "
				    "(simatc's ElementwiseFusionPass, up to six per kernel)", runs);
			rec_op(x, first);
		}
		x = add_rec(r, b, "spread_dma",
			    "the DMA pipes of %s are the busiest (%s %s_ratio %.2f) while %s runs at "
			    "%.0f%% of its %.0f GB/s: faster %s would not help; spread the "
			    "transfers over more cores' DMA engines (%s runs %u blocks on %.0f AI "
			    "cores), move fewer bytes per core (tiles that reuse what L1 and the UB "
			    "hold, fewer layout changes), or give each core a faster DMA path: "
			    "`simrun --set mte.gm_read_bytes_per_cycle=... --set "
			    "mte.gm_write_bytes_per_cycle=...` shows what that would give",
			    names, o ? o->name : "-", o ? pipe_names[busiest_pipe(o)] : "mte2",
			    o ? o->ratio[busiest_pipe(o)] : 0, r->memory,
			    o && r->hbm_bw > 0 ? pct(o->mem_bw, r->hbm_bw) : 0, r->hbm_bw, r->memory,
			    o ? o->name : "-", o ? o->block_dim : 0, r->ai_cores);
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		break;
	}
	case ADV_CUBE:
		x = add_rec(r, b, "fewer_flops",
			    "the cube is the limit in %s (mac_ratio %.2f for %s): remaining gains "
			    "come from fewer or cheaper MACs (int8 runs the cube at twice the fp16 "
			    "rate) or more AI cores", names, o ? o->ratio[P_MAC] : 0, o ? o->name : "-");
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		if (o && o->ratio[P_MAC] < 0.9 &&
		    maxd(o->ratio[P_MTE1], o->ratio[P_MTE2]) > 0.5 * o->ratio[P_MAC]) {
			x = add_rec(r, b, "larger_tiles",
				    "larger tiles for %s: MTE1 %.2f and MTE2 %.2f are high next to the "
				    "cube's %.2f, so each operand loaded feeds too few MACs",
				    o->name, o->ratio[P_MTE1], o->ratio[P_MTE2], o->ratio[P_MAC]);
			rec_op(x, t);
		}
		break;
	case ADV_VECTOR:
		x = add_rec(r, b, "vector_work",
			    "the vector unit is the limit in %s (vec_ratio %.2f for %s): use all "
			    "128 lanes and more repeats per instruction, fuse the element-wise ops "
			    "around them, or move the maths to the cube where it allows",
			    names, o ? o->ratio[P_VEC] : 0, o ? o->name : "-");
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		break;
	case ADV_SYNC:
		x = add_rec(r, b, "double_buffer",
			    "double-buffer %s: the pipes work at most %.0f%% of the time of %s and "
			    "wait on flags up to %.0f%%; give each stage two buffers (ping-pong on two "
			    "event ids, as tests/kernels/vadd.s does) so MTE2 loads tile i+1 while the "
			    "compute pipe works on tile i and MTE3 stores tile i-1", names,
			    o ? 100 * busiest_ratio(o) : 0, o ? o->name : "-",
			    o ? 100 * wait_max(o) : 0);
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		x = add_rec(r, b, "larger_tiles",
			    "larger tiles in %s: each dependent transfer pays the memory latency once, "
			    "so fewer, larger transfers hide more of it", names);
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		break;
	case ADV_PARALLELISM:
		x = add_rec(r, b, "raise_block_dim",
			    "raise block_dim of %s to a multiple of the %.0f AI cores (%s has %u): "
			    "up to %.1fx on that op if its work splits", names, r->ai_cores,
			    o ? o->name : "-", o ? o->block_dim : 0,
			    o ? 1 / core_use(r, o) : 0);
		for (unsigned k = 0; k < nidx; k++)
			rec_op(x, idx[k]);
		add_rec(r, b, "batch",
			"batch more, or run several streams (simrun --streams N), so that other work "
			"fills the idle cores");
		break;
	default:
		break;
	}
}

/* The run's evidence: what was analysed, the shares, and the numbers
 * behind the verdict. */
static void evidence(struct adv_report *r, double launch_tasks_us, unsigned launch_tasks)
{
	enum adv_bound v = r->verdict;
	double per_exec = r->nexecs ? 1.0 / r->nexecs : 1.0;
	addf(r, &r->evid, &r->nevid,
	     "analysed %u task%s of %u %s execution%s (%u in the trace) on %u stream%s: elapsed "
	     "%.3f us = task time %.3f us + waits %.3f us", r->ntasks, r->ntasks == 1 ? "" : "s",
	     r->nexecs, r->warm_only ? "warm" : "(the only)", r->nexecs == 1 ? "" : "s", r->all_execs,
	     r->nstreams, r->nstreams == 1 ? "" : "s", r->elapsed, r->task_time, r->waits);
	double ls = r->bucket[ADV_LAUNCH] / r->basis;
	addf(r, &r->evid, &r->nevid,
	     "launch share %.1f%% = (dispatch waits %.3f us + %u launch-bound task%s %.3f us) / "
	     "%.3f us %s %.0f%% (LAUNCH_SHARE)", 100 * ls, r->overhead, launch_tasks,
	     launch_tasks == 1 ? "" : "s", launch_tasks_us, r->basis,
	     ls >= TH(LAUNCH_SHARE) ? ">=" : "<", 100 * TH(LAUNCH_SHARE));
	if (r->gap >= 0)
		addf(r, &r->evid, &r->nevid,
		     "median task %.3f us against a %.3g us task gap; %.0f tasks per execution",
		     r->median, r->gap, r->ntasks * per_exec);
	else
		addf(r, &r->evid, &r->nevid, "median task %.3f us; %.0f tasks per execution",
		     r->median, r->ntasks * per_exec);
	/* every bound with time, largest first */
	char buf[400];
	size_t len = 0;
	int done[ADV_NBOUNDS] = { 0 };
	for (int k = 0; k < ADV_NBOUNDS; k++) {
		int best = -1;
		for (int b = 0; b < ADV_NBOUNDS; b++)
			if (!done[b] && r->bucket[b] > 0 && (best < 0 || r->bucket[b] > r->bucket[best]))
				best = b;
		if (best < 0)
			break;
		done[best] = 1;
		if (len < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s %.1f%%", k ? ", " : "",
						bound_names[best], pct(r->bucket[best], r->basis));
	}
	addf(r, &r->evid, &r->nevid, "time by bound: %s", buf);
	if (v != ADV_LAUNCH)
		addf(r, &r->evid, &r->nevid, "%s-bound ops hold the largest share, %.1f%%",
		     bound_names[v], pct(r->bucket[v], r->basis));
	unsigned shown = 0;
	for (size_t i = 0; i < r->nops && shown < 3; i++) {
		const struct op *o = &r->op[i];
		if (o->bound != v)
			continue;
		addf(r, &r->evid, &r->nevid, "%s (%s, %.3f us per execution, block_dim %u): %s",
		     o->name, o->type, o->dur / o->count, o->block_dim, o->reason);
		shown++;
	}
	double queued = r->waits - r->overhead;
	if (queued > 0.01 * r->elapsed)
		addf(r, &r->evid, &r->nevid,
		     "%.3f us of the waits go beyond the task gap: tasks queued behind other "
		     "streams' work for the cores; the shares leave this time out", queued);
}

int adv_analyze(const char *dir, struct adv_report **out, char *err, size_t errlen)
{
	return adv_analyze_chip(dir, NULL, out, err, errlen);
}

int adv_analyze_chip(const char *dir, const struct soc_config *chip, struct adv_report **out,
		     char *err, size_t errlen)
{
	*out = NULL;
	struct stat st;
	if (stat(dir, &st)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory (give the directory simrun --trace "
			 "wrote)", dir);
		return -1;
	}
	struct adv_report *r = calloc(1, sizeof *r);
	struct row *rows = NULL;
	char *use = NULL;
	size_t *row_op = NULL, *perm = NULL;
	double *durs = NULL;
	char path[4096];
	if (!r || !(r->dir = strdup(dir))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->top = DEFAULT_TOP;
	/* simrun's layout or msprof's (PROF_.../device_N/summary/op_summary_*.csv) */
	trc_find(dir, "op_summary", "csv", path, sizeof path);
	if (trc_csv_read(path, &r->csv, err, errlen))
		goto fail;
	if (path_in(path, sizeof path, dir, "summary.json"))
		goto fail;
	if (access(path, F_OK) && chip) {
		chip_roofs(r, chip);
		/* the model: msprof's Model Name column, as far as it has one */
		static const char *const mn[] = { "Model Name", NULL };
		int c = trc_csv_col(&r->csv, mn);
		for (size_t i = 0; c >= 0 && !r->model && i < r->csv.nrows; i++)
			if (*trc_csv_cell(&r->csv, i, c))
				r->model = trc_csv_cell(&r->csv, i, c);
		addf(r, &r->note, &r->nnotes, "no summary.json: the roofs are %s's configuration's",
		     chip->name);
	} else if (read_summary(r, path, err, errlen)) {
		if (access(path, F_OK) && strlen(err) + 40 < errlen)
			strcat(err, " (msprof writes none: give the chip)");
		goto fail;
	}
	if (read_rows(r, &rows, err, errlen))
		goto fail;
	size_t nrows = r->csv.nrows;
	use = calloc(nrows + 1, 1);
	row_op = calloc(nrows + 1, sizeof *row_op);
	durs = calloc(nrows + 1, sizeof *durs);
	r->copy = calloc(nrows + 1, sizeof *r->copy);
	if (!use || !row_op || !durs || !r->copy) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	select_rows(r, rows, nrows, use);
	if (r->oom || group(r, rows, nrows, use, row_op)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!r->nops) {
		snprintf(err, errlen, "%s/op_summary.csv: no AI_CORE tasks to analyse", dir);
		goto fail;
	}
	/* copies: by name, over the whole trace (they are per execution or once) */
	for (size_t i = 0; i < nrows; i++) {
		if (!rows[i].copy)
			continue;
		size_t k = 0;
		while (k < r->ncopies && strcmp(r->copy[k].name, rows[i].name))
			k++;
		if (k == r->ncopies)
			r->copy[r->ncopies++] = (struct copy){ .name = rows[i].name };
		r->copy[k].count++;
		r->copy[k].dur += rows[i].dur;
		r->copy[k].bytes += rows[i].size;
	}
	trc_find(dir, "task_time", "csv", path, sizeof path);
	if (read_task_time(r, path, rows, nrows, row_op, err, errlen))
		goto fail;
	if (!r->have_waitflag)
		addf(r, &r->note, &r->nnotes, "op_summary.csv has no *_waitflag_ratio columns: "
					      "the sync rule cannot fire");
	size_t nd = 0;
	for (size_t i = 0; i < nrows; i++) {
		if (!use[i])
			continue;
		r->ntasks++;
		r->task_time += rows[i].dur;
		r->waits += rows[i].wait;
		r->overhead += overhead_of(r, rows[i].wait, first_of_exec(rows, i));
		durs[nd++] = rows[i].dur;
	}
	qsort(durs, nd, sizeof *durs, cmp_double);
	r->median = nd % 2 ? durs[nd / 2] : (durs[nd / 2 - 1] + durs[nd / 2]) / 2;
	r->elapsed = r->task_time + r->waits;
	r->basis = r->task_time + r->overhead;
	if (r->basis <= 0) {
		snprintf(err, errlen, "%s/op_summary.csv: the analysed tasks take no time", dir);
		goto fail;
	}
	/* classify, then sort the ops by time, keeping the sequence's indices */
	for (size_t k = 0; k < r->nops; k++)
		classify(r, &r->op[k]);
	perm = malloc(r->nops * sizeof *perm);
	struct op *sorted = malloc(r->nops * sizeof *sorted);
	if (!perm || !sorted) {
		free(sorted);
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* by time, ties by first appearance */
	struct op_key *key = (struct op_key *)calloc(r->nops, sizeof *key);
	if (!key) {
		free(sorted);
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t k = 0; k < r->nops; k++)
		key[k] = (struct op_key){ r->op[k].dur, k };
	qsort(key, r->nops, sizeof *key, cmp_op_key);
	for (size_t k = 0; k < r->nops; k++) {
		perm[k] = key[k].idx;
		sorted[k] = r->op[perm[k]];
	}
	free(key);
	size_t *inv = row_op; /* reuse: row_op is no longer needed */
	for (size_t k = 0; k < r->nops; k++)
		inv[perm[k]] = k;
	for (size_t s = 0; s < r->nseq; s++)
		r->seq[s] = inv[r->seq[s]];
	free(r->op);
	r->op = sorted;
	/* the run */
	double launch_tasks_us = 0;
	unsigned launch_tasks = 0;
	for (size_t k = 0; k < r->nops; k++) {
		r->bucket[r->op[k].bound] += r->op[k].dur;
		if (r->op[k].bound == ADV_LAUNCH) {
			launch_tasks_us += r->op[k].dur;
			launch_tasks += r->op[k].count;
		}
	}
	r->bucket[ADV_LAUNCH] += r->overhead;
	if (r->bucket[ADV_LAUNCH] / r->basis >= TH(LAUNCH_SHARE)) {
		r->verdict = ADV_LAUNCH;
	} else {
		r->verdict = ADV_CUBE;
		for (int b = 1; b < ADV_NBOUNDS; b++)
			if (r->bucket[b] > r->bucket[r->verdict])
				r->verdict = (enum adv_bound)b;
	}
	evidence(r, launch_tasks_us, launch_tasks);
	/* recommendations: the verdict's, then the other large bounds' */
	recommend(r, r->verdict);
	int done[ADV_NBOUNDS] = { 0 };
	done[r->verdict] = 1;
	for (;;) {
		int best = -1;
		for (int b = 0; b < ADV_NBOUNDS; b++)
			if (!done[b] && r->bucket[b] >= TH(SECONDARY_SHARE) * r->basis &&
			    (best < 0 || r->bucket[b] > r->bucket[best]))
				best = b;
		if (best < 0)
			break;
		done[best] = 1;
		recommend(r, (enum adv_bound)best);
	}
	if (r->oom) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	free(rows);
	free(use);
	free(row_op);
	free(perm);
	free(durs);
	*out = r;
	return 0;
fail:
	free(rows);
	free(use);
	free(row_op);
	free(perm);
	free(durs);
	adv_free(r);
	return -1;
}

enum adv_bound adv_verdict(const struct adv_report *r)
{
	return r->verdict;
}

void adv_set_top(struct adv_report *r, unsigned top)
{
	r->top = top;
}

size_t adv_op_count(const struct adv_report *r)
{
	return r->nops;
}

int adv_op_get(const struct adv_report *r, size_t i, struct adv_op_info *out)
{
	if (i >= r->nops)
		return -1;
	const struct op *o = &r->op[i];
	*out = (struct adv_op_info){ .name = o->name, .type = o->type, .bound = o->bound,
				     .duration_us = o->dur / o->count,
				     .share = r->task_time > 0 ? o->dur / r->task_time : 0,
				     .count = o->count, .block_dim = o->block_dim,
				     .reason = o->reason };
	return 0;
}

double adv_bound_share(const struct adv_report *r, enum adv_bound b)
{
	return b < ADV_NBOUNDS && r->basis > 0 ? r->bucket[b] / r->basis : 0;
}

void adv_free(struct adv_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nevid; i++)
		free(r->evid[i]);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->note[i]);
	for (size_t i = 0; i < r->nrec; i++)
		free(r->rec[i].text);
	free(r->evid);
	free(r->note);
	free(r->rec);
	free(r->op);
	free(r->seq);
	free(r->copy);
	trc_csv_free(&r->csv);
	if (r->have_tt)
		trc_csv_free(&r->tt);
	trc_json_free(r->sum);
	free(r->dir);
	free(r);
}

/* ---- output ------------------------------------------------------------- */

static unsigned shown_ops(const struct adv_report *r)
{
	return r->top && r->top < r->nops ? r->top : (unsigned)r->nops;
}

void adv_print_text(FILE *f, const struct adv_report *r)
{
	double per_exec = r->nexecs ? 1.0 / r->nexecs : 1.0;
	fprintf(f, "simprof: %s\n", r->dir);
	fprintf(f, "model %s on %s (%.0f AI cores", r->model ? r->model : "?",
		r->soc ? r->soc : "?", r->ai_cores);
	if (r->mhz > 0)
		fprintf(f, " at %.0f MHz", r->mhz);
	if (r->gap >= 0)
		fprintf(f, ", task gap %.3g us", r->gap);
	fprintf(f, ")\n\nverdict: %s-bound: %s\n", bound_names[r->verdict],
		bound_what[r->verdict]);
	fprintf(f, "\ntime by bound (per execution, and share):\n");
	for (int b = 0; b < ADV_NBOUNDS; b++)
		if (r->bucket[b] > 0)
			fprintf(f, "  %-12s %12.3f us %6.1f%%%s\n", bound_names[b],
				r->bucket[b] * per_exec, pct(r->bucket[b], r->basis),
				b == ADV_LAUNCH ? "  (dispatch waits + launch-bound tasks)" : "");
	fprintf(f, "\nevidence:\n");
	for (size_t i = 0; i < r->nevid; i++)
		fprintf(f, "  - %s\n", r->evid[i]);
	fprintf(f, "\nrecommendations:\n");
	for (size_t i = 0; i < r->nrec; i++)
		fprintf(f, "  %zu. [%s] %s\n", i + 1, bound_names[r->rec[i].bound], r->rec[i].text);
	unsigned n = shown_ops(r);
	fprintf(f, "\ntop %u of %zu ops by time (mean per execution):\n", n, r->nops);
	fprintf(f, "  %-24s %-14s %-11s %10s %6s %5s %5s %5s %5s %5s %6s %8s %8s\n", "name",
		"type", "bound", "us", "share", "block", "mac", "vec", "mte2", "mte3", "max_wf",
		"mem_GB/s", "sim/pred");
	for (unsigned i = 0; i < n; i++) {
		const struct op *o = &r->op[i];
		char nm[25];
		fprintf(f, "  %-24s %-14.14s %-11s %10.3f %5.1f%% %5u %5.2f %5.2f %5.2f %5.2f "
			   "%6.2f %8.1f", trc_shorten(nm, 24, o->name), o->type, bound_names[o->bound], o->dur / o->count,
			pct(o->dur, r->task_time), o->block_dim, o->ratio[P_MAC], o->ratio[P_VEC],
			o->ratio[P_MTE2], o->ratio[P_MTE3], wait_max(o), o->mem_bw);
		/* what contention and the memory system made of the compiler's
		 * prediction (op_summary.csv's simulated/predicted) */
		if (o->pred_weight > 0)
			fprintf(f, " %8.2f\n", o->pred);
		else
			fprintf(f, " %8s\n", "-");
		fprintf(f, "      why: %s\n", o->reason);
	}
	if (r->ncopies) {
		fprintf(f, "\nhost <-> device copies (not part of the verdict):\n");
		for (size_t k = 0; k < r->ncopies; k++) {
			const struct copy *c = &r->copy[k];
			char nm[29];
			fprintf(f, "  %-28s %3u x %10.3f us  %10.3f MB", trc_shorten(nm, 28, c->name),
				c->count,
				c->dur / c->count, c->bytes / c->count / 1e6);
			if (c->dur > 0 && c->bytes > 0)
				fprintf(f, "  %7.2f GB/s", c->bytes / (c->dur * 1e-6) / 1e9);
			fputc('\n', f);
		}
	}
	if (r->nnotes) {
		fprintf(f, "\nnotes:\n");
		for (size_t i = 0; i < r->nnotes; i++)
			fprintf(f, "  - %s\n", r->note[i]);
	}
}


/* a number, or null when it is not finite (JSON has no inf or nan) */
static void jnum(FILE *f, double v, int prec)
{
	if (isfinite(v))
		fprintf(f, "%.*f", prec, v);
	else
		fputs("null", f);
}

void adv_print_json(FILE *f, const struct adv_report *r)
{
	double per_exec = r->nexecs ? 1.0 / r->nexecs : 1.0;
	fputs("{\"trace\": ", f);
	sim_json_str(f, r->dir);
	fputs(", \"soc\": ", f);
	sim_json_str(f, r->soc ? r->soc : "");
	fputs(", \"model\": ", f);
	sim_json_str(f, r->model ? r->model : "");
	fputs(", \"ai_cores\": ", f);
	jnum(f, r->ai_cores, 0);
	fputs(", \"verdict\": ", f);
	sim_json_str(f, bound_names[r->verdict]);
	fputs(", \"verdict_meaning\": ", f);
	sim_json_str(f, bound_what[r->verdict]);
	fprintf(f, ", \"analysed\": {\"tasks\": %u, \"executions\": %u, \"executions_in_trace\": "
		   "%u, \"warm_only\": %s, \"streams\": %u, \"elapsed_us\": ", r->ntasks, r->nexecs,
		r->all_execs, r->warm_only ? "true" : "false", r->nstreams);
	jnum(f, r->elapsed, 3);
	fputs(", \"task_time_us\": ", f);
	jnum(f, r->task_time, 3);
	fputs(", \"wait_us\": ", f);
	jnum(f, r->waits, 3);
	fputs(", \"dispatch_overhead_us\": ", f);
	jnum(f, r->overhead, 3);
	fputs(", \"median_task_us\": ", f);
	jnum(f, r->median, 3);
	fputs("}, \"time_by_bound\": {", f);
	for (int b = 0; b < ADV_NBOUNDS; b++) {
		fprintf(f, "%s\"%s\": {\"us_per_execution\": ", b ? ", " : "", bound_names[b]);
		jnum(f, r->bucket[b] * per_exec, 3);
		fputs(", \"share\": ", f);
		jnum(f, r->bucket[b] / r->basis, 4);
		fputc('}', f);
	}
	fputs("}, \"evidence\": [", f);
	for (size_t i = 0; i < r->nevid; i++) {
		fputs(i ? ", " : "", f);
		sim_json_str(f, r->evid[i]);
	}
	fputs("], \"recommendations\": [", f);
	for (size_t i = 0; i < r->nrec; i++) {
		const struct rec *x = &r->rec[i];
		fprintf(f, "%s{\"bound\": \"%s\", \"action\": \"%s\", \"ops\": [", i ? ", " : "",
			bound_names[x->bound], x->action);
		for (unsigned k = 0; k < x->nops; k++) {
			fputs(k ? ", " : "", f);
			sim_json_str(f, r->op[x->ops[k]].name);
		}
		fputs("], \"text\": ", f);
		sim_json_str(f, x->text);
		fputc('}', f);
	}
	fputs("], \"thresholds\": {", f);
	for (int t = 0; t < N_THR; t++)
		fprintf(f, "%s\"%s\": %g", t ? ", " : "", thr[t].name, thr[t].value);
	fputs("}, \"ops\": [", f);
	unsigned n = shown_ops(r);
	for (unsigned i = 0; i < n; i++) {
		const struct op *o = &r->op[i];
		fputs(i ? ", " : "", f);
		fputs("{\"name\": ", f);
		sim_json_str(f, o->name);
		fputs(", \"type\": ", f);
		sim_json_str(f, o->type);
		fprintf(f, ", \"bound\": \"%s\", \"duration_us\": ", bound_names[o->bound]);
		jnum(f, o->dur / o->count, 3);
		fputs(", \"share\": ", f);
		jnum(f, r->task_time > 0 ? o->dur / r->task_time : 0, 4);
		fprintf(f, ", \"count\": %u, \"block_dim\": %u, \"wait_us\": ", o->count, o->block_dim);
		jnum(f, o->wait / o->count, 3);
		fputs(", \"ratios\": {", f);
		for (int p = 0; p < NP; p++) {
			fprintf(f, "%s\"%s\": ", p ? ", " : "", pipe_names[p]);
			jnum(f, o->ratio[p], 4);
		}
		fputs("}, \"waitflag_ratios\": {", f);
		for (int p = 0; p < NP; p++) {
			fprintf(f, "%s\"%s\": ", p ? ", " : "", pipe_names[p]);
			jnum(f, o->wf[p], 4);
		}
		fputs("}, \"iq_full_ratio\": ", f);
		jnum(f, o->iq, 4);
		fputs(", \"main_mem_bw_gbps\": ", f);
		jnum(f, o->mem_bw, 3);
		fputs(", \"simulated_over_predicted\": ", f);
		if (o->pred_weight > 0)
			jnum(f, o->pred, 3);
		else
			fputs("null", f);
		fputs(", \"l2_bw_gbps\": ", f);
		jnum(f, o->l2_bw, 3);
		fputs(", \"cube_tflops\": ", f);
		jnum(f, o->dur > 0 ? o->cube_fops / (o->dur * 1e-6) / 1e12 : 0, 3);
		if (o->kernel) {
			fputs(", \"kernel\": ", f);
			sim_json_str(f, o->kernel);
		}
		fputs(", \"reason\": ", f);
		sim_json_str(f, o->reason);
		fputc('}', f);
	}
	fputs("], \"copies\": [", f);
	for (size_t k = 0; k < r->ncopies; k++) {
		const struct copy *c = &r->copy[k];
		fputs(k ? ", " : "", f);
		fputs("{\"name\": ", f);
		sim_json_str(f, c->name);
		fprintf(f, ", \"count\": %u, \"duration_us\": ", c->count);
		jnum(f, c->dur / c->count, 3);
		fputs(", \"bytes\": ", f);
		jnum(f, c->bytes / c->count, 0);
		fputc('}', f);
	}
	fputs("], \"notes\": [", f);
	for (size_t i = 0; i < r->nnotes; i++) {
		fputs(i ? ", " : "", f);
		sim_json_str(f, r->note[i]);
	}
	fputs("]}\n", f);
}

void adv_print_thresholds(FILE *f)
{
	fprintf(f, "| threshold | value | rule | source |\n|---|---|---|---|\n");
	for (int t = 0; t < N_THR; t++)
		fprintf(f, "| `%s` | %g | %s | %s |\n", thr[t].name, thr[t].value, thr[t].rule,
			thr[t].source);
}
