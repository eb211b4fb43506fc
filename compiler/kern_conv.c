/* kern_conv.c: 2-D convolution, y = act(conv(x, w) + bias [+ r]), NC1HWC0 fp16 in and out.
 *
 * groups == 1 runs on the cube as an implicit GEMM:
 *   Y[Ho*Wo][Cout16] = img2col(X)[Ho*Wo][C1*kh*kw*16] x W[C1*kh*kw*16][Cout16]
 * per image.  The output is cut into tiles (a group of consecutive images, a
 * range of output pixels, a range of output-channel blocks) and K into chunks
 * of whole C1 planes.  A tile takes the same pixel range of each image of its
 * group, stacked along M: each image's rows start on a fractal row, so a
 * tile's M is images x the pixel range rounded up to 16.  Per (tile, chunk)
 * MTE2 brings to L1 the slab of input rows the pixels need (the halo
 * included, [img][c1][rows][W][16]: the images' slabs back to back) and the
 * chunk's FRACTAL_Z weights; MTE1 expands each image's slab with load3d
 * (set_fmatrix describes one image's slab, the same for all: its height, and
 * top/bottom padding only where it touches the image border) into that
 * image's fractal rows of L0A, and copies the weights with load2d into L0B,
 * kf K fractals at a time; one mmad applies them to all the images, so that
 * at a large batch a layer with small images reads its weights once per
 * group, not once per image.  The cube accumulates the tile in L0C,
 * [n1][m][16]: NC1HWC0 rows already.  Per output-channel block of a finished
 * tile V moves L0C to the UB as fp16 (relu fused when there is no bias), adds
 * the bias (broadcast with block and repeat stride 0) and clips; MTE3 writes
 * each image's rows to its own place in GM: one write per image or one per
 * channel block, whichever are fewer.
 *
 * A residual r (a tensor of y's shape and layout, pass_fuse_residual.c) is
 * added in the drain, after the bias and before the activation: per UB
 * output buffer MTE2 brings the same rows of r (each image's to its own
 * fractal rows, mirroring the write) into one of nr residual buffers of the
 * same size, and one vadd adds it.  Each value rounds where separate kernels
 * would (fp16 after L0C, after the bias, after r), so a fused model computes
 * exactly what the unfused one does.  The loads are issued early: after a
 * stage's own loads (so that they do not hold up the input the cube needs
 * next), for up to max(nr - 1, 1) buffer groups past the last one added (a
 * group's buffer is then already free, so MTE2 need not wait on the vector
 * unit's latest work), and the next group of a tile drained in several
 * right after the add of the one before; a group not yet loaded when its
 * drain comes is loaded there.  Without a residual, relu with no bias is fused into the L0C move;
 * with one it must wait for the sum.  An int8 residual (CC_CONV_R_S8: the C0 =
 * 32 form a requantizing drain writes) comes in pairs of channel blocks
 * into the second half of its buffer and is dequantized there by V before
 * the add (cube_res_dequant), through the output buffer's second half,
 * which the requantization only uses after the add; tiles and buffers then
 * hold whole pairs, as for an int8 output.
 *
 * The small-channel path (x_form C04, ATC's C04 for a first conv of 1-4
 * channels): x is [N][H][W][4], 8 bytes a pixel (geo.xpix), so the slabs
 * MTE2 brings are the image's own bytes, a quarter of C0 = 16's; load3d
 * c04=1 expands them with K ordered (tap, channel), 4 taps of 4 channels a
 * fractal row, so K is ceil(kh*kw*4/16) fractals (geo.kf1: 13 for 7x7, 3
 * for 3x3) instead of kh*kw, and the cube does that much less work too.
 * Everything else (tiles, drains, timing) is the same code; an image plane
 * and a slab row are whole 32-byte blocks when W is a multiple of 4
 * (cc_conv_c04_ok).
 *
 * A 1x1 stride-1 unpadded conv is flat: a tile's slab is exactly its own
 * pixels, seen by set_fmatrix as one row.
 *
 * Every GM transfer, and the flag that follows it, waits out the L2 latency,
 * so the kernel keeps as many transfers in flight as it has event ids.  L1
 * has one slot per event id at most: slot i has a slab region (i < es) and a
 * weight region (i < ew), and one flag covers whatever a stage loads into it.
 * L1 contents are tracked at compile time: a slab or weight piece already in
 * L1 is not loaded again (weights stay resident while every stage uses them,
 * the channel tiles of a pixel range share a slab); otherwise the least
 * recently used slot is reloaded once MTE1 has released it after its last
 * use.  L0A/L0B are split in halves by K step, L0C in halves by tile; the
 * drain goes through nq UB buffers of upc channel blocks each, one flag and
 * one write per buffer.  Tiles are dealt to the blocks in contiguous runs
 * (block_dim <= core.count).
 *
 * The code is built through the kernel builder (kern_gen.h: constants held
 * in cached registers, transfers at offsets from the argument registers):
 * a block's stages go through kern_roll.h, which runs the stages that repeat
 * with their GM offsets moving by a constant as loops, and blocks whose code
 * is alike share one copy behind the block dispatch.
 *
 * The tiling (image groups, pixel tiles, channel tiles, K chunks, tile order,
 * slots, UB buffers) is chosen by timing candidates on the simulator's dry
 * run (sim/dryrun.h): the generator writes a block's program, the very program
 * it emits, into a sink that prices each instruction with sim_insn_cost and
 * orders it by pipes, queues and flags as the engine does (a long block by
 * its first stages, scaled).  Candidates go in order of a lower bound priced
 * the same way (the cost of the instructions a tile must issue, counted by
 * running the generator) and are skipped when it shows they cannot win,
 * until a compile-time budget is spent; the likely slowest blocks are timed
 * first, every block for the best few.
 *
 * Events (per pipe pair): MTE2<->MTE1 0..slots-1 the L1 slots; MTE1<->M 0,1
 * the L0 halves; M<->V 0,1 the L0C halves; V<->MTE3 0..nq-1 the UB buffers;
 * MTE2->V 0 the bias; MTE2->V 1..nr and V->MTE2 0..nr-1 the residual buffers
 * (loaded, free).
 *
 * Other grouped convolutions run on the cube as one full convolution whose
 * weights are zero outside the diagonal blocks (a group's inputs against its
 * outputs): groups times the MACs the grouped conv needs.  The compiler
 * keeps that factor small by cutting the channels into slices of k groups
 * that fill whole 16-channel blocks (cv->slices), each such a block-diagonal
 * conv on its own channel blocks of x and y, all in one kernel: a tile is
 * (slice, image group, pixel range, channel range), the slice outermost, so
 * that a block's run of tiles stays within few slices and loads their
 * weights once.  The slice moves only GM addresses (input loads, weight
 * loads, output writes) and the bias's place in the UB, so every output
 * element is computed exactly as a kernel of that slice alone would.
 *
 * Depthwise (groups == cin == cout) runs on the vector unit: one C0 lane is
 * one channel, so a pixel (32 bytes) is one vector block and a tap is one
 * vmla over many pixels with the tap's 16 weights broadcast (s1b = s1r = 0).
 * A unit of work is (image, C1 block, band of output rows).  MTE2 puts the
 * band's input rows into a zero-padded UB slab of Wp pixels per row; the
 * output is computed on a grid of P = sh*Wp/sw pixels per row, which makes
 * the input index of every tap affine in the flattened output index q
 * (sw*q + i*dh*Wp + j*dw), so a tap is one instruction per ISA_VEC_REP_MAX
 * repeats; the P - Wo junk columns per row are computed and not stored.
 * Slabs (events MTE2<->V 0..) and accumulators (V<->MTE3 0..) rotate through
 * as many buffers as event ids allow; the weights and bias come once per block
 * (MTE2->V, the id after the slabs').  Band height and buffer counts are
 * chosen by the same dry run.
 *
 * Device weight layouts (cc_conv_layout_weights):
 *   cube       FRACTAL_Z as L0B wants it: [K1][N1][16 k][16 n] fp16, K1 =
 *              C1*kh*kw fractal rows ordered (c1, i, j), k = the channel
 *              within the C1 block, n = the output channel within its block:
 *              element (ci = c1*16+k, co = n1*16+n, i, j); zero where ci >=
 *              cin or co >= cout.  load2d copies it without a transpose.
 *   depthwise  [C1][kh][kw][16] fp16: for each tap one 32-byte row of the 16
 *              channels' weights; zero for channels >= cin.
 *
 * The compiler guarantees: input channels >= cin (the C1 padding) hold finite
 * values.  load3d and the vector unit read whole 32-byte pixels, so those
 * lanes do enter the arithmetic, multiplied by zero weights: finite * 0 = 0,
 * but inf or NaN would poison the sums.  Output channels >= cout are written
 * as act(0 + 0) = 0 (relu, none, clip with lo <= 0 <= hi), or, for a clip
 * range that excludes 0, left at 0 by masking them out of the clip.  With a
 * residual they are act(0 + 0 + r) for r's own padding lanes (r unclipped
 * where the clip is masked): 0 where r's are 0, finite where r's are finite,
 * as the separate Add kernel would leave them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "dryrun.h"
#include "kern_roll.h"
#include "kernels.h"
#include "tile_cache.h"

/* Registers (kern_gen.h has x3 R_GM, x4/x5 the dispatch, x6/x7 loop
 * counters): x1, x2, x8..x12 the arguments; GM addresses through x3 (x and
 * y), x13 (the weights) and x14 (the residual), so that the dry run can tell
 * the weights' and residual's loads from the input's; x15..x31 the builder's
 * constant cache. */
enum { R_X = 1, R_W = 2, R_Y = 8, R_BIAS = 9, R_RES = 10, R_DEQ = 11, R_Y8 = 12, R_WGM = 13,
       R_RGM = 14, R_CACHE0 = 15, R_CACHE1 = 32 };

#define FRAC 512      /* bytes of one 16x16 fp16 fractal */
#define PIX 32        /* bytes of one NC1HWC0 pixel: 16 fp16 channels, one DMA/vector block */
#define MAX_REP ISA_VEC_REP_MAX
#define MAX_EV 8      /* event ids per pipe pair the generator uses, at most */
#define MAX_UBQ 4     /* UB output buffers, at most */
#define MAX_TIMED 2000 /* candidates timed in detail, at most */
#define MAX_WALK 1000000 /* stages walked by the timing, at most (once one fits): ResNet-50
			  * compiles in under 3 s; 3e6 bought it 0.3% (docs/compiler.md) */
#define PREFIX 256 /* stages of a block timed, at most */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t up(int64_t a, int64_t b) { return cdiv(a, b) * b; }
/* part i of total cut into parts pieces as even as possible */
static int64_t part_lo(int64_t total, int64_t parts, int64_t i) { return i * total / parts; }
/* The same sizes, the larger pieces first (total / parts + 1, then
 * total / parts): a run of equal tiles, then another, which roll into loops
 * (kern_roll.h) where part_lo's interleaved sizes did not. */
static int64_t piece_lo(int64_t total, int64_t parts, int64_t i)
{
	return i * (total / parts) + min64(i, total % parts);
}

/* ---- timing: the simulator's dry run --------------------------------------- */

/* A block is timed by the simulator's dry run (sim/dryrun.h): the
 * instructions it would run, priced by sim_insn_cost.  The blocks run the
 * same program, so they move data at the same time: each gets its share of
 * the L2 and of main memory.  Activations are taken to be in the L2 (the
 * layer before just wrote them) unless the layer's input and output overflow
 * it (a large batch, acold); weights that no other block reads (wcold) come
 * from main memory. */
static void dry_init(struct sim_dryrun *m, const struct soc_config *cfg,
		       const struct sim_costcfg *cc, int64_t blocks, int wcold, int acold)
{
	uint32_t cold = (wcold ? UINT32_C(1) << R_WGM : 0) |
			(acold ? UINT32_C(1) << R_GM | UINT32_C(1) << R_RGM : 0);
	sim_dryrun_init(m, cc, cfg->core_queue_depth, (double)blocks, cold);
}

/* ---- instruction shorthands over the kernel builder (kern_gen.h) ---------- */

/* A register holding v: x0 for 0. */
static int reg(struct kg *gn, int64_t v) { return v ? kg_reg(gn, v) : 0; }

static void set_flag(struct kg *gn, enum isa_pipe src, enum isa_pipe dst, int ev)
{
	cc_set_flag(gn->p, src, dst, ev);
}

static void wait_flag(struct kg *gn, enum isa_pipe src, enum isa_pipe dst, int ev)
{
	cc_wait_flag(gn->p, src, dst, ev);
}

/* A GM transfer at byte off past argument register base, through address
 * register areg, its local address in register lreg (-1: local's cached
 * register): nburst bursts of len blocks (contiguous bursts become one). */
static void xfer_at(struct kg *gn, enum isa_op op, int areg, int base, int64_t off, int lreg,
		    int64_t local, int64_t nburst, int64_t len, int64_t sgap, int64_t dgap)
{
	if (nburst > 1 && sgap == 0 && dgap == 0 && nburst * len <= ISA_DMA_LEN_MAX) {
		len *= nburst;
		nburst = 1;
	}
	kg_dma_reg(gn, op, areg, base, off, lreg >= 0 ? lreg : kg_reg(gn, local), nburst, len, sgap,
		   dgap);
}

/* The same at local address local, held in a cached register. */
static void xfer(struct kg *gn, enum isa_op op, int areg, int base, int64_t off, int64_t local,
		 int64_t nburst, int64_t len, int64_t sgap, int64_t dgap)
{
	xfer_at(gn, op, areg, base, off, -1, local, nburst, len, sgap, dgap);
}

/* f16 vector op on UB addresses with strides st (those its format has);
 * s1 is an address for VBIN ops, the scalar's bits for VSCAL/VDUP (0: x0,
 * the scalar 0).  Registers are looked up dst, s0, s1 in turn. */
static void vop_st(struct kg *gn, enum isa_op op, int64_t dst, int64_t s0, int64_t s1,
		   int64_t rep, struct kg_strides st)
{
	enum isa_fmt fmt = isa_table[op].fmt;
	int rd = kg_reg(gn, dst);
	int rs1 = fmt != ISA_FMT_VDUP ? kg_reg(gn, s0) : 0;
	int rs2 = fmt == ISA_FMT_VBIN ? kg_reg(gn, s1) : reg(gn, s1);
	switch (fmt) {
	case ISA_FMT_VBIN:
		KG_I(gn, VBIN, op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .dt = ISA_DT_F16, .rep = rep,
		     .db = st.db, .s0b = st.s0b, .s1b = st.s1b, .dr = st.dr, .s0r = st.s0r,
		     .s1r = st.s1r);
		break;
	case ISA_FMT_VSCAL:
		KG_I(gn, VSCAL, op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .dt = ISA_DT_F16, .rep = rep,
		     .db = st.db, .s0b = st.s0b, .dr = st.dr, .s0r = st.s0r);
		break;
	case ISA_FMT_VDUP:
		KG_I(gn, VDUP, op, .rd = rd, .rs2 = rs2, .dt = ISA_DT_F16, .rep = rep, .db = st.db,
		     .dr = st.dr);
		break;
	case ISA_FMT_VUN:
		KG_I(gn, VUN, op, .rd = rd, .rs1 = rs1, .dt = ISA_DT_F16, .rep = rep, .db = st.db,
		     .s0b = st.s0b, .dr = st.dr, .s0r = st.s0r);
		break;
	default:
		gn->bad = 1;
	}
}

/* A tile's repetition over its images (or channel blocks) as a counted
 * loop of one body, so that a stage's code does not grow with the images a
 * tile stacks (a large batch): R_BIDX and R_TMP, free once the block
 * dispatch is done, walk the local addresses; a GM base walks as in any
 * loop.  Straight code instead in a dry run (which does not follow
 * branches), for fewer than REP_LOOP_MIN repetitions (a counter and a
 * latch cost more than they save) and with no loop counter left. */
#define REP_LOOP_MIN 3
struct rep {
	int64_t a0, da, b0, db; /* R_BIDX from a0 by da, R_TMP from b0 by db */
	int gm;                 /* a GM base walking by dgm, or 0 */
	int64_t dgm;
	int64_t bias[2];
};

static int rep_loop(const struct kg *gn, int64_t count)
{
	return count >= REP_LOOP_MIN && !gn->p->dry && gn->depth < KG_MAX_LOOPS;
}

static void rep_begin(struct kg *gn, struct rep *r, int64_t count)
{
	struct kg_loop lp = { .count = count };
	cc_li(gn->p, R_BIDX, r->a0);
	lp.reg[lp.nadv] = R_BIDX;
	lp.delta[lp.nadv++] = r->da;
	if (r->db || r->b0) {
		cc_li(gn->p, R_TMP, r->b0);
		lp.reg[lp.nadv] = R_TMP;
		lp.delta[lp.nadv++] = r->db;
	}
	if (r->gm) {
		lp.reg[lp.nadv] = r->gm;
		lp.delta[lp.nadv++] = r->dgm;
	}
	r->bias[0] = gn->bias[R_BIDX];
	r->bias[1] = gn->bias[R_TMP];
	kg_loop_begin(gn, &lp);
}

static void rep_end(struct kg *gn, const struct rep *r)
{
	kg_loop_end(gn);
	/* (scratch registers: set again before every use, never a base) */
	gn->bias[R_BIDX] = r->bias[0];
	gn->bias[R_TMP] = r->bias[1];
}

/* The same with the destination contiguous (block stride 1, repeat 8). */
static void vop(struct kg *gn, enum isa_op op, int64_t dst, int64_t s0, int64_t s1, int64_t rep,
		int64_t s0b, int64_t s0r, int64_t s1b, int64_t s1r)
{
	struct kg_strides st = { .db = 1, .dr = 8, .s0b = s0b, .s0r = s0r, .s1b = s1b, .s1r = s1r };
	vop_st(gn, op, dst, s0, s1, rep, st);
}

/* An element-wise op (VUN/VSCAL/VDUP, contiguous) over npix pixels at ub, in
 * instructions of at most MAX_REP repeats; npix is rounded up to whole repeats. */
