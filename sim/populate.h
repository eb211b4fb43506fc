/* populate.h: map a range of fresh anonymous memory in one call (populate.c). */
#ifndef DV_POPULATE_H
#define DV_POPULATE_H

#include <stddef.h>

/* Have the kernel supply the whole pages inside [p, p + n) now, as if written, instead of a
 * page fault at each first touch.  Only for memory about to be written anyway (what it maps
 * is zero pages, so nothing reads differently).  Best effort: without MADV_POPULATE_WRITE
 * (Linux 5.14) the pages fault in as before. */
void sim_populate(void *p, size_t n);

/* The same for memory about to be read (MADV_POPULATE_READ): pages never written map the zero
 * page, file pages their cached copy; nothing is copied or written. */
void sim_populate_read(const void *p, size_t n);

#endif
