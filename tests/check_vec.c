/* check_vec.c: tests for the vector unit (sim/exec_vec.c), calling the handlers directly on a
 * hand-built core.  Every result is compared bit for bit with a plain C reference that walks
 * the lanes with the address formula of the contract, so strides, masks and the bytes an
 * instruction must not touch are all checked the same way. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core.h"
#include "fp16.h"
#include "vec_f16.h"
#include "vec_fma.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "float_bits.h"

#define UB_SIZE (256u * 1024)
#define L0C_SIZE (256u * 1024)
/* Tests keep their operands in the first REGION bytes of UB and check all of it. */
#define REGION (64u * 1024)

/* Only calls into Check on failure: ck_assert in loops of thousands of lanes is slow. */
#define CHECK(cond, ...)                           \
	do {                                       \
		if (!(cond))                       \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

static struct sim_device dev;
static struct sim_core core;
static struct sim_core_stats stats;
static char errbuf[1024];
static uint8_t snap[REGION];
static uint8_t touched[REGION];
static uint64_t rng;

static void setup(void)
{
	memset(&dev, 0, sizeof dev);
	dev.cfg.vector_bytes_per_cycle = 256;
	dev.cfg.vector_complex_cycles = 4;
	dev.cfg.vector_latency_cycles = 16;
	dev.cfg.mte_l0c_to_ub_bytes_per_cycle = 128;
	dev.cfg.mte_local_latency_cycles = 16;
	memset(&core, 0, sizeof core);
	memset(&stats, 0, sizeof stats);
	core.dev = &dev;
	core.buf[SIM_BUF_UB] = calloc(UB_SIZE, 1);
	core.buf[SIM_BUF_L0C] = calloc(L0C_SIZE, 1);
	ck_assert(core.buf[SIM_BUF_UB] && core.buf[SIM_BUF_L0C]);
	core.buf_size[SIM_BUF_UB] = UB_SIZE;
	core.buf_align[SIM_BUF_UB] = 32;
	core.buf_size[SIM_BUF_L0C] = L0C_SIZE;
	core.buf_align[SIM_BUF_L0C] = 64;
	core.st = &stats;
	core.err = errbuf;
	core.errlen = sizeof errbuf;
	core.mask[0] = core.mask[1] = ~UINT64_C(0);
	rng = 0x9e3779b97f4a7c15u;
}

static void teardown(void)
{
	free(core.buf[SIM_BUF_UB]);
	free(core.buf[SIM_BUF_L0C]);
}

/* --- small helpers ----------------------------------------------------------------- */

static uint32_t rnd32(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1du) >> 32);
}


static uint8_t *ub(uint64_t a) { return core.buf[SIM_BUF_UB] + a; }
static uint8_t *l0c(uint64_t a) { return core.buf[SIM_BUF_L0C] + a; }

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static void wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, sizeof v); }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); }
static void wrf(uint8_t *p, float f) { wr32(p, f2u(f)); }
static float rdf(const uint8_t *p) { return u2f(rd32(p)); }
static float rdh(const uint8_t *p) { return dv_f16_to_f32(rd16(p)); }

static int32_t s32_of(uint32_t u)
{
	int32_t s;

	memcpy(&s, &u, sizeof s);
	return s;
}

static int16_t s16_of(uint16_t u)
{
	int16_t s;

	memcpy(&s, &u, sizeof s);
	return s;
}

static uint16_t rand_f16(void)
{
	uint16_t h = (uint16_t)rnd32();

	return (h & 0x7c00) == 0x7c00 ? (uint16_t)(h & ~0x4000) : h; /* finite */
}

static uint32_t rand_f32(void)
{
	uint32_t u = rnd32();

	return (u & 0x7f800000) == 0x7f800000 ? u & ~0x40000000u : u; /* finite */
}

/* Random values of type dt over [a, a+n) of UB. */
static void fill(enum isa_dtype dt, uint64_t a, uint64_t n)
{
	uint64_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		switch (dt) {
		case ISA_DT_F16:
			wr16(ub(a + i), rand_f16());
			wr16(ub(a + i + 2), rand_f16());
			break;
		case ISA_DT_F32:
			wr32(ub(a + i), rand_f32());
			break;
		default:
			wr32(ub(a + i), rnd32());
			break;
		}
	}
}

static struct isa_dec vinsn(enum isa_op op, enum isa_dtype dt, int64_t rep)
{
	struct isa_dec in;

	memset(&in, 0, sizeof in);
	in.op = op;
	in.dt = dt;
	in.rep = rep;
	in.db = in.s0b = in.s1b = 1;
	in.dr = in.s0r = in.s1r = 8;
	return in;
}

static int run(sim_exec_fn fn, const struct isa_dec *in, int64_t rd, int64_t rs1, int64_t rs2,
	       int64_t rs3, struct sim_cost *cost)
{
	struct sim_qent e;

	memset(&e, 0, sizeof e);
	e.in = in;
	e.rd = rd;
	e.rs1 = rs1;
	e.rs2 = rs2;
	e.rs3 = rs3;
	errbuf[0] = 0;
	/* as the engine does: the cost function prices it, then the handler
	 * runs (the configuration may have changed since the last call) */
	sim_costcfg_init(&dev.cc, &dev.cfg);
	*cost = sim_insn_cost(&dev.cc, in, NULL, NULL, NULL);
	return fn(&core, &e, 0, cost);
}

/* Run and insist on success, reporting the simulator's message otherwise. */
static void run_ok(sim_exec_fn fn, const struct isa_dec *in, int64_t rd, int64_t rs1,
		   int64_t rs2, int64_t rs3, struct sim_cost *cost)
{
	int rc = run(fn, in, rd, rs1, rs2, rs3, cost);

	ck_assert_msg(rc == 0, "handler failed: %s", errbuf);
}

static void run_fail(sim_exec_fn fn, const struct isa_dec *in, int64_t rd, int64_t rs1,
		     int64_t rs2, int64_t rs3, const char *want)
{
	struct sim_cost cost;
	int rc = run(fn, in, rd, rs1, rs2, rs3, &cost);

	ck_assert_msg(rc == -1, "handler accepted an instruction that must fail (%s)", want);
	ck_assert_msg(strstr(errbuf, want) != NULL, "message \"%s\" lacks \"%s\"", errbuf, want);
}

static unsigned dtsize(enum isa_dtype dt) { return isa_dtype_size(dt); }

/* Address of lane i of repeat r, as the contract gives it. */
static uint64_t lane_at(uint64_t base, unsigned lanes, unsigned es, int64_t blk, int64_t rstr,
			uint64_t r, unsigned i)
{
	/* block strides count the operand's own blocks of lanes/8 elements */
	return base + r * (uint64_t)rstr * 32 + (i / (lanes / 8)) * (uint64_t)blk * (lanes / 8) * es +
	       (i % (lanes / 8)) * es;
}

static int lane_on(unsigned i)
{
	return (int)(core.mask[i / 64] >> (i % 64) & 1);
}

static unsigned active_lanes(unsigned lanes)
{
	unsigned n = 0;

	for (unsigned i = 0; i < lanes; i++)
		n += (unsigned)lane_on(i);
	return n;
}

static void take_snapshot(void)
{
	memcpy(snap, ub(0), REGION);
	memset(touched, 0, REGION);
}

static void mark(uint64_t a, unsigned n)
{
	memset(touched + a, 1, n);
}

/* Every byte not marked touched still holds its snapshot value. */
static void check_untouched(const char *what)
{
	for (unsigned j = 0; j < REGION; j++)
		CHECK(touched[j] || ub(j)[0] == snap[j],
		      "%s: byte 0x%x changed (%02x -> %02x), no unmasked lane is there", what, j,
		      snap[j], ub(j)[0]);
}

/* --- element-wise reference -------------------------------------------------------- */

enum kind { K_DUP, K_UN, K_BIN, K_SCAL };

#define DT(x) (1u << ISA_DT_##x)
#define FLOATS (DT(F16) | DT(F32))
#define ARITH (FLOATS | DT(S32) | DT(S16))

struct ew_case {
	const char *name;
	sim_exec_fn fn;
	enum isa_op op;
	enum kind kind;
	unsigned dts;
};

static const struct ew_case ew_cases[] = {
	{ "vadd", exec_VADD, ISA_OP_VADD, K_BIN, ARITH },
	{ "vsub", exec_VSUB, ISA_OP_VSUB, K_BIN, ARITH },
	{ "vmul", exec_VMUL, ISA_OP_VMUL, K_BIN, ARITH },
	{ "vdiv", exec_VDIV, ISA_OP_VDIV, K_BIN, FLOATS },
	{ "vmax", exec_VMAX, ISA_OP_VMAX, K_BIN, ARITH },
	{ "vmin", exec_VMIN, ISA_OP_VMIN, K_BIN, ARITH },
	{ "vmla", exec_VMLA, ISA_OP_VMLA, K_BIN, FLOATS },
	{ "vaddrelu", exec_VADDRELU, ISA_OP_VADDRELU, K_BIN, FLOATS },
	{ "vrelu", exec_VRELU, ISA_OP_VRELU, K_UN, ARITH },
	{ "vexp", exec_VEXP, ISA_OP_VEXP, K_UN, FLOATS },
	{ "vln", exec_VLN, ISA_OP_VLN, K_UN, FLOATS },
	{ "vsqrt", exec_VSQRT, ISA_OP_VSQRT, K_UN, FLOATS },
	{ "vrec", exec_VREC, ISA_OP_VREC, K_UN, FLOATS },
	{ "vrsqrt", exec_VRSQRT, ISA_OP_VRSQRT, K_UN, FLOATS },
	{ "vabs", exec_VABS, ISA_OP_VABS, K_UN, ARITH },
	{ "vmov", exec_VMOV, ISA_OP_VMOV, K_UN, ARITH },
	{ "vadds", exec_VADDS, ISA_OP_VADDS, K_SCAL, ARITH },
	{ "vmuls", exec_VMULS, ISA_OP_VMULS, K_SCAL, ARITH },
	{ "vmaxs", exec_VMAXS, ISA_OP_VMAXS, K_SCAL, ARITH },
	{ "vmins", exec_VMINS, ISA_OP_VMINS, K_SCAL, ARITH },
	{ "vdup", exec_VDUP, ISA_OP_VDUP, K_DUP, ARITH },
};
#define NCASES (sizeof ew_cases / sizeof ew_cases[0])

static const struct ew_case *ew_find(enum isa_op op)
{
	for (size_t i = 0; i < NCASES; i++)
		if (ew_cases[i].op == op)
			return &ew_cases[i];
	ck_abort_msg("no case for op %d", (int)op);
	return NULL;
}

