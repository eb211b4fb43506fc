/* kernels.h: kernel generators: each lowers one (fused) operation with
 * compile-time shapes to an ISA program for a given SoC.
 *
 * Device layout of activations: fp16, ND with the last dimension padded to a
 * multiple of 16 elements (32 bytes), so every row starts on a 32-byte DMA
 * block; the padding's contents are undefined.  "rows" is the product of the
 * leading dimensions, "cols" the last dimension before padding. */
#ifndef DV_KERNELS_H
#define DV_KERNELS_H

#include <stdint.h>

#include "emit.h"
#include "graph.h" /* enum cc_dtype */
#include "soc.h"

static inline int64_t cc_pad16(int64_t x) { return (x + 15) / 16 * 16; }
/* A vtranspose over a band of rows nb blocks wide takes nb as both its
 * repeat count and its block stride: the smaller field bounds nb. */
#define CC_VT_BAND_MAX                                                                     \
	(ISA_VEC_REP_MAX < ISA_VEC_BSTRIDE_MAX ? ISA_VEC_REP_MAX : ISA_VEC_BSTRIDE_MAX)
/* x rounded up to a multiple of m (x >= 0, m > 0): UB buffers start 256-byte aligned */
static inline int64_t cc_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* An element-wise chain over fp16 tensors of the same padded shape: slots
 * 0..nin-1 are the inputs; step i writes slot nin+i; the last step's slot is
 * the output.  Arguments: inputs 0..nin-1, then the output. */
enum cc_vop { CC_V_ADD, CC_V_SUB, CC_V_MUL, CC_V_DIV, CC_V_MAX, CC_V_MIN, CC_V_RELU, CC_V_EXP,
	      CC_V_LN, CC_V_SQRT, CC_V_REC, CC_V_ABS, CC_V_ADDS, CC_V_MULS, CC_V_MAXS,
	      CC_V_MINS,
	      /* several instructions each, through temporary slots of their own
	       * (kern_vchain.c): erf and tanh as clipped rational polynomials,
	       * within 4 fp16 ulps (|error| <= 1.95e-3) */
	      CC_V_RSQRT, CC_V_ERF, CC_V_TANH };
