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
	struct gctx_outfile *of = NULL;
	char rerr[512];
	FILE *out;
	int rc, e, fd = -1;
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
	if (!to_stdout) {
		/* a private temporary file, renamed over out_path only once complete */
		of = gctx_outfile__new(out_path, err, errlen);
		if (!of) {
			gctx_trace_reader__free(r);
			return -1;
		}
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
	if (!rc && of && gctx_outfile__commit(of, err, errlen))
		rc = -1;
	gctx_outfile__free(of); /* removes the temporary file unless committed */
	if (!rc && stats && pos >= 0)
		stats->bytes = (__u64)pos;
	return rc;
}

int gctx_export_file(const char *trace_path, const char *out_path, int format, char *err,
		     size_t errlen)
{
	return gctx_export_file_stats(trace_path, out_path, format, err, errlen, NULL);
}
