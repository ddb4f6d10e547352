// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of stacks in the model (model/stacks.c) and their sites (output/sites.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/model.h"
#include "output/report/sites.h"

struct rec {
	struct gctx_rec_stack h;
	struct gctx_rec_frame f[8];
};

static void frame(struct rec *r, __u32 kind, const char *fn, const char *file, __u32 line,
		  const char *module)
{
	struct gctx_rec_frame *f = &r->f[r->h.nframes++];

	memset(f, 0, sizeof(*f));
	f->kind = kind;
	snprintf(f->function, sizeof(f->function), "%s", fn);
	snprintf(f->file, sizeof(f->file), "%s", file);
	snprintf(f->module, sizeof(f->module), "%s", module);
	f->line = line;
	f->offset = 0x51;
}

static void start(struct rec *r, __u32 pid, __u32 role, __u32 trigger, __u64 key)
{
	memset(r, 0, sizeof(*r));
	r->h.pid = pid;
	r->h.tid = pid;
	r->h.role = role;
	r->h.trigger = trigger;
	r->h.key = key;
}

static int feed(struct gctx_model *m, struct rec *r)
{
	return gctx_model__feed(m, GCTX_REC_STACK, r,
				sizeof(r->h) + r->h.nframes * sizeof(struct gctx_rec_frame));
}

