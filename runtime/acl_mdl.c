/* acl_mdl.c: models: loading an .om (aclmdlLoadFromFile, aclmdlLoadFromMem,
 * aclmdlQuerySize), unloading, and executing with datasets bound to the
 * model's inputs and outputs (aclmdlExecute, aclmdlExecuteAsync). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl_int.h"

/* --- loading ------------------------------------------------------------- */

/* The batch input holds the batch as one uint64 (little endian), as
 * aclmdlSetDynamicBatchSize writes it; a dynamic-dims model's holds one per
 * -1 dimension, as aclmdlSetInputDynamicDims writes them. */
#define BATCH_BYTES 8

unsigned acl_dynamic_values(const struct om_model *m)
{
	return m->ndims ? m->ndims : m->batch ? 1 : 0;
}

void acl_batch_desc(const struct om_model *m, struct om_tensor_desc *d)
{
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", ACL_DYNAMIC_TENSOR_NAME);
	d->dtype = 13; /* ONNX's UINT64 */
	d->format = ACL_FORMAT_ND;
	d->rank = 1;
	d->dims[0] = acl_dynamic_values(m);
	d->size = BATCH_BYTES * (uint64_t)d->dims[0];
}

/* A dynamic-batch model's other programs on the device, beside m->rm. */
static int load_variants(struct acl_model *m, char *err, size_t errlen)
{
	if (!m->om.nvariants)
		return 0;
	m->vrm = calloc(m->om.nvariants, sizeof *m->vrm);
	if (!m->vrm) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t v = 0; v < m->om.nvariants; v++)
		if (rt_model_load_variant(&m->rm, &m->om.variants[v], &m->vrm[v], err, errlen))
			return -1;
	return 0;
}

static void unload_variants(struct acl_model *m)
{
	for (uint32_t v = 0; m->vrm && v < m->om.nvariants; v++)
		rt_model_unload(&m->vrm[v]);
	free(m->vrm);
	m->vrm = NULL;
}

struct acl_model *acl_get_model(const char *fn, uint32_t id)
{
	if (id == 0 || id > acl_state.nmodels || !acl_state.models[id - 1]) {
		acl_fail(ACL_ERROR_INVALID_MODEL_ID, fn, "no model is loaded with id %u", (unsigned)id);
		return NULL;
	}
	return acl_state.models[id - 1];
}

/* Nothing named the SoC (acl.c): the device becomes the SoC the model was
 * compiled for.  Only while nothing on the device depends on the old one:
 * no allocation (addresses and sizes are the old device's), no model, no
 * recorded event (its cycle is the old clock), no profile, no callback
 * waiting (due ones are ordered by that clock).  Streams survive
 * (the runtime keeps them), so the usual order, streams first and then the
 * model, still works; memory allocated before the load does not, and the
 * message says what to do instead. */
static aclError adopt_soc(const char *fn, const char *modelPath, const char *soc)
{
	const char *busy = acl_state.nallocs		? "device memory is allocated"
			   : acl_state.prof.running	? "a profile is running"
			   : acl_report_outstanding() ? "callbacks are waiting to run"
							: NULL;
	for (size_t i = 0; !busy && i < acl_state.nmodels; i++)
		if (acl_state.models[i])
			busy = "another model is loaded";
	for (size_t i = 0; !busy && i < acl_state.events.n; i++)
		if (((struct acl_event *)acl_state.events.v[i])->recorded)
			busy = "an event has been recorded";
	if (busy)
		return acl_fail(ACL_ERROR_RT_SOC_VERSION, fn,
				"%s was compiled for %s, but the device is %s (the default) and %s "
				"on it, so it cannot become %s: load the model first, or choose the "
				"SoC with $DAVINCI_SOC, aclInit's config or aclsimSetSoc",
				modelPath, soc, acl_state.cfg.name, busy, soc);
	struct soc_config cfg;
	char from[600];
	snprintf(from, sizeof from, "the SoC %s was compiled for", modelPath);
	aclError e = acl_load_soc(fn, soc, from, ACL_ERROR_RT_SOC_VERSION, &cfg);
	if (e != ACL_SUCCESS)
		return e;
	char err[1024];
	struct sim_options opt = { .mode = SIM_MODE_FULL };
	if (rt_device_reconfigure(acl_state.dev, &cfg, &opt, err, sizeof err))
		return acl_fail(ACL_ERROR_RT_FAILURE, fn, "%s: %s", soc, err);
	acl_state.cfg = cfg;
	acl_copy_str(acl_state.soc, sizeof acl_state.soc, soc);
	acl_copy_str(acl_state.soc_from, sizeof acl_state.soc_from, from);
	acl_state.soc_is_default = 0; /* chosen now: later models must match */
	return ACL_SUCCESS;
}

