/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fakegpu: what the emulated driver's files share (tools/fakegpu.c: the FUSE filesystem;
 * tools/fakegpu_kfd.c: AMD KFD, the amdgpu render node, the KFD topology; tools/fakegpu_rm.c: the
 * NVIDIA RM escapes and objects; tools/fakegpu_rmctrl.c: the RM control commands;
 * tools/fakegpu_uvm.c: NVIDIA UVM). A test fixture, never shipped.
 */
#ifndef __FAKEGPU_H
#define __FAKEGPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

enum dev_kind { DEV_NVIDIACTL, DEV_NVIDIA0, DEV_UVM, DEV_KFD, DEV_RENDER, DEV_NR };

/* A growable set of 64-bit ids: KFD queues and memory handles, amdgpu contexts. */
struct id_set {
	__u64 *v;
	size_t n, cap;
};

enum uvm_fd_state { UVM_FD_UNINITIALIZED, UVM_FD_VA_SPACE, UVM_FD_MM };

struct amd_file;

/* One open file description (fi->fh): shared by dup(), fork() and SCM_RIGHTS, like the real. */
struct gfile {
	enum dev_kind kind;
	pid_t tgid;	       /* the opener */
	bool ctl_linked;       /* nvidiaN: REGISTER_FD done */
	__u32 attached_gpus;   /* nvidiactl: ATTACH_GPUS_TO_FD entries (once per fd) */
	enum uvm_fd_state uvm; /* nvidia-uvm */
	__u64 uvm_flags;
	pid_t uvm_tgid;	      /* who issued UVM_INITIALIZE */
	struct amd_file *amd; /* kfd, renderD128: fakegpu_kfd.c */
};

/* What one ioctl call is about; status is the driver status written back, or -1. */
struct call {
	pid_t tid;
	pid_t tgid;
	long status;
	__u32 ctrl_cmd; /* RM_CONTROL: the control command, for the log */
	__u32 rm_class; /* RM_ALLOC: the class, for the log */
};

/* fakegpu.c */
extern bool fg_verbose;
extern pthread_mutex_t fg_lock; /* held around every ioctl; a KFD event wait sleeps on it */
bool ids_has(const struct id_set *s, __u64 id);
int ids_add(struct id_set *s, __u64 id);
bool ids_del(struct id_set *s, __u64 id);
void ids_free(struct id_set *s);
int remote_read(pid_t tid, __u64 addr, void *buf, size_t len);
int remote_write(pid_t tid, __u64 addr, const void *buf, size_t len);
bool caller_fd_is(pid_t tid, int fd, enum dev_kind kind);

/* One RM_CONTROL, its parameters read from the caller (p, size bytes). */
struct rm_ctrl {
	pid_t tid; /* the caller, for parameters that hold pointers */
	struct gfile *f;
	__u32 client;
	__u32 object;
	__u32 cls; /* the class of object: NV01_ROOT_CLIENT, NV01_DEVICE_0, ... */
	__u32 cmd;
	void *p;
	__u32 size;
};

#define RM_CTRL_MAX_PARAMS (64 << 10)

/* fakegpu_rmctrl.c: the answer to one control command; NV_ERR_NOT_SUPPORTED when unknown */
__u32 rm_ctrl(struct rm_ctrl *x);
extern const char *fg_nv_version; /* the driver version it reports: libcuda's own */

/* fakegpu_rm.c: called with the driver lock held */
bool nv_size_ok(unsigned int nr, size_t size);
int nv_ioctl(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size);
void nv_release(struct gfile *f);
__u32 rm_object_class(__u32 client, __u32 handle);

/* fakegpu_uvm.c: called with the driver lock held */
int uvm_ioctl(struct gfile *f, struct call *cl, unsigned int cmd, void *uarg);

/* fakegpu_kfd.c: AMD KFD and the amdgpu render node, called with fg_lock held */
int amd_open(struct gfile *f);
void amd_release(struct gfile *f);
int kfd_ioctl(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size);
int render_ioctl(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size);
int kfd_topology_write(const char *dir);
/* The size of the file: KFD and render-node mmap offsets must fall inside it; 0 for others. */
off_t amd_file_size(enum dev_kind kind);

#endif /* __FAKEGPU_H */
