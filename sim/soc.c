/* soc.c: load, override, query and dump SoC configurations (sim/soc/<name>.ini).
 *
 * Every key comes from soc.def through one table (soc_keys) built with offsetof,
 * so the parser, --set, the range checks and both dumpers can never drift from
 * the struct.  All parse state lives in struct soc_parse on the caller's stack:
 * there is no global mutable state, so two simulators can load SoCs at once.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* opendir, strdup, stat */
#endif

#include "soc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ini.h>

/* The build passes both with -D; these fallbacks let the file compile alone. */
#ifndef DV_SOC_DIR_SRC
#define DV_SOC_DIR_SRC "sim/soc"
#endif
#ifndef DV_SOC_DIR_INSTALLED
#define DV_SOC_DIR_INSTALLED "sim/soc"
#endif

#ifdef __GNUC__
#define SOC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SOC_PRINTF(fmt, args)
#endif

/* The [soc] section holds the chip's name and its main memory's technology;
 * they are not soc.def rows because they are strings, but the parser and
 * --set accept them like any other key.  The memory is optional (reports say
 * "main memory" without it): configurations written before it keep loading. */
#define SOC_NAME_SECTION "soc"
#define SOC_MSG 1024

enum soc_type { SOC_TYPE_INT, SOC_TYPE_REAL };

struct soc_key {
	const char *section;
	const char *key;
	const char *dotted;
	enum soc_type type;
	size_t offset;
	double min, max;
	const char *unit;
	const char *doc;
};

