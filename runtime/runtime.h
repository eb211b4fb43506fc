/* runtime.h: the device runtime: streams, events, copies, model load and
 * execution on a simulated device, and the log of every task it ran.
 *
 * What it models (each parameter a SoC config key with its source):
 *  - streams are in-order queues of tasks; tasks of different streams run
 *    concurrently on free AI cores (the simulator hands out blocks);
 *  - a kernel task starts runtime.task_gap_us after its predecessor in the
 *    stream ended (the device task scheduler's dispatch cost);
 *  - a model execution costs runtime.model_exec_us before its first task
 *    (the host call, the model-execute task releasing the loaded stream
 *    and the completion back to the host, as a synchronous aclmdlExecute
 *    is timed);
 *  - host <-> device copies take the PCIe link of their direction
 *    (pcie.bandwidth_gbps, pcie.latency_us) and overlap with compute of
 *    other streams;
 *  - model load copies the weights to device memory over PCIe.
 * Work is queued by the *_async calls and simulated by rt_synchronize; the
 * host takes no simulated time, so the device clock at a synchronize is the
 * host's "now" for the work queued after it. */
#ifndef DV_RUNTIME_H
#define DV_RUNTIME_H

#include "om.h"
#include "run_log.h"
#include "sim.h"

/* The slack every device buffer of a model gets (om.h says why). */
#define RT_BUFFER_SLACK OM_BUFFER_SLACK

struct rt_device;
struct rt_stream;
struct rt_event;

struct rt_device *rt_device_new(const struct soc_config *cfg, const struct sim_options *opt,
				char *err, size_t errlen);
/* A runtime on a device the caller owns (kept; not freed by rt_device_free). */
struct rt_device *rt_device_wrap(struct sim_device *sim, char *err, size_t errlen);
void rt_device_free(struct rt_device *d);
struct sim_device *rt_device_sim(struct rt_device *d);
const struct soc_config *rt_device_config(const struct rt_device *d);
/* Switch full/timing mode for work queued from now on (cycles are equal). */
void rt_device_set_mode(struct rt_device *d, enum sim_mode mode);

/* Replace the simulated SoC of an idle device (nothing queued, nothing
 * allocated: the caller's part): its streams stay valid, its clock and log
 * start again. */
int rt_device_reconfigure(struct rt_device *d, const struct soc_config *cfg,
			  const struct sim_options *opt, char *err, size_t errlen);

/* Stream 0 exists from the start (the default stream). */
struct rt_stream *rt_default_stream(struct rt_device *d);
struct rt_stream *rt_stream_new(struct rt_device *d);
/* Destroys the stream once its queued work has run (at the next synchronize). */
void rt_stream_free(struct rt_stream *s);
unsigned rt_stream_id(const struct rt_stream *s);

struct rt_event *rt_event_new(struct rt_device *d);
/* Only once no queued work names e (after a synchronize). */
void rt_event_free(struct rt_event *e);
/* The event fires when the work queued on s before it has completed. */
int rt_event_record(struct rt_event *e, struct rt_stream *s);
/* Work queued on s after this waits until e has fired (e recorded first). */
int rt_stream_wait_event(struct rt_stream *s, struct rt_event *e);
/* 1 and the cycle it fired, once it has; 0 otherwise; -1 when a failed
 * synchronize dropped its latest record (it counts as fired for waits). */
int rt_event_query(const struct rt_event *e, uint64_t *cycle);

/* Work queued on s after this starts no earlier than device cycle `cycle`:
 * the host submitting it at that instant (a serving simulation replaying
 * request arrivals; the runtime otherwise takes the host as never late). */
int rt_stream_hold(struct rt_stream *s, uint64_t cycle);

/* Queue a copy on s.  host must stay valid until it has completed. */
int rt_memcpy_async(struct rt_stream *s, enum sim_copy_dir dir, void *host, uint64_t dev,
		    uint64_t src, uint64_t bytes, char *err, size_t errlen);
/* Queue one kernel launch on s; name and op_type label it in the log. */
int rt_launch_async(struct rt_stream *s, const struct sim_kernel *k, unsigned block_dim,
		    const int64_t *args, unsigned nargs, const char *name, const char *op_type,
		    char *err, size_t errlen);
