/* fuzz_soc.c: libFuzzer harness for the SoC ini parser and --set (sim/soc.c):
 * the input as an ini file's contents, and each of its lines as a --set
 * assignment on a valid config (loaded once). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "soc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct soc_config base;
	static int loaded;
	struct soc_config cfg;
	char err[1024];
	(void)soc_load_mem("fuzz.ini", (const char *)data, size, &cfg, err, sizeof err);
	if (!loaded) {
		if (soc_load("Ascend910", &base, err, sizeof err))
			return 0;
		loaded = 1;
	}
	cfg = base;
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
