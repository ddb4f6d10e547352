/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * /proc/PID/maps read as hostile input: the path at the end of a line is the traced process's
 * choice (up to 4095 bytes, any byte but NUL and newline), so a reader with a short line
 * buffer would take the rest of a long path for a line of its own, a mapping the process
 * forged. Here a line counts only when it was read whole: one longer than the buffer is
 * dropped up to its newline, and so is a last line without one. Every field is checked.
 * No BPF: fuzzed (tests/fuzz/fuzz_procmaps.c) and unit tested on memory buffers.
 */
#ifndef __GPUCTX_PROCMAPS_H
#define __GPUCTX_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A whole maps line: 100-odd bytes of fields, a path of up to 4095 bytes in which the kernel
 * writes a newline as \012 (4 bytes), so 16 KiB holds every line the kernel can write. */
#define GCTX_PROCMAPS_LINE_MAX (16u << 10)

struct gctx_procmap {
	__u64 start, end, pgoff, ino;
	__u32 major, minor;
	char perms[5];	  /* "r-xp" */
	const char *path; /* the rest of the line, NUL-terminated ("" for an anonymous map) */
	size_t path_len;
};

/* Return nonzero to stop the walk (returned by the walk). */
typedef int (*gctx_procmap_fn)(void *ctx, const struct gctx_procmap *m);

/* Parse one line (len bytes, no newline, NUL-terminated at line[len]). False if malformed. */
bool gctx_procmap_parse(const char *line, size_t len, struct gctx_procmap *m);

/* Streaming reader: feed what read() returned, in any pieces. */
struct gctx_procmaps_rd {
	char buf[GCTX_PROCMAPS_LINE_MAX + 1];
	size_t n;
	bool skipping; /* inside a line too long for buf: dropped up to its newline */
	__u64 dropped; /* lines dropped: too long, malformed, or cut at the end */
};

void gctx_procmaps_rd__init(struct gctx_procmaps_rd *r);
int gctx_procmaps_rd__feed(struct gctx_procmaps_rd *r, const char *data, size_t len,
			   gctx_procmap_fn fn, void *ctx);
/* End of input: a line still in the buffer has no newline and is dropped. */
void gctx_procmaps_rd__end(struct gctx_procmaps_rd *r);

/* Read a maps file from fd to its end. The callback's value, or -errno of a failed read. */
int gctx_procmaps_read_fd(int fd, gctx_procmap_fn fn, void *ctx, __u64 *dropped);

/* Kernel dev_t encoding of the mapping's device (as BPF and /proc/PID/map_files see it). */
static inline __u32 gctx_procmap_kdev(const struct gctx_procmap *m)
{
	return (m->major << 20) | m->minor;
}

#endif /* __GPUCTX_PROCMAPS_H */