/* The log's notion of a model execution, for work queued by hand: the work
 * queued on s between rt_exec_begin (which returns the execution id, or -1)
 * and rt_exec_end is one execution of om; rt_launch_task_async queues
 * om's task model_task (its name, type and block_dim) with the given
 * kernel and arguments as part of it.  rt_model_execute_async does all
 * of this for a loaded model. */
int rt_exec_begin(struct rt_stream *s, const struct om_model *om);
int rt_exec_end(struct rt_stream *s, int exec_id);
int rt_launch_task_async(struct rt_stream *s, const struct sim_kernel *k, const int64_t *args,
			 unsigned nargs, const struct om_model *om, unsigned model_task,
			 int exec_id, char *err, size_t errlen);

/* Run everything queued.  Errors name the task (stream, name, type) and
 * carry the simulator's core/pipe/pc message; the queues are then empty and
 * the events whose records were dropped count as fired (at the failure). */
int rt_synchronize(struct rt_device *d, char *err, size_t errlen);
uint64_t rt_now(const struct rt_device *d);

/* fn(ctx, r) is called as each task completes (progress displays). */
void rt_device_on_task(struct rt_device *d,
		       void (*fn)(void *ctx, const struct trc_task *r), void *ctx);

/* The log, in completion order: a trc_task per completed task, a trc_exec
 * per model execution (run_log.h: traces are made from these records). */
const struct trc_task *rt_tasks(const struct rt_device *d, size_t *n);
const struct trc_exec *rt_execs(const struct rt_device *d, size_t *n);
void rt_log_clear(struct rt_device *d);

/* A model in device memory: weights (shared between clones) and a private
 * workspace, so clones may execute at once on different streams. */
struct rt_model {
	const struct om_model *om;
	struct rt_device *dev;
	struct sim_kernel *kernels;
	uint64_t weights, workspace;
	int owns_weights;
	int variant; /* rt_model_load_variant's: its kernels only are its own */
	uint64_t load_start, load_end; /* the weights' copy, cycles */
	/* per instance: the device-typed buffers of the inputs and outputs the
	 * runtime converts at the edge (om_edge.c), 0 for the others */
	uint64_t *edge_in, *edge_out;
};

/* Allocate and copy the weights (queued on the default stream and
 * synchronized: the load time is load_end - load_start; the copy is logged
 * as TRC_MODEL_LOAD_TYPE, run_log.h). */
int rt_model_load(struct rt_device *d, const struct om_model *om, struct rt_model *m, char *err,
		  size_t errlen);
/* Another instance of src sharing its weights, with its own workspace. */
int rt_model_clone(const struct rt_model *src, struct rt_model *m, char *err, size_t errlen);
/* The batch variant vom (om.h) of the loaded dynamic-batch model base: its
 * own kernels, base's weights and workspace (sized for every batch), so it
 * executes in base's place, not beside it.  Unload it before base. */
int rt_model_load_variant(const struct rt_model *base, const struct om_model *vom,
			  struct rt_model *m, char *err, size_t errlen);
/* Only once no queued work executes m (after a synchronize). */
void rt_model_unload(struct rt_model *m);
/* Queue every task of the model on s with inputs and outputs at the given
 * device addresses (sizes as the model's descriptors say).  Returns the
 * execution id (>= 0) or -1. */
int rt_model_execute_async(struct rt_model *m, struct rt_stream *s, const uint64_t *inputs,
			   const uint64_t *outputs, char *err, size_t errlen);

/* A benchmark run of one model, as simrun does it.
 * Without per-set inputs (sets_each == 0): every stream gets its own model
 * instance and buffers, copies inputs[0] in, executes, copies the outputs
 * out, then executes loop - 1 more times back to back; outputs receive
 * stream 0's results.  With sets_each: set k (inputs[k * ninputs...]) runs
 * once on stream k % streams with its own copies in and out into
 * outputs[k * noutputs...].  timing_warm switches to timing-only
 * simulation after the first executions (the cycles are the same). */
struct rt_session {
	unsigned loop, streams;
	int sets_each, timing_warm;
};
struct om_tensor;
int rt_session_run(struct rt_device *d, const struct om_model *om, const struct rt_session *o,
		   const struct om_tensor *inputs, unsigned nsets, struct om_tensor *outputs,
		   double *load_us, char *err, size_t errlen);

#endif
