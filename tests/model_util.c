/* model_util.c: see model_util.h. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include "model_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void tu_models(char *dir, size_t len, const char *tag, const char *script, const char *args,
	       const char *needs)
{
	if (dir[0])
		return;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/davinci-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s failed", dir);
	const char *src = getenv("srcdir");
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/%s %s %s > %s/log 2>&1",
		 src && *src ? src : ".", script, dir, args ? args : "", dir);
	ck_assert_msg(system(cmd) == 0, "tests/%s failed (needs %s): see %s/log", script, needs,
		      dir);
}

void tu_models_free(const char *dir)
{
	if (!dir[0])
		return;
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static const char *tu_srcdir(void)
{
	const char *src = getenv("srcdir");
	return src && *src ? src : ".";
}

const char *tu_ort_missing(void)
{
	if (system("command -v node >/dev/null 2>&1") != 0)
		return "node is not installed (apt-get install nodejs npm, then "
		       "cd tests/ort && npm ci --ignore-scripts)";
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/ort/node_modules/onnxruntime-node/package.json",
		 tu_srcdir());
	if (access(path, R_OK) != 0)
		return "ONNX Runtime is not installed: cd tests/ort && npm ci --ignore-scripts";
	return NULL;
}

void tu_ort_require(const char *test)
{
	const char *why = tu_ort_missing();
	if (!why)
		return;
	printf("%s: SKIP: %s\n", test, why);
	exit(77);
}

int tu_ort_run(const char *model, const char *in_dir, const char *out_dir)
{
	char cmd[16384];
	snprintf(cmd, sizeof cmd, "node '%s/tests/ort_run.js' '%s' '%s' '%s'", tu_srcdir(), model,
		 in_dir, out_dir);
	int rc = system(cmd);
	return rc == 0 ? 0 : (rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : 128));
}
