// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Several hosts on the command line: report, check and export given several traces or a
 * merged one (trace/hosts.h) load one model per host and align their clocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/model.h"
#include "output/html/html.h"
#include "output/timeline/export.h"
#include "output/report/report.h"
#include "trace/hosts.h"

void cli_job_free(struct cli_job *job)
{
	for (__u32 i = 0; job->models && i < job->n; i++)
		gctx_model__free(job->models[i]);
	free(job->models);
	free(job->clocks);
	free(job->metas);
	gctx_hosts__free(job->files, job->n);
	memset(job, 0, sizeof(*job));
}

int cli_job_open(char *const *paths, int npaths, struct cli_job *job)
{
	char err[768];

	memset(job, 0, sizeof(*job));
	if (gctx_hosts__open(paths, npaths, &job->files, &job->n, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	job->clocks = calloc(job->n, sizeof(*job->clocks));
	job->metas = calloc(job->n, sizeof(*job->metas));
	if (!job->clocks || !job->metas) {
		fprintf(stderr, "gpuctx: out of memory\n");
		cli_job_free(job);
		return 1;
	}
	for (__u32 i = 0; i < job->n; i++)
		job->metas[i] = &job->files[i].meta;
	job->ref = gctx_hosts__align(job->metas, NULL, job->n, job->clocks);
	return 0;
}

/* Traces of one boot of one host are not a job's hosts: most likely an agent's dumps given
 * together (every file of /var/lib/gpuctx). Said once, on stderr; the report goes on. */
static void same_boot_note(const struct cli_job *job)
{
	for (__u32 i = 0; i < job->n; i++) {
		for (__u32 k = i + 1; k < job->n; k++) {
			const struct gctx_trace_meta *a = &job->files[i].meta,
						     *b = &job->files[k].meta;

			if (strcmp(a->hostname, b->hostname) || !gctx_hosts__same_boot(a, b))
				continue;
			fprintf(stderr,
				"gpuctx: note: %s and %s were recorded on one boot of one host "
				"(%s): they are read as one job's hosts; gpuctx report --list "
				"lists separate traces (an agent's dumps) one per line\n",
				job->files[i].source, job->files[k].source, job->files[i].label);
			return;
		}
	}
}

int cli_job_load(char *const *paths, int npaths, struct cli_job *job)
{
	__u64 *ends;

	if (cli_job_open(paths, npaths, job))
		return 1;
	job->models = calloc(job->n, sizeof(*job->models));
	ends = calloc(job->n, sizeof(*ends));
	if (!job->models || !ends) {
		fprintf(stderr, "gpuctx: out of memory\n");
		free(ends);
		cli_job_free(job);
		return 1;
	}
	for (__u32 i = 0; i < job->n; i++) {
		struct gctx_trace_meta meta;
		const struct gctx_rec_end *end;

		if (cli_load_trace(job->files[i].path, &job->models[i], &meta)) {
			if (job->files[i].fd >= 0)
				fprintf(stderr, "gpuctx: (host %s of %s)\n", job->files[i].label,
					job->files[i].source);
			free(ends);
			cli_job_free(job);
			return 1;
		}
		job->files[i].meta = meta; /* a pipe's is known only now */
		end = gctx_model__end(job->models[i]);
		ends[i] = end ? end->end_ns : 0;
	}
	/* again, now that the ends are known: a host whose recording is apart from the others' */
	job->ref = gctx_hosts__align(job->metas, ends, job->n, job->clocks);
	free(ends);
	same_boot_note(job);
	return 0;
}

int cli_job_report(const struct cli_job *job, bool json, FILE *out)
{
	struct gctx_report_host *h = calloc(job->n, sizeof(*h));
	int ret;

	if (!h)
		return -12;
	for (__u32 i = 0; i < job->n; i++) {
		h[i].m = job->models[i];
		h[i].meta = &job->files[i].meta;
		h[i].clock = &job->clocks[i];
		h[i].label = job->files[i].label;
		h[i].source = job->files[i].source;
	}
	ret = json ? gctx_report__hosts_json(out, h, job->n)
		   : gctx_report__hosts_text(out, h, job->n);
	free(h);
	return ret;
}

int cli_job_verdict(const struct cli_job *job, int fail_on, FILE *out, const char *prefix)
{
	char pre[160];
	int ret = 0;

	for (__u32 i = 0; i < job->n; i++) {
		int v;

		snprintf(pre, sizeof(pre), "%shost %s: ", prefix, job->files[i].label);
		v = cli_verdict(job->models[i], &job->files[i].meta, fail_on, NULL, out, pre);
		if (v == GCTX_EXIT_INCIDENT || (v && !ret))
			ret = v;
	}
	return ret;
}

int cli_job_export(const struct cli_job *job, const char *out, int format, char *err, size_t errlen,
		   struct gctx_export_stats *st)
{
	struct gctx_export_host *h = calloc(job->n, sizeof(*h));
	int ret;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (__u32 i = 0; i < job->n; i++) {
		h[i].path = job->files[i].path;
		h[i].machine = i;
		h[i].name = job->files[i].label;
		h[i].boot_shift_ns = gctx_hosts__boot_shift(
		    &job->files[i].meta, &job->files[job->ref].meta, job->clocks[i].offset_ns);
	}
	ret = gctx_export_hosts(h, job->n, out, format, err, errlen, st);
	free(h);
	return ret;
}

int cli_job_html(const struct cli_job *job, const char *path)
{
	struct gctx_html_host *h = calloc(job->n, sizeof(*h));
	char err[512];
	int ret;

	if (!h) {
		fprintf(stderr, "gpuctx: out of memory\n");
		return 1;
	}
	for (__u32 i = 0; i < job->n; i++) {
		h[i].m = job->models[i];
		h[i].meta = job->metas[i];
		h[i].clock = job->n > 1 ? &job->clocks[i] : NULL;
		h[i].label = job->files[i].label;
		h[i].source = job->files[i].source;
	}
	ret = gctx_html__write_file(path, h, job->n, err, sizeof(err));
	if (ret)
		fprintf(stderr, "gpuctx: %s\n", err);
	free(h);
	return ret ? 1 : 0;
}
