// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of shortened ring-buffer records (user/trace/ring.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "trace/ring.h"

/* A shortened ioctl record as the kernel packs it: fixed part, in bytes, out bytes. */
static __u32 pack(__u8 *buf, __u32 flags, __u32 in_len, __u32 out_len)
{
	struct gctx_ev_ioctl ev = {.hdr = {.type = GCTX_EV_IOCTL, .tid = 7, .tgid = 7}};

	ev.cmd = 0xc020462a;
	ev.flags = flags;
	ev.len = in_len;
	ev.ret = -25;
	memcpy(buf, &ev, GCTX_RING_IOCTL_FIXED);
	for (__u32 i = 0; i < in_len; i++)
		buf[GCTX_RING_IOCTL_FIXED + i] = 0x10 + i;
	for (__u32 i = 0; i < out_len; i++)
		buf[GCTX_RING_IOCTL_FIXED + in_len + i] = 0x80 + i;
	return GCTX_RING_IOCTL_FIXED + in_len + out_len;
}

static void test_in_and_out_put_back(void **state)
{
	__u8 raw[sizeof(struct gctx_ev_ioctl)];
	union gctx_record buf;
	const struct gctx_ev_ioctl *ev;
	__u32 len = pack(raw, GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK, 32, 32), out_len;

	ev = gctx_ring__expand(GCTX_EV_IOCTL, raw, len, &buf, &out_len);
	assert_int_equal(out_len, sizeof(struct gctx_ev_ioctl));
	assert_int_equal(ev->cmd, 0xc020462a);
	assert_int_equal(ev->ret, -25);
	assert_int_equal(ev->len, 32);
	assert_int_equal(ev->in[0], 0x10);
	assert_int_equal(ev->in[31], 0x10 + 31);
	assert_int_equal(ev->in[32], 0);
	assert_int_equal(ev->out[0], 0x80);
	assert_int_equal(ev->out[31], 0x80 + 31);
	assert_int_equal(ev->out[32], 0);
}

static void test_not_written_back_copies_in(void **state)
{
	__u8 raw[sizeof(struct gctx_ev_ioctl)];
	union gctx_record buf;
	const struct gctx_ev_ioctl *ev;
	__u32 len = pack(raw, GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK, 24, 0), out_len;

	ev = gctx_ring__expand(GCTX_EV_IOCTL, raw, len, &buf, &out_len);
	assert_int_equal(out_len, sizeof(struct gctx_ev_ioctl));
	assert_memory_equal(ev->out, ev->in, 24);
	assert_int_equal(ev->out[5], 0x15);
}

static void test_out_only_and_shorter_out(void **state)
{
	__u8 raw[sizeof(struct gctx_ev_ioctl)];
	union gctx_record buf;
	const struct gctx_ev_ioctl *ev;
	__u32 out_len, len = pack(raw, GCTX_IOCTL_OUT_OK, 0, 16);

	ev = gctx_ring__expand(GCTX_EV_IOCTL, raw, len, &buf, &out_len);
	assert_int_equal(ev->len, 16);
	assert_int_equal(ev->out[15], 0x80 + 15);
	assert_int_equal(ev->in[0], 0);

	len = pack(raw, GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK, 32, 8);
	ev = gctx_ring__expand(GCTX_EV_IOCTL, raw, len, &buf, &out_len);
	assert_int_equal(ev->len, 8);
}

static void test_no_parameters(void **state)
{
	__u8 raw[sizeof(struct gctx_ev_ioctl)];
	union gctx_record buf;
	const struct gctx_ev_ioctl *ev;
	__u32 out_len, len = pack(raw, 0, 0, 0);

	ev = gctx_ring__expand(GCTX_EV_IOCTL, raw, len, &buf, &out_len);
	assert_int_equal(out_len, sizeof(struct gctx_ev_ioctl));
	assert_int_equal(ev->len, 0);
	assert_int_equal(ev->hdr.tid, 7);
}

