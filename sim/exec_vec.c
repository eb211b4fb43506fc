/* exec_vec.c: semantics of the vector unit (the V pipe).
 *
 * Operands.  The instruction is e->in; register operands are UB byte addresses, taken from
 * the values the scalar unit captured at issue (e->rd, e->rs1, e->rs2, e->rs3), never from
 * c->x, which the scalar may already have changed.
 *
 * Layout.  A repeat covers 256 bytes: L = 256 / element size lanes (f16/s16: 128, f32/s32:
 * 64) in 8 blocks of L/8 elements.  vconv uses L = 256 / max(size(dt), size(st)) and each
 * operand's block holds L/8 elements of its own type.  Lane i of repeat r of an operand at
 * X with block stride Xb (in the operand's blocks of (L/8)*size bytes: 32 except for the
 * narrower side of vconv) and repeat stride Xr (in 32-byte units) is at
 *   X + r*Xr*32 + (i / (L/8))*Xb*(L/8)*size + (i % (L/8))*size
 * dst uses db/dr, src0 s0b/s0r, src1 s1b/s1r.  Repeats run in order, and a repeat reads all
 * its sources before writing, so in-place operation and overlapping repeats are defined.
 *
 * Lane mask.  c->mask[0] holds lanes 0..63, c->mask[1] lanes 64..127; a lane whose bit is 0
 * is not written (its value is computed along with the others, which is unobservable, so
 * the loops stay branch-free).  vmask sets mask[1] = rs1, mask[0] = rs2; vmaskn sets the
 * first rs1 lanes (0 or >= 128: all).  1-byte types would need 256 lanes, more than the
 * mask has, so s8/u8 appear only in vconv.
 *
 * Checks, all before any buffer is touched: rep in 1..ISA_VEC_REP_MAX; the dtype supported by
 * the op; every operand's whole footprint (mask ignored) inside UB and aligned to its rule, via
 * sim_buf_at.  Strides above 16 bits (the encoding's limit) are rejected.
 *
 * Arithmetic.  f16 is converted to float, computed in float and rounded back RNE (for
 * + - * / sqrt float has more than 2*11+2 bits, so that is the correctly rounded f16
 * result); f32 is float.  exp/ln/sqrt use libm expf/logf/sqrtf, vrec is 1/x, vrsqrt
 * 1/sqrtf(x).  s32/s16 add/sub/mul/abs wrap (two's complement, computed in uint32).
 * max(a, b) is a > b ? a : b and min(a, b) is a < b ? a : b, relu is max(x, 0): with a NaN
 * the result is the second operand, so vcmp gt + vsel is exactly vmax.  vaddrelu is relu(a + b)
 * computed in float and rounded once: rounding keeps the sign, so that is vadd then vrelu.  vmla is
 * fmaf(src0, src1, dst) converted to the dtype: the product is never rounded on its own.
 * For f32 that is the single rounding; for f16 the product is exact in float and the float
 * sum is then rounded to f16 (computed in float, as specified; it differs from an exactly
 * rounded f16 fma only when the float sum lands exactly on an f16 halfway point).  Only
 * f16/f32 for div, mla, addrelu, exp, ln, sqrt, rec, rsqrt; f16/f32/s32/s16 for the rest.
 *
 * Scalars (vadds vmuls vmaxs vmins vdup) come from e->rs2: float dtypes read its low 32 bits
 * as fp32 bits (rounded to f16 first for f16); integer dtypes truncate it to the type.
 *
 * Reductions vcadd/vcmax/vcmin reduce repeat r's unmasked lanes in lane order and write one
 * dt element at dst + r*size(dt).  f16 vcadd accumulates in float and rounds once; integer
 * sums wrap.  With every lane masked the result is 0 (add), -inf/+inf (max/min) or the
 * integer type's min/max.
 *
 * vcmp writes L/8 bytes per repeat at dst + r*(L/8): bit i (LSB first in byte i/8) is
 * src0[i] cmp src1[i], 0 for masked lanes; C comparisons, so NaN compares false except ne.
 * vsel reads its bits the same way from rs3 + r*(L/8) and writes bit ? src0 : src1 (bits
 * copied, no conversion).
 *
 * vconv dt <- st: f16->f32, f32->f16, f32->s32, f16->s32, s32->f32, s32->f16, f16->s8,
 * f16->u8, s8->f16, u8->f16, f16->s16, s16->f16.  Float -> integer rounds with rnd and
 * saturates (NaN -> 0).  A conversion to a float type rounds RNE; where it can round at all
 * (f32->f16, s32->f32, s32->f16, s16->f16) any other rnd is an error, the exact ones
 * (f16->f32, s8/u8->f16) ignore rnd.  s32->f16 rounds the integer once.
 *
 * vaddreluconv dt <- st (f16->s8, f32->f16): lanes and block strides as vconv's;
 * per lane the sum src0 + src1 rounds in st exactly as vadd's (f16 RNE, s16 wraps), a relu
 * (max(x, 0)) follows, then the conversion as vconv's with rnd=rne (saturating): bit for bit
 * what vadd, vrelu and vconv rnd=rne compute one after the other, in one pass.  (CANN's
 * instruction also takes s16->s8, which vconv does not: left out.)
 *
 * mov.l0c.ub moves nfrac 16x16 fractals, source f at rs1 + f*(1+sgap)*1024 in L0C (fp32 or
 * s32), destination f at rd + f*(1+dgap)*dbytes in UB (dbytes 512 for cvt f16/deqf16, 1024
 * for none/s32).  none copies fp32, f16 rounds fp32 -> f16 RNE, s32 copies int32, deqf16 is
 * (float)int32 * scale -> f16 with scale the fp32 bits in the low 32 bits of rs2, deqv is
 * (float)int32 * scale[n] -> f16 for column n of each fractal, scale[] the 16 fp32 values at
 * UB address rs2 (an int8 layer's per-output-channel dequantization: one instruction per
 * 16-channel block, as the drain moves one block's fractals).  relu=1 applies max(x, 0)
 * before the final conversion.
 *
 * Cost.  Vector ops: occ = rep * ceil(256 / vector.bytes_per_cycle), times
 * vector.complex_cycles for ISA_F_COMPLEX ops; lat = vector.latency_cycles; vec_repeats +=
 * rep, vec_flops += unmasked lanes * rep (x2 for vmla and vaddrelu).  vmask/vmaskn: occ 1, lat 0.
 * mov.l0c.ub: occ = nfrac*1024 bytes at mte.l0c_to_ub_bytes_per_cycle, lat =
 * mte.local_latency_cycles, l0c_to_ub_bytes += nfrac*1024.
 *
 * Timing-only devices do every check and count every statistic but never read or write a
 * buffer (vmask/vmaskn still set the mask, which is core state, not data).
 *
 * Element data are in host byte order, as the host writes them with sim_gm_write. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core.h"
#include "fp16.h"
#include "vec_f16.h"
#include "vec_fma.h"

#include <math.h>
#include <string.h>

#define REPEAT_BYTES 256u
#define UNIT_BYTES 32u /* strides count 32-byte units */
#define MAX_LANES 128u
#define MAX_STRIDE 0xffffu
#define FRAC_ELEMS 256u
#define FRAC_BYTES 1024u

#define DT(x) (1u << ISA_DT_##x)
#define DTS_FLOAT (DT(F16) | DT(F32))
#define DTS_ARITH (DTS_FLOAT | DT(S32) | DT(S16))

/* Element-wise operations; the scalar forms reuse add/mul/max/min with a broadcast src1. */
enum ew {
	EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_MAX, EW_MIN, EW_MLA, EW_ADDRELU,
	EW_RELU, EW_EXP, EW_LN, EW_SQRT, EW_REC, EW_RSQRT, EW_ABS, EW_MOV, EW_DUP
};

