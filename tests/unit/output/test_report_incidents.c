// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the diagnosis as printed: the text report's first screen (verdict and fix of a
 * 4 workers x 3 epochs DataLoader job within 40 lines), the JSON `summary`, `incidents`,
 * `gpu_init_ns` and `comm_history`, and the JUnit XML CI reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "decode/api.h"
#include "model/analysis.h"
#include "output/report/junit.h"
#include "output/report/report.h"

#include "builders.h"
#include "output_helpers.h"

#define PCTX 0x7ffc0000a000ULL

static void call(struct gctx_model *m, __u32 pid, __u64 ts, const char *comm, __u32 fn, __s64 ret,
		 __u64 out, __u64 a0, __u64 a1)
{
	struct gctx_ev_api e = ev_api(pid, pid, ts, comm, 1000, fn, ret, out);

	e.args[0] = a0;
	e.args[1] = a1;
	feed(m, GCTX_EV_API, &e, sizeof(e));
}

/* python3 train.py (pid 4100) initialises CUDA, then 3 epochs of 4 forked workers that rename
 * themselves pt_data_worker and call cuMemAlloc on the inherited context; touch: they do. */
static struct gctx_model *job_args(bool touch, const char *args, size_t args_len)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_ev_fork f;
	struct gctx_ev_exec x;
	struct gctx_ev_open o;
	struct gctx_ev_exit e;
	struct gctx_rec_end end = {.end_ns = T0 + 9000000000ULL, .exit_status = 0};

	assert_non_null(m);
	f = ev_fork(4000, 4100, T0 + 100000000, "bash", false);
	feed(m, GCTX_EV_FORK, &f, sizeof(f));
	x = ev_exec(4100, T0 + 200000000, "python3", "/usr/bin/python3", args, args_len);
	feed(m, GCTX_EV_EXEC, &x, sizeof(x));
	o = ev_open(4100, T0 + 1200000000, "python3", CTL_FILE, 3, O_RDWR_K | O_CLOEXEC_K);
	feed(m, GCTX_EV_OPEN, &o, sizeof(o));
	call(m, 4100, T0 + 1200000100, "python3", GCTX_CU_INIT, 0, 0, 0, 0);
	call(m, 4100, T0 + 1200000200, "python3", GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, 0x5555a000,
	     PCTX, 0);
	call(m, 4100, T0 + 1200000300, "python3", GCTX_CU_MEM_ALLOC, 0, 0x7f00000000, PCTX, 4096);
	for (__u32 ep = 0; ep < 3; ep++) {
		__u64 base = T0 + 2000000000ULL + ep * 1000000000ULL;

		for (__u32 w = 0; w < 4; w++) {
			__u32 pid = 4101 + ep * 4 + w;

			f = ev_fork(4100, pid, base + w * 1000, "python3", false);
			feed(m, GCTX_EV_FORK, &f, sizeof(f));
			if (touch)
				call(m, pid, base + 100000 + w, "pt_data_worker", GCTX_CU_MEM_ALLOC,
				     3, 0, PCTX, 4096);
			e = ev_exit(pid, pid, base + 500000000 + w, "pt_data_worker", 0, true);
			feed(m, GCTX_EV_EXIT, &e, sizeof(e));
		}
	}
	e = ev_exit(4100, 4100, T0 + 8000000000ULL, "python3", 0, true);
	feed(m, GCTX_EV_EXIT, &e, sizeof(e));
	feed(m, GCTX_REC_END, &end, sizeof(end));
	gctx_model__finish(m);
	return m;
}

static struct gctx_model *job(bool touch)
{
	static const char args[] = "python3\0train.py";

	return job_args(touch, args, sizeof(args));
}

static void test_first_screen(void **state)
{
	struct gctx_model *m = job(true);
	struct gctx_trace_meta meta;
	struct capture c;
	char *text, *p;
	int line = 1;

	meta_fill(&meta, "-- python3 train.py");
	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, &meta), 0);
	text = capture_end(&c);
	assert_contains(text, "Verdict: POISON FORK: pid 4100 (python3 train.py) initialised CUDA "
			      "(primary context, device 0) at 1.200 s, then forked 12 processes "
			      "(pt_data_worker, was python3) without exec in 3 generations");
	assert_contains(text, "     pids: gen 1: 4101 4102 4103 4104; gen 2: 4105 4106 4107 4108; "
			      "gen 3: 4109 4110 4111 4112\n");
	assert_contains(text, "     Fix: Create the DataLoader with multiprocessing_context=");
	/* verdict and fix on the first screen: within 40 lines */
	for (p = text; *p && p < strstr(text, "     Fix: "); p++)
		line += *p == '\n';
	assert_true(line <= 40);
	assert_true(strstr(text, "Verdict: ") < strstr(text, "Processes ("));
	/* names: history and the latest one in the findings */
	assert_contains(text, "4101 python3 -> pt_data_worker");
	assert_contains(text, "pid 4101 (pt_data_worker, was python3)");
	free(text);
	gctx_model__free(m);
}

