/* tensor_io.c: ONNX TensorProto files <-> struct om_tensor (see tensor_io.h).
 *
 * Reading accepts raw_data and every typed repeated field, converting to the little-endian
 * element bytes raw_data would have held; writing always uses raw_data.  The conversion mirrors
 * the compiler's initializer import (compiler/onnx_import.c), but this library must not depend
 * on the compiler's, so the few lines are kept here too. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tensor_io.h"
#include "onnx.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RT_MAX_RANK ((int)(sizeof ((struct om_tensor *)0)->dims / sizeof(int64_t)))

/* How one element type is stored in the typed fields of a TensorProto. */
enum field { F_NONE, F_FLOAT, F_INT32, F_INT64, F_DOUBLE, F_UINT64 };

struct dtype_info {
	size_t esize;     /* bytes per element in raw_data */
	enum field field; /* the typed field that may hold it instead */
	size_t per;       /* values of that field per element (2 for complex) */
};

static struct dtype_info dtype_info(int dt)
{
	switch (dt) {
	case 1: return (struct dtype_info){ 4, F_FLOAT, 1 };   /* float */
	case 2: case 3: case 9:                                 /* uint8, int8, bool */
		return (struct dtype_info){ 1, F_INT32, 1 };
	case 4: case 5: case 10: case 16:                       /* (u)int16, float16, bfloat16 */
		return (struct dtype_info){ 2, F_INT32, 1 };
	case 6: return (struct dtype_info){ 4, F_INT32, 1 };   /* int32 */
	case 7: return (struct dtype_info){ 8, F_INT64, 1 };   /* int64 */
	case 11: return (struct dtype_info){ 8, F_DOUBLE, 1 }; /* double */
	case 12: return (struct dtype_info){ 4, F_UINT64, 1 }; /* uint32 */
	case 13: return (struct dtype_info){ 8, F_UINT64, 1 }; /* uint64 */
	case 14: return (struct dtype_info){ 8, F_FLOAT, 2 };  /* complex64 */
	case 15: return (struct dtype_info){ 16, F_DOUBLE, 2 }; /* complex128 */
	default: return (struct dtype_info){ 0, F_NONE, 0 };   /* string, undefined */
	}
}

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int read_all(const char *path, unsigned char **buf, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	*buf = NULL;
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		fclose(f);
		return -1;
	}
	*buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!*buf || fread(*buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		snprintf(err, errlen, "%s: %s", path, *buf ? "read error" : "out of memory");
		free(*buf);
		*buf = NULL;
		fclose(f);
		return -1;
	}
	fclose(f);
	*len = (size_t)st.st_size;
	return 0;
}

/* The elements of t's shape, each dimension checked so that the byte count
 * (esize each) fits a size_t; -1 with the bad dimension named. */
static int count_elements(const char *path, const struct om_tensor *t, size_t esize,
			  uint64_t *numel, char *err, size_t errlen)
{
	*numel = 1;
	if (!esize) {
		snprintf(err, errlen, "%s: element type %d is not supported", path, t->dtype);
		return -1;
	}
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] < 0 ||
		    (t->dims[d] && *numel > SIZE_MAX / esize / (uint64_t)t->dims[d])) {
			snprintf(err, errlen, "%s: invalid dimension %" PRId64, path, t->dims[d]);
			return -1;
		}
		*numel *= (uint64_t)t->dims[d];
	}
	return 0;
}

/* The TensorProto's contents as little-endian bytes into t->data. */
static int decode(const char *path, const Onnx__TensorProto *tp, struct om_tensor *t, char *err,
		  size_t errlen)
{
	struct dtype_info di = dtype_info(t->dtype);
	uint64_t numel, nval;
	size_t need, count = 0;
	unsigned char *p;

	if (count_elements(path, t, di.esize, &numel, err, errlen))
		return -1;
	need = (size_t)numel * di.esize;
	nval = numel * di.per;
	if (tp->has_raw_data) {
		if (tp->raw_data.len != need) {
			snprintf(err, errlen, "%s: %zu bytes of data, but the shape needs %zu",
				 path, tp->raw_data.len, need);
			return -1;
		}
	} else {
		switch (di.field) {
		case F_FLOAT: count = tp->n_float_data; break;
		case F_INT32: count = tp->n_int32_data; break;
		case F_INT64: count = tp->n_int64_data; break;
		case F_DOUBLE: count = tp->n_double_data; break;
		default: count = tp->n_uint64_data; break;
		}
		if (count != nval) {
			snprintf(err, errlen, "%s: %zu values, but the shape needs %" PRIu64, path,
				 count, nval);
			return -1;
		}
	}
	p = malloc(need ? need : 1);
	if (!p) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if (tp->has_raw_data) {
		if (need)
			memcpy(p, tp->raw_data.data, need);
	} else {
		size_t vsize = di.esize / di.per;

		for (size_t i = 0; i < count; i++) {
			uint64_t v;
			uint32_t u;

			switch (di.field) {
			case F_FLOAT:
				memcpy(&u, &tp->float_data[i], 4);
				v = u;
				break;
			case F_INT32: v = (uint64_t)(int64_t)tp->int32_data[i]; break;
			case F_INT64: v = (uint64_t)tp->int64_data[i]; break;
			case F_DOUBLE: memcpy(&v, &tp->double_data[i], 8); break;
			default: v = tp->uint64_data[i]; break;
			}
			put_le(p + i * vsize, v, vsize);
		}
	}
	t->data = p;
	t->nbytes = need;
	return 0;
}

