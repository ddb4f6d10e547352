/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * model/: the model stage (lineage, GPU objects, API contexts, finding rules; one file each,
 * shared state in model_priv.h). May include lib/, trace/ and decode/; never output/ or the
 * live side.
 *
 * The lineage model: processes, threads, GPU file descriptions, the GPU objects decoded from
 * ioctls, and the findings. Fed one record at a time (kernel events and collector records, in
 * ring-buffer order), by the live collector and by `report` reading a trace file alike.
 * Pure C: no BPF, no I/O.
 *
 * The model is opaque; the records it exposes are plain structs, read-only for callers and
 * valid until the model is freed. Indices are stable: a process, file, object or finding never
 * moves once created, unless the model is compacted (gctx_model__compact, the agent only).
 */
#ifndef __GPUCTX_MODEL_H
#define __GPUCTX_MODEL_H

#include <stdbool.h>
#include <linux/types.h>
#include "gpuctx_events.h"
#include "decode/decode.h"

#define GCTX_MAX_CHAIN 16 /* fork-chain pids kept in a finding */
#define GCTX_COMM_HIST 4  /* earlier names kept per process */

/* What a live process keeps of what it accumulates while it lives (model/trim.c): a
 * compaction (the agent) leaves out its exited threads but the first and the newest
 * GCTX_KEEP_EXITED_THREADS, its execs but the first and the latest GCTX_KEEP_EXECS - 1, and
 * the destroyed objects of a GPU file it holds but the newest GCTX_KEEP_DESTROYED_OBJS (and
 * those a kept record names), and the GPU files it closed before the cut-off (unless a kept
 * record names them); every model keeps, per API context, each thread's first time
 * it made it current and its latest GCTX_CUR_LATEST, for GCTX_CUR_TIDS threads. What is left
 * out is counted: per record (nthreads_dropped, ...) and in gctx_model__trimmed. */
#define GCTX_KEEP_EXITED_THREADS 64
#define GCTX_KEEP_EXECS		 8
#define GCTX_KEEP_DESTROYED_OBJS 64
#define GCTX_CUR_TIDS		 64
#define GCTX_CUR_LATEST		 3

/* How a process came to hold a GPU file description. */
enum gctx_hold_how {
	GCTX_HOLD_OPENED = 0, /* it opened the file itself */
	GCTX_HOLD_INHERITED,  /* it got it through fork from a process that held it */
	GCTX_HOLD_RECEIVED,   /* neither: e.g. SCM_RIGHTS, pidfd_getfd, or opened off-trace */
	GCTX_HOLD_PRESENT,    /* held when gpuctx attached; origin before the trace */
};

struct gctx_exec {
	__u64 ts_ns;
	__u32 old_tid;	      /* thread that called exec (differs from pid: non-leader) */
	const char *filename; /* NUL-terminated; shared with equal strings (strpool.h) */
	const char *args;     /* args_len bytes, NUL-separated; shared likewise */
	__u32 args_len;
	bool fds_unknown; /* the kernel's list of GPU fds kept across it was not whole */
};

#define GCTX_CTX_STACK 8

struct gctx_thread {
	__u32 tid;
	__u32 ctx_stack[GCTX_CTX_STACK]; /* API context ids, current on top; 0 = none */
	__u32 ctx_depth;
	char comm[GCTX_COMM_LEN];
	__u64 start_ns; /* 0 if it existed before the trace */
	__u64 exit_ns;	/* 0 while alive */
	bool exited;
};

