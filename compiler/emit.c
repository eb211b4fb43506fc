/* emit.c: kernel program builder. */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dryrun.h"
#include "soc.h"

void cc_prog_init(struct cc_prog *p) { memset(p, 0, sizeof *p); }

void cc_prog_init_dryrun(struct cc_prog *p, struct sim_dryrun *d)
{
	memset(p, 0, sizeof *p);
	p->dry = d;
}

void cc_prog_free(struct cc_prog *p)
{
	free(p->code);
	free(p->labels);
	free(p->fix_label);
	free(p->fix);
	memset(p, 0, sizeof *p);
}

/* Encode cur, the instruction at pc n - 1; one with a label waits for
 * cc_prog_finish, when its target is known. */
static void flush(struct cc_prog *p)
{
	if (!p->pending)
		return;
	p->pending = 0;
	if (p->dry) {
		sim_dryrun_step(p->dry, &p->cur);
		return;
	}
	size_t pc = p->n - 1;
	if (p->fix_label[pc] >= 0) {
		if (p->nfix == p->capfix) {
			size_t cap = p->capfix ? 2 * p->capfix : 16;
			struct cc_fixup *f = realloc(p->fix, cap * sizeof *f);
			if (!f) {
				p->oom = 1;
				return;
			}
			p->fix = f;
			p->capfix = cap;
		}
		p->fix[p->nfix++] = (struct cc_fixup){ pc, p->cur };
		return;
	}
	char msg[160];
	if (isa_encode(&p->cur, p->code + pc * ISA_INSN_BYTES, msg, sizeof msg) && !p->failed) {
		p->failed = 1;
		p->err_pc = pc;
		snprintf(p->err, sizeof p->err, "kernel generator, pc %zu: %s", pc, msg);
	}
}

/* A kernel's code is loaded into the device's main memory beside the
 * weights and activations (and the simulator decodes every instruction
 * into a larger form): give it at most 1/256 of that memory (128 MiB of
 * code on a 32 GiB SoC, 8 M instructions; 2 M on an 8 GiB one), far above
 * any real kernel (the builder rolls repeated code into loops) and far
 * below what a runaway generator makes. */
size_t cc_max_insns(const struct soc_config *cfg)
{
	return (size_t)cfg->hbm_size_mb * (1 << 20) / 256 / ISA_INSN_BYTES;
}

/* Each instruction a generator emits costs the loop builder (kern_roll.c)
 * 0.6 to 4 us (a loaded host) and 16 bytes to record and compare, and the
 * verification run (verify.c) goes through about as many: the host's time,
 * not the SoC's memory, bounds it, at 8 times the most a kernel may hold
 * and at most 16 M.  Real kernels need that room: VGG11's 25088x4096
 * classifier Gemm records more than 4 M before it rolls (refused with 4 M;
 * its whole model compiles in 8-10 s), while the tests' kernels record at
 * most 86 k and a kernel at the size limit is refused within the minute. */
size_t cc_max_work(const struct soc_config *cfg)
{
	size_t w = 8 * cc_max_insns(cfg);
	return w < ((size_t)1 << 24) ? w : (size_t)1 << 24;
}

void cc_prog_init_scratch(struct cc_prog *sp, struct cc_prog *p)
{
	cc_prog_init(sp);
	sp->max_work = p->max_work;
	sp->work = p->work ? p->work : &p->work_n;
}

/* cur as op's format's defaults (isa_fmt_defaults; dflt 0: the caller
 * sets every field), field by field: a copy of the whole instruction (55
 * fields) was a fifth of a compile, the tiling searches' dry runs emitting
 * millions.  The previous instruction's fields are zeroed unless it had the
 * same format (each of them is set again then). */
static void start(struct cc_prog *p, enum isa_op op, int dflt)
{
	const struct isa_format *f = &isa_formats[isa_table[op].fmt];
	char *base = (char *)&p->cur;
	if (p->cur_fmt && p->cur_fmt != f)
		for (unsigned i = 0; i < p->cur_fmt->nfields; i++)
			*(int64_t *)(base + p->cur_fmt->fields[i].offset) = 0;
	for (unsigned i = 0; dflt && i < f->nfields; i++)
		*(int64_t *)(base + f->fields[i].offset) =
			f->fields[i].dflt == ISA_REQ ? 0 : f->fields[i].dflt;
	p->cur.op = op;
	p->cur_fmt = f;
}

