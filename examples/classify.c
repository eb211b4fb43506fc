/* classify.c: an image classifier written the way the AscendCL samples are
 * (init, device, stream, load the model, describe it, device buffers,
 * copy in, execute, copy out, post-process, release), on the simulator's
 * ACL-shaped API.  Only the include, the link line and the two
 * aclsimGetDeviceTimeUs calls differ from what runs on a real Ascend.
 *
 * usage: classify MODEL.om INPUT.bin [ACL_CONFIG]
 *   INPUT.bin  the model's one input as raw little-endian float32 (e.g. a
 *              normalized 1x3xHxW image), exactly its size
 *   ACL_CONFIG passed to aclInit (see acl.h): chooses the SoC
 * Prints the top-5 classes of the model's one output (logits, softmaxed
 * here) and the simulated time of the execution. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"

#define TOPK 5

/* Everything the sample owns, released in reverse by release(). */
struct sample {
	int inited, device_set;
	aclrtStream stream;
	uint32_t model_id;
	int model_loaded;
	aclmdlDesc *desc;
	aclmdlDataset *input, *output;
	void *in_dev, *out_dev;
	size_t in_size, out_size;
	float *in_host, *out_host;
};

/* Report a failed call with ACL's recent error message; 1 if it failed. */
static int failed(aclError ret, const char *what)
{
	if (ret == ACL_SUCCESS)
		return 0;
	const char *msg = aclGetRecentErrMsg();
	fprintf(stderr, "classify: %s failed: %d %s\n  %s\n", what, (int)ret,
		aclGetErrorString(ret), msg ? msg : "");
	return 1;
}

static void *read_file(const char *path, size_t want)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return NULL;
	}
	void *buf = malloc(want + 1);
	size_t n = buf ? fread(buf, 1, want + 1, f) : 0;
	fclose(f);
	if (n != want) {
		fprintf(stderr, "classify: %s holds %s%zu bytes, the model's input is %zu\n", path,
			n > want ? "more than " : "", n > want ? want : n, want);
		free(buf);
		return NULL;
	}
	return buf;
}

static int init_resource(struct sample *s, const char *config)
{
	if (failed(aclInit(config), "aclInit"))
		return -1;
	s->inited = 1;
	if (failed(aclrtSetDevice(0), "aclrtSetDevice"))
		return -1;
	s->device_set = 1;
	if (failed(aclrtCreateStream(&s->stream), "aclrtCreateStream"))
		return -1;
	aclrtRunMode mode;
	if (failed(aclrtGetRunMode(&mode), "aclrtGetRunMode"))
		return -1;
	return 0;
}

