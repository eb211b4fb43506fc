/* acl.c: the AscendCL-shaped API of acl.h over the device runtime
 * (runtime.h).
 *
 * Handles are checked against the sets of live ones before use, by pointer
 * value only, so a NULL, stale or made-up handle is an error and never
 * dereferenced.  Device pointers are the simulator's addresses; the table
 * of aclrtMalloc allocations tells a device pointer from a host one and
 * bounds every copy. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "acl.h"
#include "runtime.h"
#include "summary.h"
#include "trace.h"

/* Device buffers get this much beyond what was asked for: kernels move
 * whole 32-byte blocks and 256-byte vector repeats past a tensor's last
 * element (runtime.c gives its own buffers the same). */
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
	struct om_tensor_desc *in, *out;
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

/* ACL's API is process-wide: aclInit, aclrtSetDevice, model ids and the
 * handle functions take no context argument, so what they act on must be
 * reachable from every entry point.  All of it lives in this one struct,
 * the single exception to the project's no-global-state rule; nothing
 * else in the library has mutable static state. */
static struct acl_state {
	int state; /* 0 never initialized, 1 initialized, 2 finalized */
	char soc[512];       /* the SoC to simulate: a chip name or an .ini path */
	char soc_from[600];  /* where that choice came from, for messages */
	int soc_in_config;   /* it came from the config file */
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
	struct acl_prof {    /* aclprof*: see the profiling section */
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
} g;

/* --- errors ------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static aclError fail(aclError code, const char *fn,
							    const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(g.msg, sizeof g.msg, "%s: ", fn);
	va_start(ap, fmt);
	vsnprintf(g.msg + n, sizeof g.msg - (size_t)n, fmt, ap);
	va_end(ap);
	g.has_msg = 1;
	return code;
}
#define FAIL(code, ...) fail(code, __func__, __VA_ARGS__)

static aclError need_init(const char *fn)
{
	if (g.state != 1)
		return fail(ACL_ERROR_UNINITIALIZE, fn, "aclInit has not been called%s",
			    g.state == 2 ? " since aclFinalize" : "");
	return ACL_SUCCESS;
}

static aclError need_device(const char *fn)
{
	aclError e = need_init(fn);
	if (e == ACL_SUCCESS && !g.dev)
		e = fail(ACL_ERROR_RT_CONTEXT_NULL, fn, "no device is set: call aclrtSetDevice(0) first");
	return e;
}

#define NEED_INIT()                                        \
	do {                                               \
		aclError e_ = need_init(__func__);         \
		if (e_ != ACL_SUCCESS)                     \
			return e_;                         \
	} while (0)
#define NEED_DEVICE()                                      \
	do {                                               \
		aclError e_ = need_device(__func__);       \
		if (e_ != ACL_SUCCESS)                     \
			return e_;                         \
	} while (0)

/* Copy a string, truncating (snprintf's "%s" into a shorter array is what
 * -Wformat-truncation rejects). */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* --- sets of live handles ------------------------------------------------ */

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

static int h_add(struct handles *h, void *p)
{
	if (grow((void **)&h->v, &h->cap, h->n, sizeof *h->v))
		return -1;
	h->v[h->n++] = p;
	return 0;
}

static int h_has(const struct handles *h, const void *p)
{
	for (size_t i = 0; p && i < h->n; i++)
		if (h->v[i] == p)
			return 1;
	return 0;
}

static void h_del(struct handles *h, const void *p)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i] == p) {
			h->v[i] = h->v[--h->n];
			return;
		}
}

static void h_clear(struct handles *h)
{
	free(h->v);
	memset(h, 0, sizeof *h);
}

/* --- device memory ------------------------------------------------------- */

static uint64_t dev_addr(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The allocation holding [p, p + n), or NULL. */
static const struct dev_alloc *dev_range(const void *p, uint64_t n)
{
	uint64_t a = dev_addr(p);
	for (size_t i = 0; i < g.nallocs; i++) {
		const struct dev_alloc *al = &g.allocs[i];
		if (a >= al->addr && a - al->addr < al->size)
			return n <= al->size - (a - al->addr) ? al : NULL;
	}
	return NULL;
}

static int is_dev(const void *p) { return dev_range(p, 0) != NULL; }

/* --- synchronization ----------------------------------------------------- */

/* Every queue is empty: events destroyed meanwhile can go. */
static void drained(void)
{
	for (size_t i = 0; i < g.nzombies; i++)
		rt_event_free(g.zombies[i]);
	g.nzombies = 0;
	g.pending = 0;
}

/* Run everything queued (rt_synchronize empties the queues, also when the
 * simulation fails). */
static aclError run_queued(const char *fn)
{
	char err[2048];
	int rc = rt_synchronize(g.dev, err, sizeof err);
	drained();
	if (!rc)
		return ACL_SUCCESS;
	/* The failure dropped the queued work, records included: an event
	 * whose latest record did not fire never will, and a wait for it
	 * would never end. */
	for (size_t i = 0; i < g.events.n; i++) {
		struct acl_event *ev = g.events.v[i];
		if (ev->recorded && rt_event_query(ev->e, NULL) != 1)
			ev->dead = 1;
	}
	for (size_t i = 0; i < g.nmodels; i++)
		if (g.models[i] && rt_event_query(g.models[i]->done, NULL) != 1)
			g.models[i]->done_dead = 1;
	return fail(ACL_ERROR_RT_FAILURE, fn, "the simulation failed: %s", err);
}

/* --- process and device -------------------------------------------------- */

struct config_parse {
	FILE *f;
	int line, next_line;
	char msg[512];
};

/* inih reads through this so the handler knows the line it is on. */
static char *config_reader(char *str, int num, void *stream)
{
	struct config_parse *p = stream;
	char *r = fgets(str, num, p->f);
	if (r) {
		p->line = p->next_line;
		if (strchr(r, '\n'))
			p->next_line++;
	}
	return r;
}

static int config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct config_parse *p = user;
	if (strcmp(section, "device") != 0) {
		snprintf(p->msg, sizeof p->msg, "key '%s' is in unknown section [%s] (the only one "
			 "is [device])", name, section);
		return 0;
	}
	if (strcmp(name, "soc") == 0) {
		if (!*value || strlen(value) >= sizeof g.soc) {
			snprintf(p->msg, sizeof p->msg, "soc = wants a chip name or an .ini path");
			return 0;
		}
		copy_str(g.soc, sizeof g.soc, value);
		snprintf(g.soc_from, sizeof g.soc_from, "line %d of %s", p->line, g.config);
		g.soc_in_config = 1;
		return 1;
	}
	if (strcmp(name, "set") == 0) {
		if (g.nsets == MAX_SETS) {
			snprintf(p->msg, sizeof p->msg, "more than %d set = lines", MAX_SETS);
			return 0;
		}
		char *s = strdup(value);
		if (!s) {
			snprintf(p->msg, sizeof p->msg, "out of memory");
			return 0;
		}
		g.sets[g.nsets++] = (struct soc_set_line){ s, p->line };
		return 1;
	}
	snprintf(p->msg, sizeof p->msg, "unknown key '%s' in [device] (soc, set)", name);
	return 0;
}

