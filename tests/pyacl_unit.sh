#!/bin/sh
# tests/pyacl_test.py, the unit tests of `import acl`, on the small CNN of
# tests/acl_model.py compiled for Ascend310, and for Ascend910 for the
# tests of the SoC choice (without torch, the tests that need a model are
# skipped and the others still run).
set -u
. "$srcdir/tests/pyacl_env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if /usr/bin/python3 -c 'import torch, onnx' > /dev/null 2>&1; then
	if ! /usr/bin/python3 "$srcdir/tests/acl_model.py" "$tmp" > "$tmp/gen.log" 2>&1 ||
		! ./simatc --model="$tmp/model.onnx" --framework=5 --output="$tmp/cnn" \
			--soc_version=Ascend310 > "$tmp/atc.log" 2>&1 ||
		! ./simatc --model="$tmp/model.onnx" --framework=5 --output="$tmp/cnn910" \
			--soc_version=Ascend910 >> "$tmp/atc.log" 2>&1; then
		cat "$tmp/gen.log" "$tmp/atc.log"
		echo "FAIL: making the model"
		exit 1
	fi
	# a dynamic-batch model (acl.mdl.get_dynamic_batch, set_dynamic_batch_size)
	if ! /usr/bin/python3 "$srcdir/tests/dynbatch_models.py" "$tmp" >> "$tmp/gen.log" 2>&1 ||
		! ./simatc --model="$tmp/conv.onnx" --framework=5 --output="$tmp/dyn" \
			--input_shape="input:-1,4,8,8" --dynamic_batch_size="1,2,4" \
			--soc_version=Ascend310 >> "$tmp/atc.log" 2>&1 ||
		! ./simatc --model="$tmp/convhw.onnx" --framework=5 --output="$tmp/dims" \
			--input_shape="input:1,4,-1,-1" --dynamic_dims="8,8;16,16" \
			--soc_version=Ascend310 >> "$tmp/atc.log" 2>&1; then
		cat "$tmp/gen.log" "$tmp/atc.log"
		echo "FAIL: making the dynamic-batch model"
		exit 1
	fi
	PYACL_DIR=$tmp
	export PYACL_DIR
fi
DAVINCI_SOC= pyacl_python "$srcdir/tests/pyacl_test.py" -v
