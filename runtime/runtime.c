/* runtime.c: streams, events and copies over the simulator's launches.
 *
 * Each stream is a FIFO of items.  A stream runs one device task at a time:
 * when the simulator reports a task complete (sim_drain's callback), the
 * stream moves on through its items at that cycle: events fire, waits
 * resolve, and the next kernel or copy is submitted.  So all of the
 * scheduling happens in simulated time order, inside sim_drain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

enum item_kind { IT_KERNEL, IT_COPY, IT_RECORD, IT_WAIT, IT_EXEC_BEGIN, IT_EXEC_END, IT_HOLD,
		 IT_EDGE };

struct item {
	struct item *next;
	enum item_kind kind;
	struct rt_stream *s;
	struct sim_launch l;
	struct rt_event *ev;
	uint64_t gen; /* IT_WAIT: the record it waits for */
	uint64_t until; /* IT_HOLD: the cycle the stream waits for */
	int exec_id, model_task;
	const struct om_model *model;
	/* IT_EDGE: convert desc's elements from edge_src to edge_dst */
	const struct om_tensor_desc *desc;
	uint64_t edge_src, edge_dst;
	int to_device;
	char name[128], op_type[64];
	uint64_t queued;
};

struct rt_stream {
	struct rt_device *d;
	unsigned id;
	struct item *head, *tail;
	struct item *running; /* submitted to the device */
	struct rt_event *blocked; /* waiting for this event */
	uint64_t last_end;
	int freed;
};

struct rt_event {
	struct rt_device *d;
	uint64_t records, fired; /* records queued, records done */
	uint64_t dropped;        /* the latest record a failed synchronize dropped */
	uint64_t cycle;          /* when the latest record fired */
};

struct rt_device {
	struct sim_device *sim;
	int owns_sim;
	struct rt_stream **streams;
	size_t nstreams, capstreams;
	unsigned next_stream_id;
	struct trc_task *tasks;
	size_t ntasks, captasks;
	struct trc_exec *execs;
	size_t nexecs, capexecs;
	uint64_t gap_cycles;  /* runtime.task_gap_us */
	uint64_t exec_cycles; /* runtime.model_exec_us */
	int oom;
	char fail[256]; /* why a submit failed inside the scheduler */
	void (*on_task)(void *ctx, const struct trc_task *r);
	void *on_task_ctx;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 16;
	void *p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* The runtime's costs in device cycles, from the simulator's SoC. */
static void derive_costs(struct rt_device *d)
{
	const struct soc_config *cfg = sim_device_config(d->sim);
	d->gap_cycles = (uint64_t)(cfg->runtime_task_gap_us * cfg->core_freq_mhz + 0.5);
	d->exec_cycles = (uint64_t)(cfg->runtime_model_exec_us * cfg->core_freq_mhz + 0.5);
}

static struct rt_device *init(struct sim_device *sim, int owns, char *err, size_t errlen)
{
	struct rt_device *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->sim = sim;
	d->owns_sim = owns;
	derive_costs(d);
	if (!rt_stream_new(d)) {
		snprintf(err, errlen, "out of memory");
		rt_device_free(d);
		return NULL;
	}
	return d;
}

struct rt_device *rt_device_new(const struct soc_config *cfg, const struct sim_options *opt,
				char *err, size_t errlen)
{
	struct sim_device *sim = sim_device_new(cfg, opt, err, errlen);
	if (!sim)
		return NULL;
	struct rt_device *d = init(sim, 1, err, errlen);
	if (!d)
		sim_device_free(sim);
	return d;
}

struct rt_device *rt_device_wrap(struct sim_device *sim, char *err, size_t errlen)
{
	return init(sim, 0, err, errlen);
}

static void drop_queues(struct rt_device *d)
{
	for (size_t i = 0; i < d->nstreams; i++) {
		struct rt_stream *s = d->streams[i];
		struct item *it = s->head, *nx;
		if (s->running) {
			sim_launch_release(&s->running->l);
			free(s->running);
			s->running = NULL;
		}
		for (; it; it = nx) {
			nx = it->next;
			if (it->kind == IT_RECORD && it->gen > it->ev->fired) {
				it->ev->fired = it->gen; /* waits on it must not hang */
				it->ev->dropped = it->gen;
				it->ev->cycle = sim_device_now(d->sim);
			}
			sim_launch_release(&it->l);
			free(it);
		}
		s->head = s->tail = NULL;
		s->blocked = NULL;
	}
}

/* Streams marked freed and now empty go away. */
static void reap_streams(struct rt_device *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->nstreams; i++) {
		struct rt_stream *s = d->streams[i];
		if (s->freed && !s->head && !s->running)
			free(s);
		else
			d->streams[k++] = s;
	}
	d->nstreams = k;
}

