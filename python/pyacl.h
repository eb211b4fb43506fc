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

/* The submodules; each returns a new reference or NULL with an error set. */
PyObject *pyacl_rt_module(void);
PyObject *pyacl_mdl_module(void);
PyObject *pyacl_util_module(void);
PyObject *pyacl_prof_module(void);

#endif
