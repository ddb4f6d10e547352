// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_thread DIR: after gpu_init, a second thread of the same process issues RM_CONTROL and
 * RM_ALLOC on the same nvidiactl fd. Same process, so nothing here is inherited.
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "gpu_uapi.h"

static void *worker(void *arg)
{
	const struct gpu_ctx *g = arg;
	__u32 tsg = 0;

	wl_say("thread tid %ld: RM calls on fd %d", (long)syscall(SYS_gettid), g->ctl_fd);
	nv_expect_ok(
	    nv_rm_control(g->ctl_fd, g->client, g->subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO),
	    "thread RM_CONTROL");
	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "thread RM_ALLOC channel group");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	struct gpu_ctx g;
	pthread_t t;
	int err;

	gpu_init(dir, &g);
	err = pthread_create(&t, NULL, worker, &g);
	if (err)
		wl_fail("pthread_create: %s", strerror(err));
	err = pthread_join(t, NULL);
	if (err)
		wl_fail("pthread_join: %s", strerror(err));
	wl_say("thread joined");
	gpu_fini(&g);
	wl_say("done");
	return 0;
}
