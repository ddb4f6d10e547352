// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Post-mortem report: text for people, JSON for tools. Both only read the model.
 *
 * This file holds what both share: the lookups built once per report (processes, files,
 * objects and API contexts by their owner, sorted), the names and first bytes of probes, and
 * the small process, file and output helpers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/report/report_priv.h"

#define REP_ENDBR64_LEN 4 /* f3 0f 1e fa */

void rep_index__free(struct rep_index *ix)
{
	free(ix->hold_off);
	free(ix->holds);
	free(ix->obj_off);
	free(ix->objs);
	free(ix->kid_off);
	free(ix->kids);
	free(ix->stack);
	free(ix->stack_depth);
	free(ix->ostack);
	free(ix->ostack_depth);
	free(ix->proc_seen);
	free(ix->obj_seen);
	memset(ix, 0, sizeof(*ix));
}

static int rep_obj_ref_cmp(const void *a, const void *b)
{
	const struct rep_obj_ref *x = a, *y = b;

	if (x->file_id != y->file_id)
		return x->file_id < y->file_id ? -1 : 1;
	if (x->obj_idx != y->obj_idx)
		return x->obj_idx < y->obj_idx ? -1 : 1;
	return 0;
}

/* Turn per-node counts in off[1..n] into offsets and return a cursor array (in cur). */
static void rep_prefix_sum(__u32 *off, __u32 n, __u32 *cur)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		off[i + 1] += off[i];
		cur[i] = off[i];
	}
}

int rep_index__build(struct rep_index *ix, const struct gctx_model *m)
{
	__u32 i, k, nholds = 0, n;

	memset(ix, 0, sizeof(*ix));
	ix->nprocs = gctx_model__nprocs(m);
	ix->nfiles = gctx_model__nfiles(m);
	ix->nobjs = gctx_model__nobjs(m);

	ix->hold_off = calloc(ix->nprocs + 1, sizeof(*ix->hold_off));
	ix->obj_off = calloc(ix->nprocs + 1, sizeof(*ix->obj_off));
	ix->kid_off = calloc(ix->nobjs + 1, sizeof(*ix->kid_off));
	ix->stack = calloc(ix->nprocs + 1, sizeof(*ix->stack));
	ix->stack_depth = calloc(ix->nprocs + 1, sizeof(*ix->stack_depth));
	ix->ostack = calloc(ix->nobjs + 1, sizeof(*ix->ostack));
	ix->ostack_depth = calloc(ix->nobjs + 1, sizeof(*ix->ostack_depth));
	ix->proc_seen = calloc(ix->nprocs + 1, 1);
	ix->obj_seen = calloc(ix->nobjs + 1, 1);
	if (!ix->hold_off || !ix->obj_off || !ix->kid_off || !ix->stack || !ix->stack_depth ||
	    !ix->ostack || !ix->ostack_depth || !ix->proc_seen || !ix->obj_seen)
		goto err_nomem;

	/* Holder records by process. */
	for (i = 0; i < ix->nfiles; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		for (k = 0; f && k < f->nholders; k++) {
			if (f->holders[k].proc_idx < ix->nprocs) {
				ix->hold_off[f->holders[k].proc_idx + 1]++;
				nholds++;
			}
		}
	}
	ix->holds = calloc(nholds + 1, sizeof(*ix->holds));
	if (!ix->holds)
		goto err_nomem;
	rep_prefix_sum(ix->hold_off, ix->nprocs, ix->stack);
	for (i = 0; i < ix->nfiles; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		for (k = 0; f && k < f->nholders; k++) {
			__u32 p = f->holders[k].proc_idx;

			if (p >= ix->nprocs)
				continue;
			ix->holds[ix->stack[p]].file_idx = i;
			ix->holds[ix->stack[p]].holder_idx = k;
			ix->stack[p]++;
		}
	}

	/* Objects by creator, then RM children by parent. */
	ix->objs = calloc(ix->nobjs + 1, sizeof(*ix->objs));
	ix->kids = calloc(ix->nobjs + 1, sizeof(*ix->kids));
	if (!ix->objs || !ix->kids)
		goto err_nomem;
	for (i = 0; i < ix->nobjs; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (!o)
			continue;
		if (o->creator_idx < ix->nprocs)
			ix->obj_off[o->creator_idx + 1]++;
		if (o->parent_obj >= 0 && (__u32)o->parent_obj < ix->nobjs &&
		    (__u32)o->parent_obj != i)
			ix->kid_off[o->parent_obj + 1]++;
	}
	rep_prefix_sum(ix->obj_off, ix->nprocs, ix->stack);
	for (i = 0; i < ix->nobjs; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (!o || o->creator_idx >= ix->nprocs)
			continue;
		ix->objs[ix->stack[o->creator_idx]].file_id = o->file_id;
		ix->objs[ix->stack[o->creator_idx]].obj_idx = i;
		ix->stack[o->creator_idx]++;
	}
	for (i = 0; i < ix->nprocs; i++) {
		n = ix->obj_off[i + 1] - ix->obj_off[i];
		if (n > 1)
			qsort(ix->objs + ix->obj_off[i], n, sizeof(*ix->objs), rep_obj_ref_cmp);
	}
	rep_prefix_sum(ix->kid_off, ix->nobjs, ix->ostack);
	for (i = 0; i < ix->nobjs; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (!o || o->parent_obj < 0 || (__u32)o->parent_obj >= ix->nobjs ||
		    (__u32)o->parent_obj == i)
			continue;
		ix->kids[ix->ostack[o->parent_obj]++] = i;
	}
	return 0;

err_nomem:
	rep_index__free(ix);
	return -ENOMEM;
}

