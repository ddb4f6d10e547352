// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline export (interface and rules in export.h).
 *
 * One pass over the trace file: each record goes to the model, then the exporter asks the model
 * what the record changed and hands that to the sink at once. Findings come from the model's
 * finding callback, while the record is being fed; those of gctx_model__finish() at the end.
 *
 * What the timeline holds, per process (model index pi):
 *   - the process track: its life as a slice (fork or first sight -> exit or end of trace) with
 *     argv and the exit status as args, an instant per exec, an instant per finding;
 *   - a track per thread, with the thread's life as a slice (except the main thread's where
 *     the process track is the main thread's, as in Chrome JSON);
 *   - a GPU track per file description it holds (a "holder"): a slice per holding period named
 *     by how it got the file (opened, inherited from a pid, received, present at attach), with
 *     its ioctls and mmaps inside;
 *   - a GPU track per context it created (RM client, RM channel group, UVM space, KFD process,
 *     DRM context), nested under the file it lives on (a channel group under its RM client),
 *     with the context's lifetime and the process's later ioctls on it;
 *   - counters: GPU memory allocated (sizes of the decoded allocations still alive), live GPU
 *     files (holders), ioctl rate (per 10 ms).
 * Flows: the forking thread -> the child's life (also thread creation); the parent's file track
 * -> the child's holding period (inheritance); the context or opener's file track -> the first
 * use of a file by each process that did not open it (inherited or received).
 *
 * Slices on one track must nest, but ioctls of several threads on one file overlap and records
 * come in the order they ended: every GPU track keeps a cursor (the latest end written) and a
 * slice starts no earlier than it. The exact times stay in the args.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decode/api.h"
#include "output/chrome.h"
#include "decode/decode.h"
#include "output/export.h"
#include "lib/hmap.h"
#include "model/model.h"
#include "output/perfetto.h"
#include "output/print.h"
#include "trace/records.h"
#include "trace/tracefile.h"

#define RATE_BUCKET_NS 10000000ULL /* ioctl-rate counter resolution */
#define RATE_PER_SEC   (1000000000ULL / RATE_BUCKET_NS)
#define OUT_BUF_SIZE   (1 << 20)
#define CHAIN_MAX      64 /* parents walked to find a forked child's argv */

/* Track uuids: the kind in the top byte, model indices below. */
#define UUID(kind, v) (((__u64)(kind) << 56) | (__u64)(v))
enum { U_GLOBAL = 1, U_PROC, U_THREAD, U_HOLDER, U_OBJ, U_COUNTER, U_ACTX };

enum { CTR_MEM_API, CTR_MEM, CTR_FILES, CTR_RATE, CTR_MAX };

#define FAM_RM 0xffffu /* RM handles share one namespace per client */

/* ---- exporter state: a few bytes per process, thread, holder and tracked object ---- */

struct xthread {
	bool described, open;
	__u64 begin_ts;
	char name[GCTX_COMM_LEN];
};

struct href {
	__u32 file_idx;
	__u32 holder_idx;
};

struct xproc {
	bool described, open, cmdline_done;
	__u64 begin_ts;
	char name[GCTX_COMM_LEN];
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
	__u32 lanes;
	__u64 flows;
	int err; /* first -ENOMEM */
};

static int grow(void *pp, __u32 *cap, __u32 need, size_t elem)
{
	void **p = pp;
	__u32 ncap = *cap ? *cap : 4;
	char *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, (size_t)ncap * elem);
	if (!np)
		return -ENOMEM;
	memset(np + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*p = np;
	*cap = ncap;
	return 0;
}

static void nomem(struct exporter *x)
{
	if (!x->err)
		x->err = -ENOMEM;
}

static __u64 max64(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/* Copy a fixed-size, possibly unterminated string. */
static void cpy(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Per-entity state, grown to cover the model's index; NULL only when out of memory. */
static struct xproc *XP(struct exporter *x, __u32 pi)
{
	if (pi >= x->nprocs) {
		if (grow(&x->procs, &x->cap_procs, pi + 1, sizeof(*x->procs))) {
			nomem(x);
			return NULL;
		}
		x->nprocs = pi + 1;
	}
	return &x->procs[pi];
}

static struct xfile *XF(struct exporter *x, __u32 fi)
{
	if (fi >= x->nfiles) {
		if (grow(&x->files, &x->cap_files, fi + 1, sizeof(*x->files))) {
			nomem(x);
			return NULL;
		}
		x->nfiles = fi + 1;
	}
	return &x->files[fi];
}

static int proc_index(const struct gctx_model *m, __u32 pid)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(m, pid);

	return p ? (int)p->idx : -1;
}

static int file_index(const struct gctx_model *m, __u64 addr)
{
	const struct gctx_gpu_file *f = gctx_model__file_by_addr(m, addr);

	return f ? (int)f->id - 1 : -1;
}

/* ---- args ---- */

#define MAX_ARGS 24

struct args {
	struct gctx_tl_arg a[MAX_ARGS];
	__u32 n;
};

static struct gctx_tl_arg *arg_add(struct args *a, const char *key, enum gctx_tl_arg_type type)
{
	static struct gctx_tl_arg sink_hole;

	if (a->n >= MAX_ARGS)
		return &sink_hole; /* a bug, not input: MAX_ARGS covers every event */
	a->a[a->n].key = key;
	a->a[a->n].type = type;
	return &a->a[a->n++];
}

static void arg_u64(struct args *a, const char *key, __u64 v)
{
	arg_add(a, key, GCTX_TL_U64)->u = v;
}

static void arg_s64(struct args *a, const char *key, __s64 v)
{
	arg_add(a, key, GCTX_TL_S64)->s = v;
}

static void arg_bool(struct args *a, const char *key, bool v)
{
	arg_add(a, key, GCTX_TL_BOOL)->b = v;
}

/* s stays referenced until the event is written: pass storage that outlives the call. */
static void arg_strn(struct args *a, const char *key, const char *s, size_t n)
{
	struct gctx_tl_arg *g = arg_add(a, key, GCTX_TL_STR);

	g->str.p = s;
	g->str.n = strnlen(s, n);
}

static void arg_str(struct args *a, const char *key, const char *s)
{
	arg_strn(a, key, s, strlen(s));
}

static void arg_strv(struct args *a, const char *key, const char *s, __u32 n)
{
	struct gctx_tl_arg *g = arg_add(a, key, GCTX_TL_STRV);

	g->str.p = s;
	g->str.n = n;
}

static void arg_u32v(struct args *a, const char *key, const __u32 *v, __u32 n)
{
	struct gctx_tl_arg *g = arg_add(a, key, GCTX_TL_U32V);

	g->u32v.v = v;
	g->u32v.n = n;
}

/* ---- tracks ---- */

static void trk_global(struct gctx_tl_track *t)
{
	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_GLOBAL, 1);
	t->kind = GCTX_TL_GLOBAL;
}

static void trk_proc(struct exporter *x, __u32 pi, struct gctx_tl_track *t)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_PROC, pi + 1);
	t->kind = GCTX_TL_PROCESS;
	t->pid = p->pid;
	t->tid = p->pid;
}

static void trk_thread(struct exporter *x, __u32 pi, __u32 ti, struct gctx_tl_track *t)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_THREAD, ((__u64)(pi + 1) << 24) | (ti & 0xffffff));
	t->parent = UUID(U_PROC, pi + 1);
	t->kind = GCTX_TL_THREAD;
	t->pid = p->pid;
	t->tid = p->threads[ti].tid;
}

static void trk_holder(struct exporter *x, __u32 fi, __u32 hi, struct gctx_tl_track *t)
{
	const struct gctx_holder *h = &gctx_model__file(x->m, fi)->holders[hi];

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_HOLDER, ((__u64)(fi + 1) << 24) | (hi & 0xffffff));
	t->parent = UUID(U_PROC, h->proc_idx + 1);
	t->kind = GCTX_TL_GPU;
	t->pid = gctx_model__proc(x->m, h->proc_idx)->pid;
	t->lane = x->files[fi].h[hi].lane;
}

static void trk_obj(struct exporter *x, __u32 xi, struct gctx_tl_track *t)
{
	const struct xobj *o = &x->objs[xi];

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_OBJ, xi + 1);
	t->parent = o->parent_uuid;
	t->kind = GCTX_TL_GPU;
	t->pid = gctx_model__proc(x->m, o->proc_idx)->pid;
	t->lane = o->lane;
}

static void trk_counter(struct exporter *x, __u32 pi, int c, struct gctx_tl_track *t)
{
	static const char *const names[CTR_MAX] = {
	    [CTR_MEM_API] = "GPU memory allocated",
	    [CTR_MEM] = "GPU memory allocated (driver objects)",
	    [CTR_FILES] = "live GPU files",
	    [CTR_RATE] = "ioctl rate",
	};
	static const char *const units[CTR_MAX] = {
	    [CTR_MEM_API] = "bytes",
	    [CTR_MEM] = "bytes",
	    [CTR_FILES] = "count",
	    [CTR_RATE] = "ioctls/s",
	};

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_COUNTER, ((__u64)(pi + 1) << 4) | c);
	t->parent = UUID(U_PROC, pi + 1);
	t->kind = GCTX_TL_COUNTER;
	t->pid = gctx_model__proc(x->m, pi)->pid;
	t->name = names[c];
	t->unit = units[c];
	t->unit_bytes = c == CTR_MEM || c == CTR_MEM_API;
}

/* ---- emitting ---- */

static void emit(struct exporter *x, int what, const struct gctx_tl_track *t, __u64 ts,
		 const char *name, const char *cat, const struct args *a, __u64 flow_out,
		 __u64 flow_in)
{
	struct gctx_tl_event e = {
	    .track = t,
	    .ts = ts,
	    .name = name,
	    .cat = cat,
	    .args = a ? a->a : NULL,
	    .nargs = a ? a->n : 0,
	    .flow_out = flow_out,
	    .flow_in = flow_in,
	};

	x->s->events++;
	if (what == 'B')
		x->s->ops->slice_begin(x->s, &e);
	else if (what == 'E')
		x->s->ops->slice_end(x->s, &e);
	else
		x->s->ops->instant(x->s, &e);
}

static void describe(struct exporter *x, const struct gctx_tl_track *t, __u64 ts)
{
	x->s->ops->track(x->s, t, ts);
}

static __u64 new_flow(struct exporter *x)
{
	return ++x->flows;
}

