// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the lineage model's findings: event sequences built by hand, checked the way a
 * user reads a report (who opened, who inherited, who used, what the driver said).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "model/model.h"

#include "builders.h"
#include "model_tests.h"

#define SIGSEGV_NR 11
#define SIGABRT_NR 6

static void test_fork_child_use_is_inherited(void **state)
{
	struct gctx_model *m = *state;
	const __u32 chain[] = {1234, 1240};
	const struct gctx_finding *f;
	const struct gctx_holder *h;

	trainer_with_client(m, O_CLOEXEC);
	do_fork(m, 1234, 1240, 200, "trainer");
	assert_int_equal(gctx_model__nfindings(m), 0);
	do_rm_alloc(m, 1240, 1240, 300, "dl_worker_2", CTL_FILE, 5, 0xc1d00001, 0xc1d00001,
		    0x5c000002, CLS_DEVICE, 0);

	assert_int_equal(gctx_model__nfindings(m), 1);
	assert_int_equal(cblog.calls, 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->id, 1);
	assert_int_equal(cblog.last_id, 1);
	assert_int_equal(f->kind, GCTX_FIND_INHERITED_GPU_USE);
	assert_int_equal(f->severity, GCTX_SEV_ERROR);
	assert_int_equal(f->pid, 1240);
	assert_int_equal(f->tid, 1240);
	assert_int_equal(f->opener_pid, 1234);
	assert_int_equal(f->file_id, 1);
	assert_int_equal(f->kind_dev, GCTX_DEV_NVIDIACTL);
	assert_int_equal(f->event_type, GCTX_EV_IOCTL);
	assert_int_equal(f->time_ns, 300);
	assert_string_equal(f->call, "RM_ALLOC");
	assert_true(f->has_status);
	assert_int_equal(f->status, 0);
	assert_int_equal(f->err, 0);
	assert_false(f->exec_between);
	assert_int_equal(f->uses, 1);
	assert_chain(f, 2, chain);
	assert_non_null(strstr(f->detail, "pid 1240"));
	assert_non_null(strstr(f->detail, "opened by pid 1234 (trainer)"));
	assert_non_null(strstr(f->detail, "1234->1240 without exec"));
	assert_non_null(strstr(f->detail, "RM_ALLOC returned NV_OK"));
	assert_string_equal(gctx_finding_kind_name(f->kind), "inherited-gpu-use");

	/* later uses are counted on the same finding */
	do_rm_alloc(m, 1240, 1240, 310, "dl_worker_2", CTL_FILE, 5, 0xc1d00001, 0x5c000002,
		    0x5c000003, 0x2080, 0);
	do_mmap(m, 1240, 320, CTL_FILE, 5, 0x7f0000000000LL);
	assert_int_equal(gctx_model__nfindings(m), 1);
	assert_int_equal(cblog.calls, 1);
	assert_int_equal(gctx_model__finding(m, 0)->uses, 3);

	h = holder_of(m, CTL_FILE, 1240);
	assert_non_null(h);
	assert_int_equal(h->how, GCTX_HOLD_INHERITED);
	assert_int_equal(h->from_proc_idx, gctx_model__proc_by_pid(m, 1234)->idx);
	assert_int_equal(h->since_ns, 200);
	assert_int_equal(h->nioctls, 2);
	assert_int_equal(h->nmmaps, 1);
	assert_int_equal(h->first_use_ns, 300);
	assert_int_equal(h->nfds, 1);
	assert_int_equal(h->fds[0], 5);
	assert_int_equal(gctx_model__file(m, 0)->nioctls, 3);
	assert_int_equal(gctx_model__proc_by_pid(m, 1240)->nioctls, 2);
	assert_int_equal(gctx_model__proc_by_pid(m, 1240)->ppid, 1234);
	assert_int_equal(gctx_model__proc_by_pid(m, 1234)->nchildren, 1);
}

