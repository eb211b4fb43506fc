#!/bin/bash
# Validation against published throughput: ResNet-101 on one Ascend 310 chip
# and ResNet-50 / ResNet-18 on Ascend 310P3, FP16, the figures of
# Huawei ModelZoo-PyTorch READMEs (benchmark / ais_bench throughput).  Each
# point is exported with random weights (tests/export_models.py), compiled
# with simatc and run with simrun in timing mode.  Prints a markdown table
# (model, SoC, batch, published and simulated img/s, their ratio, simulated
# latency), the exact commands, and the cost of every point.
#
# usage: bench/validation.sh BUILD_DIR [WORK_DIR]
#   WORK_DIR keeps the exports (reused when complete), the .om files and the
#   logs; a fresh temporary directory by default.
#   JOBS=N        parallel exports / points (default: nproc)
#   ONLY=REGEX    only the rows whose "model soc batch" matches (grep -E)
#
# Throughput is simrun's throughput_fps when its JSON has it (simrun --loop),
# else batch * 1e6 / latency_us; simrun is run without --loop if it rejects it.
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [WORK_DIR]" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
export DAVINCI_SOC_DIR="$src/sim/soc"
jobs=${JOBS:-$(nproc)}
py=/usr/bin/python3
loop=3

# model soc batch published-img/s [alone: run with no other point, for memory:
# ResNet-50 b64 needs ~4.3 GB both to compile and to run]
rows=$(grep -E -- "${ONLY:-.}" <<'EOF' || true
resnet101 Ascend310 1 247.9
resnet101 Ascend310 4 331.1
resnet101 Ascend310 8 371.9
resnet101 Ascend310 16 401.0
resnet50 Ascend310P3 64 4250 alone
resnet18 Ascend310P3 1 2865
resnet18 Ascend310P3 4 6822
resnet18 Ascend310P3 8 9450
resnet18 Ascend310P3 16 9706
resnet18 Ascend310P3 32 9678
resnet18 Ascend310P3 64 9817
EOF
)
if [ -z "$rows" ]; then
	echo "validation.sh: no row matches ONLY='${ONLY:-}'" >&2
	exit 2
fi

# wait until fewer than $jobs background jobs run
throttle() {
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n || true
	done
}

# timed STAT OUT ERR CMD...: run CMD, stdout to OUT, stderr to ERR; STAT gets
# "exit-status wall-seconds max-RSS-MB" (max RSS "-" without GNU time)
timed() {
	local stat=$1 out=$2 err=$3 rc=0 t0 t1 rss=-
	shift 3
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$stat.rss" "$@" > "$out" 2> "$err" || rc=$?
		rss=$(tail -n 1 "$stat.rss" | awk '{printf "%.0f", $1 / 1024}')
		rm -f "$stat.rss"
	else
		"$@" > "$out" 2> "$err" || rc=$?
	fi
	t1=$(date +%s.%N)
	echo "$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') $rss" > "$stat"
}

# 1. exports: one export_models.py per model (all its batches), in parallel;
#    a complete earlier export (output_0.pb is written last) is reused
models=$(awk '{print $1}' <<< "$rows" | awk '!seen[$0]++')
for m in $models; do
	batches=$(awk -v m="$m" '$1 == m {print $3}' <<< "$rows" | awk '!seen[$0]++')
	todo=
	for b in $batches; do
		[ -f "$work/${m}_b$b/test_data_set_0/output_0.pb" ] || todo="$todo${todo:+,}$b"
	done
	if [ -z "$todo" ]; then
		echo "0 0.0 - reused" > "$work/export_$m.stat"
		continue
	fi
	echo "validation.sh: exporting $m:$todo" >&2
	throttle
	timed "$work/export_$m.stat" "$work/export_$m.log" "$work/export_$m.err" \
		"$py" "$src/tests/export_models.py" "$work" "$m:$todo" < /dev/null &
done
wait

# 2. every point: compile, then run; points in parallel, results in files
point() { # point MODEL SOC BATCH
	local m=$1 soc=$2 b=$3 tag="$1_$2_b$3" rc
	read -r rc _ < "$work/export_$m.stat"
	if [ "$rc" != 0 ] || [ ! -f "$work/${m}_b$b/model.onnx" ]; then
		echo "export" > "$work/$tag.failed"
		return 0
	fi
	timed "$work/$tag.compile.stat" "$work/$tag.compile.log" "$work/$tag.compile.log.err" \
		"$build/simatc" --model="$work/${m}_b$b/model.onnx" --framework=5 \
		--output="$work/$tag" --soc_version="$soc"
	read -r rc _ < "$work/$tag.compile.stat"
	if [ "$rc" != 0 ]; then
		echo "compile" > "$work/$tag.failed"
		return 0
	fi
	local run=("$build/simrun" --soc "$soc" "$work/$tag.om" --mode timing --json --loop "$loop")
	timed "$work/$tag.run.stat" "$work/$tag.json" "$work/$tag.run.err" "${run[@]}"
	read -r rc _ < "$work/$tag.run.stat"
	if [ "$rc" != 0 ] && grep -q -e "--loop" "$work/$tag.run.err"; then
		run=("${run[@]:0:${#run[@]}-2}") # a simrun without --loop
		timed "$work/$tag.run.stat" "$work/$tag.json" "$work/$tag.run.err" "${run[@]}"
		read -r rc _ < "$work/$tag.run.stat"
	fi
	printf '%q ' "${run[@]}" > "$work/$tag.run.cmd"
	[ "$rc" = 0 ] || echo "simrun" > "$work/$tag.failed"
	return 0
}
while read -r m soc b _ alone; do
	rm -f "$work/${m}_${soc}_b$b".{failed,compile.stat,run.stat,run.cmd,json,om,how}
	echo "validation.sh: compiling and running $m $soc batch $b" >&2
	if [ -n "$alone" ]; then
		wait
		point "$m" "$soc" "$b" < /dev/null
	else
		throttle
		point "$m" "$soc" "$b" < /dev/null &
	fi