static void counter(struct exporter *x, __u32 pi, int c, __u64 ts, __s64 v)
{
	struct xproc *xp = &x->procs[pi];
	struct gctx_tl_track t;

	trk_counter(x, pi, c, &t);
	if (!(xp->ctr_described & (1u << c))) {
		xp->ctr_described |= 1u << c;
		describe(x, &t, ts);
	}
	x->s->events++;
	x->s->ops->counter(x->s, &t, ts, v);
}

/* ---- processes and threads ---- */

/* argv of p at time ts: its own (exec or attach), else its fork parent's at the fork. */
static const char *proc_argv(const struct gctx_model *m, const struct gctx_proc *p, __u64 ts,
			     __u32 *len)
{
	int depth;
	__u32 i;

	for (depth = 0; p && depth < CHAIN_MAX; depth++) {
		for (i = p->nexecs; i > 0; i--) {
			if (p->execs[i - 1].ts_ns <= ts) {
				*len = p->execs[i - 1].args_len;
				return p->execs[i - 1].args;
			}
		}
		if (p->args_len) {
			*len = p->args_len;
			return p->args;
		}
		if (p->parent_idx < 0 || !p->start_ns)
			break;
		ts = p->start_ns;
		p = gctx_model__proc(m, p->parent_idx);
	}
	*len = 0;
	return NULL;
}

static void proc_cmdline(struct exporter *x, __u32 pi, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	const char *argv;
	__u32 len;

	if (p->nexecs) {
		argv = p->execs[p->nexecs - 1].args;
		len = p->execs[p->nexecs - 1].args_len;
	} else {
		argv = p->args;
		len = p->args_len;
	}
	if (!len)
		return;
	x->procs[pi].cmdline_done = true;
	x->s->ops->cmdline(x->s, ts, p->pid, p->ppid, argv, len);
}

/* Describe thread ti of process pi and begin its life slice; flow_in ends a clone flow. */
static void thread_describe(struct exporter *x, __u32 pi, __u32 ti, __u64 flow_in)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	const struct gctx_thread *th = &p->threads[ti];
	struct xproc *xp = &x->procs[pi];
	struct xthread *xt = &xp->th[ti];
	struct gctx_tl_track t;
	struct args a;
	char name[32];

	xt->begin_ts = max64(th->start_ns ? th->start_ns : x->now, xp->begin_ts);
	if (gctx_hmap__put(&x->thread_map, pi, th->tid, ti))
		nomem(x);
	trk_thread(x, pi, ti, &t);
	cpy(xt->name, sizeof(xt->name), th->comm, sizeof(th->comm));
	t.name = xt->name;
	describe(x, &t, xt->begin_ts);
	xt->described = true;
	if (th->tid == p->pid && x->s->ops->process_is_main_thread)
		return;
	snprintf(name, sizeof(name), "thread %u", th->tid);
	a.n = 0;
	arg_u64(&a, "tid", th->tid);
	arg_str(&a, "comm", xt->name);
	if (!th->start_ns)
		arg_bool(&a, "started_before_trace", true);
	emit(x, 'B', &t, xt->begin_ts, name, "thread", &a, 0, flow_in);
	xt->open = true;
}

static void thread_end(struct exporter *x, __u32 pi, __u32 ti, __u64 ts)
{
	struct xthread *xt = &x->procs[pi].th[ti];
	struct gctx_tl_track t;

	if (!xt->open)
		return;
	trk_thread(x, pi, ti, &t);
	emit(x, 'E', &t, max64(ts, xt->begin_ts), NULL, NULL, NULL, 0, 0);
	xt->open = false;
}

/* Describe the threads the model added, up to index limit (exclusive); the one at index
 * flow_ti gets the clone flow flow_in. */
static void threads_upto(struct exporter *x, __u32 pi, __u32 limit, int flow_ti, __u64 flow_in)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	__u32 i;

	if (limit > p->nthreads)
		limit = p->nthreads;
	if (limit <= xp->nth)
		return;
	if (grow(&xp->th, &xp->cap_th, p->nthreads, sizeof(*xp->th))) {
		nomem(x);
		return;
	}
	for (i = xp->nth; i < limit; i++)
		thread_describe(x, pi, i, (int)i == flow_ti ? flow_in : 0);
	xp->nth = limit;
}

/* Describe the threads the model added since the last call; end those that exited. */
static void threads_sync(struct exporter *x, __u32 pi, bool exits)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	__u32 i;

	threads_upto(x, pi, p->nthreads, -1, 0);
	if (!exits)
		return;
	for (i = 0; i < xp->nth; i++)
		if (p->threads[i].exited)
			thread_end(x, pi, i, p->threads[i].exit_ns);
}

/* Index of the newest thread tid of process pi, or -1. */
static int thread_index(struct exporter *x, __u32 pi, __u32 tid)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	__u32 i, ti;

	for (i = p->nthreads; i > x->procs[pi].nth; i--) /* not described yet: the newest */
		if (p->threads[i - 1].tid == tid)
			return (int)i - 1;
	if (gctx_hmap__get(&x->thread_map, pi, tid, &ti))
		return (int)ti;
	return -1;
}

/* A thread or process that took a new name (exec, prctl): tell the sink. */
static void rename_check(struct exporter *x, __u32 pi, __u32 tid, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	struct gctx_tl_track t;
	int ti = thread_index(x, pi, tid);

	if (xp->described && strncmp(xp->name, p->comm, sizeof(xp->name))) {
		cpy(xp->name, sizeof(xp->name), p->comm, sizeof(p->comm));
		trk_proc(x, pi, &t);
		t.name = xp->name;
		x->s->ops->rename(x->s, &t, ts);
	}
	if (ti < 0 || (__u32)ti >= xp->nth || !xp->th[ti].described)
		return;
	if (!strncmp(xp->th[ti].name, p->threads[ti].comm, sizeof(xp->th[ti].name)))
		return;
	cpy(xp->th[ti].name, sizeof(xp->th[ti].name), p->threads[ti].comm, GCTX_COMM_LEN);
	trk_thread(x, pi, ti, &t);
	t.name = xp->th[ti].name;
	x->s->ops->rename(x->s, &t, ts);
}

/* The process track and its life slice, once; flow_in ends a fork flow at the life slice. */
static void proc_describe(struct exporter *x, __u32 pi, __u64 flow_in)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = XP(x, pi);
	struct gctx_tl_track t;
	const char *argv;
	struct args a;
	char name[32];
	__u32 len;
	__u64 ts;

	if (!xp || xp->described)
		return;
	if (p->start_ns && !p->present_at_attach)
		ts = p->start_ns; /* fork */
	else if (p->start_ns)
		ts = max64(p->start_ns, x->meta.start_mono_ns); /* started before the trace */
	else
		ts = x->now;
	xp->described = true;
	xp->begin_ts = ts;
	cpy(xp->name, sizeof(xp->name), p->comm, sizeof(p->comm));
	trk_proc(x, pi, &t);
	t.name = xp->name;
	describe(x, &t, ts);
	proc_cmdline(x, pi, ts);

	snprintf(name, sizeof(name), "process %u", p->pid);
	a.n = 0;
	arg_u64(&a, "pid", p->pid);
	if (p->ppid)
		arg_u64(&a, "ppid", p->ppid);
	arg_str(&a, "comm", xp->name);
	argv = proc_argv(x->m, p, ts, &len);
	if (argv)
		arg_strv(&a, "argv", argv, len);
	if (p->exe[0])
		arg_strn(&a, "exe", p->exe, sizeof(p->exe));
	if (p->present_at_attach)
		arg_bool(&a, "present_at_attach", true);
	if (p->start_ns)
		arg_u64(&a, "start_ns", p->start_ns);
	else
		arg_bool(&a, "started_before_trace", true);
	emit(x, 'B', &t, ts, name, "process", &a, 0, flow_in);
	xp->open = true;
	threads_sync(x, pi, false);
}

/* ---- counters ---- */

static void rate_flush(struct exporter *x, __u32 pi, __u64 next_bucket, bool final)
{
	struct xproc *xp = &x->procs[pi];

	__u64 ts;

	if (!xp->rate_on)
		return;
	/* the value of a bucket at its start (not before the process), 0 after a quiet one */
	ts = max64(xp->rate_bucket * RATE_BUCKET_NS, xp->begin_ts);
	counter(x, pi, CTR_RATE, ts, (__s64)(xp->rate_n * RATE_PER_SEC));
	if (final || next_bucket > xp->rate_bucket + 1)
		counter(x, pi, CTR_RATE, max64((xp->rate_bucket + 1) * RATE_BUCKET_NS, ts + 1), 0);
	xp->rate_on = !final;
	xp->rate_bucket = next_bucket;
	xp->rate_n = 0;
}

static void rate_add(struct exporter *x, __u32 pi, __u64 ts)
{
	struct xproc *xp = &x->procs[pi];
	__u64 b = ts / RATE_BUCKET_NS;

	if (!xp->rate_on) {
		xp->rate_on = true;
		xp->rate_bucket = b;
		xp->rate_n = 0;
	} else if (b > xp->rate_bucket) {
		rate_flush(x, pi, b, false);
	}
	xp->rate_n++; /* an ioctl that started in an earlier bucket counts in the current one */
}

/* ---- GPU objects ---- */

static bool kind_is_rm(__u32 k)
{
	return k >= GCTX_OBJ_RM_CLIENT && k <= GCTX_OBJ_RM_OTHER;
}

static bool file_is_rm(__u32 dev_kind)
{
	return dev_kind == GCTX_DEV_NVIDIACTL || dev_kind == GCTX_DEV_NVIDIA;
}

/*
 * The GPU contexts that get a track of their own. Today they are the kernel-level objects
 * decoded from ioctls; an API-level source (CUDA/HIP contexts from uprobes) adds its kinds
 * here and its records in export_record(), and gets the same tracks, flows and counters.
 */
static bool obj_is_context(const struct gctx_gpu_obj *o)
{
	switch (o->kind) {
	case GCTX_OBJ_RM_CLIENT:
	case GCTX_OBJ_RM_CHANNEL_GROUP:
	case GCTX_OBJ_UVM_SPACE:
	case GCTX_OBJ_KFD_PROCESS:
	case GCTX_OBJ_DRM_CTX:
		return true;
	default:
		return false;
	}
}

/* Objects whose destruction takes nothing else with it. */
static bool obj_is_leaf(__u32 kind)
{
	return kind != GCTX_OBJ_RM_CLIENT && kind != GCTX_OBJ_RM_CHANNEL_GROUP &&
	       !(kind_is_rm(kind) && kind != GCTX_OBJ_RM_MEMORY);
}

