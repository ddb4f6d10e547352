// SPDX-License-Identifier: GPL-2.0
/*
 * gpuctx kernel side: process lineage (fork/exec/exit) of the followed processes, and the
 * open/ioctl/mmap/close calls they make on GPU device files.
 *
 * Only tracepoints, tp_btf/raw tracepoints, syscall tracepoints and iterators: no kprobe or
 * fentry (they do not attach on our kernels). Every syscall program rejects a process that is
 * not followed first, then a file that is not a GPU device; decoding work happens only for
 * GPU files. Records go to one ring buffer, submitted without wakeup (the collector polls on a
 * timer) unless the ring is filling up.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gpuctx_events.h"
#include "common.bpf.h"
#include "tpctx.bpf.h"
#include "hold.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define NV_MAJOR	  195
#define NV_CTL_MINOR	  255
#define NV_MAX_GPU_MINOR  247
#define DRM_MAJOR	  226
#define DRM_RENDER_MINOR  128
#define S_IFMT		  00170000
#define S_IFCHR		  0020000
#define MAP_ANONYMOUS	  0x20
#define PROT_EXEC	  0x4
#define NV_ESC_IOCTL_XFER 0xD3
#define NV_ESC_CHECK_VER  0xD2 /* NV_ESC_CHECK_VERSION_STR */
#define NV_ESC_ALLOC_MEM  0x27 /* NV_ESC_RM_ALLOC_MEMORY */
#define NV_ESC_RM_CONTROL 0x2A
#define NVOS54_SIZE	  32
#define MAX_SCAN_FDS	  4096
#define PAGE_SZ		  4096
#define GCTX_IOCTL_FIXED  __builtin_offsetof(struct gctx_ev_ioctl, in)

#define IOC_NR(c)   ((c)&0xff)
#define IOC_TYPE(c) (((c) >> 8) & 0xff)
#define IOC_SIZE(c) (((c) >> 16) & 0x3fff)

/* Knobs, set by the collector before load (and those of common.bpf.h). */
const volatile bool follow_cgroup = false; /* --cgroup: also adopt processes that exec inside */
const volatile __u32 uvm_major = 0;	   /* dynamic majors from /proc/devices, 0 = absent */
const volatile __u32 kfd_major = 0;
const volatile __u32 nr_regdevs = 0;	/* entries in regdev_* */
const volatile bool track_libs = false; /* report executable mappings (API probes on) */

/* Counters, read by the collector through the skeleton's .bss. */
__u64 drops[GCTX_EV_KERNEL_MAX] = {};
__u64 missed_stash = 0; /* a traced syscall not stashed: task storage could not be allocated */
/* Traced syscalls between entry and exit, all tasks: while it is 0, an exit program has
 * nothing to look up (most ioctls/opens/mmaps on the machine are not traced). */
__u64 inflight = 0;
__u64 follow_full = 0; /* children that could not be followed: followed map full */
/* Where task_struct keeps the fs base on this kernel, for the API object (api.bpf.c), which
 * reads it without CO-RE so that loading it parses no kernel BTF: see task_offsets. */
__u32 task_fsbase_off = 0;

/* Files registered with --device PATH:KIND, matched by (s_dev, i_ino). There are a few at most:
 * scanning read-only data costs less than a hash lookup on every call that reaches it. */
const volatile __u64 regdev_ino[GCTX_MAX_REGDEVS] = {};
const volatile __u32 regdev_dev[GCTX_MAX_REGDEVS] = {}; /* kernel dev_t of the filesystem */
const volatile __u32 regdev_kind[GCTX_MAX_REGDEVS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

/* In-flight ioctl: the record being built, plus where its parameters live. */
struct ioctl_slot {
	struct gctx_ev_ioctl ev;
	__u64 params; /* user pointer of the (inner) parameters */
	__u32 active;
	__u32 sent;	/* records this task sent: the ring's fill level is checked every 32 */
	__u64 stk_file; /* last file this task's ioctls were checked for a use stack */
	__u64 owner;	/* ioctl_slots: the task that holds the entry, 0 when free */
};

/* In-flight ioctls, per thread, made only for a thread of a followed process, which stays
 * followed until it is gone: a thread that has one skips the followed-map lookup. It is the
 * entry of ioctl_slots at tid % STASH_SLOTS while the thread holds it (taken at its first GPU
 * ioctl, given back at its exit): an array lookup the verifier inlines, where each
 * bpf_task_storage_get() is a helper call (~30 ns here, two per ioctl). A thread whose entry
 * another one holds uses task-local storage instead. */
#define STASH_SLOTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STASH_SLOTS);
	__type(key, __u32);
	__type(value, struct ioctl_slot);
} ioctl_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ioctl_slot);
} ioctl_stash SEC(".maps");

