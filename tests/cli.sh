#!/bin/sh
# The command-line tools: assemble -> disassemble -> assemble is byte-identical
# for every kernel; simrun's JSON has the promised fields; bad input gives a
# clear message and a non-zero exit.
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
k="$srcdir/tests/kernels"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for s in "$k"/*.s; do
	n=$(basename "$s" .s)
	if ./simas "$s" -o "$tmp/$n.bin" && ./simdis "$tmp/$n.bin" > "$tmp/$n.dis.s" &&
		./simas "$tmp/$n.dis.s" -o "$tmp/$n.again.bin" && cmp -s "$tmp/$n.bin" "$tmp/$n.again.bin"; then
		ok
	else
		bad "$n: simas/simdis round trip"
	fi
done

# a raw binary runs like its source, with the same cycles
a=$(./simrun --soc Ascend910 --kernel "$k/conv.s" --alloc 4096:rand --alloc 8192:rand --alloc 4096 --json)
b=$(./simrun --soc Ascend910 --kernel "$tmp/conv.bin" --alloc 4096:rand --alloc 8192:rand --alloc 4096 --json)
[ "$a" = "$b" ] && ok || bad "conv.bin and conv.s differ"
case "$a" in *'"cycles": '[0-9]*'"pipes": {"S": '*'"MTE2": '*'"V": '*) ok ;; *) bad "json: $a" ;; esac
t=$(./simrun --soc Ascend910 --kernel "$k/conv.s" --alloc 4096:rand --alloc 8192:rand --alloc 4096 --json --mode=timing)
[ "$a" = "$t" ] && ok || bad "timing mode JSON differs from full mode"

# what-if: more HBM bandwidth makes the bandwidth-bound vector add faster
n=1048576
slow=$(./simrun --soc Ascend310 --kernel "$k/vadd.s" --alloc $((2 * n)) --alloc $((2 * n)) --alloc $((2 * n)) --arg $n --block-dim 2 --json | sed 's/{"cycles": \([0-9]*\).*/\1/')
fast=$(./simrun --soc Ascend310 --set hbm.bandwidth_gbps=102.4 --kernel "$k/vadd.s" --alloc $((2 * n)) --alloc $((2 * n)) --alloc $((2 * n)) --arg $n --block-dim 2 --json | sed 's/{"cycles": \([0-9]*\).*/\1/')
[ "$fast" -lt "$slow" ] && ok || bad "2x DDR bandwidth: $fast cycles vs $slow"

# --stats prints gem5-style lines
./simrun --soc Ascend310 --kernel "$k/conv.s" --alloc 4096 --alloc 8192 --alloc 4096 --stats |
	grep -q '^core0.pipe.M.busy_cycles  *[0-9]* # ' && ok || bad "--stats"
./simrun --soc Ascend910 --dump-config | grep -q '^count = 32' && ok || bad "--dump-config"

# errors: message on stderr naming the culprit, non-zero exit
expect_err() { # what needle command...
	what=$1 needle=$2
	shift 2
	if "$@" > "$tmp/out" 2> "$tmp/err"; then
		bad "$what: exit 0"
	elif grep -qF -- "$needle" "$tmp/err"; then
		ok
	else
		bad "$what: stderr lacks '$needle': $(cat "$tmp/err")"
	fi
}
printf 'nop\n  frob x1\n' > "$tmp/bad.s"
expect_err "assembler error" "bad.s:2:3: unknown instruction 'frob'" ./simas "$tmp/bad.s" -o "$tmp/x.bin"
expect_err "unknown SoC" "unknown SoC 'Ascend999'" ./simrun --soc Ascend999 --kernel "$k/conv.s"
expect_err "bad --set" "unknown key 'bogus' in [core]" ./simrun --soc Ascend910 --set core.bogus=1 --kernel "$k/conv.s"
expect_err "out of range --set" "core.count" ./simrun --soc Ascend910 --set core.count=0 --kernel "$k/conv.s"
expect_err "deadlock" "core 0, pipe V, pc 1: wait_flag" ./simrun --soc Ascend910 --kernel "$k/deadlock.s"
expect_err "missing kernel file" "nope.s" ./simrun --soc Ascend910 --kernel "$tmp/nope.s"
head -c 17 "$tmp/conv.bin" > "$tmp/trunc.bin"
expect_err "truncated binary" "whole number" ./simrun --soc Ascend910 --kernel "$tmp/trunc.bin"
expect_err "unknown option" "unknown option" ./simrun --soc Ascend910 --frobnicate
expect_err "bad block dim" "block-dim" ./simrun --soc Ascend910 --kernel "$k/conv.s" --block-dim 0

