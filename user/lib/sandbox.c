// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sandboxed helper processes (interface in sandbox.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "lib/sandbox.h"

#define HELPER_FD 3
#define NOBODY	  65534 /* no passwd lookup in a forked child of a threaded process */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

__u64 gctx_sandbox_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

#define ALLOW(nr)                                                                                  \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/*
 * What a helper may do: talk on its socket, manage its memory, read files it was given (and,
 * with read_files, open others read-only), and exit. Everything else fails with EPERM, so a
 * library call that tries more degrades instead of killing the helper.
 */
static int seccomp_allowlist(bool read_files)
{
	struct sock_filter common[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    ALLOW(SYS_read),
	    ALLOW(SYS_write),
	    ALLOW(SYS_recvmsg),
	    ALLOW(SYS_sendmsg),
	    ALLOW(SYS_recvfrom),
	    ALLOW(SYS_sendto),
	    ALLOW(SYS_poll),
	    ALLOW(SYS_ppoll),
	    ALLOW(SYS_pread64),
	    ALLOW(SYS_lseek),
	    ALLOW(SYS_fstat),
	    ALLOW(SYS_newfstatat),
	    ALLOW(SYS_statx),
	    ALLOW(SYS_close),
	    ALLOW(SYS_dup),
	    ALLOW(SYS_sysinfo),
	    ALLOW(SYS_brk),
	    ALLOW(SYS_mmap),
	    ALLOW(SYS_munmap),
	    ALLOW(SYS_mremap),
	    ALLOW(SYS_mprotect),
	    ALLOW(SYS_madvise),
	    ALLOW(SYS_futex),
	    ALLOW(SYS_getpid),
	    ALLOW(SYS_gettid),
	    ALLOW(SYS_getuid),
	    ALLOW(SYS_geteuid),
	    ALLOW(SYS_getgid),
	    ALLOW(SYS_getegid),
	    ALLOW(SYS_clock_gettime),
	    ALLOW(SYS_rt_sigreturn),
	    ALLOW(SYS_alarm),
	    ALLOW(SYS_rt_sigprocmask),
	    ALLOW(SYS_exit),
	    ALLOW(SYS_exit_group),
	    /* fcntl: descriptor flags and duplicates only (libelf checks each fd it is given) */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, 7),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_GETFD, 4, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETFD, 3, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_GETFL, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_DUPFD_CLOEXEC, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	};
	/* openat(dirfd, path, flags): read-only opens only */
	struct sock_filter files[] = {
	    ALLOW(SYS_access),
	    ALLOW(SYS_faccessat),
	    ALLOW(SYS_readlink),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 4),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
		     O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_filter deny = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	struct sock_filter
	    prog[sizeof(common) / sizeof(common[0]) + sizeof(files) / sizeof(files[0]) + 1];
	struct sock_fprog fp = {.filter = prog};
	size_t n = 0;

	memcpy(prog, common, sizeof(common));
	n += sizeof(common) / sizeof(common[0]);
	if (read_files) {
		memcpy(prog + n, files, sizeof(files));
		n += sizeof(files) / sizeof(files[0]);
	}
	prog[n++] = deny;
	fp.len = n;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0);
}

/* In the forked child, before any input is read. Exits on any failure. */
static void enter(int sock, const struct gctx_sandbox_opts *o, pid_t parent)
{
	struct rlimit none = {0, 0}, cpu = {o->cpu_s, o->cpu_s}, files = {o->nofile, o->nofile};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* No PR_SET_PDEATHSIG: it fires when the forking thread exits (the unwinding thread at
	 * the end of recording), not the process. An idle helper ends at EOF on its socket
	 * when gpuctx is gone; a busy one arms alarm() for each request (its default action
	 * ends it), so a helper blocked on a user's FIFO cannot outlive gpuctx by more. */
	if (getppid() != parent)
		_exit(1);
	setsid(); /* out of the terminal's process group: Ctrl-C is gpuctx's to handle */
	/* only the socket stays open: not the trace, BPF maps, links, the user's files */
	sock = fcntl(sock, F_DUPFD_CLOEXEC, 100);
	if (null < 0 || sock < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(sock, HELPER_FD) < 0 || close_range(HELPER_FD + 1, ~0U, 0) || chdir("/"))
		_exit(1);
	if (geteuid() != 0) {
		struct rlimit cur;

		if (!getrlimit(RLIMIT_NOFILE, &cur) && cur.rlim_max < files.rlim_max)
			files.rlim_cur = files.rlim_max = cur.rlim_max;
	}
	if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_FSIZE, &none) ||
	    setrlimit(RLIMIT_CORE, &none) || setrlimit(RLIMIT_NOFILE, &files))
		_exit(1);
