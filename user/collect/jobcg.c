// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cgroup of a followed process (jobcg.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "collect/jobcg.h"
#include "model/jobattr.h"

int gctx_proc_cgroup(__u32 pid, char *path, size_t size)
{
	char file[32], buf[4096];
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "/proc/%u/cgroup", pid);
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf)); /* one read: procfs prints the whole file at once */
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	return gctx_job_cgroup_pick(buf, (size_t)n, path, size) ? 0 : -ENOENT;
}
