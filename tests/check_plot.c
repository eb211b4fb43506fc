/* check_plot: the charts of a trace directory (traces/plot.c).
 *
 * A small synthetic trace, whose numbers are known, checks what the data
 * files say: the per-op means, the roofline's intensities and FLOP/s (and
 * the main-memory to GM fallback), spans merged below a pixel, the
 * fraction-of-cores rows of the many-core Gantt, the labelled top_n.  A
 * real trace (the ONNX test Conv2d on two streams, through the runtime and
 * trc_write) checks that every chart is drawn: .dat and .gp beside a PNG
 * (by its signature) and an SVG, and that the scripts redraw from another
 * directory.  Without gnuplot on PATH the result is 1 with the data and
 * scripts written; broken trace files give -1 and a message naming the
 * file (and line).  The image checks need gnuplot; CI installs it. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"
#include "plot.h"
#include "runtime.h"
#include "summary.h"
#include "tensor_io.h"
#include "trace.h"

#define ERRLEN 2048

/* Per-test scratch directory; the checked fixture runs in each test's child. */
static char tmpdir[256];

static void rm_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st))
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char sub[4096];
			snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
			rm_tree(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static void tmp_setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/check_plot.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
	rm_tree(tmpdir);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return s;
}

static void spew(const char *dir, const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static int has_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *p = path; p && *p;) {
		const char *e = strchr(p, ':');
		int n = e ? (int)(e - p) : (int)strlen(p);
		snprintf(buf, sizeof buf, "%.*s/gnuplot", n, p);
		if (n && !access(buf, X_OK))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

static const char *const charts[] = { "timeline", "op_breakdown", "roofline" };

static size_t file_size(const char *dir, const char *name, const char *ext)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
	return stat(path, &st) ? 0 : (size_t)st.st_size;
}

/* The data and scripts of every chart: a header comment; the script reads
 * its data by a relative path and draws a PNG and an SVG. */
static void check_scripts(const char *dir)
{
	for (int c = 0; c < 3; c++) {
		char path[4096], ref[64];
		snprintf(path, sizeof path, "%s/%s.dat", dir, charts[c]);
		char *dat = slurp(path, NULL);
		ck_assert_msg(!strncmp(dat, "# ", 2), "%s has no header comment", path);
		free(dat);
		snprintf(path, sizeof path, "%s/%s.gp", dir, charts[c]);
		char *gp = slurp(path, NULL);
		snprintf(ref, sizeof ref, "'%s.dat'", charts[c]);
		ck_assert_msg(strstr(gp, ref) || strstr(gp, "plot 2 notitle"), "%s lacks %s", path,
			      ref);
		ck_assert_ptr_nonnull(strstr(gp, "set terminal pngcairo"));
		ck_assert_ptr_nonnull(strstr(gp, "set terminal svg"));
		snprintf(ref, sizeof ref, "set output '%s.svg'", charts[c]);
		ck_assert_ptr_nonnull(strstr(gp, ref));
		free(gp);
	}
}

/* Every image exists, the PNG by its signature, the SVG as XML with <svg. */
static void check_images(const char *dir)
{
	for (int c = 0; c < 3; c++) {
		char path[4096];
		size_t n;
		ck_assert_msg(file_size(dir, charts[c], "png") > 100, "%s.png", charts[c]);
		ck_assert_msg(file_size(dir, charts[c], "svg") > 100, "%s.svg", charts[c]);
		snprintf(path, sizeof path, "%s/%s.png", dir, charts[c]);
		char *png = slurp(path, &n);
		ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
		free(png);
		snprintf(path, sizeof path, "%s/%s.svg", dir, charts[c]);
		char *svg = slurp(path, &n);
		ck_assert_msg(!strncmp(svg, "<?xml", 5), "%s is not XML", path);
		ck_assert_ptr_nonnull(strstr(svg, "<svg"));
		ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
		free(svg);
	}
}

/* The lines of block `index` of a data file (blocks are separated by two
 * blank lines), comments dropped, for the caller to free. */
static char *dat_block(const char *dir, const char *name, int index)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *s = slurp(path, NULL), *out = calloc(strlen(s) + 1, 1);
	int blk = 0;
	for (char *l = s; *l;) {
		char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (!len && e && e[1] == '\n') {
			blk++;
			l = e + 2;
			continue;
		}
		if (blk == index && len && *l != '#')
			strncat(out, l, len + 1);
		l = e ? e + 1 : l + len;
	}
	free(s);
	return out;
}

