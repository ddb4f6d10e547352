// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model. Records are applied one at a time, in ring-buffer order.
 *
 * This file: creating and freeing the model, feeding it (each record type goes to its
 * handler: lineage.c, files.c, contexts.c), the end of input, and the public accessors. The
 * state and the storage are described in model_priv.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "model/model_priv.h"
#include "trace/records.h"

/* snprintf for human-readable text, where cutting a long line short is fine */
__attribute__((format(printf, 3, 4))) void mdl_textf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* ---- device and probe records ---- */

static int ev_device(struct gctx_model *m, const struct gctx_rec_device *r)
{
	if (gctx_grow(&m->devices, &m->cap_devices, m->ndevices + 1, sizeof(*m->devices)))
		return -ENOMEM;
	m->devices[m->ndevices++] = *r;
	return 0;
}

static int ev_probe(struct gctx_model *m, const struct gctx_rec_probe *r)
{
	if (gctx_grow(&m->probes, &m->cap_probes, m->nprobes + 1, sizeof(*m->probes)))
		return -ENOMEM;
	m->probes[m->nprobes++] = *r;
	return 0;
}

/* ---- public interface ---- */

struct gctx_model *gctx_model__new(void)
{
	struct gctx_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->strs = gctx_strpool__new();
	if (!m->strs) {
		free(m);
		return NULL;
	}
	m->procs.elem = sizeof(struct proc_priv);
	m->files.elem = sizeof(struct file_priv);
	m->objs.elem = sizeof(struct obj_priv);
	m->findings.elem = sizeof(struct gctx_finding);
	m->ctxs.elem = sizeof(struct gctx_api_ctx);
	m->mems.elem = sizeof(struct gctx_api_mem);
	return m;
}

/* What a process owns outside its slot (the model's free, and compaction's drops). */
void mdl_proc_free_arrays(struct proc_priv *p)
{
	free(p->pub.execs);
	free(p->pub.threads);
	free(p->pub.children);
	free(p->hrefs);
	free(p->kept);
	free(p->ctxs);
}

void gctx_model__free(struct gctx_model *m)
{
	__u32 i;

	if (!m)
		return;
	for (i = 0; i < m->procs.n; i++)
		mdl_proc_free_arrays(P(m, i));
	for (i = 0; i < m->ctxs.n; i++) {
		struct gctx_api_ctx *c = gctx_chunks__at(&m->ctxs, i);

		free(c->kobjs);
		free(c->currents);
	}
	gctx_chunks__free(&m->ctxs);
	gctx_chunks__free(&m->mems);
	gctx_strpool__free(m->strs);
	gctx_hmap__free(&m->mem_map);
	gctx_hmap__free(&m->apierr_map);
	free(m->probes);
	mdl_coverage_free(m);
	mdl_pyexc_free(m);
	for (i = 0; i < m->files.n; i++)
		free(F(m, i)->pub.holders);
	gctx_chunks__free(&m->procs);
	gctx_chunks__free(&m->files);
	gctx_chunks__free(&m->objs);
	gctx_chunks__free(&m->findings);
	gctx_hmap__free(&m->pid_map);
	gctx_hmap__free(&m->file_map);
	gctx_hmap__free(&m->thread_map);
	gctx_hmap__free(&m->holder_map);
	gctx_hmap__free(&m->finding_map);
	gctx_hmap__free(&m->obj_map);
	gctx_hmap__free(&m->client_map);
	free(m->devices);
	free(m->stack);
	mdl_stacks_free(m);
	mdl_callers_free(m);
	mdl_fold_free(m);
	free(m);
}

void gctx_model__set_finding_cb(struct gctx_model *m, gctx_finding_cb cb, void *ctx)
{
	if (!m)
		return;
	m->cb = cb;
	m->cb_ctx = ctx;
}

