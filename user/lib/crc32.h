/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CRC-32 (IEEE 802.3, the polynomial and value of zlib's crc32()): carry-less multiplication
 * where the CPU has it, eight bytes a step otherwise.
 * The trace file frames every record with one: zlib's call costs ~170 ns before its first
 * byte here, more than the ~100-byte record it checks, and the collector frames up to a
 * couple of million records a second.
 */
#ifndef __GPUCTX_CRC32_H
#define __GPUCTX_CRC32_H

#include <stddef.h>
#include <linux/types.h>

/* The CRC of len bytes at p, continuing crc (0 to start): gctx_crc32(gctx_crc32(0, a, n), b, m)
 * is the CRC of a followed by b, as with zlib. */
__u32 gctx_crc32(__u32 crc, const void *p, size_t len);

#endif /* __GPUCTX_CRC32_H */
