// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpuctx report: read a trace file into the model and print the text or JSON report. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "model/model.h"
#include "output/report/report.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

int cli_load_trace(const char *path, struct gctx_model **out, struct gctx_trace_meta *meta)
{
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *data;
	__u32 type, len;
	__u32 malformed = 0;
	char err[512];
	int ret;

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	*meta = *gctx_trace_reader__meta(r);
	m = gctx_model__new();
	if (!m) {
		fprintf(stderr, "gpuctx: out of memory\n");
		gctx_trace_reader__free(r);
		return 1;
	}
	while ((ret = gctx_trace_reader__next(r, &type, &data, &len)) == 1) {
		if (gctx_model__feed(m, type, data, len) == -EINVAL && !malformed++)
			fprintf(stderr,
				"gpuctx: warning: %s: malformed record (type %u, %u bytes) "
				"at offset %llu skipped\n",
				path, type, len, (unsigned long long)gctx_trace_reader__offset(r));
	}
	gctx_trace_reader__describe_skips(r, err, sizeof(err));
	if (err[0])
		fprintf(stderr, "gpuctx: warning: %s\n", err);
	if (ret < 0 || (!gctx_model__total_events(m) && (err[0] || malformed))) {
		/* only when nothing at all could be read is the trace refused */
		if (ret < 0)
			fprintf(stderr, "gpuctx: %s\n", gctx_trace_reader__error(r));
		else
			fprintf(stderr, "gpuctx: %s: no readable record\n", path);
		gctx_model__free(m);
		gctx_trace_reader__free(r);
		return 1;
	}
	if (malformed > 1)
		fprintf(stderr, "gpuctx: warning: %s: %u malformed records skipped\n", path,
			malformed);
	if (gctx_trace_reader__truncated(r))
		fprintf(stderr,
			"gpuctx: warning: %s ends inside a record (recording killed?): "
			"reporting the %llu complete records before it\n",
			path, (unsigned long long)gctx_model__total_events(m));
	gctx_model__finish(m);
	gctx_trace_reader__free(r);
	*out = m;
	return 0;
}

#define REPORT_USAGE                                                                               \
	"Usage: gpuctx report [--json] [--fail-on SEVERITY] [--junit FILE] TRACE...\n"             \
	"       gpuctx report --list [--json] [--fail-on SEVERITY] TRACE|DIR...\n"

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},	     {"fail-on", required_argument, NULL, 'F'},
	    {"junit", required_argument, NULL, 'J'}, {"list", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},	     {},
	};
	struct gctx_trace_meta meta;
	struct gctx_model *m = NULL;
	struct cli_job job;
	bool json = false, list = false;
	const char *junit = NULL;
	int c, ret, fail_on = GCTX_FAIL_NEVER, vret;
	bool gate = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jlh", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			list = true;
			break;
		case 'j':
			json = true;
			break;
		case 'F':
			fail_on = cli_parse_fail_on(optarg);
			if (fail_on < 0) {
				fprintf(stderr,
					"gpuctx: bad --fail-on '%s': want error, warning or "
					"never\n",
					optarg);
				return 2;
			}
			gate = true;
			break;
		case 'J':
			junit = optarg;
			gate = true;
			break;
		case 'h':
			printf(
			    REPORT_USAGE
			    "\n"
			    "  -j, --json              one JSON document instead of text\n"
			    "      --fail-on SEVERITY  exit %d when an incident is at or above "
			    "SEVERITY\n"
			    "                          (error, warning, never; default never)\n"
			    "      --junit FILE        also write JUnit XML, one testcase per "
			    "incident\n"
			    "  -l, --list              one line per trace, oldest first: when, "
			    "host, "
			    "job,\n"
			    "                          what happened, which process (a directory: "
			    "its\n"
			    "                          .gctx files, e.g. the agent's spool)\n"
			    "\n"
			    "Several traces (or one from gpuctx merge) of a job's hosts give "
			    "one report:\n"
			    "the verdict over the job, each incident with its host, then each "
			    "host's.\n",
			    GCTX_EXIT_INCIDENT);
			return 0;
		default:
			fprintf(stderr, REPORT_USAGE);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "gpuctx: report needs a trace file\n");
		return 2;
	}
	if (list && junit) {
		fprintf(stderr, "gpuctx: --junit takes the trace of one host, not --list\n");
		return 2;
	}
	if (list)
		return cli_report_list(argv + optind, argc - optind, json, fail_on);
	if (cli_job_load(argv + optind, argc - optind, &job))
		return 1;
	if (job.n > 1 && junit) {
		fprintf(stderr, "gpuctx: --junit takes the trace of one host\n");
		cli_job_free(&job);
		return 2;
	}
	m = job.models[0];
	meta = job.files[0].meta;
	if (job.n > 1)
		ret = cli_job_report(&job, json, stdout);
	else
		ret = json ? gctx_report__json(stdout, m, &meta)
			   : gctx_report__text(stdout, m, &meta);
	if (fflush(stdout) || ret) {
		fprintf(stderr, "gpuctx: writing the report: %s\n", strerror(ret ? -ret : errno));
		ret = 1;
	}
	if (!gate)
		vret = 0;
	else if (job.n > 1)
		vret = cli_job_verdict(&job, fail_on, NULL, "");
	else
		vret = cli_verdict(m, &meta, fail_on, junit, NULL, "");
	cli_job_free(&job);
	return ret ? 1 : vret;
}