/* A 4-core trace with known numbers.  conv_a runs twice (10 and 30 µs),
 * 1e9 cube FLOPs and 1e7 main-memory bytes each: intensity 100, 2e9 / 40 µs
 * = 50 TFLOP/s.  vadd: 1e6 vector FLOPs, no main-memory bytes, so its GM
 * traffic (6e5 + 4e5) counts: intensity 1, 0.2 TFLOP/s.  The third op has
 * no FLOPs; its name needs CSV quoting.  Columns are in an order of their
 * own, with one the plotter does not know. */
static void synthetic_trace(const char *dir)
{
	spew(dir, "summary.json",
	     "{\"soc\": \"TestSoC\", \"model\": \"it's \\\"quoted\\\"\", \"peak_cube_tflops\": 100,"
	     " \"hbm_bandwidth_gbps\": 1000, \"l2_bandwidth_gbps\": 4000, \"ai_cores\": 4,"
	     " \"pipe_utilization\": {\"M\": 0.5}, \"top_ops\": [{\"name\": \"x\"}]}\n");
	spew(dir, "op_summary.csv",
	     "Op Name,Extra,Task Type,Task Duration(us),scalar_time(us),mte1_time(us),"
	     "mte2_time(us),mte3_time(us),mac_time(us),vec_time(us),cube_fops,vector_fops,"
	     "main_mem(B),gm_read(B),gm_write(B)\n"
	     "\"weights\",0,MEMCPY_ASYNC,900,0,0,0,0,0,0,0,0,0,0,0\n"
	     "\"conv_a\",1,AI_CORE,10,1,2,3,4,8,0.5,1000000000,0,10000000,0,0\n"
	     "\"vadd\",\"a,b\",AI_CORE,5,0.5,0,2,1,0,3,0,1000000,0,600000,400000\n"
	     "\"conv_a\",1,AI_CORE,30,3,4,5,6,20,1.5,1000000000,0,10000000,0,0\r\n"
	     "\"trans,\"\"x\"\"\",1,AI_CORE,2,0.1,0,1,1,0,0.5,0,0,0,4096,4096\n");
	spew(dir, "timeline.json",
	     "[\n"
	     "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 4, \"args\": {\"name\": \"M\"}},\n"
	     "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 5, \"args\": {\"name\": \"V\"}},\n"
	     "{\"name\": \"weights\", \"ph\": \"X\", \"pid\": 4, \"tid\": 0, \"ts\": 0, \"dur\": 5,"
	     " \"args\": {\"Task Type\": \"MEMCPY_ASYNC\", \"OP Type\": \"MODEL_LOAD\"}},\n"
	     "{\"name\": \"MEMCPY_HOST_TO_DEVICE\", \"ph\": \"X\", \"pid\": 4, \"tid\": 0, \"ts\": 5,"
	     " \"dur\": 4, \"args\": {\"Task Type\": \"MEMCPY_ASYNC\", \"OP Type\": \"MEMCPY_ASYNC\"}},\n"
	     "{\"name\": \"conv_a\", \"ph\": \"X\", \"pid\": 4, \"tid\": 0, \"ts\": 10, \"dur\": 20,"
	     " \"args\": {\"Task Type\": \"AI_CORE\", \"OP Type\": \"Conv\", \"Block Dim\": 2}},\n"
	     "{\"name\": \"v\\u0061dd\", \"ph\": \"X\", \"pid\": 4, \"tid\": 0, \"ts\": 31, \"dur\": 5,"
	     " \"args\": {\"Task Type\": \"AI_CORE\", \"OP Type\": \"Add\", \"Block Dim\": 1}},\n"
	     "{\"name\": \"conv_a\", \"ph\": \"X\", \"pid\": 0, \"tid\": 4, \"ts\": 10, \"dur\": 10},\n"
	     "{\"name\": \"conv_a\", \"ph\": \"X\", \"pid\": 0, \"tid\": 4, \"ts\": 20.001, \"dur\": 4.999},\n"
	     "{\"name\": \"conv_a\", \"ph\": \"X\", \"pid\": 1, \"tid\": 5, \"ts\": 12, \"dur\": 2},\n"
	     "{\"name\": \"h2d\", \"ph\": \"X\", \"pid\": 5, \"tid\": 0, \"ts\": 5, \"dur\": 4},\n"
	     "{\"name\": \"process_labels\", \"ph\": \"M\", \"pid\": 4, \"tid\": 0, \"args\": {\"labels\": \"x\"}}\n"
	     "]\n");
}

