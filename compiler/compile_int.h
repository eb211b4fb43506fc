/* compile_int.h: what the compiler library's compile.c and lower_*.c share:
 * the compile context, device tensors, tasks, and the prototypes of the shared
 * helpers (lower_util.c) and of every op's infer_* and lower_* (the op table,
 * ops.def).  Private to the compiler library.
 *
 * compile.c is the compiler driver: import, shape inference, lowering of each
 * node to a kernel, the memory plan, and the .om model.
 *
 * Device tensors: every activation lives in the workspace as fp16 in the
 * padded ND layout of kernels.h; constants go to the weights blob in the
 * layout their consumer wants.  Graph inputs and outputs cross the edge with
 * a cast kernel (the transdata), so the host sees ONNX's fp32. */

#ifndef DV_COMPILE_INT_H
#define DV_COMPILE_INT_H

#include <stdint.h>
#include <stdio.h>

#include "compile.h"
#include "graph.h"
#include "kernels.h"
#include "passes.h"
#include "tile_cache.h"
#include "sim.h"

/* W_INPUT: an integer graph input read in place from the host's buffer
 * (offset is the input's index): only index-taking kernels consume them. */
enum where { W_NONE, W_WS, W_WEIGHT, W_INPUT };

struct dev_tensor {
	enum where where;
	uint64_t offset, size; /* offset: in the weights; workspace offsets come from the plan */
	int64_t rows, cols;    /* ND: the leading dimensions' product, the last dimension */
	/* The layout, one value (read it through dev_format, dev_5hd, dev_c0):
	 * CC_FMT_NC1HWC0 for a 4-D tensor, [n][ceil(c/C0)][h][w][C0] with C0 =
	 * 16; CC_FMT_NC1HWC0_C04, C0 = 4, for a graph input read only by
	 * small-channel convs (CC_CONV_X_F16_C04); else padded ND (a zeroed
	 * entry reads as ND).  Elements are fp16 in every layout: the int8
	 * form of a tensor is a scratch of its own (q8). */
	enum cc_format fmt;
	int64_t n, c, h, w;
	int storage;           /* the tensor whose workspace bytes these are (views share) */
	/* where the tensor sits inside its storage (Concat in place,
	 * plan_concat.c; Slice/Split views): the byte offset of its first
	 * block, and with several images the storage's channel blocks per
	 * image (c1s; 0: the tensor's own, images dense) */
	struct dev_view {
		uint64_t off;
		int64_t c1s;
	} view;
	int first, last;       /* tasks that first and last touch the storage */
	int pinned;            /* placed before its producer lowers (a batch slice of
				* an L2-fused chain): cc_ws_place leaves it */
	/* 1 + a scratch holding the tensor also as int8 NC1HWC0 (C0 = 32) at
	 * scale q8_scale, written by its producer for int8 convs (0: none) */
	int q8;
	float q8_scale;
	/* a batch slice of an L2-fused chain (compile.c's batch_slice): 1 + the
	 * full tensor, and the slice's first image (0: not a slice) */
	int slice_of;
	int64_t slice_b0;
};

/* A device tensor's layout: NC1HWC0 with either C0 (the 5-D image
 * layouts), or ND. */
static inline int dev_5hd(const struct dev_tensor *d)
{
	return d->fmt == CC_FMT_NC1HWC0 || d->fmt == CC_FMT_NC1HWC0_C04;
}

static inline int dev_c04(const struct dev_tensor *d) { return d->fmt == CC_FMT_NC1HWC0_C04; }

static inline enum cc_format dev_format(const struct dev_tensor *d)
{
	return dev_5hd(d) ? d->fmt : CC_FMT_ND;
}

/* The lanes of the layout's innermost axis (ND's rows pad to 16 too). */
static inline int64_t dev_c0(const struct dev_tensor *d) { return dev_c04(d) ? 4 : 16; }

#define MAX_TASK_ARGS 8

/* A tensor a task consumes or produces (see cc_io_add), described at build time. */
struct task_io {
	int ti;              /* the graph tensor: its name */
	int shape;           /* the graph tensor with its logical dims (ti but for scratches) */
	enum cc_dtype dtype; /* as the task moves it */
	enum cc_format fmt;
};

