// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Live printing (`gpuctx record` while tracing) and the string formatters the text report
 * shares with it: one line per record or finding, every odd byte escaped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <linux/types.h>

#include "gpuctx_events.h"
#include "output/report/print.h"

#include "builders.h"
#include "output_helpers.h"

static struct gctx_ev_mmap ev_mmap(__u32 pid, __u64 ts, const char *comm, int fd, __s64 ret)
{
	struct gctx_ev_mmap e;

	ev_init(&e, sizeof(e), GCTX_EV_MMAP, pid, pid, ts, comm);
	e.file = 0xffff888000a02000ULL;
	e.fd = fd;
	e.kind = GCTX_DEV_NVIDIA;
	e.len = 4096;
	e.ret = ret;
	e.prot = 0x3;
	e.flags = 0x1;
	return e;
}

static char *print_one(__u32 type, const void *data, __u32 len)
{
	struct capture c;

	capture_begin(&c);
	gctx_print_event(c.f, type, data, len, T0);
	return capture_end(&c);
}

static void expect_line(__u32 type, const void *data, __u32 len, const char *want)
{
	char *s = print_one(type, data, len);

	assert_contains(s, want);
	assert_non_null(strchr(s, '\n'));
	assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1); /* exactly one line */
	free(s);
}

static void expect_nothing(__u32 type, const void *data, __u32 len)
{
	char *s = print_one(type, data, len);

	assert_string_equal(s, "");
	free(s);
}

