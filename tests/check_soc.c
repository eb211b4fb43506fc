/* check_soc.c: tests for sim/soc.c (SoC ini loading, --set, dumps).
 *
 * The shipped files are found through $DAVINCI_SOC_DIR (the build sets it);
 * "sim/soc" relative to the cwd otherwise.  Broken files are made by editing a
 * dump of a shipped SoC, so each error test changes exactly one thing.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, open_memstream */
#endif

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soc.h"

#define ERRLEN 2048

/* Per-test scratch directory; the checked fixture runs in each test's child. */
static char tmpdir[256];

static void tmp_setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/check_soc.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", tmpdir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmpdir);
}

/* Write text to <tmpdir>/<fname>; returns the path in a static buffer. */
static const char *write_file(const char *fname, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, fname);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static void load_ok(const char *name, struct soc_config *cfg)
{
	char err[ERRLEN] = "";

	if (soc_load(name, cfg, err, sizeof err) != 0)
		ck_abort_msg("soc_load(%s) failed: %s", name, err);
}

/* A shipped SoC as ini text (malloc'd), the base every broken file edits. */
static char *dump_text(const char *soc)
{
	struct soc_config cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	load_ok(soc, &cfg);
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	soc_dump(&cfg, f);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* Replace the line "key = ..." of [section] by `line` (NULL deletes it).
 * Returns malloc'd text; *lineno gets the 1-based number of that line. */
static char *edit(const char *text, const char *section, const char *key, const char *line,
		  int *lineno)
{
	char hdr[64], pat[64];
	const char *sec, *at, *eol, *c;
	char *out;
	size_t head;
	int n = 1;

	snprintf(hdr, sizeof hdr, "\n[%s]\n", section);
	snprintf(pat, sizeof pat, "\n%s = ", key);
	sec = strstr(text, hdr);
	ck_assert_msg(sec != NULL, "no [%s] in dump", section);
	at = strstr(sec + 1, pat);
	ck_assert_msg(at != NULL, "no %s in [%s]", key, section);
	at++;
	eol = strchr(at, '\n');
	ck_assert_ptr_nonnull(eol);
	for (c = text; c < at; c++)
		n += *c == '\n';
	if (lineno)
		*lineno = n;
	head = (size_t)(at - text);
	out = malloc(strlen(text) + (line ? strlen(line) : 0) + 2);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, head);
	out[head] = '\0';
	if (line) {
		strcat(out, line);
		strcat(out, "\n");
	}
	strcat(out, eol + 1);
	return out;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* Load `text` from a temp file and expect failure with `want` in the message;
 * line > 0 also requires the "path:line:" prefix. */
static void expect_load_error(const char *fname, const char *text, int line, const char *want)
{
	struct soc_config cfg;
	char err[ERRLEN] = "", where[600];
	const char *path = write_file(fname, text);

	ck_assert_int_eq(soc_load(path, &cfg, err, sizeof err), -1);
	if (line > 0)
		snprintf(where, sizeof where, "%s:%d: ", path, line);
	else
		snprintf(where, sizeof where, "%s: ", path);
	ck_assert_msg(strncmp(err, where, strlen(where)) == 0, "'%s' does not start with '%s'",
		      err, where);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
}

static void expect_edit_error(const char *section, const char *key, const char *line,
			      const char *want)
{
	char *base = dump_text("Ascend910");
	int lineno;
	char *text = edit(base, section, key, line, &lineno);

	expect_load_error("bad.ini", text, line ? lineno : 0, want);
	free(text);
	free(base);
}

/* Append lines to a valid dump; the error must point at the last line but
 * `back`. */
static void expect_append_error(const char *extra, int back, const char *want)
{
	char *base = dump_text("Ascend910");
	char *text = malloc(strlen(base) + strlen(extra) + 1);

	ck_assert_ptr_nonnull(text);
	strcpy(text, base);
	strcat(text, extra);
	expect_load_error("bad.ini", text, count_lines(text) - back, want);
	free(text);
	free(base);
}

static void expect_set_error(const char *assignment, const char *want)
{
	struct soc_config cfg, before;
	char err[ERRLEN] = "";

	load_ok("Ascend910", &cfg);
	before = cfg;
	ck_assert_int_eq(soc_set(&cfg, assignment, err, sizeof err), -1);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert_msg(memcmp(&cfg, &before, sizeof cfg) == 0, "failed --set changed cfg");
}

/* The numeric members follow name[] and path[]; path legitimately differs. */
static void assert_same_numbers(const struct soc_config *a, const struct soc_config *b)
{
	size_t start = offsetof(struct soc_config, path) + sizeof a->path;

	ck_assert_str_eq(a->name, b->name);
	ck_assert_msg(memcmp((const char *)a + start, (const char *)b + start,
			     sizeof *a - start) == 0, "numeric members differ after reload");
}

START_TEST(test_shipped)
{
	static const struct {
		const char *name;
		int64_t cores;
		double mhz;
	} socs[] = {
		{ "Ascend310", 2, 680 },
		{ "Ascend910", 32, 1000 },
		{ "Ascend310P3", 8, 1080 },
	};
	struct soc_config cfg;
	size_t i;

	for (i = 0; i < sizeof socs / sizeof socs[0]; i++) {
		load_ok(socs[i].name, &cfg);
		ck_assert_str_eq(cfg.name, socs[i].name);
		ck_assert_int_eq(cfg.core_count, socs[i].cores);
		ck_assert_double_eq(cfg.core_freq_mhz, socs[i].mhz);
		ck_assert_int_eq(cfg.cube_m * cfg.cube_k * cfg.cube_n, 4096);
		ck_assert_int_eq(cfg.l2_line_bytes, 512);
		ck_assert_ptr_nonnull(strstr(cfg.path, socs[i].name));
	}
	load_ok("Ascend910", &cfg);
	ck_assert_double_eq(cfg.hbm_bandwidth_gbps, 1200);
	ck_assert_int_eq(cfg.core_event_ids, 4);
}
END_TEST

/* [soc] memory names main memory's technology for the reports; a file
 * without it (written before the key) loads and says "main memory". */
START_TEST(test_memory_name)
{
	static const char *const want[][2] = {
		{ "Ascend310", "LPDDR4X" }, { "Ascend910", "HBM2" }, { "Ascend310P3", "LPDDR4X" }
	};
	struct soc_config cfg;
	char err[ERRLEN] = "";

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		load_ok(want[i][0], &cfg);
		ck_assert_str_eq(cfg.memory, want[i][1]);
	}
	char *base = dump_text("Ascend910");
	char *text = edit(base, "soc", "memory", NULL, NULL);
	load_ok(write_file("nomem.ini", text), &cfg);
	ck_assert_str_eq(cfg.memory, "main memory");
	ck_assert_int_eq(soc_set(&cfg, "soc.memory=HBM2e", err, sizeof err), 0);
	ck_assert_str_eq(cfg.memory, "HBM2e");
	expect_set_error("soc.memory=a/b", "soc.memory = 'a/b'");
	expect_append_error("[soc]\nmemory = DDR4\n", 0, "duplicate key soc.memory");
	free(text);
	free(base);
}
END_TEST

