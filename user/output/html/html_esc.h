/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text a traced process controls, written into the HTML page. One escaping serves every
 * context the page puts such text in: element text, double- or single-quoted attribute
 * values, and SVG <text> (the page never puts it in a URL, a script, a style or an unquoted
 * attribute). & < > " ' become entities; control bytes and DEL become "\xNN"; invalid UTF-8
 * becomes U+FFFD; bidirectional and invisible formatting characters (U+061C, U+200B-U+200F,
 * U+202A-U+202E, U+2028/U+2029, U+2060-U+2069, U+FEFF) become "\u{XXXX}", so that the page
 * shows what the process wrote, not what it wants the reader to see.
 */
#ifndef __GPUCTX_HTML_ESC_H
#define __GPUCTX_HTML_ESC_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* At most n bytes of s, up to its first NUL. */
void gctx_html_esc(FILE *out, const char *s, size_t n);
/* A NUL-terminated string. */
void gctx_html_str(FILE *out, const char *s);
/* NUL-separated argv (len bytes, trailing NULs ignored), space-joined; at most max bytes of
 * it, then "..." when cut. */
void gctx_html_argv(FILE *out, const char *args, __u32 len, __u32 max);

#endif /* __GPUCTX_HTML_ESC_H */
