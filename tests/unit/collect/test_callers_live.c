// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the collector's call sites (collect/callers.c): each address symbolised once per
 * address space (a forked child shares its parent's until exec), a record per process, the
 * bound, sites of a process gone before its mappings were read held until its exit. The
 * mappings and the symboliser (stacks.c, unwind.c) are stubbed here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "collect/callers.c"
#include "builders.h"

static struct gctx_maps fake_maps = {.pid = 1, .n = 1};
static bool maps_gone, no_module, proc_exited;
static __u32 nsymbolised;
static struct gctx_rec_caller got[8];
static __u32 ngot;

struct gctx_stacks *gctx_stacks__new(void)
{
	return NULL;
}

void gctx_stacks__free(struct gctx_stacks *st)
{
}

void gctx_stacks__on_record(struct gctx_stacks *st, __u32 type, const void *data, __u32 len)
{
}

const struct gctx_maps *gctx_stacks__maps(struct gctx_stacks *st, __u32 pid, bool *fresh)
{
	if (fresh)
		*fresh = !maps_gone;
	return maps_gone ? NULL : &fake_maps;
}

bool gctx_stacks__gone(struct gctx_stacks *st, __u32 pid)
{
	return proc_exited;
}

void gctx_unwind_lock(void)
{
}

void gctx_unwind_unlock(void)
{
}

int gctx_unwind_symbolise(const struct gctx_maps *maps, __u64 addr, struct gctx_rec_frame *out)
{
	nsymbolised++;
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	if (!maps || no_module)
		return -ENOENT;
	snprintf(out->module, sizeof(out->module), "/lib/libx.so");
	snprintf(out->function, sizeof(out->function), "f_%llx", (unsigned long long)addr);
	return 0;
}

static int on_rec(void *ctx, __u32 type, const void *data, __u32 len)
{
	assert_int_equal(type, GCTX_REC_CALLER);
	assert_int_equal(len, sizeof(struct gctx_rec_caller));
	if (ngot < ARRAY_SIZE(got))
		memcpy(&got[ngot], data, len);
	ngot++;
	return 0;
}

static int setup(void **state)
{
	nsymbolised = ngot = 0;
	maps_gone = no_module = proc_exited = false;
	*state = gctx_callers__new((struct gctx_stacks *)&fake_maps, on_rec, NULL);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	gctx_callers__free(*state);
	return 0;
}

static void call(struct gctx_callers *c, __u32 pid, __u64 caller)
{
	struct gctx_ev_api ev;

	ev_init(&ev, sizeof(ev), GCTX_EV_API, pid, pid, 1, "app");
	ev.fn = GCTX_CU_INIT;
	ev.caller = caller;
	gctx_callers__on_record(c, GCTX_EV_API, &ev, sizeof(ev));
}

static void test_fork_shares_exec_does_not(void **state)
{
	struct gctx_callers *c = *state;
	struct gctx_ev_fork f = ev_fork(10, 11, 5, "app", false);
	struct gctx_ev_exec ex;
	struct gctx_rec_caller_drops d;

	call(c, 10, 0x1000);
	call(c, 10, 0x1000);
	assert_int_equal(nsymbolised, 1);
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0].pid, 10);
	assert_int_equal(got[0].flags, 0);
	assert_string_equal(got[0].frame.function, "f_1000");
	/* the child has its parent's layout: its own record, no new symbolisation */
	gctx_callers__on_record(c, GCTX_EV_FORK, &f, sizeof(f));
	call(c, 11, 0x1000);
	assert_int_equal(nsymbolised, 1);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[1].pid, 11);
	assert_string_equal(got[1].frame.function, "f_1000");
	/* after exec the same address is other code */
	ev_init(&ex, sizeof(ex), GCTX_EV_EXEC, 11, 11, 6, "app");
	gctx_callers__on_record(c, GCTX_EV_EXEC, &ex, sizeof(ex));
	call(c, 11, 0x1000);
	assert_int_equal(nsymbolised, 2);
	assert_int_equal(ngot, 3);
	/* no return address read: nothing to say */
	call(c, 10, 0);
	assert_int_equal(ngot, 3);
	gctx_callers__stats(c, &d);
	assert_int_equal(d.resolved, 3);
	assert_int_equal(d.capped, 0);
}