START_TEST(test_load_by_path)
{
	struct soc_config a, b;
	char path[600];

	load_ok("Ascend310P3", &a);
	snprintf(path, sizeof path, "%s/Ascend310P3.ini", soc_dir());
	load_ok(path, &b);
	ck_assert_str_eq(b.path, path);
	assert_same_numbers(&a, &b);
}
END_TEST

START_TEST(test_set_get)
{
	struct soc_config cfg;
	char err[ERRLEN] = "";
	double v;

	load_ok("Ascend910", &cfg);
	ck_assert_int_eq(soc_set(&cfg, "core.count=4", err, sizeof err), 0);
	ck_assert_int_eq(soc_set(&cfg, " hbm.bandwidth_gbps = 800.5 ", err, sizeof err), 0);
	ck_assert_int_eq(soc_set(&cfg, "soc.name=Ascend910-4c", err, sizeof err), 0);
	ck_assert_int_eq(cfg.core_count, 4);
	ck_assert_str_eq(cfg.name, "Ascend910-4c");
	ck_assert_int_eq(soc_get(&cfg, "core.count", &v), 0);
	ck_assert_double_eq(v, 4);
	ck_assert_int_eq(soc_get(&cfg, "hbm.bandwidth_gbps", &v), 0);
	ck_assert_double_eq(v, 800.5);
	ck_assert_int_eq(soc_get(&cfg, "core.nope", &v), -1);
	ck_assert_int_eq(soc_get(&cfg, "count", &v), -1);
}
END_TEST

START_TEST(test_inline_comment)
{
	struct soc_config cfg;
	char *base = dump_text("Ascend910");
	char *text = edit(base, "core", "count", "count = 16 ; inline comment", NULL);

	load_ok(write_file("inline.ini", text), &cfg);
	ck_assert_int_eq(cfg.core_count, 16);
	free(text);
	free(base);
}
END_TEST

START_TEST(test_err_unknown_key)
{
	expect_append_error("[core]\nbogus = 1\n", 0, "unknown key 'bogus' in [core]");
	/* the message lists the valid keys of the section */
	expect_append_error("[core]\nbogus = 1\n", 0, "freq_mhz");
}
END_TEST

START_TEST(test_err_unknown_section)
{
	expect_append_error("[bogus]\nx = 1\n", 1, "unknown section [bogus]");
	/* even an empty section is refused, at its header */
	expect_append_error("[bogus]\n", 0, "unknown section [bogus]");
}
END_TEST

