/* module.c: `import acl`, pyACL's module over libdavinci-acl: the
 * top-level calls (init, finalize, data buffers, errors), the ACL
 * constants, and the submodules rt, mdl, util and prof (registered in
 * sys.modules too, so `from acl import rt` works). */
#include "pyacl.h"

static PyObject *init(PyObject *self, PyObject *args)
{
	PyObject *path = NULL;
	if (!PyArg_ParseTuple(args, "|O&:init", PyUnicode_FSConverter, &path))
		return NULL;
	aclError ret = aclInit(path ? PyBytes_AS_STRING(path) : NULL);
	Py_XDECREF(path);
	return PyLong_FromLong(ret);
}

static PyObject *finalize(PyObject *self, PyObject *unused) { return PyLong_FromLong(aclFinalize()); }

static PyObject *get_soc_name(PyObject *self, PyObject *unused)
{
	return pyacl_str_or_none(aclrtGetSocName());
}

static PyObject *get_recent_err_msg(PyObject *self, PyObject *unused)
{
	return pyacl_str_or_none(aclGetRecentErrMsg());
}

PYACL_HANDLE_SIZE_FN(create_data_buffer, aclCreateDataBuffer, PyLong_FromVoidPtr)
PYACL_HANDLE_FN(destroy_data_buffer, aclDestroyDataBuffer, PyLong_FromLong)
PYACL_HANDLE_FN(get_data_buffer_addr, aclGetDataBufferAddr, PyLong_FromVoidPtr)
PYACL_HANDLE_FN(get_data_buffer_size, aclGetDataBufferSize, PyLong_FromUnsignedLong)
PYACL_HANDLE_FN(get_data_buffer_size_v2, aclGetDataBufferSizeV2, PyLong_FromSize_t)

static PyObject *update_data_buffer(PyObject *self, PyObject *args)
{
	void *b, *p;
	size_t n;
	if (!PyArg_ParseTuple(args, "O&O&O&:update_data_buffer", pyacl_ptr, &b, pyacl_ptr, &p,
			      pyacl_size, &n))
		return NULL;
	return PyLong_FromLong(aclUpdateDataBuffer(b, p, n));
}

static PyObject *data_type_size(PyObject *self, PyObject *args)
{
	int t;
	if (!PyArg_ParseTuple(args, "i:data_type_size", &t))
		return NULL;
	return PyLong_FromSize_t(aclDataTypeSize((aclDataType)t));
}

