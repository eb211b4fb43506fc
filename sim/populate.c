/* populate.c: see populate.h.
 *
 * A first touch of an anonymous page is a page fault, about 5 us each on the virtual machine
 * the simulator was measured on (a round trip through the hypervisor), where one madvise
 * maps many pages for about the cost of one fault. */
#define _DEFAULT_SOURCE /* madvise; MADV_POPULATE_WRITE is Linux's */
#include "populate.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(MADV_POPULATE_WRITE) || defined(MADV_POPULATE_READ)
/* advice on the whole pages inside [p, p + n) */
static void advise_inside(const void *p, size_t n, int advice)
{
	long pgl = sysconf(_SC_PAGESIZE);
	uintptr_t pg = pgl > 0 ? (uintptr_t)pgl : 4096;
	uintptr_t lo = ((uintptr_t)p + pg - 1) / pg * pg, hi = ((uintptr_t)p + n) / pg * pg;
	if (p && hi > lo)
		(void)madvise((void *)lo, hi - lo, advice);
}
#endif

void sim_populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	advise_inside(p, n, MADV_POPULATE_WRITE);
#else
	(void)p, (void)n;
#endif
}

void sim_populate_read(const void *p, size_t n)
{
#ifdef MADV_POPULATE_READ
	advise_inside(p, n, MADV_POPULATE_READ);
#else
	(void)p, (void)n;
#endif
}
