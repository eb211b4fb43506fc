#!/bin/sh
# The what-if studies of docs/whatif.md, one command each: exports the model
# (torchvision, random weights) once, then runs simsweep (timing mode).
# usage: bench/whatif.sh STUDY BUILD_DIR [OUT_DIR]
#   STUDY   hbm      ResNet-50, Ascend910, batch 1 and 8: hbm.bandwidth_gbps
#                    150..4800 (one binary per batch, reused across bandwidths)
#           retune   the same at batch 1 with --retune: a binary per bandwidth
#           cores    ResNet-50, Ascend910, batch 1 and 8: core.count 1..32
#           buffers  ResNet-50, Ascend310, batch 1: l1.size_kb x ub.size_kb
#           all      every study above
#   OUT_DIR defaults to BUILD_DIR/whatif; each study writes OUT_DIR/STUDY/
#   (results.csv, timing.csv, plots/*.png|svg, points/, cache/).
# JOBS (default: nproc) sets simsweep -j; a ResNet-50 compile takes ~1 GB.
set -eu
[ $# -ge 2 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
study=$1
build=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
out=${3:-$build/whatif}
jobs=${JOBS:-$(nproc)}
export DAVINCI_SOC_DIR="$src/sim/soc"
mkdir -p "$out/models"
model="$out/models/resnet50_b1/model.onnx"
[ -s "$model" ] || /usr/bin/python3 "$src/tests/export_models.py" "$out/models" resnet50:1 >/dev/null

run() { # name, simsweep arguments...
	name=$1
	shift
	t0=$(date +%s)
	# 3: the study ran with points that failed (buffers too small for a
	# tile: their rows say so), which a study of limits expects
	"$build/simsweep" --model "$model" --mode timing -j "$jobs" --out "$out/$name" "$@" ||
		[ $? -eq 3 ]
	echo "whatif.sh: study $name took $(($(date +%s) - t0)) s on $jobs jobs ($(nproc) cores);" \
		"results in $out/$name/results.csv"
}

case $study in
hbm) run hbm --soc Ascend910 --vary hbm.bandwidth_gbps=150,300,600,1200,2400,4800 --batch 1,8 ;;
retune) run retune --soc Ascend910 --vary hbm.bandwidth_gbps=150,300,600,1200,2400,4800 \
	--batch 1 --retune ;;
cores) run cores --soc Ascend910 --vary core.count=1,2,4,8,16,32 --batch 1,8 ;;
buffers) run buffers --soc Ascend310 --vary l1.size_kb=64,128,256,512,1024,2048 \
	--vary ub.size_kb=16,32,64,128,248,496 --batch 1 ;;
all) for s in hbm retune cores buffers; do "$0" "$s" "$build" "$out"; done ;;
*) echo "whatif.sh: unknown study '$study' (hbm, retune, cores, buffers, all)" >&2; exit 2 ;;
esac
