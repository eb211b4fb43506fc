#!/bin/sh
# Performance of the generated code: ResNet-50 at batch 1 and 16 on Ascend910
# and Ascend310P3 (timing mode: the same cycles as with arithmetic).  Prints
# latency, throughput, roofline efficiency, the cube utilization of the
# largest convolution, and the compile time.  docs/performance.md quotes it.
# usage: bench/perf_models.sh BUILD_DIR [WORK_DIR]
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d)}
export DAVINCI_SOC_DIR="$src/sim/soc"
/usr/bin/python3 "$src/tests/export_models.py" "$work" resnet50:1,16 > /dev/null
printf '%-12s %-6s %12s %12s %10s %12s %14s\n' soc batch latency_us images/s roofline \
	"big-conv cube%" compile_s
for soc in Ascend910 Ascend310P3; do
	for b in 1 16; do
		t0=$(date +%s.%N)
		"$build/simatc" --model="$work/resnet50_b$b/model.onnx" --framework=5 \
			--output="$work/r50_${soc}_$b" --soc_version=$soc > /dev/null
		t1=$(date +%s.%N)
		"$build/simrun" --soc $soc "$work/r50_${soc}_$b.om" --mode timing > "$work/run.txt"
		lat=$(sed -n 's/.*cycles (\([0-9.]*\) us).*/\1/p' "$work/run.txt" | head -n 1)
		eff=$(sed -n 's/^roofline efficiency \([0-9.]*\).*/\1/p' "$work/run.txt")
		# the convolution with the most multiply-adds: the largest roofline time
		cube=$(grep ' Conv' "$work/run.txt" | sort -k8 -n -r | head -n 1 | awk '{print $NF}')
		printf '%-12s %-6s %12s %12.1f %10s %12s %14.1f\n' $soc $b "$lat" \
			"$(echo "$b $lat" | awk '{print $1 / $2 * 1e6}')" "$eff" "$cube" \
			"$(echo "$t1 $t0" | awk '{print $1 - $2}')"
	done
done