START_TEST(test_err_duplicate)
{
	expect_append_error("[core]\ncount = 4\n", 0, "duplicate key core.count");
	expect_append_error("[soc]\nname = Other\n", 0, "duplicate key soc.name");
}
END_TEST

START_TEST(test_err_missing)
{
	expect_edit_error("hbm", "size_mb", NULL, "missing key hbm.size_mb");
	expect_edit_error("soc", "name", NULL, "missing key soc.name");
}
END_TEST

START_TEST(test_err_not_numeric)
{
	expect_edit_error("core", "count", "count = many", "core.count = 'many' is not a decimal");
	expect_edit_error("core", "count", "count = 3.5", "not a decimal integer");
	expect_edit_error("core", "count", "count = 0x20", "not a decimal integer");
	expect_edit_error("core", "freq_mhz", "freq_mhz = 1GHz", "core.freq_mhz = '1GHz'");
	expect_edit_error("core", "freq_mhz", "freq_mhz = nan", "not a finite number");
	/* '#' is not an inline comment in inih, so it stays in the value */
	expect_edit_error("core", "count", "count = 4 # four", "not a decimal integer");
}
END_TEST

START_TEST(test_err_range)
{
	expect_edit_error("core", "count", "count = 0", "core.count = 0 is out of range [1, 1024]");
	expect_edit_error("core", "freq_mhz", "freq_mhz = 20000",
			  "out of range [1, 10000] MHz");
	expect_edit_error("core", "count", "count = 99999999999999999999", "out of range");
}
END_TEST

START_TEST(test_err_pow2)
{
	expect_edit_error("l2", "line_bytes", "line_bytes = 500",
			  "l2.line_bytes = 500 is not a power of two");
	expect_edit_error("ub", "align_bytes", "align_bytes = 48", "not a power of two");
}
END_TEST

START_TEST(test_err_syntax)
{
	char *base = dump_text("Ascend910");
	int lineno;
	char *text = edit(base, "core", "count", "count = 32\n  more", &lineno);

	expect_append_error("[core]\nthis line has no equals sign\n", 0, "syntax error");
	/* inih would read the indented line as more value for count */
	expect_load_error("indent.ini", text, lineno + 1, "indented line continues 'count'");
	free(text);
	free(base);
}
END_TEST

START_TEST(test_err_outside_section)
{
	char *base = dump_text("Ascend910");
	char *text = malloc(strlen(base) + 16);

	ck_assert_ptr_nonnull(text);
	strcpy(text, "count = 3\n");
	strcat(text, base);
	expect_load_error("bad.ini", text, 1, "outside any [section]");
	free(text);
	free(base);
}
END_TEST

START_TEST(test_long_lines)
{
	struct soc_config cfg;
	char comment[400], value[400];
	char *base = dump_text("Ascend910"), *text;
	int lineno;

	/* a long comment is fine ... */
	memset(comment, 'x', sizeof comment - 1);
	comment[0] = ';';
	comment[sizeof comment - 1] = '\0';
	text = malloc(strlen(base) + sizeof comment + 2);
	ck_assert_ptr_nonnull(text);
	sprintf(text, "%s\n%s", comment, base);
	load_ok(write_file("comment.ini", text), &cfg);
	ck_assert_int_eq(cfg.core_count, 32);
	free(text);

	/* ... a long key line is refused, not split into two lines by inih */
	memset(value, '1', sizeof value - 1);
	value[sizeof value - 1] = '\0';
	memcpy(value, "count = ", 8);
	text = edit(base, "core", "count", value, &lineno);
	expect_load_error("long.ini", text, lineno, "line longer than");
	free(text);
	free(base);
}
END_TEST

START_TEST(test_err_missing_file)
{
	struct soc_config cfg;
	char err[ERRLEN] = "", path[600];

	snprintf(path, sizeof path, "%s/nope.ini", tmpdir);
	ck_assert_int_eq(soc_load(path, &cfg, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "cannot open"));
}
END_TEST

START_TEST(test_set_errors)
{
	expect_set_error("core.bogus=1", "unknown key 'bogus' in [core]");
	expect_set_error("core.bogus=1", "count, freq_mhz, queue_depth");
	expect_set_error("cores.count=1", "unknown section [cores]");
	expect_set_error("cores.count=1", "sections: soc, core, hbm");
	expect_set_error("core.count", "expected section.key=value");
	expect_set_error("count=3", "expected section.key=value");
	expect_set_error("core.count=abc", "core.count = 'abc' is not a decimal integer");
	expect_set_error("core.freq_mhz=fast", "is not a number");
	expect_set_error("core.count=0", "out of range [1, 1024]");
	expect_set_error("l2.line_bytes=96", "not a power of two");
	expect_set_error("soc.name=has space", "soc.name");
}
END_TEST

