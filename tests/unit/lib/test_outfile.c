// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of output files: replaced only when complete, never through a symlink. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/outfile.h"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/gpuctx-outfile.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void put(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

static void expect(const char *path, const char *s)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f) ? buf : (strlen(s) ? NULL : buf));
	fclose(f);
	assert_string_equal(buf, s);
}

/* An existing file is replaced on commit, not before; the new one is 0600. */
static void test_replace_on_commit(void **state)
{
	struct gctx_outfile *o;
	char path[128], err[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/t.gctx", dir);
	put(path, "old");
	o = gctx_outfile__new(path, err, sizeof(err));
	assert_non_null(o);
	assert_int_equal(write(gctx_outfile__fd(o), "new", 3), 3);
	expect(path, "old");
	assert_int_equal(stat(gctx_outfile__tmp_path(o), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(gctx_outfile__commit(o, err, sizeof(err)), 0);
	gctx_outfile__free(o);
	expect(path, "new");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* Given up (a failed start or export): the path is untouched and the temporary file gone. */
static void test_abandon(void **state)
{
	struct gctx_outfile *o;
	char path[128], err[256], tmp[256];

	snprintf(path, sizeof(path), "%s/keep.gctx", dir);
	put(path, "keep");
	o = gctx_outfile__new(path, err, sizeof(err));
	assert_non_null(o);
	snprintf(tmp, sizeof(tmp), "%s", gctx_outfile__tmp_path(o));
	assert_int_equal(write(gctx_outfile__fd(o), "x", 1), 1);
	gctx_outfile__free(o);
	expect(path, "keep");
	assert_int_equal(access(tmp, F_OK), -1);
}

/* Never a symlink, a FIFO, a directory, a device, or "-". */
static void test_refusals(void **state)
{
	char path[128], target[128], err[256];

	snprintf(target, sizeof(target), "%s/target", dir);
	put(target, "root's");
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_null(gctx_outfile__new(path, err, sizeof(err)));
	assert_non_null(strstr(err, "symbolic link"));
	expect(target, "root's");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_null(gctx_outfile__new(path, err, sizeof(err)));
	assert_non_null(strstr(err, "FIFO"));
	assert_null(gctx_outfile__new(dir, err, sizeof(err)));
	assert_non_null(strstr(err, "directory"));
	assert_null(gctx_outfile__new("/dev/null", err, sizeof(err)));
	assert_non_null(strstr(err, "device"));
	assert_null(gctx_outfile__new("-", err, sizeof(err)));
	snprintf(path, sizeof(path), "%s/no/such/dir/t.gctx", dir);
	assert_null(gctx_outfile__new(path, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot create"));
	assert_null(strchr(err, '\n'));
}

/* A symlink planted while the output was written: not followed, the data kept and named. */
static void test_planted_before_commit(void **state)
{
	struct gctx_outfile *o;
	char path[128], target[128], err[256], tmp[256];

	snprintf(target, sizeof(target), "%s/victim", dir);
	put(target, "victim");
	snprintf(path, sizeof(path), "%s/late.gctx", dir);
	o = gctx_outfile__new(path, err, sizeof(err));
	assert_non_null(o);
	snprintf(tmp, sizeof(tmp), "%s", gctx_outfile__tmp_path(o));
	assert_int_equal(symlink(target, path), 0);
	assert_true(gctx_outfile__commit(o, err, sizeof(err)) < 0);
	gctx_outfile__free(o);
	expect(target, "victim");
	assert_non_null(strstr(err, tmp));
	assert_int_equal(access(tmp, F_OK), 0); /* what was recorded is not lost */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_replace_on_commit),
	    cmocka_unit_test(test_abandon),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_planted_before_commit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