/* Where src1 comes from. */
enum ew_src { SRC_NONE, SRC_UNARY, SRC_BINARY, SRC_SCALAR };

enum red { RED_ADD, RED_MAX, RED_MIN };

/* Lane geometry and mask of one instruction, computed once. */
struct vgeom {
	uint64_t rep;
	unsigned bl;          /* lanes per block: L/8 */
	uint32_t bmask[8];    /* mask bits of each block's lanes */
	uint32_t full;        /* all bl bits */
	unsigned active;      /* unmasked lanes per repeat */
	uint8_t on[MAX_LANES];
};

/* One strided operand, checked. */
struct vopnd {
	uint8_t *p;
	uint64_t bs, rs; /* block and repeat stride in bytes */
	unsigned es;     /* element size */
};

static const char *mn(enum isa_op op) { return isa_table[op].mnemonic; }

static const char *dt_name(int64_t dt)
{
	return dt >= 0 && dt < ISA_NDTYPES ? isa_enum_dtype[dt] : "(invalid)";
}

static int is_float_dt(enum isa_dtype dt) { return dt == ISA_DT_F16 || dt == ISA_DT_F32; }

/* The builtin, not a loop over set bits: a mask is nearly always all ones, and the loop's 128
 * iterations an instruction were 7 % of a timing-mode MobileNetV2 run.  Without -mpopcnt the
 * builtin is a libgcc call (1 % of one): the all-ones and empty words, nearly every mask
 * word, are answered first. */
static unsigned popcount64(uint64_t v)
{
	if (v == ~UINT64_C(0))
		return 64;
	return v ? (unsigned)__builtin_popcountll(v) : 0;
}

static float bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* The report of a dtype check_dtype refuses; apart, so that the check itself does not set up
 * the list's buffer on every instruction. */
static __attribute__((noinline, cold)) int dtype_refused(struct sim_core *c, enum isa_op op,
							   int64_t dt, unsigned allowed)
{
	char list[64] = "";
	size_t n = 0;

	for (unsigned t = 0; t < ISA_NDTYPES; t++)
		if (allowed >> t & 1)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "",
					      isa_enum_dtype[t]);
	return sim_fail(c, "%s: dtype %s is not supported (supported: %s)", mn(op), dt_name(dt),
			list);
}

static int check_dtype(struct sim_core *c, enum isa_op op, int64_t dt, unsigned allowed)
{
	if (dt >= 0 && dt < ISA_NDTYPES && (allowed >> dt & 1))
		return 0;
	return dtype_refused(c, op, dt, allowed);
}

static int check_rep(struct sim_core *c, int64_t rep)
{
	if (rep < 1 || rep > ISA_VEC_REP_MAX)
		return sim_fail(c, "rep must be 1..%lld (got %lld)", (long long)ISA_VEC_REP_MAX,
				(long long)rep);
	return 0;
}

static inline void geom_init(const struct sim_core *c, struct vgeom *g, int64_t rep,
			     unsigned lanes)
{
	uint64_t m[2] = { c->mask[0], lanes > 64 ? c->mask[1] : 0 };

	g->rep = (uint64_t)rep;
	g->bl = lanes / 8;
	g->full = (1u << g->bl) - 1;
	g->active = popcount64(m[0]) + popcount64(m[1]);
	/* Timing mode reads only rep, bl and active (opnd_at, vec_account): the block masks
	 * and lanes are for the arithmetic (the block masks were a third of a timing-mode
	 * vector instruction). */
	if (c->dev->timing_only)
		return;
	/* bl divides 64, so a block's bits never straddle the two mask words */
	for (unsigned b = 0; b < 8; b++) {
		unsigned first = b * g->bl;

		g->bmask[b] = (uint32_t)(m[first / 64] >> (first % 64)) & g->full;
	}
	/* Eight lanes at a time (lanes = 8 * bl): a mask is nearly always all
	 * ones, and a lane at a time cost a tenth of a timing-mode run. */
	for (unsigned i = 0; i < lanes; i += 8) {
		unsigned bits = (unsigned)(m[i / 64] >> (i % 64)) & 0xffu;

		if (bits == 0xffu) {
			memset(g->on + i, 1, 8);
			continue;
		}
		for (unsigned j = 0; j < 8; j++)
			g->on[i + j] = (uint8_t)(bits >> j & 1);
	}
}

/* Check a strided operand's whole footprint: the last byte is that of the last lane of the
 * last block of the last repeat (strides are non-negative).  Inlined, as geom_init: the
 * calls cost a sixth of a timing-mode vector instruction. */
static inline int opnd_at(struct sim_core *c, struct vopnd *o, const char *what,
			  int64_t addr, int64_t blk, int64_t rstr, unsigned es,
			  const struct vgeom *g)
{
	uint64_t extent;

	if (blk < 0 || blk > MAX_STRIDE || rstr < 0 || rstr > MAX_STRIDE)
		return sim_fail(c, "%s: strides must be 0..%u (block %lld, repeat %lld)", what,
				MAX_STRIDE, (long long)blk, (long long)rstr);
	o->es = es;
	/* Block strides count the operand's own blocks: 32 bytes except for the
	 * narrower side of vconv, whose blocks are 16 (or 8) bytes, so that
	 * stride 1 is contiguous there too. */
	o->bs = (uint64_t)blk * g->bl * es;
	o->rs = (uint64_t)rstr * UNIT_BYTES;
	extent = (g->rep - 1) * o->rs + 7 * o->bs + (uint64_t)g->bl * es;
	o->p = sim_buf_at(c, SIM_BUF_UB, addr, extent, what);
	return o->p ? 0 : -1;
}

/* Repeat r of o into raw, lanes contiguous. */
static void load_rep(const struct vopnd *o, const struct vgeom *g, uint64_t r, uint8_t *raw)
{
	size_t bb = (size_t)g->bl * o->es;
	const uint8_t *p = o->p + r * o->rs;

	if (bb == UNIT_BYTES) { /* every operand but vconv's narrower side: constant-size copies */
		for (unsigned b = 0; b < 8; b++)
			memcpy(raw + b * UNIT_BYTES, p + b * o->bs, UNIT_BYTES);
		return;
	}
	for (unsigned b = 0; b < 8; b++)
		memcpy(raw + b * bb, p + b * o->bs, bb);
}

/* Whether o's 8 blocks of a repeat lie back to back (block stride 1). */
static int rep_contiguous(const struct vopnd *o, const struct vgeom *g)
{
	return o->bs == (uint64_t)g->bl * o->es;
}

/* Repeat r of o, lanes contiguous: where it lies when its blocks are contiguous, else
 * gathered into raw (load_rep).  Reading in place saves a 256-byte copy an operand a
 * repeat: load_rep and store_rep were 12 % of a full-mode MobileNetV2 run. */
static const uint8_t *rep_bytes(const struct vopnd *o, const struct vgeom *g, uint64_t r,
				uint8_t *raw)
{
	if (rep_contiguous(o, g))
		return o->p + r * o->rs;
	load_rep(o, g, r, raw);
	return raw;
}

/* Write the unmasked lanes of raw to repeat r of o; whole blocks when they are unmasked. */
static void store_rep(const struct vopnd *o, const struct vgeom *g, uint64_t r,
		      const uint8_t *raw)
{
	size_t bb = (size_t)g->bl * o->es;
	uint8_t *p = o->p + r * o->rs;

	for (unsigned b = 0; b < 8; b++) {
		uint8_t *d = p + b * o->bs;
		const uint8_t *s = raw + b * bb;

		if (g->bmask[b] == g->full) {
			if (bb == UNIT_BYTES)
				memcpy(d, s, UNIT_BYTES);
			else
				memcpy(d, s, bb);
			continue;
		}
		for (unsigned j = 0; j < g->bl; j++)
			if (g->bmask[b] >> j & 1)
				memcpy(d + j * o->es, s + j * o->es, o->es);
	}
}

