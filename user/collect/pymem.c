// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Whole Python line tables from a process's memory (interface in pymem.h). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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

struct reader;
static void reader_abandon(struct reader *r);

struct gctx_pymem {
	struct table t[CACHE_N];
	__u64 clock;
	struct reader *reader;	/* the thread that reads, started at the first read */
	unsigned int abandoned; /* readers left stuck in a process's memory */
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
	if (m->reader)
		reader_abandon(m->reader);
	free(m);
}

/*
 * Reads of a traced process's memory never block gpuctx (issue 27). process_vm_readv faults
 * in what is not resident, and the process chooses its memory: a page of its own FUSE file
 * (or userfaultfd) whose read never completes kept gpuctx in D state for good. So a read
 * takes only pages the process has resident (/proc/PID/pagemap says present: no fault), and
 * runs in a reader thread that gpuctx waits for READ_BUDGET_MS at most; one that overruns
 * (the page went between the check and the read, the address space lock is held) is
 * abandoned to its fate, and after MAX_ABANDONED of them no more reads are tried.
 */
#define READ_BUDGET_MS 1000 /* a loaded machine (load 20 on 2 cores) took over 100 ms */
#define MAX_ABANDONED  4
#define PAGE	       4096ull

struct reader {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool busy, abandoned;
	__u32 pid;
	__u64 addr;
	size_t len;
	bool ok;
	__u8 buf[GCTX_PY_LT_MAX];
};

/* Every page of [addr, addr + len) present in pid's page tables. */
static bool resident(__u32 pid, __u64 addr, size_t len)
{
	__u64 first = addr / PAGE, last = (addr + len - 1) / PAGE, e[32];
	char fn[48];
	bool ok = true;
	int fd;

	if (addr + len < addr)
		return false;
	snprintf(fn, sizeof(fn), "/proc/%u/pagemap", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	for (__u64 pg = first; ok && pg <= last; pg += 32) {
		size_t n = last - pg + 1 < 32 ? last - pg + 1 : 32;

		ok = pread(fd, e, n * sizeof(e[0]), pg * sizeof(e[0])) ==
		     (ssize_t)(n * sizeof(e[0]));
		for (size_t i = 0; ok && i < n; i++)
			ok = e[i] >> 63; /* PM_PRESENT */
	}
	close(fd);
	return ok;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct iovec local, remote;

		while (!r->busy && !r->abandoned)
			pthread_cond_wait(&r->cv, &r->lock);
		if (r->abandoned && !r->busy)
			break;
		pthread_mutex_unlock(&r->lock);
		local = (struct iovec){.iov_base = r->buf, .iov_len = r->len};
		remote =
		    (struct iovec){.iov_base = (void *)(unsigned long)r->addr, .iov_len = r->len};
		r->ok = resident(r->pid, r->addr, r->len) &&
			process_vm_readv(r->pid, &local, 1, &remote, 1, 0) == (ssize_t)r->len;
		pthread_mutex_lock(&r->lock);
		r->busy = false;
		pthread_cond_broadcast(&r->cv);
		if (r->abandoned)
			break;
	}
	pthread_mutex_unlock(&r->lock);
	/* abandoned: nobody else holds r now */
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cv);
	free(r);
	return NULL;
}

static struct reader *reader_new(void)
{
	struct reader *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	sigset_t all, old;
	pthread_t t;
	int err;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* signals are the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, NULL, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->cv);
		free(r);
		return NULL;
	}
	pthread_detach(t);
	return r;
}

/* Let the reader go (it frees itself when its read, if any, returns). */
static void reader_abandon(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	r->abandoned = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->lock);
}

/* All of [addr, addr + len) of pid, or nothing: an unmapped or not resident page, a process
 * gone (ESRCH), a read past its budget. */
static bool rd(struct gctx_pymem *m, __u32 pid, __u64 addr, void *buf, size_t len)
{
	struct reader *r;
	struct timespec dl;
	bool ok;

	if (!len || len > sizeof(r->buf) || m->abandoned >= MAX_ABANDONED)
		return false;
	if (!m->reader && !(m->reader = reader_new()))
		return false;
	r = m->reader;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += READ_BUDGET_MS * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&r->lock);
	r->pid = pid;
	r->addr = addr;
	r->len = len;
	r->busy = true;
	pthread_cond_broadcast(&r->cv);
	while (r->busy && !pthread_cond_timedwait(&r->cv, &r->lock, &dl))
		;
	ok = !r->busy && r->ok;
	if (ok)
		memcpy(buf, r->buf, len);
	if (r->busy) {
		/* stuck in the process's memory: leave it there, a new reader for the next */
		r->abandoned = true;
		m->reader = NULL;
		m->abandoned++;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* f's whole line table from pid's memory, checked against the prefix; malloc'd. */
static __u8 *read_table(struct gctx_pymem *m, __u32 pid, const struct gctx_py_layout *l,
			const struct gctx_py_frame *f, size_t *len)
{
	__u8 code[CODE_BYTES], hdr[GCTX_PY_BYTES_DATA], *lt;
	/* no further than needed: a small object may end at the end of a mapping */
	size_t n =
	    (l->code_linetable > l->code_firstlineno ? l->code_linetable : l->code_firstlineno) + 8;
	__u64 at;

	if (n > sizeof(code) || !rd(m, pid, f->code, code, n))
		return NULL;
	at = gctx_py_code_linetable(l, f, code, n);
	if (!at || !rd(m, pid, at, hdr, sizeof(hdr)))
		return NULL;
	n = gctx_py_table_size(hdr, sizeof(hdr));
	if (!n)
		return NULL;
	lt = malloc(n);
	if (!lt)
		return NULL;
	if (!rd(m, pid, at + GCTX_PY_BYTES_DATA, lt, n) || !gctx_py_table_extends(f, lt, n)) {
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
		lt = read_table(m, pids[i], l, f, &len);
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
