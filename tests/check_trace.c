/* check_trace: the msprof-style trace directory of a model run, against its
 * format and against itself: every device task has a row; per-pipe busy time
 * never exceeds the task's; spans on one pipe never overlap; the pipe ratios
 * recomputed from timeline.json equal op_summary.csv's; task durations plus
 * waits add up to each stream's elapsed time (one stream and two); the
 * tensor columns describe the Conv task's input as the compiler laid it
 * out; the summary's throughput follows from the warm latency. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "runtime.h"
#include "summary.h"
#include "tensor_io.h"
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

/* Split one CSV line in place into at most max fields (quotes removed, ""
 * unescaped); returns the number of fields.  line ends at '\n' or NUL. */
static int csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *r = line, *w = line;
	while (n < max) {
		fields[n++] = w;
		int quoted = *r == '"';
		r += quoted;
		for (; *r; r++) {
			if (quoted && *r == '"' && r[1] == '"')
				*w++ = *r++;
			else if (quoted && *r == '"')
				quoted = 0;
			else if (!quoted && (*r == ',' || *r == '\n'))
				break;
			else
				*w++ = *r;
		}
		char end = *r;
		*w++ = 0;
		if (end != ',')
			break;
		r++;
	}
	return n;
}

static int csv_col(char **head, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(head[i], name))
			return i;
	ck_abort_msg("op_summary.csv has no column '%s'", name);
	return -1;
}

struct span_ev {
	char name[128];
	unsigned pid, tid;
	double ts, dur;
};

