// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the flight recorder's window (user/trace/window.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	const __u64 from[] = {1,
			      (__u64)oldest * 10,
			      (__u64)oldest * 10 + 5,
			      (__u64)(oldest + 1023) * 10,
			      (__u64)(oldest + 1024) * 10,
			      (__u64)(n - 2000) * 10 + 1,
			      (__u64)n * 10,
			      (__u64)n * 10 + 1};

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

static __u64 resident_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%*s %llu", &pages), 1);
	fclose(f);
	return pages * (__u64)sysconf(_SC_PAGESIZE);
}

/* A quiet node: its history leaves by age, and the memory it took goes back to the system
 * (the agent's RSS is what the window holds, not its whole buffer once the ring went round). */
static void test_aged_memory_goes_back(void **state)
{
	struct gctx_window *w = gctx_window__new(64 << 20, 1000);
	struct seen s = {};
	__u64 full, empty;
	__u32 id;

	assert_non_null(w);
	for (id = 1; id <= 15000; id++) /* about 60 MiB */
		push_id(w, id / 16, id, 4000);
	assert_int_equal(gctx_window__records(w), 15000);
	full = resident_bytes();
	gctx_window__expire(w, 15000 / 16 + 2000); /* all of it older than 1000 ns */
	assert_int_equal(gctx_window__records(w), 0);
	empty = resident_bytes();
	assert_true(empty + (50ull << 20) <= full);
	/* and the ring goes on over those pages */
	for (; id <= 16000; id++)
		push_id(w, 100000 + id, id, 4000);
	gctx_window__foreach(w, collect, &s);
	assert_false(s.bad);
	assert_int_equal(s.n, 1000);
	assert_int_equal(s.last, 16000);
	gctx_window__free(w);
}

/* What left by age is given back only as far as it is still free: records written since,
 * over the space of the first that left, are kept whole. */
static void test_release_spares_records_written_since(void **state)
{
	struct gctx_window *w = gctx_window__new(4 << 20, 1000);
	struct seen s = {};
	__u32 id = 0;

	assert_non_null(w);
	/* 4,016 bytes an entry: 150 at 0, 125 at 600, 700 at 1000 (3.9 of 4 MiB) */
	while (id < 150)
		push_id(w, 0, ++id, 4000);
	while (id < 275)
		push_id(w, 600, ++id, 4000);
	while (id < 975)
		push_id(w, 1000, ++id, 4000);
	gctx_window__expire(w, 1001); /* the first 150 leave: under a MiB, nothing given back */
	while (id < 1175)	      /* 200 at 1500, over their space */
		push_id(w, 1500, ++id, 4000);
	gctx_window__expire(w, 1601); /* 125 more: over a MiB left by age in all */
	gctx_window__foreach(w, collect, &s);
	assert_false(s.bad);
	assert_int_equal(s.n, 900);
	assert_int_equal(s.first, 276);
	assert_int_equal(s.last, 1175);
	gctx_window__free(w);
}

/* Pages given back never held a record still kept: ages and sizes mixed at random so that
 * the tail writes over released pages, wraps and evicts by size while others leave by age. */
static void test_released_pages_keep_no_record(void **state)
{
	struct gctx_window *w = gctx_window__new(4 << 20, 1000);
	__u64 ts = 0;
	__u32 id = 0;

	assert_non_null(w);
	srand(29);
	for (int round = 0; round < 300; round++) {
		struct seen s = {};
		int k = rand() % 800;

		for (int i = 0; i < k; i++) {
			ts += rand() % 3;
			push_id(w, ts, ++id, 1 + rand() % 4000);
		}
		if (rand() % 3 == 0)
			ts += rand() % 1200; /* a pause: part or all of the window ages out */
		gctx_window__expire(w, ts);
		gctx_window__foreach(w, collect, &s);
		assert_false(s.bad);
		assert_int_equal(s.n, gctx_window__records(w));
		if (s.n)
			assert_int_equal(s.last, id);
	}
	gctx_window__free(w);
}

static void test_record_pids(void **state)
{
	struct gctx_ev_fork f = {.hdr = {.type = GCTX_EV_FORK, .tgid = 10}, .child_tgid = 11};
	struct gctx_ev_ioctl io = {.hdr = {.type = GCTX_EV_IOCTL, .tgid = 12}};
	struct gctx_rec_file rf = {.pid = 13};
	struct gctx_rec_device dev = {};
	struct gctx_rec_cgroup cg = {.pid = 14};
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
	    cmocka_unit_test(test_aged_memory_goes_back),
	    cmocka_unit_test(test_release_spares_records_written_since),
	    cmocka_unit_test(test_released_pages_keep_no_record),
	    cmocka_unit_test(test_record_pids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
