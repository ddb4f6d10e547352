// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Incidents: the findings of a finished model grouped by root cause. A fork incident is the
 * process that created GPU state (initialised CUDA/HIP, opened the device) and every process
 * that inherited that state through fork without exec: which used it and how, which died. The
 * other causes (fds kept across exec, fds passed, failing calls, spawned Python workers that
 * fail to start) are grouped by the process they come from. Also the start-up times (seed 002).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "lib/grow.h"
#include "model/analysis_priv.h"

#define WALK_MAX 256 /* parent links followed at most (cycles, runaway chains) */

enum cls {
	CLS_FORK = 0,
	CLS_FOREIGN,
	CLS_EXEC,
	CLS_API,
	CLS_SPAWN,
	CLS_NONE,
};

/* ---- evidence about processes ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool name_is_python(const char *s)
{
	return !strncmp(s, "python", 6) || !strncmp(s, "pypy", 4);
}

/* argv[0] of the process's latest exec (or at attach), "" when unknown */
static const char *argv0(const struct gctx_proc *p)
{
	if (p->nexecs && p->execs[p->nexecs - 1].args_len)
		return p->execs[p->nexecs - 1].args;
	return p->args_len ? p->args : "";
}

static bool proc_is_python(const struct gctx_proc *p)
{
	const char *exe = p->nexecs ? p->execs[p->nexecs - 1].filename : p->exe;

	return name_is_python(p->comm) || name_is_python(base_name(exe)) ||
	       name_is_python(base_name(argv0(p)));
}

static bool comm_is(const char *comm, const char *name)
{
	return !strncmp(comm, name, strlen(name));
}

/* torch names its DataLoader worker processes (and threads) pt_data_worker */
static bool proc_is_dl_worker(const struct gctx_proc *p)
{
	if (comm_is(p->comm, "pt_data_worker"))
		return true;
	for (__u32 i = 0; i < p->ncomm_prev && i < GCTX_COMM_HIST; i++)
		if (comm_is(p->comm_prev[i], "pt_data_worker"))
			return true;
	for (__u32 i = 0; i < p->nthreads; i++)
		if (comm_is(p->threads[i].comm, "pt_data_worker"))
			return true;
	return false;
}

/* Does the NUL-separated argv hold s? */
static bool args_have(const char *args, __u32 len, const char *s)
{
	size_t n = strlen(s);

	for (__u32 i = 0; i + n <= len; i++)
		if (!memcmp(args + i, s, n))
			return true;
	return false;
}

/* exec'd as a multiprocessing spawn/forkserver child */
static bool proc_is_mp_spawned(const struct gctx_proc *p)
{
	const struct gctx_exec *x;

	if (!p->nexecs)
		return false;
	x = &p->execs[p->nexecs - 1];
	return args_have(x->args, x->args_len, "--multiprocessing-fork") ||
	       args_have(x->args, x->args_len, "multiprocessing.spawn") ||
	       args_have(x->args, x->args_len, "multiprocessing.forkserver");
}

/* ---- start-up times ---- */

static int startups(struct gctx_analysis *a)
{
	const struct gctx_model *m = a->m;
	__u32 np = gctx_model__nprocs(m), i, k;
	__u64 *first = calloc(np + 1, sizeof(*first));

	a->gpu_init = calloc(np + 1, sizeof(*a->gpu_init));
	if (!first || !a->gpu_init) {
		free(first);
		return -ENOMEM;
	}
	for (i = 0; i < gctx_model__nctxs(m); i++) {
		const struct gctx_api_ctx *c = gctx_model__ctx(m, i);

		if (c->creator_idx < np && c->create_ns &&
		    (!first[c->creator_idx] || c->create_ns < first[c->creator_idx]))
			first[c->creator_idx] = c->create_ns;
	}
	for (i = 0; i < gctx_model__nfiles(m); i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		for (k = 0; k < f->nholders; k++) {
			const struct gctx_holder *h = &f->holders[k];

			if (h->how != GCTX_HOLD_OPENED || h->proc_idx >= np || !h->since_ns)
				continue;
			if (!first[h->proc_idx] || h->since_ns < first[h->proc_idx])
				first[h->proc_idx] = h->since_ns;
		}
	}
	for (i = 0; i < np; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);
		__u64 from = p->start_ns;

		a->gpu_init[i] = -1;
		if (!first[i])
			continue;
		/* an exec'd process starts at its exec: the latest one before its GPU use */
		for (k = 0; k < p->nexecs; k++)
			if (p->execs[k].ts_ns <= first[i])
				from = p->execs[k].ts_ns;
		if (from && from <= first[i])
			a->gpu_init[i] = (__s64)(first[i] - from);
	}
	free(first);
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

