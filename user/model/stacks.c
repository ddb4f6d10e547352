// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stacks of the rare events (GCTX_REC_STACK records, resolved by the collector) and their
 * sites: the frame in the user's own code that made the call, past the libraries (Python
 * standard library, site-packages, libc, the CUDA/HIP libraries, the interpreter).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/esc.h"
#include "lib/grow.h"
#include "model/model_priv.h"

struct mdl_stacks {
	struct gctx_stack *v;
	__u32 n, cap;
	struct gctx_rec_stack_drops drops;
	bool has_drops;
};

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

bool gctx_frame_is_library(const struct gctx_rec_frame *f)
{
	if (f->kind == GCTX_FRAME_PYTHON) {
		return strstr(f->file, "/site-packages/") || strstr(f->file, "/dist-packages/") ||
		       strstr(f->file, "/lib/python") || strstr(f->file, "/lib64/python") ||
		       has_prefix(f->file, "<frozen");
	}
	const char *b = base(f->module);

	/* inlined from a system header (C++ standard library): library code in the user's binary */
	return !f->module[0] || has_prefix(f->file, "/usr/include/") ||
	       has_prefix(f->module, "/lib/") || has_prefix(f->module, "/usr/lib") ||
	       strstr(f->module, "/lib/python") || strstr(f->module, "-packages/") ||
	       has_prefix(f->module, "/lib64/") || has_prefix(b, "libcuda") ||
	       has_prefix(b, "libamdhip") || has_prefix(b, "libpython") ||
	       has_prefix(b, "python") || has_prefix(b, "ld-linux") || has_prefix(b, "libc.so") ||
	       has_prefix(b, "libpthread");
}

int gctx_stack_pick_site(const struct gctx_rec_frame *fr, __u32 n)
{
	bool py = false;

	if (!n)
		return -1;
	for (__u32 i = 0; i < n; i++)
		py |= fr[i].kind == GCTX_FRAME_PYTHON;
	/* in a Python program the user's code is Python: extension modules are libraries */
	for (__u32 i = 0; i < n; i++)
		if ((!py || fr[i].kind == GCTX_FRAME_PYTHON) && !gctx_frame_is_library(&fr[i]))
			return i;
	/* all library code (e.g. a script under site-packages): the innermost Python frame */
	for (__u32 i = 0; i < n; i++)
		if (fr[i].kind == GCTX_FRAME_PYTHON)
			return i;
	return 0;
}

static struct mdl_stacks *stk(struct gctx_model *m)
{
	if (!m->stk)
		m->stk = calloc(1, sizeof(*m->stk));
	return m->stk;
}

void mdl_stacks_free(struct gctx_model *m)
{
	if (!m->stk)
		return;
	for (__u32 i = 0; i < m->stk->n; i++)
		free((void *)m->stk->v[i].frames);
	free(m->stk->v);
	free(m->stk);
	m->stk = NULL;
}

static int feed_stack(struct gctx_model *m, const void *data, __u32 len)
{
	struct mdl_stacks *s = stk(m);
	struct gctx_rec_stack h;
	struct gctx_rec_frame *fr = NULL;
	struct gctx_stack *st;
	__u32 n;

	if (!s)
		return -ENOMEM;
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, data, sizeof(h));
	n = h.nframes;
	if (n > GCTX_STACK_MAX_FRAMES || sizeof(h) + (size_t)n * sizeof(*fr) > len)
		return -EINVAL;
	if (n) {
		fr = malloc(n * sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		memcpy(fr, (const char *)data + sizeof(h), n * sizeof(*fr));
		/* strings from a file: terminate them */
		for (__u32 i = 0; i < n; i++) {
			fr[i].function[sizeof(fr[i].function) - 1] = 0;
			fr[i].file[sizeof(fr[i].file) - 1] = 0;
			fr[i].module[sizeof(fr[i].module) - 1] = 0;
		}
	}
	if (gctx_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
		free(fr);
		return -ENOMEM;
	}
	st = &s->v[s->n];
	memset(st, 0, sizeof(*st));
	st->idx = s->n++;
	st->pid = h.pid;
	st->tid = h.tid;
	st->ts_ns = h.ts_ns;
	st->role = h.role;
	st->trigger = h.trigger;
	st->key = h.key;
	st->py_status = h.py_status;
	st->py_version = h.py_version;
	memcpy(st->note, h.note, sizeof(st->note));
	st->note[sizeof(st->note) - 1] = 0;
	st->frames = fr;
	st->nframes = n;
	st->site = gctx_stack_pick_site(fr, n);
	return 0;
}

int mdl_stack_feed(struct gctx_model *m, __u32 type, const void *data, __u32 len)
{
	struct mdl_stacks *s;

	if (type == GCTX_REC_STACK)
		return feed_stack(m, data, len);
	if (type == GCTX_REC_STACK_DROPS) {
		s = stk(m);
		if (!s)
			return -ENOMEM;
		/* the first two counters are the minimum; later fields are read when present */
		if (len < 2 * sizeof(__u64))
			return -EINVAL;
		memset(&s->drops, 0, sizeof(s->drops));
		memcpy(&s->drops, data, len < sizeof(s->drops) ? len : sizeof(s->drops));
		s->has_drops = true;
	}
	return 0; /* GCTX_EV_STACK: the raw capture, resolved by the collector */
}

__u32 gctx_model__nstacks(const struct gctx_model *m)
{
	return m && m->stk ? m->stk->n : 0;
}

const struct gctx_stack *gctx_model__stack(const struct gctx_model *m, __u32 idx)
{
	return idx < gctx_model__nstacks(m) ? &m->stk->v[idx] : NULL;
}

