/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Timeline exporter internals, shared by the user/output/timeline*.c files (not an API): the
 * exporter state, the track uuid scheme, small helpers, and each file's entry points.
 * The overview of what the timeline holds is at the top of timeline.c.
 */
#ifndef __GPUCTX_TIMELINE_PRIV_H
#define __GPUCTX_TIMELINE_PRIV_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "gpuctx_events.h"
#include "lib/hmap.h"
#include "lib/grow.h"
#include "lib/str.h"
#include "lib/tsmath.h"
#include "model/model.h"
#include "output/timeline/export.h"
#include "output/timeline/names.h"
#include "trace/records.h"

/* Track uuids: the kind in the top byte, model indices below. */
#define UUID(kind, v) (((__u64)(kind) << 56) | (__u64)(v))
enum { U_GLOBAL = 1, U_PROC, U_THREAD, U_HOLDER, U_OBJ, U_COUNTER, U_ACTX };

enum { CTR_MEM_API, CTR_MEM, CTR_FILES, CTR_RATE, CTR_MAX };

/* ---- exporter state: a few bytes per process, thread, holder and tracked object ---- */

struct xthread {
	bool described, open;
	__u64 begin_ts;
	char name[GCTX_NAME_LEN]; /* as last told to the sink */
};

struct href {
	__u32 file_idx;
	__u32 holder_idx;
};

struct xproc {
	bool described, open, cmdline_done;
	__u64 begin_ts;
	__u64 end_ts;		  /* set when it ends: no event of it after this */
	char name[GCTX_NAME_LEN]; /* as last told to the sink */
	struct xthread *th;
	__u32 nth, cap_th;
	struct href *held; /* holders with an open holding slice */
	__u32 nheld, cap_held;
	__u64 *kept; /* FD_KEPT file addresses waiting for this process's exec */
	__u32 nkept, cap_kept;
	__u8 ctr_described; /* bit per CTR_* */
	__u32 *findings; /* use findings waiting for the process to end (their use counts grow) */
	__u32 nfindings, cap_findings;
	__u32 *actx; /* API contexts it made whose slice is open (ids) */
	__u32 nactx, cap_actx;
	__u32 live_files;
	__u64 mem;     /* driver objects */
	__u64 mem_api; /* API allocations */
	bool rate_on;
	__u64 rate_bucket;
	__u64 rate_n;
};

struct xholder {
	bool described, open, used;
	__u32 lane;
	__u64 cursor;
};

struct xfile {
	struct xholder *h;
	__u32 nh, cap_h; /* nh: holders described */
	__u32 *live;	 /* tracked objects on this file not ended yet */
	__u32 nlive, cap_live;
};

/* A model object the timeline follows: a GPU context (its own track) or a sized allocation. */
struct xobj {
	__u32 obj_idx;
	__u32 file_idx;
	__u32 proc_idx; /* creator */
	__u32 lane;
	__u32 pos; /* index in its file's live list */
	bool ctx, open;
	__u64 parent_uuid;
	__u64 cursor;
};

/* A recorded call stack (model stack index): placed on an event yet, and the next stack of the
 * same key. */
struct xstack {
	bool used;
	__u32 next; /* index + 1, 0 none */
};

/* An API-level context (CUDA/HIP), by model context id - 1. */
struct xctx {
	bool described, open;
	__u32 lane;
	__u64 cursor;
};

