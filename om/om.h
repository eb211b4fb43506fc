/* om.h: the .om offline-model container, written by the compiler and read
 * by the runtime.
 *
 * The file is an ELF64 little-endian object (readelf -S lists it):
 *   .text.<kernel>  one section per kernel: ISA code (SHT_PROGBITS, alloc+exec)
 *   .text.b<N>.<kernel>  a dynamic-batch model's batch-N variant's kernels
 *                   (struct om_model's variants)
 *   .weights        every constant in its device layout, one blob
 *   .om.meta        an om.proto Model message (protobuf-c): the SoC, the
 *                   tasks, tensor descriptors, the memory plan, and the
 *                   CRC-32 (zlib's polynomial) of every .text.<kernel> and of
 *                   .weights, which om_read verifies (a flipped weight or code
 *                   bit is an error); the metadata itself is checked field by
 *                   field.  A model without kernels is refused.
 *   .om.meta.crc    the CRC-32 of .om.meta (4 bytes, little endian), checked
 *                   before the metadata is parsed (format_version 2 on). 
 * Kernel arguments are resolved by the runtime: a task argument is either a
 * scalar or an offset into the weights, the workspace, an input or an output. */
#ifndef DV_OM_H
#define DV_OM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OM_MAX_RANK 8
/* The most -1 dimensions a dynamic-dims model's profiles give values for. */
#define OM_MAX_DYN_DIMS 8

/* Device buffers a model reads or writes need this many bytes beyond the
 * tensor: kernels move whole 32-byte blocks and 256-byte vector repeats past
 * a tensor's last element.  Part of the container's contract: the compiler
 * emits kernels relying on it, the runtime allocates it. */
#define OM_BUFFER_SLACK 1024

enum om_arg_kind { OM_ARG_SCALAR = 0, OM_ARG_WEIGHT = 1, OM_ARG_WORKSPACE = 2, OM_ARG_INPUT = 3,
		   OM_ARG_OUTPUT = 4 };

struct om_arg {
	enum om_arg_kind kind;
	int64_t value;  /* SCALAR: the value; otherwise a byte offset into the region */
	uint32_t index; /* INPUT / OUTPUT: which one */
};

struct om_task {
	char name[128];    /* the (fused) node's name */
	char op_type[64];  /* the ONNX ops it computes, e.g. "Conv", "Conv+Relu", "TransData" */
	char cann_type[32]; /* CANN's type for it (msprof's OP Type): "Conv2D"; "" in files
			     * written before */
	uint32_t kernel;   /* index into kernels */
	uint32_t block_dim;
	struct om_arg *args;
	uint32_t nargs;
	uint64_t flops; /* useful floating-point (or int) operations */
	uint64_t bytes; /* bytes the task must move from and to GM at least */
	uint64_t predicted_cycles; /* the compiler's dry run of it alone (0: unknown) */
	/* What the task consumes and produces, for profiles: logical dims, the
	 * dtype and format the task moves them in, size = their bytes at that
	 * dtype, offset 0.  Older files have none (counts 0, arrays NULL). */
	struct om_tensor_desc *inputs, *outputs;
	uint32_t ninputs, noutputs;
};

struct om_tensor_desc {
	char name[256];
	int32_t dtype;  /* ONNX TensorProto.DataType */
	int32_t format; /* enum cc_format values (ACL's aclFormat numbers) */
	int32_t rank;
	int64_t dims[OM_MAX_RANK];
	uint64_t offset; /* memory plan: byte offset in the workspace (activations) */
	uint64_t size;   /* bytes */
	/* inputs and outputs: the type the tasks see when the runtime converts
	 * at the edge (om.proto), else 0 */
	int32_t device_dtype;
};

struct om_kernel {
	char name[128];
	uint8_t *code;
	uint64_t bytes;
};

struct om_model {
	char name[128];
	char soc[64]; /* the SoC it was compiled for */
	struct om_kernel *kernels;
	uint32_t nkernels;
	struct om_task *tasks;
	uint32_t ntasks;
	struct om_tensor_desc *inputs; /* as the host provides them (ONNX dtype, NCHW/ND) */
	uint32_t ninputs;
	struct om_tensor_desc *outputs;
	uint32_t noutputs;
	struct om_tensor_desc *tensors; /* the memory plan: every workspace tensor */
	uint32_t ntensors;
	uint8_t *weights;
	uint64_t weights_bytes;
	uint64_t workspace_bytes;
	/* om_read's file, kept open: weights and every kernel's code point into
	 * its read-only mapping instead of malloc'd copies (a model's weights are
	 * most of its bytes), and the runtime maps the weights copy-on-write
	 * from it (om_weights_file).  NULL for a model built in memory, whose
	 * arrays om_free frees.  The file must not be rewritten in place while
	 * the model is open; om_write replaces files by rename. */
	struct om_file *file;
	/* A dynamic-batch model (simatc --dynamic_batch_size): batch is the batch
	 * size this program was compiled for (0: a static model).  The model
	 * itself is the program of the largest size, whose workspace_bytes is
	 * the largest of all (one memory plan serves every size); variants are
	 * the programs of the other sizes, ascending.  A variant is a complete
	 * model (name, SoC, kernels, tasks, descriptors, its own
	 * workspace_bytes) whose weights are its parent's: its weight arguments
	 * are offsets into the parent's weights, which it points at (and its
	 * file is the parent's), so it frees neither (is_variant). */
	int64_t batch;
	struct om_model *variants;
	uint32_t nvariants;
	int is_variant;
	/* A dynamic-dims model (simatc --dynamic_dims): dims[0..ndims) are the
	 * values this program was compiled for of the -1 dimensions of
	 * --input_shape, in their order (ndims 0: not one; batch is then 0).
	 * The model itself is the last profile's program, its workspace_bytes
	 * the largest of all; variants are the other profiles' programs, in the
	 * order given, each with ndims values (the profiles distinct). */
	int64_t dims[OM_MAX_DYN_DIMS];
	uint32_t ndims;
};

