// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Call stacks on the timeline events they were taken at (issue 11): the GPU initialisation
 * (the holding slice of the process's first open, or its cuInit/hipInit call), the fork
 * instant in the parent, the first use of an inherited file (its ioctl or mmap, or the child's
 * first API call) and the crash (an instant of its own: the process's end is a slice end).
 * Such an event carries the stack (a Perfetto callstack, a Chrome "stack" arg) and its site.
 *
 * The collector writes a stack after the capture it resolves, which may come after its event
 * (a fork's does). So the trace is read once ahead for its GCTX_REC_STACK records (a model of
 * their own holds them, indexed as the main pass will see them). A trace that cannot be read
 * twice (not a regular file) has its stacks matched as they come. A stack that matches no
 * event is never lost: at the end it gets an instant "stack: <role>" on its thread's track.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model.h"
#include "output/report/print.h"
#include "output/timeline/timeline_priv.h"
#include "trace/tracefile.h"

#define MATCH_NS  1000000000ULL /* a stack further than this from an event is not its */
#define CHAIN_MAX 64		/* stacks of one key looked at per event */

/* Where the stacks are: read ahead, else the main model's as they come. */
static const struct gctx_model *src(const struct exporter *x)
{
	return x->stk_m ? x->stk_m : x->m;
}

/* The map key of a stack: the role and process, then the struct file (init by open, use of
 * a file), else the trigger (the child pid of a fork, the API function of a call). */
static __u64 key1(__u32 role, __u32 pid)
{
	return (__u64)role << 32 | pid;
}

static __u64 key2(const struct gctx_stack *s)
{
	return s->key ? s->key : s->trigger;
}

/* Index stack i: the map holds the newest of each key, the older ones chain behind it. */
static void stack_index(struct exporter *x, __u32 i)
{
	const struct gctx_stack *s = gctx_model__stack(src(x), i);
	__u32 j;

	if (!s || gctx_grow(&x->stk, &x->cap_stk, i + 1, sizeof(*x->stk))) {
		nomem(x);
		return;
	}
	if (gctx_hmap__get(&x->stk_map, key1(s->role, s->pid), key2(s), &j))
		x->stk[i].next = j + 1;
	if (gctx_hmap__put(&x->stk_map, key1(s->role, s->pid), key2(s), i))
		nomem(x);
}

void tl_stacks_read_ahead(struct exporter *x, const char *path)
{
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *data;
	__u32 type, len, i;
	bool callers = false;
	char err[256];
	struct stat st;

	if (!path || stat(path, &st) || !S_ISREG(st.st_mode))
		return; /* matched as they come */
	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		return;
	m = gctx_model__new();
	if (!m) {
		gctx_trace_reader__free(r);
		nomem(x);
		return;
	}
	/* what the main pass rejects is rejected here too: the indices agree. Call sites too: the
	 * one of a process gone before the collector read its mappings comes after its calls. */
	while (gctx_trace_reader__next(r, &type, &data, &len) == 1) {
		if (type != GCTX_REC_STACK && type != GCTX_REC_CALLER)
			continue;
		callers |= type == GCTX_REC_CALLER;
		if (gctx_model__feed(m, type, data, len) == -ENOMEM)
			nomem(x);
	}
	gctx_trace_reader__free(r);
	if (x->err || (!gctx_model__nstacks(m) && !callers)) {
		gctx_model__free(m);
		return;
	}
	x->stk_m = m;
	for (i = 0; i < gctx_model__nstacks(m); i++)
		stack_index(x, i);
}

void tl_stack_text(const struct gctx_stack *s, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (__u32 i = 0; i < s->nframes && o + 2 < len; i++) {
		if (i)
			buf[o++] = '\n';
		gctx_frame_format(&s->frames[i], buf + o, len - o);
		o += strlen(buf + o);
	}
}

static const char *module_name(const struct gctx_rec_frame *f)
{
	const char *b = strrchr(f->module, '/');

	if (b)
		return b + 1;
	return f->module[0] ? f->module : "?";
}

/* Its site, note and frames as args of an event; the buffers live until the next call (the
 * exporter is single-threaded and writes each event at once). */
static void stack_args(struct args *a, const struct gctx_stack *s)
{
	static char site[640], text[8192], fn[GCTX_STACK_MAX_FRAMES][GCTX_SFILE_LEN + 24];
	static struct gctx_tl_frame fr[GCTX_STACK_MAX_FRAMES];
	static struct gctx_tl_stack st;
	__u32 i, n = s->nframes < GCTX_STACK_MAX_FRAMES ? s->nframes : GCTX_STACK_MAX_FRAMES;

	for (i = 0; i < n; i++) {
		const struct gctx_rec_frame *f = &s->frames[i];
		bool src = f->kind == GCTX_FRAME_PYTHON || (f->file[0] && f->line);

		fr[i].line = src ? f->line : 0;
		fr[i].file = src ? f->file : f->module;
		fr[i].function = f->function[0] ? f->function : "?";
		if (f->kind == GCTX_FRAME_PYTHON || (src && f->function[0]))
			continue;
		/* native without a source line or a name: where in which module */
		snprintf(fn[i], sizeof(fn[i]), "%s+0x%llx",
			 f->function[0] ? f->function : module_name(f),
			 (unsigned long long)f->offset);
		fr[i].function = fn[i];
	}
	gctx_site_format(s, site, sizeof(site));
	tl_stack_text(s, text, sizeof(text));
	st.frames = fr;
	st.nframes = n;
	st.text = text;
	tl_arg_str(a, "site", site);
	if (s->note[0])
		tl_arg_str(a, "stack_note", s->note);
	if (n) /* none resolved: the site and note say why */
		tl_arg_stack(a, "stack", &st);
}

static __u64 distance(__u64 ts, __u64 start, __u64 end)
{
	return ts < start ? start - ts : ts > end ? ts - end : 0;
}

void tl_stack_add(struct exporter *x, struct args *a, __u32 roles, __u32 pid, __u64 k2, __u64 start,
		  __u64 end)
{
	const struct gctx_model *m = src(x);
	const struct gctx_stack *s;
	__u64 d, best_d = 0;
	int best = -1;
	__u32 i, k;

	if (!gctx_model__nstacks(m))
		return;
	for (__u32 role = 1; role < GCTX_STACK_ROLE_MAX; role++) {
		if (!(roles & (1u << role)) ||
		    !gctx_hmap__get(&x->stk_map, key1(role, pid), k2, &i))
			continue;
		/* the nearest in time not placed yet (a pid reused, cuInit called twice); a
		 * crafted trace with thousands of one key costs no more than CHAIN_MAX each */
		for (i++, k = 0; i && k < CHAIN_MAX; i = x->stk[i - 1].next, k++) {
			s = gctx_model__stack(m, i - 1);
			d = distance(s->ts_ns, start, end);
			if (!x->stk[i - 1].used && d <= MATCH_NS && (best < 0 || d < best_d)) {
				best = (int)i - 1;
				best_d = d;
			}
		}
	}
	if (best < 0)
		return;
	x->stk[best].used = true;
	stack_args(a, gctx_model__stack(m, best));
}

/* The track of thread tid of pid (a stack's, an exception's): its own when described, else its
 * process's, else (a process the trace never showed) the recording's. */
static void thread_track(struct exporter *x, __u32 pid, __u32 tid, struct gctx_tl_track *t)
{
	int pi = tl_proc_index(x->m, pid), ti;

	if (pi < 0 || !tl_xp(x, pi)) {
		tl_trk_global(t);
		return;
	}
	tl_proc_describe(x, pi, 0);
	ti = tl_thread_index(x, pi, tid);
	if (ti < 0 || (__u32)ti >= x->procs[pi].nth || !x->procs[pi].th[ti].described ||
	    (x->s->ops->process_is_main_thread && tid == pid))
		tl_trk_proc(x, pi, t);
	else
		tl_trk_thread(x, pi, ti, t);
}

/* Stack i as an instant of its own. */
static void stack_instant(struct exporter *x, __u32 i, const char *name, const char *cat)
{
	const struct gctx_stack *s = gctx_model__stack(src(x), i);
	struct gctx_tl_track t;
	struct args a;

	x->stk[i].used = true;
	thread_track(x, s->pid, s->tid, &t);
	a.n = 0;
	tl_arg_str(&a, "role", gctx_stack_role_name(s->role));
	tl_arg_u64(&a, "pid", s->pid);
	tl_arg_u64(&a, "tid", s->tid);
	stack_args(&a, s);
	tl_emit(x, 'I', &t, s->ts_ns, name, cat, &a, 0, 0);
}

/* A GCTX_REC_STACK the model just took. A crash is shown at once: its signal instant. */
void tl_on_stack(struct exporter *x)
{
	const struct gctx_stack *s;
	char name[48], sig[32];
	__u32 i = gctx_model__nstacks(x->m);

	if (!i--)
		return;
	if (!x->stk_m)
		stack_index(x, i);
	s = gctx_model__stack(src(x), i);
	if (x->err || !s || s->role != GCTX_STACK_CRASH || x->stk[i].used)
		return;
	gctx_format_signal(sig, sizeof(sig), (int)s->trigger);
	snprintf(name, sizeof(name), "fatal signal %s", sig);
	stack_instant(x, i, name, "signal");
}

/* What a Python child that inherited GPU state raised (the model's newest exception): an
 * instant "raised RuntimeError: ..." on its thread, with its stack (the raise's, keyed by the
 * exception's seq). Past the kept ones only a count comes: no event. */
void tl_on_pyexc(struct exporter *x)
{
	__u32 n = gctx_model__npyexcs(x->m);
	const struct gctx_pyexc *e = n ? gctx_model__pyexc(x->m, n - 1) : NULL;
	char text[GCTX_PYEXC_TYPE_LEN + GCTX_PYEXC_MSG_LEN + 2], name[96];
	struct gctx_tl_track t;
	struct args a;

	if (!e || e->count_only)
		return;
	gctx_pyexc_name(e, text, sizeof(text));
	/* a name the timeline can show in a row; the whole text is an arg */
	snprintf(name, sizeof(name), "raised %.*s%s", 80, text, strlen(text) > 80 ? "..." : "");
	thread_track(x, e->pid, e->tid, &t);
	a.n = 0;
	tl_arg_str(&a, "exception", text);
	tl_arg_u64(&a, "seq", e->seq);
	tl_arg_u64(&a, "about_gpu", gctx_pyexc_about_gpu(e));
	tl_stack_add(x, &a, 1u << GCTX_STACK_RAISE, e->pid, e->seq, e->ts_ns, e->ts_ns);
	tl_emit(x, 'I', &t, e->ts_ns, name, "python", &a, 0, 0);
}

void tl_stacks_flush(struct exporter *x)
{
	const struct gctx_model *m = src(x);
	char name[32];

	for (__u32 i = 0; i < gctx_model__nstacks(m) && i < x->cap_stk && !x->err; i++) {
		if (x->stk[i].used)
			continue;
		snprintf(name, sizeof(name), "stack: %s",
			 gctx_stack_role_name(gctx_model__stack(m, i)->role));
		stack_instant(x, i, name, "stack");
	}
}