/* Statistics of a vector instruction that passed its checks (its cost is
 * sim_insn_cost's). */
static void vec_account(struct sim_core *c, const struct vgeom *g, unsigned flops_per_lane)
{
	c->st->vec_repeats += g->rep;
	c->st->vec_flops += g->rep * g->active * flops_per_lane;
}

/* --- element conversions between raw UB bytes and computation arrays ---------------- */

/* A repeat's float lanes fill it: the whole-repeat copies have a constant size, which the
 * compiler turns into vector moves (a copy of n * 4 bytes was a rep movs, slow to start). */
static void raw_to_f32(enum isa_dtype dt, const uint8_t *raw, float *v, unsigned n)
{
	if (dt == ISA_DT_F16)
		dv_f16_to_f32_n(raw, v, n);
	else if (n == REPEAT_BYTES / sizeof *v)
		memcpy(v, raw, REPEAT_BYTES);
	else
		memcpy(v, raw, n * sizeof *v);
}

static void f32_to_raw(enum isa_dtype dt, const float *v, uint8_t *raw, unsigned n)
{
	if (dt == ISA_DT_F16)
		dv_f32_to_f16_n(v, raw, n);
	else if (n == REPEAT_BYTES / sizeof *v)
		memcpy(raw, v, REPEAT_BYTES);
	else
		memcpy(raw, v, n * sizeof *v);
}

static void raw_to_s32(enum isa_dtype dt, const uint8_t *raw, int32_t *v, unsigned n)
{
	int16_t s16[MAX_LANES];
	int8_t s8[MAX_LANES];
	uint8_t u8[MAX_LANES];

	switch (dt) {
	case ISA_DT_S16:
		memcpy(s16, raw, n * sizeof *s16);
		for (unsigned i = 0; i < n; i++)
			v[i] = s16[i];
		break;
	case ISA_DT_S8:
		memcpy(s8, raw, n);
		for (unsigned i = 0; i < n; i++)
			v[i] = s8[i];
		break;
	case ISA_DT_U8:
		memcpy(u8, raw, n);
		for (unsigned i = 0; i < n; i++)
			v[i] = u8[i];
		break;
	default:
		memcpy(v, raw, n * sizeof *v);
		break;
	}
}

/* s32 or s16 results, already wrapped to 32 bits; s16 keeps the low half. */
static void u32_to_raw(enum isa_dtype dt, const uint32_t *u, uint8_t *raw, unsigned n)
{
	uint16_t h[MAX_LANES];

	if (dt == ISA_DT_S16) {
		for (unsigned i = 0; i < n; i++)
			h[i] = (uint16_t)u[i];
		memcpy(raw, h, n * sizeof *h);
	} else {
		memcpy(raw, u, n * sizeof *u);
	}
}

/* --- element-wise ------------------------------------------------------------------- */

/* The float ops whose result bits depend on the operands in order only:
 * subtraction and division (two NaNs give the first's payload, on every x86
 * instruction, scalar or packed), the selections max, min and relu (an
 * operand or 0, as the C expression says), rec (one NaN at most) and abs.
 * a, b and d are distinct arrays and n whole 16-lane vectors: so told, the
 * compiler vectorises these loops at -O2 (no alias checks, no scalar tail)
 * and each lane is the same IEEE operation as before, never reassociated or
 * fused (-ffp-contract=off): the same bits (check_vec's special values).
 * Addition and multiplication stay in ew_float's scalar loops: they commute,
 * and which operand's payload two NaNs give would be the compiler's choice,
 * made afresh for the vector code.  Not inlined: inlined into vec_ew, the
 * arrays' restrict is lost and the loops stay scalar. */
_Static_assert(REPEAT_BYTES / 4 % 16 == 0, "a repeat is not whole 16-lane vectors");
static __attribute__((noinline)) void ew_float_ordered(enum ew k, unsigned n,
							const float *restrict a,
							const float *restrict b, float *restrict d)
{
	unsigned i;

	n &= ~15u; /* no change: 64 (f32) or 128 (f16) lanes */
	switch (k) {
	case EW_SUB:
		for (i = 0; i < n; i++)
			d[i] = a[i] - b[i];
		break;
	case EW_DIV:
		for (i = 0; i < n; i++)
			d[i] = a[i] / b[i];
		break;
	case EW_MAX:
		for (i = 0; i < n; i++)
			d[i] = a[i] > b[i] ? a[i] : b[i];
		break;
	case EW_MIN:
		for (i = 0; i < n; i++)
			d[i] = a[i] < b[i] ? a[i] : b[i];
		break;
	case EW_RELU:
		for (i = 0; i < n; i++)
			d[i] = a[i] > 0.0f ? a[i] : 0.0f;
		break;
	case EW_REC:
		for (i = 0; i < n; i++)
			d[i] = 1.0f / a[i];
		break;
	case EW_ABS:
		for (i = 0; i < n; i++)
			d[i] = fabsf(a[i]);
		break;
	default:
		break; /* ew_float sends only these */
	}
}

/* d = op(a, b); d holds the old dst on entry for mla. */
static void ew_float(enum ew k, unsigned n, const float *a, const float *b, float *d)
{
	float fr[MAX_LANES];
	unsigned i;

	switch (k) {
	case EW_SUB:
	case EW_DIV:
	case EW_MAX:
	case EW_MIN:
	case EW_RELU:
	case EW_REC:
	case EW_ABS:
		ew_float_ordered(k, n, a, b, d);
		break;
	case EW_ADD:
		for (i = 0; i < n; i++)
			d[i] = a[i] + b[i];
		break;
	case EW_MUL:
		for (i = 0; i < n; i++)
			d[i] = a[i] * b[i];
		break;
	case EW_MLA:
		dv_fmaf_n(a, b, d, n);
		break;
	case EW_ADDRELU: /* (rounding to f16 keeps the sign: relu first is the same) */
		for (i = 0; i < n; i++)
			d[i] = a[i] + b[i];
		ew_float_ordered(EW_RELU, n, d, b, fr);
		memcpy(d, fr, n * sizeof *d);
		break;
	case EW_EXP:
		for (i = 0; i < n; i++)
			d[i] = expf(a[i]);
		break;
	case EW_LN:
		for (i = 0; i < n; i++)
			d[i] = logf(a[i]);
		break;
	case EW_SQRT:
		for (i = 0; i < n; i++)
			d[i] = sqrtf(a[i]);
		break;
	case EW_RSQRT:
		for (i = 0; i < n; i++)
			d[i] = 1.0f / sqrtf(a[i]);
		break;
	case EW_MOV:
	case EW_DUP:
		break; /* bit copies, handled before conversion */
	}
}

/* Integer forms; the uint32 casts make overflow wrap instead of being undefined. */
static void ew_int(enum ew k, unsigned n, const int32_t *a, const int32_t *b, uint32_t *d)
{
	unsigned i;

	switch (k) {
	case EW_ADD:
		for (i = 0; i < n; i++)
			d[i] = (uint32_t)a[i] + (uint32_t)b[i];
		break;
	case EW_SUB:
		for (i = 0; i < n; i++)
			d[i] = (uint32_t)a[i] - (uint32_t)b[i];
		break;
	case EW_MUL:
		for (i = 0; i < n; i++)
			d[i] = (uint32_t)a[i] * (uint32_t)b[i];
		break;
	case EW_MAX:
		for (i = 0; i < n; i++)
			d[i] = (uint32_t)(a[i] > b[i] ? a[i] : b[i]);
		break;
	case EW_MIN:
		for (i = 0; i < n; i++)
			d[i] = (uint32_t)(a[i] < b[i] ? a[i] : b[i]);
		break;
	case EW_RELU:
		for (i = 0; i < n; i++)
			d[i] = (uint32_t)(a[i] > 0 ? a[i] : 0);
		break;
	case EW_ABS:
		for (i = 0; i < n; i++)
			d[i] = a[i] < 0 ? 0u - (uint32_t)a[i] : (uint32_t)a[i];
		break;
	default:
		break; /* float-only ops never get here: check_dtype rejected them */
	}
}

