/* acl_int.h: what the files of the ACL layer (runtime/acl*.c) share: the
 * objects behind acl.h's handles, the one process-wide state struct, and
 * the helpers every entry point uses (errors, handle sets, device ranges,
 * synchronization).  Not installed: programs see acl.h only.
 *
 * Handles are checked against the sets of live ones before use, by pointer
 * value only, so a NULL, stale or made-up handle is an error and never
 * dereferenced.  Device pointers are the simulator's addresses; the table
 * of aclrtMalloc allocations tells a device pointer from a host one and
 * bounds every copy. */
#ifndef DV_ACL_INT_H
#define DV_ACL_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "acl.h"
#include "runtime.h"
#include "trace.h"

/* libdavinci-acl exports the acl* API only; these internal names start
 * with acl_ too, so they are hidden rather than left to the export list. */
#pragma GCC visibility push(hidden)

/* set = lines an aclInit config may hold */
#define MAX_SETS 64

struct handles { /* the live objects of one kind */
	void **v;
	size_t n, cap;
};

struct dev_alloc {
	uint64_t addr, size; /* size as asked for; copies are checked against it */
};

struct acl_event {
	struct rt_event *e;
	int recorded; /* recorded at least once */
	int dead;     /* its latest record was dropped by a failed simulation */
};

struct acl_model {
	struct om_model om;
	struct rt_model rm;
	/* a dynamic-batch model's other programs, om.variants' order, sharing
	 * rm's weights and workspace */
	struct rt_model *vrm;
	/* recorded after each execution and waited for before the next, so
	 * executions on different streams do not share the workspace at once */
	struct rt_event *done;
	int done_dead; /* its latest record was dropped: nothing to wait for */
};

struct acl_context {
	int32_t device;
};

struct aclmdlDesc {
	uint32_t nin, nout;
	struct om_tensor_desc *in, *out; /* in: a dynamic-batch model's ends with
					  * ACL_DYNAMIC_TENSOR_NAME's */
	unsigned nbatch;                 /* its batch sizes, ascending; 0: static */
	int64_t batch[OM_MAX_VARIANTS + 1];
	/* a dynamic-dims model's profiles (0: not one): gear k's inputs' shapes
	 * one after another, gear_dims values each, at gear[k * gear_dims] */
	unsigned ngear, gear_dims;
	int64_t *gear;
};

struct aclmdlDataset {
	aclDataBuffer **b;
	size_t n, cap;
};

struct aclDataBuffer {
	void *data;
	size_t size;
};

struct aclprofConfig {
	aclprofAicoreMetrics metrics;
	uint64_t types;
};

struct soc_set_line {
	char *assign; /* "sec.key=value" */
	int line;
};

/* A callback from aclrtLaunchCallback (acl_report.c). */
struct acl_callback {
	aclrtCallback fn;
	void *user;
	int block;
	enum { CB_QUEUED, CB_DUE, CB_RUNNING } state;
	uint64_t tid;          /* the thread subscribed to its stream at launch; 0: dropped */
	uint64_t seq;          /* launch order */
	uint64_t cycle;        /* when its stream reached it (CB_DUE, CB_RUNNING) */
	struct rt_stream *stream;
	struct rt_event *mark; /* recorded behind the work before it (CB_QUEUED) */
};

struct acl_subscription {
	uint64_t tid;
	struct rt_stream *stream;
};

/* ACL's API is process-wide: aclInit, aclrtSetDevice, model ids and the
 * handle functions take no context argument, so what they act on must be
 * reachable from every entry point.  All of it lives in this one struct,
 * the single exception to the project's no-global-state rule; nothing
 * else in the library has mutable static state. */
