#!/bin/sh
# make bench: how fast the simulator runs the test kernels.
# Prints simulated instructions per wall second and simulated cycles per wall
# second, in full mode (real arithmetic) and timing mode, and the ratio of the
# two (the cost of the arithmetic).  Wall time is the best of 3 runs.
# usage: bench.sh BUILD_DIR KERNEL_DIR
set -eu
build=$1
kdir=$2
simrun="$build/simrun"

now() { date +%s.%N; }

bench() { # name soc blocks reps args...
	name=$1 soc=$2 blocks=$3 reps=$4
	shift 4
	for mode in full timing; do
		best=1e30
		for try in 1 2 3; do
			t0=$(now)
			i=0
			while [ $i -lt "$reps" ]; do
				out=$("$simrun" --soc "$soc" --kernel "$kdir/$name.s" --block-dim "$blocks" \
					--mode "$mode" --json "$@")
				i=$((i + 1))
			done
			t1=$(now)
			t=$(echo "$t1 $t0 $reps" | awk '{printf "%.6f", ($1 - $2) / $3}')
			best=$(echo "$best $t" | awk '{ print ($2 < $1) ? $2 : $1 }')
		done
		cycles=$(echo "$out" | sed 's/.*"cycles": \([0-9]*\).*/\1/' | head -n 1)
		insns=$(echo "$out" | sed 's/.*"insns_issued": \([0-9]*\).*/\1/' | head -n 1)
		eval "wall_$mode=$best"
		printf '%-10s %-11s %-6s %9s cycles %7s insns %8.4f s  %12.0f insns/s  %14.0f cycles/s\n' \
			"$name" "$soc" "$mode" "$cycles" "$insns" "$best" \
			"$(echo "$insns $best" | awk '{print $1 / $2}')" \
			"$(echo "$cycles $best" | awk '{print $1 / $2}')"
	done
	echo "$name $wall_full $wall_timing" | awk '{printf "%-10s full/timing wall-time ratio: %.2f\n", $1, $2 / $3}'
}

echo "davinci-sim benchmark ($(date -u +%Y-%m-%d), $(nproc) cpus; process start-up included)"
bench gemm_db Ascend910 1 5 --alloc 131072:rand --alloc 131072:rand --alloc 131072
n=$((8 * 1024 * 1024))
bench vadd Ascend910 32 3 --alloc $((2 * n)):rand --alloc $((2 * n)):rand --alloc $((2 * n)) --arg $n
