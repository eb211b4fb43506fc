/* check_dynbatch.c: dynamic-batch models (simatc --dynamic_batch_size).
 *
 * A small conv model with a symbolic batch (tests/dynbatch_models.py) is
 * compiled for batch sizes 1,2,4 into one .om and, for each size, at a fixed
 * batch: the .om holds three programs, the weights once (the fixed compiles'
 * bytes), a workspace the largest one's; each program's outputs and cycles
 * are the fixed-batch compile's for the same inputs.  Bad flags and sizes
 * are refused with messages naming the flag.  Through ACL: the batch input
 * (ACL_DYNAMIC_TENSOR_NAME), aclmdlGetDynamicBatch's list,
 * aclmdlSetDynamicBatchSize refusing a size not compiled, an execution
 * running the set size's program (its outputs the fixed compile's); a
 * static model has no sizes and refuses one.
 *
 * Dynamic dims (simatc --dynamic_dims): the same model with a symbolic
 * height and width, compiled for the profiles 8x8, 16x16 and 12x20 into one
 * .om and at each shape alone: the same checks, and through ACL the gears
 * (aclmdlGetInputDynamicGearCount, aclmdlGetInputDynamicDims) and
 * aclmdlSetInputDynamicDims picking the program an execution runs. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "compile.h"
#include "model.h"
#include "model_util.h"
#include "soc.h"

#define SOC "Ascend310P3"

static char dir[4096];

static void setup(void)
{
	tu_models(dir, sizeof dir, "dynbatch", "dynbatch_models.py", NULL, "python3-onnx");
}

static void teardown(void)
{
	tu_models_free(dir);
	dir[0] = 0;
}

static const int64_t sizes[] = { 1, 2, 4 };

/* Compile the model (dynamic when shape has -1, with sizes) and write it to
 * dir/name.om; read it back into m. */
static void compile_om(const char *name, const char *shape, int dynamic, struct om_model *m)
{
	struct soc_config cfg;
	char err[4096], onnx[4200], om[4200];
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(onnx, sizeof onnx, "%s/conv.onnx", dir);
	snprintf(om, sizeof om, "%s/%s.om", dir, name);
	struct cc_options opt = { .input_shape = shape, .model_name = name };
	struct om_model c;
	int rc = dynamic ? cc_compile_dynamic(onnx, &cfg, &opt, sizes, 3, &c, err, sizeof err)
			 : cc_compile(onnx, &cfg, &opt, &c, err, sizeof err);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_msg(om_write(om, &c, err, sizeof err) == 0, "%s", err);
	om_free(&c);
	ck_assert_msg(om_read(om, m, SOC, err, sizeof err) == 0, "%s", err);
}

/* Inputs of batch b, deterministic. */
static void make_input(struct om_tensor *t, int64_t b)
{
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "input");
	t->dtype = 1;
	t->rank = 4;
	int64_t d[4] = { b, 4, 8, 8 };
	memcpy(t->dims, d, sizeof d);
	size_t n = (size_t)b * 4 * 8 * 8;
	t->nbytes = n * sizeof(float);
	float *x = malloc(t->nbytes);
	ck_assert_ptr_nonnull(x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((i * 37 + 11) % 101) / 50.0f - 1.0f;
	t->data = x;
}

static void run(const struct om_model *m, const struct om_tensor *in, struct om_tensor *out,
		uint64_t *cycles)
{
	struct soc_config cfg;
	char err[4096];
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	struct sim_options opt = { .mode = SIM_MODE_FULL };
	struct sim_device *dev = sim_device_new(&cfg, &opt, err, sizeof err);
	ck_assert_msg(dev != NULL, "%s", err);
	struct rt_run r;
	ck_assert_msg(rt_model_run(dev, m, in, 1, out, &r, err, sizeof err) == 0, "%s", err);
	*cycles = r.cycles;
	rt_run_free(&r);
	sim_device_free(dev);
}

