/* simas: assemble a kernel to raw ISA bytes. */
#include <stdio.h>
#include <string.h>

#include "isa.h"
#include "version.h"

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simas"))
		return 0;
	const char *in = NULL, *out = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: simas KERNEL.s -o KERNEL.bin\n"
			       "Assemble a davinci-sim kernel into raw 16-byte instructions.\n");
			return 0;
		} else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fprintf(stderr, "simas: unexpected argument '%s' (try --help)\n", argv[i]);
			return 2;
		}
	}
	if (!in || !out) {
		fprintf(stderr, "usage: simas KERNEL.s -o KERNEL.bin\n");
		return 2;
	}
	struct isa_program prog;
	char err[512];
	if (isa_assemble_file(in, &prog, err, sizeof err)) {
		fprintf(stderr, "simas: %s\n", err);
		return 1;
	}
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(prog.code, ISA_INSN_BYTES, prog.ninsns, f) != prog.ninsns ||
	    fclose(f) != 0) {
		fprintf(stderr, "simas: %s: cannot write\n", out);
		isa_program_free(&prog);
		return 1;
	}
	isa_program_free(&prog);
	return 0;
}
