// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Chrome JSON export: a small training job written as a trace file, exported, then parsed by
 * python3's json module in strict mode (duplicate keys, NaN/Infinity and invalid UTF-8 fail)
 * and checked for what a user looks for in chrome://tracing or ui.perfetto.dev: processes and
 * threads named, GPU file and context tracks in their process, B/E slices that nest, the v2
 * flows from a parent to its child and from a GPU file or context to its inherited use,
 * counters, and findings searchable by kind with every field as an arg.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "output/timeline/chrome.h"
#include "output/timeline/export.h"
#include "gpuctx_events.h"
#include "trace/tracefile.h"

#include "builders.h"

#define LANE "1000000" /* GCTX_CHROME_LANE_TID: GPU tracks' JSON thread ids */

/* ---- python checks ---- */

/* The common part of every check: strict load, the events by kind, nesting and flows. */
static const char prelude_py[] =
    "import json, sys\n"
    "def pairs(kv):\n"
    "    d = {}\n"
    "    for k, v in kv:\n"
    "        assert k not in d, 'duplicate key %r' % k\n"
    "        d[k] = v\n"
    "    return d\n"
    "def bad_const(c):\n"
    "    raise ValueError('non-standard number ' + c)\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    d = json.loads(fh.read().decode('utf-8', 'strict'), object_pairs_hook=pairs,\n"
    "                   parse_constant=bad_const)\n"
    "E = d['traceEvents']\n"
    "assert d['displayTimeUnit'] == 'ns'\n"
    "M = {}\n"
    "for e in E:\n"
    "    if e['ph'] == 'M':\n"
    "        M[(e['name'], e['pid'], e['tid'])] = e['args']['name']\n"
    "    else:\n"
    "        assert isinstance(e['ts'], (int, float)), e\n"
    "def ns(e):\n"
    "    return round(e['ts'] * 1000)\n"
    "def key(e):\n"
    "    return (ns(e), -1 if e['ph'] == 'E' else 1, E.index(e))\n"
    "stacks, slices = {}, []\n"
    "for e in sorted([e for e in E if e['ph'] in 'BE'], key=key):\n"
    "    st = stacks.setdefault((e['pid'], e['tid']), [])\n"
    "    if e['ph'] == 'B':\n"
    "        st.append(e)\n"
    "    else:\n"
    "        assert st, 'E without B: %r' % e\n"
    "        b = st.pop()\n"
    "        b['end'] = e\n"
    "        slices.append(b)\n"
    "assert not any(stacks.values()), 'unclosed slices'\n"
    "outs = {e['bind_id']: e for e in E if e.get('flow_out')}\n"
    "ins = {e['bind_id']: e for e in E if e.get('flow_in')}\n"
    "assert set(outs) == set(ins), 'flows without both ends'\n"
    "for i in outs:\n"
    "    assert ns(outs[i]) <= ns(ins[i]) and outs[i]['ph'] in 'BX' and ins[i]['ph'] in 'BX'\n"
    "def one(lst, what):\n"
    "    assert len(lst) == 1, '%s: %d found' % (what, len(lst))\n"
    "    return lst[0]\n"
    "def ev(ph=None, name=None, pid=None, tid=None):\n"
    "    return [e for e in E if (ph is None or e['ph'] == ph) and\n"
    "            (name is None or e.get('name') == name) and\n"
    "            (pid is None or e['pid'] == pid) and (tid is None or e['tid'] == tid)]\n"
    "def track(pid, name):\n"
    "    return one([t for (k, p, t), n in M.items()\n"
    "                if k == 'thread_name' and p == pid and n == name], name)\n";

static void python_check(const char *json_path, const char *body)
{
	python_run(prelude_py, body, json_path);
}

/* Export the scenario with worker_comm as JSON; the path of the output (caller unlinks). */
static char *export_scenario(const char *worker_comm)
{
	char trace[] = "/tmp/gctx_test_chrome_trace_XXXXXX";
	static char out[64];
	char err[512];
	int fd = mkstemp(trace);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(trace, worker_comm);
	snprintf(out, sizeof(out), "/tmp/gctx_test_chrome_out_XXXXXX");
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	if (gctx_export_file(trace, out, GCTX_EXPORT_CHROME, err, sizeof(err)))
		fail_msg("export failed: %s", err);
	assert_string_equal(err, "");
	unlink(trace);
	return out;
}

/* ---- tests ---- */

