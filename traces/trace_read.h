/* trace_read.h: readers for the files of a trace directory, for tools that
 * analyse a trace from its files alone (the advisor, the plots).
 *
 *   trc_csv   a whole CSV file: a header row naming the columns, then rows
 *             of the same width.  Fields may be quoted ("..." with "" for a
 *             quote, holding commas and line breaks); lines end in LF or
 *             CRLF; a UTF-8 byte-order mark is skipped.  Errors name the
 *             file and the line.
 *   trc_json  a JSON document as a tree (objects keep their key order).
 *             Errors name the file, line and column. */
#ifndef DV_TRACE_READ_H
#define DV_TRACE_READ_H

#include <stddef.h>

struct trc_csv {
	char *path;      /* for messages */
	size_t ncols, nrows;
	char **header;   /* [ncols] */
	char **cell;     /* [nrows * ncols], row-major */
	unsigned *line;  /* [nrows]: the line each row starts on (the header is line 1) */
	char *text;      /* storage of every cell */
};

/* Read path.  Returns 0, or -1 with err "path:line: what" (or "path: why"
 * when it cannot be opened). */
int trc_csv_read(const char *path, struct trc_csv *t, char *err, size_t errlen);
void trc_csv_free(struct trc_csv *t);
/* The index of the first of the names (aliases, NULL-terminated) the header
 * has, or -1. */
int trc_csv_col(const struct trc_csv *t, const char *const *names);
const char *trc_csv_cell(const struct trc_csv *t, size_t row, int col);
/* The cell as a finite number.  -1 with err "path:line: column 'C': 'x' is
 * not a number". */
int trc_csv_num(const struct trc_csv *t, size_t row, int col, double *v, char *err,
		size_t errlen);

enum trc_json_type { TRC_JSON_NULL, TRC_JSON_BOOL, TRC_JSON_NUM, TRC_JSON_STR, TRC_JSON_ARR,
		     TRC_JSON_OBJ };

struct trc_json {
	enum trc_json_type type;
	double num;             /* NUM; BOOL as 0 or 1 */
	char *str;              /* STR */
	size_t n;               /* ARR and OBJ: items */
	struct trc_json *item;  /* [n] */
	char **key;             /* OBJ: [n] */
};

/* Parse the file.  Returns a tree to free with trc_json_free, or NULL with
 * err "path:line:col: what". */
struct trc_json *trc_json_read(const char *path, char *err, size_t errlen);
/* Parse text (NUL-terminated); errors say "line:col: what". */
struct trc_json *trc_json_parse(const char *text, char *err, size_t errlen);
void trc_json_free(struct trc_json *j);
/* obj's member key (the first, if repeated), or NULL when obj is not an
 * object or has no such key. */
const struct trc_json *trc_json_get(const struct trc_json *obj, const char *key);
/* obj's member key as a number: 1 and *v set, or 0 when absent or not a
 * number. */
int trc_json_num(const struct trc_json *obj, const char *key, double *v);
/* obj's member key as a string, or NULL. */
const char *trc_json_str(const struct trc_json *obj, const char *key);

/* Where a trace's file stem.ext is: dir/stem.ext (simrun --trace's
 * layout), else msprof's, newest name first among
 *   dir/mindstudio_profiler_output/stem_*.ext
 *   dir/device_N/summary/stem_*.ext
 *   dir/PROF_.../mindstudio_profiler_output/stem_*.ext
 *   dir/PROF_.../device_N/summary/stem_*.ext
 * (dir may be the PROF_ folder or the folder holding it).  0 with the path
 * in out; -1 (out: dir/stem.ext, for the caller's message) when none is. */
int trc_find(const char *dir, const char *stem, const char *ext, char *out, size_t n);

#endif