struct acl_state {
	int state; /* 0 never initialized, 1 initialized, 2 finalized */
	char soc[512];       /* the SoC to simulate: a chip name or an .ini path */
	char soc_from[600];  /* where that choice came from, for messages */
	int soc_in_config;   /* it came from the config file */
	int soc_is_default;  /* nothing named it: the first model loaded may choose */
	char config[512];    /* aclInit's config file, for messages */
	struct soc_set_line sets[MAX_SETS];
	unsigned nsets;
	struct soc_config cfg;
	struct rt_device *dev;
	unsigned dev_refs;   /* aclrtSetDevice calls (and contexts) not yet reset */
	int pending;         /* work queued since the last synchronization */
	struct handles streams, events, contexts, descs, datasets, buffers, hosts;
	struct acl_context default_ctx; /* the device's implicit context */
	struct acl_context *current_ctx;
	struct dev_alloc *allocs;
	size_t nallocs, capallocs;
	struct acl_model **models; /* id = index + 1; NULL once unloaded */
	size_t nmodels, capmodels;
	struct rt_event **zombies; /* destroyed while queued work may name them */
	size_t nzombies, capzombies;
	char msg[4096];
	int has_msg;
	struct acl_prof {    /* aclprof*: see acl_prof.c */
		int inited;
		char dir[512];
		const aclprofConfig *running; /* between aclprofStart and aclprofStop */
		struct trc_spans spans;
		/* models unloaded while profiling: kept until the profile ends so
		 * that no new model takes the address the task log names */
		struct acl_model **retired;
		size_t nretired, capretired;
	} prof;
	struct handles profcfgs;
	/* Callbacks (acl_report.c): the one part of the state that another
	 * thread, the report thread in aclrtProcessReport, touches; mu guards
	 * every field, cv is broadcast whenever a callback becomes due or has
	 * run and when subscriptions change. */
	struct acl_report {
		pthread_mutex_t mu;
		pthread_cond_t cv;
		int live; /* between aclInit and aclFinalize */
		struct acl_subscription *subs;
		size_t nsubs, capsubs;
		struct acl_callback *cbs; /* queued, due and running, in (cycle, seq) order once due */
		size_t ncbs, capcbs;
		uint64_t next_seq;
		void *(*release)(void); /* aclsimSetWaitHooks */
		void (*reacquire)(void *);
	} report;
};
extern struct acl_state acl_state; /* defined in acl.c */

/* --- errors (acl.c) ----------------------------------------------------- */

/* Record "fn: message" as aclGetRecentErrMsg's text and return code. */
__attribute__((format(printf, 3, 4))) aclError acl_fail(aclError code, const char *fn,
							 const char *fmt, ...);
#define FAIL(code, ...) acl_fail(code, __func__, __VA_ARGS__)

aclError acl_need_init(const char *fn);
aclError acl_need_device(const char *fn);

#define NEED_INIT()                                        \
	do {                                               \
		aclError e_ = acl_need_init(__func__);     \
		if (e_ != ACL_SUCCESS)                     \
			return e_;                         \
	} while (0)
#define NEED_DEVICE()                                      \
	do {                                               \
		aclError e_ = acl_need_device(__func__);   \
		if (e_ != ACL_SUCCESS)                     \
			return e_;                         \
	} while (0)

/* --- aclInit's config and the SoC (acl_config.c) ------------------------- */

void acl_copy_str(char *dst, size_t len, const char *src);
aclError acl_read_config(const char *fn, const char *path);
aclError acl_load_soc(const char *fn, const char *soc, const char *from, aclError code,
		      struct soc_config *cfg);
void acl_free_sets(void);

/* --- sets of live handles (acl_handles.c) -------------------------------- */

int acl_grow(void **v, size_t *cap, size_t n, size_t size);
int acl_h_add(struct handles *h, void *p);
int acl_h_has(const struct handles *h, const void *p);
void acl_h_del(struct handles *h, const void *p);
void acl_h_clear(struct handles *h);

/* --- the device and synchronization (acl_rt.c) --------------------------- */

void acl_drained(void);
aclError acl_run_queued(const char *fn);
void acl_destroy_device(void);

/* --- streams (acl_stream.c) ---------------------------------------------- */

aclError acl_get_stream(const char *fn, aclrtStream st, struct rt_stream **out);

/* --- callbacks (acl_report.c) -------------------------------------------- */

void acl_report_live(int live);
void acl_report_deliver(void);
void acl_report_wait_blocking(void);
void acl_report_forget_stream(const struct rt_stream *s);
void acl_report_clear(void);
int acl_report_outstanding(void);
void acl_report_free(void);

/* --- device memory (acl_mem.c) ------------------------------------------- */

uint64_t acl_dev_addr(const void *p);
const struct dev_alloc *acl_dev_range(const void *p, uint64_t n);

/* --- models and datasets (acl_mdl.c, acl_dataset.c) ---------------------- */

struct acl_model *acl_get_model(const char *fn, uint32_t id);
aclError acl_dataset_ok(const char *fn, const aclmdlDataset *ds);
/* The descriptor of a dynamic-batch model's batch input (acl.h). */
/* The descriptor of m's ACL_DYNAMIC_TENSOR_NAME input: one uint64 per value
 * (the batch, or each -1 dimension of a dynamic-dims model). */
void acl_batch_desc(const struct om_model *m, struct om_tensor_desc *d);
/* The values a dynamic model's ACL_DYNAMIC_TENSOR_NAME input holds: 1 for a
 * dynamic-batch model, its dims' count for a dynamic-dims one, 0 else. */
unsigned acl_dynamic_values(const struct om_model *m);

/* --- profiling (acl_prof.c) ---------------------------------------------- */

void acl_prof_end(void);
int acl_prof_retire(struct acl_model *m);

#pragma GCC visibility pop

#endif
