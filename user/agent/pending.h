/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's table of process trees with an incident (agent.h's struct pending), bounded so
 * that no one owner (a user, a Slurm job, a pod, a unit: spool_owner) keeps another's
 * incident from being dumped: each owner has at most per_owner trees not yet dumped ("open"),
 * and when all open_max slots are taken, the newest tree of the owner with the most gives its
 * slot to an owner with fewer. A tree dumped while it still runs is only watched for its end
 * (to rewrite its dump): it holds no open slot, and the oldest watched tree is forgotten past
 * watch_max. Pure: unit tested (tests/unit/agent/test_pending.c).
 */
#ifndef __GPUCTX_AGENT_PENDING_H
#define __GPUCTX_AGENT_PENDING_H

#include <stdbool.h>
#include <linux/types.h>

#define AGENT_PEND_OPEN_MAX  256  /* trees not yet dumped, all owners together */
#define AGENT_PEND_PER_OWNER 16	  /* ... of one owner */
#define AGENT_PEND_WATCH_MAX 1024 /* dumped trees still running, watched for their end */
#define AGENT_PEND_MAX	     (AGENT_PEND_OPEN_MAX + AGENT_PEND_WATCH_MAX)
#define AGENT_OWNER_LEN	     48

struct pending;

struct pend_table {
	struct pending *v;
	__u32 n, cap;
	__u32 per_owner, open_max, watch_max; /* 0: the defaults above */
	__u64 dropped; /* incidents not dumped: their owner at its limit, or given up for another */
	__u64 forgotten; /* watched trees forgotten (their end is not rewritten into the dump) */
};

/* Not dumped yet, or due to be written again. */
bool pending_open(const struct pending *p);
/* A new zeroed slot for a tree of owner (its owner and first_ns set), or NULL when it is
 * dropped (counted). Pointers into t->v are invalid after it. */
struct pending *pending_admit(struct pend_table *t, const char *owner, __u64 now);
/* Remove slot i (the last one takes its place). */
void pending_remove(struct pend_table *t, __u32 i);
void pending_free(struct pend_table *t);

#endif /* __GPUCTX_AGENT_PENDING_H */
