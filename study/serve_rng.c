/* serve_rng.c: the serving simulation's random numbers (see serve.h).
 * xoshiro256** (Blackman and Vigna) seeded by splitmix64, and a logarithm
 * of our own: libm's log may differ in the last bit between C libraries,
 * which would move an arrival by a nanosecond and change the output bytes. */
#include <math.h>

#include "serve.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sv_rng_seed(struct sv_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sv_rng_next(struct sv_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double sv_rng_uniform(struct sv_rng *r)
{
	/* 53 random bits in [0, 1), turned into (0, 1] so a log of it is finite */
	return 1.0 - (double)(sv_rng_next(r) >> 11) * 0x1p-53;
}

double sv_log(double x)
{
	/* x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
	 * s = (m-1)/(m+1), |s| < 0.172: the odd series to s^23 is below one
	 * ulp.  frexp and ldexp are exact, so only + - * / round. */
	int e;
	double m = frexp(x, &e);
	if (m < 0.70710678118654752440) {
		m *= 2;
		e--;
	}
	double s = (m - 1) / (m + 1), s2 = s * s, sum = 0;
	for (int k = 23; k >= 1; k -= 2)
		sum = sum * s2 + 1.0 / k;
	return 2 * s * sum + e * 0.69314718055994530942;
}

double sv_rng_exp(struct sv_rng *r, double mean)
{
	return -sv_log(sv_rng_uniform(r)) * mean;
}
