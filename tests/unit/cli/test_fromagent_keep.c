// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record --from-agent's filter of the agent's node-wide records (cli/fromagent_keep.c, issue 43
 * item 7): the job's user reads the trace, so a library the agent probed for another user (a
 * path in their home) or a device of theirs never reaches it; what the job's processes mapped
 * or opened, and root's files, do.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>

#include "cli/fromagent_keep.h"
#include "gpuctx_events.h"

struct seen {
	__u32 types[16];
	char paths[16][GCTX_PATH_LEN];
	int n;
};

static void collect(void *ctx, __u32 type, const void *data, __u32 len)
{
	struct seen *s = ctx;

	(void)len;
	s->types[s->n] = type;
	if (type == GCTX_REC_PROBE)
		snprintf(s->paths[s->n], GCTX_PATH_LEN, "%s",
			 ((const struct gctx_rec_probe *)data)->lib);
	else
		snprintf(s->paths[s->n], GCTX_PATH_LEN, "%s",
			 ((const struct gctx_rec_device *)data)->path);
	s->n++;
}

/* A file in dir owned by uid (root may give it away; otherwise the test cannot run). */
static int make_file(const char *dir, const char *name, uid_t uid, char *path, struct stat *st)
{
	FILE *f;

	snprintf(path, GCTX_PATH_LEN, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("x", f);
	fclose(f);
	if (chown(path, uid, uid))
		return -1;
	return stat(path, st);
}

static struct gctx_rec_probe probe(const char *lib)
{
	struct gctx_rec_probe p = {.fn = 1};

	snprintf(p.lib, sizeof(p.lib), "%s", lib);
	snprintf(p.symbol, sizeof(p.symbol), "cuInit");
	return p;
}

static struct gctx_rec_device device(const char *path, const struct stat *st)
{
	struct gctx_rec_device d = {.kind = 1, .ino = st->st_ino};

	snprintf(d.path, sizeof(d.path), "%s", path);
	return d;
}

static void test_other_users_files_left_out(void **state)
{
	char dir[] = "/tmp/gpuctx-keep.XXXXXX", alice[GCTX_PATH_LEN], mine[GCTX_PATH_LEN];
	char sys[GCTX_PATH_LEN], adev[GCTX_PATH_LEN], mydev[GCTX_PATH_LEN];
	struct stat sa, sm, ss, sad, smd;
	struct gctx_rec_probe pa, pm, ps;
	struct gctx_rec_device da, dm;
	struct gctx_ev_libmap map = {.hdr = {.type = GCTX_EV_LIBMAP, .tgid = 10}};
	struct gctx_ev_open op = {.hdr = {.type = GCTX_EV_OPEN, .tgid = 10}};
	struct gctx_ev_fork fork = {.hdr = {.type = GCTX_EV_FORK, .tgid = 10}};
	struct seen seen = {0};
	struct fa_keep *k;

	(void)state;
	if (geteuid()) {
		skip(); /* files of another user need root to make */
		return;
	}
	assert_non_null(mkdtemp(dir));
	assert_int_equal(make_file(dir, "libcuda-alice.so.1", 65534, alice, &sa), 0);
	assert_int_equal(make_file(dir, "libcuda-mine.so.1", 65533, mine, &sm), 0);
	assert_int_equal(make_file(dir, "libcuda-system.so.1", 0, sys, &ss), 0);
	assert_int_equal(make_file(dir, "dev-alice", 65534, adev, &sad), 0);
	assert_int_equal(make_file(dir, "dev-mine", 65533, mydev, &smd), 0);
	pa = probe(alice);
	pm = probe(mine);
	ps = probe(sys);
	da = device(adev, &sad);
	dm = device(mydev, &smd);

	k = fa_keep__new();
	assert_non_null(k);
	/* the agent's node-wide records come first: held, nothing written yet */
	assert_int_equal(fa_keep__take(k, GCTX_REC_PROBE, &pa, sizeof(pa)), 1);
	assert_int_equal(fa_keep__take(k, GCTX_REC_PROBE, &pm, sizeof(pm)), 1);
	assert_int_equal(fa_keep__take(k, GCTX_REC_PROBE, &ps, sizeof(ps)), 1);
	assert_int_equal(fa_keep__take(k, GCTX_REC_DEVICE, &da, sizeof(da)), 1);
	assert_int_equal(fa_keep__take(k, GCTX_REC_DEVICE, &dm, sizeof(dm)), 1);
	/* the job's own records pass at once; its mapping and its open are noted */
	map.dev = (major(sm.st_dev) << 20) | minor(sm.st_dev);
	map.ino = sm.st_ino;
	op.ino = smd.st_ino;
	assert_int_equal(fa_keep__take(k, GCTX_EV_FORK, &fork, sizeof(fork)), 0);
	assert_int_equal(fa_keep__take(k, GCTX_EV_LIBMAP, &map, sizeof(map)), 0);
	assert_int_equal(fa_keep__take(k, GCTX_EV_OPEN, &op, sizeof(op)), 0);

	assert_int_equal(fa_keep__flush(k, collect, &seen), 2);
	assert_int_equal(seen.n, 3);
	assert_string_equal(seen.paths[0], mine);  /* mapped by the job */
	assert_string_equal(seen.paths[1], sys);   /* root's */
	assert_string_equal(seen.paths[2], mydev); /* opened by the job */
	assert_int_equal(seen.types[2], GCTX_REC_DEVICE);
	for (int i = 0; i < seen.n; i++)
		assert_null(strstr(seen.paths[i], "alice"));
	fa_keep__free(k);

	/* a library gone by the end: nobody's to show */
	k = fa_keep__new();
	assert_int_equal(fa_keep__take(k, GCTX_REC_PROBE, &ps, sizeof(ps)), 1);
	unlink(sys);
	seen.n = 0;
	assert_int_equal(fa_keep__flush(k, collect, &seen), 1);
	assert_int_equal(seen.n, 0);
	fa_keep__free(k);
	fa_keep__free(NULL);

	unlink(alice);
	unlink(mine);
	unlink(adev);
	unlink(mydev);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_other_users_files_left_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