int gctx_model__feed(struct gctx_model *m, __u32 type, const void *data, __u32 len)
{
	/* records may come unaligned from a trace file: work on an aligned copy */
	union gctx_record r;
	__u32 need = gctx_record_min_len(type);

	if (!m || (!data && len))
		return -EINVAL;
	if (type == GCTX_EV_STACK || type == GCTX_REC_STACK || type == GCTX_REC_STACK_DROPS) {
		m->total++;
		return mdl_stack_feed(m, type, data, len);
	}
	if (!need) {
		m->unknown_records++;
		m->total++;
		return 0;
	}
	if (!gctx_record_copy(&r, type, data, len))
		return -EINVAL;
	m->total++;
	if (type < GCTX_EV_KERNEL_MAX)
		m->events[type]++;

	switch (type) {
	case GCTX_EV_FORK:
		return mdl_ev_fork(m, &r.fork);
	case GCTX_EV_EXEC:
		return mdl_ev_exec(m, &r.exec);
	case GCTX_EV_EXIT:
		return mdl_ev_exit(m, &r.exit);
	case GCTX_EV_OPEN:
		return mdl_ev_open(m, &r.open);
	case GCTX_EV_IOCTL:
		return mdl_ev_ioctl(m, &r.ioctl);
	case GCTX_EV_MMAP:
		return mdl_ev_mmap(m, &r.mmap);
	case GCTX_EV_CLOSE:
		return mdl_ev_close(m, &r.fd);
	case GCTX_EV_FD_KEPT:
	case GCTX_EV_FD_FORK:
		return mdl_ev_fd_kept(m, &r.fd, type == GCTX_EV_FD_FORK);
	case GCTX_REC_PROC_PRESENT:
		return mdl_ev_proc_present(m, &r.proc);
	case GCTX_REC_FILE_PRESENT:
		return mdl_ev_file_present(m, &r.file);
	case GCTX_REC_DEVICE:
		return ev_device(m, &r.dev);
	case GCTX_REC_DROPS:
		m->drops = r.drops;
		return 0;
	case GCTX_REC_END:
		m->end = r.end;
		m->has_end = true;
		return 0;
	case GCTX_REC_WRITE_LOSS:
		m->wloss = r.wloss; /* the last one has the final count */
		m->has_wloss = true;
		return 0;
	case GCTX_EV_API: {
		__u32 nctxs = m->ctxs.n;
		int err = mdl_ev_api(m, &r.api);

		return err ? err : mdl_callers_api(m, &r.api, nctxs);
	}
	case GCTX_REC_CALLER:
	case GCTX_REC_CALLER_DROPS:
		return mdl_callers_feed(m, type, &r);
	case GCTX_REC_PROBE:
		return ev_probe(m, &r.probe);
	case GCTX_REC_THREAD_PRESENT:
		return mdl_ev_thread_present(m, &r.thread);
	case GCTX_REC_API_PRESENT:
		return mdl_ev_api_present(m, &r.apip);
	case GCTX_REC_CGROUP:
		return mdl_ev_cgroup(m, &r.cgroup);
	case GCTX_REC_API_GAP:
	case GCTX_REC_HOLD:
		return mdl_coverage_feed(m, type, &r);
	case GCTX_EV_PYEXC:
		return mdl_pyexc_feed(m, &r.pyexc);
	}
	return 0;
}

void gctx_model__finish(struct gctx_model *m)
{
	__u32 i;

	if (!m)
		return;
	for (i = 0; i < m->procs.n; i++) {
		struct proc_priv *p = P(m, i);

		if (p->fws_pending && !p->pub.exited)
			mdl_fws_raise(m, p, true);
	}
}

__u32 gctx_model__nprocs(const struct gctx_model *m)
{
	return m ? m->procs.n : 0;
}

const struct gctx_proc *gctx_model__proc(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->procs.n ? &P(m, idx)->pub : NULL;
}

const struct gctx_proc *gctx_model__proc_by_pid(const struct gctx_model *m, __u32 pid)
{
	struct proc_priv *p = m ? mdl_proc_lookup(m, pid) : NULL;

	return p ? &p->pub : NULL;
}

__u32 gctx_model__nfiles(const struct gctx_model *m)
{
	return m ? m->files.n : 0;
}

const struct gctx_gpu_file *gctx_model__file(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->files.n ? &F(m, idx)->pub : NULL;
}

const struct gctx_gpu_file *gctx_model__file_by_addr(const struct gctx_model *m, __u64 file)
{
	struct file_priv *f = m ? mdl_file_lookup(m, file) : NULL;

	return f ? &f->pub : NULL;
}

__u32 gctx_model__nobjs(const struct gctx_model *m)
{
	return m ? m->objs.n : 0;
}

const struct gctx_gpu_obj *gctx_model__obj(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->objs.n ? &O(m, idx)->pub : NULL;
}

__u32 gctx_model__nfindings(const struct gctx_model *m)
{
	return m ? m->findings.n : 0;
}

