/* emit.h: building kernel programs instruction by instruction.
 *
 * Kernel generators describe code with the ISA's decoded form (struct
 * isa_insn); cc_prog_finish encodes it through the ISA table, resolving
 * labels.  Generators emit code per block where sizes are known at compile
 * time, which keeps every buffer and event id a plain immediate; where that
 * code repeats with only its GM addresses moving, the builder (kern_roll.h)
 * runs it as a loop. */
#ifndef DV_EMIT_H
#define DV_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "insn_args.h"
#include "isa.h"

struct sim_dryrun;

/* Instructions are encoded as soon as the generator starts the next one (or
 * at cc_prog_finish), so a program costs 16 bytes per instruction (plus its
 * fix_label entry) however large struct isa_insn is.  The one being filled in
 * is `cur`, int64_t fields, so every value a generator assigns reaches
 * isa_encode's range check intact: one that does not fit fails the program
 * with the field's name, as it always did.  A pointer from cc_emit is valid
 * only until the next cc_emit. */
struct cc_fixup {
	size_t pc;
	struct isa_insn in; /* encoded at cc_prog_finish, with imm = label - pc */
};

struct cc_prog {
	uint8_t *code;   /* ISA_INSN_BYTES per instruction, `cur` not yet included */
	size_t n, cap;   /* n counts `cur` */
	int64_t *labels; /* label -> pc, -1 while unbound */
	int *fix_label;  /* per instruction: label its imm refers to, or -1 */
	size_t nlabels, caplabels;
	struct cc_fixup *fix; /* the instructions with a label, in pc order */
	size_t nfix, capfix;
	int oom;
	int pending;     /* cur is instruction n - 1, not yet encoded */
	/* the format whose fields cur may hold (NULL: none); every other field
	 * of cur is 0, so the next instruction clears only these */
	const struct isa_format *cur_fmt;
	int failed;      /* a field did not fit: err says which, at pc err_pc */
	size_t err_pc;
	char err[200];
	struct isa_insn cur;
	/* A dry run instead of a program (cc_prog_init_dryrun): each instruction
	 * is timed as it is finished and not kept, so a generator's candidate
	 * costs what its own instructions cost (sim/dryrun.h). */
	struct sim_dryrun *dry;
	/* A bound on the kernel's size (0: none; cc_max_insns sets it for a
	 * task): past it nothing more is stored, `over` is set, generators
	 * that loop over data stop early, and cc_prog_finish fails.  Sizes
	 * come from files: a huge tensor must give an error, not gigabytes of
	 * code. */
	size_t max_n;
	int over;
	/* A bound on the generator's work: every instruction it emits, into
	 * this program and into the scratch copies the loop builder makes of
	 * its steps and blocks (kern_roll.c), is counted in work_n, or in the
	 * task program's work_n that `work` points to (0: no bound).  Past
	 * max_work the program is `over` as above and work_over says why: a
	 * kernel that rolls into few instructions may still unroll into more
	 * than any sim or compiler can go through in a minute. */
	size_t max_work, work_n;
	size_t *work;
	int work_over;
};

/* The most instructions one kernel may hold on cfg's SoC (emit.c). */
struct soc_config;
size_t cc_max_insns(const struct soc_config *cfg);
/* The most instructions a generator may emit in all for one kernel. */
size_t cc_max_work(const struct soc_config *cfg);
/* A scratch program of p's (kern_roll.c): its work counts in p's. */
void cc_prog_init_scratch(struct cc_prog *sp, struct cc_prog *p);

void cc_prog_init(struct cc_prog *p);
void cc_prog_free(struct cc_prog *p);
/* A program whose instructions go through the dry run d, in program order
 * (branches are not followed; cc_prog_finish is not called on it). */
void cc_prog_init_dryrun(struct cc_prog *p, struct sim_dryrun *d);
/* Cycles until everything a dry-run program issued has completed. */
double cc_prog_dry_time(struct cc_prog *p);
/* A dry run's next GM read re-reads bytes the block read before: from the
 * L2, whatever its register (sim_dryrun_warm_next); nothing on a program. */
void cc_dry_warm_next(struct cc_prog *p);
/* Append an instruction (op and fields set by the caller, through the
 * returned pointer, before the next cc_emit): the builder's own layer
 * only; generators use the constructors (CC_I, insn_args.h, through
 * KG_I). */
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

/* The instructions block b runs through in a dispatch of `blocks` blocks of
 * their own code, for a dry run of that block (which does not follow
 * branches). */
void cc_block_dispatch_path(struct cc_prog *p, int64_t blocks, int64_t b, int r_idx, int r_tmp);
/* The same with the caller's labels: block b goes to labels[b], or past the
 * dispatch when labels[b] < 0; a run of blocks with one label shares one
 * jump. */
void cc_block_dispatch_to(struct cc_prog *p, int64_t blocks, const int *labels, int r_idx,
			  int r_tmp);

/* Shorthands. */
void cc_li(struct cc_prog *p, int rd, int64_t imm);
void cc_ldarg(struct cc_prog *p, int rd, int idx);
void cc_addi(struct cc_prog *p, int rd, int rs1, int64_t imm);
void cc_beq_label(struct cc_prog *p, int rs1, int rs2, int label);
/* op one of BEQ, BNE, BLT, BGE: if rs1 op rs2, continue at label (either way). */
void cc_branch_label(struct cc_prog *p, enum isa_op op, int rs1, int rs2, int label);
void cc_jmp_label(struct cc_prog *p, int label);
void cc_end(struct cc_prog *p);
void cc_set_flag(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int ev);
/* Double (n-fold) buffering: set events 0..n-1 of src -> dst once before a
 * pipeline starts, so the first n waits pass; wait them all at its end, so
 * the block ends with no flag set. */
void cc_prime_flags(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int n);
void cc_drain_flags(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int n);
void cc_wait_flag(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int ev);
/* n 32-byte blocks of zeros at UB address ub (V pipe, registers r_addr and
 * r_tmp): whole repeats of 8 blocks, the rest under a lane mask, so that
 * nothing past them is written. */
void cc_ub_zero(struct cc_prog *p, int r_addr, int r_tmp, int64_t ub, int64_t n);
/* DMA: nburst bursts of len 32-byte blocks, gaps in blocks. */
void cc_dma(struct cc_prog *p, enum isa_op op, int rd, int rs1, int64_t nburst, int64_t len,
	    int64_t sgap, int64_t dgap);

#endif
