// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx merge: the traces of one job's hosts into one trace (trace/hosts.h) that report,
 * check and export read like any other.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/outfile.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

#define MERGE_USAGE "Usage: gpuctx merge -o OUT TRACE...\n"

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The merged file's own meta: the reference host's clock anchor, the hosts' names. */
static void merged_meta(struct gctx_trace_meta *meta, const struct cli_job *job)
{
	size_t off = 0;

	*meta = job->files[job->ref].meta;
	memset(meta->hostname, 0, sizeof(meta->hostname));
	memset(meta->cmdline, 0, sizeof(meta->cmdline));
	snprintf(meta->version, sizeof(meta->version), "%s", GPUCTX_VERSION);
	off = snprintf(meta->cmdline, sizeof(meta->cmdline), "merge of %u hosts:", job->n);
	for (__u32 i = 0; i < job->n && off < sizeof(meta->cmdline); i++)
		off += snprintf(meta->cmdline + off, sizeof(meta->cmdline) - off, " %s",
				job->files[i].label);
	snprintf(meta->hostname, sizeof(meta->hostname), "%u hosts", job->n);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	struct gctx_trace_writer *w;
	struct gctx_trace_meta meta;
	struct gctx_outfile *of;
	struct cli_job job;
	const char *out = NULL;
	long long records = 0;
	char err[768];
	int c, werr, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			printf(
			    MERGE_USAGE
			    "\n"
			    "Merge the traces of one job's hosts (gpuctx-JOB.STEP-HOST.gctx from "
			    "the\n"
			    "Slurm plugin, or any traces) into one trace: gpuctx report, check "
			    "and\n"
			    "export read it as one job, each host apart (its processes never mix\n"
			    "with another host's), the hosts' clocks aligned by their wall "
			    "clocks.\n"
			    "\n"
			    "  -o, --output OUT  the merged trace\n"
			    "\n"
			    "EXAMPLE:\n"
			    "  gpuctx merge -o job.gctx gpuctx-4242.0-*.gctx && gpuctx report "
			    "job.gctx\n");
			return 0;
		default:
			fputs(MERGE_USAGE, stderr);
			return 2;
		}
	}
	if (!out || optind >= argc) {
		fprintf(stderr, "gpuctx: merge needs -o OUT and at least one trace\n");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		if (same_file(argv[i], out)) {
			fprintf(stderr, "gpuctx: cannot write %s: it is one of the traces merged\n",
				out);
			return 1;
		}
	}
	if (cli_job_open(argv + optind, argc - optind, &job))
		return 1;
	merged_meta(&meta, &job);
	of = gctx_outfile__new(out, err, sizeof(err));
	if (!of) {
		fprintf(stderr, "gpuctx: %s\n", err);
		cli_job_free(&job);
		return 1;
	}
	w = gctx_trace_writer__new_fd(fcntl(gctx_outfile__fd(of), F_DUPFD_CLOEXEC, 0), &meta,
				      &werr);
	if (!w) {
		fprintf(stderr, "gpuctx: cannot write %s: %s\n", out, strerror(-werr));
		goto out;
	}
	for (__u32 i = 0; i < job.n; i++) {
		long long n = gctx_hosts__append(w, i, &job.files[i], err, sizeof(err));

		if (n < 0) {
			fprintf(stderr, "gpuctx: %s\n", err);
			gctx_trace_writer__free(w);
			goto out;
		}
		records += n;
	}
	werr = gctx_trace_writer__free(w);
	if (werr) {
		fprintf(stderr, "gpuctx: writing %s: %s\n", out, strerror(-werr));
		goto out;
	}
	if (gctx_outfile__commit(of, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto out;
	}
	fprintf(stderr, "gpuctx: merged %u host%s (%s), %lld records, into %s\n", job.n,
		job.n == 1 ? "" : "s", strchr(meta.cmdline, ':') + 2, records, out);
	ret = 0;
out:
	gctx_outfile__free(of);
	cli_job_free(&job);
	return ret;
}
