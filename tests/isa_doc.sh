#!/bin/sh
# docs/isa.md is generated from the ISA table: fail when it is stale.
# (Regenerate with: ./simdis --isa > docs/isa.md)
set -eu
./simdis --isa > isa_doc.out
if ! cmp -s isa_doc.out "$srcdir/docs/isa.md"; then
	echo "docs/isa.md is out of date with isa/isa.def; run: ./simdis --isa > docs/isa.md"
	diff -u "$srcdir/docs/isa.md" isa_doc.out | head -40
	exit 1
fi
rm -f isa_doc.out
echo "1 passed, 0 failed"
