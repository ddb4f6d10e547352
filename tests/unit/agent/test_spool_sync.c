// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A dump's last steps off the agent's event loop (agent/spool_sync.c): the loop hands a written
 * file over and goes on while the disk is slow; the file lands whole, its log line follows it,
 * a tree's rewrite lands after its earlier version, the spool cap holds, a failure is counted
 * and said, and stopping loses nothing queued.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agent/spool.h"
#include "lib/outfile.h"

struct logbook {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char lines[16][256];
	int n;
	bool hold; /* the sync thread waits in its first log line: a slow disk */
	bool held;
};

static void log_line(void *ctx, const char *line)
{
	struct logbook *lb = ctx;

	pthread_mutex_lock(&lb->lock);
	if (lb->n < 16)
		snprintf(lb->lines[lb->n++], sizeof(lb->lines[0]), "%s", line);
	lb->held = true;
	pthread_cond_broadcast(&lb->cond);
	while (lb->hold)
		pthread_cond_wait(&lb->cond, &lb->lock);
	pthread_mutex_unlock(&lb->lock);
}

/* A spool in a new directory and a sync thread logging into lb. */
struct fixture {
	struct logbook lb;
	struct spool_sync *s;
	char dir[64];
	int fd;
};

static void fixture_open(struct fixture *f, __u32 max_files, bool hold)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lb.lock, NULL);
	pthread_cond_init(&f->lb.cond, NULL);
	f->lb.hold = hold;
	snprintf(f->dir, sizeof(f->dir), "/tmp/gpuctx-spool-sync-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->fd >= 0);
	f->s = spool_sync__new(1 << 30, max_files, log_line, &f->lb);
	assert_non_null(f->s);
}

/* A dump written (not committed) as the agent's write_dump leaves it. */
static struct gctx_outfile *written(const char *dir, const char *name, const char *text)
{
	char path[512], err[256];
	struct gctx_outfile *o;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	o = gctx_outfile__new(path, err, sizeof(err));
	assert_non_null(o);
	assert_int_equal(write(gctx_outfile__fd(o), text, strlen(text)), (ssize_t)strlen(text));
	return o;
}

static void read_back(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	assert_true(n >= 0);
	buf[n] = 0;
	close(fd);
}

