/* check_acl.c: tests for the AscendCL-shaped API (runtime/acl.c).
 *
 * Misuse first: every call before aclInit or aclrtSetDevice, with a made-up
 * or destroyed handle, an unknown model id, a copy larger than destMax or
 * outside its allocation must return ACL's code and leave a message, never
 * crash.  Then what works: a host -> device -> device -> host round trip
 * keeps the bytes; a stream waiting for an event recorded on another stream
 * after a large copy sees the copied data, and the events' elapsed time is
 * the copy's PCIe time from the SoC's figures; a real model (the ONNX
 * backend test Relu, compiled here) runs through datasets, on one stream
 * and on two at once; a kernel that deadlocks in the simulator gives the
 * simulator's message naming the task.  Callbacks: misuse codes, device
 * order across streams, BLOCK waited for and NO_BLOCK not with a report
 * thread, unsubscribing, a report thread waiting through aclFinalize; the
 * default SoC following the first model.  Check forks each test, so each
 * starts with the library's process-wide state fresh. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl.h"
#include "compile.h"
#include "isa.h"
#include "soc.h"
#include "tensor_io.h"

#define ck_acl(call) ck_assert_msg((call) == ACL_SUCCESS, "%s: %s", #call, \
				   aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "")

/* call returns code and the recent message contains needle. */
#define ck_acl_err(call, code, needle)                                                     \
	do {                                                                               \
		aclError r_ = (call);                                                      \
		const char *m_ = aclGetRecentErrMsg();                                     \
		ck_assert_msg(r_ == (code), "%s returned %d (%s), not %s", #call, (int)r_, \
			      m_ ? m_ : "", #code);                                        \
		ck_assert_ptr_nonnull(m_);                                                 \
		ck_assert_msg(strstr(m_, needle) != NULL, "%s: message '%s' lacks '%s'",    \
			      #call, m_, needle);                                          \
	} while (0)

static char tmpdir[256];

static void tmp_setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/check_acl.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	unsetenv("DAVINCI_SOC"); /* the tests choose the SoC themselves */
}

static void tmp_teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

static const char *node_dir(void)
{
	static char dir[512];
	const char *td = getenv("ONNX_TESTDATA");
	snprintf(dir, sizeof dir, "%s/node/test_relu",
		 td && *td ? td : "/usr/share/libonnx-testdata/data");
	return dir;
}

/* Compile the ONNX backend test Relu (x: float 3x4x5) for soc into
 * tmpdir/name; with deadlock, its Relu kernel is replaced by
 * tests/kernels/deadlock.s, which the simulator must stop. */
static void compile_relu(const char *soc, const char *name, int deadlock, char *path,
			 size_t pathlen)
{
	char err[2048], onnx[600];
	struct soc_config cfg;
	struct om_model m;
	ck_assert_msg(soc_load(soc, &cfg, err, sizeof err) == 0, "%s", err);
	snprintf(onnx, sizeof onnx, "%s/model.onnx", node_dir());
	ck_assert_msg(cc_compile(onnx, &cfg, NULL, &m, err, sizeof err) == 0, "%s", err);
	if (deadlock) {
		char k[600];
		const char *kd = getenv("DAVINCI_KERNEL_DIR");
		struct isa_program p;
		snprintf(k, sizeof k, "%s/deadlock.s", kd ? kd : "tests/kernels");
		ck_assert_msg(isa_assemble_file(k, &p, err, sizeof err) == 0, "%s", err);
		uint32_t t;
		for (t = 0; t < m.ntasks && strcmp(m.tasks[t].op_type, "Relu") != 0; t++)
			;
		ck_assert_uint_lt(t, m.ntasks);
		struct om_kernel *ok = &m.kernels[m.tasks[t].kernel];
		free(ok->code);
		ok->code = p.code;
		ok->bytes = p.ninsns * ISA_INSN_BYTES;
	}
	snprintf(path, pathlen, "%s/%s", tmpdir, name);
	ck_assert_msg(om_write(path, &m, err, sizeof err) == 0, "%s", err);
	om_free(&m);
}

static void start(void)
{
	ck_acl(aclInit(NULL));
	ck_acl(aclrtSetDevice(0));
}

static void stop(void)
{
	ck_acl(aclrtResetDevice(0));
	ck_acl(aclFinalize());
}

/* ------------------------------------------------------------------------ */

START_TEST(test_before_init)
{
	void *p = NULL;
	uint32_t id;
	aclrtStream s;
	double us;

	ck_assert_ptr_null(aclGetRecentErrMsg()); /* nothing has failed yet */
	ck_acl_err(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "aclrtSetDevice: aclInit");
	ck_acl_err(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
		   "aclrtMalloc");
	ck_acl_err(aclrtCreateStream(&s), ACL_ERROR_UNINITIALIZE, "aclInit");
	ck_acl_err(aclmdlLoadFromFile("x.om", &id), ACL_ERROR_UNINITIALIZE, "aclInit");
	ck_acl_err(aclsimSetSoc("Ascend910"), ACL_ERROR_UNINITIALIZE, "aclInit");
	ck_acl_err(aclsimGetDeviceTimeUs(&us), ACL_ERROR_UNINITIALIZE, "aclInit");
	ck_acl_err(aclFinalize(), ACL_ERROR_UNINITIALIZE, "aclFinalize");
	ck_assert_ptr_null(p);
	ck_assert_ptr_null(aclrtGetSocName());
	size_t w, b;
	ck_acl_err(aclmdlQuerySize("x.om", &w, &b), ACL_ERROR_UNINITIALIZE, "aclInit");
}
END_TEST

START_TEST(test_init_and_device)
{
	aclrtStream s;
	void *p;
	uint32_t n = 0;
	int32_t dev = -1;
	aclrtRunMode mode = ACL_DEVICE;
	double us = -1;

	ck_acl(aclInit(NULL));
	ck_acl_err(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "already");
	ck_acl_err(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
	ck_acl_err(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL,
		   "aclrtSetDevice");
	ck_acl_err(aclsimGetDeviceTimeUs(&us), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
	ck_acl(aclrtGetDeviceCount(&n));
	ck_assert_uint_eq(n, 1);
	ck_acl_err(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID, "device 1 does not exist");
	ck_acl_err(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "device -1");
	ck_acl_err(aclsimSetSoc("Ascend999"), ACL_ERROR_INVALID_PARAM, "Ascend999");

	/* reference counted: the device lives until the second reset */
	ck_acl(aclrtSetDevice(0));
	ck_acl(aclrtSetDevice(0));
	ck_acl(aclrtGetDevice(&dev));
	ck_assert_int_eq(dev, 0);
	ck_acl(aclrtGetRunMode(&mode));
	ck_assert_int_eq(mode, ACL_HOST);
	ck_acl_err(aclsimSetSoc("Ascend910"), ACL_ERROR_REPEAT_INITIALIZE, "before aclrtSetDevice");
	ck_acl(aclrtResetDevice(0));
	ck_acl(aclrtCreateStream(&s));
	ck_acl(aclrtResetDevice(0));
	ck_acl_err(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
	ck_acl_err(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_NULL, "not set");

	/* another chip once no device is set; its clock starts at 0 */
	ck_acl(aclsimSetSoc("Ascend910"));
	ck_acl(aclrtSetDevice(0));
	ck_acl(aclsimGetDeviceTimeUs(&us));
	ck_assert(us == 0.0);
	ck_assert_str_eq(aclrtGetSocName(), "Ascend910");

	/* one memory pool of [hbm] size_mb; allocations take from it */
	size_t fr, tot, fr2, tot2;
	void *blk;
	ck_acl(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
	ck_assert_uint_gt(tot, 0);
	ck_assert_uint_le(fr, tot);
	ck_acl(aclrtMalloc(&blk, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtGetMemInfo(ACL_DDR_MEM, &fr2, &tot2));
	ck_assert_uint_eq(tot2, tot);
	ck_assert_uint_ge(fr - fr2, 1 << 20);
	/* where a pointer lies */
	aclrtPtrAttributes at;
	void *hp;
	int local;
	ck_acl(aclrtPointerGetAttributes((char *)blk + 100, &at));
	ck_assert_int_eq(at.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
	ck_acl(aclrtMallocHost(&hp, 64));
	ck_acl(aclrtPointerGetAttributes(hp, &at));
	ck_assert_int_eq(at.location.type, ACL_MEM_LOCATION_TYPE_HOST);
	ck_acl(aclrtFreeHost(hp));
	ck_acl(aclrtPointerGetAttributes(&local, &at));
	ck_assert_int_eq(at.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
	ck_acl_err(aclrtPointerGetAttributes(&local, NULL), ACL_ERROR_INVALID_PARAM, "attributes");
	ck_acl(aclrtFree(blk));
	ck_acl(aclrtPointerGetAttributes(blk, &at)); /* freed: no longer device memory */
	ck_assert_int_eq(at.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
	ck_acl(aclrtGetMemInfo(ACL_HBM_MEM_P2P_NORMAL, &fr2, &tot2));
	ck_assert(fr2 == 0 && tot2 == 0);
	ck_acl_err(aclrtGetMemInfo((aclrtMemAttr)42, &fr, &tot), ACL_ERROR_INVALID_PARAM,
		   "unknown aclrtMemAttr 42");
	ck_acl_err(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &tot), ACL_ERROR_INVALID_PARAM, "free");

	/* contexts hold a device reference */
	aclrtContext c, cur;
	ck_acl(aclrtCreateContext(&c, 0));
	ck_acl(aclrtGetCurrentContext(&cur));
	ck_assert_ptr_eq(cur, c);
	ck_acl(aclrtSetCurrentContext(c));
	ck_acl(aclrtDestroyContext(c));
	ck_acl_err(aclrtDestroyContext(c), ACL_ERROR_INVALID_RESOURCE_HANDLE, "context");
	ck_acl_err(aclrtCreateContext(&c, 3), ACL_ERROR_RT_INVALID_DEVICEID, "device 3");
	ck_acl(aclrtGetCurrentContext(&cur)); /* the implicit one */
	ck_acl(aclrtSetCurrentContext(cur));

	ck_acl(aclFinalize());
	ck_acl_err(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "already");
	ck_acl_err(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "since aclFinalize");
	ck_assert_ptr_null(aclrtGetSocName());
	start(); /* and again */
	stop();
}
END_TEST

/* DAVINCI_SOC picks the chip; a config file's soc = beats it; set = applies. */
START_TEST(test_config)
{
	char relu[600], ini[600];
	uint32_t id;
	compile_relu("Ascend310", "relu.om", 0, relu, sizeof relu);

	setenv("DAVINCI_SOC", "Ascend310P3", 1);
	start();
	ck_acl_err(aclmdlLoadFromFile(relu, &id), ACL_ERROR_RT_SOC_VERSION,
		   "compiled for Ascend310, but the device is Ascend310P3 (SoC from $DAVINCI_SOC)");
	stop();

	/* 12 MB over a 24 GB/s link: 500 us plus the link's latency */
	snprintf(ini, sizeof ini, "%s/acl.ini", tmpdir);
	FILE *f = fopen(ini, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "# chosen here\n[device]\nsoc = Ascend310\nset = pcie.bandwidth_gbps=24\n"
		   "set = pcie.latency_us=10\n");
	fclose(f);
	ck_acl(aclInit(ini));
	ck_acl(aclrtSetDevice(0));
	ck_acl(aclmdlLoadFromFile(relu, &id));
	size_t n = 12000000;
	void *dev, *host = calloc(1, n);
	double t0, t1;
	ck_acl(aclrtMalloc(&dev, n, ACL_MEM_MALLOC_NORMAL_ONLY));
	ck_acl(aclsimGetDeviceTimeUs(&t0));
	ck_acl(aclrtMemcpy(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE));
	ck_acl(aclsimGetDeviceTimeUs(&t1));
	ck_assert_msg(fabs(t1 - t0 - 510.0) < 1.0, "the copy took %f us", t1 - t0);
	free(host);
	stop();
}
END_TEST

START_TEST(test_config_errors)
{
	char ini[600];
	snprintf(ini, sizeof ini, "%s/bad.ini", tmpdir);
	FILE *f = fopen(ini, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[device]\nsoc = Ascend910\n[host]\nx = 1\n");
	fclose(f);
	ck_acl_err(aclInit(ini), ACL_ERROR_PARSE_FILE, "bad.ini:4: key 'x' is in unknown section [host]");
	f = fopen(ini, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[device]\nsoc = Ascend999\n");
	fclose(f);
	ck_acl_err(aclInit(ini), ACL_ERROR_FILE_ATTR_INVALID, "(from line 2 of");
	f = fopen(ini, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[device]\nset = hbm.nonsense=3\n");
	fclose(f);
	ck_acl_err(aclInit(ini), ACL_ERROR_FILE_ATTR_INVALID, "bad.ini:2: set = hbm.nonsense=3");
	ck_acl_err(aclInit("/nonexistent/acl.ini"), ACL_ERROR_INVALID_FILE, "/nonexistent/acl.ini");
	setenv("DAVINCI_SOC", "Ascend999", 1);
	ck_acl_err(aclInit(NULL), ACL_ERROR_INVALID_PARAM, "(from $DAVINCI_SOC)");
	unsetenv("DAVINCI_SOC");
	/* none of these initialized anything */
	ck_acl_err(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "aclInit");
	/* ACL's JSON configuration is accepted */
	f = fopen(ini, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "  {\"dump\": {}}\n");
	fclose(f);
	ck_acl(aclInit(ini));
	ck_acl(aclFinalize());
}
END_TEST

START_TEST(test_bad_handles)
{
	int junk[4] = { 0 };
	char host[64] = { 0 };
	void *dev;
	aclrtStream s, bogus = junk;
	aclrtEvent e, bogus_ev = junk + 1;
	float ms;

	start();
	ck_acl(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl_err(aclrtSynchronizeStream(bogus), ACL_ERROR_INVALID_RESOURCE_HANDLE, "stream");
	ck_acl_err(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, bogus),
		   ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclrtMemcpyAsync: stream");
	ck_acl(aclrtCreateStream(&s));
	ck_acl(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
	ck_acl(aclrtDestroyStream(s)); /* with work queued: it still runs */
	ck_acl_err(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_RESOURCE_HANDLE, "stream");
	ck_acl_err(aclrtDestroyStream(s), ACL_ERROR_INVALID_RESOURCE_HANDLE, "stream");
	ck_acl_err(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM, "default stream");
	ck_acl(aclrtSynchronizeStream(NULL));

	ck_acl_err(aclrtRecordEvent(bogus_ev, NULL), ACL_ERROR_INVALID_RESOURCE_HANDLE, "event");
	ck_acl_err(aclrtRecordEvent(NULL, NULL), ACL_ERROR_INVALID_PARAM, "event is NULL");
	ck_acl(aclrtCreateEvent(&e));
	ck_acl_err(aclrtStreamWaitEvent(bogus, e), ACL_ERROR_INVALID_RESOURCE_HANDLE, "stream");
	ck_acl_err(aclrtEventElapsedTime(&ms, e, e), ACL_ERROR_RT_EVENT_NOT_COMPLETE,
		   "never been recorded");
	ck_acl(aclrtRecordEvent(e, NULL));
	ck_acl_err(aclrtEventElapsedTime(&ms, e, e), ACL_ERROR_RT_EVENT_NOT_COMPLETE,
		   "not fired yet");
	ck_acl(aclrtDestroyEvent(e)); /* its record is still queued */
	ck_acl_err(aclrtDestroyEvent(e), ACL_ERROR_INVALID_RESOURCE_HANDLE, "event");
	ck_acl_err(aclrtSynchronizeEvent(e), ACL_ERROR_INVALID_RESOURCE_HANDLE, "event");
	ck_acl(aclrtSynchronizeDevice());

	/* models, descs, datasets, buffers */
	aclmdlDataset *ds = aclmdlCreateDataset();
	aclmdlDesc *desc = aclmdlCreateDesc();
	aclDataBuffer *b = aclCreateDataBuffer(dev, 64);
	ck_assert_ptr_nonnull(ds);
	ck_assert_ptr_nonnull(desc);
	ck_assert_ptr_nonnull(b);
	ck_acl_err(aclmdlUnload(42), ACL_ERROR_INVALID_MODEL_ID, "no model is loaded with id 42");
	ck_acl_err(aclmdlExecute(0, ds, ds), ACL_ERROR_INVALID_MODEL_ID, "id 0");
	ck_acl_err(aclmdlExecuteAsync(1, ds, ds, NULL), ACL_ERROR_INVALID_MODEL_ID, "id 1");
	ck_acl_err(aclmdlExecuteAsync(1, ds, ds, bogus), ACL_ERROR_INVALID_RESOURCE_HANDLE,
		   "stream");
	ck_acl_err(aclmdlGetDesc(desc, 7), ACL_ERROR_INVALID_MODEL_ID, "id 7");
	ck_assert_uint_eq(aclmdlGetNumInputs(NULL), 0);
	ck_assert_uint_eq(aclmdlGetInputSizeByIndex(desc, 0), 0);
	ck_assert_str_eq(aclmdlGetInputNameByIndex(desc, 0), "");
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "aclmdlGetDesc has not filled it"));
	ck_assert_int_eq(aclmdlGetOutputDataType(desc, 0), ACL_DT_UNDEFINED);
	ck_assert_int_eq(aclmdlGetInputFormat((aclmdlDesc *)junk, 0), ACL_FORMAT_UNDEFINED);
	ck_acl(aclmdlDestroyDesc(desc));
	ck_acl_err(aclmdlDestroyDesc(desc), ACL_ERROR_INVALID_RESOURCE_HANDLE, "desc");
	ck_acl_err(aclmdlAddDatasetBuffer(NULL, b), ACL_ERROR_INVALID_PARAM, "dataset is NULL");
	ck_acl_err(aclmdlAddDatasetBuffer(ds, (aclDataBuffer *)junk),
		   ACL_ERROR_INVALID_RESOURCE_HANDLE, "data buffer");
	ck_acl(aclmdlAddDatasetBuffer(ds, b));
	ck_assert_uint_eq(aclmdlGetDatasetNumBuffers(ds), 1);
	ck_assert_ptr_eq(aclmdlGetDatasetBuffer(ds, 0), b);
	ck_assert_ptr_null(aclmdlGetDatasetBuffer(ds, 1));
	ck_assert_ptr_eq(aclGetDataBufferAddr(b), dev);
	ck_assert_uint_eq(aclGetDataBufferSizeV2(b), 64);
	ck_assert_uint_eq(aclGetDataBufferSize(b), 64);
	ck_acl(aclDestroyDataBuffer(b));
	ck_assert_ptr_null(aclGetDataBufferAddr(b));
	ck_acl_err(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_RESOURCE_HANDLE, "data buffer");
	ck_acl(aclmdlDestroyDataset(ds));
	ck_assert_uint_eq(aclmdlGetDatasetNumBuffers(ds), 0);
	ck_acl_err(aclmdlDestroyDataset(ds), ACL_ERROR_INVALID_RESOURCE_HANDLE, "dataset");
	ck_acl(aclrtFree(dev));
	stop();
}
END_TEST

START_TEST(test_memcpy_errors)
{
	static char host[8192];
	void *dev, *dev2, *p = NULL;

	start();
	ck_acl(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMalloc(&dev2, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl_err(aclrtMemcpy(dev, 100, host, 200, ACL_MEMCPY_HOST_TO_DEVICE),
		   ACL_ERROR_INVALID_PARAM, "count 200 exceeds destMax 100");
	ck_acl_err(aclrtMemcpyAsync(dev, 100, host, 200, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
		   ACL_ERROR_INVALID_PARAM, "exceeds destMax");
	ck_acl_err(aclrtMemcpy((char *)dev + 4000, 200, host, 200, ACL_MEMCPY_HOST_TO_DEVICE),
		   ACL_ERROR_INVALID_PARAM, "runs past its end");
	ck_acl_err(aclrtMemcpy(host, 8192, dev, 8192, ACL_MEMCPY_DEVICE_TO_HOST),
		   ACL_ERROR_INVALID_PARAM, "src");
	ck_acl_err(aclrtMemcpy(dev, 16, dev2, 16, ACL_MEMCPY_HOST_TO_DEVICE),
		   ACL_ERROR_INVALID_PARAM, "src");
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "not host memory"));
	ck_acl_err(aclrtMemcpy(host, 16, host + 16, 16, ACL_MEMCPY_DEVICE_TO_DEVICE),
		   ACL_ERROR_INVALID_PARAM, "not inside one aclrtMalloc allocation");
	ck_acl_err(aclrtMemcpy(dev, 16, host, 16, (aclrtMemcpyKind)7), ACL_ERROR_INVALID_PARAM,
		   "unknown aclrtMemcpyKind 7");
	ck_acl_err(aclrtMemcpy(NULL, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE),
		   ACL_ERROR_INVALID_PARAM, "dst is NULL");
	ck_acl_err(aclrtMemcpyAsync(host, 16, host + 16, 16, ACL_MEMCPY_HOST_TO_HOST, NULL),
		   ACL_ERROR_FEATURE_UNSUPPORTED, "host-to-host");
	host[16] = 7;
	ck_acl(aclrtMemcpy(host, 16, host + 16, 16, ACL_MEMCPY_HOST_TO_HOST));
	ck_assert_int_eq(host[0], 7);
	ck_acl_err(aclrtMemset(dev, 10, 0, 20), ACL_ERROR_INVALID_PARAM, "exceeds maxCount");
	ck_acl_err(aclrtMemset(host, 10, 0, 10), ACL_ERROR_INVALID_PARAM, "not inside");

	ck_acl_err(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "size is 0");
	ck_acl_err(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "NULL");
	ck_acl_err(aclrtMalloc(&p, (size_t)1 << 50, ACL_MEM_MALLOC_HUGE_FIRST),
		   ACL_ERROR_RT_MEMORY_ALLOCATION, "exhausted");
	ck_assert_ptr_null(p);
	ck_acl_err(aclrtFree((char *)dev + 16), ACL_ERROR_INVALID_PARAM, "not an address");
	ck_acl(aclrtFree(dev));
	ck_acl_err(aclrtFree(dev), ACL_ERROR_INVALID_PARAM, "not an address");
	ck_acl_err(aclrtMemcpy(dev, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE),
		   ACL_ERROR_INVALID_PARAM, "not inside");
	ck_acl_err(aclrtFreeHost(host), ACL_ERROR_INVALID_PARAM, "aclrtMallocHost");
	ck_acl(aclrtFree(dev2));
	stop();
}
END_TEST

START_TEST(test_roundtrip)
{
	const size_t n = (1 << 20) + 3;
	unsigned char *a, *b;
	void *d1, *d2;
	double t0, t1;

	start();
	ck_acl(aclrtMallocHost((void **)&a, n));
	ck_acl(aclrtMallocHost((void **)&b, n));
	for (size_t i = 0; i < n; i++)
		a[i] = (unsigned char)(i * 131 + (i >> 9));
	memset(b, 0, n);
	ck_acl(aclrtMalloc(&d1, n, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMalloc(&d2, n, ACL_MEM_MALLOC_HUGE_ONLY));
	ck_acl(aclsimGetDeviceTimeUs(&t0));
	ck_acl(aclrtMemcpy(d1, n, a, n, ACL_MEMCPY_HOST_TO_DEVICE));
	ck_acl(aclsimGetDeviceTimeUs(&t1));
	ck_assert(t1 > t0); /* the copy took simulated time */
	ck_acl(aclrtMemcpy(d2, n, d1, n, ACL_MEMCPY_DEVICE_TO_DEVICE));
	ck_acl(aclrtMemcpy(b, n, d2, n, ACL_MEMCPY_DEVICE_TO_HOST));
	ck_assert(memcmp(a, b, n) == 0);
	/* a part of a buffer, at an offset */
	ck_acl(aclrtMemcpy((char *)d2 + 100, n - 100, a + 7, 1000, ACL_MEMCPY_HOST_TO_DEVICE));
	ck_acl(aclrtMemset(d2, n, 0x5a, 50));
	ck_acl(aclrtMemcpy(b, n, d2, n, ACL_MEMCPY_DEVICE_TO_HOST));
	for (size_t i = 0; i < 50; i++)
		ck_assert_uint_eq(b[i], 0x5a);
	ck_assert(memcmp(b + 50, a + 50, 50) == 0);
	ck_assert(memcmp(b + 100, a + 7, 1000) == 0);
	ck_assert(memcmp(b + 1100, a + 1100, n - 1100) == 0);
	ck_acl(aclrtFree(d1));
	ck_acl(aclrtFree(d2));
	ck_acl(aclrtFreeHost(a));
	ck_acl(aclrtFreeHost(b));
	stop();
}
END_TEST

/* Stream B waits for an event recorded on stream A after a big H2D copy: B's
 * D2H then reads the copied bytes, and the events time the copy at the
 * SoC's PCIe bandwidth plus its latency. */
START_TEST(test_streams_and_events)
{
	const size_t n = 16u << 20;
	char err[1024];
	struct soc_config cfg;
	unsigned char *a = malloc(n), *b = calloc(1, n);
	void *dev;
	aclrtStream sa, sb;
	aclrtEvent start_ev, copied, read_back;
	aclrtEventStatus st = ACL_EVENT_STATUS_NOT_READY;
	float ms, ms_back;

	ck_assert(soc_load("Ascend310", &cfg, err, sizeof err) == 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++)
		a[i] = (unsigned char)(i ^ (i >> 11));
	start();
	ck_acl(aclrtMalloc(&dev, n, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtCreateStream(&sa));
	ck_acl(aclrtCreateStream(&sb));
	ck_acl(aclrtCreateEvent(&start_ev));
	ck_acl(aclrtCreateEvent(&copied));
	ck_acl(aclrtCreateEvent(&read_back));
	ck_acl(aclrtRecordEvent(start_ev, sa));
	ck_acl(aclrtMemcpyAsync(dev, n, a, n, ACL_MEMCPY_HOST_TO_DEVICE, sa));
	ck_acl(aclrtRecordEvent(copied, sa));
	ck_acl(aclrtStreamWaitEvent(sb, copied));
	ck_acl(aclrtMemcpyAsync(b, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, sb));
	ck_acl(aclrtRecordEvent(read_back, sb));
	ck_acl_err(aclrtEventElapsedTime(&ms, start_ev, copied), ACL_ERROR_RT_EVENT_NOT_COMPLETE,
		   "synchronize first");
	ck_assert_uint_eq(b[1], 0); /* nothing has run yet */
	ck_acl(aclrtSynchronizeStream(sb));
	ck_assert(memcmp(a, b, n) == 0);

	double link_us = (double)n / (cfg.pcie_bandwidth_gbps * 1e3);
	ck_acl(aclrtEventElapsedTime(&ms, start_ev, copied));
	ck_assert_msg(ms > 0, "elapsed %f ms", (double)ms);
	ck_assert_msg(ms * 1e3 >= 0.8 * link_us + cfg.pcie_latency_us &&
			      ms * 1e3 <= 1.2 * link_us + cfg.pcie_latency_us,
		      "a %zu-byte copy took %f us; the link says %f us plus %f us", n,
		      (double)ms * 1e3, link_us, cfg.pcie_latency_us);
	/* B's copy back started after A's had ended */
	ck_acl(aclrtEventElapsedTime(&ms_back, copied, read_back));
	ck_assert_msg(ms_back * 1e3 >= 0.8 * link_us, "the copy back took %f us",
		      (double)ms_back * 1e3);
	ck_acl(aclrtQueryEvent(read_back, &st));
	ck_assert_int_eq(st, ACL_EVENT_STATUS_COMPLETE);
	ck_acl(aclrtSynchronizeEvent(copied));

	/* a query of a pending event runs the simulation */
	ck_acl(aclrtMemcpyAsync(dev, n, a, n, ACL_MEMCPY_HOST_TO_DEVICE, sa));
	ck_acl(aclrtRecordEvent(copied, sa));
	st = ACL_EVENT_STATUS_RESERVED;
	ck_acl(aclrtQueryEvent(copied, &st));
	ck_assert_int_eq(st, ACL_EVENT_STATUS_COMPLETE);
	ck_acl(aclrtEventElapsedTime(&ms, read_back, copied));
	ck_assert(ms > 0);

	ck_acl(aclrtDestroyEvent(start_ev));
	ck_acl(aclrtDestroyEvent(copied));
	ck_acl(aclrtDestroyEvent(read_back));
	ck_acl(aclrtDestroyStream(sa));
	ck_acl(aclrtDestroyStream(sb));
	ck_acl(aclrtFree(dev));
	stop();
	free(a);
	free(b);
}
END_TEST

START_TEST(test_error_strings)
{
	static const aclError codes[] = {
		ACL_SUCCESS, ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE,
		ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_INVALID_FILE, ACL_ERROR_PARSE_FILE,
		ACL_ERROR_FILE_ATTR_INVALID, ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_PARSE_MODEL,
		ACL_ERROR_READ_MODEL_FAILURE, ACL_ERROR_MODEL_INPUT_NOT_MATCH,
		ACL_ERROR_MODEL_OUTPUT_NOT_MATCH, ACL_ERROR_REPEAT_FINALIZE,
		ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_BAD_ALLOC,
		ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_INVALID_RESOURCE_HANDLE,
		ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_RT_MEMORY_ALLOCATION,
		ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_FAILURE, ACL_ERROR_RT_FAILURE,
		ACL_ERROR_RT_EVENT_NOT_COMPLETE, ACL_ERROR_RT_SOC_VERSION,
	};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		const char *s = aclGetErrorString(codes[i]);
		ck_assert_msg(s && strncmp(s, "ACL_", 4) == 0 && strlen(s) > 12, "code %d: '%s'",
			      (int)codes[i], s ? s : "(null)");
	}
	ck_assert_str_eq(aclGetErrorString(ACL_ERROR_INVALID_MODEL_ID),
			 "ACL_ERROR_INVALID_MODEL_ID (no such model loaded)");
	ck_assert_str_eq(aclGetErrorString(123), "unknown ACL error code");
	/* numbers are ACL's */
	ck_assert_int_eq(ACL_ERROR_INVALID_PARAM, 100000);
	ck_assert_int_eq(ACL_ERROR_INVALID_MODEL_ID, 100011);
	ck_assert_int_eq(ACL_ERROR_BAD_ALLOC, 200000);
	ck_assert_int_eq(ACL_ERROR_RT_FAILURE, 500003);
	ck_assert_int_eq(ACL_FLOAT16, 1);
	ck_assert_int_eq(ACL_BOOL, 12);
	ck_assert_uint_eq(aclDataTypeSize(ACL_FLOAT16), 2);
	ck_assert_uint_eq(aclDataTypeSize(ACL_INT64), 8);
	ck_assert_uint_eq(aclDataTypeSize(ACL_DT_UNDEFINED), 0);

	ck_assert_ptr_null(aclGetRecentErrMsg());
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_ERROR_UNINITIALIZE);
	ck_assert_ptr_nonnull(aclGetRecentErrMsg());
	ck_assert_str_eq(aclGetRecentErrMsg(), "aclrtSynchronizeDevice: aclInit has not been called");
	start();
	ck_acl(aclrtSynchronizeDevice()); /* success keeps the last failure's message */
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "aclrtSynchronizeDevice"));
	stop();
}
END_TEST

/* A device buffer holding n bytes from host, in a new one-buffer dataset. */
static aclmdlDataset *dataset_of(void *dev, size_t n)
{
	aclmdlDataset *ds = aclmdlCreateDataset();
	aclDataBuffer *b = aclCreateDataBuffer(dev, n);
	ck_assert_ptr_nonnull(ds);
	ck_assert_ptr_nonnull(b);
	ck_acl(aclmdlAddDatasetBuffer(ds, b));
	return ds;
}

static void destroy_dataset(aclmdlDataset *ds)
{
	for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); i++)
		ck_acl(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i)));
	ck_acl(aclmdlDestroyDataset(ds));
}

static void check_relu(const float *x, const float *y, size_t n, float sign)
{
	for (size_t i = 0; i < n; i++) {
		float want = sign * x[i] > 0 ? sign * x[i] : 0;
		ck_assert_msg(fabsf(y[i] - want) <= 2e-3f * fabsf(want) + 1e-6f,
			      "y[%zu] = %g, want %g", i, (double)y[i], (double)want);
	}
}

START_TEST(test_model)
{
	char relu[600], path[700], err[1024];
	struct om_tensor x;
	uint32_t id;
	aclmdlIODims dims;
	size_t idx = 9;

	compile_relu("Ascend310", "relu.om", 0, relu, sizeof relu);
	snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", node_dir());
	ck_assert_msg(om_tensor_read(path, &x, err, sizeof err) == 0, "%s", err);
	const size_t n = x.nbytes / sizeof(float);
	ck_assert_uint_eq(x.nbytes, 240);

	start();
	ck_acl(aclmdlLoadFromFile(relu, &id));
	aclmdlDesc *desc = aclmdlCreateDesc();
	ck_assert_ptr_nonnull(desc);
	ck_acl(aclmdlGetDesc(desc, id));
	ck_assert_uint_eq(aclmdlGetNumInputs(desc), 1);
	ck_assert_uint_eq(aclmdlGetNumOutputs(desc), 1);
	ck_assert_uint_eq(aclmdlGetInputSizeByIndex(desc, 0), 240);
	ck_assert_uint_eq(aclmdlGetOutputSizeByIndex(desc, 0), 240);
	ck_assert_uint_eq(aclmdlGetInputSizeByIndex(desc, 1), 0);
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "input 1 does not exist"));
	ck_acl(aclmdlGetInputDims(desc, 0, &dims));
	ck_assert_str_eq(dims.name, "x");
	ck_assert_uint_eq(dims.dimCount, 3);
	ck_assert(dims.dims[0] == 3 && dims.dims[1] == 4 && dims.dims[2] == 5);
	ck_acl(aclmdlGetOutputDims(desc, 0, &dims));
	ck_assert_str_eq(dims.name, "y");
	memset(&dims, 0, sizeof dims);
	ck_acl(aclmdlGetCurOutputDims(desc, 0, &dims)); /* static shapes: the same */
	ck_assert(dims.dimCount == 3 && dims.dims[0] == 3 && dims.dims[2] == 5);
	size_t work = 0, weight = 1;
	ck_acl(aclmdlQuerySize(relu, &work, &weight));
	ck_assert_uint_eq(weight, 0); /* Relu has no weights */
	ck_acl_err(aclmdlQuerySize("/nonexistent.om", &work, &weight),
		   ACL_ERROR_READ_MODEL_FAILURE, "/nonexistent.om");
	ck_acl_err(aclmdlQuerySize(relu, NULL, &weight), ACL_ERROR_INVALID_PARAM, "workSize");
	ck_acl_err(aclmdlGetOutputDims(desc, 1, &dims), ACL_ERROR_INVALID_PARAM, "output 1");
	ck_assert_str_eq(aclmdlGetInputNameByIndex(desc, 0), "x");
	ck_assert_str_eq(aclmdlGetOutputNameByIndex(desc, 0), "y");
	ck_acl(aclmdlGetOutputIndexByName(desc, "y", &idx));
	ck_assert_uint_eq(idx, 0);
	ck_acl_err(aclmdlGetInputIndexByName(desc, "nope", &idx), ACL_ERROR_INVALID_PARAM,
		   "no input named 'nope'");
	ck_assert_int_eq(aclmdlGetInputDataType(desc, 0), ACL_FLOAT);
	ck_assert_int_eq(aclmdlGetOutputDataType(desc, 0), ACL_FLOAT);
	ck_assert_int_ge(aclmdlGetInputFormat(desc, 0), ACL_FORMAT_NCHW);

	/* one execution */
	void *din, *dout, *din2, *dout2;
	float y[60], y2[60], negx[60];
	ck_acl(aclrtMalloc(&din, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMalloc(&dout, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMemcpy(din, 240, x.data, 240, ACL_MEMCPY_HOST_TO_DEVICE));
	aclmdlDataset *in = dataset_of(din, 240), *out = dataset_of(dout, 240);
	ck_acl(aclmdlExecute(id, in, out));
	ck_acl(aclrtMemcpy(y, sizeof y, dout, 240, ACL_MEMCPY_DEVICE_TO_HOST));
	check_relu(x.data, y, n, 1);

	/* two at once on two streams, -x on the second: the executions share the
	 * model's workspace, so they must not overlap */
	aclrtStream s1, s2;
	for (size_t i = 0; i < n; i++)
		negx[i] = -((const float *)x.data)[i];
	ck_acl(aclrtMalloc(&din2, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMalloc(&dout2, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	aclmdlDataset *in2 = dataset_of(din2, 240), *out2 = dataset_of(dout2, 240);
	ck_acl(aclrtCreateStream(&s1));
	ck_acl(aclrtCreateStream(&s2));
	memset(y, 0, sizeof y);
	ck_acl(aclrtMemcpyAsync(din2, 240, negx, 240, ACL_MEMCPY_HOST_TO_DEVICE, s2));
	ck_acl(aclmdlExecuteAsync(id, in, out, s1));
	ck_acl(aclmdlExecuteAsync(id, in2, out2, s2));
	ck_acl(aclrtMemcpyAsync(y, sizeof y, dout, 240, ACL_MEMCPY_DEVICE_TO_HOST, s1));
	ck_acl(aclrtMemcpyAsync(y2, sizeof y2, dout2, 240, ACL_MEMCPY_DEVICE_TO_HOST, s2));
	ck_acl(aclrtSynchronizeStream(s2));
	check_relu(x.data, y, n, 1);
	check_relu(x.data, y2, n, -1);

	/* datasets that do not fit the model */
	aclmdlDataset *empty = aclmdlCreateDataset();
	ck_acl_err(aclmdlExecute(id, empty, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH,
		   "the model has 1 inputs, the input dataset holds 0 buffers");
	ck_acl_err(aclmdlExecute(id, in, empty), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH, "holds 0");
	ck_acl_err(aclmdlExecute(id, NULL, out), ACL_ERROR_INVALID_PARAM, "dataset is NULL");
	aclmdlDataset *small = dataset_of(din, 100), *hostbuf = dataset_of(negx, 240);
	ck_acl_err(aclmdlExecute(id, small, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH,
		   "input 0 ('x'): the buffer holds 100 bytes, the model needs 240");
	ck_acl_err(aclmdlExecuteAsync(id, in, hostbuf, s1), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH,
		   "is not device memory");
	ck_acl(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(small, 0)));
	ck_acl_err(aclmdlExecute(id, small, out), ACL_ERROR_INVALID_RESOURCE_HANDLE,
		   "has been destroyed");
	ck_acl(aclmdlDestroyDataset(small));
	/* a device pointer used after aclrtFree: its buffer is refused */
	void *gone;
	ck_acl(aclrtMalloc(&gone, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	aclmdlDataset *freed = dataset_of(gone, 240);
	ck_acl(aclrtFree(gone));
	ck_acl_err(aclmdlExecute(id, freed, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH,
		   "is not device memory");
	ck_acl_err(aclmdlExecuteAsync(id, in, freed, s1), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH,
		   "is not device memory");
	destroy_dataset(freed);

	/* unloading: the id goes, the desc stays */
	ck_acl(aclmdlExecuteAsync(id, in, out, s1)); /* still queued at the unload */
	ck_acl(aclmdlUnload(id));
	ck_acl_err(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_MODEL_ID, "id 1");
	ck_acl_err(aclmdlUnload(id), ACL_ERROR_INVALID_MODEL_ID, "id 1");
	ck_assert_uint_eq(aclmdlGetNumInputs(desc), 1);
	uint32_t id2;
	ck_acl(aclmdlLoadFromFile(relu, &id2));
	ck_assert_uint_ne(id2, id); /* ids are not reused */

	/* from memory: the same model from its bytes; a truncated copy fails */
	FILE *mf = fopen(relu, "rb");
	ck_assert_ptr_nonnull(mf);
	static unsigned char bytes[1 << 20];
	size_t nb = fread(bytes, 1, sizeof bytes, mf);
	fclose(mf);
	ck_assert(nb > 0 && nb < sizeof bytes);
	uint32_t id3;
	ck_acl(aclmdlLoadFromMem(bytes, nb, &id3));
	ck_acl(aclmdlExecute(id3, in, out));
	ck_acl(aclrtMemcpy(y, sizeof y, dout, 240, ACL_MEMCPY_DEVICE_TO_HOST));
	check_relu(x.data, y, n, 1);
	ck_acl(aclmdlUnload(id3));
	ck_acl_err(aclmdlLoadFromMem(bytes, 300, &id3), ACL_ERROR_PARSE_MODEL, "aclmdlLoadFromMem");
	ck_acl_err(aclmdlLoadFromMem(bytes, 0, &id3), ACL_ERROR_INVALID_PARAM, "modelSize is 0");
	ck_acl_err(aclmdlLoadFromMem(NULL, nb, &id3), ACL_ERROR_INVALID_PARAM, "model is NULL");

	destroy_dataset(in);
	destroy_dataset(out);
	destroy_dataset(in2);
	destroy_dataset(out2);
	destroy_dataset(hostbuf);
	ck_acl(aclmdlDestroyDataset(empty));
	ck_acl(aclmdlDestroyDesc(desc));
	ck_acl(aclrtDestroyStream(s1));
	ck_acl(aclrtDestroyStream(s2));
	/* the rest (buffers, model id2) goes with the device */
	stop();
	om_tensor_free(&x);
}
END_TEST

/* aclprof*: the work between aclprofStart and aclprofStop becomes a trace
 * directory (op_summary.csv, timeline.json with pipe spans...); misuse gives
 * ACL's profiling codes. */
START_TEST(test_profiling)
{
	char relu[600], dir[700], path[800];
	uint32_t id, dev0 = 0, dev1 = 1;
	compile_relu("Ascend310", "relu.om", 0, relu, sizeof relu);
	snprintf(dir, sizeof dir, "%s/prof", tmpdir);

	start();
	aclprofConfig *cfg = aclprofCreateConfig(&dev0, 1, ACL_AICORE_PIPE_UTILIZATION, NULL,
						 ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_ptr_null(aclprofCreateConfig(&dev1, 1, ACL_AICORE_NONE, NULL, 0));
	ck_assert_ptr_nonnull(strstr(aclGetRecentErrMsg(), "must be {0}"));
	ck_acl_err(aclprofStart(cfg), ACL_ERROR_PROF_NOT_RUN, "aclprofInit");
	ck_acl_err(aclprofInit(dir, strlen(dir) + 3), ACL_ERROR_INVALID_PARAM, "length");
	ck_acl(aclprofInit(dir, strlen(dir)));
	ck_acl_err(aclprofInit(dir, strlen(dir)), ACL_ERROR_PROF_ALREADY_RUN, "already");
	ck_acl_err(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN, "aclprofStart");
	ck_acl(aclmdlLoadFromFile(relu, &id));
	ck_acl(aclprofStart(cfg));
	ck_acl_err(aclprofStart(cfg), ACL_ERROR_PROF_ALREADY_RUN, "already running");
	ck_acl_err(aclprofDestroyConfig(cfg), ACL_ERROR_PROF_ALREADY_RUN, "aclprofStop");

	void *din, *dout;
	ck_acl(aclrtMalloc(&din, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMalloc(&dout, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	aclmdlDataset *in = dataset_of(din, 240), *out = dataset_of(dout, 240);
	ck_acl(aclmdlExecute(id, in, out));
	/* a model unloaded and another loaded meanwhile must not confuse the log */
	uint32_t id2;
	ck_acl(aclmdlUnload(id));
	ck_acl(aclmdlLoadFromFile(relu, &id2));
	ck_acl(aclmdlExecuteAsync(id2, in, out, NULL));
	ck_acl(aclprofStop(cfg));

	static const char *const files[] = { "op_summary.csv", "task_time.csv", "timeline.json",
					      "summary.json" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		ck_assert_msg(access(path, R_OK) == 0, "aclprofStop did not write %s", path);
	}
	snprintf(path, sizeof path, "%s/op_summary.csv", dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char line[4096];
	int rows = 0;
	while (fgets(line, sizeof line, f))
		rows++;
	fclose(f);
	ck_assert_msg(rows >= 3, "op_summary.csv has %d lines", rows); /* header + 2 runs */

	ck_acl(aclprofDestroyConfig(cfg));
	ck_acl_err(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclprofConfig");
	ck_acl(aclprofFinalize());
	ck_acl_err(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofInit");
	destroy_dataset(in);
	destroy_dataset(out);
	stop();
}
END_TEST

static void cb_count(void *user) { ++*(int *)user; }

START_TEST(test_model_files)
{
	char m910[600], bad[600];
	uint32_t id;

	compile_relu("Ascend910", "relu910.om", 0, m910, sizeof m910);
	/* nothing named the SoC: the first model chooses it, streams survive */
	aclrtStream s;
	void *dev;
	start();
	ck_assert_str_eq(aclrtGetSocName(), "Ascend310");
	ck_acl(aclrtCreateStream(&s));
	ck_acl(aclmdlLoadFromFile(m910, &id));
	ck_assert_str_eq(aclrtGetSocName(), "Ascend910");
	ck_acl(aclrtSynchronizeStream(s));
	ck_acl(aclmdlUnload(id));
	stop();
	/* ... but not once device memory is allocated on the default */
	start();
	ck_acl(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl_err(aclmdlLoadFromFile(m910, &id), ACL_ERROR_RT_SOC_VERSION,
		   "the device is Ascend310 (the default) and device memory is allocated");
	ck_acl(aclrtFree(dev));
	stop();
	/* ... nor while a callback waits (they are ordered by the old clock) */
	int ran = 0;
	start();
	ck_acl(aclrtCreateStream(&s));
	ck_acl(aclrtSubscribeReport((uint64_t)pthread_self(), s));
	ck_acl(aclrtLaunchCallback(cb_count, &ran, ACL_CALLBACK_NO_BLOCK, s));
	ck_acl_err(aclmdlLoadFromFile(m910, &id), ACL_ERROR_RT_SOC_VERSION,
		   "callbacks are waiting to run");
	ck_acl(aclrtProcessReport(100));
	ck_assert_int_eq(ran, 1);
	ck_acl(aclmdlLoadFromFile(m910, &id));
	ck_assert_str_eq(aclrtGetSocName(), "Ascend910");
	stop();
	/* an .om for another SoC than the one chosen */
	ck_acl(aclInit(NULL));
	ck_acl(aclsimSetSoc("Ascend310"));
	ck_acl(aclrtSetDevice(0));
	ck_acl_err(aclmdlLoadFromFile(m910, &id), ACL_ERROR_RT_SOC_VERSION,
		   "compiled for Ascend910, but the device is Ascend310 (SoC from aclsimSetSoc)");
	ck_acl_err(aclmdlLoadFromFile("/nonexistent.om", &id), ACL_ERROR_READ_MODEL_FAILURE,
		   "/nonexistent.om");
	snprintf(bad, sizeof bad, "%s/bad.om", tmpdir);
	FILE *f = fopen(bad, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not an ELF file", f);
	fclose(f);
	ck_acl_err(aclmdlLoadFromFile(bad, &id), ACL_ERROR_PARSE_MODEL, "bad.om");
	ck_acl_err(aclmdlLoadFromFile(NULL, &id), ACL_ERROR_INVALID_PARAM, "modelPath");
	ck_acl(aclrtResetDevice(0));
	ck_acl(aclsimSetSoc("Ascend910"));
	ck_acl(aclrtSetDevice(0));
	ck_acl(aclmdlLoadFromFile(m910, &id));
	stop();
}
END_TEST

/* A model whose Relu kernel deadlocks: the simulator's message, naming the
 * task, comes back through aclGetRecentErrMsg, and the device works on. */
START_TEST(test_simulation_failure)
{
	char path[600];
	uint32_t id;
	float x[60] = { 1 }, y[60];
	void *din, *dout;
	aclrtStream s;
	aclrtEvent ev;
	aclrtEventStatus st;

	compile_relu("Ascend310", "deadlock.om", 1, path, sizeof path);
	start();
	ck_acl(aclmdlLoadFromFile(path, &id));
	ck_acl(aclrtMalloc(&din, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtMalloc(&dout, 240, ACL_MEM_MALLOC_HUGE_FIRST));
	aclmdlDataset *in = dataset_of(din, 240), *out = dataset_of(dout, 240);
	ck_acl_err(aclmdlExecute(id, in, out), ACL_ERROR_RT_FAILURE, "aclmdlExecute: ");
	const char *m = aclGetRecentErrMsg();
	ck_assert_msg(strstr(m, "(Relu)") && strstr(m, "pipe V, pc 1: wait_flag"), "%s", m);

	/* asynchronously: the failure shows at the synchronization */
	ck_acl(aclrtCreateStream(&s));
	ck_acl(aclrtCreateEvent(&ev));
	ck_acl(aclmdlExecuteAsync(id, in, out, s));
	ck_acl(aclrtRecordEvent(ev, s));
	ck_acl_err(aclrtSynchronizeEvent(ev), ACL_ERROR_RT_FAILURE, "wait_flag");
	ck_acl_err(aclrtQueryEvent(ev, &st), ACL_ERROR_RT_FAILURE, "will never fire");
	ck_assert_int_eq(st, ACL_EVENT_STATUS_NOT_READY);

	/* the device works on */
	ck_acl(aclrtMemcpy(din, 240, x, 240, ACL_MEMCPY_HOST_TO_DEVICE));
	ck_acl(aclrtMemcpy(y, 240, din, 240, ACL_MEMCPY_DEVICE_TO_HOST));
	ck_assert(y[0] == 1.0f);
	ck_acl(aclrtRecordEvent(ev, s));
	ck_acl(aclrtSynchronizeEvent(ev));
	destroy_dataset(in);
	destroy_dataset(out);
	stop();
}
END_TEST

/* --- callbacks ------------------------------------------------------------ */

static void sleep_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&t, NULL);
}

struct cb_log {
	int order[8];
	atomic_int n;
	const float *watch; /* the host buffer a callback reads */
	float seen[8];
	atomic_int host_returned; /* the host thread is past its synchronization */
	int saw_host_returned[8];
};

struct cb_arg {
	struct cb_log *log;
	int id;
	int wait_for_host; /* wait (2 s at most) for the host to be past its sync */
};

static void cb_record(void *user)
{
	struct cb_arg *a = user;
	if (a->wait_for_host)
		for (int i = 0; i < 200 && !atomic_load(&a->log->host_returned); i++)
			sleep_us(10000);
	int k = atomic_load(&a->log->n);
	a->log->order[k] = a->id;
	a->log->seen[k] = a->log->watch ? a->log->watch[0] : 0;
	a->log->saw_host_returned[k] = atomic_load(&a->log->host_returned);
	atomic_store(&a->log->n, k + 1);
}

/* Misuse of the four calls; each returns ACL's code and a message. */
START_TEST(test_callback_errors)
{
	aclrtStream s, dead;
	struct cb_log log = { 0 };
	struct cb_arg a = { &log, 1, 0 };
	uint64_t self = (uint64_t)pthread_self();

	ck_assert_int_eq(aclrtProcessReport(10), ACL_ERROR_UNINITIALIZE);
	start();
	ck_assert_int_eq(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
	ck_assert_int_eq(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
	ck_acl(aclrtCreateStream(&s));
	ck_acl_err(aclrtLaunchCallback(cb_record, &a, ACL_CALLBACK_BLOCK, s),
		   ACL_ERROR_RT_STREAM_NO_CB_REG, "no thread is subscribed");
	ck_acl(aclrtSubscribeReport(self, s));
	ck_acl_err(aclrtSubscribeReport(self, s), ACL_ERROR_RT_STREAM_SUBSCRIBE,
		   "already has a report thread");
	ck_acl_err(aclrtSubscribeReport(self + 1, s), ACL_ERROR_RT_STREAM_SUBSCRIBE,
		   "one stream, one thread");
	ck_acl_err(aclrtLaunchCallback(NULL, &a, ACL_CALLBACK_BLOCK, s), ACL_ERROR_INVALID_PARAM,
		   "fn is NULL");
	ck_acl_err(aclrtSubscribeReport(0, NULL), ACL_ERROR_INVALID_PARAM, "threadId is 0");
	ck_acl_err(aclrtLaunchCallback(cb_record, &a, (aclrtCallbackBlockType)5, s),
		   ACL_ERROR_INVALID_PARAM, "blockType 5");
	ck_acl_err(aclrtUnSubscribeReport(self + 1, s), ACL_ERROR_RT_STREAM_SUBSCRIBE,
		   "is not subscribed");
	ck_acl_err(aclrtUnSubscribeReport(self, NULL), ACL_ERROR_RT_STREAM_SUBSCRIBE,
		   "is not subscribed");
	/* a destroyed stream is a stale handle for all of them */
	ck_acl(aclrtCreateStream(&dead));
	ck_acl(aclrtSubscribeReport(self, dead));
	ck_acl(aclrtDestroyStream(dead));
	ck_acl_err(aclrtLaunchCallback(cb_record, &a, ACL_CALLBACK_NO_BLOCK, dead),
		   ACL_ERROR_INVALID_RESOURCE_HANDLE, "not a live stream");
	ck_acl_err(aclrtSubscribeReport(self, dead), ACL_ERROR_INVALID_RESOURCE_HANDLE,
		   "not a live stream");
	ck_acl_err(aclrtUnSubscribeReport(self, dead), ACL_ERROR_INVALID_RESOURCE_HANDLE,
		   "not a live stream");
	/* nothing launched: waiting times out */
	ck_assert_int_eq(aclrtProcessReport(20), ACL_ERROR_RT_REPORT_TIMEOUT);
	ck_acl(aclrtUnSubscribeReport(self, s));
	ck_assert_int_eq(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
	ck_assert_int_eq(atomic_load(&log.n), 0);
	ck_assert_str_eq(aclGetErrorString(ACL_ERROR_RT_REPORT_TIMEOUT),
			 "ACL_ERROR_RT_REPORT_TIMEOUT (no callback due within the timeout)");
	stop();
	ck_assert_int_eq(aclrtProcessReport(10), ACL_ERROR_UNINITIALIZE);
}
END_TEST

/* One thread, NO_BLOCK: callbacks are due once a synchronization has run
 * the work before them, and come in device order: B (an empty stream)
 * before A and C (behind a 4 MB copy), A before C (stream order); A sees
 * the copy's data. */
START_TEST(test_callback_order)
{
	enum { N = 1 << 20 };
	static float host[N], back[N];
	void *dev;
	aclrtStream s1, s2;
	struct cb_log log = { .watch = back };
	struct cb_arg a = { &log, 1, 0 }, b = { &log, 2, 0 }, c = { &log, 3, 0 };
	uint64_t self = (uint64_t)pthread_self();

	for (int i = 0; i < N; i++)
		host[i] = 42.0f;
	start();
	ck_acl(aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtCreateStream(&s1));
	ck_acl(aclrtCreateStream(&s2));
	ck_acl(aclrtSubscribeReport(self, s1));
	ck_acl(aclrtSubscribeReport(self, s2));
	ck_acl(aclrtMemcpyAsync(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, s1));
	ck_acl(aclrtMemcpyAsync(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST, s1));
	ck_acl(aclrtLaunchCallback(cb_record, &a, ACL_CALLBACK_NO_BLOCK, s1));
	ck_acl(aclrtLaunchCallback(cb_record, &b, ACL_CALLBACK_NO_BLOCK, s2));
	ck_acl(aclrtLaunchCallback(cb_record, &c, ACL_CALLBACK_NO_BLOCK, s1));
	/* not reached yet: nothing has been simulated */
	ck_assert_int_eq(aclrtProcessReport(20), ACL_ERROR_RT_REPORT_TIMEOUT);
	ck_assert_int_eq(atomic_load(&log.n), 0);
	ck_acl(aclrtSynchronizeDevice());
	ck_assert_int_eq(atomic_load(&log.n), 0); /* they run in ProcessReport only */
	for (int i = 0; i < 3; i++)
		ck_acl(aclrtProcessReport(100));
	ck_assert_int_eq(aclrtProcessReport(20), ACL_ERROR_RT_REPORT_TIMEOUT);
	ck_assert_int_eq(atomic_load(&log.n), 3);
	ck_assert_int_eq(log.order[0], 2);
	ck_assert_int_eq(log.order[1], 1);
	ck_assert_int_eq(log.order[2], 3);
	ck_assert(log.seen[1] == 42.0f); /* A ran after the copy back */
	/* a BLOCK callback due to the synchronizing thread itself is not waited
	 * for (it could never run): ProcessReport runs it afterwards */
	ck_acl(aclrtLaunchCallback(cb_record, &a, ACL_CALLBACK_BLOCK, s2));
	ck_acl(aclrtSynchronizeStream(s2));
	ck_acl(aclrtProcessReport(100));
	ck_assert_int_eq(atomic_load(&log.n), 4);
	/* unsubscribing drops what has not run */
	ck_acl(aclrtLaunchCallback(cb_record, &b, ACL_CALLBACK_NO_BLOCK, s2));
	ck_acl(aclrtUnSubscribeReport(self, s2));
	ck_acl(aclrtSynchronizeDevice());
	ck_acl(aclrtLaunchCallback(cb_record, &c, ACL_CALLBACK_NO_BLOCK, s1));
	ck_acl(aclrtUnSubscribeReport(self, s1));
	ck_assert_int_eq(aclrtProcessReport(20), ACL_ERROR_RT_THREAD_SUBSCRIBE);
	ck_assert_int_eq(atomic_load(&log.n), 4);
	ck_acl(aclrtFree(dev));
	stop();
}
END_TEST

struct reporter {
	pthread_t t;
	atomic_int stop;
	atomic_int last; /* the last ProcessReport result other than a timeout */
};

static void *report_loop(void *p)
{
	struct reporter *r = p;
	while (!atomic_load(&r->stop)) {
		aclError e = aclrtProcessReport(20);
		if (e != ACL_ERROR_RT_REPORT_TIMEOUT)
			atomic_store(&r->last, e);
		if (e == ACL_ERROR_RT_THREAD_SUBSCRIBE || e == ACL_ERROR_UNINITIALIZE)
			sleep_us(1000);
	}
	return NULL;
}

/* A report thread, as ACL programs have one: a synchronization that makes
 * a BLOCK callback due returns after it has run; one that makes a NO_BLOCK
 * callback due does not wait for it (the callback waits for the host to be
 * past its synchronization, and sees it). */
START_TEST(test_callback_thread)
{
	static float host[256], back[256];
	void *dev;
	aclrtStream s;
	struct cb_log log = { .watch = back };
	struct cb_arg blk = { &log, 1, 0 }, nob = { &log, 2, 1 };
	struct reporter r = { 0 };

	for (int i = 0; i < 256; i++)
		host[i] = 7.0f;
	start();
	ck_assert_int_eq(pthread_create(&r.t, NULL, report_loop, &r), 0);
	ck_acl(aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
	ck_acl(aclrtCreateStream(&s));
	ck_acl(aclrtSubscribeReport((uint64_t)r.t, s));
	ck_acl(aclrtMemcpyAsync(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, s));
	ck_acl(aclrtMemcpyAsync(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST, s));
	ck_acl(aclrtLaunchCallback(cb_record, &blk, ACL_CALLBACK_BLOCK, s));
	ck_acl(aclrtSynchronizeStream(s));
	ck_assert_int_eq(atomic_load(&log.n), 1); /* ran before the sync returned */
	ck_assert(log.seen[0] == 7.0f);
	ck_assert_int_eq(log.saw_host_returned[0], 0);

	ck_acl(aclrtLaunchCallback(cb_record, &nob, ACL_CALLBACK_NO_BLOCK, s));
	ck_acl(aclrtSynchronizeStream(s));
	atomic_store(&log.host_returned, 1);
	for (int i = 0; i < 300 && atomic_load(&log.n) < 2; i++)
		sleep_us(10000);
	ck_assert_int_eq(atomic_load(&log.n), 2);
	ck_assert_int_eq(log.saw_host_returned[1], 1); /* the sync did not wait for it */
	ck_acl(aclrtUnSubscribeReport((uint64_t)r.t, s));
	ck_acl(aclrtFree(dev));
	stop(); /* with the thread still polling: it gets codes, not a crash */
	for (int i = 0; i < 300 && atomic_load(&r.last) != ACL_ERROR_UNINITIALIZE; i++)
		sleep_us(10000);
	atomic_store(&r.stop, 1);
	ck_assert_int_eq(pthread_join(r.t, NULL), 0);
	ck_assert_int_eq(atomic_load(&r.last), ACL_ERROR_UNINITIALIZE);
}
END_TEST

struct waiter {
	atomic_int go; /* subscribed: start waiting */
	atomic_int started;
	aclError got;
};

static void *report_forever(void *p)
{
	struct waiter *w = p;
	while (!atomic_load(&w->go))
		sleep_us(1000);
	atomic_store(&w->started, 1);
	w->got = aclrtProcessReport(-1);
	return NULL;
}

/* A report thread waiting without a limit returns when the device goes. */
START_TEST(test_callback_finalize)
{
	aclrtStream s;
	pthread_t t;
	struct waiter w = { .got = ACL_SUCCESS };

	start();
	ck_acl(aclrtCreateStream(&s));
	ck_assert_int_eq(pthread_create(&t, NULL, report_forever, &w), 0);
	ck_acl(aclrtSubscribeReport((uint64_t)t, s));
	atomic_store(&w.go, 1);
	while (!atomic_load(&w.started))
		sleep_us(1000);
	sleep_us(50000); /* inside its wait by now (if not, it returns at once: same codes) */
	stop();
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_msg(w.got == ACL_ERROR_RT_THREAD_SUBSCRIBE || w.got == ACL_ERROR_UNINITIALIZE,
		      "aclrtProcessReport returned %d", (int)w.got);
}
END_TEST

static Suite *acl_suite(void)
{
	Suite *s = suite_create("acl");
	TCase *misuse = tcase_create("misuse");
	TCase *work = tcase_create("work");

	tcase_add_checked_fixture(misuse, tmp_setup, tmp_teardown);
	tcase_add_checked_fixture(work, tmp_setup, tmp_teardown);
	tcase_set_timeout(misuse, 60);
	tcase_set_timeout(work, 120);
	tcase_add_test(misuse, test_before_init);
	tcase_add_test(misuse, test_init_and_device);
	tcase_add_test(misuse, test_config_errors);
	tcase_add_test(misuse, test_bad_handles);
	tcase_add_test(misuse, test_memcpy_errors);
	tcase_add_test(misuse, test_error_strings);
	tcase_add_test(misuse, test_model_files);
	tcase_add_test(misuse, test_callback_errors);
	tcase_add_test(work, test_config);
	tcase_add_test(work, test_roundtrip);
	tcase_add_test(work, test_streams_and_events);
	tcase_add_test(work, test_model);
	tcase_add_test(work, test_simulation_failure);
	tcase_add_test(work, test_profiling);
	tcase_add_test(work, test_callback_order);
	tcase_add_test(work, test_callback_thread);
	tcase_add_test(work, test_callback_finalize);
	suite_add_tcase(s, misuse);
	suite_add_tcase(s, work);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(acl_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
