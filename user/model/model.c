// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model. Records are applied one at a time, in ring-buffer order.
 *
 * Storage: processes, files, objects and findings live in chunked arrays (a growable table of
 * fixed-size chunks), so a record never moves once created and the pointers handed to callers
 * stay valid until the model is freed. Each public record is the first member of a private
 * wrapper that carries the bookkeeping callers do not see. Lookups go through open-addressing
 * hash tables keyed by two 64-bit words: pid -> latest process, file address -> latest file,
 * (process, tid) -> thread, (process, file) -> holder and -> use finding, (file, handle) ->
 * object, (file, RM client) -> objects of that client.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/api.h"
#include "lib/hmap.h"
#include "model/model.h"
#include "trace/records.h"

#define CHUNK_SHIFT    8
#define CHUNK_LEN      (1u << CHUNK_SHIFT)
#define CHAIN_WALK_MAX 256 /* fork-chain steps followed before giving up (cycles, runaway) */
#define U64_MAX_VAL    (~0ULL)

/* ---- chunked storage: stable addresses, O(1) index ---- */

struct chunks {
	char **chunk;
	__u32 nchunks;
	__u32 n;
	size_t elem;
};

static void *chunks_at(const struct chunks *c, __u32 i)
{
	return c->chunk[i >> CHUNK_SHIFT] + (size_t)(i & (CHUNK_LEN - 1)) * c->elem;
}

/* A zeroed new element at index c->n - 1, or NULL. */
static void *chunks_add(struct chunks *c)
{
	if (c->n == c->nchunks * CHUNK_LEN) {
		char **nc = realloc(c->chunk, (c->nchunks + 1) * sizeof(*nc));

		if (!nc)
			return NULL;
		c->chunk = nc;
		nc[c->nchunks] = calloc(CHUNK_LEN, c->elem);
		if (!nc[c->nchunks])
			return NULL;
		c->nchunks++;
	}
	return chunks_at(c, c->n++);
}

static void chunks_free(struct chunks *c)
{
	__u32 i;

	for (i = 0; i < c->nchunks; i++)
		free(c->chunk[i]);
	free(c->chunk);
}

/* ---- private wrappers ---- */

struct kept_fd {
	__u64 file;
	__s32 fd;
	__u32 kind;
};

/* One holder record of this process: file index and index in that file's holders. */
struct href {
	__u32 file_idx;
	__u32 holder_idx;
};

struct proc_priv {
	struct gctx_proc pub;
	__u32 cap_execs, cap_threads, cap_children;
	struct href *hrefs; /* every holder record of this process, in creation order */
	__u32 nhrefs, cap_hrefs;
	struct kept_fd *kept; /* FD_KEPT records waiting for this process's EXEC */
	__u32 nkept, cap_kept;
	bool kept_seen;
	/* fork-with-gpu-state waiting for this child to exec (cancel) or end (raise) */
	bool fws_pending;
	__u64 fws_ts;
	__u32 fws_parent_idx;
	__u32 fws_file_idx;
	__u32 fws_nfiles;
	/* API state, per vendor (enum gctx_api_vendor): 1 + index of the process whose
	 * initialised CUDA/HIP state this one carries (itself after its own init, an ancestor
	 * after fork without exec), 0 none; and the fork that brought it. */
	__u32 api_src[2];
	__u64 api_fork_ns[2];
	__u32 api_icc_id[2]; /* its inherited-context-call finding, 0 none */
	__u64 api_calls;
	int hip_device;
	__u32 *ctxs; /* API context ids of this process */
	__u32 nctxs, cap_ctxs;
};

struct file_priv {
	struct gctx_gpu_file pub;
	__u32 cap_holders;
	__u32 nheld;			 /* holders with held == true */
	__u64 kept_mark;		 /* exec serial that listed this file in FD_KEPT */
	__s32 kept_fd;			 /* first kept fd of that exec */
	char opener_comm[GCTX_COMM_LEN]; /* the opener's comm when it opened (it may exec since) */
	int first_obj; /* objects on this file, newest first, linked by next_in_file */
};

struct obj_priv {
	struct gctx_gpu_obj pub;
	int first_child; /* RM tree, linked by next_sibling */
	int next_sibling;
	int next_in_client;
	int next_in_file;
};

struct gctx_model {
	struct chunks procs, files, objs, findings;
	struct gctx_hmap pid_map;     /* (pid, 0) -> latest process */
	struct gctx_hmap file_map;    /* (address, 0) -> latest file */
	struct gctx_hmap thread_map;  /* (proc, tid) -> latest thread index in proc */
	struct gctx_hmap holder_map;  /* (proc, file) -> holder index in file */
	struct gctx_hmap finding_map; /* (proc, file) -> inherited/foreign use finding */
	struct gctx_hmap obj_map;     /* (family << 32 | file, key) -> latest object */
	struct gctx_hmap client_map;  /* (file, client) -> newest object of that RM client */
	struct gctx_rec_device *devices;
	__u32 ndevices, cap_devices;
	struct chunks ctxs, mems;
	struct gctx_hmap mem_map;    /* (proc, ptr) -> live API allocation */
	struct gctx_hmap apierr_map; /* (proc, fn << 32 | code) -> api-error finding */
	struct gctx_rec_probe *probes;
	__u32 nprobes, cap_probes;
	struct gctx_rec_drops drops;
	struct gctx_rec_end end;
	bool has_end;
	__u64 events[GCTX_EV_KERNEL_MAX];
	__u64 total;
	__u64 unknown_records;
	__u64 ignored_closes;
	__u64 exec_serial;
	int *stack; /* scratch for object tree walks */
	__u32 cap_stack;
	gctx_finding_cb cb;
	void *cb_ctx;
};

