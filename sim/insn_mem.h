/* insn_mem.h: memory for a loaded kernel's decoded instructions (insn_mem.c). */
#ifndef DV_INSN_MEM_H
#define DV_INSN_MEM_H

#include <stddef.h>

#include "isa.h"

/* Room for n instructions, or NULL: not cleared (the caller decodes into
 * every entry); *mapped is what sim_insn_mem_free needs back (the bytes
 * mapped, or 0 for malloc'd memory). */
struct isa_dec *sim_insn_mem_alloc(size_t n, size_t *mapped);
void sim_insn_mem_free(struct isa_dec *p, size_t mapped);

#endif
