/* run_log.h: the log of a run that traces are made from, one record per
 * completed device task and one per model execution, as msprof records
 * them.  The runtime keeps its log in these records (runtime.h's
 * rt_tasks, rt_execs) and tests may write them by hand; the summary and
 * the trace writer read nothing else of a run, so traces/ stands below the
 * runtime and needs none of it. */
#ifndef DV_RUN_LOG_H
#define DV_RUN_LOG_H

#include <stdint.h>

#include "om.h"
#include "sim.h"

enum trc_task_kind { TRC_TASK_KERNEL, TRC_TASK_MEMCPY };

#define TRC_MAX_CORES 1024 /* soc.def's limit on core.count */

/* The op_type of the copy that loads a model's weights: the summary counts
 * its time as load time, not as an input copy. */
#define TRC_MODEL_LOAD_TYPE "MODEL_LOAD"

/* One completed device task. */
struct trc_task {
	enum trc_task_kind kind;
	unsigned task_id;   /* in completion order over the device's life */
	unsigned stream_id;
	int exec_id;        /* the model execution it belongs to, or -1 */
	int model_task;     /* index into the model's tasks, or -1 */
	const struct om_model *model;
	char name[128];
	char op_type[64];
	uint64_t queued;     /* cycle its predecessor in the stream ended */
	uint64_t start, end; /* cycles */
	unsigned block_dim, cores;
	enum sim_copy_dir dir; /* copies */
	uint64_t bytes;
	struct sim_core_stats st; /* kernels: summed over cores */
	uint64_t core_cycles; /* kernels: the cycles its blocks ran, summed over cores (st.cycles
			       * is its span) */
	uint64_t core_mask[TRC_MAX_CORES / 64]; /* kernels: the cores that ran its blocks */
};

static inline int trc_task_on_core(const struct trc_task *r, unsigned core)
{
	return core < TRC_MAX_CORES && (r->core_mask[core / 64] >> (core % 64) & 1);
}

/* One model execution: when the stream released its first task and when
 * its last task ended. */
struct trc_exec {
	int exec_id;
	unsigned stream_id;
	const struct om_model *model;
	uint64_t start, end;
	unsigned first_task, ntasks; /* task_ids of its tasks are recorded in the log */
};

#endif