/* The current thread t's in-flight slot, NULL if it has none; create: take or make one. */
static __always_inline struct ioctl_slot *stash_get(struct task_struct *t, bool create)
{
	__u32 idx = t->pid & (STASH_SLOTS - 1);
	struct ioctl_slot *s = bpf_map_lookup_elem(&ioctl_slots, &idx);

	/* the task, not its id: an exit this program missed (a BPF program already running on
	 * that CPU) leaves the entry held, and a later thread may get the same id */
	if (s && s->owner == (__u64)t)
		return s;
	if (!create)
		return bpf_task_storage_get(&ioctl_stash, t, 0, 0);
	if (s && __sync_val_compare_and_swap(&s->owner, 0, (__u64)t) == 0) {
		/* what the entry's last holder left */
		s->active = 0;
		s->sent = 0;
		s->stk_file = 0;
		return s;
	}
	return bpf_task_storage_get(&ioctl_stash, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* An exiting thread gives its entry of ioctl_slots back (its task storage goes with it). */
static __always_inline void stash_put(struct task_struct *t, __u32 tid)
{
	__u32 idx = tid & (STASH_SLOTS - 1);
	struct ioctl_slot *s = bpf_map_lookup_elem(&ioctl_slots, &idx);

	if (s && s->owner == (__u64)t) {
		if (s->active)
			__sync_fetch_and_add(&inflight, -1);
		s->active = 0;
		s->owner = 0;
	}
}

static __always_inline void count_drop(__u32 type)
{
	if (type < GCTX_EV_KERNEL_MAX)
		__sync_fetch_and_add(&drops[type], 1);
}

static __always_inline void *reserve(__u32 size, __u32 type)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e)
		count_drop(type);
	return e;
}

static __always_inline void submit(void *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

#include "stack.bpf.h"

/* Is this inode a GPU device? Returns enum gctx_dev_kind. The inode pointer is BTF-typed
 * (bpf_rdonly_cast): field loads are ~2 ns each instead of a ~29 ns probe read. */
static __always_inline __u32 classify_inode(struct inode *inode, __u32 *rdev_out, __u64 *ino_out)
{
	__u16 mode = inode->i_mode;
	__u32 rdev = 0;

	if ((mode & S_IFMT) == S_IFCHR) {
		__u32 major, minor;

		rdev = inode->i_rdev;
		major = rdev >> 20;
		minor = rdev & 0xfffff;
		*rdev_out = rdev;
		if (major == NV_MAJOR) {
			if (minor == NV_CTL_MINOR)
				return GCTX_DEV_NVIDIACTL;
			if (minor <= NV_MAX_GPU_MINOR)
				return GCTX_DEV_NVIDIA;
			return GCTX_DEV_NONE; /* nvidia-modeset */
		}
		if (uvm_major && major == uvm_major)
			return minor == 1 ? GCTX_DEV_NVIDIA_UVM_TOOLS : GCTX_DEV_NVIDIA_UVM;
		if (kfd_major && major == kfd_major)
			return GCTX_DEV_KFD;
		if (major == DRM_MAJOR && minor >= DRM_RENDER_MINOR)
			return GCTX_DEV_DRM_RENDER;
	}
	if (nr_regdevs) {
		__u32 dev = inode->i_sb->s_dev;
		__u64 ino = inode->i_ino;

		for (__u32 i = 0; i < GCTX_MAX_REGDEVS && i < nr_regdevs; i++) {
			if (regdev_ino[i] == ino && regdev_dev[i] == dev) {
				*ino_out = ino;
				return regdev_kind[i];
			}
		}
	}
	return GCTX_DEV_NONE;
}

static __always_inline struct file *typed_file(struct file *f)
{
	return bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
}

static __always_inline __u32 classify_file(struct file *f, __u32 *rdev, __u64 *ino)
{
	struct inode *inode;

	if (!f)
		return GCTX_DEV_NONE;
	inode = typed_file(f)->f_inode;
	if (!inode)
		return GCTX_DEV_NONE;
	return classify_inode(inode, rdev, ino);
}

/* The pointer stored at slot, read by a typed load: BTF types no pointer to pointer (the fd
 * array), so the slot is read as an rb_node, whose first member is an unsigned long. The
 * value comes back a plain number, as a probe read's would (the callers pass it on as one),
 * and a faulting load reads 0: ~2 ns instead of a ~20 ns probe read (~50 ns less per GPU
 * ioctl entry, as the kernel times it). */
static __always_inline void *load_ptr(void *slot)
{
	struct rb_node *n = bpf_rdonly_cast(slot, bpf_core_type_id_kernel(struct rb_node));

	return (void *)n->__rb_parent_color;
}

/* fd -> struct file of task (the current one), NULL if none: typed loads all the way. */
static __always_inline struct file *task_fd_file(struct task_struct *task, __s32 fd)
{
	struct files_struct *files;
	struct fdtable *fdt;

	if (fd < 0)
		return NULL;
	files = task->files;
	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (__u32)fd >= fdt->max_fds)
		return NULL;
	return load_ptr(&fdt->fd[fd]);
}

struct scan_ctx {
	struct file **fds;
	unsigned long *open_fds; /* the fd table's bitmap of open fds */
	unsigned long bits;	 /* open fds of the current word not looked at yet */
	__u32 base;		 /* the fd of that word's bit 0 */
	__u32 word;		 /* the next word to read */
	__u32 words;
	__u32 max;
	struct scan_out *out;
};

/* What the scan found, in map memory: kept in scan_ctx on the stack, each value the verifier
 * could tell apart made it check the callback and the code after the loop once more (exec_btf,
 * with the earlier branching lowest-bit search: 20,591 -> 253,745 instructions processed; so:
 * 1,060 -> 1,193 on 6.18.44-fc-v1300). */
