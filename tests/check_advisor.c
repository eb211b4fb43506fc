/* check_advisor: the trace readers (CSV with quoted fields, CRLF, a BOM and
 * blank lines; JSON with escapes; errors naming file and line) and the
 * advisor's rules on hand-written traces: one op per rule, the precedence
 * between them, the warm executions, the run's verdict.  tests/advisor.sh
 * checks the verdicts on traces that simrun wrote. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advisor.h"
#include "trace_read.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* a fresh directory under /tmp, removed by rm_dir */
static void make_dir(char *dir, size_t n)
{
	snprintf(dir, n, "/tmp/check_advisor.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
	static const char *const files[] = { "op_summary.csv", "summary.json", "task_time.csv",
					     "t.csv", "t.json" };
	char p[512];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* ---- CSV ---------------------------------------------------------------- */

START_TEST(csv_quotes_crlf_bom_blank_lines)
{
	char dir[64], path[128], err[256];
	make_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/t.csv", dir);
	write_file(path, "\xEF\xBB\xBF" "a, \"b, c\" ,d\r\n"
			 "1,\"x \"\"y\"\", z\",\"multi\r\n"
			 "line\"\r\n"
			 "\r\n"
			 "2,,3");
	struct trc_csv t;
	/* a quoted header cell with blanks outside the quotes is malformed */
	ck_assert_int_eq(trc_csv_read(path, &t, err, sizeof err), -1);
	char want[256];
	snprintf(want, sizeof want, "%s:1: a quote inside an unquoted field (quote the whole field)",
		 path);
	ck_assert_str_eq(err, want);
	write_file(path, "\xEF\xBB\xBF" "a,\"b, c\", d \r\n"
			 "1,\"x \"\"y\"\", z\",\"multi\r\n"
			 "line\"\r\n"
			 "\r\n"
			 "2,,3");
	ck_assert_msg(trc_csv_read(path, &t, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(t.ncols, 3);
	ck_assert_uint_eq(t.nrows, 2);
	ck_assert_str_eq(t.header[0], "a"); /* the BOM is not part of the name */
	ck_assert_str_eq(t.header[1], "b, c");
	ck_assert_str_eq(t.header[2], "d"); /* nor are blanks around it */
	ck_assert_str_eq(trc_csv_cell(&t, 0, 1), "x \"y\", z");
	ck_assert_str_eq(trc_csv_cell(&t, 0, 2), "multi\r\nline");
	ck_assert_str_eq(trc_csv_cell(&t, 1, 1), "");
	ck_assert_uint_eq(t.line[0], 2);
	ck_assert_uint_eq(t.line[1], 5); /* the quoted line break and the blank line count */
	static const char *const d[] = { "x", "d", NULL }, *const none[] = { "x", NULL };
	ck_assert_int_eq(trc_csv_col(&t, d), 2);
	ck_assert_int_eq(trc_csv_col(&t, none), -1);
	double v;
	ck_assert_int_eq(trc_csv_num(&t, 1, 2, &v, err, sizeof err), 0);
	ck_assert(v == 3);
	ck_assert_int_eq(trc_csv_num(&t, 1, 1, &v, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s:5: column 'b, c': '' is not a number", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(trc_csv_num(&t, 0, 1, &v, err, sizeof err), -1);
	trc_csv_free(&t);
	rm_dir(dir);
}
END_TEST

START_TEST(csv_errors_name_file_and_line)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "a,b\n1,2\n1,2,3\n", ":3: 3 fields, but the header has 2" },
		{ "a,b\n1,2\n\n4\n", ":4: 1 fields, but the header has 2" },
		{ "a,b\n1,\"x\n\n", ":2: unterminated quoted field (no closing quote before the end "
				    "of the file)" },
		{ "a,b\n1,\"x\"y\n", ":2: text after a closing quote" },
		{ "a,b\r\n1,x\"y\r\n", ":2: a quote inside an unquoted field (quote the whole field)" },
		{ "", ":1: empty file (no header line)" },
		{ "\n\n", ":1: empty file (no header line)" },
	};
	char dir[64], path[128], err[256], want[256];
	make_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/t.csv", dir);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		write_file(path, cases[i].text);
		struct trc_csv t;
		ck_assert_msg(trc_csv_read(path, &t, err, sizeof err) == -1, "accepted case %zu", i);
		snprintf(want, sizeof want, "%s%s", path, cases[i].msg);
		ck_assert_str_eq(err, want);
	}
	snprintf(path, sizeof path, "%s/none.csv", dir);
	struct trc_csv t;
	ck_assert_int_eq(trc_csv_read(path, &t, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
	rm_dir(dir);
}
END_TEST

/* ---- JSON --------------------------------------------------------------- */

START_TEST(json_values)
{
	char err[256];
	struct trc_json *j = trc_json_parse(
		" {\"a\": [1, -2.5e3, true, null, \"x\\u00e9\\ud83d\\ude00\\n\\\"\"],\n"
		"  \"b\": {\"c\": \"d\", \"e\": 0.125}, \"a\": 7, \"empty\": [], \"o\": {}}\n",
		err, sizeof err);
	ck_assert_msg(j != NULL, "%s", err);
	const struct trc_json *a = trc_json_get(j, "a"); /* the first of a repeated key */
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, TRC_JSON_ARR);
	ck_assert_uint_eq(a->n, 5);
	ck_assert(a->item[0].num == 1 && a->item[1].num == -2500);
	ck_assert(a->item[2].type == TRC_JSON_BOOL && a->item[2].num == 1);
	ck_assert_int_eq(a->item[3].type, TRC_JSON_NULL);
	ck_assert_str_eq(a->item[4].str, "x\xc3\xa9\xf0\x9f\x98\x80\n\"");
	double v;
	ck_assert_int_eq(trc_json_num(trc_json_get(j, "b"), "e", &v), 1);
	ck_assert(v == 0.125);
	ck_assert_int_eq(trc_json_num(j, "b", &v), 0); /* not a number */
	ck_assert_int_eq(trc_json_num(j, "zz", &v), 0);
	ck_assert_str_eq(trc_json_str(trc_json_get(j, "b"), "c"), "d");
	ck_assert_ptr_null(trc_json_str(j, "a"));
	ck_assert_uint_eq(trc_json_get(j, "empty")->n, 0);
	ck_assert_int_eq(trc_json_get(j, "o")->type, TRC_JSON_OBJ);
	trc_json_free(j);
}
END_TEST

START_TEST(json_errors_name_line_and_column)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "{\n  \"a\": 01}", "2:9: expected ',' or '}'" },
		{ "[1,]", "1:4: unexpected character" },
		{ "\"abc", "1:5: unterminated string" },
		{ "[1] x", "1:5: text after the JSON value" },
		{ "{\"a\" 1}", "1:6: expected ':'" },
		{ "{1: 2}", "1:2: expected a string key" },
		{ "[-]", "1:3: malformed number" },
		{ "[1.]", "1:4: malformed number" },
		{ "[\"\\x\"]", "1:3: bad escape in a string" },
		{ "[\"\\ud800\"]", "1:9: unpaired surrogate in a string" },
		{ "[1e999]", "1:2: number out of range" },
		{ "", "1:1: unexpected end of input" },
		{ "[nan]", "1:2: unexpected character" },
	};
	char err[256];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct trc_json *j = trc_json_parse(cases[i].text, err, sizeof err);
		ck_assert_msg(j == NULL, "accepted %s", cases[i].text);
		ck_assert_str_eq(err, cases[i].msg);
	}
	char deep[200];
	memset(deep, '[', sizeof deep - 1);
	deep[sizeof deep - 1] = 0;
	ck_assert_ptr_null(trc_json_parse(deep, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));
	char dir[64], path[128], want[256];
	make_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/t.json", dir);
	write_file(path, "{\"ai_cores\": 32,\n \"x\": tru}\n");
	ck_assert_ptr_null(trc_json_read(path, err, sizeof err));
	snprintf(want, sizeof want, "%s:2:7: unexpected character", path);
	ck_assert_str_eq(err, want);
	rm_dir(dir);
}
END_TEST

