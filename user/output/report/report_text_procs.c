// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Processes section of the text report: the process tree, and under each process the GPU
 * files it held, the objects it created on them (as RM trees) and its API contexts.
 *
 * Process and object trees are walked with an explicit stack (a fork chain can be thousands
 * deep) and a visited mark per node, so an inconsistent model (a cycle, a child listed twice)
 * can neither loop nor hide a process: whatever the walk from the roots missed is printed
 * afterwards as a root of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "decode/api.h"
#include "decode/decode.h"
#include "output/report/print.h"
#include "output/report/report_priv.h"

#define REP_MAX_INDENT	  32 /* tree levels indented; deeper lines show their depth */
#define REP_MAX_OBJ_LINES 64 /* objects listed per process and file */
#define REP_MAX_KOBJS	  32 /* kernel objects listed per API context */
#define REP_MAX_CUR_TIDS  16 /* threads listed per API context */
#define REP_MAX_CUR_TIMES 8  /* times listed per thread and API context */

/*
 * The argv a process runs with, for the text report: its own (rep_proc_argv), else that of
 * the nearest ancestor at the time of the fork, since a forked child that did not exec runs
 * its parent's program with the parent's argv. The walk up is bounded.
 */
static void rep_proc_argv_inherited(const struct gctx_model *m, const struct gctx_proc *p,
				    const char **args, __u32 *len)
{
	const struct gctx_proc *q = p, *up;
	__u64 at = p->start_ns;
	__u32 hops, i;

	rep_proc_argv(p, args, len);
	for (hops = 0; !*len && hops < 64; hops++) {
		up = rep_proc(m, q->parent_idx);
		if (!up || up == p)
			return;
		for (i = up->execs ? up->nexecs : 0; i-- > 0;) {
			if (!at || up->execs[i].ts_ns <= at) {
				*args = up->execs[i].args;
				*len = up->execs[i].args_len;
				break;
			}
		}
		if (!*len && up->args_len) {
			*args = up->args;
			*len = up->args_len;
		}
		if (*len > GCTX_ARGS_LEN)
			*len = GCTX_ARGS_LEN;
		if (up->start_ns)
			at = up->start_ns;
		q = up;
	}
}

/* Indentation for tree level depth; deep levels stop indenting and show their depth. */
static void rep_text_indent(struct rep_ctx *c, __u32 depth)
{
	__u32 shown = depth < REP_MAX_INDENT ? depth : REP_MAX_INDENT;

	fprintf(c->out, "%*s", (int)(2 * shown), "");
	if (depth > REP_MAX_INDENT)
		fprintf(c->out, "[depth %u] ", depth);
}

void rep_text_detail_prefix(struct rep_ctx *c, __u32 depth)
{
	rep_text_indent(c, depth);
	fputs("  | ", c->out);
}

/* Thread names other than the process's, each once (prctl names: pt_autograd_0, ...). */
static void rep_text_thread_names(struct rep_ctx *c, const struct gctx_proc *p)
{
	char comm[GCTX_ESC_SIZE(GCTX_COMM_LEN)];
	__u32 shown = 0;

	for (__u32 i = 0; i < p->nthreads; i++) {
		const char *n = p->threads[i].comm;
		bool seen = !n[0] || !strncmp(n, p->comm, GCTX_COMM_LEN);

		for (__u32 k = 0; k < i && !seen; k++)
			seen = !strncmp(p->threads[k].comm, n, GCTX_COMM_LEN);
		if (seen)
			continue;
		if (shown == 6) {
			fputs(", ...", c->out);
			break;
		}
		gctx_format_str(comm, sizeof(comm), n, GCTX_COMM_LEN);
		fprintf(c->out, "%s%s", shown++ ? ", " : ": ", comm);
	}
}

