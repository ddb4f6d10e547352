// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline of the incidents, at the end of input: an instant on the track of the process that
 * created the GPU state, with the summary and the fix as args, and a flow from it to an instant
 * on each member process (at its fork).
 */
#include <stdio.h>
#include <string.h>

#include "model/analysis.h"
#include "output/timeline/timeline_priv.h"

#define FLOWS_MAX 64 /* members linked by a flow per incident; the args list them all */

static void untimed(const struct gctx_incident *in, char *buf, size_t len)
{
	const char *at = in->init_at[0] ? strstr(in->summary, in->init_at) : NULL;
	size_t n = at ? (size_t)(at - in->summary) : strlen(in->summary);

	snprintf(buf, len, "%.*s%s", (int)n, in->summary, at ? at + strlen(in->init_at) : "");
}

static void emit_incident(struct exporter *x, const struct gctx_incident *in)
{
	struct gctx_tl_track t, mt;
	__u64 ts = in->init_ns ? in->init_ns : in->first_ns;
	char name[80], text[sizeof(in->summary)];
	struct args a;

	if (!tl_xp(x, in->src_idx))
		return;
	tl_proc_describe(x, in->src_idx, 0);
	tl_trk_proc(x, in->src_idx, &t);
	snprintf(name, sizeof(name), "incident #%u: %s", in->id, gctx_incident_title(in->kind));
	a.n = 0;
	tl_arg_u64(&a, "id", in->id);
	tl_arg_str(&a, "kind", gctx_incident_kind_name(in->kind));
	tl_arg_str(&a, "severity", gctx_severity_name(in->severity));
	tl_arg_u64(&a, "pid", in->src_pid);
	tl_arg_u32v(&a, "pids", in->pids, in->npids);
	tl_arg_u32v(&a, "findings", in->findings, in->nfindings);
	tl_arg_u64(&a, "generations", in->generations);
	/* the time is the instant's own: the text without it compares across runs */
	untimed(in, text, sizeof(text));
	tl_arg_str(&a, "summary", text);
	tl_arg_str(&a, "fix", in->fix);
	tl_emit(x, 'I', &t, ts, name, "incident", &a, 0, 0);

	for (__u32 i = 0; i < in->npids && i < FLOWS_MAX; i++) {
		const struct gctx_proc *p = gctx_model__proc(x->m, in->members[i]);
		__u64 flow = tl_new_flow(x);
		__u64 mts = p->start_ns > ts ? p->start_ns : ts;

		if (!tl_xp(x, p->idx))
			continue;
		tl_proc_describe(x, p->idx, 0);
		tl_trk_proc(x, p->idx, &mt);
		a.n = 0;
		tl_arg_u64(&a, "incident", in->id);
		tl_arg_u64(&a, "pid", p->pid);
		tl_emit(x, 'I', &t, ts, name, "incident", &a, flow, 0);
		tl_emit(x, 'I', &mt, mts, name, "incident", &a, 0, flow);
	}
}

void tl_incidents(struct exporter *x)
{
	struct gctx_analysis *an;

	if (x->err)
		return;
	an = gctx_analysis__new(x->m, x->meta.start_mono_ns);
	if (!an) {
		nomem(x);
		return;
	}
	for (__u32 i = 0; i < gctx_analysis__nincidents(an); i++)
		emit_incident(x, gctx_analysis__incident(an, i));
	gctx_analysis__free(an);
}
