// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CRC-32, slicing by 8 (interface in crc32.h). */
#include <endian.h>
#include <pthread.h>
#include <string.h>

#include "lib/crc32.h"

#define CRC32_POLY 0xedb88320u /* reflected 0x04c11db7 */

/* tab[0] is the byte-at-a-time table; tab[k][b] is the CRC of b followed by k zero bytes */
static __u32 tab[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

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
}

__u32 gctx_crc32(__u32 crc, const void *p, size_t len)
{
	const unsigned char *s = p;

	pthread_once(&tab_once, tab_init);
	crc = ~crc;
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
	return ~crc;
}
