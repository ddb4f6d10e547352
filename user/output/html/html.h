/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output/html/: one self-contained HTML page of one trace (or of the hosts of one job), for
 * people who look rather than read: CI artifacts, post-mortems. Reads the finished model and
 * its diagnosis (model/analysis.h) only; may include every pure stage and output/report/ (its
 * printing helpers), never collect/ or cli/.
 *
 * The page opens offline: no network, no external file, no script at all (stacks fold with
 * <details>); a Content-Security-Policy allows only its own inline style, by hash. Every
 * string a traced process controls is escaped for HTML text and attributes (html_esc.h).
 */
#ifndef __GPUCTX_HTML_H
#define __GPUCTX_HTML_H

#include <stdio.h>
#include "model/model.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

/* One host of the page: a finished model, its trace's meta, and for a job of several hosts
 * its clock (trace/hosts.h: gctx_hosts__align) so that their timelines share one axis. */
struct gctx_html_host {
	const struct gctx_model *m;
	const struct gctx_trace_meta *meta;  /* may be NULL */
	const struct gctx_host_clock *clock; /* NULL: the host's own clock */
	const char *label;		     /* the host's name, NULL: meta's hostname */
	const char *source;		     /* the trace file, NULL: not said */
};

/* The page of n hosts (side by side when n > 1). 0, -ENOMEM, or -errno of the write. */
int gctx_html__write(FILE *out, const struct gctx_html_host *h, __u32 n);

/* Write to path as every output is written (lib/outfile.h): refused when path is a symlink,
 * a device, a FIFO or a directory; a private file renamed over it once complete. 0, or -1
 * with a one-line reason in err. */
int gctx_html__write_file(const char *path, const struct gctx_html_host *h, __u32 n, char *err,
			  size_t errlen);

#endif /* __GPUCTX_HTML_H */
