/* om.c: write and read .om offline models (the layout is described in om.h).
 *
 * The real Ascend .om is a 256-byte "IMOD" header followed by a partition
 * table; ours is an ordinary ELF64 relocatable object instead, so that
 * readelf/objdump can inspect it and libelf does the container work.  The
 * metadata (an om.proto Model) carries its own format_version.
 *
 * Both directions run the same model check (check_model), so whatever om_write
 * accepts om_read accepts too, and a compiler bug is reported when the model
 * is written rather than when it is run.  om_read additionally checks that the
 * ELF sections agree with the metadata.  There is no global mutable state:
 * elf_version() only records the version we speak and may be called at will.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fsync, O_CLOEXEC */
#endif
#define _DEFAULT_SOURCE /* madvise: glibc's posix_madvise ignores POSIX_MADV_DONTNEED */

#include "om.h"
#include "om_crc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libelf.h>

#include "om.pb-c.h"

/* The metadata layout this code writes and the newest it can read.  2: the
 * metadata has a CRC-32 of its own, in section .om.meta.crc (4 bytes, little
 * endian), which a file of version 2 or later must have; version 1 files
 * (whose metadata is only checked field by field) still read. */
#define OM_FORMAT_VERSION 2
/* isa.h's ISA_INSN_BYTES, repeated so that libdvom does not depend on the ISA. */
#define OM_INSN_BYTES 16
#define OM_MAX_BLOCK_DIM 65535
#define OM_TEXT_PREFIX ".text."
#define OM_META_SECTION ".om.meta"
#define OM_META_CRC_SECTION ".om.meta.crc"
#define OM_WEIGHTS_SECTION ".weights"
/* 512 lets a loader map or DMA the weights straight from the file. */
#define OM_WEIGHTS_ALIGN 512
#define OM_CODE_ALIGN 16

#define OM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

static int fail(char *err, size_t errlen, const char *fmt, ...) OM_PRINTF(3, 4);

/* Fill err and return -1, so error paths are one statement. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* CRC-32 of a section: zlib's (reflected polynomial 0xEDB88320), computed
 * by om_crc.c at memory speed where the host allows (a byte-at-a-time loop
 * took 45% of a timing-mode ResNet-50 run checking its 100 MB of weights). */
static uint32_t crc32_of(const uint8_t *p, uint64_t n)
{
	return om_crc32(p, n);
}

/* calloc that never returns NULL for an empty array, so NULL means failure. */
static void *xcalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* ------------------------------------------------------------------------ */
/* The model check, shared by om_write and om_read                          */

/* Bytes per element of an ONNX TensorProto.DataType, 0 where there is no
 * whole-byte size (UNDEFINED, STRING, the 4-bit types, anything newer). */
static uint64_t dtype_size(int32_t dt)
{
	switch (dt) {
	case 2:  /* UINT8 */
	case 3:  /* INT8 */
	case 9:  /* BOOL */
	case 17: /* FLOAT8E4M3FN */
	case 18: /* FLOAT8E4M3FNUZ */
	case 19: /* FLOAT8E5M2 */
	case 20: /* FLOAT8E5M2FNUZ */
		return 1;
	case 4:  /* UINT16 */
	case 5:  /* INT16 */
	case 10: /* FLOAT16 */
	case 16: /* BFLOAT16 */
		return 2;
	case 1:  /* FLOAT */
	case 6:  /* INT32 */
	case 12: /* UINT32 */
		return 4;
	case 7:  /* INT64 */
	case 11: /* DOUBLE */
	case 13: /* UINT64 */
	case 14: /* COMPLEX64 */
		return 8;
	case 15: /* COMPLEX128 */
		return 16;
	default:
		return 0;
	}
}

/* A string stored in a fixed array must be terminated inside it. */
static int str_fits(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* Kernel names become ELF section names and, in tools, file names: keep them
 * to characters that need no quoting anywhere. */
static int kernel_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '+' || c == '-'))
			return 0;
	}
	return 1;
}

static const char *arg_kind_name(enum om_arg_kind k)
{
	switch (k) {
	case OM_ARG_SCALAR:
		return "SCALAR";
	case OM_ARG_WEIGHT:
		return "WEIGHT";
	case OM_ARG_WORKSPACE:
		return "WORKSPACE";
	case OM_ARG_INPUT:
		return "INPUT";
	case OM_ARG_OUTPUT:
		return "OUTPUT";
	}
	return "?";
}

/* what: "input", "output" or "tensor"; planned: a memory-plan tensor, which
 * must also fit in the workspace. */
static int check_desc(const struct om_model *m, const struct om_tensor_desc *d, const char *what,
		      int planned, uint32_t i, const char *path, char *err, size_t errlen)
{
	uint64_t esize, numel = 1;
	int k;

	if (!str_fits(d->name, sizeof d->name))
		return fail(err, errlen, "%s: %s %" PRIu32 ": name is not terminated", path, what, i);
	if (d->dtype <= 0)
		return fail(err, errlen, "%s: %s %" PRIu32 " (%s): dtype %" PRId32 " is not a type",
			    path, what, i, d->name, d->dtype);
	/* -1 is ACL_FORMAT_UNDEFINED; larger numbers may be formats we do not know yet. */
	if (d->format < -1)
		return fail(err, errlen, "%s: %s %" PRIu32 " (%s): format %" PRId32 " is invalid",
			    path, what, i, d->name, d->format);
	if (d->rank < 0 || d->rank > OM_MAX_RANK)
		return fail(err, errlen, "%s: %s %" PRIu32 " (%s): rank %" PRId32 " not in 0..%d",
			    path, what, i, d->name, d->rank, OM_MAX_RANK);
	for (k = 0; k < d->rank; k++) {
		if (d->dims[k] < 0)
			return fail(err, errlen,
				    "%s: %s %" PRIu32 " (%s): dims[%d] is %" PRId64 ", not >= 0",
				    path, what, i, d->name, k, d->dims[k]);
		if (numel != 0 && (uint64_t)d->dims[k] > UINT64_MAX / numel)
			return fail(err, errlen, "%s: %s %" PRIu32 " (%s): shape overflows 64 bits",
				    path, what, i, d->name);
		numel *= (uint64_t)d->dims[k];
	}
	esize = dtype_size(d->dtype);
	if (esize != 0) {
		if (numel > UINT64_MAX / esize)
			return fail(err, errlen, "%s: %s %" PRIu32 " (%s): size overflows 64 bits",
				    path, what, i, d->name);
		if (d->size != numel * esize)
			return fail(err, errlen,
				    "%s: %s %" PRIu32 " (%s): size %" PRIu64 " bytes, but its shape "
				    "and dtype %" PRId32 " make %" PRIu64,
				    path, what, i, d->name, d->size, d->dtype, numel * esize);
	}
	if (d->device_dtype && (planned || d->device_dtype != om_edge_device_dtype(d->dtype)))
		return fail(err, errlen,
			    "%s: %s %" PRIu32 " (%s): dtype %" PRId32 " does not convert to the "
			    "device's dtype %" PRId32, path, what, i, d->name, d->dtype,
			    d->device_dtype);
	if (planned && (d->size > m->workspace_bytes || d->offset > m->workspace_bytes - d->size))
		return fail(err, errlen,
			    "%s: tensor %" PRIu32 " (%s): offset %" PRIu64 " + size %" PRIu64
			    " beyond the workspace (%" PRIu64 " bytes)",
			    path, i, d->name, d->offset, d->size, m->workspace_bytes);
	return 0;
}

static int check_descs(const struct om_model *m, const struct om_tensor_desc *d, uint32_t n,
		       const char *what, int planned, const char *path, char *err, size_t errlen)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (check_desc(m, &d[i], what, planned, i, path, err, errlen) < 0)
			return -1;
	return 0;
}

/* The "what" of a task's tensor descriptors, so that their errors name the
 * task as well: "task 3 (conv1) input". */
static void task_desc_what(char *buf, size_t len, uint32_t ti, const char *name, int output)
{
	snprintf(buf, len, "task %" PRIu32 " (%s) %s", ti, name, output ? "output" : "input");
}

