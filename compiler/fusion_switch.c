/* fusion_switch.c: the --fusion_switch_file parser, on its own so a fuzzer
 * can call it on a buffer (tests/fuzz/fuzz_switch.c). */
#include "fusion_switch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


const char *const cc_switch_names[SW_N] = {
#define CC_PASS(id, name, stage, graph, plan, on) name,
#include "passes.def"
};

static const int defaults[SW_N] = {
#define CC_PASS(id, name, stage, graph, plan, on) on,
#include "passes.def"
};

void cc_switch_list(char *buf, size_t n)
{
	size_t len = 0;
	if (n)
		buf[0] = 0;
	for (int i = 0; i < SW_N && len < n; i++)
		if (cc_switch_names[i]) {
			int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
					 cc_switch_names[i]);
			len = w < 0 ? n : len + (size_t)w;
		}
}

/* on[] as no file sets it. */
static void set_defaults(int on[SW_N])
{
	for (int i = 0; i < SW_N; i++)
		on[i] = defaults[i];
}

static int sw_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int sw_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "--fusion_switch_file %s: ", path);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The file's shape, before its pairs are read: an empty file, a JSON
 * value that is not an object, or an object cut short (a truncated file)
 * is refused rather than read as "no switches" or as half of them. */
static int check_shape(const char *path, const char *text, char *err, size_t errlen)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return sw_fail(err, errlen, path, "the file is empty");
	if (*p != '{') {
		if (strchr("[\"-0123456789tfn", *p))
			return sw_fail(err, errlen, path, "not a JSON object");
		return 0; /* the older "Name:off" lines */
	}
	int depth = 0, in_str = 0;
	for (; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				in_str = 0;
		} else if (*p == '"') {
			in_str = 1;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && --depth == 0) {
			for (p++; isspace((unsigned char)*p); p++)
				;
			if (*p)
				return sw_fail(err, errlen, path, "text after the JSON object");
			return 0;
		}
	}
	return sw_fail(err, errlen, path, "the JSON object is not closed (a truncated file?)");
}

/* ATC's JSON form {"Switch":{"GraphFusion":{"Name":"off","ALL":"off"},...}} or
 * its older "Name:off" lines: every "name" : "on|off" pair counts, wherever
 * it is nested; ALL sets the default, named passes override it. */
int cc_fusion_switch_parse(const char *path, const char *text, int on[SW_N], char *err,
			   size_t errlen)
{
	set_defaults(on);
	if (check_shape(path, text, err, errlen))
		return -1;
	int all = -1, named[SW_N];
	for (int i = 0; i < SW_N; i++)
		named[i] = -1;
	const char *p = text;
	while (*p) {
		while (*p && (isspace((unsigned char)*p) || strchr("{},", *p)))
			p++;
		if (!*p)
			break;
		char key[128], val[16];
		size_t k = 0;
		int quoted = *p == '"';
		if (quoted)
			p++;
		while (*p && (quoted ? *p != '"' : (isalnum((unsigned char)*p) || *p == '_'))) {
			if (k + 1 < sizeof key)
				key[k++] = *p;
			p++;
		}
		key[k] = 0;
		if (quoted && *p == '"')
			p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':') {
			if (!k && *p)
				p++; /* an unexpected character */
			continue;
		}
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '{')
			continue; /* a section such as "Switch" or "GraphFusion" */
		int vq = *p == '"';
		if (vq)
			p++;
		size_t v = 0;
		while (*p && (vq ? *p != '"' : !isspace((unsigned char)*p) && *p != ',' && *p != '}')) {
			if (v + 1 < sizeof val)
				val[v++] = *p;
			p++;
		}
		val[v] = 0;
		if (vq && *p == '"')
			p++;
		int state = !strcmp(val, "on") ? 1 : !strcmp(val, "off") ? 0 : -1;
		if (state < 0)
			return sw_fail(err, errlen, path, "'%s' must be on or off, not '%s'", key, val);
		if (!strcmp(key, "ALL")) {
			all = state;
			continue;
		}
		int found = 0;
		for (int i = 0; i < SW_N; i++)
			if (cc_switch_names[i] && !strcmp(key, cc_switch_names[i])) {
				named[i] = state;
				found = 1;
			}
		if (!found) {
			char names[512];
			cc_switch_list(names, sizeof names);
			return sw_fail(err, errlen, path, "unknown pass '%s' (passes: %s)", key,
				       names);
		}
	}
	for (int i = 0; i < SW_N; i++)
		if (cc_switch_names[i])
			on[i] = named[i] >= 0 ? named[i] : all >= 0 ? all : defaults[i];
	return 0;
}

int cc_fusion_switch_read(const char *path, int on[SW_N], char *err, size_t errlen)
{
	set_defaults(on);
	if (!path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return sw_fail(err, errlen, path, "cannot open");
	char text[CC_SWITCH_MAX + 1];
	size_t n = fread(text, 1, sizeof text - 1, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	text[n] = 0;
	if (more)
		return sw_fail(err, errlen, path, "larger than %d bytes", CC_SWITCH_MAX);
	return cc_fusion_switch_parse(path, text, on, err, errlen);
}
