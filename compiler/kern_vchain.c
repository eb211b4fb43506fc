/* kern_vchain.c: element-wise chains on the vector unit.
 *
 * The tensor (elements padded to whole 256-byte repeats) is cut into
 * contiguous ranges, one per block; each block streams its range through the
 * UB in tiles, double-buffered: MTE2 loads tile i+1 while V computes tile i
 * and MTE3 stores tile i-1.  Event ids 0/1 guard the two buffer sets.  The
 * tile size is the largest that fits every slot twice in the UB.
 *
 * Erf and tanh have no instruction: each expands to a clipped odd rational
 * polynomial f(x) = x P(u) / Q(u), u = x^2 / c^2 (u in [0, 1] keeps every
 * fp16 intermediate and coefficient in range), through three temporary
 * slots shared by every such step of the chain.  The coefficients are a
 * least-squares fit of f(x)/x evaluated in fp16 arithmetic (each operation
 * rounded, as the vector unit does), the result clamped to [-1, 1]: over
 * all fp16 inputs the error is at most 4 fp16 ulps of the true value
 * (1.95e-3 absolute, at |x| in 2.4..3.5 where the value is just below 1;
 * the rounding of the eight fp16 steps dominates, the fits themselves are
 * within 7e-4 (erf) and 2e-4 (tanh)); near 0 it is relative.  Beyond the
 * clip value c the true value rounds to +-1 in fp16 (to within an ulp).
 *
 * cc_vchain_emit (one pass of a chain over a UB range) is shared with the
 * MatMul kernel's fused epilogue, so both round the same way. */
#include <stdio.h>
#include <string.h>

#include "kern_gen.h"
#include "kern_roll.h"

static const enum isa_op vop_isa[] = {
	[CC_V_ADD] = ISA_OP_VADD,   [CC_V_SUB] = ISA_OP_VSUB,   [CC_V_MUL] = ISA_OP_VMUL,
	[CC_V_DIV] = ISA_OP_VDIV,   [CC_V_MAX] = ISA_OP_VMAX,   [CC_V_MIN] = ISA_OP_VMIN,
	[CC_V_RELU] = ISA_OP_VRELU, [CC_V_EXP] = ISA_OP_VEXP,   [CC_V_LN] = ISA_OP_VLN,
	[CC_V_SQRT] = ISA_OP_VSQRT, [CC_V_REC] = ISA_OP_VREC,   [CC_V_ABS] = ISA_OP_VABS,
	[CC_V_ADDS] = ISA_OP_VADDS, [CC_V_MULS] = ISA_OP_VMULS, [CC_V_MAXS] = ISA_OP_VMAXS,
	[CC_V_MINS] = ISA_OP_VMINS, [CC_V_RSQRT] = ISA_OP_VRSQRT,
};

/* f(x) = x P(u) / Q(u), u = min(max(x, -c), c)^2 / c^2; coefficients from
 * the highest power of u down. */
struct ratfn {
	float c;
	int np, nq;
	float p[4], q[4];
};
static const struct ratfn fn_erf = { 3.5f, 3, 4,
				     { 4.261884945127029f, 2.306747592271515f, 1.1283790966201659f },
				     { 5.851042783985833f, 13.98315014053304f, 6.123693333249855f,
				       1.0f } };
static const struct ratfn fn_tanh = { 4.5f, 4, 4,
				      { 0.04747348168678368f, 1.0625842980602729f,
					2.557436947423529f, 0.9999999999928434f },
				      { 1.4886431485504066f, 9.212828977551737f, 9.307436215507682f,
					1.0f } };

/* Registers: the vector operands' UB addresses loaded into x16..x18 and a
 * scalar into x25 (cc_vchain_emit, on a bare program: the MatMul epilogue
 * runs it too); in cc_gen_vchain the arguments (arg_reg) and the kernel
 * builder's cache x19..x24. */
enum { R_UB = 16, R_SCALAR = 25, R_CACHE = 19, R_CACHE_END = 25 };

