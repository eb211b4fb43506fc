/* trace_writer.c: the trace directory of a model run (see trace.h), in
 * msprof's column names where they apply. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "om.h"
#include "summary.h"
#include "trace.h"

static const char *const pipe_ratio_names[ISA_NPIPES] = { "scalar", "mte1", "mte2", "mte3",
							  "mac", "vec" };

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

enum io_col { IO_SHAPES, IO_DTYPES, IO_FORMATS };

/* One of msprof's tensor columns, comma first: per tensor "1,64,56,56",
 * "FLOAT16" or "NC1HWC0", joined by ';' and quoted (shapes hold commas). */
static void csv_tensors(FILE *f, const struct om_tensor_desc *d, uint32_t n, enum io_col col)
{
	fputs(",\"", f);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			fputc(';', f);
		if (col == IO_SHAPES)
			for (int k = 0; k < d[i].rank; k++)
				fprintf(f, "%s%lld", k ? "," : "", (long long)d[i].dims[k]);
		else
			fputs(col == IO_DTYPES ? om_dtype_name(d[i].dtype)
					       : om_format_name(d[i].format), f);
	}
	fputc('"', f);
}


static FILE *open_in(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

static int close_ok(FILE *f, const char *dir, const char *name, char *err, size_t errlen)
{
	if (fclose(f)) {
		snprintf(err, errlen, "%s/%s: write failed", dir, name);
		return -1;
	}
	return 0;
}

/* Which kernel task a pipe span belongs to: per core, the tasks that ran
 * blocks there, by start time (a core runs one block at a time). */
struct core_index {
	uint32_t *task; /* indices into the log, per core, sorted by start */
	size_t *off;    /* [cores + 1] */
};

static int index_build(struct core_index *ix, const struct trc_input *in, unsigned cores)
{
	ix->off = calloc(cores + 1, sizeof *ix->off);
	size_t total = 0;
	for (size_t i = 0; i < in->ntasks; i++)
		for (unsigned c = 0; c < cores; c++)
			total += in->tasks[i].kind == TRC_TASK_KERNEL && trc_task_on_core(&in->tasks[i], c);
	ix->task = malloc((total + 1) * sizeof *ix->task);
	if (!ix->off || !ix->task)
		return -1;
	for (unsigned c = 0; c < cores; c++) {
		ix->off[c + 1] = ix->off[c];
		for (size_t i = 0; i < in->ntasks; i++)
			if (in->tasks[i].kind == TRC_TASK_KERNEL && trc_task_on_core(&in->tasks[i], c))
				ix->task[ix->off[c + 1]++] = (uint32_t)i;
		/* the log is in completion order; a core's tasks also start in order
		 * of completion (one block at a time), so no sort is needed */
	}
	return 0;
}

static const struct trc_task *index_find(const struct core_index *ix,
					 const struct trc_input *in, unsigned core,
					 uint64_t t)
{
	size_t lo = ix->off[core], hi = ix->off[core + 1], best = SIZE_MAX;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (in->tasks[ix->task[mid]].start <= t) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return best == SIZE_MAX ? NULL : &in->tasks[ix->task[best]];
}

/* msprof's OP Type: the type CANN gives the task, which the .om carries
 * (files written before it: the ONNX ops); copies keep the runtime's. */
static const char *op_type(const struct trc_task *r, const struct om_model *m)
{
	const struct om_task *t =
		r->model == m && r->model_task >= 0 ? &m->tasks[r->model_task] : NULL;
	return t && t->cann_type[0] ? t->cann_type : r->op_type;
}

static const char *task_type(const struct trc_task *r)
{
	return r->kind == TRC_TASK_KERNEL ? "AI_CORE" : "MEMCPY_ASYNC";
}

/* Task Wait Time: the gap since the previous task of the same stream ended
 * (for a stream's first task, since it was queued), so a stream's tasks'
 * durations plus waits add up to its elapsed time. */
static int waits(const struct trc_input *in, double *wait, double mhz)
{
	unsigned maxs = 0;
	for (size_t i = 0; i < in->ntasks; i++)
		if (in->tasks[i].stream_id > maxs)
			maxs = in->tasks[i].stream_id;
	uint64_t *prev = malloc(((size_t)maxs + 1) * sizeof *prev);
	char *seen = calloc((size_t)maxs + 1, 1);
	if (!prev || !seen) {
		free(prev);
		free(seen);
		return -1;
	}
	/* tasks of one stream complete in stream order */
	for (size_t i = 0; i < in->ntasks; i++) {
		const struct trc_task *r = &in->tasks[i];
		uint64_t p = seen[r->stream_id] ? prev[r->stream_id] : r->queued;
		wait[i] = r->start > p ? (double)(r->start - p) / mhz : 0;
		prev[r->stream_id] = r->end;
		seen[r->stream_id] = 1;
	}
	free(prev);
	free(seen);
	return 0;
}

int trc_write(const char *dir, const struct trc_input *in, char *err, size_t errlen)
{
	const struct soc_config *cfg = in->cfg;
	const struct om_model *m = in->om;
	const struct trc_spans *spans = in->spans;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (spans && spans->oom) {
		snprintf(err, errlen, "out of memory collecting the timeline");
		return -1;
	}
	double mhz = cfg->core_freq_mhz;
	unsigned cores = (unsigned)cfg->core_count;
	double *wait = malloc((in->ntasks + 1) * sizeof *wait);
	struct core_index ix = { 0 };
	FILE *f = NULL;
	int rc = -1;
	if (!wait || waits(in, wait, mhz) || index_build(&ix, in, cores)) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (!(f = open_in(dir, "op_summary.csv", err, errlen)))
		goto done;
	fprintf(f, "Device_id,Model ID,Model Name,Task ID,Stream ID,Infer ID,Op Name,OP Type,ONNX Ops,"
		   "Task Type,"
		   "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,"
		   "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
		   "Output Formats,aicore_time(us),total_cycles");
	for (int p = 0; p < ISA_NPIPES; p++)
		fprintf(f, ",%s_time(us),%s_ratio", pipe_ratio_names[p], pipe_ratio_names[p]);
	/* stalls: each pipe's cycles blocked in wait_flag, and the scalar unit's
	 * on a full pipe queue, per core used over the task's cycles */
	for (int p = 0; p < ISA_NPIPES; p++)
		fprintf(f, ",%s_waitflag_ratio", pipe_ratio_names[p]);
	fprintf(f, ",iq_full_ratio");
	/* memory per level: GM traffic passes the L2; main memory sees line
	 * fills and write-throughs; on-core moves into L0A/L0B and out of L0C */
	fprintf(f, ",cube_fops,vector_fops,gm_read(B),gm_write(B),main_mem(B),l2_read_bw(GB/s),"
		   "l2_write_bw(GB/s),main_mem_bw(GB/s),main_mem_read_bw(GB/s),"
		   "main_mem_write_bw(GB/s),l2_hit_ratio,l0a_write_bw(GB/s),"
		   "l0b_write_bw(GB/s),l0c_read_bw(GB/s),size(B)");
	/* what the compiler predicted for the task alone (its dry run: the
	 * memory shared evenly, no other task), and what the chip's
	 * contention, L2 contents and neighbours made of it */
	fprintf(f, ",predicted_cycles,simulated/predicted\n");
	for (size_t i = 0; i < in->ntasks; i++) {
		const struct trc_task *r = &in->tasks[i];
		const struct om_task *t = r->model == m && r->model_task >= 0
						  ? &m->tasks[r->model_task] : NULL;
		uint64_t cyc = r->end - r->start;
		double dur = (double)cyc / mhz;
		fprintf(f, "0,%d,", r->model == m ? 1 : 0);
		csv_str(f, r->model == m ? m->name : "");
		fprintf(f, ",%u,%u,%d,", r->task_id, r->stream_id, r->exec_id);
		csv_str(f, r->name);
		fputc(',', f);
		csv_str(f, op_type(r, m));
		fputc(',', f); /* the ONNX ops the task computes (ours; fused ones joined by +) */
		csv_str(f, t ? t->op_type : "");
		fprintf(f, ",%s,%.3f,%.3f,%.3f,%u", task_type(r), (double)r->start / mhz, dur,
			wait[i], r->block_dim);
		csv_tensors(f, t ? t->inputs : NULL, t ? t->ninputs : 0, IO_SHAPES);
		csv_tensors(f, t ? t->inputs : NULL, t ? t->ninputs : 0, IO_DTYPES);
		csv_tensors(f, t ? t->inputs : NULL, t ? t->ninputs : 0, IO_FORMATS);
		csv_tensors(f, t ? t->outputs : NULL, t ? t->noutputs : 0, IO_SHAPES);
		csv_tensors(f, t ? t->outputs : NULL, t ? t->noutputs : 0, IO_DTYPES);
		csv_tensors(f, t ? t->outputs : NULL, t ? t->noutputs : 0, IO_FORMATS);
		if (r->kind != TRC_TASK_KERNEL) {
			fprintf(f, ",0,0");
			for (int p = 0; p < ISA_NPIPES; p++)
				fprintf(f, ",0,0,0");
			fprintf(f, ",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,%llu,0,0\n", (unsigned long long)r->bytes);
			continue;
		}
		unsigned nc = r->cores ? r->cores : 1;
		fprintf(f, ",%.3f,%llu", dur, (unsigned long long)cyc);
		for (int p = 0; p < ISA_NPIPES; p++) {
			double busy = (double)r->st.busy_cycles[p] / nc;
			fprintf(f, ",%.3f,%.4f", busy / mhz, cyc ? busy / (double)cyc : 0.0);
		}
		for (int p = 0; p < ISA_NPIPES; p++)
			fprintf(f, ",%.4f", cyc ? (double)r->st.wait_cycles[p] / nc / (double)cyc : 0.0);
		fprintf(f, ",%.4f", cyc ? (double)r->st.queue_full_cycles / nc / (double)cyc : 0.0);
		double secs = (double)cyc / (mhz * 1e6);
		uint64_t l2 = r->st.l2_hit_bytes + r->st.l2_miss_bytes;
#define BW(b) (secs > 0 ? (double)(b) / secs / 1e9 : 0.0)
		uint64_t pred = t ? t->predicted_cycles : 0;
		fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,0,"
			   "%llu,%.3f\n",
			(unsigned long long)r->st.cube_flops, (unsigned long long)r->st.vec_flops,
			(unsigned long long)r->st.gm_read_bytes,
			(unsigned long long)r->st.gm_write_bytes, (unsigned long long)r->st.hbm_bytes,
			BW(r->st.gm_read_bytes), BW(r->st.gm_write_bytes), BW(r->st.hbm_bytes),
			BW(r->st.hbm_bytes - r->st.hbm_write_bytes), BW(r->st.hbm_write_bytes),
			l2 ? (double)r->st.l2_hit_bytes / (double)l2 : 0.0, BW(r->st.l1_to_l0a_bytes),
			BW(r->st.l1_to_l0b_bytes), BW(r->st.l0c_to_ub_bytes), (unsigned long long)pred,
			pred ? (double)cyc / (double)pred : 0.0);
#undef BW
	}
	if (close_ok(f, dir, "op_summary.csv", err, errlen)) {
		f = NULL;
		goto done;
	}

	if (!(f = open_in(dir, "task_time.csv", err, errlen)))
		goto done;
	fprintf(f, "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),"
		   "task_start(us),task_stop(us)\n");
	for (size_t i = 0; i < in->ntasks; i++) {
		const struct trc_task *r = &in->tasks[i];
		double st = (double)r->start / mhz, du = (double)(r->end - r->start) / mhz;
		fprintf(f, "0,");
		csv_str(f, r->kind == TRC_TASK_KERNEL && r->model == m && r->model_task >= 0
				   ? m->kernels[m->tasks[r->model_task].kernel].name : r->name);
		fprintf(f, ",%s,%u,%u,%.3f,%.3f,%.3f\n", task_type(r), r->stream_id, r->task_id, du,
			st, st + du);
	}
	if (close_ok(f, dir, "task_time.csv", err, errlen)) {
		f = NULL;
		goto done;
	}

	/* Chrome trace: pid 0..cores-1 the AI cores (tid = pipe), pid cores the
	 * streams (tid = stream id), pid cores+1 the copy engines (tid =
	 * direction) */
	if (!(f = open_in(dir, "timeline.json", err, errlen)))
		goto done;
	unsigned ps = cores, pc = cores + 1;
	fprintf(f, "[\n");
	for (unsigned c = 0; c < cores; c++) {
		fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
			   "\"args\": {\"name\": \"AI Core %u\"}},\n", c, c);
		fprintf(f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, "
			   "\"tid\": 0, \"args\": {\"sort_index\": %u}},\n", c, c + 2);
		for (int p = 0; p < ISA_NPIPES; p++)
			fprintf(f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, "
				   "\"tid\": %d, \"args\": {\"name\": \"%s\"}},\n",
				c, p, isa_pipe_name((enum isa_pipe)p));
	}
	fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"name\": \"Streams (tasks)\"}},\n", ps);
	fprintf(f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"sort_index\": 0}},\n", ps);
	fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"name\": \"Host <-> device copies\"}},\n", pc);
	fprintf(f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"sort_index\": 1}},\n", pc);
	static const char *const dirs[] = { "host to device", "device to host", "device to device" };
	for (int k = 0; k < 3; k++)
		fprintf(f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": %d, "
			   "\"args\": {\"name\": \"%s\"}},\n", pc, k, dirs[k]);
	unsigned named = 0;
	for (size_t i = 0; i < in->ntasks; i++) {
		const struct trc_task *r = &in->tasks[i];
		if (r->stream_id < 64 && !(named >> r->stream_id & 1)) {
			named |= 1u << (r->stream_id % 32);
			fprintf(f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": %u, "
				   "\"args\": {\"name\": \"Stream %u\"}},\n", ps, r->stream_id,
				r->stream_id);
		}
		double st = (double)r->start / mhz, du = (double)(r->end - r->start) / mhz;
		fprintf(f, "{\"name\": ");
		sim_json_str(f, r->name);
		fprintf(f, ", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
			   "\"args\": {\"Task Type\": \"%s\", \"Task Id\": %u, \"Stream Id\": %u, "
			   "\"Infer Id\": %d, \"OP Type\": ",
			ps, r->stream_id, st, du, task_type(r), r->task_id, r->stream_id, r->exec_id);
		sim_json_str(f, op_type(r, m));
		if (r->kind == TRC_TASK_KERNEL)
			fprintf(f, ", \"Block Dim\": %u}},\n", r->block_dim);
		else
			fprintf(f, ", \"size(B)\": %llu}},\n", (unsigned long long)r->bytes);
		if (r->kind == TRC_TASK_MEMCPY) {
			fprintf(f, "{\"name\": ");
			sim_json_str(f, r->name);
			fprintf(f, ", \"ph\": \"X\", \"pid\": %u, \"tid\": %d, \"ts\": %.3f, "
				   "\"dur\": %.3f, \"args\": {\"size(B)\": %llu, \"bandwidth(GB/s)\": "
				   "%.3f, \"Stream Id\": %u}},\n",
				pc, (int)r->dir, st, du, (unsigned long long)r->bytes,
				du > 0 ? (double)r->bytes / (du * 1e-6) / 1e9 : 0.0, r->stream_id);
		}
	}
	for (size_t k = 0; spans && k < spans->n; k++) {
		const struct trc_span *sp = &spans->v[k];
		const struct trc_task *r = index_find(&ix, in, sp->core, sp->start);
		fprintf(f, "{\"name\": ");
		sim_json_str(f, r ? r->name : "?");
		fprintf(f, ", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f},\n",
			sp->core, sp->pipe, (double)sp->start / mhz,
			(double)(sp->end - sp->start) / mhz);
	}
	/* a final metadata event keeps the array free of a trailing comma */
	fprintf(f, "{\"name\": \"process_labels\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"labels\": \"davinci-sim %s\"}}\n]\n", cores, cfg->name);
	if (close_ok(f, dir, "timeline.json", err, errlen)) {
		f = NULL;
		goto done;
	}

	/* summary.json: the plain-text summary's numbers */
	if (!(f = open_in(dir, "summary.json", err, errlen)))
		goto done;
	const struct trc_summary *s = in->sum;
	fprintf(f, "{\"soc\": ");
	sim_json_str(f, cfg->name);
	fprintf(f, ", \"main_memory\": ");
	sim_json_str(f, cfg->memory);
	fprintf(f, ", \"model\": ");
	sim_json_str(f, m->name);
	/* the roofs, so that tools reading only the files can place ops */
	double peak = trc_peak_flops(cfg);
	fprintf(f, ", \"peak_cube_tflops\": %.3f, \"hbm_bandwidth_gbps\": %g, "
		   "\"l2_bandwidth_gbps\": %g, \"task_gap_us\": %g, \"model_exec_us\": %g",
		peak / 1e12, cfg->hbm_bandwidth_gbps, cfg->l2_bandwidth_gbps,
		cfg->runtime_task_gap_us, cfg->runtime_model_exec_us);
	fprintf(f, ", \"aic_frequency_mhz\": %g, \"ai_cores\": %u, \"tasks\": %u, \"batch\": %u, "
		   "\"executions\": %u, \"streams\": %u, \"load_us\": %.3f, "
		   "\"first_latency_us\": %.3f, \"warm_latency_us\": %.3f, \"latency_us\": %.3f, "
		   "\"throughput_fps\": %.3f, \"h2d_us\": %.3f, \"d2h_us\": %.3f, "
		   "\"roofline_efficiency\": %.4f, \"pipe_utilization\": {",
		mhz, cores, m->ntasks, s->batch, s->execs, s->streams, s->load_us,
		s->first_latency_us, s->warm_latency_us, s->first_latency_us, s->throughput_fps,
		s->h2d_us, s->d2h_us, s->roofline_efficiency);
	for (int p = 0; p < ISA_NPIPES; p++)
		fprintf(f, "%s\"%s\": %.4f", p ? ", " : "", isa_pipe_name((enum isa_pipe)p),
			s->pipe_util[p]);
	fprintf(f, "}, \"top_ops\": [");
	for (unsigned i = 0; i < s->ntop; i++) {
		const struct om_task *t = &m->tasks[s->top[i].model_task];
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		sim_json_str(f, t->name);
		fprintf(f, ", \"type\": ");
		sim_json_str(f, t->op_type);
		fprintf(f, ", \"duration_us\": %.3f, \"share\": %.4f}", s->top[i].mean_us,
			s->top[i].share);
	}
	fprintf(f, "]}\n");
	rc = close_ok(f, dir, "summary.json", err, errlen);
	f = NULL;
done:
	if (f)
		fclose(f);
	free(wait);
	free(ix.task);
	free(ix.off);
	return rc;
}