START_TEST(test_variants_match_fixed)
{
	struct om_model dyn;
	compile_om("dyn", "input:-1,4,8,8", 1, &dyn);
	int64_t got[OM_MAX_VARIANTS + 1];
	ck_assert_uint_eq(om_batch_sizes(&dyn, got), 3);
	ck_assert_int_eq(got[0], 1);
	ck_assert_int_eq(got[1], 2);
	ck_assert_int_eq(got[2], 4);
	ck_assert_ptr_eq(om_variant(&dyn, 4), &dyn);
	ck_assert_ptr_null(om_variant(&dyn, 3));
	ck_assert_int_eq(om_variant_at_least(&dyn, 3)->batch, 4);
	ck_assert_ptr_null(om_variant_at_least(&dyn, 5));
	uint64_t max_ws = 0;
	for (unsigned k = 0; k < 3; k++) {
		char name[32], shape[64];
		snprintf(name, sizeof name, "fix%lld", (long long)sizes[k]);
		snprintf(shape, sizeof shape, "input:%lld,4,8,8", (long long)sizes[k]);
		struct om_model fix;
		compile_om(name, shape, 0, &fix);
		const struct om_model *v = om_variant(&dyn, sizes[k]);
		ck_assert_ptr_nonnull(v);
		/* the weights are stored once: the fixed compiles' very bytes */
		ck_assert_uint_eq(dyn.weights_bytes, fix.weights_bytes);
		ck_assert_int_eq(memcmp(dyn.weights, fix.weights, fix.weights_bytes), 0);
		ck_assert_ptr_eq(v->weights, dyn.weights);
		ck_assert_uint_eq(v->workspace_bytes <= dyn.workspace_bytes, 1);
		if (fix.workspace_bytes > max_ws)
			max_ws = fix.workspace_bytes;
		struct om_tensor in, o1, o2;
		uint64_t c1, c2;
		make_input(&in, sizes[k]);
		run(v, &in, &o1, &c1);
		run(&fix, &in, &o2, &c2);
		printf("batch %lld: variant %llu cycles, fixed-batch .om %llu\n",
		       (long long)sizes[k], (unsigned long long)c1, (unsigned long long)c2);
		ck_assert_uint_eq(c1, c2);
		ck_assert_uint_eq(o1.nbytes, o2.nbytes);
		ck_assert_int_eq(o1.dims[0], sizes[k]);
		ck_assert_int_eq(memcmp(o1.data, o2.data, o1.nbytes), 0);
		om_tensor_free(&in);
		om_tensor_free(&o1);
		om_tensor_free(&o2);
		om_free(&fix);
	}
	/* one memory plan: the largest program's */
	ck_assert_uint_eq(dyn.workspace_bytes, max_ws);
	om_free(&dyn);
}
END_TEST

