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
/* mov.l0c.ub conversions: f32 copy, f32->f16, s32 copy, s32 * scale -> f16 */
enum isa_cvt { ISA_CVT_NONE, ISA_CVT_F16, ISA_CVT_S32, ISA_CVT_DEQF16, ISA_NCVT };
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

/* A decoded instruction: one member per field name used in fields.def.
 * Members a format does not use are zero. */
struct isa_insn {
	int64_t op;
	int64_t rd, rs1, rs2, rs3, imm, spr;
	int64_t nburst, len, sgap, dgap;
	int64_t rep, sstride, dstride, trans;
	int64_t fh, fw, pt, pb, pl, pr;
	int64_t kh, kw, sh, sw, dh, dw, mcnt, k1cnt;
	int64_t m, k, n, init, dt, st, rnd, cmp, cvt, relu, nfrac;
	int64_t db, s0b, s1b, dr, s0r, s1r;
	int64_t src, dst, ev, pipe;
};

struct isa_field {
	const char *name;
	size_t offset; /* of the int64_t member in struct isa_insn */
	char kind;     /* enum isa_field_kind */
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

static inline int64_t *isa_field_ptr(struct isa_insn *in, const struct isa_field *f)
{
	return (int64_t *)(void *)((char *)in + f->offset);
}

static inline int64_t isa_field_get(const struct isa_insn *in, const struct isa_field *f)
{
	return *(const int64_t *)(const void *)((const char *)in + f->offset);
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
int isa_decode(const uint8_t in[ISA_INSN_BYTES], struct isa_insn *out);

/* Disassemble one instruction into buf ("mnemonic operands"). */
void isa_disasm(const struct isa_insn *in, char *buf, size_t len);
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
