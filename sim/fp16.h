/* fp16.h: IEEE binary16 numerics (fp16 <-> fp32, float -> integer) for the simulator.
 *
 * The scalar conversions are portable C on bit patterns, so results do not depend on the host
 * compiler's _Float16 support.  The bulk (_n) functions use F16C when the CPU has it and give
 * bit-identical results, NaNs included.  Nothing here has mutable state. */
#ifndef DV_FP16_H
#define DV_FP16_H

#include <stddef.h>
#include <stdint.h>

/* Exact.  Subnormals and infinities convert exactly; a NaN keeps its sign and payload
 * (shifted into the top of the float fraction) and comes out quiet, as F16C does. */
float dv_f16_to_f32(uint16_t h);

/* Round to nearest, ties to even.  Values from 65520 up (in magnitude) become infinity; a NaN
 * becomes a quiet NaN keeping its sign and the top 10 fraction bits, as F16C does. */
uint16_t dv_f32_to_f16(float f);

/* Bulk versions of the above: same results bit for bit.  src and dst must not overlap.  The
 * fp16 side is n values in host byte order at any alignment (a uint16_t array, or the bytes
 * of a simulated buffer, converted in place of a copy into a uint16_t array first). */
void dv_f16_to_f32_n(const void *src, float *dst, size_t n);
void dv_f32_to_f16_n(const float *src, void *dst, size_t n);

/* Float -> integer rounding modes. */
enum dv_round {
	DV_RND_RNE = 0,   /* to nearest, ties to even */
	DV_RND_TRUNC = 1, /* toward zero */
	DV_RND_FLOOR = 2, /* toward -inf */
	DV_RND_CEIL = 3,  /* toward +inf */
	DV_RND_AWAY = 4,  /* to nearest, ties away from zero */
};

/* Round x to an integer with mode r and saturate to int32; NaN gives 0. */
int32_t dv_f32_to_s32(float x, enum dv_round r);

/* Saturate to the narrower integer types. */
int8_t dv_sat_s8(int32_t v);
uint8_t dv_sat_u8(int32_t v);
int16_t dv_sat_s16(int32_t v);

/* Round a float to the nearest fp16 value and back (what storing to an fp16 buffer does). */
static inline float dv_round_f16(float f) { return dv_f16_to_f32(dv_f32_to_f16(f)); }

#endif
