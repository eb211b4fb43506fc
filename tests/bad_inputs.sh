#!/bin/sh
# Bad inputs (issue 20): broken and hostile files of every kind the tools
# read, generated here, each of which must be refused: a non-zero exit below
# 128 (no signal) within 60 s, a message on stderr naming the file and the
# node, instruction or key, and no output file left behind.  Runs under
# ASan/UBSan in CI (.ci/run): a sanitizer report fails the case too.
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=${PYTHON:-/usr/bin/python3}
soc=Ascend310 # the smallest memory: the tightest size limits

# refuse WHAT LEFTOVER NEEDLE... -- COMMAND...: COMMAND must fail cleanly,
# its stderr hold every NEEDLE, and LEFTOVER (a path, or -) not exist.
refuse() {
	what=$1 left=$2
	shift 2
	needles=""
	while [ "$1" != "--" ]; do
		needles="$needles$1
"
		shift
	done
	shift
	rm -f "$tmp/err"
	timeout 60 "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ $rc -eq 0 ]; then
		bad "$what: exit 0"
		return
	fi
	if [ $rc -eq 124 ]; then
		bad "$what: no answer within 60 s"
		return
	fi
	if [ $rc -ge 128 ]; then
		bad "$what: killed by signal $((rc - 128)): $(head -c 300 "$tmp/err")"
		return
	fi
	if grep -q "Sanitizer\|runtime error:" "$tmp/err"; then
		bad "$what: sanitizer report: $(grep -m1 "Sanitizer\|runtime error:" "$tmp/err")"
		return
	fi
	if [ "$left" != - ] && [ -e "$left" ]; then
		bad "$what: left $left behind"
		rm -rf "$left"
		return
	fi
	missing=$(printf '%s' "$needles" | while IFS= read -r n; do
		[ -z "$n" ] || grep -qF -- "$n" "$tmp/err" || echo "'$n'"
	done)
	if [ -n "$missing" ]; then
		bad "$what: stderr lacks $missing: $(head -c 400 "$tmp/err")"
		return
	fi
	ok
}

# --- ONNX models (tests/bad_models.py: name, then the text naming the node,
# tensor or attribute) -------------------------------------------------------
m="$tmp/m"
"$py" "$srcdir/tests/bad_models.py" "$m" > "$tmp/manifest" || { echo "bad_models.py failed"; exit 1; }
tab=$(printf '\t')
while IFS="$tab" read -r name needle; do
	refuse "simatc $name" "$tmp/o.om" "$m/$name.onnx" "$needle" -- \
		./simatc --model="$m/$name.onnx" --framework=5 --output="$tmp/o" --soc_version=$soc
