/* ops.c: the op registry: ops.def's rows, looked up by ONNX op name, and
 * the operator table docs/ops.md is generated from (simatc --ops). */
#include <string.h>

#include "compile_int.h"
#include "ops.h"

static const struct cc_op_info ops[] = {
#define CC_OP(name, cann, infer, lower, vop, steps, props) \
	{ #name, #cann, infer, lower, vop, steps, props },
#include "ops.def"
};

const struct cc_op_info *cc_op_find(const char *op)
{
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(ops[i].name, op))
			return &ops[i];
	return NULL;
}

int cc_op_has(const char *op, unsigned props)
{
	const struct cc_op_info *e = cc_op_find(op);
	return e && (e->props & props) == props;
}

const char *cc_supported_ops(void)
{
	return ""
#define CC_OP(name, cann, infer, lower, vop, steps, props) #name " "
#include "ops.def"
		;
}

/* A task's type as CANN names it (msprof's OP Type): its first ONNX op's
 * type from ops.def ("Conv+Relu" is a Conv2D, ATC's fused conv), or the
 * name of a kernel the compiler adds (TransData, Aipp...) as it is. */
void cc_op_cann_type(const char *op_type, char *out, size_t n)
{
	size_t len = strcspn(op_type, "+");
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strlen(ops[i].name) == len && !strncmp(ops[i].name, op_type, len)) {
			snprintf(out, n, "%s", ops[i].cann);
			return;
		}
	snprintf(out, n, "%.*s", (int)len, op_type);
}

int cc_ops_markdown(FILE *f)
{
	static const struct {
		const char *doc, *what, *who;
	} props[] = {
#define CC_X(name, doc, what, who) { doc, what, who },
		CC_OP_PROPS(CC_X)
#undef CC_X
	};
	static const char *const lowers[] = {
#define CC_OP(name, cann, infer, lower, vop, steps, props) #lower,
#include "ops.def"
	};
	fprintf(f, "# Operators\n\n"
		   "<!-- Generated from compiler/ops.def by `simatc --ops > docs/ops.md`;\n"
		   "     tests/ops_doc.sh fails when it is stale. Do not edit. -->\n\n"
		   "The ONNX operators `simatc` compiles, one row of `compiler/ops.def` each: the\n"
		   "type CANN's ONNX parser gives them (msprof's OP Type, `simrun --trace`),\n"
		   "the function that lowers them (`compiler/lower_*.c`) and the properties\n"
		   "the passes and plans read from the table instead of lists of their own.\n\n"
		   "| ONNX | CANN type | lowering | properties |\n"
		   "|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		fprintf(f, "| %s | %s | %s |", ops[i].name, ops[i].cann, lowers[i]);
		const char *sep = " ";
		for (size_t p = 0; p < sizeof props / sizeof props[0]; p++)
			if (ops[i].props & 1u << p) {
				fprintf(f, "%s%s", sep, props[p].doc);
				sep = ", ";
			}
		fprintf(f, " |\n");
	}
	fprintf(f, "\n| property | meaning | read by |\n|---|---|---|\n");
	for (size_t p = 0; p < sizeof props / sizeof props[0]; p++)
		fprintf(f, "| %s | %s | %s |\n", props[p].doc, props[p].what, props[p].who);
	return ferror(f) ? -1 : 0;
}
