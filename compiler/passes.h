/* passes.h: graph passes, one file each.  Each returns the number of
 * changes it made (>= 0) or -1 with a message in err, and appends a line
 * describing what it did to the report buffer. */
#ifndef DV_PASSES_H
#define DV_PASSES_H

#include <stddef.h>

#include "graph.h"

struct cc_pass_log {
	char *buf; /* the report text, grown as passes append to it */
	size_t len, cap;
};
void cc_log(struct cc_pass_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clip's bounds: attributes before opset 11, optional constant inputs
 * after; -1 when an input bound is not a constant scalar. */
int cc_clip_bounds(const struct cc_graph *g, const struct cc_node *n, float *lo, float *hi);
/* A Clip bound that fp16 would round to zero keeps its sign (pass_util.c). */
void cc_clip_keep_sign(float *lo, float *hi);

/* Append src to the NUL-terminated dst of size bytes, truncating. */
void cc_strlcat(char *dst, size_t size, const char *src);

/* Uses of tensor t by live nodes (+1 if it is a graph output). */
int cc_tensor_uses(const struct cc_graph *g, int t);
/* Node d, new: op(in, in2) -> out, named base+suffix; in2 < 0: one input
 * (room for two either way).  0, or -1 out of memory: cc_node_free
 * (graph.h) then frees what d holds. */
int cc_node_make(struct cc_node *d, const char *base, const char *suffix, const char *op,
		 int in, int in2, int out);
/* The single live node reading tensor t, or -1 (none, several, or a graph output). */
int cc_sole_consumer(const struct cc_graph *g, int t);

/* Identity nodes removed (their consumers read the input) and nodes whose
 * outputs nobody uses marked dead. */
int cc_pass_dce(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);
/* BatchNormalization after a Conv with constant weights folded into them. */
int cc_pass_bnfold(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);
/* Relu, Clip (ReLU6) after a Conv fused into its output path. */
int cc_pass_fuse_act(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);

/* QDQ models: constant Quantize/DequantizeLinear folded, and Convs whose
 * input and weights are symmetric int8 marked to run in int8 (pass_qdq.c;
 * before BatchNormalization folding). */
int cc_pass_qdq(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);
/* A QuantizeLinear or DequantizeLinear with constant inputs folded (as
 * cc_fold_node). */
int cc_fold_qdq(struct cc_graph *g, int node);

/* Which nodes compute in fp32 (n->fp32, n->prec_note): mode is enum
 * cc_precision_mode (compile.h), keep_dtype ATC's --keep_dtype file or NULL
 * (pass_precision.c; after shape inference and the fusions).  Returns the
 * fp32 node count, or -1 with err naming the file and line. */
int cc_pass_precision(struct cc_graph *g, int mode, const char *keep_dtype, const char *soc,
		      struct cc_pass_log *log, char *err, size_t errlen);
/* A kernel without an fp32 path: the node computes fp16, and its note says why. */
void cc_prec_fp16_only(struct cc_node *n, const char *why);

/* ReduceL2, ReduceSumSquare and ReduceL1 as element-wise ops and ReduceSum
 * (pass_decompose.c): the count, or -1 with err. */
/* pass_bn_training.c: BatchNormalization in training mode as the ops of its
 * batch statistics. */
int cc_pass_bn_training(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);
/* pass_einsum.c: Einsum forms other than batched matrix products as
 * Mul/ReduceSum/Transpose. */
int cc_pass_einsum(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);
/* pass_runtime_params.c: Clip, constant Pad, LayerNormalization and per-tensor
 * Q/DQ whose float parameters are run-time tensors, as element-wise ops. */
int cc_pass_runtime_params(struct cc_graph *g, struct cc_pass_log *log, char *err,
			   size_t errlen);
int cc_pass_decompose(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);
/* Constant folding of one node (see pass_constfold.c): 1 folded, 0 not
 * foldable, -1 out of memory.  Called in order during shape inference. */
int cc_fold_node(struct cc_graph *g, int node);
/* Any other node whose inputs are all constants, evaluated whole into y
 * (fold_eval.c): 1 folded, 0 not, -1 out of memory. */
int cc_fold_eval(struct cc_graph *g, struct cc_node *n, struct cc_tensor *y);

/* An Add of a Conv's output and another activation of its shape (and a
 * Relu/Clip after it) fused into the Conv's output path (after shape
 * inference, before the element-wise fusion). */
int cc_pass_fuse_residual(struct cc_graph *g, struct cc_pass_log *log, char *err,
			  size_t errlen);

/* A constant scale of attention scores (on the scores, or on Q or K before
 * their MatMul) fused into the Softmax (after shape inference). */
int cc_pass_fuse_attention(struct cc_graph *g, struct cc_pass_log *log, char *err,
			   size_t errlen);

/* torch's decomposed nn.LayerNorm (ReduceMean, Sub, Pow, ReduceMean, Add,
 * Sqrt, Div, Mul, Add) into one LayerNormalization node (after shape
 * inference, before the element-wise fusion). */
int cc_pass_fuse_layernorm(struct cc_graph *g, struct cc_pass_log *log, char *err,
			   size_t errlen);

/* The GELU subgraphs torch exports (erf and tanh forms) into one Gelu node
 * (after shape inference, before the element-wise fusion). */
int cc_pass_fuse_gelu(struct cc_graph *g, struct cc_pass_log *log, char *err, size_t errlen);

/* An Add of a MatMul's output and a constant row of N values ([N] or
 * [1, ..., 1, N]) fused into the MatMul as its bias, in[2] (after shape
 * inference, before the element-wise fusion). */
int cc_pass_fuse_matmul_bias(struct cc_graph *g, struct cc_pass_log *log, char *err,
			     size_t errlen);

/* An element-wise node or fused chain that alone reads a MatMul's or
 * Gemm's output run in the MatMul kernel's output path (its epilogue).
 * Runs after the element-wise fusion. */
int cc_pass_fuse_matmul_eltwise(struct cc_graph *g, struct cc_pass_log *log, char *err,
				size_t errlen);

/* Chains of element-wise nodes into one vector kernel (after shape inference). */
int cc_pass_fuse_eltwise(struct cc_graph *g, struct cc_pass_log *log, char *err,
			 size_t errlen);

#endif
