/* insn_args.h: one constructor per instruction format, generated from
 * isa/fields.def, so that no generator fills an instruction's fields by hand.
 *
 *   CC_I(p, VBIN, ISA_OP_VADD, .rd = rd, .rs1 = a, .rs2 = b, .dt = ISA_DT_F16, .rep = n);
 *
 * appends one instruction to program p: the named fields as given, every
 * other field of the format at its default (isa/fields.def, as the
 * assembler applies them).  The fields are the members of struct
 * cc_args_<format>, which has exactly the format's fields, so naming one the
 * format lacks is a compile error; an op of another format fails the
 * program (cc_emit_fmt).  Generators with a kernel builder call it as KG_I
 * (kern_gen.h); the builder's own layer (emit.c, kern_roll.c) and the
 * generators that still load their registers by hand (cc_li) call CC_I on
 * the program.
 *
 * The initializer evaluates its fields in no particular order (C11
 * 6.7.9p23): a field's value may call something with an effect on the
 * program (kg_reg) in one field at most.
 *
 * Defaults come first in the initializer and the caller's fields override
 * them, which -Woverride-init (in -Wextra) flags: the macro silences it for
 * its own statement only.  The defaults themselves are isa_dflt.h, written
 * at build time by isa/gen_dflt.c, since one macro cannot define another. */
#ifndef DV_INSN_ARGS_H
#define DV_INSN_ARGS_H

#include <stdint.h>

#include "isa.h"
#include "isa_dflt.h"

struct cc_prog;
/* cc_emit, checking that op is of format fmt (emit.c). */
struct isa_insn *cc_emit_fmt(struct cc_prog *p, int64_t op, enum isa_fmt fmt);

/* struct cc_args_<fmt>: the op and the format's fields, in fields.def's order.
 * (Each format closes the struct before it; the first is a placeholder.) */
struct cc_args_first_ {
	int unused_;
#define ISA_FORMAT(fmt, syn)                                                               \
	};                                                                                 \
	struct cc_args_##fmt {                                                             \
		int64_t op;
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) int64_t member;
#include "fields.def"
};

/* cc_put_<fmt>: emit a.op with a's fields (the same closing pattern). */
static inline void cc_put_first_(void)
{
#define ISA_FORMAT(fmt, syn)                                                               \
	}                                                                                  \
	static inline void cc_put_##fmt(struct cc_prog *p, struct cc_args_##fmt a)         \
	{                                                                                  \
		struct isa_insn *in = cc_emit_fmt(p, a.op, ISA_FMT_##fmt);                 \
		(void)in;
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) in->member = a.member;
#include "fields.def"
}

#define CC_OVERRIDE_INIT_BEGIN_                                                            \
	_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Woverride-init\"")
#define CC_OVERRIDE_INIT_END_ _Pragma("GCC diagnostic pop")

#define CC_I(p_, FMT, op_, ...)                                                            \
	do {                                                                               \
		CC_OVERRIDE_INIT_BEGIN_                                                    \
		cc_put_##FMT((p_), (struct cc_args_##FMT){ .op = (op_),                    \
							   ISA_DFLT_##FMT __VA_ARGS__ });  \
		CC_OVERRIDE_INIT_END_                                                      \
	} while (0)

#endif