/* Argument i's register: x1, x2, then x8.. (up to 8 inputs and the output:
 * x14), clear of the builder's fixed registers x3..x7 (kern_gen.h). */
static int arg_reg(int i)
{
	return i < 2 ? R_SRC + i : 6 + i;
}
static void emit_step(struct cc_prog *p, enum isa_dtype dt, const struct cc_vstep *st,
		      int64_t dst, int64_t a, int64_t b, int64_t rep)
{
	enum isa_op op = vop_isa[st->op];
	const struct isa_info *info = &isa_table[op];
	cc_li(p, R_UB, dst);
	cc_li(p, R_UB + 1, a);
	if (info->fmt == ISA_FMT_VBIN) {
		cc_li(p, R_UB + 2, b);
		CC_I(p, VBIN, op, .rd = R_UB, .rs1 = R_UB + 1, .rs2 = R_UB + 2, .dt = dt,
		     .rep = rep);
	} else if (info->fmt == ISA_FMT_VSCAL) {
		uint32_t bits;
		memcpy(&bits, &st->scalar, 4);
		cc_li(p, R_SCALAR, bits);
		CC_I(p, VSCAL, op, .rd = R_UB, .rs1 = R_UB + 1, .rs2 = R_SCALAR, .dt = dt,
		     .rep = rep);
	} else {
		CC_I(p, VUN, op, .rd = R_UB, .rs1 = R_UB + 1, .dt = dt, .rep = rep);
	}
}

/* One vector instruction over rep repeats at UB addresses dst, a (and b). */
static void emit_raw(struct cc_prog *p, enum isa_dtype dt, enum isa_op op, int64_t dst, int64_t a,
		     int64_t b, float scalar, int64_t rep)
{
	struct cc_vstep st = { CC_V_ADD, 0, 0, scalar };
	for (int k = 0; k <= CC_V_MINS; k++)
		if (vop_isa[k] == op)
			st.op = (enum cc_vop)k;
	emit_step(p, dt, &st, dst, a, b, rep);
}

/* Horner's rule for P(u) into dst (c[0] the highest power's coefficient). */
static void emit_poly(struct cc_prog *p, enum isa_dtype dt, const float *c, int n, int64_t dst,
		      int64_t u, int64_t rep)
{
	emit_raw(p, dt, ISA_OP_VMULS, dst, u, 0, c[0], rep);
	emit_raw(p, dt, ISA_OP_VADDS, dst, dst, 0, c[1], rep);
	for (int k = 2; k < n; k++) {
		emit_raw(p, dt, ISA_OP_VMUL, dst, dst, u, 0, rep);
		emit_raw(p, dt, ISA_OP_VADDS, dst, dst, 0, c[k], rep);
	}
}

/* dst = f(a) with the temporaries t0..t2 (see the top of the file). */
static void emit_ratfn(struct cc_prog *p, enum isa_dtype dt, const struct ratfn *f, int64_t dst,
		       int64_t a, int64_t t0, int64_t t1, int64_t t2, int64_t rep)
{
	emit_raw(p, dt, ISA_OP_VMAXS, t0, a, 0, -f->c, rep);
	emit_raw(p, dt, ISA_OP_VMINS, t0, t0, 0, f->c, rep);
	emit_raw(p, dt, ISA_OP_VMUL, t1, t0, t0, 0, rep);
	emit_raw(p, dt, ISA_OP_VMULS, t1, t1, 0, 1.0f / (f->c * f->c), rep);
	emit_poly(p, dt, f->p, f->np, dst, t1, rep);
	emit_poly(p, dt, f->q, f->nq, t2, t1, rep);
	emit_raw(p, dt, ISA_OP_VMUL, dst, dst, t0, 0, rep);
	emit_raw(p, dt, ISA_OP_VDIV, dst, dst, t2, 0, rep);
	/* rounding can carry the quotient past the bound near saturation */
	emit_raw(p, dt, ISA_OP_VMINS, dst, dst, 0, 1.0f, rep);
	emit_raw(p, dt, ISA_OP_VMAXS, dst, dst, 0, -1.0f, rep);
}

