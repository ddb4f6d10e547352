/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Fixed-size string fields (kernel comms, paths): copies that always terminate. */
#ifndef __GPUCTX_STR_H
#define __GPUCTX_STR_H

#include <stddef.h>

/* Copy a possibly unterminated fixed-size string of srclen bytes into dst (dstlen > 0),
 * cut to fit and NUL-terminated. */
void gctx_copy_str(char *dst, size_t dstlen, const char *src, size_t srclen);

#endif /* __GPUCTX_STR_H */
