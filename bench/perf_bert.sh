#!/bin/sh
# Performance of the generated code for BERT-base (tests/export_bert.py):
# sequence 128 at batch 1 and 8 on Ascend910 and Ascend310P3, in timing mode
# (the same cycles as with arithmetic).  Prints latency and throughput, the
# share of device time in cube and vector kernels, roofline efficiency (the
# sum over tasks of max(flops/peak, bytes/bandwidth) over the simulated
# time), the cube utilization (mac_ratio) of the large GEMMs (QKV 768x2304,
# FFN 768x3072 and 3072x768) and the compile time (CPU seconds of simatc,
# which a busy machine does not inflate).  docs/transformers.md quotes it.
# usage: bench/perf_bert.sh BUILD_DIR [WORK_DIR]
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d)}
export DAVINCI_SOC_DIR="$src/sim/soc"
[ -f "$work/bert/model.onnx" ] ||
	/usr/bin/python3 "$src/tests/export_bert.py" "$work" 128:1 > /dev/null 2>&1
printf '%-12s %-5s %6s %11s %11s %9s %6s %6s %9s %22s %9s\n' soc batch tasks first_us warm_us \
	seq/s cube% vec% roofline "GEMM mac% (min/mean)" compile_s
for soc in Ascend910 Ascend310P3; do
	for b in 1 8; do
		/usr/bin/time -f "%U %S" -o "$work/time.txt" "$build/simatc" \
			--model="$work/bert/model.onnx" --framework=5 \
			--output="$work/bert_${soc}_$b" --soc_version=$soc \
			--input_shape="input_ids:$b,128" > /dev/null
		"$build/simrun" --soc $soc "$work/bert_${soc}_$b.om" --mode timing --loop 3 --json \
			> "$work/run.json"
		/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ks = [t for t in d["tasks"] if t.get("kind", "kernel") == "kernel" and "duration_us" in t]
cube = sum(t["duration_us"] for t in ks if t["type"].startswith(("MatMul", "Gemm")))
busy = sum(t["duration_us"] for t in ks)
big = [t for t in ks if t["type"].startswith(("MatMul", "Gemm")) and t["flops"] > 2 * 128 * 768 * 768 * int(sys.argv[2])]
mac = [100 * t["mac_ratio"] for t in big] or [0]
print("%-12s %-5s %6d %11.1f %11.1f %9.1f %6.1f %6.1f %9.3f %10.1f / %9.1f %9.1f" % (d["soc"],
      sys.argv[2], len(d["tasks"]), d["first_latency_us"], d["warm_latency_us"],
      d["throughput_fps"], 100 * cube / busy, 100 * (busy - cube) / busy,
      d["roofline_efficiency"], min(mac), sum(mac) / len(mac), float(sys.argv[3])))
' "$work/run.json" "$b" "$(awk '{print $1 + $2}' "$work/time.txt")"
	done
done