static float scalar_float(int64_t v, enum isa_dtype dt)
{
	float f = bits_f32((uint32_t)(uint64_t)v);

	return dt == ISA_DT_F16 ? dv_round_f16(f) : f;
}

/* Truncate to the type by its bit pattern (a plain cast would be implementation-defined). */
static int32_t scalar_int(int64_t v, enum isa_dtype dt)
{
	uint32_t u32 = (uint32_t)(uint64_t)v;
	uint16_t u16 = (uint16_t)u32;
	int32_t s32;
	int16_t s16;

	if (dt == ISA_DT_S16) {
		memcpy(&s16, &u16, sizeof s16);
		return s16;
	}
	memcpy(&s32, &u32, sizeof s32);
	return s32;
}

/* vec_f16.c's form of an element-wise kind, or -1 if it has none. */
static int f16_op(enum ew k)
{
	switch (k) {
	case EW_ADD: return DV_F16_ADD;
	case EW_SUB: return DV_F16_SUB;
	case EW_MUL: return DV_F16_MUL;
	case EW_MAX: return DV_F16_MAX;
	case EW_MIN: return DV_F16_MIN;
	case EW_MLA: return DV_F16_MLA;
	case EW_ADDRELU: return DV_F16_ADDRELU;
	case EW_RELU: return DV_F16_RELU;
	default: return -1;
	}
}

/* The bytes o's blocks span, first to last. */
static uint64_t footprint(const struct vopnd *o, uint64_t rep)
{
	return (rep - 1) * o->rs + 7 * o->bs + UNIT_BYTES;
}

/* Whether src can be read block by block as d is written (vec_f16.c, vmov) and give what
 * reading each whole repeat first gives: laid out exactly as d (every lane read just before it
 * is overwritten), or nowhere near it. */
static int src_streams(const struct vopnd *s, const struct vopnd *d, uint64_t rep)
{
	if (s->p == d->p && s->bs == d->bs && s->rs == d->rs)
		return 1;
	return s->p + footprint(s, rep) <= d->p || d->p + footprint(d, rep) <= s->p;
}

static int vec_ew(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost,
		  enum isa_op op, enum ew k, enum ew_src src, unsigned dtypes)
{
	const struct isa_dec *in = e->in;
	enum isa_dtype dt;
	struct vgeom g;
	struct vopnd d, s0, s1;
	unsigned es, n;
	uint8_t raw0[REPEAT_BYTES], raw1[REPEAT_BYTES], rawd[REPEAT_BYTES];
	float fa[MAX_LANES], fb[MAX_LANES], fd[MAX_LANES];
	int32_t ia[MAX_LANES], ib[MAX_LANES];
	uint32_t ud[MAX_LANES];

	if (check_rep(c, in->rep) || check_dtype(c, op, in->dt, dtypes))
		return -1;
	dt = (enum isa_dtype)in->dt;
	es = isa_dtype_size(dt);
	n = REPEAT_BYTES / es;
	geom_init(c, &g, in->rep, n);
	if (opnd_at(c, &d, "dst", e->rd, in->db, in->dr, es, &g))
		return -1;
	if (src == SRC_BINARY) {
		if (opnd_at(c, &s0, "src0", e->rs1, in->s0b, in->s0r, es, &g) ||
		    opnd_at(c, &s1, "src1", e->rs2, in->s1b, in->s1r, es, &g))
			return -1;
	} else if (src != SRC_NONE) {
		if (opnd_at(c, &s0, "src", e->rs1, in->s0b, in->s0r, es, &g))
			return -1;
	}
	vec_account(c, &g, k == EW_MLA || k == EW_ADDRELU ? 2 : 1);
	if (c->dev->timing_only)
		return 0;

	if (k == EW_MOV) {
		/* every lane on, d's blocks apart and the source laid out as d or away from it:
		 * block by block, straight from source to destination */
		if (g.active == 8 * g.bl && g.rep && d.bs >= UNIT_BYTES && src_streams(&s0, &d, g.rep)) {
			if (s0.p == d.p)
				return 0; /* onto itself, lane for lane */
			for (uint64_t r = 0; r < g.rep; r++)
				for (unsigned b = 0; b < 8; b++)
					memcpy(d.p + r * d.rs + b * d.bs, s0.p + r * s0.rs + b * s0.bs,
					       UNIT_BYTES);
			return 0;
		}
		for (uint64_t r = 0; r < g.rep; r++) {
			load_rep(&s0, &g, r, raw0);
			store_rep(&d, &g, r, raw0);
		}
		return 0;
	}
	if (k == EW_DUP) {
		/* one repeat's worth of the scalar, written to every repeat */
		float f = scalar_float(e->rs2, dt);
		uint32_t u = (uint32_t)scalar_int(e->rs2, dt);

		for (unsigned i = 0; i < n; i++) {
			fd[i] = f;
			ud[i] = u;
		}
		if (is_float_dt(dt))
			f32_to_raw(dt, fd, rawd, n);
		else
			u32_to_raw(dt, ud, rawd, n);
		if (g.active == 8 * g.bl) {
			/* every lane on: each block gets the same 32 bytes, in any order */
			for (uint64_t r = 0; r < g.rep; r++)
				for (unsigned b = 0; b < 8; b++)
					memcpy(d.p + r * d.rs + b * d.bs, rawd, UNIT_BYTES);
			return 0;
		}
		for (uint64_t r = 0; r < g.rep; r++)
			store_rep(&d, &g, r, rawd);
		return 0;
	}
	if (src == SRC_SCALAR) {
		/* src1 is the scalar broadcast to every lane, so one loop serves both forms */
		float f = scalar_float(e->rs2, dt);
		int32_t v = scalar_int(e->rs2, dt);

		for (unsigned i = 0; i < n; i++) {
			fb[i] = f;
			ib[i] = v;
		}
	}
	/* every lane on and dst's blocks contiguous: results go straight into UB */
	int d_direct = g.active == 8 * g.bl && rep_contiguous(&d, &g);
	/* fp16 with every lane on: one pass in registers (vec_f16.c) when the layout allows;
	 * d's blocks must not overlap one another (vmla reads each block's old value just
	 * before writing it) */
	int fop = dt == ISA_DT_F16 && g.active == 8 * g.bl ? f16_op(k) : -1;
	int fpath = fop >= 0 ? dv_f16_ew_best() : 0;
	if (fpath && g.rep && d.bs >= UNIT_BYTES && src_streams(&s0, &d, g.rep) &&
	    (src != SRC_BINARY || src_streams(&s1, &d, g.rep))) {
		struct dv_f16_opnd oa = { s0.p, s0.bs, s0.rs }, od = { d.p, d.bs, d.rs }, ob;

		if (src == SRC_BINARY)
			ob = (struct dv_f16_opnd){ s1.p, s1.bs, s1.rs };
		if (dv_f16_ew_path(fpath, (enum dv_f16_op)fop, g.rep, &oa,
				   src == SRC_BINARY ? &ob : NULL, src == SRC_SCALAR ? fb : NULL,
				   &od) == 0)
			return 0;
	}
	for (uint64_t r = 0; r < g.rep; r++) {
		/* all of a repeat's reads come before its writes, as through the raw copies */
		const uint8_t *p0 = rep_bytes(&s0, &g, r, raw0);
		const uint8_t *p1 = src == SRC_BINARY ? rep_bytes(&s1, &g, r, raw1) : NULL;
		uint8_t *out = d_direct ? d.p + r * d.rs : rawd;
		if (is_float_dt(dt)) {
			raw_to_f32(dt, p0, fa, n);
			if (src == SRC_BINARY)
				raw_to_f32(dt, p1, fb, n);
			if (k == EW_MLA)
				raw_to_f32(dt, rep_bytes(&d, &g, r, rawd), fd, n);
			ew_float(k, n, fa, fb, fd);
			f32_to_raw(dt, fd, out, n);
		} else {
			raw_to_s32(dt, p0, ia, n);
			if (src == SRC_BINARY)
				raw_to_s32(dt, p1, ib, n);
			ew_int(k, n, ia, ib, ud);
			u32_to_raw(dt, ud, out, n);
		}
		if (!d_direct)
			store_rep(&d, &g, r, rawd);
	}
	return 0;
}