/* Load the .om at modelPath (readable, checked by the caller); fn names
 * the API call in messages. */
static aclError load_model(const char *fn, const char *modelPath, uint32_t *modelId)
{
	/* Loading synchronizes; run what is queued first, so that a failure of
	 * that work is reported as such and the load's own run is its copy. */
	aclError e = acl_state.pending ? acl_run_queued(fn) : ACL_SUCCESS;
	if (e != ACL_SUCCESS)
		return e;
	if (acl_grow((void **)&acl_state.models, &acl_state.capmodels, acl_state.nmodels,
		     sizeof *acl_state.models) ||
	    acl_state.nmodels >= UINT32_MAX)
		return acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	struct acl_model *m = calloc(1, sizeof *m); /* not moved: the runtime keeps &m->om */
	if (!m)
		return acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	char err[2048];
	if (om_read(modelPath, &m->om, NULL, err, sizeof err)) {
		free(m);
		return acl_fail(ACL_ERROR_PARSE_MODEL, fn, "%s", err);
	}
	if (strcmp(m->om.soc, acl_state.cfg.name) != 0 && acl_state.soc_is_default)
		e = adopt_soc(fn, modelPath, m->om.soc);
	if (e == ACL_SUCCESS && strcmp(m->om.soc, acl_state.cfg.name) != 0)
		e = acl_fail(ACL_ERROR_RT_SOC_VERSION, fn,
			     "%s was compiled for %s, but the device is %s (SoC from %s): compile it "
			     "with simatc --soc_version=%s, or choose the SoC with aclInit's config, "
			     "$DAVINCI_SOC or aclsimSetSoc", modelPath, m->om.soc, acl_state.cfg.name,
			     acl_state.soc_from, acl_state.cfg.name);
	if (e == ACL_SUCCESS && !(m->done = rt_event_new(acl_state.dev)))
		e = acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS && rt_model_load(acl_state.dev, &m->om, &m->rm, err, sizeof err))
		e = acl_fail(ACL_ERROR_RT_FAILURE, fn, "%s: %s", modelPath, err);
	if (e == ACL_SUCCESS && load_variants(m, err, sizeof err))
		e = acl_fail(ACL_ERROR_RT_FAILURE, fn, "%s: %s", modelPath, err);
	if (e != ACL_SUCCESS) {
		unload_variants(m);
		rt_model_unload(&m->rm);
		rt_event_free(m->done);
		om_free(&m->om);
		free(m);
		return e;
	}
	acl_drained(); /* loading synchronized: the queues are empty */
	acl_state.models[acl_state.nmodels++] = m;
	*modelId = (uint32_t)acl_state.nmodels;
	return ACL_SUCCESS;
}

aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId)
{
	NEED_DEVICE();
	if (!modelPath || !modelId)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s is NULL", !modelPath ? "modelPath" : "modelId");
	FILE *f = fopen(modelPath, "rb");
	if (!f)
		return FAIL(ACL_ERROR_READ_MODEL_FAILURE, "%s: %s", modelPath, strerror(errno));
	fclose(f);
	return load_model(__func__, modelPath, modelId);
}

/* The .om format is read through its file (om_read maps it), so the bytes
 * go to an unlinked temporary file first. */
aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId)
{
	NEED_DEVICE();
	if (!model || !modelSize || !modelId)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s", !model ? "model is NULL"
				: !modelSize ? "modelSize is 0" : "modelId is NULL");
	const char *tmp = getenv("TMPDIR");
	char path[600];
	snprintf(path, sizeof path, "%s/davinci-acl-model-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return FAIL(ACL_ERROR_READ_MODEL_FAILURE, "cannot create a temporary file in %s: %s",
			    tmp && *tmp ? tmp : "/tmp", strerror(errno));
	FILE *f = fdopen(fd, "wb");
	int ok = f && fwrite(model, 1, modelSize, f) == modelSize;
	ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
	aclError e = ok ? load_model(__func__, path, modelId)
			: FAIL(ACL_ERROR_READ_MODEL_FAILURE, "writing %s: %s", path, strerror(errno));
	unlink(path); /* a loaded model keeps its mapping */
	return e;
}

aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize)
{
	NEED_INIT();
	if (!fileName || !workSize || !weightSize)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s is NULL",
			    !fileName ? "fileName" : !workSize ? "workSize" : "weightSize");
	FILE *f = fopen(fileName, "rb");
	if (!f)
		return FAIL(ACL_ERROR_READ_MODEL_FAILURE, "%s: %s", fileName, strerror(errno));
	fclose(f);
	struct om_model om;
	char err[2048];
	if (om_read(fileName, &om, NULL, err, sizeof err))
		return FAIL(ACL_ERROR_PARSE_MODEL, "%s", err);
	*workSize = (size_t)om.workspace_bytes;
	*weightSize = (size_t)om.weights_bytes;
	om_free(&om);
	return ACL_SUCCESS;
}

aclError aclmdlUnload(uint32_t modelId)
{
	NEED_DEVICE();
	struct acl_model *m = acl_get_model(__func__, modelId);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	/* queued executions use its kernels and memory: run them first (the
	 * model is unloaded even if they fail) */
	aclError e = acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS;
	unload_variants(m);
	rt_model_unload(&m->rm);
	om_free(&m->om);
	rt_event_free(m->done);
	if (!acl_state.prof.running || acl_prof_retire(m))
		free(m);
	acl_state.models[modelId - 1] = NULL;
	return e;
}

/* --- execution ----------------------------------------------------------- */

/* The device address of each buffer of ds, checked against the model's
 * descriptors.  addr has room for n entries. */
static aclError bind(const char *fn, const aclmdlDataset *ds, const struct om_tensor_desc *d,
		     uint32_t n, int batch_input, int output, uint64_t *addr)
{
	aclError mismatch = output ? ACL_ERROR_MODEL_OUTPUT_NOT_MATCH
				   : ACL_ERROR_MODEL_INPUT_NOT_MATCH;
	const char *what = output ? "output" : "input";
	aclError e = acl_dataset_ok(fn, ds);
	if (e != ACL_SUCCESS)
		return e;
	if (ds->n != n + (batch_input ? 1 : 0))
		return acl_fail(mismatch, fn, "the model has %u %ss%s, the %s dataset holds %zu "
				"buffers", (unsigned)n + (batch_input ? 1 : 0), what,
				batch_input ? " (the last its batch, " ACL_DYNAMIC_TENSOR_NAME ")" : "",
				what, ds->n);
	for (uint32_t i = 0; i < n; i++) {
		const aclDataBuffer *b = ds->b[i];
		if (!acl_h_has(&acl_state.buffers, b))
			return acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn,
					"%s %u: its data buffer %p has been destroyed", what,
					(unsigned)i, (const void *)b);
		if (b->size < d[i].size)
			return acl_fail(mismatch, fn, "%s %u ('%s'): the buffer holds %zu bytes, the model "
					"needs %llu", what, (unsigned)i, d[i].name, b->size,
					(unsigned long long)d[i].size);
		if (!acl_dev_range(b->data, d[i].size))
			return acl_fail(mismatch, fn, "%s %u ('%s'): %p is not device memory from "
					"aclrtMalloc holding %llu bytes", what, (unsigned)i, d[i].name,
					b->data, (unsigned long long)d[i].size);
		addr[i] = acl_dev_addr(b->data);
	}
	return ACL_SUCCESS;
}

/* The host view of the batch buffer at index of ds (a dynamic model's last
 * input), NULL with the reason recorded. */
static uint8_t *batch_buffer(const char *fn, const struct acl_model *m, const aclmdlDataset *ds,
			     size_t index)
{
	unsigned bytes = BATCH_BYTES * acl_dynamic_values(&m->om);
	if (acl_dataset_ok(fn, ds) != ACL_SUCCESS)
		return NULL;
	if (index != m->om.ninputs) {
		acl_fail(ACL_ERROR_INVALID_PARAM, fn, "index %zu: the model's %s input is %u "
			 "(aclmdlGetInputIndexByName)", index, ACL_DYNAMIC_TENSOR_NAME,
			 (unsigned)m->om.ninputs);
		return NULL;
	}
	if (ds->n <= index) {
		acl_fail(ACL_ERROR_INVALID_PARAM, fn, "the dataset holds %zu buffers, none at index "
			 "%zu (add a buffer of %u bytes for %s)", ds->n, index, bytes,
			 ACL_DYNAMIC_TENSOR_NAME);
		return NULL;
	}
	const aclDataBuffer *b = ds->b[index];
	if (!acl_h_has(&acl_state.buffers, b)) {
		acl_fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, fn, "input %zu: its data buffer %p has "
			 "been destroyed", index, (const void *)b);
		return NULL;
	}
	uint8_t *p = b->size >= bytes && acl_dev_range(b->data, bytes)
			     ? sim_gm_ptr(rt_device_sim(acl_state.dev), acl_dev_addr(b->data), bytes)
			     : NULL;
	if (!p)
		acl_fail(ACL_ERROR_INVALID_PARAM, fn, "input %zu (%s): not %u bytes of device "
			 "memory from aclrtMalloc", index, ACL_DYNAMIC_TENSOR_NAME, bytes);
	return p;
}

aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
				   uint64_t batchSize)
{
	NEED_DEVICE();
	struct acl_model *m = acl_get_model(__func__, modelId);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	int64_t sizes[OM_MAX_VARIANTS + 1];
	unsigned ns = om_batch_sizes(&m->om, sizes);
	if (m->om.ndims)
		return FAIL(ACL_ERROR_INVALID_PARAM, "model %u ('%s') has dynamic dims, not batch "
			    "sizes: aclmdlSetInputDynamicDims", (unsigned)modelId, m->om.name);
	if (!ns)
		return FAIL(ACL_ERROR_INVALID_PARAM, "model %u ('%s') has one batch size (compile it "
			    "with simatc --dynamic_batch_size)", (unsigned)modelId, m->om.name);
	if (batchSize > INT64_MAX || !om_variant(&m->om, (int64_t)batchSize)) {
		char list[1024];
		size_t o = 0;
		for (unsigned k = 0; k < ns && o < sizeof list; k++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%lld", k ? "," : "",
					      (long long)sizes[k]);
		return FAIL(ACL_ERROR_INVALID_PARAM, "batch %llu is not one of model %u's sizes "
			    "(%s)", (unsigned long long)batchSize, (unsigned)modelId, list);
	}
	uint8_t *p = batch_buffer(__func__, m, dataset, index);
	if (!p)
		return ACL_ERROR_INVALID_PARAM;
	/* after the queued work, as a synchronous copy into device memory is */
	aclError e = acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS;
	if (e != ACL_SUCCESS)
		return e;
	for (int k = 0; k < BATCH_BYTES; k++)
		p[k] = (uint8_t)(batchSize >> (8 * k));
	return ACL_SUCCESS;
}

/* A dynamic-dims model's profile whose inputs' shapes, one after another,
 * are d (aclmdlGetInputDynamicDims's gears), or NULL. */
static const struct om_model *profile_of(const struct om_model *om, const aclmdlIODims *d)
{
	for (unsigned k = 0; k <= om->nvariants; k++) {
		const struct om_model *p = om_dims_profile(om, k);
		size_t n = 0;
		int same = 1;
		for (uint32_t i = 0; p && i < p->ninputs && same; i++)
			for (uint32_t r = 0; r < (uint32_t)p->inputs[i].rank && same; r++, n++)
				same = n < d->dimCount && n < ACL_MAX_DIM_CNT &&
				       d->dims[n] == p->inputs[i].dims[r];
		if (p && same && n == d->dimCount)
			return p;
	}
	return NULL;
}

aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
				   const aclmdlIODims *dims)
{
	NEED_DEVICE();
	struct acl_model *m = acl_get_model(__func__, modelId);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	if (!m->om.ndims)
		return FAIL(ACL_ERROR_INVALID_PARAM, "model %u ('%s') has no dynamic dims (compile it "
			    "with simatc --dynamic_dims)", (unsigned)modelId, m->om.name);
	if (!dims)
		return FAIL(ACL_ERROR_INVALID_PARAM, "dims is NULL");
	const struct om_model *p = profile_of(&m->om, dims);
	if (!p) {
		char list[2048];
		size_t o = 0;
		for (unsigned k = 0; k <= m->om.nvariants && o < sizeof list; k++) {
			const struct om_model *q = om_dims_profile(&m->om, k);
			for (uint32_t i = 0; i < q->ninputs && o < sizeof list; i++)
				for (uint32_t r = 0; r < (uint32_t)q->inputs[i].rank && o < sizeof list; r++)
					o += (size_t)snprintf(list + o, sizeof list - o, "%s%lld",
							      r || i ? "," : k ? "; " : "",
							      (long long)q->inputs[i].dims[r]);
		}
		return FAIL(ACL_ERROR_INVALID_PARAM, "dims (%zu values) are not one of model %u's "
			    "gears, its inputs' shapes one after another (%s)", dims->dimCount,
			    (unsigned)modelId, list);
	}
	uint8_t *b = batch_buffer(__func__, m, dataset, index);
	if (!b)
		return ACL_ERROR_INVALID_PARAM;
	aclError e = acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS;
	if (e != ACL_SUCCESS)
		return e;
	for (uint32_t d = 0; d < p->ndims; d++)
		for (int k = 0; k < BATCH_BYTES; k++)
			b[d * BATCH_BYTES + k] = (uint8_t)((uint64_t)p->dims[d] >> (8 * k));
	return ACL_SUCCESS;
}

