/* simquant: post-training int8 quantization of an fp32 ONNX model into a
 * QDQ ONNX model, calibrated on the simulator (quant/quant.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quant.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: simquant --model=FP32.onnx --output=QDQ.onnx [options]\n"
		"Calibrate on the simulator and write a QDQ ONNX model (QuantizeLinear /\n"
		"DequantizeLinear; symmetric int8; docs/quantization.md).\n\n"
		"  --model=FILE            the fp32 ONNX model\n"
		"  --output=FILE           the QDQ ONNX model to write\n"
		"  --calib_dir=DIR         calibration sets: DIR/test_data_set_*/input_N.pb or DIR/input_N.pb\n"
		"  --calib_count=N         without --calib_dir: N sets drawn from N(0,1) (default 4)\n"
		"  --seed=S                their seed (default 0)\n"
		"  --calibration=ALGO      minmax, percentile (the default) or entropy\n"
		"  --percentile=P          percentile of |x| for --calibration=percentile (default 99.999)\n"
		"  --weight_granularity=G  per_channel (default) or per_tensor\n"
		"  --skip_nodes=A,B        keep these nodes fp32\n"
		"  --skip_types=Gemm,...   keep nodes of these op types fp32\n"
		"  --auto_skip=N           keep fp32 the N nodes whose quantization alone hurts the\n"
		"                          output most (one compile and calibration run per node)\n"
		"  --residual=int8|fp32    a residual Add reads the residual through the Q/DQ pair of\n"
		"                          the int8 convs reading it (int8, the default) or fp32\n"
		"  --input_shape=\"name:1,3,224,224;...\"  fix dynamic input dimensions (as simatc)\n"
		"  --soc_version=SOC       the SoC the calibration is simulated on (default Ascend310P3)\n"
		"  --report=FILE.json      write the report as JSON (the text report goes to stdout)\n"
		"  --verbose               progress lines (shown anyway on a terminal) and each\n"
		"                          --auto_skip candidate's SQNR, on stderr\n");
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -1;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (tool_version(argc, argv, "simquant"))
		return 0;
	struct qt_options o = { .soc = "Ascend310P3", .calib_count = 4, .algo = QT_PERCENTILE,
				.percentile = 99.999, .gran = QT_PER_CHANNEL, .report = stdout,
				.progress = NULL };
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		char *eq = strchr(a, '=');
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
		size_t klen = eq ? (size_t)(eq - a) : strlen(a);
#define IS(k) (strlen(k) == klen && strncmp(a, k, klen) == 0)
		if (IS("--help") || IS("-h")) {
			usage(stdout);
			return 0;
		}
		if (IS("--verbose")) { /* the progress lines also off a terminal */
			o.progress = stderr;
			continue;
		}
		if (!v) {
			fprintf(stderr, "simquant: %s needs a value\n", a);
			return 2;
		}
		unsigned long long u;
		if (IS("--model"))
			o.model = v;
		else if (IS("--output"))
			o.output = v;
		else if (IS("--calib_dir"))
			o.calib_dir = v;
		else if (IS("--calib_count") || IS("--seed") || IS("--auto_skip")) {
			if (parse_uint(v, IS("--seed") ? ~0ull : 100000, &u)) {
				fprintf(stderr, "simquant: %.*s=%s: need a non-negative integer\n",
					(int)klen, a, v);
				return 2;
			}
			if (IS("--calib_count"))
				o.calib_count = (unsigned)u;
			else if (IS("--seed"))
				o.seed = u;
			else
				o.auto_skip = (unsigned)u;
		} else if (IS("--calibration")) {
			if (qt_algo_parse(v, &o.algo)) {
				fprintf(stderr, "simquant: --calibration=%s: need minmax, percentile "
						"or entropy\n", v);
				return 2;
			}
		} else if (IS("--percentile")) {
			char *end;
			o.percentile = strtod(v, &end);
			if (*end || !(o.percentile > 0 && o.percentile <= 100)) {
				fprintf(stderr, "simquant: --percentile=%s: need a number in (0, 100]\n",
					v);
				return 2;
			}
		} else if (IS("--weight_granularity")) {
			if (!strcmp(v, "per_channel"))
				o.gran = QT_PER_CHANNEL;
			else if (!strcmp(v, "per_tensor"))
				o.gran = QT_PER_TENSOR;
			else {
				fprintf(stderr, "simquant: --weight_granularity=%s: need per_channel "
						"or per_tensor\n", v);
				return 2;
			}
		} else if (IS("--residual")) {
			if (strcmp(v, "int8") && strcmp(v, "fp32")) {
				fprintf(stderr, "simquant: --residual=%s: need int8 or fp32\n", v);
				return 2;
			}
			o.fp32_residual = !strcmp(v, "fp32");
		} else if (IS("--skip_nodes"))
			o.skip_nodes = v;
		else if (IS("--skip_types"))
			o.skip_types = v;
		else if (IS("--input_shape"))
			o.input_shape = v;
		else if (IS("--soc_version"))
			o.soc = !strcmp(v, "Ascend910A") ? "Ascend910" : v;
		else if (IS("--report"))
			o.report_json = v;
		else {
			fprintf(stderr, "simquant: unknown option '%s' (try --help)\n", a);
			return 2;
		}
		if (!eq)
			i++;
	}
	if (!o.model || !o.output) {
		fprintf(stderr, "simquant: --model and --output are required (try --help)\n");
		return 2;
	}
	/* on a terminal, what it is doing (compiles, calibration sets); off
	 * one, only with --verbose, so logs stay clean */
	if (!o.progress && isatty(STDERR_FILENO))
		o.progress = stderr;
	char err[4096];
	if (qt_quantize(&o, err, sizeof err)) {
		fprintf(stderr, "simquant: %s\n", err);
		return 1;
	}
	printf("wrote %s\n", o.output);
	return 0;
}
