/* onnx_import.c: ONNX model file -> graph IR (graph.h).
 *
 * The model is unpacked with protobuf-c from ONNX's own schema.  Every value name becomes one
 * tensor; initializers, Constant nodes and TENSOR attributes become constant tensors holding
 * little-endian bytes whatever storage form the file used (raw_data, the typed repeated fields
 * or external data beside the model).  Subgraphs (GRAPH attributes) are not supported. */
/* realpath (external data stays in the model's folder) */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "graph.h"
#include "onnx.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define OPSET_MIN 6
#define OPSET_MAX 18

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* Everything one import needs, so the importer keeps no state between calls. */
struct imp {
	const char *path; /* the model file, the prefix of every message */
	char *dir;        /* its directory: external data is relative to it */
	char *err;
	size_t errlen;
	struct cc_graph *g;
	/* name -> tensor index, open addressing; -1 marks an empty slot.  Graphs from real
	 * models have thousands of values, too many for cc_tensor_find's linear search. */
	int *hash;
	size_t hcap;
};

static int fail(struct imp *im, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int fail(struct imp *im, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!im->err || im->errlen == 0)
		return -1;
	n = snprintf(im->err, im->errlen, "%s: ", im->path);
	if (n >= 0 && (size_t)n < im->errlen) {
		va_start(ap, fmt);
		vsnprintf(im->err + n, im->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int oom(struct imp *im)
{
	return fail(im, "out of memory");
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

/* protobuf bytes are not NUL-terminated and may hold NULs; a C string stops at the first. */
static char *bytes_dup(const ProtobufCBinaryData *b)
{
	char *s = malloc(b->len + 1);

	if (!s)
		return NULL;
	if (b->len)
		memcpy(s, b->data, b->len);
	s[b->len] = '\0';
	return s;
}

/* ---- the name index ---- */

static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static void hash_put(struct imp *im, int idx)
{
	size_t i = hash_str(im->g->t[idx].name) & (im->hcap - 1);

	while (im->hash[i] >= 0)
		i = (i + 1) & (im->hcap - 1);
	im->hash[i] = idx;
}

static int hash_grow(struct imp *im)
{
	size_t cap = im->hcap ? 2 * im->hcap : 256;
	int *h = malloc(cap * sizeof *h);

	if (!h)
		return -1;
	for (size_t i = 0; i < cap; i++)
		h[i] = -1;
	free(im->hash);
	im->hash = h;
	im->hcap = cap;
	for (int t = 0; t < im->g->nt; t++)
		hash_put(im, t);
	return 0;
}

static int lookup(const struct imp *im, const char *name)
{
	if (!im->hcap)
		return -1;
	for (size_t i = hash_str(name) & (im->hcap - 1); im->hash[i] >= 0;
	     i = (i + 1) & (im->hcap - 1))
		if (strcmp(im->g->t[im->hash[i]].name, name) == 0)
			return im->hash[i];
	return -1;
}

/* A new tensor of unknown type and shape, indexed by name. */
static int new_tensor(struct imp *im, const char *name)
{
	int idx;

	/* keep the table at most half full so probes stay short */
	if ((size_t)(im->g->nt + 1) * 2 > im->hcap && hash_grow(im) < 0)
		return oom(im);
	idx = cc_tensor_add(im->g, name, CC_UNDEFINED, -1, NULL);
	if (idx < 0)
		return oom(im);
	hash_put(im, idx);
	return idx;
}

static int get_tensor(struct imp *im, const char *name)
{
	int idx = lookup(im, name);

	return idx >= 0 ? idx : new_tensor(im, name);
}

/* ---- shapes ---- */

static void clear_shape(struct cc_tensor *t)
{
	for (int d = 0; d < CC_MAX_RANK; d++) {
		free(t->dim_param[d]);
		t->dim_param[d] = NULL;
		t->dims[d] = 0;
	}
	t->rank = -1;
}

static void fmt_shape(char *buf, size_t len, int rank, const int64_t *dims)
{
	size_t o = 0;

	for (int d = 0; d <= rank && o < len; d++) {
		int n;

		if (d == rank)
			n = snprintf(buf + o, len - o, "%s]", rank ? "" : "[");
		else
			n = snprintf(buf + o, len - o, "%s%" PRId64, d ? "," : "[", dims[d]);
		if (n < 0)
			break;
		o += (size_t)n;
	}
}

/* Type and shape from a ValueInfoProto.  The first source that knows something wins, and
 * constants keep the shape of their data. */
static int apply_type(struct imp *im, int idx, const Onnx__ValueInfoProto *vi)
{
	struct cc_tensor *t = &im->g->t[idx];
	const Onnx__TypeProto__Tensor *tt;
	const Onnx__TensorShapeProto *sh;

	if (t->data || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return 0; /* sequences, maps and optionals stay unknown */
	tt = vi->type->tensor_type;
	if (t->dtype == CC_UNDEFINED && tt->has_elem_type)
		t->dtype = (enum cc_dtype)tt->elem_type;
	sh = tt->shape;
	if (!sh || t->rank >= 0)
		return 0;
	if (sh->n_dim > CC_MAX_RANK)
		return fail(im, "tensor %s: rank %zu exceeds the maximum of %d", t->name,
			    sh->n_dim, CC_MAX_RANK);
	for (size_t d = 0; d < sh->n_dim; d++) {
		const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];

		if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    dim->dim_value >= 0) {
			t->dims[d] = dim->dim_value;
			continue;
		}
		t->dims[d] = -1;
		if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
		    dim->dim_param && dim->dim_param[0])
			t->dim_param[d] = strdup(dim->dim_param);
		else
			t->dim_param[d] = strdup("?"); /* dynamic, but nameless */
		if (!t->dim_param[d])
			return oom(im);
	}
	t->rank = (int)sh->n_dim;
	return 0;
}

/* ---- tensor data ---- */

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Convert a TensorProto's contents to little-endian bytes.  raw/rawlen are the raw bytes when
 * the tensor has them (from raw_data or from an external file), else raw is NULL and the typed
 * fields are used.  On error writes a message (without prefix) to msg and returns -1. */
static int decode_data(const Onnx__TensorProto *tp, const unsigned char *raw, size_t rawlen,
		       enum cc_dtype dt, int rank, const int64_t *dims, void **data,
		       size_t *nbytes, char *msg, size_t msglen)
{
	size_t esize = cc_dtype_size(dt), need, count = 0;
	uint64_t numel = 1;
	const char *field = NULL;
	unsigned char *p;
	char shape[160];

	fmt_shape(shape, sizeof shape, rank, dims);
	if (!esize) {
		snprintf(msg, msglen, "element type %s (%d) is not supported for constant data",
			 cc_dtype_name(dt), (int)dt);
		return -1;
	}
	for (int d = 0; d < rank; d++) {
		if (dims[d] < 0 || (dims[d] && numel > SIZE_MAX / esize / (uint64_t)dims[d])) {
			snprintf(msg, msglen, "invalid shape %s", shape);
			return -1;
		}
		numel *= (uint64_t)dims[d];
	}
	need = (size_t)numel * esize;
	if (raw) {
		if (rawlen != need) {
			snprintf(msg, msglen, "has %zu bytes of data, but shape %s of %s needs"
				 " %zu", rawlen, shape, cc_dtype_name(dt), need);
			return -1;
		}
	} else {
		switch (dt) {
		case CC_F32:
			field = "float_data", count = tp->n_float_data;
			break;
		case CC_I64:
			field = "int64_data", count = tp->n_int64_data;
			break;
		case CC_F64:
			field = "double_data", count = tp->n_double_data;
			break;
		case CC_U32: case CC_U64:
			field = "uint64_data", count = tp->n_uint64_data;
			break;
		default: /* the narrow types, float16 and bfloat16 as their bits */
			field = "int32_data", count = tp->n_int32_data;
			break;
		}
		if (count != numel) {
			snprintf(msg, msglen, "has %zu values in %s, but shape %s of %s needs"
				 " %" PRIu64, count, field, shape, cc_dtype_name(dt), numel);
			return -1;
		}
	}
	/* an empty constant still gets a buffer: data != NULL is what marks a constant */
	p = malloc(need ? need : 1);
	if (!p) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	if (raw) {
		if (need)
			memcpy(p, raw, need);
	} else {
		for (size_t i = 0; i < count; i++) {
			uint64_t v;
			uint32_t u;

			switch (dt) {
			case CC_F32:
				memcpy(&u, &tp->float_data[i], 4);
				v = u;
				break;
			case CC_I64:
				v = (uint64_t)tp->int64_data[i];
				break;
			case CC_F64:
				memcpy(&v, &tp->double_data[i], 8);
				break;
			case CC_U32: case CC_U64:
				v = tp->uint64_data[i];
				break;
			default:
				v = (uint64_t)(int64_t)tp->int32_data[i];
				break;
			}
			put_le(p + i * esize, v, esize);
		}
	}
	*data = p;
	*nbytes = need;
	return 0;
}

/* "a/b/c.onnx" -> "a/b"; "c.onnx" -> "." */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	d = malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = '\0';
	}
	return d;
}

