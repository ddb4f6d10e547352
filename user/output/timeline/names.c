// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The naming rule of processes and threads (names.h). */
#include <stdio.h>

#include "lib/str.h"
#include "output/timeline/names.h"

static void name_comm(char *buf, size_t len, const char *comm, const char *what, __u32 id)
{
	gctx_copy_str(buf, len, comm, GCTX_COMM_LEN);
	if (!buf[0])
		snprintf(buf, len, "%s %u", what, id);
}

void gctx_name_proc(char *buf, size_t len, const struct gctx_proc *p)
{
	name_comm(buf, len, p->comm, "pid", p->pid);
}

void gctx_name_thread(char *buf, size_t len, const struct gctx_thread *t)
{
	name_comm(buf, len, t->comm, "tid", t->tid);
}
