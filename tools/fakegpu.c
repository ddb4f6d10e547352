// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu: an emulated GPU driver for tests, as a FUSE filesystem.
 *
 *   fakegpu [-v] MOUNTPOINT
 *
 * The mountpoint gets nvidiactl, nvidia0, nvidia-uvm, kfd and renderD128: regular files that
 * can be opened, read (zeros), written (discarded) and mmap()ed, and whose ioctls answer the way
 * the real NVIDIA RM/UVM, AMD KFD and amdgpu drivers do on the points the tracer cares about
 * (shared/reference/gpu-facts.md):
 *  - RM: the syscall returns 0 and the verdict is the status field in the parameters; RM
 *    clients belong to the nvidiactl open file that created them, so a forked child using the
 *    inherited fd is accepted and a fresh open of nvidiactl is not.
 *  - UVM: raw command numbers, parameters read and written in the caller's memory; nothing
 *    but "is this fd initialised" is checked, so a forked child is accepted.
 *  - KFD: every ioctl from a process other than the opener fails with EBADF (after the
 *    ioctl-number range check, as in kfd_ioctl()); threads of the opener are fine.
 *  - amdgpu render node: no ownership check.
 * Stays in the foreground; SIGTERM or SIGINT unmounts and exits 0. -v logs each ioctl.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define FUSE_USE_VERSION 31
#define GPU_UAPI_NO_HELPERS

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fakegpu.h"
#include "gpu_uapi.h"

#define DEV_FILE_SIZE (1 << 20)
#define DEV_INO(kind) (2 + (kind)) /* fixed (use_ino), the root is 1 */

static const char *const dev_names[DEV_NR] = {
    [DEV_NVIDIACTL] = "nvidiactl", [DEV_NVIDIA0] = "nvidia0",
    [DEV_UVM] = "nvidia-uvm",	   [DEV_KFD] = "kfd",
    [DEV_RENDER] = "renderD128",
};

bool fg_verbose;

pthread_mutex_t fg_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	char mnt[PATH_MAX];
	time_t start;
	pid_t parent; /* dies with it: PR_SET_PDEATHSIG */
} G;

/* ---- small helpers ---- */

/* KFD and render-node mmap offsets must fall inside the file; the others get 1 MiB. */
static off_t dev_size(enum dev_kind kind)
{
	off_t size = amd_file_size(kind);

	return size ? size : DEV_FILE_SIZE;
}

static int dev_lookup(const char *path)
{
	int i;

	if (path[0] != '/')
		return -1;
	for (i = 0; i < DEV_NR; i++)
		if (!strcmp(path + 1, dev_names[i]))
			return i;
	return -1;
}

/* The thread group of a thread id: fuse_get_context()->pid is the calling thread. */
static pid_t tid_to_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? tgid : tid;
}

/* The device of our mount, from mountinfo: a stat or statfs of a file of ours would be a
 * request to ourselves. */
static dev_t mnt_dev;

static void find_mnt_dev(void)
{
	char line[PATH_MAX + 256], mp[PATH_MAX];
	unsigned int maj, min;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mp) == 3 &&
		    !strcmp(mp, G.mnt))
			mnt_dev = makedev(maj, min); /* the last: a mount over an older one */
	if (f)
		fclose(f);
}

/* Does fd number @fd of thread @tid refer to our file @kind? (fds are per process) By inode
 * and device, not by path: a test may bind our file over /dev/kfd in its own namespace. The
 * attributes the kernel has cached, never a request to ourselves: a handler waiting for a free
 * worker of its own filesystem deadlocks once every worker does the same (270 callers). */
bool caller_fd_is(pid_t tid, int fd, enum dev_kind kind)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct statx stx;
	char link[64];

	pthread_once(&once, find_mnt_dev);
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, fd);
	if (statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_INO, &stx))
		return false;
	return mnt_dev && stx.stx_ino == DEV_INO(kind) &&
	       makedev(stx.stx_dev_major, stx.stx_dev_minor) == mnt_dev;
}

