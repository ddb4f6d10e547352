// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Write a synthetic gpuctx trace of exactly N records, for the export tests and benchmarks:
 * bash 999 forks trainer 1000, which opens nvidiactl and nvidia-uvm, builds an RM client,
 * device, channel group and a 1 GiB allocation, starts a thread and forks WORKERS workers that
 * keep calling RM_CONTROL (and now and then mmap) on the inherited nvidiactl fd until the
 * record budget is spent; then everyone exits. The set of processes, files and objects does not
 * grow with N, so neither should an exporter's memory.
 *
 * Usage: gen_trace OUT N [--torture] [--t0 NS]
 *   --torture  the workers rename themselves to a comm full of quotes, backslashes, newlines
 *              and invalid UTF-8, and exec with such an argv
 *   --t0 NS    start the clocks at NS (default 1 s): near 2^63 or 2^64 the timestamps of a
 *              crafted trace cross the signed and unsigned limits (the exporters' fuzz seeds)
 *        gen_trace --rss -- CMD [ARG...]
 *   run CMD and print "maxrss_kb N exit S" for it: the peak RSS of CMD alone (a child of a big
 *   process such as python inherits its parent's peak through fork and exec)
 * Build: cc -Iinclude -Iuser tests/export/gen_trace.c .output/user/trace/tracefile.o
 *        .output/user/lib/crc32.o -lpthread
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

#define GPU_UAPI_NO_HELPERS
#include "gpu_uapi.h"
#include "gpuctx_events.h"
#include "trace/tracefile.h"

#define T0	    1000000000ULL
#define CTL_FILE    0xffff888000a01000ULL
#define UVM_FILE    0xffff888000a02000ULL
#define CLIENT	    0xc1d00001u
#define DEVICE	    0xcaf00000u
#define TSG	    0xcaf00003u
#define MEMORY	    0xcaf00010u
#define WORKERS	    4
#define O_RDWR_K    02u
#define O_CLOEXEC_K 02000000u

static struct gctx_trace_writer *w;
static unsigned long long left; /* records still to write */
static __u64 t0 = T0, now = T0;

static void put(__u32 type, const void *data, __u32 len)
{
	int err;

	if (!left)
		return;
	err = gctx_trace_writer__append(w, type, data, len);
	if (err) {
		fprintf(stderr, "gen_trace: write: %s\n", strerror(-err));
		exit(1);
	}
	left--;
}

static void hdr(struct gctx_ev_hdr *h, __u32 type, __u32 pid, __u32 tid, const char *comm)
{
	h->type = type;
	h->tgid = pid;
	h->tid = tid;
	h->ts_ns = (now += 1000);
	memcpy(h->comm, comm, strnlen(comm, GCTX_COMM_LEN));
}

static void fork_ev(__u32 pid, __u32 child, const char *comm, bool thread)
{
	struct gctx_ev_fork e = {0};

	hdr(&e.hdr, GCTX_EV_FORK, pid, pid, comm);
	e.child_tid = child;
	e.child_tgid = thread ? pid : child;
	e.flags = thread ? GCTX_FORK_THREAD : 0;
	put(GCTX_EV_FORK, &e, sizeof(e));
}

static void exec_ev(__u32 pid, const char *comm, const char *file, const char *args, __u32 len)
{
	struct gctx_ev_exec e = {0};

	hdr(&e.hdr, GCTX_EV_EXEC, pid, pid, comm);
	e.old_tid = pid;
	e.fd_scan = GCTX_EXEC_FDS_SCANNED; /* the kernel's whole list: no GPU fd kept */
	snprintf(e.filename, sizeof(e.filename), "%s", file);
	e.args_len = len < GCTX_ARGS_LEN ? len : GCTX_ARGS_LEN;
	memcpy(e.args, args, e.args_len);
	put(GCTX_EV_EXEC, &e, sizeof(e));
}

static void exit_ev(__u32 pid, __u32 tid, const char *comm, __u32 code, bool group_dead)
{
	struct gctx_ev_exit e = {0};

	hdr(&e.hdr, GCTX_EV_EXIT, pid, tid, comm);
	e.exit_code = code;
	e.group_dead = group_dead;
	put(GCTX_EV_EXIT, &e, sizeof(e));
}

static void open_ev(__u32 pid, const char *comm, __u64 file, int fd, __u32 kind, const char *path)
{
	struct gctx_ev_open e = {0};

	hdr(&e.hdr, GCTX_EV_OPEN, pid, pid, comm);
	e.file = file;
	e.fd = fd;
	e.flags = O_RDWR_K; /* no O_CLOEXEC: the workers keep it across fork */
	e.kind = kind;
	snprintf(e.path, sizeof(e.path), "%s", path);
	put(GCTX_EV_OPEN, &e, sizeof(e));
}

static void ioctl_ev(__u32 pid, __u32 tid, const char *comm, __u64 file, int fd, __u32 kind,
		     __u32 cmd, const void *in, const void *out, __u32 len)
{
	struct gctx_ev_ioctl e = {0};

	hdr(&e.hdr, GCTX_EV_IOCTL, pid, tid, comm);
	e.file = file;
	e.fd = fd;
	e.cmd = cmd;
	e.kind = kind;
	e.dur_ns = 400;
	e.size = len;
	e.len = len;
	e.flags = GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK;
	memcpy(e.in, in, len);
	memcpy(e.out, out, len);
	put(GCTX_EV_IOCTL, &e, sizeof(e));
}

static void rm_alloc(__u32 pid, const char *comm, __u32 parent, __u32 handle, __u32 cls)
{
	struct nvos64_params p = {
	    .hRoot = cls == NV01_ROOT_CLIENT ? 0 : CLIENT,
	    .hObjectParent = cls == NV01_ROOT_CLIENT ? 0 : parent,
	    .hObjectNew = handle,
	    .hClass = cls,
	};

	ioctl_ev(pid, pid, comm, CTL_FILE, 3, GCTX_DEV_NVIDIACTL, NV_IOCTL_RM_ALLOC, &p, &p,
		 sizeof(p));
}

static void rm_alloc_memory(__u32 pid, const char *comm, __u32 handle, __u64 size)
{
	struct nvos02_with_fd p;

	memset(&p, 0, sizeof(p));
	p.hRoot = CLIENT;
	p.hObjectParent = DEVICE;
	p.hObjectNew = handle;
	p.hClass = NV01_MEMORY_SYSTEM;
	p.limit = size - 1;
	p.fd = -1;
	ioctl_ev(pid, pid, comm, CTL_FILE, 3, GCTX_DEV_NVIDIACTL, NV_IOCTL_RM_ALLOC_MEMORY, &p, &p,
		 sizeof(p));
}

static void rm_control(__u32 pid, __u32 tid, const char *comm, __u32 object)
{
	struct nvos54_params p = {
	    .hClient = CLIENT,
	    .hObject = object,
	    .cmd = NVA06C_CTRL_CMD_GPFIFO_SCHEDULE,
	    .paramsSize = 16,
	};

	ioctl_ev(pid, tid, comm, CTL_FILE, 3, GCTX_DEV_NVIDIACTL, NV_IOCTL_RM_CONTROL, &p, &p,
		 sizeof(p));
}

static void uvm_init(__u32 pid, const char *comm)
{
	struct uvm_initialize_params p = {0};

	ioctl_ev(pid, pid, comm, UVM_FILE, 4, GCTX_DEV_NVIDIA_UVM, UVM_INITIALIZE, &p, &p,
		 sizeof(p));
}

static void mmap_ev(__u32 pid, const char *comm)
{
	struct gctx_ev_mmap e = {0};

	hdr(&e.hdr, GCTX_EV_MMAP, pid, pid, comm);
	e.file = CTL_FILE;
	e.fd = 3;
	e.kind = GCTX_DEV_NVIDIACTL;
	e.len = 4096;
	e.ret = 0x7f0000000000LL;
	e.prot = 3;
	e.flags = 1;
	put(GCTX_EV_MMAP, &e, sizeof(e));
}

static int rss_of(char **cmd)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("gen_trace: fork");
		return 1;
	}
	if (!pid) {
		execvp(cmd[0], cmd);
		perror("gen_trace: exec");
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("gen_trace: wait4");
		return 1;
	}
	printf("maxrss_kb %ld exit %d\n", ru.ru_maxrss,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

int main(int argc, char **argv)
{
	static const char trainer_args[] = "python3\0train.py\0--epochs\0001";
	static const char torture_comm[] = "w\"\\\n\xff\xfe\x01\t'q";
	static const char torture_args[] = "wk\"r\0a\\b\0line\nbreak\0\xc3\x28\xed\xa0\x80ok";
	struct gctx_trace_meta meta = {0};
	struct gctx_rec_end end = {0};
	unsigned long long n, reserve;
	bool torture = false, bad = argc < 3;
	char comm[WORKERS][GCTX_COMM_LEN];
	int err, i;

	if (argc > 3 && !strcmp(argv[1], "--rss") && !strcmp(argv[2], "--"))
		return rss_of(argv + 3);
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--torture"))
			torture = true;
		else if (!strcmp(argv[i], "--t0") && i + 1 < argc)
			t0 = now = strtoull(argv[++i], NULL, 0);
		else
			bad = true;
	}
	if (bad) {
		fprintf(stderr, "usage: gen_trace OUT N [--torture] [--t0 NS]\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	reserve = 14 + 4 * WORKERS; /* setup and teardown records */
	if (n < reserve + 100) {
		fprintf(stderr, "gen_trace: N must be at least %llu\n", reserve + 100);
		return 2;
	}
	meta.start_wall_ns = 1763704992123456789ULL;
	meta.start_mono_ns = t0;
	meta.start_boot_ns = t0 + 5000000000ULL; /* 5 s suspended before the trace */
	snprintf(meta.hostname, sizeof(meta.hostname), "gen-host");
	snprintf(meta.kernel, sizeof(meta.kernel), "6.18.44");
	snprintf(meta.version, sizeof(meta.version), "0.1.0");
	snprintf(meta.cmdline, sizeof(meta.cmdline),
		 "-- python3 train.py (synthetic, %llu records)", n);
	w = gctx_trace_writer__new(argv[1], &meta, &err);
	if (!w) {
		fprintf(stderr, "gen_trace: cannot create %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	left = n;

	fork_ev(999, 1000, "bash", false);
	exec_ev(1000, "python3", "/usr/bin/python3", trainer_args, sizeof(trainer_args));
	open_ev(1000, "python3", CTL_FILE, 3, GCTX_DEV_NVIDIACTL, "/dev/nvidiactl");
	open_ev(1000, "python3", UVM_FILE, 4, GCTX_DEV_NVIDIA_UVM, "/dev/nvidia-uvm");
	rm_alloc(1000, "python3", 0, CLIENT, NV01_ROOT_CLIENT);
	rm_alloc(1000, "python3", CLIENT, DEVICE, NV01_DEVICE_0);
	rm_alloc(1000, "python3", DEVICE, TSG, KEPLER_CHANNEL_GROUP_A);
	rm_alloc_memory(1000, "python3", MEMORY, 1ULL << 30);
	uvm_init(1000, "python3");
	fork_ev(1000, 1000 + 100, "python3", true); /* a thread */
	for (i = 0; i < WORKERS; i++) {
		snprintf(comm[i], sizeof(comm[i]), "pt_worker_%d", i);
		fork_ev(1000, 1001 + i, "python3", false);
		if (torture) {
			memcpy(comm[i], torture_comm, sizeof(torture_comm));
			exec_ev(1001 + i, comm[i], "/usr/bin/wk\"r", torture_args,
				sizeof(torture_args));
		}
	}
	/* the loop: until only the teardown records are left */
	for (i = 0; left > (unsigned long long)(WORKERS + 3); i++) {
		int k = i % (WORKERS + 1);

		if (k == WORKERS)
			rm_control(1000, 1000 + 100, "python3", TSG);
		else if (i % 97 == 0)
			mmap_ev(1001 + k, comm[k]);
		else
			rm_control(1001 + k, 1001 + k, comm[k], TSG);
	}
	for (i = 0; i < WORKERS; i++)
		exit_ev(1001 + i, 1001 + i, comm[i], i == 1 ? 11 | 0x80 : 0, true);
	exit_ev(1000, 1000 + 100, "python3", 0, false);
	exit_ev(1000, 1000, "python3", 0, true);
	end.end_ns = now + 1000;
	end.exit_status = 0;
	end.events = n;
	put(GCTX_REC_END, &end, sizeof(end));
	while (left) /* pad with records the model ignores, should the teardown come short */
		put(GCTX_REC_END, &end, sizeof(end));
	err = gctx_trace_writer__free(w);
	if (err) {
		fprintf(stderr, "gen_trace: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	return 0;
}
