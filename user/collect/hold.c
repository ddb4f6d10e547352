// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The releaser of holds (see hold.h). It is forked before anything is armed, in a session of
 * its own (a Ctrl-C or a kill of the job's process group does not reach it), keeps only the
 * two map fds and its end of a pipe (so it keeps no BPF program attached), and polls the holds
 * map every few milliseconds. The collector's end of the pipe closing, by exit or by SIGKILL,
 * tells it to disarm and resume everyone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "gpuctx_hold.h"
#include "collect/hold.h"

#define SWEEP_MS	   5
#define ORPHAN_SWEEP_MS	   1000 /* after a collector died: programs may still be detaching */

static volatile sig_atomic_t releaser_stop;

static void on_releaser_stop(int sig)
{
	releaser_stop = sig;
}

struct gctx_hold {
	int holds_fd;
	int ctl_fd;
	int pipe_wr;
	pid_t releaser;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void set_armed(int ctl_fd, __u32 armed)
{
	struct gctx_hold_ctl ctl = {};
	__u32 zero = 0;

	bpf_map_lookup_elem(ctl_fd, &zero, &ctl);
	ctl.armed = armed;
	bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY);
}

int gctx_hold__set_self(int ctl_fd)
{
	struct gctx_hold_ctl ctl = {};
	struct stat st;
	__u32 zero = 0;

	if (stat("/proc/self/exe", &st))
		return -errno;
	bpf_map_lookup_elem(ctl_fd, &zero, &ctl);
	ctl.self_dev = (major(st.st_dev) << 20) | minor(st.st_dev);
	ctl.self_ino = st.st_ino;
	return bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY) ? -errno : 0;
}

/* Resume every hold older than limit_ns (0: all). Deleting first makes each hold resumed once,
 * by whoever deletes it. The clock is read after each entry: a hold made while the sweep runs
 * is younger than a clock read at its start, and was once resumed at once as if timed out. */
static void sweep(int holds_fd, __u64 limit_ns)
{
	__u32 keys[GCTX_MAX_HOLDS], n = 0, key, *prev = NULL;

	while (n < GCTX_MAX_HOLDS && !bpf_map_get_next_key(holds_fd, prev, &key)) {
		keys[n] = key;
		prev = &keys[n++];
	}
	for (__u32 i = 0; i < n; i++) {
		struct gctx_hold_val v;

		if (bpf_map_lookup_elem(holds_fd, &keys[i], &v))
			continue;
		if (limit_ns && !gctx_hold_expired(now_ns(), v.since_ns, limit_ns))
			continue;
		if (!bpf_map_delete_elem(holds_fd, &keys[i]))
			kill((pid_t)keys[i], SIGCONT);
	}
}

/* Close every fd but the three kept: no link or program of the collector stays open here. */
static void close_others(int a, int b, int c)
{
	int k[3] = { a, b, c }, lo = 3, t;

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (k[j] < k[i]) {
				t = k[i];
				k[i] = k[j];
				k[j] = t;
			}
	for (int i = 0; i < 3; i++) {
		if (k[i] < lo)
			continue;
		if (k[i] > lo)
			close_range(lo, k[i] - 1, 0);
		lo = k[i] + 1;
	}
	close_range(lo, ~0u, 0);
}

/*
 * What ends gpuctx must not end the releaser with it, or a held process stays stopped for
 * good: it is in a session of its own (a kill of the job's group or session misses it), the
 * OOM killer passes it over, and neither its name nor its command line says "gpuctx", so that
 * `pkill -9 gpuctx`, `pkill -f gpuctx` or `killall gpuctx` kill the collector alone. The
 * command line is the collector's argv, inherited by fork: overwritten in place.
 */
