/* plot.c: the charts of a trace directory (see plot.h and docs/plots.md).
 *
 * Only the trace files are read, not the simulator's structures, so that a
 * trace from another run, or edited by hand, plots the same; every parse
 * error names the file and line.  Each chart is a data file plus a
 * gnuplot script that reads it, so users can restyle a chart without this
 * code; gnuplot then runs once per script, in the output directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"
#include "trace_read.h"

#define MAX_PIPES 16	   /* an AI core's threads (pipes) charted, by tid */
#define DEFAULT_TOP 10
#define DEFAULT_CORE_ROWS 8
#define GANTT_WIDTH 1600   /* px of timeline.png */
#define GANTT_PLOT_PX 1440 /* its plot area (margins fixed in the script): a pixel of time */
#define LABEL_LEVELS 8	   /* most label rows above the streams */
#define LABEL_MAX 60	   /* characters of a label (longer names keep their tail) */
#define LABEL_CHAR_PX 6.4  /* a label character's width at font size 8 in the PNG, at most */
#define LABEL_DOT_PX 4.0   /* from a timeline label's dot to its text */
#define OP_PIPES 6	   /* op_summary.csv's pipe columns */

/* The pipes as op_summary.csv names them, in the order of the timeline's
 * tids (the ISA's pipe order), and as the charts show them. */
static const char *const op_pipe_col[OP_PIPES] = { "scalar", "mte1", "mte2", "mte3", "mac",
						   "vec" };
static const char *const op_pipe_label[OP_PIPES] = { "S (scalar)", "MTE1", "MTE2", "MTE3",
						     "M (cube)", "V (vector)" };
/* for a timeline without thread_name metadata */
static const char *const default_pipe_name[] = { "S", "MTE1", "MTE2", "MTE3", "M", "V" };
/* one colour per pipe (by tid), the same in every chart */
static const char *const pipe_color[] = { "#8c564b", "#17becf", "#1f77b4", "#9467bd",
					  "#d62728", "#2ca02c", "#7f7f7f", "#bcbd22" };
#define NCOLORS (sizeof pipe_color / sizeof *pipe_color)

struct span {
	double s, e; /* µs */
	unsigned core, pipe;
};

struct task {
	char name[128];
	double s, e;
	unsigned stream;
	int copy; /* a memcpy task, else a kernel */
	int load; /* the weights' load: before the run proper, so outside the Gantt's window */
};

/* One op name's AI_CORE rows of op_summary.csv, summed. */
struct op {
	char name[256];
	unsigned rows;
	double dur, pipe[OP_PIPES], cube, vec, mem, gm;
};

struct trace {
	const char *dir;
	/* summary.json */
	double peak_tflops, hbm_gbps, l2_gbps;
	unsigned cores;
	char soc[64], model[128];
	/* timeline.json */
	struct span *spans;
	size_t nspans, capspans;
	struct task *tasks;
	size_t ntasks, captasks;
	char pipe_name[MAX_PIPES][32];
	/* op_summary.csv */
	struct op *ops;
	size_t nops;
};

static int grow(void *vp, size_t *cap, size_t n, size_t size)
{
	void **v = vp;
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	void *p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* A whole file, NUL-terminated (the parsers rely on it: strtod stops there). */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	while (b) {
		n += fread(b + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		char *nb = realloc(b, cap *= 2);
		if (!nb) {
			free(b);
			b = NULL;
		} else {
			b = nb;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (!b || bad) {
		snprintf(err, errlen, "%s: %s", path, b ? "read error" : "out of memory");
		free(b);
		return NULL;
	}
	b[n] = 0;
	*len = n;
	return b;
}

/* ---- JSON events, streamed ----
 * summary.json and op_summary.csv go through trace_read.h, as for the
 * advisor; timeline.json does not: it is the file that grows with the run
 * (every pipe span of every core), and trc_json_read's tree of it takes
 * several times its size.  This reader goes through the text one event at
 * a time and keeps only what the Gantt needs. */

struct jp {
	const char *p, *end, *path;
	unsigned line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int jp_fail(struct jp *j, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* a truncated file fails on whatever comes next; say why */
	snprintf(j->err, j->errlen, "%s:%u: %s%s", j->path, j->line, msg,
		 j->p >= j->end ? " (the file ends here: truncated?)" : "");
	return -1;
}

static void jp_ws(struct jp *j)
{
	for (; j->p < j->end; j->p++) {
		if (*j->p == '\n')
			j->line++;
		else if (*j->p != ' ' && *j->p != '\t' && *j->p != '\r')
			break;
	}
}

/* Is the next token c?  (consumed if so) */
static int jp_peek(struct jp *j, char c)
{
	jp_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return 1;
	}
	return 0;
}

static int jp_lit(struct jp *j, char c)
{
	if (jp_peek(j, c))
		return 0;
	if (j->p >= j->end)
		return jp_fail(j, "unexpected end of file (expected '%c')", c);
	return jp_fail(j, "expected '%c', found '%c'", c, *j->p);
}

static int jp_hex4(struct jp *j, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++, j->p++) {
		char c = j->p < j->end ? *j->p : 0;
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16;
		if (d == 16)
			return jp_fail(j, "bad \\u escape");
		*v = *v << 4 | d;
	}
	return 0;
}

static size_t utf8_put(char *b, unsigned cp)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | cp >> 18);
	b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string into out (cap bytes, truncated at a character boundary; out
 * NULL: skipped). */
static int jp_string(struct jp *j, char *out, size_t cap)
{
	jp_ws(j);
	if (j->p >= j->end || *j->p != '"')
		return jp_fail(j, "expected a string");
	j->p++;
	size_t n = 0;
	for (;;) {
		if (j->p >= j->end)
			return jp_fail(j, "unterminated string");
		unsigned char c = (unsigned char)*j->p++;
		if (c == '"')
			break;
		if (c < 0x20)
			return jp_fail(j, "control character in a string");
		char b[4];
		size_t k = 1;
		b[0] = (char)c;
		if (c == '\\') {
			char e = j->p < j->end ? *j->p++ : 0;
			unsigned cp;
			switch (e) {
			case '"': case '\\': case '/': b[0] = e; break;
			case 'b': b[0] = '\b'; break;
			case 'f': b[0] = '\f'; break;
			case 'n': b[0] = '\n'; break;
			case 'r': b[0] = '\r'; break;
			case 't': b[0] = '\t'; break;
			case 'u':
				if (jp_hex4(j, &cp))
					return -1;
				if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 &&
				    j->p[0] == '\\' && j->p[1] == 'u') {
					unsigned lo;
					j->p += 2;
					if (jp_hex4(j, &lo))
						return -1;
					cp = lo >= 0xdc00 && lo < 0xe000
						     ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
						     : '?';
				} else if (cp >= 0xd800 && cp < 0xe000) {
					cp = '?'; /* a lone surrogate */
				}
				k = utf8_put(b, cp);
				break;
			default:
				return jp_fail(j, "bad escape in a string");
			}
		}
		if (out && n + k < cap) {
			memcpy(out + n, b, k);
			n += k;
		}
	}
	if (out && cap)
		out[n] = 0;
	return 0;
}

static int jp_number(struct jp *j, const char *key, double *v)
{
	jp_ws(j);
	if (j->p >= j->end || !(*j->p == '-' || (*j->p >= '0' && *j->p <= '9')))
		return jp_fail(j, "\"%s\" is not a number", key);
	char *e;
	*v = strtod(j->p, &e);
	if (e == j->p || !isfinite(*v))
		return jp_fail(j, "\"%s\" is not a number", key);
	j->p = e;
	return 0;
}

typedef int (*jp_member_fn)(struct jp *j, const char *key, void *ctx);

static int jp_object(struct jp *j, jp_member_fn fn, void *ctx)
{
	if (jp_lit(j, '{'))
		return -1;
	if (jp_peek(j, '}'))
		return 0;
	for (;;) {
		char key[64];
		if (jp_string(j, key, sizeof key) || jp_lit(j, ':') || fn(j, key, ctx))
			return -1;
		if (jp_peek(j, ','))
			continue;
		if (jp_peek(j, '}'))
			return 0;
		return jp_fail(j, "expected ',' or '}'");
	}
}

static int jp_skip(struct jp *j, int depth);

static int skip_member(struct jp *j, const char *key, void *ctx)
{
	return jp_skip(j, *(const int *)ctx + 1);
}

static int jp_skip(struct jp *j, int depth)
{
	if (depth > 64)
		return jp_fail(j, "nesting too deep");
	jp_ws(j);
	if (j->p >= j->end)
		return jp_fail(j, "unexpected end of file");
	switch (*j->p) {
	case '"':
		return jp_string(j, NULL, 0);
	case '{':
		return jp_object(j, skip_member, &depth);
	case '[':
		j->p++;
		if (jp_peek(j, ']'))
			return 0;
		for (;;) {
			if (jp_skip(j, depth + 1))
				return -1;
			if (jp_peek(j, ','))
				continue;
			if (jp_peek(j, ']'))
				return 0;
			return jp_fail(j, "expected ',' or ']'");
		}
	case 't': case 'f': case 'n': {
		static const char *const lits[] = { "true", "false", "null" };
		for (int i = 0; i < 3; i++) {
			size_t l = strlen(lits[i]);
			if ((size_t)(j->end - j->p) >= l && !strncmp(j->p, lits[i], l)) {
				j->p += l;
				return 0;
			}
		}
		return jp_fail(j, "unexpected '%c'", *j->p);
	}
	default: {
		double v;
		return jp_number(j, "value", &v);
	}
	}
}

