// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda double: contexts (primary, created and green), each with its RM channel objects; the
 * calling thread's context stack (push/pop, current); and launches, which only count.
 */
#include <stdlib.h>

#include "libcuda_double.h"

bool ctx_valid(CUcontext c)
{
	struct CUctx_st *it;
	int i;

	if (!c)
		return false;
	for (i = 0; i < DBL_MAX_DEVICES; i++)
		if (c == &G.primary[i])
			return c->active;
	for (it = G.ctxs; it; it = it->next)
		if (it == c)
			return c->magic == DBL_CTX_MAGIC;
	return false;
}

static CUresult ctx_rm_create(struct CUctx_st *c)
{
	c->tsg = c->ctxshare = c->channel = c->compute = 0;
	if (rm_alloc(G.device, KEPLER_CHANNEL_GROUP_A, &c->tsg) != NV_OK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (rm_alloc(c->tsg, FERMI_CONTEXT_SHARE_A, &c->ctxshare) != NV_OK ||
	    rm_alloc(c->tsg, HOPPER_CHANNEL_GPFIFO_A, &c->channel) != NV_OK ||
	    rm_alloc(c->channel, HOPPER_COMPUTE_A, &c->compute) != NV_OK) {
		rm_free(G.device, c->tsg);
		c->tsg = c->ctxshare = c->channel = c->compute = 0;
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->active = true;
	return CUDA_SUCCESS;
}

static void ctx_rm_destroy(struct CUctx_st *c)
{
	struct dbl_mem *m, *next;

	for (m = c->mem; m; m = next) {
		next = m->next;
		mem_release(m);
	}
	c->mem = NULL;
	rm_free(c->channel, c->compute);
	rm_free(c->tsg, c->channel);
	rm_free(c->tsg, c->ctxshare);
	rm_free(G.device, c->tsg);
	c->tsg = c->ctxshare = c->channel = c->compute = 0;
	c->active = false;
}

/* Drop @c from every level of the calling thread's stack. */
static void stack_forget(CUcontext c)
{
	int i, j = 0;

	for (i = 0; i < T.depth; i++)
		if (T.stack[i] != c)
			T.stack[j++] = T.stack[i];
	T.depth = j;
}

static CUresult stack_push(CUcontext c)
{
	if (T.depth == DBL_STACK_DEPTH)
		return CUDA_ERROR_OUT_OF_MEMORY;
	T.stack[T.depth++] = c;
	return CUDA_SUCCESS;
}

CUcontext current(void)
{
	return T.depth ? T.stack[T.depth - 1] : NULL;
}

/* The current context if it is usable, for calls that need one. */
CUresult current_ctx(struct CUctx_st **out)
{
	CUcontext c = current();

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_valid(c))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*out = c;
	return CUDA_SUCCESS;
}

CUresult ctx_create(CUcontext *pctx, CUdevice dev, bool green, const char *how)
{
	struct CUctx_st *c;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = state_check();
	if (r)
		return r;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->magic = DBL_CTX_MAGIC;
	c->dev = dev;
	c->green = green;
	pthread_mutex_lock(&G.lock);
	r = ctx_rm_create(c);
	if (!r && !green)
		r = stack_push(c); /* cuCtxCreate makes the new context current */
	if (r) {
		if (c->active)
			ctx_rm_destroy(c);
		pthread_mutex_unlock(&G.lock);
		free(c);
		return r;
	}
	c->next = G.ctxs;
	G.ctxs = c;
	pthread_mutex_unlock(&G.lock);
	dlog("%s: context %p (tsg 0x%x channel 0x%x)", how, (void *)c, c->tsg, c->channel);
	*pctx = c;
	return CUDA_SUCCESS;
}

CUresult ctx_destroy(CUcontext ctx, bool green)
{
	struct CUctx_st **pp;
	CUresult r = state_check();

	if (r)
		return r;
	pthread_mutex_lock(&G.lock);
	if (!ctx_valid(ctx) || ctx->primary || ctx->green != green) {
		pthread_mutex_unlock(&G.lock);
		return green ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
	}
	for (pp = &G.ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	}
	ctx_rm_destroy(ctx);
	ctx->magic = 0;
	pthread_mutex_unlock(&G.lock);
	stack_forget(ctx);
	free(ctx);
	return CUDA_SUCCESS;
}

CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (!c->active) {
		c->magic = DBL_CTX_MAGIC;
		c->dev = dev;
		c->primary = true;
		r = ctx_rm_create(c);
	}
	if (!r)
		c->refs++;
	pthread_mutex_unlock(&G.lock);
	if (!r)
		*pctx = c;
	return r;
}

CUresult primary_release(CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (!c->active || !c->refs) {
		pthread_mutex_unlock(&G.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (--c->refs == 0)
		ctx_rm_destroy(c);
	pthread_mutex_unlock(&G.lock);
	return CUDA_SUCCESS;
}

/* Reset: the primary context's memory and RM objects go away, the retain count with them. */
CUresult primary_reset(CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (c->active)
		ctx_rm_destroy(c);
	c->refs = 0;
	pthread_mutex_unlock(&G.lock);
	return CUDA_SUCCESS;
}

CUresult ctx_push(CUcontext ctx)
{
	CUresult r = state_check();

	if (r)
		return r;
	pthread_mutex_lock(&G.lock);
	r = ctx_valid(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&G.lock);
	return r ? r : stack_push(ctx);
}

CUresult ctx_pop(CUcontext *pctx)
{
	CUresult r = state_check();

	if (r)
		return r;
	if (!T.depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	T.depth--;
	if (pctx)
		*pctx = T.stack[T.depth];
	return CUDA_SUCCESS;
}

/* ---- launches ---- */

CUresult launch(const void *what)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (!what)
		return CUDA_ERROR_INVALID_HANDLE;
	r = current_ctx(&c);
	if (r)
		return r;
	__atomic_fetch_add(&c->launches, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&G.launches, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}
