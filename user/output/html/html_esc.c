// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Escaping for the HTML page: html_esc.h says what and why. */
#include <stdint.h>
#include <string.h>

#include "lib/utf8.h"
#include "output/html/html_esc.h"

/* The characters that end text or an attribute value, as entities. */
static const char *const entity[128] = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
};

/* Code points that reorder or hide text: shown by number instead. */
static int invisible(__u32 cp)
{
	return cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

static __u32 decode(const unsigned char *s, size_t len)
{
	if (len == 2)
		return (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
	if (len == 3)
		return (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	return (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
}

void gctx_html_esc(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, len, bad;

	n = strnlen(str, n);
	while (i < n) {
		unsigned char ch = s[i];

		if (ch >= 0x80) {
			len = gctx_utf8_seq(s + i, n - i, &bad);
			if (!len) {
				fputs("\xef\xbf\xbd", out);
				i += bad;
				continue;
			}
			if (invisible(decode(s + i, len)))
				fprintf(out, "\\u{%04x}", decode(s + i, len));
			else
				fwrite(s + i, 1, len, out);
			i += len;
			continue;
		}
		i++;
		if (entity[ch])
			fputs(entity[ch], out);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
}

void gctx_html_str(FILE *out, const char *s)
{
	gctx_html_esc(out, s, SIZE_MAX);
}

void gctx_html_argv(FILE *out, const char *args, __u32 len, __u32 max)
{
	__u32 i = 0, used = 0;

	while (len && !args[len - 1])
		len--;
	while (i < len && used < max) {
		size_t k = strnlen(args + i, len - i);

		if (k > max - used)
			k = max - used;
		if (i)
			fputc(' ', out);
		gctx_html_esc(out, args + i, k);
		used += k;
		i += strnlen(args + i, len - i) + 1;
	}
	if (i < len)
		fputs("...", out);
}
