// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of compaction (model/compact.c): a model that runs for weeks (gpuctx agent)
 * drops exited GPU jobs once they are older than before_ns, with their files, objects,
 * contexts, findings, allocations, call sites and strings, and gives their memory back; a
 * live process that inherited GPU state from an exited parent keeps its lineage, and its
 * later findings are those of a model that was never compacted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "trace/records.h"

#include "builders.h"
#include "model_tests.h"

#define LAG	 1000 /* compact what exited more than this before the latest event */
#define JOB_FILE 0xffff888200000000ULL
#define PCTX	 0x7ffc0000a000ULL
#define SITE	 0x555500000abcULL

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void exec_args(struct gctx_model *m, __u32 pid, __u64 ts, const char *file, const char *arg)
{
	char args[128];
	int n = snprintf(args, sizeof(args), "%s%c%s", file, 0, arg);
	struct gctx_ev_exec ev = ev_exec(pid, ts, "job", file, args, (__u32)n + 1);

	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
}

static void api_call(struct gctx_model *m, __u32 pid, __u64 ts, __u32 fn, __s64 ret, __u64 out,
		     __u64 a0, __u64 a1)
{
	struct gctx_ev_api ev = ev_api(pid, pid, ts, "job", 100, fn, ret, out);

	ev.args[0] = a0;
	ev.args[1] = a1;
	ev.caller = SITE;
	feed(m, GCTX_EV_API, &ev, sizeof(ev));
}

/* A process with CUDA state on its own nvidiactl file: init, primary context, an allocation,
 * an RM client, a call site. */
