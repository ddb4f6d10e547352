// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline export (interface and rules in export.h): the exporter core. This file holds the
 * pass over the trace (gctx_export_stream), the record dispatch, the beginning and end of the
 * timeline, and the primitives every part uses: per-entity state, event args, track
 * descriptors (the uuid scheme), emitting to the sink, counters.
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
 *
 * Where each kind of object is put on the timeline:
 *   timeline_procs.c     processes and threads: life slices, execs, renames, fork flows, the end
 *   timeline_files.c     GPU files held by processes (holders): holding slices, inheritance and
 *                        first-use flows, mmaps
 *   timeline_gpu.c       GPU contexts and objects decoded from ioctls (RM client, channel group,
 *                        UVM space, KFD process, DRM context; sized allocations), ioctl slices
 *   timeline_api.c       API-level contexts and allocations (CUDA driver API, HIP runtime), API
 *                        call slices
 *   timeline_findings.c  findings
 *   timeline_stacks.c    call stacks, on the events they were taken at
 *   timeline_incidents.c incidents (the diagnosis)
 *   export.c             output files, formats and the `gpuctx export` command
 * Their shared state and entry points are in timeline_priv.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "output/timeline/export.h"
#include "output/timeline/timeline_priv.h"
#include "trace/records.h"
#include "trace/tracefile.h"

#define RATE_BUCKET_NS 10000000ULL /* ioctl-rate counter resolution */
#define RATE_PER_SEC   (1000000000ULL / RATE_BUCKET_NS)

/* Per-entity state, grown to cover the model's index; NULL only when out of memory. */
struct xproc *tl_xp(struct exporter *x, __u32 pi)
{
	if (pi >= x->nprocs) {
		if (gctx_grow(&x->procs, &x->cap_procs, pi + 1, sizeof(*x->procs))) {
			nomem(x);
			return NULL;
		}
		x->nprocs = pi + 1;
	}
	return &x->procs[pi];
}

struct xfile *tl_xf(struct exporter *x, __u32 fi)
{
	if (fi >= x->nfiles) {
		if (gctx_grow(&x->files, &x->cap_files, fi + 1, sizeof(*x->files))) {
			nomem(x);
			return NULL;
		}
		x->nfiles = fi + 1;
	}
	return &x->files[fi];
}

int tl_proc_index(const struct gctx_model *m, __u32 pid)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(m, pid);

	return p ? (int)p->idx : -1;
}

int tl_file_index(const struct gctx_model *m, __u64 addr)
{
	const struct gctx_gpu_file *f = gctx_model__file_by_addr(m, addr);

	return f ? (int)f->id - 1 : -1;
}

/* ---- args ---- */

static struct gctx_tl_arg *arg_add(struct args *a, const char *key, enum gctx_tl_arg_type type)
{
	static struct gctx_tl_arg sink_hole;

	if (a->n >= MAX_ARGS)
		return &sink_hole; /* a bug, not input: MAX_ARGS covers every event */
	a->a[a->n].key = key;
	a->a[a->n].type = type;
	return &a->a[a->n++];
}

void tl_arg_u64(struct args *a, const char *key, __u64 v)
{
	arg_add(a, key, GCTX_TL_U64)->u = v;
}

void tl_arg_s64(struct args *a, const char *key, __s64 v)
{
	arg_add(a, key, GCTX_TL_S64)->s = v;
}

void tl_arg_bool(struct args *a, const char *key, bool v)
{
	arg_add(a, key, GCTX_TL_BOOL)->b = v;
}

/* s stays referenced until the event is written: pass storage that outlives the call. */
void tl_arg_strn(struct args *a, const char *key, const char *s, size_t n)
{
	struct gctx_tl_arg *g = arg_add(a, key, GCTX_TL_STR);

	g->str.p = s;
	g->str.n = strnlen(s, n);
}

void tl_arg_str(struct args *a, const char *key, const char *s)
{
	tl_arg_strn(a, key, s, strlen(s));
}

void tl_arg_strv(struct args *a, const char *key, const char *s, __u32 n)
{
	struct gctx_tl_arg *g = arg_add(a, key, GCTX_TL_STRV);

	g->str.p = s;
	g->str.n = n;
}

void tl_arg_u32v(struct args *a, const char *key, const __u32 *v, __u32 n)
{
	struct gctx_tl_arg *g = arg_add(a, key, GCTX_TL_U32V);

	g->u32v.v = v;
	g->u32v.n = n;
}

void tl_arg_stack(struct args *a, const char *key, const struct gctx_tl_stack *st)
{
	arg_add(a, key, GCTX_TL_STACK)->stack = st;
}

/* ---- tracks ---- */

