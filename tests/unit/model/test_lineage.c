// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the lineage model: processes, threads, fork, exec and exit, pid reuse, GPU file
 * holders, the state present at attach, and the records themselves (short, unknown, unaligned),
 * built by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "trace/records.h"

#include "builders.h"
#include "model_tests.h"

static void test_pid_reuse(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *p;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_exit(m, 1240, 1240, 250, 0, true);
	do_fork(m, 1, 3000, 260, "init"); /* unrelated, holds nothing */
	do_fork(m, 3000, 1240, 270, "sh");
	do_exit(m, 1240, 1240, 280, 0, true);
	gctx_model__finish(m);

	/* only the first 1240 (forked with the GPU state, no exec) has a finding */
	assert_int_equal(gctx_model__nfindings(m), 1);
	assert_int_equal(gctx_model__finding(m, 0)->kind, GCTX_FIND_FORK_WITH_GPU_STATE);
	assert_int_equal(gctx_model__finding(m, 0)->proc_idx, 1);
	assert_false(gctx_model__finding(m, 0)->later_used);
	assert_int_equal(gctx_model__nprocs(m), 5); /* 1234, 1240, 1, 3000, 1240 */
	p = gctx_model__proc_by_pid(m, 1240);
	assert_int_equal(p->idx, 4);
	assert_int_equal(p->ppid, 3000);
	assert_int_equal(p->start_ns, 270);
	assert_int_equal(gctx_model__proc(m, 1)->pid, 1240);
	assert_true(gctx_model__proc(m, 1)->exited);
	assert_int_equal(gctx_model__proc(m, 1)->exit_ns, 250);
	assert_int_equal(gctx_model__proc(m, 1)->exit_code, 0);
}

static void test_missed_exit_then_pid_reuse(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *old;

	do_fork(m, 1, 500, 100, "init");
	do_fork(m, 1, 500, 200, "init"); /* 500's exit was dropped */
	old = gctx_model__proc(m, 1);
	assert_true(old->exited);
	assert_int_equal(old->exit_code, -1);
	assert_int_equal(old->signal, 0);
	assert_int_equal(gctx_model__proc_by_pid(m, 500)->idx, 2);
	assert_false(gctx_model__proc_by_pid(m, 500)->exited);
}

static void test_exec_from_non_leader_thread(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *p;
	__u32 i, live500 = 0;
	bool saw501 = false;

	do_fork(m, 1, 500, 100, "init");
	do_thread(m, 500, 501, 110, "init");
	do_thread(m, 500, 502, 111, "init");
	/* de_thread: the other threads and the old leader die, 501 takes pid 500 */
	do_exit(m, 500, 502, 119, 0, false);
	do_exit(m, 500, 500, 119, 0, false);
	do_exec(m, 500, 501, 120, "newprog", "/bin/newprog");

	p = gctx_model__proc_by_pid(m, 500);
	assert_false(p->exited);
	assert_int_equal(gctx_model__nprocs(m), 2);
	assert_int_equal(p->nexecs, 1);
	assert_int_equal(p->execs[0].old_tid, 501);
	assert_int_equal(p->execs[0].ts_ns, 120);
	assert_string_equal(p->execs[0].filename, "/bin/newprog");
	assert_string_equal(p->comm, "newprog");
	for (i = 0; i < p->nthreads; i++) {
		const struct gctx_thread *t = &p->threads[i];

		if (t->tid == 501) {
			saw501 = true;
			assert_true(t->exited);
			assert_int_equal(t->exit_ns, 120);
		}
		if (t->tid == 500 && !t->exited) {
			live500++;
			assert_string_equal(t->comm, "newprog");
			assert_int_equal(t->start_ns, 110); /* the thread that exec'd */
		}
		if (t->tid == 502)
			assert_true(t->exited);
	}
	assert_true(saw501);
	assert_int_equal(live500, 1);

	do_exit(m, 500, 500, 200, 0, true);
	p = gctx_model__proc_by_pid(m, 500);
	assert_true(p->exited);
	for (i = 0; i < p->nthreads; i++)
		assert_true(p->threads[i].exited);
}

