#!/bin/sh
# Charts a person can read (docs/plots.md): a torchvision model (the first of
# $DAVINCI_MODELS, batch 1; ResNet-50 by default, whose tail ops cluster)
# traced on the Ascend310 and the Ascend910, charted by simprof --plot, and
# the timeline's and the roofline's SVGs measured by tests/svg_labels.py:
# no two texts may overlap, no leader line may cross a text, and no label
# may be drawn twice (each top op is labelled once).  Also: the timeline
# counts time from the start of the traced execution, and the roofline's
# y range is fitted to its points, not whole decades.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
if ! command -v gnuplot > /dev/null 2>&1; then
	echo "SKIP: gnuplot is not on PATH"
	exit 77
fi
if ! "$py" -c 'import torch, torchvision, onnx' > /dev/null 2>&1; then
	echo "SKIP: $py has no torch, torchvision or onnx"
	exit 77
fi
first=${DAVINCI_MODELS:-resnet50:1}
name=${first%%[: ]*}
if ! "$py" "$srcdir/tests/export_models.py" "$tmp" "$name:1" > "$tmp/gen.log" 2>&1; then
	cat "$tmp/gen.log"
	echo "FAIL: exporting $name"
	exit 1
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
for soc in Ascend310 Ascend910; do
	d="$tmp/$soc"
	if ! ./simatc --model="$tmp/${name}_b1/model.onnx" --framework=5 --output="$d" \
		--soc_version=$soc > "$tmp/atc.log" 2>&1 ||
		! ./simrun "$d.om" --mode timing --trace "$d" > "$tmp/run.log" 2>&1 ||
		! ./simprof "$d" --plot > "$tmp/prof.log" 2>&1; then
		cat "$tmp/atc.log" "$tmp/run.log" "$tmp/prof.log"
		bad "$name on $soc: compiling, tracing or charting"
		continue
	fi
	for chart in timeline roofline; do
		if ! got=$("$py" "$srcdir/tests/svg_labels.py" "$d/plots/$chart.svg" 2> "$tmp/why"); then
			bad "$soc $chart: svg_labels.py: $(cat "$tmp/why")"
			continue
		fi
		echo "$name $soc $chart: $got"
		case $got in
		*" overlaps 0 crossings 0 repeats 0") ok ;;
		*) cat "$tmp/why"; bad "$soc $chart: $got" ;;
		esac
	done
	# time from the traced execution's start: the first box at 0
	grep -q "^set xrange \[-" "$d/plots/timeline.gp" && ok ||
		bad "$soc timeline: $(grep '^set xrange' "$d/plots/timeline.gp")"
	# the roofline's y range: within a factor 2 of the points (and the peak)
	if msg=$("$py" - "$d/plots" 2>&1 << 'EOF'
import re, sys
d = sys.argv[1]
gp = open(f"{d}/roofline.gp").read()
lo, hi = map(float, re.search(r"set yrange \[([^:]+):([^\]]+)\]", gp).groups())
peak = float(re.search(r"^peak = (\S+)", gp, re.M).group(1))
ys = []
block = 0
for line in open(f"{d}/roofline.dat"):
    if line.startswith("# index"):
        block = int(line.split()[2].rstrip(":"))
    elif line.strip() and not line.startswith("#") and block < 2:
        ys.append(float(line.split()[1]))
if not (lo < min(ys) <= 2 * lo and hi / 2 <= max(max(ys), peak) < hi):
    sys.exit(f"y range {lo}..{hi} for points {min(ys)}..{max(ys)}, peak {peak}")
print(f"y range {lo:.3g}..{hi:.3g} for points {min(ys):.3g}..{max(ys):.3g}")
EOF
	); then
		ok
		echo "$name $soc roofline: $msg"
	else
		bad "$soc roofline: $msg"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
