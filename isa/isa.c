/* isa.c: the instruction and format tables, encoder and decoder, all
 * generated from isa.def and fields.def. */
#include "isa.h"

#include <string.h>

const char *const isa_enum_pipe[] = { "s", "mte1", "mte2", "mte3", "m", "v", "all", NULL };
const char *const isa_enum_dtype[] = { "f16", "f32", "s32", "s16", "s8", "u8", NULL };
const char *const isa_enum_rnd[] = { "rne", "trunc", "floor", "ceil", "away", NULL };
const char *const isa_enum_cmp[] = { "eq", "ne", "lt", "le", "gt", "ge", NULL };
const char *const isa_enum_cvt[] = { "none", "f16", "s32", "deqf16", "deqv", NULL };
const char *const isa_enum_spr[] = { "block_idx", "block_dim", "core_id", NULL };

/* Each field's values must fit its member of struct isa_dec: unsigned
 * storage of at least width bits for R, K and E fields, signed storage of at
 * least width bits for I fields; and lie in one of the two 64-bit words,
 * which isa_decode reads a field from. */
enum {
#define ISA_MEMBER(member, bits, sgn, off)                                                      \
	DEC_BITS_##member = bits, DEC_SGN_##member = sgn, DEC_OFF_##member = off,
#include "fields.def"
};
#define DEC_SIGNED_R 0
#define DEC_SIGNED_K 0
#define DEC_SIGNED_E 0
#define DEC_SIGNED_I 1
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)                                   \
	_Static_assert(DEC_BITS_##member >= (width) && DEC_SGN_##member == DEC_SIGNED_##kind &&  \
			       DEC_BITS_##member == 8 * sizeof(((struct isa_dec *)0)->member),    \
		       #fmt "." #member ": struct isa_dec storage does not fit the field");      \
	_Static_assert((lsb) / 64 == ((lsb) + (width) - 1) / 64,                                 \
		       #fmt "." #member ": the field straddles the two words");
#include "fields.def"

/* Every member where fields.def puts it (an offset its type's alignment
 * would move fails here), inside the struct. */
#define ISA_MEMBER(member, bits, sgn, off)                                                      \
	_Static_assert(offsetof(struct isa_dec, member) == (off) &&                              \
			       (off) + (bits) / 8 <= ISA_DEC_BYTES,                               \
		       #member ": not at its fields.def offset");
#include "fields.def"
_Static_assert(sizeof(struct isa_dec) == ISA_DEC_BYTES, "struct isa_dec is not ISA_DEC_BYTES");

/* The members of one format must not share a byte, op's included.  Per
 * format, the sum of its members' byte masks equals their union only when
 * they are disjoint (a + b == (a | b) + (a & b)); a mask per half of the
 * struct, so that each fits an int. */
#define DEC_MASK(member, half)                                                                 \
	(DEC_OFF_##member / 16 == (half) ?                                                     \
		 ((1 << DEC_BITS_##member / 8) - 1) << DEC_OFF_##member % 16 : 0)
enum {
	DEC_SUM_FIRST_ = 0
#define ISA_FORMAT(fmt, syn) , DEC_SUM0_##fmt = 1
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) + DEC_MASK(member, 0)
#include "fields.def"
};
enum {
	DEC_OR_FIRST_ = 0
#define ISA_FORMAT(fmt, syn) , DEC_OR0_##fmt = 1
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) | DEC_MASK(member, 0)
#include "fields.def"
};
enum {
	DEC_SUM1_FIRST_ = 0
#define ISA_FORMAT(fmt, syn) , DEC_SUM1_##fmt = 0
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) + DEC_MASK(member, 1)
#include "fields.def"
};
enum {
	DEC_OR1_FIRST_ = 0
#define ISA_FORMAT(fmt, syn) , DEC_OR1_##fmt = 0
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) | DEC_MASK(member, 1)
#include "fields.def"
};
#define ISA_FORMAT(fmt, syn)                                                                   \
	_Static_assert((int)DEC_SUM0_##fmt == (int)DEC_OR0_##fmt &&                            \
			       (int)DEC_SUM1_##fmt == (int)DEC_OR1_##fmt,                             \
		       #fmt ": two of its members share a byte of struct isa_dec");
#include "fields.def"

/* The names of each E field's table, which isa_decode checks a value
 * against without walking the table. */
#define NNAMES_isa_enum_pipe (ISA_PIPE_ALL + 1)
#define NNAMES_isa_enum_dtype ISA_NDTYPES
#define NNAMES_isa_enum_rnd ISA_NRND
#define NNAMES_isa_enum_cmp ISA_NCMP
#define NNAMES_isa_enum_cvt ISA_NCVT
#define NNAMES_isa_enum_spr ISA_NSPR
#define NNAMES_OK(tab) _Static_assert(sizeof tab / sizeof tab[0] == NNAMES_##tab + 1, #tab);
NNAMES_OK(isa_enum_pipe) NNAMES_OK(isa_enum_dtype) NNAMES_OK(isa_enum_rnd)
NNAMES_OK(isa_enum_cmp) NNAMES_OK(isa_enum_cvt) NNAMES_OK(isa_enum_spr)
#undef NNAMES_OK
#define FIELD_MAX_R(width, tab) (ISA_NREGS - 1)
#define FIELD_MAX_K(width, tab) (UINT64_MAX >> (64 - (width)))
#define FIELD_MAX_E(width, tab) (NNAMES_##tab - 1)
#define FIELD_MAX_I(width, tab) 0 /* unused: every sign-extended value fits */

/* The plain limit names of isa.h stand for one field of several formats:
 * each must have the same width in all of them, or the name would promise
 * some format more than its field holds.  The vector formats are every
 * format with block (b) and repeat (r) strides; LOAD2D's rep is 16 bits and
 * has its own name. */
#define SAME_WIDTH(a, b) _Static_assert(ISA_MAX a == ISA_MAX b, #a " and " #b " differ in width");
#define REP(fmt) SAME_WIDTH((fmt, rep), (VBIN, rep))
#define BS(fmt, member) SAME_WIDTH((fmt, member), (VBIN, s0b))
#define RS(fmt, member) SAME_WIDTH((fmt, member), (VBIN, s0r))
REP(VBIN) BS(VBIN, db) BS(VBIN, s0b) BS(VBIN, s1b) RS(VBIN, dr) RS(VBIN, s0r) RS(VBIN, s1r)
REP(VUN) BS(VUN, db) BS(VUN, s0b) RS(VUN, dr) RS(VUN, s0r)
REP(VSCAL) BS(VSCAL, db) BS(VSCAL, s0b) RS(VSCAL, dr) RS(VSCAL, s0r)
REP(VDUP) BS(VDUP, db) RS(VDUP, dr)
REP(VCONV) BS(VCONV, db) BS(VCONV, s0b) RS(VCONV, dr) RS(VCONV, s0r)
REP(VBINC) BS(VBINC, db) BS(VBINC, s0b) BS(VBINC, s1b) RS(VBINC, dr) RS(VBINC, s0r)
RS(VBINC, s1r)
REP(VRED) BS(VRED, s0b) RS(VRED, s0r)
REP(VCMP) BS(VCMP, s0b) BS(VCMP, s1b) RS(VCMP, s0r) RS(VCMP, s1r)
REP(VSEL) BS(VSEL, db) BS(VSEL, s0b) BS(VSEL, s1b) RS(VSEL, dr) RS(VSEL, s0r) RS(VSEL, s1r)
SAME_WIDTH((DMA, dgap), (DMA, sgap))
#undef REP
#undef BS
#undef RS

/* One array of fields per format, each closed by a NULL-named sentinel:
 * ISA_FORMAT closes the previous array and opens its own. */
__attribute__((unused)) static const struct isa_field fields_unused_[] = {
#define ISA_FORMAT(fmt, syn) { NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL } }; \
	static const struct isa_field fields_##fmt[] = {
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)                                   \
	{ #member, offsetof(struct isa_insn, member), offsetof(struct isa_dec, member),          \
	  sizeof(((struct isa_dec *)0)->member), FIELD_MAX_##kind(width, tab), #kind[0], lsb,      \
	  width, dflt, tab },
#include "fields.def"
	{ NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL }
};

const struct isa_format isa_formats[ISA_NFMTS] = {
#define ISA_FORMAT(fmt, syn) \
	[ISA_FMT_##fmt] = { #fmt, syn, fields_##fmt, sizeof fields_##fmt / sizeof fields_##fmt[0] - 1 },
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)
#include "fields.def"
};

/* Per format, an instruction with its keyword fields at their defaults (the
 * assembler's), the rest zero: what a generator starts each instruction from. */
__attribute__((unused)) static const struct isa_insn dflt_unused_ = {
#define ISA_FORMAT(fmt, syn) }; static const struct isa_insn dflt_##fmt = {
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) .member = (dflt) == ISA_REQ ? 0 : (dflt),
#include "fields.def"
};

const struct isa_insn *const isa_fmt_defaults[ISA_NFMTS] = {
#define ISA_FORMAT(fmt, syn) [ISA_FMT_##fmt] = &dflt_##fmt,
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)
#include "fields.def"
};