static const struct soc_key soc_keys[] = {
#define SOC_KEY(sec, key, type, min, max, unit, doc) \
	{ #sec, #key, #sec "." #key, SOC_TYPE_##type, \
	  offsetof(struct soc_config, sec##_##key), min, max, unit, doc },
#include "soc.def"
};

#define SOC_NKEYS (sizeof soc_keys / sizeof soc_keys[0])

/* Per-file parse state, handed to inih as both the reader stream and the
 * handler's user pointer. */
struct soc_parse {
	struct soc_config *cfg;
	FILE *f;
	int max_line;           /* the reader's buffer size, for the message */
	int lineno;             /* line the reader returned last */
	int indented;           /* that line started with blanks */
	int name_line;          /* line of [soc] name=, 0 if not seen */
	int memory_line;        /* line of [soc] memory=, 0 if not seen */
	int key_line[SOC_NKEYS]; /* line each key was set on, 0 if not seen */
	char prev_name[64];     /* last key, to explain inih's continuation lines */
	int err_line;           /* line of the first error; -1 = whole file */
	char msg[SOC_MSG];      /* first error, without the file:line prefix */
};

static void strfmt(char *buf, size_t len, const char *fmt, ...) SOC_PRINTF(3, 4);
static void strcatf(char *buf, size_t len, const char *fmt, ...) SOC_PRINTF(3, 4);
static void parse_fail(struct soc_parse *p, int line, const char *fmt, ...) SOC_PRINTF(3, 4);

static void strfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Append to a NUL-terminated buffer, truncating silently: messages only. */
static void strcatf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	if (!buf || len == 0)
		return;
	used = strlen(buf);
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Shortest decimal form that strtod reads back to the same double, without an
 * exponent for ordinary magnitudes so the .ini stays readable (1000, not 1e+03). */
static void fmt_real(char *buf, size_t len, double v)
{
	double mag = v < 0 ? -v : v;
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (mag >= 1 && mag < 1e16) {
		while (strchr(buf, 'e') && prec < 17)
			snprintf(buf, len, "%.*g", ++prec, v);
	}
	snprintf(buf, len, "%.*g", prec, v);
}

static const struct soc_key *key_find(const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < SOC_NKEYS; i++) {
		if (strcmp(soc_keys[i].section, section) == 0 &&
		    strcmp(soc_keys[i].key, key) == 0)
			return &soc_keys[i];
	}
	return NULL;
}

static int section_known(const char *section)
{
	size_t i;

	if (strcmp(section, SOC_NAME_SECTION) == 0)
		return 1;
	for (i = 0; i < SOC_NKEYS; i++) {
		if (strcmp(soc_keys[i].section, section) == 0)
			return 1;
	}
	return 0;
}

/* "soc, core, hbm, ..." in soc.def order, each section once. */
static void list_sections(char *buf, size_t len)
{
	size_t i, j;

	strcatf(buf, len, "%s", SOC_NAME_SECTION);
	for (i = 0; i < SOC_NKEYS; i++) {
		for (j = 0; j < i; j++) {
			if (strcmp(soc_keys[j].section, soc_keys[i].section) == 0)
				break;
		}
		if (j == i)
			strcatf(buf, len, ", %s", soc_keys[i].section);
	}
}

static void list_keys(char *buf, size_t len, const char *section)
{
	const char *sep = "";
	size_t i;

	if (strcmp(section, SOC_NAME_SECTION) == 0) {
		strcatf(buf, len, "name, memory");
		return;
	}
	for (i = 0; i < SOC_NKEYS; i++) {
		if (strcmp(soc_keys[i].section, section) == 0) {
			strcatf(buf, len, "%s%s", sep, soc_keys[i].key);
			sep = ", ";
		}
	}
}

/* The unknown-section/unknown-key message, with the valid choices, so a typo
 * in a what-if sweep is fixed without opening soc.def. */
static void explain_unknown(char *buf, size_t len, const char *section, const char *key)
{
	if (!section_known(section)) {
		strfmt(buf, len, "unknown section [%s] (sections: ", section);
		list_sections(buf, len);
	} else {
		strfmt(buf, len, "unknown key '%s' in [%s] (keys: ", key, section);
		list_keys(buf, len, section);
	}
	strcatf(buf, len, ")");
}

/* Lines and alignments feed address arithmetic that masks with size-1. */
static int needs_pow2(const struct soc_key *k)
{
	return strcmp(k->key, "align_bytes") == 0 ||
	       strcmp(k->dotted, "l2.line_bytes") == 0;
}

static void fmt_range(char *buf, size_t len, const struct soc_key *k)
{
	char lo[32], hi[32];

	if (k->type == SOC_TYPE_INT) {
		snprintf(lo, sizeof lo, "%.0f", k->min);
		snprintf(hi, sizeof hi, "%.0f", k->max);
	} else {
		fmt_real(lo, sizeof lo, k->min);
		fmt_real(hi, sizeof hi, k->max);
	}
	strfmt(buf, len, "[%s, %s]%s%s", lo, hi, k->unit[0] ? " " : "", k->unit);
}

/* Parse, check and store one value.  On error fills msg (no location). */
static int key_assign(struct soc_config *cfg, const struct soc_key *k, const char *value,
		      char *msg, size_t msglen)
{
	char range[96];
	char *end;

	fmt_range(range, sizeof range, k);
	errno = 0;
	if (k->type == SOC_TYPE_INT) {
		long long v = strtoll(value, &end, 10);

		/* strtoll skips leading blanks; inih has already trimmed, so a
		 * blank here can only come from a quoted or odd value: refuse. */
		if (end == value || *end != '\0' || isspace((unsigned char)value[0])) {
			strfmt(msg, msglen, "%s = '%s' is not a decimal integer", k->dotted,
			       value);
			return -1;
		}
		if (errno == ERANGE || (double)v < k->min || (double)v > k->max) {
			strfmt(msg, msglen, "%s = %s is out of range %s", k->dotted, value,
			       range);
			return -1;
		}
		if (needs_pow2(k) && (v & (v - 1)) != 0) {
			strfmt(msg, msglen, "%s = %lld is not a power of two", k->dotted, v);
			return -1;
		}
		*(int64_t *)(void *)((char *)cfg + k->offset) = (int64_t)v;
	} else {
		double v = strtod(value, &end);

		if (end == value || *end != '\0' || isspace((unsigned char)value[0])) {
			strfmt(msg, msglen, "%s = '%s' is not a number", k->dotted, value);
			return -1;
		}
		if (!isfinite(v)) {
			strfmt(msg, msglen, "%s = %s is not a finite number", k->dotted, value);
			return -1;
		}
		if (v < k->min || v > k->max) {
			strfmt(msg, msglen, "%s = %s is out of range %s", k->dotted, value,
			       range);
			return -1;
		}
		*(double *)(void *)((char *)cfg + k->offset) = v;
	}
	return 0;
}

/* The name goes unquoted into the ini dump and quoted into JSON, so keep it to
 * characters that need no escaping in either. */
static int str_assign(char *dst, size_t size, const char *key, const char *value,
		      const char *punct, char *msg, size_t msglen)
{
	size_t n = strlen(value), i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)value[i];

		if (!isalnum(c) && !strchr(punct, c))
			break;
	}
	if (n == 0 || n >= size || i < n) {
		strfmt(msg, msglen, "soc.%s = '%s': need 1-%zu characters of "
		       "[A-Za-z0-9%s]", key, value, size - 1, punct);
		return -1;
	}
	memcpy(dst, value, n + 1);
	return 0;
}

