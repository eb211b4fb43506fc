/* fuzz_onnx.c: libFuzzer harness for the ONNX importer (compiler/onnx_import.c). */
#include "fuzz_file.h"
#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_graph g;
	char err[1024];
	char path[512];
	const char *p = fuzz_file(data, size, ".onnx", path, sizeof path);
	if (p && cc_onnx_load(p, &g, err, sizeof err) == 0)
		cc_graph_free(&g);
	return 0;
}
