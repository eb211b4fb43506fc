#!/bin/sh
# The ACL sample examples/classify.c end to end: a small CNN exported from PyTorch
# (tests/acl_model.py), compiled by simatc for Ascend310, run through the ACL-shaped
# API; its top-5 classes must be PyTorch's, its probabilities within 1e-3.  Then the
# ways of choosing the SoC (DAVINCI_SOC, aclInit's config file, ACL's JSON config)
# and the errors a wrong choice gives.
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! /usr/bin/python3 -c 'import torch, onnx' > /dev/null 2>&1; then
	echo "SKIP: /usr/bin/python3 has no torch or onnx"
	exit 77
fi
if ! /usr/bin/python3 "$srcdir/tests/acl_model.py" "$tmp" > "$tmp/gen.log" 2>&1; then
	cat "$tmp/gen.log"
	echo "FAIL: tests/acl_model.py"
	exit 1
fi
if ! ./simatc --model="$tmp/model.onnx" --framework=5 --output="$tmp/cnn" \
	--soc_version=Ascend310 > "$tmp/atc.log" 2>&1; then
	cat "$tmp/atc.log"
	echo "FAIL: simatc"
	exit 1
fi

# top5 FILE: the class indices classify printed, on one line
top5() { sed -n 's/^ *#[1-5] class \([0-9]*\) .*/\1/p' "$1" | tr '\n' ' '; }
want=$(cut -d' ' -f1 "$tmp/expected.txt" | tr '\n' ' ')
# us FILE: the simulated microseconds of the execution
us() { sed -n 's/^aclmdlExecute: \([0-9.]*\) us simulated$/\1/p' "$1"; }

if DAVINCI_SOC=Ascend310 ./examples/classify "$tmp/cnn.om" "$tmp/input.bin" \
	> "$tmp/out" 2> "$tmp/err"; then ok; else bad "classify: $(cat "$tmp/err")"; fi
got=$(top5 "$tmp/out")
[ -n "$got" ] && [ "$got" = "$want" ] && ok || bad "top-5 '$got', PyTorch says '$want'"
/usr/bin/python3 - "$tmp/out" "$tmp/expected.txt" << 'EOF' && ok || bad "probabilities differ"
import re, sys
got = [float(m) for m in re.findall(r"class \d+ p=([0-9.]+)", open(sys.argv[1]).read())]
want = [float(l.split()[1]) for l in open(sys.argv[2])]
sys.exit(0 if len(got) == 5 and all(abs(a - b) < 1e-3 for a, b in zip(got, want)) else 1)
EOF
t310=$(us "$tmp/out")
case "$t310" in '' | 0 | 0.0*) bad "simulated time: '$t310'" ;; *) ok ;; esac
grep -q "input 'image' \[1,3,64,64\], output 'logits' \[1,100\]" "$tmp/out" && ok ||
	bad "model dims: $(head -1 "$tmp/out")"

# the SoC must be the model's: a clear error naming both and where the choice came from
if DAVINCI_SOC=Ascend910 ./examples/classify "$tmp/cnn.om" "$tmp/input.bin" \
	> /dev/null 2> "$tmp/err"; then
	bad "an Ascend310 model ran on Ascend910"
else
	grep -q "ACL_ERROR_RT_SOC_VERSION" "$tmp/err" &&
		grep -q "compiled for Ascend310, but the device is Ascend910 (SoC from \$DAVINCI_SOC)" \
			"$tmp/err" && ok || bad "wrong SoC message: $(cat "$tmp/err")"
fi

# aclInit's config file beats $DAVINCI_SOC; its set = lines are what-ifs: one AI core
# instead of two makes the same inference slower, with the same answer
printf '[device]\n; the chip and an override\nsoc = Ascend310\nset = core.count=1\n' \
	> "$tmp/acl.ini"
if DAVINCI_SOC=Ascend910 ./examples/classify "$tmp/cnn.om" "$tmp/input.bin" "$tmp/acl.ini" \
	> "$tmp/out1" 2> "$tmp/err"; then ok; else bad "config file: $(cat "$tmp/err")"; fi
[ "$(top5 "$tmp/out1")" = "$want" ] && ok || bad "one core: top-5 $(top5 "$tmp/out1")"
t1=$(us "$tmp/out1")
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$t1' or 0) > float('$t310' or 0) else 1)" &&
	ok || bad "one core took $t1 us, two took $t310 us"

# ACL's own JSON configuration (dump, profiling) is accepted and ignored
printf '{\n}\n' > "$tmp/acl.json"
DAVINCI_SOC=Ascend310 ./examples/classify "$tmp/cnn.om" "$tmp/input.bin" "$tmp/acl.json" \
	> "$tmp/out2" 2> "$tmp/err" && [ "$(top5 "$tmp/out2")" = "$want" ] && ok ||
	bad "acl.json: $(cat "$tmp/err")"

# errors: a message naming the culprit, non-zero exit
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
printf '[device]\nchip = Ascend310\n' > "$tmp/bad.ini"
expect_err "unknown config key" "bad.ini:2: unknown key 'chip' in [device]" \
	./examples/classify "$tmp/cnn.om" "$tmp/input.bin" "$tmp/bad.ini"
printf '[device]\nsoc = Ascend310\nset = core.count=0\n' > "$tmp/range.ini"
expect_err "override out of range" "range.ini:3: set = core.count=0" \
	./examples/classify "$tmp/cnn.om" "$tmp/input.bin" "$tmp/range.ini"
expect_err "unknown SoC" "SoC 'Ascend999' (from \$DAVINCI_SOC)" \
	env DAVINCI_SOC=Ascend999 ./examples/classify "$tmp/cnn.om" "$tmp/input.bin"
expect_err "missing config" "nope.ini" \
	./examples/classify "$tmp/cnn.om" "$tmp/input.bin" "$tmp/nope.ini"
expect_err "missing model" "ACL_ERROR_READ_MODEL_FAILURE" \
	./examples/classify "$tmp/nope.om" "$tmp/input.bin"
head -c 300 "$tmp/cnn.om" > "$tmp/trunc.om"
expect_err "truncated model" "ACL_ERROR_PARSE_MODEL" \
	./examples/classify "$tmp/trunc.om" "$tmp/input.bin"
head -c 1000 "$tmp/input.bin" > "$tmp/short.bin"
expect_err "short input" "holds 1000 bytes, the model's input is 49152" \
	./examples/classify "$tmp/cnn.om" "$tmp/short.bin"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