static void rep_text_proc_line(struct rep_ctx *c, const struct gctx_proc *p, __u32 depth)
{
	char comm[GCTX_ESC_SIZE(GCTX_COMM_LEN)], argv[GCTX_ESC_SIZE(GCTX_ARGS_LEN)];
	char exe[GCTX_ESC_SIZE(GCTX_PATH_LEN)], sig[32], t[32];
	const char *args, *sep = " (";
	__u32 len;

	rep_text_indent(c, depth);
	fprintf(c->out, "%u ", p->pid);
	/* the names this program went by, oldest first: python3 -> pt_data_worker */
	for (__u32 i = p->ncomm_at_exec; i < p->ncomm_prev && i < GCTX_COMM_HIST; i++) {
		gctx_format_str(comm, sizeof(comm), p->comm_prev[i], GCTX_COMM_LEN);
		fprintf(c->out, "%s -> ", comm);
	}
	gctx_format_str(comm, sizeof(comm), p->comm, GCTX_COMM_LEN);
	fprintf(c->out, "%s", comm[0] ? comm : "?");
	rep_proc_argv_inherited(c->m, p, &args, &len);
	gctx_format_argv(argv, sizeof(argv), args, len);
	if (!argv[0])
		gctx_format_str(argv, sizeof(argv), rep_proc_exe(p), GCTX_PATH_LEN);
	if (argv[0])
		fprintf(c->out, " [%s]", argv);

	if (p->exited) {
		rep_text_time(t, sizeof(t), c, p->exit_ns);
		if (p->signal) {
			gctx_format_signal(sig, sizeof(sig), p->signal);
			fprintf(c->out, " killed by %s%s", sig,
				p->core_dumped ? " (core dumped)" : "");
		} else {
			fprintf(c->out, " exit %d", p->exit_code);
		}
		fprintf(c->out, " at %s", t);
	} else {
		fputs(" running", c->out);
	}

	if (p->present_at_attach) {
		fprintf(c->out, "%spresent at attach", sep);
		sep = ", ";
	}
	if (p->parent_idx < 0 && p->ppid) {
		fprintf(c->out, "%sppid %u", sep, p->ppid);
		sep = ", ";
	}
	if (p->nthreads > 1) {
		fprintf(c->out, "%s%u threads", sep, p->nthreads);
		sep = ", ";
		rep_text_thread_names(c, p);
	}
	if (p->nexecs) {
		fprintf(c->out, "%s%u exec%s", sep, p->nexecs, rep_plural(p->nexecs));
		sep = ", ";
	}
	if (p->nexecs > 1) {
		gctx_format_str(exe, sizeof(exe), p->execs[0].filename, GCTX_PATH_LEN);
		fprintf(c->out, ", first %s", exe);
	}
	if (c->an && gctx_analysis__gpu_init_ns(c->an, p->idx) >= 0) {
		/* seed 002: how long it took to get to the GPU */
		fprintf(c->out, "%sGPU %.3f s after start", sep,
			gctx_analysis__gpu_init_ns(c->an, p->idx) / 1e9);
		sep = ", ";
	}
	fputs(sep[0] == ',' ? ")\n" : "\n", c->out);
}

static void rep_text_holder(struct rep_ctx *c, const struct gctx_gpu_file *f,
			    const struct gctx_holder *h, __u32 depth)
{
	char path[GCTX_ESC_SIZE(GCTX_PATH_LEN)], t[32];
	const struct gctx_proc *from;
	__u32 i;

	rep_text_detail_prefix(c, depth);
	gctx_format_str(path, sizeof(path), f->path, GCTX_PATH_LEN);
	fprintf(c->out, "file #%u %s %s", f->id, gctx_dev_kind_name(f->kind), path);
	for (i = 0; i < h->nfds && i < 8; i++)
		fprintf(c->out, "%s%d", i ? "," : (h->nfds > 1 ? " fds=" : " fd="), h->fds[i]);

	rep_text_time(t, sizeof(t), c, h->since_ns);
	switch (h->how) {
	case GCTX_HOLD_OPENED:
		fprintf(c->out, ": opened at %s", t);
		break;
	case GCTX_HOLD_INHERITED:
		from = rep_proc(c->m, h->from_proc_idx);
		if (from)
			fprintf(c->out, ": inherited from %u at %s", from->pid, t);
		else
			fprintf(c->out, ": inherited at %s", t);
		break;
	case GCTX_HOLD_RECEIVED:
		fprintf(c->out, ": received at %s", t);
		break;
	case GCTX_HOLD_PRESENT:
		fputs(": present-at-attach", c->out);
		break;
	default:
		fprintf(c->out, ": %s", gctx_hold_how_name(h->how));
		break;
	}
	fprintf(c->out, ", %llu ioctl%s, %llu mmap%s", (unsigned long long)h->nioctls,
		rep_plural(h->nioctls), (unsigned long long)h->nmmaps, rep_plural(h->nmmaps));
	if (h->kept_across_exec)
		fputs(", kept across exec", c->out);
	if (h->held) {
		fputs(", still open\n", c->out);
	} else {
		rep_text_time(t, sizeof(t), c, h->until_ns);
		fprintf(c->out, ", closed at %s\n", t);
	}
}

