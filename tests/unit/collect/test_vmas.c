// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Mappings sent by the kernel with a stack (GCTX_EV_VMAS): a process gone before anything read
 * its /proc/PID/maps is symbolised through them alone (its library reopened by path, accepted
 * because its device and inode match, the kernel's dev_t converted); malformed records are
 * refused whole.
 */
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
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <zlib.h>

#include "collect/unwind.h"

struct rec {
	struct gctx_ev_vmas *r;
	__u32 len;
};

/* Append an entry for mp, its path as the kernel sends it (innermost component first). */
static void add(struct rec *b, const struct gctx_map *mp, __u8 flags)
{
	struct gctx_vma v = {
	    .start = mp->start,
	    .end = mp->end,
	    .pgoff = mp->pgoff,
	    .ino = mp->ino,
	    .dev = major(mp->dev) << 20 | minor(mp->dev),
	    .flags = flags | GCTX_VMA_READ,
	};
	char path[256], *comp[32], *save = NULL;
	__u8 *at = b->r->data + b->r->len;
	int n = 0;

	snprintf(path, sizeof(path), "%s", mp->path);
	for (char *c = strtok_r(path, "/", &save); c && n < 32; c = strtok_r(NULL, "/", &save))
		comp[n++] = c;
	while (n-- > 0) {
		size_t l = strlen(comp[n]) + 1;

		memcpy(at + sizeof(v) + v.path_len, comp[n], l);
		v.path_len += l;
	}
	memcpy(at, &v, sizeof(v));
	b->r->len += sizeof(v) + ((v.path_len + 7) & ~7u);
	b->r->n++;
	b->len = GCTX_EV_VMAS_HDR_LEN + b->r->len;
}

/* The mapping of this process that holds addr (read here, alive). */
static struct gctx_map own_map(struct gctx_maps *self, uint64_t addr)
{
	assert_int_equal(gctx_maps__read(self, getpid()), 0);
	for (__u32 i = 0; i < self->n; i++)
		if (addr >= self->v[i].start && addr < self->v[i].end)
			return self->v[i];
	fail_msg("no mapping holds 0x%llx", (unsigned long long)addr);
	return self->v[0];
}

static void test_gone(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)zlibVersion;
	struct gctx_ev_stack *s = calloc(1, sizeof(*s));
	struct rec b = {calloc(1, sizeof(*b.r)), 0};
	struct gctx_maps self = {0}, maps = {0};
	struct gctx_rec_frame out[4];
	struct gctx_map mp;
	const char *how;
	pid_t pid;

	(void)state;
	assert_non_null(s);
	assert_non_null(b.r);
	mp = own_map(&self, addr);
	add(&b, &mp, 0);
	b.r->flags = GCTX_VMAS_LAST;
	/* a child with the same mappings, gone before anything read its maps */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	gctx_unwind_cache_clear(); /* nothing kept: the file is found by path */

	assert_int_equal(gctx_maps__add_vmas(&maps, pid, b.r, b.len), 0);
	gctx_maps__keep(&maps); /* gone: nothing to keep, nothing kept */
	assert_int_equal(maps.n, 1);
	assert_string_equal(maps.v[0].path, mp.path);
	assert_string_equal(maps.v[0].perms, "r-xp");
	assert_true(maps.v[0].dev == mp.dev && maps.v[0].ino == mp.ino);
	s->hdr.tgid = s->hdr.tid = pid;
	s->flags = GCTX_STK_REGS_OK;
	s->regs[16] = addr;
	assert_true(gctx_unwind(s, GCTX_EV_STACK_HDR_LEN, &maps, out, 4, &how) >= 1);
	assert_string_equal(out[0].function, "zlibVersion");
	assert_string_equal(out[0].module, mp.path);

	/* another inode at the path (the kernel's dev_t taken as is, say): not that file */
	gctx_unwind_cache_clear();
	maps.v[0].ino ^= 1;
	assert_true(gctx_unwind(s, GCTX_EV_STACK_HDR_LEN, &maps, out, 4, &how) >= 1);
	assert_string_equal(out[0].function, "");
	assert_non_null(strstr(gctx_unwind_note(), "changed since the process mapped it"));

	gctx_unwind_cache_clear();
	gctx_maps__clear(&maps);
	gctx_maps__clear(&self);
	free(b.r);
	free(s);
}

/* A path the kernel cut (too deep) is kept as its innermost part, never opened. */
static void test_cut(void **state)
{
	struct rec b = {calloc(1, sizeof(*b.r)), 0};
	struct gctx_map mp = {.start = 0x1000, .end = 0x2000, .dev = 1, .ino = 2};
	struct gctx_maps maps = {0};

	(void)state;
	assert_non_null(b.r);
	snprintf(mp.path, sizeof(mp.path), "/deep/er/lib.so");
	add(&b, &mp, GCTX_VMA_PATH_CUT);
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len), 0);
	assert_string_equal(maps.v[0].path, ".../deep/er/lib.so");
	assert_int_equal(gctx_map_open(&maps, &maps.v[0]), -ENOENT);
	gctx_maps__clear(&maps);
	free(b.r);
}

static void test_malformed(void **state)
{
	struct rec b = {calloc(1, sizeof(*b.r)), 0};
	struct gctx_map mp = {.start = 0x1000, .end = 0x2000, .dev = 1, .ino = 2};
	struct gctx_maps maps = {0};
	struct gctx_vma v;

	(void)state;
	assert_non_null(b.r);
	snprintf(mp.path, sizeof(mp.path), "/a/b.so");
	add(&b, &mp, 0);
	add(&b, &mp, 0);
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len), 0);
	assert_int_equal(maps.n, 2);
	maps.n = 0;
	/* shorter than its header, than its data, or data past the record's size */
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, GCTX_EV_VMAS_HDR_LEN - 1), -EINVAL);
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len - 8), -EINVAL);
	b.r->len = GCTX_VMAS_BYTES + 8;
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, sizeof(*b.r)), -EINVAL);
	b.r->len = b.len - GCTX_EV_VMAS_HDR_LEN;
	/* more entries than the data holds */
	b.r->n = 3;
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len), -EINVAL);
	b.r->n = 2;
	/* a path longer than its bytes, a component without its NUL, an empty range */
	memcpy(&v, b.r->data, sizeof(v));
	v.path_len = 200;
	memcpy(b.r->data, &v, sizeof(v));
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len), -EINVAL);
	v.path_len = 3; /* "b.so" cut: no NUL */
	memcpy(b.r->data, &v, sizeof(v));
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len), -EINVAL);
	v.path_len = 7;
	v.end = v.start;
	memcpy(b.r->data, &v, sizeof(v));
	assert_int_equal(gctx_maps__add_vmas(&maps, 1, b.r, b.len), -EINVAL);
	assert_int_equal(maps.n, 0);
	gctx_maps__clear(&maps);
	free(b.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gone),
	    cmocka_unit_test(test_cut),
	    cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