/* A DataLoader-like Python stack: the site is the user's line, past torch and the stdlib. */
static void test_python_site(void **state)
{
	struct gctx_model *m = gctx_model__new();
	const struct gctx_rec_frame *site;
	const struct gctx_stack *s;
	struct rec r;
	char buf[512];

	(void)state;
	start(&r, 100, GCTX_STACK_FORK, 101, 0);
	frame(&r, GCTX_FRAME_NATIVE, "_Fork", "", 0, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	frame(&r, GCTX_FRAME_PYTHON, "Popen._launch",
	      "/usr/lib/python3.11/multiprocessing/popen_fork.py", 66, "");
	frame(&r, GCTX_FRAME_PYTHON, "DataLoader.__iter__",
	      "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", 435, "");
	frame(&r, GCTX_FRAME_NATIVE, "fcntl_ioctl", "", 0,
	      "/opt/py/lib/python3.12/lib-dynload/fcntl.so");
	frame(&r, GCTX_FRAME_PYTHON, "main", "/srv/train.py", 40, "");
	frame(&r, GCTX_FRAME_PYTHON, "<module>", "/srv/train.py", 50, "");
	assert_int_equal(feed(m, &r), 0);
	assert_int_equal(gctx_model__nstacks(m), 1);
	s = gctx_model__stack_for(m, 100, GCTX_STACK_FORK, 101);
	assert_non_null(s);
	assert_int_equal(s->site, 4);
	assert_null(gctx_model__stack_for(m, 100, GCTX_STACK_FORK, 999)); /* another child */
	assert_null(gctx_model__stack_for(m, 100, GCTX_STACK_INIT, 0));
	site = gctx_model__site(m, 100, GCTX_STACK_FORK);
	assert_non_null(site);
	assert_string_equal(site->function, "main");
	gctx_site_format(s, buf, sizeof(buf));
	assert_string_equal(buf, "/srv/train.py:40 in main <- "
				 "torch/utils/data/dataloader.py:435 in DataLoader.__iter__");
	gctx_model__free(m);
}

/* Native: past libc and the CUDA library to the program; the CUDA entry point is named. */
static void test_native_site(void **state)
{
	struct gctx_model *m = gctx_model__new();
	const struct gctx_stack *s;
	struct rec r;
	char buf[512];

	(void)state;
	start(&r, 7, GCTX_STACK_INIT, 3, 0xfeed);
	frame(&r, GCTX_FRAME_NATIVE, "__open", "open64.c", 41, "/lib/x86_64-linux-gnu/libc.so.6");
	frame(&r, GCTX_FRAME_NATIVE, "", "", 0, "/opt/cuda/libcuda.so.1");
	frame(&r, GCTX_FRAME_NATIVE, "cuInit", "", 0, "/opt/cuda/libcuda.so.1");
	frame(&r, GCTX_FRAME_NATIVE, "setup_gpu", "/src/app.c", 17, "/src/app");
	frame(&r, GCTX_FRAME_NATIVE, "main", "/src/app.c", 30, "/src/app");
	assert_int_equal(feed(m, &r), 0);
	s = gctx_model__stack_for(m, 7, GCTX_STACK_INIT, 0xbad); /* falls back to the first */
	assert_non_null(s);
	assert_int_equal(s->site, 3);
	gctx_site_format(s, buf, sizeof(buf));
	assert_string_equal(buf, "/src/app.c:17 in setup_gpu (app) <- cuInit+0x51 (libcuda.so.1)");
	gctx_frame_format(&s->frames[1], buf, sizeof(buf));
	assert_string_equal(buf, "libcuda.so.1+0x51"); /* no symbol */
	gctx_frame_format(&s->frames[0], buf, sizeof(buf));
	assert_string_equal(buf, "__open+0x51 (libc.so.6) at open64.c:41");
	gctx_model__free(m);
}

/* Records from a file are not trusted: bad frame counts, short records, no frames. */
static void test_malformed(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct rec r;
	char buf[256];

	(void)state;
	start(&r, 1, GCTX_STACK_USE, 3, 0);
	frame(&r, GCTX_FRAME_PYTHON, "f", "/a.py", 1, "");
	r.h.nframes = 5; /* more than the record holds */
	assert_int_equal(gctx_model__feed(m, GCTX_REC_STACK, &r, sizeof(r.h) + sizeof(r.f[0])),
			 -EINVAL);
	r.h.nframes = 100000;
	assert_int_equal(gctx_model__feed(m, GCTX_REC_STACK, &r, sizeof(r)), -EINVAL);
	assert_int_equal(gctx_model__feed(m, GCTX_REC_STACK, &r, 10), -EINVAL);
	/* unterminated strings are cut, not read past */
	start(&r, 2, GCTX_STACK_CRASH, 11, 0);
	frame(&r, GCTX_FRAME_PYTHON, "f", "/a.py", 1, "");
	memset(r.f[0].function, 'x', sizeof(r.f[0].function));
	snprintf(r.h.note, sizeof(r.h.note), "Python frames unavailable: unknown layout");
	assert_int_equal(feed(m, &r), 0);
	assert_int_equal(strlen(gctx_model__stack(m, 0)->frames[0].function), GCTX_SFN_LEN - 1);
	/* no frames at all: a site that says why */
	start(&r, 3, GCTX_STACK_INIT, 3, 0);
	snprintf(r.h.note, sizeof(r.h.note), "native frames unavailable: process gone");
	assert_int_equal(feed(m, &r), 0);
	assert_int_equal(gctx_model__stack(m, 1)->site, -1);
	gctx_site_format(gctx_model__stack(m, 1), buf, sizeof(buf));
	assert_string_equal(buf, "unknown (native frames unavailable: process gone)");
	assert_int_equal(gctx_model__nstacks(m), 2);
	/* the end-of-recording counters: the two first fields are the minimum */
	{
		__u64 d[2] = {3, 1};

		assert_null(gctx_model__stack_drops(m));
		assert_int_equal(gctx_model__feed(m, GCTX_REC_STACK_DROPS, d, 8), -EINVAL);
		assert_int_equal(gctx_model__feed(m, GCTX_REC_STACK_DROPS, d, sizeof(d)), 0);
		assert_int_equal(gctx_model__stack_drops(m)->lost, 3);
		assert_int_equal(gctx_model__stack_drops(m)->unresolved, 1);
		assert_int_equal(gctx_model__stack_drops(m)->resolved, 0);
	}
	gctx_model__free(m);
}

static void test_role_names(void **state)
{
	(void)state;
	assert_string_equal(gctx_stack_role_name(GCTX_STACK_INIT), "init");
	assert_string_equal(gctx_stack_role_name(GCTX_STACK_CRASH), "crash");
	assert_string_equal(gctx_stack_role_name(77), "?");
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_site),
		cmocka_unit_test(test_native_site),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_role_names),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
