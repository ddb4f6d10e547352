/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Timeline export: a recording replayed through the lineage model and written as a timeline
 * that profiler views open (Perfetto protobuf, Chrome JSON). `gpuctx export` and
 * `gpuctx record --perfetto/--chrome` both go through gctx_export_file().
 *
 * The timeline is built in one streaming pass: each record is fed to a gctx_model and what it
 * changed (a new process, thread, held file, GPU context, ioctl, finding) is handed at once to a
 * sink, the format writer. Memory is the model's plus a few bytes per process, held file and
 * tracked GPU object: it does not grow with the number of events.
 *
 * The sink interface below is what a format implements (output/perfetto.c, output/chrome.c). Track
 * kinds and the rules every sink can rely on:
 *   - a track is described (->track) before any event uses it; a parent before its children;
 *   - slices on one track nest properly: a begin's timestamp is never before the end of an
 *     earlier slice that is already closed on that track, and ends come innermost first;
 *   - timestamps are CLOCK_MONOTONIC nanoseconds, but sinks must not assume the calls come in
 *     time order across tracks; meta->start_boot_ns (0 in older traces) maps them to BOOTTIME;
 *   - names come from one rule (output/names.h), the same in every format and in the report;
 *     ->rename is called whenever a process or thread name changes, also just before its end;
 *   - a flow id is used once with flow_out (its source) and then once with flow_in (its
 *     destination, no earlier in time than the source).
 */
#ifndef __GPUCTX_EXPORT_H
#define __GPUCTX_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "trace/tracefile.h"

enum gctx_export_format {
	GCTX_EXPORT_PERFETTO = 1, /* Perfetto TracePacket protobuf (.pftrace) */
	GCTX_EXPORT_CHROME = 2,	  /* Chrome Trace Event Format JSON (.json) */
};

/* "perfetto" -> GCTX_EXPORT_PERFETTO, "chrome" (or "json") -> GCTX_EXPORT_CHROME, else -1. */
int gctx_export_format_parse(const char *name);
const char *gctx_export_format_name(int format);

/* What an export produced. */
struct gctx_export_stats {
	__u64 records;	/* trace records read */
	__u64 events;	/* timeline events written (slices count twice: begin and end) */
	__u64 bytes;	/* bytes written */
	bool truncated; /* the trace ended inside a record (recording killed) */
};

/*
 * Export the trace file trace_path as a timeline into out_path ("-" is stdout), in format
 * (enum gctx_export_format). Returns 0 on success: err is then "" or a one-line warning (the
 * trace ended inside a record: everything before it was exported). Returns -1 on failure with
 * a one-line reason in err, worded as `gpuctx report` words it for an unreadable or corrupt
 * trace, and "cannot create OUT: reason" / "writing OUT: reason" for the output; a partial
 * output file is removed. Prints nothing; needs no privileges. err may be NULL.
 */
int gctx_export_file(const char *trace_path, const char *out_path, int format, char *err,
		     size_t errlen);
/* The same, with counts for the caller (stats may be NULL). */
int gctx_export_file_stats(const char *trace_path, const char *out_path, int format, char *err,
			   size_t errlen, struct gctx_export_stats *stats);

/* One host of several in one timeline (gpuctx merge, or several traces): Perfetto only, each
 * host a machine of its own. */
struct gctx_export_host {
	const char *path;    /* its trace (one host's) */
	__u32 machine;	     /* 0 for the first (Perfetto's host machine), 1, 2, ... */
	const char *name;    /* the machine's name */
	__s64 boot_shift_ns; /* moves its clock onto the job's (trace/hosts.h) */
};

/* Export hosts h[0..n) into one timeline at out_path, as gctx_export_file_stats (which is
 * this with one host) says; more than one host needs GCTX_EXPORT_PERFETTO. */
int gctx_export_hosts(const struct gctx_export_host *h, __u32 n, const char *out_path, int format,
		      char *err, size_t errlen, struct gctx_export_stats *stats);

/* ---- the sink interface (format writers) ---- */

enum gctx_tl_kind {
	GCTX_TL_GLOBAL = 0, /* the recording itself, not in any process */
	GCTX_TL_PROCESS,    /* one per process: its life, execs, findings */
	GCTX_TL_THREAD,	    /* one per thread, inside its process */
	GCTX_TL_GPU,	    /* a GPU file description or GPU context held by a process */
	GCTX_TL_COUNTER,    /* a per-process counter */
};

