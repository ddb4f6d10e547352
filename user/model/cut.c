// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One process tree cut out of the agent's window (cut.h): which records are the tree's (a
 * member's pid while it was that member's), which are left out of a bounded dump, and the
 * members the window lost the start of, as at attach.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/grow.h"
#include "model/cut.h"
#include "gpuctx_stack.h"
#include "trace/window.h"

#define CUT_SLACK_NS 1000000000ull

static bool never_member(const struct gctx_tree *t, __u32 pid)
{
	return pid == (__u32)getpid() || (t->skip && pid == t->skip);
}

static bool span_holds(const struct gctx_span *s, __u64 ts)
{
	return s->since <= ts && (!s->until || ts <= s->until);
}

bool gctx_tree__has(const struct gctx_tree *t, __u32 pid)
{
	__u32 i;

	return gctx_hmap__get(&t->last, pid, 0, &i);
}

__u32 gctx_tree__span_at(const struct gctx_tree *t, __u32 pid, __u64 ts, bool exact)
{
	__u32 i, best = GCTX_SPAN_NONE;

	if (!gctx_hmap__get(&t->last, pid, 0, &i))
		return GCTX_SPAN_NONE;
	/* a pid's spans are chained in the order they were added, not by start */
	for (; i != GCTX_SPAN_NONE; i = t->s[i].prev) {
		if (exact && span_holds(&t->s[i], ts))
			return i;
		if (!exact && t->s[i].since <= ts &&
		    (best == GCTX_SPAN_NONE || t->s[i].since > t->s[best].since))
			best = i;
	}
	return best;
}

int gctx_tree__put(struct gctx_tree *t, __u32 pid, __u64 since, __u64 until, __u32 parent,
		   __u32 *span)
{
	__u32 last = GCTX_SPAN_NONE, same = gctx_tree__span_at(t, pid, since, true);

	if (same != GCTX_SPAN_NONE) { /* the same process */
		if (span)
			*span = same;
		return 0;
	}
	gctx_hmap__get(&t->last, pid, 0, &last);
	if (gctx_grow(&t->s, &t->cap, t->n + 1, sizeof(*t->s)) ||
	    gctx_hmap__put(&t->last, pid, 0, t->n))
		return -ENOMEM;
	t->s[t->n] = (struct gctx_span){
	    .pid = pid, .prev = last, .parent = parent, .since = since, .until = until};
	if (span)
		*span = t->n;
	t->n++;
	return 0;
}

static int push_idx(struct gctx_tree *t, __u32 idx)
{
	if (gctx_grow(&t->idx, &t->cap_idx, t->nidx + 1, sizeof(*t->idx)))
		return -ENOMEM;
	t->idx[t->nidx++] = idx;
	return 0;
}

int gctx_tree__add(struct gctx_tree *t, const struct gctx_model *m, __u32 root)
{
	__u32 from = t->nidx;
	/* the span of each model index queued, parents first */
	__u32 *par = NULL, cap_par = 0, span;
	int ret = push_idx(t, root);

	if (!ret)
		ret = gctx_grow(&par, &cap_par, 1, sizeof(*par));
	if (!ret)
		par[0] = GCTX_SPAN_NONE;
	for (__u32 i = from; !ret && i < t->nidx; i++) { /* breadth first */
		const struct gctx_proc *p = gctx_model__proc(m, t->idx[i]);

		if (!p->exited)
			t->alive = true;
		ret = gctx_tree__put(t, p->pid, p->start_ns, p->exited ? p->exit_ns : 0,
				     par[i - from], &span);
		if (ret)
			break;
		t->s[span].flags |= GCTX_SPAN_MODEL;
		t->s[span].proc_idx = p->idx;
		for (__u32 k = 0; !ret && k < p->nchildren; k++) {
			if (never_member(t, gctx_model__proc(m, p->children[k])->pid))
				continue; /* the agent (and its client) is nobody's job */
			ret = push_idx(t, p->children[k]);
			if (!ret)
				ret = gctx_grow(&par, &cap_par, t->nidx - from, sizeof(*par));
			if (!ret)
				par[t->nidx - from - 1] = span;
		}
	}
	free(par);
	return ret;
}

void gctx_tree__free(struct gctx_tree *t)
{
	free(t->s);
	free(t->idx);
	gctx_hmap__free(&t->last);
	memset(t, 0, sizeof(*t));
}

#define PRUNE_SLACK 1024

