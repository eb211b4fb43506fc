/* mdl.c: acl.mdl, models, their descriptions and datasets, in pyACL's
 * shapes.  The getters that return a bare value in C (sizes, counts,
 * names) return it bare here too; their failures are 0, "" or None and a
 * message for acl.get_recent_err_msg(), as in C. */
#include "pyacl.h"

PYACL_HANDLE_FN(destroy_desc, aclmdlDestroyDesc, PyLong_FromLong)
PYACL_HANDLE_FN(destroy_dataset, aclmdlDestroyDataset, PyLong_FromLong)
PYACL_HANDLE_FN(get_num_inputs, aclmdlGetNumInputs, PyLong_FromSize_t)
PYACL_HANDLE_FN(get_num_outputs, aclmdlGetNumOutputs, PyLong_FromSize_t)
PYACL_HANDLE_FN(get_dataset_num_buffers, aclmdlGetDatasetNumBuffers, PyLong_FromSize_t)
PYACL_HANDLE_SIZE_FN(get_input_size_by_index, aclmdlGetInputSizeByIndex, PyLong_FromSize_t)
PYACL_HANDLE_SIZE_FN(get_output_size_by_index, aclmdlGetOutputSizeByIndex, PyLong_FromSize_t)
PYACL_HANDLE_SIZE_FN(get_input_data_type, aclmdlGetInputDataType, PyLong_FromLong)
PYACL_HANDLE_SIZE_FN(get_output_data_type, aclmdlGetOutputDataType, PyLong_FromLong)
PYACL_HANDLE_SIZE_FN(get_input_format, aclmdlGetInputFormat, PyLong_FromLong)
PYACL_HANDLE_SIZE_FN(get_output_format, aclmdlGetOutputFormat, PyLong_FromLong)
PYACL_HANDLE_SIZE_FN(get_input_name_by_index, aclmdlGetInputNameByIndex, pyacl_str_or_empty)
PYACL_HANDLE_SIZE_FN(get_output_name_by_index, aclmdlGetOutputNameByIndex, pyacl_str_or_empty)
PYACL_HANDLE_SIZE_FN(get_dataset_buffer, aclmdlGetDatasetBuffer, PyLong_FromVoidPtr)

static PyObject *load_from_file(PyObject *self, PyObject *args)
{
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&:load_from_file", PyUnicode_FSConverter, &path))
		return NULL;
	uint32_t id = 0;
	aclError ret = aclmdlLoadFromFile(PyBytes_AS_STRING(path), &id);
	Py_DECREF(path);
	return pyacl_int_ret(id, ret);
}

static PyObject *query_size(PyObject *self, PyObject *args)
{
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&:query_size", PyUnicode_FSConverter, &path))
		return NULL;
	size_t work = 0, weight = 0;
	aclError ret = aclmdlQuerySize(PyBytes_AS_STRING(path), &work, &weight);
	Py_DECREF(path);
	return Py_BuildValue("(nni)", (Py_ssize_t)work, (Py_ssize_t)weight, (int)ret);
}

static PyObject *load_from_mem(PyObject *self, PyObject *args)
{
	void *p;
	size_t n;
	if (!PyArg_ParseTuple(args, "O&O&:load_from_mem", pyacl_ptr, &p, pyacl_size, &n))
		return NULL;
	uint32_t id = 0;
	aclError ret = aclmdlLoadFromMem(p, n, &id);
	return pyacl_int_ret(id, ret);
}

static PyObject *unload(PyObject *self, PyObject *args)
{
	uint32_t id;
	if (!PyArg_ParseTuple(args, "O&:unload", pyacl_u32, &id))
		return NULL;
	return PyLong_FromLong(aclmdlUnload(id));
}

static PyObject *create_desc(PyObject *self, PyObject *unused)
{
	return PyLong_FromVoidPtr(aclmdlCreateDesc());
}

static PyObject *get_desc(PyObject *self, PyObject *args)
{
	void *d;
	uint32_t id;
	if (!PyArg_ParseTuple(args, "O&O&:get_desc", pyacl_ptr, &d, pyacl_u32, &id))
		return NULL;
	return PyLong_FromLong(aclmdlGetDesc(d, id));
}

/* ({"name": str, "dimCount": n, "dims": [..]}, ret), pyACL's aclmdlIODims */
static PyObject *dims_ret(const aclmdlIODims *d, aclError ret)
{
	size_t n = ret == ACL_SUCCESS ? d->dimCount : 0;
	PyObject *list = PyList_New((Py_ssize_t)n);
	if (!list)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		PyObject *v = PyLong_FromLongLong(d->dims[k]);
		if (!v) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)k, v);
	}
	PyObject *dict = Py_BuildValue("{s:s,s:n,s:N}", "name", ret == ACL_SUCCESS ? d->name : "",
				       "dimCount", (Py_ssize_t)n, "dims", list);
	if (!dict)
		return NULL;
	return Py_BuildValue("(Ni)", dict, (int)ret);
}