static void test_print_every_type(void **state)
{
	static const char args[] = "/usr/bin/python3\0train.py\0--epochs\0001";
	static const char odd[] = "sh\0-c\0a\x01"
				  "b\\c\xff";
	struct gctx_ev_fork fk = ev_fork(1234, 1240, T0 + 1234000, "trainer", false);
	struct gctx_ev_fork th = ev_fork(1234, 1241, T0 + 1234000, "trainer", true);
	struct gctx_ev_exec ex =
	    ev_exec(1234, T0, "python3", "/usr/bin/python3", args, sizeof(args));
	struct gctx_ev_exec ex2 = ev_exec(1234, T0, "sh", "/bin/sh", odd, sizeof(odd) - 1);
	struct gctx_ev_exit ok = ev_exit(1234, 1234, T0, "trainer", 0, true);
	struct gctx_ev_exit seg = ev_exit(1240, 1240, T0, "trainer", 11 | 0x80, true);
	struct gctx_ev_exit code = ev_exit(1240, 1240, T0, "trainer", 3 << 8, true);
	struct gctx_ev_exit thr = ev_exit(1234, 1241, T0, "trainer", 0, false);
	struct gctx_ev_open op = ev_open(1234, T0, "trainer", CTL_FILE, 3, O_RDWR_K | O_CLOEXEC_K);
	struct gctx_ev_open bad = ev_open(1234, T0, "trainer", CTL_FILE, -13, O_RDWR_K);
	struct gctx_ev_ioctl io =
	    ev_rm_alloc(1234, T0, "trainer", 3, NV_CLIENT, NV_CLIENT, NV_DEVICE, 0x80, 0, 0);
	struct gctx_ev_ioctl io_st =
	    ev_rm_alloc(1240, T0, "trainer", 3, NV_CLIENT, NV_CLIENT, NV_DEVICE, 0x80, 0x23, 0);
	struct gctx_ev_ioctl io_err =
	    ev_rm_alloc(1240, T0, "trainer", 3, NV_CLIENT, NV_CLIENT, NV_DEVICE, 0x80, 0, -9);
	struct gctx_ev_mmap mm = ev_mmap(1234, T0, "trainer", 4, 0x7f0000001000LL);
	struct gctx_ev_mmap mm_err = ev_mmap(1234, T0, "trainer", 4, -12);
	struct gctx_ev_fd cl =
	    ev_fd(GCTX_EV_CLOSE, 1234, T0, "trainer", CTL_FILE, 3, GCTX_DEV_NVIDIACTL);
	struct gctx_ev_fd kept =
	    ev_fd(GCTX_EV_FD_KEPT, 1234, T0, "trainer", CTL_FILE, 3, GCTX_DEV_NVIDIACTL);

	(void)state;
	expect_line(GCTX_EV_FORK, &fk, sizeof(fk), "   0.001234 1234/1234");
	expect_line(GCTX_EV_FORK, &fk, sizeof(fk), " trainer ");
	expect_line(GCTX_EV_FORK, &fk, sizeof(fk), "fork     -> pid 1240\n");
	expect_line(GCTX_EV_FORK, &th, sizeof(th), "clone    -> thread 1241\n");
	expect_line(GCTX_EV_EXEC, &ex, sizeof(ex),
		    "exec     /usr/bin/python3 train.py --epochs 1\n");
	expect_line(GCTX_EV_EXEC, &ex2, sizeof(ex2), "exec     /bin/sh -c a\\x01b\\\\c\\xff\n");
	expect_line(GCTX_EV_EXIT, &ok, sizeof(ok), "exit     status 0\n");
	expect_line(GCTX_EV_EXIT, &code, sizeof(code), "exit     status 3\n");
	expect_line(GCTX_EV_EXIT, &seg, sizeof(seg), "exit     killed by SIGSEGV (core dumped)\n");
	expect_line(GCTX_EV_EXIT, &thr, sizeof(thr), "1234/1241");
	expect_line(GCTX_EV_EXIT, &thr, sizeof(thr), "thread-exit\n");
	expect_line(GCTX_EV_OPEN, &op, sizeof(op),
		    "open     nvidiactl /dev/nvidiactl fd=3 O_RDWR|O_CLOEXEC\n");
	expect_line(GCTX_EV_OPEN, &bad, sizeof(bad), "-> -1 EACCES\n");
	expect_line(GCTX_EV_IOCTL, &io, sizeof(io), "ioctl    nvidiactl fd=3 RM_ALLOC ");
	expect_line(GCTX_EV_IOCTL, &io, sizeof(io), "-> NV_OK\n");
	expect_line(GCTX_EV_IOCTL, &io_st, sizeof(io_st), "-> NV_ERR_INVALID_CLIENT\n");
	expect_line(GCTX_EV_IOCTL, &io_err, sizeof(io_err), "-> -1 EBADF\n");
	expect_line(GCTX_EV_MMAP, &mm, sizeof(mm),
		    "mmap     nvidia fd=4 len=4096 prot=rw- -> 0x7f0000001000\n");
	expect_line(GCTX_EV_MMAP, &mm_err, sizeof(mm_err), "-> -1 ENOMEM\n");
	expect_line(GCTX_EV_CLOSE, &cl, sizeof(cl), "close    nvidiactl fd=3\n");
	expect_line(GCTX_EV_FD_KEPT, &kept, sizeof(kept),
		    "fd-kept  nvidiactl fd=3 survived exec\n");
}

static void test_print_short_and_unknown(void **state)
{
	const struct rec_size *types = rec_sizes; /* the first N_PRINTED_RECS */
	unsigned char *buf;
	size_t i, full;

	(void)state;
	for (i = 0; i < N_PRINTED_RECS; i++) {
		/* an exact-size heap copy so valgrind sees any read past len */
		buf = malloc(types[i].len);
		assert_non_null(buf);
		memset(buf, 0xab, types[i].len);
		expect_nothing(types[i].type, buf, types[i].len - 1);
		expect_nothing(types[i].type, buf, sizeof(struct gctx_ev_hdr));
		expect_nothing(types[i].type, buf, 0);
		free(buf);
		/* garbage of the right size still prints one line (an ioctl record's lengths must
		 * add up when it is packed: garbage of the whole struct's size, as older traces
		 * stored it) */
		full = types[i].type == GCTX_EV_IOCTL ? sizeof(struct gctx_ev_ioctl) : types[i].len;
		buf = malloc(full + 3);
		assert_non_null(buf);
		memset(buf, 0xff, full + 3);
		expect_line(types[i].type, buf + 3, full, "\n");
		if (types[i].type == GCTX_EV_IOCTL)
			expect_nothing(types[i].type, buf + 3, types[i].len);
		free(buf);
	}
	expect_nothing(0, "x", 1);
	expect_nothing(GCTX_EV_KERNEL_MAX, "x", 1);
	expect_nothing(GCTX_REC_END, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 40);
	expect_nothing(GCTX_EV_FORK, NULL, sizeof(struct gctx_ev_fork));
}

