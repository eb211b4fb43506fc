/* check_kgen.c: the kernel builder's labels and loops (compiler/kern_gen.h,
 * kern_roll.h), run on the simulator: a counted loop whose body evicts the
 * cached registers it read at the head (the back edge must reload them), one
 * whose body changes the lane mask it relied on, branches over code, and a
 * step sequence folded into loops against the same steps in straight
 * line. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen_util.h"
#include "kern_gen.h"
#include "kern_roll.h"

#define UB_A 0
#define UB_B 4096

static void fence(struct cc_prog *p, enum isa_pipe a, enum isa_pipe b)
{
	cc_set_flag(p, a, b, 0);
	cc_wait_flag(p, a, b, 0);
}

/* Block i of 32 bytes: GM src -> UB -> GM dst, through the cache for the UB
 * address; in between, `evict` other constants pass through the cache. */
static void copy_block(struct kg *g, int64_t off, int evict)
{
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, off, UB_A, 1, 1, 0, 0);
	fence(g->p, ISA_PIPE_MTE2, ISA_PIPE_MTE3);
	for (int k = 0; k < evict; k++)
		kg_reg(g, 1000 + k);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, off, UB_A, 1, 1, 0, 0);
	fence(g->p, ISA_PIPE_MTE3, ISA_PIPE_MTE2);
}

static void fill_src(struct rig *r, uint64_t src, int n, uint16_t *want)
{
	uint64_t s = 7;
	for (int i = 0; i < n * 16; i++)
		want[i] = (uint16_t)rig_rnd(&s);
	ck_assert_int_eq(sim_gm_write(r->dev, src, want, (size_t)n * 32), 0);
}

START_TEST(loop_reloads_evicted_live_in)
{
	enum { N = 6 };
	struct rig r;
	rig_open(&r, "Ascend910", SIM_MODE_FULL);
	uint64_t src = rig_alloc(&r, N * 32), dst = rig_alloc(&r, N * 32);
	uint16_t want[N * 16], got[N * 16];
	fill_src(&r, src, N, want);
	struct cc_prog p;
	cc_prog_init(&p);
	struct kg g = { .p = &p };
	kg_reset(&g);
	cc_ldarg(&p, R_SRC, 0);
	cc_ldarg(&p, R_DST, 1);
	kg_reg(&g, UB_A); /* cached before the loop: live in */
	struct kg_loop lp = { .count = N, .nadv = 2, .reg = { R_SRC, R_DST }, .delta = { 32, 32 } };
	kg_loop_begin(&g, &lp);
	copy_block(&g, 0, R_CN - R_C0); /* every cached register replaced */
	kg_loop_end(&g);
	/* after the loop, the bases stand N blocks on: kg_dma accounts for it */
	kg_dma(&g, ISA_OP_MOV_GM_UB, R_SRC, 0, UB_B, 1, 1, 0, 0);
	fence(&p, ISA_PIPE_MTE2, ISA_PIPE_MTE3);
	kg_dma(&g, ISA_OP_MOV_UB_GM, R_DST, 0, UB_B, 1, 1, 0, 0);
	cc_end(&p);
	ck_assert_int_eq(g.bad, 0);
	ck_assert_int_eq(g.bias[R_SRC], N * 32);
	rig_run(&r, &p, 1, src, dst, "loop_reloads_evicted_live_in");
	ck_assert_int_eq(sim_gm_read(r.dev, dst, got, sizeof got), 0);
	ck_assert_int_eq(memcmp(got, want, sizeof got), 0);
	rig_close(&r);
}
END_TEST

static void vdup(struct kg *g, int64_t at, float v)
{
	int rd = kg_reg(g, at), rv = kg_reg(g, kg_fbits(v));
	KG_I(g, VDUP, ISA_OP_VDUP, .rd = rd, .rs2 = rv, .dt = ISA_DT_F16, .rep = 1);
}

/* The head's mask is 16 lanes; the body fills under it, then sets all lanes
 * for a fill of its own: the back edge must set 16 lanes again, or the
 * second iteration's first fill covers all 128. */