static int startup_stats(struct gctx_analysis *a)
{
	__u32 np = gctx_model__nprocs(a->m), n = 0;
	__u64 *v = calloc(np + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (__u32 i = 0; i < np; i++)
		if (a->gpu_init[i] >= 0)
			v[n++] = (__u64)a->gpu_init[i];
	qsort(v, n, sizeof(*v), cmp_u64);
	a->sum.nstartups = n;
	if (n) {
		a->sum.startup_median_ns = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		a->sum.startup_max_ns = v[n - 1];
	}
	free(v);
	return 0;
}

/* ---- grouping ---- */

/* The cause a finding belongs to; CLS_NONE: not a cause (a new kind is mapped here). */
static enum cls finding_cls(const struct gctx_finding *f)
{
	switch (f->kind) {
	case GCTX_FIND_INHERITED_GPU_USE:
	case GCTX_FIND_FORK_WITH_GPU_STATE:
	case GCTX_FIND_CRASH_AFTER_INHERITANCE:
	case GCTX_FIND_INHERITED_CONTEXT_CALL:
		return CLS_FORK;
	case GCTX_FIND_FOREIGN_GPU_USE:
		return CLS_FOREIGN;
	case GCTX_FIND_GPU_FD_ACROSS_EXEC:
		return CLS_EXEC;
	case GCTX_FIND_API_ERROR:
		return CLS_API;
	default:
		/* api-calls-unseen: a gap in what was seen, told by the verdict's coverage */
		return CLS_NONE;
	}
}

/* The ancestor of proc idx (or idx itself) with this pid; -1 when none within WALK_MAX. */
static int ancestor_with_pid(const struct gctx_model *m, __u32 idx, __u32 pid)
{
	const struct gctx_proc *p = gctx_model__proc(m, idx);

	for (int n = 0; p && n < WALK_MAX; n++) {
		if (p->pid == pid)
			return (int)p->idx;
		if (p->parent_idx < 0)
			break;
		p = gctx_model__proc(m, (__u32)p->parent_idx);
	}
	return -1;
}

static const struct gctx_gpu_file *file_of(const struct gctx_model *m, __u32 id)
{
	const struct gctx_gpu_file *f = id ? gctx_model__file(m, id - 1) : NULL;

	return f && f->id == id ? f : NULL;
}

/* The process whose GPU state (or failure) a finding is about. */
static __u32 finding_src(const struct gctx_model *m, const struct gctx_finding *f)
{
	const struct gctx_gpu_file *file = file_of(m, f->file_id);
	const struct gctx_proc *p;
	int idx;

	if (f->kind == GCTX_FIND_API_ERROR)
		return f->proc_idx;
	if (file && file->opener_idx >= 0)
		return (__u32)file->opener_idx;
	/* API-level: opener_pid is the process that initialised; chain[0] is the top */
	if (f->opener_pid) {
		idx = ancestor_with_pid(m, f->proc_idx, f->opener_pid);
		if (idx >= 0)
			return (__u32)idx;
		p = gctx_model__proc_by_pid(m, f->opener_pid);
		if (p)
			return p->idx;
	}
	return f->proc_idx;
}

struct member {
	__u32 proc_idx;
	bool api_used, kernel_used, used, crashed;
};

struct group {
	enum cls cls;
	__u32 src;
	__u32 *fids; /* finding indices */
	__u32 nf, cap_f;
	struct member *mem;
	__u32 nm, cap_m;
};

struct groups {
	struct group *g;
	__u32 n, cap;
};

static struct group *group_get(struct groups *gs, enum cls cls, __u32 src)
{
	struct group *g;

	for (__u32 i = 0; i < gs->n; i++)
		if (gs->g[i].cls == cls && gs->g[i].src == src)
			return &gs->g[i];
	if (gctx_grow(&gs->g, &gs->cap, gs->n + 1, sizeof(*gs->g)))
		return NULL;
	g = &gs->g[gs->n++];
	memset(g, 0, sizeof(*g));
	g->cls = cls;
	g->src = src;
	return g;
}

static struct member *member_get(struct group *g, __u32 proc_idx)
{
	struct member *mb;

	for (__u32 i = g->nm; i-- > 0;)
		if (g->mem[i].proc_idx == proc_idx)
			return &g->mem[i];
	if (gctx_grow(&g->mem, &g->cap_m, g->nm + 1, sizeof(*g->mem)))
		return NULL;
	mb = &g->mem[g->nm++];
	memset(mb, 0, sizeof(*mb));
	mb->proc_idx = proc_idx;
	return mb;
}

static void groups_free(struct groups *gs)
{
	for (__u32 i = 0; i < gs->n; i++) {
		free(gs->g[i].fids);
		free(gs->g[i].mem);
	}
	free(gs->g);
}

static int group_findings(const struct gctx_model *m, struct groups *gs)
{
	__u32 n = gctx_model__nfindings(m);

	for (__u32 i = 0; i < n; i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);
		__u32 src = finding_src(m, f);
		struct group *g;
		struct member *mb;

		if (finding_cls(f) == CLS_NONE)
			continue;
		g = group_get(gs, finding_cls(f), src);
		if (!g || gctx_grow(&g->fids, &g->cap_f, g->nf + 1, sizeof(*g->fids)))
			return -ENOMEM;
		g->fids[g->nf++] = i;
		if (f->proc_idx == src && g->cls == CLS_FORK)
			continue; /* the source is not its own victim */
		mb = member_get(g, f->proc_idx);
		if (!mb)
			return -ENOMEM;
		switch (f->kind) {
		case GCTX_FIND_INHERITED_CONTEXT_CALL:
			mb->api_used = mb->used = true;
			break;
		case GCTX_FIND_INHERITED_GPU_USE:
			mb->kernel_used = mb->used = true;
			break;
		case GCTX_FIND_FORK_WITH_GPU_STATE:
			mb->used |= f->later_used;
			break;
		case GCTX_FIND_CRASH_AFTER_INHERITANCE:
			mb->crashed = true;
			mb->used |= f->later_used;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* Spawned Python workers (exec'd multiprocessing children) that exited with an error, by the
 * process that started them: re-running an unguarded main script is the usual cause. */
bool ana_terminated_by_parent(const struct gctx_model *m, const struct gctx_proc *p)
{
	const struct gctx_proc *par;

	if (p->signal != SIGTERM || p->parent_idx < 0)
		return false;
	par = gctx_model__proc(m, (__u32)p->parent_idx);
	return par && (!par->exited || par->exit_ns > p->exit_ns);
}

static int group_spawn_failures(const struct gctx_model *m, struct groups *gs)
{
	for (__u32 i = 0; i < gctx_model__nprocs(m); i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);
		struct group *g;
		struct member *mb;

		if (!p->exited || p->parent_idx < 0 || !proc_is_mp_spawned(p))
			continue;
		if (p->signal == 0 && p->exit_code <= 0)
			continue;
		if (ana_terminated_by_parent(m, p))
			continue;
		g = group_get(gs, CLS_SPAWN, (__u32)p->parent_idx);
		if (!g || !(mb = member_get(g, i)))
			return -ENOMEM;
		mb->crashed = p->signal != 0;
	}
	return 0;
}

/* ---- one incident from a group ---- */

static int cmp_member_start(const void *x, const void *y, void *ctx)
{
	const struct gctx_model *m = ctx;
	const struct member *a = x, *b = y;
	__u64 sa = gctx_model__proc(m, a->proc_idx)->start_ns;
	__u64 sb = gctx_model__proc(m, b->proc_idx)->start_ns;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	return a->proc_idx < b->proc_idx ? -1 : a->proc_idx > b->proc_idx;
}

/* Members in fork order, and their generation: a new one starts once every member of the
 * current one has exited (DataLoader workers re-created per epoch). A re-creation is claimed
 * only on the evidence of a pattern: two generations or more, of the same size, of two members
 * or more each (a pool made again). Workers forked one after the other, the first done before
 * the next fork (the demo's, within a millisecond), are one generation. */
static __u32 generations(const struct gctx_model *m, struct member *mem, __u32 n, __u32 *gen)
{
	__u64 gen_end = 0;
	__u32 g = 0, size = 0, first = 0;
	bool pattern = true;

	qsort_r(mem, n, sizeof(*mem), cmp_member_start, (void *)m);
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, mem[i].proc_idx);
		__u64 end = p->exited ? p->exit_ns : ~0ULL;

		if (!g || (p->start_ns && p->start_ns > gen_end)) {
			g++;
			gen_end = end;
		} else if (end > gen_end) {
			gen_end = end;
		}
		gen[i] = g;
	}
	/* every generation as large as the first, the first of two or more */
	for (__u32 i = 0; i <= n; i++) {
		if (i < n && (!i || gen[i] == gen[i - 1])) {
			size++;
			continue;
		}
		if (!first)
			first = size;
		if (size != first || size < 2)
			pattern = false;
		size = 1;
	}
	if (g > 1 && !pattern) {
		for (__u32 i = 0; i < n; i++)
			gen[i] = 1;
		g = 1;
	}
	return g;
}

/* The source's API context in play: the newest made before its first member's fork. */
static const struct gctx_api_ctx *src_ctx(const struct gctx_model *m, __u32 src, __u64 before)
{
	const struct gctx_api_ctx *best = NULL;

	for (__u32 i = 0; i < gctx_model__nctxs(m); i++) {
		const struct gctx_api_ctx *c = gctx_model__ctx(m, i);

		if (c->creator_idx != src || (before && c->create_ns > before))
			continue;
		best = c;
	}
	return best;
}

/* Earliest GPU file the source opened, 0 none. */
static __u64 src_open_ns(const struct gctx_model *m, __u32 src)
{
	__u64 t = 0;

	for (__u32 i = 0; i < gctx_model__nfiles(m); i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		if (f->opener_idx == (int)src && f->open_ns && (!t || f->open_ns < t))
			t = f->open_ns;
	}
	return t;
}

/* Did the source allocate device memory through the API before 'before'? */
static bool src_allocated(const struct gctx_model *m, __u32 src, __u64 before)
{
	for (__u32 i = 0; i < gctx_model__nmems(m); i++) {
		const struct gctx_api_mem *mm = gctx_model__mem(m, i);

		if (mm->proc_idx == src && (!before || mm->alloc_ns < before))
			return true;
	}
	return false;
}

static void first_use_text(const struct gctx_finding *f, char *buf, size_t len)
{
	const char *n;

	if (f->refused_call[0] && strcmp(f->refused_call, f->call)) {
		/* the first call succeeded (a table look-up), a later one was refused */
		snprintf(buf, len, "%s -> %s, after %s", f->refused_call, f->refused_ret_name,
			 f->call);
	} else if (f->has_api_ret) {
		snprintf(buf, len, "%s -> %s", f->call, f->api_ret_name);
	} else if (f->err) {
		n = gctx_errno_name(f->err);
		snprintf(buf, len, "%s -> %s", f->call, n ? n : "error");
	} else if (f->has_status) {
		n = gctx_nv_status_name(f->status);
		if (n)
			snprintf(buf, len, "%s -> %s", f->call, n);
		else
			snprintf(buf, len, "%s -> status 0x%x", f->call, f->status);
	} else {
		snprintf(buf, len, "%s", f->call);
	}
}

/* Where in the code (issue 11's stacks, when they were recorded): the source's first GPU
 * initialisation, the fork that carried the state to the first member that used it (else
 * the first member), and that member's first use. */
static void fill_where(const struct gctx_model *m, struct gctx_incident *in,
		       const struct gctx_finding *use)
{
	const struct gctx_stack *s, *fork = NULL, *st_use = NULL;

	s = gctx_model__stack_for(m, in->src_pid, GCTX_STACK_INIT, 0);
	if (s)
		gctx_site_format(s, in->where[GCTX_SITE_INIT].text,
				 sizeof(in->where[GCTX_SITE_INIT].text));
	if (use) {
		fork = gctx_model__stack_for(m, in->src_pid, GCTX_STACK_FORK, use->pid);
		st_use = gctx_model__stack_for(m, use->pid, GCTX_STACK_USE, 0);
	}
	for (__u32 i = 0; i < in->npids && (!fork || !st_use); i++) {
		if (!fork)
			fork = gctx_model__stack_for(m, in->src_pid, GCTX_STACK_FORK, in->pids[i]);
		if (!st_use)
			st_use = gctx_model__stack_for(m, in->pids[i], GCTX_STACK_USE, 0);
	}
	if (fork)
		gctx_site_format(fork, in->where[GCTX_SITE_FORK].text,
				 sizeof(in->where[GCTX_SITE_FORK].text));
	if (st_use)
		gctx_site_format(st_use, in->where[GCTX_SITE_USE].text,
				 sizeof(in->where[GCTX_SITE_USE].text));
}

static int incident_from_group(struct gctx_analysis *a, struct group *g)
{
	const struct gctx_model *m = a->m;
	const struct gctx_finding *use = NULL;
	const struct gctx_pyexc *raised = NULL;
	const struct gctx_api_ctx *c;
	struct gctx_incident *in;
	__u64 first_fork = 0;

	if (gctx_grow(&a->inc, &a->cap_inc, a->ninc + 1, sizeof(*a->inc)))
		return -ENOMEM;
	in = &a->inc[a->ninc++];
	memset(in, 0, sizeof(*in));
	in->src_idx = g->src;
	in->src_pid = gctx_model__proc(m, g->src)->pid;
	in->device = -1;
	in->findings = calloc(g->nf + 1, sizeof(*in->findings));
	in->pids = calloc(g->nm + 1, sizeof(*in->pids));
	in->pid_gen = calloc(g->nm + 1, sizeof(*in->pid_gen));
	in->members = calloc(g->nm + 1, sizeof(*in->members));
	if (!in->findings || !in->pids || !in->pid_gen || !in->members)
		return -ENOMEM;

	for (__u32 i = 0; i < g->nf; i++) {
		const struct gctx_finding *f = gctx_model__finding(m, g->fids[i]);

		in->findings[in->nfindings++] = f->id;
		if (!in->first_ns || f->time_ns < in->first_ns)
			in->first_ns = f->time_ns;
		if (f->time_ns > in->last_ns)
			in->last_ns = f->time_ns;
		if ((f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL ||
		     f->kind == GCTX_FIND_INHERITED_GPU_USE) &&
		    (!use || f->time_ns < use->time_ns))
			use = f;
	}
	in->generations = g->nm ? generations(m, g->mem, g->nm, in->pid_gen) : 0;
	for (__u32 i = 0; i < g->nm; i++) {
		const struct member *mb = &g->mem[i];
		const struct gctx_proc *p = gctx_model__proc(m, mb->proc_idx);
		const struct gctx_pyexc *e = NULL;
		bool refused = false;
		__u32 total;

		/* a Python child that raised about the GPU or fork attempted to use it, even
		 * with no driver call (PyTorch refuses in Python) */
		if (g->cls == CLS_FORK)
			e = gctx_model__pyexc_of(m, mb->proc_idx, &total);
		if (e && gctx_pyexc_about_gpu(e)) {
			refused = true;
			in->nraised++;
		}
		if (e && (!raised || (refused && !gctx_pyexc_about_gpu(raised))))
			raised = e;
		in->members[in->npids] = mb->proc_idx;
		in->pids[in->npids++] = p->pid;
		in->nused += mb->used || refused;
		in->nunseen += !(mb->used || refused) && p->api_gaps;
		in->napi_used += mb->api_used;
		in->nkernel_used += mb->kernel_used;
		if (mb->crashed && !in->ncrashed++) {
			in->crash_pid = p->pid;
			in->crash_sig = p->signal;
		}
		if (!first_fork || (p->start_ns && p->start_ns < first_fork))
			first_fork = p->start_ns;
		in->ev.dataloader |= proc_is_dl_worker(p);
		in->ev.mp_spawned |= proc_is_mp_spawned(p);
	}
	in->ninherited = g->nm;
	if (use)
		first_use_text(use, in->first_use, sizeof(in->first_use));
	if (raised)
		gctx_pyexc_text(m, raised, in->raised, sizeof(in->raised));

	switch ((int)g->cls) {
	case CLS_FORK:
		in->kind = in->nused || in->ncrashed ? GCTX_INC_POISON_FORK : GCTX_INC_FORK_INHERIT;
		break;
	case CLS_FOREIGN:
		in->kind = GCTX_INC_FOREIGN_USE;
		break;
	case CLS_EXEC:
		in->kind = GCTX_INC_FD_ACROSS_EXEC;
		break;
	case CLS_API:
		in->kind = GCTX_INC_API_ERRORS;
		break;
	default:
		in->kind = GCTX_INC_SPAWN_STARTUP;
		for (__u32 i = 0; i < g->nm; i++) {
			const struct gctx_proc *p = gctx_model__proc(m, g->mem[i].proc_idx);

			if (!in->first_ns || p->exit_ns < in->first_ns)
				in->first_ns = p->exit_ns;
			if (p->exit_ns > in->last_ns)
				in->last_ns = p->exit_ns;
		}
		break;
	}
	in->severity = in->kind == GCTX_INC_POISON_FORK || in->kind == GCTX_INC_FOREIGN_USE ||
			       in->kind == GCTX_INC_SPAWN_STARTUP
			   ? GCTX_SEV_ERROR
			   : GCTX_SEV_WARNING;

	/* the state: its API context (device, primary) and when it was made */
	c = src_ctx(m, g->src, first_fork);
	if (c) {
		in->ctx_id = c->id;
		in->ctx_primary = c->primary;
		in->device = c->device;
		in->init_ns = c->create_ns;
		snprintf(in->api, sizeof(in->api), "%s", c->vendor ? "HIP" : "CUDA");
	} else if (use && use->has_api_ret) {
		snprintf(in->api, sizeof(in->api), "%s",
			 strncmp(use->call, "hip", 3) ? "CUDA" : "HIP");
	}
	if (!in->init_ns || (src_open_ns(m, g->src) && src_open_ns(m, g->src) < in->init_ns))
		in->init_ns = src_open_ns(m, g->src);

	in->ev.kind = in->kind;
	in->ev.python = proc_is_python(gctx_model__proc(m, g->src));
	in->ev.hip = !strcmp(in->api, "HIP");
	in->ev.no_api = !in->api[0];
	in->ev.generations = in->generations;
	/* traced at API level and no allocation before the first fork: it never used the GPU */
	in->ev.init_unused = c && gctx_model__api_calls(m, g->src) && !c->launches &&
			     !src_allocated(m, g->src, first_fork);
	in->fixes = gctx_hints__choose(&in->ev);
	gctx_hints__text(in->fixes, &in->ev, in->fix, sizeof(in->fix));
	fill_where(m, in, use);
	/* an import did it: the init site names the library that called cuInit/hipInit */
	if ((in->fixes & GCTX_FIX_IMPORT_INIT) && in->where[GCTX_SITE_INIT].text[0]) {
		size_t o = strlen(in->fix);

		snprintf(in->fix + o, sizeof(in->fix) - o, " (the GPU was initialised at %s)",
			 in->where[GCTX_SITE_INIT].text);
	}
	return 0;
}

/* ---- order, summary, public interface ---- */

static int cmp_incident(const void *x, const void *y)
{
	const struct gctx_incident *a = x, *b = y;

	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->first_ns != b->first_ns)
		return a->first_ns < b->first_ns ? -1 : 1;
	return a->src_pid < b->src_pid ? -1 : a->src_pid > b->src_pid;
}

