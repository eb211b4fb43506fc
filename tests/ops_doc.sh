#!/bin/sh
# docs/ops.md is generated from the op table: fail when it is stale.
# (Regenerate with: ./simatc --ops > docs/ops.md)
set -eu
./simatc --ops > ops_doc.out
if ! cmp -s ops_doc.out "$srcdir/docs/ops.md"; then
	echo "docs/ops.md is out of date with compiler/ops.def; run: ./simatc --ops > docs/ops.md"
	diff -u "$srcdir/docs/ops.md" ops_doc.out | head -40
	exit 1
fi
rm -f ops_doc.out
echo "1 passed, 0 failed"