#ifndef UNDER_SANITIZER
	if (o->mem_bytes) {
		struct rlimit as = {o->mem_bytes, o->mem_bytes};

		if (setrlimit(RLIMIT_AS, &as))
			_exit(1);
	}
#endif
	if (geteuid() == 0) {
		for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
		/* setresuid away from 0 clears every capability set */
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(1);
	}
	if (setrlimit(RLIMIT_NPROC, &none) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || geteuid() == 0 || getuid() == 0 ||
	    seccomp_allowlist(o->read_files))
		_exit(1);
}

int gctx_sandbox__start(struct gctx_sandbox *sb, const struct gctx_sandbox_opts *o,
			void (*fn)(int fd))
{
	pid_t parent = getpid();
	int sv[2];

	sb->pid = 0;
	sb->fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	sb->pid = fork();
	if (sb->pid < 0) {
		sb->pid = 0;
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (sb->pid == 0) {
		/* signals are ours to take: the parent's handlers mean nothing here */
		sigset_t all;

		sigfillset(&all);
		for (int s = 1; s < NSIG; s++)
			signal(s, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		enter(sv[1], o, parent);
		fn(HELPER_FD);
		_exit(0);
	}
	close(sv[1]);
	sb->fd = sv[0];
	return 0;
}

void gctx_sandbox__stop(struct gctx_sandbox *sb)
{
	if (sb->fd >= 0)
		close(sb->fd);
	sb->fd = -1;
	if (sb->pid > 0) {
		kill(sb->pid, SIGKILL);
		waitpid(sb->pid, NULL, 0);
	}
	sb->pid = 0;
}

static int wait_for(int sock, short ev, __u64 deadline_ms)
{
	struct pollfd p = {.fd = sock, .events = ev};

	for (;;) {
		__u64 now = gctx_sandbox_now_ms();
		int r;

		if (now >= deadline_ms)
			return -ETIMEDOUT;
		r = poll(&p, 1, deadline_ms - now > 60000 ? 60000 : (int)(deadline_ms - now));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

ssize_t gctx_sandbox_recv(int sock, void *buf, size_t len, int *fd, __u64 deadline_ms)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *h;
	ssize_t n;
	int err;

	if (fd) {
		*fd = -1;
		m.msg_control = c.b;
		m.msg_controllen = sizeof(c.b);
	}
	err = wait_for(sock, POLLIN, deadline_ms);
	if (err)
		return err;
	n = recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	for (h = fd ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
		    h->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(h), sizeof(int));
	if (n == 0)
		return -EPIPE;
	if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return n;
}

int gctx_sandbox_send(int sock, const void *hdr, size_t hlen, const void *body, size_t blen, int fd,
		      __u64 deadline_ms)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov[2] = {{.iov_base = (void *)hdr, .iov_len = hlen},
			       {.iov_base = (void *)body, .iov_len = blen}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = body && blen ? 2 : 1};
	int err;

	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		m.msg_control = c.b;
		m.msg_controllen = sizeof(c.b);
		c.h.cmsg_level = SOL_SOCKET;
		c.h.cmsg_type = SCM_RIGHTS;
		c.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&c.h), &fd, sizeof(int));
	}
	for (;;) {
		if (sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		err = wait_for(sock, POLLOUT, deadline_ms);
		if (err)
			return err;
	}
}
