/* fuzz_asm.c: libFuzzer harness for the text assembler (isa/asm.c): any
 * bytes as a source file must assemble or fail with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[512];
	struct isa_program p;
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (isa_assemble(text, "fuzz.s", &p, err, sizeof err) == 0)
		isa_program_free(&p);
	free(text);
	return 0;
}
