/* acl_dataset.c: datasets (aclmdlDataset) and the data buffers they hold
 * (aclDataBuffer), and aclDataTypeSize. */
#include <stdint.h>
#include <stdlib.h>

#include "acl_int.h"

aclError acl_dataset_ok(const char *fn, const aclmdlDataset *ds)
{
	if (!ds)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "dataset is NULL");
	if (!acl_h_has(&acl_state.datasets, ds))
		return acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
				"%p is not a live dataset from aclmdlCreateDataset", (const void *)ds);
	return ACL_SUCCESS;
}

static aclError buffer_ok(const char *fn, const aclDataBuffer *b)
{
	if (!b)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "dataBuffer is NULL");
	if (!acl_h_has(&acl_state.buffers, b))
		return acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
				"%p is not a live data buffer from aclCreateDataBuffer", (const void *)b);
	return ACL_SUCCESS;
}

aclmdlDataset *aclmdlCreateDataset(void)
{
	aclmdlDataset *ds = calloc(1, sizeof *ds);
	if (!ds || acl_h_add(&acl_state.datasets, ds)) {
		free(ds);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	return ds;
}

aclError aclmdlDestroyDataset(const aclmdlDataset *dataset)
{
	aclError e = acl_dataset_ok(__func__, dataset);
	if (e != ACL_SUCCESS)
		return e;
	acl_h_del(&acl_state.datasets, dataset);
	aclmdlDataset *ds = (aclmdlDataset *)(uintptr_t)dataset; /* ours: created non-const */
	free(ds->b);
	free(ds);
	return ACL_SUCCESS;
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer)
{
	aclError e = acl_dataset_ok(__func__, dataset);
	if (e == ACL_SUCCESS)
		e = buffer_ok(__func__, dataBuffer);
	if (e != ACL_SUCCESS)
		return e;
	if (acl_grow((void **)&dataset->b, &dataset->cap, dataset->n, sizeof *dataset->b))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	dataset->b[dataset->n++] = dataBuffer;
	return ACL_SUCCESS;
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset)
{
	return acl_dataset_ok(__func__, dataset) == ACL_SUCCESS ? dataset->n : 0;
}

aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index)
{
	if (acl_dataset_ok(__func__, dataset) != ACL_SUCCESS)
		return NULL;
	if (index >= dataset->n) {
		FAIL(ACL_ERROR_INVALID_PARAM, "index %zu: the dataset holds %zu buffers", index,
		     dataset->n);
		return NULL;
	}
	return dataset->b[index];
}

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
	aclDataBuffer *b = calloc(1, sizeof *b);
	if (!b || acl_h_add(&acl_state.buffers, b)) {
		free(b);
		FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
		return NULL;
	}
	b->data = data;
	b->size = size;
	return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
	aclError e = buffer_ok(__func__, dataBuffer);
	if (e != ACL_SUCCESS)
		return e;
	acl_h_del(&acl_state.buffers, dataBuffer);
	free((void *)(uintptr_t)dataBuffer); /* ours: created non-const */
	return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
	aclError e = buffer_ok(__func__, dataBuffer);
	if (e != ACL_SUCCESS)
		return e;
	dataBuffer->data = data;
	dataBuffer->size = size;
	return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
	return buffer_ok(__func__, dataBuffer) == ACL_SUCCESS ? dataBuffer->data : NULL;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
	return buffer_ok(__func__, dataBuffer) == ACL_SUCCESS ? dataBuffer->size : 0;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
	size_t n = aclGetDataBufferSizeV2(dataBuffer);
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

size_t aclDataTypeSize(aclDataType dataType)
{
	switch (dataType) {
	case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
	case ACL_FLOAT16: case ACL_INT16: case ACL_UINT16: case ACL_BF16: return 2;
	case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
	case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
	case ACL_COMPLEX128: return 16;
	default: return 0;
	}
}
