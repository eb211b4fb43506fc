#!/bin/bash
# Validation against published throughput: every row of ascend.md section 4
# (the calibration set): ResNet-101 on one Ascend 310 chip, ResNet-50 (FP16 and
# INT8) and ResNet-18 on Ascend 310P3, the figures of Huawei ModelZoo-PyTorch
# READMEs (benchmark / ais_bench throughput).  Each point is exported with
# random weights (tests/export_models.py), an INT8 point quantized by simquant
# (one seeded calibration image: the cycles do not depend on the scales) with
# its published recipe's skipped layers and compiled with its ATC options
# (quant_args, atc_args below), compiled with simatc and run with simrun in
# timing mode.  Prints a markdown table
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

# model soc batch published-img/s precision [alone: run with no other point,
# for memory: ResNet-50 b64 needs ~4.3 GB both to compile and to run]
rows=$(grep -E -- "${ONLY:-.}" <<'EOF' || true
resnet101 Ascend310 1 247.9 fp16
resnet101 Ascend310 4 331.1 fp16
resnet101 Ascend310 8 371.9 fp16
resnet101 Ascend310 16 401.0 fp16
resnet101 Ascend310 32 370.5 fp16
resnet50 Ascend310P3 64 4250 fp16 alone
resnet50 Ascend310P3 1 4089 int8
resnet50 Ascend310P3 2 6323 int8
resnet50 Ascend310P3 4 9492 int8
resnet50 Ascend310P3 8 9403 int8
resnet50 Ascend310P3 16 7748 int8
resnet50 Ascend310P3 32 7020 int8
resnet50 Ascend310P3 64 12141 int8 alone
resnet18 Ascend310P3 1 2865 fp16
resnet18 Ascend310P3 4 6822 fp16
resnet18 Ascend310P3 8 9450 fp16
resnet18 Ascend310P3 16 9706 fp16
resnet18 Ascend310P3 32 9678 fp16
resnet18 Ascend310P3 64 9817 fp16
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

# a point's files: MODEL_SOC_bB (fp16) or MODEL_int8_SOC_bB
tagof() { # tagof MODEL SOC BATCH PRECISION
	if [ "$4" = int8 ]; then echo "$1_int8_$2_b$3"; else echo "$1_$2_b$3"; fi
}
# the ONNX model a point compiles: the export, or its QDQ model for int8
# (named for the recipe below, so that an earlier WORK's QDQ of another recipe
# is not reused)
onnxof() { # onnxof MODEL BATCH PRECISION
	if [ "$3" = int8 ]; then echo "$work/$1_b$2.pub.qdq.onnx"; else echo "$work/$1_b$2/model.onnx"; fi
}
# An INT8 row is built the way its published figure was: the README of the
# ResNet-50 INT8 row (ascend.md 4.3, ModelZoo-PyTorch
# ACL_PyTorch/built-in/cv/Resnet50_mlperf) quantizes with AMCT and a quant.cfg
# whose skip_layers keep fp16 the first conv, the four convs of the first
# bottleneck block (TF's conv2d_1..4: its projection shortcut and its three
# convs) and the classifier, and compiles with static AIPP (uint8 RGB input)
# and --enable_small_channel=1.  The same nodes in torchvision's export:
quant_args() { # quant_args MODEL
	case $1 in
	resnet50) echo "--skip_nodes=/conv1/Conv,/layer1/layer1.0/downsample/downsample.0/Conv,"`
		`"/layer1/layer1.0/conv1/Conv,/layer1/layer1.0/conv2/Conv,/layer1/layer1.0/conv3/Conv,"`
		`"/fc/Gemm" ;;
	esac
}
atc_args() { # atc_args MODEL PRECISION
	if [ "$1" = resnet50 ] && [ "$2" = int8 ]; then
		echo "--insert_op_conf=$src/bench/aipp_resnet50_int8.cfg --enable_small_channel=1"
	fi
}