/* Most generations of spawned Python workers under one parent (seed 002: pools re-created
 * every epoch), 0 when there are none. */
static __u32 spawn_generations(const struct gctx_model *m)
{
	__u32 best = 0;

	for (__u32 i = 0; i < gctx_model__nprocs(m); i++) {
		const struct gctx_proc *q = gctx_model__proc(m, i);
		struct member *mem = calloc(q->nchildren + 1, sizeof(*mem));
		__u32 *gen = calloc(q->nchildren + 1, sizeof(*gen));
		__u32 n = 0, g;

		for (__u32 k = 0; mem && gen && k < q->nchildren; k++)
			if (proc_is_mp_spawned(gctx_model__proc(m, q->children[k])))
				mem[n++].proc_idx = q->children[k];
		g = n ? generations(m, mem, n, gen) : 0;
		if (g > best)
			best = g;
		free(mem);
		free(gen);
	}
	return best;
}

/* A GPU context at driver level, as the ioctls made it, with or without an API probe: an
 * NVIDIA channel group (TSG), or a channel made outside one; an AMD KFD process (opening
 * /dev/kfd) or amdgpu context. */
static bool driver_ctx(const struct gctx_model *m, const struct gctx_gpu_obj *o)
{
	const struct gctx_gpu_obj *parent;

	switch (o->kind) {
	case GCTX_OBJ_RM_CHANNEL_GROUP:
	case GCTX_OBJ_KFD_PROCESS:
	case GCTX_OBJ_DRM_CTX:
		return true;
	case GCTX_OBJ_RM_CHANNEL:
		parent = o->parent_obj >= 0 ? gctx_model__obj(m, o->parent_obj) : NULL;
		return !parent || parent->kind != GCTX_OBJ_RM_CHANNEL_GROUP;
	default:
		return false;
	}
}

