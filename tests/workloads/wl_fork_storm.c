// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_fork_storm [DIR] [N]: lineage stress without any GPU call. Forks N children (default 500,
 * at most 50 alive at once) that exit with status i % 7 at once; every 10th child first forks
 * a grandchild. Every exit status is checked. DIR is accepted and ignored.
 */
#include "gpu_uapi.h"

#define MAX_ALIVE 50

static __attribute__((noreturn)) void child(int i)
{
	int status;
	pid_t pid;

	if (i % 10 == 0) {
		pid = fork();
		if (pid < 0)
			_exit(100);
		if (!pid)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			_exit(101);
	}
	_exit(i % 7);
}

/* Reap one child and check its exit status against its index. */
static void reap_one(pid_t *pids, int n)
{
	int status, i;
	pid_t pid;

	do {
		pid = wait(&status);
	} while (pid < 0 && errno == EINTR);
	if (pid < 0)
		wl_fail("wait: %s", strerror(errno));
	for (i = 0; i < n && pids[i] != pid; i++)
		;
	if (i == n)
		wl_fail("wait returned unknown pid %d", (int)pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != i % 7)
		wl_fail("child %d (pid %d): wait status 0x%x, expected exit %d", i, (int)pid,
			status, i % 7);
	pids[i] = 0;
}

int main(int argc, char **argv)
{
	int n = argc >= 3 ? atoi(argv[2]) : 500, alive = 0, i;
	pid_t *pids;

	if (n < 1 || n > 100000)
		wl_fail("bad child count %s (1..100000)", argv[2]);
	pids = calloc(n, sizeof(*pids));
	if (!pids)
		wl_fail("out of memory");
	wl_say("forking %d children, at most %d alive", n, MAX_ALIVE);
	fflush(NULL);
	for (i = 0; i < n; i++) {
		if (alive == MAX_ALIVE) {
			reap_one(pids, n);
			alive--;
		}
		pids[i] = fork();
		if (pids[i] < 0)
			wl_fail("fork %d: %s", i, strerror(errno));
		if (!pids[i])
			child(i);
		alive++;
	}
	while (alive--)
		reap_one(pids, n);
	wl_say("all %d children (and %d grandchildren) reaped with the expected status", n,
	       (n + 9) / 10);
	free(pids);
	return 0;
}
