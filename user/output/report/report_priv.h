/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to the report (report.c, report_text.c, report_text_procs.c, report_json.c): the
 * lookups built once per report, the text report's state, and the helpers its files share.
 * Users of the report include output/report.h only.
 */
#ifndef __GPUCTX_REPORT_PRIV_H
#define __GPUCTX_REPORT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "gpuctx_events.h"
#include "lib/json.h"
#include "model/analysis.h"
#include "model/model.h"
#include "output/report/report.h"
#include "trace/tracefile.h"

struct rep_hold_ref {
	__u32 file_idx;
	__u32 holder_idx;
};

struct rep_obj_ref {
	__u32 file_id;
	__u32 obj_idx;
};

/* Lookups built once per report; CSR layout: items of node n are [off[n], off[n + 1]). */
struct rep_index {
	__u32 nprocs, nfiles, nobjs;
	__u32 *hold_off; /* per process: the holder records of that process */
	struct rep_hold_ref *holds;
	__u32 *obj_off; /* per process: objects it created, by file id then index */
	struct rep_obj_ref *objs;
	__u32 *kid_off; /* per object: its RM children, by index */
	__u32 *kids;
	__u32 *stack; /* explicit DFS stack of the process tree: node and depth */
	__u32 *stack_depth;
	__u32 *ostack; /* the same for object trees, walked while a process is on stack */
	__u32 *ostack_depth;
	unsigned char *proc_seen;
	unsigned char *obj_seen;
};

/* API contexts by creating process (CSR, context indices), and per process the API memory
 * allocated while no context was current. */
struct rep_api_index {
	__u32 nprocs, nctxs;
	__u32 *ctx_off;
	__u32 *ctxs;
	__u64 *loose_live, *loose_total, *loose_n;
};

/* The text report while it is written. */
struct rep_ctx {
	FILE *out;
	const struct gctx_model *m;
	const struct gctx_trace_meta *meta;
	__u64 start;
	struct rep_index ix;
	struct rep_api_index ax;
	struct gctx_analysis *an;
};

/* report.c: lookups, 0 or -ENOMEM (nothing left to free on failure) */
int rep_index__build(struct rep_index *ix, const struct gctx_model *m);
void rep_index__free(struct rep_index *ix);
int rep_api_index__build(struct rep_api_index *ax, const struct gctx_model *m);
void rep_api_index__free(struct rep_api_index *ax);

/* report.c: probes */
const char *rep_probe_how_name(__u32 how);
bool rep_probe_endbr64_skipped(const struct gctx_rec_probe *r);
const char *rep_probe_execution(const struct gctx_rec_probe *r);
void rep_probe_insn(char *dst, size_t len, const struct gctx_rec_probe *r, const char *sep);

/* report.c: processes, files, counts, output */
const struct gctx_proc *rep_proc(const struct gctx_model *m, __s64 idx);
void rep_proc_argv(const struct gctx_proc *p, const char **args, __u32 *len);
const char *rep_proc_exe(const struct gctx_proc *p);
const struct gctx_gpu_file *rep_file_by_id(const struct gctx_model *m, __u32 id);
__u64 rep_drops_total(const struct gctx_rec_drops *d);
/* Flush out: 0, or -errno (-EIO when unknown) when writing failed. */
int rep_finish(FILE *out);

/* report_text.c, for report_text_procs.c */
const char *rep_plural(__u64 n);
void rep_text_time(char *dst, size_t len, const struct rep_ctx *c, __u64 ts);

/* report_incidents.c: the verdict and the incidents, text and JSON */
void rep_text_verdict(struct rep_ctx *c);
void rep_json_incidents(struct gctx_json *j, const struct gctx_model *m,
			const struct gctx_analysis *an);

/* report_text_procs.c: the Processes section */
void rep_text_procs(struct rep_ctx *c);

/* report_text_procs.c: "  | " under a process at this depth */
void rep_text_detail_prefix(struct rep_ctx *c, __u32 depth);
/* report_callers.c: who called each API function (text, JSON), a context's creating call's
 * caller, and the callers the collector could not resolve */
struct gctx_json;
void rep_text_api_callers(struct rep_ctx *c, const struct gctx_proc *p, __u32 depth);
void rep_text_caller_stats(struct rep_ctx *c);
void rep_json_api_callsites(struct gctx_json *j, const struct gctx_model *m,
			    const struct gctx_proc *p);
void rep_json_ctx_caller(struct gctx_json *j, const struct gctx_model *m,
			 const struct gctx_api_ctx *x);
void rep_json_caller_stats(struct gctx_json *j, const struct gctx_model *m);
/* report_coverage.c: the API coverage section */
struct gctx_json;
void rep_text_coverage(struct rep_ctx *c);
void rep_json_coverage(struct gctx_json *j, const struct gctx_model *m);

/* report_jobs.c: each process's job (from its cgroup) and the distinct jobs */
void rep_text_jobs(struct rep_ctx *c);
void rep_json_proc_job(struct gctx_json *j, const struct gctx_proc *p);
void rep_json_jobs(struct gctx_json *j, const struct gctx_model *m);

#endif /* __GPUCTX_REPORT_PRIV_H */