static void test_processes_and_threads(void **state)
{
	char *out = export_scenario("pt_worker");

	python_check(out,
		     /* titled by name: the final comm of each process */
		     "assert M[('process_name', 1000, 1000)] == 'trainer'\n"
		     "names = [e['args']['name'] for e in E if e['ph'] == 'M' and\n"
		     "         e['name'] == 'process_name' and e['pid'] == 1001]\n"
		     "assert names[-1] == 'pt_worker', names\n"
		     "assert M[('thread_name', 1000, 1100)] == 'trainer'\n"
		     /* the process's life from fork to exit on its main thread */
		     "life = one([s for s in slices if s['name'] == 'process 1000'], 'life')\n"
		     "assert (life['pid'], life['tid']) == (1000, 1000)\n"
		     "assert ns(life) == 1000001000 and ns(life['end']) == 1000014000\n"
		     "assert life['args']['ppid'] == 999\n"
		     "assert life['end']['args'] == {'exit_code': 0, 'comm': 'trainer'}\n"
		     "w = one([s for s in slices if s['name'] == 'process 1001'], 'worker')\n"
		     "assert w['end']['args'] == {'signal': 'SIGSEGV', 'core_dumped': True,\n"
		     "                            'comm': 'pt_worker'}\n"
		     /* the recording's global events: pid 0 is named, not a nameless process */
		     "assert M[('process_name', 0, 0)] == 'gpuctx recording'\n"
		     "assert w['args']['argv'] == ['python3', 'train.py', '--epochs', '1']\n"
		     /* the exec with its new argv, on the process */
		     "x = one(ev('i', 'exec python3', 1000), 'exec')\n"
		     "assert x['s'] == 'p' and x['args']['argv'][0] == 'python3'\n"
		     /* the thread's life, nested in the process as a thread */
		     "t = one([s for s in slices if s['name'] == 'thread 1100'], 'thread')\n"
		     "assert (t['pid'], t['tid']) == (1000, 1100)\n"
		     "assert ns(t) == 1000008000 and ns(t['end']) == 1000010000\n"
		     /* nanosecond times: microseconds with three decimals */
		     "assert life['ts'] == 1000001.0\n"
		     /* the recording's start on the wall clock, to line up with logs */
		     "assert d['metadata']['start_wall_ns'] == 1763704992123456789\n"
		     "assert d['metadata']['start_mono_ns'] == 1000000000\n"
		     "assert d['metadata']['clock'] == 'CLOCK_MONOTONIC'\n");
	unlink(out);
}

static void test_gpu_tracks(void **state)
{
	char *out = export_scenario("pt_worker");

	python_check(
	    out,
	    /* GPU files and contexts: threads of their process, above any kernel tid */
	    "f0 = track(1000, 'file #1 nvidiactl')\n"
	    "f1 = track(1001, 'file #1 nvidiactl')\n"
	    "assert f0 > " LANE "000 and f1 > " LANE "000 and f0 != f1\n"
	    "cl = track(1000, 'ctx rm-client 0xc1d00001 (NV01_ROOT_CLIENT)')\n"
	    "tsg = track(1000, 'ctx rm-channel-group 0xcaf00003 (KEPLER_CHANNEL_GROUP_A)')\n"
	    /* holding slices: opened, inherited */
	    "o = one([s for s in slices if s['tid'] == f0 and s['name'] == 'opened'], 'o')\n"
	    "assert ns(o) == 1000003000 and o['args']['fds'] == [3]\n"
	    "assert o['args']['path'] == '/dev/nvidiactl'\n"
	    "i = one([s for s in slices if s['tid'] == f1 and\n"
	    "         s['name'] == 'inherited from 1000'], 'inherited')\n"
	    "assert ns(i) == 1000011000\n"
	    /* the context's life and the ioctls with decoded names and status */
	    "c = [s for s in slices if s['tid'] == cl and s['cat'] == 'gpu-context']\n"
	    "assert ns(one(c, 'client')['end']) == 1000014000\n"
	    "a = [s for s in slices if s['tid'] == f0 and s['name'] == 'RM_ALLOC']\n"
	    "assert a and a[0]['args']['status'] == 'NV_OK', a\n"
	    "r = one([s for s in slices if s['tid'] == tsg and s['name'] == 'RM_CONTROL'],\n"
	    "        'thread ioctl')\n"
	    "assert r['args']['tid'] == 1100\n"
	    "r = one([s for s in slices if s['tid'] == f1 and s['name'] == 'RM_CONTROL'],\n"
	    "        'worker ioctl')\n"
	    "assert ns(r) == 1000012000 and ns(r['end']) == 1000012500\n"
	    /* counters */
	    "m = ev('C', 'GPU memory allocated (driver objects)', 1000)\n"
	    "assert m[0]['args'] == {'bytes': 1073741824}, m\n"
	    "f = [e['args']['count'] for e in ev('C', 'live GPU files', 1000)]\n"
	    "assert f == [1, 0], f\n"
	    "assert ev('C', 'ioctl rate', 1000)[0]['args'] == {'ioctls/s': 500}\n");
	unlink(out);
}