static float ref_float(enum isa_op op, float a, float b, float d)
{
	switch (op) {
	case ISA_OP_VADD:
	case ISA_OP_VADDS:
		return a + b;
	case ISA_OP_VSUB:
		return a - b;
	case ISA_OP_VMUL:
	case ISA_OP_VMULS:
		return a * b;
	case ISA_OP_VDIV:
		return a / b;
	case ISA_OP_VMAX:
	case ISA_OP_VMAXS:
		return a > b ? a : b;
	case ISA_OP_VMIN:
	case ISA_OP_VMINS:
		return a < b ? a : b;
	case ISA_OP_VMLA:
		return fmaf(a, b, d);
	case ISA_OP_VADDRELU: /* rounding after the relu is the same as before it */
		return a + b > 0 ? a + b : 0.0f;
	case ISA_OP_VRELU:
		return a > 0 ? a : 0.0f;
	case ISA_OP_VEXP:
		return expf(a);
	case ISA_OP_VLN:
		return logf(a);
	case ISA_OP_VSQRT:
		return sqrtf(a);
	case ISA_OP_VREC:
		return 1.0f / a;
	case ISA_OP_VRSQRT:
		return 1.0f / sqrtf(a);
	case ISA_OP_VABS:
		return fabsf(a);
	default:
		return a;
	}
}

/* Integers in int64, so nothing can overflow; the caller keeps the low bits. */
static int64_t ref_int(enum isa_op op, int64_t a, int64_t b)
{
	switch (op) {
	case ISA_OP_VADD:
	case ISA_OP_VADDS:
		return a + b;
	case ISA_OP_VSUB:
		return a - b;
	case ISA_OP_VMUL:
	case ISA_OP_VMULS:
		return a * b;
	case ISA_OP_VMAX:
	case ISA_OP_VMAXS:
		return a > b ? a : b;
	case ISA_OP_VMIN:
	case ISA_OP_VMINS:
		return a < b ? a : b;
	case ISA_OP_VRELU:
		return a > 0 ? a : 0;
	case ISA_OP_VABS:
		return a < 0 ? -a : a;
	default:
		return a;
	}
}

/* Expected bytes of one dst lane from the snapshot's operand lanes. */
static void ref_lane(enum isa_op op, enum kind k, enum isa_dtype dt, const uint8_t *a,
		     const uint8_t *b, const uint8_t *d, int64_t scalar, uint8_t *out)
{
	uint32_t sbits = (uint32_t)(uint64_t)scalar;

	if (op == ISA_OP_VMOV) {
		memcpy(out, a, dtsize(dt));
		return;
	}
	switch (dt) {
	case ISA_DT_F16: {
		float fs = dv_f16_to_f32(dv_f32_to_f16(u2f(sbits)));
		float fb = k == K_BIN ? rdh(b) : fs;

		wr16(out, k == K_DUP ? dv_f32_to_f16(fs)
				     : dv_f32_to_f16(ref_float(op, rdh(a), fb, rdh(d))));
		break;
	}
	case ISA_DT_F32: {
		float fb = k == K_BIN ? rdf(b) : u2f(sbits);

		wrf(out, k == K_DUP ? u2f(sbits) : ref_float(op, rdf(a), fb, rdf(d)));
		break;
	}
	case ISA_DT_S32: {
		int64_t ib = k == K_BIN ? s32_of(rd32(b)) : s32_of(sbits);

		wr32(out, k == K_DUP ? sbits
				     : (uint32_t)(uint64_t)ref_int(op, s32_of(rd32(a)), ib));
		break;
	}
	default: {
		int64_t ib = k == K_BIN ? s16_of(rd16(b)) : s16_of((uint16_t)sbits);

		wr16(out, k == K_DUP ? (uint16_t)sbits
				     : (uint16_t)(uint64_t)ref_int(op, s16_of(rd16(a)), ib));
		break;
	}
	}
}

/* Run one element-wise instruction (template tmpl gives rep and strides) on random data and
 * check every dst lane, every untouched byte, the cost and the statistics. */
typedef void fill_fn(enum isa_dtype dt, uint64_t a, uint64_t n);

static void ew_check_with(fill_fn *filler, const struct ew_case *k, enum isa_dtype dt,
			  const struct isa_dec *tmpl, uint64_t d, uint64_t s0, uint64_t s1,
			  int64_t scalar)
{
	struct isa_dec in = *tmpl;
	struct sim_cost cost;
	unsigned es = dtsize(dt), lanes = 256 / es;
	uint64_t reps0 = stats.vec_repeats, flops0 = stats.vec_flops, per;
	uint8_t want[4];

	in.op = k->op;
	in.dt = dt;
	filler(dt, 0, REGION);
	take_snapshot();
	run_ok(k->fn, &in, (int64_t)d, (int64_t)s0, k->kind == K_BIN ? (int64_t)s1 : scalar, 0,
	       &cost);
	for (uint64_t r = 0; r < (uint64_t)in.rep; r++)
		for (unsigned i = 0; i < lanes; i++) {
			uint64_t od = lane_at(d, lanes, es, in.db, in.dr, r, i);
			uint64_t o0 = lane_at(s0, lanes, es, in.s0b, in.s0r, r, i);
			uint64_t o1 = lane_at(s1, lanes, es, in.s1b, in.s1r, r, i);

			if (!lane_on(i))
				continue;
			ref_lane(k->op, k->kind, dt, snap + o0, snap + o1, snap + od, scalar,
				 want);
			CHECK(memcmp(ub(od), want, es) == 0,
			      "%s %s: repeat %llu lane %u at 0x%llx: got %08x, want %08x", k->name,
			      isa_enum_dtype[dt], (unsigned long long)r, i, (unsigned long long)od,
			      es == 2 ? rd16(ub(od)) : rd32(ub(od)),
			      es == 2 ? rd16(want) : rd32(want));
			mark(od, es);
		}
	check_untouched(k->name);
	per = isa_table[k->op].flags & ISA_F_COMPLEX ? 4 : 1;
	ck_assert_uint_eq(cost.occ, (uint64_t)in.rep * per);
	ck_assert_uint_eq(cost.lat, 16);
	ck_assert_uint_eq(stats.vec_repeats - reps0, (uint64_t)in.rep);
	ck_assert_uint_eq(stats.vec_flops - flops0, (uint64_t)in.rep * active_lanes(lanes) *
							   (k->op == ISA_OP_VMLA || k->op == ISA_OP_VADDRELU ? 2 : 1));
}

static void ew_check(const struct ew_case *k, enum isa_dtype dt, const struct isa_dec *tmpl,
		     uint64_t d, uint64_t s0, uint64_t s1, int64_t scalar)
{
	ew_check_with(fill, k, dt, tmpl, d, s0, s1, scalar);
}

/* Half the lanes special values (zeros, infinities, quiet and signalling
 * NaNs with payloads and either sign, subnormals, the extremes), half any
 * bits at all: the element-wise loops are vectorised by the compiler and
 * must give the scalar reference's bits on every one. */
static void fill_special(enum isa_dtype dt, uint64_t a, uint64_t n)
{
	static const uint16_t h[] = { 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7d01,
				      0xfd55, 0x7fff, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400,
				      0x7bff, 0xfbff, 0x3c00, 0xbc00 };
	static const uint32_t f[] = { 0x00000000, 0x80000000, 0x7f800000, 0xff800000,
				      0x7fc00000, 0xffc00000, 0x7fa00001, 0xff812345,
				      0x7fffffff, 0x00000001, 0x80000001, 0x007fffff,
				      0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
				      0x3f800000, 0xbf800000 };

	if (dt == ISA_DT_F16)
		for (uint64_t i = 0; i + 2 <= n; i += 2) {
			uint32_t r = rnd32();
			wr16(ub(a + i), r & 1 ? h[(r >> 1) % (sizeof h / sizeof h[0])]
					      : (uint16_t)(r >> 16));
		}
	else
		for (uint64_t i = 0; i + 4 <= n; i += 4) {
			uint32_t r = rnd32();
			wr32(ub(a + i), r & 1 ? f[(r >> 1) % (sizeof f / sizeof f[0])] : rnd32());
		}
}

/* A few scalars per dtype: fp32 bits that f16 cannot hold, and integers wider than the type. */
static int64_t scalar_for(enum isa_dtype dt, unsigned which)
{
	static const float fs[] = { 0.1f, -1.75f, 3.0e-5f, 70000.0f };
	static const int64_t is[] = { INT64_C(0x123456789), -7, INT64_C(0x7fff8001), 0x12345 };

	if (dt == ISA_DT_F16 || dt == ISA_DT_F32)
		/* the high 32 bits are not part of the scalar */
		return (int64_t)f2u(fs[which % 4]) | INT64_C(0x5a5a000000000000);
	return is[which % 4];
}

START_TEST(test_ew_all_ops)
{
	/* every op on every dtype it supports, default strides, 3 repeats */
	for (size_t c = 0; c < NCASES; c++)
		for (unsigned dt = 0; dt < ISA_NDTYPES; dt++) {
			struct isa_dec t = vinsn(ew_cases[c].op, (enum isa_dtype)dt, 3);
			enum kind k = ew_cases[c].kind;
			unsigned nscal = k == K_SCAL || k == K_DUP ? 4 : 1; /* scalar variants */

			if (!(ew_cases[c].dts >> dt & 1))
				continue;
			for (unsigned s = 0; s < nscal; s++)
				ew_check(&ew_cases[c], (enum isa_dtype)dt, &t, 0x8000, 0x0, 0x2000,
					 scalar_for((enum isa_dtype)dt, s));
		}
}
END_TEST

START_TEST(test_ew_special_values)
{
	/* The float ops whose every result bit IEEE 754 and x86 define from the operands in
	 * order: subtraction and division (when two NaNs meet, the first operand's), the
	 * selections max, min, relu, abs and mov, and rec (1 / a: one NaN at most).  These the
	 * compiler vectorises (exec_vec.c, ew_float_ordered).  vadd, vmul and vmla are not
	 * here: with two NaN operands the payload is whichever operand the compiler puts first
	 * (both in the simulator and in this reference), so they stay scalar loops. */
	static const enum isa_op ops[] = { ISA_OP_VSUB, ISA_OP_VDIV, ISA_OP_VMAX, ISA_OP_VMIN,
					   ISA_OP_VRELU, ISA_OP_VREC, ISA_OP_VABS, ISA_OP_VMOV,
					   ISA_OP_VMAXS, ISA_OP_VMINS };

	for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
		for (unsigned dt = ISA_DT_F16; dt <= ISA_DT_F32; dt++) {
			struct isa_dec t = vinsn(ops[o], (enum isa_dtype)dt, 8);

			for (unsigned trial = 0; trial < 4; trial++)
				ew_check_with(fill_special, ew_find(ops[o]), (enum isa_dtype)dt, &t,
					      0x8000, 0x0, 0x4000,
					      scalar_for((enum isa_dtype)dt, trial));
		}
}
END_TEST

