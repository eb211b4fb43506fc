/* kern_gen.h: emission helpers shared by the pooling and TransData
 * generators: constants cached in registers (least recently used reloaded),
 * the lane mask the vector unit holds, and vector/DMA shorthands. */
#ifndef DV_KERN_GEN_H
#define DV_KERN_GEN_H

#include <stdint.h>

#include "kernels.h"

/* Registers: x1/x2 the arguments, x3 GM addresses, x4/x5 block dispatch,
 * x8..x23 the constant cache. */
enum { R_SRC = 1, R_DST = 2, R_GM = 3, R_BIDX = 4, R_TMP = 5, R_C0 = 8, R_CN = 24 };

struct kg {
	struct cc_prog *p;
	int64_t rval[32];
	unsigned rage[32], clock;
	int rvalid[32];
	uint64_t mhi, mlo; /* the lane mask the vector unit holds */
	int bad;
};

void kg_reset(struct kg *g);
int kg_reg(struct kg *g, int64_t v);
int64_t kg_fbits(float f);
void kg_mask(struct kg *g, uint64_t hi, uint64_t lo);
/* The first n lanes (n >= 128: all). */
void kg_mask_lanes(struct kg *g, int64_t n);
void kg_mask_all(struct kg *g);
/* A vector instruction with dst and src in registers; the caller sets the rest. */
struct isa_insn *kg_vinsn(struct kg *g, enum isa_op op, enum isa_dtype dt, int64_t dst,
			  int64_t src, int64_t rep);
void kg_flat_conv(struct kg *g, enum isa_dtype dt, enum isa_dtype st, int64_t dst, int64_t src,
		  int64_t n);
/* dst(dt) = src(st) over n elements contiguous on both sides, any sizes,
 * rounding with rnd where the conversion rounds. */
void kg_conv_n(struct kg *g, enum isa_dtype dt, enum isa_dtype st, int64_t dst, int64_t src,
	       int64_t n, enum isa_rnd rnd);
void kg_transpose(struct kg *g, int64_t dst, int64_t src, int64_t rep, int64_t db, int64_t s0b,
		  int64_t dr, int64_t s0r);
void kg_dma(struct kg *g, enum isa_op op, int gm_base, int64_t gm_off, int64_t ub,
	    int64_t nburst, int64_t len, int64_t sgap, int64_t dgap);

#endif
