/* acl_stream.c: streams and events (aclrt*Stream, aclrt*Event): queueing
 * records and waits, and settling an event whose record has not run. */
#include <stdlib.h>

#include "acl_int.h"

/* NULL is the default stream.  Sets *out only on success: callers in this
 * file start s at NULL, as GCC cannot tell that now that this function
 * is not static (it is shared with acl_mem.c and acl_mdl.c). */
aclError acl_get_stream(const char *fn, aclrtStream st, struct rt_stream **out)
{
	if (!st) {
		*out = rt_default_stream(acl_state.dev);
		return ACL_SUCCESS;
	}
	if (!acl_h_has(&acl_state.streams, st))
		return acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
				"stream %p is not a live stream from aclrtCreateStream", st);
	*out = st;
	return ACL_SUCCESS;
}

static aclError get_event(const char *fn, aclrtEvent ev, struct acl_event **out)
{
	if (!ev)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
	if (!acl_h_has(&acl_state.events, ev))
		return acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
				"event %p is not a live event from aclrtCreateEvent", ev);
	*out = ev;
	return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	NEED_DEVICE();
	if (!stream)
		return FAIL(ACL_ERROR_INVALID_PARAM, "stream is NULL");
	struct rt_stream *s = rt_stream_new(acl_state.dev);
	if (!s)
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	if (acl_h_add(&acl_state.streams, s)) {
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
	struct rt_stream *s = NULL;
	aclError e = acl_get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	acl_h_del(&acl_state.streams, s);
	acl_report_forget_stream(s);
	rt_stream_free(s); /* its queued work still runs */
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s;
	aclError e = acl_get_stream(__func__, stream, &s);
	return e != ACL_SUCCESS ? e : acl_run_queued(__func__);
}

aclError aclrtSynchronizeDevice(void)
{
	NEED_DEVICE();
	return acl_run_queued(__func__);
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	NEED_DEVICE();
	if (!event)
		return FAIL(ACL_ERROR_INVALID_PARAM, "event is NULL");
	struct acl_event *ev = calloc(1, sizeof *ev);
	if (ev)
		ev->e = rt_event_new(acl_state.dev);
	if (!ev || !ev->e || acl_h_add(&acl_state.events, ev)) {
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
	acl_h_del(&acl_state.events, ev);
	/* queued records and waits point at it until they have run */
	if (!acl_state.pending) {
		rt_event_free(ev->e);
	} else if (acl_grow((void **)&acl_state.zombies, &acl_state.capzombies, acl_state.nzombies,
			    sizeof *acl_state.zombies)) {
		e = acl_run_queued(__func__); /* no room to defer: run the queues now */
		rt_event_free(ev->e);
	} else {
		acl_state.zombies[acl_state.nzombies++] = ev->e;
	}
	free(ev);
	return e;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	NEED_DEVICE();
	struct acl_event *ev;
	struct rt_stream *s = NULL;
	aclError e = get_event(__func__, event, &ev);
	if (e == ACL_SUCCESS)
		e = acl_get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	if (rt_event_record(ev->e, s))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	ev->recorded = 1;
	ev->dead = 0;
	acl_state.pending = 1;
	return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
	NEED_DEVICE();
	struct acl_event *ev;
	struct rt_stream *s = NULL;
	aclError e = acl_get_stream(__func__, stream, &s);
	if (e == ACL_SUCCESS)
		e = get_event(__func__, event, &ev);
	if (e != ACL_SUCCESS)
		return e;
	if (ev->dead)
		return FAIL(ACL_ERROR_RT_FAILURE, "event %p will never fire: the work that was to "
			    "record it failed (record it again)", event);
	if (rt_stream_wait_event(s, ev->e))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	acl_state.pending = 1;
	return ACL_SUCCESS;
}

/* Run the simulation if ev's latest record has not fired yet. */
static aclError settle(const char *fn, struct acl_event *ev)
{
	if (ev->dead)
		return acl_fail(ACL_ERROR_RT_FAILURE, fn, "event %p will never fire: the work that was "
				"to record it failed (record it again)", (void *)ev);
	if (!ev->recorded || rt_event_query(ev->e, NULL))
		return ACL_SUCCESS;
	return acl_run_queued(fn);
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
	*ms = (float)(((double)t1 - (double)t0) / acl_state.cfg.core_freq_mhz / 1000.0);
	return ACL_SUCCESS;
}
