/* check_isa: the ISA table checks itself; encode/decode/disassemble/assemble
 * round trips over every opcode; assembler errors. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"

/* A random value that fits field f. */
static int64_t random_value(const struct isa_field *f, uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	if (f->kind == ISA_FK_R)
		return (int64_t)(*s % ISA_NREGS);
	if (f->kind == ISA_FK_E) {
		int64_t n = 0;
		while (f->names[n])
			n++;
		return (int64_t)(*s % (uint64_t)n);
	}
	if (f->kind == ISA_FK_I) {
		if (f->width == 64)
			return (int64_t)*s;
		int64_t half = INT64_C(1) << (f->width - 1);
		return (int64_t)(*s % (uint64_t)(2 * half)) - half;
	}
	return f->width == 64 ? (int64_t)(*s >> 1)
			      : (int64_t)(*s & ((UINT64_C(1) << f->width) - 1));
}

START_TEST(table_fields_fit_and_do_not_overlap)
{
	for (int f = 0; f < ISA_NFMTS; f++) {
		const struct isa_format *fmt = &isa_formats[f];
		uint8_t used[128] = { 0 };
		for (int b = 0; b < 8; b++)
			used[b] = 1; /* opcode */
		ck_assert_uint_le(fmt->nfields, ISA_MAX_FIELDS);
		for (unsigned i = 0; i < fmt->nfields; i++) {
			const struct isa_field *fl = &fmt->fields[i];
			ck_assert_msg(fl->lsb + fl->width <= 128, "%s.%s past bit 127", fmt->name,
				      fl->name);
			ck_assert_msg(fl->width >= 1, "%s.%s empty", fmt->name, fl->name);
			for (unsigned b = fl->lsb; b < fl->lsb + fl->width; b++) {
				ck_assert_msg(!used[b], "format %s: field %s overlaps at bit %u",
					      fmt->name, fl->name, b);
				used[b] = 1;
			}
			if (fl->kind == ISA_FK_R)
				ck_assert_uint_eq(fl->width, 5);
			if (fl->kind == ISA_FK_E)
				ck_assert_ptr_nonnull(fl->names);
			for (unsigned j = 0; j < i; j++)
				ck_assert_msg(strcmp(fmt->fields[j].name, fl->name),
					      "format %s: field %s twice", fmt->name, fl->name);
		}
	}
}
END_TEST

START_TEST(table_opcodes_and_mnemonics_unique)
{
	unsigned n = 0;
	for (unsigned a = 0; a < ISA_NOPS; a++) {
		if (!isa_table[a].mnemonic)
			continue;
		n++;
		ck_assert_uint_ne(a, 0); /* zeroed memory never decodes */
		ck_assert_int_lt(isa_table[a].fmt, ISA_NFMTS);
		ck_assert_uint_eq(isa_lookup(isa_table[a].mnemonic), a);
		for (unsigned b = a + 1; b < ISA_NOPS; b++)
			if (isa_table[b].mnemonic)
				ck_assert_msg(strcmp(isa_table[a].mnemonic, isa_table[b].mnemonic),
					      "mnemonic %s twice", isa_table[a].mnemonic);
	}
	/* the opcode values in isa.def are the designated-initializer indices,
	 * so a duplicated opcode would shrink this count */
	unsigned rows = 0;
#define ISA_INSN(id, mn, opc, fmt, pipe, flags, syn) rows++;
#include "isa.def"
	ck_assert_uint_eq(n, rows);
}
END_TEST

/* Encode random operands for every opcode, decode, compare; disassemble and
 * re-assemble to the same bytes. */
START_TEST(round_trip_every_opcode)
{
	uint64_t s = 0x1234567;
	for (unsigned op = 0; op < ISA_NOPS; op++) {
		const struct isa_info *info = isa_info(op);
		if (!info)
			continue;
		const struct isa_format *fmt = &isa_formats[info->fmt];
		for (int trial = 0; trial < 200; trial++) {
			struct isa_insn in;
			struct isa_dec out, want;
			memset(&in, 0, sizeof in);
			memset(&want, 0, sizeof want);
			in.op = op;
			want.op = (uint8_t)op;
			for (unsigned i = 0; i < fmt->nfields; i++) {
				int64_t v = trial == 0 ? 0 : random_value(&fmt->fields[i], &s);
				isa_field_set(&in, &fmt->fields[i], v);
				isa_dec_set(&want, &fmt->fields[i], v);
				ck_assert_int_eq(isa_dec_get(&want, &fmt->fields[i]), v);
			}
			uint8_t bytes[ISA_INSN_BYTES], again[ISA_INSN_BYTES];
			char err[256];
			ck_assert_msg(isa_encode(&in, bytes, err, sizeof err) == 0, "%s", err);
			ck_assert_int_eq(isa_decode(bytes, &out), 0);
			ck_assert_msg(memcmp(&want, &out, sizeof out) == 0, "%s decode mismatch",
				      info->mnemonic);
			char text[256];
			isa_disasm(&out, text, sizeof text);
			struct isa_program prog;
			ck_assert_msg(isa_assemble(text, "rt.s", &prog, err, sizeof err) == 0,
				      "'%s': %s", text, err);
			ck_assert_uint_eq(prog.ninsns, 1);
			memcpy(again, prog.code, ISA_INSN_BYTES);
			isa_program_free(&prog);
			ck_assert_msg(memcmp(bytes, again, ISA_INSN_BYTES) == 0, "'%s' re-assembled",
				      text);
		}
	}
}
END_TEST