/* output: 0 input dims, 1 output dims, 2 current output dims */
static PyObject *get_dims(PyObject *args, int output)
{
	void *desc;
	size_t i;
	if (!PyArg_ParseTuple(args, "O&O&", pyacl_ptr, &desc, pyacl_size, &i))
		return NULL;
	aclmdlIODims d;
	memset(&d, 0, sizeof d);
	aclError ret = output == 2 ? aclmdlGetCurOutputDims(desc, i, &d)
		       : output   ? aclmdlGetOutputDims(desc, i, &d)
				  : aclmdlGetInputDims(desc, i, &d);
	return dims_ret(&d, ret);
}

static PyObject *get_input_dims(PyObject *self, PyObject *args) { return get_dims(args, 0); }
static PyObject *get_output_dims(PyObject *self, PyObject *args) { return get_dims(args, 1); }
static PyObject *get_cur_output_dims(PyObject *self, PyObject *args) { return get_dims(args, 2); }

static PyObject *index_by_name(PyObject *args, int output)
{
	void *desc;
	const char *name;
	if (!PyArg_ParseTuple(args, "O&s", pyacl_ptr, &desc, &name))
		return NULL;
	size_t i = 0;
	aclError ret = output ? aclmdlGetOutputIndexByName(desc, name, &i)
			      : aclmdlGetInputIndexByName(desc, name, &i);
	return pyacl_int_ret((long long)i, ret);
}

static PyObject *get_input_index_by_name(PyObject *self, PyObject *args)
{
	return index_by_name(args, 0);
}

static PyObject *get_output_index_by_name(PyObject *self, PyObject *args)
{
	return index_by_name(args, 1);
}

static PyObject *create_dataset(PyObject *self, PyObject *unused)
{
	return PyLong_FromVoidPtr(aclmdlCreateDataset());
}

/* (dataset, ret): pyACL hands the dataset back */
static PyObject *add_dataset_buffer(PyObject *self, PyObject *args)
{
	void *ds, *b;
	if (!PyArg_ParseTuple(args, "O&O&:add_dataset_buffer", pyacl_ptr, &ds, pyacl_ptr, &b))
		return NULL;
	aclError ret = aclmdlAddDatasetBuffer(ds, b);
	return pyacl_ptr_ret(ds, ret);
}

static PyObject *execute(PyObject *self, PyObject *args)
{
	uint32_t id;
	void *in, *out;
	if (!PyArg_ParseTuple(args, "O&O&O&:execute", pyacl_u32, &id, pyacl_ptr, &in, pyacl_ptr,
			      &out))
		return NULL;
	return PyLong_FromLong(aclmdlExecute(id, in, out));
}

static PyObject *execute_async(PyObject *self, PyObject *args)
{
	uint32_t id;
	void *in, *out, *stream;
	if (!PyArg_ParseTuple(args, "O&O&O&O&:execute_async", pyacl_u32, &id, pyacl_ptr, &in,
			      pyacl_ptr, &out, pyacl_ptr, &stream))
		return NULL;
	return PyLong_FromLong(aclmdlExecuteAsync(id, in, out, stream));
}

/* ({"batchCount": n, "batch": [..]}, ret), pyACL's aclmdlBatch */
static PyObject *get_dynamic_batch(PyObject *self, PyObject *args)
{
	void *desc;
	if (!PyArg_ParseTuple(args, "O&:get_dynamic_batch", pyacl_ptr, &desc))
		return NULL;
	aclmdlBatch b;
	memset(&b, 0, sizeof b);
	aclError ret = aclmdlGetDynamicBatch(desc, &b);
	size_t n = ret == ACL_SUCCESS ? b.batchCount : 0;
	PyObject *list = PyList_New((Py_ssize_t)n);
	if (!list)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		PyObject *v = PyLong_FromUnsignedLongLong(b.batch[k]);
		if (!v) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)k, v);
	}
	PyObject *dict = Py_BuildValue("{s:n,s:N}", "batchCount", (Py_ssize_t)n, "batch", list);
	if (!dict)
		return NULL;
	return Py_BuildValue("(Ni)", dict, (int)ret);
}

