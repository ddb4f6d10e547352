/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wire format shared by the BPF programs and the collector: one ring buffer of tagged,
 * fixed-width records. The same structs are stored verbatim in the trace file, so any change
 * here must bump GCTX_TRACE_VERSION (user/tracefile.h).
 * Userspace includes <linux/types.h> before this header.
 */
#ifndef __GPUCTX_EVENTS_H
#define __GPUCTX_EVENTS_H

#define GCTX_COMM_LEN	  16
#define GCTX_PATH_LEN	  128
#define GCTX_ARGS_LEN	  256
#define GCTX_IOCTL_BYTES  96
#define GCTX_MAX_REGDEVS  64
#define GCTX_RING_DEFAULT (8u << 20) /* the ring buffer's size unless --ring-size says */

/* Record tags. Values below 64 come from the kernel, 64 and up are written by the collector. */
enum gctx_ev_type {
	GCTX_EV_FORK = 1,    /* struct gctx_ev_fork: a process or thread was created */
	GCTX_EV_EXEC = 2,    /* struct gctx_ev_exec */
	GCTX_EV_EXIT = 3,    /* struct gctx_ev_exit: a thread exited (group_dead = whole process) */
	GCTX_EV_OPEN = 4,    /* struct gctx_ev_open: a GPU device file was opened */
	GCTX_EV_IOCTL = 5,   /* struct gctx_ev_ioctl: an ioctl on a GPU file, entry and exit */
	GCTX_EV_MMAP = 6,    /* struct gctx_ev_mmap: mmap of a GPU file */
	GCTX_EV_CLOSE = 7,   /* struct gctx_ev_fd: close() of a GPU fd */
	GCTX_EV_FD_KEPT = 8, /* struct gctx_ev_fd: a GPU fd that survived exec (no O_CLOEXEC) */
	GCTX_EV_API = 9,     /* struct gctx_ev_api: a CUDA driver / HIP runtime call (uprobes) */
	GCTX_EV_LIBMAP = 10, /* struct gctx_ev_libmap: an executable file mapping (library load) */
	GCTX_EV_STACK = 11,  /* struct gctx_ev_stack (gpuctx_stack.h): stack at a rare event; past
			      * GCTX_EV_KERNEL_MAX too (its losses: GCTX_REC_STACK_DROPS) */
	GCTX_EV_KERNEL_MAX = 11,
	/* Past GCTX_EV_KERNEL_MAX so that the drop counters keep their size (trace format 2). */
	GCTX_EV_APIMAP =
	    12,		   /* struct gctx_ev_apimap: a CUDA/HIP library mapped before its probes */
	GCTX_EV_VMAS = 13, /* struct gctx_ev_vmas (gpuctx_stack.h): the executable mappings, sent
			    * before a GCTX_EV_STACK (losses: flag GCTX_STK_NO_VMAS) */
	GCTX_EV_FD_FORK = 14, /* struct gctx_ev_fd (hdr: the forking thread): a GPU fd of the
			       * child it forks, sent before the fork record (losses: flag
			       * GCTX_FORK_FDS_LOST; trace format 4) */
	GCTX_EV_PYEXC = 15,   /* struct gctx_ev_pyexc: an exception a Python child raised */

