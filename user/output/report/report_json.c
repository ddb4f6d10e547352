// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON report for tools: one pretty document with the trace metadata, every process, GPU
 * file, GPU object, API context, API allocation (up to a cap), probe and finding, and the
 * event and drop counts. Times are raw CLOCK_MONOTONIC nanoseconds, null where unknown.
 */
#include <errno.h>
#include <string.h>

#include "lib/errcode.h"
#include "decode/api.h"
#include "decode/decode.h"
#include "lib/json.h"
#include "output/report/print.h"
#include "output/report/report_priv.h"
#include "output/report/sites.h"
#include "trace/records.h"

#define GCTX_O_CLOEXEC	 02000000u /* kernel value, as in the open record */
#define REP_MAX_API_MEM	 10000	   /* API allocations listed in the JSON */
#define REP_MAX_CURRENTS 10000	   /* current-context changes per context in the JSON */

/* The API context with this 1-based id, or NULL. */
static const struct gctx_api_ctx *rep_api_ctx_by_id(const struct gctx_model *m, __u32 id)
{
	const struct gctx_api_ctx *x;

	if (!id || id > gctx_model__nctxs(m))
		return NULL;
	x = gctx_model__ctx(m, id - 1);
	return x && x->id == id ? x : NULL;
}

static const char *rep_api_vendor_name(__u32 vendor)
{
	return vendor == GCTX_VENDOR_HIP ? "hip" : "cuda";
}

static void rep_json_u64(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	gctx_json__u64(j, v);
}

static void rep_json_s64(struct gctx_json *j, const char *k, __s64 v)
{
	gctx_json__key(j, k);
	gctx_json__s64(j, v);
}

/* v, or null when it is 0 (an unknown time, an absent pid or id). */
static void rep_json_u64_or_null(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	if (v)
		gctx_json__u64(j, v);
	else
		gctx_json__null(j);
}

static void rep_json_bool(struct gctx_json *j, const char *k, bool v)
{
	gctx_json__key(j, k);
	gctx_json__bool(j, v);
}

static void rep_json_null(struct gctx_json *j, const char *k)
{
	gctx_json__key(j, k);
	gctx_json__null(j);
}

/* A string key from a C string; NULL writes null. */
static void rep_json_str(struct gctx_json *j, const char *k, const char *v)
{
	gctx_json__key(j, k);
	gctx_json__str(j, v);
}

/* A string from a fixed-size field that may lack its NUL; empty writes null if asked. */
static void rep_json_fixed(struct gctx_json *j, const char *k, const char *s, size_t max,
			   bool empty_is_null)
{
	size_t n = strnlen(s, max);

	if (k)
		gctx_json__key(j, k);
	if (!n && empty_is_null)
		gctx_json__null(j);
	else
		gctx_json__strn(j, s, n);
}

/* NUL-separated argv -> array of strings; trailing NULs end the list. */
static void rep_json_argv(struct gctx_json *j, const char *k, const char *args, __u32 len)
{
	__u32 i, start = 0;

	gctx_json__key(j, k);
	gctx_json__arr_begin(j);
	if (len > GCTX_ARGS_LEN)
		len = GCTX_ARGS_LEN;
	while (args && len && !args[len - 1])
		len--;
	for (i = 0; args && len && i <= len; i++) {
		if (i == len || !args[i]) {
			gctx_json__strn(j, args + start, i - start);
			start = i + 1;
		}
	}
	gctx_json__arr_end(j);
}

/* "write_loss": where and why gpuctx stopped writing the trace (disk full), or null. */
static void rep_json_write_loss(struct gctx_json *j, const struct gctx_model *m)
{
	const struct gctx_rec_write_loss *wl = gctx_model__write_loss(m);

	gctx_json__key(j, "write_loss");
	if (!wl) {
		gctx_json__null(j);
		return;
	}
	gctx_json__obj_begin(j);
	rep_json_u64(j, "at_ns", wl->ts_ns);
	rep_json_str(j, "error", strerror(gctx_ret_errno(wl->err)));
	rep_json_u64(j, "lost_records", wl->lost);
	rep_json_u64(j, "written_records", wl->written);
	gctx_json__obj_end(j);
}

