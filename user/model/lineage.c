// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model: processes and threads, fork, exec and exit, and the processes and threads
 * that were there when gpuctx attached.
 */
#include <errno.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/str.h"
#include "model/model_priv.h"

/* ---- processes and threads ---- */

struct proc_priv *mdl_proc_lookup(const struct gctx_model *m, __u32 pid)
{
	__u32 idx;

	return gctx_hmap__get(&m->pid_map, pid, 0, &idx) ? P(m, idx) : NULL;
}

/* The process takes a new name; the old one goes to the history. */
void mdl_proc_rename(struct proc_priv *p, const char *comm)
{
	struct gctx_proc *pp = &p->pub;
	char now[GCTX_COMM_LEN];

	gctx_copy_str(now, sizeof(now), comm, GCTX_COMM_LEN);
	if (!now[0] || !strncmp(now, pp->comm, GCTX_COMM_LEN))
		return;
	if (pp->comm[0]) {
		__u32 slot =
		    pp->ncomm_prev < GCTX_COMM_HIST ? pp->ncomm_prev++ : GCTX_COMM_HIST - 1;

		memcpy(pp->comm_prev[slot], pp->comm, GCTX_COMM_LEN);
	}
	memcpy(pp->comm, now, GCTX_COMM_LEN);
}

static struct gctx_thread *thread_find(const struct gctx_model *m, struct proc_priv *p, __u32 tid)
{
	__u32 ti;

	if (!gctx_hmap__get(&m->thread_map, p->pub.idx, tid, &ti))
		return NULL;
	return &p->pub.threads[ti];
}

static struct gctx_thread *thread_add(struct gctx_model *m, struct proc_priv *p, __u32 tid,
				      const char *comm, __u64 start_ns)
{
	struct gctx_proc *pp = &p->pub;
	struct gctx_thread *t;

	if (gctx_grow(&pp->threads, &p->cap_threads, pp->nthreads + 1, sizeof(*pp->threads)))
		return NULL;
	if (gctx_hmap__put(&m->thread_map, pp->idx, tid, pp->nthreads))
		return NULL;
	t = &pp->threads[pp->nthreads++];
	m->nthreads++;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	gctx_copy_str(t->comm, sizeof(t->comm), comm, GCTX_COMM_LEN);
	t->start_ns = start_ns;
	return t;
}

/* The live thread tid of p, created (start unknown) when the trace has not shown it. */
struct gctx_thread *mdl_thread_live(struct gctx_model *m, struct proc_priv *p, __u32 tid,
				    const char *comm)
{
	struct gctx_thread *t = thread_find(m, p, tid);

	if (t && !t->exited)
		return t;
	return thread_add(m, p, tid, comm, 0);
}

/* A path field of a record (len bytes, NUL-padded), as the pool's string: cut to
 * GCTX_PATH_LEN - 1 bytes, as the fixed-size fields it replaces did. */
static const char *intern_path(struct gctx_model *m, const char *src, size_t len)
{
	size_t n = strnlen(src, len);

	return gctx_strpool__add(m->strs, src, n < GCTX_PATH_LEN ? n : GCTX_PATH_LEN - 1);
}

/* A record's argv (len bytes, NUL-separated), as the pool's string of *n bytes: at most
 * GCTX_ARGS_LEN, the size of the record's field. */
static const char *intern_args(struct gctx_model *m, const char *src, __u32 len, __u32 *n)
{
	*n = len < GCTX_ARGS_LEN ? len : GCTX_ARGS_LEN;
	return gctx_strpool__add(m->strs, src, *n);
}

