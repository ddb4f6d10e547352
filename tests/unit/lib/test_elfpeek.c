// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the ELF facts gpuctx reads itself (issue 27): the same answers as binutils,
 * by reads only, and nothing but "not found" from a file cut anywhere. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/elfpeek.h"

static int mem_read(void *ctx, void *dst, size_t len, __u64 off)
{
	memcpy(dst, (const char *)ctx + off, len);
	return 0;
}

/* This test's own build-id and .text, as readelf reports them. */
static void test_self(void **state)
{
	struct gctx_elf_src src;
	__u8 id[20];
	char hex[41] = "", want[64] = "", self[256] = "", cmd[512];
	__u64 addr, off, size, bias = 1;
	__u32 type;
	bool is_exec = true;
	int fd = open("/proc/self/exe", O_RDONLY), n;
	FILE *p;

	(void)state;
	assert_true(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: //p'",
		 self);
	p = popen(cmd, "r");
	assert_true(fd >= 0 && p);
	if (!fgets(want, sizeof(want), p))
		want[0] = 0;
	pclose(p);
	want[strcspn(want, "\n")] = 0;
	assert_true(gctx_elfpeek_fd_src(fd, &src));
	n = gctx_elfpeek_build_id(&src, id, sizeof(id));
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	if (want[0]) /* binutils present */
		assert_string_equal(hex, want);
	assert_true(gctx_elfpeek_section(&src, ".text", &addr, &off, &size, &type));
	assert_true(size > 0 && addr > 0);
	assert_false(gctx_elfpeek_section(&src, ".no-such-section", &addr, &off, &size, &type));
	/* a PIE mapped from offset 0 at 0x555500000000: bias is the load address */
	assert_true(gctx_elfpeek_bias(&src, 0, 0x555500000000ull, &bias, &is_exec));
	assert_false(is_exec);
	assert_int_equal(bias, 0x555500000000ull);
	close(fd);
}

/* The kernel's start_code for this process is its load bias plus the lowest executable
 * segment's vaddr: what lets the kernel place _PyRuntime at exec from a per-file offset. */
static void test_text_vaddr(void **state)
{
	char self[256] = "", line[512], stat[1024], *rp;
	unsigned long long lo = 0, pgoff = 1, start_code = 0;
	struct gctx_elf_src src;
	__u64 vaddr = 0, bias = 0;
	bool is_exec, found = false;
	int fd = open("/proc/self/exe", O_RDONLY);
	FILE *f;

	(void)state;
	assert_true(fd >= 0 && readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
	assert_true(gctx_elfpeek_fd_src(fd, &src));
	assert_true(gctx_elfpeek_text_vaddr(&src, &vaddr));
	/* the mapping of the executable from offset 0 gives the bias */
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char path[256] = "";

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %255s", &lo, &pgoff, path) == 3 &&
		    pgoff == 0 && !strcmp(path, self))
			found = true;
	}
	fclose(f);
	assert_true(found);
	assert_true(gctx_elfpeek_bias(&src, 0, lo, &bias, &is_exec));
	f = fopen("/proc/self/stat", "r");
	assert_non_null(f);
	assert_non_null(fgets(stat, sizeof(stat), f));
	fclose(f);
	rp = strrchr(stat, ')');
	assert_non_null(rp);
	/* after the name: state is field 3, startcode field 26 */
	rp += 2;
	for (int field = 3; field < 26; field++) {
		rp = strchr(rp, ' ');
		assert_non_null(rp);
		rp++;
	}
	start_code = strtoull(rp, NULL, 10);
	assert_int_equal(start_code, bias + vaddr);
	close(fd);
}

/* Every prefix of the file (a library truncated under us) and a byte flipped anywhere in its
 * headers: an answer or "not found", never a read out of the bytes. */
static void test_cut(void **state)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	size_t len = 16384;
	char *buf = malloc(len), *cut;
	__u64 a, o, s, b;
	__u32 t;
	__u8 id[20];
	bool x;

	(void)state;
	assert_true(fd >= 0 && buf && pread(fd, buf, len, 0) == (ssize_t)len);
	for (size_t n = 0; n < len; n += 7) {
		struct gctx_elf_src src = {mem_read, NULL, n};

		cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees any read past them */
		memcpy(cut, buf, n);
		src.ctx = cut;
		gctx_elfpeek_build_id(&src, id, sizeof(id));
		gctx_elfpeek_bias(&src, 0, 0, &b, &x);
		gctx_elfpeek_section(&src, ".text", &a, &o, &s, &t);
		free(cut);
	}
	for (size_t i = 0; i < 1024; i++) {
		struct gctx_elf_src src = {mem_read, buf, len};

		buf[i] ^= 0xff;
		gctx_elfpeek_build_id(&src, id, sizeof(id));
		gctx_elfpeek_bias(&src, 4096, 0, &b, &x);
		gctx_elfpeek_section(&src, ".PyRuntime", &a, &o, &s, &t);
		buf[i] ^= 0xff;
	}
	free(buf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self),
	    cmocka_unit_test(test_text_vaddr),
	    cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
