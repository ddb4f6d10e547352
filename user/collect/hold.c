// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The releaser of holds (see hold.h). It is forked before anything is armed, in a session of
 * its own (a Ctrl-C or a kill of the job's process group does not reach it), keeps only the
 * two map fds, its end of a socket pair and the guard's links (no other BPF program), and
 * polls the holds map every few milliseconds. The collector's end of the socket closing, by
 * exit or by SIGKILL, tells it to disarm and resume everyone.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuctx_hold.h"
#include "collect/collector.h"
#include "collect/hold.h"
#include "guard.skel.h"

#define SWEEP_MS	 5
#define RESTOP_SETTLE_US 2000 /* a deferred re-stop lands within microseconds */
#define ORPHAN_SWEEP_MS	 1000 /* after a collector died: programs may still be detaching */
#define GUARD_MARGIN_MS	 5000 /* a hold lives at most the timeout and this */
#define MAX_KEEP	 16   /* fds the releaser keeps: two maps, its socket, the guard's links */

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
	struct guard_bpf *guard; /* NULL where it did not load (guard_why says why) */
	char guard_why[160];
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

/* Is the process stopped, or about to be (a SIGSTOP pending for it, not yet taken)? */
static bool stopped(__u32 tgid)
{
	char path[32], buf[2048], *l;
	unsigned long long pend;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/status", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* "Name:" comes first and may hold any byte but a newline (the kernel escapes it) */
	l = strstr(buf, "\nState:\t");
	if (l && l[8] == 'T')
		return true;
	l = strstr(buf, "\nShdPnd:\t");
	return l && sscanf(l + 9, "%llx", &pend) == 1 && (pend & (1ull << (SIGSTOP - 1)));
}

/* Resume a held process whose hold v was just deleted. The guard may have stopped it again
 * after another gpuctx's SIGCONT, and that stop is delivered once the other's signal call
 * drops the lock, maybe after this SIGCONT, even when the hold read here showed no re-stop
 * (deleted between the guard's look and its count). The guard stamps hold_ctl before it
 * queues the stop, under the lock this kill takes after it: a stamp from this hold's life,
 * read after the kill, means look again a moment later. */
static int resume(int ctl_fd, __u32 tgid, const struct gctx_hold_val *v)
{
	struct gctx_hold_ctl ctl = {};
	__u32 zero = 0;

	if (kill((pid_t)tgid, SIGCONT))
		return -errno;
	if (v->restops ||
	    (!bpf_map_lookup_elem(ctl_fd, &zero, &ctl) && ctl.last_restop_ns >= v->since_ns)) {
		usleep(RESTOP_SETTLE_US);
		if (stopped(tgid))
			kill((pid_t)tgid, SIGCONT);
	}
	return 0;
}

/* Resume every hold older than limit_ns (0: all). Deleting first makes each hold resumed once,
 * by whoever deletes it. The clock is read after each entry: a hold made while the sweep runs
 * is younger than a clock read at its start, and was once resumed at once as if timed out. */
static void sweep(int holds_fd, int ctl_fd, __u64 limit_ns)
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
		/* one resumed early stays until the collector says why, or the timeout */
		if (limit_ns && !gctx_hold_expired(now_ns(), v.since_ns, limit_ns))
			continue;
		/* one resumed already (the guard, a SIGCONT from elsewhere) gets no second
		 * SIGCONT: it runs, and may have a handler */
		if (!bpf_map_lookup_and_delete_elem(holds_fd, &keys[i], &v) && !v.resumed)
			resume(ctl_fd, keys[i], &v);
	}
}

/* Close every fd but the n kept: no link or program of the collector stays open here, only
 * the guard's links, which keep the guard attached while the releaser lives. */
static void close_others(int *keep, int n)
{
	int lo = 3, t;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (keep[j] < keep[i]) {
				t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i < n; i++) {
		if (keep[i] < lo)
			continue;
		if (keep[i] > lo)
			close_range(lo, keep[i] - 1, 0);
		lo = keep[i] + 1;
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

static void releaser(int holds_fd, int ctl_fd, int rd, __u64 timeout_ns, pid_t collector, int *keep,
		     int nkeep)
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
		if (null > 2)
			close(null);
	}
	close_others(keep, nkeep);
	/* the collector's handlers came along with fork: a SIGTERM here ends the releaser the
	 * way the collector's death does, resuming everyone */
	signal(SIGTERM, on_releaser_stop);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	releaser_disguise();
	while (!releaser_stop) {
		struct pollfd p = {.fd = rd, .events = POLLIN};
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
		sweep(holds_fd, ctl_fd, timeout_ns);
	}
	set_armed(ctl_fd, 0);
	sweep(holds_fd, ctl_fd, 0);
	/* a collector that died may still have programs attached for a moment: a hold made
	 * between the disarm and their detach is resumed by the sweeps that follow */
	until = now_ns() + ORPHAN_SWEEP_MS * 1000000ull;
	while (!quit && now_ns() < until) {
		usleep(SWEEP_MS * 1000);
		sweep(holds_fd, ctl_fd, 0);
	}
	_exit(0);
}

/* Load and attach the guard (bpf/guard.bpf.c) over the same two maps. It needs kfuncs of
 * Linux 6.13; where it does not load, holds keep the releaser alone, and why is kept. */
