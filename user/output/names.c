// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The naming rule of processes and threads (names.h). */
#include <stdio.h>

#include "lib/str.h"
#include "output/names.h"

void gctx_name_comm(char *buf, size_t len, const char *comm, __u32 pid)
{
	gctx_copy_str(buf, len, comm, GCTX_COMM_LEN);
	if (!buf[0])
		snprintf(buf, len, "pid %u", pid);
}

void gctx_name_proc(char *buf, size_t len, const struct gctx_proc *p)
{
	gctx_name_comm(buf, len, p->comm, p->pid);
}

void gctx_name_thread(char *buf, size_t len, const struct gctx_thread *t)
{
	gctx_name_comm(buf, len, t->comm, t->tid);
}
