#!/bin/sh
# simserve from the command line, on an injected service table (no model):
# the summary, JSON, CSV and a QPS sweep come out; the same seed gives the
# same bytes; bad input gives a message naming the culprit and a non-zero
# exit, never a crash.
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/table.csv" <<'T'
# model m
batch,concurrency,h2d_us,device_us,d2h_us
1,1,30,550,3
1,2,33,745,3
4,1,99,1127,4
4,2,140,2182,4
16,1,388,4425,6
16,2,555,8702,6
T
S="./simserve --service-table $tmp/table.csv"

$S --qps 800 --requests 5000 --streams 2 --max-queue-delay-us 1000 > "$tmp/text" &&
	grep -q '^  total ' "$tmp/text" && grep -q '^batch sizes' "$tmp/text" && ok ||
	bad "text summary: $(cat "$tmp/text")"
$S --qps 800 --requests 5000 --streams 2 --json > "$tmp/json" &&
	grep -q '"latency_us": {"total": {"mean": ' "$tmp/json" && grep -q '"utilisation": ' "$tmp/json" &&
	ok || bad "json: $(cat "$tmp/json")"
$S --qps 800 --requests 3000 --seed 4 --csv "$tmp/a.csv" > /dev/null &&
	$S --qps 800 --requests 3000 --seed 4 --csv "$tmp/b.csv" > /dev/null &&
	cmp -s "$tmp/a.csv" "$tmp/b.csv" && [ "$(wc -l < "$tmp/a.csv")" -eq 3001 ] &&
	head -1 "$tmp/a.csv" | grep -q '^id,arrival_us,start_us,end_us,batch,variant,stream' &&
	ok || bad "same seed, same CSV"
$S --qps-sweep 200:2000:600 --requests 3000 --slo-p99-ms 15 --plot "$tmp/plot" > "$tmp/sweep" &&
	grep -q 'highest QPS with P99 <= 15 ms' "$tmp/sweep" && [ -s "$tmp/plot/serve_sweep.dat" ] &&
	[ -s "$tmp/plot/serve_sweep.gp" ] && ok || bad "sweep: $(cat "$tmp/sweep")"
printf 'timestamp_us,model,size\n0,m,1\n10.5,m,2\n400,m\n' > "$tmp/trace.csv"
$S --trace "$tmp/trace.csv" --max-queue-delay-us 100 --csv "$tmp/t.csv" > /dev/null &&
	[ "$(wc -l < "$tmp/t.csv")" -eq 4 ] && ok || bad "trace replay"

expect_err() { # what needle command...
	what=$1 needle=$2
	shift 2
	"$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ $rc -eq 0 ]; then
		bad "$what: exit 0"
	elif [ $rc -gt 2 ]; then
		bad "$what: exit $rc (a crash?): $(cat "$tmp/err")"
	elif grep -qF -- "$needle" "$tmp/err"; then
		ok
	else
		bad "$what: stderr lacks '$needle': $(cat "$tmp/err")"
	fi
}
printf '0,m\n200,m\n100,m\n' > "$tmp/unsorted.csv"
expect_err "unsorted trace" "unsorted.csv:3: timestamp 100.000 us is before" $S --trace "$tmp/unsorted.csv"
printf '0,m\n-1,m\n' > "$tmp/neg.csv"
expect_err "negative timestamp" "neg.csv:2: negative timestamp" $S --trace "$tmp/neg.csv"
expect_err "qps 0" "--qps 0: the arrival rate must be > 0" $S --qps 0 --requests 10
expect_err "qps < 0" "--qps -5: the arrival rate must be > 0" $S --qps -5 --requests 10
expect_err "max batch too large" "--max-batch 32: larger than the largest compiled variant (batch 16)" \
	$S --qps 100 --requests 10 --max-batch 32
expect_err "batch not compiled" "batch 8 is not compiled (variants: 1,4,16)" \
	$S --qps 100 --requests 10 --batch-sizes 1,8
