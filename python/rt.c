/* rt.c: acl.rt, the runtime calls (devices, contexts, streams, events,
 * memory) in pyACL's shapes: ret, or (value, ret) where the C call has an
 * output argument. */
#include "pyacl.h"

/* ret = f() and ret = f(int32) */
#define RET_VOID(name, call)                                            \
	static PyObject *name(PyObject *self, PyObject *unused)         \
	{                                                               \
		return PyLong_FromLong(call());                         \
	}
#define RET_I32(name, call)                                             \
	static PyObject *name(PyObject *self, PyObject *args)           \
	{                                                               \
		int id;                                                 \
		if (!PyArg_ParseTuple(args, "i:" #name, &id))           \
			return NULL;                                    \
		return PyLong_FromLong(call((int32_t)id));              \
	}
RET_I32(set_device, aclrtSetDevice)
RET_I32(reset_device, aclrtResetDevice)
RET_VOID(synchronize_device, aclrtSynchronizeDevice)
PYACL_HANDLE_FN(destroy_context, aclrtDestroyContext, PyLong_FromLong)
PYACL_HANDLE_FN(set_context, aclrtSetCurrentContext, PyLong_FromLong)
PYACL_HANDLE_FN(destroy_stream, aclrtDestroyStream, PyLong_FromLong)
PYACL_HANDLE_FN(synchronize_stream, aclrtSynchronizeStream, PyLong_FromLong)
PYACL_HANDLE_FN(destroy_event, aclrtDestroyEvent, PyLong_FromLong)
PYACL_HANDLE_FN(synchronize_event, aclrtSynchronizeEvent, PyLong_FromLong)
PYACL_HANDLE_FN(free_, aclrtFree, PyLong_FromLong)
PYACL_HANDLE_FN(free_host, aclrtFreeHost, PyLong_FromLong)

/* (value, ret) */
PYACL_OUT_FN(get_device, int32_t, -1, aclrtGetDevice, pyacl_int_ret)
PYACL_OUT_FN(get_device_count, uint32_t, 0, aclrtGetDeviceCount, pyacl_int_ret)
PYACL_OUT_FN(get_run_mode, aclrtRunMode, ACL_HOST, aclrtGetRunMode, pyacl_int_ret)
PYACL_OUT_FN(get_context, aclrtContext, NULL, aclrtGetCurrentContext, pyacl_ptr_ret)
PYACL_OUT_FN(create_stream, aclrtStream, NULL, aclrtCreateStream, pyacl_ptr_ret)
PYACL_OUT_FN(create_event, aclrtEvent, NULL, aclrtCreateEvent, pyacl_ptr_ret)

static PyObject *get_soc_name(PyObject *self, PyObject *unused)
{
	return pyacl_str_or_none(aclrtGetSocName());
}

static PyObject *create_context(PyObject *self, PyObject *args)
{
	int id;
	if (!PyArg_ParseTuple(args, "i:create_context", &id))
		return NULL;
	aclrtContext ctx = NULL;
	aclError ret = aclrtCreateContext(&ctx, (int32_t)id);
	return pyacl_ptr_ret(ctx, ret);
}

static PyObject *record_event(PyObject *self, PyObject *args)
{
	void *e, *s;
	if (!PyArg_ParseTuple(args, "O&O&:record_event", pyacl_ptr, &e, pyacl_ptr, &s))
		return NULL;
	return PyLong_FromLong(aclrtRecordEvent(e, s));
}

static PyObject *stream_wait_event(PyObject *self, PyObject *args)
{
	void *s, *e;
	if (!PyArg_ParseTuple(args, "O&O&:stream_wait_event", pyacl_ptr, &s, pyacl_ptr, &e))
		return NULL;
	return PyLong_FromLong(aclrtStreamWaitEvent(s, e));
}

static PyObject *query_event(PyObject *self, PyObject *args)
{
	void *e;
	if (!PyArg_ParseTuple(args, "O&:query_event", pyacl_ptr, &e))
		return NULL;
	aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
	aclError ret = aclrtQueryEvent(e, &st);
	return pyacl_int_ret(st, ret);
}

static PyObject *event_elapsed_time(PyObject *self, PyObject *args)
{
	void *a, *b;
	if (!PyArg_ParseTuple(args, "O&O&:event_elapsed_time", pyacl_ptr, &a, pyacl_ptr, &b))
		return NULL;
	float ms = 0;
	aclError ret = aclrtEventElapsedTime(&ms, a, b);
	return Py_BuildValue("(di)", (double)ms, (int)ret);
}

static PyObject *malloc_(PyObject *self, PyObject *args)
{
	size_t size;
	int policy;
	if (!PyArg_ParseTuple(args, "O&i:malloc", pyacl_size, &size, &policy))
		return NULL;
	void *p = NULL;
	aclError ret = aclrtMalloc(&p, size, (aclrtMemMallocPolicy)policy);
	return pyacl_ptr_ret(p, ret);
}

static PyObject *malloc_host(PyObject *self, PyObject *args)
{
	size_t size;
	if (!PyArg_ParseTuple(args, "O&:malloc_host", pyacl_size, &size))
		return NULL;
	void *p = NULL;
	aclError ret = aclrtMallocHost(&p, size);
	return pyacl_ptr_ret(p, ret);
}

static PyObject *get_mem_info(PyObject *self, PyObject *args)
{
	int attr;
	if (!PyArg_ParseTuple(args, "i:get_mem_info", &attr))
		return NULL;
	size_t fr = 0, total = 0;
	aclError ret = aclrtGetMemInfo((aclrtMemAttr)attr, &fr, &total);
	return Py_BuildValue("(nni)", (Py_ssize_t)fr, (Py_ssize_t)total, (int)ret);
}

/* ({"location": {"id", "type"}, "pageSize", "rsv"}, ret) */
static PyObject *pointer_get_attributes(PyObject *self, PyObject *args)
{
	void *p;
	if (!PyArg_ParseTuple(args, "O&:pointer_get_attributes", pyacl_ptr, &p))
		return NULL;
	aclrtPtrAttributes at;
	memset(&at, 0, sizeof at);
	aclError ret = aclrtPointerGetAttributes(p, &at);
	PyObject *d = Py_BuildValue("{s:{s:k,s:i},s:k,s:[kkkk]}", "location", "id",
				    (unsigned long)at.location.id, "type", (int)at.location.type,
				    "pageSize", (unsigned long)at.pageSize, "rsv",
				    (unsigned long)at.rsv[0], (unsigned long)at.rsv[1],
				    (unsigned long)at.rsv[2], (unsigned long)at.rsv[3]);
	if (!d)
		return NULL;
	return Py_BuildValue("(Ni)", d, (int)ret);
}

static PyObject *memcpy_(PyObject *self, PyObject *args)
{
	void *dst, *src;
	size_t max, count;
	int kind;
	if (!PyArg_ParseTuple(args, "O&O&O&O&i:memcpy", pyacl_ptr, &dst, pyacl_size, &max,
			      pyacl_ptr, &src, pyacl_size, &count, &kind))
		return NULL;
	/* The GIL stays held here and everywhere: the C library is not
	 * thread-safe, and the GIL is what serializes Python threads' calls.
	 * Two waits let go of it: process_report's, and a synchronization's
	 * wait for BLOCK callbacks (pyacl_wait_release, set at import). */
	return PyLong_FromLong(aclrtMemcpy(dst, max, src, count, (aclrtMemcpyKind)kind));
}

static PyObject *memcpy_async(PyObject *self, PyObject *args)
{
	void *dst, *src, *stream;
	size_t max, count;
	int kind;
	if (!PyArg_ParseTuple(args, "O&O&O&O&iO&:memcpy_async", pyacl_ptr, &dst, pyacl_size, &max,
			      pyacl_ptr, &src, pyacl_size, &count, &kind, pyacl_ptr, &stream))
		return NULL;
	return PyLong_FromLong(aclrtMemcpyAsync(dst, max, src, count, (aclrtMemcpyKind)kind, stream));
}

static PyObject *memset_(PyObject *self, PyObject *args)
{
	void *p;
	size_t max, count;
	int value;
	if (!PyArg_ParseTuple(args, "O&O&iO&:memset", pyacl_ptr, &p, pyacl_size, &max, &value,
			      pyacl_size, &count))
		return NULL;
	return PyLong_FromLong(aclrtMemset(p, max, value, count));
}

/* --- callbacks ------------------------------------------------------------- */

static int u64(PyObject *o, void *out)
{
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "a thread id must be an int, not %.80s",
			     Py_TYPE(o)->tp_name);
		return 0;
	}
	unsigned long long v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred())
		return 0;
	*(uint64_t *)out = v;
	return 1;
}