/* err holds needle after a refused flag. */
#define REFUSED(call, needle)                                                             \
	do {                                                                              \
		err[0] = 0;                                                               \
		ck_assert_msg((call) != 0, "%s accepted", #call);                         \
		ck_assert_msg(strstr(err, needle) != NULL, "%s: '%s' lacks '%s'", #call, err, \
			      needle);                                                    \
	} while (0)

START_TEST(test_bad_flags)
{
	int64_t s[OM_MAX_VARIANTS];
	unsigned n;
	char err[4096];
	REFUSED(cc_parse_dynamic_batch("4,2", s, &n, err, sizeof err), "ascending");
	REFUSED(cc_parse_dynamic_batch("1,2,2", s, &n, err, sizeof err), "distinct");
	REFUSED(cc_parse_dynamic_batch("0,2", s, &n, err, sizeof err), "positive");
	REFUSED(cc_parse_dynamic_batch("1,-2", s, &n, err, sizeof err), "positive");
	REFUSED(cc_parse_dynamic_batch("1,x", s, &n, err, sizeof err), "--dynamic_batch_size");
	REFUSED(cc_parse_dynamic_batch("8", s, &n, err, sizeof err), "at least two");
	REFUSED(cc_parse_dynamic_batch("1,2,", s, &n, err, sizeof err), "trailing");
	char many[1024] = "";
	for (int i = 1; i <= 101; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i > 1 ? "," : "",
			 i);
	REFUSED(cc_parse_dynamic_batch(many, s, &n, err, sizeof err), "more than 100");
	ck_assert_int_eq(cc_parse_dynamic_batch("1,2,4,8", s, &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(s[3], 8);

	struct soc_config cfg;
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	char onnx[4200];
	snprintf(onnx, sizeof onnx, "%s/conv.onnx", dir);
	struct om_model m;
	struct cc_options fixed = { .input_shape = "input:2,4,8,8" };
	REFUSED(cc_compile_dynamic(onnx, &cfg, &fixed, sizes, 3, &m, err, sizeof err),
		"-1 as the batch");
	struct cc_options inner = { .input_shape = "input:1,-1,8,8" };
	REFUSED(cc_compile_dynamic(onnx, &cfg, &inner, sizes, 3, &m, err, sizeof err),
		"dimension 1");
	struct cc_options none = { 0 };
	REFUSED(cc_compile_dynamic(onnx, &cfg, &none, sizes, 3, &m, err, sizeof err),
		"--input_shape");
	struct cc_options alone = { .input_shape = "input:-1,4,8,8" };
	REFUSED(cc_compile(onnx, &cfg, &alone, &m, err, sizeof err), "--dynamic_batch_size");
}
END_TEST

/* om_write refuses variants that break the container's rules (om.h),
 * naming the variant by its size. */
START_TEST(test_bad_container)
{
	struct soc_config cfg;
	char err[4096], onnx[4200], om[4200];
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(onnx, sizeof onnx, "%s/conv.onnx", dir);
	snprintf(om, sizeof om, "%s/bad.om", dir);
	struct cc_options opt = { .input_shape = "input:-1,4,8,8" };
	struct om_model m;
	ck_assert_msg(cc_compile_dynamic(onnx, &cfg, &opt, sizes, 3, &m, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_uint_eq(m.nvariants, 2);
	m.variants[1].batch = 4; /* the model's own size */
	REFUSED(om_write(om, &m, err, sizeof err), "(batch 4 variant): batch sizes must be");
	m.variants[1].batch = 2;
	uint64_t ws = m.variants[0].workspace_bytes;
	m.variants[0].workspace_bytes = m.workspace_bytes + 1;
	REFUSED(om_write(om, &m, err, sizeof err), "(batch 1 variant): workspace");
	m.variants[0].workspace_bytes = ws;
	uint32_t nin = m.variants[0].ninputs;
	m.variants[0].ninputs = 0;
	REFUSED(om_write(om, &m, err, sizeof err), "numbers of inputs");
	m.variants[0].ninputs = nin;
	int64_t b = m.batch;
	m.batch = 0;
	REFUSED(om_write(om, &m, err, sizeof err), "no batch size");
	m.batch = b;
	ck_assert_msg(om_write(om, &m, err, sizeof err) == 0, "%s", err);
	om_free(&m);
	ck_assert_msg(om_read(om, &m, SOC, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(m.nvariants, 2);
	ck_assert_uint_eq(m.variants[0].workspace_bytes, ws);
	/* a flipped bit in a variant's kernel: its CRC-32 catches it */
	FILE *f = fopen(om, "rb");
	ck_assert_ptr_nonnull(f);
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	const struct om_kernel *k = &m.variants[0].kernels[1];
	uint8_t *at = memmem(buf, n, k->code, k->bytes);
	ck_assert_ptr_nonnull(at);
	ck_assert_ptr_null(memmem(at + 1, n - (size_t)(at + 1 - buf), k->code, k->bytes));
	om_free(&m);
	at[20] ^= 1;
	f = fopen(om, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
	REFUSED(om_read(om, &m, SOC, err, sizeof err), "(batch 1 variant): kernel 1");
	ck_assert_ptr_nonnull(strstr(err, "CRC-32"));
}
END_TEST

#define ck_acl(call) ck_assert_msg((call) == ACL_SUCCESS, "%s: %s", #call, \
				   aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "")

static void *dev_buf(size_t n)
{
	void *p = NULL;
	ck_acl(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMemset(p, n, 0, n));
	return p;
}

/* ACL up and dir's dyn.om and fix.om loaded (ids *id, *sid): dyn's
 * description, whose second input is the dynamic one (its index in *bi). */
static aclmdlDesc *acl_load(const char *dyn, const char *fix, uint32_t *id, uint32_t *sid,
			    size_t *bi)
{
	char path[4200], spath[4200];
	snprintf(path, sizeof path, "%s/%s.om", dir, dyn);
	snprintf(spath, sizeof spath, "%s/%s.om", dir, fix);
	ck_acl(aclInit(NULL));
	ck_acl(aclsimSetSoc(SOC));
	ck_acl(aclrtSetDevice(0));
	ck_acl(aclmdlLoadFromFile(path, id));
	ck_acl(aclmdlLoadFromFile(spath, sid));
	aclmdlDesc *d = aclmdlCreateDesc();
	ck_acl(aclmdlGetDesc(d, *id));
	ck_assert_uint_eq(aclmdlGetNumInputs(d), 2);
	*bi = 99;
	ck_acl(aclmdlGetInputIndexByName(d, ACL_DYNAMIC_TENSOR_NAME, bi));
	ck_assert_uint_eq(*bi, 1);
	return d;
}

/* Execute model id with x holding in's bytes: its device time is the fixed
 * model's cyc cycles (what names it) and y then holds want's bytes. */
static void exec_as_fixed(uint32_t id, aclmdlDataset *din, aclmdlDataset *dout, void *x,
			  size_t insz, const struct om_tensor *in, void *y,
			  const struct om_tensor *want, uint64_t cyc, const char *what)
{
	ck_acl(aclrtMemcpy(x, insz, in->data, in->nbytes, ACL_MEMCPY_HOST_TO_DEVICE));
	double t0, t1;
	ck_acl(aclsimGetDeviceTimeUs(&t0));
	ck_acl(aclmdlExecute(id, din, dout));
	ck_acl(aclsimGetDeviceTimeUs(&t1));
	struct soc_config cfg;
	char err[1024];
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	double want_us = (double)cyc / cfg.core_freq_mhz;
	printf("ACL %s: %.3f us on the device, the fixed model %.3f us\n", what, t1 - t0, want_us);
	ck_assert_msg(t1 - t0 < want_us + 0.001 && t1 - t0 > want_us - 0.001,
		      "%s took %.3f us, its program %.3f", what, t1 - t0, want_us);
	void *host = malloc(want->nbytes);
	ck_assert_ptr_nonnull(host);
	ck_acl(aclrtMemcpy(host, want->nbytes, y, want->nbytes, ACL_MEMCPY_DEVICE_TO_HOST));
	ck_assert_int_eq(memcmp(host, want->data, want->nbytes), 0);
	free(host);
}

START_TEST(test_acl)
{
	struct om_model dyn, fix2;
	compile_om("dyn", "input:-1,4,8,8", 1, &dyn);
	compile_om("fix2", "input:2,4,8,8", 0, &fix2);
	struct om_tensor in2, want;
	uint64_t cyc;
	make_input(&in2, 2);
	run(&fix2, &in2, &want, &cyc);

	uint32_t id, sid;
	size_t bi;
	aclmdlDesc *d = acl_load("dyn", "fix2", &id, &sid, &bi);
	aclmdlBatch b;
	ck_acl(aclmdlGetDynamicBatch(d, &b));
	ck_assert_uint_eq(b.batchCount, 3);
	ck_assert_uint_eq(b.batch[0], 1);
	ck_assert_uint_eq(b.batch[2], 4);
	/* the data input and output keep the largest batch's sizes */
	size_t insz = aclmdlGetInputSizeByIndex(d, 0), outsz = aclmdlGetOutputSizeByIndex(d, 0);
	ck_assert_uint_eq(insz, 4 * 4 * 8 * 8 * sizeof(float));
	aclmdlDataset *din = aclmdlCreateDataset(), *dout = aclmdlCreateDataset();
	void *x = dev_buf(insz), *bb = dev_buf(aclmdlGetInputSizeByIndex(d, bi)),
	     *y = dev_buf(outsz);
	ck_acl(aclmdlAddDatasetBuffer(din, aclCreateDataBuffer(x, insz)));
	ck_acl(aclmdlAddDatasetBuffer(din, aclCreateDataBuffer(bb, 8)));
	ck_acl(aclmdlAddDatasetBuffer(dout, aclCreateDataBuffer(y, outsz)));
	/* no batch set: the buffer holds 0 */
	ck_assert_int_eq(aclmdlExecute(id, din, dout), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "aclmdlSetDynamicBatchSize"));
	/* CANN takes compiled sizes only */
	ck_assert_int_eq(aclmdlSetDynamicBatchSize(id, din, bi, 3), ACL_ERROR_INVALID_PARAM);
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "not one of"));
	ck_assert_int_eq(aclmdlSetDynamicBatchSize(id, din, 0, 2), ACL_ERROR_INVALID_PARAM);
	ck_acl(aclmdlSetDynamicBatchSize(id, din, bi, 2));
	/* the batch-2 program runs: its cycles, not the batch-4 one's (whose
	 * first two rows would be the same numbers) */
	exec_as_fixed(id, din, dout, x, insz, &in2, y, &want, cyc, "batch 2");
	/* another size on the same model (warm: not comparable in time) */
	ck_acl(aclmdlSetDynamicBatchSize(id, din, bi, 4));
	ck_acl(aclmdlExecute(id, din, dout));
	/* a static model: no sizes, and none may be set */
	aclmdlDesc *sd = aclmdlCreateDesc();
	ck_acl(aclmdlGetDesc(sd, sid));
	ck_acl(aclmdlGetDynamicBatch(sd, &b));
	ck_assert_uint_eq(b.batchCount, 0);
	ck_assert_uint_eq(aclmdlGetNumInputs(sd), 1);
	ck_assert_int_eq(aclmdlSetDynamicBatchSize(sid, din, 1, 2), ACL_ERROR_INVALID_PARAM);
	ck_acl(aclmdlDestroyDesc(sd));
	ck_acl(aclmdlDestroyDesc(d));
	ck_acl(aclmdlUnload(id));
	ck_acl(aclmdlUnload(sid));
	ck_acl(aclFinalize());
	om_tensor_free(&in2);
	om_tensor_free(&want);
	om_free(&dyn);
	om_free(&fix2);
}
END_TEST

/* --- dynamic dims -------------------------------------------------------- */

static const int64_t profiles[3][2] = { { 8, 8 }, { 16, 16 }, { 12, 20 } };

/* convhw.onnx at --input_shape shape: with the profiles when dims, else a
 * fixed compile; written to dir/name.om and read back into m. */
static void compile_hw(const char *name, const char *shape, int dims, struct om_model *m)
{
	struct soc_config cfg;
	char err[4096], onnx[4200], om[4200];
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(onnx, sizeof onnx, "%s/convhw.onnx", dir);
	snprintf(om, sizeof om, "%s/%s.om", dir, name);
	struct cc_options opt = { .input_shape = shape, .model_name = name };
	int64_t v[3 * OM_MAX_DYN_DIMS] = { 0 };
	for (unsigned k = 0; k < 3; k++)
		memcpy(&v[k * OM_MAX_DYN_DIMS], profiles[k], sizeof profiles[k]);
	struct om_model c;
	int rc = dims ? cc_compile_dynamic_dims(onnx, &cfg, &opt, v, 2, 3, &c, err, sizeof err)
		      : cc_compile(onnx, &cfg, &opt, &c, err, sizeof err);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_msg(om_write(om, &c, err, sizeof err) == 0, "%s", err);
	om_free(&c);
	ck_assert_msg(om_read(om, m, SOC, err, sizeof err) == 0, "%s", err);
}

/* An input of 1x4xHxW, deterministic. */
static void make_input_hw(struct om_tensor *t, int64_t h, int64_t w)
{
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "input");
	t->dtype = 1;
	t->rank = 4;
	int64_t d[4] = { 1, 4, h, w };
	memcpy(t->dims, d, sizeof d);
	size_t n = (size_t)(4 * h * w);
	t->nbytes = n * sizeof(float);
	float *x = malloc(t->nbytes);
	ck_assert_ptr_nonnull(x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((i * 37 + 11) % 101) / 50.0f - 1.0f;
	t->data = x;
}

START_TEST(test_dims_match_fixed)
{
	struct om_model dyn;
	compile_hw("dims", "input:1,4,-1,-1", 1, &dyn);
	ck_assert_uint_eq(dyn.ndims, 2);
	ck_assert_uint_eq(dyn.nvariants, 2);
	ck_assert_int_eq(dyn.batch, 0);
	/* the profiles in the order given, the model the last */
	ck_assert_ptr_eq(om_dims_profile(&dyn, 2), &dyn);
	ck_assert_ptr_null(om_dims_profile(&dyn, 3));
	char dn[64];
	om_dims_name(om_dims_profile(&dyn, 1), dn, sizeof dn);
	ck_assert_str_eq(dn, "16x16");
	const int64_t none[2] = { 16, 8 };
	ck_assert_ptr_null(om_variant_dims(&dyn, none, 2));
	ck_assert_ptr_null(om_variant_dims(&dyn, profiles[0], 1));
	uint64_t max_ws = 0;
	for (unsigned k = 0; k < 3; k++) {
		char name[32], shape[64];
		int64_t h = profiles[k][0], w = profiles[k][1];
		snprintf(name, sizeof name, "fix%lldx%lld", (long long)h, (long long)w);
		snprintf(shape, sizeof shape, "input:1,4,%lld,%lld", (long long)h, (long long)w);
		struct om_model fix;
		compile_hw(name, shape, 0, &fix);
		const struct om_model *v = om_variant_dims(&dyn, profiles[k], 2);
		ck_assert_ptr_eq(v, om_dims_profile(&dyn, k));
		ck_assert_int_eq(v->inputs[0].dims[2], h);
		ck_assert_int_eq(v->inputs[0].dims[3], w);
		/* the weights are stored once: the fixed compiles' very bytes */
		ck_assert_uint_eq(dyn.weights_bytes, fix.weights_bytes);
		ck_assert_int_eq(memcmp(dyn.weights, fix.weights, fix.weights_bytes), 0);
		ck_assert_ptr_eq(v->weights, dyn.weights);
		if (fix.workspace_bytes > max_ws)
			max_ws = fix.workspace_bytes;
		struct om_tensor in, o1, o2;
		uint64_t c1, c2;
		make_input_hw(&in, h, w);
		run(v, &in, &o1, &c1);
		run(&fix, &in, &o2, &c2);
		printf("dims %lldx%lld: profile %llu cycles, fixed-shape .om %llu\n", (long long)h,
		       (long long)w, (unsigned long long)c1, (unsigned long long)c2);
		ck_assert_uint_eq(c1, c2);
		ck_assert_uint_eq(o1.nbytes, o2.nbytes);
		ck_assert_int_eq(o1.dims[3], w);
		ck_assert_int_eq(memcmp(o1.data, o2.data, o1.nbytes), 0);
		om_tensor_free(&in);
		om_tensor_free(&o1);
		om_tensor_free(&o2);
		om_free(&fix);
	}
	/* one memory plan: the largest program's */
	ck_assert_uint_eq(dyn.workspace_bytes, max_ws);
	om_free(&dyn);
}
END_TEST

START_TEST(test_dims_bad)
{
	int64_t v[OM_MAX_VARIANTS * OM_MAX_DYN_DIMS];
	unsigned np, nd;
	char err[4096];
	REFUSED(cc_parse_dynamic_dims("8,8;16", v, &np, &nd, err, sizeof err), "profile 2 has 1");
	REFUSED(cc_parse_dynamic_dims("8,8;8,8", v, &np, &nd, err, sizeof err), "repeats");
	REFUSED(cc_parse_dynamic_dims("8,8", v, &np, &nd, err, sizeof err), "at least two");
	REFUSED(cc_parse_dynamic_dims("8,0;4,4", v, &np, &nd, err, sizeof err), "positive");
	REFUSED(cc_parse_dynamic_dims("8,x;4,4", v, &np, &nd, err, sizeof err), "--dynamic_dims");
	REFUSED(cc_parse_dynamic_dims("8,8;4,4;", v, &np, &nd, err, sizeof err), "trailing");
	REFUSED(cc_parse_dynamic_dims("1,2,3,4,5,6,7,8,9;1,1,1,1,1,1,1,1,1", v, &np, &nd, err,
				      sizeof err), "8 values");
	ck_assert_int_eq(cc_parse_dynamic_dims("224,224;320,320;1,2", v, &np, &nd, err,
					       sizeof err), 0);
	ck_assert_uint_eq(np, 3);
	ck_assert_uint_eq(nd, 2);
	ck_assert_int_eq(v[1 * OM_MAX_DYN_DIMS + 1], 320);
	ck_assert_int_eq(v[2 * OM_MAX_DYN_DIMS + 0], 1);

	struct soc_config cfg;
	ck_assert_msg(soc_load(SOC, &cfg, err, sizeof err) == 0, "%s", err);
	char onnx[4200], om[4200];
	snprintf(onnx, sizeof onnx, "%s/convhw.onnx", dir);
	snprintf(om, sizeof om, "%s/bad_dims.om", dir);
	int64_t p[2 * OM_MAX_DYN_DIMS] = { 8, 8 };
	p[OM_MAX_DYN_DIMS] = p[OM_MAX_DYN_DIMS + 1] = 16;
	struct om_model m;
	struct cc_options one = { .input_shape = "input:1,4,-1,8" };
	REFUSED(cc_compile_dynamic_dims(onnx, &cfg, &one, p, 2, 2, &m, err, sizeof err),
		"1 -1 dimensions");
	struct cc_options ok = { .input_shape = "input:1,4,-1,-1" };
	ck_assert_msg(cc_compile_dynamic_dims(onnx, &cfg, &ok, p, 2, 2, &m, err, sizeof err) == 0,
		      "%s", err);
	/* the container's rules (om.h), naming the profile */
	m.variants[0].dims[0] = m.variants[0].dims[1] = 16;
	REFUSED(om_write(om, &m, err, sizeof err), "profile 16x16 given twice");
	m.variants[0].dims[0] = m.variants[0].dims[1] = 8;
	m.batch = 2;
	REFUSED(om_write(om, &m, err, sizeof err), "both a batch size and dynamic dims");
	m.batch = 0;
	m.variants[0].ndims = 1;
	REFUSED(om_write(om, &m, err, sizeof err), "profile 8 has 1 values");
	m.variants[0].ndims = 2;
	ck_assert_msg(om_write(om, &m, err, sizeof err) == 0, "%s", err);
	om_free(&m);
}
END_TEST

START_TEST(test_dims_acl)
{
	struct om_model dyn, fix;
	compile_hw("dims", "input:1,4,-1,-1", 1, &dyn);
	compile_hw("fix16", "input:1,4,16,16", 0, &fix);
	struct om_tensor in, want;
	uint64_t cyc;
	make_input_hw(&in, 16, 16);
	run(&fix, &in, &want, &cyc);

	uint32_t id, sid;
	size_t bi;
	aclmdlDesc *d = acl_load("dims", "fix16", &id, &sid, &bi);
	ck_assert_uint_eq(aclmdlGetInputSizeByIndex(d, bi), 16); /* two uint64 */
	size_t gears = 0;
	ck_acl(aclmdlGetInputDynamicGearCount(d, (size_t)-1, &gears));
	ck_assert_uint_eq(gears, 3);
	aclmdlIODims g[3];
	ck_assert_int_eq(aclmdlGetInputDynamicDims(d, (size_t)-1, g, 2), ACL_ERROR_INVALID_PARAM);
	ck_acl(aclmdlGetInputDynamicDims(d, (size_t)-1, g, 3));
	for (unsigned k = 0; k < 3; k++) {
		ck_assert_uint_eq(g[k].dimCount, 4);
		ck_assert_int_eq(g[k].dims[1], 4);
		ck_assert_int_eq(g[k].dims[2], profiles[k][0]);
		ck_assert_int_eq(g[k].dims[3], profiles[k][1]);
	}
	aclmdlBatch b;
	ck_acl(aclmdlGetDynamicBatch(d, &b));
	ck_assert_uint_eq(b.batchCount, 0);
	/* the data input and output hold the largest gear's (16x16) */
	size_t insz = aclmdlGetInputSizeByIndex(d, 0), outsz = aclmdlGetOutputSizeByIndex(d, 0);
	ck_assert_uint_eq(insz, 4 * 16 * 16 * sizeof(float));
	ck_assert_uint_eq(outsz, 8 * 16 * 16 * sizeof(float));
	aclmdlDataset *din = aclmdlCreateDataset(), *dout = aclmdlCreateDataset();
	void *x = dev_buf(insz), *bb = dev_buf(16), *y = dev_buf(outsz);
	ck_acl(aclmdlAddDatasetBuffer(din, aclCreateDataBuffer(x, insz)));
	ck_acl(aclmdlAddDatasetBuffer(din, aclCreateDataBuffer(bb, 16)));
	ck_acl(aclmdlAddDatasetBuffer(dout, aclCreateDataBuffer(y, outsz)));
	/* no dims set: the buffer holds zeros */
	ck_assert_int_eq(aclmdlExecute(id, din, dout), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "aclmdlSetInputDynamicDims"));
	aclmdlIODims bad = g[1];
	bad.dims[3] = 8;
	ck_assert_int_eq(aclmdlSetInputDynamicDims(id, din, bi, &bad), ACL_ERROR_INVALID_PARAM);
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "1,4,8,8; 1,4,16,16; 1,4,12,20"));
	ck_assert_int_eq(aclmdlSetDynamicBatchSize(id, din, bi, 1), ACL_ERROR_INVALID_PARAM);
	ck_acl(aclmdlSetInputDynamicDims(id, din, bi, &g[1]));
	/* the 16x16 program runs: its cycles and its outputs */
	exec_as_fixed(id, din, dout, x, insz, &in, y, &want, cyc, "dims 16x16");
	/* another gear on the same model */
	ck_acl(aclmdlSetInputDynamicDims(id, din, bi, &g[2]));
	ck_acl(aclmdlExecute(id, din, dout));
	/* a static model: no gears, and none may be set */
	aclmdlDesc *sd = aclmdlCreateDesc();
	ck_acl(aclmdlGetDesc(sd, sid));
	ck_acl(aclmdlGetInputDynamicGearCount(sd, (size_t)-1, &gears));
	ck_assert_uint_eq(gears, 0);
	ck_assert_int_eq(aclmdlSetInputDynamicDims(sid, din, 1, &g[1]), ACL_ERROR_INVALID_PARAM);
	ck_acl(aclmdlDestroyDesc(sd));
	ck_acl(aclmdlDestroyDesc(d));
	ck_acl(aclmdlUnload(id));
	ck_acl(aclmdlUnload(sid));
	ck_acl(aclFinalize());
	om_tensor_free(&in);
	om_tensor_free(&want);
	om_free(&dyn);
	om_free(&fix);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dynbatch");
	TCase *tc = tcase_create("dynbatch");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_variants_match_fixed);
	tcase_add_test(tc, test_bad_flags);
	tcase_add_test(tc, test_bad_container);
	tcase_add_test(tc, test_acl);
	tcase_add_test(tc, test_dims_match_fixed);
	tcase_add_test(tc, test_dims_bad);
	tcase_add_test(tc, test_dims_acl);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
