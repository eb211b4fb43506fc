/* model.c: one inference of an .om model on the simulated device, for
 * callers that want it in one call (tests, tools): load, copy the inputs
 * in, execute on the default stream, copy the outputs out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

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
	struct rt_device *rt = rt_device_wrap(dev, err, errlen);
	if (!rt)
		return -1;
	struct rt_model rm;
	uint64_t *ia = calloc(m->ninputs + 1, sizeof *ia), *oa = calloc(m->noutputs + 1, sizeof *oa);
	run->task = calloc(m->ntasks + 1, sizeof *run->task);
	int rc = -1, loaded = 0;
	if (!ia || !oa || !run->task) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
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
	}
	if (rt_model_load(rt, m, &rm, err, errlen))
		goto done;
	loaded = 1;
	struct rt_stream *s = rt_default_stream(rt);
	for (unsigned i = 0; i < m->ninputs; i++) {
		ia[i] = sim_gm_alloc(dev, m->inputs[i].size + RT_BUFFER_SLACK);
		if (!ia[i]) {
			snprintf(err, errlen, "input '%s' does not fit the device memory",
				 m->inputs[i].name);
			goto done;
		}
		if (rt_memcpy_async(s, SIM_COPY_H2D, inputs[i].data, ia[i], 0, inputs[i].nbytes,
				    err, errlen))
			goto done;
	}
	for (unsigned i = 0; i < m->noutputs; i++) {
		oa[i] = sim_gm_alloc(dev, m->outputs[i].size + RT_BUFFER_SLACK);
		if (!oa[i]) {
			snprintf(err, errlen, "output '%s' does not fit the device memory",
				 m->outputs[i].name);
			goto done;
		}
	}
	int exec = rt_model_execute_async(&rm, s, ia, oa, err, errlen);
	if (exec < 0)
		goto done;
	for (unsigned i = 0; i < m->noutputs; i++)
		if (rt_memcpy_async(s, SIM_COPY_D2H, outputs[i].data, oa[i], 0, m->outputs[i].size,
				    err, errlen))
			goto done;
	if (rt_synchronize(rt, err, errlen))
		goto done;
	size_t nt, ne;
	const struct rt_task_record *tr = rt_tasks(rt, &nt);
	const struct rt_exec_record *er = rt_execs(rt, &ne);
	run->start_cycle = er[exec].start;
	run->cycles = er[exec].end - er[exec].start;
	for (size_t i = 0; i < nt; i++) {
		if (tr[i].exec_id != exec || tr[i].model_task < 0)
			continue;
		struct rt_task_time *tt = &run->task[tr[i].model_task];
		tt->start_cycle = tr[i].start;
		tt->cycles = tr[i].end - tr[i].start;
		tt->cores = tr[i].cores;
		tt->st = tr[i].st;
	}
	rc = 0;
done:
	if (rc)
		for (unsigned i = 0; i < m->noutputs; i++)
			rt_tensor_free(&outputs[i]);
	for (unsigned i = 0; ia && i < m->ninputs; i++)
		if (ia[i])
			sim_gm_free(dev, ia[i]);
	for (unsigned i = 0; oa && i < m->noutputs; i++)
		if (oa[i])
			sim_gm_free(dev, oa[i]);
	if (loaded)
		rt_model_unload(&rm);
	rt_device_free(rt);
	free(ia);
	free(oa);
	return rc;
}

void rt_run_free(struct rt_run *run)
{
	free(run->task);
	run->task = NULL;
}
