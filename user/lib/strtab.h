/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A bounded string table for interning: each distinct string gets a small id (1, 2, ...), so
 * a writer sends a repeated string once and its id afterwards. The table holds at most
 * max_entries strings of at most max_len bytes: past that a string is not interned (the caller
 * writes it inline), so memory stays bounded whatever the input.
 */
#ifndef __GPUCTX_STRTAB_H
#define __GPUCTX_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct gctx_strtab;

/* NULL when out of memory. */
struct gctx_strtab *gctx_strtab__new(__u32 max_entries, __u32 max_len);
void gctx_strtab__free(struct gctx_strtab *t);
/* Forget every string; ids start at 1 again. */
void gctx_strtab__clear(struct gctx_strtab *t);
/*
 * The id of the n bytes at s: added when new (*added set), or 0 when the string is not
 * interned (longer than max_len, table full, out of memory).
 */
__u32 gctx_strtab__intern(struct gctx_strtab *t, const char *s, size_t n, bool *added);
__u32 gctx_strtab__count(const struct gctx_strtab *t);

#endif /* __GPUCTX_STRTAB_H */
