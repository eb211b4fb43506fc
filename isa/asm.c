/* asm.c: the text assembler, driven by the format tables.
 *
 * Syntax, one statement per line:
 *   label:                       (may precede an instruction on the same line)
 *   .equ NAME, expr              (a constant; usable in any later operand)
 *   mnemonic x1, x2, 5, key=expr, key=name
 * Registers and positional immediates come in format order; key=value
 * operands in any order, defaulting where the format gives a default.
 * Comments start with '#', ';' or "//".  Expressions: integers (decimal or
 * 0x), .equ names, labels (branch offsets), ( ) + - * / << >>.  li also takes
 * a floating-point literal (with '.' or an exponent) and stores its fp32 bits.
 */
#include "isa.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct sym {
	char name[64];
	int64_t value;
	int is_label;
};

struct asm_ctx {
	const char *file;
	int line;
	const char *line_start;
	char *err;
	size_t errlen;
	struct sym *syms;
	size_t nsyms, capsyms;
	int64_t pc;
	int pass;
	int forward; /* pass 1: a name not yet defined was read (as 0) */
	int nest;    /* parentheses and unary minuses open in the expression */
};

/* The deepest an expression may nest: the parser recurses per level, and a
 * line of 10^4 '(' must be an error, not a stack overflow. */
#define ASM_MAX_NEST 256