	/* Collector records (trace file only). */
	GCTX_REC_PROC_PRESENT = 64, /* struct gctx_rec_proc: process present at attach */
	GCTX_REC_FILE_PRESENT = 65, /* struct gctx_rec_file: GPU fd held at attach */
	GCTX_REC_DEVICE = 66,	    /* struct gctx_rec_device: a GPU device registration */
	GCTX_REC_DROPS = 67,	    /* struct gctx_rec_drops: lost events by kind, written at end */
	GCTX_REC_END = 68,	    /* struct gctx_rec_end: the recording ended cleanly */
	GCTX_REC_PROBE = 69,	    /* struct gctx_rec_probe: an API entry point that was probed */
	GCTX_REC_THREAD_PRESENT = 70, /* struct gctx_rec_thread: a thread present at attach */
	GCTX_REC_WRITE_LOSS = 80,   /* struct gctx_rec_write_loss: the trace could not be written */
	GCTX_REC_API_GAP = 71,	    /* struct gctx_rec_api_gap: API calls could not be seen */
	GCTX_REC_API_PRESENT = 73,  /* struct gctx_rec_api_present: the CUDA/HIP libraries a
				     * process present at attach had mapped */
	GCTX_REC_HOLD = 72,	    /* struct gctx_rec_hold: a mapping thread held until probed */
	GCTX_REC_STACK = 75,	    /* struct gctx_rec_stack: a resolved GCTX_EV_STACK */
	GCTX_REC_STACK_DROPS = 76,  /* struct gctx_rec_stack_drops: written at end */
	GCTX_REC_CALLER = 77,	    /* struct gctx_rec_caller: where an API call site is, written
				     * before the first API record that names it */
	GCTX_REC_CALLER_DROPS = 78, /* struct gctx_rec_caller_drops: written at end */
	GCTX_REC_CGROUP = 95,	    /* struct gctx_rec_cgroup: a process's cgroup (its job) */
	GCTX_REC_HOST = 96,	    /* struct gctx_rec_host: the records after it, up to the next
				     * one, are this host's (gpuctx merge; trace/hosts.h) */

	/* Reserved for work landing in parallel:
	 * 73-74 API coverage (issue 12)
	 * 79 stacks and symbols (issue 11)
	 * 80-84 hardening: resync, write-loss accounting (issue 9)
	 * 85-89 timeline / process names (issue 13)
	 * 90-94 diagnosis (issue 10) */
};

/* What kind of GPU device file. */
enum gctx_dev_kind {
	GCTX_DEV_NONE = 0,
	GCTX_DEV_NVIDIACTL = 1,	       /* /dev/nvidiactl, major 195 minor 255 */
	GCTX_DEV_NVIDIA = 2,	       /* /dev/nvidiaN, major 195 minor 0..247 */
	GCTX_DEV_NVIDIA_UVM = 3,       /* /dev/nvidia-uvm (dynamic major, minor 0) */
	GCTX_DEV_NVIDIA_UVM_TOOLS = 4, /* /dev/nvidia-uvm-tools (minor 1) */
	GCTX_DEV_KFD = 5,	       /* /dev/kfd (dynamic major) */
	GCTX_DEV_DRM_RENDER = 6,       /* /dev/dri/renderD*, major 226 minor >= 128 */
	GCTX_DEV_MAX = 7,
};

/* gctx_ev_exec's fd_scan: the exec program read the new program's fd table to its end, every
 * open fd looked at: the fds_kept records before the exec are every GPU fd that survived it,
 * and a GPU file not among them was closed (an empty list is an answer too). Without it (a
 * table past the scan's bound) the kept fds are not all known. */
#define GCTX_EXEC_FDS_SCANNED 0x1
#define GCTX_EXEC_FDS_LOST    0x2 /* a kept-fd record could not be sent (ring full) */
/* Set by the reader (trace/records.c), never by the kernel: an exec record of a trace older than
 * these fields. Its exec program scanned the whole table too, but did not count what it sent:
 * a lost record shows only in the drop counters. */
#define GCTX_EXEC_FDS_UNCOUNTED 0x4
/* stk_state bit (bpf/stack.bpf.h) of a process holding GPU fds; the collector sets it for
 * those found at attach */
#define GCTX_STK_GPU_FDS 0x80

/* Common header of every kernel record. */
struct gctx_ev_hdr {
	__u32 type;		  /* enum gctx_ev_type */
	__u32 tid;		  /* kernel pid of the thread */
	__u32 tgid;		  /* process id */
	__u32 cpu;		  /* CPU the event was taken on */
	__u64 ts_ns;		  /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[GCTX_COMM_LEN]; /* task comm at the time of the event */
};

