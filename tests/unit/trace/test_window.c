// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the flight recorder's window (user/trace/window.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/window.h"
#include "gpuctx_events.h"

struct seen {
	__u32 n;
	__u32 first, last; /* payload ids */
	bool bad;
};

/* Every payload is its id repeated; check each record comes back whole and in order. */
static int collect(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct seen *s = ctx;
	const __u8 *p = data;
	__u32 id = type;

	for (__u32 i = 0; i < len; i++)
		if (p[i] != (__u8)id)
			s->bad = true;
	if (s->n && id != s->last + 1)
		s->bad = true;
	if (!s->n)
		s->first = id;
	s->last = id;
	s->n++;
	return 0;
}

static void push_id(struct gctx_window *w, __u64 ts, __u32 id, __u32 len)
{
	__u8 buf[4096];

	memset(buf, (__u8)id, len);
	assert_int_equal(gctx_window__push(w, ts, id, buf, len), 0);
}

static void test_bounded_by_bytes(void **state)
{
	struct gctx_window *w = gctx_window__new(64 << 10, 0);
	struct seen s = {};

	assert_non_null(w);
	/* 1,000 records of 1,000 bytes: about 64 of them fit; the newest are kept, whole, in
	 * order, across the ring's wrap */
	for (__u32 id = 1; id <= 1000; id++)
		push_id(w, id, id, 1000 + id % 7);
	assert_true(gctx_window__bytes(w) <= 64 << 10);
	gctx_window__foreach(w, collect, &s);
	assert_false(s.bad);
	assert_int_equal(s.last, 1000);
	assert_int_equal(s.n, gctx_window__records(w));
	assert_true(s.n > 50 && s.n < 66);
	assert_int_equal(gctx_window__evicted(w) + s.n, 1000);
	assert_int_equal(gctx_window__oldest_ns(w), s.first);
	gctx_window__free(w);
}

static void test_bounded_by_age(void **state)
{
	struct gctx_window *w = gctx_window__new(1 << 20, 100);
	struct seen s = {};

	for (__u32 id = 1; id <= 10; id++)
		push_id(w, id * 10, id, 16);
	/* at 160, what was pushed before 60 is gone */
	gctx_window__expire(w, 160);
	gctx_window__foreach(w, collect, &s);
	assert_false(s.bad);
	assert_int_equal(s.first, 6);
	assert_int_equal(s.last, 10);
	assert_int_equal(gctx_window__evicted(w), 5);
	gctx_window__expire(w, 1000);
	assert_int_equal(gctx_window__records(w), 0);
	assert_int_equal(gctx_window__bytes(w), 0);
	assert_int_equal(gctx_window__oldest_ns(w), 0);
	gctx_window__free(w);
}

static void test_too_big_counted(void **state)
{
	struct gctx_window *w = gctx_window__new(64 << 10, 0);
	void *big = calloc(1, 70 << 10);

	assert_null(gctx_window__new(1024, 0));
	assert_int_equal(gctx_window__push(w, 1, 1, big, 70 << 10), -E2BIG);
	assert_int_equal(gctx_window__evicted(w), 1);
	assert_int_equal(gctx_window__records(w), 0);
	free(big);
	gctx_window__free(w);
}

/* A reader from a time gets exactly the records taken at it or later, in order, wherever
 * that falls among the index points, after the ring has wrapped and evicted many times. */
static void test_foreach_from(void **state)
{
	struct gctx_window *w = gctx_window__new(1 << 20, 0);
	void *big = calloc(1, 2 << 20);
	const __u32 n = 100000;
	__u32 oldest;

	assert_non_null(w);
	for (__u32 id = 1; id <= n; id++) {
		push_id(w, (__u64)id * 10, id, 8 + id % 3 * 8);
		if (id == n / 2) /* one that never fits: counted, not kept */
			assert_int_equal(gctx_window__push(w, (__u64)id * 10, 0, big, 2 << 20),
					 -E2BIG);
	}
	oldest = (__u32)(gctx_window__oldest_ns(w) / 10);
	assert_true(oldest > n / 2);
	assert_int_equal(gctx_window__records(w), n - oldest + 1);
	/* before the oldest, at it, between index points, on the newest, after it */
	const __u64 from[] = {1, (__u64)oldest * 10, (__u64)oldest * 10 + 5,
			      (__u64)(oldest + 1023) * 10, (__u64)(oldest + 1024) * 10,
			      (__u64)(n - 2000) * 10 + 1, (__u64)n * 10, (__u64)n * 10 + 1};

	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		struct seen s = {};
		__u32 want = from[i] <= (__u64)oldest * 10 ? oldest : (__u32)((from[i] + 9) / 10);

		assert_int_equal(gctx_window__foreach_from(w, from[i], collect, &s), 0);
		assert_false(s.bad);
		if (want > n) {
			assert_int_equal(s.n, 0);
			continue;
		}
		assert_int_equal(s.first, want);
		assert_int_equal(s.last, n);
		assert_int_equal(s.n, n - want + 1);
	}
	free(big);
	gctx_window__free(w);
}

static void test_record_pids(void **state)
{
	struct gctx_ev_fork f = { .hdr = { .type = GCTX_EV_FORK, .tgid = 10 }, .child_tgid = 11 };
	struct gctx_ev_ioctl io = { .hdr = { .type = GCTX_EV_IOCTL, .tgid = 12 } };
	struct gctx_rec_file rf = { .pid = 13 };
	struct gctx_rec_device dev = {};
	struct gctx_rec_cgroup cg = { .pid = 14 };
	__u32 pids[2] = {};

	assert_int_equal(gctx_record_pids(GCTX_EV_FORK, &f, sizeof(f), pids), 2);
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 11);
	assert_int_equal(gctx_record_pids(GCTX_EV_IOCTL, &io, sizeof(io), pids), 1);
	assert_int_equal(pids[0], 12);
	assert_int_equal(gctx_record_pids(GCTX_REC_FILE_PRESENT, &rf, sizeof(rf), pids), 1);
	assert_int_equal(pids[0], 13);
	assert_int_equal(gctx_record_pids(GCTX_REC_DEVICE, &dev, sizeof(dev), pids), 0);
	/* a process's cgroup goes with it: a dump or --from-agent trace names its job */
	assert_int_equal(gctx_record_pids(GCTX_REC_CGROUP, &cg, sizeof(cg), pids), 1);
	assert_int_equal(pids[0], 14);
	/* short records name nobody rather than read past their end */
	assert_int_equal(gctx_record_pids(GCTX_EV_FORK, &f, 8, pids), 0);
	assert_int_equal(gctx_record_pids(GCTX_EV_IOCTL, &io, 8, pids), 0);
	assert_int_equal(gctx_record_pids(GCTX_REC_FILE_PRESENT, &rf, 2, pids), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded_by_bytes),
		cmocka_unit_test(test_bounded_by_age),
		cmocka_unit_test(test_too_big_counted),
		cmocka_unit_test(test_foreach_from),
		cmocka_unit_test(test_record_pids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