static void guard_start(struct gctx_hold *h, __u32 timeout_ms)
{
	struct guard_bpf *g = guard_bpf__open();
	int ret;

	if (!g) {
		snprintf(h->guard_why, sizeof(h->guard_why), "cannot open: %s", strerror(errno));
		return;
	}
	g->rodata->hold_live_ns = ((__u64)timeout_ms + GUARD_MARGIN_MS) * 1000000ull;
	if (bpf_map__reuse_fd(g->maps.holds, h->holds_fd) ||
	    bpf_map__reuse_fd(g->maps.hold_ctl, h->ctl_fd)) {
		snprintf(h->guard_why, sizeof(h->guard_why), "cannot share the hold maps: %s",
			 strerror(errno));
		goto err;
	}
	ret = guard_bpf__load(g);
	if (ret) {
		snprintf(h->guard_why, sizeof(h->guard_why),
			 "this kernel cannot resume another process from BPF "
			 "(bpf_send_signal_task needs Linux 6.13): %s",
			 strerror(-ret));
		goto err;
	}
	if (gctx_check_tracepoints(g->obj, h->guard_why, sizeof(h->guard_why)))
		goto err;
	ret = guard_bpf__attach(g);
	if (ret) {
		snprintf(h->guard_why, sizeof(h->guard_why), "cannot attach: %s", strerror(-ret));
		goto err;
	}
	h->guard = g;
	return;
err:
	guard_bpf__destroy(g);
}

/* Arm holding, and tell the guard whose signals to watch and whether it re-stops a held
 * process that another gpuctx resumed. */
static void arm(int ctl_fd, pid_t collector, pid_t releaser, bool restop)
{
	struct gctx_hold_ctl ctl = {};
	__u32 zero = 0;

	bpf_map_lookup_elem(ctl_fd, &zero, &ctl);
	ctl.collector = collector;
	ctl.releaser = releaser;
	ctl.tripped = 0;
	ctl.restop = restop;
	ctl.armed = 1;
	bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY);
}

struct gctx_hold *gctx_hold__new(int holds_fd, int ctl_fd, __u32 timeout_ms, char *err,
				 size_t errlen)
{
	struct gctx_hold *h = calloc(1, sizeof(*h));
	int p[2], keep[MAX_KEEP], nkeep = 0;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (holds_fd < 0 || ctl_fd < 0) {
		snprintf(err, errlen, "the hold maps are missing");
		goto err_free;
	}
	h->holds_fd = holds_fd;
	h->ctl_fd = ctl_fd;
	guard_start(h, timeout_ms);
	/* a socket, not a pipe: telling a releaser that was killed must not SIGPIPE us */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p)) {
		snprintf(err, errlen, "cannot create the releaser's socket: %s", strerror(errno));
		goto err_free;
	}
	keep[nkeep++] = holds_fd;
	keep[nkeep++] = ctl_fd;
	keep[nkeep++] = p[0];
	for (int i = 0; h->guard && i < h->guard->skeleton->prog_cnt && nkeep < MAX_KEEP; i++) {
		struct bpf_link *l = *h->guard->skeleton->progs[i].link;

		if (l)
			keep[nkeep++] = bpf_link__fd(l);
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
		releaser(holds_fd, ctl_fd, p[0], (__u64)timeout_ms * 1000000ull, getppid(), keep,
			 nkeep);
	}
	close(p[0]);
	h->pipe_wr = p[1];
	arm(ctl_fd, getpid(), h->releaser, h->guard != NULL);
	return h;

err_free:
	guard_bpf__destroy(h->guard);
	free(h);
	return NULL;
}

const char *gctx_hold__unguarded(const struct gctx_hold *h)
{
	return h && !h->guard ? h->guard_why : NULL;
}

int gctx_hold__tripped(const struct gctx_hold *h)
{
	struct gctx_hold_ctl ctl = {};
	__u32 zero = 0;

	if (!h || bpf_map_lookup_elem(h->ctl_fd, &zero, &ctl))
		return 0;
	return ctl.tripped;
}

int gctx_hold__release(struct gctx_hold *h, __u32 tgid, __u64 since_ns)
{
	struct gctx_hold_val v;
	int ret;

	if (!h)
		return -EINVAL;
	if (bpf_map_lookup_elem(h->holds_fd, &tgid, &v) || v.since_ns != since_ns)
		return 0;
	/* the value as deleted: the guard may have counted a re-stop since the look */
	if (bpf_map_lookup_and_delete_elem(h->holds_fd, &tgid, &v))
		return 0; /* the releaser got there first */
	if (v.resumed)
		return 1 + v.resumed; /* running already: no second SIGCONT */
	ret = resume(h->ctl_fd, tgid, &v);
	return ret ? ret : 1;
}

void gctx_hold__free(struct gctx_hold *h)
{
	if (!h)
		return;
	/* the map fds here may be closed with the collector: the releaser disarms and sweeps */
	/* a failed write: the releaser is gone, and resumed everyone as it went */
	(void)!send(h->pipe_wr, "q", 1, MSG_NOSIGNAL);
	close(h->pipe_wr);
	waitpid(h->releaser, NULL, 0);
	if (h->guard && h->guard->bss->guard_failed)
		fprintf(stderr,
			"gpuctx: warning: %llu held processes could not be resumed from the "
			"kernel (their releaser resumed them)\n",
			(unsigned long long)h->guard->bss->guard_failed);
	guard_bpf__destroy(h->guard);
	free(h);
}
