/* trace_read.c: the CSV and JSON readers of trace_read.h.  Both read the
 * whole file into memory: trace files are at most a few MB, and a single
 * buffer keeps the line bookkeeping for messages simple. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_read.h"

/* The file as a NUL-terminated buffer; *n its length. */
static char *slurp(const char *path, size_t *n, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		len += fread(buf + len, 1, cap - len - 1, f);
		if (len < cap - 1)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int bad = buf && ferror(f);
	fclose(f);
	if (!buf || bad) {
		snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	*n = len;
	return buf;
}

/* ---- CSV ---------------------------------------------------------------- */

/* Growable arrays of the cells and row lines, while parsing. */
struct csv_acc {
	char **cell;
	size_t ncell, capcell;
	unsigned *line;
	size_t nrec, caprec;
};

static int push_cell(struct csv_acc *a, char *c)
{
	if (a->ncell == a->capcell) {
		size_t cap = a->capcell ? a->capcell * 2 : 256;
		char **nc = realloc(a->cell, cap * sizeof *nc);
		if (!nc)
			return -1;
		a->cell = nc;
		a->capcell = cap;
	}
	a->cell[a->ncell++] = c;
	return 0;
}

static int push_rec(struct csv_acc *a, unsigned line)
{
	if (a->nrec == a->caprec) {
		size_t cap = a->caprec ? a->caprec * 2 : 64;
		unsigned *nl = realloc(a->line, cap * sizeof *nl);
		if (!nl)
			return -1;
		a->line = nl;
		a->caprec = cap;
	}
	a->line[a->nrec++] = line;
	return 0;
}

/* A line ends at LF, or CRLF, or a CR that ends the file. */
static int at_eol(const char *b, size_t i, size_t n)
{
	return b[i] == '\n' || (b[i] == '\r' && (i + 1 == n || b[i + 1] == '\n'));
}

int trc_csv_read(const char *path, struct trc_csv *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	size_t n;
	char *buf = slurp(path, &n, err, errlen);
	if (!buf)
		return -1;
	struct csv_acc a = { 0 };
	/* unescaped cells never outgrow their source; each adds one NUL, and
	 * there are at most n + 1 of them */
	char *text = malloc(2 * n + 2), *w = text;
	t->path = strdup(path);
	size_t i = 0, width = 0;
	unsigned line = 1;
	if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3))
		i = 3;
	if (!text || !t->path)
		goto oom;
	while (i < n) {
		unsigned rec_line = line;
		size_t first = a.ncell;
		int quoted_any = 0;
		for (;;) {
			char *field = w;
			if (buf[i] == '"') {
				unsigned qline = line;
				quoted_any = 1;
				for (i++;; i++) {
					if (i >= n) {
						snprintf(err, errlen, "%s:%u: unterminated quoted field "
							 "(no closing quote before the end of the "
							 "file)", path, qline);
						goto fail;
					}
					if (buf[i] == '"') {
						if (i + 1 < n && buf[i + 1] == '"') {
							*w++ = '"';
							i++;
							continue;
						}
						i++;
						break;
					}
					line += buf[i] == '\n';
					*w++ = buf[i];
				}
				if (i < n && buf[i] != ',' && !at_eol(buf, i, n)) {
					snprintf(err, errlen, "%s:%u: text after a closing quote", path,
						 line);
					goto fail;
				}
			} else {
				for (; i < n && buf[i] != ',' && !at_eol(buf, i, n); i++) {
					if (buf[i] == '"') {
						snprintf(err, errlen, "%s:%u: a quote inside an unquoted "
							 "field (quote the whole field)", path, line);
						goto fail;
					}
					*w++ = buf[i];
				}
			}
			*w++ = 0;
			if (push_cell(&a, field))
				goto oom;
			if (i < n && buf[i] == ',') {
				i++;
				continue;
			}
			/* end of the record: the line end, or the end of the file */
			if (i < n && buf[i] == '\r')
				i++;
			if (i < n && buf[i] == '\n') {
				i++;
				line++;
			}
			break;
		}
		size_t got = a.ncell - first;
		if (got == 1 && !quoted_any && !a.cell[first][0]) {
			a.ncell = first; /* a blank line */
			continue;
		}
		if (a.nrec == 0) {
			width = got;
		} else if (got != width) {
			snprintf(err, errlen, "%s:%u: %zu fields, but the header has %zu", path,
				 rec_line, got, width);
			goto fail;
		}
		if (push_rec(&a, rec_line))
			goto oom;
	}
	if (a.nrec == 0) {
		snprintf(err, errlen, "%s:1: empty file (no header line)", path);
		goto fail;
	}
	/* header names: surrounding blanks are not part of the name */
	for (size_t k = 0; k < width; k++) {
		char *h = a.cell[k];
		while (*h == ' ' || *h == '\t')
			h++;
		size_t l = strlen(h);
		while (l && (h[l - 1] == ' ' || h[l - 1] == '\t'))
			h[--l] = 0;
		a.cell[k] = h;
	}
	free(buf);
	t->ncols = width;
	t->nrows = a.nrec - 1;
	t->header = a.cell;
	t->cell = a.cell + width;
	t->line = a.line;
	memmove(t->line, t->line + 1, t->nrows * sizeof *t->line);
	t->text = text;
	return 0;
