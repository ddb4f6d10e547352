// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda double: device memory. Each allocation is an RM memory object owned by a context,
 * with a made-up device pointer; freeing it frees the object.
 */
#include <stdlib.h>

#include "libcuda_double.h"

void mem_release(struct dbl_mem *m)
{
	rm_free(m->parent, m->handle);
	free(m);
}

CUresult mem_alloc(struct CUctx_st *c, enum mem_kind kind, size_t size, CUdeviceptr *dptr,
		   __u32 *handle_out)
{
	struct dbl_mem *m;
	CUdeviceptr *next;
	__u64 span;
	__u32 st;

	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	span = (size + DBL_DPTR_ALIGN - 1) & ~(DBL_DPTR_ALIGN - 1);
	next = kind == MEM_LEGACY ? &G.next_dptr_v1 : &G.next_dptr;
	pthread_mutex_lock(&G.lock);
	if (!ctx_valid(c)) {
		pthread_mutex_unlock(&G.lock);
		free(m);
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	if (kind == MEM_LEGACY && *next + span > 0xffffffffULL) {
		pthread_mutex_unlock(&G.lock);
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (kind == MEM_MANAGED) {
		st = rm_alloc_memory(NV01_MEMORY_SYSTEM, size, &m->handle);
		m->on_dev_fd = true;
	} else {
		st = rm_alloc(G.device, NV01_MEMORY_LOCAL_USER, &m->handle);
	}
	if (st != NV_OK) {
		pthread_mutex_unlock(&G.lock);
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->parent = G.device;
	m->size = size;
	if (kind != MEM_HANDLE) {
		m->dptr = *next;
		*next += span;
	}
	m->next = c->mem;
	c->mem = m;
	pthread_mutex_unlock(&G.lock);
	if (dptr)
		*dptr = m->dptr;
	if (handle_out)
		*handle_out = m->handle;
	return CUDA_SUCCESS;
}

/* Unlink and free the allocation at @dptr if @c owns it. */
static bool ctx_mem_free(struct CUctx_st *c, CUdeviceptr dptr)
{
	struct dbl_mem **pp, *m;

	for (pp = &c->mem; *pp; pp = &(*pp)->next) {
		if ((*pp)->dptr == dptr) {
			m = *pp;
			*pp = m->next;
			mem_release(m);
			return true;
		}
	}
	return false;
}

CUresult mem_free(CUdeviceptr dptr)
{
	struct CUctx_st *c;
	bool found = false;
	int i;

	if (!dptr)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&G.lock);
	for (i = 0; !found && i < DBL_MAX_DEVICES; i++)
		found = ctx_mem_free(&G.primary[i], dptr);
	for (c = G.ctxs; !found && c; c = c->next)
		found = ctx_mem_free(c, dptr);
	pthread_mutex_unlock(&G.lock);
	return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The common front of every allocation entry point. */
CUresult mem_alloc_api(enum mem_kind kind, size_t size, CUdeviceptr *dptr, __u32 *h)
{
	struct CUctx_st *c;
	CUresult r;

	r = state_check();
	if (r)
		return r;
	if (!dptr && !h)
		return CUDA_ERROR_INVALID_VALUE;
	r = current_ctx(&c);
	if (r)
		return r;
	return mem_alloc(c, kind, size, dptr, h);
}