static void obj_key(__u32 fi, __u32 fam, __u64 client, __u64 handle, __u64 *k1, __u64 *k2)
{
	*k1 = ((__u64)fam << 32) | fi;
	*k2 = fam == FAM_RM ? (client << 32) | (handle & 0xffffffffULL) : handle;
}

static void obj_key_of(const struct gctx_gpu_obj *o, __u64 *k1, __u64 *k2)
{
	__u32 fam = kind_is_rm(o->kind) ? FAM_RM : o->kind;

	obj_key(o->file_id - 1, fam, o->client, o->handle, k1, k2);
}

static void obj_name(const struct gctx_gpu_obj *o, char *buf, size_t len)
{
	const char *cls = o->cls ? gctx_nv_class_name(o->cls) : NULL;

	if (kind_is_rm(o->kind) || o->kind == GCTX_OBJ_DRM_CTX)
		snprintf(buf, len, "%s 0x%llx%s%s%s", gctx_obj_kind_name(o->kind),
			 (unsigned long long)o->handle, cls ? " (" : "", cls ? cls : "",
			 cls ? ")" : "");
	else
		snprintf(buf, len, "%s (file #%u)", gctx_obj_kind_name(o->kind), o->file_id);
}

static void obj_end(struct exporter *x, __u32 xi, __u64 ts, bool at_end)
{
	struct xobj *o = &x->objs[xi];
	const struct gctx_gpu_obj *mo = gctx_model__obj(x->m, o->obj_idx);
	struct xfile *xf = &x->files[o->file_idx];
	struct gctx_tl_track t;
	struct args a;

	if (!o->open)
		return;
	o->open = false;
	/* swap-remove from the file's live list */
	xf->live[o->pos] = xf->live[--xf->nlive];
	x->objs[xf->live[o->pos]].pos = o->pos;
	if (o->ctx) {
		trk_obj(x, xi, &t);
		a.n = 0;
		if (at_end)
			arg_bool(&a, "alive_at_end", true);
		ts = max64(ts, o->cursor);
		o->cursor = ts;
		emit(x, 'E', &t, ts, NULL, NULL, &a, 0, 0);
	}
	if (mo->size && o->proc_idx < x->nprocs) {
		struct xproc *xp = &x->procs[o->proc_idx];

		xp->mem -= mo->size < xp->mem ? mo->size : xp->mem;
		counter(x, o->proc_idx, CTR_MEM, ts, (__s64)xp->mem);
	}
}

/* End the tracked objects of file fi that the model has destroyed. */
static void file_objs_sync(struct exporter *x, __u32 fi)
{
	struct xfile *xf = &x->files[fi];
	__u32 i = 0;

	while (i < xf->nlive) {
		__u32 xi = xf->live[i];
		const struct gctx_gpu_obj *mo = gctx_model__obj(x->m, x->objs[xi].obj_idx);

		if (mo->destroyed)
			obj_end(x, xi, mo->destroy_ns, false); /* swaps another one into i */
		else
			i++;
	}
}

/* A new model object: follow it if it is a context or has a size. */
static void obj_new(struct exporter *x, __u32 oi)
{
	const struct gctx_gpu_obj *o = gctx_model__obj(x->m, oi);
	__u32 fi = o->file_id - 1, xi, hi, pxi;
	struct gctx_tl_track t;
	struct xfile *xf;
	struct xobj *xo;
	struct args a;
	__u64 k1, k2;
	char name[96], hbuf[24];

	obj_key_of(o, &k1, &k2);
	/* a new object with the handle of a live one replaced it */
	if (gctx_hmap__get(&x->obj_map, k1, k2, &pxi) && x->objs[pxi].open &&
	    gctx_model__obj(x->m, x->objs[pxi].obj_idx)->destroyed)
		obj_end(x, pxi, gctx_model__obj(x->m, x->objs[pxi].obj_idx)->destroy_ns, false);
	if (!obj_is_context(o) && !o->size)
		return;
	xf = XF(x, fi);
	if (!xf || !XP(x, o->creator_idx) ||
	    grow(&x->objs, &x->cap_objs, x->nobjs + 1, sizeof(*x->objs)) ||
	    grow(&xf->live, &xf->cap_live, xf->nlive + 1, sizeof(*xf->live)) ||
	    gctx_hmap__put(&x->obj_map, k1, k2, x->nobjs)) {
		nomem(x);
		return;
	}
	xi = x->nobjs++;
	xo = &x->objs[xi];
	xo->obj_idx = oi;
	xo->file_idx = fi;
	xo->proc_idx = o->creator_idx;
	xo->ctx = obj_is_context(o);
	xo->open = true;
	xo->pos = xf->nlive;
	xf->live[xf->nlive++] = xi;
	proc_describe(x, o->creator_idx, 0);

	if (xo->ctx) {
		/* nested under its RM client's track, else under the creator's file track */
		xo->parent_uuid = UUID(U_PROC, o->creator_idx + 1);
		if (o->parent_obj >= 0 && o->kind != GCTX_OBJ_RM_CLIENT) {
			const struct gctx_gpu_obj *par = gctx_model__obj(x->m, o->parent_obj);
			__u64 c1, c2;

			obj_key(fi, FAM_RM, o->client, o->client, &c1, &c2);
			if (par && gctx_hmap__get(&x->obj_map, c1, c2, &pxi) && x->objs[pxi].open &&
			    x->objs[pxi].ctx && x->objs[pxi].proc_idx == o->creator_idx)
				xo->parent_uuid = UUID(U_OBJ, pxi + 1);
		}
		if (xo->parent_uuid == UUID(U_PROC, o->creator_idx + 1) &&
		    gctx_hmap__get(&x->holder_map, o->creator_idx, fi, &hi) &&
		    x->files[fi].h[hi].described) {
			trk_holder(x, fi, hi, &t);
			xo->parent_uuid = t.uuid;
		}
		xo->lane = ++x->lanes;
		xo->cursor = o->create_ns;
		trk_obj(x, xi, &t);
		obj_name(o, name + 4, sizeof(name) - 4);
		memcpy(name, "ctx ", 4);
		t.name = name;
		describe(x, &t, o->create_ns);
		a.n = 0;
		arg_str(&a, "kind", gctx_obj_kind_name(o->kind));
		snprintf(hbuf, sizeof(hbuf), "0x%llx", (unsigned long long)o->handle);
		arg_str(&a, "handle", hbuf);
		if (o->cls) {
			const char *cn = gctx_nv_class_name(o->cls);

			arg_u64(&a, "class", o->cls);
			if (cn)
				arg_str(&a, "class_name", cn);
		}
		arg_u64(&a, "file_id", o->file_id);
		arg_u64(&a, "object_id", o->id);
		arg_u64(&a, "creator_pid", gctx_model__proc(x->m, o->creator_idx)->pid);
		arg_u64(&a, "creator_tid", o->creator_tid);
		emit(x, 'B', &t, o->create_ns, name + 4, "gpu-context", &a, 0, 0);
	}
	if (o->size) {
		struct xproc *xp = &x->procs[o->creator_idx];

		xp->mem += o->size;
		counter(x, o->creator_idx, CTR_MEM, o->create_ns, (__s64)xp->mem);
	}
	if (o->destroyed) /* gone in the record that made it */
		obj_end(x, xi, o->destroy_ns, false);
}

static void objs_new(struct exporter *x)
{
	__u32 n = gctx_model__nobjs(x->m);

	while (x->objs_seen < n && !x->err)
		obj_new(x, x->objs_seen++);
}

/* After a destroying ioctl: end what it destroyed, looking at the whole file only when the
 * destroyed object may have taken others with it. */
static void objs_destroyed(struct exporter *x, __u32 fi, const struct gctx_ioctl_desc *d,
			   __u32 dev_kind)
{
	bool rm = file_is_rm(dev_kind) || kind_is_rm(d->obj_kind);
	__u64 client = d->client, k1, k2;
	__u32 xi;

	if (rm && (d->obj_kind == GCTX_OBJ_RM_CLIENT || !client))
		client = d->handle;
	obj_key(fi, rm ? FAM_RM : d->obj_kind, client, d->handle, &k1, &k2);
	if (gctx_hmap__get(&x->obj_map, k1, k2, &xi)) {
		const struct gctx_gpu_obj *o = gctx_model__obj(x->m, x->objs[xi].obj_idx);

		if (o->destroyed && obj_is_leaf(o->kind)) {
			obj_end(x, xi, o->destroy_ns, false);
			return;
		}
	}
	file_objs_sync(x, fi);
}

/* The live context an ioctl on file fi addresses, made before this record; or -1. */
static int ctx_for(struct exporter *x, __u32 fi, __u32 dev_kind, const struct gctx_ioctl_desc *d,
		   __u32 objs_before)
{
	__u64 keys[3][2];
	__u32 n = 0, i, xi;

	if (file_is_rm(dev_kind)) {
		__u64 c = d->client;

		if (!c)
			return -1;
		if (d->handle)
			obj_key(fi, FAM_RM, c, d->handle, &keys[n][0], &keys[n][1]), n++;
		if (d->parent)
			obj_key(fi, FAM_RM, c, d->parent, &keys[n][0], &keys[n][1]), n++;
		obj_key(fi, FAM_RM, c, c, &keys[n][0], &keys[n][1]), n++;
	} else if (dev_kind == GCTX_DEV_NVIDIA_UVM) {
		obj_key(fi, GCTX_OBJ_UVM_SPACE, 0, 0, &keys[n][0], &keys[n][1]), n++;
	} else if (dev_kind == GCTX_DEV_KFD) {
		obj_key(fi, GCTX_OBJ_KFD_PROCESS, 0, 0, &keys[n][0], &keys[n][1]), n++;
	} else if (dev_kind == GCTX_DEV_DRM_RENDER && !strncmp(d->name, "AMDGPU_CTX", 10)) {
		obj_key(fi, GCTX_OBJ_DRM_CTX, 0, d->handle, &keys[n][0], &keys[n][1]), n++;
	}
	for (i = 0; i < n; i++) {
		if (!gctx_hmap__get(&x->obj_map, keys[i][0], keys[i][1], &xi))
			continue;
		if (x->objs[xi].ctx && x->objs[xi].open && x->objs[xi].obj_idx < objs_before)
			return (int)xi;
	}
	return -1;
}

/* ---- API-level contexts (CUDA driver API, HIP runtime): the second context source ---- */

