/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Error codes read from a trace are untrusted numbers: negate them without overflow. */
#ifndef __GPUCTX_ERRCODE_H
#define __GPUCTX_ERRCODE_H

#include <limits.h>
#include <linux/types.h>

/* The positive errno of a "-errno" return value; 0 for a value >= 0, INT_MAX for one below
 * -INT_MAX (negating INT_MIN, or narrowing a 64-bit value, would be undefined). */
static inline int gctx_ret_errno(__s64 ret)
{
	if (ret >= 0)
		return 0;
	if (ret < -(__s64)INT_MAX)
		return INT_MAX;
	return (int)-ret;
}

#endif /* __GPUCTX_ERRCODE_H */
