/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpuctx record, within cli/: what its files share. One concern each:
 *   record.c        the run: the trace file, the collector, the event loop, the closing
 *                   records, the summary and the exit status (cli_record_run)
 *   record_opts.c   the command line: options, defaults and their checks
 *   record_start.c  what tracing starts from: the trace's meta, the command held until
 *                   tracing is live, the API probes, the processes present at attach
 *   record_feed.c   where each record goes: trace file, live lines, model, the agent's hooks,
 *                   and the collectors that act on records (stacks, call sites, probes)
 * Calls go one way, record.c -> record_start.c -> record_feed.c, and record.c ->
 * record_opts.c: no circle (tools/check-layout.sh).
 */
#ifndef __GPUCTX_CLI_RECORD_H
#define __GPUCTX_CLI_RECORD_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "gpuctx_events.h"
#include "collect/discover.h"

struct cli_record_hooks;
struct gctx_collector;
struct gctx_finding;
struct gctx_trace_meta;

struct record_env {
	const char *output;
	struct gctx_pidset pids; /* -p */
	const char *cgroup;
	bool all;
	bool quiet;
	bool silent; /* --silent (gpuctx check): no live findings, no summary */
	bool verbose;
	double duration;
	struct gctx_rec_device devs[GCTX_MAX_REGDEVS];
	__u32 ndevs;
	const char *libs[16]; /* --libcuda / --libhip */
	__u32 nlibs;
	bool no_api;
	bool no_stacks;
	bool launches;
	bool no_hold;	       /* --no-hold */
	bool from_agent;       /* --from-agent: the running agent's history, no BPF */
	const char *run_dir;   /* --run-dir: that agent's (NULL: the node's) */
	__u32 hold_timeout_ms; /* --hold-timeout */
	__u32 ring_bytes;      /* --ring-size, 0 = the default */
	const char *perfetto;  /* --perfetto FILE */
	const char *chrome;    /* --chrome FILE */
	char **cmd;
	const struct cli_record_hooks *hooks; /* gpuctx agent: no trace file, records to hooks */
};

struct record_state {
	struct record_env *env;
	struct gctx_trace_writer *w;
	struct gctx_outfile *out; /* the trace, renamed into place at the end */
	struct gctx_model *model;
	struct gctx_uprobes *uprobes;
	struct gctx_stacks *stacks;   /* resolves kernel stacks (blame) */
	struct gctx_callers *callers; /* API call sites (GCTX_REC_CALLER) */
	struct gctx_pyprobe *pyprobe; /* tells the kernel where Python lives */
	struct gctx_libwatch *libwatch;
	__u64 start_mono;
	__u64 records;
	int write_err;
	bool started;			  /* tracing was live: the trace file is worth keeping */
	char cgroup_rel[GCTX_CGROUP_LEN]; /* --cgroup DIR in its hierarchy ("/a/b"), else "" */
	struct gctx_cgpaths *cgpaths;	  /* exec records' cgroup ids to paths */
};

/* record_opts.c: env from record's arguments (argv[0] = "record"); -1 with the error printed
 * (usage on a bad option); --help prints usage and exits 0. */
int record_parse_args(struct record_env *env, int argc, char **argv);

/* record_start.c */
void record_fill_meta(struct gctx_trace_meta *meta, const struct record_env *env, __u64 start_mono);
/* Fork cmd stopped on a pipe: it execs once a byte is written to *go_fd. -1 on error. */
pid_t record_spawn_stopped(char **cmd, int *go_fd);
/* The API probes and the watch on libraries mapped before them; -1 with the error printed. */
int record_start_uprobes(struct record_state *st, struct gctx_collector *c,
			 const struct gctx_pidset *seeds);
/* Attach modes: the processes of set alive now, and their GPU state; 0 or -errno. */
int record_present(struct record_state *st, struct gctx_collector *c, const struct gctx_pidset *set,
		   __u32 *npresent);

/* record_feed.c: one record (the collectors' callback, ctx the record_state) */
int record_feed(void *ctx, __u32 type, const void *data, __u32 len);
void record_note_cgroup(struct record_state *st, __u32 pid, __u64 cgid);
void record_next_stacks(struct record_state *st);
void record_watch_python(void *ctx, __u32 pid);			 /* ctx: the gctx_stacks */
void record_on_finding(const struct gctx_finding *f, void *ctx); /* ctx: the record_state */

#endif /* __GPUCTX_CLI_RECORD_H */