static void vrun(struct kg *gn, enum isa_op op, int64_t ub, int64_t npix, int64_t scalar)
{
	int64_t reps = cdiv(npix, 8);
	for (int64_t r = 0; r < reps; r += MAX_REP)
		vop(gn, op, ub + r * 256, ub + r * 256, scalar, min64(MAX_REP, reps - r), 1, 8, 1, 8);
}

/* Whether clipping must skip the padding channels: only a clip range that
 * excludes 0 would turn their zeros into something else. */
static int clip_needs_mask(const struct cc_conv *cv)
{
	return cv->act == CC_ACT_CLIP && cv->cout % 16 &&
	       (cv->clip_lo > 0.0f || cv->clip_hi < 0.0f);
}

/* The activation over npix pixels at ub (fused_relu: already done in
 * mov.l0c.ub); masked: the pixels belong to the last, partial channel block,
 * whose first cout % 16 channels of every pixel (8 pixels of 16 lanes) alone
 * are clipped. */
static void emit_act(struct kg *gn, const struct cc_conv *cv, int64_t ub, int64_t npix,
		     int fused_relu, int masked)
{
	if (cv->act == CC_ACT_RELU && !fused_relu)
		vrun(gn, ISA_OP_VRELU, ub, npix, 0);
	if (cv->act != CC_ACT_CLIP)
		return;
	if (masked) {
		uint64_t w = ((UINT64_C(1) << (cv->cout % 16)) - 1) * UINT64_C(0x0001000100010001);
		kg_mask(gn, w, w);
	}
	vrun(gn, ISA_OP_VMAXS, ub, npix, kg_fbits(cv->clip_lo));
	vrun(gn, ISA_OP_VMINS, ub, npix, kg_fbits(cv->clip_hi));
	if (masked)
		kg_mask_all(gn);
}

/* The arguments into their registers. */
static void conv_args(struct cc_prog *p, const struct cc_conv *cv)
{
	cc_ldarg(p, R_X, 0);
	cc_ldarg(p, R_W, 1);
	cc_ldarg(p, R_Y, 2);
	if (cv->has_bias)
		cc_ldarg(p, R_BIAS, 3);
	if (cc_conv_res(cv))
		cc_ldarg(p, R_RES, cv->has_bias ? 4 : 3);
	if (cc_conv_x8(cv))
		cc_ldarg(p, R_DEQ, 3 + cv->has_bias + cc_conv_res(cv));
	if (cc_conv_y8(cv))
		cc_ldarg(p, R_Y8, 3 + cv->has_bias + cc_conv_res(cv) + cc_conv_x8(cv));
}

/* A dry run of block b of a kernel of `blocks`: the arguments and b's path
 * through the block dispatch, then (the caller) b's code. */
static void dry_prologue(struct cc_prog *p, const struct cc_conv *cv, int64_t blocks, int64_t b)
{
	conv_args(p, cv);
	cc_block_dispatch_path(p, blocks, b, R_BIDX, R_TMP);
}

/* ---- geometry shared by both paths --------------------------------------- */

struct geo {
	const struct soc_config *cfg;
	struct sim_costcfg cc; /* its cost terms, for the dry runs */
	const struct cc_conv *cv;
	int64_t C1, N1, Ho, Wo, M, M1, kk;
	int64_t XC1, XO, YN1, YO; /* channel blocks per image of x and y, and the
				   * conv's first ones (a slice: cv->x_c1...) */
	int64_t S;      /* slices (cv->slices), at least 1 */
	int64_t wslice; /* weight bytes of one slice */
	int ev;   /* event ids per pipe pair the kernel may use */
	int flat; /* 1x1, stride 1, no padding: slabs are runs of pixels, not rows */
	int acold; /* the input and output (and residual) overflow the L2: reads of
		    * x (and r, written layers before) miss it */
	int64_t ub_fixed; /* UB bytes the bias (and int8 dequant scales) take */
	int64_t k0;       /* input channels per block and fractal row: 16, int8 32 */
	int64_t xpix;     /* bytes of one input pixel of one C1 plane: 32, C04 8 */
	int64_t kf1;      /* K fractals per C1 plane: kh*kw, C04 ceil(kh*kw*4 / 16) */
};

/* Bytes of the residual over px pixels of every channel block of an image
 * (0 without one): 32 per pixel and block in fp16, 16 as int8 (32 channels
 * a 32-byte block). */
static int64_t res_bytes(const struct cc_conv *cv, int64_t px)
{
	return cc_conv_res(cv) ? px * PIX / (cc_conv_r8(cv) ? 2 : 1) : 0;
}

/* Output tiles and UB buffers of whole pairs of channel blocks: an int8
 * block holds two fp16 ones (the int8 output, the int8 residual). */
static int pairs_of(const struct cc_conv *cv) { return cc_conv_y8(cv) || cc_conv_r8(cv); }

static void geo_init(struct geo *g, const struct soc_config *cfg, const struct cc_conv *cv)
{
	g->cfg = cfg;
	sim_costcfg_init(&g->cc, cfg);
	g->cv = cv;
	/* an int8 pixel block is 32 channels of one byte: the same 32 bytes, so
	 * slabs, load3d and the fractals keep their byte geometry */
	g->k0 = cc_conv_x8(cv) ? 32 : 16;
	g->C1 = cdiv(cv->cin, g->k0);
	g->N1 = cdiv(cv->cout, 16);
	g->S = cv->slices > 1 ? cv->slices : 1;
	/* the bias of every slice a block may cover */
	g->ub_fixed = up(g->S * g->N1 * PIX, 512) + (cc_conv_x8(cv) ? up(g->N1 * 64, 512) : 0);
	g->Ho = cc_conv_ho(cv);
	g->Wo = cc_conv_wo(cv);
	g->M = g->Ho * g->Wo;
	g->M1 = cdiv(g->M, 16);
	g->kk = cv->kh * cv->kw;
	g->xpix = cc_conv_c04(cv) ? 8 : PIX;
	g->kf1 = cc_conv_c04(cv) ? cdiv(g->kk * 4, 16) : g->kk;
	g->wslice = g->C1 * g->kf1 * g->N1 * FRAC;
	g->XC1 = cv->x_c1 ? cv->x_c1 : g->S * g->C1;
	g->XO = cv->x_c1 ? cv->x_c1o : 0;
	g->YN1 = cv->y_n1 ? cv->y_n1 : g->S * g->N1;
	g->YO = cv->y_n1 ? cv->y_n1o : 0;
	g->ev = (int)min64(cfg->core_event_ids, MAX_EV);
	g->flat = cv->kh == 1 && cv->kw == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt && !cv->pl &&
		  !cv->pb && !cv->pr;
	int64_t xy = cv->n * g->S *
		     (g->C1 * cv->h * cv->w * g->xpix + g->N1 * g->M * PIX +
		      res_bytes(cv, g->N1 * g->M));
	g->acold = xy > cfg->l2_size_kb * 1024;
}

/* Main memory sees every byte of x, w, y (and r) at least once (wbytes
 * and ych1 for one slice): the time it streams them (sim_hbm_stream's
 * occupancy; its latency the blocks' dry runs already hold, as they read
 * their cold data). */
static double hbm_bound(const struct geo *g, double wbytes, int64_t ych1)
{
	const struct cc_conv *cv = g->cv;
	double once = (double)cv->n *
			      (double)(g->C1 * cv->h * cv->w * g->xpix + ych1 * g->M * PIX +
				       res_bytes(cv, ych1 * g->M)) +
		      wbytes;
	struct sim_cost h = sim_hbm_stream(&g->cc, (double)g->S * once);
	return (double)h.occ;
}

/* ---- cube path ----------------------------------------------------------- */

struct cube_tiling {
	int64_t ng;          /* image groups: pieces of the batch */
	int64_t mt, nt, nch; /* pieces: of an image's M1 pixel fractals, of N1, of C1 */
	int order;           /* tile order: 0 channel tiles innermost, 1 pixel tiles innermost */
	int pack;            /* a 1x1 conv's groups of whole images packed along M (tile pack) */
	int es, ew, nq;      /* L1 slots with a slab / weight region, UB output buffers */
	int nr;              /* UB residual buffers (0 without a residual) */
	int64_t upc;         /* channel blocks per UB output buffer */
	int64_t gi, mfi;     /* the largest group: images; pixel tile: M fractals */
	int64_t mf, nf, c1f; /* the largest tile and chunk: M fractals (gi x mfi),
			      * N fractals, C1 planes */
	int64_t kf;          /* K fractals per L0 step */
	int64_t tiles, blocks;
	int64_t slab_bytes, w_bytes; /* one L1 slot of each kind */
	double lb, rank, est; /* lower bound, search order, modelled time */
	int64_t idx;          /* its place in cube_candidates' list */
	double core;          /* the modelled time of the slowest block alone */
};

/* Of slice sl: images [img, img + nimg), output pixels [m0, m0 + mrows) of
 * each, output channel blocks [n1a, n1a + n1c) (within the slice). */
struct tile {
	int64_t sl, img, nimg, m0, mrows, n1a, n1c;
	/* A 1x1 conv's whole images, packed: image i's pixels from M row
	 * i * mrows, not from a fractal row of its own (a batch of 7x7 images
	 * wastes no 15/64 of the cube on padding rows).  The L1 slab holds the
	 * images one after another per channel plane, which one load3d
	 * expands: a flat conv's as one row of pixels, a strided one's
	 * (unpadded, the stride dividing the height) as the images stacked row
	 * on row, so that no window reads across two of them. */
	int pack;
};

/* M fractal rows a tile's image takes (its rows rounded up to 16), and the
 * tile's: the images are stacked along M, each from a fractal row. */
static int64_t tile_mfi(const struct tile *t) { return cdiv(t->mrows, 16); }
/* The M row image i's pixels start from: i times this. */
static int64_t tile_rs(const struct tile *t) { return t->pack ? t->mrows : tile_mfi(t) * 16; }
static int64_t tile_mf(const struct tile *t)
{
	return t->pack ? cdiv(t->nimg * t->mrows, 16) : t->nimg * tile_mfi(t);
}
/* mmad's m: the last image's padding rows need not be computed. */
static int64_t tile_m(const struct tile *t) { return (t->nimg - 1) * tile_rs(t) + t->mrows; }

/* The input a tile reads and the set_fmatrix/load3d view of it: fh rows of
 * fw pixels from pixel x0 of each input plane (whole rows, or for a flat
 * conv just the tile's own pixels, seen as one row). */
struct slab {
	int64_t x0, fh, fw;
	int64_t ptp, pbp; /* set_fmatrix top/bottom padding */
	int64_t mstart;   /* load3d m_start of the tile's first pixel */
};

struct stage { /* one (tile, K chunk) */
	struct tile t;
	struct slab s;
	int64_t c1a, c1c;
	int first, last;     /* first / last chunk of its tile */
	int sslot, wslot;    /* the L1 slots holding its slab and its weights */
	int lslot;           /* the slot loaded for it, -1 when it finds both in L1 */
	int sload, wload;    /* which of the two that load brings */
	int wagain;          /* its weights were loaded before in the block (evicted
			      * since): the L2 holds them, main memory is not read */
	unsigned rel;        /* slots released after it (their last use before a reload) */
};

static void tile_of(const struct geo *g, const struct cube_tiling *t, int64_t idx, struct tile *o)
{
	/* the slice outermost: a block's run of tiles spans few slices */
	int64_t per = t->tiles / g->S, gr, mi, ni;
	o->sl = idx / per;
	idx %= per;
	if (t->order == 0) {
		gr = idx / (t->mt * t->nt);
		mi = idx / t->nt % t->mt;
		ni = idx % t->nt;
	} else {
		ni = idx / (t->ng * t->mt);
		gr = idx / t->mt % t->ng;
		mi = idx % t->mt;
	}
	int64_t f0 = piece_lo(g->M1, t->mt, mi), f1 = piece_lo(g->M1, t->mt, mi + 1);
	/* groups as even as possible: a group's size is gi or gi - 1 */
	o->img = piece_lo(g->cv->n, t->ng, gr);
	o->nimg = piece_lo(g->cv->n, t->ng, gr + 1) - o->img;
	o->m0 = f0 * 16;
	o->mrows = min64(f1 * 16, g->M) - o->m0;
	o->pack = t->pack;
	if (pairs_of(g->cv)) { /* whole pairs of channel blocks: one int8 block each */
		int64_t pairs = cdiv(g->N1, 2);
		o->n1a = 2 * piece_lo(pairs, t->nt, ni);
		o->n1c = min64(2 * piece_lo(pairs, t->nt, ni + 1), g->N1) - o->n1a;
		return;
	}
	o->n1a = piece_lo(g->N1, t->nt, ni);
	o->n1c = piece_lo(g->N1, t->nt, ni + 1) - o->n1a;
}

/* The slab for output pixels [m0, m0 + mrows).  The view's first output row
 * ob is the tile's first row unless that would need a negative top padding
 * (a tile whose windows start below the image's last row). */
static void slab_of(const struct geo *g, int64_t m0, int64_t mrows, struct slab *s)
{
	const struct cc_conv *cv = g->cv;
	if (g->flat) {
		s->x0 = m0;
		s->fh = 1;
		s->fw = mrows;
		s->ptp = s->pbp = s->mstart = 0;
		return;
	}
	int64_t ohs = m0 / g->Wo, ohe = (m0 + mrows - 1) / g->Wo;
	int64_t a = ohs * cv->sh - cv->pt, b = ohe * cv->sh - cv->pt + cv->dh * (cv->kh - 1);
	int64_t ih0 = min64(max64(a, 0), cv->h - 1);
	int64_t ih1 = min64(max64(b + 1, ih0 + 1), cv->h);
	int64_t ob = min64(ohs, (cv->pt + ih0) / cv->sh);
	s->x0 = ih0 * cv->w;
	s->fh = ih1 - ih0;
	s->fw = cv->w;
	s->ptp = cv->pt + ih0 - ob * cv->sh;
	s->pbp = max64(0, (ohe - ob) * cv->sh + cv->dh * (cv->kh - 1) + 1 - s->fh - s->ptp);
	s->mstart = m0 - ob * g->Wo;
}

/* The L1 slots: slot i has a slab region if i < es and a weight region if
 * i < ew; one event per slot covers whatever one stage loads into it. */
struct pool {
	int es, ew;
	int sval[MAX_EV], wval[MAX_EV];
	int64_t skey[MAX_EV][6], wkey[MAX_EV][6];
	int64_t used[MAX_EV]; /* last stage that used the slot, -1: never */
};

static int pool_find(const int *valid, int64_t (*keys)[6], int n, const int64_t key[6])
{
	for (int i = 0; i < n; i++)
		if (valid[i] && !memcmp(keys[i], key, sizeof keys[i]))
			return i;
	return -1;
}

/* Least recently used slot with the regions a load needs, other than keep
 * (the slot holding the stage's other piece) when there is a choice. */
static int pool_victim(const struct pool *p, int need_s, int need_w, int keep)
{
	int v = -1;
	for (int pass = 0; pass < 2 && v < 0; pass++)
		for (int i = 0; i < MAX_EV; i++) {
			if ((need_s && i >= p->es) || (need_w && i >= p->ew) ||
			    (i >= p->es && i >= p->ew) || (pass == 0 && i == keep))
				continue;
			if (v < 0 || p->used[i] < p->used[v])
				v = i;
		}
	return v;
}

/* Find or place stage n's slab and weights. */
static void pool_use(struct pool *p, struct stage *s, int64_t n)
{
	/* an image group is known by its first image */
	int64_t sk[6] = { s->t.img, s->s.x0, s->s.fh * s->s.fw, s->c1a, s->c1c, s->t.sl };
	int64_t wk[6] = { s->c1a, s->c1c, s->t.n1a, s->t.n1c, s->t.sl, 0 };
	int hs = pool_find(p->sval, p->skey, p->es, sk);
	int hw = pool_find(p->wval, p->wkey, p->ew, wk);
	s->lslot = -1;
	s->sload = hs < 0;
	s->wload = hw < 0;
	if (s->sload || s->wload) {
		/* slot 0 has both regions, so there always is one; it may be the
		 * slot of the piece found, whose region the load leaves alone */
		int v = pool_victim(p, s->sload, s->wload, s->sload ? hw : hs);
		if (s->sload) {
			memcpy(p->skey[v], sk, sizeof sk);
			p->sval[v] = 1;
			hs = v;
		}
		if (s->wload) {
			memcpy(p->wkey[v], wk, sizeof wk);
			p->wval[v] = 1;
			hw = v;
		}
		s->lslot = v;
	}
	s->sslot = hs;
	s->wslot = hw;
	p->used[hs] = p->used[hw] = n;
}

/* Block b's stages, with the L1 slot decisions; returns their number. */
static int64_t plan_stages(const struct geo *g, const struct cube_tiling *t, int64_t b,
			   struct stage *st)
{
	int64_t t0 = part_lo(t->tiles, t->blocks, b), t1 = part_lo(t->tiles, t->blocks, b + 1);
	int64_t n = 0;
	struct pool pl = { .es = t->es, .ew = t->ew };
	/* the weight pieces loaded so far, by (slice, first channel block, first
	 * output block): none known when out of memory (all read cold) */
	int64_t nbits = g->S * g->C1 * g->N1;
	uint64_t *seen = calloc((size_t)cdiv(nbits, 64), sizeof *seen);
	for (int i = 0; i < MAX_EV; i++)
		pl.used[i] = -1 - (MAX_EV - i); /* unused slots first, in order */
	for (int64_t ti = t0; ti < t1; ti++) {
		struct tile tl;
		struct slab sl;
		tile_of(g, t, ti, &tl);
		slab_of(g, tl.m0, tl.mrows, &sl);
		if (tl.pack) /* whole images, stacked */
			sl = (struct slab){ .fh = g->cv->h, .fw = g->cv->w };
		for (int64_t j = 0; j < t->nch; j++, n++) {
			struct stage *s = &st[n];
			s->t = tl;
			s->s = sl;
			s->c1a = j * t->c1f;
			s->c1c = min64(t->c1f, g->C1 - s->c1a);
			s->first = j == 0;
			s->last = j == t->nch - 1;
			pool_use(&pl, s, n);
			int64_t w = (tl.sl * g->C1 + s->c1a) * g->N1 + tl.n1a;
			s->wagain = s->wload && seen && (seen[w / 64] >> (w % 64) & 1);
			if (seen)
				seen[w / 64] |= UINT64_C(1) << (w % 64);
		}
	}
	free(seen);
	/* a slot is released after its last use before its next load (or the end):
	 * walking backwards, the first use seen after a load (or the end) is it */
	unsigned open = ~0u;
	for (int64_t i = n - 1; i >= 0; i--) {
		unsigned use = 1u << st[i].sslot | 1u << st[i].wslot;
		st[i].rel = use & open;
		open &= ~use;
		if (st[i].lslot >= 0)
			open |= 1u << st[i].lslot;
	}
	return n;
}

