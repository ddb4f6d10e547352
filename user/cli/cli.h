/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli/: the gpuctx command line (main.c dispatches): one file per subcommand (record's four
 * share record.h), and what commands share (load.c, hosts.c, list.c, verdict.c, fromagent.c). The
 * agent's engine is a stage of its own (agent/); agent.c here is its command line. The top of the
 * data path: it may include every other stage; nothing includes it. No two files of it call each
 * other round a circle (tools/check-layout.sh).
 */
#ifndef __GPUCTX_CLI_H
#define __GPUCTX_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct gctx_model;
struct gctx_trace_meta;

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_agent(int argc, char **argv);

/* record*.c: what gpuctx agent hooks into a recording. With hooks, no trace file is written:
 * every record (raw stacks excepted) goes to on_record after the live model took it. */
struct gctx_finding;
struct gctx_stack_progress;

struct cli_record_hooks {
	void *ctx;
	void (*on_record)(void *ctx, const struct gctx_model *m, __u32 type, const void *data,
			  __u32 len);
	void (*on_finding)(void *ctx, const struct gctx_model *m, const struct gctx_finding *f);
	/* each turn of the event loop; it may fold the model (gctx_model__fold) */
	void (*tick)(void *ctx, struct gctx_model *m);
	void (*finish)(void *ctx, const struct gctx_model *m); /* recording stopped */
	/* non-NULL: record keeps it at the drop counts so far (refreshed once a second) */
	struct gctx_rec_drops *drops;
	/* non-NULL: record keeps it at the stacks' progress before each tick (collect/stacks.h) */
	struct gctx_stack_progress *stacks;
};
/* fromagent.c: record --from-agent (-p's processes, or a --cgroup followed by the agent): the
 * trace from the agent. */
struct cli_from_agent {
	const char *output;
	const __u32 *pids;
	__u32 npids;
	const char *cgroup;  /* absolute path of a cgroup v2 directory, else NULL: pids */
	const char *run_dir; /* the agent's --run-dir (NULL: the node's, AGENT_RUN_DIR) */
	double duration;
	bool quiet, silent;
	const struct gctx_trace_meta *meta;
};
int cli_record_from_agent(const struct cli_from_agent *o);

/* gpuctx record with these arguments (argv[0] = "record"), and hooks (NULL: a plain record). */
int cli_record_run(int argc, char **argv, const struct cli_record_hooks *hooks);

/* Exit status of `check` (and `report --fail-on`) when an incident at or above the fail-on
 * severity occurred. Chosen clear of 1-2 (usage, errors), 126-127 (shell) and 128+N (signals). */
#define GCTX_EXIT_INCIDENT 86
#define GCTX_FAIL_NEVER	   3 /* --fail-on never: beyond every severity */

/* load.c: read a whole trace into a finished model. 0, or 1 with a one-line error printed. */
int cli_load_trace(const char *path, struct gctx_model **out, struct gctx_trace_meta *meta);
/* list.c: report --list, one line per trace (a directory: its *.gctx files), oldest first;
 * GCTX_EXIT_INCIDENT when one has an incident at or above fail_on, 1 when one is unreadable */
int cli_report_list(char *const *paths, int npaths, bool json, int fail_on);

/* verdict.c: "error", "warning", "never" -> severity (GCTX_FAIL_NEVER); -1 when unknown. */
int cli_parse_fail_on(const char *arg);
/* verdict.c: the diagnosis of a finished model: the verdict and fixes to out after prefix (out
 * NULL: none), JUnit to junit (NULL: none). Returns GCTX_EXIT_INCIDENT when an incident is at
 * or above fail_on, 1 when the analysis or the JUnit file failed, else 0. */
int cli_verdict(const struct gctx_model *m, const struct gctx_trace_meta *meta, int fail_on,
		const char *junit, FILE *out, const char *prefix);

/* hosts.c: the traces of a command line, one host each (a merged trace counts its hosts) */
struct gctx_host_file;
struct gctx_host_clock;
struct gctx_export_stats;
struct cli_job {
	struct gctx_host_file *files; /* trace/hosts.h */
	__u32 n;
	struct gctx_model **models; /* cli_job_load only */
	const struct gctx_trace_meta **metas;
	struct gctx_host_clock *clocks;
	__u32 ref; /* the host whose clock is the job's */
};
/* The hosts of paths, without (open) or with (load) their models. 0, or 1 with a one-line
 * error printed. */
int cli_job_open(char *const *paths, int npaths, struct cli_job *job);
int cli_job_load(char *const *paths, int npaths, struct cli_job *job);
void cli_job_free(struct cli_job *job);
/* The report over the hosts (report_hosts.c); 0 or -errno. */
int cli_job_report(const struct cli_job *job, bool json, FILE *out);
/* cli_verdict of each host, its lines prefixed with the host; the worst exit status. */
int cli_job_verdict(const struct cli_job *job, int fail_on, FILE *out, const char *prefix);
/* The HTML page of the hosts (output/html/html.h), written to path: 0, or 1 with a one-line
 * error printed. */
int cli_job_html(const struct cli_job *job, const char *path);
/* One Perfetto timeline, a machine per host (gctx_export_hosts). */
int cli_job_export(const struct cli_job *job, const char *out, int format, char *err, size_t errlen,
		   struct gctx_export_stats *st);

#endif /* __GPUCTX_CLI_H */