START_TEST(test_ew_strides)
{
	/* db=2 leaves gaps between dst blocks, dr=16 between repeats, s0r=0 feeds the same
	 * source repeat to every repeat, s1b=3/s1r=24 spreads src1 out */
	static const enum isa_op ops[] = { ISA_OP_VADD, ISA_OP_VMLA, ISA_OP_VEXP, ISA_OP_VMULS,
					   ISA_OP_VDUP, ISA_OP_VMOV, ISA_OP_VMAX };
	static const enum isa_dtype dts[] = { ISA_DT_F16, ISA_DT_F32 };

	for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
		for (size_t t = 0; t < 2; t++) {
			struct isa_dec in = vinsn(ops[o], dts[t], 4);

			in.db = 2;
			in.dr = 16;
			in.s0r = 0;
			in.s1b = 3;
			in.s1r = 24;
			ew_check(ew_find(ops[o]), dts[t], &in, 0x6000, 0x0, 0x1000,
				 scalar_for(dts[t], 1));
		}
	{
		/* integers too, and a zero block stride: all 8 source blocks are one block */
		struct isa_dec in = vinsn(ISA_OP_VSUB, ISA_DT_S16, 2);

		in.s0b = 0;
		in.dr = 9;
		ew_check(ew_find(ISA_OP_VSUB), ISA_DT_S16, &in, 0x6000, 0x0, 0x1000, 0);
	}
}
END_TEST

START_TEST(test_ew_in_place)
{
	/* dst == src0: each repeat reads its sources before it writes */
	struct isa_dec in = vinsn(ISA_OP_VADD, ISA_DT_F16, 4);
	struct sim_cost cost;

	fill(ISA_DT_F16, 0, REGION);
	take_snapshot();
	run_ok(exec_VADD, &in, 0x0, 0x0, 0x1000, 0, &cost);
	for (unsigned i = 0; i < 4 * 128; i++) {
		uint16_t want = dv_f32_to_f16(rdh(snap + 2 * i) + rdh(snap + 0x1000 + 2 * i));

		CHECK(rd16(ub(2 * i)) == want, "lane %u: %04x, want %04x", i, rd16(ub(2 * i)),
		      want);
	}
}
END_TEST

START_TEST(test_vmla_fused)
{
	/* (1+2^-10)^2 - (1+2^-9) = 2^-20 exactly; rounding the product to f16 first gives 0 */
	struct isa_dec in = vinsn(ISA_OP_VMLA, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (unsigned i = 0; i < 128; i++) {
		wr16(ub(2 * i), 0x3c01);
		wr16(ub(0x100 + 2 * i), 0x3c01);
		wr16(ub(0x200 + 2 * i), 0xbc02);
	}
	run_ok(exec_VMLA, &in, 0x200, 0x0, 0x100, 0, &cost);
	for (unsigned i = 0; i < 128; i++)
		ck_assert_uint_eq(rd16(ub(0x200 + 2 * i)), dv_f32_to_f16(0x1p-20f));
	/* f32: fmaf's single rounding, visible where a*b is inexact */
	in.dt = ISA_DT_F32;
	for (unsigned i = 0; i < 64; i++) {
		wrf(ub(4 * i), 1.0f + 0x1p-23f);
		wrf(ub(0x100 + 4 * i), 1.0f - 0x1p-23f);
		wrf(ub(0x200 + 4 * i), -1.0f);
	}
	run_ok(exec_VMLA, &in, 0x200, 0x0, 0x100, 0, &cost);
	for (unsigned i = 0; i < 64; i++)
		ck_assert_uint_eq(rd32(ub(0x200 + 4 * i)), f2u(-0x1p-46f));
	ck_assert_uint_eq(stats.vec_flops, 2 * 128 + 2 * 64);
}
END_TEST

/* vmla's lanes (dv_fmaf_n, SIMD where the host has FMA) against the C library's fmaf lane by
 * lane, bit for bit: random bit patterns (a quarter of them special: NaNs with payloads,
 * infinities, zeros, subnormals) and every lane count up to two vectors past a repeat, so
 * the tails past the last whole vector are covered too.  fmaf is called through a pointer:
 * called by name, GCC may swap its first two operands, which decides a NaN's payload. */
START_TEST(test_fmaf_n_matches_fmaf)
{
	static float (*volatile const fmaf_fn)(float, float, float) = fmaf;
	enum { N = 160 };
	static const uint32_t special[] = { 0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa00123,
					    0xff812345, 0x7f800000, 0xff800000, 0x00000000,
					    0x80000000, 0x00000001, 0x807fffff, 0x3f800000 };
	const size_t nspecial = sizeof special / sizeof special[0];
	float a[N], b[N], d[N], want[N];
	uint32_t x = 12345;
	unsigned paths = 0;

	for (unsigned round = 0; round < 400; round++) {
		unsigned n = round % (N + 1);
		for (unsigned i = 0; i < N; i++) {
			float *v[3] = { &a[i], &b[i], &d[i] };
			for (int j = 0; j < 3; j++) {
				x = x * 1664525u + 1013904223u;
				uint32_t r = x;
				x = x * 1664525u + 1013904223u;
				*v[j] = u2f((x >> 30) == 0 ? special[(x >> 8) % nspecial] : r);
			}
			want[i] = fmaf_fn(a[i], b[i], d[i]);
		}
		for (int p = DV_FMA_LIBM; p <= DV_FMA_AVX512 + 1; p++) {
			float out[N];
			memcpy(out, d, sizeof out);
			/* the last: the dispatcher */
			if (p <= DV_FMA_AVX512 ? dv_fmaf_n_path((enum dv_fma_path)p, a, b, out, n)
					       : (dv_fmaf_n(a, b, out, n), 0))
				continue; /* not on this host */
			for (unsigned i = 0; i < N; i++)
				if (f2u(out[i]) != f2u(i < n ? want[i] : d[i]))
					ck_abort_msg("round %u, path %d, lane %u of %u: fmaf gives "
						     "0x%08x, dv_fmaf_n 0x%08x", round, p, i, n,
						     (unsigned)f2u(i < n ? want[i] : d[i]),
						     (unsigned)f2u(out[i]));
			paths |= 1u << p;
		}
	}
	/* the reference and the dispatcher always run */
	ck_assert_uint_eq(paths & 9u, 9u);
}
END_TEST

/* vec_f16.c's one-pass fp16 lanes against a lane-by-lane reference, bit for bit: widen
 * exactly, apply the operation as x86 defines it with the first source first (two NaNs:
 * the first's payload, quieted; max/min the C selections; mla as dv_fmaf_n), narrow with
 * round to nearest even.  Random fp16 patterns, a quarter special (NaNs with payloads,
 * infinities, zeros, subnormals), both widths, a broadcast scalar src1, and dst in place
 * of src0. */
static float quiet(float f) { return u2f(f2u(f) | 0x00400000u); }

static uint16_t ref_f16_lane(enum dv_f16_op op, uint16_t ha, uint16_t hb, float bs, int scal,
			     uint16_t hd)
{
	float a = dv_f16_to_f32(ha), b = scal ? bs : dv_f16_to_f32(hb), d = dv_f16_to_f32(hd);
	float r;
	int nan2 = isnan(a) || isnan(b);
	float first = isnan(a) ? quiet(a) : quiet(b);

	switch (op) {
	case DV_F16_ADD: r = nan2 ? first : a + b; break;
	case DV_F16_SUB: r = nan2 ? first : a - b; break;
	case DV_F16_MUL: r = nan2 ? first : a * b; break;
	case DV_F16_MAX: r = a > b ? a : b; break;
	case DV_F16_MIN: r = a < b ? a : b; break;
	case DV_F16_MLA: r = d; dv_fmaf_n(&a, &b, &r, 1); break;
	case DV_F16_ADDRELU: r = nan2 ? first : a + b; r = r > 0.0f ? r : 0.0f; break;
	default: r = a > 0.0f ? a : 0.0f; break;
	}
	return dv_f32_to_f16(r);
}

START_TEST(test_f16_one_pass)
{
	enum { N = 128 };
	static const uint16_t special[] = { 0x7e00, 0xfe01, 0x7c01, 0x7d23, 0xfc45, 0x7c00,
					    0xfc00, 0x0000, 0x8000, 0x0001, 0x83ff, 0x3c00 };
	const size_t nspecial = sizeof special / sizeof special[0];
	uint16_t a[N], b[N], d[N], out[N];
	uint32_t x = 777;
	unsigned paths = 0;

	for (unsigned round = 0; round < 200; round++) {
		for (unsigned i = 0; i < N; i++) {
			uint16_t *v[3] = { &a[i], &b[i], &d[i] };
			for (int j = 0; j < 3; j++) {
				x = x * 1664525u + 1013904223u;
				uint16_t r = (uint16_t)(x >> 16);
				x = x * 1664525u + 1013904223u;
				*v[j] = (x >> 30) == 0 ? special[(x >> 8) % nspecial] : r;
			}
		}
		float bs = dv_f16_to_f32(b[round % N]);
		for (int op = DV_F16_ADD; op <= DV_F16_RELU; op++)
			for (int path = 1; path <= 2; path++)
				for (int form = 0; form < 3; form++) { /* vector, scalar, in place */
					int scal = form == 1;
					memcpy(out, form == 2 ? a : d, sizeof out);
					struct dv_f16_opnd oa = { (unsigned char *)(form == 2 ? out : a), 32, 256 };
					struct dv_f16_opnd ob = { (unsigned char *)b, 32, 256 };
					struct dv_f16_opnd od = { (unsigned char *)out, 32, 256 };
					if (dv_f16_ew_path(path, (enum dv_f16_op)op, 1, &oa,
							   scal ? NULL : &ob, scal ? &bs : NULL, &od))
						continue; /* not on this host */
					paths |= 1u << path;
					for (unsigned i = 0; i < N; i++) {
						uint16_t want = ref_f16_lane(
							(enum dv_f16_op)op, a[i], b[i], bs, scal,
							form == 2 ? a[i] : d[i]);
						if (out[i] != want)
							ck_abort_msg("round %u, op %d, path %d, form %d, "
								     "lane %u: a 0x%04x b 0x%04x d 0x%04x "
								     "want 0x%04x got 0x%04x",
								     round, op, path, form, i, a[i],
								     scal ? dv_f32_to_f16(bs) : b[i],
								     d[i], want, out[i]);
					}
				}
	}
#if defined(__x86_64__) && !defined(__clang__)
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
	    __builtin_cpu_supports("f16c"))
		ck_assert_uint_ne(paths & 2u, 0); /* the AVX2 path ran */
#endif
}
END_TEST

