// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * loops: the timed loops of the overhead benchmark (bench/run.py drives them).
 *
 *   loops ioctl [--secs S] [--out FILE] [--hold FIFO] LABEL=PATH,CMD...
 *	ns per ioctl for each LABEL, one after the other in this process; results go to FILE
 *	(written whole, then renamed into place) or stdout. With --hold, the process then blocks
 *	until FIFO is opened for writing and closed, so a tracer following it stays attached
 *	while the driver measures another, unfollowed process. CMD is fionread (FIONREAD),
 *	nv-version (NV_ESC_CHECK_VERSION_STR), nv-control (NV_ESC_RM_CONTROL, nvos54 params),
 *	nv-none (_IO('F', 0): an NVIDIA-type command without parameters) or kfd-version
 *	(AMDKFD_IOC_GET_VERSION, 8 bytes read at entry and at exit).
 *   loops procs [--secs S] [--exe PATH] fork-exit|fork-exec|spawn|getppid...
 *	processes per second of each loop, one after the other: fork + _exit + wait, fork +
 *	exec PATH + wait, posix_spawn PATH + wait (PATH defaults to /bin/true); getppid:
 *	system calls per second.
 *   loops churn [--procs N] [--exe PATH] [--watch PID]
 *	N fork + exec + wait, then the peak RSS and CPU time of PID (default: our parent, the
 *	collector when run under gpuctx record) as key=value pairs.
 *   loops call [--secs S] nop5|push|endbr64
 *	ns per call of a local noinline function starting with that instruction (uprobe target).
 *   loops call-lib [--secs S] LIB SYMBOL...
 *	ns per call of each SYMBOL in the shared library LIB (pointer arguments to zeroed memory).
 *   loops rate [--secs S] [--threads T] --rate N PATH
 *	_IO('F', 0) on PATH paced at N calls per second in all, split over T threads; prints the
 *	achieved rate (a file that is not a driver answers ENOTTY at once).
 *   loops stamp
 *	prints CLOCK_MONOTONIC in ns and exits: when a command started under a tracer.
 *   loops gpu-mix [--iters N] DIR
 *	RM traffic on DIR/nvidiactl (the emulated driver): per iteration, allocate a client, a
 *	device and a subdevice, four controls, free the client (8 ioctls).
 * Exit status 0, or 1 with a one-line error on stderr.
 */
#define GPU_UAPI_NO_HELPERS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "gpu_uapi.h"

#define MAX_SPECS   16
#define MAX_THREADS 16
#define NSEC	    1000000000ull

extern char **environ;

