/* fuzz_soc.c: libFuzzer harness for the SoC ini parser and --set (sim/soc.c):
 * the input as an ini file, and each of its lines as a --set assignment. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "soc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct soc_config cfg;
	char err[1024];
	char path[512];
	const char *p = fuzz_file(data, size, ".ini", path, sizeof path);
	if (p)
		(void)soc_load(p, &cfg, err, sizeof err);
	if (soc_load("Ascend910", &cfg, err, sizeof err))
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		(void)soc_set(&cfg, line, err, sizeof err);
	free(text);
	return 0;
}
