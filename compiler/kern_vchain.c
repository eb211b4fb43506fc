/* kern_vchain.c: element-wise chains on the vector unit.
 *
 * The tensor (elements padded to whole 256-byte repeats) is cut into
 * contiguous ranges, one per block; each block streams its range through the
 * UB in tiles, double-buffered: MTE2 loads tile i+1 while V computes tile i
 * and MTE3 stores tile i-1.  Event ids 0/1 guard the two buffer sets.  The
 * tile size is the largest that fits every slot twice in the UB. */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

static const enum isa_op vop_isa[] = {
	[CC_V_ADD] = ISA_OP_VADD,   [CC_V_SUB] = ISA_OP_VSUB,   [CC_V_MUL] = ISA_OP_VMUL,
	[CC_V_DIV] = ISA_OP_VDIV,   [CC_V_MAX] = ISA_OP_VMAX,   [CC_V_MIN] = ISA_OP_VMIN,
	[CC_V_RELU] = ISA_OP_VRELU, [CC_V_EXP] = ISA_OP_VEXP,   [CC_V_LN] = ISA_OP_VLN,
	[CC_V_SQRT] = ISA_OP_VSQRT, [CC_V_REC] = ISA_OP_VREC,   [CC_V_ABS] = ISA_OP_VABS,
	[CC_V_ADDS] = ISA_OP_VADDS, [CC_V_MULS] = ISA_OP_VMULS, [CC_V_MAXS] = ISA_OP_VMAXS,
	[CC_V_MINS] = ISA_OP_VMINS,
};

enum { R_BIDX = 20, R_TMP = 21, R_GM = 10, R_UB = 16, R_SCALAR = 25 };

/* Registers: x1.. the arguments, x10.. GM addresses, x16.. UB addresses. */
static void emit_step(struct cc_prog *p, const struct cc_vstep *st, int64_t dst, int64_t a,
		      int64_t b, int64_t rep)
{
	enum isa_op op = vop_isa[st->op];
	const struct isa_info *info = &isa_table[op];
	cc_li(p, R_UB, dst);
	cc_li(p, R_UB + 1, a);
	struct isa_insn *in;
	if (info->fmt == ISA_FMT_VBIN) {
		cc_li(p, R_UB + 2, b);
		in = cc_emit(p, op);
		in->rs2 = R_UB + 2;
	} else if (info->fmt == ISA_FMT_VSCAL) {
		uint32_t bits;
		memcpy(&bits, &st->scalar, 4);
		cc_li(p, R_SCALAR, bits);
		in = cc_emit(p, op);
		in->rs2 = R_SCALAR;
	} else {
		in = cc_emit(p, op);
	}
	in->rd = R_UB;
	in->rs1 = R_UB + 1;
	in->dt = ISA_DT_F16;
	in->rep = rep;
}

int cc_gen_vchain(const struct soc_config *cfg, const struct cc_vchain *ch, int64_t elems,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (ch->nin < 1 || ch->nin > 8 || ch->nsteps < 1 || ch->nsteps > CC_MAX_VSTEPS) {
		snprintf(err, errlen, "element-wise chain: bad shape (%d inputs, %d steps)", ch->nin,
			 ch->nsteps);
		return -1;
	}
	int nslots = ch->nin + ch->nsteps, out = nslots - 1;
	int64_t units = (elems + 127) / 128; /* 256-byte repeats */
	int64_t tile = (int64_t)cfg->ub_size_kb * 1024 / (2 * nslots) / 256;
	if (tile > 255)
		tile = 255;
	if (tile < 1) {
		snprintf(err, errlen, "element-wise chain of %d steps does not fit the %lld KiB UB",
			 ch->nsteps, (long long)cfg->ub_size_kb);
		return -1;
	}
	int64_t blocks = (units + 15) / 16; /* at least 4 KiB per block */
	if (blocks > cfg->core_count)
		blocks = cfg->core_count;
	if (blocks < 1)
		blocks = 1;
	int64_t per = (units + blocks - 1) / blocks;
	blocks = (units + per - 1) / per;
	*block_dim = (unsigned)blocks;

	for (int i = 0; i <= ch->nin; i++)
		cc_ldarg(p, 1 + i, i);
	int labels[1024];
	if (blocks > 1024) {
		snprintf(err, errlen, "element-wise chain: too many blocks");
		return -1;
	}
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		int64_t u0 = b * per, u1 = u0 + per < units ? u0 + per : units;
		cc_prime_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		int par = 0;
		for (int64_t u = u0; u < u1; u += tile, par ^= 1) {
			int64_t n = u1 - u < tile ? u1 - u : tile;
			int64_t off = u * 256;
#define SLOT(s) ((int64_t)((s) * 2 + par) * tile * 256)
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			for (int i = 0; i < ch->nin; i++) {
				cc_addi(p, R_GM, 1 + i, off);
				cc_li(p, R_UB, SLOT(i));
				cc_dma(p, ISA_OP_MOV_GM_UB, R_UB, R_GM, 1, n * 8, 0, 0);
			}
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
			for (int s = 0; s < ch->nsteps; s++) {
				const struct cc_vstep *st = &ch->step[s];
				emit_step(p, st, SLOT(ch->nin + s), SLOT(st->a), SLOT(st->b), n);
			}
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, 1 + ch->nin, off);
			cc_li(p, R_UB, SLOT(out));
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, n * 8, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
#undef SLOT
		}
		cc_drain_flags(p, ISA_PIPE_V, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_V, 2);
		cc_end(p);
	}
	return 0;
}