struct scan_out {
	__u32 sent;  /* GPU fds reported; match: the fds on that file */
	__u32 flags; /* GCTX_EXEC_FDS_SCANNED: the bitmap read to its end; _LOST */
	__u32 type;  /* the records': GCTX_EV_FD_KEPT (exec) or GCTX_EV_FD_FORK (fork) */
	__u32 pad;
	__u64 match; /* not 0: count the fds on this file, send nothing (a close) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan_out);
} scan_out SEC(".maps");

/* One open fd of the scanned table: report it (a record of type) if it is a GPU file.
 * Returns 0 not a GPU file, 1 reported, GCTX_EXEC_FDS_LOST a GPU file whose record was lost. */
static __noinline int scan_fd(struct file **fds, __u32 i, __u32 type)
{
	struct gctx_ev_fd *e;
	struct file *f = load_ptr(&fds[i]);
	__u32 kind, rdev = 0;
	__u64 ino = 0;

	if (!f)
		return 0;
	kind = classify_file(f, &rdev, &ino);
	if (!kind)
		return 0;
	e = reserve(sizeof(*e), type);
	if (!e)
		return GCTX_EXEC_FDS_LOST;
	fill_hdr(&e->hdr, type);
	e->file = (__u64)f;
	e->fd = i;
	e->kind = kind;
	e->flags = 0;
	e->others = 0;
	submit(e);
	return 1;
}

/* Index of the lowest set bit of w (w != 0): clang 14 cannot lower __builtin_ctzl for BPF.
 * Branch-free (the lowest bit isolated, then a de Bruijn multiply and a table load): each
 * branch of a halving loop doubled the states the verifier checks in the bpf_loop callback
 * and in scan_fd after it (9.4k of exec_btf's 20.6k instructions at load on 6.18.44). */
static const __u8 debruijn64[64] = {
    0,	1,  2,	53, 3,	7,  54, 27, 4,	38, 41, 8,  34, 55, 48, 28, 62, 5,  39, 46, 44, 42,
    22, 9,  24, 35, 59, 56, 49, 18, 29, 11, 63, 52, 6,	26, 37, 40, 33, 47, 61, 45, 43, 21,
    23, 58, 17, 10, 51, 25, 36, 32, 60, 20, 57, 16, 50, 31, 19, 15, 30, 14, 13, 12,
};

static __always_inline __u32 low_bit(unsigned long w)
{
	return debruijn64[((w & -w) * 0x022fdd63cc95386dUL) >> 58];
}

/* One step over the fd table's bitmap of open fds: read the next word, or look at the next
 * open fd of the current one. A new process has a handful of fds open in a table of 64 or
 * more: one callback per open fd (each is an indirect call, ~40 ns here), not one per slot. */
static long scan_fd_step(__u32 i, struct scan_ctx *c)
{
	unsigned long w = c->bits;
	__u32 fd;

	if (!w) {
		if (c->word >= c->words) {
			c->out->flags |= GCTX_EXEC_FDS_SCANNED;
			return 1;
		}
		/* the bitmap word read by a typed load, as a pointer slot is (load_ptr) */
		c->bits = (unsigned long)load_ptr(&c->open_fds[c->word]);
		c->base = c->word * 64;
		c->word++;
		return 0;
	}
	c->bits = w & (w - 1);
	fd = c->base + low_bit(w);
	if (fd < c->max && c->out->match) {
		c->out->sent += (__u64)load_ptr(&c->fds[fd]) == c->out->match;
	} else if (fd < c->max) {
		int r = scan_fd(c->fds, fd, c->out->type);

		c->out->sent += r & 1;
		c->out->flags |= r & GCTX_EXEC_FDS_LOST;
	}
	return 0;
}

/* Read the fd table of task (the exec'ing one, or a child being forked) to its end, sending a
 * record of type for each GPU fd open in it (match not 0: counting the fds on that file
 * instead). Returns GCTX_EXEC_FDS_SCANNED when every open fd was looked at, |
 * GCTX_EXEC_FDS_LOST when a record could not be sent; *sent: those sent (counted). A
 * subprogram: its frame stays off the fork program's deepest call chain (the stack's). */
static __noinline __u32 scan_fds(struct task_struct *task, __u32 type, __u64 match, __u32 *sent)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct scan_ctx sc;
	__u32 zero = 0, scan;

	sc.out = bpf_map_lookup_elem(&scan_out, &zero);
	if (!fdt || !sc.out)
		return 0;
	sc.out->sent = 0;
	sc.out->flags = 0;
	sc.out->type = type;
	sc.out->match = match;
	sc.fds = BPF_CORE_READ(fdt, fd);
	sc.open_fds = BPF_CORE_READ(fdt, open_fds);
	sc.max = BPF_CORE_READ(fdt, max_fds);
	if (sc.max > MAX_SCAN_FDS)
		sc.max = MAX_SCAN_FDS;
	sc.bits = 0;
	sc.word = 0;
	sc.base = 0;
	sc.words = (sc.max + 63) / 64;
	/* at most a callback per word and per open fd */
	bpf_loop(MAX_SCAN_FDS + MAX_SCAN_FDS / 64 + 1, scan_fd_step, &sc, 0);
	scan = sc.out->flags;
	*sent = sc.out->sent;
	/* fds past the bound not looked at */
	if (BPF_CORE_READ(fdt, max_fds) > MAX_SCAN_FDS)
		scan &= ~GCTX_EXEC_FDS_SCANNED;
	return scan;
}

/* ---- lineage ---- */

