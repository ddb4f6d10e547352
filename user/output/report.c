// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Post-mortem report: text for people, JSON for tools. Both only read the model.
 *
 * Process and object trees are walked with an explicit stack (a fork chain can be thousands
 * deep) and a visited mark per node, so an inconsistent model (a cycle, a child listed twice)
 * can neither loop nor hide a process: whatever the walk from the roots missed is printed
 * afterwards as a root of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/api.h"
#include "decode/decode.h"
#include "lib/json.h"
#include "output/print.h"
#include "trace/records.h"
#include "output/report.h"

#define NS_PER_SEC	  1000000000ULL
#define GCTX_O_CLOEXEC	  02000000u /* kernel value, as in the open record */
#define REP_MAX_INDENT	  32	    /* tree levels indented; deeper lines show their depth */
#define REP_MAX_OBJ_LINES 64	    /* objects listed per process and file */
#define REP_MAX_KOBJS	  32	    /* kernel objects listed per API context */
#define REP_MAX_CUR_TIDS  16	    /* threads listed per API context */
#define REP_MAX_CUR_TIMES 8	    /* times listed per thread and API context */
#define REP_MAX_API_MEM	  10000	    /* API allocations listed in the JSON */
#define REP_MAX_CURRENTS  10000	    /* current-context changes per context in the JSON */
#define REP_ENDBR64_LEN	  4	    /* f3 0f 1e fa */

/* Text label of a kernel record type: its JSON key, but "fd-kept". */
static const char *rep_ev_label(__u32 type)
{
	return type == GCTX_EV_FD_KEPT ? "fd-kept" : gctx_ev_type_name(type);
}

struct rep_hold_ref {
	__u32 file_idx;
	__u32 holder_idx;
};

struct rep_obj_ref {
	__u32 file_id;
	__u32 obj_idx;
};

/* Lookups built once per report; CSR layout: items of node n are [off[n], off[n + 1]). */
struct rep_index {
	__u32 nprocs, nfiles, nobjs;
	__u32 *hold_off; /* per process: the holder records of that process */
	struct rep_hold_ref *holds;
	__u32 *obj_off; /* per process: objects it created, by file id then index */
	struct rep_obj_ref *objs;
	__u32 *kid_off; /* per object: its RM children, by index */
	__u32 *kids;
	__u32 *stack; /* explicit DFS stack of the process tree: node and depth */
	__u32 *stack_depth;
	__u32 *ostack; /* the same for object trees, walked while a process is on stack */
	__u32 *ostack_depth;
	unsigned char *proc_seen;
	unsigned char *obj_seen;
};

/* API contexts by creating process (CSR, context indices), and per process the API memory
 * allocated while no context was current. */
struct rep_api_index {
	__u32 nprocs, nctxs;
	__u32 *ctx_off;
	__u32 *ctxs;
	__u64 *loose_live, *loose_total, *loose_n;
};

struct rep_ctx {
	FILE *out;
	const struct gctx_model *m;
	const struct gctx_trace_meta *meta;
	__u64 start;
	struct rep_index ix;
	struct rep_api_index ax;
};

static void rep_index__free(struct rep_index *ix)
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

static int rep_index__build(struct rep_index *ix, const struct gctx_model *m)
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

static void rep_api_index__free(struct rep_api_index *ax)
{
	free(ax->ctx_off);
	free(ax->ctxs);
	free(ax->loose_live);
	free(ax->loose_total);
	free(ax->loose_n);
	memset(ax, 0, sizeof(*ax));
}

static int rep_api_index__build(struct rep_api_index *ax, const struct gctx_model *m)
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

/* The API context with this 1-based id, or NULL. */
static const struct gctx_api_ctx *rep_api_ctx_by_id(const struct gctx_model *m, __u32 id)
{
	const struct gctx_api_ctx *x;

	if (!id || id > gctx_model__nctxs(m))
		return NULL;
	x = gctx_model__ctx(m, id - 1);
	return x && x->id == id ? x : NULL;
}

static const char *rep_api_vendor_name(__u32 vendor)
{
	return vendor == GCTX_VENDOR_HIP ? "hip" : "cuda";
}

static const char *rep_probe_how_name(__u32 how)
{
	switch (how) {
	case GCTX_PROBE_SYMBOL:
		return "symbol";
	case GCTX_PROBE_PROC_ADDRESS:
		return "cuGetProcAddress";
	default:
		return "unknown";
	}
}

static bool rep_probe_endbr64_skipped(const struct gctx_rec_probe *r)
{
	return r->offset == r->sym_offset + REP_ENDBR64_LEN;
}

/*
 * How the kernel runs the probed instruction (x86-64): push, jmp/call and the 5-byte nop are
 * emulated or rewritten (~1 us a hit here); anything else is single-stepped out of line
 * (~10 us). The bytes are the function's first, so the probed instruction starts 4 bytes in
 * when an endbr64 was skipped.
 */
static const char *rep_probe_execution(const struct gctx_rec_probe *r)
{
	static const __u8 nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	__u64 at = r->offset - r->sym_offset;
	const __u8 *b;

	if (at > 4 || (at == 4 && !rep_probe_endbr64_skipped(r)))
		return "unknown";
	b = r->insn + at;
	if ((b[0] >= 0x50 && b[0] <= 0x57) ||
	    (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57) || b[0] == 0xe8 || b[0] == 0xe9 ||
	    b[0] == 0xeb)
		return "emulated";
	if (at == 0 && !memcmp(b, nop5, sizeof(nop5)))
		return "optimized";
	return "single-stepped";
}

/* The first bytes of a probed function as hex, sep between bytes ("" or " "). */
static void rep_probe_insn(char *dst, size_t len, const struct gctx_rec_probe *r, const char *sep)
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

static int rep_finish(FILE *out)
{
	if (fflush(out) == EOF)
		return errno ? -errno : -EIO;
	if (ferror(out))
		return -EIO;
	return 0;
}

static const struct gctx_gpu_file *rep_file_by_id(const struct gctx_model *m, __u32 id)
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

