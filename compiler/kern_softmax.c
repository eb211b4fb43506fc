/* kern_softmax.c: softmax over the last axis of a padded ND tensor whose
 * rows fit one vector repeat (at most 128 elements).
 *
 * Per tile of rows: vcmax with the lane mask set to the row length gives one
 * maximum per row; the maxima are broadcast back along their rows by copying
 * each group of 16 into a 16x16 block (block stride 0) and transposing it,
 * which turns "16 maxima side by side" into "16 rows of one maximum each";
 * then x - max, exp, vcadd (fp32 accumulation) for the sums, their
 * reciprocals broadcast the same way, and a multiply.  Padding columns are
 * excluded by the mask from both reductions.  A scale other than 1 multiplies
 * x first (attention's 1/sqrt(d), moved here by pass_fuse_attention.c); a
 * mask (argument 2: rows of c16 fp16 values) is added after the scale, row
 * r / mask_div of it to row r (an attention mask [B,1,S] over scores
 * [B,S,S]: mask_div = S).
 * LogSoftmax (log): x - max - ln(sum(exp(x - max))).  The exponentials go
 * to a buffer of their own so that x - max survives to the final subtract:
 * taking ln of exp(x - max) instead would turn every value that exp
 * underflows in fp16 (x - max < -17) into -inf.
 *
 * f32 (mixed precision, cc_node.fp32): after the fused scale and mask the
 * tile is converted to fp32 (xf, rows of 2*nb 32-byte blocks); the maximum
 * is still vcmax'ed from the fp16 copy (exact: the conversion is), converted
 * and vbrcb'd to one fp32 block per row; x - max, exp, the sums (vcadd over
 * 64 lanes, rows longer than 64 folded once with a vadd), vrec/vln and the
 * final multiply/subtract are fp32, and the result is rounded to fp16 once
 * by the last vconv.  An fp32 repeat holds 64 lanes, half of fp16's, so the
 * element-wise work takes twice the repeats, and the tile shrinks to fit
 * the fp32 buffers.
 * Arguments: 0 x, 1 y. */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Arguments x, y, the mask in x1, x2, x8 (clear of the builder's fixed
 * registers x3..x7, kern_gen.h); the vector operands' UB addresses loaded
 * into x16..x18, the lane count or scalar into x24; the builder's cache
 * (the DMAs' UB addresses) x9..x15. */
enum { R_X = R_SRC, R_Y = R_DST, R_M = 8, R_UB = 16, R_N = 24, R_CACHE = 9, R_CACHE_END = 16 };

/* A vector instruction of format FMT: dst and src0 (rs1) loaded into R_UB
 * and R_UB + 1, fp16 unless a field says otherwise, rep repeats; the other
 * fields as CC_I's.  VEC2: a VBIN, src1 (rs2) in R_UB + 2. */
#define VEC(p, FMT, op, dst, src0, rep_, ...)                                              \
	do {                                                                               \
		cc_li(p, R_UB, dst);                                                       \
		cc_li(p, R_UB + 1, src0);                                                  \
		CC_I(p, FMT, op, .rd = R_UB, .rs1 = R_UB + 1, .dt = ISA_DT_F16,            \
		     .rep = (rep_), __VA_ARGS__);                                          \
	} while (0)
#define VEC2(p, op, dst, src0, src1, rep_, ...)                                            \
	do {                                                                               \
		cc_li(p, R_UB, dst);                                                       \
		cc_li(p, R_UB + 1, src0);                                                  \
		cc_li(p, R_UB + 2, src1);                                                  \
		CC_I(p, VBIN, op, .rd = R_UB, .rs1 = R_UB + 1, .rs2 = R_UB + 2,            \
		     .dt = ISA_DT_F16, .rep = (rep_), __VA_ARGS__);                        \
	} while (0)

static void mask_lanes(struct cc_prog *p, int64_t lanes)
{
	cc_li(p, R_N, lanes);
	CC_I(p, R1, ISA_OP_VMASKN, .rs1 = R_N);
}

/* One value per row at red (n16 of them) -> one 32-byte block per row at bc. */
static void broadcast_rows(struct cc_prog *p, int64_t red, int64_t tmp, int64_t bc, int64_t n16)
{
	for (int64_t g = 0; g < n16 / 16; g++) {
		VEC(p, VUN, ISA_OP_VMOV, tmp + g * 512, red + g * 32, 2, .s0b = 0, .s0r = 0);
	}
	VEC(p, VUN, ISA_OP_VTRANSPOSE, bc, tmp, n16 / 16, .dr = 16, .s0r = 16);
}

/* dst(dt) = src(st), n elements contiguous on both sides (64 a repeat);
 * conversions to fp16 round to nearest even (the field's default). */
static void conv_flat(struct cc_prog *p, enum isa_dtype dt, enum isa_dtype st, int64_t dst,
		      int64_t src, int64_t n)
{
	int64_t reps = (n + 63) / 64, dsz = isa_dtype_size(dt), ssz = isa_dtype_size(st);
	for (int64_t d = 0; d < reps; d += ISA_VEC_REP_MAX) {
		VEC(p, VCONV, ISA_OP_VCONV, dst + d * 64 * dsz, src + d * 64 * ssz,
		    reps - d < ISA_VEC_REP_MAX ? reps - d : ISA_VEC_REP_MAX, .dt = dt, .st = st,
		    .db = 1, .s0b = 1, .dr = 64 * dsz / 32, .s0r = 64 * ssz / 32);
	}
}

/* A flat fp32 unary op (vexp, vln, vrec) over n elements. */
static void flat32(struct cc_prog *p, enum isa_op op, int64_t dst, int64_t src, int64_t n)
{
	int64_t reps = (n + 63) / 64;
	for (int64_t d = 0; d < reps; d += ISA_VEC_REP_MAX)
		VEC(p, VUN, op, dst + d * 256, src + d * 256,
		    reps - d < ISA_VEC_REP_MAX ? reps - d : ISA_VEC_REP_MAX, .dt = ISA_DT_F32);
}

/* n16 fp32 values at v -> one 32-byte block (8 copies) per value at bc. */
static void brcb32(struct cc_prog *p, int64_t bc, int64_t v, int64_t n16)
{
	VEC(p, VUN, ISA_OP_VBRCB, bc, v, n16 / 8, .dt = ISA_DT_F32);
}

/* fp32 rows of nb32 blocks (in place) op= the row's fp32 block: as rows_op. */
static void rows_op32(struct cc_prog *p, enum isa_op op, int64_t x, int64_t bc, int64_t nb32,
		      int64_t n16)
{
	for (int64_t j = 0; j < nb32; j++) {
		VEC2(p, op, x + j * 32, x + j * 32, bc, n16 / 8, .dt = ISA_DT_F32, .db = nb32,
		     .s0b = nb32, .dr = 8 * nb32, .s0r = 8 * nb32, .s1b = 1, .s1r = 8);
	}
}

/* The fp32 part of a tile (see the header): ux holds n16 fp16 rows of c16
 * after the scale and mask; the result goes back to ux in fp16. */
static void tile_f32(struct cc_prog *p, int64_t ux, int64_t red, int64_t red32, int64_t bc32,
		     int64_t acc, int64_t xf, int64_t ebuf, int64_t n16, int64_t cols, int64_t c16,
		     int log)
{
	int64_t nb32 = c16 / 8, nel = n16 * c16;
	conv_flat(p, ISA_DT_F32, ISA_DT_F16, xf, ux, nel);
	mask_lanes(p, cols);
	VEC(p, VRED, ISA_OP_VCMAX, red, ux, n16, .s0r = c16 / 16);
	mask_lanes(p, 0);
	conv_flat(p, ISA_DT_F32, ISA_DT_F16, red32, red, n16);
	brcb32(p, bc32, red32, n16);
	rows_op32(p, ISA_OP_VSUB, xf, bc32, nb32, n16);
	int64_t e = log ? ebuf : xf; /* LogSoftmax keeps x - max */
	flat32(p, ISA_OP_VEXP, e, xf, nel);
	int64_t src = e, sst = nb32;
	if (cols > 64) { /* lanes 64.. added onto 0..63 in a copy: e stays for the multiply */
		VEC(p, VUN, ISA_OP_VMOV, acc, e, n16, .dt = ISA_DT_F32, .s0r = nb32);
		mask_lanes(p, cols - 64);
		VEC2(p, ISA_OP_VADD, acc, acc, e + 256, n16, .dt = ISA_DT_F32, .s1r = nb32);
		src = acc;
		sst = 8;
	}
	mask_lanes(p, cols < 64 ? cols : 64);
	VEC(p, VRED, ISA_OP_VCADD, red32, src, n16, .dt = ISA_DT_F32, .s0r = sst);
	mask_lanes(p, 0);
	flat32(p, log ? ISA_OP_VLN : ISA_OP_VREC, red32, red32, n16);
	brcb32(p, bc32, red32, n16);
	rows_op32(p, log ? ISA_OP_VSUB : ISA_OP_VMUL, xf, bc32, nb32, n16);
	conv_flat(p, ISA_DT_F16, ISA_DT_F32, ux, xf, nel);
}

/* x (in place) op= the row's broadcast block, one instruction per column block. */
static void rows_op(struct cc_prog *p, enum isa_op op, int64_t x, int64_t bc, int64_t nb,
		    int64_t n16)
{
	for (int64_t j = 0; j < nb; j++) {
		VEC2(p, op, x + j * 32, x + j * 32, bc, n16 / 8, .db = nb, .s0b = nb, .dr = 8 * nb,
		     .s0r = 8 * nb, .s1b = 1, .s1r = 8);
	}
}

/* The kernel's steps (kg_emit_steps): one tile each, load, compute and
 * store on one event id; tiles of as many rows repeat with their GM offsets
 * moving by a tile's rows, so a block's tiles run as a loop, and blocks
 * alike share one copy. */
struct sm_kern {
	float scale;
	int log, f32;
	int64_t mask_div, cols, c16, nb, tile, seg, per_seg, rows, per, tiles;
	int64_t ux, red, tmp, bc, mbuf, ebuf, red32, bc32, acc, xf, ebuf32; /* UB buffers */
};

static void sm_tile(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct sm_kern *k = ctx;
	struct cc_prog *p = g->p;
	int64_t c16 = k->c16, nb = k->nb, ux = k->ux;
	int64_t t = b * k->per + (int64_t)i;
	int64_t s0 = t / k->per_seg * k->seg, r0 = s0 + t % k->per_seg * k->tile;
	int64_t end = s0 + k->seg < k->rows ? s0 + k->seg : k->rows;
	int64_t n = end - r0 < k->tile ? end - r0 : k->tile;
	if (n <= 0)
		return;
	int64_t n16 = (n + 15) / 16 * 16, off = r0 * c16 * 2;
	int64_t reps = (n16 * c16 + 127) / 128;
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_X, off, ux, 1, n * nb, 0, 0);
	if (k->mask_div > 0) /* this tile's mask row */
		kg_dma(g, ISA_OP_MOV_GM_UB, R_M, r0 / k->mask_div * c16 * 2, k->mbuf, 1, nb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	if (k->scale != 1.0f) { /* attention's 1/sqrt(d), fused */
		uint32_t bits;
		memcpy(&bits, &k->scale, 4);
		cc_li(p, R_N, bits);
		for (int64_t d = 0; d < reps; d += ISA_VEC_REP_MAX) {
			VEC(p, VSCAL, ISA_OP_VMULS, ux + d * 256, ux + d * 256,
			    reps - d < ISA_VEC_REP_MAX ? reps - d : ISA_VEC_REP_MAX,
			    .rs2 = R_N);
		}
	}
	if (k->mask_div > 0) /* + the mask row, read with stride 0 for every row */
		for (int64_t j = 0; j < nb; j++) {
			VEC2(p, ISA_OP_VADD, ux + j * 32, ux + j * 32, k->mbuf + j * 32,
			     n16 / 8, .db = nb, .s0b = nb, .dr = 8 * nb,
			     .s0r = 8 * nb, .s1b = 0, .s1r = 0);
		}
	if (k->f32) {
		tile_f32(p, ux, k->red, k->red32, k->bc32, k->acc, k->xf, k->ebuf32, n16, k->cols, c16,
			 k->log);
	} else {
		/* max per row, over the row's own lanes */
		mask_lanes(p, k->cols);
		VEC(p, VRED, ISA_OP_VCMAX, k->red, ux, n16, .s0r = nb);
		mask_lanes(p, 0);
		broadcast_rows(p, k->red, k->tmp, k->bc, n16);
		rows_op(p, ISA_OP_VSUB, ux, k->bc, nb, n16);
		int64_t e = k->log ? k->ebuf : ux; /* LogSoftmax keeps x - max */
		for (int64_t d = 0; d < reps; d += ISA_VEC_REP_MAX)
			VEC(p, VUN, ISA_OP_VEXP, e + d * 256, ux + d * 256,
			    reps - d < ISA_VEC_REP_MAX ? reps - d : ISA_VEC_REP_MAX);
		mask_lanes(p, k->cols);
		VEC(p, VRED, ISA_OP_VCADD, k->red, e, n16, .s0r = nb);
		mask_lanes(p, 0);
		VEC(p, VUN, k->log ? ISA_OP_VLN : ISA_OP_VREC, k->red, k->red,
		    (n16 + 127) / 128);
		broadcast_rows(p, k->red, k->tmp, k->bc, n16);
		rows_op(p, k->log ? ISA_OP_VSUB : ISA_OP_VMUL, ux, k->bc, nb, n16);
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, 0);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_Y, off, ux, 1, n * nb, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE2, 0);
}

