// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The verdict of a finished trace, printed and judged alike by record (its last lines),
 * report --fail-on and check, and for each host of a job: one home, so that no command calls
 * into another command's file for it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "model/analysis.h"
#include "model/model.h"
#include "output/report/junit.h"
#include "trace/tracefile.h"

int cli_parse_fail_on(const char *arg)
{
	if (!strcmp(arg, "error"))
		return GCTX_SEV_ERROR;
	if (!strcmp(arg, "warning"))
		return GCTX_SEV_WARNING;
	if (!strcmp(arg, "never"))
		return GCTX_FAIL_NEVER;
	return -1;
}

/* "  Where: GPU initialised at train.py:42 in main <- ...; forked at ...; first used at ..." */
static void print_where(FILE *out, const struct gctx_incident *in)
{
	bool any = false;

	for (int r = 0; r < GCTX_SITE_MAX; r++) {
		if (!in->where[r].text[0])
			continue;
		fprintf(out, "%s%s at %s", any ? "; " : "  Where: ", gctx_site_role_name(r),
			in->where[r].text);
		any = true;
	}
	if (any)
		fputc('\n', out);
}

int cli_verdict(const struct gctx_model *m, const struct gctx_trace_meta *meta, int fail_on,
		const char *junit, FILE *out, const char *prefix)
{
	struct gctx_analysis *an = gctx_analysis__new(m, meta ? meta->start_mono_ns : 0);
	__u32 n, nfail;
	char err[512];
	int ret = 0;

	if (!an) {
		fprintf(stderr, "gpuctx: out of memory\n");
		return 1;
	}
	n = gctx_analysis__nincidents(an);
	nfail = fail_on <= GCTX_SEV_ERROR ? gctx_analysis__count_at(an, fail_on) : 0;
	if (out) {
		fprintf(out, "%s%s\n", prefix, gctx_analysis__summary(an)->verdict);
		for (__u32 i = 0; i < n; i++) {
			const struct gctx_incident *in = gctx_analysis__incident(an, i);

			if (i)
				fprintf(out, "  #%u %s: %s\n", in->id,
					gctx_severity_name(in->severity), in->summary);
			print_where(out, in);
			if (n > 1)
				fprintf(out, "  Fix (#%u): %s\n", in->id, in->fix);
			else
				fprintf(out, "  Fix: %s\n", in->fix);
		}
	}
	if (junit && gctx_junit__write_file(junit, an, fail_on, "gpuctx check", err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		ret = 1;
	}
	if (nfail)
		ret = GCTX_EXIT_INCIDENT;
	gctx_analysis__free(an);
	return ret;
}