/* The program an execution of m with input runs: m->rm, or for a
 * dynamic-batch model the one of the batch its batch input holds, for a
 * dynamic-dims model the one of the dims it holds (read when the execution
 * is queued). */
static aclError pick_program(const char *fn, struct acl_model *m, const aclmdlDataset *input,
			     struct rt_model **rm)
{
	*rm = &m->rm;
	if (m->om.ndims) {
		const uint8_t *p = batch_buffer(fn, m, input, m->om.ninputs);
		if (!p)
			return ACL_ERROR_MODEL_INPUT_NOT_MATCH;
		int64_t d[OM_MAX_DYN_DIMS];
		for (uint32_t i = 0; i < m->om.ndims; i++) {
			uint64_t v = 0;
			for (int k = 0; k < BATCH_BYTES; k++)
				v |= (uint64_t)p[i * BATCH_BYTES + k] << (8 * k);
			d[i] = (int64_t)v;
		}
		const struct om_model *q = om_variant_dims(&m->om, d, m->om.ndims);
		for (uint32_t v = 0; q && v < m->om.nvariants; v++)
			if (q == &m->om.variants[v])
				*rm = &m->vrm[v];
		if (q)
			return ACL_SUCCESS;
		return acl_fail(ACL_ERROR_MODEL_INPUT_NOT_MATCH, fn, "%s holds dims that are not one "
				"of the model's profiles: set them with aclmdlSetInputDynamicDims",
				ACL_DYNAMIC_TENSOR_NAME);
	}
	if (!m->om.batch)
		return ACL_SUCCESS;
	const uint8_t *p = batch_buffer(fn, m, input, m->om.ninputs);
	if (!p)
		return ACL_ERROR_MODEL_INPUT_NOT_MATCH;
	uint64_t b = 0;
	for (int k = 0; k < BATCH_BYTES; k++)
		b |= (uint64_t)p[k] << (8 * k);
	if (b == (uint64_t)m->om.batch)
		return ACL_SUCCESS;
	for (uint32_t v = 0; v < m->om.nvariants; v++)
		if ((uint64_t)m->om.variants[v].batch == b) {
			*rm = &m->vrm[v];
			return ACL_SUCCESS;
		}
	return acl_fail(ACL_ERROR_MODEL_INPUT_NOT_MATCH, fn, "%s holds batch %llu, not one of "
			"the model's sizes: set it with aclmdlSetDynamicBatchSize",
			ACL_DYNAMIC_TENSOR_NAME, (unsigned long long)b);
}

static aclError queue_exec(const char *fn, uint32_t id, const aclmdlDataset *input,
			   const aclmdlDataset *output, struct rt_stream *s)
{
	struct acl_model *m = acl_get_model(fn, id);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	struct rt_model *rm = &m->rm;
	aclError e = pick_program(fn, m, input, &rm);
	if (e != ACL_SUCCESS)
		return e;
	const struct om_model *om = rm->om;
	uint64_t *in = calloc(om->ninputs + 2, sizeof *in);
	uint64_t *out = calloc(om->noutputs + 1, sizeof *out);
	char err[1024];
	if (!in || !out)
		e = acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS)
		e = bind(fn, input, om->inputs, om->ninputs, acl_dynamic_values(&m->om) != 0, 0, in);
	if (e == ACL_SUCCESS)
		e = bind(fn, output, om->outputs, om->noutputs, 0, 1, out);
	if (e == ACL_SUCCESS && !m->done_dead && rt_stream_wait_event(s, m->done))
		e = acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS) {
		acl_state.pending = 1;
		if (rt_model_execute_async(rm, s, in, out, err, sizeof err) < 0)
			e = acl_fail(ACL_ERROR_RT_FAILURE, fn, "model %u ('%s'): %s", (unsigned)id,
				     om->name, err);
		else if (rt_event_record(m->done, s))
			e = acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
		else
			m->done_dead = 0;
	}
	free(in);
	free(out);
	return e;
}

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output)
{
	NEED_DEVICE();
	aclError e = queue_exec(__func__, modelId, input, output, rt_default_stream(acl_state.dev));
	return e != ACL_SUCCESS ? e : acl_run_queued(__func__);
}

aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
			    aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s;
	aclError e = acl_get_stream(__func__, stream, &s);
	return e != ACL_SUCCESS ? e : queue_exec(__func__, modelId, input, output, s);
}
