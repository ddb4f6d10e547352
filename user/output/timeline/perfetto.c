// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Perfetto timeline sink: one packet sequence (trusted_packet_sequence_id 1) whose first packet
 * clears the incremental state, holds the ClockSnapshot and sets TracePacketDefaults; packets
 * that use interned strings say they need that state (sequence_flags 2).
 *
 * Clocks: timestamps are CLOCK_MONOTONIC. The snapshot pins MONOTONIC, BOOTTIME and REALTIME to
 * the recording's start, and BOOTTIME is the trace clock, so the trace lines up with other
 * Perfetto traces of the machine (traces written before BOOTTIME was recorded take it equal to
 * MONOTONIC). Packets in time order carry deltas on a sequence-scoped incremental clock (the
 * sequence default, as Perfetto's SDK does); an earlier one names MONOTONIC with its time.
 *
 * Size: event names, categories, debug-annotation names and short string values are interned
 * (bounded tables, lib/strtab.h: past their bounds a string is written inline); track uuids
 * are renumbered 1, 2, ... in the order the tracks are described, so they take a byte or two.
 *
 * Names (output/names.h): a process is named by its ProcessDescriptor and by a ProcessTree entry
 * {pid, ppid, cmdline [name], cmdline_is_comm} sent when it is described and on each rename
 * (the entry is what links it to its parent); a thread by its ThreadDescriptor, re-sent on each
 * rename (it outranks ProcessTree names in the trace processor). A parent outside the trace
 * gets a placeholder descriptor; a process whose parent is unknown gets no ProcessTree entry
 * (the trace processor would link it to pid 0). argv is a debug annotation of the life slice, not a
 * ProcessTree cmdline (that would rename the process after argv[0]). Flow ids are fixed64.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/strtab.h"
#include "lib/tsmath.h"
#include "output/timeline/names.h"
#include "output/timeline/perfetto.h"

/* Field numbers (shared/reference/perfetto.md, section 1.2). */
enum {
	TRACE_PACKET = 1,

	PKT_PROCESS_TREE = 2,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQ_FLAGS = 13,
	PKT_CLOCK_ID = 58,
	PKT_DEFAULTS = 59,
	PKT_TRACK_DESCRIPTOR = 60,
	PKT_SYSTEM_INFO = 45,
	PKT_MACHINE_ID = 98,
	SI_MACHINE_NAME = 17,

	DEF_CLOCK_ID = 58,
	CLK_INCREMENTAL = 3,
	CLK_UNIT_MULTIPLIER = 4,

	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	TD_SIBLING_MERGE = 15,

	PD_PID = 1,
	PD_NAME = 6,
	PD_START = 7,

	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,

	CD_UNIT = 3,
	CD_UNIT_NAME = 6,

	TE_CATEGORY_IIDS = 3,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_CATEGORIES = 22,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,
	TE_CALLSTACK = 55,

	/* TrackEvent.Callstack {repeated Frame frames = 1}, Frame {function_name = 1,
	 * source_file = 2, line_number = 3}: protos/perfetto/trace/track_event/track_event.proto */
	CSK_FRAMES = 1,
	CSF_FUNCTION = 1,
	CSF_FILE = 2,
	CSF_LINE = 3,

	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_STRING = 6,
	DA_NAME = 10,
	DA_ARRAY = 12,
	DA_STRING_IID = 17,

	ID_CATEGORIES = 1,
	ID_NAMES = 2,
	ID_ANNOTATION_NAMES = 3,
	ID_STRING_VALUES = 29,
	IE_IID = 1,
	IE_NAME = 2, /* also InternedString.str */

	CS_CLOCKS = 1,
	CS_PRIMARY = 2,
	CLK_ID = 1,
	CLK_TIMESTAMP = 2,

	PT_PROCESSES = 1,
	PTP_PID = 1,
	PTP_PPID = 2,
	PTP_CMDLINE = 3,
	PTP_CMDLINE_IS_COMM = 9,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_MONOTONIC_ID = 3, CLOCK_BOOTTIME_ID = 6 };
/* a sequence-scoped clock (64..127): CLOCK_MONOTONIC as deltas from the previous packet */
enum { CLOCK_INCREMENTAL_ID = 64 };
enum { UNIT_SIZE_BYTES = 3 };
enum { MERGE_NONE = 2 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };

/* Interning bounds: the tables stay small whatever the trace holds. */
#define NAMES_MAX     4096
#define NAME_LEN_MAX  128
#define VALUES_MAX    16384
#define VALUE_LEN_MAX 128
#define PENDING_MAX   (2 + 2 * 32) /* name, category, a key and a value per arg */

/* ---- the sink ---- */

enum { T_NAMES, T_CATS, T_KEYS, T_VALUES, T_MAX };

/* InternedData field of each table */
static const __u32 interned_field[T_MAX] = {
    [T_NAMES] = ID_NAMES,
    [T_CATS] = ID_CATEGORIES,
    [T_KEYS] = ID_ANNOTATION_NAMES,
    [T_VALUES] = ID_STRING_VALUES,
};

/* A string interned while the current packet is built: defined in its InternedData. */
struct pending {
	int table;
	__u32 iid;
	const char *s;
	size_t n;
};

struct gctx_perfetto {
	struct gctx_tl_sink sink;
	FILE *out;
	struct gctx_pb *b;
	struct gctx_strtab *tab[T_MAX];
	struct pending pend[PENDING_MAX];
	__u32 npend;
	struct gctx_hmap uuids; /* exporter uuid -> our track number */
	__u32 ntracks;
	struct gctx_hmap untraced; /* placeholder parents already sent */
	bool iids;		   /* the packet being built uses interned strings */
	__u64 last_inc;		   /* value of the incremental clock */
	__s64 boot_minus_mono;	   /* BOOTTIME - MONOTONIC */
	int err;		   /* first error (-errno) */
	/* one host of several (gctx_perfetto__new_machine): its machine id on every packet, its
	 * own sequence, its track uuids apart, its clock moved onto the job's */
	__u32 machine;
	__u32 seq;
	__u64 uuid_base;
	__s64 boot_shift;
	const char *machine_name;
};

static struct gctx_perfetto *PF(struct gctx_tl_sink *s)
{
	return (struct gctx_perfetto *)s;
}

/* Our number of an exporter track uuid: small, so it takes a byte or two. */
static __u64 track_id(struct gctx_perfetto *pf, __u64 uuid, bool add)
{
	__u32 v;

	if (!uuid)
		return 0;
	if (gctx_hmap__get(&pf->uuids, uuid, 0, &v))
		return pf->uuid_base + v;
	if (!add)
		return uuid | (1ULL << 63); /* never described: a bug; keep it apart */
	if (gctx_hmap__put(&pf->uuids, uuid, 0, ++pf->ntracks)) {
		if (!pf->err)
			pf->err = -ENOMEM;
		return uuid | (1ULL << 63);
	}
	return pf->uuid_base + pf->ntracks;
}

/*
 * Timestamps: most packets come in time order, so they are deltas on the sequence's
 * incremental clock (CLOCK_INCREMENTAL, the sequence default); a packet earlier than the
 * previous one names CLOCK_MONOTONIC and carries the absolute time.
 */
static void packet_begin(struct gctx_perfetto *pf, __u64 ts, bool timed)
{
	gctx_pb__reset(pf->b);
	pf->npend = 0;
	pf->iids = false;
	gctx_pb__begin(pf->b, TRACE_PACKET);
	ts = (__u64)gctx_ts_s64(ts); /* the trace processor reads timestamps as int64 */
	if (timed && ts >= pf->last_inc) {
		gctx_pb__varint(pf->b, PKT_TIMESTAMP, ts - pf->last_inc);
		pf->last_inc = ts;
	} else if (timed) {
		gctx_pb__varint(pf->b, PKT_TIMESTAMP, ts);
		gctx_pb__varint(pf->b, PKT_CLOCK_ID, CLOCK_MONOTONIC_ID);
	}
	gctx_pb__varint(pf->b, PKT_SEQ_ID, pf->seq);
	if (pf->machine)
		gctx_pb__varint(pf->b, PKT_MACHINE_ID, pf->machine);
}

static void packet_end(struct gctx_perfetto *pf)
{
	/* the state that packets using interned strings need (shared/reference/perfetto.md 1.4);
	 * the sequence's first packet clears it, so it is never invalid in our files */
	if (pf->iids)
		gctx_pb__varint(pf->b, PKT_SEQ_FLAGS, SEQ_NEEDS_STATE);
	gctx_pb__end(pf->b);
	if (gctx_pb__failed(pf->b)) {
		if (!pf->err)
			pf->err = -ENOMEM;
		return;
	}
	if (fwrite(gctx_pb__data(pf->b), 1, gctx_pb__len(pf->b), pf->out) != gctx_pb__len(pf->b) &&
	    !pf->err)
		pf->err = -EIO;
}

/* The iid of s in table, 0 when written inline; a new one is defined in this packet. */
static __u32 intern(struct gctx_perfetto *pf, int table, const char *s, size_t n)
{
	bool added;
	__u32 iid;

	if (pf->npend >= PENDING_MAX)
		return 0;
	iid = gctx_strtab__intern(pf->tab[table], s, n, &added);
	pf->iids |= iid != 0;
	if (iid && added)
		pf->pend[pf->npend++] = (struct pending){table, iid, s, n};
	return iid;
}

/* The InternedData of the strings first used by this packet. */
static void interned_data(struct gctx_perfetto *pf)
{
	__u32 i;

	if (!pf->npend)
		return;
	gctx_pb__begin(pf->b, PKT_INTERNED_DATA);
	for (i = 0; i < pf->npend; i++) {
		const struct pending *p = &pf->pend[i];

		gctx_pb__begin(pf->b, interned_field[p->table]);
		gctx_pb__varint(pf->b, IE_IID, p->iid);
		gctx_pb__string(pf->b, IE_NAME, p->s, p->n);
		gctx_pb__end(pf->b);
	}
	gctx_pb__end(pf->b);
}

static void clock(struct gctx_pb *b, __u32 id, __u64 ts, bool incremental)
{
	gctx_pb__begin(b, CS_CLOCKS);
	gctx_pb__varint(b, CLK_ID, id);
	gctx_pb__varint(b, CLK_TIMESTAMP, (__u64)gctx_ts_s64(ts));
	if (incremental) {
		gctx_pb__varint(b, CLK_INCREMENTAL, 1);
		gctx_pb__varint(b, CLK_UNIT_MULTIPLIER, 1); /* deltas in ns */
	}
	gctx_pb__end(b);
}

static void pf_begin(struct gctx_tl_sink *s, const struct gctx_trace_meta *meta)
{
	struct gctx_perfetto *pf = PF(s);
	__u64 boot =
	    (meta->start_boot_ns ? meta->start_boot_ns : meta->start_mono_ns) + pf->boot_shift;

	pf->boot_minus_mono = gctx_ts_offset(meta->start_mono_ns, boot);
	pf->last_inc = (__u64)gctx_ts_s64(meta->start_mono_ns);
	/* the first packet: clears the sequence's state, sets its defaults, pins the clocks */
	gctx_pb__reset(pf->b);
	gctx_pb__begin(pf->b, TRACE_PACKET);
	gctx_pb__varint(pf->b, PKT_SEQ_ID, pf->seq);
	if (pf->machine)
		gctx_pb__varint(pf->b, PKT_MACHINE_ID, pf->machine);
	gctx_pb__varint(pf->b, PKT_SEQ_FLAGS, SEQ_CLEARED);
	gctx_pb__begin(pf->b, PKT_DEFAULTS);
	gctx_pb__varint(pf->b, DEF_CLOCK_ID, CLOCK_INCREMENTAL_ID);
	gctx_pb__end(pf->b);
	gctx_pb__begin(pf->b, PKT_CLOCK_SNAPSHOT);
	clock(pf->b, CLOCK_MONOTONIC_ID, meta->start_mono_ns, false);
	clock(pf->b, CLOCK_BOOTTIME_ID, boot, false);
	clock(pf->b, CLOCK_REALTIME_ID, meta->start_wall_ns, false);
	clock(pf->b, CLOCK_INCREMENTAL_ID, meta->start_mono_ns, true);
	gctx_pb__varint(pf->b, CS_PRIMARY, CLOCK_BOOTTIME_ID);
	gctx_pb__end(pf->b);
	gctx_pb__end(pf->b);
	if (gctx_pb__failed(pf->b))
		pf->err = -ENOMEM;
	else if (fwrite(gctx_pb__data(pf->b), 1, gctx_pb__len(pf->b), pf->out) !=
		 gctx_pb__len(pf->b))
		pf->err = -EIO;
	if (pf->machine_name) { /* the machine's name in the trace processor and the UI */
		packet_begin(pf, 0, false);
		gctx_pb__begin(pf->b, PKT_SYSTEM_INFO);
		gctx_pb__cstr(pf->b, SI_MACHINE_NAME, pf->machine_name);
		gctx_pb__end(pf->b);
		packet_end(pf);
	}
}

/* ProcessTree entry {pid, ppid, cmdline [name], cmdline_is_comm}: names the process and links
 * it to its parent. */
static void process_tree(struct gctx_perfetto *pf, __u64 ts, __u32 pid, __u32 ppid,
			 const char *name)
{
	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_PROCESS_TREE);
	gctx_pb__begin(pf->b, PT_PROCESSES);
	gctx_pb__int64(pf->b, PTP_PID, pid);
	gctx_pb__int64(pf->b, PTP_PPID, ppid);
	gctx_pb__cstr(pf->b, PTP_CMDLINE, name);
	gctx_pb__varint(pf->b, PTP_CMDLINE_IS_COMM, 1);
	gctx_pb__end(pf->b);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

/* A packet with the TrackDescriptor of t, open for its fields */
static void descriptor_begin(struct gctx_perfetto *pf, const struct gctx_tl_track *t, __u64 ts)
{
	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_DESCRIPTOR);
	gctx_pb__varint(pf->b, TD_UUID, track_id(pf, t->uuid, true));
}