static struct proc_priv *proc_new(struct gctx_model *m, __u32 pid, __u32 ppid, int parent_idx,
				  const char *comm, __u64 start_ns)
{
	struct proc_priv *p = mdl_proc_slot(m);
	struct proc_priv *parent;
	__u32 idx;

	if (!p)
		return NULL;
	idx = p->pub.idx;
	p->pub.idx = idx;
	p->pub.pid = pid;
	p->pub.ppid = ppid;
	p->pub.parent_idx = parent_idx;
	gctx_copy_str(p->pub.comm, sizeof(p->pub.comm), comm, GCTX_COMM_LEN);
	p->pub.start_ns = start_ns;
	p->pub.exit_code = -1;
	p->pub.exe = p->pub.args = p->pub.cgroup = "";
	if (gctx_hmap__put(&m->pid_map, pid, 0, idx))
		return NULL;
	if (parent_idx >= 0) {
		parent = P(m, parent_idx);
		p->pub.cgroup = parent->pub.cgroup; /* a child starts in its parent's cgroup */
		if (gctx_grow(&parent->pub.children, &parent->cap_children,
			      parent->pub.nchildren + 1, sizeof(*parent->pub.children)))
			return NULL;
		parent->pub.children[parent->pub.nchildren++] = idx;
	}
	return p;
}

/*
 * The live process an event of hdr belongs to. A pid never seen, or whose latest process has
 * exited (its fork was not seen), gets a new process of unknown start.
 */
struct proc_priv *mdl_proc_for_event(struct gctx_model *m, const struct gctx_ev_hdr *hdr,
				     bool want_thread)
{
	struct proc_priv *p = mdl_proc_lookup(m, hdr->tgid);

	if (!p || p->pub.exited) {
		p = proc_new(m, hdr->tgid, 0, -1, hdr->comm, 0);
		if (!p || !thread_add(m, p, hdr->tgid, hdr->comm, 0))
			return NULL;
	}
	if (want_thread) {
		struct gctx_thread *t = mdl_thread_live(m, p, hdr->tid, hdr->comm);

		if (!t)
			return NULL;
		/* names change (prctl(PR_SET_NAME)); the leader's name is the process's name */
		gctx_copy_str(t->comm, sizeof(t->comm), hdr->comm, GCTX_COMM_LEN);
		if (hdr->tid == hdr->tgid)
			mdl_proc_rename(p, hdr->comm);
	}
	return p;
}

/* The process is gone: threads, holds and the pending FD_KEPT list end at ts. */
static void proc_end(struct gctx_model *m, struct proc_priv *p, __u64 ts)
{
	__u32 i;

	p->pub.exited = true;
	p->pub.exit_ns = ts;
	for (i = 0; i < p->pub.nthreads; i++) {
		if (!p->pub.threads[i].exited) {
			p->pub.threads[i].exited = true;
			p->pub.threads[i].exit_ns = ts;
		}
	}
	for (i = 0; i < p->nhrefs; i++) {
		struct file_priv *f = F(m, p->hrefs[i].file_idx);

		mdl_holder_end(m, f, &f->pub.holders[p->hrefs[i].holder_idx], ts);
	}
	p->nkept = 0;
	mdl_fold_note_exit(m, p);
}

/* ---- record handlers ---- */

/* The GPU files of child c as the kernel listed them in its fd table (FD_FORK records of the
 * forking thread, then the fork record): 1 when the list is whole (then it is the answer, an
 * empty one too; the parent is seen holding each file, under the fds the child got), 0 when
 * there is none or it is not whole (the model's view of the parent is copied), -ENOMEM. *n, *first:
 * the files inherited, the first one's index. The thread's FD_FORK records are used up. */
static int fork_fds_listed(struct gctx_model *m, struct proc_priv *par, struct proc_priv *c,
			   const struct gctx_ev_fork *ev, __u32 *n, __u32 *first)
{
	__u32 i, k, listed = 0, tid = ev->hdr.tid;
	bool whole;

	for (i = 0; i < par->nkept; i++)
		listed += par->kept[i].fork_tid == tid;
	whole = (ev->flags & GCTX_FORK_FDS_SCANNED) && !(ev->flags & GCTX_FORK_FDS_LOST) &&
		ev->nfds == listed;
	for (i = k = 0; i < par->nkept; i++) {
		const struct kept_fd *kf = &par->kept[i];
		struct gctx_holder *h;
		struct file_priv *f;

		if (kf->fork_tid != tid) {
			par->kept[k++] = *kf;
			continue;
		}
		if (!whole)
			continue;
		f = mdl_file_resolve(m, kf->file, par);
		if (!f && !(f = mdl_file_new(m, kf->file, kf->kind, "", true)))
			return -ENOMEM;
		/* the parent had it at the fork: a copy the model did not see (dup) or one it
		 * thought closed */
		h = mdl_holder_find(m, par->pub.idx, f);
		if (!h && !(h = mdl_holder_add(m, par, f, GCTX_HOLD_RECEIVED, par->pub.idx,
					       ev->hdr.ts_ns, NULL, 0)))
			return -ENOMEM;
		mdl_holder_revive(f, h);
		mdl_holder_add_fd(h, kf->fd);
		h = mdl_holder_find(m, c->pub.idx, f);
		if (!h) {
			h = mdl_holder_add(m, c, f, GCTX_HOLD_INHERITED, par->pub.idx,
					   ev->hdr.ts_ns, NULL, 0);
			if (!h)
				return -ENOMEM;
			if (!(*n)++)
				*first = fidx(f);
		}
		mdl_holder_add_fd(h, kf->fd);
	}
	par->nkept = k;
	return whole;
}

