/* aipp_conf.c: the parser and checks of ATC's AIPP config (aipp_conf.h).
 *
 * Grammar (the subset of protobuf text format ATC's templates use):
 *   file   := { "aipp_op" [":"] "{" { field } "}" }
 *   field  := key ":" value [";" | ","]
 * Values are numbers, true/false, or enum names (static, RGB888_U8, ...).
 * `#` starts a comment to the end of the line.  Ranges are ATC's documented
 * ones where we know them (padding <= 32 per side, image sizes <= 4096,
 * biases and means 0..255, matrix entries int16). */
#include "aipp_conf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lex {
	const char *name, *s;
	int line;
	char *err;
	size_t errlen;
	char tok[128];
	int tok_line;
};

static int perr(struct lex *l, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct lex *l, int line, const char *fmt, ...)
{
	int k = snprintf(l->err, l->errlen, "%s:%d: ", l->name, line);
	va_list ap;
	va_start(ap, fmt);
	if (k >= 0 && (size_t)k < l->errlen)
		vsnprintf(l->err + k, l->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

/* Next token into l->tok: a word (letters, digits, _ . + -), or one of
 * { } : ; , ; "" at the end.  Returns -1 on a character nothing accepts. */
static int next(struct lex *l)
{
	for (;;) {
		while (*l->s && isspace((unsigned char)*l->s)) {
			if (*l->s == '\n')
				l->line++;
			l->s++;
		}
		if (*l->s != '#')
			break;
		while (*l->s && *l->s != '\n')
			l->s++;
	}
	l->tok_line = l->line;
	size_t n = 0;
	if (!*l->s) {
		l->tok[0] = 0;
		return 0;
	}
	if (strchr("{}:;,", *l->s)) {
		l->tok[0] = *l->s++;
		l->tok[1] = 0;
		return 0;
	}
	while (*l->s && (isalnum((unsigned char)*l->s) || strchr("_.+-", *l->s))) {
		if (n + 1 < sizeof l->tok)
			l->tok[n++] = *l->s;
		l->s++;
	}
	l->tok[n] = 0;
	if (!n)
		return perr(l, l->line, "unexpected character '%c'", *l->s);
	return 0;
}

enum kind { K_INT, K_BOOL, K_FLOAT, K_MODE, K_FORMAT, K_UNSUPPORTED };

/* Every key ATC's static template has, with where it goes and its range. */
struct key {
	const char *name;
	enum kind kind;
	size_t off; /* of the int or float in struct aipp_conf */
	double lo, hi;
};

#define OFF(m) offsetof(struct aipp_conf, m)
static const struct key keys[] = {
	{ "aipp_mode", K_MODE, 0, 0, 0 },
	{ "related_input_rank", K_INT, OFF(related_input_rank), 0, 31 },
	{ "input_format", K_FORMAT, OFF(format), 0, 0 },
	{ "src_image_size_w", K_INT, OFF(src_w), 0, 4096 },
	{ "src_image_size_h", K_INT, OFF(src_h), 0, 4096 },
	{ "crop", K_BOOL, OFF(crop), 0, 1 },
	{ "load_start_pos_w", K_INT, OFF(crop_x), 0, 4095 },
	{ "load_start_pos_h", K_INT, OFF(crop_y), 0, 4095 },
	{ "crop_size_w", K_INT, OFF(crop_w), 0, 4096 },
	{ "crop_size_h", K_INT, OFF(crop_h), 0, 4096 },
	{ "padding", K_BOOL, OFF(padding), 0, 1 },
	{ "left_padding_size", K_INT, OFF(pad_l), 0, 32 },
	{ "right_padding_size", K_INT, OFF(pad_r), 0, 32 },
	{ "top_padding_size", K_INT, OFF(pad_t), 0, 32 },
	{ "bottom_padding_size", K_INT, OFF(pad_b), 0, 32 },
	{ "csc_switch", K_BOOL, OFF(csc), 0, 1 },
	{ "rbuv_swap_switch", K_BOOL, OFF(rbuv_swap), 0, 1 },
	{ "ax_swap_switch", K_BOOL, OFF(ax_swap), 0, 1 },
	{ "matrix_r0c0", K_INT, OFF(matrix[0]), -32768, 32767 },
	{ "matrix_r0c1", K_INT, OFF(matrix[1]), -32768, 32767 },
	{ "matrix_r0c2", K_INT, OFF(matrix[2]), -32768, 32767 },
	{ "matrix_r1c0", K_INT, OFF(matrix[3]), -32768, 32767 },
	{ "matrix_r1c1", K_INT, OFF(matrix[4]), -32768, 32767 },
	{ "matrix_r1c2", K_INT, OFF(matrix[5]), -32768, 32767 },
	{ "matrix_r2c0", K_INT, OFF(matrix[6]), -32768, 32767 },
	{ "matrix_r2c1", K_INT, OFF(matrix[7]), -32768, 32767 },
	{ "matrix_r2c2", K_INT, OFF(matrix[8]), -32768, 32767 },
	{ "input_bias_0", K_INT, OFF(in_bias[0]), 0, 255 },
	{ "input_bias_1", K_INT, OFF(in_bias[1]), 0, 255 },
	{ "input_bias_2", K_INT, OFF(in_bias[2]), 0, 255 },
	{ "output_bias_0", K_INT, OFF(out_bias[0]), 0, 255 },
	{ "output_bias_1", K_INT, OFF(out_bias[1]), 0, 255 },
	{ "output_bias_2", K_INT, OFF(out_bias[2]), 0, 255 },
	{ "mean_chn_0", K_INT, OFF(mean[0]), 0, 255 },
	{ "mean_chn_1", K_INT, OFF(mean[1]), 0, 255 },
	{ "mean_chn_2", K_INT, OFF(mean[2]), 0, 255 },
	{ "mean_chn_3", K_INT, OFF(mean[3]), 0, 255 },
	{ "min_chn_0", K_FLOAT, OFF(min[0]), 0, 255 },
	{ "min_chn_1", K_FLOAT, OFF(min[1]), 0, 255 },
	{ "min_chn_2", K_FLOAT, OFF(min[2]), 0, 255 },
	{ "min_chn_3", K_FLOAT, OFF(min[3]), 0, 255 },
	{ "var_reci_chn_0", K_FLOAT, OFF(var[0]), -65504, 65504 },
	{ "var_reci_chn_1", K_FLOAT, OFF(var[1]), -65504, 65504 },
	{ "var_reci_chn_2", K_FLOAT, OFF(var[2]), -65504, 65504 },
	{ "var_reci_chn_3", K_FLOAT, OFF(var[3]), -65504, 65504 },
	/* real ATC keys this implementation does not do */
	{ "resize", K_UNSUPPORTED, 0, 0, 0 },
	{ "resize_output_w", K_UNSUPPORTED, 0, 0, 0 },
	{ "resize_output_h", K_UNSUPPORTED, 0, 0, 0 },
	{ "input_edge_idx", K_UNSUPPORTED, 0, 0, 0 },
	{ "max_src_image_size", K_UNSUPPORTED, 0, 0, 0 },
	{ "support_rotation", K_UNSUPPORTED, 0, 0, 0 },
	{ "padding_value", K_UNSUPPORTED, 0, 0, 0 },
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const struct {
	const char *name;
	int fmt;
} formats[] = {
	{ "YUV420SP_U8", AIPP_YUV420SP_U8 },
	{ "XRGB8888_U8", AIPP_XRGB8888_U8 },
	{ "RGB888_U8", AIPP_RGB888_U8 },
	{ "YUV400_U8", AIPP_YUV400_U8 },
};

const char *aipp_format_name(int format)
{
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (formats[i].fmt == format)
			return formats[i].name;
	return "?";
}

static void defaults(struct aipp_conf *a, int line)
{
	memset(a, 0, sizeof *a);
	a->line = a->line_format = line;
	a->related_input_rank = 0;
	for (int k = 0; k < 4; k++)
		a->var[k] = 1.0f;
	/* identity CSC (ATC's templates always give all nine) */
	a->matrix[0] = a->matrix[4] = a->matrix[8] = 256;
}

static int parse_value(struct lex *l, const struct key *k, struct aipp_conf *a)
{
	const char *v = l->tok;
	int line = l->tok_line;
	if (!*v || strchr("{}:;,", *v))
		return perr(l, line, "%s: a value is missing", k->name);
	if (k->kind == K_UNSUPPORTED)
		return perr(l, line, "%s: not supported yet", k->name);
	if (k->kind == K_MODE) {
		if (!strcmp(v, "static"))
			return 0;
		if (!strcmp(v, "dynamic"))
			return perr(l, line, "aipp_mode: dynamic: not supported yet (static only)");
		return perr(l, line, "aipp_mode: '%s' is not static or dynamic", v);
	}
	if (k->kind == K_FORMAT) {
		for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
			if (!strcmp(v, formats[i].name)) {
				a->format = formats[i].fmt;
				a->line_format = line;
				return 0;
			}
		static const char *const later[] = { "ARGB8888_U8", "YUYV_U8", "YUV422SP_U8",
						     "AYUV444_U8", "RGB16", "RGB20", "RGB24",
						     "RGB8_IR", "RGB16_IR", "RGB24_IR", "RAW10",
						     "RAW12", "RAW16", "RAW24" };
		for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
			if (!strcmp(v, later[i]))
				return perr(l, line, "input_format: %s: not supported yet "
						     "(YUV420SP_U8, XRGB8888_U8, RGB888_U8, YUV400_U8)", v);
		return perr(l, line, "input_format: unknown format '%s' (YUV420SP_U8, "
				     "XRGB8888_U8, RGB888_U8, YUV400_U8)", v);
	}
	if (k->kind == K_BOOL) {
		int b = !strcmp(v, "true") || !strcmp(v, "1") ? 1
			: !strcmp(v, "false") || !strcmp(v, "0") ? 0 : -1;
		if (b < 0)
			return perr(l, line, "%s: '%s' is not true or false", k->name, v);
		*(int *)(void *)((char *)a + k->off) = b;
		return 0;
	}
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (*end || end == v || errno || !isfinite(d))
		return perr(l, line, "%s: '%s' is not a number", k->name, v);
	if (k->kind == K_INT && d != floor(d))
		return perr(l, line, "%s: '%s' is not an integer", k->name, v);
	if (d < k->lo || d > k->hi)
		return perr(l, line, "%s: %s is out of range [%g, %g]", k->name, v, k->lo, k->hi);
	if (k->kind == K_INT)
		*(int *)(void *)((char *)a + k->off) = (int)d;
	else
		*(float *)(void *)((char *)a + k->off) = (float)d;
	return 0;
}

int aipp_conf_parse_text(const char *name, const char *text, struct aipp_conf *ops, int max,
			 int *n, char *err, size_t errlen)
{
	struct lex l = { name, text, 1, err, errlen, "", 1 };
	*n = 0;
	for (;;) {
		if (next(&l))
			return -1;
		if (!l.tok[0])
			break;
		if (strcmp(l.tok, "aipp_op"))
			return perr(&l, l.tok_line, "expected aipp_op, found '%s'", l.tok);
		if (*n >= max)
			return perr(&l, l.tok_line, "more than %d aipp_op blocks", max);
		struct aipp_conf *a = &ops[(*n)++];
		defaults(a, l.tok_line);
		if (next(&l))
			return -1;
		if (!strcmp(l.tok, ":") && next(&l))
			return -1;
		if (strcmp(l.tok, "{"))
			return perr(&l, l.tok_line, "expected '{' after aipp_op");
		unsigned char seen[NKEYS] = { 0 };
		int have_mode = 0, have_format = 0;
		for (;;) {
			if (next(&l))
				return -1;
			if (!l.tok[0])
				return perr(&l, a->line, "aipp_op block is not closed");
			if (!strcmp(l.tok, "}"))
				break;
			if (!strcmp(l.tok, ";") || !strcmp(l.tok, ","))
				continue;
			size_t ki = 0;
			while (ki < NKEYS && strcmp(keys[ki].name, l.tok))
				ki++;
			int line = l.tok_line;
			if (ki == NKEYS)
				return perr(&l, line, "unknown key '%s' in aipp_op", l.tok);
			if (seen[ki]++)
				return perr(&l, line, "%s is given twice", keys[ki].name);
			if (next(&l))
				return -1;
			if (strcmp(l.tok, ":"))
				return perr(&l, line, "expected ':' after %s", keys[ki].name);
			if (next(&l) || parse_value(&l, &keys[ki], a))
				return -1;
			have_mode |= keys[ki].kind == K_MODE;
			have_format |= keys[ki].kind == K_FORMAT;
			if (!strncmp(keys[ki].name, "src_image_size", 14) && !a->line_src)
				a->line_src = line;
			if ((!strncmp(keys[ki].name, "crop", 4) || !strncmp(keys[ki].name, "load", 4)) &&
			    !a->line_crop)
				a->line_crop = line;
			if (strstr(keys[ki].name, "padding") && !a->line_pad)
				a->line_pad = line;
		}
		if (!have_mode)
			return perr(&l, a->line, "aipp_op: aipp_mode is missing (static)");
		if (!have_format)
			return perr(&l, a->line, "aipp_op: input_format is missing");
		if (a->format == AIPP_YUV400_U8 && (a->csc || a->rbuv_swap))
			return perr(&l, a->line, "YUV400_U8 has one channel: csc_switch and "
						 "rbuv_swap_switch do not apply");
		if (a->ax_swap && a->format != AIPP_XRGB8888_U8)
			return perr(&l, a->line, "ax_swap_switch applies to XRGB8888_U8 only");
		for (int k = 0; k < *n - 1; k++)
			if (ops[k].related_input_rank == a->related_input_rank)
				return perr(&l, a->line, "a second aipp_op for related_input_rank %d "
							 "(line %d has one)",
					    a->related_input_rank, ops[k].line);
	}
	if (!*n)
		return perr(&l, l.line, "no aipp_op block");
	return 0;
}

int aipp_conf_parse(const char *path, struct aipp_conf *ops, int max, int *n, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return -1;
			}
			buf = nb;
		}
		size_t k = fread(buf + len, 1, 4096, f);
		len += k;
		if (k < 4096)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		snprintf(err, errlen, "%s: read error", path);
		return -1;
	}
	buf[len] = 0;
	int rc = aipp_conf_parse_text(path, buf, ops, max, n, err, errlen);
	free(buf);
	return rc;
}

