/* check_om.c: tests for om/om.c (writing and reading .om offline models).
 *
 * One sample model (two kernels, three tasks using every argument kind, two
 * of them with their input and output tensors, an input, an output, a memory
 * plan, 1 KiB of weights) is written, read back and compared field by field.  Broken files are made two ways: by breaking the
 * in-memory model (om_write must refuse it and leave nothing behind), and by
 * editing the .om.meta message of a good file with libelf and protobuf-c, so
 * that om_read's own checks are tested and not only om_write's.  Truncated and
 * bit-flipped files must fail with a message, never crash (run under ASan).
 * A read model's weights stay in the file's mapping; a device block mapped
 * from them copy-on-write must never write through to the file, and a model
 * run from its file must give the bytes and cycles of the same model run
 * from memory (where the weights are copied in).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp, popen, strdup */
#endif

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libelf.h>

#include "isa.h"
#include "model.h"
#include "om.h"
#include "om.pb-c.h"
#include "sim.h"
#include "soc.h"

#define ERRLEN 2048

/* Per-test scratch directory; the checked fixture runs in each test's child. */
static char tmpdir[256];

static void tmp_setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/check_om.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", tmpdir, de->d_name);
		if (unlink(path) < 0)
			rmdir(path); /* the directory test_write_rename_fails makes */
	}
	closedir(d);
	rmdir(tmpdir);
}