static void test_close_ends_holder(void **state)
{
	struct gctx_model *m = *state;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_fd(m, GCTX_EV_CLOSE, 1240, 210, CTL_FILE, 5, GCTX_DEV_NVIDIACTL);
	assert_false(holder_of(m, CTL_FILE, 1240)->held);
	assert_int_equal(holder_of(m, CTL_FILE, 1240)->until_ns, 210);
	assert_false(gctx_model__file(m, 0)->closed);
	do_fd(m, GCTX_EV_CLOSE, 1234, 220, CTL_FILE, 5, GCTX_DEV_NVIDIACTL);
	assert_true(gctx_model__file(m, 0)->closed);
	assert_int_equal(gctx_model__file(m, 0)->close_ns, 220);
	/* RM tears the client down at the last close */
	assert_true(gctx_model__obj(m, 0)->destroyed);
	/* a close of something never seen is ignored */
	do_fd(m, GCTX_EV_CLOSE, 1234, 230, CTL_FILE2, 9, GCTX_DEV_NVIDIACTL);
	assert_int_equal(gctx_model__nfiles(m), 1);

	/* the address is reused by a new open: a new description */
	do_open(m, 1234, 300, "trainer", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR);
	assert_int_equal(gctx_model__nfiles(m), 2);
	assert_int_equal(gctx_model__file_by_addr(m, CTL_FILE)->id, 2);
	/* and again without the close: the old one is closed for it */
	do_open(m, 1234, 400, "trainer", CTL_FILE, 6, GCTX_DEV_NVIDIACTL, O_RDWR);
	assert_int_equal(gctx_model__nfiles(m), 3);
	assert_true(gctx_model__file(m, 1)->closed);
	assert_int_equal(gctx_model__file(m, 1)->close_ns, 400);
	assert_false(gctx_model__file(m, 2)->closed);
}

/* Threads that existed at attach are part of their process; a second report of one is not
 * a second thread, and a thread of an unknown process is ignored. */
static void test_attach_threads(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_rec_thread t = {.pid = 10, .tid = 12};
	const struct gctx_proc *p;

	rec_proc(m, 10, 1, 5000, "trainer");
	snprintf(t.comm, sizeof(t.comm), "pt_autograd_0");
	feed(m, GCTX_REC_THREAD_PRESENT, &t, sizeof(t));
	feed(m, GCTX_REC_THREAD_PRESENT, &t, sizeof(t));
	t.pid = 99;
	t.tid = 100;
	feed(m, GCTX_REC_THREAD_PRESENT, &t, sizeof(t));

	p = gctx_model__proc_by_pid(m, 10);
	assert_non_null(p);
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->threads[1].tid, 12);
	assert_string_equal(p->threads[1].comm, "pt_autograd_0");
	assert_null(gctx_model__proc_by_pid(m, 99));
	assert_int_equal(gctx_model__feed(m, GCTX_REC_THREAD_PRESENT, &t, sizeof(t) - 1), -EINVAL);
}

