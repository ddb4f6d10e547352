// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Perfetto export: the protobuf writer's encodings, and the timeline a user opens in
 * ui.perfetto.dev for a small training job written as a trace file. The output is decoded here
 * by a strict decoder of the fields we write (an unknown field number or a wrong wire type
 * fails, as protoc would print it as a bare number), then checked for what a user looks for:
 * process and thread tracks, GPU file and context tracks inside their process, slices, the
 * arrows from a parent to its child and from a GPU file or context to its inherited use, and
 * findings searchable by kind with every field as an arg.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "output/timeline/export.h"
#include "gpuctx_events.h"
#include "output/timeline/perfetto.h"
#include "trace/tracefile.h"

#include "builders.h"

/* ---- a strict decoder of what we write ---- */

struct pbr {
	const unsigned char *p, *end;
};

static __u64 rd_varint(struct pbr *r)
{
	__u64 v = 0;
	int shift = 0;

	while (r->p < r->end && shift < 64) {
		unsigned char c = *r->p++;

		v |= (__u64)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	fail_msg("truncated varint");
	return 0;
}

/* Next field: 1 with field number and wire type, 0 at the end. */
static int rd_field(struct pbr *r, __u32 *field, __u32 *wt)
{
	__u64 tag;

	if (r->p >= r->end)
		return 0;
	tag = rd_varint(r);
	*field = (__u32)(tag >> 3);
	*wt = (__u32)(tag & 7);
	return 1;
}

static struct pbr rd_len(struct pbr *r)
{
	__u64 n = rd_varint(r);
	struct pbr sub = {r->p, r->p + n};

	assert_true(n <= (__u64)(r->end - r->p));
	r->p += n;
	return sub;
}

static __u64 rd_fixed64(struct pbr *r)
{
	__u64 v = 0;
	int i;

	assert_true(r->end - r->p >= 8);
	for (i = 0; i < 8; i++)
		v |= (__u64)r->p[i] << (8 * i);
	r->p += 8;
	return v;
}

/* Strict UTF-8 (what a protobuf string must be). */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	size_t i = 0, k, j;

	while (i < n) {
		unsigned char c = s[i];
		unsigned char lo = 0x80, hi = 0xbf;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 2;
		else if (c >= 0xe0 && c <= 0xef)
			k = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 4;
		else
			return false;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
		for (j = 1; j < k; j++) {
			if (i + j >= n || s[i + j] < lo || s[i + j] > hi)
				return false;
			lo = 0x80;
			hi = 0xbf;
		}
		i += k;
	}
	return true;
}

static void rd_string(struct pbr *r, char *dst, size_t len)
{
	struct pbr s = rd_len(r);
	size_t n = (size_t)(s.end - s.p);

	assert_true(utf8_ok(s.p, n));
	if (n >= len)
		n = len - 1;
	memcpy(dst, s.p, n);
	dst[n] = '\0';
}

#define EXPECT_WT(wt, want)                                                                        \
	do {                                                                                       \
		if ((wt) != (want))                                                                \
			fail_msg("field %u: wire type %u, expected %u", field, wt, want);          \
	} while (0)

enum { K_PLAIN, K_PROCESS, K_THREAD, K_COUNTER };

struct trk {
	__u64 uuid, parent;
	int kind;
	__s64 pid, tid;
	__u64 unit, merge, start;
	char name[160];
};

struct evt {
	__u64 ts, track;
	__u64 type;
	char name[160];
	char cat[32];
	__u64 flow_out, flow_in;
	__s64 counter;
	char args[4096];  /* "key=value;" for every debug annotation, arrays as [a,b] */
	char stack[1024]; /* "function|file|line;" per callstack frame, in the file's order */
};

struct decoded {
	struct trk trk[256];
	int ntrk;
	struct evt *ev;
	int nev, cap;
	__u64 clock_mono, clock_real, clock_boot, primary;
	int npackets;
	char cmdlines[2048]; /* "pid:argv0 argv1;" */
	char thread_names[1024];
	char ppids[1024]; /* "pid<ppid;" from ProcessTree */
	/* interned strings by table (0 names, 1 categories, 2 annotation names, 3 values) */
	char intern[4][512][160];
	bool defined[4][512];
	__u64 inc;	 /* the incremental clock's value */
	__u64 def_clock; /* TracePacketDefaults.timestamp_clock_id */
	__u64 first_flags;
};

static struct decoded *cur; /* the trace being decoded: its interned strings */

static const char *interned(int table, __u64 iid)
{
	if (iid == 0 || iid >= 512 || !cur->defined[table][iid])
		fail_msg("interned string %llu of table %d used before it was defined",
			 (unsigned long long)iid, table);
	return cur->intern[table][iid];
}

static void args_append(char *dst, size_t len, const char *fmt, ...)
{
	size_t o = strlen(dst);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst + o, len - o, fmt, ap);
	va_end(ap);
}

static void rd_annotation_value(struct pbr *r, char *out, size_t len);

static void rd_annotation(struct pbr *r, char *out, size_t len, bool named)
{
	__u32 field, wt;
	char name[64] = "", val[1024] = "", arr[2048] = "";
	char s[1024];
	int narr = 0;

	while (rd_field(r, &field, &wt)) {
		switch (field) {
		case 10:
			EXPECT_WT(wt, 2);
			rd_string(r, name, sizeof(name));
			break;
		case 1:
			EXPECT_WT(wt, 0);
			snprintf(name, sizeof(name), "%s", interned(2, rd_varint(r)));
			break;
		case 17:
			EXPECT_WT(wt, 0);
			snprintf(val, sizeof(val), "%s", interned(3, rd_varint(r)));
			break;
		case 2:
		case 3:
			EXPECT_WT(wt, 0);
			snprintf(val, sizeof(val), "%llu", (unsigned long long)rd_varint(r));
			if (field == 2)
				snprintf(val, sizeof(val), "%s",
					 strcmp(val, "0") ? "true" : "false");
			break;
		case 4:
			EXPECT_WT(wt, 0);
			snprintf(val, sizeof(val), "%lld", (long long)rd_varint(r));
			break;
		case 6:
			EXPECT_WT(wt, 2);
			rd_string(r, s, sizeof(s));
			snprintf(val, sizeof(val), "%s", s);
			break;
		case 12: {
			struct pbr sub;

			EXPECT_WT(wt, 2);
			sub = rd_len(r);
			s[0] = '\0';
			rd_annotation_value(&sub, s, sizeof(s));
			args_append(arr, sizeof(arr), "%s%s", narr++ ? "," : "", s);
			break;
		}
		default:
			fail_msg("debug annotation field %u", field);
		}
	}
	if (named)
		assert_true(name[0]);
	if (narr)
		snprintf(val, sizeof(val), "[%s]", arr);
	if (named)
		args_append(out, len, "%s=%s;", name, val);
	else
		args_append(out, len, "%s", val);
}