struct gctx_proc {
	__u32 idx; /* index in the model */
	__u32 pid;
	__u32 ppid;		  /* the fork parent's pid (kept after reparenting), 0 unknown */
	int parent_idx;		  /* fork parent, -1 when not in the trace */
	char comm[GCTX_COMM_LEN]; /* latest comm */
	__u64 start_ns;		  /* fork time; 0 if present at attach with unknown start */
	__u64 exit_ns;
	bool present_at_attach;
	bool exited;
	int exit_code; /* exit() status when it exited normally, else -1 */
	int signal;    /* fatal signal number, 0 if none */
	bool core_dumped;
	struct gctx_exec *execs; /* every exec, oldest first (but nexecs_dropped) */
	__u32 nexecs;
	__u32 nexecs_dropped;	     /* execs between the first and the latest, left out */
	struct gctx_thread *threads; /* every thread including the leader (but those below) */
	__u32 nthreads;
	__u32 nthreads_dropped; /* exited threads left out (the oldest) */
	__u32 *children;	/* indices of fork children, in fork order */
	__u32 nchildren;
	__u64 nioctls, nmmaps; /* GPU ioctls and mmaps issued */
	__u32 api_gaps;	       /* windows in which its CUDA/HIP calls could not be seen */
	const char *exe;       /* present-at-attach exe (exec filename otherwise); never NULL */
	const char *args;      /* present-at-attach argv (NUL-separated); never NULL */
	__u32 args_len;
	/* earlier names, oldest first (fork name, exec, prctl renames); past GCTX_COMM_HIST the
	 * oldest are kept and the latest in-between ones dropped */
	char comm_prev[GCTX_COMM_HIST][GCTX_COMM_LEN];
	__u32 ncomm_prev;
	__u32 ncomm_at_exec; /* ncomm_prev at the latest exec: names of this program follow */
	/* its cgroup (GCTX_REC_CGROUP; inherited from the fork parent), "" unknown: the job it
	 * belongs to is gctx_job_attr_parse(cgroup) (model/jobattr.h) */
	const char *cgroup;
};

struct gctx_holder {
	__u32 proc_idx;
	enum gctx_hold_how how;
	__u32 from_proc_idx;   /* INHERITED: the parent it came from; else = proc_idx */
	__u64 since_ns;	       /* open / fork / first-use / attach time */
	__u64 until_ns;	       /* close, exec with CLOEXEC, or exit; 0 while held */
	bool held;	       /* false once until_ns is set */
	bool kept_across_exec; /* survived at least one exec of this process */
	__u32 execs_since;     /* execs of this process while holding it */
	__u64 nioctls, nmmaps; /* uses by this process */
	__u64 first_use_ns;    /* 0 if never used */
	__s32 fds[8];	       /* fd numbers known to refer to it in this process */
	__u32 nfds;
};

struct gctx_gpu_file {
	__u32 id;   /* 1-based, stable; what reports print */
	__u64 file; /* kernel struct file address */
	__u32 kind; /* enum gctx_dev_kind */
	char path[GCTX_PATH_LEN];
	int opener_idx; /* process that opened it (or first holder at attach) */
	__u32 opener_pid;
	__u32 opener_tid;
	__u64 open_ns;	  /* 0: opened before the trace */
	__u32 open_flags; /* O_* flags; O_CLOEXEC tells whether it survives exec */
	bool present_at_attach;
	bool closed; /* no holder left */
	__u64 close_ns;
	struct gctx_holder *holders; /* every process that held it, opener first */
	__u32 nholders;
	__u64 nioctls, nmmaps;
	__u64 nobjs_dropped; /* destroyed objects on it left out (the oldest) */
};

struct gctx_gpu_obj {
	__u32 id; /* 1-based */
	enum gctx_obj_kind kind;
	__u32 cls; /* RM class, 0 otherwise */
	__u64 handle;
	__u64 parent;
	__u64 client;
	__u64 size;
	__u32 file_id;	   /* GPU file it lives on */
	__u32 creator_idx; /* process that issued the creating call */
	__u32 creator_tid;
	__u64 create_ns;
	__u64 destroy_ns; /* 0 while alive */
	bool destroyed;
	int parent_obj; /* index of the parent object (RM tree), -1 none */
};

enum gctx_finding_kind {
	GCTX_FIND_INHERITED_GPU_USE = 0,   /* error */
	GCTX_FIND_FOREIGN_GPU_USE,	   /* error */
	GCTX_FIND_FORK_WITH_GPU_STATE,	   /* warning */
	GCTX_FIND_GPU_FD_ACROSS_EXEC,	   /* warning */
	GCTX_FIND_CRASH_AFTER_INHERITANCE, /* error */
	GCTX_FIND_INHERITED_CONTEXT_CALL,  /* error: CUDA/HIP called after fork without exec */
	GCTX_FIND_API_ERROR,	    /* warning: API calls that failed, per process/call/code */
	GCTX_FIND_API_CALLS_UNSEEN, /* warning: a window where API calls could not be seen */
	GCTX_FIND_MAX,
};

enum gctx_severity {
	GCTX_SEV_INFO = 0,
	GCTX_SEV_WARNING,
	GCTX_SEV_ERROR,
};

