/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small streaming JSON writer. Commas and nesting are tracked by the writer; strings are
 * escaped (control characters as \u00XX) and invalid UTF-8 is replaced by U+FFFD, so any
 * process name or argv produces valid JSON.
 */
#ifndef __GPUCTX_JSON_H
#define __GPUCTX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct gctx_json;

struct gctx_json *gctx_json__new(FILE *out, bool pretty);
void gctx_json__free(struct gctx_json *j); /* writes nothing more; NULL is a no-op */

void gctx_json__obj_begin(struct gctx_json *j);
void gctx_json__obj_end(struct gctx_json *j);
void gctx_json__arr_begin(struct gctx_json *j);
void gctx_json__arr_end(struct gctx_json *j);
void gctx_json__key(struct gctx_json *j, const char *key);
void gctx_json__str(struct gctx_json *j, const char *s);	    /* NULL writes null */
void gctx_json__strn(struct gctx_json *j, const char *s, size_t n); /* exactly n bytes */
void gctx_json__u64(struct gctx_json *j, __u64 v);
void gctx_json__s64(struct gctx_json *j, __s64 v);
void gctx_json__double(struct gctx_json *j, double v);
void gctx_json__bool(struct gctx_json *j, bool v);
void gctx_json__null(struct gctx_json *j);
/* Escape s (n bytes) as a JSON string body (no quotes) into out; returns bytes written. */
size_t gctx_json_escape(char *out, size_t outlen, const char *s, size_t n);

#endif /* __GPUCTX_JSON_H */
