/* fuzz_om.c: libFuzzer harness for the .om loader (runtime/om.c). */
#include "fuzz_file.h"
#include "om.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct om_model m;
	char err[1024];
	char path[512];
	const char *p = fuzz_file(data, size, ".om", path, sizeof path);
	if (p && om_read(p, &m, NULL, err, sizeof err) == 0)
		om_free(&m);
	return 0;
}
