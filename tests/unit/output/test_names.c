// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The one naming rule of processes and threads (output/names.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "output/timeline/names.h"

/* A process is its latest comm; a full 16-byte comm without NUL is kept whole. */
static void test_comm(void **state)
{
	struct gctx_proc p;
	char buf[GCTX_NAME_LEN];

	(void)state;
	memset(&p, 0, sizeof(p));
	p.pid = 1234;
	memcpy(p.comm, "pt_data_worker_", 15);
	gctx_name_proc(buf, sizeof(buf), &p);
	assert_string_equal(buf, "pt_data_worker_");
	memcpy(p.comm, "0123456789abcdef", 16); /* no NUL */
	gctx_name_proc(buf, sizeof(buf), &p);
	assert_string_equal(buf, "0123456789abcdef");
	memset(p.comm, 0, sizeof(p.comm));
	gctx_name_proc(buf, sizeof(buf), &p);
	assert_string_equal(buf, "pid 1234");
}

/* Known only by its pid (no comm seen): a placeholder, never an empty name. */
static void test_placeholder(void **state)
{
	struct gctx_thread t;
	char buf[GCTX_NAME_LEN];

	(void)state;
	memset(&t, 0, sizeof(t));
	t.tid = 4194304;
	gctx_name_thread(buf, sizeof(buf), &t);
	assert_string_equal(buf, "tid 4194304");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comm),
	    cmocka_unit_test(test_placeholder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