/* --- reductions -------------------------------------------------------------------- */

static float red_float(enum red k, unsigned n, const float *v, const uint8_t *on)
{
	float acc;
	unsigned i;

	switch (k) {
	case RED_MAX:
		acc = -INFINITY;
		for (i = 0; i < n; i++)
			if (on[i] && v[i] > acc)
				acc = v[i];
		return acc;
	case RED_MIN:
		acc = INFINITY;
		for (i = 0; i < n; i++)
			if (on[i] && v[i] < acc)
				acc = v[i];
		return acc;
	case RED_ADD:
	default:
		/* -0 is the exact identity of IEEE addition: a sum of -0 lanes stays -0 */
		acc = -0.0f;
		for (i = 0; i < n; i++)
			if (on[i])
				acc += v[i];
		return acc;
	}
}

static uint32_t red_int(enum red k, enum isa_dtype dt, unsigned n, const int32_t *v,
			const uint8_t *on)
{
	int32_t m;
	uint32_t sum = 0;
	unsigned i;

	switch (k) {
	case RED_MAX:
		m = dt == ISA_DT_S16 ? INT16_MIN : INT32_MIN;
		for (i = 0; i < n; i++)
			if (on[i] && v[i] > m)
				m = v[i];
		return (uint32_t)m;
	case RED_MIN:
		m = dt == ISA_DT_S16 ? INT16_MAX : INT32_MAX;
		for (i = 0; i < n; i++)
			if (on[i] && v[i] < m)
				m = v[i];
		return (uint32_t)m;
	case RED_ADD:
	default:
		for (i = 0; i < n; i++)
			if (on[i])
				sum += (uint32_t)v[i];
		return sum;
	}
}

static int vec_red(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost,
		   enum isa_op op, enum red k)
{
	const struct isa_dec *in = e->in;
	enum isa_dtype dt;
	struct vgeom g;
	struct vopnd s;
	uint8_t *dst, raw[REPEAT_BYTES];
	unsigned es, n;
	float fv[MAX_LANES], fres;
	int32_t iv[MAX_LANES];
	uint32_t ures;

	if (check_rep(c, in->rep) || check_dtype(c, op, in->dt, DTS_ARITH))
		return -1;
	dt = (enum isa_dtype)in->dt;
	es = isa_dtype_size(dt);
	n = REPEAT_BYTES / es;
	geom_init(c, &g, in->rep, n);
	dst = sim_buf_at(c, SIM_BUF_UB, e->rd, g.rep * es, "dst");
	if (!dst || opnd_at(c, &s, "src", e->rs1, in->s0b, in->s0r, es, &g))
		return -1;
	vec_account(c, &g, 1);
	if (c->dev->timing_only)
		return 0;
	for (uint64_t r = 0; r < g.rep; r++) {
		load_rep(&s, &g, r, raw);
		if (is_float_dt(dt)) {
			raw_to_f32(dt, raw, fv, n);
			fres = red_float(k, n, fv, g.on);
			if (!g.active && k == RED_ADD)
				fres = 0.0f; /* not the -0 the accumulator starts from */
			f32_to_raw(dt, &fres, dst + r * es, 1);
		} else {
			raw_to_s32(dt, raw, iv, n);
			ures = red_int(k, dt, n, iv, g.on);
			u32_to_raw(dt, &ures, dst + r * es, 1);
		}
	}
	return 0;
}

/* --- compare and select ------------------------------------------------------------ */

/* out[i] = a[i] cmp b[i]; the comparison chosen once, outside the loop. */
#define CMP_LOOPS(k, n, a, b, out)                                      \
	do {                                                            \
		unsigned i_;                                            \
		switch (k) {                                            \
		case ISA_CMP_EQ:                                        \
			for (i_ = 0; i_ < (n); i_++)                    \
				(out)[i_] = (a)[i_] == (b)[i_];         \
			break;                                          \
		case ISA_CMP_NE:                                        \
			for (i_ = 0; i_ < (n); i_++)                    \
				(out)[i_] = (a)[i_] != (b)[i_];         \
			break;                                          \
		case ISA_CMP_LT:                                        \
			for (i_ = 0; i_ < (n); i_++)                    \
				(out)[i_] = (a)[i_] < (b)[i_];          \
			break;                                          \
		case ISA_CMP_LE:                                        \
			for (i_ = 0; i_ < (n); i_++)                    \
				(out)[i_] = (a)[i_] <= (b)[i_];         \
			break;                                          \
		case ISA_CMP_GT:                                        \
			for (i_ = 0; i_ < (n); i_++)                    \
				(out)[i_] = (a)[i_] > (b)[i_];          \
			break;                                          \
		default:                                                \
			for (i_ = 0; i_ < (n); i_++)                    \
				(out)[i_] = (a)[i_] >= (b)[i_];         \
			break;                                          \
		}                                                       \
	} while (0)

static int vec_cmp(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	enum isa_dtype dt;
	enum isa_cmp k;
	struct vgeom g;
	struct vopnd s0, s1;
	uint8_t *dst, raw0[REPEAT_BYTES], raw1[REPEAT_BYTES], res[MAX_LANES];
	unsigned es, n;
	float fa[MAX_LANES], fb[MAX_LANES];
	int32_t ia[MAX_LANES], ib[MAX_LANES];

	if (check_rep(c, in->rep) || check_dtype(c, ISA_OP_VCMP, in->dt, DTS_ARITH))
		return -1;
	if (in->cmp >= ISA_NCMP)
		return sim_fail(c, "vcmp: invalid comparison %lld", (long long)in->cmp);
	dt = (enum isa_dtype)in->dt;
	k = (enum isa_cmp)in->cmp;
	es = isa_dtype_size(dt);
	n = REPEAT_BYTES / es;
	geom_init(c, &g, in->rep, n);
	dst = sim_buf_at(c, SIM_BUF_UB, e->rd, g.rep * (n / 8), "dst");
	if (!dst || opnd_at(c, &s0, "src0", e->rs1, in->s0b, in->s0r, es, &g) ||
	    opnd_at(c, &s1, "src1", e->rs2, in->s1b, in->s1r, es, &g))
		return -1;
	vec_account(c, &g, 1);
	if (c->dev->timing_only)
		return 0;
	for (uint64_t r = 0; r < g.rep; r++) {
		uint8_t *out = dst + r * (n / 8);

		load_rep(&s0, &g, r, raw0);
		load_rep(&s1, &g, r, raw1);
		if (is_float_dt(dt)) {
			raw_to_f32(dt, raw0, fa, n);
			raw_to_f32(dt, raw1, fb, n);
			CMP_LOOPS(k, n, fa, fb, res);
		} else {
			raw_to_s32(dt, raw0, ia, n);
			raw_to_s32(dt, raw1, ib, n);
			CMP_LOOPS(k, n, ia, ib, res);
		}
		for (unsigned j = 0; j < n / 8; j++) {
			unsigned byte = 0;

			for (unsigned b = 0; b < 8; b++)
				byte |= (unsigned)(res[j * 8 + b] & g.on[j * 8 + b]) << b;
			out[j] = (uint8_t)byte;
		}
	}
	return 0;
}

