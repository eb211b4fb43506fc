/* tensor_io.h: ONNX TensorProto files (input_N.pb / output_N.pb, the layout
 * of the ONNX backend tests) to and from plain host tensors. */
#ifndef DV_TENSOR_IO_H
#define DV_TENSOR_IO_H

#include <stddef.h>
#include <stdint.h>

struct om_tensor {
	char name[256];
	int dtype; /* ONNX TensorProto.DataType (1 float, 10 float16, 7 int64, ...) */
	int rank;
	int64_t dims[8];
	void *data; /* little-endian elements, malloc'd */
	size_t nbytes;
};

/* Read a TensorProto; raw_data and the typed repeated fields are both
 * accepted.  Returns 0 or -1 with a message naming the file. */
int om_tensor_read(const char *path, struct om_tensor *t, char *err, size_t errlen);
/* Write as a TensorProto with raw_data. */
int om_tensor_write(const char *path, const struct om_tensor *t, char *err, size_t errlen);
void om_tensor_free(struct om_tensor *t);

#endif
