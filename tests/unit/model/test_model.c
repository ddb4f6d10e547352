// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the lineage model: event sequences built by hand, checked the way a user reads
 * a report (who opened, who inherited, who used, what the driver said).
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

#define CTL_FILE  0xffff888100001000ULL
#define CTL_FILE2 0xffff888100002000ULL
#define KFD_FILE  0xffff888100003000ULL

#define NV_RM_FREE  0xC0104629u /* _IOWR('F', 0x29, NVOS00) */
#define KFD_GET_VER 0x80084B01u /* _IOR('K', 0x01, 8) */
#define KFD_ALLOC   0xC0284B16u /* _IOWR('K', 0x16, kfd_ioctl_alloc_memory_of_gpu_args) */
#define KFD_FREE    0x40084B17u /* _IOW('K', 0x17, kfd_ioctl_free_memory_of_gpu_args) */

#define CLS_CLIENT 0x41
#define CLS_DEVICE 0x80
#define CLS_TSG	   0xa06c

#define SIGSEGV_NR 11
#define SIGABRT_NR 6

struct cb_log {
	int calls;
	__u32 last_id;
};

static struct cb_log cblog;

static void on_finding(const struct gctx_finding *f, void *ctx)
{
	struct cb_log *log = ctx;

	log->calls++;
	log->last_id = f->id;
}

static int setup(void **state)
{
	struct gctx_model *m = gctx_model__new();

	if (!m)
		return -1;
	memset(&cblog, 0, sizeof(cblog));
	gctx_model__set_finding_cb(m, on_finding, &cblog);
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	gctx_model__free(*state);
	return 0;
}

/* ---- record builders ---- */

/* Process parent forks process child (child's pid == tid). */
static void do_fork(struct gctx_model *m, __u32 parent, __u32 child, __u64 ts, const char *comm)
{
	struct gctx_ev_fork ev = ev_fork(parent, child, ts, comm, false);

	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static void do_thread(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, const char *comm)
{
	struct gctx_ev_fork ev = ev_fork(tgid, tid, ts, comm, true);

	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static void do_exec(struct gctx_model *m, __u32 tgid, __u32 old_tid, __u64 ts, const char *comm,
		    const char *filename)
{
	struct gctx_ev_exec ev = ev_exec(tgid, ts, comm, filename, filename, strlen(filename) + 1);

	ev.old_tid = old_tid;
	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
}

static void do_exit(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, __u32 code,
		    bool group_dead)
{
	struct gctx_ev_exit ev = ev_exit(tgid, tid, ts, "x", code, group_dead);

	feed(m, GCTX_EV_EXIT, &ev, sizeof(ev));
}

static void do_open(struct gctx_model *m, __u32 tgid, __u64 ts, const char *comm, __u64 file,
		    int fd, __u32 kind, __u32 flags)
{
	struct gctx_ev_open ev = ev_open_dev(tgid, ts, comm, file, fd, flags, kind);

	feed(m, GCTX_EV_OPEN, &ev, sizeof(ev));
}

/* Write v at off in both the entry and the exit copy of the parameters. */
static void param32(struct gctx_ev_ioctl *ev, __u32 off, __u32 v)
{
	put32(ev->in, off, v);
	put32(ev->out, off, v);
}

/* NV_ESC_RM_ALLOC with NVOS64 parameters. */
static void do_rm_alloc(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, const char *comm,
			__u64 file, int fd, __u32 client, __u32 parent, __u32 handle, __u32 cls,
			__u32 status)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tid, ts, comm, file, fd, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC, 48);
	rm_alloc_params(&ev, client, parent, handle, cls, status);
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

/* NV_ESC_RM_FREE with NVOS00 parameters. */
static void do_rm_free(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd, __u32 client,
		       __u32 parent, __u32 handle)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_NVIDIACTL, NV_RM_FREE, 16);
	param32(&ev, 0x0, client); /* hRoot */
	param32(&ev, 0x4, parent); /* hObjectParent */
	param32(&ev, 0x8, handle); /* hObjectOld */
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static void do_kfd_version(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
			   __s64 ret)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_KFD, KFD_GET_VER, 8);
	ev.ret = ret;
	if (ret < 0)
		ev.flags = GCTX_IOCTL_IN_OK; /* nothing was copied back */
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static void put64(__u8 *b, __u32 off, __u64 v)
{
	memcpy(b + off, &v, sizeof(v));
}