#define M PYACL_METHOD
static PyMethodDef acl_methods[] = {
	M("init", init, METH_VARARGS, "init([config_path]) -> ret"),
	M("finalize", finalize, METH_NOARGS, "finalize() -> ret"),
	M("get_soc_name", get_soc_name, METH_NOARGS, "get_soc_name() -> name, or None"),
	M("get_recent_err_msg", get_recent_err_msg, METH_NOARGS,
	  "get_recent_err_msg() -> the latest failure's message, or None"),
	M("create_data_buffer", create_data_buffer, METH_VARARGS,
	  "create_data_buffer(ptr, size) -> data_buffer"),
	M("destroy_data_buffer", destroy_data_buffer, METH_VARARGS,
	  "destroy_data_buffer(data_buffer) -> ret"),
	M("update_data_buffer", update_data_buffer, METH_VARARGS,
	  "update_data_buffer(data_buffer, ptr, size) -> ret"),
	M("get_data_buffer_addr", get_data_buffer_addr, METH_VARARGS,
	  "get_data_buffer_addr(data_buffer) -> ptr"),
	M("get_data_buffer_size", get_data_buffer_size, METH_VARARGS,
	  "get_data_buffer_size(data_buffer) -> size (32-bit)"),
	M("get_data_buffer_size_v2", get_data_buffer_size_v2, METH_VARARGS,
	  "get_data_buffer_size_v2(data_buffer) -> size"),
	M("data_type_size", data_type_size, METH_VARARGS, "data_type_size(acl_dtype) -> bytes"),
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef acl_def = { PyModuleDef_HEAD_INIT, "acl",
				      "pyACL-compatible bindings of davinci-sim's ACL runtime.", -1,
				      acl_methods, NULL, NULL, NULL, NULL };

/* The constants acl.h defines, under their ACL names. */
static int add_constants(PyObject *m)
{
	static const struct {
		const char *name;
		long value;
	} k[] = {
#define K(x) { #x, (long)(x) }
		K(ACL_SUCCESS), K(ACL_ERROR_NONE), K(ACL_ERROR_INVALID_PARAM),
		K(ACL_ERROR_UNINITIALIZE), K(ACL_ERROR_REPEAT_INITIALIZE), K(ACL_ERROR_INVALID_FILE),
		K(ACL_ERROR_PARSE_FILE), K(ACL_ERROR_FILE_ATTR_INVALID),
		K(ACL_ERROR_INVALID_MODEL_ID), K(ACL_ERROR_PARSE_MODEL),
		K(ACL_ERROR_READ_MODEL_FAILURE), K(ACL_ERROR_MODEL_INPUT_NOT_MATCH),
		K(ACL_ERROR_MODEL_OUTPUT_NOT_MATCH), K(ACL_ERROR_REPEAT_FINALIZE),
		K(ACL_ERROR_RT_INVALID_DEVICEID), K(ACL_ERROR_RT_CONTEXT_NULL), K(ACL_ERROR_BAD_ALLOC),
		K(ACL_ERROR_API_NOT_SUPPORT), K(ACL_ERROR_INVALID_RESOURCE_HANDLE),
		K(ACL_ERROR_FEATURE_UNSUPPORTED), K(ACL_ERROR_RT_MEMORY_ALLOCATION),
		K(ACL_ERROR_INTERNAL_ERROR), K(ACL_ERROR_FAILURE), K(ACL_ERROR_RT_FAILURE),
		K(ACL_ERROR_RT_EVENT_NOT_COMPLETE), K(ACL_ERROR_RT_SOC_VERSION),
		K(ACL_DT_UNDEFINED), K(ACL_FLOAT), K(ACL_FLOAT16), K(ACL_INT8), K(ACL_INT32),
		K(ACL_UINT8), K(ACL_INT16), K(ACL_UINT16), K(ACL_UINT32), K(ACL_INT64), K(ACL_UINT64),
		K(ACL_DOUBLE), K(ACL_BOOL), K(ACL_STRING), K(ACL_COMPLEX64), K(ACL_COMPLEX128),
		K(ACL_BF16), K(ACL_FORMAT_UNDEFINED), K(ACL_FORMAT_NCHW), K(ACL_FORMAT_NHWC),
		K(ACL_FORMAT_ND), K(ACL_FORMAT_NC1HWC0), K(ACL_FORMAT_FRACTAL_Z),
		K(ACL_FORMAT_FRACTAL_NZ), K(ACL_DEVICE), K(ACL_HOST), K(ACL_MEM_MALLOC_HUGE_FIRST),
		K(ACL_MEM_MALLOC_HUGE_ONLY), K(ACL_MEM_MALLOC_NORMAL_ONLY), K(ACL_MEMCPY_HOST_TO_HOST),
		K(ACL_MEMCPY_HOST_TO_DEVICE), K(ACL_MEMCPY_DEVICE_TO_HOST),
		K(ACL_MEMCPY_DEVICE_TO_DEVICE), K(ACL_EVENT_STATUS_COMPLETE),
		K(ACL_EVENT_STATUS_NOT_READY), K(ACL_EVENT_STATUS_RESERVED),
		K(ACL_DDR_MEM), K(ACL_HBM_MEM), K(ACL_DDR_MEM_HUGE), K(ACL_DDR_MEM_NORMAL),
		K(ACL_HBM_MEM_HUGE), K(ACL_HBM_MEM_NORMAL), K(ACL_DDR_MEM_P2P_HUGE),
		K(ACL_DDR_MEM_P2P_NORMAL), K(ACL_HBM_MEM_P2P_HUGE), K(ACL_HBM_MEM_P2P_NORMAL),
		K(ACL_MEM_LOCATION_TYPE_HOST), K(ACL_MEM_LOCATION_TYPE_DEVICE),
		K(ACL_MEM_LOCATION_TYPE_UNREGISTERED),
		K(ACL_CALLBACK_NO_BLOCK), K(ACL_CALLBACK_BLOCK), K(ACL_ERROR_RT_STREAM_SUBSCRIBE),
		K(ACL_ERROR_RT_THREAD_SUBSCRIBE), K(ACL_ERROR_RT_STREAM_NO_CB_REG),
		K(ACL_ERROR_RT_REPORT_TIMEOUT),
		K(ACL_ERROR_PROF_ALREADY_RUN), K(ACL_ERROR_PROF_NOT_RUN), K(ACL_ERROR_PROFILING_FAILURE),
		K(ACL_PROF_ACL_API), K(ACL_PROF_TASK_TIME), K(ACL_PROF_AICORE_METRICS), K(ACL_PROF_AICPU),
		K(ACL_PROF_L2CACHE), K(ACL_PROF_HCCL_TRACE), K(ACL_PROF_TRAINING_TRACE),
		K(ACL_PROF_MSPROFTX), K(ACL_PROF_RUNTIME_API), K(ACL_AICORE_ARITHMETIC_UTILIZATION),
		K(ACL_AICORE_PIPE_UTILIZATION), K(ACL_AICORE_MEMORY_BANDWIDTH),
		K(ACL_AICORE_L0B_AND_WIDTH), K(ACL_AICORE_RESOURCE_CONFLICT_RATIO),
		K(ACL_AICORE_MEMORY_UB), K(ACL_AICORE_NONE),
		/* NumPy's type numbers, which acl.util.ptr_to_numpy takes */
		{ "NPY_BOOL", 0 }, { "NPY_INT8", 1 }, { "NPY_UINT8", 2 }, { "NPY_INT16", 3 },
		{ "NPY_UINT16", 4 }, { "NPY_INT32", 5 }, { "NPY_UINT32", 6 }, { "NPY_INT64", 7 },
		{ "NPY_UINT64", 8 }, { "NPY_FLOAT32", 11 }, { "NPY_FLOAT64", 12 },
		{ "NPY_FLOAT16", 23 },
#undef K
	};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (PyModule_AddIntConstant(m, k[i].name, k[i].value) < 0)
			return -1;
	/* pyACL spells the batch input's name out ("ascend_mbatch_shape_data") */
	if (PyModule_AddStringConstant(m, "ACL_DYNAMIC_TENSOR_NAME", ACL_DYNAMIC_TENSOR_NAME) < 0 ||
	    PyModule_AddIntConstant(m, "ACL_MAX_BATCH_NUM", ACL_MAX_BATCH_NUM) < 0)
		return -1;
	return 0;
}

/* m.name = sub, and sys.modules["acl.name"] = sub; steals sub. */
static int add_submodule(PyObject *m, const char *name, PyObject *sub)
{
	if (!sub)
		return -1;
	char full[32];
	snprintf(full, sizeof full, "acl.%s", name);
	PyObject *mods = PyImport_GetModuleDict(); /* borrowed */
	if (PyDict_SetItemString(mods, full, sub) < 0 || PyModule_AddObject(m, name, sub) < 0) {
		Py_DECREF(sub);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit_acl(void);
PyMODINIT_FUNC PyInit_acl(void)
{
	PyObject *m = PyModule_Create(&acl_def);
	if (!m)
		return NULL;
	/* a synchronization waiting for a Python BLOCK callback must let go of
	 * the GIL, or the report thread could never run it */
	aclsimSetWaitHooks(pyacl_wait_release, pyacl_wait_reacquire);
	if (add_constants(m) < 0 || add_submodule(m, "rt", pyacl_rt_module()) < 0 ||
	    add_submodule(m, "mdl", pyacl_mdl_module()) < 0 ||
	    add_submodule(m, "util", pyacl_util_module()) < 0 ||
	    add_submodule(m, "prof", pyacl_prof_module()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