static void rd_annotation_value(struct pbr *r, char *out, size_t len)
{
	rd_annotation(r, out, len, false);
}

/* TrackEvent.callstack: Callstack {frames = 1}, Frame {function_name = 1, source_file = 2,
 * line_number = 3} */
static void rd_callstack(struct pbr *r, struct evt *e)
{
	__u32 field, wt, f2, w2;

	while (rd_field(r, &field, &wt)) {
		char fn[256] = "", file[256] = "";
		__u64 line = 0;
		struct pbr fr;

		assert_int_equal(field, 1);
		EXPECT_WT(wt, 2);
		fr = rd_len(r);
		while (rd_field(&fr, &f2, &w2)) {
			if (f2 == 1 || f2 == 2) {
				assert_int_equal(w2, 2);
				rd_string(&fr, f2 == 1 ? fn : file, 256);
			} else {
				assert_int_equal(f2, 3);
				assert_int_equal(w2, 0);
				line = rd_varint(&fr);
			}
		}
		assert_true(fn[0]);
		args_append(e->stack, sizeof(e->stack), "%s|%s|%llu;", fn, file,
			    (unsigned long long)line);
	}
}

static void rd_track_event(struct pbr *r, struct evt *e)
{
	__u32 field, wt;

	while (rd_field(r, &field, &wt)) {
		switch (field) {
		case 9:
			EXPECT_WT(wt, 0);
			e->type = rd_varint(r);
			break;
		case 11:
			EXPECT_WT(wt, 0);
			e->track = rd_varint(r);
			break;
		case 23:
			EXPECT_WT(wt, 2);
			rd_string(r, e->name, sizeof(e->name));
			break;
		case 10:
			EXPECT_WT(wt, 0);
			snprintf(e->name, sizeof(e->name), "%s", interned(0, rd_varint(r)));
			break;
		case 3:
			EXPECT_WT(wt, 0);
			snprintf(e->cat, sizeof(e->cat), "%s", interned(1, rd_varint(r)));
			break;
		case 22:
			EXPECT_WT(wt, 2);
			rd_string(r, e->cat, sizeof(e->cat));
			break;
		case 4: {
			struct pbr sub;

			EXPECT_WT(wt, 2);
			sub = rd_len(r);
			rd_annotation(&sub, e->args, sizeof(e->args), true);
			break;
		}
		case 47: /* fixed64, never the deprecated varint field 36 */
			EXPECT_WT(wt, 1);
			e->flow_out = rd_fixed64(r);
			break;
		case 48:
			EXPECT_WT(wt, 1);
			e->flow_in = rd_fixed64(r);
			break;
		case 30:
			EXPECT_WT(wt, 0);
			e->counter = (__s64)rd_varint(r);
			break;
		case 55: {
			struct pbr sub;

			EXPECT_WT(wt, 2);
			assert_false(e->stack[0]); /* one per event */
			sub = rd_len(r);
			rd_callstack(&sub, e);
			break;
		}
		default:
			fail_msg("track event field %u", field);
		}
	}
}

static void rd_descriptor(struct pbr *r, struct trk *t)
{
	__u32 field, wt, f2, w2;
	struct pbr sub;

	while (rd_field(r, &field, &wt)) {
		switch (field) {
		case 1:
			EXPECT_WT(wt, 0);
			t->uuid = rd_varint(r);
			break;
		case 5:
			EXPECT_WT(wt, 0);
			t->parent = rd_varint(r);
			break;
		case 2:
			EXPECT_WT(wt, 2);
			rd_string(r, t->name, sizeof(t->name));
			break;
		case 15:
			EXPECT_WT(wt, 0);
			t->merge = rd_varint(r);
			break;
		case 3:
		case 4:
			EXPECT_WT(wt, 2);
			t->kind = field == 3 ? K_PROCESS : K_THREAD;
			sub = rd_len(r);
			while (rd_field(&sub, &f2, &w2)) {
				if (f2 == 1) {
					assert_int_equal(w2, 0);
					t->pid = (__s64)rd_varint(&sub);
				} else if (f2 == 2 && field == 4) {
					assert_int_equal(w2, 0);
					t->tid = (__s64)rd_varint(&sub);
				} else if ((f2 == 6 && field == 3) || (f2 == 5 && field == 4)) {
					assert_int_equal(w2, 2);
					rd_string(&sub, t->name, sizeof(t->name));
				} else if (f2 == 7 && field == 3) {
					assert_int_equal(w2, 0);
					t->start = rd_varint(&sub);
				} else {
					fail_msg("process/thread descriptor field %u", f2);
				}
			}
			break;
		case 8:
			EXPECT_WT(wt, 2);
			t->kind = K_COUNTER;
			sub = rd_len(r);
			while (rd_field(&sub, &f2, &w2)) {
				if (f2 == 3) {
					assert_int_equal(w2, 0);
					t->unit = rd_varint(&sub);
				} else if (f2 == 6) {
					char unit[32];

					assert_int_equal(w2, 2);
					rd_string(&sub, unit, sizeof(unit));
				} else {
					fail_msg("counter descriptor field %u", f2);
				}
			}
			break;
		default:
			fail_msg("track descriptor field %u", field);
		}
	}
	assert_true(t->uuid != 0);
}

static struct trk *trk_find(struct decoded *d, __u64 uuid)
{
	int i;

	for (i = 0; i < d->ntrk; i++)
		if (d->trk[i].uuid == uuid)
			return &d->trk[i];
	return NULL;
}