int mdl_ev_fork(struct gctx_model *m, const struct gctx_ev_fork *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	struct proc_priv *par, *c, *old;
	__u32 i, n = 0, first = 0;
	int err;

	par = mdl_proc_for_event(m, hdr, true);
	if (!par)
		return -ENOMEM;
	if ((ev->flags & GCTX_FORK_THREAD) || ev->child_tgid == hdr->tgid)
		return thread_add(m, par, ev->child_tid, hdr->comm, hdr->ts_ns) ? 0 : -ENOMEM;

	old = mdl_proc_lookup(m, ev->child_tgid);
	if (old && !old->pub.exited) { /* its exit was missed */
		proc_end(m, old, hdr->ts_ns);
		old->pub.exit_code = -1;
		old->pub.signal = 0;
		if (old->fws_pending) {
			err = mdl_fws_raise(m, old, false);
			if (err)
				return err;
		}
	}
	c = proc_new(m, ev->child_tgid, hdr->tgid, par->pub.idx, hdr->comm, hdr->ts_ns);
	if (!c || !thread_add(m, c, ev->child_tid, hdr->comm, hdr->ts_ns))
		return -ENOMEM;

	/* the child shares every description the parent holds right now: as the kernel listed
	 * them in the child's table, or as the model has them */
	err = fork_fds_listed(m, par, c, ev, &n, &first);
	if (err < 0)
		return err;
	for (i = 0; !err && i < par->nhrefs; i++) {
		struct file_priv *f = F(m, par->hrefs[i].file_idx);
		struct gctx_holder *ph = &f->pub.holders[par->hrefs[i].holder_idx];
		__s32 fds[8];
		__u32 nfds;

		if (!ph->held)
			continue;
		nfds = ph->nfds;
		memcpy(fds, ph->fds, sizeof(fds));
		if (!mdl_holder_add(m, c, f, GCTX_HOLD_INHERITED, par->pub.idx, hdr->ts_ns, fds,
				    nfds))
			return -ENOMEM;
		if (!n++)
			first = fidx(f);
	}
	if (n) {
		c->fws_pending = true;
		c->fws_ts = hdr->ts_ns;
		c->fws_parent_idx = par->pub.idx;
		c->fws_file_idx = first;
		c->fws_nfiles = n;
	}
	/* initialised CUDA/HIP state is carried into the child until it execs */
	for (i = 0; i < 2; i++) {
		c->api_src[i] = par->api_src[i];
		c->api_fork_ns[i] =
		    par->api_src[i] == par->pub.idx + 1 ? hdr->ts_ns : par->api_fork_ns[i];
	}
	return 0;
}