/* KFD ALLOC_MEMORY_OF_GPU: va @0, size @8, handle @0x10 (out), gpu_id @0x20, flags @0x24. */
static void do_kfd_alloc(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd, __u64 size,
			 __u64 handle)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_KFD, KFD_ALLOC, 0x28);
	put64(ev.in, 0x0, 0x7f0000000000ULL);
	put64(ev.out, 0x0, 0x7f0000000000ULL);
	put64(ev.in, 0x8, size);
	put64(ev.out, 0x8, size);
	put64(ev.out, 0x10, handle);
	param32(&ev, 0x20, 0x1234); /* gpu_id */
	param32(&ev, 0x24, 0x1);    /* VRAM */
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static void do_kfd_free(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
			__u64 handle)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_KFD, KFD_FREE, 8);
	put64(ev.in, 0x0, handle);
	put64(ev.out, 0x0, handle);
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static void do_mmap(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd, __s64 ret)
{
	struct gctx_ev_mmap ev;

	ev_init(&ev, sizeof(ev), GCTX_EV_MMAP, tgid, tgid, ts, "x");
	ev.file = file;
	ev.fd = fd;
	ev.kind = GCTX_DEV_NVIDIACTL;
	ev.len = 4096;
	ev.ret = ret;
	feed(m, GCTX_EV_MMAP, &ev, sizeof(ev));
}

static void do_fd(struct gctx_model *m, __u32 type, __u32 tgid, __u64 ts, __u64 file, int fd,
		  __u32 kind)
{
	struct gctx_ev_fd ev = ev_fd(type, tgid, ts, "x", file, fd, kind);

	feed(m, type, &ev, sizeof(ev));
}

static void rec_proc(struct gctx_model *m, __u32 pid, __u32 ppid, __u64 start, const char *comm)
{
	struct gctx_rec_proc r = {.pid = pid, .ppid = ppid, .start_ns = start, .nthreads = 1};

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	snprintf(r.exe, sizeof(r.exe), "/usr/bin/%s", comm);
	feed(m, GCTX_REC_PROC_PRESENT, &r, sizeof(r));
}

static void rec_file(struct gctx_model *m, __u32 pid, int fd, __u64 file, __u32 kind, bool cloexec)
{
	struct gctx_rec_file r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.fd = fd;
	r.file = file;
	r.kind = kind;
	r.flags = O_RDWR;
	r.cloexec = cloexec;
	snprintf(r.path, sizeof(r.path), "/dev/nvidiactl");
	feed(m, GCTX_REC_FILE_PRESENT, &r, sizeof(r));
}

/* ---- queries ---- */

static __u32 count_kind(struct gctx_model *m, enum gctx_finding_kind k)
{
	__u32 i, n = 0;

	for (i = 0; i < gctx_model__nfindings(m); i++)
		n += gctx_model__finding(m, i)->kind == k;
	return n;
}

static const struct gctx_finding *nth_kind(struct gctx_model *m, enum gctx_finding_kind k,
					   __u32 nth)
{
	__u32 i;

	for (i = 0; i < gctx_model__nfindings(m); i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);

		if (f->kind == k && !nth--)
			return f;
	}
	return NULL;
}

static const struct gctx_holder *holder_of(struct gctx_model *m, __u64 addr, __u32 pid)
{
	const struct gctx_gpu_file *f = gctx_model__file_by_addr(m, addr);
	const struct gctx_proc *p = gctx_model__proc_by_pid(m, pid);
	__u32 i;

	assert_non_null(f);
	assert_non_null(p);
	for (i = 0; i < f->nholders; i++)
		if (f->holders[i].proc_idx == p->idx)
			return &f->holders[i];
	return NULL;
}

static void assert_chain(const struct gctx_finding *f, __u32 n, const __u32 *pids)
{
	__u32 i;

	assert_int_equal(f->nchain, n);
	for (i = 0; i < n; i++)
		assert_int_equal(f->chain[i], pids[i]);
}