static void rd_process_tree(struct pbr *r, struct decoded *d)
{
	__u32 field, wt, f2, w2;
	char s[256];

	while (rd_field(r, &field, &wt)) {
		struct pbr sub;

		EXPECT_WT(wt, 2);
		assert_true(field == 1 || field == 2);
		sub = rd_len(r);
		while (rd_field(&sub, &f2, &w2)) {
			if (w2 == 0) {
				__u64 v = rd_varint(&sub);

				if (f2 == 1)
					args_append(field == 1 ? d->cmdlines : d->thread_names,
						    sizeof(d->cmdlines),
						    "%llu:", (unsigned long long)v);
				if (f2 == 1 && field == 1)
					args_append(d->ppids, sizeof(d->ppids), "%llu<",
						    (unsigned long long)v);
				if (f2 == 2 && field == 1)
					args_append(d->ppids, sizeof(d->ppids), "%llu;",
						    (unsigned long long)v);
				continue;
			}
			assert_int_equal(w2, 2);
			assert_true((field == 1 && f2 == 3) || (field == 2 && f2 == 2));
			rd_string(&sub, s, sizeof(s));
			if (field == 1)
				args_append(d->cmdlines, sizeof(d->cmdlines), "%s ", s);
			else
				args_append(d->thread_names, sizeof(d->thread_names), "%s;", s);
		}
		if (field == 1)
			args_append(d->cmdlines, sizeof(d->cmdlines), ";");
	}
}

static void rd_interned(struct pbr *r, struct decoded *d)
{
	__u32 field, wt, f2, w2;

	while (rd_field(r, &field, &wt)) {
		struct pbr sub;
		int table = field == 2 ? 0 : field == 1 ? 1 : field == 3 ? 2 : field == 29 ? 3 : -1;
		__u64 iid = 0;
		char str[160] = "";

		if (table < 0)
			fail_msg("interned data field %u", field);
		EXPECT_WT(wt, 2);
		sub = rd_len(r);
		while (rd_field(&sub, &f2, &w2)) {
			if (f2 == 1) {
				iid = rd_varint(&sub);
			} else if (f2 == 2) {
				rd_string(&sub, str, sizeof(str));
			} else {
				fail_msg("interned entry field %u", f2);
			}
		}
		assert_true(iid > 0 && iid < 512);
		assert_false(d->defined[table][iid]); /* defined once */
		d->defined[table][iid] = true;
		snprintf(d->intern[table][iid], sizeof(d->intern[table][iid]), "%s", str);
	}
}

static void rd_clock_snapshot(struct pbr *sub, struct decoded *d)
{
	__u32 f3, w3, f4, w4;

	while (rd_field(sub, &f3, &w3)) {
		if (f3 == 2) {
			d->primary = rd_varint(sub);
			continue;
		}
		struct pbr c = rd_len(sub);
		__u64 id = 0, cts = 0, inc = 0;

		while (rd_field(&c, &f4, &w4)) {
			__u64 v = rd_varint(&c);

			if (f4 == 1)
				id = v;
			else if (f4 == 2)
				cts = v;
			else if (f4 == 3)
				inc = v;
			else if (f4 == 4)
				assert_int_equal(v, 1); /* ns */
			else
				fail_msg("clock field %u", f4);
		}
		if (id == 3)
			d->clock_mono = cts;
		if (id == 1)
			d->clock_real = cts;
		if (id == 6)
			d->clock_boot = cts;
		if (id == 64) {
			assert_true(inc); /* the sequence's incremental clock */
			d->inc = cts;
		}
	}
}