int gctx_tree__prune(struct gctx_tree *t, __u64 before_ns)
{
	struct gctx_hmap last = {};
	__u32 *to, *prev, n = 0, gone;

	if (t->n <= 2 * t->n_pruned + PRUNE_SLACK)
		return 0;
	to = malloc(2 * (size_t)t->n * sizeof(*to));
	if (!to)
		return -ENOMEM;
	prev = to + t->n;
	for (__u32 i = 0; i < t->n; i++) {
		const struct gctx_span *s = &t->s[i];

		to[i] = GCTX_SPAN_NONE;
		if (s->until && s->until < before_ns)
			continue;
		/* a pid's chain keeps the order the spans were added in */
		if (!gctx_hmap__get(&last, s->pid, 0, &prev[i]))
			prev[i] = GCTX_SPAN_NONE;
		if (gctx_hmap__put(&last, s->pid, 0, n)) {
			gctx_hmap__free(&last);
			free(to);
			return -ENOMEM;
		}
		to[i] = n++;
	}
	for (__u32 i = 0; i < t->n; i++) { /* to[i] <= i: moving down overwrites only done ones */
		struct gctx_span s = t->s[i];

		if (to[i] == GCTX_SPAN_NONE)
			continue;
		s.prev = prev[i];
		s.parent = s.parent == GCTX_SPAN_NONE ? GCTX_SPAN_NONE : to[s.parent];
		t->s[to[i]] = s;
	}
	gone = t->n - n;
	gctx_hmap__free(&t->last);
	t->last = last;
	t->n = t->n_pruned = n;
	t->pruned += gone;
	free(to);
	return gone;
}

/* A record's own time: the kernel's records carry it, and a resolved stack its raw stack's
 * (it may be resolved after the process exited); the collector's others are placed by when
 * they arrived. */
static bool record_ts(__u32 type, const void *data, __u32 len, __u64 *ts)
{
	struct gctx_ev_hdr h;
	struct gctx_rec_stack s;

	if (type == GCTX_REC_STACK && len >= offsetof(struct gctx_rec_stack, role)) {
		memcpy(&s, data, offsetof(struct gctx_rec_stack, role));
		*ts = s.ts_ns;
		return true;
	}
	if (type >= GCTX_REC_PROC_PRESENT || len < sizeof(h))
		return false;
	memcpy(&h, data, sizeof(h));
	*ts = h.ts_ns;
	return true;
}

/* The span each pid of a record was at its time (GCTX_SPAN_NONE: not a member then). */
static __u32 record_spans(const struct gctx_tree *t, __u32 type, const void *data, __u32 len,
			  __u64 arrived_ns, __u32 pids[2], __u32 spans[2])
{
	__u32 n = gctx_record_pids(type, data, len, pids);
	__u64 ts = arrived_ns;
	bool exact = record_ts(type, data, len, &ts);

	for (__u32 i = 0; i < n; i++)
		spans[i] = gctx_tree__span_at(t, pids[i], ts, exact);
	return n;
}

static bool omitted_span(const struct gctx_tree *t, __u32 span)
{
	return span != GCTX_SPAN_NONE && (t->s[span].flags & GCTX_SPAN_OMIT);
}

bool gctx_tree__wants(const struct gctx_tree *t, __u32 type, const void *data, __u32 len,
		      __u64 arrived_ns, bool *omitted)
{
	__u32 pids[2], spans[2] = {GCTX_SPAN_NONE, GCTX_SPAN_NONE};
	__u32 n = record_spans(t, type, data, len, arrived_ns, pids, spans);
	bool any = false, out = false;

	for (__u32 i = 0; i < n; i++) {
		any |= spans[i] != GCTX_SPAN_NONE;
		out |= omitted_span(t, spans[i]);
	}
	/* a fork naming a child left out goes with it (its parent is kept: a child that is
	 * evidence keeps its ancestors) */
	if (omitted)
		*omitted = any && out;
	return any && !out;
}

static void member_exit(struct gctx_tree *t, const void *data, __u32 len)
{
	struct gctx_ev_exit e;
	__u32 i;

	if (len < sizeof(e))
		return;
	memcpy(&e, data, sizeof(e));
	if (!e.group_dead)
		return;
	i = gctx_tree__span_at(t, e.hdr.tgid, e.hdr.ts_ns, true);
	if (i != GCTX_SPAN_NONE && !t->s[i].until)
		t->s[i].until = e.hdr.ts_ns;
}

/* A fork by a member (at the fork's time: not by an older or later process that had its
 * pid) adds its child; the child's span in *child. */
static int member_fork(struct gctx_tree *t, const void *data, __u32 len, __u32 *child)
{
	struct gctx_ev_fork f;
	__u32 parent;

	*child = GCTX_SPAN_NONE;
	if (len < sizeof(f))
		return 0;
	memcpy(&f, data, sizeof(f));
	if (f.child_tgid == f.hdr.tgid)
		return 0;
	/* the member test first: a window holds every fork of the node */
	parent = gctx_tree__span_at(t, f.hdr.tgid, f.hdr.ts_ns, true);
	if (parent == GCTX_SPAN_NONE || never_member(t, f.child_tgid))
		return 0;
	return gctx_tree__put(t, f.child_tgid, f.hdr.ts_ns, 0, parent, child);
}