/* The common start: 1234 (trainer) opens nvidiactl fd 5 and makes an RM client. */
static void trainer_with_client(struct gctx_model *m, __u32 flags)
{
	do_open(m, 1234, 100, "trainer", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR | flags);
	do_rm_alloc(m, 1234, 1234, 110, "trainer", CTL_FILE, 5, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
}

/* ---- tests ---- */

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

static void test_exec_without_fd_kept_uses_cloexec(void **state)
{
	struct gctx_model *m = *state;

	do_open(m, 1234, 100, "launcher", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_open(m, 1234, 101, "launcher", CTL_FILE2, 6, GCTX_DEV_NVIDIACTL, O_RDWR | O_CLOEXEC);
	do_exec(m, 1234, 1234, 200, "app", "/opt/app");
	assert_int_equal(count_kind(m, GCTX_FIND_GPU_FD_ACROSS_EXEC), 1);
	assert_int_equal(gctx_model__finding(m, 0)->file_id, 1);
	assert_true(holder_of(m, CTL_FILE, 1234)->held);
	assert_false(holder_of(m, CTL_FILE2, 1234)->held);
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

static void test_rm_object_tree(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_gpu_obj *cl, *dev, *tsg;
	__u32 i;

	trainer_with_client(m, 0);
	do_rm_alloc(m, 1234, 1234, 120, "trainer", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	do_rm_alloc(m, 1234, 1236, 130, "trainer", CTL_FILE, 5, 0xc1d00001, 0x5c000002, 0x5c000010,
		    CLS_TSG, 0);
	/* a failed alloc creates nothing */
	do_rm_alloc(m, 1234, 1234, 135, "trainer", CTL_FILE, 5, 0xc1d00001, 0x5c000002, 0x5c000011,
		    CLS_TSG, 0x23);
	assert_int_equal(gctx_model__nobjs(m), 3);

	cl = gctx_model__obj(m, 0);
	dev = gctx_model__obj(m, 1);
	tsg = gctx_model__obj(m, 2);
	assert_int_equal(cl->kind, GCTX_OBJ_RM_CLIENT);
	assert_int_equal(cl->handle, 0xc1d00001);
	assert_int_equal(cl->parent_obj, -1);
	assert_int_equal(cl->cls, CLS_CLIENT);
	assert_int_equal(dev->kind, GCTX_OBJ_RM_DEVICE);
	assert_int_equal(dev->parent_obj, 0);
	assert_int_equal(dev->client, 0xc1d00001);
	assert_int_equal(tsg->kind, GCTX_OBJ_RM_CHANNEL_GROUP);
	assert_int_equal(tsg->cls, CLS_TSG);
	assert_int_equal(tsg->parent_obj, 1);
	assert_int_equal(tsg->handle, 0x5c000010);
	assert_int_equal(tsg->creator_idx, gctx_model__proc_by_pid(m, 1234)->idx);
	assert_int_equal(tsg->creator_tid, 1236);
	assert_int_equal(tsg->create_ns, 130);
	assert_int_equal(tsg->file_id, 1);
	assert_int_equal(tsg->id, 3);

	do_rm_free(m, 1234, 400, CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0xc1d00001);
	for (i = 0; i < 3; i++) {
		assert_true(gctx_model__obj(m, i)->destroyed);
		assert_int_equal(gctx_model__obj(m, i)->destroy_ns, 400);
	}
}

static void test_rm_free_destroys_descendants_only(void **state)
{
	struct gctx_model *m = *state;

	trainer_with_client(m, 0);
	do_rm_alloc(m, 1234, 1234, 120, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	do_rm_alloc(m, 1234, 1234, 130, "t", CTL_FILE, 5, 0xc1d00001, 0x5c000002, 0x5c000010,
		    CLS_TSG, 0);
	do_rm_alloc(m, 1234, 1234, 140, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000003,
		    CLS_DEVICE, 0);
	do_rm_free(m, 1234, 200, CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002);
	assert_false(gctx_model__obj(m, 0)->destroyed); /* client */
	assert_true(gctx_model__obj(m, 1)->destroyed);	/* device */
	assert_true(gctx_model__obj(m, 2)->destroyed);	/* its TSG */
	assert_false(gctx_model__obj(m, 3)->destroyed); /* the other device */

	/* the same handle again is a new object */
	do_rm_alloc(m, 1234, 1234, 210, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_int_equal(gctx_model__nobjs(m), 5);
	assert_int_equal(gctx_model__obj(m, 4)->parent_obj, 0);
	/* and a CREATE of a live handle replaces it */
	do_rm_alloc(m, 1234, 1234, 220, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_true(gctx_model__obj(m, 4)->destroyed);
	assert_false(gctx_model__obj(m, 5)->destroyed);
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

static void test_kfd_memory_objects(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_gpu_obj *o;

	do_open(m, 2000, 100, "hip_app", KFD_FILE, 3, GCTX_DEV_KFD, O_RDWR | O_CLOEXEC);
	do_kfd_alloc(m, 2000, 110, KFD_FILE, 3, 1 << 20, 0x123400000001ULL);
	do_kfd_alloc(m, 2000, 120, KFD_FILE, 3, 4096, 0x123400000002ULL);
	assert_int_equal(gctx_model__nobjs(m), 3);
	o = gctx_model__obj(m, 1);
	assert_int_equal(o->kind, GCTX_OBJ_KFD_MEMORY);
	assert_int_equal(o->handle, 0x123400000001ULL);
	assert_int_equal(o->size, 1 << 20);
	assert_int_equal(o->parent_obj, 0); /* the file's KFD process */
	do_kfd_free(m, 2000, 130, KFD_FILE, 3, 0x123400000001ULL);
	assert_true(gctx_model__obj(m, 1)->destroyed);
	assert_int_equal(gctx_model__obj(m, 1)->destroy_ns, 130);
	assert_false(gctx_model__obj(m, 2)->destroyed);
	assert_false(gctx_model__obj(m, 0)->destroyed);
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
	assert_int_equal(gctx_record_min_len(GCTX_EV_API), sizeof(struct gctx_ev_api));
	assert_int_equal(gctx_record_min_len(GCTX_EV_LIBMAP), sizeof(struct gctx_ev_libmap));
	assert_int_equal(gctx_record_min_len(GCTX_REC_PROBE), sizeof(struct gctx_rec_probe));
	assert_int_equal(gctx_record_min_len(0), 0);
	assert_int_equal(gctx_record_min_len(GCTX_EV_KERNEL_MAX), 0);
	assert_string_equal(gctx_ev_type_name(GCTX_EV_FORK), "fork");
	assert_string_equal(gctx_ev_type_name(GCTX_EV_FD_KEPT), "fd_kept");
	assert_string_equal(gctx_ev_type_name(GCTX_EV_LIBMAP), "libmap");
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
		TEST(test_exec_without_fd_kept_uses_cloexec),
		TEST(test_inherited_kept_across_exec_then_used),
		TEST(test_exec_of_the_parent_after_fork_is_not_between),
		TEST(test_crash_after_inherited_use),
		TEST(test_crash_without_use_and_normal_exit),
		TEST(test_kfd_child_gets_ebadf),
		TEST(test_fd_passing_is_foreign),
		TEST(test_use_of_unknown_file_is_foreign),
		TEST(test_pid_reuse),
		TEST(test_missed_exit_then_pid_reuse),
		TEST(test_reparented_child_still_names_opener),
		TEST(test_exec_from_non_leader_thread),
		TEST(test_rm_object_tree),
		TEST(test_rm_free_destroys_descendants_only),
		TEST(test_fork_with_gpu_state),
		TEST(test_close_ends_holder),
		TEST(test_attach_snapshot),
		TEST(test_attach_threads),
		TEST(test_attach_unrelated_holders_are_present),
		TEST(test_child_mmap_failure),
		TEST(test_kfd_memory_objects),
		TEST(test_snapshot_completes_process_seen_first),
		TEST(test_short_and_unknown_records),
		TEST(test_record_types),
		TEST(test_unaligned_record),
		TEST(test_many_forks_scale),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