static void decode(const unsigned char *buf, size_t len, struct decoded *d)
{
	struct pbr r = {buf, buf + len};
	__u32 field, wt, f2, w2;

	memset(d, 0, sizeof(*d) - 0);
	cur = d;
	while (rd_field(&r, &field, &wt)) {
		struct pbr pkt, te = {NULL, NULL}, sub;
		__u64 ts = 0, seq = 0, clock = 0, flags = 0;
		bool is_event = false, timed = false;
		struct evt e;

		assert_int_equal(field, 1); /* Trace.packet */
		assert_int_equal(wt, 2);
		pkt = rd_len(&r);
		memset(&e, 0, sizeof(e));
		d->npackets++;
		/* interned data may follow the event that uses it: the event is read last */
		while (rd_field(&pkt, &f2, &w2)) {
			switch (f2) {
			case 8:
				assert_int_equal(w2, 0);
				ts = rd_varint(&pkt);
				timed = true;
				break;
			case 58:
				assert_int_equal(w2, 0);
				clock = rd_varint(&pkt);
				break;
			case 10:
				assert_int_equal(w2, 0);
				seq = rd_varint(&pkt);
				break;
			case 13:
				assert_int_equal(w2, 0);
				flags = rd_varint(&pkt);
				break;
			case 12:
				assert_int_equal(w2, 2);
				assert_int_equal(d->first_flags,
						 1); /* the state was cleared first */
				sub = rd_len(&pkt);
				rd_interned(&sub, d);
				break;
			case 59: {
				__u32 f3, w3;

				assert_int_equal(w2, 2);
				sub = rd_len(&pkt);
				while (rd_field(&sub, &f3, &w3)) {
					assert_int_equal(f3, 58);
					d->def_clock = rd_varint(&sub);
				}
				break;
			}
			case 6: /* ClockSnapshot */
				assert_int_equal(w2, 2);
				sub = rd_len(&pkt);
				rd_clock_snapshot(&sub, d);
				break;
			case 60:
				assert_int_equal(w2, 2);
				sub = rd_len(&pkt);
				{
					struct trk t;
					struct trk *old;

					memset(&t, 0, sizeof(t));
					rd_descriptor(&sub, &t);
					old = trk_find(d, t.uuid);
					if (old) { /* a rename: the latest name wins */
						assert_int_equal(old->kind, t.kind);
						assert_true(t.kind == K_PROCESS ||
							    t.kind == K_THREAD);
						assert_int_equal(old->pid, t.pid);
						strcpy(old->name, t.name);
					} else {
						assert_true(d->ntrk < 256);
						if (t.parent) /* parents first */
							assert_non_null(trk_find(d, t.parent));
						d->trk[d->ntrk++] = t;
					}
				}
				break;
			case 11:
				assert_int_equal(w2, 2);
				te = rd_len(&pkt);
				is_event = true;
				break;
			case 2:
				assert_int_equal(w2, 2);
				sub = rd_len(&pkt);
				rd_process_tree(&sub, d);
				break;
			default:
				fail_msg("trace packet field %u", f2);
			}
		}
		assert_int_equal(seq, GCTX_PERFETTO_SEQ_ID);
		if (d->npackets == 1) {
			d->first_flags = flags;
			assert_int_equal(flags, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
			assert_int_equal(d->def_clock, 64);
		}
		if (timed && clock) {
			assert_int_equal(clock, 3); /* an earlier time: absolute CLOCK_MONOTONIC */
		} else if (timed) {
			d->inc += ts; /* a delta on the incremental clock */
			ts = d->inc;
		}
		if (!is_event)
			continue;
		rd_track_event(&te, &e);
		e.ts = ts;
		assert_non_null(trk_find(d, e.track)); /* described before use */
		if (d->nev == d->cap) {
			d->cap = d->cap ? d->cap * 2 : 256;
			d->ev = realloc(d->ev, d->cap * sizeof(*d->ev));
			assert_non_null(d->ev);
		}
		d->ev[d->nev++] = e;
	}
}

/* ---- helpers over the decoded trace ---- */

static char *export_to_mem(const char *trace, size_t *len)
{
	char out[] = "/tmp/gctx_test_pf_out_XXXXXX";
	char err[512];
	char *buf;
	FILE *f;
	int fd = mkstemp(out);

	assert_true(fd >= 0);
	close(fd);
	if (gctx_export_file(trace, out, GCTX_EXPORT_PERFETTO, err, sizeof(err)))
		fail_msg("export failed: %s", err);
	assert_string_equal(err, "");
	f = fopen(out, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	unlink(out);
	return buf;
}

static struct decoded *export_scenario(const char *worker_comm)
{
	char trace[] = "/tmp/gctx_test_pf_trace_XXXXXX";
	struct decoded *d = calloc(1, sizeof(*d));
	size_t len;
	char *buf;
	int fd = mkstemp(trace);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(trace, worker_comm);
	buf = export_to_mem(trace, &len);
	unlink(trace);
	assert_non_null(d);
	decode((unsigned char *)buf, len, d);
	free(buf);
	return d;
}

static void decoded_free(struct decoded *d)
{
	free(d->ev);
	free(d);
}

static struct trk *process_track(struct decoded *d, __s64 pid)
{
	int i;

	for (i = 0; i < d->ntrk; i++)
		if (d->trk[i].kind == K_PROCESS && d->trk[i].pid == pid)
			return &d->trk[i];
	fail_msg("no process track for pid %lld", (long long)pid);
	return NULL;
}

static struct trk *thread_track(struct decoded *d, __s64 tid)
{
	int i;

	for (i = 0; i < d->ntrk; i++)
		if (d->trk[i].kind == K_THREAD && d->trk[i].tid == tid)
			return &d->trk[i];
	fail_msg("no thread track for tid %lld", (long long)tid);
	return NULL;
}

/* The named track whose parent is parent (0: any). */
static struct trk *named_track(struct decoded *d, const char *name, __u64 parent)
{
	int i;

	for (i = 0; i < d->ntrk; i++)
		if (!strcmp(d->trk[i].name, name) && (!parent || d->trk[i].parent == parent))
			return &d->trk[i];
	fail_msg("no track named '%s' under %llu", name, (unsigned long long)parent);
	return NULL;
}

/* The first event of type on track named name (NULL name: any). */
static struct evt *find_event(struct decoded *d, __u64 track, __u64 type, const char *name)
{
	int i;

	for (i = 0; i < d->nev; i++)
		if (d->ev[i].track == track && d->ev[i].type == type &&
		    (!name || !strcmp(d->ev[i].name, name)))
			return &d->ev[i];
	fail_msg("no event '%s' of type %llu on track %llu", name ? name : "*",
		 (unsigned long long)type, (unsigned long long)track);
	return NULL;
}

/* The last event of type on a track: the end of its outermost slice */
static struct evt *last_event(struct decoded *d, __u64 track, __u64 type)
{
	int i;

	for (i = d->nev; i > 0; i--)
		if (d->ev[i - 1].track == track && d->ev[i - 1].type == type)
			return &d->ev[i - 1];
	fail_msg("no event of type %llu on track %llu", (unsigned long long)type,
		 (unsigned long long)track);
	return NULL;
}

static struct evt *flow_end(struct decoded *d, __u64 id)
{
	int i;

	assert_true(id != 0);
	for (i = 0; i < d->nev; i++)
		if (d->ev[i].flow_in == id)
			return &d->ev[i];
	fail_msg("flow %llu has no destination", (unsigned long long)id);
	return NULL;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing \"%s\" in \"%s\"", needle, hay);
}

enum { BEGIN = 1, END = 2, INSTANT = 3, COUNTER = 4 };

/* ---- protobuf writer ---- */

static void test_pb_varints(void **state)
{
	static const struct {
		__u64 v;
		unsigned char enc[10];
		size_t n;
	} cases[] = {
	    {0, {0x00}, 1},
	    {1, {0x01}, 1},
	    {127, {0x7f}, 1},
	    {128, {0x80, 0x01}, 2},
	    {300, {0xac, 0x02}, 2},
	    {1ULL << 63, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 10},
	};
	struct gctx_pb *b = gctx_pb__new();
	size_t i;

	assert_non_null(b);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gctx_pb__reset(b);
		gctx_pb__varint(b, 1, cases[i].v); /* tag 0x08 */
		assert_int_equal(gctx_pb__len(b), 1 + cases[i].n);
		assert_int_equal(gctx_pb__data(b)[0], 0x08);
		assert_memory_equal(gctx_pb__data(b) + 1, cases[i].enc, cases[i].n);
		assert_int_equal(gctx_pb_varint_len(cases[i].v), cases[i].n);
	}
	/* int64 -1: ten bytes of two's complement, not zigzag */
	gctx_pb__reset(b);
	gctx_pb__int64(b, 4, -1);
	assert_int_equal(gctx_pb__len(b), 11);
	assert_int_equal(gctx_pb__data(b)[0], 0x20);
	assert_int_equal(gctx_pb__data(b)[10], 0x01);
	/* field 47 fixed64: a two-byte tag with wire type 1, then 8 little-endian bytes */
	gctx_pb__reset(b);
	gctx_pb__fixed64(b, 47, 0x0102030405060708ULL);
	assert_int_equal(gctx_pb__len(b), 10);
	assert_int_equal(gctx_pb__data(b)[0], ((47 << 3 | 1) & 0x7f) | 0x80);
	assert_int_equal(gctx_pb__data(b)[1], (47 << 3 | 1) >> 7);
	assert_int_equal(gctx_pb__data(b)[2], 0x08);
	assert_int_equal(gctx_pb__data(b)[9], 0x01);
	assert_false(gctx_pb__failed(b));
	gctx_pb__free(b);
}