static void descriptor_end(struct gctx_perfetto *pf)
{
	gctx_pb__end(pf->b);
	packet_end(pf);
}

/* A parent outside the trace, named by a process descriptor of its own (once). */
static void untraced_parent(struct gctx_perfetto *pf, __u32 ppid, __u64 ts)
{
	__u32 seen;

	if (gctx_hmap__get(&pf->untraced, ppid, 0, &seen))
		return;
	if (gctx_hmap__put(&pf->untraced, ppid, 0, 1) && !pf->err)
		pf->err = -ENOMEM;
	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_DESCRIPTOR);
	gctx_pb__varint(pf->b, TD_UUID, pf->uuid_base + ++pf->ntracks); /* no event uses it */
	gctx_pb__begin(pf->b, TD_PROCESS);
	gctx_pb__int64(pf->b, PD_PID, ppid);
	gctx_pb__cstr(pf->b, PD_NAME, GCTX_NAME_UNTRACED);
	gctx_pb__end(pf->b);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

static void process_track(struct gctx_perfetto *pf, const struct gctx_tl_track *t, __u64 ts)
{
	descriptor_begin(pf, t, ts);
	gctx_pb__begin(pf->b, TD_PROCESS);
	gctx_pb__int64(pf->b, PD_PID, t->pid);
	gctx_pb__cstr(pf->b, PD_NAME, t->name);
	if (t->start_ns)
		gctx_pb__int64(pf->b, PD_START, gctx_ts_shift(t->start_ns, pf->boot_minus_mono));
	gctx_pb__end(pf->b);
	descriptor_end(pf);
	if (t->ppid && t->ppid_untraced)
		untraced_parent(pf, t->ppid, ts);
	/* without a ppid the trace processor would make pid 0 its parent: the descriptor alone
	 * names it */
	if (t->ppid)
		process_tree(pf, ts, t->pid, t->ppid, t->name);
}