struct task {
	char name[128], op_type[64];
	struct cc_prog prog;
	unsigned block_dim;
	struct om_arg args[MAX_TASK_ARGS];
	int argt[MAX_TASK_ARGS]; /* workspace args: the storage tensor, patched by the plan */
	unsigned nargs;
	uint64_t flops, bytes;
	char note[48]; /* a remark for its compile report line, or "" */
	struct task_io in[MAX_TASK_ARGS], out[MAX_TASK_ARGS];
	unsigned nin, nout;
	/* 1 + the task whose kernel this one runs with its own arguments (the
	 * slices of an L2-fused chain), or 0: its own prog */
	unsigned shared;
};


struct cc_ctx {
	const char *path;
	const struct soc_config *cfg;
	struct cc_graph g;
	struct dev_tensor *dev;
	struct task *tasks;
	unsigned ntasks, captasks;
	uint8_t *weights;
	uint64_t wbytes, wcap;
	uint64_t ws_bytes, ws_no_reuse;
	/* Concat in place (plan_concat.c): for tensors below vplan_n, the
	 * tensor whose storage holds it (vroot, -1: its own) and its channel
	 * block offset there */
	int *vroot;
	int64_t *vc1;
	const char **vwhy; /* why a planned tensor's set was refused, or NULL */
	int vplan_n;
	int concat_inplace, concat_copies; /* inputs of Concat nodes, for the report */
	int split_views, slice_views; /* SplitInPlacePass on; Slice/Split outputs made views */
	/* L2 fusion (plan_l2.c): the chains, the chain of each node (-1: none);
	 * while a chain lowers, identical weight blobs are laid out once */
	struct cc_l2chain {
		int first, last; /* node indices */
		int64_t S;       /* images per slice */
	} *l2;
	int *l2_at, nl2;
	int wdedupe;
	struct cc_wblob {
		uint64_t hash, off, bytes;
	} *wblobs;
	unsigned nwblobs, capwblobs;
	struct cc_pass_log log;
	struct cc_tile_cache *tiles; /* tilings chosen so far, by shape */
	/* --keep_all_outputs (keep_outputs.c): graph outputs from keep_from on
	 * are node outputs kept for a comparison; keep_node[k] is the node
	 * whose kernel computes outputs[keep_from + k] (NULL: not that mode) */
	int keep_from, *keep_node;
	/* cc_options.progress, or NULL */
	void (*progress)(void *ctx, const char *stage, unsigned done, unsigned total);
	void *progress_ctx;
	char *err;
	size_t errlen;
};

#define NODE_FAIL(c, n, ...) cc_node_fail(c, n, __VA_ARGS__)

/* Instructions of task i's kernel (its own, or the one it shares). */
static inline size_t task_insns(const struct cc_ctx *c, unsigned i)
{
	const struct task *t = &c->tasks[i];
	return t->shared ? c->tasks[t->shared - 1].prog.n : t->prog.n;
}

static inline struct cc_tensor *T(struct cc_ctx *c, int i) { return &c->g.t[i]; }

/* Checked: the dimensions come from a file.  validate.c bounds every
 * graph tensor well below overflow; a product that overflows anyway
 * saturates (an allocation that size fails cleanly) instead of wrapping. */
static inline int64_t dev_elems(const struct dev_tensor *d)
{
	int64_t f[5] = { d->rows, cc_pad16(d->cols), 1, 1, 1 }, e = 1, c0 = dev_c0(d);
	if (dev_5hd(d))
		f[0] = d->n, f[1] = (d->c + c0 - 1) / c0, f[2] = d->h, f[3] = d->w, f[4] = c0;
	for (int i = 0; i < 5; i++)
		if (__builtin_mul_overflow(e, f[i], &e))
			return INT64_MAX / 4;
	return e;
}

/* Whole 256-byte repeats plus DMA slack past the last element. */
static inline uint64_t dev_bytes(const struct dev_tensor *d)
{
	uint64_t b = (uint64_t)dev_elems(d) * 2;
	return (b + 511) / 512 * 512 + 512;
}

/* validate.c: the graph's structure checked before any pass runs (every
 * input defined, window attributes that agree with the weights, sizes the
 * SoC can hold); cc_check_size: tensor ti's shape against that size limit,
 * the error naming node n (NULL: before any node). */