static void test_pb_nested(void **state)
{
	struct gctx_pb *b = gctx_pb__new();
	char big[200];
	struct pbr r, sub, inner;
	__u32 field, wt;
	int depth;

	memset(big, 'x', sizeof(big));
	gctx_pb__begin(b, 1);
	gctx_pb__varint(b, 8, 5);
	gctx_pb__begin(b, 11);
	gctx_pb__bytes(b, 23, big, sizeof(big)); /* > 127 bytes: a two-byte length */
	gctx_pb__end(b);
	gctx_pb__end(b);
	assert_false(gctx_pb__failed(b));
	r = (struct pbr){gctx_pb__data(b), gctx_pb__data(b) + gctx_pb__len(b)};
	assert_true(rd_field(&r, &field, &wt) && field == 1 && wt == 2);
	sub = rd_len(&r);
	assert_true(r.p == r.end);
	assert_true(rd_field(&sub, &field, &wt) && field == 8);
	assert_int_equal(rd_varint(&sub), 5);
	assert_true(rd_field(&sub, &field, &wt) && field == 11 && wt == 2);
	inner = rd_len(&sub);
	assert_true(rd_field(&inner, &field, &wt) && field == 23);
	assert_int_equal(inner.p[0], 0xc8); /* 200 = 0xc8 0x01 */
	assert_int_equal(inner.p[1], 0x01);
	sub = rd_len(&inner);
	assert_int_equal(sub.end - sub.p, sizeof(big));
	assert_true(inner.p == inner.end);
	/* an end without a begin, and nesting too deep, fail instead of writing garbage */
	gctx_pb__reset(b);
	gctx_pb__end(b);
	assert_true(gctx_pb__failed(b));
	gctx_pb__reset(b);
	for (depth = 0; depth <= GCTX_PB_MAX_DEPTH; depth++)
		gctx_pb__begin(b, 1);
	assert_true(gctx_pb__failed(b));
	gctx_pb__free(b);
}

static void test_pb_string_utf8(void **state)
{
	/* quote, backslash, newline kept; invalid bytes -> U+FFFD; stops at NUL */
	static const char in[] = "a\"\\\n\xff\xc3\x28\xe2\x82\xac\0tail";
	static const char want[] = "a\"\\\n\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac";
	struct gctx_pb *b = gctx_pb__new();
	struct pbr r;
	__u32 field, wt;
	char s[64];

	gctx_pb__string(b, 2, in, sizeof(in) - 1);
	r = (struct pbr){gctx_pb__data(b), gctx_pb__data(b) + gctx_pb__len(b)};
	assert_true(rd_field(&r, &field, &wt) && field == 2 && wt == 2);
	rd_string(&r, s, sizeof(s)); /* asserts valid UTF-8 */
	assert_string_equal(s, want);
	gctx_pb__free(b);
}

/* ---- the timeline ---- */

static void test_clock_and_packets(void **state)
{
	struct decoded *d = export_scenario("pt_worker");
	int i;

	/* BOOTTIME is the trace clock (the trace processor always syncs it): a trace written
	 * before BOOTTIME was recorded takes it equal to MONOTONIC */
	assert_int_equal(d->primary, 6);
	assert_int_equal(d->clock_mono, T0);
	assert_int_equal(d->clock_boot, T0);
	assert_int_equal(d->clock_real, WALL0); /* wall-clock start: line the trace up with logs */
	for (i = 0; i < d->nev; i++)
		assert_true(d->ev[i].ts >= T0 && d->ev[i].ts <= T0 + 20000 + 10000000);
	decoded_free(d);
}

static void test_process_and_thread_tracks(void **state)
{
	struct decoded *d = export_scenario("pt_worker");
	struct trk *p999 = process_track(d, 999), *p1000 = process_track(d, 1000);
	struct trk *p1001 = process_track(d, 1001), *t1100 = thread_track(d, 1100);
	struct evt *life, *end;

	/* titled by name: the final comm (an exec's argv[0] comes through ProcessTree) */
	assert_string_equal(p1000->name, "trainer");
	assert_string_equal(p1001->name, "pt_worker");
	assert_string_equal(p999->name, "bash");
	/* ProcessTree names each process as its descriptor does and links it to its parent */
	assert_contains(d->cmdlines, "1000:trainer ;");
	assert_contains(d->cmdlines, "1001:pt_worker ;");
	assert_contains(d->ppids, "1001<1000;");
	assert_contains(d->ppids, "1000<999;");
	/* the main thread carries its latest name (its descriptor is sent again on a rename) */
	assert_string_equal(thread_track(d, 1000)->name, "trainer");
	assert_int_equal(p1000->start, T0 + 1000); /* fork time on the trace clock */
	/* threads nest in their process through their pid */
	assert_int_equal(t1100->pid, 1000);
	assert_int_equal(thread_track(d, 1000)->pid, 1000);
	/* the process's life from fork to exit, with argv and the exit status */
	life = find_event(d, p1000->uuid, BEGIN, "process 1000");
	assert_int_equal(life->ts, T0 + 1000);
	assert_contains(life->args, "ppid=999;");
	end = last_event(d, p1000->uuid, END);
	assert_int_equal(end->ts, T0 + 14000);
	assert_contains(end->args, "exit_code=0;");
	assert_contains(end->args, "comm=trainer;"); /* the name it ended with */
	end = last_event(d, p1001->uuid, END);
	assert_contains(end->args, "signal=SIGSEGV;");
	assert_contains(end->args, "core_dumped=true;");
	life = find_event(d, p1001->uuid, BEGIN, "process 1001");
	assert_contains(life->args, "argv=[python3,train.py,--epochs,1];"); /* inherited */
	/* the exec, with the new argv */
	assert_contains(find_event(d, p1000->uuid, INSTANT, "exec python3")->args,
			"argv=[python3,train.py,--epochs,1];");
	/* the thread's life */
	assert_int_equal(find_event(d, t1100->uuid, BEGIN, "thread 1100")->ts, T0 + 8000);
	assert_int_equal(find_event(d, t1100->uuid, END, NULL)->ts, T0 + 10000);
	decoded_free(d);
}

