/* kern_resize.h: Resize/Upsample over H and W of an NC1HWC0 activation
 * (kern_resize.c).  Index math is done at compile time: per output row and
 * column, the source index (nearest) or the two source indices and the
 * weight of the second (linear). */
#ifndef DV_KERN_RESIZE_H
#define DV_KERN_RESIZE_H

#include <stdint.h>

#include "kernels.h"

enum cc_resize_ctm { CC_CTM_HALF_PIXEL, CC_CTM_PYTORCH_HALF_PIXEL, CC_CTM_ASYMMETRIC,
		     CC_CTM_ALIGN_CORNERS, CC_CTM_TF_HALF_PIXEL_FOR_NN, CC_CTM_TF_CROP_AND_RESIZE };
enum cc_resize_nearest { CC_NEAREST_ROUND_PREFER_FLOOR, CC_NEAREST_ROUND_PREFER_CEIL,
			 CC_NEAREST_FLOOR, CC_NEAREST_CEIL };

/* One axis: for every output index o < out and tap k < taps (1 nearest,
 * 2 linear, 4 cubic), the source index idx[k * out + o] and, for taps > 1,
 * its weight wt[k * out + o]; outside[o] (tf_crop_and_resize) is 1 where
 * the source coordinate leaves [0, in - 1]: the output is the
 * extrapolation value there.  Cubic follows ONNX's reference: the four
 * neighbours of the pixel strictly left of x (x itself on a whole pixel,
 * then with weight 1), Keys' kernel with coefficient a, out-of-range
 * neighbours clamped to the edge or, with exclude_outside, given weight 0
 * and the rest renormalized. */
struct cc_resize_axis_spec {
	int64_t in, out;
	double scale;
	enum cc_resize_ctm ctm;
	enum cc_resize_nearest nm;
	int taps;
	double cubic_a;
	int exclude_outside;
	double roi0, roi1; /* tf_crop_and_resize: the crop, normalized */
};
void cc_resize_axis(const struct cc_resize_axis_spec *a, int64_t *idx, float *wt,
		    uint8_t *outside);

#define CC_RESIZE_MAX_TAPS 4
struct cc_resize {
	int64_t planes;        /* N * C1 */
	int64_t h, w, ho, wo;
	int taps;              /* 1 nearest, 2 linear, 4 cubic */
	const int64_t *ih, *iw; /* [taps][ho], [taps][wo] source rows and columns */
	const float *fh, *fw;   /* [taps][ho], [taps][wo] their weights (taps > 1) */
	/* tf_crop_and_resize: rows and columns that are the value (or NULL);
	 * c1 channel blocks per image, the last with last_valid real channels
	 * (its padding channels stay zero) */
	const uint8_t *hout, *wout;
	float extrapolation;
	int64_t c1, last_valid;
};

/* taps > 1: the weight table (fp16 blocks of 16 equal lanes: the column
 * weights [taps][wo], then the row weights [taps][ho]),
 * cc_resize_table_bytes bytes. */
int64_t cc_resize_table_bytes(const struct cc_resize *rs);
void cc_resize_table(const struct cc_resize *rs, uint16_t *out);

/* Arguments: nearest 0 x, 1 y; linear and cubic 0 x, 1 the weight table,
 * 2 y (x and y NC1HWC0 fp16). */
int cc_gen_resize(const struct soc_config *cfg, const struct cc_resize *rs, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen);

#endif
