// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Chrome JSON timeline sink (mapping in chrome.h).
 *
 * Trace processors sort events by time and, at one timestamp, put E events first and longer X
 * events before shorter ones; B, i and zero-length X events keep the file order. So slices are
 * B/E pairs (an X with a duration would sort before the B of the slice enclosing it when both
 * start together), and zero-length events are X with dur 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/timeline/chrome.h"
#include "lib/json.h"
#include "output/timeline/names.h"

struct gctx_chrome {
	struct gctx_tl_sink sink;
	FILE *out;
	bool first; /* no event written yet */
	char *esc;  /* escape buffer */
	size_t esc_cap;
	struct gctx_trace_meta meta;
	int err;
};

static struct gctx_chrome *CH(struct gctx_tl_sink *s)
{
	return (struct gctx_chrome *)s;
}

/* A JSON string of n bytes of s (up to its first NUL). */
static void jstr(struct gctx_chrome *c, const char *s, size_t n)
{
	size_t need, len;

	n = s ? strnlen(s, n) : 0;
	need = 6 * n + 1; /* every byte escaped as \u00XX at worst */
	if (need > c->esc_cap) {
		char *nb = realloc(c->esc, need);

		if (!nb) {
			c->err = -ENOMEM;
			fputs("\"\"", c->out);
			return;
		}
		c->esc = nb;
		c->esc_cap = need;
	}
	len = gctx_json_escape(c->esc, c->esc_cap, s ? s : "", n);
	fputc('"', c->out);
	fwrite(c->esc, 1, len, c->out);
	fputc('"', c->out);
}

static void jcstr(struct gctx_chrome *c, const char *s)
{
	jstr(c, s, s ? strlen(s) : 0);
}

