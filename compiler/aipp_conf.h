/* aipp_conf.h: ATC's AIPP configuration file (--insert_op_conf), static mode.
 *
 * The file is protobuf text format: one `aipp_op { key: value ... }` block per
 * model input it applies to, `#` comments (ascend.md 3.2).  No C library
 * parses protobuf text format without the .proto compiled in (and ATC's
 * insert_op.proto is not public), so aipp_conf.c is a small hand-written
 * parser; every error names file:line. */
#ifndef DV_AIPP_CONF_H
#define DV_AIPP_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "aipp.h"

#define AIPP_MAX_OPS 8

struct aipp_conf {
	int line;               /* of the aipp_op keyword */
	int related_input_rank; /* the model input it applies to */
	int format;             /* enum aipp_format */
	int src_w, src_h;       /* 0: not given (the model's input size) */
	int crop, crop_x, crop_y, crop_w, crop_h; /* crop_w/h 0: the model's size */
	int padding, pad_l, pad_r, pad_t, pad_b;
	int csc, matrix[9], in_bias[3], out_bias[3];
	int rbuv_swap, ax_swap;
	int mean[4];
	float min[4], var[4];
	/* lines of keys that later (shape) checks name; 0 if absent */
	int line_format, line_src, line_crop, line_pad;
};

/* Parse the file at path into ops[0..*n).  Returns 0, or -1 with a message
 * "path:line: ..." in err. */
int aipp_conf_parse(const char *path, struct aipp_conf *ops, int max, int *n, char *err,
		    size_t errlen);
/* The same from a string (for tests); name stands for the path in messages. */
int aipp_conf_parse_text(const char *name, const char *text, struct aipp_conf *ops, int max,
			 int *n, char *err, size_t errlen);

/* Channels AIPP produces: 1 for YUV400, 3 otherwise. */
int aipp_channels(const struct aipp_conf *a);

/* Check a against the model input it feeds (N, C, H, W of the NCHW input) and
 * resolve the sizes left to the model (src, crop); errors name path:line. */
int aipp_conf_resolve(struct aipp_conf *a, const char *path, int64_t c, int64_t h, int64_t w,
		      char *err, size_t errlen);

/* The config block the aipp.gm.l1 instruction reads (isa/aipp.h). */
void aipp_conf_block(const struct aipp_conf *a, uint32_t words[AIPP_CFG_WORDS]);

/* The uint8 host image: dims and rank of one batch of n images
 * (RGB888/XRGB8888: [n, h, w, 3|4] NHWC; YUV420SP: [n, h*3/2, w]; YUV400:
 * [n, h, w]) and its byte size. */
int aipp_image_dims(const struct aipp_conf *a, int64_t n, int64_t *dims);
const char *aipp_format_name(int format);

#endif
