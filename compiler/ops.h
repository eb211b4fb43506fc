/* ops.h: the op registry (ops.c over ops.def): each supported ONNX
 * operator's CANN type, inference and lowering, and the properties the
 * passes and plans ask about, so that no pass keeps its own list of op
 * names.  Adding an operator is one row of ops.def. */
#ifndef DV_OPS_H
#define DV_OPS_H

#include <stddef.h>
#include <stdio.h>

struct cc_ctx;
struct cc_node;

/* The properties: X(NAME, doc name, what it says, who asks).  One bit each
 * (CC_P_NAME); ops.def's last column is an or of them.  Two that hold for
 * the same ops today stay two when they answer different questions. */
#define CC_OP_PROPS(X)                                                                       \
	X(UNARY, "unary", "an activation of its one input, a member of element-wise chains",   \
	  "pass_fuse_eltwise.c, pass_fuse_matmul_bias.c")                                      \
	X(ARITH, "arith", "binary arithmetic: of two tensors, or of one and a constant "        \
	  "scalar (an immediate)", "pass_fuse_eltwise.c, pass_fuse_matmul_bias.c")             \
	X(INT, "int", "takes integer and bool inputs (moves, selects or wraps them)",           \
	  "lower_util.c")                                                                       \
	X(FP32, "fp32", "has an fp32 kernel (binary ops: as a chain, no broadcast)",            \
	  "pass_precision.c")                                                                   \
	X(MIX_FP32, "mix_fp32", "numerically sensitive: allow_mix_precision keeps it fp32",     \
	  "pass_precision.c")                                                                   \
	X(SUM_REDUCE, "sum_reduce", "a summing reduction: allow_mix_precision keeps a large "   \
	  "one fp32", "pass_precision.c")                                                       \
	X(CUBE, "cube", "runs on the cube, which has no fp32 mode", "pass_precision.c")         \
	X(MOVE, "move", "moves or selects values only (exact in fp16)", "pass_precision.c")     \
	X(ACT_FUSE, "act_fuse", "a Relu/Clip after it runs in its output path",                 \
	  "pass_fuse_act.c")                                                                    \
	X(QDQ_INT8, "qdq_int8", "an int8 kernel when its input and weights are QDQ int8",       \
	  "pass_qdq.c")                                                                         \
	X(QLINEAR, "qlinear", "QuantizeLinear or DequantizeLinear: folded when constant, "      \
	  "its parameters read at run time when not", "pass_qdq.c, pass_constfold.c, "         \
	  "pass_runtime_params.c")                                                              \
	X(C1_WRITER, "c1_writer", "writes its output's channel blocks itself, in place in a "   \
	  "Concat's buffer", "plan_concat.c")                                                   \
	X(C1_STRIDE, "c1_stride", "reads (and writes) a channel slice of a larger buffer",      \
	  "plan_concat.c")                                                                      \
	X(BATCH_SLICE, "batch_slice", "runs a batch slice at a time (L2 fusion)", "plan_l2.c")

enum cc_op_prop_bit {
#define CC_X(name, doc, what, who) CC_P_BIT_##name,
	CC_OP_PROPS(CC_X)
#undef CC_X
};
enum cc_op_prop {
#define CC_X(name, doc, what, who) CC_P_##name = 1u << CC_P_BIT_##name,
	CC_OP_PROPS(CC_X)
#undef CC_X
};

/* One row of ops.def. */
struct cc_op_info {
	const char *name, *cann;
	int (*infer)(struct cc_ctx *, struct cc_node *);
	int (*lower)(struct cc_ctx *, struct cc_node *);
	int vop;       /* the enum cc_vop computing it in one step, or -1 */
	int steps;     /* the most vector steps it takes in an element-wise chain */
	unsigned props; /* CC_P_* */
};

/* The row of ONNX operator op, or NULL. */
const struct cc_op_info *cc_op_find(const char *op);
/* Whether op (an ONNX operator name) has every property of props; 0 for
 * an operator ops.def does not list. */
int cc_op_has(const char *op, unsigned props);
/* A task's type as CANN names it, into out: its first ONNX op's (op_type
 * "Conv+Relu" is a Conv2D), or op_type as it is for a kernel the compiler
 * adds (TransData...). */
void cc_op_cann_type(const char *op_type, char *out, size_t n);
/* cc_supported_ops and cc_ops_markdown: compile.h. */

#endif