START_TEST(test_int_wrap)
{
	/* wrap-around at the type's edges, not saturation */
	struct isa_dec in = vinsn(ISA_OP_VADD, ISA_DT_S32, 1);
	struct sim_cost cost;

	wr32(ub(0), 0x7fffffff);
	wr32(ub(0x100), 1);
	wr32(ub(4), 0x80000000u);
	wr32(ub(0x104), 0);
	run_ok(exec_VADD, &in, 0x200, 0x0, 0x100, 0, &cost);
	ck_assert_uint_eq(rd32(ub(0x200)), 0x80000000u);
	in.op = ISA_OP_VABS;
	run_ok(exec_VABS, &in, 0x200, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd32(ub(0x204)), 0x80000000u); /* |INT32_MIN| wraps to itself */
	in.dt = ISA_DT_S16;
	in.op = ISA_OP_VMULS;
	wr16(ub(0), 0x4000);
	run_ok(exec_VMULS, &in, 0x200, 0x0, 4, 0, &cost);
	ck_assert_uint_eq(rd16(ub(0x200)), 0); /* 0x4000 * 4 = 0x10000 */
}
END_TEST

/* --- masks ------------------------------------------------------------------------- */

START_TEST(test_vmaskn_values)
{
	static const struct {
		int64_t n;
		uint64_t m0, m1;
	} t[] = {
		{ 0, ~UINT64_C(0), ~UINT64_C(0) },   { 1, 1, 0 },
		{ 37, (UINT64_C(1) << 37) - 1, 0 },  { 64, ~UINT64_C(0), 0 },
		{ 65, ~UINT64_C(0), 1 },             { 127, ~UINT64_C(0), ~UINT64_C(0) >> 1 },
		{ 128, ~UINT64_C(0), ~UINT64_C(0) }, { 1000, ~UINT64_C(0), ~UINT64_C(0) },
		{ -1, ~UINT64_C(0), ~UINT64_C(0) },
	};
	struct isa_dec in = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		core.mask[0] = core.mask[1] = 0x5555;
		run_ok(exec_VMASKN, &in, 0, t[i].n, 0, 0, &cost);
		ck_assert_uint_eq(core.mask[0], t[i].m0);
		ck_assert_uint_eq(core.mask[1], t[i].m1);
		ck_assert_uint_eq(cost.occ, 1);
		ck_assert_uint_eq(cost.lat, 0);
	}
	in.op = ISA_OP_VMASK;
	run_ok(exec_VMASK, &in, 0, 0x1111, 0x2222, 0, &cost);
	ck_assert_uint_eq(core.mask[1], 0x1111);
	ck_assert_uint_eq(core.mask[0], 0x2222);
	ck_assert_uint_eq(cost.occ, 1);
	ck_assert_uint_eq(cost.lat, 0);
	ck_assert_uint_eq(stats.vec_repeats, 0);
}
END_TEST

START_TEST(test_masked_ops)
{
	/* masked-off lanes keep their old dst bytes (ew_check checks every byte) */
	static const enum isa_op ops[] = { ISA_OP_VADD, ISA_OP_VMLA, ISA_OP_VABS, ISA_OP_VDUP,
					   ISA_OP_VMOV, ISA_OP_VMINS };
	struct isa_dec mk = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (unsigned m = 0; m < 3; m++) {
		if (m == 0) {
			run_ok(exec_VMASKN, &mk, 0, 37, 0, 0, &cost);
		} else if (m == 1) {
			mk.op = ISA_OP_VMASK;
			run_ok(exec_VMASK, &mk, 0, INT64_C(0x00ff00f0deadbeef),
			       INT64_C(0x0123456789abcdef), 0, &cost);
		} else {
			run_ok(exec_VMASKN, &mk, 0, 100, 0, 0, &cost);
		}
		for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
			for (unsigned dt = 0; dt < 4; dt++) {
				const struct ew_case *k = ew_find(ops[o]);
				struct isa_dec in = vinsn(ops[o], (enum isa_dtype)dt, 2);

				if (!(k->dts >> dt & 1))
					continue;
				in.db = 2;
				in.dr = 20;
				ew_check(k, (enum isa_dtype)dt, &in, 0x8000, 0x0, 0x2000,
					 scalar_for((enum isa_dtype)dt, 0));
			}
	}
}
END_TEST

/* --- reductions -------------------------------------------------------------------- */

static void red_check(sim_exec_fn fn, enum isa_op op, enum isa_dtype dt, int64_t rep,
		      int64_t s0b, int64_t s0r)
{
	struct isa_dec in = vinsn(op, dt, rep);
	struct sim_cost cost;
	unsigned es = dtsize(dt), lanes = 256 / es;
	const uint64_t d = 0xa000;

	in.s0b = s0b;
	in.s0r = s0r;
	fill(dt, 0, REGION);
	take_snapshot();
	run_ok(fn, &in, d, 0x0, 0, 0, &cost);
	for (uint64_t r = 0; r < (uint64_t)rep; r++) {
		uint8_t want[4];
		float facc = 0;
		int64_t iacc = 0;
		int any = 0;

		/* start from the first unmasked lane rather than an identity element */
		for (unsigned i = 0; i < lanes; i++) {
			const uint8_t *p = snap + lane_at(0, lanes, es, s0b, s0r, r, i);
			float f = dt == ISA_DT_F16 ? rdh(p) : rdf(p);
			int64_t v = dt == ISA_DT_S32 ? s32_of(rd32(p)) : s16_of(rd16(p));

			if (!lane_on(i))
				continue;
			if (!any) {
				facc = f;
				iacc = v;
				any = 1;
				continue;
			}
			switch (op) {
			case ISA_OP_VCADD:
				facc += f;
				iacc += v;
				break;
			case ISA_OP_VCMAX:
				facc = f > facc ? f : facc;
				iacc = v > iacc ? v : iacc;
				break;
			default:
				facc = f < facc ? f : facc;
				iacc = v < iacc ? v : iacc;
				break;
			}
		}
		if (!any) {
			facc = op == ISA_OP_VCADD ? 0.0f
			       : op == ISA_OP_VCMAX ? -INFINITY : INFINITY;
			iacc = op == ISA_OP_VCADD ? 0
			       : op == ISA_OP_VCMAX ? (dt == ISA_DT_S32 ? INT32_MIN : INT16_MIN)
						    : (dt == ISA_DT_S32 ? INT32_MAX : INT16_MAX);
		}
		if (dt == ISA_DT_F16)
			wr16(want, dv_f32_to_f16(facc));
		else if (dt == ISA_DT_F32)
			wrf(want, facc);
		else if (dt == ISA_DT_S32)
			wr32(want, (uint32_t)(uint64_t)iacc);
		else
			wr16(want, (uint16_t)(uint64_t)iacc);
		CHECK(memcmp(ub(d + r * es), want, es) == 0,
		      "%s %s repeat %llu: got %08x want %08x",
		      isa_table[op].mnemonic, isa_enum_dtype[dt], (unsigned long long)r,
		      es == 2 ? rd16(ub(d + r * es)) : rd32(ub(d + r * es)),
		      es == 2 ? rd16(want) : rd32(want));
		mark(d + r * es, es);
	}
	check_untouched(isa_table[op].mnemonic);
	ck_assert_uint_eq(cost.occ, (uint64_t)rep);
}

START_TEST(test_reductions)
{
	static const struct {
		sim_exec_fn fn;
		enum isa_op op;
	} ops[] = { { exec_VCADD, ISA_OP_VCADD }, { exec_VCMAX, ISA_OP_VCMAX },
		    { exec_VCMIN, ISA_OP_VCMIN } };
	struct isa_dec mk = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (unsigned m = 0; m < 4; m++) {
		if (m == 1)
			run_ok(exec_VMASKN, &mk, 0, 37, 0, 0, &cost);
		if (m == 2)
			run_ok(exec_VMASK, &mk, 0, INT64_C(0x8000000000000001), 0x10, 0, &cost);
		if (m == 3) /* every lane masked: the empty results */
			run_ok(exec_VMASK, &mk, 0, 0, 0, 0, &cost);
		for (size_t o = 0; o < 3; o++)
			for (unsigned dt = 0; dt < 4; dt++) {
				red_check(ops[o].fn, ops[o].op, (enum isa_dtype)dt, 5, 1, 8);
				red_check(ops[o].fn, ops[o].op, (enum isa_dtype)dt, 3, 2, 0);
			}
	}
}
END_TEST

START_TEST(test_vcadd_fp32_accumulation)
{
	/* 2048 + 127 * 1: an f16 accumulator sticks at 2048 (its ulp there is 2), fp32 gets
	 * 2175, which rounds once to 2176 */
	struct isa_dec in = vinsn(ISA_OP_VCADD, ISA_DT_F16, 1);
	struct sim_cost cost;

	wr16(ub(0), dv_f32_to_f16(2048.0f));
	for (unsigned i = 1; i < 128; i++)
		wr16(ub(2 * i), dv_f32_to_f16(1.0f));
	run_ok(exec_VCADD, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd16(ub(0x400)), dv_f32_to_f16(2176.0f));
	ck_assert_uint_eq(stats.vec_flops, 128);
}
END_TEST