int cc_gen_softmax(const struct soc_config *cfg, int64_t rows, int64_t cols, float scale,
		   int64_t mask_div, int log, int f32, struct cc_prog *p, unsigned *block_dim,
		   char *err, size_t errlen)
{
	int64_t c16 = cc_pad16(cols), nb = c16 / 16;
	if (cols < 1 || cols > 128) {
		snprintf(err, errlen, "Softmax over %lld elements is not supported yet (at most "
				      "128)", (long long)cols);
		return -1;
	}
	/* rows per tile: a multiple of 16; repeats of every instruction <= ISA_VEC_REP_MAX,
	 * 128 lanes each */
	int64_t tile = ISA_VEC_REP_MAX * 128 / c16 / 16 * 16;
	if (tile > 240)
		tile = 240;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	if (!f32)
		while (tile > 16 && tile * (c16 * 2 * (log ? 2 : 1) + 2 + 32 + 32) + 512 + c16 * 2 > ub)
			tile -= 16;
	else /* fp16 x, fp32 xf (and e), red, red32, bc32, acc; the mask row */
		while (tile > 16 && tile * (c16 * 2 + c16 * 4 * (log ? 2 : 1) + 2 + 4 + 32 + 256) +
						    1024 + c16 * 2 > ub)
			tile -= 16;
	/* with a mask, a tile never spans two mask rows: mask_div rows share one */
	int64_t seg = mask_div > 0 ? mask_div : rows;
	int64_t per_seg = (seg + tile - 1) / tile, segs = (rows + seg - 1) / seg;
	int64_t tiles = per_seg * segs;
	int64_t per, blocks = cc_split_work(tiles, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	int64_t ux = 0, red = tile * c16 * 2, tmp = red + (tile * 2 + 31) / 32 * 32;
	int64_t bc = tmp + tile * 32, mbuf = bc + tile * 32, ebuf = mbuf + c16 * 2;
	/* the fp32 path's buffers (f32): red32 holds whole 64-float repeats */
	int64_t red32 = tmp, bc32 = red32 + (tile + 63) / 64 * 256, acc = bc32 + tile * 32,
		mbuf32 = acc + tile * 256, xf = mbuf32 + (c16 * 2 + 31) / 32 * 32,
		ebuf32 = xf + tile * c16 * 4;
	if (f32)
		mbuf = mbuf32;
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_Y, 1);
	if (mask_div > 0)
		cc_ldarg(p, R_M, 2);
	struct sm_kern k = { scale, log, f32, mask_div, cols, c16, nb, tile, seg, per_seg, rows,
			     per, tiles, ux, red, tmp, bc, mbuf, ebuf, red32, bc32, acc, xf, ebuf32 };
	struct kg_steps ks = { .blocks = blocks, .sync = { { ISA_PIPE_MTE3, ISA_PIPE_MTE2, 1 } },
			       .nsync = 1, .per = per, .units = tiles, .step = sm_tile, .ctx = &k };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "Softmax", err, errlen);
}