int gctx_tree__on_record(struct gctx_tree *t, __u32 type, const void *data, __u32 len)
{
	__u32 child;

	if (type == GCTX_EV_EXIT)
		member_exit(t, data, len);
	return type == GCTX_EV_FORK ? member_fork(t, data, len, &child) : 0;
}

/* ---- the cut ---- */

static int scan_one(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct gctx_cut *c = ctx;
	struct gctx_tree *t = c->t;
	__u32 child, span;
	int ret = 0;

	/* the children the model folded (exited, never touched a GPU) are the tree's still:
	 * their fork, exec and exit are in the window, in order */
	if (type == GCTX_EV_FORK && len >= sizeof(struct gctx_ev_fork)) {
		struct gctx_ev_fork f;

		ret = member_fork(t, data, len, &child);
		memcpy(&f, data, sizeof(f));
		span = gctx_tree__span_at(t, f.child_tgid, f.hdr.ts_ns, true);
		if (span != GCTX_SPAN_NONE && f.child_tgid != f.hdr.tgid)
			t->s[span].flags |= GCTX_SPAN_COVERED; /* its start is in the window */
	} else if (type == GCTX_EV_EXIT) {
		member_exit(t, data, len);
	} else if (type == GCTX_REC_PROC_PRESENT && len >= sizeof(__u32)) {
		__u32 pid;

		memcpy(&pid, data, sizeof(pid));
		span = gctx_tree__span_at(t, pid, ts, false);
		if (span != GCTX_SPAN_NONE)
			t->s[span].flags |= GCTX_SPAN_COVERED;
	}
	if (!c->first_ns && gctx_tree__wants(t, type, data, len, ts, NULL))
		c->first_ns = ts;
	return ret;
}

static int by_since_desc(const void *a, const void *b, void *ctx)
{
	const struct gctx_span *s = ctx;
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	if (s[x].since != s[y].since)
		return s[x].since < s[y].since ? 1 : -1;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Evidence: a running member, one with GPU state, the root, and their ancestors; the rest
 * (exited, no GPU state, nor any descendant) past the newest max_minor is left out. */
static int bound(struct gctx_cut *c, const struct gctx_model *m)
{
	struct gctx_tree *t = c->t;
	__u32 *minor, nminor = 0;

	if (!t->n)
		return 0;
	t->s[0].flags |= GCTX_SPAN_KEEP;
	for (__u32 i = 0; i < t->n; i++) {
		struct gctx_span *s = &t->s[i];

		if (s->flags & GCTX_SPAN_MODEL && (!gctx_model__proc(m, s->proc_idx)->exited ||
						   gctx_model__touched_gpu(m, s->proc_idx)))
			s->flags |= GCTX_SPAN_KEEP;
	}
	/* a parent's span comes before its children's */
	for (__u32 i = t->n; i-- > 1;)
		if (t->s[i].flags & GCTX_SPAN_KEEP && t->s[i].parent != GCTX_SPAN_NONE)
			t->s[t->s[i].parent].flags |= GCTX_SPAN_KEEP;
	minor = malloc(sizeof(*minor) * t->n);
	if (!minor)
		return -ENOMEM;
	for (__u32 i = 0; i < t->n; i++)
		if (!(t->s[i].flags & GCTX_SPAN_KEEP))
			minor[nminor++] = i;
	if (nminor > c->max_minor) {
		/* the newest are kept: those nearest the incident */
		qsort_r(minor, nminor, sizeof(*minor), by_since_desc, t->s);
		for (__u32 i = c->max_minor; i < nminor; i++)
			t->s[minor[i]].flags |= GCTX_SPAN_OMIT;
		c->omitted_procs = nminor - c->max_minor;
	}
	free(minor);
	return 0;
}

/* Where to start reading the window for records at or after ns: a second before it, for
 * records of several CPUs that reached the ring a little out of order. */
static __u64 read_from(__u64 ns)
{
	return ns > CUT_SLACK_NS ? ns - CUT_SLACK_NS : 0;
}

int gctx_cut__scan(struct gctx_cut *c, const struct gctx_model *m, const struct gctx_window *win)
{
	__u64 oldest = gctx_window__oldest_ns(win);
	int ret = gctx_window__foreach_from(win, read_from(c->from_ns), scan_one, c);

	if (!ret && c->max_minor)
		ret = bound(c, m);
	for (__u32 i = 0; !ret && i < c->t->n && gctx_window__evicted(win); i++) {
		const struct gctx_span *s = &c->t->s[i];

		if (!(s->flags & GCTX_SPAN_OMIT) && (!oldest || s->since < oldest))
			c->history_cut = true;
	}
	return ret;
}

static int emit(struct gctx_cut *c, __u32 type, const void *data, __u32 len)
{
	c->records++;
	return c->sink(c->sink_ctx, type, data, len);
}

static int emit_window(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct gctx_cut *c = ctx;
	bool out;

	if (gctx_tree__wants(c->t, type, data, len, ts, &out))
		return emit(c, type, data, len);
	c->omitted_records += out;
	return 0;
}

/* Whether a holder held its file when the cut's records start (first_ns; 0: none, now): a
 * dump is written after its processes ended, when their files are closed. */
static bool held_at(const struct gctx_holder *h, __u64 first_ns)
{
	if (!first_ns)
		return h->held;
	return (!h->since_ns || h->since_ns < first_ns) && (h->held || h->until_ns >= first_ns);
}

/* A tree member whose start the window no longer holds: as attach would have seen it. */
static int emit_present(struct gctx_cut *c, const struct gctx_model *m, __u32 idx)
{
	const struct gctx_proc *p = gctx_model__proc(m, idx);
	struct gctx_rec_proc r = {
	    .pid = p->pid, .ppid = p->ppid, .start_ns = p->start_ns, .nthreads = p->nthreads};
	struct gctx_rec_api_present ap = {.pid = p->pid};
	int ret;

	snprintf(r.comm, sizeof(r.comm), "%s", p->comm);
	snprintf(r.exe, sizeof(r.exe), "%s", p->exe);
	r.args_len = p->args_len < sizeof(r.args) ? p->args_len : sizeof(r.args);
	memcpy(r.args, p->args, r.args_len);
	ret = emit(c, GCTX_REC_PROC_PRESENT, &r, sizeof(r));
	for (__u32 i = 0; !ret && i < gctx_model__nfiles(m); i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		for (__u32 k = 0; !ret && k < f->nholders; k++) {
			const struct gctx_holder *h = &f->holders[k];
			struct gctx_rec_file rf = {.pid = p->pid,
						   .file = f->file,
						   .kind = f->kind,
						   .flags = f->open_flags};

			if (h->proc_idx != idx || !held_at(h, c->first_ns))
				continue;
			rf.fd = h->nfds ? h->fds[0] : -1;
			snprintf(rf.path, sizeof(rf.path), "%s", f->path);
			ret = emit(c, GCTX_REC_FILE_PRESENT, &rf, sizeof(rf));
		}
	}
	for (__u32 i = 0; i < gctx_model__nctxs(m); i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, i);

		if (x->creator_idx == idx && (!c->first_ns || x->create_ns < c->first_ns))
			ap.vendors |= 1u << x->vendor;
	}
	if (!ret && ap.vendors)
		ret = emit(c, GCTX_REC_API_PRESENT, &ap, sizeof(ap));
	return ret;
}

