#!/bin/sh
# The bottleneck advisor on traces of models and kernels built to have a
# known bottleneck (tests/advisor_models.py, tests/kernels/serial.s): each
# must get its verdict and the recommendation that fixes it; the JSON parses
# and has the promised keys; docs/advisor.md states the thresholds the code
# uses; a missing or malformed trace gives a message naming the file (and
# line) and exit status 1, bad arguments 2.
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
k="$srcdir/tests/kernels"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check WHAT DIR VERDICT ACTION: simprof --json on DIR parses, has the
# promised keys, gives VERDICT, the top op has that bound, and one of the
# recommendations is ACTION naming an op
check() {
	what=$1 dir=$2 want=$3 act=$4
	if ! ./simprof "$dir" --json > "$tmp/r.json" 2> "$tmp/r.err"; then
		bad "$what: simprof failed: $(cat "$tmp/r.err")"
		return
	fi
	if msg=$("$py" - "$tmp/r.json" "$want" "$act" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
want, act = sys.argv[2], sys.argv[3]
for key, kind in (("verdict", str), ("evidence", list), ("recommendations", list),
                  ("ops", list), ("time_by_bound", dict), ("thresholds", dict)):
    if not isinstance(d.get(key), kind):
        sys.exit(f"no {key} ({kind.__name__})")
for op in d["ops"]:
    for key in ("name", "bound", "duration_us", "share"):
        if key not in op:
            sys.exit(f"op without {key}: {op}")
if d["verdict"] != want:
    sys.exit(f"verdict {d['verdict']}, not {want}; evidence: {d['evidence']}")
if d["ops"][0]["bound"] != want:
    sys.exit(f"top op {d['ops'][0]['name']} is {d['ops'][0]['bound']}")
if not d["evidence"] or not all(isinstance(e, str) and e for e in d["evidence"]):
    sys.exit("empty evidence")
if not any(r["action"] == act and r["bound"] == want and r["ops"] and r["text"]
           for r in d["recommendations"]):
    sys.exit(f"no {act} recommendation: {d['recommendations']}")
print(d["ops"][0]["name"], d["ops"][0]["reason"])
EOF
	); then
		ok
		echo "$what: $want: $msg"
	else
		bad "$what: $msg"
	fi
}

# --- models ------------------------------------------------------------------
"$py" "$srcdir/tests/advisor_models.py" "$tmp" && ok || bad "advisor_models.py"
printf '{"Switch": {"GraphFusion": {"ElementwiseFusionPass": "off"}}}\n' > "$tmp/nofuse.json"
# Each model is a scenario for one rule, run without the execution's fixed cost
# (runtime.model_exec_us, 136 us on the 910), which would outweigh these small
# models' kernels; $rset replaces that --set.
model() { # NAME VERDICT ACTION [simatc flags...]; $rset: simrun's --set flags
	name=$1 want=$2 act=$3
	shift 3
	# shellcheck disable=SC2086 # rset is split on purpose
	if ./simatc --model="$tmp/$name.onnx" --framework=5 --output="$tmp/$name" \
		--soc_version=Ascend910 "$@" > "$tmp/$name.log" 2>&1 &&
		./simrun --soc Ascend910 "$tmp/$name.om" --mode timing --trace "$tmp/tr_$name" \
			${rset:---set runtime.model_exec_us=0} >> "$tmp/$name.log" 2>&1; then
		check "$name" "$tmp/tr_$name" "$want" "$act"
	else
		bad "$name: compile or run failed: $(tail -5 "$tmp/$name.log")"
	fi
}
model gemm cube fewer_flops
model eltwise memory fuse --fusion_switch_file="$tmp/nofuse.json"
# tiny tasks on a chip whose scheduler leaves 1.5 us between tasks (the 910's
# calibrated gap is 0, bench/calibrate.py): the gaps dominate
rset="--set runtime.task_gap_us=1.5 --set runtime.model_exec_us=0" \
	model tiny launch fuse --fusion_switch_file="$tmp/nofuse.json"
