// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpuctx export: write a trace file as a Perfetto or Chrome timeline. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "output/timeline/export.h"
#include "trace/hosts.h"

static const char export_usage[] = "Usage: gpuctx export [-q] -f perfetto|chrome -o OUT FILE...\n";

static void export_help(void)
{
	printf("%s"
	       "\n"
	       "Write the timeline of a trace for a profiler view: processes with their threads,\n"
	       "GPU files and contexts with their ioctls, fork and inheritance arrows, findings,\n"
	       "counters.\n"
	       "\n"
	       "  -f, --format FMT  perfetto (protobuf, opens in ui.perfetto.dev) or chrome\n"
	       "                    (JSON, also opens in chrome://tracing); default: chrome when\n"
	       "                    OUT ends in .json, else perfetto\n"
	       "  -o, --output OUT  file to write ('-' for stdout)\n"
	       "  -q, --quiet       no summary line\n"
	       "\n"
	       "Several traces (or one from gpuctx merge) of a job's hosts give one Perfetto\n"
	       "trace, each host a machine of its own, their clocks aligned.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  gpuctx export -f perfetto -o job.pftrace job.gctx\n"
	       "  gpuctx export -f chrome -o job.json job.gctx\n",
	       export_usage);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	const char *fmt = NULL, *out = NULL;
	struct gctx_export_stats st;
	bool quiet = false;
	char err[768];
	struct cli_job job;
	int c, format, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			export_help();
			return 0;
		default:
			fputs(export_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "gpuctx: export needs a trace file\n");
		return 2;
	}
	if (!out) {
		fprintf(stderr, "gpuctx: export needs an output file (-o OUT, '-' for stdout)\n");
		return 2;
	}
	if (fmt) {
		format = gctx_export_format_parse(fmt);
		if (format < 0) {
			fprintf(stderr, "gpuctx: unknown format '%s' (perfetto or chrome)\n", fmt);
			return 2;
		}
	} else {
		format = ends_with(out, ".json") ? GCTX_EXPORT_CHROME : GCTX_EXPORT_PERFETTO;
	}
	if (cli_job_open(argv + optind, argc - optind, &job))
		return 1;
	/* one plain trace is read where it is: its warnings name it */
	rc = job.n == 1 && argc - optind == 1 && job.files[0].fd < 0
		 ? gctx_export_file_stats(argv[optind], out, format, err, sizeof(err), &st)
		 : cli_job_export(&job, out, format, err, sizeof(err), &st);
	cli_job_free(&job);
	if (rc) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	if (err[0])
		fprintf(stderr, "gpuctx: %s\n", err);
	if (!quiet && strcmp(out, "-"))
		fprintf(stderr,
			"gpuctx: %s: %llu records -> %llu timeline events, %llu bytes (%s)\n", out,
			(unsigned long long)st.records, (unsigned long long)st.events,
			(unsigned long long)st.bytes, gctx_export_format_name(format));
	return 0;
}
