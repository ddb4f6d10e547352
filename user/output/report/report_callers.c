// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report's call sites: for each API function a process called, who called it (the
 * library and function at the return address), in text and JSON; and the caller of a
 * context's creating call. "Which library initialised CUDA" is the caller of cuInit.
 */
#include <stdio.h>
#include <string.h>

#include "decode/api.h"
#include "output/report/report_priv.h"
#include "output/report/sites.h"

#define REP_MAX_SITES_PER_FN 4 /* callers listed per function in the text report */

/* "init+0x2a (libtorch_cuda.so)", "file.c:12 in f (prog)", or why the place is unknown. */
static void site_format(const struct gctx_callsite *s, char *buf, size_t len)
{
	const struct gctx_rec_caller *r = s->caller;

	if (s->addr == GCTX_CALLSITE_OTHER)
		snprintf(buf, len, "other call sites (more than %d in this process)",
			 GCTX_MAX_CALLSITES);
	else if (!s->addr)
		snprintf(buf, len, "an unknown caller (not recorded)");
	else if (!r)
		snprintf(buf, len, "0x%llx (not resolved)", (unsigned long long)s->addr);
	else if (r->flags & GCTX_CALLER_NO_MAPS)
		snprintf(buf, len, "0x%llx (process gone before its mappings were read)",
			 (unsigned long long)s->addr);
	else if (r->flags & GCTX_CALLER_NO_MODULE)
		snprintf(buf, len, "0x%llx (in no mapped file: JIT code or a trampoline)",
			 (unsigned long long)s->addr);
	else
		gctx_frame_format(&r->frame, buf, len);
}

void rep_text_api_callers(struct rep_ctx *c, const struct gctx_proc *p, __u32 depth)
{
	const __u32 *ix;
	char where[512];
	__u32 n;

	ix = gctx_model__proc_callsites(c->m, p->idx, &n);
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_callsite *s = gctx_model__callsite(c->m, ix[i]), *t;
		__u64 calls = 0;
		__u32 nsites = 0, shown = 0, k;

		/* each function once, at its first call */
		for (k = 0; k < i; k++)
			if (gctx_model__callsite(c->m, ix[k])->fn == s->fn)
				break;
		if (k < i)
			continue;
		for (k = i; k < n; k++) {
			t = gctx_model__callsite(c->m, ix[k]);
			if (t->fn == s->fn) {
				calls += t->calls;
				nsites++;
			}
		}
		rep_text_detail_prefix(c, depth);
		fprintf(c->out, "  %s  %llu call%s", gctx_api_fn_name(s->fn),
			(unsigned long long)calls, rep_plural(calls));
		if (nsites == 1) {
			site_format(s, where, sizeof(where));
			fprintf(c->out, "  from %s\n", where);
			continue;
		}
		fprintf(c->out, " from %u call sites\n", nsites);
		for (k = i; k < n && shown < REP_MAX_SITES_PER_FN; k++) {
			t = gctx_model__callsite(c->m, ix[k]);
			if (t->fn != s->fn)
				continue;
			site_format(t, where, sizeof(where));
			rep_text_detail_prefix(c, depth);
			fprintf(c->out, "    %llu from %s\n", (unsigned long long)t->calls, where);
			shown++;
		}
		if (nsites > shown) {
			rep_text_detail_prefix(c, depth);
			fprintf(c->out, "    ... %u more call sites (see JSON)\n", nsites - shown);
		}
	}
}

/* "caller": the frame at the return address, or null when not known. */
static void json_caller(struct gctx_json *j, const struct gctx_callsite *s)
{
	gctx_json__key(j, "caller");
	if (!s || !s->caller)
		gctx_json__null(j); /* a record with an empty module: the address alone is known */
	else
		gctx_frame_json(j, &s->caller->frame);
}

void rep_json_api_callsites(struct gctx_json *j, const struct gctx_model *m,
			    const struct gctx_proc *p)
{
	const __u32 *ix;
	__u32 n;

	ix = gctx_model__proc_callsites(m, p->idx, &n);
	gctx_json__key(j, "api_call_sites");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_callsite *s = gctx_model__callsite(m, ix[i]);

		gctx_json__obj_begin(j);
		gctx_json__key(j, "fn");
		gctx_json__str(j, gctx_api_fn_name(s->fn));
		gctx_json__key(j, "calls");
		gctx_json__u64(j, s->calls);
		gctx_json__key(j, "first_ns");
		gctx_json__u64(j, s->first_ns);
		gctx_json__key(j, "address");
		if (s->addr && s->addr != GCTX_CALLSITE_OTHER)
			gctx_json__u64(j, s->addr);
		else
			gctx_json__null(j);
		gctx_json__key(j, "other_sites");
		gctx_json__bool(j, s->addr == GCTX_CALLSITE_OTHER);
		json_caller(j, s);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
}

void rep_json_ctx_caller(struct gctx_json *j, const struct gctx_model *m,
			 const struct gctx_api_ctx *x)
{
	json_caller(j, x->create_site ? gctx_model__callsite(m, x->create_site - 1) : NULL);
}

void rep_json_caller_stats(struct gctx_json *j, const struct gctx_model *m)
{
	const struct gctx_rec_caller_drops *d = gctx_model__caller_drops(m);

	gctx_json__key(j, "caller_stats");
	if (!d) {
		gctx_json__null(j);
		return;
	}
	const struct {
		const char *key;
		__u64 v;
	} f[] = {{"resolved", d->resolved},
		 {"capped_calls", d->capped},
		 {"resolve_ns", d->resolve_ns},
		 {"resolve_max_ns", d->resolve_max_ns}};

	gctx_json__obj_begin(j);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		gctx_json__key(j, f[i].key);
		gctx_json__u64(j, f[i].v);
	}
	gctx_json__obj_end(j);
}

void rep_text_caller_stats(struct rep_ctx *c)
{
	const struct gctx_rec_caller_drops *d = gctx_model__caller_drops(c->m);

	if (d && d->capped)
		fprintf(c->out,
			"  WARNING: the callers of %llu API call%s were not resolved: more than %d "
			"call sites in one address space\n\n",
			(unsigned long long)d->capped, rep_plural(d->capped),
			GCTX_CALLER_MAX_SITES);
}
