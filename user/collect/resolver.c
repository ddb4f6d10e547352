// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cuGetProcAddress asked in an unprivileged, throwaway child (interface in resolver.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "decode/api.h"
#include "lib/procmaps.h"
#include "collect/resolver.h"

#define CHILD_PIPE_FD 3
#define CHILD_LIB_FD  4

static void strip_variant(const char *name, char *out, size_t len)
{
	static const char *const sfx[] = {"_v2", "_v3", "_v4", "_ptsz"};
	size_t n;

	snprintf(out, len, "%s", name);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		n = strlen(out);
		if (n > strlen(sfx[i]) && !strcmp(out + n - strlen(sfx[i]), sfx[i]))
			out[n - strlen(sfx[i])] = 0;
	}
}

/* The child's own mappings of the library (dev, ino), read once after dlopen: asking
 * /proc/self/maps again for each of the ~300 addresses cost ~55 ms per library. */
struct self_map {
	unsigned long long start, end, pgoff;
};

#define MAX_SELF_MAPS 32

struct self_ctx {
	dev_t dev;
	ino_t ino;
	struct self_map *v;
	unsigned int n;
};

static int self_one(void *ctx, const struct gctx_procmap *m)
{
	struct self_ctx *c = ctx;

	if (makedev(m->major, m->minor) == c->dev && m->ino == c->ino)
		c->v[c->n++] = (struct self_map){m->start, m->end, m->pgoff};
	return c->n == MAX_SELF_MAPS;
}

/* Whole lines only (lib/procmaps.h): the library, already loaded, may map files of its own. */
static unsigned int self_maps(dev_t dev, ino_t ino, struct self_map *v)
{
	struct self_ctx c = {dev, ino, v, 0};
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	gctx_procmaps_read_fd(fd, self_one, &c, NULL);
	close(fd);
	return c.n;
}

/* The file offset of addr if it lies in the library's mappings. */
static int self_offset(const struct self_map *v, unsigned int n, __u64 addr, __u64 *off)
{
	for (unsigned int i = 0; i < n; i++) {
		if (addr >= v[i].start && addr < v[i].end) {
			*off = addr - v[i].start + v[i].pgoff;
			return 0;
		}
	}
	return -1;
}

/* In the child, before any of the library's code runs: give up everything. */
static void drop_privileges(uid_t uid, gid_t gid, int pipe_fd, int lib_fd)
{
	static const struct rlimit cpu = {5, 5}, none = {0, 0}, files = {64, 64},
				   as = {8ull << 30, 8ull << 30};
	/* RLIMIT_FSIZE 0 comes in lib_path, once the library has its copy if it needs one */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setsid(); /* out of the terminal's process group */
	/* only the pipe and the library stay open: not the trace, BPF maps or links */
	pipe_fd = fcntl(pipe_fd, F_DUPFD_CLOEXEC, 100);
	lib_fd = fcntl(lib_fd, F_DUPFD_CLOEXEC, 100);
	if (null < 0 || pipe_fd < 0 || lib_fd < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(pipe_fd, CHILD_PIPE_FD) < 0 ||
	    dup2(lib_fd, CHILD_LIB_FD) < 0 || close_range(CHILD_LIB_FD + 1, ~0U, 0))
		_exit(1);
	if (chdir("/"))
		_exit(1);
	if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_CORE, &none) ||
	    setrlimit(RLIMIT_NOFILE, &files) || setrlimit(RLIMIT_NPROC, &none) ||
	    setrlimit(RLIMIT_AS, &as))
		_exit(1);
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	/* setresuid away from 0 clears every capability set, ambient included */
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		_exit(1);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || getuid() == 0 || geteuid() == 0)
		_exit(1);
	alarm(GCTX_RESOLVE_TIMEOUT_MS / 1000);
}

typedef int (*getproc_v2_fn)(const char *, void **, int, unsigned long long, int *);

