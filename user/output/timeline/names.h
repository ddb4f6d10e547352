/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One naming rule for processes and threads, the same in the report, the finding texts, the
 * Chrome JSON and the Perfetto trace: a process is named by its latest comm (what `ps` and
 * /proc/PID/comm show, also after an exec or a prctl rename), a thread likewise; argv is an
 * argument of the process's life slice, never its name. Something known only by its pid gets
 * a placeholder name instead of none.
 */
#ifndef __GPUCTX_NAMES_H
#define __GPUCTX_NAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/model.h"

/* Name of a process whose parent is outside the trace (-p attach, present at attach). */
#define GCTX_NAME_UNTRACED "(not traced)"
/* Name of the recording's own track (global events). */
#define GCTX_NAME_RECORDING "gpuctx recording"

/* Bytes a name buffer needs: a comm, or a placeholder "pid 4194304". */
#define GCTX_NAME_LEN 24

/* The name of a process or thread: its comm (GCTX_COMM_LEN bytes, maybe unterminated), or
 * "pid N" / "tid N" when none was seen. */
void gctx_name_proc(char *buf, size_t len, const struct gctx_proc *p);
void gctx_name_thread(char *buf, size_t len, const struct gctx_thread *t);

#endif /* __GPUCTX_NAMES_H */