static void thread_track(struct gctx_perfetto *pf, const struct gctx_tl_track *t, __u64 ts)
{
	descriptor_begin(pf, t, ts);
	gctx_pb__begin(pf->b, TD_THREAD);
	gctx_pb__int64(pf->b, THD_PID, t->pid);
	gctx_pb__int64(pf->b, THD_TID, t->tid);
	gctx_pb__cstr(pf->b, THD_NAME, t->name);
	gctx_pb__end(pf->b);
	descriptor_end(pf);
}

static void pf_track(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	struct gctx_perfetto *pf = PF(s);

	if (t->kind == GCTX_TL_PROCESS) {
		process_track(pf, t, ts);
		return;
	}
	if (t->kind == GCTX_TL_THREAD) {
		thread_track(pf, t, ts);
		return;
	}
	descriptor_begin(pf, t, ts);
	if (t->parent)
		gctx_pb__varint(pf->b, TD_PARENT_UUID, track_id(pf, t->parent, false));
	gctx_pb__cstr(pf->b, TD_NAME, t->name);
	if (t->kind == GCTX_TL_COUNTER) {
		gctx_pb__begin(pf->b, TD_COUNTER);
		/* the enum only for bytes: a unit enum would hide unit_name ("ioctls/s") */
		if (t->unit_bytes)
			gctx_pb__varint(pf->b, CD_UNIT, UNIT_SIZE_BYTES);
		else if (t->unit)
			gctx_pb__cstr(pf->b, CD_UNIT_NAME, t->unit);
		gctx_pb__end(pf->b);
	} else if (t->kind == GCTX_TL_GPU) {
		gctx_pb__varint(pf->b, TD_SIBLING_MERGE, MERGE_NONE);
	}
	descriptor_end(pf);
}

