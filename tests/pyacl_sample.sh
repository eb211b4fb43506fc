#!/bin/sh
# examples/classify.py, the pyACL sample, end to end: a torchvision model
# exported by tests/export_models.py (the first of $DAVINCI_MODELS, batch 1;
# ResNet-50 by default), compiled by simatc for Ascend310, classified through
# `import acl`, synchronously and then through the two-stream pipeline.
# The top-5 must be PyTorch's (test_data_set_0's output).
set -u
. "$srcdir/tests/pyacl_env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! /usr/bin/python3 -c 'import torch, torchvision, onnx' > /dev/null 2>&1; then
	echo "SKIP: /usr/bin/python3 has no torch, torchvision or onnx"
	exit 77
fi
first=${DAVINCI_MODELS:-resnet50:1}
name=${first%%[: ]*}
if ! /usr/bin/python3 "$srcdir/tests/export_models.py" "$tmp" "$name:1" > "$tmp/gen.log" 2>&1 ||
	! ./simatc --model="$tmp/${name}_b1/model.onnx" --framework=5 --output="$tmp/model" \
		--soc_version=Ascend310 > "$tmp/atc.log" 2>&1; then
	cat "$tmp/gen.log" "$tmp/atc.log"
	echo "FAIL: exporting or compiling $name"
	exit 1
fi
# the test set as .npy (the sample's input) and PyTorch's top-5
/usr/bin/python3 - "$tmp/${name}_b1/test_data_set_0" "$tmp" << 'PY' || exit 1
import sys
import numpy as np
import onnx
import onnx.numpy_helper as nh
d, out = sys.argv[1], sys.argv[2]
x = nh.to_array(onnx.load_tensor(f"{d}/input_0.pb"))
y = nh.to_array(onnx.load_tensor(f"{d}/output_0.pb")).reshape(-1)
np.save(f"{out}/input.npy", x)
open(f"{out}/expected.txt", "w").write(" ".join(str(int(i)) for i in np.argsort(-y, kind="stable")[:5]))
PY
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
if DAVINCI_SOC= pyacl_python "$srcdir/examples/classify.py" "$tmp/model.om" "$tmp/input.npy" \
	--async 4 > "$tmp/out" 2> "$tmp/err"; then ok; else bad "classify.py: $(cat "$tmp/err")"; fi
cat "$tmp/out"
got=$(sed -n 's/^#\([1-5]\) class \([0-9]*\) .*/\2/p' "$tmp/out")
top1=$(echo "$got" | head -1)
want1=$(cut -d' ' -f1 "$tmp/expected.txt")
[ -n "$top1" ] && [ "$top1" = "$want1" ] && ok || bad "$name: top-1 $top1, PyTorch says $want1"
echo "PyTorch's top-5: $(cat "$tmp/expected.txt")"
grep -q '^async: 4 of 4 inferences equal the synchronous one$' "$tmp/out" && ok ||
	bad "async pipeline: $(grep async "$tmp/out")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
