/* om_edge.c: the conversions at a model's edge for the types the device
 * does not compute in.  ATC hands such boundary types to a Cast it places
 * outside the AI Core; here the runtime stands in for it, converting
 * between the user's buffer (the descriptor's dtype) and a device buffer of
 * the type the tasks see (device_dtype): float64 and bfloat16 as float32,
 * int16, uint16 and uint32 as int32, uint64 as int64.
 *
 * Towards the device: float64 rounds to the nearest float32 (beyond its
 * range, infinity, as C's conversion does); bfloat16 widens exactly;
 * uint32 and uint64 values above INT32_MAX / INT64_MAX saturate to them.
 * Towards the user: float32 widens exactly to float64 and rounds to
 * nearest even into bfloat16 (NaN stays NaN); integers saturate to the
 * user's type (a negative value to 0 for the unsigned ones). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "om.h"

int32_t om_edge_device_dtype(int32_t dtype)
{
	switch (dtype) {
	case 11: /* DOUBLE */
	case 16: /* BFLOAT16 */
		return 1;
	case 4:  /* UINT16 */
	case 5:  /* INT16 */
	case 12: /* UINT32 */
		return 6;
	case 13: /* UINT64 */
		return 7;
	default:
		return 0;
	}
}

static uint64_t esize(int32_t dt)
{
	return dt == 11 || dt == 7 || dt == 13 ? 8 : dt == 1 || dt == 6 || dt == 12 ? 4 : 2;
}

static uint64_t numel(const struct om_tensor_desc *d)
{
	uint64_t n = 1;
	for (int k = 0; k < d->rank; k++)
		n *= (uint64_t)d->dims[k];
	return n;
}

uint64_t om_edge_device_bytes(const struct om_tensor_desc *d)
{
	return d->device_dtype ? numel(d) * esize(d->device_dtype) : d->size;
}

static float bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if (isnan(f))
		return (uint16_t)(u >> 16 | 0x40); /* quiet */
	u += 0x7fff + (u >> 16 & 1);           /* to nearest even */
	return (uint16_t)(u >> 16);
}

static int64_t sat(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

void om_edge_convert(const struct om_tensor_desc *d, int to_device, const void *src, void *dst)
{
	uint64_t n = numel(d);
	const uint8_t *s = src;
	uint8_t *o = dst;
	for (uint64_t i = 0; i < n; i++) {
		if (to_device) {
			switch (d->dtype) {
			case 11: {
				double v;
				memcpy(&v, s + 8 * i, 8);
				float f = (float)v;
				memcpy(o + 4 * i, &f, 4);
				break;
			}
			case 16: {
				uint16_t h;
				memcpy(&h, s + 2 * i, 2);
				float f = bf16_to_f32(h);
				memcpy(o + 4 * i, &f, 4);
				break;
			}
			case 13: {
				uint64_t v;
				memcpy(&v, s + 8 * i, 8);
				int64_t w = v > INT64_MAX ? INT64_MAX : (int64_t)v;
				memcpy(o + 8 * i, &w, 8);
				break;
			}
			default: { /* int16, uint16, uint32 to int32 */
				int32_t w;
				if (d->dtype == 5) {
					int16_t v;
					memcpy(&v, s + 2 * i, 2);
					w = v;
				} else if (d->dtype == 4) {
					uint16_t v;
					memcpy(&v, s + 2 * i, 2);
					w = v;
				} else {
					uint32_t v;
					memcpy(&v, s + 4 * i, 4);
					w = v > INT32_MAX ? INT32_MAX : (int32_t)v;
				}
				memcpy(o + 4 * i, &w, 4);
				break;
			}
			}
			continue;
		}
		switch (d->dtype) {
		case 11: {
			float f;
			memcpy(&f, s + 4 * i, 4);
			double v = f;
			memcpy(o + 8 * i, &v, 8);
			break;
		}
		case 16: {
			float f;
			memcpy(&f, s + 4 * i, 4);
			uint16_t h = f32_to_bf16(f);
			memcpy(o + 2 * i, &h, 2);
			break;
		}
		case 13: {
			int64_t v;
			memcpy(&v, s + 8 * i, 8);
			uint64_t w = v < 0 ? 0 : (uint64_t)v;
			memcpy(o + 8 * i, &w, 8);
			break;
		}
		default: {
			int32_t v;
			memcpy(&v, s + 4 * i, 4);
			if (d->dtype == 5) {
				int16_t w = (int16_t)sat(v, INT16_MIN, INT16_MAX);
				memcpy(o + 2 * i, &w, 2);
			} else if (d->dtype == 4) {
				uint16_t w = (uint16_t)sat(v, 0, UINT16_MAX);
				memcpy(o + 2 * i, &w, 2);
			} else {
				uint32_t w = (uint32_t)sat(v, 0, INT32_MAX);
				memcpy(o + 4 * i, &w, 4);
			}
			break;
		}
		}
	}
}