static void summarise(struct gctx_analysis *a)
{
	const struct gctx_model *m = a->m;
	struct gctx_job_summary *s = &a->sum;
	__u32 sg;

	s->nincidents = a->ninc;
	s->nprocs = gctx_model__nprocs(m);
	for (__u32 i = 0; i < a->ninc; i++) {
		const struct gctx_incident *in = &a->inc[i];

		s->nerrors += in->severity == GCTX_SEV_ERROR;
		s->nwarnings += in->severity == GCTX_SEV_WARNING;
		if (!i || in->severity > s->worst)
			s->worst = in->severity;
		if (in->generations > s->generations)
			s->generations = in->generations;
	}
	sg = spawn_generations(m);
	if (sg > s->generations)
		s->generations = sg;
	for (__u32 i = 0; i < gctx_model__nctxs(m); i++) {
		s->ctx_created++;
		s->ctx_destroyed += gctx_model__ctx(m, i)->destroyed;
	}
	for (__u32 i = 0; i < gctx_model__nobjs(m); i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (!driver_ctx(m, o))
			continue;
		s->drv_ctx_created++;
		s->drv_ctx_destroyed += o->destroyed;
	}
}

struct gctx_analysis *gctx_analysis__new(const struct gctx_model *m, __u64 start_ns)
{
	struct gctx_analysis *a = calloc(1, sizeof(*a));
	struct groups gs = {};
	__u32 nf = gctx_model__nfindings(m);

