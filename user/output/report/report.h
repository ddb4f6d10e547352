/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output/: the outputs stage (report text/JSON, live printer, timeline rules and the
 * Perfetto/Chrome sinks). Reads the model; may include every pure stage, never collect/ or
 * cli/.
 *
 * The post-mortem report of a finished model: a text report for people and one pretty JSON
 * document for tools. Both read the model only; call gctx_model__finish() first so findings
 * that wait for the end of input are there. meta may be NULL (fields print as unknown/null).
 * Times in the text report are seconds since meta->start_mono_ns; JSON times are raw
 * CLOCK_MONOTONIC nanoseconds, null where unknown.
 */
#ifndef __GPUCTX_REPORT_H
#define __GPUCTX_REPORT_H

#include <stdio.h>
#include "model/model.h"
#include "trace/tracefile.h"

/* Both return 0, -ENOMEM, or -errno (-EIO when unknown) when writing to out failed. */
int gctx_report__text(FILE *out, const struct gctx_model *m, const struct gctx_trace_meta *meta);
int gctx_report__json(FILE *out, const struct gctx_model *m, const struct gctx_trace_meta *meta);
/* The JSON report as one object value of a document being written (0 or -ENOMEM). */
struct gctx_json;
int gctx_report__json_to(struct gctx_json *j, const struct gctx_model *m,
			 const struct gctx_trace_meta *meta);

/* ---- several hosts (gpuctx merge, or several traces): report_hosts.c ---- */

struct gctx_host_clock;

struct gctx_report_host {
	const struct gctx_model *m; /* finished */
	const struct gctx_trace_meta *meta;
	const struct gctx_host_clock *clock; /* trace/hosts.h: gctx_hosts__align */
	const char *label;		     /* the host's name in the report */
	const char *source;		     /* the trace file it came from */
};

/* One report over n hosts: the job (hosts, processes, jobs), how close their clocks are, the
 * verdict over all of them, every incident with its host, then each host's own report. Both
 * return as gctx_report__text. */
int gctx_report__hosts_text(FILE *out, const struct gctx_report_host *h, __u32 n);
int gctx_report__hosts_json(FILE *out, const struct gctx_report_host *h, __u32 n);

#endif /* __GPUCTX_REPORT_H */
