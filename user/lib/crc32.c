// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CRC-32 (interface in crc32.h): slicing by 8, and on x86-64 with PCLMULQDQ, 16-byte blocks
 * folded by carry-less multiplication (a trace record of ~110 bytes: ~3x faster).
 */
#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "lib/crc32.h"

#define CRC32_POLY 0xedb88320u /* reflected 0x04c11db7 */

/* tab[0] is the byte-at-a-time table; tab[k][b] is the CRC of b followed by k zero bytes */
static __u32 tab[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
/* Folding constants: see fold(). kfold1 folds one 16-byte block into the next, kfold4 four
 * blocks into the four 64 bytes on. */
static __m128i kfold1, kfold4;
static bool have_clmul;

/* x^n mod P, bit i the coefficient of x^i */
static __u32 xpow_mod(unsigned int n)
{
	__u32 r = 1;

	while (n--)
		r = (r << 1) ^ (0x04c11db7u & -(r >> 31));
	return r;
}

/* The operand of a reflected 64-bit multiplicand: the coefficient of x^i at bit 63 - i. */
static long long refl_operand(__u32 r)
{
	__u32 v = 0;

	for (int i = 0; i < 32; i++)
		v |= ((r >> i) & 1) << (31 - i);
	return (long long)((__u64)v << 32);
}

/* Folding a block X over D bits of message: X x^D = H x^(D+64) + L x^D, with H its first
 * (higher) 8 bytes and L the next 8. A carry-less product of two reflected operands is the
 * reflected product times x, so H * (x^(D+63) mod P) + L * (x^(D-1) mod P) is congruent to it
 * modulo P and fits in 96 bits: it replaces X, and the CRC (of the message times x^32 mod P)
 * is unchanged. */
static __m128i fold_keys(unsigned int d)
{
	return _mm_set_epi64x(refl_operand(xpow_mod(d - 1)), refl_operand(xpow_mod(d + 63)));
}

static void clmul_init(void)
{
	__builtin_cpu_init();
	have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	if (have_clmul) {
		kfold1 = fold_keys(128);
		kfold4 = fold_keys(512);
	}
}
#endif

static void tab_init(void)
{
	for (__u32 b = 0; b < 256; b++) {
		__u32 c = b;

		for (int i = 0; i < 8; i++)
			c = (c >> 1) ^ (CRC32_POLY & -(c & 1));
		tab[0][b] = c;
	}
	for (__u32 b = 0; b < 256; b++)
		for (int k = 1; k < 8; k++)
			tab[k][b] = (tab[k - 1][b] >> 8) ^ tab[0][tab[k - 1][b] & 0xff];
#if defined(__x86_64__)
	clmul_init();
#endif
}

/* crc: the running register (inverted) */
static __u32 crc_tables(__u32 crc, const unsigned char *s, size_t len)
{
	while (len >= 8) {
		__u64 v;

		memcpy(&v, s, 8);
		v = le64toh(v) ^ crc;
		crc = tab[7][v & 0xff] ^ tab[6][(v >> 8) & 0xff] ^ tab[5][(v >> 16) & 0xff] ^
		      tab[4][(v >> 24) & 0xff] ^ tab[3][(v >> 32) & 0xff] ^
		      tab[2][(v >> 40) & 0xff] ^ tab[1][(v >> 48) & 0xff] ^ tab[0][v >> 56];
		s += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ tab[0][(crc ^ *s++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i x, __m128i k,
								    __m128i next)
{
	return _mm_xor_si128(
	    _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)),
	    next);
}

#define LOAD(p) _mm_loadu_si128((const __m128i *)(p))

/* The whole 16-byte blocks of s (len >= 16), from the running register crc: returns the
 * register after them; *used says how many bytes that was. */
__attribute__((target("pclmul,sse4.1"))) static __u32 crc_clmul(__u32 crc, const unsigned char *s,
								size_t len, size_t *used)
{
	/* the register comes in as the first 32 bits of the message (reflected: byte 0 first) */
	__m128i x = _mm_xor_si128(LOAD(s), _mm_cvtsi32_si128((int)crc));
	const unsigned char *p = s + 16;
	unsigned char out[16];

	len -= 16;
	if (len >= 48) {
		__m128i x1 = LOAD(p), x2 = LOAD(p + 16), x3 = LOAD(p + 32);

		p += 48;
		len -= 48;
		for (; len >= 64; p += 64, len -= 64) {
			x = fold(x, kfold4, LOAD(p));
			x1 = fold(x1, kfold4, LOAD(p + 16));
			x2 = fold(x2, kfold4, LOAD(p + 32));
			x3 = fold(x3, kfold4, LOAD(p + 48));
		}
		x = fold(fold(fold(x, kfold1, x1), kfold1, x2), kfold1, x3);
	}
	for (; len >= 16; p += 16, len -= 16)
		x = fold(x, kfold1, LOAD(p));
	/* what is left is a 16-byte message congruent to all of it: its CRC from a zero register */
	_mm_storeu_si128((__m128i *)out, x);
	*used = p - s;
	return crc_tables(0, out, sizeof(out));
}
#endif

__u32 gctx_crc32(__u32 crc, const void *p, size_t len)
{
	const unsigned char *s = p;

	pthread_once(&tab_once, tab_init);
	crc = ~crc;
#if defined(__x86_64__)
	if (have_clmul && len >= 32) {
		size_t used;

		crc = crc_clmul(crc, s, len, &used);
		s += used;
		len -= used;
	}
#endif
	return ~crc_tables(crc, s, len);
}