/* The complete ("X") events of timeline.json, one per line as written. */
static struct span_ev *timeline_events(const char *js, size_t *n)
{
	size_t cap = 1024, k = 0;
	struct span_ev *v = malloc(cap * sizeof *v);
	for (const char *l = js; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[1024];
		if (len >= sizeof line)
			continue;
		memcpy(line, l, len);
		line[len] = 0;
		if (!strstr(line, "\"ph\": \"X\""))
			continue;
		if (k == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		struct span_ev *s = &v[k];
		const char *q = strstr(line, "\"name\": \"");
		ck_assert_ptr_nonnull(q);
		q += 9;
		const char *qe = strchr(q, '"');
		snprintf(s->name, sizeof s->name, "%.*s", (int)(qe - q), q);
		ck_assert_int_eq(sscanf(strstr(line, "\"pid\": "), "\"pid\": %u", &s->pid), 1);
		ck_assert_int_eq(sscanf(strstr(line, "\"tid\": "), "\"tid\": %u", &s->tid), 1);
		ck_assert_int_eq(sscanf(strstr(line, "\"ts\": "), "\"ts\": %lf", &s->ts), 1);
		ck_assert_int_eq(sscanf(strstr(line, "\"dur\": "), "\"dur\": %lf", &s->dur), 1);
		k++;
	}
	*n = k;
	return v;
}

/* Run the model on `streams` streams, `loop` times each, and write a trace. */
static void traced_run(const struct om_model *m, const struct soc_config *cfg, unsigned streams,
		       unsigned loop, char *dir, struct trc_spans *spans, struct rt_device **dp,
		       struct trc_summary *sum)
{
	char err[4096];
	ck_assert_int_eq(trc_spans_init(spans, (unsigned)cfg->core_count), 0);
	struct sim_options opt = { .mode = SIM_MODE_TIMING, .on_span = trc_span_record,
				   .span_ctx = spans };
	struct rt_device *d = rt_device_new(cfg, &opt, err, sizeof err);
	ck_assert_msg(d != NULL, "%s", err);
	struct om_tensor in = { .dtype = 1, .rank = m->inputs[0].rank };
	for (int k = 0; k < in.rank; k++)
		in.dims[k] = m->inputs[0].dims[k];
	in.nbytes = m->inputs[0].size;
	in.data = calloc(1, in.nbytes);
	struct om_tensor out[4];
	struct rt_session so = { .loop = loop, .streams = streams };
	double load_us;
	ck_assert_msg(rt_session_run(d, m, &so, &in, 1, out, &load_us, err, sizeof err) == 0, "%s",
		      err);
	size_t nt, ne;
	const struct trc_task *t = rt_tasks(d, &nt);
	const struct trc_exec *e = rt_execs(d, &ne);
	ck_assert_uint_eq(ne, streams * loop);
	ck_assert_msg(trc_summarize(cfg, m, t, nt, e, ne, load_us, sum, err, sizeof err) == 0, "%s",
		      err);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct trc_input ti = { cfg, m, t, nt, e, ne, spans, sum };
	ck_assert_msg(trc_write(dir, &ti, err, sizeof err) == 0, "%s", err);
	for (unsigned o = 0; o < m->noutputs; o++)
		om_tensor_free(&out[o]);
	free(in.data);
	*dp = d;
}

static void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void compile_conv(struct soc_config *cfg, struct om_model *m)
{
	const char *td = getenv("ONNX_TESTDATA");
	char model[4096], err[4096];
	snprintf(model, sizeof model, "%s/pytorch-converted/test_Conv2d/model.onnx",
		 td && *td ? td : "/usr/share/libonnx-testdata/data");
	ck_assert_int_eq(soc_load("Ascend910", cfg, err, sizeof err), 0);
	ck_assert_msg(cc_compile(model, cfg, NULL, m, err, sizeof err) == 0, "%s", err);
}

START_TEST(trace_files_are_consistent)
{
	char dir[256] = "/tmp/davinci-trace-XXXXXX";
	struct soc_config cfg;
	struct om_model m;
	compile_conv(&cfg, &m);
	struct trc_spans spans;
	struct rt_device *d;
	struct trc_summary sum;
	traced_run(&m, &cfg, 1, 2, dir, &spans, &d, &sum);
	size_t nt;
	const struct trc_task *tr = rt_tasks(d, &nt);
	double mhz = cfg.core_freq_mhz;

	/* spans: never overlapping on one (core, pipe) */
	for (size_t i = 0; i < spans.n; i++) {
		const struct trc_span *a = &spans.v[i];
		ck_assert_uint_lt(a->start, a->end);
		for (size_t j = i + 1; j < spans.n; j++) {
			const struct trc_span *b = &spans.v[j];
			if (a->core == b->core && a->pipe == b->pipe)
				ck_assert_msg(a->end <= b->start || b->end <= a->start,
					      "spans overlap on core %u pipe %u", a->core, a->pipe);
		}
	}
	/* per kernel task and pipe: the timeline's busy time = the statistics',
	 * <= duration x cores */
	unsigned kernels = 0;
	for (size_t t = 0; t < nt; t++) {
		const struct trc_task *r = &tr[t];
		if (r->kind != TRC_TASK_KERNEL)
			continue;
		kernels++;
		for (int p = 0; p < ISA_NPIPES; p++) {
			uint64_t busy = 0;
			for (size_t i = 0; i < spans.n; i++) {
				const struct trc_span *a = &spans.v[i];
				if (a->pipe == p && a->start >= r->start && a->end <= r->end &&
				    trc_task_on_core(r, a->core))
					busy += a->end - a->start;
			}
			if (p != ISA_PIPE_S) /* the scalar unit issues; it has no spans */
				ck_assert_msg(busy == r->st.busy_cycles[p], "task %zu pipe %d: timeline "
					      "%llu, statistics %llu", t, p, (unsigned long long)busy,
					      (unsigned long long)r->st.busy_cycles[p]);
			ck_assert_uint_le(r->st.busy_cycles[p], (r->end - r->start) * r->cores);
		}
	}
	ck_assert_uint_eq(kernels, 2 * m.ntasks);

	/* op_summary.csv: msprof's columns, one row per device task */
	char path[512];
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	char *csv = slurp(path);
	ck_assert_ptr_nonnull(strstr(csv, "Op Name,OP Type,ONNX Ops,Task Type,Task Start Time(us),"
					  "Task Duration(us),Task Wait Time(us),Block Dim"));
	ck_assert_ptr_nonnull(strstr(csv, "Block Dim,Input Shapes,Input Data Types,Input Formats,"
					  "Output Shapes,Output Data Types,Output Formats,"));
	unsigned rows = 0;
	for (char *p = csv; *p; p++)
		rows += *p == '\n';
	ck_assert_uint_eq(rows, nt + 1);
	char want[128] = "";
	for (int k = 0; k < m.inputs[0].rank; k++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", k ? "," : "",
			 (long long)m.inputs[0].dims[k]);
	ck_assert_str_eq(want, "2,3,7,5");

	snprintf(path, sizeof path, "%s/timeline.json", dir);
	char *js = slurp(path);
	ck_assert_int_eq(js[0], '[');
	ck_assert_ptr_null(strstr(js, ",\n]"));
	ck_assert_ptr_nonnull(strstr(js, "\"name\": \"AI Core 0\""));
	ck_assert_ptr_nonnull(strstr(js, "\"name\": \"MTE2\""));
	ck_assert_ptr_nonnull(strstr(js, "\"name\": \"Stream 0\""));
	ck_assert_ptr_nonnull(strstr(js, "\"name\": \"host to device\""));
	size_t nev;
	struct span_ev *ev = timeline_events(js, &nev);
	/* a task event per device task, a copy event per copy, one per span */
	size_t copies = 0;
	for (size_t t = 0; t < nt; t++)
		copies += tr[t].kind == TRC_TASK_MEMCPY;
	ck_assert_uint_eq(nev, nt + copies + spans.n);

	char *head[96], *f[96], *line = csv, *next = strchr(line, '\n');
	int nh = csv_split(line, head, 96);
	int c_name = csv_col(head, nh, "Op Name"), c_type = csv_col(head, nh, "OP Type");
	int c_onnx = csv_col(head, nh, "ONNX Ops");
	int c_tt = csv_col(head, nh, "Task Type"), c_bd = csv_col(head, nh, "Block Dim");
	int c_st = csv_col(head, nh, "Task Start Time(us)");
	int c_du = csv_col(head, nh, "Task Duration(us)");
	int c_wa = csv_col(head, nh, "Task Wait Time(us)");
	int c_sid = csv_col(head, nh, "Stream ID");
	int c_is = csv_col(head, nh, "Input Shapes"), c_it = csv_col(head, nh, "Input Data Types");
	int c_if = csv_col(head, nh, "Input Formats"), c_os = csv_col(head, nh, "Output Shapes");
	int c_ot = csv_col(head, nh, "Output Data Types");
	int c_of = csv_col(head, nh, "Output Formats");
	int c_ratio[ISA_NPIPES];
	static const char *const rn[ISA_NPIPES] = { "scalar_ratio", "mte1_ratio", "mte2_ratio",
						    "mte3_ratio", "mac_ratio", "vec_ratio" };
	for (int p = 0; p < ISA_NPIPES; p++)
		c_ratio[p] = csv_col(head, nh, rn[p]);
	ck_assert_int_eq(c_is, c_bd + 1);
	ck_assert_int_eq(c_of, c_bd + 6);
	int convs = 0, transdata = 0;
	double busy_sum = 0, first_queued = -1, last_end = 0;
	for (line = next + 1; *line; line = next + 1) {
		next = strchr(line, '\n');
		ck_assert_ptr_nonnull(next);
		ck_assert_int_eq(csv_split(line, f, 96), nh);
		double st = atof(f[c_st]), du = atof(f[c_du]), wa = atof(f[c_wa]);
		ck_assert_str_eq(f[c_sid], "0");
		if (first_queued < 0)
			first_queued = st - wa;
		busy_sum += du + wa;
		last_end = st + du;
		if (strcmp(f[c_tt], "AI_CORE"))
			continue;
		/* the ratios recomputed from the timeline's spans of this task */
		unsigned bd = (unsigned)atoi(f[c_bd]);
		unsigned cores = bd < cfg.core_count ? bd : (unsigned)cfg.core_count;
		for (int p = 1; p < ISA_NPIPES; p++) {
			double b = 0;
			for (size_t i = 0; i < nev; i++)
				if (ev[i].pid < cfg.core_count && ev[i].tid == (unsigned)p &&
				    !strcmp(ev[i].name, f[c_name]) && ev[i].ts >= st - 0.0015 &&
				    ev[i].ts + ev[i].dur <= st + du + 0.0015)
					b += ev[i].dur;
			double r = du > 0 ? b / cores / du : 0;
			ck_assert_msg(fabs(r - atof(f[c_ratio[p]])) < 0.002 + 0.002 * r,
				      "%s %s: timeline %.4f, op_summary %s", f[c_name], rn[p], r,
				      f[c_ratio[p]]);
		}
		if (!strcmp(f[c_type], "TransData") && !transdata++) {
			ck_assert_str_eq(f[c_is], want);
			ck_assert_str_eq(f[c_it], "FLOAT");
			ck_assert_str_eq(f[c_if], "NCHW");
			ck_assert_str_eq(f[c_os], want);
			ck_assert_str_eq(f[c_ot], "FLOAT16");
			ck_assert_str_eq(f[c_of], "NC1HWC0");
		}
		if (strncmp(f[c_type], "Conv", 4) || convs++)
			continue;
		/* OP Type as CANN names it, the fused ONNX ops beside it */
		ck_assert_str_eq(f[c_type], "Conv2D");
		ck_assert_msg(!strncmp(f[c_onnx], "Conv", 4), "ONNX Ops '%s'", f[c_onnx]);
		size_t wl = strlen(want);
		ck_assert_msg(!strncmp(f[c_is], want, wl) && f[c_is][wl] == ';',
			      "Conv Input Shapes '%s', want '%s;...'", f[c_is], want);
		ck_assert_msg(!strncmp(f[c_if], "NC1HWC0;FRACTAL_Z", 17), "Conv Input Formats '%s'",
			      f[c_if]);
		ck_assert_msg(!strncmp(f[c_it], "FLOAT16;FLOAT16", 15), "Conv Input Data Types '%s'",
			      f[c_it]);
		ck_assert_str_eq(f[c_of], "NC1HWC0");
		ck_assert_str_eq(f[c_ot], "FLOAT16");
	}
	ck_assert_int_eq(convs, 2);
	/* one stream: its tasks' durations plus waits are its elapsed time */
	ck_assert_msg(fabs(busy_sum - (last_end - first_queued)) < 0.001 * rows + 1e-6,
		      "durations + waits %.3f us, elapsed %.3f us", busy_sum,
		      last_end - first_queued);
	free(ev);
	free(csv);
	snprintf(path, sizeof path, "%s/task_time.csv", dir);
	csv = slurp(path);
	ck_assert_ptr_nonnull(strstr(csv, "kernel_name,kernel_type,stream_id,task_id,task_time(us),"
					  "task_start(us),task_stop(us)"));
	free(csv);
	free(js);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	js = slurp(path);
	ck_assert_ptr_nonnull(strstr(js, "\"first_latency_us\""));
	ck_assert_ptr_nonnull(strstr(js, "\"warm_latency_us\""));
	ck_assert_ptr_nonnull(strstr(js, "\"throughput_fps\""));
	ck_assert_ptr_nonnull(strstr(js, "\"top_ops\": [{"));
	free(js);
	ck_assert_uint_eq(sum.execs, 2);
	ck_assert_uint_eq(sum.warm_execs, 1);
	ck_assert(sum.first_latency_us > 0 && sum.warm_latency_us > 0);
	ck_assert(fabs(sum.throughput_fps - 2 * 1e6 / sum.warm_latency_us) <
		  1e-6 * sum.throughput_fps);
	(void)mhz;
	rm_rf(dir);
	rt_device_free(d);
	trc_spans_free(&spans);
	om_free(&m);
}
END_TEST

/* Two streams: each stream's durations and waits add up to its elapsed
 * time, the streams overlap in time, and the PCIe copies are in the log. */
/* Names too long for a table's column are cut in the middle: the end, which
 * tells layers of one prefix apart, stays. */
START_TEST(long_names_cut_in_the_middle)
{
	char out[33];
	const char *n = "/layer4/layer4.0/downsample/downsample.0/Conv";
	trc_shorten(out, 32, n);
	ck_assert_uint_eq(strlen(out), 32);
	ck_assert_str_eq(out + 32 - 13, "sample.0/Conv");
	ck_assert_int_eq(strncmp(out, "/layer4/layer4", 14), 0);
	ck_assert_ptr_nonnull(strstr(out, "..."));
	ck_assert_str_eq(trc_shorten(out, 32, "/fc/Gemm"), "/fc/Gemm");
}
END_TEST

START_TEST(two_streams_overlap)
{
	char dir[256] = "/tmp/davinci-trace-XXXXXX";
	struct soc_config cfg;
	struct om_model m;
	compile_conv(&cfg, &m);
	struct trc_spans spans;
	struct rt_device *d;
	struct trc_summary sum;
	traced_run(&m, &cfg, 2, 3, dir, &spans, &d, &sum);
	size_t nt, ne;
	const struct trc_task *tr = rt_tasks(d, &nt);
	const struct trc_exec *er = rt_execs(d, &ne);
	ck_assert_uint_eq(sum.streams, 2);
	ck_assert_uint_eq(sum.warm_execs, 4);
	for (unsigned s = 0; s < 2; s++) {
		uint64_t prev = 0, first = 0, sumc = 0;
		int any = 0;
		for (size_t i = 0; i < nt; i++) {
			const struct trc_task *r = &tr[i];
			if (r->stream_id != er[s].stream_id || !strcmp(r->op_type, TRC_MODEL_LOAD_TYPE))
				continue;
			uint64_t p = any ? prev : r->queued;
			if (!any)
				first = r->queued;
			ck_assert_uint_ge(r->start, p);
			sumc += (r->start - p) + (r->end - r->start);
			prev = r->end;
			any = 1;
		}
		ck_assert(any);
		ck_assert_uint_eq(sumc, prev - first);
	}
	/* the streams' executions overlap: both first executions start before
	 * either ends */
	ck_assert_uint_ne(er[0].stream_id, er[1].stream_id);
	ck_assert_uint_lt(er[1].start, er[0].end);
	ck_assert_uint_lt(er[0].start, er[1].end);
	rm_rf(dir);
	rt_device_free(d);
	trc_spans_free(&spans);
	om_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, trace_files_are_consistent);
	tcase_add_test(tc, two_streams_overlap);
	tcase_add_test(tc, long_names_cut_in_the_middle);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