/* A string value into out, or any other value skipped (foreign traces put
 * other types where ours has strings; nothing charted depends on them). */
static int jp_string_or_skip(struct jp *j, char *out, size_t cap)
{
	jp_ws(j);
	if (j->p < j->end && *j->p == '"')
		return jp_string(j, out, cap);
	return jp_skip(j, 0);
}

static int jp_end(struct jp *j)
{
	jp_ws(j);
	return j->p < j->end ? jp_fail(j, "text after the JSON value") : 0;
}

/* ---- summary.json ---- */

static int read_summary(struct trace *t, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/summary.json", t->dir);
	struct trc_json *j = trc_json_read(path, err, errlen);
	if (!j)
		return -1;
	static const char *const keys[] = { "peak_cube_tflops", "hbm_bandwidth_gbps",
					     "l2_bandwidth_gbps", "ai_cores" };
	double cores = 0, *dst[] = { &t->peak_tflops, &t->hbm_gbps, &t->l2_gbps, &cores };
	int rc = -1;
	if (j->type != TRC_JSON_OBJ) {
		snprintf(err, errlen, "%s: not a JSON object", path);
		goto done;
	}
	for (unsigned i = 0; i < 4; i++)
		if (!trc_json_num(j, keys[i], dst[i])) {
			snprintf(err, errlen, "%s: \"%s\" is missing or not a number", path, keys[i]);
			goto done;
		}
	if (cores < 1 || cores > 65536 || cores != floor(cores)) {
		snprintf(err, errlen, "%s: \"ai_cores\" is %g, not a core count", path, cores);
		goto done;
	}
	if (!(t->peak_tflops > 0) || !(t->hbm_gbps > 0) || t->l2_gbps < 0) {
		snprintf(err, errlen, "%s: the roofs (peak_cube_tflops, hbm_bandwidth_gbps, "
				      "l2_bandwidth_gbps) must be positive", path);
		goto done;
	}
	t->cores = (unsigned)cores;
	const char *soc = trc_json_str(j, "soc"), *model = trc_json_str(j, "model");
	snprintf(t->soc, sizeof t->soc, "%s", soc ? soc : "");
	snprintf(t->model, sizeof t->model, "%s", model ? model : "");
	rc = 0;
done:
	trc_json_free(j);
	return rc;
}

/* ---- timeline.json ---- */

enum { E_PID = 1, E_TID = 2, E_TS = 4, E_DUR = 8 };

struct event {
	char name[128], ph[8], arg_name[32], op_type[32], task_type[32];
	double pid, tid, ts, dur;
	unsigned have;
};

static int args_member(struct jp *j, const char *key, void *ctx)
{
	struct event *e = ctx;
	if (!strcmp(key, "name"))
		return jp_string_or_skip(j, e->arg_name, sizeof e->arg_name);
	if (!strcmp(key, "OP Type"))
		return jp_string_or_skip(j, e->op_type, sizeof e->op_type);
	if (!strcmp(key, "Task Type"))
		return jp_string_or_skip(j, e->task_type, sizeof e->task_type);
	return jp_skip(j, 1);
}

static int event_member(struct jp *j, const char *key, void *ctx)
{
	struct event *e = ctx;
	static const char *const nums[] = { "pid", "tid", "ts", "dur" };
	double *dst[] = { &e->pid, &e->tid, &e->ts, &e->dur };
	if (!strcmp(key, "name"))
		return jp_string_or_skip(j, e->name, sizeof e->name);
	if (!strcmp(key, "ph"))
		return jp_string_or_skip(j, e->ph, sizeof e->ph);
	if (!strcmp(key, "args")) {
		jp_ws(j);
		return j->p < j->end && *j->p == '{' ? jp_object(j, args_member, e) : jp_skip(j, 0);
	}
	for (int i = 0; i < 4; i++)
		if (!strcmp(key, nums[i])) {
			jp_ws(j);
			/* Chrome allows string ids; those are no core of ours */
			if (j->p < j->end && *j->p == '"')
				return jp_skip(j, 0);
			e->have |= 1u << i;
			return jp_number(j, key, dst[i]);
		}
	return jp_skip(j, 0);
}

static int is_index(double v, double limit)
{
	return v >= 0 && v < limit && v == floor(v);
}

/* File an event: a pipe's busy span on an AI core (pid < ai_cores, tid =
 * pipe), a task of a stream (pid = ai_cores, tid = stream), a pipe's name;
 * anything else (the copy engines' threads, other metadata) is not charted. */
static int take_event(struct jp *j, struct trace *t, const struct event *e)
{
	if (!strcmp(e->ph, "M")) {
		int ids = (e->have & (E_PID | E_TID)) == (E_PID | E_TID);
		if (!strcmp(e->name, "thread_name") && ids && is_index(e->pid, t->cores) &&
		    is_index(e->tid, MAX_PIPES) &&
		    !t->pipe_name[(unsigned)e->tid][0])
			snprintf(t->pipe_name[(unsigned)e->tid], sizeof t->pipe_name[0], "%s",
				 e->arg_name);
		return 0;
	}
	if (strcmp(e->ph, "X") || (e->have & (E_PID | E_TID)) != (E_PID | E_TID))
		return 0;
	if ((e->have & (E_TS | E_DUR)) != (E_TS | E_DUR))
		return jp_fail(j, "a complete (\"X\") event without \"ts\" or \"dur\"");
	if (e->dur < 0)
		return jp_fail(j, "negative \"dur\"");
	if (is_index(e->pid, t->cores)) {
		if (!is_index(e->tid, MAX_PIPES))
			return jp_fail(j, "AI core %g: pipe (tid) %g is not one of 0..%d", e->pid,
				       e->tid, MAX_PIPES - 1);
		if (grow(&t->spans, &t->capspans, t->nspans, sizeof *t->spans))
			return jp_fail(j, "out of memory");
		t->spans[t->nspans++] = (struct span){ e->ts, e->ts + e->dur, (unsigned)e->pid,
						       (unsigned)e->tid };
	} else if (e->pid == t->cores) {
		if (!is_index(e->tid, 1 << 20))
			return jp_fail(j, "stream (tid) %g is not a stream id", e->tid);
		if (grow(&t->tasks, &t->captasks, t->ntasks, sizeof *t->tasks))
			return jp_fail(j, "out of memory");
		struct task *k = &t->tasks[t->ntasks++];
		snprintf(k->name, sizeof k->name, "%s", e->name);
		k->s = e->ts;
		k->e = e->ts + e->dur;
		k->stream = (unsigned)e->tid;
		k->copy = !strcmp(e->task_type, "MEMCPY_ASYNC");
		k->load = !strcmp(e->op_type, "MODEL_LOAD");
	}
	return 0;
}

static int jp_events(struct jp *j, struct trace *t)
{
	if (jp_lit(j, '['))
		return -1;
	if (jp_peek(j, ']'))
		return 0;
	for (;;) {
		struct event e;
		memset(&e, 0, sizeof e);
		if (jp_object(j, event_member, &e) || take_event(j, t, &e))
			return -1;
		if (jp_peek(j, ','))
			continue;
		if (jp_peek(j, ']'))
			return 0;
		return jp_fail(j, "expected ',' or ']' after an event");
	}
}

/* Chrome's object form, {"traceEvents": [...]}, as well as ours (the array) */
static int trace_member(struct jp *j, const char *key, void *ctx)
{
	return !strcmp(key, "traceEvents") ? jp_events(j, ctx) : jp_skip(j, 0);
}

static int read_timeline(struct trace *t, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/timeline.json", t->dir);
	size_t len;
	char *b = slurp(path, &len, err, errlen);
	if (!b)
		return -1;
	struct jp j = { b, b + len, path, 1, err, errlen };
	jp_ws(&j);
	int rc = (j.p < j.end && *j.p == '{' ? jp_object(&j, trace_member, t) : jp_events(&j, t)) ||
			 jp_end(&j)
		 ? -1 : 0;
	free(b);
	for (unsigned p = 0; p < MAX_PIPES; p++) {
		if (t->pipe_name[p][0])
			continue;
		if (p < sizeof default_pipe_name / sizeof *default_pipe_name)
			snprintf(t->pipe_name[p], sizeof t->pipe_name[p], "%s", default_pipe_name[p]);
		else
			snprintf(t->pipe_name[p], sizeof t->pipe_name[p], "pipe %u", p);
	}
	return rc;
}

/* ---- op_summary.csv ---- */

enum { C_NAME, C_TYPE, C_DUR, C_PIPE0, C_CUBE = C_PIPE0 + OP_PIPES, C_VEC, C_MEM, C_GMR, C_GMW,
       NCOLS };

