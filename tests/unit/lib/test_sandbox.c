// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the sandboxed helpers (issue 27): what a helper can no longer do, and that
 * its crash or stall costs the caller a deadline, never more. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "lib/sandbox.h"

static const struct gctx_sandbox_opts opts = {.mem_bytes = 64ul << 20, .cpu_s = 5, .nofile = 16};

struct probe {
	int uid, wopen, ropen, sock, fork_, kill_init, fds, getfd, setown;
};

/* What a helper tries, reported back: -errno or the value. */
static void prober(int fd)
{
	struct probe p = {0};
	int f;

	p.uid = getuid();
	f = open("/tmp/gpuctx-sandbox-probe", O_WRONLY | O_CREAT, 0600);
	p.wopen = f < 0 ? -errno : f;
	f = open("/proc/self/status", O_RDONLY);
	p.ropen = f < 0 ? -errno : f;
	f = socket(AF_INET, SOCK_STREAM, 0);
	p.sock = f < 0 ? -errno : f;
	p.fork_ = fork() < 0 ? -errno : 0;
	p.kill_init = kill(1, 0) ? -errno : 0;
	/* only the socket (3) is open beyond 0-2 */
	p.fds = fcntl(4, F_GETFD) < 0 ? 0 : 1;
	p.getfd = fcntl(fd, F_GETFD) < 0 ? -errno : 0;
	p.setown = fcntl(fd, F_SETOWN, 1) < 0 ? -errno : 0;
	gctx_sandbox_send(fd, &p, sizeof(p), NULL, 0, -1, ~0ull);
	for (;;)
		pause();
}

static void test_confined(void **state)
{
	struct gctx_sandbox sb;
	struct probe p;
	int leak = open("/dev/null", O_RDONLY); /* not inherited */

	(void)state;
	assert_int_equal(gctx_sandbox__start(&sb, &opts, prober), 0);
	assert_int_equal(
	    gctx_sandbox_recv(sb.fd, &p, sizeof(p), NULL, gctx_sandbox_now_ms() + 5000), sizeof(p));
	gctx_sandbox__stop(&sb);
	close(leak);
	if (geteuid() == 0)
		assert_int_equal(p.uid, 65534);
	assert_int_equal(p.wopen, -EPERM);
	assert_int_equal(p.ropen, -EPERM); /* read_files not asked for */
	assert_int_equal(p.sock, -EPERM);
	assert_int_equal(p.fork_, -EPERM);
	assert_int_equal(p.kill_init, -EPERM);
	assert_int_equal(p.fds, 0);
	assert_int_equal(p.getfd, 0);
	assert_int_equal(p.setown, -EPERM);
	assert_int_equal(access("/tmp/gpuctx-sandbox-probe", F_OK), -1);
}

static void crasher(int fd)
{
	volatile int *null_ptr = NULL;

	*null_ptr = 1;
}

static void staller(int fd)
{
	for (;;)
		;
}

/* A helper that crashes is EOF at once; one that spins is a timeout at the deadline. */
static void test_crash_and_stall(void **state)
{
	struct gctx_sandbox sb;
	char b[8];
	__u64 t0;

	(void)state;
	assert_int_equal(gctx_sandbox__start(&sb, &opts, crasher), 0);
	assert_int_equal(gctx_sandbox_recv(sb.fd, b, sizeof(b), NULL, gctx_sandbox_now_ms() + 5000),
			 -EPIPE);
	gctx_sandbox__stop(&sb);
	assert_int_equal(gctx_sandbox__start(&sb, &opts, staller), 0);
	t0 = gctx_sandbox_now_ms();
	assert_int_equal(gctx_sandbox_recv(sb.fd, b, sizeof(b), NULL, t0 + 200), -ETIMEDOUT);
	assert_true(gctx_sandbox_now_ms() - t0 < 2000);
	gctx_sandbox__stop(&sb);
	assert_int_equal(kill(sb.pid ? sb.pid : 0, 0) == 0 && sb.pid, 0);
}

static void echo(int fd)
{
	char b[16];
	ssize_t n;

	while ((n = gctx_sandbox_recv(fd, b, sizeof(b), NULL, ~0ull)) > 0)
		gctx_sandbox_send(fd, b, n, NULL, 0, -1, ~0ull);
	_exit(0);
}

static void *starter(void *arg)
{
	gctx_sandbox__start(arg, &opts, echo);
	usleep(200000); /* the helper has settled in while this thread lived */
	return NULL;
}

/* A helper started by a thread (the unwinding one) serves on after that thread exits (the
 * end of recording, when the main thread still symbolises call sites). */
static void test_thread_exit(void **state)
{
	struct gctx_sandbox sb = {0};
	__u64 dl = gctx_sandbox_now_ms() + 5000;
	pthread_t t;
	char b[4];

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, starter, &sb), 0);
	pthread_join(t, NULL);
	assert_true(sb.pid > 0);
	usleep(100000);
	assert_int_equal(gctx_sandbox_send(sb.fd, "abc", 4, NULL, 0, -1, dl), 0);
	assert_int_equal(gctx_sandbox_recv(sb.fd, b, sizeof(b), NULL, dl), 4);
	assert_string_equal(b, "abc");
	gctx_sandbox__stop(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_confined),
	    cmocka_unit_test(test_crash_and_stall),
	    cmocka_unit_test(test_thread_exit),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