START_TEST(test_unknown_chip)
{
	struct soc_config cfg;
	char err[ERRLEN] = "", saved[512];

	ck_assert_int_eq(soc_load("Ascend999", &cfg, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "unknown SoC 'Ascend999'") != NULL, "%s", err);
	ck_assert_msg(strstr(err, " Ascend310 ") != NULL, "%s", err);
	ck_assert_msg(strstr(err, " Ascend310P3") != NULL, "%s", err);
	ck_assert_msg(strstr(err, " Ascend910") != NULL, "%s", err);

	/* and the listing follows DAVINCI_SOC_DIR (restored below for CK_FORK=no) */
	snprintf(saved, sizeof saved, "%s", getenv("DAVINCI_SOC_DIR"));
	write_file("Chip1.ini", "");
	write_file("notes.txt", "");
	ck_assert_int_eq(setenv("DAVINCI_SOC_DIR", tmpdir, 1), 0);
	ck_assert_str_eq(soc_dir(), tmpdir);
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "available in") && strstr(err, " Chip1"), "%s", err);
	ck_assert_msg(strstr(err, "notes") == NULL, "%s", err);
	setenv("DAVINCI_SOC_DIR", saved, 1);
}
END_TEST

START_TEST(test_roundtrip)
{
	static const char *const socs[] = { "Ascend310", "Ascend910", "Ascend310P3" };
	struct soc_config a, b;
	char err[ERRLEN] = "";
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof socs / sizeof socs[0]; i++) {
		char path[600];

		load_ok(socs[i], &a);
		/* doubles with no short decimal form must survive too */
		ck_assert_int_eq(soc_set(&a, "hbm.latency_ns=0.30000000000000004", err,
					 sizeof err), 0);
		ck_assert_int_eq(soc_set(&a, "mte.gm_read_bytes_per_cycle=123.456789012345678",
					 err, sizeof err), 0);
		snprintf(path, sizeof path, "%s/dump%zu.ini", tmpdir, i);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		soc_dump(&a, f);
		ck_assert_int_eq(fclose(f), 0);
		load_ok(path, &b);
		assert_same_numbers(&a, &b);
	}
}
END_TEST

START_TEST(test_dump_json)
{
	struct soc_config cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	load_ok("Ascend310", &cfg);
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	soc_dump_json(&cfg, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"soc\": \"Ascend310\""));
	ck_assert_ptr_nonnull(strstr(text, "\"core.count\": 2,"));
	ck_assert_ptr_nonnull(strstr(text, "\"core.freq_mhz\": 680,"));
	ck_assert_ptr_nonnull(strstr(text, "\"hbm.bandwidth_gbps\": 51.2,"));
	ck_assert_ptr_nonnull(strstr(text, "\"mte.local_latency_cycles\": 16,"));
	ck_assert_ptr_nonnull(strstr(text, "\"runtime.task_gap_us\": 12.4,\n"));
	ck_assert_ptr_nonnull(strstr(text, "\"runtime.model_exec_us\": 0\n}"));
	free(text);
}
END_TEST

static Suite *soc_suite(void)
{
	Suite *s = suite_create("soc");
	TCase *core = tcase_create("Core");
	TCase *limits = tcase_create("Limits");

	tcase_add_checked_fixture(core, tmp_setup, tmp_teardown);
	tcase_add_checked_fixture(limits, tmp_setup, tmp_teardown);
	tcase_add_test(core, test_shipped);
	tcase_add_test(core, test_memory_name);
	tcase_add_test(core, test_load_by_path);
	tcase_add_test(core, test_set_get);
	tcase_add_test(core, test_inline_comment);
	tcase_add_test(core, test_roundtrip);
	tcase_add_test(core, test_dump_json);
	tcase_add_test(limits, test_err_unknown_key);
	tcase_add_test(limits, test_err_unknown_section);
	tcase_add_test(limits, test_err_duplicate);
	tcase_add_test(limits, test_err_missing);
	tcase_add_test(limits, test_err_not_numeric);
	tcase_add_test(limits, test_err_range);
	tcase_add_test(limits, test_err_pow2);
	tcase_add_test(limits, test_err_syntax);
	tcase_add_test(limits, test_err_outside_section);
	tcase_add_test(limits, test_long_lines);
	tcase_add_test(limits, test_err_missing_file);
	tcase_add_test(limits, test_set_errors);
	tcase_add_test(limits, test_unknown_chip);
	suite_add_tcase(s, core);
	suite_add_tcase(s, limits);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	/* soc_dir() reads the variable, so the fallback goes into the environment. */
	if (!getenv("DAVINCI_SOC_DIR") || !*getenv("DAVINCI_SOC_DIR"))
		setenv("DAVINCI_SOC_DIR", "sim/soc", 1);
	sr = srunner_create(soc_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
