/* kern_resize.h: Resize/Upsample over H and W of an NC1HWC0 activation
 * (kern_resize.c).  Index math is done at compile time: per output row and
 * column, the source index (nearest) or the two source indices and the
 * weight of the second (linear). */
#ifndef DV_KERN_RESIZE_H
#define DV_KERN_RESIZE_H

#include <stdint.h>

#include "kernels.h"

enum cc_resize_ctm { CC_CTM_HALF_PIXEL, CC_CTM_PYTORCH_HALF_PIXEL, CC_CTM_ASYMMETRIC,
		     CC_CTM_ALIGN_CORNERS };
enum cc_resize_nearest { CC_NEAREST_ROUND_PREFER_FLOOR, CC_NEAREST_ROUND_PREFER_CEIL,
			 CC_NEAREST_FLOOR, CC_NEAREST_CEIL };

/* One axis: for every output index o < out, i0[o] (and, when linear, i1[o]
 * and f[o], the weight of i1; i0's is 1 - f). */
void cc_resize_axis(int64_t in, int64_t out, double scale, enum cc_resize_ctm ctm,
		    enum cc_resize_nearest nm, int linear, int64_t *i0, int64_t *i1, float *f);

struct cc_resize {
	int64_t planes;        /* N * C1 */
	int64_t h, w, ho, wo;
	int linear;
	const int64_t *ih0, *ih1, *iw0, *iw1; /* nearest: ih0 and iw0 only */
	const float *fh, *fw;                 /* linear: the weights of ih1 and iw1 */
};

/* Linear: the weight table (fp16 blocks of 16 equal lanes: 1 - fw[wo], fw[wo],
 * 1 - fh[ho], fh[ho]), cc_resize_table_bytes bytes. */
int64_t cc_resize_table_bytes(const struct cc_resize *rs);
void cc_resize_table(const struct cc_resize *rs, uint16_t *out);

/* Arguments: nearest 0 x, 1 y; linear 0 x, 1 the weight table, 2 y
 * (x and y NC1HWC0 fp16). */
int cc_gen_resize(const struct soc_config *cfg, const struct cc_resize *rs, struct cc_prog *p,
		  unsigned *block_dim, char *err, size_t errlen);

#endif
