// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python exceptions raised in forked children that inherited GPU state (GCTX_EV_PYEXC, from
 * probes attached to such a child alone): kept by pid, as the kernel bounds them (the first
 * GCTX_PYEXC_KEEP of a process, then a count), and at most MAX_KEPT in all. A framework that
 * refuses in Python before any driver call (PyTorch's "Cannot re-initialize CUDA in forked
 * subprocess") is seen only here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/esc.h"
#include "lib/grow.h"
#include "lib/str.h"
#include "model/model_priv.h"

#define MAX_KEPT 65536

struct mdl_pyexc {
	struct gctx_pyexc *v;
	__u32 n, cap;
	__u64 dropped; /* past MAX_KEPT */
};

int mdl_pyexc_feed(struct gctx_model *m, const struct gctx_ev_pyexc *e)
{
	struct mdl_pyexc *x = m->pyexc;
	struct gctx_pyexc *p;

	if (!x) {
		x = m->pyexc = calloc(1, sizeof(*x));
		if (!x)
			return -ENOMEM;
	}
	/* a count-only record raises what the process is known to have raised */
	for (__u32 i = x->n; (e->flags & GCTX_PYEXC_COUNT) && i-- > 0;) {
		if (x->v[i].pid != e->hdr.tgid)
			continue;
		if (e->seq > x->v[i].total)
			x->v[i].total = e->seq;
		return 0;
	}
	if (x->n >= MAX_KEPT) {
		x->dropped++;
		return 0;
	}
	if (gctx_grow(&x->v, &x->cap, x->n + 1, sizeof(*x->v)))
		return -ENOMEM;
	p = &x->v[x->n++];
	memset(p, 0, sizeof(*p));
	p->pid = e->hdr.tgid;
	p->tid = e->hdr.tid;
	p->ts_ns = e->hdr.ts_ns;
	p->seq = e->seq;
	p->total = e->seq;
	p->count_only = e->flags & GCTX_PYEXC_COUNT;
	if (e->flags & GCTX_PYEXC_TYPE_OK)
		gctx_copy_str(p->type, sizeof(p->type), e->type, sizeof(e->type));
	if (e->flags & GCTX_PYEXC_MSG_OK)
		gctx_copy_str(p->msg, sizeof(p->msg), e->msg, sizeof(e->msg));
	return 0;
}

void mdl_pyexc_free(struct gctx_model *m)
{
	if (!m->pyexc)
		return;
	free(m->pyexc->v);
	free(m->pyexc);
	m->pyexc = NULL;
}

/* Compaction (compact.c): the exceptions of kept processes' pids stay. */
void mdl_pyexc_compact(struct gctx_model *m, const struct mdl_remap *r)
{
	struct mdl_pyexc *x = m->pyexc;
	__u32 n = 0, v;

	for (__u32 i = 0; x && i < x->n; i++)
		if (gctx_hmap__get(&r->pids, x->v[i].pid, 0, &v))
			x->v[n++] = x->v[i];
	if (x)
		x->n = n;
}

__u32 gctx_model__npyexcs(const struct gctx_model *m)
{
	return m && m->pyexc ? m->pyexc->n : 0;
}

const struct gctx_pyexc *gctx_model__pyexc(const struct gctx_model *m, __u32 i)
{
	return i < gctx_model__npyexcs(m) ? &m->pyexc->v[i] : NULL;
}

static bool has_ci(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s; s++)
		if (!strncasecmp(s, word, n))
			return true;
	return false;
}

/* "hipErrorNoDevice", "HIP": a word of the HIP runtime, not "ship" or "relationship". */
static bool has_hip(const char *s)
{
	for (const char *p = s; (p = strstr(p, "hip")); p++)
		if ((p == s || !isalpha((unsigned char)p[-1])) && isupper((unsigned char)p[3]))
			return true;
	return strstr(s, "HIP") != NULL;
}

bool gctx_pyexc_about_gpu(const struct gctx_pyexc *e)
{
	static const char *const words[] = {"cuda", "gpu", "driver", "fork", "rocm", "nccl"};
	/* raised and caught to probe for something (hasattr(x, "__cuda_array_interface__"),
	 * os.environ["CUDA_VISIBLE_DEVICES"], import cupy): a look-up, not a refusal */
	static const char *const lookups[] = {"AttributeError",	    "KeyError",	   "IndexError",
					      "LookupError",	    "ImportError", "NameError",
					      "ModuleNotFoundError"};

	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++)
		if (!strcmp(e->type, lookups[i]))
			return false;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (has_ci(e->type, words[i]) || has_ci(e->msg, words[i]))
			return true;
	return has_hip(e->type) || has_hip(e->msg);
}

const struct gctx_pyexc *gctx_model__pyexc_of(const struct gctx_model *m, __u32 proc_idx,
					      __u32 *total)
{
	const struct gctx_proc *p = gctx_model__proc(m, proc_idx);
	const struct gctx_pyexc *about = NULL, *last = NULL;

	*total = 0;
	for (__u32 i = 0; p && i < gctx_model__npyexcs(m); i++) {
		const struct gctx_pyexc *e = &m->pyexc->v[i];

		/* by pid, within the process's life: a pid used again is another process */
		if (e->pid != p->pid || (p->start_ns && e->ts_ns < p->start_ns) ||
		    (p->exit_ns && e->ts_ns > p->exit_ns))
			continue;
		if (e->total > *total)
			*total = e->total;
		if (e->count_only)
			continue;
		last = e;
		if (!about && gctx_pyexc_about_gpu(e))
			about = e;
	}
	return about ? about : last;
}

void gctx_pyexc_name(const struct gctx_pyexc *e, char *buf, size_t len)
{
	char type[GCTX_PYEXC_TYPE_LEN], msg[GCTX_PYEXC_MSG_LEN];

	snprintf(type, sizeof(type), "%s", e->type[0] ? e->type : "an exception");
	snprintf(msg, sizeof(msg), "%s", e->msg);
	/* a message is the traced program's text: it reads as written, nothing acts */
	gctx_printable(type);
	gctx_printable(msg);
	snprintf(buf, len, "%s%s%s", type, msg[0] ? ": " : "", msg);
}

void gctx_pyexc_text(const struct gctx_model *m, const struct gctx_pyexc *e, char *buf, size_t len)
{
	const struct gctx_stack *s = gctx_model__stack_for(m, e->pid, GCTX_STACK_RAISE, e->seq);
	char name[GCTX_PYEXC_TYPE_LEN + GCTX_PYEXC_MSG_LEN + 2], at[160] = "";

	gctx_pyexc_name(e, name, sizeof(name));
	/* the key is the exception's seq: a stack of another raise is not this one's */
	if (s && s->key == e->seq && s->site >= 0 && s->nframes) {
		memcpy(at, " at ", 4);
		gctx_frame_format(&s->frames[s->site], at + 4, sizeof(at) - 4);
	}
	snprintf(buf, len, "%s%s", name, at);
}