struct gctx_finding {
	__u32 id; /* 1-based */
	enum gctx_finding_kind kind;
	enum gctx_severity severity;
	__u32 proc_idx; /* the offending process */
	__u32 pid;
	__u32 tid;
	__u32 opener_pid;	     /* opener of the file involved, 0 if none/unknown */
	__u32 file_id;		     /* 0 if none */
	__u32 kind_dev;		     /* enum gctx_dev_kind of the file, 0 if none */
	__u64 time_ns;		     /* when the proving event happened */
	__u32 event_type;	     /* enum gctx_ev_type of the proving event */
	__u32 related_finding;	     /* crash-after-inheritance: the inherited-use finding, or 0 */
	__u32 chain[GCTX_MAX_CHAIN]; /* fork chain pids, opener first, offender last */
	__u32 nchain;
	bool exec_between; /* an exec happened on the chain after the fork */
	bool later_used;   /* fork-with-gpu-state: the child used the inherited files */
	__u64 uses;	   /* inherited/foreign use: uses so far (first one proves it) */
	int err;	   /* driver verdict: errno of the proving call, 0 if none */
	__u32 status;	   /* RM/UVM status of the proving call */
	bool has_status;
	char call[48];	  /* decoded name of the proving call ("RM_ALLOC", "mmap") */
	bool has_api_ret; /* API findings: the call's return code */
	__s64 api_ret;
	char api_ret_name[40]; /* "CUDA_ERROR_NOT_INITIALIZED", "hipErrorNoDevice" */
	/* inherited-context-call: the first call that failed (the proving one, or a later one
	 * when that succeeded), "" none */
	char refused_call[48];
	__s64 refused_ret;
	char refused_ret_name[40];
	__u32 ctx_id; /* API context involved (the parent's), 0 if none */
	__u64 ctx_handle;
	char detail[512]; /* one human-readable sentence with everything above */
};

/* A time a thread made an API context current. */
struct gctx_ctx_current {
	__u32 tid;
	__u32 fn; /* enum gctx_api_fn that did it */
	__u64 ts_ns;
};

/* A GPU context as the application sees it (CUDA driver API / HIP runtime). */
struct gctx_api_ctx {
	__u32 id;     /* 1-based */
	__u64 handle; /* CUcontext / hipCtx_t value, 0 if implicit */
	__u32 vendor; /* enum gctx_api_vendor (api.h) */
	bool primary;
	bool green;
	int device; /* -1 unknown */
	__u32 creator_idx;
	__u32 creator_tid;
	__u32 create_fn; /* enum gctx_api_fn */
	__u64 create_ns;
	__u64 destroy_ns;
	bool destroyed;
	__u32 refs;	 /* primary context retains not yet released */
	__u64 mem_live;	 /* bytes allocated through it and not freed */
	__u64 mem_total; /* bytes ever allocated through it */
	__u64 nallocs;
	__u64 launches;
	__u32 *kobjs; /* kernel-level objects created by the call (obj idx) */
	__u32 nkobjs;
	/* the times a thread made it current: each thread's first and latest GCTX_CUR_LATEST,
	 * for the first GCTX_CUR_TIDS threads; ncurrents_dropped: the others */
	struct gctx_ctx_current *currents;
	__u32 ncurrents, cap_currents;
	__u32 ncurrent_tids; /* threads with an entry in currents */
	__u64 ncurrents_dropped;
	__u32 create_site; /* 1 + call site of the creating call (callsite), 0 none */
};

/* One device allocation made through the API. */
struct gctx_api_mem {
	__u32 proc_idx;
	__u32 ctx_id; /* 0 when no context was current */
	__u32 fn;
	__u64 ptr;
	__u64 size;
	__u64 alloc_ns;
	__u64 free_ns;
	bool freed;
};

/* A window in which a process's API calls could not be seen (GCTX_REC_API_GAP). */
struct gctx_api_gap {
	struct gctx_rec_api_gap r;
	bool has_proc; /* proc_idx is valid (a gap may name no known process) */
	__u32 proc_idx;
	__u32 finding_id; /* its api-calls-unseen finding, 0 none */
};

struct gctx_model;

/* Called for each new finding (live printing). May be NULL. */
typedef void (*gctx_finding_cb)(const struct gctx_finding *f, void *ctx);

struct gctx_model *gctx_model__new(void);
void gctx_model__free(struct gctx_model *m);
void gctx_model__set_finding_cb(struct gctx_model *m, gctx_finding_cb cb, void *ctx);

/* Feed one record (any type from enum gctx_ev_type). Returns 0, -EINVAL when the record is
 * shorter than its type requires, -ENOMEM. Unknown types are counted and ignored (0). */