/* ---- the rules ---------------------------------------------------------- */

static const char summary[] = "{\"soc\": \"Test\", \"main_memory\": \"HBM2\", \"ai_cores\": 32, \"task_gap_us\": 1.5, "
			      "\"hbm_bandwidth_gbps\": 1000, \"l2_bandwidth_gbps\": 4000, "
			      "\"peak_cube_tflops\": 256}\n";

/* A trace with msprof's minimum (no Infer ID, no task_time.csv, Block Num
 * as newer msprof names it): one op per rule. */
static const char rules_csv[] =
	"Op Name,OP Type,Task Type,Task Duration(us),Task Wait Time(us),Block Num,mte1_ratio,"
	"mte2_ratio,mte3_ratio,mac_ratio,vec_ratio,main_mem_bw(GB/s),mte2_waitflag_ratio,"
	"vec_waitflag_ratio\n"
	/* tiny, with one block and stalled: the dispatch gap comes first */
	"tiny,Relu,AI_CORE,0.5,1.5,1,0,0.05,0.05,0,0.05,1,0.9,0.9\n"
	/* saturating HBM on 4 cores: more cores would not help */
	"hbm,Add,AI_CORE,50,1.5,4,0,0.5,0.5,0,0.1,900,0.5,0.5\n"
	/* one block with a busy cube: 31 cores idle */
	"one_core,MatMul,AI_CORE,40,1.5,1,0.2,0.3,0.1,0.9,0.1,50,0,0\n"
	/* 40 blocks on 32 cores: the second wave is a quarter full */
	"wave,Conv2D,AI_CORE,10,1.5,40,0.2,0.3,0.1,0.9,0.1,50,0,0\n"
	/* every pipe idle, MTE2 waiting on a flag */
	"stalled,kernel,AI_CORE,30,1.5,32,0,0.1,0.1,0,0.1,60,0.8,0.7\n"
	"busy_vec,Softmax,AI_CORE,20,1.5,32,0,0.5,0.2,0,0.7,300,0.2,0.1\n"
	"mte,TransData,AI_CORE,10,1.5,32,0,0.9,0.8,0,0.3,600,0,0.6\n"
	"gemm,MatMul,AI_CORE,100,1.5,32,0.3,0.5,0.05,0.9,0.05,200,0.1,0.2\n"
	"\"MEMCPY_HOST_TO_DEVICE\",MEMCPY_ASYNC,MEMCPY_ASYNC,300,0,0,0,0,0,0,0,0,0,0\n";

