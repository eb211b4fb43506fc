/* util.c: acl.util, moving data between Python objects and C pointers
 * (numpy_to_ptr, ptr_to_numpy, bytes_to_ptr, ptr_to_bytes).
 *
 * numpy is reached through the buffer protocol and numpy.frombuffer, not
 * numpy's C API, so the module builds without numpy's headers and imports
 * without numpy installed (only ptr_to_numpy needs it). */
#include "pyacl.h"

/* The address of a C-contiguous buffer (a numpy array, bytes, bytearray).
 * pyACL hands back a borrowed address: the object must outlive its use. */
static PyObject *buffer_ptr(PyObject *o, int flags)
{
	Py_buffer view;
	if (PyObject_GetBuffer(o, &view, flags) < 0)
		return NULL;
	void *p = view.buf;
	PyBuffer_Release(&view);
	return PyLong_FromVoidPtr(p);
}

static PyObject *numpy_to_ptr(PyObject *self, PyObject *arr)
{
	return buffer_ptr(arr, PyBUF_C_CONTIGUOUS);
}

static PyObject *bytes_to_ptr(PyObject *self, PyObject *b)
{
	if (!PyBytes_Check(b) && !PyByteArray_Check(b))
		return PyErr_Format(PyExc_TypeError, "bytes_to_ptr takes bytes or bytearray, not %.80s",
				    Py_TYPE(b)->tp_name);
	return buffer_ptr(b, PyBUF_SIMPLE);
}

/* Reading a simulated device address from the host would crash (it is
 * not host memory): refuse it, as a ValueError, when the library knows it
 * as device memory (after acl.init). */
static int host_readable(const void *p, const char *fn)
{
	aclrtPtrAttributes at;
	if (p && aclrtPointerGetAttributes(p, &at) == ACL_SUCCESS &&
	    at.location.type == ACL_MEM_LOCATION_TYPE_DEVICE) {
		PyErr_Format(PyExc_ValueError, "%s: %p is device memory: copy it to the host with "
			     "acl.rt.memcpy first", fn, p);
		return 0;
	}
	return 1;
}

static PyObject *ptr_to_bytes(PyObject *self, PyObject *args)
{
	void *p;
	size_t n;
	if (!PyArg_ParseTuple(args, "O&O&:ptr_to_bytes", pyacl_ptr, &p, pyacl_size, &n))
		return NULL;
	if (!p && n)
		return PyErr_Format(PyExc_ValueError, "ptr_to_bytes: NULL pointer");
	if (!host_readable(p, "ptr_to_bytes"))
		return NULL;
	if (n > PY_SSIZE_T_MAX)
		return PyErr_Format(PyExc_OverflowError, "ptr_to_bytes: size too large");
	return PyBytes_FromStringAndSize(p, (Py_ssize_t)n);
}

/* NumPy's type numbers (the NPY_TYPES enum, which pyACL's ptr_to_numpy
 * takes) as numpy.dtype characters, on an LP64 host. */
static const char *npy_type_char(long t)
{
	switch (t) {
	case 0: return "?";
	case 1: return "b";
	case 2: return "B";
	case 3: return "h";
	case 4: return "H";
	case 5: return "i";
	case 6: return "I";
	case 7: return "l";
	case 8: return "L";
	case 9: return "q";
	case 10: return "Q";
	case 11: return "f";
	case 12: return "d";
	case 23: return "e";
	default: return NULL;
	}
}

/* A numpy array over the memory at ptr (not a copy, as in pyACL). */
static PyObject *ptr_to_numpy(PyObject *self, PyObject *args)
{
	void *p;
	PyObject *shape;
	long type;
	if (!PyArg_ParseTuple(args, "O&Ol:ptr_to_numpy", pyacl_ptr, &p, &shape, &type))
		return NULL;
	const char *tc = npy_type_char(type);
	if (!tc)
		return PyErr_Format(PyExc_ValueError, "ptr_to_numpy: unsupported numpy type number %ld",
				    type);
	PyObject *seq = PySequence_Fast(shape, "ptr_to_numpy: shape must be a tuple or list");
	if (!seq)
		return NULL;
	size_t elems = 1;
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
		size_t d;
		if (!pyacl_size(PySequence_Fast_GET_ITEM(seq, i), &d)) {
			Py_DECREF(seq);
			return NULL;
		}
		if (d && elems > PY_SSIZE_T_MAX / d) {
			Py_DECREF(seq);
			return PyErr_Format(PyExc_OverflowError, "ptr_to_numpy: shape too large");
		}
		elems *= d;
	}
	Py_DECREF(seq);
	if (!p && elems)
		return PyErr_Format(PyExc_ValueError, "ptr_to_numpy: NULL pointer");
	if (!host_readable(p, "ptr_to_numpy"))
		return NULL;
	PyObject *np = PyImport_ImportModule("numpy");
	if (!np)
		return NULL;
	PyObject *arr = NULL, *flat = NULL, *dtype = PyObject_CallMethod(np, "dtype", "s", tc);
	PyObject *isz = dtype ? PyObject_GetAttrString(dtype, "itemsize") : NULL;
	size_t itemsize = isz ? PyLong_AsSize_t(isz) : 0;
	if (isz && !PyErr_Occurred() && elems <= PY_SSIZE_T_MAX / itemsize) {
		static char empty;
		PyObject *mv = PyMemoryView_FromMemory(p ? p : &empty, (Py_ssize_t)(elems * itemsize),
						       PyBUF_WRITE);
		if (mv) {
			flat = PyObject_CallMethod(np, "frombuffer", "OO", mv, dtype);
			Py_DECREF(mv);
		}
		if (flat)
			arr = PyObject_CallMethod(flat, "reshape", "O", shape);
	} else if (isz && !PyErr_Occurred()) {
		PyErr_SetString(PyExc_OverflowError, "ptr_to_numpy: shape too large");
	}
	Py_XDECREF(flat);
	Py_XDECREF(isz);
	Py_XDECREF(dtype);
	Py_DECREF(np);
	return arr;
}