static void test_attach_snapshot(void **state)
{
	struct gctx_model *m = *state;
	const __u32 chain[] = {10, 11};
	const struct gctx_gpu_file *file;
	const struct gctx_finding *f;
	const struct gctx_proc *child;

	rec_proc(m, 10, 1, 5000, "trainer");
	rec_proc(m, 11, 10, 6000, "worker");
	rec_file(m, 10, 3, CTL_FILE, GCTX_DEV_NVIDIACTL, true);
	rec_file(m, 11, 3, CTL_FILE, GCTX_DEV_NVIDIACTL, true);

	child = gctx_model__proc_by_pid(m, 11);
	assert_true(child->present_at_attach);
	assert_int_equal(child->parent_idx, 0);
	assert_int_equal(child->ppid, 10);
	assert_int_equal(child->start_ns, 6000);
	assert_string_equal(child->exe, "/usr/bin/worker");
	assert_int_equal(gctx_model__proc_by_pid(m, 10)->parent_idx, -1);
	assert_int_equal(gctx_model__nfiles(m), 1);
	file = gctx_model__file(m, 0);
	assert_true(file->present_at_attach);
	assert_int_equal(file->open_ns, 0);
	assert_int_equal(file->opener_pid, 10);
	assert_int_equal(file->opener_idx, 0);
	assert_true(file->open_flags & O_CLOEXEC);
	assert_int_equal(file->nholders, 2);
	assert_int_equal(holder_of(m, CTL_FILE, 10)->how, GCTX_HOLD_PRESENT);
	assert_int_equal(holder_of(m, CTL_FILE, 11)->how, GCTX_HOLD_INHERITED);

	do_rm_alloc(m, 10, 10, 7000, "trainer", CTL_FILE, 3, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
	assert_int_equal(gctx_model__nfindings(m), 0);
	do_rm_alloc(m, 11, 11, 7100, "worker", CTL_FILE, 3, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_INHERITED_GPU_USE);
	assert_int_equal(f->pid, 11);
	assert_int_equal(f->opener_pid, 10);
	assert_chain(f, 2, chain);
}

static void test_attach_unrelated_holders_are_present(void **state)
{
	struct gctx_model *m = *state;

	rec_proc(m, 10, 1, 5000, "a");
	rec_proc(m, 20, 1, 5000, "b");
	rec_file(m, 10, 3, CTL_FILE, GCTX_DEV_NVIDIACTL, false);
	rec_file(m, 20, 4, CTL_FILE, GCTX_DEV_NVIDIACTL, false);
	rec_file(m, 20, 5, 0, GCTX_DEV_NVIDIACTL, false); /* no address: its own file */
	assert_int_equal(gctx_model__nfiles(m), 2);
	assert_int_equal(holder_of(m, CTL_FILE, 20)->how, GCTX_HOLD_PRESENT);
	assert_int_equal(gctx_model__file(m, 0)->opener_pid, 10);
	assert_int_equal(gctx_model__file(m, 1)->opener_pid, 20);
	assert_null(gctx_model__file_by_addr(m, 0));
	do_rm_alloc(m, 20, 20, 7000, "b", CTL_FILE, 4, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
	assert_int_equal(gctx_model__nfindings(m), 0);
}

static void test_snapshot_completes_process_seen_first(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *p;

	rec_proc(m, 10, 1, 5000, "trainer");
	do_mmap(m, 11, 5500, CTL_FILE, 3, 0x7f0000000000LL); /* an event raced the snapshot */
	rec_proc(m, 11, 10, 5100, "worker");
	p = gctx_model__proc_by_pid(m, 11);
	assert_int_equal(gctx_model__nprocs(m), 2);
	assert_int_equal(p->parent_idx, 0);
	assert_int_equal(p->ppid, 10);
	assert_int_equal(p->start_ns, 5100);
	assert_true(p->present_at_attach);
	assert_string_equal(p->exe, "/usr/bin/worker");
	assert_int_equal(gctx_model__proc(m, 0)->nchildren, 1);
}

static void test_short_and_unknown_records(void **state)
{
	struct gctx_model *m = *state;
	static __u8 buf[1024];
	struct gctx_rec_drops drops = {.drops = {[GCTX_EV_IOCTL] = 7}, .missed_stash = 2};
	struct gctx_rec_end end = {.end_ns = 999, .exit_status = 0, .events = 12};
	struct gctx_rec_device dev = {.kind = GCTX_DEV_NVIDIACTL, .rdev = 0x0C3000FF};
	__u32 i;

	for (i = 0; i < ARRAY_SIZE(rec_sizes); i++) {
		assert_int_equal(gctx_model__feed(m, rec_sizes[i].type, buf, rec_sizes[i].len - 1),
				 -EINVAL);
		assert_int_equal(gctx_model__feed(m, rec_sizes[i].type, buf, 0), -EINVAL);
	}
	assert_int_equal(gctx_model__total_events(m), 0);
	assert_int_equal(gctx_model__nprocs(m), 0);
	assert_int_equal(gctx_model__feed(m, 999, buf, 3), 0);
	assert_int_equal(gctx_model__feed(m, 0, buf, 0), 0);
	assert_int_equal(gctx_model__total_events(m), 2);

	assert_null(gctx_model__end(m));
	assert_int_equal(gctx_model__drops(m)->drops[GCTX_EV_IOCTL], 0);
	feed(m, GCTX_REC_DROPS, &drops, sizeof(drops));
	feed(m, GCTX_REC_DEVICE, &dev, sizeof(dev));
	feed(m, GCTX_REC_END, &end, sizeof(end));
	assert_int_equal(gctx_model__drops(m)->drops[GCTX_EV_IOCTL], 7);
	assert_int_equal(gctx_model__drops(m)->missed_stash, 2);
	assert_int_equal(gctx_model__ndevices(m), 1);
	assert_int_equal(gctx_model__device(m, 0)->rdev, 0x0C3000FF);
	assert_null(gctx_model__device(m, 1));
	assert_non_null(gctx_model__end(m));
	assert_int_equal(gctx_model__end(m)->end_ns, 999);

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "t");
	assert_int_equal(gctx_model__events(m, GCTX_EV_OPEN), 1);
	assert_int_equal(gctx_model__events(m, GCTX_EV_IOCTL), 1);
	assert_int_equal(gctx_model__events(m, GCTX_EV_FORK), 1);
	assert_int_equal(gctx_model__events(m, GCTX_EV_EXEC), 0);
	assert_int_equal(gctx_model__events(m, GCTX_REC_END), 0);
	assert_int_equal(gctx_model__total_events(m), 8);

	/* out-of-range queries and NULL models */
	assert_null(gctx_model__proc(m, 100));
	assert_null(gctx_model__file(m, 100));
	assert_null(gctx_model__obj(m, 100));
	assert_null(gctx_model__finding(m, 100));
	assert_null(gctx_model__proc_by_pid(m, 77));
	assert_null(gctx_model__file_by_addr(m, 77));
	gctx_model__free(NULL);
	gctx_model__finish(NULL);
	assert_int_equal(gctx_model__feed(NULL, GCTX_EV_FORK, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(gctx_model__nprocs(NULL), 0);
	assert_string_equal(gctx_severity_name(GCTX_SEV_WARNING), "warning");
	assert_string_equal(gctx_finding_kind_name(GCTX_FIND_CRASH_AFTER_INHERITANCE),
			    "crash-after-inheritance");
	assert_string_equal(gctx_hold_how_name(GCTX_HOLD_PRESENT), "present");
}

/* records.h: the size every record type needs (API, library map and probe records too) and the
 * kernel event names the JSON report keys its counts by. */
static void test_record_types(void **state)
{
	__u32 i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rec_sizes); i++)
		assert_int_equal(gctx_record_min_len(rec_sizes[i].type), rec_sizes[i].len);
	/* an API record of a trace written before the caller field is still read */
	assert_int_equal(gctx_record_min_len(GCTX_EV_API), GCTX_EV_API_V2_LEN);
	/* an exec record of a trace written before its cgroup id: read, the id unknown (0) */
	{
		struct gctx_ev_exec ex = ev_exec(7, 1, "sh", "/bin/sh", "sh", 3);
		union gctx_record r;

		ex.cgroup_id = 4242;
		assert_int_equal(gctx_record_copy(&r, GCTX_EV_EXEC, &ex, sizeof(ex)), sizeof(ex));
		assert_int_equal(r.exec.cgroup_id, 4242);
		assert_int_equal(gctx_record_copy(&r, GCTX_EV_EXEC, &ex, GCTX_EV_EXEC_V3_LEN),
				 sizeof(ex));
		assert_int_equal(r.exec.cgroup_id, 0);
		assert_string_equal(r.exec.filename, "/bin/sh");
	}
	assert_int_equal(gctx_record_min_len(GCTX_REC_CALLER), sizeof(struct gctx_rec_caller));
	assert_int_equal(gctx_record_min_len(GCTX_REC_CALLER_DROPS),
			 sizeof(struct gctx_rec_caller_drops));
	assert_int_equal(gctx_record_min_len(GCTX_EV_LIBMAP), sizeof(struct gctx_ev_libmap));
	assert_int_equal(gctx_record_min_len(GCTX_REC_PROBE), sizeof(struct gctx_rec_probe));
	assert_int_equal(gctx_record_min_len(0), 0);
	assert_int_equal(gctx_record_min_len(GCTX_EV_KERNEL_MAX), 0);
	assert_string_equal(gctx_ev_type_name(GCTX_EV_FORK), "fork");
	assert_string_equal(gctx_ev_type_name(GCTX_EV_FD_KEPT), "fd_kept");
	assert_string_equal(gctx_ev_type_name(GCTX_EV_LIBMAP), "libmap");
	assert_string_equal(gctx_ev_type_name(GCTX_EV_VMAS), "vmas");
	assert_int_equal(gctx_record_min_len(GCTX_EV_VMAS), GCTX_EV_VMAS_HDR_LEN);
	assert_null(gctx_ev_type_name(0));
	assert_null(gctx_ev_type_name(GCTX_EV_KERNEL_MAX));
	assert_null(gctx_ev_type_name(GCTX_REC_END));
}

static void test_unaligned_record(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_ev_fork ev = {.child_tid = 2, .child_tgid = 2};
	static __u8 buf[sizeof(ev) + 1];

	hdr_fill(&ev.hdr, GCTX_EV_FORK, 1, 1, 5, "init");
	memcpy(buf + 1, &ev, sizeof(ev));
	feed(m, GCTX_EV_FORK, buf + 1, sizeof(ev));
	assert_int_equal(gctx_model__nprocs(m), 2);
	assert_int_equal(gctx_model__proc_by_pid(m, 2)->ppid, 1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * 10,000 children of a GPU-holding parent: each inherits the file (one more holder on it),
 * uses it and exits. A linear scan per event would make this quadratic.
 */
static void test_many_forks_scale(void **state)
{
	struct gctx_model *m = *state;
	const int n = 10000;
	double t0 = now_s();
	int i;

	trainer_with_client(m, 0);
	for (i = 0; i < n; i++) {
		__u32 pid = 100000 + i;

		do_fork(m, 1234, pid, 1000 + 10 * i, "trainer");
		do_rm_alloc(m, pid, pid, 1001 + 10 * i, "w", CTL_FILE, 5, 0xc1d00001, 0xc1d00001,
			    0x5c000002 + i, CLS_DEVICE, 0);
		do_exit(m, pid, pid, 1002 + 10 * i, 0, true);
	}
	gctx_model__finish(m);
	assert_int_equal(gctx_model__nprocs(m), n + 1);
	assert_int_equal(gctx_model__file(m, 0)->nholders, n + 1);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_GPU_USE), n);
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), n);
	assert_int_equal(gctx_model__nobjs(m), n + 1);
	assert_false(gctx_model__file(m, 0)->closed);
	/* generous: valgrind runs this too; quadratic work would take minutes */
	assert_true(now_s() - t0 < 30.0);
}

