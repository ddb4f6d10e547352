// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The verdict and each incident, as the text report gives them (the same analysis, the same
 * sentences): what happened, the fix, where in the code (Python and native sites), who, and
 * the full stacks folded under <details>.
 */
#include <stdlib.h>
#include <string.h>

#include "output/html/html_priv.h"
#include "output/report/print.h"
#include "output/report/sites.h"

static const char *const role_text[GCTX_STACK_ROLE_MAX] = {
    [GCTX_STACK_INIT] = "GPU initialised",
    [GCTX_STACK_FORK] = "fork",
    [GCTX_STACK_USE] = "first use",
    [GCTX_STACK_CRASH] = "crash",
};

static const char *sev_class(enum gctx_severity s)
{
	return s >= GCTX_SEV_ERROR ? "error" : s == GCTX_SEV_WARNING ? "warning" : "info";
}

static void stack(struct html_host_ctx *c, const struct gctx_stack *st)
{
	char fr[512];
	const char *role = st->role < GCTX_STACK_ROLE_MAX ? role_text[st->role] : NULL;

	fprintf(c->out, "<details class=\"stack\"><summary>%s in pid %u (%u frame%s)",
		role ? role : gctx_stack_role_name(st->role), st->pid, st->nframes,
		st->nframes == 1 ? "" : "s");
	if (st->site >= 0 && (__u32)st->site < st->nframes) {
		gctx_frame_format(&st->frames[st->site], fr, sizeof(fr));
		fputs(": <code>", c->out);
		gctx_html_str(c->out, fr);
		fputs("</code>", c->out);
	}
	fputs("</summary><pre>", c->out);
	for (__u32 k = 0; k < st->nframes; k++) {
		gctx_frame_format(&st->frames[k], fr, sizeof(fr));
		fprintf(c->out, "%s%2u ", (int)k == st->site ? "&gt;" : " ", k);
		gctx_html_str(c->out, fr);
		fputc('\n', c->out);
	}
	if (st->note[0]) {
		fputs("note: ", c->out);
		gctx_html_esc(c->out, st->note, sizeof(st->note));
		fputc('\n', c->out);
	}
	fputs("</pre></details>\n", c->out);
}

/* The stacks of the incident's findings, each once, at most HTML_MAX_STACKS. */
static void stacks(struct html_host_ctx *c, const struct gctx_incident *in)
{
	const struct gctx_stack *seen[HTML_MAX_STACKS];
	__u32 n = 0;

	for (__u32 i = 0; i < in->nfindings && n < HTML_MAX_STACKS; i++) {
		const struct gctx_finding *f = gctx_model__finding(c->m, in->findings[i] - 1);
		const struct gctx_stack *st[GCTX_STACK_ROLE_MAX];

		if (!f || f->id != in->findings[i])
			continue;
		gctx_finding_stacks(c->m, f, st);
		for (__u32 r = 1; r < GCTX_STACK_ROLE_MAX && n < HTML_MAX_STACKS; r++) {
			__u32 k;

			if (!st[r])
				continue;
			for (k = 0; k < n && seen[k] != st[r]; k++)
				;
			if (k < n)
				continue;
			if (!n)
				fputs("<details class=\"stacks\"><summary>Stacks</summary>\n",
				      c->out);
			seen[n++] = st[r];
			stack(c, st[r]);
		}
	}
	if (n)
		fputs("</details>\n", c->out);
}

static void members(struct html_host_ctx *c, const struct gctx_incident *in)
{
	__u32 gen = 0;
	char sig[32];

	fputs("<dt>Processes</dt><dd class=\"pids\">", c->out);
	for (__u32 i = 0; i < in->npids && i < HTML_MAX_PIDS; i++) {
		if (in->generations > 1 && in->pid_gen[i] != gen) {
			gen = in->pid_gen[i];
			fprintf(c->out, "%sgen %u:", i ? "; " : "", gen);
		}
		fprintf(c->out, " %u", in->pids[i]);
	}
	if (in->npids > HTML_MAX_PIDS)
		fprintf(c->out, " ... (%u in all)", in->npids);
	if (in->ncrashed) {
		gctx_format_signal(sig, sizeof(sig), in->crash_sig);
		fprintf(c->out, "<br>%u crashed, the first: pid %u (%s)", in->ncrashed,
			in->crash_pid, sig);
	}
	fputs("</dd>\n", c->out);
}

