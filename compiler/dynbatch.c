/* dynbatch.c: ATC's --dynamic_batch_size: one program per batch size, in one
 * model (om.h: the program of the largest size, its variants the others);
 * and ATC's --dynamic_dims, the same with one program per profile of the
 * -1 dimensions' values (the model the last profile's program).
 *
 * Each size is an ordinary compile with the -1 of --input_shape fixed at
 * that size, so a variant's code and cycles are those of a fixed-batch
 * compile.  The weights are laid out by the order the lowering meets the
 * constants (lower_util.c), not by the batch, so the variants' weights are
 * normally the same bytes: they are then stored once.  Should a size lay
 * its weights out otherwise (a constant that depends on the batch), its
 * bytes are appended to the shared block and its weight arguments moved
 * there, and the report says so. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

int cc_parse_dynamic_batch(const char *v, int64_t *sizes, unsigned *n, char *err, size_t errlen)
{
	*n = 0;
	const char *p = v ? v : "";
	while (*p) {
		char *e;
		long long b = strtoll(p, &e, 10);
		if (e == p || (*e && *e != ',') || b < 1) {
			snprintf(err, errlen, "--dynamic_batch_size=%s: sizes are positive integers "
				 "separated by commas, e.g. \"1,2,4,8\"", v);
			return -1;
		}
		if (*n == OM_MAX_VARIANTS) {
			snprintf(err, errlen, "--dynamic_batch_size=%s: more than %d sizes", v,
				 OM_MAX_VARIANTS);
			return -1;
		}
		if (*n && b <= sizes[*n - 1]) {
			snprintf(err, errlen, "--dynamic_batch_size=%s: sizes must be distinct and "
				 "ascending (%lld after %lld)", v, b, (long long)sizes[*n - 1]);
			return -1;
		}
		sizes[(*n)++] = b;
		p = *e ? e + 1 : e;
		if (*e && !*p) {
			snprintf(err, errlen, "--dynamic_batch_size=%s: a trailing comma", v);
			return -1;
		}
	}
	/* ATC's range of profile counts is (1, 100] */
	if (*n < 2) {
		snprintf(err, errlen, "--dynamic_batch_size=%s: at least two sizes (ATC's rule; a "
			 "single size is a fixed batch: --input_shape)", v);
		return -1;
	}
	return 0;
}

int cc_parse_dynamic_dims(const char *v, int64_t *vals, unsigned *nprof, unsigned *ndims,
			  char *err, size_t errlen)
{
	*nprof = *ndims = 0;
	const char *p = v ? v : "";
	unsigned k = 0; /* values in the current profile */
	while (*p) {
		char *e;
		long long d = strtoll(p, &e, 10);
		if (e == p || (*e && *e != ',' && *e != ';') || d < 1) {
			snprintf(err, errlen, "--dynamic_dims=%s: profiles of positive integers, the "
				 "values separated by commas and the profiles by semicolons, e.g. "
				 "\"224,224;320,320\"", v);
			return -1;
		}
		if (*nprof == OM_MAX_VARIANTS || k == OM_MAX_DYN_DIMS) {
			snprintf(err, errlen, "--dynamic_dims=%s: at most %d profiles of %d values", v,
				 OM_MAX_VARIANTS, OM_MAX_DYN_DIMS);
			return -1;
		}
		vals[(size_t)*nprof * OM_MAX_DYN_DIMS + k++] = d;
		if (!*e || *e == ';') { /* a profile ends */
			if (*nprof && k != *ndims) {
				snprintf(err, errlen, "--dynamic_dims=%s: profile %u has %u values, the "
					 "first %u (one for each -1 of --input_shape)", v, *nprof + 1, k,
					 *ndims);
				return -1;
			}
			*ndims = k;
			for (unsigned j = 0; j < *nprof; j++)
				if (!memcmp(&vals[(size_t)j * OM_MAX_DYN_DIMS],
					    &vals[(size_t)*nprof * OM_MAX_DYN_DIMS], k * sizeof *vals)) {
					snprintf(err, errlen, "--dynamic_dims=%s: profile %u repeats profile "
						 "%u", v, *nprof + 1, j + 1);
					return -1;
				}
			(*nprof)++;
			k = 0;
		}
		p = *e ? e + 1 : e;
		if (*e && !*p) {
			snprintf(err, errlen, "--dynamic_dims=%s: a trailing '%c'", v, *e);
			return -1;
		}
	}
	/* ATC's range of profile counts is [2, 100] */
	if (*nprof < 2) {
		snprintf(err, errlen, "--dynamic_dims=%s: at least two profiles (ATC's rule; a single "
			 "one is a fixed shape: --input_shape)", v);
		return -1;
	}
	return 0;
}