static void test_opener_and_its_threads_are_not_findings(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_proc *p;

	trainer_with_client(m, 0);
	do_thread(m, 1234, 1235, 150, "trainer");
	do_rm_alloc(m, 1234, 1235, 160, "pt_worker", CTL_FILE, 5, 0xc1d00001, 0xc1d00001,
		    0x5c000002, CLS_DEVICE, 0);
	do_mmap(m, 1234, 170, CTL_FILE, 5, 0x7f0000000000LL);
	gctx_model__finish(m);

	assert_int_equal(gctx_model__nfindings(m), 0);
	assert_int_equal(gctx_model__nprocs(m), 1);
	p = gctx_model__proc_by_pid(m, 1234);
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->threads[1].tid, 1235);
	assert_int_equal(p->threads[1].start_ns, 150);
	assert_int_equal(p->nioctls, 2);
	assert_int_equal(p->nmmaps, 1);
	assert_int_equal(holder_of(m, CTL_FILE, 1234)->how, GCTX_HOLD_OPENED);
}

static void test_fork_exec_own_file_is_clean(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_holder *h;

	trainer_with_client(m, O_CLOEXEC);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_exec(m, 1240, 1240, 210, "python", "/usr/bin/python3"); /* no FD_KEPT */
	do_open(m, 1240, 220, "python", CTL_FILE2, 5, GCTX_DEV_NVIDIACTL, O_RDWR | O_CLOEXEC);
	do_rm_alloc(m, 1240, 1240, 230, "python", CTL_FILE2, 5, 0, 0, 0xc1d00009, CLS_CLIENT, 0);
	gctx_model__finish(m);

	assert_int_equal(gctx_model__nfindings(m), 0);
	h = holder_of(m, CTL_FILE, 1240);
	assert_non_null(h);
	assert_false(h->held);
	assert_int_equal(h->until_ns, 210);
	assert_false(gctx_model__file(m, 0)->closed); /* the parent still has it */
	assert_int_equal(gctx_model__proc_by_pid(m, 1240)->nexecs, 1);
	assert_string_equal(gctx_model__proc_by_pid(m, 1240)->exe, "/usr/bin/python3");
	assert_string_equal(gctx_model__proc_by_pid(m, 1240)->comm, "python");
	assert_int_equal(holder_of(m, CTL_FILE2, 1240)->how, GCTX_HOLD_OPENED);
}

static void test_grandchild_chain(void **state)
{
	struct gctx_model *m = *state;
	const __u32 chain[] = {1234, 1240, 1250};
	const struct gctx_finding *f;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_fork(m, 1240, 1250, 210, "trainer");
	do_exit(m, 1240, 1240, 220, 0, true); /* the middle one is gone (double fork) */
	do_rm_alloc(m, 1250, 1250, 300, "daemon", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);

	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_GPU_USE), 1);
	f = nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0);
	assert_int_equal(f->pid, 1250);
	assert_int_equal(f->opener_pid, 1234);
	assert_chain(f, 3, chain);
	assert_non_null(strstr(f->detail, "1234->1240->1250"));
	/* the middle child never exec'd: its fork-with-gpu-state came at its exit */
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 1);
	assert_int_equal(nth_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE, 0)->pid, 1240);
}

