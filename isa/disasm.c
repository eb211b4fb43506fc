/* disasm.c: instruction text from the tables.  The output is valid assembler
 * input: every field is printed, so a listing re-assembles to the same bytes. */
#include "isa.h"

#include <string.h>

void isa_disasm(const struct isa_insn *in, char *buf, size_t len)
{
	const struct isa_info *info = isa_info((unsigned)in->op);
	if (!info) {
		snprintf(buf, len, "<invalid opcode 0x%02llx>", (unsigned long long)in->op);
		return;
	}
	const struct isa_format *fmt = &isa_formats[info->fmt];
	size_t n = (size_t)snprintf(buf, len, "%s", info->mnemonic);
	for (unsigned i = 0; i < fmt->nfields && n < len; i++) {
		const struct isa_field *f = &fmt->fields[i];
		int64_t v = isa_field_get(in, f);
		const char *sep = i ? ", " : " ";
		switch (f->kind) {
		case ISA_FK_R:
			n += (size_t)snprintf(buf + n, len - n, "%sx%lld", sep, (long long)v);
			break;
		case ISA_FK_I:
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", sep, (long long)v);
			break;
		case ISA_FK_K:
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", sep, f->name, (long long)v);
			break;
		default: {
			int64_t nn = 0; /* hand-built instructions may hold any value */
			while (f->names[nn])
				nn++;
			if (v >= 0 && v < nn)
				n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", sep, f->name,
						      f->names[v]);
			else
				n += (size_t)snprintf(buf + n, len - n, "%s%s=<%lld>", sep, f->name,
						      (long long)v);
			break;
		}
		}
	}
}

int isa_disasm_program(FILE *f, const uint8_t *code, size_t bytes, int explain)
{
	int bad = 0;
	char text[256];
	for (size_t pc = 0; pc * ISA_INSN_BYTES < bytes; pc++) {
		struct isa_insn in;
		const uint8_t *p = code + pc * ISA_INSN_BYTES;
		if (bytes - pc * ISA_INSN_BYTES < ISA_INSN_BYTES) {
			fprintf(f, "\t# pc %zu: truncated instruction (%zu bytes)\n", pc,
				bytes - pc * ISA_INSN_BYTES);
			bad = 1;
			break;
		}
		if (isa_decode(p, &in) != 0) {
			fprintf(f, "\t# pc %zu: invalid instruction", pc);
			for (int i = 0; i < ISA_INSN_BYTES; i++)
				fprintf(f, " %02x", p[i]);
			fputc('\n', f);
			bad = 1;
			continue;
		}
		isa_disasm(&in, text, sizeof text);
		if (explain)
			fprintf(f, "\t%-60s # %4zu: %s\n", text, pc, isa_table[in.op].synopsis);
		else
			fprintf(f, "\t%-60s # %4zu\n", text, pc);
	}
	return bad ? -1 : 0;
}