/* --input_shape with its -1s replaced into out.  Dynamic batch (ndims 0):
 * each by b, the -1 allowed only as the first dimension (ATC's dynamic
 * batch is N first) and occurring at least once.  Dynamic dims: by
 * dims[0..ndims) in their order, anywhere, exactly ndims of them. */
static int shape_at(const char *spec, int64_t b, const int64_t *dims, unsigned ndims, char *out,
		    size_t len, char *err, size_t errlen)
{
	size_t o = 0;
	unsigned found = 0;
	const char *p = spec ? spec : "";
	while (*p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *colon = NULL;
		for (const char *q = p; q < p + n; q++)
			if (*q == ':')
				colon = q;
		if (!colon) {
			snprintf(err, errlen, "--input_shape '%.*s': expected name:d1,d2,...", (int)n,
				 p);
			return -1;
		}
		int w = snprintf(out + o, len - o, "%.*s", (int)(colon + 1 - p), p);
		o += w > 0 ? (size_t)w : 0;
		int dim = 0;
		for (const char *d = colon + 1; d < p + n && o < len; dim++) {
			const char *de = memchr(d, ',', (size_t)(p + n - d));
			size_t dn = de ? (size_t)(de - d) : (size_t)(p + n - d);
			if (dn == 2 && !strncmp(d, "-1", 2) && ndims) {
				if (found == ndims) {
					snprintf(err, errlen, "--input_shape has more -1 dimensions than "
						 "the %u values of each --dynamic_dims profile", ndims);
					return -1;
				}
				w = snprintf(out + o, len - o, "%" PRId64, dims[found++]);
			} else if (dn == 2 && !strncmp(d, "-1", 2)) {
				if (dim) {
					snprintf(err, errlen, "--input_shape '%.*s': -1 in dimension %d; "
						 "--dynamic_batch_size takes the batch, the first "
						 "dimension, only (--dynamic_dims is ATC's for others)",
						 (int)n, p, dim);
					return -1;
				}
				found = 1;
				w = snprintf(out + o, len - o, "%" PRId64, b);
			} else {
				w = snprintf(out + o, len - o, "%.*s", (int)dn, d);
			}
			o += w > 0 ? (size_t)w : 0;
			if (!de)
				break;
			if (o < len)
				out[o++] = ',';
			d = de + 1;
		}
		p += n;
		if (*p == ';') {
			p++;
			if (o < len)
				out[o++] = ';';
		}
	}
	if (o >= len) {
		snprintf(err, errlen, "--input_shape is too long");
		return -1;
	}
	out[o] = 0;
	if (ndims && found != ndims) {
		snprintf(err, errlen, "--dynamic_dims gives %u values a profile, but --input_shape has "
			 "%u -1 dimensions (one value for each, in order: e.g. \"x:1,3,-1,-1\" "
			 "with \"224,224;320,320\")", ndims, found);
		return -1;
	}
	if (!found) {
		snprintf(err, errlen, "--dynamic_batch_size needs --input_shape with -1 as the batch "
			 "(the first dimension) of the dynamic inputs, e.g. \"input:-1,3,224,224\"");
		return -1;
	}
	return 0;
}

/* Make v a variant of top: its weights become top's, shared when the bytes
 * are the same and otherwise appended to top's (its weight arguments
 * moved).  Returns 1 if shared, 0 if appended, -1 out of memory. */
static int adopt_variant(struct om_model *top, struct om_model *v)
{
	int shared = v->weights_bytes == top->weights_bytes &&
		     (!v->weights_bytes || !memcmp(v->weights, top->weights, v->weights_bytes));
	if (!shared) {
		uint64_t off = (top->weights_bytes + 511) / 512 * 512;
		uint8_t *w = realloc(top->weights, off + v->weights_bytes + 1);
		if (!w)
			return -1;
		memset(w + top->weights_bytes, 0, off - top->weights_bytes);
		memcpy(w + off, v->weights, v->weights_bytes);
		top->weights = w;
		top->weights_bytes = off + v->weights_bytes;
		for (uint32_t t = 0; t < v->ntasks; t++)
			for (uint32_t a = 0; a < v->tasks[t].nargs; a++)
				if (v->tasks[t].args[a].kind == OM_ARG_WEIGHT)
					v->tasks[t].args[a].value += (int64_t)off;
	}
	free(v->weights);
	v->weights = NULL;
	v->is_variant = 1;
	return shared;
}

/* n programs, each an ordinary compile of --input_shape with its -1s set:
 * to sizes[k] (ndims 0), or to dims[k * OM_MAX_DYN_DIMS ...] (ndims values).
 * The last is the model, the others its variants. */