int aipp_channels(const struct aipp_conf *a) { return a->format == AIPP_YUV400_U8 ? 1 : 3; }

int aipp_conf_resolve(struct aipp_conf *a, const char *path, int64_t c, int64_t h, int64_t w,
		      char *err, size_t errlen)
{
	struct lex l = { path, "", 0, err, errlen, "", 0 };
	if (c != aipp_channels(a))
		return perr(&l, a->line_format, "input_format %s gives %d channel%s; the model "
						 "input has %lld",
			    aipp_format_name(a->format), aipp_channels(a),
			    aipp_channels(a) > 1 ? "s" : "", (long long)c);
	if (!a->padding)
		a->pad_l = a->pad_r = a->pad_t = a->pad_b = 0;
	int64_t iw = w - a->pad_l - a->pad_r, ih = h - a->pad_t - a->pad_b;
	int pl = a->line_pad ? a->line_pad : a->line;
	if (iw < 1 || ih < 1)
		return perr(&l, pl, "the padding (%d+%d x %d+%d) leaves no image in the model's "
				    "%lldx%lld input",
			    a->pad_l, a->pad_r, a->pad_t, a->pad_b, (long long)h, (long long)w);
	if (!a->crop) {
		a->crop_x = a->crop_y = 0;
		a->crop_w = a->crop_h = 0;
	}
	/* sizes left at 0 are the model's (ATC's rule), minus the padding */
	if (!a->crop_w)
		a->crop_w = a->crop ? (int)iw : a->src_w ? a->src_w : (int)iw;
	if (!a->crop_h)
		a->crop_h = a->crop ? (int)ih : a->src_h ? a->src_h : (int)ih;
	if (!a->src_w)
		a->src_w = a->crop_x + a->crop_w;
	if (!a->src_h)
		a->src_h = a->crop_y + a->crop_h;
	int cl = a->line_crop ? a->line_crop : a->line_src ? a->line_src : a->line;
	if (a->crop_x + a->crop_w > a->src_w || a->crop_y + a->crop_h > a->src_h)
		return perr(&l, cl, "the crop window [%d, %d) x [%d, %d) (w x h) is outside the "
				    "%dx%d source image",
			    a->crop_x, a->crop_x + a->crop_w, a->crop_y, a->crop_y + a->crop_h,
			    a->src_w, a->src_h);
	if (a->format == AIPP_YUV420SP_U8 &&
	    (a->src_w % 2 || a->src_h % 2 || a->crop_x % 2 || a->crop_y % 2))
		return perr(&l, a->line_src ? a->line_src : a->line,
			    "YUV420SP_U8 needs an even source size and crop start (the chroma is "
			    "subsampled 2x2)");
	if (a->crop_w != iw || a->crop_h != ih) {
		int ln = a->line_pad ? a->line_pad : cl;
		return perr(&l, ln, "shape mismatch: the %s image (%dx%d) plus padding (%d+%d, "
				    "%d+%d) is %dx%d, the model input is %lldx%lld (h x w)",
			    a->crop ? "cropped" : "source", a->crop_h, a->crop_w, a->pad_t, a->pad_b,
			    a->pad_l, a->pad_r, a->crop_h + a->pad_t + a->pad_b,
			    a->crop_w + a->pad_l + a->pad_r, (long long)h, (long long)w);
	}
	return 0;
}

