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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "decode/api.h"
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

static unsigned int self_maps(dev_t dev, ino_t ino, struct self_map *v)
{
	char line[4352], path[4096];
	unsigned long long s, e, pgoff, fino;
	unsigned int maj, min, n = 0;
	char perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (n < MAX_SELF_MAPS && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perms, &pgoff,
			   &maj, &min, &fino, path) != 8)
			continue;
		if (makedev(maj, min) == dev && fino == ino)
			v[n++] = (struct self_map){s, e, pgoff};
	}
	fclose(f);
	return n;
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
	if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_FSIZE, &none) ||
	    setrlimit(RLIMIT_CORE, &none) || setrlimit(RLIMIT_NOFILE, &files) ||
	    setrlimit(RLIMIT_NPROC, &none) || setrlimit(RLIMIT_AS, &as))
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
	snprintf(path, sizeof(path), "/proc/self/fd/%d", CHILD_LIB_FD);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	gpa = h ? (getproc_v2_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gpa)
		_exit(1);
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

int gctx_resolve_procaddrs(int libfd, dev_t dev, ino_t ino, struct gctx_procaddr **recs, __u32 *n)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	__u64 deadline = now_ms() + GCTX_RESOLVE_TIMEOUT_MS;
	struct gctx_procaddr r;
	struct pollfd pfd;
	int p[2], status;
	pid_t pid;

	*recs = NULL;
	*n = 0;
	if (uid == 0)
		return -EPERM;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
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

		if (poll(&pfd, 1, (int)(deadline - now)) <= 0 ||
		    read(p[0], &r, sizeof(r)) != sizeof(r))
			break;
		nr = realloc(*recs, (*n + 1) * sizeof(*nr));
		if (!nr)
			break;
		r.name[sizeof(r.name) - 1] = '\0';
		*recs = nr;
		(*recs)[(*n)++] = r;
	}
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}
