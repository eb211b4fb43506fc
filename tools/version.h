/* version.h: every tool's --version, the package version configure's AC_INIT
 * gives (config.h), so that the tools and the SDK never disagree. */
#ifndef DV_TOOL_VERSION_H
#define DV_TOOL_VERSION_H

#include <stdio.h>
#include <string.h>

#include "config.h"

/* 1 (after printing "TOOL (davinci-sim) VERSION") when --version is among
 * the arguments: it answers before anything else is checked. */
static inline int tool_version(int argc, char **argv, const char *tool)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--version")) {
			printf("%s (%s) %s\n", tool, PACKAGE_NAME, PACKAGE_VERSION);
			return 1;
		}
	return 0;
}

#endif