START_TEST(loop_restores_lane_mask)
{
	enum { N = 3 };
	struct rig r;
	rig_open(&r, "Ascend910", SIM_MODE_FULL);
	uint64_t dst = rig_alloc(&r, N * 256);
	struct cc_prog p;
	cc_prog_init(&p);
	struct kg g = { .p = &p };
	kg_reset(&g);
	cc_ldarg(&p, R_DST, 1);
	vdup(&g, UB_A, 2.0f);
	kg_mask_lanes(&g, 16);
	struct kg_loop lp = { .count = N, .nadv = 1, .reg = { R_DST }, .delta = { 256 } };
	kg_loop_begin(&g, &lp);
	vdup(&g, UB_A, 1.0f);
	fence(&p, ISA_PIPE_V, ISA_PIPE_MTE3);
	kg_dma(&g, ISA_OP_MOV_UB_GM, R_DST, 0, UB_A, 1, 8, 0, 0);
	fence(&p, ISA_PIPE_MTE3, ISA_PIPE_V);
	kg_mask_all(&g);
	vdup(&g, UB_A, 2.0f);
	kg_loop_end(&g);
	cc_end(&p);
	ck_assert_int_eq(g.bad, 0);
	rig_run(&r, &p, 1, 0, dst, "loop_restores_lane_mask");
	uint16_t got[N * 128];
	ck_assert_int_eq(sim_gm_read(r.dev, dst, got, sizeof got), 0);
	for (int i = 0; i < N * 128; i++)
		ck_assert_msg(got[i] == (i % 128 < 16 ? 0x3c00 : 0x4000), "half %d: %04x", i,
			      got[i]);
	rig_close(&r);
}
END_TEST

/* A forward branch over a store, and code after a label assuming nothing
 * cached: the skipped path's constants must not be taken as loaded. */
START_TEST(branch_skips_and_label_forgets)
{
	struct rig r;
	rig_open(&r, "Ascend910", SIM_MODE_FULL);
	uint64_t src = rig_alloc(&r, 64), dst = rig_alloc(&r, 64);
	uint16_t want[32], got[32], zero[32] = { 0 };
	fill_src(&r, src, 2, want);
	ck_assert_int_eq(sim_gm_write(r.dev, dst, zero, sizeof zero), 0);
	struct cc_prog p;
	cc_prog_init(&p);
	struct kg g = { .p = &p };
	kg_reset(&g);
	cc_ldarg(&p, R_SRC, 0);
	cc_ldarg(&p, R_DST, 1);
	struct kg_label skip = kg_label(&g);
	kg_branch(&g, ISA_OP_BEQ, 0, 0, skip); /* always taken */
	copy_block(&g, 0, 0);
	kg_bind(&g, skip);
	copy_block(&g, 32, 0);
	cc_end(&p);
	ck_assert_int_eq(g.bad, 0);
	rig_run(&r, &p, 1, src, dst, "branch_skips_and_label_forgets");
	ck_assert_int_eq(sim_gm_read(r.dev, dst, got, sizeof got), 0);
	ck_assert_int_eq(memcmp(got, zero, 32), 0);
	ck_assert_int_eq(memcmp(got + 16, want + 16, 32), 0);
	rig_close(&r);
}
END_TEST

/* Steps: a different first and last one around a periodic middle (block i
 * copied, pairs of steps alternating UB buffers). */
enum { NSTEP = 40 };
static void copy_step(struct kg *g, const void *ctx, size_t i)
{
	(void)ctx;
	int64_t ub = i % 2 ? UB_B : UB_A;
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, (int64_t)i * 32, ub, 1, 1, 0, 0);
	fence(g->p, ISA_PIPE_MTE2, ISA_PIPE_MTE3);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, (int64_t)(i == 0 ? NSTEP : i) * 32, ub, 1, 1, 0, 0);
	fence(g->p, ISA_PIPE_MTE3, ISA_PIPE_MTE2);
	if (i == NSTEP - 1)
		kg_reg(g, 12345); /* unlike the others */
}

static size_t run_steps(struct rig *r, int rolled, uint64_t src, uint64_t dst)
{
	struct cc_prog p;
	cc_prog_init(&p);
	struct kg g = { .p = &p };
	kg_reset(&g);
	cc_ldarg(&p, R_SRC, 0);
	cc_ldarg(&p, R_DST, 1);
	if (rolled)
		ck_assert_int_eq(kg_emit_rolled(&g, NSTEP, copy_step, NULL), 0);
	else
		for (size_t i = 0; i < NSTEP; i++)
			copy_step(&g, NULL, i);
	cc_end(&p);
	ck_assert_int_eq(g.bad, 0);
	size_t n = p.n;
	rig_run(r, &p, 1, src, dst, rolled ? "rolled" : "straight");
	return n;
}

