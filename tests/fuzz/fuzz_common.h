/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the fuzz targets share: a sink for output, and an input as a file path. */
#ifndef __GPUCTX_FUZZ_COMMON_H
#define __GPUCTX_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

/* Output nobody reads (the targets check for crashes, not for what is printed). */
static FILE *fuzz_null(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

/* The input as a file (the trace reader takes a path): a memfd, rewritten each run; slot 0 or 1
 * (a target that reads two files). */
static const char *fuzz_as_file_n(int slot, const unsigned char *data, size_t size)
{
	static char path[2][64];
	static int fd[2] = {-1, -1};

	if (fd[slot] < 0) {
		fd[slot] = memfd_create("fuzz-input", 0);
		if (fd[slot] < 0)
			abort();
		snprintf(path[slot], sizeof(path[slot]), "/proc/self/fd/%d", fd[slot]);
	}
	if (ftruncate(fd[slot], 0) || pwrite(fd[slot], data, size, 0) != (ssize_t)size)
		abort();
	return path[slot];
}

static inline const char *fuzz_as_file(const unsigned char *data, size_t size)
{
	return fuzz_as_file_n(0, data, size);
}

#endif /* __GPUCTX_FUZZ_COMMON_H */