struct gctx_tl_track {
	__u64 uuid;   /* unique in the trace, never 0 */
	__u64 parent; /* uuid of the enclosing track (process or GPU track), 0 none */
	enum gctx_tl_kind kind;
	__u32 pid;	  /* owning process (0 for GLOBAL) */
	__u32 tid;	  /* THREAD: the tid; PROCESS: the pid */
	__u32 lane;	  /* GPU: 1-based number, unique in the trace (JSON thread ids) */
	const char *name; /* set when the track is described or renamed */
	const char *unit; /* COUNTER: "bytes", "files", "ioctls/s" */
	bool unit_bytes;  /* COUNTER: the unit is bytes */
	/* appended (Perfetto fidelity): PROCESS only */
	__u32 ppid;	    /* fork parent, 0 unknown */
	bool ppid_untraced; /* the parent is not in the trace (a placeholder names it) */
	__u64 start_ns;	    /* fork time, 0 unknown (started before the trace) */
};

enum gctx_tl_arg_type {
	GCTX_TL_U64,
	GCTX_TL_S64,
	GCTX_TL_BOOL,
	GCTX_TL_STR,  /* str.n bytes, any bytes (sinks make them valid UTF-8) */
	GCTX_TL_STRV, /* str.n bytes of NUL-separated strings (argv): an array */
	GCTX_TL_U32V, /* u32v.n numbers: an array */
	/* stack: the call stack taken at the event (one per event, key "stack") */
	GCTX_TL_STACK,
};

/* One frame of a call stack, in the terms every format understands. */
struct gctx_tl_frame {
	const char *function; /* Python or DWARF function, else "name+0xoff" (native) */
	const char *file;     /* source file, else the module (native without DWARF lines) */
	__u32 line;	      /* 0 unknown */
};

/* A call stack taken at an event (issue 11). */
struct gctx_tl_stack {
	const struct gctx_tl_frame *frames; /* innermost first */
	__u32 nframes;
	const char *text; /* the frames as `gpuctx report` prints them, one per line */
};

struct gctx_tl_arg {
	const char *key;
	enum gctx_tl_arg_type type;
	union {
		__u64 u;
		__s64 s;
		bool b;
		struct {
			const char *p;
			size_t n;
		} str;
		struct {
			const __u32 *v;
			__u32 n;
		} u32v;
		const struct gctx_tl_stack *stack;
	};
};

struct gctx_tl_event {
	const struct gctx_tl_track *track;
	__u64 ts;	  /* CLOCK_MONOTONIC ns */
	const char *name; /* NULL on slice ends */
	const char *cat;  /* category, NULL on slice ends */
	const struct gctx_tl_arg *args;
	__u32 nargs;	/* on a slice end: args added to the slice */
	__u64 flow_out; /* non-zero: a flow with this id starts at this event */
	__u64 flow_in;	/* non-zero: the flow with this id ends at this event */
};

struct gctx_tl_sink;

struct gctx_tl_ops {
	/* true: the process track is its main thread's track (Chrome JSON), so the exporter
	 * puts no separate life slice on the main thread */
	bool process_is_main_thread;
	void (*begin)(struct gctx_tl_sink *s, const struct gctx_trace_meta *meta);
	void (*track)(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts);
	/* the process or thread of t has a new name (exec, prctl) */
	void (*rename)(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts);
	/* the process of t ended (or the trace did) with the name t->name */
	void (*process_end)(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts);
	/* argv of process pid (NUL-separated, len bytes) from ts on: its own, after an exec or
	 * as found at attach (a forked child's inherited argv is in its life slice's args) */
	void (*cmdline)(struct gctx_tl_sink *s, __u64 ts, __u32 pid, __u32 ppid, const char *args,
			__u32 len);
	void (*slice_begin)(struct gctx_tl_sink *s, const struct gctx_tl_event *e);
	void (*slice_end)(struct gctx_tl_sink *s, const struct gctx_tl_event *e);
	void (*instant)(struct gctx_tl_sink *s, const struct gctx_tl_event *e);
	void (*counter)(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts, __s64 v);
	/* end of the timeline: summary args of the recording; returns 0 or -errno (write error) */
	int (*end)(struct gctx_tl_sink *s, const struct gctx_tl_arg *args, __u32 nargs);
	void (*free)(struct gctx_tl_sink *s);
};

struct gctx_tl_sink {
	const struct gctx_tl_ops *ops;
	__u64 events; /* events written, counted by the sink */
};

/*
 * Stream every record of r into sink s. Returns 0, or -1 with a one-line reason in err
 * (corrupt or malformed record, out of memory, write error). stats may be NULL.
 */
int gctx_export_stream(struct gctx_trace_reader *r, const char *trace_path, struct gctx_tl_sink *s,
		       char *err, size_t errlen, struct gctx_export_stats *stats);

#endif /* __GPUCTX_EXPORT_H */
