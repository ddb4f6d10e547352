// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of API coverage (model/coverage.c, the api-calls-unseen rule, the report's API
 * coverage section): gap and hold records built by hand around fork records.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "output/report/report.h"

#include "builders.h"

#define LIB "/opt/conda/lib/libcuda.so.1"
#define MS  1000000ULL

static struct gctx_rec_api_gap gap(__u32 pid, __u32 reason, __u64 from, __u64 to)
{
	struct gctx_rec_api_gap g;

	memset(&g, 0, sizeof(g));
	g.pid = pid;
	g.tid = pid;
	g.reason = reason;
	g.from_ns = from;
	g.to_ns = to;
	g.dev = 0x800001; /* a library gap names its file */
	g.ino = 4242;
	snprintf(g.lib, sizeof(g.lib), "%s", LIB);
	return g;
}

static struct gctx_rec_hold hold(__u32 pid, __u32 by, __u64 from, __u64 to)
{
	struct gctx_rec_hold h;

	memset(&h, 0, sizeof(h));
	h.pid = pid;
	h.tid = pid;
	h.released_by = by;
	h.from_ns = from;
	h.to_ns = to;
	snprintf(h.lib, sizeof(h.lib), "%s", LIB);
	return h;
}

/* gpuctx (1) forks the trainer (100); 100 forks 101 before the gap and 102 during it. */
static struct gctx_model *family(void)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_ev_fork f;

	assert_non_null(m);
	f = ev_fork(1, 100, T0, "gpuctx", false);
	feed(m, GCTX_EV_FORK, &f, sizeof(f));
	f = ev_fork(100, 101, T0 + 5 * MS, "python3", false);
	feed(m, GCTX_EV_FORK, &f, sizeof(f));
	f = ev_fork(100, 102, T0 + 30 * MS, "python3", false);
	feed(m, GCTX_EV_FORK, &f, sizeof(f));
	return m;
}

static __u32 idx(const struct gctx_model *m, __u32 pid)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(m, pid);

	assert_non_null(p);
	return p->idx;
}

static void test_gap_finding(void **state)
{
	struct gctx_model *m = family();
	struct gctx_rec_api_gap g = gap(100, GCTX_GAP_NO_HOLD, T0 + 10 * MS, T0 + 40 * MS);
	const struct gctx_finding *f;
	const struct gctx_api_gap *ag;

	(void)state;
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_API_CALLS_UNSEEN);
	assert_string_equal(gctx_finding_kind_name(f->kind), "api-calls-unseen");
	assert_int_equal(f->severity, GCTX_SEV_WARNING);
	assert_int_equal(f->pid, 100);
	assert_true(f->time_ns == T0 + 10 * MS);
	assert_non_null(strstr(f->detail, LIB));
	assert_non_null(strstr(f->detail, "30.0 ms"));
	assert_non_null(strstr(f->detail, "--no-hold"));
	assert_int_equal(gctx_model__ngaps(m), 1);
	ag = gctx_model__gap(m, 0);
	assert_true(ag->has_proc);
	assert_int_equal(ag->finding_id, f->id);
	assert_string_equal(gctx_gap_reason_name(ag->r.reason), "no-hold");
	/* the process, and the child forked during the gap, are incomplete; the earlier child
	 * and gpuctx are not */
	assert_int_equal(gctx_model__api_unseen(m, idx(m, 100)), 1);
	assert_int_equal(gctx_model__api_unseen(m, idx(m, 102)), 1);
	assert_int_equal(gctx_model__api_unseen(m, idx(m, 101)), 0);
	assert_int_equal(gctx_model__api_unseen(m, idx(m, 1)), 0);
	gctx_model__free(m);
}

static char *report(const struct gctx_model *m, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(json ? gctx_report__json(f, m, NULL) : gctx_report__text(f, m, NULL), 0);
	fclose(f);
	return buf;
}

/* A gap to the end of the trace, a gap of a process not in the trace, a short record. */
/* A child forked with GPU state that ran before its own probes were in (no file): the finding
 * says so, and the fork's warning says the child was not seen using the files rather than
 * that it never used them. */
