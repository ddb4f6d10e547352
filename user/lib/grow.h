/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Growable arrays: a pointer and a capacity, doubled on demand. */
#ifndef __GPUCTX_GROW_H
#define __GPUCTX_GROW_H

#include <stddef.h>
#include <linux/types.h>

#define GCTX_GROW_SMALL 32 /* elements up to this size start 4 to an array, larger ones 1 */

/*
 * Make room for need elements of elem bytes in the array *pp (a pointer to the array pointer)
 * of capacity *cap: the capacity doubles, from 4 (1 for elements over GCTX_GROW_SMALL bytes),
 * until it holds need; the new slots are zeroed. 0, or -ENOMEM (the array is unchanged).
 */
int gctx_grow(void *pp, __u32 *cap, __u32 need, size_t elem);

#endif /* __GPUCTX_GROW_H */
