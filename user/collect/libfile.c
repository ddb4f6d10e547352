// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Safe opening of library files named by traced processes (interface in libfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/fsuid.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "lib/esc.h"
#include "collect/libfile.h"

#define FUSE_MAGIC 0x65735546 /* a FUSE file system reports whatever owner it likes */

static int check_regular(int fd, const char *path, struct stat *st, char *err, size_t errlen)
{
	if (fstat(fd, st)) {
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s is not a regular file: skipped", path);
		return -EINVAL;
	}
	if ((__u64)st->st_size > GCTX_LIB_MAX_SIZE) {
		snprintf(err, errlen, "%s is too large for a library: skipped", path);
		return -EFBIG;
	}
	return 0;
}

int gctx_file_open_checked(const char *path, bool follow, const struct stat *want, struct stat *st,
			   char *err, size_t errlen)
{
	char self[32];
	int pfd, fd, ret;

	/* O_PATH opens nothing: a FIFO, socket or device at the path is looked at, never opened */
	pfd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (pfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	ret = check_regular(pfd, path, st, err, errlen);
	if (!ret && want &&
	    (!want->st_ino || st->st_dev != want->st_dev || st->st_ino != want->st_ino)) {
		/* inode 0 (unknown) is never "any file" */
		snprintf(err, errlen, "%s is not the file mapped: skipped", path);
		ret = -ESTALE;
	}
	if (ret) {
		close(pfd);
		return ret;
	}
	/* the very inode looked at, whatever the path names by now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	ret = -errno;
	close(pfd);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-ret));
		return ret;
	}
	return fd;
}

int gctx_libfile_open(const char *path, bool follow, struct stat *st, char *err, size_t errlen)
{
	return gctx_file_open_checked(path, follow, NULL, st, err, errlen);
}

int gctx_libfile_open_mapping(__u32 pid, __u64 start, __u64 end, __u32 kdev, __u64 ino,
			      struct stat *st, char *err, size_t errlen)
{
	struct stat want = {.st_dev = makedev(kdev >> 20, kdev & 0xfffff), .st_ino = ino};
	char path[96];

	/* a magic link to the mapped file: no path walk the process could redirect */
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	return gctx_file_open_checked(path, true, &want, st, err, errlen);
}

/* Owned by root and writable by no one else, on a file system that tells the truth. A
 * directory may instead be root's with the sticky bit (/tmp): others may add entries there but
 * never rename or remove root's, and every next component is itself checked to be root's. */
static bool root_only(int fd, bool sticky_ok)
{
	struct statfs sf;
	struct stat st;

	return !fstat(fd, &st) && st.st_uid == 0 &&
	       (!(st.st_mode & (S_IWGRP | S_IWOTH)) || (sticky_ok && (st.st_mode & S_ISVTX))) &&
	       !fstatfs(fd, &sf) && sf.f_type != FUSE_MAGIC;
}

bool gctx_libfile_trusted(int fd, const char *root, const char *path)
{
	char comp[256];
	struct stat a, b;
	const char *p = path, *slash;
	bool ok = false;
	int dfd, next;

	if (!root_only(fd, false) || fstat(fd, &a) || path[0] != '/')
		return false;
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	for (;;) {
		if (!root_only(dfd, true))
			break;
		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (!slash) {
			/* the last component: still the very file we opened, not a symlink */
			next = *p && strlen(p) < sizeof(comp)
				   ? openat(dfd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC)
				   : -1;
			ok = next >= 0 && !fstat(next, &b) && S_ISREG(b.st_mode) &&
			     a.st_dev == b.st_dev && a.st_ino == b.st_ino;
			if (next >= 0)
				close(next);
			break;
		}
		if ((size_t)(slash - p) >= sizeof(comp))
			break;
		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		p = slash;
		if (!strcmp(comp, "..") || !strcmp(comp, "."))
			break;
		next = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			break;
		close(dfd);
		dfd = next;
	}
	close(dfd);
	return ok;
}

void gctx_warn_escaped(const char *prefix, const char *msg)
{
	char esc[GCTX_ESC_SIZE(512)];

	gctx_format_str(esc, sizeof(esc), msg, 512);
	fprintf(stderr, "%s%s\n", prefix, esc);
}

int gctx_cred__of_pid(__u32 pid, struct gctx_cred *c)
{
	char path[64], line[1024];
	unsigned long r, e, sv, fs;
	int have = 0;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %lu %lu %lu %lu", &r, &e, &sv, &fs) == 4) {
			c->uid = (uid_t)fs;
			c->ruid = (uid_t)r;
			have |= 1;
		} else if (sscanf(line, "Gid: %lu %lu %lu %lu", &r, &e, &sv, &fs) == 4) {
			c->gid = (gid_t)fs;
			have |= 2;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (;;) {
				unsigned long g = strtoul(p, &end, 10);

				if (end == p)
					break;
				if (c->ngroups == GCTX_CRED_GROUPS) {
					fclose(f);
					return -E2BIG;
				}
				c->groups[c->ngroups++] = (gid_t)g;
				p = end;
			}
			have |= 4;
		}
	}
	fclose(f);
	return have == 7 ? 0 : -ESRCH;
}

/* setgroups(2) itself: glibc's wrapper changes every thread of gpuctx */
static int thread_setgroups(int n, const gid_t *g)
{
	return syscall(SYS_setgroups, (size_t)n, g) ? -errno : 0;
}

int gctx_cred__enter(struct gctx_cred *c)
{
	c->entered = false;
	c->nsaved = getgroups(GCTX_CRED_GROUPS, c->saved_groups);
	if (c->nsaved < 0)
		return -errno;
	if (thread_setgroups(c->ngroups, c->groups))
		return -EPERM;
	/* setfsuid says only what the old value was: ask again to see the new one took */
	setfsgid(c->gid);
	setfsuid(c->uid);
	if ((uid_t)setfsuid(c->uid) != c->uid || (gid_t)setfsgid(c->gid) != c->gid) {
		c->entered = true;
		gctx_cred__leave(c);
		return -EPERM;
	}
	c->entered = true;
	return 0;
}

void gctx_cred__leave(struct gctx_cred *c)
{
	if (!c->entered)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	if (thread_setgroups(c->nsaved, c->saved_groups)) {
		/* gpuctx would go on with the traced user's groups: never */
		fprintf(stderr, "gpuctx: cannot restore its own groups: %s\n", strerror(errno));
		abort();
	}
	c->entered = false;
}