static int grow(void *pp, __u32 *cap, __u32 need, size_t elem)
{
	void **p = pp;
	__u32 ncap = *cap ? *cap : 4;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, (size_t)ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

/* Copy a possibly unterminated fixed-size string. */
static void copy_str(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* snprintf for human-readable text, where cutting a long line short is fine */
__attribute__((format(printf, 3, 4))) static void textf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static struct proc_priv *P(const struct gctx_model *m, __u32 idx)
{
	return chunks_at(&m->procs, idx);
}

static struct file_priv *F(const struct gctx_model *m, __u32 idx)
{
	return chunks_at(&m->files, idx);
}

static struct obj_priv *O(const struct gctx_model *m, __u32 idx)
{
	return chunks_at(&m->objs, idx);
}

static struct gctx_finding *FIND(const struct gctx_model *m, __u32 idx)
{
	return chunks_at(&m->findings, idx);
}

static __u32 fidx(const struct file_priv *f)
{
	return f->pub.id - 1;
}

/* ---- processes and threads ---- */

static struct proc_priv *proc_lookup(const struct gctx_model *m, __u32 pid)
{
	__u32 idx;

	return gctx_hmap__get(&m->pid_map, pid, 0, &idx) ? P(m, idx) : NULL;
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

	if (grow(&pp->threads, &p->cap_threads, pp->nthreads + 1, sizeof(*pp->threads)))
		return NULL;
	if (gctx_hmap__put(&m->thread_map, pp->idx, tid, pp->nthreads))
		return NULL;
	t = &pp->threads[pp->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	copy_str(t->comm, sizeof(t->comm), comm, GCTX_COMM_LEN);
	t->start_ns = start_ns;
	return t;
}

/* The live thread tid of p, created (start unknown) when the trace has not shown it. */
static struct gctx_thread *thread_live(struct gctx_model *m, struct proc_priv *p, __u32 tid,
				       const char *comm)
{
	struct gctx_thread *t = thread_find(m, p, tid);

	if (t && !t->exited)
		return t;
	return thread_add(m, p, tid, comm, 0);
}

static struct proc_priv *proc_new(struct gctx_model *m, __u32 pid, __u32 ppid, int parent_idx,
				  const char *comm, __u64 start_ns)
{
	struct proc_priv *p = chunks_add(&m->procs);
	struct proc_priv *parent;
	__u32 idx;

	if (!p)
		return NULL;
	idx = m->procs.n - 1;
	p->pub.idx = idx;
	p->pub.pid = pid;
	p->pub.ppid = ppid;
	p->pub.parent_idx = parent_idx;
	copy_str(p->pub.comm, sizeof(p->pub.comm), comm, GCTX_COMM_LEN);
	p->pub.start_ns = start_ns;
	p->pub.exit_code = -1;
	if (gctx_hmap__put(&m->pid_map, pid, 0, idx))
		return NULL;
	if (parent_idx >= 0) {
		parent = P(m, parent_idx);
		if (grow(&parent->pub.children, &parent->cap_children, parent->pub.nchildren + 1,
			 sizeof(*parent->pub.children)))
			return NULL;
		parent->pub.children[parent->pub.nchildren++] = idx;
	}
	return p;
}

/*
 * The live process an event of hdr belongs to. A pid never seen, or whose latest process has
 * exited (its fork was not seen), gets a new process of unknown start.
 */
static struct proc_priv *proc_for_event(struct gctx_model *m, const struct gctx_ev_hdr *hdr,
					bool want_thread)
{
	struct proc_priv *p = proc_lookup(m, hdr->tgid);

	if (!p || p->pub.exited) {
		p = proc_new(m, hdr->tgid, 0, -1, hdr->comm, 0);
		if (!p || !thread_add(m, p, hdr->tgid, hdr->comm, 0))
			return NULL;
	}
	if (want_thread) {
		struct gctx_thread *t = thread_live(m, p, hdr->tid, hdr->comm);

		if (!t)
			return NULL;
		/* names change (prctl(PR_SET_NAME)); the leader's name is the process's name */
		copy_str(t->comm, sizeof(t->comm), hdr->comm, GCTX_COMM_LEN);
		if (hdr->tid == hdr->tgid)
			copy_str(p->pub.comm, sizeof(p->pub.comm), hdr->comm, GCTX_COMM_LEN);
	}
	return p;
}

static const char *pid_comm(const struct gctx_model *m, int idx)
{
	return idx >= 0 ? P(m, idx)->pub.comm : "?";
}

/* ---- files and holders ---- */

static struct file_priv *file_new(struct gctx_model *m, __u64 addr, __u32 kind, const char *path,
				  bool map_it)
{
	struct file_priv *f = chunks_add(&m->files);

	if (!f)
		return NULL;
	f->pub.id = m->files.n;
	f->pub.file = addr;
	f->pub.kind = kind;
	copy_str(f->pub.path, sizeof(f->pub.path), path, GCTX_PATH_LEN);
	f->pub.opener_idx = -1;
	f->first_obj = -1;
	if (map_it && gctx_hmap__put(&m->file_map, addr, 0, fidx(f)))
		return NULL;
	return f;
}

static struct file_priv *file_lookup(const struct gctx_model *m, __u64 addr)
{
	__u32 idx;

	return gctx_hmap__get(&m->file_map, addr, 0, &idx) ? F(m, idx) : NULL;
}

static struct gctx_holder *holder_find(const struct gctx_model *m, __u32 proc_idx,
				       struct file_priv *f)
{
	__u32 hi;

	if (!gctx_hmap__get(&m->holder_map, proc_idx, fidx(f), &hi))
		return NULL;
	return &f->pub.holders[hi];
}

/* The file description at addr as process p can see it: the latest one, unless it is fully
 * closed and p never held it (then the address was reused by a description we never saw). */
static struct file_priv *file_resolve(const struct gctx_model *m, __u64 addr, struct proc_priv *p)
{
	struct file_priv *f = file_lookup(m, addr);

	if (f && f->pub.closed && !holder_find(m, p->pub.idx, f))
		return NULL;
	return f;
}

static void holder_add_fd(struct gctx_holder *h, __s32 fd)
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
static struct gctx_holder *holder_add(struct gctx_model *m, struct proc_priv *p,
				      struct file_priv *f, enum gctx_hold_how how, __u32 from,
				      __u64 since, const __s32 *fds, __u32 nfds)
{
	struct gctx_gpu_file *fp = &f->pub;
	struct gctx_holder *h;
	__u32 i;

	if (grow(&fp->holders, &f->cap_holders, fp->nholders + 1, sizeof(*fp->holders)) ||
	    grow(&p->hrefs, &p->cap_hrefs, p->nhrefs + 1, sizeof(*p->hrefs)) ||
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
		holder_add_fd(h, fds[i]);
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

static void holder_end(struct gctx_model *m, struct file_priv *f, struct gctx_holder *h, __u64 ts)
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
static void holder_revive(struct file_priv *f, struct gctx_holder *h)
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
		holder_end(m, f, &f->pub.holders[i], ts);
	if (!f->pub.closed) {
		f->pub.closed = true;
		f->pub.close_ns = ts;
		file_objs_end(m, f, ts);
	}
}

/* ---- findings ---- */

static struct gctx_finding *finding_new(struct gctx_model *m, enum gctx_finding_kind kind,
					enum gctx_severity sev, struct proc_priv *p)
{
	struct gctx_finding *fd = chunks_add(&m->findings);

	if (!fd)
		return NULL;
	fd->id = m->findings.n;
	fd->kind = kind;
	fd->severity = sev;
	fd->proc_idx = p->pub.idx;
	fd->pid = p->pub.pid;
	fd->tid = p->pub.pid;
	return fd;
}

static void finding_emit(struct gctx_model *m, const struct gctx_finding *fd)
{
	if (m->cb)
		m->cb(fd, m->cb_ctx);
}

/* Does process q exec after 'from' and no later than 'to'? */
static bool exec_in(const struct proc_priv *q, __u64 from, __u64 to)
{
	__u32 i;

	for (i = 0; i < q->pub.nexecs; i++)
		if (q->pub.execs[i].ts_ns > from && q->pub.execs[i].ts_ns <= to)
			return true;
	return false;
}

/*
 * Fill chain and exec_between for process p and file f. The chain follows how the description
 * travelled: from p's holder to the process it inherited from, and so on up to a holder that
 * did not come through fork; the opener is put in front when that walk does not reach it (the
 * file was passed, or held before the trace). An exec counts when a process below the top of
 * the chain exec'd while it held the file and before it forked the next link.
 */
static void fill_chain(const struct gctx_model *m, struct gctx_finding *fd, struct proc_priv *p,
		       struct file_priv *f)
{
	__u32 up[CHAIN_WALK_MAX]; /* p first, walking up */
	__u32 n = 0, i, keep, cur = p->pub.idx;
	struct gctx_holder *h = holder_find(m, cur, f);

	up[n++] = cur;
	while (h && h->how == GCTX_HOLD_INHERITED && h->from_proc_idx != cur &&
	       n < CHAIN_WALK_MAX - 1) {
		cur = h->from_proc_idx;
		up[n++] = cur;
		h = holder_find(m, cur, f);
	}
	if (f->pub.opener_idx >= 0 && up[n - 1] != (__u32)f->pub.opener_idx)
		up[n++] = f->pub.opener_idx;

	/*
	 * up[i] (below the top) held f from getting it (its holder's since: fork, receive, or
	 * attach) until it forked up[i - 1]; an exec of it in that window is on the file's path.
	 */
	fd->exec_between = false;
	for (i = 0; i + 1 < n && !fd->exec_between; i++) {
		struct gctx_holder *hi = holder_find(m, up[i], f);
		struct gctx_holder *below = i ? holder_find(m, up[i - 1], f) : NULL;
		__u64 from = hi ? hi->since_ns : P(m, up[i])->pub.start_ns;
		__u64 to = below ? below->since_ns : U64_MAX_VAL;

		fd->exec_between = exec_in(P(m, up[i]), from, to);
	}

	/* top-down, opener first; past GCTX_MAX_CHAIN, keep the top and the last links */
	keep = n > GCTX_MAX_CHAIN ? GCTX_MAX_CHAIN - 1 : n - 1;
	fd->nchain = 0;
	fd->chain[fd->nchain++] = P(m, up[n - 1])->pub.pid;
	for (i = keep; i > 0; i--)
		fd->chain[fd->nchain++] = P(m, up[i - 1])->pub.pid;
}

static void chain_str(const struct gctx_finding *fd, char *buf, size_t len)
{
	size_t off = 0;
	__u32 i;

	buf[0] = '\0';
	for (i = 0; i < fd->nchain && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%u", i ? "->" : "", fd->chain[i]);

		if (w < 0)
			break;
		off += w;
	}
}

static void opener_str(const struct gctx_model *m, const struct file_priv *f, char *buf, size_t len)
{
	if (f->pub.opener_idx >= 0)
		textf(buf, len, "opened by pid %u (%s)", f->pub.opener_pid,
		      f->opener_comm[0] ? f->opener_comm : pid_comm(m, f->pub.opener_idx));
	else
		textf(buf, len, "opened outside the trace");
}

/* "returned NV_OK (status 0x0)", "returned -1 EBADF", "returned 0", "succeeded" (mmap) */
static void verdict_str(const struct gctx_ioctl_desc *d, __s64 ret, bool is_mmap, char *buf,
			size_t len)
{
	const char *en;

	if (d->err) {
		en = gctx_errno_name(d->err);
		if (en)
			textf(buf, len, "returned -1 %s", en);
		else
			textf(buf, len, "returned -1 errno %d", d->err);
	} else if (d->has_status) {
		if (d->status_name[0])
			textf(buf, len, "returned %.*s (status 0x%x)", (int)sizeof(d->status_name),
			      d->status_name, d->status);
		else
			textf(buf, len, "returned status 0x%x", d->status);
	} else if (is_mmap) {
		textf(buf, len, "succeeded");
	} else {
		textf(buf, len, "returned %lld", (long long)ret);
	}
}

/* ---- objects ---- */

#define OBJ_FAM_RM 0xffffu /* RM objects share one handle namespace per client */

static bool obj_kind_is_rm(__u32 k)
{
	return k >= GCTX_OBJ_RM_CLIENT && k <= GCTX_OBJ_RM_OTHER;
}

static bool obj_kind_is_kfd(__u32 k)
{
	return k == GCTX_OBJ_KFD_QUEUE || k == GCTX_OBJ_KFD_MEMORY;
}

static bool file_is_rm(const struct file_priv *f)
{
	return f->pub.kind == GCTX_DEV_NVIDIACTL || f->pub.kind == GCTX_DEV_NVIDIA;
}

/*
 * Handle namespaces: RM handles are 32-bit and scoped by client; any other handle is scoped by
 * its file and its object kind (a DRM context id and a GEM handle may be equal).
 */
static void obj_key(const struct file_priv *f, __u32 fam, __u64 client, __u64 handle, __u64 *k1,
		    __u64 *k2)
{
	*k1 = ((__u64)fam << 32) | fidx(f);
	*k2 = fam == OBJ_FAM_RM ? (client << 32) | (handle & 0xffffffffULL) : handle;
}

static struct obj_priv *obj_live(const struct gctx_model *m, const struct file_priv *f, __u32 fam,
				 __u64 client, __u64 handle)
{
	__u64 k1, k2;
	__u32 oi;

	obj_key(f, fam, client, handle, &k1, &k2);
	if (!gctx_hmap__get(&m->obj_map, k1, k2, &oi) || O(m, oi)->pub.destroyed)
		return NULL;
	return O(m, oi);
}

static struct obj_priv *obj_add(struct gctx_model *m, struct file_priv *f, __u32 fam,
				const struct gctx_ioctl_desc *d, __u64 client,
				struct proc_priv *creator, __u32 tid, __u64 ts)
{
	enum gctx_obj_kind kind = d->obj_kind;
	struct obj_priv *o, *par = NULL, *old;
	__u64 k1, k2;
	__u32 oi;

	old = obj_live(m, f, fam, client, d->handle);
	if (old) { /* same handle alive on this file: the new object replaces it */
		old->pub.destroyed = true;
		old->pub.destroy_ns = ts;
	}
	if (obj_kind_is_kfd(kind)) {
		par = obj_live(m, f, GCTX_OBJ_KFD_PROCESS, 0, 0);
	} else if (fam == OBJ_FAM_RM && kind != GCTX_OBJ_RM_CLIENT) {
		if (d->parent != d->handle)
			par = obj_live(m, f, fam, client, d->parent);
		if (!par && client != d->handle)
			par = obj_live(m, f, fam, client, client);
	} else if (fam != OBJ_FAM_RM && d->parent && d->parent != d->handle) {
		par = obj_live(m, f, fam, 0, d->parent);
	}

	o = chunks_add(&m->objs);
	if (!o)
		return NULL;
	oi = m->objs.n - 1;
	o->pub.id = m->objs.n;
	o->pub.kind = kind;
	o->pub.cls = d->obj_class;
	o->pub.handle = d->handle;
	o->pub.parent = d->parent;
	o->pub.client = client;
	o->pub.size = d->size;
	o->pub.file_id = f->pub.id;
	o->pub.creator_idx = creator->pub.idx;
	o->pub.creator_tid = tid;
	o->pub.create_ns = ts;
	o->pub.parent_obj = par ? (int)(par->pub.id - 1) : -1;
	o->first_child = -1;
	o->next_sibling = -1;
	o->next_in_client = -1;
	if (par) {
		o->next_sibling = par->first_child;
		par->first_child = oi;
	}
	o->next_in_file = f->first_obj;
	f->first_obj = oi;

	obj_key(f, fam, client, d->handle, &k1, &k2);
	if (gctx_hmap__put(&m->obj_map, k1, k2, oi))
		return NULL;
	if (fam == OBJ_FAM_RM && kind != GCTX_OBJ_RM_CLIENT) {
		__u32 head;

		if (gctx_hmap__get(&m->client_map, fidx(f), client, &head))
			o->next_in_client = head;
		if (gctx_hmap__put(&m->client_map, fidx(f), client, oi))
			return NULL;
	}
	return o;
}

/* Destroy o and every live descendant. */
static int obj_destroy_tree(struct gctx_model *m, struct obj_priv *o, __u64 ts)
{
	__u32 sp = 0;
	int c;

	if (grow(&m->stack, &m->cap_stack, 1, sizeof(*m->stack)))
		return -ENOMEM;
	m->stack[sp++] = o->pub.id - 1;
	while (sp) {
		struct obj_priv *cur = O(m, m->stack[--sp]);

		if (cur->pub.destroyed && cur != o)
			continue;
		cur->pub.destroyed = true;
		cur->pub.destroy_ns = ts;
		for (c = cur->first_child; c >= 0; c = O(m, c)->next_sibling) {
			if (O(m, c)->pub.destroyed)
				continue;
			if (grow(&m->stack, &m->cap_stack, sp + 1, sizeof(*m->stack)))
				return -ENOMEM;
			m->stack[sp++] = c;
		}
	}
	return 0;
}

static int objs_apply(struct gctx_model *m, struct file_priv *f, struct proc_priv *p, __u32 tid,
		      __u64 ts, const struct gctx_ioctl_desc *d)
{
	bool rm = file_is_rm(f) || obj_kind_is_rm(d->obj_kind);
	__u32 fam = rm ? OBJ_FAM_RM : d->obj_kind;
	__u64 client = d->client, handle = d->handle;
	struct obj_priv *o;
	int err;

	if (d->op == GCTX_OP_CREATE) {
		if (rm && (d->obj_kind == GCTX_OBJ_RM_CLIENT || !client))
			client = handle;
		return obj_add(m, f, fam, d, client, p, tid, ts) ? 0 : -ENOMEM;
	}
	if (d->op != GCTX_OP_DESTROY)
		return 0;

	o = obj_live(m, f, fam, client, handle);
	if (o) {
		err = obj_destroy_tree(m, o, ts);
		if (err)
			return err;
	}
	if (rm && (d->obj_kind == GCTX_OBJ_RM_CLIENT || (client && handle == client))) {
		__u32 head;
		int i;

		/* freeing a client frees all its objects, even those whose parent we missed */
		if (gctx_hmap__get(&m->client_map, fidx(f), client, &head)) {
			for (i = head; i >= 0; i = O(m, i)->next_in_client) {
				if (!O(m, i)->pub.destroyed) {
					O(m, i)->pub.destroyed = true;
					O(m, i)->pub.destroy_ns = ts;
				}
			}
		}
	}
	return 0;
}

/* ---- fork-with-gpu-state and crash-after-inheritance ---- */

/* Raise the pending fork-with-gpu-state of child c (it never exec'd). */
static int fws_raise(struct gctx_model *m, struct proc_priv *c, bool at_finish)
{
	struct file_priv *f = F(m, c->fws_file_idx);
	struct proc_priv *par = P(m, c->fws_parent_idx);
	struct gctx_finding *fd;
	__u64 uses = 0;
	char opener[96], chain[GCTX_MAX_CHAIN * 12];
	__u32 i;

	c->fws_pending = false;
	fd = finding_new(m, GCTX_FIND_FORK_WITH_GPU_STATE, GCTX_SEV_WARNING, c);
	if (!fd)
		return -ENOMEM;
	for (i = 0; i < c->nhrefs; i++) {
		struct gctx_holder *h =
		    &F(m, c->hrefs[i].file_idx)->pub.holders[c->hrefs[i].holder_idx];

		if (h->how == GCTX_HOLD_INHERITED && h->since_ns == c->fws_ts)
			uses += h->nioctls + h->nmmaps;
	}
	fd->opener_pid = f->pub.opener_pid;
	fd->file_id = f->pub.id;
	fd->kind_dev = f->pub.kind;
	fd->time_ns = c->fws_ts;
	fd->event_type = GCTX_EV_FORK;
	fd->later_used = uses > 0;
	fd->uses = uses;
	textf(fd->call, sizeof(fd->call), "fork");
	fill_chain(m, fd, c, f);
	opener_str(m, f, opener, sizeof(opener));
	chain_str(fd, chain, sizeof(chain));
	textf(fd->detail, sizeof(fd->detail),
	      "pid %u (%s) was forked by pid %u (%s) while it held %u GPU file%s (first: %s "
	      "file #%u, %s; chain %s) and %s without exec; the child %s %s",
	      c->pub.pid, c->pub.comm, par->pub.pid, par->pub.comm, c->fws_nfiles,
	      c->fws_nfiles == 1 ? "" : "s", gctx_dev_kind_name(f->pub.kind), f->pub.id, opener,
	      chain, at_finish ? "was still running at the end of the trace" : "exited",
	      uses ? "used" : "never used", c->fws_nfiles == 1 ? "it" : "them");
	finding_emit(m, fd);
	return 0;
}

static bool fatal_signal(int sig)
{
	return sig == 11 || sig == 7 || sig == 6 || sig == 4 || sig == 8;
}

static int crash_check(struct gctx_model *m, struct proc_priv *p, __u32 tid, __u64 ts)
{
	struct gctx_holder *best = NULL;
	struct file_priv *bf = NULL;
	struct gctx_finding *fd;
	const char *sig;
	char opener[96], signame[16], used[64], chain[GCTX_MAX_CHAIN * 12];
	__u32 i, fi;

	if (!fatal_signal(p->pub.signal))
		return 0;
	for (i = 0; i < p->nhrefs; i++) {
		struct file_priv *f = F(m, p->hrefs[i].file_idx);
		struct gctx_holder *h = &f->pub.holders[p->hrefs[i].holder_idx];

		if (h->how != GCTX_HOLD_INHERITED)
			continue;
		if (!best || (!(best->nioctls + best->nmmaps) && h->nioctls + h->nmmaps)) {
			best = h;
			bf = f;
		}
	}
	if (!best)
		return 0;

	fd = finding_new(m, GCTX_FIND_CRASH_AFTER_INHERITANCE, GCTX_SEV_ERROR, p);
	if (!fd)
		return -ENOMEM;
	fd->tid = tid;
	fd->opener_pid = bf->pub.opener_pid;
	fd->file_id = bf->pub.id;
	fd->kind_dev = bf->pub.kind;
	fd->time_ns = ts;
	fd->event_type = GCTX_EV_EXIT;
	fd->uses = best->nioctls + best->nmmaps;
	fd->later_used = fd->uses > 0;
	/* a used inherited holder always has its finding, and best is a used one if any is */
	if (gctx_hmap__get(&m->finding_map, p->pub.idx, fidx(bf), &fi))
		fd->related_finding = FIND(m, fi)->id;
	sig = gctx_signal_name(p->pub.signal);
	if (!sig) {
		textf(signame, sizeof(signame), "signal %d", p->pub.signal);
		sig = signame;
	}
	textf(fd->call, sizeof(fd->call), "%s", sig);
	fill_chain(m, fd, p, bf);
	chain_str(fd, chain, sizeof(chain));
	opener_str(m, bf, opener, sizeof(opener));
	if (fd->uses && fd->related_finding)
		textf(used, sizeof(used), "had used it (%llu use%s, finding #%u)",
		      (unsigned long long)fd->uses, fd->uses == 1 ? "" : "s", fd->related_finding);
	else if (fd->uses)
		textf(used, sizeof(used), "had used it (%llu use%s)", (unsigned long long)fd->uses,
		      fd->uses == 1 ? "" : "s");
	else
		textf(used, sizeof(used), "never used it");
	textf(fd->detail, sizeof(fd->detail),
	      "pid %u (%s) was killed by %s%s after inheriting %s file #%u %s through fork %s; "
	      "it %s",
	      p->pub.pid, p->pub.comm, sig, p->pub.core_dumped ? " (core dumped)" : "",
	      gctx_dev_kind_name(bf->pub.kind), bf->pub.id, opener, chain, used);
	finding_emit(m, fd);
	return 0;
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

		holder_end(m, f, &f->pub.holders[p->hrefs[i].holder_idx], ts);
	}
	p->nkept = 0;
	p->kept_seen = false;
}

/* ---- record handlers ---- */

static int ev_fork(struct gctx_model *m, const struct gctx_ev_fork *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	struct proc_priv *par, *c, *old;
	__u32 i, n, first = 0;
	int err;

	par = proc_for_event(m, hdr, true);
	if (!par)
		return -ENOMEM;
	if ((ev->flags & GCTX_FORK_THREAD) || ev->child_tgid == hdr->tgid)
		return thread_add(m, par, ev->child_tid, hdr->comm, hdr->ts_ns) ? 0 : -ENOMEM;

	old = proc_lookup(m, ev->child_tgid);
	if (old && !old->pub.exited) { /* its exit was missed */
		proc_end(m, old, hdr->ts_ns);
		old->pub.exit_code = -1;
		old->pub.signal = 0;
		if (old->fws_pending) {
			err = fws_raise(m, old, false);
			if (err)
				return err;
		}
	}
	c = proc_new(m, ev->child_tgid, hdr->tgid, par->pub.idx, hdr->comm, hdr->ts_ns);
	if (!c || !thread_add(m, c, ev->child_tid, hdr->comm, hdr->ts_ns))
		return -ENOMEM;

	/* the child shares every description the parent holds right now */
	n = 0;
	for (i = 0; i < par->nhrefs; i++) {
		struct file_priv *f = F(m, par->hrefs[i].file_idx);
		struct gctx_holder *ph = &f->pub.holders[par->hrefs[i].holder_idx];
		__s32 fds[8];
		__u32 nfds;

		if (!ph->held)
			continue;
		nfds = ph->nfds;
		memcpy(fds, ph->fds, sizeof(fds));
		if (!holder_add(m, c, f, GCTX_HOLD_INHERITED, par->pub.idx, hdr->ts_ns, fds, nfds))
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
		c->api_fork_ns[i] = par->api_src[i] == par->pub.idx + 1 ? hdr->ts_ns :
									   par->api_fork_ns[i];
	}
	return 0;
}

static int across_exec_raise(struct gctx_model *m, struct proc_priv *p, struct file_priv *f,
			     __s32 fd_no, const struct gctx_ev_exec *ev)
{
	struct gctx_finding *fd = finding_new(m, GCTX_FIND_GPU_FD_ACROSS_EXEC, GCTX_SEV_WARNING, p);
	char opener[96], fname[GCTX_PATH_LEN];

	if (!fd)
		return -ENOMEM;
	fd->tid = ev->hdr.tid;
	fd->opener_pid = f->pub.opener_pid;
	fd->file_id = f->pub.id;
	fd->kind_dev = f->pub.kind;
	fd->time_ns = ev->hdr.ts_ns;
	fd->event_type = GCTX_EV_EXEC;
	textf(fd->call, sizeof(fd->call), "exec");
	fill_chain(m, fd, p, f);
	opener_str(m, f, opener, sizeof(opener));
	copy_str(fname, sizeof(fname), ev->filename, sizeof(ev->filename));
	textf(fd->detail, sizeof(fd->detail),
	      "pid %u (%s) kept %s file #%u (fd %d, %s) across exec of %s: the fd lacked "
	      "O_CLOEXEC",
	      p->pub.pid, p->pub.comm, gctx_dev_kind_name(f->pub.kind), f->pub.id, fd_no, opener,
	      fname[0] ? fname : "?");
	finding_emit(m, fd);
	return 0;
}

static int ev_exec(struct gctx_model *m, const struct gctx_ev_exec *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	__u64 ts = hdr->ts_ns, serial;
	struct gctx_thread *t;
	struct gctx_exec *x;
	struct proc_priv *p;
	__u64 start = 0;
	__u32 i;
	int err;

	p = proc_for_event(m, hdr, false);
	if (!p || grow(&p->pub.execs, &p->cap_execs, p->pub.nexecs + 1, sizeof(*p->pub.execs)))
		return -ENOMEM;
	x = &p->pub.execs[p->pub.nexecs++];
	memset(x, 0, sizeof(*x));
	p->api_src[0] = p->api_src[1] = 0; /* a new program: no driver state */
	x->ts_ns = ts;
	x->old_tid = ev->old_tid;
	copy_str(x->filename, sizeof(x->filename), ev->filename, sizeof(ev->filename));
	x->args_len = ev->args_len < GCTX_ARGS_LEN ? ev->args_len : GCTX_ARGS_LEN;
	memcpy(x->args, ev->args, x->args_len);

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
		t = thread_live(m, p, hdr->tid, hdr->comm);
	}
	if (!t)
		return -ENOMEM;
	copy_str(t->comm, sizeof(t->comm), hdr->comm, GCTX_COMM_LEN);

	/* the kernel listed the fds that survived: the others were closed by O_CLOEXEC */
	serial = ++m->exec_serial;
	for (i = 0; p->kept_seen && i < p->nkept; i++) {
		const struct kept_fd *k = &p->kept[i];
		struct file_priv *f = file_resolve(m, k->file, p);
		struct gctx_holder *h;

		if (!f)
			f = file_new(m, k->file, k->kind, "", true);
		if (!f)
			return -ENOMEM;
		h = holder_find(m, p->pub.idx, f);
		if (!h)
			h = holder_add(m, p, f, GCTX_HOLD_RECEIVED, p->pub.idx, ts, NULL, 0);
		if (!h)
			return -ENOMEM;
		holder_revive(f, h);
		if (f->kept_mark != serial) {
			f->kept_mark = serial;
			f->kept_fd = k->fd;
			h->nfds = 0;
		}
		holder_add_fd(h, k->fd);
	}
	for (i = 0; i < p->nhrefs; i++) {
		struct file_priv *f = F(m, p->hrefs[i].file_idx);
		struct gctx_holder *h = &f->pub.holders[p->hrefs[i].holder_idx];
		bool kept;

		if (!h->held)
			continue;
		if (p->kept_seen)
			kept = f->kept_mark == serial;
		else
			kept = !(f->pub.open_flags & O_CLOEXEC);
		if (!kept) {
			holder_end(m, f, h, ts);
			continue;
		}
		h->kept_across_exec = true;
		h->execs_since++;
		err = across_exec_raise(m, p, f,
					p->kept_seen ? f->kept_fd : (h->nfds ? h->fds[0] : -1), ev);
		if (err)
			return err;
	}
	p->nkept = 0;
	p->kept_seen = false;
	p->fws_pending = false; /* it exec'd: whatever it inherited is no longer CUDA state */
	/* the new image's name, after the warnings that name the process as it was */
	copy_str(p->pub.comm, sizeof(p->pub.comm), hdr->comm, GCTX_COMM_LEN);
	copy_str(p->pub.exe, sizeof(p->pub.exe), ev->filename, sizeof(ev->filename));
	return 0;
}

static int ev_exit(struct gctx_model *m, const struct gctx_ev_exit *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	struct gctx_thread *t;
	struct proc_priv *p;
	int err;

	p = proc_for_event(m, hdr, true);
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
	err = crash_check(m, p, hdr->tid, hdr->ts_ns);
	if (!err && p->fws_pending)
		err = fws_raise(m, p, false);
	return err;
}

static int ev_open(struct gctx_model *m, const struct gctx_ev_open *ev)
{
	const struct gctx_ev_hdr *hdr = &ev->hdr;
	struct file_priv *old, *f;
	struct proc_priv *p;
	struct obj_priv *o;

	p = proc_for_event(m, hdr, true);
	if (!p)
		return -ENOMEM;
	old = file_lookup(m, ev->file);
	if (old && !old->pub.closed) /* a close was missed: the address is a new description */
		file_close_all(m, old, hdr->ts_ns);
	f = file_new(m, ev->file, ev->kind, ev->path, true);
	if (!f)
		return -ENOMEM;
	f->pub.opener_idx = p->pub.idx;
	f->pub.opener_pid = p->pub.pid;
	f->pub.opener_tid = hdr->tid;
	copy_str(f->opener_comm, sizeof(f->opener_comm), hdr->comm, GCTX_COMM_LEN);
	f->pub.open_ns = hdr->ts_ns;
	f->pub.open_flags = ev->flags;
	if (!holder_add(m, p, f, GCTX_HOLD_OPENED, p->pub.idx, hdr->ts_ns, &ev->fd, 1))
		return -ENOMEM;
	if (ev->kind == GCTX_DEV_KFD) { /* open(/dev/kfd) makes the kfd_process */
		struct gctx_ioctl_desc d = {.obj_kind = GCTX_OBJ_KFD_PROCESS};

		o = obj_add(m, f, GCTX_OBJ_KFD_PROCESS, &d, 0, p, hdr->tid, hdr->ts_ns);
		if (!o)
			return -ENOMEM;
	}
	return 0;
}

/* A use (ioctl or mmap) by hdr's process of the description at addr; d is its verdict. */
static int ev_use(struct gctx_model *m, const struct gctx_ev_hdr *hdr, __u64 addr, __s32 fd_no,
		  __u32 kind, const struct gctx_ioctl_desc *d, __s64 ret, bool is_mmap,
		  struct proc_priv **pp, struct file_priv **fp)
{
	struct gctx_finding *fd;
	struct proc_priv *p;
	struct file_priv *f;
	struct gctx_holder *h;
	enum gctx_finding_kind fk;
	bool unknown = false;
	char opener[96], chain[GCTX_MAX_CHAIN * 12], verdict[96], how[256];
	__u32 fi;

	p = proc_for_event(m, hdr, true);
	if (!p)
		return -ENOMEM;
	f = file_resolve(m, addr, p);
	if (!f) {
		f = file_new(m, addr, kind, "", true);
		if (!f)
			return -ENOMEM;
		unknown = true;
	}
	*pp = p;
	*fp = f;
	h = holder_find(m, p->pub.idx, f);
	if (!h)
		h = holder_add(m, p, f, GCTX_HOLD_RECEIVED, p->pub.idx, hdr->ts_ns, NULL, 0);
	if (!h)
		return -ENOMEM;
	holder_revive(f, h);
	holder_add_fd(h, fd_no);
	if (is_mmap) {
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
	if (h->how == GCTX_HOLD_OPENED || h->how == GCTX_HOLD_PRESENT)
		return 0;

	if (gctx_hmap__get(&m->finding_map, p->pub.idx, fidx(f), &fi)) {
		FIND(m, fi)->uses++;
		return 0;
	}
	if (h->how == GCTX_HOLD_INHERITED)
		fk = GCTX_FIND_INHERITED_GPU_USE;
	else
		fk = GCTX_FIND_FOREIGN_GPU_USE;
	fd = finding_new(m, fk, GCTX_SEV_ERROR, p);
	if (!fd || gctx_hmap__put(&m->finding_map, p->pub.idx, fidx(f), fd->id - 1))
		return -ENOMEM;
	fd->tid = hdr->tid;
	fd->opener_pid = f->pub.opener_pid;
	fd->file_id = f->pub.id;
	fd->kind_dev = f->pub.kind;
	fd->time_ns = hdr->ts_ns;
	fd->event_type = is_mmap ? GCTX_EV_MMAP : GCTX_EV_IOCTL;
	fd->uses = 1;
	fd->err = d->err;
	fd->status = d->status;
	fd->has_status = d->has_status;
	copy_str(fd->call, sizeof(fd->call), d->name, sizeof(d->name));
	fill_chain(m, fd, p, f);

	chain_str(fd, chain, sizeof(chain));
	verdict_str(d, ret, is_mmap, verdict, sizeof(verdict));
	opener_str(m, f, opener, sizeof(opener));
	if (fk == GCTX_FIND_INHERITED_GPU_USE)
		textf(how, sizeof(how), "inherited through fork %s %s", chain,
		      fd->exec_between ? "with an exec in between" : "without exec");
	else if (unknown)
		textf(how, sizeof(how), "and no open or fork in the trace gave it to pid %u",
		      p->pub.pid);
	else
		textf(how, sizeof(how),
		      "which it got neither by open nor by fork (passed over a socket or "
		      "pidfd_getfd?)");
	textf(fd->detail, sizeof(fd->detail), "pid %u (%s) used %s file #%u (fd %d) %s, %s: %s %s",
	      p->pub.pid, p->pub.comm, gctx_dev_kind_name(f->pub.kind), f->pub.id, fd_no, opener,
	      how, fd->call, verdict);
	finding_emit(m, fd);
	return 0;
}

static int ev_ioctl(struct gctx_model *m, const struct gctx_ev_ioctl *ev)
{
	struct gctx_ioctl_desc d;
	struct proc_priv *p;
	struct file_priv *f;
	int err;

	gctx_decode_ioctl(ev, &d);
	err = ev_use(m, &ev->hdr, ev->file, ev->fd, ev->kind, &d, ev->ret, false, &p, &f);
	if (err)
		return err;
	return objs_apply(m, f, p, ev->hdr.tid, ev->hdr.ts_ns, &d);
}

static int ev_mmap(struct gctx_model *m, const struct gctx_ev_mmap *ev)
{
	struct gctx_ioctl_desc d;
	struct proc_priv *p;
	struct file_priv *f;

	memset(&d, 0, sizeof(d));
	textf(d.name, sizeof(d.name), "mmap");
	if (ev->ret < 0)
		d.err = (int)-ev->ret;
	d.failed = d.err != 0;
	return ev_use(m, &ev->hdr, ev->file, ev->fd, ev->kind, &d, ev->ret, true, &p, &f);
}

static int ev_close(struct gctx_model *m, const struct gctx_ev_fd *ev)
{
	struct file_priv *f = file_lookup(m, ev->file);
	struct proc_priv *p = proc_lookup(m, ev->hdr.tgid);
	struct gctx_holder *h;

	if (!f || !p || !(h = holder_find(m, p->pub.idx, f))) {
		m->ignored_closes++;
		return 0;
	}
	holder_del_fd(h, ev->fd);
	if (!h->nfds)
		holder_end(m, f, h, ev->hdr.ts_ns);
	return 0;
}

static int ev_fd_kept(struct gctx_model *m, const struct gctx_ev_fd *ev)
{
	struct proc_priv *p = proc_for_event(m, &ev->hdr, true);
	struct kept_fd *k;

	if (!p || grow(&p->kept, &p->cap_kept, p->nkept + 1, sizeof(*p->kept)))
		return -ENOMEM;
	k = &p->kept[p->nkept++];
	k->file = ev->file;
	k->fd = ev->fd;
	k->kind = ev->kind;
	p->kept_seen = true;
	return 0;
}

static int ev_proc_present(struct gctx_model *m, const struct gctx_rec_proc *r)
{
	struct proc_priv *p = proc_lookup(m, r->pid), *par = NULL;
	bool lazy;

	if (r->ppid && r->ppid != r->pid)
		par = proc_lookup(m, r->ppid);
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
				copy_str(p->pub.comm, sizeof(p->pub.comm), r->comm, GCTX_COMM_LEN);
			if (par && par != p) {
				if (grow(&par->pub.children, &par->cap_children,
					 par->pub.nchildren + 1, sizeof(*par->pub.children)))
					return -ENOMEM;
				par->pub.children[par->pub.nchildren++] = p->pub.idx;
				p->pub.parent_idx = par->pub.idx;
			}
		}
	}
	if (lazy)
		p->pub.present_at_attach = true;
	if (!p->pub.exe[0])
		copy_str(p->pub.exe, sizeof(p->pub.exe), r->exe, sizeof(r->exe));
	if (!p->pub.args_len) {
		p->pub.args_len = r->args_len < GCTX_ARGS_LEN ? r->args_len : GCTX_ARGS_LEN;
		memcpy(p->pub.args, r->args, p->pub.args_len);
	}
	return 0;
}

/* A thread that existed at attach: its process's present record came first. */
static int ev_thread_present(struct gctx_model *m, const struct gctx_rec_thread *r)
{
	struct proc_priv *p = proc_lookup(m, r->pid);

	if (!p || p->pub.exited)
		return 0;
	if (thread_find(m, p, r->tid))
		return 0;
	return thread_add(m, p, r->tid, r->comm, 0) ? 0 : -ENOMEM;
}

static int ev_file_present(struct gctx_model *m, const struct gctx_rec_file *r)
{
	struct gctx_ev_hdr hdr = {.tid = r->pid, .tgid = r->pid};
	struct file_priv *f = NULL;
	struct gctx_holder *h, *ph;
	struct proc_priv *p;

	p = proc_lookup(m, r->pid);
	if (!p || p->pub.exited) {
		p = proc_for_event(m, &hdr, false);
		if (!p)
			return -ENOMEM;
		p->pub.present_at_attach = true;
	}
	if (r->file) {
		f = file_lookup(m, r->file);
		if (f && f->pub.closed)
			f = NULL;
	}
	if (!f) {
		f = file_new(m, r->file, r->kind, r->path, r->file != 0);
		if (!f)
			return -ENOMEM;
		f->pub.present_at_attach = true;
		f->pub.open_flags = r->flags | (r->cloexec ? O_CLOEXEC : 0);
	}

	h = holder_find(m, p->pub.idx, f);
	if (h) { /* another fd on the same description (dup) */
		holder_revive(f, h);
		holder_add_fd(h, r->fd);
		return 0;
	}
	ph = p->pub.parent_idx >= 0 ? holder_find(m, p->pub.parent_idx, f) : NULL;
	if (ph && ph->held)
		h = holder_add(m, p, f, GCTX_HOLD_INHERITED, p->pub.parent_idx, 0, &r->fd, 1);
	else
		h = holder_add(m, p, f, GCTX_HOLD_PRESENT, p->pub.idx, 0, &r->fd, 1);
	if (!h)
		return -ENOMEM;
	if (f->pub.opener_idx < 0 && h->how == GCTX_HOLD_PRESENT) {
		f->pub.opener_idx = p->pub.idx;
		f->pub.opener_pid = p->pub.pid;
		f->pub.opener_tid = p->pub.pid;
		copy_str(f->opener_comm, sizeof(f->opener_comm), p->pub.comm, GCTX_COMM_LEN);
	}
	return 0;
}

static int ev_device(struct gctx_model *m, const struct gctx_rec_device *r)
{
	if (grow(&m->devices, &m->cap_devices, m->ndevices + 1, sizeof(*m->devices)))
		return -ENOMEM;
	m->devices[m->ndevices++] = *r;
	return 0;
}

/* ---- public interface ---- */


/* ---- API contexts (CUDA driver API / HIP runtime uprobes) ---- */

#define API_JOIN_SLACK_NS (5 * 1000000000ULL) /* record-order slack of the kernel-object join */

static struct gctx_api_ctx *CTX(const struct gctx_model *m, __u32 id)
{
	return id && id <= m->ctxs.n ? chunks_at(&m->ctxs, id - 1) : NULL;
}

/*
 * A context the process can no longer use: destroyed, or made by the program an exec replaced
 * (an exec drops all driver state, so the new program's contexts are new ones).
 */
static bool ctx_gone(const struct proc_priv *p, const struct gctx_api_ctx *c)
{
	const struct gctx_proc *pp = &p->pub;

	return c->destroyed || (pp->nexecs && c->create_ns < pp->execs[pp->nexecs - 1].ts_ns);
}

static struct gctx_api_ctx *ctx_find(const struct gctx_model *m, const struct proc_priv *p,
				     __u32 vendor, __u64 handle, int primary_dev)
{
	/* newest first: a reused handle means the newest context */
	for (__u32 i = p->nctxs; i-- > 0;) {
		struct gctx_api_ctx *c = CTX(m, p->ctxs[i]);

		if (ctx_gone(p, c) || c->vendor != vendor)
			continue;
		if (primary_dev >= 0 ? (c->primary && c->device == primary_dev) :
				       (handle && c->handle == handle))
			return c;
	}
	return NULL;
}

static struct gctx_api_ctx *ctx_new(struct gctx_model *m, struct proc_priv *p,
				    const struct gctx_ev_api *ev, __u64 handle, bool primary)
{
	struct gctx_api_ctx *c;

	if (grow(&p->ctxs, &p->cap_ctxs, p->nctxs + 1, sizeof(*p->ctxs)))
		return NULL;
	c = chunks_add(&m->ctxs);
	if (!c)
		return NULL;
	c->id = m->ctxs.n;
	c->handle = handle;
	c->vendor = gctx_api_vendor(ev->fn);
	c->primary = primary;
	c->green = ev->fn == GCTX_CU_GREEN_CTX_CREATE;
	c->device = -1;
	if (gctx_api_device_arg(ev->fn) >= 0)
		c->device = (int)ev->args[gctx_api_device_arg(ev->fn)];
	c->creator_idx = p->pub.idx;
	c->creator_tid = ev->hdr.tid;
	c->create_fn = ev->fn;
	c->create_ns = ev->hdr.ts_ns;
	p->ctxs[p->nctxs++] = c->id;

	/*
	 * The kernel-level objects this process created during the call. Objects are in record
	 * order, which is syscall-exit order, not entry order: an object of another process or
	 * thread may be listed after ours with an earlier entry time, so only an earlier object of
	 * the calling thread itself (whose ioctls all ended before the call began) ends the walk,
	 * or one older than any ioctl plausibly blocks.
	 */
	for (__u32 i = m->objs.n; i-- > 0;) {
		struct gctx_gpu_obj *o = &O(m, i)->pub;

		if (o->create_ns < ev->hdr.ts_ns) {
			if ((o->creator_idx == p->pub.idx && o->creator_tid == ev->hdr.tid) ||
			    o->create_ns + API_JOIN_SLACK_NS < ev->hdr.ts_ns)
				break;
			continue;
		}
		if (o->creator_idx != p->pub.idx || o->create_ns > ev->hdr.ts_ns + ev->dur_ns)
			continue;
		__u32 *k = realloc(c->kobjs, (c->nkobjs + 1) * sizeof(*k));

		if (!k)
			break;
		c->kobjs = k;
		c->kobjs[c->nkobjs++] = i;
	}
	return c;
}

static void ctx_made_current(struct gctx_api_ctx *c, __u32 tid, __u32 fn, __u64 ts)
{
	struct gctx_ctx_current *n = realloc(c->currents, (c->ncurrents + 1) * sizeof(*n));

	if (!n)
		return;
	c->currents = n;
	c->currents[c->ncurrents++] = (struct gctx_ctx_current){ tid, fn, ts };
}

static __u32 thread_ctx(const struct gctx_thread *t)
{
	return t && t->ctx_depth ? t->ctx_stack[t->ctx_depth - 1] : 0;
}

static void thread_set_ctx(struct gctx_thread *t, __u32 id, bool push)
{
	if (!t)
		return;
	if (push || !t->ctx_depth) {
		if (t->ctx_depth == GCTX_CTX_STACK) {
			memmove(t->ctx_stack, t->ctx_stack + 1,
				(GCTX_CTX_STACK - 1) * sizeof(t->ctx_stack[0]));
			t->ctx_depth--;
		}
		t->ctx_stack[t->ctx_depth++] = id;
	} else {
		t->ctx_stack[t->ctx_depth - 1] = id;
	}
}

/* The context an allocation or launch of this thread goes to. */
static struct gctx_api_ctx *ctx_current(struct gctx_model *m, struct proc_priv *p,
					struct gctx_thread *t, const struct gctx_ev_api *ev)
{
	struct gctx_api_ctx *c = CTX(m, thread_ctx(t));

	if (c && !ctx_gone(p, c) && c->vendor == gctx_api_vendor(ev->fn))
		return c;
	if (gctx_api_vendor(ev->fn) == GCTX_VENDOR_HIP) {
		/* HIP works on the current device's primary context, made on first use */
		c = ctx_find(m, p, GCTX_VENDOR_HIP, 0, p->hip_device);
		if (!c) {
			c = ctx_new(m, p, ev, 0, true);
			if (c)
				c->device = p->hip_device;
		}
		return c;
	}
	return NULL;
}

static const char *api_ret_name(const struct gctx_ev_api *ev, char *buf, size_t len)
{
	const char *n = gctx_api_result_name(ev->fn, ev->ret);

	if (n)
		return n;
	textf(buf, len, "%lld", (long long)ev->ret);
	return buf;
}

static void finding_set_api(struct gctx_finding *fd, const struct gctx_ev_api *ev)
{
	char num[24];

	copy_str(fd->call, sizeof(fd->call), gctx_api_fn_name(ev->fn), sizeof(fd->call));
	fd->tid = ev->hdr.tid;
	fd->time_ns = ev->hdr.ts_ns;
	fd->event_type = GCTX_EV_API;
	if (ev->flags & GCTX_API_RETURNED) {
		fd->has_api_ret = true;
		fd->api_ret = ev->ret;
		copy_str(fd->api_ret_name, sizeof(fd->api_ret_name),
			 api_ret_name(ev, num, sizeof(num)), sizeof(fd->api_ret_name));
	}
}

/* A forked child (no exec) of a process that had initialised CUDA/HIP calls the API. */
static int icc_raise(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev,
		     __u32 v)
{
	struct proc_priv *src = P(m, p->api_src[v] - 1);
	struct gctx_api_ctx *pc = NULL;
	__u32 up[GCTX_MAX_CHAIN], n = 0, cur = p->pub.idx;
	struct gctx_finding *fd;
	char chain[160], ctx[96], ret[80];

	/* the parent's context: its newest live one, else its newest */
	for (__u32 i = src->nctxs; i-- > 0 && !pc;) {
		struct gctx_api_ctx *c = CTX(m, src->ctxs[i]);

		if (c->vendor == v && !ctx_gone(src, c))
			pc = c;
	}
	for (__u32 i = src->nctxs; i-- > 0 && !pc;)
		if (CTX(m, src->ctxs[i])->vendor == v)
			pc = CTX(m, src->ctxs[i]);

	fd = finding_new(m, GCTX_FIND_INHERITED_CONTEXT_CALL, GCTX_SEV_ERROR, p);
	if (!fd)
		return -ENOMEM;
	finding_set_api(fd, ev);
	fd->opener_pid = src->pub.pid;
	fd->uses = 1;
	if (pc) {
		fd->ctx_id = pc->id;
		fd->ctx_handle = pc->handle;
	}
	/* the offender and the links above it, the source in front: past GCTX_MAX_CHAIN the
	 * links nearest the source are the ones left out */
	while (n < GCTX_MAX_CHAIN - 1 && cur != src->pub.idx) {
		up[n++] = cur;
		if (P(m, cur)->pub.parent_idx < 0)
			break;
		cur = P(m, cur)->pub.parent_idx;
	}
	fd->chain[fd->nchain++] = src->pub.pid;
	while (n-- > 0 && fd->nchain < GCTX_MAX_CHAIN)
		fd->chain[fd->nchain++] = P(m, up[n])->pub.pid;
	chain_str(fd, chain, sizeof(chain));
	if (pc)
		textf(ctx, sizeof(ctx), "; its context #%u (0x%llx%s, device %d)", pc->id,
		      (unsigned long long)pc->handle, pc->primary ? ", primary" : "", pc->device);
	else
		ctx[0] = 0;
	if (fd->has_api_ret)
		textf(ret, sizeof(ret), "returned %s (%lld)", fd->api_ret_name,
		      (long long)fd->api_ret);
	else
		textf(ret, sizeof(ret), "was called");
	textf(fd->detail, sizeof(fd->detail),
	      "pid %u (%s) called %s after a fork without exec from pid %u (%s), which had "
	      "initialised %s%s; %s; fork chain %s",
	      p->pub.pid, p->pub.comm, fd->call, src->pub.pid, src->pub.comm,
	      v == GCTX_VENDOR_HIP ? "HIP" : "CUDA", ctx, ret, chain);
	p->api_icc_id[v] = fd->id;
	finding_emit(m, fd);
	return 0;
}

/* api-error: failed calls, one finding per (process, call, code) counting repeats. */
static int apierr_count(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev)
{
	__u64 key = ((__u64)ev->fn << 32) | (__u32)ev->ret;
	struct gctx_finding *fd;
	__u32 idx;

	if (gctx_hmap__get(&m->apierr_map, p->pub.idx, key, &idx)) {
		FIND(m, idx)->uses++;
		return 0;
	}
	fd = finding_new(m, GCTX_FIND_API_ERROR, GCTX_SEV_WARNING, p);
	if (!fd || gctx_hmap__put(&m->apierr_map, p->pub.idx, key, fd->id - 1))
		return -ENOMEM;
	finding_set_api(fd, ev);
	fd->uses = 1;
	textf(fd->detail, sizeof(fd->detail), "pid %u (%s): %s returned %s (%lld)", p->pub.pid,
	      p->pub.comm, fd->call, fd->api_ret_name, (long long)ev->ret);
	finding_emit(m, fd);
	return 0;
}

static int mem_alloc(struct gctx_model *m, struct proc_priv *p, struct gctx_api_ctx *c,
		     const struct gctx_ev_api *ev)
{
	struct gctx_api_mem *mm = chunks_add(&m->mems);
	int size_arg = gctx_api_size_arg(ev->fn);

	if (!mm || gctx_hmap__put(&m->mem_map, p->pub.idx, ev->out, m->mems.n - 1))
		return -ENOMEM;
	mm->proc_idx = p->pub.idx;
	mm->ctx_id = c ? c->id : 0;
	mm->fn = ev->fn;
	mm->ptr = ev->out;
	mm->size = size_arg >= 0 ? ev->args[size_arg] : 0;
	mm->alloc_ns = ev->hdr.ts_ns;
	if (c) {
		c->mem_live += mm->size;
		c->mem_total += mm->size;
		c->nallocs++;
	}
	return 0;
}

static void mem_free(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev)
{
	struct gctx_api_mem *mm;
	__u32 idx;

	if (!gctx_hmap__get(&m->mem_map, p->pub.idx, ev->args[0], &idx))
		return;
	mm = chunks_at(&m->mems, idx);
	if (mm->freed)
		return;
	mm->freed = true;
	mm->free_ns = ev->hdr.ts_ns;
	if (CTX(m, mm->ctx_id) && CTX(m, mm->ctx_id)->mem_live >= mm->size)
		CTX(m, mm->ctx_id)->mem_live -= mm->size;
}

static void ctx_destroy(struct gctx_api_ctx *c, __u64 ts)
{
	if (!c || c->destroyed)
		return;
	c->destroyed = true;
	c->destroy_ns = ts;
}

static int ev_api(struct gctx_model *m, const struct gctx_ev_api *ev)
{
	bool returned = ev->flags & GCTX_API_RETURNED;
	bool ok = returned && ev->ret == 0;
	__u64 out = (ev->flags & GCTX_API_OUT_OK) ? ev->out : 0;
	__u32 v = gctx_api_vendor(ev->fn);
	struct gctx_api_ctx *c;
	struct gctx_thread *t;
	struct proc_priv *p;
	int err;

	if (ev->fn == GCTX_API_NONE || ev->fn >= GCTX_API_MAX)
		return 0;
	p = proc_for_event(m, &ev->hdr, false);
	if (!p)
		return -ENOMEM;
	t = thread_live(m, p, ev->hdr.tid, ev->hdr.comm);
	p->api_calls++;
	if (p->api_src[v] && p->api_src[v] != p->pub.idx + 1) {
		if (p->api_icc_id[v]) {
			FIND(m, p->api_icc_id[v] - 1)->uses++; /* later calls are counted */
		} else {
			err = icc_raise(m, p, ev, v);
			if (err)
				return err;
		}
	}
	if (returned && ev->ret != 0) {
		err = apierr_count(m, p, ev);
		if (err)
			return err;
	}

	switch (ev->fn) {
	case GCTX_CU_INIT:
	case GCTX_HIP_INIT:
		if (ok)
			p->api_src[v] = p->pub.idx + 1;
		break;
	case GCTX_HIP_SET_DEVICE:
		if (ok)
			p->hip_device = (int)ev->args[0];
		break;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN:
	case GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN:
		if (!ok)
			break;
		c = ctx_find(m, p, v, 0, (int)ev->args[1]);
		if (!c)
			c = ctx_new(m, p, ev, out, true);
		if (!c)
			return -ENOMEM;
		if (!c->handle)
			c->handle = out;
		c->refs++;
		break;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE:
	case GCTX_HIP_DEVICE_PRIMARY_CTX_RELEASE:
		c = ok ? ctx_find(m, p, v, 0, (int)ev->args[0]) : NULL;
		if (c && c->refs && !--c->refs)
			ctx_destroy(c, ev->hdr.ts_ns);
		break;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RESET:
		if (ok)
			ctx_destroy(ctx_find(m, p, v, 0, (int)ev->args[0]), ev->hdr.ts_ns);
		break;
	case GCTX_HIP_DEVICE_RESET:
		if (ok)
			ctx_destroy(ctx_find(m, p, v, 0, p->hip_device), ev->hdr.ts_ns);
		break;
	case GCTX_CU_CTX_CREATE:
	case GCTX_CU_CTX_CREATE_V3:
	case GCTX_CU_CTX_CREATE_V4:
	case GCTX_HIP_CTX_CREATE:
	case GCTX_CU_GREEN_CTX_CREATE:
		if (!ok || !out)
			break;
		c = ctx_new(m, p, ev, out, false);
		if (!c)
			return -ENOMEM;
		if (ev->fn != GCTX_CU_GREEN_CTX_CREATE) { /* a created context is pushed */
			thread_set_ctx(t, c->id, true);
			ctx_made_current(c, ev->hdr.tid, ev->fn, ev->hdr.ts_ns);
		}
		break;
	case GCTX_CU_CTX_DESTROY:
	case GCTX_HIP_CTX_DESTROY:
		if (ok)
			ctx_destroy(ctx_find(m, p, v, ev->args[0], -1), ev->hdr.ts_ns);
		break;
	case GCTX_CU_CTX_SET_CURRENT:
	case GCTX_HIP_CTX_SET_CURRENT:
	case GCTX_CU_CTX_PUSH_CURRENT:
	case GCTX_HIP_CTX_PUSH_CURRENT:
		if (!ok)
			break;
		c = ctx_find(m, p, v, ev->args[0], -1);
		thread_set_ctx(t, c ? c->id : 0, ev->fn == GCTX_CU_CTX_PUSH_CURRENT ||
						     ev->fn == GCTX_HIP_CTX_PUSH_CURRENT);
		if (c)
			ctx_made_current(c, ev->hdr.tid, ev->fn, ev->hdr.ts_ns);
		break;
	case GCTX_CU_CTX_POP_CURRENT:
	case GCTX_HIP_CTX_POP_CURRENT:
		if (ok && t && t->ctx_depth)
			t->ctx_depth--;
		break;
	case GCTX_CU_MEM_ALLOC:
	case GCTX_CU_MEM_ALLOC_MANAGED:
	case GCTX_CU_MEM_ALLOC_ASYNC:
	case GCTX_CU_MEM_CREATE:
	case GCTX_HIP_MALLOC:
	case GCTX_HIP_MALLOC_MANAGED:
		if (ok && out)
			return mem_alloc(m, p, ctx_current(m, p, t, ev), ev);
		break;
	case GCTX_CU_MEM_FREE:
	case GCTX_HIP_FREE:
		if (ok)
			mem_free(m, p, ev);
		break;
	case GCTX_CU_LAUNCH_KERNEL:
	case GCTX_CU_LAUNCH_KERNEL_EX:
	case GCTX_CU_GRAPH_LAUNCH:
	case GCTX_HIP_LAUNCH_KERNEL:
	case GCTX_HIP_MODULE_LAUNCH_KERNEL:
		c = ctx_current(m, p, t, ev);
		if (c)
			c->launches++;
		break;
	default:
		break;
	}
	return 0;
}

static int ev_probe(struct gctx_model *m, const struct gctx_rec_probe *r)
{
	if (grow(&m->probes, &m->cap_probes, m->nprobes + 1, sizeof(*m->probes)))
		return -ENOMEM;
	m->probes[m->nprobes++] = *r;
	return 0;
}

struct gctx_model *gctx_model__new(void)
{
	struct gctx_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->procs.elem = sizeof(struct proc_priv);
	m->files.elem = sizeof(struct file_priv);
	m->objs.elem = sizeof(struct obj_priv);
	m->findings.elem = sizeof(struct gctx_finding);
	m->ctxs.elem = sizeof(struct gctx_api_ctx);
	m->mems.elem = sizeof(struct gctx_api_mem);
	return m;
}

void gctx_model__free(struct gctx_model *m)
{
	__u32 i;

	if (!m)
		return;
	for (i = 0; i < m->procs.n; i++) {
		struct proc_priv *p = P(m, i);

		free(p->pub.execs);
		free(p->pub.threads);
		free(p->pub.children);
		free(p->hrefs);
		free(p->kept);
		free(p->ctxs);
	}
	for (i = 0; i < m->ctxs.n; i++) {
		struct gctx_api_ctx *c = chunks_at(&m->ctxs, i);

		free(c->kobjs);
		free(c->currents);
	}
	chunks_free(&m->ctxs);
	chunks_free(&m->mems);
	gctx_hmap__free(&m->mem_map);
	gctx_hmap__free(&m->apierr_map);
	free(m->probes);
	for (i = 0; i < m->files.n; i++)
		free(F(m, i)->pub.holders);
	chunks_free(&m->procs);
	chunks_free(&m->files);
	chunks_free(&m->objs);
	chunks_free(&m->findings);
	gctx_hmap__free(&m->pid_map);
	gctx_hmap__free(&m->file_map);
	gctx_hmap__free(&m->thread_map);
	gctx_hmap__free(&m->holder_map);
	gctx_hmap__free(&m->finding_map);
	gctx_hmap__free(&m->obj_map);
	gctx_hmap__free(&m->client_map);
	free(m->devices);
	free(m->stack);
	free(m);
}

void gctx_model__set_finding_cb(struct gctx_model *m, gctx_finding_cb cb, void *ctx)
{
	if (!m)
		return;
	m->cb = cb;
	m->cb_ctx = ctx;
}

int gctx_model__feed(struct gctx_model *m, __u32 type, const void *data, __u32 len)
{
	/* records may come unaligned from a trace file: work on an aligned copy */
	union gctx_record r;
	__u32 need = gctx_record_min_len(type);

	if (!m || (!data && len))
		return -EINVAL;
	if (!need) {
		m->unknown_records++;
		m->total++;
		return 0;
	}
	if (len < need)
		return -EINVAL;
	memcpy(&r, data, need);
	m->total++;
	if (type < GCTX_EV_KERNEL_MAX)
		m->events[type]++;

	switch (type) {
	case GCTX_EV_FORK:
		return ev_fork(m, &r.fork);
	case GCTX_EV_EXEC:
		return ev_exec(m, &r.exec);
	case GCTX_EV_EXIT:
		return ev_exit(m, &r.exit);
	case GCTX_EV_OPEN:
		return ev_open(m, &r.open);
	case GCTX_EV_IOCTL:
		return ev_ioctl(m, &r.ioctl);
	case GCTX_EV_MMAP:
		return ev_mmap(m, &r.mmap);
	case GCTX_EV_CLOSE:
		return ev_close(m, &r.fd);
	case GCTX_EV_FD_KEPT:
		return ev_fd_kept(m, &r.fd);
	case GCTX_REC_PROC_PRESENT:
		return ev_proc_present(m, &r.proc);
	case GCTX_REC_FILE_PRESENT:
		return ev_file_present(m, &r.file);
	case GCTX_REC_DEVICE:
		return ev_device(m, &r.dev);
	case GCTX_REC_DROPS:
		m->drops = r.drops;
		return 0;
	case GCTX_REC_END:
		m->end = r.end;
		m->has_end = true;
		return 0;
	case GCTX_EV_API:
		return ev_api(m, &r.api);
	case GCTX_REC_PROBE:
		return ev_probe(m, &r.probe);
	case GCTX_REC_THREAD_PRESENT:
		return ev_thread_present(m, &r.thread);
	}
	return 0;
}

void gctx_model__finish(struct gctx_model *m)
{
	__u32 i;

	if (!m)
		return;
	for (i = 0; i < m->procs.n; i++) {
		struct proc_priv *p = P(m, i);

		if (p->fws_pending && !p->pub.exited)
			fws_raise(m, p, true);
	}
}

__u32 gctx_model__nprocs(const struct gctx_model *m)
{
	return m ? m->procs.n : 0;
}

const struct gctx_proc *gctx_model__proc(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->procs.n ? &P(m, idx)->pub : NULL;
}

const struct gctx_proc *gctx_model__proc_by_pid(const struct gctx_model *m, __u32 pid)
{
	struct proc_priv *p = m ? proc_lookup(m, pid) : NULL;

	return p ? &p->pub : NULL;
}

__u32 gctx_model__nfiles(const struct gctx_model *m)
{
	return m ? m->files.n : 0;
}

const struct gctx_gpu_file *gctx_model__file(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->files.n ? &F(m, idx)->pub : NULL;
}

const struct gctx_gpu_file *gctx_model__file_by_addr(const struct gctx_model *m, __u64 file)
{
	struct file_priv *f = m ? file_lookup(m, file) : NULL;

	return f ? &f->pub : NULL;
}

__u32 gctx_model__nobjs(const struct gctx_model *m)
{
	return m ? m->objs.n : 0;
}

const struct gctx_gpu_obj *gctx_model__obj(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->objs.n ? &O(m, idx)->pub : NULL;
}

__u32 gctx_model__nfindings(const struct gctx_model *m)
{
	return m ? m->findings.n : 0;
}

const struct gctx_finding *gctx_model__finding(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->findings.n ? FIND(m, idx) : NULL;
}

const struct gctx_rec_drops *gctx_model__drops(const struct gctx_model *m)
{
	static const struct gctx_rec_drops none;

	return m ? &m->drops : &none;
}

__u64 gctx_model__events(const struct gctx_model *m, __u32 type)
{
	return m && type < GCTX_EV_KERNEL_MAX ? m->events[type] : 0;
}

__u64 gctx_model__total_events(const struct gctx_model *m)
{
	return m ? m->total : 0;
}

const struct gctx_rec_end *gctx_model__end(const struct gctx_model *m)
{
	return m && m->has_end ? &m->end : NULL;
}

__u32 gctx_model__ndevices(const struct gctx_model *m)
{
	return m ? m->ndevices : 0;
}

const struct gctx_rec_device *gctx_model__device(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->ndevices ? &m->devices[idx] : NULL;
}

__u32 gctx_model__nctxs(const struct gctx_model *m)
{
	return m ? m->ctxs.n : 0;
}

const struct gctx_api_ctx *gctx_model__ctx(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->ctxs.n ? chunks_at(&m->ctxs, idx) : NULL;
}

__u32 gctx_model__nmems(const struct gctx_model *m)
{
	return m ? m->mems.n : 0;
}

const struct gctx_api_mem *gctx_model__mem(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->mems.n ? chunks_at(&m->mems, idx) : NULL;
}

__u32 gctx_model__nprobes(const struct gctx_model *m)
{
	return m ? m->nprobes : 0;
}

const struct gctx_rec_probe *gctx_model__probe(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->nprobes ? &m->probes[idx] : NULL;
}

__u64 gctx_model__api_calls(const struct gctx_model *m, __u32 proc_idx)
{
	return m && proc_idx < m->procs.n ? P(m, proc_idx)->api_calls : 0;
}

const char *gctx_finding_kind_name(enum gctx_finding_kind k)
{
	switch (k) {
	case GCTX_FIND_INHERITED_GPU_USE:
		return "inherited-gpu-use";
	case GCTX_FIND_FOREIGN_GPU_USE:
		return "foreign-gpu-use";
	case GCTX_FIND_FORK_WITH_GPU_STATE:
		return "fork-with-gpu-state";
	case GCTX_FIND_GPU_FD_ACROSS_EXEC:
		return "gpu-fd-across-exec";
	case GCTX_FIND_CRASH_AFTER_INHERITANCE:
		return "crash-after-inheritance";
	case GCTX_FIND_INHERITED_CONTEXT_CALL:
		return "inherited-context-call";
	case GCTX_FIND_API_ERROR:
		return "api-error";
	default:
		return "?";
	}
}

const char *gctx_severity_name(enum gctx_severity s)
{
	switch (s) {
	case GCTX_SEV_INFO:
		return "info";
	case GCTX_SEV_WARNING:
		return "warning";
	case GCTX_SEV_ERROR:
		return "error";
	default:
		return "?";
	}
}

const char *gctx_hold_how_name(enum gctx_hold_how h)
{
	switch (h) {
	case GCTX_HOLD_OPENED:
		return "opened";
	case GCTX_HOLD_INHERITED:
		return "inherited";
	case GCTX_HOLD_RECEIVED:
		return "received";
	case GCTX_HOLD_PRESENT:
		return "present";
	default:
		return "?";
	}
}
