// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the fix hints (model/hints.c): the fix chosen for the evidence, and its words. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "model/analysis.h"

static void text(const struct gctx_hint_evidence *ev, char *buf, size_t len)
{
	gctx_hints__text(gctx_hints__choose(ev), ev, buf, len);
}

static void assert_has(const char *hay, const char *needle, bool want)
{
	if (!!strstr(hay, needle) != want) {
		print_error("%s \"%s\" in \"%s\"\n", want ? "missing" : "unexpected", needle, hay);
		fail();
	}
}

static void test_python_fork(void **state)
{
	struct gctx_hint_evidence ev = {
	    .kind = GCTX_INC_POISON_FORK, .python = true, .generations = 1};
	char buf[1024];

	text(&ev, buf, sizeof(buf));
	assert_true(!strncmp(buf, "Call multiprocessing.set_start_method(\"spawn\")", 46));
	assert_has(buf, "multiprocessing_context=\"spawn\"", true);
	assert_has(buf, "initialise CUDA only after the workers have started", true);
	assert_has(buf, "persistent_workers", false); /* one generation: not re-created */
	assert_has(buf, "posix_spawn", false);
	assert_int_equal(buf[strlen(buf) - 1], '.');
}

static void test_dataloader_epochs_hip(void **state)
{
	struct gctx_hint_evidence ev = {.kind = GCTX_INC_POISON_FORK,
					.python = true,
					.dataloader = true,
					.hip = true,
					.generations = 3};
	__u32 f = gctx_hints__choose(&ev);
	char buf[1024];

	assert_true(f & GCTX_FIX_PERSISTENT);
	text(&ev, buf, sizeof(buf));
	/* proven DataLoader workers: its fix first, named once */
	assert_true(!strncmp(buf, "Create the DataLoader with multiprocessing_context", 50));
	assert_has(buf, "for a torch DataLoader", false);
	assert_has(buf, "parent's HIP state", true);
	assert_has(buf, "persistent_workers=True", true);
}

static void test_not_python(void **state)
{
	struct gctx_hint_evidence ev = {.kind = GCTX_INC_POISON_FORK, .init_unused = true};
	__u32 f = gctx_hints__choose(&ev);
	char buf[1024];

	assert_false(f & (GCTX_FIX_MP_START_METHOD | GCTX_FIX_DL_CONTEXT));
	assert_true(f & GCTX_FIX_EXEC_CHILD);
	text(&ev, buf, sizeof(buf));
	assert_has(buf, "posix_spawn", true);
	assert_has(buf, "allocated nothing before forking", true);
	assert_has(buf, "multiprocessing", false);
	assert_has(buf, "no CUDA state", true);
	ev.no_api = true; /* seen at the driver only */
	text(&ev, buf, sizeof(buf));
	assert_has(buf, "no GPU state", true);
}

static void test_other_causes(void **state)
{
	struct gctx_hint_evidence ev = {.kind = GCTX_INC_FD_ACROSS_EXEC};
	char buf[512];

	assert_int_equal(gctx_hints__choose(&ev), GCTX_FIX_CLOEXEC);
	text(&ev, buf, sizeof(buf));
	assert_has(buf, "O_CLOEXEC", true);
	ev.kind = GCTX_INC_SPAWN_STARTUP;
	assert_int_equal(gctx_hints__choose(&ev), GCTX_FIX_MAIN_GUARD);
	ev.kind = GCTX_INC_FOREIGN_USE;
	assert_int_equal(gctx_hints__choose(&ev), GCTX_FIX_FD_PASSING);
	/* a short buffer is cut, terminated */
	text(&ev, buf, 10);
	assert_true(strlen(buf) < 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_python_fork),
	    cmocka_unit_test(test_dataloader_epochs_hip),
	    cmocka_unit_test(test_not_python),
	    cmocka_unit_test(test_other_causes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