static void trk_actx(struct exporter *x, __u32 ci, struct gctx_tl_track *t)
{
	const struct gctx_api_ctx *c = gctx_model__ctx(x->m, ci);

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_ACTX, ci + 1);
	t->parent = UUID(U_PROC, c->creator_idx + 1);
	t->kind = GCTX_TL_GPU;
	t->pid = gctx_model__proc(x->m, c->creator_idx)->pid;
	t->lane = x->ctxs[ci].lane;
}

static void actx_new(struct exporter *x, __u32 ci)
{
	const struct gctx_api_ctx *c = gctx_model__ctx(x->m, ci);
	const char *api = c->vendor == GCTX_VENDOR_HIP ? "HIP" : "CUDA";
	struct gctx_tl_track t;
	struct xproc *xp;
	char name[96], hbuf[24], dev[24];
	struct args a;

	if (grow(&x->ctxs, &x->cap_ctxs, ci + 1, sizeof(*x->ctxs)) || !XP(x, c->creator_idx)) {
		nomem(x);
		return;
	}
	proc_describe(x, c->creator_idx, 0);
	xp = &x->procs[c->creator_idx];
	if (grow(&xp->actx, &xp->cap_actx, xp->nactx + 1, sizeof(*xp->actx))) {
		nomem(x);
		return;
	}
	xp->actx[xp->nactx++] = ci;
	x->ctxs[ci].described = x->ctxs[ci].open = true;
	x->ctxs[ci].lane = ++x->lanes;
	x->ctxs[ci].cursor = c->create_ns;
	snprintf(hbuf, sizeof(hbuf), "0x%llx", (unsigned long long)c->handle);
	dev[0] = '\0';
	if (c->device >= 0)
		snprintf(dev, sizeof(dev), ", device %d", c->device);
	snprintf(name, sizeof(name), "%s %scontext %s%s", api,
		 c->primary ? "primary " : (c->green ? "green " : ""), hbuf, dev);
	trk_actx(x, ci, &t);
	{
		char tname[104];

		snprintf(tname, sizeof(tname), "ctx %s", name);
		t.name = tname;
		describe(x, &t, c->create_ns);
	}
	a.n = 0;
	arg_str(&a, "api", api);
	arg_str(&a, "handle", hbuf);
	arg_bool(&a, "primary", c->primary);
	if (c->green)
		arg_bool(&a, "green", true);
	arg_s64(&a, "device", c->device);
	arg_u64(&a, "context_id", c->id);
	arg_str(&a, "created_by", gctx_api_fn_name(c->create_fn));
	arg_u64(&a, "creator_pid", gctx_model__proc(x->m, c->creator_idx)->pid);
	arg_u64(&a, "creator_tid", c->creator_tid);
	arg_u64(&a, "kernel_objects", c->nkobjs);
	emit(x, 'B', &t, c->create_ns, name, "gpu-context", &a, 0, 0);
}

static void actxs_new(struct exporter *x)
{
	__u32 n = gctx_model__nctxs(x->m);

	while (x->ctxs_seen < n && !x->err)
		actx_new(x, x->ctxs_seen++);
}

/* End the open API contexts of process pi that are gone (destroyed, replaced by an exec), or
 * all of them (the process ended) when ts is not 0. */
static void actxs_sync(struct exporter *x, __u32 pi, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	__u64 exec_ns = p->nexecs ? p->execs[p->nexecs - 1].ts_ns : 0;
	struct gctx_tl_track t;
	struct args a;
	__u32 i = 0;

	while (i < xp->nactx) {
		__u32 ci = xp->actx[i];
		const struct gctx_api_ctx *c = gctx_model__ctx(x->m, ci);
		struct xctx *xc = &x->ctxs[ci];
		__u64 end;

		a.n = 0;
		if (c->destroyed) {
			end = c->destroy_ns;
		} else if (exec_ns > c->create_ns) {
			end = exec_ns;
			arg_bool(&a, "dropped_by_exec", true);
		} else if (ts) {
			end = ts;
			arg_bool(&a, p->exited ? "ended_with_process" : "alive_at_end", true);
		} else {
			i++;
			continue;
		}
		arg_u64(&a, "allocations", c->nallocs);
		arg_u64(&a, "bytes_allocated", c->mem_total);
		arg_u64(&a, "launches", c->launches);
		trk_actx(x, ci, &t);
		xc->cursor = max64(end, xc->cursor);
		emit(x, 'E', &t, xc->cursor, NULL, NULL, &a, 0, 0);
		xc->open = false;
		xp->actx[i] = xp->actx[--xp->nactx];
	}
}

/* API allocations the model added: count them for their process. */
static void mems_new(struct exporter *x)
{
	__u32 n = gctx_model__nmems(x->m);

	while (x->mems_seen < n && !x->err) {
		const struct gctx_api_mem *mm = gctx_model__mem(x->m, x->mems_seen);
		struct xproc *xp = XP(x, mm->proc_idx);

		if (!xp || gctx_hmap__put(&x->mem_map, mm->proc_idx, mm->ptr, x->mems_seen)) {
			nomem(x);
			return;
		}
		x->mems_seen++;
		proc_describe(x, mm->proc_idx, 0);
		xp->mem_api += mm->size;
		counter(x, mm->proc_idx, CTR_MEM_API, mm->alloc_ns, (__s64)xp->mem_api);
	}
}

static void mem_freed(struct exporter *x, __u32 pi, __u64 ptr)
{
	struct xproc *xp = &x->procs[pi];
	const struct gctx_api_mem *mm;
	__u32 mi;

	if (!gctx_hmap__get(&x->mem_map, pi, ptr, &mi) || mi == ~0u)
		return;
	mm = gctx_model__mem(x->m, mi);
	if (!mm->freed)
		return;
	gctx_hmap__put(&x->mem_map, pi, ptr, ~0u); /* counted out; the entry exists: cannot fail */
	xp->mem_api -= mm->size < xp->mem_api ? mm->size : xp->mem_api;
	counter(x, pi, CTR_MEM_API, mm->free_ns, (__s64)xp->mem_api);
}

/* ---- holders: a process's holding of a GPU file description ---- */

static void holder_describe(struct exporter *x, __u32 fi, __u32 hi)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	const struct gctx_holder *h = &f->holders[hi];
	struct xholder *xh = &x->files[fi].h[hi];
	struct gctx_tl_track t;
	char name[64];

	if (gctx_hmap__put(&x->holder_map, h->proc_idx, fi, hi)) {
		nomem(x);
		return;
	}
	proc_describe(x, h->proc_idx, 0);
	xh->described = true;
	xh->lane = ++x->lanes;
	trk_holder(x, fi, hi, &t);
	snprintf(name, sizeof(name), "file #%u %s", f->id, gctx_dev_kind_name(f->kind));
	t.name = name;
	describe(x, &t, h->since_ns ? h->since_ns : x->now);
}

static void live_files(struct exporter *x, __u32 pi, int delta, __u64 ts)
{
	struct xproc *xp = &x->procs[pi];

	xp->live_files += delta;
	counter(x, pi, CTR_FILES, ts, xp->live_files);
}

/* Make the holding slice of holder hi of file fi match the model: begin or end it. */
static void holder_sync(struct exporter *x, __u32 fi, __u32 hi, __u64 flow_in)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	const struct gctx_holder *h = &f->holders[hi];
	struct xholder *xh = &x->files[fi].h[hi];
	struct xproc *xp = XP(x, h->proc_idx);
	struct gctx_tl_track t;
	char name[64], addr[24], flags[64], path[GCTX_PATH_LEN];
	__u32 fds[8], i;
	struct args a;
	__u64 ts;

	if (!xp || !xh->described || xh->open == h->held)
		return;
	trk_holder(x, fi, hi, &t);
	if (!h->held) {
		ts = max64(h->until_ns ? h->until_ns : x->now, xh->cursor);
		xh->cursor = ts;
		xh->open = false;
		emit(x, 'E', &t, ts, NULL, NULL, NULL, 0, 0);
		for (i = 0; i < xp->nheld; i++) {
			if (xp->held[i].file_idx == fi && xp->held[i].holder_idx == hi) {
				xp->held[i] = xp->held[--xp->nheld];
				break;
			}
		}
		live_files(x, h->proc_idx, -1, ts);
		if (f->closed)
			file_objs_sync(x, fi);
		return;
	}

	if (grow(&xp->held, &xp->cap_held, xp->nheld + 1, sizeof(*xp->held))) {
		nomem(x);
		return;
	}
	xp->held[xp->nheld].file_idx = fi;
	xp->held[xp->nheld].holder_idx = hi;
	xp->nheld++;
	ts = max64(h->since_ns && !xh->cursor ? h->since_ns : x->now, xh->cursor);
	ts = max64(ts, xp->begin_ts);
	xh->cursor = ts;
	xh->open = true;
	if (h->how == GCTX_HOLD_INHERITED)
		snprintf(name, sizeof(name), "inherited from %u",
			 gctx_model__proc(x->m, h->from_proc_idx)->pid);
	else
		snprintf(name, sizeof(name), "%s", gctx_hold_how_name(h->how));
	a.n = 0;
	arg_u64(&a, "file_id", f->id);
	arg_str(&a, "kind", gctx_dev_kind_name(f->kind));
	cpy(path, sizeof(path), f->path, sizeof(f->path));
	if (path[0])
		arg_str(&a, "path", path);
	arg_str(&a, "how", gctx_hold_how_name(h->how));
	if (h->how == GCTX_HOLD_INHERITED)
		arg_u64(&a, "from_pid", gctx_model__proc(x->m, h->from_proc_idx)->pid);
	if (f->opener_pid)
		arg_u64(&a, "opener_pid", f->opener_pid);
	for (i = 0; i < h->nfds && i < 8; i++)
		fds[i] = (__u32)h->fds[i];
	if (h->nfds)
		arg_u32v(&a, "fds", fds, h->nfds);
	if (f->open_ns || f->present_at_attach) {
		gctx_format_open_flags(flags, sizeof(flags), f->open_flags);
		arg_str(&a, "open_flags", flags);
	}
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->file);
	arg_str(&a, "file", addr);
	emit(x, 'B', &t, ts, name, "gpu-file", &a, 0, flow_in);
	live_files(x, h->proc_idx, 1, ts);
}

