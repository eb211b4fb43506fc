/* golden.c: see golden.h. */
#include "golden.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REGEN "regenerate the file with `make golden` (README.md)"

static uint64_t fnv1a64(const struct om_tensor *out, unsigned nout)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned o = 0; o < nout; o++) {
		const unsigned char *p = out[o].data;
		for (size_t i = 0; i < out[o].nbytes; i++) {
			h ^= p[i];
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

static void golden_path(char *path, size_t len)
{
	const char *src = getenv("srcdir");
	snprintf(path, len, "%s/tests/golden/cycles.tsv", src && *src ? src : ".");
}

/* Append the line with one write(): Check forks each test and make -j runs
 * the programs in parallel, and an O_APPEND write of a short line lands
 * whole on Linux. */
static int append(const char *path, const char *line, char *why, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	size_t n = strlen(line);
	if (fd < 0 || write(fd, line, n) != (ssize_t)n) {
		snprintf(why, len, "golden: cannot append to %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int tu_golden_check(const char *key, uint64_t cycles, const struct om_tensor *out,
		    unsigned nout, char *why, size_t len)
{
	char path[4200], line[1024];
	golden_path(path, sizeof path);
	uint64_t sum = fnv1a64(out, nout);
	const char *mode = getenv("DAVINCI_GOLDEN");
	if (mode && !strcmp(mode, "update")) {
		snprintf(line, sizeof line, "%s\t%" PRIu64 "\t%016" PRIx64 "\n", key, cycles, sum);
		return append(path, line, why, len);
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "golden: cannot read %s (%s): " REGEN, path, key);
		return -1;
	}
	/* the last line of the key wins: update mode appends */
	int found = 0;
	uint64_t want_cycles = 0, want_sum = 0;
	size_t klen = strlen(key);
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, key, klen) || line[klen] != '\t')
			continue;
		char *end;
		want_cycles = strtoull(line + klen + 1, &end, 10);
		want_sum = strtoull(end, NULL, 16);
		found = 1;
	}
	fclose(f);
	if (!found) {
		snprintf(why, len, "golden: no line for %s in %s: " REGEN, key, path);
		return -1;
	}
	if (want_cycles != cycles || want_sum != sum) {
		snprintf(why, len,
			 "golden %s: %" PRIu64 " cycles, output checksum %016" PRIx64
			 "; %s has %" PRIu64 " cycles, %016" PRIx64 ": if intended, " REGEN
			 " and say in the commit why they moved",
			 key, cycles, sum, path, want_cycles, want_sum);
		return -1;
	}
	return 0;
}

void tu_golden(const char *key, uint64_t cycles, const struct om_tensor *out, unsigned nout)
{
	char why[8192];
	int rc = tu_golden_check(key, cycles, out, nout, why, sizeof why);
	ck_assert_msg(rc == 0, "%s", why);
}
