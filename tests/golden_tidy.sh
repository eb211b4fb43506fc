#!/bin/sh
# golden_tidy.sh [FILE]: keep the last line of each key of the golden file
# (DAVINCI_GOLDEN=update appends, tests/golden.h), sorted, so that a
# regenerated file diffs line by line against the committed one.
set -eu
f=${1:-"$(dirname "$0")/golden/cycles.tsv"}
tmp="$f.tmp.$$"
# reversed, the first line of a key is its last; LC_ALL=C: the same order everywhere
tac "$f" | awk -F '\t' '!seen[$1]++' | LC_ALL=C sort > "$tmp"
mv "$tmp" "$f"
