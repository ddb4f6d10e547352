// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Output files replaced atomically, never through a symlink (interface in outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/infile.h"
#include "lib/outfile.h"

struct gctx_outfile {
	int fd;
	bool keep; /* committed or deliberately kept: do not remove the temporary file */
	bool no_fsync;
	bool handed; /* the caller's open file (/dev/fd/N): written in place, never renamed */
	char *path;
	char *tmp;
};

const char *gctx_outfile_refusal(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return "'-' (standard output) is not supported here: give a file name";
	if (lstat(path, &st))
		return NULL; /* absent (or unreadable: creating the temporary file says why) */
	if (S_ISLNK(st.st_mode))
		return "it is a symbolic link (give the real path)";
	if (S_ISDIR(st.st_mode))
		return "it is a directory";
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return "it is a device";
	if (S_ISFIFO(st.st_mode))
		return "it is a FIFO";
	if (!S_ISREG(st.st_mode))
		return "it is not a regular file";
	return NULL;
}

/* /dev/fd/N: a file the caller created for us (the Slurm plugin, as the job's user, in the
 * job's directory). Written from its start; only an empty regular file we may write is taken,
 * so that nothing is truncated or overwritten. */
static struct gctx_outfile *handed(const char *path, int n, char *err, size_t errlen)
{
	struct gctx_outfile *o;
	struct stat st;
	int fd = fcntl(n, F_DUPFD_CLOEXEC, 3), acc;

	/* N stays open (a reader may reopen /dev/fd/N) but reaches no program gpuctx runs */
	if (fd >= 0)
		fcntl(n, F_SETFD, fcntl(n, F_GETFD) | FD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	acc = fcntl(fd, F_GETFL) & O_ACCMODE;
	if (fstat(fd, &st))
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode) || st.st_size || acc == O_RDONLY) {
		snprintf(err, errlen, "refusing to write %s: %s", path,
			 !S_ISREG(st.st_mode) ? "it is not a regular file"
			 : st.st_size	      ? "it is not empty"
					      : "it is not open for writing");
		close(fd);
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path))) {
		free(o);
		close(fd);
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(ENOMEM));
		return NULL;
	}
	lseek(fd, 0, SEEK_SET); /* empty: from its start, whatever a caller's offset */
	o->fd = fd;
	o->handed = true;
	o->keep = true;
	return o;
}

struct gctx_outfile *gctx_outfile__new(const char *path, char *err, size_t errlen)
{
	const char *why, *slash;
	struct gctx_outfile *o;
	int dirlen;

	if (gctx_path_fd(path) >= 0)
		return handed(path, gctx_path_fd(path), err, errlen);
	why = gctx_outfile_refusal(path);
	if (why) {
		snprintf(err, errlen, "refusing to write %s: %s", path, why);
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		goto nomem;
	o->fd = -1;
	o->path = strdup(path);
	slash = strrchr(path, '/');
	dirlen = slash ? (int)(slash - path + 1) : 0;
	if (!o->path || asprintf(&o->tmp, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) < 0) {
		o->tmp = NULL;
		free(o->path);
		free(o);
		goto nomem;
	}
	/* mkostemp: O_EXCL, mode 0600, a name nobody else could have planted */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		o->keep = true;
		gctx_outfile__free(o);
		return NULL;
	}
	return o;

nomem:
	snprintf(err, errlen, "cannot create %s: %s", path, strerror(ENOMEM));
	return NULL;
}

int gctx_outfile__fd(const struct gctx_outfile *o)
{
	return o ? o->fd : -1;
}

const char *gctx_outfile__tmp_path(const struct gctx_outfile *o)
{
	return o ? (o->handed ? o->path : o->tmp) : NULL;
}

int gctx_outfile__commit(struct gctx_outfile *o, char *err, size_t errlen)
{
	const char *why;
	int ret = 0;

	if (!o->no_fsync && fsync(o->fd) && errno != EINVAL)
		ret = -errno;
	if (o->handed) {
		if (ret)
			snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(-ret));
		return ret;
	}
	/* the path may have changed since __new: still never replace a non-regular file */
	why = gctx_outfile_refusal(o->path);
	if (!ret && why)
		ret = -EEXIST;
	if (!ret && rename(o->tmp, o->path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "cannot write %s: %s; the output is kept in %s", o->path,
			 why ? why : strerror(-ret), o->tmp);
	}
	o->keep = true;
	return ret;
}

void gctx_outfile__no_fsync(struct gctx_outfile *o)
{
	o->no_fsync = true;
}

void gctx_outfile__free(struct gctx_outfile *o)
{
	if (!o)
		return;
	if (o->fd >= 0)
		close(o->fd);
	if (!o->keep && o->tmp)
		unlink(o->tmp); /* ours: created by mkostemp above */
	free(o->tmp);
	free(o->path);
	free(o);
}

int gctx_outfile__write(const char *path, int (*fn)(FILE *out, const void *arg), const void *arg,
			char *err, size_t errlen)
{
	struct gctx_outfile *of = gctx_outfile__new(path, err, errlen);
	FILE *out;
	int fd, ret;

	if (!of)
		return -1;
	fd = fcntl(gctx_outfile__fd(of), F_DUPFD_CLOEXEC, 0);
	out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		gctx_outfile__free(of);
		return -1;
	}
	ret = fn(out, arg);
	if (fclose(out) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "writing %s: %s", path, strerror(-ret));
	else if (gctx_outfile__commit(of, err, errlen))
		ret = -1;
	gctx_outfile__free(of); /* removes the temporary file unless committed */
	return ret ? -1 : 0;
}