void rt_device_free(struct rt_device *d)
{
	if (!d)
		return;
	drop_queues(d);
	for (size_t i = 0; i < d->nstreams; i++)
		free(d->streams[i]);
	free(d->streams);
	free(d->tasks);
	free(d->execs);
	if (d->owns_sim)
		sim_device_free(d->sim);
	free(d);
}

/* A fresh simulator for another SoC under the same device, so that the
 * streams (the ACL layer's handles) survive: only while nothing is queued
 * and no memory is allocated on it (the caller checks allocations; the
 * addresses would mean nothing on the new device). */
int rt_device_reconfigure(struct rt_device *d, const struct soc_config *cfg,
			  const struct sim_options *opt, char *err, size_t errlen)
{
	if (!d->owns_sim) {
		snprintf(err, errlen, "the device's simulator belongs to its caller");
		return -1;
	}
	for (size_t i = 0; i < d->nstreams; i++)
		if (d->streams[i]->head || d->streams[i]->running) {
			snprintf(err, errlen, "stream %u has queued work", d->streams[i]->id);
			return -1;
		}
	struct sim_device *sim = sim_device_new(cfg, opt, err, errlen);
	if (!sim)
		return -1;
	sim_device_free(d->sim);
	d->sim = sim;
	derive_costs(d);
	for (size_t i = 0; i < d->nstreams; i++)
		d->streams[i]->last_end = 0; /* cycles of the old simulator */
	d->ntasks = d->nexecs = 0;
	return 0;
}

struct sim_device *rt_device_sim(struct rt_device *d) { return d->sim; }
const struct soc_config *rt_device_config(const struct rt_device *d)
{
	return sim_device_config(d->sim);
}
void rt_device_set_mode(struct rt_device *d, enum sim_mode mode) { sim_device_set_mode(d->sim, mode); }
uint64_t rt_now(const struct rt_device *d) { return sim_device_now(d->sim); }

struct rt_stream *rt_default_stream(struct rt_device *d) { return d->streams[0]; }

struct rt_stream *rt_stream_new(struct rt_device *d)
{
	if (grow((void **)&d->streams, &d->capstreams, d->nstreams, sizeof *d->streams))
		return NULL;
	struct rt_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->d = d;
	s->id = d->next_stream_id++;
	d->streams[d->nstreams++] = s;
	return s;
}

void rt_stream_free(struct rt_stream *s)
{
	if (s && s != s->d->streams[0]) {
		s->freed = 1;
		reap_streams(s->d);
	}
}

unsigned rt_stream_id(const struct rt_stream *s) { return s->id; }

struct rt_event *rt_event_new(struct rt_device *d)
{
	struct rt_event *e = calloc(1, sizeof *e);
	if (e)
		e->d = d;
	return e;
}

void rt_event_free(struct rt_event *e) { free(e); }

int rt_event_query(const struct rt_event *e, uint64_t *cycle)
{
	if (!e->records || e->fired < e->records)
		return 0;
	if (e->dropped == e->records)
		return -1;
	if (cycle)
		*cycle = e->cycle;
	return 1;
}

static struct item *enqueue(struct rt_stream *s, enum item_kind kind)
{
	struct item *it = calloc(1, sizeof *it);
	if (!it)
		return NULL;
	it->kind = kind;
	it->s = s;
	it->exec_id = -1;
	it->model_task = -1;
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	return it;
}

int rt_event_record(struct rt_event *e, struct rt_stream *s)
{
	struct item *it = enqueue(s, IT_RECORD);
	if (!it)
		return -1;
	it->ev = e;
	it->gen = ++e->records;
	return 0;
}

