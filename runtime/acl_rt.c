/* acl_rt.c: the device and its contexts (aclrtSetDevice, aclrtResetDevice,
 * aclrt*Context, the device queries, aclsimGetDeviceTimeUs) and running the
 * queued work when a call has to synchronize. */
#include <stdlib.h>

#include "acl_int.h"

/* --- synchronization ----------------------------------------------------- */

/* Every queue is empty: events destroyed meanwhile can go. */
void acl_drained(void)
{
	for (size_t i = 0; i < acl_state.nzombies; i++)
		rt_event_free(acl_state.zombies[i]);
	acl_state.nzombies = 0;
	acl_state.pending = 0;
}

/* Run everything queued (rt_synchronize empties the queues, also when the
 * simulation fails). */
aclError acl_run_queued(const char *fn)
{
	char err[2048];
	int rc = rt_synchronize(acl_state.dev, err, sizeof err);
	acl_drained();
	/* callbacks the run reached are due now (acl_report.c says why here) */
	acl_report_deliver();
	acl_report_wait_blocking();
	if (!rc)
		return ACL_SUCCESS;
	/* The failure dropped the queued work, records included: an event
	 * whose latest record did not fire never will, and a wait for it
	 * would never end. */
	for (size_t i = 0; i < acl_state.events.n; i++) {
		struct acl_event *ev = acl_state.events.v[i];
		if (ev->recorded && rt_event_query(ev->e, NULL) != 1)
			ev->dead = 1;
	}
	for (size_t i = 0; i < acl_state.nmodels; i++)
		if (acl_state.models[i] && rt_event_query(acl_state.models[i]->done, NULL) != 1)
			acl_state.models[i]->done_dead = 1;
	return acl_fail(ACL_ERROR_RT_FAILURE, fn, "the simulation failed: %s", err);
}

/* --- the device and its contexts ----------------------------------------- */

/* Free the device and everything on it (models, events, allocations,
 * streams); aclrtResetDevice's last reset and aclFinalize call it. */
void acl_destroy_device(void)
{
	if (!acl_state.dev)
		return;
	acl_prof_end(); /* the task log goes with the device */
	/* Models first: unloading frees their device memory.  Queued work may
	 * still name their kernels and events, but rt_device_free drops the
	 * queues without looking at either (and frees every stream). */
	for (size_t i = 0; i < acl_state.nmodels; i++) {
		struct acl_model *m = acl_state.models[i];
		if (!m)
			continue;
		rt_model_unload(&m->rm);
		om_free(&m->om);
		rt_event_free(m->done);
		free(m);
	}
	rt_device_free(acl_state.dev);
	acl_state.dev = NULL;
	acl_report_clear(); /* the callbacks' markers were events of the device */
	acl_state.dev_refs = 0;
	for (size_t i = 0; i < acl_state.events.n; i++) {
		struct acl_event *ev = acl_state.events.v[i];
		if (ev) {
			rt_event_free(ev->e);
			free(ev);
		}
	}
	acl_drained();
	free(acl_state.models);
	acl_state.models = NULL;
	acl_state.nmodels = acl_state.capmodels = 0;
	free(acl_state.allocs);
	acl_state.allocs = NULL;
	acl_state.nallocs = acl_state.capallocs = 0;
	acl_h_clear(&acl_state.streams);
	acl_h_clear(&acl_state.events);
	acl_state.current_ctx = NULL;
}

static aclError check_device_id(const char *fn, int32_t id)
{
	if (id != 0)
		return acl_fail(ACL_ERROR_RT_INVALID_DEVICEID, fn,
				"device %d does not exist (the simulator has one device, 0)", (int)id);
	return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	NEED_INIT();
	aclError e = check_device_id(__func__, deviceId);
	if (e != ACL_SUCCESS)
		return e;
	if (acl_state.dev) {
		acl_state.dev_refs++;
		return ACL_SUCCESS;
	}
	char err[1024];
	struct sim_options opt = { .mode = SIM_MODE_FULL };
	acl_state.dev = rt_device_new(&acl_state.cfg, &opt, err, sizeof err);
	if (!acl_state.dev)
		return FAIL(ACL_ERROR_RT_FAILURE, "%s: %s", acl_state.cfg.name, err);
	acl_state.dev_refs = 1;
	acl_state.pending = 0;
	return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
	NEED_INIT();
	aclError e = check_device_id(__func__, deviceId);
	if (e != ACL_SUCCESS)
		return e;
	if (!acl_state.dev)
		return FAIL(ACL_ERROR_RT_CONTEXT_NULL, "device 0 is not set");
	if (--acl_state.dev_refs == 0)
		acl_destroy_device();
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
	if (acl_need_init(__func__) != ACL_SUCCESS)
		return NULL;
	return acl_state.cfg.name;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
	NEED_INIT();
	if (!context)
		return FAIL(ACL_ERROR_INVALID_PARAM, "context is NULL");
	struct acl_context *c = calloc(1, sizeof *c);
	if (!c || acl_h_add(&acl_state.contexts, c)) {
		free(c);
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	aclError e = aclrtSetDevice(deviceId);
	if (e != ACL_SUCCESS) {
		acl_h_del(&acl_state.contexts, c);
		free(c);
		return e;
	}
	c->device = deviceId;
	acl_state.current_ctx = c;
	*context = c;
	return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context)
{
	NEED_INIT();
	if (!acl_h_has(&acl_state.contexts, context))
		return FAIL(ACL_ERROR_INVALID_RESOURCE_HANDLE, "%p is not a context from "
			    "aclrtCreateContext", context);
	acl_h_del(&acl_state.contexts, context);
	if (acl_state.current_ctx == context)
		acl_state.current_ctx = NULL;
	free(context);
	return aclrtResetDevice(0);
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
	NEED_DEVICE();
	if (context != &acl_state.default_ctx && !acl_h_has(&acl_state.contexts, context))
		return FAIL(ACL_ERROR_INVALID_RESOURCE_HANDLE, "%p is not a live context", context);
	acl_state.current_ctx = context;
	return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
	NEED_DEVICE();
	if (!context)
		return FAIL(ACL_ERROR_INVALID_PARAM, "context is NULL");
	*context = acl_state.current_ctx ? acl_state.current_ctx : &acl_state.default_ctx;
	return ACL_SUCCESS;
}

aclError aclsimGetDeviceTimeUs(double *us)
{
	NEED_DEVICE();
	if (!us)
		return FAIL(ACL_ERROR_INVALID_PARAM, "us is NULL");
	*us = (double)rt_now(acl_state.dev) / acl_state.cfg.core_freq_mhz;
	return ACL_SUCCESS;
}