static void test_gpu_file_and_context_tracks(void **state)
{
	struct decoded *d = export_scenario("pt_worker");
	struct trk *p1000 = process_track(d, 1000), *p1001 = process_track(d, 1001);
	struct trk *f1000 = named_track(d, "file #1 nvidiactl", p1000->uuid);
	struct trk *f1001 = named_track(d, "file #1 nvidiactl", p1001->uuid);
	struct trk *client, *tsg;
	struct evt *e;

	/* custom tracks inside the process, never merged with a same-name sibling */
	assert_int_equal(f1000->kind, K_PLAIN);
	assert_int_equal(f1000->merge, 2);
	/* the holding: opened by 1000, inherited by 1001 */
	e = find_event(d, f1000->uuid, BEGIN, "opened");
	assert_int_equal(e->ts, T0 + 3000);
	assert_contains(e->args, "path=/dev/nvidiactl;");
	assert_contains(e->args, "fds=[3];");
	e = find_event(d, f1001->uuid, BEGIN, "inherited from 1000");
	assert_int_equal(e->ts, T0 + 11000);
	/* contexts: the RM client under the file, the channel group under the client */
	client = named_track(d, "ctx rm-client 0xc1d00001 (NV01_ROOT_CLIENT)", f1000->uuid);
	tsg = named_track(d, "ctx rm-channel-group 0xcaf00003 (KEPLER_CHANNEL_GROUP_A)",
			  client->uuid);
	e = find_event(d, client->uuid, BEGIN, "rm-client 0xc1d00001 (NV01_ROOT_CLIENT)");
	assert_int_equal(e->ts, T0 + 4000);
	assert_contains(e->args, "creator_pid=1000;");
	/* the ioctls with decoded names and the driver's status */
	e = find_event(d, f1000->uuid, BEGIN, "RM_ALLOC");
	assert_contains(e->args, "status=NV_OK;");
	assert_contains(e->args, "class=NV01_ROOT_CLIENT");
	e = find_event(d, tsg->uuid, BEGIN, "RM_CONTROL"); /* thread 1100, on the context */
	assert_contains(e->args, "tid=1100;");
	e = find_event(d, f1001->uuid, BEGIN, "RM_CONTROL"); /* the worker's, on its file */
	assert_contains(e->args, "status=NV_OK;");
	/* the context lives until the file's last holder is gone */
	assert_int_equal(last_event(d, client->uuid, END)->ts, T0 + 14000);
	decoded_free(d);
}

static void test_counters(void **state)
{
	struct decoded *d = export_scenario("pt_worker");
	struct trk *p1000 = process_track(d, 1000);
	struct trk *mem = named_track(d, "GPU memory allocated (driver objects)", p1000->uuid);
	struct trk *files = named_track(d, "live GPU files", p1000->uuid);
	struct trk *rate = named_track(d, "ioctl rate", p1000->uuid);
	int i, nfiles = 0;

	assert_int_equal(mem->kind, K_COUNTER);
	assert_int_equal(mem->unit, 3); /* UNIT_SIZE_BYTES */
	assert_int_equal(find_event(d, mem->uuid, COUNTER, NULL)->counter, 1LL << 30);
	/* 5 ioctls in the first 10 ms: 3 RM_ALLOC, RM_ALLOC_MEMORY, the thread's RM_CONTROL */
	assert_int_equal(find_event(d, rate->uuid, COUNTER, NULL)->counter, 5 * 100);
	for (i = 0; i < d->nev; i++) {
		if (d->ev[i].track != files->uuid)
			continue;
		assert_int_equal(d->ev[i].type, COUNTER);
		assert_int_equal(d->ev[i].counter, nfiles++ ? 0 : 1); /* 1 while held, then 0 */
	}
	assert_int_equal(nfiles, 2);
	decoded_free(d);
}

static void test_flows(void **state)
{
	struct decoded *d = export_scenario("pt_worker");
	struct trk *p1000 = process_track(d, 1000), *p1001 = process_track(d, 1001);
	struct trk *f1000 = named_track(d, "file #1 nvidiactl", p1000->uuid);
	struct trk *f1001 = named_track(d, "file #1 nvidiactl", p1001->uuid);
	struct trk *client = named_track(d, "ctx rm-client 0xc1d00001 (NV01_ROOT_CLIENT)", 0);
	struct trk *tsg = named_track(d, "ctx rm-channel-group 0xcaf00003 (KEPLER_CHANNEL_GROUP_A)",
				      client->uuid);
	struct evt *src, *dst;

	/* fork: the forking thread -> the child's life */
	src = find_event(d, thread_track(d, 1000)->uuid, INSTANT, "fork 1001");
	dst = flow_end(d, src->flow_out);
	assert_int_equal(dst->track, p1001->uuid);
	assert_string_equal(dst->name, "process 1001");
	assert_true(dst->ts >= src->ts);
	/* thread creation */
	src = find_event(d, thread_track(d, 1000)->uuid, INSTANT, "clone thread 1100");
	assert_int_equal(flow_end(d, src->flow_out)->track, thread_track(d, 1100)->uuid);
	/* inheritance: the parent's file track -> the child's holding */
	src = find_event(d, f1000->uuid, INSTANT, "inherited by 1001");
	dst = flow_end(d, src->flow_out);
	assert_int_equal(dst->track, f1001->uuid);
	assert_string_equal(dst->name, "inherited from 1000");
	/* the inherited use: the context it addressed -> the child's call */
	src = find_event(d, tsg->uuid, INSTANT, "used by 1001 (inherited)");
	dst = flow_end(d, src->flow_out);
	assert_int_equal(dst->track, f1001->uuid);
	assert_string_equal(dst->name, "RM_CONTROL");
	assert_int_equal(dst->ts, T0 + 12000);
	decoded_free(d);
}

static void test_findings(void **state)
{
	static const char *const fields[] = {
	    "id=",
	    "kind=",
	    "severity=",
	    "pid=",
	    "tid=",
	    "opener_pid=",
	    "file_id=",
	    "device_kind=",
	    "time_ns=",
	    "event=",
	    "related_finding=",
	    "chain=",
	    "exec_between=",
	    "later_used=",
	    "uses=",
	    "errno=",
	    "status=",
	    "call=",
	    "detail=",
	};
	struct decoded *d = export_scenario("pt_worker");
	struct trk *p1001 = process_track(d, 1001);
	struct evt *use, *crash;
	int i, n = 0;
	size_t k;

	/* on the offending process's track, named by kind and severity */
	use = find_event(d, p1001->uuid, INSTANT, "inherited-gpu-use (error)");
	crash = find_event(d, p1001->uuid, INSTANT, "crash-after-inheritance (error)");
	find_event(d, p1001->uuid, INSTANT, "fork-with-gpu-state (warning)");
	assert_int_equal(use->ts, T0 + 12000);
	assert_int_equal(crash->ts, T0 + 13000);
	for (k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		assert_contains(use->args, fields[k]);
		assert_contains(crash->args, fields[k]);
	}
	assert_contains(use->args, "chain=[1000,1001];");
	assert_contains(use->args, "call=RM_CONTROL;");
	assert_contains(use->args, "opener_pid=1000;");
	assert_contains(crash->args, "call=SIGSEGV;");
	/* a search for the kind finds exactly the findings of that kind */
	for (i = 0; i < d->nev; i++)
		if (strstr(d->ev[i].name, "inherited-gpu-use"))
			n++;
	assert_int_equal(n, 1);
	decoded_free(d);
}

