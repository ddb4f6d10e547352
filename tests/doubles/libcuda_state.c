// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda double: the library's state and log, and the fork rule of libcuda 535 (see
 * libcuda_double.h): a process that did not run cuInit itself but inherited its state is a
 * forked child, refused in user space until it calls cuInit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libcuda_double.h"

struct dbl_state G = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .ctl_fd = -1,
    .dev_fd = -1,
    .uvm_fd = -1,
    .next_dptr = DBL_DPTR_BASE,
    .next_dptr_v1 = DBL_DPTR_V1_BASE,
};

__thread struct dbl_thread T;

void dlog(const char *fmt, ...)
{
	va_list ap;

	if (G.log <= 0)
		return;
	fprintf(stderr, "[libcuda-double pid %d] ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

CUresult ret_log(const char *fn, CUresult r)
{
	dlog("%s -> %d", fn, (int)r);
	return r;
}

/* ---- fork handling ---- */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&G.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&G.lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&G.lock, NULL);
}

/* Initialised by another process: this one was forked from it (no exec). */
bool forked(void)
{
	return G.inited && G.init_pid != getpid();
}

static __attribute__((constructor)) void dbl_init(void)
{
	const char *v = getenv("GPUCTX_DOUBLE_LOG");

	G.log = v && *v && strcmp(v, "0") ? 1 : 0;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static __attribute__((destructor)) void dbl_fini(void)
{
	if (G.inited && !forked())
		dlog("exit: %lu launches counted", G.launches);
}

/* 0 when the driver may be used; else the error every call returns. No syscall. */
CUresult state_check(void)
{
	if (!G.inited || forked())
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_SUCCESS;
}

/* The parent's memory and contexts, forgotten in a forked child: their RM objects are not its. */
void forget_parent_state(void)
{
	struct CUctx_st *c, *next;
	struct dbl_mem *m, *mn;
	int i;

	for (i = 0; i < DBL_MAX_DEVICES; i++) {
		for (m = G.primary[i].mem; m; m = mn) {
			mn = m->next;
			free(m);
		}
		memset(&G.primary[i], 0, sizeof(G.primary[i]));
	}
	for (c = G.ctxs; c; c = next) {
		next = c->next;
		for (m = c->mem; m; m = mn) {
			mn = m->next;
			free(m);
		}
		c->magic = 0;
		free(c);
	}
	G.ctxs = NULL;
	T.depth = 0;
}
