/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the lineage model's unit tests (tests/unit/model/test_lineage.c,
 * test_objects.c, test_findings.c): a model per test with a finding callback that counts, the
 * record steps those tests feed it, and the queries they check it with. Header-only (static
 * inline): include it after <cmocka.h> and builders.h.
 */
#ifndef __GPUCTX_TEST_MODEL_TESTS_H
#define __GPUCTX_TEST_MODEL_TESTS_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

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

struct cb_log {
	int calls;
	__u32 last_id;
};

static struct cb_log cblog;

static inline void on_finding(const struct gctx_finding *f, void *ctx)
{
	struct cb_log *log = ctx;

	log->calls++;
	log->last_id = f->id;
}

/* FD_KEPT records fed since the last exec: the count the kernel puts in the exec record. */
static __u32 kept_pending;

static inline int setup(void **state)
{
	struct gctx_model *m = gctx_model__new();

	if (!m)
		return -1;
	memset(&cblog, 0, sizeof(cblog));
	kept_pending = 0;
	gctx_model__set_finding_cb(m, on_finding, &cblog);
	*state = m;
	return 0;
}

static inline int teardown(void **state)
{
	gctx_model__free(*state);
	return 0;
}

/* ---- record builders ---- */

/* Process parent forks process child (child's pid == tid). */
static inline void do_fork(struct gctx_model *m, __u32 parent, __u32 child, __u64 ts,
			   const char *comm)
{
	struct gctx_ev_fork ev = ev_fork(parent, child, ts, comm, false);

	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static inline void do_thread(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts,
			     const char *comm)
{
	struct gctx_ev_fork ev = ev_fork(tgid, tid, ts, comm, true);

	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static inline void do_exec(struct gctx_model *m, __u32 tgid, __u32 old_tid, __u64 ts,
			   const char *comm, const char *filename)
{
	struct gctx_ev_exec ev = ev_exec(tgid, ts, comm, filename, filename, strlen(filename) + 1);

	ev.old_tid = old_tid;
	ev.fds_kept = kept_pending;
	kept_pending = 0;
	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
}

static inline void do_exit(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, __u32 code,
			   bool group_dead)
{
	struct gctx_ev_exit ev = ev_exit(tgid, tid, ts, "x", code, group_dead);

	feed(m, GCTX_EV_EXIT, &ev, sizeof(ev));
}

static inline void do_open(struct gctx_model *m, __u32 tgid, __u64 ts, const char *comm, __u64 file,
			   int fd, __u32 kind, __u32 flags)
{
	struct gctx_ev_open ev = ev_open_dev(tgid, ts, comm, file, fd, flags, kind);

	feed(m, GCTX_EV_OPEN, &ev, sizeof(ev));
}

/* Write v at off in both the entry and the exit copy of the parameters. */
static inline void param32(struct gctx_ev_ioctl *ev, __u32 off, __u32 v)
{
	put32(ev->in, off, v);
	put32(ev->out, off, v);
}

/* NV_ESC_RM_ALLOC with NVOS64 parameters. */
static inline void do_rm_alloc(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts,
			       const char *comm, __u64 file, int fd, __u32 client, __u32 parent,
			       __u32 handle, __u32 cls, __u32 status)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tid, ts, comm, file, fd, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC, 48);
	rm_alloc_params(&ev, client, parent, handle, cls, status);
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

/* NV_ESC_RM_FREE with NVOS00 parameters. */
static inline void do_rm_free(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
			      __u32 client, __u32 parent, __u32 handle)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_NVIDIACTL, NV_RM_FREE, 16);
	param32(&ev, 0x0, client); /* hRoot */
	param32(&ev, 0x4, parent); /* hObjectParent */
	param32(&ev, 0x8, handle); /* hObjectOld */
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static inline void do_kfd_version(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
				  __s64 ret)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_KFD, KFD_GET_VER, 8);
	ev.ret = ret;
	if (ret < 0)
		ev.flags = GCTX_IOCTL_IN_OK; /* nothing was copied back */
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static inline void put64(__u8 *b, __u32 off, __u64 v)
{
	memcpy(b + off, &v, sizeof(v));
}

/* KFD ALLOC_MEMORY_OF_GPU: va @0, size @8, handle @0x10 (out), gpu_id @0x20, flags @0x24. */
static inline void do_kfd_alloc(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
				__u64 size, __u64 handle)
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

static inline void do_kfd_free(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
			       __u64 handle)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tgid, ts, "x", file, fd, GCTX_DEV_KFD, KFD_FREE, 8);
	put64(ev.in, 0x0, handle);
	put64(ev.out, 0x0, handle);
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

static inline void do_mmap(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd,
			   __s64 ret)
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

static inline void do_fd(struct gctx_model *m, __u32 type, __u32 tgid, __u64 ts, __u64 file, int fd,
			 __u32 kind)
{
	struct gctx_ev_fd ev = ev_fd(type, tgid, ts, "x", file, fd, kind);

	if (type == GCTX_EV_FD_KEPT)
		kept_pending++;
	feed(m, type, &ev, sizeof(ev));
}

static inline void rec_proc(struct gctx_model *m, __u32 pid, __u32 ppid, __u64 start,
			    const char *comm)
{
	struct gctx_rec_proc r = {.pid = pid, .ppid = ppid, .start_ns = start, .nthreads = 1};

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	snprintf(r.exe, sizeof(r.exe), "/usr/bin/%s", comm);
	feed(m, GCTX_REC_PROC_PRESENT, &r, sizeof(r));
}

static inline void rec_file(struct gctx_model *m, __u32 pid, int fd, __u64 file, __u32 kind,
			    bool cloexec)
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

static inline __u32 count_kind(struct gctx_model *m, enum gctx_finding_kind k)
{
	__u32 i, n = 0;

	for (i = 0; i < gctx_model__nfindings(m); i++)
		n += gctx_model__finding(m, i)->kind == k;
	return n;
}

static inline const struct gctx_finding *nth_kind(struct gctx_model *m, enum gctx_finding_kind k,
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

static inline const struct gctx_holder *holder_of(struct gctx_model *m, __u64 addr, __u32 pid)
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

static inline void assert_chain(const struct gctx_finding *f, __u32 n, const __u32 *pids)
{
	__u32 i;

	assert_int_equal(f->nchain, n);
	for (i = 0; i < n; i++)
		assert_int_equal(f->chain[i], pids[i]);
}

/* The common start: 1234 (trainer) opens nvidiactl fd 5 and makes an RM client. */
static inline void trainer_with_client(struct gctx_model *m, __u32 flags)
{
	do_open(m, 1234, 100, "trainer", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR | flags);
	do_rm_alloc(m, 1234, 1234, 110, "trainer", CTL_FILE, 5, 0, 0, 0xc1d00001, CLS_CLIENT, 0);
}

#endif /* __GPUCTX_TEST_MODEL_TESTS_H */