# The same chain on two of the 910's cores: their DMA engines move 0.3-0.4 of
# what HBM2 carries, so the verdict is dma (not memory) and the advice is
# not faster memory
./simrun --soc Ascend910 --set core.count=2 --dump-config > "$tmp/two.ini"
if ./simatc --model="$tmp/eltwise.onnx" --framework=5 --output="$tmp/eltwise2" \
	--soc_version="$tmp/two.ini" --fusion_switch_file="$tmp/nofuse.json" \
	> "$tmp/eltwise2.log" 2>&1 &&
	./simrun --soc "$tmp/two.ini" "$tmp/eltwise2.om" --mode timing --trace "$tmp/tr_eltwise2" \
		>> "$tmp/eltwise2.log" 2>&1; then
	check eltwise2 "$tmp/tr_eltwise2" dma spread_dma
	./simprof "$tmp/tr_eltwise2" | grep -q 'of the 1200 GB/s HBM2' && ok ||
		bad "eltwise2: the evidence names the SoC's memory (HBM2)"
else
	bad "eltwise2: compile or run failed: $(tail -5 "$tmp/eltwise2.log")"
fi

# --- kernels -----------------------------------------------------------------
kernel() { # NAME VERDICT ACTION simrun-args...
	name=$1 want=$2 act=$3
	shift 3
	if ./simrun --soc Ascend910 --mode timing --kernel "$k/$name.s" "$@" \
		--trace "$tmp/tr_$name" > "$tmp/$name.log" 2>&1; then
		check "$name" "$tmp/tr_$name" "$want" "$act"
	else
		bad "$name: run failed: $(tail -5 "$tmp/$name.log")"
	fi
}
# 32 blocks of 64 tiles of 2048 fp16 elements: every pipe waits on the last
n=$((32 * 64 * 2048))
kernel serial sync double_buffer --alloc $((2 * n)):rand --alloc $((2 * n)) --arg $n --block-dim 32
# the same shape double-buffered streams at HBM bandwidth instead
n=8388608
kernel vadd memory cut_bytes --alloc $((2 * n)):rand --alloc $((2 * n)):rand --alloc $((2 * n)) \
	--arg $n --block-dim 32
# one block on the 32-core 910: its core is busy, 31 are idle
kernel gemm_db parallelism raise_block_dim --alloc 131072:rand --alloc 131072:rand \
	--alloc 131072 --block-dim 1

# --- the text report, --top ----------------------------------------------------
if [ -d "$tmp/tr_gemm" ]; then
	./simprof "$tmp/tr_gemm" > "$tmp/gemm.txt" && grep -q '^verdict: cube-bound' "$tmp/gemm.txt" &&
		grep -q '^evidence:' "$tmp/gemm.txt" && grep -q '^recommendations:' "$tmp/gemm.txt" &&
		grep -q '^  matmul ' "$tmp/gemm.txt" && ok || bad "text report: $(cat "$tmp/gemm.txt")"
fi
if [ -d "$tmp/tr_tiny" ]; then
	./simprof "$tmp/tr_tiny" --json --top 5 | "$py" -c \
		'import json,sys; sys.exit(len(json.load(sys.stdin)["ops"]) != 5)' && ok || bad "--top 5"
	./simprof "$tmp/tr_tiny" --json --top 0 | "$py" -c \
		'import json,sys; sys.exit(len(json.load(sys.stdin)["ops"]) != 302)' && ok || bad "--top 0"
	# the chain to fuse starts at the first op after the input's TransData
	./simprof "$tmp/tr_tiny" | grep -q 'fuse the adjacent element-wise ops relu0 -> abs1 -> ' &&
		ok || bad "tiny: the fusion recommendation names the chain"
fi