	if (!a)
		return NULL;
	a->m = m;
	a->start = start_ns;
	a->finding_inc = calloc(nf + 1, sizeof(*a->finding_inc));
	if (!a->finding_inc || startups(a) || startup_stats(a) || group_findings(m, &gs) ||
	    group_spawn_failures(m, &gs))
		goto err;
	for (__u32 i = 0; i < gs.n; i++)
		if (incident_from_group(a, &gs.g[i]))
			goto err;
	if (a->ninc) /* a->inc is NULL when there is none */
		qsort(a->inc, a->ninc, sizeof(*a->inc), cmp_incident);
	for (__u32 i = 0; i < a->ninc; i++) {
		struct gctx_incident *in = &a->inc[i];

		in->id = i + 1;
		for (__u32 k = 0; k < in->nfindings; k++)
			if (in->findings[k] && in->findings[k] <= nf)
				a->finding_inc[in->findings[k] - 1] = in->id;
		ana_incident_text(a, in);
	}
	summarise(a);
	ana_summary_text(a);
	groups_free(&gs);
	return a;
err:
	groups_free(&gs);
	gctx_analysis__free(a);
	return NULL;
}

void gctx_analysis__free(struct gctx_analysis *a)
{
	if (!a)
		return;
	for (__u32 i = 0; i < a->ninc; i++) {
		free(a->inc[i].findings);
		free(a->inc[i].pids);
		free(a->inc[i].pid_gen);
		free(a->inc[i].members);
	}
	free(a->inc);
	free(a->finding_inc);
	free(a->gpu_init);
	free(a);
}

