/* output_type.c: ATC's --output_type, the type the host receives the
 * model's outputs in: one type for every output ("FP16"), or per output
 * ("node1:0:FP16;node2:0:FP32", a node's name, which of its outputs, the
 * type).  The device computes as it always does; only the output edge
 * changes (compile.c's output TransData, and for a type other than FP32 the
 * edge Cast after it, kern_dtype.c), and the .om's output descriptors carry
 * the type, so ACL's output sizes follow.
 *
 * A node is named as the ONNX file names it, before any pass renames or
 * fuses it; its output must be one of the model's (ATC names it in
 * --out_nodes as well; here the model's outputs are the ONNX graph's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

/* ATC's names: those the edge kernels convert to, and the rest of ATC's
 * list, refused by name rather than as unknown. */
static int type_of(struct cc_ctx *c, const char *s, const char *flag, enum cc_dtype *dt)
{
	static const char *const later[] = { "INT8", "UINT16", "INT16", "UINT32", "INT32",
					     "UINT64", "INT64", "DOUBLE", "HIF8", "FP8E5M2",
					     "FP8E4M3FN" };
	if (!strcmp(s, "FP32"))
		*dt = CC_F32;
	else if (!strcmp(s, "FP16"))
		*dt = CC_F16;
	else if (!strcmp(s, "UINT8"))
		*dt = CC_U8;
	else {
		for (size_t i = 0; i < sizeof later / sizeof *later; i++)
			if (!strcmp(s, later[i]))
				return cc_fail(c, "--output_type=%s: %s outputs are not supported "
					       "yet (FP32, FP16 and UINT8 are)", flag, s);
		return cc_fail(c, "--output_type=%s: '%s' is not a type (FP32, FP16 or UINT8)",
			       flag, s);
	}
	return 0;
}

/* One "node:index:TYPE" entry, cut from the right (a node's name may hold
 * colons, as a TensorFlow-exported one's do). */
static int one_output(struct cc_ctx *c, char *e, const char *flag)
{
	char *tc = strrchr(e, ':');
	char *ic = tc ? (*tc = 0, strrchr(e, ':')) : NULL;
	if (!ic || ic == e)
		return cc_fail(c, "--output_type=%s: '%s' is not node:index:TYPE", flag, e);
	*ic = 0;
	enum cc_dtype dt;
	if (type_of(c, tc + 1, flag, &dt))
		return -1;
	char *end;
	long idx = strtol(ic + 1, &end, 10);
	if (*end || end == ic + 1 || idx < 0)
		return cc_fail(c, "--output_type=%s: '%s' is not an output index", flag, ic + 1);
	for (int i = 0; i < c->g.nn; i++) {
		const struct cc_node *n = &c->g.n[i];
		if (strcmp(n->name, e))
			continue;
		if (idx >= n->nout || n->out[idx] < 0)
			return cc_fail(c, "--output_type=%s: node '%s' (%s) has no output %ld", flag,
				       e, n->op, idx);
		struct cc_tensor *t = T(c, n->out[idx]);
		if (!t->is_output)
			return cc_fail(c, "--output_type=%s: output %ld of node '%s' ('%s') is not "
				       "an output of the model", flag, idx, e, t->name);
		t->host_type = dt;
		return 0;
	}
	return cc_fail(c, "--output_type=%s: no node named '%s' in the model", flag, e);
}

int cc_output_type(struct cc_ctx *c, const char *v)
{
	if (!v)
		return 0;
	char *s = strdup(v);
	if (!s)
		return cc_fail(c, "out of memory");
	int rc = 0;
	if (!strchr(s, ':')) {
		enum cc_dtype dt;
		rc = type_of(c, s, v, &dt);
		for (int i = 0; !rc && i < c->g.noutputs; i++)
			T(c, c->g.outputs[i])->host_type = dt;
	} else {
		char *save = NULL;
		for (char *e = strtok_r(s, ";", &save); e && !rc; e = strtok_r(NULL, ";", &save))
			rc = one_output(c, e, v);
	}
	free(s);
	return rc;
}
