// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's pending trees (agent/pending.c, issue 43 item 3): one owner's trees never keep
 * another's incident from its dump, and trees already dumped hold no slot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/agent.h"
#include "agent/pending.h"

static __u32 of(const struct pend_table *t, const char *owner)
{
	__u32 n = 0;

	for (__u32 i = 0; i < t->n; i++)
		n += !strcmp(t->v[i].owner, owner);
	return n;
}

static void test_one_owner_cannot_fill_it(void **state)
{
	struct pend_table t = {};

	for (int i = 0; i < 300; i++)
		pending_admit(&t, "uid1000", i);
	assert_int_equal(of(&t, "uid1000"), AGENT_PEND_PER_OWNER);
	assert_int_equal(t.dropped, 300 - AGENT_PEND_PER_OWNER);
	assert_non_null(pending_admit(&t, "slurm-42", 400));
	assert_int_equal(of(&t, "slurm-42"), 1);
	pending_free(&t);
}

static void test_full_table_gives_to_the_smaller(void **state)
{
	struct pend_table t = {.per_owner = 5, .open_max = 8};
	struct pending *p;

	for (int i = 0; i < 5; i++)
		pending_admit(&t, "a", 10 + i);
	for (int i = 0; i < 3; i++)
		pending_admit(&t, "b", 20 + i);
	assert_int_equal(t.n, 8);
	/* full: a newcomer takes the newest slot of the biggest owner */
	p = pending_admit(&t, "c", 100);
	assert_non_null(p);
	assert_int_equal(of(&t, "c"), 1);
	assert_int_equal(of(&t, "a"), 4);
	assert_int_equal(of(&t, "b"), 3);
	for (__u32 i = 0; i < t.n; i++)
		assert_true(t.v[i].first_ns != 14);
	/* again while the biggest has more than c would then have */
	assert_non_null(pending_admit(&t, "c", 101));
	assert_int_equal(of(&t, "a"), 3);
	/* not from one no bigger than it would be: the shares stay within one */
	assert_null(pending_admit(&t, "c", 200));
	assert_int_equal(of(&t, "c"), 2);
	assert_int_equal(of(&t, "a") + of(&t, "b"), 6);
	assert_int_equal(t.dropped, 3);
	pending_free(&t);
}

static void test_dumped_trees_hold_no_slot(void **state)
{
	struct pend_table t = {.per_owner = 4, .open_max = 8, .watch_max = 6};

	for (int i = 0; i < 4; i++) {
		struct pending *p = pending_admit(&t, "a", i);

		assert_non_null(p);
		p->written = true; /* dumped, still running: watched for its end */
		p->alive_at_write = true;
	}
	assert_false(pending_open(&t.v[0]));
	for (int i = 0; i < 4; i++)
		assert_non_null(pending_admit(&t, "a", 10 + i));
	assert_int_equal(of(&t, "a"), 8);
	/* watched ones past watch_max: the oldest is forgotten, none blocks a new tree */
	for (int i = 0; i < 4; i++) {
		t.v[t.n - 1 - i].written = true;
		t.v[t.n - 1 - i].alive_at_write = true;
	}
	for (int i = 0; i < 4; i++)
		assert_non_null(pending_admit(&t, "b", 20 + i));
	assert_int_equal(t.forgotten, 3); /* one per new tree, until back under watch_max */
	assert_int_equal(t.dropped, 0);
	pending_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_owner_cannot_fill_it),
	    cmocka_unit_test(test_full_table_gives_to_the_smaller),
	    cmocka_unit_test(test_dumped_trees_hold_no_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