# --- --model: the recommendations measured by recompiling and re-simulating --
# The unfused element-wise chain is memory-bound: twice the HBM bandwidth and
# fusion on must each make it faster; the baseline re-simulates the trace.
# (on the chip the trace ran on: the 910 without the execution's fixed cost)
./simrun --soc Ascend910 --set runtime.model_exec_us=0 --dump-config > "$tmp/noexec.ini"
if [ -d "$tmp/tr_eltwise" ]; then
	if ./simprof "$tmp/tr_eltwise" --json --model "$tmp/eltwise.onnx" --soc "$tmp/noexec.ini" \
		--fusion_switch_file "$tmp/nofuse.json" --work "$tmp/whatif" > "$tmp/q.json" &&
		"$py" - "$tmp/q.json" "$tmp/tr_eltwise/summary.json" << 'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
m = {v["name"]: v for v in q["measured"]}
assert q["verdict"] == "memory", q["verdict"]
assert all(v["ok"] for v in m.values()), m
base = m["baseline"]
assert abs(base["warm_latency_us"] - s["warm_latency_us"]) < 1e-3 * s["warm_latency_us"], (base, s)
assert m["2x memory bandwidth"]["speedup"] > 1.2, m["2x memory bandwidth"]
assert m["fusion on"]["speedup"] > 1.2, m["fusion on"]
EOF
	then ok; else bad "--model: measured variants: $(head -c 600 "$tmp/q.json")"; fi
	./simprof "$tmp/tr_eltwise" --soc Ascend910 > /dev/null 2>&1 && bad "--soc without --model" || ok
fi

# dma-bound: twice the memory bandwidth changes nothing, twice each core's DMA
# path does: the re-simulation confirms the verdict and its advice
if [ -d "$tmp/tr_eltwise2" ]; then
	if ./simprof "$tmp/tr_eltwise2" --json --model "$tmp/eltwise.onnx" --soc "$tmp/two.ini" \
		--fusion_switch_file "$tmp/nofuse.json" --work "$tmp/whatif2" > "$tmp/q2.json" &&
		"$py" - "$tmp/q2.json" << 'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
m = {v["name"]: v for v in q["measured"]}
assert q["verdict"] == "dma", q["verdict"]
assert all(v["ok"] for v in m.values()), m
assert m["2x memory bandwidth"]["speedup"] < 1.02, m["2x memory bandwidth"]
assert m["2x DMA path"]["speedup"] > 1.15, m["2x DMA path"]
EOF
	then ok; else bad "--model, dma: measured variants: $(head -c 800 "$tmp/q2.json")"; fi
fi

# --- a trace rewritten by another CSV writer (CRLF, minimal quoting) ----------
if [ -d "$tmp/tr_eltwise" ]; then
	mkdir "$tmp/crlf"
	cp "$tmp/tr_eltwise/summary.json" "$tmp/crlf/"
	"$py" - "$tmp/tr_eltwise/op_summary.csv" "$tmp/crlf/op_summary.csv" << 'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
with open(sys.argv[2], "w", newline="") as f:
    csv.writer(f, lineterminator="\r\n").writerows(rows)
EOF
	check "eltwise, CRLF" "$tmp/crlf" memory fuse
	# without task_time.csv: a note, not an error
	./simprof "$tmp/crlf" | grep -q 'no task_time.csv' && ok || bad "no task_time.csv note"
fi

# --- an msprof-layout trace (PROF_.../device_0/summary/op_summary_*.csv, no
# summary.json): found, and analysed with the roofs of the chip --soc names
if [ -d "$tmp/tr_eltwise" ]; then
	p="$tmp/msprof/PROF_000001_20261207000000_ABCDEFGHIJ/device_0/summary"
	mkdir -p "$p"
	cp "$tmp/tr_eltwise/op_summary.csv" "$p/op_summary_0_1_1_20261207000000.csv"
	cp "$tmp/tr_eltwise/task_time.csv" "$p/task_time_0_1_1_20261207000000.csv"
	./simprof "$tmp/msprof" --soc Ascend910 --json > "$tmp/m.json" &&
		"$py" - "$tmp/m.json" << 'EOF' && ok || bad "msprof layout: $(head -c 400 "$tmp/m.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "memory" and d["soc"] == "Ascend910" and d["model"] == "eltwise", d
