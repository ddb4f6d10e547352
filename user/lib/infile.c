// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Input files opened without following a user's symlink or blocking on a FIFO (infile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/infile.h"

int gctx_path_fd(const char *path)
{
	static const char *const pre[] = {"/dev/fd/", "/proc/self/fd/"};
	char *end;
	long n;

	if (!strcmp(path, "/dev/stdin"))
		return 0;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t len = strlen(pre[i]);

		if (strncmp(path, pre[i], len) || path[len] < '0' || path[len] > '9')
			continue;
		errno = 0;
		n = strtol(path + len, &end, 10);
		if (errno || *end || n < 0 || n > 1 << 20)
			return -1;
		return (int)n;
	}
	return -1;
}

static const char *kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "it is a FIFO";
	if (S_ISDIR(m))
		return "it is a directory";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "it is a device";
	if (S_ISSOCK(m))
		return "it is a socket";
	return "it is not a regular file";
}

int gctx_infile_open(const char *path, char *err, size_t errlen)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, fd, n = gctx_path_fd(path);
	char self[48];
	struct stat st;

	if (n >= 0) {
		/* the caller's own open file, reopened for an offset of our own (a dup would
		 * share the caller's): the magic link is the file, not a path a user can swap */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", n);
		fd = open(self, flags);
	} else {
		/* as root, a symlink at the path is a user's way to another user's file */
		fd = open(path, flags | (geteuid() == 0 ? O_NOFOLLOW : 0));
	}
	if (fd < 0) {
		if (errno == ELOOP && n < 0 && geteuid() == 0)
			snprintf(err, errlen,
				 "refusing to read %s as root: it is a symbolic link (give the "
				 "real path)",
				 path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	/* a pipe is read only when the caller handed it over (`cat t.gctx | gpuctx report
	 * /dev/stdin`): a FIFO at a path is a user's way to block root */
	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || (n >= 0 && S_ISFIFO(st.st_mode)))) {
		snprintf(err, errlen, "refusing to read %s: %s", path,
			 fstat(fd, &st) ? strerror(errno) : kind(st.st_mode));
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
