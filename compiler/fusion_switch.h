/* fusion_switch.h: ATC's --fusion_switch_file, which turns graph passes
 * off by name: the names and defaults of passes.def, the pipeline. */
#ifndef FUSION_SWITCH_H
#define FUSION_SWITCH_H

#include <stddef.h>

enum {
#define CC_PASS(id, name, stage, graph, plan, on) SW_##id,
#include "passes.def"
	SW_N
};

/* Each pass's name, as the file and the report give it (NULL: a rewrite
 * that always runs). */
extern const char *const cc_switch_names[SW_N];

/* The names of the passes a file can turn off, comma-separated, in the
 * order they run, into buf (truncated to n bytes). */
void cc_switch_list(char *buf, size_t n);

/* The most bytes a switch file may hold. */
#define CC_SWITCH_MAX 65535

/* Parse text (the file path's contents, NUL-terminated) into on[] (1: the
 * pass runs; a pass the file does not name keeps its default, and one
 * without a name always runs).  Returns 0, or -1 with a message naming path in err. */
int cc_fusion_switch_parse(const char *path, const char *text, int on[SW_N], char *err,
			   size_t errlen);

/* Read and parse the file path; no path: every pass on. */
int cc_fusion_switch_read(const char *path, int on[SW_N], char *err, size_t errlen);

#endif