#define GCTX_FORK_THREAD 0x1 /* the child is a thread of the parent's process */
/* A parent holding GPU fds: the kernel read the child's fd table to its end, and the nfds
 * GCTX_EV_FD_FORK records of this thread before this one are every GPU fd the child got. */
#define GCTX_FORK_FDS_SCANNED (GCTX_EXEC_FDS_SCANNED << 1)
#define GCTX_FORK_FDS_LOST    (GCTX_EXEC_FDS_LOST << 1) /* such a record could not be sent */

struct gctx_ev_fork {
	struct gctx_ev_hdr hdr; /* tid/tgid of the parent thread */
	__u32 child_tid;	/* new task's pid */
	__u32 child_tgid;	/* new task's tgid (== parent tgid for a thread) */
	__u32 flags;		/* GCTX_FORK_* */
	__u32 nfds;		/* GCTX_FORK_FDS_SCANNED: the FD_FORK records sent before */
};

struct gctx_ev_exec {
	struct gctx_ev_hdr hdr;	      /* tid == tgid after exec; comm is the new one */
	__u32 old_tid;		      /* pid of the thread that called exec (!= tid: non-leader) */
	__u32 args_len;		      /* bytes valid in args */
	char filename[GCTX_PATH_LEN]; /* binary path as passed to exec */
	char args[GCTX_ARGS_LEN];     /* argv, NUL-separated, possibly truncated */
	__u64 cgroup_id; /* cgroup v2 id (its directory's inode) at exec, read in the kernel:
			  * the job of a process gone before /proc is read; 0 unknown */
	__u32 fd_scan;	 /* GCTX_EXEC_FDS_*: the kernel's list of the GPU fds open after exec */
	__u32 fds_kept;	 /* GCTX_EV_FD_KEPT records sent just before this one (the list) */
};
#define GCTX_EV_EXEC_V3_LEN	432 /* struct gctx_ev_exec without cgroup_id (older traces) */
#define GCTX_EV_EXEC_NOSCAN_LEN 440 /* without fd_scan and fds_kept (trace format 3 and older) */

struct gctx_ev_exit {
	struct gctx_ev_hdr hdr;
	__u32 exit_code;  /* wait-status style: (code << 8) | termsig | 0x80 if core dumped */
	__u32 group_dead; /* 1 when this was the last thread: the process exited */
};

struct gctx_ev_open {
	struct gctx_ev_hdr hdr;
	__u64 file; /* struct file address: identity of the open file description */
	__s32 fd;
	__u32 flags;		  /* open flags (O_CLOEXEC, O_RDWR, ...) */
	__u32 kind;		  /* enum gctx_dev_kind */
	__u32 rdev;		  /* kernel dev_t (major << 20 | minor) of a char device, else 0 */
	__u64 ino;		  /* inode number */
	char path[GCTX_PATH_LEN]; /* path as passed to open */
};

#define GCTX_IOCTL_XFER	  0x1 /* NV_ESC_IOCTL_XFER_CMD unwrapped: cmd/bytes are the inner call */
#define GCTX_IOCTL_IN_OK  0x2 /* in[] was read at syscall entry */
#define GCTX_IOCTL_OUT_OK 0x4 /* out[] was read at syscall exit */

struct gctx_ev_ioctl {
	struct gctx_ev_hdr hdr;
	__u64 file; /* struct file address */
	__s32 fd;
	__u32 cmd;	 /* ioctl cmd as issued (the XFER cmd when unwrapped) */
	__s64 ret;	 /* syscall return value (-errno on error) */
	__u64 arg;	 /* user pointer argument */
	__u64 dur_ns;	 /* time spent in the syscall */
	__u32 kind;	 /* enum gctx_dev_kind */
	__u32 flags;	 /* GCTX_IOCTL_* */
	__u32 inner_cmd; /* XFER only: the wrapped nr; else 0 */
	__u32 size;	 /* parameter size the driver sees (_IOC_SIZE or XFER size) */
	__u32 len;	 /* bytes captured in in[] and out[] (<= GCTX_IOCTL_BYTES) */
	__u32 pad;
	__u8 in[GCTX_IOCTL_BYTES];  /* parameters at entry */
	__u8 out[GCTX_IOCTL_BYTES]; /* parameters at exit */
};

