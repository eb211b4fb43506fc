#!/usr/bin/env bash
# bench/perf_quant.sh BUILD_DIR [MODELS]: simquant on torchvision models
# (tests/export_models.py: random weights, randomised BatchNorm statistics),
# each calibration algorithm x per-channel / per-tensor weights; the output
# SQNR of the QDQ model against the fp32 model, both run in ONNX Runtime
# (tests/ort_run.js) on an input that was not in the calibration set, and
# the SQNR of the simulator's int8 run of the QDQ model (simatc + simrun on
# Ascend310P3) against the same fp32 reference.
# MODELS defaults to "resnet50 mobilenet_v2"; CALIB_COUNT (default 2) sets.
set -euo pipefail
build=$(cd "${1:?usage: perf_quant.sh BUILD_DIR [MODELS]}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
models=${2:-resnet50 mobilenet_v2}
calib=${CALIB_COUNT:-2}
[ -d "$src/tests/ort/node_modules/onnxruntime-node" ] ||
	{ echo "needs ONNX Runtime: cd tests/ort && npm ci --ignore-scripts" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/perf_quant-XXXXXX")
trap 'rm -rf "$work"' EXIT
sqnr() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys, numpy as np, onnx, onnx.numpy_helper as h
def rd(p):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read())
    return h.to_array(t).astype(np.float64)
a, b = rd(sys.argv[1]), rd(sys.argv[2])
print("%.2f" % (10 * np.log10((a * a).sum() / ((a - b) ** 2).sum())))
PY
}
echo "| model | calibration | weights | SQNR vs fp32, ORT (dB) | SQNR vs fp32, simulator int8 (dB) | simquant wall time (s) |"
echo "|---|---|---|---|---|---|"
for m in $models; do
	/usr/bin/python3 "$src/tests/export_models.py" "$work" "$m:1" >/dev/null
	d="$work/${m}_b1"
	node "$src/tests/ort_run.js" "$d/model.onnx" "$d/test_data_set_0" "$d/ref"
	for alg in minmax percentile entropy; do
		for g in per_channel per_tensor; do
			t0=$(date +%s.%N)
			"$build/simquant" --model="$d/model.onnx" --output="$d/q.onnx" \
				--calib_count="$calib" --seed=7 --calibration="$alg" \
				--weight_granularity="$g" >/dev/null
			t1=$(date +%s.%N)
			node "$src/tests/ort_run.js" "$d/q.onnx" "$d/test_data_set_0" "$d/out"
			"$build/simatc" --model="$d/q.onnx" --framework=5 --output="$d/q" \
				--soc_version=Ascend310P3 >/dev/null
			mkdir -p "$d/sim"
			"$build/simrun" --soc Ascend310P3 "$d/q.om" --input-dir "$d/test_data_set_0" \
				--output-dir "$d/sim" >/dev/null
			printf '| %s | %s | %s | %s | %s | %.0f |\n' "$m" "$alg" "$g" \
				"$(sqnr "$d/ref/output_0.pb" "$d/out/output_0.pb")" \
				"$(sqnr "$d/ref/output_0.pb" "$d/sim/output_0.pb")" "$(echo "$t1 - $t0" | bc)"
		done
	done
done
