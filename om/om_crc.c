/* om_crc.c: the CRC-32 of the .om's sections (see om_crc.h).
 *
 * zlib's crc32_z (reflected polynomial 0xEDB88320, init and final xor
 * 0xFFFFFFFF) defines the value.  On x86 with PCLMULQDQ the bulk of a long
 * buffer is first reduced by carry-less multiplication, which runs at memory
 * speed where zlib's table method does a few bytes a cycle: the weights'
 * CRC was 9% of a full-mode ResNet-50 run.
 *
 * Why the shortcut gives zlib's bits.  Read a 16-byte block as a polynomial
 * over GF(2) the reflected way: bit k of the little-endian 128-bit value is
 * the coefficient of x^(127-k), the last bit the lowest power.  With init 0
 * and no final xor, the CRC of a message M is M(x) * x^32 mod P: it depends
 * only on M mod P.  Folding replaces a block X that lies D bits before the
 * block Y by Y + X * x^D, reduced to 128 bits: X = L * x^64 + H (L from the
 * low 8 bytes), and L * x^(D+64) and H * x^D are congruent mod P to L and H
 * times the 32-bit remainders of those powers, products of at most 96 bits.
 * Each fold keeps the message's value mod P, so the message left over (the
 * last folded block and the bytes after it) has the CRC of the whole one.
 * zlib's init 0xFFFFFFFF amounts to xoring 0xFFFFFFFF into the message's
 * first four bytes, done on the first block; the last 16 to 31 bytes then go
 * through crc32_z with the init that contributes nothing, which also does
 * zlib's final xor. */
#include "om_crc.h"

#include <string.h>
#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OM_CRC_CLMUL 1
#include <immintrin.h>
#endif

static uint32_t crc_zlib(uint32_t crc, const uint8_t *p, uint64_t n)
{
	/* z_size_t may be narrower than 64 bits */
	while (n) {
		z_size_t step = n > (1u << 30) ? (z_size_t)(1u << 30) : (z_size_t)n;
		crc = (uint32_t)crc32_z(crc, p, step);
		p += step;
		n -= step;
	}
	return crc;
}

#ifdef OM_CRC_CLMUL
/* x^e mod P (P = x^32 + 0x04C11DB7, the normal form of 0xEDB88320), as the
 * 64-bit operand of a reflected carry-less multiply: bit i is the
 * coefficient of x^(63-i).  The product of two such operands, read as a
 * reflected 128-bit block, is their product times x, hence e = power - 1. */
static uint64_t fold_const(unsigned power)
{
	uint64_t r = 1; /* x^0, normal form: bit d is x^d */
	for (unsigned e = 0; e < power - 1; e++) {
		r <<= 1;
		if (r >> 32)
			r ^= UINT64_C(0x104C11DB7);
	}
	uint64_t c = 0;
	for (unsigned d = 0; d < 32; d++)
		if (r >> d & 1)
			c |= UINT64_C(1) << (63 - d);
	return c;
}

/* X folded over D bits: k holds (x^(D+64), x^D) mod P in its low and high
 * halves. */
__attribute__((target("pclmul,sse2"))) static inline __m128i fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* n >= 64 */
__attribute__((target("pclmul,sse2"))) static uint32_t crc_clmul(const uint8_t *p, uint64_t n)
{
	const __m128i k512 = _mm_set_epi64x((long long)fold_const(512), (long long)fold_const(576));
	const __m128i k128 = _mm_set_epi64x((long long)fold_const(128), (long long)fold_const(192));
	__m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	__m128i a2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
	__m128i a3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
	a0 = _mm_xor_si128(a0, _mm_cvtsi32_si128(-1)); /* zlib's init */
	p += 64;
	n -= 64;
	for (; n >= 64; p += 64, n -= 64) {
		a0 = _mm_xor_si128(fold(a0, k512), _mm_loadu_si128((const __m128i *)(const void *)p));
		a1 = _mm_xor_si128(fold(a1, k512),
				   _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
		a2 = _mm_xor_si128(fold(a2, k512),
				   _mm_loadu_si128((const __m128i *)(const void *)(p + 32)));
		a3 = _mm_xor_si128(fold(a3, k512),
				   _mm_loadu_si128((const __m128i *)(const void *)(p + 48)));
	}
	__m128i a = _mm_xor_si128(fold(a0, k128), a1);
	a = _mm_xor_si128(fold(a, k128), a2);
	a = _mm_xor_si128(fold(a, k128), a3);
	for (; n >= 16; p += 16, n -= 16)
		a = _mm_xor_si128(fold(a, k128), _mm_loadu_si128((const __m128i *)(const void *)p));
	uint8_t rest[32];
	_mm_storeu_si128((__m128i *)(void *)rest, a);
	memcpy(rest + 16, p, (size_t)n);
	/* init 0xFFFFFFFF: zlib starts from its complement, 0, which adds nothing */
	return (uint32_t)crc32_z(0xFFFFFFFFul, rest, (z_size_t)(16 + n));
}
#endif

uint32_t om_crc32(const uint8_t *p, uint64_t n)
{
#ifdef OM_CRC_CLMUL
	/* Asked per call, not cached: it reads a word libgcc filled in at startup. */
	if (n >= 64 && __builtin_cpu_supports("pclmul"))
		return crc_clmul(p, n);
#endif
	return crc_zlib(0, p, n);
}
