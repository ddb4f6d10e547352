// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpuctx report: read a trace file into the model and print the text or JSON report. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/outfile.h"
#include "model/model.h"
#include "output/report/report.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

#define REPORT_USAGE                                                                               \
	"Usage: gpuctx report [--json] [--fail-on SEVERITY] [--junit FILE] [--html FILE] "         \
	"TRACE...\n"                                                                               \
	"       gpuctx report --list [--json] [--fail-on SEVERITY] TRACE|DIR...\n"

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"fail-on", required_argument, NULL, 'F'},
	    {"junit", required_argument, NULL, 'J'},
	    {"list", no_argument, NULL, 'l'},
	    {"html", required_argument, NULL, 'H'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	struct gctx_trace_meta meta;
	struct gctx_model *m = NULL;
	struct cli_job job;
	bool json = false, list = false;
	const char *junit = NULL, *html = NULL;
	int c, ret, fail_on = GCTX_FAIL_NEVER, vret;
	bool gate = false, html_failed = false;
	const char *t;

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
		case 'H':
			html = optarg;
			if (!html[0]) {
				fprintf(stderr, "gpuctx: --html needs a file\n");
				return 2;
			}
			/* refused before the trace is read, as check does */
			if ((t = gctx_outfile_refusal(html))) {
				fprintf(stderr, "gpuctx: refusing to write %s: %s\n", html, t);
				return 2;
			}
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
			    "      --html FILE         also write one self-contained HTML page: "
			    "verdict,\n"
			    "                          incidents, process tree and timeline "
			    "(several\n"
			    "                          traces: the hosts side by side)\n"
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
	if (list && (junit || html)) {
		fprintf(stderr, "gpuctx: --%s takes traces, not --list\n",
			junit ? "junit" : "html");
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
	/* the page first: it is kept even when stdout goes to a pager closed early */
	if (html && cli_job_html(&job, html))
		html_failed = true;
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
	return ret || html_failed ? 1 : vret;
}
