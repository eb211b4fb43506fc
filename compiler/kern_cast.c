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

#include "kernels.h"

enum { R_SRC = 1, R_DST = 2, R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16 };

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

	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks && !p->over; b++) { /* over: emit.h */
		cc_label_bind(p, labels[b]);
		int64_t r0 = b * per, r1 = r0 + per < rows ? r0 + per : rows;
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int par = 0;
		for (int64_t r = r0; r < r1 && !p->over; r += tile, par ^= 1) {
			int64_t n = r1 - r < tile ? r1 - r : tile;
			int64_t s32 = par * (f32_slot + f16_slot), s16 = s32 + f32_slot;
			int64_t ub_in = to_device ? s32 : s16, ub_out = to_device ? s16 : s32;
			int64_t ub_row = c16 * esz; /* a host row's stride in the UB */
			if (f16)
				ub_out = ub_in;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			if (!to_device) {
				cc_addi(p, R_GM, R_SRC, r * dev_row);
				cc_li(p, R_UB, ub_in);
				cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, n * dev_row / 32, 0, 0);
			} else if (host_aligned) {
				cc_addi(p, R_GM, R_SRC, r * host_row);
				cc_li(p, R_UB, ub_in);
				cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, n, host_row / 32, 0,
				       (c16 * 4 - host_row) / 32);
			} else {
				for (int64_t i = 0; i < n && !p->over; i++) {
					cc_addi(p, R_GM, R_SRC, (r + i) * host_row);
					cc_li(p, R_UB, ub_in + i * c16 * 4);
					cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1,
					       (host_row + 31) / 32, 0, 0);
				}
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
				cc_li(p, R_UB, ub_out + e0 * (to_device ? 2 : 4));
				cc_li(p, R_UB + 1, ub_in + e0 * (to_device ? 4 : 2));
				CC_I(p, VCONV, ISA_OP_VCONV, .rd = R_UB, .rs1 = R_UB + 1,
				     .dt = to_device ? ISA_DT_F16 : ISA_DT_F32,
				     .st = to_device ? ISA_DT_F32 : ISA_DT_F16, .rep = k,
				     .dr = to_device ? 4 : 8, .s0r = to_device ? 8 : 4);
			}
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			if (to_device) {
				cc_addi(p, R_GM, R_DST, r * dev_row);
				cc_li(p, R_UB, ub_out);
				cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, n * dev_row / 32, 0, 0);
			} else if (host_aligned) {
				cc_addi(p, R_GM, R_DST, r * host_row);
				cc_li(p, R_UB, ub_out);
				cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, n, host_row / 32,
				       (ub_row - host_row) / 32, 0);
			} else {
				for (int64_t i = 0; i < n && !p->over; i++) {
					cc_addi(p, R_GM, R_DST, (r + i) * host_row);
					cc_li(p, R_UB, ub_out + i * ub_row);
					cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1,
					       (host_row + 31) / 32, 0, 0);
				}
			}
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	return 0;
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
	cc_ldarg(p, R_SRC, 0);
	cc_ldarg(p, R_DST, 1);
	int labels[1024];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks && !p->over; b++) { /* over: emit.h */
		cc_label_bind(p, labels[b]);
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int par = 0;
		for (int64_t u = b * per; u < (b + 1) * per && u < units && !p->over; u++, par ^= 1) {
			int64_t r = u / npc, j0 = u % npc * piece;
			int64_t m = cols - j0 < piece ? cols - j0 : piece, m16 = cc_pad16(m);
			int64_t hoff = r * host_row + j0 * 4, doff = r * dev_row + j0 * 2;
			int64_t hblk = (m * 4 + 31) / 32, dblk = m16 * 2 / 32;
			int64_t s32 = par * (f32_slot + f16_slot), s16 = s32 + f32_slot;
			int64_t ub_in = to_device ? s32 : s16, ub_out = to_device ? s16 : s32;
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_addi(p, R_GM, R_SRC, to_device ? hoff : doff);
			cc_li(p, R_UB, ub_in);
			cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, to_device ? hblk : dblk, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			cc_li(p, R_UB, ub_out);
			cc_li(p, R_UB + 1, ub_in);
			CC_I(p, VCONV, ISA_OP_VCONV, .rd = R_UB, .rs1 = R_UB + 1,
			     .dt = to_device ? ISA_DT_F16 : ISA_DT_F32,
			     .st = to_device ? ISA_DT_F32 : ISA_DT_F16, .rep = (m16 + 63) / 64,
			     .dr = to_device ? 4 : 8, .s0r = to_device ? 8 : 4);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, R_DST, to_device ? doff : hoff);
			cc_li(p, R_UB, ub_out);
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, to_device ? dblk : hblk, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	return 0;
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