static __always_inline void on_fork(void *ctx, struct task_struct *parent,
				    struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 scan = 0, sent = 0, *st;
	struct gctx_ev_fork *e;
	__u8 one = 1;

	if (ctgid != ptgid && is_own(ptgid)) {
		/* a helper of gpuctx (the resolver child): never the user's process */
		bpf_map_update_elem(&own_procs, &ctgid, &one, BPF_ANY);
		return;
	}
	if (!is_followed(ptgid))
		return;
	if (!follow_all && ctgid != ptgid && bpf_map_update_elem(&followed, &ctgid, &one, BPF_ANY))
		__sync_fetch_and_add(&follow_full, 1);
	/* A process that holds GPU fds: the GPU fds the child got are the kernel's, read from
	 * its copy of the table (dup'd, closed by close_range or dup2 since the open: none of it
	 * is traced), each sent before the fork record. Any other fork pays a lookup. */
	if (ctgid != ptgid && (st = stk_get(ptgid)) && (*st & STK_GPU_FDS))
		scan = scan_fds(child, GCTX_EV_FD_FORK, 0, &sent) << 1;
	e = reserve(sizeof(*e), GCTX_EV_FORK);
	if (!e)
		return;
	fill_hdr(&e->hdr, GCTX_EV_FORK);
	e->child_tid = BPF_CORE_READ(child, pid);
	e->child_tgid = ctgid;
	e->flags = (ctgid == ptgid ? GCTX_FORK_THREAD : 0) | scan;
	e->nfds = sent;
	submit(e);
	stack_on_fork(ctx, ptgid, ctgid, BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm),
		      track_libs);
	if (sent)
		stk_set(ctgid, STK_GPU_FDS);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	on_fork(ctx, parent, child);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw, struct task_struct *parent, struct task_struct *child)
{
	on_fork(ctx, parent, child);
	return 0;
}

static __always_inline void on_exec(struct task_struct *task, __u32 old_pid,
				    struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u32 len, scan, sent = 0;
	struct gctx_ev_exec *e;
	unsigned long as, ae;

	if (!is_followed(tgid)) {
		__u8 one = 1;

		if (!follow_cgroup || bpf_current_task_under_cgroup(&cgroup_map, 0) != 1)
			return;
		bpf_map_update_elem(&followed, &tgid, &one, BPF_ANY);
	}
	/* GPU fds still open now survived exec: the close-on-exec ones are already closed,
	 * however the flag was set (O_CLOEXEC, fcntl, FIOCLEX, dup3, close_range). The list is the
	 * kernel's whole answer only if the table was read to its end and every record sent:
	 * the exec record says so, and how many came before it. */
	scan = scan_fds(task, GCTX_EV_FD_KEPT, 0, &sent);
	/* a fork scan for its children while it holds GPU fds (on_fork), not after */
	stack_on_exec(tgid, sent || scan != GCTX_EXEC_FDS_SCANNED ? 0 : STK_GPU_FDS);
	stack_py_exec(task, tgid);
	if (sent)
		stk_set(tgid, STK_GPU_FDS);

	e = reserve(sizeof(*e), GCTX_EV_EXEC);
	if (!e)
		return;
	fill_hdr(&e->hdr, GCTX_EV_EXEC);
	e->old_tid = old_pid;
	e->fd_scan = scan;
	e->fds_kept = sent;
	/* the job's cgroup as the kernel has it now: userspace reads /proc too late for a
	 * process that exits at once */
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->filename[0] = 0;
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	as = BPF_CORE_READ(task, mm, arg_start);
	ae = BPF_CORE_READ(task, mm, arg_end);
	len = ae > as ? ae - as : 0;
	if (len > GCTX_ARGS_LEN)
		len = GCTX_ARGS_LEN;
	barrier_var(len);
	if (len > 0 && len <= GCTX_ARGS_LEN && bpf_probe_read_user(e->args, len, (void *)as) == 0)
		e->args_len = len;
	else
		e->args_len = 0;
	submit(e);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	on_exec(p, old_pid, bprm);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	on_exec(p, old_pid, bprm);
	return 0;
}

static __always_inline void on_exit(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct gctx_ev_exit *e;
	bool group_dead;

	stash_put(task, BPF_CORE_READ(task, pid));
	if (!is_followed(tgid)) {
		/* a helper of gpuctx is gone: its pid may be reused by anyone */
		forget(&own_procs, &tgid);
		return;
	}
	/* signal->live has been decremented before the tracepoint fires. */
	group_dead = BPF_CORE_READ(task, signal, live.counter) == 0;
	if (group_dead)
		stack_exit_maps(tgid);
	e = reserve(sizeof(*e), GCTX_EV_EXIT);
	if (e) {
		fill_hdr(&e->hdr, GCTX_EV_EXIT);
		e->exit_code = BPF_CORE_READ(task, exit_code);
		e->group_dead = group_dead;
		submit(e);
	}
	if (group_dead && !follow_all)
		bpf_map_delete_elem(&followed, &tgid);
	if (group_dead) {
		stack_on_exit(tgid);
		hold_forget(tgid);
	}
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *p)
{
	on_exit(p);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw, struct task_struct *p)
{
	on_exit(p);
	return 0;
}

/* ---- GPU device files ---- */

static __always_inline struct task_struct *cur(void)
{
	return bpf_get_current_task_btf();
}

