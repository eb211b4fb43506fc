/* acl_sample.c: a model-inference sample written against ACL alone, as
 * an application for a real Ascend is: it includes "acl/acl.h", calls
 * nothing of the simulator's own, and builds against the installed SDK
 *
 *     cc acl_sample.c $(pkg-config --cflags --libs davinci-acl) -o acl_sample
 *
 * (tests/sdk_install.sh does exactly that, after make install DESTDIR=).
 *
 * usage: acl_sample MODEL.om INPUT.bin
 *   INPUT.bin  the model's first input, raw, exactly its size
 * Prints the chip, the model's first output's top-5 float32 values as
 * "#k class i value v", and exits non-zero on any failed call. */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

#define CHECK(call)                                                                      \
	do {                                                                             \
		aclError ret_ = (call);                                                  \
		if (ret_ != ACL_SUCCESS) {                                               \
			const char *m_ = aclGetRecentErrMsg();                           \
			fprintf(stderr, "acl_sample: %s = %d: %s\n", #call, (int)ret_,   \
				m_ ? m_ : "");                                           \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

/* A device buffer of size bytes wrapped in a dataset of one buffer. */
static aclmdlDataset *device_dataset(size_t size, void **dev)
{
	CHECK(aclrtMalloc(dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
	aclmdlDataset *ds = aclmdlCreateDataset();
	aclDataBuffer *b = aclCreateDataBuffer(*dev, size);
	if (!ds || !b) {
		fprintf(stderr, "acl_sample: cannot create a dataset\n");
		exit(1);
	}
	CHECK(aclmdlAddDatasetBuffer(ds, b));
	return ds;
}

static void destroy_dataset(aclmdlDataset *ds)
{
	for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); i++) {
		aclDataBuffer *b = aclmdlGetDatasetBuffer(ds, i);
		CHECK(aclrtFree(aclGetDataBufferAddr(b)));
		CHECK(aclDestroyDataBuffer(b));
	}
	CHECK(aclmdlDestroyDataset(ds));
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: acl_sample MODEL.om INPUT.bin\n");
		return 2;
	}
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	aclrtContext ctx;
	CHECK(aclrtCreateContext(&ctx, 0));
	aclrtStream stream;
	CHECK(aclrtCreateStream(&stream));
	printf("chip %s\n", aclrtGetSocName());

	uint32_t id;
	CHECK(aclmdlLoadFromFile(argv[1], &id));
	aclmdlDesc *desc = aclmdlCreateDesc();
	CHECK(aclmdlGetDesc(desc, id));
	size_t in_size = aclmdlGetInputSizeByIndex(desc, 0);
	size_t out_size = aclmdlGetOutputSizeByIndex(desc, 0);

	void *host;
	CHECK(aclrtMallocHost(&host, in_size > out_size ? in_size : out_size));
	FILE *f = fopen(argv[2], "rb");
	size_t got = f ? fread(host, 1, in_size, f) : 0;
	if (f)
		fclose(f);
	if (got != in_size) {
		fprintf(stderr, "acl_sample: %s: read %zu bytes, the input is %zu\n", argv[2], got,
			in_size);
		return 1;
	}
	void *in_dev, *out_dev;
	aclmdlDataset *in = device_dataset(in_size, &in_dev);
	aclmdlDataset *out = device_dataset(out_size, &out_dev);

	/* the asynchronous path: copy in, execute, copy out on one stream */
	CHECK(aclrtMemcpyAsync(in_dev, in_size, host, in_size, ACL_MEMCPY_HOST_TO_DEVICE, stream));
	CHECK(aclmdlExecuteAsync(id, in, out, stream));
	CHECK(aclrtMemcpyAsync(host, out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST,
			       stream));
	CHECK(aclrtSynchronizeStream(stream));

	const float *y = host;
	size_t n = out_size / sizeof(float);
	int taken[5] = { -1, -1, -1, -1, -1 };
	for (int k = 0; k < 5 && k < (int)n; k++) {
		int best = -1;
		for (size_t i = 0; i < n; i++) {
			int used = 0;
			for (int j = 0; j < k; j++)
				used |= taken[j] == (int)i;
			if (!used && (best < 0 || y[i] > y[best]))
				best = (int)i;
		}
		taken[k] = best;
		printf("#%d class %d value %.6f\n", k + 1, best, (double)y[best]);
	}

	destroy_dataset(in);
	destroy_dataset(out);
	CHECK(aclrtFreeHost(host));
	CHECK(aclmdlDestroyDesc(desc));
	CHECK(aclmdlUnload(id));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtDestroyContext(ctx));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return 0;
}