struct opts {
	double secs;
	const char *out;
	const char *hold;
	const char *exe;
	long procs;
	long iters;
	long rate;
	long threads;
	pid_t watch;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("loops: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC + ts.tv_nsec;
}

static __u64 secs_ns(double secs)
{
	return (__u64)(secs * 1e9);
}

/* ---- ioctl ---- */

enum ioctl_kind { IOC_FIONREAD, IOC_NV_VERSION, IOC_NV_CONTROL, IOC_NV_NONE, IOC_KFD_VERSION };

/* An NVIDIA-type command without parameters: recorded on a registered file, ENOTTY there. */
#define NV_IOCTL_NONE _IO('F', 0)
/* AMDKFD_IOC_GET_VERSION (struct kfd_ioctl_get_version_args: major, minor): a KFD command whose
 * parameters are read at entry and, being _IOC_READ, at exit too. */
#define KFD_IOCTL_GET_VERSION _IOR('K', 0x01, struct kfd_version)

struct kfd_version {
	__u32 major, minor;
};

struct spec {
	const char *label;
	const char *path;
	enum ioctl_kind kind;
	int fd;
	double ns;
	__u64 n;
};

union ioctl_buf {
	int nread;
	struct nv_rm_api_version ver;
	struct nvos54_params ctl;
	struct kfd_version kfd;
};

static int parse_spec(char *arg, struct spec *s)
{
	char *eq = strchr(arg, '='), *comma = strrchr(arg, ',');

	if (!eq || !comma || comma < eq)
		return -1;
	*eq = *comma = 0;
	s->label = arg;
	s->path = eq + 1;
	if (!strcmp(comma + 1, "fionread"))
		s->kind = IOC_FIONREAD;
	else if (!strcmp(comma + 1, "nv-version"))
		s->kind = IOC_NV_VERSION;
	else if (!strcmp(comma + 1, "nv-control"))
		s->kind = IOC_NV_CONTROL;
	else if (!strcmp(comma + 1, "nv-none"))
		s->kind = IOC_NV_NONE;
	else if (!strcmp(comma + 1, "kfd-version"))
		s->kind = IOC_KFD_VERSION;
	else
		return -1;
	return 0;
}

static inline long do_ioctl(int fd, enum ioctl_kind kind, union ioctl_buf *b)
{
	switch (kind) {
	case IOC_NV_VERSION:
		b->ver.cmd = NV_RM_API_VERSION_CMD_RELAXED;
		return ioctl(fd, NV_IOCTL_CHECK_VERSION_STR, &b->ver);
	case IOC_NV_CONTROL:
		return ioctl(fd, NV_IOCTL_RM_CONTROL, &b->ctl);
	case IOC_NV_NONE:
		return ioctl(fd, NV_IOCTL_NONE, 0);
	case IOC_KFD_VERSION:
		return ioctl(fd, KFD_IOCTL_GET_VERSION, &b->kfd);
	default:
		return ioctl(fd, FIONREAD, &b->nread);
	}
}

/* Run for about @secs after a short warm-up; the clock is read every @batch calls. */
static void time_ioctl(struct spec *s, double secs)
{
	union ioctl_buf b;
	__u64 t0, t, n = 0, end;
	unsigned int batch = 64;
	long first;

	memset(&b, 0, sizeof(b));
	strcpy(b.ver.versionString, "595.45.04");
	first = do_ioctl(s->fd, s->kind, &b);
	/* The fionread and nv-version rows must succeed; nv-control, nv-none and kfd-version are
	 * expected to fail with ENOTTY on a file that is not a driver (only their parameters
	 * matter). */
	if (first < 0 && s->kind != IOC_NV_CONTROL && s->kind != IOC_NV_NONE &&
	    s->kind != IOC_KFD_VERSION)
		die("%s: ioctl on %s: %s", s->label, s->path, strerror(errno));
	end = now_ns() + secs_ns(0.02);
	while (now_ns() < end)
		for (unsigned int i = 0; i < batch; i++)
			do_ioctl(s->fd, s->kind, &b);
	t0 = now_ns();
	end = t0 + secs_ns(secs);
	do {
		for (unsigned int i = 0; i < batch; i++)
			do_ioctl(s->fd, s->kind, &b);
		n += batch;
		t = now_ns();
	} while (t < end);
	s->n = n;
	s->ns = (double)(t - t0) / n;
}

static void write_results(const char *out, const char *text)
{
	char tmp[4096];
	FILE *f;

	if (!out) {
		fputs(text, stdout);
		fflush(stdout);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s: %s", tmp, strerror(errno));
	fputs(text, f);
	if (fclose(f))
		die("cannot write %s: %s", tmp, strerror(errno));
	if (rename(tmp, out))
		die("cannot rename %s to %s: %s", tmp, out, strerror(errno));
}

/* Block until the driver opens @fifo for writing and closes it. */
static void hold(const char *fifo)
{
	char buf[64];
	int fd = open(fifo, O_RDONLY);

	if (fd < 0)
		die("cannot open %s: %s", fifo, strerror(errno));
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static int cmd_ioctl(struct opts *o, int argc, char **argv)
{
	struct spec specs[MAX_SPECS];
	char text[4096];
	size_t off = 0;
	int n = argc;

	if (n < 1 || n > MAX_SPECS)
		die("ioctl: want 1 to %d LABEL=PATH,CMD arguments", MAX_SPECS);
	for (int i = 0; i < n; i++) {
		if (parse_spec(argv[i], &specs[i]))
			die("ioctl: bad spec '%s': want "
			    "LABEL=PATH,fionread|nv-version|nv-control|nv-none|kfd-version",
			    argv[i]);
		specs[i].fd = open(specs[i].path, O_RDWR | O_CLOEXEC);
		if (specs[i].fd < 0)
			die("cannot open %s: %s", specs[i].path, strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		time_ioctl(&specs[i], o->secs);
		off += snprintf(text + off, sizeof(text) - off, "%s %.2f %llu\n", specs[i].label,
				specs[i].ns, (unsigned long long)specs[i].n);
	}
	for (int i = 0; i < n; i++)
		close(specs[i].fd);
	write_results(o->out, text);
	if (o->hold)
		hold(o->hold);
	return 0;
}

/* ---- process churn ---- */

static void reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		die("child %d failed (status 0x%x)", pid, st);
}

static void one_process(const char *mode, const char *exe)
{
	char *argv[] = {(char *)exe, NULL};
	pid_t pid;

	if (!strcmp(mode, "spawn")) {
		int err = posix_spawn(&pid, exe, NULL, NULL, argv, environ);

		if (err)
			die("posix_spawn %s: %s", exe, strerror(err));
	} else {
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			if (!strcmp(mode, "fork-exec"))
				execv(exe, argv);
			_exit(!strcmp(mode, "fork-exec") ? 127 : 0);
		}
	}
	reap(pid);
}

/* One step of a procs loop; returns what it counts. getppid: a system call no tracer of this
 * benchmark follows. What a syscall tracepoint costs the calls it does not trace (the
 * kernel's slow path) is the floor of the churn loops. */
static __u64 procs_step(const char *mode, const char *exe)
{
	if (strcmp(mode, "getppid")) {
		one_process(mode, exe);
		return 1;
	}
	for (int i = 0; i < 64; i++)
		syscall(SYS_getppid);
	return 64;
}

static int cmd_procs(struct opts *o, int argc, char **argv)
{
	if (argc < 1)
		die("procs: want one or more of fork-exit, fork-exec, spawn, getppid");
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "fork-exit") && strcmp(argv[i], "fork-exec") &&
		    strcmp(argv[i], "spawn") && strcmp(argv[i], "getppid"))
			die("procs: unknown loop '%s': want fork-exit, fork-exec, spawn or getppid",
			    argv[i]);
	for (int i = 0; i < argc; i++) {
		const char *mode = argv[i];
		__u64 t0, t, end, n = 0;

		end = now_ns() + secs_ns(0.05);
		while (now_ns() < end)
			procs_step(mode, o->exe);
		t0 = now_ns();
		end = t0 + secs_ns(o->secs);
		do {
			n += procs_step(mode, o->exe);
			t = now_ns();
		} while (t < end);
		printf("%s %.1f %llu\n", mode, n * 1e9 / (t - t0), (unsigned long long)n);
		fflush(stdout);
	}
	return 0;
}