struct cube_mem {
	int64_t l1_slab[MAX_EV], l1_w[MAX_EV];
	int64_t l0a_half, l0b_half, l0c_half;
	int64_t ub_bias, ub_deq, ub_q[MAX_UBQ], ub_r[MAX_UBQ];
};

static void cube_mem_of(const struct geo *g, const struct cube_tiling *t, struct cube_mem *m)
{
	const struct soc_config *cfg = g->cfg;
	for (int i = 0; i < t->es; i++)
		m->l1_slab[i] = i * t->slab_bytes;
	for (int i = 0; i < t->ew; i++)
		m->l1_w[i] = t->es * t->slab_bytes + i * t->w_bytes;
	m->l0a_half = cfg->l0a_size_kb * 512;
	m->l0b_half = cfg->l0b_size_kb * 512;
	m->l0c_half = cfg->l0c_size_kb * 512;
	m->ub_bias = 0;
	m->ub_deq = up(g->N1 * PIX, 512);
	/* the output buffers (with requantization, each followed by its
	 * interleaved pairs; with an int8 residual the same space first holds
	 * the residual widened to fp16), then r's */
	int64_t one = t->mf * t->upc * FRAC, qb = one * (pairs_of(g->cv) ? 2 : 1);
	for (int q = 0; q < t->nq; q++)
		m->ub_q[q] = g->ub_fixed + q * qb;
	for (int r = 0; r < t->nr; r++)
		m->ub_r[r] = g->ub_fixed + t->nq * qb + r * one;
}

/* Between GM and the UB for nn channel blocks of a tile, from n0 on, at ub
 * ([nn][mf*16][16] pixels; image i's rows from row i*tile_rs): bursts of
 * mrows pixels, each image's at its own place in GM.  One transfer per image,
 * its bursts going over the channel blocks, or one per channel block, over
 * the images: whichever takes fewer.  MTE3 writes y from the UB; MTE2 reads
 * the residual r, which has y's layout, into the UB in the same shape. */
static void cube_gm(struct kg *gn, const struct geo *g, const struct tile *tl, int64_t ub,
		    int64_t n0, int64_t nn, int load)
{
	int64_t rs = tile_rs(tl), mf = tile_mf(tl), rows = tl->mrows;
	int per_img = tl->nimg <= nn;
	int64_t nw = per_img ? tl->nimg : nn, nb = per_img ? nn : tl->nimg;
	int64_t ugap = per_img ? mf * 16 - rows : rs - rows;
	int64_t ggap = per_img ? g->M - rows : g->YN1 * g->M - rows;
	int64_t off = ((tl->img * g->YN1 + g->YO + tl->sl * g->N1 + tl->n1a + n0) * g->M + tl->m0) *
		      PIX;
	/* the next image (per_img) or channel block, in GM and in the UB */
	int64_t doff = (per_img ? g->YN1 * g->M : g->M) * PIX;
	int64_t dloc = per_img ? rs * PIX : mf * FRAC;
	enum isa_op op = load ? ISA_OP_MOV_GM_UB : ISA_OP_MOV_UB_GM;
	int areg = load ? R_RGM : R_GM, base = load ? R_RES : R_Y;
	struct rep r = { .a0 = ub, .da = dloc, .gm = base, .dgm = doff };
	int loop = rep_loop(gn, nw);
	if (loop) {
		rep_begin(gn, &r, nw);
		nw = 1;
	}
	for (int64_t i = 0; i < nw; i++)
		xfer_at(gn, op, areg, base, off + i * doff, loop ? R_BIDX : -1, ub + i * dloc, nb, rows,
			load ? ggap : ugap, load ? ugap : ggap);
	if (loop)
		rep_end(gn, &r);
}

/* Whether an int8 drain interleaves early: with the output scale folded in
 * (only int8 written, no clip) and whole pairs, the pass that interleaves
 * the pairs takes the bias along (vadd, or vaddrelu with the relu when no
 * residual follows), an int8 residual is added to the interleaved pairs
 * and, with a relu, narrowed by the same instruction (vaddreluconv): the
 * values each round where the separate passes rounded them, so the int8
 * output is the same, in 2 passes after the L0C move instead of 3, or 4
 * instead of 6 with a residual. */
static int q8_early(const struct cc_conv *cv, int64_t nn)
{
	/* (an activation other than the relu would have to come before the
	 * interleave: none folds today) */
	return cv->y_form == CC_CONV_Y_S8_FOLDED && nn % 2 == 0 &&
	       (cv->act == CC_ACT_NONE || cv->act == CC_ACT_RELU);
}

/* V: plane n1 of a UB output buffer ([nn][px][16] fp16 at ub), op'd with
 * s1 (a VSCAL scalar's bits, or a VBIN operand's 32-byte block, broadcast),
 * to alternate 32-byte blocks of its pair at tmp ([px][32] fp16 a pair). */
static void q8_interleave(struct kg *gn, enum isa_op op, int64_t ub, int64_t tmp, int64_t px,
			  int64_t n1, int64_t s1)
{
	int64_t dst = tmp + n1 / 2 * px * 64 + n1 % 2 * 32;
	for (int64_t done = 0; done < px; done += 8 * MAX_REP) {
		int64_t rep = min64(MAX_REP, (px - done) / 8);
		struct kg_strides st = { .db = 2, .dr = 16, .s0b = 1, .s0r = 8 };
		vop_st(gn, op, dst + done * 64, ub + n1 * px * 32 + done * 32, s1, rep, st);
	}
}

/* V: one interleaved pair at dst ([px][32] fp16) narrowed in place to
 * [px][32] int8 (repeat r writes bytes its earlier repeats have read); with
 * add >= 0 (the pair's residual, the same layout) by vaddreluconv, which
 * adds it and applies the relu first.  128 values a repeat: 4 pixels. */
static void q8_narrow(struct kg *gn, int64_t dst, int64_t px, int64_t add)
{
	for (int64_t done = 0; done < px; done += 4 * MAX_REP) {
		int64_t rep = min64(MAX_REP, (px - done) / 4);
		if (add < 0) {
			KG_V(gn, VCONV, ISA_OP_VCONV, ISA_DT_S8, dst + done * 32, dst + done * 64,
			     rep, .st = ISA_DT_F16, .rnd = ISA_RND_RNE, .rep = rep, .db = 1,
			     .dr = 4, .s0b = 1, .s0r = 8);
		} else {
			int rs2 = kg_reg(gn, add + done * 64);
			KG_V(gn, VBINC, ISA_OP_VADDRELUCONV, ISA_DT_S8, dst + done * 32,
			     dst + done * 64, rep, .rs2 = rs2, .st = ISA_DT_F16, .db = 1, .dr = 4,
			     .s0b = 1, .s0r = 8, .s1b = 1, .s1r = 8);
		}
	}
}

/* Requantization of a UB output buffer of nn channel blocks of mf*16
 * pixels ([nn][mf*16][16] fp16) into int8 pairs after it (the buffer's
 * second half): pair p's two planes, scaled, go to alternate 32-byte blocks
 * of [mf*16][32] fp16 (a missing odd plane: zeros), which one vconv
 * narrows in place to [mf*16][32] int8.  Interleaved early (q8_early):
 * only the narrowing is left, unless an int8 residual's add did it. */
static void cube_requant(struct kg *gn, const struct cc_conv *cv, const struct cube_tiling *t,
			 int64_t ub, int64_t mf, int64_t nn)
{
	int64_t pairs = cdiv(nn, 2), tmp = ub + t->mf * t->upc * FRAC, px = mf * 16;
	if (q8_early(cv, nn)) {
		if (!(cc_conv_res(cv) && cv->act == CC_ACT_RELU))
			for (int64_t pr = 0; pr < pairs; pr++)
				q8_narrow(gn, tmp + pr * px * 64, px, -1);
		return;
	}
	/* folded (CC_CONV_Y_S8_FOLDED): the values are already y / s_y, and this
	 * pass, needed anyway to interleave the pairs, applies the relu */
	int relu = cv->y_form == CC_CONV_Y_S8_FOLDED && cv->act == CC_ACT_RELU;
	int op = relu ? ISA_OP_VMAXS : ISA_OP_VMULS;
	int64_t scale = kg_fbits(relu ? 0.0f : cv->q8_inv_scale);
	for (int64_t pr = 0; pr < pairs; pr++) {
		int64_t dst = tmp + pr * px * 64;
		for (int h = 0; h < 2; h++) {
			if (2 * pr + h < nn) {
				q8_interleave(gn, op, ub, tmp, px, 2 * pr + h, scale);
				continue;
			}
			for (int64_t done = 0; done < px; done += 8 * MAX_REP) {
				int64_t rep = min64(MAX_REP, (px - done) / 8), d = dst + h * 32 + done * 64;
				struct kg_strides st = { .db = 2, .dr = 16, .s0b = 1, .s0r = 8 };
				vop_st(gn, ISA_OP_VDUP, d, 0, 0, rep, st);
			}
		}
		q8_narrow(gn, dst, px, -1);
	}
}

/* The early interleave (q8_early) of a UB output buffer: each plane to its
 * pair at tmp, with its bias block at bias (-1: none) added, and the relu
 * when no residual comes after (without a bias the L0C move applied it). */
static void cube_q8_interleave(struct kg *gn, const struct cc_conv *cv,
			       const struct cube_tiling *t, int64_t ub, int64_t mf, int64_t nn,
			       int64_t bias)
{
	int64_t tmp = ub + t->mf * t->upc * FRAC, px = mf * 16;
	int relu = cv->act == CC_ACT_RELU && !cc_conv_res(cv);
	for (int64_t n1 = 0; n1 < nn; n1++) {
		if (bias >= 0)
			q8_interleave(gn, relu ? ISA_OP_VADDRELU : ISA_OP_VADD, ub, tmp, px, n1,
				      bias + n1 * PIX);
		else
			q8_interleave(gn, relu ? ISA_OP_VMAXS : ISA_OP_VMULS, ub, tmp, px, n1,
				      kg_fbits(relu ? 0.0f : cv->q8_inv_scale));
	}
}

/* MTE3: the int8 pairs of a UB output buffer to y8 ([N][ceil(N1/2)][M][32]
 * bytes): per image, one burst per pair of its tile rows. */
static void cube_gm8(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
		     const struct tile *tl, int64_t ub, int64_t n0, int64_t nn)
{
	int64_t mfi = tile_mfi(tl), mf = tile_mf(tl), rows = tl->mrows, P = cdiv(g->N1, 2);
	int64_t tmp = ub + t->mf * t->upc * FRAC, pairs = cdiv(nn, 2);
	for (int64_t i = 0; i < tl->nimg; i++) {
		xfer(gn, ISA_OP_MOV_UB_GM, R_GM, R_Y8,
		     (((tl->img + i) * P + (tl->n1a + n0) / 2) * g->M + tl->m0) * PIX,
		     tmp + i * mfi * 16 * PIX, pairs, rows, 2 * mf * 16 - rows, g->M - rows);
	}
}

/* MTE2: the int8 residual's pairs of channel blocks [n0, n0 + nn) of a
 * tile (r8 is [N][ceil(N1/2)][M][32] bytes, as cube_gm8 writes y8) into the
 * second half of UB residual buffer ub, [pairs][mf*16][32] bytes (image i's
 * rows from row i*mfi*16 of each pair): per image, one burst per pair. */
static void cube_res_gm8(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
			 const struct tile *tl, int64_t ub, int64_t n0, int64_t nn)
{
	int64_t mfi = tile_mfi(tl), mf = tile_mf(tl), rows = tl->mrows, P = cdiv(g->N1, 2);
	int64_t half = t->mf * t->upc * FRAC / 2;
	for (int64_t i = 0; i < tl->nimg; i++) {
		xfer(gn, ISA_OP_MOV_GM_UB, R_RGM, R_RES,
		     (((tl->img + i) * P + (tl->n1a + n0) / 2) * g->M + tl->m0) * PIX,
		     ub + half + i * mfi * 16 * PIX, cdiv(nn, 2), rows, g->M - rows, mf * 16 - rows);
	}
}

/* V: the int8 residual in the second half of UB residual buffer ub (nn
 * channel blocks, cube_res_gm8) to fp16 [nn][mf*16][16] at ub, as
 * DequantizeLinear computes it: vconv widens each pair's [mf*16][32] int8
 * to fp16 in tmp (exact: |q| <= 128), then one vmuls per plane scales
 * alternate 32-byte blocks (the pair's two 16-channel halves) by r_scale
 * into the plane, fp16(q * r_scale).  Interleaved early (q8_early), the
 * pairs stay interleaved: widened in place into the buffer's whole
 * ([pairs][mf*16][32] fp16; repeat r writes bytes its earlier repeats have
 * read), scaled in place, then added to the output's pairs at tmp, which
 * with a relu narrows them too (vaddreluconv). */
static void cube_res_dequant(struct kg *gn, const struct cc_conv *cv,
			     const struct cube_tiling *t, int64_t ub, int64_t tmp, int64_t mf,
			     int64_t nn)
{
	int64_t pairs = cdiv(nn, 2), px = mf * 16, half = t->mf * t->upc * FRAC / 2;
	int early = q8_early(cv, nn);
	int64_t wide = early ? ub : tmp;
	/* 128 values a repeat: 4 pixels of a pair */
	for (int64_t done = 0; done < pairs * px; done += 4 * MAX_REP) {
		int64_t rep = min64(MAX_REP, (pairs * px - done) / 4);
		KG_V(gn, VCONV, ISA_OP_VCONV, ISA_DT_F16, wide + done * 64, ub + half + done * 32,
		     rep, .st = ISA_DT_S8, .rnd = ISA_RND_RNE, .rep = rep, .db = 1, .dr = 8,
		     .s0b = 1, .s0r = 4);
	}
	if (early) {
		int64_t reps = pairs * px / 4;
		for (int64_t r = 0; r < reps; r += MAX_REP)
			vop(gn, ISA_OP_VMULS, ub + r * 256, ub + r * 256, kg_fbits(cv->r_scale),
			    min64(MAX_REP, reps - r), 1, 8, 0, 0);
		if (cv->act == CC_ACT_RELU) {
			for (int64_t pr = 0; pr < pairs; pr++)
				q8_narrow(gn, tmp + pr * px * 64, px, ub + pr * px * 64);
		} else {
			for (int64_t r = 0; r < reps; r += MAX_REP)
				vop(gn, ISA_OP_VADD, tmp + r * 256, tmp + r * 256, ub + r * 256,
				    min64(MAX_REP, reps - r), 1, 8, 1, 8);
		}
		return;
	}
	for (int64_t n1 = 0; n1 < nn; n1++) {
		int64_t src = tmp + n1 / 2 * px * 64 + n1 % 2 * 32;
		for (int64_t done = 0; done < px; done += 8 * MAX_REP)
			vop(gn, ISA_OP_VMULS, ub + n1 * px * 32 + done * 32, src + done * 64,
			    kg_fbits(cv->r_scale), min64(MAX_REP, (px - done) / 8), 2, 16, 0, 0);
	}
}

/* Progress through a block's program. */
struct cube_state {
	int64_t fm[4];        /* the fmatrix in effect: fh, fw, pt, pb */
	int64_t l0b_key[2][5]; /* what each L0B half holds */
	int64_t step, tiles, groups;
	int64_t sl0; /* the block's first slice: its bias is first in the UB */
	/* the residual: the block's stages; buffer groups loaded and added; the
	 * next group to load: the stage ending its tile, its first channel block */
	const struct stage *st;
	int64_t ns, rload, radd, rs, rn0;
};

/* The next stage at or after s that ends a tile, or ns. */
static int64_t next_last(const struct cube_state *cs, int64_t s)
{
	while (s < cs->ns && !cs->st[s].last)
		s++;
	return s;
}

/* MTE2 brings the residual rows of the next buffer group (in drain order)
 * into its UB buffer, once the vector unit has released the buffer. */
static void cube_res_load(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
			  const struct cube_mem *mem, struct cube_state *cs)
{
	const struct tile *tl = &cs->st[cs->rs].t;
	int64_t nn = min64(t->upc, tl->n1c - cs->rn0);
	int b = (int)(cs->rload % t->nr);
	wait_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, b);
	if (cc_conv_r8(g->cv))
		cube_res_gm8(gn, g, t, tl, mem->ub_r[b], cs->rn0, nn);
	else
		cube_gm(gn, g, tl, mem->ub_r[b], cs->rn0, nn, 1);
	set_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, 1 + b);
	cs->rload++;
	cs->rn0 += t->upc;
	if (cs->rn0 >= tl->n1c) {
		cs->rn0 = 0;
		cs->rs = next_last(cs, cs->rs + 1);
	}
}

/* Residual loads issued ahead: up to max(nr - 1, 1) groups past the last
 * one added, so that (with nr >= 2) the buffer a load needs was released a
 * group ago and MTE2 does not wait on the vector unit's latest add; only
 * groups of the tile ending at stage `only`, when that is >= 0. */
static void cube_res_ahead(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
			   const struct cube_mem *mem, struct cube_state *cs, int64_t only)
{
	int64_t ahead = t->nr > 1 ? t->nr - 1 : 1;
	while (cc_conv_res(g->cv) && cs->rs < cs->ns && (only < 0 || cs->rs == only) &&
	       cs->rload < cs->radd + ahead)
		cube_res_load(gn, g, t, mem, cs);
}

/* V and MTE3 for a finished tile in L0C half c, upc channel blocks at a time
 * through the UB buffers (cs->groups counts them over the block): the
 * buffer's flag covers the writes of all its rows. */
