// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reports, fed through a real model: the JSON is checked by parsing it with python3 (so "valid
 * JSON" means what a consumer sees), the text by the lines a reader greps.
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "gpuctx_events.h"
#include "model/model.h"
#include "output/report/report.h"
#include "trace/tracefile.h"

#include "builders.h"
#include "output_helpers.h"

#define NV_TSG	    0x5c000010u
#define NV_CTXSHARE 0x5c000011u
#define CU_CTX	    0x5555a000ULL
#define CMDLINE	    "-- python3 train.py --epochs 1"

/* ---- record builders ---- */

/* A returned CUDA/HIP call of the trainer on thread tid of pid. */
static struct gctx_ev_api ev_call(__u32 pid, __u32 tid, __u64 ts, __u64 dur, __u32 fn, __s64 ret,
				  __u64 out, __u64 a0, __u64 a1)
{
	struct gctx_ev_api e = ev_api(pid, tid, ts, "trainer", dur, fn, ret, out);

	e.args[0] = a0;
	e.args[1] = a1;
	return e;
}

static struct gctx_rec_probe rec_probe(__u32 fn, __u32 how, const char *sym, __u64 sym_off,
				       __u64 off, int err, bool ret)
{
	static const __u8 insn[8] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5};
	struct gctx_rec_probe r;

	memset(&r, 0, sizeof(r));
	r.fn = fn;
	r.how = how;
	r.sym_offset = sym_off;
	r.offset = off;
	r.err = err;
	r.retprobe = ret;
	memcpy(r.insn, insn, sizeof(insn));
	snprintf(r.symbol, sizeof(r.symbol), "%s", sym);
	snprintf(r.lib, sizeof(r.lib), "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
	return r;
}

#define FEED(m, type, ev) assert_int_equal(gctx_model__feed((m), (type), &(ev), sizeof(ev)), 0)

static void feed_end(struct gctx_model *m, __u64 ts)
{
	struct gctx_rec_drops d;
	struct gctx_rec_end end;

	memset(&d, 0, sizeof(d));
	FEED(m, GCTX_REC_DROPS, d);
	memset(&end, 0, sizeof(end));
	end.end_ns = ts;
	end.exit_status = 0;
	end.events = gctx_model__total_events(m);
	FEED(m, GCTX_REC_END, end);
}

/*
 * bash 999 forks trainer 1000, which execs python, opens nvidiactl without O_CLOEXEC, makes an
 * RM client and device, forks 1001; 1001 allocates a channel group through the inherited fd
 * and dies of SIGSEGV; 1000 exits 0.
 */
static struct gctx_model *scenario_model(void)
{
	static const char args[] = "python3\0train.py\0--epochs\0001";
	struct gctx_model *m = gctx_model__new();
	struct gctx_ev_fork fk;
	struct gctx_ev_exec ex;
	struct gctx_ev_open op;
	struct gctx_ev_ioctl io;
	struct gctx_ev_exit et;

