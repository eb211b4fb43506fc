/* kern_aipp.h: the AIPP kernel generator and the compiler driver's hooks for
 * --insert_op_conf (kern_aipp.c). */
#ifndef DV_KERN_AIPP_H
#define DV_KERN_AIPP_H

#include <stdint.h>

#include "emit.h"
#include "om.h"
#include "soc.h"

/* n images of img_bytes each -> [n][1][ho][wo][c0] fp16 in the workspace, c0
 * 16 (NC1HWC0) or 4 (NC1HWC0_C04, which needs wo % 4 == 0: a tile of rows is
 * then whole 32-byte DMA blocks). */
int cc_gen_aipp(const struct soc_config *cfg, int64_t n, int64_t ho, int64_t wo, int64_t c0,
		int64_t img_bytes, struct cc_prog *p, unsigned *block_dim, char *err,
		size_t errlen);

struct cc_ctx;
struct cc_aipp;
/* Parse the config at path (NULL: no AIPP, *out = NULL) and check it against
 * the model's inputs (shapes known).  0, or -1 with the message in c->err. */
int cc_aipp_prepare(struct cc_ctx *c, const char *path, struct cc_aipp **out);
/* Graph input number `input` (tensor ti): emit its AIPP task if the config
 * has one for it; small_channel (--enable_small_channel=1): the task writes
 * NC1HWC0_C04 when the convs reading ti take the small-channel path.  1 done,
 * 0 not an AIPP input, -1 error (c->err). */
int cc_aipp_input(struct cc_ctx *c, struct cc_aipp *a, int input, int ti, int small_channel);
/* The model's input descriptors (and the AIPP tasks' inputs) become the images. */
void cc_aipp_model(const struct cc_aipp *a, struct om_model *m);
int cc_aipp_count(const struct cc_aipp *a);
void cc_aipp_free(struct cc_aipp *a);

#endif