static void rep_json_meta(struct gctx_json *j, const struct gctx_model *m,
			  const struct gctx_trace_meta *meta)
{
	const struct gctx_rec_end *end = gctx_model__end(m);
	static const char *const reasons[] = {"exited", "signal", "duration"};
	__u32 i;

	gctx_json__key(j, "meta");
	gctx_json__obj_begin(j);
	if (meta) {
		rep_json_fixed(j, "hostname", meta->hostname, sizeof(meta->hostname), false);
		rep_json_fixed(j, "kernel", meta->kernel, sizeof(meta->kernel), false);
		rep_json_fixed(j, "version", meta->version, sizeof(meta->version), false);
		rep_json_fixed(j, "cmdline", meta->cmdline, sizeof(meta->cmdline), false);
		rep_json_u64(j, "start_wall_ns", meta->start_wall_ns);
		rep_json_u64(j, "start_mono_ns", meta->start_mono_ns);
	} else {
		rep_json_null(j, "hostname");
		rep_json_null(j, "kernel");
		rep_json_null(j, "version");
		rep_json_null(j, "cmdline");
		rep_json_null(j, "start_wall_ns");
		rep_json_null(j, "start_mono_ns");
	}
	if (end) {
		rep_json_u64(j, "end_ns", end->end_ns);
		rep_json_bool(j, "clean_end", true);
		rep_json_str(j, "end_reason", end->reason < 3 ? reasons[end->reason] : "unknown");
		gctx_json__key(j, "exit_status");
		if (end->exit_status == -1)
			gctx_json__null(j);
		else
			gctx_json__s64(j, end->exit_status);
	} else {
		rep_json_null(j, "end_ns");
		rep_json_bool(j, "clean_end", false);
		rep_json_null(j, "end_reason");
		rep_json_null(j, "exit_status");
	}
	rep_json_write_loss(j, m);
	gctx_json__key(j, "devices");
	gctx_json__arr_begin(j);
	for (i = 0; i < gctx_model__ndevices(m); i++) {
		const struct gctx_rec_device *d = gctx_model__device(m, i);

		if (!d)
			continue;
		gctx_json__obj_begin(j);
		rep_json_str(j, "kind", gctx_dev_kind_name(d->kind));
		rep_json_fixed(j, "path", d->path, sizeof(d->path), false);
		rep_json_u64(j, "dev", d->dev);
		rep_json_u64(j, "ino", d->ino);
		rep_json_u64(j, "rdev", d->rdev);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
}

static void rep_json_proc(struct gctx_json *j, const struct gctx_model *m,
			  const struct rep_api_index *ax, const struct gctx_analysis *an,
			  const struct gctx_proc *p)
{
	__s64 init = gctx_analysis__gpu_init_ns(an, p->idx);

	const char *args, *sig;
	__u32 len, i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "pid", p->pid);
	rep_json_u64(j, "ppid", p->ppid);
	rep_json_u64(j, "index", p->idx);
	rep_json_fixed(j, "comm", p->comm, GCTX_COMM_LEN, false);
	rep_proc_argv(p, &args, &len);
	rep_json_argv(j, "argv", args, len);
	rep_json_fixed(j, "exe", rep_proc_exe(p), GCTX_PATH_LEN, true);
	rep_json_proc_job(j, p);

	gctx_json__key(j, "exit_code");
	if (p->exited && !p->signal && p->exit_code >= 0)
		gctx_json__s64(j, p->exit_code);
	else
		gctx_json__null(j);
	gctx_json__key(j, "signal");
	if (p->exited && p->signal)
		gctx_json__s64(j, p->signal);
	else
		gctx_json__null(j);
	sig = p->exited && p->signal ? gctx_signal_name(p->signal) : NULL;
	rep_json_str(j, "signal_name", sig);
	rep_json_bool(j, "core_dumped", p->exited && p->core_dumped);
	rep_json_bool(j, "exited", p->exited);
	rep_json_u64_or_null(j, "start_ns", p->start_ns);
	rep_json_u64_or_null(j, "exit_ns", p->exited ? p->exit_ns : 0);
	rep_json_bool(j, "present_at_attach", p->present_at_attach);

	gctx_json__key(j, "threads");
	gctx_json__arr_begin(j);
	for (i = 0; p->threads && i < p->nthreads; i++) {
		const struct gctx_thread *t = &p->threads[i];

		gctx_json__obj_begin(j);
		rep_json_u64(j, "tid", t->tid);
		rep_json_fixed(j, "comm", t->comm, GCTX_COMM_LEN, false);
		rep_json_u64_or_null(j, "start_ns", t->start_ns);
		rep_json_u64_or_null(j, "exit_ns", t->exited ? t->exit_ns : 0);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "execs");
	gctx_json__arr_begin(j);
	for (i = 0; p->execs && i < p->nexecs; i++) {
		const struct gctx_exec *e = &p->execs[i];

		gctx_json__obj_begin(j);
		rep_json_u64(j, "ts_ns", e->ts_ns);
		rep_json_u64(j, "old_tid", e->old_tid);
		rep_json_fixed(j, "filename", e->filename, GCTX_PATH_LEN, false);
		rep_json_argv(j, "argv", e->args, e->args_len);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "children");
	gctx_json__arr_begin(j);
	for (i = 0; p->children && i < p->nchildren; i++) {
		const struct gctx_proc *kid = rep_proc(m, p->children[i]);

		if (kid)
			gctx_json__u64(j, kid->pid);
	}
	gctx_json__arr_end(j);
	rep_json_u64(j, "gpu_ioctls", p->nioctls);
	rep_json_u64(j, "gpu_mmaps", p->nmmaps);
	rep_json_u64(j, "api_calls", gctx_model__api_calls(m, p->idx));
	rep_json_bool(j, "api_trace_complete", !gctx_model__api_unseen(m, p->idx));
	rep_json_api_callsites(j, m, p);
	/* seed 002: start (fork, or exec) to first GPU context or GPU file open */
	if (init >= 0)
		rep_json_s64(j, "gpu_init_ns", init);
	else
		rep_json_null(j, "gpu_init_ns");
	gctx_json__key(j, "comm_history");
	gctx_json__arr_begin(j);
	for (i = 0; i < p->ncomm_prev && i < GCTX_COMM_HIST; i++)
		gctx_json__strn(j, p->comm_prev[i], strnlen(p->comm_prev[i], GCTX_COMM_LEN));
	gctx_json__strn(j, p->comm, strnlen(p->comm, GCTX_COMM_LEN));
	gctx_json__arr_end(j);
	gctx_json__key(j, "contexts");
	gctx_json__arr_begin(j);
	for (i = p->idx < ax->nprocs ? ax->ctx_off[p->idx] : 0;
	     p->idx < ax->nprocs && i < ax->ctx_off[p->idx + 1]; i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, ax->ctxs[i]);

		if (x)
			gctx_json__u64(j, x->id);
	}
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
}