START_TEST(synthetic_numbers)
{
	char err[ERRLEN], out[512];
	synthetic_trace(tmpdir);
	snprintf(out, sizeof out, "%s/p", tmpdir);
	struct trc_plot_opts o = { .top_n = 2 };
	int rc = trc_plot_with(tmpdir, out, &o, err, sizeof err);
	ck_assert_msg(rc == 0 || (rc == 1 && !has_gnuplot()), "rc %d: %s", rc, err);
	check_scripts(out);
	if (rc == 0)
		check_images(out);

	/* the top 2 ops by mean duration, pipe times averaged over the rows */
	char *b = dat_block(out, "op_breakdown.dat", 0);
	ck_assert_str_eq(b, "1 20.0000 2.0000 3.0000 4.0000 5.0000 14.0000 1.0000 2 \"conv_a\"\n"
			    "2 5.0000 0.5000 0.0000 2.0000 1.0000 0.0000 3.0000 1 \"vadd\"\n");
	free(b);
	/* the roofline: cube ops, vector ops (GM bytes for want of main-memory
	 * ones), the labelled two; the op without FLOPs is listed, not placed */
	b = dat_block(out, "roofline.dat", 0);
	ck_assert_str_eq(b, "100 50 20.0000 \"conv_a\"\n");
	free(b);
	b = dat_block(out, "roofline.dat", 1);
	ck_assert_str_eq(b, "1 0.2 5.0000 \"vadd\"\n");
	free(b);
	b = dat_block(out, "roofline.dat", 2);
	ck_assert_ptr_nonnull(strstr(b, "\"conv_a\""));
	ck_assert_ptr_nonnull(strstr(b, "\"vadd\""));
	free(b);
	char path[1024];
	snprintf(path, sizeof path, "%s/roofline.dat", out);
	char *s = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(s, "# not placed (no FLOPs, no bytes or no time): trans,\"x\""));
	free(s);
	snprintf(path, sizeof path, "%s/roofline.gp", out);
	s = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(s, "peak = 100 "));
	ck_assert_ptr_nonnull(strstr(s, "hbm = 1000 "));
	ck_assert_ptr_nonnull(strstr(s, "l2 = 4000 "));
	/* the model's name, quotes and all, is a safe gnuplot string */
	ck_assert_ptr_nonnull(strstr(s, "set title 'it''s \"quoted\" on TestSoC: roofline of 2"));
	free(s);

	/* Gantt, per core (2 busy cores): rows from the top: stream 0 (y 4),
	 * core 0 M, core 0 V, core 1 M, core 1 V (y 0).  Core 0's two M spans
	 * lie 1 ns apart, less than a pixel: one box.  Times count from the
	 * traced execution's start, the input copy's at 5 µs. */
	b = dat_block(out, "timeline.dat", 0);
	ck_assert_str_eq(b, "5.0000 20.0000 2.600 3.400\n");
	free(b);
	b = dat_block(out, "timeline.dat", 1);
	ck_assert_str_eq(b, "7.0000 9.0000 -0.400 0.400\n");
	free(b);
	b = dat_block(out, "timeline.dat", 2); /* kernel tasks, alternating shades */
	ck_assert_str_eq(b, "5.0000 25.0000 3.600 4.400 1\n26.0000 31.0000 3.600 4.400 0\n");
	free(b);
	b = dat_block(out, "timeline.dat", 3); /* the copy in; the weights' load is out */
	ck_assert_str_eq(b, "0.0000 4.0000 3.600 4.400 1\n");
	free(b);
	b = dat_block(out, "timeline.dat", 4); /* top 2 tasks labelled, by start */
	ck_assert_ptr_nonnull(strstr(b, "\"conv_a (20.0 µs)\""));
	ck_assert_ptr_nonnull(strstr(b, "\"vadd (5.0 µs)\""));
	ck_assert_ptr_null(strstr(b, "MEMCPY"));
	free(b);
	snprintf(path, sizeof path, "%s/timeline.gp", out);
	s = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(s, "'stream 0' 4, 'core 0 M' 3, 'core 0 V' 2, 'core 1 M' 1, "
					"'core 1 V' 0)"));
	free(s);
}
END_TEST