	assert_non_null(m);
	fk = ev_fork(999, 1000, T0 + 1000, "bash", false);
	FEED(m, GCTX_EV_FORK, fk);
	ex = ev_exec(1000, T0 + 2000, "trainer", "/usr/bin/python3", args, sizeof(args));
	FEED(m, GCTX_EV_EXEC, ex);
	op = ev_open(1000, T0 + 3000, "trainer", CTL_FILE, 3, O_RDWR_K);
	FEED(m, GCTX_EV_OPEN, op);
	io = ev_rm_alloc(1000, T0 + 4000, "trainer", 3, NV_CLIENT, 0, NV_CLIENT, 0x41, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	io =
	    ev_rm_alloc(1000, T0 + 5000, "trainer", 3, NV_CLIENT, NV_CLIENT, NV_DEVICE, 0x80, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	fk = ev_fork(1000, 1001, T0 + 6000, "trainer", false);
	FEED(m, GCTX_EV_FORK, fk);
	io = ev_rm_alloc(1001, T0 + 7000, "trainer", 3, NV_CLIENT, NV_DEVICE, NV_TSG, 0xa06c, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	et = ev_exit(1001, 1001, T0 + 8000, "trainer", 11 | 0x80, true);
	FEED(m, GCTX_EV_EXIT, et);
	et = ev_exit(1000, 1000, T0 + 9000, "trainer", 0, true);
	FEED(m, GCTX_EV_EXIT, et);
	feed_end(m, T0 + 10000);
	gctx_model__finish(m);
	return m;
}

/*
 * bash 999 forks trainer 2000 (thread 2001); 2000 opens nvidiactl, makes an RM client,
 * initialises CUDA and retains the primary context of device 0, which makes a channel group and
 * a context share; 2000 makes it current, 2001 allocates before pushing it; memory and a launch
 * go to it, three allocations fail. 2000 forks 2002 without exec, which calls cuInit.
 */
static struct gctx_model *api_scenario_model(void)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_rec_probe pr;
	struct gctx_ev_fork fk;
	struct gctx_ev_open op;
	struct gctx_ev_ioctl io;
	struct gctx_ev_exit et;
	struct gctx_ev_api a;
	int i;

	assert_non_null(m);
	pr = rec_probe(GCTX_CU_CTX_CREATE_V4, GCTX_PROBE_SYMBOL, "cuCtxCreate_v4", 0x2f1a0, 0x2f1a4,
		       0, true);
	FEED(m, GCTX_REC_PROBE, pr);
	pr = rec_probe(GCTX_CU_MEM_ALLOC, GCTX_PROBE_PROC_ADDRESS, "cuMemAlloc_v2", 0x41000,
		       0x41000, -2, false);
	FEED(m, GCTX_REC_PROBE, pr);
	fk = ev_fork(999, 2000, T0 + 1000, "bash", false);
	FEED(m, GCTX_EV_FORK, fk);
	fk = ev_fork(2000, 2001, T0 + 1500, "trainer", true);
	FEED(m, GCTX_EV_FORK, fk);
	op = ev_open(2000, T0 + 3000, "trainer", CTL_FILE, 3, O_RDWR_K | O_CLOEXEC_K);
	FEED(m, GCTX_EV_OPEN, op);
	io = ev_rm_alloc(2000, T0 + 4000, "trainer", 3, NV_CLIENT, 0, NV_CLIENT, 0x41, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	a = ev_call(2000, 2000, T0 + 10000, 500, GCTX_CU_INIT, 0, 0, 0, 0);
	FEED(m, GCTX_EV_API, a);
	/* cuDevicePrimaryCtxRetain(pctx, 0) from 20 us to 25 us */
	io =
	    ev_rm_alloc(2000, T0 + 21000, "trainer", 3, NV_CLIENT, NV_CLIENT, NV_TSG, 0xa06c, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	io = ev_rm_alloc(2000, T0 + 22000, "trainer", 3, NV_CLIENT, NV_TSG, NV_CTXSHARE, 0x9067, 0,
			 0);
	FEED(m, GCTX_EV_IOCTL, io);
	a = ev_call(2000, 2000, T0 + 20000, 5000, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, CU_CTX,
		    0x7ffc0000a000ULL, 0);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2000, T0 + 30000, 100, GCTX_CU_CTX_SET_CURRENT, 0, 0, CU_CTX, 0);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2001, T0 + 30500, 100, GCTX_CU_MEM_ALLOC, 0, 0x7f00c0000000ULL,
		    0x7ffc0000a000ULL, 4096);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2001, T0 + 31000, 100, GCTX_CU_CTX_PUSH_CURRENT, 0, 0, CU_CTX, 0);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2000, T0 + 32000, 100, GCTX_CU_MEM_ALLOC, 0, 0x7f00d0000000ULL,
		    0x7ffc0000a000ULL, 2 << 20);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2000, T0 + 33000, 100, GCTX_CU_MEM_ALLOC, 0, 0x7f00d0200000ULL,
		    0x7ffc0000a000ULL, 2 << 20);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2000, T0 + 34000, 100, GCTX_CU_MEM_FREE, 0, 0, 0x7f00d0000000ULL, 0);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(2000, 2000, T0 + 35000, 100, GCTX_CU_LAUNCH_KERNEL, 0, 0, 0x1, 0);
	FEED(m, GCTX_EV_API, a);
	for (i = 0; i < 3; i++) {
		a = ev_call(2000, 2000, T0 + 36000 + i, 100, GCTX_CU_MEM_ALLOC, 2, 0,
			    0x7ffc0000a000ULL, 1ULL << 40);
		FEED(m, GCTX_EV_API, a);
	}
	fk = ev_fork(2000, 2002, T0 + 40000, "trainer", false);
	FEED(m, GCTX_EV_FORK, fk);
	a = ev_call(2002, 2002, T0 + 41000, 100, GCTX_CU_INIT, 3, 0, 0, 0);
	FEED(m, GCTX_EV_API, a);
	et = ev_exit(2002, 2002, T0 + 42000, "trainer", 1 << 8, true);
	FEED(m, GCTX_EV_EXIT, et);
	et = ev_exit(2000, 2000, T0 + 50000, "trainer", 0, true);
	FEED(m, GCTX_EV_EXIT, et);
	feed_end(m, T0 + 60000);
	gctx_model__finish(m);
	return m;
}

/* ---- python helpers ---- */

/* Run a python check over the JSON document: the script reads it as `d` and prints OK. */
static void python_check(const char *json, const char *body)
{
	char jpath[] = "/tmp/gctx_test_report_json_XXXXXX";
	FILE *f;
	int fd = mkstemp(jpath);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(json, f);
	assert_int_equal(fclose(f), 0);
	/* strict UTF-8 decoding: invalid bytes in the document fail the load */
	python_run("import json, sys\n"
		   "with open(sys.argv[1], 'rb') as fh:\n"
		   "    d = json.loads(fh.read().decode('utf-8', 'strict'))\n",
		   body, jpath);
	unlink(jpath);
}

/* ---- reports ---- */