static void cube_drain(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
		       const struct cube_mem *mem, int64_t si, int c, struct cube_state *cs)
{
	const struct cc_conv *cv = g->cv;
	const struct tile *tl = &cs->st[si].t;
	int64_t mf = tile_mf(tl);
	int fused = cv->act == CC_ACT_RELU && !cv->has_bias && !cc_conv_res(cv);
	set_flag(gn, ISA_PIPE_M, ISA_PIPE_V, c);
	wait_flag(gn, ISA_PIPE_M, ISA_PIPE_V, c);
	for (int64_t n0 = 0; n0 < tl->n1c; n0 += t->upc) {
		int64_t nn = min64(t->upc, tl->n1c - n0);
		int q = (int)(cs->groups % t->nq);
		int64_t ub = mem->ub_q[q];
		/* a group not loaded ahead (several in one tile) is loaded now:
		 * its buffer was released by an add already issued */
		while (cc_conv_res(cv) && cs->rload <= cs->groups)
			cube_res_load(gn, g, t, mem, cs);
		cs->groups++;
		wait_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, q);
		if (cc_conv_x8(cv)) { /* each channel block with its own dequant scales */
			for (int64_t n1 = 0; n1 < nn; n1++) {
				int rd = reg(gn, ub + n1 * mf * FRAC);
				int rs1 = reg(gn, c * mem->l0c_half + (n0 + n1) * mf * 1024);
				int rs2 = reg(gn, mem->ub_deq + (tl->n1a + n0 + n1) * 64);
				KG_I(gn, L0C, ISA_OP_MOV_L0C_UB, .rd = rd, .rs1 = rs1, .rs2 = rs2,
				     .nfrac = mf, .cvt = ISA_CVT_DEQV, .relu = fused);
			}
		} else {
			int rd = reg(gn, ub), rs1 = reg(gn, c * mem->l0c_half + n0 * mf * 1024);
			KG_I(gn, L0C, ISA_OP_MOV_L0C_UB, .rd = rd, .rs1 = rs1, .rs2 = 0,
			     .nfrac = nn * mf, .cvt = ISA_CVT_F16, .relu = fused);
		}
		if (n0 + nn == tl->n1c)
			set_flag(gn, ISA_PIPE_V, ISA_PIPE_M, c);
		if (q8_early(cv, nn))
			cube_q8_interleave(gn, cv, t, ub, mf, nn,
					   cv->has_bias ? mem->ub_bias + ((tl->sl - cs->sl0) * g->N1 +
									  tl->n1a + n0) * PIX
							: -1);
		else if (cv->has_bias && rep_loop(gn, nn)) {
			struct rep r = { .a0 = ub, .da = mf * FRAC,
					 .b0 = mem->ub_bias +
					       ((tl->sl - cs->sl0) * g->N1 + tl->n1a + n0) * PIX,
					 .db = PIX };
			rep_begin(gn, &r, nn);
			KG_I(gn, VBIN, ISA_OP_VADD, .rd = R_BIDX, .rs1 = R_BIDX, .rs2 = R_TMP,
			     .dt = ISA_DT_F16, .rep = mf * 2, .db = 1, .s0b = 1, .s1b = 0, .dr = 8,
			     .s0r = 8, .s1r = 0);
			rep_end(gn, &r);
		} else if (cv->has_bias)
			for (int64_t n1 = 0; n1 < nn; n1++)
				vop(gn, ISA_OP_VADD, ub + n1 * mf * FRAC, ub + n1 * mf * FRAC,
				    mem->ub_bias +
					    ((tl->sl - cs->sl0) * g->N1 + tl->n1a + n0 + n1) * PIX,
				    mf * 2, 1, 8, 0, 0);
		if (cc_conv_res(cv)) {
			/* the buffer's whole [nn][mf*16] pixels: the rows between
			 * images are junk on both sides and are not written */
			int b = (int)(cs->radd % t->nr);
			int64_t reps = nn * mf * 2;
			wait_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, 1 + b);
			/* (the output buffer's second half is free: MTE3 is done
			 * with it and the requantization comes after the add) */
			if (cc_conv_r8(cv))
				cube_res_dequant(gn, cv, t, mem->ub_r[b], ub + t->mf * t->upc * FRAC,
						 mf, nn);
			for (int64_t r = 0; r < reps && !q8_early(cv, nn); r += MAX_REP)
				vop(gn, ISA_OP_VADD, ub + r * 256, ub + r * 256,
				    mem->ub_r[b] + r * 256, min64(MAX_REP, reps - r), 1, 8, 1, 8);
			set_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, b);
			cs->radd++;
			/* the tile's next group comes while this one finishes; the
			 * next tile's, after that tile's first loads */
			cube_res_ahead(gn, g, t, mem, cs, si);
		}
		/* the layer's last channel block may need its padding lanes masked */
		int masked = clip_needs_mask(cv) && tl->n1a + n0 + nn == g->N1;
		/* (a folded requantization's relu comes with its interleave) */
		if (nn - masked > 0)
			emit_act(gn, cv, ub, (nn - masked) * mf * 16,
				 fused || cv->y_form == CC_CONV_Y_S8_FOLDED, 0);
		if (masked)
			emit_act(gn, cv, ub + (nn - 1) * mf * FRAC, mf * 16, fused, 1);
		if (cc_conv_y8(cv))
			cube_requant(gn, cv, t, ub, mf, nn);
		set_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE3, q);
		wait_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE3, q);
		if (cc_conv_y16(cv))
			cube_gm(gn, g, tl, ub, n0, nn, 0);
		if (cc_conv_y8(cv))
			cube_gm8(gn, g, t, tl, ub, n0, nn);
		set_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, q);
	}
}

/* MTE2 for a stage: the slab and weights it does not find in L1, into one
 * slot, announced with one flag.  The images' slabs go back to back, each
 * [c1c][rows][W][16]: in one write when a burst per image can carry one's
 * (its planes are whole or there is one), else in one write per image. */
static void cube_loads(struct kg *gn, const struct geo *g, const struct cube_mem *mem,
		       const struct stage *s)
{
	const struct cc_conv *cv = g->cv;
	const struct tile *tl = &s->t;
	if (s->lslot < 0)
		return;
	wait_flag(gn, ISA_PIPE_MTE1, ISA_PIPE_MTE2, s->lslot);
	if (s->sload) {
		int64_t plane = cv->h * cv->w, px = s->s.fh * s->s.fw, one = s->c1c * px;
		int64_t base = (tl->img * g->XC1 + g->XO + tl->sl * g->C1 + s->c1a) * plane +
			       s->s.x0;
		/* pixels to 32-byte blocks: C04 pixels are 8 bytes, and every count
		 * here is then a multiple of 4 (cc_conv_c04_ok) */
		int64_t bp = PIX / g->xpix;
		/* one burst an image when its planes are contiguous in both places
		 * (a packed group's are not in L1: [c1c][nimg][px], each plane
		 * one row of the group's pixels) */
		if ((s->c1c == 1 || (!tl->pack && px == plane)) && one / bp <= ISA_DMA_LEN_MAX) {
			xfer(gn, ISA_OP_MOV_GM_L1, R_GM, R_X, base * g->xpix, mem->l1_slab[s->sslot],
			     tl->nimg, one / bp, (g->XC1 * plane - one) / bp, 0);
		} else {
			int64_t step = tl->pack ? px : one;
			int64_t dgap = tl->pack ? (tl->nimg - 1) * px / bp : 0;
			struct rep r = { .a0 = mem->l1_slab[s->sslot], .da = step * g->xpix, .gm = R_X,
					 .dgm = g->XC1 * plane * g->xpix };
			int64_t n = tl->nimg;
			int loop = rep_loop(gn, n);
			if (loop) {
				rep_begin(gn, &r, n);
				n = 1;
			}
			for (int64_t i = 0; i < n; i++)
				xfer_at(gn, ISA_OP_MOV_GM_L1, R_GM, R_X, base * g->xpix + i * r.dgm,
					loop ? R_BIDX : -1, r.a0 + i * r.da, s->c1c, px / bp,
					(plane - px) / bp, dgap);
			if (loop)
				rep_end(gn, &r);
		}
	}
	if (s->wload && s->wagain)
		cc_dry_warm_next(gn->p);
	if (s->wload)
		xfer(gn, ISA_OP_MOV_GM_L1, R_WGM, R_W,
		     tl->sl * g->wslice + (s->c1a * g->kf1 * g->N1 + tl->n1a) * FRAC,
		     mem->l1_w[s->wslot], s->c1c * g->kf1, tl->n1c * 16, (g->N1 - tl->n1c) * 16, 0);
	set_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_MTE1, s->lslot);
}

/* One K step of stage s: kn K fractals from kp into L0A/L0B half pb, the
 * cube into L0C half c (first: the tile's first step, which waits for the
 * vector unit to have drained that half). */
static void cube_kstep(struct kg *gn, const struct geo *g, const struct cube_mem *mem,
		       const struct stage *s, struct cube_state *cs, int64_t kp, int64_t kn, int pb,
		       int first, int c)
{
	const struct cc_conv *cv = g->cv;
	const struct tile *tl = &s->t;
	int64_t sl1 = mem->l1_slab[s->sslot], wl1 = mem->l1_w[s->wslot];
	int64_t mfi = tile_mfi(tl);
	int64_t img_bytes = s->c1c * s->s.fh * s->s.fw * g->xpix; /* one image's slab */
	wait_flag(gn, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
	/* image i's slab into its fractal rows, [mfi][kn] fractals each; a
	 * packed group's one row of pixels into [mf][kn] */
	if (tl->pack) {
		int rd = reg(gn, pb * mem->l0a_half), rs1 = reg(gn, sl1), rs3 = reg(gn, kp);
		KG_I(gn, LOAD3D, ISA_OP_LOAD3D, .rd = rd, .rs1 = rs1, .rs2 = 0, .rs3 = rs3,
		     .kh = 1, .kw = 1, .sh = cv->sh, .sw = cv->sw, .dh = 1, .dw = 1,
		     .mcnt = tile_mf(tl) * 16, .k1cnt = kn, .dt = ISA_DT_F16, .c04 = 0);
	} else if (rep_loop(gn, tl->nimg)) {
		int rs2 = reg(gn, s->s.mstart), rs3 = reg(gn, kp);
		struct rep r = { .a0 = pb * mem->l0a_half, .da = mfi * kn * FRAC, .b0 = sl1,
				 .db = img_bytes };
		rep_begin(gn, &r, tl->nimg);
		KG_I(gn, LOAD3D, ISA_OP_LOAD3D, .rd = R_BIDX, .rs1 = R_TMP, .rs2 = rs2, .rs3 = rs3,
		     .kh = cv->kh, .kw = cv->kw, .sh = cv->sh, .sw = cv->sw, .dh = cv->dh,
		     .dw = cv->dw, .mcnt = mfi * 16, .k1cnt = kn,
		     .dt = cc_conv_x8(cv) ? ISA_DT_S8 : ISA_DT_F16, .c04 = cc_conv_c04(cv));
		rep_end(gn, &r);
	} else {
		for (int64_t i = 0; i < tl->nimg; i++) {
			int rd = reg(gn, pb * mem->l0a_half + i * mfi * kn * FRAC);
			int rs1 = reg(gn, sl1 + i * img_bytes);
			int rs2 = reg(gn, s->s.mstart), rs3 = reg(gn, kp);
			KG_I(gn, LOAD3D, ISA_OP_LOAD3D, .rd = rd, .rs1 = rs1, .rs2 = rs2,
			     .rs3 = rs3, .kh = cv->kh, .kw = cv->kw, .sh = cv->sh, .sw = cv->sw,
			     .dh = cv->dh, .dw = cv->dw, .mcnt = mfi * 16, .k1cnt = kn,
			     .dt = cc_conv_x8(cv) ? ISA_DT_S8 : ISA_DT_F16, .c04 = cc_conv_c04(cv));
		}
	}
	int64_t key[5] = { s->c1a * g->kf1 + kp, kn, tl->n1a, tl->n1c, tl->sl };
	if (memcmp(cs->l0b_key[pb], key, sizeof key)) {
		int rd = reg(gn, pb * mem->l0b_half), rs1 = reg(gn, wl1 + kp * tl->n1c * FRAC);
		KG_I(gn, LOAD2D, ISA_OP_LOAD2D_L0B, .rd = rd, .rs1 = rs1, .rep = kn * tl->n1c,
		     .sstride = 1, .dstride = 1);
		memcpy(cs->l0b_key[pb], key, sizeof key);
	}
	set_flag(gn, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
	wait_flag(gn, ISA_PIPE_MTE1, ISA_PIPE_M, pb);
	if (first)
		wait_flag(gn, ISA_PIPE_V, ISA_PIPE_M, c);
	int rd = reg(gn, c * mem->l0c_half), rs1 = reg(gn, pb * mem->l0a_half);
	int rs2 = reg(gn, pb * mem->l0b_half);
	KG_I(gn, MMAD, ISA_OP_MMAD, .rd = rd, .rs1 = rs1, .rs2 = rs2, .m = tile_m(tl),
	     .k = kn * g->k0, .n = tl->n1c * 16, .init = first,
	     .dt = cc_conv_x8(cv) ? ISA_DT_S8 : ISA_DT_F16);
	set_flag(gn, ISA_PIPE_M, ISA_PIPE_MTE1, pb);
}

/* MTE1 and M for a stage: its K steps into L0C half c. */
static void cube_steps(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
		       const struct cube_mem *mem, const struct stage *s, struct cube_state *cs)
{
	const struct cc_conv *cv = g->cv;
	if (s->lslot >= 0)
		wait_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_MTE1, s->lslot);
	/* a packed group: a flat conv's one row of pixels, else its images
	 * stacked row on row */
	int64_t fh = s->s.fh, fw = s->s.fw;
	if (s->t.pack && g->flat)
		fw = s->s.fh * s->s.fw * s->t.nimg, fh = 1;
	else if (s->t.pack)
		fh *= s->t.nimg;
	int64_t fm[4] = { fh, fw, s->s.ptp, s->s.pbp };
	if (memcmp(cs->fm, fm, sizeof fm)) {
		KG_I(gn, FMATRIX, ISA_OP_SET_FMATRIX, .fh = fh, .fw = fw, .pt = s->s.ptp,
		     .pb = s->s.pbp, .pl = cv->pl, .pr = cv->pr);
		memcpy(cs->fm, fm, sizeof fm);
	}
	int64_t k1n = s->c1c * g->kf1;
	int c = (int)(cs->tiles & 1);
	for (int64_t kp = 0; kp < k1n; kp += t->kf, cs->step++)
		cube_kstep(gn, g, mem, s, cs, kp, min64(t->kf, k1n - kp), (int)(cs->step & 1),
			   s->first && kp == 0, c);
	for (int i = 0; i < MAX_EV; i++)
		if (s->rel >> i & 1)
			set_flag(gn, ISA_PIPE_MTE1, ISA_PIPE_MTE2, i);
}

/* Stage i: its loads, the residual loads due, its K steps and, when it
 * ends a tile, the drain. */
static void cube_stage(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
		       const struct cube_mem *mem, struct cube_state *cs, int64_t i)
{
	const struct stage *s = &cs->st[i];
	cube_loads(gn, g, mem, s);
	/* after the stage's own loads: the cube needs those first */
	cube_res_ahead(gn, g, t, mem, cs, -1);
	cube_steps(gn, g, t, mem, s, cs);
	if (s->last) {
		cube_drain(gn, g, t, mem, i, (int)(cs->tiles & 1), cs);
		cs->tiles++;
	}
}

/* A block's stages as kg_emit_rolled_state steps. */
struct cube_run {
	const struct geo *g;
	const struct cube_tiling *t;
	const struct cube_mem *mem;
};

static void cube_stage_step(struct kg *gn, const void *ctx, size_t i, void *state)
{
	const struct cube_run *r = ctx;
	cube_stage(gn, r->g, r->t, r->mem, state, (int64_t)i);
}

/* One block's program after the dispatch; roll: its stages as loops where
 * they repeat (the program), else straight (a dry run, which does not
 * follow branches). */
static void cube_block(struct kg *gn, const struct geo *g, const struct cube_tiling *t,
		       const struct stage *st, int64_t ns, int roll)
{
	const struct cc_conv *cv = g->cv;
	struct cube_mem mem;
	cube_mem_of(g, t, &mem);
	int slots = t->es > t->ew ? t->es : t->ew;
	for (int ev = 0; ev < slots; ev++)
		set_flag(gn, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ev);
	for (int ev = 0; ev < 2; ev++) {
		set_flag(gn, ISA_PIPE_M, ISA_PIPE_MTE1, ev);
		set_flag(gn, ISA_PIPE_V, ISA_PIPE_M, ev);
	}
	for (int q = 0; q < t->nq; q++)
		set_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, q);
	for (int b = 0; b < t->nr; b++)
		set_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, b);
	/* the bias of the block's slices [sl0, sl0 + nsl): its tiles go in order */
	int64_t sl0 = ns ? st[0].t.sl : 0, nsl = ns ? st[ns - 1].t.sl - sl0 + 1 : 1;
	/* (through R_TMP: the dispatch is done with it) */
	if (cv->has_bias)
		xfer(gn, ISA_OP_MOV_GM_UB, R_TMP, R_BIAS, sl0 * g->N1 * PIX, mem.ub_bias, 1,
		     nsl * g->N1, 0, 0);
	if (cc_conv_x8(cv)) /* 16 fp32 scales per channel block: 64 bytes */
		xfer(gn, ISA_OP_MOV_GM_UB, R_TMP, R_DEQ, 0, mem.ub_deq, 1, g->N1 * 2, 0, 0);
	if (cv->has_bias || cc_conv_x8(cv)) {
		set_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
		wait_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, 0);
	}
	struct cube_state cs;
	memset(&cs, 0, sizeof cs);
	memset(cs.fm, 0xff, sizeof cs.fm);
	memset(cs.l0b_key, 0xff, sizeof cs.l0b_key);
	cs.st = st;
	cs.ns = ns;
	cs.sl0 = sl0;
	cs.rs = next_last(&cs, 0);
	if (roll) {
		struct cube_run r = { g, t, &mem };
		if (kg_emit_rolled_state(gn, (size_t)ns, cube_stage_step, &r, &cs, sizeof cs))
			gn->bad = 1;
	} else {
		for (int64_t i = 0; i < ns; i++)
			cube_stage(gn, g, t, &mem, &cs, i);
	}
	for (int ev = 0; ev < slots; ev++)
		wait_flag(gn, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ev);
	for (int ev = 0; ev < 2; ev++) {
		wait_flag(gn, ISA_PIPE_M, ISA_PIPE_MTE1, ev);
		wait_flag(gn, ISA_PIPE_V, ISA_PIPE_M, ev);
	}
	for (int q = 0; q < t->nq; q++)
		wait_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, q);
	for (int b = 0; b < t->nr; b++)
		wait_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, b);
	cc_end(gn->p);
}