struct exporter {
	struct gctx_model *m;
	struct gctx_tl_sink *s;
	struct gctx_trace_meta meta;
	__u64 now;    /* latest time seen */
	__u64 end_ns; /* END record */
	bool has_end;
	struct xproc *procs;
	__u32 nprocs, cap_procs;
	struct xfile *files;
	__u32 nfiles, cap_files;
	struct xobj *objs;
	__u32 nobjs, cap_objs;
	__u32 objs_seen; /* model objects examined */
	struct xctx *ctxs;
	__u32 cap_ctxs;
	__u32 ctxs_seen; /* model API contexts examined */
	__u32 mems_seen; /* model API allocations examined */
	__u32 icc_ctx;	 /* inherited-context-call raised by the record being fed: its context */
	struct gctx_hmap mem_map;    /* (proc, pointer) -> API allocation still counted */
	struct gctx_hmap thread_map; /* (proc, tid) -> newest described thread index */
	struct gctx_hmap holder_map; /* (proc, file) -> holder index */
	struct gctx_hmap obj_map;    /* (family << 32 | file, key) -> xobj index */
	struct gctx_model *stk_m;    /* the stacks (and call sites) read ahead; NULL: the model's,
				      * as they come */
	struct xstack *stk;	     /* per stack of stk_m (or of m) */
	__u32 cap_stk;
	struct gctx_hmap stk_map; /* (role << 32 | pid, file or trigger) -> first stack index */
	__u32 lanes;
	__u64 flows;
	int err; /* first -ENOMEM */
};

/* ---- args ---- */

#define MAX_ARGS 32 /* a finding: up to 23, and 8 for its stacks; an event: 3 for its stack */

struct args {
	struct gctx_tl_arg a[MAX_ARGS];
	__u32 n;
};

/* ---- small helpers ---- */

static inline void nomem(struct exporter *x)
{
	if (!x->err)
		x->err = -ENOMEM;
}

