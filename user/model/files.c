// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model: GPU file descriptions and the processes that hold them; open, use (ioctl,
 * mmap), close, the fds kept across exec, and the files held when gpuctx attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "lib/errcode.h"
#include "lib/grow.h"
#include "lib/str.h"
#include "model/model_priv.h"

/* ---- files and holders ---- */

struct file_priv *mdl_file_new(struct gctx_model *m, __u64 addr, __u32 kind, const char *path,
			       bool map_it)
{
	struct file_priv *f = gctx_chunks__add(&m->files);

	if (!f)
		return NULL;
	f->pub.id = m->files.n;
	f->pub.file = addr;
	f->pub.kind = kind;
	gctx_copy_str(f->pub.path, sizeof(f->pub.path), path, GCTX_PATH_LEN);
	f->pub.opener_idx = -1;
	f->first_obj = -1;
	if (map_it && gctx_hmap__put(&m->file_map, addr, 0, fidx(f)))
		return NULL;
	return f;
}

struct file_priv *mdl_file_lookup(const struct gctx_model *m, __u64 addr)
{
	__u32 idx;

	return gctx_hmap__get(&m->file_map, addr, 0, &idx) ? F(m, idx) : NULL;
}

struct gctx_holder *mdl_holder_find(const struct gctx_model *m, __u32 proc_idx, struct file_priv *f)
{
	__u32 hi;

	if (!gctx_hmap__get(&m->holder_map, proc_idx, fidx(f), &hi))
		return NULL;
	return &f->pub.holders[hi];
}

/* The file description at addr as process p can see it: the latest one, unless it is fully
 * closed and p never held it (then the address was reused by a description we never saw). */
struct file_priv *mdl_file_resolve(const struct gctx_model *m, __u64 addr, struct proc_priv *p)
{
	struct file_priv *f = mdl_file_lookup(m, addr);

	if (f && f->pub.closed && !mdl_holder_find(m, p->pub.idx, f))
		return NULL;
	return f;
}

void mdl_holder_add_fd(struct gctx_holder *h, __s32 fd)
{
	__u32 i;

	if (fd < 0)
		return;
	for (i = 0; i < h->nfds; i++)
		if (h->fds[i] == fd)
			return;
	if (h->nfds < sizeof(h->fds) / sizeof(h->fds[0]))
		h->fds[h->nfds++] = fd;
}

static void holder_del_fd(struct gctx_holder *h, __s32 fd)
{
	__u32 i;

	for (i = 0; i < h->nfds; i++) {
		if (h->fds[i] != fd)
			continue;
		memmove(&h->fds[i], &h->fds[i + 1], (h->nfds - i - 1) * sizeof(h->fds[0]));
		h->nfds--;
		return;
	}
}

/* New holder of f for p. Invalidates pointers to f's other holders. */
struct gctx_holder *mdl_holder_add(struct gctx_model *m, struct proc_priv *p, struct file_priv *f,
				   enum gctx_hold_how how, __u32 from, __u64 since,
				   const __s32 *fds, __u32 nfds)
{
	struct gctx_gpu_file *fp = &f->pub;
	struct gctx_holder *h;
	__u32 i;

	if (gctx_grow(&fp->holders, &f->cap_holders, fp->nholders + 1, sizeof(*fp->holders)) ||
	    gctx_grow(&p->hrefs, &p->cap_hrefs, p->nhrefs + 1, sizeof(*p->hrefs)) ||
	    gctx_hmap__put(&m->holder_map, p->pub.idx, fidx(f), fp->nholders))
		return NULL;
	p->hrefs[p->nhrefs].file_idx = fidx(f);
	p->hrefs[p->nhrefs].holder_idx = fp->nholders;
	p->nhrefs++;
	h = &fp->holders[fp->nholders++];
	memset(h, 0, sizeof(*h));
	h->proc_idx = p->pub.idx;
	h->how = how;
	h->from_proc_idx = from;
	h->since_ns = since;
	h->held = true;
	for (i = 0; i < nfds; i++)
		mdl_holder_add_fd(h, fds[i]);
	f->nheld++;
	fp->closed = false;
	fp->close_ns = 0;
	return h;
}

static void file_objs_end(struct gctx_model *m, struct file_priv *f, __u64 ts)
{
	int i;

	for (i = f->first_obj; i >= 0; i = O(m, i)->next_in_file) {
		struct gctx_gpu_obj *o = &O(m, i)->pub;

		if (!o->destroyed) {
			o->destroyed = true;
			o->destroy_ns = ts;
		}
	}
}

