// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model: findings and the rules that raise them: inherited and foreign GPU use,
 * fork-with-gpu-state, crash-after-inheritance, gpu-fd-across-exec, inherited-context-call and
 * api-error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decode/api.h"
#include "lib/str.h"
#include "model/model_priv.h"

#define CHAIN_WALK_MAX 256 /* fork-chain steps followed before giving up (cycles, runaway) */
#define U64_MAX_VAL    (~0ULL)

/* ---- findings ---- */

static struct gctx_finding *finding_new(struct gctx_model *m, enum gctx_finding_kind kind,
					enum gctx_severity sev, struct proc_priv *p)
{
	struct gctx_finding *fd = gctx_chunks__add(&m->findings);

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
	struct gctx_holder *h = mdl_holder_find(m, cur, f);

	up[n++] = cur;
	while (h && h->how == GCTX_HOLD_INHERITED && h->from_proc_idx != cur &&
	       n < CHAIN_WALK_MAX - 1) {
		cur = h->from_proc_idx;
		up[n++] = cur;
		h = mdl_holder_find(m, cur, f);
	}
	if (f->pub.opener_idx >= 0 && up[n - 1] != (__u32)f->pub.opener_idx)
		up[n++] = f->pub.opener_idx;

	/*
	 * up[i] (below the top) held f from getting it (its holder's since: fork, receive, or
	 * attach) until it forked up[i - 1]; an exec of it in that window is on the file's path.
	 */
	fd->exec_between = false;
	for (i = 0; i + 1 < n && !fd->exec_between; i++) {
		struct gctx_holder *hi = mdl_holder_find(m, up[i], f);
		struct gctx_holder *below = i ? mdl_holder_find(m, up[i - 1], f) : NULL;
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

static const char *pid_comm(const struct gctx_model *m, int idx)
{
	return idx >= 0 ? P(m, idx)->pub.comm : "?";
}

static void opener_str(const struct gctx_model *m, const struct file_priv *f, char *buf, size_t len)
{
	if (f->pub.opener_idx >= 0)
		mdl_textf(buf, len, "opened by pid %u (%s)", f->pub.opener_pid,
			  f->opener_comm[0] ? f->opener_comm : pid_comm(m, f->pub.opener_idx));
	else
		mdl_textf(buf, len, "opened outside the trace");
}

/* "returned NV_OK (status 0x0)", "returned -1 EBADF", "returned 0", "succeeded" (mmap) */
static void verdict_str(const struct gctx_ioctl_desc *d, __s64 ret, bool is_mmap, char *buf,
			size_t len)
{
	const char *en;

	if (d->err) {
		en = gctx_errno_name(d->err);
		if (en)
			mdl_textf(buf, len, "returned -1 %s", en);
		else
			mdl_textf(buf, len, "returned -1 errno %d", d->err);
	} else if (d->has_status) {
		if (d->status_name[0])
			mdl_textf(buf, len, "returned %.*s (status 0x%x)",
				  (int)sizeof(d->status_name), d->status_name, d->status);
		else
			mdl_textf(buf, len, "returned status 0x%x", d->status);
	} else if (is_mmap) {
		mdl_textf(buf, len, "succeeded");
	} else {
		mdl_textf(buf, len, "returned %lld", (long long)ret);
	}
}

/* ---- inherited and foreign use ---- */

/*
 * The use (ioctl or mmap) of f by p through holder h: a use by a process that neither opened
 * the file nor held it at attach raises inherited-gpu-use (it came through fork) or
 * foreign-gpu-use, once per process and file; later uses are counted on that finding.
 * unknown: the description was new to the model at this use (no open, fork or attach record
 * gave it to p).
 */
int mdl_use_finding(struct gctx_model *m, const struct gctx_ev_hdr *hdr, struct proc_priv *p,
		    struct file_priv *f, const struct gctx_holder *h, __s32 fd_no,
		    const struct gctx_ioctl_desc *d, const struct gctx_ev_ioctl *ioc, __s64 ret,
		    bool unknown)
{
	bool is_mmap = !ioc;
	struct gctx_ioctl_desc named;
	struct gctx_finding *fd;
	enum gctx_finding_kind fk;
	char opener[96], chain[GCTX_MAX_CHAIN * 12], verdict[96], how[256];
	__u32 fi;

	if (h->how == GCTX_HOLD_OPENED || h->how == GCTX_HOLD_PRESENT)
		return 0;

	if (gctx_hmap__get(&m->finding_map, p->pub.idx, fidx(f), &fi)) {
		FIND(m, fi)->uses++;
		return 0;
	}
	if (d->no_text && !is_mmap) { /* the finding names the call */
		gctx_decode_ioctl(ioc, &named);
		d = &named;
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
	gctx_copy_str(fd->call, sizeof(fd->call), d->name, sizeof(d->name));
	fill_chain(m, fd, p, f);

	chain_str(fd, chain, sizeof(chain));
	verdict_str(d, ret, is_mmap, verdict, sizeof(verdict));
	opener_str(m, f, opener, sizeof(opener));
	if (fk == GCTX_FIND_INHERITED_GPU_USE)
		mdl_textf(how, sizeof(how), "inherited through fork %s %s", chain,
			  fd->exec_between ? "with an exec in between" : "without exec");
	else if (unknown)
		mdl_textf(how, sizeof(how), "and no open or fork in the trace gave it to pid %u",
			  p->pub.pid);
	else
		mdl_textf(how, sizeof(how),
			  "which it got neither by open nor by fork (passed over a socket or "
			  "pidfd_getfd?)");
	mdl_textf(fd->detail, sizeof(fd->detail),
		  "pid %u (%s) used %s file #%u (fd %d) %s, %s: %s %s", p->pub.pid, p->pub.comm,
		  gctx_dev_kind_name(f->pub.kind), f->pub.id, fd_no, opener, how, fd->call,
		  verdict);
	finding_emit(m, fd);
	return 0;
}

/* ---- fork-with-gpu-state and crash-after-inheritance ---- */

/* API calls p made on CUDA/HIP state inherited through fork; *first: its earliest such
 * finding (inherited-context-call), NULL when none. */
static __u64 icc_uses(const struct gctx_model *m, const struct proc_priv *p,
		      const struct gctx_finding **first)
{
	const struct gctx_finding *best = NULL;
	__u64 n = 0;

	for (int v = 0; v < 2; v++) {
		const struct gctx_finding *f;

		if (!p->api_icc_id[v])
			continue;
		f = FIND(m, p->api_icc_id[v] - 1);
		n += f->uses;
		if (!best || f->time_ns < best->time_ns)
			best = f;
	}
	if (first)
		*first = best;
	return n;
}

/* Raise the pending fork-with-gpu-state of child c (it never exec'd). */
int mdl_fws_raise(struct gctx_model *m, struct proc_priv *c, bool at_finish)
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
	uses += icc_uses(m, c, NULL);
	fd->opener_pid = f->pub.opener_pid;
	fd->file_id = f->pub.id;
	fd->kind_dev = f->pub.kind;
	fd->time_ns = c->fws_ts;
	fd->event_type = GCTX_EV_FORK;
	fd->later_used = uses > 0;
	fd->uses = uses;
	mdl_textf(fd->call, sizeof(fd->call), "fork");
	fill_chain(m, fd, c, f);
	opener_str(m, f, opener, sizeof(opener));
	chain_str(fd, chain, sizeof(chain));
	mdl_textf(fd->detail, sizeof(fd->detail),
		  "pid %u (%s) was forked by pid %u (%s) while it held %u GPU file%s (first: %s "
		  "file #%u, %s; chain %s) and %s without exec; the child %s %s",
		  c->pub.pid, c->pub.comm, par->pub.pid, par->pub.comm, c->fws_nfiles,
		  c->fws_nfiles == 1 ? "" : "s", gctx_dev_kind_name(f->pub.kind), f->pub.id, opener,
		  chain, at_finish ? "was still running at the end of the trace" : "exited",
		  uses		    ? "used"
		  : c->pub.api_gaps ? "was not seen using" /* its calls could not all be seen */
				    : "never used",
		  c->fws_nfiles == 1 ? "it" : "them");
	finding_emit(m, fd);
	return 0;
}

static bool fatal_signal(int sig)
{
	return sig == 11 || sig == 7 || sig == 6 || sig == 4 || sig == 8;
}

int mdl_crash_check(struct gctx_model *m, struct proc_priv *p, __u32 tid, __u64 ts)
{
	const struct gctx_finding *icc, *use = NULL;
	struct gctx_holder *best = NULL;
	struct file_priv *bf = NULL;
	struct gctx_finding *fd;
	const char *sig;
	char opener[96], signame[16], used[96], chain[GCTX_MAX_CHAIN * 12], what[160];
	__u64 kuses = 0, auses;
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
	auses = icc_uses(m, p, &icc);
	if (!best && !icc)
		return 0;

	fd = finding_new(m, GCTX_FIND_CRASH_AFTER_INHERITANCE, GCTX_SEV_ERROR, p);
	if (!fd)
		return -ENOMEM;
	fd->tid = tid;
	fd->time_ns = ts;
	fd->event_type = GCTX_EV_EXIT;
	if (best) {
		kuses = best->nioctls + best->nmmaps;
		fd->opener_pid = bf->pub.opener_pid;
		fd->file_id = bf->pub.id;
		fd->kind_dev = bf->pub.kind;
		/* a used inherited holder always has its finding, and best is a used one if any */
		if (gctx_hmap__get(&m->finding_map, p->pub.idx, fidx(bf), &fi))
			use = FIND(m, fi);
	} else {
		fd->opener_pid = icc->opener_pid;
	}
	fd->uses = kuses + auses;
	fd->later_used = fd->uses > 0;
	/* the first inherited use of either kind, kernel-level or API-level */
	if (icc && (!use || icc->time_ns < use->time_ns))
		use = icc;
	if (use) {
		fd->related_finding = use->id;
		fd->ctx_id = icc ? icc->ctx_id : 0;
		fd->ctx_handle = icc ? icc->ctx_handle : 0;
	}
	sig = gctx_signal_name(p->pub.signal);
	if (!sig) {
		mdl_textf(signame, sizeof(signame), "signal %d", p->pub.signal);
		sig = signame;
	}
	mdl_textf(fd->call, sizeof(fd->call), "%s", sig);
	if (best) {
		fill_chain(m, fd, p, bf);
		opener_str(m, bf, opener, sizeof(opener));
		chain_str(fd, chain, sizeof(chain));
		mdl_textf(what, sizeof(what), "%s file #%u %s through fork %s",
			  gctx_dev_kind_name(bf->pub.kind), bf->pub.id, opener, chain);
	} else {
		memcpy(fd->chain, icc->chain, sizeof(fd->chain));
		fd->nchain = icc->nchain;
		chain_str(fd, chain, sizeof(chain));
		mdl_textf(what, sizeof(what), "the CUDA/HIP state of pid %u through fork %s",
			  icc->opener_pid, chain);
	}
	if (fd->uses && use)
		mdl_textf(used, sizeof(used), "had used it (%llu use%s, first: finding #%u)",
			  (unsigned long long)fd->uses, fd->uses == 1 ? "" : "s", use->id);
	else if (fd->uses)
		mdl_textf(used, sizeof(used), "had used it (%llu use%s)",
			  (unsigned long long)fd->uses, fd->uses == 1 ? "" : "s");
	else
		mdl_textf(used, sizeof(used), "never used it");
	mdl_textf(fd->detail, sizeof(fd->detail),
		  "pid %u (%s) was killed by %s%s after inheriting %s; it %s", p->pub.pid,
		  p->pub.comm, sig, p->pub.core_dumped ? " (core dumped)" : "", what, used);
	finding_emit(m, fd);
	return 0;
}

/* ---- gpu-fd-across-exec ---- */

int mdl_across_exec_raise(struct gctx_model *m, struct proc_priv *p, struct file_priv *f,
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
	mdl_textf(fd->call, sizeof(fd->call), "exec");
	fill_chain(m, fd, p, f);
	opener_str(m, f, opener, sizeof(opener));
	gctx_copy_str(fname, sizeof(fname), ev->filename, sizeof(ev->filename));
	mdl_textf(fd->detail, sizeof(fd->detail),
		  "pid %u (%s) kept %s file #%u (fd %d, %s) across exec of %s: the fd lacked "
		  "close-on-exec (O_CLOEXEC, FD_CLOEXEC)",
		  p->pub.pid, p->pub.comm, gctx_dev_kind_name(f->pub.kind), f->pub.id, fd_no,
		  opener, fname[0] ? fname : "?");
	finding_emit(m, fd);
	return 0;
}

/* ---- inherited-context-call and api-error ---- */

static const char *api_ret_name(const struct gctx_ev_api *ev, char *buf, size_t len)
{
	const char *n = gctx_api_result_name(ev->fn, ev->ret);

	if (n)
		return n;
	mdl_textf(buf, len, "%lld", (long long)ev->ret);
	return buf;
}

/* A call of a forked child that failed: the first one is kept on its inherited-context-call
 * finding (the real libcuda refuses in user space: the call, not an ioctl, is the evidence). */
void mdl_icc_refused(struct gctx_finding *fd, const struct gctx_ev_api *ev)
{
	char num[24], name[GCTX_API_STR_LEN];

	if (fd->refused_call[0] || !(ev->flags & GCTX_API_RETURNED) || ev->ret == 0)
		return;
	gctx_copy_str(fd->refused_call, sizeof(fd->refused_call),
		      gctx_api_ev_name(ev, name, sizeof(name)), sizeof(fd->refused_call));
	fd->refused_ret = ev->ret;
	gctx_copy_str(fd->refused_ret_name, sizeof(fd->refused_ret_name),
		      api_ret_name(ev, num, sizeof(num)), sizeof(fd->refused_ret_name));
}

static void finding_set_api(struct gctx_finding *fd, const struct gctx_ev_api *ev)
{
	char num[24], name[GCTX_API_STR_LEN];

	gctx_copy_str(fd->call, sizeof(fd->call), gctx_api_ev_name(ev, name, sizeof(name)),
		      sizeof(fd->call));
	fd->tid = ev->hdr.tid;
	fd->time_ns = ev->hdr.ts_ns;
	fd->event_type = GCTX_EV_API;
	if (ev->flags & GCTX_API_RETURNED) {
		fd->has_api_ret = true;
		fd->api_ret = ev->ret;
		gctx_copy_str(fd->api_ret_name, sizeof(fd->api_ret_name),
			      api_ret_name(ev, num, sizeof(num)), sizeof(fd->api_ret_name));
	}
}

/* A forked child (no exec) of a process that had initialised CUDA/HIP calls the API. */
int mdl_icc_raise(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev, __u32 v)
{
	struct proc_priv *src = P(m, p->api_src[v] - 1);
	struct gctx_api_ctx *pc = NULL;
	__u32 up[GCTX_MAX_CHAIN], n = 0, cur = p->pub.idx;
	struct gctx_finding *fd;
	char chain[160], ctx[96], ret[80];

	/* the parent's context: its newest live one, else its newest */
	for (__u32 i = src->nctxs; i-- > 0 && !pc;) {
		struct gctx_api_ctx *c = CTX(m, src->ctxs[i]);

		if (c->vendor == v && !mdl_ctx_gone(src, c))
			pc = c;
	}
	for (__u32 i = src->nctxs; i-- > 0 && !pc;)
		if (CTX(m, src->ctxs[i])->vendor == v)
			pc = CTX(m, src->ctxs[i]);

	fd = finding_new(m, GCTX_FIND_INHERITED_CONTEXT_CALL, GCTX_SEV_ERROR, p);
	if (!fd)
		return -ENOMEM;
	finding_set_api(fd, ev);
	mdl_icc_refused(fd, ev);
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
		mdl_textf(ctx, sizeof(ctx), "; its context #%u (0x%llx%s, device %d)", pc->id,
			  (unsigned long long)pc->handle, pc->primary ? ", primary" : "",
			  pc->device);
	else
		ctx[0] = 0;
	if (fd->has_api_ret)
		mdl_textf(ret, sizeof(ret), "returned %s (%lld)", fd->api_ret_name,
			  (long long)fd->api_ret);
	else
		mdl_textf(ret, sizeof(ret), "was called");
	mdl_textf(fd->detail, sizeof(fd->detail),
		  "pid %u (%s) called %s after a fork without exec from pid %u (%s), which had "
		  "initialised %s%s; %s; fork chain %s",
		  p->pub.pid, p->pub.comm, fd->call, src->pub.pid, src->pub.comm,
		  v == GCTX_VENDOR_HIP ? "HIP" : "CUDA", ctx, ret, chain);
	p->api_icc_id[v] = fd->id;
	finding_emit(m, fd);
	return 0;
}

/* api-error: failed calls, one finding per (process, call, code) counting repeats. */
int mdl_apierr_count(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev)
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
	mdl_textf(fd->detail, sizeof(fd->detail), "pid %u (%s): %s returned %s (%lld)", p->pub.pid,
		  p->pub.comm, fd->call, fd->api_ret_name, (long long)ev->ret);
	finding_emit(m, fd);
	return 0;
}

/* Why a gap happened, as the user can act on it. */
static const char *gap_why(__u32 reason)
{
	switch (reason) {
	case GCTX_GAP_NO_HOLD:
		return "holding was off (--no-hold), so the probes came after the mapping";
	case GCTX_GAP_HOLD_TIMEOUT:
		return "probing took longer than --hold-timeout, and the process was resumed first";
	case GCTX_GAP_HOLD_FAILED:
		return "the process could not be held until it was probed (another thread's "
		       "mapping "
		       "raced the stop, or a SIGCONT from elsewhere resumed it)";
	case GCTX_GAP_NOT_CANDIDATE:
		return "the file is not named like a CUDA/HIP library and was recognised by its "
		       "exports only after it was mapped";
	case GCTX_GAP_PROBE_FAILED:
		return "the library could not be probed";
	case GCTX_GAP_OUTSIDE:
		return "it was attached to (-p, --cgroup) and is not held, because its parent, "
		       "outside the traced job, would see it stopped";
	case GCTX_GAP_WATCHED:
		return "it was not held, because another process would have seen it stopped: its "
		       "parent watches its children's stops (a shell with job control, su, "
		       "runuser, "
		       "sudo) or a tracer is attached to it";
	case GCTX_GAP_HOLD_WAIT:
		return "its parent began waiting for its children's stops while it was held, so "
		       "gpuctx resumed it at once: the parent never saw it stopped";
	case GCTX_GAP_HOLD_ABORT:
		return "gpuctx or its releaser of holds was sent a signal that ends or stops it, "
		       "so every hold was ended and no process was held after";
	default:
		return "of an unknown cause";
	}
}

/* api-calls-unseen: a window where the process could call the library unseen. */
int mdl_unseen_raise(struct gctx_model *m, struct proc_priv *p, const struct gctx_rec_api_gap *g)
{
	struct gctx_finding *fd = finding_new(m, GCTX_FIND_API_CALLS_UNSEEN, GCTX_SEV_WARNING, p);
	char lib[GCTX_PATH_LEN + 1], span[64];

	if (!fd)
		return -ENOMEM;
	fd->tid = g->tid ? g->tid : p->pub.pid;
	fd->time_ns = g->from_ns;
	fd->event_type = GCTX_REC_API_GAP;
	gctx_copy_str(lib, sizeof(lib), g->lib, sizeof(g->lib));
	/* a child held back from fork for probes of its own (libwatch.c): no library, no file */
	if (!g->dev && !g->ino) {
		if (g->to_ns && g->to_ns >= g->from_ns)
			mdl_textf(span, sizeof(span), "for %.1f ms", (g->to_ns - g->from_ns) / 1e6);
		else
			mdl_textf(span, sizeof(span), "to its end");
		mdl_textf(fd->detail, sizeof(fd->detail),
			  "pid %u (%s), forked holding its parent's GPU state, ran without its "
			  "own CUDA/HIP probes %s: %s; a use of what it inherited may be missing, "
			  "so the trace cannot show that it used none",
			  p->pub.pid, p->pub.comm, span, gap_why(g->reason));
		finding_emit(m, fd);
		return 0;
	}
	if (g->to_ns && g->to_ns >= g->from_ns)
		mdl_textf(span, sizeof(span), "for %.1f ms after it mapped",
			  (g->to_ns - g->from_ns) / 1e6);
	else
		mdl_textf(span, sizeof(span), "from the moment it mapped, to the end,");
	mdl_textf(fd->detail, sizeof(fd->detail),
		  "pid %u (%s) could call %s unseen %s it: %s; its inherited-context-call and "
		  "api-error findings (and its children's) may be missing, so the trace cannot "
		  "show that this process is free of such errors",
		  p->pub.pid, p->pub.comm, lib[0] ? lib : "a CUDA/HIP library", span,
		  gap_why(g->reason));
	finding_emit(m, fd);
	return 0;
}
