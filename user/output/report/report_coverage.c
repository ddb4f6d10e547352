// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report's "API coverage" section, text and JSON: whether every CUDA/HIP call of every
 * process could be seen, and if not, which process could call which library unseen, when and
 * why. A clean verdict means nothing if calls were missed: this says which.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "output/report/print.h"
#include "output/report/report_priv.h"

static const char *released_by(__u32 by)
{
	static const char *const names[] = {"collector", "timeout", "foreign-sigcont",
					    "parent-waited", "gpuctx-signalled"};

	return by < sizeof(names) / sizeof(names[0]) ? names[by] : "?";
}

static __u64 hold_ns(const struct gctx_rec_hold *h)
{
	return h->to_ns > h->from_ns ? h->to_ns - h->from_ns : 0;
}

/* A forked child held until its own probes were attached (childprobe.h), not a mapping. */
static bool fork_hold(const struct gctx_rec_hold *h)
{
	return h->flags & GCTX_HOLD_REC_FORK;
}

/* Holds of one kind: their number and the longest. */
static __u32 holds_of(const struct gctx_model *m, bool forks, __u64 *longest)
{
	__u32 n = 0;

	*longest = 0;
	for (__u32 i = 0; i < gctx_model__nholds(m); i++) {
		const struct gctx_rec_hold *h = gctx_model__hold(m, i);

		if (fork_hold(h) != forks)
			continue;
		n++;
		if (hold_ns(h) > *longest)
			*longest = hold_ns(h);
	}
	return n;
}

void rep_text_coverage(struct rep_ctx *c)
{
	__u32 ngaps = gctx_model__ngaps(c->m), nholds = gctx_model__nholds(c->m), nforks;
	char lib[GCTX_ESC_SIZE(GCTX_PATH_LEN)], t1[32], t2[32];
	__u64 longest, longest_fork;

	if (!ngaps && !nholds && !gctx_model__nprobes(c->m))
		return; /* no API tracing in this recording */
	nholds = holds_of(c->m, false, &longest);
	nforks = holds_of(c->m, true, &longest_fork);
	if (!ngaps) {
		fputs(
		    "API coverage: complete: every CUDA/HIP library was probed before the process "
		    "mapping it could call it",
		    c->out);
		if (nholds)
			fprintf(c->out, " (%u mapping%s held until probed, longest %.1f ms)",
				nholds, rep_plural(nholds), longest / 1e6);
		if (nforks)
			fprintf(c->out,
				"; %u forked child%s with GPU state held until probed for %s "
				"alone, longest %.1f ms",
				nforks, nforks == 1 ? "" : "ren", nforks == 1 ? "it" : "each",
				longest_fork / 1e6);
		fputs("\n\n", c->out);
		return;
	}
	fprintf(c->out,
		"API coverage: INCOMPLETE: %u window%s where CUDA/HIP calls could not be "
		"seen; findings cannot rule out inherited contexts there:\n",
		ngaps, rep_plural(ngaps));
	for (__u32 i = 0; i < ngaps; i++) {
		const struct gctx_api_gap *g = gctx_model__gap(c->m, i);
		const struct gctx_proc *p = g->has_proc ? rep_proc(c->m, g->proc_idx) : NULL;

		gctx_format_str(lib, sizeof(lib), g->r.lib, sizeof(g->r.lib));
		if (g->r.reason == GCTX_GAP_LOST) {
			fprintf(c->out, "  %s (ring buffer full): which processes is unknown\n",
				lib);
			continue;
		}
		rep_text_time(t1, sizeof(t1), c, g->r.from_ns);
		if (g->r.to_ns)
			rep_text_time(t2, sizeof(t2), c, g->r.to_ns);
		else
			snprintf(t2, sizeof(t2), "the end");
		fprintf(c->out, "  pid %u (%.16s) %s: from %s to %s (%s)", g->r.pid,
			p ? p->comm : "?", lib, t1, t2, gctx_gap_reason_name(g->r.reason));
		if (g->finding_id)
			fprintf(c->out, ", finding #%u", g->finding_id);
		fputc('\n', c->out);
	}
	if (nholds)
		fprintf(c->out, "  %u mapping%s held until probed or timed out, longest %.1f ms\n",
			nholds, rep_plural(nholds), longest / 1e6);
	if (nforks)
		fprintf(c->out,
			"  %u forked child%s held until probed or timed out, longest %.1f ms\n",
			nforks, nforks == 1 ? "" : "ren", longest_fork / 1e6);
	fputc('\n', c->out);
}

static void key_u64(struct gctx_json *j, const char *k, __u64 v)
{
	gctx_json__key(j, k);
	gctx_json__u64(j, v);
}

static void key_lib(struct gctx_json *j, const char *lib, size_t n)
{
	gctx_json__key(j, "lib");
	gctx_json__strn(j, lib, strnlen(lib, n));
}

static void json_holds(struct gctx_json *j, const struct gctx_model *m, bool forks)
{
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < gctx_model__nholds(m); i++) {
		const struct gctx_rec_hold *h = gctx_model__hold(m, i);

		if (fork_hold(h) != forks)
			continue;
		gctx_json__obj_begin(j);
		key_u64(j, "pid", h->pid);
		key_u64(j, "tid", h->tid);
		key_lib(j, h->lib, sizeof(h->lib));
		key_u64(j, "from_ns", h->from_ns);
		key_u64(j, "to_ns", h->to_ns);
		key_u64(j, "held_ns", hold_ns(h));
		gctx_json__key(j, "released_by");
		gctx_json__str(j, released_by(h->released_by));
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
}

void rep_json_coverage(struct gctx_json *j, const struct gctx_model *m)
{
	__u32 ngaps = gctx_model__ngaps(m);

	gctx_json__key(j, "api_coverage");
	gctx_json__obj_begin(j);
	gctx_json__key(j, "complete");
	gctx_json__bool(j, ngaps == 0);
	gctx_json__key(j, "gaps");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < ngaps; i++) {
		const struct gctx_api_gap *g = gctx_model__gap(m, i);

		gctx_json__obj_begin(j);
		key_u64(j, "pid", g->r.pid);
		key_u64(j, "tid", g->r.tid);
		key_lib(j, g->r.lib, sizeof(g->r.lib));
		gctx_json__key(j, "reason");
		gctx_json__str(j, gctx_gap_reason_name(g->r.reason));
		key_u64(j, "from_ns", g->r.from_ns);
		gctx_json__key(j, "to_ns");
		if (g->r.to_ns)
			gctx_json__u64(j, g->r.to_ns);
		else
			gctx_json__null(j);
		gctx_json__key(j, "finding");
		if (g->finding_id)
			gctx_json__u64(j, g->finding_id);
		else
			gctx_json__null(j);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	/* holds: library mappings; fork_holds: forked children held for their own probes */
	for (int forks = 0; forks < 2; forks++) {
		gctx_json__key(j, forks ? "fork_holds" : "holds");
		json_holds(j, m, forks);
	}
	gctx_json__obj_end(j);
}