int rt_stream_wait_event(struct rt_stream *s, struct rt_event *e)
{
	if (!e->records) /* never recorded: nothing to wait for */
		return 0;
	struct item *it = enqueue(s, IT_WAIT);
	if (!it)
		return -1;
	it->ev = e;
	it->gen = e->records;
	return 0;
}

int rt_stream_hold(struct rt_stream *s, uint64_t cycle)
{
	struct item *it = enqueue(s, IT_HOLD);
	if (!it)
		return -1;
	it->until = cycle;
	return 0;
}

int rt_memcpy_async(struct rt_stream *s, enum sim_copy_dir dir, void *host, uint64_t dev,
		    uint64_t src, uint64_t bytes, char *err, size_t errlen)
{
	static const char *const names[] = { "MEMCPY_HOST_TO_DEVICE", "MEMCPY_DEVICE_TO_HOST",
					     "MEMCPY_DEVICE_TO_DEVICE" };
	if (dir > SIM_COPY_D2D) {
		snprintf(err, errlen, "memcpy: unknown direction %d", (int)dir);
		return -1;
	}
	if (bytes && dir != SIM_COPY_D2D && !host) {
		snprintf(err, errlen, "memcpy of %llu bytes: no host buffer",
			 (unsigned long long)bytes);
		return -1;
	}
	if (bytes && (!sim_gm_ptr(s->d->sim, dev, bytes) ||
		      (dir == SIM_COPY_D2D && !sim_gm_ptr(s->d->sim, src, bytes)) ||
		      (dir != SIM_COPY_D2D && !host))) {
		snprintf(err, errlen,
			 "memcpy of %llu bytes: device address 0x%llx is not inside one device "
			 "allocation of that size", (unsigned long long)bytes,
			 (unsigned long long)(dir == SIM_COPY_D2D && sim_gm_ptr(s->d->sim, dev, bytes)
						      ? src : dev));
		return -1;
	}
	struct item *it = enqueue(s, IT_COPY);
	if (!it) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	it->l = (struct sim_launch){ .kind = SIM_LAUNCH_COPY, .user = it, .dir = dir,
				     .host = host, .dev = dev, .src = src, .bytes = bytes };
	snprintf(it->name, sizeof it->name, "%s", names[dir]);
	snprintf(it->op_type, sizeof it->op_type, "MEMCPY_ASYNC");
	return 0;
}

static struct item *kernel_item(struct rt_stream *s, const struct sim_kernel *k,
				unsigned block_dim, const int64_t *args, unsigned nargs,
				const char *name, const char *op_type, char *err, size_t errlen)
{
	if (!k || !k->ninsns || block_dim < 1 || nargs > SIM_MAX_ARGS) {
		snprintf(err, errlen, "launch of '%s': %s", name ? name : "?",
			 !k || !k->ninsns ? "no kernel"
			 : block_dim < 1  ? "block_dim must be at least 1"
					  : "too many kernel arguments");
		return NULL;
	}
	struct item *it = enqueue(s, IT_KERNEL);
	if (!it) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	it->l = (struct sim_launch){ .kind = SIM_LAUNCH_KERNEL, .user = it, .kernel = k,
				     .block_dim = block_dim, .nargs = nargs };
	if (nargs)
		memcpy(it->l.args, args, nargs * sizeof *args);
	snprintf(it->name, sizeof it->name, "%s", name ? name : k->name);
	snprintf(it->op_type, sizeof it->op_type, "%s", op_type ? op_type : "kernel");
	return it;
}

int rt_launch_async(struct rt_stream *s, const struct sim_kernel *k, unsigned block_dim,
		    const int64_t *args, unsigned nargs, const char *name, const char *op_type,
		    char *err, size_t errlen)
{
	return kernel_item(s, k, block_dim, args, nargs, name, op_type, err, errlen) ? 0 : -1;
}