int mdl_ev_exec(struct gctx_model *m, const struct gctx_ev_exec *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	__u64 ts = hdr->ts_ns, serial;
	struct gctx_thread *t;
	struct gctx_exec *x;
	struct proc_priv *p;
	__u64 start = 0;
	__u32 i, unknown = 0, nkept = 0;
	bool whole;
	int err;

	p = mdl_proc_for_event(m, hdr, false);
	if (!p || gctx_grow(&p->pub.execs, &p->cap_execs, p->pub.nexecs + 1, sizeof(*p->pub.execs)))
		return -ENOMEM;
	x = &p->pub.execs[p->pub.nexecs++];
	m->nexecs++;
	memset(x, 0, sizeof(*x));
	p->api_src[0] = p->api_src[1] = 0; /* a new program: no driver state */
	x->ts_ns = ts;
	x->old_tid = ev->old_tid;
	x->filename = intern_path(m, ev->filename, sizeof(ev->filename));
	x->args = intern_args(m, ev->args, ev->args_len, &x->args_len);
	if (!x->filename || !x->args)
		return -ENOMEM;

	/* a non-leader exec: the caller takes over the leader's pid, its old tid is gone */
	if (ev->old_tid != hdr->tid) {
		t = thread_find(m, p, ev->old_tid);
		if (!t || t->exited)
			t = thread_add(m, p, ev->old_tid, hdr->comm, 0);
		if (!t)
			return -ENOMEM;
		start = t->start_ns;
		t->exited = true;
		t->exit_ns = ts;
		t = thread_find(m, p, hdr->tid);
		if (!t || t->exited)
			t = thread_add(m, p, hdr->tid, hdr->comm, start);
	} else {
		t = mdl_thread_live(m, p, hdr->tid, hdr->comm);
	}
	if (!t)
		return -ENOMEM;
	gctx_copy_str(t->comm, sizeof(t->comm), hdr->comm, GCTX_COMM_LEN);

	/* The kernel listed the GPU fds open after the exec (it read the new program's fd table:
	 * however close-on-exec was set, and whatever was dup'd or closed since the open). Whole,
	 * the list is the answer, an empty one too: a file not in it was closed. Not whole (a
	 * record lost, a table past the scan's bound), a file not in it is of unknown state: no
	 * finding, counted, never a guess from the open flags. */
	for (i = 0; i < p->nkept; i++)
		nkept += !p->kept[i].fork_tid;
	whole = (ev->fd_scan & GCTX_EXEC_FDS_SCANNED) && !(ev->fd_scan & GCTX_EXEC_FDS_LOST) &&
		((ev->fd_scan & GCTX_EXEC_FDS_UNCOUNTED) || ev->fds_kept == nkept);
	serial = ++m->exec_serial;
	for (i = 0; i < p->nkept; i++) {
		const struct kept_fd *k = &p->kept[i];
		struct file_priv *f;
		struct gctx_holder *h;

		if (k->fork_tid)
			continue;
		f = mdl_file_resolve(m, k->file, p);
		if (!f)
			f = mdl_file_new(m, k->file, k->kind, "", true);
		if (!f)
			return -ENOMEM;
		h = mdl_holder_find(m, p->pub.idx, f);
		if (!h)
			h = mdl_holder_add(m, p, f, GCTX_HOLD_RECEIVED, p->pub.idx, ts, NULL, 0);
		if (!h)
			return -ENOMEM;
		mdl_holder_revive(f, h);
		if (f->kept_mark != serial) {
			f->kept_mark = serial;
			f->kept_fd = k->fd;
			h->nfds = 0;
		}
		mdl_holder_add_fd(h, k->fd);
	}
	for (i = 0; i < p->nhrefs; i++) {
		struct file_priv *f = F(m, p->hrefs[i].file_idx);
		struct gctx_holder *h = &f->pub.holders[p->hrefs[i].holder_idx];

		if (!h->held)
			continue;
		if (f->kept_mark != serial) {
			/* closed by the exec; or, the list not whole, unknown: the holder ends
			 * either way (a later use of the file shows it again) */
			unknown += !whole;
			mdl_holder_end(m, f, h, ts);
			continue;
		}
		h->kept_across_exec = true;
		h->execs_since++;
		err = mdl_across_exec_raise(m, p, f, f->kept_fd, ev);
		if (err)
			return err;
	}
	if (!whole) {
		x->fds_unknown = true;
		m->exec_fds_unknown++;
		m->exec_files_unknown += unknown;
	}
	p->nkept = 0;
	p->fws_pending = false; /* it exec'd: whatever it inherited is no longer CUDA state */
	/* the new image's name, after the warnings that name the process as it was */
	mdl_proc_rename(p, hdr->comm);
	p->pub.ncomm_at_exec = p->pub.ncomm_prev;
	p->pub.exe = x->filename;
	return 0;
}