static const struct gctx_proc *rep_proc(const struct gctx_model *m, __s64 idx)
{
	if (idx < 0 || idx >= gctx_model__nprocs(m))
		return NULL;
	return gctx_model__proc(m, (__u32)idx);
}

/* The argv to show for a process: its last exec, else what was read at attach. */
static void rep_proc_argv(const struct gctx_proc *p, const char **args, __u32 *len)
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

static const char *rep_proc_exe(const struct gctx_proc *p)
{
	if (p->nexecs && p->execs)
		return p->execs[p->nexecs - 1].filename;
	return p->exe;
}

static __u64 rep_drops_total(const struct gctx_rec_drops *d)
{
	__u64 total = 0;
	__u32 t;

	for (t = 1; d && t < GCTX_EV_KERNEL_MAX; t++)
		total += d->drops[t];
	return total;
}

static const char *rep_plural(__u64 n)
{
	return n == 1 ? "" : "s";
}

/* ---- text ---- */

static void rep_text_time(char *dst, size_t len, const struct rep_ctx *c, __u64 ts)
{
	if (!ts)
		snprintf(dst, len, "?");
	else
		gctx_format_reltime(dst, len, ts, c->start);
}

static void rep_text_wall(char *dst, size_t len, __u64 wall_ns)
{
	time_t secs = (time_t)(wall_ns / NS_PER_SEC);
	struct tm tm;
	char date[40];

	if (!wall_ns || !gmtime_r(&secs, &tm) ||
	    !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(dst, len, "unknown");
		return;
	}
	snprintf(dst, len, "%s.%06lluZ", date, (unsigned long long)(wall_ns % NS_PER_SEC / 1000));
}

/* "exit 3", "killed by SIGKILL (core dumped)" from a wait status. */
static void rep_text_wait_status(char *dst, size_t len, int status)
{
	char sig[32];

	if (status & 0x7f) {
		gctx_format_signal(sig, sizeof(sig), status & 0x7f);
		snprintf(dst, len, "killed by %s%s", sig, status & 0x80 ? " (core dumped)" : "");
	} else {
		snprintf(dst, len, "exit %d", (status >> 8) & 0xff);
	}
}

static void rep_text_header(struct rep_ctx *c)
{
	const struct gctx_trace_meta *meta = c->meta;
	const struct gctx_rec_end *end = gctx_model__end(c->m);
	const struct gctx_rec_drops *drops = gctx_model__drops(c->m);
	char buf[GCTX_ESC_SIZE(512)], kern[GCTX_ESC_SIZE(64)], ver[GCTX_ESC_SIZE(32)];
	char t[32], st[96];
	__u64 lost = rep_drops_total(drops);

	fprintf(c->out, "gpuctx report\n");
	if (meta) {
		gctx_format_str(buf, sizeof(buf), meta->hostname, sizeof(meta->hostname));
		gctx_format_str(kern, sizeof(kern), meta->kernel, sizeof(meta->kernel));
		gctx_format_str(ver, sizeof(ver), meta->version, sizeof(meta->version));
		fprintf(c->out, "  host:      %s (kernel %s), recorded by gpuctx %s\n",
			buf[0] ? buf : "?", kern[0] ? kern : "?", ver[0] ? ver : "?");
		rep_text_wall(buf, sizeof(buf), meta->start_wall_ns);
		fprintf(c->out, "  started:   %s\n", buf);
		gctx_format_str(buf, sizeof(buf), meta->cmdline, sizeof(meta->cmdline));
		fprintf(c->out, "  traced:    %s\n", buf[0] ? buf : "?");
	} else {
		fprintf(c->out, "  (no trace metadata)\n");
	}
	if (end) {
		rep_text_time(t, sizeof(t), c, end->end_ns);
		switch (end->reason) {
		case 0:
			if (end->exit_status == -1) {
				snprintf(st, sizeof(st), "the traced command exited");
			} else {
				rep_text_wait_status(buf, sizeof(buf), end->exit_status);
				snprintf(st, sizeof(st), "the traced command ended: %.40s", buf);
			}
			break;
		case 1:
			snprintf(st, sizeof(st), "gpuctx was interrupted");
			break;
		case 2:
			snprintf(st, sizeof(st), "duration limit reached");
			break;
		default:
			snprintf(st, sizeof(st), "reason %u", end->reason);
			break;
		}
		fprintf(c->out, "  duration:  %s s (%s)\n", t, st);
	} else {
		fprintf(c->out, "  WARNING: recording did not end cleanly (collector killed?); "
				"the trace ends at its last complete record\n");
	}
	if (lost)
		fprintf(c->out,
			"  WARNING: %llu event%s lost; lineage and findings may be incomplete "
			"(see Drops)\n",
			(unsigned long long)lost, rep_plural(lost));
	fputc('\n', c->out);
}

/* Indentation for tree level depth; deep levels stop indenting and show their depth. */
static void rep_text_indent(struct rep_ctx *c, __u32 depth)
{
	__u32 shown = depth < REP_MAX_INDENT ? depth : REP_MAX_INDENT;

	fprintf(c->out, "%*s", (int)(2 * shown), "");
	if (depth > REP_MAX_INDENT)
		fprintf(c->out, "[depth %u] ", depth);
}

static void rep_text_detail_prefix(struct rep_ctx *c, __u32 depth)
{
	rep_text_indent(c, depth);
	fputs("  | ", c->out);
}

static void rep_text_proc_line(struct rep_ctx *c, const struct gctx_proc *p, __u32 depth)
{
	char comm[GCTX_ESC_SIZE(GCTX_COMM_LEN)], argv[GCTX_ESC_SIZE(GCTX_ARGS_LEN)];
	char exe[GCTX_ESC_SIZE(GCTX_PATH_LEN)], sig[32], t[32];
	const char *args, *sep = " (";
	__u32 len;

	rep_text_indent(c, depth);
	gctx_format_str(comm, sizeof(comm), p->comm, GCTX_COMM_LEN);
	fprintf(c->out, "%u %s", p->pid, comm[0] ? comm : "?");
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
	}
	if (p->nexecs) {
		fprintf(c->out, "%s%u exec%s", sep, p->nexecs, rep_plural(p->nexecs));
		sep = ", ";
	}
	if (p->nexecs > 1) {
		gctx_format_str(exe, sizeof(exe), p->execs[0].filename, GCTX_PATH_LEN);
		fprintf(c->out, ", first %s", exe);
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
};