static void tmp_path(char *buf, size_t len, const char *fname)
{
	snprintf(buf, len, "%s/%s", tmpdir, fname);
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Entries of tmpdir other than . and .. */
static int tmp_entries(void)
{
	struct dirent *de;
	DIR *d = opendir(tmpdir);
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_all(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	if (len)
		ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* ------------------------------------------------------------------------ */
/* The sample model                                                         */

static void set_desc(struct om_tensor_desc *d, const char *name, int dtype, int format, int rank,
		     const int64_t *dims, uint64_t offset, uint64_t size)
{
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", name);
	d->dtype = dtype;
	d->format = format;
	d->rank = rank;
	if (rank > 0)
		memcpy(d->dims, dims, (size_t)rank * sizeof *dims);
	d->offset = offset;
	d->size = size;
}

static void set_task(struct om_task *t, const char *name, const char *op, uint32_t kernel,
		     uint32_t block_dim, const struct om_arg *args, uint32_t nargs)
{
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	snprintf(t->op_type, sizeof t->op_type, "%s", op);
	snprintf(t->cann_type, sizeof t->cann_type, "%s", strncmp(op, "Conv", 4) ? op : "Conv2D");
	t->kernel = kernel;
	t->block_dim = block_dim;
	t->args = malloc(nargs * sizeof *args);
	ck_assert_ptr_nonnull(t->args);
	memcpy(t->args, args, nargs * sizeof *args);
	t->nargs = nargs;
	t->flops = 1000u * (kernel + 1) + block_dim;
	t->bytes = (uint64_t)1 << (40 + kernel);
}

/* A task's tensors, malloc'd like om_read's. */
static void set_task_io(struct om_task *t, const struct om_tensor_desc *in, uint32_t nin,
			const struct om_tensor_desc *out, uint32_t nout)
{
	t->inputs = calloc(nin + 1, sizeof *in);
	t->outputs = calloc(nout + 1, sizeof *out);
	ck_assert_ptr_nonnull(t->inputs);
	ck_assert_ptr_nonnull(t->outputs);
	memcpy(t->inputs, in, nin * sizeof *in);
	memcpy(t->outputs, out, nout * sizeof *out);
	t->ninputs = nin;
	t->noutputs = nout;
}

static void set_kernel(struct om_kernel *k, const char *name, uint64_t words, uint8_t seed)
{
	uint64_t i;

	snprintf(k->name, sizeof k->name, "%s", name);
	k->bytes = words * 16;
	k->code = malloc(k->bytes);
	ck_assert_ptr_nonnull(k->code);
	for (i = 0; i < k->bytes; i++)
		k->code[i] = (uint8_t)(seed + i * 13);
}

/* Everything malloc'd, as om_read returns it, so om_free releases it. */
static void sample_model(struct om_model *m)
{
	static const int64_t in_dims[] = { 1, 3, 8, 8 }, out_dims[] = { 1, 10 },
			     x5hd[] = { 1, 1, 8, 8, 16 }, conv[] = { 1, 1, 4, 4, 16 },
			     w_dims[] = { 16, 3, 3, 3 }, conv_dims[] = { 1, 16, 4, 4 },
			     flat[] = { 1, 256 }, fc_w[] = { 256, 10 };
	struct om_tensor_desc io[4];
	static const struct om_arg conv_args[] = {
		{ OM_ARG_INPUT, 0, 0 },	      { OM_ARG_WEIGHT, 0, 0 },    { OM_ARG_WEIGHT, 512, 0 },
		{ OM_ARG_WORKSPACE, 2048, 0 }, { OM_ARG_SCALAR, -5, 0 },
	};
	static const struct om_arg fc_args[] = {
		{ OM_ARG_WORKSPACE, 2048, 0 },
		{ OM_ARG_WEIGHT, 1023, 0 },
		{ OM_ARG_WORKSPACE, 2560, 0 },
		{ OM_ARG_SCALAR, (int64_t)1 << 40, 0 },
	};
	static const struct om_arg out_args[] = {
		{ OM_ARG_WORKSPACE, 2560, 0 },
		{ OM_ARG_OUTPUT, 18, 0 },
		{ OM_ARG_SCALAR, INT64_MIN, 0 },
	};
	uint64_t i;

	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "tiny_net");
	snprintf(m->soc, sizeof m->soc, "Ascend910");
	m->workspace_bytes = 4096;
	m->weights_bytes = 1024;
	m->weights = malloc(m->weights_bytes);
	ck_assert_ptr_nonnull(m->weights);
	for (i = 0; i < m->weights_bytes; i++)
		m->weights[i] = (uint8_t)(i * 7 + 3);

	m->nkernels = 2;
	m->kernels = calloc(2, sizeof *m->kernels);
	ck_assert_ptr_nonnull(m->kernels);
	set_kernel(&m->kernels[0], "conv+relu", 4, 1);
	set_kernel(&m->kernels[1], "vadd.f16", 2, 99);

	m->ninputs = 1;
	m->inputs = calloc(1, sizeof *m->inputs);
	ck_assert_ptr_nonnull(m->inputs);
	set_desc(&m->inputs[0], "x", 1, 0, 4, in_dims, 0, 768);
	m->noutputs = 1;
	m->outputs = calloc(1, sizeof *m->outputs);
	ck_assert_ptr_nonnull(m->outputs);
	set_desc(&m->outputs[0], "y", 10, 2, 2, out_dims, 0, 20);
	m->ntensors = 4;
	m->tensors = calloc(4, sizeof *m->tensors);
	ck_assert_ptr_nonnull(m->tensors);
	set_desc(&m->tensors[0], "x_5hd", 10, 3, 5, x5hd, 0, 2048);
	set_desc(&m->tensors[1], "conv_out", 10, 3, 5, conv, 2048, 512);
	set_desc(&m->tensors[2], "y_fp16", 10, 2, 2, out_dims, 2560, 20);
	set_desc(&m->tensors[3], "scale", 1, 2, 0, NULL, 2592, 4);

	m->ntasks = 3;
	m->tasks = calloc(3, sizeof *m->tasks);
	ck_assert_ptr_nonnull(m->tasks);
	set_task(&m->tasks[0], "conv1", "Conv+Relu", 0, 2, conv_args, 5);
	set_task(&m->tasks[1], "fc", "Gemm", 1, 1, fc_args, 4);
	set_task(&m->tasks[2], "out", "TransData", 1, 65535, out_args, 3);
	/* conv1: fp16 NC1HWC0 activations, FRACTAL_Z weights */
	set_desc(&io[0], "x", 10, 3, 4, in_dims, 0, 384);
	set_desc(&io[1], "w", 10, 4, 4, w_dims, 0, 864);
	set_desc(&io[2], "conv_out", 10, 3, 4, conv_dims, 0, 512);
	set_task_io(&m->tasks[0], io, 2, &io[2], 1);
	/* fc: ND, FRACTAL_NZ, a rank-0 scalar */
	set_desc(&io[0], "conv_out", 10, 2, 2, flat, 0, 512);
	set_desc(&io[1], "fc.w", 10, 29, 2, fc_w, 0, 5120);
	set_desc(&io[2], "scale", 1, 2, 0, NULL, 0, 4);
	set_desc(&io[3], "y_fp16", 10, 2, 2, out_dims, 0, 20);
	set_task_io(&m->tasks[1], io, 3, &io[3], 1);
	/* out: none, as in files written before tasks had tensors */
}

static void assert_same_desc(const struct om_tensor_desc *a, const struct om_tensor_desc *b)
{
	int k;

	ck_assert_str_eq(a->name, b->name);
	ck_assert_int_eq(a->dtype, b->dtype);
	ck_assert_int_eq(a->format, b->format);
	ck_assert_int_eq(a->rank, b->rank);
	for (k = 0; k < a->rank; k++)
		ck_assert_int_eq(a->dims[k], b->dims[k]);
	ck_assert_uint_eq(a->offset, b->offset);
	ck_assert_uint_eq(a->size, b->size);
}

static void assert_same_model(const struct om_model *a, const struct om_model *b)
{
	uint32_t i, j;

	ck_assert_str_eq(a->name, b->name);
	ck_assert_str_eq(a->soc, b->soc);
	ck_assert_uint_eq(a->workspace_bytes, b->workspace_bytes);
	ck_assert_uint_eq(a->weights_bytes, b->weights_bytes);
	if (a->weights_bytes)
		ck_assert(memcmp(a->weights, b->weights, a->weights_bytes) == 0);
	ck_assert_uint_eq(a->nkernels, b->nkernels);
	for (i = 0; i < a->nkernels; i++) {
		ck_assert_str_eq(a->kernels[i].name, b->kernels[i].name);
		ck_assert_uint_eq(a->kernels[i].bytes, b->kernels[i].bytes);
		ck_assert(memcmp(a->kernels[i].code, b->kernels[i].code, a->kernels[i].bytes) == 0);
	}
	ck_assert_uint_eq(a->ntasks, b->ntasks);
	for (i = 0; i < a->ntasks; i++) {
		const struct om_task *ta = &a->tasks[i], *tb = &b->tasks[i];

		ck_assert_str_eq(ta->name, tb->name);
		ck_assert_str_eq(ta->op_type, tb->op_type);
		ck_assert_str_eq(ta->cann_type, tb->cann_type);
		ck_assert_uint_eq(ta->kernel, tb->kernel);
		ck_assert_uint_eq(ta->block_dim, tb->block_dim);
		ck_assert_uint_eq(ta->flops, tb->flops);
		ck_assert_uint_eq(ta->bytes, tb->bytes);
		ck_assert_uint_eq(ta->nargs, tb->nargs);
		for (j = 0; j < ta->nargs; j++) {
			ck_assert_int_eq(ta->args[j].kind, tb->args[j].kind);
			ck_assert_int_eq(ta->args[j].value, tb->args[j].value);
			ck_assert_uint_eq(ta->args[j].index, tb->args[j].index);
		}
		ck_assert_uint_eq(ta->ninputs, tb->ninputs);
		for (j = 0; j < ta->ninputs; j++)
			assert_same_desc(&ta->inputs[j], &tb->inputs[j]);
		ck_assert_uint_eq(ta->noutputs, tb->noutputs);
		for (j = 0; j < ta->noutputs; j++)
			assert_same_desc(&ta->outputs[j], &tb->outputs[j]);
	}
	ck_assert_uint_eq(a->ninputs, b->ninputs);
	for (i = 0; i < a->ninputs; i++)
		assert_same_desc(&a->inputs[i], &b->inputs[i]);
	ck_assert_uint_eq(a->noutputs, b->noutputs);
	for (i = 0; i < a->noutputs; i++)
		assert_same_desc(&a->outputs[i], &b->outputs[i]);
	ck_assert_uint_eq(a->ntensors, b->ntensors);
	for (i = 0; i < a->ntensors; i++)
		assert_same_desc(&a->tensors[i], &b->tensors[i]);
}

static void write_ok(const char *path, const struct om_model *m)
{
	char err[ERRLEN] = "";

	if (om_write(path, m, err, sizeof err) != 0)
		ck_abort_msg("om_write(%s) failed: %s", path, err);
}

/* Write the sample model to <tmpdir>/<fname>. */
static void write_sample(char *path, size_t len, const char *fname)
{
	struct om_model m;

	tmp_path(path, len, fname);
	sample_model(&m);
	write_ok(path, &m);
	om_free(&m);
}

/* om_read must fail with a message naming the file and containing want, and
 * leave the model zeroed. */
static void expect_read_error(const char *path, const char *soc, const char *want)
{
	struct om_model m, zero;
	char err[ERRLEN] = "", where[600];

	memset(&zero, 0, sizeof zero);
	memset(&m, 0x5a, sizeof m);
	ck_assert_int_eq(om_read(path, &m, soc, err, sizeof err), -1);
	snprintf(where, sizeof where, "%s: ", path);
	ck_assert_msg(strncmp(err, where, strlen(where)) == 0, "'%s' does not start with '%s'",
		      err, where);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert_msg(memcmp(&m, &zero, sizeof m) == 0, "failed om_read left data in the model");
	om_free(&m);
}

/* om_write must refuse m with want in the message, leaving no file at all. */
static void expect_write_error(struct om_model *m, const char *want)
{
	char path[512], err[ERRLEN] = "";

	tmp_path(path, sizeof path, "bad.om");
	ck_assert_int_eq(om_write(path, m, err, sizeof err), -1);
	ck_assert_msg(strstr(err, path) != NULL, "'%s' does not name %s", err, path);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert_int_eq(tmp_entries(), 0);
}

/* ------------------------------------------------------------------------ */
/* Editing files behind om_write's back                                     */

/* The named section's file offset and size, found with libelf. */
static void find_section(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *n;

		ck_assert_ptr_nonnull(sh);
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0) {
			*off = sh->sh_offset;
			*size = sh->sh_size;
			elf_end(e);
			close(fd);
			return;
		}
	}
	ck_abort_msg("%s: no section %s", path, name);
}

typedef void (*meta_edit)(Dvom__Model *pm);

/* CRC-32 as zlib computes it (the .om's section checksums), bit by bit. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

/* Replace a string of an unpacked message (protobuf-c frees it with free()). */
static void set_str(char **field, const char *s)
{
	free(*field);
	*field = strdup(s);
	ck_assert_ptr_nonnull(*field);
}

/* Unpack .om.meta of path, apply edit, and write it back with libelf, which
 * lays the file out again if the message changed size. */