/* soc.name or soc.memory = value; 1 when key is neither. */
static int soc_str_assign(struct soc_config *cfg, const char *key, const char *value, char *msg,
			  size_t msglen)
{
	if (strcmp(key, "name") == 0)
		return str_assign(cfg->name, sizeof cfg->name, key, value, "_.+-", msg, msglen);
	if (strcmp(key, "memory") == 0) /* (inih trims the ends) */
		return str_assign(cfg->memory, sizeof cfg->memory, key, value, "_.+- ", msg,
				  msglen);
	return 1;
}

/* Keep the earliest error: inih reports lines in order, but the reader and
 * the handler may both complain about one line. */
static void parse_fail(struct soc_parse *p, int line, const char *fmt, ...)
{
	va_list ap;

	if (p->err_line != 0 && p->err_line <= line)
		return;
	p->err_line = line;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof p->msg, fmt, ap);
	va_end(ap);
}

/* fgets-style reader for inih.  inih's handler gets no line number in this
 * build (INI_HANDLER_LINENO=0), so count lines here: the handler runs while
 * inih processes the line just read.  Also: inih would split a line longer
 * than its buffer into two "lines"; swallow the rest instead, and refuse it
 * unless it is a comment.  And flag section headers here, because inih calls
 * the handler only for keys, so an empty unknown section would pass. */
static char *soc_reader(char *str, int num, void *stream)
{
	struct soc_parse *p = stream;
	int c = EOF, n = 0, toolong = 0;
	char *s, *close;

	if (num < 2)
		return NULL;
	while ((c = getc(p->f)) != EOF) {
		if (n < num - 2)
			str[n++] = (char)c;
		else if (c != '\n')
			toolong = 1;
		if (c == '\n')
			break;
	}
	if (c == EOF && n == 0 && !toolong)
		return NULL;
	str[n] = '\0';
	p->lineno++;
	p->max_line = num - 2;
	p->indented = (str[0] == ' ' || str[0] == '\t');

	for (s = str; *s == ' ' || *s == '\t'; s++)
		;
	if (toolong && *s != ';' && *s != '#')
		parse_fail(p, p->lineno, "line longer than %d characters", p->max_line);
	if (*s == '[' && (close = strchr(s, ']')) != NULL) {
		p->prev_name[0] = '\0'; /* inih ends continuations at a header too */
		*close = '\0';
		if (!section_known(s + 1)) {
			char msg[SOC_MSG] = "";

			explain_unknown(msg, sizeof msg, s + 1, "");
			parse_fail(p, p->lineno, "%s", msg);
		}
		*close = ']';
	}
	return str;
}

