/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * SHA-256 (FIPS 180-4) of a buffer, and its base64: the HTML page's Content-Security-Policy
 * names its own inline style by this hash, so that no other style or script is allowed.
 */
#ifndef __GPUCTX_SHA256_H
#define __GPUCTX_SHA256_H

#include <stddef.h>
#include <linux/types.h>

void gctx_sha256(const void *data, size_t len, __u8 out[32]);
/* The digest as base64 with padding (44 characters and a NUL). */
void gctx_sha256_b64(const void *data, size_t len, char out[45]);

#endif /* __GPUCTX_SHA256_H */