static void incident(struct html_host_ctx *c, const struct gctx_incident *in)
{
	char t0[32], t1[32];
	bool any = false;

	html_time(t0, sizeof(t0), c, in->first_ns);
	html_time(t1, sizeof(t1), c, in->last_ns);
	fprintf(c->out,
		"<article class=\"incident %s\" id=\"h%u-inc%u\" data-incident=\"%u\">\n"
		"<h3>#%u %s %s: %s, pid %u, %u process%s, from %s to %s s</h3>\n"
		"<p class=\"summary\">",
		sev_class(in->severity), c->host, in->id, in->id, in->id,
		gctx_severity_name(in->severity), gctx_incident_kind_name(in->kind),
		gctx_incident_title(in->kind), in->src_pid, in->npids, in->npids == 1 ? "" : "es",
		t0, t1);
	gctx_html_esc(c->out, in->summary, sizeof(in->summary));
	fputs("</p>\n<dl>\n<dt>Fix</dt><dd class=\"fix\">", c->out);
	gctx_html_esc(c->out, in->fix, sizeof(in->fix));
	fputs("</dd>\n", c->out);
	for (int r = 0; r < GCTX_SITE_MAX; r++) {
		if (!in->where[r].text[0])
			continue;
		fprintf(c->out, "%s<li>%s at <code>",
			any ? "" : "<dt>Where</dt><dd><ul class=\"where\">",
			gctx_site_role_name(r));
		gctx_html_esc(c->out, in->where[r].text, sizeof(in->where[r].text));
		fputs("</code></li>", c->out);
		any = true;
	}
	if (any)
		fputs("</ul></dd>\n", c->out);
	if (in->first_use[0]) {
		fputs("<dt>First use</dt><dd><code>", c->out);
		gctx_html_esc(c->out, in->first_use, sizeof(in->first_use));
		fputs("</code></dd>\n", c->out);
	}
	if (in->npids)
		members(c, in);
	if (in->nfindings) {
		fputs("<dt>Findings</dt><dd>", c->out);
		for (__u32 i = 0; i < in->nfindings && i < HTML_MAX_PIDS; i++)
			fprintf(c->out, "%s#%u", i ? " " : "", in->findings[i]);
		if (in->nfindings > HTML_MAX_PIDS)
			fprintf(c->out, " ... (%u in all)", in->nfindings);
		fputs("</dd>\n", c->out);
	}
	fputs("</dl>\n", c->out);
	stacks(c, in);
	fputs("</article>\n", c->out);
}

/* Incidents past the first ones: a line each (the text report and the JSON have them all). */
static void more(struct html_host_ctx *c, __u32 n)
{
	fprintf(c->out, "<details class=\"more\"><summary>%u more incidents</summary><ul>\n",
		n - HTML_MAX_INCIDENTS);
	for (__u32 i = HTML_MAX_INCIDENTS; i < n && i < HTML_MAX_INCIDENTS + HTML_MAX_INC_LINES;
	     i++) {
		const struct gctx_incident *in = gctx_analysis__incident(c->an, i);

		fprintf(c->out, "<li>#%u %s %s, pid %u: ", in->id, gctx_severity_name(in->severity),
			gctx_incident_kind_name(in->kind), in->src_pid);
		gctx_html_esc(c->out, in->summary, sizeof(in->summary));
		fputs("</li>\n", c->out);
	}
	if (n > HTML_MAX_INCIDENTS + HTML_MAX_INC_LINES)
		fprintf(c->out, "<li>... %u more: gpuctx report TRACE has them all</li>\n",
			n - HTML_MAX_INCIDENTS - HTML_MAX_INC_LINES);
	fputs("</ul></details>\n", c->out);
}

void html_verdict(struct html_host_ctx *c)
{
	const struct gctx_job_summary *s = gctx_analysis__summary(c->an);
	__u32 n = gctx_analysis__nincidents(c->an);

	fprintf(c->out, "<section class=\"verdict %s\" id=\"h%u-verdict\"><b>Verdict:</b> ",
		n ? sev_class(s->worst) : "clean", c->host);
	gctx_html_esc(c->out, s->verdict, sizeof(s->verdict));
	if (s->coverage[0]) {
		fputs("<p class=\"coverage\">", c->out);
		gctx_html_esc(c->out, s->coverage, sizeof(s->coverage));
		fputs("</p>", c->out);
	}
	fputs("</section>\n", c->out);
	if (s->ctx_created || s->drv_ctx_created || s->nstartups) {
		fprintf(c->out,
			"<p class=\"churn\">%llu GPU contexts created at driver level, %llu "
			"destroyed; %llu through the CUDA/HIP API",
			(unsigned long long)s->drv_ctx_created,
			(unsigned long long)s->drv_ctx_destroyed,
			(unsigned long long)s->ctx_created);
		if (s->nstartups)
			fprintf(c->out,
				"; start to first GPU use: median %.3f s, max %.3f s over %u "
				"processes",
				s->startup_median_ns / 1e9, s->startup_max_ns / 1e9, s->nstartups);
		fputs("</p>\n", c->out);
	}
	if (!n)
		return;
	fprintf(c->out, "<h2>Incidents (%u): %u error%s, %u warning%s</h2>\n", n, s->nerrors,
		s->nerrors == 1 ? "" : "s", s->nwarnings, s->nwarnings == 1 ? "" : "s");
	for (__u32 i = 0; i < n && i < HTML_MAX_INCIDENTS; i++)
		incident(c, gctx_analysis__incident(c->an, i));
	if (n > HTML_MAX_INCIDENTS)
		more(c, n);
}