/* Largest and smallest slab (pixels per plane) over an image's pixel tiles;
 * -1 when a slab's padding does not fit set_fmatrix. */
static int slab_sizes(const struct geo *g, int64_t mt, int64_t *fmax, int64_t *fmin,
		      double *favg)
{
	*fmax = 0;
	*fmin = INT64_MAX;
	*favg = 0;
	for (int64_t mi = 0; mi < mt; mi++) {
		struct slab s;
		int64_t m0 = piece_lo(g->M1, mt, mi) * 16;
		int64_t m1 = min64(piece_lo(g->M1, mt, mi + 1) * 16, g->M);
		slab_of(g, m0, m1 - m0, &s);
		if (s.ptp > ISA_MAX(FMATRIX, pt) || s.pbp > ISA_MAX(FMATRIX, pb) ||
		    s.fh > ISA_MAX(FMATRIX, fh) || s.fh * s.fw > ISA_DMA_LEN_MAX)
			return -1; /* set_fmatrix and the DMA's burst length */
		*fmax = max64(*fmax, s.fh * s.fw);
		*fmin = min64(*fmin, s.fh * s.fw);
		*favg += (double)(s.fh * s.fw) / (double)mt;
	}
	return 0;
}

/* ---- the search's bound: the generator's instructions, priced ------------ */

/* What the generator issues, counted by running it (kern_gen's register
 * cache warm, as a long block settles): a K step that keeps its L0B, the
 * load3d of each image past a tile's first, and a drained tile of one image
 * and one buffer of channel blocks.  Any tile issues at least these. */
struct cube_counts {
	int64_t step, img, drain;
};

static void cube_count(const struct geo *g, struct cube_counts *n)
{
	const struct cc_conv *cv = g->cv;
	struct sim_dryrun d;
	dry_init(&d, g->cfg, &g->cc, 1, 0, 0);
	struct cc_prog dp;
	cc_prog_init_dryrun(&dp, &d);
	struct kg gn;
	kg_init(&gn, &dp, R_CACHE0, R_CACHE1);
	int64_t upc = pairs_of(cv) ? 2 : 1;
	struct cube_tiling t = { .ng = 1, .mt = 1, .nt = 1, .nch = 1, .es = 1, .ew = 1, .nq = 1,
				 .nr = cc_conv_res(cv), .upc = upc, .gi = 2, .mfi = 1, .mf = 2,
				 .nf = upc, .c1f = 1, .kf = 1, .tiles = 1, .blocks = 1,
				 .slab_bytes = 512, .w_bytes = 512 };
	struct cube_mem mem;
	cube_mem_of(g, &t, &mem);
	struct stage s;
	memset(&s, 0, sizeof s);
	s.t.nimg = 1;
	s.t.mrows = min64(16, g->M);
	s.t.n1c = min64(upc, g->N1);
	slab_of(g, 0, s.t.mrows, &s.s);
	s.c1c = 1;
	s.last = 1;
	s.lslot = -1;
	struct cube_state cs0, cs;
	memset(&cs0, 0, sizeof cs0);
	cs0.st = &s;
	cs0.ns = 1;
	for (int h = 0; h < 2; h++) { /* both L0B halves hold the step's weights */
		int64_t key[5] = { 0, 1, 0, s.t.n1c, 0 };
		memcpy(cs0.l0b_key[h], key, sizeof key);
	}
	int64_t once[2] = { 0, 0 };
	for (int nimg = 1; nimg <= 2; nimg++) {
		s.t.nimg = nimg;
		for (int i = 0; i < 3; i++) { /* the last: every value in a register */
			cs = cs0;
			size_t n0 = dp.n;
			cube_kstep(&gn, g, &mem, &s, &cs, 0, 1, i & 1, 0, 0);
			once[nimg - 1] = (int64_t)(dp.n - n0);
		}
	}
	n->step = once[0];
	n->img = once[1] - once[0];
	s.t.nimg = 1;
	for (int i = 0; i < 3; i++) {
		cs = cs0;
		size_t n0 = dp.n;
		cube_drain(&gn, g, &t, &mem, 0, 0, &cs);
		n->drain = (int64_t)(dp.n - n0);
	}
	cc_prog_free(&dp);
}

/* An instruction's occupancy of its pipe, as sim_insn_cost prices it; the
 * forms the bound prices hold one tile's or one layer's work in one
 * instruction, which costs no more than the instructions that do it. */
static double occ(const struct geo *g, const struct isa_insn *in)
{
	return (double)sim_insn_cost_insn(&g->cc, in, NULL, NULL, NULL).occ;
}

static double mmad_occ(const struct geo *g, int64_t m, int64_t k1, int64_t n1)
{
	struct isa_insn in = { .op = ISA_OP_MMAD, .m = m, .k = k1 * g->k0, .n = n1 * 16,
			       .dt = cc_conv_x8(g->cv) ? ISA_DT_S8 : ISA_DT_F16 };
	return occ(g, &in);
}

static struct sim_cost load3d_cost(const struct geo *g, int64_t mfi, int64_t k1)
{
	struct isa_insn in = { .op = ISA_OP_LOAD3D, .mcnt = mfi * 16, .k1cnt = k1 };
	return sim_insn_cost_insn(&g->cc, &in, NULL, NULL, NULL);
}

static double load2d_occ(const struct geo *g, int64_t fractals)
{
	struct isa_insn in = { .op = ISA_OP_LOAD2D_L0B, .rep = fractals };
	return occ(g, &in);
}

/* A lower bound of the busiest block's time, priced by the simulator's cost
 * function (sim_insn_cost, sim_mem_bpc) and the generator's own instruction
 * counts (cube_count): the first load's and the last store's latency plus
 * the largest of its cube work, the bytes it must bring in at least once,
 * the first tile's cube work and the bytes it must write out (writes only
 * start once a tile is done), the instructions the scalar unit issues, the
 * MTE1 loads, and the chain each L0 half goes round (load, flag, mmad,
 * flag: two steps at a time).  Each is counted on the last block, whose
 * tiles have at least the smallest group's images, or on the average block,
 * which computes its share of every image's pixels and loads its share of
 * the input and weights: with uneven groups the last block alone would be
 * far below the busiest, and the search would start with such tilings. */
/* The cycles the busiest block's GM traffic takes (reads at the L2's or,
 * cold, main memory's rate, then the writes) and, in *out_s, the writes
 * alone, for tiles whose image slabs hold px input pixels and which write
 * rows output pixels of each image. */
struct gm_view {
	double rd, wrd, wr; /* bytes per cycle: L2 reads, main-memory reads, writes */
	int wcold;
	int64_t nb, dn, dpix, sset, wset;
	double ga, nf, w;
};

static double gm_time(const struct geo *g, const struct cube_tiling *t, const struct gm_view *v,
		      double px, double rows, double *out_s)
{
	const struct cc_conv *cv = g->cv;
	double slab = v->ga * (double)g->C1 * px * (double)g->xpix;
	/* least-recently-used replacement cycling through more pieces than L1
	 * has slots for them evicts each before it comes round again: then every
	 * tile loads its slab or weights anew */
	int64_t l1 = g->cfg->l1_size_kb * 1024;
	int64_t sslots = min64(g->ev, (l1 - t->w_bytes) / t->slab_bytes);
	int64_t wslots = min64(g->ev, (l1 - t->slab_bytes) / t->w_bytes);
	double sbytes = (double)(v->sset > sslots ? v->nb : v->dpix) * slab;
	double wbytes = (double)(v->wset > wslots ? v->nb : v->dn) * v->w;
	/* the average block's share of the input and of the weights, each once;
	 * the weights it loads again come from the L2 */
	sbytes = fmax(sbytes, (double)(g->S * cv->n * t->mt * g->C1) * px * (double)g->xpix /
				      (double)t->blocks);
	double wonce = fmax((double)v->dn * v->w,
			    (double)(g->S * g->C1 * g->kf1 * g->N1 * FRAC) / (double)t->blocks);
	wbytes = fmax(wbytes, wonce);
	double out = (double)v->nb * v->ga * rows * v->nf * PIX;
	/* the residual: as many bytes read as written (half as int8) */
	double rbytes = cc_conv_res(cv) ? out / (cc_conv_r8(cv) ? 2 : 1) : 0;
	*out_s = out / v->wr;
	return (sbytes + rbytes) / (g->acold ? v->wrd : v->rd) +
	       wonce / (v->wcold ? v->wrd : v->rd) + (wbytes - wonce) / v->rd;
}

static double cube_bound(const struct geo *g, const struct cube_counts *cnt,
			 struct cube_tiling *t, int64_t px_min, double px_avg)
{
	const struct cc_conv *cv = g->cv;
	/* GM bytes per cycle a block gets: reads from the L2, from main memory
	 * (cold), writes */
	double share = (double)t->blocks;
	double rd = sim_mem_bpc(&g->cc, 0, 0, share), wrd = sim_mem_bpc(&g->cc, 0, 1, share);
	double wr = sim_mem_bpc(&g->cc, 1, 1, share);
	int wcold = t->nt * g->S >= t->blocks;
	int64_t t0 = part_lo(t->tiles, t->blocks, t->blocks - 1), t1 = t->tiles, nb = t1 - t0;
	/* the slices the block touches; a slice's tiles are whole runs of the
	 * inner index, so the pieces counted by tile index are per slice too */
	int64_t spt = t->tiles / g->S, nsl = (t1 - 1) / spt - t0 / spt + 1;
	int64_t dpix, dn, sset, wset; /* slab and weight pieces cycled through */
	if (t->order == 0) {
		dpix = (t1 - 1) / t->nt - t0 / t->nt + 1;
		dn = min64(t->nt * nsl, nb);
		sset = t->nch;
		wset = dn * t->nch;
	} else {
		int64_t per = t->ng * t->mt;
		dn = (t1 - 1) / per - t0 / per + 1;
		dpix = min64(per * nsl, nb);
		sset = dpix * t->nch;
		wset = t->nch;
	}
	/* images per tile: the smallest group's for the first tile, the average
	 * over a run of tiles (with uneven groups the smallest is far off) */
	int64_t gmin = max64(1, cv->n / t->ng), mfi = max64(1, g->M1 / t->mt), mf = gmin * mfi;
	double ga = (double)cv->n / (double)t->ng;
	int64_t nf = max64(1, g->N1 / t->nt), K1 = g->C1 * g->kf1;
	/* a packed group's images share fractal rows: its M rows are its
	 * pixels rounded up once */
	if (t->pack)
		mf = cdiv(gmin * g->M, 16);
	double tile = mmad_occ(g, mf * 16, K1, nf);
	/* the whole layer's cube work over the blocks */
	double all = mmad_occ(g, t->pack ? g->S * cdiv(cv->n * g->M, 16) * 16
					 : g->S * cv->n * g->M1 * 16, K1, g->N1);
	double cube = fmax(t->pack ? (double)nb * mmad_occ(g, (int64_t)(ga * (double)g->M), K1, nf)
				   : (double)nb * ga * mmad_occ(g, mfi * 16, K1, nf),
			   all / (double)t->blocks);
	/* the bound's GM traffic from the smallest slab and a last pixel tile
	 * of one row; the search order's from the average tile (with one pixel
	 * row the output of a tile of 16 rows counted 1/16 of it) */
	struct gm_view gv = { rd, wrd, wr, wcold, nb, dn, dpix, sset, wset, ga, (double)nf,
			      (double)(K1 * nf * FRAC) };
	double out, out_avg;
	double bytes = gm_time(g, t, &gv, (double)px_min,
			       (double)(t->pack ? g->M : (mfi - 1) * 16 + 1), &out);
	double bytes_avg = gm_time(g, t, &gv, px_avg, (double)g->M / (double)t->mt, &out_avg);
	double lat = (double)(sim_mem_time(&g->cc, 0, 0, 0, share, share).lat +
			      sim_mem_time(&g->cc, 0, 0, 1, share, share).lat);
	int64_t c1 = max64(1, g->C1 / t->nch), tsteps = t->nch * cdiv(c1 * g->kf1, t->kf);
	int64_t steps = nb * tsteps;
	double scalar = (((double)cnt->step + (ga - 1.0) * (double)cnt->img) * (double)steps +
			 (double)(cnt->drain * nb)) *
			(double)g->cc.scalar;
	/* MTE1: load3d expands every tile's input; load2d copies every tile's
	 * weights, unless the tile's K steps fit the two L0B halves and the next
	 * tile has the same channels: then they stay */
	int l0b_stays = tsteps <= 2 && (t->order == 1 || t->nt == 1);
	double mte1 = (t->pack ? (double)nb * (double)load3d_cost(g, mf, K1).occ
			       : (double)nb * ga * (double)load3d_cost(g, mfi, K1).occ) +
		      (double)(l0b_stays ? dn : nb) * load2d_occ(g, K1 * nf);
	/* an L0 half goes round load, flag, mmad, flag: two steps at a time, at
	 * least the smallest load's and cube step's occupancy and latency */
	struct sim_cost ld = load3d_cost(g, 1, 1);
	struct isa_insn mm = { .op = ISA_OP_MMAD, .m = 16, .k = g->k0, .n = 16,
			       .dt = cc_conv_x8(cv) ? ISA_DT_S8 : ISA_DT_F16 };
	struct sim_cost mc = sim_insn_cost_insn(&g->cc, &mm, NULL, NULL, NULL);
	double chain = (double)steps / 2.0 * (double)(ld.occ + ld.lat + mc.occ + mc.lat);
	/* the search order: the lower bound is often the cube work alone, the same
	 * for most tilings; among those the ones that keep the other pipes the
	 * least busy tend to hide them best */
	t->rank = lat + cube + bytes_avg + out_avg + scalar + mte1 + chain;
	return lat + fmax(fmax(fmax(cube, bytes), fmax(tile + out, scalar)),
			  fmax(mte1, chain));
}

/* Time one block of a tiling on the dry run.  A long block repeats itself:
 * its first PREFIX stages are timed and the time scaled up. */
static double cube_dry_block(const struct geo *g, const struct cube_tiling *t,
			      const struct stage *st, int64_t ns, int64_t b, int64_t *walked)
{
	int64_t timed = min64(ns, PREFIX);
	struct sim_dryrun m;
	/* weights no other block shares come from main memory */
	dry_init(&m, g->cfg, &g->cc, t->blocks, t->nt * g->S >= t->blocks, g->acold);
	struct cc_prog dp;
	cc_prog_init_dryrun(&dp, &m);
	struct kg gn;
	kg_init(&gn, &dp, R_CACHE0, R_CACHE1);
	dry_prologue(&dp, g->cv, t->blocks, b);
	cube_block(&gn, g, t, st, timed, 0);
	double time = cc_prog_dry_time(&dp);
	cc_prog_free(&dp);
	/* walked counts stages planned; timing an instruction costs about a
	 * fifth of that, so a stage of several images' loads or of many K steps
	 * costs more */
	*walked += ns + m.insns / 5;
	return time * (double)ns / (double)timed;
}

/* The blocks of a tiling likely to be the slowest: those that load the
 * most, compute the most and both (where a block's run of tiles starts
 * decides how many slabs and weights it loads), distinct, in that order.
 * They depend on the stages' plan only (not on the UB buffers), so the
 * search picks once per L1 slot setting of a candidate. */
struct cube_pick {
	int64_t b[3];
	int n;
	int64_t walked; /* stages planned to pick them */
	int64_t ns[3];  /* their stages ... */
	struct stage *st; /* ... the first PREFIX of each (room for 3 * PREFIX) */
};

static void cube_pick(const struct geo *g, const struct cube_tiling *t, struct stage *st,
		      struct cube_pick *pk)
{
	double most[3] = { -1, -1, -1 };
	int64_t pick[3] = { 0, 0, 0 };
	pk->walked = 0;
	for (int64_t b = 0; b < t->blocks; b++) {
		int64_t ns = plan_stages(g, t, b, st);
		double bytes = 0, cube = 0;
		for (int64_t i = 0; i < ns; i++) {
			const struct stage *s = &st[i];
			if (s->sload)
				bytes += (double)(s->t.nimg * s->c1c * s->s.fh * s->s.fw * g->xpix);
			if (s->wload)
				bytes += (double)(s->c1c * g->kf1 * s->t.n1c * FRAC);
			cube += mmad_occ(g, tile_m(&s->t), s->c1c * g->kf1, s->t.n1c);
			if (s->last)
				bytes += (double)(s->t.nimg * res_bytes(g->cv, s->t.mrows * s->t.n1c));
		}
		double v[3] = { bytes, cube, bytes / g->cc.path_bpc[SIM_PATH_GM_RD] + cube };
		for (int k = 0; k < 3; k++)
			if (v[k] > most[k]) {
				most[k] = v[k];
				pick[k] = b;
			}
		pk->walked += ns;
	}
	pk->n = 0;
	for (int k = 0; k < 3; k++)
		if (!(k > 0 && pick[k] == pick[0]) && !(k > 1 && pick[k] == pick[1])) {
			/* (the plan's slot releases look past the timed stages) */
			pk->ns[pk->n] = plan_stages(g, t, pick[k], st);
			memcpy(pk->st + pk->n * PREFIX, st,
			       (size_t)min64(pk->ns[pk->n], PREFIX) * sizeof *st);
			pk->b[pk->n++] = pick[k];
		}
}

/* Time a tiling on the dry run: every block (pk NULL), or pk's blocks; st
 * has room for a block's stages.  Returns the number of stages walked
 * (picking the blocks counted as pk->walked says). */
