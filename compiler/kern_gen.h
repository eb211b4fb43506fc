/* kern_gen.h: the kernel builder the generators emit through (Conv, MatMul,
 * pooling, TransData, LayerNorm and others): constants cached in registers (least recently used reloaded),
 * the lane mask the vector unit holds, labels and counted loops, and
 * vector/DMA shorthands. */
#ifndef DV_KERN_GEN_H
#define DV_KERN_GEN_H

#include <stdint.h>

#include "kernels.h"

/* Registers: x1/x2 the arguments, x3 GM addresses, x4/x5 block dispatch,
 * x6/x7 loop counters (one per nesting level), x8..x23 the constant cache
 * unless a generator gives its own window (kg_init: Conv's and MatMul's). */
enum { R_SRC = 1, R_DST = 2, R_GM = 3, R_BIDX = 4, R_TMP = 5, R_LC0 = 6, R_C0 = 8, R_CN = 24 };
#define KG_MAX_LOOPS 2
#define KG_MAX_ADV 4
#define KG_BUCKETS 64 /* kg_reg's hash of values (a power of 2) */

/* A place in the program to branch to. */
struct kg_label {
	int id;
};

/* A counted loop: the body runs count times; reg[i] advances by delta[i]
 * after every iteration (address arithmetic: a GM base walking over tiles). */
struct kg_loop {
	int64_t count;
	int nadv;
	int reg[KG_MAX_ADV];
	int64_t delta[KG_MAX_ADV];
};

/* An open loop.  The body is emitted once, with the cache as it is at the
 * head; a cached register the body reads before redefining it (live in) is
 * assumed to hold its head value on every iteration, so the latch reloads
 * the live-in registers the body left holding something else, and the lane
 * mask likewise. */
struct kg_frame {
	struct kg_loop lp;
	int head;
	int64_t hval[32];
	int hvalid[32];
	unsigned char livein[32], redef[32];
	uint64_t mhi, mlo;
	int mask_unknown;
	int64_t bias[32]; /* the bases' biases at the head (loops inside move them) */
};

/* GM offsets recorded instead of encoded (kg_dma): the caller compares
 * programs that differ only in where their transfers point. */
struct kg_rec {
	int64_t *off;
	int *base;
	size_t n, cap;
	int oom;
};

struct kg {
	struct cc_prog *p;
	int c0, cn; /* the cache's registers x[c0, cn) (cn 0: R_C0 .. R_CN-1) */
	int64_t rval[32];
	unsigned rage[32], clock;
	int rvalid[32];
	/* kg_reg's indexes of the above (kern_gen.c keeps them): the valid
	 * registers as a mask; per hash of a value, the registers whose value
	 * hashes there (a superset for the valid ones: rbucket[r] is r's); the
	 * valid registers from the most to the least recently used (0 ends
	 * the list), unless lru_stale (a loop's latch revalidated a register
	 * at its old age: then the ages are scanned) */
	uint32_t vmask;
	uint32_t bucket[KG_BUCKETS];
	unsigned char rbucket[32];
	unsigned char mru_prev[32], mru_next[32], mru_head, mru_tail;
	int lru_stale;
	uint64_t mhi, mlo; /* the lane mask the vector unit holds */
	int mask_unknown;  /* ... unless this is set (after a label) */
	int bad;
	/* GM base register r holds its kernel argument + bias[r] (loops advance
	 * the bases; kg_dma's offsets stay relative to the argument) */
	int64_t bias[32];
	struct kg_frame loop[KG_MAX_LOOPS];
	int depth;
	struct kg_rec *rec; /* non-NULL: kg_dma records its GM offsets */
};

/* A builder writing into p (a program or a dry run's), its constant cache in
 * registers x[c0, cn), at a block's start (kg_reset). */
void kg_init(struct kg *g, struct cc_prog *p, int c0, int cn);
/* The start of a block: nothing cached, all lanes, GM bases at their arguments. */
void kg_reset(struct kg *g);
/* Nothing cached and the lane mask unknown (a join of paths). */
void kg_forget(struct kg *g);
int kg_reg(struct kg *g, int64_t v);
struct kg_label kg_label(struct kg *g);
/* Bind l here; code after it assumes nothing cached (any branch may reach it). */
void kg_bind(struct kg *g, struct kg_label l);
/* op BEQ, BNE, BLT or BGE: if rs1 op rs2, continue at l. */
void kg_branch(struct kg *g, enum isa_op op, int rs1, int rs2, struct kg_label l);
void kg_jump(struct kg *g, struct kg_label l);
/* for (counter = count; ; ) { body; advance; if (--counter != 0) repeat }:
 * the body is what the caller emits between kg_loop_begin and kg_loop_end
 * (count >= 1; at most KG_MAX_LOOPS nested).  After the loop every advanced
 * GM base stands count deltas further on, which kg_dma accounts for.  A
 * loop inside the body moves bases too: the latch takes them back to where
 * the head had them, plus the loop's own delta. */
void kg_loop_begin(struct kg *g, const struct kg_loop *lp);
void kg_loop_end(struct kg *g);
int64_t kg_fbits(float f);
void kg_mask(struct kg *g, uint64_t hi, uint64_t lo);
/* The first n lanes (n >= 128: all). */
void kg_mask_lanes(struct kg *g, int64_t n);
void kg_mask_all(struct kg *g);
/* Instructions (insn_args.h): op, of format FMT, with the named fields,
 * every other field at its default; a field FMT lacks is a compile error:
 *   KG_I(g, VUN, ISA_OP_VRELU, .rd = r, .rs1 = r, .dt = ISA_DT_F16, .rep = n);
 * At most one field's value may have an effect on the program (kg_reg). */