const struct gctx_stack *gctx_model__stack_for(const struct gctx_model *m, __u32 pid, __u32 role,
					       __u64 match)
{
	const struct gctx_stack *first = NULL;

	for (__u32 i = 0; i < gctx_model__nstacks(m); i++) {
		const struct gctx_stack *s = &m->stk->v[i];

		if (s->pid != pid || s->role != role)
			continue;
		if (!match)
			return s;
		if ((role == GCTX_STACK_FORK && s->trigger == match) || s->key == match)
			return s;
		if (!first)
			first = s;
	}
	return role == GCTX_STACK_FORK ? NULL : first;
}

const struct gctx_rec_frame *gctx_model__site(const struct gctx_model *m, __u32 pid, __u32 role)
{
	const struct gctx_stack *s = gctx_model__stack_for(m, pid, role, 0);

	return s && s->site >= 0 ? &s->frames[s->site] : NULL;
}

const struct gctx_rec_stack_drops *gctx_model__stack_drops(const struct gctx_model *m)
{
	return m && m->stk && m->stk->has_drops ? &m->stk->drops : NULL;
}

const char *gctx_stack_role_name(__u32 role)
{
	static const char *const names[GCTX_STACK_ROLE_MAX] = {
	    [GCTX_STACK_INIT] = "init",	  [GCTX_STACK_FORK] = "fork",	[GCTX_STACK_USE] = "use",
	    [GCTX_STACK_CRASH] = "crash", [GCTX_STACK_RAISE] = "raise",
	};

	return role < GCTX_STACK_ROLE_MAX && names[role] ? names[role] : "?";
}

/* Paths under site-packages read better from the package ("torch/cuda/__init__.py"). */
static const char *short_path(const char *p)
{
	const char *k = strstr(p, "-packages/");

	return k ? k + strlen("-packages/") : p;
}

void gctx_frame_format(const struct gctx_rec_frame *fr, char *buf, size_t len)
{
	char fn[GCTX_ESC_SIZE(GCTX_SFN_LEN)], file[GCTX_ESC_SIZE(GCTX_SFILE_LEN)];
	char mod[GCTX_ESC_SIZE(GCTX_SFILE_LEN)];

	gctx_format_str(fn, sizeof(fn), fr->function, sizeof(fr->function));
	gctx_format_str(file, sizeof(file), short_path(fr->file),
			strnlen(short_path(fr->file), sizeof(fr->file)));
	gctx_format_str(mod, sizeof(mod), base(fr->module),
			strnlen(base(fr->module), sizeof(fr->module)));
	if (fr->kind == GCTX_FRAME_PYTHON) {
		if (fr->line)
			snprintf(buf, len, "%s:%u in %s", file, fr->line, fn);
		else
			snprintf(buf, len, "%s in %s", file, fn);
	} else if (file[0] && fr->line && !gctx_frame_is_library(fr)) {
		snprintf(buf, len, "%s:%u in %s (%s%s)", file, fr->line, fn,
			 fr->kind == GCTX_FRAME_INLINE ? "inlined, " : "", mod[0] ? mod : "?");
	} else if (!fn[0]) {
		snprintf(buf, len, "%s+0x%llx", mod[0] ? mod : "?", (unsigned long long)fr->offset);
	} else {
		snprintf(buf, len, "%s+0x%llx (%s%s)", fn, (unsigned long long)fr->offset,
			 fr->kind == GCTX_FRAME_INLINE ? "inlined, " : "", mod[0] ? mod : "?");
		if (file[0] && fr->line && strlen(buf) + 8 < len)
			snprintf(buf + strlen(buf), len - strlen(buf), " at %s:%u", base(file),
				 fr->line);
	}
}

static bool is_gpu_lib(const char *module)
{
	const char *b = base(module);

	return !strncmp(b, "libcuda", 7) || !strncmp(b, "libamdhip", 9) ||
	       !strncmp(b, "libnvidia", 9) || !strncmp(b, "libhsa", 6);
}

void gctx_site_format(const struct gctx_stack *s, char *buf, size_t len)
{
	size_t o;

	if (!s || s->site < 0 || !s->nframes) {
		snprintf(buf, len, "unknown (%s)", s && s->note[0] ? s->note : "no frames");
		return;
	}
	gctx_frame_format(&s->frames[s->site], buf, len);
	o = strlen(buf);
	/* the library call it made: "<- torch/cuda/__init__.py:300 in _lazy_init", the nearest
	 * inner frame of the same kind, else the GPU library's entry point (cuInit), else the
	 * innermost frame */
	int callee = -1;

	for (int i = s->site - 1; i >= 0 && callee < 0; i--)
		if (s->frames[i].kind == s->frames[s->site].kind)
			callee = i;
	for (int i = s->site - 1; i >= 0 && callee < 0; i--)
		if (is_gpu_lib(s->frames[i].module) && s->frames[i].function[0])
			callee = i;
	if (callee < 0 && s->site > 0)
		callee = 0;
	if (callee >= 0 && o + 8 < len) {
		snprintf(buf + o, len - o, " <- ");
		gctx_frame_format(&s->frames[callee], buf + o + 4, len - o - 4);
	}
}

/* Compaction (compact.c): the stacks of kept processes' pids stay. */
void mdl_stacks_compact(struct gctx_model *m, const struct mdl_remap *r)
{
	struct mdl_stacks *s = m->stk;
	__u32 n = 0, v;

	for (__u32 i = 0; s && i < s->n; i++) {
		if (!gctx_hmap__get(&r->pids, s->v[i].pid, 0, &v)) {
			free((void *)s->v[i].frames);
			continue;
		}
		s->v[n] = s->v[i];
		s->v[n].idx = n;
		n++;
	}
	if (s)
		s->n = n;
}