assert any("no summary.json" in n for n in d["notes"]), d["notes"]
EOF
	./simprof "$tmp/msprof" > /dev/null 2> "$tmp/m.err"
	[ $? = 1 ] && grep -q 'for an msprof trace, name the chip: --soc S' "$tmp/m.err" &&
		ok || bad "msprof layout without --soc: $(cat "$tmp/m.err")"
fi

# --- the documented thresholds are the code's ----------------------------------
./simprof --thresholds > "$tmp/thr.md" && [ "$(wc -l < "$tmp/thr.md")" -ge 8 ] && ok ||
	bad "simprof --thresholds"
while IFS= read -r line; do
	grep -qxF -- "$line" "$srcdir/docs/advisor.md" && ok ||
		bad "docs/advisor.md lacks the threshold line: $line"
done < "$tmp/thr.md"

# --- errors ------------------------------------------------------------------------
expect() { # WHAT STATUS NEEDLE command...
	what=$1 want=$2 needle=$3
	shift 3
	"$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$what: exit $rc, not $want: $(cat "$tmp/err")"
	elif grep -qF -- "$needle" "$tmp/err"; then
		ok
	else
		bad "$what: stderr lacks '$needle': $(cat "$tmp/err")"
	fi
}
expect "missing directory" 1 "$tmp/nope: No such file or directory" ./simprof "$tmp/nope"
expect "a file, not a directory" 1 "not a directory" ./simprof "$tmp/nofuse.json"
mkdir "$tmp/empty"
expect "no op_summary.csv" 1 "empty/op_summary.csv: No such file" ./simprof "$tmp/empty"
if [ -d "$tmp/tr_gemm" ]; then
	mk() { rm -rf "$tmp/$1" && cp -r "$tmp/tr_gemm" "$tmp/$1"; }
	mk nosum && rm "$tmp/nosum/summary.json"
	expect "no summary.json" 1 "nosum/summary.json: No such file" ./simprof "$tmp/nosum"
	mk badsum && head -c 40 "$tmp/tr_gemm/summary.json" > "$tmp/badsum/summary.json"
	expect "truncated summary.json" 1 "badsum/summary.json:1:" ./simprof "$tmp/badsum"
	mk short && echo '0,1,2' >> "$tmp/short/op_summary.csv"
	l=$(wc -l < "$tmp/short/op_summary.csv")
	expect "a short CSV line" 1 "short/op_summary.csv:$l: 3 fields, but the header has" \
		./simprof "$tmp/short"
	mk quote && printf '0,1,"abc\n' >> "$tmp/quote/op_summary.csv"
	l=$(wc -l < "$tmp/quote/op_summary.csv")
	expect "an unterminated quote" 1 "quote/op_summary.csv:$l: unterminated quoted field" \
		./simprof "$tmp/quote"
	mk nan && "$py" - "$tmp/tr_gemm/op_summary.csv" "$tmp/nan/op_summary.csv" << 'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
rows[3][rows[0].index("Task Duration(us)")] = "abc"
csv.writer(open(sys.argv[2], "w", newline=""), quoting=csv.QUOTE_ALL).writerows(rows)
EOF
	expect "not a number" 1 "nan/op_summary.csv:4: column 'Task Duration(us)': 'abc' is not a number" \
		./simprof "$tmp/nan"
	mk nocol && "$py" - "$tmp/tr_gemm/op_summary.csv" "$tmp/nocol/op_summary.csv" << 'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
i = rows[0].index("mac_ratio")
csv.writer(open(sys.argv[2], "w", newline="")).writerows([r[:i] + r[i + 1:] for r in rows])
EOF
	expect "a missing column" 1 "nocol/op_summary.csv:1: no column 'mac_ratio'" ./simprof "$tmp/nocol"
fi
expect "no directory given" 2 "a trace directory is required" ./simprof
expect "unknown option" 2 "unknown option '--frob'" ./simprof "$tmp" --frob
expect "bad --top" 2 "--top 'x'" ./simprof "$tmp" --top x
expect "two directories" 2 "one trace directory at a time" ./simprof "$tmp/a" "$tmp/b"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
