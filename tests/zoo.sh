#!/bin/sh
# The torchvision model zoo (bench/zoo.py): the smaller architectures at
# batch 1 and 4 on the Ascend310P3 with the arithmetic, each output within
# cosine 0.999 of PyTorch's, and every other architecture of the zoo at batch 1 in
# timing mode: it compiles (simatc runs each kernel against the hardware
# rules before writing the .om) and runs.  Models are exported at test time.
# DAVINCI_ZOO_FULL and DAVINCI_ZOO_TIMING replace the two lists (comma-
# separated; empty skips that part): the sanitizer pass keeps it small.
set -u
py=/usr/bin/python3
$py -c "import torch, torchvision, onnx" 2>/dev/null || { echo "SKIP: python3-torch, python3-torchvision, python3-onnx"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
full=${DAVINCI_ZOO_FULL-squeezenet1_1,mobilenet_v3_small,shufflenet_v2_x0_5,mnasnet0_5,regnet_x_400mf,efficientnet_b0,lraspp_mobilenet_v3_large}
# the full run at batch 1 already compiled and ran its models: not twice
timing=${DAVINCI_ZOO_TIMING-$($py "$srcdir/bench/zoo.py" --list | tr , '\n' |
	grep -vxF -e "$(echo "$full" | tr , '\n')" | paste -sd,)}
rc=0
if [ -n "$full" ]; then
	$py "$srcdir/bench/zoo.py" . "$tmp" --socs Ascend310P3 --batches 1,4 --models "$full" || rc=1
fi
if [ -n "$timing" ]; then
	$py "$srcdir/bench/zoo.py" . "$tmp" --socs Ascend310P3 --batches 1 --timing-only \
		--models "$timing" || rc=1
fi
exit $rc
