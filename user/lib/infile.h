/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening a trace (or any file gpuctx reads whole) named by a user: root reads traces in
 * users' directories (the Slurm plugin's check, an admin's report of a job's trace), where
 * the user may put a symlink to a root-only file or a FIFO at the path at any time. So:
 * regular files only, never a FIFO or device (opened O_NONBLOCK: an open never waits for a
 * writer), and, as root, never through a symlink at the path. A caller that opened the file
 * itself hands it over as /dev/fd/N (or /proc/self/fd/N): that file is read, from its start,
 * whatever is at any path by then.
 */
#ifndef __GPUCTX_INFILE_H
#define __GPUCTX_INFILE_H

#include <stddef.h>

/* N for "/dev/fd/N" or "/proc/self/fd/N", else -1. */
int gctx_path_fd(const char *path);

/* A read-only, close-on-exec, blocking fd of the regular file at path, or -1 with a one-line
 * reason in err ("cannot open x: ...", "refusing to read x: it is a FIFO"). */
int gctx_infile_open(const char *path, char *err, size_t errlen);

#endif /* __GPUCTX_INFILE_H */