/* aipp.gm.l1 (the AIPP load, isa/aipp.h): its four registers and nrow
 * assemble, decode and disassemble back to the same text. */
START_TEST(aipp_load_round_trip)
{
	struct isa_program a, b;
	char err[256], text[256];
	ck_assert_msg(isa_assemble("aipp.gm.l1 x8, x6, x2, x7, nrow=12\n", "t.s", &a, err,
				   sizeof err) == 0, "%s", err);
	struct isa_dec in;
	ck_assert_int_eq(isa_decode(a.code, &in), 0);
	ck_assert_int_eq(in.op, ISA_OP_AIPP_GM_L1);
	ck_assert_int_eq(in.rd, 8);
	ck_assert_int_eq(in.rs1, 6);
	ck_assert_int_eq(in.rs2, 2);
	ck_assert_int_eq(in.rs3, 7);
	ck_assert_int_eq(in.nrow, 12);
	isa_disasm(&in, text, sizeof text);
	ck_assert_msg(strstr(text, "aipp.gm.l1") && strstr(text, "nrow=12"), "%s", text);
	ck_assert_msg(isa_assemble(text, "t2.s", &b, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(memcmp(a.code, b.code, ISA_INSN_BYTES), 0);
	isa_program_free(&a);
	isa_program_free(&b);
	/* nrow is required */
	ck_assert_int_ne(isa_assemble("aipp.gm.l1 x8, x6, x2, x7\n", "t.s", &a, err, sizeof err),
			 0);
}
END_TEST

/* A whole listing (with its pc comments) re-assembles to the same bytes. */
START_TEST(listing_reassembles)
{
	const char *src = ".equ N, 4\n"
			  "start:  li x1, N*2    # a comment\n"
			  "        li x2, 1.5\n"
			  "loop:   addi x1, x1, -1\n"
			  "        vadd x3, x4, x5, dt=f16, rep=N\n"
			  "        set_flag src=v, dst=mte3, ev=1\n"
			  "        bne x1, x0, loop ; another\n"
			  "        jmp start // and another\n"
			  "        end\n";
	struct isa_program a, b;
	char err[256];
	ck_assert_msg(isa_assemble(src, "t.s", &a, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(a.ninsns, 8);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_int_eq(isa_disasm_program(f, a.code, a.ninsns * ISA_INSN_BYTES, 1), 0);
	fclose(f);
	ck_assert_msg(isa_assemble(text, "listing.s", &b, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(b.ninsns, a.ninsns);
	ck_assert_int_eq(memcmp(a.code, b.code, a.ninsns * ISA_INSN_BYTES), 0);
	struct isa_dec in;
	ck_assert_int_eq(isa_decode(a.code + 1 * ISA_INSN_BYTES, &in), 0);
	ck_assert_int_eq(in.imm, 0x3fc00000); /* 1.5f */
	ck_assert_int_eq(isa_decode(a.code + 5 * ISA_INSN_BYTES, &in), 0);
	ck_assert_int_eq(in.imm, -3); /* bne back to loop */
	ck_assert_int_eq(isa_decode(a.code + 3 * ISA_INSN_BYTES, &in), 0);
	ck_assert_int_eq(in.rep, 4);
	ck_assert_int_eq(in.dr, 8); /* default */
	free(text);
	isa_program_free(&a);
	isa_program_free(&b);
}
END_TEST

static void expect_error(const char *src, const char *where, const char *what)
{
	struct isa_program p;
	char err[512];
	ck_assert_msg(isa_assemble(src, "bad.s", &p, err, sizeof err) == -1, "accepted: %s", src);
	ck_assert_msg(strstr(err, where) != NULL, "'%s' lacks '%s'", err, where);
	ck_assert_msg(strstr(err, what) != NULL, "'%s' lacks '%s'", err, what);
}

START_TEST(assembler_errors_name_file_line_column)
{
	expect_error("nop\n  frob x1\n", "bad.s:2:3:", "unknown instruction 'frob'");
	expect_error("add x1, x2\n", "bad.s:1:", "needs operand rs2");
	expect_error("add x1, x2, x3, x4\n", "bad.s:1:17:", "too many operands");
	expect_error("add x1, x2, y3\n", "bad.s:1:13:", "expected a register");
	expect_error("add x1, x2, x32\n", "bad.s:1:13:", "bad register");
	expect_error("vadd x1, x2, x3, dt=f64\n", "bad.s:1:", "bad value 'f64' for dt");
	expect_error("vadd x1, x2, x3, dt=f16, rep=256\n", "bad.s:1:1:", "does not fit");
	expect_error("vadd x1, x2, x3, dt=f16, bogus=1\n", "bad.s:1:26:", "no operand 'bogus'");
	expect_error("vadd x1, x2, x3, dt=f16, rep=1, rep=2\n", "bad.s:1:", "given twice");
	expect_error("jmp nowhere\n", "bad.s:1:5:", "undefined name 'nowhere'");
	expect_error("a: nop\na: nop\n", "bad.s:2:1:", "already defined");
	expect_error(".frob 1\n", "bad.s:1:1:", "unknown directive");
	expect_error("li x1, 5 +\n", "bad.s:1:", "expected a value");
	expect_error("li x1, (5\n", "bad.s:1:", "expected ')'");
	expect_error("add x1, x2,\n", "bad.s:1:", "operand expected");
	expect_error("mov.gm.ub x1, x2\n", "bad.s:1:", "needs operand len");
}
END_TEST

/* The extreme values of every field survive encode -> decode into struct
 * isa_dec's narrow members; one past them is refused naming the field. */
START_TEST(field_extremes_fit_decoded_storage)
{
	for (unsigned op = 0; op < ISA_NOPS; op++) {
		const struct isa_info *info = isa_info(op);
		if (!info)
			continue;
		const struct isa_format *fmt = &isa_formats[info->fmt];
		for (unsigned i = 0; i < fmt->nfields; i++) {
			const struct isa_field *f = &fmt->fields[i];
			int64_t lo = 0, hi, over;
			if (f->kind == ISA_FK_R) {
				hi = ISA_NREGS - 1;
			} else if (f->kind == ISA_FK_E) {
				hi = 0;
				while (f->names[hi + 1])
					hi++;
			} else if (f->kind == ISA_FK_I) {
				hi = f->width == 64 ? INT64_MAX : (INT64_C(1) << (f->width - 1)) - 1;
				lo = f->width == 64 ? INT64_MIN : -hi - 1;
			} else {
				hi = f->width == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << f->width) - 1);
			}
			over = hi == INT64_MAX ? -1 : hi + 1;
			int64_t vals[2] = { lo, hi };
			for (int k = 0; k < 2; k++) {
				struct isa_insn in;
				struct isa_dec out;
				uint8_t bytes[ISA_INSN_BYTES];
				char err[256];
				memset(&in, 0, sizeof in);
				in.op = op;
				for (unsigned j = 0; j < fmt->nfields; j++)
					if (fmt->fields[j].kind != ISA_FK_I && fmt->fields[j].dflt != ISA_REQ)
						isa_field_set(&in, &fmt->fields[j], fmt->fields[j].dflt);
				isa_field_set(&in, f, vals[k]);
				ck_assert_msg(isa_encode(&in, bytes, err, sizeof err) == 0, "%s", err);
				ck_assert_int_eq(isa_decode(bytes, &out), 0);
				ck_assert_msg(isa_dec_get(&out, f) == vals[k], "%s.%s=%lld decoded as %lld",
					      info->mnemonic, f->name, (long long)vals[k],
					      (long long)isa_dec_get(&out, f));
				if (k == 1 && over >= 0 && f->kind != ISA_FK_I) {
					char want[64];
					isa_field_set(&in, f, over);
					ck_assert_int_eq(isa_encode(&in, bytes, err, sizeof err), -1);
					snprintf(want, sizeof want, "operand %s=", f->name);
					ck_assert_msg(strstr(err, want), "%s", err);
				}
			}
		}
	}
}
END_TEST

/* isa.h's generated ISA_MIN/ISA_MAX agree with the range isa_encode
 * enforces, for every K and I field, and nothing is left out. */
struct gen_limit {
	enum isa_fmt fmt;
	const char *member;
	int64_t lo, hi;
};
#define LIM_R(fmt, member)
#define LIM_E(fmt, member)
#define LIM_K(fmt, member) { ISA_FMT_##fmt, #member, ISA_MIN(fmt, member), ISA_MAX(fmt, member) },
#define LIM_I LIM_K
static const struct gen_limit gen_limits[] = {
#define ISA_FIELD(fmt, member, kind, lsb, width, dflt, tab) LIM_##kind(fmt, member)
#include "fields.def"
};

START_TEST(generated_limits_match_table)
{
	size_t n = 0;
	for (int fm = 0; fm < ISA_NFMTS; fm++)
		for (unsigned i = 0; i < isa_formats[fm].nfields; i++) {
			const struct isa_field *f = &isa_formats[fm].fields[i];
			if (f->kind != ISA_FK_K && f->kind != ISA_FK_I)
				continue;
			int64_t lo = 0, hi;
			if (f->kind == ISA_FK_I) {
				hi = f->width == 64 ? INT64_MAX : (INT64_C(1) << (f->width - 1)) - 1;
				lo = -hi - 1;
			} else {
				hi = (int64_t)((UINT64_C(1) << f->width) - 1);
			}
			const struct gen_limit *g = NULL;
			for (size_t j = 0; j < sizeof gen_limits / sizeof gen_limits[0]; j++)
				if (gen_limits[j].fmt == (enum isa_fmt)fm &&
				    strcmp(gen_limits[j].member, f->name) == 0)
					g = &gen_limits[j];
			ck_assert_msg(g, "%s.%s has no generated limit", isa_formats[fm].name, f->name);
			ck_assert_msg(g->lo == lo && g->hi == hi,
				      "%s.%s: generated %lld..%lld, table %lld..%lld", isa_formats[fm].name,
				      f->name, (long long)g->lo, (long long)g->hi, (long long)lo,
				      (long long)hi);
			n++;
		}
	ck_assert_uint_eq(n, sizeof gen_limits / sizeof gen_limits[0]);
	ck_assert_int_eq(ISA_VEC_REP_MAX, 255);
	ck_assert_int_eq(ISA_DMA_LEN_MAX, 65535);
}
END_TEST

START_TEST(decoder_rejects_garbage)
{
	uint8_t b[ISA_INSN_BYTES] = { 0 };
	struct isa_dec in;
	ck_assert_int_eq(isa_decode(b, &in), -1); /* opcode 0 */
	b[0] = 0xff;
	ck_assert_int_eq(isa_decode(b, &in), -1); /* unused opcode */
	b[0] = ISA_OP_NOP;
	b[9] = 1; /* a bit outside every field of NONE */
	ck_assert_int_eq(isa_decode(b, &in), -1);
	memset(b, 0, sizeof b);
	b[0] = ISA_OP_VADD;
	b[3] = 0xf0; /* dt = 15: past the dtype table */
	ck_assert_int_eq(isa_decode(b, &in), -1);
}
END_TEST

/* Every E field of every instruction: the last name decodes, one past the
 * name table does not (the decoder checks each format's fields as
 * straight-line code; this covers each one). */
START_TEST(decoder_rejects_every_enum_past_its_table)
{
	for (unsigned op = 0; op < ISA_NOPS; op++) {
		const struct isa_info *info = isa_info(op);
		if (!info)
			continue;
		const struct isa_format *fmt = &isa_formats[info->fmt];
		for (unsigned i = 0; i < fmt->nfields; i++) {
			const struct isa_field *f = &fmt->fields[i];
			if (f->kind != ISA_FK_E)
				continue;
			uint64_t n = 0;
			while (f->names[n])
				n++;
			ck_assert_uint_eq(f->max, n - 1);
			if (n >= (UINT64_C(1) << f->width))
				continue; /* every value of the field has a name */
			for (uint64_t v = n - 1; v <= n; v++) {
				uint8_t b[ISA_INSN_BYTES] = { (uint8_t)op };
				for (unsigned bit = 0; bit < f->width; bit++)
					if (v >> bit & 1)
						b[(f->lsb + bit) / 8] |= (uint8_t)(1u << (f->lsb + bit) % 8);
				struct isa_dec in;
				ck_assert_msg(isa_decode(b, &in) == (v < n ? 0 : -1), "%s.%s=%llu",
					      info->mnemonic, f->name, (unsigned long long)v);
				if (v < n)
					ck_assert_int_eq(isa_dec_get(&in, f), (int64_t)v);
			}
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("isa");
	TCase *tc = tcase_create("Core");
	tcase_add_test(tc, table_fields_fit_and_do_not_overlap);
	tcase_add_test(tc, table_opcodes_and_mnemonics_unique);
	tcase_add_test(tc, round_trip_every_opcode);
	tcase_add_test(tc, listing_reassembles);
	tcase_add_test(tc, aipp_load_round_trip);
	tcase_add_test(tc, assembler_errors_name_file_line_column);
	tcase_add_test(tc, field_extremes_fit_decoded_storage);
	tcase_add_test(tc, generated_limits_match_table);
	tcase_add_test(tc, decoder_rejects_garbage);
	tcase_add_test(tc, decoder_rejects_every_enum_past_its_table);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
