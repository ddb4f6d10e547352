// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_demo DIR: the bundled demo, shaped like a PyTorch training job with DataLoader workers.
 * The "trainer" initialises the GPU, then starts:
 *   dl_worker_1  fork, reads data only, never touches the GPU (the normal case);
 *   dl_worker_2  fork, uses the trainer's GPU context through the inherited nvidiactl fd;
 *   dl_worker_3  fork, uses the inherited context and then dies by SIGSEGV;
 *   spawn_worker fork + exec, initialises its own GPU context (the safe "spawn" method).
 */
#include <signal.h>
#include <sys/resource.h>

#include "gpu_uapi.h"

struct worker {
	const char *name;
	pid_t pid;
	int expect_sig; /* 0: must exit 0 */
};

static __attribute__((noreturn)) void loader_worker(void)
{
	unsigned char batch[16384];
	unsigned long sum = 0;
	int fd, b, i;

	wl_set_name("dl_worker_1");
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		wl_fail("dl_worker_1: open /dev/urandom: %s", strerror(errno));
	for (b = 0; b < 4; b++) {
		if (read(fd, batch, sizeof(batch)) != (ssize_t)sizeof(batch))
			wl_fail("dl_worker_1: read: %s", strerror(errno));
		for (i = 0; i < (int)sizeof(batch); i++)
			sum += batch[i];
	}
	close(fd);
	wl_say("dl_worker_1: loaded 4 batches (checksum %lu), no GPU call", sum);
	exit(0);
}

/* dl_worker_2 uses the context before dl_worker_3 does, on a loaded machine too: the
 * incident's "first use" (and the export goldens) name one call, not the scheduler's pick. */
static int first_use_done[2] = {-1, -1};

static __attribute__((noreturn)) void gpu_worker(const struct gpu_ctx *g)
{
	__u32 tsg = 0;

	wl_set_name("dl_worker_2");
	wl_say("dl_worker_2: touching the trainer's GPU context");
	nv_expect_ok(nv_rm_control(g->ctl_fd, g->client, g->tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
		     "dl_worker_2 RM_CONTROL");
	if (write(first_use_done[1], "u", 1) != 1)
		wl_fail("dl_worker_2: write: %s", strerror(errno));
	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "dl_worker_2 RM_ALLOC");
	exit(0);
}

static __attribute__((noreturn)) void crashing_worker(const struct gpu_ctx *g)
{
	struct rlimit no_core = {0, 0};
	volatile int *volatile null_ptr = NULL;
	__u32 tsg = 0;

	char go;

	wl_set_name("dl_worker_3");
	close(first_use_done[1]);
	if (read(first_use_done[0], &go, 1) != 1)
		wl_fail("dl_worker_3: dl_worker_2 did not use the context");
	wl_say("dl_worker_3: touching the trainer's GPU context, then crashing");
	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "dl_worker_3 RM_ALLOC");
	setrlimit(RLIMIT_CORE, &no_core);
	*null_ptr = 1;
	wl_fail("dl_worker_3: still alive after writing through NULL");
}

static int spawn_worker_main(const char *dir)
{
	struct gpu_ctx g;

	wl_set_name("spawn_worker");
	wl_say("spawn_worker: own GPU context after exec");
	gpu_init(dir, &g);
	nv_expect_ok(nv_rm_control(g.ctl_fd, g.client, g.tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
		     "spawn_worker RM_CONTROL");
	gpu_fini(&g);
	wl_say("spawn_worker: done");
	return 0;
}

static pid_t start_spawn_worker(char *argv0, const char *dir)
{
	char *args[] = {argv0, "--spawn-worker", (char *)dir, NULL};
	pid_t pid = wl_fork();

	if (!pid)
		wl_exec_self(args);
	return pid;
}

/* Wait for one worker; returns 1 when it ended as expected. */
static int reap(const struct worker *w)
{
	int status = wl_wait(w->pid);

	if (WIFSIGNALED(status)) {
		wl_say("trainer: %s (pid %d) died by signal %d", w->name, (int)w->pid,
		       WTERMSIG(status));
		return WTERMSIG(status) == w->expect_sig;
	}
	wl_say("trainer: %s (pid %d) exited %d", w->name, (int)w->pid, WEXITSTATUS(status));
	return !w->expect_sig && !WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	struct worker w[4] = {
	    {"dl_worker_1", 0, 0},
	    {"dl_worker_2", 0, 0},
	    {"dl_worker_3", 0, SIGSEGV},
	    {"spawn_worker", 0, 0},
	};
	const char *dir;
	struct gpu_ctx g;
	int i, good = 0;

	if (argc >= 3 && !strcmp(argv[1], "--spawn-worker"))
		return spawn_worker_main(argv[2]);
	dir = wl_dir_arg(argc, argv);
	wl_set_name("trainer");
	wl_say("trainer: initialising the GPU");
	gpu_init(dir, &g);
	if (pipe2(first_use_done, O_CLOEXEC))
		wl_fail("trainer: pipe: %s", strerror(errno));

	w[0].pid = wl_fork();
	if (!w[0].pid)
		loader_worker();
	w[1].pid = wl_fork();
	if (!w[1].pid)
		gpu_worker(&g);
	w[2].pid = wl_fork();
	if (!w[2].pid)
		crashing_worker(&g);
	close(first_use_done[0]);
	close(first_use_done[1]);
	w[3].pid = start_spawn_worker(argv[0], dir);
	for (i = 0; i < 4; i++)
		wl_say("trainer: started %s as pid %d", w[i].name, (int)w[i].pid);

	for (i = 0; i < 4; i++)
		good += reap(&w[i]);
	wl_say("trainer: summary: %d/4 workers ended as expected (dl_worker_2 and dl_worker_3 "
	       "used the inherited GPU context, dl_worker_3 crashed)",
	       good);
	gpu_fini(&g);
	if (good != 4)
		wl_fail("trainer: %d worker(s) ended unexpectedly", 4 - good);
	wl_say("trainer: done");
	return 0;
}
