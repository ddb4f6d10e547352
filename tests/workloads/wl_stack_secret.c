// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_stack_secret DIR: the GPU is initialised in init_with_secret() while a secret (as a
 * password read into a local buffer would be) lies on its stack, then a forked child uses the
 * inherited state. The report must still blame init_with_secret(), and the trace must hold no
 * byte of the secret (issue 27: 8 KiB of raw user stack went into the .gctx). The secret is
 * built at run time, so the binary does not hold it either.
 */
#include <string.h>

#include "gpu_uapi.h"

#define NOINLINE __attribute__((noinline))

static struct gpu_ctx g;

static NOINLINE void init_with_secret(const char *dir)
{
	static const char key[] = "HQVDUY.UFTU.TFDSFU.8g4b:d2f6c3e/"; /* each byte + 1 */
	char secret[8 * 32];

	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = key[i % 32] - 1;
	asm volatile("" : : "r"(secret) : "memory");
	gpu_init(dir, &g);
	asm volatile("" : : "r"(secret) : "memory");
	memset(secret, 0, sizeof(secret));
	asm volatile("" : : "r"(secret) : "memory");
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	__u32 tsg = 0;
	int status;
	pid_t pid;

	init_with_secret(dir);
	pid = wl_fork();
	if (!pid) {
		nv_expect_ok(
		    nv_rm_alloc(g.ctl_fd, g.client, g.device, KEPLER_CHANNEL_GROUP_A, &tsg),
		    "child RM_ALLOC channel group");
		exit(0);
	}
	status = wl_wait(pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("child %d: unexpected wait status 0x%x", (int)pid, status);
	gpu_fini(&g);
	return 0;
}