/* The most variants a dynamic-batch model holds (ATC's limit on
 * --dynamic_batch_size, and on --dynamic_dims's profiles). */
#define OM_MAX_VARIANTS 100

/* The program of m for batch size b: m itself or one of its variants; NULL
 * when m has no program of that size (a static model has none: its batch is
 * 0).  om_variant_at_least: the smallest program whose size is b or more
 * (the one a smaller batch runs padded), NULL when b exceeds them all. */
const struct om_model *om_variant(const struct om_model *m, int64_t b);
const struct om_model *om_variant_at_least(const struct om_model *m, int64_t b);
/* The batch sizes of m, ascending, into sizes (room for OM_MAX_VARIANTS +
 * 1): their number, 0 for a static model. */
unsigned om_batch_sizes(const struct om_model *m, int64_t *sizes);
/* A dynamic-dims model's profile k (0..nvariants, in the order given: its
 * variants, then the model itself), NULL beyond; om_variant_dims: the
 * program of the n values dims, NULL when none (a model that is not a
 * dynamic-dims one has none). */
const struct om_model *om_dims_profile(const struct om_model *m, unsigned k);
const struct om_model *om_variant_dims(const struct om_model *m, const int64_t *dims, unsigned n);
/* "224x224" for a program's dims into buf. */
void om_dims_name(const struct om_model *m, char *buf, size_t len);

/* Where a model's buffers lie on a device (or in any address space). */
struct om_places {
	uint64_t weights, workspace;
	const uint64_t *inputs, *outputs; /* [ninputs], [noutputs] */
};
/* Task t's kernel arguments (its first t->nargs) with the buffers at p:
 * scalars as they are, the others their buffer's address plus the offset.
 * The runtime, the compiler's prediction and its verification resolve them
 * here, so they cannot disagree. */
void om_task_args(const struct om_task *t, const struct om_places *p, int64_t *args);

/* Edge conversions (om_edge.c): the type the tasks see for a boundary
 * dtype the device does not compute in (0: none); the bytes of a
 * descriptor at that type (its size when it has none); and the conversion
 * of its elements from the user's type to the device's (to_device) or
 * back. */
int32_t om_edge_device_dtype(int32_t dtype);
uint64_t om_edge_device_bytes(const struct om_tensor_desc *d);
void om_edge_convert(const struct om_tensor_desc *d, int to_device, const void *src, void *dst);

/* Write m to path; nothing is left behind on failure. */
int om_write(const char *path, const struct om_model *m, char *err, size_t errlen);
/* Read and validate every field (kernel indices, argument offsets within
 * their regions, code sizes, descriptor shapes...) and the metadata's and
 * code's CRC-32s.  expect_soc, when not NULL, must equal the model's SoC.
 * Errors name the file and the field.  The weights' CRC-32 is checked by
 * om_verify_weights, when something first reads them. */
int om_read(const char *path, struct om_model *m, const char *expect_soc, char *err,
	    size_t errlen);
/* Closes m's file too (models from om_read). */
void om_free(struct om_model *m);
/* After every kernel's code has been decoded: let its pages leave memory (a
 * later read maps them from the file again).  Nothing for a model built in
 * memory. */
void om_drop_code(const struct om_model *m);
/* Where m's weights lie in its file: 0 with the open descriptor and the byte
 * offset of weights[0] for a model from om_read, -1 for one built in memory. */
int om_weights_file(const struct om_model *m, int *fd, uint64_t *offset);
/* 0 when m's weights match their recorded CRC-32 (checked once; a model
 * built in memory or without checksums has nothing to check), else -1 with
 * an error naming the file and section.  bytes: where to read them, m's
 * weights_bytes of them (m->weights, or a mapping of the same file part
 * that is read anyway: reading the file's own mapping too would map every
 * page twice, and count twice in the peak RSS); NULL means m->weights. */
int om_verify_weights(const struct om_model *m, const uint8_t *bytes, char *err,
		      size_t errlen);
/* The model's op types (pointers into its tasks) and their task counts,
 * most first, ties by name: the number of types, or -1 when out of memory;
 * the caller frees both arrays.  ...printed as "Conv+Relu 52, Gemm 1". */
int om_task_types(const struct om_model *m, const char ***types, unsigned **counts);
void om_print_task_types(const struct om_model *m, FILE *f);

/* msprof's names for an ONNX TensorProto.DataType ("FLOAT16", "FLOAT", "INT32")
 * and an ACL aclFormat ("NCHW", "NC1HWC0", "FRACTAL_Z"): "UNDEFINED" for any
 * value without one, so the result can always be printed. */
const char *om_dtype_name(int32_t dtype);
const char *om_format_name(int32_t format);

#endif
