/* acl_report.c: callbacks (aclrtSubscribeReport, aclrtLaunchCallback,
 * aclrtProcessReport, aclrtUnSubscribeReport) in ACL's shape: a callback
 * runs on the thread subscribed to its stream, inside that thread's
 * aclrtProcessReport, once the stream has reached it.
 *
 * Why callbacks become due at synchronization points: streams here do not
 * run as work is queued; every *_async call only queues, and the whole
 * queue is simulated by the next synchronizing call (acl_run_queued, see
 * acl.h).  So "the stream has reached the callback" can only be known
 * after such a run.  aclrtLaunchCallback records a marker event on the
 * stream behind the work queued before it; acl_run_queued, after the
 * simulation, hands every callback whose marker fired to the report
 * threads in the order of the cycle it fired (launch order breaks ties,
 * and within a stream the markers fire in queue order), and then waits
 * for the BLOCK ones to have run, so that the synchronizing call returns
 * after them as it would on a device whose stream waits for the callback.
 * The report thread never runs the simulation itself: the rest of the API
 * is single-threaded, and it waits on this file's mutex and condition
 * only.  What this cannot give: work queued behind a BLOCK callback on its
 * stream has been simulated in the same run, before the callback ran, so
 * a callback's writes to host memory reach copies queued after the next
 * synchronization, not those queued right behind it.
 *
 * Thread ids are pthread_self() values cast to uint64_t, as ACL programs
 * pass them (Python's threading.get_ident() is the same value on Linux). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl_int.h"

#define R (acl_state.report)

static uint64_t self_tid(void) { return (uint64_t)pthread_self(); }

/* The subscription of stream s, or NULL.  Under mu. */
static struct acl_subscription *sub_of_stream(const struct rt_stream *s)
{
	for (size_t i = 0; i < R.nsubs; i++)
		if (R.subs[i].stream == s)
			return &R.subs[i];
	return NULL;
}

static int thread_subscribed(uint64_t tid)
{
	for (size_t i = 0; i < R.nsubs; i++)
		if (R.subs[i].tid == tid)
			return 1;
	return 0;
}

static void remove_cb(size_t i)
{
	memmove(&R.cbs[i], &R.cbs[i + 1], (R.ncbs - i - 1) * sizeof *R.cbs);
	R.ncbs--;
}

void acl_report_live(int live)
{
	pthread_mutex_lock(&R.mu);
	R.live = live;
	pthread_cond_broadcast(&R.cv);
	pthread_mutex_unlock(&R.mu);
}