int om_tensor_read(const char *path, struct om_tensor *t, char *err, size_t errlen)
{
	unsigned char *buf;
	size_t len = 0, nlen;
	Onnx__TensorProto *tp;
	int rc = -1;

	memset(t, 0, sizeof *t);
	if (read_all(path, &buf, &len, err, errlen) < 0)
		return -1;
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!tp) {
		snprintf(err, errlen, "%s: not a valid TensorProto (protobuf parse failed)", path);
		return -1;
	}
	if (tp->n_dims > (size_t)RT_MAX_RANK) {
		snprintf(err, errlen, "%s: rank %zu exceeds the maximum of %d", path, tp->n_dims,
			 RT_MAX_RANK);
		goto out;
	}
	if (!tp->has_data_type || tp->data_type == 0) {
		snprintf(err, errlen, "%s: no data type", path);
		goto out;
	}
	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		snprintf(err, errlen, "%s: external data is not supported in tensor files", path);
		goto out;
	}
	if (tp->segment) {
		snprintf(err, errlen, "%s: segmented tensors are not supported", path);
		goto out;
	}
	t->dtype = tp->data_type;
	t->rank = (int)tp->n_dims;
	for (size_t d = 0; d < tp->n_dims; d++)
		t->dims[d] = tp->dims[d];
	if (decode(path, tp, t, err, errlen) < 0)
		goto out;
	/* names longer than the field are cut, always NUL-terminated */
	nlen = tp->name ? strlen(tp->name) : 0;
	if (nlen >= sizeof t->name)
		nlen = sizeof t->name - 1;
	if (nlen)
		memcpy(t->name, tp->name, nlen);
	t->name[nlen] = '\0';
	rc = 0;
out:
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (rc < 0)
		memset(t, 0, sizeof *t);
	return rc;
}

int om_tensor_write(const char *path, const struct om_tensor *t, char *err, size_t errlen)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	struct dtype_info di = dtype_info(t->dtype);
	int64_t dims[RT_MAX_RANK];
	char name[sizeof t->name];
	uint64_t numel;
	unsigned char *buf;
	size_t len;
	FILE *f;
	int rc = -1;

	if (t->rank < 0 || t->rank > RT_MAX_RANK) {
		snprintf(err, errlen, "%s: bad rank %d", path, t->rank);
		return -1;
	}
	if (count_elements(path, t, di.esize, &numel, err, errlen))
		return -1;
	for (int d = 0; d < t->rank; d++)
		dims[d] = t->dims[d];
	if (numel * di.esize != t->nbytes || (t->nbytes && !t->data)) {
		snprintf(err, errlen, "%s: tensor has %zu bytes, but its shape needs %" PRIu64,
			 path, t->nbytes, numel * di.esize);
		return -1;
	}
	/* copies, because protobuf-c's struct wants non-const pointers */
	memcpy(name, t->name, sizeof name);
	name[sizeof name - 1] = '\0';
	tp.name = name;
	tp.n_dims = (size_t)t->rank;
	tp.dims = dims;
	tp.has_data_type = 1;
	tp.data_type = t->dtype;
	tp.has_raw_data = 1;
	tp.raw_data.len = t->nbytes;
	tp.raw_data.data = t->data;
	len = onnx__tensor_proto__get_packed_size(&tp);
	buf = malloc(len ? len : 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	onnx__tensor_proto__pack(&tp, buf);
	f = fopen(path, "wb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
	} else {
		size_t w = fwrite(buf, 1, len, f);

		if (fclose(f) != 0 || w != len)
			snprintf(err, errlen, "%s: write error", path);
		else
			rc = 0;
	}
	free(buf);
	return rc;
}

void om_tensor_free(struct om_tensor *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
	t->nbytes = 0;
}
