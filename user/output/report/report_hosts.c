// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report over several hosts (report.h, trace/hosts.h): the job line, how close the hosts'
 * clocks are and which look off, the verdict over the job, every incident named with its host,
 * then each host's own report (text) or object (JSON).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "model/analysis.h"
#include "model/jobattr.h"
#include "output/report/print.h"
#include "output/report/report_priv.h"
#include "trace/hosts.h"

#define JOB_LABELS 4 /* distinct jobs named on the job line */

struct hosts_ctx {
	const struct gctx_report_host *h;
	__u32 n;
	struct gctx_analysis **an;
	__u32 nprocs, nincidents, nerrors, nwarnings, nhosts_bad;
	char jobs[JOB_LABELS][160];
	__u32 njobs, more_jobs;
	__u64 max_error_us; /* ~0ull: unknown */
};

static void add_job(struct hosts_ctx *c, const struct gctx_proc *p)
{
	struct gctx_job_attr a;
	char label[160];
	__u32 k;

	if (gctx_job_attr_parse(p->cgroup, &a) == GCTX_JOB_NONE)
		return;
	a.task[0] = '\0';
	gctx_job_attr_format(&a, label, sizeof(label));
	for (k = 0; k < c->njobs && strcmp(c->jobs[k], label); k++)
		;
	if (k < c->njobs)
		return;
	if (c->njobs < JOB_LABELS)
		snprintf(c->jobs[c->njobs++], sizeof(c->jobs[0]), "%s", label);
	else
		c->more_jobs++;
}

static int hosts_ctx_init(struct hosts_ctx *c, const struct gctx_report_host *h, __u32 n)
{
	memset(c, 0, sizeof(*c));
	c->h = h;
	c->n = n;
	c->an = calloc(n ? n : 1, sizeof(*c->an));
	if (!c->an)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_job_summary *s;

		c->an[i] = gctx_analysis__new(h[i].m, h[i].meta->start_mono_ns);
		if (!c->an[i])
			return -ENOMEM;
		s = gctx_analysis__summary(c->an[i]);
		c->nincidents += s->nincidents;
		c->nerrors += s->nerrors;
		c->nwarnings += s->nwarnings;
		c->nhosts_bad += s->nincidents > 0;
		c->nprocs += gctx_model__nprocs(h[i].m);
		for (__u32 k = 0; k < gctx_model__nprocs(h[i].m); k++)
			add_job(c, gctx_model__proc(h[i].m, k));
		if (h[i].clock->error_us == ~0ull || c->max_error_us == ~0ull)
			c->max_error_us = ~0ull;
		else if (h[i].clock->error_us > c->max_error_us)
			c->max_error_us = h[i].clock->error_us;
	}
	return 0;
}

static void hosts_ctx_free(struct hosts_ctx *c)
{
	for (__u32 i = 0; c->an && i < c->n; i++)
		gctx_analysis__free(c->an[i]);
	free(c->an);
}

/* "FAIL: 2 error incidents on 1 of 3 hosts (b)", "OK: no incident on 3 hosts" */
static void job_verdict(const struct hosts_ctx *c, char *buf, size_t len)
{
	size_t off;

	if (!c->nincidents) {
		snprintf(buf, len, "OK: no incident on %u hosts", c->n);
		return;
	}
	off = snprintf(buf, len, "%s: %u incident%s (%u error%s, %u warning%s) on %u of %u hosts (",
		       c->nerrors ? "FAIL" : "WARN", c->nincidents, rep_plural(c->nincidents),
		       c->nerrors, rep_plural(c->nerrors), c->nwarnings, rep_plural(c->nwarnings),
		       c->nhosts_bad, c->n);
	for (__u32 i = 0, k = 0; i < c->n && off < len; i++)
		if (gctx_analysis__summary(c->an[i])->nincidents)
			off +=
			    snprintf(buf + off, len - off, "%s%s", k++ ? ", " : "", c->h[i].label);
	if (off < len)
		snprintf(buf + off, len - off, ")");
}

static void us_text(char *buf, size_t len, __u64 us)
{
	if (us >= 1000000)
		snprintf(buf, len, "%.1f s", us / 1e6);
	else if (us >= 1000)
		snprintf(buf, len, "%.1f ms", us / 1e3);
	else
		snprintf(buf, len, "%llu us", (unsigned long long)us);
}