/* External data may only name files at or below the model's directory: a model from
 * elsewhere must not be able to make us read arbitrary files. */
static int location_ok(const char *loc)
{
	const char *p = loc;

	if (!loc[0] || loc[0] == '/' || loc[0] == '\\')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/\\");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		if (*p)
			p++;
	}
	return 1;
}

/* Whether path, whose open file is st, resolves to a file below dir: both
 * made canonical by realpath, and the resolved file the very one opened. */
static int inside_dir(const char *dir, const char *path, const struct stat *st)
{
	char *d = realpath(dir, NULL), *p = realpath(path, NULL);
	struct stat ps;
	size_t n = d ? strlen(d) : 0;
	int ok = d && p && strncmp(p, d, n) == 0 && (p[n] == '/' || (n == 1 && d[0] == '/')) &&
		 stat(p, &ps) == 0 && ps.st_dev == st->st_dev && ps.st_ino == st->st_ino;
	free(d);
	free(p);
	return ok;
}

static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/* Read an externally stored tensor's bytes into a malloc'd buffer. */
static int read_external(struct imp *im, const Onnx__TensorProto *tp, const char *label,
			 unsigned char **buf, size_t *len)
{
	const char *loc = NULL, *off_s = NULL, *len_s = NULL;
	uint64_t off = 0, n;
	char *full;
	FILE *f;
	struct stat st;
	int rc = -1;

	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];

		if (!e->key)
			continue;
		if (strcmp(e->key, "location") == 0)
			loc = e->value;
		else if (strcmp(e->key, "offset") == 0)
			off_s = e->value;
		else if (strcmp(e->key, "length") == 0)
			len_s = e->value;
	}
	if (!loc || !*loc)
		return fail(im, "%s: external data without a location", label);
	if (!location_ok(loc))
		return fail(im, "%s: external data location '%s' is absolute or leaves the"
			    " model's directory", label, loc);
	if ((off_s && parse_size(off_s, &off) < 0) || (len_s && parse_size(len_s, &n) < 0))
		return fail(im, "%s: bad external data offset '%s' or length '%s'", label,
			    off_s ? off_s : "", len_s ? len_s : "");
	full = malloc(strlen(im->dir) + strlen(loc) + 2);
	if (!full)
		return oom(im);
	sprintf(full, "%s/%s", im->dir, loc);
	/* A symlink is not followed (O_NOFOLLOW: "link.bin -> /etc/..." would
	 * copy a file from outside the folder into an output), and the file
	 * opened must resolve to a path inside the model's folder (a linked
	 * directory on the way cannot lead out either). */
	int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "rb");
	if (!f) {
		fail(im, "%s: cannot open external data file %s: %s%s", label, full,
		     strerror(errno), errno == ELOOP ? " (a symbolic link: not followed)" : "");
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fail(im, "%s: external data %s is not a regular file", label, full);
		goto out;
	}
	if (!inside_dir(im->dir, full, &st)) {
		fail(im, "%s: external data %s resolves to a file outside the model's folder %s",
		     label, full, im->dir);
		goto out;
	}
	if (off > (uint64_t)st.st_size) {
		fail(im, "%s: external data offset %" PRIu64 " is beyond the end of %s"
		     " (%jd bytes)", label, off, full, (intmax_t)st.st_size);
		goto out;
	}
	if (!len_s)
		n = (uint64_t)st.st_size - off;
	if (n > (uint64_t)st.st_size - off) {
		fail(im, "%s: external data offset %" PRIu64 " + length %" PRIu64
		     " is beyond the end of %s (%jd bytes)", label, off, n, full,
		     (intmax_t)st.st_size);
		goto out;
	}
	*buf = malloc(n ? (size_t)n : 1);
	if (!*buf) {
		oom(im);
		goto out;
	}
	if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
		free(*buf);
		*buf = NULL;
		fail(im, "%s: cannot read external data from %s", label, full);
		goto out;
	}
	*len = (size_t)n;
	rc = 0;