static aclError read_config(const char *fn, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(ACL_ERROR_INVALID_FILE, fn, "%s: %s", path, strerror(errno));
	copy_str(g.config, sizeof g.config, path);
	int c;
	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		;
	if (c == '{') { /* ACL's JSON (dump and profiling settings): nothing for us */
		fclose(f);
		return ACL_SUCCESS;
	}
	rewind(f);
	struct config_parse p = { .f = f, .next_line = 1 };
	int rc = ini_parse_stream(config_reader, &p, config_handler, &p);
	fclose(f);
	if (rc < 0)
		return fail(ACL_ERROR_INVALID_FILE, fn, "%s: could not be read", path);
	if (rc > 0)
		return fail(ACL_ERROR_PARSE_FILE, fn, "%s:%d: %s", path, rc,
			    p.msg[0] ? p.msg : "expected '[device]' or 'key = value'");
	return ACL_SUCCESS;
}

/* Load the SoC named by soc with the config's overrides into *cfg. */
static aclError load_soc(const char *fn, const char *soc, const char *from, aclError code,
			 struct soc_config *cfg)
{
	char err[1024];
	if (soc_load(soc, cfg, err, sizeof err))
		return fail(code, fn, "SoC '%s' (from %s): %s", soc, from, err);
	for (unsigned i = 0; i < g.nsets; i++)
		if (soc_set(cfg, g.sets[i].assign, err, sizeof err))
			return fail(ACL_ERROR_FILE_ATTR_INVALID, fn, "%s:%d: set = %s: %s", g.config,
				    g.sets[i].line, g.sets[i].assign, err);
	return ACL_SUCCESS;
}

static void free_sets(void)
{
	for (unsigned i = 0; i < g.nsets; i++)
		free(g.sets[i].assign);
	g.nsets = 0;
}

aclError aclInit(const char *configPath)
{
	if (g.state == 1)
		return FAIL(ACL_ERROR_REPEAT_INITIALIZE, "already initialized");
	free_sets();
	g.config[0] = '\0';
	const char *env = getenv("DAVINCI_SOC");
	copy_str(g.soc, sizeof g.soc, env && *env ? env : "Ascend310");
	snprintf(g.soc_from, sizeof g.soc_from, "%s",
		 env && *env ? "$DAVINCI_SOC" : "the default");
	g.soc_in_config = 0;
	aclError e = ACL_SUCCESS;
	if (configPath && *configPath)
		e = read_config(__func__, configPath);
	if (e == ACL_SUCCESS)
		e = load_soc(__func__, g.soc, g.soc_from,
			     g.soc_in_config ? ACL_ERROR_FILE_ATTR_INVALID : ACL_ERROR_INVALID_PARAM,
			     &g.cfg);
	if (e != ACL_SUCCESS) {
		free_sets();
		return e;
	}
	g.state = 1;
	return ACL_SUCCESS;
}

static void prof_end(void);

static void destroy_device(void)
{
	if (!g.dev)
		return;
	prof_end(); /* the task log goes with the device */
	/* Models first: unloading frees their device memory.  Queued work may
	 * still name their kernels and events, but rt_device_free drops the
	 * queues without looking at either (and frees every stream). */
	for (size_t i = 0; i < g.nmodels; i++) {
		struct acl_model *m = g.models[i];
		if (!m)
			continue;
		rt_model_unload(&m->rm);
		om_free(&m->om);
		rt_event_free(m->done);
		free(m);
	}
	rt_device_free(g.dev);
	g.dev = NULL;
	g.dev_refs = 0;
	for (size_t i = 0; i < g.events.n; i++) {
		struct acl_event *ev = g.events.v[i];
		if (ev) {
			rt_event_free(ev->e);
			free(ev);
		}
	}
	drained();
	free(g.models);
	g.models = NULL;
	g.nmodels = g.capmodels = 0;
	free(g.allocs);
	g.allocs = NULL;
	g.nallocs = g.capallocs = 0;
	h_clear(&g.streams);
	h_clear(&g.events);
	g.current_ctx = NULL;
}

