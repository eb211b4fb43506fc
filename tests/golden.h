/* golden.h: every model test's simulated cycles and output bytes, pinned in
 * $srcdir/tests/golden/cycles.tsv, so that a change that moves a cycle or an
 * output byte fails `make check` until the file is regenerated on purpose
 * (README.md: `make golden`, and the commit says why the cycles moved).
 *
 * The file's lines are `KEY<TAB>CYCLES<TAB>CHECKSUM`, CHECKSUM the FNV-1a 64
 * of the outputs' bytes (in order) in 16 hex digits; the last line of a key
 * wins.  With DAVINCI_GOLDEN=update a run appends its line instead of
 * checking it (tests/golden_tidy.sh then keeps the last line per key, sorted). */
#ifndef DV_GOLDEN_H
#define DV_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "tensor_io.h"

/* 0 when KEY's line matches (or was appended in update mode); else -1 and
 * why (naming the key, both values and how to regenerate).  KEY: the test
 * program, the model (relative to its generated directory), the SoC and any
 * variant, '/'-separated, no whitespace. */
int tu_golden_check(const char *key, uint64_t cycles, const struct om_tensor *out,
		    unsigned nout, char *why, size_t len);

/* tu_golden_check, failing the Check test on a mismatch. */
void tu_golden(const char *key, uint64_t cycles, const struct om_tensor *out, unsigned nout);

#endif
