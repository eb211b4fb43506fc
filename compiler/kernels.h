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
#include "soc.h"

static inline int64_t cc_pad16(int64_t x) { return (x + 15) / 16 * 16; }

/* An element-wise chain over fp16 tensors of the same padded shape: slots
 * 0..nin-1 are the inputs; step i writes slot nin+i; the last step's slot is
 * the output.  Arguments: inputs 0..nin-1, then the output. */
enum cc_vop { CC_V_ADD, CC_V_SUB, CC_V_MUL, CC_V_DIV, CC_V_MAX, CC_V_MIN, CC_V_RELU, CC_V_EXP,
	      CC_V_LN, CC_V_SQRT, CC_V_REC, CC_V_ABS, CC_V_ADDS, CC_V_MULS, CC_V_MAXS,
	      CC_V_MINS };
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
};
int cc_gen_vchain(const struct soc_config *cfg, const struct cc_vchain *ch, int64_t elems,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* Edge conversions between the host's fp32 ND tensor [rows, cols] and the
 * device's fp16 padded layout.  Arguments: 0 source, 1 destination. */
int cc_gen_cast_in(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		   unsigned *block_dim, char *err, size_t errlen);
int cc_gen_cast_out(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		    unsigned *block_dim, char *err, size_t errlen);

/* C [M, N] = A [M, K] x B [K, N] (+ bias [N]) in fp16 with fp32 accumulation.
 * A and C in the device layout; B either the device layout (an activation) or,
 * b_nz, a constant pre-laid as [N/16][K16][16] (cc_layout_b_nz); the bias is
 * fp16 [N16].  Arguments: 0 A, 1 B, 2 C, 3 bias (when has_bias). */
int cc_gen_matmul(const struct soc_config *cfg, int64_t M, int64_t K, int64_t N, int b_nz,
		  int has_bias, struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
/* Lay a row-major fp32 [K, N] (or, transposed, [N, K]) matrix out as fp16
 * [N16/16][K16][16] for cc_gen_matmul's b_nz; out holds N16*K16 halves. */
void cc_layout_b_nz(const float *b, int64_t K, int64_t N, int transposed, uint16_t *out);

/* y = x op v with the row vector v broadcast over x's rows (or v op x).
 * Arguments: 0 x (padded ND [rows, cols]), 1 v (fp16 [C16]), 2 y. */
int cc_gen_rowbcast(const struct soc_config *cfg, enum cc_vop op, int64_t rows, int64_t cols,
		    int vec_first, struct cc_prog *p, unsigned *block_dim, char *err,
		    size_t errlen);

/* Softmax over the last axis of a padded ND tensor, rows of at most 128.
 * Arguments: 0 x, 1 y. */
int cc_gen_softmax(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		   unsigned *block_dim, char *err, size_t errlen);

/* Reductions and Softmax over [A][R][C] views of a padded ND tensor (see
 * kern_reduce.c).  kind: 0 sum, 1 mean, 2 max, 3 min.  last: C is one padded
 * row of cols real lanes, also reduced; the results, D per output row, go to
 * rows of pad16(D) (D = 1: one 32-byte row each).  Arguments: 0 x, 1 y. */
int cc_gen_reduce(const struct soc_config *cfg, int kind, int64_t A, int64_t R, int64_t C,
		  int64_t cols, int last, int64_t D, struct cc_prog *p, unsigned *block_dim,
		  char *err, size_t errlen);
int cc_gen_softmax_any(const struct soc_config *cfg, int64_t A, int64_t R, int64_t C,
		       int64_t cols, int last, struct cc_prog *p, unsigned *block_dim, char *err,
		       size_t errlen);

/* y[b][c][r] = x[b][r][c] on padded ND tensors.  Arguments: 0 x, 1 y. */
int cc_gen_transpose(const struct soc_config *cfg, int64_t batch, int64_t rows, int64_t cols,
		     struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

/* Any permutation of a tensor's axes between two block layouts (padded ND
 * or NC1HWC0), see kern_transpose.c.  Both layouts are grids of 32-byte
 * blocks of 16 lanes: one logical axis per side (its lane axis) supplies the
 * lane (index % 16) and a block index (index / 16), every other axis a block
 * index.  Indexed by the OUTPUT's axes: dims, the block strides sx (input)
 * and sy (output), and which output axes are the input's and the output's
 * lane axes.  Arguments: 0 x, 1 y. */
#define CC_PERM_MAX_RANK 8
struct cc_perm {
	int rank;
	int64_t dims[CC_PERM_MAX_RANK];
	int64_t sx[CC_PERM_MAX_RANK], sy[CC_PERM_MAX_RANK];
	int lane_x, lane_y;
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

/* Strided GM copy through the UB (see kern_copy.c).  Arguments: 0 src, 1 dst. */
int cc_gen_copy(const struct soc_config *cfg, int64_t nchunks, int64_t chunk_bytes,
		int64_t src_stride, int64_t dst_stride, struct cc_prog *p, unsigned *block_dim,
		char *err, size_t errlen);

/* ---- 4-D activations: NC1HWC0 (C0 = 16, fp16; channels past C zero-padded
 * or undefined), one image after another: [N][C1][H][W][16]. ---- */

/* Activation fused into a kernel's output path. */
enum cc_act { CC_ACT_NONE, CC_ACT_RELU, CC_ACT_CLIP };

struct cc_conv {
	int64_t n, cin, h, w;   /* input, NC1HWC0 with C1 = ceil(cin / 16) */
	int64_t cout, kh, kw;   /* output channels, kernel size */
	int64_t sh, sw;         /* strides */
	int64_t pt, pl, pb, pr; /* padding: top, left, bottom, right */
	int64_t dh, dw;         /* dilations */
	int64_t groups;         /* 1, or cin == cout == groups (depthwise) */
	int has_bias;
	enum cc_act act;
	float clip_lo, clip_hi; /* CC_ACT_CLIP */
	int has_residual;       /* groups == 1 only: r added before act */
};
static inline int64_t cc_conv_ho(const struct cc_conv *c)
{
	return (c->h + c->pt + c->pb - c->dh * (c->kh - 1) - 1) / c->sh + 1;
}
static inline int64_t cc_conv_wo(const struct cc_conv *c)
{
	return (c->w + c->pl + c->pr - c->dw * (c->kw - 1) - 1) / c->sw + 1;
}
/* y = act(conv(x, w) + bias + r).  Arguments: 0 x (NC1HWC0), 1 the weights
 * as cc_conv_layout_weights lays them out, 2 y (NC1HWC0), 3 the bias (fp16,
 * cout padded to 16) when has_bias, then the residual r (NC1HWC0, y's
 * shape) when has_residual.  Each step rounds to fp16 as separate kernels
 * would: fp16(fp16(fp16(conv) + bias) + r), then act. */
int cc_gen_conv(const struct soc_config *cfg, const struct cc_conv *cv, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen);
/* Bytes of the device weights of cv (FRACTAL_Z for the cube, or the
 * depthwise kernel's own layout). */
uint64_t cc_conv_weight_bytes(const struct cc_conv *cv);
/* w is ONNX's [cout][cin/groups][kh][kw] fp32; out gets cc_conv_weight_bytes. */
void cc_conv_layout_weights(const struct cc_conv *cv, const float *w, uint16_t *out);

struct cc_pool {
	int64_t n, c, h, w;     /* input NC1HWC0 */
	int64_t kh, kw, sh, sw; /* window and strides (global: kh = h, kw = w) */
	int64_t pt, pl, pb, pr; /* padding */
	int64_t ho, wo;         /* output size (the caller applies ceil_mode) */
	int is_max;
	int count_include_pad;  /* average pooling: divide by kh*kw even at edges */
};
/* Arguments: 0 x (NC1HWC0), 1 y (NC1HWC0). */
int cc_gen_pool(const struct soc_config *cfg, const struct cc_pool *pl, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen);

/* y = act(x * scale[c] + shift[c]) on NC1HWC0 (BatchNormalization).
 * Arguments: 0 x, 1 params (fp16 scale [C16] then shift [C16]), 2 y. */
int cc_gen_affine(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		  enum cc_act act, float lo, float hi, struct cc_prog *p, unsigned *block_dim,
		  char *err, size_t errlen);

/* Edge conversions for 4-D tensors: the host's fp32 NCHW and the device's
 * fp16 NC1HWC0.  Arguments: 0 source, 1 destination. */
int cc_gen_nchw_in(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		   struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);
int cc_gen_nchw_out(const struct soc_config *cfg, int64_t n, int64_t c, int64_t h, int64_t w,
		    struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen);

#endif