/* Unresolved sites are still written, with why. */
static void test_unresolved(void **state)
{
	struct gctx_callers *c = *state;

	no_module = true;
	call(c, 20, 0x2000);
	maps_gone = true;
	call(c, 21, 0x3000);
	assert_int_equal(ngot, 1);
	gctx_callers__tick(c, false); /* held while the process has not exited */
	assert_int_equal(ngot, 1);
	proc_exited = true; /* and no mappings came with its exit */
	gctx_callers__tick(c, false);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[0].flags, GCTX_CALLER_NO_MODULE);
	assert_int_equal(got[0].frame.addr, 0x2000);
	assert_int_equal(got[1].flags, GCTX_CALLER_NO_MAPS);
	assert_string_equal(got[1].frame.function, "");
}

/* A process gone before its mappings were read: its sites wait for the mappings the kernel
 * sends at its exit, for it and for a forked child calling from the same place; a site of a
 * process that exec'd since gets none; the end of the recording lets everything go. */
static void test_held_until_exit(void **state)
{
	struct gctx_callers *c = *state;
	struct gctx_ev_fork f = ev_fork(40, 41, 5, "app", false);
	struct gctx_ev_exec ex;

	gctx_callers__on_record(c, GCTX_EV_FORK, &f, sizeof(f));
	maps_gone = true;
	call(c, 40, 0x4000);
	call(c, 41, 0x4000);
	call(c, 41, 0x5000);
	ev_init(&ex, sizeof(ex), GCTX_EV_EXEC, 41, 41, 6, "app");
	gctx_callers__on_record(c, GCTX_EV_EXEC, &ex, sizeof(ex));
	gctx_callers__tick(c, false);
	assert_int_equal(ngot, 0);
	assert_int_equal(nsymbolised, 0);
	maps_gone = false; /* the exit mappings came, then the exit record */
	proc_exited = true;
	gctx_callers__tick(c, false);
	assert_int_equal(ngot, 3);
	assert_int_equal(nsymbolised, 2); /* 0x4000 once for the shared address space */
	assert_int_equal(got[0].pid, 40);
	assert_int_equal(got[0].flags, 0);
	assert_string_equal(got[0].frame.function, "f_4000");
	assert_int_equal(got[1].pid, 41);
	assert_string_equal(got[1].frame.function, "f_4000");
	assert_int_equal(got[2].pid, 41);
	assert_int_equal(got[2].flags, GCTX_CALLER_NO_MAPS); /* called before the exec */
	assert_int_equal(got[2].frame.addr, 0x5000);
	gctx_callers__tick(c, true);
	assert_int_equal(ngot, 3);
	/* at the end, what still waits is written as it is */
	maps_gone = true;
	proc_exited = false;
	call(c, 42, 0x6000);
	assert_int_equal(ngot, 3);
	gctx_callers__tick(c, true);
	assert_int_equal(ngot, 4);
	assert_int_equal(got[3].flags, GCTX_CALLER_NO_MAPS);
}

static void test_bound(void **state)
{
	struct gctx_callers *c = *state;
	struct gctx_rec_caller_drops d;

	for (__u64 i = 0; i < GCTX_CALLER_MAX_SITES; i++)
		call(c, 30, 0x10000 + i);
	assert_int_equal(nsymbolised, GCTX_CALLER_MAX_SITES);
	call(c, 30, 0x90000);
	call(c, 30, 0x90000);
	call(c, 30, 0x10000); /* written already: neither capped nor symbolised again */
	assert_int_equal(nsymbolised, GCTX_CALLER_MAX_SITES);
	gctx_callers__stats(c, &d);
	assert_int_equal(d.capped, 2);
	assert_int_equal(d.resolved, GCTX_CALLER_MAX_SITES);
	gctx_callers__on_record(NULL, GCTX_EV_API, NULL, 0);
	gctx_callers__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fork_shares_exec_does_not, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unresolved, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_held_until_exit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