void tl_trk_global(struct gctx_tl_track *t)
{
	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_GLOBAL, 1);
	t->kind = GCTX_TL_GLOBAL;
}

void tl_trk_proc(struct exporter *x, __u32 pi, struct gctx_tl_track *t)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_PROC, pi + 1);
	t->kind = GCTX_TL_PROCESS;
	t->pid = p->pid;
	t->tid = p->pid;
	t->ppid = p->ppid;
	t->ppid_untraced = p->ppid && p->parent_idx < 0;
	t->start_ns = p->start_ns; /* fork time, or the start read at attach */
}

void tl_trk_thread(struct exporter *x, __u32 pi, __u32 ti, struct gctx_tl_track *t)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_THREAD, ((__u64)(pi + 1) << 24) | (ti & 0xffffff));
	t->parent = UUID(U_PROC, pi + 1);
	t->kind = GCTX_TL_THREAD;
	t->pid = p->pid;
	t->tid = p->threads[ti].tid;
}

void tl_trk_holder(struct exporter *x, __u32 fi, __u32 hi, struct gctx_tl_track *t)
{
	const struct gctx_holder *h = &gctx_model__file(x->m, fi)->holders[hi];

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_HOLDER, ((__u64)(fi + 1) << 24) | (hi & 0xffffff));
	t->parent = UUID(U_PROC, h->proc_idx + 1);
	t->kind = GCTX_TL_GPU;
	t->pid = gctx_model__proc(x->m, h->proc_idx)->pid;
	t->lane = x->files[fi].h[hi].lane;
}

void tl_trk_obj(struct exporter *x, __u32 xi, struct gctx_tl_track *t)
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

void tl_emit(struct exporter *x, int what, const struct gctx_tl_track *t, __u64 ts,
	     const char *name, const char *cat, const struct args *a, __u64 flow_out, __u64 flow_in)
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

void tl_slice(struct exporter *x, const struct gctx_tl_track *t, __u64 start, __u64 end,
	      const char *name, const char *cat, const struct args *a, __u64 flow_in)
{
	if (end <= start) {
		tl_emit(x, 'I', t, start, name, cat, a, 0, flow_in);
		return;
	}
	tl_emit(x, 'B', t, start, name, cat, a, 0, flow_in);
	tl_emit(x, 'E', t, end, NULL, NULL, NULL, 0, 0);
}

void tl_describe(struct exporter *x, const struct gctx_tl_track *t, __u64 ts)
{
	x->s->ops->track(x->s, t, ts);
}

__u64 tl_new_flow(struct exporter *x)
{
	return ++x->flows;
}

void tl_counter(struct exporter *x, __u32 pi, int c, __u64 ts, __s64 v)
{
	struct xproc *xp = &x->procs[pi];
	struct gctx_tl_track t;

	if (xp->end_ts && ts > xp->end_ts)
		ts = xp->end_ts; /* what the process held went with it */
	trk_counter(x, pi, c, &t);
	if (!(xp->ctr_described & (1u << c))) {
		xp->ctr_described |= 1u << c;
		tl_describe(x, &t, ts);
	}
	x->s->events++;
	x->s->ops->counter(x->s, &t, ts, v);
}

/* ---- counters ---- */

void tl_rate_flush(struct exporter *x, __u32 pi, __u64 next_bucket, bool final)
{
	struct xproc *xp = &x->procs[pi];

	__u64 ts;

	if (!xp->rate_on)
		return;
	/* the value of a bucket at its start (not before the process), 0 after a quiet one */
	ts = max64(xp->rate_bucket * RATE_BUCKET_NS, xp->begin_ts);
	if (xp->end_ts && ts > xp->end_ts)
		ts = max64(xp->end_ts, xp->begin_ts);
	tl_counter(x, pi, CTR_RATE, ts, (__s64)(xp->rate_n * RATE_PER_SEC));
	if (final || next_bucket > xp->rate_bucket + 1) {
		__u64 z = max64(gctx_ts_add(xp->rate_bucket * RATE_BUCKET_NS, RATE_BUCKET_NS),
				gctx_ts_add(ts, 1));

		/* the bucket's end, but never after the process's */
		if (xp->end_ts && z > xp->end_ts)
			z = max64(xp->end_ts, ts);
		tl_counter(x, pi, CTR_RATE, z, 0);
	}
	xp->rate_on = !final;
	xp->rate_bucket = next_bucket;
	xp->rate_n = 0;
}

void tl_rate_add(struct exporter *x, __u32 pi, __u64 ts)
{
	struct xproc *xp = &x->procs[pi];
	__u64 b = ts / RATE_BUCKET_NS;

	if (!xp->rate_on) {
		xp->rate_on = true;
		xp->rate_bucket = b;
		xp->rate_n = 0;
	} else if (b > xp->rate_bucket) {
		tl_rate_flush(x, pi, b, false);
	}
	xp->rate_n++; /* an ioctl that started in an earlier bucket counts in the current one */
}