out:
	if (f)
		fclose(f);
	free(full);
	return rc;
}

/* Make tensor idx a constant holding the contents of tp.  label names the tensor (and node)
 * in messages. */
static int load_tensor(struct imp *im, int idx, const Onnx__TensorProto *tp, const char *label)
{
	struct cc_tensor *t = &im->g->t[idx];
	unsigned char *ext = NULL;
	const unsigned char *raw = NULL;
	size_t rawlen = 0;
	enum cc_dtype dt;
	int64_t dims[CC_MAX_RANK];
	char msg[320];
	int rc;

	if (!tp->has_data_type || tp->data_type == CC_UNDEFINED)
		return fail(im, "%s: no data type", label);
	if (tp->n_dims > CC_MAX_RANK)
		return fail(im, "%s: rank %zu exceeds the maximum of %d", label, tp->n_dims,
			    CC_MAX_RANK);
	if (tp->segment)
		return fail(im, "%s: segmented tensors are not supported", label);
	dt = (enum cc_dtype)tp->data_type;
	for (size_t d = 0; d < tp->n_dims; d++)
		dims[d] = tp->dims[d];
	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		if (read_external(im, tp, label, &ext, &rawlen) < 0)
			return -1;
		raw = ext;
	} else if (tp->has_raw_data) {
		raw = tp->raw_data.data ? tp->raw_data.data : (const unsigned char *)"";
		rawlen = tp->raw_data.len;
	}
	clear_shape(t);
	free(t->data);
	t->data = NULL;
	rc = decode_data(tp, raw, rawlen, dt, (int)tp->n_dims, dims, &t->data, &t->nbytes, msg,
			 sizeof msg);
	free(ext);
	if (rc < 0)
		return fail(im, "%s: %s", label, msg);
	t->dtype = dt;
	t->rank = (int)tp->n_dims;
	memcpy(t->dims, dims, tp->n_dims * sizeof dims[0]);
	return 0;
}

