#!/bin/sh
# simcmp (tools/simcmp.py), the layer-by-layer comparison with ONNX Runtime,
# on a model with a deliberately fp16-overflowing element-wise chain
# (tests/simcmp_models.py): it must name the chain's node as the first
# divergence, with every node before it within the threshold, and the
# --keep_dtype hint it gives must fix it (--verify-hint: cosine >= 0.999);
# must_keep_origin_dtype diverges nowhere; a MatMul whose scale the
# compiler moved into the Softmax is not compared as the model's scores; CSV
# and JSON are written; the kept outputs change none of the model's output
# bytes; a missing model, a bad SoC and a bad option give a message and a
# non-zero exit.
set -u
py=/usr/bin/python3
$py -c "import onnx, numpy" 2>/dev/null || { echo "SKIP: python3-onnx"; exit 77; }
[ -d "$srcdir/tests/ort/node_modules/onnxruntime-node" ] || { echo "SKIP: onnxruntime-node"; exit 77; }
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmp="$py $srcdir/tools/simcmp.py --bindir=."
$py "$srcdir/tests/simcmp_models.py" "$tmp" || { echo "FAIL: simcmp_models.py"; exit 1; }

$cmp --model="$tmp/overflow.onnx" --soc_version=Ascend310P3 --verify-hint \
	--csv="$tmp/o.csv" --json="$tmp/o.json" > "$tmp/o.txt" 2> "$tmp/o.err"
rc=$?
cat "$tmp/o.txt"
[ $rc = 1 ] && ok || bad "overflow model: exit $rc, not 1 (diverged): $(cat "$tmp/o.err")"
if msg=$($py - "$tmp/o.json" "$tmp/o.csv" << 'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
if d["first_divergence"] != "scale_down":
    sys.exit(f"first divergence {d['first_divergence']}, not scale_down")
if d["hint"].get("keep_dtype_entry") != "scale_down":
    sys.exit(f"hint {d['hint']}")
v = d["verify"]
if not v or not v["fixed"] or v["node_cosine"] < 0.999 or min(v["output_cosines"]) < 0.999:
    sys.exit(f"the hint did not fix it: {v}")
rows = {r["node"]: r for r in d["nodes"]}
if rows["relu1"]["cosine"] < 0.999 or rows["relu1"]["precision"] != "fp16":
    sys.exit(f"relu1 (before the overflow): {rows['relu1']}")
if "cosine" in rows["scale_up2"] or "at scale_down" not in rows["scale_up2"]["status"]:
    sys.exit(f"scale_up2 is fused into scale_down's kernel: {rows['scale_up2']}")
if [r["node"] for r in d["nodes"]] != ["conv1", "relu1", "scale_up1", "scale_up2",
                                       "scale_down", "conv2"]:
    sys.exit("not the model's order")
c = list(csv.DictReader(open(sys.argv[2])))
if len(c) != 6 or c[4]["node"] != "scale_down" or not c[4]["status"].startswith("below"):
    sys.exit(f"CSV: {c}")
PY
); then ok; else bad "overflow model: $msg"; fi
grep -q "first divergence: scale_down" "$tmp/o.txt" && ok || bad "no first divergence line"

# the attention scale moved into the Softmax: the MatMul's output in memory
# is the unscaled product, not the model's scores, so it is not compared;
# the ReduceL2 decomposed (a tensor ONNX Runtime has not) compares
$cmp --model="$tmp/attention.onnx" --soc_version=Ascend310P3 --json="$tmp/a.json" \
	> "$tmp/a.txt" 2>&1
rc=$?
[ $rc = 0 ] && ok || bad "attention: exit $rc, not 0: $(tail -3 "$tmp/a.txt")"
if msg=$($py - "$tmp/a.json" << 'PY'
import json, sys
rows = {r["node"]: r for r in json.load(open(sys.argv[1]))["nodes"]}
if "cosine" in rows["scores"] or "next compared at probs" not in rows["scores"]["status"]:
    sys.exit(f"scores (its scale moved into the Softmax) was compared: {rows['scores']}")
for n in ("probs", "context", "l2", "normalize"):
    if rows[n].get("cosine", 0) < 0.999:
        sys.exit(f"{rows[n]}")
PY
); then ok; else bad "attention: $msg"; fi

$cmp --model="$tmp/overflow.onnx" --soc_version=Ascend310P3 \
	--precision_mode=must_keep_origin_dtype > "$tmp/k.txt" 2>&1
rc=$?
[ $rc = 0 ] && ok || bad "must_keep_origin_dtype: exit $rc, not 0: $(tail -3 "$tmp/k.txt")"

# bad input: a message naming what, a non-zero exit
expect() {
	want=$1 pat=$2
	shift 2
	$cmp "$@" > "$tmp/e.out" 2> "$tmp/e.err"
	rc=$?
	if [ $rc != "$want" ] || ! grep -q "$pat" "$tmp/e.err"; then
		bad "$*: exit $rc (want $want), stderr: $(cat "$tmp/e.err")"
	else
		ok
	fi
}
expect 2 "no-such.onnx: no such file" --model="$tmp/no-such.onnx" --soc_version=Ascend310P3
expect 2 "Ascend999" --model="$tmp/overflow.onnx" --soc_version=Ascend999
expect 2 "threshold" --model="$tmp/overflow.onnx" --soc_version=Ascend310P3 --threshold=2
echo "not onnx" > "$tmp/bad.onnx"
expect 2 "bad.onnx" --model="$tmp/bad.onnx" --soc_version=Ascend310P3
./simatc --model="$tmp/overflow.onnx" --output="$tmp/x" --soc_version=Ascend310P3 \
	--keep_all_outputs=yes > /dev/null 2> "$tmp/s.err"
rc=$?
[ $rc = 2 ] && grep -q "keep_all_outputs takes 0 or 1" "$tmp/s.err" && ok ||
	bad "simatc --keep_all_outputs=yes: exit $rc: $(cat "$tmp/s.err")"

# the kept outputs change no value: the model's own output is the same bytes
# as a normal compile's (seeded random inputs)
for m in overflow attention; do
	for k in 0 1; do
		./simatc --model="$tmp/$m.onnx" --output="$tmp/${m}_$k" --soc_version=Ascend310P3 \
			--keep_all_outputs=$k > /dev/null 2>&1 &&
			./simrun "$tmp/${m}_$k.om" --loop 1 --output-dir "$tmp/${m}_$k" > /dev/null 2>&1 ||
			bad "$m --keep_all_outputs=$k: compile or run failed"
	done
	cmp -s "$tmp/${m}_0/output_0.pb" "$tmp/${m}_1/output_0.pb" && ok ||
		bad "$m: --keep_all_outputs=1 changed the model's output"
done

echo "simcmp: $pass passed, $fail failed"
[ $fail = 0 ]