const struct isa_info isa_table[ISA_NOPS] = {
#define ISA_INSN(id, mn, opc, fmt, pipe, flags, syn) \
	[opc] = { mn, ISA_FMT_##fmt, ISA_PIPE_##pipe, flags, syn },
#include "isa.def"
};

unsigned isa_dtype_size(enum isa_dtype dt)
{
	static const unsigned size[ISA_NDTYPES] = { 2, 4, 4, 2, 1, 1 };
	return (unsigned)dt < ISA_NDTYPES ? size[dt] : 0;
}

const char *isa_pipe_name(enum isa_pipe p)
{
	static const char *const names[] = { "S", "MTE1", "MTE2", "MTE3", "M", "V", "ALL", "SYNC" };
	return (unsigned)p <= ISA_PIPE_SYNC ? names[p] : "?";
}

enum isa_op isa_lookup(const char *mn)
{
	for (unsigned op = 0; op < ISA_NOPS; op++)
		if (isa_table[op].mnemonic && strcmp(isa_table[op].mnemonic, mn) == 0)
			return (enum isa_op)op;
	return ISA_OP_INVALID;
}

static void put_bits(uint64_t w[2], unsigned lsb, unsigned width, uint64_t v)
{
	uint64_t mask = width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
	v &= mask;
	if (lsb >= 64) {
		w[1] = (w[1] & ~(mask << (lsb - 64))) | v << (lsb - 64);
	} else if (lsb + width <= 64) {
		w[0] = (w[0] & ~(mask << lsb)) | v << lsb;
	} else {
		w[0] = (w[0] & ~(mask << lsb)) | v << lsb;
		unsigned hi = lsb + width - 64;
		uint64_t hmask = (UINT64_C(1) << hi) - 1;
		w[1] = (w[1] & ~hmask) | (v >> (64 - lsb));
	}
}

static void store_le(uint8_t out[ISA_INSN_BYTES], const uint64_t w[2])
{
	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)(w[i / 8] >> (8 * (i % 8)));
}

