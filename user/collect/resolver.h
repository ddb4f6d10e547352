/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What cuGetProcAddress hands out, asked of the CUDA library itself before any traced process
 * calls it. This runs the library's code, so only for a library that nothing but root could
 * have written (libfile.h: gctx_libfile_trusted), and never as root: in a child that drops to
 * an unprivileged user with no capabilities, no_new_privs, resource limits, no inherited file
 * other than the library, and a time limit. For any other library gpuctx relies on the
 * exported symbols and follows the addresses cuGetProcAddress returns at run time.
 */
#ifndef __GPUCTX_RESOLVER_H
#define __GPUCTX_RESOLVER_H

#include <sys/types.h>
#include <linux/types.h>

#define GCTX_RESOLVE_TIMEOUT_MS 5000

/* What one cuGetProcAddress call in the child returned. */
struct gctx_procaddr {
	__u32 fn; /* enum gctx_api_fn */
	__u32 pad;
	__u64 off;     /* file offset in the library */
	char name[48]; /* the name asked for */
};

/* Ask the library open at libfd (dev/ino as fstat gives them). The child needs no path to it
 * (a root-only directory above it, a 0600 file are fine): it loads the fd gpuctx checked, or a
 * copy of its bytes made through that fd. 0 with *recs (free()) and *n set (why says what
 * cut the answers short, if anything), or -errno with a one-line reason in why. */
int gctx_resolve_procaddrs(int libfd, dev_t dev, ino_t ino, struct gctx_procaddr **recs, __u32 *n,
			   char *why, size_t whylen);

#endif /* __GPUCTX_RESOLVER_H */
