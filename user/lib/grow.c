// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Growable arrays (interface in grow.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"

int gctx_grow(void *pp, __u32 *cap, __u32 need, size_t elem)
{
	void **p = pp;
	/* Most arrays of large elements hold one (a process's exec, its only thread): they
	 * start at one, which in a process storm is most of the model's memory. */
	__u32 ncap = *cap ? *cap : elem > GCTX_GROW_SMALL ? 1 : 4;
	char *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, (size_t)ncap * elem);
	if (!np)
		return -ENOMEM;
	memset(np + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*p = np;
	*cap = ncap;
	return 0;
}
