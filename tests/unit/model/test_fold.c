// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of folding (model/fold.c): a model that runs for weeks (gpuctx agent) forgets
 * exited process subtrees that never touched a GPU, so its memory stays flat under churn,
 * while the lineage of GPU processes, the poison fork's parent and finding stay whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <malloc.h>
#include <string.h>

#include "model/model.h"
#include "trace/records.h"

#include "builders.h"
#include "model_tests.h"

#define LAG 1000 /* fold what exited more than this before the latest event */

/* A job: sh 100 starts trainer 1234 (GPU client), which forks 1240 with its GPU files and
 * that child exits without exec (fork-with-gpu-state); sh also runs helper 300 (no GPU). */
static void gpu_job(struct gctx_model *m)
{
	do_fork(m, 1, 100, 10, "init");
	do_exec(m, 100, 100, 11, "sh", "/bin/sh");
	do_fork(m, 100, 1234, 50, "sh");
	do_exec(m, 1234, 1234, 60, "trainer", "/usr/bin/trainer");
	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_exit(m, 1240, 1240, 250, 0, true);
	do_fork(m, 100, 300, 300, "sh");
	do_exec(m, 300, 300, 310, "helper", "/usr/bin/helper");
}

static void assert_gpu_job_whole(const struct gctx_model *m)
{
	const struct gctx_proc *sh = gctx_model__proc_by_pid(m, 100);
	const struct gctx_proc *tr = gctx_model__proc_by_pid(m, 1234);
	const struct gctx_proc *ch = gctx_model__proc_by_pid(m, 1240);
	const struct gctx_finding *f;

	assert_non_null(sh);
	assert_non_null(tr);
	assert_non_null(ch);
	assert_int_equal(tr->parent_idx, sh->idx);
	assert_int_equal(ch->parent_idx, tr->idx);
	assert_true(ch->exited);
	assert_int_equal(tr->nchildren, 1);
	assert_int_equal(tr->children[0], ch->idx);
	assert_int_equal(tr->nexecs, 1);
	assert_string_equal(tr->execs[0].filename, "/usr/bin/trainer");
	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_FORK_WITH_GPU_STATE);
	assert_int_equal(gctx_model__proc(m, f->proc_idx)->pid, 1240);
	assert_int_equal(gctx_model__file(m, 0)->opener_idx, (int)tr->idx);
}

/* One short-lived process: fork from bash 2, exec, exit; every third one forks a child that
 * outlives it (reparented), so a subtree is folded from its last leaf up. */
