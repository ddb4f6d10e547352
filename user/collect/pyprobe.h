/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finds the CPython interpreter in followed processes and tells the kernel where its state
 * lives (pyinfo map: tgid -> struct gctx_py_layout), so that stacks taken later carry Python
 * frames. Only reads the interpreter's files (ELF sections, _Py_DebugOffsets); never runs
 * or ptraces the process. A process just exec'd is checked again on each tick until its
 * libpython is mapped (or a short deadline passes).
 */
#ifndef __GPUCTX_PYPROBE_H
#define __GPUCTX_PYPROBE_H

#include <stdbool.h>
#include <linux/types.h>
#include "gpuctx_events.h"
#include "gpuctx_stack.h"

struct gctx_pyprobe;

/* pyexe_fd: the kernel's per-executable map (bpf/stack.bpf.h), or -1. */
struct gctx_pyprobe *gctx_pyprobe__new(int pyinfo_fd, int pyexe_fd, bool verbose);
void gctx_pyprobe__free(struct gctx_pyprobe *p);
/* The traced command, about to be exec'd (looked up on PATH as execvp does): if it is an
 * interpreter executable, tell the kernel where its state will be, so that the process has
 * Python frames from its exec on, however busy the collector is then. */
void gctx_pyprobe__learn_cmd(struct gctx_pyprobe *p, const char *cmd);
/* Check a process now (present at attach, or the traced command). */
void gctx_pyprobe__scan_pid(struct gctx_pyprobe *p, __u32 pid);
/* Every record, in order: exec queues the process for a check. */
void gctx_pyprobe__on_record(struct gctx_pyprobe *p, __u32 type, const void *data, __u32 len);
/* Called with each process found to run Python (e.g. to watch its mappings). */
void gctx_pyprobe__set_found_cb(struct gctx_pyprobe *p, void (*cb)(void *ctx, __u32 pid),
				void *ctx);
/* The layout of the interpreter file open at fd, named path in the process's maps (3.13+
 * says its version itself; before, the name does); false when unknown or unsupported. */
bool gctx_pyprobe_file_layout(int fd, const char *path, struct gctx_py_layout *l);
/* Retry the pending checks (call on each poll). */
void gctx_pyprobe__tick(struct gctx_pyprobe *p);

#endif /* __GPUCTX_PYPROBE_H */