int gctx_model__feed(struct gctx_model *m, __u32 type, const void *data, __u32 len);
/* End of input: raise the findings that wait for a process to end (fork-with-gpu-state for
 * children still alive). Idempotent. */
void gctx_model__finish(struct gctx_model *m);

/*
 * Fold (forget) exited process subtrees that never touched GPU state: no GPU file, ioctl,
 * mmap, API call or inherited API state, nothing an API gap or call site names. A process is
 * folded once it and every descendant exited before before_ns (CLOCK_MONOTONIC, the events'
 * clock); its slot is reused by a later process, so gctx_model__proc of a folded index is an
 * empty exited process (pid 0). Only a model that runs for weeks calls this (gpuctx agent):
 * exits are remembered for folding from the first call on. Returns the processes folded.
 */
__u32 gctx_model__fold(struct gctx_model *m, __u64 before_ns);
__u64 gctx_model__folded(const struct gctx_model *m); /* processes folded so far */
/*
 * Compact: drop every process that exited before before_ns and that no kept process needs,
 * GPU processes included, with what only they held (files, objects, contexts, findings, API
 * allocations, call sites, stacks, strings), and give the memory back. Kept: live processes,
 * those that exited at or after before_ns, the pins, and what a kept process names (its fork
 * parent and so its whole lineage, the process its API state or its GPU files came from, the
 * opener of a file it holds). Freed API allocations go too, and what a kept live process
 * accumulated past GCTX_KEEP_* (counted: gctx_model__trimmed). Indices change: every pointer and
 * index obtained before is invalid, except pins[], rewritten in place to the new index of
 * each pinned process. Only the agent calls it. 0, or -ENOMEM (the model is unchanged).
 */
int gctx_model__compact(struct gctx_model *m, __u64 before_ns, __u32 *pins, __u32 npins);
__u64 gctx_model__compactions(const struct gctx_model *m);
/* Worth compacting: the model holds more than twice the records (processes, threads, execs,
 * files, objects, findings, contexts, allocations, strings, call sites, stacks) the latest
 * compaction kept, or
 * its process slots are more than twice those in use (a few thousand of slack each): so the
 * work of compacting stays proportional to what came in since. */
bool gctx_model__compact_due(const struct gctx_model *m);
__u32 gctx_model__nstrings(const struct gctx_model *m); /* exec paths, argv, cgroups held */

/* What the model left out of the live processes it keeps (see GCTX_KEEP_EXITED_THREADS):
 * exited threads, execs, destroyed objects, freed API allocations and closed GPU files a
 * compaction dropped, and context-current times past the cap. */
struct gctx_model_trim {
	__u64 threads, execs, objs, mems, currents;
	__u64 files; /* closed GPU files of live processes, closed before the cut-off */
};
const struct gctx_model_trim *gctx_model__trimmed(const struct gctx_model *m);
/* Threads and execs the model holds, over all its processes. */
__u64 gctx_model__nthreads(const struct gctx_model *m);
__u64 gctx_model__nexecs(const struct gctx_model *m);
/* Whether process idx touched GPU state, as folding judges it (a dump keeps such processes). */
bool gctx_model__touched_gpu(const struct gctx_model *m, __u32 idx);
__u32 gctx_model__nlive_slots(const struct gctx_model *m); /* process slots in use */

__u32 gctx_model__nprocs(const struct gctx_model *m);
const struct gctx_proc *gctx_model__proc(const struct gctx_model *m, __u32 idx);
/* Latest process with this pid (a reused pid maps to its newest process); NULL if none. */
const struct gctx_proc *gctx_model__proc_by_pid(const struct gctx_model *m, __u32 pid);
__u32 gctx_model__nfiles(const struct gctx_model *m);
const struct gctx_gpu_file *gctx_model__file(const struct gctx_model *m, __u32 idx);
/* File description by kernel address, newest first; NULL if unknown. */
const struct gctx_gpu_file *gctx_model__file_by_addr(const struct gctx_model *m, __u64 file);
__u32 gctx_model__nobjs(const struct gctx_model *m);
const struct gctx_gpu_obj *gctx_model__obj(const struct gctx_model *m, __u32 idx);
__u32 gctx_model__nfindings(const struct gctx_model *m);
const struct gctx_finding *gctx_model__finding(const struct gctx_model *m, __u32 idx);
/* Drops as recorded by the last GCTX_REC_DROPS record (all zero if none). */
const struct gctx_rec_drops *gctx_model__drops(const struct gctx_model *m);
/* Execs whose list of kept GPU fds was not the kernel's whole answer (a record lost, an fd
 * table past the scan's bound); *files (may be NULL): the GPU files held before them whose
 * state after them is unknown for that (no finding was made for them). */