static int vec_sel(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	struct vgeom g;
	struct vopnd d, s0, s1;
	const uint8_t *bits;
	uint8_t raw0[REPEAT_BYTES], raw1[REPEAT_BYTES], rawd[REPEAT_BYTES];
	uint16_t h0[MAX_LANES], h1[MAX_LANES];
	uint32_t w0[MAX_LANES], w1[MAX_LANES];
	unsigned es, n;

	if (check_rep(c, in->rep) || check_dtype(c, ISA_OP_VSEL, in->dt, DTS_ARITH))
		return -1;
	es = isa_dtype_size((enum isa_dtype)in->dt);
	n = REPEAT_BYTES / es;
	geom_init(c, &g, in->rep, n);
	if (opnd_at(c, &d, "dst", e->rd, in->db, in->dr, es, &g) ||
	    opnd_at(c, &s0, "src0", e->rs1, in->s0b, in->s0r, es, &g) ||
	    opnd_at(c, &s1, "src1", e->rs2, in->s1b, in->s1r, es, &g))
		return -1;
	bits = sim_buf_at(c, SIM_BUF_UB, e->rs3, g.rep * (n / 8), "select bits");
	if (!bits)
		return -1;
	vec_account(c, &g, 1);
	if (c->dev->timing_only)
		return 0;
	for (uint64_t r = 0; r < g.rep; r++) {
		const uint8_t *rb = bits + r * (n / 8);

		load_rep(&s0, &g, r, raw0);
		load_rep(&s1, &g, r, raw1);
		/* a bit select: values are copied, never converted (NaN payloads survive) */
		if (es == 2) {
			memcpy(h0, raw0, n * 2);
			memcpy(h1, raw1, n * 2);
			for (unsigned i = 0; i < n; i++)
				h0[i] = (rb[i / 8] >> (i % 8) & 1) ? h0[i] : h1[i];
			memcpy(rawd, h0, n * 2);
		} else {
			memcpy(w0, raw0, n * 4);
			memcpy(w1, raw1, n * 4);
			for (unsigned i = 0; i < n; i++)
				w0[i] = (rb[i / 8] >> (i % 8) & 1) ? w0[i] : w1[i];
			memcpy(rawd, w0, n * 4);
		}
		store_rep(&d, &g, r, rawd);
	}
	return 0;
}

/* --- vconv ------------------------------------------------------------------------- */

/* conv_ok[dt][st]: 1 converts, 2 converts and can round to a float (rnd must be rne). */
static const uint8_t conv_ok[ISA_NDTYPES][ISA_NDTYPES] = {
	[ISA_DT_F32] = { [ISA_DT_F16] = 1, [ISA_DT_S32] = 2 },
	[ISA_DT_F16] = { [ISA_DT_F32] = 2, [ISA_DT_S32] = 2, [ISA_DT_S8] = 1, [ISA_DT_U8] = 1,
			 [ISA_DT_S16] = 2 },
	[ISA_DT_S32] = { [ISA_DT_F32] = 1, [ISA_DT_F16] = 1 },
	[ISA_DT_S8] = { [ISA_DT_F16] = 1 },
	[ISA_DT_U8] = { [ISA_DT_F16] = 1 },
	[ISA_DT_S16] = { [ISA_DT_F16] = 1 },
};

#define CONV_PAIRS "f16->f32, f32->f16, f32->s32, f16->s32, s32->f32, s32->f16, f16->s8, " \
	"f16->u8, s8->f16, u8->f16, f16->s16, s16->f16"

/* n lanes of src (type st) to dst (type dt); the pair is one of conv_ok. */
static void conv_rep(enum isa_dtype dt, enum isa_dtype st, enum dv_round rnd,
		     const uint8_t *src, uint8_t *dst, unsigned n)
{
	float f[MAX_LANES];
	int32_t v[MAX_LANES];
	int16_t s16[MAX_LANES];
	int8_t s8[MAX_LANES];
	uint8_t u8[MAX_LANES];
	unsigned i;

	if (is_float_dt(st)) {
		raw_to_f32(st, src, f, n);
	} else {
		raw_to_s32(st, src, v, n);
		/* Integers to float.  For f16, anything from 65520 up in magnitude is infinity
		 * whatever its low bits, so clamping to +-65536 first changes no result and
		 * makes (float) exact: the f16 rounding is then the only one. */
		if (dt == ISA_DT_F16)
			for (i = 0; i < n; i++) {
				int32_t x = v[i] > 65536 ? 65536 : v[i] < -65536 ? -65536 : v[i];

				f[i] = (float)x;
			}
		else
			for (i = 0; i < n; i++)
				f[i] = (float)v[i]; /* RNE, the default rounding mode */
	}
	switch (dt) {
	case ISA_DT_F16:
	case ISA_DT_F32:
		f32_to_raw(dt, f, dst, n);
		break;
	case ISA_DT_S32:
		for (i = 0; i < n; i++)
			v[i] = dv_f32_to_s32(f[i], rnd);
		memcpy(dst, v, n * sizeof *v);
		break;
	case ISA_DT_S16:
		for (i = 0; i < n; i++)
			s16[i] = dv_sat_s16(dv_f32_to_s32(f[i], rnd));
		memcpy(dst, s16, n * sizeof *s16);
		break;
	case ISA_DT_S8:
		for (i = 0; i < n; i++)
			s8[i] = dv_sat_s8(dv_f32_to_s32(f[i], rnd));
		memcpy(dst, s8, n);
		break;
	case ISA_DT_U8:
		for (i = 0; i < n; i++)
			u8[i] = dv_sat_u8(dv_f32_to_s32(f[i], rnd));
		memcpy(dst, u8, n);
		break;
	default:
		break;
	}
}

static int vec_conv(struct sim_core *c, const struct sim_qent *e, struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	enum isa_dtype dt, st;
	unsigned des, ses, n;
	struct vgeom g;
	struct vopnd d, s;
	uint8_t raws[REPEAT_BYTES], rawd[REPEAT_BYTES];
	int ok;

	if (check_rep(c, in->rep))
		return -1;
	ok = in->dt < ISA_NDTYPES && in->st < ISA_NDTYPES ?
		     conv_ok[in->dt][in->st] : 0;
	if (!ok)
		return sim_fail(c, "vconv: %s -> %s is not supported (supported: " CONV_PAIRS ")",
				dt_name(in->st), dt_name(in->dt));
	if (in->rnd >= ISA_NRND)
		return sim_fail(c, "vconv: invalid rounding mode %lld", (long long)in->rnd);
	if (ok == 2 && in->rnd != ISA_RND_RNE)
		return sim_fail(c, "vconv: %s -> %s rounds to nearest even only (rnd=%s given)",
				dt_name(in->st), dt_name(in->dt), isa_enum_rnd[in->rnd]);
	dt = (enum isa_dtype)in->dt;
	st = (enum isa_dtype)in->st;
	des = isa_dtype_size(dt);
	ses = isa_dtype_size(st);
	n = REPEAT_BYTES / (des > ses ? des : ses);
	geom_init(c, &g, in->rep, n);
	if (opnd_at(c, &d, "dst", e->rd, in->db, in->dr, des, &g) ||
	    opnd_at(c, &s, "src", e->rs1, in->s0b, in->s0r, ses, &g))
		return -1;
	vec_account(c, &g, 1);
	if (c->dev->timing_only)
		return 0;
	for (uint64_t r = 0; r < g.rep; r++) {
		load_rep(&s, &g, r, raws);
		conv_rep(dt, st, (enum dv_round)in->rnd, raws, rawd, n);
		store_rep(&d, &g, r, rawd);
	}
	return 0;
}

