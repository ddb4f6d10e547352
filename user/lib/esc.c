// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Escaping strings a traced process controls before they are shown (interface in esc.h). */
#include <stdbool.h>
#include <string.h>

#include "lib/esc.h"
#include "lib/utf8.h"

void gctx_sbuf__init(struct gctx_sbuf *sb, char *buf, size_t size)
{
	sb->buf = buf;
	sb->size = size;
	sb->pos = 0;
	sb->full = !size;
	if (size)
		buf[0] = '\0';
}

void gctx_sbuf__put(struct gctx_sbuf *sb, const char *s, size_t n)
{
	if (sb->full)
		return;
	if (sb->pos + n >= sb->size) {
		sb->full = true;
		return;
	}
	memcpy(sb->buf + sb->pos, s, n);
	sb->pos += n;
	sb->buf[sb->pos] = '\0';
}

void gctx_sbuf__put_escaped(struct gctx_sbuf *sb, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[4];

	if (c == '\\') {
		gctx_sbuf__put(sb, "\\\\", 2);
	} else if (c >= 0x20 && c < 0x7f) {
		esc[0] = (char)c;
		gctx_sbuf__put(sb, esc, 1);
	} else {
		esc[0] = '\\';
		esc[1] = 'x';
		esc[2] = hex[c >> 4];
		esc[3] = hex[c & 0xf];
		gctx_sbuf__put(sb, esc, 4);
	}
}

void gctx_format_str(char *dst, size_t dstlen, const char *s, size_t n)
{
	struct gctx_sbuf sb;
	size_t i;

	gctx_sbuf__init(&sb, dst, dstlen);
	for (i = 0; s && i < n && s[i] && !sb.full; i++)
		gctx_sbuf__put_escaped(&sb, (unsigned char)s[i]);
}

void gctx_printable(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t n = strlen(s), i = 0, len, bad;

	while (i < n) {
		len = gctx_utf8_seq(p + i, n - i, &bad);
		if (len &&
		    (p[i] < ' ' || p[i] == 0x7f || gctx_utf8_deceptive(gctx_utf8_cp(p + i, len)))) {
			bad = len;
			len = 0;
		}
		if (!len)
			memset(p + i, '?', bad);
		i += len ? len : bad;
	}
}

void gctx_format_argv(char *dst, size_t dstlen, const char *args, __u32 len)
{
	struct gctx_sbuf sb;
	__u32 i;

	gctx_sbuf__init(&sb, dst, dstlen);
	if (!args)
		return;
	while (len && !args[len - 1])
		len--;
	for (i = 0; i < len && !sb.full; i++) {
		if (args[i])
			gctx_sbuf__put_escaped(&sb, (unsigned char)args[i]);
		else
			gctx_sbuf__put(&sb, " ", 1);
	}
}