static void releaser_disguise(void)
{
	unsigned long start = 0, end = 0;
	char buf[1024], *p;
	ssize_t n;
	int fd, i;

	prctl(PR_SET_NAME, GCTX_RELEASER_NAME);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, "-1000", 5);
		close(fd);
	}
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* fields after the comm: 3 (state) onwards */
	for (i = 3; p && i <= 48; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu", &start, &end) != 2 || end <= start)
		return;
	memset((void *)start, 0, end - start);
	memcpy((void *)start, GCTX_RELEASER_NAME,
	       end - start > sizeof(GCTX_RELEASER_NAME) ? sizeof(GCTX_RELEASER_NAME)
							: end - start - 1);
}

static void releaser(int holds_fd, int ctl_fd, int rd, __u64 timeout_ns, pid_t collector)
{
	bool quit = false;
	__u64 until;
	int null;

	setsid();
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2 && null != holds_fd && null != ctl_fd && null != rd)
			close(null);
	}
	close_others(holds_fd, ctl_fd, rd);
	/* the collector's handlers came along with fork: a SIGTERM here ends the releaser the
	 * way the collector's death does, resuming everyone */
	signal(SIGTERM, on_releaser_stop);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	releaser_disguise();
	while (!releaser_stop) {
		struct pollfd p = { .fd = rd, .events = POLLIN };
		char c;

		if (poll(&p, 1, SWEEP_MS) > 0) {
			ssize_t got = read(rd, &c, 1);

			if (got <= 0 || c == 'q') {
				quit = got == 1;
				break;
			}
		}
		/* a child the collector forked may hold the pipe open after the collector died */
		if (getppid() != collector)
			break;
		sweep(holds_fd, timeout_ns);
	}
	set_armed(ctl_fd, 0);
	sweep(holds_fd, 0);
	/* a collector that died may still have programs attached for a moment: a hold made
	 * between the disarm and their detach is resumed by the sweeps that follow */
	until = now_ns() + ORPHAN_SWEEP_MS * 1000000ull;
	while (!quit && now_ns() < until) {
		usleep(SWEEP_MS * 1000);
		sweep(holds_fd, 0);
	}
	_exit(0);
}

struct gctx_hold *gctx_hold__new(int holds_fd, int ctl_fd, __u32 timeout_ms, char *err,
				 size_t errlen)
{
	struct gctx_hold *h = calloc(1, sizeof(*h));
	int p[2];

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (holds_fd < 0 || ctl_fd < 0) {
		snprintf(err, errlen, "the hold maps are missing");
		goto err_free;
	}
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot create the releaser's pipe: %s", strerror(errno));
		goto err_free;
	}
	h->releaser = fork();
	if (h->releaser < 0) {
		snprintf(err, errlen, "cannot start the releaser: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		goto err_free;
	}
	if (h->releaser == 0) {
		close(p[1]);
		releaser(holds_fd, ctl_fd, p[0], (__u64)timeout_ms * 1000000ull, getppid());
	}
	close(p[0]);
	h->holds_fd = holds_fd;
	h->ctl_fd = ctl_fd;
	h->pipe_wr = p[1];
	set_armed(ctl_fd, 1);
	return h;

err_free:
	free(h);
	return NULL;
}

int gctx_hold__release(struct gctx_hold *h, __u32 tgid, __u64 since_ns)
{
	struct gctx_hold_val v;

	if (!h)
		return -EINVAL;
	if (bpf_map_lookup_elem(h->holds_fd, &tgid, &v) || v.since_ns != since_ns)
		return 0;
	if (bpf_map_delete_elem(h->holds_fd, &tgid))
		return 0; /* the releaser got there first */
	if (kill((pid_t)tgid, SIGCONT))
		return -errno;
	return v.resumed ? 2 : 1;
}

void gctx_hold__free(struct gctx_hold *h)
{
	if (!h)
		return;
	/* the map fds here may be closed with the collector: the releaser disarms and sweeps */
	/* a failed write: the releaser is gone, and resumed everyone as it went */
	(void)!write(h->pipe_wr, "q", 1);
	close(h->pipe_wr);
	waitpid(h->releaser, NULL, 0);
	free(h);
}
