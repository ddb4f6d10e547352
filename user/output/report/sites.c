// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finding sites in the reports (interface in sites.h). */
#include <string.h>

#include "output/report/print.h"
#include "output/report/sites.h"

void gctx_finding_stacks_in(const struct gctx_model *m, const struct gctx_model *sm,
			    const struct gctx_finding *f,
			    const struct gctx_stack *out[GCTX_STACK_ROLE_MAX])
{
	const struct gctx_gpu_file *file = NULL;
	const struct gctx_proc *p = gctx_model__proc(m, f->proc_idx);
	__u32 opener = f->opener_pid;

	memset(out, 0, sizeof(out[0]) * GCTX_STACK_ROLE_MAX);
	if (f->file_id)
		file = gctx_model__file(m, f->file_id - 1);
	if (!opener && f->nchain)
		opener = f->chain[0];
	/* e.g. an API error in a forked child: the parent's initialisation */
	if (!opener && p && p->ppid && gctx_model__stack_for(sm, p->ppid, GCTX_STACK_INIT, 0))
		opener = p->ppid;
	if (opener)
		out[GCTX_STACK_INIT] =
		    gctx_model__stack_for(sm, opener, GCTX_STACK_INIT, file ? file->file : 0);
	/* the fork that carried the state out of the process that initialised it */
	if (f->nchain >= 2)
		out[GCTX_STACK_FORK] =
		    gctx_model__stack_for(sm, f->chain[0], GCTX_STACK_FORK, f->chain[1]);
	if (!out[GCTX_STACK_FORK] && p && p->ppid)
		out[GCTX_STACK_FORK] = gctx_model__stack_for(sm, p->ppid, GCTX_STACK_FORK, f->pid);
	/* only a process that inherited GPU state has use stacks */
	out[GCTX_STACK_USE] =
	    gctx_model__stack_for(sm, f->pid, GCTX_STACK_USE, file ? file->file : 0);
	if (f->kind == GCTX_FIND_CRASH_AFTER_INHERITANCE)
		out[GCTX_STACK_CRASH] = gctx_model__stack_for(sm, f->pid, GCTX_STACK_CRASH, 0);
}

void gctx_finding_stacks(const struct gctx_model *m, const struct gctx_finding *f,
			 const struct gctx_stack *out[GCTX_STACK_ROLE_MAX])
{
	gctx_finding_stacks_in(m, m, f, out);
}

static const char *const role_text[GCTX_STACK_ROLE_MAX] = {
    [GCTX_STACK_INIT] = "GPU initialised at",
    [GCTX_STACK_FORK] = "forked at",
    [GCTX_STACK_USE] = "used at",
    [GCTX_STACK_CRASH] = "crashed at",
    [GCTX_STACK_RAISE] = "raised at",
};

void gctx_sites_print(FILE *out, const struct gctx_model *m, const struct gctx_finding *f)
{
	const struct gctx_stack *st[GCTX_STACK_ROLE_MAX];
	char site[640], a[320], b[320];

	gctx_finding_stacks(m, f, st);
	for (__u32 r = 1; r < GCTX_STACK_ROLE_MAX; r++) {
		if (!st[r])
			continue;
		gctx_site_format(st[r], site, sizeof(site));
		fprintf(out, "        %s %s (pid %u)\n", role_text[r], site, st[r]->pid);
		if (st[r]->note[0])
			fprintf(out, "          note: %s\n", st[r]->note);
	}
	if (st[GCTX_STACK_INIT] && st[GCTX_STACK_FORK] && st[GCTX_STACK_INIT]->site >= 0 &&
	    st[GCTX_STACK_FORK]->site >= 0) {
		gctx_frame_format(&st[GCTX_STACK_INIT]->frames[st[GCTX_STACK_INIT]->site], a,
				  sizeof(a));
		gctx_frame_format(&st[GCTX_STACK_FORK]->frames[st[GCTX_STACK_FORK]->site], b,
				  sizeof(b));
		fprintf(out,
			"        fix: move the GPU initialisation at %s after the fork at %s "
			"(into the child), or start the child with spawn instead of fork there\n",
			a, b);
	}
}