static int rep_cur_ref_cmp(const void *a, const void *b)
{
	const struct rep_cur_ref *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
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

static void rep_text_procs(struct rep_ctx *c)
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

static void rep_text_files(struct rep_ctx *c)
{
	char path[GCTX_ESC_SIZE(GCTX_PATH_LEN)], flags[256], t[32], opener[16];
	__u32 i, k;

	fprintf(c->out, "GPU files (%u):\n", c->ix.nfiles);
	if (!c->ix.nfiles) {
		fputs("  none\n\n", c->out);
		return;
	}
	fprintf(c->out, "  %-5s %-17s %-28s %-8s %s\n", "ID", "KIND", "PATH", "OPENER", "STATE");
	for (i = 0; i < c->ix.nfiles; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(c->m, i);
		char id[16];

		if (!f)
			continue;
		snprintf(id, sizeof(id), "#%u", f->id);
		gctx_format_str(path, sizeof(path), f->path, GCTX_PATH_LEN);
		if (f->opener_pid)
			snprintf(opener, sizeof(opener), "%u", f->opener_pid);
		else
			snprintf(opener, sizeof(opener), "?");
		gctx_format_open_flags(flags, sizeof(flags), f->open_flags);
		fprintf(c->out, "  %-5s %-17s %-28s %-8s ", id, gctx_dev_kind_name(f->kind), path,
			opener);
		if (f->present_at_attach)
			fputs("present at attach, ", c->out);
		if (f->closed) {
			rep_text_time(t, sizeof(t), c, f->close_ns);
			fprintf(c->out, "closed at %s", t);
		} else {
			fputs("open", c->out);
		}
		fprintf(c->out, ", %s, %llu ioctl%s, %llu mmap%s\n", flags,
			(unsigned long long)f->nioctls, rep_plural(f->nioctls),
			(unsigned long long)f->nmmaps, rep_plural(f->nmmaps));

		fprintf(c->out, "  %-5s holders:", "");
		for (k = 0; k < f->nholders; k++) {
			const struct gctx_holder *h = &f->holders[k];
			const struct gctx_proc *p = rep_proc(c->m, h->proc_idx);
			const struct gctx_proc *from = rep_proc(c->m, h->from_proc_idx);

			fprintf(c->out, "%s %u %s", k ? "," : "", p ? p->pid : 0,
				gctx_hold_how_name(h->how));
			if (h->how == GCTX_HOLD_INHERITED && from)
				fprintf(c->out, " from %u", from->pid);
		}
		fputs(f->nholders ? "\n" : " none\n", c->out);
	}
	fputc('\n', c->out);
}

/* Every probed entry point, grouped under its library when consecutive probes share it. */
/* List every probe only when it tells something: a failure, an address cuGetProcAddress
 * handed out, or API calls in the trace. */
static bool rep_probes_worth_listing(const struct gctx_model *m, __u32 nfail)
{
	if (nfail || gctx_model__events(m, GCTX_EV_API))
		return true;
	for (__u32 i = 0; i < gctx_model__nprobes(m); i++)
		if (gctx_model__probe(m, i)->how == GCTX_PROBE_PROC_ADDRESS)
			return true;
	return false;
}

static void rep_text_probes(struct rep_ctx *c)
{
	char lib[GCTX_ESC_SIZE(GCTX_PATH_LEN)], sym[GCTX_ESC_SIZE(64)], insn[32], err[32];
	__u32 n = gctx_model__nprobes(c->m), i, nfail = 0;
	const struct gctx_rec_probe *prev = NULL;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		const struct gctx_rec_probe *r = gctx_model__probe(c->m, i);

		nfail += r && r->err;
	}
	fprintf(c->out, "Probes (%u", n);
	if (nfail)
		fprintf(c->out, ", %u failed", nfail);
	fputs("):\n", c->out);
	if (!rep_probes_worth_listing(c->m, nfail)) {
		/* nothing called them: one line per library (the JSON lists every probe) */
		__u32 count = 0;

		for (i = 0; i < n; i++) {
			const struct gctx_rec_probe *r = gctx_model__probe(c->m, i);
			const struct gctx_rec_probe *next = gctx_model__probe(c->m, i + 1);

			count++;
			if (next && !strncmp(next->lib, r->lib, sizeof(r->lib)))
				continue;
			gctx_format_str(lib, sizeof(lib), r->lib, sizeof(r->lib));
			fprintf(c->out, "  %s: %u entry point%s, no API call seen\n",
				lib[0] ? lib : "?", count, rep_plural(count));
			count = 0;
		}
		fputc('\n', c->out);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct gctx_rec_probe *r = gctx_model__probe(c->m, i);
		const char *fn;

		if (!r)
			continue;
		if (!prev || strncmp(prev->lib, r->lib, sizeof(r->lib))) {
			gctx_format_str(lib, sizeof(lib), r->lib, sizeof(r->lib));
			fprintf(c->out, "  %s:\n", lib[0] ? lib : "?");
		}
		prev = r;
		gctx_format_str(sym, sizeof(sym), r->symbol, sizeof(r->symbol));
		fn = gctx_api_fn_name(r->fn);
		fprintf(c->out, "    %s", sym[0] ? sym : "?");
		if (strcmp(sym, fn))
			fprintf(c->out, " (%s)", fn);
		fprintf(c->out, " +0x%llx, %s", (unsigned long long)r->offset,
			r->how == GCTX_PROBE_PROC_ADDRESS ? "cuGetProcAddress address"
							  : rep_probe_how_name(r->how));
		rep_probe_insn(insn, sizeof(insn), r, " ");
		fprintf(c->out, ", first bytes %s", insn);
		if (rep_probe_endbr64_skipped(r))
			fputs(", endbr64 skipped", c->out);
		else if (r->offset != r->sym_offset)
			fprintf(c->out, ", function at +0x%llx", (unsigned long long)r->sym_offset);
		if (!strcmp(rep_probe_execution(r), "single-stepped"))
			fputs(", single-stepped (~10 us a call)", c->out);
		fprintf(c->out, ", retprobe %s", r->retprobe ? "yes" : "no");
		if (r->err) {
			gctx_format_errno(err, sizeof(err), -r->err);
			fprintf(c->out, ", error %s", err);
		}
		fputc('\n', c->out);
	}
	fputc('\n', c->out);
}