/* A trace of its own at path (a mkstemp template), bash 999 forking 1000 in it. */
static struct gctx_trace_writer *trace_new(char *path, const char *cmdline)
{
	struct gctx_trace_writer *w;
	struct gctx_trace_meta meta;
	int err, fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	meta_fill(&meta, cmdline);
	w = gctx_trace_writer__new(path, &meta, &err);
	assert_non_null(w);
	scn_fork(w, 999, 1000, T0 + 1000, "bash", false);
	return w;
}

/* Close it, export it and decode the timeline. */
static struct decoded *trace_export(struct gctx_trace_writer *w, const char *path)
{
	struct decoded *d = calloc(1, sizeof(*d));
	size_t len;
	char *buf;

	assert_non_null(d);
	assert_int_equal(gctx_trace_writer__free(w), 0);
	buf = export_to_mem(path, &len);
	unlink(path);
	decode((unsigned char *)buf, len, d);
	free(buf);
	return d;
}

/* ---- call stacks on their events (issue 11) ---- */

static void put_stack(struct gctx_trace_writer *w, __u32 pid, __u64 ts, __u32 role, __u32 trigger,
		      __u64 key, bool py)
{
	struct {
		struct gctx_rec_stack h;
		struct gctx_rec_frame f[2];
	} r;

	memset(&r, 0, sizeof(r));
	r.h.pid = r.h.tid = pid;
	r.h.ts_ns = ts;
	r.h.role = role;
	r.h.trigger = trigger;
	r.h.key = key;
	r.h.nframes = 2;
	/* innermost: a native frame without DWARF lines; then the user's Python frame */
	r.f[0].kind = GCTX_FRAME_NATIVE;
	r.f[0].offset = 0x4b;
	snprintf(r.f[0].function, sizeof(r.f[0].function), "lib_call");
	snprintf(r.f[0].module, sizeof(r.f[0].module), "/lib/x86_64-linux-gnu/libc.so.6");
	r.f[1].kind = py ? GCTX_FRAME_PYTHON : GCTX_FRAME_NATIVE;
	r.f[1].line = 40 + role;
	snprintf(r.f[1].function, sizeof(r.f[1].function), "role%u", role);
	snprintf(r.f[1].file, sizeof(r.f[1].file), "train.py");
	snprintf(r.f[1].module, sizeof(r.f[1].module), py ? "" : "/opt/app/train");
	put(w, GCTX_REC_STACK, &r, sizeof(r));
}

/* write_scenario's job with its stacks: init before the open, fork after the fork (as the
 * collector writes them), use before the child's ioctl, crash before its exit, and a stack of
 * an event the trace lacks. */
static struct decoded *export_stacks(void)
{
	char trace[] = "/tmp/gctx_test_pf_trace_XXXXXX";
	struct gctx_trace_writer *w = trace_new(trace, "-- python3 train.py");
	struct gctx_ev_open op;

	put_stack(w, 1000, T0 + 2990, GCTX_STACK_INIT, 3, SCN_CTL_FILE, true);
	op = ev_open_dev(1000, T0 + 3000, "trainer", SCN_CTL_FILE, 3, 02, GCTX_DEV_NVIDIACTL);
	put(w, GCTX_EV_OPEN, &op, sizeof(op));
	scn_rm_alloc(w, 1000, T0 + 4000, "trainer", 0, 0, SCN_CLIENT, 0x41);
	scn_fork(w, 1000, 1001, T0 + 11000, "trainer", false);
	put_stack(w, 1000, T0 + 11001, GCTX_STACK_FORK, 1001, 0, true);
	put_stack(w, 1001, T0 + 11990, GCTX_STACK_USE, 3, SCN_CTL_FILE, false);
	scn_rm_control(w, 1001, 1001, T0 + 12000, "worker", SCN_CLIENT);
	put_stack(w, 1001, T0 + 12500, GCTX_STACK_USE, 9, 0xdead, true);
	put_stack(w, 1001, T0 + 12900, GCTX_STACK_CRASH, 11, 0, true);
	scn_exit(w, 1001, 1001, T0 + 13000, "worker", 11 | 0x80, true);
	scn_exit(w, 1000, 1000, T0 + 14000, "trainer", 0, true);
	return trace_export(w, trace);
}

static void test_stacks_on_events(void **state)
{
	struct decoded *d = export_stacks();
	struct evt *e;
	int i, n = 0;

	/* the fork instant in the parent, frames outermost first */
	e = find_event(d, thread_track(d, 1000)->uuid, INSTANT, "fork 1001");
	assert_string_equal(e->stack,
			    "role2|train.py|42;lib_call+0x4b|/lib/x86_64-linux-gnu/libc.so.6|0;");
	assert_contains(e->args, "site=train.py:42 in role2 <- lib_call+0x4b (libc.so.6);");
	/* the first open's holding slice; the child's first ioctl (a native frame with a line) */
	for (i = 0; i < d->nev; i++) {
		if (!d->ev[i].stack[0])
			continue;
		n++;
		if (!strcmp(d->ev[i].name, "opened"))
			assert_string_equal(d->ev[i].stack, "role1|train.py|41;lib_call+0x4b|"
							    "/lib/x86_64-linux-gnu/libc.so.6|0;");
		else if (!strcmp(d->ev[i].name, "RM_CONTROL"))
			assert_string_equal(d->ev[i].stack, "role3|train.py|43;lib_call+0x4b|"
							    "/lib/x86_64-linux-gnu/libc.so.6|0;");
		else if (strcmp(d->ev[i].name, "fork 1001"))
			assert_true(!strcmp(d->ev[i].name, "fatal signal SIGSEGV") ||
				    !strcmp(d->ev[i].name, "stack: use"));
		assert_null(strstr(d->ev[i].args, "stack=")); /* not an annotation too */
	}
	assert_int_equal(n, 5);
	/* the crash and the stack of a missing event: instants of their own, on the thread */
	e = find_event(d, thread_track(d, 1001)->uuid, INSTANT, "fatal signal SIGSEGV");
	assert_int_equal(e->ts, T0 + 12900);
	assert_contains(e->args, "site=train.py:44 in role4");
	e = find_event(d, thread_track(d, 1001)->uuid, INSTANT, "stack: use");
	assert_int_equal(e->ts, T0 + 12500);
	assert_contains(e->args, "role=use;");
	decoded_free(d);
}