static PyObject *set_dynamic_batch_size(PyObject *self, PyObject *args)
{
	uint32_t id;
	void *ds;
	size_t index;
	unsigned long long batch;
	if (!PyArg_ParseTuple(args, "O&O&O&K:set_dynamic_batch_size", pyacl_u32, &id, pyacl_ptr,
			      &ds, pyacl_size, &index, &batch))
		return NULL;
	return PyLong_FromLong(aclmdlSetDynamicBatchSize(id, ds, index, batch));
}

/* pyACL passes index -1 (reserved) to the gear getters: any int. */
static int any_index(PyObject *o, void *out)
{
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "an index must be an int, not %.80s",
			     Py_TYPE(o)->tp_name);
		return 0;
	}
	long long v = PyLong_AsLongLong(o);
	if (v == -1 && PyErr_Occurred())
		return 0;
	*(size_t *)out = (size_t)v;
	return 1;
}

/* (gear_count, ret) */
static PyObject *get_input_dynamic_gear_count(PyObject *self, PyObject *args)
{
	void *desc;
	size_t index, n = 0;
	if (!PyArg_ParseTuple(args, "O&O&:get_input_dynamic_gear_count", pyacl_ptr, &desc,
			      any_index, &index))
		return NULL;
	aclError ret = aclmdlGetInputDynamicGearCount(desc, index, &n);
	return Py_BuildValue("(ni)", (Py_ssize_t)n, (int)ret);
}

/* ([{"name", "dimCount", "dims"}, ...], ret): one aclmdlIODims per gear */
static PyObject *get_input_dynamic_dims(PyObject *self, PyObject *args)
{
	void *desc;
	size_t index, n;
	if (!PyArg_ParseTuple(args, "O&O&O&:get_input_dynamic_dims", pyacl_ptr, &desc, any_index,
			      &index, pyacl_size, &n))
		return NULL;
	if (n > 100) { /* ATC's limit on --dynamic_dims's profiles */
		PyErr_Format(PyExc_ValueError, "gear_count %zu: at most 100", n);
		return NULL;
	}
	aclmdlIODims *d = calloc(n ? n : 1, sizeof *d);
	if (!d)
		return PyErr_NoMemory();
	aclError ret = aclmdlGetInputDynamicDims(desc, index, d, n);
	size_t got = ret == ACL_SUCCESS ? n : 0;
	PyObject *list = PyList_New((Py_ssize_t)got);
	for (size_t k = 0; list && k < got; k++) {
		PyObject *t = dims_ret(&d[k], ret); /* (dict, ret) */
		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyObject *dict = PyTuple_GET_ITEM(t, 0);
		Py_INCREF(dict);
		Py_DECREF(t);
		PyList_SET_ITEM(list, (Py_ssize_t)k, dict);
	}
	free(d);
	if (!list)
		return NULL;
	return Py_BuildValue("(Ni)", list, (int)ret);
}

/* set_input_dynamic_dims(model_id, dataset, index, {"dimCount", "dims"}) -> ret */
static PyObject *set_input_dynamic_dims(PyObject *self, PyObject *args)
{
	uint32_t id;
	void *ds;
	size_t index;
	PyObject *dict;
	if (!PyArg_ParseTuple(args, "O&O&O&O!:set_input_dynamic_dims", pyacl_u32, &id, pyacl_ptr,
			      &ds, pyacl_size, &index, &PyDict_Type, &dict))
		return NULL;
	PyObject *list = PyDict_GetItemString(dict, "dims");
	if (!list || !PyList_Check(list) || PyList_GET_SIZE(list) > ACL_MAX_DIM_CNT) {
		PyErr_Format(PyExc_ValueError, "dims: a dict with 'dims', a list of at most %d ints",
			     ACL_MAX_DIM_CNT);
		return NULL;
	}
	aclmdlIODims d;
	memset(&d, 0, sizeof d);
	d.dimCount = (size_t)PyList_GET_SIZE(list);
	for (size_t k = 0; k < d.dimCount; k++) {
		d.dims[k] = PyLong_AsLongLong(PyList_GET_ITEM(list, (Py_ssize_t)k));
		if (d.dims[k] == -1 && PyErr_Occurred())
			return NULL;
	}
	return PyLong_FromLong(aclmdlSetInputDynamicDims(id, ds, index, &d));
}

