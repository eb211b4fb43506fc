/* session.c: a benchmark run of one model over loops and streams (see
 * rt_session_run in runtime.h): what simrun and the validation scripts do,
 * callable from C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tensor_io.h"

struct lane { /* one stream's model instance and I/O buffers */
	struct rt_stream *s;
	struct rt_model m;
	uint64_t *in, *out;
};

/* set < 0: the only set, not named in messages */
static int check_inputs(const struct om_model *om, const struct om_tensor *t, int set,
			char *err, size_t errlen)
{
	for (unsigned i = 0; i < om->ninputs; i++) {
		const struct om_tensor_desc *d = &om->inputs[i];
		int ok = t[i].dtype == d->dtype && t[i].rank == d->rank && t[i].nbytes == d->size;
		for (int k = 0; ok && k < d->rank; k++)
			ok = t[i].dims[k] == d->dims[k];
		if (!ok) {
			char want[160] = "", got[160] = "";
			size_t a = 0, b = 0;
			for (int k = 0; k < d->rank; k++)
				a += (size_t)snprintf(want + a, sizeof want - a, "%s%lld", k ? "," : "",
						      (long long)d->dims[k]);
			for (int k = 0; k < t[i].rank && k < 8; k++)
				b += (size_t)snprintf(got + b, sizeof got - b, "%s%lld", k ? "," : "",
						      (long long)t[i].dims[k]);
			char where[32] = "";
			if (set >= 0)
				snprintf(where, sizeof where, "input set %d, ", set);
			snprintf(err, errlen,
				 "%sinput %u ('%s'): the model wants type %d shape [%s], got type %d "
				 "shape [%s]", where, i, d->name, d->dtype, want, t[i].dtype, got);
			return -1;
		}
	}
	return 0;
}

static int alloc_outputs(const struct om_model *om, struct om_tensor *o, char *err, size_t errlen)
{
	for (unsigned i = 0; i < om->noutputs; i++) {
		const struct om_tensor_desc *d = &om->outputs[i];
		memset(&o[i], 0, sizeof o[i]);
		snprintf(o[i].name, sizeof o[i].name, "%s", d->name);
		o[i].dtype = d->dtype;
		o[i].rank = d->rank;
		for (int r = 0; r < d->rank; r++)
			o[i].dims[r] = d->dims[r];
		o[i].nbytes = d->size;
		/* not cleared: the device-to-host copy queued for it writes all
		 * nbytes before the run returns it (a failed run frees it) */
		o[i].data = malloc(d->size ? d->size : 1);
		if (!o[i].data) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* Queue: copy set in, execute, copy out. */
static int queue_one(struct lane *ln, const struct om_model *om, const struct om_tensor *in,
		     struct om_tensor *out, char *err, size_t errlen)
{
	for (unsigned i = 0; i < om->ninputs; i++)
		if (rt_memcpy_async(ln->s, SIM_COPY_H2D, in[i].data, ln->in[i], 0, in[i].nbytes, err,
				    errlen))
			return -1;
	if (rt_model_execute_async(&ln->m, ln->s, ln->in, ln->out, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; out && i < om->noutputs; i++)
		if (rt_memcpy_async(ln->s, SIM_COPY_D2H, out[i].data, ln->out[i], 0, out[i].nbytes,
				    err, errlen))
			return -1;
	return 0;
}

int rt_session_run(struct rt_device *d, const struct om_model *om, const struct rt_session *o,
		   const struct om_tensor *inputs, unsigned nsets, struct om_tensor *outputs,
		   double *load_us, char *err, size_t errlen)
{
	unsigned S = o->streams ? o->streams : 1, loop = o->loop ? o->loop : 1;
	if (!nsets) {
		snprintf(err, errlen, "no input sets");
		return -1;
	}
	for (unsigned k = 0; k < (o->sets_each ? nsets : 1); k++)
		if (check_inputs(om, inputs + (size_t)k * om->ninputs, o->sets_each ? (int)k : -1,
				 err, errlen))
			return -1;
	struct sim_device *sim = rt_device_sim(d);
	struct lane *ln = calloc(S, sizeof *ln);
	int rc = -1;
	unsigned made = 0;
	if (!ln) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < (o->sets_each ? nsets : 1); k++)
		if (alloc_outputs(om, outputs + (size_t)k * om->noutputs, err, errlen))
			goto done;
	for (; made < S; made++) {
		struct lane *l = &ln[made];
		if (made == 0 ? rt_model_load(d, om, &l->m, err, errlen)
			      : rt_model_clone(&ln[0].m, &l->m, err, errlen))
			goto done;
		l->s = made == 0 ? rt_default_stream(d) : rt_stream_new(d);
		l->in = calloc(om->ninputs + 1, sizeof *l->in);
		l->out = calloc(om->noutputs + 1, sizeof *l->out);
		if (!l->s || !l->in || !l->out) {
			made++;
			snprintf(err, errlen, "out of memory");
			goto done;
		}
		for (unsigned i = 0; i < om->ninputs; i++)
			if (!(l->in[i] = sim_gm_alloc(sim, om->inputs[i].size + RT_BUFFER_SLACK))) {
				made++;
				snprintf(err, errlen, "input '%s' does not fit the device memory",
					 om->inputs[i].name);
				goto done;
			}
		for (unsigned i = 0; i < om->noutputs; i++)
			if (!(l->out[i] = sim_gm_alloc(sim, om->outputs[i].size + RT_BUFFER_SLACK))) {
				made++;
				snprintf(err, errlen, "output '%s' does not fit the device memory",
					 om->outputs[i].name);
				goto done;
			}
	}
	if (load_us)
		*load_us = (double)(ln[0].m.load_end - ln[0].m.load_start) /
			   rt_device_config(d)->core_freq_mhz;
	if (o->sets_each) {
		for (unsigned k = 0; k < nsets; k++)
			if (queue_one(&ln[k % S], om, inputs + (size_t)k * om->ninputs,
				      outputs + (size_t)k * om->noutputs, err, errlen))
				goto done;
		rc = rt_synchronize(d, err, errlen);
		goto done;
	}
	for (unsigned s = 0; s < S; s++)
		if (queue_one(&ln[s], om, inputs, s == 0 ? outputs : NULL, err, errlen))
			goto done;
	if (rt_synchronize(d, err, errlen))
		goto done;
	if (loop > 1) {
		if (o->timing_warm)
			rt_device_set_mode(d, SIM_MODE_TIMING);
		for (unsigned i = 1; i < loop; i++)
			for (unsigned s = 0; s < S; s++)
				if (rt_model_execute_async(&ln[s].m, ln[s].s, ln[s].in, ln[s].out, err,
							   errlen) < 0)
					goto done;
		if (rt_synchronize(d, err, errlen))
			goto done;
	}
	rc = 0;
done:
	for (unsigned s = made; s-- > 0;) {
		for (unsigned i = 0; ln[s].in && i < om->ninputs; i++)
			if (ln[s].in[i])
				sim_gm_free(sim, ln[s].in[i]);
		for (unsigned i = 0; ln[s].out && i < om->noutputs; i++)
			if (ln[s].out[i])
				sim_gm_free(sim, ln[s].out[i]);
		free(ln[s].in);
		free(ln[s].out);
		rt_model_unload(&ln[s].m);
		if (s > 0 && ln[s].s)
			rt_stream_free(ln[s].s);
	}
	free(ln);
	if (rc)
		for (unsigned k = 0; k < (o->sets_each ? nsets : 1); k++)
			for (unsigned i = 0; i < om->noutputs; i++)
				om_tensor_free(&outputs[(size_t)k * om->noutputs + i]);
	return rc;
}
