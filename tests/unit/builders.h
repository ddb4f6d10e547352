/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the unit tests: record builders, the model and trace-file feeders, the
 * trace file of a small training job that the timeline exporters' tests export, and the
 * python3 checker. Header-only (static inline), as every test is one file: include it after
 * <cmocka.h>.
 *
 * Every builder zeroes its record first; a comm may be exactly GCTX_COMM_LEN bytes without a
 * NUL, as the kernel may give it.
 */
#ifndef __GPUCTX_TEST_BUILDERS_H
#define __GPUCTX_TEST_BUILDERS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "gpuctx_events.h"
#include "model/model.h"
#include "trace/tracefile.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define T0    1000000000ULL	     /* start_mono_ns of every test trace */
#define WALL0 1763704992123456789ULL /* its start_wall_ns: 2025-11-21T06:03:12.123456789Z */

#define NV_RM_ALLOC	   0xC030462Bu /* _IOWR('F', 0x2b, NVOS64) */
#define NV_RM_CONTROL	   0xC020462Au /* _IOWR('F', 0x2a, NVOS54) */
#define NV_RM_ALLOC_MEMORY 0xC0384627u /* _IOWR('F', 0x27, NVOS02 with fd) */
#define NVIDIACTL_RDEV	   ((195u << 20) | 255u)

/* ---- kernel records ---- */

static inline void hdr_fill(struct gctx_ev_hdr *h, __u32 type, __u32 pid, __u32 tid, __u64 ts,
			    const char *comm)
{
	h->type = type;
	h->tgid = pid;
	h->tid = tid;
	h->ts_ns = ts;
	memcpy(h->comm, comm, strnlen(comm, GCTX_COMM_LEN));
}

/* Zero a kernel record of size bytes and fill its header (the first member of every one). */
static inline void ev_init(void *e, size_t size, __u32 type, __u32 pid, __u32 tid, __u64 ts,
			   const char *comm)
{
	memset(e, 0, size);
	hdr_fill(e, type, pid, tid, ts, comm);
}

static inline void put32(__u8 *b, __u32 off, __u32 v)
{
	memcpy(b + off, &v, sizeof(v));
}

/* pid forks process child, or starts thread child when thread. */
static inline struct gctx_ev_fork ev_fork(__u32 pid, __u32 child, __u64 ts, const char *comm,
					  bool thread)
{
	struct gctx_ev_fork e;

	ev_init(&e, sizeof(e), GCTX_EV_FORK, pid, pid, ts, comm);
	e.child_tid = child;
	e.child_tgid = thread ? pid : child;
	e.flags = thread ? GCTX_FORK_THREAD : 0;
	return e;
}

static inline struct gctx_ev_exec ev_exec(__u32 pid, __u64 ts, const char *comm, const char *file,
					  const char *args, __u32 args_len)
{
	struct gctx_ev_exec e;

	ev_init(&e, sizeof(e), GCTX_EV_EXEC, pid, pid, ts, comm);
	e.old_tid = pid;
	snprintf(e.filename, sizeof(e.filename), "%s", file);
	memcpy(e.args, args, args_len);
	e.args_len = args_len;
	/* as the kernel sends it: the fd table read whole, no GPU fd kept unless told */
	e.fd_scan = GCTX_EXEC_FDS_SCANNED;
	e.fds_kept = 0;
	return e;
}

static inline struct gctx_ev_exit ev_exit(__u32 pid, __u32 tid, __u64 ts, const char *comm,
					  __u32 code, bool group_dead)
{
	struct gctx_ev_exit e;

	ev_init(&e, sizeof(e), GCTX_EV_EXIT, pid, tid, ts, comm);
	e.exit_code = code;
	e.group_dead = group_dead;
	return e;
}

/* An open of /dev/kfd (kind GCTX_DEV_KFD), else of /dev/nvidiactl; rdev and ino 0. */
static inline struct gctx_ev_open ev_open_dev(__u32 pid, __u64 ts, const char *comm, __u64 file,
					      int fd, __u32 flags, __u32 kind)
{
	struct gctx_ev_open e;

	ev_init(&e, sizeof(e), GCTX_EV_OPEN, pid, pid, ts, comm);
	e.file = file;
	e.fd = fd;
	e.flags = flags;
	e.kind = kind;
	snprintf(e.path, sizeof(e.path), "%s",
		 kind == GCTX_DEV_KFD ? "/dev/kfd" : "/dev/nvidiactl");
	return e;
}

