/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * UTF-8 validation shared by the writers of text formats (json.c, perfetto.c): they pass valid
 * sequences through and replace each maximal invalid subpart by one U+FFFD (the Unicode
 * "substitution of maximal subparts" practice, as Python's "replace" does).
 */
#ifndef __GPUCTX_UTF8_H
#define __GPUCTX_UTF8_H

#include <stddef.h>

/*
 * Length of the valid UTF-8 sequence at s (n > 0 bytes available), or 0 when s does not start
 * one; then *bad is the length of the maximal invalid subpart to replace by one U+FFFD.
 */
static inline size_t gctx_utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		*bad = 1; /* continuation byte, 0xc0, 0xc1, 0xf5..0xff */
		return 0;
	}
	for (i = 1; i < need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need;
}

/* The code point of a valid sequence of len bytes at s (gctx_utf8_seq's). */
static inline unsigned int gctx_utf8_cp(const unsigned char *s, size_t len)
{
	unsigned int cp = len == 1 ? s[0] : s[0] & (0x7f >> len);

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/*
 * Code points that are valid but change how a terminal or an editor shows the text around
 * them: C1 controls (U+009B is a CSI to some terminals), bidirectional overrides, isolates and
 * marks (a name shown reversed), zero-width and invisible format characters, line and
 * paragraph separators. Writers of text formats escape them (\uXXXX in JSON).
 */
static inline int gctx_utf8_deceptive(unsigned int cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
	       (cp >= 0xfff9 && cp <= 0xfffb);
}

#endif /* __GPUCTX_UTF8_H */