START_TEST(rolled_steps_match_straight_line)
{
	struct rig r;
	rig_open(&r, "Ascend910", SIM_MODE_FULL);
	uint64_t src = rig_alloc(&r, (NSTEP + 1) * 32);
	uint64_t d0 = rig_alloc(&r, (NSTEP + 1) * 32), d1 = rig_alloc(&r, (NSTEP + 1) * 32);
	uint16_t want[(NSTEP + 1) * 16], a[(NSTEP + 1) * 16], b[(NSTEP + 1) * 16];
	fill_src(&r, src, NSTEP + 1, want);
	size_t n0 = run_steps(&r, 0, src, d0), n1 = run_steps(&r, 1, src, d1);
	ck_assert_int_eq(sim_gm_read(r.dev, d0, a, sizeof a), 0);
	ck_assert_int_eq(sim_gm_read(r.dev, d1, b, sizeof b), 0);
	ck_assert_int_eq(memcmp(a + 16, want + 16, (NSTEP - 1) * 32), 0);
	ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
	/* the middle steps once (two, a period), not 38 times */
	ck_assert_msg(n1 * 5 < n0, "rolled %zu instructions, straight %zu", n1, n0);
	rig_close(&r);
}
END_TEST

/* Blocks: 0, 2, 4 alike (one copy, its bases moved by (block_idx / 2)
 * blocks), 1, 3, 5 alike, 6 with 0's code at offsets off that progression
 * (it enters 0's copy after moving its bases by the difference). */
enum { NBLK = 7 };
static void copy_blk(struct kg *g, void *ctx, int64_t b)
{
	(void)ctx;
	int64_t off = b % 2 ? (b / 2) * 64 + 32 : (b / 2) * 64 + 1024;
	if (b == NBLK - 1)
		off = 2048;
	kg_dma(g, ISA_OP_MOV_GM_UB, R_SRC, b * 32, b % 2 ? UB_B : UB_A, 1, 1, 0, 0);
	fence(g->p, ISA_PIPE_MTE2, ISA_PIPE_MTE3);
	kg_dma(g, ISA_OP_MOV_UB_GM, R_DST, off, b % 2 ? UB_B : UB_A, 1, 1, 0, 0);
	cc_end(g->p);
}

START_TEST(alike_blocks_share_code)
{
	struct rig r;
	rig_open(&r, "Ascend910", SIM_MODE_FULL);
	uint64_t src = rig_alloc(&r, NBLK * 32), dst = rig_alloc(&r, 4096);
	uint16_t want[NBLK * 16], got[2048];
	fill_src(&r, src, NBLK, want);
	struct cc_prog p;
	cc_prog_init(&p);
	struct kg g = { .p = &p };
	cc_ldarg(&p, R_SRC, 0);
	cc_ldarg(&p, R_DST, 1);
	ck_assert_int_eq(kg_emit_blocks(&g, NBLK, copy_blk, NULL), 0);
	ck_assert_int_eq(g.bad, 0);
	size_t n = p.n;
	rig_run(&r, &p, NBLK, src, dst, "alike_blocks_share_code");
	ck_assert_int_eq(sim_gm_read(r.dev, dst, got, sizeof got), 0);
	for (int b = 0; b < NBLK; b++) {
		int64_t off = b % 2 ? (b / 2) * 64 + 32 : (b / 2) * 64 + 1024;
		if (b == NBLK - 1)
			off = 2048;
		ck_assert_msg(!memcmp((uint8_t *)got + off, want + b * 16, 32), "block %d", b);
	}
	/* the arguments (2), the dispatch (rdspr and a binary search over the 7
	 * blocks: 20, the classes alternating so that no range shares a jump),
	 * two copies of a block's 8 instructions, 11 to move two classes' bases
	 * and block 6's entry (li and add for each of its two bases, a jump):
	 * 54, where a copy per block is 71 + 14 */
	ck_assert_msg(n == 54, "%zu instructions", n);
	rig_close(&r);
}
END_TEST

/* The work bound (emit.h): the instructions the loop builder records in its
 * scratch copies count, past max_work the builder stops recording and the
 * program fails naming the bound; a bound it stays under changes nothing. */