aclError aclFinalize(void)
{
	if (g.state == 0)
		return FAIL(ACL_ERROR_UNINITIALIZE, "aclInit has not been called");
	if (g.state == 2)
		return FAIL(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize was already called");
	destroy_device();
	for (size_t i = 0; i < g.contexts.n; i++)
		free(g.contexts.v[i]);
	h_clear(&g.contexts);
	for (size_t i = 0; i < g.hosts.n; i++)
		free(g.hosts.v[i]);
	h_clear(&g.hosts);
	free(g.zombies);
	g.zombies = NULL;
	g.capzombies = 0;
	for (size_t i = 0; i < g.profcfgs.n; i++)
		free(g.profcfgs.v[i]);
	h_clear(&g.profcfgs);
	g.prof.inited = 0;
	free_sets();
	g.state = 2;
	return ACL_SUCCESS;
}

static aclError check_device_id(const char *fn, int32_t id)
{
	if (id != 0)
		return fail(ACL_ERROR_RT_INVALID_DEVICEID, fn,
			    "device %d does not exist (the simulator has one device, 0)", (int)id);
	return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	NEED_INIT();
	aclError e = check_device_id(__func__, deviceId);
	if (e != ACL_SUCCESS)
		return e;
	if (g.dev) {
		g.dev_refs++;
		return ACL_SUCCESS;
	}
	char err[1024];
	struct sim_options opt = { .mode = SIM_MODE_FULL };
	g.dev = rt_device_new(&g.cfg, &opt, err, sizeof err);
	if (!g.dev)
		return FAIL(ACL_ERROR_RT_FAILURE, "%s: %s", g.cfg.name, err);
	g.dev_refs = 1;
	g.pending = 0;
	return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
	NEED_INIT();
	aclError e = check_device_id(__func__, deviceId);
	if (e != ACL_SUCCESS)
		return e;
	if (!g.dev)
		return FAIL(ACL_ERROR_RT_CONTEXT_NULL, "device 0 is not set");
	if (--g.dev_refs == 0)
		destroy_device();
	return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	NEED_DEVICE();
	if (!deviceId)
		return FAIL(ACL_ERROR_INVALID_PARAM, "deviceId is NULL");
	*deviceId = 0;
	return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	NEED_INIT();
	if (!count)
		return FAIL(ACL_ERROR_INVALID_PARAM, "count is NULL");
	*count = 1;
	return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
	NEED_INIT();
	if (!runMode)
		return FAIL(ACL_ERROR_INVALID_PARAM, "runMode is NULL");
	*runMode = ACL_HOST;
	return ACL_SUCCESS;
}

const char *aclrtGetSocName(void)
{
	if (need_init(__func__) != ACL_SUCCESS)
		return NULL;
	return g.cfg.name;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
	NEED_INIT();
	if (!context)
		return FAIL(ACL_ERROR_INVALID_PARAM, "context is NULL");
	struct acl_context *c = calloc(1, sizeof *c);
	if (!c || h_add(&g.contexts, c)) {
		free(c);
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	aclError e = aclrtSetDevice(deviceId);
	if (e != ACL_SUCCESS) {
		h_del(&g.contexts, c);
		free(c);
		return e;
	}
	c->device = deviceId;
	g.current_ctx = c;
	*context = c;
	return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context)
{
	NEED_INIT();
	if (!h_has(&g.contexts, context))
		return FAIL(ACL_ERROR_INVALID_RESOURCE_HANDLE, "%p is not a context from "
			    "aclrtCreateContext", context);
	h_del(&g.contexts, context);
	if (g.current_ctx == context)
		g.current_ctx = NULL;
	free(context);
	return aclrtResetDevice(0);
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
	NEED_DEVICE();
	if (context != &g.default_ctx && !h_has(&g.contexts, context))
		return FAIL(ACL_ERROR_INVALID_RESOURCE_HANDLE, "%p is not a live context", context);
	g.current_ctx = context;
	return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
	NEED_DEVICE();
	if (!context)
		return FAIL(ACL_ERROR_INVALID_PARAM, "context is NULL");
	*context = g.current_ctx ? g.current_ctx : &g.default_ctx;
	return ACL_SUCCESS;
}

/* --- streams and events -------------------------------------------------- */

/* NULL is the default stream. */
static aclError get_stream(const char *fn, aclrtStream st, struct rt_stream **out)
{
	if (!st) {
		*out = rt_default_stream(g.dev);
		return ACL_SUCCESS;
	}
	if (!h_has(&g.streams, st))
		return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
			    "stream %p is not a live stream from aclrtCreateStream", st);
	*out = st;
	return ACL_SUCCESS;
}

static aclError get_event(const char *fn, aclrtEvent ev, struct acl_event **out)
{
	if (!ev)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
	if (!h_has(&g.events, ev))
		return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
			    "event %p is not a live event from aclrtCreateEvent", ev);
	*out = ev;
	return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	NEED_DEVICE();
	if (!stream)
		return FAIL(ACL_ERROR_INVALID_PARAM, "stream is NULL");
	struct rt_stream *s = rt_stream_new(g.dev);
	if (!s)
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	if (h_add(&g.streams, s)) {
		rt_stream_free(s);
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	*stream = s;
	return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	NEED_DEVICE();
	if (!stream)
		return FAIL(ACL_ERROR_INVALID_PARAM, "the default stream (NULL) cannot be destroyed");
	struct rt_stream *s;
	aclError e = get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	h_del(&g.streams, s);
	rt_stream_free(s); /* its queued work still runs */
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s;
	aclError e = get_stream(__func__, stream, &s);
	return e != ACL_SUCCESS ? e : run_queued(__func__);
}

aclError aclrtSynchronizeDevice(void)
{
	NEED_DEVICE();
	return run_queued(__func__);
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	NEED_DEVICE();
	if (!event)
		return FAIL(ACL_ERROR_INVALID_PARAM, "event is NULL");
	struct acl_event *ev = calloc(1, sizeof *ev);
	if (ev)
		ev->e = rt_event_new(g.dev);
	if (!ev || !ev->e || h_add(&g.events, ev)) {
		if (ev)
			rt_event_free(ev->e);
		free(ev);
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	*event = ev;
	return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	NEED_DEVICE();
	struct acl_event *ev;
	aclError e = get_event(__func__, event, &ev);
	if (e != ACL_SUCCESS)
		return e;
	h_del(&g.events, ev);
	/* queued records and waits point at it until they have run */
	if (!g.pending) {
		rt_event_free(ev->e);
	} else if (grow((void **)&g.zombies, &g.capzombies, g.nzombies, sizeof *g.zombies)) {
		e = run_queued(__func__); /* no room to defer: run the queues now */
		rt_event_free(ev->e);
	} else {
		g.zombies[g.nzombies++] = ev->e;
	}
	free(ev);
	return e;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	NEED_DEVICE();
	struct acl_event *ev;
	struct rt_stream *s;
	aclError e = get_event(__func__, event, &ev);
	if (e == ACL_SUCCESS)
		e = get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	if (rt_event_record(ev->e, s))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	ev->recorded = 1;
	ev->dead = 0;
	g.pending = 1;
	return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
	NEED_DEVICE();
	struct acl_event *ev;
	struct rt_stream *s;
	aclError e = get_stream(__func__, stream, &s);
	if (e == ACL_SUCCESS)
		e = get_event(__func__, event, &ev);
	if (e != ACL_SUCCESS)
		return e;
	if (ev->dead)
		return FAIL(ACL_ERROR_RT_FAILURE, "event %p will never fire: the work that was to "
			    "record it failed (record it again)", event);
	if (rt_stream_wait_event(s, ev->e))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	g.pending = 1;
	return ACL_SUCCESS;
}

/* Run the simulation if ev's latest record has not fired yet. */
static aclError settle(const char *fn, struct acl_event *ev)
{
	if (ev->dead)
		return fail(ACL_ERROR_RT_FAILURE, fn, "event %p will never fire: the work that was "
			    "to record it failed (record it again)", (void *)ev);
	if (!ev->recorded || rt_event_query(ev->e, NULL))
		return ACL_SUCCESS;
	return run_queued(fn);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	NEED_DEVICE();
	struct acl_event *ev;
	aclError e = get_event(__func__, event, &ev);
	return e != ACL_SUCCESS ? e : settle(__func__, ev);
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
	NEED_DEVICE();
	struct acl_event *ev;
	aclError e = get_event(__func__, event, &ev);
	if (e != ACL_SUCCESS)
		return e;
	if (!status)
		return FAIL(ACL_ERROR_INVALID_PARAM, "status is NULL");
	e = settle(__func__, ev);
	*status = e == ACL_SUCCESS ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
	return e;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
	NEED_DEVICE();
	struct acl_event *a, *b;
	aclError e = get_event(__func__, startEvent, &a);
	if (e == ACL_SUCCESS)
		e = get_event(__func__, endEvent, &b);
	if (e != ACL_SUCCESS)
		return e;
	if (!ms)
		return FAIL(ACL_ERROR_INVALID_PARAM, "ms is NULL");
	uint64_t t0, t1;
	if (rt_event_query(a->e, &t0) != 1 || rt_event_query(b->e, &t1) != 1) {
		const struct acl_event *x = rt_event_query(a->e, NULL) == 1 ? b : a;
		return FAIL(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "event %p %s", (const void *)x,
			    x->dead	   ? "will never fire: the work that was to record it failed"
			    : x->recorded ? "has not fired yet: synchronize first"
					  : "has never been recorded");
	}
	*ms = (float)(((double)t1 - (double)t0) / g.cfg.core_freq_mhz / 1000.0);
	return ACL_SUCCESS;
}

/* --- memory -------------------------------------------------------------- */

/* One memory pool, [hbm] size_mb of the SoC (HBM or DDR alike): every
 * non-P2P attribute reports it; P2P memory (for copies between devices)
 * does not exist with one device, so it is 0 of 0, as ACL reports memory
 * the hardware lacks. */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeBytes, size_t *total)
{
	NEED_DEVICE();
	if (!freeBytes || !total)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s is NULL", !freeBytes ? "free" : "total");
	if ((unsigned)attr > ACL_HBM_MEM_P2P_NORMAL)
		return FAIL(ACL_ERROR_INVALID_PARAM, "unknown aclrtMemAttr %d", (int)attr);
	uint64_t size = (uint64_t)g.cfg.hbm_size_mb << 20;
	uint64_t used = sim_gm_used(rt_device_sim(g.dev));
	int p2p = attr >= ACL_DDR_MEM_P2P_HUGE;
	*total = p2p ? 0 : (size_t)size;
	*freeBytes = p2p || used >= size ? 0 : (size_t)(size - used);
	return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	(void)policy; /* simulated memory has no page sizes */
	NEED_DEVICE();
	if (!devPtr || size == 0)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s", !devPtr ? "devPtr is NULL" : "size is 0");
	if (grow((void **)&g.allocs, &g.capallocs, g.nallocs, sizeof *g.allocs))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	struct sim_device *sim = rt_device_sim(g.dev);
	uint64_t a = (uint64_t)size <= UINT64_MAX - RT_BUFFER_SLACK
			     ? sim_gm_alloc(sim, size + RT_BUFFER_SLACK)
			     : 0;
	if (!a)
		return FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION,
			    "%zu bytes: the device memory (%lld MiB, %llu bytes in use) is exhausted",
			    size, (long long)g.cfg.hbm_size_mb,
			    (unsigned long long)sim_gm_used(sim));
	if (a > UINTPTR_MAX) { /* a 32-bit host cannot hold the address in a pointer */
		sim_gm_free(sim, a);
		return FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "device address 0x%llx does not fit "
			    "a host pointer", (unsigned long long)a);
	}
	g.allocs[g.nallocs++] = (struct dev_alloc){ a, size };
	*devPtr = (void *)(uintptr_t)a;
	return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
	NEED_DEVICE();
	if (!devPtr)
		return FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
	size_t i;
	for (i = 0; i < g.nallocs && g.allocs[i].addr != dev_addr(devPtr); i++)
		;
	if (i == g.nallocs)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%p is not an address aclrtMalloc returned "
			    "(or it was freed)", devPtr);
	/* queued work may still use it (aclrtFree waits for the device, as
	 * cudaFree does) */
	aclError e = g.pending ? run_queued(__func__) : ACL_SUCCESS;
	sim_gm_free(rt_device_sim(g.dev), g.allocs[i].addr);
	g.allocs[i] = g.allocs[--g.nallocs];
	return e;
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
	NEED_INIT();
	if (!attributes)
		return FAIL(ACL_ERROR_INVALID_PARAM, "attributes is NULL");
	memset(attributes, 0, sizeof *attributes);
	attributes->pageSize = 4096;
	attributes->location.type = ptr && is_dev(ptr)	     ? ACL_MEM_LOCATION_TYPE_DEVICE
				    : ptr && h_has(&g.hosts, ptr) ? ACL_MEM_LOCATION_TYPE_HOST
								  : ACL_MEM_LOCATION_TYPE_UNREGISTERED;
	return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	NEED_INIT();
	if (!hostPtr || size == 0)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s", !hostPtr ? "hostPtr is NULL" : "size is 0");
	void *p = malloc(size);
	if (!p || h_add(&g.hosts, p)) {
		free(p);
		return FAIL(ACL_ERROR_BAD_ALLOC, "%zu bytes of host memory: out of memory", size);
	}
	*hostPtr = p;
	return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
	NEED_INIT();
	if (!hostPtr || !h_has(&g.hosts, hostPtr))
		return FAIL(ACL_ERROR_INVALID_PARAM, "%p is not memory from aclrtMallocHost", hostPtr);
	/* a queued copy may still read or write it */
	aclError e = g.dev && g.pending ? run_queued(__func__) : ACL_SUCCESS;
	h_del(&g.hosts, hostPtr);
	free(hostPtr);
	return e;
}