static int64_t cube_dry(const struct geo *g, struct cube_tiling *t, struct stage *st,
			const struct cube_pick *pk)
{
	int64_t walked = pk ? pk->walked : 0;
	t->core = 0;
	if (!pk) {
		for (int64_t b = 0; b < t->blocks; b++) {
			int64_t ns = plan_stages(g, t, b, st);
			t->core = fmax(t->core, cube_dry_block(g, t, st, ns, b, &walked));
		}
	} else {
		for (int k = 0; k < pk->n; k++)
			t->core = fmax(t->core, cube_dry_block(g, t, pk->st + k * PREFIX, pk->ns[k],
								pk->b[k], &walked));
	}
	t->est = fmax(t->core, hbm_bound(g, (double)(g->C1 * g->kf1 * g->N1 * FRAC), g->N1));
	return walked;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cube_tiling *x = a, *y = b;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Distinct values of ceil(total / f) for f = 1..fmax, into out (sorted
 * descending); returns how many. */
static int64_t splits(int64_t total, int64_t fmax, int64_t *out)
{
	int64_t n = 0;
	for (int64_t f = 1; f <= min64(total, fmax); f++) {
		int64_t parts = cdiv(total, f);
		if (!n || out[n - 1] != parts)
			out[n++] = parts;
	}
	return n;
}

/* Append t to the candidates; -1 when out of memory. */
static int cand_push(struct cube_tiling **c, int64_t *n, int64_t *cap, const struct cube_tiling *t)
{
	if (*n == *cap) {
		int64_t nc = *cap ? 2 * *cap : 256;
		struct cube_tiling *p = realloc(*c, (size_t)nc * sizeof *p);
		if (!p)
			return -1;
		*c = p;
		*cap = nc;
	}
	(*c)[(*n)++] = *t;
	return 0;
}

/* Every candidate that fits, with its lower bound; returns how many or -1. */
/* A strided 1x1 conv whose images can be stacked row on row. */
static int pack_strided(const struct cc_conv *cv)
{
	return cv->kh == 1 && cv->kw == 1 && !cv->pt && !cv->pb && !cv->pl && !cv->pr &&
	       cv->h % cv->sh == 0;
}

/* Whether a 1x1 conv's groups of gi whole images (mt 1) can be packed
 * along M (struct tile's pack): fp16 in and out, one conv, and the group's
 * row within set_fmatrix's width, load3d's M count and the slab load's
 * gap. */
static int pack_ok(const struct geo *g, int64_t mt, int64_t gi)
{
	const struct cc_conv *cv = g->cv;
	int64_t bp = PIX / g->xpix, plane = cv->h * cv->w;
	/* the view: a flat conv's one row of pixels, else the images stacked
	 * row on row (a 1x1 kernel, unpadded, whose stride divides the height:
	 * no window reads across two images) */
	int view = g->flat ? gi * plane <= ISA_MAX(FMATRIX, fw)
			   : pack_strided(cv) && gi * cv->h <= ISA_MAX(FMATRIX, fh);
	return view && mt == 1 && gi > 1 && cv->x_form == CC_CONV_X_F16 &&
	       cv->y_form == CC_CONV_Y_F16 && !cc_conv_r8(cv) && g->S == 1 && !cv->x_c1 &&
	       !cv->y_n1 && cdiv(gi * g->M, 16) * 16 <= ISA_MAX(LOAD3D, mcnt) &&
	       plane / bp <= ISA_DMA_LEN_MAX && (gi - 1) * plane / bp <= ISA_DMA_GAP_MAX &&
	       gi <= ISA_DMA_NBURST_MAX;
}

static int64_t cube_candidates(const struct geo *g, struct cube_tiling **out)
{
	const struct soc_config *cfg = g->cfg;
	const struct cc_conv *cv = g->cv;
	int64_t l0a = cfg->l0a_size_kb * 512 / FRAC, l0b = cfg->l0b_size_kb * 512 / FRAC;
	int64_t l1 = cfg->l1_size_kb * 1024, ub = cfg->ub_size_kb * 1024;
	int64_t nmt_max = l0a + 2 * cfg->core_count + 1;
	int64_t *mts = malloc((size_t)nmt_max * sizeof *mts);
	int64_t *ngs = malloc((size_t)nmt_max * sizeof *ngs);
	int64_t *nts = malloc((size_t)(l0b + 1) * sizeof *nts);
	int64_t *nchs = malloc((size_t)(g->C1 + 1) * sizeof *nchs);
	struct cube_tiling *c = NULL;
	int64_t n = -1, cap = 0;
	if (!mts || !ngs || !nts || !nchs)
		goto done;
	/* pixel tiles: every tile size the L0A allows, and every count up to a
	 * few per core, so that the tiles can be dealt out evenly; image groups
	 * likewise (a group's images share the L0A's fractal rows) */
	int64_t nmt = splits(g->M1, l0a, mts);
	for (int64_t mt = 1; mt <= min64(g->M1, 2 * cfg->core_count); mt++)
		if (cdiv(g->M1, mt) <= l0a)
			mts[nmt++] = mt;
	int64_t nng = splits(cv->n, l0a, ngs);
	for (int64_t ng = 1; ng <= min64(cv->n, 2 * cfg->core_count); ng++)
		if (cdiv(cv->n, ng) <= l0a)
			ngs[nng++] = ng;
	int64_t nnt = splits(g->N1, l0b, nts), nnch = splits(g->C1, g->C1, nchs);
	struct cube_counts cnt;
	cube_count(g, &cnt);
	n = 0;
	for (int64_t i = 0; i < nmt; i++) {
		int64_t mt = mts[i], mfi = cdiv(g->M1, mt), px_max, px_min;
		double px_avg;
		int dup = 0;
		for (int64_t j = 0; j < i; j++)
			dup |= mts[j] == mt;
		if (dup || slab_sizes(g, mt, &px_max, &px_min, &px_avg))
			continue;
		/* each group size twice: a fractal row per image, then packed */
		for (int64_t e = 0, pack = 0; e < nng; e += pack, pack = !pack) {
			int64_t ng = ngs[e], gi = cdiv(cv->n, ng), mf = gi * mfi;
			if (pack) {
				if (!pack_ok(g, mt, gi))
					continue;
				mf = cdiv(gi * g->M, 16);
			}
			dup = 0;
			for (int64_t j = 0; j < e; j++)
				dup |= ngs[j] == ng;
			if (dup || mf > l0a)
				continue;
			for (int64_t a = 0; a < nnt; a++) {
				int64_t nt = nts[a], nf = cdiv(g->N1, nt);
				if (pairs_of(cv)) { /* tiles of whole pairs */
					if (nt > cdiv(g->N1, 2))
						continue;
					nf = min64(g->N1, 2 * cdiv(cdiv(g->N1, 2), nt));
				}
				/* an output buffer (and a residual one) of one block */
				if (mf * nf * 1024 > cfg->l0c_size_kb * 512 ||
				    g->ub_fixed + (1 + cc_conv_res(cv)) * mf * FRAC +
						    (pairs_of(cv) ? 3 * mf * FRAC : 0) > ub)
					continue;
				for (int64_t b = 0; b < nnch; b++) {
					struct cube_tiling t = { .ng = ng, .mt = mt, .nt = nt,
								 .nch = nchs[b], .pack = (int)pack };
					t.gi = gi;
					t.mfi = mfi;
					t.mf = mf;
					t.nf = nf;
					t.c1f = cdiv(g->C1, t.nch);
					t.kf = min64(min64(l0a / mf, l0b / nf), t.c1f * g->kf1);
					/* a packed group's slab holds whole images */
					t.slab_bytes = up(gi * t.c1f *
								  (pack ? cv->h * cv->w : px_max) *
								  g->xpix,
							  512);
					t.w_bytes = up(t.c1f * g->kf1 * nf * FRAC, 512);
					if (t.kf < 1 || t.slab_bytes + t.w_bytes > l1 ||
					    t.c1f * g->kf1 > ISA_DMA_NBURST_MAX) /* weight bursts */
						continue;
					t.tiles = g->S * ng * mt * nt;
					t.blocks = min64(t.tiles, cfg->core_count);
					for (int order = 0; order < 2; order++) {
						if (order == 1 && (nt == 1 || ng * mt == 1))
							continue;
						t.order = order;
						t.lb = cube_bound(g, &cnt, &t, px_min, px_avg);
						if (cand_push(&c, &n, &cap, &t)) {
							n = -1;
							goto done;
						}
					}
				}
			}
		}
	}
	if (n > 1) /* qsort wants a valid pointer even for nothing */
		qsort(c, (size_t)n, sizeof *c, cand_cmp);
done:
	free(mts);
	free(ngs);
	free(nts);
	free(nchs);
	if (n < 0) {
		free(c);
		c = NULL;
	}
	*out = c;
	return n;
}

static void cube_block_fn(struct kg *gn, void *ctx, int64_t b);

/* The kernel of tiling t into p (after conv_args). */
struct cube_blocks {
	const struct geo *g;
	const struct cube_tiling *t;
	struct stage *st; /* room for a block's stages */
};

/* 0, or kg_emit_blocks' error (1: over the work bound), or -2: a transfer
 * exceeds the DMA's limits. */
static int cube_emit(const struct geo *g, const struct cube_tiling *t, struct cc_prog *p)
{
	struct cube_blocks cb = { g, t,
				  malloc((size_t)(cdiv(t->tiles, t->blocks) * t->nch) * sizeof *cb.st) };
	struct kg gn;
	kg_init(&gn, p, R_CACHE0, R_CACHE1);
	int rc = cb.st ? kg_emit_blocks(&gn, t->blocks, cube_block_fn, &cb) : -1;
	free(cb.st);
	if (rc || p->oom)
		return rc ? rc : -1;
	return gn.bad ? -2 : 0;
}

/* Instructions of t's kernel, -1 when it cannot be emitted within a
 * kernel's bounds. */
static int64_t cube_code(const struct geo *g, const struct cube_tiling *t)
{
	struct cc_prog p;
	cc_prog_init(&p);
	p.max_n = cc_max_insns(g->cfg);
	p.max_work = cc_max_work(g->cfg);
	int64_t n = cube_emit(g, t, &p) || p.over ? -1 : (int64_t)p.n;
	cc_prog_free(&p);
	return n;
}

/* Code for time: kernel code is fetched at start-up and decoded at load,
 * and the loop builder (kern_roll.c) rolls a block's stages into loops as
 * far as they repeat.  Fewer buffers in turn (L1 slots, UB buffers) give
 * the stages' state a shorter period, so the code shrinks; the dry run
 * times such settings within a few percent of the fastest, about its own
 * error against the simulator (tests/check_predict.c).  So: of the
 * settings timed within LEAN_TOL of the fastest tiling (modelled time and
 * its cores' time both), those with the fewest buffers (up to LEAN_TRY) are
 * emitted, and the one with the least code is kept.  So are the even
 * tilings (every piece of an axis the same size) within LEAN_TOL, as timed
 * and with two L1 slots of each kind: a block's tiles are then one tile
 * repeated, whose stages' state has period 2, which kern_roll makes a
 * loop, and blocks whose tiles start alike share one copy of the code
 * (kg_emit_blocks).  At batch 16 a block gets many tiles, so this is what
 * keeps its code from growing with the batch; the search itself, ordered
 * by a lower bound on time, rarely reaches them. */
#define LEAN_TOL 0.03
#define LEAN_TRY 6
#define LEAN_TILES 2 /* tiles a block runs, at least, for the untimed even tilings */

static int bufs_of(const struct cube_tiling *t) { return t->nq + t->es + t->ew + t->nr; }

/* Fewest buffers first; a total order, so the choice is the same everywhere. */
static int lean_cmp(const void *a, const void *b)
{
	const struct cube_tiling *x = a, *y = b;
	int64_t kx[] = { bufs_of(x), x->idx, x->upc, x->nq, x->es, x->ew, x->nr };
	int64_t ky[] = { bufs_of(y), y->idx, y->upc, y->nq, y->es, y->ew, y->nr };
	for (size_t i = 0; i < sizeof kx / sizeof kx[0]; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* Room in *st for a block's stages of t. */
static int need_stages(const struct cube_tiling *t, struct stage **st, int64_t *cap)
{
	int64_t need = cdiv(t->tiles, t->blocks) * t->nch;
	if (need > *cap) {
		struct stage *s = realloc(*st, (size_t)need * sizeof *s);
		if (!s)
			return -1;
		*st = s;
		*cap = need;
	}
	return 0;
}

/* Whether t cuts every axis evenly: each image group, pixel tile (in
 * fractals), channel tile and K chunk the same size, so a block's tiles are
 * the same tile over and over (kern_roll makes them a loop) and blocks whose
 * runs start alike share their code. */
static int even_tiling(const struct geo *g, const struct cube_tiling *t)
{
	int64_t n1 = pairs_of(g->cv) ? cdiv(g->N1, 2) : g->N1;
	return g->M1 % t->mt == 0 && g->cv->n % t->ng == 0 && n1 % t->nt == 0 &&
	       g->C1 % t->nch == 0;
}

/* UB output buffer sizes the search tries, in channel blocks: one, half
 * the tile's, all of it (whole pairs with an int8 output). */
static void upc_choices(const struct geo *g, const struct cube_tiling *t, int64_t ups[3])
{
	ups[0] = 1;
	ups[1] = cdiv(t->nf, 2);
	ups[2] = t->nf;
	if (pairs_of(g->cv))
		for (int u = 0; u < 3; u++)
			ups[u] = 2 * cdiv(ups[u], 2);
}

/* The lean choice so far: the time limits and the least code found. */
struct lean {
	double lim, clim;
	int64_t code;
	struct cube_tiling *best;
};

/* Time t on every block; within the limits, emit it and keep it if its code
 * is the least yet.  1: it was within them, 0: not, -1: out of memory. */
static int lean_try(const struct geo *g, const struct cube_tiling *t0, struct stage **st,
		    int64_t *cap, struct lean *ln)
{
	struct cube_tiling t = *t0;
	if (need_stages(&t, st, cap))
		return -1;
	cube_dry(g, &t, *st, NULL);
	if (t.est > ln->lim || t.core > ln->clim)
		return 0;
	int64_t k = cube_code(g, &t);
	if (k >= 0 && k < ln->code) {
		ln->code = k;
		*ln->best = t;
	}
	return 1;
}

/* seen: the settings the search timed (room for ncap); the best tiling
 * with fewer buffers in turn joins them: fewer UB output buffers (of each
 * size the search tries), fewer slab slots, as many weight slots as then fit. */
static int cube_lean(const struct geo *g, const struct cube_tiling *c, int64_t nc,
		     struct cube_tiling *best, struct cube_tiling *seen, int64_t nseen, int64_t ncap,
		     struct stage **st, int64_t *cap)
{
	double lim = best->est * (1 + LEAN_TOL), clim = best->core * (1 + LEAN_TOL);
	int64_t m = 0;
	for (int64_t i = 0; i < nseen; i++)
		if (seen[i].est <= lim && seen[i].core <= clim)
			seen[m++] = seen[i];
	int64_t l1 = g->cfg->l1_size_kb * 1024, ub = g->cfg->ub_size_kb * 1024;
	int64_t ws = g->S * best->nt * best->nch;
	int64_t upcs[3];
	upc_choices(g, best, upcs);
	for (int u = 0; u < 3; u++) {
		if (u > 0 && upcs[u] == upcs[u - 1])
			continue;
		int64_t bufs = (ub - g->ub_fixed) / (best->mf * upcs[u] * FRAC);
		for (int nq = 1; nq <= best->nq; nq++)
			for (int es = 1; es <= best->es && m < ncap; es++) {
				struct cube_tiling t = *best;
				t.upc = upcs[u];
				t.nq = nq;
				t.es = es;
				t.ew = (int)min64(g->ev, ws);
				while (t.ew > 0 && es * t.slab_bytes + t.ew * t.w_bytes > l1)
					t.ew--;
				if (t.ew >= 1 && nq * (pairs_of(g->cv) ? 2 : 1) + t.nr <= bufs &&
				    bufs_of(&t) < bufs_of(best))
					seen[m++] = t;
			}
	}
	qsort(seen, (size_t)m, sizeof *seen, lean_cmp);
	struct lean ln = { .lim = lim, .clim = clim, .code = cube_code(g, best), .best = best };
	if (ln.code < 0)
		return 0;
	for (int64_t i = 0, tried = 0; i < m && tried < LEAN_TRY; i++) {
		if (bufs_of(&seen[i]) >= bufs_of(best))
			break;
		int r = lean_try(g, &seen[i], st, cap, &ln);
		if (r < 0)
			return -1;
		tried += r;
	}
	/* the even tilings timed within the tolerance, and their ping-pong form */
	for (int64_t i = 0, tried = 0; i < m && tried < LEAN_TRY; i++) {
		if (!even_tiling(g, &seen[i]))
			continue;
		tried++;
		struct cube_tiling t = seen[i];
		if (lean_try(g, &t, st, cap, &ln) < 0)
			return -1;
		if (t.es > 2 || t.ew > 2) {
			t.es = t.es < 2 ? t.es : 2;
			t.ew = t.ew < 2 ? t.ew : 2;
			if (lean_try(g, &t, st, cap, &ln) < 0)
				return -1;
		}
	}
	/* the even candidates the search did not time (its bound admits them),
	 * ping-pong: one or two slab slots, two weight slots; worth their dry
	 * runs where a block runs several tiles (a large batch) */
	if (cdiv(best->tiles, best->blocks) < LEAN_TILES)
		return 0;
	for (int64_t i = 0, tried = 0; i < nc && tried < LEAN_TRY; i++) {
		if (!even_tiling(g, &c[i]) || c[i].lb > lim)
			continue;
		tried++;
		struct cube_tiling t = c[i];
		t.idx = i;
		int64_t slabs = g->S * t.ng * t.mt * t.nch, wsl = g->S * t.nt * t.nch;
		int64_t ups[3];
		upc_choices(g, &t, ups);
		for (int u = 0; u < 3; u++) {
			if (u > 0 && ups[u] == ups[u - 1])
				continue;
			t.upc = ups[u];
			int64_t bufs = (ub - g->ub_fixed) / (t.mf * t.upc * FRAC);
			t.nr = cc_conv_res(g->cv);
			t.nq = (int)min64(min64(MAX_UBQ, g->ev),
					  (bufs - t.nr) / (pairs_of(g->cv) ? 2 : 1));
			if (t.nq < 1 || t.nr >= bufs)
				continue;
			for (t.es = 1; t.es <= 2 && t.es <= slabs; t.es++) {
				t.ew = (int)min64(2, wsl);
				while (t.ew > 0 && t.es * t.slab_bytes + t.ew * t.w_bytes > l1)
					t.ew--;
				if (t.ew < 1)
					break;
				if (lean_try(g, &t, st, cap, &ln) < 0)
					return -1;
			}
		}
	}
	return 0;
}

#define TOP 8 /* candidates timed on every block in the end */

/* Whether a is faster than b.  Tilings that main memory holds back tie; of
 * those the one whose cores are done soonest has the most slack. */
static int faster(const struct cube_tiling *a, const struct cube_tiling *b)
{
	return a->est < b->est || (a->est == b->est && a->core < b->core);
}

/* Keep the TOP fastest tilings, sorted. */
static void top_add(struct cube_tiling *top, int *ntop, const struct cube_tiling *t)
{
	int i = TOP - 1;
	if (*ntop < TOP)
		i = (*ntop)++;
	else if (!faster(t, &top[i]))
		return;
	for (; i > 0 && faster(t, &top[i - 1]); i--)
		top[i] = top[i - 1];
	top[i] = *t;
}

/* Time the candidates in order of their lower bound, each with the L1 slots
 * and UB buffers sized every way that fits, on the blocks likely to be the
 * slowest, until no remaining one can win; then time the best few on every
 * block and keep the fastest. */
/* What decides a conv's tiling besides the SoC: its shape and what its
 * drain does (not the values it scales or clips by); nkey words. */
static size_t conv_key(const struct cc_conv *cv, int64_t *key)
{
	int64_t k[] = { cv->n,	   cv->cin,	cv->h,	    cv->w,	    cv->cout,	 cv->kh,
			cv->kw,	   cv->sh,	cv->sw,	    cv->pt,	    cv->pl,	 cv->pb,
			cv->pr,	   cv->dh,	cv->dw,	    cv->groups,	    cv->has_bias, cv->act,
			clip_needs_mask(cv),	cv->r_form, cv->x_c1, cv->x_c1o,	 cv->y_n1,
			cv->y_n1o, cv->slices,	cv->x_form, cv->y_form };
	memcpy(key, k, sizeof k);
	return sizeof k / sizeof k[0];
}

/* The chosen tiling as the cache keeps it: the candidate's index and the
 * settings timed within it, and its times. */
enum { CV_IDX, CV_UPC, CV_NR, CV_NQ, CV_ES, CV_EW, CV_EST, CV_CORE, CV_N };

static int cube_choose(const struct geo *g, struct cube_tiling *best, char *err, size_t errlen)
{
	const struct soc_config *cfg = g->cfg;
	const struct cc_conv *cv = g->cv;
	int64_t l1 = cfg->l1_size_kb * 1024, ub = cfg->ub_size_kb * 1024;
	struct cube_tiling *c, top[TOP], *seen = NULL;
	int ntop = 0;
	int64_t nseen = 0, capseen = 0;
	int64_t n = cube_candidates(g, &c), cap = 0, walked = 0, timed = 0;
	struct stage *st = NULL, *pst = NULL;
	int64_t key[CC_TILE_KEY_MAX];
	size_t nkey = conv_key(cv, key);
	double v[CV_N];
	if (n > 0 && cc_tile_cache_get(cv->cache, "conv", key, nkey, v, CV_N) &&
	    (int64_t)v[CV_IDX] < n) {
		*best = c[(int64_t)v[CV_IDX]];
		best->upc = (int64_t)v[CV_UPC];
		best->nr = (int)v[CV_NR];
		best->nq = (int)v[CV_NQ];
		best->es = (int)v[CV_ES];
		best->ew = (int)v[CV_EW];
		best->est = v[CV_EST];
		best->core = v[CV_CORE];
		free(c);
		return 0;
	}
	/* the picked blocks' stages, per slab slot count */
	pst = malloc((size_t)(MAX_EV + 1) * 3 * PREFIX * sizeof *pst);
	if (!pst)
		n = -1;
	for (int64_t i = 0; i < n; i++) {
		if (timed >= MAX_TIMED || (walked > MAX_WALK && ntop))
			break; /* enough compile time spent */
		if (ntop == TOP && c[i].lb > top[TOP - 1].est)
			continue; /* cannot win */
		timed++;
		struct cube_tiling t = c[i];
		int64_t need = cdiv(t.tiles, t.blocks) * t.nch;
		if (need > cap) {
			struct stage *s = realloc(st, (size_t)need * sizeof *s);
			if (!s) {
				n = -1;
				break;
			}
			st = s;
			cap = need;
		}
		int64_t slabs = g->S * t.ng * t.mt * t.nch, ws = g->S * t.nt * t.nch;
		/* the blocks to time, per slab slot count (the weight slots follow
		 * from it): the same for every UB buffer setting */
		struct cube_pick picks[MAX_EV + 1];
		int picked[MAX_EV + 1] = { 0 };
		for (int s = 0; s <= MAX_EV; s++)
			picks[s].st = pst + s * 3 * PREFIX;
		int64_t upcs[3];
		upc_choices(g, &t, upcs);
		for (int u = 0; u < 3; u++) {
			if (u > 0 && upcs[u] == upcs[u - 1])
				continue;
			t.upc = upcs[u];
			int64_t bufs = (ub - g->ub_fixed) / (t.mf * t.upc * FRAC);
			/* residual buffers: one (the UB is short) or two (a load need
			 * not wait for the latest add); the output buffers get the rest */
			int nrs = cc_conv_res(cv) ? 2 : 0;
			for (int nr = cc_conv_res(cv); nr <= nrs; nr++) {
				if (nr > g->ev - 1 || nr >= bufs)
					break;
				t.nr = nr;
				t.nq = (int)min64(min64(MAX_UBQ, g->ev),
						  (bufs - nr) / (pairs_of(cv) ? 2 : 1));
				for (int s = 1; t.nq >= 1 && s <= g->ev && s <= slabs; s++) {
					int w = (int)min64(g->ev, ws);
					while (w > 0 && s * t.slab_bytes + w * t.w_bytes > l1)
						w--;
					if (w < 1)
						break;
					t.es = s;
					t.ew = w;
					t.idx = i;
					if (!picked[s]) {
						cube_pick(g, &t, st, &picks[s]);
						picked[s] = 1;
					}
					walked += cube_dry(g, &t, st, &picks[s]);
					top_add(top, &ntop, &t);
					if (cand_push(&seen, &nseen, &capseen, &t))
						n = -1;
				}
			}
		}
	}
	best->est = best->core = INFINITY;
	for (int i = 0; i < ntop && n >= 0; i++) {
		cube_dry(g, &top[i], st, NULL);
		if (faster(&top[i], best))
			*best = top[i];
	}
	if (n >= 0 && nseen + 3 * MAX_UBQ * MAX_EV > capseen) {
		struct cube_tiling *r = realloc(seen, (size_t)(nseen + 3 * MAX_UBQ * MAX_EV) * sizeof *r);
		if (r) {
			seen = r;
			capseen = nseen + 3 * MAX_UBQ * MAX_EV;
		} else
			n = -1;
	}
	if (n >= 0 && isfinite(best->est) && cube_lean(g, c, n, best, seen, nseen, capseen, &st, &cap))
		n = -1;
	free(seen);
	free(st);
	free(pst);
	free(c);
	if (n < 0) {
		snprintf(err, errlen, "conv: out of memory");
		return -1;
	}
	if (isfinite(best->est)) {
		double keep[CV_N] = { [CV_IDX] = (double)best->idx, [CV_UPC] = (double)best->upc,
				      [CV_NR] = best->nr,	    [CV_NQ] = best->nq,
				      [CV_ES] = best->es,	    [CV_EW] = best->ew,
				      [CV_EST] = best->est,	    [CV_CORE] = best->core };
		cc_tile_cache_put(cv->cache, "conv", key, nkey, keep, CV_N);
	}
	if (!isfinite(best->est)) {
		snprintf(err, errlen,
			 "conv %lldx%lldx%lldx%lld -> %lld, kernel %lldx%lld: no tiling fits "
			 "this SoC's L1/L0/UB buffers",
			 (long long)cv->n, (long long)cv->cin, (long long)cv->h, (long long)cv->w,
			 (long long)cv->cout, (long long)cv->kh, (long long)cv->kw);
		return -1;
	}
	return 0;
}

static void cube_block_fn(struct kg *gn, void *ctx, int64_t b)
{
	struct cube_blocks *cb = ctx;
	cube_block(gn, cb->g, cb->t, cb->st, plan_stages(cb->g, cb->t, b, cb->st), 1);
}

static int gen_cube(const struct geo *g, struct cc_prog *p, unsigned *block_dim, char *err,
		    size_t errlen)
{
	if (g->ev < 2) {
		snprintf(err, errlen, "conv: needs 2 event ids per pipe pair (%s has %lld)",
			 g->cfg->name, (long long)g->cfg->core_event_ids);
		return -1;
	}
	struct cube_tiling t = { 0 };
	if (cube_choose(g, &t, err, errlen))
		return -1;
	conv_args(p, g->cv);
	int rc = cube_emit(g, &t, p);
	if (rc) {
		snprintf(err, errlen, rc == -2 ? "conv: a transfer exceeds the DMA's burst limits"
					       : "conv: out of memory");
		return -1;
	}
	*block_dim = (unsigned)t.blocks;
	return 0;
}

/* ---- depthwise path ------------------------------------------------------ */

struct dw_tiling {
	int64_t R;      /* output rows per unit */
	int64_t nb;     /* bands per image */
	int64_t units, blocks;
	int64_t Wp, P;  /* padded input row and output grid row, in pixels */
	int nsb, nab;   /* slab and accumulator buffers */
	int64_t slab_px, acc_px;
	int64_t ub_w, ub_bias, ub_slab[MAX_EV], ub_acc[MAX_UBQ];
	double est;
};

static int64_t dw_rows_in(const struct cc_conv *cv, int64_t R)
{
	return (R - 1) * cv->sh + (cv->kh - 1) * cv->dh + 1;
}

/* The UB layout; 0 when it fits. */
static int dw_fit(const struct geo *g, struct dw_tiling *t)
{
	const struct cc_conv *cv = g->cv;
	int64_t acc = up(t->R * t->P, 8);
	/* the last lane of the last repeat of the last tap, junk columns included */
	int64_t reach = cv->sw * (acc - 1) + (cv->kh - 1) * cv->dh * t->Wp + (cv->kw - 1) * cv->dw;
	/* + 8: zeroing whole repeats of padding rows may run past the last row */
	t->slab_px = up(max64(dw_rows_in(cv, t->R) * t->Wp, reach + 1), 8) + 8;
	t->acc_px = acc;
	t->ub_w = 0;
	t->ub_bias = up(g->C1 * g->kk * PIX, 512);
	int64_t a = t->ub_bias + up(cv->has_bias ? g->C1 * PIX : 0, 512);
	for (int s = 0; s < t->nsb; s++, a += t->slab_px * PIX)
		t->ub_slab[s] = a;
	for (int s = 0; s < t->nab; s++, a += t->acc_px * PIX)
		t->ub_acc[s] = a;
	return a > g->cfg->ub_size_kb * 1024 ? -1 : 0;
}

struct band {
	int64_t img, c1, oh0, rows;
	int64_t rows_in, ih_a, nreal, top; /* real input rows [ih_a, +nreal) at slab row top */
};

static void band_of(const struct geo *g, const struct dw_tiling *t, int64_t u, struct band *b)
{
	const struct cc_conv *cv = g->cv;
	b->img = u / (g->C1 * t->nb);
	b->c1 = u / t->nb % g->C1;
	b->oh0 = u % t->nb * t->R;
	b->rows = min64(t->R, g->Ho - b->oh0);
	b->rows_in = dw_rows_in(cv, b->rows);
	int64_t p0 = b->oh0 * cv->sh; /* first slab row, in padded coordinates */
	int64_t a = max64(p0 - cv->pt, 0), e = min64(p0 + b->rows_in - cv->pt, cv->h);
	b->ih_a = a;
	b->nreal = max64(e - a, 0);
	b->top = b->nreal ? a + cv->pt - p0 : b->rows_in;
}

/* Zero the padding rows of band b in slab s, before its input arrives: the
 * whole repeats may spill into its first real row, which MTE2 then writes. */
static void dw_zero_pad_rows(struct kg *gn, const struct dw_tiling *t, const struct band *b,
			     int s)
{
	int64_t base = t->ub_slab[s];
	if (b->top > 0)
		vrun(gn, ISA_OP_VDUP, base, b->top * t->Wp, 0);
	int64_t bot = b->top + b->nreal;
	if (b->nreal && bot < b->rows_in)
		vrun(gn, ISA_OP_VDUP, base + bot * t->Wp * PIX, (b->rows_in - bot) * t->Wp, 0);
}

/* V for one band: the taps over the output grid, bias first, then the act. */
static void dw_taps(struct kg *gn, const struct geo *g, const struct dw_tiling *t,
		    const struct band *b, int64_t slab, int64_t acc)
{
	const struct cc_conv *cv = g->cv;
	int masked = clip_needs_mask(cv) && b->c1 == g->C1 - 1;
	int64_t reps = cdiv(b->rows * t->P, 8);
	for (int64_t r0 = 0; r0 < reps; r0 += MAX_REP) {
		int64_t rep = min64(MAX_REP, reps - r0), q0 = r0 * 8, d = acc + q0 * PIX;
		if (cv->has_bias)
			vop(gn, ISA_OP_VMOV, d, t->ub_bias + b->c1 * PIX, 0, rep, 0, 0, 1, 8);
		for (int64_t i = 0; i < cv->kh; i++)
			for (int64_t j = 0; j < cv->kw; j++) {
				int64_t tap = i * cv->kw + j;
				int mul = tap == 0 && !cv->has_bias;
				int64_t src = cv->sw * q0 + i * cv->dh * t->Wp + j * cv->dw;
				vop(gn, mul ? ISA_OP_VMUL : ISA_OP_VMLA, d, slab + src * PIX,
				    t->ub_w + (b->c1 * g->kk + tap) * PIX, rep, cv->sw,
				    8 * cv->sw, 0, 0);
			}
		emit_act(gn, cv, d, rep * 8, 0, masked);
	}
}

/* Unit u of a block's units [u0, u1): the band's input into its slab, the
 * taps, the next band's padding rows in the slab, the output to GM. */
static void dw_unit(struct kg *gn, const struct geo *g, const struct dw_tiling *t, int64_t u0,
		    int64_t u1, int64_t u)
{
	const struct cc_conv *cv = g->cv;
	int s = (int)((u - u0) % t->nsb), a = (int)((u - u0) % t->nab);
	struct band b;
	band_of(g, t, u, &b);
	wait_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, s);
	if (b.nreal) {
		int64_t row = (b.img * g->C1 + b.c1) * cv->h + b.ih_a;
		xfer(gn, ISA_OP_MOV_GM_UB, R_GM, R_X, row * cv->w * PIX,
		     t->ub_slab[s] + (b.top * t->Wp + cv->pl) * PIX, b.nreal, cv->w, 0,
		     t->Wp - cv->w);
	}
	set_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, s);
	wait_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, s);
	wait_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, a);
	dw_taps(gn, g, t, &b, t->ub_slab[s], t->ub_acc[a]);
	/* the band nsb later reuses this slab: clear its padding rows now */
	if (u + t->nsb < u1) {
		struct band nb;
		band_of(g, t, u + t->nsb, &nb);
		dw_zero_pad_rows(gn, t, &nb, s);
	}
	set_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, s);
	set_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE3, a);
	wait_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE3, a);
	xfer(gn, ISA_OP_MOV_UB_GM, R_GM, R_Y, ((b.img * g->C1 + b.c1) * g->Ho + b.oh0) * g->Wo * PIX,
	     t->ub_acc[a], b.rows, g->Wo, t->P - g->Wo, 0);
	set_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, a);
}

