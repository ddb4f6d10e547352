// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of what the decoders share (user/decode/decode.c): the dispatch by device kind,
 * captures that hold nothing or claim too much, and the name helpers.
 */
#include "decode_test.h"

/* ---- unknown device kind ---- */

static void test_unknown_kind(void **state)
{
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;

	ev = ev_new(state, GCTX_DEV_NONE, NV_RM_ALLOC_NVOS64);
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x46 nr=0x2b size=48)");
	assert_false(d.known);
	assert_plain(&d);

	ev = ev_new(state, 99, AMDKFD_IOC_GET_VERSION);
	ev->ret = -EBADF;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x4b nr=0x01 size=8)");
	assert_int_equal(d.err, EBADF);
}

/* ---- short captures ---- */

static void test_nothing_captured(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	ev->flags = 0;
	decode(ev, &d);
	assert_string_equal(d.name, "RM_ALLOC");
	assert_string_equal(d.detail, "");
	assert_false(d.has_status);
	assert_plain(&d);

	ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_CREATE_QUEUE);
	ev->len = 0;
	decode(ev, &d);
	assert_string_equal(d.name, "KFD_CREATE_QUEUE");
	assert_string_equal(d.detail, "");
	assert_plain(&d);
}

/* A corrupt len larger than the arrays is clamped to them. */
static void test_len_past_arrays(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_IOCTL_XFER_CMD);
	struct gctx_ioctl_desc d;

	ev->flags |= GCTX_IOCTL_XFER;
	ev->inner_cmd = 0x2b;
	ev->size = 4096;
	ev->len = 100000;
	memset(ev->in, 0, GCTX_IOCTL_BYTES);
	memset(ev->out, 0, GCTX_IOCTL_BYTES);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_contains(d.detail, "unexpected_size=4096");
}

/* ---- name helpers ---- */

static void test_errno_names(void **state)
{
	(void)state;
	assert_string_equal(gctx_errno_name(EPERM), "EPERM");
	assert_string_equal(gctx_errno_name(ENOENT), "ENOENT");
	assert_string_equal(gctx_errno_name(EINTR), "EINTR");
	assert_string_equal(gctx_errno_name(EIO), "EIO");
	assert_string_equal(gctx_errno_name(ENXIO), "ENXIO");
	assert_string_equal(gctx_errno_name(9), "EBADF");
	assert_string_equal(gctx_errno_name(EAGAIN), "EAGAIN");
	assert_string_equal(gctx_errno_name(ENOMEM), "ENOMEM");
	assert_string_equal(gctx_errno_name(EFAULT), "EFAULT");
	assert_string_equal(gctx_errno_name(EBUSY), "EBUSY");
	assert_string_equal(gctx_errno_name(ENODEV), "ENODEV");
	assert_string_equal(gctx_errno_name(22), "EINVAL");
	assert_string_equal(gctx_errno_name(ENOTTY), "ENOTTY");
	assert_string_equal(gctx_errno_name(ENOSPC), "ENOSPC");
	assert_string_equal(gctx_errno_name(ERANGE), "ERANGE");
	assert_string_equal(gctx_errno_name(EBADFD), "EBADFD");
	assert_string_equal(gctx_errno_name(95), "EOPNOTSUPP");
	assert_string_equal(gctx_errno_name(ETIMEDOUT), "ETIMEDOUT");
	assert_string_equal(gctx_errno_name(512), "ERESTARTSYS");
	assert_null(gctx_errno_name(0));
	assert_null(gctx_errno_name(-1));
	assert_null(gctx_errno_name(4000));
}

static void test_signal_names(void **state)
{
	/* clang-format off */
	static const char *const want[32] = {
		[1] = "SIGHUP",
		[2] = "SIGINT",
		[3] = "SIGQUIT",
		[4] = "SIGILL",
		[5] = "SIGTRAP",
		[6] = "SIGABRT",
		[7] = "SIGBUS",
		[8] = "SIGFPE",
		[9] = "SIGKILL",
		[10] = "SIGUSR1",
		[11] = "SIGSEGV",
		[12] = "SIGUSR2",
		[13] = "SIGPIPE",
		[14] = "SIGALRM",
		[15] = "SIGTERM",
		[16] = "SIGSTKFLT",
		[17] = "SIGCHLD",
		[18] = "SIGCONT",
		[19] = "SIGSTOP",
		[20] = "SIGTSTP",
		[21] = "SIGTTIN",
		[22] = "SIGTTOU",
		[23] = "SIGURG",
		[24] = "SIGXCPU",
		[25] = "SIGXFSZ",
		[26] = "SIGVTALRM",
		[27] = "SIGPROF",
		[28] = "SIGWINCH",
		[29] = "SIGIO",
		[30] = "SIGPWR",
		[31] = "SIGSYS",
	};
	/* clang-format on */
	int sig;

	(void)state;
	for (sig = 1; sig < 32; sig++)
		assert_string_equal(gctx_signal_name(sig), want[sig]);
	assert_null(gctx_signal_name(0));
	assert_null(gctx_signal_name(32));
	assert_null(gctx_signal_name(-11));
}

static void test_dev_kind_names(void **state)
{
	/* clang-format off */
	static const char *const names[] = {
		"nvidiactl",
		"nvidia",
		"nvidia-uvm",
		"nvidia-uvm-tools",
		"kfd",
		"drm-render",
	};
	/* clang-format on */
	int k;

	(void)state;
	for (k = GCTX_DEV_NVIDIACTL; k < GCTX_DEV_MAX; k++) {
		assert_string_equal(gctx_dev_kind_name(k), names[k - 1]);
		assert_int_equal(gctx_dev_kind_parse(names[k - 1]), k);
	}
	assert_string_equal(gctx_dev_kind_name(GCTX_DEV_NONE), "?");
	assert_string_equal(gctx_dev_kind_name(GCTX_DEV_MAX), "?");
	assert_int_equal(gctx_dev_kind_parse("nvidia0"), -1);
	assert_int_equal(gctx_dev_kind_parse("?"), -1);
	assert_int_equal(gctx_dev_kind_parse(""), -1);
	assert_int_equal(gctx_dev_kind_parse(NULL), -1);
}

static void test_obj_kind_names(void **state)
{
	/* clang-format off */
	static const char *const names[] = {
		"rm-client",
		"rm-device",
		"rm-subdevice",
		"rm-vaspace",
		"rm-channel-group",
		"rm-ctxshare",
		"rm-channel",
		"rm-compute",
		"rm-memory",
		"rm-object",
		"uvm-space",
		"kfd-process",
		"kfd-queue",
		"kfd-memory",
		"drm-ctx",
		"drm-gem",
	};
	/* clang-format on */
	int k;

	(void)state;
	assert_int_equal(sizeof(names) / sizeof(names[0]), GCTX_OBJ_MAX - 1);
	for (k = GCTX_OBJ_RM_CLIENT; k < GCTX_OBJ_MAX; k++)
		assert_string_equal(gctx_obj_kind_name(k), names[k - 1]);
	assert_string_equal(gctx_obj_kind_name(GCTX_OBJ_MAX), "?");
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		T(test_unknown_kind),
		T(test_nothing_captured),
		T(test_len_past_arrays),
		T(test_errno_names),
		T(test_signal_names),
		T(test_dev_kind_names),
		T(test_obj_kind_names),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
