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
	if (e != ACL_SUCCESS) {
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
		     uint32_t n, int output, uint64_t *addr)
{
	aclError mismatch = output ? ACL_ERROR_MODEL_OUTPUT_NOT_MATCH
				   : ACL_ERROR_MODEL_INPUT_NOT_MATCH;
	const char *what = output ? "output" : "input";
	aclError e = acl_dataset_ok(fn, ds);
	if (e != ACL_SUCCESS)
		return e;
	if (ds->n != n)
		return acl_fail(mismatch, fn, "the model has %u %ss, the %s dataset holds %zu buffers",
				(unsigned)n, what, what, ds->n);
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

static aclError queue_exec(const char *fn, uint32_t id, const aclmdlDataset *input,
			   const aclmdlDataset *output, struct rt_stream *s)
{
	struct acl_model *m = acl_get_model(fn, id);
	if (!m)
		return ACL_ERROR_INVALID_MODEL_ID;
	const struct om_model *om = &m->om;
	uint64_t *in = calloc(om->ninputs + 1, sizeof *in);
	uint64_t *out = calloc(om->noutputs + 1, sizeof *out);
	aclError e = ACL_SUCCESS;
	char err[1024];
	if (!in || !out)
		e = acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS)
		e = bind(fn, input, om->inputs, om->ninputs, 0, in);
	if (e == ACL_SUCCESS)
		e = bind(fn, output, om->outputs, om->noutputs, 1, out);
	if (e == ACL_SUCCESS && !m->done_dead && rt_stream_wait_event(s, m->done))
		e = acl_fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
	if (e == ACL_SUCCESS) {
		acl_state.pending = 1;
		if (rt_model_execute_async(&m->rm, s, in, out, err, sizeof err) < 0)
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