/* A block's units as kg_emit_rolled steps. */
struct dw_run {
	const struct geo *g;
	const struct dw_tiling *t;
	int64_t u0, u1;
};

static void dw_unit_step(struct kg *gn, const void *ctx, size_t i)
{
	const struct dw_run *r = ctx;
	dw_unit(gn, r->g, r->t, r->u0, r->u1, r->u0 + (int64_t)i);
}

/* Block blk's program after the dispatch; roll: its units as loops where
 * they repeat (the program), else straight (a dry run). */
static void dw_block(struct kg *gn, const struct geo *g, const struct dw_tiling *t, int64_t blk,
		     int roll)
{
	const struct cc_conv *cv = g->cv;
	int64_t u0 = part_lo(t->units, t->blocks, blk), u1 = part_lo(t->units, t->blocks, blk + 1);
	int wev = t->nsb; /* weights and bias */
	/* zero every slab whole: the padding columns stay zero for good */
	for (int s = 0; s < t->nsb; s++) {
		vrun(gn, ISA_OP_VDUP, t->ub_slab[s], t->slab_px, 0);
		set_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, s);
	}
	for (int a = 0; a < t->nab; a++)
		set_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, a);
	/* (through R_TMP: the dispatch is done with it) */
	xfer(gn, ISA_OP_MOV_GM_UB, R_TMP, R_W, 0, t->ub_w, 1, g->C1 * g->kk, 0, 0);
	if (cv->has_bias)
		xfer(gn, ISA_OP_MOV_GM_UB, R_TMP, R_BIAS, 0, t->ub_bias, 1, g->C1, 0, 0);
	set_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, wev);
	wait_flag(gn, ISA_PIPE_MTE2, ISA_PIPE_V, wev);
	if (roll) {
		struct dw_run r = { g, t, u0, u1 };
		if (kg_emit_rolled(gn, (size_t)(u1 - u0), dw_unit_step, &r))
			gn->bad = 1;
	} else {
		for (int64_t u = u0; u < u1; u++)
			dw_unit(gn, g, t, u0, u1, u);
	}
	for (int s = 0; s < t->nsb; s++)
		wait_flag(gn, ISA_PIPE_V, ISA_PIPE_MTE2, s);
	for (int a = 0; a < t->nab; a++)
		wait_flag(gn, ISA_PIPE_MTE3, ISA_PIPE_V, a);
	cc_end(gn->p);
}