static void rep_text_obj_line(struct rep_ctx *c, const struct gctx_gpu_obj *o, __u32 pdepth,
			      __u32 odepth, __u32 creator, __u32 file_id)
{
	const struct gctx_gpu_obj *parent = NULL;
	const char *cname;
	char t[32];

	rep_text_detail_prefix(c, pdepth);
	fprintf(c->out, "  %*s%s 0x%llx", (int)(2 * (odepth < 16 ? odepth : 16)), "",
		gctx_obj_kind_name(o->kind), (unsigned long long)o->handle);
	if (o->cls) {
		cname = gctx_nv_class_name(o->cls);
		if (cname)
			fprintf(c->out, " (%s)", cname);
		else
			fprintf(c->out, " (class 0x%x)", o->cls);
	}
	if (o->size)
		fprintf(c->out, " size=%llu", (unsigned long long)o->size);
	if (o->parent_obj >= 0 && (__u32)o->parent_obj < c->ix.nobjs)
		parent = gctx_model__obj(c->m, (__u32)o->parent_obj);
	if (parent && (parent->creator_idx != creator || parent->file_id != file_id)) {
		const struct gctx_proc *pp = rep_proc(c->m, parent->creator_idx);

		fprintf(c->out, " under %s 0x%llx", gctx_obj_kind_name(parent->kind),
			(unsigned long long)parent->handle);
		if (pp && parent->creator_idx != creator)
			fprintf(c->out, " of pid %u", pp->pid);
		if (parent->file_id != file_id)
			fprintf(c->out, " on file #%u", parent->file_id);
	}
	if (o->destroyed) {
		rep_text_time(t, sizeof(t), c, o->destroy_ns);
		fprintf(c->out, ", destroyed at %s\n", t);
	} else {
		fputs(", alive\n", c->out);
	}
}

/* Is object idx a root of the (creator, file) group: no parent inside the group. */
static bool rep_obj_is_group_root(struct rep_ctx *c, const struct gctx_gpu_obj *o, __u32 idx)
{
	const struct gctx_gpu_obj *parent;

	if (o->parent_obj < 0 || (__u32)o->parent_obj >= c->ix.nobjs || (__u32)o->parent_obj == idx)
		return true;
	parent = gctx_model__obj(c->m, (__u32)o->parent_obj);
	return !parent || parent->creator_idx != o->creator_idx || parent->file_id != o->file_id;
}

/* Walk the RM subtree at root inside the group; returns lines left to print. */
static __u32 rep_text_obj_tree(struct rep_ctx *c, __u32 root, __u32 pdepth, __u32 budget)
{
	struct rep_index *ix = &c->ix;
	__u32 top = 0, k, i;

	ix->obj_seen[root] = 1;
	ix->ostack[top] = root;
	ix->ostack_depth[top++] = 0;
	while (top && budget) {
		const struct gctx_gpu_obj *o;
		__u32 idx, d;

		top--;
		idx = ix->ostack[top];
		d = ix->ostack_depth[top];
		o = gctx_model__obj(c->m, idx);

		if (!o)
			continue;
		rep_text_obj_line(c, o, pdepth, d, o->creator_idx, o->file_id);
		budget--;
		for (k = ix->kid_off[idx + 1]; k-- > ix->kid_off[idx];) {
			const struct gctx_gpu_obj *kid;

			i = ix->kids[k];
			kid = gctx_model__obj(c->m, i);
			if (ix->obj_seen[i] || !kid || kid->creator_idx != o->creator_idx ||
			    kid->file_id != o->file_id)
				continue;
			ix->obj_seen[i] = 1;
			ix->ostack[top] = i;
			ix->ostack_depth[top++] = d + 1;
		}
	}
	return budget;
}