static const char *const kind_names[] = { "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE",
					  "ACL_MEMCPY_DEVICE_TO_HOST",
					  "ACL_MEMCPY_DEVICE_TO_DEVICE" };

/* One side of a copy: device memory holding count bytes, or host memory
 * (which must not be a device address). */
static aclError check_side(const char *fn, const char *which, const void *p, size_t count,
			   int want_dev, aclrtMemcpyKind kind)
{
	if (want_dev && !dev_range(p, count))
		return fail(ACL_ERROR_INVALID_PARAM, fn,
			    "%s: %s %p + %zu bytes is not inside one aclrtMalloc allocation%s",
			    kind_names[kind], which, p, count,
			    is_dev(p) ? " (the copy runs past its end)" : "");
	if (!want_dev && is_dev(p))
		return fail(ACL_ERROR_INVALID_PARAM, fn,
			    "%s: %s %p is device memory from aclrtMalloc, not host memory",
			    kind_names[kind], which, p);
	return ACL_SUCCESS;
}

static aclError check_copy(const char *fn, const void *dst, size_t destMax, const void *src,
			   size_t count, aclrtMemcpyKind kind)
{
	if (!dst || !src)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL", !dst ? "dst" : "src");
	if ((unsigned)kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "unknown aclrtMemcpyKind %d", (int)kind);
	if (count > destMax)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "count %zu exceeds destMax %zu", count,
			    destMax);
	int dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	int src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	aclError e = check_side(fn, "dst", dst, count, dst_dev, kind);
	return e != ACL_SUCCESS ? e : check_side(fn, "src", src, count, src_dev, kind);
}

static aclError queue_copy(const char *fn, void *dst, const void *src, size_t count,
			   aclrtMemcpyKind kind, struct rt_stream *s)
{
	char err[512];
	int rc;
	/* the runtime's host pointer is read for H2D, written for D2H */
	if (kind == ACL_MEMCPY_HOST_TO_DEVICE)
		rc = rt_memcpy_async(s, SIM_COPY_H2D, (void *)(uintptr_t)src, dev_addr(dst), 0, count,
				     err, sizeof err);
	else if (kind == ACL_MEMCPY_DEVICE_TO_HOST)
		rc = rt_memcpy_async(s, SIM_COPY_D2H, dst, dev_addr(src), 0, count, err, sizeof err);
	else
		rc = rt_memcpy_async(s, SIM_COPY_D2D, NULL, dev_addr(dst), dev_addr(src), count, err,
				     sizeof err);
	if (rc)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "%s", err);
	g.pending = 1;
	return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	NEED_DEVICE();
	aclError e = check_copy(__func__, dst, destMax, src, count, kind);
	if (e != ACL_SUCCESS)
		return e;
	if (kind == ACL_MEMCPY_HOST_TO_HOST) {
		memmove(dst, src, count);
		return ACL_SUCCESS;
	}
	e = queue_copy(__func__, dst, src, count, kind, rt_default_stream(g.dev));
	return e != ACL_SUCCESS ? e : run_queued(__func__);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s;
	aclError e = get_stream(__func__, stream, &s);
	if (e == ACL_SUCCESS)
		e = check_copy(__func__, dst, destMax, src, count, kind);
	if (e != ACL_SUCCESS)
		return e;
	if (kind == ACL_MEMCPY_HOST_TO_HOST)
		return FAIL(ACL_ERROR_FEATURE_UNSUPPORTED, "host-to-host copies are not queued on "
			    "the device: use aclrtMemcpy or memcpy");
	return queue_copy(__func__, dst, src, count, kind, s);
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
	NEED_DEVICE();
	if (!devPtr)
		return FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
	if (count > maxCount)
		return FAIL(ACL_ERROR_INVALID_PARAM, "count %zu exceeds maxCount %zu", count, maxCount);
	if (!dev_range(devPtr, count))
		return FAIL(ACL_ERROR_INVALID_PARAM, "%p + %zu bytes is not inside one aclrtMalloc "
			    "allocation", devPtr, count);
	aclError e = g.pending ? run_queued(__func__) : ACL_SUCCESS; /* after the queued work */
	if (e != ACL_SUCCESS)
		return e;
	void *p = sim_gm_ptr(rt_device_sim(g.dev), dev_addr(devPtr), count);
	if (p && count)
		memset(p, value & 0xff, count);
	return ACL_SUCCESS;
}

/* --- models -------------------------------------------------------------- */

/* Keep m (its om freed) until the profile ends; 1 if out of memory (then
 * the caller frees it and the profile may confuse a later model with it). */