static void rep_text_finding(struct rep_ctx *c, const struct gctx_finding *f)
{
	char t[32], detail[GCTX_ESC_SIZE(sizeof(f->detail))];
	char call[GCTX_ESC_SIZE(sizeof(f->call))], ret[GCTX_ESC_SIZE(sizeof(f->api_ret_name))];
	const struct gctx_gpu_file *file = rep_file_by_id(c->m, f->file_id);
	__u32 i;

	rep_text_time(t, sizeof(t), c, f->time_ns);
	fprintf(c->out, "  #%-3u %-8s %-26s pid %u", f->id, gctx_severity_name(f->severity),
		gctx_finding_kind_name(f->kind), f->pid);
	if (f->tid && f->tid != f->pid)
		fprintf(c->out, " tid %u", f->tid);
	fprintf(c->out, " at %s", t);
	if (file)
		fprintf(c->out, " file #%u %s", file->id, gctx_dev_kind_name(file->kind));
	if (f->opener_pid && f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL)
		fprintf(c->out, " (initialised by %u)", f->opener_pid);
	else if (f->opener_pid)
		fprintf(c->out, " (opener %u)", f->opener_pid);
	if (f->has_api_ret) {
		gctx_format_str(call, sizeof(call), f->call, sizeof(f->call));
		gctx_format_str(ret, sizeof(ret), f->api_ret_name, sizeof(f->api_ret_name));
		fprintf(c->out, " %s -> %s", call[0] ? call : "?", ret[0] ? ret : "?");
	}
	if (f->ctx_id) {
		fprintf(c->out, " context #%u", f->ctx_id);
		if (f->ctx_handle)
			fprintf(c->out, " (0x%llx)", (unsigned long long)f->ctx_handle);
	}
	if (f->kind == GCTX_FIND_API_ERROR)
		fprintf(c->out, " (%llu call%s)", (unsigned long long)f->uses, rep_plural(f->uses));
	if (f->related_finding)
		fprintf(c->out, " related to finding #%u", f->related_finding);
	fputc('\n', c->out);
	gctx_format_str(detail, sizeof(detail), f->detail, sizeof(f->detail));
	if (detail[0])
		fprintf(c->out, "        %s\n", detail);
	if (f->nchain) {
		fputs("        fork chain:", c->out);
		for (i = 0; i < f->nchain && i < GCTX_MAX_CHAIN; i++)
			fprintf(c->out, "%s %u", i ? " ->" : "", f->chain[i]);
		fprintf(c->out, "%s\n", f->exec_between ? " (exec in between)" : "");
	}
}

static void rep_text_findings(struct rep_ctx *c)
{
	__u32 n = gctx_model__nfindings(c->m), i, nerr = 0, nwarn = 0, pass;

	for (i = 0; i < n; i++) {
		const struct gctx_finding *f = gctx_model__finding(c->m, i);

		if (f && f->severity >= GCTX_SEV_ERROR)
			nerr++;
		else if (f && f->severity == GCTX_SEV_WARNING)
			nwarn++;
	}
	if (!n) {
		fputs("No findings.\n\n", c->out);
		return;
	}
	fprintf(c->out, "Findings (%u): %u error%s, %u warning%s", n, nerr, rep_plural(nerr), nwarn,
		rep_plural(nwarn));
	if (n - nerr - nwarn)
		fprintf(c->out, ", %u other", n - nerr - nwarn);
	fputs("\n", c->out);
	/* Errors first, then warnings, then the rest; id order within each. */
	for (pass = 0; pass < 3; pass++) {
		for (i = 0; i < n; i++) {
			const struct gctx_finding *f = gctx_model__finding(c->m, i);
			__u32 group;

			if (!f)
				continue;
			group = f->severity >= GCTX_SEV_ERROR	  ? 0
				: f->severity == GCTX_SEV_WARNING ? 1
								  : 2;
			if (group == pass)
				rep_text_finding(c, f);
		}
	}
	fputc('\n', c->out);
}

static void rep_text_counts(struct rep_ctx *c)
{
	const struct gctx_rec_drops *d = gctx_model__drops(c->m);
	__u64 lost = rep_drops_total(d);
	__u32 t;

	fprintf(c->out, "Events: %llu records (",
		(unsigned long long)gctx_model__total_events(c->m));
	for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
		fprintf(c->out, "%s%s %llu", t > 1 ? ", " : "", rep_ev_label(t),
			(unsigned long long)gctx_model__events(c->m, t));
	fputs(")\n", c->out);

	if (lost) {
		fprintf(c->out, "WARNING: %llu event%s lost:", (unsigned long long)lost,
			rep_plural(lost));
		for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
			fprintf(c->out, " %s=%llu", rep_ev_label(t),
				(unsigned long long)d->drops[t]);
		fputs(
		    "\n  the ring buffer overflowed; processes, files or findings may be missing\n",
		    c->out);
	} else if (gctx_model__end(c->m)) {
		fputs("Drops: none\n", c->out);
	} else {
		fputs("Drops: unknown (drop counters are written when the recording ends)\n",
		      c->out);
	}
	if (d && d->missed_stash)
		fprintf(c->out, "Note: %llu syscall exit%s had no recorded entry (missed_stash)\n",
			(unsigned long long)d->missed_stash, rep_plural(d->missed_stash));
}

