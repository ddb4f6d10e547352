// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cgroup of a followed process (jobcg.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int gctx_cgroup_rel(const char *dir, char *path, size_t size)
{
	char real[PATH_MAX], dev[256], mnt[1024], type[64];
	size_t best = 0;
	FILE *f;

	path[0] = '\0';
	if (!realpath(dir, real))
		return -ENOENT;
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -ENOENT;
	while (fscanf(f, "%255s %1023s %63s %*[^\n]", dev, mnt, type) == 3) {
		size_t n = strlen(mnt);

		if (strcmp(type, "cgroup2") || strncmp(real, mnt, n) ||
		    (real[n] && real[n] != '/' && n > 1) || n <= best)
			continue;
		best = n;
		snprintf(path, size, "%s", real[n] ? real + (n > 1 ? n : 0) : "/");
	}
	fclose(f);
	return path[0] ? 0 : -ENOENT;
}