const struct gctx_finding *gctx_model__finding(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->findings.n ? FIND(m, idx) : NULL;
}

__u64 gctx_model__exec_fds_unknown(const struct gctx_model *m, __u64 *files)
{
	if (files)
		*files = m ? m->exec_files_unknown : 0;
	return m ? m->exec_fds_unknown : 0;
}

const struct gctx_rec_drops *gctx_model__drops(const struct gctx_model *m)
{
	static const struct gctx_rec_drops none;

	return m ? &m->drops : &none;
}

__u64 gctx_model__events(const struct gctx_model *m, __u32 type)
{
	return m && type < GCTX_EV_KERNEL_MAX ? m->events[type] : 0;
}

__u64 gctx_model__total_events(const struct gctx_model *m)
{
	return m ? m->total : 0;
}

const struct gctx_rec_write_loss *gctx_model__write_loss(const struct gctx_model *m)
{
	return m && m->has_wloss ? &m->wloss : NULL;
}

const struct gctx_rec_end *gctx_model__end(const struct gctx_model *m)
{
	return m && m->has_end ? &m->end : NULL;
}

__u32 gctx_model__ndevices(const struct gctx_model *m)
{
	return m ? m->ndevices : 0;
}

const struct gctx_rec_device *gctx_model__device(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->ndevices ? &m->devices[idx] : NULL;
}

__u32 gctx_model__nctxs(const struct gctx_model *m)
{
	return m ? m->ctxs.n : 0;
}

const struct gctx_api_ctx *gctx_model__ctx(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->ctxs.n ? gctx_chunks__at(&m->ctxs, idx) : NULL;
}

__u32 gctx_model__nmems(const struct gctx_model *m)
{
	return m ? m->mems.n : 0;
}

const struct gctx_api_mem *gctx_model__mem(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->mems.n ? gctx_chunks__at(&m->mems, idx) : NULL;
}

__u32 gctx_model__nprobes(const struct gctx_model *m)
{
	return m ? m->nprobes : 0;
}

const struct gctx_rec_probe *gctx_model__probe(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->nprobes ? &m->probes[idx] : NULL;
}

__u64 gctx_model__procaddr_not_found(const struct gctx_model *m)
{
	return m ? m->procaddr_not_found : 0;
}

__u64 gctx_model__api_calls(const struct gctx_model *m, __u32 proc_idx)
{
	return m && proc_idx < m->procs.n ? P(m, proc_idx)->api_calls : 0;
}

bool gctx_model__has_gpu_state(const struct gctx_model *m, __u32 proc_idx)
{
	const struct proc_priv *p = m && proc_idx < m->procs.n ? P(m, proc_idx) : NULL;

	return p && (p->nhrefs || p->pub.nioctls || p->pub.nmmaps || p->api_calls);
}

const char *gctx_finding_kind_name(enum gctx_finding_kind k)
{
	switch (k) {
	case GCTX_FIND_INHERITED_GPU_USE:
		return "inherited-gpu-use";
	case GCTX_FIND_FOREIGN_GPU_USE:
		return "foreign-gpu-use";
	case GCTX_FIND_FORK_WITH_GPU_STATE:
		return "fork-with-gpu-state";
	case GCTX_FIND_GPU_FD_ACROSS_EXEC:
		return "gpu-fd-across-exec";
	case GCTX_FIND_CRASH_AFTER_INHERITANCE:
		return "crash-after-inheritance";
	case GCTX_FIND_INHERITED_CONTEXT_CALL:
		return "inherited-context-call";
	case GCTX_FIND_API_ERROR:
		return "api-error";
	case GCTX_FIND_API_CALLS_UNSEEN:
		return "api-calls-unseen";
	default:
		return "?";
	}
}

const char *gctx_severity_name(enum gctx_severity s)
{
	switch (s) {
	case GCTX_SEV_INFO:
		return "info";
	case GCTX_SEV_WARNING:
		return "warning";
	case GCTX_SEV_ERROR:
		return "error";
	default:
		return "?";
	}
}

const char *gctx_hold_how_name(enum gctx_hold_how h)
{
	switch (h) {
	case GCTX_HOLD_OPENED:
		return "opened";
	case GCTX_HOLD_INHERITED:
		return "inherited";
	case GCTX_HOLD_RECEIVED:
		return "received";
	case GCTX_HOLD_PRESENT:
		return "present";
	default:
		return "?";
	}
}