static const char scenario_py[] =
    "P = {p['pid']: p for p in d['processes']}\n"
    "for k in ('meta', 'processes', 'gpu_files', 'gpu_objects', 'findings', 'drops', "
    "'events'):\n"
    "    assert k in d, k\n"
    "m = d['meta']\n"
    "assert m['hostname'] == 'gpu-node-7' and m['kernel'] == '6.18.44', m\n"
    "assert m['version'] == '0.1.0' and m['cmdline'].startswith('-- python3'), m\n"
    "assert m['start_wall_ns'] == 1763704992123456789 and m['start_mono_ns'] == 1000000000\n"
    "assert m['end_ns'] == 1000010000 and m['clean_end'] is True, m\n"
    "assert set(P) == {999, 1000, 1001}, P.keys()\n"
    "a, b = P[1000], P[1001]\n"
    "assert a['ppid'] == 999 and b['ppid'] == 1000\n"
    "assert a['comm'] == 'trainer'\n"
    "assert a['argv'] == ['python3', 'train.py', '--epochs', '1'], a['argv']\n"
    "assert a['exe'] == '/usr/bin/python3', a['exe']\n"
    "assert a['exit_code'] == 0 and a['signal'] is None and a['core_dumped'] is False\n"
    "assert b['exit_code'] is None and b['signal'] == 11 and b['signal_name'] == 'SIGSEGV'\n"
    "assert b['core_dumped'] is True and b['exit_ns'] == 1000008000\n"
    "assert a['children'] == [1001] and P[999]['children'] == [1000]\n"
    "assert a['execs'][0]['filename'] == '/usr/bin/python3' and len(a['execs']) == 1\n"
    "assert a['execs'][0]['argv'][1] == 'train.py'\n"
    "assert a['threads'][0]['tid'] == 1000\n"
    "assert a['gpu_ioctls'] == 2 and b['gpu_ioctls'] == 1 and b['gpu_mmaps'] == 0\n"
    "assert P[999]['start_ns'] is None and P[999]['exit_code'] is None\n"
    "assert len(d['gpu_files']) == 1\n"
    "f = d['gpu_files'][0]\n"
    "assert f['id'] == 1 and f['device'] == '/dev/nvidiactl' and f['kind'] == 'nvidiactl'\n"
    "assert f['opener_pid'] == 1000 and f['open_ns'] == 1000003000 and f['cloexec'] is False\n"
    "assert f['open_flags'] == 2 and f['present_at_attach'] is False and f['closed'] is True\n"
    "assert f['holders'] == [1000, 1001], f['holders']\n"
    "assert f['ioctls'] == 3 and f['mmaps'] == 0\n"
    "h = {x['pid']: x for x in f['holders_detail']}\n"
    "assert h[1000]['how'] == 'opened' and h[1000]['from_pid'] is None\n"
    "assert h[1001]['how'] == 'inherited' and h[1001]['from_pid'] == 1000\n"
    "assert h[1001]['since_ns'] == 1000006000 and h[1001]['ioctls'] == 1\n"
    "assert h[1001]['until_ns'] == 1000008000 and h[1000]['ioctls'] == 2\n"
    "o = {x['kind']: x for x in d['gpu_objects']}\n"
    "assert set(o) >= {'rm-client', 'rm-device', 'rm-channel-group'}, o.keys()\n"
    "t = o['rm-channel-group']\n"
    "assert t['class'] == 0xa06c and t['class_name'] == 'KEPLER_CHANNEL_GROUP_A'\n"
    "assert t['handle'] == 0x5c000010 and t['parent'] == 0xcaf00001\n"
    "assert t['client'] == 0xc1d00001 and t['creator_pid'] == 1001 and t['file_id'] == 1\n"
    "assert o['rm-client']['creator_pid'] == 1000 and o['rm-client']['handle'] == 0xc1d00001\n"
    "assert t['parent_id'] == o['rm-device']['id']\n"
    "F = d['findings']\n"
    "kinds = [x['kind'] for x in F]\n"
    "assert 'inherited-gpu-use' in kinds and 'crash-after-inheritance' in kinds, kinds\n"
    "assert 'fork-with-gpu-state' in kinds, kinds\n"
    "iu = [x for x in F if x['kind'] == 'inherited-gpu-use'][0]\n"
    "assert iu['severity'] == 'error' and iu['pid'] == 1001 and iu['opener_pid'] == 1000\n"
    "assert iu['device'] == '/dev/nvidiactl' and iu['device_kind'] == 'nvidiactl'\n"
    "assert iu['file_id'] == 1 and iu['event'] == 'ioctl' and iu['call'] == 'RM_ALLOC'\n"
    "assert iu['time_ns'] == 1000007000 and iu['chain'] == [1000, 1001], iu['chain']\n"
    "assert iu['status'] == 0 and iu['status_name'] == 'NV_OK' and iu['err'] == 0\n"
    "assert iu['errno_name'] is None and iu['related_finding'] is None and iu['detail']\n"
    "cr = [x for x in F if x['kind'] == 'crash-after-inheritance'][0]\n"
    "assert cr['pid'] == 1001 and cr['related_finding'] == iu['id'] and cr['event'] == 'exit'\n"
    "for x in F:\n"
    "    for k in ('id', 'kind', 'severity', 'pid', 'tid', 'opener_pid', 'device',\n"
    "              'device_kind', 'file_id', 'time_ns', 'event', 'call', 'err', 'errno_name',\n"
    "              'status', 'status_name', 'chain', 'exec_between', 'later_used', 'uses',\n"
    "              'related_finding', 'detail'):\n"
    "        assert k in x, k\n"
    "for k in ('fork', 'exec', 'exit', 'open', 'ioctl', 'mmap', 'close', 'fd_kept',\n"
    "          'missed_stash', 'total'):\n"
    "    assert d['drops'][k] == 0, k\n"
    "e = d['events']\n"
    "assert e['fork'] == 2 and e['exec'] == 1 and e['exit'] == 2 and e['open'] == 1\n"
    "assert e['ioctl'] == 3 and e['mmap'] == 0 and e['total'] >= 9, e\n"
    "assert e['api'] == 0 and e['libmap'] == 0 and '' not in e, e\n"
    "assert d['drops']['api'] == 0 and d['drops']['libmap'] == 0 and '' not in d['drops']\n"
    "assert d['api_contexts'] == [] and d['api_memory'] == [] and d['probes'] == []\n"
    "assert d['api_memory_truncated'] is False\n"
    "assert all(p['api_calls'] == 0 and p['contexts'] == [] for p in d['processes'])\n"
    "for x in F:\n"
    "    assert x['api_ret'] is None and x['api_ret_name'] is None, x\n"
    "    assert x['context'] is None and x['context_handle'] is None, x\n";

