#!/bin/sh
# Performance of the generated code: ResNet-50 at batch 1 and 16 on Ascend910
# and Ascend310P3 (timing mode: the same cycles as with arithmetic).  Prints
# the first and warm latency, throughput, roofline efficiency, the cube
# utilization (mac_ratio) of the convolution with the most flops (the longest
# roofline time would pick a memory-bound Conv+Add, whose cube idles by
# design), and the compile time (CPU seconds of simatc, which a busy machine
# does not inflate).  README.md and docs/compiler.md quote it.
# usage: bench/perf_models.sh BUILD_DIR [WORK_DIR]
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d)}
export DAVINCI_SOC_DIR="$src/sim/soc"
/usr/bin/python3 "$src/tests/export_models.py" "$work" resnet50:1,16 > /dev/null
printf '%-12s %-6s %6s %12s %12s %10s %9s %14s %10s\n' soc batch tasks first_us warm_us \
	images/s roofline "big-conv mac%" compile_s
for soc in Ascend910 Ascend310P3; do
	for b in 1 16; do
		/usr/bin/time -f "%U %S" -o "$work/time.txt" "$build/simatc" \
			--model="$work/resnet50_b$b/model.onnx" --framework=5 \
			--output="$work/r50_${soc}_$b" --soc_version=$soc > /dev/null
		"$build/simrun" --soc $soc "$work/r50_${soc}_$b.om" --mode timing --loop 3 --json \
			> "$work/run.json"
		/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
conv = max((t for t in d["tasks"] if t["type"].startswith("Conv")), key=lambda t: t["flops"])
print("%-12s %-6s %6d %12.1f %12.1f %10.1f %9.3f %14.1f %10.1f" % (d["soc"], sys.argv[2],
      len(d["tasks"]), d["first_latency_us"], d["warm_latency_us"], d["throughput_fps"],
      d["roofline_efficiency"], 100 * conv["mac_ratio"], float(sys.argv[3])))
' "$work/run.json" "$b" "$(awk '{print $1 + $2}' "$work/time.txt")"
	done
done