/* A new name: the descriptor again (its name wins), and for a process its ProcessTree entry. */
static void pf_rename(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	struct gctx_perfetto *pf = PF(s);

	if (t->kind == GCTX_TL_THREAD)
		thread_track(pf, t, ts);
	else if (t->kind == GCTX_TL_PROCESS)
		process_track(pf, t, ts);
}

static void pf_process_end(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	/* named already: the exporter renames before the end */
}

static void pf_cmdline(struct gctx_tl_sink *s, __u64 ts, __u32 pid, __u32 ppid, const char *args,
		       __u32 len)
{
	/* argv is an arg of the life slice and of each exec instant: as a ProcessTree command
	 * line it would rename the process after argv[0] (output/names.h) */
}

static void string_value(struct gctx_perfetto *pf, const char *s, size_t n)
{
	__u32 iid = n <= VALUE_LEN_MAX ? intern(pf, T_VALUES, s, n) : 0;

	if (iid)
		gctx_pb__varint(pf->b, DA_STRING_IID, iid);
	else
		gctx_pb__string(pf->b, DA_STRING, s, n);
}

static void annotation(struct gctx_perfetto *pf, const struct gctx_tl_arg *a)
{
	struct gctx_pb *b = pf->b;
	__u32 i, n, iid;

	gctx_pb__begin(b, TE_DEBUG_ANNOTATIONS);
	iid = intern(pf, T_KEYS, a->key, strlen(a->key));
	if (iid)
		gctx_pb__varint(b, DA_NAME_IID, iid);
	else
		gctx_pb__cstr(b, DA_NAME, a->key);
	switch (a->type) {
	case GCTX_TL_U64:
		gctx_pb__varint(b, DA_UINT, a->u);
		break;
	case GCTX_TL_S64:
		gctx_pb__int64(b, DA_INT, a->s);
		break;
	case GCTX_TL_BOOL:
		gctx_pb__varint(b, DA_BOOL, a->b);
		break;
	case GCTX_TL_STR:
		string_value(pf, a->str.p, strnlen(a->str.p, a->str.n));
		break;
	case GCTX_TL_STRV:
		for (i = 0; i < a->str.n; i += n + 1) {
			n = strnlen(a->str.p + i, a->str.n - i);
			if (!n && i + 1 >= a->str.n)
				break; /* the trailing NUL */
			gctx_pb__begin(b, DA_ARRAY);
			gctx_pb__string(b, DA_STRING, a->str.p + i, n);
			gctx_pb__end(b);
		}
		break;
	case GCTX_TL_U32V:
		for (i = 0; i < a->u32v.n; i++) {
			gctx_pb__begin(b, DA_ARRAY);
			gctx_pb__varint(b, DA_UINT, a->u32v.v[i]);
			gctx_pb__end(b);
		}
		break;
	case GCTX_TL_STACK:
		break; /* written as the event's callstack */
	}
	gctx_pb__end(b);
}