static void test_json_scenario(void **state)
{
	struct gctx_trace_meta meta;
	struct gctx_model *m = scenario_model();
	struct capture c;
	char *json;

	(void)state;
	meta_fill(&meta, CMDLINE);
	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, &meta), 0);
	json = capture_end(&c);
	python_check(json, scenario_py);
	free(json);
	gctx_model__free(m);
}

static void test_text_scenario(void **state)
{
	struct gctx_trace_meta meta;
	struct gctx_model *m = scenario_model();
	struct capture c;
	char *text;

	(void)state;
	meta_fill(&meta, CMDLINE);
	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, &meta), 0);
	text = capture_end(&c);

	assert_contains(text, "gpu-node-7");
	assert_contains(text, "2025-11-21T06:03:12.123456Z");
	assert_contains(text, "-- python3 train.py --epochs 1");
	assert_contains(text, "duration:  0.000010 s");
	assert_contains(text, "\n999 bash");
	assert_contains(text, "\n  1000 trainer [python3 train.py --epochs 1] exit 0 at 0.000009");
	assert_contains(text, "\n    1001 trainer [python3 train.py --epochs 1] killed by SIGSEGV "
			      "(core dumped) at 0.000008");
	assert_contains(text,
			"file #1 nvidiactl /dev/nvidiactl fd=3: opened at 0.000003, 2 ioctls");
	assert_contains(text, "file #1 nvidiactl /dev/nvidiactl fd=3: inherited from 1000 at "
			      "0.000006, 1 ioctl, 0 mmaps, closed at 0.000008");
	assert_contains(text, "rm-client 0xc1d00001");
	assert_contains(text, "  rm-device 0xcaf00001");
	assert_contains(text,
			"rm-channel-group 0x5c000010 (KEPLER_CHANNEL_GROUP_A) under rm-device "
			"0xcaf00001 of pid 1000");
	assert_contains(text, "GPU files (1):");
	assert_contains(text, "1000 opened, 1001 inherited from 1000");
	assert_contains(text, "inherited-gpu-use");
	assert_contains(text, "crash-after-inheritance");
	assert_contains(text, "fork-with-gpu-state");
	assert_contains(text, "related to finding #");
	assert_contains(text, "fork chain: 1000 -> 1001");
	assert_contains(text, "Drops: none");
	/* errors are listed before warnings */
	assert_true(strstr(text, "crash-after-inheritance") <
		    strstr(text, "warning  fork-with-gpu-state"));
	free(text);
	gctx_model__free(m);
}