START_TEST(work_bound_counts_scratch_copies)
{
	for (int tight = 0; tight < 2; tight++) {
		struct cc_prog p;
		cc_prog_init(&p);
		/* the 40 steps record about 40 x 6 instructions and roll into ~30 */
		p.max_work = tight ? 100 : 100000;
		struct kg g = { .p = &p };
		kg_reset(&g);
		cc_ldarg(&p, R_SRC, 0);
		cc_ldarg(&p, R_DST, 1);
		ck_assert_int_eq(kg_emit_rolled(&g, NSTEP, copy_step, NULL), 0);
		cc_end(&p);
		uint8_t *code = NULL;
		size_t bytes = 0;
		char err[200] = "";
		int rc = cc_prog_finish(&p, &code, &bytes, err, sizeof err);
		ck_assert_int_eq(p.work_over, tight);
		ck_assert_int_eq(rc, tight ? -1 : 0);
		if (tight) {
			ck_assert_msg(strstr(err, "more than 100 instructions (unrolled)"), "%s", err);
			ck_assert_uint_le(p.work_n, 101); /* stopped at the bound */
		} else {
			ck_assert_uint_gt(p.work_n, 200); /* the scratch copies count */
		}
		free(code);
		cc_prog_free(&p);
	}
}
END_TEST

/* The constructors (insn_args.h) give the bytes the assembler gives for the
 * same operands: a field left out takes fields.def's default (rep 1, block
 * strides 1, repeat strides 8, nburst 1), one given overrides it (a 0
 * stride too).  An opcode given to another format's constructor fails the
 * kernel, naming the format. */
START_TEST(constructors_match_the_assembler)
{
	struct cc_prog p;
	cc_prog_init(&p);
	struct kg g;
	kg_init(&g, &p, 0, 0);
	KG_I(&g, VBIN, ISA_OP_VADD, .rd = 1, .rs1 = 2, .rs2 = 3, .dt = ISA_DT_F16);
	KG_I(&g, VBIN, ISA_OP_VMUL, .rd = 1, .rs1 = 2, .rs2 = 3, .dt = ISA_DT_F32, .rep = 4,
	     .s1b = 0, .s1r = 0);
	KG_I(&g, DMA, ISA_OP_MOV_GM_UB, .rd = 4, .rs1 = 5, .len = 6);
	KG_I(&g, MMAD, ISA_OP_MMAD, .rd = 1, .rs1 = 2, .rs2 = 3, .m = 16, .k = 32, .n = 48,
	     .init = 1);
	KG_I(&g, VCONV, ISA_OP_VCONV, .rd = 1, .rs1 = 2, .dt = ISA_DT_F16, .st = ISA_DT_F32,
	     .rnd = ISA_RND_TRUNC, .dr = 4);
	KG_I(&g, NONE, ISA_OP_END);
	uint8_t *code = NULL;
	size_t bytes = 0;
	char err[200] = "";
	ck_assert_int_eq(cc_prog_finish(&p, &code, &bytes, err, sizeof err), 0);
	struct isa_program want;
	ck_assert_int_eq(isa_assemble("vadd x1, x2, x3, dt=f16\n"
				      "vmul x1, x2, x3, dt=f32, rep=4, s1b=0, s1r=0\n"
				      "mov.gm.ub x4, x5, len=6\n"
				      "mmad x1, x2, x3, m=16, k=32, n=48, init=1\n"
				      "vconv x1, x2, dt=f16, st=f32, rnd=trunc, dr=4\n"
				      "end\n",
				      "want.s", &want, err, sizeof err),
			 0);
	ck_assert_uint_eq(bytes, want.ninsns * ISA_INSN_BYTES);
	ck_assert_int_eq(memcmp(code, want.code, bytes), 0);
	isa_program_free(&want);
	free(code);
	cc_prog_free(&p);

	cc_prog_init(&p);
	KG_I(&g, VBIN, ISA_OP_VRELU, .rd = 1, .rs1 = 2, .rs2 = 3, .dt = ISA_DT_F16);
	cc_end(&p);
	ck_assert_int_eq(cc_prog_finish(&p, &code, &bytes, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "pc 0") && strstr(err, "not of format VBIN"), "%s", err);
	cc_prog_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kgen");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, loop_reloads_evicted_live_in);
	tcase_add_test(tc, loop_restores_lane_mask);
	tcase_add_test(tc, branch_skips_and_label_forgets);
	tcase_add_test(tc, rolled_steps_match_straight_line);
	tcase_add_test(tc, alike_blocks_share_code);
	tcase_add_test(tc, work_bound_counts_scratch_copies);
	tcase_add_test(tc, constructors_match_the_assembler);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
