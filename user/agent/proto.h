/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the agent sends to `gpuctx record --from-agent` (agent/sock.c, cli/fromagent.c): after the
 * request line "pids PID[,PID...]\n" or "cgroup DIR\n" (a cgroup v2 directory: the processes
 * in its subtree, those that exec in it later and their descendants, as record --cgroup
 * follows them), frames of a header and len bytes: the history's records (types of
 * gpuctx_events.h), AGENT_FRAME_LIVE, the records as they happen, then AGENT_FRAME_END, or
 * AGENT_FRAME_ERROR with a one-line reason. The client may send "end\n" to stop: the agent
 * sends what its ring buffer held until then, then AGENT_FRAME_END.
 */
#ifndef __GPUCTX_AGENT_PROTO_H
#define __GPUCTX_AGENT_PROTO_H

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/types.h>

/* The agent's run directory (gpuctx agent --run-dir; the node's: AGENT_RUN_DIR) holds its lock
 * and its socket. A second agent for a test, or a test suite beside the node's agent, uses its
 * own; its clients (record --from-agent --run-dir, the Slurm plugin's run-dir=) name it. */
#define AGENT_RUN_DIR	  "/run/gpuctx"
#define AGENT_SOCK_NAME	  "agent.sock"
#define AGENT_LOCK_NAME	  "agent.lock"
#define AGENT_FRAME_END	  0
#define AGENT_FRAME_ERROR 0xffffffffu
#define AGENT_FRAME_LIVE  0xfffffffeu /* the history is sent; what follows is live */
#define AGENT_FRAME_MAX	  (1u << 20)  /* a longer frame is a broken stream */

struct agent_frame {
	__u32 type;
	__u32 len;
};
_Static_assert(sizeof(struct agent_frame) == 8, "agent frame size");

/* The socket's address in run_dir (NULL: AGENT_RUN_DIR). 0, or -1 when the path does not fit
 * a unix socket address. */
static inline int agent_sock_addr(struct sockaddr_un *sa, const char *run_dir)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", run_dir ? run_dir : AGENT_RUN_DIR,
		     AGENT_SOCK_NAME);
	return n > 0 && (size_t)n < sizeof(sa->sun_path) ? 0 : -1;
}

#endif /* __GPUCTX_AGENT_PROTO_H */
