/* model.h: running a loaded .om model on a simulated device. */
#ifndef DV_MODEL_H
#define DV_MODEL_H

#include "om.h"
#include "runtime.h"
#include "sim.h"
#include "tensor_io.h"

struct rt_task_time {
	uint64_t start_cycle, cycles; /* device cycles */
	unsigned cores;               /* cores the task used */
	struct sim_core_stats st;     /* summed over its cores */
};

struct rt_run {
	uint64_t start_cycle, cycles; /* the whole inference */
	struct rt_task_time *task;    /* [m->ntasks] */
};

/* Run every task of m in order on dev: copies the weights and inputs in,
 * resolves each task's arguments, simulates it, and reads the outputs back
 * into outputs[0..noutputs-1] (allocated here; free with om_tensor_free).
 * Inputs must match the model's input descriptors (dtype and shape); errors
 * name the input, or the task and the simulator's message. */
int rt_model_run(struct sim_device *dev, const struct om_model *m, const struct om_tensor *inputs,
		 unsigned ninputs, struct om_tensor *outputs, struct rt_run *run, char *err,
		 size_t errlen);
void rt_run_free(struct rt_run *run);

#endif