oom:
	snprintf(err, errlen, "%s: out of memory", path);
fail:
	free(buf);
	free(text);
	free(a.cell);
	free(a.line);
	free(t->path);
	memset(t, 0, sizeof *t);
	return -1;
}

void trc_csv_free(struct trc_csv *t)
{
	free(t->path);
	free(t->header); /* the cells follow the header in one array */
	free(t->line);
	free(t->text);
	memset(t, 0, sizeof *t);
}

int trc_csv_col(const struct trc_csv *t, const char *const *names)
{
	for (; *names; names++)
		for (size_t k = 0; k < t->ncols; k++)
			if (!strcmp(t->header[k], *names))
				return (int)k;
	return -1;
}

const char *trc_csv_cell(const struct trc_csv *t, size_t row, int col)
{
	return col < 0 || row >= t->nrows ? "" : t->cell[row * t->ncols + (size_t)col];
}

int trc_csv_num(const struct trc_csv *t, size_t row, int col, double *v, char *err,
		size_t errlen)
{
	const char *s = trc_csv_cell(t, row, col);
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	if (end == s || *end || !isfinite(x) || errno == ERANGE) {
		snprintf(err, errlen, "%s:%u: column '%s': '%s' is not a number", t->path,
			 row < t->nrows ? t->line[row] : 0, col >= 0 ? t->header[col] : "?", s);
		return -1;
	}
	*v = x;
	return 0;
}

/* ---- JSON --------------------------------------------------------------- */

/* Nesting deeper than this is refused rather than risking the C stack:
 * summary.json nests three levels. */
#define JSON_MAX_DEPTH 64

struct jparse {
	const char *s;
	size_t pos;
	char *err;
	size_t errlen;
	int failed;
};

