// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of reading whole Python line tables from a process: this test's own memory holds
 * a fake code object and its bytes object (the reads are the real process_vm_readv). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>
#include <cmocka.h>

#include "collect/pymem.c" /* the module is live-only: built into its test directly */

#define ENTRIES 300 /* 3.11+ entries of 3 bytes: instruction k is on line FIRST + k + 1 */
#define FIRST	500
#define NOPID	0x3ffffff0 /* above any pid_max: no such process */

static struct {
	__s64 refcnt;
	__u64 type;
	__s64 size;
	__u64 hash;
	__u8 data[ENTRIES * 3];
} bytes_obj __attribute__((aligned(8)));
static __u8 code_obj[256] __attribute__((aligned(8)));
static struct gctx_ev_stack ev;
static struct gctx_rec_frame out[1];
static struct gctx_py_layout lay;

static int setup(void **state)
{
	__s32 first = FIRST;
	__u64 at = (unsigned long)&bytes_obj;

	(void)state;
	for (int k = 0; k < ENTRIES; k++) {
		bytes_obj.data[3 * k] = 0x80 | 11 << 3;
		bytes_obj.data[3 * k + 1] = 0;
		bytes_obj.data[3 * k + 2] = 1;
	}
	bytes_obj.refcnt = 1;
	bytes_obj.type = (unsigned long)&lay; /* any object address */
	bytes_obj.size = sizeof(bytes_obj.data);
	assert_true(gctx_py_layout_for(12, &lay));
	memset(code_obj, 0, sizeof(code_obj));
	memcpy(code_obj + lay.code_firstlineno, &first, sizeof(first));
	memcpy(code_obj + lay.code_linetable, &at, sizeof(at));
	memset(&ev, 0, sizeof(ev));
	ev.py_version = 0x030c01f0;
	ev.py[0].code = (unsigned long)code_obj;
	ev.py[0].firstlineno = FIRST;
	ev.py[0].instr = 250; /* past the 128 entries of the prefix */
	ev.py[0].flags = GCTX_PYF_LT_CUT;
	ev.py[0].lt_len = GCTX_PY_LT_LEN;
	memcpy(ev.py[0].lt, bytes_obj.data, GCTX_PY_LT_LEN);
	memset(out, 0, sizeof(out));
	return 0;
}

/* fill_lines with a fresh cache; the unknown count */
static int fill(const __u32 *pids, int npids)
{
	struct gctx_pymem *m = gctx_pymem__new();
	int n;

	assert_non_null(m);
	n = gctx_pymem__fill_lines(m, &ev, 1, pids, npids, out);
	gctx_pymem__free(m);
	return n;
}

static void test_reads_the_line(void **state)
{
	__u32 self = getpid();

	(void)state;
	assert_int_equal(fill(&self, 1), 0);
	assert_int_equal(out[0].line, FIRST + 251);
}

/* The stack's process is gone: the one it was forked from has the same memory. */
static void test_parent(void **state)
{
	__u32 pids[] = {NOPID, getpid()};

	(void)state;
	assert_int_equal(fill(pids, 1), 1);
	assert_int_equal(out[0].line, 0);
	assert_int_equal(fill(pids, 2), 0);
	assert_int_equal(out[0].line, FIRST + 251);
}

/* What the process holds now is not what the kernel saw: no line, counted. */
static void test_changed(void **state)
{
	__u32 self = getpid();
	__u64 bad = (unsigned long)&bytes_obj + 1;

	(void)state;
	bytes_obj.data[10] ^= 1; /* another table */
	assert_int_equal(fill(&self, 1), 1);
	setup(state);
	ev.py[0].firstlineno = FIRST + 1; /* another code object */
	assert_int_equal(fill(&self, 1), 1);
	setup(state);
	bytes_obj.size = GCTX_PY_LT_MAX + 1; /* implausible size */
	assert_int_equal(fill(&self, 1), 1);
	setup(state);
	bytes_obj.refcnt = 0; /* freed */
	assert_int_equal(fill(&self, 1), 1);
	setup(state);
	memcpy(code_obj + lay.code_linetable, &bad, sizeof(bad)); /* misaligned pointer */
	assert_int_equal(fill(&self, 1), 1);
	setup(state);
	ev.py[0].code = 4096; /* unmapped */
	assert_int_equal(fill(&self, 1), 1);
	assert_int_equal(out[0].line, 0);
}