static int files_in(const char *dir)
{
	char cmd[600];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void fixture_close(struct fixture *f)
{
	char cmd[600];

	spool_sync__free(f->s);
	close(f->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
}

#define N1 "20261201T100000Z-job-1-poison-fork.gctx"
#define N2 "20261201T100001Z-job-2-crash.gctx"
#define N3 "20261201T100002Z-job-3-crash.gctx"

static const char *names[] = {N1, N2, N3}, *texts[] = {"a", "b", "c"};

/* While the disk is slow (the thread stuck in the first dump), pushes return; once it goes
 * on, every dump is in place, a rewrite after its earlier version, each line logged once the
 * file is there, and only new dumps counted. */
static void test_loop_goes_on_while_disk_is_slow(void **state)
{
	struct fixture f;
	char buf[64];
	__u64 dumps, errors;

	(void)state;
	fixture_open(&f, 100, true);
	assert_int_equal(spool_sync__push(f.s, written(f.dir, N1, "first"), f.fd, N1, "one", true),
			 0);
	pthread_mutex_lock(&f.lb.lock);
	while (!f.lb.held)
		pthread_cond_wait(&f.lb.cond, &f.lb.lock);
	pthread_mutex_unlock(&f.lb.lock);
	/* the thread is stuck: these return all the same */
	assert_int_equal(spool_sync__push(f.s, written(f.dir, N2, "crash"), f.fd, N2, "two", true),
			 0);
	assert_int_equal(
	    spool_sync__push(f.s, written(f.dir, N1, "again"), f.fd, N1, "one again", false), 0);
	spool_sync__counts(f.s, &dumps, &errors);
	assert_int_equal(dumps, 0); /* the first one's line is being logged, not yet counted */
	pthread_mutex_lock(&f.lb.lock);
	f.lb.hold = false;
	pthread_cond_broadcast(&f.lb.cond);
	pthread_mutex_unlock(&f.lb.lock);
	spool_sync__drain(f.s);
	spool_sync__counts(f.s, &dumps, &errors);
	assert_int_equal(dumps, 2);
	assert_int_equal(errors, 0);
	assert_int_equal(spool_sync__finished(f.s), 3);
	assert_int_equal(f.lb.n, 3);
	assert_string_equal(f.lb.lines[0], "one");
	assert_string_equal(f.lb.lines[1], "two");
	assert_string_equal(f.lb.lines[2], "one again");
	read_back(f.dir, N1, buf, sizeof(buf));
	assert_string_equal(buf, "again");
	read_back(f.dir, N2, buf, sizeof(buf));
	assert_string_equal(buf, "crash");
	assert_int_equal(files_in(f.dir), 2); /* no temporary file left */
	fixture_close(&f);
}

/* The cap: at most 2 dumps, the oldest go, the one just written stays. */
static void test_spool_cap_holds(void **state)
{
	struct fixture f;
	char buf[64];

	(void)state;
	fixture_open(&f, 2, false);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(spool_sync__push(f.s, written(f.dir, names[i], texts[i]), f.fd,
						  names[i], texts[i], true),
				 0);
		spool_sync__drain(f.s);
		usleep(20000); /* distinct modification times: "oldest" is by mtime */
	}
	assert_int_equal(files_in(f.dir), 2);
	read_back(f.dir, N2, buf, sizeof(buf));
	assert_string_equal(buf, "b");
	read_back(f.dir, N3, buf, sizeof(buf));
	assert_string_equal(buf, "c");
	fixture_close(&f);
}

/* A dump that cannot land (a directory where it goes) is counted and said, and the written
 * file is kept, not lost. */
static void test_failure_is_counted_and_said(void **state)
{
	struct fixture f;
	struct gctx_outfile *o;
	char path[512];
	__u64 dumps, errors;

	(void)state;
	fixture_open(&f, 100, false);
	o = written(f.dir, N1, "x");
	snprintf(path, sizeof(path), "%s/%s", f.dir, N1);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(spool_sync__push(f.s, o, f.fd, N1, "never", true), 0);
	spool_sync__drain(f.s);
	spool_sync__counts(f.s, &dumps, &errors);
	assert_int_equal(dumps, 0);
	assert_int_equal(errors, 1);
	assert_int_equal(f.lb.n, 1);
	assert_non_null(strstr(f.lb.lines[0], "cannot write a dump"));
	assert_non_null(strstr(f.lb.lines[0], "kept in"));
	assert_int_equal(files_in(f.dir), 2); /* the directory and the kept file */
	fixture_close(&f);
}

/* Stopping (SIGTERM's path) finishes what is queued first. */
static void test_stop_finishes_the_queue(void **state)
{
	struct fixture f;
	char buf[64];

	(void)state;
	fixture_open(&f, 100, false);
	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_sync__push(f.s, written(f.dir, names[i], texts[i]), f.fd,
						  names[i], texts[i], true),
				 0);
	spool_sync__free(f.s);
	f.s = NULL;
	assert_int_equal(f.lb.n, 3);
	for (int i = 0; i < 3; i++) {
		read_back(f.dir, names[i], buf, sizeof(buf));
		assert_string_equal(buf, texts[i]);
	}
	assert_int_equal(files_in(f.dir), 3);
	fixture_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loop_goes_on_while_disk_is_slow),
	    cmocka_unit_test(test_spool_cap_holds),
	    cmocka_unit_test(test_failure_is_counted_and_said),
	    cmocka_unit_test(test_stop_finishes_the_queue),
	};

	alarm(60); /* a push that waits on the stuck thread hangs: fail instead */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
