/* serve_fit.c: whether several served models fit one chip's memory
 * together (see serve.h).  Each model is characterised on a chip of its
 * own, so its service table says nothing about room for the others; here
 * every model is loaded as the runtime would hold it while serving, on one
 * simulated device, and the first that does not fit is named. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* messages are cut on purpose */
#include <stdlib.h>
#include <string.h>

#include "om.h"
#include "runtime.h"
#include "serve.h"

struct held {
	struct om_model om;
	struct rt_model *m; /* [streams] */
	unsigned nm;
};

static void drop(struct held *h, size_t nh)
{
	for (size_t i = nh; i-- > 0;) {
		for (unsigned k = h[i].nm; k-- > 0;)
			rt_model_unload(&h[i].m[k]);
		free(h[i].m);
		om_free(&h[i].om);
	}
}

/* Program p of a file: one instance per stream (clones share the
 * weights), each with its input and output buffers, as characterising
 * and serving it hold them. */
static int hold(struct rt_device *d, struct held *h, const struct om_model *p, unsigned streams,
		char *err, size_t errlen)
{
	struct sim_device *sim = rt_device_sim(d);
	for (unsigned k = 0; k < streams; k++) {
		if (k ? rt_model_clone(&h->m[0], &h->m[k], err, errlen)
		      : rt_model_load(d, p, &h->m[k], err, errlen))
			return -1;
		h->nm++;
		for (unsigned i = 0; i < p->ninputs + p->noutputs; i++) {
			uint64_t bytes = i < p->ninputs ? p->inputs[i].size
							: p->outputs[i - p->ninputs].size;
			if (!sim_gm_alloc(sim, bytes + RT_BUFFER_SLACK)) {
				snprintf(err, errlen, "its %s buffers on stream %u do not fit",
					 i < p->ninputs ? "input" : "output", k);
				return -1;
			}
		}
	}
	return 0;
}

int sv_fit_check(const char *const *const *om_paths, const unsigned *n, unsigned nt,
		 const struct soc_config *cfg, unsigned streams, char *err, size_t errlen)
{
	if (!streams)
		streams = 1;
	size_t cap = 0;
	for (unsigned m = 0; m < nt; m++)
		cap += n[m];
	struct held *h = calloc(cap ? cap : 1, sizeof *h);
	struct sim_options opt = { .mode = SIM_MODE_TIMING };
	struct rt_device *d = h ? rt_device_new(cfg, &opt, err, errlen) : NULL;
	if (!h || !d) {
		if (!h)
			snprintf(err, errlen, "out of memory");
		free(h);
		return -1;
	}
	size_t nh = 0;
	int rc = 0;
	for (unsigned m = 0; m < nt && !rc; m++)
		for (unsigned i = 0; i < n[m] && !rc; i++) {
			struct held *x = &h[nh];
			char e2[1024];
			if (om_read(om_paths[m][i], &x->om, cfg->name, e2, sizeof e2)) {
				snprintf(err, errlen, "--model %s: %s", om_paths[m][i], e2);
				rc = -1;
				break;
			}
			nh++;
			/* a dynamic-batch .om: each program as a model of its own, as
			 * the characterisation and --exact load them */
			int64_t sz[OM_MAX_VARIANTS + 1];
			unsigned ns = om_batch_sizes(&x->om, sz);
			if (!(x->m = calloc((size_t)streams * (ns ? ns : 1), sizeof *x->m))) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			for (unsigned k = 0; k < (ns ? ns : 1) && !rc; k++) {
				const struct om_model *p = ns ? om_variant(&x->om, sz[k]) : &x->om;
				struct held one = { .m = x->m + x->nm };
				uint64_t before = sim_gm_used(rt_device_sim(d));
				rc = hold(d, &one, p, streams, e2, sizeof e2);
				x->nm += one.nm;
				if (rc) {
					double mib = 1024.0 * 1024.0;
					snprintf(err, errlen, "--model %s does not fit the device memory%s "
						 "(%.1f of %.1f MiB in use, %u stream%s): %s", om_paths[m][i],
						 m || i || k ? " beside the models before it" : "",
						 (double)before / mib, (double)cfg->hbm_size_mb, streams,
						 streams > 1 ? "s" : "", e2);
				}
			}
		}
	drop(h, nh);
	free(h);
	rt_device_free(d);
	return rc;
}
