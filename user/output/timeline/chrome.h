/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Chrome Trace Event Format (JSON) output: the timeline sink that opens in chrome://tracing and
 * ui.perfetto.dev. One event per line inside {"traceEvents": [...]}; every string goes through
 * gctx_json_escape (user/json.h), so any process name or argv gives valid JSON.
 *
 * Mapping: a process is a pid; its life slice is on the main thread (tid = pid); a thread is
 * its tid; a GPU track (file or context) is a thread of its process with the id
 * GCTX_CHROME_LANE_TID + lane, named by thread_name metadata. Slices are B/E pairs, instants
 * scoped "i" events (a zero-length X event where a flow binds to it), counters C events, flows
 * v2 (bind_id with flow_out / flow_in). ts is in microseconds with nanosecond decimals.
 */
#ifndef __GPUCTX_CHROME_H
#define __GPUCTX_CHROME_H

#include <stdio.h>
#include "output/timeline/export.h"

/* JSON thread ids of GPU tracks start above any kernel tid (pid_max <= 4194304). */
#define GCTX_CHROME_LANE_TID 1000000000u

/* The timeline sink writing Chrome JSON to out. NULL when out of memory. */
struct gctx_tl_sink *gctx_chrome__new(FILE *out);

#endif /* __GPUCTX_CHROME_H */
