/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Strings a traced process controls (comm, argv, paths, symbol names) shown as text: bytes
 * outside printable ASCII and backslashes are escaped, so no output can be forged.
 */
#ifndef __GPUCTX_ESC_H
#define __GPUCTX_ESC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Bytes a formatted string of n source bytes may need (every byte escaped, plus the NUL). */
#define GCTX_ESC_SIZE(n) (4 * (n) + 1)

/* Bounded string builder: appends whole units only, always NUL-terminated. */
struct gctx_sbuf {
	char *buf;
	size_t size;
	size_t pos;
	bool full;
};

void gctx_sbuf__init(struct gctx_sbuf *sb, char *buf, size_t size);
void gctx_sbuf__put(struct gctx_sbuf *sb, const char *s, size_t n); /* all n bytes or none */
void gctx_sbuf__put_escaped(struct gctx_sbuf *sb, unsigned char c);

/* NUL-separated argv (len bytes, trailing NULs ignored) -> space-joined, escaped. */
void gctx_format_argv(char *dst, size_t dstlen, const char *args, __u32 len);
/* At most n bytes of s, up to its first NUL, escaped. */
void gctx_format_str(char *dst, size_t dstlen, const char *s, size_t n);
/* In place, text shown as written (a message in any language, déjà, 🚫): a control byte, DEL,
 * a code point that acts on a terminal or reorders the line (C1, bidi, zero-width, line
 * separators: gctx_utf8_deceptive) or a byte that is not UTF-8 becomes '?', byte for byte.
 * For a line made of escaped and plain pieces: one line, nothing raw, whatever a piece missed. */
void gctx_printable(char *s);

#endif /* __GPUCTX_ESC_H */
