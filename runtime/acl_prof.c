/* acl_prof.c: profiling (aclprof*): collecting pipe spans and the task log
 * between aclprofStart and aclprofStop, and writing the trace files of
 * trace.h from them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl_int.h"
#include "summary.h"

/* Stop collecting: unhook the span recorder, forget the spans and the
 * retired models (nothing names them any more). */
void acl_prof_end(void)
{
	if (!acl_state.prof.running)
		return;
	if (acl_state.dev)
		sim_device_set_span_hook(rt_device_sim(acl_state.dev), NULL, NULL);
	trc_spans_free(&acl_state.prof.spans);
	memset(&acl_state.prof.spans, 0, sizeof acl_state.prof.spans);
	for (size_t i = 0; i < acl_state.prof.nretired; i++) {
		free(acl_state.prof.retired[i]);
	}
	free(acl_state.prof.retired);
	acl_state.prof.retired = NULL;
	acl_state.prof.nretired = acl_state.prof.capretired = 0;
	acl_state.prof.running = NULL;
}

/* Keep m (its om freed) until the profile ends; 1 if out of memory (then
 * the caller frees it and the profile may confuse a later model with it). */
int acl_prof_retire(struct acl_model *m)
{
	if (acl_grow((void **)&acl_state.prof.retired, &acl_state.prof.capretired,
		     acl_state.prof.nretired, sizeof *acl_state.prof.retired))
		return 1;
	acl_state.prof.retired[acl_state.prof.nretired++] = m;
	return 0;
}

aclError aclprofInit(const char *profilerResultPath, size_t length)
{
	NEED_INIT();
	if (!profilerResultPath || length == 0 || length >= sizeof acl_state.prof.dir)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s",
			    !profilerResultPath ? "profilerResultPath is NULL"
						: "length must be 1 to 511 (strlen of the path)");
	if (acl_state.prof.inited)
		return FAIL(ACL_ERROR_PROF_ALREADY_RUN, "aclprofInit was already called");
	char dir[sizeof acl_state.prof.dir];
	memcpy(dir, profilerResultPath, length);
	dir[length] = '\0';
	if (strlen(dir) != length)
		return FAIL(ACL_ERROR_INVALID_PARAM, "length %zu is not the path's length %zu", length,
			    strlen(dir));
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s: %s", dir, strerror(errno));
	memcpy(acl_state.prof.dir, dir, length + 1);
	acl_state.prof.inited = 1;
	return ACL_SUCCESS;
}

aclError aclprofFinalize(void)
{
	NEED_INIT();
	if (!acl_state.prof.inited)
		return FAIL(ACL_ERROR_PROF_NOT_RUN, "aclprofInit has not been called");
	acl_prof_end();
	acl_state.prof.inited = 0;
	return ACL_SUCCESS;
}

aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
				   aclprofAicoreMetrics aicoreMetrics,
				   const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig)
{
	(void)aicoreEvents; /* reserved in ACL too */
	if (acl_need_init(__func__) != ACL_SUCCESS)
		return NULL;
	if (!deviceIdList || deviceNums != 1 || deviceIdList[0] != 0) {
		FAIL(ACL_ERROR_INVALID_PARAM, "the device list must be {0} (one device)");
		return NULL;
	}
	aclprofConfig *c = calloc(1, sizeof *c);
	if (!c || acl_h_add(&acl_state.profcfgs, c)) {
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
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "profilerConfig is NULL");
	if (!acl_h_has(&acl_state.profcfgs, c))
		return acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
				"%p is not a live aclprofConfig", (const void *)c);
	return ACL_SUCCESS;
}

aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig)
{
	NEED_INIT();
	aclError e = prof_config_ok(__func__, profilerConfig);
	if (e != ACL_SUCCESS)
		return e;
	if (acl_state.prof.running == profilerConfig)
		return FAIL(ACL_ERROR_PROF_ALREADY_RUN, "the profile is running: aclprofStop first");
	acl_h_del(&acl_state.profcfgs, profilerConfig);
	free((void *)(uintptr_t)profilerConfig);
	return ACL_SUCCESS;
}

aclError aclprofStart(const aclprofConfig *profilerConfig)
{
	NEED_DEVICE();
	aclError e = prof_config_ok(__func__, profilerConfig);
	if (e != ACL_SUCCESS)
		return e;
	if (!acl_state.prof.inited)
		return FAIL(ACL_ERROR_PROF_NOT_RUN, "aclprofInit has not been called");
	if (acl_state.prof.running)
		return FAIL(ACL_ERROR_PROF_ALREADY_RUN, "a profile is already running");
	/* the profile starts from an idle device, so the log holds only its work */
	if (acl_state.pending && (e = acl_run_queued(__func__)) != ACL_SUCCESS)
		return e;
	if (trc_spans_init(&acl_state.prof.spans, (unsigned)acl_state.cfg.core_count))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	rt_log_clear(acl_state.dev);
	sim_device_set_span_hook(rt_device_sim(acl_state.dev), trc_span_record, &acl_state.prof.spans);
	acl_state.prof.running = profilerConfig;
	return ACL_SUCCESS;
}

/* The loaded model that executed last in the log, or NULL: the program
 * that ran (a dynamic-batch model's is one of its variants). */
static const struct om_model *last_model(const struct trc_exec *e, size_t n)
{
	for (size_t i = n; i-- > 0;)
		for (size_t k = 0; k < acl_state.nmodels; k++) {
			const struct om_model *om = acl_state.models[k] ? &acl_state.models[k]->om
									: NULL;
			if (!om)
				continue;
			if (om == e[i].model)
				return e[i].model;
			for (uint32_t v = 0; v < om->nvariants; v++)
				if (&om->variants[v] == e[i].model)
					return e[i].model;
		}
	return NULL;
}

aclError aclprofStop(const aclprofConfig *profilerConfig)
{
	NEED_DEVICE();
	aclError e = prof_config_ok(__func__, profilerConfig);
	if (e != ACL_SUCCESS)
		return e;
	if (acl_state.prof.running != profilerConfig)
		return FAIL(ACL_ERROR_PROF_NOT_RUN, "aclprofStart has not been called with this "
			    "configuration");
	e = acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS;
	size_t nt, ne;
	const struct trc_task *t = rt_tasks(acl_state.dev, &nt);
	const struct trc_exec *x = rt_execs(acl_state.dev, &ne);
	const struct om_model *om = last_model(x, ne);
	char err[1024];
	if (e == ACL_SUCCESS && om) {
		struct trc_summary sum;
		struct trc_input in = { &acl_state.cfg, om, t, nt, x, ne, &acl_state.prof.spans, &sum };
		if (trc_summarize(&acl_state.cfg, om, t, nt, x, ne, 0, &sum, err, sizeof err) ||
		    trc_write(acl_state.prof.dir, &in, err, sizeof err))
			e = FAIL(ACL_ERROR_PROFILING_FAILURE, "%s: %s", acl_state.prof.dir, err);
	}
	acl_prof_end();
	return e;
}
