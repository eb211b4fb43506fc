/* kern_cast.c: the transdata at the graph's edges: the host's fp32 ND tensor
 * to the device's fp16 padded layout and back.
 *
 * Rows stream through the UB in tiles, double-buffered like every kernel.
 * In the UB a tile keeps the device's padded row stride on both sides
 * (C16 elements per row), so one flat vconv converts the whole tile; only
 * the host side's rows may be unaligned, which costs one DMA per row.  An
 * unaligned row written back to the host spills up to 31 bytes into the next
 * row; rows are written in order by one MTE3 queue, so the next row's write
 * repairs it, and such a cast runs as one block.
 *
 * A row too long for the UB (a 1-D signal of 10^5 samples) streams as pieces
 * of whole 16-element groups, the pieces of a row in order (gen_cast_long). */
#include <stdio.h>

#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments in R_SRC, R_DST (kern_gen.h); the vconv's UB
 * addresses loaded into x16, x17; the kernel builder's cache (the DMAs' UB
 * addresses) x18..x24. */
enum { R_UB = 16, R_CACHE = 18, R_CACHE_END = 25 };

/* A cast's plan: a tile of rows (gen_cast) or a piece of a row
 * (gen_cast_long) a step, the two slot pairs in turn; steps alike run as a
 * loop, blocks alike share one copy (kg_emit_steps). */
struct cast {
	int64_t rows, cols, c16, esz, host_row, dev_row, tile, f32_slot, f16_slot, per;
	int to_device, f16, host_aligned;
	int64_t piece, npc, units; /* gen_cast_long */
};

static size_t cast_tiles(const void *ctx, int64_t b)
{
	const struct cast *q = ctx;
	int64_t r0 = b * q->per, r1 = r0 + q->per < q->rows ? r0 + q->per : q->rows;
	return (size_t)((r1 - r0 + q->tile - 1) / q->tile);
}

static size_t cast_pieces(const void *ctx, int64_t b)
{
	const struct cast *q = ctx;
	return kg_block_units(b, q->per, q->units);
}

/* Both ways, a vconv at 64 lanes a repeat between the slots. */
static void cast_conv(struct cc_prog *p, int to_device, int64_t dst, int64_t src, int64_t rep)
{
	cc_li(p, R_UB, dst);
	cc_li(p, R_UB + 1, src);
	CC_I(p, VCONV, ISA_OP_VCONV, .rd = R_UB, .rs1 = R_UB + 1,
	     .dt = to_device ? ISA_DT_F16 : ISA_DT_F32, .st = to_device ? ISA_DT_F32 : ISA_DT_F16,
	     .rep = rep, .dr = to_device ? 4 : 8, .s0r = to_device ? 8 : 4);
}

static void cast_tile_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct cast *q = ctx;
	struct cc_prog *p = g->p;
	int to_device = q->to_device, f16 = q->f16, host_aligned = q->host_aligned;
	int64_t c16 = q->c16, esz = q->esz, host_row = q->host_row, dev_row = q->dev_row;
	int64_t f32_slot = q->f32_slot, f16_slot = q->f16_slot, tile = q->tile;
	int par = (int)(i % 2);
	int64_t r0 = b * q->per, r1 = r0 + q->per < q->rows ? r0 + q->per : q->rows;
	int64_t r = r0 + (int64_t)i * tile;
	int64_t n = r1 - r < tile ? r1 - r : tile;
	int64_t s32 = par * (f32_slot + f16_slot), s16 = s32 + f32_slot;
	int64_t ub_in = to_device ? s32 : s16, ub_out = to_device ? s16 : s32;
	int64_t ub_row = c16 * esz; /* a host row's stride in the UB */
	if (f16)
		ub_out = ub_in;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	if (!to_device) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, r * dev_row, ub_in, 1, n * dev_row / 32, 0, 0);
	} else if (host_aligned) {
		kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, r * host_row, ub_in, n, host_row / 32, 0,
		       (c16 * 4 - host_row) / 32);
	} else {
		for (int64_t k = 0; k < n; k++)
			kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (r + k) * host_row, ub_in + k * c16 * 4,
			       1, (host_row + 31) / 32, 0, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	/* one flat conversion, 64 lanes per repeat, ISA_VEC_REP_MAX repeats per
	 * insn (none for fp16 rows) */
	int64_t reps = f16 ? 0 : (n * c16 + 63) / 64;
	for (int64_t done = 0; done < reps; done += ISA_VEC_REP_MAX) {
		int64_t k = reps - done < ISA_VEC_REP_MAX ? reps - done : ISA_VEC_REP_MAX;
		int64_t e0 = done * 64;
		cast_conv(p, to_device, ub_out + e0 * (to_device ? 2 : 4),
			  ub_in + e0 * (to_device ? 4 : 2), k);
	}
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	if (to_device) {
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, r * dev_row, ub_out, 1, n * dev_row / 32, 0, 0);
	} else if (host_aligned) {
		kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, r * host_row, ub_out, n, host_row / 32,
		       (ub_row - host_row) / 32, 0);
	} else {
		for (int64_t k = 0; k < n; k++)
			kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (r + k) * host_row, ub_out + k * ub_row,
			       1, (host_row + 31) / 32, 0, 0);
	}
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

