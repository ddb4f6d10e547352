// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A tracepoint program's context struct against the kernel's format text (issue 26): the
 * struct open_exit_all used to read syscalls:sys_exit_open through (raw_syscalls' sys_exit,
 * "long id" at 8) is refused, the syscalls:* layout (int __syscall_nr, padding, long ret) and
 * vmlinux.h's signal records are accepted, and this kernel's own format files agree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include "collect/tpformat.h"

static const char sys_exit_open[] =
    "name: sys_exit_open\nID: 700\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n"
    "print fmt: \"0x%lx\", REC->ret\n";

static const char signal_generate[] =
    "name: signal_generate\nID: 200\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int sig;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:int errno;\toffset:12;\tsize:4;\tsigned:1;\n"
    "\tfield:int code;\toffset:16;\tsize:4;\tsigned:1;\n"
    "\tfield:char comm[16];\toffset:20;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:36;\tsize:4;\tsigned:1;\n"
    "\tfield:int group;\toffset:40;\tsize:4;\tsigned:1;\n"
    "\tfield:int result;\toffset:44;\tsize:4;\tsigned:1;\n";

/* vmlinux.h's trace_event_raw_sys_exit: what open_exit_all read before the fix */
static const struct gctx_tp_member raw_sys_exit[] = {
    {"ent", 0, 8}, {"id", 8, 8}, {"ret", 16, 8}, {"__data", 24, 0}};
/* bpf/tpctx.bpf.h's gctx_tp_sys_exit */
static const struct gctx_tp_member sys_exit[] = {
    {"common_type", 0, 2}, {"common_flags", 2, 1}, {"common_preempt_count", 3, 1},
    {"common_pid", 4, 4},  {"__syscall_nr", 8, 4}, {"__pad_nr", 12, 4},
    {"ret", 16, 8}};

static void test_raw_syscalls_struct_refused(void **state)
{
	char err[160] = "";

	assert_int_equal(gctx_tpformat__match(sys_exit_open, raw_sys_exit, 4, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "'id'"));
}

static void test_syscalls_struct_accepted(void **state)
{
	char err[160] = "";

	assert_int_equal(gctx_tpformat__match(sys_exit_open, sys_exit, 7, err, sizeof(err)), 0);
}

static void test_wrong_offset_or_size_refused(void **state)
{
	struct gctx_tp_member m[7];
	char err[160] = "";

	memcpy(m, sys_exit, sizeof(m));
	m[6].off = 12; /* ret read over the padding */
	assert_int_equal(gctx_tpformat__match(sys_exit_open, m, 7, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'ret' at offset 12"));
	memcpy(m, sys_exit, sizeof(m));
	m[4].size = 8; /* __syscall_nr with its padding */
	assert_int_equal(gctx_tpformat__match(sys_exit_open, m, 7, err, sizeof(err)), -1);
}

static void test_vmlinux_signal_struct_accepted(void **state)
{
	static const struct gctx_tp_member gen[] = {
	    {"ent", 0, 8},  {"sig", 8, 4},    {"errno", 12, 4},	 {"code", 16, 4},  {"comm", 20, 16},
	    {"pid", 36, 4}, {"group", 40, 4}, {"result", 44, 4}, {"__data", 48, 0}};
	struct gctx_tp_member bad[9];
	char err[160] = "";

	assert_int_equal(gctx_tpformat__match(signal_generate, gen, 9, err, sizeof(err)), 0);
	memcpy(bad, gen, sizeof(bad));
	bad[0].size = 16; /* a header longer than the common fields */
	assert_int_equal(gctx_tpformat__match(signal_generate, bad, 9, err, sizeof(err)), -1);
}

/* this kernel's own file, where tracefs is readable (it is for root) */
static void test_live_format(void **state)
{
	char buf[4096], err[160] = "";

	if (gctx_tpformat__read("syscalls", "sys_exit_open", buf, sizeof(buf)))
		skip();
	assert_int_equal(gctx_tpformat__match(buf, sys_exit, 7, err, sizeof(err)), 0);
	assert_int_equal(gctx_tpformat__match(buf, raw_sys_exit, 4, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_raw_syscalls_struct_refused),
	    cmocka_unit_test(test_syscalls_struct_accepted),
	    cmocka_unit_test(test_wrong_offset_or_size_refused),
	    cmocka_unit_test(test_vmlinux_signal_struct_accepted),
	    cmocka_unit_test(test_live_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
