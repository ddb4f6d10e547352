// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The diagnosis in the report: the verdict and one paragraph per incident (what happened,
 * where, who, the fix) at the top of the text report, and the same as `summary` and
 * `incidents` in the JSON.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "model/analysis.h"
#include "output/report/print.h"
#include "output/report/report_priv.h"

#define LIST_MAX 24 /* pids and finding ids listed in the text before "..." */

static void rep_text_members(struct rep_ctx *c, const struct gctx_incident *in)
{
	__u32 gen = 0;

	fprintf(c->out, "     pids:");
	for (__u32 i = 0; i < in->npids && i < LIST_MAX; i++) {
		if (in->generations > 1 && in->pid_gen[i] != gen) {
			gen = in->pid_gen[i];
			fprintf(c->out, "%s gen %u:", i ? ";" : "", gen);
		}
		fprintf(c->out, " %u", in->pids[i]);
	}
	if (in->npids > LIST_MAX)
		fprintf(c->out, " ... (%u in all)", in->npids);
	fputc('\n', c->out);
}

static void rep_text_incident(struct rep_ctx *c, const struct gctx_incident *in)
{
	char esc[GCTX_ESC_SIZE(sizeof(in->summary))], t0[32], t1[32];
	bool any_site = false;

	rep_text_time(t0, sizeof(t0), c, in->first_ns);
	rep_text_time(t1, sizeof(t1), c, in->last_ns);
	fprintf(c->out, "  #%u %s %s, pid %u, %u process%s, from %s to %s s\n", in->id,
		gctx_severity_name(in->severity), gctx_incident_kind_name(in->kind), in->src_pid,
		in->npids, in->npids == 1 ? "" : "es", t0, t1);
	gctx_format_str(esc, sizeof(esc), in->summary, sizeof(in->summary));
	fprintf(c->out, "     %s\n", esc);
	for (int r = 0; r < GCTX_SITE_MAX; r++) {
		if (!in->where[r].text[0])
			continue;
		/* already escaped by gctx_site_format() */
		fprintf(c->out, "%s %s at %s",
			any_site ? ";" : "     where:", gctx_site_role_name(r), in->where[r].text);
		any_site = true;
	}
	if (any_site)
		fputc('\n', c->out);
	if (in->npids)
		rep_text_members(c, in);
	if (in->nfindings) {
		fprintf(c->out, "     findings:");
		for (__u32 i = 0; i < in->nfindings && i < LIST_MAX; i++)
			fprintf(c->out, " #%u", in->findings[i]);
		if (in->nfindings > LIST_MAX)
			fprintf(c->out, " ... (%u in all)", in->nfindings);
		fputc('\n', c->out);
	}
	gctx_format_str(esc, sizeof(esc), in->fix, sizeof(in->fix));
	fprintf(c->out, "     Fix: %s\n", esc);
}

/* Start-up and churn (seed 002): how long processes take to get the GPU, contexts made. */
static void rep_text_churn(struct rep_ctx *c, const struct gctx_job_summary *s)
{
	if (!s->ctx_created && !s->drv_ctx_created && !s->nstartups)
		return;
	/* both counts, each saying what it counts: a context made by raw ioctls has no API call */
	fprintf(c->out,
		"Job: %llu GPU context%s created at driver level (NVIDIA channel groups, AMD KFD "
		"processes and contexts), %llu destroyed; %llu through the CUDA/HIP API",
		(unsigned long long)s->drv_ctx_created, rep_plural(s->drv_ctx_created),
		(unsigned long long)s->drv_ctx_destroyed, (unsigned long long)s->ctx_created);
	if (s->ctx_created)
		fprintf(c->out, " (%llu destroyed)", (unsigned long long)s->ctx_destroyed);
	if (s->generations > 1)
		fprintf(c->out, ", %u worker generations", s->generations);
	if (s->nstartups)
		fprintf(c->out,
			"; start to first GPU use: median %.3f s, max %.3f s over %u process%s",
			s->startup_median_ns / 1e9, s->startup_max_ns / 1e9, s->nstartups,
			s->nstartups == 1 ? "" : "es");
	fputc('\n', c->out);
}

void rep_text_verdict(struct rep_ctx *c)
{
	const struct gctx_job_summary *s = gctx_analysis__summary(c->an);
	char esc[GCTX_ESC_SIZE(sizeof(s->verdict))];
	__u32 n = gctx_analysis__nincidents(c->an);

	gctx_format_str(esc, sizeof(esc), s->verdict, sizeof(s->verdict));
	fprintf(c->out, "Verdict: %s\n", esc);
	rep_text_churn(c, s);
	fputc('\n', c->out);
	if (!n)
		return;
	fprintf(c->out, "Incidents (%u): %u error%s, %u warning%s\n", n, s->nerrors,
		rep_plural(s->nerrors), s->nwarnings, rep_plural(s->nwarnings));
	for (__u32 i = 0; i < n; i++)
		rep_text_incident(c, gctx_analysis__incident(c->an, i));
	fputc('\n', c->out);
}

