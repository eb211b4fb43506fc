#!/bin/sh
# ResNet-50 int8 versus fp16 on Ascend310P3 at batch 1, 4 and 64 (timing mode:
# the same cycles as with arithmetic).  The fp16 model is
# tests/export_models.py's export (random weights); the int8 model is the QDQ
# model simquant makes of it (percentile calibration on one seeded set, which
# is enough for timing: the cycles do not depend on the scales; weights per
# channel; every Conv and the Linear layer quantized).  Prints the warm
# latency and throughput of each, the speedup, the int8 model's tasks and
# int8 layers (the compile report's precision list), the main-memory bytes
# its tasks move per image (the compile report's estimate), and next to them
# the published 310P3 int8 throughput of the MLPerf ResNet-50 (ascend.md 4.3).
# docs/quantization.md quotes it.
# usage: bench/perf_int8.sh BUILD_DIR [WORK_DIR]
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d)}
export DAVINCI_SOC_DIR="$src/sim/soc"
soc=Ascend310P3
/usr/bin/python3 "$src/tests/export_models.py" "$work" resnet50:1,4,64 > /dev/null
for b in 1 4 64; do
	"$build/simquant" --model="$work/resnet50_b$b/model.onnx" \
		--output="$work/resnet50_b$b.qdq.onnx" --calib_count=1 --seed=7 > /dev/null
done
printf '%-6s %11s %11s %10s %10s %8s %6s %6s %9s %14s\n' batch fp16_us int8_us fp16_img/s \
	int8_img/s speedup tasks int8 MB/image published_int8
for b in 1 4 64; do
	"$build/simatc" --model="$work/resnet50_b$b/model.onnx" --framework=5 \
		--output="$work/f16_$b" --soc_version=$soc > /dev/null
	"$build/simatc" --model="$work/resnet50_b$b.qdq.onnx" --framework=5 \
		--output="$work/i8_$b" --soc_version=$soc --report="$work/i8_$b.report.json" > /dev/null
	"$build/simrun" --soc $soc "$work/f16_$b.om" --mode timing --loop 2 --json > "$work/f16.json"
	"$build/simrun" --soc $soc "$work/i8_$b.om" --mode timing --loop 2 --json > "$work/i8.json"
	/usr/bin/python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))
q = json.load(open(sys.argv[2]))
pub = {"1": "4089", "4": "9492", "64": "12141"}[sys.argv[3]]
rep = json.load(open(sys.argv[4]))
int8 = sum(1 for p in rep["precision"] if p["precision"] == "int8")
print("%-6s %11.1f %11.1f %10.1f %10.1f %8.2f %6d %6s %9.1f %14s" % (sys.argv[3],
      f["warm_latency_us"], q["warm_latency_us"], f["throughput_fps"], q["throughput_fps"],
      f["warm_latency_us"] / q["warm_latency_us"], len(q["tasks"]),
      int8 if int8 else "-", rep["task_bytes"] / 1e6 / int(sys.argv[3]), pub))
' "$work/f16.json" "$work/i8.json" "$b" "$work/i8_$b.report.json"
done
