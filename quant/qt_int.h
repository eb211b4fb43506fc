/* qt_int.h: what quant.c and qdq.c share (not a public API). */
#ifndef DV_QT_INT_H
#define DV_QT_INT_H

#include "onnx.pb-c.h"
#include "quant.h"

/* One calibrated activation tensor. */
struct qt_act {
	char *name;
	int graph_input; /* its statistics come from the inputs directly */
	int out_index;   /* its output in the calibration model, or -1 */
	struct qt_stats st;
	double threshold, scale;
};

enum qt_why { QT_INT8, QT_SKIP_NAME, QT_SKIP_TYPE, QT_SKIP_AUTO, QT_NOT_CONST };

/* One Conv / Gemm / MatMul node. */
struct qt_node {
	size_t index;      /* in graph->node */
	const char *name, *op;
	enum qt_why why;
	char detail[256];  /* why it stays fp32, when it does */
	const char *x, *w, *b; /* activation, weight, bias (b may be NULL) */
	int axis;          /* the weight's output-channel axis */
	int bias_ok;       /* the bias may become int32 (1-D, one per channel) */
	int act;           /* index into the qt_act array */
	double sqnr;       /* auto_skip: output SQNR with only this node quantized */
};

/* The quantizable nodes of m and why each would stay fp32; the activation
 * tensors they need (*acts, deduplicated).  Errors: opset too old to raise. */
int qdq_analyze(const Onnx__ModelProto *m, const char *skip_nodes, const char *skip_types,
		struct qt_node **nodes, size_t *nnodes, struct qt_act **acts, size_t *nacts,
		char *err, size_t errlen);

/* Rewrite m: the nodes with why == QT_INT8 (or, when only >= 0, that one
 * node alone: auto_skip's measurement, which the compiler runs as an int8
 * layer) get their Q/DQ pairs.  add_q: an Add of a Conv's result and a
 * residual that int8 convs also read takes the residual through their pair
 * (int8 across the Add). */
int qdq_rewrite(Onnx__ModelProto *m, struct qt_node *nodes, size_t nnodes,
		const struct qt_act *acts, enum qt_gran gran, long only, int add_q, char *err,
		size_t errlen);

/* Add the named tensors as graph outputs (untyped) after the existing ones. */
int qdq_add_outputs(Onnx__ModelProto *m, char *const *names, size_t n);

/* A float initializer's values (raw_data or float_data); NULL when it is not
 * a float initializer with data in the file.  *dims / *rank describe it. */
float *qdq_init_floats(const Onnx__TensorProto *t, size_t *count);
const Onnx__TensorProto *qdq_find_init(const Onnx__GraphProto *g, const char *name);

#endif
