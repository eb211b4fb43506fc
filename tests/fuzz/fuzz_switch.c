/* fuzz_switch.c: libFuzzer harness for the --fusion_switch_file parser
 * (compiler/fusion_switch.c), on the input as the file's text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fusion_switch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int on[SW_N];
	char err[1024];
	if (size > CC_SWITCH_MAX)
		return 0; /* cc_fusion_switch_read refuses it before parsing */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	(void)cc_fusion_switch_parse("fuzz.json", text, on, err, sizeof err);
	free(text);
	return 0;
}