/* The syscall's own arguments, read at its exit: the entry registers are still in pt_regs
 * (x86-64: di, si, dx, r10, r8, r9), so nothing needs stashing at entry. */
static __always_inline struct pt_regs *sys_regs(struct task_struct *t)
{
	return (struct pt_regs *)bpf_task_pt_regs(t);
}

/* Decided at exit from the new fd's inode: most opens (the dynamic loader's libraries) are of
 * no interest, and an exit-only program keeps nothing for them. which: 0 openat, 1 open,
 * 2 openat2. */
static __always_inline void open_exit(void *ctx, long ret, int which)
{
	struct task_struct *t = cur();
	struct gctx_ev_open *e;
	struct pt_regs *regs;
	struct file *f;
	__u32 kind, rdev = 0;
	__u64 ino = 0, path, flags;

	if (ret < 0 || !is_followed(t->tgid))
		return;
	f = task_fd_file(t, ret);
	kind = classify_file(f, &rdev, &ino);
	if (!kind)
		return;
	stack_on_open(ctx, (__u64)f, ret);
	stk_set(t->tgid, STK_GPU_FDS); /* its forks read the child's GPU fds (on_fork) */
	e = reserve(sizeof(*e), GCTX_EV_OPEN);
	if (!e)
		return;
	regs = sys_regs(t);
	if (which == 1) {
		path = regs->di;
		flags = regs->si;
	} else {
		path = regs->si;
		flags = regs->dx;
	}
	/* openat2: struct open_how starts with __u64 flags */
	if (which == 2 && bpf_probe_read_user(&flags, sizeof(flags), (void *)flags))
		flags = 0;
	fill_hdr_task(&e->hdr, GCTX_EV_OPEN, t);
	e->file = (__u64)f;
	e->fd = ret;
	e->flags = flags;
	e->kind = kind;
	e->rdev = rdev;
	e->ino = ino ? ino : typed_file(f)->f_inode->i_ino;
	if (bpf_probe_read_user_str(e->path, sizeof(e->path), (void *)path) < 0)
		e->path[0] = 0;
	submit(e);
}

/* One program for open, openat and openat2 (the collector attaches it to the other two
 * tracepoints): the verifier checks its stack code once, not three times. The syscall number
 * tells them apart (x86-64). */
#define NR_OPEN	   2
#define NR_OPENAT2 437

SEC("tp/syscalls/sys_exit_openat")
int open_exit_all(struct gctx_tp_sys_exit *ctx)
{
	int nr = ctx->__syscall_nr;

	open_exit(ctx, ctx->ret, nr == NR_OPEN ? 1 : nr == NR_OPENAT2 ? 2 : 0);
	return 0;
}

/* Parameter bytes the driver reads for this command, before capping. */
static __always_inline __u32 param_size(__u32 kind, __u32 cmd)
{
	if (kind == GCTX_DEV_NVIDIA_UVM || kind == GCTX_DEV_NVIDIA_UVM_TOOLS) {
		switch (cmd) {
		case 0x30000001: /* UVM_INITIALIZE */
			return 16;
		case 0x4B: /* UVM_MM_INITIALIZE */
			return 8;
		case 0x19: /* UVM_REGISTER_GPU_VASPACE */
			return 32;
		case 0x1B: /* UVM_REGISTER_CHANNEL */
			return 56;
		case 0x25: /* UVM_REGISTER_GPU */
			return 40;
		default:
			return 64;
		}
	}
	return IOC_SIZE(cmd);
}

/* Copy up to GCTX_IOCTL_BYTES of user parameters; if the range crosses into an unmapped
 * page, keep what lies in the first page. Returns the bytes copied. */
static __always_inline __u32 read_params(__u8 *dst, __u64 uptr, __u32 size)
{
	__u32 first;

	if (!uptr)
		return 0;
	if (size > GCTX_IOCTL_BYTES)
		size = GCTX_IOCTL_BYTES;
	barrier_var(size);
	if (size == 0 || size > GCTX_IOCTL_BYTES)
		return 0;
	if (bpf_probe_read_user(dst, size, (void *)uptr) == 0)
		return size;
	first = PAGE_SZ - (uptr & (PAGE_SZ - 1));
	if (first >= size)
		return 0;
	size = first;
	barrier_var(size);
	if (size == 0 || size > GCTX_IOCTL_BYTES)
		return 0;
	return bpf_probe_read_user(dst, size, (void *)uptr) == 0 ? size : 0;
}

#define PARAMS_SMALL 32

/* read_params() through a stack buffer, for parameters that fit (RM_CONTROL's and RM_ALLOC's,
 * the commonest, most UVM and many KFD calls); 0 for larger ones. A slab-backed map value
 * (task storage, a small array) as the destination pays the hardened-usercopy check of a slab
 * object, ~100 ns here; the task's kernel stack passes it at once. A subprogram of its own, so
 * that its frame stays under the 64 bytes past which a program runs on a per-CPU private
 * stack (kernel 6.13+), which the check treats as heap. */
static __noinline __u32 read_params_small(__u8 *dst, __u64 uptr, __u32 size)
{
	__u64 small[PARAMS_SMALL / 8] = {};
	__u32 got;

	if (size > sizeof(small))
		return 0;
	got = read_params((__u8 *)small, uptr, size);
	if (got)
		__builtin_memcpy(dst, small, sizeof(small));
	return got;
}

