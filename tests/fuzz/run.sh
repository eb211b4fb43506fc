#!/bin/sh
# run.sh SRCDIR BUILDDIR SECONDS [RUNS]: `make fuzz`.  Builds the libFuzzer harnesses
# (tests/fuzz/fuzz_*.c) with clang, their parsers compiled with coverage and
# ASan + UBSan, into BUILDDIR/fuzz/; makes seed corpora from the tree (the
# test kernels, SoC files, AIPP configs, tests/bad_models.py's models and an
# .om compiled from one); runs each harness SECONDS; a crash or hang input is
# left in BUILDDIR/fuzz/findings_NAME/ (crash-*, timeout-*, leak-*), where libFuzzer
# writes it, and counted as a finding.  Prints execs and findings per harness.
# RUNS (FUZZ_RUNS): also stop a harness after that many execs; FUZZ_HARNESSES:
# which to run (default all: asm onnx om soc aipp switch).
set -u
src=$1 build=$2 secs=${3:-60} runs=${4:--1}
harnesses=${FUZZ_HARNESSES:-asm onnx om soc aipp switch}
CLANG=${CLANG:-clang}
command -v "$CLANG" > /dev/null || { echo "make fuzz: needs clang (libFuzzer)"; exit 1; }
out="$build/fuzz"
mkdir -p "$out"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -std=c11"
flags="$flags -D_POSIX_C_SOURCE=200809L -DHAVE_CONFIG_H -I$build -I$src/isa -I$src/sim"
flags="$flags -I$src/compiler -I$src/om -I$build/om -I$build/proto -I$src/tests/fuzz"
pb=$(pkg-config --cflags --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
inih=$(pkg-config --cflags --libs inih 2>/dev/null || echo -linih)
build_one() { # name sources... -- libs
	n=$1
	shift
	srcs=""
	while [ "$1" != "--" ]; do srcs="$srcs $1"; shift; done
	shift
	# shellcheck disable=SC2086
	$CLANG $flags -o "$out/$n" "$src/tests/fuzz/$n.c" $srcs "$@" -lm ||
		{ echo "make fuzz: building $n failed"; exit 1; }
}
build_one fuzz_asm "$src/isa/asm.c" "$src/isa/isa.c" --
build_one fuzz_onnx "$src/compiler/onnx_import.c" "$src/compiler/graph.c" \
	"$build/proto/onnx.pb-c.c" -- $pb
build_one fuzz_om "$src/om/om.c" "$src/om/om_edge.c" "$build/om/om.pb-c.c" -- $pb -lelf -lz
build_one fuzz_soc "$src/sim/soc.c" -- $inih
build_one fuzz_aipp "$src/compiler/aipp_conf.c" --
build_one fuzz_switch "$src/compiler/fusion_switch.c" --

# seeds
for h in asm onnx om soc aipp switch; do mkdir -p "$out/seed_$h" "$out/findings_$h" "$out/corpus_$h"; done
cp "$src"/tests/kernels/*.s "$out/seed_asm/"
cp "$src"/sim/soc/*.ini "$out/seed_soc/"
printf 'core.count=4\nhbm.bandwidth_gbps=1e3\nl2.size_kb=0\n' > "$out/seed_soc/sets"
"${PYTHON:-/usr/bin/python3}" "$src/tests/bad_models.py" "$out/models" > /dev/null &&
	find "$out/models" -name '*.onnx' -exec cp {} "$out/seed_onnx/" \;
"$build/simatc" --model="$out/models/good.onnx" --framework=5 --output="$out/seed_om/good" \
	--soc_version=Ascend310 > /dev/null
printf 'aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n  src_image_size_w: 256\n  src_image_size_h: 256\n  crop: true\n  load_start_pos_w: 16\n  load_start_pos_h: 16\n  crop_size_w: 224\n  crop_size_h: 224\n  mean_chn_0: 123\n  var_reci_chn_0: 0.0171\n}\n' > "$out/seed_aipp/crop.cfg"
printf 'aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n  csc_switch: true\n  matrix_r0c0: 256\n}\n' > "$out/seed_aipp/csc.cfg"
printf '{"Switch":{"GraphFusion":{"ConvBatchNormFusionPass":"off","ALL":"on"},\n"UBFusion":{"L2FusionPass":"off"}}}\n' > "$out/seed_switch/json"
printf 'ConvActivationFusionPass:off\nALL:on\n' > "$out/seed_switch/lines"

status=0
for h in $harnesses; do
	(cd "$out/findings_$h" && "$out/fuzz_$h" -max_total_time="$secs" -runs="$runs" -timeout=60 -rss_limit_mb=4096 \
		-print_final_stats=1 "$out/corpus_$h" "$out/seed_$h" > "$out/fuzz_$h.log" 2>&1)
	execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz_$h.log" | grep -o '[0-9]*$')
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$out/fuzz_$h.log")
	found=$(ls "$out/findings_$h" | grep -c '^\(crash\|timeout\|leak\|oom\)-' || true)
	echo "fuzz_$h: ${execs:-?} execs in ${took:-?} s, $found findings (log: $out/fuzz_$h.log)"
	[ "$found" -eq 0 ] || status=1
done
exit $status
