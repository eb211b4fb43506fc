/* insn_mem.c: memory for a loaded kernel's decoded instructions.
 *
 * A model's kernels decode into tens of megabytes (720479 instructions of
 * 24 bytes for ResNet-50), written once at load, every page of them for the
 * first time.  Faulting those pages in one at a time costs more than the
 * decoding itself on a virtual machine, where each fault is a round trip
 * through the hypervisor.  A large array is therefore mapped with
 * MAP_POPULATE, which has the kernel supply every page in the one mmap
 * call; a small one, or a system without MAP_POPULATE, uses malloc (its
 * whole pages populated in one call too), not calloc: the decoder writes
 * every byte of every entry before anything reads it, and clearing the
 * array first cost as much as a twentieth of a timing-mode ResNet-50 run. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */

#include "insn_mem.h"
#include "populate.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Below this, malloc: the pages are few and malloc may have them already. */
#define POPULATE_MIN_BYTES (256u * 1024)

struct isa_dec *sim_insn_mem_alloc(size_t n, size_t *mapped)
{
	*mapped = 0;
	if (n > SIZE_MAX / sizeof(struct isa_dec))
		return NULL;
#if defined(MAP_POPULATE) && defined(MAP_ANONYMOUS)
	size_t bytes = n * sizeof(struct isa_dec);
	if (bytes >= POPULATE_MIN_BYTES) {
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p != MAP_FAILED) {
			*mapped = bytes;
			return p;
		}
	}
#endif
	struct isa_dec *p = malloc(n ? n * sizeof(struct isa_dec) : 1);
	/* a model has many small kernels: their pages took ResNet-50's timing-mode run 750 faults,
	 * half of all */
	sim_populate(p, n * sizeof(struct isa_dec));
	return p;
}

void sim_insn_mem_free(struct isa_dec *p, size_t mapped)
{
	if (mapped)
		munmap(p, mapped);
	else
		free(p);
}
