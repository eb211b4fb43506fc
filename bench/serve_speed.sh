#!/bin/sh
# simserve's own speed: requests simulated per wall-clock second in fast mode
# (service times from a table; characterising a model is the simulator's
# speed, which `make bench` measures above).  The table is ResNet-50's on
# Ascend310P3 as simserve characterised it (docs/serving.md), so the
# batcher sees realistic queues.
# usage: bench/serve_speed.sh BUILD_DIR [REQUESTS]
set -eu
[ $# -ge 1 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
n=${2:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/table.csv" <<'T'
# model resnet50
batch,concurrency,h2d_us,device_us,d2h_us
1,1,27.085,551.298,3.160
1,2,32.691,744.850,3.160
4,1,99.338,1126.561,3.641
4,2,139.527,2182.169,3.641
16,1,388.352,4425.265,5.560
16,2,554.677,8701.661,5.560
T
now() { date +%s.%N; }
run() { # label, simserve arguments...
	label=$1
	shift
	t0=$(now)
	"$build/simserve" --service-table "$tmp/table.csv" --requests "$n" "$@" --csv /dev/null > /dev/null
	t1=$(now)
	t2=$(now)
	"$build/simserve" --service-table "$tmp/table.csv" --requests "$n" "$@" > /dev/null
	t3=$(now)
	awk -v l="$label" -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
		printf "simserve %-44s %9.0f requests/s (%.2f s; with --csv %.0f/s)\n", l,
			n / (d - c), d - c, n / (b - a) }'
}
echo "simserve: $n requests per run, ResNet-50's service table (Ascend310P3)"
run "batch 1, 1 stream, 1500/s" --qps 1500 --batch-sizes 1 --policy fifo
run "FIFO 1,4,16, 2 ms delay, 1 stream, 3000/s" --qps 3000 --max-queue-delay-us 2000 --policy fifo
run "FIFO max 4, 2 streams, 3200/s" --qps 3200 --max-batch 4 --max-queue-delay-us 2000 --streams 2
run "SLO-aware 15 ms, 2 streams, 3000/s" --qps 3000 --slo-p99-ms 15 --streams 2
