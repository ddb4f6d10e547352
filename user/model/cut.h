/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One process tree cut out of a flight recorder's window (trace/window.h), as gpuctx agent
 * writes it to a dump and sends it to record --from-agent. A tree is a set of spans: a pid
 * over one process's lifetime. A record belongs to the tree when a pid it names was a
 * member's when it happened: on a busy node pids wrap within seconds, so a pid alone would
 * take in every later (or earlier) process that had it.
 *
 * A dump may bound what it holds (gctx_cut.max_minor): the exited processes that never
 * touched GPU state, with no descendant that did, are context, not evidence; past the cap,
 * the oldest of them are left out, counted (processes and records), never silently.
 */
#ifndef __GPUCTX_CUT_H
#define __GPUCTX_CUT_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/hmap.h"
#include "model/model.h"

struct gctx_window;

#define GCTX_SPAN_NONE ((__u32)-1)

enum {
	GCTX_SPAN_MODEL = 1 << 0,   /* from the model: a process it still holds (proc_idx) */
	GCTX_SPAN_KEEP = 1 << 1,    /* evidence: running, GPU state, an ancestor of either */
	GCTX_SPAN_OMIT = 1 << 2,    /* left out of the cut (counted) */
	GCTX_SPAN_COVERED = 1 << 3, /* its fork or attach record is in the window */
};

struct gctx_span {
	__u32 pid;
	__u32 prev;	/* the tree's earlier process with this pid, or GCTX_SPAN_NONE */
	__u32 parent;	/* the span that forked it, or GCTX_SPAN_NONE */
	__u32 flags;	/* GCTX_SPAN_* */
	__u32 proc_idx; /* GCTX_SPAN_MODEL: its index in the model */
	__u64 since;	/* start (fork time), 0 unknown: since ever */
	__u64 until;	/* exit, 0 running (or its exit was not seen) */
};

struct gctx_tree {
	struct gctx_span *s;
	__u32 n, cap;
	struct gctx_hmap last; /* pid -> its latest span: a tree may have 100,000s */
	__u32 *idx;	       /* model indices of the members the model holds, parents first */
	__u32 nidx, cap_idx;
	bool alive;	/* a member the model holds still runs */
	__u32 skip;	/* never a member (a client of the agent), 0 none; nor the
			 * calling process itself */
	__u32 n_pruned; /* spans left after the latest prune */
	__u64 pruned;	/* spans pruned so far */
};

/* Add the model's process root and its descendants (the skipped pid and the caller left out). 0 or
 * -ENOMEM. */
int gctx_tree__add(struct gctx_tree *t, const struct gctx_model *m, __u32 root);
/* Whether any member had pid. */
bool gctx_tree__has(const struct gctx_tree *t, __u32 pid);
/* A member pid from since to until (0: unknown, running), forked by span parent: its span
 * in *span (may be NULL). When a span of pid already holds since, that one (the same
 * process). 0 or -ENOMEM. */
int gctx_tree__put(struct gctx_tree *t, __u32 pid, __u64 since, __u64 until, __u32 parent,
		   __u32 *span);
/* The span pid was a member by at ts: with exact, the one whose lifetime holds ts (ts is
 * the record's own time); otherwise the latest that started by ts (ts is when the record
 * arrived, after the event). GCTX_SPAN_NONE when none. */
__u32 gctx_tree__span_at(const struct gctx_tree *t, __u32 pid, __u64 ts, bool exact);
/* Follow a record as it comes: a member's fork adds its child, a member's exit ends its
 * span. 0 or -ENOMEM. */
int gctx_tree__on_record(struct gctx_tree *t, __u32 type, const void *data, __u32 len);
/* Whether a record that arrived at arrived_ns (~0: the latest spans) belongs to the tree
 * and is not left out; *omitted (may be NULL) says it belongs but is left out. */
bool gctx_tree__wants(const struct gctx_tree *t, __u32 type, const void *data, __u32 len,
		      __u64 arrived_ns, bool *omitted);
void gctx_tree__free(struct gctx_tree *t);
/* A tree followed live (record --from-agent), not one being cut: forget the members that
 * exited before before_ns (their late records are in), once the tree has doubled since the
 * last prune, so that a job forking for weeks keeps its live members and recent exits only.
 * Spans move: a span index held across this call is stale. Returns the spans forgotten, 0
 * when not due, or -ENOMEM (the tree unchanged). */
int gctx_tree__prune(struct gctx_tree *t, __u64 before_ns);

typedef int (*gctx_cut_sink)(void *ctx, __u32 type, const void *data, __u32 len);

/* The records of one tree, as a trace from the window's start would hold them: the members
 * whose start the window lost (as at attach), then every record of the tree in the window.
 * The device registrations and probes are the caller's to emit first. */
struct gctx_cut {
	struct gctx_tree *t; /* the scan adds the children the model no longer holds */
	gctx_cut_sink sink;
	void *sink_ctx;
	__u32 max_minor; /* exited processes without GPU state kept at most (0: all) */
	__u64 from_ns;	 /* no member's record is older: its root's fork (0: unknown) */
	__u64 first_ns;	 /* the tree's first record in the window (0: none) */
	__u64 records;	 /* emitted */
	__u64 omitted_procs, omitted_records; /* left out by max_minor (records: last emit) */
	bool history_cut; /* the window had forgotten records and a member is older than it */
};

/* Find what the window holds of the tree: first_ns, the children forked by members, exits,
 * then with max_minor, what is left out. 0 or -ENOMEM. */
int gctx_cut__scan(struct gctx_cut *c, const struct gctx_model *m, const struct gctx_window *win);
/* Emit it all to the sink. 0 or the sink's error. */
int gctx_cut__emit(struct gctx_cut *c, const struct gctx_model *m, const struct gctx_window *win);

/* The latest process with pid the window holds the start of (its fork, or its record at
 * attach): true and its start in *since. For a process the model forgot (folded). */
bool gctx_cut__find_pid(const struct gctx_window *win, __u32 pid, __u64 *since);

#endif /* __GPUCTX_CUT_H */