/* Whether the chain has a step that expands through the temporaries. */
static int has_ratfn(const struct cc_vchain *ch)
{
	for (int s = 0; s < ch->nsteps; s++)
		if (ch->step[s].op == CC_V_ERF || ch->step[s].op == CC_V_TANH)
			return 1;
	return 0;
}

int cc_vchain_nslots(const struct cc_vchain *ch)
{
	return ch->nin + ch->nsteps + (has_ratfn(ch) ? 3 : 0);
}

void cc_vchain_emit(struct cc_prog *p, const struct cc_vchain *ch, const int64_t *slot,
		    int64_t rep)
{
	int tmp = ch->nin + ch->nsteps;
	enum isa_dtype dt = ch->f32 ? ISA_DT_F32 : ISA_DT_F16;
	for (int s = 0; s < ch->nsteps; s++) {
		const struct cc_vstep *st = &ch->step[s];
		if (st->op == CC_V_ERF || st->op == CC_V_TANH)
			emit_ratfn(p, dt, st->op == CC_V_ERF ? &fn_erf : &fn_tanh, slot[ch->nin + s],
				   slot[st->a], slot[tmp], slot[tmp + 1], slot[tmp + 2], rep);
		else
			emit_step(p, dt, st, slot[ch->nin + s], slot[st->a], slot[st->b], rep);
	}
}

/* A step's destination may share a buffer with a source it reads for the
 * last time: every instruction reads a repeat before it writes it, and an
 * expanded step reads its source only in its first instruction, while the
 * temporaries keep buffers of their own. */
int cc_vchain_buffers(const struct cc_vchain *ch, int *buf)
{
	int ns = ch->nin + ch->nsteps, last[CC_MAX_VSTEPS + 8], owner[CC_MAX_VSTEPS + 8];
	for (int s = 0; s < ns; s++)
		last[s] = s < ch->nin ? -1 : s - ch->nin;
	last[ns - 1] = ch->nsteps; /* the output outlives the chain */
	for (int s = 0; s < ch->nsteps; s++) {
		const struct cc_vstep *st = &ch->step[s];
		last[st->a] = s;
		if (st->op != CC_V_ERF && st->op != CC_V_TANH &&
		    isa_table[vop_isa[st->op]].fmt == ISA_FMT_VBIN)
			last[st->b] = s;
	}
	int nbuf = 0;
	for (int s = 0; s < ns; s++) {
		int b = -1;
		if (s >= ch->nin) /* a buffer whose slot is last read by this step */
			for (int k = 0; k < nbuf && b < 0; k++)
				if (owner[k] >= 0 && last[owner[k]] <= s - ch->nin)
					b = k;
		if (b < 0)
			b = nbuf++;
		owner[b] = s;
		buf[s] = b;
	}
	for (int t = ns; t < cc_vchain_nslots(ch); t++)
		buf[t] = nbuf++;
	return nbuf;
}

/* rep vconv repeats of 64 lanes between fp16 and fp32, contiguous both sides. */
static void vconv_run(struct cc_prog *p, enum isa_dtype dt, enum isa_dtype st, int64_t dst,
		      int64_t src, int64_t rep)
{
	cc_li(p, R_UB, dst);
	cc_li(p, R_UB + 1, src);
	CC_I(p, VCONV, ISA_OP_VCONV, .rd = R_UB, .rs1 = R_UB + 1, .dt = dt, .st = st, .rep = rep,
	     .dr = dt == ISA_DT_F32 ? 8 : 4, .s0r = st == ISA_DT_F32 ? 8 : 4);
}

/* The kernel's steps (kg_emit_steps): one tile each, double-buffered on
 * event ids 0/1; tiles of one parity and size repeat with their GM offsets
 * moving by a tile, so a block's tiles run as a loop (up to 3 inputs: a
 * loop advances at most KG_MAX_ADV bases), and blocks alike share one copy. */