/* A DataLoader with many workers has two stacks per worker: the findings name the sites, this
 * section shows the first stacks whole; --json has all of them. */
#define GCTX_TEXT_MAX_STACKS 12

void gctx_stacks_print(FILE *out, const struct gctx_model *m, __u32 max_frames)
{
	__u32 n = gctx_model__nstacks(m);
	char line[640];

	if (!n)
		return;
	fprintf(out, "Stacks (%u, innermost frame first; > marks the site)\n", n);
	for (__u32 i = 0; i < n && i < GCTX_TEXT_MAX_STACKS; i++) {
		const struct gctx_stack *s = gctx_model__stack(m, i);

		fprintf(out, "  %s pid %u tid %u", gctx_stack_role_name(s->role), s->pid, s->tid);
		if (s->role == GCTX_STACK_FORK)
			fprintf(out, " (child %u)", s->trigger);
		else if (s->role == GCTX_STACK_CRASH)
			fprintf(out, " (signal %u)", s->trigger);
		fputc('\n', out);
		if (s->note[0])
			fprintf(out, "    note: %s\n", s->note);
		for (__u32 k = 0; k < s->nframes && k < max_frames; k++) {
			gctx_frame_format(&s->frames[k], line, sizeof(line));
			fprintf(out, "   %s#%-2u %s\n", (int)k == s->site ? ">" : " ", k, line);
		}
		if (s->nframes > max_frames)
			fprintf(out, "     ... %u more\n", s->nframes - max_frames);
	}
	if (n > GCTX_TEXT_MAX_STACKS)
		fprintf(out, "  ... %u more stacks in report --json\n", n - GCTX_TEXT_MAX_STACKS);
	fputc('\n', out);
}

static void json_frame(struct gctx_json *j, const struct gctx_rec_frame *fr)
{
	gctx_json__obj_begin(j);
	gctx_json__key(j, "kind");
	gctx_json__str(j, fr->kind == GCTX_FRAME_PYTHON ? "python" : "native");
	gctx_json__key(j, "function");
	gctx_json__strn(j, fr->function, strnlen(fr->function, sizeof(fr->function)));
	gctx_json__key(j, "file");
	if (fr->file[0])
		gctx_json__strn(j, fr->file, strnlen(fr->file, sizeof(fr->file)));
	else
		gctx_json__null(j);
	gctx_json__key(j, "line");
	if (fr->line)
		gctx_json__u64(j, fr->line);
	else
		gctx_json__null(j);
	if (fr->kind != GCTX_FRAME_PYTHON) {
		gctx_json__key(j, "module");
		gctx_json__strn(j, fr->module, strnlen(fr->module, sizeof(fr->module)));
		gctx_json__key(j, "offset");
		gctx_json__u64(j, fr->offset);
		gctx_json__key(j, "address");
		gctx_json__u64(j, fr->addr);
		if (fr->kind == GCTX_FRAME_INLINE) {
			gctx_json__key(j, "inlined");
			gctx_json__bool(j, true);
		}
	}
	gctx_json__obj_end(j);
}