# --- simatc and models -------------------------------------------------------
node=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}/node
if ./simatc --model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/relu" \
	--soc_version=Ascend910 --report="$tmp/relu.json" > "$tmp/out" &&
	grep -q '"tasks": 3' "$tmp/relu.json"; then ok; else bad "simatc test_relu"; fi
if ./simrun --soc Ascend910 "$tmp/relu.om" --input-dir "$node/test_relu/test_data_set_0" \
	--output-dir "$tmp" --json > "$tmp/run.json" && [ -s "$tmp/output_0.pb" ] &&
	grep -q '"latency_us"' "$tmp/run.json" && grep -q '"tasks": \[{"name"' "$tmp/run.json"
then ok; else bad "simrun relu.om"; fi
# --output_type=FP16 of an ND output: the output TransData writes fp16
# itself (no Cast), the fp32 run's values rounded
mkdir -p "$tmp/r16"
if ./simatc --model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/r16" \
	--soc_version=Ascend910 --output_type=FP16 > "$tmp/r16.txt" &&
	grep -q 'tasks by type: TransData 2, Relu 1$' "$tmp/r16.txt" &&
	./simrun "$tmp/r16.om" --input-dir "$node/test_relu/test_data_set_0" \
		--output-dir "$tmp/r16" > /dev/null &&
	/usr/bin/python3 -c 'import sys, numpy as np
from onnx import load_tensor, numpy_helper as nh
a, b = (load_tensor(sys.argv[1] + p) for p in ("/output_0.pb", "/r16/output_0.pb"))
assert b.data_type == 10 and np.array_equal(nh.to_array(a).astype(np.float16), nh.to_array(b))' "$tmp"
then ok; else bad "--output_type=FP16 of relu: $(cat "$tmp/r16.txt")"; fi
# without --soc a model runs on the SoC it was compiled for
./simrun "$tmp/relu.om" --json | grep -q '"soc": "Ascend910"' && ok || bad "simrun without --soc"
# a --set of a key the compiled code depends on warns (both values, and to
# recompile); a key only the cost model weighs does not
./simrun "$tmp/relu.om" --set core.count=2 > /dev/null 2> "$tmp/err" &&
	grep -qF -- "--set core.count=2: $tmp/relu.om was compiled for Ascend910's core.count = 32" "$tmp/err" &&
	grep -q "Recompile with simatc --soc_version=Ascend910 --set core.count=2" "$tmp/err" &&
	ok || bad "simrun --set core.count=2: $(cat "$tmp/err")"
./simrun "$tmp/relu.om" --set hbm.bandwidth_gbps=100 > /dev/null 2> "$tmp/err" && [ ! -s "$tmp/err" ] &&
	ok || bad "simrun --set hbm.bandwidth_gbps warned: $(cat "$tmp/err")"
expect_err "--kernel without --soc" "--soc is required with --kernel" ./simrun --kernel "$k/conv.s"
# every tool answers --version with configure's version
for t in simas simatc simdis simprof simquant simrun simserve simsweep; do
	./$t --version | grep -q "^$t (davinci-sim) [0-9]" && ok || bad "$t --version"
done
# simquant's report names the percentile, not the algorithm twice; off a
# terminal, no progress on stderr
./simquant --model="$node/test_relu/model.onnx" --output="$tmp/relu_q.onnx" --calib_count=1 \
	> "$tmp/q.out" 2> "$tmp/q.err" && grep -q "calibration percentile (the 99.999th of |x|) on 1 set" "$tmp/q.out" &&
	! grep -q "(percentile)" "$tmp/q.out" && [ ! -s "$tmp/q.err" ] && ok ||
	bad "simquant report: $(cat "$tmp/q.out" "$tmp/q.err")"
/usr/bin/python3 "$srcdir/tools/simcmp.py" --version --bindir "$(pwd)" |
	grep -q "^simcmp (davinci-sim) [0-9]" && ok || bad "simcmp --version"
# ATC's --input_format and --log are accepted (an ONNX model's layouts only)
./simatc --model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/relu2" \
	--soc_version=Ascend910 --input_format=NCHW --log=error > /dev/null 2> "$tmp/err" &&
	grep -q "note: --log=error accepted" "$tmp/err" && ok || bad "simatc --input_format --log"
