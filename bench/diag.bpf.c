// SPDX-License-Identifier: GPL-2.0
/*
 * Diagnostic programs for the overhead benchmark. None of this is gpuctx: each one isolates a
 * piece of what gpuctx's programs do, so RESULTS.md can say where the time goes.
 *
 *  - filter_core_enter: gpuctx's ioctl entry filter as its first version wrote it
 *    (followed-map lookup, then task->files->fdt->fd[fd]->f_inode and the inode fields
 *    through a chain of BPF_CORE_READ probe reads, then the registered-device lookup).
 *  - filter_typed_enter: the same filter with typed BTF loads (bpf_get_current_task_btf and
 *    bpf_rdonly_cast), one probe read left for fds[fd], as bpf/gpuctx.bpf.c does now.
 *  - filter_cmd_enter: the typed filter behind a cheap test of the ioctl command type first.
 *  - filter_exit: the exit program's per-task stash lookup, which gpuctx does for every ioctl.
 *  - filter_fast_enter/_exit: the command-type test and typed filter; a GPU ioctl marks its
 *    task's stash and counts itself in a global in-flight counter, and the exit program looks
 *    the stash up only while that counter is non-zero.
 *  None of the filters emits an event.
 *  - api_entry / api_return: an API probe pair as a tracer of a user library would write it:
 *    the entry stashes a timestamp per thread, the return emits a 64-byte ring-buffer event
 *    without wakeup (the loader polls every 10 ms).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "../bpf/tpctx.bpf.h" /* the syscalls:* records as their format files lay them out */
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define S_IFMT	 00170000
#define S_IFCHR	 0020000
#define NV_MAJOR 195

extern void *bpf_rdonly_cast(void *obj, __u32 btf_id) __ksym;

const volatile __u32 nr_regdevs = 0;

struct regdev_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} followed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct regdev_key);
	__type(value, __u32);
} regdevs SEC(".maps");

/* tid -> entry timestamp (api probes). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} stash SEC(".maps");

/* Per-task in-flight marker of the ioctl filters, as gpuctx's ioctl_stash. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} task_stash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

__u64 hits = 0;	    /* ioctls classified as GPU */
__u64 inflight = 0; /* GPU ioctls between their entry and exit (filter_fast) */
__u64 drops = 0;    /* api events lost */

struct api_event {
	__u32 tid;
	__u32 tgid;
	__u64 ts_ns;
	__u64 dur_ns;
	__u64 ret;
	char comm[16];
	__u64 pad[2];
};

static __always_inline bool followed_tgid(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return bpf_map_lookup_elem(&followed, &tgid) != NULL;
}

/* As gpuctx's classify_inode(), probe reads. */
static __always_inline __u32 classify_core(struct inode *inode)
{
	__u16 mode = BPF_CORE_READ(inode, i_mode);

	if ((mode & S_IFMT) == S_IFCHR && (BPF_CORE_READ(inode, i_rdev) >> 20) == NV_MAJOR)
		return 1;
	if (nr_regdevs) {
		struct regdev_key key = {};

		key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(inode, i_ino);
		if (bpf_map_lookup_elem(&regdevs, &key))
			return 1;
	}
	return 0;
}

SEC("tp/syscalls/sys_enter_ioctl")
int filter_core_enter(struct gctx_tp_enter_ioctl *ctx)
{
	struct task_struct *task;
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = NULL;
	struct inode *inode;
	__s32 fd = ctx->fd;

	if (!followed_tgid() || fd < 0)
		return 0;
	task = bpf_get_current_task_btf();
	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || (__u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f)
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if (inode && classify_core(inode))
		__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* As classify_core(), typed loads. */
static __always_inline __u32 classify_typed(struct inode *inode)
{
	if ((inode->i_mode & S_IFMT) == S_IFCHR && (inode->i_rdev >> 20) == NV_MAJOR)
		return 1;
	if (nr_regdevs) {
		struct regdev_key key = {};

		key.dev = inode->i_sb->s_dev;
		key.ino = inode->i_ino;
		if (bpf_map_lookup_elem(&regdevs, &key))
			return 1;
	}
	return 0;
}

static __always_inline bool filter_typed(__s32 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = NULL;
	struct inode *inode;

	if (fd < 0)
		return false;
	fdt = task->files->fdt;
	if (!fdt || (__u32)fd >= fdt->max_fds)
		return false;
	fds = fdt->fd;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f)
		return false;
	f = bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
	inode = f->f_inode;
	if (!inode || !classify_typed(inode))
		return false;
	__sync_fetch_and_add(&hits, 1);
	return true;
}

static __always_inline bool gpu_cmd_type(__u32 cmd)
{
	__u32 type = (cmd >> 8) & 0xff;

	/* NVIDIA RM 'F', KFD 'K', DRM 'd'; UVM's raw numbers have type 0. */
	return type == 'F' || type == 'K' || type == 'd' || type == 0;
}

SEC("tp/syscalls/sys_enter_ioctl")
int filter_typed_enter(struct gctx_tp_enter_ioctl *ctx)
{
	if (followed_tgid())
		filter_typed(ctx->fd);
	return 0;
}

SEC("tp/syscalls/sys_enter_ioctl")
int filter_cmd_enter(struct gctx_tp_enter_ioctl *ctx)
{
	if (gpu_cmd_type(ctx->cmd) && followed_tgid())
		filter_typed(ctx->fd);
	return 0;
}

SEC("tp/syscalls/sys_enter_ioctl")
int filter_fast_enter(struct gctx_tp_enter_ioctl *ctx)
{
	__u64 *v;

	if (!gpu_cmd_type(ctx->cmd) || !followed_tgid() || !filter_typed(ctx->fd))
		return 0;
	v = bpf_task_storage_get(&task_stash, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (v && !*v) {
		*v = 1;
		__sync_fetch_and_add(&inflight, 1);
	}
	return 0;
}

SEC("tp/syscalls/sys_exit_ioctl")
int filter_fast_exit(struct gctx_tp_sys_exit *ctx)
{
	__u64 *v;

	if (!inflight)
		return 0; /* no GPU ioctl in flight anywhere: nothing to pair */
	v = bpf_task_storage_get(&task_stash, bpf_get_current_task_btf(), 0, 0);
	if (v && *v) {
		*v = 0;
		__sync_fetch_and_sub(&inflight, 1);
	}
	return 0;
}

/* gpuctx's ioctl exit program looks its per-task stash up for every ioctl of every process. */
SEC("tp/syscalls/sys_exit_ioctl")
int filter_exit(struct gctx_tp_sys_exit *ctx)
{
	__u64 *v = bpf_task_storage_get(&task_stash, bpf_get_current_task_btf(), 0, 0);

	if (v && *v)
		*v = 0;
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(api_entry)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&stash, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(api_return, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct api_event *e;
	__u64 *ts = bpf_map_lookup_elem(&stash, &tid);

	if (!ts)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		e->tid = tid;
		e->tgid = id >> 32;
		e->ts_ns = *ts;
		e->dur_ns = bpf_ktime_get_ns() - *ts;
		e->ret = ret;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	} else {
		__sync_fetch_and_add(&drops, 1);
	}
	bpf_map_delete_elem(&stash, &tid);
	return 0;
}
