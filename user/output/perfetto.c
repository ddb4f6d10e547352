// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Perfetto protobuf writer and timeline sink.
 *
 * Every packet carries a timestamp in CLOCK_MONOTONIC (timestamp_clock_id 3), declared the
 * trace clock by the ClockSnapshot that starts the file (it also pins CLOCK_REALTIME to the
 * recording's start, so a view can show wall-clock times), and trusted_packet_sequence_id 1.
 * No interning and no incremental state: no sequence flags are needed. Command lines go
 * through ProcessTree (the trace processor ignores ProcessDescriptor.cmdline); flow ids are
 * fixed64.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/perfetto.h"
#include "lib/utf8.h"

/* Field numbers (shared/reference/perfetto.md, section 1.2). */
enum {
	TRACE_PACKET = 1,

	PKT_PROCESS_TREE = 2,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_CLOCK_ID = 58,
	PKT_TRACK_DESCRIPTOR = 60,

	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	TD_SIBLING_MERGE = 15,

	PD_PID = 1,
	PD_NAME = 6,

	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,

	CD_UNIT = 3,
	CD_UNIT_NAME = 6,

	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_TRACK_UUID = 11,
	TE_CATEGORIES = 22,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,

	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_STRING = 6,
	DA_NAME = 10,
	DA_ARRAY = 12,

	CS_CLOCKS = 1,
	CS_PRIMARY = 2,
	CLK_ID = 1,
	CLK_TIMESTAMP = 2,

	PT_PROCESSES = 1,
	PT_THREADS = 2,
	PTP_PID = 1,
	PTP_PPID = 2,
	PTP_CMDLINE = 3,
	PTT_TID = 1,
	PTT_NAME = 2,
	PTT_TGID = 3,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_MONOTONIC_ID = 3 };
enum { UNIT_COUNT = 2, UNIT_SIZE_BYTES = 3 };
enum { MERGE_NONE = 2 };

#define WT_VARINT 0
#define WT_I64	  1
#define WT_LEN	  2

/* ---- protobuf writer ---- */

struct gctx_pb {
	unsigned char *buf;
	size_t len, cap;
	size_t start[GCTX_PB_MAX_DEPTH]; /* content offset of each open nested message */
	int depth;
	bool failed;
};

struct gctx_pb *gctx_pb__new(void)
{
	return calloc(1, sizeof(struct gctx_pb));
}

void gctx_pb__free(struct gctx_pb *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b);
}

void gctx_pb__reset(struct gctx_pb *b)
{
	b->len = 0;
	b->depth = 0;
	b->failed = false;
}

const unsigned char *gctx_pb__data(const struct gctx_pb *b)
{
	return b->buf;
}

size_t gctx_pb__len(const struct gctx_pb *b)
{
	return b->len;
}

bool gctx_pb__failed(const struct gctx_pb *b)
{
	return b->failed;
}