# an --output that cannot be written is refused before the compile
expect_err "unwritable --output" "cannot write $tmp/no/such/dir/x.om" ./simatc \
	--model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/no/such/dir/x" \
	--soc_version=Ascend910
# two runs in one second never share a default trace folder
(cd "$tmp" && for i in 1 2; do "$OLDPWD/simrun" relu.om --trace > /dev/null; done) &&
	[ "$(ls -d "$tmp"/simprof_relu_* | wc -l)" -eq 2 ] && ok || bad "default trace folders collide"
expect_err "NHWC input format" "--input_format=NHWC" ./simatc --model="$node/test_relu/model.onnx" \
	--framework=5 --output="$tmp/relu3" --soc_version=Ascend910 --input_format=NHWC
./simrun --soc Ascend910 "$tmp/relu.om" --trace "$tmp/prof" > /dev/null &&
	[ -s "$tmp/prof/op_summary.csv" ] && [ -s "$tmp/prof/task_time.csv" ] &&
	[ -s "$tmp/prof/timeline.json" ] && [ -s "$tmp/prof/summary.json" ] && ok ||
	bad "simrun --trace DIR"
# the trace files parse as what they claim to be: JSON (timeline: an array of
# events with ph/pid/tid; X events with ts and dur), CSV with one field per
# column in every row
if /usr/bin/python3 - "$tmp/prof" <<'PY'
import csv, json, sys
d = sys.argv[1]
tl = json.load(open(d + "/timeline.json"))
assert isinstance(tl, list) and tl
for e in tl:
    assert {"name", "ph", "pid", "tid"} <= e.keys(), e
    if e["ph"] == "X":
        assert e["dur"] >= 0 and e["ts"] >= 0, e
s = json.load(open(d + "/summary.json"))
for k in ("first_latency_us", "warm_latency_us", "throughput_fps", "pipe_utilization", "top_ops"):
    assert k in s, k
for f in ("op_summary.csv", "task_time.csv"):
    rows = list(csv.reader(open(d + "/" + f)))
    assert len(rows) > 1 and all(len(r) == len(rows[0]) for r in rows), f
PY
then ok; else bad "trace files parse"; fi
# --loop / --streams: first and warm latency, throughput; one execution per
# stream and loop
if ./simrun --soc Ascend910 "$tmp/relu.om" --json --loop 3 --streams 2 > "$tmp/loop.json" &&
	grep -q '"first_latency_us": [0-9]' "$tmp/loop.json" &&
	grep -q '"warm_latency_us": [0-9]' "$tmp/loop.json" &&
	grep -q '"throughput_fps": [0-9]' "$tmp/loop.json" &&
	grep -q '"executions": 6, "streams": 2' "$tmp/loop.json"
then ok; else bad "simrun --loop 3 --streams 2"; fi
# the text summary names first and warm inference and the top ops
./simrun --soc Ascend910 "$tmp/relu.om" > "$tmp/sum.txt" &&
	grep -q '^first inference' "$tmp/sum.txt" && grep -q '^warm inference' "$tmp/sum.txt" &&
	grep -q '^throughput' "$tmp/sum.txt" && grep -q 'top 3 ops by time' "$tmp/sum.txt" &&
	ok || bad "simrun text summary"
# --batch-inputs: every subdirectory is an input set; outputs per set
mkdir -p "$tmp/sets/a" "$tmp/sets/b"
cp "$node/test_relu/test_data_set_0/input_0.pb" "$tmp/sets/a/"
cp "$node/test_relu/test_data_set_0/input_0.pb" "$tmp/sets/b/"
if ./simrun --soc Ascend910 "$tmp/relu.om" --input-dir "$tmp/sets" --batch-inputs \
	--streams 2 --output-dir "$tmp/setout" --json > "$tmp/sets.json" &&
	cmp -s "$tmp/setout/a/output_0.pb" "$tmp/setout/b/output_0.pb" &&
	cmp -s "$tmp/setout/a/output_0.pb" "$tmp/output_0.pb" &&
	grep -q '"executions": 2' "$tmp/sets.json"
then ok; else bad "simrun --batch-inputs"; fi
expect_err "--batch-inputs without sets" "needs subdirectories" \
	./simrun --soc Ascend910 "$tmp/relu.om" --input-dir "$tmp/sets/a" --batch-inputs
