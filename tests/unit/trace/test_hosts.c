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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/hosts.h"
#include "gpuctx_events.h"

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

/* A trace of host name with n end records (any record will do), at a new temporary path. */
static void write_host(char *path, const char *name, int n)
{
	struct gctx_trace_meta m = meta(1000 * S, 500 * S, GCTX_CLOCK_SYNCED, 10);
	struct gctx_trace_writer *w;
	struct gctx_rec_end end = {.end_ns = 501 * S};
	int err, fd;

	snprintf(path, 64, "/tmp/gpuctx-test-hosts.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	snprintf(m.hostname, sizeof(m.hostname), "%s", name);
	w = gctx_trace_writer__new_fd(fd, &m, &err);
	assert_non_null(w);
	for (int i = 0; i < n; i++)
		assert_int_equal(gctx_trace_writer__append(w, GCTX_REC_END, &end, sizeof(end)), 0);
	assert_int_equal(gctx_trace_writer__free(w), 0);
}

static int count_records(const char *path)
{
	char err[256];
	struct gctx_trace_reader *r = gctx_trace_reader__open(path, err, sizeof(err));
	const void *data;
	__u32 type, len;
	int n = 0;

	assert_non_null(r);
	while (gctx_trace_reader__next(r, &type, &data, &len) == 1)
		n++;
	gctx_trace_reader__free(r);
	return n;
}

/* Three traces (two hosts of one name, one with a terminal escape in its name) merged, then
 * taken apart again: each host with its own meta and records, its name printable and unique. */
static void test_merge_roundtrip(void **state)
{
	char a[64], b[64], c[64], out[64] = "/tmp/gpuctx-test-merged.XXXXXX";
	char *in[] = {a, b, c}, *merged[] = {out};
	const long long want[] = {2, 3, 1}; /* records of each host */
	struct gctx_host_file *hosts, *back;
	struct gctx_trace_writer *w;
	__u32 n, nb;
	int err, fd;

	(void)state;
	write_host(a, "node1", 2);
	write_host(b, "node\033[2J", 3);
	write_host(c, "node1", 1);
	assert_int_equal(gctx_hosts__open(in, 3, &hosts, &n, NULL, 0), 0);
	assert_int_equal(n, 3);
	assert_string_equal(hosts[0].label, "node1");
	assert_string_equal(hosts[1].label, "node?[2J");
	assert_string_equal(hosts[2].label, "node1#2");
	fd = mkstemp(out);
	w = gctx_trace_writer__new_fd(fd, &hosts[0].meta, &err);
	assert_non_null(w);
	for (__u32 i = 0; i < n; i++)
		assert_int_equal(gctx_hosts__append(w, i, &hosts[i], NULL, 0), want[i]);
	assert_int_equal(gctx_trace_writer__free(w), 0);

	assert_int_equal(gctx_hosts__open(merged, 1, &back, &nb, NULL, 0), 0);
	assert_int_equal(nb, 3);
	for (__u32 i = 0; i < nb; i++) {
		assert_true(back[i].fd >= 0); /* a memory file of its own */
		assert_string_equal(back[i].meta.hostname, hosts[i].meta.hostname);
		assert_string_equal(back[i].label, hosts[i].label);
		assert_string_equal(back[i].source, out);
	}
	for (__u32 i = 0; i < nb; i++)
		assert_int_equal(count_records(back[i].path), want[i]);
	gctx_hosts__free(back, nb);
	gctx_hosts__free(hosts, n);
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(out);
}

/* Crafted header clocks (a trace is input like any other): the boot times, offsets and
 * recording bounds saturate instead of overflowing (signed overflow was undefined behaviour
 * here, found by `make check-sanitize`), and a clock past INT64_MAX is not read as negative. */
static void test_crafted_clocks(void **state)
{
	/* wall as int64 is -1: read as booted before every host, it was the reference */
	struct gctx_trace_meta sane = meta(1700000000 * S, 5000 * S, GCTX_CLOCK_SYNCED, 1000);
	struct gctx_trace_meta late = meta(UINT64_MAX, 0, GCTX_CLOCK_SYNCED, UINT64_MAX);
	/* wall - mono and the offset between these two overflow an int64 */
	struct gctx_trace_meta x = meta(1ull << 63, 1, GCTX_CLOCK_SYNCED, UINT64_MAX);
	struct gctx_trace_meta y = meta(0, INT64_MAX, GCTX_CLOCK_SYNCED, 1);
	const struct gctx_trace_meta *m1[] = {&late, &sane}, *m2[] = {&x, &y};
	__u64 ends1[] = {UINT64_MAX, 5001 * S}, ends2[] = {UINT64_MAX, UINT64_MAX};
	struct gctx_host_clock c[2];

	(void)state;
	assert_int_equal(gctx_hosts__align(m2, ends2, 2, c), 1);
	assert_int_equal(c[1].offset_ns, 0);
	assert_int_equal(c[0].offset_ns, INT64_MAX); /* INT64_MAX - -INT64_MAX, saturated */
	assert_true(c[0].start_ns == 1 + (__u64)INT64_MAX);
	assert_true(c[0].end_ns == UINT64_MAX && c[1].end_ns == UINT64_MAX);
	assert_true(c[0].start_ns <= c[0].end_ns);
	assert_true(c[0].error_us == UINT64_MAX);
	/* placed only by saturation: neither is taken for a clock that agrees with the other */
	assert_true((c[0].flags & GCTX_CLK_APART) && (c[1].flags & GCTX_CLK_APART));

	assert_int_equal(gctx_hosts__align(m1, ends1, 2, c), 1);
	assert_int_equal(c[0].offset_ns, INT64_MAX - (__s64)(1700000000 * S - 5000 * S));
	assert_int_equal(c[0].start_ns, (__u64)c[0].offset_ns);
	assert_true(c[0].end_ns == UINT64_MAX); /* not wrapped round to before its start */
	assert_true(c[0].error_us == UINT64_MAX);
	assert_true(c[0].flags & GCTX_CLK_APART);
}

/* The same for what report, check and export derive: one boot of one host, and the shift that
 * moves a host's BOOTTIME onto the reference's (its BOOTTIME - MONOTONIC past INT64_MAX). */
static void test_crafted_boot(void **state)
{
	struct gctx_trace_meta a = meta(1ull << 63, 1, GCTX_CLOCK_SYNCED, 0);
	struct gctx_trace_meta b = meta(1ull << 63, 1, GCTX_CLOCK_SYNCED, 0);
	struct gctx_trace_meta far = meta(0, INT64_MAX, GCTX_CLOCK_SYNCED, 0);
	struct gctx_trace_meta m = meta(0, 1, GCTX_CLOCK_SYNCED, 0);
	struct gctx_trace_meta r = meta(0, 5, GCTX_CLOCK_SYNCED, 0);

	(void)state;
	a.start_boot_ns = b.start_boot_ns = 1;
	assert_true(gctx_hosts__same_boot(&a, &b));
	assert_false(gctx_hosts__same_boot(&a, &far));
	assert_false(gctx_hosts__same_boot(&far, &a));
	m.start_boot_ns = 1ull << 63; /* BOOTTIME - MONOTONIC: 2^63 - 1 */
	r.start_boot_ns = 5;
	assert_int_equal(gctx_hosts__boot_shift(&m, &r, 0), -INT64_MAX);
	assert_int_equal(gctx_hosts__boot_shift(&m, &r, -INT64_MAX), INT64_MIN); /* saturated */
	assert_int_equal(gctx_hosts__boot_shift(&r, &m, INT64_MAX), INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_offsets),	    cmocka_unit_test(test_looks_off),
	    cmocka_unit_test(test_crafted_clocks),  cmocka_unit_test(test_crafted_boot),
	    cmocka_unit_test(test_merge_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