int rt_launch_task_async(struct rt_stream *s, const struct sim_kernel *k, const int64_t *args,
			 unsigned nargs, const struct om_model *om, unsigned model_task,
			 int exec_id, char *err, size_t errlen)
{
	if (model_task >= om->ntasks) {
		snprintf(err, errlen, "model '%s' has no task %u", om->name, model_task);
		return -1;
	}
	const struct om_task *t = &om->tasks[model_task];
	struct item *it = kernel_item(s, k, t->block_dim, args, nargs, t->name, t->op_type, err,
				      errlen);
	if (!it)
		return -1;
	it->exec_id = exec_id;
	it->model_task = (int)model_task;
	it->model = om;
	return 0;
}

int rt_exec_begin(struct rt_stream *s, const struct om_model *om)
{
	struct rt_device *d = s->d;
	if (grow((void **)&d->execs, &d->capexecs, d->nexecs, sizeof *d->execs))
		return -1;
	struct item *b = enqueue(s, IT_EXEC_BEGIN);
	if (!b)
		return -1;
	int id = (int)d->nexecs;
	b->exec_id = id;
	d->execs[d->nexecs++] = (struct trc_exec){ .exec_id = id, .stream_id = s->id,
						   .model = om };
	return id;
}

int rt_exec_end(struct rt_stream *s, int exec_id)
{
	struct item *e = enqueue(s, IT_EXEC_END);
	if (!e)
		return -1;
	e->exec_id = exec_id;
	return 0;
}

static void advance(struct rt_stream *s, uint64_t t);

/* Streams blocked on e move on once it has fired. */
static void wake_waiters(struct rt_device *d, struct rt_event *e, uint64_t t)
{
	for (size_t i = 0; i < d->nstreams; i++) {
		struct rt_stream *w = d->streams[i];
		if (w->blocked == e && w->head && w->head->gen <= e->fired) {
			w->blocked = NULL;
			advance(w, t > w->last_end ? t : w->last_end);
		}
	}
}

/* Stream s is idle at cycle t: go through its items up to the next device
 * task, which is submitted. */
static void advance(struct rt_stream *s, uint64_t t)
{
	struct rt_device *d = s->d;
	char err[256];
	while (!s->running && !s->blocked && s->head) {
		struct item *it = s->head;
		if (it->kind == IT_KERNEL || it->kind == IT_COPY) {
			it->queued = t;
			it->l.ready = t + (it->kind == IT_KERNEL ? d->gap_cycles : 0);
			/* checked when queued; a buffer freed since, or memory */
			if (sim_submit(d->sim, &it->l, err, sizeof err)) {
				if (!d->fail[0])
					snprintf(d->fail, sizeof d->fail, "stream %u, task '%.100s': %.120s",
						 s->id, it->name, err);
				return;
			}
			s->head = it->next;
			if (!s->head)
				s->tail = NULL;
			s->running = it;
			return;
		}
		if (it->kind == IT_HOLD && it->until > t)
			t = it->until;
		if (it->kind == IT_EDGE) {
			/* the host-side Cast at the model's edge: no device time
			 * (docs/runtime.md); both buffers were checked when queued */
			const struct om_tensor_desc *dd = it->desc;
			uint64_t dev_bytes = om_edge_device_bytes(dd);
			const void *src = sim_gm_ptr(d->sim, it->edge_src,
						     it->to_device ? dd->size : dev_bytes);
			void *dst = sim_gm_ptr(d->sim, it->edge_dst,
					       it->to_device ? dev_bytes : dd->size);
			if (src && dst)
				om_edge_convert(dd, it->to_device, src, dst);
			else if (!d->fail[0])
				snprintf(d->fail, sizeof d->fail, "stream %u: the edge conversion of "
					 "'%.100s' lost its buffers", s->id, dd->name);
		}
		if (it->kind == IT_WAIT) {
			if (it->ev->fired < it->gen) {
				s->blocked = it->ev;
				return;
			}
			if (it->ev->cycle > t)
				t = it->ev->cycle;
		}
		s->head = it->next;
		if (!s->head)
			s->tail = NULL;
		if (it->kind == IT_EXEC_BEGIN) {
			/* the execution's fixed cost comes before its first task */
			d->execs[it->exec_id].start = t;
			t += d->exec_cycles;
		}
		else if (it->kind == IT_EXEC_END)
			d->execs[it->exec_id].end = t;
		s->last_end = t;
		if (it->kind == IT_RECORD) {
			struct rt_event *e = it->ev;
			if (it->gen > e->fired) {
				e->fired = it->gen;
				e->cycle = t;
			}
			free(it);
			wake_waiters(d, e, t);
			continue;
		}
		free(it);
	}
}