/* Say why the child gives up (a record with no function), then exit. */
static void child_fail(const char *what, const char *detail)
{
	struct gctx_procaddr r = {.fn = GCTX_API_NONE};

	snprintf(r.name, sizeof(r.name), "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
	if (write(CHILD_PIPE_FD, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(1);
}

/*
 * A path to load the library from, without its own path: the fd checked by gpuctx (through
 * /proc/self/fd), or, when this unprivileged user may not open that file (root's 0600 or 0700
 * library), a copy of its bytes read through that already open fd into a memfd. The path of
 * the library may cross directories this user cannot enter (/root, a 0700 checkout): neither
 * needs it. Then no file may grow any more (RLIMIT_FSIZE 0).
 */
static void lib_path(char *path, size_t len, dev_t *dev, ino_t *ino)
{
	static const struct rlimit none = {0, 0};
	struct stat st;
	off_t off = 0;
	int fd, mfd;

	snprintf(path, len, "/proc/self/fd/%d", CHILD_LIB_FD);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
	} else {
		mfd = memfd_create("gpuctx-lib", MFD_CLOEXEC);
		if (mfd < 0 || fstat(CHILD_LIB_FD, &st))
			child_fail("cannot copy the library", strerror(errno));
		while (off < st.st_size)
			if (sendfile(mfd, CHILD_LIB_FD, &off, (size_t)(st.st_size - off)) <= 0)
				child_fail("cannot copy the library", strerror(errno));
		if (fstat(mfd, &st))
			child_fail("cannot copy the library", strerror(errno));
		*dev = st.st_dev;
		*ino = st.st_ino;
		snprintf(path, len, "/proc/self/fd/%d", mfd);
	}
	if (setrlimit(RLIMIT_FSIZE, &none))
		_exit(1);
}

static void resolver_child(dev_t dev, ino_t ino)
{
	static const int versions[] = {3020, 4000, 11040, 12000, 12050, 13000};
	const struct gctx_api_sym *syms;
	struct self_map maps[MAX_SELF_MAPS];
	unsigned int nmaps;
	char path[64];
	getproc_v2_fn gpa;
	__u32 nsyms;
	void *h;

	/* the very file that was checked, whatever its path has become */
	lib_path(path, sizeof(path), &dev, &ino);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		child_fail("dlopen", dlerror());
	gpa = (getproc_v2_fn)dlsym(h, "cuGetProcAddress_v2");
	if (!gpa)
		child_fail("no cuGetProcAddress_v2", NULL);
	nmaps = self_maps(dev, ino, maps);
	syms = gctx_api_syms(&nsyms);
	for (__u32 i = 0; i < nsyms; i++) {
		struct gctx_procaddr r = {};
		char base[48];

		if (gctx_api_vendor(syms[i].fn) != GCTX_VENDOR_CUDA)
			continue;
		strip_variant(syms[i].name, base, sizeof(base));
		for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
			for (unsigned long long flags = 0; flags <= 2; flags += 2) {
				void *pfn = NULL;
				int st = 0;

				if (gpa(base, &pfn, versions[v], flags, &st) || !pfn)
					continue;
				if (self_offset(maps, nmaps, (__u64)pfn, &r.off))
					continue;
				r.fn = gctx_api_procaddr_fn(base, versions[v], flags);
				if (r.fn == GCTX_API_NONE)
					continue;
				snprintf(r.name, sizeof(r.name), "%s", base);
				if (write(CHILD_PIPE_FD, &r, sizeof(r)) != sizeof(r))
					_exit(1);
			}
		}
	}
	_exit(0);
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

int gctx_resolve_procaddrs(int libfd, dev_t dev, ino_t ino, struct gctx_procaddr **recs, __u32 *n,
			   char *why, size_t whylen)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	__u64 deadline = now_ms() + GCTX_RESOLVE_TIMEOUT_MS;
	struct gctx_procaddr r;
	struct pollfd pfd;
	int p[2], status, ret = 0;
	bool timed_out = true;
	pid_t pid;

	*recs = NULL;
	*n = 0;
	why[0] = '\0';
	if (uid == 0) {
		snprintf(why, whylen, "no unprivileged user to run it as");
		return -EPERM;
	}
	if (pipe2(p, O_CLOEXEC)) {
		ret = -errno;
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return ret;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return ret;
	}
	if (pid == 0) {
		drop_privileges(uid, gid, p[1], libfd);
		resolver_child(dev, ino);
	}
	close(p[1]);
	/* a bounded wait in all: the child's output is never waited on past the deadline */
	pfd = (struct pollfd){.fd = p[0], .events = POLLIN};
	for (__u64 now = now_ms(); now < deadline; now = now_ms()) {
		struct gctx_procaddr *nr;
		ssize_t got;

		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			break;
		got = read(p[0], &r, sizeof(r));
		if (got != sizeof(r)) {
			timed_out = false; /* the child ended (or wrote garbage) */
			break;
		}
		r.name[sizeof(r.name) - 1] = '\0';
		if (r.fn == GCTX_API_NONE) {
			/* the child's own reason to give up; its text is the library's (dlerror) */
			snprintf(why, whylen, "%s", r.name);
			ret = -ENOEXEC;
			timed_out = false;
			break;
		}
		nr = realloc(*recs, (*n + 1) * sizeof(*nr));
		if (!nr)
			break;
		*recs = nr;
		(*recs)[(*n)++] = r;
	}
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (!ret && timed_out) {
		snprintf(why, whylen, "no answer within %d s: stopped there",
			 GCTX_RESOLVE_TIMEOUT_MS / 1000);
		ret = *n ? 0 : -ETIMEDOUT;
	} else if (!ret && WIFEXITED(status) && WEXITSTATUS(status)) {
		snprintf(why, whylen, "the child exited with status %d", WEXITSTATUS(status));
		ret = *n ? 0 : -ECHILD;
	} else if (!ret && WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
		snprintf(why, whylen, "the library's code was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		ret = *n ? 0 : -ECHILD;
	}
	return ret;
}