void mdl_holder_end(struct gctx_model *m, struct file_priv *f, struct gctx_holder *h, __u64 ts)
{
	if (!h->held)
		return;
	h->held = false;
	h->until_ns = ts;
	if (f->nheld && --f->nheld == 0) {
		f->pub.closed = true;
		f->pub.close_ns = ts;
		/* the last reference is gone: the driver tears down everything on the file */
		file_objs_end(m, f, ts);
	}
}

/* A holder that ended shows up again (a use, a kept fd): the process still has the file. */
void mdl_holder_revive(struct file_priv *f, struct gctx_holder *h)
{
	if (h->held)
		return;
	h->held = true;
	h->until_ns = 0;
	f->nheld++;
	f->pub.closed = false;
	f->pub.close_ns = 0;
}

static void file_close_all(struct gctx_model *m, struct file_priv *f, __u64 ts)
{
	__u32 i;

	for (i = 0; i < f->pub.nholders; i++)
		mdl_holder_end(m, f, &f->pub.holders[i], ts);
	if (!f->pub.closed) {
		f->pub.closed = true;
		f->pub.close_ns = ts;
		file_objs_end(m, f, ts);
	}
}

/* ---- record handlers ---- */

int mdl_ev_open(struct gctx_model *m, const struct gctx_ev_open *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	struct file_priv *old, *f;
	struct proc_priv *p;
	struct obj_priv *o;

	p = mdl_proc_for_event(m, hdr, true);
	if (!p)
		return -ENOMEM;
	old = mdl_file_lookup(m, ev->file);
	if (old && !old->pub.closed) /* a close was missed: the address is a new description */
		file_close_all(m, old, hdr->ts_ns);
	f = mdl_file_new(m, ev->file, ev->kind, ev->path, true);
	if (!f)
		return -ENOMEM;
	f->pub.opener_idx = p->pub.idx;
	f->pub.opener_pid = p->pub.pid;
	f->pub.opener_tid = hdr->tid;
	gctx_copy_str(f->opener_comm, sizeof(f->opener_comm), hdr->comm, GCTX_COMM_LEN);
	f->pub.open_ns = hdr->ts_ns;
	f->pub.open_flags = ev->flags;
	if (!mdl_holder_add(m, p, f, GCTX_HOLD_OPENED, p->pub.idx, hdr->ts_ns, &ev->fd, 1))
		return -ENOMEM;
	if (ev->kind == GCTX_DEV_KFD) { /* open(/dev/kfd) makes the kfd_process */
		struct gctx_ioctl_desc d = {.obj_kind = GCTX_OBJ_KFD_PROCESS};

		o = mdl_obj_add(m, f, GCTX_OBJ_KFD_PROCESS, &d, 0, p, hdr->tid, hdr->ts_ns);
		if (!o)
			return -ENOMEM;
	}
	return 0;
}

/* A use (ioctl or mmap) by hdr's process of the description at addr; d is its verdict. */
static int ev_use(struct gctx_model *m, const struct gctx_ev_hdr *hdr, __u64 addr, __s32 fd_no,
		  __u32 kind, const struct gctx_ioctl_desc *d, const struct gctx_ev_ioctl *ioc,
		  __s64 ret, struct proc_priv **pp, struct file_priv **fp)
{
	struct proc_priv *p;
	struct file_priv *f;
	struct gctx_holder *h;
	bool unknown = false;

	p = mdl_proc_for_event(m, hdr, true);
	if (!p)
		return -ENOMEM;
	f = mdl_file_resolve(m, addr, p);
	if (!f) {
		f = mdl_file_new(m, addr, kind, "", true);
		if (!f)
			return -ENOMEM;
		unknown = true;
	}
	*pp = p;
	*fp = f;
	h = mdl_holder_find(m, p->pub.idx, f);
	if (!h)
		h = mdl_holder_add(m, p, f, GCTX_HOLD_RECEIVED, p->pub.idx, hdr->ts_ns, NULL, 0);
	if (!h)
		return -ENOMEM;
	mdl_holder_revive(f, h);
	mdl_holder_add_fd(h, fd_no);
	if (!ioc) { /* an mmap */
		h->nmmaps++;
		f->pub.nmmaps++;
		p->pub.nmmaps++;
	} else {
		h->nioctls++;
		f->pub.nioctls++;
		p->pub.nioctls++;
	}
	if (!h->first_use_ns)
		h->first_use_ns = hdr->ts_ns;
	return mdl_use_finding(m, hdr, p, f, h, fd_no, d, ioc, ret, unknown);
}

int mdl_ev_ioctl(struct gctx_model *m, const struct gctx_ev_ioctl *ev)
{
	struct gctx_ioctl_desc d;
	struct proc_priv *p;
	struct file_priv *f;
	int err;

	/* the facts only: a finding that needs the call's name decodes it again */
	gctx_decode_ioctl_facts(ev, &d);
	err = ev_use(m, &ev->hdr, ev->file, ev->fd, ev->kind, &d, ev, ev->ret, &p, &f);
	if (err)
		return err;
	return mdl_objs_apply(m, f, p, ev->hdr.tid, ev->hdr.ts_ns, &d);
}