static void on_done(void *ctx, struct sim_launch *l)
{
	struct rt_device *d = ctx;
	struct item *it = l->user;
	struct rt_stream *s = it->s;
	if (grow((void **)&d->tasks, &d->captasks, d->ntasks, sizeof *d->tasks)) {
		d->oom = 1;
	} else {
		struct trc_task *r = &d->tasks[d->ntasks];
		memset(r, 0, sizeof *r);
		r->kind = it->kind == IT_KERNEL ? TRC_TASK_KERNEL : TRC_TASK_MEMCPY;
		r->task_id = (unsigned)d->ntasks++;
		r->stream_id = s->id;
		r->exec_id = it->exec_id;
		r->model_task = it->model_task;
		r->model = it->model;
		snprintf(r->name, sizeof r->name, "%s", it->name);
		snprintf(r->op_type, sizeof r->op_type, "%s", it->op_type);
		r->queued = it->queued;
		r->start = l->start_cycle;
		r->end = l->end_cycle;
		r->block_dim = l->kind == SIM_LAUNCH_KERNEL ? l->block_dim : 0;
		r->cores = l->ncores;
		r->dir = l->dir;
		r->bytes = l->bytes;
		r->st = l->total;
		const struct soc_config *cfg = sim_device_config(d->sim);
		for (int64_t c = 0; l->core && c < cfg->core_count && c < TRC_MAX_CORES; c++)
			if (l->core[c].blocks) {
				r->core_mask[c / 64] |= UINT64_C(1) << (c % 64);
				r->core_cycles += l->core[c].cycles;
			}
		if (d->on_task)
			d->on_task(d->on_task_ctx, r);
	}
	s->running = NULL;
	s->last_end = l->end_cycle;
	sim_launch_release(l);
	free(it);
	advance(s, s->last_end);
}

int rt_synchronize(struct rt_device *d, char *err, size_t errlen)
{
	uint64_t now = sim_device_now(d->sim);
	for (size_t i = 0; i < d->nstreams; i++) {
		struct rt_stream *s = d->streams[i];
		if (!s->running)
			advance(s, s->last_end > now ? s->last_end : now);
	}
	struct sim_launch *bad = NULL;
	char msg[2048];
	int rc = sim_drain(d->sim, on_done, d, &bad, msg, sizeof msg);
	if (rc) {
		struct item *it = bad ? bad->user : NULL;
		if (it)
			snprintf(err, errlen, "stream %u, task '%s' (%s): %s", it->s->id, it->name,
				 it->op_type, msg);
		else
			snprintf(err, errlen, "%s", msg);
	} else if (d->fail[0] || d->oom) {
		snprintf(err, errlen, "%s", d->fail[0] ? d->fail : "out of memory");
		rc = -1;
	} else {
		for (size_t i = 0; i < d->nstreams; i++)
			if (d->streams[i]->head) {
				snprintf(err, errlen,
					 "stream %u waits for an event that no queued work records",
					 d->streams[i]->id);
				rc = -1;
				break;
			}
	}
	if (rc)
		drop_queues(d);
	d->oom = 0;
	d->fail[0] = 0;
	reap_streams(d);
	return rc;
}

void rt_device_on_task(struct rt_device *d,
		       void (*fn)(void *ctx, const struct trc_task *r), void *ctx)
{
	d->on_task = fn;
	d->on_task_ctx = ctx;
}

const struct trc_task *rt_tasks(const struct rt_device *d, size_t *n)
{
	*n = d->ntasks;
	return d->tasks;
}

const struct trc_exec *rt_execs(const struct rt_device *d, size_t *n)
{
	*n = d->nexecs;
	return d->execs;
}

void rt_log_clear(struct rt_device *d)
{
	d->ntasks = 0;
	d->nexecs = 0;
}