static void test_flows(void **state)
{
	char *out = export_scenario("pt_worker");

	python_check(
	    out, "def dest(src):\n"
		 "    return ins[src['bind_id']]\n"
		 /* fork: the forking thread -> the child's life */
		 "s = one(ev('X', 'fork 1001', 1000, 1000), 'fork')\n"
		 "assert s['dur'] == 0 and s['flow_out'] is True\n"
		 "t = dest(s)\n"
		 "assert (t['ph'], t['name'], t['pid'], t['tid']) == ('B', 'process 1001', 1001, "
		 "1001)\n"
		 "t = dest(one(ev('X', 'clone thread 1100', 1000, 1000), 'clone'))\n"
		 "assert (t['name'], t['tid']) == ('thread 1100', 1100)\n"
		 /* inheritance: the parent's file -> the child's holding */
		 "f0 = track(1000, 'file #1 nvidiactl')\n"
		 "f1 = track(1001, 'file #1 nvidiactl')\n"
		 "t = dest(one(ev('X', 'inherited by 1001', 1000, f0), 'inherit'))\n"
		 "assert (t['name'], t['pid'], t['tid']) == ('inherited from 1000', 1001, f1)\n"
		 /* the inherited use: the context it addressed -> the child's call */
		 "tsg = track(1000, 'ctx rm-channel-group 0xcaf00003 (KEPLER_CHANNEL_GROUP_A)')\n"
		 "t = dest(one(ev('X', 'used by 1001 (inherited)', 1000, tsg), 'use'))\n"
		 "assert (t['name'], t['pid'], t['tid']) == ('RM_CONTROL', 1001, f1)\n");
	unlink(out);
}

static void test_findings(void **state)
{
	char *out = export_scenario("pt_worker");

	python_check(
	    out,
	    "fields = ('id', 'kind', 'severity', 'pid', 'tid', 'opener_pid', 'file_id',\n"
	    "          'device_kind', 'time_ns', 'event', 'related_finding', 'chain',\n"
	    "          'exec_between', 'later_used', 'uses', 'errno', 'status', 'call',\n"
	    "          'detail')\n"
	    "F = [e for e in E if e.get('cat') == 'finding']\n"
	    "assert len(F) == 3, F\n"
	    "for f in F:\n"
	    "    assert f['ph'] == 'i' and f['s'] == 'p' and f['pid'] == 1001, f\n"
	    "    assert f['name'] == '%s (%s)' % (f['args']['kind'], f['args']['severity'])\n"
	    "    assert all(k in f['args'] for k in fields), f['args']\n"
	    /* a search for the kind finds exactly that finding */
	    "u = one([e for e in E if 'inherited-gpu-use' in e.get('name', '')], 'use')\n"
	    "a = u['args']\n"
	    "assert ns(u) == 1000012000 and a['chain'] == [1000, 1001], a\n"
	    "assert a['call'] == 'RM_CONTROL' and a['severity'] == 'error', a\n"
	    "c = one([e for e in E if 'crash-after-inheritance' in e.get('name', '')], 'crash')\n"
	    "assert c['args']['call'] == 'SIGSEGV' and c['args']['related_finding'] == "
	    "a['id']\n");
	unlink(out);
}

static void test_hostile_names(void **state)
{
	/* quotes, backslashes, a newline, a control character and invalid UTF-8 in a comm */
	char *out = export_scenario("w\"\\\n\x01\xff\xfe'q");

	python_check(out,
		     "names = [e['args']['name'] for e in E if e['ph'] == 'M' and\n"
		     "         e['name'] == 'process_name' and e['pid'] == 1001]\n"
		     "assert names[-1] == 'w\"\\\\\\n\\x01\\ufffd\\ufffd\\'q', repr(names[-1])\n"
		     "f = one([e for e in E if 'inherited-gpu-use' in e.get('name', '')], 'use')\n"
		     "assert '\\ufffd' in f['args']['detail']\n");
	unlink(out);
}

static void test_streaming_to_memory(void **state)
{
	char trace[] = "/tmp/gctx_test_chrome_mem_XXXXXX";
	struct gctx_trace_reader *r;
	struct gctx_tl_sink *s;
	struct gctx_export_stats st;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int fd = mkstemp(trace);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(trace, "pt_worker");
	r = gctx_trace_reader__open(trace, err, sizeof(err));
	assert_non_null(r);
	f = open_memstream(&buf, &len);
	s = gctx_chrome__new(f);
	assert_non_null(s);
	assert_int_equal(gctx_export_stream(r, trace, s, err, sizeof(err), &st), 0);
	s->ops->free(s);
	gctx_trace_reader__free(r);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(st.records, 15);
	assert_true(st.events > 3 * st.records);
	assert_false(st.truncated);
	/* one event per line inside {"traceEvents":[ ... ]} */
	assert_true(!strncmp(buf, "{\"traceEvents\":[\n{\"ph\":", 22));
	assert_non_null(strstr(buf, "\n],\n\"displayTimeUnit\":\"ns\""));
	free(buf);
	unlink(trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_processes_and_threads),
	    cmocka_unit_test(test_gpu_tracks),
	    cmocka_unit_test(test_flows),
	    cmocka_unit_test(test_findings),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_streaming_to_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
