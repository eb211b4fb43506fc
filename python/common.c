/* common.c: what every file of the `acl` module uses to move values across:
 * the "O&" argument converters and the (value, ret) tuples of pyACL's
 * shapes (pyacl.h). */
#include "pyacl.h"

int pyacl_ptr(PyObject *o, void *out)
{
	if (o == Py_None) {
		*(void **)out = NULL;
		return 1;
	}
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "a pointer must be an int, not %.80s",
			     Py_TYPE(o)->tp_name);
		return 0;
	}
	/* unsigned: PyLong_AsVoidPtr would take -1 for the address 0xff..ff */
	unsigned long long v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred())
		return 0;
	if (v > UINTPTR_MAX) {
		PyErr_SetString(PyExc_OverflowError, "pointer too large");
		return 0;
	}
	*(void **)out = (void *)(uintptr_t)v;
	return 1;
}

int pyacl_size(PyObject *o, void *out)
{
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "a size must be an int, not %.80s",
			     Py_TYPE(o)->tp_name);
		return 0;
	}
	size_t n = PyLong_AsSize_t(o);
	if (n == (size_t)-1 && PyErr_Occurred())
		return 0;
	*(size_t *)out = n;
	return 1;
}

int pyacl_u32(PyObject *o, void *out)
{
	size_t n;
	if (!pyacl_size(o, &n))
		return 0;
	if (n > UINT32_MAX) {
		PyErr_SetString(PyExc_OverflowError, "value does not fit in 32 bits");
		return 0;
	}
	*(uint32_t *)out = (uint32_t)n;
	return 1;
}

PyObject *pyacl_ptr_ret(void *p, aclError ret)
{
	PyObject *v = PyLong_FromVoidPtr(p);
	if (!v)
		return NULL;
	return Py_BuildValue("(Ni)", v, (int)ret);
}

PyObject *pyacl_int_ret(long long v, aclError ret) { return Py_BuildValue("(Li)", v, (int)ret); }

PyObject *pyacl_str_or_none(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_FromString(s);
}

PyObject *pyacl_str_or_empty(const char *s) { return PyUnicode_FromString(s ? s : ""); }
