/* om_json.c: an .om as JSON (om_json.h). */
#include "om_json.h"

#include <inttypes.h>

#include "sim.h"

static void attr_s(FILE *f, const char *key, const char *s, int first)
{
	fprintf(f, "%s\n    {\"key\": ", first ? "" : ",");
	sim_json_str(f, key);
	fprintf(f, ", \"value\": {\"s\": ");
	sim_json_str(f, s);
	fprintf(f, "}}");
}

static void attr_i(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, ",\n    {\"key\": ");
	sim_json_str(f, key);
	fprintf(f, ", \"value\": {\"i\": %" PRIu64 "}}", v);
}

static void descs(FILE *f, const struct om_tensor_desc *d, uint32_t n)
{
	fprintf(f, "[");
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		sim_json_str(f, d[i].name);
		fprintf(f, ", \"dtype\": ");
		sim_json_str(f, om_dtype_name(d[i].dtype));
		fprintf(f, ", \"layout\": ");
		sim_json_str(f, om_format_name(d[i].format));
		fprintf(f, ", \"shape\": [");
		for (int32_t k = 0; k < d[i].rank && k < OM_MAX_RANK; k++)
			fprintf(f, "%s%" PRId64, k ? ", " : "", d[i].dims[k]);
		fprintf(f, "], \"size\": %" PRIu64 "}", d[i].size);
	}
	fprintf(f, "]");
}

void om_write_json(const struct om_model *m, const char *producer, FILE *f)
{
	uint64_t code = 0;
	for (uint32_t k = 0; k < m->nkernels; k++)
		code += m->kernels[k].bytes;
	fprintf(f, "{\n  \"name\": ");
	sim_json_str(f, m->name);
	fprintf(f, ",\n  \"attr\": [");
	attr_s(f, "soc_version", m->soc, 1);
	attr_s(f, "producer", producer, 0);
	attr_i(f, "weight_size", m->weights_bytes);
	attr_i(f, "memory_size", m->workspace_bytes);
	attr_i(f, "kernel_code_size", code);
	attr_i(f, "task_count", m->ntasks);
	int64_t sz[OM_MAX_VARIANTS + 1];
	unsigned ns = om_batch_sizes(m, sz);
	if (ns) { /* a dynamic-batch model: its sizes, as --dynamic_batch_size gave them */
		char list[OM_MAX_VARIANTS * 21 + 1];
		size_t o = 0;
		for (unsigned k = 0; k < ns && o < sizeof list; k++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%" PRId64, k ? "," : "",
					      sz[k]);
		attr_s(f, "dynamic_batch_size", list, 0);
	}
	if (m->ndims) { /* a dynamic-dims model: its profiles, as --dynamic_dims gave them */
		char list[(OM_MAX_VARIANTS + 1) * 170 + 1];
		size_t o = 0;
		for (unsigned k = 0; k <= m->nvariants && o < sizeof list; k++) {
			const struct om_model *p = om_dims_profile(m, k);
			for (uint32_t d = 0; d < p->ndims && o < sizeof list; d++)
				o += (size_t)snprintf(list + o, sizeof list - o, "%s%" PRId64,
						      d ? "," : k ? ";" : "", p->dims[d]);
		}
		attr_s(f, "dynamic_dims", list, 0);
	}
	fprintf(f, "\n  ],\n  \"input\": ");
	descs(f, m->inputs, m->ninputs);
	fprintf(f, ",\n  \"output\": ");
	descs(f, m->outputs, m->noutputs);
	fprintf(f, ",\n  \"op\": [");
	for (uint32_t i = 0; i < m->ntasks; i++) {
		const struct om_task *t = &m->tasks[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		sim_json_str(f, t->name);
		fprintf(f, ", \"type\": ");
		sim_json_str(f, t->cann_type[0] ? t->cann_type : t->op_type);
		fprintf(f, ", \"onnx_ops\": ");
		sim_json_str(f, t->op_type);
		fprintf(f, ", \"block_dim\": %" PRIu32 ", \"kernel\": ", t->block_dim);
		sim_json_str(f, t->kernel < m->nkernels ? m->kernels[t->kernel].name : "");
		fprintf(f, ", \"kernel_bytes\": %" PRIu64 ", \"predicted_cycles\": %" PRIu64
			   ", \"flops\": %" PRIu64 ", \"bytes\": %" PRIu64 ",\n     \"input_desc\": ",
			t->kernel < m->nkernels ? m->kernels[t->kernel].bytes : 0,
			t->predicted_cycles, t->flops, t->bytes);
		descs(f, t->inputs, t->ninputs);
		fprintf(f, ",\n     \"output_desc\": ");
		descs(f, t->outputs, t->noutputs);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
}
