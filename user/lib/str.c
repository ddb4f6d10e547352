// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Fixed-size string fields (interface in str.h). */
#include <string.h>

#include "lib/str.h"

void gctx_copy_str(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
