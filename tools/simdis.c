/* simdis: disassemble raw ISA bytes (simas output); the listing
 * re-assembles to the same bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "om.h"
#include "version.h"

/* Every kernel of the program m (a model or one of its batch or dims
 * variants), named by the tasks that run it; dynamic: m is one of several
 * batch sizes or dims profiles. */
static int list_kernels(const struct om_model *m, unsigned dynamic, int explain)
{
	char dn[200];
	om_dims_name(m, dn, sizeof dn);
	if (dynamic && m->ndims)
		printf("\n# variant dims %s: %u tasks, %u kernels, workspace %llu bytes\n", dn,
		       m->ntasks, m->nkernels, (unsigned long long)m->workspace_bytes);
	else if (dynamic)
		printf("\n# variant batch %lld: %u tasks, %u kernels, workspace %llu bytes\n",
		       (long long)m->batch, m->ntasks, m->nkernels,
		       (unsigned long long)m->workspace_bytes);
	printf("# tasks by type: ");
	om_print_task_types(m, stdout);
	printf("\n");
	int rc = 0;
	for (unsigned k = 0; k < m->nkernels; k++) {
		printf("\n# kernel %s (%llu instructions), run by task", m->kernels[k].name,
		       (unsigned long long)(m->kernels[k].bytes / ISA_INSN_BYTES));
		for (unsigned t = 0; t < m->ntasks; t++)
			if (m->tasks[t].kernel == k)
				printf(" %u '%s' (%s, block_dim %u)", t, m->tasks[t].name,
				       m->tasks[t].op_type, m->tasks[t].block_dim);
		printf("\n");
		rc |= isa_disasm_program(stdout, m->kernels[k].code, m->kernels[k].bytes,
					 explain);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simdis"))
		return 0;
	const char *in = NULL;
	int explain = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--explain") == 0)
			explain = 1;
		else if (strcmp(argv[i], "--isa") == 0)
			return isa_doc_markdown(stdout) ? 1 : 0;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: simdis [--explain] KERNEL.bin|MODEL.om | simdis --isa\n"
			       "Disassemble davinci-sim kernel code; --explain adds each "
			       "instruction's synopsis.\n"
			       "--isa prints the instruction set reference (docs/isa.md).\n");
			return 0;
		} else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fprintf(stderr, "simdis: unexpected argument '%s' (try --help)\n", argv[i]);
			return 2;
		}
	}
	if (!in) {
		fprintf(stderr, "usage: simdis [--explain] KERNEL.bin\n");
		return 2;
	}
	/* an .om model: every kernel, named by the tasks that run it */
	FILE *probe = fopen(in, "rb");
	unsigned char magic[4] = { 0 };
	if (probe) {
		if (fread(magic, 1, 4, probe) != 4)
			magic[0] = 0;
		fclose(probe);
	}
	if (magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F') {
		struct om_model m;
		char err[4096];
		if (om_read(in, &m, NULL, err, sizeof err)) {
			fprintf(stderr, "simdis: %s\n", err);
			return 1;
		}
		printf("# %s: model '%s' for %s, %u tasks, %u kernels\n", in, m.name, m.soc,
		       m.ntasks, m.nkernels);
		int64_t sz[OM_MAX_VARIANTS + 1];
		unsigned ns = om_batch_sizes(&m, sz);
		if (ns) {
			printf("# dynamic batch: %u variants, batch", ns);
			for (unsigned k = 0; k < ns; k++)
				printf("%s%lld", k ? "," : " ", (long long)sz[k]);
			printf(" (one program each, listed largest first; the weights shared)\n");
		}
		if (m.ndims) {
			printf("# dynamic dims: %u profiles,", m.nvariants + 1);
			for (unsigned k = 0; k <= m.nvariants; k++) {
				char dn[200];
				om_dims_name(om_dims_profile(&m, k), dn, sizeof dn);
				printf("%s%s", k ? ";" : " ", dn);
			}
			printf(" (one program each, listed last first; the weights shared)\n");
			ns = m.nvariants + 1;
		}
		int rc = list_kernels(&m, ns, explain);
		for (unsigned v = 0; v < m.nvariants; v++)
			rc |= list_kernels(&m.variants[m.nvariants - 1 - v], ns, explain);
		om_free(&m);
		return rc ? 1 : 0;
	}
	FILE *f = fopen(in, "rb");
	if (!f) {
		fprintf(stderr, "simdis: %s: %s\n", in, strerror(errno));
		return 1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *b = realloc(buf, cap *= 2);
			if (!b)
				free(buf);
			buf = b;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "simdis: out of memory\n");
		return 1;
	}
	/* nothing to list is an error, not "0 instructions": an empty or
	 * truncated file, or an .om that lost its ELF header */
	size_t len = strlen(in);
	if (len > 3 && !strcmp(in + len - 3, ".om")) {
		fprintf(stderr, "simdis: %s: not an .om model (no ELF header)\n", in);
		free(buf);
		return 1;
	}
	if (n == 0 || n % ISA_INSN_BYTES) {
		fprintf(stderr, "simdis: %s: %zu bytes: not a whole number of %d-byte instructions "
				"(%s)\n", in, n, ISA_INSN_BYTES, n ? "truncated?" : "the file is empty");
		free(buf);
		return 1;
	}
	printf("# %s: %zu instructions\n", in, n / ISA_INSN_BYTES);
	int rc = isa_disasm_program(stdout, buf, n, explain);
	free(buf);
	if (rc)
		fprintf(stderr, "simdis: %s: contains invalid instructions (marked in the listing)\n",
			in);
	return rc ? 1 : 0;
}