/* utime + stime of @pid in seconds, from /proc/PID/stat; -1 on error. */
static double proc_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')'); /* comm may hold spaces */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static void print_status(pid_t pid)
{
	static const char *const keys[] = {"VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"};
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		die("cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t kl = strlen(keys[i]);
			unsigned long kb;

			if (!strncmp(line, keys[i], kl) && line[kl] == ':' &&
			    sscanf(line + kl + 1, "%lu", &kb) == 1)
				printf("%s_kb=%lu\n", keys[i], kb);
		}
	}
	fclose(f);
}

static int cmd_churn(struct opts *o)
{
	pid_t watch = o->watch ? o->watch : getppid();
	double cpu0 = proc_cpu(watch), cpu1;
	__u64 t0 = now_ns(), t1;
	struct timespec settle = {0, 100 * 1000 * 1000};

	for (long i = 0; i < o->procs; i++)
		one_process("fork-exec", o->exe);
	t1 = now_ns();
	nanosleep(&settle, NULL); /* let the collector drain its ring buffer */
	cpu1 = proc_cpu(watch);
	printf("procs=%ld\nsecs=%.3f\nwatch_pid=%d\ncpu_start_s=%.2f\ncpu_end_s=%.2f\n", o->procs,
	       (t1 - t0) / 1e9, watch, cpu0, cpu1);
	print_status(watch);
	return 0;
}

/* ---- calls: uprobe targets with a chosen first instruction ---- */

/* Each returns its argument + 1; the first instruction is what the uprobe replaces. */
__asm__(".text\n"
	".globl bench_fn_nop5\n.type bench_fn_nop5, @function\n"
	"bench_fn_nop5:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tlea 0x1(%rdi),%rax\n\tret\n"
	".size bench_fn_nop5, .-bench_fn_nop5\n"
	".globl bench_fn_push\n.type bench_fn_push, @function\n"
	"bench_fn_push:\n\tpush %rbp\n\tlea 0x1(%rdi),%rax\n\tpop %rbp\n\tret\n"
	".size bench_fn_push, .-bench_fn_push\n"
	".globl bench_fn_endbr64\n.type bench_fn_endbr64, @function\n"
	"bench_fn_endbr64:\n\tendbr64\n\tlea 0x1(%rdi),%rax\n\tret\n"
	".size bench_fn_endbr64, .-bench_fn_endbr64\n");

long bench_fn_nop5(long x);
long bench_fn_push(long x);
long bench_fn_endbr64(long x);

static double time_calls(long (*fn)(long), double secs)
{
	long (*volatile f)(long) = fn;
	__u64 t0, t, end, n = 0;
	long acc = 0;

	end = now_ns() + secs_ns(0.02);
	while (now_ns() < end)
		acc = f(acc);
	t0 = now_ns();
	end = t0 + secs_ns(secs);
	do {
		for (int i = 0; i < 64; i++)
			acc = f(acc);
		n += 64;
		t = now_ns();
	} while (t < end);
	if (acc == 42)
		fputc(' ', stderr); /* keep acc alive */
	return (double)(t - t0) / n;
}