/* Read once per (pid, code object): later stacks use the copy, while it matches their prefix. */
static void test_cache(void **state)
{
	struct gctx_pymem *m = gctx_pymem__new();
	__u32 self = getpid();

	(void)state;
	assert_int_equal(gctx_pymem__fill_lines(m, &ev, 1, &self, 1, out), 0);
	memset(code_obj, 0, sizeof(code_obj)); /* memory no longer readable as a code object */
	out[0].line = 0;
	assert_int_equal(gctx_pymem__fill_lines(m, &ev, 1, &self, 1, out), 0);
	assert_int_equal(out[0].line, FIRST + 251);
	/* another frame at the same address (the code object was freed and reused) */
	ev.py[0].lt[0] ^= 1;
	out[0].line = 0;
	assert_int_equal(gctx_pymem__fill_lines(m, &ev, 1, &self, 1, out), 1);
	assert_int_equal(out[0].line, 0);
	gctx_pymem__free(m);
}

/* Frames whose line is in the prefix, or whose table was not cut, are left alone. */
static void test_nothing_to_read(void **state)
{
	__u32 pid = NOPID;

	(void)state;
	ev.py[0].instr = 10;
	out[0].line = 7;
	assert_int_equal(fill(&pid, 1), 0);
	assert_int_equal(out[0].line, 7);
	ev.py[0].instr = 250;
	ev.py[0].flags = 0;
	assert_int_equal(fill(&pid, 1), 0);
	assert_int_equal(gctx_pymem__fill_lines(NULL, &ev, 1, &pid, 1, out), 0);
	ev.py[0].flags = GCTX_PYF_LT_CUT;
	assert_int_equal(gctx_pymem__fill_lines(NULL, &ev, 1, &pid, 1, out), 1);
}

/* A process in another process's memory region whose faults are never served (a userfaultfd
 * region, as the user's own FUSE file whose reads never answer: issue 27). */
static pid_t stuck_memory(__u64 *addr)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		long uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		struct uffdio_api api = {.api = UFFD_API};
		void *a =
		    mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct uffdio_register reg = {.range = {(unsigned long)a, 1 << 16},
					      .mode = UFFDIO_REGISTER_MODE_MISSING};
		__u64 v = 0;

		if (uffd >= 0 && a != MAP_FAILED && !ioctl(uffd, UFFDIO_API, &api) &&
		    !ioctl(uffd, UFFDIO_REGISTER, &reg))
			v = (unsigned long)a;
		if (write(p[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], addr, sizeof(*addr)), sizeof(*addr));
	close(p[0]);
	return pid;
}

/* The frame's code object lies in memory that never reads: the line is unknown, at once;
 * the collector never waits on the process (on fc0e731 it stayed blocked for good). */
static void test_never_blocks(void **state)
{
	__u64 addr = 0;
	pid_t victim = stuck_memory(&addr), reader;
	int st = 0, i;

	(void)state;
	if (!addr) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
		skip(); /* userfaultfd for kernel faults needs CAP_SYS_PTRACE */
	}
	ev.py[0].code = addr;
	reader = fork();
	assert_true(reader >= 0);
	if (!reader) {
		__u32 pid = victim;

		_exit(fill(&pid, 1) == 1 && out[0].line == 0 ? 0 : 1);
	}
	for (i = 0; i < 300 && waitpid(reader, &st, WNOHANG) != reader; i++)
		usleep(10000);
	/* the victim's end closes its userfaultfd: a blocked read fails then */
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	if (i == 300) {
		kill(reader, SIGKILL);
		waitpid(reader, NULL, 0);
	}
	assert_true(i < 300);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_reads_the_line, setup),
		cmocka_unit_test_setup(test_parent, setup),
		cmocka_unit_test_setup(test_changed, setup),
		cmocka_unit_test_setup(test_cache, setup),
		cmocka_unit_test_setup(test_nothing_to_read, setup),
		cmocka_unit_test_setup(test_never_blocks, setup),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