void rep_api_index__free(struct rep_api_index *ax)
{
	free(ax->ctx_off);
	free(ax->ctxs);
	free(ax->loose_live);
	free(ax->loose_total);
	free(ax->loose_n);
	memset(ax, 0, sizeof(*ax));
}

int rep_api_index__build(struct rep_api_index *ax, const struct gctx_model *m)
{
	__u32 i, n, *cur;

	memset(ax, 0, sizeof(*ax));
	ax->nprocs = gctx_model__nprocs(m);
	ax->nctxs = gctx_model__nctxs(m);
	ax->ctx_off = calloc(ax->nprocs + 1, sizeof(*ax->ctx_off));
	ax->ctxs = calloc(ax->nctxs + 1, sizeof(*ax->ctxs));
	ax->loose_live = calloc(ax->nprocs + 1, sizeof(*ax->loose_live));
	ax->loose_total = calloc(ax->nprocs + 1, sizeof(*ax->loose_total));
	ax->loose_n = calloc(ax->nprocs + 1, sizeof(*ax->loose_n));
	cur = calloc(ax->nprocs + 1, sizeof(*cur));
	if (!ax->ctx_off || !ax->ctxs || !ax->loose_live || !ax->loose_total || !ax->loose_n ||
	    !cur) {
		free(cur);
		rep_api_index__free(ax);
		return -ENOMEM;
	}
	for (i = 0; i < ax->nctxs; i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, i);

		if (x && x->creator_idx < ax->nprocs)
			ax->ctx_off[x->creator_idx + 1]++;
	}
	rep_prefix_sum(ax->ctx_off, ax->nprocs, cur);
	for (i = 0; i < ax->nctxs; i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, i);

		if (x && x->creator_idx < ax->nprocs)
			ax->ctxs[cur[x->creator_idx]++] = i;
	}
	free(cur);
	n = gctx_model__nmems(m);
	for (i = 0; i < n; i++) {
		const struct gctx_api_mem *mm = gctx_model__mem(m, i);

		if (!mm || mm->ctx_id || mm->proc_idx >= ax->nprocs)
			continue;
		ax->loose_n[mm->proc_idx]++;
		ax->loose_total[mm->proc_idx] += mm->size;
		if (!mm->freed)
			ax->loose_live[mm->proc_idx] += mm->size;
	}
	return 0;
}

