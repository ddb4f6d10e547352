// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline export to files, and the `gpuctx export` command: format names, opening the trace
 * and the output, the sink of the format, and the command line. The timeline itself is built in
 * timeline.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/chrome.h"
#include "output/export.h"
#include "output/perfetto.h"
#include "output/timeline_priv.h"
#include "trace/tracefile.h"

#define OUT_BUF_SIZE (1 << 20)

/* ---- files and the command ---- */

int gctx_export_format_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "perfetto") || !strcmp(name, "pftrace") || !strcmp(name, "proto"))
		return GCTX_EXPORT_PERFETTO;
	if (!strcmp(name, "chrome") || !strcmp(name, "json"))
		return GCTX_EXPORT_CHROME;
	return -1;
}

const char *gctx_export_format_name(int format)
{
	switch (format) {
	case GCTX_EXPORT_PERFETTO:
		return "perfetto";
	case GCTX_EXPORT_CHROME:
		return "chrome";
	default:
		return "?";
	}
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int gctx_export_file_stats(const char *trace_path, const char *out_path, int format, char *err,
			   size_t errlen, struct gctx_export_stats *stats)
{
	struct gctx_trace_reader *r;
	struct gctx_tl_sink *s = NULL;
	bool to_stdout = !strcmp(out_path, "-");
	char rerr[512];
	FILE *out;
	int rc, e;
	long pos;

	tl_errf(err, errlen, "%s", "");
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (format != GCTX_EXPORT_PERFETTO && format != GCTX_EXPORT_CHROME) {
		tl_errf(err, errlen, "unknown export format %d", format);
		return -1;
	}
	r = gctx_trace_reader__open(trace_path, rerr, sizeof(rerr));
	if (!r) {
		tl_errf(err, errlen, "%s", rerr);
		return -1;
	}
	if (!to_stdout && same_file(trace_path, out_path)) {
		tl_errf(err, errlen, "cannot create %s: it is the trace being exported", out_path);
		gctx_trace_reader__free(r);
		return -1;
	}
	out = to_stdout ? stdout : fopen(out_path, "w");
	if (!out) {
		tl_errf(err, errlen, "cannot create %s: %s", out_path, strerror(errno));
		gctx_trace_reader__free(r);
		return -1;
	}
	if (!to_stdout)
		setvbuf(out, NULL, _IOFBF, OUT_BUF_SIZE);
	s = format == GCTX_EXPORT_PERFETTO ? gctx_perfetto__new(out) : gctx_chrome__new(out);
	if (!s) {
		tl_errf(err, errlen, "out of memory");
		rc = -1;
	} else {
		rc = gctx_export_stream(r, trace_path, s, err, errlen, stats);
		s->ops->free(s);
	}
	gctx_trace_reader__free(r);

	errno = 0;
	e = fflush(out) ? errno : 0;
	if (!e && ferror(out))
		e = EIO;
	pos = to_stdout ? -1 : ftell(out);
	if (!to_stdout && fclose(out) && !e)
		e = errno ? errno : EIO;
	if (!rc && e) {
		tl_errf(err, errlen, "writing %s: %s", out_path, strerror(e));
		rc = -1;
	}
	if (rc && !to_stdout)
		unlink(out_path);
	if (!rc && stats && pos >= 0)
		stats->bytes = (__u64)pos;
	return rc;
}

int gctx_export_file(const char *trace_path, const char *out_path, int format, char *err,
		     size_t errlen)
{
	return gctx_export_file_stats(trace_path, out_path, format, err, errlen, NULL);
}

static const char export_usage[] = "Usage: gpuctx export [-q] -f perfetto|chrome -o OUT FILE\n";

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
	int c, format;

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
	if (optind != argc - 1) {
		fprintf(stderr, "gpuctx: export needs exactly one trace file\n");
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
	if (gctx_export_file_stats(argv[optind], out, format, err, sizeof(err), &st)) {
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
