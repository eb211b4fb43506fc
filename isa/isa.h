/* isa.h: the davinci-sim ISA as C data, generated from isa/isa.def and
 * isa/fields.def.
 *
 * Encoding: every instruction is ISA_INSN_BYTES (16) bytes, two 64-bit
 * little-endian words w0 | w1 << 64, whatever the host byte order.
 *
 *   127                  64 63                    8 7      0
 *   +---------------------+------------------------+--------+
 *   |   format fields     |    format fields       | opcode |
 *   +---------------------+------------------------+--------+
 *
 * The bit position of each field is in isa/fields.def; the table checks
 * itself in tests/check_isa.c (fields fit, no overlaps, no duplicate opcode).
 */
#ifndef DV_ISA_H
#define DV_ISA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ISA_INSN_BYTES 16
#define ISA_NREGS 32 /* x0..x31; x0 reads as zero */
#define ISA_REQ (-1) /* the field has no default: the assembler requires it */
#define ISA_MAX_FIELDS 16

enum isa_flag {
	ISA_F_BRANCH = 1 << 0,
	ISA_F_END = 1 << 1,
	ISA_F_COMPLEX = 1 << 2,
	ISA_F_BINARY = 1 << 3,
};

/* Pipes, in the order the statistics and traces print them. */
enum isa_pipe { ISA_PIPE_S, ISA_PIPE_MTE1, ISA_PIPE_MTE2, ISA_PIPE_MTE3, ISA_PIPE_M, ISA_PIPE_V,
		ISA_PIPE_ALL, ISA_PIPE_SYNC };
#define ISA_NPIPES 6 /* S..V: the real queues */

enum isa_dtype { ISA_DT_F16, ISA_DT_F32, ISA_DT_S32, ISA_DT_S16, ISA_DT_S8, ISA_DT_U8, ISA_NDTYPES };
enum isa_rnd { ISA_RND_RNE, ISA_RND_TRUNC, ISA_RND_FLOOR, ISA_RND_CEIL, ISA_RND_AWAY, ISA_NRND };
enum isa_cmp { ISA_CMP_EQ, ISA_CMP_NE, ISA_CMP_LT, ISA_CMP_LE, ISA_CMP_GT, ISA_CMP_GE, ISA_NCMP };
/* mov.l0c.ub conversions: f32 copy, f32->f16, s32 copy, s32 * scale -> f16, s32 * a
 * per-column scale vector -> f16 */
enum isa_cvt { ISA_CVT_NONE, ISA_CVT_F16, ISA_CVT_S32, ISA_CVT_DEQF16, ISA_CVT_DEQV, ISA_NCVT };
enum isa_spr { ISA_SPR_BLOCK_IDX, ISA_SPR_BLOCK_DIM, ISA_SPR_CORE_ID, ISA_NSPR };

/* Name tables for enum (E) fields; NULL-terminated. */
extern const char *const isa_enum_pipe[];
extern const char *const isa_enum_dtype[];
extern const char *const isa_enum_rnd[];
extern const char *const isa_enum_cmp[];
extern const char *const isa_enum_cvt[];
extern const char *const isa_enum_spr[];

enum isa_op {
	ISA_OP_INVALID = 0,
#define ISA_INSN(id, mn, opc, fmt, pipe, flags, syn) ISA_OP_##id = opc,
#include "isa.def"
	ISA_NOPS = 256
};

enum isa_fmt {
#define ISA_FORMAT(fmt, syn) ISA_FMT_##fmt,
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)
#include "fields.def"
	ISA_NFMTS
};

enum isa_field_kind { ISA_FK_R = 'R', ISA_FK_I = 'I', ISA_FK_K = 'K', ISA_FK_E = 'E' };

/* Encodable limits, generated from fields.def so that a generator's bound
 * is the field's width and cannot drift from it: ISA_MAX(fmt, member) is
 * the largest value isa_encode accepts in a K (unsigned) or I (signed)
 * field, ISA_MIN(fmt, member) the smallest (0 for K fields); e.g.
 * ISA_MAX(VBIN, rep) is 255, ISA_MIN(BR, imm) is -2^31.  R and E fields
 * are bounded by ISA_NREGS and their name tables instead, so they have no
 * entry (naming one is a compile error).
 *
 * These are int64_t constant expressions over an enum of magnitude bits
 * (the width, less the sign bit of I fields) rather than an enum of the
 * limits themselves: a C11 enumerator must fit an int, and the 32-bit gaps
 * and 64-bit immediates do not. */