/* read_params(), through the stack when the parameters are small. */
static __always_inline __u32 read_params_any(__u8 *dst, __u64 uptr, __u32 size)
{
	return size <= PARAMS_SMALL ? read_params_small(dst, uptr, size)
				    : read_params(dst, uptr, size);
}

/* Only these command types reach a GPU driver: NVIDIA RM 'F', AMD KFD 'K', DRM 'd' (core and
 * driver commands alike) and UVM's raw numbers (type byte 0). Every other type fails in the
 * driver with ENOTTY, or is a VFS-generic ioctl (FIOCLEX, FIONBIO...): rejecting it first
 * spares every other ioctl the fd -> file -> inode walk (docs/not-recorded.md). */
static __always_inline bool gpu_ioctl_type(__u32 cmd)
{
	__u32 t = IOC_TYPE(cmd);

	return t == 'F' || t == 'K' || t == 'd' || t == 0;
}

/* NVIDIA and UVM copy the whole parameter struct back with its inputs unchanged, so one read
 * at exit (the page warm by then: the driver just wrote it) serves the decoder for both.
 * Read at entry too: CHECK_VERSION_STR (the driver writes its own version over the caller's)
 * and RM_ALLOC_MEMORY (its limit is in/out); KFD and DRM (in/out unions). nr: the escape
 * (XFER's inner one). */
static __always_inline bool params_at_entry(__u32 kind, __u32 nr)
{
	if (kind == GCTX_DEV_NVIDIA_UVM || kind == GCTX_DEV_NVIDIA_UVM_TOOLS)
		return false;
	if (kind == GCTX_DEV_NVIDIACTL || kind == GCTX_DEV_NVIDIA)
		return nr == NV_ESC_CHECK_VER || nr == NV_ESC_ALLOC_MEM;
	return true;
}

/* The driver copies parameters back only for _IOC_READ commands on KFD and DRM (NVIDIA and
 * UVM always copy back): for the others out[] is in[] and is not read again at exit. */
static __always_inline bool params_written_back(__u32 kind, __u32 cmd)
{
	if (kind != GCTX_DEV_KFD && kind != GCTX_DEV_DRM_RENDER)
		return true;
	return (cmd >> 30) & 2; /* _IOC_READ */
}

SEC("tp/syscalls/sys_enter_ioctl")
int ioctl_enter(struct gctx_tp_enter_ioctl *ctx)
{
	__u32 kind, rdev = 0, cmd = ctx->cmd, size, got, nr;
	struct ioctl_slot *s;
	__u64 ino = 0, params;
	struct task_struct *t;
	struct file *f;
	__s32 fd;

	if (!gpu_ioctl_type(cmd))
		return 0;
	/* the task is fetched once: each helper call costs here (fill_hdr_task) */
	t = cur();
	s = stash_get(t, false);
	if (!s && !is_followed(t->tgid))
		return 0;
	fd = ctx->fd;
	f = task_fd_file(t, fd);
	kind = classify_file(f, &rdev, &ino);
	if (!kind)
		return 0;

	if (!s) {
		s = stash_get(t, true);
		if (!s) {
			__sync_fetch_and_add(&missed_stash, 1);
			return 0;
		}
	}
	/* the use-stack check once per task and file: nothing more on the hot path */
	if (s->stk_file != (__u64)f) {
		s->stk_file = (__u64)f;
		stack_on_use(ctx, (__u64)f, fd);
	}
	params = ctx->arg;
	fill_hdr_task(&s->ev.hdr, GCTX_EV_IOCTL, t);
	s->ev.file = (__u64)f;
	s->ev.fd = fd;
	s->ev.cmd = cmd;
	s->ev.arg = params;
	s->ev.kind = kind;
	s->ev.flags = 0;
	s->ev.inner_cmd = 0;
	s->ev.len = 0;
	s->ev.pad = 0;
	size = param_size(kind, cmd);
	nr = IOC_NR(cmd);
	if ((kind == GCTX_DEV_NVIDIACTL || kind == GCTX_DEV_NVIDIA) && IOC_TYPE(cmd) == 'F' &&
	    nr == NV_ESC_IOCTL_XFER) {
		struct {
			__u32 cmd;
			__u32 size;
			__u64 ptr;
		} x = {};

		/* NV_ESC_IOCTL_XFER_CMD wraps the real escape: capture the inner one. */
		if (bpf_probe_read_user(&x, sizeof(x), (void *)params) == 0) {
			s->ev.flags |= GCTX_IOCTL_XFER;
			s->ev.inner_cmd = x.cmd;
			size = x.size;
			params = x.ptr;
			nr = x.cmd;
		}
	}
	s->ev.size = size;
	s->params = params;
	got = params_at_entry(kind, nr) ? read_params_any(s->ev.in, params, size) : 0;
	if (got) {
		s->ev.flags |= GCTX_IOCTL_IN_OK;
		s->ev.len = got;
		if (!params_written_back(kind, cmd))
			s->ev.flags |= GCTX_IOCTL_OUT_OK;
	}
	if (!s->active)
		__sync_fetch_and_add(&inflight, 1);
	s->active = 1;
	return 0;
}

