/* prof.c: acl.prof, msprof's profiling calls in pyACL's shapes: the work
 * between start(config) and stop(config) becomes a trace directory. */
#include "pyacl.h"

static PyObject *init(PyObject *self, PyObject *args)
{
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&:init", PyUnicode_FSConverter, &path))
		return NULL;
	const char *p = PyBytes_AS_STRING(path);
	aclError ret = aclprofInit(p, strlen(p));
	Py_DECREF(path);
	return PyLong_FromLong(ret);
}

static PyObject *finalize(PyObject *self, PyObject *unused) { return PyLong_FromLong(aclprofFinalize()); }

/* create_config(device_list, aicore_metrics, aicore_events, data_type_config)
 * -> config (0 on failure); aicore_events is reserved (0) */
static PyObject *create_config(PyObject *self, PyObject *args)
{
	PyObject *list, *events;
	int metrics;
	unsigned long long types;
	if (!PyArg_ParseTuple(args, "OiOK:create_config", &list, &metrics, &events, &types))
		return NULL;
	PyObject *seq = PySequence_Fast(list, "create_config: device_list must be a list");
	if (!seq)
		return NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	uint32_t ids[8];
	if (n > 8) {
		Py_DECREF(seq);
		return PyErr_Format(PyExc_ValueError, "create_config: at most 8 devices");
	}
	for (Py_ssize_t i = 0; i < n; i++)
		if (!pyacl_u32(PySequence_Fast_GET_ITEM(seq, i), &ids[i])) {
			Py_DECREF(seq);
			return NULL;
		}
	Py_DECREF(seq);
	aclprofConfig *c = aclprofCreateConfig(n ? ids : NULL, (uint32_t)n,
					       (aclprofAicoreMetrics)metrics, NULL, types);
	return PyLong_FromVoidPtr(c);
}

PYACL_HANDLE_FN(destroy_config, aclprofDestroyConfig, PyLong_FromLong)
PYACL_HANDLE_FN(start, aclprofStart, PyLong_FromLong)
PYACL_HANDLE_FN(stop, aclprofStop, PyLong_FromLong)

#define M PYACL_METHOD
static PyMethodDef prof_methods[] = {
	M("init", init, METH_VARARGS, "init(result_path) -> ret"),
	M("finalize", finalize, METH_NOARGS, "finalize() -> ret"),
	M("create_config", create_config, METH_VARARGS,
	  "create_config(device_list, aicore_metrics, aicore_events, data_type_config) -> config"),
	M("destroy_config", destroy_config, METH_VARARGS, "destroy_config(config) -> ret"),
	M("start", start, METH_VARARGS, "start(config) -> ret"),
	M("stop", stop, METH_VARARGS, "stop(config) -> ret: writes the trace"),
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef prof_def = { PyModuleDef_HEAD_INIT, "acl.prof",
				       "Profiling: msprof-style traces of the work between start and stop.",
				       -1, prof_methods, NULL, NULL, NULL, NULL };

PyObject *pyacl_prof_module(void) { return PyModule_Create(&prof_def); }
