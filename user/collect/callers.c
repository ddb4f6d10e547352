// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* API call sites to GCTX_REC_CALLER records (interface in callers.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/callers.h"
#include "collect/unwind.h"
#include "lib/grow.h"
#include "lib/hmap.h"

#define MAX_KEPT (64 * 1024) /* symbolised sites kept in all (448 bytes each) */
#define MAX_WAIT 4096	     /* call sites held for their process's exit mappings */
/* kept_flags: not symbolised yet, its process was gone before its mappings were read */
#define KEPT_WAITING (1u << 31)

/* A process as the kernel records name it. Ids come from one counter. */
struct cproc {
	__u32 as;  /* its address space: new at exec, the parent's at fork */
	__u32 gen; /* this process image: new at fork and at exec */
};

/* A call site whose record waits for its process's exit (the kernel sends the mappings
 * right before the exit record): written by gctx_callers__tick. */
struct cwait {
	__u32 k; /* kept[] index */
	__u32 pid;
	__u32 gen; /* the process image that called: if it exec'd since, no mappings apply */
};

struct gctx_callers {
	struct gctx_stacks *stacks;
	bool own_stacks;
	gctx_record_fn cb;
	void *cb_ctx;
	__u32 next_id;
	struct cproc *procs;
	__u32 nprocs, cap_procs;
	struct gctx_hmap pid_map;  /* (pid, 0) -> procs[] index */
	struct gctx_hmap site_map; /* (as, addr) -> kept[] index */
	struct gctx_hmap nsites;   /* (as, 0) -> addresses symbolised in it */
	struct gctx_hmap written;  /* (gen, addr) -> 1: record written for this process */
	struct gctx_rec_frame *kept;
	__u32 nkept, cap_kept;
	__u32 *kept_flags;
	__u32 cap_flags;
	struct cwait *wait;
	__u32 nwait, cap_wait;
	struct gctx_rec_caller_drops st;
};

struct gctx_callers *gctx_callers__new(struct gctx_stacks *stacks, gctx_record_fn cb, void *cb_ctx)
{
	struct gctx_callers *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->stacks = stacks;
	if (!stacks) {
		c->stacks = gctx_stacks__new();
		c->own_stacks = true;
		if (!c->stacks) {
			free(c);
			return NULL;
		}
	}
	c->cb = cb;
	c->cb_ctx = cb_ctx;
	return c;
}

void gctx_callers__free(struct gctx_callers *c)
{
	if (!c)
		return;
	if (c->own_stacks)
		gctx_stacks__free(c->stacks);
	gctx_hmap__free(&c->pid_map);
	gctx_hmap__free(&c->site_map);
	gctx_hmap__free(&c->nsites);
	gctx_hmap__free(&c->written);
	free(c->procs);
	free(c->kept);
	free(c->kept_flags);
	free(c->wait);
	free(c);
}

