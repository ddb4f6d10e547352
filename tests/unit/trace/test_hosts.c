// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the clock alignment of several hosts: the host that booted first is the
 * reference, every host's recording lands on its clock by the wall-clock anchors, the error
 * bound is the two NTP maximum errors, and a host whose clock looks off is flagged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "trace/hosts.h"

#define S 1000000000ull

static struct gctx_trace_meta meta(__u64 wall, __u64 mono, __u32 state, __u64 maxerr_us)
{
	struct gctx_trace_meta m;

	memset(&m, 0, sizeof(m));
	m.start_wall_ns = wall;
	m.start_mono_ns = mono;
	m.clock_state = state;
	m.clock_maxerror_us = maxerr_us;
	return m;
}

/* Host b booted 100 s after a (its monotonic clock is 100 s behind at the same wall time) and
 * started recording 2 s after a: on the job's clock (a's), b starts 2 s after a. */
static void test_offsets(void **state)
{
	struct gctx_trace_meta a = meta(1000 * S, 500 * S, GCTX_CLOCK_SYNCED, 2000);
	struct gctx_trace_meta b = meta(1002 * S, 402 * S, GCTX_CLOCK_SYNCED, 3000);
	const struct gctx_trace_meta *m[] = {&b, &a};
	__u64 ends[] = {410 * S, 505 * S};
	struct gctx_host_clock c[2];

	(void)state;
	assert_int_equal(gctx_hosts__align(m, ends, 2, c), 1); /* a booted first */
	assert_int_equal(c[1].offset_ns, 0);
	assert_int_equal(c[0].offset_ns, 100 * S);
	assert_int_equal(c[0].start_ns - c[1].start_ns, 2 * S);
	assert_int_equal(c[0].end_ns, 510 * S);
	assert_int_equal(c[1].error_us, 0);
	assert_int_equal(c[0].error_us, 5000); /* both maximum errors */
	assert_true(c[1].flags & GCTX_CLK_REFERENCE);
	assert_int_equal(c[0].flags, 0);
}

static void test_looks_off(void **state)
{
	/* c's clock is an hour ahead: its recording overlaps nobody's */
	struct gctx_trace_meta a = meta(1000 * S, 500 * S, GCTX_CLOCK_SYNCED, 1000);
	struct gctx_trace_meta b = meta(1001 * S, 501 * S, GCTX_CLOCK_UNSYNC, 16000000);
	struct gctx_trace_meta c = meta(4600 * S, 500 * S, GCTX_CLOCK_SYNCED, 200000);
	struct gctx_trace_meta d = meta(1000 * S, 500 * S, GCTX_CLOCK_UNKNOWN, 0);
	const struct gctx_trace_meta *m[] = {&a, &b, &c, &d};
	__u64 ends[] = {510 * S, 511 * S, 510 * S, 0};
	struct gctx_host_clock k[4];

	(void)state;
	gctx_hosts__align(m, ends, 4, k);
	assert_false(k[0].flags & GCTX_CLK_APART);
	assert_true(k[1].flags & GCTX_CLK_UNSYNC);
	assert_int_equal(k[1].error_us, ~0ull);
	assert_true(k[2].flags & GCTX_CLK_APART);
	assert_true(k[2].flags & GCTX_CLK_LARGE_ERROR);
	assert_int_equal(k[2].start_ns - k[0].start_ns, 3600 * S);
	/* an older trace: no estimate; its end unknown, its start within a's recording */
	assert_true(k[3].flags & GCTX_CLK_NO_ESTIMATE);
	assert_false(k[3].flags & GCTX_CLK_APART);
	assert_int_equal(k[3].end_ns, k[3].start_ns);
	/* one host alone is never apart */
	gctx_hosts__align(m + 2, ends + 2, 1, k);
	assert_false(k[0].flags & GCTX_CLK_APART);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_offsets),
	    cmocka_unit_test(test_looks_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
