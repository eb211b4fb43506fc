/* model_util.h: the test programs' generated models: a temporary directory
 * filled by one of the tests/ Python scripts (the models are made at test
 * time, nothing is committed or downloaded), and its removal. */
#ifndef DV_MODEL_UTIL_H
#define DV_MODEL_UTIL_H

#include <stddef.h>

/* Unless dir already names one: create $TMPDIR/davinci-<tag>-XXXXXX in dir
 * and run `/usr/bin/python3 $srcdir/tests/<script> DIR <args>` into it,
 * its output in DIR/log; a failure fails the test, naming the log and what
 * the script needs (needs, e.g. "python3-onnx"). */
void tu_models(char *dir, size_t len, const char *tag, const char *script, const char *args,
	       const char *needs);
/* Remove the directory tu_models made (nothing when dir is empty). */
void tu_models_free(const char *dir);

/* Compile dir/MODEL.onnx for Ascend910, run it on dir/SET/input_N.pb and
 * compare every output with dir/SET/output_N.pb: of its declared type and
 * size; floats within check_nodes' fp16 tolerances (2e-3 of the output's
 * peak (at least 1) + 4e-3 relative; NaN and infinities exactly), integers and
 * bools exactly.  The cycles and output bytes are checked against the golden
 * file (golden.h) as test/MODEL[/SET]/Ascend910 (test: the program's name). */
void tu_run_compare(const char *test, const char *dir, const char *model, const char *set);

/* A Check test named after the model it runs through run(name) (in a file
 * that includes check.h). */
#define TU_MODEL_TEST(run, name) \
	START_TEST(name)         \
	{                        \
		run(#name);      \
	}                        \
	END_TEST

/* ONNX Runtime as the reference (tests/ort_run.js, npm onnxruntime-node in
 * $srcdir/tests/ort/node_modules).  NULL when it can run, else why not, naming
 * the command that installs it; a test then exits 77 (automake's SKIP). */
const char *tu_ort_missing(void);
/* Print why ORT is missing and exit(77) when it is; return otherwise. */
void tu_ort_require(const char *test);
/* `node $srcdir/tests/ort_run.js model in_dir out_dir`: in_dir/input_N.pb in,
 * out_dir/output_N.pb out.  0 on success; the script's errors go to stderr. */
int tu_ort_run(const char *model, const char *in_dir, const char *out_dir);

#endif