static void cast_piece_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct cast *q = ctx;
	struct cc_prog *p = g->p;
	int to_device = q->to_device;
	int64_t cols = q->cols, piece = q->piece, npc = q->npc, host_row = q->host_row,
		dev_row = q->dev_row, f32_slot = q->f32_slot, f16_slot = q->f16_slot;
	int par = (int)(i % 2);
	int64_t u = b * q->per + (int64_t)i;
	int64_t r = u / npc, j0 = u % npc * piece;
	int64_t m = cols - j0 < piece ? cols - j0 : piece, m16 = cc_pad16(m);
	int64_t hoff = r * host_row + j0 * 4, doff = r * dev_row + j0 * 2;
	int64_t hblk = (m * 4 + 31) / 32, dblk = m16 * 2 / 32;
	int64_t s32 = par * (f32_slot + f16_slot), s16 = s32 + f32_slot;
	int64_t ub_in = to_device ? s32 : s16, ub_out = to_device ? s16 : s32;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, to_device ? hoff : doff, ub_in, 1,
	       to_device ? hblk : dblk, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	cast_conv(p, to_device, ub_out, ub_in, (m16 + 63) / 64);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, to_device ? doff : hoff, ub_out, 1,
	       to_device ? dblk : hblk, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
}

/* A cast's blocks of steps. */
static int cast_kernel(struct cc_prog *p, const struct cast *q, int64_t blocks,
		       size_t (*nsteps)(const void *, int64_t),
		       void (*step)(struct kg *, const void *, int64_t, size_t), char *err,
		       size_t errlen)
{
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .nsteps = nsteps, .step = step, .ctx = q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "cast", err, errlen);
}

static int gen_cast_long(const struct soc_config *cfg, int64_t rows, int64_t cols,
			 int to_device, struct cc_prog *p, unsigned *block_dim, char *err,
			 size_t errlen);

/* Rows per tile: 0 when one row does not fit (gen_cast_long's case). */
static int64_t cast_tile(const struct soc_config *cfg, int64_t c16)
{
	/* UB per parity: fp32 slot + fp16 slot, each with a repeat of slack */
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t tile = (ub / 2 - 2 * 256) / (c16 * 6);
	if (tile > ISA_DMA_NBURST_MAX) /* a DMA of one burst per row */
		tile = ISA_DMA_NBURST_MAX;
	/* the slots are rounded up to whole repeats: the two parities' rounded
	 * slots must fit too, not just the bytes of their rows */
	while (tile >= 1 && 2 * (cc_round_up(tile * c16 * 4 + 256, 256) +
				 cc_round_up(tile * c16 * 2 + 256, 256)) > ub)
		tile--;
	return tile > 0 ? tile : 0;
}

int cc_cast_out_f16_fits(const struct soc_config *cfg, int64_t cols)
{
	return cols >= 1 && cast_tile(cfg, cc_pad16(cols)) >= 1;
}

/* f16: towards the host only, the host's rows are fp16 (--output_type=FP16):
 * the tile leaves the UB as it came in, only the padding dropped, with no
 * conversion (ATC's output TransData writing fp16). */