struct gctx_ev_mmap {
	struct gctx_ev_hdr hdr;
	__u64 file;
	__s32 fd;
	__u32 kind;
	__u64 len;
	__u64 off;
	__s64 ret; /* mapped address, or -errno */
	__u32 prot;
	__u32 flags;
};

/* A close: the kernel counted the process's other fds on the same file (the fd table read
 * whole), so a copy gpuctx did not see made (dup, F_DUPFD) keeps the file held. */
#define GCTX_FD_COUNTED 0x1

struct gctx_ev_fd {
	struct gctx_ev_hdr hdr;
	__u64 file;
	__s32 fd;
	__u32 kind;
	__u32 flags;  /* GCTX_FD_* (trace format 4; 0 in records of 56 bytes) */
	__u32 others; /* GCTX_FD_COUNTED: fds of this process left on the file after the close */
};
#define GCTX_EV_FD_V3_LEN 56 /* struct gctx_ev_fd without flags and others */

/* API functions traced with uprobes (CUDA driver API, HIP runtime). */
enum gctx_api_fn {
	GCTX_API_NONE = 0,
	GCTX_CU_INIT,
	GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN,
	GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE,
	GCTX_CU_DEVICE_PRIMARY_CTX_RESET,
	GCTX_CU_CTX_CREATE,    /* cuCtxCreate, _v2 (pctx, flags, dev) */
	GCTX_CU_CTX_CREATE_V3, /* (pctx, params, n, flags, dev) */
	GCTX_CU_CTX_CREATE_V4, /* (pctx, params, flags, dev) */
	GCTX_CU_CTX_DESTROY,
	GCTX_CU_CTX_SET_CURRENT,
	GCTX_CU_CTX_PUSH_CURRENT,
	GCTX_CU_CTX_POP_CURRENT,
	GCTX_CU_GREEN_CTX_CREATE,
	GCTX_CU_MEM_ALLOC,
	GCTX_CU_MEM_ALLOC_MANAGED,
	GCTX_CU_MEM_ALLOC_ASYNC,
	GCTX_CU_MEM_CREATE,
	GCTX_CU_MEM_FREE,
	GCTX_CU_GET_PROC_ADDRESS,
	GCTX_CU_LAUNCH_KERNEL,
	GCTX_CU_LAUNCH_KERNEL_EX,
	GCTX_CU_GRAPH_LAUNCH,
	GCTX_HIP_INIT,
	GCTX_HIP_SET_DEVICE,
	GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN,
	GCTX_HIP_DEVICE_PRIMARY_CTX_RELEASE,
	GCTX_HIP_CTX_CREATE,
	GCTX_HIP_CTX_DESTROY,
	GCTX_HIP_CTX_SET_CURRENT,
	GCTX_HIP_CTX_PUSH_CURRENT,
	GCTX_HIP_CTX_POP_CURRENT,
	GCTX_HIP_MALLOC,
	GCTX_HIP_MALLOC_MANAGED,
	GCTX_HIP_FREE,
	GCTX_HIP_DEVICE_RESET,
	GCTX_HIP_LAUNCH_KERNEL,
	GCTX_HIP_MODULE_LAUNCH_KERNEL,
	/* Any other exported function, probed only in a forked child that inherited GPU state
	 * (collect/childprobe.c): its name is in the record's str (GCTX_API_NAMED). */
	GCTX_CU_OTHER,
	GCTX_HIP_OTHER,
	GCTX_API_MAX,
};