/* A storm of processes running one command keeps its filename and argv once: the model's
 * memory per process is then its own records, not 384 bytes of strings. */
static void test_exec_strings_shared(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *a, *b, *c;
	struct gctx_ev_exec ev;

	for (__u32 i = 0; i < 100; i++) {
		do_fork(m, 1, 1000 + i, 100 + i, "sh");
		do_exec(m, 1000 + i, 1000 + i, 200 + i, "true", "/bin/true");
	}
	a = gctx_model__proc_by_pid(m, 1000);
	b = gctx_model__proc_by_pid(m, 1099);
	assert_string_equal(a->execs[0].filename, "/bin/true");
	assert_memory_equal(a->execs[0].args, "/bin/true", 10);
	assert_int_equal(a->execs[0].args_len, 10);
	assert_ptr_equal(a->execs[0].filename, b->execs[0].filename);
	assert_ptr_equal(a->execs[0].args, b->execs[0].args);
	assert_ptr_equal(a->exe, a->execs[0].filename);

	/* a record's path field fills all GCTX_PATH_LEN bytes: cut to GCTX_PATH_LEN - 1, as
	 * the fixed-size field did */
	do_fork(m, 1, 2000, 300, "sh");
	ev = ev_exec(2000, 301, "p", "", "p", 2);
	memset(ev.filename, 'p', sizeof(ev.filename)); /* no NUL */
	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
	c = gctx_model__proc_by_pid(m, 2000);
	assert_int_equal(strlen(c->execs[0].filename), GCTX_PATH_LEN - 1);
	assert_memory_equal(c->execs[0].filename, ev.filename, GCTX_PATH_LEN - 1);

	/* a process never seen to exec has an empty name and argv, not NULL ones */
	do_fork(m, 1, 3000, 400, "sh");
	assert_string_equal(gctx_model__proc_by_pid(m, 3000)->exe, "");
	assert_int_equal(gctx_model__proc_by_pid(m, 3000)->args_len, 0);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		TEST(test_pid_reuse),
		TEST(test_missed_exit_then_pid_reuse),
		TEST(test_exec_from_non_leader_thread),
		TEST(test_close_ends_holder),
		TEST(test_attach_snapshot),
		TEST(test_attach_threads),
		TEST(test_attach_unrelated_holders_are_present),
		TEST(test_snapshot_completes_process_seen_first),
		TEST(test_short_and_unknown_records),
		TEST(test_record_types),
		TEST(test_unaligned_record),
		TEST(test_many_forks_scale),
		TEST(test_exec_strings_shared),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
