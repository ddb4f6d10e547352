/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Know the CUDA/HIP libraries before they are mapped: resolve them the way a process's dynamic
 * loader will (its LD_LIBRARY_PATH, DT_RUNPATH/DT_RPATH of its executable and loaded objects
 * with $ORIGIN, ld.so.cache, the default directories), inside its mount namespace
 * (/proc/PID/root), and probe what is found before the process can call it. What a process
 * names (its directories, libraries, cache) is read with its own file access (libfile.h:
 * gctx_cred), so a directory or file it could not read is never listed or probed; files are
 * opened only when regular.
 */
#ifndef __GPUCTX_LDPATH_H
#define __GPUCTX_LDPATH_H

#include <linux/types.h>
#include "collect/uprobes.h"

struct gctx_ldpath;

struct gctx_ldpath *gctx_ldpath__new(struct gctx_uprobes *u, bool verbose);
/* The command gpuctx is about to exec (our environment, cmd[0] looked up in PATH). */
void gctx_ldpath__predict_cmd(struct gctx_ldpath *p, char *const *cmd);
/* A running process (attach, or after its exec): /proc/PID/environ, exe and root. */
void gctx_ldpath__predict_pid(struct gctx_ldpath *p, __u32 pid);
/* An object the process just mapped, open at fd (the file mapped; path as the process sees
 * it, for $ORIGIN): its DT_RUNPATH/DT_RPATH. True, the first time an object is seen, when it
 * defines cuInit or hipInit itself. fd stays the caller's. */
bool gctx_ldpath__predict_object(struct gctx_ldpath *p, __u32 pid, const char *path, int fd);
/* The prefix to reach pid's files from here: "" when it shares our root, else
 * /proc/PID/root. */
void gctx_ldpath__root(__u32 pid, char *out, size_t len);
void gctx_ldpath__free(struct gctx_ldpath *p);

#endif /* __GPUCTX_LDPATH_H */
