/* pyacl.h: what the files of the `acl` extension module (pyACL's layout:
 * acl, acl.rt, acl.mdl, acl.util, acl.prof) share.
 *
 * pyACL passes every C pointer and handle as a Python int and returns
 * (value, ret) tuples where the C call has an output argument.  The
 * module only converts: every handle and device pointer goes to the C
 * library, which checks it against its live ones, so a stale or made-up
 * int is an ACL error code, not a crash.  Host pointers cannot be checked
 * (as with pyACL on a real device, they are the caller's to keep valid). */
#ifndef DV_PYACL_H
#define DV_PYACL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "acl.h"

/* "O&" converters: an int >= 0 (or None for NULL) to a pointer; an
 * int >= 0 to size_t, uint32_t; anything else raises TypeError or
 * OverflowError, as argument parsing does. */
int pyacl_ptr(PyObject *o, void *out);
int pyacl_size(PyObject *o, void *out);
int pyacl_u32(PyObject *o, void *out);

/* (value, ret) tuples. */
PyObject *pyacl_ptr_ret(void *p, aclError ret);
PyObject *pyacl_int_ret(long long v, aclError ret);

/* A C string as str, NULL as None (or, for the getters whose C failure is
 * "", as ""). */
PyObject *pyacl_str_or_none(const char *s);
PyObject *pyacl_str_or_empty(const char *s);

/* The wrappers most calls need, each defining static PyObject *name(self,
 * args); conv turns the C result into the Python value: PyLong_FromLong
 * for a ret, PyLong_FromSize_t for a size, PyLong_FromVoidPtr for a
 * handle, pyacl_str_or_empty for a name.  Argument errors name the
 * Python function, as PyArg_ParseTuple's "O&:name" does. */

/* conv(call(handle)), the handle (or pointer) an int, or None for NULL */
#define PYACL_HANDLE_FN(name, call, conv)                                       \
	static PyObject *name(PyObject *self, PyObject *args)                   \
	{                                                                       \
		void *h;                                                        \
		if (!PyArg_ParseTuple(args, "O&:" #name, pyacl_ptr, &h))        \
			return NULL;                                            \
		return conv(call(h));                                           \
	}
/* conv(call(handle, size)): a desc and an index, a pointer and a length */
#define PYACL_HANDLE_SIZE_FN(name, call, conv)                                  \
	static PyObject *name(PyObject *self, PyObject *args)                   \
	{                                                                       \
		void *h;                                                        \
		size_t n;                                                       \
		if (!PyArg_ParseTuple(args, "O&O&:" #name, pyacl_ptr, &h,       \
				      pyacl_size, &n))                          \
			return NULL;                                            \
		return conv(call(h, n));                                        \
	}
/* (value, ret) for ret = call(&value), a call without arguments; value
 * starts as init (what pyACL returns beside a failure) */
#define PYACL_OUT_FN(name, type, init, call, tuple)                             \
	static PyObject *name(PyObject *self, PyObject *unused)                 \
	{                                                                       \
		type v = init;                                                  \
		aclError ret = call(&v);                                        \
		return tuple(v, ret);                                           \
	}

/* A method table entry; the cast is the one CPython's own tables use. */
#define PYACL_METHOD(name, fn, flags, doc) { name, (PyCFunction)(void (*)(void))fn, flags, doc }

/* aclsimSetWaitHooks' pair: let go of the GIL while a synchronization
 * waits for a BLOCK callback (which needs the GIL to run). */
void *pyacl_wait_release(void);
void pyacl_wait_reacquire(void *token);

/* The submodules; each returns a new reference or NULL with an error set. */
PyObject *pyacl_rt_module(void);
PyObject *pyacl_mdl_module(void);
PyObject *pyacl_util_module(void);
PyObject *pyacl_prof_module(void);

#endif
