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

#endif