/*
 * The inline form (TrackEvent.callstack), frames outermost first as the proto asks. Not the
 * interned one (callstack_iid): that is the profiler's Callstack of interned frames, mappings
 * and relative pcs, with no source file or line, and a stack is rarely seen twice here.
 */
static void callstack(struct gctx_perfetto *pf, const struct gctx_tl_stack *st)
{
	struct gctx_pb *b = pf->b;

	gctx_pb__begin(b, TE_CALLSTACK);
	for (__u32 i = st->nframes; i > 0; i--) {
		const struct gctx_tl_frame *f = &st->frames[i - 1];

		gctx_pb__begin(b, CSK_FRAMES);
		gctx_pb__cstr(b, CSF_FUNCTION, f->function);
		if (f->file && f->file[0])
			gctx_pb__cstr(b, CSF_FILE, f->file);
		if (f->line)
			gctx_pb__varint(b, CSF_LINE, f->line);
		gctx_pb__end(b);
	}
	gctx_pb__end(b);
}

static void event(struct gctx_perfetto *pf, int type, const struct gctx_tl_event *e)
{
	const struct gctx_tl_stack *st = NULL;
	__u32 i, iid;

	packet_begin(pf, e->ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_EVENT);
	gctx_pb__varint(pf->b, TE_TYPE, type);
	gctx_pb__varint(pf->b, TE_TRACK_UUID, track_id(pf, e->track->uuid, false));
	if (e->name) {
		iid = intern(pf, T_NAMES, e->name, strlen(e->name));
		if (iid)
			gctx_pb__varint(pf->b, TE_NAME_IID, iid);
		else
			gctx_pb__cstr(pf->b, TE_NAME, e->name);
	}
	if (e->cat) {
		iid = intern(pf, T_CATS, e->cat, strlen(e->cat));
		if (iid)
			gctx_pb__varint(pf->b, TE_CATEGORY_IIDS, iid);
		else
			gctx_pb__cstr(pf->b, TE_CATEGORIES, e->cat);
	}
	for (i = 0; i < e->nargs; i++) {
		if (e->args[i].type == GCTX_TL_STACK)
			st = e->args[i].stack; /* a field of its own, not an annotation */
		else
			annotation(pf, &e->args[i]);
	}
	if (st)
		callstack(pf, st);
	if (e->flow_out)
		gctx_pb__fixed64(pf->b, TE_FLOW_IDS, e->flow_out);
	if (e->flow_in)
		gctx_pb__fixed64(pf->b, TE_TERMINATING_FLOW_IDS, e->flow_in);
	gctx_pb__end(pf->b);
	interned_data(pf);
	packet_end(pf);
}