/* pyACL's report threads: start_thread(fn, args) -> (thread_id, ret) runs
 * fn(args) on a new thread (a threading.Thread, so that Python knows it)
 * and returns the id subscribe_report takes; stop_thread(thread_id) ->
 * ret joins it (fn has to return: samples clear a flag their loop reads
 * first).  The threads are kept in the module's _threads dict. */
static PyObject *threads_of(PyObject *mod)
{
	PyObject *d = PyObject_GetAttrString(mod, "_threads");
	if (d || !PyErr_ExceptionMatches(PyExc_AttributeError))
		return d;
	PyErr_Clear();
	d = PyDict_New();
	if (d && PyObject_SetAttrString(mod, "_threads", d) < 0)
		Py_CLEAR(d);
	return d;
}

static PyObject *start_thread(PyObject *mod, PyObject *args)
{
	PyObject *fn, *data;
	if (!PyArg_ParseTuple(args, "OO:start_thread", &fn, &data))
		return NULL;
	if (!PyCallable_Check(fn)) {
		PyErr_Format(PyExc_TypeError, "start_thread: fn must be callable, not %.80s",
			     Py_TYPE(fn)->tp_name);
		return NULL;
	}
	PyObject *threads = threads_of(mod), *threading = PyImport_ImportModule("threading");
	PyObject *t = NULL, *ident = NULL, *ret = NULL;
	PyObject *cls = threading ? PyObject_GetAttrString(threading, "Thread") : NULL;
	PyObject *kw = cls ? Py_BuildValue("{s:O,s:(O),s:O}", "target", fn, "args", data,
					   "daemon", Py_True) : NULL;
	PyObject *none = kw ? PyTuple_New(0) : NULL;
	if (threads && none)
		t = PyObject_Call(cls, none, kw);
	Py_XDECREF(none);
	Py_XDECREF(kw);
	Py_XDECREF(cls);
	PyObject *r = t ? PyObject_CallMethod(t, "start", NULL) : NULL;
	if (r)
		ident = PyObject_GetAttrString(t, "ident");
	if (ident && PyDict_SetItem(threads, ident, t) == 0)
		ret = Py_BuildValue("(Oi)", ident, ACL_SUCCESS);
	Py_XDECREF(r);
	Py_XDECREF(ident);
	Py_XDECREF(t);
	Py_XDECREF(threading);
	Py_XDECREF(threads);
	return ret;
}

static PyObject *stop_thread(PyObject *mod, PyObject *args)
{
	PyObject *ident;
	if (!PyArg_ParseTuple(args, "O:stop_thread", &ident))
		return NULL;
	PyObject *threads = threads_of(mod);
	if (!threads)
		return NULL;
	PyObject *t = PyDict_GetItemWithError(threads, ident); /* borrowed */
	if (!t) {
		Py_DECREF(threads);
		return PyErr_Occurred() ? NULL : PyLong_FromLong(ACL_ERROR_INVALID_PARAM);
	}
	Py_INCREF(t);
	PyObject *r = PyDict_DelItem(threads, ident) == 0 ? PyObject_CallMethod(t, "join", NULL)
							  : NULL;
	Py_DECREF(t);
	Py_DECREF(threads);
	if (!r)
		return NULL;
	Py_DECREF(r);
	return PyLong_FromLong(ACL_SUCCESS);
}

static PyMethodDef util_methods[] = {
	{ "start_thread", start_thread, METH_VARARGS,
	  "start_thread(fn, args) -> (thread_id, ret): fn(args) on a new thread" },
	{ "stop_thread", stop_thread, METH_VARARGS, "stop_thread(thread_id) -> ret: joins it" },
	{ "numpy_to_ptr", numpy_to_ptr, METH_O,
	  "numpy_to_ptr(array) -> ptr: the address of a C-contiguous array's data" },
	{ "ptr_to_numpy", ptr_to_numpy, METH_VARARGS,
	  "ptr_to_numpy(ptr, shape, npy_type) -> array viewing the memory at ptr" },
	{ "bytes_to_ptr", bytes_to_ptr, METH_O, "bytes_to_ptr(b) -> ptr: the address of b's data" },
	{ "ptr_to_bytes", ptr_to_bytes, METH_VARARGS,
	  "ptr_to_bytes(ptr, size) -> bytes: a copy of size bytes at ptr" },
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef util_def = { PyModuleDef_HEAD_INIT, "acl.util",
				       "Data between Python objects and C pointers.", -1,
				       util_methods, NULL, NULL, NULL, NULL };

PyObject *pyacl_util_module(void) { return PyModule_Create(&util_def); }