/* Why a host's clock looks off, "" when it does not. */
static const char *clock_warning(const struct gctx_host_clock *k)
{
	if (k->flags & GCTX_CLK_APART)
		return "its recording does not overlap any other host's: its clock looks off, or "
		       "the trace is not of this job";
	if (k->flags & GCTX_CLK_UNSYNC)
		return "its clock is not synchronised (NTP): its events may be off by any amount";
	if (k->flags & GCTX_CLK_LARGE_ERROR)
		return "NTP's maximum error of its clock is over 100 ms";
	return "";
}

static void text_job(FILE *out, const struct hosts_ctx *c)
{
	char t[48], verdict[512];

	fprintf(out, "gpuctx report: %u hosts\n  job:       %u hosts (", c->n, c->n);
	for (__u32 i = 0; i < c->n; i++)
		fprintf(out, "%s%s", i ? ", " : "", c->h[i].label);
	fprintf(out, "), %u processes", c->nprocs);
	for (__u32 k = 0; k < c->njobs; k++)
		fprintf(out, "%s%s", k ? ", " : "; ", c->jobs[k]);
	if (c->more_jobs)
		fprintf(out, " and %u more jobs", c->more_jobs);
	fprintf(out, "\n  clocks:    aligned by each host's wall clock at its start; ");
	if (c->max_error_us == ~0ull) {
		fprintf(out, "how closely is unknown (a host's clock has no NTP error bound)\n");
	} else {
		us_text(t, sizeof(t), c->max_error_us);
		fprintf(out, "hosts agree within %s (NTP's maximum errors)\n", t);
	}
	for (__u32 i = 0; i < c->n; i++) {
		const struct gctx_host_clock *k = c->h[i].clock;

		if (k->flags & GCTX_CLK_REFERENCE)
			snprintf(t, sizeof(t), "its clock is the reference");
		else if (k->error_us == ~0ull)
			snprintf(t, sizeof(t), "its clock's error unknown");
		else
			us_text(t + snprintf(t, sizeof(t), "its clock within "), sizeof(t) - 17,
				k->error_us);
		fprintf(out, "             %s: started %+.3f s into the job (%s)\n", c->h[i].label,
			((double)k->start_ns - (double)c->h[0].clock->start_ns) / 1e9, t);
	}
	for (__u32 i = 0; i < c->n; i++)
		if (clock_warning(c->h[i].clock)[0])
			fprintf(out, "  WARNING: host %s: %s\n", c->h[i].label,
				clock_warning(c->h[i].clock));
	job_verdict(c, verdict, sizeof(verdict));
	fprintf(out, "\nVerdict over the job: %s\n", verdict);
	for (__u32 i = 0; i < c->n; i++) {
		for (__u32 k = 0; k < gctx_analysis__nincidents(c->an[i]); k++) {
			const struct gctx_incident *in = gctx_analysis__incident(c->an[i], k);
			char esc[GCTX_ESC_SIZE(sizeof(in->summary))];

			gctx_format_str(esc, sizeof(esc), in->summary, sizeof(in->summary));
			fprintf(out, "  host %s: #%u %s %s, pid %u: %s\n", c->h[i].label, in->id,
				gctx_severity_name(in->severity), gctx_incident_kind_name(in->kind),
				in->src_pid, esc);
		}
	}
}

int gctx_report__hosts_text(FILE *out, const struct gctx_report_host *h, __u32 n)
{
	struct hosts_ctx c;
	int err;

	if (!out || !h || !n)
		return -EINVAL;
	err = hosts_ctx_init(&c, h, n);
	if (!err) {
		text_job(out, &c);
		for (__u32 i = 0; i < n && !err; i++) {
			fprintf(out, "\n==== host %s (%s) ====\n", h[i].label, h[i].source);
			err = gctx_report__text(out, h[i].m, h[i].meta);
		}
	}
	hosts_ctx_free(&c);
	return err ? err : rep_finish(out);
}

static void json_u64(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	gctx_json__u64(j, v);
}

