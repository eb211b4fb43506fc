/* plot.c: the charts of a trace directory (see plot.h and docs/plots.md).
 *
 * Only the trace files are read, not the simulator's structures, so that a
 * trace from another run, or edited by hand, plots the same; every parse
 * error names the file and line.  Each chart is a data file plus a
 * gnuplot script that reads it, so users can restyle a chart without this
 * code; gnuplot then runs once per script, in the output directory.  This
 * file reads the trace, holds the output helpers (plot_int.h), draws the op
 * breakdown and runs gnuplot; the timeline and the roofline have files of
 * their own. */
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

#include "plot_int.h"
#include "trace_read.h"

#define DEFAULT_TOP 10

/* The pipes as op_summary.csv names them, in the order of the timeline's
 * tids (the ISA's pipe order), and as the charts show them. */
static const char *const op_pipe_col[OP_PIPES] = { "scalar", "mte1", "mte2", "mte3", "mac",
						   "vec" };
static const char *const op_pipe_label[OP_PIPES] = { "S (scalar)", "MTE1", "MTE2", "MTE3",
						     "M (cube)", "V (vector)" };
/* for a timeline without thread_name metadata */
static const char *const default_pipe_name[] = { "S", "MTE1", "MTE2", "MTE3", "M", "V" };
const char *const pl_pipe_color[PL_NCOLORS] = { "#8c564b", "#17becf", "#1f77b4", "#9467bd",
						"#d62728", "#2ca02c", "#7f7f7f", "#bcbd22" };

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
void pl_gp_str(FILE *f, const char *s)
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
void pl_dat_str(FILE *f, const char *s, size_t max)
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

/* How many characters of s pl_dat_str(s, max) shows (UTF-8 continuation
 * bytes are no characters), to estimate a label's width. */
size_t pl_text_chars(const char *s, size_t max)
{
	size_t n = 0;
	for (; *s; s++)
		n += (*s & 0xc0) != 0x80;
	return n < max ? n : max;
}