static void test_fd_leaked_across_exec(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;
	const struct gctx_holder *h;

	/* two files, only one survives the exec */
	do_open(m, 1234, 100, "launcher", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_open(m, 1234, 101, "launcher", CTL_FILE2, 6, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_fd(m, GCTX_EV_FD_KEPT, 1234, 199, CTL_FILE, 5, GCTX_DEV_NVIDIACTL);
	do_exec(m, 1234, 1234, 200, "app", "/opt/app");

	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_GPU_FD_ACROSS_EXEC);
	assert_int_equal(f->severity, GCTX_SEV_WARNING);
	assert_int_equal(f->pid, 1234);
	assert_int_equal(f->opener_pid, 1234);
	assert_int_equal(f->file_id, 1);
	assert_int_equal(f->event_type, GCTX_EV_EXEC);
	assert_int_equal(f->time_ns, 200);
	assert_non_null(strstr(f->detail, "fd 5"));
	assert_non_null(strstr(f->detail, "O_CLOEXEC"));
	assert_non_null(strstr(f->detail, "opened by pid 1234 (launcher)"));
	h = holder_of(m, CTL_FILE, 1234);
	assert_true(h->held);
	assert_true(h->kept_across_exec);
	assert_int_equal(h->execs_since, 1);
	h = holder_of(m, CTL_FILE2, 1234);
	assert_false(h->held);
	assert_int_equal(h->until_ns, 200);
	assert_true(gctx_model__file(m, 1)->closed);
	assert_int_equal(gctx_model__file(m, 1)->close_ns, 200);

	/* the new image using what its process opened is not an inherited use */
	do_rm_alloc(m, 1234, 1234, 300, "app", CTL_FILE, 5, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
	assert_int_equal(gctx_model__nfindings(m), 1);
}

/* libcuda opens nvidiactl without O_CLOEXEC and sets FD_CLOEXEC with fcntl; Python's subprocess
 * closes every fd with close_range in the child. The exec's list of kept fds is the kernel's
 * answer, an empty one too: the open flags say nothing (issue 42). */
static void test_exec_empty_fd_list_is_an_answer(void **state)
{
	struct gctx_model *m = *state;

	do_open(m, 1234, 100, "python3", CTL_FILE, 3, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_open(m, 1234, 101, "python3", CTL_FILE2, 4, GCTX_DEV_NVIDIACTL, O_RDWR | O_CLOEXEC);
	do_fork(m, 1234, 1240, 200, "python3");
	do_exec(m, 1240, 1240, 210, "true", "/bin/true"); /* scanned whole, nothing kept */
	do_exec(m, 1234, 1234, 300, "app", "/opt/app");
	gctx_model__finish(m);
	assert_int_equal(gctx_model__nfindings(m), 0);
	assert_false(holder_of(m, CTL_FILE, 1240)->held);
	assert_int_equal(holder_of(m, CTL_FILE, 1240)->until_ns, 210);
	assert_false(holder_of(m, CTL_FILE, 1234)->held);
	assert_false(holder_of(m, CTL_FILE2, 1234)->held);
	assert_true(gctx_model__file(m, 0)->closed);
	assert_int_equal(gctx_model__exec_fds_unknown(m, NULL), 0);
	assert_false(gctx_model__proc_by_pid(m, 1240)->execs[0].fds_unknown);
}

/* dup2 onto another number, the original closed by exec: the kept fd is the kernel's. */
static void test_exec_kept_fd_is_the_kernels(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_holder *h;

	do_open(m, 1234, 100, "launcher", CTL_FILE, 3, GCTX_DEV_NVIDIACTL, O_RDWR | O_CLOEXEC);
	do_fd(m, GCTX_EV_FD_KEPT, 1234, 199, CTL_FILE, 9, GCTX_DEV_NVIDIACTL);
	do_exec(m, 1234, 1234, 200, "app", "/opt/app");
	assert_int_equal(count_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC), 1);
	assert_non_null(strstr(gctx_model__finding(m, 0)->detail, "(fd 9,"));
	h = holder_of(m, CTL_FILE, 1234);
	assert_true(h->held);
	assert_int_equal(h->nfds, 1);
	assert_int_equal(h->fds[0], 9);
}

/* A kept-fd record lost (the kernel says so, or fewer came than it sent): the files not listed
 * are of unknown state, not kept and not a finding; counted. Those listed are still kept. */
static void test_exec_fd_list_not_whole_is_unknown(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_ev_exec ev;
	__u64 files = 0;

	do_open(m, 1234, 100, "launcher", CTL_FILE, 3, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_open(m, 1234, 101, "launcher", CTL_FILE2, 4, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_fork(m, 1234, 1240, 150, "launcher");
	do_fork(m, 1234, 1250, 160, "launcher");

	ev = ev_exec(1240, 200, "a", "/bin/a", "a", 2);
	ev.fd_scan |= GCTX_EXEC_FDS_LOST;
	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
	assert_int_equal(gctx_model__nfindings(m), 0);
	assert_int_equal(gctx_model__exec_fds_unknown(m, &files), 1);
	assert_int_equal(files, 2);
	assert_true(gctx_model__proc_by_pid(m, 1240)->execs[0].fds_unknown);

	/* the exec says 2 were sent, 1 came: CTL_FILE is kept, CTL_FILE2 unknown */
	do_fd(m, GCTX_EV_FD_KEPT, 1250, 299, CTL_FILE, 3, GCTX_DEV_NVIDIACTL);
	ev = ev_exec(1250, 300, "b", "/bin/b", "b", 2);
	ev.fds_kept = 2;
	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
	assert_int_equal(count_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC), 1);
	assert_int_equal(gctx_model__finding(m, 0)->pid, 1250);
	assert_int_equal(gctx_model__finding(m, 0)->file_id, 1);
	assert_int_equal(gctx_model__exec_fds_unknown(m, &files), 2);
	assert_int_equal(files, 3);

	/* a table past the scan's bound: not whole either */
	ev = ev_exec(1234, 400, "c", "/bin/c", "c", 2);
	ev.fd_scan = 0;
	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
	assert_int_equal(count_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC), 1);
	assert_int_equal(gctx_model__exec_fds_unknown(m, &files), 3);
	assert_int_equal(files, 5);
}

/* An exec record of a trace older than the scan's count (format 3): its program sent every
 * kept fd, so its list is trusted, an empty one too; the open flags are not read. */
static void test_exec_old_trace_trusts_its_list(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_ev_exec ev = ev_exec(1240, 210, "true", "/bin/true", "true", 5);

	ev.fd_scan = 0;
	do_open(m, 1234, 100, "python3", CTL_FILE, 3, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_fork(m, 1234, 1240, 200, "python3");
	feed(m, GCTX_EV_EXEC, &ev, GCTX_EV_EXEC_NOSCAN_LEN);
	assert_int_equal(gctx_model__nfindings(m), 0);
	assert_false(holder_of(m, CTL_FILE, 1240)->held);
	assert_int_equal(gctx_model__exec_fds_unknown(m, NULL), 0);

	do_fork(m, 1234, 1250, 300, "python3");
	do_fd(m, GCTX_EV_FD_KEPT, 1250, 309, CTL_FILE, 3, GCTX_DEV_NVIDIACTL);
	ev = ev_exec(1250, 310, "true", "/bin/true", "true", 5);
	feed(m, GCTX_EV_EXEC, &ev, GCTX_EV_EXEC_NOSCAN_LEN);
	assert_int_equal(count_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC), 1);
	assert_int_equal(gctx_model__finding(m, 0)->pid, 1250);
}

/* fork of a process holding GPU fds: the kernel's list of the child's GPU fds (FD_FORK records
 * of the forking thread, counted in the fork record) is what it inherits. */
static void fork_listed(struct gctx_model *m, __u32 parent, __u32 tid, __u32 child, __u64 ts,
			__u32 flags, __u32 nfds)
{
	struct gctx_ev_fork ev = ev_fork(parent, child, ts, "trainer", false);

	ev.hdr.tid = tid;
	ev.flags |= flags;
	ev.nfds = nfds;
	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static void fd_fork(struct gctx_model *m, __u32 parent, __u32 tid, __u64 ts, __u64 file, int fd)
{
	struct gctx_ev_fd ev =
	    ev_fd(GCTX_EV_FD_FORK, parent, ts, "trainer", file, fd, GCTX_DEV_NVIDIACTL);

	ev.hdr.tid = tid;
	feed(m, GCTX_EV_FD_FORK, &ev, sizeof(ev));
}

static void test_fork_fds_are_the_kernels(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_holder *h;

	/* fd 5 closed since (close_range: not seen), CTL_FILE2 only under a dup the model never
	 * saw, after its own fd was closed (F_DUPFD, close) */
	trainer_with_client(m, 0);
	do_open(m, 1234, 110, "trainer", CTL_FILE2, 6, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_fd(m, GCTX_EV_CLOSE, 1234, 120, CTL_FILE2, 6, GCTX_DEV_NVIDIACTL);
	assert_true(gctx_model__file(m, 1)->closed);
	fd_fork(m, 1234, 1234, 199, CTL_FILE2, 12);
	fd_fork(m, 1234, 1235, 199, CTL_FILE, 5); /* another thread's fork, not this one's */
	fork_listed(m, 1234, 1234, 1240, 200, GCTX_FORK_FDS_SCANNED, 1);
	assert_null(holder_of(m, CTL_FILE, 1240));
	h = holder_of(m, CTL_FILE2, 1240);
	assert_int_equal(h->how, GCTX_HOLD_INHERITED);
	assert_int_equal(h->nfds, 1);
	assert_int_equal(h->fds[0], 12);
	/* the parent had it at the fork, under fd 12 */
	h = holder_of(m, CTL_FILE2, 1234);
	assert_true(h->held);
	assert_int_equal(h->fds[h->nfds - 1], 12);
	assert_false(gctx_model__file(m, 1)->closed);

	do_rm_alloc(m, 1240, 1240, 300, "worker", CTL_FILE2, 12, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_GPU_USE), 1);
	assert_int_equal(nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0)->opener_pid, 1234);

	/* the other thread's fork: its record stayed */
	fork_listed(m, 1234, 1235, 1250, 400, GCTX_FORK_FDS_SCANNED, 1);
	assert_int_equal(holder_of(m, CTL_FILE, 1250)->fds[0], 5);
	assert_null(holder_of(m, CTL_FILE2, 1250));
}

static void test_fork_empty_fd_list_inherits_nothing(void **state)
{
	struct gctx_model *m = *state;

	trainer_with_client(m, 0); /* then close_range(3, ~0U, 0): not seen */
	fork_listed(m, 1234, 1234, 1240, 200, GCTX_FORK_FDS_SCANNED, 0);
	do_exit(m, 1240, 1240, 300, 0, true);
	gctx_model__finish(m);
	assert_null(holder_of(m, CTL_FILE, 1240));
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 0);
}

/* A list not whole (a record lost, fewer than sent), or none (a parent not known to hold GPU
 * fds): the child inherits what the model has the parent hold. */
static void test_fork_fd_list_not_whole_copies_the_model(void **state)
{
	struct gctx_model *m = *state;

	trainer_with_client(m, 0);
	fork_listed(m, 1234, 1234, 1240, 200, GCTX_FORK_FDS_SCANNED | GCTX_FORK_FDS_LOST, 0);
	assert_int_equal(holder_of(m, CTL_FILE, 1240)->fds[0], 5);
	fork_listed(m, 1234, 1234, 1250, 300, GCTX_FORK_FDS_SCANNED, 1);
	assert_int_equal(holder_of(m, CTL_FILE, 1250)->fds[0], 5);
	fd_fork(m, 1234, 1234, 399, CTL_FILE, 5);
	fork_listed(m, 1234, 1234, 1260, 400, 0, 0);
	assert_int_equal(holder_of(m, CTL_FILE, 1260)->fds[0], 5);
	/* the unused record went with that fork: the next one's list is its own */
	fork_listed(m, 1234, 1234, 1270, 500, GCTX_FORK_FDS_SCANNED, 0);
	assert_null(holder_of(m, CTL_FILE, 1270));
}

/* A close: the fds left on the file are the kernel's count, not the model's list. */
static void close_counted(struct gctx_model *m, __u64 ts, __u64 file, int fd, __u32 flags,
			  __u32 others)
{
	struct gctx_ev_fd ev =
	    ev_fd(GCTX_EV_CLOSE, 1234, ts, "trainer", file, fd, GCTX_DEV_NVIDIACTL);

	ev.flags = flags;
	ev.others = others;
	feed(m, GCTX_EV_CLOSE, &ev, sizeof(ev));
}

static void test_close_counts_the_kernels_fds(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_holder *h;

	/* an F_DUPFD copy the model did not see: closing fd 5 leaves the file held */
	trainer_with_client(m, 0);
	close_counted(m, 200, CTL_FILE, 5, GCTX_FD_COUNTED, 1);
	h = holder_of(m, CTL_FILE, 1234);
	assert_true(h->held);
	assert_int_equal(h->nfds, 0);
	assert_false(gctx_model__file(m, 0)->closed);
	assert_false(gctx_model__obj(m, 0)->destroyed);

	/* fd 6 is in the model's list but was closed since (dup2 over it, close_range): the
	 * kernel counts none left after fd 7 */
	do_open(m, 1234, 300, "trainer", CTL_FILE2, 6, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_mmap(m, 1234, 310, CTL_FILE2, 7, 0x7f0000000000LL); /* a dup2 copy */
	close_counted(m, 400, CTL_FILE2, 7, GCTX_FD_COUNTED, 0);
	h = holder_of(m, CTL_FILE2, 1234);
	assert_false(h->held);
	assert_int_equal(h->until_ns, 400);
	assert_true(gctx_model__file(m, 1)->closed);

	/* an older trace's close (not counted): the model's list decides */
	close_counted(m, 500, CTL_FILE, 5, 0, 0);
	assert_false(holder_of(m, CTL_FILE, 1234)->held);
}

static void test_inherited_kept_across_exec_then_used(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_fd(m, GCTX_EV_FD_KEPT, 1240, 209, CTL_FILE, 5, GCTX_DEV_NVIDIACTL);
	do_exec(m, 1240, 1240, 210, "helper", "/usr/bin/helper");
	assert_int_equal(count_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC), 1);
	assert_int_equal(nth_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC, 0)->pid, 1240);
	assert_int_equal(nth_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC, 0)->opener_pid, 1234);

	do_rm_alloc(m, 1240, 1240, 300, "helper", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_GPU_USE), 1);
	f = nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0);
	assert_true(f->exec_between);
	assert_non_null(strstr(f->detail, "with an exec in between"));
	assert_true(holder_of(m, CTL_FILE, 1240)->kept_across_exec);

	gctx_model__finish(m); /* it exec'd: no fork-with-gpu-state */
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 0);
}