/* --- vaddreluconv ------------------------------------------------------------------ */

/* The pairs vaddreluconv takes: those of CANN's vaddreluconv that vconv has. */
static int addreluconv_ok(int64_t dt, int64_t st)
{
	return (dt == ISA_DT_S8 && st == ISA_DT_F16) || (dt == ISA_DT_F16 && st == ISA_DT_F32);
}

static int vec_addreluconv(struct sim_core *c, const struct sim_qent *e)
{
	const struct isa_dec *in = e->in;
	enum isa_dtype dt, st;
	unsigned des, ses, n;
	struct vgeom g;
	struct vopnd d, s0, s1;
	uint8_t raw0[REPEAT_BYTES], raw1[REPEAT_BYTES], raws[REPEAT_BYTES], rawd[REPEAT_BYTES];
	float fa[MAX_LANES], fb[MAX_LANES], fd[MAX_LANES];

	if (check_rep(c, in->rep))
		return -1;
	if (!addreluconv_ok(in->dt, in->st))
		return sim_fail(c, "vaddreluconv: %s -> %s is not supported (supported: f16->s8, "
				"f32->f16)", dt_name(in->st), dt_name(in->dt));
	dt = (enum isa_dtype)in->dt;
	st = (enum isa_dtype)in->st;
	des = isa_dtype_size(dt);
	ses = isa_dtype_size(st);
	n = REPEAT_BYTES / (des > ses ? des : ses);
	geom_init(c, &g, in->rep, n);
	if (opnd_at(c, &d, "dst", e->rd, in->db, in->dr, des, &g) ||
	    opnd_at(c, &s0, "src0", e->rs1, in->s0b, in->s0r, ses, &g) ||
	    opnd_at(c, &s1, "src1", e->rs2, in->s1b, in->s1r, ses, &g))
		return -1;
	vec_account(c, &g, 1);
	if (c->dev->timing_only)
		return 0;
	for (uint64_t r = 0; r < g.rep; r++) {
		load_rep(&s0, &g, r, raw0);
		load_rep(&s1, &g, r, raw1);
		/* the sum in st, as vadd stores it, then its relu, in st again */
		raw_to_f32(st, raw0, fa, n);
		raw_to_f32(st, raw1, fb, n);
		ew_float(EW_ADD, n, fa, fb, fd);
		f32_to_raw(st, fd, raws, n);
		raw_to_f32(st, raws, fa, n);
		ew_float(EW_RELU, n, fa, fb, fd);
		f32_to_raw(st, fd, raws, n);
		conv_rep(dt, st, DV_RND_RNE, raws, rawd, n);
		store_rep(&d, &g, r, rawd);
	}
	return 0;
}

/* --- handlers ---------------------------------------------------------------------- */