/* Many cores: a row per pipe whose boxes are the fraction of all cores
 * busy.  Core 0 alone keeps M busy from 10 to 25 µs: a quarter of 4. */
START_TEST(synthetic_pipe_rows)
{
	char err[ERRLEN], out[512];
	synthetic_trace(tmpdir);
	snprintf(out, sizeof out, "%s/p", tmpdir);
	struct trc_plot_opts o = { .top_n = 2, .rows = TRC_GANTT_AUTO, .max_core_rows = 1 };
	int rc = trc_plot_with(tmpdir, out, &o, err, sizeof err);
	ck_assert_msg(rc == 0 || (rc == 1 && !has_gnuplot()), "rc %d: %s", rc, err);
	/* rows: stream 0 (y 2), M (y 1), V (y 0).  M's boxes stand on its
	 * row's floor, reach a quarter of its height (0.8) where core 0 is busy,
	 * and their area is core 0's busy time over 4 cores. */
	char *b = dat_block(out, "timeline.dat", 0);
	double area = 0, top = 0, first = 1e9, last = 0;
	for (char *l = b; *l; l = strchr(l, '\n') + 1) {
		double s, e, lo, hi;
		ck_assert_int_eq(sscanf(l, "%lf %lf %lf %lf", &s, &e, &lo, &hi), 4);
		ck_assert_double_eq_tol(lo, 0.6, 1e-9);
		area += (e - s) * (hi - lo) / 0.8;
		top = hi > top ? hi : top;
		first = s < first ? s : first;
		last = e > last ? e : last;
	}
	ck_assert_double_eq_tol(top, 0.6 + 0.8 / 4, 1e-3);
	ck_assert_double_eq_tol(area, 14.999 / 4, 1e-3);
	ck_assert_msg(first > 4.95 && first <= 5 && last >= 20 && last < 20.05, "%g..%g", first,
		      last);
	free(b);
	char path[1024];
	snprintf(path, sizeof path, "%s/timeline.gp", out);
	char *g = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(g, "'stream 0' 2, 'M (all cores)' 1, 'V (all cores)' 0)"));
	ck_assert_ptr_nonnull(strstr(g, "fraction of all 4 AI cores"));
	free(g);
	/* forcing a row per core beats the threshold */
	o.rows = TRC_GANTT_CORES;
	rc = trc_plot_with(tmpdir, out, &o, err, sizeof err);
	ck_assert_msg(rc == 0 || (rc == 1 && !has_gnuplot()), "rc %d: %s", rc, err);
	g = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(g, "'core 1 V' 0)"));
	free(g);
}
END_TEST

/* Two executions of the same three ops: the top 2 are labelled once each,
 * at their longest task (the earlier of equals); the roofline numbers ops
 * at one point once, and its key names each. */