#define ISA_LIM_R(fmt, member, width)
#define ISA_LIM_E(fmt, member, width)
#define ISA_LIM_K(fmt, member, width)                                                      \
	ISA_VBITS_##fmt##_##member = (width), ISA_SGN_##fmt##_##member = 0,
#define ISA_LIM_I(fmt, member, width)                                                      \
	ISA_VBITS_##fmt##_##member = (width) - 1, ISA_SGN_##fmt##_##member = 1,
enum isa_field_limit {
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) ISA_LIM_##kind(fmt, member, width)
#include "fields.def"
	ISA_LIM_END_
};
#undef ISA_LIM_R
#undef ISA_LIM_E
#undef ISA_LIM_K
#undef ISA_LIM_I
#define ISA_MAX(fmt, member) ((int64_t)(UINT64_MAX >> (64 - ISA_VBITS_##fmt##_##member)))
#define ISA_MIN(fmt, member) (ISA_SGN_##fmt##_##member ? -ISA_MAX(fmt, member) - 1 : INT64_C(0))

/* The limits the compiler and simulator use by a plain name.  Where one
 * name stands for a field of several formats, isa.c checks at compile time
 * that they all have the same width. */
#define ISA_VEC_REP_MAX ISA_MAX(VBIN, rep)         /* repeats of a vector instruction */
#define ISA_VEC_BSTRIDE_MAX ISA_MAX(VBIN, s0b)     /* vector block strides db, s0b, s1b */
#define ISA_VEC_RSTRIDE_MAX ISA_MAX(VBIN, s0r)     /* vector repeat strides dr, s0r, s1r */
#define ISA_DMA_NBURST_MAX ISA_MAX(DMA, nburst)    /* bursts of a DMA */
#define ISA_DMA_LEN_MAX ISA_MAX(DMA, len)          /* 32-byte blocks in a DMA burst */
#define ISA_DMA_GAP_MAX ISA_MAX(DMA, sgap)         /* DMA sgap and dgap, in blocks */
#define ISA_LOAD2D_REP_MAX ISA_MAX(LOAD2D, rep)    /* fractals of a load2d */

/* The operands of one instruction, in two forms with the same member names
 * (op and one per ISA_MEMBER in fields.def).
 *
 * struct isa_insn is the form builders fill in (the compiler's kernel
 * generators, the assembler) and isa_encode reads: every member is int64_t,
 * so whatever a generator computes reaches isa_encode's range check intact
 * and a value that does not fit is rejected naming the field, never
 * truncated on the way.  Builders hold one or a few at a time.  Members a
 * format does not use are 0.
 *
 * struct isa_dec is the decoded form isa_decode writes and the simulator
 * holds one of per instruction of a loaded kernel: each member only as wide
 * as its widest field, which isa_decode always fills exactly since it only
 * accepts values that fit their field, at the byte offset fields.def gives
 * it, where members of formats that never meet share bytes (24 bytes where
 * one member after another took 88).  So a member the instruction's format
 * lacks may read as another format's operand: only op, the registers and dt
 * and, for a vector instruction, the vector operands are 0 when the format
 * lacks them (fields.def). */
#define ISA_CT_64_1 int64_t
#define ISA_CT_32_0 uint32_t
#define ISA_CT_16_0 uint16_t
#define ISA_CT_8_0 uint8_t
struct isa_insn {
	int64_t op;
#define ISA_MEMBER(member, bits, sgn, off) int64_t member;
#include "fields.def"
};

/* Each member in a struct of its own that pads it to its offset; op, at 0,
 * needs no pad (C has no empty arrays). */
#define ISA_DEC_BYTES 24
struct isa_dec {
	union {
		uint8_t op;
#define ISA_MEMBER(member, bits, sgn, off)                                                        \
	struct {                                                                                   \
		uint8_t pad_##member[off];                                                         \
		ISA_CT_##bits##_##sgn member;                                                      \
	};
#include "fields.def"
		uint8_t bytes_[ISA_DEC_BYTES];
	};
};