static int retire(struct acl_model *m)
{
	if (grow((void **)&g.prof.retired, &g.prof.capretired, g.prof.nretired,
		 sizeof *g.prof.retired))
		return 1;
	g.prof.retired[g.prof.nretired++] = m;
	return 0;
}

static struct acl_model *get_model(const char *fn, uint32_t id)
{
	if (id == 0 || id > g.nmodels || !g.models[id - 1]) {
		fail(ACL_ERROR_INVALID_MODEL_ID, fn, "no model is loaded with id %u", (unsigned)id);
		return NULL;
	}
	return g.models[id - 1];
}

/* Load the .om at modelPath (readable, checked by the caller); fn names
 * the API call in messages. */
static aclError load_model(const char *fn, const char *modelPath, uint32_t *modelId)
{
	/* Loading synchronizes; run what is queued first, so that a failure of
	 * that work is reported as such and the load's own run is its copy. */
	aclError e = g.pending ? run_queued(fn) : ACL_SUCCESS;
	if (e != ACL_SUCCESS)
		return e;
	if (grow((void **)&g.models, &g.capmodels, g.nmodels, sizeof *g.models) ||
	    g.nmodels >= UINT32_MAX)
		return fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	struct acl_model *m = calloc(1, sizeof *m); /* not moved: the runtime keeps &m->om */
	if (!m)
		return fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	char err[2048];
	if (om_read(modelPath, &m->om, NULL, err, sizeof err)) {
		free(m);
		return fail(ACL_ERROR_PARSE_MODEL, fn, "%s", err);
	}
	if (strcmp(m->om.soc, g.cfg.name) != 0)
		e = fail(ACL_ERROR_RT_SOC_VERSION, fn,
			 "%s was compiled for %s, but the device is %s (SoC from %s): compile it "
			 "with simatc --soc_version=%s, or choose the SoC with aclInit's config, "
			 "$DAVINCI_SOC or aclsimSetSoc", modelPath, m->om.soc, g.cfg.name,
			 g.soc_from, g.cfg.name);
	else if (!(m->done = rt_event_new(g.dev)))
		e = fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	else if (rt_model_load(g.dev, &m->om, &m->rm, err, sizeof err))
		e = fail(ACL_ERROR_RT_FAILURE, fn, "%s: %s", modelPath, err);
	if (e != ACL_SUCCESS) {
		rt_event_free(m->done);
		om_free(&m->om);
		free(m);
		return e;
	}
	drained(); /* loading synchronized: the queues are empty */
	g.models[g.nmodels++] = m;
	*modelId = (uint32_t)g.nmodels;
	return ACL_SUCCESS;
}

aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId)
{
	NEED_DEVICE();
	if (!modelPath || !modelId)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s is NULL", !modelPath ? "modelPath" : "modelId");
	FILE *f = fopen(modelPath, "rb");
	if (!f)
		return FAIL(ACL_ERROR_READ_MODEL_FAILURE, "%s: %s", modelPath, strerror(errno));
	fclose(f);
	return load_model(__func__, modelPath, modelId);
}

/* The .om format is read through its file (om_read maps it), so the bytes
 * go to an unlinked temporary file first. */
aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId)
{
	NEED_DEVICE();
	if (!model || !modelSize || !modelId)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s", !model ? "model is NULL"
				: !modelSize ? "modelSize is 0" : "modelId is NULL");
	const char *tmp = getenv("TMPDIR");
	char path[600];
	snprintf(path, sizeof path, "%s/davinci-acl-model-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return FAIL(ACL_ERROR_READ_MODEL_FAILURE, "cannot create a temporary file in %s: %s",
			    tmp && *tmp ? tmp : "/tmp", strerror(errno));
	FILE *f = fdopen(fd, "wb");
	int ok = f && fwrite(model, 1, modelSize, f) == modelSize;
	ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
	aclError e = ok ? load_model(__func__, path, modelId)
			: FAIL(ACL_ERROR_READ_MODEL_FAILURE, "writing %s: %s", path, strerror(errno));
	unlink(path); /* a loaded model keeps its mapping */
	return e;
}

aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize)
{
	NEED_INIT();
	if (!fileName || !workSize || !weightSize)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s is NULL",
			    !fileName ? "fileName" : !workSize ? "workSize" : "weightSize");
	FILE *f = fopen(fileName, "rb");
	if (!f)
		return FAIL(ACL_ERROR_READ_MODEL_FAILURE, "%s: %s", fileName, strerror(errno));
	fclose(f);
	struct om_model om;
	char err[2048];
	if (om_read(fileName, &om, NULL, err, sizeof err))
		return FAIL(ACL_ERROR_PARSE_MODEL, "%s", err);
	*workSize = (size_t)om.workspace_bytes;
	*weightSize = (size_t)om.weights_bytes;
	om_free(&om);
	return ACL_SUCCESS;
}

aclError aclmdlUnload(uint32_t modelId)
{
	NEED_DEVICE();
	struct acl_model *m = get_model(__func__, modelId);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	/* queued executions use its kernels and memory: run them first (the
	 * model is unloaded even if they fail) */
	aclError e = g.pending ? run_queued(__func__) : ACL_SUCCESS;
	rt_model_unload(&m->rm);
	om_free(&m->om);
	rt_event_free(m->done);
	if (!g.prof.running || retire(m))
		free(m);
	g.models[modelId - 1] = NULL;
	return e;
}

static int desc_ok(const char *fn, const aclmdlDesc *d)
{
	if (!d)
		fail(ACL_ERROR_INVALID_PARAM, fn, "modelDesc is NULL");
	else if (!h_has(&g.descs, d))
		fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
		     "%p is not a live desc from aclmdlCreateDesc", (const void *)d);
	else
		return 1;
	return 0;
}

aclmdlDesc *aclmdlCreateDesc(void)
{
	aclmdlDesc *d = calloc(1, sizeof *d);
	if (!d || h_add(&g.descs, d)) {
		free(d);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	return d;
}

static void desc_clear(aclmdlDesc *d)
{
	free(d->in);
	free(d->out);
	memset(d, 0, sizeof *d);
}

aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc)
{
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	h_del(&g.descs, modelDesc);
	desc_clear(modelDesc);
	free(modelDesc);
	return ACL_SUCCESS;
}

static struct om_tensor_desc *dup_descs(const struct om_tensor_desc *v, uint32_t n)
{
	struct om_tensor_desc *p = malloc((n ? n : 1) * sizeof *p);
	if (p && n)
		memcpy(p, v, n * sizeof *p);
	return p;
}

aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId)
{
	NEED_DEVICE();
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	struct acl_model *m = get_model(__func__, modelId);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	struct om_tensor_desc *in = dup_descs(m->om.inputs, m->om.ninputs);
	struct om_tensor_desc *out = dup_descs(m->om.outputs, m->om.noutputs);
	if (!in || !out) {
		free(in);
		free(out);
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	desc_clear(modelDesc);
	modelDesc->in = in;
	modelDesc->out = out;
	modelDesc->nin = m->om.ninputs;
	modelDesc->nout = m->om.noutputs;
	return ACL_SUCCESS;
}

/* Input (or output) index of desc d, or NULL with the reason recorded. */
static const struct om_tensor_desc *io(const char *fn, const aclmdlDesc *d, size_t index,
				       int output)
{
	if (!desc_ok(fn, d))
		return NULL;
	uint32_t n = output ? d->nout : d->nin;
	if (index >= n) {
		fail(ACL_ERROR_INVALID_PARAM, fn, "%s %zu does not exist: the desc has %u %ss%s",
		     output ? "output" : "input", index, (unsigned)n, output ? "output" : "input",
		     d->nin + d->nout ? "" : " (aclmdlGetDesc has not filled it)");
		return NULL;
	}
	return output ? &d->out[index] : &d->in[index];
}

size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc)
{
	return desc_ok(__func__, modelDesc) ? modelDesc->nin : 0;
}