static void test_gap_fork(void **state)
{
	struct gctx_model *m = family();
	struct gctx_rec_api_gap g = gap(102, GCTX_GAP_HOLD_TIMEOUT, T0 + 30 * MS, 0);
	const struct gctx_finding *f;

	(void)state;
	g.dev = 0;
	g.ino = 0;
	snprintf(g.lib, sizeof(g.lib), "forked child: no API function probed for it");
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_API_CALLS_UNSEEN);
	assert_non_null(strstr(f->detail, "pid 102 (python3), forked holding its parent's GPU "
					  "state, ran without its own CUDA/HIP probes to its end"));
	assert_non_null(strstr(f->detail, "--hold-timeout"));
	assert_null(strstr(f->detail, "mapped"));
	assert_int_equal(gctx_model__proc_by_pid(m, 102)->api_gaps, 1);
	assert_int_equal(gctx_model__proc_by_pid(m, 101)->api_gaps, 0);
	gctx_model__free(m);
}

static void test_gap_edges(void **state)
{
	struct gctx_model *m = family();
	struct gctx_rec_api_gap g = gap(100, GCTX_GAP_PROBE_FAILED, T0 + 10 * MS, 0);
	char *txt;

	(void)state;
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	assert_non_null(strstr(gctx_model__finding(m, 0)->detail, "to the end"));
	g = gap(4242, GCTX_GAP_HOLD_TIMEOUT, T0, T0 + MS);
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	assert_int_equal(gctx_model__ngaps(m), 2);
	assert_false(gctx_model__gap(m, 1)->has_proc);
	assert_int_equal(gctx_model__nfindings(m), 1); /* no process to blame: no finding */
	assert_int_equal(gctx_model__feed(m, GCTX_REC_API_GAP, &g, sizeof(g) - 1), -EINVAL);
	assert_int_equal(gctx_model__ngaps(m), 2);
	assert_null(gctx_model__gap(m, 2));
	gctx_model__free(m);
	/* lost mappings name no process: no finding, and no "No findings" verdict either */
	m = family();
	g = gap(0, GCTX_GAP_LOST, 0, 0);
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	assert_int_equal(gctx_model__nfindings(m), 0);
	txt = report(m, false);
	assert_null(strstr(txt, "No findings."));
	assert_non_null(strstr(txt, "API calls may be missing"));
	assert_non_null(strstr(txt, "which processes is unknown"));
	free(txt);
	gctx_model__free(m);
}

static void test_report_complete(void **state)
{
	struct gctx_model *m = family();
	struct gctx_rec_hold h = hold(100, 0, T0 + 10 * MS, T0 + 13 * MS);
	char *txt, *js;

	(void)state;
	feed(m, GCTX_REC_HOLD, &h, sizeof(h));
	assert_int_equal(gctx_model__nholds(m), 1);
	assert_int_equal(gctx_model__nfindings(m), 0);
	txt = report(m, false);
	assert_non_null(strstr(txt, "API coverage: complete"));
	assert_non_null(strstr(txt, "1 mapping held until probed, longest 3.0 ms"));
	js = report(m, true);
	assert_non_null(strstr(js, "\"complete\": true"));
	assert_non_null(strstr(js, "\"released_by\": \"collector\""));
	assert_non_null(strstr(js, "\"held_ns\": 3000000"));
	assert_null(strstr(js, "\"api_trace_complete\": false"));
	free(txt);
	free(js);
	gctx_model__free(m);
}

static void test_report_incomplete(void **state)
{
	struct gctx_model *m = family();
	struct gctx_rec_api_gap g = gap(100, GCTX_GAP_HOLD_TIMEOUT, T0 + 10 * MS, T0 + 600 * MS);
	struct gctx_rec_hold h = hold(100, 1, T0 + 10 * MS, T0 + 600 * MS);
	char *txt, *js;

	(void)state;
	feed(m, GCTX_REC_HOLD, &h, sizeof(h));
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	txt = report(m, false);
	assert_non_null(strstr(txt, "API coverage: INCOMPLETE: 1 window"));
	assert_non_null(strstr(txt, "pid 100 (python3) " LIB));
	assert_non_null(strstr(txt, "(hold-timeout), finding #1"));
	assert_null(strstr(txt, "No findings"));
	js = report(m, true);
	assert_non_null(strstr(js, "\"complete\": false"));
	assert_non_null(strstr(js, "\"reason\": \"hold-timeout\""));
	assert_non_null(strstr(js, "\"released_by\": \"timeout\""));
	assert_non_null(strstr(js, "\"api_trace_complete\": false"));
	free(txt);
	free(js);
	gctx_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gap_finding),	      cmocka_unit_test(test_gap_fork),
	    cmocka_unit_test(test_gap_edges),	      cmocka_unit_test(test_report_complete),
	    cmocka_unit_test(test_report_incomplete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