static int gen_cast(const struct soc_config *cfg, int64_t rows, int64_t cols, int to_device,
		    int f16, struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (rows < 1 || cols < 1) {
		snprintf(err, errlen, "empty tensors are not supported yet");
		return -1;
	}
	int64_t c16 = cc_pad16(cols);
	int64_t esz = f16 ? 2 : 4; /* the host's element */
	int64_t host_row = cols * esz, dev_row = c16 * 2;
	int host_aligned = host_row % 32 == 0;
	int64_t tile = cast_tile(cfg, c16);
	if (tile < 1 && f16) {
		snprintf(err, errlen, "cast: a row of %lld elements does not fit the UB",
			 (long long)cols);
		return -1;
	}
	if (tile < 1)
		return gen_cast_long(cfg, rows, cols, to_device, p, block_dim, err, errlen);
	int64_t f32_slot = cc_round_up(tile * c16 * 4 + 256, 256);
	int64_t f16_slot = cc_round_up(tile * c16 * 2 + 256, 256);
	int64_t blocks = 1;
	if (to_device || host_aligned) {
		blocks = (rows + 7) / 8;
		if (blocks > cfg->core_count)
			blocks = cfg->core_count;
	}
	int64_t per = (rows + blocks - 1) / blocks;
	per = (per + 7) / 8 * 8; /* block boundaries on 8-row (32-byte) multiples */
	blocks = (rows + per - 1) / per;
	if (blocks > 1024) {
		snprintf(err, errlen, "cast: too many blocks");
		return -1;
	}
	*block_dim = (unsigned)blocks;

	struct cast q = { .rows = rows, .cols = cols, .c16 = c16, .esz = esz, .host_row = host_row,
			  .dev_row = dev_row, .tile = tile, .f32_slot = f32_slot,
			  .f16_slot = f16_slot, .per = per, .to_device = to_device, .f16 = f16,
			  .host_aligned = host_aligned };
	return cast_kernel(p, &q, blocks, cast_tiles, cast_tile_step, err, errlen);
}

/* Rows of more elements than a tile holds: pieces of `piece` elements (a
 * multiple of 16, so that every piece starts on a 32-byte boundary of the
 * device row and of the UB).  A host-side piece that does not end on a
 * 32-byte boundary is moved as whole blocks: its load reads past it
 * (harmless), its store spills up to 31 bytes into the next piece, which the
 * next piece's store (same MTE3 queue, in order) rewrites; such a cast runs
 * as one block, as the unaligned rows of gen_cast do. */
static int gen_cast_long(const struct soc_config *cfg, int64_t rows, int64_t cols,
			 int to_device, struct cc_prog *p, unsigned *block_dim, char *err,
			 size_t errlen)
{
	int64_t c16 = cc_pad16(cols), host_row = cols * 4, dev_row = c16 * 2;
	int64_t ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t piece = (ub / 2 - 2 * 256 - 64) / 6 / 16 * 16;
	if (piece > ISA_VEC_REP_MAX * 64) /* one vconv instruction's repeats */
		piece = ISA_VEC_REP_MAX * 64;
	while (piece >= 16 && 2 * (cc_round_up(piece * 4 + 64 + 256, 256) +
				   cc_round_up(piece * 2 + 256, 256)) > ub)
		piece -= 16; /* the rounded slots of both parities fit */
	if (piece < 16) {
		snprintf(err, errlen, "cast: a row of %lld elements does not fit the UB",
			 (long long)cols);
		return -1;
	}
	int64_t npc = (cols + piece - 1) / piece, units = rows * npc;
	int64_t f32_slot = cc_round_up(piece * 4 + 64 + 256, 256);
	int64_t f16_slot = cc_round_up(piece * 2 + 256, 256);
	/* the host side of every piece is 32-byte aligned when the row is */
	int whole = host_row % 32 == 0 && (piece * 4) % 32 == 0;
	int64_t blocks = to_device || whole ? units : 1;
	if (blocks > cfg->core_count)
		blocks = cfg->core_count;
	int64_t per = (units + blocks - 1) / blocks;
	blocks = (units + per - 1) / per;
	if (blocks > 1024) {
		snprintf(err, errlen, "cast: too many blocks");
		return -1;
	}
	*block_dim = (unsigned)blocks;
	struct cast q = { .cols = cols, .host_row = host_row, .dev_row = dev_row,
			  .f32_slot = f32_slot, .f16_slot = f16_slot, .per = per,
			  .to_device = to_device, .piece = piece, .npc = npc, .units = units };
	return cast_kernel(p, &q, blocks, cast_pieces, cast_piece_step, err, errlen);
}

int cc_gen_cast_in(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		   unsigned *block_dim, char *err, size_t errlen)
{
	return gen_cast(cfg, rows, cols, 1, 0, p, block_dim, err, errlen);
}

int cc_gen_cast_out(const struct soc_config *cfg, int64_t rows, int64_t cols, struct cc_prog *p,
		    unsigned *block_dim, char *err, size_t errlen)
{
	return gen_cast(cfg, rows, cols, 0, 0, p, block_dim, err, errlen);
}

int cc_gen_cast_out_f16(const struct soc_config *cfg, int64_t rows, int64_t cols,
			struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	return gen_cast(cfg, rows, cols, 0, 1, p, block_dim, err, errlen);
}