static void rep_json_file(struct gctx_json *j, const struct gctx_model *m,
			  const struct gctx_gpu_file *f)
{
	__u32 k, i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", f->id);
	rep_json_fixed(j, "device", f->path, GCTX_PATH_LEN, false);
	rep_json_str(j, "kind", gctx_dev_kind_name(f->kind));
	rep_json_u64_or_null(j, "opener_pid", f->opener_pid);
	rep_json_u64_or_null(j, "open_ns", f->open_ns);
	rep_json_u64(j, "open_flags", f->open_flags);
	rep_json_bool(j, "cloexec", f->open_flags & GCTX_O_CLOEXEC);
	rep_json_bool(j, "present_at_attach", f->present_at_attach);
	rep_json_bool(j, "closed", f->closed);
	rep_json_u64_or_null(j, "close_ns", f->closed ? f->close_ns : 0);

	gctx_json__key(j, "holders");
	gctx_json__arr_begin(j);
	for (k = 0; f->holders && k < f->nholders; k++) {
		const struct gctx_proc *p = rep_proc(m, f->holders[k].proc_idx);

		if (p)
			gctx_json__u64(j, p->pid);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "holders_detail");
	gctx_json__arr_begin(j);
	for (k = 0; f->holders && k < f->nholders; k++) {
		const struct gctx_holder *h = &f->holders[k];
		const struct gctx_proc *p = rep_proc(m, h->proc_idx);
		const struct gctx_proc *from = rep_proc(m, h->from_proc_idx);

		if (!p)
			continue;
		gctx_json__obj_begin(j);
		rep_json_u64(j, "pid", p->pid);
		rep_json_str(j, "how", gctx_hold_how_name(h->how));
		gctx_json__key(j, "from_pid");
		if (h->how == GCTX_HOLD_INHERITED && from)
			gctx_json__u64(j, from->pid);
		else
			gctx_json__null(j);
		rep_json_u64_or_null(j, "since_ns", h->since_ns);
		rep_json_u64_or_null(j, "until_ns", h->held ? 0 : h->until_ns);
		rep_json_u64(j, "ioctls", h->nioctls);
		rep_json_u64(j, "mmaps", h->nmmaps);
		rep_json_bool(j, "kept_across_exec", h->kept_across_exec);
		rep_json_u64(j, "execs_since", h->execs_since);
		rep_json_u64_or_null(j, "first_use_ns", h->first_use_ns);
		gctx_json__key(j, "fds");
		gctx_json__arr_begin(j);
		for (i = 0; i < h->nfds && i < 8; i++)
			gctx_json__s64(j, h->fds[i]);
		gctx_json__arr_end(j);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	rep_json_u64(j, "ioctls", f->nioctls);
	rep_json_u64(j, "mmaps", f->nmmaps);
	gctx_json__obj_end(j);
}

static void rep_json_obj(struct gctx_json *j, const struct gctx_model *m,
			 const struct gctx_gpu_obj *o)
{
	const struct gctx_proc *p = rep_proc(m, o->creator_idx);
	const struct gctx_gpu_obj *parent = NULL;

	if (o->parent_obj >= 0 && (__u32)o->parent_obj < gctx_model__nobjs(m))
		parent = gctx_model__obj(m, (__u32)o->parent_obj);
	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", o->id);
	rep_json_str(j, "kind", gctx_obj_kind_name(o->kind));
	rep_json_u64(j, "class", o->cls);
	rep_json_str(j, "class_name", o->cls ? gctx_nv_class_name(o->cls) : NULL);
	rep_json_u64(j, "handle", o->handle);
	rep_json_u64(j, "parent", o->parent);
	rep_json_u64(j, "client", o->client);
	rep_json_u64_or_null(j, "parent_id", parent ? parent->id : 0);
	rep_json_u64_or_null(j, "file_id", o->file_id);
	gctx_json__key(j, "creator_pid");
	if (p)
		gctx_json__u64(j, p->pid);
	else
		gctx_json__null(j);
	rep_json_u64_or_null(j, "creator_tid", o->creator_tid);
	rep_json_u64_or_null(j, "create_ns", o->create_ns);
	rep_json_u64_or_null(j, "destroy_ns", o->destroyed ? o->destroy_ns : 0);
	rep_json_bool(j, "destroyed", o->destroyed);
	rep_json_u64(j, "size", o->size);
	gctx_json__obj_end(j);
}

static void rep_json_api_ctx(struct gctx_json *j, const struct gctx_model *m,
			     const struct gctx_api_ctx *x)
{
	const struct gctx_proc *p = rep_proc(m, x->creator_idx);
	__u32 i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", x->id);
	rep_json_u64(j, "handle", x->handle);
	rep_json_str(j, "vendor", rep_api_vendor_name(x->vendor));
	rep_json_bool(j, "primary", x->primary);
	rep_json_bool(j, "green", x->green);
	gctx_json__key(j, "device");
	if (x->device >= 0)
		gctx_json__s64(j, x->device);
	else
		gctx_json__null(j);
	rep_json_u64_or_null(j, "creator_pid", p ? p->pid : 0);
	rep_json_u64_or_null(j, "creator_tid", x->creator_tid);
	rep_json_str(j, "create_fn", gctx_api_fn_name(x->create_fn));
	rep_json_ctx_caller(j, m, x);
	rep_json_u64_or_null(j, "create_ns", x->create_ns);
	rep_json_u64_or_null(j, "destroy_ns", x->destroyed ? x->destroy_ns : 0);
	rep_json_u64(j, "refs", x->refs);
	rep_json_u64(j, "mem_live", x->mem_live);
	rep_json_u64(j, "mem_total", x->mem_total);
	rep_json_u64(j, "allocs", x->nallocs);
	rep_json_u64(j, "launches", x->launches);
	gctx_json__key(j, "kernel_objects");
	gctx_json__arr_begin(j);
	for (i = 0; x->kobjs && i < x->nkobjs; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, x->kobjs[i]);

		if (o)
			gctx_json__u64(j, o->id);
	}
	gctx_json__arr_end(j);
	gctx_json__key(j, "currents");
	gctx_json__arr_begin(j);
	for (i = 0; x->currents && i < x->ncurrents && i < REP_MAX_CURRENTS; i++) {
		gctx_json__obj_begin(j);
		rep_json_u64(j, "tid", x->currents[i].tid);
		rep_json_u64(j, "ts_ns", x->currents[i].ts_ns);
		rep_json_str(j, "fn", gctx_api_fn_name(x->currents[i].fn));
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	rep_json_bool(j, "currents_truncated", x->ncurrents > REP_MAX_CURRENTS);
	rep_json_u64(j, "currents_dropped", x->ncurrents_dropped);
	gctx_json__obj_end(j);
}

static void rep_json_api_mem(struct gctx_json *j, const struct gctx_model *m,
			     const struct gctx_api_mem *mm)
{
	const struct gctx_proc *p = rep_proc(m, mm->proc_idx);

	gctx_json__obj_begin(j);
	rep_json_u64_or_null(j, "pid", p ? p->pid : 0);
	rep_json_u64_or_null(j, "ctx_id", mm->ctx_id);
	rep_json_str(j, "fn", gctx_api_fn_name(mm->fn));
	rep_json_u64(j, "ptr", mm->ptr);
	rep_json_u64(j, "size", mm->size);
	rep_json_u64_or_null(j, "alloc_ns", mm->alloc_ns);
	rep_json_u64_or_null(j, "free_ns", mm->freed ? mm->free_ns : 0);
	gctx_json__obj_end(j);
}

static void rep_json_probe(struct gctx_json *j, const struct gctx_rec_probe *r)
{
	char insn[2 * sizeof(r->insn) + 1];

	gctx_json__obj_begin(j);
	rep_json_fixed(j, "lib", r->lib, sizeof(r->lib), false);
	rep_json_fixed(j, "symbol", r->symbol, sizeof(r->symbol), false);
	rep_json_str(j, "fn", gctx_api_fn_name(r->fn));
	rep_json_str(j, "how", rep_probe_how_name(r->how));
	rep_json_u64(j, "offset", r->offset);
	rep_json_u64(j, "sym_offset", r->sym_offset);
	rep_json_bool(j, "endbr64_skipped", rep_probe_endbr64_skipped(r));
	rep_json_str(j, "execution", rep_probe_execution(r));
	rep_probe_insn(insn, sizeof(insn), r, "");
	rep_json_str(j, "first_bytes", insn);
	rep_json_bool(j, "retprobe", r->retprobe);
	rep_json_s64(j, "err", r->err);
	gctx_json__key(j, "error");
	if (r->err) {
		char err[32];

		gctx_format_errno(err, sizeof(err), gctx_ret_errno(r->err));
		gctx_json__str(j, err);
	} else {
		gctx_json__null(j);
	}
	gctx_json__obj_end(j);
}

static void rep_json_api(struct gctx_json *j, const struct gctx_model *m)
{
	__u32 i, n;

	gctx_json__key(j, "api_contexts");
	gctx_json__arr_begin(j);
	n = gctx_model__nctxs(m);
	for (i = 0; i < n; i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, i);

		if (x)
			rep_json_api_ctx(j, m, x);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "api_memory");
	gctx_json__arr_begin(j);
	n = gctx_model__nmems(m);
	for (i = 0; i < n && i < REP_MAX_API_MEM; i++) {
		const struct gctx_api_mem *mm = gctx_model__mem(m, i);

		if (mm)
			rep_json_api_mem(j, m, mm);
	}
	gctx_json__arr_end(j);
	rep_json_u64(j, "api_memory_count", n);
	rep_json_bool(j, "api_memory_truncated", n > REP_MAX_API_MEM);

	gctx_json__key(j, "probes");
	gctx_json__arr_begin(j);
	n = gctx_model__nprobes(m);
	for (i = 0; i < n; i++) {
		const struct gctx_rec_probe *r = gctx_model__probe(m, i);

		if (r)
			rep_json_probe(j, r);
	}
	gctx_json__arr_end(j);
}