int remote_read(pid_t tid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(unsigned long)addr, .iov_len = len};

	if (!len)
		return 0;
	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

int remote_write(pid_t tid, __u64 addr, const void *buf, size_t len)
{
	struct iovec local = {.iov_base = (void *)buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(unsigned long)addr, .iov_len = len};

	if (!len)
		return 0;
	return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

bool ids_has(const struct id_set *s, __u64 id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == id)
			return true;
	return false;
}

int ids_add(struct id_set *s, __u64 id)
{
	__u64 *v;

	if (s->n == s->cap) {
		v = realloc(s->v, (s->cap ? s->cap * 2 : 16) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = s->cap ? s->cap * 2 : 16;
	}
	s->v[s->n++] = id;
	return 0;
}

bool ids_del(struct id_set *s, __u64 id)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->v[i] == id) {
			s->v[i] = s->v[--s->n];
			return true;
		}
	}
	return false;
}

void ids_free(struct id_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* ---- ioctl entry ---- */

/*
 * Parameters of an _IOC-encoded command. FUSE copies _IOC_SIZE bytes in when the command has
 * _IOC_WRITE and out when it has _IOC_READ; the drivers copy whatever they need, so the other
 * directions go through the caller's memory. The local buffer is at least @min bytes and
 * zero-extended, like kfd_ioctl() does for short user structs.
 */
struct ioc_param {
	pid_t tid;
	void *uarg;
	void *data;
	unsigned int dir;
	size_t usize;
	void *buf;
};

static int param_load(struct ioc_param *p, size_t min)
{
	int ret = 0;

	p->buf = calloc(1, p->usize > min ? p->usize : min);
	if (!p->buf)
		return -ENOMEM;
	if (p->dir & _IOC_WRITE)
		memcpy(p->buf, p->data, p->usize);
	else
		ret = remote_read(p->tid, (unsigned long)p->uarg, p->buf, p->usize);
	if (ret)
		free(p->buf);
	return ret;
}

/* FUSE copies nothing back when the call fails, so neither do we. */
static int param_store(struct ioc_param *p, int ret)
{
	if (ret >= 0) {
		if (p->dir & _IOC_READ)
			memcpy(p->data, p->buf, p->usize);
		else
			ret = remote_write(p->tid, (unsigned long)p->uarg, p->buf, p->usize);
	}
	free(p->buf);
	return ret;
}

static int expected_type(enum dev_kind kind)
{
	switch (kind) {
	case DEV_NVIDIACTL:
	case DEV_NVIDIA0:
		return NV_IOCTL_MAGIC;
	case DEV_KFD:
		return KFD_IOCTL_MAGIC;
	case DEV_RENDER:
		return DRM_IOCTL_BASE;
	default:
		return -1;
	}
}

static int ioc_dispatch(struct gfile *f, struct call *cl, unsigned int cmd, void *buf, size_t size)
{
	switch (f->kind) {
	case DEV_NVIDIACTL:
	case DEV_NVIDIA0:
		return nv_ioctl(f, cl, _IOC_NR(cmd), buf, size);
	case DEV_KFD:
		return kfd_ioctl(f, cl, _IOC_NR(cmd), buf, size);
	case DEV_RENDER:
		return render_ioctl(f, cl, _IOC_NR(cmd), buf, size);
	default:
		return -ENOTTY;
	}
}

static int ioc_ioctl(struct gfile *f, struct call *cl, unsigned int cmd, void *uarg, void *data)
{
	struct ioc_param p = {
	    .tid = cl->tid,
	    .uarg = uarg,
	    .data = data,
	    .dir = _IOC_DIR(cmd),
	    .usize = _IOC_SIZE(cmd),
	};
	int ret;

	if ((int)_IOC_TYPE(cmd) != expected_type(f->kind))
		return -ENOTTY;
	if (f->kind == DEV_NVIDIACTL || f->kind == DEV_NVIDIA0) {
		if (!nv_size_ok(_IOC_NR(cmd), p.usize))
			return -EINVAL; /* before touching user memory, like nv_validate_ioctls */
	}
	ret = param_load(&p, 128);
	if (ret)
		return ret;
	ret = ioc_dispatch(f, cl, cmd, p.buf, p.usize);
	return param_store(&p, ret);
}

static void log_ioctl(struct gfile *f, struct call *cl, unsigned int cmd, int ret)
{
	if (!fg_verbose)
		return;
	fprintf(stderr, "fakegpu: tgid %d tid %d %s ioctl 0x%08x (type 0x%02x nr 0x%02x size %u)",
		(int)cl->tgid, (int)cl->tid, dev_names[f->kind], cmd, _IOC_TYPE(cmd), _IOC_NR(cmd),
		_IOC_SIZE(cmd));
	if (cl->ctrl_cmd)
		fprintf(stderr, " ctrl 0x%08x", cl->ctrl_cmd);
	if (cl->rm_class)
		fprintf(stderr, " class 0x%x", cl->rm_class);
	if (cl->status >= 0)
		fprintf(stderr, " status %s", nv_status_name((__u32)cl->status));
	if (f->kind == DEV_UVM && f->uvm == UVM_FD_VA_SPACE)
		fprintf(stderr, " (va space of tgid %d)", (int)f->uvm_tgid);
	fprintf(stderr, " -> %d%s%s\n", ret, ret ? " " : "", ret ? strerror(-ret) : "");
}

static int fg_ioctl(const char *path, int cmd_in, void *arg, struct fuse_file_info *fi,
		    unsigned int flags, void *data)
{
	struct gfile *f = (struct gfile *)(unsigned long)fi->fh;
	unsigned int cmd = (unsigned int)cmd_in;
	struct call cl = {.tid = fuse_get_context()->pid, .status = -1};
	int ret;

	(void)path;
	(void)flags;
	cl.tgid = tid_to_tgid(cl.tid);
	pthread_mutex_lock(&fg_lock);
	if (f->kind == DEV_UVM)
		ret = uvm_ioctl(f, &cl, cmd, arg);
	else
		ret = ioc_ioctl(f, &cl, cmd, arg, data);
	log_ioctl(f, &cl, cmd, ret);
	pthread_mutex_unlock(&fg_lock);
	return ret;
}

/* ---- filesystem ---- */

static int fg_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int kind = dev_lookup(path);

	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_mtime = st->st_atime = st->st_ctime = G.start;
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		st->st_ino = 1;
		return 0;
	}
	if (kind < 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0666;
	st->st_nlink = 1;
	st->st_size = dev_size(kind);
	st->st_ino = DEV_INO(kind);
	return 0;
}