int gctx_report__text(FILE *out, const struct gctx_model *m, const struct gctx_trace_meta *meta)
{
	struct rep_ctx c = { .out = out, .m = m, .meta = meta };
	int err;

	if (!out || !m)
		return -EINVAL;
	c.start = meta ? meta->start_mono_ns : 0;
	err = rep_index__build(&c.ix, m);
	if (err)
		return err;
	err = rep_api_index__build(&c.ax, m);
	if (err) {
		rep_index__free(&c.ix);
		return err;
	}
	rep_text_header(&c);
	rep_text_procs(&c);
	rep_text_files(&c);
	rep_text_probes(&c);
	rep_text_findings(&c);
	rep_text_counts(&c);
	rep_api_index__free(&c.ax);
	rep_index__free(&c.ix);
	return rep_finish(out);
}

/* ---- JSON ---- */

static void rep_json_u64(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	gctx_json__u64(j, v);
}

static void rep_json_s64(struct gctx_json *j, const char *k, __s64 v)
{
	gctx_json__key(j, k);
	gctx_json__s64(j, v);
}

/* v, or null when it is 0 (an unknown time, an absent pid or id). */
static void rep_json_u64_or_null(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	if (v)
		gctx_json__u64(j, v);
	else
		gctx_json__null(j);
}

static void rep_json_bool(struct gctx_json *j, const char *k, bool v)
{
	gctx_json__key(j, k);
	gctx_json__bool(j, v);
}

static void rep_json_null(struct gctx_json *j, const char *k)
{
	gctx_json__key(j, k);
	gctx_json__null(j);
}

/* A string key from a C string; NULL writes null. */
static void rep_json_str(struct gctx_json *j, const char *k, const char *v)
{
	gctx_json__key(j, k);
	gctx_json__str(j, v);
}

/* A string from a fixed-size field that may lack its NUL; empty writes null if asked. */
static void rep_json_fixed(struct gctx_json *j, const char *k, const char *s, size_t max,
			   bool empty_is_null)
{
	size_t n = strnlen(s, max);

	if (k)
		gctx_json__key(j, k);
	if (!n && empty_is_null)
		gctx_json__null(j);
	else
		gctx_json__strn(j, s, n);
}

/* NUL-separated argv -> array of strings; trailing NULs end the list. */
static void rep_json_argv(struct gctx_json *j, const char *k, const char *args, __u32 len)
{
	__u32 i, start = 0;

	gctx_json__key(j, k);
	gctx_json__arr_begin(j);
	if (len > GCTX_ARGS_LEN)
		len = GCTX_ARGS_LEN;
	while (args && len && !args[len - 1])
		len--;
	for (i = 0; args && len && i <= len; i++) {
		if (i == len || !args[i]) {
			gctx_json__strn(j, args + start, i - start);
			start = i + 1;
		}
	}
	gctx_json__arr_end(j);
}

static void rep_json_meta(struct gctx_json *j, const struct gctx_model *m,
			  const struct gctx_trace_meta *meta)
{
	const struct gctx_rec_end *end = gctx_model__end(m);
	static const char *const reasons[] = {"exited", "signal", "duration"};
	__u32 i;

	gctx_json__key(j, "meta");
	gctx_json__obj_begin(j);
	if (meta) {
		rep_json_fixed(j, "hostname", meta->hostname, sizeof(meta->hostname), false);
		rep_json_fixed(j, "kernel", meta->kernel, sizeof(meta->kernel), false);
		rep_json_fixed(j, "version", meta->version, sizeof(meta->version), false);
		rep_json_fixed(j, "cmdline", meta->cmdline, sizeof(meta->cmdline), false);
		rep_json_u64(j, "start_wall_ns", meta->start_wall_ns);
		rep_json_u64(j, "start_mono_ns", meta->start_mono_ns);
	} else {
		rep_json_null(j, "hostname");
		rep_json_null(j, "kernel");
		rep_json_null(j, "version");
		rep_json_null(j, "cmdline");
		rep_json_null(j, "start_wall_ns");
		rep_json_null(j, "start_mono_ns");
	}
	if (end) {
		rep_json_u64(j, "end_ns", end->end_ns);
		rep_json_bool(j, "clean_end", true);
		rep_json_str(j, "end_reason", end->reason < 3 ? reasons[end->reason] : "unknown");
		gctx_json__key(j, "exit_status");
		if (end->exit_status == -1)
			gctx_json__null(j);
		else
			gctx_json__s64(j, end->exit_status);
	} else {
		rep_json_null(j, "end_ns");
		rep_json_bool(j, "clean_end", false);
		rep_json_null(j, "end_reason");
		rep_json_null(j, "exit_status");
	}
	gctx_json__key(j, "devices");
	gctx_json__arr_begin(j);
	for (i = 0; i < gctx_model__ndevices(m); i++) {
		const struct gctx_rec_device *d = gctx_model__device(m, i);

		if (!d)
			continue;
		gctx_json__obj_begin(j);
		rep_json_str(j, "kind", gctx_dev_kind_name(d->kind));
		rep_json_fixed(j, "path", d->path, sizeof(d->path), false);
		rep_json_u64(j, "dev", d->dev);
		rep_json_u64(j, "ino", d->ino);
		rep_json_u64(j, "rdev", d->rdev);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
}

static void rep_json_proc(struct gctx_json *j, const struct gctx_model *m,
			  const struct rep_api_index *ax, const struct gctx_proc *p)
{
	const char *args, *sig;
	__u32 len, i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "pid", p->pid);
	rep_json_u64(j, "ppid", p->ppid);
	rep_json_u64(j, "index", p->idx);
	rep_json_fixed(j, "comm", p->comm, GCTX_COMM_LEN, false);
	rep_proc_argv(p, &args, &len);
	rep_json_argv(j, "argv", args, len);
	rep_json_fixed(j, "exe", rep_proc_exe(p), GCTX_PATH_LEN, true);

	gctx_json__key(j, "exit_code");
	if (p->exited && !p->signal && p->exit_code >= 0)
		gctx_json__s64(j, p->exit_code);
	else
		gctx_json__null(j);
	gctx_json__key(j, "signal");
	if (p->exited && p->signal)
		gctx_json__s64(j, p->signal);
	else
		gctx_json__null(j);
	sig = p->exited && p->signal ? gctx_signal_name(p->signal) : NULL;
	rep_json_str(j, "signal_name", sig);
	rep_json_bool(j, "core_dumped", p->exited && p->core_dumped);
	rep_json_bool(j, "exited", p->exited);
	rep_json_u64_or_null(j, "start_ns", p->start_ns);
	rep_json_u64_or_null(j, "exit_ns", p->exited ? p->exit_ns : 0);
	rep_json_bool(j, "present_at_attach", p->present_at_attach);

	gctx_json__key(j, "threads");
	gctx_json__arr_begin(j);
	for (i = 0; p->threads && i < p->nthreads; i++) {
		const struct gctx_thread *t = &p->threads[i];

		gctx_json__obj_begin(j);
		rep_json_u64(j, "tid", t->tid);
		rep_json_fixed(j, "comm", t->comm, GCTX_COMM_LEN, false);
		rep_json_u64_or_null(j, "start_ns", t->start_ns);
		rep_json_u64_or_null(j, "exit_ns", t->exited ? t->exit_ns : 0);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "execs");
	gctx_json__arr_begin(j);
	for (i = 0; p->execs && i < p->nexecs; i++) {
		const struct gctx_exec *e = &p->execs[i];

		gctx_json__obj_begin(j);
		rep_json_u64(j, "ts_ns", e->ts_ns);
		rep_json_u64(j, "old_tid", e->old_tid);
		rep_json_fixed(j, "filename", e->filename, GCTX_PATH_LEN, false);
		rep_json_argv(j, "argv", e->args, e->args_len);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "children");
	gctx_json__arr_begin(j);
	for (i = 0; p->children && i < p->nchildren; i++) {
		const struct gctx_proc *kid = rep_proc(m, p->children[i]);

		if (kid)
			gctx_json__u64(j, kid->pid);
	}
	gctx_json__arr_end(j);
	rep_json_u64(j, "gpu_ioctls", p->nioctls);
	rep_json_u64(j, "gpu_mmaps", p->nmmaps);
	rep_json_u64(j, "api_calls", gctx_model__api_calls(m, p->idx));
	gctx_json__key(j, "contexts");
	gctx_json__arr_begin(j);
	for (i = p->idx < ax->nprocs ? ax->ctx_off[p->idx] : 0;
	     p->idx < ax->nprocs && i < ax->ctx_off[p->idx + 1]; i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, ax->ctxs[i]);

		if (x)
			gctx_json__u64(j, x->id);
	}
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
}