static void rep_json_finding(struct gctx_json *j, const struct gctx_model *m,
			     const struct gctx_finding *f)
{
	const struct gctx_gpu_file *file = rep_file_by_id(m, f->file_id);
	__u32 i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", f->id);
	rep_json_str(j, "kind", gctx_finding_kind_name(f->kind));
	rep_json_str(j, "severity", gctx_severity_name(f->severity));
	rep_json_u64(j, "pid", f->pid);
	rep_json_u64_or_null(j, "tid", f->tid);
	rep_json_u64_or_null(j, "opener_pid", f->opener_pid);
	gctx_json__key(j, "device");
	if (file)
		rep_json_fixed(j, NULL, file->path, GCTX_PATH_LEN, false);
	else
		gctx_json__null(j);
	rep_json_str(j, "device_kind", f->kind_dev ? gctx_dev_kind_name(f->kind_dev) : NULL);
	rep_json_u64_or_null(j, "file_id", f->file_id);
	rep_json_u64_or_null(j, "time_ns", f->time_ns);
	rep_json_str(j, "event", gctx_ev_type_name(f->event_type));
	rep_json_fixed(j, "call", f->call, sizeof(f->call), true);
	rep_json_s64(j, "err", f->err);
	rep_json_str(j, "errno_name", f->err ? gctx_errno_name(f->err) : NULL);
	gctx_json__key(j, "status");
	if (f->has_status)
		gctx_json__u64(j, f->status);
	else
		gctx_json__null(j);
	rep_json_str(j, "status_name", f->has_status ? gctx_nv_status_name(f->status) : NULL);
	gctx_json__key(j, "chain");
	gctx_json__arr_begin(j);
	for (i = 0; i < f->nchain && i < GCTX_MAX_CHAIN; i++)
		gctx_json__u64(j, f->chain[i]);
	gctx_json__arr_end(j);
	rep_json_bool(j, "exec_between", f->exec_between);
	rep_json_bool(j, "later_used", f->later_used);
	rep_json_u64(j, "uses", f->uses);
	rep_json_u64_or_null(j, "related_finding", f->related_finding);
	gctx_sites_json(j, m, f);
	gctx_json__key(j, "api_ret");
	if (f->has_api_ret)
		gctx_json__s64(j, f->api_ret);
	else
		gctx_json__null(j);
	gctx_json__key(j, "api_ret_name");
	if (f->has_api_ret)
		rep_json_fixed(j, NULL, f->api_ret_name, sizeof(f->api_ret_name), true);
	else
		gctx_json__null(j);
	/* inherited-context-call: the child's first refused call, null when none failed */
	gctx_json__key(j, "refused_call");
	if (f->refused_call[0]) {
		gctx_json__obj_begin(j);
		rep_json_fixed(j, "call", f->refused_call, sizeof(f->refused_call), true);
		gctx_json__key(j, "ret");
		gctx_json__s64(j, f->refused_ret);
		rep_json_fixed(j, "ret_name", f->refused_ret_name, sizeof(f->refused_ret_name),
			       true);
		gctx_json__obj_end(j);
	} else {
		gctx_json__null(j);
	}
	gctx_json__key(j, "context");
	if (f->ctx_id && rep_api_ctx_by_id(m, f->ctx_id))
		gctx_json__u64(j, f->ctx_id);
	else
		gctx_json__null(j);
	gctx_json__key(j, "context_handle");
	if (f->ctx_id)
		gctx_json__u64(j, f->ctx_handle);
	else
		gctx_json__null(j);
	rep_json_fixed(j, "detail", f->detail, sizeof(f->detail), false);
	gctx_json__obj_end(j);
}