aclError aclsimSetWaitHooks(void *(*release)(void), void (*reacquire)(void *token))
{
	if (!release != !reacquire)
		return FAIL(ACL_ERROR_INVALID_PARAM, "release and reacquire go together (both NULL "
			    "or neither)");
	pthread_mutex_lock(&R.mu);
	R.release = release;
	R.reacquire = reacquire;
	pthread_mutex_unlock(&R.mu);
	return ACL_SUCCESS;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
	NEED_DEVICE();
	if (!threadId) /* no thread has id 0, and callbacks use 0 for "dropped" */
		return FAIL(ACL_ERROR_INVALID_PARAM, "threadId is 0");
	struct rt_stream *s = NULL;
	aclError e = acl_get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	pthread_mutex_lock(&R.mu);
	const struct acl_subscription *old = sub_of_stream(s);
	uint64_t other = old ? old->tid : 0;
	int grown = old ? 0 : !acl_grow((void **)&R.subs, &R.capsubs, R.nsubs, sizeof *R.subs);
	if (grown) {
		R.subs[R.nsubs++] = (struct acl_subscription){ threadId, s };
		pthread_cond_broadcast(&R.cv);
	}
	pthread_mutex_unlock(&R.mu);
	if (old)
		return FAIL(ACL_ERROR_RT_STREAM_SUBSCRIBE, "stream %p already has a report thread "
			    "(%llu%s): one stream, one thread", stream, (unsigned long long)other,
			    other == threadId ? ", this one" : "");
	if (!grown)
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	return ACL_SUCCESS;
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s = NULL;
	aclError e = acl_get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	pthread_mutex_lock(&R.mu);
	struct acl_subscription *sub = sub_of_stream(s);
	int found = sub && sub->tid == threadId;
	if (found) {
		*sub = R.subs[--R.nsubs];
		/* Its callbacks not run yet are dropped: due ones now, queued
		 * ones when their markers come back (acl_report_deliver). */
		for (size_t i = R.ncbs; i-- > 0;) {
			if (R.cbs[i].stream != s)
				continue;
			if (R.cbs[i].state == CB_DUE)
				remove_cb(i);
			else if (R.cbs[i].state == CB_QUEUED)
				R.cbs[i].tid = 0;
		}
		pthread_cond_broadcast(&R.cv); /* waits on them end */
	}
	pthread_mutex_unlock(&R.mu);
	if (!found)
		return FAIL(ACL_ERROR_RT_STREAM_SUBSCRIBE, "thread %llu is not subscribed to stream %p",
			    (unsigned long long)threadId, stream);
	return ACL_SUCCESS;
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
			     aclrtStream stream)
{
	NEED_DEVICE();
	if (!fn)
		return FAIL(ACL_ERROR_INVALID_PARAM, "fn is NULL");
	if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK)
		return FAIL(ACL_ERROR_INVALID_PARAM, "blockType %d is neither ACL_CALLBACK_NO_BLOCK (0) "
			    "nor ACL_CALLBACK_BLOCK (1)", (int)blockType);
	struct rt_stream *s = NULL;
	aclError e = acl_get_stream(__func__, stream, &s);
	if (e != ACL_SUCCESS)
		return e;
	pthread_mutex_lock(&R.mu);
	const struct acl_subscription *sub = sub_of_stream(s);
	uint64_t tid = sub ? sub->tid : 0;
	int room = !acl_grow((void **)&R.cbs, &R.capcbs, R.ncbs, sizeof *R.cbs);
	pthread_mutex_unlock(&R.mu);
	if (!sub)
		return FAIL(ACL_ERROR_RT_STREAM_NO_CB_REG, "no thread is subscribed to stream %p: "
			    "aclrtSubscribeReport first", stream);
	struct rt_event *mark = room ? rt_event_new(acl_state.dev) : NULL;
	if (!mark || rt_event_record(mark, s)) {
		rt_event_free(mark); /* a failed record queued nothing */
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	acl_state.pending = 1;
	pthread_mutex_lock(&R.mu);
	R.cbs[R.ncbs++] = (struct acl_callback){ .fn = fn, .user = userData,
						 .block = blockType == ACL_CALLBACK_BLOCK,
						 .state = CB_QUEUED, .tid = tid, .seq = R.next_seq++,
						 .stream = s, .mark = mark };
	pthread_mutex_unlock(&R.mu);
	return ACL_SUCCESS;
}