#define M PYACL_METHOD
static PyMethodDef mdl_methods[] = {
	M("get_input_dynamic_gear_count", get_input_dynamic_gear_count, METH_VARARGS,
	  "get_input_dynamic_gear_count(desc, index) -> (gear_count, ret)"),
	M("get_input_dynamic_dims", get_input_dynamic_dims, METH_VARARGS,
	  "get_input_dynamic_dims(desc, index, gear_count) -> ([{'name', 'dimCount', 'dims'}], "
	  "ret)"),
	M("set_input_dynamic_dims", set_input_dynamic_dims, METH_VARARGS,
	  "set_input_dynamic_dims(model_id, dataset, index, {'dimCount', 'dims'}) -> ret"),
	M("get_dynamic_batch", get_dynamic_batch, METH_VARARGS,
	  "get_dynamic_batch(desc) -> ({'batchCount', 'batch'}, ret)"),
	M("set_dynamic_batch_size", set_dynamic_batch_size, METH_VARARGS,
	  "set_dynamic_batch_size(model_id, dataset, index, batch_size) -> ret"),
	M("load_from_file", load_from_file, METH_VARARGS, "load_from_file(path) -> (model_id, ret)"),
	M("load_from_mem", load_from_mem, METH_VARARGS,
	  "load_from_mem(model_ptr, model_size) -> (model_id, ret)"),
	M("query_size", query_size, METH_VARARGS, "query_size(path) -> (work_size, weight_size, ret)"),
	M("unload", unload, METH_VARARGS, "unload(model_id) -> ret"),
	M("create_desc", create_desc, METH_NOARGS, "create_desc() -> desc"),
	M("destroy_desc", destroy_desc, METH_VARARGS, "destroy_desc(desc) -> ret"),
	M("get_desc", get_desc, METH_VARARGS, "get_desc(desc, model_id) -> ret"),
	M("get_num_inputs", get_num_inputs, METH_VARARGS, "get_num_inputs(desc) -> n"),
	M("get_num_outputs", get_num_outputs, METH_VARARGS, "get_num_outputs(desc) -> n"),
	M("get_input_size_by_index", get_input_size_by_index, METH_VARARGS,
	  "get_input_size_by_index(desc, index) -> bytes"),
	M("get_output_size_by_index", get_output_size_by_index, METH_VARARGS,
	  "get_output_size_by_index(desc, index) -> bytes"),
	M("get_input_dims", get_input_dims, METH_VARARGS,
	  "get_input_dims(desc, index) -> ({'name', 'dimCount', 'dims'}, ret)"),
	M("get_output_dims", get_output_dims, METH_VARARGS,
	  "get_output_dims(desc, index) -> ({'name', 'dimCount', 'dims'}, ret)"),
	M("get_cur_output_dims", get_cur_output_dims, METH_VARARGS,
	  "get_cur_output_dims(desc, index) -> ({'name', 'dimCount', 'dims'}, ret)"),
	M("get_input_name_by_index", get_input_name_by_index, METH_VARARGS,
	  "get_input_name_by_index(desc, index) -> name"),
	M("get_output_name_by_index", get_output_name_by_index, METH_VARARGS,
	  "get_output_name_by_index(desc, index) -> name"),
	M("get_input_index_by_name", get_input_index_by_name, METH_VARARGS,
	  "get_input_index_by_name(desc, name) -> (index, ret)"),
	M("get_output_index_by_name", get_output_index_by_name, METH_VARARGS,
	  "get_output_index_by_name(desc, name) -> (index, ret)"),
	M("get_input_data_type", get_input_data_type, METH_VARARGS,
	  "get_input_data_type(desc, index) -> ACL data type"),
	M("get_output_data_type", get_output_data_type, METH_VARARGS,
	  "get_output_data_type(desc, index) -> ACL data type"),
	M("get_input_format", get_input_format, METH_VARARGS, "get_input_format(desc, index) -> format"),
	M("get_output_format", get_output_format, METH_VARARGS,
	  "get_output_format(desc, index) -> format"),
	M("create_dataset", create_dataset, METH_NOARGS, "create_dataset() -> dataset"),
	M("destroy_dataset", destroy_dataset, METH_VARARGS, "destroy_dataset(dataset) -> ret"),
	M("add_dataset_buffer", add_dataset_buffer, METH_VARARGS,
	  "add_dataset_buffer(dataset, data_buffer) -> (dataset, ret)"),
	M("get_dataset_num_buffers", get_dataset_num_buffers, METH_VARARGS,
	  "get_dataset_num_buffers(dataset) -> n"),
	M("get_dataset_buffer", get_dataset_buffer, METH_VARARGS,
	  "get_dataset_buffer(dataset, index) -> data_buffer"),
	M("execute", execute, METH_VARARGS, "execute(model_id, input, output) -> ret"),
	M("execute_async", execute_async, METH_VARARGS,
	  "execute_async(model_id, input, output, stream) -> ret"),
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef mdl_def = { PyModuleDef_HEAD_INIT, "acl.mdl",
				      "Models, their descriptions and datasets.", -1, mdl_methods,
				      NULL, NULL, NULL, NULL };

PyObject *pyacl_mdl_module(void) { return PyModule_Create(&mdl_def); }