static int fail(struct asm_ctx *a, const char *at, const char *fmt, ...)
{
	va_list ap;
	int col = at ? (int)(at - a->line_start) + 1 : 1;
	size_t n = (size_t)snprintf(a->err, a->errlen, "%s:%d:%d: ", a->file, a->line, col);
	if (n < a->errlen) {
		va_start(ap, fmt);
		vsnprintf(a->err + n, a->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static struct sym *sym_find(struct asm_ctx *a, const char *name, size_t len)
{
	for (size_t i = 0; i < a->nsyms; i++)
		if (strlen(a->syms[i].name) == len && memcmp(a->syms[i].name, name, len) == 0)
			return &a->syms[i];
	return NULL;
}

static int sym_add(struct asm_ctx *a, const char *at, const char *name, size_t len, int64_t v,
		   int is_label)
{
	if (len >= sizeof a->syms[0].name)
		return fail(a, at, "name too long");
	if (sym_find(a, name, len))
		return fail(a, at, "'%.*s' is already defined", (int)len, name);
	if (a->nsyms == a->capsyms) {
		size_t cap = a->capsyms ? 2 * a->capsyms : 64;
		struct sym *s = realloc(a->syms, cap * sizeof *s);
		if (!s)
			return fail(a, at, "out of memory");
		a->syms = s;
		a->capsyms = cap;
	}
	struct sym *s = &a->syms[a->nsyms++];
	memcpy(s->name, name, len);
	s->name[len] = 0;
	s->value = v;
	s->is_label = is_label;
	return 0;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_' || c == '.'; }
static int is_ident(int c) { return isalnum(c) || c == '_' || c == '.'; }

/* Expression parser over [*pp, end). */
static int parse_expr(struct asm_ctx *a, const char **pp, const char *end, int64_t *v);

static int parse_factor(struct asm_ctx *a, const char **pp, const char *end, int64_t *v)
{
	const char *p = skip_ws(*pp, end);
	if (p >= end)
		return fail(a, p, "expected a value");
	if ((*p == '-' || *p == '(') && a->nest >= ASM_MAX_NEST)
		return fail(a, p, "the expression nests deeper than %d levels", ASM_MAX_NEST);
	if (*p == '-') {
		*pp = p + 1;
		a->nest++;
		int rc = parse_factor(a, pp, end, v);
		a->nest--;
		if (rc)
			return -1;
		*v = (int64_t)(0 - (uint64_t)*v);
		return 0;
	}
	if (*p == '(') {
		*pp = p + 1;
		a->nest++;
		int rc = parse_expr(a, pp, end, v);
		a->nest--;
		if (rc)
			return -1;
		p = skip_ws(*pp, end);
		if (p >= end || *p != ')')
			return fail(a, p, "expected ')'");
		*pp = p + 1;
		return 0;
	}
	if (isdigit((unsigned char)*p)) {
		const char *q = p;
		while (q < end && isalnum((unsigned char)*q))
			q++;
		char buf[40];
		if ((size_t)(q - p) >= sizeof buf)
			return fail(a, p, "number too long");
		memcpy(buf, p, (size_t)(q - p));
		buf[q - p] = 0;
		char *e;
		errno = 0;
		unsigned long long u = strtoull(buf, &e, 0);
		if (*e || errno)
			return fail(a, p, "bad number '%s'", buf);
		/* a decimal beyond int64 would wrap to a negative value; hex and
		 * octal stay bit patterns (masks) up to 64 bits */
		if (u > INT64_MAX && !(buf[0] == '0' && buf[1]))
			return fail(a, p, "number '%s' is out of range (above %lld)", buf,
				    (long long)INT64_MAX);
		*v = (int64_t)u;
		*pp = q;
		return 0;
	}
	if (is_ident_start((unsigned char)*p)) {
		const char *q = p;
		while (q < end && is_ident((unsigned char)*q))
			q++;
		struct sym *s = sym_find(a, p, (size_t)(q - p));
		if (!s) {
			if (a->pass == 1) { /* labels may be defined later */
				a->forward = 1;
				*v = 0;
				*pp = q;
				return 0;
			}
			return fail(a, p, "undefined name '%.*s'", (int)(q - p), p);
		}
		*v = s->is_label ? s->value - a->pc : s->value;
		*pp = q;
		return 0;
	}
	return fail(a, p, "unexpected '%c'", *p);
}

static int parse_term(struct asm_ctx *a, const char **pp, const char *end, int64_t *v)
{
	if (parse_factor(a, pp, end, v))
		return -1;
	for (;;) {
		const char *p = skip_ws(*pp, end);
		int op = 0;
		if (p < end && (*p == '*' || *p == '/'))
			op = *p++;
		else if (p + 1 < end && p[0] == '<' && p[1] == '<')
			op = 'l', p += 2;
		else if (p + 1 < end && p[0] == '>' && p[1] == '>')
			op = 'r', p += 2;
		else
			return 0;
		int64_t r;
		*pp = p;
		if (parse_factor(a, pp, end, &r))
			return -1;
		if (op == '*') {
			if (__builtin_mul_overflow(*v, r, v))
				return fail(a, p, "the product overflows 64 bits");
		} else if (op == '/') {
			if (r == 0)
				return fail(a, p, "division by zero");
			if (r == -1 && *v == INT64_MIN)
				return fail(a, p, "the quotient overflows 64 bits");
			*v /= r;
		} else if (op == 'l')
			*v = (int64_t)((uint64_t)*v << (r & 63));
		else
			*v = (int64_t)((uint64_t)*v >> (r & 63));
	}
}

static int parse_expr(struct asm_ctx *a, const char **pp, const char *end, int64_t *v)
{
	if (parse_term(a, pp, end, v))
		return -1;
	for (;;) {
		const char *p = skip_ws(*pp, end);
		if (p >= end || (*p != '+' && *p != '-'))
			return 0;
		int op = *p++;
		int64_t r;
		*pp = p;
		if (parse_term(a, pp, end, &r))
			return -1;
		if (op == '+' ? __builtin_add_overflow(*v, r, v) : __builtin_sub_overflow(*v, r, v))
			return fail(a, p, "the %s overflows 64 bits", op == '+' ? "sum" : "difference");
	}
}

/* A whole operand [p, end) as an expression. */
static int eval(struct asm_ctx *a, const char *p, const char *end, int64_t *v)
{
	const char *q = p;
	if (parse_expr(a, &q, end, v))
		return -1;
	q = skip_ws(q, end);
	if (q != end)
		return fail(a, q, "unexpected '%.*s'", (int)(end - q), q);
	return 0;
}

/* li's floating-point literal: "1.5", "-2e3", "inf", "-nan". */
static int float_literal(const char *p, const char *end, int64_t *v)
{
	char buf[64];
	size_t n = (size_t)(end - p);
	if (n == 0 || n >= sizeof buf)
		return 0;
	memcpy(buf, p, n);
	buf[n] = 0;
	int isfloat = strpbrk(buf, ".") || strstr(buf, "inf") || strstr(buf, "nan") ||
		      (!strstr(buf, "0x") && strpbrk(buf, "eE") && isdigit((unsigned char)buf[0]));
	if (!isfloat)
		return 0;
	char *e;
	float f = strtof(buf, &e);
	if (*e)
		return 0;
	uint32_t bits;
	memcpy(&bits, &f, 4);
	*v = bits;
	return 1;
}

static const char *trim_end(const char *p, const char *end)
{
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

static int parse_insn(struct asm_ctx *a, const char *p, const char *end, uint8_t *out)
{
	const char *mn = p;
	while (p < end && !isspace((unsigned char)*p))
		p++;
	char name[32];
	if ((size_t)(p - mn) >= sizeof name)
		return fail(a, mn, "unknown instruction '%.*s'", (int)(p - mn), mn);
	memcpy(name, mn, (size_t)(p - mn));
	name[p - mn] = 0;
	enum isa_op op = isa_lookup(name);
	if (op == ISA_OP_INVALID)
		return fail(a, mn, "unknown instruction '%s'", name);
	const struct isa_info *info = &isa_table[op];
	const struct isa_format *fmt = &isa_formats[info->fmt];
	struct isa_insn in;
	memset(&in, 0, sizeof in);
	in.op = op;
	int seen[ISA_MAX_FIELDS] = { 0 };
	unsigned next_pos = 0; /* next positional field */

	p = skip_ws(p, end);
	while (p < end) {
		/* one operand up to a top-level comma */
		const char *q = p;
		int depth = 0;
		while (q < end && (depth || *q != ',')) {
			depth += *q == '(';
			depth -= *q == ')';
			q++;
		}
		const char *oend = trim_end(p, q);
		if (oend == p)
			return fail(a, p, "empty operand");
		const char *eq = memchr(p, '=', (size_t)(oend - p));
		const struct isa_field *f = NULL;
		unsigned fi = 0;
		const char *val = p;
		if (eq) {
			const char *kend = trim_end(p, eq);
			for (fi = 0; fi < fmt->nfields; fi++) {
				const struct isa_field *c = &fmt->fields[fi];
				if ((c->kind == ISA_FK_K || c->kind == ISA_FK_E) &&
				    strlen(c->name) == (size_t)(kend - p) &&
				    memcmp(c->name, p, (size_t)(kend - p)) == 0) {
					f = c;
					break;
				}
			}
			if (!f)
				return fail(a, p, "%s has no operand '%.*s' (operands: %s)", name,
					    (int)(kend - p), p, fmt->synopsis);
			val = skip_ws(eq + 1, oend);
		} else {
			while (next_pos < fmt->nfields && fmt->fields[next_pos].kind != ISA_FK_R &&
			       fmt->fields[next_pos].kind != ISA_FK_I)
				next_pos++;
			if (next_pos >= fmt->nfields)
				return fail(a, p, "too many operands for %s (operands: %s)", name,
					    fmt->synopsis);
			fi = next_pos++;
			f = &fmt->fields[fi];
		}
		if (seen[fi])
			return fail(a, p, "operand '%s' given twice", f->name);
		seen[fi] = 1;
		int64_t v;
		if (f->kind == ISA_FK_R) {
			const char *r = val;
			if (r >= oend || (*r != 'x' && *r != 'X'))
				return fail(a, val, "expected a register x0..x%d for %s", ISA_NREGS - 1,
					    f->name);
			char *e;
			char buf[8] = { 0 };
			size_t n = (size_t)(oend - r - 1);
			if (n == 0 || n >= sizeof buf)
				return fail(a, val, "bad register '%.*s'", (int)(oend - val), val);
			memcpy(buf, r + 1, n);
			long rn = strtol(buf, &e, 10);
			if (*e || rn < 0 || rn >= ISA_NREGS)
				return fail(a, val, "bad register '%.*s'", (int)(oend - val), val);
			v = rn;
		} else if (f->kind == ISA_FK_E) {
			int found = -1;
			for (int k = 0; f->names[k]; k++)
				if (strlen(f->names[k]) == (size_t)(oend - val) &&
				    memcmp(f->names[k], val, (size_t)(oend - val)) == 0)
					found = k;
			if (found < 0) {
				char list[160] = "";
				for (int k = 0; f->names[k]; k++) {
					strncat(list, k ? "|" : "", sizeof list - strlen(list) - 1);
					strncat(list, f->names[k], sizeof list - strlen(list) - 1);
				}
				return fail(a, val, "bad value '%.*s' for %s (one of %s)",
					    (int)(oend - val), val, f->name, list);
			}
			v = found;
		} else if (op == ISA_OP_LI && float_literal(val, oend, &v)) {
			/* stored as fp32 bits */
		} else if (eval(a, val, oend, &v)) {
			return -1;
		}
		isa_field_set(&in, f, v);
		p = q < end ? skip_ws(q + 1, end) : q;
		if (q < end && p >= end)
			return fail(a, p, "operand expected after ','");
	}
	for (unsigned i = 0; i < fmt->nfields; i++) {
		const struct isa_field *f = &fmt->fields[i];
		if (seen[i])
			continue;
		if (f->dflt == ISA_REQ)
			return fail(a, end, "%s needs operand %s (operands: %s)", name, f->name,
				    fmt->synopsis);
		isa_field_set(&in, f, f->dflt);
	}
	char msg[160];
	if (a->pass == 2 && isa_encode(&in, out, msg, sizeof msg))
		return fail(a, mn, "%s", msg);
	return 0;
}

/* One pass over the text; pass 1 collects labels, pass 2 encodes. */
static int run_pass(struct asm_ctx *a, const char *text, uint8_t *code)
{
	a->pc = 0;
	a->line = 0;
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		a->line++;
		a->line_start = p;
		const char *end = eol;
		for (const char *c = p; c < eol; c++)
			if (*c == '#' || *c == ';' || (c[0] == '/' && c + 1 < eol && c[1] == '/')) {
				end = c;
				break;
			}
		end = trim_end(p, end);
		const char *s = skip_ws(p, end);
		/* labels */
		for (;;) {
			const char *q = s;
			while (q < end && is_ident((unsigned char)*q))
				q++;
			if (q > s && q < end && *q == ':' && is_ident_start((unsigned char)*s) &&
			    *s != '.') {
				if (a->pass == 1 && sym_add(a, s, s, (size_t)(q - s), a->pc, 1))
					return -1;
				s = skip_ws(q + 1, end);
				continue;
			}
			break;
		}
		if (s < end) {
			if (strncmp(s, ".equ", 4) == 0 && (s + 4 == end || isspace((unsigned char)s[4]))) {
				const char *n = skip_ws(s + 4, end), *q = n;
				while (q < end && is_ident((unsigned char)*q))
					q++;
				if (q == n || !is_ident_start((unsigned char)*n))
					return fail(a, n, ".equ needs a name");
				const char *c = skip_ws(q, end);
				if (c >= end || *c != ',')
					return fail(a, c, ".equ needs ', value'");
				int64_t v;
				a->forward = 0;
				if (eval(a, c + 1, end, &v))
					return -1;
				/* its value must be known where it stands: a name defined
				 * later, or itself (.equ X, X+1), has no value yet */
				if (a->pass == 1 && a->forward)
					return fail(a, c + 1, ".equ %.*s uses a name not defined before it "
						    "(itself or a later one)", (int)(q - n), n);
				if (a->pass == 1 && sym_add(a, n, n, (size_t)(q - n), v, 0))
					return -1;
			} else if (*s == '.') {
				return fail(a, s, "unknown directive '%.*s'", (int)(end - s), s);
			} else {
				if (parse_insn(a, s, end, code ? code + a->pc * ISA_INSN_BYTES : NULL))
					return -1;
				a->pc++;
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

int isa_assemble(const char *text, const char *filename, struct isa_program *out, char *err,
		 size_t errlen)
{
	struct asm_ctx a = { .file = filename ? filename : "<input>", .err = err, .errlen = errlen };
	out->code = NULL;
	out->ninsns = 0;
	a.pass = 1;
	if (run_pass(&a, text, NULL))
		goto fail;
	size_t n = (size_t)a.pc;
	uint8_t *code = calloc(n ? n : 1, ISA_INSN_BYTES);
	if (!code) {
		snprintf(err, errlen, "%s: out of memory", a.file);
		goto fail;
	}
	a.pass = 2;
	if (run_pass(&a, text, code)) {
		free(code);
		goto fail;
	}
	free(a.syms);
	out->code = code;
	out->ninsns = n;
	return 0;
fail:
	free(a.syms);
	return -1;
}

int isa_assemble_file(const char *path, struct isa_program *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	char *text = malloc(cap);
	size_t got;
	while (text && (got = fread(text + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			char *t = realloc(text, cap *= 2);
			if (!t) {
				free(text);
				text = NULL;
			}
			text = t;
		}
	}
	int rerr = ferror(f);
	fclose(f);
	if (!text || rerr) {
		free(text);
		snprintf(err, errlen, "%s: cannot read file", path);
		return -1;
	}
	text[n] = 0;
	if (memchr(text, 0, n)) {
		free(text);
		snprintf(err, errlen, "%s: not a text file (contains NUL bytes)", path);
		return -1;
	}
	int rc = isa_assemble(text, path, out, err, errlen);
	free(text);
	return rc;
}

void isa_program_free(struct isa_program *p)
{
	free(p->code);
	p->code = NULL;
	p->ninsns = 0;
}
