// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The spool's shares (agent/spool.c, issue 43 item 4): a dump's name says whose it is; over
 * the cap, the owner with the most loses its oldest, so one job's crash loop never deletes
 * another job's dump; and one owner's repeats of one failure are folded past a few.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agent/spool.h"

static void test_name_says_the_job(void **state)
{
	char name[SPOOL_NAME_LEN], job[SPOOL_JOB_LEN];

	spool_name(name, sizeof(name), 1764324900ull * 1000000000ull, "slurm-42.0", "my-app2", 1234,
		   "poison-fork");
	assert_string_equal(name, "20251128T101500Z-slurm-42.0-my_app2-1234-poison-fork.gctx");
	assert_true(spool_name_job(name, job, sizeof(job)));
	assert_string_equal(job, "slurm-42.0");
	spool_name(name, sizeof(name), 0, "", "python3", 77, "crash");
	assert_true(spool_name_job(name, job, sizeof(job)));
	assert_string_equal(job, "");
	spool_name(name, sizeof(name), 0, "k8s-8f3c2a1b", "123", 9, "crash");
	assert_true(spool_name_job(name, job, sizeof(job)));
	assert_string_equal(job, "k8s-8f3c2a1b");
	assert_false(spool_name_job("notes.txt", job, sizeof(job)));
}

static void test_owner_of_a_job(void **state)
{
	char job[SPOOL_JOB_LEN], owner[48];

	spool_owner("slurm-42.0", owner, sizeof(owner));
	assert_string_equal(owner, "slurm-42");
	spool_owner("slurm-42.batch", owner, sizeof(owner));
	assert_string_equal(owner, "slurm-42");
	spool_owner("nginx.service", owner, sizeof(owner));
	assert_string_equal(owner, "nginx.service");
	/* a user's own units are the user's: named as anything, they stay one owner */
	spool_job_label("/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", job,
			sizeof(job));
	assert_string_equal(job, "uid1000");
	spool_job_label("/user.slice/user-1000.slice/session-3.scope", job, sizeof(job));
	assert_string_equal(job, "uid1000");
	spool_job_label("/system.slice/nginx.service", job, sizeof(job));
	assert_string_equal(job, "nginx.service");
}

static void put(const char *dir, const char *job, __u32 pid, time_t when, size_t size)
{
	char name[SPOOL_NAME_LEN], path[512];
	struct timespec t[2] = {{when, 0}, {when, 0}};
	int fd;

	spool_name(name, sizeof(name), (__u64)when * 1000000000ull, job, "python3", pid, "crash");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	assert_int_equal(futimens(fd, t), 0);
	close(fd);
}

static int count(const char *dir, const char *job)
{
	char cmd[600];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c -- '-%s-python3-'", dir, job);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_prune_takes_from_the_biggest(void **state)
{
	char dir[64] = "/tmp/gpuctx-spool-share-XXXXXX", cmd[128];
	int fd;

	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* two jobs' dumps, the oldest first; then a crash loop of a third */
	put(dir, "slurm-7.0", 1, 1000, 100);
	put(dir, "slurm-8.0", 2, 1001, 100);
	for (int i = 0; i < 30; i++)
		put(dir, "slurm-9.0", 100 + i, 2000 + i, 100);
	spool_prune(fd, 1 << 30, 10, NULL);
	assert_int_equal(count(dir, "slurm-7.0"), 1);
	assert_int_equal(count(dir, "slurm-8.0"), 1);
	assert_int_equal(count(dir, "slurm-9.0"), 8);
	/* by bytes: the job with the most bytes loses first, whatever their age */
	put(dir, "slurm-10.0", 3, 500, 5000);
	spool_prune(fd, 1800, 100, NULL);
	assert_int_equal(count(dir, "slurm-10.0"), 0);
	assert_int_equal(count(dir, "slurm-7.0"), 1);
	assert_int_equal(count(dir, "slurm-9.0"), 8);
	spool_prune(fd, 300, 100, NULL);
	assert_int_equal(count(dir, "slurm-7.0"), 1);
	assert_int_equal(count(dir, "slurm-8.0"), 1);
	assert_int_equal(count(dir, "slurm-9.0"), 1);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_same_failure_folded(void **state)
{
	static struct spool_same s;
	__u64 t = 1000000000ull;
	int folded = 0, told = 0;

	for (int i = 0; i < 200; i++) {
		int r = spool_same_allow(&s, "slurm-9", "crash", t + i);

		folded += r <= 0;
		told += r < 0;
	}
	assert_int_equal(folded, 200 - SPOOL_SAME_MAX);
	assert_int_equal(told, 1);
	assert_int_equal(s.folded, 200 - SPOOL_SAME_MAX);
	/* another owner, or another kind, is not held back */
	assert_int_equal(spool_same_allow(&s, "slurm-7", "crash", t), 1);
	assert_int_equal(spool_same_allow(&s, "slurm-9", "poison-fork", t), 1);
	/* a window later, again */
	assert_int_equal(spool_same_allow(&s, "slurm-9", "crash", t + SPOOL_SAME_WINDOW_NS), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_name_says_the_job),
	    cmocka_unit_test(test_owner_of_a_job),
	    cmocka_unit_test(test_prune_takes_from_the_biggest),
	    cmocka_unit_test(test_same_failure_folded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