static inline __u64 max64(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/* ---- timeline.c: per-entity state, args, tracks, emitting, counters ---- */

struct xproc *tl_xp(struct exporter *x, __u32 pi);
struct xfile *tl_xf(struct exporter *x, __u32 fi);
int tl_proc_index(const struct gctx_model *m, __u32 pid);
int tl_file_index(const struct gctx_model *m, __u64 addr);

void tl_arg_u64(struct args *a, const char *key, __u64 v);
void tl_arg_s64(struct args *a, const char *key, __s64 v);
void tl_arg_bool(struct args *a, const char *key, bool v);
void tl_arg_strn(struct args *a, const char *key, const char *s, size_t n);
void tl_arg_str(struct args *a, const char *key, const char *s);
void tl_arg_strv(struct args *a, const char *key, const char *s, __u32 n);
void tl_arg_u32v(struct args *a, const char *key, const __u32 *v, __u32 n);
void tl_arg_stack(struct args *a, const char *key, const struct gctx_tl_stack *st);

void tl_trk_global(struct gctx_tl_track *t);
void tl_trk_proc(struct exporter *x, __u32 pi, struct gctx_tl_track *t);
void tl_trk_thread(struct exporter *x, __u32 pi, __u32 ti, struct gctx_tl_track *t);
void tl_trk_holder(struct exporter *x, __u32 fi, __u32 hi, struct gctx_tl_track *t);
void tl_trk_obj(struct exporter *x, __u32 xi, struct gctx_tl_track *t);

void tl_emit(struct exporter *x, int what, const struct gctx_tl_track *t, __u64 ts,
	     const char *name, const char *cat, const struct args *a, __u64 flow_out,
	     __u64 flow_in);
/* A slice from start to end, or an instant when it has no duration (an entry-only event): a
 * zero-length begin/end pair breaks nesting in trace processors. */
void tl_slice(struct exporter *x, const struct gctx_tl_track *t, __u64 start, __u64 end,
	      const char *name, const char *cat, const struct args *a, __u64 flow_in);
void tl_describe(struct exporter *x, const struct gctx_tl_track *t, __u64 ts);
__u64 tl_new_flow(struct exporter *x);
void tl_counter(struct exporter *x, __u32 pi, int c, __u64 ts, __s64 v);
void tl_rate_flush(struct exporter *x, __u32 pi, __u64 next_bucket, bool final);
void tl_rate_add(struct exporter *x, __u32 pi, __u64 ts);

/* Format a one-line message into err (nothing when err is NULL); export.c uses it too. */
__attribute__((format(printf, 3, 4))) void tl_errf(char *err, size_t errlen, const char *fmt, ...);

/* ---- timeline_procs.c: processes and threads ---- */

int tl_thread_index(struct exporter *x, __u32 pi, __u32 tid);
void tl_proc_describe(struct exporter *x, __u32 pi, __u64 flow_in);
void tl_proc_end(struct exporter *x, __u32 pi, __u64 ts, bool at_end);
int tl_event_proc(struct exporter *x, const struct gctx_ev_hdr *hdr);
void tl_on_fork(struct exporter *x, const struct gctx_ev_fork *ev, int old_pi);
void tl_on_exec(struct exporter *x, const struct gctx_ev_exec *ev);
void tl_on_thread_exit(struct exporter *x, const struct gctx_ev_exit *ev);
void tl_on_proc_present(struct exporter *x, const struct gctx_rec_proc *r);

/* ---- timeline_files.c: GPU files held by processes (holders) ---- */

void tl_live_files(struct exporter *x, __u32 pi, int delta, __u64 ts);
void tl_holder_sync(struct exporter *x, __u32 fi, __u32 hi, __u64 flow_in);
void tl_holders_new(struct exporter *x, __u32 fi);
int tl_holder_of(struct exporter *x, __u32 pi, __u32 fi);
void tl_proc_holders_sync(struct exporter *x, __u32 pi);
__u64 tl_use_flow(struct exporter *x, __u32 pi, __u32 fi, __u32 hi, int ctx, __u64 ts);
void tl_on_mmap(struct exporter *x, const struct gctx_ev_mmap *ev);
void tl_on_open(struct exporter *x, const struct gctx_ev_open *ev, int old_fi);
void tl_on_close(struct exporter *x, const struct gctx_ev_fd *ev);
void tl_on_fd_kept(struct exporter *x, const struct gctx_ev_fd *ev);
void tl_on_file_present(struct exporter *x, const struct gctx_rec_file *r, __u32 files_before);

/* ---- timeline_gpu.c: GPU contexts and objects decoded from ioctls, the ioctl slices ---- */

void tl_obj_end(struct exporter *x, __u32 xi, __u64 ts, bool at_end);
void tl_file_objs_sync(struct exporter *x, __u32 fi);
void tl_objs_new(struct exporter *x);
void tl_on_ioctl(struct exporter *x, const struct gctx_ev_ioctl *ev, __u32 objs_before);

/* ---- timeline_api.c: API-level contexts and allocations (CUDA, HIP) ---- */

void tl_actxs_new(struct exporter *x);
void tl_actxs_sync(struct exporter *x, __u32 pi, __u64 ts);
void tl_mems_new(struct exporter *x);
void tl_on_api(struct exporter *x, const struct gctx_ev_api *ev, __u32 ctxs_before);

/* ---- timeline_incidents.c: the diagnosis, at the end of input ---- */

void tl_incidents(struct exporter *x);

/* ---- timeline_findings.c ---- */

void tl_on_finding(const struct gctx_finding *f, void *ctx);
void tl_findings_flush(struct exporter *x, __u32 pi);

/* ---- timeline_stacks.c: call stacks on the events they were taken at ---- */

/* Read the stacks of the trace at path ahead of the pass (nothing when it is not a regular
 * file: they are then matched as they come). */
void tl_stacks_read_ahead(struct exporter *x, const char *path);
/* The stack taken at an event of process pid: one of roles (bits 1 << GCTX_STACK_*) keyed k2
 * (the struct file, the child pid of a fork, the API function), nearest to [start, end]. Adds
 * "site", "stack_note" and the stack to a; nothing when there is none. */
void tl_stack_add(struct exporter *x, struct args *a, __u32 roles, __u32 pid, __u64 k2, __u64 start,
		  __u64 end);
/* A GCTX_REC_STACK the model took. */
void tl_on_stack(struct exporter *x);
void tl_on_pyexc(struct exporter *x);
/* End of input: an instant for each stack no event took. */
void tl_stacks_flush(struct exporter *x);
/* Its frames as `gpuctx report` prints them, one per line. */
void tl_stack_text(const struct gctx_stack *s, char *buf, size_t len);

#endif /* __GPUCTX_TIMELINE_PRIV_H */