static void test_exec_of_the_parent_after_fork_is_not_between(void **state)
{
	struct gctx_model *m = *state;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_fork(m, 1240, 1250, 210, "trainer");
	do_exec(m, 1240, 1240, 220, "other", "/bin/other"); /* after forking 1250 */
	do_rm_alloc(m, 1250, 1250, 300, "w", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_false(nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0)->exec_between);
}

static void test_crash_after_inherited_use(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *use, *crash;
	const struct gctx_proc *p;

	trainer_with_client(m, O_CLOEXEC);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_rm_alloc(m, 1240, 1240, 300, "dl_worker", CTL_FILE, 5, 0xc1d00001, 0xc1d00001,
		    0x5c000002, CLS_DEVICE, 0);
	do_exit(m, 1240, 1240, 400, SIGSEGV_NR | 0x80, true);

	use = nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0);
	crash = nth_kind(m, GCTX_FIND_CRASH_AFTER_INHERITANCE, 0);
	assert_non_null(use);
	assert_non_null(crash);
	assert_int_equal(count_kind(m, GCTX_FIND_CRASH_AFTER_INHERITANCE), 1);
	assert_int_equal(crash->severity, GCTX_SEV_ERROR);
	assert_int_equal(crash->related_finding, use->id);
	assert_int_equal(crash->pid, 1240);
	assert_int_equal(crash->opener_pid, 1234);
	assert_int_equal(crash->file_id, 1);
	assert_int_equal(crash->event_type, GCTX_EV_EXIT);
	assert_int_equal(crash->time_ns, 400);
	assert_true(crash->id > use->id);
	assert_non_null(strstr(crash->detail, "SIGSEGV"));
	assert_non_null(strstr(crash->detail, "had used it"));

	p = gctx_model__proc_by_pid(m, 1240);
	assert_true(p->exited);
	assert_int_equal(p->signal, SIGSEGV_NR);
	assert_true(p->core_dumped);
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(p->exit_ns, 400);
	assert_false(holder_of(m, CTL_FILE, 1240)->held);
	assert_int_equal(holder_of(m, CTL_FILE, 1240)->until_ns, 400);

	/* a fork-with-gpu-state for the same child, which never exec'd and did use the files */
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 1);
	assert_true(nth_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE, 0)->later_used);
}

