/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How the dynamic loader finds a library, as pure functions over bytes read elsewhere: the
 * environment block of a process, search-path strings (LD_LIBRARY_PATH, DT_RUNPATH with
 * $ORIGIN) and /etc/ld.so.cache. Everything here is input from a traced process: every length
 * is checked, nothing is trusted.
 */
#ifndef __GPUCTX_LDSO_H
#define __GPUCTX_LDSO_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A file name (no directory) of the CUDA driver (libcuda.so*) or HIP runtime
 * (libamdhip64.so*): the libraries gpuctx probes. */
bool gctx_ldso_is_api_name(const char *name);

/* The value of name in a NUL-separated environment block (/proc/PID/environ), copied into out
 * (cut to fit, terminated). false when absent. */
bool gctx_ldso_env_get(const char *env, size_t len, const char *name, char *out, size_t outlen);

/* Each directory of a search path (':' or ';' separated, as ld.so splits it), with $ORIGIN and
 * ${ORIGIN} replaced by origin (skipped when origin is NULL). Entries that are empty, relative
 * or use another substitution ($LIB, $PLATFORM) are skipped: the loader's result for them
 * depends on things we do not model. Returns the number of directories given to fn. */
int gctx_ldso_split(const char *list, const char *origin, void (*fn)(void *ctx, const char *dir),
		    void *ctx);

/* Each entry of an ld.so.cache image (glibc "glibc-ld.so.cache1.1", alone or after the old
 * "ld.so-1.7.0" table): fn(ctx, soname, path). -EINVAL when buf is not a cache; else the
 * number of entries. Entries whose strings fall outside buf are skipped. */
int gctx_ldso_cache_each(const void *buf, size_t len,
			 void (*fn)(void *ctx, const char *name, const char *path), void *ctx);

#endif /* __GPUCTX_LDSO_H */
