// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline of the findings: an instant on the process track per finding, use findings held back
 * until their process ends (their use counts grow).
 */
#include <stdio.h>
#include <string.h>

#include "decode/decode.h"
#include "model/model.h"
#include "output/report/print.h"
#include "output/report/sites.h"
#include "output/timeline/timeline_priv.h"
#include "trace/records.h"

/* ---- findings ---- */

/* Its sites and stacks as args ("init_site", "init_stack": one frame per line); the buffers
 * live until the next finding (the exporter is single-threaded). */
static void add_stacks(struct exporter *x, const struct gctx_finding *f, struct args *a)
{
	static char site[GCTX_STACK_ROLE_MAX][640], stack[GCTX_STACK_ROLE_MAX][4096];
	static char keys[GCTX_STACK_ROLE_MAX][2][16];
	const struct gctx_stack *st[GCTX_STACK_ROLE_MAX];

	gctx_finding_stacks_in(x->m, x->stk_m ? x->stk_m : x->m, f, st);
	for (__u32 r = 1; r < GCTX_STACK_ROLE_MAX; r++) {
		if (!st[r])
			continue;
		gctx_site_format(st[r], site[r], sizeof(site[r]));
		tl_stack_text(st[r], stack[r], sizeof(stack[r]));
		snprintf(keys[r][0], sizeof(keys[r][0]), "%s_site", gctx_stack_role_name(r));
		snprintf(keys[r][1], sizeof(keys[r][1]), "%s_stack", gctx_stack_role_name(r));
		tl_arg_str(a, keys[r][0], site[r]);
		tl_arg_str(a, keys[r][1], stack[r]);
	}
}

static void emit_finding(struct exporter *x, const struct gctx_finding *f)
{
	struct gctx_tl_track t;
	char name[64], status[48], err[32], evname[16], ctxh[24];
	const char *sn, *en;
	struct args a;

	tl_trk_proc(x, f->proc_idx, &t);
	snprintf(name, sizeof(name), "%s (%s)", gctx_finding_kind_name(f->kind),
		 gctx_severity_name(f->severity));
	a.n = 0;
	tl_arg_u64(&a, "id", f->id);
	tl_arg_str(&a, "kind", gctx_finding_kind_name(f->kind));
	tl_arg_str(&a, "severity", gctx_severity_name(f->severity));
	tl_arg_u64(&a, "pid", f->pid);
	tl_arg_u64(&a, "tid", f->tid);
	tl_arg_u64(&a, "opener_pid", f->opener_pid);
	tl_arg_u64(&a, "file_id", f->file_id);
	tl_arg_str(&a, "device_kind", f->kind_dev ? gctx_dev_kind_name(f->kind_dev) : "");
	tl_arg_u64(&a, "time_ns", f->time_ns);
	/* the model proves findings with fork, exec, exit, ioctl, mmap and api events only */
	en = gctx_ev_type_name(f->event_type);
	if (!en) {
		snprintf(evname, sizeof(evname), "%u", f->event_type);
		en = evname;
	}
	tl_arg_str(&a, "event", en);
	tl_arg_u64(&a, "related_finding", f->related_finding);
	tl_arg_u32v(&a, "chain", f->chain, f->nchain < GCTX_MAX_CHAIN ? f->nchain : GCTX_MAX_CHAIN);
	tl_arg_bool(&a, "exec_between", f->exec_between);
	tl_arg_bool(&a, "later_used", f->later_used);
	tl_arg_u64(&a, "uses", f->uses);
	if (f->err) {
		gctx_format_errno(err, sizeof(err), f->err);
		tl_arg_str(&a, "errno", err);
	} else {
		tl_arg_str(&a, "errno", "");
	}
	if (f->has_status) {
		sn = gctx_nv_status_name(f->status);
		snprintf(status, sizeof(status), "%s (0x%x)", sn ? sn : "status", f->status);
		tl_arg_str(&a, "status", status);
	} else {
		tl_arg_str(&a, "status", "");
	}
	tl_arg_strn(&a, "call", f->call, sizeof(f->call));
	if (f->has_api_ret) {
		tl_arg_s64(&a, "api_ret", f->api_ret);
		tl_arg_strn(&a, "api_ret_name", f->api_ret_name, sizeof(f->api_ret_name));
	}
	if (f->ctx_id) {
		snprintf(ctxh, sizeof(ctxh), "0x%llx", (unsigned long long)f->ctx_handle);
		tl_arg_u64(&a, "context_id", f->ctx_id);
		tl_arg_str(&a, "context_handle", ctxh);
	}
	tl_arg_strn(&a, "detail", f->detail, sizeof(f->detail));
	add_stacks(x, f, &a);
	tl_emit(x, 'I', &t, f->time_ns, name, "finding", &a, 0, 0);
}

/*
 * A finding from the model, while it takes a record or at the end. A use finding counts the
 * uses that follow it: it is written when its process ends, with the final count, at the time
 * of the use that proved it; the others at once.
 */
void tl_on_finding(const struct gctx_finding *f, void *ctx)
{
	struct exporter *x = ctx;
	struct xproc *xp;

	if (x->err || !(xp = tl_xp(x, f->proc_idx)))
		return;
	if (f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL)
		x->icc_ctx = f->ctx_id;
	tl_proc_describe(x, f->proc_idx, 0);
	if (f->kind == GCTX_FIND_INHERITED_GPU_USE || f->kind == GCTX_FIND_FOREIGN_GPU_USE ||
	    f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL || f->kind == GCTX_FIND_API_ERROR) {
		if (gctx_grow(&xp->findings, &xp->cap_findings, xp->nfindings + 1,
			      sizeof(*xp->findings))) {
			nomem(x);
			return;
		}
		xp->findings[xp->nfindings++] = f->id - 1;
		return;
	}
	emit_finding(x, f);
}

void tl_findings_flush(struct exporter *x, __u32 pi)
{
	struct xproc *xp = &x->procs[pi];
	__u32 i;

	for (i = 0; i < xp->nfindings; i++)
		emit_finding(x, gctx_model__finding(x->m, xp->findings[i]));
	xp->nfindings = 0;
}