static int soc_handler(void *user, const char *section, const char *name, const char *value)
{
	struct soc_parse *p = user;
	const struct soc_key *k;
	char msg[SOC_MSG] = "";
	int *seen;

	/* inih (INI_ALLOW_MULTILINE) reads an indented line as more value for
	 * the previous key; say so instead of reporting a puzzling duplicate. */
	if (p->indented && strcmp(name, p->prev_name) == 0) {
		parse_fail(p, p->lineno, "indented line continues '%s'; remove the "
			   "indentation", name);
		return 0;
	}
	snprintf(p->prev_name, sizeof p->prev_name, "%s", name);

	if (section[0] == '\0') {
		parse_fail(p, p->lineno, "key '%s' outside any [section]", name);
		return 0;
	}
	if (strcmp(section, SOC_NAME_SECTION) == 0 &&
	    (strcmp(name, "name") == 0 || strcmp(name, "memory") == 0)) {
		seen = strcmp(name, "name") == 0 ? &p->name_line : &p->memory_line;
		k = NULL;
	} else {
		k = key_find(section, name);
		if (!k) {
			explain_unknown(msg, sizeof msg, section, name);
			parse_fail(p, p->lineno, "%s", msg);
			return 0;
		}
		seen = &p->key_line[k - soc_keys];
	}
	if (*seen) {
		parse_fail(p, p->lineno, "duplicate key %s.%s (first set on line %d)",
			   section, name, *seen);
		return 0;
	}
	*seen = p->lineno;
	if ((k ? key_assign(p->cfg, k, value, msg, sizeof msg)
	       : soc_str_assign(p->cfg, name, value, msg, sizeof msg)) != 0) {
		parse_fail(p, p->lineno, "%s", msg);
		return 0;
	}
	return 1;
}