done < "$tmp/manifest"
# models at the size limit (bad_models.py's limit/): compiled or refused, with
# the file named, within 60 s (a signal or a timeout fails)
for f in "$m"/limit/*.onnx; do
	name=$(basename "$f" .onnx)
	timeout 60 ./simatc --model="$f" --framework=5 --output="$tmp/lim" --soc_version=$soc \
		> /dev/null 2> "$tmp/err"
	rc=$?
	if [ $rc -ge 124 ]; then
		bad "simatc $name: exit $rc (124: no answer within 60 s; above 128: a signal)"
	elif grep -q "Sanitizer\|runtime error:" "$tmp/err"; then
		bad "simatc $name: sanitizer report: $(grep -m1 "Sanitizer\|runtime error:" "$tmp/err")"
	elif [ $rc -ne 0 ] && ! grep -qF "$f" "$tmp/err"; then
		bad "simatc $name: the error does not name the file: $(head -c 300 "$tmp/err")"
	else
		ok
	fi
	rm -f "$tmp/lim.om"
done
# the symlinked external data: refused as a link, whichever way it is named
refuse "simatc ext_symlink says why" "$tmp/o.om" "link.bin" "symbolic link" -- \
	./simatc --model="$m/ext/ext_symlink.onnx" --framework=5 --output="$tmp/o" --soc_version=$soc
# a size limit from the SoC: the same model on the larger chip passes that check
refuse "dims_overflow names the memory" "$tmp/o.om" "x" "MiB of memory" -- \
	./simatc --model="$m/dims_overflow.onnx" --framework=5 --output="$tmp/o" --soc_version=$soc
# not a model at all
printf 'not a protobuf \377\377\377' > "$tmp/junk.onnx"
refuse "simatc junk" "$tmp/o.om" "junk.onnx" -- \
	./simatc --model="$tmp/junk.onnx" --framework=5 --output="$tmp/o" --soc_version=$soc
: > "$tmp/empty.onnx"
refuse "simatc empty file" "$tmp/o.om" "empty.onnx" -- \
	./simatc --model="$tmp/empty.onnx" --framework=5 --output="$tmp/o" --soc_version=$soc
head -c 200 "$m/good.onnx" > "$tmp/cut.onnx"
refuse "simatc truncated model" "$tmp/o.om" "cut.onnx" -- \
	./simatc --model="$tmp/cut.onnx" --framework=5 --output="$tmp/o" --soc_version=$soc

# --- --fusion_switch_file -----------------------------------------------------
good="$m/good.onnx"
sw() { # name content needle
	printf '%s' "$2" > "$tmp/$1.json"
	refuse "fusion switch $1" "$tmp/o.om" "$tmp/$1.json" "$3" -- ./simatc --model="$good" \
		--framework=5 --output="$tmp/o" --soc_version=$soc --fusion_switch_file="$tmp/$1.json"
}
sw empty "" "empty"
sw blank "   
 " "empty"
sw truncated '{"Switch":{"GraphFusion":{"ConvBatchNormFusionPass":"off",' "not closed"
sw array '["ConvBatchNormFusionPass"]' "not a JSON object"
sw number '42' "not a JSON object"
sw trailing '{"Switch":{}} x' "after the JSON object"
sw unknown '{"Switch":{"GraphFusion":{"FrobPass":"off"}}}' "FrobPass"
sw badvalue '{"Switch":{"GraphFusion":{"ConvBatchNormFusionPass":"maybe"}}}' "ConvBatchNormFusionPass"
refuse "fusion switch missing file" "$tmp/o.om" "$tmp/nope.json" -- ./simatc --model="$good" \
	--framework=5 --output="$tmp/o" --soc_version=$soc --fusion_switch_file="$tmp/nope.json"

# --- AIPP configs ---------------------------------------------------------------
aipp() { # name content needle
	printf '%s' "$2" > "$tmp/$1.cfg"
	refuse "aipp $1" "$tmp/o.om" "$tmp/$1.cfg" "$3" -- ./simatc --model="$good" \
		--framework=5 --output="$tmp/o" --soc_version=$soc --insert_op_conf="$tmp/$1.cfg"
}
aipp unknown_key 'aipp_op {
  aipp_mode: static
  input_format: RGB888_U8
  frobnicate: 1
}' "frobnicate"
aipp out_of_range 'aipp_op {
  aipp_mode: static
  input_format: RGB888_U8
  mean_chn_0: 300
}' "mean_chn_0"
aipp unclosed 'aipp_op {
  aipp_mode: static
  input_format: RGB888_U8' "$tmp/unclosed.cfg"
aipp bad_format 'aipp_op {
  aipp_mode: static
  input_format: PNG
}' "input_format"

# --- --set and SoC ini files --------------------------------------------------
refuse "--set unknown key" - "bogus" -- ./simatc --model="$good" --framework=5 \
	--output="$tmp/o" --soc_version=$soc --set core.bogus=1
refuse "--set out of range" "$tmp/o.om" "core.count" -- ./simatc --model="$good" --framework=5 \
	--output="$tmp/o" --soc_version=$soc --set core.count=0
refuse "--set not a number" "$tmp/o.om" "core.freq_mhz" -- ./simatc --model="$good" \
	--framework=5 --output="$tmp/o" --soc_version=$soc --set core.freq_mhz=fast
refuse "--set no value" - "hbm.size_mb" -- ./simrun --soc $soc --set hbm.size_mb= \
	--kernel "$srcdir/tests/kernels/conv.s"
printf '[core]\ncount = 2\nfreq_mhz = \n' > "$tmp/bad.ini"
refuse "ini empty value" - "bad.ini" -- ./simrun --soc "$tmp/bad.ini" --dump-config
printf '[core\ncount = 2\n' > "$tmp/sect.ini"
refuse "ini broken section" - "sect.ini" -- ./simrun --soc "$tmp/sect.ini" --dump-config

# --- the assembler ----------------------------------------------------------
as_bad() { # name source needle
	printf '%s\n' "$2" > "$tmp/$1.s"
	refuse "simas $1" "$tmp/$1.bin" "$1.s:" "$3" -- ./simas "$tmp/$1.s" -o "$tmp/$1.bin"
}
# what the fuzzers found (tests/fuzz/regress/HARNESS/), through the tools
for f in "$srcdir"/tests/fuzz/regress/asm/*; do
	[ -e "$f" ] || continue
	refuse "simas regress $(basename "$f")" "$tmp/regress.bin" "$(basename "$f")" -- \
		./simas "$f" -o "$tmp/regress.bin"
done
as_bad nest_deep "li x1, $(printf '%0.s(' $(seq 300))1$(printf '%0.s)' $(seq 300))
end" "nests deeper"
as_bad imm_range 'addi x1, x0, 9223372036854775808
end' "out of range"
as_bad equ_self '.equ X, X+1
addi x1, x0, X
end' ".equ X"
as_bad equ_forward '.equ A, B
.equ B, 2
end' ".equ A"
as_bad mul_overflow 'li x1, 4611686018427387904*4
end' "overflows"
as_bad sum_overflow 'li x1, 9223372036854775807+1
end' "overflows"
as_bad unknown_insn 'frob x1, x2
end' "frob"
as_bad bad_reg 'addi x99, x0, 1
end' "x99"
as_bad div_zero 'li x1, 1/0
end' "division by zero"
as_bad undefined 'jmp nowhere
end' "nowhere"

# --- simrun on kernels and models ------------------------------------------
printf 'loop:\n  jmp loop\n' > "$tmp/loop.s"
refuse "endless loop, --max-cycles" - "core 0, pipe S, pc" "max-cycles" -- \
	./simrun --soc $soc --kernel "$tmp/loop.s" --max-cycles 100000
refuse "--max-cycles 0" - "--max-cycles" -- ./simrun --soc $soc --kernel "$tmp/loop.s" \
	--max-cycles 0
./simatc --model="$good" --framework=5 --output="$tmp/good" --soc_version=$soc > /dev/null ||
	bad "simatc good.onnx"
mkdir -p "$tmp/extra"
cp "$m/good/input_0.pb" "$tmp/extra/"
cp "$m/good/input_0.pb" "$tmp/extra/input_1.pb"
refuse "simrun extra input_1.pb" "$tmp/run/output_0.pb" "input_1.pb" "extra" -- \
	./simrun "$tmp/good.om" --input-dir "$tmp/extra" --output-dir "$tmp/run"
refuse "simrun missing input" "$tmp/run/output_0.pb" "input_0.pb" -- \
	./simrun "$tmp/good.om" --input-dir "$tmp/nope" --output-dir "$tmp/run"

# --- .om files: truncated, bit-flipped, empty, not ELF ------------------------
om="$tmp/good.om"
size=$(wc -c < "$om")
for cut in 0 4 64 200 $((size / 2)) $((size - 1)); do
	head -c $cut "$om" > "$tmp/cut$cut.om"
	refuse "simrun .om cut at $cut" "$tmp/run/output_0.pb" "cut$cut.om" -- \
		./simrun "$tmp/cut$cut.om" --soc $soc --output-dir "$tmp/run"
	refuse "simdis .om cut at $cut" - "cut$cut.om" -- ./simdis "$tmp/cut$cut.om"
done
# flip one byte of a section: located with readelf-free python (ELF64 headers)
flip() { # section-name out.om
	"$py" - "$om" "$1" "$2" <<'PY'
import struct, sys
src, name, dst = sys.argv[1], sys.argv[2], sys.argv[3]
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sh(i):
    return struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
for i in range(shnum):
    s = sh(i)
    n = b[stroff + s[0]:b.index(0, stroff + s[0])].decode()
    if n.startswith(name) and s[5] > 0:
        b[s[4] + s[5] // 2] ^= 0x10
        break
else:
    sys.exit("no section " + name)
open(dst, "wb").write(bytes(b))
PY
}
flip .weights "$tmp/wflip.om" && refuse "simrun flipped weight byte" "$tmp/run/output_0.pb" \
	"wflip.om" ".weights" "CRC-32" -- ./simrun "$tmp/wflip.om" --output-dir "$tmp/run"
# timing mode never reads the weights, so it does not check them either
if timeout 60 ./simrun "$tmp/wflip.om" --mode timing > /dev/null 2>&1; then ok; else
	bad "simrun --mode timing on flipped weights (unread) should run"; fi
flip .text. "$tmp/cflip.om" && refuse "simrun flipped code byte" "$tmp/run/output_0.pb" \
	"cflip.om" "CRC-32" -- ./simrun "$tmp/cflip.om" --output-dir "$tmp/run"
flip .text. "$tmp/cflip2.om" && refuse "simdis flipped code byte" - "cflip2.om" "CRC-32" -- \
	./simdis "$tmp/cflip2.om"
flip .om.meta "$tmp/mflip.om" && refuse "simrun flipped metadata byte" \
	"$tmp/run/output_0.pb" "mflip.om" ".om.meta" "CRC-32" -- \
	./simrun "$tmp/mflip.om" --output-dir "$tmp/run"
flip .om.meta.crc "$tmp/mcflip.om" && refuse "simdis flipped metadata CRC" - "mcflip.om" \
	".om.meta" "CRC-32" -- ./simdis "$tmp/mcflip.om"
: > "$tmp/empty.om"
refuse "simdis empty .om" - "empty.om" -- ./simdis "$tmp/empty.om"
printf 'hello, not an ELF file\n' > "$tmp/text.om"
refuse "simdis text .om" - "text.om" -- ./simdis "$tmp/text.om"
refuse "simrun text .om" - "text.om" -- ./simrun "$tmp/text.om" --soc $soc
head -c 24 /dev/zero > "$tmp/zero.bin"
refuse "simrun all-zero kernel" - "zero.bin" -- ./simrun --soc $soc --kernel "$tmp/zero.bin"

echo "bad_inputs: $pass refused cleanly, $fail failed"
[ $fail -eq 0 ] && [ $pass -ge 60 ]