static struct adv_report *analyze(const char *csv, const char *sum, char *dir, size_t n)
{
	char path[128], err[512];
	make_dir(dir, n);
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	write_file(path, csv);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	write_file(path, sum);
	struct adv_report *r;
	ck_assert_msg(adv_analyze(dir, &r, err, sizeof err) == 0, "%s", err);
	return r;
}

static struct adv_op_info find_op(const struct adv_report *r, const char *name)
{
	struct adv_op_info o;
	for (size_t i = 0; i < adv_op_count(r); i++) {
		ck_assert_int_eq(adv_op_get(r, i, &o), 0);
		if (!strcmp(o.name, name))
			return o;
	}
	ck_abort_msg("no op %s", name);
	return o;
}

START_TEST(one_op_per_rule_in_precedence_order)
{
	char dir[64];
	struct adv_report *r = analyze(rules_csv, summary, dir, sizeof dir);
	static const struct {
		const char *name;
		enum adv_bound bound;
		const char *why; /* in the reason */
	} want[] = {
		{ "tiny", ADV_LAUNCH, "(LAUNCH_SHARE)" },
		{ "hbm", ADV_MEMORY, "90% of the 1000 GB/s HBM2 >=" },
		{ "one_core", ADV_PARALLELISM, "block_dim 1 on 32 AI cores" },
		{ "wave", ADV_PARALLELISM, "(2 waves): 62% of the cores" },
		{ "stalled", ADV_SYNC, "mte2_waitflag_ratio 0.80" },
		{ "busy_vec", ADV_VECTOR, "vec_ratio 0.70 is the busiest" },
		/* DMA pipes busiest, no roof reached: the DMA engines, not memory */
		{ "mte", ADV_DMA, "= 3.00 > 1" },
		{ "gemm", ADV_CUBE, "mac_ratio 0.90 is the busiest" },
	};
	ck_assert_uint_eq(adv_op_count(r), 8); /* the copy is not an op */
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		struct adv_op_info o = find_op(r, want[i].name);
		ck_assert_msg(o.bound == want[i].bound, "%s: %s (%s)", o.name,
			      adv_bound_name(o.bound), o.reason);
		ck_assert_msg(strstr(o.reason, want[i].why), "%s: %s", o.name, o.reason);
	}
	/* sorted by time; the largest op's bound holds the most time */
	struct adv_op_info top;
	adv_op_get(r, 0, &top);
	ck_assert_str_eq(top.name, "gemm");
	ck_assert_int_eq(adv_verdict(r), ADV_CUBE);
	double all = 0;
	for (int b = 0; b < ADV_NBOUNDS; b++)
		all += adv_bound_share(r, (enum adv_bound)b);
	ck_assert(fabs(all - 1) < 1e-9);
	/* launch: 8 waits of 1.5 us and the 0.5 us task, of 260.5 + 12 us */
	ck_assert(fabs(adv_bound_share(r, ADV_LAUNCH) - 12.5 / 272.5) < 1e-9);
	adv_free(r);
	rm_dir(dir);
}
END_TEST

