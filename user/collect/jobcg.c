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
#include "gpuctx_events.h"
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

#define CGPATHS_KEEP  64
#define FILEID_KERNFS 0xfe /* a kernfs node's handle: its 64-bit id (linux/exportfs.h) */

struct gctx_cgpaths {
	int mnt_fd;	/* the cgroup2 mount, to open a cgroup by its id */
	size_t mnt_len; /* strlen of its path */
	__u32 next;	/* the slot the next new id takes */
	struct {
		__u64 id;
		char path[GCTX_CGROUP_LEN];
	} v[CGPATHS_KEEP];
};

struct gctx_cgpaths *gctx_cgpaths__new(void)
{
	char dev[256], mnt[1024], type[64];
	struct gctx_cgpaths *c;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return NULL;
	while (fscanf(f, "%255s %1023s %63s %*[^\n]", dev, mnt, type) == 3)
		if (!strcmp(type, "cgroup2"))
			break;
	fclose(f);
	if (strcmp(type, "cgroup2"))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->mnt_fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->mnt_fd < 0) {
		free(c);
		return NULL;
	}
	c->mnt_len = strlen(mnt);
	return c;
}

/* The cgroup named by id, opened by its kernfs handle; its path from the fd's link. */
static int cgpath_lookup(struct gctx_cgpaths *c, __u64 id, char *path, size_t size)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = {.fh = {.handle_bytes = sizeof(__u64), .handle_type = FILEID_KERNFS}};
	char link[64], real[PATH_MAX];
	ssize_t n;
	int fd, err = 0;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(c->mnt_fd, &h.fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESTALE ? -ENOENT : -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	real[n] = '\0';
	/* a cgroup removed meanwhile, or one outside our view of the mount */
	if ((size_t)n < c->mnt_len || (real[c->mnt_len] && real[c->mnt_len] != '/') ||
	    strstr(real, " (deleted)"))
		return -ENOENT;
	if (snprintf(path, size, "%s", real[c->mnt_len] ? real + c->mnt_len : "/") >= (int)size)
		err = -ENAMETOOLONG;
	return err;
}

int gctx_cgpaths__path(struct gctx_cgpaths *c, __u64 id, char *path, size_t size)
{
	int err;

	if (!c || !id)
		return -ENOENT;
	for (__u32 i = 0; i < CGPATHS_KEEP; i++)
		if (c->v[i].id == id)
			return snprintf(path, size, "%s", c->v[i].path) < (int)size ? 0
										    : -ENAMETOOLONG;
	err = cgpath_lookup(c, id, c->v[c->next].path, sizeof(c->v[c->next].path));
	if (err)
		return err;
	c->v[c->next].id = id;
	snprintf(path, size, "%s", c->v[c->next].path);
	c->next = (c->next + 1) % CGPATHS_KEEP;
	return 0;
}

void gctx_cgpaths__free(struct gctx_cgpaths *c)
{
	if (!c)
		return;
	close(c->mnt_fd);
	free(c);
}
