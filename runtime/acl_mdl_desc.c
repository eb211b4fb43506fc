/* acl_mdl_desc.c: model descriptions (aclmdlDesc): what aclmdlGetDesc copies
 * from a loaded model and the getters for its inputs and outputs. */
#include <stdlib.h>
#include <string.h>

#include "acl_int.h"

static int desc_ok(const char *fn, const aclmdlDesc *d)
{
	if (!d)
		acl_fail(ACL_ERROR_INVALID_PARAM, fn, "modelDesc is NULL");
	else if (!acl_h_has(&acl_state.descs, d))
		acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
			 "%p is not a live desc from aclmdlCreateDesc", (const void *)d);
	else
		return 1;
	return 0;
}

aclmdlDesc *aclmdlCreateDesc(void)
{
	aclmdlDesc *d = calloc(1, sizeof *d);
	if (!d || acl_h_add(&acl_state.descs, d)) {
		free(d);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	return d;
}

static void desc_clear(aclmdlDesc *d)
{
	free(d->in);
	free(d->out);
	free(d->gear);
	memset(d, 0, sizeof *d);
}

aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc)
{
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	acl_h_del(&acl_state.descs, modelDesc);
	desc_clear(modelDesc);
	free(modelDesc);
	return ACL_SUCCESS;
}

static struct om_tensor_desc *dup_descs(const struct om_tensor_desc *v, uint32_t n)
{
	struct om_tensor_desc *p = malloc((n ? n : 1) * sizeof *p);
	if (p && n)
		memcpy(p, v, n * sizeof *p);
	return p;
}

aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId)
{
	NEED_DEVICE();
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	struct acl_model *m = acl_get_model(__func__, modelId);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	/* a dynamic-batch or dynamic-dims model has one more input: the batch,
	 * or the dims (acl.h) */
	int64_t sizes[OM_MAX_VARIANTS + 1];
	unsigned nb = om_batch_sizes(&m->om, sizes), dyn = acl_dynamic_values(&m->om);
	uint32_t nin = m->om.ninputs + (dyn ? 1 : 0);
	struct om_tensor_desc *in = malloc((nin ? nin : 1) * sizeof *in);
	if (in && m->om.ninputs)
		memcpy(in, m->om.inputs, m->om.ninputs * sizeof *in);
	if (in && dyn)
		acl_batch_desc(&m->om, &in[nin - 1]);
	/* dynamic dims: each gear's inputs' shapes; a buffer must hold the
	 * largest gear's input (the model's own is the last profile's) */
	unsigned ngear = m->om.ndims ? m->om.nvariants + 1 : 0, gd = 0;
	for (uint32_t i = 0; i < m->om.ninputs && ngear; i++)
		gd += (unsigned)m->om.inputs[i].rank;
	int64_t *gear = ngear ? malloc((size_t)ngear * (gd ? gd : 1) * sizeof *gear) : NULL;
	for (unsigned k = 0; gear && k < ngear; k++) {
		const struct om_model *p = om_dims_profile(&m->om, k);
		size_t n = 0;
		for (uint32_t i = 0; i < p->ninputs && i < m->om.ninputs; i++) {
			for (uint32_t r = 0; r < (uint32_t)p->inputs[i].rank && n < gd; r++)
				gear[(size_t)k * gd + n++] = p->inputs[i].dims[r];
			if (in && p->inputs[i].size > in[i].size)
				in[i].size = p->inputs[i].size;
		}
	}
	struct om_tensor_desc *out = dup_descs(m->om.outputs, m->om.noutputs);
	for (unsigned k = 0; out && k < ngear; k++) {
		const struct om_model *p = om_dims_profile(&m->om, k);
		for (uint32_t i = 0; i < p->noutputs && i < m->om.noutputs; i++)
			if (p->outputs[i].size > out[i].size)
				out[i].size = p->outputs[i].size;
	}
	if (!in || !out || (ngear && !gear)) {
		free(in);
		free(out);
		free(gear);
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	}
	desc_clear(modelDesc);
	modelDesc->in = in;
	modelDesc->out = out;
	modelDesc->nin = nin;
	modelDesc->nout = m->om.noutputs;
	modelDesc->nbatch = nb;
	memcpy(modelDesc->batch, sizes, nb * sizeof *sizes);
	modelDesc->ngear = ngear;
	modelDesc->gear_dims = gd;
	modelDesc->gear = gear;
	return ACL_SUCCESS;
}

aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index,
					size_t *gearCount)
{
	(void)index; /* reserved: -1 in CANN */
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	if (!gearCount)
		return FAIL(ACL_ERROR_INVALID_PARAM, "gearCount is NULL");
	*gearCount = modelDesc->ngear;
	return ACL_SUCCESS;
}

aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims,
				   size_t gearCount)
{
	(void)index; /* reserved: -1 in CANN */
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	if (!dims)
		return FAIL(ACL_ERROR_INVALID_PARAM, "dims is NULL");
	if (!modelDesc->ngear)
		return FAIL(ACL_ERROR_INVALID_PARAM, "the model has no dynamic dims (compile it with "
			    "simatc --dynamic_dims)");
	if (gearCount != modelDesc->ngear)
		return FAIL(ACL_ERROR_INVALID_PARAM, "gearCount %zu: the model has %u gears "
			    "(aclmdlGetInputDynamicGearCount)", gearCount, modelDesc->ngear);
	if (modelDesc->gear_dims > ACL_MAX_DIM_CNT)
		return FAIL(ACL_ERROR_INVALID_PARAM, "the model's inputs have %u dims in all, more "
			    "than ACL_MAX_DIM_CNT", modelDesc->gear_dims);
	for (unsigned k = 0; k < modelDesc->ngear; k++) {
		memset(&dims[k], 0, sizeof dims[k]);
		dims[k].dimCount = modelDesc->gear_dims;
		memcpy(dims[k].dims, &modelDesc->gear[(size_t)k * modelDesc->gear_dims],
		       modelDesc->gear_dims * sizeof *dims[k].dims);
	}
	return ACL_SUCCESS;
}

aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch)
{
	if (!desc_ok(__func__, modelDesc))
		return modelDesc ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	if (!batch)
		return FAIL(ACL_ERROR_INVALID_PARAM, "batch is NULL");
	memset(batch, 0, sizeof *batch);
	batch->batchCount = modelDesc->nbatch;
	for (unsigned k = 0; k < modelDesc->nbatch; k++)
		batch->batch[k] = (uint64_t)modelDesc->batch[k];
	return ACL_SUCCESS;
}

/* Input (or output) index of desc d, or NULL with the reason recorded. */
static const struct om_tensor_desc *io(const char *fn, const aclmdlDesc *d, size_t index,
				       int output)
{
	if (!desc_ok(fn, d))
		return NULL;
	uint32_t n = output ? d->nout : d->nin;
	if (index >= n) {
		acl_fail(ACL_ERROR_INVALID_PARAM, fn, "%s %zu does not exist: the desc has %u %ss%s",
			 output ? "output" : "input", index, (unsigned)n, output ? "output" : "input",
			 d->nin + d->nout ? "" : " (aclmdlGetDesc has not filled it)");
		return NULL;
	}
	return output ? &d->out[index] : &d->in[index];
}

size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc)
{
	return desc_ok(__func__, modelDesc) ? modelDesc->nin : 0;
}

size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc)
{
	return desc_ok(__func__, modelDesc) ? modelDesc->nout : 0;
}

size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? (size_t)t->size : 0;
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? (size_t)t->size : 0;
}

static aclError get_dims(const char *fn, const aclmdlDesc *d, size_t index, int output,
			 aclmdlIODims *dims)
{
	const struct om_tensor_desc *t = io(fn, d, index, output);
	if (!t)
		return d && !acl_h_has(&acl_state.descs, d) ? ACL_ERROR_INVALID_RESOURCE_HANDLE
						: ACL_ERROR_INVALID_PARAM;
	if (!dims)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "dims is NULL");
	memset(dims, 0, sizeof *dims);
	acl_copy_str(dims->name, sizeof dims->name, t->name);
	dims->dimCount = (size_t)t->rank;
	for (int i = 0; i < t->rank; i++)
		dims->dims[i] = t->dims[i];
	return ACL_SUCCESS;
}

aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)
{
	return get_dims(__func__, modelDesc, index, 0, dims);
}

aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)
{
	return get_dims(__func__, modelDesc, index, 1, dims);
}

/* Shapes are static here, so the current output dims are the model's. */
aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)
{
	return get_dims(__func__, modelDesc, index, 1, dims);
}

const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? t->name : "";
}

const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? t->name : "";
}

static aclError index_by_name(const char *fn, const aclmdlDesc *d, const char *name,
			      size_t *index, int output)
{
	if (!desc_ok(fn, d))
		return d ? ACL_ERROR_INVALID_RESOURCE_HANDLE : ACL_ERROR_INVALID_PARAM;
	if (!name || !index)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL", !name ? "name" : "index");
	uint32_t n = output ? d->nout : d->nin;
	const struct om_tensor_desc *v = output ? d->out : d->in;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0) {
			*index = i;
			return ACL_SUCCESS;
		}
	return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "the model has no %s named '%s'",
			output ? "output" : "input", name);
}

aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index)
{
	return index_by_name(__func__, modelDesc, name, index, 0);
}

aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name,
				    size_t *index)
{
	return index_by_name(__func__, modelDesc, name, index, 1);
}

/* ONNX TensorProto.DataType (what .om descriptors hold) to ACL's numbers. */
static aclDataType acl_dtype(int32_t onnx)
{
	switch (onnx) {
	case 1: return ACL_FLOAT;
	case 2: return ACL_UINT8;
	case 3: return ACL_INT8;
	case 4: return ACL_UINT16;
	case 5: return ACL_INT16;
	case 6: return ACL_INT32;
	case 7: return ACL_INT64;
	case 8: return ACL_STRING;
	case 9: return ACL_BOOL;
	case 10: return ACL_FLOAT16;
	case 11: return ACL_DOUBLE;
	case 12: return ACL_UINT32;
	case 13: return ACL_UINT64;
	case 14: return ACL_COMPLEX64;
	case 15: return ACL_COMPLEX128;
	case 16: return ACL_BF16;
	default: return ACL_DT_UNDEFINED;
	}
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? acl_dtype(t->dtype) : ACL_DT_UNDEFINED;
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? acl_dtype(t->dtype) : ACL_DT_UNDEFINED;
}

/* .om formats are ACL's aclFormat numbers already. */
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 0);
	return t ? (aclFormat)t->format : ACL_FORMAT_UNDEFINED;
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index)
{
	const struct om_tensor_desc *t = io(__func__, modelDesc, index, 1);
	return t ? (aclFormat)t->format : ACL_FORMAT_UNDEFINED;
}