static void jfail(struct jparse *p, const char *what)
{
	if (p->failed)
		return;
	p->failed = 1;
	unsigned line = 1, col = 1;
	for (size_t i = 0; i < p->pos && p->s[i]; i++) {
		if (p->s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(p->err, p->errlen, "%u:%u: %s", line, col, what);
}

static void jws(struct jparse *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
	       p->s[p->pos] == '\r')
		p->pos++;
}

static void json_free_in(struct trc_json *j)
{
	for (size_t i = 0; i < j->n; i++) {
		json_free_in(&j->item[i]);
		if (j->key)
			free(j->key[i]);
	}
	free(j->item);
	free(j->key);
	free(j->str);
	memset(j, 0, sizeof *j);
}

static int hex4(const char *s, unsigned *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
		if (d > 15)
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

static char *jstring(struct jparse *p)
{
	p->pos++; /* the opening quote */
	size_t start = p->pos, len = 0;
	/* the decoded string is never longer than its source */
	while (p->s[start + len] && p->s[start + len] != '"')
		len += p->s[start + len] == '\\' && p->s[start + len + 1] ? 2 : 1;
	char *out = malloc(len + 1), *w = out;
	if (!out) {
		jfail(p, "out of memory");
		return NULL;
	}
	for (;;) {
		unsigned char c = (unsigned char)p->s[p->pos];
		if (!c) {
			jfail(p, "unterminated string");
			break;
		}
		if (c == '"') {
			p->pos++;
			*w = 0;
			return out;
		}
		if (c < 0x20) {
			jfail(p, "control character in a string");
			break;
		}
		if (c != '\\') {
			*w++ = (char)c;
			p->pos++;
			continue;
		}
		char e = p->s[p->pos + 1], d = 0;
		switch (e) {
		case '"': case '\\': case '/': d = e; break;
		case 'b': d = '\b'; break;
		case 'f': d = '\f'; break;
		case 'n': d = '\n'; break;
		case 'r': d = '\r'; break;
		case 't': d = '\t'; break;
		default: break;
		}
		if (d) {
			*w++ = d;
			p->pos += 2;
			continue;
		}
		unsigned u;
		if (e != 'u' || hex4(p->s + p->pos + 2, &u)) {
			jfail(p, "bad escape in a string");
			break;
		}
		p->pos += 6;
		if (u >= 0xd800 && u < 0xdc00) { /* a surrogate pair */
			unsigned lo;
			if (p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
			    hex4(p->s + p->pos + 2, &lo) || lo < 0xdc00 || lo > 0xdfff) {
				jfail(p, "unpaired surrogate in a string");
				break;
			}
			p->pos += 6;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
		/* UTF-8: at most 4 bytes for the 12 source characters */
		if (u < 0x80) {
			*w++ = (char)u;
		} else if (u < 0x800) {
			*w++ = (char)(0xc0 | u >> 6);
			*w++ = (char)(0x80 | (u & 0x3f));
		} else if (u < 0x10000) {
			*w++ = (char)(0xe0 | u >> 12);
			*w++ = (char)(0x80 | (u >> 6 & 0x3f));
			*w++ = (char)(0x80 | (u & 0x3f));
		} else {
			*w++ = (char)(0xf0 | u >> 18);
			*w++ = (char)(0x80 | (u >> 12 & 0x3f));
			*w++ = (char)(0x80 | (u >> 6 & 0x3f));
			*w++ = (char)(0x80 | (u & 0x3f));
		}
	}
	free(out);
	return NULL;
}

static int jdigits(struct jparse *p)
{
	size_t s = p->pos;
	while (p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
		p->pos++;
	return p->pos > s;
}

static void jvalue(struct jparse *p, struct trc_json *v, int depth);

/* Append a value to an array or object being built. */
static struct trc_json *jpush(struct jparse *p, struct trc_json *v, size_t *cap, char *key)
{
	if (v->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct trc_json *ni = realloc(v->item, nc * sizeof *ni);
		if (ni)
			v->item = ni;
		char **nk = v->type == TRC_JSON_OBJ ? realloc(v->key, nc * sizeof *nk) : NULL;
		if (nk)
			v->key = nk;
		if (!ni || (v->type == TRC_JSON_OBJ && !nk)) {
			jfail(p, "out of memory");
			free(key);
			return NULL;
		}
		*cap = nc;
	}
	struct trc_json *it = &v->item[v->n];
	memset(it, 0, sizeof *it);
	if (v->key)
		v->key[v->n] = key;
	v->n++;
	return it;
}

static void jcontainer(struct jparse *p, struct trc_json *v, int depth)
{
	int obj = p->s[p->pos] == '{';
	char close = obj ? '}' : ']';
	v->type = obj ? TRC_JSON_OBJ : TRC_JSON_ARR;
	if (depth >= JSON_MAX_DEPTH) {
		jfail(p, "nested too deeply");
		return;
	}
	p->pos++;
	jws(p);
	if (p->s[p->pos] == close) {
		p->pos++;
		return;
	}
	size_t cap = 0;
	for (;;) {
		char *key = NULL;
		jws(p);
		if (obj) {
			if (p->s[p->pos] != '"') {
				jfail(p, "expected a string key");
				return;
			}
			if (!(key = jstring(p)))
				return;
			jws(p);
			if (p->s[p->pos] != ':') {
				free(key);
				jfail(p, "expected ':'");
				return;
			}
			p->pos++;
		}
		struct trc_json *it = jpush(p, v, &cap, key);
		if (!it)
			return;
		jvalue(p, it, depth + 1);
		if (p->failed)
			return;
		jws(p);
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return;
		}
		jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		return;
	}
}

static void jvalue(struct jparse *p, struct trc_json *v, int depth)
{
	jws(p);
	char c = p->s[p->pos];
	if (c == '{' || c == '[') {
		jcontainer(p, v, depth);
	} else if (c == '"') {
		v->type = TRC_JSON_STR;
		v->str = jstring(p);
	} else if (!strncmp(p->s + p->pos, "true", 4) || !strncmp(p->s + p->pos, "false", 5)) {
		v->type = TRC_JSON_BOOL;
		v->num = c == 't';
		p->pos += c == 't' ? 4 : 5;
	} else if (!strncmp(p->s + p->pos, "null", 4)) {
		v->type = TRC_JSON_NULL;
		p->pos += 4;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		/* JSON's grammar, stricter than strtod's (no hex, inf, nan, '+') */
		size_t start = p->pos;
		p->pos += c == '-';
		if (p->s[p->pos] == '0')
			p->pos++;
		else if (!jdigits(p))
			goto bad_number;
		if (p->s[p->pos] == '.') {
			p->pos++;
			if (!jdigits(p))
				goto bad_number;
		}
		if (p->s[p->pos] == 'e' || p->s[p->pos] == 'E') {
			p->pos++;
			if (p->s[p->pos] == '+' || p->s[p->pos] == '-')
				p->pos++;
			if (!jdigits(p))
				goto bad_number;
		}
		v->type = TRC_JSON_NUM;
		v->num = strtod(p->s + start, NULL);
		if (!isfinite(v->num)) {
			p->pos = start;
			jfail(p, "number out of range");
		}
		return;
	bad_number:
		jfail(p, "malformed number");
	} else {
		jfail(p, c ? "unexpected character" : "unexpected end of input");
	}
}

struct trc_json *trc_json_parse(const char *text, char *err, size_t errlen)
{
	struct jparse p = { text, 0, err, errlen, 0 };
	struct trc_json *j = calloc(1, sizeof *j);
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	jvalue(&p, j, 0);
	jws(&p);
	if (!p.failed && text[p.pos])
		jfail(&p, "text after the JSON value");
	if (p.failed) {
		trc_json_free(j);
		return NULL;
	}
	return j;
}

struct trc_json *trc_json_read(const char *path, char *err, size_t errlen)
{
	size_t n;
	char *buf = slurp(path, &n, err, errlen);
	if (!buf)
		return NULL;
	char e[256];
	struct trc_json *j = NULL;
	if (strlen(buf) != n)
		snprintf(err, errlen, "%s: a NUL byte in the file", path);
	else if (!(j = trc_json_parse(buf, e, sizeof e)))
		snprintf(err, errlen, "%s:%s", path, e);
	free(buf);
	return j;
}

void trc_json_free(struct trc_json *j)
{
	if (!j)
		return;
	json_free_in(j);
	free(j);
}

const struct trc_json *trc_json_get(const struct trc_json *obj, const char *key)
{
	if (!obj || obj->type != TRC_JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->key[i], key))
			return &obj->item[i];
	return NULL;
}

int trc_json_num(const struct trc_json *obj, const char *key, double *v)
{
	const struct trc_json *j = trc_json_get(obj, key);
	if (!j || j->type != TRC_JSON_NUM)
		return 0;
	*v = j->num;
	return 1;
}

const char *trc_json_str(const struct trc_json *obj, const char *key)
{
	const struct trc_json *j = trc_json_get(obj, key);
	return j && j->type == TRC_JSON_STR ? j->str : NULL;
}

/* ---- finding a trace's files --------------------------------------------- */

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The entries of dir starting with prefix and ending with suffix, the
 * lexicographically last into best (msprof puts the time in the name, so
 * that is the newest); want_dir: directories, else regular files. */
static int last_match(const char *dir, const char *prefix, const char *suffix, int want_dir,
		      char *best, size_t n)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int found = 0;
	char pick[1024] = "";
	size_t lp = strlen(prefix), ls = strlen(suffix);
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < lp + ls || strncmp(e->d_name, prefix, lp) ||
		    strcmp(e->d_name + l - ls, suffix) || e->d_name[0] == '.')
			continue;
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
			continue;
		if (want_dir ? !is_dir(path) : !is_file(path))
			continue;
		if (!found || strcmp(e->d_name, pick) > 0) {
			snprintf(pick, sizeof pick, "%s", e->d_name);
			found = 1;
		}
	}
	closedir(d);
	if (found && snprintf(best, n, "%s/%s", dir, pick) >= (int)n)
		found = 0;
	return found;
}