static PyObject *subscribe_report(PyObject *self, PyObject *args)
{
	uint64_t tid;
	void *s;
	if (!PyArg_ParseTuple(args, "O&O&:subscribe_report", u64, &tid, pyacl_ptr, &s))
		return NULL;
	return PyLong_FromLong(aclrtSubscribeReport(tid, s));
}

static PyObject *unsubscribe_report(PyObject *self, PyObject *args)
{
	uint64_t tid;
	void *s;
	if (!PyArg_ParseTuple(args, "O&O&:unsubscribe_report", u64, &tid, pyacl_ptr, &s))
		return NULL;
	return PyLong_FromLong(aclrtUnSubscribeReport(tid, s));
}

/* userData is a (fn, user_data) tuple the launch took a reference to; the
 * call gives it back.  It runs on the report thread inside process_report,
 * which has let go of the GIL: take it.  An exception in fn cannot reach
 * any caller, so it is printed as unraisable, as Python does for errors in
 * callbacks. */
static void trampoline(void *user)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *pair = user;
	PyObject *r = PyObject_CallOneArg(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
	if (!r)
		PyErr_WriteUnraisable(PyTuple_GET_ITEM(pair, 0));
	Py_XDECREF(r);
	Py_DECREF(pair);
	PyGILState_Release(g);
}