/*
 * RM_CONTROL on nvidiactl: the NVOS54 at out[0..32) names the control's own parameters
 * (params @0x10, paramsSize @0x18). For client (NV0000) controls only, which run at init and
 * carry what identifies a driver and its GPUs (build version, probed and attached GPU ids), copy
 * up to 64 bytes of them after the NVOS54; for GET_BUILD_VERSION (0x101) the driver version
 * string behind pDriverVersionBuffer (@8) fills what its 40 bytes leave. Other controls (the
 * hot ones) cost a compare. Returns the bytes added.
 */
static __noinline __u32 read_ctrl_params(__u8 *buf)
{
	__u32 cmd = *(__u32 *)(buf + 8), size = *(__u32 *)(buf + 0x18);
	__u64 ptr = *(__u64 *)(buf + 0x10), ver;

	if (cmd >= 0x10000 || !ptr || !size)
		return 0;
	if (size > GCTX_IOCTL_BYTES - NVOS54_SIZE)
		size = GCTX_IOCTL_BYTES - NVOS54_SIZE;
	barrier_var(size);
	if (size == 0 || size > GCTX_IOCTL_BYTES - NVOS54_SIZE)
		return 0;
	if (bpf_probe_read_user(buf + NVOS54_SIZE, size, (void *)ptr))
		return 0;
	if (cmd != 0x101 || size != 40)
		return size;
	ver = *(__u64 *)(buf + NVOS54_SIZE + 8);
	if (!ver || bpf_probe_read_user_str(buf + NVOS54_SIZE + 40,
					    GCTX_IOCTL_BYTES - NVOS54_SIZE - 40, (void *)ver) <= 0)
		return size;
	return GCTX_IOCTL_BYTES - NVOS54_SIZE;
}

/* The ring carries the record shortened to the bytes used: the fixed part, then len bytes of
 * in[], then the bytes read at exit (packed right after in[]); the collector puts them back in
 * place (trace/ring.h), so the trace keeps the full struct. */
SEC("tp/syscalls/sys_exit_ioctl")
int ioctl_exit(struct gctx_tp_sys_exit *ctx)
{
	struct ioctl_slot *s;
	__u32 in_len, got = 0;
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct task_struct *t;

	if (!inflight)
		return 0;
	t = cur();
	s = stash_get(t, false);
	if (!s || !s->active)
		return 0;
	s->active = 0;
	__sync_fetch_and_add(&inflight, -1);
	s->ev.ret = ctx->ret;
	s->ev.dur_ns = bpf_ktime_get_ns() - s->ev.hdr.ts_ns;
	in_len = s->ev.len;
	barrier_var(in_len);
	if (in_len > GCTX_IOCTL_BYTES)
		return 0;
	if (!(s->ev.flags & GCTX_IOCTL_OUT_OK)) {
		got = read_params_any(s->ev.in + in_len, s->params, s->ev.size);
		if (got)
			s->ev.flags |= GCTX_IOCTL_OUT_OK;
		if (got == NVOS54_SIZE && !in_len && s->ev.kind == GCTX_DEV_NVIDIACTL &&
		    IOC_TYPE(s->ev.cmd) == 'F' && IOC_NR(s->ev.cmd) == NV_ESC_RM_CONTROL &&
		    !(s->ev.flags & GCTX_IOCTL_XFER))
			got += read_ctrl_params(s->ev.in);
	}
	barrier_var(got);
	if (got > GCTX_IOCTL_BYTES)
		return 0;
	/* Reading the ring's positions costs a cache miss on the consumer's line: a task that
	 * sends many records checks now and then, and the collector polls every 10 ms anyway. */
	if (!(s->sent++ & 31) && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, &s->ev, GCTX_IOCTL_FIXED + in_len + got, flags))
		count_drop(GCTX_EV_IOCTL);
	return 0;
}

static __noinline void emit_libmap(__u32 dev, __u64 ino)
{
	struct gctx_ev_libmap *e;

	e = reserve(sizeof(*e), GCTX_EV_LIBMAP);
	if (!e)
		return;
	fill_hdr(&e->hdr, GCTX_EV_LIBMAP);
	e->dev = dev;
	e->pad = 0;
	e->ino = ino;
	submit(e);
}

/* Back from fork in the child (ret 0; its first return to user space): a child of a process
 * holding GPU state is held until its own API probes are live (hold.bpf.h). Any other return
 * of clone is one map lookup, most of them none (the parent's side returns the pid). */
static __always_inline void fork_returned(long ret)
{
	struct task_struct *t;
	__u32 *st, tgid;

	if (ret)
		return;
	t = cur();
	tgid = t->tgid;
	if (t->pid != tgid)
		return; /* a thread */
	st = stk_get(tgid);
	if (!st || !(*st & STK_FORK_HOLD))
		return;
	__sync_fetch_and_and(st, ~STK_FORK_HOLD);
	watch_fork();
}

SEC("tp/syscalls/sys_exit_clone")
int clone_exit(struct gctx_tp_sys_exit *ctx)
{
	fork_returned(ctx->ret);
	return 0;
}

SEC("tp/syscalls/sys_exit_clone3")
int clone3_exit(struct gctx_tp_sys_exit *ctx)
{
	fork_returned(ctx->ret);
	return 0;
}

SEC("tp/syscalls/sys_exit_fork")
int fork_exit(struct gctx_tp_sys_exit *ctx)
{
	fork_returned(ctx->ret);
	return 0;
}

/* Is f's name that of a CUDA/HIP library? Read into the stack, by typed loads: 16 bytes
 * cover both names (is_api_name). */