/* A constant from a Constant node's scalar or list attribute. */
static int load_list(struct imp *im, int idx, enum cc_dtype dt, int rank, size_t n,
		     const float *f, const int64_t *i)
{
	struct cc_tensor *t = &im->g->t[idx];
	size_t esize = cc_dtype_size(dt);
	unsigned char *p = malloc(n ? n * esize : 1);

	if (!p)
		return oom(im);
	for (size_t k = 0; k < n; k++) {
		uint32_t u;

		if (f) {
			memcpy(&u, &f[k], 4);
			put_le(p + k * esize, u, esize);
		} else {
			put_le(p + k * esize, (uint64_t)i[k], esize);
		}
	}
	clear_shape(t);
	free(t->data);
	t->data = p;
	t->nbytes = n * esize;
	t->dtype = dt;
	t->rank = rank;
	if (rank)
		t->dims[0] = (int64_t)n;
	return 0;
}

/* ---- nodes ---- */

static const char *attr_type_name(int type)
{
	switch (type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
	default: return "UNDEFINED";
	}
}

/* IR versions before 2 had no type field: the type is whichever value is present. */
static int attr_type(const Onnx__AttributeProto *ap)
{
	if (ap->has_type && ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
		return ap->type;
	if (ap->has_f)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	if (ap->has_i)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	if (ap->has_s)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
	if (ap->t)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
	if (ap->g)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	if (ap->n_floats)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
	if (ap->n_ints)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	if (ap->n_strings)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
	if (ap->n_graphs)
		return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
	return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* A fresh name for a tensor that has none of its own in the graph (a TENSOR attribute). */
static int unique_tensor(struct imp *im, const char *node, const char *attr)
{
	size_t len = strlen(node) + strlen(attr) + 24;
	char *name = malloc(len);
	int idx;

	if (!name)
		return oom(im);
	snprintf(name, len, "%s.%s", node, attr);
	for (unsigned k = 1; lookup(im, name) >= 0; k++)
		snprintf(name, len, "%s.%s.%u", node, attr, k);
	idx = new_tensor(im, name);
	free(name);
	return idx;
}

static int import_attr(struct imp *im, const char *nlabel, const char *nname,
		       const Onnx__AttributeProto *ap, struct cc_attr *a)
{
	int type = attr_type(ap);
	const char *aname = ap->name ? ap->name : "";
	char label[512];

	a->name = xstrdup(aname);
	if (!a->name)
		return oom(im);
	a->tensor = -1;
	switch (type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->type = CC_ATTR_FLOAT;
		a->f = ap->f;
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->type = CC_ATTR_INT;
		a->i = ap->i;
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		a->type = CC_ATTR_STRING;
		a->s = bytes_dup(&ap->s);
		return a->s ? 0 : oom(im);
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		a->type = CC_ATTR_TENSOR;
		if (!ap->t)
			return fail(im, "%s: attribute %s has no tensor", nlabel, aname);
		a->tensor = unique_tensor(im, nname, aname);
		if (a->tensor < 0)
			return -1;
		snprintf(label, sizeof label, "%s: attribute %s", nlabel, aname);
		return load_tensor(im, a->tensor, ap->t, label);
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		a->type = CC_ATTR_FLOATS;
		a->n = ap->n_floats;
		a->floats = malloc(a->n ? a->n * sizeof *a->floats : 1);
		if (!a->floats)
			return oom(im);
		if (a->n)
			memcpy(a->floats, ap->floats, a->n * sizeof *a->floats);
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		a->type = CC_ATTR_INTS;
		a->n = ap->n_ints;
		a->ints = malloc(a->n ? a->n * sizeof *a->ints : 1);
		if (!a->ints)
			return oom(im);
		if (a->n)
			memcpy(a->ints, ap->ints, a->n * sizeof *a->ints);
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
		/* struct cc_attr has no string array: the strings are packed one after another,
		 * each NUL-terminated, in s, and n counts them. */
		size_t len = 1;
		char *p;

		a->type = CC_ATTR_STRINGS;
		for (size_t k = 0; k < ap->n_strings; k++)
			len += ap->strings[k].len + 1;
		a->s = p = malloc(len);
		if (!p)
			return oom(im);
		for (size_t k = 0; k < ap->n_strings; k++) {
			if (ap->strings[k].len)
				memcpy(p, ap->strings[k].data, ap->strings[k].len);
			p += ap->strings[k].len;
			*p++ = '\0';
		}
		*p = '\0';
		a->n = ap->n_strings;
		return 0;
	}
	default:
		return fail(im, "%s: attribute %s of type %s is not supported", nlabel, aname,
			    attr_type_name(type));
	}
}

/* Mark tensor idx as produced by node (or by a constant when node is -1). */
static int set_producer(struct imp *im, int idx, int node, const char *nlabel)
{
	struct cc_tensor *t = &im->g->t[idx];

	if (t->producer >= 0 || t->data || t->is_input)
		return fail(im, "%s: tensor %s is produced twice (it is already %s)", nlabel,
			    t->name, t->producer >= 0 ? "a node's output" :
			    t->data ? "a constant" : "a graph input");
	t->producer = node;
	return 0;
}

/* A Constant node: its output becomes a constant tensor, the node disappears. */
static int import_constant(struct imp *im, const Onnx__NodeProto *np, const char *nlabel)
{
	const Onnx__AttributeProto *ap;
	const char *an;
	int idx;
	char label[600];

	if (np->n_output != 1 || !np->output[0][0])
		return fail(im, "%s: a Constant node needs exactly one output", nlabel);
	if (np->n_attribute != 1)
		return fail(im, "%s: a Constant node needs exactly one value attribute", nlabel);
	ap = np->attribute[0];
	an = ap->name ? ap->name : "";
	idx = get_tensor(im, np->output[0]);
	if (idx < 0 || set_producer(im, idx, -1, nlabel) < 0)
		return -1;
	if (strcmp(an, "value") == 0 && ap->t) {
		snprintf(label, sizeof label, "%s: tensor %s", nlabel, np->output[0]);
		return load_tensor(im, idx, ap->t, label);
	}
	if (strcmp(an, "value_float") == 0)
		return load_list(im, idx, CC_F32, 0, 1, &ap->f, NULL);
	if (strcmp(an, "value_floats") == 0)
		return load_list(im, idx, CC_F32, 1, ap->n_floats, ap->floats, NULL);
	if (strcmp(an, "value_int") == 0)
		return load_list(im, idx, CC_I64, 0, 1, NULL, &ap->i);
	if (strcmp(an, "value_ints") == 0)
		return load_list(im, idx, CC_I64, 1, ap->n_ints, NULL, ap->ints);
	return fail(im, "%s: attribute %s is not supported", nlabel, an);
}

static int import_node(struct imp *im, const Onnx__NodeProto *np, size_t index)
{
	struct cc_graph *g = im->g;
	struct cc_node *n;
	const char *op = np->op_type ? np->op_type : "";
	char gen[96], nlabel[400];
	const char *name = np->name && np->name[0] ? np->name : NULL;
	int ni;

	if (!name) {
		snprintf(gen, sizeof gen, "%.60s_%zu", op, index);
		name = gen;
	}
	snprintf(nlabel, sizeof nlabel, "node %.200s (%.100s)", name, op);
	if (strcmp(op, "Constant") == 0 && (!np->domain || !np->domain[0] ||
					    strcmp(np->domain, "ai.onnx") == 0))
		return import_constant(im, np, nlabel);
	if (g->nn == g->capn) {
		int cap = g->capn ? 2 * g->capn : 16;
		struct cc_node *nn = realloc(g->n, (size_t)cap * sizeof *nn);

		if (!nn)
			return oom(im);
		g->n = nn;
		g->capn = cap;
	}
	/* counted in the graph at once, so cc_graph_free cleans up a half-built node */
	ni = g->nn++;
	n = &g->n[ni];
	memset(n, 0, sizeof *n);
	n->name = xstrdup(name);
	n->op = xstrdup(op);
	n->domain = xstrdup(np->domain && strcmp(np->domain, "ai.onnx") ? np->domain : "");
	n->in = malloc((np->n_input ? np->n_input : 1) * sizeof *n->in);
	n->out = malloc((np->n_output ? np->n_output : 1) * sizeof *n->out);
	n->attrs = calloc(np->n_attribute ? np->n_attribute : 1, sizeof *n->attrs);
	if (!n->name || !n->op || !n->domain || !n->in || !n->out || !n->attrs)
		return oom(im);
	for (size_t k = 0; k < np->n_input; k++) {
		int t = -1;

		if (np->input[k][0] && (t = get_tensor(im, np->input[k])) < 0)
			return -1;
		n->in[n->nin++] = t;
	}
	for (size_t k = 0; k < np->n_output; k++) {
		int t = -1;

		if (np->output[k][0]) {
			t = get_tensor(im, np->output[k]);
			if (t < 0 || set_producer(im, t, ni, nlabel) < 0)
				return -1;
		}
		n->out[n->nout++] = t;
	}
	/* attributes last: TENSOR attributes add tensors, which may move g->t but not g->n */
	for (size_t k = 0; k < np->n_attribute; k++) {
		n->nattrs++;
		if (import_attr(im, nlabel, name, np->attribute[k], &n->attrs[k]) < 0)
			return -1;
	}
	return 0;
}

/* ---- the model ---- */

/* The file mapped read-only (*len bytes; an empty file maps nothing): the
 * unpacker copies what it keeps, so a copy of the whole file (a ResNet-50
 * is 100 MB) in a heap buffer was only page faults and a kernel copy. */
static int read_file(struct imp *im, unsigned char **buf, size_t *len)
{
	int fd = open(im->path, O_RDONLY);
	struct stat st;
	int rc = -1;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return fail(im, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fail(im, "not a regular file");
		goto out;
	}
	if (st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			fail(im, "cannot map: %s", strerror(errno));
			goto out;
		}
		*buf = m;
		*len = (size_t)st.st_size;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int import_graph(struct imp *im, const Onnx__ModelProto *m)
{
	const Onnx__GraphProto *gp = m->graph;
	struct cc_graph *g = im->g;
	int have_opset = 0;
	char label[400];

	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (!o->domain || !o->domain[0] || strcmp(o->domain, "ai.onnx") == 0) {
			g->opset = o->version;
			have_opset = 1;
		}
	}
	if (!have_opset)
		return fail(im, "no opset_import for the default ONNX domain");
	if (g->opset < OPSET_MIN || g->opset > OPSET_MAX)
		return fail(im, "opset %" PRId64 " is not supported (supported: %d to %d)",
			    g->opset, OPSET_MIN, OPSET_MAX);
	if (gp->n_sparse_initializer)
		return fail(im, "sparse initializer %s is not supported",
			    gp->sparse_initializer[0]->values &&
			    gp->sparse_initializer[0]->values->name ?
			    gp->sparse_initializer[0]->values->name : "");
	g->name = xstrdup(gp->name);
	g->inputs = malloc((gp->n_input ? gp->n_input : 1) * sizeof *g->inputs);
	g->outputs = malloc((gp->n_output ? gp->n_output : 1) * sizeof *g->outputs);
	if (!g->name || !g->inputs || !g->outputs)
		return oom(im);

	for (size_t i = 0; i < gp->n_input; i++)
		if (get_tensor(im, gp->input[i]->name ? gp->input[i]->name : "") < 0)
			return -1;
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		const char *name = tp->name ? tp->name : "";
		int idx = get_tensor(im, name);

		if (idx < 0)
			return -1;
		snprintf(label, sizeof label, "initializer %.300s", name);
		if (g->t[idx].data)
			return fail(im, "%s: defined twice", label);
		if (load_tensor(im, idx, tp, label) < 0)
			return -1;
	}
	/* graph inputs with an initializer are constants the user may override; we fold them */
	for (size_t i = 0; i < gp->n_input; i++) {
		int idx = lookup(im, gp->input[i]->name ? gp->input[i]->name : "");

		if (g->t[idx].data || g->t[idx].is_input)
			continue;
		g->t[idx].is_input = 1;
		g->inputs[g->ninputs++] = idx;
	}
	for (size_t i = 0; i < gp->n_input; i++)
		if (apply_type(im, lookup(im, gp->input[i]->name ? gp->input[i]->name : ""),
			       gp->input[i]) < 0)
			return -1;
	for (size_t i = 0; i < gp->n_output; i++) {
		int idx = get_tensor(im, gp->output[i]->name ? gp->output[i]->name : "");

		if (idx < 0 || apply_type(im, idx, gp->output[i]) < 0)
			return -1;
	}
	for (size_t i = 0; i < gp->n_value_info; i++) {
		int idx = get_tensor(im, gp->value_info[i]->name ? gp->value_info[i]->name : "");

		if (idx < 0 || apply_type(im, idx, gp->value_info[i]) < 0)
			return -1;
	}
	for (size_t i = 0; i < gp->n_node; i++)
		if (import_node(im, gp->node[i], i) < 0)
			return -1;
	for (size_t i = 0; i < gp->n_output; i++) {
		int idx = lookup(im, gp->output[i]->name ? gp->output[i]->name : "");

		g->t[idx].is_output = 1;
		g->outputs[g->noutputs++] = idx;
	}
	return 0;
}