# 2. every point: (quantize,) compile, then run; points in parallel, results
#    in files; SIMRUN_ARGS adds arguments to every simrun (bench/calibrate.py
#    passes --set runtime.KEY=VALUE this way)
point() { # point MODEL SOC BATCH PRECISION
	local m=$1 soc=$2 b=$3 prec=$4 tag rc
	tag=$(tagof "$m" "$soc" "$b" "$prec")
	read -r rc _ < "$work/export_$m.stat"
	if [ "$rc" != 0 ] || [ ! -f "$work/${m}_b$b/model.onnx" ]; then
		echo "export" > "$work/$tag.failed"
		return 0
	fi
	local onnx
	onnx=$(onnxof "$m" "$b" "$prec")
	if [ ! -f "$onnx" ]; then
		# shellcheck disable=SC2046 # the recipe's arguments, split on purpose
		timed "$work/$tag.quant.stat" "$work/$tag.quant.log" "$work/$tag.quant.log.err" \
			"$build/simquant" --model="$work/${m}_b$b/model.onnx" --output="$onnx" \
			--calib_count=1 --seed=7 $(quant_args "$m")
		read -r rc _ < "$work/$tag.quant.stat"
		if [ "$rc" != 0 ]; then
			rm -f "$onnx"
			echo "quantize" > "$work/$tag.failed"
			return 0
		fi
	fi
	if [ -z "${REUSE_OM:-}" ] || [ ! -f "$work/$tag.om" ]; then
		# shellcheck disable=SC2046 # the recipe's arguments, split on purpose
		timed "$work/$tag.compile.stat" "$work/$tag.compile.log" "$work/$tag.compile.log.err" \
			"$build/simatc" --model="$onnx" --framework=5 \
			--output="$work/$tag" --soc_version="$soc" $(atc_args "$m" "$prec")
	fi
	read -r rc _ < "$work/$tag.compile.stat"
	if [ "$rc" != 0 ]; then
		echo "compile" > "$work/$tag.failed"
		return 0
	fi
	# shellcheck disable=SC2206 # SIMRUN_ARGS is split on purpose
	local run=("$build/simrun" --soc "$soc" "$work/$tag.om" --mode timing --json --loop "$loop"
		${SIMRUN_ARGS:-})
	timed "$work/$tag.run.stat" "$work/$tag.json" "$work/$tag.run.err" "${run[@]}"
	read -r rc _ < "$work/$tag.run.stat"
	printf '%q ' "${run[@]}" > "$work/$tag.run.cmd"
	[ "$rc" = 0 ] || echo "simrun" > "$work/$tag.failed"
	return 0
}
while read -r m soc b _ prec alone; do
	tag=$(tagof "$m" "$soc" "$b" "$prec")
	rm -f "$work/$tag".{failed,run.stat,run.cmd,json,how}
	[ -n "${REUSE_OM:-}" ] || rm -f "$work/$tag".{compile.stat,om}
	echo "validation.sh: compiling and running $m $prec $soc batch $b" >&2
	if [ -n "$alone" ]; then
		wait
		point "$m" "$soc" "$b" "$prec" < /dev/null
	else
		throttle
		point "$m" "$soc" "$b" "$prec" < /dev/null &
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
: > "$work/rows.tsv" # for bench/calibrate.py: tag, model, soc, batch, precision, published
echo "| model | precision | SoC | batch | published img/s | simulated img/s | ratio sim/published | simulated latency ms |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
while read -r m soc b pub prec _; do
	tag=$(tagof "$m" "$soc" "$b" "$prec")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$m" "$soc" "$b" "$prec" "$pub" >> "$work/rows.tsv"
	if [ -f "$work/$tag.failed" ]; then
		failed=$((failed + 1))
		echo "| $(pretty "$m") | ${prec^^} | $soc | $b | $pub | $(cat "$work/$tag.failed") failed | — | — |"
		continue
	fi
	read -r fps lat how <<< "$("$py" -c "$parse" "$work/$tag.json" "$b")"
	echo "$how" > "$work/$tag.how"
	echo "| $(pretty "$m") | ${prec^^} | $soc | $b | $pub | $fps |" \
		"$(awk -v s="$fps" -v p="$pub" 'BEGIN {printf "%.2f", s / p}') | $lat |"
	echo "$fps $pub" >> "$work/ratios.txt.$$"
done <<< "$rows"
if [ -f "$work/ratios.txt.$$" ]; then
	awk '{e = $1 / $2 - 1; a += (e < 0 ? -e : e); if ((e < 0 ? -e : e) > w) w = (e < 0 ? -e : e); n++}
	     END {printf "\nMean absolute error over %d rows: %.1f%%; worst row %.1f%%.\n", n, 100 * a / n, 100 * w}' \
		"$work/ratios.txt.$$"
	rm -f "$work/ratios.txt.$$"
fi

echo
echo "Commands (DAVINCI_SOC_DIR=$DAVINCI_SOC_DIR${SIMRUN_ARGS:+; SIMRUN_ARGS=$SIMRUN_ARGS}):"
echo
for m in $models; do
	batches=$(awk -v m="$m" '$1 == m {print $3}' <<< "$rows" | awk '!seen[$0]++' | paste -s -d,)
	echo "- export $m: \`$py $src/tests/export_models.py $work $m:$batches\`"
done
while read -r m soc b _ prec _; do
	tag=$(tagof "$m" "$soc" "$b" "$prec")
	if [ "$prec" = int8 ]; then
		echo "- quantize $(pretty "$m") b$b: \`$build/simquant --model=$work/${m}_b$b/model.onnx" \
			"--output=$(onnxof "$m" "$b" int8) --calib_count=1 --seed=7 $(quant_args "$m")\`"
	fi
	a=$(atc_args "$m" "$prec")
	echo "- $(pretty "$m") ${prec^^} $soc b$b: \`$build/simatc --model=$(onnxof "$m" "$b" "$prec")" \
		"--framework=5 --output=$work/$tag --soc_version=$soc${a:+ $a}\`"
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
while read -r m soc b _ prec _; do
	tag=$(tagof "$m" "$soc" "$b" "$prec")
	for s in quant compile run; do
		[ -f "$work/$tag.$s.stat" ] || continue
		read -r rc t rss < "$work/$tag.$s.stat"
		echo "| $s $(pretty "$m") ${prec^^} $soc b$b | rc $rc | $t | $rss |"
	done
done <<< "$rows"

# the errors of the failed steps
while read -r m soc b _ prec _; do
	tag=$(tagof "$m" "$soc" "$b" "$prec")
	[ -f "$work/$tag.failed" ] || continue
	case $(cat "$work/$tag.failed") in
	export) log="$work/export_$m.err" ;;
	quantize) log="$work/$tag.quant.log.err" ;;
	compile) log="$work/$tag.compile.log.err"
		[ -s "$log" ] || log="$work/$tag.compile.log" ;;
	*) log="$work/$tag.run.err" ;;
	esac
	echo
	echo "$(pretty "$m") ${prec^^} $soc b$b: $(cat "$work/$tag.failed") failed; the end of $log:"
	echo '```'
	tail -n 20 "$log"
	echo '```'
done <<< "$rows"
[ "$failed" = 0 ]