int gctx_cut__emit(struct gctx_cut *c, const struct gctx_model *m, const struct gctx_window *win)
{
	int ret = 0;

	c->omitted_records = 0;
	for (__u32 i = 0; !ret && i < c->t->n; i++) {
		const struct gctx_span *s = &c->t->s[i];
		const struct gctx_proc *p;

		if (!(s->flags & GCTX_SPAN_MODEL) ||
		    s->flags & (GCTX_SPAN_COVERED | GCTX_SPAN_OMIT))
			continue;
		p = gctx_model__proc(m, s->proc_idx);
		/* one that ended before the cut's records start was not there to attach to */
		if (c->first_ns && p->exited && p->exit_ns && p->exit_ns < c->first_ns)
			continue;
		if (!c->first_ns || !p->start_ns || p->start_ns < c->first_ns)
			ret = emit_present(c, m, p->idx);
	}
	if (!ret)
		ret = gctx_window__foreach_from(win, read_from(c->first_ns), emit_window, c);
	return ret;
}

struct find_pid {
	__u32 pid;
	__u64 since;
	bool found;
};

static int find_one(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct find_pid *f = ctx;

	if (type == GCTX_EV_FORK && len >= sizeof(struct gctx_ev_fork)) {
		struct gctx_ev_fork e;

		memcpy(&e, data, sizeof(e));
		if (e.child_tgid == f->pid && e.hdr.tgid != f->pid) {
			f->since = e.hdr.ts_ns;
			f->found = true;
		}
	} else if (type == GCTX_REC_PROC_PRESENT && len >= sizeof(struct gctx_rec_proc)) {
		struct gctx_rec_proc r;

		memcpy(&r, data, sizeof(r));
		if (r.pid == f->pid) {
			f->since = r.start_ns;
			f->found = true;
		}
	}
	return 0;
}

bool gctx_cut__find_pid(const struct gctx_window *win, __u32 pid, __u64 *since)
{
	struct find_pid f = {.pid = pid};

	gctx_window__foreach(win, find_one, &f);
	if (f.found)
		*since = f.since;
	return f.found;
}
