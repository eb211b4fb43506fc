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

#endif