static int fg_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	int i;

	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (i = 0; i < DEV_NR; i++)
		fill(buf, dev_names[i], NULL, 0, 0);
	return 0;
}

static int fg_open(const char *path, struct fuse_file_info *fi)
{
	int kind = dev_lookup(path);
	struct gfile *f;

	if (kind < 0)
		return -ENOENT;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->kind = kind;
	f->tgid = tid_to_tgid(fuse_get_context()->pid);
	if (amd_open(f)) {
		free(f);
		return -ENOMEM;
	}
	fi->fh = (unsigned long)f;
	fi->direct_io = 0;
	fi->keep_cache = 1;
	if (fg_verbose)
		fprintf(stderr, "fakegpu: tgid %d opened %s\n", (int)f->tgid, dev_names[kind]);
	return 0;
}

/* The last reference to the open file is gone: like nvidia_close, free what it owned. */
static int fg_release(const char *path, struct fuse_file_info *fi)
{
	struct gfile *f = (struct gfile *)(unsigned long)fi->fh;

	(void)path;
	pthread_mutex_lock(&fg_lock);
	nv_release(f);
	pthread_mutex_unlock(&fg_lock);
	amd_release(f);
	free(f);
	return 0;
}

static int fg_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct gfile *f = (struct gfile *)(unsigned long)fi->fh;
	off_t end = dev_size(f->kind);

	(void)path;
	if (off >= end)
		return 0;
	if (size > (size_t)(end - off))
		size = end - off;
	memset(buf, 0, size);
	return size;
}