static __u64 churn(struct gctx_model *m, __u32 i, __u64 ts)
{
	__u32 pid = 10000 + (i % 20000) * 2;

	do_fork(m, 2, pid, ts++, "bash");
	do_exec(m, pid, pid, ts++, "true", "/bin/true");
	if (i % 3 == 0) {
		do_fork(m, pid, pid + 1, ts++, "true");
		do_exit(m, pid, pid, ts++, 0, true);
		do_exit(m, pid + 1, pid + 1, ts++, 0, true);
	} else {
		do_exit(m, pid, pid, ts++, 9, true); /* killed: a crash of a non-GPU process */
	}
	return ts;
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void test_churn_stays_bounded(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 300000, warm = 30000;
	__u32 i, max_slots = 0;
	size_t heap_warm = 0;
	__u64 ts = 1000;

	do_fork(m, 1, 2, 5, "init");
	do_exec(m, 2, 2, 6, "bash", "/bin/bash");
	gpu_job(m);
	for (i = 0; i < n; i++) {
		ts = churn(m, i, ts);
		if (i % 500 == 0) {
			gctx_model__fold(m, ts - LAG);
			if (gctx_model__nlive_slots(m) > max_slots)
				max_slots = gctx_model__nlive_slots(m);
		}
		if (i == warm)
			heap_warm = heap_used();
	}
	gctx_model__fold(m, ts - LAG);

	/* what is live: init, bash, the job (5), the churn of the last LAG ns and 500 events */
	assert_true(max_slots < 1000);
	assert_true(gctx_model__nprocs(m) < 1200); /* slots ever made: reused, not grown */
	assert_true(gctx_model__folded(m) > n + n / 3 - 1000);
	/* the heap after 300,000 processes is that after 30,000 (some slack for the allocator) */
	assert_true(heap_used() < heap_warm + 256 * 1024);
	assert_gpu_job_whole(m);
	/* sh 100 keeps its two children; bash 2 only the processes not yet folded */
	assert_int_equal(gctx_model__proc_by_pid(m, 100)->nchildren, 2);
	assert_true(gctx_model__proc_by_pid(m, 2)->nchildren < 500);
	/* the GPU job's live helper and the churn's last ones are there, older ones are not */
	assert_non_null(gctx_model__proc_by_pid(m, 300));
	assert_null(gctx_model__proc_by_pid(m, 10000 + ((n - 2000) % 20000) * 2));
}

static void test_exited_parent_waits_for_its_child(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *p;

	gctx_model__fold(m, 0); /* from now on exits are remembered */
	do_fork(m, 1, 400, 100, "init");
	do_fork(m, 400, 401, 110, "a");
	do_exit(m, 400, 400, 120, 0, true);
	assert_int_equal(gctx_model__fold(m, 10000), 0); /* 401 still runs */
	p = gctx_model__proc_by_pid(m, 401);
	assert_non_null(p);
	assert_int_equal(gctx_model__proc(m, p->parent_idx)->pid, 400);
	do_exit(m, 401, 401, 130, 0, true);
	assert_int_equal(gctx_model__fold(m, 125), 0);	 /* 401 exited too recently */
	assert_int_equal(gctx_model__fold(m, 10000), 2); /* 401, then 400 */
	assert_null(gctx_model__proc_by_pid(m, 400));
	assert_null(gctx_model__proc_by_pid(m, 401));
	assert_int_equal(gctx_model__proc_by_pid(m, 1)->nchildren, 0);
	/* a reused pid is a new process in a reused slot */
	do_fork(m, 1, 401, 200, "init");
	p = gctx_model__proc_by_pid(m, 401);
	assert_non_null(p);
	assert_false(p->exited);
	assert_int_equal(p->start_ns, 200);
	assert_int_equal(p->nthreads, 1);
	assert_int_equal(gctx_model__nprocs(m), 3); /* init, and the two slots reused */
}

/* A driver with 20,000 children: those folded leave its list, the others stay in fork
 * order; a subtree folded whole in one fold leaves its grandparent's list too. */
static void test_many_children(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 20000;
	const struct gctx_proc *d;
	__u64 ts = 100;

	gctx_model__fold(m, 0);
	do_fork(m, 1, 2, ts++, "init");
	for (__u32 i = 0; i < n; i++)
		do_fork(m, 2, 10000 + i, ts++, "driver");
	do_fork(m, 2, 50000, ts++, "driver"); /* a child with a child: 50000 -> 50001 */
	do_fork(m, 50000, 50001, ts++, "sub");
	for (__u32 i = 0; i < n; i += 2) /* every other child ends */
		do_exit(m, 10000 + i, 10000 + i, ts++, 0, true);
	do_exit(m, 50001, 50001, ts++, 0, true);
	do_exit(m, 50000, 50000, ts++, 0, true);
	assert_int_equal(gctx_model__fold(m, ts + 1), n / 2 + 2);
	d = gctx_model__proc_by_pid(m, 2);
	assert_int_equal(d->nchildren, n / 2);
	for (__u32 k = 0; k < d->nchildren; k++)
		assert_int_equal(gctx_model__proc(m, d->children[k])->pid, 10000 + 2 * k + 1);
	assert_null(gctx_model__proc_by_pid(m, 50000));
	assert_null(gctx_model__proc_by_pid(m, 10000));
	/* the slots are reused: a new child is listed last */
	do_fork(m, 2, 60000, ts++, "driver");
	d = gctx_model__proc_by_pid(m, 2);
	assert_int_equal(d->nchildren, n / 2 + 1);
	assert_int_equal(gctx_model__proc(m, d->children[n / 2])->pid, 60000);
	assert_true(gctx_model__nprocs(m) <= n + 4);
}

/* A GPU process and its ancestors are never folded, even long after they exited; nor is a
 * child that inherited GPU files. */
static void test_gpu_lineage_never_folded(void **state)
{
	struct gctx_model *m = *state;

	gctx_model__fold(m, 0);
	gpu_job(m);
	do_exit(m, 300, 300, 400, 0, true);
	do_exit(m, 1234, 1234, 500, 0, true);
	do_exit(m, 100, 100, 600, 0, true);
	assert_int_equal(gctx_model__fold(m, 1000000), 1); /* the helper only */
	assert_null(gctx_model__proc_by_pid(m, 300));
	assert_gpu_job_whole(m);
	assert_int_equal(gctx_model__proc_by_pid(m, 100)->nchildren, 1);
}

/* record and report never fold: without gctx_model__fold every process is kept. */
static void test_no_fold_without_asking(void **state)
{
	struct gctx_model *m = *state;
	__u64 ts = 1000;

	do_fork(m, 1, 2, 5, "init");
	for (__u32 i = 0; i < 3000; i++)
		ts = churn(m, i, ts);
	assert_int_equal(gctx_model__nprocs(m), 2 + 3000 + 1000);
	assert_int_equal(gctx_model__folded(m), 0);
	/* exits before the first fold are not queued: only later ones are folded */
	gctx_model__fold(m, ts + 1);
	assert_int_equal(gctx_model__folded(m), 0);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_churn_stays_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_children, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exited_parent_waits_for_its_child, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gpu_lineage_never_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_fold_without_asking, setup, teardown),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