static void rep_json_file(struct gctx_json *j, const struct gctx_model *m,
			  const struct gctx_gpu_file *f)
{
	__u32 k, i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", f->id);
	rep_json_fixed(j, "device", f->path, GCTX_PATH_LEN, false);
	rep_json_str(j, "kind", gctx_dev_kind_name(f->kind));
	rep_json_u64_or_null(j, "opener_pid", f->opener_pid);
	rep_json_u64_or_null(j, "open_ns", f->open_ns);
	rep_json_u64(j, "open_flags", f->open_flags);
	rep_json_bool(j, "cloexec", f->open_flags & GCTX_O_CLOEXEC);
	rep_json_bool(j, "present_at_attach", f->present_at_attach);
	rep_json_bool(j, "closed", f->closed);
	rep_json_u64_or_null(j, "close_ns", f->closed ? f->close_ns : 0);

	gctx_json__key(j, "holders");
	gctx_json__arr_begin(j);
	for (k = 0; f->holders && k < f->nholders; k++) {
		const struct gctx_proc *p = rep_proc(m, f->holders[k].proc_idx);

		if (p)
			gctx_json__u64(j, p->pid);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "holders_detail");
	gctx_json__arr_begin(j);
	for (k = 0; f->holders && k < f->nholders; k++) {
		const struct gctx_holder *h = &f->holders[k];
		const struct gctx_proc *p = rep_proc(m, h->proc_idx);
		const struct gctx_proc *from = rep_proc(m, h->from_proc_idx);

		if (!p)
			continue;
		gctx_json__obj_begin(j);
		rep_json_u64(j, "pid", p->pid);
		rep_json_str(j, "how", gctx_hold_how_name(h->how));
		gctx_json__key(j, "from_pid");
		if (h->how == GCTX_HOLD_INHERITED && from)
			gctx_json__u64(j, from->pid);
		else
			gctx_json__null(j);
		rep_json_u64_or_null(j, "since_ns", h->since_ns);
		rep_json_u64_or_null(j, "until_ns", h->held ? 0 : h->until_ns);
		rep_json_u64(j, "ioctls", h->nioctls);
		rep_json_u64(j, "mmaps", h->nmmaps);
		rep_json_bool(j, "kept_across_exec", h->kept_across_exec);
		rep_json_u64(j, "execs_since", h->execs_since);
		rep_json_u64_or_null(j, "first_use_ns", h->first_use_ns);
		gctx_json__key(j, "fds");
		gctx_json__arr_begin(j);
		for (i = 0; i < h->nfds && i < 8; i++)
			gctx_json__s64(j, h->fds[i]);
		gctx_json__arr_end(j);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	rep_json_u64(j, "ioctls", f->nioctls);
	rep_json_u64(j, "mmaps", f->nmmaps);
	gctx_json__obj_end(j);
}

static void rep_json_obj(struct gctx_json *j, const struct gctx_model *m,
			 const struct gctx_gpu_obj *o)
{
	const struct gctx_proc *p = rep_proc(m, o->creator_idx);
	const struct gctx_gpu_obj *parent = NULL;

	if (o->parent_obj >= 0 && (__u32)o->parent_obj < gctx_model__nobjs(m))
		parent = gctx_model__obj(m, (__u32)o->parent_obj);
	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", o->id);
	rep_json_str(j, "kind", gctx_obj_kind_name(o->kind));
	rep_json_u64(j, "class", o->cls);
	rep_json_str(j, "class_name", o->cls ? gctx_nv_class_name(o->cls) : NULL);
	rep_json_u64(j, "handle", o->handle);
	rep_json_u64(j, "parent", o->parent);
	rep_json_u64(j, "client", o->client);
	rep_json_u64_or_null(j, "parent_id", parent ? parent->id : 0);
	rep_json_u64_or_null(j, "file_id", o->file_id);
	gctx_json__key(j, "creator_pid");
	if (p)
		gctx_json__u64(j, p->pid);
	else
		gctx_json__null(j);
	rep_json_u64_or_null(j, "creator_tid", o->creator_tid);
	rep_json_u64_or_null(j, "create_ns", o->create_ns);
	rep_json_u64_or_null(j, "destroy_ns", o->destroyed ? o->destroy_ns : 0);
	rep_json_bool(j, "destroyed", o->destroyed);
	rep_json_u64(j, "size", o->size);
	gctx_json__obj_end(j);
}

static void rep_json_api_ctx(struct gctx_json *j, const struct gctx_model *m,
			     const struct gctx_api_ctx *x)
{
	const struct gctx_proc *p = rep_proc(m, x->creator_idx);
	__u32 i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", x->id);
	rep_json_u64(j, "handle", x->handle);
	rep_json_str(j, "vendor", rep_api_vendor_name(x->vendor));
	rep_json_bool(j, "primary", x->primary);
	rep_json_bool(j, "green", x->green);
	gctx_json__key(j, "device");
	if (x->device >= 0)
		gctx_json__s64(j, x->device);
	else
		gctx_json__null(j);
	rep_json_u64_or_null(j, "creator_pid", p ? p->pid : 0);
	rep_json_u64_or_null(j, "creator_tid", x->creator_tid);
	rep_json_str(j, "create_fn", gctx_api_fn_name(x->create_fn));
	rep_json_u64_or_null(j, "create_ns", x->create_ns);
	rep_json_u64_or_null(j, "destroy_ns", x->destroyed ? x->destroy_ns : 0);
	rep_json_u64(j, "refs", x->refs);
	rep_json_u64(j, "mem_live", x->mem_live);
	rep_json_u64(j, "mem_total", x->mem_total);
	rep_json_u64(j, "allocs", x->nallocs);
	rep_json_u64(j, "launches", x->launches);
	gctx_json__key(j, "kernel_objects");
	gctx_json__arr_begin(j);
	for (i = 0; x->kobjs && i < x->nkobjs; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, x->kobjs[i]);

		if (o)
			gctx_json__u64(j, o->id);
	}
	gctx_json__arr_end(j);
	gctx_json__key(j, "currents");
	gctx_json__arr_begin(j);
	for (i = 0; x->currents && i < x->ncurrents && i < REP_MAX_CURRENTS; i++) {
		gctx_json__obj_begin(j);
		rep_json_u64(j, "tid", x->currents[i].tid);
		rep_json_u64(j, "ts_ns", x->currents[i].ts_ns);
		rep_json_str(j, "fn", gctx_api_fn_name(x->currents[i].fn));
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	rep_json_bool(j, "currents_truncated", x->ncurrents > REP_MAX_CURRENTS);
	gctx_json__obj_end(j);
}

static void rep_json_api_mem(struct gctx_json *j, const struct gctx_model *m,
			     const struct gctx_api_mem *mm)
{
	const struct gctx_proc *p = rep_proc(m, mm->proc_idx);

	gctx_json__obj_begin(j);
	rep_json_u64_or_null(j, "pid", p ? p->pid : 0);
	rep_json_u64_or_null(j, "ctx_id", mm->ctx_id);
	rep_json_str(j, "fn", gctx_api_fn_name(mm->fn));
	rep_json_u64(j, "ptr", mm->ptr);
	rep_json_u64(j, "size", mm->size);
	rep_json_u64_or_null(j, "alloc_ns", mm->alloc_ns);
	rep_json_u64_or_null(j, "free_ns", mm->freed ? mm->free_ns : 0);
	gctx_json__obj_end(j);
}

static void rep_json_probe(struct gctx_json *j, const struct gctx_rec_probe *r)
{
	char insn[2 * sizeof(r->insn) + 1];

	gctx_json__obj_begin(j);
	rep_json_fixed(j, "lib", r->lib, sizeof(r->lib), false);
	rep_json_fixed(j, "symbol", r->symbol, sizeof(r->symbol), false);
	rep_json_str(j, "fn", gctx_api_fn_name(r->fn));
	rep_json_str(j, "how", rep_probe_how_name(r->how));
	rep_json_u64(j, "offset", r->offset);
	rep_json_u64(j, "sym_offset", r->sym_offset);
	rep_json_bool(j, "endbr64_skipped", rep_probe_endbr64_skipped(r));
	rep_json_str(j, "execution", rep_probe_execution(r));
	rep_probe_insn(insn, sizeof(insn), r, "");
	rep_json_str(j, "first_bytes", insn);
	rep_json_bool(j, "retprobe", r->retprobe);
	rep_json_s64(j, "err", r->err);
	gctx_json__key(j, "error");
	if (r->err) {
		char err[32];

		gctx_format_errno(err, sizeof(err), -r->err);
		gctx_json__str(j, err);
	} else {
		gctx_json__null(j);
	}
	gctx_json__obj_end(j);
}

static void rep_json_api(struct gctx_json *j, const struct gctx_model *m)
{
	__u32 i, n;

	gctx_json__key(j, "api_contexts");
	gctx_json__arr_begin(j);
	n = gctx_model__nctxs(m);
	for (i = 0; i < n; i++) {
		const struct gctx_api_ctx *x = gctx_model__ctx(m, i);

		if (x)
			rep_json_api_ctx(j, m, x);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "api_memory");
	gctx_json__arr_begin(j);
	n = gctx_model__nmems(m);
	for (i = 0; i < n && i < REP_MAX_API_MEM; i++) {
		const struct gctx_api_mem *mm = gctx_model__mem(m, i);

		if (mm)
			rep_json_api_mem(j, m, mm);
	}
	gctx_json__arr_end(j);
	rep_json_u64(j, "api_memory_count", n);
	rep_json_bool(j, "api_memory_truncated", n > REP_MAX_API_MEM);

	gctx_json__key(j, "probes");
	gctx_json__arr_begin(j);
	n = gctx_model__nprobes(m);
	for (i = 0; i < n; i++) {
		const struct gctx_rec_probe *r = gctx_model__probe(m, i);

		if (r)
			rep_json_probe(j, r);
	}
	gctx_json__arr_end(j);
}

static void rep_json_finding(struct gctx_json *j, const struct gctx_model *m,
			     const struct gctx_finding *f)
{
	const struct gctx_gpu_file *file = rep_file_by_id(m, f->file_id);
	__u32 i;

	gctx_json__obj_begin(j);
	rep_json_u64(j, "id", f->id);
	rep_json_str(j, "kind", gctx_finding_kind_name(f->kind));
	rep_json_str(j, "severity", gctx_severity_name(f->severity));
	rep_json_u64(j, "pid", f->pid);
	rep_json_u64_or_null(j, "tid", f->tid);
	rep_json_u64_or_null(j, "opener_pid", f->opener_pid);
	gctx_json__key(j, "device");
	if (file)
		rep_json_fixed(j, NULL, file->path, GCTX_PATH_LEN, false);
	else
		gctx_json__null(j);
	rep_json_str(j, "device_kind", f->kind_dev ? gctx_dev_kind_name(f->kind_dev) : NULL);
	rep_json_u64_or_null(j, "file_id", f->file_id);
	rep_json_u64_or_null(j, "time_ns", f->time_ns);
	rep_json_str(j, "event", gctx_ev_type_name(f->event_type));
	rep_json_fixed(j, "call", f->call, sizeof(f->call), true);
	rep_json_s64(j, "err", f->err);
	rep_json_str(j, "errno_name", f->err ? gctx_errno_name(f->err) : NULL);
	gctx_json__key(j, "status");
	if (f->has_status)
		gctx_json__u64(j, f->status);
	else
		gctx_json__null(j);
	rep_json_str(j, "status_name", f->has_status ? gctx_nv_status_name(f->status) : NULL);
	gctx_json__key(j, "chain");
	gctx_json__arr_begin(j);
	for (i = 0; i < f->nchain && i < GCTX_MAX_CHAIN; i++)
		gctx_json__u64(j, f->chain[i]);
	gctx_json__arr_end(j);
	rep_json_bool(j, "exec_between", f->exec_between);
	rep_json_bool(j, "later_used", f->later_used);
	rep_json_u64(j, "uses", f->uses);
	rep_json_u64_or_null(j, "related_finding", f->related_finding);
	gctx_json__key(j, "api_ret");
	if (f->has_api_ret)
		gctx_json__s64(j, f->api_ret);
	else
		gctx_json__null(j);
	gctx_json__key(j, "api_ret_name");
	if (f->has_api_ret)
		rep_json_fixed(j, NULL, f->api_ret_name, sizeof(f->api_ret_name), true);
	else
		gctx_json__null(j);
	gctx_json__key(j, "context");
	if (f->ctx_id && rep_api_ctx_by_id(m, f->ctx_id))
		gctx_json__u64(j, f->ctx_id);
	else
		gctx_json__null(j);
	gctx_json__key(j, "context_handle");
	if (f->ctx_id)
		gctx_json__u64(j, f->ctx_handle);
	else
		gctx_json__null(j);
	rep_json_fixed(j, "detail", f->detail, sizeof(f->detail), false);
	gctx_json__obj_end(j);
}

static void rep_json_counts(struct gctx_json *j, const struct gctx_model *m)
{
	const struct gctx_rec_drops *d = gctx_model__drops(m);
	__u32 t;

	gctx_json__key(j, "drops");
	gctx_json__obj_begin(j);
	for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
		rep_json_u64(j, gctx_ev_type_name(t), d ? d->drops[t] : 0);
	rep_json_u64(j, "missed_stash", d ? d->missed_stash : 0);
	rep_json_u64(j, "total", rep_drops_total(d));
	gctx_json__obj_end(j);

	gctx_json__key(j, "events");
	gctx_json__obj_begin(j);
	rep_json_u64(j, "total", gctx_model__total_events(m));
	for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
		rep_json_u64(j, gctx_ev_type_name(t), gctx_model__events(m, t));
	gctx_json__obj_end(j);
}

int gctx_report__json(FILE *out, const struct gctx_model *m, const struct gctx_trace_meta *meta)
{
	struct rep_api_index ax;
	struct gctx_json *j;
	__u32 i, n;
	int err;

	if (!out || !m)
		return -EINVAL;
	err = rep_api_index__build(&ax, m);
	if (err)
		return err;
	j = gctx_json__new(out, true);
	if (!j) {
		rep_api_index__free(&ax);
		return -ENOMEM;
	}
	gctx_json__obj_begin(j);
	rep_json_meta(j, m, meta);

	gctx_json__key(j, "processes");
	gctx_json__arr_begin(j);
	n = gctx_model__nprocs(m);
	for (i = 0; i < n; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);

		if (p)
			rep_json_proc(j, m, &ax, p);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "gpu_files");
	gctx_json__arr_begin(j);
	n = gctx_model__nfiles(m);
	for (i = 0; i < n; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		if (f)
			rep_json_file(j, m, f);
	}
	gctx_json__arr_end(j);

	gctx_json__key(j, "gpu_objects");
	gctx_json__arr_begin(j);
	n = gctx_model__nobjs(m);
	for (i = 0; i < n; i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (o)
			rep_json_obj(j, m, o);
	}
	gctx_json__arr_end(j);

	rep_json_api(j, m);

	gctx_json__key(j, "findings");
	gctx_json__arr_begin(j);
	n = gctx_model__nfindings(m);
	for (i = 0; i < n; i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);

		if (f)
			rep_json_finding(j, m, f);
	}
	gctx_json__arr_end(j);

	rep_json_counts(j, m);
	gctx_json__obj_end(j);
	gctx_json__free(j);
	rep_api_index__free(&ax);
	fputc('\n', out);
	return rep_finish(out);
}