/* ---- JSON ---- */

static void key_u64(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	gctx_json__u64(j, v);
}

static void key_str(struct gctx_json *j, const char *k, const char *v)
{
	gctx_json__key(j, k);
	gctx_json__str(j, v);
}

static void key_u32v(struct gctx_json *j, const char *k, const __u32 *v, __u32 n)
{
	gctx_json__key(j, k);
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < n; i++)
		gctx_json__u64(j, v[i]);
	gctx_json__arr_end(j);
}

static void rep_json_incident(struct gctx_json *j, const struct gctx_incident *in)
{
	gctx_json__obj_begin(j);
	key_u64(j, "id", in->id);
	key_str(j, "kind", gctx_incident_kind_name(in->kind));
	key_str(j, "severity", gctx_severity_name(in->severity));
	key_u64(j, "pid", in->src_pid);
	key_u32v(j, "pids", in->pids, in->npids);
	key_u32v(j, "generation", in->pid_gen, in->npids);
	key_u32v(j, "findings", in->findings, in->nfindings);
	key_str(j, "api", in->api[0] ? in->api : NULL);
	gctx_json__key(j, "context");
	if (in->ctx_id)
		gctx_json__u64(j, in->ctx_id);
	else
		gctx_json__null(j);
	gctx_json__key(j, "device");
	if (in->device >= 0)
		gctx_json__s64(j, in->device);
	else
		gctx_json__null(j);
	gctx_json__key(j, "init_ns");
	if (in->init_ns)
		gctx_json__u64(j, in->init_ns);
	else
		gctx_json__null(j);
	key_u64(j, "first_ns", in->first_ns);
	key_u64(j, "last_ns", in->last_ns);
	key_u64(j, "inherited", in->ninherited);
	key_u64(j, "used", in->nused);
	key_u64(j, "used_api", in->napi_used);
	key_u64(j, "used_kernel", in->nkernel_used);
	key_u64(j, "unseen", in->nunseen);
	key_u64(j, "crashed", in->ncrashed);
	key_u64(j, "generations", in->generations);
	key_str(j, "first_use", in->first_use[0] ? in->first_use : NULL);
	key_str(j, "raised", in->raised[0] ? in->raised : NULL);
	key_u64(j, "raised_about_gpu", in->nraised);
	gctx_json__key(j, "where");
	gctx_json__obj_begin(j);
	for (int r = 0; r < GCTX_SITE_MAX; r++) {
		static const char *const keys[GCTX_SITE_MAX] = {"init", "fork", "use"};

		key_str(j, keys[r], in->where[r].text[0] ? in->where[r].text : NULL);
	}
	gctx_json__obj_end(j);
	key_str(j, "summary", in->summary);
	key_str(j, "fix", in->fix);
	gctx_json__obj_end(j);
}

void rep_json_incidents(struct gctx_json *j, const struct gctx_model *m,
			const struct gctx_analysis *an)
{
	const struct gctx_job_summary *s = gctx_analysis__summary(an);

	gctx_json__key(j, "summary");
	gctx_json__obj_begin(j);
	key_str(j, "verdict", s->verdict);
	key_str(j, "worst", s->nincidents ? gctx_severity_name(s->worst) : NULL);
	key_u64(j, "incidents", s->nincidents);
	key_u64(j, "errors", s->nerrors);
	key_u64(j, "warnings", s->nwarnings);
	key_u64(j, "contexts_created", s->ctx_created);
	key_u64(j, "contexts_destroyed", s->ctx_destroyed);
	key_u64(j, "driver_contexts_created", s->drv_ctx_created);
	key_u64(j, "driver_contexts_destroyed", s->drv_ctx_destroyed);
	key_u64(j, "worker_generations", s->generations);
	gctx_json__key(j, "startup_median_ns");
	if (s->nstartups)
		gctx_json__u64(j, s->startup_median_ns);
	else
		gctx_json__null(j);
	gctx_json__key(j, "startup_max_ns");
	if (s->nstartups)
		gctx_json__u64(j, s->startup_max_ns);
	else
		gctx_json__null(j);
	key_u64(j, "procaddr_not_found", gctx_model__procaddr_not_found(m));
	gctx_json__key(j, "complete");
	gctx_json__bool(j, !s->incomplete);
	key_str(j, "coverage", s->coverage[0] ? s->coverage : NULL);
	gctx_json__obj_end(j);

	gctx_json__key(j, "incidents");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < gctx_analysis__nincidents(an); i++)
		rep_json_incident(j, gctx_analysis__incident(an, i));
	gctx_json__arr_end(j);
}