static void json_clock(struct gctx_json *j, const struct gctx_host_clock *k)
{
	gctx_json__key(j, "clock");
	gctx_json__obj_begin(j);
	gctx_json__key(j, "offset_ns");
	gctx_json__s64(j, k->offset_ns);
	json_u64(j, "start_ns", k->start_ns);
	json_u64(j, "end_ns", k->end_ns);
	gctx_json__key(j, "error_us");
	if (k->error_us == ~0ull)
		gctx_json__null(j);
	else
		gctx_json__u64(j, k->error_us);
	gctx_json__key(j, "reference");
	gctx_json__bool(j, k->flags & GCTX_CLK_REFERENCE);
	gctx_json__key(j, "unsynchronised");
	gctx_json__bool(j, k->flags & GCTX_CLK_UNSYNC);
	gctx_json__key(j, "looks_off");
	gctx_json__bool(j, k->flags & (GCTX_CLK_APART | GCTX_CLK_UNSYNC | GCTX_CLK_LARGE_ERROR));
	gctx_json__key(j, "warning");
	gctx_json__str(j, clock_warning(k)[0] ? clock_warning(k) : NULL);
	gctx_json__obj_end(j);
}

static void json_job(struct gctx_json *j, const struct hosts_ctx *c)
{
	char verdict[512];

	gctx_json__key(j, "job");
	gctx_json__obj_begin(j);
	json_u64(j, "hosts", c->n);
	json_u64(j, "processes", c->nprocs);
	gctx_json__key(j, "jobs");
	gctx_json__arr_begin(j);
	for (__u32 k = 0; k < c->njobs; k++)
		gctx_json__str(j, c->jobs[k]);
	gctx_json__arr_end(j);
	job_verdict(c, verdict, sizeof(verdict));
	gctx_json__key(j, "verdict");
	gctx_json__str(j, verdict);
	json_u64(j, "incidents", c->nincidents);
	json_u64(j, "errors", c->nerrors);
	json_u64(j, "warnings", c->nwarnings);
	gctx_json__key(j, "clock_error_us");
	if (c->max_error_us == ~0ull)
		gctx_json__null(j);
	else
		gctx_json__u64(j, c->max_error_us);
	gctx_json__key(j, "incident_hosts");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < c->n; i++)
		for (__u32 k = 0; k < gctx_analysis__nincidents(c->an[i]); k++) {
			const struct gctx_incident *in = gctx_analysis__incident(c->an[i], k);

			gctx_json__obj_begin(j);
			gctx_json__key(j, "host");
			gctx_json__str(j, c->h[i].label);
			json_u64(j, "id", in->id);
			gctx_json__key(j, "severity");
			gctx_json__str(j, gctx_severity_name(in->severity));
			gctx_json__key(j, "kind");
			gctx_json__str(j, gctx_incident_kind_name(in->kind));
			json_u64(j, "pid", in->src_pid);
			gctx_json__key(j, "summary");
			gctx_json__strn(j, in->summary, strnlen(in->summary, sizeof(in->summary)));
			gctx_json__obj_end(j);
		}
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
}

int gctx_report__hosts_json(FILE *out, const struct gctx_report_host *h, __u32 n)
{
	struct gctx_json *j;
	struct hosts_ctx c;
	int err;

	if (!out || !h || !n)
		return -EINVAL;
	err = hosts_ctx_init(&c, h, n);
	j = err ? NULL : gctx_json__new(out, true);
	if (!j) {
		hosts_ctx_free(&c);
		return -ENOMEM;
	}
	gctx_json__obj_begin(j);
	json_job(j, &c);
	gctx_json__key(j, "hosts");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < n && !err; i++) {
		gctx_json__obj_begin(j);
		gctx_json__key(j, "host");
		gctx_json__str(j, h[i].label);
		gctx_json__key(j, "source");
		gctx_json__str(j, h[i].source);
		json_clock(j, h[i].clock);
		gctx_json__key(j, "report");
		err = gctx_report__json_to(j, h[i].m, h[i].meta);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
	gctx_json__free(j);
	hosts_ctx_free(&c);
	if (err)
		return err;
	fputc('\n', out);
	return rep_finish(out);
}
