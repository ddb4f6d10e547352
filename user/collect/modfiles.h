/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files a process mapped, kept as it mapped them. A process may exit, and its libraries
 * be replaced on disk, before its stacks are symbolised: while it lives, the exact file of
 * each executable mapping is opened through /proc/PID/map_files and kept (by device and inode,
 * a bounded number of them) with its GNU build-id. Later, a file reopened by path is used only
 * when it is still the one mapped (same device and inode: never a copy, a symlink swapped in,
 * or a FIFO), else the separate debug file of that build-id, else none. /proc/PID/maps is
 * read in whole lines only (lib/procmaps.h): a long path never forges a mapping.
 */
#ifndef __GPUCTX_MODFILES_H
#define __GPUCTX_MODFILES_H

#include <stdbool.h>
#include <linux/types.h>

#define GCTX_BUILD_ID_MAX 20 /* a SHA-1 build-id; longer ones are not compared */

struct gctx_map {
	__u64 start, end, pgoff;
	__u64 dev, ino;	   /* as /proc/PID/maps says (dev in st_dev encoding), 0 unknown */
	__u8 build_id_len; /* 0: unknown (file never kept) */
	__u8 build_id[GCTX_BUILD_ID_MAX];
	char perms[5];
	char path[256];
};

/* Executable file mappings of one process, as read from /proc/PID/maps. */
struct gctx_maps {
	__u32 pid;
	struct gctx_map *v;
	__u32 n, cap;
};

/* Read /proc/PID/maps (file-backed executable mappings only) and keep their files while the
 * process lives. 0 or -errno. */
int gctx_maps__read(struct gctx_maps *m, __u32 pid);
void gctx_maps__clear(struct gctx_maps *m);
/* Append the entries of one GCTX_EV_VMAS record (the mappings the kernel sent with a stack),
 * never reading /proc/PID/maps. m->pid is set to pid. 0, -EINVAL for a malformed record
 * (nothing appended), or -ENOMEM. */
int gctx_maps__add_vmas(struct gctx_maps *m, __u32 pid, const void *rec, __u32 len);
/* Keep the files of m's mappings (through map_files, while the process lives) and note their
 * build-ids, as gctx_maps__read does. */
void gctx_maps__keep(struct gctx_maps *m);

/*
 * Open the file behind a mapping: the kept file, else map_files while the process lives, else
 * the path (in its mount namespace, then here) if it is still the file mapped (device and
 * inode; a mapping of inode 0 has no file), else the
 * separate debug file of its build-id. A regular file only, never blocking. fd, or -ESTALE
 * when a file is at the path but is not the one mapped, or -ENOENT.
 */
int gctx_map_open(const struct gctx_maps *maps, const struct gctx_map *mp);
/* Load bias of the ELF file fd mapped at mp (0 for ET_EXEC). */
bool gctx_map_bias(int fd, const struct gctx_map *mp, __u64 *bias, bool *is_exec);

/* Close the kept files (end of recording). */
void gctx_modfiles_clear(void);

#endif /* __GPUCTX_MODFILES_H */