static void rep_json_counts(struct gctx_json *j, const struct gctx_model *m)
{
	const struct gctx_rec_drops *d = gctx_model__drops(m);
	__u64 xf;
	__u32 t;

	gctx_json__key(j, "drops");
	gctx_json__obj_begin(j);
	for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
		rep_json_u64(j, gctx_ev_type_name(t), d ? d->drops[t] : 0);
	rep_json_u64(j, "missed_stash", d ? d->missed_stash : 0);
	rep_json_u64(j, "total", rep_drops_total(d));
	/* an agent dump: its history cut by the window, what it left out past its cap */
	rep_json_u64(j, "window_evicted", d ? d->window_evicted : 0);
	rep_json_u64(j, "omitted_procs", d ? d->omitted_procs : 0);
	rep_json_u64(j, "omitted_records", d ? d->omitted_records : 0);
	/* execs without the kernel's whole list of kept GPU fds; the files left unknown */
	rep_json_u64(j, "exec_fds_unknown", gctx_model__exec_fds_unknown(m, &xf));
	rep_json_u64(j, "exec_files_unknown", xf);
	gctx_json__obj_end(j);

	/* what the model left out of live processes (model.h, GCTX_KEEP_*) */
	gctx_json__key(j, "left_out");
	gctx_json__obj_begin(j);
	rep_json_u64(j, "exited_threads", gctx_model__trimmed(m)->threads);
	rep_json_u64(j, "execs", gctx_model__trimmed(m)->execs);
	rep_json_u64(j, "destroyed_objects", gctx_model__trimmed(m)->objs);
	rep_json_u64(j, "freed_allocations", gctx_model__trimmed(m)->mems);
	rep_json_u64(j, "context_currents", gctx_model__trimmed(m)->currents);
	rep_json_u64(j, "closed_files", gctx_model__trimmed(m)->files);
	gctx_json__obj_end(j);

	gctx_json__key(j, "events");
	gctx_json__obj_begin(j);
	rep_json_u64(j, "total", gctx_model__total_events(m));
	for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
		rep_json_u64(j, gctx_ev_type_name(t), gctx_model__events(m, t));
	gctx_json__obj_end(j);
}

