// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Whole Python line tables from a process's memory (interface in pymem.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "collect/pymem.h"
#include "decode/pystack.h"

#define CACHE_N	   64  /* tables kept: at most 64 x GCTX_PY_LT_MAX = 4 MiB */
#define CODE_BYTES 256 /* room for the head of a code object, up to co_linetable */

struct table {
	__u32 pid;
	__u64 code;
	__u64 used; /* clock of the last use: the least recent is replaced */
	size_t len;
	__u8 *lt;
};

struct gctx_pymem {
	struct table t[CACHE_N];
	__u64 clock;
};

struct gctx_pymem *gctx_pymem__new(void)
{
	return calloc(1, sizeof(struct gctx_pymem));
}

void gctx_pymem__free(struct gctx_pymem *m)
{
	if (!m)
		return;
	for (int i = 0; i < CACHE_N; i++)
		free(m->t[i].lt);
	free(m);
}

/* All of [addr, addr + len) of pid, or nothing: an unmapped page, a process gone (ESRCH). */
static bool rd(__u32 pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(unsigned long)addr, .iov_len = len};

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* f's whole line table from pid's memory, checked against the prefix; malloc'd. */
static __u8 *read_table(__u32 pid, const struct gctx_py_layout *l, const struct gctx_py_frame *f,
			size_t *len)
{
	__u8 code[CODE_BYTES], hdr[GCTX_PY_BYTES_DATA], *lt;
	/* no further than needed: a small object may end at the end of a mapping */
	size_t n =
	    (l->code_linetable > l->code_firstlineno ? l->code_linetable : l->code_firstlineno) + 8;
	__u64 at;

	if (n > sizeof(code) || !rd(pid, f->code, code, n))
		return NULL;
	at = gctx_py_code_linetable(l, f, code, n);
	if (!at || !rd(pid, at, hdr, sizeof(hdr)))
		return NULL;
	n = gctx_py_table_size(hdr, sizeof(hdr));
	if (!n)
		return NULL;
	lt = malloc(n);
	if (!lt)
		return NULL;
	if (!rd(pid, at + GCTX_PY_BYTES_DATA, lt, n) || !gctx_py_table_extends(f, lt, n)) {
		free(lt);
		return NULL;
	}
	*len = n;
	return lt;
}

static struct table *cached(struct gctx_pymem *m, __u32 pid, const struct gctx_py_frame *f)
{
	for (int i = 0; i < CACHE_N; i++) {
		struct table *t = &m->t[i];

		/* same pid and address, and still the table of this frame's prefix (the
		 * address may have been reused for another code object since) */
		if (t->lt && t->pid == pid && t->code == f->code &&
		    gctx_py_table_extends(f, t->lt, t->len))
			return t;
	}
	return NULL;
}

static struct table *store(struct gctx_pymem *m, __u32 pid, const struct gctx_py_frame *f, __u8 *lt,
			   size_t len)
{
	struct table *t = &m->t[0];

	for (int i = 1; i < CACHE_N && t->lt; i++)
		if (!m->t[i].lt || m->t[i].used < t->used)
			t = &m->t[i];
	free(t->lt);
	t->pid = pid;
	t->code = f->code;
	t->lt = lt;
	t->len = len;
	return t;
}

/* f's table from the first of pids that has it: cached ones first, then a read. */
static const struct table *table_for(struct gctx_pymem *m, const struct gctx_py_layout *l,
				     const struct gctx_py_frame *f, const __u32 *pids, int npids)
{
	struct table *t = NULL;
	size_t len = 0;
	__u8 *lt;

	for (int i = 0; i < npids && !t; i++)
		t = cached(m, pids[i], f);
	for (int i = 0; i < npids && !t; i++) {
		lt = read_table(pids[i], l, f, &len);
		if (lt)
			t = store(m, pids[i], f, lt, len);
	}
	if (t)
		t->used = ++m->clock;
	return t;
}

int gctx_pymem__fill_lines(struct gctx_pymem *m, const struct gctx_ev_stack *s, int np,
			   const __u32 *pids, int npids, struct gctx_rec_frame *out)
{
	struct gctx_py_layout l;
	bool layout = gctx_py_layout_for((s->py_version >> 16) & 0xff, &l);
	int unknown = 0;

	for (int i = 0; i < np; i++) {
		const struct gctx_py_frame *f = &s->py[i];
		const struct table *t;
		int line;

		if (!gctx_py_frame_line_cut(f))
			continue;
		t = m && layout ? table_for(m, &l, f, pids, npids) : NULL;
		line = t ? gctx_py_frame_line(f, t->lt, t->len) : -2;
		if (line > 0)
			out[i].line = line;
		else if (line != -1)
			unknown++; /* -1: the instruction has no line (CPython says None) */
	}
	return unknown;
}