/* ---- the pass ---- */

/* One record: feed the model, then write what it changed. Returns 0, -EINVAL, -ENOMEM. */
static int export_record(struct exporter *x, __u32 type, const void *data, __u32 len)
{
	union gctx_record r;
	__u32 ctxs_before = gctx_model__nctxs(x->m);
	__u32 objs_before = gctx_model__nobjs(x->m), files_before = gctx_model__nfiles(x->m);
	__u32 pyexcs_before = gctx_model__npyexcs(x->m);
	int old = -1, err;
	size_t n = len < sizeof(r) ? len : sizeof(r);
	__u32 got;

	/* the struct (a packed ioctl record expanded), else the bytes there are; n: bytes of r
	 * that hold the record */
	got = gctx_record_copy(&r, type, data, len);
	if (got) {
		n = got;
	} else {
		memset(&r, 0, sizeof(r));
		if (data)
			memcpy(&r, data, n);
	}
	if (type < GCTX_EV_KERNEL_MAX && n >= sizeof(r.hdr)) {
		x->now = max64(x->now, r.hdr.ts_ns);
		if (type == GCTX_EV_IOCTL && n >= sizeof(r.ioctl))
			x->now = max64(x->now, gctx_ts_add(r.ioctl.hdr.ts_ns, r.ioctl.dur_ns));
		if (type == GCTX_EV_API && n >= GCTX_EV_API_V2_LEN)
			x->now = max64(x->now, gctx_ts_add(r.api.hdr.ts_ns, r.api.dur_ns));
	}
	/* what the record may end implicitly: a process whose exit was missed, a file whose
	 * close was missed */
	if (type == GCTX_EV_FORK && n >= sizeof(r.fork) && !(r.fork.flags & GCTX_FORK_THREAD)) {
		const struct gctx_proc *op = gctx_model__proc_by_pid(x->m, r.fork.child_tgid);

		if (op && !op->exited)
			old = (int)op->idx;
	} else if (type == GCTX_EV_OPEN && n >= sizeof(r.open)) {
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
		tl_on_fork(x, &r.fork, old);
		break;
	case GCTX_EV_EXEC:
		tl_on_exec(x, &r.exec);
		break;
	case GCTX_EV_EXIT:
		tl_on_thread_exit(x, &r.exit);
		break;
	case GCTX_EV_OPEN:
		tl_on_open(x, &r.open, old);
		break;
	case GCTX_EV_IOCTL:
		tl_on_ioctl(x, &r.ioctl, objs_before);
		break;
	case GCTX_EV_MMAP:
		tl_on_mmap(x, &r.mmap);
		break;
	case GCTX_EV_CLOSE:
		tl_on_close(x, &r.fd);
		break;
	case GCTX_EV_FD_KEPT:
		tl_on_fd_kept(x, &r.fd);
		break;
	case GCTX_REC_PROC_PRESENT:
		tl_on_proc_present(x, &r.proc);
		break;
	case GCTX_REC_FILE_PRESENT:
		tl_on_file_present(x, &r.file, files_before);
		break;
	case GCTX_EV_API:
		if (len >= GCTX_EV_API_V2_LEN)
			tl_on_api(x, &r.api, ctxs_before);
		break;
	case GCTX_REC_STACK:
		tl_on_stack(x);
		break;
	case GCTX_EV_PYEXC:
		if (gctx_model__npyexcs(x->m) > pyexcs_before)
			tl_on_pyexc(x);
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
	tl_objs_new(x);
	tl_actxs_new(x);
	tl_mems_new(x);
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
	tl_objs_new(x);
	tl_actxs_new(x);
	tl_mems_new(x);
	end = x->has_end ? max64(x->end_ns, x->now) : x->now;
	tl_stacks_flush(x); /* before the ends: it may describe a process */
	for (i = 0; i < x->nobjs; i++)
		if (x->objs[i].open)
			tl_obj_end(x, i, end, true);
	for (i = 0; i < x->nprocs; i++)
		if (x->procs[i].open)
			tl_proc_end(x, i, end, true);
	for (i = 0; i < x->nprocs; i++) {
		tl_findings_flush(x, i);
		tl_rate_flush(x, i, 0, true);
	}
	tl_incidents(x);

	dr = gctx_model__drops(x->m);
	for (i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		drops += dr->drops[i];
	e = gctx_model__end(x->m);
	tl_trk_global(&t);
	a.n = 0;
	tl_arg_u64(&a, "records", records);
	tl_arg_u64(&a, "processes", gctx_model__nprocs(x->m));
	tl_arg_u64(&a, "gpu_files", gctx_model__nfiles(x->m));
	tl_arg_u64(&a, "gpu_objects", gctx_model__nobjs(x->m));
	tl_arg_u64(&a, "findings", gctx_model__nfindings(x->m));
	tl_arg_u64(&a, "lost_events", drops);
	tl_arg_u64(&a, "end_ns", end);
	tl_arg_bool(&a, "clean_end", e != NULL);
	if (e)
		tl_arg_s64(&a, "exit_status", e->exit_status);
	tl_arg_bool(&a, "truncated", truncated);
	tl_emit(x, 'E', &t, end, NULL, NULL, &a, 0, 0);
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
	tl_trk_global(&t);
	t.name = GCTX_NAME_RECORDING;
	tl_describe(x, &t, x->meta.start_mono_ns);
	a.n = 0;
	tl_arg_u64(&a, "start_wall_ns", w);
	if (gmtime_r(&sec, &tm)) {
		size_t o = strftime(wall, sizeof(wall), "%Y-%m-%dT%H:%M:%S", &tm);

		snprintf(wall + o, sizeof(wall) - o, ".%06lluZ",
			 (unsigned long long)(w % 1000000000ULL / 1000));
		tl_arg_str(&a, "start_wall", wall);
	}
	tl_arg_u64(&a, "start_mono_ns", x->meta.start_mono_ns);
	if (x->meta.start_boot_ns)
		tl_arg_u64(&a, "start_boot_ns", x->meta.start_boot_ns);
	tl_arg_str(&a, "clock", "CLOCK_MONOTONIC");
	tl_arg_strn(&a, "hostname", x->meta.hostname, sizeof(x->meta.hostname));
	tl_arg_strn(&a, "kernel", x->meta.kernel, sizeof(x->meta.kernel));
	tl_arg_strn(&a, "gpuctx_version", x->meta.version, sizeof(x->meta.version));
	tl_arg_strn(&a, "cmdline", x->meta.cmdline, sizeof(x->meta.cmdline));
	tl_emit(x, 'B', &t, x->meta.start_mono_ns, "recording", "gpuctx", &a, 0, 0);
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
	gctx_hmap__free(&x->stk_map);
	free(x->stk);
	gctx_model__free(x->stk_m);
	gctx_model__free(x->m);
	free(x);
}

__attribute__((format(printf, 3, 4))) void tl_errf(char *err, size_t errlen, const char *fmt, ...)
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
	__u32 malformed = 0;

	tl_errf(err, errlen, "%s", "");
	if (!x || !(x->m = gctx_model__new())) {
		free(x);
		tl_errf(err, errlen, "out of memory");
		return -1;
	}
	x->s = s;
	x->meta = *gctx_trace_reader__meta(r);
	x->now = x->meta.start_mono_ns;
	gctx_model__set_finding_cb(x->m, tl_on_finding, x);
	tl_stacks_read_ahead(x, trace_path);
	export_begin(x);

	while ((ret = gctx_trace_reader__next(r, &type, &data, &len)) == 1) {
		rc = export_record(x, type, data, len);
		if (rc == -EINVAL) {
			/* one bad record does not lose the others: skip it, say so */
			malformed++;
			rc = 0;
			continue;
		}
		if (rc) {
			tl_errf(err, errlen, "out of memory");
			break;
		}
		records++;
	}
	if (!rc && ret < 0) {
		tl_errf(err, errlen, "%s",
			gctx_trace_reader__error(r) ? gctx_trace_reader__error(r)
						    : "corrupt trace");
		rc = -1;
	}
	if (!rc) {
		bool trunc = gctx_trace_reader__truncated(r);

		export_finish(x, trunc, records);
		if (x->err == -ENOMEM) {
			tl_errf(err, errlen, "out of memory");
			rc = -1;
		} else if (x->err) {
			tl_errf(err, errlen, "writing the timeline: %s", strerror(-x->err));
			rc = -1;
		} else if (gctx_trace_reader__skipped(r, NULL) || malformed) {
			char skips[512];

			gctx_trace_reader__describe_skips(r, skips, sizeof(skips));
			if (!records) {
				tl_errf(err, errlen, "%s: no readable record", trace_path);
				rc = -1;
			} else if (skips[0]) {
				tl_errf(err, errlen, "warning: %s", skips);
			} else {
				tl_errf(err, errlen, "warning: %s: %u malformed records skipped",
					trace_path, malformed);
			}
		} else if (trunc) {
			tl_errf(err, errlen,
				"warning: %s ends inside a record (recording killed?): "
				"exported the %llu complete records before it",
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
