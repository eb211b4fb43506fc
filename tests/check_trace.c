/* check_trace: the msprof-style trace directory of a model run, against its
 * format and against itself: every task has a row; per-pipe busy time never
 * exceeds the task's; spans on one pipe never overlap; the pipe time the
 * timeline shows inside a task equals what op_summary.csv reports; task
 * durations plus waits add up to the stream's elapsed time. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "trace.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

START_TEST(trace_files_are_consistent)
{
	const char *td = getenv("ONNX_TESTDATA");
	char model[4096], err[4096], dir[256] = "/tmp/davinci-trace-XXXXXX";
	snprintf(model, sizeof model, "%s/pytorch-converted/test_Conv2d/model.onnx",
		 td && *td ? td : "/usr/share/libonnx-testdata/data");
	struct soc_config cfg;
	ck_assert_int_eq(soc_load("Ascend910", &cfg, err, sizeof err), 0);
	struct om_model m;
	ck_assert_msg(cc_compile(model, &cfg, NULL, &m, err, sizeof err) == 0, "%s", err);
	struct trc_spans spans;
	ck_assert_int_eq(trc_spans_init(&spans, (unsigned)cfg.core_count), 0);
	struct sim_options opt = { .mode = SIM_MODE_TIMING, .on_span = trc_span_record,
				   .span_ctx = &spans };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	struct rt_tensor in = { .dtype = 1, .rank = m.inputs[0].rank };
	for (int d = 0; d < in.rank; d++)
		in.dims[d] = m.inputs[0].dims[d];
	in.nbytes = m.inputs[0].size;
	in.data = calloc(1, in.nbytes);
	struct rt_tensor out[4];
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, &m, &in, 1, out, &run, err, sizeof err) == 0, "%s", err);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(trc_write(dir, &cfg, &m, &run, &spans, err, sizeof err) == 0, "%s", err);

	/* spans: inside the run, never overlapping on one (core, pipe) */
	for (size_t i = 0; i < spans.n; i++) {
		const struct trc_span *a = &spans.v[i];
		ck_assert_uint_lt(a->start, a->end);
		ck_assert_uint_ge(a->start, run.start_cycle);
		ck_assert_uint_le(a->end, run.start_cycle + run.cycles);
		for (size_t j = i + 1; j < spans.n; j++) {
			const struct trc_span *b = &spans.v[j];
			if (a->core == b->core && a->pipe == b->pipe)
				ck_assert_msg(a->end <= b->start || b->end <= a->start,
					      "spans overlap on core %u pipe %u", a->core, a->pipe);
		}
	}
	/* per task and pipe: the timeline's busy time = the statistics', <= duration */
	uint64_t elapsed = 0;
	for (unsigned t = 0; t < m.ntasks; t++) {
		const struct rt_task_time *tt = &run.task[t];
		uint64_t t0 = tt->start_cycle, t1 = t0 + tt->cycles;
		elapsed += tt->cycles;
		for (int p = 0; p < ISA_NPIPES; p++) {
			uint64_t sum = 0;
			for (size_t i = 0; i < spans.n; i++) {
				const struct trc_span *a = &spans.v[i];
				uint64_t s = a->start > t0 ? a->start : t0, e = a->end < t1 ? a->end : t1;
				if (a->pipe == p && e > s)
					sum += e - s;
			}
			if (p != ISA_PIPE_S) /* the scalar unit issues; it has no spans */
				ck_assert_msg(sum == tt->st.busy_cycles[p], "task %u pipe %d: timeline "
					      "%llu, statistics %llu", t, p, (unsigned long long)sum,
					      (unsigned long long)tt->st.busy_cycles[p]);
			ck_assert_uint_le(tt->st.busy_cycles[p], tt->cycles * (tt->cores ? tt->cores : 1));
		}
	}
	ck_assert_uint_eq(elapsed, run.cycles); /* no waits between tasks yet */

	/* op_summary.csv: msprof's columns, one row per task, ratios <= 1 */
	char path[512];
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	char *csv = slurp(path);
	ck_assert_ptr_nonnull(strstr(csv, "Op Name,OP Type,Task Type,Task Start Time(us),"
					  "Task Duration(us),Task Wait Time(us),Block Dim"));
	ck_assert_ptr_nonnull(strstr(csv, "mac_ratio"));
	ck_assert_ptr_nonnull(strstr(csv, "mte2_ratio"));
	unsigned rows = 0;
	for (char *p = csv; *p; p++)
		rows += *p == '\n';
	ck_assert_uint_eq(rows, m.ntasks + 1);
	free(csv);
	snprintf(path, sizeof path, "%s/task_time.csv", dir);
	csv = slurp(path);
	ck_assert_ptr_nonnull(strstr(csv, "kernel_name,kernel_type,stream_id,task_id,task_time(us),"
					  "task_start(us),task_stop(us)"));
	free(csv);
	/* timeline.json: a JSON array with one X event per task and per span */
	snprintf(path, sizeof path, "%s/timeline.json", dir);
	char *js = slurp(path);
	ck_assert_int_eq(js[0], '[');
	ck_assert_ptr_null(strstr(js, ",\n]"));
	size_t xs = 0;
	for (char *p = js; (p = strstr(p, "\"ph\": \"X\"")); p++)
		xs++;
	ck_assert_uint_eq(xs, m.ntasks + spans.n);
	ck_assert_ptr_nonnull(strstr(js, "\"name\": \"AI Core 0\""));
	ck_assert_ptr_nonnull(strstr(js, "\"name\": \"MTE2\""));
	free(js);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	js = slurp(path);
	ck_assert_ptr_nonnull(strstr(js, "\"latency_us\""));
	ck_assert_ptr_nonnull(strstr(js, "\"throughput_fps\""));
	ck_assert_ptr_nonnull(strstr(js, "\"top_ops\": [{"));
	free(js);

	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	for (unsigned o = 0; o < m.noutputs; o++)
		rt_tensor_free(&out[o]);
	free(in.data);
	rt_run_free(&run);
	sim_device_free(dev);
	trc_spans_free(&spans);
	om_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, trace_files_are_consistent);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