/* stem_*.ext in one msprof root (a PROF_ folder, or dir itself) */
static int find_in_prof(const char *root, const char *stem, const char *ext, char *out,
			size_t n)
{
	char sub[4096], pre[256], suf[64], dev[4096];
	snprintf(pre, sizeof pre, "%s_", stem);
	snprintf(suf, sizeof suf, ".%s", ext);
	if (snprintf(sub, sizeof sub, "%s/mindstudio_profiler_output", root) < (int)sizeof sub &&
	    last_match(sub, pre, suf, 0, out, n))
		return 1;
	if (!last_match(root, "device_", "", 1, dev, sizeof dev))
		return 0;
	return snprintf(sub, sizeof sub, "%s/summary", dev) < (int)sizeof sub &&
	       last_match(sub, pre, suf, 0, out, n);
}

int trc_find(const char *dir, const char *stem, const char *ext, char *out, size_t n)
{
	char prof[4096];
	if (snprintf(out, n, "%s/%s.%s", dir, stem, ext) >= (int)n)
		return -1;
	if (is_file(out))
		return 0;
	char mine[4096];
	snprintf(mine, sizeof mine, "%s", out);
	if (find_in_prof(dir, stem, ext, out, n) ||
	    (last_match(dir, "PROF_", "", 1, prof, sizeof prof) &&
	     find_in_prof(prof, stem, ext, out, n)))
		return 0;
	snprintf(out, n, "%s", mine);
	return -1;
}