/* cc_emit; dflt 0: the caller sets every field of op's format (cc_put_*,
 * insn_args.h, which start from the defaults themselves). */
static struct isa_insn *emit(struct cc_prog *p, enum isa_op op, int dflt)
{
	flush(p);
	if (!p->dry && p->max_work && !p->work_over &&
	    ++*(p->work ? p->work : &p->work_n) > p->max_work)
		p->over = p->work_over = 1;
	if (!p->dry && ((p->max_n && p->n >= p->max_n) || p->work_over)) {
		/* filled in and dropped, like after an allocation failure */
		p->over = 1;
		start(p, op, dflt);
		return &p->cur;
	}
	if (!p->oom && !p->dry && p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		uint8_t *v = realloc(p->code, cap * ISA_INSN_BYTES + 1);
		int *f = realloc(p->fix_label, cap * sizeof *f);
		if (v)
			p->code = v;
		if (f)
			p->fix_label = f;
		if (!v || !f)
			p->oom = 1;
		else
			p->cap = cap;
	}
	struct isa_insn *in = &p->cur;
	/* defaults of keyword fields, as the assembler applies them */
	start(p, op, dflt);
	if (p->dry) { /* timed at the next flush, never stored */
		p->n++;
		p->pending = 1;
		return in;
	}
	if (p->oom)
		return in; /* filled in and dropped: cc_prog_finish reports the failure */
	p->fix_label[p->n] = -1;
	p->n++;
	p->pending = 1;
	return in;
}

struct isa_insn *cc_emit(struct cc_prog *p, enum isa_op op) { return emit(p, op, 1); }

struct isa_insn *cc_emit_fmt(struct cc_prog *p, int64_t op, enum isa_fmt fmt)
{
	if (op <= 0 || op >= ISA_NOPS || !isa_table[op].mnemonic || isa_table[op].fmt != fmt) {
		/* a constructor of the wrong format: fail the program, naming it */
		if (!p->failed) {
			p->failed = 1;
			p->err_pc = p->n;
			snprintf(p->err, sizeof p->err,
				 "kernel generator, pc %zu: opcode %lld is not of format %s", p->n,
				 (long long)op, fmt < ISA_NFMTS ? isa_formats[fmt].name : "?");
		}
		return emit(p, ISA_OP_NOP, 1);
	}
	return emit(p, (enum isa_op)op, 0);
}

double cc_prog_dry_time(struct cc_prog *p)
{
	flush(p);
	return sim_dryrun_time(p->dry);
}

int cc_label_new(struct cc_prog *p)
{
	if (p->nlabels == p->caplabels) {
		size_t cap = p->caplabels ? 2 * p->caplabels : 16;
		int64_t *l = realloc(p->labels, cap * sizeof *l);
		if (!l) {
			p->oom = 1;
			return 0;
		}
		p->labels = l;
		p->caplabels = cap;
	}
	p->labels[p->nlabels] = -1;
	return (int)p->nlabels++;
}

void cc_label_bind(struct cc_prog *p, int label)
{
	if (!p->oom)
		p->labels[label] = (int64_t)p->n;
}

int cc_prog_finish(struct cc_prog *p, uint8_t **code, size_t *bytes, char *err, size_t errlen)
{
	flush(p);
	if (p->work_over) {
		snprintf(err, errlen, "the kernel's generator emits more than %zu instructions "
			 "(unrolled), the most it may on this SoC", p->max_work);
		return -1;
	}
	if (p->over) {
		snprintf(err, errlen, "the kernel needs more than %zu instructions, the most one "
			 "kernel may hold on this SoC (1/256 of its main memory)", p->max_n);
		return -1;
	}
	if (p->oom) {
		snprintf(err, errlen, "out of memory generating a kernel");
		return -1;
	}
	/* The first failing instruction in pc order is reported, as when every
	 * instruction was encoded here. */
	for (size_t i = 0; i < p->nfix && (!p->failed || p->fix[i].pc < p->err_pc); i++) {
		struct cc_fixup *f = &p->fix[i];
		int64_t target = p->labels[p->fix_label[f->pc]];
		if (target < 0) {
			snprintf(err, errlen, "kernel generator: unbound label at pc %zu", f->pc);
			return -1;
		}
		f->in.imm = target - (int64_t)f->pc;
		char msg[160];
		if (isa_encode(&f->in, p->code + f->pc * ISA_INSN_BYTES, msg, sizeof msg)) {
			snprintf(err, errlen, "kernel generator, pc %zu: %s", f->pc, msg);
			return -1;
		}
	}
	if (p->failed) {
		snprintf(err, errlen, "%s", p->err);
		return -1;
	}
	/* A copy, so that the program stays valid (and finishable) until freed. */
	uint8_t *c = malloc(p->n * ISA_INSN_BYTES + 1);
	if (!c) {
		snprintf(err, errlen, "out of memory generating a kernel");
		return -1;
	}
	if (p->n)
		memcpy(c, p->code, p->n * ISA_INSN_BYTES);
	*code = c;
	*bytes = p->n * ISA_INSN_BYTES;
	return 0;
}