/* The device-typed buffers of m's edge-converted inputs and outputs. */
static int alloc_edges(struct rt_model *m, char *err, size_t errlen)
{
	const struct om_model *om = m->om;
	m->edge_in = calloc(om->ninputs + 1, sizeof *m->edge_in);
	m->edge_out = calloc(om->noutputs + 1, sizeof *m->edge_out);
	if (!m->edge_in || !m->edge_out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < om->ninputs + om->noutputs; k++) {
		const struct om_tensor_desc *dd =
			k < om->ninputs ? &om->inputs[k] : &om->outputs[k - om->ninputs];
		uint64_t *slot = k < om->ninputs ? &m->edge_in[k] : &m->edge_out[k - om->ninputs];
		if (!dd->device_dtype)
			continue;
		*slot = sim_gm_alloc(m->dev->sim, om_edge_device_bytes(dd) + RT_BUFFER_SLACK);
		if (!*slot) {
			snprintf(err, errlen, "model '%s': the device copy of '%s' does not fit the "
				 "device memory", om->name, dd->name);
			return -1;
		}
	}
	return 0;
}

static void free_edges(struct rt_model *m)
{
	for (unsigned i = 0; m->edge_in && i < m->om->ninputs; i++)
		if (m->edge_in[i])
			sim_gm_free(m->dev->sim, m->edge_in[i]);
	for (unsigned i = 0; m->edge_out && i < m->om->noutputs; i++)
		if (m->edge_out[i])
			sim_gm_free(m->dev->sim, m->edge_out[i]);
	free(m->edge_in);
	free(m->edge_out);
	m->edge_in = m->edge_out = NULL;
}

int rt_model_load(struct rt_device *d, const struct om_model *om, struct rt_model *m, char *err,
		  size_t errlen)
{
	memset(m, 0, sizeof *m);
	m->om = om;
	m->dev = d;
	m->owns_weights = 1;
	/* A model read from a file gets its weights block mapped from it
	 * copy-on-write and the load copies that block onto itself: the load
	 * task keeps its PCIe cycles, but no byte moves until a kernel reads
	 * it, and a kernel writing its weights cannot reach the file or the
	 * next load.  A model built in memory, or a file that cannot be mapped,
	 * is copied in. */
	const uint8_t *src = om->weights;
	int fd;
	uint64_t off;
	if (om->weights_bytes && !om_weights_file(om, &fd, &off)) {
		m->weights = sim_gm_alloc_file(d->sim, om->weights_bytes + RT_BUFFER_SLACK, fd, off,
					       om->weights_bytes);
		if (m->weights)
			src = sim_gm_ptr(d->sim, m->weights, om->weights_bytes);
	}
	if (!m->weights)
		m->weights = sim_gm_alloc(d->sim, om->weights_bytes + RT_BUFFER_SLACK);
	m->workspace = sim_gm_alloc(d->sim, om->workspace_bytes + RT_BUFFER_SLACK);
	m->kernels = calloc(om->nkernels + 1, sizeof *m->kernels);
	if (!m->weights || !m->workspace || !m->kernels) {
		snprintf(err, errlen, "model '%s' (%llu bytes of weights, %llu of workspace) does "
			 "not fit the device memory", om->name,
			 (unsigned long long)om->weights_bytes,
			 (unsigned long long)om->workspace_bytes);
		rt_model_unload(m);
		return -1;
	}
	/* Weights are verified when something reads them: the full simulation
	 * does, timing never does (om_verify_weights).  A device set to full
	 * mode after loading in timing mode runs on unverified weights.  Read
	 * where the kernels will: the device block mapped from the file. */
	if (sim_device_mode(d->sim) == SIM_MODE_FULL && om_verify_weights(om, src, err, errlen)) {
		rt_model_unload(m);
		return -1;
	}
	if (alloc_edges(m, err, errlen)) {
		rt_model_unload(m);
		return -1;
	}
	for (unsigned i = 0; i < om->nkernels; i++) {
		if (sim_kernel_load(&m->kernels[i], om->kernels[i].name, om->kernels[i].code,
				    om->kernels[i].bytes, err, errlen)) {
			rt_model_unload(m);
			return -1;
		}
	}
	/* decoded: the encoded copy need not stay resident */
	om_drop_code(om);
	size_t before;
	rt_tasks(d, &before);
	if (rt_memcpy_async(rt_default_stream(d), SIM_COPY_H2D, (void *)src, m->weights, 0,
			    om->weights_bytes, err, errlen)) {
		rt_model_unload(m);
		return -1;
	}
	struct rt_stream *s0 = rt_default_stream(d);
	snprintf(s0->tail->name, sizeof s0->tail->name, "%.100s weights", om->name);
	snprintf(s0->tail->op_type, sizeof s0->tail->op_type, "%s", TRC_MODEL_LOAD_TYPE);
	if (rt_synchronize(d, err, errlen)) {
		rt_model_unload(m);
		return -1;
	}
	if (d->ntasks > before) {
		m->load_start = d->tasks[d->ntasks - 1].start;
		m->load_end = d->tasks[d->ntasks - 1].end;
	}
	return 0;
}