static void test_json(void **state)
{
	static const char check[] =
	    "import json, sys\n"
	    "d = json.load(open(sys.argv[1]))\n"
	    "s, I = d['summary'], d['incidents']\n"
	    "assert s['verdict'].startswith('POISON FORK: pid 4100'), s\n"
	    "assert s['incidents'] == 1 and s['errors'] == 1 and s['worst'] == 'error', s\n"
	    "assert s['worker_generations'] == 3 and s['complete'] is True, s\n"
	    "assert s['contexts_created'] == 1 and s['startup_max_ns'] == 1000000000, s\n"
	    "assert len(I) == 1, I\n"
	    "i = I[0]\n"
	    "assert i['id'] == 1 and i['kind'] == 'poison-fork' and i['severity'] == 'error', i\n"
	    "assert i['pid'] == 4100 and i['pids'] == list(range(4101, 4113)), i\n"
	    "assert i['generation'] == [1] * 4 + [2] * 4 + [3] * 4, i\n"
	    "assert sorted(i['findings']) == [f['id'] for f in d['findings']], i\n"
	    "assert i['used'] == 12 and i['crashed'] == 0 and i['api'] == 'CUDA', i\n"
	    "assert i['where'] == {'init': None, 'fork': None, 'use': None}, i\n"
	    "assert 'persistent_workers=True' in i['fix'] and i['summary'] == s['verdict'], i\n"
	    "P = {p['pid']: p for p in d['processes']}\n"
	    "assert P[4100]['gpu_init_ns'] == 1000000000, P[4100]\n"
	    "assert P[4101]['gpu_init_ns'] is None, P[4101]\n"
	    "assert P[4101]['comm_history'] == ['python3', 'pt_data_worker'], P[4101]\n"
	    "assert not [f for f in d['findings'] if f['kind'] == 'api-error']\n";
	struct gctx_model *m = job(true);
	char path[] = "/tmp/gctx_inc_json_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	assert_int_equal(gctx_report__json(f, m, NULL), 0);
	assert_int_equal(fclose(f), 0);
	python_run("", check, path);
	unlink(path);
	gctx_model__free(m);
}

static void junit_check(struct gctx_model *m, int fail_on, const char *expect)
{
	struct gctx_analysis *a = gctx_analysis__new(m, T0);
	char path[] = "/tmp/gctx_junit_XXXXXX", err[256];
	int fd = mkstemp(path);

	close(fd);
	assert_non_null(a);
	assert_int_equal(gctx_junit__write_file(path, a, fail_on, "ci", err, sizeof(err)), 0);
	python_run("import sys, xml.etree.ElementTree as ET\n"
		   "r = ET.parse(sys.argv[1]).getroot()\n"
		   "cases = r.findall('./testsuite/testcase')\n"
		   "fails = [c.find('failure') for c in cases if c.find('failure') is not None]\n",
		   expect, path);
	unlink(path);
	gctx_analysis__free(a);
}

static void test_junit(void **state)
{
	struct gctx_model *m = job(true);

	junit_check(m, GCTX_SEV_ERROR,
		    "assert len(cases) == 1 and len(fails) == 1, cases\n"
		    "assert cases[0].get('classname') == 'gpuctx.poison-fork'\n"
		    "assert fails[0].get('type') == 'poison-fork'\n"
		    "assert fails[0].get('message').startswith('POISON FORK: pid 4100'), fails\n"
		    "assert 'Fix: Create the DataLoader' in fails[0].text\n"
		    "assert r.get('failures') == '1'\n");
	junit_check(m, 3 /* never */, "assert len(cases) == 1 and not fails, cases\n");
	gctx_model__free(m);
	/* workers that never touch it: a warning, failing only with --fail-on warning */
	m = job(false);
	junit_check(m, GCTX_SEV_ERROR, "assert len(cases) == 1 and not fails\n");
	junit_check(m, GCTX_SEV_WARNING,
		    "assert len(fails) == 1 and fails[0].get('type') == 'fork-with-gpu-state'\n");
	gctx_model__free(m);
	/* clean: one passing testcase */
	m = gctx_model__new();
	gctx_model__finish(m);
	junit_check(m, GCTX_SEV_ERROR,
		    "assert len(cases) == 1 and not fails and cases[0].get('classname') == "
		    "'gpuctx.clean'\n");
	gctx_model__free(m);
}

/* argv is the traced program's: invalid UTF-8, markup and control bytes still give valid XML */
static void test_junit_hostile_argv(void **state)
{
	static const char args[] = "python3\0tr\xff<&\"\x01]]>.py";
	struct gctx_model *m = job_args(true, args, sizeof(args));

	junit_check(m, GCTX_SEV_ERROR,
		    "msg = fails[0].get('message')\n"
		    "assert 'tr?<&\"?]]>.py' in msg, msg\n");
	gctx_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_screen),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_junit),
	    cmocka_unit_test(test_junit_hostile_argv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