START_TEST(test_reduction_empty)
{
	struct isa_dec in = vinsn(ISA_OP_VCADD, ISA_DT_F16, 2);
	struct sim_cost cost;

	core.mask[0] = core.mask[1] = 0;
	memset(ub(0x400), 0x77, 64);
	run_ok(exec_VCADD, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd16(ub(0x400)), 0);
	ck_assert_uint_eq(rd16(ub(0x402)), 0);
	ck_assert_uint_eq(rd16(ub(0x404)), 0x7777);
	in.op = ISA_OP_VCMAX;
	run_ok(exec_VCMAX, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd16(ub(0x400)), 0xfc00);
	in.op = ISA_OP_VCMIN;
	in.dt = ISA_DT_F32;
	run_ok(exec_VCMIN, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd32(ub(0x400)), f2u(INFINITY));
	in.dt = ISA_DT_S32;
	run_ok(exec_VCMIN, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd32(ub(0x400)), 0x7fffffffu);
	in.op = ISA_OP_VCMAX;
	in.dt = ISA_DT_S16;
	run_ok(exec_VCMAX, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(rd16(ub(0x400)), 0x8000);
	ck_assert_uint_eq(stats.vec_flops, 0);
}
END_TEST

/* --- vcmp / vsel ------------------------------------------------------------------- */

static int ref_cmp(enum isa_cmp k, double a, double b)
{
	switch (k) {
	case ISA_CMP_EQ:
		return a == b;
	case ISA_CMP_NE:
		return a != b;
	case ISA_CMP_LT:
		return a < b;
	case ISA_CMP_LE:
		return a <= b;
	case ISA_CMP_GT:
		return a > b;
	default:
		return a >= b;
	}
}

/* Random operands where a quarter of the src1 lanes equal src0's and, for floats, some
 * lanes are quiet NaNs, infinities or signed zeros. */
static void fill_cmp(enum isa_dtype dt, uint64_t a0, uint64_t a1, uint64_t n)
{
	unsigned es = dtsize(dt);

	fill(dt, a0, n);
	fill(dt, a1, n);
	for (uint64_t i = 0; i < n; i += es) {
		uint32_t r = rnd32() % 16;

		if (r < 4)
			memcpy(ub(a1 + i), ub(a0 + i), es);
		if (dt == ISA_DT_F16 && r == 4)
			wr16(ub(a0 + i), 0x7e00 | (rnd32() & 0x1ff));
		if (dt == ISA_DT_F16 && r == 5)
			wr16(ub(a1 + i), 0xfe00);
		if (dt == ISA_DT_F16 && r == 6)
			wr16(ub(a0 + i), 0x7c00);
		if (dt == ISA_DT_F16 && r == 7) {
			wr16(ub(a0 + i), 0x8000);
			wr16(ub(a1 + i), 0x0000);
		}
		if (dt == ISA_DT_F32 && r == 4)
			wr32(ub(a0 + i), 0x7fc00000u | (rnd32() & 0xffff));
		if (dt == ISA_DT_F32 && r == 5)
			wr32(ub(a1 + i), 0xffc00000u);
		if (dt == ISA_DT_F32 && r == 7) {
			wr32(ub(a0 + i), 0x80000000u);
			wr32(ub(a1 + i), 0);
		}
	}
}

static double lane_value(enum isa_dtype dt, const uint8_t *p)
{
	switch (dt) {
	case ISA_DT_F16:
		return rdh(p);
	case ISA_DT_F32:
		return rdf(p);
	case ISA_DT_S32:
		return s32_of(rd32(p));
	default:
		return s16_of(rd16(p));
	}
}

/* One vcmp with src1 spread out (s1b=2, s1r=16): every bit, masked ones 0, nothing else
 * written. */
static void cmp_check(enum isa_dtype dt, enum isa_cmp k)
{
	struct isa_dec in = vinsn(ISA_OP_VCMP, dt, 3);
	struct sim_cost cost;
	unsigned es = dtsize(dt), lanes = 256 / es;
	const uint64_t d = 0xc000;

	in.cmp = k;
	in.s1b = 2;
	in.s1r = 16;
	fill(ISA_DT_S32, 0, REGION);
	fill_cmp(dt, 0x0, 0x1000, 0x1000);
	take_snapshot();
	run_ok(exec_VCMP, &in, d, 0x0, 0x1000, 0, &cost);
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < lanes; i++) {
			double a = lane_value(dt, snap + lane_at(0, lanes, es, 1, 8, r, i));
			double b = lane_value(dt, snap + lane_at(0x1000, lanes, es, 2, 16, r, i));
			int want = lane_on(i) && ref_cmp(k, a, b);
			int got = ub(d + r * lanes / 8 + i / 8)[0] >> (i % 8) & 1;

			CHECK(got == want, "vcmp %s %s r %u lane %u: %d, want %d", isa_enum_cmp[k],
			      isa_enum_dtype[dt], r, i, got, want);
		}
	mark(d, 3 * lanes / 8);
	check_untouched("vcmp");
	ck_assert_uint_eq(cost.occ, 3);
}

START_TEST(test_vcmp)
{
	struct isa_dec mk = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (unsigned m = 0; m < 2; m++) {
		if (m)
			run_ok(exec_VMASKN, &mk, 0, 37, 0, 0, &cost);
		for (unsigned dt = 0; dt < 4; dt++)
			for (unsigned k = 0; k < ISA_NCMP; k++)
				cmp_check((enum isa_dtype)dt, (enum isa_cmp)k);
	}
}
END_TEST

START_TEST(test_vcmp_vsel_is_vmax)
{
	/* where(x > y, x, y) == vmax(x, y), NaNs and signed zeros included */
	struct isa_dec mk = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (unsigned m = 0; m < 2; m++) {
		if (m)
			run_ok(exec_VMASK, &mk, 0, INT64_C(0x0f0f0f0f0f0f0f0f), -3, 0, &cost);
		for (unsigned dt = 0; dt < 4; dt++) {
			struct isa_dec cmp = vinsn(ISA_OP_VCMP, (enum isa_dtype)dt, 4);
			struct isa_dec sel = vinsn(ISA_OP_VSEL, (enum isa_dtype)dt, 4);
			struct isa_dec max = vinsn(ISA_OP_VMAX, (enum isa_dtype)dt, 4);

			cmp.cmp = ISA_CMP_GT;
			fill_cmp((enum isa_dtype)dt, 0x0, 0x1000, 0x1000);
			memset(ub(0x4000), 0xa5, 0x2000);
			run_ok(exec_VCMP, &cmp, 0x3000, 0x0, 0x1000, 0, &cost);
			run_ok(exec_VSEL, &sel, 0x4000, 0x0, 0x1000, 0x3000, &cost);
			ck_assert_uint_eq(cost.occ, 4);
			run_ok(exec_VMAX, &max, 0x5000, 0x0, 0x1000, 0, &cost);
			CHECK(memcmp(ub(0x4000), ub(0x5000), 0x1000) == 0,
			      "vsel(vcmp gt) differs from vmax for %s", isa_enum_dtype[dt]);
		}
	}
}
END_TEST

START_TEST(test_vsel_strides)
{
	struct isa_dec sel = vinsn(ISA_OP_VSEL, ISA_DT_F32, 3);
	struct sim_cost cost;
	const uint64_t d = 0x6000, bits = 0x5000;

	sel.db = 2;
	sel.dr = 17;
	sel.s0r = 0;
	sel.s1b = 0;
	fill(ISA_DT_F32, 0, REGION);
	core.mask[0] = ~UINT64_C(0) << 3;
	take_snapshot();
	run_ok(exec_VSEL, &sel, d, 0x0, 0x1000, bits, &cost);
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < 64; i++) {
			uint64_t od = lane_at(d, 64, 4, 2, 17, r, i);
			int bit = snap[bits + r * 8 + i / 8] >> (i % 8) & 1;
			uint64_t os = bit ? lane_at(0, 64, 4, 1, 0, r, i)
					  : lane_at(0x1000, 64, 4, 0, 8, r, i);

			if (!lane_on(i))
				continue;
			CHECK(rd32(ub(od)) == rd32(snap + os), "vsel r %u lane %u", r, i);
			mark(od, 4);
		}
	check_untouched("vsel");
}
END_TEST

/* --- vconv ------------------------------------------------------------------------- */

static double ref_round(double x, enum isa_rnd r)
{
	switch (r) {
	case ISA_RND_TRUNC:
		return trunc(x);
	case ISA_RND_FLOOR:
		return floor(x);
	case ISA_RND_CEIL:
		return ceil(x);
	case ISA_RND_AWAY:
		return round(x);
	default:
		return nearbyint(x); /* the default mode is to nearest, ties to even */
	}
}

static int64_t ref_to_int(double x, enum isa_rnd r, int64_t lo, int64_t hi)
{
	double v;

	if (isnan(x))
		return 0;
	v = ref_round(x, r);
	return v < (double)lo ? lo : v > (double)hi ? hi : (int64_t)v;
}

/* An integer to f16 with one rounding, done on the integer: independent of any float path. */
static uint16_t ref_int_to_f16(int64_t v)
{
	uint64_t a = (uint64_t)(v < 0 ? -v : v), ulp = 1, q, rem;
	unsigned top = 0;

	if (a >= 65520)
		return v < 0 ? 0xfc00 : 0x7c00;
	while (top < 63 && (a >> (top + 1)))
		top++;
	if (top > 10)
		ulp = UINT64_C(1) << (top - 10);
	q = a / ulp;
	rem = a % ulp;
	if (2 * rem > ulp || (2 * rem == ulp && (q & 1)))
		q++;
	return dv_f32_to_f16((float)(v < 0 ? -(double)(q * ulp) : (double)(q * ulp)));
}

static void ref_conv(enum isa_dtype dt, enum isa_dtype st, enum isa_rnd r, const uint8_t *s,
		     uint8_t *out)
{
	double x = 0;
	int64_t iv = 0;
	int is_int = 0;

	switch (st) {
	case ISA_DT_F16:
		x = rdh(s);
		break;
	case ISA_DT_F32:
		x = rdf(s);
		break;
	case ISA_DT_S32:
		iv = s32_of(rd32(s));
		is_int = 1;
		break;
	case ISA_DT_S16:
		iv = s16_of(rd16(s));
		is_int = 1;
		break;
	case ISA_DT_S8:
		iv = (int8_t)s[0];
		is_int = 1;
		break;
	default:
		iv = s[0];
		is_int = 1;
		break;
	}
	switch (dt) {
	case ISA_DT_F32:
		wrf(out, is_int ? (float)iv : (float)x); /* int: (float) is RNE */
		break;
	case ISA_DT_F16:
		wr16(out, is_int ? ref_int_to_f16(iv) : dv_f32_to_f16((float)x));
		break;
	case ISA_DT_S32:
		wr32(out, (uint32_t)(uint64_t)ref_to_int(x, r, INT32_MIN, INT32_MAX));
		break;
	case ISA_DT_S16:
		wr16(out, (uint16_t)(uint64_t)ref_to_int(x, r, INT16_MIN, INT16_MAX));
		break;
	case ISA_DT_S8:
		out[0] = (uint8_t)(uint64_t)ref_to_int(x, r, INT8_MIN, INT8_MAX);
		break;
	default:
		out[0] = (uint8_t)ref_to_int(x, r, 0, UINT8_MAX);
		break;
	}
}

/* Sources that exercise rounding: ties, saturation, NaN, infinities, large integers. */
static void fill_conv(enum isa_dtype st, uint64_t a, uint64_t n)
{
	static const float f32s[] = { 2.5f, -2.5f, 3.5f, -0.5f, 0.49999997f, 1e10f, -1e10f,
				      2147483648.0f, -2147483648.0f, 2147483520.0f, 16777215.5f,
				      65519.0f, 65520.0f, 1e-40f };
	static const uint32_t s32s[] = { 2049, 2051, 65504, 65519, 65520, 0x7fffffff, 0x80000000u,
					 16777217, 16777219, 0xfffeffff, 4095, 0x01000003 };

	fill(st == ISA_DT_F16 || st == ISA_DT_F32 ? st : ISA_DT_S32, a, n);
	/* about half the lanes get one of the interesting values instead */
	for (uint64_t i = 0; i < n; i += dtsize(st)) {
		uint32_t r = rnd32() % 8;
		int32_t half = (int32_t)(rnd32() % 1200) - 600; /* ties for every mode */

		switch (st) {
		case ISA_DT_F32:
			if (r == 0)
				wrf(ub(a + i), f32s[rnd32() % 14]);
			else if (r == 1)
				wrf(ub(a + i), (float)half / 4);
			else if (r == 2)
				wr32(ub(a + i), 0x7fc00000u | (rnd32() & 0x803fffffu));
			break;
		case ISA_DT_F16:
			if (r < 3)
				wr16(ub(a + i), dv_f32_to_f16((float)half / 2));
			else if (r == 3)
				wr16(ub(a + i), rnd32() % 2 ? 0x7c00 : 0x7e00);
			break;
		case ISA_DT_S32:
			if (r < 3)
				wr32(ub(a + i), (rnd32() % 2 ? 1u : ~0u) * s32s[rnd32() % 12]);
			else if (r == 3)
				wr32(ub(a + i), (uint32_t)((int32_t)(rnd32() % 140000) - 70000));
			break;
		case ISA_DT_S16:
			if (r < 2) /* odd values above 2048 are f16 ties */
				wr16(ub(a + i), (uint16_t)(2049 + 2 * (rnd32() % 8)));
			break;
		default:
			break;
		}
	}
}

