/* acl.c: the AscendCL-shaped API of acl.h over the device runtime
 * (runtime.h), split by job over runtime/acl*.c (acl_int.h says which).
 * This file holds the process-wide state, aclInit/aclFinalize and the
 * error reporting (aclGetRecentErrMsg, aclGetErrorString). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_int.h"

/* ACL's API is process-wide (see struct acl_state in acl_int.h): this is
 * the one instance, the single exception to the no-global-state rule. */
struct acl_state acl_state = {
	.report = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER },
};

aclError acl_fail(aclError code, const char *fn, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(acl_state.msg, sizeof acl_state.msg, "%s: ", fn);
	va_start(ap, fmt);
	vsnprintf(acl_state.msg + n, sizeof acl_state.msg - (size_t)n, fmt, ap);
	va_end(ap);
	acl_state.has_msg = 1;
	return code;
}

aclError acl_need_init(const char *fn)
{
	if (acl_state.state != 1)
		return acl_fail(ACL_ERROR_UNINITIALIZE, fn, "aclInit has not been called%s",
				acl_state.state == 2 ? " since aclFinalize" : "");
	return ACL_SUCCESS;
}

aclError acl_need_device(const char *fn)
{
	aclError e = acl_need_init(fn);
	if (e == ACL_SUCCESS && !acl_state.dev)
		e = acl_fail(ACL_ERROR_RT_CONTEXT_NULL, fn,
			     "no device is set: call aclrtSetDevice(0) first");
	return e;
}

aclError aclInit(const char *configPath)
{
	if (acl_state.state == 1)
		return FAIL(ACL_ERROR_REPEAT_INITIALIZE, "already initialized");
	acl_free_sets();
	acl_state.config[0] = '\0';
	const char *env = getenv("DAVINCI_SOC");
	acl_copy_str(acl_state.soc, sizeof acl_state.soc, env && *env ? env : "Ascend310");
	snprintf(acl_state.soc_from, sizeof acl_state.soc_from, "%s",
		 env && *env ? "$DAVINCI_SOC" : "the default");
	acl_state.soc_in_config = 0;
	/* Without $DAVINCI_SOC or the config's soc =, the device starts as
	 * Ascend310 and the first .om loaded picks the SoC (acl_mdl.c), as an
	 * application on real hardware runs on the chip its model was built
	 * for without naming it. */
	acl_state.soc_is_default = !(env && *env);
	aclError e = ACL_SUCCESS;
	if (configPath && *configPath)
		e = acl_read_config(__func__, configPath);
	if (e == ACL_SUCCESS)
		e = acl_load_soc(__func__, acl_state.soc, acl_state.soc_from,
				 acl_state.soc_in_config ? ACL_ERROR_FILE_ATTR_INVALID
							 : ACL_ERROR_INVALID_PARAM,
				 &acl_state.cfg);
	if (e != ACL_SUCCESS) {
		acl_free_sets();
		return e;
	}
	acl_state.state = 1;
	acl_report_live(1);
	return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
	if (acl_state.state == 0)
		return FAIL(ACL_ERROR_UNINITIALIZE, "aclInit has not been called");
	if (acl_state.state == 2)
		return FAIL(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize was already called");
	acl_report_live(0); /* report threads waiting in aclrtProcessReport return */
	acl_destroy_device();
	acl_report_free();
	for (size_t i = 0; i < acl_state.contexts.n; i++)
		free(acl_state.contexts.v[i]);
	acl_h_clear(&acl_state.contexts);
	for (size_t i = 0; i < acl_state.hosts.n; i++)
		free(acl_state.hosts.v[i]);
	acl_h_clear(&acl_state.hosts);
	free(acl_state.zombies);
	acl_state.zombies = NULL;
	acl_state.capzombies = 0;
	for (size_t i = 0; i < acl_state.profcfgs.n; i++)
		free(acl_state.profcfgs.v[i]);
	acl_h_clear(&acl_state.profcfgs);
	acl_state.prof.inited = 0;
	acl_free_sets();
	acl_state.state = 2;
	return ACL_SUCCESS;
}

const char *aclGetRecentErrMsg(void) { return acl_state.has_msg ? acl_state.msg : NULL; }

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
		{ ACL_ERROR_RT_STREAM_SUBSCRIBE,
		  "ACL_ERROR_RT_STREAM_SUBSCRIBE (stream already has, or has not, that report thread)" },
		{ ACL_ERROR_RT_THREAD_SUBSCRIBE,
		  "ACL_ERROR_RT_THREAD_SUBSCRIBE (thread subscribed to no stream)" },
		{ ACL_ERROR_RT_STREAM_NO_CB_REG,
		  "ACL_ERROR_RT_STREAM_NO_CB_REG (no report thread subscribed to the stream)" },
		{ ACL_ERROR_RT_REPORT_TIMEOUT,
		  "ACL_ERROR_RT_REPORT_TIMEOUT (no callback due within the timeout)" },
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
