/* fusion_switch.h: ATC's --fusion_switch_file, which turns graph passes
 * off by name. */
#ifndef FUSION_SWITCH_H
#define FUSION_SWITCH_H

#include <stddef.h>

enum { SW_IDENTITY, SW_BNFOLD, SW_ACT, SW_ELTWISE, SW_CONSTFOLD, SW_RESIDUAL, SW_MATMUL_BIAS,
       SW_GELU, SW_LAYERNORM, SW_ATTENTION, SW_MATMUL_ELTWISE, SW_QDQ, SW_CONCAT, SW_SPLIT,
       SW_L2, SW_N };

/* The pass each SW_ value turns off, by the name the file uses. */
extern const char *const cc_switch_names[SW_N];

/* The most bytes a switch file may hold. */
#define CC_SWITCH_MAX 65535

/* Parse text (the file path's contents, NUL-terminated) into on[] (1: the
 * pass runs).  Returns 0, or -1 with a message naming path in err. */
int cc_fusion_switch_parse(const char *path, const char *text, int on[SW_N], char *err,
			   size_t errlen);

/* Read and parse the file path; no path: every pass on. */
int cc_fusion_switch_read(const char *path, int on[SW_N], char *err, size_t errlen);

#endif