/* A dry run's scalar instruction or flag goes straight to the dry run (the
 * search's dry runs emit these most), after what was pending. */
static int dry_scalar(struct cc_prog *p, enum isa_op op)
{
	if (!p->dry || isa_table[op].pipe != ISA_PIPE_S)
		return 0;
	flush(p);
	p->n++;
	sim_dryrun_scalar(p->dry);
	return 1;
}

static int dry_flag(struct cc_prog *p, enum isa_op op, enum isa_pipe src, enum isa_pipe dst,
		    int ev)
{
	if (!p->dry)
		return 0;
	flush(p);
	p->n++;
	sim_dryrun_flag(p->dry, op, src, dst, ev);
	return 1;
}

void cc_dry_warm_next(struct cc_prog *p)
{
	if (!p->dry)
		return;
	flush(p); /* the read pending now is not the next one */
	sim_dryrun_warm_next(p->dry);
}

void cc_li(struct cc_prog *p, int rd, int64_t imm)
{
	if (!dry_scalar(p, ISA_OP_LI))
		CC_I(p, RI, ISA_OP_LI, .rd = rd, .imm = imm);
}

void cc_ldarg(struct cc_prog *p, int rd, int idx)
{
	CC_I(p, RI, ISA_OP_LDARG, .rd = rd, .imm = idx);
}

void cc_addi(struct cc_prog *p, int rd, int rs1, int64_t imm)
{
	if (!dry_scalar(p, ISA_OP_ADDI))
		CC_I(p, RRI, ISA_OP_ADDI, .rd = rd, .rs1 = rs1, .imm = imm);
}

void cc_beq_label(struct cc_prog *p, int rs1, int rs2, int label)
{
	cc_branch_label(p, ISA_OP_BEQ, rs1, rs2, label);
}

void cc_branch_label(struct cc_prog *p, enum isa_op op, int rs1, int rs2, int label)
{
	CC_I(p, BR, op, .rs1 = rs1, .rs2 = rs2);
	if (!p->oom && !p->dry)
		p->fix_label[p->n - 1] = label;
}

void cc_jmp_label(struct cc_prog *p, int label)
{
	CC_I(p, J, ISA_OP_JMP);
	if (!p->oom && !p->dry)
		p->fix_label[p->n - 1] = label;
}

void cc_end(struct cc_prog *p) { CC_I(p, NONE, ISA_OP_END); }

void cc_set_flag(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int ev)
{
	if (!dry_flag(p, ISA_OP_SET_FLAG, src, dst, ev))
		CC_I(p, SYNC, ISA_OP_SET_FLAG, .src = src, .dst = dst, .ev = ev);
}

void cc_wait_flag(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int ev)
{
	if (!dry_flag(p, ISA_OP_WAIT_FLAG, src, dst, ev))
		CC_I(p, SYNC, ISA_OP_WAIT_FLAG, .src = src, .dst = dst, .ev = ev);
}

void cc_dma(struct cc_prog *p, enum isa_op op, int rd, int rs1, int64_t nburst, int64_t len,
	    int64_t sgap, int64_t dgap)
{
	CC_I(p, DMA, op, .rd = rd, .rs1 = rs1, .nburst = nburst, .len = len, .sgap = sgap,
	     .dgap = dgap);
}

int64_t cc_split_work(int64_t units, int64_t cores, int64_t *per)
{
	int64_t blocks = units < cores ? units : cores;
	if (blocks > CC_MAX_BLOCKS)
		blocks = CC_MAX_BLOCKS;
	if (blocks < 1)
		blocks = 1;
	*per = (units + blocks - 1) / blocks;
	if (*per < 1)
		*per = 1;
	return (units + *per - 1) / *per > 0 ? (units + *per - 1) / *per : 1;
}

