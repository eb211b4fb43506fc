/* model.c: one inference of an .om model on the simulated device, for
 * callers that want it in one call (tests, tools): load, copy the inputs
 * in, execute on the default stream, copy the outputs out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int rt_model_run(struct sim_device *dev, const struct om_model *m, const struct om_tensor *inputs,
		 unsigned ninputs, struct om_tensor *outputs, struct rt_run *run, char *err,
		 size_t errlen)
{
	memset(run, 0, sizeof *run);
	memset(outputs, 0, m->noutputs * sizeof *outputs);
	if (ninputs != m->ninputs) {
		snprintf(err, errlen, "model '%s' has %u inputs, %u given", m->name, m->ninputs,
			 ninputs);
		return -1;
	}
	struct rt_device *rt = rt_device_wrap(dev, err, errlen);
	run->task = calloc(m->ntasks + 1, sizeof *run->task);
	if (!rt || !run->task) {
		if (rt)
			snprintf(err, errlen, "out of memory");
		rt_device_free(rt);
		return -1;
	}
	/* one execution on the default stream, its copies in and out included */
	struct rt_session one = { .loop = 1, .streams = 1 };
	int rc = rt_session_run(rt, m, &one, inputs, 1, outputs, NULL, err, errlen);
	if (!rc) {
		size_t nt, ne;
		const struct trc_task *tr = rt_tasks(rt, &nt);
		const struct trc_exec *er = rt_execs(rt, &ne);
		run->start_cycle = er[0].start;
		run->cycles = er[0].end - er[0].start;
		for (size_t i = 0; i < nt; i++) {
			if (tr[i].exec_id != 0 || tr[i].model_task < 0)
				continue;
			struct rt_task_time *tt = &run->task[tr[i].model_task];
			tt->start_cycle = tr[i].start;
			tt->cycles = tr[i].end - tr[i].start;
			tt->cores = tr[i].cores;
			tt->st = tr[i].st;
		}
	}
	rt_device_free(rt);
	return rc;
}

void rt_run_free(struct rt_run *run)
{
	free(run->task);
	run->task = NULL;
}
