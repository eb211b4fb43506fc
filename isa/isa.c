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
 * least width bits for I fields. */
enum {
#define ISA_MEMBER(member, bits, sgn) DEC_BITS_##member = bits, DEC_SGN_##member = sgn,
#include "fields.def"
};
#define DEC_SIGNED_R 0
#define DEC_SIGNED_K 0
#define DEC_SIGNED_E 0
#define DEC_SIGNED_I 1
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)                                   \
	_Static_assert(DEC_BITS_##member >= (width) && DEC_SGN_##member == DEC_SIGNED_##kind &&  \
			       DEC_BITS_##member == 8 * sizeof(((struct isa_dec *)0)->member),    \
		       #fmt "." #member ": struct isa_dec storage does not fit the field");
#include "fields.def"

/* No padding in struct isa_dec: the members are listed widest first. */
enum {
	DEC_PAYLOAD = 0
#define ISA_MEMBER(member, bits, sgn) + (bits) / 8
#include "fields.def"
};
_Static_assert(sizeof(struct isa_dec) == (DEC_PAYLOAD + 7) / 8 * 8, "struct isa_dec is padded");

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
#define ISA_FORMAT(fmt, syn) { NULL, 0, 0, 0, 0, 0, 0, 0, NULL } }; \
	static const struct isa_field fields_##fmt[] = {
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)                                   \
	{ #member, offsetof(struct isa_insn, member), offsetof(struct isa_dec, member),          \
	  sizeof(((struct isa_dec *)0)->member), #kind[0], lsb, width, dflt, tab },
#include "fields.def"
	{ NULL, 0, 0, 0, 0, 0, 0, 0, NULL }
};

const struct isa_format isa_formats[ISA_NFMTS] = {
#define ISA_FORMAT(fmt, syn) \
	[ISA_FMT_##fmt] = { #fmt, syn, fields_##fmt, sizeof fields_##fmt / sizeof fields_##fmt[0] - 1 },
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

static uint64_t get_bits(const uint64_t w[2], unsigned lsb, unsigned width)
{
	uint64_t v;
	if (lsb >= 64)
		v = w[1] >> (lsb - 64);
	else if (lsb + width <= 64)
		v = w[0] >> lsb;
	else
		v = (w[0] >> lsb) | (w[1] << (64 - lsb));
	return width == 64 ? v : v & ((UINT64_C(1) << width) - 1);
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
	w[0] = w[1] = 0;
	for (int i = 0; i < 16; i++)
		w[i / 8] |= (uint64_t)in[i] << (8 * (i % 8));
}

/* Does v fit the field?  I fields are signed, the rest unsigned. */
static int field_fits(const struct isa_field *f, int64_t v)
{
	if (f->width == 64)
		return 1;
	if (f->kind == ISA_FK_I) {
		int64_t lo = -(INT64_C(1) << (f->width - 1)), hi = (INT64_C(1) << (f->width - 1)) - 1;
		return v >= lo && v <= hi;
	}
	if (v < 0)
		return 0;
	if (f->kind == ISA_FK_E) {
		unsigned n = 0;
		while (f->names[n])
			n++;
		return v < (int64_t)n;
	}
	if (f->kind == ISA_FK_R)
		return v < ISA_NREGS;
	return (uint64_t)v < (UINT64_C(1) << f->width);
}

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

int isa_decode(const uint8_t bytes[ISA_INSN_BYTES], struct isa_dec *out)
{
	uint64_t w[2];
	load_le(bytes, w);
	memset(out, 0, sizeof *out);
	out->op = (uint8_t)(w[0] & 0xff);
	const struct isa_info *info = isa_info(out->op);
	if (!info)
		return -1;
	const struct isa_format *fmt = &isa_formats[info->fmt];
	uint64_t used[2] = { 0xff, 0 };
	for (unsigned i = 0; i < fmt->nfields; i++) {
		const struct isa_field *f = &fmt->fields[i];
		uint64_t v = get_bits(w, f->lsb, f->width);
		int64_t sv = (int64_t)v;
		if (f->kind == ISA_FK_I && f->width < 64 && (v >> (f->width - 1)) & 1)
			sv = (int64_t)(v | ~((UINT64_C(1) << f->width) - 1));
		if (!field_fits(f, sv))
			return -1; /* e.g. an enum value past its name table */
		isa_dec_set(out, f, sv); /* exact: the member is wide enough (checked above) */
		put_bits(used, f->lsb, f->width, ~UINT64_C(0));
	}
	/* Bits outside every field must be zero: the encoding is canonical. */
	if ((w[0] & ~used[0]) || (w[1] & ~used[1]))
		return -1;
	return 0;
}