int cc_validate_graph(struct cc_ctx *c);
int cc_check_size(struct cc_ctx *c, const struct cc_node *n, int ti);
int64_t cc_max_elems(const struct soc_config *cfg);

/* lower_util.c: shared helpers */
/* Each task's predicted_cycles (predict.c): the simulator's dry run of its
 * kernel alone on the chip. */
int cc_predict_tasks(const struct soc_config *cfg, struct om_model *m, char *err, size_t errlen);
/* Run every task once on the simulator (timing mode, memory laid out as the
 * runtime lays it out): -1 with err naming the task when a kernel breaks a
 * hardware rule (verify.c). */
int cc_verify_tasks(const struct soc_config *cfg, const struct om_model *m, char *err,
		    size_t errlen);
/* --keep_all_outputs (keep_outputs.c): mark every surviving node's output
 * a graph output (after the passes, before the plans and the lowering);
 * drop those the lowering computed inside another kernel; list them. */
int cc_keep_all_mark(struct cc_ctx *c);
/* ATC's --output_type value (output_type.c): marks the outputs' host_type;
 * errors name the flag.  NULL: nothing to do. */
int cc_output_type(struct cc_ctx *c, const char *v);
void cc_keep_all_prune(struct cc_ctx *c);
void cc_keep_all_json(struct cc_ctx *c, FILE *f);