struct row {
	const char *name;
	double v[NCOLS];
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static int read_ops(struct trace *t, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/op_summary.csv", t->dir);
	struct trc_csv csv;
	if (trc_csv_read(path, &csv, err, errlen))
		return -1;
	char colname[NCOLS][32] = { "Op Name", "Task Type", "Task Duration(us)" };
	for (int p = 0; p < OP_PIPES; p++)
		snprintf(colname[C_PIPE0 + p], sizeof colname[0], "%s_time(us)", op_pipe_col[p]);
	strcpy(colname[C_CUBE], "cube_fops");
	strcpy(colname[C_VEC], "vector_fops");
	strcpy(colname[C_MEM], "main_mem(B)");
	strcpy(colname[C_GMR], "gm_read(B)");
	strcpy(colname[C_GMW], "gm_write(B)");
	int col[NCOLS], rc = -1;
	struct row *rows = malloc((csv.nrows + 1) * sizeof *rows);
	size_t nrows = 0;
	if (!rows) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto done;
	}
	for (int k = 0; k < NCOLS; k++) {
		const char *const names[] = { colname[k], NULL };
		if ((col[k] = trc_csv_col(&csv, names)) < 0) {
			snprintf(err, errlen, "%s: no column '%s' in the header", path, colname[k]);
			goto done;
		}
	}
	for (size_t i = 0; i < csv.nrows; i++) {
		if (strcmp(trc_csv_cell(&csv, i, col[C_TYPE]), "AI_CORE"))
			continue; /* copies: no pipes, no FLOPs */
		struct row *r = &rows[nrows++];
		r->name = trc_csv_cell(&csv, i, col[C_NAME]);
		for (int k = C_DUR; k < NCOLS; k++) {
			if (trc_csv_num(&csv, i, col[k], &r->v[k], err, errlen))
				goto done;
			if (r->v[k] < 0) {
				snprintf(err, errlen, "%s:%u: column '%s': %g is negative", path,
					 csv.line[i], colname[k], r->v[k]);
				goto done;
			}
		}
	}
	qsort(rows, nrows, sizeof *rows, by_name);
	t->ops = calloc(nrows + 1, sizeof *t->ops);
	if (!t->ops) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto done;
	}
	for (size_t i = 0; i < nrows; i++) {
		if (!i || strcmp(rows[i].name, rows[i - 1].name))
			snprintf(t->ops[t->nops++].name, sizeof t->ops[0].name, "%s", rows[i].name);
		struct op *o = &t->ops[t->nops - 1];
		const double *v = rows[i].v;
		o->rows++;
		o->dur += v[C_DUR];
		for (int p = 0; p < OP_PIPES; p++)
			o->pipe[p] += v[C_PIPE0 + p];
		o->cube += v[C_CUBE];
		o->vec += v[C_VEC];
		o->mem += v[C_MEM];
		o->gm += v[C_GMR] + v[C_GMW];
	}
	rc = 0;
done:
	free(rows);
	trc_csv_free(&csv);
	return rc;
}

/* ---- output helpers ---- */

/* A gnuplot single-quoted string: only the quote is special (doubled);
 * control characters would end the command, so they become spaces. */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('\'', f);
}

/* A string field of a data file: gnuplot reads "..." without escapes, so a
 * quote inside becomes an apostrophe.  Long names keep their tail, where op
 * names say what they are (".../layer4.1/conv1/Conv"). */
static void dat_str(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);
	fputc('"', f);
	if (n > max) {
		s += n - max + 3;
		while ((*s & 0xc0) == 0x80) /* not inside a UTF-8 character */
			s++;
		fputs("...", f);
	}
	for (; *s; s++)
		fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
	fputc('"', f);
}

/* How many characters of s dat_str(s, max) shows (UTF-8 continuation
 * bytes are no characters), to estimate a label's width. */
static size_t text_chars(const char *s, size_t max)
{
	size_t n = 0;
	for (; *s; s++)
		n += (*s & 0xc0) != 0x80;
	return n < max ? n : max;
}