__u32 gctx_analysis__nincidents(const struct gctx_analysis *a)
{
	return a ? a->ninc : 0;
}

const struct gctx_incident *gctx_analysis__incident(const struct gctx_analysis *a, __u32 i)
{
	return a && i < a->ninc ? &a->inc[i] : NULL;
}

const struct gctx_job_summary *gctx_analysis__summary(const struct gctx_analysis *a)
{
	return &a->sum;
}

__u32 gctx_analysis__incident_of(const struct gctx_analysis *a, __u32 finding_id)
{
	if (!a || !finding_id || finding_id > gctx_model__nfindings(a->m))
		return 0;
	return a->finding_inc[finding_id - 1];
}

__s64 gctx_analysis__gpu_init_ns(const struct gctx_analysis *a, __u32 proc_idx)
{
	if (!a || proc_idx >= gctx_model__nprocs(a->m))
		return -1;
	return a->gpu_init[proc_idx];
}

__u32 gctx_analysis__count_at(const struct gctx_analysis *a, enum gctx_severity min)
{
	__u32 n = 0;

	for (__u32 i = 0; a && i < a->ninc; i++)
		n += a->inc[i].severity >= min;
	return n;
}

const char *gctx_site_role_name(enum gctx_site_role r)
{
	static const char *const names[GCTX_SITE_MAX] = {
	    [GCTX_SITE_INIT] = "GPU initialised",
	    [GCTX_SITE_FORK] = "forked",
	    [GCTX_SITE_USE] = "first used",
	};

	return (unsigned)r < GCTX_SITE_MAX ? names[r] : "?";
}