expect_err "streams beyond the table" "--streams 3 needs 3" $S --qps 100 --requests 10 --streams 3
expect_err "no stop" "give --requests N or --duration S" $S --qps 100
expect_err "missing table" "nope.csv: No such file" ./simserve --service-table "$tmp/nope.csv" --qps 1 --requests 1
expect_err "missing model" "nope.om" ./simserve --model "$tmp/nope.om" --qps 1 --requests 1
expect_err "bad sweep" "--qps-sweep '5:1:1'" $S --qps-sweep 5:1:1 --requests 10
expect_err "slo policy without an SLO" "--policy slo needs --slo-p99-ms" $S --qps 100 --requests 10 --policy slo
expect_err "bad schedule" "--schedule '1:500'" $S --schedule 1:500 --requests 10
expect_err "two arrival processes" "give one of --qps R" $S --schedule 0:500 --qps 10 --requests 10
$S --schedule 0:500,1:2000,2:0 --requests 100000 --json > "$tmp/sch" &&
	grep -q '"requests": 2[45][0-9][0-9],' "$tmp/sch" && ok || bad "schedule: $(cat "$tmp/sch")"
expect_err "unknown option" "unknown option '--frob'" $S --frob
expect_err "request too big" "trace line 1: a request of 5 items does not fit a batch (--max-batch 4)" \
	sh -c "printf '0,m,5\n' > '$tmp/big.csv' && $S --trace '$tmp/big.csv' --max-batch 4"

# a sixth column: the part of the device time that uses no AI core
printf 'batch,concurrency,h2d_us,device_us,d2h_us,fixed_us\n1,1,30,550,3,136\n1,2,33,745,3,136\n' > "$tmp/fx.csv"
./simserve --service-table "$tmp/fx.csv" --qps 800 --requests 2000 --streams 2 > /dev/null && ok ||
	bad "a table with fixed_us"
printf '1,1,30,550,3,550\n' > "$tmp/fxbad.csv"
expect_err "fixed_us not below device_us" "fxbad.csv:1: batch in 1..1024" \
	./simserve --service-table "$tmp/fxbad.csv" --qps 1 --requests 1

# several models on the chip: tables FILE:WEIGHT, a section per model and one for all
sed 's/^# model m$/# model n/' "$tmp/table.csv" > "$tmp/n.csv"
M="./simserve --service-table $tmp/table.csv:3 --service-table $tmp/n.csv:1"
$M --qps 800 --requests 4000 --streams 2 --max-queue-delay-us 500 > "$tmp/two" &&
	grep -q '^model m (weight 3: 75.0% of the requests)' "$tmp/two" &&
	grep -q '^model n (weight 1: 25.0% of the requests)' "$tmp/two" &&
	grep -q '^all 2 models on one chip:' "$tmp/two" &&
	grep -q '^requests 4000 ' "$tmp/two" && ok || bad "two models: $(cat "$tmp/two")"
$M --qps 800 --requests 4000 --streams 2 --json > "$tmp/two.json" &&
	grep -q '^{"models": \[{"weight": 3, "model": "m", ' "$tmp/two.json" &&
	grep -q '"all": {"policy": "fifo"' "$tmp/two.json" && ok || bad "two models json: $(cat "$tmp/two.json")"
$M --qps 800 --requests 300 --csv "$tmp/two.csv" > /dev/null &&
	head -1 "$tmp/two.csv" | grep -q ',latency_us,model$' &&
	[ "$(grep -c ',1$' "$tmp/two.csv")" -gt 30 ] && ok || bad "two models csv"
printf 'timestamp_us,model\n0,m\n10,n\n20,n\n' > "$tmp/mn.csv"
$M --trace "$tmp/mn.csv" --json > "$tmp/mn.json" &&
	grep -q '"model": "m", .*"requests": 1,.*"model": "n", .*"requests": 2,' "$tmp/mn.json" &&
	ok || bad "two models from a trace: $(cat "$tmp/mn.json")"
printf '0,m\n10,x\n' > "$tmp/mx.csv"
expect_err "trace model not served" "mx.csv:2: model 'x' is not served (serving 'm', 'n')" $M --trace "$tmp/mx.csv"
expect_err "two models, one name" "two models are named 'm'" \
	./simserve --service-table "$tmp/table.csv" --service-table "$tmp/table.csv" --qps 1 --requests 1
expect_err "sweep of two models" "--qps-sweep applies to one model; 2 are served" $M --qps-sweep 100:200:100 --requests 10
expect_err "weight 0" "the weight 0 must be a number > 0" $M --service-table "$tmp/n.csv:0" --qps 1 --requests 1

echo "serve.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