void aipp_conf_block(const struct aipp_conf *a, uint32_t words[AIPP_CFG_WORDS])
{
	memset(words, 0, AIPP_CFG_WORDS * sizeof *words);
	words[AIPP_W_MAGIC] = AIPP_CFG_MAGIC;
	words[AIPP_W_FORMAT] = (uint32_t)a->format;
	words[AIPP_W_SRC_W] = (uint32_t)a->src_w;
	words[AIPP_W_SRC_H] = (uint32_t)a->src_h;
	words[AIPP_W_CROP_X] = (uint32_t)a->crop_x;
	words[AIPP_W_CROP_Y] = (uint32_t)a->crop_y;
	words[AIPP_W_CROP_W] = (uint32_t)a->crop_w;
	words[AIPP_W_CROP_H] = (uint32_t)a->crop_h;
	words[AIPP_W_PAD_L] = (uint32_t)a->pad_l;
	words[AIPP_W_PAD_R] = (uint32_t)a->pad_r;
	words[AIPP_W_PAD_T] = (uint32_t)a->pad_t;
	words[AIPP_W_PAD_B] = (uint32_t)a->pad_b;
	words[AIPP_W_RBUV_SWAP] = (uint32_t)a->rbuv_swap;
	words[AIPP_W_AX_SWAP] = (uint32_t)a->ax_swap;
	words[AIPP_W_CSC] = (uint32_t)a->csc;
	for (int k = 0; k < 9; k++)
		words[AIPP_W_MATRIX + k] = (uint32_t)a->matrix[k];
	for (int k = 0; k < 3; k++) {
		words[AIPP_W_IN_BIAS + k] = (uint32_t)a->in_bias[k];
		words[AIPP_W_OUT_BIAS + k] = (uint32_t)a->out_bias[k];
	}
	for (int k = 0; k < 4; k++) {
		words[AIPP_W_MEAN + k] = (uint32_t)a->mean[k];
		memcpy(&words[AIPP_W_MIN + k], &a->min[k], 4);
		memcpy(&words[AIPP_W_VAR + k], &a->var[k], 4);
	}
	words[AIPP_W_CHANNELS] = (uint32_t)aipp_channels(a);
}

int aipp_image_dims(const struct aipp_conf *a, int64_t n, int64_t *dims)
{
	dims[0] = n;
	switch (a->format) {
	case AIPP_RGB888_U8:
	case AIPP_XRGB8888_U8:
		dims[1] = a->src_h;
		dims[2] = a->src_w;
		dims[3] = a->format == AIPP_RGB888_U8 ? 3 : 4;
		return 4;
	case AIPP_YUV420SP_U8:
		dims[1] = (int64_t)a->src_h * 3 / 2;
		dims[2] = a->src_w;
		return 3;
	default:
		dims[1] = a->src_h;
		dims[2] = a->src_w;
		return 3;
	}
}