int gctx_report__json(FILE *out, const struct gctx_model *m, const struct gctx_trace_meta *meta)
{
	struct gctx_json *j;
	int err;

	if (!out || !m)
		return -EINVAL;
	j = gctx_json__new(out, true);
	if (!j)
		return -ENOMEM;
	err = gctx_report__json_to(j, m, meta);
	gctx_json__free(j);
	if (err)
		return err;
	fputc('\n', out);
	return rep_finish(out);
}

int gctx_report__json_to(struct gctx_json *j, const struct gctx_model *m,
			 const struct gctx_trace_meta *meta)
{
	struct rep_api_index ax;
	struct gctx_analysis *an;
	__u32 i, n;
	int err;

	err = rep_api_index__build(&ax, m);
	if (err)
		return err;
	an = gctx_analysis__new(m, meta ? meta->start_mono_ns : 0);
	if (!an) {
		rep_api_index__free(&ax);
		return -ENOMEM;
	}
	gctx_json__obj_begin(j);
	rep_json_meta(j, m, meta);
	rep_json_jobs(j, m);

	gctx_json__key(j, "processes");
	gctx_json__arr_begin(j);
	n = gctx_model__nprocs(m);
	for (i = 0; i < n; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);

		if (p)
			rep_json_proc(j, m, &ax, an, p);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "gpu_files");
	gctx_json__arr_begin(j);
	n = gctx_model__nfiles(m);
	for (i = 0; i < n; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		if (f)
			rep_json_file(j, m, f);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "gpu_objects");
	gctx_json__arr_begin(j);
	n = gctx_model__nobjs(m);
	for (i = 0; i < n; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (o)
			rep_json_obj(j, m, o);
	}
	gctx_json__arr_end(j);

	rep_json_api(j, m);
	rep_json_coverage(j, m);

	gctx_json__key(j, "findings");
	gctx_json__arr_begin(j);
	n = gctx_model__nfindings(m);
	for (i = 0; i < n; i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);

		if (f)
			rep_json_finding(j, m, f);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "stacks");
	gctx_json__arr_begin(j);
	for (i = 0; i < gctx_model__nstacks(m); i++)
		gctx_stack_json(j, gctx_model__stack(m, i));
	gctx_json__arr_end(j);
	gctx_stack_stats_json(j, m);
	rep_json_caller_stats(j, m);

	/* what Python children that inherited GPU state raised (the kept ones) */
	gctx_json__key(j, "python_exceptions");
	gctx_json__arr_begin(j);
	for (i = 0; i < gctx_model__npyexcs(m); i++) {
		const struct gctx_pyexc *e = gctx_model__pyexc(m, i);

		gctx_json__obj_begin(j);
		rep_json_u64(j, "pid", e->pid);
		rep_json_u64(j, "tid", e->tid);
		rep_json_u64(j, "ts_ns", e->ts_ns);
		rep_json_u64(j, "seq", e->seq);
		rep_json_u64(j, "raised_so_far", e->total);
		rep_json_fixed(j, "type", e->type, sizeof(e->type), true);
		rep_json_fixed(j, "message", e->msg, sizeof(e->msg), true);
		rep_json_bool(j, "about_gpu", !e->count_only && gctx_pyexc_about_gpu(e));
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);

	rep_json_counts(j, m);
	rep_json_incidents(j, m, an);
	gctx_json__obj_end(j);
	gctx_analysis__free(an);
	rep_api_index__free(&ax);
	return 0;
}
