/* gen_dflt.c: writes isa_dflt.h, the defaults of every format's keyword
 * fields as designated initializers, for the compiler's instruction
 * constructors (compiler/insn_args.h):
 *
 *   #define ISA_DFLT_VBIN .rep = 1, .db = 1, ..., .s1r = 8,
 *
 * A macro cannot be defined by expanding another, so this one fact of
 * fields.def is written out by a program at build time (like the protobuf
 * code, nothing generated is committed).  Only defaults other than 0 have
 * an entry: a constructor leaves any other field the caller omits 0 (a
 * required one too), as cc_emit always did. */
#include <stdio.h>

#include "isa.h"

int main(void)
{
	printf("/* isa_dflt.h: generated from isa/fields.def by isa/gen_dflt.c; do not edit. */\n"
	       "#ifndef DV_ISA_DFLT_H\n#define DV_ISA_DFLT_H\n");
#define ISA_FORMAT(fmt, syn) printf("\n#define ISA_DFLT_%s", #fmt);
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab)                                \
	if ((dflt) != ISA_REQ && (dflt) != 0)                                              \
		printf(" .%s = %lld,", #member, (long long)(dflt));
#include "fields.def"
	printf("\n\n#endif\n");
	return ferror(stdout) ? 1 : 0;
}