static const char api_py[] =
    "P = {p['pid']: p for p in d['processes']}\n"
    "for k in ('api_contexts', 'api_memory', 'api_memory_truncated', 'probes'):\n"
    "    assert k in d, k\n"
    "assert len(d['api_contexts']) == 1, d['api_contexts']\n"
    "c = d['api_contexts'][0]\n"
    "assert c['id'] == 1 and c['handle'] == 0x5555a000 and c['vendor'] == 'cuda', c\n"
    "assert c['primary'] is True and c['green'] is False and c['device'] == 0, c\n"
    "assert c['creator_pid'] == 2000 and c['creator_tid'] == 2000, c\n"
    "assert c['create_fn'] == 'cuDevicePrimaryCtxRetain' and c['create_ns'] == 1000020000\n"
    "assert c['destroy_ns'] is None and c['refs'] == 1, c\n"
    "assert c['mem_live'] == 2 << 20 and c['mem_total'] == 4 << 20 and c['allocs'] == 2, c\n"
    "assert c['launches'] == 1, c\n"
    "O = {o['id']: o for o in d['gpu_objects']}\n"
    "ko = sorted((O[i]['kind'], O[i]['handle']) for i in c['kernel_objects'])\n"
    "assert ko == [('rm-channel-group', 0x5c000010), ('rm-ctxshare', 0x5c000011)], ko\n"
    "cur = [(x['tid'], x['ts_ns'], x['fn']) for x in c['currents']]\n"
    "assert cur == [(2000, 1000030000, 'cuCtxSetCurrent'),\n"
    "               (2001, 1000031000, 'cuCtxPushCurrent')], cur\n"
    "assert c['currents_truncated'] is False\n"
    "M = d['api_memory']\n"
    "assert len(M) == 3 and d['api_memory_truncated'] is False and d['api_memory_count'] == 3\n"
    "assert M[0]['ctx_id'] is None and M[0]['size'] == 4096 and M[0]['pid'] == 2000, M[0]\n"
    "assert M[1]['ctx_id'] == 1 and M[1]['fn'] == 'cuMemAlloc' and M[1]['size'] == 2 << 20\n"
    "assert M[1]['ptr'] == 0x7f00d0000000 and M[1]['alloc_ns'] == 1000032000, M[1]\n"
    "assert M[1]['free_ns'] == 1000034000 and M[2]['free_ns'] is None, M\n"
    "assert P[2000]['api_calls'] == 12 and P[2000]['contexts'] == [1], P[2000]\n"
    "assert P[2002]['api_calls'] == 1 and P[2002]['contexts'] == [], P[2002]\n"
    "assert P[999]['api_calls'] == 0 and P[999]['contexts'] == []\n"
    "assert len(d['probes']) == 2, d['probes']\n"
    "a, b = d['probes']\n"
    "assert a['lib'] == '/usr/lib/x86_64-linux-gnu/libcuda.so.1', a\n"
    "assert a['symbol'] == 'cuCtxCreate_v4' and a['fn'] == 'cuCtxCreate_v4', a\n"
    "assert a['how'] == 'symbol' and a['offset'] == 0x2f1a4 and a['sym_offset'] == 0x2f1a0\n"
    "assert a['endbr64_skipped'] is True and a['first_bytes'] == 'f30f1efa554889e5', a\n"
    "assert a['execution'] == 'emulated', a\n"
    "assert b['execution'] == 'single-stepped', b\n"
    "assert a['retprobe'] is True and a['error'] is None and a['err'] == 0, a\n"
    "assert b['symbol'] == 'cuMemAlloc_v2' and b['fn'] == 'cuMemAlloc', b\n"
    "assert b['how'] == 'cuGetProcAddress' and b['endbr64_skipped'] is False, b\n"
    "assert b['retprobe'] is False and b['error'] == 'ENOENT' and b['err'] == -2, b\n"
    "F = d['findings']\n"
    "ic = [x for x in F if x['kind'] == 'inherited-context-call']\n"
    "assert len(ic) == 1, F\n"
    "ic = ic[0]\n"
    "assert ic['severity'] == 'error' and ic['pid'] == 2002 and ic['opener_pid'] == 2000, ic\n"
    "assert ic['call'] == 'cuInit' and ic['event'] == 'api' and ic['time_ns'] == 1000041000\n"
    "assert ic['api_ret'] == 3 and ic['api_ret_name'] == 'CUDA_ERROR_NOT_INITIALIZED', ic\n"
    "assert ic['context'] == 1 and ic['context_handle'] == 0x5555a000, ic\n"
    "assert ic['chain'] == [2000, 2002] and ic['device'] is None and ic['file_id'] is None\n"
    "ae = {(x['pid'], x['call'], x['api_ret_name']): x for x in F if x['kind'] == 'api-error'}\n"
    "# the inherited cuInit of 2002 is its inherited-context-call, not an api-error too\n"
    "assert set(ae) == {(2000, 'cuMemAlloc', 'CUDA_ERROR_OUT_OF_MEMORY')}, ae.keys()\n"
    "x = ae[(2000, 'cuMemAlloc', 'CUDA_ERROR_OUT_OF_MEMORY')]\n"
    "assert x['severity'] == 'warning' and x['uses'] == 3 and x['api_ret'] == 2, x\n"
    "assert x['context'] is None and x['context_handle'] is None, x\n"
    "for x in F:\n"
    "    for k in ('id', 'kind', 'severity', 'pid', 'tid', 'opener_pid', 'device',\n"
    "              'device_kind', 'file_id', 'time_ns', 'event', 'call', 'err', 'errno_name',\n"
    "              'status', 'status_name', 'chain', 'exec_between', 'later_used', 'uses',\n"
    "              'related_finding', 'detail', 'api_ret', 'api_ret_name', 'context',\n"
    "              'context_handle'):\n"
    "        assert k in x, k\n"
    "e = d['events']\n"
    "assert e['api'] == 13 and e['libmap'] == 0 and '' not in e, e\n"
    "assert d['drops']['api'] == 0 and '' not in d['drops'], d['drops']\n";

static void test_api_json(void **state)
{
	struct gctx_trace_meta meta;
	struct gctx_model *m = api_scenario_model();
	struct capture c;
	char *json;

	(void)state;
	meta_fill(&meta, CMDLINE);
	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, &meta), 0);
	json = capture_end(&c);
	python_check(json, api_py);
	free(json);
	gctx_model__free(m);
}

static void test_api_text(void **state)
{
	struct gctx_trace_meta meta;
	struct gctx_model *m = api_scenario_model();
	struct capture c;
	char *text;

	(void)state;
	meta_fill(&meta, CMDLINE);
	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, &meta), 0);
	text = capture_end(&c);

	assert_contains(text, "  | API calls: 12, 1 context\n");
	assert_contains(text, "  | ctx #1 CUDA primary device 0 handle 0x5555a000 created by tid "
			      "2000 at 0.000020 (cuDevicePrimaryCtxRetain), alive until exit at "
			      "0.000050, 2 MiB live / 4 MiB total in 2 allocations, 1 launch\n");
	assert_contains(text, "  |   kernel view: rm-channel-group 0x5c000010, rm-ctxshare "
			      "0x5c000011\n");
	assert_contains(text, "  |   tid 2000: current at 0.000030 (cuCtxSetCurrent)\n");
	assert_contains(text, "  |   tid 2001: current at 0.000031 (cuCtxPushCurrent)\n");
	assert_contains(text, "  | API memory with no current context: 4 KiB live / 4 KiB total "
			      "in 1 allocation\n");
	assert_contains(text, "    2002 trainer");
	assert_contains(text, "  | API calls: 1, 0 contexts\n");
	assert_contains(text, "Probes (2, 1 failed):\n  /usr/lib/x86_64-linux-gnu/libcuda.so.1:\n");
	assert_contains(text, "    cuCtxCreate_v4 +0x2f1a4, symbol, first bytes f3 0f 1e fa 55 48 "
			      "89 e5, endbr64 skipped, retprobe yes\n");
	assert_contains(text,
			"    cuMemAlloc_v2 (cuMemAlloc) +0x41000, cuGetProcAddress address, "
			"first bytes f3 0f 1e fa 55 48 89 e5, single-stepped (~10 us a call), "
			"retprobe no, error ENOENT\n");
	assert_contains(text,
			"inherited-context-call     pid 2002 (trainer) at 0.000041 (initialised by "
			"2000) cuInit -> CUDA_ERROR_NOT_INITIALIZED context #1 (0x5555a000)");
	assert_contains(text, "fork chain: 2000 -> 2002");
	assert_contains(
	    text,
	    "api-error                  pid 2000 (trainer, was bash) at 0.000036 cuMemAlloc -> "
	    "CUDA_ERROR_OUT_OF_MEMORY (3 calls)");
	assert_contains(text, ", api 13, libmap 0)");
	/* the process section comes before the probes, the probes before the findings */
	assert_true(strstr(text, "ctx #1") < strstr(text, "Probes ("));
	assert_true(strstr(text, "Probes (") < strstr(text, "Findings ("));
	free(text);
	gctx_model__free(m);
}