int cc_fail(struct cc_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cc_node_fail(struct cc_ctx *c, const struct cc_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cc_shape_str(const struct cc_tensor *t, char *buf, size_t len);
int cc_set_shape(struct cc_tensor *t, enum cc_dtype dt, int rank, const int64_t *dims);
int cc_need_known(struct cc_ctx *c, struct cc_node *n, int k);
int infer_same(struct cc_ctx *c, struct cc_node *n);
void cc_rows_cols(const struct cc_tensor *t, int64_t *rows, int64_t *cols);
int cc_ws_place(struct cc_ctx *c, int ti);
/* A graph-less fp16 tensor for a lowering's intermediate, named
 * base#<what><index>, with a zeroed device-tensor entry (the table grows
 * with the graph); -1 when out of memory. */
int cc_tensor_new(struct cc_ctx *c, const char *base, const char *what, int rank,
		  const int64_t *dims);
int cc_scratch_new(struct cc_ctx *c, const char *base, uint64_t bytes);
int64_t cc_weight_add(struct cc_ctx *c, const void *data, uint64_t bytes);
float *cc_const_floats(struct cc_ctx *c, const struct cc_node *n, int ti);
int cc_weight_place_act(struct cc_ctx *c, const struct cc_node *n, int ti);
struct task *cc_task_new(struct cc_ctx *c, const char *name, const char *op);
void cc_arg_tensor(struct cc_ctx *c, struct task *t, int ti);
void cc_io_add(struct task *t, int output, int ti, int shape, enum cc_dtype dt,
	       enum cc_format fmt);
void cc_io_dev(struct cc_ctx *c, struct task *t, int output, int ti);
struct task *cc_output_task(struct cc_ctx *c, struct cc_node *n, int out);
void cc_one_in_one_out(struct cc_ctx *c, struct task *t, int xi, int out);
void cc_io_host(struct cc_ctx *c, struct task *t, int output, int ti, int shape,
		enum cc_dtype dt);
int cc_run_chain(struct cc_ctx *c, struct cc_node *n, const struct cc_vchain *ch,
		 const int *ins);
/* One cc_gen_logic kernel of n over the output's padded layout, reading
 * ins[0..nin-1] (each in the output's shape). */
int cc_logic_task(struct cc_ctx *c, struct cc_node *n, const struct cc_logic *lg,
		  const int *ins, int nin);
int cc_gen_edge(struct cc_ctx *c, const struct dev_tensor *d, int to_device,
		struct task *t, char *msg, size_t len);
int cc_relayout(struct cc_ctx *c, struct cc_node *n, int in, int out);
int cc_view_into(struct cc_ctx *c, struct cc_node *n, int in, int out);
int cc_dev_strides(const struct cc_tensor *t, int64_t *st);
int cc_act_input(struct cc_ctx *c, struct cc_node *n, int xi);
int cc_temp_new(struct cc_ctx *c, const struct cc_node *n, int rank, const int64_t *dims);
/* The lane axis of t's device layout (ND's last, NC1HWC0's C), and the
 * block-grid counts of that layout per logical axis. */
int cc_lane_axis(const struct cc_tensor *t);
void cc_grid_counts(const struct cc_tensor *t, int64_t *cnt);
/* Input 0 known and 4-D, else a node error. */
int cc_need4(struct cc_ctx *c, struct cc_node *n);
int cc_same_shape(const struct cc_tensor *a, const struct cc_tensor *b);
/* The int64 values of a constant integer tensor (NULL if it is not one). */
int64_t *cc_const_ints(struct cc_ctx *c, int ti, int64_t *cnt);
/* Node n's output 0 as an alias of its input 0 (same bytes and storage):
 * Identity, and any op that changes nothing. */
int cc_alias(struct cc_ctx *c, struct cc_node *n);
/* Node n lowered by lower on 4-D views: its input relaid out as dx, its
 * output computed as dy and relaid out back (the 1-D forms, 3-D
 * BatchNormalization); cc_lower_1d: a [N, C, L] node as [N, C, 1, L]. */
int cc_lower_as4d(struct cc_ctx *c, struct cc_node *n, const int64_t *dx, const int64_t *dy,
		  int (*lower)(struct cc_ctx *, struct cc_node *));
int cc_lower_1d(struct cc_ctx *c, struct cc_node *n,
		int (*lower)(struct cc_ctx *, struct cc_node *));

/* lower_move.c: copies and broadcasts of one tensor into another.  A box of
 * xi from b (out's dims its extents) with steps sp (NULL: 1); any numpy
 * broadcast of n's two inputs into its output by vop; xi (an activation or
 * a constant) broadcast into out, a workspace tensor of the broadcast
 * shape. */
int cc_box_copy(struct cc_ctx *c, struct cc_node *n, int xi, const int64_t *b,
		const int64_t *sp, int out);
int cc_bcast_nd(struct cc_ctx *c, struct cc_node *n, enum cc_vop vop);
int cc_expand_into(struct cc_ctx *c, struct cc_node *n, int xi, int out);
/* Input ti of n in n's output shape: itself, or expanded into a temporary
 * (-1 after NODE_FAIL). */
int cc_operand_full(struct cc_ctx *c, struct cc_node *n, int ti);

/* lower_vchain.c: the vector chain of node n and the element-wise nodes
 * fused into it (ins[] receives its inputs); the vector op of a binary or
 * variadic op (ops.def's vop). */
int cc_eltwise_chain(struct cc_ctx *c, struct cc_node *n, struct cc_vchain *out, int *ins);
enum cc_vop cc_binary_vop(const char *op);

/* lower_fold.c: a Transpose's perm attribute (default: reversed), and
 * whether all its readers are MatMul/Gemm operands that read its input in
 * place (then it produces no kernel and no tensor). */
int cc_transpose_perm(const struct cc_node *t, int rank, int64_t *perm);
int cc_transpose_folds(struct cc_ctx *c, const struct cc_node *tr);

/* Node n's tensor k: its inputs, then its outputs (-1: an omitted one). */
static inline int cc_node_tensor(const struct cc_node *n, int k)
{
	return k < n->nin ? n->in[k] : n->out[k - n->nin];
}

/* When a pass of the pipeline (passes.def) runs. */
enum cc_stage { CC_ST_GRAPH, CC_ST_INFER, CC_ST_FUSE, CC_ST_PLAN, CC_ST_LOWER };

/* plan_l2.c: which runs of nodes run a slice of the batch at a time (ATC's
 * L2 fusion): the number of chains, or -1. */
int cc_plan_l2(struct cc_ctx *c);

/* plan_concat.c: which tensors live inside a Concat's output (before
 * lowering; cc_ws_place places them there): the number of views, or -1. */
int cc_plan_concat(struct cc_ctx *c);
/* Why input k of concat n is copied, not in place (for the report). */
const char *cc_concat_why(struct cc_ctx *c, const struct cc_node *n, int k);
/* Whether every reader of tensor ti can take it with its images a stride
 * apart (channel blocks of a larger buffer), and it is no graph output. */
int cc_strided_readers_ok(struct cc_ctx *c, int ti);
/* out as a view of xi's bytes, boff bytes in, with the channel-block
 * stride c1s between images (0: dense); Slice and Split of whole blocks. */
int cc_view_at(struct cc_ctx *c, int xi, int out, uint64_t boff, int64_t c1s);
/* The channel-block stride between a tensor's images as kernels see it:
 * the storage's C1 for a view inside a concat buffer, else the tensor's. */
int64_t cc_c1_stride(const struct cc_ctx *c, int ti);

/* lower_convtask.c: one conv task as lower_conv.c (fp16) and lower_quant.c
 * (int8) describe it: x as the kernel reads it, the weights (w.ti: a
 * workspace FRACTAL_Z tensor, or -1 for weights at w_off in the blob) and a
 * residual (r.ti < 0: none), each with its graph tensor, type and layout;
 * the bias tensor (< 0: none) and its fp16 copy at b_off; int8's dequant
 * scales at deq_off (-1: none); y and its int8 form y8 (-1: none); the
 * flops, and the bytes its arguments do not count (the weights blob's). */
struct cc_conv_task {
	const char *op; /* the task's op type, before its fused ops */
	struct task_io x, w, r;
	int64_t w_off, b_off, deq_off;
	int bias, y, y8;
	uint64_t flops, bytes;
};
int cc_conv_task(struct cc_ctx *c, struct cc_node *n, struct cc_conv *cv,
		 const struct cc_conv_task *d);

/* lower_quant.c: int8 convolutions, QuantizeLinear / DequantizeLinear */
int cc_conv_int8_tasks(struct cc_ctx *c, struct cc_node *n, int xi, int wi, int bi, int ri,
		       int out, const struct cc_conv *cv, const float *w);
/* Whether the conv n writing out should also write it as int8 for the int8
 * convs that read it (cv's q8 fields set): the int8 scratch, -1 for no, -2
 * on error. */
int cc_q8_plan(struct cc_ctx *c, const struct cc_node *n, int out, struct cc_conv *cv);
/* The one scale at which int8 convs other than n read tensor t (their
 * input, or a residual read as int8), 0 when none does, -1 when they
 * disagree; *fp16: some reader (or the graph's output) wants fp16. */
float cc_q8_readers(struct cc_ctx *c, const struct cc_node *n, int t, int *fp16);
/* Images [b0, b0 + cnt) of full tensor t's int8 scratch (dev q8) as a
 * tensor of their own (a view), for a batch slice of t; -1 when out of
 * memory. */
int cc_q8_slice(struct cc_ctx *c, int t, int64_t b0, int64_t cnt);
int infer_qlinear(struct cc_ctx *c, struct cc_node *n);
int lower_qlinear(struct cc_ctx *c, struct cc_node *n);
/* The report's "precision" entries: every node, int8, fp32 or fp16 and
 * why. */
void cc_precision_json(struct cc_ctx *c, FILE *f);
/* ...and the text report's lines (none for a model without quantization). */
void cc_precision_text(struct cc_ctx *c, FILE *f);

/* lower_eltwise.c */
int infer_broadcast(struct cc_ctx *c, struct cc_node *n);
int infer_variadic(struct cc_ctx *c, struct cc_node *n);
int lower_clip(struct cc_ctx *c, struct cc_node *n);
int lower_unary(struct cc_ctx *c, struct cc_node *n);
int lower_pow(struct cc_ctx *c, struct cc_node *n);
int lower_binary(struct cc_ctx *c, struct cc_node *n);
int lower_variadic(struct cc_ctx *c, struct cc_node *n);

/* lower_matmul.c */
int infer_matmul(struct cc_ctx *c, struct cc_node *n);
int infer_gemm(struct cc_ctx *c, struct cc_node *n);
int infer_einsum(struct cc_ctx *c, struct cc_node *n);
int lower_matmul(struct cc_ctx *c, struct cc_node *n);
int lower_gemm(struct cc_ctx *c, struct cc_node *n);
int lower_einsum(struct cc_ctx *c, struct cc_node *n);

/* lower_conv.c */
int infer_conv(struct cc_ctx *c, struct cc_node *n);
int infer_pool(struct cc_ctx *c, struct cc_node *n);
int infer_convt(struct cc_ctx *c, struct cc_node *n);
int infer_gap(struct cc_ctx *c, struct cc_node *n);
int lower_conv(struct cc_ctx *c, struct cc_node *n);
int lower_convt(struct cc_ctx *c, struct cc_node *n);
int lower_maxpool(struct cc_ctx *c, struct cc_node *n);
int lower_avgpool(struct cc_ctx *c, struct cc_node *n);
int lower_gap(struct cc_ctx *c, struct cc_node *n);
int cc_conv_c04_input(struct cc_ctx *c, int ti, int asked);

/* lower_bn.c */
int lower_bn(struct cc_ctx *c, struct cc_node *n);

/* lower_conv3d.c: the rank-5 forms, composed from the 2-D lowerings (lower4:
 * lower_conv / lower_bn, run on 4-D views) */
int cc_infer_conv3d(struct cc_ctx *c, struct cc_node *n);
int cc_infer_pool3d(struct cc_ctx *c, struct cc_node *n);
int cc_lower_convt3d(struct cc_ctx *c, struct cc_node *n,
		     int (*lower4)(struct cc_ctx *, struct cc_node *));
int cc_lower_conv3d(struct cc_ctx *c, struct cc_node *n,
		    int (*lower4)(struct cc_ctx *, struct cc_node *));
int cc_lower_pool3d(struct cc_ctx *c, struct cc_node *n, int is_max);
int cc_lower_bn3d(struct cc_ctx *c, struct cc_node *n,
		  int (*lower4)(struct cc_ctx *, struct cc_node *));

/* lower_wlayout.c: node n's weights (in[1], not a constant) as a FRACTAL_Z
 * workspace tensor for a conv of cout x cin channels, one group
 * (transposed: ConvTranspose's [Cin, Cout, kh, kw], flipped); the
 * tensor, or -1 after NODE_FAIL. */
int cc_conv_weight_fz(struct cc_ctx *c, struct cc_node *n, int transposed, int64_t cout,
		      int64_t cin);

/* lower_norm.c */
int lower_softmax(struct cc_ctx *c, struct cc_node *n);
int infer_reduce(struct cc_ctx *c, struct cc_node *n);
int lower_reduce(struct cc_ctx *c, struct cc_node *n);
int infer_layernorm(struct cc_ctx *c, struct cc_node *n);
int lower_layernorm(struct cc_ctx *c, struct cc_node *n);

/* lower_shape.c */
int infer_flatten(struct cc_ctx *c, struct cc_node *n);
int infer_reshape(struct cc_ctx *c, struct cc_node *n);
int infer_transpose(struct cc_ctx *c, struct cc_node *n);
int infer_concat(struct cc_ctx *c, struct cc_node *n);
int infer_dropout(struct cc_ctx *c, struct cc_node *n);
int lower_identity(struct cc_ctx *c, struct cc_node *n);
int lower_view(struct cc_ctx *c, struct cc_node *n);
int lower_concat(struct cc_ctx *c, struct cc_node *n);
int infer_pad(struct cc_ctx *c, struct cc_node *n);
int lower_pad(struct cc_ctx *c, struct cc_node *n);
int lower_transpose(struct cc_ctx *c, struct cc_node *n);
int infer_resize(struct cc_ctx *c, struct cc_node *n);
int lower_resize(struct cc_ctx *c, struct cc_node *n);
int infer_squeeze(struct cc_ctx *c, struct cc_node *n);

/* lower_data.c */
int cc_int_input_check(struct cc_ctx *c, int ti);
int cc_int_input_raw(struct cc_ctx *c, int ti);
int infer_gather(struct cc_ctx *c, struct cc_node *n);
int lower_gather(struct cc_ctx *c, struct cc_node *n);
int infer_slice(struct cc_ctx *c, struct cc_node *n);
int lower_slice(struct cc_ctx *c, struct cc_node *n);
int infer_split(struct cc_ctx *c, struct cc_node *n);
int lower_split(struct cc_ctx *c, struct cc_node *n);
int infer_expand(struct cc_ctx *c, struct cc_node *n);
int lower_expand(struct cc_ctx *c, struct cc_node *n);

/* lower_logic.c */
int infer_compare(struct cc_ctx *c, struct cc_node *n);
int infer_where(struct cc_ctx *c, struct cc_node *n);
int lower_logic(struct cc_ctx *c, struct cc_node *n);
int infer_cast(struct cc_ctx *c, struct cc_node *n);
int lower_cast(struct cc_ctx *c, struct cc_node *n);

#endif