static void rep_text_proc_objs(struct rep_ctx *c, __u32 pidx, __u32 depth)
{
	struct rep_index *ix = &c->ix;
	__u32 b = ix->obj_off[pidx], e = ix->obj_off[pidx + 1], g, k, i, budget, pass;

	for (g = b; g < e; g = k) {
		__u32 file_id = ix->objs[g].file_id, alive = 0, shown;
		const struct gctx_gpu_file *f = rep_file_by_id(c->m, file_id);

		for (k = g; k < e && ix->objs[k].file_id == file_id; k++) {
			const struct gctx_gpu_obj *o = gctx_model__obj(c->m, ix->objs[k].obj_idx);

			alive += o && !o->destroyed;
		}
		rep_text_detail_prefix(c, depth);
		fprintf(c->out, "objects created on file #%u %s: %u (%u alive)\n", file_id,
			f ? gctx_dev_kind_name(f->kind) : "?", k - g, alive);

		/* Whole RM subtrees from the group roots first, then anything a cycle hid. */
		budget = REP_MAX_OBJ_LINES;
		for (pass = 0; pass < 2; pass++) {
			for (i = g; i < k && budget; i++) {
				__u32 idx = ix->objs[i].obj_idx;
				const struct gctx_gpu_obj *o = gctx_model__obj(c->m, idx);

				if (!o || ix->obj_seen[idx])
					continue;
				if (!pass && !rep_obj_is_group_root(c, o, idx))
					continue;
				budget = rep_text_obj_tree(c, idx, depth, budget);
			}
		}
		shown = REP_MAX_OBJ_LINES - budget;
		if (shown < k - g) {
			rep_text_detail_prefix(c, depth);
			fprintf(c->out,
				"  ... %u more object%s on file #%u not listed (see JSON)\n",
				k - g - shown, rep_plural(k - g - shown), file_id);
		}
	}
}

/* "512 B", "2 MiB", "1.5 GiB" */
static void rep_text_bytes(char *dst, size_t len, __u64 b)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	__u64 unit = 1024;
	__u32 u = 0;

	if (b < 1024) {
		snprintf(dst, len, "%llu B", (unsigned long long)b);
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && b / 1024 >= unit) {
		unit *= 1024;
		u++;
	}
	if (b % unit == 0)
		snprintf(dst, len, "%llu %s", (unsigned long long)(b / unit), units[u]);
	else
		snprintf(dst, len, "%.1f %s", (double)b / (double)unit, units[u]);
}

static int rep_u32_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* "  kernel view: rm-channel-group 0x5c000010, rm-ctxshare 0x5c000011" in creation order. */
static void rep_text_api_kobjs(struct rep_ctx *c, const struct gctx_api_ctx *x, __u32 depth)
{
	__u32 *idx, i, shown = 0;

	rep_text_detail_prefix(c, depth);
	fputs("  kernel view:", c->out);
	if (!x->nkobjs || !x->kobjs) {
		fputs(" none created during the call\n", c->out);
		return;
	}
	idx = malloc(x->nkobjs * sizeof(*idx));
	if (idx) {
		memcpy(idx, x->kobjs, x->nkobjs * sizeof(*idx));
		qsort(idx, x->nkobjs, sizeof(*idx), rep_u32_cmp);
	}
	for (i = 0; i < x->nkobjs && shown < REP_MAX_KOBJS; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(c->m, idx ? idx[i] : x->kobjs[i]);

		if (!o)
			continue;
		fprintf(c->out, "%s %s 0x%llx", shown ? "," : "", gctx_obj_kind_name(o->kind),
			(unsigned long long)o->handle);
		shown++;
	}
	if (shown < x->nkobjs)
		fprintf(c->out, "%s ... %u more (see JSON)", shown ? "," : "", x->nkobjs - shown);
	fputc('\n', c->out);
	free(idx);
}

struct rep_cur_ref {
	__u32 tid;
	__u32 i; /* index in currents */
	__u64 ts_ns;
};