static void test_api_memory_truncated(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_ev_api a;
	struct capture c;
	char *json;
	__u32 i;

	(void)state;
	a = ev_call(3000, 3000, T0 + 1, 10, GCTX_CU_INIT, 0, 0, 0, 0);
	FEED(m, GCTX_EV_API, a);
	a = ev_call(3000, 3000, T0 + 2, 10, GCTX_CU_CTX_CREATE, 0, CU_CTX, 0x7ffc0000a000ULL, 0);
	FEED(m, GCTX_EV_API, a);
	for (i = 0; i < 10005; i++) {
		a = ev_call(3000, 3000, T0 + 10 + i, 10, GCTX_CU_MEM_ALLOC, 0,
			    0x7f0000000000ULL + 0x1000ULL * i, 0x7ffc0000a000ULL, 4096);
		FEED(m, GCTX_EV_API, a);
	}
	gctx_model__finish(m);
	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, NULL), 0);
	json = capture_end(&c);
	python_check(json,
		     "assert len(d['api_memory']) == 10000, len(d['api_memory'])\n"
		     "assert d['api_memory_truncated'] is True\n"
		     "assert d['api_memory_count'] == 10005\n"
		     "assert d['api_memory'][-1]['ptr'] == 0x7f0000000000 + 0x1000 * 9999\n"
		     "c = d['api_contexts'][0]\n"
		     "assert c['allocs'] == 10005 and c['mem_live'] == 10005 * 4096, c['allocs']\n"
		     "assert c['primary'] is False and c['currents'][0]['fn'] == 'cuCtxCreate'\n");
	free(json);
	gctx_model__free(m);
}

/* Disk full while recording: where writing stopped; hostile error numbers never negated
 * into undefined behaviour (INT_MIN), in text and JSON. */
static void test_write_loss_and_hostile_errnos(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_rec_write_loss wl = {
	    .ts_ns = T0 + 2500000000ull, .lost = 529, .written = 300, .err = -28};
	struct gctx_ev_fork fk = ev_fork(10, 11, T0 + 5, "sh", false);
	struct gctx_rec_probe pr = rec_probe(GCTX_CU_MEM_ALLOC, GCTX_PROBE_SYMBOL, "cuMemAlloc_v2",
					     0x41000, 0x41000, INT_MIN, false);
	struct capture c;
	char *text, *json;

	(void)state;
	FEED(m, GCTX_EV_FORK, fk);
	FEED(m, GCTX_REC_PROBE, pr);
	FEED(m, GCTX_REC_WRITE_LOSS, wl);
	gctx_model__finish(m);
	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, NULL), 0);
	text = capture_end(&c);
	assert_contains(text, "stopped writing at");
	assert_contains(text, "No space left on device; 529 records could not be written");
	assert_null(strstr(text, "collector killed"));
	assert_null(strstr(text, "-2147483648"));
	free(text);
	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, NULL), 0);
	json = capture_end(&c);
	python_check(json, "w = d['meta']['write_loss']\n"
			   "assert w['lost_records'] == 529 and w['written_records'] == 300\n"
			   "assert w['error'] == 'No space left on device'\n"
			   "assert '-2147483648' not in str(d['probes'][0]['error'])");
	free(json);
	gctx_model__free(m);
}