#define KG_I(g_, FMT, op_, ...) CC_I((g_)->p, FMT, op_, __VA_ARGS__)
/* A vector instruction whose dst and src (rd, rs1) are UB addresses, held
 * in cached registers (dst's looked up first), with rep repeats (1 up to
 * the field's maximum, or the builder is bad) and the rest as KG_I's. */
#define KG_V(g_, FMT, op_, dt_, dst_, src_, rep_, ...)                                     \
	do {                                                                               \
		struct kg *kg_v_ = (g_);                                                   \
		int kg_vr_[2];                                                             \
		int64_t kg_vrep_ = (rep_);                                                 \
		kg_vregs(kg_v_, (dst_), (src_), kg_vrep_, kg_vr_);                         \
		KG_I(kg_v_, FMT, op_, .rd = kg_vr_[0], .rs1 = kg_vr_[1], .dt = (dt_),      \
		     .rep = kg_vrep_, __VA_ARGS__);                                        \
	} while (0)
/* A vdup (which has no source) to UB address dst, held in a cached
 * register, rep checked as KG_V's; the scalar's register (.rs2) and any
 * other fields as KG_I's. */
#define KG_VDUP(g_, dt_, dst_, rep_, ...)                                                  \
	do {                                                                               \
		struct kg *kg_v_ = (g_);                                                   \
		int kg_vr_[2];                                                             \
		int64_t kg_vrep_ = (rep_);                                                 \
		kg_vregs(kg_v_, (dst_), (dst_), kg_vrep_, kg_vr_);                         \
		KG_I(kg_v_, VDUP, ISA_OP_VDUP, .rd = kg_vr_[0], .dt = (dt_),               \
		     .rep = kg_vrep_, __VA_ARGS__);                                        \
	} while (0)
/* KG_V's registers: r[0] holding dst, r[1] src; rep checked. */
void kg_vregs(struct kg *g, int64_t dst, int64_t src, int64_t rep, int r[2]);
/* The strides of an element-wise vector op: block (db, s0b, s1b) and
 * repeat (dr, s0r, s1r), as isa/fields.def has them. */
struct kg_strides {
	int64_t db, s0b, s1b, dr, s0r, s1r;
};
/* Every stride at its default (contiguous operands). */
struct kg_strides kg_strides_dflt(void);
/* op of format VBIN (s1 a UB address), VSCAL or VDUP (s1 the scalar's
 * bits) or VUN (s1 unused), s1's register looked up before dst's and s0's
 * (KG_V; a VDUP has no source: dst is looked up in s0's place); the strides
 * its format has from st, the others dropped. */
void kg_vop(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst, int64_t s0, int64_t s1,
	    int64_t rep, struct kg_strides st);
void kg_flat_conv(struct kg *g, enum isa_dtype dt, enum isa_dtype st, int64_t dst, int64_t src,
		  int64_t n);
/* dst(dt) = src(st) over n elements contiguous on both sides, any sizes,
 * rounding with rnd where the conversion rounds. */
void kg_conv_n(struct kg *g, enum isa_dtype dt, enum isa_dtype st, int64_t dst, int64_t src,
	       int64_t n, enum isa_rnd rnd);
void kg_transpose(struct kg *g, int64_t dst, int64_t src, int64_t rep, int64_t db, int64_t s0b,
		  int64_t dr, int64_t s0r);
/* A transfer at GM gm_off bytes past kernel argument register gm_base. */
void kg_dma(struct kg *g, enum isa_op op, int gm_base, int64_t gm_off, int64_t ub,
	    int64_t nburst, int64_t len, int64_t sgap, int64_t dgap);
/* Register tmp set to base + off, where base is a register the kernel set
 * before its block dispatch (a local buffer's address) that loops may
 * advance, like a GM base: off is relative to what base held at the block's
 * start and recorded like kg_dma's offsets, so that steps whose local
 * addresses move by a constant roll into one loop.  Returns tmp. */
int kg_addr(struct kg *g, int tmp, int base, int64_t off);
/* rd = the scalar at GM off bytes past kernel argument register gm_base
 * (op ld.gm or ldw.gm: an index the host gave), the offset recorded like
 * kg_dma's, so that steps reading a table's entries in turn roll. */
void kg_ldgm(struct kg *g, enum isa_op op, int rd, int gm_base, int64_t off);
/* kg_dma_via with the local address in register lreg. */
void kg_dma_reg(struct kg *g, enum isa_op op, int areg, int gm_base, int64_t gm_off, int lreg,
		int64_t nburst, int64_t len, int64_t sgap, int64_t dgap);
/* The same through address register areg instead of R_GM (the dry run tells
 * cold reads by their address register), local the UB or L1 address: reads
 * from GM (mov.gm.*) have it as destination, writes as source. */
void kg_dma_via(struct kg *g, enum isa_op op, int areg, int gm_base, int64_t gm_off,
		int64_t local, int64_t nburst, int64_t len, int64_t sgap, int64_t dgap);

#endif