/* Describe and begin the holders the model added to file fi; flows for inheritance. */
static void holders_new(struct exporter *x, __u32 fi)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	struct xfile *xf = XF(x, fi);
	__u32 hi, from;

	if (!xf || grow(&xf->h, &xf->cap_h, f->nholders, sizeof(*xf->h))) {
		nomem(x);
		return;
	}
	for (hi = xf->nh; hi < f->nholders && !x->err; hi++) {
		const struct gctx_holder *h = &f->holders[hi];
		__u64 flow = 0;

		holder_describe(x, fi, hi);
		if (h->how == GCTX_HOLD_INHERITED && h->held &&
		    gctx_hmap__get(&x->holder_map, h->from_proc_idx, fi, &from) &&
		    xf->h[from].described) {
			struct gctx_tl_track t;
			struct args a;
			char name[48];
			__u64 ts = h->since_ns ? h->since_ns : x->now;

			trk_holder(x, fi, from, &t);
			flow = new_flow(x);
			snprintf(name, sizeof(name), "inherited by %u",
				 gctx_model__proc(x->m, h->proc_idx)->pid);
			a.n = 0;
			arg_u64(&a, "child_pid", gctx_model__proc(x->m, h->proc_idx)->pid);
			arg_u64(&a, "file_id", f->id);
			emit(x, 'I', &t, ts, name, "inherit", &a, flow, 0);
		}
		xf->nh = hi + 1;
		holder_sync(x, fi, hi, flow);
	}
}

/* Holder of file fi by process pi after a use: describe/begin it; its index or -1. */
static int holder_of(struct exporter *x, __u32 pi, __u32 fi)
{
	__u32 hi;

	holders_new(x, fi);
	if (x->err || !gctx_hmap__get(&x->holder_map, pi, fi, &hi))
		return -1;
	holder_sync(x, fi, hi, 0);
	return (int)hi;
}

/* Sync every holding of process pi (after exec, exit, close). */
static void proc_holders_sync(struct exporter *x, __u32 pi)
{
	struct xproc *xp = &x->procs[pi];
	__u32 i = 0;

	while (i < xp->nheld) {
		struct href r = xp->held[i];

		holder_sync(x, r.file_idx, r.holder_idx, 0); /* may remove entry i */
		if (i < xp->nheld && xp->held[i].file_idx == r.file_idx &&
		    xp->held[i].holder_idx == r.holder_idx)
			i++;
	}
}

static void file_holders_sync(struct exporter *x, __u32 fi)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	__u32 hi;

	holders_new(x, fi);
	for (hi = 0; hi < x->files[fi].nh && hi < f->nholders; hi++)
		holder_sync(x, fi, hi, 0);
	file_objs_sync(x, fi);
}

/* ---- process end ---- */

static void findings_flush(struct exporter *x, __u32 pi);

static void proc_end(struct exporter *x, __u32 pi, __u64 ts, bool at_end)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	struct gctx_tl_track t;
	char sig[32];
	struct args a;
	__u32 i;

	if (!xp->open)
		return;
	findings_flush(x, pi);
	proc_holders_sync(x, pi);
	if (at_end) {
		/* still running at the end of the trace: close what it holds at the end */
		while (xp->nheld) {
			struct href r = xp->held[xp->nheld - 1];
			struct xholder *xh = &x->files[r.file_idx].h[r.holder_idx];

			trk_holder(x, r.file_idx, r.holder_idx, &t);
			xh->cursor = max64(ts, xh->cursor);
			emit(x, 'E', &t, xh->cursor, NULL, NULL, NULL, 0, 0);
			xh->open = false;
			xp->nheld--;
			live_files(x, pi, -1, ts);
		}
	}
	actxs_sync(x, pi, max64(ts, xp->begin_ts));
	if (xp->mem_api) { /* what it allocated through the API went with it */
		xp->mem_api = 0;
		counter(x, pi, CTR_MEM_API, ts, 0);
	}
	threads_sync(x, pi, true);
	for (i = 0; i < xp->nth; i++)
		thread_end(x, pi, i, ts);
	rate_flush(x, pi, 0, true);
	a.n = 0;
	if (at_end) {
		arg_bool(&a, "running_at_end", true);
	} else if (p->signal) {
		gctx_format_signal(sig, sizeof(sig), p->signal);
		arg_str(&a, "signal", sig);
		if (p->core_dumped)
			arg_bool(&a, "core_dumped", true);
	} else if (p->exit_code >= 0) {
		arg_s64(&a, "exit_code", p->exit_code);
	} else {
		arg_bool(&a, "exit_not_seen", true);
	}
	trk_proc(x, pi, &t);
	emit(x, 'E', &t, max64(ts, xp->begin_ts), NULL, NULL, &a, 0, 0);
	xp->open = false;
	cpy(xp->name, sizeof(xp->name), p->comm, sizeof(p->comm));
	t.name = xp->name;
	x->s->ops->process_end(x->s, &t, max64(ts, xp->begin_ts));
}

/* ---- findings ---- */

static void emit_finding(struct exporter *x, const struct gctx_finding *f)
{
	struct gctx_tl_track t;
	char name[64], status[48], err[32], evname[16], ctxh[24];
	const char *sn, *en;
	struct args a;

	trk_proc(x, f->proc_idx, &t);
	snprintf(name, sizeof(name), "%s (%s)", gctx_finding_kind_name(f->kind),
		 gctx_severity_name(f->severity));
	a.n = 0;
	arg_u64(&a, "id", f->id);
	arg_str(&a, "kind", gctx_finding_kind_name(f->kind));
	arg_str(&a, "severity", gctx_severity_name(f->severity));
	arg_u64(&a, "pid", f->pid);
	arg_u64(&a, "tid", f->tid);
	arg_u64(&a, "opener_pid", f->opener_pid);
	arg_u64(&a, "file_id", f->file_id);
	arg_str(&a, "device_kind", f->kind_dev ? gctx_dev_kind_name(f->kind_dev) : "");
	arg_u64(&a, "time_ns", f->time_ns);
	/* the model proves findings with fork, exec, exit, ioctl, mmap and api events only */
	en = gctx_ev_type_name(f->event_type);
	if (!en) {
		snprintf(evname, sizeof(evname), "%u", f->event_type);
		en = evname;
	}
	arg_str(&a, "event", en);
	arg_u64(&a, "related_finding", f->related_finding);
	arg_u32v(&a, "chain", f->chain, f->nchain < GCTX_MAX_CHAIN ? f->nchain : GCTX_MAX_CHAIN);
	arg_bool(&a, "exec_between", f->exec_between);
	arg_bool(&a, "later_used", f->later_used);
	arg_u64(&a, "uses", f->uses);
	if (f->err) {
		gctx_format_errno(err, sizeof(err), f->err);
		arg_str(&a, "errno", err);
	} else {
		arg_str(&a, "errno", "");
	}
	if (f->has_status) {
		sn = gctx_nv_status_name(f->status);
		snprintf(status, sizeof(status), "%s (0x%x)", sn ? sn : "status", f->status);
		arg_str(&a, "status", status);
	} else {
		arg_str(&a, "status", "");
	}
	arg_strn(&a, "call", f->call, sizeof(f->call));
	if (f->has_api_ret) {
		arg_s64(&a, "api_ret", f->api_ret);
		arg_strn(&a, "api_ret_name", f->api_ret_name, sizeof(f->api_ret_name));
	}
	if (f->ctx_id) {
		snprintf(ctxh, sizeof(ctxh), "0x%llx", (unsigned long long)f->ctx_handle);
		arg_u64(&a, "context_id", f->ctx_id);
		arg_str(&a, "context_handle", ctxh);
	}
	arg_strn(&a, "detail", f->detail, sizeof(f->detail));
	emit(x, 'I', &t, f->time_ns, name, "finding", &a, 0, 0);
}

/*
 * A finding from the model, while it takes a record or at the end. A use finding counts the
 * uses that follow it: it is written when its process ends, with the final count, at the time
 * of the use that proved it; the others at once.
 */
static void on_finding(const struct gctx_finding *f, void *ctx)
{
	struct exporter *x = ctx;
	struct xproc *xp;

	if (x->err || !(xp = XP(x, f->proc_idx)))
		return;
	if (f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL)
		x->icc_ctx = f->ctx_id;
	proc_describe(x, f->proc_idx, 0);
	if (f->kind == GCTX_FIND_INHERITED_GPU_USE || f->kind == GCTX_FIND_FOREIGN_GPU_USE ||
	    f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL || f->kind == GCTX_FIND_API_ERROR) {
		if (grow(&xp->findings, &xp->cap_findings, xp->nfindings + 1,
			 sizeof(*xp->findings))) {
			nomem(x);
			return;
		}
		xp->findings[xp->nfindings++] = f->id - 1;
		return;
	}
	emit_finding(x, f);
}

static void findings_flush(struct exporter *x, __u32 pi)
{
	struct xproc *xp = &x->procs[pi];
	__u32 i;

	for (i = 0; i < xp->nfindings; i++)
		emit_finding(x, gctx_model__finding(x->m, xp->findings[i]));
	xp->nfindings = 0;
}

/* ---- record handlers (after the model took the record) ---- */

/* The process of a kernel record: described, its threads and name in sync. */
static int event_proc(struct exporter *x, const struct gctx_ev_hdr *hdr)
{
	int pi = proc_index(x->m, hdr->tgid);

	if (pi < 0 || !XP(x, pi))
		return -1;
	proc_describe(x, pi, 0);
	threads_sync(x, pi, false);
	rename_check(x, pi, hdr->tid, hdr->ts_ns);
	return pi;
}

/* First use of a file by a process that did not open it: a flow from the context it used, or
 * from the opener's track, to this use. Returns the flow id or 0. */
static __u64 use_flow(struct exporter *x, __u32 pi, __u32 fi, __u32 hi, int ctx, __u64 ts)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	const struct gctx_holder *h = &f->holders[hi];
	struct xholder *xh = &x->files[fi].h[hi];
	struct gctx_tl_track t;
	struct args a;
	char name[64];
	__u32 ohi;
	__u64 flow;

	if (xh->used)
		return 0;
	xh->used = true;
	if (h->how == GCTX_HOLD_OPENED || h->how == GCTX_HOLD_PRESENT)
		return 0;
	if (ctx >= 0 && x->objs[ctx].proc_idx != pi) {
		trk_obj(x, ctx, &t);
		ts = max64(ts, gctx_model__obj(x->m, x->objs[ctx].obj_idx)->create_ns);
	} else if (f->opener_idx >= 0 && (__u32)f->opener_idx != pi &&
		   gctx_hmap__get(&x->holder_map, f->opener_idx, fi, &ohi) &&
		   x->files[fi].h[ohi].described) {
		trk_holder(x, fi, ohi, &t);
		ts = max64(ts, f->holders[ohi].since_ns);
	} else {
		return 0;
	}
	flow = new_flow(x);
	snprintf(name, sizeof(name), "used by %u (%s)", gctx_model__proc(x->m, pi)->pid,
		 gctx_hold_how_name(h->how));
	a.n = 0;
	arg_u64(&a, "user_pid", gctx_model__proc(x->m, pi)->pid);
	arg_str(&a, "how", gctx_hold_how_name(h->how));
	arg_u64(&a, "file_id", f->id);
	emit(x, 'I', &t, ts, name, "gpu-use", &a, flow, 0);
	return flow;
}