void gctx_stack_json(struct gctx_json *j, const struct gctx_stack *s)
{
	char site[640];

	gctx_json__obj_begin(j);
	gctx_json__key(j, "pid");
	gctx_json__u64(j, s->pid);
	gctx_json__key(j, "tid");
	gctx_json__u64(j, s->tid);
	gctx_json__key(j, "role");
	gctx_json__str(j, gctx_stack_role_name(s->role));
	gctx_json__key(j, "trigger");
	gctx_json__u64(j, s->trigger);
	gctx_json__key(j, "time_ns");
	gctx_json__u64(j, s->ts_ns);
	gctx_json__key(j, "note");
	gctx_json__str(j, s->note[0] ? s->note : NULL);
	gctx_json__key(j, "python");
	if (s->py_version) {
		snprintf(site, sizeof(site), "%u.%u", s->py_version >> 24,
			 (s->py_version >> 16) & 0xff);
		gctx_json__str(j, site);
	} else {
		gctx_json__null(j);
	}
	gctx_json__key(j, "site_index");
	if (s->site >= 0)
		gctx_json__u64(j, s->site);
	else
		gctx_json__null(j);
	gctx_json__key(j, "site");
	gctx_site_format(s, site, sizeof(site));
	gctx_json__str(j, site);
	gctx_json__key(j, "frames");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < s->nframes; i++)
		json_frame(j, &s->frames[i]);
	gctx_json__arr_end(j);
	gctx_json__obj_end(j);
}

void gctx_sites_json(struct gctx_json *j, const struct gctx_model *m, const struct gctx_finding *f)
{
	const struct gctx_stack *st[GCTX_STACK_ROLE_MAX];
	char site[640];

	gctx_finding_stacks(m, f, st);
	gctx_json__key(j, "stacks");
	gctx_json__obj_begin(j);
	for (__u32 r = 1; r < GCTX_STACK_ROLE_MAX; r++) {
		if (!st[r])
			continue;
		gctx_json__key(j, gctx_stack_role_name(r));
		gctx_json__arr_begin(j);
		for (__u32 i = 0; i < st[r]->nframes; i++)
			json_frame(j, &st[r]->frames[i]);
		gctx_json__arr_end(j);
	}
	gctx_json__obj_end(j);
	gctx_json__key(j, "sites");
	gctx_json__obj_begin(j);
	for (__u32 r = 1; r < GCTX_STACK_ROLE_MAX; r++) {
		if (!st[r])
			continue;
		gctx_json__key(j, gctx_stack_role_name(r));
		gctx_json__obj_begin(j);
		gctx_json__key(j, "pid");
		gctx_json__u64(j, st[r]->pid);
		gctx_json__key(j, "text");
		gctx_site_format(st[r], site, sizeof(site));
		gctx_json__str(j, site);
		gctx_json__key(j, "frame");
		if (st[r]->site >= 0)
			json_frame(j, &st[r]->frames[st[r]->site]);
		else
			gctx_json__null(j);
		gctx_json__key(j, "note");
		gctx_json__str(j, st[r]->note[0] ? st[r]->note : NULL);
		gctx_json__obj_end(j);
	}
	gctx_json__obj_end(j);
}

void gctx_frame_json(struct gctx_json *j, const struct gctx_rec_frame *fr)
{
	json_frame(j, fr);
}

void gctx_stack_stats_json(struct gctx_json *j, const struct gctx_model *m)
{
	const struct gctx_rec_stack_drops *d = gctx_model__stack_drops(m);

	gctx_json__key(j, "stack_stats");
	if (!d) {
		gctx_json__null(j);
		return;
	}
	gctx_json__obj_begin(j);
	gctx_json__key(j, "lost");
	gctx_json__u64(j, d->lost);
	gctx_json__key(j, "unresolved");
	gctx_json__u64(j, d->unresolved);
	gctx_json__key(j, "resolved");
	gctx_json__u64(j, d->resolved);
	gctx_json__key(j, "resolve_ns");
	gctx_json__u64(j, d->resolve_ns);
	gctx_json__key(j, "resolve_max_ns");
	gctx_json__u64(j, d->resolve_max_ns);
	gctx_json__obj_end(j);
}

void gctx_stack_stats_print(FILE *out, const struct gctx_model *m)
{
	const struct gctx_rec_stack_drops *d = gctx_model__stack_drops(m);

	if (d && (d->lost || d->unresolved))
		fprintf(out,
			"  WARNING: %llu stack%s lost (ring buffer full), %llu not resolved: "
			"some sites may be missing\n\n",
			(unsigned long long)d->lost, d->lost == 1 ? "" : "s",
			(unsigned long long)d->unresolved);
}
