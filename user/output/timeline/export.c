// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline export to files, and the `gpuctx export` command: format names, opening the trace
 * and the output, the sink of the format, and the command line. The timeline itself is built in
 * timeline.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/outfile.h"
#include "output/timeline/chrome.h"
#include "output/timeline/export.h"
#include "output/timeline/perfetto.h"
#include "output/timeline/timeline_priv.h"
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

/* One host's timeline into out: its trace read, streamed into a sink of format. */
static int export_host(const struct gctx_export_host *h, __u32 n, FILE *out, int format, char *err,
		       size_t errlen, struct gctx_export_stats *stats)
{
	struct gctx_trace_reader *r;
	struct gctx_tl_sink *s;
	char rerr[512];
	int rc;

	r = gctx_trace_reader__open(h->path, rerr, sizeof(rerr));
	if (!r) {
		tl_errf(err, errlen, "%s", rerr);
		return -1;
	}
	if (format == GCTX_EXPORT_CHROME)
		s = gctx_chrome__new(out);
	else if (n == 1)
		s = gctx_perfetto__new(out);
	else
		s = gctx_perfetto__new_machine(out, h->machine, h->name, h->boot_shift_ns);
	if (!s) {
		tl_errf(err, errlen, "out of memory");
		rc = -1;
	} else {
		rc = gctx_export_stream(r, h->path, s, err, errlen, stats);
		s->ops->free(s);
	}
	gctx_trace_reader__free(r);
	return rc;
}

int gctx_export_hosts(const struct gctx_export_host *h, __u32 n, const char *out_path, int format,
		      char *err, size_t errlen, struct gctx_export_stats *stats)
{
	bool to_stdout = !strcmp(out_path, "-");
	struct gctx_outfile *of = NULL;
	struct gctx_export_stats one;
	char warn[768] = "";
	FILE *out;
	int rc = 0, e, fd = -1;
	long pos;

	tl_errf(err, errlen, "%s", "");
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (format != GCTX_EXPORT_PERFETTO && format != GCTX_EXPORT_CHROME) {
		tl_errf(err, errlen, "unknown export format %d", format);
		return -1;
	}
	if (n > 1 && format != GCTX_EXPORT_PERFETTO) {
		/* Chrome JSON has no machines: equal pids of two hosts would be one process */
		tl_errf(err, errlen,
			"a Chrome JSON timeline holds one host: export %u hosts with "
			"-f perfetto",
			n);
		return -1;
	}
	for (__u32 i = 0; i < n; i++) {
		if (!to_stdout && same_file(h[i].path, out_path)) {
			tl_errf(err, errlen, "cannot create %s: it is the trace being exported",
				out_path);
			return -1;
		}
	}
	if (!to_stdout) {
		/* a private temporary file, renamed over out_path only once complete */
		of = gctx_outfile__new(out_path, err, errlen);
		if (!of)
			return -1;
		fd = fcntl(gctx_outfile__fd(of), F_DUPFD_CLOEXEC, 0);
		out = fd >= 0 ? fdopen(fd, "w") : NULL;
	} else {
		out = stdout;
	}
	if (!out) {
		tl_errf(err, errlen, "cannot create %s: %s", out_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		gctx_outfile__free(of);
		return -1;
	}
	if (!to_stdout)
		setvbuf(out, NULL, _IOFBF, OUT_BUF_SIZE);
	for (__u32 i = 0; i < n && !rc; i++) {
		memset(&one, 0, sizeof(one));
		rc = export_host(&h[i], n, out, format, err, errlen, &one);
		if (!rc && err[0] && !warn[0]) /* a warning: kept, the other hosts still go */
			snprintf(warn, sizeof(warn), "%s", err);
		if (stats) {
			stats->records += one.records;
			stats->events += one.events;
			stats->truncated |= one.truncated;
		}
	}
	if (!rc)
		tl_errf(err, errlen, "%s", warn);

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
	if (!rc && of && gctx_outfile__commit(of, err, errlen))
		rc = -1;
	gctx_outfile__free(of); /* removes the temporary file unless committed */
	if (!rc && stats && pos >= 0)
		stats->bytes = (__u64)pos;
	return rc;
}

int gctx_export_file_stats(const char *trace_path, const char *out_path, int format, char *err,
			   size_t errlen, struct gctx_export_stats *stats)
{
	struct gctx_export_host h = {.path = trace_path};

	return gctx_export_hosts(&h, 1, out_path, format, err, errlen, stats);
}

int gctx_export_file(const char *trace_path, const char *out_path, int format, char *err,
		     size_t errlen)
{
	return gctx_export_file_stats(trace_path, out_path, format, err, errlen, NULL);
}