/* A comment line's text: a newline would end the comment. */
void pl_comment_str(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

FILE *pl_open_out(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

int pl_close_out(FILE *f, const char *dir, const char *name, char *err, size_t errlen)
{
	int bad = ferror(f);
	if (fclose(f) || bad) {
		snprintf(err, errlen, "%s/%s: write failed", dir, name);
		return -1;
	}
	return 0;
}

/* What every script starts with: how to rerun it, and the chart's title. */
void pl_gp_begin(FILE *f, const struct trace *t, const char *base, const char *what)
{
	fprintf(f, "# %s.gp: %s\n", base, what);
	fprintf(f, "# Drawn from the trace directory ");
	pl_comment_str(f, t->dir);
	fprintf(f, " by davinci-sim's trc_plot (docs/plots.md).\n"
		   "# Restyle and redraw: cd to this directory, then `gnuplot %s.gp`; it reads\n"
		   "# %s.dat and writes %s.png and %s.svg.\n",
		base, base, base, base);
	fprintf(f, "set encoding utf8\n");
}

/* The PNG's terminal, set before the plot command (gnuplot's default
 * terminal may be a window); W and H size both images. */
void pl_gp_png(FILE *f, const char *base, unsigned w, unsigned h)
{
	fprintf(f, "W = %u\nH = %u\nset terminal pngcairo size W,H font 'sans,10' noenhanced\n"
		   "set output '%s.png'\n", w, h, base);
}

/* The SVG from the plot command just written (replot repeats it). */
void pl_gp_svg(FILE *f, const char *base)
{
	fprintf(f, "set terminal svg size W,H font 'sans,10' noenhanced background rgb 'white'\n"
		   "set output '%s.svg'\nreplot\nunset output\n", base);
}

/* A chart with nothing to show still draws (gnuplot fails on no data). */
void pl_gp_nothing(FILE *f, const char *why)
{
	fprintf(f, "unset key\nunset tics\nunset border\nset xrange [0:1]\nset yrange [0:1]\n"
		   "set label 1 ");
	pl_gp_str(f, why);
	fprintf(f, " at graph 0.5, graph 0.5 center\nplot 2 notitle\n");
}

void pl_title_prefix(char *b, size_t n, const struct trace *t)
{
	snprintf(b, n, "%s%s%s", t->model[0] ? t->model : "trace", t->soc[0] ? " on " : "",
		 t->soc);
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
const struct op **pl_ops_by_mean(const struct trace *t)
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
	const struct op **v = pl_ops_by_mean(t);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = t->nops < top_n ? t->nops : top_n;
	FILE *f = pl_open_out(out, "op_breakdown.dat", err, errlen);
	int rc = -1;
	if (!f)
		goto done;
	fprintf(f, "# op_breakdown.dat: the top %zu of %zu AI-core ops by mean duration, from "
		   "op_summary.csv of ", n, t->nops);
	pl_comment_str(f, t->dir);
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
		pl_dat_str(f, o->name, 40);
		fputc('\n', f);
	}
	if (pl_close_out(f, out, "op_breakdown.dat", err, errlen))
		goto done;
	if (!(f = pl_open_out(out, "op_breakdown.gp", err, errlen)))
		goto done;
	pl_gp_begin(f, t, "op_breakdown", "each top op's duration and its pipes' busy time");
	unsigned w = 300 + 90 * (unsigned)n;
	w = w < 900 ? 900 : w > 6000 ? 6000 : w;
	if (!n) {
		pl_gp_png(f, "op_breakdown", w, 700);
		pl_gp_nothing(f, "op_summary.csv has no AI_CORE rows");
		pl_gp_svg(f, "op_breakdown");
		rc = pl_close_out(f, out, "op_breakdown.gp", err, errlen);
		goto done;
	}
	char pre[256], title[512];
	pl_title_prefix(pre, sizeof pre, t);
	snprintf(title, sizeof title, "%s: the top %zu of %zu AI-core ops by mean duration", pre,
		 n, t->nops);
	/* The pipes run at the same time, so stacking their busy times would
	 * overstate the op; side by side, the tallest bar against the grey one
	 * shows the bound and how much of the op it covers. */
	fprintf(f, "set title ");
	pl_gp_str(f, title);
	fprintf(f, " . \"\\n\" . 'grey: the op''s duration; coloured: each pipe''s busy time "
		   "per core (pipes overlap in time, so they are side by side, not stacked)'\n");
	fprintf(f, "set ylabel 'µs (mean over the op''s executions)'\n"
		   "set xrange [0.4:%zu.6]\nset yrange [0:*]\n"
		   "set xtics rotate by 30 right font ',9'\nset grid ytics lc rgb '#e0e0e0'\n"
		   "set key outside top right vertical\nset bmargin 10\n", n);
	/* the first name, rotated, reaches left of the axis */
	fprintf(f, "set lmargin %.0f\n", fmax(10, 0.62 * (double)pl_text_chars(v[0]->name, 40)));
	fprintf(f, "array pipe_name[%d] = [", OP_PIPES);
	for (int p = 0; p < OP_PIPES; p++) {
		fprintf(f, "%s", p ? ", " : "");
		pl_gp_str(f, op_pipe_label[p]);
	}
	fprintf(f, "]\narray pipe_color[%d] = [", OP_PIPES);
	for (int p = 0; p < OP_PIPES; p++)
		fprintf(f, "%s'%s'", p ? ", " : "", pl_pipe_color[p]);
	fprintf(f, "]\n");
	pl_gp_png(f, "op_breakdown", w, 700);
	fprintf(f, "bw = 0.84 # width of an op's group of bars\n"
		   "plot 'op_breakdown.dat' using 1:2:(bw):xtic(%d) with boxes fs solid 0.3 "
		   "noborder lc rgb '#707070' title 'duration', \\\n"
		   "     for [p=1:%d] 'op_breakdown.dat' using ($1 - bw/2 + (p - 0.5) * bw/%d):"
		   "(column(2 + p)):(bw/%d * 0.85) with boxes fs solid 1.0 noborder "
		   "lc rgb pipe_color[p] title pipe_name[p]\n",
		OP_PIPES + 4, OP_PIPES, OP_PIPES, OP_PIPES);
	pl_gp_svg(f, "op_breakdown");
	rc = pl_close_out(f, out, "op_breakdown.gp", err, errlen);
done:
	free(v);
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
	    pl_chart_timeline(out, &t, &o, top_n, err, errlen) ||
	    chart_ops(out, &t, top_n, err, errlen) || pl_chart_roofline(out, &t, top_n, err, errlen))
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