static int compile_programs(const char *onnx_path, const struct soc_config *cfg,
			    const struct cc_options *opt, const int64_t *sizes,
			    const int64_t *dims, unsigned ndims, unsigned n, struct om_model *out,
			    char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	size_t len = (opt->input_shape ? strlen(opt->input_shape) : 0) + 32 * 64 + 64;
	char *spec = malloc(len);
	struct om_model *progs = calloc(n, sizeof *progs);
	int rc = -1, shared_all = 1;
	unsigned made = 0;
	if (!spec || !progs) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* the last first: it is the model (the largest size), and its report is
	 * the one shown */
	for (unsigned k = n; k-- > 0;) {
		const int64_t *dk = ndims ? &dims[(size_t)k * OM_MAX_DYN_DIMS] : NULL;
		if (shape_at(opt->input_shape, ndims ? 0 : sizes[k], dk, ndims, spec, len, err,
			     errlen))
			goto out;
		struct cc_options o = *opt;
		o.input_shape = spec;
		if (k != n - 1) {
			o.report = NULL;
			o.report_json = NULL;
		}
		char e2[3500];
		if (cc_compile(onnx_path, cfg, &o, &progs[k], e2, sizeof e2)) {
			if (ndims)
				snprintf(err, errlen, "profile %u of --dynamic_dims: %s", k + 1, e2);
			else
				snprintf(err, errlen, "batch %" PRId64 " of --dynamic_batch_size: %s",
					 sizes[k], e2);
			goto out;
		}
		made++;
		if (ndims) {
			progs[k].ndims = ndims;
			memcpy(progs[k].dims, dk, ndims * sizeof *dk);
		} else {
			progs[k].batch = sizes[k];
		}
	}
	struct om_model *top = &progs[n - 1];
	for (unsigned k = 0; k + 1 < n; k++) {
		int s = adopt_variant(top, &progs[k]);
		if (s < 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		shared_all &= s;
		if (progs[k].workspace_bytes > top->workspace_bytes)
			top->workspace_bytes = progs[k].workspace_bytes;
	}
	for (unsigned k = 0; k + 1 < n; k++)
		progs[k].weights = top->weights; /* after the last realloc */
	*out = *top;
	out->nvariants = n - 1;
	out->variants = progs;
	progs = NULL;
	if (opt->report) {
		fprintf(opt->report, "dynamic %s: %u programs (%s", ndims ? "dims" : "batch", n,
			ndims ? "dims" : "batch");
		for (unsigned k = 0; k < n; k++) {
			char dn[200];
			om_dims_name(ndims ? (k + 1 < n ? &out->variants[k] : out) : out, dn,
				     sizeof dn);
			if (ndims)
				fprintf(opt->report, "%s%s", k ? ";" : " ", dn);
			else
				fprintf(opt->report, "%s%" PRId64, k ? "," : " ", sizes[k]);
		}
		fprintf(opt->report, "), %s; workspace %" PRIu64 " bytes (the largest)\n",
			shared_all ? "their weights the same bytes, stored once"
				   : "some lay their weights out otherwise: stored beside the "
				     "others",
			out->workspace_bytes);
	}
	rc = 0;
out:
	if (progs) {
		/* variants adopted so far point at the top's weights: free those first */
		for (unsigned k = 0; k < n; k++)
			if (progs[k].is_variant) {
				progs[k].is_variant = 0;
				progs[k].weights = NULL;
				progs[k].weights_bytes = 0;
			}
		for (unsigned k = n - made; k < n; k++)
			om_free(&progs[k]);
	}
	free(progs);
	free(spec);
	return rc;
}

int cc_compile_dynamic(const char *onnx_path, const struct soc_config *cfg,
		       const struct cc_options *opt, const int64_t *sizes, unsigned n,
		       struct om_model *out, char *err, size_t errlen)
{
	return compile_programs(onnx_path, cfg, opt, sizes, NULL, 0, n, out, err, errlen);
}

int cc_compile_dynamic_dims(const char *onnx_path, const struct soc_config *cfg,
			    const struct cc_options *opt, const int64_t *dims, unsigned ndims,
			    unsigned nprof, struct om_model *out, char *err, size_t errlen)
{
	if (!ndims || ndims > OM_MAX_DYN_DIMS) {
		snprintf(err, errlen, "--dynamic_dims: 1 to %d values a profile", OM_MAX_DYN_DIMS);
		return -1;
	}
	return compile_programs(onnx_path, cfg, opt, NULL, dims, ndims, nprof, out, err, errlen);
}