/* Time a tiling on the dry run: the block with the most output rows (the
 * last band of an image may be short), and the last block. */
static void dw_dry(const struct geo *g, struct dw_tiling *t)
{
	int64_t busiest = 0, most = -1;
	for (int64_t b = 0; b < t->blocks; b++) {
		int64_t rows = 0;
		for (int64_t u = part_lo(t->units, t->blocks, b);
		     u < part_lo(t->units, t->blocks, b + 1); u++)
			rows += min64(t->R, g->Ho - u % t->nb * t->R);
		if (rows > most) {
			most = rows;
			busiest = b;
		}
	}
	t->est = hbm_bound(g, (double)(g->C1 * g->kk * PIX), g->C1);
	for (int i = 0; i < 2; i++) {
		if (i == 1 && busiest == t->blocks - 1)
			break;
		int64_t blk = i == 0 ? busiest : t->blocks - 1;
		struct sim_dryrun m;
		dry_init(&m, g->cfg, &g->cc, t->blocks, 0, 0);
		struct cc_prog dp;
		cc_prog_init_dryrun(&dp, &m);
		struct kg gn;
		kg_init(&gn, &dp, R_CACHE0, R_CACHE1);
		dry_prologue(&dp, g->cv, t->blocks, blk);
		dw_block(&gn, g, t, blk, 0);
		t->est = fmax(t->est, cc_prog_dry_time(&dp));
		cc_prog_free(&dp);
	}
}

/* Band heights: one per distinct band count; buffer counts: every split of
 * the event ids that fits the UB. */
static int dw_choose(const struct geo *g, struct dw_tiling *best, char *err, size_t errlen)
{
	const struct cc_conv *cv = g->cv;
	int64_t Wp = cv->w + cv->pl + cv->pr;
	/* the output grid row must be a whole number of pixels and hold a whole output row */
	while ((cv->sh * Wp) % cv->sw || cv->sh * Wp / cv->sw < g->Wo)
		Wp++;
	best->est = INFINITY;
	int64_t last_r = -1;
	for (int64_t nb = g->Ho; nb >= 1; nb--) {
		int64_t R = cdiv(g->Ho, nb);
		if (R == last_r)
			continue;
		last_r = R;
		int fits = 0;
		for (int nsb = 1; nsb < g->ev && nsb <= MAX_UBQ; nsb++)
			for (int nab = 1; nab <= g->ev && nab <= MAX_UBQ; nab++) {
				struct dw_tiling t = { .R = R, .nb = cdiv(g->Ho, R), .Wp = Wp,
						       .nsb = nsb, .nab = nab };
				t.P = cv->sh * Wp / cv->sw;
				if (dw_fit(g, &t))
					continue;
				fits = 1;
				t.units = cv->n * g->C1 * t.nb;
				t.blocks = min64(t.units, g->cfg->core_count);
				dw_dry(g, &t);
				if (t.est < best->est)
					*best = t;
			}
		if (!fits)
			break; /* taller bands need more */
	}
	if (!isfinite(best->est)) {
		snprintf(err, errlen,
			 "conv: depthwise %lldx%lld kernel on rows of %lld pixels does not fit "
			 "the %lld KiB UB",
			 (long long)cv->kh, (long long)cv->kw, (long long)cv->w,
			 (long long)g->cfg->ub_size_kb);
		return -1;
	}
	return 0;
}

struct dw_blocks {
	const struct geo *g;
	const struct dw_tiling *t;
};

static void dw_block_fn(struct kg *gn, void *ctx, int64_t b)
{
	const struct dw_blocks *db = ctx;
	dw_block(gn, db->g, db->t, b, 1);
}

static int gen_depthwise(const struct geo *g, struct cc_prog *p, unsigned *block_dim, char *err,
			 size_t errlen)
{
	const struct cc_conv *cv = g->cv;
	if (g->ev < 2) {
		snprintf(err, errlen, "conv: needs 2 event ids per pipe pair (%s has %lld)",
			 g->cfg->name, (long long)g->cfg->core_event_ids);
		return -1;
	}
	if (g->C1 * g->kk > ISA_DMA_LEN_MAX || g->Wo > ISA_DMA_LEN_MAX) { /* DMA burst lengths */
		snprintf(err, errlen, "conv: depthwise with %lld channels, a %lldx%lld kernel and "
			 "%lld output columns is not supported yet", (long long)cv->cin,
			 (long long)cv->kh, (long long)cv->kw, (long long)g->Wo);
		return -1;
	}
	struct dw_tiling t = { 0 };
	if (dw_choose(g, &t, err, errlen))
		return -1;
	struct kg gn;
	kg_init(&gn, p, R_CACHE0, R_CACHE1);
	conv_args(p, cv);
	struct dw_blocks db = { g, &t };
	int rc = kg_emit_blocks(&gn, t.blocks, dw_block_fn, &db);
	if (rc || gn.bad || p->oom) {
		snprintf(err, errlen, rc || p->oom ? "conv: out of memory"
						   : "conv: a transfer exceeds the DMA's burst limits");
		return -1;
	}
	*block_dim = (unsigned)t.blocks;
	return 0;
}

/* ---- interface ----------------------------------------------------------- */

static int is_depthwise(const struct cc_conv *cv)
{
	return cv->groups > 1 && cv->groups == cv->cin && cv->groups == cv->cout;
}

static int check_conv(const struct cc_conv *cv, char *err, size_t errlen)
{
	if (cv->n < 1 || cv->cin < 1 || cv->h < 1 || cv->w < 1 || cv->cout < 1 || cv->kh < 1 ||
	    cv->kw < 1 || cv->sh < 1 || cv->sw < 1 || cv->dh < 1 || cv->dw < 1 || cv->pt < 0 ||
	    cv->pl < 0 || cv->pb < 0 || cv->pr < 0 || cv->groups < 1 || cv->cin % cv->groups ||
	    cv->cout % cv->groups) {
		snprintf(err, errlen, "conv: bad shape (n %lld, cin %lld, %lldx%lld, cout %lld, "
			 "kernel %lldx%lld, groups %lld)",
			 (long long)cv->n, (long long)cv->cin, (long long)cv->h, (long long)cv->w,
			 (long long)cv->cout, (long long)cv->kh, (long long)cv->kw,
			 (long long)cv->groups);
		return -1;
	}
	if (cc_conv_ho(cv) < 1 || cc_conv_wo(cv) < 1) {
		snprintf(err, errlen,
			 "conv: the %lldx%lld kernel does not fit the padded %lldx%lld input",
			 (long long)cv->kh, (long long)cv->kw, (long long)cv->h, (long long)cv->w);
		return -1;
	}
	/* load3d and set_fmatrix encode these in 8 bits, widths in 16 */
	if (cv->kh > ISA_MAX(LOAD3D, kh) || cv->kw > ISA_MAX(LOAD3D, kw) ||
	    cv->sh > ISA_MAX(LOAD3D, sh) || cv->sw > ISA_MAX(LOAD3D, sw) ||
	    cv->dh > ISA_MAX(LOAD3D, dh) || cv->dw > ISA_MAX(LOAD3D, dw) ||
	    cv->pt > ISA_MAX(FMATRIX, pt) || cv->pb > ISA_MAX(FMATRIX, pb) ||
	    cv->pl > ISA_MAX(FMATRIX, pl) || cv->pr > ISA_MAX(FMATRIX, pr) ||
	    cv->w > ISA_MAX(FMATRIX, fw)) {
		_Static_assert(ISA_MAX(LOAD3D, kh) == ISA_MAX(FMATRIX, pt), "one bound, one message");
		snprintf(err, errlen, "conv: kernel, stride, dilation or padding above %lld (or a "
			 "row wider than %lld) is not supported yet", (long long)ISA_MAX(LOAD3D, kh),
			 (long long)ISA_MAX(FMATRIX, fw));
		return -1;
	}
	/* the int8 forms are whole tensors of one conv, with their scales */
	if ((cc_conv_x8(cv) || cc_conv_y8(cv) || cc_conv_r8(cv)) &&
	    (cv->groups != 1 || cv->x_c1 || cv->y_n1 || cv->slices > 1)) {
		snprintf(err, errlen, "conv: int8 for a grouped or depthwise convolution or a "
				      "channel slice is not supported yet");
		return -1;
	}
	if ((cc_conv_y8(cv) && !(cv->q8_inv_scale > 0.0f && isfinite(cv->q8_inv_scale))) ||
	    (cc_conv_r8(cv) && !(cv->r_scale > 0.0f && isfinite(cv->r_scale))) ||
	    (cv->y_form == CC_CONV_Y_S8_FOLDED && cv->act == CC_ACT_CLIP)) {
		snprintf(err, errlen, "conv: an int8 output or residual needs a positive scale "
				      "(a folded requantization, no clip)");
		return -1;
	}
	if (cv->slices < 0 ||
	    (cv->slices > 1 && (cv->cin % 16 || cv->cout % 16 || is_depthwise(cv)))) {
		snprintf(err, errlen, "conv: %lld slices need a cube convolution of whole "
			 "16-channel blocks (cin %lld, cout %lld)", (long long)cv->slices,
			 (long long)cv->cin, (long long)cv->cout);
		return -1;
	}
	int64_t S = cv->slices > 1 ? cv->slices : 1;
	if ((cv->x_c1 && (cv->x_c1o < 0 || cv->x_c1o + S * cdiv(cv->cin, 16) > cv->x_c1)) ||
	    (cv->y_n1 && (cv->y_n1o < 0 || cv->y_n1o + S * cdiv(cv->cout, 16) > cv->y_n1))) {
		snprintf(err, errlen, "conv: the channel slice is outside x's %lld or y's %lld "
			 "channel blocks", (long long)cv->x_c1, (long long)cv->y_n1);
		return -1;
	}
	if (cc_conv_res(cv) && cv->groups != 1) {
		snprintf(err, errlen, "conv: a residual added to a grouped or depthwise "
			 "convolution is not supported yet");
		return -1;
	}
	if (cc_conv_c04(cv) && !cc_conv_c04_ok(cv)) {
		snprintf(err, errlen, "conv: the small-channel (C04) path needs a plain fp16 "
				      "convolution of at most 4 input channels and an input "
				      "width that is a multiple of 4 (cin %lld, width %lld)",
			 (long long)cv->cin, (long long)cv->w);
		return -1;
	}
	if (cv->act == CC_ACT_CLIP && !(cv->clip_lo <= cv->clip_hi)) {
		snprintf(err, errlen, "conv: clip range [%g, %g] is empty", (double)cv->clip_lo,
			 (double)cv->clip_hi);
		return -1;
	}
	return 0;
}

int cc_conv_c04_ok(const struct cc_conv *cv)
{
	/* whole 32-byte blocks of 8-byte pixels: image planes and slab rows (or
	 * a flat conv's runs of 16 pixels) start on a block; the output side
	 * (a requantized int8 copy included) does not depend on the input's C0 */
	int flat = cv->kh == 1 && cv->kw == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt &&
		   !cv->pl && !cv->pb && !cv->pr;
	return cv->groups == 1 && cv->cin >= 1 && cv->cin <= 4 && !cc_conv_x8(cv) &&
	       cv->slices <= 1 && !cv->x_c1 &&
	       (cv->w % 4 == 0 || (flat && cv->h * cv->w % 4 == 0));
}

int cc_gen_conv(const struct soc_config *cfg, const struct cc_conv *cv, struct cc_prog *p,
		unsigned *block_dim, char *err, size_t errlen)
{
	if (check_conv(cv, err, errlen))
		return -1;
	struct geo g;
	if (is_depthwise(cv)) {
		if (cv->x_c1 || cv->y_n1) {
			snprintf(err, errlen, "conv: a channel slice of a depthwise convolution is "
					      "not supported yet");
			return -1;
		}
		geo_init(&g, cfg, cv);
		return gen_depthwise(&g, p, block_dim, err, errlen);
	}
	/* grouped: one full convolution whose weights are block-diagonal
	 * (cc_conv_layout_weights), groups times the grouped conv's MACs; the
	 * compiler keeps groups small by slicing (cv->x_c1...) */
	struct cc_conv full = *cv;
	full.groups = 1;
	geo_init(&g, cfg, &full);
	return gen_cube(&g, p, block_dim, err, errlen);
}

int cc_conv_has_tiling(const struct soc_config *cfg, const struct cc_conv *cv)
{
	if (is_depthwise(cv))
		return 1; /* the vector path tiles by output rows */
	struct cc_conv full = *cv;
	full.groups = 1;
	struct geo g;
	geo_init(&g, cfg, &full);
	struct cube_tiling *c;
	int64_t n = cube_candidates(&g, &c);
	free(c);
	return n > 0;
}

uint64_t cc_conv_weight_bytes(const struct cc_conv *cv)
{
	if (cv->slices > 1) { /* the slices' FRACTAL_Z one after another */
		struct cc_conv one = *cv;
		one.slices = 1;
		return (uint64_t)cv->slices * cc_conv_weight_bytes(&one);
	}
	uint64_t kk = (uint64_t)(cv->kh * cv->kw);
	if (cc_conv_x8(cv)) /* [K1][N1][32][16] bytes: 512 per fractal, as fp16's */
		return (uint64_t)cdiv(cv->cin, 32) * kk * (uint64_t)cdiv(cv->cout, 16) * FRAC;
	uint64_t c1 = (uint64_t)cdiv(cv->cin, 16);
	if (is_depthwise(cv))
		return c1 * kk * PIX;
	if (cc_conv_c04(cv)) /* 4 taps of 4 channels a fractal row */
		return (uint64_t)cdiv((int64_t)kk * 4, 16) * (uint64_t)cdiv(cv->cout, 16) * FRAC;
	return c1 * kk * (uint64_t)cdiv(cv->cout, 16) * FRAC;
}

void cc_conv_layout_weights(const struct cc_conv *cv, const float *w, uint16_t *out)
{
	int64_t C1 = cdiv(cv->cin, 16), N1 = cdiv(cv->cout, 16), kk = cv->kh * cv->kw;
	if (cv->slices > 1) { /* slice s: output channels [s*cout, (s + 1)*cout) of w */
		struct cc_conv one = *cv;
		one.slices = 1;
		size_t n = (size_t)(cc_conv_weight_bytes(&one) / 2);
		int64_t per = cv->cout * (cv->cin / cv->groups) * kk; /* ONNX values a slice */
		for (int64_t sl = 0; sl < cv->slices; sl++)
			cc_conv_layout_weights(&one, w + sl * per, out + (size_t)sl * n);
		return;
	}
	if (cc_conv_c04(cv)) {
		/* K element kx = k1*16 + k is tap kx / 4, channel kx % 4, the order
		 * load3d c04=1 expands the input in; zero past the taps and cin */
		int64_t K1 = cdiv(kk * 4, 16);
		for (int64_t k1 = 0; k1 < K1; k1++)
			for (int64_t n1 = 0; n1 < N1; n1++)
				for (int64_t k = 0; k < 16; k++)
					for (int64_t n = 0; n < 16; n++) {
						int64_t kx = k1 * 16 + k, tap = kx / 4, ci = kx % 4;
						int64_t co = n1 * 16 + n;
						float v = tap < kk && ci < cv->cin && co < cv->cout
								  ? w[(co * cv->cin + ci) * kk + tap]
								  : 0.0f;
						out[((k1 * N1 + n1) * 16 + k) * 16 + n] =
							dv_f32_to_f16(v);
					}
		return;
	}
	if (!is_depthwise(cv)) {
		/* fractal row k1 = (c1*kh + i)*kw + j, so the tap (i, j) is k1 % kk;
		 * grouped: zero outside the diagonal blocks (ci in co's group) */
		int64_t cpg = cv->cin / cv->groups, opg = cv->cout / cv->groups;
		for (int64_t k1 = 0; k1 < C1 * kk; k1++)
			for (int64_t n1 = 0; n1 < N1; n1++)
				for (int64_t k = 0; k < 16; k++)
					for (int64_t n = 0; n < 16; n++) {
						int64_t ci = k1 / kk * 16 + k, co = n1 * 16 + n;
						float v = 0;
						if (ci < cv->cin && co < cv->cout &&
						    ci / cpg == co / opg)
							v = w[(co * cpg + ci % cpg) * kk + k1 % kk];
						out[((k1 * N1 + n1) * 16 + k) * 16 + n] =
							dv_f32_to_f16(v);
					}
		return;
	}
	for (int64_t c1 = 0; c1 < C1; c1++)
		for (int64_t t = 0; t < kk; t++)
			for (int64_t c0 = 0; c0 < 16; c0++) {
				int64_t c = c1 * 16 + c0;
				out[(c1 * kk + t) * 16 + c0] =
					dv_f32_to_f16(c < cv->cin ? w[c * kk + t] : 0.0f);
			}
}

void cc_conv_layout_weights_s8(const struct cc_conv *cv, const int8_t *wq, int8_t *out)
{
	/* as the fp16 FRACTAL_Z, with 32 input channels per fractal row: element
	 * (ci = c1*32 + k, co = n1*16 + n) of tap k1 % kk at [k1][n1][k][n] */
	int64_t C1 = cdiv(cv->cin, 32), N1 = cdiv(cv->cout, 16), kk = cv->kh * cv->kw;
	for (int64_t k1 = 0; k1 < C1 * kk; k1++)
		for (int64_t n1 = 0; n1 < N1; n1++)
			for (int64_t k = 0; k < 32; k++)
				for (int64_t n = 0; n < 16; n++) {
					int64_t ci = k1 / kk * 32 + k, co = n1 * 16 + n;
					out[((k1 * N1 + n1) * 32 + k) * 16 + n] =
						ci < cv->cin && co < cv->cout
							? wq[(co * cv->cin + ci) * kk + k1 % kk]
							: 0;
				}
}