void gctx_callers__stats(const struct gctx_callers *c, struct gctx_rec_caller_drops *out)
{
	memset(out, 0, sizeof(*out));
	if (c)
		*out = c->st;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The process of pid, made with an address space of its own when new (NULL: no memory). */
static struct cproc *proc_get(struct gctx_callers *c, __u32 pid)
{
	__u32 i;

	if (gctx_hmap__get(&c->pid_map, pid, 0, &i))
		return &c->procs[i];
	if (gctx_grow(&c->procs, &c->cap_procs, c->nprocs + 1, sizeof(*c->procs)) ||
	    gctx_hmap__put(&c->pid_map, pid, 0, c->nprocs))
		return NULL;
	c->procs[c->nprocs] = (struct cproc){++c->next_id, ++c->next_id};
	return &c->procs[c->nprocs++];
}

static void on_fork(struct gctx_callers *c, const struct gctx_ev_fork *f)
{
	struct cproc *p, *k;
	__u32 as;

	if (f->flags & GCTX_FORK_THREAD)
		return;
	p = proc_get(c, f->hdr.tgid);
	if (!p)
		return;
	as = p->as;
	k = proc_get(c, f->child_tgid); /* may move p */
	if (k) {
		k->as = as;
		k->gen = ++c->next_id;
	}
}

static void on_exec(struct gctx_callers *c, __u32 pid)
{
	struct cproc *p = proc_get(c, pid);

	if (p) {
		p->as = ++c->next_id;
		p->gen = ++c->next_id;
	}
}

/* Symbolise kept[k] (its address set) through maps. */
static void symbolise(struct gctx_callers *c, __u32 k, const struct gctx_maps *maps)
{
	__u64 t0 = mono_ns(), dt, addr = c->kept[k].addr;
	int ret;

	gctx_unwind_lock();
	ret = gctx_unwind_symbolise(maps, addr, &c->kept[k]);
	gctx_unwind_unlock();
	c->kept_flags[k] =
	    ret ? (maps && maps->n ? GCTX_CALLER_NO_MODULE : GCTX_CALLER_NO_MAPS) : 0;
	dt = mono_ns() - t0;
	c->st.resolve_ns += dt;
	if (dt > c->st.resolve_max_ns)
		c->st.resolve_max_ns = dt;
}

/* Symbolise addr in pid's address space, or mark it waiting when the process is gone; the
 * kept index, or -1 (no memory). */
static int resolve(struct gctx_callers *c, const struct cproc *p, __u32 pid, __u64 addr)
{
	bool fresh;
	const struct gctx_maps *maps = gctx_stacks__maps(c->stacks, pid, &fresh);
	__u32 k = c->nkept;

	if (gctx_grow(&c->kept, &c->cap_kept, k + 1, sizeof(*c->kept)) ||
	    gctx_grow(&c->kept_flags, &c->cap_flags, k + 1, sizeof(*c->kept_flags)) ||
	    gctx_hmap__put(&c->site_map, p->as, addr, k))
		return -1;
	memset(&c->kept[k], 0, sizeof(c->kept[k]));
	c->kept[k].addr = addr;
	c->nkept++;
	/* gone: what was known of it may predate the library that called */
	if (!fresh && c->nwait < MAX_WAIT) {
		c->kept_flags[k] = KEPT_WAITING;
		return (int)k;
	}
	symbolise(c, k, maps);
	return (int)k;
}

static void write_caller(struct gctx_callers *c, __u32 pid, __u32 k, __u32 flags)
{
	struct gctx_rec_caller r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.flags = flags;
	r.frame = c->kept[k];
	c->st.resolved++;
	if (c->cb)
		c->cb(c->cb_ctx, GCTX_REC_CALLER, &r, sizeof(r));
}

static void on_api(struct gctx_callers *c, const struct gctx_ev_api *a)
{
	struct cproc *p;
	__u32 i, n = 0, one;
	int k;

	if (!a->caller)
		return;
	p = proc_get(c, a->hdr.tgid);
	if (!p || gctx_hmap__get(&c->written, p->gen, a->caller, &one))
		return;
	if (gctx_hmap__get(&c->site_map, p->as, a->caller, &i)) {
		k = (int)i;
	} else {
		gctx_hmap__get(&c->nsites, p->as, 0, &n);
		if (n >= GCTX_CALLER_MAX_SITES || c->nkept >= MAX_KEPT ||
		    gctx_hmap__put(&c->nsites, p->as, 0, n + 1)) {
			c->st.capped++; /* every call from a site past the bound */
			return;
		}
		k = resolve(c, p, a->hdr.tgid, a->caller);
		if (k < 0) {
			c->st.capped++;
			return;
		}
	}
	if (gctx_hmap__put(&c->written, p->gen, a->caller, 1))
		return;
	if (c->kept_flags[k] & KEPT_WAITING) {
		if (c->nwait < MAX_WAIT &&
		    !gctx_grow(&c->wait, &c->cap_wait, c->nwait + 1, sizeof(*c->wait))) {
			c->wait[c->nwait++] = (struct cwait){k, a->hdr.tgid, p->gen};
			return;
		}
		symbolise(c, k, NULL);
	}
	write_caller(c, a->hdr.tgid, k, c->kept_flags[k]);
}

void gctx_callers__tick(struct gctx_callers *c, bool all)
{
	__u32 i, n = 0;

	if (!c)
		return;
	for (i = 0; i < c->nwait; i++) {
		struct cwait w = c->wait[i];
		struct cproc *p;

		if (!all && (c->kept_flags[w.k] & KEPT_WAITING) &&
		    !gctx_stacks__gone(c->stacks, w.pid)) {
			c->wait[n++] = w;
			continue;
		}
		p = proc_get(c, w.pid);
		if (c->kept_flags[w.k] & KEPT_WAITING)
			symbolise(c, w.k,
				  p && p->gen == w.gen ? gctx_stacks__maps(c->stacks, w.pid, NULL)
						       : NULL);
		write_caller(c, w.pid, w.k, c->kept_flags[w.k]);
	}
	c->nwait = n;
}

void gctx_callers__on_record(struct gctx_callers *c, __u32 type, const void *data, __u32 len)
{
	if (!c || !data)
		return;
	if (c->own_stacks)
		gctx_stacks__on_record(c->stacks, type, data, len);
	if (type == GCTX_EV_FORK && len >= sizeof(struct gctx_ev_fork))
		on_fork(c, data);
	else if (type == GCTX_EV_EXEC && len >= GCTX_EV_EXEC_V3_LEN)
		on_exec(c, ((const struct gctx_ev_exec *)data)->hdr.tgid);
	else if (type == GCTX_EV_API && len >= sizeof(struct gctx_ev_api))
		on_api(c, data);
}