static void edit_meta(const char *path, meta_edit edit)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	Dvom__Model *pm;
	size_t shstrndx, len;
	uint8_t *buf;
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_RDWR, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *n = sh ? elf_strptr(e, shstrndx, sh->sh_name) : NULL;

		if (n && strcmp(n, ".om.meta") == 0) {
			d = elf_getdata(scn, NULL);
			break;
		}
	}
	ck_assert_ptr_nonnull(d);
	pm = dvom__model__unpack(NULL, d->d_size, d->d_buf);
	ck_assert_ptr_nonnull(pm);
	edit(pm);
	len = dvom__model__get_packed_size(pm);
	buf = malloc(len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(dvom__model__pack(pm, buf), len);
	d->d_buf = buf;
	d->d_size = len;
	ck_assert(elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY) != 0);
	/* the metadata's own CRC-32 follows the edit: the field checks are
	 * what these tests are about */
	for (scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *n = sh ? elf_strptr(e, shstrndx, sh->sh_name) : NULL;

		if (n && strcmp(n, ".om.meta.crc") == 0) {
			Elf_Data *cd = elf_getdata(scn, NULL);
			uint32_t c = crc32_ieee(buf, len);

			ck_assert_ptr_nonnull(cd);
			ck_assert_uint_eq(cd->d_size, 4);
			for (int k = 0; k < 4; k++)
				((uint8_t *)cd->d_buf)[k] = (uint8_t)(c >> (8 * k));
			ck_assert(elf_flagdata(cd, ELF_C_SET, ELF_F_DIRTY) != 0);
		}
	}
	ck_assert_msg(elf_update(e, ELF_C_WRITE) >= 0, "elf_update: %s", elf_errmsg(-1));
	elf_end(e);
	close(fd);
	free(buf);
	dvom__model__free_unpacked(pm, NULL);
}

/* A good file with one edit to its metadata must be refused by om_read. */
static void expect_meta_error(meta_edit edit, const char *want)
{
	char path[512];

	write_sample(path, sizeof path, "edited.om");
	edit_meta(path, edit);
	expect_read_error(path, NULL, want);
}

static void ed_nothing(Dvom__Model *pm)
{
	(void)pm;
}

static void ed_kernel_index(Dvom__Model *pm)
{
	pm->tasks[1]->kernel = 2;
}

static void ed_weight_offset(Dvom__Model *pm)
{
	pm->tasks[1]->args[1]->value = 1024;
}

static void ed_input_index(Dvom__Model *pm)
{
	pm->tasks[0]->args[0]->index = 1;
}

static void ed_input_offset(Dvom__Model *pm)
{
	pm->tasks[0]->args[0]->value = 768;
}

static void ed_output_index(Dvom__Model *pm)
{
	pm->tasks[2]->args[1]->index = 7;
}

static void ed_workspace_offset(Dvom__Model *pm)
{
	pm->tasks[0]->args[3]->value = 4096;
}

static void ed_negative_offset(Dvom__Model *pm)
{
	pm->tasks[0]->args[1]->value = -1;
}

static void ed_arg_kind(Dvom__Model *pm)
{
	pm->tasks[2]->args[0]->kind = (Dvom__ArgKind)9;
}

static void ed_block_dim0(Dvom__Model *pm)
{
	pm->tasks[0]->block_dim = 0;
}

static void ed_block_dim_big(Dvom__Model *pm)
{
	pm->tasks[0]->block_dim = 65536;
}

static void ed_version0(Dvom__Model *pm)
{
	pm->format_version = 0;
}

static void ed_version_new(Dvom__Model *pm)
{
	pm->format_version = 3;
}

static void ed_no_soc(Dvom__Model *pm)
{
	set_str(&pm->soc, "");
}

static void ed_long_soc(Dvom__Model *pm)
{
	set_str(&pm->soc, "Ascend910-with-a-name-far-too-long-for-the-sixty-four-byte-field-x");
}

static void ed_long_task_name(Dvom__Model *pm)
{
	char name[200];

	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	set_str(&pm->tasks[2]->name, name);
}

static void ed_code_bytes(Dvom__Model *pm)
{
	pm->kernels[0]->code_bytes = 48;
}

static void ed_missing_kernel_section(Dvom__Model *pm)
{
	set_str(&pm->kernels[1]->name, "gone");
	set_str(&pm->kernels[1]->section, ".text.gone");
}

static void ed_section_name(Dvom__Model *pm)
{
	set_str(&pm->kernels[1]->section, ".weights");
}

static void ed_kernel_name_slash(Dvom__Model *pm)
{
	set_str(&pm->kernels[1]->name, "a/b");
}

static void ed_duplicate_kernel(Dvom__Model *pm)
{
	set_str(&pm->kernels[1]->name, "conv+relu");
	set_str(&pm->kernels[1]->section, ".text.conv+relu");
	pm->kernels[1]->code_bytes = 64;
	pm->kernels[1]->crc32 = pm->kernels[0]->crc32; /* the section it now names */
}

static void ed_weights_bytes(Dvom__Model *pm)
{
	pm->weights_bytes = 512;
}

static void ed_rank9(Dvom__Model *pm)
{
	Dvom__TensorDesc *d = pm->inputs[0];
	int64_t *dims = realloc(d->dims, 9 * sizeof *dims);
	size_t k;

	ck_assert_ptr_nonnull(dims);
	for (k = d->n_dims; k < 9; k++)
		dims[k] = 1;
	d->dims = dims;
	d->n_dims = 9;
}

static void ed_negative_dim(Dvom__Model *pm)
{
	pm->outputs[0]->dims[1] = -10;
}

static void ed_size_mismatch(Dvom__Model *pm)
{
	pm->tensors[1]->size = 1024;
}

static void ed_tensor_outside(Dvom__Model *pm)
{
	pm->tensors[1]->offset = 4000;
}

static void ed_bad_dtype(Dvom__Model *pm)
{
	pm->tensors[0]->dtype = 0;
}

static void ed_task_rank9(Dvom__Model *pm)
{
	Dvom__TensorDesc *d = pm->tasks[0]->inputs[1];
	int64_t *dims = realloc(d->dims, 9 * sizeof *dims);
	size_t k;

	ck_assert_ptr_nonnull(dims);
	for (k = d->n_dims; k < 9; k++)
		dims[k] = 1;
	d->dims = dims;
	d->n_dims = 9;
}

static void ed_task_negative_dim(Dvom__Model *pm)
{
	pm->tasks[0]->outputs[0]->dims[1] = -16;
}

static void ed_task_bad_dtype(Dvom__Model *pm)
{
	pm->tasks[1]->inputs[2]->dtype = -3;
}

static void ed_task_size(Dvom__Model *pm)
{
	pm->tasks[1]->outputs[0]->size = 40;
}

static void ed_task_long_name(Dvom__Model *pm)
{
	char name[300];

	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	set_str(&pm->tasks[1]->inputs[0]->name, name);
}