static bool reserve(struct gctx_pb *b, size_t n)
{
	size_t ncap;
	unsigned char *nb;

	if (b->failed)
		return false;
	if (b->len + n <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 256;
	while (ncap < b->len + n)
		ncap *= 2;
	nb = realloc(b->buf, ncap);
	if (!nb) {
		b->failed = true;
		return false;
	}
	b->buf = nb;
	b->cap = ncap;
	return true;
}

size_t gctx_pb_varint_len(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(unsigned char *p, __u64 v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

static void raw_varint(struct gctx_pb *b, __u64 v)
{
	if (reserve(b, 10))
		b->len += put_varint(b->buf + b->len, v);
}

static void tag(struct gctx_pb *b, __u32 field, __u32 wt)
{
	raw_varint(b, ((__u64)field << 3) | wt);
}

void gctx_pb__varint(struct gctx_pb *b, __u32 field, __u64 v)
{
	tag(b, field, WT_VARINT);
	raw_varint(b, v);
}

void gctx_pb__int64(struct gctx_pb *b, __u32 field, __s64 v)
{
	gctx_pb__varint(b, field, (__u64)v); /* two's complement: negative take 10 bytes */
}

static void raw_le64(struct gctx_pb *b, __u64 v)
{
	int i;

	if (!reserve(b, 8))
		return;
	for (i = 0; i < 8; i++)
		b->buf[b->len++] = (unsigned char)(v >> (8 * i));
}

void gctx_pb__fixed64(struct gctx_pb *b, __u32 field, __u64 v)
{
	tag(b, field, WT_I64);
	raw_le64(b, v);
}

void gctx_pb__double(struct gctx_pb *b, __u32 field, double v)
{
	__u64 u;

	memcpy(&u, &v, sizeof(u));
	gctx_pb__fixed64(b, field, u);
}

void gctx_pb__bytes(struct gctx_pb *b, __u32 field, const void *p, size_t n)
{
	tag(b, field, WT_LEN);
	raw_varint(b, n);
	if (n && reserve(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

void gctx_pb__begin(struct gctx_pb *b, __u32 field)
{
	tag(b, field, WT_LEN);
	if (b->depth >= GCTX_PB_MAX_DEPTH) {
		b->failed = true;
		return;
	}
	b->start[b->depth++] = b->len;
}

void gctx_pb__end(struct gctx_pb *b)
{
	size_t start, n, k;

	if (b->failed || b->depth <= 0) {
		b->failed = true;
		return;
	}
	start = b->start[--b->depth];
	n = b->len - start;
	k = gctx_pb_varint_len(n);
	if (!reserve(b, k))
		return;
	memmove(b->buf + start + k, b->buf + start, n);
	put_varint(b->buf + start, n);
	b->len += k;
}

void gctx_pb__string(struct gctx_pb *b, __u32 field, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, bad = 0, k;

	n = s ? strnlen(s, n) : 0;
	gctx_pb__begin(b, field);
	while (i < n) {
		k = gctx_utf8_seq(p + i, n - i, &bad);
		if (k) {
			i += k;
			continue;
		}
		/* flush the valid run before i, then the replacement character */
		if (i > run && reserve(b, i - run)) {
			memcpy(b->buf + b->len, p + run, i - run);
			b->len += i - run;
		}
		if (reserve(b, 3)) {
			memcpy(b->buf + b->len, "\xef\xbf\xbd", 3);
			b->len += 3;
		}
		i += bad;
		run = i;
	}
	if (n > run && reserve(b, n - run)) {
		memcpy(b->buf + b->len, p + run, n - run);
		b->len += n - run;
	}
	gctx_pb__end(b);
}

/* ---- the sink ---- */

struct gctx_perfetto {
	struct gctx_tl_sink sink;
	FILE *out;
	struct gctx_pb *b;
	int err; /* first write error (-errno) */
};

static struct gctx_perfetto *PF(struct gctx_tl_sink *s)
{
	return (struct gctx_perfetto *)s;
}

static void packet_begin(struct gctx_perfetto *pf, __u64 ts, bool timed)
{
	gctx_pb__reset(pf->b);
	gctx_pb__begin(pf->b, TRACE_PACKET);
	if (timed) {
		gctx_pb__varint(pf->b, PKT_TIMESTAMP, ts);
		gctx_pb__varint(pf->b, PKT_CLOCK_ID, CLOCK_MONOTONIC_ID);
	}
	gctx_pb__varint(pf->b, PKT_SEQ_ID, GCTX_PERFETTO_SEQ_ID);
}

static void packet_end(struct gctx_perfetto *pf)
{
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

static void pf_begin(struct gctx_tl_sink *s, const struct gctx_trace_meta *meta)
{
	struct gctx_perfetto *pf = PF(s);

	/* the trace clock is CLOCK_MONOTONIC; REALTIME at the same instant dates the trace */
	packet_begin(pf, 0, false);
	gctx_pb__begin(pf->b, PKT_CLOCK_SNAPSHOT);
	gctx_pb__begin(pf->b, CS_CLOCKS);
	gctx_pb__varint(pf->b, CLK_ID, CLOCK_MONOTONIC_ID);
	gctx_pb__varint(pf->b, CLK_TIMESTAMP, meta->start_mono_ns);
	gctx_pb__end(pf->b);
	gctx_pb__begin(pf->b, CS_CLOCKS);
	gctx_pb__varint(pf->b, CLK_ID, CLOCK_REALTIME_ID);
	gctx_pb__varint(pf->b, CLK_TIMESTAMP, meta->start_wall_ns);
	gctx_pb__end(pf->b);
	gctx_pb__varint(pf->b, CS_PRIMARY, CLOCK_MONOTONIC_ID);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

static void pf_track(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	struct gctx_perfetto *pf = PF(s);
	const char *name = t->name ? t->name : "";

	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_DESCRIPTOR);
	gctx_pb__varint(pf->b, TD_UUID, t->uuid);
	switch (t->kind) {
	case GCTX_TL_PROCESS:
		/* named when it ends (pf_process_end): the trace processor keeps the first name */
		gctx_pb__begin(pf->b, TD_PROCESS);
		gctx_pb__int64(pf->b, PD_PID, t->pid);
		gctx_pb__end(pf->b);
		break;
	case GCTX_TL_THREAD:
		gctx_pb__begin(pf->b, TD_THREAD);
		gctx_pb__int64(pf->b, THD_PID, t->pid);
		gctx_pb__int64(pf->b, THD_TID, t->tid);
		gctx_pb__string(pf->b, THD_NAME, name, strlen(name));
		gctx_pb__end(pf->b);
		break;
	case GCTX_TL_COUNTER:
		gctx_pb__varint(pf->b, TD_PARENT_UUID, t->parent);
		gctx_pb__string(pf->b, TD_NAME, name, strlen(name));
		gctx_pb__begin(pf->b, TD_COUNTER);
		gctx_pb__varint(pf->b, CD_UNIT, t->unit_bytes ? UNIT_SIZE_BYTES : UNIT_COUNT);
		if (t->unit)
			gctx_pb__string(pf->b, CD_UNIT_NAME, t->unit, strlen(t->unit));
		gctx_pb__end(pf->b);
		break;
	case GCTX_TL_GPU:
		gctx_pb__varint(pf->b, TD_PARENT_UUID, t->parent);
		gctx_pb__string(pf->b, TD_NAME, name, strlen(name));
		gctx_pb__varint(pf->b, TD_SIBLING_MERGE, MERGE_NONE);
		break;
	case GCTX_TL_GLOBAL:
		gctx_pb__string(pf->b, TD_NAME, name, strlen(name));
		break;
	}
	gctx_pb__end(pf->b);
	packet_end(pf);
}

/*
 * A process's name: the trace processor takes the first ProcessDescriptor.process_name it sees
 * and lets a ProcessTree command line override it (argv[0]). So the descriptor is named once,
 * with the final name (a forked worker's prctl name, not its parent's); after an exec, argv[0]
 * from the ProcessTree titles it.
 */
static void pf_process_end(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	struct gctx_perfetto *pf = PF(s);
	const char *name = t->name ? t->name : "";

	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_DESCRIPTOR);
	gctx_pb__varint(pf->b, TD_UUID, t->uuid);
	gctx_pb__begin(pf->b, TD_PROCESS);
	gctx_pb__int64(pf->b, PD_PID, t->pid);
	gctx_pb__string(pf->b, PD_NAME, name, strlen(name));
	gctx_pb__end(pf->b);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

static void pf_rename(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	struct gctx_perfetto *pf = PF(s);
	const char *name = t->name ? t->name : "";

	/* process names come from the command line (ProcessTree, at exec); thread names here */
	if (t->kind != GCTX_TL_THREAD)
		return;
	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_PROCESS_TREE);
	gctx_pb__begin(pf->b, PT_THREADS);
	gctx_pb__int64(pf->b, PTT_TID, t->tid);
	gctx_pb__string(pf->b, PTT_NAME, name, strlen(name));
	gctx_pb__int64(pf->b, PTT_TGID, t->pid);
	gctx_pb__end(pf->b);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

static void pf_cmdline(struct gctx_tl_sink *s, __u64 ts, __u32 pid, __u32 ppid, const char *args,
		       __u32 len)
{
	struct gctx_perfetto *pf = PF(s);
	__u32 i = 0, n;

	while (len && !args[len - 1])
		len--;
	if (!len)
		return;
	packet_begin(pf, ts, true);
	gctx_pb__begin(pf->b, PKT_PROCESS_TREE);
	gctx_pb__begin(pf->b, PT_PROCESSES);
	gctx_pb__int64(pf->b, PTP_PID, pid);
	if (ppid)
		gctx_pb__int64(pf->b, PTP_PPID, ppid);
	while (i < len) {
		n = strnlen(args + i, len - i);
		gctx_pb__string(pf->b, PTP_CMDLINE, args + i, n);
		i += n + 1;
	}
	gctx_pb__end(pf->b);
	gctx_pb__end(pf->b);
	packet_end(pf);
}

static void annotation(struct gctx_pb *b, const struct gctx_tl_arg *a)
{
	__u32 i, n;

	gctx_pb__begin(b, TE_DEBUG_ANNOTATIONS);
	gctx_pb__string(b, DA_NAME, a->key, strlen(a->key));
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
		gctx_pb__string(b, DA_STRING, a->str.p, a->str.n);
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
	}
	gctx_pb__end(b);
}

static void event(struct gctx_perfetto *pf, int type, const struct gctx_tl_event *e)
{
	__u32 i;

	packet_begin(pf, e->ts, true);
	gctx_pb__begin(pf->b, PKT_TRACK_EVENT);
	gctx_pb__varint(pf->b, TE_TYPE, type);
	gctx_pb__varint(pf->b, TE_TRACK_UUID, e->track->uuid);
	if (e->name)
		gctx_pb__string(pf->b, TE_NAME, e->name, strlen(e->name));
	if (e->cat)
		gctx_pb__string(pf->b, TE_CATEGORIES, e->cat, strlen(e->cat));
	for (i = 0; i < e->nargs; i++)
		annotation(pf->b, &e->args[i]);
	if (e->flow_out)
		gctx_pb__fixed64(pf->b, TE_FLOW_IDS, e->flow_out);
	if (e->flow_in)
		gctx_pb__fixed64(pf->b, TE_TERMINATING_FLOW_IDS, e->flow_in);
	gctx_pb__end(pf->b);
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
	gctx_pb__varint(pf->b, TE_TRACK_UUID, t->uuid);
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

	if (!pf)
		return;
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
	struct gctx_perfetto *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->b = gctx_pb__new();
	if (!pf->b) {
		free(pf);
		return NULL;
	}
	pf->sink.ops = &perfetto_ops;
	pf->out = out;
	return &pf->sink;
}