expect_err "--loop 0" "--loop '0': need 1..100000" ./simrun --soc Ascend910 "$tmp/relu.om" --loop 0
# simdis names each kernel's task; readelf sees the sections
./simdis "$tmp/relu.om" | grep -q "run by task 1 'Relu_0' (Relu" && ok || bad "simdis .om"
if command -v readelf > /dev/null; then
	readelf -S "$tmp/relu.om" | grep -q '\.om\.meta' && ok || bad "readelf -S"
fi
expect_err "wrong SoC" "compiled for Ascend910, not Ascend310" \
	./simrun --soc Ascend310 "$tmp/relu.om"
head -c 300 "$tmp/relu.om" > "$tmp/trunc.om"
expect_err "truncated .om" "trunc.om" ./simrun --soc Ascend910 "$tmp/trunc.om"
# bad models: a clear error and nothing written
printf 'garbage' > "$tmp/bad.onnx"
expect_err "malformed ONNX" "not a valid ONNX model" ./simatc --model="$tmp/bad.onnx" \
	--framework=5 --output="$tmp/bad" --soc_version=Ascend910
[ ! -e "$tmp/bad.om" ] && ok || bad "a failed compile left bad.om"
expect_err "contradicting --input_shape" "fixes it at" ./simatc \
	--model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/x" \
	--soc_version=Ascend910 --input_shape="x:3,4,6"
expect_err "unknown input in --input_shape" "not an input of the model" ./simatc \
	--model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/x" \
	--soc_version=Ascend910 --input_shape="nope:1"
expect_err "unknown precision mode" "force_fp16, allow_mix_precision" ./simatc \
	--model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/x" \
	--soc_version=Ascend910 --precision_mode=force_fp8
printf 'Relu_0\nnot_a_node\n' > "$tmp/keep.cfg"
expect_err "keep_dtype naming no node" "keep.cfg:2: not_a_node matches no node" ./simatc \
	--model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/x" \
	--soc_version=Ascend910 --keep_dtype="$tmp/keep.cfg"
if ./simatc --model="$node/test_relu/model.onnx" --framework=5 --output="$tmp/mix" \
	--soc_version=Ascend910 --precision_mode=must_keep_origin_dtype --report="$tmp/mix.json" \
	> /dev/null && grep -q '"precision": "fp32"' "$tmp/mix.json"
then ok; else bad "simatc --precision_mode=must_keep_origin_dtype"; fi
expect_err "unsupported operator" "(Atanh): operator Atanh is not supported" ./simatc \
	--model="$node/test_atanh/model.onnx" --framework=5 --output="$tmp/x" \
	--soc_version=Ascend910
[ ! -e "$tmp/x.om" ] && ok || bad "a failed compile left x.om"
if /usr/bin/python3 "$srcdir/tests/onnx_models.py" "$tmp/m" > /dev/null 2>&1; then
	expect_err "missing external data" "missing.bin" ./simatc \
		--model="$tmp/m/external_missing.onnx" --framework=5 --output="$tmp/y" \
		--soc_version=Ascend910
	expect_err "dynamic input without --input_shape" "input_shape" ./simatc \
		--model="$tmp/m/dynamic.onnx" --framework=5 --output="$tmp/y" \
		--soc_version=Ascend910
	./simatc --model="$tmp/m/dynamic.onnx" --framework=5 --output="$tmp/y" \
		--soc_version=Ascend910 --input_shape="X:2,3,224,224" > /dev/null && ok ||
		bad "dynamic input with --input_shape"
	# ATC's run modes: 1 an .om as JSON, 6 its information, 3 a precheck
	./simatc --mode=1 --om="$tmp/y.om" --json="$tmp/y.json" > /dev/null &&
		/usr/bin/python3 - "$tmp/y.json" << 'EOF' && ok || bad "--mode=1: $tmp/y.json"