const char *rep_probe_how_name(__u32 how)
{
	switch (how) {
	case GCTX_PROBE_SYMBOL:
		return "symbol";
	case GCTX_PROBE_PROC_ADDRESS:
		return "cuGetProcAddress";
	case GCTX_PROBE_REFUSED:
		return "refused";
	case GCTX_PROBE_NOT_PRERESOLVED:
		return "not-pre-resolved";
	default:
		return "unknown";
	}
}

bool rep_probe_endbr64_skipped(const struct gctx_rec_probe *r)
{
	return r->offset == r->sym_offset + REP_ENDBR64_LEN;
}

/*
 * How the kernel runs the probed instruction (x86-64): push, jmp/call and the 5-byte nop are
 * emulated or rewritten (~1 us a hit here); anything else is single-stepped out of line
 * (~10 us). The bytes are the function's first, so the probed instruction starts 4 bytes in
 * when an endbr64 was skipped.
 */
const char *rep_probe_execution(const struct gctx_rec_probe *r)
{
	static const __u8 nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
	__u64 at = r->offset - r->sym_offset;
	const __u8 *b;

	if (at > 4 || (at == 4 && !rep_probe_endbr64_skipped(r)))
		return "unknown";
	b = r->insn + at;
	if ((b[0] >= 0x50 && b[0] <= 0x57) || (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57) ||
	    b[0] == 0xe8 || b[0] == 0xe9 || b[0] == 0xeb)
		return "emulated";
	if (at == 0 && !memcmp(b, nop5, sizeof(nop5)))
		return "optimized";
	return "single-stepped";
}

/* The first bytes of a probed function as hex, sep between bytes ("" or " "). */
void rep_probe_insn(char *dst, size_t len, const struct gctx_rec_probe *r, const char *sep)
{
	size_t off = 0;
	__u32 i;

	dst[0] = '\0';
	for (i = 0; i < sizeof(r->insn) && off < len; i++) {
		int w = snprintf(dst + off, len - off, "%s%02x", i ? sep : "", r->insn[i]);

		if (w < 0)
			break;
		off += (size_t)w;
	}
}

int rep_finish(FILE *out)
{
	if (fflush(out) == EOF)
		return errno ? -errno : -EIO;
	if (ferror(out))
		return -EIO;
	return 0;
}

const struct gctx_gpu_file *rep_file_by_id(const struct gctx_model *m, __u32 id)
{
	const struct gctx_gpu_file *f;
	__u32 i, n = gctx_model__nfiles(m);

	if (!id)
		return NULL;
	if (id - 1 < n) {
		f = gctx_model__file(m, id - 1);
		if (f && f->id == id)
			return f;
	}
	for (i = 0; i < n; i++) {
		f = gctx_model__file(m, i);
		if (f && f->id == id)
			return f;
	}
	return NULL;
}

const struct gctx_proc *rep_proc(const struct gctx_model *m, __s64 idx)
{
	if (idx < 0 || idx >= gctx_model__nprocs(m))
		return NULL;
	return gctx_model__proc(m, (__u32)idx);
}

/* The argv to show for a process: its last exec, else what was read at attach. */
void rep_proc_argv(const struct gctx_proc *p, const char **args, __u32 *len)
{
	*args = NULL;
	*len = 0;
	if (p->nexecs && p->execs) {
		*args = p->execs[p->nexecs - 1].args;
		*len = p->execs[p->nexecs - 1].args_len;
	} else if (p->args_len) {
		*args = p->args;
		*len = p->args_len;
	}
	if (*len > GCTX_ARGS_LEN)
		*len = GCTX_ARGS_LEN;
}

const char *rep_proc_exe(const struct gctx_proc *p)
{
	if (p->nexecs && p->execs)
		return p->execs[p->nexecs - 1].filename;
	return p->exe;
}

__u64 rep_drops_total(const struct gctx_rec_drops *d)
{
	__u64 total = 0;
	__u32 t;

	for (t = 1; d && t < GCTX_EV_KERNEL_MAX; t++)
		total += d->drops[t];
	return total;
}