static __u64 cuda_up(struct gctx_model *m, __u32 pid, __u64 file, __u64 ts)
{
	do_open(m, pid, ts++, "job", file, 5, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_rm_alloc(m, pid, pid, ts++, "job", file, 5, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
	do_caller(m, pid, SITE, "job", "main", 0);
	api_call(m, pid, ts++, GCTX_CU_INIT, 0, 0, 0, 0);
	api_call(m, pid, ts++, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, 0x5555a000, PCTX, 0);
	api_call(m, pid, ts++, GCTX_CU_MEM_ALLOC, 0, 0x7f0000000000ULL, PCTX, 4096);
	return ts;
}

/* One short GPU job with a poison fork: job (distinct argv) starts CUDA, forks a worker that
 * uses the inherited file and CUDA, the worker crashes, the job exits. */
static __u64 gpu_job(struct gctx_model *m, __u32 i, __u64 ts)
{
	__u32 pid = 20000 + (i % 5000) * 4;
	__u64 file = JOB_FILE + (__u64)i * 0x1000;
	char arg[32];

	snprintf(arg, sizeof(arg), "--seed=%u", i);
	do_fork(m, 2, pid, ts++, "sched");
	exec_args(m, pid, ts++, "/usr/bin/job", arg);
	ts = cuda_up(m, pid, file, ts);
	do_fork(m, pid, pid + 1, ts++, "job");
	do_rm_alloc(m, pid + 1, pid + 1, ts++, "job", file, 5, 0xc1d00001, 0xc1d00001, 0xcaf00000,
		    CLS_DEVICE, 0);
	api_call(m, pid + 1, ts++, GCTX_CU_MEM_ALLOC, 3, 0, PCTX, 4096);
	do_exit(m, pid + 1, pid + 1, ts++, 11 | 0x80, true);
	do_exit(m, pid, pid, ts++, 0, true);
	return ts;
}

/* sh 100 starts trainer 7000 (CUDA), which forks 7001 and exits; 7001 lives on with the
 * trainer's file and CUDA state, not yet used. */
static __u64 inheritor(struct gctx_model *m, __u64 ts)
{
	do_fork(m, 1, 100, ts++, "init");
	do_exec(m, 100, 100, ts++, "sh", "/bin/sh");
	do_fork(m, 100, 7000, ts++, "sh");
	exec_args(m, 7000, ts++, "/usr/bin/trainer", "--epochs=9");
	ts = cuda_up(m, 7000, CTL_FILE, ts);
	do_fork(m, 7000, 7001, ts++, "trainer");
	do_exit(m, 7000, 7000, ts++, 0, true);
	do_exit(m, 100, 100, ts++, 0, true);
	return ts;
}

/* 7001 uses what it inherited, then exits: three findings about it. */
static __u64 inheritor_uses(struct gctx_model *m, __u64 ts)
{
	do_rm_alloc(m, 7001, 7001, ts++, "trainer", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0xcaf00000,
		    CLS_DEVICE, 0);
	api_call(m, 7001, ts++, GCTX_CU_MEM_ALLOC, 3, 0, PCTX, 4096);
	do_exit(m, 7001, 7001, ts++, 0, true);
	return ts;
}

static void assert_same_finding(const struct gctx_model *a, const struct gctx_finding *fa,
				const struct gctx_model *b, const struct gctx_finding *fb)
{
	assert_int_equal(fa->kind, fb->kind);
	assert_int_equal(fa->severity, fb->severity);
	assert_int_equal(fa->pid, fb->pid);
	assert_int_equal(fa->opener_pid, fb->opener_pid);
	assert_int_equal(fa->nchain, fb->nchain);
	assert_memory_equal(fa->chain, fb->chain, fa->nchain * sizeof(fa->chain[0]));
	assert_string_equal(fa->call, fb->call);
	assert_int_equal(fa->later_used, fb->later_used);
	assert_int_equal(fa->uses, fb->uses);
	assert_int_equal(!fa->ctx_id, !fb->ctx_id);
	if (fa->ctx_id)
		assert_int_equal(gctx_model__ctx(a, fa->ctx_id - 1)->handle,
				 gctx_model__ctx(b, fb->ctx_id - 1)->handle);
}

/* The findings about pid in a, in order, equal those in b. */
static void assert_same_findings(const struct gctx_model *a, const struct gctx_model *b, __u32 pid,
				 __u32 want)
{
	__u32 ia = 0, ib = 0, n = 0;

	for (;; n++) {
		while (ia < gctx_model__nfindings(a) && gctx_model__finding(a, ia)->pid != pid)
			ia++;
		while (ib < gctx_model__nfindings(b) && gctx_model__finding(b, ib)->pid != pid)
			ib++;
		if (ia == gctx_model__nfindings(a) || ib == gctx_model__nfindings(b))
			break;
		assert_same_finding(a, gctx_model__finding(a, ia++), b,
				    gctx_model__finding(b, ib++));
	}
	assert_int_equal(ia, gctx_model__nfindings(a));
	assert_int_equal(ib, gctx_model__nfindings(b));
	assert_int_equal(n, want);
}

/*
 * 20,000 short GPU jobs with a poison fork each (distinct argv, files, CUDA contexts,
 * allocations, call sites, three findings) beside a live process that inherited GPU state
 * from its exited parent. Compacted as the agent does, the model stays small and its heap
 * flat; the live inheritor keeps its lineage, and its findings when it later uses what it
 * inherited are those of a model that never compacted.
 */
static void test_gpu_churn_stays_bounded(void **state)
{
	struct gctx_model *m = *state, *ref = gctx_model__new();
	const __u32 n = 20000, warm = 2000;
	__u32 max_procs = 0, max_files = 0, max_findings = 0, max_strings = 0;
	const struct gctx_proc *p, *up;
	size_t heap_warm = 0;
	__u64 ts = 1000;
	const __u32 *sites;
	__u32 nsites, trainer_ctxs = 0;
	int calls;

	assert_non_null(ref);
	do_fork(m, 1, 2, 5, "init");
	do_fork(ref, 1, 2, 5, "init");
	inheritor(ref, 10);
	ts = inheritor(m, 10);
	gctx_model__fold(m, 0); /* as the agent: exits are queued from the start */
	for (__u32 i = 0; i < n; i++) {
		ts = gpu_job(m, i, ts);
		if (i % 100 == 99) {
			gctx_model__fold(m, ts - LAG);
			assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
			if (gctx_model__nprocs(m) > max_procs)
				max_procs = gctx_model__nprocs(m);
			if (gctx_model__nfiles(m) > max_files)
				max_files = gctx_model__nfiles(m);
			if (gctx_model__nfindings(m) > max_findings)
				max_findings = gctx_model__nfindings(m);
			if (gctx_model__nstrings(m) > max_strings)
				max_strings = gctx_model__nstrings(m);
		}
		if (i == warm)
			heap_warm = heap_used();
	}
	gctx_model__compact(m, ts - LAG, NULL, 0);

	/* a job is 2 processes, 1 file, 3 findings, 2 argv: the last LAG ns and 100 jobs */
	assert_true(max_procs < 400);
	assert_true(max_files < 200);
	assert_true(max_findings < 600);
	assert_true(max_strings < 400);
	assert_true(gctx_model__nobjs(m) < 400);
	assert_true(gctx_model__nctxs(m) < 200);
	assert_true(gctx_model__nmems(m) < 200);
	assert_true(gctx_model__ncallsites(m) < 600);
	assert_true(gctx_model__folded(m) >= 2 * (n - 200));
	assert_true(heap_used() < heap_warm + 256 * 1024);

	/* the inheritor's lineage: 7001 <- 7000 <- sh 100, all but 7001 exited long ago */
	p = gctx_model__proc_by_pid(m, 7001);
	assert_non_null(p);
	assert_false(p->exited);
	up = gctx_model__proc(m, p->parent_idx);
	assert_int_equal(up->pid, 7000);
	assert_true(up->exited);
	assert_string_equal(up->execs[0].filename, "/usr/bin/trainer");
	assert_memory_equal(up->execs[0].args, "/usr/bin/trainer\0--epochs=9", 27);
	assert_int_equal(gctx_model__proc(m, up->parent_idx)->pid, 100);
	assert_int_equal(up->nchildren, 1);
	assert_int_equal(up->children[0], p->idx);
	assert_null(gctx_model__proc_by_pid(m, 20000)); /* an old job's pid: gone */
	/* the trainer's CUDA state, call site and its caller record came along */
	sites = gctx_model__proc_callsites(m, up->idx, &nsites);
	assert_int_equal(nsites, 3);
	assert_int_equal(gctx_model__callsite(m, sites[0])->proc_idx, up->idx);
	assert_non_null(gctx_model__callsite(m, sites[0])->caller);
	assert_string_equal(gctx_model__callsite(m, sites[0])->caller->frame.function, "main");
	for (__u32 i = 0; i < gctx_model__nctxs(m); i++) {
		const struct gctx_api_ctx *c = gctx_model__ctx(m, i);

		assert_int_equal(c->id, i + 1);
		if (c->creator_idx != up->idx)
			continue;
		assert_int_equal(c->handle, 0x5555a000);
		assert_int_equal(gctx_model__callsite(m, c->create_site - 1)->proc_idx, up->idx);
		trainer_ctxs++;
	}
	assert_int_equal(trainer_ctxs, 1);

	/* it uses its inheritance now: the same findings as without compaction */
	calls = cblog.calls;
	inheritor_uses(m, ts);
	inheritor_uses(ref, ts);
	assert_true(cblog.calls >= calls + 2);
	assert_same_findings(m, ref, 7001, 3);
	assert_same_findings(m, ref, 7000, 0);
	gctx_model__free(ref);
}

/* A million processes with distinct argv, folded: the string pool holds those of the
 * processes not yet folded, not a million. */
static void test_distinct_argv_pool_bounded(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 1000000;
	__u32 max_strings = 0;
	__u64 ts = 1000;

	do_fork(m, 1, 2, 5, "init");
	gctx_model__fold(m, 0);
	for (__u32 i = 0; i < n; i++) {
		__u32 pid = 10000 + i % 20000;
		char arg[32];

		snprintf(arg, sizeof(arg), "--task=%u", i);
		do_fork(m, 2, pid, ts++, "bash");
		exec_args(m, pid, ts++, "/bin/true", arg);
		do_exit(m, pid, pid, ts++, 0, true);
		if (i % 1000 == 999) {
			gctx_model__fold(m, ts - LAG);
			if (gctx_model__compact_due(m))
				assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
			if (gctx_model__nstrings(m) > max_strings)
				max_strings = gctx_model__nstrings(m);
		}
	}
	assert_true(max_strings < 20000);
	assert_true(gctx_model__compactions(m) > 0);
	assert_non_null(gctx_model__proc_by_pid(m, 2));
}

/* A burst of 50,000 processes alive at once, then gone: the slot array shrinks back. */
static void test_slots_shrink_after_burst(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 50000;
	size_t heap_peak;
	__u64 ts = 1000;

	do_fork(m, 1, 2, 5, "init");
	gctx_model__fold(m, 0);
	for (__u32 i = 0; i < n; i++)
		do_fork(m, 2, 100000 + i, ts++, "bash");
	heap_peak = heap_used();
	for (__u32 i = 0; i < n; i++)
		do_exit(m, 100000 + i, 100000 + i, ts++, 0, true);
	assert_int_equal(gctx_model__fold(m, ts + LAG), n);
	assert_int_equal(gctx_model__nprocs(m), n + 2); /* the peak, folded slots free */
	assert_true(gctx_model__compact_due(m));
	assert_int_equal(gctx_model__compact(m, ts + LAG, NULL, 0), 0);
	assert_int_equal(gctx_model__nprocs(m), 2);
	assert_false(gctx_model__compact_due(m));
	assert_true(heap_used() < heap_peak / 4 || !heap_peak); /* 0: ASan has no mallinfo */
	/* and the model goes on */
	do_fork(m, 2, 300, ts++, "bash");
	assert_int_equal(gctx_model__proc_by_pid(m, 300)->parent_idx,
			 (int)gctx_model__proc_by_pid(m, 2)->idx);
	assert_int_equal(gctx_model__proc_by_pid(m, 2)->nchildren, 1);
}

/* A pinned exited tree (a dump not written yet) stays, its index rewritten; an exit at or
 * after before_ns stays; an older exited GPU job goes. */
static void test_pins_and_recent_exits_kept(void **state)
{
	struct gctx_model *m = *state, *one = gctx_model__new();
	__u32 pins[2];
	__u64 ts = 1000;

	assert_non_null(one);
	gpu_job(one, 2, 1000);
	do_fork(m, 1, 2, 5, "init");
	ts = gpu_job(m, 0, ts);		 /* pids 20000, 20001: goes */
	ts = gpu_job(m, 1, ts);		 /* 20004, 20005: pinned */
	ts = gpu_job(m, 2, ts + 100000); /* 20008, 20009: exited after before_ns */
	pins[0] = gctx_model__proc_by_pid(m, 20004)->idx;
	pins[1] = 999999; /* no such process */
	assert_int_equal(gctx_model__compact(m, ts - 1000, pins, 2), 0);
	assert_null(gctx_model__proc_by_pid(m, 20000));
	assert_null(gctx_model__proc_by_pid(m, 20001));
	assert_int_equal(gctx_model__proc(m, pins[0])->pid, 20004);
	assert_int_equal(pins[1], 0xffffffffu);
	assert_non_null(gctx_model__proc_by_pid(m, 20008));
	assert_non_null(gctx_model__proc_by_pid(m, 20009));
	/* pinned: the job, not its worker, which its tree no longer needs */
	assert_null(gctx_model__proc_by_pid(m, 20005));
	assert_int_equal(gctx_model__proc(m, pins[0])->nchildren, 0);
	assert_int_equal(gctx_model__nfiles(m), 2);
	for (__u32 i = 0; i < gctx_model__nfindings(m); i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);

		assert_int_equal(f->id, i + 1);
		assert_int_equal(gctx_model__proc(m, f->proc_idx)->pid, f->pid);
		assert_true(f->pid == 20008 || f->pid == 20009);
	}
	/* those of the recent job, as a model with that job alone has them */
	assert_int_equal(gctx_model__nfindings(m), gctx_model__nfindings(one));
	assert_true(gctx_model__nfindings(one) >= 3);
	gctx_model__free(one);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gpu_churn_stays_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_distinct_argv_pool_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_shrink_after_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pins_and_recent_exits_kept, setup, teardown),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