/* The model in buf[0..len) as if read from path: errors name path and
 * external data is looked for in path's folder. */
static int load_mem(struct imp *im, const unsigned char *buf, size_t len)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
	int rc = -1;

	if (!m)
		return fail(im, "not a valid ONNX model (protobuf parse failed)");
	if (!m->graph) {
		fail(im, "not a valid ONNX model (it has no graph)");
		goto out;
	}
	im->dir = dir_of(im->path);
	if (!im->dir) {
		oom(im);
		goto out;
	}
	rc = import_graph(im, m);
out:
	onnx__model_proto__free_unpacked(m, NULL);
	free(im->dir);
	free(im->hash);
	if (rc < 0)
		cc_graph_free(im->g);
	return rc;
}

int cc_onnx_load_mem(const char *path, const void *buf, size_t len, struct cc_graph *g,
		     char *err, size_t errlen)
{
	struct imp im = { .path = path, .err = err, .errlen = errlen, .g = g };

	memset(g, 0, sizeof *g);
	if (err && errlen)
		err[0] = '\0';
	return load_mem(&im, buf, len);
}

int cc_onnx_load(const char *path, struct cc_graph *g, char *err, size_t errlen)
{
	struct imp im = { .path = path, .err = err, .errlen = errlen, .g = g };
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	memset(g, 0, sizeof *g);
	if (err && errlen)
		err[0] = '\0';
	if (read_file(&im, &buf, &len) < 0)
		return -1;
	rc = load_mem(&im, buf ? buf : (const unsigned char *)"", len);
	if (buf)
		munmap(buf, len);
	return rc;
}