/* An ioctl record whose size parameter bytes were read at entry and exit (all zero yet). */
static inline void ioctl_ev(struct gctx_ev_ioctl *ev, __u32 pid, __u32 tid, __u64 ts,
			    const char *comm, __u64 file, int fd, __u32 kind, __u32 cmd, __u32 size)
{
	ev_init(ev, sizeof(*ev), GCTX_EV_IOCTL, pid, tid, ts, comm);
	ev->file = file;
	ev->fd = fd;
	ev->cmd = cmd;
	ev->kind = kind;
	ev->flags = GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK;
	ev->size = size;
	ev->len = size;
}

/* NV_ESC_RM_ALLOC parameters, NVOS64: hRoot@0 hObjectParent@4 hObjectNew@8 hClass@0xc at
 * entry and exit, and the status RM wrote at 0x28. */
static inline void rm_alloc_params(struct gctx_ev_ioctl *ev, __u32 root, __u32 parent, __u32 handle,
				   __u32 cls, __u32 status)
{
	put32(ev->in, 0x0, root);
	put32(ev->in, 0x4, parent);
	put32(ev->in, 0x8, handle);
	put32(ev->in, 0xc, cls);
	memcpy(ev->out, ev->in, sizeof(ev->out));
	put32(ev->out, 0x28, status);
}

static inline struct gctx_ev_fd ev_fd(__u32 type, __u32 pid, __u64 ts, const char *comm, __u64 file,
				      int fd, __u32 kind)
{
	struct gctx_ev_fd e;

	ev_init(&e, sizeof(e), type, pid, pid, ts, comm);
	e.file = file;
	e.fd = fd;
	e.kind = kind;
	return e;
}

/* A returned CUDA/HIP call on thread tid of pid, out read; no arguments yet. */
static inline struct gctx_ev_api ev_api(__u32 pid, __u32 tid, __u64 ts, const char *comm, __u64 dur,
					__u32 fn, __s64 ret, __u64 out)
{
	struct gctx_ev_api e;

	ev_init(&e, sizeof(e), GCTX_EV_API, pid, tid, ts, comm);
	e.fn = fn;
	e.flags = GCTX_API_RETURNED | GCTX_API_OUT_OK;
	e.ret = ret;
	e.dur_ns = dur;
	e.out = out;
	return e;
}

/* The exact struct size of each record type (the wire format's, not the code's under test): the
 * kernel records gpuctx record prints (the first N_PRINTED_RECS), then the collector records,
 * probes excepted. */
struct rec_size {
	__u32 type;
	__u32 len;
};

#define N_PRINTED_RECS 8

/* clang-format off */
#define REC_SIZE(type, st) { type, sizeof(struct st) }

static const struct rec_size rec_sizes[] = {
	REC_SIZE(GCTX_EV_FORK, gctx_ev_fork),	{ GCTX_EV_EXEC, GCTX_EV_EXEC_V3_LEN },
	REC_SIZE(GCTX_EV_EXIT, gctx_ev_exit),	REC_SIZE(GCTX_EV_OPEN, gctx_ev_open),
	{ GCTX_EV_IOCTL, offsetof(struct gctx_ev_ioctl, in) },	REC_SIZE(GCTX_EV_MMAP, gctx_ev_mmap),
	{ GCTX_EV_CLOSE, GCTX_EV_FD_V3_LEN },	{ GCTX_EV_FD_KEPT, GCTX_EV_FD_V3_LEN },
	REC_SIZE(GCTX_REC_PROC_PRESENT, gctx_rec_proc),
	REC_SIZE(GCTX_REC_FILE_PRESENT, gctx_rec_file),
	REC_SIZE(GCTX_REC_DEVICE, gctx_rec_device),
	{ GCTX_REC_DROPS, GCTX_REC_DROPS_V1_LEN },
	REC_SIZE(GCTX_REC_END, gctx_rec_end),
};
/* clang-format on */

/* ---- feeders ---- */

static inline void feed(struct gctx_model *m, __u32 type, const void *rec, __u32 len)
{
	assert_int_equal(gctx_model__feed(m, type, rec, len), 0);
}