static void on_ioctl(struct exporter *x, const struct gctx_ev_ioctl *ev, __u32 objs_before)
{
	struct gctx_ioctl_desc d;
	struct gctx_tl_track t;
	char cmd[16], status[48], err[32];
	__u64 start = ev->hdr.ts_ns, end = ev->hdr.ts_ns + ev->dur_ns, flow, *cursor;
	int pi, fi, hi, ctx;
	struct args a;

	pi = event_proc(x, &ev->hdr);
	fi = file_index(x->m, ev->file);
	if (pi < 0 || fi < 0)
		return;
	hi = holder_of(x, pi, fi);
	if (hi < 0)
		return;
	gctx_decode_ioctl(ev, &d);
	objs_new(x);
	if (d.op == GCTX_OP_DESTROY)
		objs_destroyed(x, fi, &d, ev->kind);
	ctx = ctx_for(x, fi, ev->kind, &d, objs_before);
	flow = use_flow(x, pi, fi, hi, ctx, start);

	/* on the context it addresses when this process made that context, else on the file */
	if (ctx >= 0 && x->objs[ctx].proc_idx == (__u32)pi) {
		trk_obj(x, ctx, &t);
		cursor = &x->objs[ctx].cursor;
	} else {
		struct xholder *xh = &x->files[fi].h[hi];

		if (!xh->open) /* an fd the model saw closed is in use again */
			holder_sync(x, fi, hi, 0);
		trk_holder(x, fi, hi, &t);
		cursor = &xh->cursor;
	}
	start = max64(start, *cursor);
	end = max64(end, start);
	*cursor = end;

	a.n = 0;
	arg_u64(&a, "tid", ev->hdr.tid);
	arg_s64(&a, "fd", ev->fd);
	arg_s64(&a, "ret", ev->ret);
	if (d.has_status) {
		snprintf(status, sizeof(status), "%s", d.status_name);
		arg_str(&a, "status", status);
	}
	if (d.err) {
		gctx_format_errno(err, sizeof(err), d.err);
		arg_str(&a, "errno", err);
	}
	if (d.failed)
		arg_bool(&a, "failed", true);
	if (d.detail[0])
		arg_strn(&a, "args", d.detail, sizeof(d.detail));
	snprintf(cmd, sizeof(cmd), "0x%08x", ev->cmd);
	arg_str(&a, "cmd", cmd);
	arg_u64(&a, "dur_ns", ev->dur_ns);
	arg_u64(&a, "file_id", (__u32)fi + 1);
	emit(x, 'B', &t, start, d.name, "ioctl", &a, 0, flow);
	emit(x, 'E', &t, end, NULL, NULL, NULL, 0, 0);
	rate_add(x, pi, ev->hdr.ts_ns);
}

static void on_mmap(struct exporter *x, const struct gctx_ev_mmap *ev)
{
	struct gctx_tl_track t;
	struct xholder *xh;
	char off[24], ret[24], err[32];
	int pi, fi, hi;
	struct args a;
	__u64 flow, ts;

	pi = event_proc(x, &ev->hdr);
	fi = file_index(x->m, ev->file);
	if (pi < 0 || fi < 0)
		return;
	hi = holder_of(x, pi, fi);
	if (hi < 0)
		return;
	flow = use_flow(x, pi, fi, hi, -1, ev->hdr.ts_ns);
	xh = &x->files[fi].h[hi];
	trk_holder(x, fi, hi, &t);
	ts = max64(ev->hdr.ts_ns, xh->cursor);
	xh->cursor = ts;
	a.n = 0;
	arg_u64(&a, "tid", ev->hdr.tid);
	arg_s64(&a, "fd", ev->fd);
	arg_u64(&a, "len", ev->len);
	snprintf(off, sizeof(off), "0x%llx", (unsigned long long)ev->off);
	arg_str(&a, "offset", off);
	arg_u64(&a, "prot", ev->prot);
	arg_u64(&a, "flags", ev->flags);
	if (ev->ret < 0) {
		gctx_format_errno(err, sizeof(err), (int)-ev->ret);
		arg_str(&a, "errno", err);
		arg_bool(&a, "failed", true);
	} else {
		snprintf(ret, sizeof(ret), "0x%llx", (unsigned long long)ev->ret);
		arg_str(&a, "addr", ret);
	}
	arg_u64(&a, "file_id", (__u32)fi + 1);
	emit(x, 'I', &t, ts, "mmap", "mmap", &a, 0, flow);
}

static void on_api(struct exporter *x, const struct gctx_ev_api *ev, __u32 ctxs_before)
{
	const struct gctx_proc *p;
	const struct gctx_thread *th;
	struct gctx_tl_track t;
	char hbuf[24], sym[GCTX_API_STR_LEN + 1];
	const char *rn;
	__u64 start = ev->hdr.ts_ns, end = ev->hdr.ts_ns + ev->dur_ns, flow = 0, *cursor = NULL;
	__u32 i, icc = x->icc_ctx;
	int pi, ti, on = -1;
	struct args a;

	x->icc_ctx = 0;
	pi = event_proc(x, &ev->hdr);
	if (pi < 0 || ev->fn == GCTX_API_NONE || ev->fn >= GCTX_API_MAX)
		return;
	actxs_new(x);
	mems_new(x);
	if (ev->fn == GCTX_CU_MEM_FREE || ev->fn == GCTX_HIP_FREE)
		mem_freed(x, pi, ev->args[0]);
	actxs_sync(x, pi, 0);
	p = gctx_model__proc(x->m, pi);
	ti = thread_index(x, pi, ev->hdr.tid);
	if (ti < 0)
		return;
	th = &p->threads[ti];

	/* on the context the call made, else the thread's current one if this process made it
	 * and it is still open, else on the thread */
	for (i = ctxs_before; i < gctx_model__nctxs(x->m); i++)
		if (gctx_model__ctx(x->m, i)->creator_idx == (__u32)pi)
			on = (int)i;
	if (on < 0 && th->ctx_depth) {
		__u32 id = th->ctx_stack[th->ctx_depth - 1];

		if (id && id - 1 < x->cap_ctxs && x->ctxs[id - 1].open &&
		    gctx_model__ctx(x->m, id - 1)->creator_idx == (__u32)pi)
			on = (int)id - 1;
	}
	if (icc && icc - 1 < x->cap_ctxs && x->ctxs[icc - 1].described) {
		/* the first call of a forked child into the parent's driver state */
		trk_actx(x, icc - 1, &t);
		start = max64(start, gctx_model__ctx(x->m, icc - 1)->create_ns);
		flow = new_flow(x);
		a.n = 0;
		arg_u64(&a, "user_pid", p->pid);
		arg_str(&a, "how", "inherited");
		{
			char name[64];

			snprintf(name, sizeof(name), "used by %u (inherited)", p->pid);
			emit(x, 'I', &t, start, name, "gpu-use", &a, flow, 0);
		}
	}
	if (on >= 0) {
		trk_actx(x, on, &t);
		cursor = &x->ctxs[on].cursor;
		start = max64(start, *cursor);
	} else {
		trk_thread(x, pi, ti, &t);
		if (x->s->ops->process_is_main_thread && th->tid == p->pid)
			trk_proc(x, pi, &t); /* the main thread's track is the process's */
		start = max64(start, x->procs[pi].th[ti].begin_ts);
	}
	end = max64(end, start);
	if (cursor)
		*cursor = end;

	a.n = 0;
	arg_u64(&a, "tid", ev->hdr.tid);
	if (ev->flags & GCTX_API_RETURNED) {
		arg_s64(&a, "ret", ev->ret);
		rn = gctx_api_result_name(ev->fn, ev->ret);
		if (rn)
			arg_str(&a, "result", rn);
		if (ev->ret)
			arg_bool(&a, "failed", true);
	} else {
		arg_bool(&a, "returned", false);
	}
	if (ev->flags & GCTX_API_OUT_OK) {
		snprintf(hbuf, sizeof(hbuf), "0x%llx", (unsigned long long)ev->out);
		arg_str(&a, "out", hbuf);
	}
	if (ev->flags & GCTX_API_STR_OK) {
		cpy(sym, sizeof(sym), ev->str, sizeof(ev->str));
		arg_str(&a, "symbol", sym);
	}
	if (gctx_api_size_arg(ev->fn) >= 0)
		arg_u64(&a, "size", ev->args[gctx_api_size_arg(ev->fn)]);
	arg_u64(&a, "dur_ns", ev->dur_ns);
	emit(x, 'B', &t, start, gctx_api_fn_name(ev->fn), "api", &a, 0, flow);
	emit(x, 'E', &t, end, NULL, NULL, NULL, 0, 0);
}

