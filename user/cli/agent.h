/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpuctx agent's parts (agent.c: options, incidents, dumps, metrics; agent_cut.c: one process
 * tree cut out of the window; agent_sock.c: the socket record --from-agent reads from).
 */
#ifndef __GPUCTX_AGENT_H
#define __GPUCTX_AGENT_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "cli/spool.h"
#include "gpuctx_events.h"
#include "lib/hmap.h"
#include "model/analysis.h"
#include "model/model.h"

struct gctx_window;
struct agent_subs;

struct agent_opts {
	const char *spool;
	int fail_on;
	double window_s;
	__u64 window_bytes;
	double grace_s;
	__u64 spool_max_bytes;
	__u32 spool_max_files;
	const char *metrics;
	const char *group;
	gid_t gid;
	bool syslog;
};

/* One process tree with an incident: written once its processes ended (or after
 * TREE_WAIT_NS), rewritten in place when it has more to say. */
struct pending {
	__u32 root_idx;
	__u64 first_ns;
	__u64 due_ns;	      /* 0: nothing to write */
	bool crash;	      /* a fatal signal with GPU state (no finding needed) */
	bool written;
	bool alive_at_write;  /* a last write follows the tree's end */
	char name[SPOOL_NAME_LEN];
	__u32 counted[GCTX_INC_MAX][GCTX_SEV_ERROR + 1]; /* incidents already in the metrics */
};

struct agent {
	struct agent_subs *subs;	/* record --from-agent clients */
	struct agent_opts o;
	struct gctx_window *win;
	int spool_fd;
	struct { __u32 type, len; void *data; } *globals;
	__u32 nglobals, cap_globals;
	__u64 globals_dropped;
	struct pending *pend;
	__u32 npend, cap_pend;
	__u64 pend_dropped;
	__u64 start_wall, start_mono, last_metrics, last_pending, last_fold;
	__u64 records, dumps, dump_errors;
	__u64 incidents[GCTX_INC_MAX][GCTX_SEV_ERROR + 1];
	__u64 crashes;
	struct gctx_rec_drops drops;	     /* so far (record refreshes it) */
	struct gctx_rec_drops drops_dumped; /* as the last dump written said */
	bool metrics_dirty;
};


/* ---- agent_cut.c ---- */

/* A process tree in the model: its pids, and its model indices parents first. */
struct tree {
	__u32 *pids;
	__u32 n, cap;
	struct gctx_hmap set;	/* pid -> index in pids: a tree may have 100,000s */
	__u64 *since, *until;	/* each member's start and exit (0: unknown, running) */
	__u32 cap_since, cap_until;
	__u32 *idx;
	__u32 nidx, cap_idx;
	bool alive;		/* a member still runs */
	__u32 skip;		/* never a member (a client of the agent), 0 none */
};

/* Add root and its descendants (the agent itself and t->skip left out). 0 or -ENOMEM. */
int tree_add(struct tree *t, const struct gctx_model *m, __u32 root);
bool tree_has(const struct tree *t, __u32 pid);
/* Add pid as a member (nothing if it is one). 0 or -ENOMEM. */
int tree_put(struct tree *t, __u32 pid);
/* The same, knowing when it started and ended (0: unknown, running). */
int tree_put_span(struct tree *t, __u32 pid, __u64 since, __u64 until);
void tree_free(struct tree *t);
/* Whether any of the pids a record concerns is in the tree. */
bool tree_wants(const struct tree *t, __u32 type, const void *data, __u32 len);

typedef int (*agent_sink)(void *ctx, __u32 type, const void *data, __u32 len);

/* The records of one tree, as a trace from the window's start would hold them: the device
 * registrations and probes, the members whose start the window lost (as at attach), then
 * every record of the tree in the window. */
struct agent_cut {
	struct tree *t; /* the scan adds children the model folded */
	agent_sink sink;
	void *sink_ctx;
	struct gctx_hmap covered; /* pids whose fork or attach record is in the window */
	__u64 first_ns; /* the tree's first record in the window (0: none) */
	__u64 records;	/* emitted */
};

/* Find what the window holds of the tree (first_ns, covered pids, forked children). 0 or
 * -ENOMEM. */
int agent_cut__scan(struct agent_cut *c, const struct gctx_window *win);
/* Emit it all to the sink. 0 or the sink's error. */
int agent_cut__emit(struct agent_cut *c, const struct agent *a, const struct gctx_model *m);
void agent_cut__free(struct agent_cut *c);

/* ---- agent.c ---- */
bool agent_has_gpu_state(const struct gctx_model *m, __u32 idx);
void agent_log(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- agent_sock.c: the agent's side of record --from-agent ---- */
int agent_subs__open(struct agent *a, char *err, size_t errlen); /* listen */
void agent_subs__tick(struct agent *a, const struct gctx_model *m);   /* accept, flush, end */
void agent_subs__on_record(struct agent *a, __u32 type, const void *data, __u32 len);
void agent_subs__close(struct agent *a);

#endif /* __GPUCTX_AGENT_H */