static void conv_check(enum isa_dtype dt, enum isa_dtype st, enum isa_rnd rnd, int64_t rep,
		       int64_t db, int64_t dr, int64_t s0b, int64_t s0r)
{
	struct isa_dec in = vinsn(ISA_OP_VCONV, dt, rep);
	struct sim_cost cost;
	unsigned des = dtsize(dt), ses = dtsize(st);
	unsigned lanes = 256 / (des > ses ? des : ses);
	const uint64_t d = 0x8000;

	in.st = st;
	in.rnd = rnd;
	in.db = db;
	in.dr = dr;
	in.s0b = s0b;
	in.s0r = s0r;
	fill(ISA_DT_S32, 0, REGION);
	fill_conv(st, 0, 0x8000);
	take_snapshot();
	run_ok(exec_VCONV, &in, d, 0x0, 0, 0, &cost);
	for (uint64_t r = 0; r < (uint64_t)rep; r++)
		for (unsigned i = 0; i < lanes; i++) {
			uint64_t od = lane_at(d, lanes, des, db, dr, r, i);
			uint64_t os = lane_at(0, lanes, ses, s0b, s0r, r, i);
			uint8_t want[4];

			if (!lane_on(i))
				continue;
			ref_conv(dt, st, rnd, snap + os, want);
			CHECK(memcmp(ub(od), want, des) == 0,
			      "vconv %s->%s rnd %s r %llu lane %u: src %08x got %08x want %08x",
			      isa_enum_dtype[st], isa_enum_dtype[dt], isa_enum_rnd[rnd],
			      (unsigned long long)r, i, rd32(snap + os),
			      des == 1 ? ub(od)[0] : des == 2 ? rd16(ub(od)) : rd32(ub(od)),
			      des == 1 ? want[0] : des == 2 ? rd16(want) : rd32(want));
			mark(od, des);
		}
	check_untouched("vconv");
	ck_assert_uint_eq(cost.occ, (uint64_t)rep);
}

START_TEST(test_vconv_pairs)
{
	static const struct {
		enum isa_dtype dt, st;
		int rounds; /* rnd applies: try every mode */
	} pairs[] = {
		{ ISA_DT_F32, ISA_DT_F16, 0 }, { ISA_DT_F16, ISA_DT_F32, 0 },
		{ ISA_DT_S32, ISA_DT_F32, 1 }, { ISA_DT_S32, ISA_DT_F16, 1 },
		{ ISA_DT_F32, ISA_DT_S32, 0 }, { ISA_DT_F16, ISA_DT_S32, 0 },
		{ ISA_DT_S8, ISA_DT_F16, 1 },  { ISA_DT_U8, ISA_DT_F16, 1 },
		{ ISA_DT_F16, ISA_DT_S8, 0 },  { ISA_DT_F16, ISA_DT_U8, 0 },
		{ ISA_DT_S16, ISA_DT_F16, 1 }, { ISA_DT_F16, ISA_DT_S16, 0 },
	};
	struct isa_dec mk = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct sim_cost cost;

	for (unsigned m = 0; m < 2; m++) {
		if (m)
			run_ok(exec_VMASK, &mk, 0, INT64_C(0x00000000ffff0001),
			       INT64_C(0x7777777777777777), 0, &cost);
		for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
			for (unsigned r = 0; r < (pairs[p].rounds ? ISA_NRND : 1); r++) {
				enum isa_dtype dt = pairs[p].dt, st = pairs[p].st;

				/* default strides; then a spread-out dst and one source repeat */
				conv_check(dt, st, (enum isa_rnd)r, 6, 1, 8, 1, 8);
				conv_check(dt, st, (enum isa_rnd)r, 3, 2, 20, 1, 0);
			}
	}
}
END_TEST

