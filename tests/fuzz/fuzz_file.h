/* fuzz_file.h: the parsers that read a path get the fuzzer's bytes through
 * a file of their own (one per process: libFuzzer runs one input at a time). */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix,
				    char *path, size_t len)
{
	snprintf(path, len, "%s/dv_fuzz_%ld%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (long)getpid(), suffix);
	FILE *f = fopen(path, "wb");
	if (!f)
		return NULL;
	fwrite(data, 1, size, f);
	fclose(f);
	return path;
}

#endif