/* Blocks [lo, hi) of a dispatch: a binary search on r_idx, so that no block
 * spends more than a few instructions finding its code; a range whose
 * blocks all go to one place jumps there (fall: the code after the
 * dispatch).  With b >= 0 only block b's path is emitted, for a dry run
 * (which does not follow branches, so no labels are needed). */
static void dispatch_range(struct cc_prog *p, const int *labels, int64_t lo, int64_t hi,
			   int r_idx, int r_tmp, int fall, int64_t b)
{
	int64_t same = lo + 1;
	while (same < hi && (labels ? labels[same] == labels[lo] : 0))
		same++;
	if (same == hi) {
		if (b >= 0)
			CC_I(p, J, ISA_OP_JMP);
		else
			cc_jmp_label(p, labels[lo] >= 0 ? labels[lo] : fall);
		return;
	}
	int64_t mid = (lo + hi) / 2;
	cc_li(p, r_tmp, mid);
	if (b >= 0) {
		CC_I(p, BR, ISA_OP_BGE, .rs1 = r_idx, .rs2 = r_tmp); /* its target is not needed */
		if (b >= mid)
			dispatch_range(p, labels, mid, hi, r_idx, r_tmp, fall, b);
		else
			dispatch_range(p, labels, lo, mid, r_idx, r_tmp, fall, b);
		return;
	}
	int upper = cc_label_new(p);
	cc_branch_label(p, ISA_OP_BGE, r_idx, r_tmp, upper);
	dispatch_range(p, labels, lo, mid, r_idx, r_tmp, fall, b);
	cc_label_bind(p, upper);
	dispatch_range(p, labels, mid, hi, r_idx, r_tmp, fall, b);
}

void cc_block_dispatch_to(struct cc_prog *p, int64_t blocks, const int *labels, int r_idx,
			  int r_tmp)
{
	CC_I(p, SPR, ISA_OP_RDSPR, .rd = r_idx, .spr = ISA_SPR_BLOCK_IDX);
	int64_t same = 1;
	while (same < blocks && labels[same] == labels[0])
		same++;
	if (same == blocks && labels[0] < 0)
		return; /* every block runs the code that follows */
	int fall = cc_label_new(p);
	dispatch_range(p, labels, 0, blocks, r_idx, r_tmp, fall, -1);
	cc_label_bind(p, fall);
}

void cc_block_dispatch_path(struct cc_prog *p, int64_t blocks, int64_t b, int r_idx, int r_tmp)
{
	CC_I(p, SPR, ISA_OP_RDSPR, .rd = r_idx, .spr = ISA_SPR_BLOCK_IDX);
	if (blocks > 1)
		dispatch_range(p, NULL, 0, blocks, r_idx, r_tmp, -1, b);
}

void cc_prime_flags(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int n)
{
	for (int ev = 0; ev < n; ev++)
		cc_set_flag(p, src, dst, ev);
}

void cc_drain_flags(struct cc_prog *p, enum isa_pipe src, enum isa_pipe dst, int n)
{
	for (int ev = 0; ev < n; ev++)
		cc_wait_flag(p, src, dst, ev);
}

void cc_ub_zero(struct cc_prog *p, int r_addr, int r_tmp, int64_t ub, int64_t n)
{
	for (int64_t done = 0; done < n;) {
		int64_t rep = (n - done) / 8 < ISA_VEC_REP_MAX ? (n - done) / 8 : ISA_VEC_REP_MAX;
		int64_t part = 0;
		if (rep == 0) {
			part = n - done;
			rep = 1;
			cc_li(p, r_tmp, part * 16);
			CC_I(p, R1, ISA_OP_VMASKN, .rs1 = r_tmp);
		}
		cc_li(p, r_addr, ub + done * 32);
		/* x0: the scalar 0.0 */
		CC_I(p, VDUP, ISA_OP_VDUP, .rd = r_addr, .rs2 = 0, .dt = ISA_DT_F16, .rep = rep,
		     .db = 1, .dr = 8);
		if (part) {
			CC_I(p, R1, ISA_OP_VMASKN, .rs1 = 0); /* all lanes again */
			done += part;
		} else {
			done += rep * 8;
		}
	}
}