START_TEST(many_tiny_tasks_make_a_launch_bound_run)
{
	char csv[4096] = "Op Name,OP Type,Task Type,Task Duration(us),Task Wait Time(us),"
			 "Block Dim,mte2_ratio,mte3_ratio,mac_ratio,vec_ratio\n"
			 "big,MatMul,AI_CORE,30,1.5,32,0.2,0.1,0.9,0\n";
	for (int i = 0; i < 40; i++) {
		size_t l = strlen(csv);
		snprintf(csv + l, sizeof csv - l, "op%d,Relu,AI_CORE,1.2,1.5,1,0.1,0.1,0,0.1\n", i);
	}
	char dir[64];
	/* a trace from elsewhere: no gap in the summary, so waits count whole */
	struct adv_report *r = analyze(csv, "{\"ai_cores\": 32}", dir, sizeof dir);
	ck_assert_int_eq(adv_verdict(r), ADV_LAUNCH);
	/* (41 x 1.5 + 40 x 1.2) / (30 + 48 + 61.5) */
	ck_assert(fabs(adv_bound_share(r, ADV_LAUNCH) - 109.5 / 139.5) < 1e-9);
	ck_assert_int_eq(find_op(r, "op0").bound, ADV_LAUNCH);
	/* the cube op alone is not enough */
	ck_assert_int_eq(find_op(r, "big").bound, ADV_CUBE);
	adv_free(r);
	rm_dir(dir);
}
END_TEST

/* An execution's fixed cost (summary.json's model_exec_us) is launch
 * overhead of the run, charged where it is waited for, before the first
 * task: that wait counts up to gap + exec, the others' up to the gap (more
 * is queueing for cores); no op is launch-bound for it. */
START_TEST(an_executions_fixed_cost_is_launch_overhead)
{
	const char *csv = "Op Name,OP Type,Task Type,Task Duration(us),Task Wait Time(us),"
			  "Block Dim,Stream ID,Infer ID,mte2_ratio,mte3_ratio,mac_ratio,vec_ratio\n"
			  "a,MatMul,AI_CORE,100,101,32,0,1,0.2,0.1,0.9,0\n"
			  "b,MatMul,AI_CORE,100,50,32,0,1,0.2,0.1,0.9,0\n"
			  "a,MatMul,AI_CORE,100,101,32,0,2,0.2,0.1,0.9,0\n"
			  "b,MatMul,AI_CORE,100,1,32,0,2,0.2,0.1,0.9,0\n";
	char dir[64];
	struct adv_report *r = analyze(csv, "{\"ai_cores\": 32, \"task_gap_us\": 1, "
					    "\"model_exec_us\": 100}", dir, sizeof dir);
	/* the warm execution (Infer ID 2): a waits 101 = 1 + 100, b 1 */
	double launch = adv_bound_share(r, ADV_LAUNCH);
	ck_assert_msg(fabs(launch - 102.0 / 302.0) < 1e-9, "launch share %.6f", launch);
	ck_assert_int_ne(find_op(r, "a").bound, ADV_LAUNCH);
	ck_assert_int_ne(find_op(r, "b").bound, ADV_LAUNCH);
	adv_free(r);
	rm_dir(dir);
}
END_TEST