struct vc_kern {
	const struct cc_vchain *ch;
	int64_t tile, per, units;
};

/* Block b's units [*u0, return). */
static int64_t vc_range(const struct vc_kern *k, int64_t b, int64_t *u0)
{
	*u0 = b * k->per;
	return *u0 + k->per < k->units ? *u0 + k->per : k->units;
}

static size_t vc_tiles(const void *ctx, int64_t b)
{
	const struct vc_kern *k = ctx;
	int64_t u0, u1 = vc_range(k, b, &u0);
	return (size_t)((u1 - u0 + k->tile - 1) / k->tile);
}

static void vc_tile(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct vc_kern *k = ctx;
	const struct cc_vchain *ch = k->ch;
	struct cc_prog *p = g->p;
	int nslots = cc_vchain_nslots(ch), out = ch->nin + ch->nsteps - 1, par = (int)(i % 2);
	int64_t wide = ch->f32 ? 2 : 1, tile = k->tile;
	int64_t u, u1 = vc_range(k, b, &u);
	u += (int64_t)i * tile;
	int64_t n = u1 - u < tile ? u1 - u : tile;
	int64_t off = u * 256;
#define SLOT(s) ((int64_t)((s) * 2 + par) * tile * 256 * wide)
	/* f32: an input lands in its slot's second half and widens
	 * into the slot in place (repeat r writes bytes [256r, 256r +
	 * 256), below every byte a later repeat reads) */
	int64_t half = ch->f32 ? n * 256 : 0;
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	for (int in = 0; in < ch->nin; in++)
		kg_dma(g, ISA_OP_MOV_GM_UB, arg_reg(in), off, SLOT(in) + half, 1, n * 8, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_V, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
	if (ch->f32)
		for (int in = 0; in < ch->nin; in++)
			vconv_run(p, ISA_DT_F32, ISA_DT_F16, SLOT(in), SLOT(in) + half, n * 2);
	int64_t addr[CC_MAX_VSTEPS + 8 + 3];
	for (int s = 0; s < nslots; s++)
		addr[s] = SLOT(s);
	cc_vchain_emit(p, ch, addr, n * wide);
	/* f32: the result narrows in place (writes trail the reads) */
	if (ch->f32)
		vconv_run(p, ISA_DT_F16, ISA_DT_F32, SLOT(out), SLOT(out), n * 2);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_V, ISA_PIPE_MTE3, par);
	kg_dma(g, ISA_OP_MOV_UB_GM, arg_reg(ch->nin), off, SLOT(out), 1, n * 8, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_V, par);
#undef SLOT
}

int cc_gen_vchain(const struct soc_config *cfg, const struct cc_vchain *ch, int64_t elems,
		  struct cc_prog *p, unsigned *block_dim, char *err, size_t errlen)
{
	if (ch->nin < 1 || ch->nin > 8 || ch->nsteps < 1 || ch->nsteps > CC_MAX_VSTEPS) {
		snprintf(err, errlen, "element-wise chain: bad shape (%d inputs, %d steps)", ch->nin,
			 ch->nsteps);
		return -1;
	}
	int nslots = cc_vchain_nslots(ch);
	/* f32: every slot holds fp32 (twice the bytes, twice the repeats); the
	 * fp16 data comes and goes through the slots' second halves */
	int64_t wide = ch->f32 ? 2 : 1;
	int64_t units = (elems + 127) / 128; /* 256-byte repeats of fp16 */
	int64_t tile = (int64_t)cfg->ub_size_kb * 1024 / (2 * nslots) / (256 * wide);
	if (tile > ISA_VEC_REP_MAX / wide)
		tile = ISA_VEC_REP_MAX / wide;
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
		cc_ldarg(p, arg_reg(i), i);
	struct vc_kern k = { ch, tile, per, units };
	struct kg_steps ks = { .blocks = blocks,
			       .sync = KG_SYNC_STREAM(2),
			       .nsync = 2, .nsteps = vc_tiles, .step = vc_tile, .ctx = &k };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "element-wise chain", err, errlen);
}
