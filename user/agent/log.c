// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's lines (agent.h): standard output, which is the journal under systemd, or syslog. */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "agent/agent.h"
#include "collect/discover.h"
#include "lib/esc.h"

void agent_log(struct agent *a, const char *fmt, ...)
{
	va_list ap;
	char line[8192];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* what a traced process names is escaped where it is put in; this keeps the journal's
	 * and syslog's line whole, nothing in it acting on a terminal, whatever a caller missed */
	gctx_printable(line);
	/* one call each: the spool_sync thread logs too */
	if (a->o.syslog) {
		syslog(LOG_WARNING, "%s", line);
	} else {
		printf("gpuctx agent: %s\n", line);
		fflush(stdout);
	}
}

void agent_log_line(void *ctx, const char *line)
{
	agent_log(ctx, "%s", line);
}

/* A stall of the event loop since t0: its total and its longest. */
void agent_stalled(__u64 t0, __u64 *total, __u64 *max)
{
	__u64 ns = gctx_now_mono() - t0;

	*total += ns;
	if (ns > *max)
		*max = ns;
}