/* A call site resolved by the collector (GCTX_REC_CALLER): a native frame. */
static inline void do_caller(struct gctx_model *m, __u32 pid, __u64 addr, const char *module,
			     const char *fn, __u64 off)
{
	struct gctx_rec_caller r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.frame.kind = GCTX_FRAME_NATIVE;
	r.frame.addr = addr;
	r.frame.offset = off;
	snprintf(r.frame.module, sizeof(r.frame.module), "%s", module);
	snprintf(r.frame.function, sizeof(r.frame.function), "%s", fn);
	feed(m, GCTX_REC_CALLER, &r, sizeof(r));
}

static inline void put(struct gctx_trace_writer *w, __u32 type, const void *p, __u32 len)
{
	assert_int_equal(gctx_trace_writer__append(w, type, p, len), 0);
}

/* The header of every test trace: started at T0 (WALL0) on gpu-node-7 to trace cmdline. */
static inline void meta_fill(struct gctx_trace_meta *m, const char *cmdline)
{
	memset(m, 0, sizeof(*m));
	m->start_wall_ns = WALL0;
	m->start_mono_ns = T0;
	snprintf(m->hostname, sizeof(m->hostname), "gpu-node-7");
	snprintf(m->kernel, sizeof(m->kernel), "6.18.44");
	snprintf(m->version, sizeof(m->version), "0.1.0");
	snprintf(m->cmdline, sizeof(m->cmdline), "%s", cmdline);
}

/* ---- the timeline exporters' trace file ---- */

#define SCN_CTL_FILE 0xffff888000a01000ULL
#define SCN_CLIENT   0xc1d00001u
#define SCN_DEVICE   0xcaf00000u
#define SCN_TSG	     0xcaf00003u
#define SCN_MEM	     0xcaf00010u

/* An ioctl on the scenario's nvidiactl (fd 3) taking 500 ns, parameters alike at both ends. */
static inline void scn_ioctl(struct gctx_trace_writer *w, __u32 pid, __u32 tid, __u64 ts,
			     const char *comm, __u32 cmd, const __u32 *words, __u32 nwords,
			     __u32 size)
{
	struct gctx_ev_ioctl e;

	ioctl_ev(&e, pid, tid, ts, comm, SCN_CTL_FILE, 3, GCTX_DEV_NVIDIACTL, cmd, size);
	e.dur_ns = 500;
	memcpy(e.in, words, nwords * 4);
	memcpy(e.out, words, nwords * 4);
	put(w, GCTX_EV_IOCTL, &e, sizeof(e));
}

static inline void scn_rm_alloc(struct gctx_trace_writer *w, __u32 pid, __u64 ts, const char *comm,
				__u32 root, __u32 parent, __u32 handle, __u32 cls)
{
	__u32 p[12] = {root, parent, handle, cls}; /* NVOS64, status 0 at 0x28 */

	scn_ioctl(w, pid, pid, ts, comm, NV_RM_ALLOC, p, 12, 48);
}

static inline void scn_rm_control(struct gctx_trace_writer *w, __u32 pid, __u32 tid, __u64 ts,
				  const char *comm, __u32 object)
{
	__u32 p[8] = {SCN_CLIENT, object, 0xa06c0101}; /* NVOS54, status 0 at 0x1c */

	scn_ioctl(w, pid, tid, ts, comm, NV_RM_CONTROL, p, 8, 32);
}

static inline void scn_rm_alloc_memory(struct gctx_trace_writer *w, __u32 pid, __u64 ts,
				       const char *comm, __u64 size)
{
	__u32 p[14] = {SCN_CLIENT, SCN_DEVICE, SCN_MEM, 0x3e}; /* NVOS02 with fd */
	__u64 limit = size - 1;

	memcpy(&p[8], &limit, sizeof(limit));
	p[12] = (__u32)-1;
	scn_ioctl(w, pid, pid, ts, comm, NV_RM_ALLOC_MEMORY, p, 14, 56);
}

static inline void scn_fork(struct gctx_trace_writer *w, __u32 pid, __u32 child, __u64 ts,
			    const char *comm, bool thread)
{
	struct gctx_ev_fork e = ev_fork(pid, child, ts, comm, thread);

	put(w, GCTX_EV_FORK, &e, sizeof(e));
}

