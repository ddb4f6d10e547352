// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The processes whose mappings the stack resolver keeps (collect/stacks.c): a watched process
 * and the children it forks are followed, a child of anything else is not, an exit marks a
 * process gone, and past the cap the oldest are forgotten first. Every fork, exec and exit of
 * the node goes through this table (record -a, the agent), so it is tried here with a churn of
 * 200,000 forks and exits: the newest are still found, the oldest not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/stacks.h"
#include "gpuctx_events.h"
#include "gpuctx_stack.h"

#define CAP 4096 /* stacks.c's MAX_PROCS */

static void fork_rec(struct gctx_stacks *st, __u32 parent, __u32 child)
{
	struct gctx_ev_fork f = {.child_tid = child, .child_tgid = child};

	f.hdr.type = GCTX_EV_FORK;
	f.hdr.tid = f.hdr.tgid = parent;
	gctx_stacks__on_record(st, GCTX_EV_FORK, &f, sizeof(f));
}

static void exit_rec(struct gctx_stacks *st, __u32 pid)
{
	struct gctx_ev_exit x = {.group_dead = 1};

	x.hdr.type = GCTX_EV_EXIT;
	x.hdr.tid = x.hdr.tgid = pid;
	gctx_stacks__on_record(st, GCTX_EV_EXIT, &x, sizeof(x));
}

/* gone: forgotten, or its exit came */
static bool followed(struct gctx_stacks *st, __u32 pid)
{
	return !gctx_stacks__gone(st, pid);
}

static void test_children_of_watched_only(void **state)
{
	struct gctx_stacks *st = gctx_stacks__new();

	(void)state;
	assert_non_null(st);
	gctx_stacks__watch(st, 100);
	fork_rec(st, 100, 101);
	fork_rec(st, 101, 102); /* a grandchild: its parent is followed now */
	fork_rec(st, 500, 501); /* nothing here watched 500 */
	assert_true(followed(st, 100));
	assert_true(followed(st, 101));
	assert_true(followed(st, 102));
	assert_false(followed(st, 501));
	exit_rec(st, 101);
	assert_false(followed(st, 101));
	assert_true(followed(st, 102));
	/* a reused pid forked by a followed parent is followed again */
	fork_rec(st, 100, 101);
	assert_true(followed(st, 101));
	gctx_stacks__free(st);
}

static void test_churn_forgets_oldest(void **state)
{
	struct gctx_stacks *st = gctx_stacks__new();
	const __u32 root = 7, first = 1000, n = 200000;

	(void)state;
	assert_non_null(st);
	gctx_stacks__watch(st, root);
	/* a chain of short processes, each forking the next and exiting: 200,000 entries
	 * through a table of 4096 */
	fork_rec(st, root, first);
	for (__u32 i = 1; i < n; i++) {
		fork_rec(st, first + i - 1, first + i);
		exit_rec(st, first + i - 1);
	}
	/* the newest children are remembered (gone, not forgotten: a new fork of theirs is
	 * followed), the oldest forgotten */
	fork_rec(st, first + n - 1, 900000);
	assert_true(followed(st, 900000));
	fork_rec(st, first, 900001);
	assert_false(followed(st, 900001));
	fork_rec(st, first + n - CAP / 2, 900002);
	assert_true(followed(st, 900002));
	assert_false(followed(st, root)); /* the oldest of all */
	gctx_stacks__free(st);
}

/* The agent writes a dump once the stacks accepted before it are done: every accepted stack
 * is done once, returned by next() or given up, whatever its fate; a record too short to be
 * a stack is refused, not accepted. */
static void test_progress(void **state)
{
	struct gctx_stacks *st = gctx_stacks__new();
	struct gctx_ev_stack *raw = calloc(1, sizeof(*raw));
	struct gctx_stack_progress pr;
	const __u32 n = 5;
	__u32 got = 0, len;
	struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};

	(void)state;
	assert_non_null(st);
	assert_non_null(raw);
	raw->hdr.type = GCTX_EV_STACK;
	raw->hdr.tid = raw->hdr.tgid = (__u32)getpid();
	raw->role = GCTX_STACK_USE;
	gctx_stacks__watch(st, (__u32)getpid());
	for (__u32 i = 0; i < n; i++)
		assert_int_equal(gctx_stacks__accept(st, raw, GCTX_EV_STACK_HDR_LEN), 0);
	assert_int_not_equal(gctx_stacks__accept(st, raw, 8), 0);
	gctx_stacks__progress(st, &pr);
	assert_int_equal(pr.accepted, n);
	assert_true(pr.done <= n);
	for (int tries = 0; tries < 3000 && pr.done < n; tries++) { /* 30 s at most */
		struct gctx_rec_stack *r;

		gctx_stacks__tick(st);
		while ((r = gctx_stacks__next(st, &len))) {
			got++;
			free(r);
		}
		gctx_stacks__progress(st, &pr);
		if (pr.done < n)
			nanosleep(&pause, NULL);
	}
	assert_int_equal(pr.accepted, n);
	assert_int_equal(pr.done, n);
	assert_true(got <= n);
	gctx_stacks__free(st);
	free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_children_of_watched_only),
	    cmocka_unit_test(test_churn_forgets_oldest),
	    cmocka_unit_test(test_progress),
	};

	return cmocka_run_group_tests(tests, 0, NULL);
}