/* One device buffer in a new dataset. */
static int make_dataset(aclmdlDataset **ds, void *dev, size_t size)
{
	*ds = aclmdlCreateDataset();
	if (!*ds) {
		failed(ACL_ERROR_BAD_ALLOC, "aclmdlCreateDataset");
		return -1;
	}
	aclDataBuffer *b = aclCreateDataBuffer(dev, size);
	if (!b) {
		failed(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer");
		return -1;
	}
	if (failed(aclmdlAddDatasetBuffer(*ds, b), "aclmdlAddDatasetBuffer")) {
		aclDestroyDataBuffer(b);
		return -1;
	}
	return 0;
}

static int load_model(struct sample *s, const char *path)
{
	if (failed(aclmdlLoadFromFile(path, &s->model_id), "aclmdlLoadFromFile"))
		return -1;
	s->model_loaded = 1;
	s->desc = aclmdlCreateDesc();
	if (!s->desc || failed(aclmdlGetDesc(s->desc, s->model_id), "aclmdlGetDesc"))
		return -1;
	if (aclmdlGetNumInputs(s->desc) != 1 || aclmdlGetNumOutputs(s->desc) != 1) {
		fprintf(stderr, "classify: the model must have one input and one output (%zu, %zu)\n",
			aclmdlGetNumInputs(s->desc), aclmdlGetNumOutputs(s->desc));
		return -1;
	}
	if (aclmdlGetInputDataType(s->desc, 0) != ACL_FLOAT ||
	    aclmdlGetOutputDataType(s->desc, 0) != ACL_FLOAT) {
		fprintf(stderr, "classify: the model's input and output must be float32\n");
		return -1;
	}
	aclmdlIODims in, out;
	if (failed(aclmdlGetInputDims(s->desc, 0, &in), "aclmdlGetInputDims") ||
	    failed(aclmdlGetOutputDims(s->desc, 0, &out), "aclmdlGetOutputDims"))
		return -1;
	printf("model %s: input '%s' [", path, in.name);
	for (size_t i = 0; i < in.dimCount; i++)
		printf("%s%lld", i ? "," : "", (long long)in.dims[i]);
	printf("], output '%s' [", out.name);
	for (size_t i = 0; i < out.dimCount; i++)
		printf("%s%lld", i ? "," : "", (long long)out.dims[i]);
	printf("]\n");

	s->in_size = aclmdlGetInputSizeByIndex(s->desc, 0);
	s->out_size = aclmdlGetOutputSizeByIndex(s->desc, 0);
	if (failed(aclrtMalloc(&s->in_dev, s->in_size, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc") ||
	    failed(aclrtMalloc(&s->out_dev, s->out_size, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc"))
		return -1;
	if (make_dataset(&s->input, s->in_dev, s->in_size) ||
	    make_dataset(&s->output, s->out_dev, s->out_size))
		return -1;
	return 0;
}

/* The top-k indices of v[0..n) by value, ties to the lower index: k
 * passes of selection (no sort of what may be 1000 classes). */
static void top_k(const float *v, int n, int *idx, int k)
{
	for (int t = 0; t < k; t++) {
		int best = -1;
		for (int i = 0; i < n; i++) {
			int taken = 0;
			for (int u = 0; u < t; u++)
				taken |= idx[u] == i;
			if (!taken && (best < 0 || v[i] > v[best]))
				best = i;
		}
		idx[t] = best;
	}
}

static int infer(struct sample *s, const char *input_path)
{
	s->in_host = read_file(input_path, s->in_size);
	if (!s->in_host)
		return -1;
	if (failed(aclrtMemcpy(s->in_dev, s->in_size, s->in_host, s->in_size,
			       ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy"))
		return -1;

	double t0, t1;
	if (failed(aclsimGetDeviceTimeUs(&t0), "aclsimGetDeviceTimeUs") ||
	    failed(aclmdlExecute(s->model_id, s->input, s->output), "aclmdlExecute") ||
	    failed(aclsimGetDeviceTimeUs(&t1), "aclsimGetDeviceTimeUs"))
		return -1;

	s->out_host = malloc(s->out_size);
	if (!s->out_host) {
		fprintf(stderr, "classify: out of memory\n");
		return -1;
	}
	aclDataBuffer *ob = aclmdlGetDatasetBuffer(s->output, 0);
	if (failed(aclrtMemcpy(s->out_host, s->out_size, aclGetDataBufferAddr(ob),
			       aclGetDataBufferSizeV2(ob), ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy"))
		return -1;

	/* softmax over the logits, max subtracted for range */
	int n = (int)(s->out_size / sizeof(float));
	const float *logit = s->out_host;
	float mx = logit[0];
	for (int i = 1; i < n; i++)
		mx = logit[i] > mx ? logit[i] : mx;
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += exp((double)logit[i] - mx);
	int k = n < TOPK ? n : TOPK, idx[TOPK];
	top_k(logit, n, idx, k);
	printf("top-%d of %d classes:\n", k, n);
	for (int t = 0; t < k; t++)
		printf("  #%d class %d p=%.6f logit=%.4f\n", t + 1, idx[t],
		       exp((double)logit[idx[t]] - mx) / sum, (double)logit[idx[t]]);
	printf("aclmdlExecute: %.2f us simulated\n", t1 - t0);
	return 0;
}

static void destroy_dataset(aclmdlDataset *ds)
{
	if (!ds)
		return;
	for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); i++)
		aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i));
	aclmdlDestroyDataset(ds);
}

static int release(struct sample *s)
{
	int bad = 0;
	destroy_dataset(s->input);
	destroy_dataset(s->output);
	if (s->in_dev)
		bad |= failed(aclrtFree(s->in_dev), "aclrtFree");
	if (s->out_dev)
		bad |= failed(aclrtFree(s->out_dev), "aclrtFree");
	if (s->desc)
		bad |= failed(aclmdlDestroyDesc(s->desc), "aclmdlDestroyDesc");
	if (s->model_loaded)
		bad |= failed(aclmdlUnload(s->model_id), "aclmdlUnload");
	if (s->stream)
		bad |= failed(aclrtDestroyStream(s->stream), "aclrtDestroyStream");
	if (s->device_set)
		bad |= failed(aclrtResetDevice(0), "aclrtResetDevice");
	if (s->inited)
		bad |= failed(aclFinalize(), "aclFinalize");
	free(s->in_host);
	free(s->out_host);
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s MODEL.om INPUT.bin [ACL_CONFIG]\n", argv[0]);
		return 2;
	}
	struct sample s;
	memset(&s, 0, sizeof s);
	int rc = init_resource(&s, argc > 3 ? argv[3] : NULL) || load_model(&s, argv[1]) ||
		 infer(&s, argv[2]);
	rc |= release(&s) != 0;
	return rc ? 1 : 0;
}