struct isa_field {
	const char *name;
	size_t offset;     /* of the int64_t member in struct isa_insn */
	size_t dec_offset; /* of the member in struct isa_dec */
	unsigned char dec_size; /* its bytes: 1, 2, 4 or 8 */
	uint64_t max; /* the largest value of an R, K or E field (its register file,
		       * width or name table), which isa_decode checks */
	char kind;         /* enum isa_field_kind */
	unsigned lsb, width;
	int64_t dflt; /* ISA_REQ: required */
	const char *const *names; /* E fields */
};

struct isa_format {
	const char *name, *synopsis;
	const struct isa_field *fields;
	unsigned nfields;
};

struct isa_info {
	const char *mnemonic; /* NULL: opcode unused */
	enum isa_fmt fmt;
	enum isa_pipe pipe;
	unsigned flags;
	const char *synopsis;
};

extern const struct isa_info isa_table[ISA_NOPS];
extern const struct isa_format isa_formats[ISA_NFMTS];

static inline const struct isa_info *isa_info(unsigned op)
{
	return op < ISA_NOPS && isa_table[op].mnemonic ? &isa_table[op] : NULL;
}

static inline int64_t isa_field_get(const struct isa_insn *in, const struct isa_field *f)
{
	int64_t v;
	memcpy(&v, (const char *)in + f->offset, sizeof v);
	return v;
}

/* Per format: an instruction with every keyword field at its default. */
extern const struct isa_insn *const isa_fmt_defaults[ISA_NFMTS];

static inline void isa_field_set(struct isa_insn *in, const struct isa_field *f, int64_t v)
{
	memcpy((char *)in + f->offset, &v, sizeof v);
}

/* A decoded field, at its member's size.  Only 64-bit members may be
 * signed (there is no ISA_CT_32_1 etc.), so the size says the signedness. */
static inline int64_t isa_dec_get(const struct isa_dec *in, const struct isa_field *f)
{
	const char *p = (const char *)in + f->dec_offset;
	switch (f->dec_size) {
	case 1: return *(const uint8_t *)(const void *)p;
	case 2: return *(const uint16_t *)(const void *)p;
	case 4: return *(const uint32_t *)(const void *)p;
	default: return *(const int64_t *)(const void *)p;
	}
}

/* The caller has checked that v fits the field (isa_decode does). */
static inline void isa_dec_set(struct isa_dec *in, const struct isa_field *f, int64_t v)
{
	char *p = (char *)in + f->dec_offset;
	switch (f->dec_size) {
	case 1: *(uint8_t *)(void *)p = (uint8_t)v; break;
	case 2: *(uint16_t *)(void *)p = (uint16_t)v; break;
	case 4: *(uint32_t *)(void *)p = (uint32_t)v; break;
	default: *(int64_t *)(void *)p = v; break;
	}
}

/* Element size in bytes of a dtype. */
unsigned isa_dtype_size(enum isa_dtype dt);
const char *isa_pipe_name(enum isa_pipe p);

/* Look an opcode up by mnemonic; returns ISA_OP_INVALID when unknown. */
enum isa_op isa_lookup(const char *mnemonic);

/* Encode in->op with its format's fields; returns 0, or -1 when a field
 * does not fit (err, when not NULL, receives a message naming it). */
int isa_encode(const struct isa_insn *in, uint8_t out[ISA_INSN_BYTES], char *err, size_t errlen);
/* Decode; returns 0, or -1 for an unknown opcode or bits set outside
 * every field of the format. */
int isa_decode(const uint8_t in[ISA_INSN_BYTES], struct isa_dec *out);

/* Disassemble one instruction into buf ("mnemonic operands"). */
void isa_disasm(const struct isa_dec *in, char *buf, size_t len);
/* Disassemble a whole program, one line per instruction with its pc. */
int isa_disasm_program(FILE *f, const uint8_t *code, size_t bytes, int explain);

/* Write the instruction set reference as Markdown (docs/isa.md). */
int isa_doc_markdown(FILE *f);

/* Assemble a text program.  Errors are written to err as
 * "file:line:column: message" and -1 is returned. */
struct isa_program {
	uint8_t *code;
	size_t ninsns;
};
int isa_assemble(const char *text, const char *filename, struct isa_program *out, char *err,
		 size_t errlen);
int isa_assemble_file(const char *path, struct isa_program *out, char *err, size_t errlen);
void isa_program_free(struct isa_program *p);

#endif