/* Attach cookie of an API probe: which function, and which arguments to read. */
#define GCTX_COOKIE_FN(c)      ((c)&0xffff)
#define GCTX_COOKIE_OUT(c)     (((c) >> 16) & 0xf) /* 1 + index of an output-pointer arg */
#define GCTX_COOKIE_STR(c)     (((c) >> 20) & 0xf) /* 1 + index of a string arg */
#define GCTX_COOKIE_ENTRY_ONLY (1u << 24)	   /* no return probe: emit at entry */
#define GCTX_COOKIE_NAME(c)    ((c) >> 32)	   /* GCTX_*_OTHER: index of its name (api_names) */

#define GCTX_API_RETURNED  0x1 /* ret and out are valid */
#define GCTX_API_OUT_OK	   0x2 /* out was read */
#define GCTX_API_STR_OK	   0x4 /* str was read */
#define GCTX_API_NAMED	   0x8 /* GCTX_*_OTHER: str is the function's exported name */
#define GCTX_API_STR_LEN   64
#define GCTX_API_NAMES_MAX 8192 /* names of GCTX_*_OTHER functions (bpf/api.bpf.c api_names) */

struct gctx_ev_api {
	struct gctx_ev_hdr hdr; /* ts_ns = entry time */
	__u32 fn;		/* enum gctx_api_fn */
	__u32 flags;		/* GCTX_API_* */
	__s64 ret;		/* CUresult / hipError_t */
	__u64 dur_ns;
	__u64 args[6]; /* raw argument registers at entry */
	__u64 out;     /* *(u64 *)args[out-1] at return: new context, device pointer, pfn */
	__u64 ip;      /* probed address in the process (locates the library) */
	char str[GCTX_API_STR_LEN]; /* string argument (cuGetProcAddress symbol) */
	__u64 caller;		    /* return address at entry ([sp]): the call site, 0 unreadable;
				     * absent (0) in version 2 traces written before it existed */
};
#define GCTX_EV_API_V2_LEN 192 /* struct gctx_ev_api without caller */

/* An exception raised in a Python child forked without exec from a process holding GPU state
 * (a probe of CPython's _PyErr_SetObject for that child alone, collect/childprobe.c). The
 * first GCTX_PYEXC_KEEP of a process come with the type and message (and a stack of role
 * GCTX_STACK_RAISE, key = seq); after that only every power of two, with seq, so that the
 * count is known within a factor of two. Control flow (StopIteration, StopAsyncIteration,
 * GeneratorExit) is not counted. */
#define GCTX_PYEXC_KEEP	    32
#define GCTX_PYEXC_TYPE_LEN 64
#define GCTX_PYEXC_MSG_LEN  128
#define GCTX_PYEXC_TYPE_OK  0x1 /* type holds the type's tp_name */
#define GCTX_PYEXC_MSG_OK   0x2 /* msg holds the message: args[0] or the value, a str */
#define GCTX_PYEXC_COUNT    0x4 /* past GCTX_PYEXC_KEEP: seq only */
/* From the kernel only (the collector turns it into UTF-8 and GCTX_PYEXC_MSG_OK before the
 * record goes anywhere): msg holds a non-ASCII compact str's raw code units, kind (1, 2 or 4
 * bytes a character) in bits 8-10 and their byte count in bits 16-23. */
#define GCTX_PYEXC_MSG_RAW	0x8
#define GCTX_PYEXC_RAW_KIND(f)	(((f) >> 8) & 7)
#define GCTX_PYEXC_RAW_BYTES(f) (((f) >> 16) & 0xff)
#define GCTX_PYEXC_RAW_MASK	(GCTX_PYEXC_MSG_RAW | 0x7u << 8 | 0xffu << 16)