static inline void scn_exit(struct gctx_trace_writer *w, __u32 pid, __u32 tid, __u64 ts,
			    const char *comm, __u32 code, bool group_dead)
{
	struct gctx_ev_exit e = ev_exit(pid, tid, ts, comm, code, group_dead);

	put(w, GCTX_EV_EXIT, &e, sizeof(e));
}

/*
 * bash 999 forks 1000, which execs python3 (comm "trainer"), opens nvidiactl without
 * O_CLOEXEC, makes an RM client, device, channel group and a 1 GiB allocation, starts thread
 * 1100 that calls RM_CONTROL, and forks 1001; 1001 renames itself to worker_comm, calls
 * RM_CONTROL on the channel group through the inherited fd and dies of SIGSEGV; 1000 exits 0.
 */
static inline void write_scenario(const char *path, const char *worker_comm)
{
	static const char args[] = "python3\0train.py\0--epochs\0001";
	struct gctx_trace_writer *w;
	struct gctx_trace_meta meta;
	struct gctx_rec_end end = {.end_ns = T0 + 20000, .exit_status = 0};
	struct gctx_ev_exec ex;
	struct gctx_ev_open op;
	int err;

	meta_fill(&meta, "-- python3 train.py");
	w = gctx_trace_writer__new(path, &meta, &err);
	assert_non_null(w);
	scn_fork(w, 999, 1000, T0 + 1000, "bash", false);
	ex = ev_exec(1000, T0 + 2000, "trainer", "/usr/bin/python3", args, sizeof(args));
	put(w, GCTX_EV_EXEC, &ex, sizeof(ex));
	op = ev_open_dev(1000, T0 + 3000, "trainer", SCN_CTL_FILE, 3, 02 /* O_RDWR */,
			 GCTX_DEV_NVIDIACTL);
	put(w, GCTX_EV_OPEN, &op, sizeof(op));
	scn_rm_alloc(w, 1000, T0 + 4000, "trainer", 0, 0, SCN_CLIENT, 0x41);
	scn_rm_alloc(w, 1000, T0 + 5000, "trainer", SCN_CLIENT, SCN_CLIENT, SCN_DEVICE, 0x80);
	scn_rm_alloc(w, 1000, T0 + 6000, "trainer", SCN_CLIENT, SCN_DEVICE, SCN_TSG, 0xa06c);
	scn_rm_alloc_memory(w, 1000, T0 + 7000, "trainer", 1ULL << 30);
	scn_fork(w, 1000, 1100, T0 + 8000, "trainer", true);
	scn_rm_control(w, 1000, 1100, T0 + 9000, "trainer", SCN_TSG);
	scn_exit(w, 1000, 1100, T0 + 10000, "trainer", 0, false);
	scn_fork(w, 1000, 1001, T0 + 11000, "trainer", false);
	scn_rm_control(w, 1001, 1001, T0 + 12000, worker_comm, SCN_TSG);
	scn_exit(w, 1001, 1001, T0 + 13000, worker_comm, 11 | 0x80, true);
	scn_exit(w, 1000, 1000, T0 + 14000, "trainer", 0, true);
	put(w, GCTX_REC_END, &end, sizeof(end));
	assert_int_equal(gctx_trace_writer__free(w), 0);
}

/* ---- python checks ---- */

static inline bool have_python(void)
{
	return system("python3 -c pass >/dev/null 2>&1") == 0;
}

/*
 * Run the python script head + body with arg as sys.argv[1]; it passes when it exits 0 having
 * printed nothing (the script adds the final "OK"). Without python3, says so and passes.
 */
static inline void python_run(const char *head, const char *body, const char *arg)
{
	char spath[] = "/tmp/gctx_test_py_XXXXXX";
	char cmd[512], out[8192];
	size_t n;
	FILE *f, *p;
	int fd, status;

	if (!have_python()) {
		print_message("python3 not found: JSON left unchecked\n");
		return;
	}
	fd = mkstemp(spath);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "%s%s\nprint('OK')\n", head, body);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "python3 %s %s 2>&1", spath, arg);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	unlink(spath);
	if (status != 0 || strcmp(out, "OK\n") != 0) {
		print_error("python check failed (status %d):\n%s\n", status, out);
		fail();
	}
}

#endif /* __GPUCTX_TEST_BUILDERS_H */
