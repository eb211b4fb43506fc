/* float_bits.h: a float's bit pattern and back, for the tests that build
 * special values (NaN payloads, subnormals, -0) and compare results bit for
 * bit. */
#ifndef DV_TESTS_FLOAT_BITS_H
#define DV_TESTS_FLOAT_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static inline float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

#endif