struct cc_vstep {
	enum cc_vop op;
	int a, b;     /* source slots (b for binary ops) */
	float scalar; /* the *S forms */
};
#define CC_MAX_VSTEPS 32
struct cc_vchain {
	int nin;
	int nsteps;
	struct cc_vstep step[CC_MAX_VSTEPS];
	/* compute in fp32 (mixed precision; cc_gen_vchain only): the fp16
	 * inputs widened in the UB, every step fp32, the result rounded once */
	int f32;
};
int cc_gen_vchain(const struct soc_config *cfg, const struct cc_vchain *ch, int64_t elems,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* The pieces other kernels share to run a chain on data already in the UB
 * (a fused epilogue): the number of slots (the inputs, one per step, then
 * the temporaries of Erf/Tanh steps); the chain over rep 256-byte repeats
 * at UB addresses slot[0 .. nslots-1] (slots may share an address as
 * cc_vchain_buffers assigns them); a sharing of buffers by liveness
 * (buf[slot], the inputs in buffers 0..nin-1; returns the buffer count).
 * cc_vchain_emit uses registers x16..x18 and x25. */
int cc_vchain_nslots(const struct cc_vchain *ch);
void cc_vchain_emit(struct cc_prog *p, const struct cc_vchain *ch, const int64_t *slot,
		    int64_t rep);
int cc_vchain_buffers(const struct cc_vchain *ch, int *buf);
struct cc_tile_cache;

/* Edge conversions between the host's fp32 ND tensor [rows, cols] and the
 * device's fp16 padded layout.  Arguments: 0 source, 1 destination. */
int cc_gen_cast_in(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		   unsigned *block_dim, char *err, size_t errlen);
int cc_gen_cast_out(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		    unsigned *block_dim, char *err, size_t errlen);
/* ...towards a host tensor of fp16 (--output_type=FP16): the padding
 * dropped, no conversion; rows too long for the UB are refused (the caller
 * then converts through fp32). */
int cc_gen_cast_out_f16(const struct soc_config *cfg, int64_t rows, int64_t cols,
			struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
int cc_cast_out_f16_fits(const struct soc_config *cfg, int64_t cols);

/* C [M, N] = A [M, K] x B [K, N] (+ bias [N]) in fp16 with fp32 accumulation.
 * A and C in the device layout; B either the device layout (an activation) or,
 * b_nz, a constant pre-laid as [N/16][K16][16] (cc_layout_b_nz); the bias is
 * fp16 [N16].  Arguments: 0 A, 1 B, 2 C, 3 bias (when has_bias). */
int cc_gen_matmul(const struct soc_config *cfg, int64_t M, int64_t K, int64_t N, int b_nz,
		  int has_bias, struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* A batch of products C[b] = A[b] x B[b] (+ bias) in one kernel, the
 * batch's tiles dealt to the cores.  Strides are in fp16 elements: a_bs,
 * b_bs, c_bs per batch (0: every product reads the same matrix; for b_nz,
 * in units of the NZ layout, K16*N16 per matrix); a_rs, b_rs, c_rs between
 * rows (0: the dense padded rows).  a_trans: A is stored as A^T (K rows of
 * M elements); b_trans: B as B^T (N rows of K elements, an activation), read
 * in place and transposed fractal by fractal (load2d trans).  Arguments as
 * cc_gen_matmul's. */
struct cc_matmul {
	int64_t batch, M, K, N;
	int b_nz, a_trans, b_trans, has_bias;
	int64_t a_bs, b_bs, c_bs;
	int64_t a_rs, b_rs, c_rs;
	/* int8 on the cube (b_nz, A not transposed): A int8 [rows][K32], B int8
	 * [N16/16][K32][16], each output column dequantized by its scale (fp32,
	 * N16 of them: the argument after the bias).  K and the A strides
	 * count pairs of int8 values (K = K32 / 2, fp16's 32 bytes a block), so
	 * the data movement is the fp16 kernel's byte for byte. */
	int int8;
	/* an element-wise chain (one input: the fp16 product, bias added) run
	 * on each piece in the UB before it is written, or NULL */
	const struct cc_vchain *epi;
	/* the compile's chosen tilings (NULL: choose anew every time) */
	struct cc_tile_cache *cache;
};
int cc_gen_matmul_batch(const struct soc_config *cfg, const struct cc_matmul *mm,
			struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* The dry run's cycles (the busiest block) of the tiling cc_gen_matmul_batch picks. */
double cc_matmul_estimate(const struct soc_config *cfg, const struct cc_matmul *mm);
/* Lay a row-major fp32 [K, N] (or, transposed, [N, K]) matrix out as fp16
 * [N16/16][K16][16] for cc_gen_matmul's b_nz; out holds N16*K16 halves. */
void cc_layout_b_nz(const float *b, int64_t K, int64_t N, int transposed, uint16_t *out);
/* ...and int8's [N16/16][K32][16] bytes (cc_matmul.int8). */
void cc_layout_b_nz_s8(const int8_t *bq, int64_t K, int64_t N, int transposed, int8_t *out);

/* y = x op v with the row vector v broadcast over x's rows (or v op x).
 * Arguments: 0 x (padded ND [rows, cols]), 1 v (fp16 [C16]), 2 y. */
int cc_gen_rowbcast(const struct soc_config *cfg, enum cc_vop op, int64_t rows, int64_t cols,
		    int vec_first, struct cc_prog *p, unsigned *block_dim, char *err,
		    size_t errlen);

/* Softmax of scale * x (+ mask) over the last axis of a padded ND tensor,
 * rows of at most 128.  mask_div > 0: row r adds mask row r / mask_div.
 * log: LogSoftmax instead (here and in cc_gen_softmax_any).
 * f32: mixed precision (cc_node.fp32): after the scale and the mask (fp16),
 * x is converted to fp32 and everything else runs in fp32, rounded to fp16
 * once at the end (here, in cc_gen_softmax_any and in cc_gen_reduce).
 * Arguments: 0 x, 1 y, 2 the mask (padded ND rows, when mask_div > 0). */
int cc_gen_softmax(const struct soc_config *cfg, int64_t rows, int64_t cols, float scale,
		   int64_t mask_div, int log, int f32, struct cc_prog *p, unsigned *block_dim,
		   char *err, size_t errlen);

/* LayerNormalization over the last axis of a padded ND tensor [rows, cols],
 * statistics in fp32 (see kern_layernorm.c).  Arguments: 0 x, 1 y, 2 params
 * (fp16 gamma [C16] then beta [C16]; read when has_gamma or has_beta), then
 * the mean and the inverse standard deviation when wanted (padded ND
 * [rows, 1]). */
struct cc_layernorm {
	int64_t rows, cols;
	float eps;
	int has_gamma, has_beta, want_mean, want_rstd;
	int has_residual; /* normalize fp16(x + r): r is the last argument */
};
int cc_gen_layernorm(const struct soc_config *cfg, const struct cc_layernorm *ln,
		     struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* y = a op b with numpy broadcasting (see kern_bcast_nd.c), over tensors
 * seen as rows of blocks: the output has the row axes dims[0..rank-1]
 * (outermost first) and nb 32-byte blocks per row; operand k's row index
 * is sum(index[i] * rs[k][i]) (a stride of 0 broadcasts that axis) and its
 * rows are nb blocks, or with lane[k] one block whose lane 0 is the row's
 * one value, broadcast over the output row ([..., 1] against [..., C]).
 * Padded ND: the leading axes are the rows, nb = C16/16; NC1HWC0: the rows
 * are [N][C1][H][W] of one block each (lane[k]: a one-channel operand).
 * Arguments: 0 a, 1 b, 2 y. */
#define CC_BCAST_MAX_RANK 8
struct cc_bcast {
	enum cc_vop op; /* CC_V_ADD .. CC_V_MIN */
	int rank;
	int64_t dims[CC_BCAST_MAX_RANK];
	int64_t rs[2][CC_BCAST_MAX_RANK];
	int64_t nb;
	int lane[2];
};
int cc_gen_bcast_nd(const struct soc_config *cfg, const struct cc_bcast *bc, struct cc_prog *p,
		    unsigned *block_dim, char *err, size_t errlen);

/* Reductions and Softmax over [A][R][C] views of a padded ND tensor (see
 * kern_reduce.c).  kind: 0 sum, 1 mean, 2 max, 3 min.  last: C is one padded
 * row of cols real lanes, also reduced; the results, D per output row, go to
 * rows of pad16(D) (D = 1: one 32-byte row each).  Arguments: 0 x, 1 y. */
int cc_gen_reduce(const struct soc_config *cfg, int kind, int64_t A, int64_t R, int64_t C,
		  int64_t cols, int last, int64_t D, int f32, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen);
int cc_gen_softmax_any(const struct soc_config *cfg, int64_t A, int64_t R, int64_t C,
		       int64_t cols, int last, float scale, int64_t mask_div, int log, int f32,
		       struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* y[b][c][r] = x[b][r][c] on padded ND tensors.  Arguments: 0 x, 1 y. */
int cc_gen_transpose(const struct soc_config *cfg, int64_t batch, int64_t rows, int64_t cols,
		     struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* Any permutation of a tensor's axes between two block layouts (padded ND
 * or NC1HWC0), see kern_transpose.c.  Both layouts are grids of 32-byte
 * blocks of 16 lanes: one logical axis per side (its lane axis) supplies the
 * lane (index % 16) and a block index (index / 16), every other axis a block
 * index.  Indexed by the OUTPUT's axes: dims, the block strides sx (input)
 * and sy (output), and which output axes are the input's and the output's
 * lane axes.  x0 and y0 are block offsets of the first element on each side;
 * an axis may step backwards (a negative stride, e.g. a flipped kernel) if it
 * is not a lane axis.  Arguments: 0 x, 1 y. */
#define CC_PERM_MAX_RANK 8
struct cc_perm {
	int rank;
	int64_t dims[CC_PERM_MAX_RANK];
	int64_t sx[CC_PERM_MAX_RANK], sy[CC_PERM_MAX_RANK];
	int lane_x, lane_y;
	int64_t x0, y0;
};
int cc_gen_permute(const struct soc_config *cfg, const struct cc_perm *pm, struct cc_prog *p,
		   unsigned *block_dim, char *err, size_t errlen);

/* Concat along the padded last axis of ND tensors, for one input: x
 * ([rows][cols] padded) lands at element column off of y ([rows][ycols]
 * padded).  Lanes move through vtransposes; the output block the input
 * shares with its left neighbour is read back and merged, so the inputs'
 * kernels must run in order.  Arguments: 0 x, 1 y. */
int cc_gen_concat_last(const struct soc_config *cfg, int64_t rows, int64_t cols, int64_t off,
		       int64_t ycols, struct cc_prog *p, unsigned *block_dim, char *err,
		       size_t errlen);

/* Pad over a block grid: both tensors' device layouts (NC1HWC0 [N][C1][H][W]
 * or ND [d0]..[C16/16]) as row-major grids of 32-byte blocks; padding only
 * along axes that are not the lane axis, in whole blocks.  Per grid axis:
 * the input's and output's block counts and the pad blocks before.
 * chan_axis (or -1): the NC1HWC0 C1 axis, whose last block has chan_valid
 * real channels; constant borders keep the others zero.
 * Arguments: 0 x, 1 y. */
#define CC_PAD_MAX_RANK 8
enum cc_pad_mode { CC_PAD_CONSTANT, CC_PAD_REFLECT, CC_PAD_EDGE };
/* Reflect mode's source of index i (any integer) on an axis of n: mirrored
 * about both ends again and again (period 2(n - 1)), as numpy.pad, ONNX's
 * reference, does for pads of any size; n = 1 repeats the one element. */
static inline int64_t cc_pad_reflect(int64_t i, int64_t n)
{
	if (n <= 1)
		return 0;
	int64_t p = 2 * (n - 1), m = (i % p + p) % p;
	return m < n ? m : p - m;
}
struct cc_pad {
	int rank;
	int64_t xcnt[CC_PAD_MAX_RANK], ycnt[CC_PAD_MAX_RANK], before[CC_PAD_MAX_RANK];
	enum cc_pad_mode mode;
	float value;
	int chan_axis;
	int64_t chan_valid;
};
int cc_gen_pad(const struct soc_config *cfg, const struct cc_pad *pd, struct cc_prog *p,
	       unsigned *block_dim, char *err, size_t errlen);

/* Zeros at nruns runs of run_blocks 32-byte blocks, stride_blocks apart,
 * from block off (see kern_copy.c).  Arguments: 0 destination. */
int cc_gen_zero_runs(const struct soc_config *cfg, int64_t off, int64_t nruns, int64_t run_blocks,
		     int64_t stride_blocks, struct cc_prog *p, unsigned *block_dim, char *err,
		     size_t errlen);

/* Strided GM copy through the UB (see kern_copy.c).  Arguments: 0 src, 1 dst. */
int cc_gen_copy(const struct soc_config *cfg, int64_t nchunks, int64_t chunk_bytes,
		int64_t src_stride, int64_t dst_stride, struct cc_prog *p, unsigned *block_dim,
		char *err, size_t errlen);

/* Gather of whole rows along an axis (see kern_gather.c): output row
 * o * nidx + i = table row idx[i] of outer slice o (a slice is rows rows of
 * row_bytes, a multiple of 32).  Indices: int32 or int64 (idx_bytes 4 or 8)
 * in GM, read at run time, or cidx (constant, resolved at compile time);
 * negatives wrap (+rows), then out-of-range ones clamp to [0, rows-1].
 * Arguments: 0 table, 1 indices (unused with cidx), 2 output. */
struct cc_gather {
	int64_t outer, rows, row_bytes, nidx;
	int idx_bytes;
	const int64_t *cidx;
};
int cc_gen_gather(const struct soc_config *cfg, const struct cc_gather *gd, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen);

/* A copy between grids of 32-byte blocks (see kern_gridcopy.c): for every
 * index (i0..i(rank-1)) < cnt, the block at src_off + sum(i * sst) moves to
 * the block at sum(i * dst); strides in blocks, outermost axis first; a
 * stride of 0 on the source broadcasts.  Arguments: 0 src, 1 dst. */
#define CC_GRID_MAX_RANK 8
int cc_gen_grid_copy(const struct soc_config *cfg, int rank, const int64_t *cnt,
		     const int64_t *sst, const int64_t *dst, int64_t src_off, struct cc_prog *p,
		     unsigned *block_dim, char *err, size_t errlen);
/* y = columns [b, b + cols) of the padded ND rows of x (xcols columns),
 * for a start b that is not a multiple of 16 (vtransposes move the lanes).
 * Arguments: 0 x, 1 y. */
int cc_gen_slice_last(const struct soc_config *cfg, int64_t rows, int64_t xcols, int64_t b,
		      int64_t cols, struct cc_prog *p, unsigned *block_dim, char *err,
		      size_t errlen);
/* The same with a step other than 1 (negative too): output column j is
 * input column b + j * step.  Arguments: 0 x, 1 y. */
int cc_gen_slice_last_step(const struct soc_config *cfg, int64_t rows, int64_t xcols, int64_t b,
			   int64_t step, int64_t cols, struct cc_prog *p, unsigned *block_dim,
			   char *err, size_t errlen);
/* y's column j (of cols) = x's column map[j] (of xcols), or value where
 * map[j] < 0, over rows of padded ND (Slice with steps, Pad along the last
 * axis; lanes move through vtransposes).  Arguments: 0 x, 1 y. */
int cc_gen_colmap(const struct soc_config *cfg, int64_t rows, int64_t xcols, int64_t cols,
		  const int64_t *map, float value, struct cc_prog *p, unsigned *block_dim,
		  char *err, size_t errlen);

/* Integer and bool tensors (kern_dtype.c).  The edge: n values of dt
 * (int32, int64, int8, uint8, bool) to fp32 (to_f32), or back (fp32 values
 * that are integers; int64 gets sign-extended low words).  Arguments:
 * 0 source, 1 destination. */
int cc_gen_int_edge(const struct soc_config *cfg, enum cc_dtype dt, int64_t n, int to_f32,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* Element-wise on fp16 tensors of one shape (elems, a multiple of 16):
 * comparisons and logic give 0/1; WHERE is in0 != 0 ? in1 : in2; TRUNC
 * rounds toward zero and clamps to [lo, hi]; BOOL is in0 != 0; IADD..IDIV
 * as the integer type computes them (operands integers, exact in fp16).
 * Arguments: the inputs, then the output. */
enum cc_lop { CC_L_EQ, CC_L_LT, CC_L_LE, CC_L_GT, CC_L_GE, CC_L_NOT, CC_L_AND, CC_L_OR,
	      CC_L_XOR, CC_L_WHERE, CC_L_TRUNC, CC_L_BOOL,
	      /* integer arithmetic on integer values: in s32 (wrapping at 32 bits;
	       * division through fp32, toward zero), then wrapped to wrap8's
	       * 8 bits (signed when sgn) */
	      CC_L_IADD, CC_L_ISUB, CC_L_IMUL, CC_L_IDIV,
	      /* in0 ** in1 in fp32 (C's pow: negative bases with integer
	       * exponents, 0 ** 0 = 1); int_out rounds to an integer */
	      CC_L_POW };
struct cc_logic {
	enum cc_lop op;
	float lo, hi;
	int wrap8, sgn;
	int int_out;
};
int cc_gen_logic(const struct soc_config *cfg, const struct cc_logic *lg, int64_t elems,
		 struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* ---- 4-D activations: NC1HWC0 (C0 = 16, fp16; channels past C zero-padded
 * or undefined), one image after another: [N][C1][H][W][16]. ---- */

/* Activation fused into a kernel's output path. */
enum cc_act { CC_ACT_NONE, CC_ACT_RELU, CC_ACT_CLIP };

/* The conv's input x. */
enum cc_conv_x {
	CC_CONV_X_F16, /* fp16 NC1HWC0, C0 = 16 */
	/* The small-channel path (ATC's C04, groups == 1, cin <= 4, no slice):
	 * fp16 NC1HWC0 with C0 = 4 ([N][H][W][4], 8 bytes a pixel, the image's
	 * own bytes), w a multiple of 4 unless the conv is 1x1 stride 1
	 * unpadded (cc_conv_c04_ok); load3d c04=1 expands it, and the weights
	 * are FRACTAL_Z in its K order (K row k = tap k / 4, channel k % 4):
	 * ceil(kh*kw*4 / 16) fractal rows instead of kh*kw. */
	CC_CONV_X_F16_C04,
	/* int8 on the cube (groups == 1, no slice): int8 NC1HWC0 with C0 = 32,
	 * the weights int8 FRACTAL_Z with 32-row K fractals, L0C int32, and the
	 * drain dequantizes each output channel with its own scale (the kernel
	 * argument after the residual: fp32, cout padded to 16) before the
	 * bias, residual and activation, which stay fp16. */
	CC_CONV_X_S8,
};
/* What the conv writes.  The int8 forms are the requantization fused into
 * the output path (groups == 1, no slice): the result, after bias,
 * residual and activation, as int8 NC1HWC0 with C0 = 32, q =
 * saturate(rne(y * q8_inv_scale)) in fp16, for int8 convolutions that read
 * it (the argument after the dequant scales). */
enum cc_conv_y {
	CC_CONV_Y_F16,    /* fp16 y only */
	CC_CONV_Y_F16_S8, /* fp16 y and its int8 form */
	CC_CONV_Y_S8,     /* the int8 form only */
	/* The int8 form only, ATC's requantization (RequantFusionPass), no
	 * clip: the output scale is folded into the dequant scales, the bias
	 * and r_scale (lower_quant.c), so the drain computes y / s_y directly,
	 * q8_inv_scale is 1 and a relu is applied by the pass that interleaves
	 * the pairs for the narrowing (vmaxs 0) instead of a pass of its own. */
	CC_CONV_Y_S8_FOLDED,
};
/* The residual r, in y's shape, added before the activation. */
enum cc_conv_r {
	CC_CONV_R_NONE,
	CC_CONV_R_F16, /* fp16 NC1HWC0 */
	/* int8 NC1HWC0 with C0 = 32 (the form a producer's requantization
	 * writes; groups == 1, no slice), dequantized on chip to fp16(q *
	 * r_scale) before the add, as the QDQ graph's DequantizeLinear on the
	 * Add's input says; half the bytes of the fp16 residual. */
	CC_CONV_R_S8,
};
struct cc_conv {
	int64_t n, cin, h, w;   /* input, NC1HWC0 with C1 = ceil(cin / 16) */
	int64_t cout, kh, kw;   /* output channels, kernel size */
	int64_t sh, sw;         /* strides */
	int64_t pt, pl, pb, pr; /* padding: top, left, bottom, right */
	int64_t dh, dw;         /* dilations */
	int64_t groups;         /* 1; cin == cout == groups (depthwise, vector
				 * unit); else block-diagonal on the cube */
	int has_bias;
	enum cc_act act;
	float clip_lo, clip_hi; /* CC_ACT_CLIP */
	/* A channel slice of larger tensors: x has x_c1 channel blocks per
	 * image and the conv reads blocks [x_c1o, x_c1o + C1) of each; y (and
	 * r) has y_n1 and the conv writes [y_n1o, y_n1o + N1).  0: the tensors
	 * are the conv's own (the slices' own, side by side).  Cube path only. */
	int64_t x_c1, x_c1o, y_n1, y_n1o;
	/* 0 or 1: one conv.  S > 1: S convs of this shape side by side in one
	 * kernel, their tiles dealt to the blocks together (the compiler's
	 * grouped conv as one task: each slice is k groups whose channels fill
	 * whole 16-channel blocks, block-diagonal within the slice).  Slice s
	 * reads x's blocks from x_c1o + s*C1 and writes y's (and reads r's)
	 * from y_n1o + s*N1; its weights follow slice s - 1's in the weights
	 * argument (cc_conv_layout_weights lays out all S) and its bias is
	 * values [s*cout, (s + 1)*cout) of the bias argument.  Cube path, not
	 * int8; cin and cout multiples of 16. */
	int64_t slices;
	/* What the kernel reads and writes (enum cc_conv_x, cc_conv_y,
	 * cc_conv_r; { 0 }: fp16 in and out, no residual) and the scales the
	 * int8 forms take: q8_inv_scale the int8 y's 1 / s_y, r_scale the int8
	 * residual's s_r.  A residual needs groups == 1. */
	enum cc_conv_x x_form;
	enum cc_conv_y y_form;
	float q8_inv_scale;
	enum cc_conv_r r_form;
	float r_scale;
	/* The compile's tilings chosen so far (NULL: none kept): a layer of a
	 * shape already seen takes that layer's tiling without a search. */
	struct cc_tile_cache *cache;
};
/* The questions the kernel asks of the forms (1 or 0): an int8 x, the
 * small-channel x, a residual, an int8 residual, y's int8 form written,
 * y's fp16 form written. */
static inline int cc_conv_x8(const struct cc_conv *cv) { return cv->x_form == CC_CONV_X_S8; }
static inline int cc_conv_c04(const struct cc_conv *cv)
{
	return cv->x_form == CC_CONV_X_F16_C04;
}
static inline int cc_conv_res(const struct cc_conv *cv) { return cv->r_form != CC_CONV_R_NONE; }
static inline int cc_conv_r8(const struct cc_conv *cv) { return cv->r_form == CC_CONV_R_S8; }
static inline int cc_conv_y8(const struct cc_conv *cv) { return cv->y_form != CC_CONV_Y_F16; }
static inline int cc_conv_y16(const struct cc_conv *cv) { return cv->y_form <= CC_CONV_Y_F16_S8; }
/* Whether cv's shape (and fp16 input) allows the small-channel path. */
int cc_conv_c04_ok(const struct cc_conv *cv);
/* Whether the cube path has a tiling of cv that fits the SoC's buffers (its
 * K is chunked by channel blocks only: a large kernel of few channels, a
 * ViT-B/32 patch embedding's 32x32, may need C04's denser K). */
int cc_conv_has_tiling(const struct soc_config *cfg, const struct cc_conv *cv);
static inline int64_t cc_conv_ho(const struct cc_conv *c)
{
	return (c->h + c->pt + c->pb - c->dh * (c->kh - 1) - 1) / c->sh + 1;
}
static inline int64_t cc_conv_wo(const struct cc_conv *c)
{
	return (c->w + c->pl + c->pr - c->dw * (c->kw - 1) - 1) / c->sw + 1;
}
/* y = act(conv(x, w) + bias + r).  Arguments: 0 x (in its x_form), 1 the
 * weights as cc_conv_layout_weights lays them out, 2 y (fp16 NC1HWC0), 3
 * the bias (fp16, cout padded to 16; with slices, S*cout) when has_bias,
 * then the residual r (y's shape, in its r_form) when there is one, the
 * dequant scales for an int8 x, y's int8 form when y_form writes one.  Each
 * step rounds to fp16 as separate kernels would: fp16(fp16(fp16(conv) +
 * bias) + r), then act. */
int cc_gen_conv(const struct soc_config *cfg, const struct cc_conv *cv, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen);
/* Bytes of the device weights of cv (FRACTAL_Z for the cube, grouped convs
 * block-diagonal in it, or the depthwise kernel's own layout; int8: one
 * byte per element, fractals of 32 input x 16 output channels); with
 * slices, all the slices' one after another. */
uint64_t cc_conv_weight_bytes(const struct cc_conv *cv);
/* w is ONNX's [cout][cin/groups][kh][kw] fp32 (with slices, S*cout output
 * channels: the slices' in order); out gets cc_conv_weight_bytes. */
void cc_conv_layout_weights(const struct cc_conv *cv, const float *w, uint16_t *out);
/* An int8 matmul's A: fp16 padded ND [rows][k16] to int8 [rows][k32] (the
 * pad columns zero), q = saturate(rne(x * inv_scale)) in fp16 as
 * cc_gen_quant_c0.  Arguments: 0 x, 1 q. */
int cc_gen_quant_nd(const struct soc_config *cfg, int64_t rows, int64_t k, float inv_scale,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* ONNX QuantizeLinear / DequantizeLinear / the pair, per tensor, on fp16
 * values (the integers exactly): elems values (a multiple of 16).
 * Arguments: 0 x, 1 y. */
enum cc_qlmode { CC_QL_QUANT, CC_QL_DEQUANT, CC_QL_QDQ };
struct cc_qlinear {
	enum cc_qlmode mode;
	float scale;
	int64_t zero_point, qmin, qmax; /* the integer type's range */
};
int cc_gen_qlinear(const struct soc_config *cfg, const struct cc_qlinear *q, int64_t elems,
		   struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* x_form CC_CONV_X_S8: wq is [cout][cin][kh][kw] int8; out gets cc_conv_weight_bytes. */
void cc_conv_layout_weights_s8(const struct cc_conv *cv, const int8_t *wq, int8_t *out);
/* Quantize an fp16 NC1HWC0 tensor (C0 = 16, c channels, n images of hw
 * pixels) to int8 NC1HWC0 with C0 = 32: q = saturate(rne(x * inv_scale)),
 * computed in fp16 as the hardware's quantize op does (x * inv_scale
 * rounded to fp16, then converted), or in fp32 when inv_scale is outside
 * fp16's comfortable range.  Arguments: 0 x, 1 q. */
int cc_gen_quant_c0(const struct soc_config *cfg, int64_t n, int64_t c, int64_t hw,
		    float inv_scale, struct cc_prog *p, unsigned *block_dim, char *err,
		    size_t errlen);

/* ConvTranspose's zero insertion (see kern_convt.c): y [P][(h-1)*sh+1]
 * [(w-1)*sw+1][16] holds x [P][h][w][16] at every sh-th row and sw-th pixel,
 * zeros between.  Arguments: 0 x, 1 y. */
int cc_gen_zero_insert(const struct soc_config *cfg, int64_t planes, int64_t h, int64_t w,
		       int64_t sh, int64_t sw, struct cc_prog *p, unsigned *block_dim, char *err,
		       size_t errlen);

struct cc_pool {
	int64_t n, c, h, w;     /* input NC1HWC0 */
	int64_t kh, kw, sh, sw; /* window and strides (global: kh = h, kw = w) */
	int64_t pt, pl, pb, pr; /* padding */
	int64_t ho, wo;         /* output size (the caller applies ceil_mode) */
	int is_max;
	int count_include_pad;  /* average pooling: divide by kh*kw even at edges */
	int64_t dh, dw;         /* dilations: taps dh rows, dw columns apart (0 = 1) */
	int64_t x_c1s, y_c1s;   /* x's, y's channel blocks between images (a tensor
				 * inside a concat buffer), 0: its own */
};
/* Arguments: 0 x (NC1HWC0), 1 y (NC1HWC0). */
int cc_gen_pool(const struct soc_config *cfg, const struct cc_pool *pl, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen);

/* y = act(x * scale[c] + shift[c]) on NC1HWC0 (BatchNormalization); x_c1s,
 * y_c1s: the channel blocks between images (0: the tensor's own C1).
 * Arguments: 0 x, 1 params (fp16 scale [C16] then shift [C16]), 2 y. */
int cc_gen_affine(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		  int64_t x_c1s, int64_t y_c1s, enum cc_act act, float lo, float hi,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* Edge conversions for 4-D tensors: the host's fp32 NCHW and the device's
 * fp16 NC1HWC0.  Arguments: 0 source, 1 destination. */
int cc_gen_nchw_in(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		   struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* The same into NC1HWC0 with C0 = 4 ([n][h][w][4] fp16, c <= 4, channels
 * past c zero; h*w a multiple of 4), for convs on the small-channel path. */
int cc_gen_nchw_in_c04(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		       struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
int cc_gen_nchw_out(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* The input's conversion with the quantization for int8 convs fused: fp32
 * NCHW (c <= 16) to int8 NC1HWC0 with C0 = 32, exactly what cc_gen_nchw_in
 * then cc_gen_quant_c0 at inv_scale (in its fp16 range) give.  Arguments:
 * 0 source, 1 destination. */
int cc_gen_nchw_in_q8(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		      float inv_scale, struct cc_prog *p, unsigned *block_dim, char *err,
		      size_t errlen);

#endif