#define EW_HANDLER(id, k, src, dts)                                                      \
	int exec_##id(struct sim_core *c, const struct sim_qent *e, uint64_t now,       \
		      struct sim_cost *cost)                                             \
	{                                                                                \
		return vec_ew(c, e, cost, ISA_OP_##id, k, src, dts);                     \
	}

EW_HANDLER(VADD, EW_ADD, SRC_BINARY, DTS_ARITH)
EW_HANDLER(VSUB, EW_SUB, SRC_BINARY, DTS_ARITH)
EW_HANDLER(VMUL, EW_MUL, SRC_BINARY, DTS_ARITH)
EW_HANDLER(VDIV, EW_DIV, SRC_BINARY, DTS_FLOAT)
EW_HANDLER(VMAX, EW_MAX, SRC_BINARY, DTS_ARITH)
EW_HANDLER(VMIN, EW_MIN, SRC_BINARY, DTS_ARITH)
EW_HANDLER(VMLA, EW_MLA, SRC_BINARY, DTS_FLOAT)
EW_HANDLER(VADDRELU, EW_ADDRELU, SRC_BINARY, DTS_FLOAT)
EW_HANDLER(VRELU, EW_RELU, SRC_UNARY, DTS_ARITH)
EW_HANDLER(VEXP, EW_EXP, SRC_UNARY, DTS_FLOAT)
EW_HANDLER(VLN, EW_LN, SRC_UNARY, DTS_FLOAT)
EW_HANDLER(VSQRT, EW_SQRT, SRC_UNARY, DTS_FLOAT)
EW_HANDLER(VREC, EW_REC, SRC_UNARY, DTS_FLOAT)
EW_HANDLER(VRSQRT, EW_RSQRT, SRC_UNARY, DTS_FLOAT)
EW_HANDLER(VABS, EW_ABS, SRC_UNARY, DTS_ARITH)
EW_HANDLER(VMOV, EW_MOV, SRC_UNARY, DTS_ARITH)
EW_HANDLER(VADDS, EW_ADD, SRC_SCALAR, DTS_ARITH)
EW_HANDLER(VMULS, EW_MUL, SRC_SCALAR, DTS_ARITH)
EW_HANDLER(VMAXS, EW_MAX, SRC_SCALAR, DTS_ARITH)
EW_HANDLER(VMINS, EW_MIN, SRC_SCALAR, DTS_ARITH)
EW_HANDLER(VDUP, EW_DUP, SRC_NONE, DTS_ARITH)

int exec_VCADD(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return vec_red(c, e, cost, ISA_OP_VCADD, RED_ADD);
}

int exec_VCMAX(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return vec_red(c, e, cost, ISA_OP_VCMAX, RED_MAX);
}

int exec_VCMIN(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return vec_red(c, e, cost, ISA_OP_VCMIN, RED_MIN);
}

int exec_VCMP(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return vec_cmp(c, e, cost);
}

int exec_VSEL(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return vec_sel(c, e, cost);
}

int exec_VCONV(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	return vec_conv(c, e, cost);
}

int exec_VADDRELUCONV(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		      struct sim_cost *cost)
{
	return vec_addreluconv(c, e);
}

/* The mask is core state read when a later instruction executes; the pipe is in order,
 * so setting it here orders it correctly with the vector work around it. */
int exec_VMASK(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	c->mask[1] = (uint64_t)e->rs1;
	c->mask[0] = (uint64_t)e->rs2;
	return 0;
}

int exec_VMASKN(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		struct sim_cost *cost)
{
	/* unsigned, so a negative count is "more than 128" and means all lanes */
	uint64_t n = (uint64_t)e->rs1;

	if (n == 0 || n >= MAX_LANES) {
		c->mask[0] = c->mask[1] = ~UINT64_C(0);
	} else if (n >= 64) {
		c->mask[0] = ~UINT64_C(0);
		c->mask[1] = n == 64 ? 0 : (UINT64_C(1) << (n - 64)) - 1;
	} else {
		c->mask[0] = (UINT64_C(1) << n) - 1;
		c->mask[1] = 0;
	}
	return 0;
}

/* --- mov.l0c.ub -------------------------------------------------------------------- */

int exec_MOV_L0C_UB(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		    struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	uint64_t nf, dbytes, sstep, dstep;
	const uint8_t *src;
	uint8_t *dst;
	enum isa_cvt cvt;
	float f[FRAC_ELEMS], scale;
	int32_t v[FRAC_ELEMS];
	uint16_t h[FRAC_ELEMS];
	unsigned i;

	/* struct isa_dec members are unsigned and no wider than their fields:
	 * only the limits below the field's own range need checking */
	if (in->nfrac < 1)
		return sim_fail(c, "nfrac must be 1..%u (got %lld)", MAX_STRIDE,
				(long long)in->nfrac);
	if (in->sgap > MAX_STRIDE || in->dgap > MAX_STRIDE) /* 32-bit members (DMA's gaps) */
		return sim_fail(c, "gaps must be 0..%u (sgap %lld, dgap %lld)", MAX_STRIDE,
				(long long)in->sgap, (long long)in->dgap);
	if (in->cvt >= ISA_NCVT)
		return sim_fail(c, "invalid cvt %lld", (long long)in->cvt);
	cvt = (enum isa_cvt)in->cvt;
	nf = (uint64_t)in->nfrac;
	dbytes = cvt == ISA_CVT_F16 || cvt == ISA_CVT_DEQF16 || cvt == ISA_CVT_DEQV ? FRAC_BYTES / 2
										     : FRAC_BYTES;
	sstep = (1 + (uint64_t)in->sgap) * FRAC_BYTES;
	dstep = (1 + (uint64_t)in->dgap) * dbytes;
	src = sim_buf_at(c, SIM_BUF_L0C, e->rs1, (nf - 1) * sstep + FRAC_BYTES, "src");
	if (!src)
		return -1;
	dst = sim_buf_at(c, SIM_BUF_UB, e->rd, (nf - 1) * dstep + dbytes, "dst");
	if (!dst)
		return -1;
	const uint8_t *vscale = NULL;
	if (cvt == ISA_CVT_DEQV) {
		vscale = sim_buf_at(c, SIM_BUF_UB, e->rs2, 16 * sizeof(float), "scale");
		if (!vscale)
			return -1;
	}
	c->st->l0c_to_ub_bytes += nf * FRAC_BYTES;
	if (c->dev->timing_only)
		return 0;
	scale = bits_f32((uint32_t)(uint64_t)e->rs2);
	float col[16];
	if (vscale)
		memcpy(col, vscale, sizeof col);
	for (uint64_t fr = 0; fr < nf; fr++) {
		const uint8_t *s = src + fr * sstep;
		uint8_t *d = dst + fr * dstep;

		switch (cvt) {
		case ISA_CVT_S32:
			memcpy(v, s, FRAC_BYTES);
			if (in->relu)
				for (i = 0; i < FRAC_ELEMS; i++)
					v[i] = v[i] > 0 ? v[i] : 0;
			memcpy(d, v, FRAC_BYTES);
			continue;
		case ISA_CVT_DEQF16:
			memcpy(v, s, FRAC_BYTES);
			for (i = 0; i < FRAC_ELEMS; i++)
				f[i] = (float)v[i] * scale;
			break;
		case ISA_CVT_DEQV:
			memcpy(v, s, FRAC_BYTES);
			for (i = 0; i < FRAC_ELEMS; i++)
				f[i] = (float)v[i] * col[i % 16];
			break;
		default:
			memcpy(f, s, FRAC_BYTES);
			break;
		}
		if (in->relu)
			for (i = 0; i < FRAC_ELEMS; i++)
				f[i] = f[i] > 0.0f ? f[i] : 0.0f;
		if (cvt == ISA_CVT_NONE) {
			memcpy(d, f, FRAC_BYTES);
		} else {
			dv_f32_to_f16_n(f, h, FRAC_ELEMS);
			memcpy(d, h, FRAC_BYTES / 2);
		}
	}
	return 0;
}

/* --- vbrcb -------------------------------------------------------------------------- */

/* Broadcast elements to blocks: repeat r reads the 8 consecutive elements
 * at rs1 + 8r*size (s0b and s0r must keep their defaults) and fills dst
 * block i of the repeat (rd + r*dr*32 + i*db*32) with element i in every
 * lane.  A per-row scalar (a row's mean, say) becomes a block an ordinary
 * vector op can read with block and repeat stride 0.  The mask does not
 * apply.  Cost as an element-wise op: one 256-byte repeat. */
int exec_VBRCB(struct sim_core *c, const struct sim_qent *e, uint64_t now, struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	if (check_dtype(c, ISA_OP_VBRCB, in->dt, DT(F16) | DT(S16) | DT(F32) | DT(S32)) ||
	    check_rep(c, in->rep))
		return -1;
	if (in->s0b != 1 || in->s0r != 8)
		return sim_fail(c, "vbrcb reads consecutive elements: s0b and s0r must be left at "
				   "their defaults");
	/* db and dr are unsigned members no wider than 16 bits: always 0..MAX_STRIDE */
	unsigned es = in->dt == ISA_DT_F16 || in->dt == ISA_DT_S16 ? 2 : 4;
	uint64_t rep = (uint64_t)in->rep;
	uint64_t dspan = (rep - 1) * (uint64_t)in->dr * 32 + 7 * (uint64_t)in->db * 32 + 32;
	uint8_t *dst = sim_buf_at(c, SIM_BUF_UB, e->rd, dspan, "dst");
	uint8_t *src = dst ? sim_buf_at(c, SIM_BUF_UB, e->rs1, rep * 8 * es, "src") : NULL;
	if (!src)
		return -1;
	if (!c->dev->timing_only)
		for (uint64_t r = 0; r < rep; r++) {
			uint8_t v[8][4];
			for (unsigned i = 0; i < 8; i++)
				memcpy(v[i], src + (r * 8 + i) * es, es);
			for (unsigned i = 0; i < 8; i++) {
				uint8_t *d = dst + r * (uint64_t)in->dr * 32 + i * (uint64_t)in->db * 32;
				for (unsigned j = 0; j < 32 / es; j++)
					memcpy(d + j * es, v[i], es);
			}
		}
	c->st->vec_repeats += rep;
	return 0;
}

/* --- vtranspose -------------------------------------------------------------------- */

/* Each repeat transposes one 16x16 matrix of 2-byte elements: source row i
 * (16 elements, 32 bytes) at rs1 + r*s0r*32 + i*s0b*32, destination row i at
 * rd + r*dr*32 + i*db*32.  The mask does not apply (it moves whole rows);
 * dt must be f16 or s16.  It costs 512 bytes a repeat at the vector width (cost.c). */
int exec_VTRANSPOSE(struct sim_core *c, const struct sim_qent *e, uint64_t now,
		    struct sim_cost *cost)
{
	const struct isa_dec *in = e->in;
	if (in->dt != ISA_DT_F16 && in->dt != ISA_DT_S16)
		return sim_fail(c, "vtranspose moves 2-byte elements: dt=f16 or dt=s16");
	if (in->rep < 1 || in->rep > ISA_VEC_REP_MAX)
		return sim_fail(c, "rep must be 1..%lld", (long long)ISA_VEC_REP_MAX);
	uint64_t rep = (uint64_t)in->rep;
	uint64_t dspan = (rep - 1) * (uint64_t)in->dr * 32 + 15 * (uint64_t)in->db * 32 + 32;
	uint64_t sspan = (rep - 1) * (uint64_t)in->s0r * 32 + 15 * (uint64_t)in->s0b * 32 + 32;
	uint8_t *dst = sim_buf_at(c, SIM_BUF_UB, e->rd, dspan, "dst");
	uint8_t *src = dst ? sim_buf_at(c, SIM_BUF_UB, e->rs1, sspan, "src") : NULL;
	if (!src)
		return -1;
	if (!c->dev->timing_only)
		for (uint64_t r = 0; r < rep; r++) {
			uint16_t m[16][16];
			for (int i = 0; i < 16; i++) /* read all first: in place is defined */
				memcpy(m[i], src + r * (uint64_t)in->s0r * 32 +
						     (uint64_t)i * (uint64_t)in->s0b * 32, 32);
			for (int i = 0; i < 16; i++)
				for (int j = 0; j < 16; j++)
					memcpy(dst + r * (uint64_t)in->dr * 32 +
						       (uint64_t)i * (uint64_t)in->db * 32 + j * 2,
					       &m[j][i], 2);
		}
	c->st->vec_repeats += rep;
	return 0;
}