static void test_hostile_names(void **state)
{
	/* quotes, backslashes, a newline and invalid UTF-8 in a comm */
	struct decoded *d = export_scenario("w\"\\\n\xff\xfe'q");
	struct trk *p1001 = process_track(d, 1001);

	/* decode() asserted every string is valid UTF-8 */
	assert_string_equal(p1001->name, "w\"\\\n\xef\xbf\xbd\xef\xbf\xbd'q");
	decoded_free(d);
}

/* An API call whose return was not recorded (kernel launches under --launches) is an instant:
 * a begin and an end at one time would close the enclosing slice in a trace processor. */
static void test_entry_only_call_is_instant(void **state)
{
	char trace[] = "/tmp/gctx_test_pf_api_XXXXXX";
	struct gctx_trace_writer *w = trace_new(trace, "-- ./launch");
	struct gctx_ev_api call, launch;
	struct decoded *d;
	struct evt *e;
	int i;

	call = ev_api(1000, 1000, T0 + 2000, "launch", 500, GCTX_CU_INIT, 0, 0);
	put(w, GCTX_EV_API, &call, sizeof(call));
	launch = ev_api(1000, 1000, T0 + 3000, "launch", 0, GCTX_CU_LAUNCH_KERNEL, 0, 0);
	launch.flags = 0; /* entry only */
	put(w, GCTX_EV_API, &launch, sizeof(launch));
	scn_exit(w, 1000, 1000, T0 + 4000, "launch", 0, true);
	d = trace_export(w, trace);

	e = find_event(d, thread_track(d, 1000)->uuid, INSTANT, "cuLaunchKernel");
	assert_int_equal(e->ts, T0 + 3000);
	assert_contains(e->args, "returned=false;");
	e = find_event(d, thread_track(d, 1000)->uuid, BEGIN, "cuInit");
	assert_int_equal(e->ts, T0 + 2000);
	/* no begin and end at one time anywhere */
	for (i = 1; i < d->nev; i++)
		assert_false(d->ev[i].type == END && d->ev[i - 1].type == BEGIN &&
			     d->ev[i].track == d->ev[i - 1].track &&
			     d->ev[i].ts == d->ev[i - 1].ts);
	decoded_free(d);
}

static void test_deterministic_and_streaming(void **state)
{
	char trace[] = "/tmp/gctx_test_pf_det_XXXXXX";
	char *a, *b;
	size_t la, lb;
	int fd = mkstemp(trace);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(trace, "pt_worker");
	a = export_to_mem(trace, &la);
	b = export_to_mem(trace, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	/* a file of whole Trace.packet fields: appending packets is valid at any point */
	assert_int_equal((unsigned char)a[0], 0x0a);
	free(a);
	free(b);
	unlink(trace);
}

static void test_errors(void **state)
{
	char trace[] = "/tmp/gctx_test_pf_err_XXXXXX";
	char out[] = "/tmp/gctx_test_pf_err_out_XXXXXX";
	char err[512];
	FILE *f;
	long size;
	int fd = mkstemp(trace);

	assert_true(fd >= 0);
	close(fd);
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	write_scenario(trace, "pt_worker");

	assert_int_equal(gctx_export_format_parse("perfetto"), GCTX_EXPORT_PERFETTO);
	assert_int_equal(gctx_export_format_parse("chrome"), GCTX_EXPORT_CHROME);
	assert_int_equal(gctx_export_format_parse("svg"), -1);
	assert_int_equal(
	    gctx_export_file("/nonexistent/t.gctx", out, GCTX_EXPORT_PERFETTO, err, sizeof(err)),
	    -1);
	assert_contains(err, "cannot open /nonexistent/t.gctx");
	assert_null(strchr(err, '\n'));
	assert_int_equal(gctx_export_file(trace, "/nonexistent/dir/o.pftrace", GCTX_EXPORT_PERFETTO,
					  err, sizeof(err)),
			 -1);
	assert_contains(err, "cannot create /nonexistent/dir/o.pftrace");
	assert_int_equal(gctx_export_file(trace, trace, GCTX_EXPORT_PERFETTO, err, sizeof(err)),
			 -1);
	assert_contains(err, "cannot create");
	assert_int_equal(gctx_export_file(trace, out, 42, err, sizeof(err)), -1);

	/* cut inside the last record: what came before is exported, with a warning */
	f = fopen(trace, "r+");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(trace, size - 7), 0);
	assert_int_equal(gctx_export_file(trace, out, GCTX_EXPORT_PERFETTO, err, sizeof(err)), 0);
	assert_contains(err, "ends inside a record");

	/* a flipped byte in a record (the exec's file name, wherever the layout puts it): the
	 * rest is still exported, the skip is a warning */
	f = fopen(trace, "r+");
	assert_non_null(f);
	{
		char *buf = malloc(size), *at;

		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, size, f), size - 7);
		at = memmem(buf, size - 7, "/usr/bin/python3", 16);
		assert_non_null(at);
		fseek(f, at - buf + 5, SEEK_SET);
		free(buf);
	}
	fputc(0xff, f);
	fputc(0xff, f);
	fclose(f);
	assert_int_equal(gctx_export_file(trace, out, GCTX_EXPORT_PERFETTO, err, sizeof(err)), 0);
	assert_contains(err, "bytes skipped at offset");

	/* a failed export leaves what was at the output path untouched */
	f = fopen(out, "w");
	assert_non_null(f);
	fputs("keep me", f);
	fclose(f);
	assert_int_equal(
	    gctx_export_file("/nonexistent/t.gctx", out, GCTX_EXPORT_PERFETTO, err, sizeof(err)),
	    -1);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(err, sizeof(err), f));
	fclose(f);
	assert_string_equal(err, "keep me");
	unlink(out);
	unlink(trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pb_varints),
	    cmocka_unit_test(test_pb_nested),
	    cmocka_unit_test(test_pb_string_utf8),
	    cmocka_unit_test(test_clock_and_packets),
	    cmocka_unit_test(test_process_and_thread_tracks),
	    cmocka_unit_test(test_gpu_file_and_context_tracks),
	    cmocka_unit_test(test_counters),
	    cmocka_unit_test(test_flows),
	    cmocka_unit_test(test_findings),
	    cmocka_unit_test(test_stacks_on_events),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_entry_only_call_is_instant),
	    cmocka_unit_test(test_deterministic_and_streaming),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