static void load_le(const uint8_t in[ISA_INSN_BYTES], uint64_t w[2])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(w, in, ISA_INSN_BYTES); /* the encoding's own byte order: one load */
#else
	w[0] = w[1] = 0;
	for (int i = 0; i < 16; i++)
		w[i / 8] |= (uint64_t)in[i] << (8 * (i % 8));
#endif
}

/* Does v fit the field?  I fields are signed, the rest unsigned up to the
 * field's max (its width, register file or name table). */
static int field_fits(const struct isa_field *f, int64_t v)
{
	if (f->width == 64)
		return 1;
	if (f->kind == ISA_FK_I) {
		int64_t lo = -(INT64_C(1) << (f->width - 1)), hi = (INT64_C(1) << (f->width - 1)) - 1;
		return v >= lo && v <= hi;
	}
	return v >= 0 && (uint64_t)v <= f->max;
}

/* The bits each format's fields (and the opcode) cover, per word: decoding
 * checks the rest are zero in two tests instead of rebuilding the mask field
 * by field.  Index fmt + 1, so that every format's entry opens with a comma
 * after the unused [0]. */
#define WORD_MASK(word, lsb, width)                                                            \
	((lsb) / 64 == (word) ? (UINT64_MAX >> (64 - (width))) << (lsb) % 64 : 0)