static void test_text_unclean_and_drops(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_rec_drops d;
	struct gctx_ev_fork fk = ev_fork(10, 11, T0 + 5, "sh", false);
	struct capture c;
	char *text, *json;

	(void)state;
	FEED(m, GCTX_EV_FORK, fk);
	memset(&d, 0, sizeof(d));
	d.drops[GCTX_EV_FORK] = 3;
	d.drops[GCTX_EV_IOCTL] = 40;
	d.missed_stash = 2;
	FEED(m, GCTX_REC_DROPS, d);
	gctx_model__finish(m);

	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, NULL), 0);
	text = capture_end(&c);
	assert_contains(text, "recording did not end cleanly (collector killed?)");
	assert_contains(text, "WARNING: 43 events lost: fork=3 exec=0");
	assert_contains(text, "ioctl=40");
	assert_contains(text, "missed_stash");
	assert_contains(text, "No findings.");
	assert_contains(text, "11 sh running");
	free(text);

	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, NULL), 0);
	json = capture_end(&c);
	python_check(json,
		     "assert d['meta']['clean_end'] is False and d['meta']['end_ns'] is None\n"
		     "assert d['meta']['hostname'] is None\n"
		     "assert d['drops']['fork'] == 3 and d['drops']['ioctl'] == 40\n"
		     "assert d['drops']['missed_stash'] == 2 and d['drops']['total'] == 43\n"
		     "assert d['findings'] == [] and d['gpu_files'] == []\n"
		     "p = {x['pid']: x for x in d['processes']}\n"
		     "assert p[11]['exit_code'] is None and p[11]['exit_ns'] is None\n"
		     "assert p[11]['ppid'] == 10 and p[10]['children'] == [11]");
	free(json);
	gctx_model__free(m);
}

static void test_hostile_strings(void **state)
{
	/* quotes, backslashes, newlines, control bytes and invalid UTF-8 (bare 0xff, a bad
	 * continuation, a truncated sequence at the very end) */
	static const char args[] =
	    "x\"y\0back\\slash\0new\nline\0bad\xc3\x28utf\0\x01\x7f\0tail\xe2\x82";
	static const char comm[GCTX_COMM_LEN] = {'a',	 '"', 'b', '\\', 'c', '\n', 'd', '\xff',
						 '\xfe', 'e', 'f', 'g',	 'h', 'i',  'j', 'k'};
	struct gctx_model *m = gctx_model__new();
	struct gctx_trace_meta meta;
	struct gctx_ev_exec ex;
	struct gctx_ev_fork fk;
	struct gctx_ev_open op;
	struct capture c;
	char *json, *text;

	(void)state;
	meta_fill(&meta, CMDLINE);
	snprintf(meta.hostname, sizeof(meta.hostname), "h\"o\\s\nt\x80");
	snprintf(meta.cmdline, sizeof(meta.cmdline), "-- sh -c 'echo \"\\\\\"'\t\x1b[31m");
	fk = ev_fork(1, 77, T0 + 1, "init", false);
	FEED(m, GCTX_EV_FORK, fk);
	ex = ev_exec(77, T0 + 2, "x", "/tmp/we\"ird\\\n\xff", args, sizeof(args) - 1);
	memcpy(ex.hdr.comm, comm, sizeof(comm));
	FEED(m, GCTX_EV_EXEC, ex);
	op = ev_open(77, T0 + 3, "x", CTL_FILE, 5, O_RDWR_K | O_CLOEXEC_K);
	memcpy(op.hdr.comm, comm, sizeof(comm));
	snprintf(op.path, sizeof(op.path), "/dev/\"nv\\\n\xc0\xaf");
	FEED(m, GCTX_EV_OPEN, op);
	gctx_model__finish(m);

	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, &meta), 0);
	json = capture_end(&c);
	python_check(
	    json, "p = {x['pid']: x for x in d['processes']}[77]\n"
		  "assert p['comm'].startswith('a\"b\\\\c\\nd'), repr(p['comm'])\n"
		  "assert p['comm'].endswith('efghij'), repr(p['comm'])\n"
		  "a = p['argv']\n"
		  "assert a[:3] == ['x\"y', 'back\\\\slash', 'new\\nline'], a\n"
		  "assert a[3].startswith('bad') and '\\ufffd' in a[3], a\n"
		  "assert a[4] == '\\x01\\x7f' and a[5].startswith('tail'), a\n"
		  "assert len(a) == 6, a\n"
		  "assert p['exe'].startswith('/tmp/we\"ird\\\\\\n'), repr(p['exe'])\n"
		  "assert d['meta']['hostname'].startswith('h\"o\\\\s\\nt'), d['meta']\n"
		  "assert d['meta']['cmdline'].startswith('-- sh -c'), d['meta']\n"
		  "f = d['gpu_files'][0]\n"
		  "assert f['device'].startswith('/dev/\"nv\\\\\\n') and f['cloexec'] is True\n");
	free(json);

	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, &meta), 0);
	text = capture_end(&c);
	/* one line per process: every odd byte is escaped */
	assert_contains(text, "77 a\"b\\\\c\\x0ad\\xff\\xfeefghij [x\"y back\\\\slash new\\x0aline "
			      "bad\\xc3(utf \\x01\\x7f tail\\xe2\\x82]");
	assert_contains(text, "h\"o\\\\s\\x0at\\x80");
	assert_contains(text, "/dev/\"nv\\\\\\x0a\\xc0\\xaf");
	free(text);
	gctx_model__free(m);
}

#define CHAIN_DEPTH 1000

