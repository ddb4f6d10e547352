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

#include <linux/types.h>

#define AGENT_SOCK	  "/run/gpuctx-agent.sock"
#define AGENT_FRAME_END	  0
#define AGENT_FRAME_ERROR 0xffffffffu
#define AGENT_FRAME_LIVE  0xfffffffeu /* the history is sent; what follows is live */
#define AGENT_FRAME_MAX	  (1u << 20)  /* a longer frame is a broken stream */

struct agent_frame {
	__u32 type;
	__u32 len;
};
_Static_assert(sizeof(struct agent_frame) == 8, "agent frame size");

#endif /* __GPUCTX_AGENT_PROTO_H */