size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc)
{
	return desc_ok(__func__, modelDesc) ? modelDesc->nout : 0;
}

size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? (size_t)t->size : 0;
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? (size_t)t->size : 0;
}

static aclError get_dims(const char *fn, const aclmdlDesc *d, size_t index, int output,
			 aclmdlIODims *dims)
{
	const struct om_tensor_desc *t = io(fn, d, index, output);
	if (!t)
		return d && !h_has(&g.descs, d) ? ACL_ERROR_INVALID_RESOURCE_HANDLE
						: ACL_ERROR_INVALID_PARAM;
	if (!dims)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "dims is NULL");
	memset(dims, 0, sizeof *dims);
	copy_str(dims->name, sizeof dims->name, t->name);
	dims->dimCount = (size_t)t->rank;
	for (int i = 0; i < t->rank; i++)
		dims->dims[i] = t->dims[i];
	return ACL_SUCCESS;
}

aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)
{
	return get_dims(__func__, modelDesc, index, 0, dims);
}

aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)
{
	return get_dims(__func__, modelDesc, index, 1, dims);
}

/* Shapes are static here, so the current output dims are the model's. */
aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)
{
	return get_dims(__func__, modelDesc, index, 1, dims);
}

const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? t->name : "";
}

const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? t->name : "";
}

static aclError index_by_name(const char *fn, const aclmdlDesc *d, const char *name,
			      size_t *index, int output)
{
	if (!desc_ok(fn, d))
		return d ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	if (!name || !index)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL", !name ? "name" : "index");
	uint32_t n = output ? d->nout : d->nin;
	const struct om_tensor_desc *v = output ? d->out : d->in;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0) {
			*index = i;
			return ACL_SUCCESS;
		}
	return fail(ACL_ERROR_INVALID_PARAM, fn, "the model has no %s named '%s'",
		    output ? "output" : "input", name);
}

aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index)
{
	return index_by_name(__func__, modelDesc, name, index, 0);
}

aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name,
				    size_t *index)
{
	return index_by_name(__func__, modelDesc, name, index, 1);
}

/* ONNX TensorProto.DataType (what .om descriptors hold) to ACL's numbers. */
static aclDataType acl_dtype(int32_t onnx)
{
	switch (onnx) {
	case 1: return ACL_FLOAT;
	case 2: return ACL_UINT8;
	case 3: return ACL_INT8;
	case 4: return ACL_UINT16;
	case 5: return ACL_INT16;
	case 6: return ACL_INT32;
	case 7: return ACL_INT64;
	case 8: return ACL_STRING;
	case 9: return ACL_BOOL;
	case 10: return ACL_FLOAT16;
	case 11: return ACL_DOUBLE;
	case 12: return ACL_UINT32;
	case 13: return ACL_UINT64;
	case 14: return ACL_COMPLEX64;
	case 15: return ACL_COMPLEX128;
	case 16: return ACL_BF16;
	default: return ACL_DT_UNDEFINED;
	}
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? acl_dtype(t->dtype) : ACL_DT_UNDEFINED;
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? acl_dtype(t->dtype) : ACL_DT_UNDEFINED;
}

/* .om formats are ACL's aclFormat numbers already. */
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? (aclFormat)t->format : ACL_FORMAT_UNDEFINED;
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? (aclFormat)t->format : ACL_FORMAT_UNDEFINED;
}

/* --- datasets and data buffers ------------------------------------------- */

static aclError dataset_ok(const char *fn, const aclmdlDataset *ds)
{
	if (!ds)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "dataset is NULL");
	if (!h_has(&g.datasets, ds))
		return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
			    "%p is not a live dataset from aclmdlCreateDataset", (const void *)ds);
	return ACL_SUCCESS;
}

static aclError buffer_ok(const char *fn, const aclDataBuffer *b)
{
	if (!b)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "dataBuffer is NULL");
	if (!h_has(&g.buffers, b))
		return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
			    "%p is not a live data buffer from aclCreateDataBuffer", (const void *)b);
	return ACL_SUCCESS;
}

aclmdlDataset *aclmdlCreateDataset(void)
{
	aclmdlDataset *ds = calloc(1, sizeof *ds);
	if (!ds || h_add(&g.datasets, ds)) {
		free(ds);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	return ds;
}

aclError aclmdlDestroyDataset(const aclmdlDataset *dataset)
{
	aclError e = dataset_ok(__func__, dataset);
	if (e != ACL_SUCCESS)
		return e;
	h_del(&g.datasets, dataset);
	aclmdlDataset *ds = (aclmdlDataset *)(uintptr_t)dataset; /* ours: created non-const */
	free(ds->b);
	free(ds);
	return ACL_SUCCESS;
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer)
{
	aclError e = dataset_ok(__func__, dataset);
	if (e == ACL_SUCCESS)
		e = buffer_ok(__func__, dataBuffer);
	if (e != ACL_SUCCESS)
		return e;
	if (grow((void **)&dataset->b, &dataset->cap, dataset->n, sizeof *dataset->b))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	dataset->b[dataset->n++] = dataBuffer;
	return ACL_SUCCESS;
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset)
{
	return dataset_ok(__func__, dataset) == ACL_SUCCESS ? dataset->n : 0;
}

aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index)
{
	if (dataset_ok(__func__, dataset) != ACL_SUCCESS)
		return NULL;
	if (index >= dataset->n) {
		FAIL(ACL_ERROR_INVALID_PARAM, "index %zu: the dataset holds %zu buffers", index,
		     dataset->n);
		return NULL;
	}
	return dataset->b[index];
}

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
	aclDataBuffer *b = calloc(1, sizeof *b);
	if (!b || h_add(&g.buffers, b)) {
		free(b);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	b->data = data;
	b->size = size;
	return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
	aclError e = buffer_ok(__func__, dataBuffer);
	if (e != ACL_SUCCESS)
		return e;
	h_del(&g.buffers, dataBuffer);
	free((void *)(uintptr_t)dataBuffer); /* ours: created non-const */
	return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
	aclError e = buffer_ok(__func__, dataBuffer);
	if (e != ACL_SUCCESS)
		return e;
	dataBuffer->data = data;
	dataBuffer->size = size;
	return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
	return buffer_ok(__func__, dataBuffer) == ACL_SUCCESS ? dataBuffer->data : NULL;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
	return buffer_ok(__func__, dataBuffer) == ACL_SUCCESS ? dataBuffer->size : 0;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
	size_t n = aclGetDataBufferSizeV2(dataBuffer);
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

size_t aclDataTypeSize(aclDataType dataType)
{
	switch (dataType) {
	case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
	case ACL_FLOAT16: case ACL_INT16: case ACL_UINT16: case ACL_BF16: return 2;
	case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
	case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
	case ACL_COMPLEX128: return 16;
	default: return 0;
	}
}

/* --- execution ----------------------------------------------------------- */

/* The device address of each buffer of ds, checked against the model's
 * descriptors.  addr has room for n entries. */
static aclError bind(const char *fn, const aclmdlDataset *ds, const struct om_tensor_desc *d,
		     uint32_t n, int output, uint64_t *addr)
{
	aclError mismatch = output ? ACL_ERROR_MODEL_OUTPUT_NOT_MATCH
				   : ACL_ERROR_MODEL_INPUT_NOT_MATCH;
	const char *what = output ? "output" : "input";
	aclError e = dataset_ok(fn, ds);
	if (e != ACL_SUCCESS)
		return e;
	if (ds->n != n)
		return fail(mismatch, fn, "the model has %u %ss, the %s dataset holds %zu buffers",
			    (unsigned)n, what, what, ds->n);
	for (uint32_t i = 0; i < n; i++) {
		const aclDataBuffer *b = ds->b[i];
		if (!h_has(&g.buffers, b))
			return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
				    "%s %u: its data buffer %p has been destroyed", what,
				    (unsigned)i, (const void *)b);
		if (b->size < d[i].size)
			return fail(mismatch, fn, "%s %u ('%s'): the buffer holds %zu bytes, the model "
				    "needs %llu", what, (unsigned)i, d[i].name, b->size,
				    (unsigned long long)d[i].size);
		if (!dev_range(b->data, d[i].size))
			return fail(mismatch, fn, "%s %u ('%s'): %p is not device memory from "
				    "aclrtMalloc holding %llu bytes", what, (unsigned)i, d[i].name,
				    b->data, (unsigned long long)d[i].size);
		addr[i] = dev_addr(b->data);
	}
	return ACL_SUCCESS;
}