import json, sys
d = json.load(open(sys.argv[1]))
attr = {a["key"]: a["value"] for a in d["attr"]}
assert d["name"] == "y" and attr["soc_version"]["s"] == "Ascend910", d["attr"]
assert d["op"] and all(o["type"] and o["onnx_ops"] for o in d["op"]), d["op"][:2]
assert any(o["type"] == "Relu" for o in d["op"]), [o["type"] for o in d["op"]]
EOF
	./simatc --mode=6 --om="$tmp/y.om" | grep -q '^model y (.*), compiled for Ascend910$' &&
		ok || bad "--mode=6"
	rm -f "$tmp/p.om"
	./simatc --mode=3 --model="$tmp/m/dynamic.onnx" --framework=5 --output="$tmp/p" \
		--soc_version=Ascend910 --input_shape="X:2,3,224,224" | grep -q '^precheck passed' &&
		[ ! -e "$tmp/p.om" ] && ok || bad "--mode=3 (precheck, no .om)"
	expect_err "--mode=1 without --json" "needs --om=FILE.om and --json" \
		./simatc --mode=1 --om="$tmp/y.om"
	expect_err "--mode=1 of a missing .om" "nope.om" \
		./simatc --mode=1 --om="$tmp/nope.om" --json="$tmp/n.json"
	expect_err "--mode=5" "--mode=5: not supported" ./simatc --mode=5 --om="$tmp/y.om"
else
	bad "tests/onnx_models.py failed"
fi

# dynamic batch: one .om of three programs, simdis lists them, simrun picks
# one and pads a batch without one; the flags' rules name the flag
if /usr/bin/python3 "$srcdir/tests/dynbatch_models.py" "$tmp" > /dev/null 2>&1; then
	d="--model=$tmp/conv.onnx --framework=5 --soc_version=Ascend310P3"
	./simatc $d --input_shape="input:-1,4,8,8" --dynamic_batch_size="1,2,4" \
		--output="$tmp/dyn" > /dev/null && ok || bad "simatc --dynamic_batch_size"
	./simdis "$tmp/dyn.om" | grep -q '^# dynamic batch: 3 variants, batch 1,2,4 ' &&
		ok || bad "simdis: the variants"
	./simatc --mode=6 --om="$tmp/dyn.om" | grep -q '^  dynamic batch sizes: 1 ' &&
		ok || bad "--mode=6: the variants"
	./simrun "$tmp/dyn.om" --dynamic-batch 3 | grep -q 'on the batch-4 program, padded' &&
		ok || bad "simrun --dynamic-batch 3: padded"
	./simrun "$tmp/dyn.om" --dynamic-batch 2 --json | grep -q '"variant_batch": 2, "padded": false' &&
		ok || bad "simrun --dynamic-batch 2 --json"
	expect_err "sizes not ascending" "--dynamic_batch_size=4,2: sizes must be distinct and ascending" \
		./simatc $d --input_shape="input:-1,4,8,8" --dynamic_batch_size="4,2" --output="$tmp/z"
	expect_err "-1 without --dynamic_batch_size" "needs --dynamic_batch_size" \
		./simatc $d --input_shape="input:-1,4,8,8" --output="$tmp/z"
	expect_err "--dynamic_batch_size without -1" "-1 as the batch" \
		./simatc $d --input_shape="input:2,4,8,8" --dynamic_batch_size="1,2" --output="$tmp/z"
	# dynamic dims: one .om of a program per profile; simdis, --mode=6 and
	# simrun name them
	h="--model=$tmp/convhw.onnx --framework=5 --soc_version=Ascend310P3 --input_shape=input:1,4,-1,-1"
	./simatc $h --dynamic_dims="8,8;16,16;12,20" --output="$tmp/dims" > /dev/null &&
		ok || bad "simatc --dynamic_dims"
	./simdis "$tmp/dims.om" | grep -q '^# dynamic dims: 3 profiles, 8x8;16x16;12x20 ' &&
		ok || bad "simdis: the profiles"
	./simatc --mode=6 --om="$tmp/dims.om" | grep -q '^  dynamic dims: 8x8 ' &&
		ok || bad "--mode=6: the profiles"
	./simrun "$tmp/dims.om" --dynamic-dims 16,16 --json | grep -q '"dynamic_dims": "16x16"' &&
		ok || bad "simrun --dynamic-dims 16,16 --json"
	expect_err "a profile not compiled" "not one of the model's profiles (8x8;16x16;12x20)" \
		./simrun "$tmp/dims.om" --dynamic-dims 16,8
	expect_err "both dynamic flags" "exclude each other" \
		./simatc $h --dynamic_dims="8,8;16,16" --dynamic_batch_size="1,2" --output="$tmp/z"
	expect_err "profiles of unequal length" "profile 2 has 1 values" \
		./simatc $h --dynamic_dims="8,8;16" --output="$tmp/z"
	# simserve takes the one .om as it takes one fixed-batch .om per size
	for b in 1 2 4; do
		./simatc $d --input_shape="input:$b,4,8,8" --output="$tmp/fix$b" > /dev/null ||
			bad "simatc batch $b"
	done
	sv="--qps 50000 --requests 2000 --max-batch 4 --max-queue-delay-us 50 --streams 2 --exact 50 --json"
	./simserve --model "$tmp/dyn.om" $sv 2> /dev/null | sed 's/"model": "[^"]*"//' > "$tmp/sd.json"
	./simserve --model "$tmp/fix1.om,$tmp/fix2.om,$tmp/fix4.om" $sv 2> /dev/null |
		sed 's/"model": "[^"]*"//' > "$tmp/sf.json"
	grep -q '"variants": \[1, 2, 4\]' "$tmp/sd.json" && cmp -s "$tmp/sd.json" "$tmp/sf.json" &&
		ok || bad "simserve: a dynamic-batch .om differs from its sizes' fixed-batch .om files"
	# two models on the chip (a dynamic-batch .om and a fixed-batch set),
	# replayed exactly on one simulated chip
	./simserve --model "$tmp/dyn.om:2" --model "$tmp/fix1.om,$tmp/fix2.om" $sv --max-batch 2 \
		2> /dev/null > "$tmp/s2.json" &&
		grep -q '^{"models": \[{"weight": 2, "model": "dyn", "variants": \[1, 2, 4\]' "$tmp/s2.json" &&
		grep -q '"model": "fix1", "variants": \[1, 2\]' "$tmp/s2.json" &&
		grep -q '^{"exact_replay": {"batches": 50,' "$tmp/s2.json" &&
		ok || bad "simserve: two models with --exact: $(cat "$tmp/s2.json")"
	# ATC's --output_type: the host receives FP16 (the fp32 run's values
	# rounded to fp16, half the bytes) or UINT8 (rounded, saturated), for
	# every output or per node:index; bad values name the flag
	f="$d --input_shape=input:2,4,8,8"
	for ty in FP32 FP16 UINT8 conv2:0:FP16; do
		mkdir -p "$tmp/ot$ty"
		./simatc $f --output="$tmp/ot$ty" --output_type="$ty" > /dev/null &&
			./simrun "$tmp/ot$ty.om" --output-dir "$tmp/ot$ty" > /dev/null &&
			./simatc --mode=1 --om="$tmp/ot$ty.om" --json="$tmp/ot$ty.json" > /dev/null ||
			bad "--output_type=$ty"
	done
	/usr/bin/python3 - "$tmp" << 'EOF' && ok || bad "--output_type: values, types or sizes"