START_TEST(labels_once)
{
	char err[ERRLEN], out[512];
	spew(tmpdir, "summary.json",
	     "{\"soc\": \"TestSoC\", \"model\": \"m\", \"peak_cube_tflops\": 100,"
	     " \"hbm_bandwidth_gbps\": 1000, \"l2_bandwidth_gbps\": 4000, \"ai_cores\": 1}\n");
	spew(tmpdir, "op_summary.csv",
	     "Op Name,Task Type,Task Duration(us),scalar_time(us),mte1_time(us),mte2_time(us),"
	     "mte3_time(us),mac_time(us),vec_time(us),cube_fops,vector_fops,main_mem(B),"
	     "gm_read(B),gm_write(B)\n"
	     "a,AI_CORE,20,0,0,0,0,0,0,1000000,0,1000,0,0\n"
	     "b,AI_CORE,10,0,0,0,0,0,0,500000,0,500,0,0\n"
	     "c,AI_CORE,5,0,0,0,0,0,0,1000000,0,1000,0,0\n"
	     "a,AI_CORE,20,0,0,0,0,0,0,1000000,0,1000,0,0\n"
	     "b,AI_CORE,10,0,0,0,0,0,0,500000,0,500,0,0\n"
	     "c,AI_CORE,5,0,0,0,0,0,0,1000000,0,1000,0,0\n");
	spew(tmpdir, "timeline.json",
	     "[\n"
	     "{\"name\": \"a\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": 100, \"dur\": 20},\n"
	     "{\"name\": \"b\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": 120, \"dur\": 10},\n"
	     "{\"name\": \"c\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": 130, \"dur\": 5},\n"
	     "{\"name\": \"a\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": 135, \"dur\": 20},\n"
	     "{\"name\": \"b\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": 155, \"dur\": 10},\n"
	     "{\"name\": \"c\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": 165, \"dur\": 5}\n"
	     "]\n");
	snprintf(out, sizeof out, "%s/p", tmpdir);
	struct trc_plot_opts o = { .top_n = 2 };
	int rc = trc_plot_with(tmpdir, out, &o, err, sizeof err);
	ck_assert_msg(rc == 0 || (rc == 1 && !has_gnuplot()), "rc %d: %s", rc, err);
	/* index 0: kernel tasks; 1: the labels, from the first execution's
	 * start (100 µs) */
	char *b = dat_block(out, "timeline.dat", 1);
	double s1, s2;
	char n1[64], n2[64];
	ck_assert_int_eq(sscanf(b, "%lf %*f %*f %*f \"%63[^\"]\"\n%lf %*f %*f %*f \"%63[^\"]\"", &s1,
				n1, &s2, n2), 4);
	ck_assert_double_eq_tol(s1, 0, 1e-9);
	ck_assert_str_eq(n1, "a (20.0 µs)");
	ck_assert_double_eq_tol(s2, 20, 1e-9);
	ck_assert_str_eq(n2, "b (10.0 µs)");
	ck_assert_ptr_null(strchr(strchr(strchr(b, '\n') + 1, '\n') + 1, '"'));
	free(b);
	/* the roofline: a and b (the top 2) share a point, so number 1, drawn
	 * once; the key names both */
	b = dat_block(out, "roofline.dat", 1);
	ck_assert_str_eq(b, "1000 0.05 20.0000 \"a\" 1\n1000 0.05 10.0000 \"b\" 1\n");
	free(b);
	b = dat_block(out, "roofline.dat", 2);
	ck_assert_int_eq(strchr(b, '\n') - b + 1, (long)strlen(b)); /* one number */
	free(b);
	char path[1024];
	snprintf(path, sizeof path, "%s/roofline.gp", out);
	char *g = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(g, "' 1  a (20.0)'"));
	ck_assert_ptr_nonnull(strstr(g, "' 1  b (10.0)'"));
	free(g);
}
END_TEST

START_TEST(no_gnuplot_on_path)
{
	char err[ERRLEN], empty[512], out[512];
	synthetic_trace(tmpdir);
	snprintf(empty, sizeof empty, "%s/empty", tmpdir);
	ck_assert_int_eq(mkdir(empty, 0777), 0);
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", empty, 1);
	int rc = trc_plot(tmpdir, NULL, 0, err, sizeof err);
	setenv("PATH", path, 1);
	free(path);
	ck_assert_int_eq(rc, 1);
	snprintf(out, sizeof out, "%s/plots", tmpdir);
	char want[1024];
	snprintf(want, sizeof want,
		 "gnuplot not found: wrote the data and scripts to %s; run gnuplot on the .gp files",
		 out);
	ck_assert_str_eq(err, want);
	for (int c = 0; c < 3; c++) {
		ck_assert_uint_gt(file_size(out, charts[c], "dat"), 0);
		ck_assert_uint_gt(file_size(out, charts[c], "gp"), 0);
		ck_assert_uint_eq(file_size(out, charts[c], "png"), 0);
	}
	check_scripts(out);
}
END_TEST