int mdl_ev_exit(struct gctx_model *m, const struct gctx_ev_exit *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	struct gctx_thread *t;
	struct proc_priv *p;
	int err;

	p = mdl_proc_for_event(m, hdr, true);
	if (!p)
		return -ENOMEM;
	t = thread_find(m, p, hdr->tid);
	if (t) {
		t->exited = true;
		t->exit_ns = hdr->ts_ns;
	}
	if (!ev->group_dead)
		return 0;

	if ((ev->exit_code & 0x7f) == 0) {
		p->pub.exit_code = (ev->exit_code >> 8) & 0xff;
		p->pub.signal = 0;
	} else {
		p->pub.exit_code = -1;
		p->pub.signal = ev->exit_code & 0x7f;
		p->pub.core_dumped = ev->exit_code & 0x80;
	}
	proc_end(m, p, hdr->ts_ns);
	err = mdl_crash_check(m, p, hdr->tid, hdr->ts_ns);
	if (!err && p->fws_pending)
		err = mdl_fws_raise(m, p, false);
	return err;
}

/* A process's cgroup, for it and the children it forks from now on. */
int mdl_ev_cgroup(struct gctx_model *m, const struct gctx_rec_cgroup *r)
{
	struct proc_priv *p = mdl_proc_lookup(m, r->pid);
	const char *s;

	if (!p)
		return 0; /* never seen: nothing to attribute */
	s = gctx_strpool__add(m->strs, r->path, strnlen(r->path, sizeof(r->path)));
	if (!s)
		return -ENOMEM;
	p->pub.cgroup = s;
	return 0;
}

int mdl_ev_proc_present(struct gctx_model *m, const struct gctx_rec_proc *r)
{
	struct proc_priv *p = mdl_proc_lookup(m, r->pid), *par = NULL;
	bool lazy;

	if (r->ppid && r->ppid != r->pid)
		par = mdl_proc_lookup(m, r->ppid);
	if (!p || p->pub.exited) {
		p = proc_new(m, r->pid, r->ppid, par ? (int)par->pub.idx : -1, r->comm,
			     r->start_ns);
		if (!p || !thread_add(m, p, r->pid, r->comm, 0))
			return -ENOMEM;
		lazy = true;
	} else {
		/* already made from an event or a file record: complete what it lacks */
		lazy = p->pub.parent_idx < 0 && !p->pub.ppid && !p->pub.start_ns;
		if (lazy) {
			p->pub.ppid = r->ppid;
			p->pub.start_ns = r->start_ns;
			if (!p->pub.comm[0])
				gctx_copy_str(p->pub.comm, sizeof(p->pub.comm), r->comm,
					      GCTX_COMM_LEN);
			if (par && par != p) {
				if (gctx_grow(&par->pub.children, &par->cap_children,
					      par->pub.nchildren + 1, sizeof(*par->pub.children)))
					return -ENOMEM;
				par->pub.children[par->pub.nchildren++] = p->pub.idx;
				p->pub.parent_idx = par->pub.idx;
			}
		}
	}
	if (lazy)
		p->pub.present_at_attach = true;
	if (!p->pub.exe[0] && !(p->pub.exe = intern_path(m, r->exe, sizeof(r->exe))))
		return -ENOMEM;
	if (!p->pub.args_len) {
		__u32 n;
		const char *args = intern_args(m, r->args, r->args_len, &n);

		if (!args)
			return -ENOMEM;
		p->pub.args = args;
		p->pub.args_len = n;
	}
	return 0;
}

/* A thread that existed at attach: its process's present record came first. */
int mdl_ev_thread_present(struct gctx_model *m, const struct gctx_rec_thread *r)
{
	struct proc_priv *p = mdl_proc_lookup(m, r->pid);

	if (!p || p->pub.exited)
		return 0;
	if (thread_find(m, p, r->tid))
		return 0;
	return thread_add(m, p, r->tid, r->comm, 0) ? 0 : -ENOMEM;
}
