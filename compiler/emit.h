/* emit.h: building kernel programs instruction by instruction.
 *
 * Kernel generators describe code with the ISA's decoded form (struct
 * isa_insn); cc_prog_finish encodes it through the ISA table, resolving
 * labels.  Generators emit straight-line code per block where sizes are known
 * at compile time, which keeps every buffer and event id a plain immediate. */
#ifndef DV_EMIT_H
#define DV_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

struct cc_prog {
	struct isa_insn *v;
	size_t n, cap;
	int64_t *labels; /* label -> pc, -1 while unbound */
	int *fix_label;  /* per instruction: label its imm refers to, or -1 */
	size_t nlabels, caplabels;
	int oom;
	struct isa_insn scratch; /* cc_emit's target after an allocation failure */
};

void cc_prog_init(struct cc_prog *p);
void cc_prog_free(struct cc_prog *p);
/* Append an instruction (op and fields set by the caller). */
struct isa_insn *cc_emit(struct cc_prog *p, enum isa_op op);
int cc_label_new(struct cc_prog *p);
void cc_label_bind(struct cc_prog *p, int label);
/* Encode; returns 0 or -1 with a message (a field that does not fit). */
int cc_prog_finish(struct cc_prog *p, uint8_t **code, size_t *bytes, char *err, size_t errlen);

/* Split units of work over at most min(cores, CC_MAX_BLOCKS) blocks: every
 * block gets *per consecutive units (the last may get fewer) and none is
 * empty.  Returns the block count. */
#define CC_MAX_BLOCKS 1024
int64_t cc_split_work(int64_t units, int64_t cores, int64_t *per);

/* Per-block code: "rdspr r_idx, block_idx" and a branch to labels[b] for
 * every block b > 0 (block 0 falls through to labels[0]); the caller binds
 * labels[b] where block b's straight-line code starts. */
void cc_block_dispatch(struct cc_prog *p, int64_t blocks, int *labels, int r_idx, int r_tmp);

/* Shorthands. */
void cc_li(struct cc_prog *p, int rd, int64_t imm);
void cc_ldarg(struct cc_prog *p, int rd, int idx);
void cc_addi(struct cc_prog *p, int rd, int rs1, int64_t imm);
void cc_beq_label(struct cc_prog *p, int rs1, int rs2, int label);
void cc_jmp_label(struct cc_prog *p, int label);
void cc_end(struct cc_prog *p);
void cc_set_flag(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int ev);
/* Double (n-fold) buffering: set events 0..n-1 of src -> dst once before a
 * pipeline starts, so the first n waits pass; wait them all at its end, so
 * the block ends with no flag set. */
void cc_prime_flags(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int n);
void cc_drain_flags(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int n);
void cc_wait_flag(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int ev);
/* DMA: nburst bursts of len 32-byte blocks, gaps in blocks. */
void cc_dma(struct cc_prog *p, enum isa_op op, int rd, int rs1, int64_t nburst, int64_t len,
	    int64_t sgap, int64_t dgap);

#endif
