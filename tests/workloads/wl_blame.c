// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_blame DIR [crash]: the GPU is initialised in setup_gpu(), the fork happens in
 * spawn_worker(), the child uses the inherited nvidiactl fd in worker_step() (and with
 * "crash", then dies by SIGSEGV in worker_crash()). The stack test checks that the report
 * names these functions and their lines (the BLAME-* markers below).
 */
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>

#include "gpu_uapi.h"

#define NOINLINE __attribute__((noinline))

static struct gpu_ctx g;

static NOINLINE void setup_gpu(const char *dir)
{
	gpu_init(dir, &g); /* BLAME-INIT */
	asm volatile("");
}

static NOINLINE void worker_crash(void)
{
	struct rlimit no_core = {0, 0};
	volatile int *volatile null_ptr = NULL;

	setrlimit(RLIMIT_CORE, &no_core);
	*null_ptr = 1; /* BLAME-CRASH */
	asm volatile("");
}

static NOINLINE void worker_step(bool crash)
{
	__u32 tsg = 0;

	nv_expect_ok(nv_rm_alloc(g.ctl_fd, g.client, g.device,
				 KEPLER_CHANNEL_GROUP_A, /* BLAME-USE */
				 &tsg),
		     "child RM_ALLOC channel group");
	if (crash)
		worker_crash();
	asm volatile("");
}

static NOINLINE pid_t spawn_worker(bool crash)
{
	pid_t pid = wl_fork(); /* BLAME-FORK */

	if (!pid) {
		worker_step(crash); /* BLAME-STEP */
		exit(0);
	}
	asm volatile("");
	return pid;
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	bool crash = argc > 2 && !strcmp(argv[2], "crash");
	int status;
	pid_t pid;

	setup_gpu(dir);		   /* BLAME-MAIN-INIT */
	pid = spawn_worker(crash); /* BLAME-MAIN-FORK */
	status = wl_wait(pid);
	if (crash ? !WIFSIGNALED(status) : !WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("child %d: unexpected wait status 0x%x", (int)pid, status);
	gpu_fini(&g);
	return 0;
}
