// SPDX-License-Identifier: GPL-2.0
/*
 * forkprobe CALLS CHILDREN: the cost of issue 42's per-child probes, seen from the process.
 * cuInit through libcuda.so.1 (the dynamic loader's: the test double under LD_LIBRARY_PATH),
 * then:
 *   healthy_ns     ns per cuDeviceGetCount in this process (a function probed for forked
 *                  children only), before any fork
 *   healthy_kid_ns the same while a forked child holds its probes on the same library file
 *   child_ns       ns per cuDeviceGetCount in that child (probed there), CALLS / 10 calls
 *   start_ns       fork() to the child's first instruction, for CHILDREN children one after
 *                  another (each exits at once): the hold, the attach and the release
 * One JSON line on stdout.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*count_fn)(int *);

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static double per_call(count_fn count, long calls)
{
	unsigned long long t0 = now_ns();
	int n;

	for (long i = 0; i < calls; i++)
		count(&n);
	return (double)(now_ns() - t0) / calls;
}

/* A child that reports its start time on fd w, then (h >= 0) its calls' cost, and waits for
 * the other end of h (hw, closed here) to be closed. */
static pid_t child(int w, int h, int hw, count_fn count, long calls)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	unsigned long long t = now_ns();
	double ns;
	char c;

	if (write(w, &t, sizeof(t)) != sizeof(t))
		_exit(1);
	if (h >= 0) {
		close(hw);
		ns = per_call(count, calls);
		if (write(w, &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		if (read(h, &c, 1) < 0)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 200000, kids = argc > 2 ? atol(argv[2]) : 20;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	int (*init)(unsigned int);
	int rep[2], hold[2], st;
	unsigned long long t0, t1;
	double healthy, healthy_kid, child_ns;
	count_fn count;
	pid_t pid;

	if (!lib || !(init = (int (*)(unsigned int))dlsym(lib, "cuInit")) ||
	    !(count = (count_fn)dlsym(lib, "cuDeviceGetCount")) || init(0)) {
		fprintf(stderr, "forkprobe: no usable libcuda.so.1\n");
		return 1;
	}
	if (pipe(rep) || pipe(hold))
		return 1;
	healthy = per_call(count, calls);
	t0 = now_ns();
	pid = child(rep[1], hold[0], hold[1], count, calls / 10);
	if (read(rep[0], &t1, sizeof(t1)) != sizeof(t1) ||
	    read(rep[0], &child_ns, sizeof(child_ns)) != sizeof(child_ns))
		return 1;
	healthy_kid = per_call(count, calls);
	close(hold[1]);
	waitpid(pid, &st, 0);
	printf("{\"healthy_ns\": %.1f, \"healthy_kid_ns\": %.1f, \"child_ns\": %.1f, "
	       "\"start_ns\": [%llu",
	       healthy, healthy_kid, child_ns, t1 - t0);
	for (long i = 0; i < kids; i++) {
		t0 = now_ns();
		pid = child(rep[1], -1, -1, count, 0);
		if (read(rep[0], &t1, sizeof(t1)) != sizeof(t1))
			return 1;
		waitpid(pid, &st, 0);
		printf(", %llu", t1 - t0);
	}
	printf("]}\n");
	return 0;
}