int rt_model_clone(const struct rt_model *src, struct rt_model *m, char *err, size_t errlen)
{
	*m = *src;
	m->owns_weights = 0;
	m->edge_in = m->edge_out = NULL;
	m->workspace = sim_gm_alloc(src->dev->sim, src->om->workspace_bytes + RT_BUFFER_SLACK);
	if (!m->workspace) {
		snprintf(err, errlen, "another instance of model '%s' (%llu bytes of workspace) "
			 "does not fit the device memory", src->om->name,
			 (unsigned long long)src->om->workspace_bytes);
		return -1;
	}
	if (alloc_edges(m, err, errlen)) {
		rt_model_unload(m);
		return -1;
	}
	return 0;
}

int rt_model_load_variant(const struct rt_model *base, const struct om_model *vom,
			  struct rt_model *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	if (vom->workspace_bytes > base->om->workspace_bytes) {
		char what[200] = "dims-";
		if (vom->ndims)
			om_dims_name(vom, what + 5, sizeof what - 5);
		else
			snprintf(what, sizeof what, "batch-%lld", (long long)vom->batch);
		snprintf(err, errlen, "model '%s': the %s program needs %llu bytes of workspace, "
			 "more than the model's %llu", vom->name, what,
			 (unsigned long long)vom->workspace_bytes,
			 (unsigned long long)base->om->workspace_bytes);
		return -1;
	}
	m->om = vom;
	m->dev = base->dev;
	m->variant = 1;
	m->weights = base->weights;
	m->workspace = base->workspace;
	m->load_start = base->load_start;
	m->load_end = base->load_end;
	m->kernels = calloc(vom->nkernels + 1, sizeof *m->kernels);
	if (!m->kernels) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (alloc_edges(m, err, errlen)) {
		rt_model_unload(m);
		return -1;
	}
	for (unsigned i = 0; i < vom->nkernels; i++) {
		if (sim_kernel_load(&m->kernels[i], vom->kernels[i].name, vom->kernels[i].code,
				    vom->kernels[i].bytes, err, errlen)) {
			rt_model_unload(m);
			return -1;
		}
	}
	om_drop_code(vom);
	return 0;
}

void rt_model_unload(struct rt_model *m)
{
	if (!m->dev)
		return;
	if (m->variant) {
		free_edges(m);
		for (unsigned i = 0; m->kernels && i < m->om->nkernels; i++)
			sim_kernel_free(&m->kernels[i]);
		free(m->kernels);
		memset(m, 0, sizeof *m);
		return;
	}
	if (m->workspace)
		sim_gm_free(m->dev->sim, m->workspace);
	free_edges(m);
	if (m->owns_weights) {
		if (m->weights)
			sim_gm_free(m->dev->sim, m->weights);
		for (unsigned i = 0; m->kernels && i < m->om->nkernels; i++)
			sim_kernel_free(&m->kernels[i]);
		free(m->kernels);
	}
	memset(m, 0, sizeof *m);
}

/* Drop the items queued after mark (NULL: all), undoing a partial enqueue. */
static void unqueue_after(struct rt_stream *s, struct item *mark)
{
	struct item *it = mark ? mark->next : s->head, *nx;
	for (; it; it = nx) {
		nx = it->next;
		free(it);
	}
	if (mark)
		mark->next = NULL;
	else
		s->head = NULL;
	s->tail = mark;
}