static void on_fork(struct exporter *x, const struct gctx_ev_fork *ev, int old_pi)
{
	bool thread = (ev->flags & GCTX_FORK_THREAD) || ev->child_tgid == ev->hdr.tgid;
	const struct gctx_proc *par;
	struct gctx_tl_track t;
	struct xproc *xp;
	char name[48];
	struct args a;
	int pi, ci = -1, ti, nti = -1;
	__u64 flow = 0;
	__u32 i;

	if (old_pi >= 0 && gctx_model__proc(x->m, old_pi)->exited && XP(x, old_pi))
		proc_end(x, old_pi, ev->hdr.ts_ns, false); /* its exit was missed */
	pi = proc_index(x->m, ev->hdr.tgid);
	if (pi < 0 || !XP(x, pi))
		return;
	proc_describe(x, pi, 0);
	par = gctx_model__proc(x->m, pi);
	xp = &x->procs[pi];
	ti = thread_index(x, pi, ev->hdr.tid);
	if (ti >= 0)
		threads_upto(x, pi, ti + 1, -1, 0); /* the forking thread, before the new one */
	rename_check(x, pi, ev->hdr.tid, ev->hdr.ts_ns);
	if (thread) {
		nti = thread_index(x, pi, ev->child_tid);
		if (nti < 0 || (__u32)nti < xp->nth) /* described already */
			ti = -1;
	} else {
		threads_sync(x, pi, false);
		ci = proc_index(x->m, ev->child_tgid);
		if (ci < 0 || ci == pi || !XP(x, ci))
			return;
		xp = &x->procs[pi];
		if (x->procs[ci].described)
			ti = -1;
	}
	if (ti >= 0 && (__u32)ti < xp->nth) {
		trk_thread(x, pi, ti, &t);
		flow = new_flow(x);
		a.n = 0;
		if (thread) {
			snprintf(name, sizeof(name), "clone thread %u", ev->child_tid);
			arg_u64(&a, "child_tid", ev->child_tid);
		} else {
			snprintf(name, sizeof(name), "fork %u", ev->child_tgid);
			arg_u64(&a, "child_pid", ev->child_tgid);
		}
		emit(x, 'I', &t, ev->hdr.ts_ns, name, "fork", &a, flow, 0);
	}
	if (thread) {
		threads_upto(x, pi, par->nthreads, nti, flow);
		return;
	}
	proc_describe(x, ci, flow);
	/* the child holds what the parent held: inheritance flows file -> file */
	for (i = 0; i < x->procs[pi].nheld && !x->err; i++)
		holders_new(x, x->procs[pi].held[i].file_idx);
}

static void on_exec(struct exporter *x, const struct gctx_ev_exec *ev)
{
	const struct gctx_proc *p;
	const struct gctx_exec *e;
	struct gctx_tl_track t;
	struct xproc *xp;
	char name[GCTX_PATH_LEN + 8], file[GCTX_PATH_LEN];
	const char *base;
	struct args a;
	int pi, fi;
	__u32 i;

	pi = event_proc(x, &ev->hdr);
	if (pi < 0)
		return;
	p = gctx_model__proc(x->m, pi);
	xp = &x->procs[pi];
	threads_sync(x, pi, true);
	proc_holders_sync(x, pi);
	for (i = 0; i < xp->nkept && !x->err; i++) {
		fi = file_index(x->m, xp->kept[i]);
		if (fi >= 0)
			holder_of(x, pi, fi);
	}
	xp->nkept = 0;
	actxs_sync(x, pi, 0);
	if (!p->nexecs)
		return;
	e = &p->execs[p->nexecs - 1];
	cpy(file, sizeof(file), e->filename, sizeof(e->filename));
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	snprintf(name, sizeof(name), "exec %s", base);
	trk_proc(x, pi, &t);
	a.n = 0;
	arg_str(&a, "filename", file);
	arg_strv(&a, "argv", e->args, e->args_len);
	arg_strn(&a, "comm", p->comm, sizeof(p->comm));
	if (e->old_tid != ev->hdr.tid)
		arg_u64(&a, "old_tid", e->old_tid);
	emit(x, 'I', &t, ev->hdr.ts_ns, name, "exec", &a, 0, 0);
	x->s->ops->cmdline(x->s, ev->hdr.ts_ns, p->pid, p->ppid, e->args, e->args_len);
	xp->cmdline_done = true;
	rename_check(x, pi, ev->hdr.tid, ev->hdr.ts_ns);
}

static void on_thread_exit(struct exporter *x, const struct gctx_ev_exit *ev)
{
	int pi = event_proc(x, &ev->hdr);

	if (pi < 0)
		return;
	threads_sync(x, pi, true);
	if (gctx_model__proc(x->m, pi)->exited)
		proc_end(x, pi, ev->hdr.ts_ns, false);
}

static void on_open(struct exporter *x, const struct gctx_ev_open *ev, int old_fi)
{
	int pi = event_proc(x, &ev->hdr), fi;

	if (old_fi >= 0 && (__u32)old_fi < x->nfiles) /* a missed close: the old one is gone */
		file_holders_sync(x, old_fi);
	fi = file_index(x->m, ev->file);
	if (pi < 0 || fi < 0)
		return;
	holders_new(x, fi);
	objs_new(x);
}

static void on_close(struct exporter *x, const struct gctx_ev_fd *ev)
{
	int pi = proc_index(x->m, ev->hdr.tgid), fi = file_index(x->m, ev->file);
	__u32 hi;

	if (pi < 0 || fi < 0 || (__u32)pi >= x->nprocs || (__u32)fi >= x->nfiles)
		return;
	if (gctx_hmap__get(&x->holder_map, pi, fi, &hi))
		holder_sync(x, fi, hi, 0);
}

static void on_fd_kept(struct exporter *x, const struct gctx_ev_fd *ev)
{
	int pi = event_proc(x, &ev->hdr);
	struct xproc *xp;

	if (pi < 0)
		return;
	xp = &x->procs[pi];
	if (grow(&xp->kept, &xp->cap_kept, xp->nkept + 1, sizeof(*xp->kept))) {
		nomem(x);
		return;
	}
	xp->kept[xp->nkept++] = ev->file;
}

static void on_proc_present(struct exporter *x, const struct gctx_rec_proc *r)
{
	int pi = proc_index(x->m, r->pid);

	if (pi < 0 || !XP(x, pi))
		return;
	if (!x->procs[pi].described)
		proc_describe(x, pi, 0);
	else if (!x->procs[pi].cmdline_done)
		proc_cmdline(x, pi, x->now);
}

static void on_file_present(struct exporter *x, const struct gctx_rec_file *r, __u32 files_before)
{
	int pi = proc_index(x->m, r->pid), fi;

	if (pi < 0 || !XP(x, pi))
		return;
	proc_describe(x, pi, 0);
	if (r->file)
		fi = file_index(x->m, r->file);
	else
		fi = gctx_model__nfiles(x->m) > files_before ? (int)gctx_model__nfiles(x->m) - 1
							     : -1;
	if (fi >= 0)
		holder_of(x, pi, fi);
}

/* One record: feed the model, then write what it changed. Returns 0, -EINVAL, -ENOMEM. */
static int export_record(struct exporter *x, __u32 type, const void *data, __u32 len)
{
	union gctx_record r;
	__u32 ctxs_before = gctx_model__nctxs(x->m);
	__u32 objs_before = gctx_model__nobjs(x->m), files_before = gctx_model__nfiles(x->m);
	int old = -1, err;
	size_t n = len < sizeof(r) ? len : sizeof(r);

	memset(&r, 0, sizeof(r));
	if (data)
		memcpy(&r, data, n);
	if (type < GCTX_EV_KERNEL_MAX && len >= sizeof(r.hdr)) {
		x->now = max64(x->now, r.hdr.ts_ns);
		if (type == GCTX_EV_IOCTL && len >= sizeof(r.ioctl))
			x->now = max64(x->now, r.ioctl.hdr.ts_ns + r.ioctl.dur_ns);
		if (type == GCTX_EV_API && len >= sizeof(r.api))
			x->now = max64(x->now, r.api.hdr.ts_ns + r.api.dur_ns);
	}
	/* what the record may end implicitly: a process whose exit was missed, a file whose
	 * close was missed */
	if (type == GCTX_EV_FORK && len >= sizeof(r.fork) && !(r.fork.flags & GCTX_FORK_THREAD)) {
		const struct gctx_proc *op = gctx_model__proc_by_pid(x->m, r.fork.child_tgid);

		if (op && !op->exited)
			old = (int)op->idx;
	} else if (type == GCTX_EV_OPEN && len >= sizeof(r.open)) {
		const struct gctx_gpu_file *of = gctx_model__file_by_addr(x->m, r.open.file);

		if (of && !of->closed)
			old = (int)of->id - 1;
	}

	err = gctx_model__feed(x->m, type, data, len);
	if (err)
		return err;
	if (x->err)
		return x->err;

	switch (type) {
	case GCTX_EV_FORK:
		on_fork(x, &r.fork, old);
		break;
	case GCTX_EV_EXEC:
		on_exec(x, &r.exec);
		break;
	case GCTX_EV_EXIT:
		on_thread_exit(x, &r.exit);
		break;
	case GCTX_EV_OPEN:
		on_open(x, &r.open, old);
		break;
	case GCTX_EV_IOCTL:
		on_ioctl(x, &r.ioctl, objs_before);
		break;
	case GCTX_EV_MMAP:
		on_mmap(x, &r.mmap);
		break;
	case GCTX_EV_CLOSE:
		on_close(x, &r.fd);
		break;
	case GCTX_EV_FD_KEPT:
		on_fd_kept(x, &r.fd);
		break;
	case GCTX_REC_PROC_PRESENT:
		on_proc_present(x, &r.proc);
		break;
	case GCTX_REC_FILE_PRESENT:
		on_file_present(x, &r.file, files_before);
		break;
	case GCTX_EV_API:
		if (len >= sizeof(r.api))
			on_api(x, &r.api, ctxs_before);
		break;
	case GCTX_REC_END:
		x->end_ns = r.end.end_ns;
		x->has_end = true;
		break;
	default:
		/* devices, drops, probes: summarised at the end; library maps: not shown */
		break;
	}
	x->icc_ctx = 0;
	/* anything a record made that its handler did not look at */
	objs_new(x);
	actxs_new(x);
	mems_new(x);
	return x->err;
}

