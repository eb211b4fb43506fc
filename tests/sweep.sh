#!/bin/sh
# simsweep: a what-if study over two keys of a memory-bound model (a chain of
# element-wise ops, fusion off) gives a row per point, latency that never
# grows with main-memory bandwidth, binaries reused exactly where the key
# classes say, and failed points recorded while the rest run; the GNU parallel
# path (--emit-jobs, parallel, --merge) gives the same results.csv byte for
# byte; the Slurm script names the right array; a missing point is reported
# and can be run later; the compile cache is safe with jobs racing for one
# binary; the key classes agree with what compiler/ reads.
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep=$(pwd)/simsweep

/usr/bin/python3 "$srcdir/tests/sweep_model.py" "$tmp/chain.onnx" || { echo "FAIL: model"; exit 1; }
printf '{"Switch": {"GraphFusion": {"ElementwiseFusionPass": "off"}}}\n' > "$tmp/nofuse.json"
study() { # out, extra arguments...
	o=$1
	shift
	"$sweep" --soc Ascend310 --model "$tmp/chain.onnx" --fusion_switch_file "$tmp/nofuse.json" \
		--vary hbm.bandwidth_gbps=12.8,25.6,51.2,102.4 --vary core.count=2,0,1 --out "$o" "$@"
}
# column N of results.csv rows (no quoted commas before the status column)
col() { awk -F, -v c="$2" 'NR > 1 { print $c }' "$1"; }
# a study that ran with some points failed exits 3
st3() { "$@"; [ $? -eq 3 ]; }

# --- local run, two workers ---------------------------------------------------
st3 study "$tmp/a" -j2 > "$tmp/a.out" 2> "$tmp/a.err" && ok || bad "local study (4 points fail: exit 3): $(cat "$tmp/a.err")"
# each finished point: how many are done of the 12, and its row
[ "$(grep -c '^simsweep: point [0-9]* of 12 (#[0-9]*) \[' "$tmp/a.err")" -eq 12 ] &&
	grep -q '^simsweep: point 12 of 12 (#' "$tmp/a.err" && ok || bad "progress lines: $(cat "$tmp/a.err")"
r=$tmp/a/results.csv
[ "$(wc -l < "$r")" -eq 13 ] && ok || bad "12 rows expected: $(cat "$r")"
head -1 "$r" | grep -qx 'point,hbm.bandwidth_gbps,core.count,batch,first_latency_us,warm_latency_us,throughput_fps,util_S,util_MTE1,util_MTE2,util_MTE3,util_M,util_V,bound,compile_reused,status' &&
	ok || bad "header: $(head -1 "$r")"
# rows in cartesian order, first key outermost
[ "$(col "$r" 2 | tr '\n' ' ')" = "12.8 12.8 12.8 25.6 25.6 25.6 51.2 51.2 51.2 102.4 102.4 102.4 " ] &&
	[ "$(col "$r" 3 | tr '\n' ' ')" = "2 0 1 2 0 1 2 0 1 2 0 1 " ] && ok || bad "row order"