/* What a file written before tasks had tensors holds: none at all. */
static void ed_strip_task_tensors(Dvom__Model *pm)
{
	size_t i, k;

	for (i = 0; i < pm->n_tasks; i++) {
		Dvom__Task *t = pm->tasks[i];

		for (k = 0; k < t->n_inputs; k++)
			dvom__tensor_desc__free_unpacked(t->inputs[k], NULL);
		for (k = 0; k < t->n_outputs; k++)
			dvom__tensor_desc__free_unpacked(t->outputs[k], NULL);
		free(t->inputs);
		free(t->outputs);
		t->inputs = t->outputs = NULL;
		t->n_inputs = t->n_outputs = 0;
	}
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */

START_TEST(test_roundtrip)
{
	struct om_model m, r;
	char path[512], err[ERRLEN] = "";

	sample_model(&m);
	tmp_path(path, sizeof path, "model.om");
	write_ok(path, &m);
	ck_assert_int_eq(tmp_entries(), 1); /* no model.om.tmp left over */
	if (om_read(path, &r, "Ascend910", err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);
	assert_same_model(&m, &r);
	om_free(&r);
	/* No SoC expected: any is accepted. */
	if (om_read(path, &r, NULL, err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);
	assert_same_model(&m, &r);
	om_free(&r);
	om_free(&r); /* om_free zeroes, so a second call is harmless */

	/* Writing over an existing file replaces it. */
	m.tasks[0].flops = 42;
	write_ok(path, &m);
	if (om_read(path, &r, NULL, err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);
	assert_same_model(&m, &r);
	om_free(&r);
	om_free(&m);
}
END_TEST

/* Edge values: no weights, no tasks, no memory plan. */
START_TEST(test_roundtrip_minimal)
{
	struct om_model m, r;
	char path[512], err[ERRLEN] = "";

	sample_model(&m);
	free(m.weights);
	m.weights = NULL;
	m.weights_bytes = 0;
	free(m.tensors);
	m.tensors = NULL;
	m.ntensors = 0;
	for (uint32_t i = 0; i < m.ntasks; i++) {
		free(m.tasks[i].args);
		free(m.tasks[i].inputs);
		free(m.tasks[i].outputs);
	}
	free(m.tasks);
	m.tasks = NULL;
	m.ntasks = 0;
	tmp_path(path, sizeof path, "min.om");
	write_ok(path, &m);
	if (om_read(path, &r, "Ascend910", err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);
	assert_same_model(&m, &r);
	ck_assert_ptr_null(r.weights);
	om_free(&r);
	om_free(&m);
}
END_TEST

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	ck_assert_int_gt(len, 0);
	rewind(f);
	uint8_t *b = malloc((size_t)len);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

/* om_read leaves the weights in the file; a GM block mapped from them has
 * the weights, zeros after them, and takes writes without changing the
 * file, the model's view or the next block mapped from it. */
START_TEST(test_weights_mapped_cow)
{
	struct om_model m, r;
	struct soc_config cfg;
	char path[512], err[ERRLEN] = "";
	int fd;
	uint64_t off;

	sample_model(&m);
	ck_assert_int_eq(om_weights_file(&m, &fd, &off), -1); /* built in memory */
	tmp_path(path, sizeof path, "cow.om");
	write_ok(path, &m);
	size_t flen;
	uint8_t *before = slurp(path, &flen);
	if (om_read(path, &r, NULL, err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);
	ck_assert_int_eq(om_weights_file(&r, &fd, &off), 0);
	ck_assert_uint_le(off + r.weights_bytes, flen);
	ck_assert(memcmp(before + off, m.weights, m.weights_bytes) == 0);
	uint8_t *keep = r.weights; /* weights put in place of the file's are not it */
	r.weights = m.weights;
	ck_assert_int_eq(om_weights_file(&r, &fd, &off), -1);
	r.weights = keep;
	ck_assert_int_eq(om_weights_file(&r, &fd, &off), 0);

	/* dropped code reads back from the file; code that is not the file's
	 * is left alone (DONTNEED would zero heap memory) */
	uint8_t *code1 = r.kernels[1].code, *mine = malloc(m.kernels[1].bytes);
	ck_assert_ptr_nonnull(mine);
	memcpy(mine, m.kernels[1].code, m.kernels[1].bytes);
	r.kernels[1].code = mine;
	om_drop_code(&r);
	ck_assert(memcmp(r.kernels[0].code, m.kernels[0].code, m.kernels[0].bytes) == 0);
	ck_assert(memcmp(mine, m.kernels[1].code, m.kernels[1].bytes) == 0);
	r.kernels[1].code = code1;
	free(mine);
	om_drop_code(&r); /* every kernel's, again */
	for (uint32_t k = 0; k < r.nkernels; k++)
		ck_assert(memcmp(r.kernels[k].code, m.kernels[k].code, m.kernels[k].bytes) == 0);
	ck_assert(memcmp(r.weights, m.weights, m.weights_bytes) == 0);
	om_drop_code(&m); /* built in memory: nothing */

	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	ck_assert_msg(dev, "%s", err);
	uint64_t bytes = r.weights_bytes + 5000; /* past the file part's last page */
	uint64_t a = sim_gm_alloc_file(dev, bytes, fd, off, r.weights_bytes);
	ck_assert_uint_ne(a, 0);
	uint8_t *p = sim_gm_ptr(dev, a, bytes);
	ck_assert_ptr_nonnull(p);
	ck_assert(memcmp(p, m.weights, m.weights_bytes) == 0);
	for (uint64_t i = r.weights_bytes; i < bytes; i++)
		ck_assert_uint_eq(p[i], 0);

	/* a kernel overwriting its weights: through GM, and the loader's
	 * copy of the block onto itself */
	uint8_t *junk = malloc(bytes);
	ck_assert_ptr_nonnull(junk);
	memset(junk, 0xa5, bytes);
	ck_assert_int_eq(sim_gm_write(dev, a, junk, bytes), 0);
	ck_assert_int_eq(sim_gm_write(dev, a, p, bytes), 0);
	ck_assert(memcmp(p, junk, bytes) == 0);

	size_t flen2;
	uint8_t *after = slurp(path, &flen2);
	ck_assert_uint_eq(flen2, flen);
	ck_assert(memcmp(before, after, flen) == 0);
	ck_assert(memcmp(r.weights, m.weights, m.weights_bytes) == 0);
	uint64_t b = sim_gm_alloc_file(dev, bytes, fd, off, r.weights_bytes);
	ck_assert_uint_ne(b, 0);
	ck_assert(memcmp(sim_gm_ptr(dev, b, bytes), m.weights, m.weights_bytes) == 0);

	/* freed both ways: by address and with the device */
	ck_assert_int_eq(sim_gm_free(dev, a), 0);
	sim_device_free(dev);
	free(junk);
	free(before);
	free(after);
	om_free(&r);
	om_free(&m);
}
END_TEST

/* y = w + x (tests/kernels/vadd.s, 32768 fp16 elements), then a second
 * task overwrites the weights with x + x: a model whose kernels write their
 * weights.  Weights 1.0, x 2.0: y is 3.0 unless a load saw the 4.0 a
 * previous execution left. */
#define COW_N 32768
static void vadd_model(struct om_model *m)
{
	char err[ERRLEN], k[600];
	const char *kd = getenv("DAVINCI_KERNEL_DIR");
	struct isa_program prog;

	snprintf(k, sizeof k, "%s/vadd.s", kd ? kd : "tests/kernels");
	ck_assert_msg(isa_assemble_file(k, &prog, err, sizeof err) == 0, "%s", err);
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "weights_cow");
	snprintf(m->soc, sizeof m->soc, "Ascend910");
	m->nkernels = 1;
	m->kernels = calloc(1, sizeof *m->kernels);
	ck_assert_ptr_nonnull(m->kernels);
	snprintf(m->kernels[0].name, sizeof m->kernels[0].name, "vadd");
	m->kernels[0].code = prog.code;
	m->kernels[0].bytes = prog.ninsns * ISA_INSN_BYTES;
	m->weights_bytes = 2 * COW_N;
	m->weights = malloc(m->weights_bytes);
	ck_assert_ptr_nonnull(m->weights);
	for (size_t i = 0; i < COW_N; i++) {
		m->weights[2 * i] = 0x00; /* fp16 1.0 = 0x3c00, little-endian */
		m->weights[2 * i + 1] = 0x3c;
	}
	m->workspace_bytes = 512;
	struct om_tensor_desc d = { .dtype = 10, .format = 2, .rank = 1, .dims = { COW_N },
				    .size = 2 * COW_N };
	m->ninputs = m->noutputs = 1;
	m->inputs = calloc(1, sizeof d);
	m->outputs = calloc(1, sizeof d);
	ck_assert(m->inputs && m->outputs);
	m->inputs[0] = m->outputs[0] = d;
	snprintf(m->inputs[0].name, sizeof d.name, "x");
	snprintf(m->outputs[0].name, sizeof d.name, "y");
	static const struct om_arg add[] = { { OM_ARG_WEIGHT, 0, 0 }, { OM_ARG_INPUT, 0, 0 },
					     { OM_ARG_OUTPUT, 0, 0 }, { OM_ARG_SCALAR, COW_N, 0 } };
	static const struct om_arg clobber[] = { { OM_ARG_INPUT, 0, 0 }, { OM_ARG_INPUT, 0, 0 },
						 { OM_ARG_WEIGHT, 0, 0 },
						 { OM_ARG_SCALAR, COW_N, 0 } };
	const struct om_arg *args[2] = { add, clobber };
	m->ntasks = 2;
	m->tasks = calloc(2, sizeof *m->tasks);
	ck_assert_ptr_nonnull(m->tasks);
	for (int t = 0; t < 2; t++) {
		struct om_task *tk = &m->tasks[t];
		snprintf(tk->name, sizeof tk->name, t ? "clobber_weights" : "add");
		snprintf(tk->op_type, sizeof tk->op_type, "Add");
		tk->block_dim = 1;
		tk->nargs = 4;
		tk->args = malloc(sizeof add);
		ck_assert_ptr_nonnull(tk->args);
		memcpy(tk->args, args[t], sizeof add);
	}
}

/* One execution of m on a fresh Ascend910; returns its cycles, y in *y. */
static uint64_t run_vadd(const struct om_model *m, struct om_tensor *y)
{
	struct soc_config cfg;
	char err[ERRLEN];
	ck_assert_msg(soc_load("Ascend910", &cfg, err, sizeof err) == 0, "%s", err);
	struct sim_device *dev = sim_device_new(&cfg, NULL, err, sizeof err);
	ck_assert_msg(dev, "%s", err);
	struct om_tensor x = { .name = "x", .dtype = 10, .rank = 1, .dims = { COW_N },
			       .nbytes = 2 * COW_N };
	uint16_t *xd = malloc(x.nbytes);
	ck_assert_ptr_nonnull(xd);
	for (size_t i = 0; i < COW_N; i++)
		xd[i] = 0x4000; /* 2.0 */
	x.data = xd;
	struct rt_run run;
	ck_assert_msg(rt_model_run(dev, m, &x, 1, y, &run, err, sizeof err) == 0, "%s", err);
	uint64_t cycles = run.cycles;
	rt_run_free(&run);
	free(xd);
	sim_device_free(dev);
	return cycles;
}

/* A model run from its file equals the same model run from memory, and
 * its kernels writing their weights change neither the file nor the next
 * load. */
START_TEST(test_weights_cow_run)
{
	struct om_model m, r;
	struct om_tensor ym, yf, yf2;
	char path[512], err[ERRLEN] = "";

	vadd_model(&m);
	tmp_path(path, sizeof path, "cow_run.om");
	write_ok(path, &m);
	size_t flen, flen2;
	uint8_t *before = slurp(path, &flen);
	if (om_read(path, &r, "Ascend910", err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);

	uint64_t cm = run_vadd(&m, &ym);
	uint64_t cf = run_vadd(&r, &yf);
	uint64_t cf2 = run_vadd(&r, &yf2);
	ck_assert_uint_eq(cf, cm);
	ck_assert_uint_eq(cf2, cm);
	ck_assert_uint_eq(yf.nbytes, 2 * COW_N);
	const uint16_t *y = ym.data;
	for (size_t i = 0; i < COW_N; i++)
		ck_assert_uint_eq(y[i], 0x4200); /* 3.0 */
	ck_assert(memcmp(yf.data, ym.data, yf.nbytes) == 0);
	ck_assert(memcmp(yf2.data, ym.data, yf2.nbytes) == 0);

	uint8_t *after = slurp(path, &flen2);
	ck_assert_uint_eq(flen2, flen);
	ck_assert(memcmp(before, after, flen) == 0);
	ck_assert(memcmp(r.weights, m.weights, m.weights_bytes) == 0);
	om_tensor_free(&ym);
	om_tensor_free(&yf);
	om_tensor_free(&yf2);
	free(before);
	free(after);
	om_free(&r);
	om_free(&m);
}
END_TEST

/* The ELF header and section flags om.h promises, checked with libelf. */
START_TEST(test_elf_layout)
{
	char path[512];
	Elf *e;
	Elf64_Ehdr *eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd, seen = 0;

	write_sample(path, sizeof path, "model.om");
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	eh = elf64_getehdr(e);
	ck_assert_ptr_nonnull(eh);
	ck_assert_int_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
	ck_assert_int_eq(eh->e_ident[EI_DATA], ELFDATA2LSB);
	ck_assert_int_eq(eh->e_type, ET_REL);
	ck_assert_int_eq(eh->e_machine, EM_NONE);
	ck_assert_int_eq(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *n = elf_strptr(e, shstrndx, sh->sh_name);

		ck_assert_ptr_nonnull(n);
		if (strncmp(n, ".text.", 6) == 0) {
			ck_assert_int_eq(sh->sh_type, SHT_PROGBITS);
			ck_assert_uint_eq(sh->sh_flags, SHF_ALLOC | SHF_EXECINSTR);
			ck_assert_uint_eq(sh->sh_addralign, 16);
			ck_assert_uint_eq(sh->sh_offset % 16, 0);
			ck_assert_uint_eq(sh->sh_size % 16, 0);
			seen |= strcmp(n, ".text.conv+relu") == 0 ? 1 : 2;
		} else if (strcmp(n, ".weights") == 0) {
			ck_assert_int_eq(sh->sh_type, SHT_PROGBITS);
			ck_assert_uint_eq(sh->sh_flags, SHF_ALLOC);
			ck_assert_uint_eq(sh->sh_addralign, 512);
			ck_assert_uint_eq(sh->sh_offset % 512, 0);
			ck_assert_uint_eq(sh->sh_size, 1024);
			seen |= 4;
		} else if (strcmp(n, ".om.meta") == 0) {
			ck_assert_int_eq(sh->sh_type, SHT_PROGBITS);
			ck_assert_uint_eq(sh->sh_flags, 0);
			seen |= 8;
		} else if (strcmp(n, ".om.meta.crc") == 0) {
			ck_assert_int_eq(sh->sh_type, SHT_PROGBITS);
			ck_assert_uint_eq(sh->sh_size, 4);
			seen |= 32;
		} else {
			ck_assert_str_eq(n, ".shstrtab");
			seen |= 16;
		}
	}
	ck_assert_int_eq(seen, 63);
	elf_end(e);
	close(fd);
}
END_TEST

START_TEST(test_readelf)
{
	static const char *const want[] = { ".text.conv+relu", ".text.vadd.f16", ".weights",
					    ".om.meta", ".shstrtab" };
	char path[512], cmd[700], line[512];
	int found[5] = { 0 };
	FILE *p;
	size_t i;

	if (system("command -v readelf >/dev/null 2>&1") != 0)
		return; /* binutils not installed: nothing to check against */
	write_sample(path, sizeof path, "model.om");
	ck_assert_ptr_null(strchr(path, '\''));
	snprintf(cmd, sizeof cmd, "readelf -S -W '%s' 2>&1", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof line, p)) {
		/* readelf warns about anything it finds malformed */
		ck_assert_msg(strstr(line, "Warning") == NULL && strstr(line, "Error") == NULL,
			      "readelf: %s", line);
		for (i = 0; i < 5; i++) {
			const char *at = strstr(line, want[i]);

			/* whole names only: ".weights" must not match inside another */
			if (at && (at[strlen(want[i])] == ' ' || at[strlen(want[i])] == '\n'))
				found[i] = 1;
		}
	}
	ck_assert_int_eq(pclose(p), 0);
	for (i = 0; i < 5; i++)
		ck_assert_msg(found[i], "readelf -S does not list %s", want[i]);
}
END_TEST

START_TEST(test_wrong_soc)
{
	char path[512];

	write_sample(path, sizeof path, "model.om");
	expect_read_error(path, "Ascend310", "compiled for Ascend910, not Ascend310");
}
END_TEST

/* Every cut of a good file must fail cleanly or, if it still holds a whole
 * model, read back the same model. */
START_TEST(test_truncated)
{
	struct om_model m, r;
	char path[512], cut[512], err[ERRLEN];
	uint8_t *buf;
	size_t len, n, k;

	sample_model(&m);
	tmp_path(path, sizeof path, "model.om");
	write_ok(path, &m);
	buf = read_all(path, &len);
	tmp_path(cut, sizeof cut, "cut.om");
	for (k = 0; k <= 64; k++) {
		n = k < 64 ? len * k / 64 : len - 1;
		write_all(cut, buf, n);
		err[0] = '\0';
		if (om_read(cut, &r, NULL, err, sizeof err) == 0) {
			assert_same_model(&m, &r);
			om_free(&r);
		} else {
			ck_assert_msg(strncmp(err, cut, strlen(cut)) == 0,
				      "cut at %zu: '%s' does not name the file", n, err);
		}
	}
	free(buf);
	om_free(&m);
}
END_TEST

/* Flip bits throughout .om.meta: protobuf may still parse the result, but
 * then validation decides; nothing may crash or leak (ASan). */
START_TEST(test_corrupt_meta)
{
	static const uint8_t flips[] = { 0xff, 0x80, 0x01, 0x7f };
	struct om_model r;
	char path[512], bad[512], err[ERRLEN];
	uint8_t *buf;
	uint64_t off, size, i;
	size_t len, f;
	int failed = 0;

	write_sample(path, sizeof path, "model.om");
	find_section(path, ".om.meta", &off, &size);
	buf = read_all(path, &len);
	ck_assert_uint_le(off + size, len);
	ck_assert_uint_gt(size, 100);
	tmp_path(bad, sizeof bad, "bad.om");
	for (i = 0; i < size; i++) {
		for (f = 0; f < sizeof flips; f++) {
			buf[off + i] ^= flips[f];
			write_all(bad, buf, len);
			buf[off + i] ^= flips[f];
			err[0] = '\0';
			if (om_read(bad, &r, NULL, err, sizeof err) == 0) {
				ck_assert_uint_eq(r.nkernels, 2); /* sections still agree */
				om_free(&r);
			} else {
				ck_assert_msg(strncmp(err, bad, strlen(bad)) == 0,
					      "byte %" PRIu64 ": '%s' does not name the file",
					      i, err);
				ck_assert_msg(strstr(err, ".om.meta fails its CRC-32 check"),
					      "byte %" PRIu64 ": '%s' is not the metadata's CRC-32",
					      i, err);
				failed++;
			}
		}
	}
	/* Every flip is caught by the metadata's own CRC-32. */
	ck_assert_int_eq(failed, (int)(size * sizeof flips));
	free(buf);
}
END_TEST

/* A flipped byte of the weights or of a kernel's code: the section's CRC-32
 * (issue 20) catches what no structural check can. */
START_TEST(test_crc_sections)
{
	static const char *const secs[] = { ".weights", ".text.conv+relu" };
	struct om_model r;
	char path[512], bad[512], err[ERRLEN];
	uint64_t off, size;
	size_t len;

	write_sample(path, sizeof path, "model.om");
	tmp_path(bad, sizeof bad, "flip.om");
	for (size_t k = 0; k < sizeof secs / sizeof secs[0]; k++) {
		uint8_t *buf = read_all(path, &len);
		find_section(path, secs[k], &off, &size);
		ck_assert_uint_gt(size, 0);
		buf[off + size / 2] ^= 0x04;
		write_all(bad, buf, len);
		free(buf);
		/* the code at om_read, the weights when read (om_verify_weights) */
		int rc = om_read(bad, &r, NULL, err, sizeof err);
		if (k == 0) {
			ck_assert_int_eq(rc, 0);
			rc = om_verify_weights(&r, NULL, err, sizeof err);
			om_free(&r);
		}
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(strstr(err, "fails its CRC-32 check") && strstr(err, secs[k]),
			      "%s: '%s'", secs[k], err);
	}
}
END_TEST

START_TEST(test_bad_kernel_index)
{
	struct om_model m;

	sample_model(&m);
	m.tasks[1].kernel = 2;
	expect_write_error(&m, "task 1 (fc): kernel index 2, but the model has 2 kernels");
	om_free(&m);
	expect_meta_error(ed_kernel_index, "task 1 (fc): kernel index 2");
}
END_TEST

START_TEST(test_weight_beyond)
{
	struct om_model m;

	sample_model(&m);
	m.tasks[1].args[1].value = 1024;
	expect_write_error(&m, "task 1 (fc) arg 1: WEIGHT offset 1024 beyond the weights");
	om_free(&m);
	expect_meta_error(ed_weight_offset, "task 1 (fc) arg 1: WEIGHT offset 1024");
	expect_meta_error(ed_negative_offset, "task 0 (conv1) arg 1: WEIGHT offset -1");
}
END_TEST

START_TEST(test_input_bad_index)
{
	struct om_model m;

	sample_model(&m);
	m.tasks[0].args[0].index = 1;
	expect_write_error(&m, "task 0 (conv1) arg 0: INPUT index 1, but the model has 1 inputs");
	om_free(&m);
	expect_meta_error(ed_input_index, "task 0 (conv1) arg 0: INPUT index 1");
	expect_meta_error(ed_input_offset, "INPUT offset 768 beyond x (768 bytes)");
	expect_meta_error(ed_output_index, "task 2 (out) arg 1: OUTPUT index 7");
	expect_meta_error(ed_workspace_offset, "WORKSPACE offset 4096 beyond the workspace");
	expect_meta_error(ed_arg_kind, "task 2 (out) arg 0: kind 9 invalid");
}
END_TEST

START_TEST(test_kernel_name_slash)
{
	struct om_model m;

	sample_model(&m);
	snprintf(m.kernels[1].name, sizeof m.kernels[1].name, "conv/relu");
	expect_write_error(&m, "kernel 1: name \"conv/relu\"");
	m.kernels[1].name[0] = '\0';
	expect_write_error(&m, "kernel 1: name \"\" is empty");
	snprintf(m.kernels[1].name, sizeof m.kernels[1].name, "conv+relu");
	expect_write_error(&m, "two kernels named conv+relu");
	om_free(&m);
	expect_meta_error(ed_kernel_name_slash, "kernel 1: name \"a/b\"");
	expect_meta_error(ed_duplicate_kernel, "two kernels named conv+relu");
}
END_TEST

/* The other checks of a model, on write and (through edited files) on read. */
START_TEST(test_model_checks)
{
	struct om_model m;

	sample_model(&m);
	m.tasks[2].block_dim = 0;
	expect_write_error(&m, "task 2 (out): block_dim 0 not in 1..65535");
	m.tasks[2].block_dim = 65535;
	m.kernels[0].bytes = 40;
	expect_write_error(&m, "kernel 0 (conv+relu): code size 40");
	m.kernels[0].bytes = 64;
	m.soc[0] = '\0';
	expect_write_error(&m, "soc is empty");
	snprintf(m.soc, sizeof m.soc, "Ascend910");
	m.tensors[2].size = 40;
	expect_write_error(&m, "tensor 2 (y_fp16): size 40 bytes");
	m.tensors[2].size = 20;
	m.tensors[2].offset = 4090;
	expect_write_error(&m, "tensor 2 (y_fp16): offset 4090 + size 20 beyond the workspace");
	m.tensors[2].offset = 2560;
	m.inputs[0].rank = 9;
	expect_write_error(&m, "input 0 (x): rank 9 not in 0..8");
	m.inputs[0].rank = 4;
	m.inputs[0].device_dtype = 6; /* float32 has no edge conversion */
	expect_write_error(&m, "input 0 (x): dtype 1 does not convert to the device's dtype 6");
	m.inputs[0].device_dtype = 0;
	memset(m.tasks[0].op_type, 'x', sizeof m.tasks[0].op_type);
	expect_write_error(&m, "task 0 (conv1): op_type is not terminated");
	om_free(&m);

	expect_meta_error(ed_block_dim0, "task 0 (conv1): block_dim 0");
	expect_meta_error(ed_block_dim_big, "task 0 (conv1): block_dim 65536");
	expect_meta_error(ed_version0, "no format_version");
	expect_meta_error(ed_version_new, "format_version 3 is newer");
	expect_meta_error(ed_no_soc, "soc is empty");
	expect_meta_error(ed_long_soc, "soc is 66 bytes, longer than the 63 allowed");
	expect_meta_error(ed_long_task_name, "task 2 name is 199 bytes");
	expect_meta_error(ed_code_bytes,
			  "kernel 0 (conv+relu): section .text.conv+relu is 64 bytes, "
			  "the metadata says 48");
	expect_meta_error(ed_missing_kernel_section, "kernel 1 (gone): no section .text.gone");
	expect_meta_error(ed_section_name, "kernel 1 (vadd.f16): section \".weights\"");
	expect_meta_error(ed_weights_bytes, "section .weights is 1024 bytes, the metadata says 512");
	expect_meta_error(ed_rank9, "input 0 (x): rank 9 not in 0..8");
	expect_meta_error(ed_negative_dim, "output 0 (y): dims[1] is -10");
	expect_meta_error(ed_size_mismatch, "tensor 1 (conv_out): size 1024 bytes");
	expect_meta_error(ed_tensor_outside, "tensor 1 (conv_out): offset 4000 + size 512");
	expect_meta_error(ed_bad_dtype, "tensor 0 (x_5hd): dtype 0");
}
END_TEST

/* Per-task tensors are checked like the model's, and their errors name the
 * task as well as the tensor. */
START_TEST(test_task_tensors)
{
	struct om_model m;
	struct om_tensor_desc *keep;

	sample_model(&m);
	m.tasks[0].inputs[1].rank = 9;
	expect_write_error(&m, "task 0 (conv1) input 1 (w): rank 9 not in 0..8");
	m.tasks[0].inputs[1].rank = 4;
	m.tasks[0].outputs[0].dims[2] = -4;
	expect_write_error(&m, "task 0 (conv1) output 0 (conv_out): dims[2] is -4, not >= 0");
	m.tasks[0].outputs[0].dims[2] = 4;
	m.tasks[1].inputs[2].dtype = 0;
	expect_write_error(&m, "task 1 (fc) input 2 (scale): dtype 0 is not a type");
	m.tasks[1].inputs[2].dtype = 1;
	m.tasks[1].inputs[1].format = -2;
	expect_write_error(&m, "task 1 (fc) input 1 (fc.w): format -2 is invalid");
	m.tasks[1].inputs[1].format = 29;
	m.tasks[1].outputs[0].size = 40;
	expect_write_error(&m, "task 1 (fc) output 0 (y_fp16): size 40 bytes");
	m.tasks[1].outputs[0].size = 20;
	keep = m.tasks[1].outputs;
	m.tasks[1].outputs = NULL;
	expect_write_error(&m, "task 1 (fc): a tensor count is set but its array is NULL");
	m.tasks[1].outputs = keep;
	om_free(&m);

	expect_meta_error(ed_task_rank9, "task 0 (conv1) input 1 (w): rank 9 not in 0..8");
	expect_meta_error(ed_task_negative_dim, "task 0 (conv1) output 0 (conv_out): dims[1] is -16");
	expect_meta_error(ed_task_bad_dtype, "task 1 (fc) input 2 (scale): dtype -3 is not a type");
	expect_meta_error(ed_task_size, "task 1 (fc) output 0 (y_fp16): size 40 bytes");
	expect_meta_error(ed_task_long_name, "task 1 (fc) input 0 name is 299 bytes");
}
END_TEST

/* A file without per-task tensors (written before they existed) still reads,
 * with none. */
START_TEST(test_no_task_tensors)
{
	struct om_model m, r;
	char path[512], err[ERRLEN] = "";
	uint32_t i;

	write_sample(path, sizeof path, "old.om");
	edit_meta(path, ed_strip_task_tensors);
	if (om_read(path, &r, "Ascend910", err, sizeof err) != 0)
		ck_abort_msg("om_read: %s", err);
	sample_model(&m);
	for (i = 0; i < m.ntasks; i++) {
		free(m.tasks[i].inputs);
		free(m.tasks[i].outputs);
		m.tasks[i].inputs = m.tasks[i].outputs = NULL;
		m.tasks[i].ninputs = m.tasks[i].noutputs = 0;
	}
	assert_same_model(&m, &r);
	om_free(&m);
	om_free(&r);
}
END_TEST

START_TEST(test_type_names)
{
	ck_assert_str_eq(om_dtype_name(1), "FLOAT");
	ck_assert_str_eq(om_dtype_name(10), "FLOAT16");
	ck_assert_str_eq(om_dtype_name(6), "INT32");
	ck_assert_str_eq(om_dtype_name(7), "INT64");
	ck_assert_str_eq(om_dtype_name(3), "INT8");
	ck_assert_str_eq(om_dtype_name(2), "UINT8");
	ck_assert_str_eq(om_dtype_name(0), "UNDEFINED");
	ck_assert_str_eq(om_dtype_name(-7), "UNDEFINED");
	ck_assert_str_eq(om_format_name(0), "NCHW");
	ck_assert_str_eq(om_format_name(1), "NHWC");
	ck_assert_str_eq(om_format_name(2), "ND");
	ck_assert_str_eq(om_format_name(3), "NC1HWC0");
	ck_assert_str_eq(om_format_name(4), "FRACTAL_Z");
	ck_assert_str_eq(om_format_name(12), "NC1HWC0_C04");
	ck_assert_str_eq(om_format_name(29), "FRACTAL_NZ");
	ck_assert_str_eq(om_format_name(-1), "UNDEFINED");
	ck_assert_str_eq(om_format_name(1000), "UNDEFINED");
}
END_TEST

/* edit_meta itself must not break a file, or the tests above prove nothing. */
START_TEST(test_edit_meta_identity)
{
	struct om_model m, r;
	char path[512], err[ERRLEN] = "";

	write_sample(path, sizeof path, "same.om");
	edit_meta(path, ed_nothing);
	if (om_read(path, &r, "Ascend910", err, sizeof err) != 0)
		ck_abort_msg("om_read after a null edit: %s", err);
	sample_model(&m);
	assert_same_model(&m, &r);
	om_free(&m);
	om_free(&r);
}
END_TEST

START_TEST(test_not_om)
{
	char path[512];
	uint8_t *buf;
	size_t len;

	tmp_path(path, sizeof path, "text.om");
	write_all(path, "this is not an ELF file at all\n", 31);
	expect_read_error(path, NULL, "not an .om file");
	tmp_path(path, sizeof path, "empty.om");
	write_all(path, "", 0);
	expect_read_error(path, NULL, "not an .om file");

	/* ELF, but for another machine (EM_X86_64 = 62 at offset 18) */
	write_sample(path, sizeof path, "x86.om");
	buf = read_all(path, &len);
	buf[18] = 62;
	write_all(path, buf, len);
	expect_read_error(path, NULL, "not an .om file (ELF machine 62, not EM_NONE)");
	/* 32-bit class */
	buf[18] = 0;
	buf[EI_CLASS] = ELFCLASS32;
	write_all(path, buf, len);
	expect_read_error(path, NULL, "not an .om file");
	/* executable instead of relocatable */
	buf[EI_CLASS] = ELFCLASS64;
	buf[16] = ET_EXEC;
	write_all(path, buf, len);
	expect_read_error(path, NULL, "not an .om file (ELF type 2, not ET_REL)");
	free(buf);

	expect_read_error(tmpdir, NULL, "not a regular file");
}
END_TEST

START_TEST(test_missing_file)
{
	char path[512];

	tmp_path(path, sizeof path, "nonexistent.om");
	expect_read_error(path, NULL, "No such file");
}
END_TEST

/* Failures after the temporary file exists must remove it too. */
START_TEST(test_write_failures_leave_nothing)
{
	struct om_model m;
	char path[512], tmp[600], err[ERRLEN] = "";

	sample_model(&m);
	/* the target is a directory: rename fails once the file is complete */
	tmp_path(path, sizeof path, "dir.om");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(om_write(path, &m, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "rename") != NULL, "'%s'", err);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	ck_assert(!file_exists(tmp));
	ck_assert_int_eq(tmp_entries(), 1);
	ck_assert_int_eq(rmdir(path), 0);
	/* no such directory: the temporary file cannot even be created */
	tmp_path(path, sizeof path, "nodir/x.om");
	ck_assert_int_eq(om_write(path, &m, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "x.om.tmp") != NULL, "'%s'", err);
	ck_assert_int_eq(tmp_entries(), 0);
	om_free(&m);
}
END_TEST

START_TEST(test_free_empty)
{
	struct om_model m;

	memset(&m, 0, sizeof m);
	om_free(&m);
	om_free(NULL);
	/* partially filled: counts set, some arrays still NULL */
	m.nkernels = 3;
	m.kernels = calloc(3, sizeof *m.kernels);
	m.ntasks = 2;
	ck_assert_ptr_nonnull(m.kernels);
	om_free(&m);
	ck_assert_ptr_null(m.kernels);
}
END_TEST

/* The runtime's conversions at a model's edge (om_edge.c): the pairs, the
 * rounding and the saturation its header comment promises. */
START_TEST(test_edge_conversions)
{
	ck_assert_int_eq(om_edge_device_dtype(11), 1);
	ck_assert_int_eq(om_edge_device_dtype(16), 1);
	ck_assert_int_eq(om_edge_device_dtype(5), 6);
	ck_assert_int_eq(om_edge_device_dtype(4), 6);
	ck_assert_int_eq(om_edge_device_dtype(12), 6);
	ck_assert_int_eq(om_edge_device_dtype(13), 7);
	ck_assert_int_eq(om_edge_device_dtype(1), 0);
	ck_assert_int_eq(om_edge_device_dtype(7), 0);
	struct om_tensor_desc d;
	memset(&d, 0, sizeof d);
	d.rank = 1;
	d.dims[0] = 3;
	/* float64 in: rounded to float32, beyond its range infinite */
	d.dtype = 11;
	d.device_dtype = 1;
	d.size = 24;
	ck_assert_uint_eq(om_edge_device_bytes(&d), 12);
	double dv[3] = { 0.1, -1e300, 3.0 };
	float fv[3];
	om_edge_convert(&d, 1, dv, fv);
	ck_assert(fv[0] == 0.1f && fv[1] == -INFINITY && fv[2] == 3.0f);
	double back[3];
	om_edge_convert(&d, 0, fv, back);
	ck_assert(back[0] == (double)0.1f && back[2] == 3.0);
	/* uint32 in: above INT32_MAX saturates */
	d.dtype = 12;
	d.device_dtype = 6;
	uint32_t uv[3] = { 7, 0x80000000u, 0xffffffffu };
	int32_t iv[3];
	om_edge_convert(&d, 1, uv, iv);
	ck_assert(iv[0] == 7 && iv[1] == INT32_MAX && iv[2] == INT32_MAX);
	/* int32 out as uint32 and int16: negatives to 0, int16's range */
	int32_t ov[3] = { -5, 70000, -70000 };
	om_edge_convert(&d, 0, ov, uv);
	ck_assert(uv[0] == 0 && uv[1] == 70000 && uv[2] == 0);
	d.dtype = 5;
	int16_t sv[3];
	om_edge_convert(&d, 0, ov, sv);
	ck_assert(sv[0] == -5 && sv[1] == INT16_MAX && sv[2] == INT16_MIN);
	/* uint64 in above INT64_MAX, int64 out negative */
	d.dtype = 13;
	d.device_dtype = 7;
	uint64_t u64[3] = { 1, UINT64_MAX, (uint64_t)INT64_MAX + 1 };
	int64_t i64[3];
	om_edge_convert(&d, 1, u64, i64);
	ck_assert(i64[0] == 1 && i64[1] == INT64_MAX && i64[2] == INT64_MAX);
	i64[0] = -1;
	om_edge_convert(&d, 0, i64, u64);
	ck_assert(u64[0] == 0 && u64[1] == (uint64_t)INT64_MAX);
	/* bfloat16 out: to nearest even; NaN stays NaN */
	d.dtype = 16;
	d.device_dtype = 1;
	float bf[3] = { 1.0f + 1.0f / 256, 1.0f + 3.0f / 256, NAN };
	uint16_t hv[3];
	om_edge_convert(&d, 0, bf, hv);
	ck_assert_uint_eq(hv[0], 0x3f80); /* a tie: to the even 1.0 */
	ck_assert_uint_eq(hv[1], 0x3f82); /* a tie: to the even 1 + 2^-6 */
	ck_assert((hv[2] & 0x7f80) == 0x7f80 && (hv[2] & 0x7f));
	om_edge_convert(&d, 1, hv, bf);
	ck_assert(bf[0] == 1.0f && bf[1] == 1.0f + 1.0f / 64 && isnan(bf[2]));
}
END_TEST

static Suite *om_suite(void)
{
	Suite *s = suite_create("om");
	TCase *core = tcase_create("core");
	TCase *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, tmp_setup, tmp_teardown);
	tcase_add_checked_fixture(errors, tmp_setup, tmp_teardown);
	/* the byte-flipping test reads the file a few thousand times */
	tcase_set_timeout(errors, 120);
	tcase_add_test(core, test_roundtrip);
	tcase_add_test(core, test_roundtrip_minimal);
	tcase_add_test(core, test_weights_mapped_cow);
	tcase_add_test(core, test_weights_cow_run);
	tcase_add_test(core, test_elf_layout);
	tcase_add_test(core, test_readelf);
	tcase_add_test(core, test_edit_meta_identity);
	tcase_add_test(core, test_free_empty);
	tcase_add_test(core, test_no_task_tensors);
	tcase_add_test(core, test_type_names);
	tcase_add_test(core, test_edge_conversions);
	tcase_add_test(errors, test_wrong_soc);
	tcase_add_test(errors, test_truncated);
	tcase_add_test(errors, test_corrupt_meta);
	tcase_add_test(errors, test_crc_sections);
	tcase_add_test(errors, test_bad_kernel_index);
	tcase_add_test(errors, test_weight_beyond);
	tcase_add_test(errors, test_input_bad_index);
	tcase_add_test(errors, test_kernel_name_slash);
	tcase_add_test(errors, test_model_checks);
	tcase_add_test(errors, test_task_tensors);
	tcase_add_test(errors, test_not_om);
	tcase_add_test(errors, test_missing_file);
	tcase_add_test(errors, test_write_failures_leave_nothing);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	sr = srunner_create(om_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