int mdl_ev_mmap(struct gctx_model *m, const struct gctx_ev_mmap *ev)
{
	struct gctx_ioctl_desc d;
	struct proc_priv *p;
	struct file_priv *f;

	memset(&d, 0, sizeof(d));
	mdl_textf(d.name, sizeof(d.name), "mmap");
	if (ev->ret < 0)
		d.err = gctx_ret_errno(ev->ret);
	d.failed = d.err != 0;
	return ev_use(m, &ev->hdr, ev->file, ev->fd, ev->kind, &d, NULL, ev->ret, &p, &f);
}

int mdl_ev_close(struct gctx_model *m, const struct gctx_ev_fd *ev)
{
	struct file_priv *f = mdl_file_lookup(m, ev->file);
	struct proc_priv *p = mdl_proc_lookup(m, ev->hdr.tgid);
	struct gctx_holder *h;

	if (!f || !p || !(h = mdl_holder_find(m, p->pub.idx, f))) {
		m->ignored_closes++;
		return 0;
	}
	holder_del_fd(h, ev->fd);
	/* the kernel counted the fds left on the file: the model's list may lack a copy it did
	 * not see made (dup, F_DUPFD) or keep one closed since (close_range, dup2 over it) */
	if (ev->flags & GCTX_FD_COUNTED ? !ev->others : !h->nfds)
		mdl_holder_end(m, f, h, ev->hdr.ts_ns);
	else
		mdl_holder_revive(f, h);
	return 0;
}

/* A GPU fd the kernel found open after an exec of hdr's process (FD_KEPT) or in the table of
 * a child its thread forks (FD_FORK), waiting for that EXEC or FORK record. */
int mdl_ev_fd_kept(struct gctx_model *m, const struct gctx_ev_fd *ev, bool fork)
{
	struct proc_priv *p = mdl_proc_for_event(m, &ev->hdr, true);
	struct kept_fd *k;

	if (!p || gctx_grow(&p->kept, &p->cap_kept, p->nkept + 1, sizeof(*p->kept)))
		return -ENOMEM;
	k = &p->kept[p->nkept++];
	k->file = ev->file;
	k->fd = ev->fd;
	k->kind = ev->kind;
	k->fork_tid = fork ? ev->hdr.tid : 0;
	return 0;
}

int mdl_ev_file_present(struct gctx_model *m, const struct gctx_rec_file *r)
{
	struct gctx_ev_hdr hdr = {.tid = r->pid, .tgid = r->pid};
	struct file_priv *f = NULL;
	struct gctx_holder *h, *ph;
	struct proc_priv *p;

	p = mdl_proc_lookup(m, r->pid);
	if (!p || p->pub.exited) {
		p = mdl_proc_for_event(m, &hdr, false);
		if (!p)
			return -ENOMEM;
		p->pub.present_at_attach = true;
	}
	if (r->file) {
		f = mdl_file_lookup(m, r->file);
		if (f && f->pub.closed)
			f = NULL;
	}
	if (!f) {
		f = mdl_file_new(m, r->file, r->kind, r->path, r->file != 0);
		if (!f)
			return -ENOMEM;
		f->pub.present_at_attach = true;
		f->pub.open_flags = r->flags | (r->cloexec ? O_CLOEXEC : 0);
	}

	h = mdl_holder_find(m, p->pub.idx, f);
	if (h) { /* another fd on the same description (dup) */
		mdl_holder_revive(f, h);
		mdl_holder_add_fd(h, r->fd);
		return 0;
	}
	ph = p->pub.parent_idx >= 0 ? mdl_holder_find(m, p->pub.parent_idx, f) : NULL;
	if (ph && ph->held)
		h = mdl_holder_add(m, p, f, GCTX_HOLD_INHERITED, p->pub.parent_idx, 0, &r->fd, 1);
	else
		h = mdl_holder_add(m, p, f, GCTX_HOLD_PRESENT, p->pub.idx, 0, &r->fd, 1);
	if (!h)
		return -ENOMEM;
	if (f->pub.opener_idx < 0 && h->how == GCTX_HOLD_PRESENT) {
		f->pub.opener_idx = p->pub.idx;
		f->pub.opener_pid = p->pub.pid;
		f->pub.opener_tid = p->pub.pid;
		gctx_copy_str(f->opener_comm, sizeof(f->opener_comm), p->pub.comm, GCTX_COMM_LEN);
	}
	return 0;
}