static int by_cycle(const void *a, const void *b)
{
	const struct acl_callback *x = a, *y = b;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* After a simulation (the queues are empty): the callbacks whose markers
 * fired become due, in device order; those whose work was dropped by a
 * failure, or whose stream was unsubscribed, go with it. */
void acl_report_deliver(void)
{
	pthread_mutex_lock(&R.mu);
	int any = 0;
	for (size_t i = R.ncbs; i-- > 0;) {
		struct acl_callback *c = &R.cbs[i];
		if (c->state != CB_QUEUED)
			continue;
		uint64_t cycle = 0;
		int fired = rt_event_query(c->mark, &cycle);
		if (fired == 0)
			continue; /* not run (cannot happen after rt_synchronize) */
		rt_event_free(c->mark);
		c->mark = NULL;
		if (fired != 1 || !c->tid) {
			remove_cb(i);
			continue;
		}
		c->state = CB_DUE;
		c->cycle = cycle;
		any = 1;
	}
	if (any) {
		/* due and running ones first, in device order; the queued ones
		 * (none after a full run) keep their launch order behind them */
		for (size_t i = 0; i < R.ncbs; i++)
			if (R.cbs[i].state == CB_QUEUED)
				R.cbs[i].cycle = UINT64_MAX;
		qsort(R.cbs, R.ncbs, sizeof *R.cbs, by_cycle);
		pthread_cond_broadcast(&R.cv);
	}
	pthread_mutex_unlock(&R.mu);
}

/* A BLOCK callback that another thread has still to run.  Under mu. */
static int blocking_due(uint64_t self)
{
	for (size_t i = 0; i < R.ncbs; i++)
		if (R.cbs[i].block && R.cbs[i].state != CB_QUEUED && R.cbs[i].tid != self)
			return 1;
	return 0;
}

/* The synchronizing thread waits for the due BLOCK callbacks (of every
 * stream: the run just completed every stream's work).  Not for its own:
 * it would wait for itself. */
void acl_report_wait_blocking(void)
{
	uint64_t self = self_tid();
	pthread_mutex_lock(&R.mu);
	if (!blocking_due(self)) {
		pthread_mutex_unlock(&R.mu);
		return;
	}
	void *(*release)(void) = R.release;
	void (*reacquire)(void *) = R.reacquire;
	pthread_mutex_unlock(&R.mu);
	/* outside mu: the hook may block on a lock the callback holds */
	void *token = release ? release() : NULL;
	pthread_mutex_lock(&R.mu);
	while (blocking_due(self))
		pthread_cond_wait(&R.cv, &R.mu);
	pthread_mutex_unlock(&R.mu);
	if (reacquire)
		reacquire(token);
}

/* aclrtDestroyStream: its subscription goes (the address may come back as
 * another stream); callbacks already launched on it still run. */
void acl_report_forget_stream(const struct rt_stream *s)
{
	pthread_mutex_lock(&R.mu);
	for (size_t i = R.nsubs; i-- > 0;)
		if (R.subs[i].stream == s)
			R.subs[i] = R.subs[--R.nsubs];
	pthread_cond_broadcast(&R.cv);
	pthread_mutex_unlock(&R.mu);
}

/* The device is gone (after rt_device_free: the markers are named by no
 * queue now): every subscription and callback with it.  A callback that
 * is running finishes; its thread finds its entry gone (by seq). */
void acl_report_clear(void)
{
	pthread_mutex_lock(&R.mu);
	for (size_t i = 0; i < R.ncbs; i++)
		rt_event_free(R.cbs[i].mark);
	R.ncbs = 0;
	R.nsubs = 0;
	pthread_cond_broadcast(&R.cv);
	pthread_mutex_unlock(&R.mu);
}

/* Callbacks launched and not run yet (acl_mdl.c: a new SoC restarts the
 * clock their order is kept by). */
int acl_report_outstanding(void)
{
	pthread_mutex_lock(&R.mu);
	int n = R.ncbs > 0;
	pthread_mutex_unlock(&R.mu);
	return n;
}

/* aclFinalize, after acl_report_clear: the arrays' memory. */
void acl_report_free(void)
{
	pthread_mutex_lock(&R.mu);
	free(R.subs);
	free(R.cbs);
	R.subs = NULL;
	R.cbs = NULL;
	R.capsubs = R.capcbs = 0;
	pthread_mutex_unlock(&R.mu);
}

/* The report thread's side: no acl_fail here, as the message buffer is the
 * host thread's and unguarded (acl.h says so). */
aclError aclrtProcessReport(int32_t timeout)
{
	if (timeout == 0 || timeout < -1)
		return ACL_ERROR_INVALID_PARAM;
	uint64_t self = self_tid();
	struct timespec until;
	if (timeout > 0) {
		clock_gettime(CLOCK_REALTIME, &until); /* the clock pthread_cond_timedwait uses */
		until.tv_sec += timeout / 1000;
		until.tv_nsec += (long)(timeout % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&R.mu);
	aclError e = ACL_SUCCESS;
	for (;;) {
		if (!R.live) {
			e = ACL_ERROR_UNINITIALIZE;
			break;
		}
		size_t i = 0;
		while (i < R.ncbs && !(R.cbs[i].state == CB_DUE && R.cbs[i].tid == self))
			i++;
		if (i < R.ncbs) {
			struct acl_callback c = R.cbs[i];
			R.cbs[i].state = CB_RUNNING;
			pthread_mutex_unlock(&R.mu);
			c.fn(c.user);
			pthread_mutex_lock(&R.mu);
			for (size_t j = 0; j < R.ncbs; j++)
				if (R.cbs[j].seq == c.seq) {
					remove_cb(j);
					break;
				}
			pthread_cond_broadcast(&R.cv); /* a synchronization may wait for it */
			break;
		}
		if (!thread_subscribed(self)) {
			e = ACL_ERROR_RT_THREAD_SUBSCRIBE;
			break;
		}
		if (timeout < 0) {
			pthread_cond_wait(&R.cv, &R.mu);
		} else if (pthread_cond_timedwait(&R.cv, &R.mu, &until) == ETIMEDOUT) {
			e = ACL_ERROR_RT_REPORT_TIMEOUT;
			break;
		}
	}
	pthread_mutex_unlock(&R.mu);
	return e;
}