__u64 gctx_model__exec_fds_unknown(const struct gctx_model *m, __u64 *files);
/* Records fed, by type (index < GCTX_EV_KERNEL_MAX), and in total. */
__u64 gctx_model__events(const struct gctx_model *m, __u32 type);
__u64 gctx_model__total_events(const struct gctx_model *m);
/* The END record, or NULL if the recording did not end cleanly. */
const struct gctx_rec_end *gctx_model__end(const struct gctx_model *m);
/* Set when gpuctx could not write the whole trace (disk full): when and why it stopped. */
const struct gctx_rec_write_loss *gctx_model__write_loss(const struct gctx_model *m);
/* Registered devices seen (GCTX_REC_DEVICE records). */
__u32 gctx_model__ndevices(const struct gctx_model *m);
const struct gctx_rec_device *gctx_model__device(const struct gctx_model *m, __u32 idx);

__u32 gctx_model__nctxs(const struct gctx_model *m);
const struct gctx_api_ctx *gctx_model__ctx(const struct gctx_model *m, __u32 idx);
__u32 gctx_model__nmems(const struct gctx_model *m);
const struct gctx_api_mem *gctx_model__mem(const struct gctx_model *m, __u32 idx);
/* Entry points the collector probed (GCTX_REC_PROBE records). */
__u32 gctx_model__nprobes(const struct gctx_model *m);
const struct gctx_rec_probe *gctx_model__probe(const struct gctx_model *m, __u32 idx);
/* cuGetProcAddress lookups that returned CUDA_ERROR_NOT_FOUND (optional symbols: not errors). */
__u64 gctx_model__procaddr_not_found(const struct gctx_model *m);
/* API calls seen per process (index = process idx). */
__u64 gctx_model__api_calls(const struct gctx_model *m, __u32 proc_idx);
/* Whether a process held or inherited a GPU file, or used the GPU (ioctl, mmap, CUDA/HIP). */
bool gctx_model__has_gpu_state(const struct gctx_model *m, __u32 proc_idx);

/* ---- stacks at rare events (model/stacks.c) ---- */

/* A resolved stack: frames innermost first; site = the user's frame (-1 none). */
struct gctx_stack {
	__u32 idx;
	__u32 pid, tid;
	__u64 ts_ns;
	__u32 role;    /* enum gctx_stack_role */
	__u32 trigger; /* fd, child pid (fork) or signal (crash) */
	__u64 key;     /* struct file of init/use */
	__u32 py_status, py_version;
	char note[128]; /* why it may be incomplete */
	const struct gctx_rec_frame *frames;
	__u32 nframes;
	int site;
};

__u32 gctx_model__nstacks(const struct gctx_model *m);
const struct gctx_stack *gctx_model__stack(const struct gctx_model *m, __u32 idx);
/* The stack of this role taken in process pid. match: 0 = the first; else the fork of that
 * child pid (FORK, no fallback), or the init/use of that struct file (falls back to the
 * first). NULL if none. */
/* An exception a Python child that inherited GPU state raised (pyexc.c). */
struct gctx_pyexc {
	__u32 pid, tid;
	__u64 ts_ns;
	__u32 seq;	 /* 1-based in its process; its GCTX_STACK_RAISE stack's key */
	__u32 total;	 /* exceptions the process had raised by then (at least) */
	bool count_only; /* past the kept ones: only total */
	char type[GCTX_PYEXC_TYPE_LEN]; /* "RuntimeError", "" unread */
	char msg[GCTX_PYEXC_MSG_LEN];	/* args[0], "" none or unread */
};

__u32 gctx_model__npyexcs(const struct gctx_model *m);
const struct gctx_pyexc *gctx_model__pyexc(const struct gctx_model *m, __u32 i);
/* The exception of process proc_idx to show: the first about the GPU, its driver or fork
 * (gctx_pyexc_about_gpu), else its last; NULL none. *total: how many it raised, at least. */
const struct gctx_pyexc *gctx_model__pyexc_of(const struct gctx_model *m, __u32 proc_idx,
					      __u32 *total);