static int fg_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)path;
	(void)buf;
	(void)off;
	(void)fi;
	return size;
}

static int fg_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)size;
	(void)fi;
	return dev_lookup(path) < 0 ? -ENOENT : 0;
}

static void *fg_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->kernel_cache = 1;
	cfg->direct_io = 0;
	cfg->use_ino = 1;
	/* a signal to the caller interrupts its request (fuse_interrupted()): a KFD event wait
	 * ends; libfuse pokes the serving thread with SIGUSR1 (serve() handles it) */
	cfg->intr = 1;
	cfg->entry_timeout = 3600;
	cfg->attr_timeout = 3600;
	return NULL;
}

static const struct fuse_operations fg_ops = {
    .init = fg_init,
    .getattr = fg_getattr,
    .readdir = fg_readdir,
    .open = fg_open,
    .release = fg_release,
    .read = fg_read,
    .write = fg_write,
    .truncate = fg_truncate,
    .ioctl = fg_ioctl,
};

/* ---- main ---- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fakegpu [-v] [-n VERSION] MOUNTPOINT\n"
		"       fakegpu -t DIR\n"
		"Mount an emulated GPU driver (nvidiactl, nvidia0, nvidia-uvm, kfd,\n"
		"renderD128) on MOUNTPOINT; runs until SIGTERM or SIGINT.\n"
		"  -v          log each ioctl to stderr\n"
		"  -n VERSION  the NVIDIA driver version the RM reports (default %s)\n"
		"  -t DIR      write the KFD topology of the emulated AMD GPU (what\n"
		"              /sys/devices/virtual/kfd/kfd/topology holds) into DIR, and exit\n",
		fg_nv_version);
}

static int check_mountpoint(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		fprintf(stderr, "fakegpu: mountpoint %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fakegpu: mountpoint %s: not a directory\n", dir);
		return -1;
	}
	if (!realpath(dir, G.mnt)) {
		fprintf(stderr, "fakegpu: mountpoint %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void on_intr(int sig)
{
	(void)sig;
}

static int serve(void)
{
	char *fargv[] = {"fakegpu", "-o",
			 geteuid() ? "fsname=fakegpu,subtype=fakegpu"
				   : "fsname=fakegpu,subtype=fakegpu,allow_other",
			 NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	struct fuse *fuse;
	int ret = 1;

	fuse = fuse_new(&args, &fg_ops, sizeof(fg_ops), NULL);
	if (!fuse) {
		fprintf(stderr, "fakegpu: cannot create the FUSE filesystem\n");
		return 1;
	}
	if (fuse_mount(fuse, G.mnt)) {
		fprintf(stderr, "fakegpu: cannot mount on %s\n", G.mnt);
		goto out_destroy;
	}
	se = fuse_get_session(fuse);
	/*
	 * libfuse only hooks signals left at SIG_DFL, and a shell starts background jobs with
	 * SIGINT ignored: reset them so SIGINT and SIGTERM always unmount.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGUSR1, on_intr);
	if (fuse_set_signal_handlers(se)) {
		fprintf(stderr, "fakegpu: cannot install signal handlers\n");
		goto out_unmount;
	}
	/* a fixture never outlives its parent (a test or the demo killed with SIGKILL): its
	 * death is a SIGTERM here, which unmounts */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != G.parent)
		raise(SIGTERM);
	/* A signal ends the loop through fuse_session_exit(); that is the normal way out. */
	ret = fuse_loop_mt(fuse, 0) < 0 ? 1 : 0;
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
	fuse_opt_free_args(&args);
	return ret;
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "vn:ht:")) != -1) {
		switch (opt) {
		case 't':
			return kfd_topology_write(optarg) ? 1 : 0;
		case 'v':
			fg_verbose = true;
			break;
		case 'n':
			fg_nv_version = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (check_mountpoint(argv[optind]))
		return 1;
	G.start = time(NULL);
	G.parent = getppid();
	return serve();
}
