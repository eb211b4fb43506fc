/* fuzz_om.c: libFuzzer harness for the .om loader (om/om.c).  The
 * loader maps a file (the runtime shares the weights' pages by the
 * descriptor), so the input goes to a memory file made once, not the disk. */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "om.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct om_model m;
	char err[1024];
	if (fd < 0) {
		fd = memfd_create("fuzz.om", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (om_read(path, &m, NULL, err, sizeof err) == 0)
		om_free(&m);
	return 0;
}