/* pyACL: launch_callback(fn, user_data_list, block_type, stream) -> ret;
 * fn(user_data_list) runs on the subscribed thread. */
static PyObject *launch_callback(PyObject *self, PyObject *args)
{
	PyObject *fn, *data;
	int block;
	void *s;
	if (!PyArg_ParseTuple(args, "OOiO&:launch_callback", &fn, &data, &block, pyacl_ptr, &s))
		return NULL;
	if (!PyCallable_Check(fn)) {
		PyErr_Format(PyExc_TypeError, "launch_callback: fn must be callable, not %.80s",
			     Py_TYPE(fn)->tp_name);
		return NULL;
	}
	PyObject *pair = PyTuple_Pack(2, fn, data);
	if (!pair)
		return NULL;
	aclError ret = aclrtLaunchCallback(trampoline, pair, (aclrtCallbackBlockType)block, s);
	if (ret != ACL_SUCCESS)
		Py_DECREF(pair); /* else the callback owns it (a dropped one keeps it) */
	return PyLong_FromLong(ret);
}

static PyObject *process_report(PyObject *self, PyObject *args)
{
	int timeout;
	if (!PyArg_ParseTuple(args, "i:process_report", &timeout))
		return NULL;
	aclError ret;
	/* The wait must not hold the GIL: the host thread that makes the
	 * callback due needs it, and so does the callback (trampoline). */
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtProcessReport((int32_t)timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

void *pyacl_wait_release(void) { return PyEval_SaveThread(); }
void pyacl_wait_reacquire(void *token) { PyEval_RestoreThread(token); }

#define M PYACL_METHOD
static PyMethodDef rt_methods[] = {
	M("subscribe_report", subscribe_report, METH_VARARGS,
	  "subscribe_report(thread_id, stream) -> ret"),
	M("unsubscribe_report", unsubscribe_report, METH_VARARGS,
	  "unsubscribe_report(thread_id, stream) -> ret"),
	M("launch_callback", launch_callback, METH_VARARGS,
	  "launch_callback(fn, user_data, block_type, stream) -> ret; fn(user_data) runs on the "
	  "thread subscribed to stream, in its process_report"),
	M("process_report", process_report, METH_VARARGS,
	  "process_report(timeout_ms) -> ret: runs this thread's next due callback"),
	M("set_device", set_device, METH_VARARGS, "set_device(device_id) -> ret"),
	M("reset_device", reset_device, METH_VARARGS, "reset_device(device_id) -> ret"),
	M("get_device", get_device, METH_NOARGS, "get_device() -> (device_id, ret)"),
	M("get_device_count", get_device_count, METH_NOARGS, "get_device_count() -> (count, ret)"),
	M("get_run_mode", get_run_mode, METH_NOARGS, "get_run_mode() -> (run_mode, ret)"),
	M("get_soc_name", get_soc_name, METH_NOARGS, "get_soc_name() -> name, or None"),
	M("synchronize_device", synchronize_device, METH_NOARGS, "synchronize_device() -> ret"),
	M("create_context", create_context, METH_VARARGS, "create_context(device_id) -> (context, ret)"),
	M("destroy_context", destroy_context, METH_VARARGS, "destroy_context(context) -> ret"),
	M("set_context", set_context, METH_VARARGS, "set_context(context) -> ret"),
	M("get_context", get_context, METH_NOARGS, "get_context() -> (context, ret)"),
	M("create_stream", create_stream, METH_NOARGS, "create_stream() -> (stream, ret)"),
	M("destroy_stream", destroy_stream, METH_VARARGS, "destroy_stream(stream) -> ret"),
	M("synchronize_stream", synchronize_stream, METH_VARARGS, "synchronize_stream(stream) -> ret"),
	M("create_event", create_event, METH_NOARGS, "create_event() -> (event, ret)"),
	M("destroy_event", destroy_event, METH_VARARGS, "destroy_event(event) -> ret"),
	M("record_event", record_event, METH_VARARGS, "record_event(event, stream) -> ret"),
	M("stream_wait_event", stream_wait_event, METH_VARARGS,
	  "stream_wait_event(stream, event) -> ret"),
	M("synchronize_event", synchronize_event, METH_VARARGS, "synchronize_event(event) -> ret"),
	M("query_event", query_event, METH_VARARGS, "query_event(event) -> (status, ret)"),
	M("event_elapsed_time", event_elapsed_time, METH_VARARGS,
	  "event_elapsed_time(start, end) -> (ms, ret)"),
	M("malloc", malloc_, METH_VARARGS, "malloc(size, policy) -> (dev_ptr, ret)"),
	M("free", free_, METH_VARARGS, "free(dev_ptr) -> ret"),
	M("malloc_host", malloc_host, METH_VARARGS, "malloc_host(size) -> (host_ptr, ret)"),
	M("free_host", free_host, METH_VARARGS, "free_host(host_ptr) -> ret"),
	M("get_mem_info", get_mem_info, METH_VARARGS, "get_mem_info(attr) -> (free, total, ret)"),
	M("pointer_get_attributes", pointer_get_attributes, METH_VARARGS,
	  "pointer_get_attributes(ptr) -> ({'location': {'id', 'type'}, 'pageSize', 'rsv'}, ret)"),
	M("memcpy", memcpy_, METH_VARARGS, "memcpy(dst, dest_max, src, count, kind) -> ret"),
	M("memcpy_async", memcpy_async, METH_VARARGS,
	  "memcpy_async(dst, dest_max, src, count, kind, stream) -> ret"),
	M("memset", memset_, METH_VARARGS, "memset(dev_ptr, max_count, value, count) -> ret"),
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef rt_def = { PyModuleDef_HEAD_INIT, "acl.rt",
				     "Devices, contexts, streams, events and memory.", -1,
				     rt_methods, NULL, NULL, NULL, NULL };

PyObject *pyacl_rt_module(void) { return PyModule_Create(&rt_def); }