/* Does it name CUDA, HIP, ROCm, NCCL, the GPU, a driver or fork (type or message)? */
bool gctx_pyexc_about_gpu(const struct gctx_pyexc *e);
/* "RuntimeError: message" (printable). */
void gctx_pyexc_name(const struct gctx_pyexc *e, char *buf, size_t len);
/* "RuntimeError: message at file.py:12 in func" (printable; the site from its stack). */
void gctx_pyexc_text(const struct gctx_model *m, const struct gctx_pyexc *e, char *buf, size_t len);

const struct gctx_stack *gctx_model__stack_for(const struct gctx_model *m, __u32 pid, __u32 role,
					       __u64 match);
/* The site (user frame) of pid's first stack of this role, NULL if none. */
const struct gctx_rec_frame *gctx_model__site(const struct gctx_model *m, __u32 pid, __u32 role);
/* Stacks lost, as the collector recorded at the end (NULL if no record). */
const struct gctx_rec_stack_drops *gctx_model__stack_drops(const struct gctx_model *m);
const char *gctx_stack_role_name(__u32 role); /* "init", "fork", "use", "crash" */
/* Library code (stdlib, site-packages, libc, CUDA/HIP, the interpreter): not a site. */
bool gctx_frame_is_library(const struct gctx_rec_frame *f);
/* One frame: "file:line in function" (Python, or native with DWARF lines), else
 * "function+0xoff (module)"; what the traced process wrote is escaped (lib/esc.h). */
void gctx_frame_format(const struct gctx_rec_frame *fr, char *buf, size_t len);
/* The site, then the library frame it called ("<-"). */
void gctx_site_format(const struct gctx_stack *s, char *buf, size_t len);
/* Index of the site among n frames, -1 when n is 0. */
int gctx_stack_pick_site(const struct gctx_rec_frame *fr, __u32 n);
/* API coverage: the gaps, and the holds that avoided one (GCTX_REC_HOLD records). */
__u32 gctx_model__ngaps(const struct gctx_model *m);
const struct gctx_api_gap *gctx_model__gap(const struct gctx_model *m, __u32 idx);
__u32 gctx_model__nholds(const struct gctx_model *m);
const struct gctx_rec_hold *gctx_model__hold(const struct gctx_model *m, __u32 idx);
/* Gaps of a process, and of its ancestors before they forked it: 0 when its API trace is
 * complete as far as the recording knows. */
__u32 gctx_model__api_unseen(const struct gctx_model *m, __u32 proc_idx);
const char *gctx_gap_reason_name(__u32 reason); /* "no-hold", "hold-timeout", ... */

/* ---- the call site of each API call (model/callers.c) ---- */

#define GCTX_CALLSITE_OTHER (~0ull) /* addr of the calls past GCTX_MAX_CALLSITES */
#define GCTX_MAX_CALLSITES  1024    /* (function, address) pairs kept per process */

/* The calls of one function from one return address, in one process image. */
struct gctx_callsite {
	__u32 proc_idx;
	__u32 fn;   /* enum gctx_api_fn */
	__u64 addr; /* return address; 0 unknown (an older trace), or
		     * GCTX_CALLSITE_OTHER */
	__u64 calls;
	__u64 first_ns;
	const struct gctx_rec_caller *caller; /* where addr is, NULL when not recorded */
};

__u32 gctx_model__ncallsites(const struct gctx_model *m);
const struct gctx_callsite *gctx_model__callsite(const struct gctx_model *m, __u32 idx);
/* A process's call sites, in first-call order: n indices for gctx_model__callsite. */
const __u32 *gctx_model__proc_callsites(const struct gctx_model *m, __u32 proc_idx, __u32 *n);
/* Where addr is in the current image of process proc_idx, NULL when not recorded. */
const struct gctx_rec_caller *gctx_model__caller(const struct gctx_model *m, __u32 proc_idx,
						 __u64 addr);
/* Where addr is for pid, from a record fed before the process was known (a model fed only
 * the call sites, read ahead), NULL when none. */
const struct gctx_rec_caller *gctx_model__caller_by_pid(const struct gctx_model *m, __u32 pid,
							__u64 addr);
/* The collector's GCTX_REC_CALLER_DROPS, NULL if none (older trace, --no-api). */
const struct gctx_rec_caller_drops *gctx_model__caller_drops(const struct gctx_model *m);

const char *gctx_finding_kind_name(enum gctx_finding_kind k); /* "inherited-gpu-use", ... */
const char *gctx_severity_name(enum gctx_severity s);	      /* "info", "warning", "error" */
const char *gctx_hold_how_name(enum gctx_hold_how h);	      /* "opened", "inherited", ... */

#endif /* __GPUCTX_MODEL_H */
