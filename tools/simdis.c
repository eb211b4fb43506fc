/* simdis: disassemble raw ISA bytes (simas output); the listing
 * re-assembles to the same bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"

int main(int argc, char **argv)
{
	const char *in = NULL;
	int explain = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--explain") == 0)
			explain = 1;
		else if (strcmp(argv[i], "--isa") == 0)
			return isa_doc_markdown(stdout) ? 1 : 0;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: simdis [--explain] KERNEL.bin | simdis --isa\n"
			       "Disassemble davinci-sim kernel code; --explain adds each "
			       "instruction's synopsis.\n"
			       "--isa prints the instruction set reference (docs/isa.md).\n");
			return 0;
		} else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fprintf(stderr, "simdis: unexpected argument '%s' (try --help)\n", argv[i]);
			return 2;
		}
	}
	if (!in) {
		fprintf(stderr, "usage: simdis [--explain] KERNEL.bin\n");
		return 2;
	}
	FILE *f = fopen(in, "rb");
	if (!f) {
		fprintf(stderr, "simdis: %s: %s\n", in, strerror(errno));
		return 1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *b = realloc(buf, cap *= 2);
			if (!b)
				free(buf);
			buf = b;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "simdis: out of memory\n");
		return 1;
	}
	printf("# %s: %zu instructions\n", in, n / ISA_INSN_BYTES);
	int rc = isa_disasm_program(stdout, buf, n, explain);
	free(buf);
	if (rc)
		fprintf(stderr, "simdis: %s: contains invalid instructions (marked in the listing)\n",
			in);
	return rc ? 1 : 0;
}