static void test_crash_without_use_and_normal_exit(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *crash;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_fork(m, 1234, 1241, 201, "trainer");
	do_exit(m, 1240, 1240, 300, SIGABRT_NR, true);
	do_exit(m, 1241, 1241, 301, 3 << 8, true); /* exit(3): not a crash */

	assert_int_equal(count_kind(m, GCTX_FIND_CRASH_AFTER_INHERITANCE), 1);
	crash = nth_kind(m, GCTX_FIND_CRASH_AFTER_INHERITANCE, 0);
	assert_int_equal(crash->pid, 1240);
	assert_int_equal(crash->related_finding, 0);
	assert_non_null(strstr(crash->detail, "SIGABRT"));
	assert_non_null(strstr(crash->detail, "never used it"));
	assert_int_equal(gctx_model__proc_by_pid(m, 1241)->exit_code, 3);
	assert_int_equal(gctx_model__proc_by_pid(m, 1241)->signal, 0);
	assert_false(gctx_model__proc_by_pid(m, 1240)->core_dumped);
}

static void test_kfd_child_gets_ebadf(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;
	const struct gctx_gpu_obj *o;

	do_open(m, 2000, 100, "hip_app", KFD_FILE, 3, GCTX_DEV_KFD, O_RDWR | O_CLOEXEC);
	do_kfd_version(m, 2000, 110, KFD_FILE, 3, 0);
	assert_int_equal(gctx_model__nobjs(m), 1);
	o = gctx_model__obj(m, 0);
	assert_int_equal(o->kind, GCTX_OBJ_KFD_PROCESS);
	assert_int_equal(o->creator_idx, gctx_model__proc_by_pid(m, 2000)->idx);
	assert_int_equal(o->file_id, 1);
	assert_false(o->destroyed);

	do_fork(m, 2000, 2001, 200, "hip_app");
	do_kfd_version(m, 2001, 210, KFD_FILE, 3, -EBADF);
	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_INHERITED_GPU_USE);
	assert_int_equal(f->err, 9);
	assert_false(f->has_status);
	assert_int_equal(f->kind_dev, GCTX_DEV_KFD);
	assert_non_null(strstr(f->call, "GET_VERSION"));
	assert_non_null(strstr(f->detail, "returned -1 EBADF"));

	/* every holder gone: the description is closed, and the KFD process with it */
	do_exit(m, 2001, 2001, 300, 0, true);
	do_fd(m, GCTX_EV_CLOSE, 2000, 310, KFD_FILE, 3, GCTX_DEV_KFD);
	assert_true(gctx_model__file(m, 0)->closed);
	assert_int_equal(gctx_model__file(m, 0)->close_ns, 310);
	assert_true(gctx_model__obj(m, 0)->destroyed);
	assert_int_equal(gctx_model__obj(m, 0)->destroy_ns, 310);
}