/* ns as microseconds with three decimals, exactly */
static void jts(struct gctx_chrome *c, const char *key, __u64 ns)
{
	fprintf(c->out, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static void jargs(struct gctx_chrome *c, const struct gctx_tl_arg *args, __u32 nargs)
{
	__u32 i, j, n;

	fputs("{", c->out);
	for (i = 0; i < nargs; i++) {
		const struct gctx_tl_arg *a = &args[i];

		if (i)
			fputc(',', c->out);
		jcstr(c, a->key);
		fputc(':', c->out);
		switch (a->type) {
		case GCTX_TL_U64:
			fprintf(c->out, "%llu", (unsigned long long)a->u);
			break;
		case GCTX_TL_S64:
			fprintf(c->out, "%lld", (long long)a->s);
			break;
		case GCTX_TL_BOOL:
			fputs(a->b ? "true" : "false", c->out);
			break;
		case GCTX_TL_STR:
			jstr(c, a->str.p, a->str.n);
			break;
		case GCTX_TL_STRV:
			fputc('[', c->out);
			for (j = 0; j < a->str.n; j += n + 1) {
				n = strnlen(a->str.p + j, a->str.n - j);
				if (!n && j + 1 >= a->str.n)
					break; /* the trailing NUL */
				if (j)
					fputc(',', c->out);
				jstr(c, a->str.p + j, n);
			}
			fputc(']', c->out);
			break;
		case GCTX_TL_U32V:
			fputc('[', c->out);
			for (j = 0; j < a->u32v.n; j++)
				fprintf(c->out, "%s%u", j ? "," : "", a->u32v.v[j]);
			fputc(']', c->out);
			break;
		case GCTX_TL_STACK:
			jcstr(c, a->stack->text); /* one frame per line, innermost first */
			break;
		}
	}
	fputs("}", c->out);
}

/* pid and tid of an event on track t */
static void ids(const struct gctx_tl_track *t, __u32 *pid, __u32 *tid)
{
	*pid = t->pid;
	switch (t->kind) {
	case GCTX_TL_THREAD:
		*tid = t->tid;
		break;
	case GCTX_TL_GPU:
		*tid = GCTX_CHROME_LANE_TID + t->lane;
		break;
	default:
		*tid = t->pid;
		break;
	}
}

/* Open an event object: {"ph":"X","pid":..,"tid":.. */
static void ev_open(struct gctx_chrome *c, char ph, __u32 pid, __u32 tid)
{
	fputs(c->first ? "\n" : ",\n", c->out);
	c->first = false;
	fprintf(c->out, "{\"ph\":\"%c\",\"pid\":%u,\"tid\":%u", ph, pid, tid);
}

static void ev_common(struct gctx_chrome *c, const struct gctx_tl_event *e)
{
	if (e->name) {
		fputs(",\"name\":", c->out);
		jcstr(c, e->name);
	}
	if (e->cat) {
		fputs(",\"cat\":", c->out);
		jcstr(c, e->cat);
	}
	if (e->flow_out || e->flow_in) {
		fprintf(c->out, ",\"bind_id\":%llu",
			(unsigned long long)(e->flow_out ? e->flow_out : e->flow_in));
		if (e->flow_out)
			fputs(",\"flow_out\":true", c->out);
		if (e->flow_in)
			fputs(",\"flow_in\":true", c->out);
	}
	if (e->nargs) {
		fputs(",\"args\":", c->out);
		jargs(c, e->args, e->nargs);
	}
}

static void metadata(struct gctx_chrome *c, const char *what, __u32 pid, __u32 tid,
		     const char *name)
{
	ev_open(c, 'M', pid, tid);
	fprintf(c->out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	jcstr(c, name && name[0] ? name : "?");
	fputs("}}", c->out);
}

static void ch_begin(struct gctx_tl_sink *s, const struct gctx_trace_meta *meta)
{
	struct gctx_chrome *c = CH(s);

	c->meta = *meta;
	fputs("{\"traceEvents\":[", c->out);
	/* the recording's global instants carry pid 0 and tid 0: named, not a nameless process */
	metadata(c, "process_name", 0, 0, GCTX_NAME_RECORDING);
	metadata(c, "thread_name", 0, 0, GCTX_NAME_RECORDING);
}

static void ch_track(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	struct gctx_chrome *c = CH(s);
	__u32 pid, tid;

	ids(t, &pid, &tid);
	switch (t->kind) {
	case GCTX_TL_PROCESS:
		metadata(c, "process_name", pid, tid, t->name);
		break;
	case GCTX_TL_THREAD:
	case GCTX_TL_GPU:
		metadata(c, "thread_name", pid, tid, t->name);
		break;
	default:
		break; /* counters are named by their events; the recording is global */
	}
}

static void ch_rename(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts)
{
	ch_track(s, t, ts); /* the last name wins */
}

static void ch_cmdline(struct gctx_tl_sink *s, __u64 ts, __u32 pid, __u32 ppid, const char *args,
		       __u32 len)
{
	/* argv is an arg of the process's life slice and of each exec instant */
}

static void global_instant(struct gctx_chrome *c, const struct gctx_tl_event *e, const char *name)
{
	ev_open(c, 'i', 0, 0);
	jts(c, "ts", e->ts);
	fputs(",\"s\":\"g\",\"name\":", c->out);
	jcstr(c, name);
	fputs(",\"cat\":\"gpuctx\"", c->out);
	if (e->nargs) {
		fputs(",\"args\":", c->out);
		jargs(c, e->args, e->nargs);
	}
	fputs("}", c->out);
}

static void ch_slice_begin(struct gctx_tl_sink *s, const struct gctx_tl_event *e)
{
	struct gctx_chrome *c = CH(s);
	__u32 pid, tid;

	if (e->track->kind == GCTX_TL_GLOBAL) {
		global_instant(c, e, "recording started");
		return;
	}
	ids(e->track, &pid, &tid);
	ev_open(c, 'B', pid, tid);
	jts(c, "ts", e->ts);
	ev_common(c, e);
	fputs("}", c->out);
}

static void ch_slice_end(struct gctx_tl_sink *s, const struct gctx_tl_event *e)
{
	struct gctx_chrome *c = CH(s);
	__u32 pid, tid;

	if (e->track->kind == GCTX_TL_GLOBAL) {
		global_instant(c, e, "recording ended");
		return;
	}
	ids(e->track, &pid, &tid);
	ev_open(c, 'E', pid, tid);
	jts(c, "ts", e->ts);
	if (e->nargs) {
		fputs(",\"args\":", c->out);
		jargs(c, e->args, e->nargs);
	}
	fputs("}", c->out);
}

static void ch_instant(struct gctx_tl_sink *s, const struct gctx_tl_event *e)
{
	struct gctx_chrome *c = CH(s);
	__u32 pid, tid;

	ids(e->track, &pid, &tid);
	if (e->flow_out || e->flow_in) {
		/* flows bind to slices: a zero-length one */
		ev_open(c, 'X', pid, tid);
		jts(c, "ts", e->ts);
		fputs(",\"dur\":0", c->out);
	} else {
		ev_open(c, 'i', pid, tid);
		jts(c, "ts", e->ts);
		fputs(e->track->kind == GCTX_TL_PROCESS ? ",\"s\":\"p\"" : ",\"s\":\"t\"", c->out);
	}
	ev_common(c, e);
	fputs("}", c->out);
}

static void ch_counter(struct gctx_tl_sink *s, const struct gctx_tl_track *t, __u64 ts, __s64 v)
{
	struct gctx_chrome *c = CH(s);

	ev_open(c, 'C', t->pid, t->pid);
	jts(c, "ts", ts);
	fputs(",\"name\":", c->out);
	jcstr(c, t->name);
	fputs(",\"cat\":\"counter\",\"args\":{", c->out);
	jcstr(c, t->unit ? t->unit : "value");
	fprintf(c->out, ":%lld}}", (long long)v);
}

static int ch_end(struct gctx_tl_sink *s, const struct gctx_tl_arg *args, __u32 nargs)
{
	struct gctx_chrome *c = CH(s);
	const struct gctx_trace_meta *m = &c->meta;

	fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"metadata\":{", c->out);
	fprintf(c->out, "\"start_wall_ns\":%llu,\"start_mono_ns\":%llu,",
		(unsigned long long)m->start_wall_ns, (unsigned long long)m->start_mono_ns);
	if (m->start_boot_ns) /* CLOCK_BOOTTIME at the start: Perfetto's trace clock */
		fprintf(c->out, "\"start_boot_ns\":%llu,", (unsigned long long)m->start_boot_ns);
	fputs("\"clock\":\"CLOCK_MONOTONIC\",\"hostname\":", c->out);
	jstr(c, m->hostname, sizeof(m->hostname));
	fputs(",\"kernel\":", c->out);
	jstr(c, m->kernel, sizeof(m->kernel));
	fputs(",\"gpuctx_version\":", c->out);
	jstr(c, m->version, sizeof(m->version));
	fputs(",\"cmdline\":", c->out);
	jstr(c, m->cmdline, sizeof(m->cmdline));
	fputs(",\"summary\":", c->out);
	jargs(c, args, nargs);
	fputs("}}\n", c->out);
	if (!c->err && ferror(c->out))
		c->err = -EIO;
	return c->err;
}

static void ch_free(struct gctx_tl_sink *s)
{
	struct gctx_chrome *c = CH(s);

	if (!c)
		return;
	free(c->esc);
	free(c);
}

static const struct gctx_tl_ops chrome_ops = {
    .process_is_main_thread = true,
    .begin = ch_begin,
    .track = ch_track,
    .rename = ch_rename,
    .process_end = ch_rename,
    .cmdline = ch_cmdline,
    .slice_begin = ch_slice_begin,
    .slice_end = ch_slice_end,
    .instant = ch_instant,
    .counter = ch_counter,
    .end = ch_end,
    .free = ch_free,
};

struct gctx_tl_sink *gctx_chrome__new(FILE *out)
{
	struct gctx_chrome *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sink.ops = &chrome_ops;
	c->out = out;
	c->first = true;
	return &c->sink;
}
