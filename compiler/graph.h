/* graph.h: the compiler's graph IR.
 *
 * A graph is arrays of tensors and nodes that refer to each other by index.
 * Tensors hold their element type, their shape (with the symbolic name of
 * each dimension ONNX gave, if any) and, for constants (initializers and
 * Constant nodes), their data as little-endian bytes.  Passes mark nodes
 * dead rather than removing them, so indices stay valid; cc_graph_compact
 * rebuilds the arrays when a pass wants them dense. */
#ifndef DV_GRAPH_H
#define DV_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#define CC_MAX_RANK 8

/* Element types; the values are ONNX's TensorProto.DataType numbers. */
enum cc_dtype {
	CC_UNDEFINED = 0,
	CC_F32 = 1,
	CC_U8 = 2,
	CC_I8 = 3,
	CC_U16 = 4,
	CC_I16 = 5,
	CC_I32 = 6,
	CC_I64 = 7,
	CC_STRING = 8,
	CC_BOOL = 9,
	CC_F16 = 10,
	CC_F64 = 11,
	CC_U32 = 12,
	CC_U64 = 13,
	CC_BF16 = 16,
};

/* Memory layouts (the values are ACL's aclFormat numbers). */
enum cc_format { CC_FMT_NCHW = 0, CC_FMT_NHWC = 1, CC_FMT_ND = 2, CC_FMT_NC1HWC0 = 3,
		 CC_FMT_FRACTAL_Z = 4, CC_FMT_NC1HWC0_C04 = 12, CC_FMT_FRACTAL_NZ = 29 };

struct cc_tensor {
	char *name;
	enum cc_dtype dtype;
	int rank; /* -1: unknown (not yet inferred) */
	int64_t dims[CC_MAX_RANK];
	char *dim_param[CC_MAX_RANK]; /* symbolic name of a dynamic dimension, else NULL */
	void *data;                   /* constant contents, NULL otherwise */
	size_t nbytes;
	int producer;                 /* node index, or -1 for inputs and constants */
	int is_input, is_output;
	/* 1: a pass changed what the tensor holds (pass_fuse_attention.c moves
	 * a scale past the MatMul writing it): not the model's value, so
	 * --keep_all_outputs never shows it */
	int altered;
	/* a graph input's or output's ONNX type that the device does not
	 * compute in (float64, bfloat16, int16, uint16, uint32, uint64): dtype
	 * is then the type the tasks see and the runtime converts at the edge
	 * (om/om_edge.c); 0 otherwise.  Set by cc_compile. */
	enum cc_dtype edge;
	/* a graph output's type on the host when ATC's --output_type names one
	 * (output_type.c): its output edge converts to it; 0: dtype (or edge) */
	enum cc_dtype host_type;
};

enum cc_attr_type { CC_ATTR_FLOAT = 1, CC_ATTR_INT = 2, CC_ATTR_STRING = 3, CC_ATTR_TENSOR = 4,
		    CC_ATTR_FLOATS = 6, CC_ATTR_INTS = 7, CC_ATTR_STRINGS = 8 };

struct cc_attr {
	char *name;
	enum cc_attr_type type;
	int64_t i;
	float f;
	char *s;           /* STRING */
	int64_t *ints;     /* INTS */
	float *floats;     /* FLOATS */
	size_t n;          /* element count of INTS / FLOATS */
	int tensor;        /* TENSOR: index into the graph's tensors */
};

struct cc_node {
	char *name;
	char *op;     /* ONNX op_type */
	char *domain; /* "" for the default domain */
	int *in;      /* tensor indices; -1 for an omitted optional input */
	int nin;
	int *out;
	int nout;
	struct cc_attr *attrs;
	int nattrs;
	int dead;
	/* set by fusion passes: an activation applied to this node's output,
	 * and the ops folded into it (for the report) */
	int act; /* enum cc_act of kernels.h */
	float act_lo, act_hi;
	char fused[128];
	int chain_prev; /* element-wise fusion: 1 + the node computed just before, or 0 */
	/* MatMul/Gemm (pass_fuse_matmul_bias.c): 1 + the last node of an
	 * element-wise chain its kernel runs on the output, or 0 */
	int epilogue;
	/* residual fusion (pass_fuse_residual.c): the index in in[] of a tensor
	 * added to the output before act, or 0 (in[0] is never it) */
	int res_in;
	/* int8 (pass_qdq.c): a Conv whose input was quantized per tensor with
	 * scale q_x_scale (> 0) and whose constant weights are int8 times
	 * q_w_scale[output channel]; q_note says why a node with quantized
	 * inputs stays fp16 (for the report). */
	float q_x_scale;
	float *q_w_scale;
	/* an int8 Conv with a fused residual (pass_fuse_residual.c) whose
	 * residual the QDQ graph quantizes per tensor at this scale (> 0): the
	 * kernel reads it as int8 and dequantizes it on chip; 0: fp16 */
	float q_r_scale;
	char q_note[96];
	/* mixed precision (pass_precision.c): 1 when the node's kernel computes
	 * in fp32 on the vector unit (its tensors stay fp16 in memory);
	 * prec_note says why it does or why it cannot */
	int fp32;
	char prec_note[96];
};

struct cc_graph {
	char *name;
	int64_t opset; /* of the default domain */
	struct cc_tensor *t;
	int nt, capt;
	struct cc_node *n;
	int nn, capn;
	int *inputs; /* graph inputs that are not initializers, in order */
	int ninputs;
	int *outputs;
	int noutputs;
};

/* Import an ONNX model file.  Initializers and Constant nodes become
 * constant tensors (Constant nodes are removed); external data is read
 * relative to the model's directory.  Errors name the file and, where it
 * applies, the node or tensor; returns 0 or -1. */
int cc_onnx_load(const char *path, struct cc_graph *g, char *err, size_t errlen);
/* The same for a model already in memory (the fuzzer's input): path only
 * names it in errors and gives the folder external data is read from. */
int cc_onnx_load_mem(const char *path, const void *buf, size_t len, struct cc_graph *g,
		     char *err, size_t errlen);
/* A pass's new node array: nn (n nodes, n its capacity) replaces the old
 * array, which is freed (not the nodes it held), and every tensor's
 * producer follows the new order. */
void cc_graph_set_nodes(struct cc_graph *g, struct cc_node *nn, int n);
/* Free a node's attributes (the array too; nattrs becomes 0). */
void cc_attrs_free(struct cc_node *n);
/* Free everything a node holds (its names, inputs, outputs, attributes). */
void cc_node_free(struct cc_node *n);
void cc_graph_free(struct cc_graph *g);

/* Lookups and construction used by passes. */
int cc_tensor_find(const struct cc_graph *g, const char *name);
int cc_tensor_add(struct cc_graph *g, const char *name, enum cc_dtype dt, int rank,
		  const int64_t *dims);
const struct cc_attr *cc_attr_find(const struct cc_node *n, const char *name);
int64_t cc_attr_int(const struct cc_node *n, const char *name, int64_t dflt);
float cc_attr_float(const struct cc_node *n, const char *name, float dflt);
size_t cc_dtype_size(enum cc_dtype dt); /* 0 for STRING and UNDEFINED */
const char *cc_dtype_name(enum cc_dtype dt);
int64_t cc_tensor_numel(const struct cc_tensor *t); /* -1 if the shape is unknown */

#endif