static void test_fd_passing_is_foreign(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;
	const struct gctx_holder *h;

	do_open(m, 1234, 100, "trainer", CTL_FILE2, 4, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_fork(m, 1234, 1240, 200, "trainer");
	/* opened after the fork: the child can only have it through SCM_RIGHTS or pidfd_getfd */
	do_open(m, 1234, 210, "trainer", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_rm_alloc(m, 1240, 1240, 300, "worker", CTL_FILE, 9, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
	do_rm_alloc(m, 1240, 1240, 310, "worker", CTL_FILE, 9, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);

	assert_int_equal(count_kind(m, GCTX_FIND_FOREIGN_GPU_USE), 1);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_GPU_USE), 0);
	f = nth_kind(m, GCTX_FIND_FOREIGN_GPU_USE, 0);
	assert_int_equal(f->severity, GCTX_SEV_ERROR);
	assert_int_equal(f->pid, 1240);
	assert_int_equal(f->opener_pid, 1234);
	assert_int_equal(f->file_id, 2);
	assert_int_equal(f->uses, 2);
	assert_int_equal(f->chain[f->nchain - 1], 1240);
	h = holder_of(m, CTL_FILE, 1240);
	assert_int_equal(h->how, GCTX_HOLD_RECEIVED);
	assert_int_equal(h->fds[0], 9);
	assert_int_equal(h->since_ns, 300);
	assert_string_equal(gctx_hold_how_name(h->how), "received");
}

static void test_use_of_unknown_file_is_foreign(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_gpu_file *file;
	const struct gctx_finding *f;

	do_rm_alloc(m, 3000, 3000, 100, "mystery", CTL_FILE, 7, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
	assert_int_equal(gctx_model__nfindings(m), 1);
	f = gctx_model__finding(m, 0);
	assert_int_equal(f->kind, GCTX_FIND_FOREIGN_GPU_USE);
	assert_int_equal(f->opener_pid, 0);
	assert_non_null(strstr(f->detail, "outside the trace"));
	file = gctx_model__file_by_addr(m, CTL_FILE);
	assert_non_null(file);
	assert_int_equal(file->opener_idx, -1);
	assert_int_equal(file->kind, GCTX_DEV_NVIDIACTL);
	assert_string_equal(file->path, "");
	assert_int_equal(gctx_model__proc(m, 0)->parent_idx, -1);
	assert_int_equal(gctx_model__proc(m, 0)->start_ns, 0);
}

static void test_reparented_child_still_names_opener(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_exit(m, 1234, 1234, 250, 0, true); /* 1240 is reparented to init */
	assert_false(gctx_model__file(m, 0)->closed);
	do_rm_alloc(m, 1240, 1240, 300, "orphan", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);

	f = nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0);
	assert_non_null(f);
	assert_int_equal(f->opener_pid, 1234);
	assert_int_equal(f->chain[0], 1234);
	assert_non_null(strstr(f->detail, "opened by pid 1234 (trainer)"));
	assert_int_equal(gctx_model__proc_by_pid(m, 1240)->ppid, 1234);
}

static void test_fork_with_gpu_state(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;

	trainer_with_client(m, O_CLOEXEC);
	do_open(m, 1234, 120, "trainer", KFD_FILE, 6, GCTX_DEV_KFD, O_RDWR | O_CLOEXEC);
	do_fork(m, 1234, 1240, 200, "trainer");	  /* uses it, exits */
	do_fork(m, 1234, 1241, 201, "trainer");	  /* never uses it, still running at the end */
	do_fork(m, 1234, 1242, 202, "trainer");	  /* execs */
	do_thread(m, 1234, 1235, 203, "trainer"); /* threads are not forks */
	do_rm_alloc(m, 1240, 1240, 300, "w0", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	do_exec(m, 1242, 1242, 310, "sh", "/bin/sh");
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 0);
	do_exit(m, 1240, 1240, 400, 0, true);

	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 1);
	f = nth_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE, 0);
	assert_int_equal(f->severity, GCTX_SEV_WARNING);
	assert_int_equal(f->pid, 1240);
	assert_int_equal(f->opener_pid, 1234);
	assert_int_equal(f->file_id, 1);
	assert_int_equal(f->time_ns, 200);
	assert_int_equal(f->event_type, GCTX_EV_FORK);
	assert_true(f->later_used);
	assert_non_null(strstr(f->detail, "2 GPU files"));
	assert_non_null(strstr(f->detail, "pid 1234 (trainer)"));
	assert_non_null(strstr(f->detail, "the child used them"));

	gctx_model__finish(m);
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 2);
	f = nth_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE, 1);
	assert_int_equal(f->pid, 1241);
	assert_false(f->later_used);
	assert_int_equal(f->time_ns, 201);
	assert_non_null(strstr(f->detail, "never used them"));
	assert_int_equal(cblog.calls, (int)gctx_model__nfindings(m));

	gctx_model__finish(m); /* idempotent */
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 2);
	assert_int_equal(cblog.calls, (int)gctx_model__nfindings(m));
}