/* A comment line's text: a newline would end the comment. */
static void comment_str(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

static FILE *open_out(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *dir, const char *name, char *err, size_t errlen)
{
	int bad = ferror(f);
	if (fclose(f) || bad) {
		snprintf(err, errlen, "%s/%s: write failed", dir, name);
		return -1;
	}
	return 0;
}

/* What every script starts with: how to rerun it, and the chart's title. */
static void gp_begin(FILE *f, const struct trace *t, const char *base, const char *what)
{
	fprintf(f, "# %s.gp: %s\n", base, what);
	fprintf(f, "# Drawn from the trace directory ");
	comment_str(f, t->dir);
	fprintf(f, " by davinci-sim's trc_plot (docs/plots.md).\n"
		   "# Restyle and redraw: cd to this directory, then `gnuplot %s.gp`; it reads\n"
		   "# %s.dat and writes %s.png and %s.svg.\n",
		base, base, base, base);
	fprintf(f, "set encoding utf8\n");
}

/* The PNG's terminal, set before the plot command (gnuplot's default
 * terminal may be a window); W and H size both images. */
static void gp_png(FILE *f, const char *base, unsigned w, unsigned h)
{
	fprintf(f, "W = %u\nH = %u\nset terminal pngcairo size W,H font 'sans,10' noenhanced\n"
		   "set output '%s.png'\n", w, h, base);
}

/* The SVG from the plot command just written (replot repeats it). */
static void gp_svg(FILE *f, const char *base)
{
	fprintf(f, "set terminal svg size W,H font 'sans,10' noenhanced background rgb 'white'\n"
		   "set output '%s.svg'\nreplot\nunset output\n", base);
}

/* A chart with nothing to show still draws (gnuplot fails on no data). */
static void gp_nothing(FILE *f, const char *why)
{
	fprintf(f, "unset key\nunset tics\nunset border\nset xrange [0:1]\nset yrange [0:1]\n"
		   "set label 1 ");
	gp_str(f, why);
	fprintf(f, " at graph 0.5, graph 0.5 center\nplot 2 notitle\n");
}

static void title_prefix(char *b, size_t n, const struct trace *t)
{
	snprintf(b, n, "%s%s%s", t->model[0] ? t->model : "trace", t->soc[0] ? " on " : "",
		 t->soc);
}

/* ---- chart 1: timeline ---- */

static int by_lane(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->pipe != y->pipe)
		return x->pipe < y->pipe ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int by_start(const void *a, const void *b)
{
	const struct task *x = *(const struct task *const *)a, *y = *(const struct task *const *)b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* longest first; of equals, the earliest */
static int by_duration_start(const void *a, const void *b)
{
	const struct task *x = *(const struct task *const *)a, *y = *(const struct task *const *)b;
	double dx = x->e - x->s, dy = y->e - y->s;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int by_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* A block of the data file (gnuplot's `index`) and how the script plots it. */
enum blk { BLK_PIPE, BLK_KERNELS, BLK_COPIES, BLK_LABELS };

struct gantt {
	int empty;		     /* nothing to draw */
	double t0, t1, margin, px;   /* the window, the x range's margin, a pixel (µs) */
	int per_core;		     /* rows per (core, pipe), else per pipe */
	unsigned nrows, nstreams, npipes, nbusy;
	unsigned *streams;	     /* the stream ids, sorted */
	int pipe_row[MAX_PIPES];     /* position among the used pipes, or -1 */
	int *core_row;		     /* per core: position among the busy cores, or -1 */
	struct span *v;		     /* the spans in the window, by lane */
	size_t nv;
	const struct task **tasks;   /* the tasks in the window */
	size_t ntasks;
	double row_px, level_dy;     /* a row's height; a label row's, in rows */
	int nlevels;		     /* label rows used */
	enum blk blk[MAX_PIPES + 3]; /* the blocks written, in order */
	unsigned blk_pipe[MAX_PIPES + 3];
	unsigned nblk;
};

/* y of a row counted from the top (the streams first), so row 0 is drawn
 * highest. */
static double gantt_y(const struct gantt *g, unsigned row)
{
	return (double)(g->nrows - 1 - row);
}

static unsigned stream_row(const struct gantt *g, unsigned stream)
{
	unsigned lo = 0, hi = g->nstreams;
	while (lo + 1 < hi) {
		unsigned mid = (lo + hi) / 2;
		if (g->streams[mid] <= stream)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static unsigned lane_row(const struct gantt *g, unsigned core, unsigned pipe)
{
	unsigned p = (unsigned)g->pipe_row[pipe];
	return g->nstreams + (g->per_core ? (unsigned)g->core_row[core] * g->npipes + p : p);
}

/* A box of the chart: times from the window's start. */
static void box(FILE *f, const struct gantt *g, double s, double e, double ylo, double yhi)
{
	fprintf(f, "%.4f %.4f %.3f %.3f\n", s - g->t0, e - g->t0, ylo, yhi);
}

/* The window, the rows, and the spans and tasks in them.  -1 when out of
 * memory. */
static int gantt_layout(struct gantt *g, const struct trace *t, const struct trc_plot_opts *o)
{
	/* The window: the tasks but the weights' load (a one-off that would
	 * squash the rest to a sliver), else the spans. */
	g->t0 = INFINITY;
	g->t1 = -INFINITY;
	for (size_t i = 0; i < t->ntasks; i++)
		if (!t->tasks[i].load) {
			g->t0 = fmin(g->t0, t->tasks[i].s);
			g->t1 = fmax(g->t1, t->tasks[i].e);
		}
	if (g->t0 > g->t1)
		for (size_t i = 0; i < t->nspans; i++) {
			g->t0 = fmin(g->t0, t->spans[i].s);
			g->t1 = fmax(g->t1, t->spans[i].e);
		}
	g->empty = g->t0 > g->t1;
	if (g->empty)
		g->t0 = g->t1 = 0;
	if (g->t1 - g->t0 < 1e-3)
		g->t1 = g->t0 + 1e-3;
	g->margin = (g->t1 - g->t0) * 0.01;
	g->px = (g->t1 - g->t0 + 2 * g->margin) / GANTT_PLOT_PX;

	g->core_row = malloc(t->cores * sizeof *g->core_row);
	g->streams = malloc((t->ntasks + 1) * sizeof *g->streams);
	g->v = malloc((t->nspans + 1) * sizeof *g->v);
	g->tasks = malloc((t->ntasks + 1) * sizeof *g->tasks);
	if (!g->core_row || !g->streams || !g->v || !g->tasks)
		return -1;
	/* which cores and pipes were busy in the window */
	for (size_t i = 0; !g->empty && i < t->nspans; i++)
		if (t->spans[i].e > g->t0 && t->spans[i].s < g->t1)
			g->v[g->nv++] = t->spans[i];
	qsort(g->v, g->nv, sizeof *g->v, by_lane);
	for (unsigned c = 0; c < t->cores; c++)
		g->core_row[c] = -1;
	for (unsigned p = 0; p < MAX_PIPES; p++)
		g->pipe_row[p] = -1;
	for (size_t i = 0; i < g->nv; i++) {
		g->core_row[g->v[i].core] = 0;
		g->pipe_row[g->v[i].pipe] = 0;
	}
	for (unsigned c = 0; c < t->cores; c++)
		if (!g->core_row[c])
			g->core_row[c] = (int)g->nbusy++;
	for (unsigned p = 0; p < MAX_PIPES; p++)
		if (!g->pipe_row[p])
			g->pipe_row[p] = (int)g->npipes++;
	unsigned max_rows = o->max_core_rows ? o->max_core_rows : DEFAULT_CORE_ROWS;
	g->per_core = o->rows == TRC_GANTT_CORES ||
		      (o->rows == TRC_GANTT_AUTO && g->nbusy <= max_rows);
	/* the streams with tasks in the window */
	for (size_t i = 0; !g->empty && i < t->ntasks; i++)
		if (!t->tasks[i].load && t->tasks[i].e >= g->t0 && t->tasks[i].s <= g->t1) {
			g->tasks[g->ntasks++] = &t->tasks[i];
			g->streams[g->nstreams++] = t->tasks[i].stream;
		}
	qsort(g->streams, g->nstreams, sizeof *g->streams, by_uint);
	unsigned ns = 0;
	for (unsigned i = 0; i < g->nstreams; i++)
		if (!i || g->streams[i] != g->streams[i - 1])
			g->streams[ns++] = g->streams[i];
	g->nstreams = ns;
	g->nrows = g->nstreams + (g->per_core ? g->nbusy * g->npipes : g->npipes);
	/* rows are taller per pipe, where their boxes' heights are fractions */
	g->row_px = g->per_core ? 18 : 44;
	g->level_dy = 15 / g->row_px;
	return 0;
}

/* The busy spans of one pipe: per core, merged where closer than a pixel
 * (what the PNG would show anyway, and it bounds the SVG's size); or the
 * fraction of all cores busy in pixel-wide bins. */
static void gantt_pipe_block(FILE *f, const struct trace *t, const struct gantt *g,
			     const struct span *v, size_t n, double *bins, unsigned nbins)
{
	if (g->per_core) {
		size_t i = 0;
		while (i < n) {
			double s = fmax(v[i].s, g->t0), e = fmin(v[i].e, g->t1);
			unsigned core = v[i].core;
			for (i++; i < n && v[i].core == core && v[i].s - e < g->px; i++)
				e = fmax(e, fmin(v[i].e, g->t1));
			double y = gantt_y(g, lane_row(g, core, v[0].pipe));
			box(f, g, s, e, y - 0.4, y + 0.4);
		}
		return;
	}
	double bw = (g->t1 - g->t0) / nbins;
	memset(bins, 0, nbins * sizeof *bins);
	for (size_t i = 0; i < n; i++) {
		double s = fmax(v[i].s, g->t0), e = fmin(v[i].e, g->t1);
		unsigned b0 = (unsigned)fmin((s - g->t0) / bw, nbins - 1);
		unsigned b1 = (unsigned)fmin((e - g->t0) / bw, nbins - 1);
		for (unsigned b = b0; b <= b1; b++) {
			double lo = g->t0 + b * bw, hi = lo + bw;
			bins[b] += fmax(0, fmin(e, hi) - fmax(s, lo));
		}
	}
	double y = gantt_y(g, lane_row(g, 0, v[0].pipe));
	for (unsigned b = 0; b < nbins;) {
		double frac = fmin(1, bins[b] / (bw * t->cores));
		unsigned e = b + 1;
		/* runs of one level (cores all busy, say) are one box */
		while (e < nbins && fabs(fmin(1, bins[e] / (bw * t->cores)) - frac) < 1e-6)
			e++;
		if (frac > 1e-6)
			box(f, g, g->t0 + b * bw, g->t0 + e * bw, y - 0.4, y - 0.4 + 0.8 * frac);
		b = e;
	}
}

static void block_head(FILE *f, struct gantt *g, enum blk kind, unsigned pipe, const char *what)
{
	fprintf(f, "%s# index %u: %s\n", g->nblk ? "\n\n" : "", g->nblk, what);
	g->blk_pipe[g->nblk] = pipe;
	g->blk[g->nblk++] = kind;
}

/* Labels, in plot pixels: a label's box, and the dot its leader line drops
 * from (the leader runs straight down from the label's row to the task). */
struct glabel {
	const struct task *k;
	int level;	    /* label row, 0 just above the streams */
	double dot, x0, x1; /* px: the leader's x, the text's extent */
};

/* Whether a label of this level and extent, with its leader at dot, keeps
 * clear of the labels placed: no two texts in one row touch, no leader
 * crosses a text (a leader passes the rows below its own label). */
static int label_clear(const struct glabel *placed, size_t n, int level, double dot, double x0,
		       double x1)
{
	const double gap = 6, lgap = 3; /* px between texts; between a text and a leader */
	for (size_t i = 0; i < n; i++) {
		const struct glabel *p = &placed[i];
		if (p->level == level && x0 < p->x1 + gap && p->x0 < x1 + gap)
			return 0;
		if (p->level < level && dot > p->x0 - lgap && dot < p->x1 + lgap)
			return 0; /* the new leader through p's text */
		if (p->level > level && p->dot > x0 - lgap && p->dot < x1 + lgap)
			return 0; /* p's leader through the new text */
	}
	return 1;
}

static int by_label_start(const void *a, const void *b)
{
	const struct glabel *x = a, *y = b;
	return x->k->s < y->k->s ? -1 : x->k->s > y->k->s;
}

static int by_label_start_desc(const void *a, const void *b)
{
	return by_label_start(b, a);
}

/* Labels: the top_n ops by their longest task, each op labelled once (at
 * that task; the earliest of equals), in rows above the streams.  From
 * the right, each label takes the lowest row right of its dot, or else the
 * lowest left of it, where label_clear holds: clustered labels climb a
 * staircase to the left, whose leaders pass beside the texts below.  A label with no
 * such place is dropped (the data file says which), so no two labels
 * collide and no leader line crosses a label.  Text widths are estimated
 * from the font. */
static void gantt_labels(FILE *f, struct gantt *g, unsigned top_n)
{
	qsort(g->tasks, g->ntasks, sizeof *g->tasks, by_duration_start);
	struct glabel *lab = malloc((top_n + 1) * sizeof *lab);
	const struct task **dropped = malloc((top_n + 1) * sizeof *dropped);
	size_t nl = 0, nd = 0, ncand = 0;
	double x_lo = g->t0 - g->margin;
	/* the candidates, in lab[] for now */
	for (size_t i = 0; lab && dropped && i < g->ntasks && ncand < top_n; i++) {
		const struct task *k = g->tasks[i];
		size_t j = 0;
		while (j < i && strcmp(g->tasks[j]->name, k->name))
			j++;
		if (j == i) /* else this op has its label, at a longer task */
			lab[ncand++] = (struct glabel){ k, 0, (k->s - x_lo) / g->px, 0, 0 };
	}
	if (lab)
		qsort(lab, ncand, sizeof *lab, by_label_start_desc);
	for (size_t i = 0; i < ncand; i++) {
		struct glabel c = lab[i];
		char text[200];
		snprintf(text, sizeof text, "%s (%.1f µs)", c.k->name, c.k->e - c.k->s);
		double w = LABEL_CHAR_PX * (double)text_chars(text, LABEL_MAX);
		int done = 0;
		for (int left = 0; left < 2 && !done; left++)
			for (int l = 0; l < LABEL_LEVELS && !done; l++) {
				double x0 = left ? c.dot - LABEL_DOT_PX - w : c.dot + LABEL_DOT_PX;
				if (x0 < 0 || x0 + w > GANTT_PLOT_PX ||
				    !label_clear(lab, nl, l, c.dot, x0, x0 + w))
					continue;
				lab[nl++] = (struct glabel){ c.k, l, c.dot, x0, x0 + w };
				done = 1;
				g->nlevels = l >= g->nlevels ? l + 1 : g->nlevels;
			}
		if (!done)
			dropped[nd++] = c.k;
	}
	if (nl) {
		qsort(lab, nl, sizeof *lab, by_label_start);
		char what[96];
		snprintf(what, sizeof what, "the %zu longest ops' labels, at their longest task", nl);
		block_head(f, g, BLK_LABELS, 0, what);
		if (nd) {
			fprintf(f, "# not labelled (no room clear of the other labels):");
			for (size_t i = 0; i < nd; i++) {
				fputc(' ', f);
				comment_str(f, dropped[i]->name);
			}
			fputc('\n', f);
		}
		fprintf(f, "# start_us y_label y_task x_text \"name (duration)\"\n");
	}
	for (size_t i = 0; i < nl; i++) {
		const struct task *k = lab[i].k;
		char text[200];
		snprintf(text, sizeof text, "%s (%.1f µs)", k->name, k->e - k->s);
		fprintf(f, "%.4f %.3f %.3f %.4f ", k->s - g->t0,
			g->nrows - 0.2 + lab[i].level * g->level_dy,
			gantt_y(g, stream_row(g, k->stream)) + 0.4,
			x_lo + lab[i].x0 * g->px - g->t0);
		dat_str(f, text, LABEL_MAX);
		fputc('\n', f);
	}
	free(lab);
	free(dropped);
}

static void gantt_write_dat(FILE *f, const struct trace *t, struct gantt *g, unsigned top_n)
{
	fprintf(f, "# timeline.dat: the Gantt chart's boxes, from timeline.json of ");
	comment_str(f, t->dir);
	fprintf(f, "\n# time in µs since the start of the traced execution (its first task "
		   "but the weights' load);\n# y is the row (timeline.gp's ytics name them)\n");
	if (g->empty)
		return;
	fprintf(f, "# window %.3f .. %.3f µs of device time (as in op_summary.csv): every task "
		   "but the weights' load\n", g->t0, g->t1);
	if (g->per_core)
		fprintf(f, "# pipe blocks: busy spans per AI core, merged where less than %.4f µs "
			   "(one pixel) apart\n", g->px);
	else
		fprintf(f, "# pipe blocks: per %.4f µs bin, box height = the fraction of all %u AI "
			   "cores that kept the pipe busy\n", (g->t1 - g->t0) / GANTT_PLOT_PX,
			t->cores);
	fprintf(f, "# blocks (gnuplot index) are separated by two blank lines\n");
	double bins[GANTT_PLOT_PX];
	for (size_t i = 0; i < g->nv;) {
		size_t j = i;
		while (j < g->nv && g->v[j].pipe == g->v[i].pipe)
			j++;
		char what[64];
		snprintf(what, sizeof what, "pipe %s", t->pipe_name[g->v[i].pipe]);
		block_head(f, g, BLK_PIPE, g->v[i].pipe, what);
		fprintf(f, "# start_us end_us y_low y_high\n");
		gantt_pipe_block(f, t, g, g->v + i, j - i, bins, GANTT_PLOT_PX);
		i = j;
	}
	/* the tasks, by stream and start, kernels alternating in shade */
	qsort(g->tasks, g->ntasks, sizeof *g->tasks, by_start);
	for (int copies = 0; copies < 2; copies++) {
		unsigned n = 0, parity = 0;
		for (size_t i = 0; i < g->ntasks; i++) {
			const struct task *k = g->tasks[i];
			if (k->copy != copies)
				continue;
			if (!n++) {
				block_head(f, g, copies ? BLK_COPIES : BLK_KERNELS, 0,
					   copies ? "copy tasks" : "kernel tasks");
				fprintf(f, "# start_us end_us y_low y_high alternate\n");
			}
			double y = gantt_y(g, stream_row(g, k->stream));
			fprintf(f, "%.4f %.4f %.3f %.3f %u\n", fmax(k->s, g->t0) - g->t0,
				fmin(k->e, g->t1) - g->t0, y - 0.4, y + 0.4, parity ^= 1);
		}
	}
	gantt_labels(f, g, top_n);
}

/* The name of row r, for the y axis. */
static void gantt_row_name(const struct gantt *g, const struct trace *t, unsigned r, char *b,
			   size_t n)
{
	if (r < g->nstreams) {
		snprintf(b, n, "stream %u", g->streams[r]);
		return;
	}
	unsigned k = r - g->nstreams, core = 0, pos = k, pipe = 0;
	if (g->per_core) {
		pos = k % g->npipes;
		while (g->core_row[core] != (int)(k / g->npipes))
			core++;
	}
	while (g->pipe_row[pipe] != (int)pos)
		pipe++;
	if (g->per_core)
		snprintf(b, n, "core %u %s", core, t->pipe_name[pipe]);
	else
		snprintf(b, n, "%s (all cores)", t->pipe_name[pipe]);
}

static void hrule(FILE *f, double y, const char *color)
{
	fprintf(f, "set arrow from graph 0, first %g to graph 1, first %g nohead lc rgb '%s' back\n",
		y, y, color);
}

static void gantt_write_gp(FILE *f, const struct trace *t, const struct gantt *g)
{
	gp_begin(f, t, "timeline", "the Gantt chart of the pipes and the streams' tasks");
	unsigned height = (unsigned)(150 + g->row_px * (g->nrows + 0.5) + 15 * g->nlevels);
	height = height < 320 ? 320 : height > 8000 ? 8000 : height;
	if (g->empty) {
		gp_png(f, "timeline", GANTT_WIDTH, height);
		gp_nothing(f, "timeline.json has no tasks or pipe spans");
		gp_svg(f, "timeline");
		return;
	}
	char title[512], pre[256];
	title_prefix(pre, sizeof pre, t);
	if (g->per_core)
		snprintf(title, sizeof title, "%s: pipe busy spans of the %u busy AI core%s (of %u), "
			 "tasks per stream", pre, g->nbusy, g->nbusy == 1 ? "" : "s", t->cores);
	else
		snprintf(title, sizeof title, "%s: fraction of all %u AI cores keeping each pipe "
			 "busy (%u busy), tasks per stream", pre, t->cores, g->nbusy);
	fprintf(f, "set title ");
	gp_str(f, title);
	fprintf(f, "\nset xlabel 'time (µs since the start of the traced execution, at %.3f µs of "
		   "device time)'\n", g->t0);
	fprintf(f, "set xrange [%.4f:%.4f]\n", -g->margin, g->t1 - g->t0 + g->margin);
	/* fixed margins: the pixel the spans were merged at, and the labels'
	 * room, were computed for this plot area */
	fprintf(f, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n",
		(GANTT_WIDTH - GANTT_PLOT_PX - 24.0) / GANTT_WIDTH,
		(GANTT_WIDTH - 24.0) / GANTT_WIDTH);
	fprintf(f, "set yrange [-0.7:%.2f]\n",
		g->nrows - 0.4 + (g->nlevels ? g->nlevels * g->level_dy + 0.2 : 0));
	fprintf(f, "set grid xtics lc rgb '#e0e0e0'\nset key outside below horizontal height 1\n"
		   "set style fill solid 1.0 noborder\nset ytics scale 0 font ',9' (");
	for (unsigned r = 0; r < g->nrows; r++) {
		char name[96];
		gantt_row_name(g, t, r, name, sizeof name);
		fprintf(f, "%s", r ? ", " : "");
		gp_str(f, name);
		fprintf(f, " %g", gantt_y(g, r));
	}
	fprintf(f, ")\n");
	/* rules under the streams and between cores; per pipe, its 0 and 100 % */
	for (unsigned k = 0; k < (g->per_core ? g->nbusy : 1); k++)
		if (g->nstreams || k)
			hrule(f, gantt_y(g, g->nstreams + k * g->npipes) + 0.5, "#b0b0b0");
	for (unsigned r = g->nstreams; !g->per_core && r < g->nrows; r++) {
		hrule(f, gantt_y(g, r) - 0.4, "#e4e4e4");
		hrule(f, gantt_y(g, r) + 0.4, "#e4e4e4");
	}
	gp_png(f, "timeline", GANTT_WIDTH, height);
	fprintf(f, "box = \"using (($1+$2)/2):(($3+$4)/2):1:2:3:4\"\nplot ");
	for (unsigned k = 0; k < g->nblk; k++) {
		fprintf(f, "%s'timeline.dat' index %u ", k ? ", \\\n     " : "", k);
		switch (g->blk[k]) {
		case BLK_PIPE:
			fprintf(f, "@box with boxxyerror lc rgb '%s' title ",
				pipe_color[g->blk_pipe[k] % NCOLORS]);
			gp_str(f, t->pipe_name[g->blk_pipe[k]]);
			break;
		case BLK_KERNELS:
			fprintf(f, "@box:($5 > 0 ? 0x4a78c0 : 0x2c4f8a) with boxxyerror "
				   "lc rgb variable fs solid 1.0 border lc rgb 'white' "
				   "title 'kernel tasks'");
			break;
		case BLK_COPIES:
			fprintf(f, "@box with boxxyerror lc rgb '#ff7f0e' fs solid 1.0 border "
				   "lc rgb 'white' title 'copies'");
			break;
		case BLK_LABELS:
			fprintf(f, "using 1:2:(0):($3-$2) with vectors nohead dt 3 "
				   "lc rgb '#909090' notitle, \\\n     'timeline.dat' index %u "
				   "using 1:2 with points pt 7 ps 0.4 lc rgb 'black' notitle, \\\n"
				   "     'timeline.dat' index %u using 4:2:5 with labels left "
				   "font ',8' notitle", k, k);
			break;
		}
	}
	fprintf(f, "\n");
	gp_svg(f, "timeline");
}

static int chart_timeline(const char *out, const struct trace *t, const struct trc_plot_opts *o,
			  unsigned top_n, char *err, size_t errlen)
{
	struct gantt g;
	memset(&g, 0, sizeof g);
	FILE *f = NULL;
	int rc = -1;
	if (gantt_layout(&g, t, o)) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (!(f = open_out(out, "timeline.dat", err, errlen)))
		goto done;
	gantt_write_dat(f, t, &g, top_n);
	int bad = close_out(f, out, "timeline.dat", err, errlen);
	f = NULL;
	if (bad || !(f = open_out(out, "timeline.gp", err, errlen)))
		goto done;
	gantt_write_gp(f, t, &g);
	rc = close_out(f, out, "timeline.gp", err, errlen);
	f = NULL;
done:
	if (f)
		fclose(f);
	free(g.core_row);
	free(g.streams);
	free(g.v);
	free(g.tasks);
	return rc;
}

/* ---- chart 2: per-op pipe time ---- */

static int by_mean_desc(const void *a, const void *b)
{
	const struct op *x = *(const struct op *const *)a, *y = *(const struct op *const *)b;
	double dx = x->dur / x->rows, dy = y->dur / y->rows;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The ops by mean duration, longest first (an array of pointers). */
static const struct op **ops_by_mean(const struct trace *t)
{
	const struct op **v = malloc((t->nops + 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < t->nops; i++)
		v[i] = &t->ops[i];
	qsort(v, t->nops, sizeof *v, by_mean_desc);
	return v;
}

static int chart_ops(const char *out, const struct trace *t, unsigned top_n, char *err,
		     size_t errlen)
{
	const struct op **v = ops_by_mean(t);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = t->nops < top_n ? t->nops : top_n;
	FILE *f = open_out(out, "op_breakdown.dat", err, errlen);
	int rc = -1;
	if (!f)
		goto done;
	fprintf(f, "# op_breakdown.dat: the top %zu of %zu AI-core ops by mean duration, from "
		   "op_summary.csv of ", n, t->nops);
	comment_str(f, t->dir);
	fprintf(f, "\n# means over the op's rows (executions); pipe times are busy µs per core "
		   "used (<pipe>_time(us)), and overlap\n# rank duration_us");
	for (int p = 0; p < OP_PIPES; p++)
		fprintf(f, " %s_us", op_pipe_col[p]);
	fprintf(f, " rows \"name\"\n");
	for (size_t i = 0; i < n; i++) {
		const struct op *o = v[i];
		fprintf(f, "%zu %.4f", i + 1, o->dur / o->rows);
		for (int p = 0; p < OP_PIPES; p++)
			fprintf(f, " %.4f", o->pipe[p] / o->rows);
		fprintf(f, " %u ", o->rows);
		dat_str(f, o->name, 40);
		fputc('\n', f);
	}
	if (close_out(f, out, "op_breakdown.dat", err, errlen))
		goto done;
	if (!(f = open_out(out, "op_breakdown.gp", err, errlen)))
		goto done;
	gp_begin(f, t, "op_breakdown", "each top op's duration and its pipes' busy time");
	unsigned w = 300 + 90 * (unsigned)n;
	w = w < 900 ? 900 : w > 6000 ? 6000 : w;
	if (!n) {
		gp_png(f, "op_breakdown", w, 700);
		gp_nothing(f, "op_summary.csv has no AI_CORE rows");
		gp_svg(f, "op_breakdown");
		rc = close_out(f, out, "op_breakdown.gp", err, errlen);
		goto done;
	}
	char pre[256], title[512];
	title_prefix(pre, sizeof pre, t);
	snprintf(title, sizeof title, "%s: the top %zu of %zu AI-core ops by mean duration", pre,
		 n, t->nops);
	/* The pipes run at the same time, so stacking their busy times would
	 * overstate the op; side by side, the tallest bar against the grey one
	 * shows the bound and how much of the op it covers. */
	fprintf(f, "set title ");
	gp_str(f, title);
	fprintf(f, " . \"\\n\" . 'grey: the op''s duration; coloured: each pipe''s busy time "
		   "per core (pipes overlap in time, so they are side by side, not stacked)'\n");
	fprintf(f, "set ylabel 'µs (mean over the op''s executions)'\n"
		   "set xrange [0.4:%zu.6]\nset yrange [0:*]\n"
		   "set xtics rotate by 30 right font ',9'\nset grid ytics lc rgb '#e0e0e0'\n"
		   "set key outside top right vertical\nset bmargin 10\n", n);
	/* the first name, rotated, reaches left of the axis */
	fprintf(f, "set lmargin %.0f\n", fmax(10, 0.62 * (double)text_chars(v[0]->name, 40)));
	fprintf(f, "array pipe_name[%d] = [", OP_PIPES);
	for (int p = 0; p < OP_PIPES; p++) {
		fprintf(f, "%s", p ? ", " : "");
		gp_str(f, op_pipe_label[p]);
	}
	fprintf(f, "]\narray pipe_color[%d] = [", OP_PIPES);
	for (int p = 0; p < OP_PIPES; p++)
		fprintf(f, "%s'%s'", p ? ", " : "", pipe_color[p]);
	fprintf(f, "]\n");
	gp_png(f, "op_breakdown", w, 700);
	fprintf(f, "bw = 0.84 # width of an op's group of bars\n"
		   "plot 'op_breakdown.dat' using 1:2:(bw):xtic(%d) with boxes fs solid 0.3 "
		   "noborder lc rgb '#707070' title 'duration', \\\n"
		   "     for [p=1:%d] 'op_breakdown.dat' using ($1 - bw/2 + (p - 0.5) * bw/%d):"
		   "(column(2 + p)):(bw/%d * 0.85) with boxes fs solid 1.0 noborder "
		   "lc rgb pipe_color[p] title pipe_name[p]\n",
		OP_PIPES + 4, OP_PIPES, OP_PIPES, OP_PIPES);
	gp_svg(f, "op_breakdown");
	rc = close_out(f, out, "op_breakdown.gp", err, errlen);
done:
	free(v);
	return rc;
}

/* ---- chart 3: roofline ---- */

/* An op's main-memory bytes, or its GM traffic when the trace counted none
 * (main_mem is 0 for data the L2 served entirely). */
static double op_bytes(const struct op *o)
{
	return o->mem > 0 ? o->mem : o->gm;
}

static int op_placeable(const struct op *o)
{
	return o->cube + o->vec > 0 && op_bytes(o) > 0 && o->dur > 0;
}

#define ROOF_W 1420
#define ROOF_H 800
#define ROOF_PLOT_X 90.0  /* the plot area of roofline.png (margins fixed), px */
#define ROOF_PLOT_Y 70.0  /* from the top */
#define ROOF_PLOT_W 950.0
#define ROOF_PLOT_H 610.0
#define ROOF_KEY_LINE 14.0 /* a line of the labelled ops' key, font size 8 */
#define ROOF_NUM_PX 7.2	   /* a digit's width at font size 9, at most */
#define ROOF_NUM_H 12.0	   /* and its height */
#define ROOF_SAME_PX 6.0   /* labelled points this close share one number */

/* A box in plot pixels (y up), to keep numbers off each other and the
 * points. */
struct lbox {
	double x0, x1, y0, y1;
};

static int lbox_clear(const struct lbox *b, const struct lbox *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b->x0 < v[i].x1 && v[i].x0 < b->x1 && b->y0 < v[i].y1 && v[i].y0 < b->y1)
			return 0;
	return 1;
}

/* A point's marker radius in px for gnuplot's `ps` (pt 5 and 7 are 2 ps
 * wide in the svg terminal's units, 3.75 px each). */
static double roof_radius(double ps)
{
	return 3.75 * ps + 1;
}

static double roof_ps(const struct op *o, double maxdur)
{
	return 0.6 + 2.4 * sqrt(o->dur / o->rows / maxdur);
}

/* Place a number w px wide beside the point (px, py) of radius r: the
 * first of right, left, above, below and the diagonals, near then further,
 * inside the plot, that clears the numbers placed and the points (and,
 * failing that, the numbers only).  Returns 0 with the box in *out, or -1. */
static int place_number(double px, double py, double r, double w, const struct lbox *marks,
			size_t nmarks, const struct lbox *nums, size_t nnums, struct lbox *out)
{
	static const double dir[8][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 },
					  { 1, 1 }, { -1, 1 }, { 1, -1 }, { -1, -1 } };
	for (int strict = 1; strict >= 0; strict--)
		for (int ring = 0; ring < 3; ring++)
			for (int d = 0; d < 8; d++) {
				double gap = r + 2 + 8 * ring;
				double cx = px + dir[d][0] * (gap + w / 2);
				double cy = py + dir[d][1] * (gap + ROOF_NUM_H / 2);
				struct lbox b = { cx - w / 2, cx + w / 2, cy - ROOF_NUM_H / 2,
						  cy + ROOF_NUM_H / 2 };
				if (b.x0 < 0 || b.x1 > ROOF_PLOT_W || b.y0 < 0 || b.y1 > ROOF_PLOT_H)
					continue;
				if (!lbox_clear(&b, nums, nnums) ||
				    (strict && !lbox_clear(&b, marks, nmarks)))
					continue;
				*out = b;
				return 0;
			}
	return -1;
}

/* The range of a log axis fitted to [lo, hi] with a margin of f each way. */
static void log_range(double lo, double hi, double f, double *a, double *b)
{
	*a = lo / f;
	*b = hi * f;
}

static int chart_roofline(const char *out, const struct trace *t, unsigned top_n, char *err,
			  size_t errlen)
{
	const struct op **v = ops_by_mean(t);
	size_t cap = (size_t)t->nops + 1;
	struct lbox *marks = malloc(cap * sizeof *marks), *nums = malloc(cap * sizeof *nums);
	unsigned *group = malloc(cap * sizeof *group);
	size_t *lead = malloc(cap * sizeof *lead); /* per group: its first op's index in v */
	FILE *f = NULL;
	int rc = -1;
	if (!v || !marks || !nums || !group || !lead) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	size_t placed = 0;
	double imin = INFINITY, imax = 0, amin = INFINITY, amax = 0, maxdur = 0;
	for (size_t i = 0; i < t->nops; i++) {
		const struct op *o = v[i];
		if (!op_placeable(o))
			continue;
		double in = (o->cube + o->vec) / op_bytes(o), ach = (o->cube + o->vec) / o->dur / 1e6;
		placed++;
		imin = fmin(imin, in);
		imax = fmax(imax, in);
		amin = fmin(amin, ach);
		amax = fmax(amax, ach);
		maxdur = fmax(maxdur, o->dur / o->rows);
	}
	/* Ranges fitted to the points: x also takes in the ridge, so the roof's
	 * knee shows, and y the peak, so the flat roof does. */
	double ridge = t->peak_tflops * 1e3 / t->hbm_gbps;
	double x0 = 1, x1 = 10, y0 = 1, y1 = 10;
	if (placed) {
		log_range(fmin(imin, ridge), fmax(imax, ridge), 2, &x0, &x1);
		log_range(amin, fmax(amax, t->peak_tflops), 1.6, &y0, &y1);
	}
#define ROOF_PX(in) ((log10(in) - log10(x0)) / (log10(x1) - log10(x0)) * ROOF_PLOT_W)
#define ROOF_PY(a) ((log10(a) - log10(y0)) / (log10(y1) - log10(y0)) * ROOF_PLOT_H)

	/* The labelled ops (the top_n placeable by mean duration, as in the
	 * other charts): ops at one point (same shape, same time) share a
	 * number, which sits beside the point; the key names each op. */
	size_t nmarks = 0, nnums = 0, nlab = 0, ngroups = 0;
	for (size_t i = 0; i < t->nops; i++) {
		const struct op *o = v[i];
		if (!op_placeable(o))
			continue;
		double in = (o->cube + o->vec) / op_bytes(o), ach = (o->cube + o->vec) / o->dur / 1e6;
		double px = ROOF_PX(in), py = ROOF_PY(ach), r = roof_radius(roof_ps(o, maxdur));
		marks[nmarks++] = (struct lbox){ px - r, px + r, py - r, py + r };
	}
	unsigned dropped = 0;
	size_t nlab_end = 0; /* v[] past the last labelled op */
	for (size_t i = 0; i < t->nops && nlab < top_n; i++) {
		const struct op *o = v[i];
		group[i] = 0;
		if (!op_placeable(o))
			continue;
		nlab++;
		nlab_end = i + 1;
		double px = ROOF_PX((o->cube + o->vec) / op_bytes(o));
		double py = ROOF_PY((o->cube + o->vec) / o->dur / 1e6);
		size_t g = 0;
		for (; g < ngroups; g++) {
			const struct op *l = v[lead[g]];
			if (fabs(ROOF_PX((l->cube + l->vec) / op_bytes(l)) - px) < ROOF_SAME_PX &&
			    fabs(ROOF_PY((l->cube + l->vec) / l->dur / 1e6) - py) < ROOF_SAME_PX)
				break;
		}
		if (g == ngroups) {
			char num[16];
			int digits = snprintf(num, sizeof num, "%zu", g + 1);
			if (place_number(px, py, roof_radius(roof_ps(o, maxdur)),
					 ROOF_NUM_PX * digits, marks, nmarks, nums, nnums,
					 &nums[nnums])) {
				group[i] = 0; /* no room for its number: left out of the key */
				dropped++;
				continue;
			}
			nnums++;
			lead[ngroups++] = i;
		}
		group[i] = (unsigned)g + 1;
	}

	if (!(f = open_out(out, "roofline.dat", err, errlen)))
		goto done;
	fprintf(f, "# roofline.dat: every AI-core op of op_summary.csv of ");
	comment_str(f, t->dir);
	fprintf(f, "\n# intensity = (cube_fops + vector_fops) / main_mem(B) (gm_read + gm_write "
		   "when main_mem is 0), summed over the op's rows;\n# achieved = those FLOPs / the "
		   "summed Task Duration; mean_us = mean duration\n"
		   "# roofs (summary.json): peak_cube_tflops %g, hbm_bandwidth_gbps %g, "
		   "l2_bandwidth_gbps %g\n", t->peak_tflops, t->hbm_gbps, t->l2_gbps);
	/* index 0: cube ops, 1: vector ops, 2: the labelled ops with their
	 * number (ops at one point share it), 3: the numbers' places */
	int blk_of[4] = { -1, -1, -1, -1 }, nblk = 0;
	for (int kind = 0; kind < 3; kind++) {
		size_t k = 0;
		for (size_t i = 0; i < t->nops; i++) {
			const struct op *o = v[i];
			if (!op_placeable(o) || (kind < 2 && (o->cube >= o->vec) != (kind == 0)))
				continue;
			if (kind == 2 && (i >= nlab_end || !group[i]))
				continue;
			double in = (o->cube + o->vec) / op_bytes(o);
			double ach = (o->cube + o->vec) / o->dur / 1e6;
			if (!k++) {
				fprintf(f, "%s# index %d: %s\n# intensity_flop_per_byte "
					   "achieved_tflops mean_us \"name\"%s\n",
					nblk ? "\n\n" : "", nblk,
					kind == 0 ? "cube ops (cube_fops >= vector_fops)"
					: kind == 1 ? "vector ops"
						    : "the labelled ops, by mean duration",
					kind == 2 ? " number" : "");
				blk_of[kind] = nblk++;
			}
			fprintf(f, "%.6g %.6g %.4f ", in, ach, o->dur / o->rows);
			dat_str(f, o->name, 40);
			if (kind == 2)
				fprintf(f, " %u", group[i]);
			fputc('\n', f);
		}
	}
	if (nnums) {
		fprintf(f, "%s# index %d: where the numbers are drawn (centre)\n"
			   "# intensity_flop_per_byte achieved_tflops number\n", nblk ? "\n\n" : "",
			nblk);
		blk_of[3] = nblk++;
		for (size_t g = 0; g < nnums; g++)
			fprintf(f, "%.6g %.6g %zu\n",
				pow(10, log10(x0) + (nums[g].x0 + nums[g].x1) / 2 / ROOF_PLOT_W *
							    (log10(x1) - log10(x0))),
				pow(10, log10(y0) + (nums[g].y0 + nums[g].y1) / 2 / ROOF_PLOT_H *
							    (log10(y1) - log10(y0))),
				g + 1);
	}
	if (dropped)
		fprintf(f, "# %u of the top %u not numbered: no room beside their points\n", dropped,
			top_n);
	size_t unplaced = t->nops - placed;
	if (unplaced) {
		fprintf(f, "# not placed (no FLOPs, no bytes or no time):");
		for (size_t i = 0; i < t->nops; i++)
			if (!op_placeable(v[i])) {
				fputc(' ', f);
				comment_str(f, v[i]->name);
			}
		fputc('\n', f);
	}
	int bad = close_out(f, out, "roofline.dat", err, errlen);
	f = NULL;
	if (bad || !(f = open_out(out, "roofline.gp", err, errlen)))
		goto done;
	gp_begin(f, t, "roofline", "the ops under the main-memory and L2 roofs");
	if (!placed) {
		gp_png(f, "roofline", ROOF_W, ROOF_H);
		gp_nothing(f, "no AI-core op in op_summary.csv has both FLOPs and bytes");
		gp_svg(f, "roofline");
		rc = close_out(f, out, "roofline.gp", err, errlen);
		f = NULL;
		goto done;
	}
	char pre[256], title[512];
	title_prefix(pre, sizeof pre, t);
	snprintf(title, sizeof title, "%s: roofline of %zu AI-core op%s", pre, placed,
		 placed > 1 ? "s" : "");
	fprintf(f, "set title ");
	gp_str(f, title);
	snprintf(title, sizeof title, "point area ~ mean duration; the top %zu by mean duration "
				      "numbered (key on the right)", nlab);
	fprintf(f, " . \"\\n\" . ");
	gp_str(f, title);
	if (unplaced)
		fprintf(f, " . '; not shown: %zu op%s without FLOPs or bytes (see roofline.dat)'",
			unplaced, unplaced > 1 ? "s" : "");
	fprintf(f, "\nset xlabel 'arithmetic intensity (FLOP per byte of main-memory traffic)'\n"
		   "set ylabel 'achieved TFLOP/s (the op''s FLOPs / its duration)'\n"
		   "set logscale xy\nset format x '%%g'\nset format y '%%g'\n"
		   "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n"
		   "set grid xtics ytics mxtics mytics lc rgb '#e8e8e8'\n"
		   "set key outside below horizontal\nset samples 2000\n",
		x0, x1, y0, y1);
	/* fixed margins: the numbers were placed for this plot area; taller
	 * for a key longer than it */
	double h = fmax(ROOF_H, ROOF_PLOT_Y + 8 + ROOF_KEY_LINE * (double)(nlab + 1) + 20);
	fprintf(f, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
		   "set tmargin at screen %.4f\nset bmargin at screen %.4f\n",
		ROOF_PLOT_X / ROOF_W, (ROOF_PLOT_X + ROOF_PLOT_W) / ROOF_W, 1 - ROOF_PLOT_Y / h,
		1 - (ROOF_PLOT_Y + ROOF_PLOT_H) / h);
	/* the key of the numbers, right of the plot: an op per line, by number */
	double kx = (ROOF_PLOT_X + ROOF_PLOT_W + 20) / ROOF_W;
	unsigned line = 0;
	fprintf(f, "set label %u 'numbered ops (mean µs):' at screen %.4f, screen %.4f left "
		   "font ',8'\n", ++line, kx, 1 - (ROOF_PLOT_Y + 8) / h);
	for (size_t i = 0, gi = 1; gi <= ngroups; i = i + 1 < nlab_end ? i + 1 : (gi++, 0)) {
		const struct op *o = v[i];
		if (group[i] != gi)
			continue;
		char text[320], name[64];
		size_t n = strlen(o->name);
		/* the tail says what the op is (dat_str's rule, 40 characters) */
		const char *tail = o->name + (n > 40 ? n - 37 : 0);
		while ((*tail & 0xc0) == 0x80)
			tail++;
		snprintf(name, sizeof name, "%s%.40s", n > 40 ? "..." : "", tail);
		snprintf(text, sizeof text, "%2u  %s (%.1f)", group[i], name, o->dur / o->rows);
		fprintf(f, "set label %u ", ++line);
		gp_str(f, text);
		fprintf(f, " at screen %.4f, screen %.4f left font ',8'\n", kx,
			1 - (ROOF_PLOT_Y + 8 + ROOF_KEY_LINE * (line - 1)) / h);
	}
	fprintf(f, "peak = %g # TFLOP/s, the cube peak of all AI cores (summary.json)\n"
		   "hbm = %g # GB/s, main memory\nl2 = %g # GB/s, the L2\n"
		   "maxdur = %g # µs, the longest op's mean duration (point size)\n"
		   "roof(x, bw) = x * bw / 1000.0 < peak ? x * bw / 1000.0 : peak\n",
		t->peak_tflops, t->hbm_gbps, t->l2_gbps, maxdur);
	gp_png(f, "roofline", ROOF_W, (unsigned)h);
	fprintf(f, "plot roof(x, hbm) lw 2 lc rgb 'black' title sprintf('main memory %%g GB/s, cube "
		   "peak %%g TFLOP/s', hbm, peak)");
	if (t->l2_gbps > 0)
		fprintf(f, ", \\\n     roof(x, l2) lw 1.5 dt 2 lc rgb '#606060' "
			   "title sprintf('L2 %%g GB/s', l2)");
	static const char *const kind_style[2] = { "pt 7 lc rgb '#d62728' title 'cube ops'",
						   "pt 5 lc rgb '#2ca02c' title 'vector ops'" };
	for (int kind = 0; kind < 2; kind++)
		if (blk_of[kind] >= 0)
			fprintf(f, ", \\\n     'roofline.dat' index %d using 1:2:(0.6 + 2.4 * "
				   "sqrt($3 / maxdur)) with points ps variable %s",
				blk_of[kind], kind_style[kind]);
	if (blk_of[3] >= 0)
		fprintf(f, ", \\\n     'roofline.dat' index %d using 1:2:(sprintf('%%d', $3)) "
			   "with labels center font ',9' notitle", blk_of[3]);
	fprintf(f, "\n");
	gp_svg(f, "roofline");
	rc = close_out(f, out, "roofline.gp", err, errlen);
	f = NULL;
#undef ROOF_PX
#undef ROOF_PY
done:
	if (f)
		fclose(f);
	free(v);
	free(marks);
	free(nums);
	free(group);
	free(lead);
	return rc;
}

/* ---- running gnuplot ---- */

/* gnuplot's absolute path from PATH (absolute: the child changes directory
 * before exec), or -1. */
static int find_gnuplot(char *out)
{
	const char *path = getenv("PATH");
	if (!path)
		return -1;
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char cwd[PATH_MAX] = "";
		/* an empty or relative entry is relative to the current directory */
		if ((!n || *p != '/') && !getcwd(cwd, sizeof cwd))
			cwd[0] = 0;
		if ((size_t)snprintf(out, PATH_MAX, "%s%s%.*s/gnuplot", cwd, cwd[0] ? "/" : "",
				     (int)n, p) < PATH_MAX) {
			struct stat st;
			if (!stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
				return 0;
		}
		if (!e)
			return -1;
		p = e + 1;
	}
}

/* Run `gnuplot script` in dir (so the script's relative paths hold).  No
 * shell: odd directory names stay arguments.  gnuplot's output is kept
 * off the caller's stdout and stderr; its last line names the error. */
static int run_gnuplot(const char *gp, const char *dir, const char *script, char *err,
		       size_t errlen)
{
	int fd[2];
	if (pipe(fd)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	/* the caller's other children must not inherit the pipe */
	fcntl(fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(fd[1], F_SETFD, FD_CLOEXEC);
	char *const argv[] = { (char *)"gnuplot", (char *)script, NULL };
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		/* only async-signal-safe calls between fork and exec */
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		if (chdir(dir)) {
			static const char m[] = "trc_plot: cannot enter the output directory\n";
			ssize_t w = write(2, m, sizeof m - 1);
			(void)w;
			_exit(126);
		}
		execv(gp, argv);
		_exit(127);
	}
	close(fd[1]);
	char tail[1024];
	size_t nt = 0;
	for (;;) {
		char b[4096];
		ssize_t r = read(fd[0], b, sizeof b);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		/* keep the last bytes: gnuplot's error is at the end */
		for (ssize_t i = 0; i < r; i++) {
			if (nt == sizeof tail) {
				memmove(tail, tail + sizeof tail / 2, sizeof tail / 2);
				nt = sizeof tail / 2;
			}
			tail[nt++] = b[i];
		}
	}
	close(fd[0]);
	int status;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (w < 0) {
		snprintf(err, errlen, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	while (nt && (tail[nt - 1] == '\n' || tail[nt - 1] == ' '))
		nt--;
	size_t start = nt;
	while (start && tail[start - 1] != '\n')
		start--;
	tail[nt < sizeof tail ? nt : sizeof tail - 1] = 0;
	if (WIFEXITED(status))
		snprintf(err, errlen, "%s/%s: gnuplot exited with status %d: %s", dir, script,
			 WEXITSTATUS(status), tail + start);
	else
		snprintf(err, errlen, "%s/%s: gnuplot killed by signal %d", dir, script,
			 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return -1;
}

static int mkdir_p(const char *dir, char *err, size_t errlen)
{
	char p[PATH_MAX];
	if ((size_t)snprintf(p, sizeof p, "%s", dir) >= sizeof p) {
		snprintf(err, errlen, "%.64s...: path too long", dir);
		return -1;
	}
	for (char *s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, 0777) && errno != EEXIST) {
			snprintf(err, errlen, "%s: %s", p, strerror(errno));
			return -1;
		}
		if (!c)
			break;
		*s = c;
	}
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return -1;
	}
	return 0;
}

static const char *const charts[] = { "timeline", "op_breakdown", "roofline" };

int trc_plot_with(const char *trace_dir, const char *out_dir, const struct trc_plot_opts *opts,
		  char *err, size_t errlen)
{
	struct trc_plot_opts o = { 0 };
	if (opts)
		o = *opts;
	unsigned top_n = o.top_n ? o.top_n : DEFAULT_TOP;
	char out[PATH_MAX];
	if ((size_t)snprintf(out, sizeof out, out_dir ? "%s" : "%s/plots",
			     out_dir ? out_dir : trace_dir) >= sizeof out - 32) {
		snprintf(err, errlen, "%.64s...: path too long", out_dir ? out_dir : trace_dir);
		return -1;
	}
	struct trace t;
	memset(&t, 0, sizeof t);
	t.dir = trace_dir;
	int rc = -1;
	if (read_summary(&t, err, errlen) || read_ops(&t, err, errlen) ||
	    read_timeline(&t, err, errlen) || mkdir_p(out, err, errlen) ||
	    chart_timeline(out, &t, &o, top_n, err, errlen) ||
	    chart_ops(out, &t, top_n, err, errlen) || chart_roofline(out, &t, top_n, err, errlen))
		goto done;
	char gp[PATH_MAX];
	if (find_gnuplot(gp)) {
		snprintf(err, errlen, "gnuplot not found: wrote the data and scripts to %s; "
				      "run gnuplot on the .gp files", out);
		rc = 1;
		goto done;
	}
	for (size_t c = 0; c < sizeof charts / sizeof *charts; c++) {
		static const char *const ext[] = { "png", "svg" };
		char img[PATH_MAX + 64], script[64];
		/* stale images from an earlier run must not pass for new ones */
		for (int k = 0; k < 2; k++) {
			snprintf(img, sizeof img, "%s/%s.%s", out, charts[c], ext[k]);
			if (unlink(img) && errno != ENOENT) {
				snprintf(err, errlen, "%s: %s", img, strerror(errno));
				goto done;
			}
		}
		snprintf(script, sizeof script, "%s.gp", charts[c]);
		if (run_gnuplot(gp, out, script, err, errlen)) {
			/* no half-drawn image is left to pass for a chart */
			for (int k = 0; k < 2; k++) {
				snprintf(img, sizeof img, "%s/%s.%s", out, charts[c], ext[k]);
				unlink(img);
			}
			goto done;
		}
		for (int k = 0; k < 2; k++) {
			struct stat st;
			snprintf(img, sizeof img, "%s/%s.%s", out, charts[c], ext[k]);
			if (stat(img, &st) || st.st_size == 0) {
				snprintf(err, errlen, "%s: gnuplot wrote no image from %s", img,
					 script);
				goto done;
			}
		}
	}
	rc = 0;
done:
	free(t.spans);
	free(t.tasks);
	free(t.ops);
	return rc;
}

int trc_plot(const char *trace_dir, const char *out_dir, unsigned top_n, char *err,
	     size_t errlen)
{
	struct trc_plot_opts o = { .top_n = top_n };
	return trc_plot_with(trace_dir, out_dir, &o, err, errlen);
}