static __always_inline bool api_named(struct file *f)
{
	struct dentry *d = typed_file(f)->f_path.dentry;
	char name[16];

	return d && api_name_at((const char *)d->d_name.name, name, sizeof(name));
}

/* An executable mapping of the file (dev, ino) by a followed process. The collector looks at
 * a library once, at its first mapping, and then marks it in known_libs: a process storm maps
 * the same few libraries again and again. After that only a process whose mappings the
 * collector keeps (one with GPU state, or running Python) needs to hear of it. */
static __noinline void lib_mapped(struct file *f, __u32 tgid, __u32 dev, __u64 ino)
{
	struct gctx_lib_key key = {};
	__u8 *known;

	key.dev = dev;
	key.ino = ino;
	known = bpf_map_lookup_elem(&known_libs, &key);
	/* a file seen under another name whose inode number an API library now has (the old
	 * file deleted, the number reused): new to the collector */
	if (known && *known == GCTX_LIB_SEEN && api_named(f))
		known = NULL;
	if (!known) {
		emit_libmap(dev, ino);
		watch_apimap(f, dev, ino);
	} else if (stk_get(tgid) || bpf_map_lookup_elem(&pyinfo, &tgid)) {
		emit_libmap(dev, ino);
	}
}

/* Decided at exit, from the syscall's registers: a GPU mapping is rare, the loader's mappings
 * are many, and an exit-only program keeps nothing for them. */
SEC("tp/syscalls/sys_exit_mmap")
int mmap_exit(struct gctx_tp_sys_exit *ctx)
{
	struct task_struct *t = cur();
	struct gctx_ev_mmap *e;
	struct pt_regs *regs;
	__u32 kind, rdev = 0;
	__u64 ino = 0, flags;
	struct file *f;
	__s32 fd;

	regs = sys_regs(t);
	flags = regs->r10;
	if ((flags & MAP_ANONYMOUS) || !is_followed(t->tgid))
		return 0;
	fd = regs->r8;
	f = task_fd_file(t, fd);
	if (!f)
		return 0;
	kind = classify_file(f, &rdev, &ino);
	if (!kind) {
		/* the loader maps a few libraries per process: the file's identity by typed
		 * loads (classify_file found its inode), not probe reads */
		if (track_libs && (regs->dx & PROT_EXEC) && ctx->ret >= 0) {
			struct inode *inode = typed_file(f)->f_inode;

			if (inode)
				lib_mapped(f, t->tgid, inode->i_sb->s_dev, inode->i_ino);
		}
		return 0;
	}
	stack_on_use(ctx, (__u64)f, fd); /* rare: GPU mappings only; deduplicated there */
	e = reserve(sizeof(*e), GCTX_EV_MMAP);
	if (!e)
		return 0;
	fill_hdr_task(&e->hdr, GCTX_EV_MMAP, t);
	e->file = (__u64)f;
	e->fd = fd;
	e->kind = kind;
	e->len = regs->si;
	e->off = regs->r9;
	e->prot = regs->dx;
	e->flags = flags;
	e->ret = ctx->ret;
	submit(e);
	return 0;
}

SEC("tp/syscalls/sys_enter_close")
int close_enter(struct gctx_tp_enter_close *ctx)
{
	struct task_struct *t = cur();
	__u32 kind, rdev = 0, scan, same = 0;
	struct gctx_ev_fd *e;
	struct file *f;
	__u64 ino = 0;
	__s32 fd;

	if (!is_followed(t->tgid))
		return 0;
	fd = ctx->fd;
	f = task_fd_file(t, fd);
	if (!f)
		return 0;
	kind = classify_file(f, &rdev, &ino);
	if (!kind)
		return 0;
	/* the other fds on the file (a dup, an F_DUPFD copy: not traced) keep it held: counted in
	 * the table, this fd included (a GPU close is rare) */
	scan = scan_fds(t, 0, (__u64)f, &same);
	e = reserve(sizeof(*e), GCTX_EV_CLOSE);
	if (!e)
		return 0;
	fill_hdr_task(&e->hdr, GCTX_EV_CLOSE, t);
	e->file = (__u64)f;
	e->fd = fd;
	e->kind = kind;
	e->flags = scan & GCTX_EXEC_FDS_SCANNED ? GCTX_FD_COUNTED : 0;
	e->others = same ? same - 1 : 0;
	submit(e);
	return 0;
}

/* ---- attach-time discovery: every GPU fd of the followed processes ---- */

SEC("iter/task_file")
int gpu_file_iter(struct bpf_iter__task_file *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct gctx_iter_rec r = {};

	if (!task || !file)
		return 0;
	r.tgid = task->tgid;
	if (!is_followed(r.tgid))
		return 0;
	r.kind = classify_file(file, &r.rdev, &r.ino);
	if (!r.kind)
		return 0;
	r.fd = ctx->fd;
	r.file = (__u64)file;
	r.f_flags = file->f_flags;
	if (!r.ino)
		r.ino = BPF_CORE_READ(file, f_inode, i_ino);
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}

/* Run once by the collector after load (BPF_PROG_TEST_RUN): kernel layout facts the API
 * object needs, resolved here by CO-RE. */
SEC("syscall")
int task_offsets(void *ctx)
{
	task_fsbase_off = bpf_core_field_offset(struct task_struct, thread.fsbase);
	return 0;
}
