/* model_util.c: see model_util.h. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include "model_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
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