/* End of input: findings that wait for the end, then close everything still open. */
static void export_finish(struct exporter *x, bool truncated, __u64 records)
{
	const struct gctx_rec_drops *dr;
	const struct gctx_rec_end *e;
	struct gctx_tl_track t;
	struct args a;
	__u64 end, drops = 0;
	__u32 i;

	gctx_model__finish(x->m);
	objs_new(x);
	actxs_new(x);
	mems_new(x);
	end = x->has_end ? max64(x->end_ns, x->now) : x->now;
	for (i = 0; i < x->nobjs; i++)
		if (x->objs[i].open)
			obj_end(x, i, end, true);
	for (i = 0; i < x->nprocs; i++)
		if (x->procs[i].open)
			proc_end(x, i, end, true);
	for (i = 0; i < x->nprocs; i++) {
		findings_flush(x, i);
		rate_flush(x, i, 0, true);
	}

	dr = gctx_model__drops(x->m);
	for (i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		drops += dr->drops[i];
	e = gctx_model__end(x->m);
	trk_global(&t);
	a.n = 0;
	arg_u64(&a, "records", records);
	arg_u64(&a, "processes", gctx_model__nprocs(x->m));
	arg_u64(&a, "gpu_files", gctx_model__nfiles(x->m));
	arg_u64(&a, "gpu_objects", gctx_model__nobjs(x->m));
	arg_u64(&a, "findings", gctx_model__nfindings(x->m));
	arg_u64(&a, "lost_events", drops);
	arg_u64(&a, "end_ns", end);
	arg_bool(&a, "clean_end", e != NULL);
	if (e)
		arg_s64(&a, "exit_status", e->exit_status);
	arg_bool(&a, "truncated", truncated);
	emit(x, 'E', &t, end, NULL, NULL, &a, 0, 0);
	x->err = x->err ? x->err : x->s->ops->end(x->s, a.a, a.n);
}

static void export_begin(struct exporter *x)
{
	struct gctx_tl_track t;
	struct args a;
	char wall[40];
	__u64 w = x->meta.start_wall_ns;
	time_t sec = (time_t)(w / 1000000000ULL);
	struct tm tm;

	x->s->ops->begin(x->s, &x->meta);
	trk_global(&t);
	t.name = "gpuctx recording";
	describe(x, &t, x->meta.start_mono_ns);
	a.n = 0;
	arg_u64(&a, "start_wall_ns", w);
	if (gmtime_r(&sec, &tm)) {
		size_t o = strftime(wall, sizeof(wall), "%Y-%m-%dT%H:%M:%S", &tm);

		snprintf(wall + o, sizeof(wall) - o, ".%06lluZ",
			 (unsigned long long)(w % 1000000000ULL / 1000));
		arg_str(&a, "start_wall", wall);
	}
	arg_u64(&a, "start_mono_ns", x->meta.start_mono_ns);
	arg_str(&a, "clock", "CLOCK_MONOTONIC");
	arg_strn(&a, "hostname", x->meta.hostname, sizeof(x->meta.hostname));
	arg_strn(&a, "kernel", x->meta.kernel, sizeof(x->meta.kernel));
	arg_strn(&a, "gpuctx_version", x->meta.version, sizeof(x->meta.version));
	arg_strn(&a, "cmdline", x->meta.cmdline, sizeof(x->meta.cmdline));
	emit(x, 'B', &t, x->meta.start_mono_ns, "recording", "gpuctx", &a, 0, 0);
}

static void exporter_free(struct exporter *x)
{
	__u32 i;

	if (!x)
		return;
	for (i = 0; i < x->nprocs; i++) {
		free(x->procs[i].th);
		free(x->procs[i].held);
		free(x->procs[i].kept);
		free(x->procs[i].actx);
		free(x->procs[i].findings);
	}
	for (i = 0; i < x->nfiles; i++) {
		free(x->files[i].h);
		free(x->files[i].live);
	}
	free(x->procs);
	free(x->files);
	free(x->objs);
	free(x->ctxs);
	gctx_hmap__free(&x->mem_map);
	gctx_hmap__free(&x->thread_map);
	gctx_hmap__free(&x->holder_map);
	gctx_hmap__free(&x->obj_map);
	gctx_model__free(x->m);
	free(x);
}

__attribute__((format(printf, 3, 4))) static void errf(char *err, size_t errlen, const char *fmt,
						       ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int gctx_export_stream(struct gctx_trace_reader *r, const char *trace_path, struct gctx_tl_sink *s,
		       char *err, size_t errlen, struct gctx_export_stats *stats)
{
	struct exporter *x = calloc(1, sizeof(*x));
	const void *data;
	__u64 records = 0;
	__u32 type, len;
	int ret, rc = 0;

	errf(err, errlen, "%s", "");
	if (!x || !(x->m = gctx_model__new())) {
		free(x);
		errf(err, errlen, "out of memory");
		return -1;
	}
	x->s = s;
	x->meta = *gctx_trace_reader__meta(r);
	x->now = x->meta.start_mono_ns;
	gctx_model__set_finding_cb(x->m, on_finding, x);
	export_begin(x);

	while ((ret = gctx_trace_reader__next(r, &type, &data, &len)) == 1) {
		rc = export_record(x, type, data, len);
		if (rc == -EINVAL) {
			errf(err, errlen, "%s: malformed record (type %u, %u bytes) at offset %llu",
			     trace_path, type, len,
			     (unsigned long long)gctx_trace_reader__offset(r));
			break;
		}
		if (rc) {
			errf(err, errlen, "out of memory");
			break;
		}
		records++;
	}
	if (!rc && ret < 0) {
		errf(err, errlen, "%s",
		     gctx_trace_reader__error(r) ? gctx_trace_reader__error(r) : "corrupt trace");
		rc = -1;
	}
	if (!rc) {
		bool trunc = gctx_trace_reader__truncated(r);

		export_finish(x, trunc, records);
		if (x->err == -ENOMEM) {
			errf(err, errlen, "out of memory");
			rc = -1;
		} else if (x->err) {
			errf(err, errlen, "writing the timeline: %s", strerror(-x->err));
			rc = -1;
		} else if (trunc) {
			errf(err, errlen,
			     "warning: %s ends inside a record (recording killed?): exported the "
			     "%llu complete records before it",
			     trace_path, (unsigned long long)records);
		}
		if (stats) {
			stats->records = records;
			stats->events = s->events;
			stats->truncated = trunc;
		}
	}
	exporter_free(x);
	return rc ? -1 : 0;
}

/* ---- files and the command ---- */

int gctx_export_format_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "perfetto") || !strcmp(name, "pftrace") || !strcmp(name, "proto"))
		return GCTX_EXPORT_PERFETTO;
	if (!strcmp(name, "chrome") || !strcmp(name, "json"))
		return GCTX_EXPORT_CHROME;
	return -1;
}

const char *gctx_export_format_name(int format)
{
	switch (format) {
	case GCTX_EXPORT_PERFETTO:
		return "perfetto";
	case GCTX_EXPORT_CHROME:
		return "chrome";
	default:
		return "?";
	}
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int gctx_export_file_stats(const char *trace_path, const char *out_path, int format, char *err,
			   size_t errlen, struct gctx_export_stats *stats)
{
	struct gctx_trace_reader *r;
	struct gctx_tl_sink *s = NULL;
	bool to_stdout = !strcmp(out_path, "-");
	char rerr[512];
	FILE *out;
	int rc, e;
	long pos;

	errf(err, errlen, "%s", "");
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (format != GCTX_EXPORT_PERFETTO && format != GCTX_EXPORT_CHROME) {
		errf(err, errlen, "unknown export format %d", format);
		return -1;
	}
	r = gctx_trace_reader__open(trace_path, rerr, sizeof(rerr));
	if (!r) {
		errf(err, errlen, "%s", rerr);
		return -1;
	}
	if (!to_stdout && same_file(trace_path, out_path)) {
		errf(err, errlen, "cannot create %s: it is the trace being exported", out_path);
		gctx_trace_reader__free(r);
		return -1;
	}
	out = to_stdout ? stdout : fopen(out_path, "w");
	if (!out) {
		errf(err, errlen, "cannot create %s: %s", out_path, strerror(errno));
		gctx_trace_reader__free(r);
		return -1;
	}
	if (!to_stdout)
		setvbuf(out, NULL, _IOFBF, OUT_BUF_SIZE);
	s = format == GCTX_EXPORT_PERFETTO ? gctx_perfetto__new(out) : gctx_chrome__new(out);
	if (!s) {
		errf(err, errlen, "out of memory");
		rc = -1;
	} else {
		rc = gctx_export_stream(r, trace_path, s, err, errlen, stats);
		s->ops->free(s);
	}
	gctx_trace_reader__free(r);

	errno = 0;
	e = fflush(out) ? errno : 0;
	if (!e && ferror(out))
		e = EIO;
	pos = to_stdout ? -1 : ftell(out);
	if (!to_stdout && fclose(out) && !e)
		e = errno ? errno : EIO;
	if (!rc && e) {
		errf(err, errlen, "writing %s: %s", out_path, strerror(e));
		rc = -1;
	}
	if (rc && !to_stdout)
		unlink(out_path);
	if (!rc && stats && pos >= 0)
		stats->bytes = (__u64)pos;
	return rc;
}

int gctx_export_file(const char *trace_path, const char *out_path, int format, char *err,
		     size_t errlen)
{
	return gctx_export_file_stats(trace_path, out_path, format, err, errlen, NULL);
}

static const char export_usage[] = "Usage: gpuctx export [-q] -f perfetto|chrome -o OUT FILE\n";

static void export_help(void)
{
	printf("%s"
	       "\n"
	       "Write the timeline of a trace for a profiler view: processes with their threads,\n"
	       "GPU files and contexts with their ioctls, fork and inheritance arrows, findings,\n"
	       "counters.\n"
	       "\n"
	       "  -f, --format FMT  perfetto (protobuf, opens in ui.perfetto.dev) or chrome\n"
	       "                    (JSON, also opens in chrome://tracing); default: chrome when\n"
	       "                    OUT ends in .json, else perfetto\n"
	       "  -o, --output OUT  file to write ('-' for stdout)\n"
	       "  -q, --quiet       no summary line\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  gpuctx export -f perfetto -o job.pftrace job.gctx\n"
	       "  gpuctx export -f chrome -o job.json job.gctx\n",
	       export_usage);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	const char *fmt = NULL, *out = NULL;
	struct gctx_export_stats st;
	bool quiet = false;
	char err[768];
	int c, format;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			export_help();
			return 0;
		default:
			fputs(export_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "gpuctx: export needs exactly one trace file\n");
		return 2;
	}
	if (!out) {
		fprintf(stderr, "gpuctx: export needs an output file (-o OUT, '-' for stdout)\n");
		return 2;
	}
	if (fmt) {
		format = gctx_export_format_parse(fmt);
		if (format < 0) {
			fprintf(stderr, "gpuctx: unknown format '%s' (perfetto or chrome)\n", fmt);
			return 2;
		}
	} else {
		format = ends_with(out, ".json") ? GCTX_EXPORT_CHROME : GCTX_EXPORT_PERFETTO;
	}
	if (gctx_export_file_stats(argv[optind], out, format, err, sizeof(err), &st)) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	if (err[0])
		fprintf(stderr, "gpuctx: %s\n", err);
	if (!quiet && strcmp(out, "-"))
		fprintf(stderr,
			"gpuctx: %s: %llu records -> %llu timeline events, %llu bytes (%s)\n", out,
			(unsigned long long)st.records, (unsigned long long)st.events,
			(unsigned long long)st.bytes, gctx_export_format_name(format));
	return 0;
}
