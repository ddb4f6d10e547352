// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_segv DIR: gpu_init, fork; the child allocates on the inherited nvidiactl fd and then
 * dies by SIGSEGV. The parent checks it died by signal 11 and exits 0.
 * wl_segv DIR --self: no fork; the process that initialised the GPU dies by SIGSEGV itself
 * (seed 001's crash at shutdown; gpuctx agent keeps such a crash without any fork finding).
 * wl_segv DIR --linger SECONDS: as without, then the parent stays that long (or until killed)
 * with its GPU state: a process tree that lives on after its crash.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gpu_uapi.h"

static __attribute__((noreturn)) void child(const struct gpu_ctx *g)
{
	struct rlimit no_core = {0, 0};
	volatile int *volatile null_ptr = NULL;
	__u32 tsg = 0;

	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "child RM_ALLOC channel group");
	setrlimit(RLIMIT_CORE, &no_core);
	wl_say("child: writing through a NULL pointer");
	*null_ptr = 1;
	wl_fail("child: still alive after writing through NULL");
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	struct gpu_ctx g;
	int status;
	pid_t pid;

	gpu_init(dir, &g);
	if (argc > 2 && !strcmp(argv[2], "--self")) {
		struct rlimit no_core = {0, 0};
		volatile int *volatile null_ptr = NULL;

		setrlimit(RLIMIT_CORE, &no_core);
		wl_say("writing through a NULL pointer with the GPU open");
		*null_ptr = 1;
		wl_fail("still alive after writing through NULL");
	}
	pid = wl_fork();
	if (!pid)
		child(&g);
	wl_say("parent: forked child %d", (int)pid);
	status = wl_wait(pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
		wl_fail("child %d did not die by SIGSEGV (wait status 0x%x)", (int)pid, status);
	wl_say("parent: child %d died by signal %d (SIGSEGV)", (int)pid, WTERMSIG(status));
	if (argc > 3 && !strcmp(argv[2], "--linger"))
		sleep(atoi(argv[3]));
	gpu_fini(&g);
	wl_say("parent: done");
	return 0;
}