const char *gctx_incident_kind_name(enum gctx_incident_kind k)
{
	static const char *const names[] = {
	    [GCTX_INC_POISON_FORK] = "poison-fork",
	    [GCTX_INC_FORK_INHERIT] = "fork-with-gpu-state",
	    [GCTX_INC_FOREIGN_USE] = "foreign-gpu-use",
	    [GCTX_INC_FD_ACROSS_EXEC] = "gpu-fd-across-exec",
	    [GCTX_INC_SPAWN_STARTUP] = "spawn-startup-failure",
	    [GCTX_INC_API_ERRORS] = "api-errors",
	};

	return (unsigned)k < GCTX_INC_MAX ? names[k] : "?";
}

const char *gctx_incident_title(enum gctx_incident_kind k)
{
	static const char *const titles[] = {
	    [GCTX_INC_POISON_FORK] = "POISON FORK",
	    [GCTX_INC_FORK_INHERIT] = "GPU STATE INHERITED",
	    [GCTX_INC_FOREIGN_USE] = "FOREIGN GPU USE",
	    [GCTX_INC_FD_ACROSS_EXEC] = "GPU FD KEPT ACROSS EXEC",
	    [GCTX_INC_SPAWN_STARTUP] = "SPAWNED WORKERS FAILED",
	    [GCTX_INC_API_ERRORS] = "API CALLS FAILED",
	};

	return (unsigned)k < GCTX_INC_MAX ? titles[k] : "?";
}