static void test_print_finding(void **state)
{
	struct gctx_finding f;
	struct capture c;
	char *s;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.id = 1;
	f.kind = GCTX_FIND_INHERITED_GPU_USE;
	f.severity = GCTX_SEV_ERROR;
	f.pid = 1240;
	f.time_ns = T0 + 4000000;
	snprintf(f.detail, sizeof(f.detail), "pid 1240 used nvidiactl\nfile #1");
	capture_begin(&c);
	gctx_print_finding(c.f, &f, T0);
	s = capture_end(&c);
	assert_string_equal(
	    s, "   0.004000 FINDING error inherited-gpu-use pid 1240: pid 1240 used nvidiactl"
	       "\\x0afile #1\n");
	free(s);
}

static void test_format_helpers(void **state)
{
	char buf[64], tiny[6];

	(void)state;
	gctx_format_argv(buf, sizeof(buf), "a\0b c\0\0d\0\0\0", 11);
	assert_string_equal(buf, "a b c  d");
	gctx_format_argv(buf, sizeof(buf), NULL, 5);
	assert_string_equal(buf, "");
	gctx_format_argv(buf, sizeof(buf), "x", 0);
	assert_string_equal(buf, "");
	/* cut between whole escapes, always terminated */
	gctx_format_argv(tiny, sizeof(tiny),
			 "ab\x01"
			 "cd",
			 5);
	assert_string_equal(tiny, "ab");
	gctx_format_argv(tiny, 1, "abc", 3);
	assert_string_equal(tiny, "");
	gctx_format_argv(tiny, 0, "abc", 3); /* writes nothing */
	gctx_format_str(buf, sizeof(buf), "no\tnul", 4);
	assert_string_equal(buf, "no\\x09n");
	/* a line's last guard: escapes and characters kept (d\xc3\xa9j\xc3\xa0), what acts
	 * (ESC, U+202E, DEL, newline, U+2028) or is not UTF-8 '?', byte for byte */
	strcpy(buf, "a\\x1b\x1b[2J\xe2\x80\xae\x7f\nd\xc3\xa9j\xc3\xa0\xe2\x80\xa8\xff");
	gctx_printable(buf);
	assert_string_equal(buf, "a\\x1b?[2J?????d\xc3\xa9j\xc3\xa0????");
	gctx_format_open_flags(buf, sizeof(buf), 02 | 0100 | 02000000 | 0x80000000u);
	assert_string_equal(buf, "O_RDWR|O_CREAT|O_CLOEXEC|0x80000000");
	gctx_format_open_flags(buf, sizeof(buf), 0);
	assert_string_equal(buf, "O_RDONLY");
	gctx_format_reltime(buf, sizeof(buf), T0 + 1234567890, T0);
	assert_string_equal(buf, "1.234567");
	gctx_format_reltime(buf, sizeof(buf), T0 - 100000, T0);
	assert_string_equal(buf, "-0.000100");
	gctx_format_signal(buf, sizeof(buf), 9);
	assert_string_equal(buf, "SIGKILL");
	gctx_format_signal(buf, sizeof(buf), 99);
	assert_string_equal(buf, "signal 99");
	gctx_format_errno(buf, sizeof(buf), 9);
	assert_string_equal(buf, "EBADF");
	gctx_format_errno(buf, sizeof(buf), 999);
	assert_string_equal(buf, "errno 999");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_print_every_type),
	    cmocka_unit_test(test_print_short_and_unknown),
	    cmocka_unit_test(test_print_finding),
	    cmocka_unit_test(test_format_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