static int check_arg(const struct om_model *m, const struct om_task *t, uint32_t ti, uint32_t ai,
		     const char *path, char *err, size_t errlen)
{
	const struct om_arg *a = &t->args[ai];
	const struct om_tensor_desc *io;
	uint64_t limit;
	uint32_t n;
	const char *region;

	switch (a->kind) {
	case OM_ARG_SCALAR:
		return 0;
	case OM_ARG_WEIGHT:
		limit = m->weights_bytes;
		region = "the weights";
		break;
	case OM_ARG_WORKSPACE:
		limit = m->workspace_bytes;
		region = "the workspace";
		break;
	case OM_ARG_INPUT:
	case OM_ARG_OUTPUT:
		io = a->kind == OM_ARG_INPUT ? m->inputs : m->outputs;
		n = a->kind == OM_ARG_INPUT ? m->ninputs : m->noutputs;
		region = a->kind == OM_ARG_INPUT ? "inputs" : "outputs";
		if (a->index >= n)
			return fail(err, errlen,
				    "%s: task %" PRIu32 " (%s) arg %" PRIu32 ": %s index %" PRIu32
				    ", but the model has %" PRIu32 " %s",
				    path, ti, t->name, ai, arg_kind_name(a->kind), a->index, n, region);
		limit = io[a->index].size;
		region = io[a->index].name;
		break;
	default:
		return fail(err, errlen, "%s: task %" PRIu32 " (%s) arg %" PRIu32 ": kind %d invalid",
			    path, ti, t->name, ai, (int)a->kind);
	}
	if (a->value < 0 || (uint64_t)a->value >= limit)
		return fail(err, errlen,
			    "%s: task %" PRIu32 " (%s) arg %" PRIu32 ": %s offset %" PRId64
			    " beyond %s (%" PRIu64 " bytes)",
			    path, ti, t->name, ai, arg_kind_name(a->kind), a->value, region, limit);
	return 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int check_kernels(const struct om_model *m, const char *path, char *err, size_t errlen)
{
	const char **names;
	uint32_t i;

	for (i = 0; i < m->nkernels; i++) {
		const struct om_kernel *k = &m->kernels[i];

		if (!str_fits(k->name, sizeof k->name))
			return fail(err, errlen, "%s: kernel %" PRIu32 ": name is not terminated",
				    path, i);
		if (!kernel_name_ok(k->name))
			return fail(err, errlen,
				    "%s: kernel %" PRIu32 ": name \"%s\" is empty or has characters "
				    "other than [A-Za-z0-9_.+-]",
				    path, i, k->name);
		if (k->bytes == 0 || k->bytes % OM_INSN_BYTES != 0)
			return fail(err, errlen,
				    "%s: kernel %" PRIu32 " (%s): code size %" PRIu64
				    " is not a positive multiple of %d",
				    path, i, k->name, k->bytes, OM_INSN_BYTES);
		if (!k->code)
			return fail(err, errlen, "%s: kernel %" PRIu32 " (%s): no code", path, i,
				    k->name);
	}
	/* Sorted, duplicates are neighbours: O(n log n) for any kernel count. */
	names = xcalloc(m->nkernels, sizeof *names);
	if (!names)
		return fail(err, errlen, "%s: out of memory", path);
	for (i = 0; i < m->nkernels; i++)
		names[i] = m->kernels[i].name;
	qsort(names, m->nkernels, sizeof *names, cmp_strp);
	for (i = 1; i < m->nkernels; i++) {
		if (strcmp(names[i - 1], names[i]) == 0) {
			fail(err, errlen, "%s: two kernels named %s", path, names[i]);
			free(names);
			return -1;
		}
	}
	free(names);
	return 0;
}

static int check_model(const struct om_model *m, const char *path, char *err, size_t errlen)
{
	uint32_t i, j;

	if (!str_fits(m->name, sizeof m->name))
		return fail(err, errlen, "%s: model name is not terminated", path);
	if (!str_fits(m->soc, sizeof m->soc))
		return fail(err, errlen, "%s: soc is not terminated", path);
	if (!m->soc[0])
		return fail(err, errlen, "%s: no SoC recorded (soc is empty)", path);
	if ((m->nkernels && !m->kernels) || (m->ntasks && !m->tasks) ||
	    (m->ninputs && !m->inputs) || (m->noutputs && !m->outputs) ||
	    (m->ntensors && !m->tensors))
		return fail(err, errlen, "%s: a count is set but its array is NULL", path);
	if (m->weights_bytes && !m->weights)
		return fail(err, errlen, "%s: weights_bytes %" PRIu64 " but no weights", path,
			    m->weights_bytes);
	/* an .om with nothing to run is a broken file, not an empty success */
	if (!m->nkernels)
		return fail(err, errlen, "%s: no kernels: nothing to run", path);
	if (check_kernels(m, path, err, errlen) < 0)
		return -1;
	if (check_descs(m, m->inputs, m->ninputs, "input", 0, path, err, errlen) < 0 ||
	    check_descs(m, m->outputs, m->noutputs, "output", 0, path, err, errlen) < 0 ||
	    check_descs(m, m->tensors, m->ntensors, "tensor", 1, path, err, errlen) < 0)
		return -1;
	for (i = 0; i < m->ntasks; i++) {
		const struct om_task *t = &m->tasks[i];
		char what[sizeof t->name + 48];

		if (!str_fits(t->name, sizeof t->name))
			return fail(err, errlen, "%s: task %" PRIu32 ": name is not terminated",
				    path, i);
		if (!str_fits(t->op_type, sizeof t->op_type))
			return fail(err, errlen, "%s: task %" PRIu32 " (%s): op_type is not terminated",
				    path, i, t->name);
		if (!str_fits(t->cann_type, sizeof t->cann_type))
			return fail(err, errlen,
				    "%s: task %" PRIu32 " (%s): cann_type is not terminated", path, i,
				    t->name);
		if (t->kernel >= m->nkernels)
			return fail(err, errlen,
				    "%s: task %" PRIu32 " (%s): kernel index %" PRIu32
				    ", but the model has %" PRIu32 " kernels",
				    path, i, t->name, t->kernel, m->nkernels);
		if (t->block_dim < 1 || t->block_dim > OM_MAX_BLOCK_DIM)
			return fail(err, errlen,
				    "%s: task %" PRIu32 " (%s): block_dim %" PRIu32 " not in 1..%d",
				    path, i, t->name, t->block_dim, OM_MAX_BLOCK_DIM);
		if (t->nargs && !t->args)
			return fail(err, errlen, "%s: task %" PRIu32 " (%s): nargs set but no args",
				    path, i, t->name);
		for (j = 0; j < t->nargs; j++)
			if (check_arg(m, t, i, j, path, err, errlen) < 0)
				return -1;
		if ((t->ninputs && !t->inputs) || (t->noutputs && !t->outputs))
			return fail(err, errlen,
				    "%s: task %" PRIu32 " (%s): a tensor count is set but its "
				    "array is NULL",
				    path, i, t->name);
		task_desc_what(what, sizeof what, i, t->name, 0);
		if (check_descs(m, t->inputs, t->ninputs, what, 0, path, err, errlen) < 0)
			return -1;
		task_desc_what(what, sizeof what, i, t->name, 1);
		if (check_descs(m, t->outputs, t->noutputs, what, 0, path, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* A dynamic-dims model's profiles (om.h): as many values each as the
 * model's, positive, no two the same. */
static int check_dims(const struct om_model *m, const char *path, char *err, size_t errlen)
{
	if (m->ndims > OM_MAX_DYN_DIMS)
		return fail(err, errlen, "%s: %" PRIu32 " dynamic dims, more than %d", path, m->ndims,
			    OM_MAX_DYN_DIMS);
	if (m->ndims && m->batch)
		return fail(err, errlen, "%s: both a batch size and dynamic dims", path);
	for (uint32_t k = 0; k <= m->nvariants && m->ndims; k++) {
		const struct om_model *p = k < m->nvariants ? &m->variants[k] : m;
		char name[200];
		om_dims_name(p, name, sizeof name);
		if (p->ndims != m->ndims || p->batch)
			return fail(err, errlen, "%s: profile %s has %" PRIu32 " values, the model's "
				    "%" PRIu32, path, name, p->ndims, m->ndims);
		for (uint32_t d = 0; d < p->ndims; d++)
			if (p->dims[d] <= 0)
				return fail(err, errlen, "%s: profile %s: dims must be positive", path,
					    name);
		for (uint32_t j = 0; j < k; j++)
			if (!memcmp(m->variants[j].dims, p->dims, p->ndims * sizeof *p->dims))
				return fail(err, errlen, "%s: profile %s given twice", path, name);
	}
	for (uint32_t k = 0; k < m->nvariants && !m->ndims; k++)
		if (m->variants[k].ndims)
			return fail(err, errlen, "%s: a variant has dynamic dims, the model none", path);
	return 0;
}

/* A dynamic-batch model's variants (om.h): ascending sizes below the
 * model's own (a dynamic-dims model's: its profiles, check_dims), the
 * model's weights and SoC, the same numbers of inputs and outputs, a
 * workspace within the model's; each a valid model of its own.  Errors name
 * the variant by its size (or dims). */
static int check_variants(const struct om_model *m, const char *path, char *err, size_t errlen)
{
	if (m->is_variant)
		return fail(err, errlen, "%s: the model is marked a variant", path);
	if (m->nvariants && m->variants && check_dims(m, path, err, errlen) < 0)
		return -1;
	if (m->batch < 0)
		return fail(err, errlen, "%s: batch %" PRId64 " is negative", path, m->batch);
	if (m->nvariants && !m->variants)
		return fail(err, errlen, "%s: a variant count is set but its array is NULL", path);
	if (m->nvariants && !m->batch && !m->ndims)
		return fail(err, errlen, "%s: %" PRIu32 " batch variants, but the model has no "
			    "batch size", path, m->nvariants);
	if (m->nvariants >= OM_MAX_VARIANTS)
		return fail(err, errlen, "%s: %" PRIu32 " batch sizes, more than the %d allowed",
			    path, m->nvariants + 1, OM_MAX_VARIANTS);
	for (uint32_t v = 0; v < m->nvariants; v++) {
		const struct om_model *vm = &m->variants[v];
		int64_t next = v + 1 < m->nvariants ? m->variants[v + 1].batch : m->batch;
		char vpath[700], dn[200];

		om_dims_name(vm, dn, sizeof dn);
		if (m->ndims)
			snprintf(vpath, sizeof vpath, "%.500s (dims %.170s variant)", path, dn);
		else
			snprintf(vpath, sizeof vpath, "%.500s (batch %" PRId64 " variant)", path,
				 vm->batch);
		if (!vm->is_variant || vm->nvariants)
			return fail(err, errlen, "%s: not marked a variant, or has variants of its "
				    "own", vpath);
		if (!m->ndims && (vm->batch <= 0 || vm->batch >= next))
			return fail(err, errlen, "%s: batch sizes must be positive and ascending, "
				    "below the model's %" PRId64, vpath, m->batch);
		if (vm->weights != m->weights || vm->weights_bytes != m->weights_bytes)
			return fail(err, errlen, "%s: does not share the model's weights", vpath);
		if (vm->workspace_bytes > m->workspace_bytes)
			return fail(err, errlen, "%s: workspace %" PRIu64 " bytes, more than the "
				    "model's %" PRIu64 " (sized for every batch)", vpath,
				    vm->workspace_bytes, m->workspace_bytes);
		if (strcmp(vm->soc, m->soc) || vm->ninputs != m->ninputs ||
		    vm->noutputs != m->noutputs)
			return fail(err, errlen, "%s: another SoC, or other numbers of inputs or "
				    "outputs, than the model's", vpath);
		if (check_model(vm, vpath, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */

/* Fill n TensorDesc messages from pd[*next] on, pointing into src, and
 * return where their pointers start in ppd. */
static Dvom__TensorDesc **pack_descs(Dvom__TensorDesc *pd, Dvom__TensorDesc **ppd, size_t *next,
				     const struct om_tensor_desc *src, uint32_t n)
{
	Dvom__TensorDesc **first = &ppd[*next];
	uint32_t k;

	for (k = 0; k < n; k++, (*next)++) {
		Dvom__TensorDesc *p = &pd[*next];

		dvom__tensor_desc__init(p);
		p->name = (char *)src[k].name;
		p->dtype = src[k].dtype;
		p->format = src[k].format;
		p->n_dims = (size_t)src[k].rank;
		p->dims = (int64_t *)src[k].dims;
		p->offset = src[k].offset;
		p->size = src[k].size;
		p->device_dtype = src[k].device_dtype;
		ppd[*next] = p;
	}
	return first;
}

/* The arrays one Model message points into (build_meta), freed together. */
struct meta_bufs {
	Dvom__Kernel *pk, **ppk;
	Dvom__Task *pt, **ppt;
	Dvom__Arg *pa, **ppa;
	Dvom__TensorDesc *pd, **ppd;
	uint32_t nkernels;
};

static void free_meta_bufs(struct meta_bufs *b)
{
	if (b->pk)
		for (uint32_t i = 0; i < b->nkernels; i++)
			free(b->pk[i].section);
	free(b->pk);
	free(b->ppk);
	free(b->pt);
	free(b->ppt);
	free(b->pa);
	free(b->ppa);
	free(b->pd);
	free(b->ppd);
	memset(b, 0, sizeof *b);
}

/* Room for a section prefix: ".text.d" and a profile's values (om_dims_name
 * writes at most 8 of up to 20 characters, 'x' between them). */
#define OM_TEXT_PREFIX_MAX 200

/* The prefix of the ELF sections of m's kernels: ".text." for a model's
 * own, ".text.b<batch>." for a variant's (variant names repeat). */
static void text_prefix(const struct om_model *m, char *buf, size_t len)
{
	char dn[170];
	om_dims_name(m, dn, sizeof dn);
	if (m->is_variant && m->ndims)
		snprintf(buf, len, "%sd%s.", OM_TEXT_PREFIX, dn);
	else if (m->is_variant)
		snprintf(buf, len, "%sb%" PRId64 ".", OM_TEXT_PREFIX, m->batch);
	else
		snprintf(buf, len, "%s", OM_TEXT_PREFIX);
}

/* Fill pm, the Model message for m (without its variants), with arrays in b.
 * The message points into m (protobuf-c's pack only reads, hence the casts
 * dropping const). */
static int build_meta(const struct om_model *m, Dvom__Model *pm, struct meta_bufs *b)
{
	size_t nargs = 0, ndesc = (size_t)m->ninputs + m->noutputs + m->ntensors, a = 0, d = 0;
	uint32_t i, j;
	char prefix[OM_TEXT_PREFIX_MAX];

	for (i = 0; i < m->ntasks; i++) {
		nargs += m->tasks[i].nargs;
		ndesc += (size_t)m->tasks[i].ninputs + m->tasks[i].noutputs;
	}
	b->pk = xcalloc(m->nkernels, sizeof *b->pk);
	b->nkernels = b->pk ? m->nkernels : 0;
	b->ppk = xcalloc(m->nkernels, sizeof *b->ppk);
	b->pt = xcalloc(m->ntasks, sizeof *b->pt);
	b->ppt = xcalloc(m->ntasks, sizeof *b->ppt);
	b->pa = xcalloc(nargs, sizeof *b->pa);
	b->ppa = xcalloc(nargs, sizeof *b->ppa);
	b->pd = xcalloc(ndesc, sizeof *b->pd);
	b->ppd = xcalloc(ndesc, sizeof *b->ppd);
	if (!b->pk || !b->ppk || !b->pt || !b->ppt || !b->pa || !b->ppa || !b->pd || !b->ppd)
		return -1;

	pm->format_version = OM_FORMAT_VERSION;
	pm->name = (char *)m->name;
	pm->soc = (char *)m->soc;
	pm->workspace_bytes = m->workspace_bytes;
	pm->weights_bytes = m->weights_bytes;
	pm->batch = m->batch;
	pm->n_dynamic_dims = m->ndims;
	pm->dynamic_dims = (int64_t *)m->dims;
	/* a variant's kernels have CRCs too; the weights are the model's */
	pm->checksums = 1;
	if (!m->is_variant)
		pm->weights_crc32 = crc32_of(m->weights, m->weights_bytes);
	pm->n_kernels = m->nkernels;
	pm->kernels = b->ppk;
	text_prefix(m, prefix, sizeof prefix);
	for (i = 0; i < m->nkernels; i++) {
		Dvom__Kernel *k = &b->pk[i];
		size_t len = strlen(prefix) + strlen(m->kernels[i].name) + 1;

		dvom__kernel__init(k);
		k->name = (char *)m->kernels[i].name;
		k->code_bytes = m->kernels[i].bytes;
		k->crc32 = crc32_of(m->kernels[i].code, m->kernels[i].bytes);
		/* the section name, "<prefix><name>", in its own little buffer */
		k->section = malloc(len);
		if (!k->section)
			return -1;
		snprintf(k->section, len, "%s%s", prefix, m->kernels[i].name);
		b->ppk[i] = k;
	}
	pm->n_tasks = m->ntasks;
	pm->tasks = b->ppt;
	for (i = 0; i < m->ntasks; i++) {
		const struct om_task *t = &m->tasks[i];
		Dvom__Task *p = &b->pt[i];

		dvom__task__init(p);
		p->name = (char *)t->name;
		p->op_type = (char *)t->op_type;
		p->cann_type = (char *)t->cann_type;
		p->kernel = t->kernel;
		p->block_dim = t->block_dim;
		p->flops = t->flops;
		p->bytes = t->bytes;
		p->predicted_cycles = t->predicted_cycles;
		p->n_args = t->nargs;
		p->args = &b->ppa[a];
		for (j = 0; j < t->nargs; j++, a++) {
			dvom__arg__init(&b->pa[a]);
			b->pa[a].kind = (Dvom__ArgKind)t->args[j].kind;
			b->pa[a].value = t->args[j].value;
			b->pa[a].index = t->args[j].index;
			b->ppa[a] = &b->pa[a];
		}
		p->n_inputs = t->ninputs;
		p->inputs = pack_descs(b->pd, b->ppd, &d, t->inputs, t->ninputs);
		p->n_outputs = t->noutputs;
		p->outputs = pack_descs(b->pd, b->ppd, &d, t->outputs, t->noutputs);
		b->ppt[i] = p;
	}
	pm->n_inputs = m->ninputs;
	pm->inputs = pack_descs(b->pd, b->ppd, &d, m->inputs, m->ninputs);
	pm->n_outputs = m->noutputs;
	pm->outputs = pack_descs(b->pd, b->ppd, &d, m->outputs, m->noutputs);
	pm->n_tensors = m->ntensors;
	pm->tensors = pack_descs(b->pd, b->ppd, &d, m->tensors, m->ntensors);
	return 0;
}

/* The Model message for m and its variants, packed into a malloc'd buffer. */
static int pack_meta(const struct om_model *m, uint8_t **out, size_t *outlen)
{
	uint32_t nv = m->nvariants;
	Dvom__Model pm = DVOM__MODEL__INIT;
	Dvom__Model *pv = xcalloc(nv, sizeof *pv);
	Dvom__Model **ppv = xcalloc(nv, sizeof *ppv);
	struct meta_bufs *b = xcalloc((size_t)nv + 1, sizeof *b);
	int rc = -1;

	if (!pv || !ppv || !b || build_meta(m, &pm, &b[nv]) < 0)
		goto out;
	for (uint32_t v = 0; v < nv; v++) {
		dvom__model__init(&pv[v]);
		if (build_meta(&m->variants[v], &pv[v], &b[v]) < 0)
			goto out;
		ppv[v] = &pv[v];
	}
	pm.n_variants = nv;
	pm.variants = ppv;
	*outlen = dvom__model__get_packed_size(&pm);
	*out = malloc(*outlen ? *outlen : 1);
	if (!*out)
		goto out;
	if (dvom__model__pack(&pm, *out) != *outlen) {
		free(*out);
		*out = NULL;
		goto out;
	}
	rc = 0;
out:
	for (uint32_t v = 0; b && v <= nv; v++)
		free_meta_bufs(&b[v]);
	free(b);
	free(pv);
	free(ppv);
	return rc;
}

/* One SHT_PROGBITS/SHT_STRTAB section whose contents are buf (not copied:
 * libelf reads it at elf_update time).  Returns the section, NULL on error. */
static Elf_Scn *add_section(Elf *e, size_t name, uint32_t type, uint64_t flags, uint64_t align,
			    void *buf, size_t size)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d;
	Elf64_Shdr *sh;

	if (!scn || !(d = elf_newdata(scn)) || !(sh = elf64_getshdr(scn)))
		return NULL;
	/* Even an empty section gets a data block: libelf derives sh_addralign
	 * from the blocks' d_align, and the alignment is part of the format. */
	d->d_buf = size ? buf : NULL;
	d->d_size = size;
	d->d_align = align;
	d->d_off = 0;
	d->d_type = ELF_T_BYTE;
	d->d_version = EV_CURRENT;
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addralign = align;
	sh->sh_entsize = 0;
	return scn;
}

/* Append s and its NUL to the string table; returns its offset. */
static size_t strtab_add(char *tab, size_t *len, const char *prefix, const char *s)
{
	size_t off = *len;
	size_t lp = strlen(prefix), ls = strlen(s);

	memcpy(tab + off, prefix, lp);
	memcpy(tab + off + lp, s, ls + 1);
	*len += lp + ls + 1;
	return off;
}

/* Lay out and write the ELF image of m into the open file fd. */
static int write_elf(int fd, const struct om_model *m, uint8_t *meta, size_t metalen,
		     const char *path, char *err, size_t errlen)
{
	Elf *e;
	Elf64_Ehdr *eh;
	char *tab;
	size_t tablen = 1, cap = 1, off, i;
	size_t n_weights, n_meta, n_meta_crc, n_shstrtab;
	Elf_Scn *strscn;
	int rc = -1;
	uint32_t mc = crc32_of(meta, metalen);
	uint8_t meta_crc[4] = { (uint8_t)mc, (uint8_t)(mc >> 8), (uint8_t)(mc >> 16),
				(uint8_t)(mc >> 24) };

	char prefix[OM_TEXT_PREFIX_MAX];
	for (i = 0; i < m->nkernels; i++)
		cap += strlen(OM_TEXT_PREFIX) + strlen(m->kernels[i].name) + 1;
	for (uint32_t v = 0; v < m->nvariants; v++)
		for (i = 0; i < m->variants[v].nkernels; i++)
			cap += sizeof prefix + strlen(m->variants[v].kernels[i].name) + 1;
	cap += sizeof OM_WEIGHTS_SECTION + sizeof OM_META_SECTION + sizeof OM_META_CRC_SECTION +
	       sizeof ".shstrtab";
	tab = malloc(cap);
	if (!tab)
		return fail(err, errlen, "%s: out of memory", path);
	tab[0] = '\0';

	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e) {
		fail(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
		free(tab);
		return -1;
	}
	eh = elf64_newehdr(e);
	if (!eh)
		goto elf_error;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_REL;
	/* EM_NONE: no machine number is registered for the DaVinci ISA, and
	 * borrowing another one would let real tools mistake the code for theirs. */
	eh->e_machine = EM_NONE;
	eh->e_version = EV_CURRENT;

	for (i = 0; i < m->nkernels; i++) {
		off = strtab_add(tab, &tablen, OM_TEXT_PREFIX, m->kernels[i].name);
		if (!add_section(e, off, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, OM_CODE_ALIGN,
				 m->kernels[i].code, m->kernels[i].bytes))
			goto elf_error;
	}
	for (uint32_t v = 0; v < m->nvariants; v++) {
		const struct om_model *vm = &m->variants[v];
		text_prefix(vm, prefix, sizeof prefix);
		for (i = 0; i < vm->nkernels; i++) {
			off = strtab_add(tab, &tablen, prefix, vm->kernels[i].name);
			if (!add_section(e, off, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					 OM_CODE_ALIGN, vm->kernels[i].code, vm->kernels[i].bytes))
				goto elf_error;
		}
	}
	n_weights = strtab_add(tab, &tablen, "", OM_WEIGHTS_SECTION);
	n_meta = strtab_add(tab, &tablen, "", OM_META_SECTION);
	n_meta_crc = strtab_add(tab, &tablen, "", OM_META_CRC_SECTION);
	n_shstrtab = strtab_add(tab, &tablen, "", ".shstrtab");
	/* The metadata is parsed byte by byte: it needs no alignment. */
	if (!add_section(e, n_weights, SHT_PROGBITS, SHF_ALLOC, OM_WEIGHTS_ALIGN, m->weights,
			 m->weights_bytes) ||
	    !add_section(e, n_meta, SHT_PROGBITS, 0, 1, meta, metalen) ||
	    !add_section(e, n_meta_crc, SHT_PROGBITS, 0, 1, meta_crc, sizeof meta_crc) ||
	    !(strscn = add_section(e, n_shstrtab, SHT_STRTAB, 0, 1, tab, tablen)))
		goto elf_error;
	/* The index fits e_shstrndx: om_write caps the kernel count. */
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(strscn);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto elf_error;
	rc = 0;
	goto out;
elf_error:
	fail(err, errlen, "%s: writing ELF: %s", path, elf_errmsg(-1));
out:
	elf_end(e);
	free(tab);
	return rc;
}

int om_write(const char *path, const struct om_model *m, char *err, size_t errlen)
{
	uint8_t *meta = NULL;
	size_t metalen = 0;
	char *tmp;
	int fd, rc = -1;

	if (!path || !m)
		return fail(err, errlen, "om_write: no path or model");
	if (check_model(m, path, err, errlen) < 0 || check_variants(m, path, err, errlen) < 0)
		return -1;
	/* null + kernels + .weights + .om.meta + .om.meta.crc + .shstrtab must
	 * stay below SHN_LORESERVE, or the ELF header needs extended numbering. */
	uint64_t nk = m->nkernels;
	for (uint32_t v = 0; v < m->nvariants; v++)
		nk += m->variants[v].nkernels;
	if (nk > SHN_LORESERVE - 6)
		return fail(err, errlen, "%s: %" PRIu64 " kernels, more than the %d an .om holds",
			    path, nk, SHN_LORESERVE - 6);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
	if (pack_meta(m, &meta, &metalen) < 0)
		return fail(err, errlen, "%s: out of memory packing the metadata", path);

	/* Write beside the target and rename over it: readers never see half a file. */
	tmp = malloc(strlen(path) + sizeof ".tmp");
	if (!tmp) {
		free(meta);
		return fail(err, errlen, "%s: out of memory", path);
	}
	sprintf(tmp, "%s.tmp", path);
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fail(err, errlen, "%s: creating %s: %s", path, tmp, strerror(errno));
		goto out;
	}
	if (write_elf(fd, m, meta, metalen, path, err, errlen) < 0)
		goto out_unlink;
	if (fsync(fd) < 0) {
		fail(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	if (close(fd) < 0) {
		fd = -1;
		fail(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		fail(err, errlen, "%s: rename from %s: %s", path, tmp, strerror(errno));
		goto out_unlink;
	}
	rc = 0;
	goto out;
out_unlink:
	if (fd >= 0)
		close(fd);
	fd = -1;
	unlink(tmp);
out:
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(meta);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */

struct om_sec {
	const char *name; /* points into libelf's string table */
	Elf_Scn *scn;
	Elf64_Shdr sh;
};

/* An open .om file (om.h): our own read-only mapping of all of it, which
 * weights and code point into (libelf only parses the headers, and its
 * handle is closed once om_read is done; a mapping of our own is one whose
 * pages we may drop, see om_drop_code). */
struct om_file {
	const uint8_t *map;
	size_t len;
	int fd;
	uint64_t weights_offset; /* file offset of the .weights section */
	/* The weights' CRC-32 is checked when they are first read
	 * (om_verify_weights), not at om_read: a timing-mode run never reads
	 * them, and checking 50 MB cost a third of such a run. */
	int weights_crc_due; /* a CRC-32 is recorded and not yet checked */
	uint32_t weights_crc32;
	char path[512];
};

struct om_reader {
	const char *path;
	char *err;
	size_t errlen;
	int fd;
	uint64_t fsize;
	Elf *elf;
	const uint8_t *map; /* the whole file (om_file's) */
	struct om_sec *secs; /* sorted by name */
	size_t nsecs;
	Dvom__Model *pm;
};

static int cmp_sec(const void *a, const void *b)
{
	return strcmp(((const struct om_sec *)a)->name, ((const struct om_sec *)b)->name);
}

static const struct om_sec *find_sec(const struct om_reader *r, const char *name)
{
	struct om_sec key = { .name = name };

	if (!r->nsecs)
		return NULL;
	return bsearch(&key, r->secs, r->nsecs, sizeof *r->secs, cmp_sec);
}

/* Open path as an .om-shaped ELF and index its sections by name. */
static int open_elf(struct om_reader *r)
{
	struct stat st;
	Elf64_Ehdr *eh;
	Elf_Scn *scn = NULL;
	const char *id;
	size_t idlen, shnum, shstrndx, i;

	r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return fail(r->err, r->errlen, "%s: %s", r->path, strerror(errno));
	if (fstat(r->fd, &st) < 0)
		return fail(r->err, r->errlen, "%s: %s", r->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(r->err, r->errlen, "%s: not a regular file", r->path);
	r->fsize = (uint64_t)st.st_size;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(r->err, r->errlen, "%s: libelf: %s", r->path, elf_errmsg(-1));
	/* Mapping is safe against writers: om_write replaces files by rename and
	 * never truncates one in place. */
	r->elf = elf_begin(r->fd, ELF_C_READ_MMAP, NULL);
	if (!r->elf)
		return fail(r->err, r->errlen, "%s: not an .om file (%s)", r->path,
			    elf_errmsg(-1));
	if (elf_kind(r->elf) != ELF_K_ELF)
		return fail(r->err, r->errlen, "%s: not an .om file (not ELF)", r->path);
	id = elf_getident(r->elf, &idlen);
	if (!id || idlen < EI_NIDENT)
		return fail(r->err, r->errlen, "%s: not an .om file (truncated ELF header)",
			    r->path);
	if (id[EI_CLASS] != ELFCLASS64)
		return fail(r->err, r->errlen, "%s: not an .om file (ELF class %d, not 64-bit)",
			    r->path, id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB)
		return fail(r->err, r->errlen, "%s: not an .om file (not little-endian ELF)",
			    r->path);
	eh = elf64_getehdr(r->elf);
	if (!eh)
		return fail(r->err, r->errlen, "%s: not an .om file (%s)", r->path,
			    elf_errmsg(-1));
	if (eh->e_type != ET_REL)
		return fail(r->err, r->errlen, "%s: not an .om file (ELF type %u, not ET_REL)",
			    r->path, (unsigned)eh->e_type);
	if (eh->e_machine != EM_NONE)
		return fail(r->err, r->errlen,
			    "%s: not an .om file (ELF machine %u, not EM_NONE)", r->path,
			    (unsigned)eh->e_machine);
	if (elf_getshdrnum(r->elf, &shnum) < 0 || elf_getshdrstrndx(r->elf, &shstrndx) < 0)
		return fail(r->err, r->errlen, "%s: bad section headers (%s)", r->path,
			    elf_errmsg(-1));
	r->secs = xcalloc(shnum, sizeof *r->secs);
	if (!r->secs)
		return fail(r->err, r->errlen, "%s: out of memory", r->path);
	while ((scn = elf_nextscn(r->elf, scn)) != NULL) {
		struct om_sec *s;
		Elf64_Shdr *sh = elf64_getshdr(scn);

		if (r->nsecs >= shnum)
			return fail(r->err, r->errlen, "%s: more sections than e_shnum", r->path);
		s = &r->secs[r->nsecs];
		i = elf_ndxscn(scn);
		if (!sh)
			return fail(r->err, r->errlen, "%s: section %zu: %s", r->path, i,
				    elf_errmsg(-1));
		s->name = elf_strptr(r->elf, shstrndx, sh->sh_name);
		if (!s->name)
			return fail(r->err, r->errlen, "%s: section %zu: bad name (%s)", r->path, i,
				    elf_errmsg(-1));
		if (sh->sh_type != SHT_NOBITS &&
		    (sh->sh_offset > r->fsize || sh->sh_size > r->fsize - sh->sh_offset))
			return fail(r->err, r->errlen,
				    "%s: section %s extends past the end of the file "
				    "(truncated?)",
				    r->path, s->name);
		s->scn = scn;
		s->sh = *sh;
		r->nsecs++;
	}
	qsort(r->secs, r->nsecs, sizeof *r->secs, cmp_sec);
	for (i = 1; i < r->nsecs; i++)
		if (strcmp(r->secs[i - 1].name, r->secs[i].name) == 0)
			return fail(r->err, r->errlen, "%s: two sections named %s", r->path,
				    r->secs[i].name);
	return 0;
}

/* The contents of the PROGBITS section name, which must hold exactly want
 * bytes (when want_set); *buf is NULL for an empty section. */
static int sec_bytes(struct om_reader *r, const char *name, const char *what, int want_set,
		     uint64_t want, const uint8_t **buf, uint64_t *size)
{
	const struct om_sec *s = find_sec(r, name);
	Elf_Data *d;

	if (!s)
		return fail(r->err, r->errlen, "%s: %s: no section %s", r->path, what, name);
	if (s->sh.sh_type != SHT_PROGBITS)
		return fail(r->err, r->errlen, "%s: %s: section %s has type %u, not PROGBITS",
			    r->path, what, name, s->sh.sh_type);
	if (want_set && s->sh.sh_size != want)
		return fail(r->err, r->errlen,
			    "%s: %s: section %s is %" PRIu64 " bytes, the metadata says %" PRIu64,
			    r->path, what, name, (uint64_t)s->sh.sh_size, want);
	*size = s->sh.sh_size;
	*buf = NULL;
	if (s->sh.sh_size == 0)
		return 0;
	d = elf_getdata(s->scn, NULL);
	if (!d || !d->d_buf || d->d_size != s->sh.sh_size)
		return fail(r->err, r->errlen, "%s: %s: cannot read section %s (%s)", r->path,
			    what, name, d ? "short data" : elf_errmsg(-1));
	/* the same bytes in our mapping (open_elf checked they lie in the file) */
	*buf = r->map + s->sh.sh_offset;
	return 0;
}

/* Copy a metadata string into a fixed array of om.h, if it fits. */
static int copy_str(struct om_reader *r, char *dst, size_t cap, const char *src,
		    const char *field)
{
	size_t n;

	if (!src)
		src = "";
	n = strlen(src);
	if (n >= cap)
		return fail(r->err, r->errlen, "%s: %s is %zu bytes, longer than the %zu allowed",
			    r->path, field, n, cap - 1);
	memcpy(dst, src, n + 1);
	return 0;
}

static int check_count(struct om_reader *r, size_t n, const char *what)
{
	if (n > UINT32_MAX)
		return fail(r->err, r->errlen, "%s: %zu %s, more than 2^32-1", r->path, n, what);
	return 0;
}

static int copy_desc(struct om_reader *r, struct om_tensor_desc *d, const Dvom__TensorDesc *p,
		     const char *what, size_t i)
{
	char field[256]; /* what can name a task: "task 3 (<name>) input" */
	size_t k;

	if (!p)
		return fail(r->err, r->errlen, "%s: %s %zu missing", r->path, what, i);
	snprintf(field, sizeof field, "%s %zu name", what, i);
	if (copy_str(r, d->name, sizeof d->name, p->name, field) < 0)
		return -1;
	if (p->n_dims > OM_MAX_RANK)
		return fail(r->err, r->errlen, "%s: %s %zu (%s): rank %zu not in 0..%d", r->path,
			    what, i, d->name, p->n_dims, OM_MAX_RANK);
	d->dtype = p->dtype;
	d->format = p->format;
	d->rank = (int32_t)p->n_dims;
	for (k = 0; k < p->n_dims; k++)
		d->dims[k] = p->dims[k];
	d->offset = p->offset;
	d->size = p->size;
	d->device_dtype = p->device_dtype;
	return 0;
}

static int copy_descs(struct om_reader *r, struct om_tensor_desc **out, uint32_t *nout,
		      Dvom__TensorDesc **p, size_t n, const char *what)
{
	size_t i;

	if (check_count(r, n, what) < 0)
		return -1;
	*out = xcalloc(n, sizeof **out);
	if (!*out)
		return fail(r->err, r->errlen, "%s: out of memory", r->path);
	*nout = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (copy_desc(r, &(*out)[i], p[i], what, i) < 0)
			return -1;
	return 0;
}

static int copy_kernels(struct om_reader *r, const Dvom__Model *pm, struct om_model *m)
{
	char field[192], want[OM_TEXT_PREFIX_MAX + sizeof m->kernels[0].name];
	char prefix[OM_TEXT_PREFIX_MAX];
	const uint8_t *code;
	uint64_t size;
	size_t i;

	if (check_count(r, pm->n_kernels, "kernels") < 0)
		return -1;
	m->kernels = xcalloc(pm->n_kernels, sizeof *m->kernels);
	if (!m->kernels)
		return fail(r->err, r->errlen, "%s: out of memory", r->path);
	m->nkernels = (uint32_t)pm->n_kernels;
	for (i = 0; i < pm->n_kernels; i++) {
		const Dvom__Kernel *pk = pm->kernels[i];
		struct om_kernel *k = &m->kernels[i];

		if (!pk)
			return fail(r->err, r->errlen, "%s: kernel %zu missing", r->path, i);
		snprintf(field, sizeof field, "kernel %zu name", i);
		if (copy_str(r, k->name, sizeof k->name, pk->name, field) < 0)
			return -1;
		if (!kernel_name_ok(k->name))
			return fail(r->err, r->errlen,
				    "%s: kernel %zu: name \"%s\" is empty or has characters "
				    "other than [A-Za-z0-9_.+-]",
				    r->path, i, k->name);
		text_prefix(m, prefix, sizeof prefix);
		snprintf(want, sizeof want, "%s%s", prefix, k->name);
		if (!pk->section || strcmp(pk->section, want) != 0)
			return fail(r->err, r->errlen, "%s: kernel %zu (%s): section \"%s\", not %s",
				    r->path, i, k->name, pk->section ? pk->section : "", want);
		snprintf(field, sizeof field, "kernel %zu (%s)", i, k->name);
		if (sec_bytes(r, want, field, 1, pk->code_bytes, &code, &size) < 0)
			return -1;
		k->bytes = size;
		if (pm->checksums && crc32_of(code, size) != pk->crc32)
			return fail(r->err, r->errlen,
				    "%s: kernel %zu (%s): section %s fails its CRC-32 check (the "
				    "file is corrupt)", r->path, i, k->name, want);
		if (size % OM_INSN_BYTES != 0 || size == 0)
			return fail(r->err, r->errlen,
				    "%s: kernel %zu (%s): code size %" PRIu64
				    " is not a positive multiple of %d",
				    r->path, i, k->name, size, OM_INSN_BYTES);
		/* read-only, as the mapping is: nothing writes a read model's code */
		k->code = (uint8_t *)code;
	}
	return 0;
}

static int copy_tasks(struct om_reader *r, const Dvom__Model *pm, struct om_model *m)
{
	char field[64], what[sizeof m->tasks[0].name + 48];
	size_t i, j;

	if (check_count(r, pm->n_tasks, "tasks") < 0)
		return -1;
	m->tasks = xcalloc(pm->n_tasks, sizeof *m->tasks);
	if (!m->tasks)
		return fail(r->err, r->errlen, "%s: out of memory", r->path);
	m->ntasks = (uint32_t)pm->n_tasks;
	for (i = 0; i < pm->n_tasks; i++) {
		const Dvom__Task *pt = pm->tasks[i];
		struct om_task *t = &m->tasks[i];

		if (!pt)
			return fail(r->err, r->errlen, "%s: task %zu missing", r->path, i);
		snprintf(field, sizeof field, "task %zu name", i);
		if (copy_str(r, t->name, sizeof t->name, pt->name, field) < 0)
			return -1;
		snprintf(field, sizeof field, "task %zu op_type", i);
		if (copy_str(r, t->op_type, sizeof t->op_type, pt->op_type, field) < 0)
			return -1;
		snprintf(field, sizeof field, "task %zu cann_type", i);
		if (copy_str(r, t->cann_type, sizeof t->cann_type, pt->cann_type, field) < 0)
			return -1;
		t->kernel = pt->kernel;
		t->block_dim = pt->block_dim;
		t->flops = pt->flops;
		t->bytes = pt->bytes;
		t->predicted_cycles = pt->predicted_cycles;
		snprintf(field, sizeof field, "task %zu args", i);
		if (check_count(r, pt->n_args, field) < 0)
			return -1;
		t->args = xcalloc(pt->n_args, sizeof *t->args);
		if (!t->args)
			return fail(r->err, r->errlen, "%s: out of memory", r->path);
		t->nargs = (uint32_t)pt->n_args;
		for (j = 0; j < pt->n_args; j++) {
			const Dvom__Arg *pa = pt->args[j];
			int kind;

			if (!pa)
				return fail(r->err, r->errlen, "%s: task %zu arg %zu missing",
					    r->path, i, j);
			/* Range-check before storing into the C enum. */
			kind = (int)pa->kind;
			if (kind < OM_ARG_SCALAR || kind > OM_ARG_OUTPUT)
				return fail(r->err, r->errlen,
					    "%s: task %zu (%s) arg %zu: kind %d invalid", r->path,
					    i, t->name, j, kind);
			t->args[j].kind = (enum om_arg_kind)kind;
			t->args[j].value = pa->value;
			t->args[j].index = pa->index;
		}
		/* i fits 32 bits: check_count above */
		task_desc_what(what, sizeof what, (uint32_t)i, t->name, 0);
		if (copy_descs(r, &t->inputs, &t->ninputs, pt->inputs, pt->n_inputs, what) < 0)
			return -1;
		task_desc_what(what, sizeof what, (uint32_t)i, t->name, 1);
		if (copy_descs(r, &t->outputs, &t->noutputs, pt->outputs, pt->n_outputs, what) < 0)
			return -1;
	}
	return 0;
}

/* The program of pm (a model's or a variant's) into m: kernels, tasks and
 * descriptors. */
static int copy_program(struct om_reader *r, const Dvom__Model *pm, struct om_model *m)
{
	m->workspace_bytes = pm->workspace_bytes;
	if (copy_kernels(r, pm, m) < 0 || copy_tasks(r, pm, m) < 0 ||
	    copy_descs(r, &m->inputs, &m->ninputs, pm->inputs, pm->n_inputs, "input") < 0 ||
	    copy_descs(r, &m->outputs, &m->noutputs, pm->outputs, pm->n_outputs, "output") < 0 ||
	    copy_descs(r, &m->tensors, &m->ntensors, pm->tensors, pm->n_tensors, "tensor") < 0)
		return -1;
	return 0;
}

/* m's variants (a dynamic-batch model) from pm's: each shares m's weights
 * and file; messages name the variant by its size. */
static int copy_variants(struct om_reader *r, const Dvom__Model *pm, struct om_model *m)
{
	if (!pm->n_variants)
		return 0;
	if (pm->n_variants >= OM_MAX_VARIANTS)
		return fail(r->err, r->errlen, "%s: %zu batch sizes, more than the %d allowed",
			    r->path, pm->n_variants + 1, OM_MAX_VARIANTS);
	m->variants = xcalloc(pm->n_variants, sizeof *m->variants);
	if (!m->variants)
		return fail(r->err, r->errlen, "%s: out of memory", r->path);
	m->nvariants = (uint32_t)pm->n_variants;
	const char *path = r->path;
	char vpath[600];
	int rc = 0;
	for (size_t v = 0; v < pm->n_variants && !rc; v++) {
		const Dvom__Model *pv = pm->variants[v];
		struct om_model *vm = &m->variants[v];

		if (!pv) {
			rc = fail(r->err, r->errlen, "%s: variant %zu missing", path, v);
			break;
		}
		if (pv->n_dynamic_dims > OM_MAX_DYN_DIMS) {
			rc = fail(r->err, r->errlen, "%s: variant %zu: %zu dynamic dims, more than %d",
				  path, v, pv->n_dynamic_dims, OM_MAX_DYN_DIMS);
			break;
		}
		vm->ndims = (uint32_t)pv->n_dynamic_dims;
		if (vm->ndims) /* (protobuf-c leaves an empty repeated field NULL) */
			memcpy(vm->dims, pv->dynamic_dims, vm->ndims * sizeof *vm->dims);
		if (vm->ndims) {
			char dn[200];
			om_dims_name(vm, dn, sizeof dn);
			snprintf(vpath, sizeof vpath, "%.500s (dims %.80s variant)", path, dn);
		} else {
			snprintf(vpath, sizeof vpath, "%.500s (batch %" PRId64 " variant)", path,
				 pv->batch);
		}
		r->path = vpath;
		vm->is_variant = 1;
		vm->batch = pv->batch;
		vm->weights = m->weights;
		vm->weights_bytes = m->weights_bytes;
		vm->file = m->file;
		if (pv->n_variants)
			rc = fail(r->err, r->errlen, "%s: has variants of its own", vpath);
		else if (copy_str(r, vm->name, sizeof vm->name, pv->name, "model name") < 0 ||
			 copy_str(r, vm->soc, sizeof vm->soc, pv->soc, "soc") < 0 ||
			 copy_program(r, pv, vm) < 0)
			rc = -1;
		r->path = path;
	}
	return rc;
}

/* Fill m from the unpacked metadata and the sections it names. */
static int copy_model(struct om_reader *r, struct om_model *m, const char *expect_soc)
{
	const Dvom__Model *pm = r->pm;
	const uint8_t *w;
	uint64_t wsize;

	if (pm->format_version == 0)
		return fail(r->err, r->errlen, "%s: .om.meta: no format_version", r->path);
	if (pm->format_version > OM_FORMAT_VERSION)
		return fail(r->err, r->errlen,
			    "%s: format_version %" PRIu32 " is newer than this reader (%d)",
			    r->path, pm->format_version, OM_FORMAT_VERSION);
	if (copy_str(r, m->name, sizeof m->name, pm->name, "model name") < 0 ||
	    copy_str(r, m->soc, sizeof m->soc, pm->soc, "soc") < 0)
		return -1;
	if (!m->soc[0])
		return fail(r->err, r->errlen, "%s: no SoC recorded (soc is empty)", r->path);
	/* Checked first: "compiled for another chip" explains everything else. */
	if (expect_soc && strcmp(m->soc, expect_soc) != 0)
		return fail(r->err, r->errlen, "%s: compiled for %s, not %s", r->path, m->soc,
			    expect_soc);
	if (sec_bytes(r, OM_WEIGHTS_SECTION, "weights_bytes", 1, pm->weights_bytes, &w, &wsize) <
	    0)
		return -1;
	m->weights_bytes = wsize;
	m->file->weights_crc_due = pm->checksums != 0;
	m->file->weights_crc32 = pm->weights_crc32;
	snprintf(m->file->path, sizeof m->file->path, "%s", r->path);
	/* The weights stay in the file's mapping, read-only (a write faults
	 * rather than changing what a later load sees); rt_model_load maps its
	 * own copy-on-write view for the device. */
	m->weights = (uint8_t *)w;
	m->file->weights_offset = find_sec(r, OM_WEIGHTS_SECTION)->sh.sh_offset;
	m->batch = pm->batch;
	if (pm->n_dynamic_dims > OM_MAX_DYN_DIMS)
		return fail(r->err, r->errlen, "%s: %zu dynamic dims, more than %d", r->path,
			    pm->n_dynamic_dims, OM_MAX_DYN_DIMS);
	m->ndims = (uint32_t)pm->n_dynamic_dims;
	if (m->ndims) /* (protobuf-c leaves an empty repeated field NULL) */
		memcpy(m->dims, pm->dynamic_dims, m->ndims * sizeof *m->dims);
	if (copy_program(r, pm, m) < 0 || copy_variants(r, pm, m) < 0)
		return -1;
	return check_model(m, r->path, r->err, r->errlen) < 0 ||
			       check_variants(m, r->path, r->err, r->errlen) < 0
		       ? -1
		       : 0;
}

int om_read(const char *path, struct om_model *m, const char *expect_soc, char *err,
	    size_t errlen)
{
	struct om_reader r = { .path = path, .err = err, .errlen = errlen, .fd = -1 };
	struct om_model res;
	const uint8_t *meta;
	uint64_t metalen;
	int rc = -1;

	memset(&res, 0, sizeof res);
	if (!m)
		return fail(err, errlen, "om_read: no model");
	memset(m, 0, sizeof *m);
	if (!path)
		return fail(err, errlen, "om_read: no path");
	if (open_elf(&r) < 0)
		goto out;
	/* From here res owns the mapping and the descriptor: om_free closes
	 * them.  open_elf found an ELF header, so the file is not empty. */
	res.file = malloc(sizeof *res.file);
	if (!res.file) {
		fail(err, errlen, "%s: out of memory", path);
		goto out;
	}
	res.file->len = (size_t)r.fsize;
	res.file->map = mmap(NULL, res.file->len, PROT_READ, MAP_PRIVATE, r.fd, 0);
	if (res.file->map == MAP_FAILED) {
		fail(err, errlen, "%s: cannot map it: %s", path, strerror(errno));
		free(res.file);
		res.file = NULL;
		goto out;
	}
	res.file->fd = r.fd;
	res.file->weights_offset = 0;
	res.file->weights_crc_due = 0;
	r.fd = -1;
	r.map = res.file->map;
	if (!find_sec(&r, OM_META_SECTION)) {
		fail(err, errlen, "%s: not an .om file (no %s section)", path, OM_META_SECTION);
		goto out;
	}
	if (sec_bytes(&r, OM_META_SECTION, "metadata", 0, 0, &meta, &metalen) < 0)
		goto out;
	/* The metadata's own CRC-32 first: a flipped bit is "corrupt", not
	 * whichever field it happened to land in. */
	const int has_crc = find_sec(&r, OM_META_CRC_SECTION) != NULL;
	if (has_crc) {
		const uint8_t *cb;
		uint64_t clen;
		if (sec_bytes(&r, OM_META_CRC_SECTION, "metadata CRC-32", 1, 4, &cb, &clen) < 0)
			goto out;
		uint32_t want = (uint32_t)cb[0] | (uint32_t)cb[1] << 8 | (uint32_t)cb[2] << 16 |
				(uint32_t)cb[3] << 24;
		if (crc32_of(meta, metalen) != want) {
			fail(err, errlen, "%s: section %s fails its CRC-32 check (the file is "
			     "corrupt)", path, OM_META_SECTION);
			goto out;
		}
	}
	/* An empty section still unpacks (to a message without format_version). */
	r.pm = dvom__model__unpack(NULL, (size_t)metalen, meta ? meta : (const uint8_t *)"");
	if (!r.pm) {
		fail(err, errlen, "%s: .om.meta: corrupt metadata (protobuf unpack failed)", path);
		goto out;
	}
	if (!has_crc && r.pm->format_version >= 2) {
		fail(err, errlen, "%s: .om.meta: no section %s (format_version %" PRIu32
		     " has one)", path, OM_META_CRC_SECTION, r.pm->format_version);
		goto out;
	}
	if (copy_model(&r, &res, expect_soc) < 0)
		goto out;
	*m = res;
	memset(&res, 0, sizeof res);
	rc = 0;
out:
	om_free(&res);
	if (r.pm)
		dvom__model__free_unpacked(r.pm, NULL);
	free(r.secs);
	if (r.elf)
		elf_end(r.elf);
	if (r.fd >= 0)
		close(r.fd);
	return rc;
}

void om_task_args(const struct om_task *t, const struct om_places *p, int64_t *args)
{
	for (uint32_t a = 0; a < t->nargs; a++) {
		const struct om_arg *g = &t->args[a];
		switch (g->kind) {
		case OM_ARG_SCALAR: args[a] = g->value; break;
		case OM_ARG_WEIGHT: args[a] = (int64_t)p->weights + g->value; break;
		case OM_ARG_WORKSPACE: args[a] = (int64_t)p->workspace + g->value; break;
		case OM_ARG_INPUT: args[a] = (int64_t)p->inputs[g->index] + g->value; break;
		default: args[a] = (int64_t)p->outputs[g->index] + g->value; break;
		}
	}
}

void om_free(struct om_model *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; m->variants && i < m->nvariants; i++)
		om_free(&m->variants[i]);
	free(m->variants);
	if (m->kernels && !m->file) /* a read model's code lies in the file's mapping */
		for (i = 0; i < m->nkernels; i++)
			free(m->kernels[i].code);
	if (m->tasks)
		for (i = 0; i < m->ntasks; i++) {
			free(m->tasks[i].args);
			free(m->tasks[i].inputs);
			free(m->tasks[i].outputs);
		}
	free(m->kernels);
	free(m->tasks);
	free(m->inputs);
	free(m->outputs);
	free(m->tensors);
	if (m->is_variant) {
		/* the weights and the file are the parent's */
	} else if (m->file) {
		munmap((void *)m->file->map, m->file->len);
		close(m->file->fd);
		free(m->file);
	} else {
		free(m->weights);
	}
	memset(m, 0, sizeof *m);
}

const struct om_model *om_variant(const struct om_model *m, int64_t b)
{
	if (b > 0 && m->batch == b)
		return m;
	for (uint32_t v = 0; v < m->nvariants; v++)
		if (m->variants[v].batch == b)
			return &m->variants[v];
	return NULL;
}

const struct om_model *om_variant_at_least(const struct om_model *m, int64_t b)
{
	for (uint32_t v = 0; v < m->nvariants; v++)
		if (m->variants[v].batch >= b)
			return &m->variants[v];
	return m->batch >= b && m->batch > 0 ? m : NULL;
}

unsigned om_batch_sizes(const struct om_model *m, int64_t *sizes)
{
	if (!m->batch)
		return 0;
	for (uint32_t v = 0; v < m->nvariants; v++)
		sizes[v] = m->variants[v].batch;
	sizes[m->nvariants] = m->batch;
	return m->nvariants + 1;
}

const struct om_model *om_dims_profile(const struct om_model *m, unsigned k)
{
	if (!m->ndims || k > m->nvariants)
		return NULL;
	return k < m->nvariants ? &m->variants[k] : m;
}

const struct om_model *om_variant_dims(const struct om_model *m, const int64_t *dims, unsigned n)
{
	if (n != m->ndims)
		return NULL;
	for (unsigned k = 0; k <= m->nvariants && n; k++) {
		const struct om_model *p = om_dims_profile(m, k);
		if (!memcmp(p->dims, dims, n * sizeof *dims))
			return p;
	}
	return NULL;
}

void om_dims_name(const struct om_model *m, char *buf, size_t len)
{
	size_t o = 0;
	if (len)
		buf[0] = 0;
	for (uint32_t d = 0; d < m->ndims && d < OM_MAX_DYN_DIMS && o < len; d++) {
		int w = snprintf(buf + o, len - o, "%s%" PRId64, d ? "x" : "", m->dims[d]);
		o += w > 0 ? (size_t)w : 0;
	}
}

void om_drop_code(const struct om_model *m)
{
	if (!m->file)
		return;
	/* Only pages of the file's mapping: on memory of any other kind (code
	 * a caller put in place of the file's) DONTNEED would zero it. */
	uintptr_t lo = (uintptr_t)m->file->map, hi = lo + m->file->len;
	uintptr_t a = UINTPTR_MAX, e = 0;
	for (uint32_t k = 0; k < m->nkernels; k++) {
		uintptr_t ka = (uintptr_t)m->kernels[k].code, ke = ka + m->kernels[k].bytes;
		if (!m->kernels[k].bytes || ka < lo || ke > hi || ke < ka)
			continue;
		a = ka < a ? ka : a;
		e = ke > e ? ke : e;
	}
	long pg = sysconf(_SC_PAGESIZE);
	if (a >= e || pg <= 0)
		return;
	/* One call over the span of every kernel's code, where one a kernel
	 * cost a TLB shootdown each (5 % of a timing-mode ResNet-50 run).
	 * Whatever else lies in the span, and the bytes around it in its first
	 * and last page, are file pages too: the mapping is read-only, so no
	 * page of it was ever written, and a later read maps it from the file
	 * again. */
	a -= a % (uintptr_t)pg;
	madvise((void *)a, e - a, MADV_DONTNEED);
}

int om_weights_file(const struct om_model *m, int *fd, uint64_t *offset)
{
	/* weights a caller put in place of the file's are not the file's */
	if (!m->file || m->weights != m->file->map + m->file->weights_offset ||
	    m->weights_bytes > m->file->len - m->file->weights_offset)
		return -1;
	*fd = m->file->fd;
	*offset = m->file->weights_offset;
	return 0;
}

int om_verify_weights(const struct om_model *m, const uint8_t *bytes, char *err,
		      size_t errlen)
{
	struct om_file *f = m->file;
	if (!f || !f->weights_crc_due)
		return 0;
	const uint8_t *w = bytes ? bytes : m->weights;
#ifdef MADV_POPULATE_READ
	/* The CRC reads every page of a mapping of the file: map them in one call, where reading
	 * them faulted 16 at a time (800 faults for ResNet-50's 51 MB, a third of a full run's, 5 us
	 * each on a virtual machine).  Reading maps these pages anyway, so memory use is the same;
	 * without the call (EINVAL before Linux 5.14, or memory not mapped from a file) they fault
	 * in as before. */
	long pg = sysconf(_SC_PAGESIZE);
	if (pg > 0 && m->weights_bytes) {
		uintptr_t a = (uintptr_t)w / (uintptr_t)pg * (uintptr_t)pg;
		(void)madvise((void *)a, (uintptr_t)w + m->weights_bytes - a, MADV_POPULATE_READ);
	}
#endif
	if (crc32_of(w, m->weights_bytes) != f->weights_crc32)
		return fail(err, errlen, "%s: section %s fails its CRC-32 check (the file is corrupt)",
			    f->path, OM_WEIGHTS_SECTION);
	f->weights_crc_due = 0;
	return 0;
}

const char *om_dtype_name(int32_t dtype)
{
	/* msprof prints GE's DT_* names without the prefix */
	switch (dtype) {
	case 1:
		return "FLOAT";
	case 2:
		return "UINT8";
	case 3:
		return "INT8";
	case 4:
		return "UINT16";
	case 5:
		return "INT16";
	case 6:
		return "INT32";
	case 7:
		return "INT64";
	case 8:
		return "STRING";
	case 9:
		return "BOOL";
	case 10:
		return "FLOAT16";
	case 11:
		return "DOUBLE";
	case 12:
		return "UINT32";
	case 13:
		return "UINT64";
	case 14:
		return "COMPLEX64";
	case 15:
		return "COMPLEX128";
	case 16:
		return "BF16";
	default:
		return "UNDEFINED";
	}
}

const char *om_format_name(int32_t format)
{
	/* the aclFormat values the compiler uses (enum cc_format) */
	switch (format) {
	case 0:
		return "NCHW";
	case 1:
		return "NHWC";
	case 2:
		return "ND";
	case 3:
		return "NC1HWC0";
	case 4:
		return "FRACTAL_Z";
	case 12:
		return "NC1HWC0_C04";
	case 29:
		return "FRACTAL_NZ";
	default:
		return "UNDEFINED";
	}
}

int om_task_types(const struct om_model *m, const char ***types, unsigned **counts)
{
	unsigned nty = 0, *cnt = calloc(m->ntasks + 1, sizeof *cnt);
	const char **ty = calloc(m->ntasks + 1, sizeof *ty);
	*types = NULL;
	*counts = NULL;
	if (!cnt || !ty) {
		free(cnt);
		free(ty);
		return -1;
	}
	for (unsigned i = 0; i < m->ntasks; i++) {
		unsigned k = 0;
		while (k < nty && strcmp(ty[k], m->tasks[i].op_type))
			k++;
		if (k == nty)
			ty[nty++] = m->tasks[i].op_type;
		cnt[k]++;
	}
	for (unsigned i = 1; i < nty; i++) /* insertion sort: few types */
		for (unsigned j = i; j > 0 && (cnt[j] > cnt[j - 1] ||
					      (cnt[j] == cnt[j - 1] && strcmp(ty[j], ty[j - 1]) < 0));
		     j--) {
			unsigned tc = cnt[j];
			const char *tt = ty[j];
			cnt[j] = cnt[j - 1];
			ty[j] = ty[j - 1];
			cnt[j - 1] = tc;
			ty[j - 1] = tt;
		}
	*types = ty;
	*counts = cnt;
	return (int)nty;
}

void om_print_task_types(const struct om_model *m, FILE *f)
{
	const char **ty;
	unsigned *cnt;
	int n = om_task_types(m, &ty, &cnt);
	for (int k = 0; k < n; k++)
		fprintf(f, "%s%s %u", k ? ", " : "", ty[k], cnt[k]);
	free(ty);
	free(cnt);
}
