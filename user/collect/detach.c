// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Background release of the BPF links (see detach.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "collect/detach.h"

#define MAX_CLOSERS 256

static void *close_one(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

/* A BPF object or perf event: its last close may wait for a grace period. */
static bool slow_to_close(int fd)
{
	char path[32], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return true;
	target[n] = 0;
	return !strncmp(target, "anon_inode:bpf", 14) || !strncmp(target, "anon_inode:[perf", 16);
}

/* The fds above stderr (but keep): with @slow, those that hold BPF objects, each closed on its
 * own thread where possible so that the grace periods that can overlap do (uprobe and raw
 * tracepoint links); else every other one, closed at once (files and pipes the caller handed
 * us must not wait for the release). */
static void close_fds(bool slow, int keep)
{
	pthread_t th[MAX_CLOSERS];
	int fds[MAX_CLOSERS * 4], n = 0, nth = 0;
	struct dirent *d;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return; /* exit closes them, one after the other */
	while ((d = readdir(dir)) && n < (int)(sizeof(fds) / sizeof(fds[0]))) {
		int fd = atoi(d->d_name);

		if (fd > 2 && fd != dirfd(dir) && fd != keep)
			fds[n++] = fd;
	}
	closedir(dir);
	for (int i = 0; i < n; i++) {
		if (slow_to_close(fds[i]) != slow)
			continue;
		if (slow && nth < MAX_CLOSERS &&
		    !pthread_create(&th[nth], NULL, close_one, (void *)(long)fds[i]))
			nth++;
		else
			close(fds[i]);
	}
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
}

void gctx_detach_after_exit(void)
{
	int null, gone[2];
	pid_t pid;
	char c;

	/* The last close of a link pays its grace period: the child closes only once the parent
	 * has exited (EOF on this pipe), so the parent's own closes stay cheap. */
	if (pipe2(gone, O_CLOEXEC))
		return;
	pid = fork();
	if (pid != 0) {
		close(gone[0]);
		if (pid < 0)
			close(gone[1]);
		return; /* parent (or fork failed): free as usual, keep gone[1] until exit */
	}
	close(gone[1]);
	setsid();
	prctl(PR_SET_NAME, "gpuctx-release");
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3; fd++) {
		if (null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	if (null > 2)
		close(null);
	close_fds(false, gone[0]);
	while (read(gone[0], &c, 1) < 0 && errno == EINTR)
		;
	close(gone[0]);
	close_fds(true, -1);
	_exit(0);
}