struct gctx_ev_pyexc {
	struct gctx_ev_hdr hdr;
	__u32 seq;   /* 1-based, per process */
	__u32 flags; /* GCTX_PYEXC_* */
	char type[GCTX_PYEXC_TYPE_LEN];
	char msg[GCTX_PYEXC_MSG_LEN];
};

/* An executable file mapping by a followed process (mmap with PROT_EXEC). */
struct gctx_ev_libmap {
	struct gctx_ev_hdr hdr;
	__u32 dev; /* kernel dev_t of the file's filesystem */
	__u32 pad;
	__u64 ino;
};

#define GCTX_APIMAP_NAME_LEN 64
#define GCTX_APIMAP_HELD     0x1 /* the process was stopped until the collector probed it */
#define GCTX_APIMAP_NO_HOLD  0x2 /* holding is off (--no-hold) or not armed yet */
#define GCTX_APIMAP_FAILED   0x4 /* a hold was wanted but could not be made */
#define GCTX_APIMAP_OUTSIDE                                                                        \
	0x8 /* not held: its parent is outside the traced job (-p, --cgroup)                       \
	     * and would see the stop */
#define GCTX_APIMAP_WATCHED                                                                        \
	0x10 /* not held: its parent (a shell, su, runuser, sudo) or a tracer                      \
	      * would see the stop (bpf/hold.bpf.h) */
/* Not a library: a child forked without exec from a process holding GPU state, back from
 * fork (dev, ino and name empty). Held (GCTX_APIMAP_HELD) until the collector has attached
 * its own probes on every CUDA/HIP function of the libraries it maps (collect/childprobe.c). */
#define GCTX_APIMAP_FORK 0x20

/* An executable mapping of a file named like a CUDA/HIP library (libcuda.so*, libamdhip64.so*)
 * whose probes were not attached yet. Sent at once (wakeup), before the mapping returns. */
struct gctx_ev_apimap {
	struct gctx_ev_hdr hdr;
	__u32 dev;   /* kernel dev_t of the file's filesystem */
	__u32 flags; /* GCTX_APIMAP_* */
	__u64 ino;
	char name[GCTX_APIMAP_NAME_LEN]; /* file name (last path component) */
};

_Static_assert(sizeof(struct gctx_ev_apimap) == 120, "apimap size");
_Static_assert(sizeof(struct gctx_ev_hdr) == 40, "hdr size");
_Static_assert(sizeof(struct gctx_ev_api) == 200, "api size");
_Static_assert(sizeof(struct gctx_ev_libmap) == 56, "libmap size");
_Static_assert(sizeof(struct gctx_ev_pyexc) == 240, "pyexc size");
_Static_assert(sizeof(struct gctx_ev_fork) == 56, "fork size");
_Static_assert(sizeof(struct gctx_ev_exec) == 448, "exec size");
_Static_assert(sizeof(struct gctx_ev_exit) == 48, "exit size");
_Static_assert(sizeof(struct gctx_ev_open) == 200, "open size");
_Static_assert(sizeof(struct gctx_ev_ioctl) == 296, "ioctl size");
_Static_assert(sizeof(struct gctx_ev_mmap) == 88, "mmap size");
_Static_assert(sizeof(struct gctx_ev_fd) == 64, "fd size");

/* One GPU fd found by the attach-time task/file iterator (read from the iterator's fd). */
struct gctx_iter_rec {
	__u32 tgid;
	__s32 fd;
	__u64 file; /* struct file address */
	__u32 kind; /* enum gctx_dev_kind */
	__u32 f_flags;
	__u32 rdev;
	__u32 pad;
	__u64 ino;
};

_Static_assert(sizeof(struct gctx_iter_rec) == 40, "iter rec size");

/* ---- collector records (never produced by BPF) ---- */

struct gctx_rec_proc {
	__u32 pid;
	__u32 ppid;
	__u64 start_ns; /* process start, CLOCK_MONOTONIC */
	char comm[GCTX_COMM_LEN];
	__u32 nthreads;
	__u32 args_len;
	char exe[GCTX_PATH_LEN];
	char args[GCTX_ARGS_LEN]; /* NUL-separated argv */
};

