// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_attach DIR: for attaching the tracer to a running process. gpu_init, print "ready",
 * wait for SIGUSR1, then fork a child that allocates on the inherited nvidiactl fd.
 */
#include <signal.h>

#include "gpu_uapi.h"

static void wait_for_sigusr1(const sigset_t *set)
{
	int sig = 0, err;

	do {
		err = sigwait(set, &sig);
	} while (err == EINTR);
	if (err)
		wl_fail("sigwait: %s", strerror(err));
	wl_say("got SIGUSR1");
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	struct gpu_ctx g;
	sigset_t set;
	__u32 tsg = 0;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		wl_fail("sigprocmask: %s", strerror(errno));
	gpu_init(dir, &g);
	wl_say("ready");
	wait_for_sigusr1(&set);

	pid = wl_fork();
	if (!pid) {
		nv_expect_ok(
		    nv_rm_alloc(g.ctl_fd, g.client, g.device, KEPLER_CHANNEL_GROUP_A, &tsg),
		    "child RM_ALLOC channel group");
		exit(0);
	}
	wl_say("parent: forked child %d", (int)pid);
	wl_wait_ok(pid, "child");
	gpu_fini(&g);
	wl_say("parent: done");
	return 0;
}