static aclError queue_exec(const char *fn, uint32_t id, const aclmdlDataset *input,
			   const aclmdlDataset *output, struct rt_stream *s)
{
	struct acl_model *m = get_model(fn, id);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	const struct om_model *om = &m->om;
	uint64_t *in = calloc(om->ninputs + 1, sizeof *in);
	uint64_t *out = calloc(om->noutputs + 1, sizeof *out);
	aclError e = ACL_SUCCESS;
	char err[1024];
	if (!in || !out)
		e = fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS)
		e = bind(fn, input, om->inputs, om->ninputs, 0, in);
	if (e == ACL_SUCCESS)
		e = bind(fn, output, om->outputs, om->noutputs, 1, out);
	if (e == ACL_SUCCESS && !m->done_dead && rt_stream_wait_event(s, m->done))
		e = fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS) {
		g.pending = 1;
		if (rt_model_execute_async(&m->rm, s, in, out, err, sizeof err) < 0)
			e = fail(ACL_ERROR_RT_FAILURE, fn, "model %u ('%s'): %s", (unsigned)id, om->name,
				 err);
		else if (rt_event_record(m->done, s))
			e = fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
		else
			m->done_dead = 0;
	}
	free(in);
	free(out);
	return e;
}

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output)
{
	NEED_DEVICE();
	aclError e = queue_exec(__func__, modelId, input, output, rt_default_stream(g.dev));
	return e != ACL_SUCCESS ? e : run_queued(__func__);
}

aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
			    aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s;
	aclError e = get_stream(__func__, stream, &s);
	return e != ACL_SUCCESS ? e : queue_exec(__func__, modelId, input, output, s);
}

/* --- errors and extensions ----------------------------------------------- */

const char *aclGetRecentErrMsg(void) { return g.has_msg ? g.msg : NULL; }

const char *aclGetErrorString(aclError error)
{
	static const struct {
		aclError code;
		const char *text;
	} names[] = {
		{ ACL_SUCCESS, "ACL_SUCCESS (success)" },
		{ ACL_ERROR_INVALID_PARAM, "ACL_ERROR_INVALID_PARAM (invalid parameter)" },
		{ ACL_ERROR_UNINITIALIZE, "ACL_ERROR_UNINITIALIZE (aclInit has not been called)" },
		{ ACL_ERROR_REPEAT_INITIALIZE, "ACL_ERROR_REPEAT_INITIALIZE (already initialized)" },
		{ ACL_ERROR_INVALID_FILE, "ACL_ERROR_INVALID_FILE (file not readable)" },
		{ ACL_ERROR_PARSE_FILE, "ACL_ERROR_PARSE_FILE (malformed configuration file)" },
		{ ACL_ERROR_FILE_ATTR_INVALID,
		  "ACL_ERROR_FILE_ATTR_INVALID (bad value in the configuration file)" },
		{ ACL_ERROR_INVALID_MODEL_ID, "ACL_ERROR_INVALID_MODEL_ID (no such model loaded)" },
		{ ACL_ERROR_PARSE_MODEL, "ACL_ERROR_PARSE_MODEL (not a valid .om model)" },
		{ ACL_ERROR_READ_MODEL_FAILURE,
		  "ACL_ERROR_READ_MODEL_FAILURE (model file not readable)" },
		{ ACL_ERROR_MODEL_INPUT_NOT_MATCH,
		  "ACL_ERROR_MODEL_INPUT_NOT_MATCH (inputs do not match the model)" },
		{ ACL_ERROR_MODEL_OUTPUT_NOT_MATCH,
		  "ACL_ERROR_MODEL_OUTPUT_NOT_MATCH (outputs do not match the model)" },
		{ ACL_ERROR_REPEAT_FINALIZE, "ACL_ERROR_REPEAT_FINALIZE (already finalized)" },
		{ ACL_ERROR_PROF_ALREADY_RUN,
		  "ACL_ERROR_PROF_ALREADY_RUN (profiling already initialized or running)" },
		{ ACL_ERROR_PROF_NOT_RUN, "ACL_ERROR_PROF_NOT_RUN (profiling not initialized or started)" },
		{ ACL_ERROR_RT_INVALID_DEVICEID, "ACL_ERROR_RT_INVALID_DEVICEID (no such device)" },
		{ ACL_ERROR_RT_CONTEXT_NULL,
		  "ACL_ERROR_RT_CONTEXT_NULL (no device set: call aclrtSetDevice)" },
		{ ACL_ERROR_BAD_ALLOC, "ACL_ERROR_BAD_ALLOC (out of host memory)" },
		{ ACL_ERROR_API_NOT_SUPPORT, "ACL_ERROR_API_NOT_SUPPORT (API not supported)" },
		{ ACL_ERROR_INVALID_RESOURCE_HANDLE,
		  "ACL_ERROR_INVALID_RESOURCE_HANDLE (unknown or destroyed handle)" },
		{ ACL_ERROR_FEATURE_UNSUPPORTED,
		  "ACL_ERROR_FEATURE_UNSUPPORTED (feature not supported)" },
		{ ACL_ERROR_RT_MEMORY_ALLOCATION,
		  "ACL_ERROR_RT_MEMORY_ALLOCATION (out of device memory)" },
		{ ACL_ERROR_INTERNAL_ERROR, "ACL_ERROR_INTERNAL_ERROR (internal error)" },
		{ ACL_ERROR_FAILURE, "ACL_ERROR_FAILURE (failure)" },
		{ ACL_ERROR_PROFILING_FAILURE, "ACL_ERROR_PROFILING_FAILURE (the trace was not written)" },
		{ ACL_ERROR_RT_FAILURE, "ACL_ERROR_RT_FAILURE (the simulated device failed)" },
		{ ACL_ERROR_RT_EVENT_NOT_COMPLETE,
		  "ACL_ERROR_RT_EVENT_NOT_COMPLETE (event not complete)" },
		{ ACL_ERROR_RT_SOC_VERSION,
		  "ACL_ERROR_RT_SOC_VERSION (model compiled for another SoC)" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].code == error)
			return names[i].text;
	return "unknown ACL error code";
}