static void test_deep_chain(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_trace_meta meta;
	struct gctx_ev_open op;
	struct gctx_ev_fork fk;
	struct gctx_ev_ioctl io;
	struct capture c;
	char *text, *json;
	__u32 i;

	(void)state;
	meta_fill(&meta, CMDLINE);
	op = ev_open(5000, T0 + 1, "w", CTL_FILE, 3, O_RDWR_K);
	FEED(m, GCTX_EV_OPEN, op);
	io = ev_rm_alloc(5000, T0 + 2, "w", 3, NV_CLIENT, 0, NV_CLIENT, 0x41, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	for (i = 0; i < CHAIN_DEPTH; i++) {
		fk = ev_fork(5000 + i, 5001 + i, T0 + 10 + i, "w", false);
		FEED(m, GCTX_EV_FORK, fk);
	}
	io = ev_rm_alloc(5000 + CHAIN_DEPTH, T0 + 5000, "w", 3, NV_CLIENT, NV_CLIENT, NV_DEVICE,
			 0x80, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	feed_end(m, T0 + 6000);
	gctx_model__finish(m);
	assert_int_equal(gctx_model__nprocs(m), CHAIN_DEPTH + 1);

	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, &meta), 0);
	text = capture_end(&c);
	assert_contains(text, "\n5000 w");
	assert_contains(text, "\n  5001 w");
	assert_contains(text, "[depth 1000] 6000 w");
	assert_contains(text, "inherited-gpu-use");
	free(text);

	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, &meta), 0);
	json = capture_end(&c);
	python_check(json, "assert len(d['processes']) == 1001\n"
			   "assert len(d['gpu_files'][0]['holders']) == 1001\n"
			   "f = [x for x in d['findings'] if x['kind'] == 'inherited-gpu-use']\n"
			   "assert len(f) == 1 and f[0]['pid'] == 6000, f\n"
			   "assert f[0]['chain'][0] == 5000 and f[0]['chain'][-1] == 6000, f");
	free(json);
	gctx_model__free(m);
}

static void test_many_objects_and_attach(void **state)
{
	static const char pargs[] = "python\0serve.py\0";
	struct gctx_model *m = gctx_model__new();
	struct gctx_trace_meta meta;
	struct gctx_rec_proc rp;
	struct gctx_rec_file rf;
	struct gctx_ev_ioctl io;
	struct capture c;
	char *text, *json;
	__u32 i;

	(void)state;
	meta_fill(&meta, CMDLINE);
	memset(&rp, 0, sizeof(rp));
	rp.pid = 300;
	rp.ppid = 1;
	rp.nthreads = 4;
	snprintf(rp.comm, sizeof(rp.comm), "server");
	snprintf(rp.exe, sizeof(rp.exe), "/usr/bin/python3.11");
	memcpy(rp.args, pargs, sizeof(pargs));
	rp.args_len = sizeof(pargs);
	FEED(m, GCTX_REC_PROC_PRESENT, rp);
	memset(&rf, 0, sizeof(rf));
	rf.pid = 300;
	rf.fd = 7;
	rf.file = CTL_FILE;
	rf.kind = GCTX_DEV_NVIDIACTL;
	rf.flags = O_RDWR_K;
	snprintf(rf.path, sizeof(rf.path), "/dev/nvidiactl");
	FEED(m, GCTX_REC_FILE_PRESENT, rf);
	io = ev_rm_alloc(300, T0 + 10, "server", 7, NV_CLIENT, 0, NV_CLIENT, 0x41, 0, 0);
	FEED(m, GCTX_EV_IOCTL, io);
	for (i = 0; i < 100; i++) {
		io = ev_rm_alloc(300, T0 + 20 + i, "server", 7, NV_CLIENT, NV_CLIENT,
				 0xd0000000 + i, 0x3e, 0, 0);
		FEED(m, GCTX_EV_IOCTL, io);
	}
	feed_end(m, T0 + 1000);
	gctx_model__finish(m);

	capture_begin(&c);
	assert_int_equal(gctx_report__text(c.f, m, &meta), 0);
	text = capture_end(&c);
	assert_contains(text, "\n300 server [python serve.py] running (present at attach, ppid 1)");
	assert_contains(text,
			"file #1 nvidiactl /dev/nvidiactl fd=7: present-at-attach, 101 ioctls");
	assert_contains(text, "objects created on file #1 nvidiactl: 101 (101 alive)");
	assert_contains(text, "more objects on file #1 not listed (see JSON)");
	free(text);

	capture_begin(&c);
	assert_int_equal(gctx_report__json(c.f, m, &meta), 0);
	json = capture_end(&c);
	python_check(
	    json,
	    "p = d['processes'][0]\n"
	    "assert p['pid'] == 300 and p['present_at_attach'] is True\n"
	    "assert p['argv'] == ['python', 'serve.py'] and p['exe'] == '/usr/bin/python3.11'\n"
	    "assert len(d['gpu_objects']) == 101\n"
	    "f = d['gpu_files'][0]\n"
	    "assert f['present_at_attach'] is True and f['opener_pid'] in (300, None)\n"
	    "assert f['holders_detail'][0]['how'] == 'present'\n"
	    "assert d['findings'] == []");
	free(json);
	gctx_model__free(m);
}

static void test_write_error(void **state)
{
	struct gctx_model *m;
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	if (!full)
		skip();
	m = scenario_model();
	assert_true(gctx_report__text(full, m, NULL) < 0);
	clearerr(full);
	assert_true(gctx_report__json(full, m, NULL) < 0);
	fclose(full);
	gctx_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_scenario),
	    cmocka_unit_test(test_text_scenario),
	    cmocka_unit_test(test_api_json),
	    cmocka_unit_test(test_api_text),
	    cmocka_unit_test(test_api_memory_truncated),
	    cmocka_unit_test(test_text_unclean_and_drops),
	    cmocka_unit_test(test_write_loss_and_hostile_errnos),
	    cmocka_unit_test(test_hostile_strings),
	    cmocka_unit_test(test_deep_chain),
	    cmocka_unit_test(test_many_objects_and_attach),
	    cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