static void test_inconsistent_left_alone(void **state)
{
	__u8 raw[sizeof(struct gctx_ev_ioctl)];
	union gctx_record buf;
	__u32 out_len, len;

	/* len says 64 bytes at entry, only 10 follow: passed on as is, too short to model */
	len = pack(raw, GCTX_IOCTL_IN_OK, 10, 0);
	((struct gctx_ev_ioctl *)raw)->len = 64;
	assert_ptr_equal(gctx_ring__expand(GCTX_EV_IOCTL, raw, len, &buf, &out_len), raw);
	assert_int_equal(out_len, len);
	assert_ptr_equal(gctx_ring__expand(GCTX_EV_IOCTL, raw, 12, &buf, &out_len), raw);
	assert_int_equal(out_len, 12);
}

static void test_full_and_other_records_unchanged(void **state)
{
	struct gctx_ev_ioctl full = {.hdr = {.type = GCTX_EV_IOCTL}};
	struct gctx_ev_fork fork = {.hdr = {.type = GCTX_EV_FORK}};
	union gctx_record buf;
	__u32 out_len;

	assert_ptr_equal(gctx_ring__expand(GCTX_EV_IOCTL, &full, sizeof(full), &buf, &out_len),
			 &full);
	assert_int_equal(out_len, sizeof(full));
	assert_ptr_equal(gctx_ring__expand(GCTX_EV_FORK, &fork, sizeof(fork), &buf, &out_len),
			 &fork);
	assert_int_equal(out_len, sizeof(fork));
}

/* The trace stores ioctl records packed: every reader gets the struct back through
 * gctx_record_copy, and a trace written before (full structs) reads as it did. */
static void test_record_copy_expands_packed(void **state)
{
	__u8 raw[sizeof(struct gctx_ev_ioctl)];
	struct gctx_ev_ioctl full = {.hdr = {.type = GCTX_EV_IOCTL, .tid = 9}, .len = 4};
	union gctx_record r;
	__u32 len = pack(raw, GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK, 16, 16);

	assert_int_equal(gctx_record_min_len(GCTX_EV_IOCTL), GCTX_RING_IOCTL_FIXED);
	memset(&r, 0xee, sizeof(r));
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_IOCTL, raw, len), sizeof(r.ioctl));
	assert_int_equal(r.ioctl.cmd, 0xc020462a);
	assert_int_equal(r.ioctl.in[15], 0x10 + 15);
	assert_int_equal(r.ioctl.in[16], 0);
	assert_int_equal(r.ioctl.out[15], 0x80 + 15);
	assert_int_equal(r.ioctl.out[GCTX_IOCTL_BYTES - 1], 0);

	/* no parameters: the fixed part alone */
	len = pack(raw, 0, 0, 0);
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_IOCTL, raw, len), sizeof(r.ioctl));
	assert_int_equal(r.ioctl.ret, -25);
	assert_int_equal(r.ioctl.in[0], 0);

	/* a full struct (older traces) is copied as it is */
	full.in[3] = 0x33;
	full.out[3] = 0x44;
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_IOCTL, &full, sizeof(full)), sizeof(full));
	assert_int_equal(r.ioctl.hdr.tid, 9);
	assert_int_equal(r.ioctl.in[3], 0x33);
	assert_int_equal(r.ioctl.out[3], 0x44);

	/* shorter than the fixed part, or lengths that do not add up: malformed */
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_IOCTL, raw, GCTX_RING_IOCTL_FIXED - 1), 0);
	len = pack(raw, GCTX_IOCTL_IN_OK, 10, 0);
	((struct gctx_ev_ioctl *)raw)->len = 64;
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_IOCTL, raw, len), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_in_and_out_put_back),
	    cmocka_unit_test(test_not_written_back_copies_in),
	    cmocka_unit_test(test_out_only_and_shorter_out),
	    cmocka_unit_test(test_no_parameters),
	    cmocka_unit_test(test_inconsistent_left_alone),
	    cmocka_unit_test(test_full_and_other_records_unchanged),
	    cmocka_unit_test(test_record_copy_expands_packed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
