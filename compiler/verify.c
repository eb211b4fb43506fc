/* verify.c: run every task of a compiled model once on the simulator, in
 * timing mode, before the .om is written.
 *
 * The simulator checks each instruction against the hardware's rules (a
 * buffer access within L1, L0A/L0B/L0C and the UB and aligned as they must
 * be, a GM access within an allocation, repeat and burst fields in range,
 * no endless loop).  A kernel that breaks one is a compiler bug; running
 * the kernels here turns it into simatc's refusal naming the task, instead
 * of an .om that stops at run time.  The device memory is laid out as the
 * runtime lays it out (the weights, the workspace, each input and output,
 * each with the container's slack), so what passes here passes there.
 * Timing mode moves no bytes: the cost is a fraction of the compile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

struct regions {
	uint64_t weights, workspace;
	uint64_t *in, *out;
};

static int alloc_regions(struct sim_device *dev, const struct om_model *m, struct regions *r,
			 char *err, size_t errlen)
{
	r->in = calloc(m->ninputs ? m->ninputs : 1, sizeof *r->in);
	r->out = calloc(m->noutputs ? m->noutputs : 1, sizeof *r->out);
	if (!r->in || !r->out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->weights = sim_gm_alloc(dev, m->weights_bytes + OM_BUFFER_SLACK);
	r->workspace = sim_gm_alloc(dev, m->workspace_bytes + OM_BUFFER_SLACK);
	int ok = r->weights && r->workspace;
	for (uint32_t i = 0; ok && i < m->ninputs; i++)
		/* the tasks see an edge-converted input at its device type */
		ok = (r->in[i] = sim_gm_alloc(dev, om_edge_device_bytes(&m->inputs[i]) +
							   OM_BUFFER_SLACK)) != 0;
	for (uint32_t i = 0; ok && i < m->noutputs; i++)
		ok = (r->out[i] = sim_gm_alloc(dev, om_edge_device_bytes(&m->outputs[i]) +
							    OM_BUFFER_SLACK)) != 0;
	/* timing mode moves no data, but some instructions read their
	 * configuration from the weights (an AIPP config block) */
	if (ok && m->weights_bytes)
		ok = sim_gm_write(dev, r->weights, m->weights, m->weights_bytes) == 0;
	if (!ok) {
		snprintf(err, errlen, "the model's weights, workspace, inputs and outputs "
			 "(%llu + %llu bytes and more) do not fit the device memory",
			 (unsigned long long)m->weights_bytes,
			 (unsigned long long)m->workspace_bytes);
		return -1;
	}
	return 0;
}

int cc_verify_tasks(const struct soc_config *cfg, const struct om_model *m, char *err,
		    size_t errlen)
{
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	struct sim_device *dev = sim_device_new(cfg, &opt, err, errlen);
	if (!dev)
		return -1;
	struct regions r = { 0 };
	struct sim_kernel *k = calloc(m->nkernels ? m->nkernels : 1, sizeof *k);
	int rc = k ? alloc_regions(dev, m, &r, err, errlen) : -1;
	if (!k)
		snprintf(err, errlen, "out of memory");
	uint32_t loaded = 0;
	for (; loaded < m->nkernels && !rc; loaded++)
		rc = sim_kernel_load(&k[loaded], m->kernels[loaded].name, m->kernels[loaded].code,
				     m->kernels[loaded].bytes, err, errlen);
	for (uint32_t i = 0; i < m->ntasks && !rc; i++) {
		const struct om_task *t = &m->tasks[i];
		int64_t args[SIM_MAX_ARGS] = { 0 };
		struct sim_result res;
		if (t->nargs > SIM_MAX_ARGS) {
			snprintf(err, errlen, "task '%s' (%s): %u arguments, at most %d", t->name,
				 t->op_type, t->nargs, SIM_MAX_ARGS);
			rc = -1;
			break;
		}
		const struct om_places pl = { r.weights, r.workspace, r.in, r.out };
		om_task_args(t, &pl, args);
		if (sim_run(dev, &k[t->kernel], t->block_dim, args, t->nargs, &res)) {
			snprintf(err, errlen, "task '%s' (%s) breaks a hardware rule: %s", t->name,
				 t->op_type, res.error);
			rc = -1;
		}
		sim_result_free(&res);
	}
	for (uint32_t i = 0; i < loaded; i++)
		sim_kernel_free(&k[i]);
	free(k);
	free(r.in);
	free(r.out);
	sim_device_free(dev);
	return rc;
}