# the failed points: recorded with the reason, and only them
[ "$(grep -c ',ok$' "$r")" -eq 8 ] && ok || bad "8 points should succeed"
[ "$(grep -c '"config: .*core.count.*out of range' "$r")" -eq 4 ] && ok ||
	bad "core.count=0 points not recorded as failed"
# latency never grows with bandwidth, and does fall over the range
for c in 2 1; do
	awk -F, -v c=$c 'NR > 1 && $3 == c { print $6 }' "$r" > "$tmp/lat"
	sort -g -r -c "$tmp/lat" 2> /dev/null && ok || bad "core.count=$c: latency not monotonic: $(tr '\n' ' ' < "$tmp/lat")"
	awk 'NR == 1 { f = $1 } END { exit !(f > 2 * $1) }' "$tmp/lat" && ok ||
		bad "core.count=$c: 8x bandwidth should more than halve the latency"
done
awk -F, 'NR > 1 && $2 == "12.8" && $3 != "0" && $14 != "memory" { exit 1 }' "$r" && ok ||
	bad "at 12.8 GB/s the chain should be memory-bound: $(grep '^0,' "$r")"
# hbm.bandwidth_gbps is a tuning key: one binary per core count, reused by
# every later bandwidth; a failed configuration reuses nothing
[ "$(col "$r" 15 | tr '\n' ' ')" = "no no no yes no yes yes no yes yes no yes " ] && ok ||
	bad "compile_reused: $(col "$r" 15 | tr '\n' ' ')"
[ "$(ls "$tmp/a/cache/"*.om | wc -l)" -eq 2 ] && ok || bad "2 binaries expected in the cache"
# the compiler is part of a binary's identity (a rebuilt simsweep recompiles)
grep -q '^compiler=[0-9a-f]\{16\}$' "$tmp/a/cache/"*.key && ok || bad "cache key without the compiler"
[ "$(grep -c ',yes,' "$tmp/a/timing.csv")" -eq 2 ] && ok || bad "compiled twice: $(cat "$tmp/a/timing.csv")"
[ -s "$tmp/a/points/0/trace/op_summary.csv" ] && [ -s "$tmp/a/points/0/trace/summary.json" ] &&
	ok || bad "a point's trace directory"
# plots: each metric against each key, a line per value of the other key
p=$tmp/a/plots/warm_latency_us_vs_hbm_bandwidth_gbps
[ -s "$p.dat" ] && [ -s "$p.gp" ] && grep -q '^# core.count=1$' "$p.dat" &&
	[ "$(grep -c '^# core.count=' "$p.dat")" -eq 2 ] && ok || bad "plot data $p.dat"
# clean numbers: the keys' values as given, not 51.200000000000003
grep -q '^51.2 ' "$p.dat" && ! grep -q '0000000' "$p.dat" && ok || bad "numbers in $p.dat"
# the bound per point: a cell each, the first key across, the failed ones named
m=$tmp/a/plots/bound_map.dat
[ "$(grep -c '^[0-9]' "$m")" -eq 12 ] && [ "$(grep -c '"failed" [0-9]*$' "$m")" -eq 4 ] &&
	awk -F, 'NR > 1 && $16 == "ok" { print $1, $14 }' "$r" > "$tmp/bounds" &&
	[ "$(awk '/^[0-9]/ && $4 != "\"failed\"" { gsub(/"/, "", $4); print $5, $4 }' "$m")" = "$(cat "$tmp/bounds")" ] &&
	grep -q '^0 2 2 "memory" 0$' "$m" && ok || bad "bound map: $(cat "$m")"
# two keys varied: a heat map per metric, a cell per successful point
h=$tmp/a/plots/heat_warm_latency_us
[ "$(awk '/^# index 1/ { exit } /^[0-9]/ { n++ } END { print n }' "$h.dat")" -eq 8 ] &&
	[ "$(sed -n '/^# index 1/,$p' "$h.dat" | grep -c '^[0-9]')" -eq 4 ] && grep -q "^0 2 $(awk -F, '$1 == 0 { print $6 }' "$r" | sed 's/0*$//; s/\.$//') 0$" "$h.dat" &&
	ok || bad "heat map: $(cat "$h.dat")"
if command -v gnuplot > /dev/null; then
	[ -s "$p.png" ] && [ -s "$p.svg" ] && [ -s "$tmp/a/plots/util_MTE2_vs_core_count.png" ] &&
		[ -s "$tmp/a/plots/bound_map.png" ] && [ -s "$h.svg" ] &&
		ok || bad "gnuplot drawings: $(cat "$tmp/a/plots/gnuplot.log")"
	# no text on another (tests/svg_labels.py: the maps name cells, and
	# many cells share a name, so repeats are not counted here)
	for c in bound_map heat_warm_latency_us warm_latency_us_vs_hbm_bandwidth_gbps; do
		n=$(/usr/bin/python3 "$srcdir/tests/svg_labels.py" "$tmp/a/plots/$c.svg" 2> /dev/null)
		case $n in *" overlaps 0 crossings 0 "*) ok ;; *) bad "$c.svg: $n" ;; esac
	done
fi

# --- the same study as jobs: GNU parallel, then merge ---------------------------
study "$tmp/b" --emit-jobs > "$tmp/b.out" 2>&1 && ok || bad "--emit-jobs: $(cat "$tmp/b.out")"
[ "$(wc -l < "$tmp/b/jobs.txt")" -eq 12 ] && ok || bad "jobs.txt: 12 lines expected"
grep -q -- '--spec .*/b/spec.txt --point 11$' "$tmp/b/jobs.txt" && ok || bad "job line: $(tail -1 "$tmp/b/jobs.txt")"
bash -n "$tmp/b/sweep.sbatch" && grep -qx '#SBATCH --array=0-11' "$tmp/b/sweep.sbatch" &&
	grep -q 'SLURM_ARRAY_TASK_ID' "$tmp/b/sweep.sbatch" && ok || bad "sweep.sbatch"
if command -v parallel > /dev/null; then
	(cd / && parallel -j2 < "$tmp/b/jobs.txt") > "$tmp/par.out" 2>&1 && ok || bad "parallel: $(cat "$tmp/par.out")"
	st3 "$sweep" --merge "$tmp/b" > "$tmp/m.out" 2>&1 && ok || bad "merge: $(cat "$tmp/m.out")"
	cmp "$tmp/a/results.csv" "$tmp/b/results.csv" && ok || bad "parallel results differ from the local run"
else
	bad "GNU parallel is not installed (apt-get install parallel)"
fi
# a missing point: reported, merge fails, then the point runs alone
rm "$tmp/b/points/4/result.csv"
if "$sweep" --merge "$tmp/b" > "$tmp/m.out" 2>&1; then bad "merge with a point missing exits 0"
else grep -q 'points missing: 4$' "$tmp/m.out" && ok || bad "missing point: $(cat "$tmp/m.out")"; fi
[ "$(wc -l < "$tmp/b/results.csv")" -eq 12 ] && ok || bad "merge should keep the 11 rows present"
"$sweep" --spec "$tmp/b/spec.txt" --point 4 2> /dev/null && st3 "$sweep" --merge "$tmp/b" 2> /dev/null &&
	cmp "$tmp/a/results.csv" "$tmp/b/results.csv" && ok || bad "rerun of point 4"
# no gnuplot: data and scripts, a message, the same exit (3: 4 points failed)
st3 env PATH=/nonexistent "$sweep" --merge "$tmp/b" > "$tmp/m.out" 2>&1 &&
	grep -q 'gnuplot is not on PATH' "$tmp/m.out" && ok || bad "without gnuplot: $(cat "$tmp/m.out")"

# --- jobs racing for one binary: one compiles, the others wait for it ---------------
"$sweep" --soc Ascend310 --model "$tmp/chain.onnx" --vary runtime.task_gap_us=0,0.5,1,2,3,4 \
	--out "$tmp/c" --emit-jobs > /dev/null && (cd / && parallel -j4 < "$tmp/c/jobs.txt") 2> /dev/null &&
	"$sweep" --merge "$tmp/c" 2> /dev/null && ok || bad "racing jobs"
[ "$(grep -c ',ok$' "$tmp/c/results.csv")" -eq 6 ] && [ "$(grep -c ',yes,' "$tmp/c/timing.csv")" -eq 1 ] &&
	[ "$(ls "$tmp/c/cache" | grep -c '\.tmp\.')" -eq 0 ] && ok ||
	bad "one compile for six jobs: $(cat "$tmp/c/timing.csv")"

# --- a compile error and a batch sweep ------------------------------------------------
st3 "$sweep" --soc Ascend310 --model "$tmp/chain.onnx" --vary ub.size_kb=1,248 --batch 1,2 \
	--out "$tmp/d" 2> /dev/null && ok || bad "ub/batch study (exit 3: the ub.size_kb=1 points fail)"
grep -q '^0,1,1,.*,"compile: .*does not fit the UB' "$tmp/d/results.csv" && ok ||
	bad "compile error not recorded: $(cat "$tmp/d/results.csv")"
awk -F, '$2 == "248" && $NF == "ok" { n++ } END { exit n != 2 }' "$tmp/d/results.csv" && ok ||
	bad "batch 1 and 2 at 248 KiB should run"

# --- simrun and simsweep run one point alike: the same seeded inputs (an
# int64 ids input included) and the same latencies -----------------------------------
simatc=$(pwd)/simatc
/usr/bin/python3 "$srcdir/tests/sweep_gather_model.py" "$tmp/gather.onnx" &&
	"$simatc" --model="$tmp/gather.onnx" --framework=5 --soc_version=Ascend310 \
		--output="$tmp/gather" > /dev/null &&
	"$sweep" --soc Ascend310 --model "$tmp/gather.onnx" --vary hbm.bandwidth_gbps=12.8 \
		--out "$tmp/g" > /dev/null 2>&1 && ok || bad "gather model, compile or study"
for mode in timing full; do
	if [ $mode = full ]; then
		"$sweep" --soc Ascend310 --model "$tmp/gather.onnx" --vary hbm.bandwidth_gbps=12.8 \
			--mode full --out "$tmp/gf" > /dev/null 2>&1 || bad "gather study, full mode"
		csv=$tmp/gf/results.csv
	else
		csv=$tmp/g/results.csv
	fi
	want=$("$(pwd)/simrun" "$tmp/gather.om" --mode=$mode --set hbm.bandwidth_gbps=12.8 --json |
		/usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin)
print("%.3f,%.3f" % (j["first_latency_us"], j["warm_latency_us"]))')
	got=$(awk -F, 'NR == 2 { print $4 "," $5 }' "$csv")
	[ -n "$want" ] && [ "$want" = "$got" ] && ok ||
		bad "$mode mode: simrun says first,warm $want us, simsweep $got"
done
# runtime.model_exec_us: once per execution, before its first task
lat() {
	"$(pwd)/simrun" "$tmp/gather.om" --mode=timing --loop 2 --set "runtime.model_exec_us=$1" --json |
		/usr/bin/python3 -c 'import json, sys; print("%.3f" % json.load(sys.stdin)["warm_latency_us"])'
}
l0=$(lat 0) && l50=$(lat 50) &&
	awk -v a="$l0" -v b="$l50" 'BEGIN { exit !(b - a > 49.99 && b - a < 50.01) }' && ok ||
	bad "model_exec_us=50 should add 50 us to an execution: $l0 -> $l50"

# --- errors ------------------------------------------------------------------------------
"$sweep" --soc Ascend310 --model "$tmp/chain.onnx" --vary core.bogus=1 --out "$tmp/e" 2> "$tmp/err" &&
	bad "unknown key accepted" || { grep -q 'core.bogus' "$tmp/err" && ok || bad "unknown key: $(cat "$tmp/err")"; }
"$sweep" --merge "$tmp" 2> "$tmp/err" && bad "merge of a non-study" ||
	{ grep -q 'spec.txt' "$tmp/err" && ok || bad "merge of a non-study: $(cat "$tmp/err")"; }

# --- the key classes against the compiler: every key compiler/ reads is
# layout or tuning (a key it reads must never be classed runtime) ----------------------------
"$sweep" --list-keys > "$tmp/keys"
for f in $(grep -oh 'cfg->[a-z0-9]*_[a-z0-9_]*' "$srcdir"/compiler/*.c | sort -u | sed 's/cfg->//; s/_/./'); do
	c=$(awk -v k="$f" '$1 == k { print $2 }' "$tmp/keys")
	case $c in layout | tuning) ok ;; *) bad "compiler/ reads $f, classed '$c' in study/compile_keys.def" ;; esac
done
if grep -q 'soc_gbps_to_bpc\|soc_cycle_ns' "$srcdir"/compiler/*.c; then
	awk '$1 == "core.freq_mhz" { exit $2 == "runtime" }' "$tmp/keys" && ok || bad "core.freq_mhz is read"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
