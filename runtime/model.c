/* model.c: one inference of an .om model on the simulated device.
 * Tasks run one after another (one stream); the device clock carries on
 * from task to task, so the L2 keeps what earlier tasks left in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* GM buffers get slack: kernels move whole 32-byte blocks and 256-byte
 * vector repeats past a tensor's last element. */
#define SLACK 1024

int rt_model_run(struct sim_device *dev, const struct om_model *m, const struct rt_tensor *inputs,
		 unsigned ninputs, struct rt_tensor *outputs, struct rt_run *run, char *err,
		 size_t errlen)
{
	memset(run, 0, sizeof *run);
	memset(outputs, 0, m->noutputs * sizeof *outputs);
	if (ninputs != m->ninputs) {
		snprintf(err, errlen, "model '%s' has %u inputs, %u given", m->name, m->ninputs,
			 ninputs);
		return -1;
	}
	for (unsigned i = 0; i < ninputs; i++) {
		const struct om_tensor_desc *d = &m->inputs[i];
		const struct rt_tensor *t = &inputs[i];
		int ok = t->dtype == d->dtype && t->rank == d->rank;
		for (int k = 0; ok && k < d->rank; k++)
			ok = t->dims[k] == d->dims[k];
		if (!ok || t->nbytes != d->size) {
			char want[128] = "", got[128] = "";
			size_t a = 0, b = 0;
			for (int k = 0; k < d->rank; k++)
				a += (size_t)snprintf(want + a, sizeof want - a, "%s%lld", k ? "," : "",
						      (long long)d->dims[k]);
			for (int k = 0; k < t->rank && k < 8; k++)
				b += (size_t)snprintf(got + b, sizeof got - b, "%s%lld", k ? "," : "",
						      (long long)t->dims[k]);
			snprintf(err, errlen,
				 "input %u ('%s'): the model wants type %d shape [%s], got type %d "
				 "shape [%s]", i, d->name, d->dtype, want, t->dtype, got);
			return -1;
		}
	}
	uint64_t wa = sim_gm_alloc(dev, m->weights_bytes + SLACK);
	uint64_t ws = sim_gm_alloc(dev, m->workspace_bytes + SLACK);
	uint64_t *ia = calloc(m->ninputs + 1, sizeof *ia), *oa = calloc(m->noutputs + 1, sizeof *oa);
	struct sim_kernel *k = calloc(m->nkernels + 1, sizeof *k);
	run->task = calloc(m->ntasks + 1, sizeof *run->task);
	int rc = -1;
	if (!wa || !ws || !ia || !oa || !k || !run->task) {
		snprintf(err, errlen, "model '%s' does not fit the device memory", m->name);
		goto done;
	}
	if (m->weights_bytes)
		sim_gm_write(dev, wa, m->weights, m->weights_bytes);
	for (unsigned i = 0; i < m->ninputs; i++) {
		ia[i] = sim_gm_alloc(dev, m->inputs[i].size + SLACK);
		if (!ia[i]) {
			snprintf(err, errlen, "input '%s' does not fit the device memory",
				 m->inputs[i].name);
			goto done;
		}
		sim_gm_write(dev, ia[i], inputs[i].data, inputs[i].nbytes);
	}
	for (unsigned i = 0; i < m->noutputs; i++) {
		oa[i] = sim_gm_alloc(dev, m->outputs[i].size + SLACK);
		if (!oa[i]) {
			snprintf(err, errlen, "output '%s' does not fit the device memory",
				 m->outputs[i].name);
			goto done;
		}
	}
	for (unsigned i = 0; i < m->nkernels; i++)
		if (sim_kernel_load(&k[i], m->kernels[i].name, m->kernels[i].code,
				    m->kernels[i].bytes, err, errlen))
			goto done;
	run->start_cycle = sim_device_now(dev);
	for (unsigned i = 0; i < m->ntasks; i++) {
		const struct om_task *t = &m->tasks[i];
		int64_t args[SIM_MAX_ARGS];
		if (t->nargs > SIM_MAX_ARGS) {
			snprintf(err, errlen, "task %u ('%s'): too many arguments", i, t->name);
			goto done;
		}
		for (unsigned a = 0; a < t->nargs; a++) {
			const struct om_arg *g = &t->args[a];
			switch (g->kind) {
			case OM_ARG_SCALAR: args[a] = g->value; break;
			case OM_ARG_WEIGHT: args[a] = (int64_t)wa + g->value; break;
			case OM_ARG_WORKSPACE: args[a] = (int64_t)ws + g->value; break;
			case OM_ARG_INPUT: args[a] = (int64_t)ia[g->index] + g->value; break;
			default: args[a] = (int64_t)oa[g->index] + g->value; break;
			}
		}
		struct sim_result res;
		if (sim_run(dev, &k[t->kernel], t->block_dim, args, t->nargs, &res)) {
			snprintf(err, errlen, "task %u ('%s', %s): %s", i, t->name, t->op_type,
				 res.error);
			sim_result_free(&res);
			goto done;
		}
		run->task[i].start_cycle = res.start_cycle;
		run->task[i].cycles = res.cycles;
		run->task[i].cores = res.ncores;
		run->task[i].st = res.total;
		sim_result_free(&res);
	}
	run->cycles = sim_device_now(dev) - run->start_cycle;
	for (unsigned i = 0; i < m->noutputs; i++) {
		const struct om_tensor_desc *d = &m->outputs[i];
		struct rt_tensor *o = &outputs[i];
		snprintf(o->name, sizeof o->name, "%s", d->name);
		o->dtype = d->dtype;
		o->rank = d->rank;
		for (int r = 0; r < d->rank; r++)
			o->dims[r] = d->dims[r];
		o->nbytes = d->size;
		o->data = malloc(d->size ? d->size : 1);
		if (!o->data) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
		sim_gm_read(dev, oa[i], o->data, d->size);
	}
	rc = 0;
done:
	if (rc) {
		for (unsigned i = 0; i < m->noutputs; i++)
			rt_tensor_free(&outputs[i]);
	}
	for (unsigned i = 0; k && i < m->nkernels; i++)
		sim_kernel_free(&k[i]);
	free(k);
	free(ia);
	free(oa);
	return rc;
}

void rt_run_free(struct rt_run *run)
{
	free(run->task);
	run->task = NULL;
}
