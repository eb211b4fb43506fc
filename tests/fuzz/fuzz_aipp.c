/* fuzz_aipp.c: libFuzzer harness for the AIPP config parser and its checks
 * (compiler/aipp_conf.c), against a 3x224x224 input. */
#include <stdlib.h>
#include <string.h>

#include "aipp_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aipp_conf ops[4];
	char err[1024];
	int n = 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (aipp_conf_parse_text("fuzz.cfg", text, ops, 4, &n, err, sizeof err) == 0)
		for (int i = 0; i < n; i++)
			(void)aipp_conf_resolve(&ops[i], "fuzz.cfg", 3, 224, 224, err, sizeof err);
	free(text);
	return 0;
}
