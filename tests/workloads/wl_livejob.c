// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_livejob DIR ROUNDS [SECONDS [CHURN_SECONDS]]: a long-lived GPU process that churns
 * (issue 29, "bounded forever"): after gpu_init, ROUNDS times (or for CHURN_SECONDS, whichever
 * ends first) a new thread allocates a channel group on the shared nvidiactl fd and frees it,
 * and ends; then it says "churned", stays alive SECONDS (default 0) with its GPU state, and
 * tears down. Under the agent its threads and RM objects pile up unless the model trims them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gpu_uapi.h"

static void *worker(void *arg)
{
	const struct gpu_ctx *g = arg;
	__u32 tsg = 0;

	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "RM_ALLOC channel group");
	nv_expect_ok(nv_rm_free(g->ctl_fd, g->client, g->device, tsg), "RM_FREE channel group");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	long rounds = argc > 2 ? atol(argv[2]) : 1000, secs = argc > 3 ? atol(argv[3]) : 0;
	time_t until = argc > 4 ? time(NULL) + atol(argv[4]) : 0;
	struct gpu_ctx g;
	pthread_t t;
	long i;
	int err;

	gpu_init(dir, &g);
	for (i = 0; i < rounds; i++) {
		if (until && !(i % 1024) && time(NULL) >= until)
			break;
		err = pthread_create(&t, NULL, worker, &g);
		if (err)
			wl_fail("pthread_create: %s", strerror(err));
		err = pthread_join(t, NULL);
		if (err)
			wl_fail("pthread_join: %s", strerror(err));
	}
	wl_say("churned %ld threads", i);
	sleep((unsigned)secs);
	gpu_fini(&g);
	wl_say("done");
	return 0;
}