struct gctx_rec_file {
	__u32 pid; /* holder */
	__s32 fd;
	__u64 file; /* struct file address, 0 if unknown (no task/file iterator) */
	__u32 kind;
	__u32 flags; /* f_flags (O_CLOEXEC is reported through fd flags: see cloexec) */
	__u32 cloexec;
	__u32 pad;
	char path[GCTX_PATH_LEN];
};

struct gctx_rec_device {
	__u32 kind;
	__u32 dev; /* kernel dev_t of the filesystem (major << 20 | minor) */
	__u64 ino;
	__u32 rdev; /* char device number for major-matched kinds, else 0 */
	__u32 pad;
	char path[GCTX_PATH_LEN];
};

struct gctx_rec_thread {
	__u32 pid; /* its process */
	__u32 tid;
	char comm[GCTX_COMM_LEN];
};

/* Written at attach after the GPU files, for each present process that has a CUDA/HIP library
 * mapped: with GPU files of that vendor held, the library was initialised before attach. */
struct gctx_rec_api_present {
	__u32 pid;
	__u32 vendors; /* 1 << GCTX_VENDOR_CUDA | 1 << GCTX_VENDOR_HIP: library mapped */
};

#define GCTX_PROBE_SYMBOL	0 /* exported symbol */
#define GCTX_PROBE_PROC_ADDRESS 1 /* an address cuGetProcAddress returned */
#define GCTX_PROBE_REFUSED                                                                         \
	2 /* such an address, not probed (err: -EPERM not a function                               \
	   * entry of a library defining the API, -EDQUOT over a cap) */
#define GCTX_PROBE_NOT_PRERESOLVED                                                                 \
	3 /* the library's cuGetProcAddress was not asked ahead                                    \
	   * (symbol: why, err: -errno): its addresses are followed                                \
	   * only as the traced processes get them */

struct gctx_rec_probe {
	__u32 fn;		 /* enum gctx_api_fn */
	__u32 how;		 /* GCTX_PROBE_* */
	__u64 offset;		 /* file offset probed */
	__u64 sym_offset;	 /* file offset of the function (offset - 4 after an endbr64) */
	__s32 err;		 /* 0 attached, else -errno */
	__u32 retprobe;		 /* a return probe was attached too */
	__u8 insn[8];		 /* first bytes of the function */
	char symbol[64];	 /* symbol name, or the cuGetProcAddress name */
	char lib[GCTX_PATH_LEN]; /* library file */
};

/* Why API calls of a process could not be seen for a while. */
enum gctx_gap_reason {
	GCTX_GAP_NO_HOLD = 1,	    /* holding was off: probes came after the mapping */
	GCTX_GAP_HOLD_TIMEOUT = 2,  /* the hold timed out before the probes were attached */
	GCTX_GAP_HOLD_FAILED = 3,   /* the process could not be held */
	GCTX_GAP_NOT_CANDIDATE = 4, /* not named like a CUDA/HIP library: found by its exports */
	GCTX_GAP_PROBE_FAILED = 5,  /* the library could not be probed at all */
	GCTX_GAP_LOST = 6,	    /* the mapping record was lost (ring buffer full) */
	GCTX_GAP_OUTSIDE = 7,	    /* not held: its parent is outside the job (-p, --cgroup) */
	GCTX_GAP_WATCHED = 8,	    /* not held: its parent or a tracer would see the stop */
	GCTX_GAP_HOLD_WAIT = 9,	    /* resumed early: its parent began waiting for stops */
	GCTX_GAP_HOLD_ABORT = 10,   /* resumed early, or not held: gpuctx or its releaser was
				     * sent a signal that ends or stops it */
};