static void test_child_mmap_failure(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;

	trainer_with_client(m, 0);
	do_fork(m, 1234, 1240, 200, "trainer");
	do_mmap(m, 1240, 300, CTL_FILE, 5, -EOPNOTSUPP);
	f = nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0);
	assert_non_null(f);
	assert_string_equal(f->call, "mmap");
	assert_int_equal(f->event_type, GCTX_EV_MMAP);
	assert_int_equal(f->err, EOPNOTSUPP);
	assert_false(f->has_status);
	assert_non_null(strstr(f->detail, "mmap returned -1 EOPNOTSUPP"));
	assert_int_equal(holder_of(m, CTL_FILE, 1240)->nmmaps, 1);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		TEST(test_fork_child_use_is_inherited),
		TEST(test_opener_and_its_threads_are_not_findings),
		TEST(test_fork_exec_own_file_is_clean),
		TEST(test_grandchild_chain),
		TEST(test_fd_leaked_across_exec),
		TEST(test_exec_empty_fd_list_is_an_answer),
		TEST(test_exec_kept_fd_is_the_kernels),
		TEST(test_exec_fd_list_not_whole_is_unknown),
		TEST(test_exec_old_trace_trusts_its_list),
		TEST(test_fork_fds_are_the_kernels),
		TEST(test_fork_empty_fd_list_inherits_nothing),
		TEST(test_fork_fd_list_not_whole_copies_the_model),
		TEST(test_close_counts_the_kernels_fds),
		TEST(test_inherited_kept_across_exec_then_used),
		TEST(test_exec_of_the_parent_after_fork_is_not_between),
		TEST(test_crash_after_inherited_use),
		TEST(test_crash_without_use_and_normal_exit),
		TEST(test_kfd_child_gets_ebadf),
		TEST(test_fd_passing_is_foreign),
		TEST(test_use_of_unknown_file_is_foreign),
		TEST(test_reparented_child_still_names_opener),
		TEST(test_fork_with_gpu_state),
		TEST(test_child_mmap_failure),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