/* by thread, then in time (a thread's latest times replace one another in place) */
static int rep_cur_ref_cmp(const void *a, const void *b)
{
	const struct rep_cur_ref *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* "  tid 123: current at 0.001200 (cuCtxSetCurrent), 0.003000 (cuCtxPushCurrent)" */
static void rep_text_api_currents(struct rep_ctx *c, const struct gctx_api_ctx *x, __u32 depth)
{
	struct rep_cur_ref *r;
	__u32 i, k, e, ntids = 0;
	char t[32];

	if (!x->ncurrents || !x->currents)
		return;
	r = malloc(x->ncurrents * sizeof(*r));
	if (!r)
		return;
	for (i = 0; i < x->ncurrents; i++) {
		r[i].tid = x->currents[i].tid;
		r[i].i = i;
		r[i].ts_ns = x->currents[i].ts_ns;
	}
	qsort(r, x->ncurrents, sizeof(*r), rep_cur_ref_cmp);
	for (i = 0; i < x->ncurrents; i = e) {
		for (e = i; e < x->ncurrents && r[e].tid == r[i].tid; e++)
			;
		if (++ntids > REP_MAX_CUR_TIDS)
			continue;
		rep_text_detail_prefix(c, depth);
		fprintf(c->out, "  tid %u: current at", r[i].tid);
		for (k = i; k < e && k - i < REP_MAX_CUR_TIMES; k++) {
			const struct gctx_ctx_current *cu = &x->currents[r[k].i];

			rep_text_time(t, sizeof(t), c, cu->ts_ns);
			fprintf(c->out, "%s %s (%s)", k > i ? "," : "", t,
				gctx_api_fn_name(cu->fn));
		}
		if (e - i > REP_MAX_CUR_TIMES)
			fprintf(c->out, ", ... %u more", e - i - REP_MAX_CUR_TIMES);
		fputc('\n', c->out);
	}
	if (ntids > REP_MAX_CUR_TIDS) {
		rep_text_detail_prefix(c, depth);
		fprintf(c->out, "  ... %u more thread%s made it current (see JSON)\n",
			ntids - REP_MAX_CUR_TIDS, rep_plural(ntids - REP_MAX_CUR_TIDS));
	}
	if (x->ncurrents_dropped) {
		rep_text_detail_prefix(c, depth);
		fprintf(c->out,
			"  ... %llu more time%s left out (kept: each thread's first and latest %u, "
			"%u threads)\n",
			(unsigned long long)x->ncurrents_dropped, rep_plural(x->ncurrents_dropped),
			GCTX_CUR_LATEST, GCTX_CUR_TIDS);
	}
	free(r);
}

static void rep_text_api_ctx(struct rep_ctx *c, const struct gctx_proc *p,
			     const struct gctx_api_ctx *x, __u32 depth)
{
	char t[32], live[32], total[32];

	const char *kind = x->primary ? " primary" : "";

	if (x->green)
		kind = " green";
	rep_text_detail_prefix(c, depth);
	fprintf(c->out, "ctx #%u %s%s", x->id, x->vendor == GCTX_VENDOR_HIP ? "HIP" : "CUDA", kind);
	if (x->device >= 0)
		fprintf(c->out, " device %d", x->device);
	else
		fputs(" device ?", c->out);
	if (x->handle)
		fprintf(c->out, " handle 0x%llx", (unsigned long long)x->handle);
	else
		fputs(" (implicit, no handle)", c->out);
	rep_text_time(t, sizeof(t), c, x->create_ns);
	fprintf(c->out, " created by tid %u at %s (%s)", x->creator_tid, t,
		gctx_api_fn_name(x->create_fn));
	if (x->destroyed) {
		rep_text_time(t, sizeof(t), c, x->destroy_ns);
		fprintf(c->out, ", destroyed at %s", t);
	} else if (p->exited) {
		rep_text_time(t, sizeof(t), c, p->exit_ns);
		fprintf(c->out, ", alive until exit at %s", t);
	} else {
		fputs(", alive", c->out);
	}
	rep_text_bytes(live, sizeof(live), x->mem_live);
	rep_text_bytes(total, sizeof(total), x->mem_total);
	fprintf(c->out, ", %s live / %s total in %llu allocation%s, %llu launch%s\n", live, total,
		(unsigned long long)x->nallocs, rep_plural(x->nallocs),
		(unsigned long long)x->launches, x->launches == 1 ? "" : "es");
	rep_text_api_kobjs(c, x, depth);
	rep_text_api_currents(c, x, depth);
}

/* The process's API view: calls, the contexts it created, memory outside any context. */
static void rep_text_proc_api(struct rep_ctx *c, const struct gctx_proc *p, __u32 depth)
{
	struct rep_api_index *ax = &c->ax;
	__u64 calls = gctx_model__api_calls(c->m, p->idx);
	__u32 k, b, e;
	char live[32], total[32];

	if (p->idx >= ax->nprocs)
		return;
	b = ax->ctx_off[p->idx];
	e = ax->ctx_off[p->idx + 1];
	if (!calls && b == e && !ax->loose_n[p->idx])
		return;
	rep_text_detail_prefix(c, depth);
	fprintf(c->out, "API calls: %llu, %u context%s\n", (unsigned long long)calls, e - b,
		rep_plural(e - b));
	rep_text_api_callers(c, p, depth);
	for (k = b; k < e; k++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(c->m, ax->ctxs[k]);

		if (x)
			rep_text_api_ctx(c, p, x, depth);
	}
	if (ax->loose_n[p->idx]) {
		rep_text_bytes(live, sizeof(live), ax->loose_live[p->idx]);
		rep_text_bytes(total, sizeof(total), ax->loose_total[p->idx]);
		rep_text_detail_prefix(c, depth);
		fprintf(c->out,
			"API memory with no current context: %s live / %s total in %llu "
			"allocation%s\n",
			live, total, (unsigned long long)ax->loose_n[p->idx],
			rep_plural(ax->loose_n[p->idx]));
	}
}

static void rep_text_proc(struct rep_ctx *c, __u32 pidx, __u32 depth)
{
	const struct gctx_proc *p = gctx_model__proc(c->m, pidx);
	struct rep_index *ix = &c->ix;
	__u32 k;

	if (!p)
		return;
	rep_text_proc_line(c, p, depth);
	for (k = ix->hold_off[pidx]; k < ix->hold_off[pidx + 1]; k++) {
		const struct gctx_gpu_file *f = gctx_model__file(c->m, ix->holds[k].file_idx);

		if (f && ix->holds[k].holder_idx < f->nholders)
			rep_text_holder(c, f, &f->holders[ix->holds[k].holder_idx], depth);
	}
	rep_text_proc_objs(c, pidx, depth);
	rep_text_proc_api(c, p, depth);
}

/* Pre-order walk from root, children in fork order; the stack holds each process once. */
static void rep_text_proc_tree(struct rep_ctx *c, __u32 root)
{
	struct rep_index *ix = &c->ix;
	__u32 top = 0, k;

	ix->proc_seen[root] = 1;
	ix->stack[top] = root;
	ix->stack_depth[top++] = 0;
	while (top) {
		const struct gctx_proc *p;
		__u32 idx, d;

		top--;
		idx = ix->stack[top];
		d = ix->stack_depth[top];
		p = gctx_model__proc(c->m, idx);

		if (!p)
			continue;
		rep_text_proc(c, idx, d);
		for (k = p->nchildren; p->children && k-- > 0;) {
			__u32 kid = p->children[k];

			if (kid >= ix->nprocs || ix->proc_seen[kid])
				continue;
			ix->proc_seen[kid] = 1;
			ix->stack[top] = kid;
			ix->stack_depth[top++] = d + 1;
		}
	}
}

void rep_text_procs(struct rep_ctx *c)
{
	struct rep_index *ix = &c->ix;
	__u32 i;

	fprintf(c->out, "Processes (%u):\n", ix->nprocs);
	if (!ix->nprocs)
		fputs("  none traced\n", c->out);
	for (i = 0; i < ix->nprocs; i++) {
		const struct gctx_proc *p = gctx_model__proc(c->m, i);

		if (p && !ix->proc_seen[i] && !rep_proc(c->m, p->parent_idx))
			rep_text_proc_tree(c, i);
	}
	/* Only an inconsistent model leaves any: show them rather than lose them. */
	for (i = 0; i < ix->nprocs; i++) {
		if (!ix->proc_seen[i])
			rep_text_proc_tree(c, i);
	}
	fputc('\n', c->out);
}
