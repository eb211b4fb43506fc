/* vec_fma.h: the vector unit's fused multiply-add over a repeat's lanes (internal to sim/).
 *
 * d[i] = fmaf(a[i], b[i], d[i]) for i < n, with the bits the C library's fmaf gives on this
 * host for those operands in that order, NaN payloads included: vmla called fmaf once a lane through libm (a quarter of a
 * full-mode MobileNetV2 run), where one vector instruction does 16 lanes. */
#ifndef DV_VEC_FMA_H
#define DV_VEC_FMA_H

void dv_fmaf_n(const float *a, const float *b, float *d, unsigned n);

/* One implementation by name, for the tests: -1 (d untouched) if this build or host lacks it. */
enum dv_fma_path { DV_FMA_LIBM, DV_FMA_AVX2, DV_FMA_AVX512 };
int dv_fmaf_n_path(enum dv_fma_path p, const float *a, const float *b, float *d, unsigned n);

#endif
