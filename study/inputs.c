/* inputs.c: the seeded inputs a model runs on when the user gives none
 * (see st_inputs_make in inputs.h).  simrun, simsweep's points and
 * simprof's re-simulations all make them here, so one model gets the same
 * inputs, and so the same cycles, in every tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "om.h"

/* Random integer inputs are indices (the compiler takes integer inputs
 * only as Gather's): values in [0, bound) with bound the smallest dimension
 * (above 1) of the tables the model's Gather tasks read with input i, so
 * valid along any axis, or 16 when no task says. */
static int64_t int_bound(const struct om_model *m, unsigned i)
{
	int64_t bound = -1;
	for (unsigned k = 0; k < m->ntasks; k++) {
		const struct om_task *t = &m->tasks[k];
		int uses = 0;
		for (unsigned a = 0; a < t->nargs; a++)
			uses |= t->args[a].kind == OM_ARG_INPUT && t->args[a].index == i;
		if (!uses || strcmp(t->op_type, "Gather") || t->ninputs < 1)
			continue;
		for (int r = 0; r < t->inputs[0].rank; r++) /* 1: an axis added for the layout */
			if (t->inputs[0].dims[r] > 1 && (bound < 0 || t->inputs[0].dims[r] < bound))
				bound = t->inputs[0].dims[r];
	}
	return bound > 0 ? bound : 16;
}

/* xorshift64: one step */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int st_inputs_make(const struct om_model *m, struct om_tensor *in, uint64_t seed, int timing,
		   char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->ninputs; i++) {
		const struct om_tensor_desc *d = &m->inputs[i];
		snprintf(in[i].name, sizeof in[i].name, "%s", d->name);
		in[i].dtype = d->dtype;
		in[i].rank = d->rank;
		for (int r = 0; r < d->rank; r++)
			in[i].dims[r] = d->dims[r];
		in[i].nbytes = d->size;
		in[i].data = calloc(1, d->size ? d->size : 1);
		/* a type the runtime converts (om_edge.c): made as the device's
		 * type, then converted back to the user's */
		int dt = d->device_dtype ? d->device_dtype : d->dtype;
		uint64_t size = om_edge_device_bytes(d);
		void *buf = d->device_dtype ? calloc(1, size ? size : 1) : in[i].data;
		if (!in[i].data || !buf || (dt != 1 && dt != 2 && dt != 6 && dt != 7)) {
			if (buf != in[i].data)
				free(buf);
			snprintf(err, errlen, "input '%s': random inputs need float32, uint8, int32, "
				 "int64 or a type converted to one (give --input-dir)", d->name);
			return -1;
		}
		uint64_t s = (seed + i) * 0x9E3779B97F4A7C15ull + 1;
		if (dt == 2) { /* uint8: an image (AIPP), every byte value */
			for (uint64_t e = 0; e < size; e++)
				((uint8_t *)buf)[e] = (uint8_t)(next(&s) >> 56);
		} else if (dt != 1) { /* indices: valid for every table they index */
			int64_t bound = int_bound(m, i);
			for (uint64_t e = 0; e < size / (dt == 7 ? 8 : 4); e++) {
				int64_t v = (int64_t)((next(&s) >> 11) % (uint64_t)bound);
				if (dt == 7)
					((int64_t *)buf)[e] = v;
				else
					((int32_t *)buf)[e] = (int32_t)v;
			}
		} else if (!timing) {
			float *f = buf;
			for (uint64_t e = 0; e < size / 4; e++)
				f[e] = (float)((double)(next(&s) >> 11) / 9007199254740992.0 * 2.0 -
					       1.0);
		}
		if (buf != in[i].data) {
			om_edge_convert(d, 0, buf, in[i].data);
			free(buf);
		}
	}
	return 0;
}