struct gctx_rec_api_gap {
	__u32 pid;
	__u32 tid;    /* the thread that mapped the library */
	__u32 reason; /* enum gctx_gap_reason */
	__u32 dev;    /* kernel dev_t of the library file; with ino 0 and a pid: a child forked
		       * with GPU state ran before its own probes were in (lib says what) */
	__u64 ino;
	__u64 from_ns;		 /* the library was mapped (calls possible from here) */
	__u64 to_ns;		 /* its probes were live; 0: never (to the end of the trace) */
	char lib[GCTX_PATH_LEN]; /* library path as the process sees it */
};

/* A hold: the mapping process was stopped from from_ns to to_ns while the library was probed. */
struct gctx_rec_hold {
	__u32 pid;
	__u32 tid;
	__u32 released_by; /* 0 the collector (probes live), 1 the timeout, before the
			    * probes: 2 a SIGCONT from elsewhere, 3 the guard for the
			    * parent's wait, 4 the guard as gpuctx was signalled */
	__u32 dev;
	__u64 ino;
	__u64 from_ns;
	__u64 to_ns;
	char lib[GCTX_PATH_LEN];
	/* Appended (version 4); 0 in older traces */
	__u32 flags; /* GCTX_HOLD_REC_* */
	__u32 pad;
};
#define GCTX_REC_HOLD_V3_LEN 168 /* struct gctx_rec_hold without flags */
_Static_assert(sizeof(struct gctx_rec_hold) == GCTX_REC_HOLD_V3_LEN + 8, "hold size");
#define GCTX_HOLD_REC_FORK                                                                         \
	0x1 /* a forked child held until its own probes were live, not a                           \
	     * library mapping (lib says how many functions were probed) */

struct gctx_rec_drops {
	__u64 drops[GCTX_EV_KERNEL_MAX]; /* indexed by enum gctx_ev_type */
	__u64 missed_stash;		 /* syscall exits without their entry */
	__u64 unfollowed;		 /* children not followed: followed map full */
	/* Appended for gpuctx agent's dumps (a shorter record reads as zeros, see
	 * GCTX_REC_DROPS_V1_LEN): the records the agent's window had forgotten when this trace's
	 * processes are older than the window (their history is cut), and the exited processes
	 * without GPU state a dump left out past its cap, with their records. */
	__u64 window_evicted;
	__u64 omitted_procs;
	__u64 omitted_records;
};
#define GCTX_REC_DROPS_V1_LEN 104 /* without the agent's fields */
_Static_assert(__builtin_offsetof(struct gctx_rec_drops, window_evicted) == GCTX_REC_DROPS_V1_LEN,
	       "drops v1 size");

struct gctx_rec_end {
	__u64 end_ns;
	__s32 exit_status; /* wait status of the traced command, -1 if none */
	__u32 reason;	   /* 0 command exited, 1 signal, 2 duration */
	__u64 events;
};

/* Written (best effort) when a write to the trace file fails, e.g. the disk is full, and
 * again at the end with the final count: what the file holds stops at ts_ns. */
struct gctx_rec_write_loss {
	__u64 ts_ns;   /* CLOCK_MONOTONIC of the first failed write */
	__u64 lost;    /* records that could not be written */
	__u64 written; /* records written before the failure */
	__s32 err;     /* -errno of the failed write */
	__u32 pad;
};

#define GCTX_CGROUP_LEN 256

/* A process's cgroup (/proc/PID/cgroup; trace format 3), written when a followed process is
 * found at attach or execs in a cgroup its parent was not in: the model gives it to the
 * process and to its later children. The report attributes it to a job (model/jobattr.h). */
struct gctx_rec_cgroup {
	__u32 pid;
	__u32 pad;
	__u64 ts_ns;		    /* when it was read */
	char path[GCTX_CGROUP_LEN]; /* the path that names a job (gctx_job_cgroup_pick) */
};

#include "gpuctx_stack.h"

#endif /* __GPUCTX_EVENTS_H */
