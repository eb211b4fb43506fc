/* fuzz_onnx.c: libFuzzer harness for the ONNX importer (compiler/onnx_import.c),
 * on the fuzzer's buffer (external data would be looked for in /nonexistent). */
#include <stdint.h>

#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_graph g;
	char err[1024];
	if (cc_onnx_load_mem("/nonexistent/fuzz.onnx", data, size, &g, err, sizeof err) == 0)
		cc_graph_free(&g);
	return 0;
}
