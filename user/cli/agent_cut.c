// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One process tree cut out of the agent's window (agent.h): what a dump holds, and what
 * record --from-agent receives before the live records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/agent.h"
#include "lib/grow.h"
#include "trace/window.h"

bool tree_has(const struct tree *t, __u32 pid)
{
	__u32 i;

	return gctx_hmap__get(&t->set, pid, 0, &i);
}

int tree_put_span(struct tree *t, __u32 pid, __u64 since, __u64 until)
{
	if (tree_has(t, pid))
		return 0;
	if (gctx_grow(&t->pids, &t->cap, t->n + 1, sizeof(*t->pids)) ||
	    gctx_grow(&t->since, &t->cap_since, t->n + 1, sizeof(*t->since)) ||
	    gctx_grow(&t->until, &t->cap_until, t->n + 1, sizeof(*t->until)) ||
	    gctx_hmap__put(&t->set, pid, 0, t->n))
		return -ENOMEM;
	t->since[t->n] = since;
	t->until[t->n] = until;
	t->pids[t->n++] = pid;
	return 0;
}

int tree_put(struct tree *t, __u32 pid)
{
	return tree_put_span(t, pid, 0, 0);
}

int tree_add(struct tree *t, const struct gctx_model *m, __u32 root)
{
	__u32 from = t->nidx;

	if (gctx_grow(&t->idx, &t->cap_idx, t->nidx + 1, sizeof(*t->idx)))
		return -ENOMEM;
	t->idx[t->nidx++] = root;
	for (__u32 i = from; i < t->nidx; i++) { /* breadth first: parents before children */
		const struct gctx_proc *p = gctx_model__proc(m, t->idx[i]);

		if (!p->exited)
			t->alive = true;
		if (tree_put_span(t, p->pid, p->start_ns, p->exited ? p->exit_ns : 0))
			return -ENOMEM;
		for (__u32 k = 0; k < p->nchildren; k++) {
			__u32 pid = gctx_model__proc(m, p->children[k])->pid;

			if (pid == (__u32)getpid() || pid == t->skip)
				continue; /* the agent (and its client) is nobody's job */
			if (gctx_grow(&t->idx, &t->cap_idx, t->nidx + 1, sizeof(*t->idx)))
				return -ENOMEM;
			t->idx[t->nidx++] = p->children[k];
		}
	}
	return 0;
}

void tree_free(struct tree *t)
{
	free(t->pids);
	free(t->since);
	free(t->until);
	free(t->idx);
	gctx_hmap__free(&t->set);
	memset(t, 0, sizeof(*t));
}

bool tree_wants(const struct tree *t, __u32 type, const void *data, __u32 len)
{
	__u32 pids[2], n = gctx_record_pids(type, data, len, pids);

	for (__u32 i = 0; i < n; i++)
		if (tree_has(t, pids[i]))
			return true;
	return false;
}

/* A fork by the member itself, not by an older or later process that had its pid (on a busy
 * node pids wrap within seconds: taking their children would take the whole window). */
static bool fork_of_member(const struct tree *t, const void *data, __u32 parent)
{
	struct gctx_ev_hdr h;
	__u32 i;

	memcpy(&h, data, sizeof(h));
	if (!gctx_hmap__get(&t->set, parent, 0, &i))
		return false;
	return h.ts_ns >= t->since[i] && (!t->until[i] || h.ts_ns <= t->until[i]);
}

static __u64 fork_ts(const void *data)
{
	struct gctx_ev_hdr h;

	memcpy(&h, data, sizeof(h));
	return h.ts_ns;
}

static void member_exit(struct tree *t, const void *data)
{
	struct gctx_ev_exit e;
	__u32 i;

	memcpy(&e, data, sizeof(e));
	if (e.group_dead && gctx_hmap__get(&t->set, e.hdr.tgid, 0, &i) && !t->until[i] &&
	    e.hdr.ts_ns >= t->since[i])
		t->until[i] = e.hdr.ts_ns;
}

static int scan_one(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct agent_cut *c = ctx;
	__u32 pids[2], n;

	if (!tree_wants(c->t, type, data, len))
		return 0;
	if (!c->first_ns)
		c->first_ns = ts;
	n = gctx_record_pids(type, data, len, pids);
	/* a child the model folded (exited, never touched a GPU) is the tree's still: its
	 * fork, exec and exit are in the window, in order */
	if (type == GCTX_EV_FORK && n == 2 && pids[1] != (__u32)getpid() &&
	    pids[1] != c->t->skip && fork_of_member(c->t, data, pids[0]) &&
	    tree_put_span(c->t, pids[1], fork_ts(data), 0))
		return -ENOMEM;
	if (type == GCTX_EV_EXIT && len >= sizeof(struct gctx_ev_exit))
		member_exit(c->t, data);
	if ((type == GCTX_EV_FORK && n == 2) || type == GCTX_REC_PROC_PRESENT) {
		__u32 pid = type == GCTX_EV_FORK ? pids[1] : pids[0];

		if (gctx_hmap__put(&c->covered, pid, 0, 1))
			return -ENOMEM;
	}
	return 0;
}

int agent_cut__scan(struct agent_cut *c, const struct gctx_window *win)
{
	return gctx_window__foreach(win, scan_one, c);
}

static int emit(struct agent_cut *c, __u32 type, const void *data, __u32 len)
{
	c->records++;
	return c->sink(c->sink_ctx, type, data, len);
}

static int emit_window(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct agent_cut *c = ctx;

	return tree_wants(c->t, type, data, len) ? emit(c, type, data, len) : 0;
}

static bool covered(const struct agent_cut *c, __u32 pid)
{
	__u32 v;

	return gctx_hmap__get(&c->covered, pid, 0, &v);
}

/* A tree member whose start the window no longer holds: as attach would have seen it. */
static int emit_present(struct agent_cut *c, const struct gctx_model *m, __u32 idx)
{
	const struct gctx_proc *p = gctx_model__proc(m, idx);
	struct gctx_rec_proc r = { .pid = p->pid, .ppid = p->ppid, .start_ns = p->start_ns,
				   .nthreads = p->nthreads };
	struct gctx_rec_api_present ap = { .pid = p->pid };
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
			struct gctx_rec_file rf = { .pid = p->pid, .file = f->file, .kind = f->kind,
						    .flags = f->open_flags };

			if (h->proc_idx != idx || !h->held ||
			    (c->first_ns && h->since_ns && h->since_ns >= c->first_ns))
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

int agent_cut__emit(struct agent_cut *c, const struct agent *a, const struct gctx_model *m)
{
	int ret = 0;

	for (__u32 i = 0; !ret && i < a->nglobals; i++)
		ret = emit(c, a->globals[i].type, a->globals[i].data, a->globals[i].len);
	for (__u32 i = 0; !ret && i < c->t->nidx; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, c->t->idx[i]);

		if (!covered(c, p->pid) && (!c->first_ns || !p->start_ns || p->start_ns < c->first_ns))
			ret = emit_present(c, m, p->idx);
	}
	if (!ret)
		ret = gctx_window__foreach(a->win, emit_window, c);
	return ret;
}

void agent_cut__free(struct agent_cut *c)
{
	gctx_hmap__free(&c->covered);
}
