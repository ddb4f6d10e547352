// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nv_redirect.so: a test-only LD_PRELOAD library for the real-driver tests (never shipped, never
 * used by gpuctx). The real libcuda stats /dev/nvidiactl and wants a character device 195:255;
 * this kernel has no CUSE, so the emulated driver (build/fakegpu) is a FUSE file. The harness
 * makes real device nodes in a private /dev (a tmpfs in a private mount namespace, so stat()
 * answers as the driver expects), and this library sends the opens of those nodes to the
 * emulated driver's files in $GPUCTX_FAKEGPU_DIR.
 *
 * mmap: the real driver maps a different memory object at each mmap of its fd at offset 0 (the
 * object named by the RM_MAP_MEMORY before it); a FUSE file has one page cache, so such maps
 * would alias each other, and past its end they fault. Each mmap of an emulated file is made
 * (so that a tracer sees it, with its length) and then replaced in place by fresh shared
 * anonymous memory of the same size: one distinct object per map, shared with a forked child as
 * the driver's VM_SHARED maps are.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The emulated file for @path, or @path itself. */
static const char *redirect(const char *path, char *buf, size_t bufsz)
{
	static const char *const names[] = {"nvidiactl", "nvidia0", "nvidia-uvm",
					    "nvidia-uvm-tools"};
	const char *dir = getenv("GPUCTX_FAKEGPU_DIR");
	size_t i;

	if (!dir || !path || strncmp(path, "/dev/", 5))
		return path;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(path + 5, names[i])) {
			snprintf(buf, bufsz, "%s/%s", dir, names[i]);
			return buf;
		}
	}
	return path;
}

#define MODE_ARG(flags, mode)                                                                      \
	do {                                                                                       \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {                                           \
			va_list ap;                                                                \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, int);                                                    \
			va_end(ap);                                                                \
		}                                                                                  \
	} while (0)

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

int open(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	int mode = 0;

	MODE_ARG(flags, mode);
	return REAL("open", int (*)(const char *, int, ...))(redirect(path, buf, sizeof(buf)),
							     flags, mode);
}

int open64(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	int mode = 0;

	MODE_ARG(flags, mode);
	return REAL("open64", int (*)(const char *, int, ...))(redirect(path, buf, sizeof(buf)),
							       flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	int mode = 0;

	MODE_ARG(flags, mode);
	return REAL("openat", int (*)(int, const char *, int, ...))(
	    dirfd, redirect(path, buf, sizeof(buf)), flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	int mode = 0;

	MODE_ARG(flags, mode);
	return REAL("openat64", int (*)(int, const char *, int, ...))(
	    dirfd, redirect(path, buf, sizeof(buf)), flags, mode);
}

int __open_2(const char *path, int flags)
{
	char buf[PATH_MAX];

	return REAL("__open_2", int (*)(const char *, int))(redirect(path, buf, sizeof(buf)),
							    flags);
}

int __open64_2(const char *path, int flags)
{
	char buf[PATH_MAX];

	return REAL("__open64_2", int (*)(const char *, int))(redirect(path, buf, sizeof(buf)),
							      flags);
}

/* Is @fd one of the emulated driver's files (on the file system of $GPUCTX_FAKEGPU_DIR)? */
static int emulated_fd(int fd)
{
	const char *dir = getenv("GPUCTX_FAKEGPU_DIR");
	struct stat d, f;

	return fd >= 0 && dir && !stat(dir, &d) && !fstat(fd, &f) && f.st_dev == d.st_dev &&
	       S_ISREG(f.st_mode);
}

static void *map(const char *name, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = REAL(name, void *(*)(void *, size_t, int, int, int, off_t))(addr, len, prot,
									      flags, fd, off);

	if (p == MAP_FAILED || !emulated_fd(fd))
		return p;
	return REAL(name, void *(*)(void *, size_t, int, int, int, off_t))(
	    p, len, prot, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return map("mmap", addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return map("mmap64", addr, len, prot, flags, fd, off);
}
