/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening a library file that a traced process names: never blocking (a FIFO planted where
 * the library was), never following a planted symlink, regular files of a bounded size only.
 * A file mapped by a process is opened through /proc/PID/map_files/, which names the mapped
 * file itself, also when it was deleted or replaced at its path.
 */
#ifndef __GPUCTX_LIBFILE_H
#define __GPUCTX_LIBFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

#define GCTX_LIB_MAX_SIZE (4ull << 30) /* larger than any real driver library */

/* Open path read-only, non-blocking, only if it is a regular file of bounded size (and the
 * file want names by device and inode, when want is given; inode 0 matches nothing): looked
 * at with O_PATH first, so no FIFO or device is ever opened. fd, or -errno with a one-line
 * reason in err. */
int gctx_file_open_checked(const char *path, bool follow, const struct stat *want, struct stat *st,
			   char *err, size_t errlen);
/* Open path (a library the user named, or a system one: symlinks followed only when
 * follow is set) read-only, non-blocking. fd or -errno with a one-line reason in err. */
int gctx_libfile_open(const char *path, bool follow, struct stat *st, char *err, size_t errlen);
/* Open the file that pid maps at [start, end); it must be dev/ino (kernel encoding). */
int gctx_libfile_open_mapping(__u32 pid, __u64 start, __u64 end, __u32 kdev, __u64 ino,
			      struct stat *st, char *err, size_t errlen);
/* May this library's code run (unprivileged) in a child of gpuctx? Only when the file and
 * every directory from root down to it are owned by root and writable by no one else (a
 * sticky directory such as /tmp counts: others cannot replace root's entries), and the path
 * still names the same file: nothing a traced process or another user could have
 * written. root is "/" or "/proc/PID/root"; path is absolute inside it. */
bool gctx_libfile_trusted(int fd, const char *root, const char *path);

/* The file-access identity of a traced process (fsuid, fsgid, supplementary groups), taken
 * by this thread alone while it looks at files that process names: a directory or library
 * that process could not read is not read by gpuctx either. */
#define GCTX_CRED_GROUPS 64
struct gctx_cred {
	uid_t uid;  /* the filesystem uid: what the process may open */
	uid_t ruid; /* the real uid: whose process it is */
	gid_t gid;
	gid_t groups[GCTX_CRED_GROUPS];
	int ngroups;
	/* saved by gctx_cred__enter */
	gid_t saved_groups[GCTX_CRED_GROUPS];
	int nsaved;
	bool entered;
};

/* From /proc/PID/status. 0, or -errno (the process is gone, or has too many groups). */
int gctx_cred__of_pid(__u32 pid, struct gctx_cred *c);
/* Take c's file access in this thread (root's capabilities over files go with it), and give
 * it back. enter returns 0 or -errno (nothing changed then). */
int gctx_cred__enter(struct gctx_cred *c);
void gctx_cred__leave(struct gctx_cred *c);

/* prefix, then msg (which names paths a traced process chose) escaped, on stderr. */
void gctx_warn_escaped(const char *prefix, const char *msg);

#endif /* __GPUCTX_LIBFILE_H */