/* Each broken trace fails with -1 and names the file (and line). */
START_TEST(broken_traces)
{
	static const struct {
		const char *file, *text, *want;
	} cases[] = {
		{ "summary.json", "{\"ai_cores\": 4, \"peak_cube_tflops\": 1}",
		  "summary.json: \"hbm_bandwidth_gbps\" is missing or not a number" },
		{ "summary.json", "{\"ai_cores\": \"four\", \"peak_cube_tflops\": 1, "
				  "\"hbm_bandwidth_gbps\": 1, \"l2_bandwidth_gbps\": 1}",
		  "summary.json: \"ai_cores\" is missing or not a number" },
		{ "summary.json", "{\"ai_cores\": 4,\n \"soc\": \"x}", "summary.json:2:" },
		{ "summary.json", "{\"ai_cores\": 0.5, \"peak_cube_tflops\": 1, \"hbm_bandwidth_gbps\": 1,"
				  " \"l2_bandwidth_gbps\": 1}", "summary.json: \"ai_cores\" is 0.5" },
		{ "op_summary.csv", "Op Name,Task Type\n", "op_summary.csv: no column 'Task Duration(us)'" },
		{ "op_summary.csv", "", "op_summary.csv:1: empty file" },
		{ "timeline.json", "[\n{\"name\": \"x\", \"ph\": \"X\", \"pid\": 0, \"tid\": 1, \"ts\": 1",
		  "timeline.json:2: expected ',' or '}' (the file ends here" },
		{ "timeline.json", "[\n{\"ph\": \"X\", \"pid\": 0, \"tid\": 99, \"ts\": 1, \"dur\": 1}]",
		  "timeline.json:2: AI core 0: pipe (tid) 99" },
		{ "timeline.json", "[\n\n{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1}]",
		  "timeline.json:3: a complete (\"X\") event without \"ts\" or \"dur\"" },
		{ "timeline.json", "[{\"ph\": \"X\"}] x", "timeline.json:1: text after the JSON value" },
	};
	char err[ERRLEN], path[512];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		synthetic_trace(tmpdir);
		spew(tmpdir, cases[i].file, cases[i].text);
		err[0] = 0;
		ck_assert_int_eq(trc_plot(tmpdir, NULL, 0, err, sizeof err), -1);
		ck_assert_msg(strstr(err, cases[i].want) && !strncmp(err, tmpdir, strlen(tmpdir)),
			      "case %zu: '%s' lacks '%s'", i, err, cases[i].want);
	}
	/* a bad number and an unterminated quote, each on its line */
	synthetic_trace(tmpdir);
	snprintf(path, sizeof path, "%s/op_summary.csv", tmpdir);
	char *csv = slurp(path, NULL);
	*strstr(csv, ",5,0.5,") = ';';
	spew(tmpdir, "op_summary.csv", csv);
	ck_assert_int_eq(trc_plot(tmpdir, NULL, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "op_summary.csv:4: 14 fields, but the header has 15"), "%s",
		      err);
	free(csv);
	synthetic_trace(tmpdir);
	csv = slurp(path, NULL);
	memcpy(strstr(csv, "AI_CORE,5,"), "AI_CORE,x,", 10);
	spew(tmpdir, "op_summary.csv", csv);
	ck_assert_int_eq(trc_plot(tmpdir, NULL, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "op_summary.csv:4: column 'Task Duration(us)': 'x' is not a "
				  "number"), "%s", err);
	free(csv);
	synthetic_trace(tmpdir);
	spew(tmpdir, "op_summary.csv", "Op Name,Task Type\n\"open,AI_CORE\n");
	ck_assert_int_eq(trc_plot(tmpdir, NULL, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "op_summary.csv") != NULL, "%s", err);
	/* missing files and directories */
	synthetic_trace(tmpdir);
	snprintf(path, sizeof path, "%s/timeline.json", tmpdir);
	unlink(path);
	ck_assert_int_eq(trc_plot(tmpdir, NULL, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "timeline.json: No such file"), "%s", err);
	snprintf(path, sizeof path, "%s/nowhere", tmpdir);
	ck_assert_int_eq(trc_plot(path, NULL, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nowhere/summary.json"), "%s", err);
}
END_TEST

/* Run the ONNX test Conv2d on two streams, twice each, into a trace. */
static void conv_trace(const char *dir)
{
	const char *td = getenv("ONNX_TESTDATA");
	char model[4096], err[ERRLEN];
	snprintf(model, sizeof model, "%s/pytorch-converted/test_Conv2d/model.onnx",
		 td && *td ? td : "/usr/share/libonnx-testdata/data");
	struct soc_config cfg;
	struct om_model m;
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	ck_assert_msg(cc_compile(model, &cfg, NULL, &m, err, sizeof err) == 0, "%s", err);
	struct trc_spans spans;
	ck_assert_int_eq(trc_spans_init(&spans, (unsigned)cfg.core_count), 0);
	struct sim_options opt = { .mode = SIM_MODE_TIMING, .on_span = trc_span_record,
				   .span_ctx = &spans };
	struct rt_device *d = rt_device_new(&cfg, &opt, err, sizeof err);
	ck_assert_msg(d != NULL, "%s", err);
	struct om_tensor in = { .dtype = 1, .rank = m.inputs[0].rank };
	for (int k = 0; k < in.rank; k++)
		in.dims[k] = m.inputs[0].dims[k];
	in.nbytes = m.inputs[0].size;
	in.data = calloc(1, in.nbytes);
	struct om_tensor outs[4];
	struct rt_session so = { .loop = 2, .streams = 2 };
	double load_us;
	ck_assert_msg(rt_session_run(d, &m, &so, &in, 1, outs, &load_us, err, sizeof err) == 0,
		      "%s", err);
	size_t nt, ne;
	const struct trc_task *t = rt_tasks(d, &nt);
	const struct trc_exec *e = rt_execs(d, &ne);
	struct trc_summary sum;
	ck_assert_msg(trc_summarize(&cfg, &m, t, nt, e, ne, load_us, &sum, err, sizeof err) == 0,
		      "%s", err);
	struct trc_input ti = { &cfg, &m, t, nt, e, ne, &spans, &sum };
	ck_assert_msg(trc_write(dir, &ti, err, sizeof err) == 0, "%s", err);
	for (unsigned o = 0; o < m.noutputs; o++)
		om_tensor_free(&outs[o]);
	free(in.data);
	rt_device_free(d);
	trc_spans_free(&spans);
	om_free(&m);
}

START_TEST(model_trace_charts)
{
	char err[ERRLEN], trace[512], out[512], moved[512];
	snprintf(trace, sizeof trace, "%s/trace", tmpdir);
	conv_trace(trace);
	/* an output directory a shell would mangle: the scripts run without one */
	snprintf(out, sizeof out, "%s/out dir 'q' \"$(touch x)\"; z", tmpdir);
	int rc = trc_plot(trace, out, 3, err, sizeof err);
	if (!has_gnuplot()) {
		ck_assert_int_eq(rc, 1);
		fprintf(stderr, "check_plot: gnuplot is not on PATH: images not checked\n");
		return;
	}
	ck_assert_msg(rc == 0, "%s", err);
	check_scripts(out);
	check_images(out);
	/* top 3: three bars at most, three labelled tasks */
	char *b = dat_block(out, "op_breakdown.dat", 0);
	int lines = 0;
	for (char *p = b; (p = strchr(p, '\n')); p++)
		lines++;
	ck_assert_int_ge(lines, 1);
	ck_assert_int_le(lines, 3);
	free(b);
	char path[1024];
	snprintf(path, sizeof path, "%s/timeline.gp", out);
	char *g = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(g, "'stream 0'"));
	ck_assert_ptr_nonnull(strstr(g, "'stream 1'"));
	ck_assert_ptr_nonnull(strstr(g, "title 'kernel tasks'"));
	free(g);
	/* the scripts redraw wherever the directory goes */
	snprintf(moved, sizeof moved, "%s/moved", tmpdir);
	ck_assert_int_eq(rename(out, moved), 0);
	for (int c = 0; c < 3; c++) {
		snprintf(path, sizeof path, "%s/%s.png", moved, charts[c]);
		ck_assert_int_eq(unlink(path), 0);
		snprintf(path, sizeof path, "%s/%s.svg", moved, charts[c]);
		ck_assert_int_eq(unlink(path), 0);
	}
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && gnuplot timeline.gp && gnuplot op_breakdown.gp && gnuplot roofline.gp",
		 moved);
	ck_assert_int_eq(system(cmd), 0);
	check_images(moved);
	struct stat st;
	snprintf(path, sizeof path, "%s/x", tmpdir);
	ck_assert_int_ne(stat(path, &st), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plot");
	TCase *tc = tcase_create("Core");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, synthetic_numbers);
	tcase_add_test(tc, synthetic_pipe_rows);
	tcase_add_test(tc, labels_once);
	tcase_add_test(tc, no_gnuplot_on_path);
	tcase_add_test(tc, broken_traces);
	tcase_add_test(tc, model_trace_charts);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