/* Parse an open file into cfg (which the caller has zeroed). */
static int parse_file(FILE *f, const char *path, struct soc_config *cfg, char *err,
		      size_t errlen)
{
	struct soc_parse p;
	size_t i, missing = 0;
	int rc;

	memset(&p, 0, sizeof p);
	p.cfg = cfg;
	p.f = f;
	rc = ini_parse_stream(soc_reader, &p, soc_handler, &p);
	if (ferror(f)) {
		strfmt(err, errlen, "%s: read error: %s", path, strerror(errno));
		return -1;
	}
	if (rc < 0) {
		strfmt(err, errlen, "%s: inih failed (error %d)", path, rc);
		return -1;
	}
	/* rc is inih's first bad line: one of ours (the handler returned 0) or a
	 * line it could not parse at all, which we never saw. */
	if (rc > 0 && (p.err_line == 0 || rc < p.err_line))
		parse_fail(&p, rc, "syntax error: expected '[section]' or 'key = value'");
	if (p.err_line == 0) {
		for (i = 0; i < SOC_NKEYS; i++) {
			if (p.key_line[i] == 0 && missing++ == 0)
				parse_fail(&p, -1, "missing key %s (%s)", soc_keys[i].dotted,
					   soc_keys[i].doc);
		}
		if (missing > 1)
			strcatf(p.msg, sizeof p.msg, " and %zu more", missing - 1);
		if (!p.name_line && missing == 0)
			parse_fail(&p, -1, "missing key soc.name ([soc] name = <chip>)");
		if (!p.memory_line)
			snprintf(cfg->memory, sizeof cfg->memory, "main memory");
	}
	if (p.err_line > 0) {
		strfmt(err, errlen, "%s:%d: %s", path, p.err_line, p.msg);
		return -1;
	}
	if (p.err_line < 0) {
		strfmt(err, errlen, "%s: %s", path, p.msg);
		return -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Unknown chip: name the file looked for and every chip the directory has. */
static void explain_unknown_chip(char *err, size_t errlen, const char *name, const char *dir,
				 const char *path)
{
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;

	strfmt(err, errlen, "unknown SoC '%s' (no %s)", name, path);
	d = opendir(dir);
	if (!d) {
		strcatf(err, errlen, "; cannot list %s: %s (set DAVINCI_SOC_DIR)", dir,
			strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char *copy;

		if (len <= 4 || strcmp(de->d_name + len - 4, ".ini") != 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char **grown = realloc(names, ncap * sizeof *names);

			if (!grown)
				break;
			names = grown;
			cap = ncap;
		}
		copy = strdup(de->d_name);
		if (!copy)
			break;
		copy[len - 4] = '\0';
		names[n++] = copy;
	}
	closedir(d);
	if (n == 0) {
		strcatf(err, errlen, "; %s has no .ini files", dir);
	} else {
		qsort(names, n, sizeof *names, cmp_str);
		strcatf(err, errlen, "; available in %s:", dir);
		for (i = 0; i < n; i++)
			strcatf(err, errlen, " %s", names[i]);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int is_path(const char *name)
{
	size_t len = strlen(name);

	return strchr(name, '/') != NULL || (len >= 4 && strcmp(name + len - 4, ".ini") == 0);
}

int soc_load(const char *name, struct soc_config *cfg, char *err, size_t errlen)
{
	struct soc_config tmp;
	const char *dir = NULL;
	int n, rc;
	FILE *f;

	if (err && errlen)
		err[0] = '\0';
	if (!name || !*name) {
		strfmt(err, errlen, "empty SoC name");
		return -1;
	}
	/* Fill a scratch copy so a failed load leaves the caller's config intact. */
	memset(&tmp, 0, sizeof tmp);
	if (is_path(name)) {
		n = snprintf(tmp.path, sizeof tmp.path, "%s", name);
	} else {
		dir = soc_dir();
		n = snprintf(tmp.path, sizeof tmp.path, "%s/%s.ini", dir, name);
	}
	if (n < 0 || (size_t)n >= sizeof tmp.path) {
		strfmt(err, errlen, "%s: path too long (max %zu)", name, sizeof tmp.path - 1);
		return -1;
	}
	f = fopen(tmp.path, "r");
	if (!f) {
		if (dir && errno == ENOENT)
			explain_unknown_chip(err, errlen, name, dir, tmp.path);
		else
			strfmt(err, errlen, "%s: cannot open: %s", tmp.path, strerror(errno));
		return -1;
	}
	rc = parse_file(f, tmp.path, &tmp, err, errlen);
	fclose(f);
	if (rc == 0)
		*cfg = tmp;
	return rc;
}

int soc_load_mem(const char *path, const char *text, size_t len, struct soc_config *cfg,
		 char *err, size_t errlen)
{
	struct soc_config tmp;
	FILE *f;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	memset(&tmp, 0, sizeof tmp);
	snprintf(tmp.path, sizeof tmp.path, "%s", path);
	/* fmemopen may refuse a size of 0: an empty file reads as one blank line */
	f = len ? fmemopen((void *)text, len, "r") : fmemopen((void *)"\n", 1, "r");
	if (!f) {
		strfmt(err, errlen, "%s: fmemopen: %s", tmp.path, strerror(errno));
		return -1;
	}
	rc = parse_file(f, tmp.path, &tmp, err, errlen);
	fclose(f);
	if (rc == 0)
		*cfg = tmp;
	return rc;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int soc_set(struct soc_config *cfg, const char *assignment, char *err, size_t errlen)
{
	char buf[512], msg[SOC_MSG] = "";
	char *eq, *dot, *section, *key, *value;
	const struct soc_key *k;

	if (err && errlen)
		err[0] = '\0';
	if (!assignment || strlen(assignment) >= sizeof buf) {
		strfmt(err, errlen, "--set: assignment missing or longer than %zu characters",
		       sizeof buf - 1);
		return -1;
	}
	memcpy(buf, assignment, strlen(assignment) + 1);
	eq = strchr(buf, '=');
	dot = strchr(buf, '.');
	if (!eq || !dot || dot > eq) {
		strfmt(err, errlen, "--set %s: expected section.key=value", assignment);
		return -1;
	}
	*eq = '\0';
	*dot = '\0';
	section = trim(buf);
	key = trim(dot + 1);
	value = trim(eq + 1);
	if (strcmp(section, SOC_NAME_SECTION) == 0 &&
	    (strcmp(key, "name") == 0 || strcmp(key, "memory") == 0)) {
		if (soc_str_assign(cfg, key, value, msg, sizeof msg) == 0)
			return 0;
	} else if ((k = key_find(section, key)) == NULL) {
		explain_unknown(msg, sizeof msg, section, key);
	} else {
		/* Check into a copy: a bad value must not half-apply. */
		struct soc_config tmp = *cfg;

		if (key_assign(&tmp, k, value, msg, sizeof msg) == 0) {
			*cfg = tmp;
			return 0;
		}
	}
	strfmt(err, errlen, "--set %s: %s", assignment, msg);
	return -1;
}

int soc_get(const struct soc_config *cfg, const char *dotted, double *value)
{
	size_t i;

	for (i = 0; i < SOC_NKEYS; i++) {
		const struct soc_key *k = &soc_keys[i];
		const char *base = (const char *)cfg + k->offset;

		if (strcmp(k->dotted, dotted) != 0)
			continue;
		if (k->type == SOC_TYPE_INT)
			*value = (double)*(const int64_t *)(const void *)base;
		else
			*value = *(const double *)(const void *)base;
		return 0;
	}
	return -1;
}

static void fmt_value(char *buf, size_t len, const struct soc_config *cfg,
		      const struct soc_key *k)
{
	const char *base = (const char *)cfg + k->offset;

	if (k->type == SOC_TYPE_INT)
		snprintf(buf, len, "%" PRId64, *(const int64_t *)(const void *)base);
	else
		fmt_real(buf, len, *(const double *)(const void *)base);
}

void soc_dump(const struct soc_config *cfg, FILE *f)
{
	const char *prev = "";
	char val[64], range[96];
	const char *s;
	size_t i;

	/* The path goes in a comment; a control character would end the comment
	 * early and make the dump unreadable, so blank those out. */
	fputs("; effective SoC configuration; source: ", f);
	for (s = cfg->path; *s; s++)
		putc(iscntrl((unsigned char)*s) ? '?' : *s, f);
	fprintf(f, "\n[%s]\nname = %s\nmemory = %s\n", SOC_NAME_SECTION, cfg->name,
		cfg->memory);
	for (i = 0; i < SOC_NKEYS; i++) {
		const struct soc_key *k = &soc_keys[i];

		if (strcmp(k->section, prev) != 0)
			fprintf(f, "\n[%s]\n", k->section);
		prev = k->section;
		fmt_range(range, sizeof range, k);
		fmt_value(val, sizeof val, cfg, k);
		fprintf(f, "; %s %s\n%s = %s\n", k->doc, range, k->key, val);
	}
}

void soc_dump_json(const struct soc_config *cfg, FILE *f)
{
	char val[64];
	size_t i;

	/* str_assign keeps the strings free of characters JSON would escape. */
	fprintf(f, "{\n  \"soc\": \"%s\",\n  \"memory\": \"%s\"", cfg->name, cfg->memory);
	for (i = 0; i < SOC_NKEYS; i++) {
		fmt_value(val, sizeof val, cfg, &soc_keys[i]);
		fprintf(f, ",\n  \"%s\": %s", soc_keys[i].dotted, val);
	}
	fputs("\n}\n", f);
}

const char *soc_dir(void)
{
	const char *env = getenv("DAVINCI_SOC_DIR");
	struct stat st;

	if (env && *env)
		return env;
	/* An installed copy wins over the source tree, but an uninstalled build
	 * (tests, simrun from the build dir) must still find the shipped files. */
	if (stat(DV_SOC_DIR_INSTALLED, &st) == 0 && S_ISDIR(st.st_mode))
		return DV_SOC_DIR_INSTALLED;
	return DV_SOC_DIR_SRC;
}