done <<< "$rows"
wait

# 3. the report, in row order
pretty() { # resnet101 -> ResNet-101
	case $1 in
	resnet*) echo "ResNet-${1#resnet}" ;;
	*) echo "$1" ;;
	esac
}
# prints "img/s latency_ms source" from simrun's JSON (the last JSON object
# if there are several)
parse='
import json, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError:
    d = None
    for line in text.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            pass
b = int(sys.argv[2])
lat = d.get("warm_latency_us", d["latency_us"])
if "throughput_fps" in d:
    fps, how = d["throughput_fps"], "throughput_fps"
else:
    fps, how = b * 1e6 / lat, "batch*1e6/latency_us"
print("%.1f %.3f %s" % (fps, lat / 1e3, how))
'
failed=0
echo "| model | SoC | batch | published img/s | simulated img/s | ratio sim/published | simulated latency ms |"
echo "|---|---|---:|---:|---:|---:|---:|"
while read -r m soc b pub _; do
	tag="${m}_${soc}_b$b"
	if [ -f "$work/$tag.failed" ]; then
		failed=$((failed + 1))
		echo "| $(pretty "$m") | $soc | $b | $pub | $(cat "$work/$tag.failed") failed | — | — |"
		continue
	fi
	read -r fps lat how <<< "$("$py" -c "$parse" "$work/$tag.json" "$b")"
	echo "$how" > "$work/$tag.how"
	echo "| $(pretty "$m") | $soc | $b | $pub | $fps |" \
		"$(awk -v s="$fps" -v p="$pub" 'BEGIN {printf "%.2f", s / p}') | $lat |"
done <<< "$rows"

echo
echo "Commands (DAVINCI_SOC_DIR=$DAVINCI_SOC_DIR):"
echo
for m in $models; do
	batches=$(awk -v m="$m" '$1 == m {print $3}' <<< "$rows" | awk '!seen[$0]++' | paste -s -d,)
	echo "- export $m: \`$py $src/tests/export_models.py $work $m:$batches\`"
done
while read -r m soc b _; do
	tag="${m}_${soc}_b$b"
	echo "- $(pretty "$m") $soc b$b: \`$build/simatc --model=$work/${m}_b$b/model.onnx" \
		"--framework=5 --output=$work/$tag --soc_version=$soc\`"
	if [ -f "$work/$tag.run.cmd" ]; then
		how=$(cat "$work/$tag.how" 2> /dev/null || echo "no result")
		echo "  then \`$(sed 's/ $//' "$work/$tag.run.cmd")\` (img/s from $how)"
	fi
done <<< "$rows"

echo
echo "Cost (wall seconds, max RSS MB; $jobs in parallel):"
echo
echo "| step | status | wall s | max RSS MB |"
echo "|---|---|---:|---:|"
for m in $models; do
	read -r rc t rss note < "$work/export_$m.stat"
	echo "| export $m | ${note:-rc $rc} | $t | $rss |"
done
while read -r m soc b _; do
	tag="${m}_${soc}_b$b"
	for s in compile run; do
		[ -f "$work/$tag.$s.stat" ] || continue
		read -r rc t rss < "$work/$tag.$s.stat"
		echo "| $s $(pretty "$m") $soc b$b | rc $rc | $t | $rss |"
	done
done <<< "$rows"

# the errors of the failed steps
while read -r m soc b _; do
	tag="${m}_${soc}_b$b"
	[ -f "$work/$tag.failed" ] || continue
	case $(cat "$work/$tag.failed") in
	export) log="$work/export_$m.err" ;;
	compile) log="$work/$tag.compile.log.err"
		[ -s "$log" ] || log="$work/$tag.compile.log" ;;
	*) log="$work/$tag.run.err" ;;
	esac
	echo
	echo "$(pretty "$m") $soc b$b: $(cat "$work/$tag.failed") failed; the end of $log:"
	echo '```'
	tail -n 20 "$log"
	echo '```'
done <<< "$rows"
[ "$failed" = 0 ]