static int cmd_call(struct opts *o, const char *which)
{
	long (*fn)(long);

	if (!strcmp(which, "nop5"))
		fn = bench_fn_nop5;
	else if (!strcmp(which, "push"))
		fn = bench_fn_push;
	else if (!strcmp(which, "endbr64"))
		fn = bench_fn_endbr64;
	else
		die("call: unknown function '%s': want nop5, push or endbr64", which);
	printf("%s %.2f\n", which, time_calls(fn, o->secs));
	return 0;
}

typedef int (*lib_fn)(void *, void *, void *, void *);
static lib_fn lib_target;
static __u64 lib_scratch[4][64];

static long call_lib_once(long x)
{
	return x + lib_target(lib_scratch[0], lib_scratch[1], lib_scratch[2], lib_scratch[3]);
}

static int cmd_call_lib(struct opts *o, int argc, char **argv)
{
	void *h;

	if (argc < 2)
		die("call-lib: want LIB SYMBOL...");
	h = dlopen(argv[0], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("cannot load %s: %s", argv[0], dlerror());
	for (int i = 1; i < argc; i++) {
		lib_target = (lib_fn)dlsym(h, argv[i]);
		if (!lib_target)
			die("%s has no symbol %s", argv[0], argv[i]);
		printf("%s %.2f\n", argv[i], time_calls(call_lib_once, o->secs));
		fflush(stdout);
	}
	return 0;
}

/* ---- paced event generation ---- */

struct pacer {
	pthread_t th;
	const char *path;
	double rate; /* calls per second for this thread */
	__u64 total;
	__u64 t0;
	__u64 end; /* stop here even when behind: the achieved rate tells */
	__u64 done;
};

/* _IO('F', 0) at a steady pace: sleep when more than 200 us ahead, spin when less. */
static void *pace(void *arg)
{
	struct pacer *p = arg;
	double per_ns = p->rate / 1e9;
	int fd = open(p->path, O_RDWR | O_CLOEXEC);
	__u64 n = 0;

	if (fd < 0)
		die("cannot open %s: %s", p->path, strerror(errno));
	while (n < p->total) {
		__u64 t = now_ns(), due = (__u64)((t - p->t0) * per_ns);

		if (t >= p->end)
			break;
		if (due > p->total)
			due = p->total;
		if (n >= due) {
			double ahead_ns = (n + 1) / per_ns - (t - p->t0);

			if (ahead_ns > 200e3) {
				struct timespec ts = {0, (long)(ahead_ns - 100e3)};

				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (due > n + 256)
			due = n + 256; /* look at the clock now and then when behind */
		for (; n < due; n++)
			if (ioctl(fd, NV_IOCTL_NONE, 0) && errno != ENOTTY)
				die("_IO('F', 0) on %s: %s", p->path, strerror(errno));
	}
	close(fd);
	p->done = n;
	return NULL;
}

static int cmd_rate(struct opts *o, const char *path)
{
	struct pacer p[MAX_THREADS];
	__u64 t0, t, n = 0;

	if (o->rate <= 0)
		die("rate: --rate N (calls per second) is required");
	if (o->threads < 1 || o->threads > MAX_THREADS)
		die("rate: --threads must be 1 to %d", MAX_THREADS);
	t0 = now_ns();
	for (long i = 0; i < o->threads; i++) {
		p[i] = (struct pacer){.path = path,
				      .rate = (double)o->rate / o->threads,
				      .t0 = t0,
				      .end = t0 + secs_ns(o->secs)};
		p[i].total = (__u64)(p[i].rate * o->secs);
		if (pthread_create(&p[i].th, NULL, pace, &p[i]))
			die("cannot create a thread");
	}
	for (long i = 0; i < o->threads; i++) {
		pthread_join(p[i].th, NULL);
		n += p[i].done;
	}
	t = now_ns();
	printf("rate target=%ld achieved=%.0f calls=%llu secs=%.3f threads=%ld\n", o->rate,
	       n * 1e9 / (t - t0), (unsigned long long)n, (t - t0) / 1e9, o->threads);
	return 0;
}

/* ---- RM traffic on the emulated driver, for a realistic large trace ---- */

static __u32 rm_alloc(int fd, __u32 client, __u32 parent, __u32 cls)
{
	struct nvos64_params p = {.hRoot = client, .hObjectParent = parent, .hClass = cls};

	if (ioctl(fd, NV_IOCTL_RM_ALLOC, &p) || p.status != NV_OK)
		die("RM_ALLOC class 0x%x: %s (status 0x%x)", cls, strerror(errno), p.status);
	return p.hObjectNew;
}

static int cmd_gpu_mix(struct opts *o, const char *dir)
{
	struct nv_rm_api_version v = {.cmd = NV_RM_API_VERSION_CMD_RELAXED};
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/nvidiactl", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	strcpy(v.versionString, "595.45.04");
	if (ioctl(fd, NV_IOCTL_CHECK_VERSION_STR, &v))
		die("CHECK_VERSION_STR on %s: %s", path, strerror(errno));
	for (long i = 0; i < o->iters; i++) {
		__u32 client = rm_alloc(fd, 0, 0, NV01_ROOT_CLIENT);
		__u32 dev = rm_alloc(fd, client, client, NV01_DEVICE_0);
		__u32 sub = rm_alloc(fd, client, dev, NV20_SUBDEVICE_0);
		struct nvos00_params fr = {.hRoot = client, .hObjectOld = client};

		for (int k = 0; k < 4; k++) {
			__u64 params[2] = {1, 0};
			struct nvos54_params c = {
			    .hClient = client,
			    .hObject = sub,
			    .cmd = NV2080_CTRL_CMD_GPU_GET_GID_INFO,
			    .params = (__u64)(unsigned long)params,
			    .paramsSize = sizeof(params),
			};

			if (ioctl(fd, NV_IOCTL_RM_CONTROL, &c))
				die("RM_CONTROL: %s", strerror(errno));
		}
		if (ioctl(fd, NV_IOCTL_RM_FREE, &fr) || fr.status != NV_OK)
			die("RM_FREE: %s (status 0x%x)", strerror(errno), fr.status);
	}
	close(fd);
	printf("gpu-mix iterations=%ld ioctls=%ld\n", o->iters, 1 + o->iters * 8);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: loops ioctl [--secs S] [--out FILE] [--hold FIFO] LABEL=PATH,CMD...\n"
		"       loops procs [--secs S] [--exe PATH] fork-exit|fork-exec|spawn|getppid...\n"
		"       loops churn [--procs N] [--exe PATH] [--watch PID]\n"
		"       loops call [--secs S] nop5|push|endbr64\n"
		"       loops call-lib [--secs S] LIB SYMBOL...\n"
		"       loops rate [--secs S] [--threads T] --rate N PATH\n"
		"       loops gpu-mix [--iters N] DIR\n"
		"       loops stamp\n");
}

static long parse_long(const char *what, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		die("bad %s '%s': want a non-negative integer", what, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"secs", required_argument, NULL, 's'},
	    {"out", required_argument, NULL, 'o'},
	    {"hold", required_argument, NULL, 'H'},
	    {"exe", required_argument, NULL, 'e'},
	    {"procs", required_argument, NULL, 'n'},
	    {"iters", required_argument, NULL, 'i'},
	    {"rate", required_argument, NULL, 'r'},
	    {"watch", required_argument, NULL, 'w'},
	    {"threads", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	struct opts o = {
	    .secs = 0.25, .exe = "/bin/true", .procs = 10000, .iters = 10000, .threads = 1};
	const char *cmd;
	char *end;
	int c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "+h", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.secs = strtod(optarg, &end);
			if (*end || o.secs <= 0)
				die("bad --secs '%s': want seconds > 0", optarg);
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'H':
			o.hold = optarg;
			break;
		case 'e':
			o.exe = optarg;
			break;
		case 'n':
			o.procs = parse_long("--procs", optarg);
			break;
		case 'i':
			o.iters = parse_long("--iters", optarg);
			break;
		case 'r':
			o.rate = parse_long("--rate", optarg);
			break;
		case 't':
			o.threads = parse_long("--threads", optarg);
			break;
		case 'w':
			o.watch = parse_long("--watch", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "ioctl"))
		return cmd_ioctl(&o, argc, argv);
	if (!strcmp(cmd, "procs"))
		return cmd_procs(&o, argc, argv);
	if (!strcmp(cmd, "churn"))
		return cmd_churn(&o);
	if (!strcmp(cmd, "call") && argc == 1)
		return cmd_call(&o, argv[0]);
	if (!strcmp(cmd, "call-lib"))
		return cmd_call_lib(&o, argc, argv);
	if (!strcmp(cmd, "rate") && argc == 1)
		return cmd_rate(&o, argv[0]);
	if (!strcmp(cmd, "stamp")) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	if (!strcmp(cmd, "gpu-mix") && argc == 1)
		return cmd_gpu_mix(&o, argv[0]);
	usage(stderr);
	return 2;
}