aclError aclsimSetSoc(const char *socNameOrIni)
{
	NEED_INIT();
	if (g.dev)
		return FAIL(ACL_ERROR_REPEAT_INITIALIZE, "the device is already set: choose the SoC "
			    "before aclrtSetDevice (or after the last aclrtResetDevice)");
	if (!socNameOrIni || !*socNameOrIni || strlen(socNameOrIni) >= sizeof g.soc)
		return FAIL(ACL_ERROR_INVALID_PARAM, "socNameOrIni must be a chip name or an .ini path");
	struct soc_config cfg;
	aclError e = load_soc(__func__, socNameOrIni, "aclsimSetSoc", ACL_ERROR_INVALID_PARAM, &cfg);
	if (e != ACL_SUCCESS)
		return e;
	g.cfg = cfg;
	copy_str(g.soc, sizeof g.soc, socNameOrIni);
	snprintf(g.soc_from, sizeof g.soc_from, "aclsimSetSoc");
	return ACL_SUCCESS;
}

aclError aclsimGetDeviceTimeUs(double *us)
{
	NEED_DEVICE();
	if (!us)
		return FAIL(ACL_ERROR_INVALID_PARAM, "us is NULL");
	*us = (double)rt_now(g.dev) / g.cfg.core_freq_mhz;
	return ACL_SUCCESS;
}

/* --- profiling ---------------------------------------------------------- */

/* Stop collecting: unhook the span recorder, forget the spans and the
 * retired models (nothing names them any more). */
static void prof_end(void)
{
	if (!g.prof.running)
		return;
	if (g.dev)
		sim_device_set_span_hook(rt_device_sim(g.dev), NULL, NULL);
	trc_spans_free(&g.prof.spans);
	memset(&g.prof.spans, 0, sizeof g.prof.spans);
	for (size_t i = 0; i < g.prof.nretired; i++) {
		free(g.prof.retired[i]);
	}
	free(g.prof.retired);
	g.prof.retired = NULL;
	g.prof.nretired = g.prof.capretired = 0;
	g.prof.running = NULL;
}

aclError aclprofInit(const char *profilerResultPath, size_t length)
{
	NEED_INIT();
	if (!profilerResultPath || length == 0 || length >= sizeof g.prof.dir)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s",
			    !profilerResultPath ? "profilerResultPath is NULL"
						: "length must be 1 to 511 (strlen of the path)");
	if (g.prof.inited)
		return FAIL(ACL_ERROR_PROF_ALREADY_RUN, "aclprofInit was already called");
	char dir[sizeof g.prof.dir];
	memcpy(dir, profilerResultPath, length);
	dir[length] = '\0';
	if (strlen(dir) != length)
		return FAIL(ACL_ERROR_INVALID_PARAM, "length %zu is not the path's length %zu", length,
			    strlen(dir));
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s: %s", dir, strerror(errno));
	memcpy(g.prof.dir, dir, length + 1);
	g.prof.inited = 1;
	return ACL_SUCCESS;
}

aclError aclprofFinalize(void)
{
	NEED_INIT();
	if (!g.prof.inited)
		return FAIL(ACL_ERROR_PROF_NOT_RUN, "aclprofInit has not been called");
	prof_end();
	g.prof.inited = 0;
	return ACL_SUCCESS;
}

aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
				   aclprofAicoreMetrics aicoreMetrics,
				   const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig)
{
	(void)aicoreEvents; /* reserved in ACL too */
	if (need_init(__func__) != ACL_SUCCESS)
		return NULL;
	if (!deviceIdList || deviceNums != 1 || deviceIdList[0] != 0) {
		FAIL(ACL_ERROR_INVALID_PARAM, "the device list must be {0} (one device)");
		return NULL;
	}
	aclprofConfig *c = calloc(1, sizeof *c);
	if (!c || h_add(&g.profcfgs, c)) {
		free(c);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	c->metrics = aicoreMetrics;
	c->types = dataTypeConfig;
	return c;
}

static aclError prof_config_ok(const char *fn, const aclprofConfig *c)
{
	if (!c)
		return fail(ACL_ERROR_INVALID_PARAM, fn, "profilerConfig is NULL");
	if (!h_has(&g.profcfgs, c))
		return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
			    "%p is not a live aclprofConfig", (const void *)c);
	return ACL_SUCCESS;
}

aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig)
{
	NEED_INIT();
	aclError e = prof_config_ok(__func__, profilerConfig);
	if (e != ACL_SUCCESS)
		return e;
	if (g.prof.running == profilerConfig)
		return FAIL(ACL_ERROR_PROF_ALREADY_RUN, "the profile is running: aclprofStop first");
	h_del(&g.profcfgs, profilerConfig);
	free((void *)(uintptr_t)profilerConfig);
	return ACL_SUCCESS;
}

aclError aclprofStart(const aclprofConfig *profilerConfig)
{
	NEED_DEVICE();
	aclError e = prof_config_ok(__func__, profilerConfig);
	if (e != ACL_SUCCESS)
		return e;
	if (!g.prof.inited)
		return FAIL(ACL_ERROR_PROF_NOT_RUN, "aclprofInit has not been called");
	if (g.prof.running)
		return FAIL(ACL_ERROR_PROF_ALREADY_RUN, "a profile is already running");
	/* the profile starts from an idle device, so the log holds only its work */
	if (g.pending && (e = run_queued(__func__)) != ACL_SUCCESS)
		return e;
	if (trc_spans_init(&g.prof.spans, (unsigned)g.cfg.core_count))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	rt_log_clear(g.dev);
	sim_device_set_span_hook(rt_device_sim(g.dev), trc_span_record, &g.prof.spans);
	g.prof.running = profilerConfig;
	return ACL_SUCCESS;
}

/* The loaded model that executed last in the log, or NULL. */
static const struct om_model *last_model(const struct rt_exec_record *e, size_t n)
{
	for (size_t i = n; i-- > 0;)
		for (size_t k = 0; k < g.nmodels; k++)
			if (g.models[k] && &g.models[k]->om == e[i].model)
				return e[i].model;
	return NULL;
}

aclError aclprofStop(const aclprofConfig *profilerConfig)
{
	NEED_DEVICE();
	aclError e = prof_config_ok(__func__, profilerConfig);
	if (e != ACL_SUCCESS)
		return e;
	if (g.prof.running != profilerConfig)
		return FAIL(ACL_ERROR_PROF_NOT_RUN, "aclprofStart has not been called with this "
			    "configuration");
	e = g.pending ? run_queued(__func__) : ACL_SUCCESS;
	size_t nt, ne;
	const struct rt_task_record *t = rt_tasks(g.dev, &nt);
	const struct rt_exec_record *x = rt_execs(g.dev, &ne);
	const struct om_model *om = last_model(x, ne);
	char err[1024];
	if (e == ACL_SUCCESS && om) {
		struct trc_summary sum;
		struct trc_input in = { &g.cfg, om, t, nt, x, ne, &g.prof.spans, &sum };
		if (trc_summarize(&g.cfg, om, t, nt, x, ne, 0, &sum, err, sizeof err) ||
		    trc_write(g.prof.dir, &in, err, sizeof err))
			e = FAIL(ACL_ERROR_PROFILING_FAILURE, "%s: %s", g.prof.dir, err);
	}
	prof_end();
	return e;
}