import json, sys
import numpy as np
from onnx import load_tensor, numpy_helper
t = sys.argv[1]
out = {ty: load_tensor("%s/ot%s/output_0.pb" % (t, ty)) for ty in ("FP32", "FP16", "UINT8", "conv2:0:FP16")}
size = {ty: json.load(open("%s/ot%s.json" % (t, ty)))["output"][0]["size"] for ty in out}
assert [out[ty].data_type for ty in out] == [1, 10, 2, 10], [out[ty].data_type for ty in out]
assert size == {"FP32": 1024 * 4, "FP16": 1024 * 2, "UINT8": 1024, "conv2:0:FP16": 1024 * 2}, size
x = numpy_helper.to_array(out["FP32"])
assert np.array_equal(numpy_helper.to_array(out["FP16"]), x.astype(np.float16))
assert np.array_equal(numpy_helper.to_array(out["conv2:0:FP16"]), x.astype(np.float16))
assert np.array_equal(numpy_helper.to_array(out["UINT8"]), np.clip(np.rint(x), 0, 255).astype(np.uint8))
EOF
	expect_err "--output_type=INT32" "--output_type=INT32: INT32 outputs are not supported yet" \
		./simatc $f --output="$tmp/z" --output_type=INT32
	expect_err "--output_type=FP64" "--output_type=FP64: 'FP64' is not a type" \
		./simatc $f --output="$tmp/z" --output_type=FP64
	expect_err "--output_type of an inner node" "output 0 of node 'conv1' ('c1') is not an output of the model" \
		./simatc $f --output="$tmp/z" --output_type="conv1:0:FP16"
	expect_err "--output_type of no node" "no node named 'conv9'" \
		./simatc $f --output="$tmp/z" --output_type="conv9:0:FP16"
	expect_err "--dynamic-batch above the sizes" "larger than the largest of the model's batch sizes (1,2,4)" \
		./simrun "$tmp/dyn.om" --dynamic-batch 5
else
	bad "tests/dynbatch_models.py failed"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