START_TEST(warm_executions_only)
{
	/* stream 0 runs twice, stream 1 twice; the cold ones are slow and
	 * memory-bound, the warm ones cube-bound; copies have Infer ID -1 */
	static const char csv[] =
		"Stream ID,Infer ID,Op Name,OP Type,Task Type,Task Duration(us),"
		"Task Wait Time(us),Block Dim,mte2_ratio,mte3_ratio,mac_ratio,vec_ratio\r\n"
		"0,-1,MEMCPY_HOST_TO_DEVICE,MEMCPY_ASYNC,MEMCPY_ASYNC,100,0,0,0,0,0,0\r\n"
		"0,0,mm,MatMul,AI_CORE,90,1.5,32,0.9,0.1,0.3,0\r\n"
		"1,1,mm,MatMul,AI_CORE,90,20,32,0.9,0.1,0.3,0\r\n"
		"0,2,mm,MatMul,AI_CORE,40,1.5,32,0.5,0.1,0.9,0\r\n"
		"1,3,mm,MatMul,AI_CORE,44,30,32,0.5,0.1,0.9,0\r\n";
	char dir[64];
	struct adv_report *r = analyze(csv, summary, dir, sizeof dir);
	struct adv_op_info o = find_op(r, "mm");
	ck_assert_uint_eq(o.count, 2);
	ck_assert(fabs(o.duration_us - 42) < 1e-9);
	ck_assert_int_eq(o.bound, ADV_CUBE);
	ck_assert_int_eq(adv_verdict(r), ADV_CUBE);
	/* the 28.5 us the second stream queued beyond the gap belongs to no bound */
	ck_assert(fabs(adv_bound_share(r, ADV_LAUNCH) - 3.0 / 87) < 1e-9);
	adv_free(r);
	rm_dir(dir);
}
END_TEST

START_TEST(analysis_errors)
{
	char dir[64], path[128], err[512], want[512];
	struct adv_report *r;
	make_dir(dir, sizeof dir);
	ck_assert_int_eq(adv_analyze(dir, &r, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/op_summary.csv: No such file or directory", dir);
	ck_assert_str_eq(err, want);
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	write_file(path, "Op Name,OP Type,Task Type,Task Duration(us),Task Wait Time(us),Block Dim,"
			 "mte2_ratio,mte3_ratio,mac_ratio,vec_ratio\n"
			 "x,MEMCPY_ASYNC,MEMCPY_ASYNC,5,0,0,0,0,0,0\n");
	ck_assert_int_eq(adv_analyze(dir, &r, err, sizeof err), -1);
	snprintf(want, sizeof want,
		 "%s/summary.json: No such file or directory (msprof writes none: give the chip)",
		 dir);
	ck_assert_str_eq(err, want);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	write_file(path, "{\"cores\": 32}");
	ck_assert_int_eq(adv_analyze(dir, &r, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/summary.json: no 'ai_cores' (a number >= 1)", dir);
	ck_assert_str_eq(err, want);
	write_file(path, summary);
	ck_assert_int_eq(adv_analyze(dir, &r, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/op_summary.csv: no AI_CORE tasks to analyse", dir);
	ck_assert_str_eq(err, want);
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	write_file(path, "Op Name,OP Type,Task Type,Task Duration(us),Task Wait Time(us),Block Dim,"
			 "mte2_ratio,mte3_ratio,mac_ratio,vec_ratio\n"
			 "x,Relu,AI_CORE,-5,0,1,0,0,0,0\n");
	ck_assert_int_eq(adv_analyze(dir, &r, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/op_summary.csv:2: a negative task duration or wait", dir);
	ck_assert_str_eq(err, want);
	snprintf(path, sizeof path, "%s/task_time.csv", dir);
	write_file(path, "a,b\n1\n");
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	write_file(path, "Op Name,OP Type,Task Type,Task Duration(us),Task Wait Time(us),Block Dim,"
			 "mte2_ratio,mte3_ratio,mac_ratio,vec_ratio\n"
			 "x,Relu,AI_CORE,5,0,1,0,0,0,0\n");
	ck_assert_int_eq(adv_analyze(dir, &r, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/task_time.csv:2: 1 fields, but the header has 2", dir);
	ck_assert_str_eq(err, want);
	rm_dir(dir);
	ck_assert_int_eq(adv_analyze("/nonexistent/trace", &r, err, sizeof err), -1);
	ck_assert_str_eq(err, "/nonexistent/trace: No such file or directory");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("advisor");
	TCase *core = tcase_create("Core");
	tcase_add_test(core, csv_quotes_crlf_bom_blank_lines);
	tcase_add_test(core, json_values);
	tcase_add_test(core, one_op_per_rule_in_precedence_order);
	tcase_add_test(core, many_tiny_tasks_make_a_launch_bound_run);
	tcase_add_test(core, warm_executions_only);
	tcase_add_test(core, an_executions_fixed_cost_is_launch_overhead);
	suite_add_tcase(s, core);
	TCase *limits = tcase_create("Limits");
	tcase_add_test(limits, csv_errors_name_file_and_line);
	tcase_add_test(limits, json_errors_name_line_and_column);
	tcase_add_test(limits, analysis_errors);
	suite_add_tcase(s, limits);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