static void pf_slice_begin(struct gctx_tl_sink *s, const struct gctx_tl_event *e)
{
	event(PF(s), TYPE_SLICE_BEGIN, e);
}

static void pf_slice_end(struct gctx_tl_sink *s, const struct gctx_tl_event *e)
{
	event(PF(s), TYPE_SLICE_END, e);
}

static void pf_instant(struct gctx_tl_sink *s, const struct gctx_tl_event *e)
{
	event(PF(s), TYPE_INSTANT, e);
}

static void pf_counter(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts, __s64 v)
{
	struct gctx_perfetto *pf = PF(s);

	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_EVENT);
	gctx_pb__varint(pf->b, TE_TYPE, TYPE_COUNTER);
	gctx_pb__varint(pf->b, TE_TRACK_UUID, track_id(pf, t->uuid, false));
	gctx_pb__int64(pf->b, TE_COUNTER_VALUE, v);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

static int pf_end(struct gctx_tl_sink *s, const struct gctx_tl_arg *args, __u32 nargs)
{
	struct gctx_perfetto *pf = PF(s);

	if (!pf->err && ferror(pf->out))
		pf->err = -EIO;
	return pf->err;
}

static void pf_free(struct gctx_tl_sink *s)
{
	struct gctx_perfetto *pf = PF(s);
	int i;

	if (!pf)
		return;
	for (i = 0; i < T_MAX; i++)
		gctx_strtab__free(pf->tab[i]);
	gctx_hmap__free(&pf->uuids);
	gctx_hmap__free(&pf->untraced);
	gctx_pb__free(pf->b);
	free(pf);
}

static const struct gctx_tl_ops perfetto_ops = {
    .process_is_main_thread = false,
    .begin = pf_begin,
    .track = pf_track,
    .rename = pf_rename,
    .process_end = pf_process_end,
    .cmdline = pf_cmdline,
    .slice_begin = pf_slice_begin,
    .slice_end = pf_slice_end,
    .instant = pf_instant,
    .counter = pf_counter,
    .end = pf_end,
    .free = pf_free,
};

struct gctx_tl_sink *gctx_perfetto__new(FILE *out)
{
	return gctx_perfetto__new_machine(out, 0, NULL, 0);
}

struct gctx_tl_sink *gctx_perfetto__new_machine(FILE *out, __u32 machine, const char *name,
						__s64 boot_shift)
{
	struct gctx_perfetto *pf = calloc(1, sizeof(*pf));
	int i;

	if (!pf)
		return NULL;
	pf->sink.ops = &perfetto_ops;
	pf->out = out;
	pf->machine = machine;
	pf->seq = GCTX_PERFETTO_SEQ_ID + machine;
	pf->uuid_base = (__u64)machine << 40;
	pf->boot_shift = boot_shift;
	pf->machine_name = name;
	pf->b = gctx_pb__new();
	for (i = 0; i < T_MAX; i++)
		pf->tab[i] = i == T_VALUES ? gctx_strtab__new(VALUES_MAX, VALUE_LEN_MAX)
					   : gctx_strtab__new(NAMES_MAX, NAME_LEN_MAX);
	for (i = 0; i < T_MAX && pf->b; i++)
		if (!pf->tab[i])
			break;
	if (!pf->b || i < T_MAX) {
		pf_free(&pf->sink);
		return NULL;
	}
	return &pf->sink;
}
