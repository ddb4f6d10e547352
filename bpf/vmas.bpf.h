/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The executable file mappings of the current process, sent with each stack (GCTX_EV_VMAS,
 * include/gpuctx_stack.h): a process that exits (or crashes) before the collector reads its
 * /proc/PID/maps still gets its native frames. Only at the rare stack events.
 *
 * The VMAs come from the open-coded task VMA iterator (kfuncs, kernel 6.7+; it takes the mmap
 * lock with a trylock, so it never waits). Each path is built from the dentry chain, crossing
 * mount points, up to the process's root: the path /proc/PID/maps shows. Include from
 * stack.bpf.h.
 */
#ifndef __GPUCTX_VMAS_BPF_H
#define __GPUCTX_VMAS_BPF_H

#define VM_READ	    0x1
#define VM_WRITE    0x2
#define VM_EXEC	    0x4
#define VM_MAYSHARE 0x80

#define VMAS_VISIT_MAX 65536 /* VMAs looked at per stack (the default vm.max_map_count) */
#define VMA_ENTRY_MAX  (sizeof(struct gctx_vma) + GCTX_VMA_PATH_MAX)
#define VMAS_DATA_MASK (GCTX_VMAS_BYTES - 1)

/* libbpf 1.1 has no bpf_experimental.h: the iterator's kfuncs, declared here. */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

__u64 vmas_lost = 0; /* mapping sets not (fully) sent: ring buffer full or mmap lock busy */

struct vmas_scratch {
	struct gctx_ev_vmas r;
	__u8 slack[2 * GCTX_VMA_PATH_MAX + 64]; /* masked offsets plus a write stay inside */
	__u64 root_dentry, root_mnt;		/* the process's root */
	__u32 total, visited;
	__u32 plen; /* bytes of the path being built: kept here, not in struct path_walk, so
		     * that the verifier checks path_step once, not once per length it can tell */
	bool lost;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vmas_scratch);
} vmas_scratch SEC(".maps");

struct path_walk {
	struct vmas_scratch *s;
	__u64 dentry, vfsmnt;
	__u32 base; /* offset of the path in data */
	bool done;  /* reached the root */
};

/* One step up: a mount point crossed, or one component written. */
static long path_step(__u32 i, struct path_walk *w)
{
	struct dentry *d = (struct dentry *)w->dentry, *parent;
	struct vfsmount *vm = (struct vfsmount *)w->vfsmnt;
	struct mount *mnt = (struct mount *)(w->vfsmnt - bpf_core_field_offset(struct mount, mnt));
	struct mount *up;
	const unsigned char *name;
	__u32 nlen, room, off, len = w->s->plen;
	long n;

	if (w->dentry == w->s->root_dentry && w->vfsmnt == w->s->root_mnt) {
		w->done = true;
		return 1;
	}
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt) { /* the root of its mount namespace */
			w->done = true;
			return 1;
		}
		w->dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		w->vfsmnt = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d) { /* a detached tree's root */
		w->done = true;
		return 1;
	}
	nlen = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	room = GCTX_VMA_PATH_MAX - (len & (GCTX_VMA_PATH_MAX - 1));
	if (len >= GCTX_VMA_PATH_MAX || nlen + 1 > room)
		return 1; /* too long: cut */
	off = (w->base & VMAS_DATA_MASK) + (len & (GCTX_VMA_PATH_MAX - 1));
	n = bpf_probe_read_kernel_str(w->s->r.data + off, room, name);
	if (n <= 0)
		return 1;
	w->s->plen = len + n;
	w->dentry = (__u64)parent;
	return 0;
}

/* Append one mapping to the record; its path innermost component first. */
static __noinline void vma_add(struct vmas_scratch *s, struct vm_area_struct *vma)
{
	__u32 off = s->r.len & VMAS_DATA_MASK & ~7u;
	struct gctx_vma *v = (struct gctx_vma *)(s->r.data + off);
	struct file *f = vma->vm_file;
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	__u64 fl = vma->vm_flags;
	__u32 len;
	struct path_walk w = {
	    .s = s,
	    .dentry = (__u64)BPF_CORE_READ(f, f_path.dentry),
	    .vfsmnt = (__u64)BPF_CORE_READ(f, f_path.mnt),
	    .base = off + sizeof(*v),
	};

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = (__u64)vma->vm_pgoff << 12;
	v->ino = BPF_CORE_READ(inode, i_ino);
	v->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	v->flags = (fl & VM_READ ? GCTX_VMA_READ : 0) | (fl & VM_WRITE ? GCTX_VMA_WRITE : 0) |
		   (fl & VM_MAYSHARE ? GCTX_VMA_SHARED : 0);
	v->pad = 0;
	s->plen = 0;
	bpf_loop(GCTX_VMA_STEPS, path_step, &w, 0);
	if (!w.done)
		v->flags |= GCTX_VMA_PATH_CUT;
	len = s->plen;
	v->path_len = len;
	s->r.len = off + sizeof(*v) + ((len + 7) & ~7u);
	s->r.n++;
	s->total++;
}

/* Output the record (hdr..len and len bytes of data) and start the next one of the set. */
static __noinline void vmas_flush(struct vmas_scratch *s, __u64 wake)
{
	__u32 len = GCTX_EV_VMAS_HDR_LEN + (s->r.len & VMAS_DATA_MASK);

	if (s->r.len > GCTX_VMAS_BYTES || len > sizeof(s->r) ||
	    bpf_ringbuf_output(&events, &s->r, len, wake))
		s->lost = true;
	s->r.seq++;
	s->r.n = 0;
	s->r.len = 0;
}

/* Send the current process's executable file mappings. 0 when they could not all be sent
 * (the stack is flagged: the collector falls back to /proc). */
__noinline int vmas_emit(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct vmas_scratch *s;
	__u32 zero = 0;
	bool ok;

	s = bpf_map_lookup_elem(&vmas_scratch, &zero);
	if (!s)
		return false;
	fill_hdr(&s->r.hdr, GCTX_EV_VMAS);
	s->r.seq = 0;
	s->r.flags = 0;
	s->r.n = 0;
	s->r.len = 0;
	s->total = 0;
	s->visited = 0;
	s->lost = false;
	s->root_dentry = (__u64)BPF_CORE_READ(task, fs, root.dentry);
	s->root_mnt = (__u64)BPF_CORE_READ(task, fs, root.mnt);
	if (bpf_iter_task_vma_new(&it, task, 0))
		s->r.flags |= GCTX_VMAS_BUSY;
	while ((vma = bpf_iter_task_vma_next(&it))) {
		if (++s->visited > VMAS_VISIT_MAX) {
			s->r.flags |= GCTX_VMAS_CUT;
			break;
		}
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		if (s->total >= GCTX_VMAS_MAX) {
			s->r.flags |= GCTX_VMAS_CUT;
			break;
		}
		if (s->r.len > GCTX_VMAS_BYTES - VMA_ENTRY_MAX)
			vmas_flush(s, 0);
		vma_add(s, vma);
	}
	bpf_iter_task_vma_destroy(&it);
	s->r.flags |= GCTX_VMAS_LAST;
	vmas_flush(s, 0);
	ok = !s->lost && !(s->r.flags & GCTX_VMAS_BUSY);
	if (!ok)
		__sync_fetch_and_add(&vmas_lost, 1);
	return ok;
}

#endif /* __GPUCTX_VMAS_BPF_H */