/* Queue the conversion of an edge tensor (see IT_EDGE in advance). */
static int edge_item(struct rt_stream *s, const struct om_tensor_desc *dd, uint64_t src,
		     uint64_t dst, int to_device, int exec_id)
{
	struct item *it = enqueue(s, IT_EDGE);
	if (!it)
		return 1;
	it->desc = dd;
	it->edge_src = src;
	it->edge_dst = dst;
	it->to_device = to_device;
	it->exec_id = exec_id;
	return 0;
}

int rt_model_execute_async(struct rt_model *m, struct rt_stream *s, const uint64_t *inputs,
			   const uint64_t *outputs, char *err, size_t errlen)
{
	struct rt_device *d = s->d;
	const struct om_model *om = m->om;
	for (unsigned i = 0; i < om->ninputs; i++)
		if (!sim_gm_ptr(d->sim, inputs[i], om->inputs[i].size)) {
			snprintf(err, errlen, "input %u ('%s'): device address 0x%llx does not hold "
				 "%llu bytes", i, om->inputs[i].name, (unsigned long long)inputs[i],
				 (unsigned long long)om->inputs[i].size);
			return -1;
		}
	for (unsigned i = 0; i < om->noutputs; i++)
		if (!sim_gm_ptr(d->sim, outputs[i], om->outputs[i].size)) {
			snprintf(err, errlen, "output %u ('%s'): device address 0x%llx does not hold "
				 "%llu bytes", i, om->outputs[i].name, (unsigned long long)outputs[i],
				 (unsigned long long)om->outputs[i].size);
			return -1;
		}
	if (grow((void **)&d->execs, &d->capexecs, d->nexecs, sizeof *d->execs)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int id = (int)d->nexecs;
	struct item *mark = s->tail;
	struct item *b = enqueue(s, IT_EXEC_BEGIN);
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->exec_id = id;
	d->execs[d->nexecs++] = (struct trc_exec){ .exec_id = id, .stream_id = s->id,
						   .model = om };
	/* the tasks see the device-typed copies of the edge-converted tensors */
	uint64_t *tin = calloc(om->ninputs + 1, sizeof *tin);
	uint64_t *tout = calloc(om->noutputs + 1, sizeof *tout);
	if (!tin || !tout) {
		free(tin);
		free(tout);
		unqueue_after(s, mark);
		d->nexecs--;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int bad = 0;
	for (unsigned i = 0; i < om->ninputs; i++) {
		tin[i] = om->inputs[i].device_dtype ? m->edge_in[i] : inputs[i];
		if (om->inputs[i].device_dtype)
			bad |= edge_item(s, &om->inputs[i], inputs[i], tin[i], 1, id);
	}
	for (unsigned i = 0; i < om->noutputs; i++)
		tout[i] = om->outputs[i].device_dtype ? m->edge_out[i] : outputs[i];
	const struct om_places places = { m->weights, m->workspace, tin, tout };
	for (unsigned i = 0; i < om->ntasks && !bad; i++) {
		const struct om_task *t = &om->tasks[i];
		int64_t args[SIM_MAX_ARGS];
		if (t->nargs > SIM_MAX_ARGS) {
			free(tin);
			free(tout);
			unqueue_after(s, mark);
			d->nexecs--;
			snprintf(err, errlen, "task %u ('%s'): too many arguments", i, t->name);
			return -1;
		}
		om_task_args(t, &places, args);
		struct item *it = kernel_item(s, &m->kernels[t->kernel], t->block_dim, args,
					      t->nargs, t->name, t->op_type, err, errlen);
		if (!it) {
			free(tin);
			free(tout);
			unqueue_after(s, mark);
			d->nexecs--;
			return -1;
		}
		it->exec_id = id;
		it->model_task = (int)i;
		it->model = om;
	}
	for (unsigned i = 0; i < om->noutputs; i++)
		if (om->outputs[i].device_dtype)
			bad |= edge_item(s, &om->outputs[i], tout[i], outputs[i], 0, id);
	free(tin);
	free(tout);
	struct item *e = bad ? NULL : enqueue(s, IT_EXEC_END);
	if (!e) {
		unqueue_after(s, mark);
		d->nexecs--;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	e->exec_id = id;
	return id;
}
