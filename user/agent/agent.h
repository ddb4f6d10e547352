/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agent/: the node-wide flight recorder behind `gpuctx agent` (cli/agent.c is its command
 * line). It rides on a recording of every process (cli_record_run with hooks, which call the
 * agent__* functions below): agent.c keeps the window and the incidents pending, dump.c cuts a
 * tree out into the spool (spool.c, spool_sync.c), metrics.c writes the counters, sock.c serves
 * record --from-agent (proto.h), cut.c is a tree's records as a trace holds them, log.c its
 * lines. It may include every stage but cli/; cli/ includes it.
 */
#ifndef __GPUCTX_AGENT_H
#define __GPUCTX_AGENT_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "agent/pending.h"
#include "agent/proto.h"
#include "agent/spool.h"
#include "collect/stacks.h"
#include "gpuctx_events.h"
#include "lib/hmap.h"
#include "model/analysis.h"
#include "model/cut.h"
#include "model/model.h"

struct gctx_window;
struct gctx_finding;
struct agent_subs;

struct agent_opts {
	const char *spool;
	const char *run_dir; /* its lock and socket (agent/proto.h): AGENT_RUN_DIR by default */
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
	__u64 due_ns; /* 0: nothing to write */
	bool crash;   /* a fatal signal with GPU state (no finding needed) */
	bool written;
	bool alive_at_write; /* a last write follows the tree's end */
	__u64 stacks_mark;   /* stacks accepted when it was due: written once done (0: not due) */
	char name[SPOOL_NAME_LEN];
	char owner[AGENT_OWNER_LEN]; /* whose tree (spool_owner): bounds its share (pending.h) */
	__u32 counted[GCTX_INC_MAX][GCTX_SEV_ERROR + 1]; /* incidents already in the metrics */
};

struct agent {
	struct agent_subs *subs; /* record --from-agent clients */
	struct agent_opts o;
	struct gctx_window *win;
	int spool_fd;
	int run_fd;  /* o.run_dir */
	int lock_fd; /* its AGENT_LOCK_NAME, held while it runs: one agent per run directory */
	struct {
		__u32 type, len;
		void *data;
	} * globals;
	__u32 nglobals, cap_globals;
	__u64 globals_dropped;
	struct pend_table pend;		   /* pending.h */
	struct gctx_stack_progress stacks; /* kept by record (cli_record_hooks) */
	__u64 stacks_waits;		   /* dumps written before their stacks were all done */
	__u64 last_drop_log;		   /* an incident not dumped: said once a minute at most */
	__u64 start_wall, start_mono, last_metrics, last_pending, last_fold;
	struct spool_sync *sync; /* dumps' fsync, rename, log line, cap */
	struct spool_same same;	 /* one owner's repeats of one failure, folded */
	__u64 records, dump_errors;
	__u64 incidents[GCTX_INC_MAX][GCTX_SEV_ERROR + 1];
	__u64 crashes;
	/* the event loop's longest stalls: nothing drains the ring buffer meanwhile (ns) */
	__u64 compactions, compact_ns, compact_max_ns;
	__u64 dump_ns, dump_max_ns;
	struct gctx_rec_drops drops;	    /* so far (record refreshes it) */
	struct gctx_rec_drops drops_dumped; /* as the last dump written said */
	__u64 synced_seen;		    /* spool_sync__finished() at the last metrics */
	bool metrics_dirty;		    /* rewrite them soon (METRICS_SOON_NS) */
};

/* ---- agent.c: the engine, its life and the recording's hooks (cli_record_hooks) ---- */

/* Take the node's lock, open the spool, make the window and the sync thread, listen for
 * record --from-agent. 0, or -1 with a one-line reason in err (nothing left open). */
int agent__start(struct agent *a, char *err, size_t errlen);
void agent__on_record(void *ctx, const struct gctx_model *m, __u32 type, const void *data,
		      __u32 len);
void agent__on_finding(void *ctx, const struct gctx_model *m, const struct gctx_finding *f);
void agent__tick(void *ctx, struct gctx_model *m);
void agent__finish(void *ctx, const struct gctx_model *m);
/* After the recording: what agent__start made goes. */
void agent__stop(struct agent *a);

/* ---- dump.c: one pending tree's trace into the spool. 0 or -errno (counted, logged) ---- */
int agent_dump__write(struct agent *a, const struct gctx_model *m, struct pending *p);

/* ---- metrics.c: the counters in Prometheus text format (--metrics; nothing without) ---- */
void agent_metrics__write(struct agent *a, const struct gctx_model *m);

/* ---- cut.c: a process tree's records (model/cut.h) as a trace holds them ---- */

/* Exited processes without GPU state a dump records at most (the newest); the rest are
 * counted in its drops record. */
#define AGENT_DUMP_MAX_MINOR 256

/* The device registrations and probes, then the tree's cut. 0 or the sink's error. */
int agent_cut__emit(struct gctx_cut *c, const struct agent *a, const struct gctx_model *m);
/* What a dump says it lacks: the events lost since the previous dump, the window's
 * evictions when the tree's history is cut, what the cut left out. */
void agent_cut__drops(const struct agent *a, const struct gctx_cut *c, struct gctx_rec_drops *d);

/* ---- log.c: one line to standard output (the journal) or syslog, from any thread ---- */
void agent_log(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The spool_sync thread's lines (ctx: the agent). */
void agent_log_line(void *ctx, const char *line);
/* A stall of the event loop since t0: its total and its longest. */
void agent_stalled(__u64 t0, __u64 *total, __u64 *max);

/* ---- sock.c: the agent's side of record --from-agent ---- */
int agent_subs__open(struct agent *a, char *err, size_t errlen);    /* listen */
void agent_subs__tick(struct agent *a, const struct gctx_model *m); /* accept, flush, end */
void agent_subs__on_record(struct agent *a, __u32 type, const void *data, __u32 len);
void agent_subs__close(struct agent *a);

#endif /* __GPUCTX_AGENT_H */
