// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_exec_fds DIR MODE: opens nvidiactl WITHOUT O_CLOEXEC and allocates a client, as libcuda
 * does, changes the fd's state by MODE, then forks a child that execs /bin/true (MODE child:
 * the child changes it before its exec). Whether the fd survives the exec is the kernel's
 * doing, not the open flags':
 *   setfd       fcntl(F_SETFD, FD_CLOEXEC) after the open (libcuda): not kept
 *   closerange  the child calls close_range(3, ~0U, 0) before exec (CPython): not kept
 *   rangecloexec  the child calls close_range(3, ~0U, CLOSE_RANGE_CLOEXEC): not kept
 *   dup2        fcntl(F_SETFD, FD_CLOEXEC), then dup2 onto fd 9: fd 9 kept
 *   dupfdcloexec  the only copy left is fcntl(F_DUPFD_CLOEXEC), used once: not kept
 *   fioclex     ioctl(FIOCLEX): not kept
 *   leak        nothing: fd kept
 * The child checks /proc/self/fd after exec through the shell: "kept N".
 * MODE fork-*: the child does not exec; what it inherits is the kernel's too:
 *   fork-closerange  the parent closes its fds with close_range(3, ~0U, 0) before the fork:
 *                    the child inherits no GPU state
 *   fork-dup2over    the parent dup2s /dev/null over the nvidiactl fd: likewise
 *   fork-dupuse      the parent's only copy left is fcntl(F_DUPFD, 10) (fd 3 closed); the
 *                    child uses it: an inherited use of the parent's file
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "gpu_uapi.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static void set_cloexec(int fd)
{
	if (fcntl(fd, F_SETFD, FD_CLOEXEC))
		wl_fail("fcntl(%d, F_SETFD, FD_CLOEXEC): %s", fd, strerror(errno));
	wl_say("fcntl(%d, F_SETFD, FD_CLOEXEC)", fd);
}

static void close_range_or_fail(unsigned int flags)
{
	if (syscall(SYS_close_range, 3U, ~0U, flags))
		wl_fail("close_range(3, ~0U, 0x%x): %s", flags, strerror(errno));
	wl_say("child: close_range(3, ~0U, 0x%x)", flags);
}

/* nvidiactl fds this process has open */
static int gpu_fds(void)
{
	char path[64], link[256];
	int n = 0;

	for (int i = 0; i < 256; i++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", i);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		n += strstr(link, "nvidiactl") != NULL;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *dir, *mode = argc >= 3 ? argv[2] : "";
	__u32 client;
	int ctl, fd;
	pid_t pid;

	dir = wl_dir_arg(argc, argv);
	ctl = wl_open(dir, "nvidiactl", O_RDWR);
	nv_check_version(ctl);
	client = nv_alloc_client(ctl);
	fd = ctl;
	if (!strcmp(mode, "setfd")) {
		set_cloexec(ctl);
	} else if (!strcmp(mode, "dup2")) {
		set_cloexec(ctl);
		if (dup2(ctl, 9) != 9)
			wl_fail("dup2(%d, 9): %s", ctl, strerror(errno));
		wl_say("dup2(%d, 9)", ctl);
	} else if (!strcmp(mode, "dupfdcloexec")) {
		fd = fcntl(ctl, F_DUPFD_CLOEXEC, 10);
		if (fd < 0)
			wl_fail("fcntl(F_DUPFD_CLOEXEC): %s", strerror(errno));
		wl_say("fcntl(%d, F_DUPFD_CLOEXEC, 10) -> %d; close(%d)", ctl, fd, ctl);
		close(ctl);
		nv_check_version(fd); /* the copy is the process's GPU file now */
	} else if (!strcmp(mode, "fioclex")) {
		if (ioctl(ctl, FIOCLEX))
			wl_fail("ioctl(FIOCLEX): %s", strerror(errno));
		wl_say("ioctl(%d, FIOCLEX)", ctl);
	} else if (!strcmp(mode, "fork-closerange")) {
		nv_expect_ok(nv_rm_free(ctl, client, 0, client), "RM_FREE client");
		if (syscall(SYS_close_range, 3U, ~0U, 0U))
			wl_fail("close_range(3, ~0U, 0): %s", strerror(errno));
		wl_say("close_range(3, ~0U, 0)");
	} else if (!strcmp(mode, "fork-dup2over")) {
		int null = open("/dev/null", O_RDONLY);

		nv_expect_ok(nv_rm_free(ctl, client, 0, client), "RM_FREE client");
		if (null < 0 || dup2(null, ctl) != ctl)
			wl_fail("dup2(/dev/null, %d): %s", ctl, strerror(errno));
		close(null);
		wl_say("dup2(/dev/null, %d)", ctl);
	} else if (!strcmp(mode, "fork-dupuse")) {
		fd = fcntl(ctl, F_DUPFD, 10);
		if (fd < 0)
			wl_fail("fcntl(F_DUPFD, 10): %s", strerror(errno));
		close(ctl);
		wl_say("fcntl(%d, F_DUPFD, 10) -> %d; close(%d)", ctl, fd, ctl);
	} else if (strcmp(mode, "closerange") && strcmp(mode, "rangecloexec") &&
		   strcmp(mode, "leak")) {
		wl_fail("unknown mode '%s'", mode);
	}
	if (!strncmp(mode, "fork-", 5)) {
		pid = wl_fork();
		if (!pid) {
			int n = gpu_fds();

			if (!strcmp(mode, "fork-dupuse"))
				nv_check_version(fd); /* the parent's file, inherited */
			printf("child: gpu fds %d (fd %d)\n", n, fd);
			fflush(stdout);
			_exit(0);
		}
		wl_wait_ok(pid, "child");
		wl_say("parent: done");
		return 0;
	}
	pid = wl_fork();
	if (!pid) {
		if (!strcmp(mode, "closerange"))
			close_range_or_fail(0);
		else if (!strcmp(mode, "rangecloexec"))
			close_range_or_fail(CLOSE_RANGE_CLOEXEC);
		execl("/bin/sh", "sh", "-c",
		      "n=$(ls -l /proc/$$/fd | grep -c nvidiactl); echo \"child: kept $n\"", NULL);
		wl_fail("exec /bin/sh: %s", strerror(errno));
	}
	wl_wait_ok(pid, "child");
	nv_expect_ok(nv_rm_free(fd, client, 0, client), "RM_FREE client");
	wl_say("parent: done");
	return 0;
}
