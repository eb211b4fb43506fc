/* trace_writer.c: the trace directory of a model run (see trace.h), in
 * msprof's column names where they apply. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
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

/* The task running at cycle t (tasks run back to back on one stream). */
static int task_at(const struct om_model *m, const struct rt_run *run, uint64_t t)
{
	int lo = 0, hi = (int)m->ntasks - 1, best = 0;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (run->task[mid].start_cycle <= t) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

int trc_write(const char *dir, const struct soc_config *cfg, const struct om_model *m,
	      const struct rt_run *run, const struct trc_spans *spans, char *err,
	      size_t errlen)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (spans && spans->oom) {
		snprintf(err, errlen, "out of memory collecting the timeline");
		return -1;
	}
	double mhz = cfg->core_freq_mhz;
	double us0 = (double)run->start_cycle / mhz;
	FILE *f = open_in(dir, "op_summary.csv", err, errlen);
	if (!f)
		return -1;
	fprintf(f, "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,"
		   "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,"
		   "aicore_time(us),total_cycles");
	for (int p = 0; p < ISA_NPIPES; p++)
		fprintf(f, ",%s_time(us),%s_ratio", pipe_ratio_names[p], pipe_ratio_names[p]);
	fprintf(f, ",cube_fops,vector_fops,main_mem_read_bw(GB/s),main_mem_write_bw(GB/s)\n");
	uint64_t prev_end = run->start_cycle;
	for (unsigned i = 0; i < m->ntasks; i++) {
		const struct om_task *t = &m->tasks[i];
		const struct rt_task_time *tt = &run->task[i];
		double dur = (double)tt->cycles / mhz;
		double wait = tt->start_cycle > prev_end ? (double)(tt->start_cycle - prev_end) / mhz
							 : 0;
		prev_end = tt->start_cycle + tt->cycles;
		unsigned cores = tt->cores ? tt->cores : 1;
		fprintf(f, "0,1,%u,0,", i);
		csv_str(f, t->name);
		fputc(',', f);
		csv_str(f, t->op_type);
		fprintf(f, ",AI_CORE,%.3f,%.3f,%.3f,%u,%.3f,%llu",
			(double)tt->start_cycle / mhz - us0, dur, wait, t->block_dim, dur,
			(unsigned long long)tt->cycles);
		for (int p = 0; p < ISA_NPIPES; p++) {
			double busy = (double)tt->st.busy_cycles[p] / cores;
			fprintf(f, ",%.3f,%.4f", busy / mhz,
				tt->cycles ? busy / (double)tt->cycles : 0.0);
		}
		double secs = (double)tt->cycles / (mhz * 1e6);
		fprintf(f, ",%llu,%llu,%.3f,%.3f\n", (unsigned long long)tt->st.cube_flops,
			(unsigned long long)tt->st.vec_flops,
			secs > 0 ? (double)tt->st.gm_read_bytes / secs / 1e9 : 0,
			secs > 0 ? (double)tt->st.gm_write_bytes / secs / 1e9 : 0);
	}
	if (close_ok(f, dir, "op_summary.csv", err, errlen))
		return -1;

	if (!(f = open_in(dir, "task_time.csv", err, errlen)))
		return -1;
	fprintf(f, "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),"
		   "task_start(us),task_stop(us)\n");
	for (unsigned i = 0; i < m->ntasks; i++) {
		const struct rt_task_time *tt = &run->task[i];
		double s = (double)tt->start_cycle / mhz - us0, d = (double)tt->cycles / mhz;
		fprintf(f, "0,");
		csv_str(f, m->kernels[m->tasks[i].kernel].name);
		fprintf(f, ",AI_CORE,0,%u,%.3f,%.3f,%.3f\n", i, d, s, s + d);
	}
	if (close_ok(f, dir, "task_time.csv", err, errlen))
		return -1;

	/* Chrome trace: pid 0..cores-1 the AI cores (tid = pipe), pid cores the stream */
	if (!(f = open_in(dir, "timeline.json", err, errlen)))
		return -1;
	unsigned cores = (unsigned)cfg->core_count;
	fprintf(f, "[\n");
	for (unsigned c = 0; c < cores; c++) {
		fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
			   "\"args\": {\"name\": \"AI Core %u\"}},\n", c, c);
		fprintf(f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, "
			   "\"tid\": 0, \"args\": {\"sort_index\": %u}},\n", c, c + 1);
		for (int p = 0; p < ISA_NPIPES; p++)
			fprintf(f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, "
				   "\"tid\": %d, \"args\": {\"name\": \"%s\"}},\n",
				c, p, isa_pipe_name((enum isa_pipe)p));
	}
	fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"name\": \"Stream 0 (tasks)\"}},\n", cores);
	fprintf(f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"sort_index\": 0}},\n", cores);
	for (unsigned i = 0; i < m->ntasks; i++) {
		const struct rt_task_time *tt = &run->task[i];
		fprintf(f, "{\"name\": ");
		json_str(f, m->tasks[i].name);
		fprintf(f, ", \"ph\": \"X\", \"pid\": %u, \"tid\": 0, \"ts\": %.3f, \"dur\": %.3f, "
			   "\"args\": {\"Task Type\": \"AI_CORE\", \"Task Id\": %u, \"OP Type\": ",
			cores, (double)tt->start_cycle / mhz - us0, (double)tt->cycles / mhz, i);
		json_str(f, m->tasks[i].op_type);
		fprintf(f, ", \"Block Dim\": %u}},\n", m->tasks[i].block_dim);
	}
	for (size_t k = 0; spans && k < spans->n; k++) {
		const struct trc_span *sp = &spans->v[k];
		int ti = task_at(m, run, sp->start);
		fprintf(f, "{\"name\": ");
		json_str(f, m->tasks[ti].name);
		fprintf(f, ", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f},\n",
			sp->core, sp->pipe, (double)sp->start / mhz - us0,
			(double)(sp->end - sp->start) / mhz);
	}
	/* a final metadata event keeps the array free of a trailing comma */
	fprintf(f, "{\"name\": \"process_labels\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, "
		   "\"args\": {\"labels\": \"davinci-sim %s\"}}\n]\n", cores, cfg->name);
	if (close_ok(f, dir, "timeline.json", err, errlen))
		return -1;

	/* summary.json: the plain-text summary's numbers */
	if (!(f = open_in(dir, "summary.json", err, errlen)))
		return -1;
	double lat = (double)run->cycles / mhz;
	uint64_t busy[ISA_NPIPES] = { 0 };
	for (unsigned i = 0; i < m->ntasks; i++)
		for (int p = 0; p < ISA_NPIPES; p++)
			busy[p] += run->task[i].st.busy_cycles[p];
	fprintf(f, "{\"soc\": ");
	json_str(f, cfg->name);
	fprintf(f, ", \"model\": ");
	json_str(f, m->name);
	fprintf(f, ", \"tasks\": %u, \"latency_us\": %.3f, \"throughput_fps\": %.3f, "
		   "\"pipe_utilization\": {", m->ntasks, lat, lat > 0 ? 1e6 / lat : 0);
	for (int p = 0; p < ISA_NPIPES; p++)
		fprintf(f, "%s\"%s\": %.4f", p ? ", " : "", isa_pipe_name((enum isa_pipe)p),
			run->cycles ? (double)busy[p] / ((double)run->cycles * cores) : 0);
	fprintf(f, "}, \"top_ops\": [");
	/* the ten longest tasks, longest first (a selection: ntasks is small) */
	unsigned *idx = malloc((m->ntasks + 1) * sizeof *idx);
	if (!idx) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < m->ntasks; i++)
		idx[i] = i;
	unsigned top = m->ntasks < 10 ? m->ntasks : 10;
	for (unsigned i = 0; i < top; i++) {
		unsigned best = i;
		for (unsigned j = i + 1; j < m->ntasks; j++)
			if (run->task[idx[j]].cycles > run->task[idx[best]].cycles)
				best = j;
		unsigned tmp = idx[i];
		idx[i] = idx[best];
		idx[best] = tmp;
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		json_str(f, m->tasks[idx[i]].name);
		fprintf(f, ", \"type\": ");
		json_str(f, m->tasks[idx[i]].op_type);
		fprintf(f, ", \"duration_us\": %.3f}", (double)run->task[idx[i]].cycles / mhz);
	}
	free(idx);
	fprintf(f, "]}\n");
	return close_ok(f, dir, "summary.json", err, errlen);
}