static const uint64_t fmt_used[2][ISA_NFMTS + 1] = {
	{ 0
#define ISA_FORMAT(fmt, syn) , [ISA_FMT_##fmt + 1] = 0xff
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) | WORD_MASK(0, lsb, width)
#include "fields.def"
	},
	{ 0
#define ISA_FORMAT(fmt, syn) , [ISA_FMT_##fmt + 1] = 0
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) | WORD_MASK(1, lsb, width)
#include "fields.def"
	},
};

int isa_encode(const struct isa_insn *in, uint8_t out[ISA_INSN_BYTES], char *err, size_t errlen)
{
	const struct isa_info *info = isa_info((unsigned)in->op);
	if (!info) {
		if (err)
			snprintf(err, errlen, "unknown opcode 0x%02llx", (unsigned long long)in->op);
		return -1;
	}
	const struct isa_format *fmt = &isa_formats[info->fmt];
	uint64_t w[2] = { (uint64_t)in->op, 0 };
	for (unsigned i = 0; i < fmt->nfields; i++) {
		const struct isa_field *f = &fmt->fields[i];
		int64_t v = isa_field_get(in, f);
		if (!field_fits(f, v)) {
			if (err)
				snprintf(err, errlen, "%s: operand %s=%lld does not fit its %u-bit field",
					 info->mnemonic, f->name, (long long)v, f->width);
			return -1;
		}
		put_bits(w, f->lsb, f->width, (uint64_t)v);
	}
	store_le(out, w);
	return 0;
}

/* Each format's fields as straight-line code with constant positions (a
 * field lies in one word: checked above): the decoder runs for every
 * instruction of every kernel loaded, a million for ResNet-50.  Only E fields
 * can hold a value their member takes but the field does not (R fields are
 * 5 bits, K fields fit by width); I fields sign-extend. */
#define FIELD_BITS(w, lsb, width) ((w)[(lsb) / 64] >> (lsb) % 64 & (UINT64_MAX >> (64 - (width))))
#define DEC_R(dst, w, lsb, width, tab) dst = (uint8_t)FIELD_BITS(w, lsb, width);
#define DEC_K(dst, w, lsb, width, tab) dst = FIELD_BITS(w, lsb, width);
#define DEC_E(dst, w, lsb, width, tab)                                                          \
	{                                                                                       \
		uint64_t v_ = FIELD_BITS(w, lsb, width);                                        \
		if (v_ >= NNAMES_##tab)                                                         \
			return -1; /* e.g. an enum value past its name table */                 \
		dst = (uint8_t)v_;                                                              \
	}
#define DEC_I(dst, w, lsb, width, tab)                                                          \
	{                                                                                       \
		uint64_t m_ = UINT64_C(1) << ((width) - 1);                                     \
		dst = (int64_t)((FIELD_BITS(w, lsb, width) ^ m_) - m_);                         \
	}
_Static_assert(ISA_NREGS == 32, "R fields are 5 bits: every value names a register");
#define REG_FIELD_OK_R(width) ((width) == 5)
#define REG_FIELD_OK_K(width) 1
#define REG_FIELD_OK_E(width) 1
#define REG_FIELD_OK_I(width) 1
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)                                   \
	_Static_assert(REG_FIELD_OK_##kind(width), #fmt "." #member ": not a 5-bit register");
#include "fields.def"

static int decode_fields(enum isa_fmt fmt, const uint64_t w[2], struct isa_dec *out)
{
	switch (fmt) {
	default:
		return -1;
#define ISA_FORMAT(fmt, syn)                                                                   \
	return 0;                                                                              \
	case ISA_FMT_##fmt:
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) DEC_##kind(out->member, w, lsb, width, tab)
#include "fields.def"
		return 0;
	}
}

int isa_decode(const uint8_t bytes[ISA_INSN_BYTES], struct isa_dec *out)
{
	uint64_t w[2];
	load_le(bytes, w);
	memset(out, 0, sizeof *out);
	out->op = (uint8_t)(w[0] & 0xff);
	const struct isa_info *info = isa_info(out->op);
	if (!info)
		return -1;
	/* Bits outside every field must be zero: the encoding is canonical. */
	if ((w[0] & ~fmt_used[0][info->fmt + 1]) | (w[1] & ~fmt_used[1][info->fmt + 1]))
		return -1;
	return decode_fields(info->fmt, w, out);
}