START_TEST(test_vconv_values)
{
	/* spot values, so the reference itself is pinned down */
	struct isa_dec in = vinsn(ISA_OP_VCONV, ISA_DT_S32, 1);
	struct sim_cost cost;
	static const struct {
		float x;
		int32_t rne, trunc, floor, ceil, away;
	} t[] = {
		{ 2.5f, 2, 2, 2, 3, 3 },      { -2.5f, -2, -2, -3, -2, -3 },
		{ 3.5f, 4, 3, 3, 4, 4 },      { -0.75f, -1, 0, -1, 0, -1 },
		{ 1e10f, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX },
		{ -1e10f, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN },
		{ NAN, 0, 0, 0, 0, 0 },
	};

	in.st = ISA_DT_F32;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int32_t want[5] = { t[i].rne, t[i].trunc, t[i].floor, t[i].ceil, t[i].away };

		for (unsigned r = 0; r < ISA_NRND; r++) {
			wrf(ub(0), t[i].x);
			in.rnd = r;
			run_ok(exec_VCONV, &in, 0x400, 0x0, 0, 0, &cost);
			ck_assert_int_eq(s32_of(rd32(ub(0x400))), want[r]);
		}
	}
	/* s32 -> f16 rounds the integer once: ties to even, 65520 and up is infinity */
	in.dt = ISA_DT_F16;
	in.st = ISA_DT_S32;
	in.rnd = ISA_RND_RNE;
	{
		static const int32_t v[] = { 2049, 2051, 65519, 65520, INT32_MAX, -70000, 4097 };
		static const uint16_t h[] = { 0x6800, 0x6802, 0x7bff, 0x7c00, 0x7c00, 0xfc00,
					      0x6c00 };

		for (size_t i = 0; i < 7; i++)
			wr32(ub(4 * i), (uint32_t)v[i]);
		run_ok(exec_VCONV, &in, 0x400, 0x0, 0, 0, &cost);
		for (size_t i = 0; i < 7; i++)
			ck_assert_uint_eq(rd16(ub(0x400 + 2 * i)), h[i]);
	}
	/* saturation to the small types */
	in.st = ISA_DT_F16;
	in.dt = ISA_DT_S8;
	wr16(ub(0), dv_f32_to_f16(300.5f));
	wr16(ub(2), dv_f32_to_f16(-3.5f));
	wr16(ub(4), 0xfc00);
	run_ok(exec_VCONV, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_int_eq((int8_t)ub(0x400)[0], 127);
	ck_assert_int_eq((int8_t)ub(0x401)[0], -4);
	ck_assert_int_eq((int8_t)ub(0x402)[0], -128);
	in.dt = ISA_DT_U8;
	run_ok(exec_VCONV, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(ub(0x400)[0], 255);
	ck_assert_uint_eq(ub(0x401)[0], 0);
	in.dt = ISA_DT_S16;
	wr16(ub(0), dv_f32_to_f16(40000.0f));
	run_ok(exec_VCONV, &in, 0x400, 0x0, 0, 0, &cost);
	ck_assert_int_eq(s16_of(rd16(ub(0x400))), 32767);
	/* every s8 and u8 value in two repeats of 128 lanes; a source block is 16 one-byte
	 * lanes, so with s0b=1 the blocks sit at 32-byte spacing with gaps between them */
	for (unsigned st = ISA_DT_S8; st <= ISA_DT_U8; st++) {
		in.dt = ISA_DT_F16;
		in.st = st;
		in.rep = 2;
		for (unsigned i = 0; i < 256; i++)
			ub(lane_at(0, 128, 1, 1, 8, i / 128, i % 128))[0] = (uint8_t)i;
		run_ok(exec_VCONV, &in, 0x400, 0x0, 0, 0, &cost);
		for (unsigned i = 0; i < 256; i++) {
			int v = st == ISA_DT_S8 ? (int8_t)i : (int)i;

			ck_assert_uint_eq(rd16(ub(0x400 + 2 * i)), dv_f32_to_f16((float)v));
		}
	}
}
END_TEST

/* --- mov.l0c.ub -------------------------------------------------------------------- */

/* nfrac 3 fractals with gaps on both sides, for one cvt and relu setting. */
static void l0c_check(enum isa_cvt cvt, int relu)
{
	const uint64_t src = 0x400, d = 0x1000;
	const int64_t nfrac = 3, sgap = 1, dgap = 2;
	const float scale = 3.7e-3f;
	struct isa_dec in;
	struct sim_cost cost;
	const uint64_t vs = 0x3000; /* deqv's 16 per-column scales */
	unsigned dbytes =
		cvt == ISA_CVT_F16 || cvt == ISA_CVT_DEQF16 || cvt == ISA_CVT_DEQV ? 512 : 1024;
	unsigned des = dbytes / 256;
	int is_int = cvt == ISA_CVT_S32 || cvt == ISA_CVT_DEQF16 || cvt == ISA_CVT_DEQV;
	float col[16];
	uint64_t before = stats.l0c_to_ub_bytes;

	memset(&in, 0, sizeof in);
	in.op = ISA_OP_MOV_L0C_UB;
	in.nfrac = nfrac;
	in.sgap = sgap;
	in.dgap = dgap;
	in.cvt = cvt;
	in.relu = relu;
	for (unsigned i = 0; i < 16 * 1024; i += 4) {
		int32_t v = (int32_t)(rnd32() % 2000001) - 1000000;

		if (is_int)
			wr32(l0c(i), (uint32_t)v);
		else
			wrf(l0c(i), (float)(v / 100) / (float)(1 + rnd32() % 64));
	}
	fill(ISA_DT_S32, 0, REGION);
	for (unsigned n = 0; n < 16; n++) {
		col[n] = (float)(n + 1) * (n % 2 ? -1.3e-4f : 2.1e-3f);
		wrf(ub(vs + 4 * n), col[n]);
	}
	take_snapshot();
	run_ok(exec_MOV_L0C_UB, &in, d, src,
	       cvt == ISA_CVT_DEQV ? (int64_t)vs : (int64_t)f2u(scale), 0, &cost);
	for (unsigned f = 0; f < nfrac; f++)
		for (unsigned i = 0; i < 256; i++) {
			const uint8_t *s = l0c(src + f * (1 + sgap) * 1024 + 4 * i);
			uint64_t od = d + f * (1 + dgap) * dbytes + i * des;
			int32_t v = s32_of(rd32(s));
			float x = cvt == ISA_CVT_DEQF16 ? (float)v * scale
				  : cvt == ISA_CVT_DEQV ? (float)v * col[i % 16]
							: rdf(s);
			uint32_t got = des == 2 ? rd16(ub(od)) : rd32(ub(od)), want;

			if (relu) {
				x = x > 0 ? x : 0.0f;
				v = v < 0 ? 0 : v;
			}
			want = cvt == ISA_CVT_S32    ? (uint32_t)v
			       : cvt == ISA_CVT_NONE ? f2u(x)
						     : dv_f32_to_f16(x);
			CHECK(got == want, "cvt %s relu %d frac %u elem %u: %08x, want %08x",
			      isa_enum_cvt[cvt], relu, f, i, got, want);
			mark(od, des);
		}
	check_untouched("mov.l0c.ub");
	ck_assert_uint_eq(stats.l0c_to_ub_bytes - before, 3 * 1024);
	ck_assert_uint_eq(cost.occ, 3 * 1024 / 128);
	ck_assert_uint_eq(cost.lat, 16);
}

START_TEST(test_mov_l0c_ub)
{
	for (unsigned cvt = 0; cvt < ISA_NCVT; cvt++)
		for (int relu = 0; relu < 2; relu++)
			l0c_check((enum isa_cvt)cvt, relu);
}
END_TEST

/* --- cost, timing-only, errors ----------------------------------------------------- */

START_TEST(test_costs)
{
	struct isa_dec in = vinsn(ISA_OP_VADD, ISA_DT_F16, 1);
	struct sim_cost cost;

	run_ok(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, &cost);
	ck_assert_uint_eq(cost.occ, 1);
	ck_assert_uint_eq(cost.lat, 16);
	in.rep = 10;
	run_ok(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, &cost);
	ck_assert_uint_eq(cost.occ, 10);
	in.op = ISA_OP_VEXP;
	in.rep = 3;
	run_ok(exec_VEXP, &in, 0x2000, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(cost.occ, 12); /* complex: x4 */
	in.op = ISA_OP_VDIV;
	run_ok(exec_VDIV, &in, 0x2000, 0x0, 0x1000, 0, &cost);
	ck_assert_uint_eq(cost.occ, 12);
	/* a narrower datapath: ceil(256 / 100) = 3 cycles per repeat */
	dev.cfg.vector_bytes_per_cycle = 100;
	in.op = ISA_OP_VADD;
	in.rep = 2;
	run_ok(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, &cost);
	ck_assert_uint_eq(cost.occ, 6);
	in.op = ISA_OP_VRSQRT;
	run_ok(exec_VRSQRT, &in, 0x2000, 0x0, 0, 0, &cost);
	ck_assert_uint_eq(cost.occ, 24);
	ck_assert_uint_eq(stats.vec_repeats, 1 + 10 + 3 + 3 + 2 + 2);
	ck_assert_uint_eq(stats.vec_flops, 128 * (1 + 10 + 3 + 3 + 2 + 2));
	/* f32 has 64 lanes; vmaskn 37 counts 37 */
	in.dt = ISA_DT_F32;
	in.op = ISA_OP_VMLA;
	core.mask[0] = (UINT64_C(1) << 37) - 1;
	core.mask[1] = ~UINT64_C(0); /* beyond f32's 64 lanes: not counted */
	stats.vec_flops = 0;
	run_ok(exec_VMLA, &in, 0x2000, 0x0, 0x1000, 0, &cost);
	ck_assert_uint_eq(stats.vec_flops, 2 * 37 * 2);
}
END_TEST

/* Every kind of instruction, run on the current device mode; fills costs[]. */
static void run_all_kinds(struct sim_cost *costs)
{
	struct isa_dec bin = vinsn(ISA_OP_VADD, ISA_DT_F16, 5);
	struct isa_dec ex = vinsn(ISA_OP_VEXP, ISA_DT_F32, 3);
	struct isa_dec cv = vinsn(ISA_OP_VCONV, ISA_DT_F32, 4);
	struct isa_dec red = vinsn(ISA_OP_VCADD, ISA_DT_F16, 4);
	struct isa_dec cmp = vinsn(ISA_OP_VCMP, ISA_DT_F16, 2);
	struct isa_dec sel = vinsn(ISA_OP_VSEL, ISA_DT_F16, 2);
	struct isa_dec dup = vinsn(ISA_OP_VDUP, ISA_DT_S16, 2);
	struct isa_dec mk = vinsn(ISA_OP_VMASKN, ISA_DT_F16, 1);
	struct isa_dec mv;

	memset(&mv, 0, sizeof mv);
	mv.op = ISA_OP_MOV_L0C_UB;
	mv.nfrac = 2;
	mv.cvt = ISA_CVT_F16;
	cv.st = ISA_DT_F16;
	cmp.cmp = ISA_CMP_LT;
	run_ok(exec_VADD, &bin, 0x2000, 0x0, 0x1000, 0, &costs[0]);
	run_ok(exec_VEXP, &ex, 0x3000, 0x0, 0, 0, &costs[1]);
	run_ok(exec_VCONV, &cv, 0x4000, 0x0, 0, 0, &costs[2]);
	run_ok(exec_VCADD, &red, 0x5000, 0x0, 0, 0, &costs[3]);
	run_ok(exec_VCMP, &cmp, 0x5100, 0x0, 0x1000, 0, &costs[4]);
	run_ok(exec_VSEL, &sel, 0x6000, 0x0, 0x1000, 0x5100, &costs[5]);
	run_ok(exec_VDUP, &dup, 0x7000, 0, 5, 0, &costs[6]);
	run_ok(exec_MOV_L0C_UB, &mv, 0x8000, 0x0, 0, 0, &costs[7]);
	run_ok(exec_VMASKN, &mk, 0, 37, 0, 0, &costs[8]);
	/* after the mask: lane counts differ from here on */
	run_ok(exec_VADD, &bin, 0x9000, 0x0, 0x1000, 0, &costs[9]);
}

START_TEST(test_timing_only)
{
	struct sim_cost full[10], timing[10];
	struct sim_core_stats st_full, st_timing;
	static uint8_t ub_before[UB_SIZE], l0c_before[L0C_SIZE];

	fill(ISA_DT_F16, 0, REGION);
	for (unsigned i = 0; i < 4096; i++)
		l0c(0)[i] = (uint8_t)rnd32();
	dev.timing_only = 1;
	memcpy(ub_before, ub(0), UB_SIZE);
	memcpy(l0c_before, l0c(0), L0C_SIZE);
	run_all_kinds(timing);
	ck_assert_msg(memcmp(ub_before, ub(0), UB_SIZE) == 0, "timing-only run changed UB");
	ck_assert_msg(memcmp(l0c_before, l0c(0), L0C_SIZE) == 0, "timing-only run changed L0C");
	ck_assert_uint_eq(core.mask[0], (UINT64_C(1) << 37) - 1); /* the mask is still set */
	st_timing = stats;
	memset(&stats, 0, sizeof stats);
	core.mask[0] = core.mask[1] = ~UINT64_C(0);
	dev.timing_only = 0;
	run_all_kinds(full);
	ck_assert_msg(memcmp(ub_before, ub(0), UB_SIZE) != 0, "full run changed nothing");
	st_full = stats;
	for (unsigned i = 0; i < 10; i++) {
		ck_assert_uint_eq(full[i].occ, timing[i].occ);
		ck_assert_uint_eq(full[i].lat, timing[i].lat);
	}
	ck_assert_uint_eq(st_full.vec_repeats, st_timing.vec_repeats);
	ck_assert_uint_eq(st_full.vec_flops, st_timing.vec_flops);
	ck_assert_uint_eq(st_full.l0c_to_ub_bytes, st_timing.l0c_to_ub_bytes);
	ck_assert_uint_eq(st_full.vec_flops, 5 * 128 + 3 * 64 + 4 * 64 + 4 * 128 + 2 * 128 +
						     2 * 128 + 2 * 128 + 5 * 37);
}
END_TEST

START_TEST(test_errors)
{
	struct isa_dec in = vinsn(ISA_OP_VADD, ISA_DT_F16, 0);
	struct isa_dec mv;
	struct sim_core_stats st0;

	fill(ISA_DT_F16, 0, REGION);
	take_snapshot();
	/* rep */
	run_fail(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, "rep must be 1..255");
	in.rep = 256;
	run_fail(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, "rep must be 1..255");
	in.op = ISA_OP_VCADD;
	in.rep = 0;
	run_fail(exec_VCADD, &in, 0x2000, 0x0, 0, 0, "rep must be 1..255");
	/* footprint: the last repeat's last block must fit */
	in = vinsn(ISA_OP_VADD, ISA_DT_F16, 1);
	{
		struct sim_cost cost;

		run_ok(exec_VADD, &in, UB_SIZE - 256, 0x0, 0x1000, 0, &cost);
		in.rep = 2;
		run_fail(exec_VADD, &in, UB_SIZE - 256, 0x0, 0x1000, 0, "outside");
		in.dr = 0; /* every repeat on the same 256 bytes */
		run_ok(exec_VADD, &in, UB_SIZE - 256, 0x0, 0x1000, 0, &cost);
	}
	in = vinsn(ISA_OP_VADD, ISA_DT_F16, 1);
	in.s1b = 2;
	run_fail(exec_VADD, &in, 0x2000, 0x0, UB_SIZE - 256, 0, "outside");
	run_fail(exec_VADD, &in, 0x2000, -32, 0x1000, 0, "outside");
	in.s1b = 1;
	run_fail(exec_VADD, &in, 0x2000, 0x0, 0x1010, 0, "aligned");
	run_fail(exec_VADD, &in, 0x2008, 0x0, 0x1000, 0, "aligned");
	in.op = ISA_OP_VCADD;
	in.rep = 17; /* 17 f16 results from the last 32 bytes: one byte too many */
	run_fail(exec_VCADD, &in, UB_SIZE - 32, 0x0, 0, 0, "outside");
	in.op = ISA_OP_VCMP;
	in.rep = 3; /* 48 bytes of bits */
	run_fail(exec_VCMP, &in, UB_SIZE - 32, 0x0, 0x1000, 0, "outside");
	in.op = ISA_OP_VSEL;
	run_fail(exec_VSEL, &in, 0x2000, 0x0, 0x1000, UB_SIZE - 32, "outside");
	run_fail(exec_VSEL, &in, 0x2000, 0x0, 0x1000, 0x3004, "aligned");
	/* dtypes */
	in = vinsn(ISA_OP_VEXP, ISA_DT_S32, 1);
	run_fail(exec_VEXP, &in, 0x2000, 0x0, 0, 0, "vexp: dtype s32");
	in.dt = ISA_DT_S16;
	in.op = ISA_OP_VDIV;
	run_fail(exec_VDIV, &in, 0x2000, 0x0, 0x1000, 0, "vdiv: dtype s16");
	in.dt = ISA_DT_S32;
	run_fail(exec_VDIV, &in, 0x2000, 0x0, 0x1000, 0, "vdiv: dtype s32");
	in.dt = ISA_DT_S8;
	in.op = ISA_OP_VADD;
	run_fail(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, "vadd: dtype s8");
	in.dt = ISA_DT_U8;
	in.op = ISA_OP_VCMAX;
	run_fail(exec_VCMAX, &in, 0x2000, 0x0, 0, 0, "vcmax: dtype u8");
	in.op = ISA_OP_VMOV;
	run_fail(exec_VMOV, &in, 0x2000, 0x0, 0, 0, "vmov: dtype u8");
	in.dt = ISA_DT_S32;
	in.op = ISA_OP_VMLA;
	run_fail(exec_VMLA, &in, 0x2000, 0x0, 0x1000, 0, "vmla: dtype s32");
	in.dt = 9;
	in.op = ISA_OP_VADD;
	run_fail(exec_VADD, &in, 0x2000, 0x0, 0x1000, 0, "not supported");
	/* vconv pairs and rounding */
	in = vinsn(ISA_OP_VCONV, ISA_DT_S8, 1);
	in.st = ISA_DT_F32;
	run_fail(exec_VCONV, &in, 0x2000, 0x0, 0, 0, "f32 -> s8 is not supported");
	in.dt = ISA_DT_F16;
	in.st = ISA_DT_F16;
	run_fail(exec_VCONV, &in, 0x2000, 0x0, 0, 0, "f16 -> f16 is not supported");
	in.st = ISA_DT_F32;
	in.rnd = ISA_RND_TRUNC;
	run_fail(exec_VCONV, &in, 0x2000, 0x0, 0, 0, "nearest even");
	in.st = ISA_DT_S32;
	run_fail(exec_VCONV, &in, 0x2000, 0x0, 0, 0, "nearest even");
	/* mov.l0c.ub */
	memset(&mv, 0, sizeof mv);
	mv.op = ISA_OP_MOV_L0C_UB;
	mv.nfrac = 0;
	run_fail(exec_MOV_L0C_UB, &mv, 0x2000, 0x0, 0, 0, "nfrac");
	mv.nfrac = 2;
	run_fail(exec_MOV_L0C_UB, &mv, 0x2000, L0C_SIZE - 1024, 0, 0, "outside");
	run_fail(exec_MOV_L0C_UB, &mv, 0x2000, 0x20, 0, 0, "aligned");
	mv.cvt = ISA_CVT_F16;
	mv.dgap = 1;
	run_fail(exec_MOV_L0C_UB, &mv, UB_SIZE - 1024, 0x0, 0, 0, "outside");
	mv.cvt = 7;
	run_fail(exec_MOV_L0C_UB, &mv, 0x2000, 0x0, 0, 0, "cvt");
	/* failures change nothing: no data, no statistics */
	memset(touched, 0, sizeof touched);
	check_untouched("failed instructions");
	memset(&st0, 0, sizeof st0);
	stats.vec_repeats -= 3; /* the three run_ok calls above */
	stats.vec_flops -= 3 * 128;
	ck_assert_msg(memcmp(&stats, &st0, sizeof st0) == 0, "failed instructions counted");
}
END_TEST

START_TEST(test_footprint_exact)
{
	/* the footprint is checked to the byte: shrink the buffer instead of moving operands,
	 * since aligned bases only move in 32-byte steps */
	struct isa_dec in = vinsn(ISA_OP_VADD, ISA_DT_F16, 1);
	struct sim_cost cost;

	core.buf_size[SIM_BUF_UB] = UB_SIZE - 1;
	run_fail(exec_VADD, &in, UB_SIZE - 256, 0x0, 0x1000, 0, "outside");
	/* f16 -> f32: 64 lanes, so a source block is 16 bytes, block stride 1 is contiguous
	 * and the last block ends 128 bytes after the base */
	in = vinsn(ISA_OP_VCONV, ISA_DT_F32, 1);
	in.st = ISA_DT_F16;
	core.buf_size[SIM_BUF_UB] = UB_SIZE - 128;
	run_ok(exec_VCONV, &in, 0x0, UB_SIZE - 256, 0, 0, &cost);
	core.buf_size[SIM_BUF_UB] = UB_SIZE - 129;
	run_fail(exec_VCONV, &in, 0x0, UB_SIZE - 256, 0, 0, "outside");
	/* vcmp: rep * lanes/8 bytes of bits */
	in = vinsn(ISA_OP_VCMP, ISA_DT_F32, 4); /* 32 bytes */
	core.buf_size[SIM_BUF_UB] = UB_SIZE;
	run_ok(exec_VCMP, &in, UB_SIZE - 32, 0x0, 0x1000, 0, &cost);
	core.buf_size[SIM_BUF_UB] = UB_SIZE - 1;
	run_fail(exec_VCMP, &in, UB_SIZE - 32, 0x0, 0x1000, 0, "outside");
	/* mov.l0c.ub: the last fractal ends the footprint, gaps after it do not count */
	memset(&in, 0, sizeof in);
	in.op = ISA_OP_MOV_L0C_UB;
	in.nfrac = 2;
	in.sgap = 3;
	in.dgap = 5;
	in.cvt = ISA_CVT_F16;
	core.buf_size[SIM_BUF_UB] = UB_SIZE;
	run_ok(exec_MOV_L0C_UB, &in, UB_SIZE - 6 * 512 - 512, L0C_SIZE - 4 * 1024 - 1024, 0, 0,
	       &cost);
	run_fail(exec_MOV_L0C_UB, &in, UB_SIZE - 6 * 512 - 512, L0C_SIZE - 4 * 1024 - 960, 0, 0,
		 "outside");
	run_fail(exec_MOV_L0C_UB, &in, UB_SIZE - 6 * 512 - 480, L0C_SIZE - 4 * 1024 - 1024, 0, 0,
		 "outside");
}
END_TEST

/* vaddreluconv is bit for bit vadd (in st), vrelu, vconv rnd=rne: run both on the same
 * sources (values that round, saturate, tie, NaN) with the drain's strides (the int8 pair
 * interleave db=2, a broadcast src1) and plain ones, and compare the destinations. */
static void addreluconv_check(enum isa_dtype dt, enum isa_dtype st, int64_t rep, int64_t db,
			      int64_t dr, int64_t s1b, int64_t s1r)
{
	struct isa_dec in = vinsn(ISA_OP_VADDRELUCONV, dt, rep), ch;
	struct sim_cost cost;
	const uint64_t s0 = 0x0, s1 = 0x4000, t = 0x8000, d = 0xc000, d2 = 0x10000, span = 0x4000;

	in.st = st;
	in.db = db;
	in.dr = dr;
	in.s1b = s1b;
	in.s1r = s1r;
	fill_conv(st, s0, span);
	fill_conv(st, s1, span);
	fill(ISA_DT_S32, d, span);
	memcpy(ub(d2), ub(d), span);
	run_ok(exec_VADDRELUCONV, &in, d, s0, s1, 0, &cost);
	ck_assert_uint_eq(cost.occ, (uint64_t)rep);
	ch = vinsn(ISA_OP_VADD, st, rep);
	ch.s1b = s1b;
	ch.s1r = s1r;
	run_ok(exec_VADD, &ch, t, s0, s1, 0, &cost);
	ch = vinsn(ISA_OP_VRELU, st, rep);
	run_ok(exec_VRELU, &ch, t, t, 0, 0, &cost);
	ch = vinsn(ISA_OP_VCONV, dt, rep);
	ch.st = st;
	ch.rnd = ISA_RND_RNE;
	ch.db = db;
	ch.dr = dr;
	run_ok(exec_VCONV, &ch, d2, t, 0, 0, &cost);
	for (uint64_t i = 0; i < span; i++)
		CHECK(ub(d)[i] == ub(d2)[i], "vaddreluconv %s->%s db %lld: byte %llu: %02x, chain %02x",
		      isa_enum_dtype[st], isa_enum_dtype[dt], (long long)db, (unsigned long long)i,
		      ub(d)[i], ub(d2)[i]);
}

START_TEST(test_vaddreluconv)
{
	struct isa_dec in;

	addreluconv_check(ISA_DT_S8, ISA_DT_F16, 7, 1, 4, 1, 8);
	addreluconv_check(ISA_DT_S8, ISA_DT_F16, 9, 2, 8, 0, 0); /* the int8 drain's form */
	addreluconv_check(ISA_DT_F16, ISA_DT_F32, 6, 1, 4, 2, 16);
	in = vinsn(ISA_OP_VADDRELUCONV, ISA_DT_U8, 1);
	in.st = ISA_DT_F16;
	run_fail(exec_VADDRELUCONV, &in, 0x2000, 0x0, 0x1000, 0, "f16 -> u8 is not supported");
	in.dt = ISA_DT_S8;
	in.rep = 0;
	run_fail(exec_VADDRELUCONV, &in, 0x2000, 0x0, 0x1000, 0, "rep");
	in.rep = 2;
	run_fail(exec_VADDRELUCONV, &in, 0x2000, 0x0, UB_SIZE - 256, 0, "outside");
}
END_TEST

static Suite *vec_suite(void)
{
	Suite *s = suite_create("vec");
	TCase *tc = tcase_create("vec");

	tcase_add_checked_fixture(tc, setup, teardown);
	/* the lane-by-lane loops are slow under the sanitizers */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_ew_all_ops);
	tcase_add_test(tc, test_ew_special_values);
	tcase_add_test(tc, test_ew_strides);
	tcase_add_test(tc, test_ew_in_place);
	tcase_add_test(tc, test_vmla_fused);
	tcase_add_test(tc, test_fmaf_n_matches_fmaf);
	tcase_add_test(tc, test_f16_one_pass);
	tcase_add_test(tc, test_int_wrap);
	tcase_add_test(tc, test_vmaskn_values);
	tcase_add_test(tc, test_masked_ops);
	tcase_add_test(tc, test_reductions);
	tcase_add_test(tc, test_vcadd_fp32_accumulation);
	tcase_add_test(tc, test_reduction_empty);
	tcase_add_test(tc, test_vcmp);
	tcase_add_test(tc, test_vcmp_vsel_is_vmax);
	tcase_add_test(tc, test_vsel_strides);
	tcase_add_test(tc, test_vconv_pairs);
	tcase_add_test(tc, test_vconv_values);
	tcase_add_test(tc, test_vaddreluconv);
	tcase_add_test(tc, test_mov_l0c_ub);
	tcase_add_test(tc, test_costs);
	tcase_add_test(tc, test_timing_only);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_footprint_exact);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vec_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
