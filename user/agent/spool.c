// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's spool directory (spool.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "agent/spool.h"
#include "collect/jobcg.h"
#include "model/jobattr.h"
#include "gpuctx_events.h"

int spool_root_dir(const char *dir, const char *what, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the %s %s: %s", what, dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open the %s %s: %s%s", what, dir, strerror(errno),
			 errno == ELOOP || errno == ENOTDIR ? " (not a directory, or a symlink)"
							    : "");
		return -1;
	}
	if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 0022)) {
		snprintf(err, errlen,
			 "the %s %s must be root's and writable by root alone "
			 "(it is uid %u, mode %03o)",
			 what, dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		close(fd);
		return -1;
	}
	return fd;
}

int spool_open(const char *dir, char *err, size_t errlen)
{
	return spool_root_dir(dir, "spool", err, errlen);
}

/* Keep what a file name can hold safely: letters, digits, '.', '_', '-'. */
static void clean(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; *src && i + 1 < len; src++)
		dst[i++] = isalnum((unsigned char)*src) || strchr("._-", *src) ? *src : '_';
	dst[i] = 0;
}

void spool_job_label(const char *cgroup, char *job, size_t len)
{
	char raw[160] = "";
	struct gctx_job_attr a;

	job[0] = 0;
	switch (gctx_job_attr_parse(cgroup, &a)) {
	case GCTX_JOB_SLURM:
		snprintf(raw, sizeof(raw), "slurm-%.60s%s%.20s", a.id, a.step[0] ? "." : "",
			 a.step);
		break;
	case GCTX_JOB_K8S:
		snprintf(raw, sizeof(raw), "k8s-%.8s", a.id);
		break;
	case GCTX_JOB_SYSTEMD:
		snprintf(raw, sizeof(raw), "%.100s", a.id);
		break;
	default:
		return;
	}
	clean(job, len, raw);
}

void spool_job_of(__u32 pid, char *job, size_t len)
{
	char path[GCTX_CGROUP_LEN];

	job[0] = 0;
	if (!gctx_proc_cgroup(pid, path, sizeof(path)))
		spool_job_label(path, job, len);
}

void spool_name(char *buf, size_t len, __u64 wall_ns, const char *job, const char *comm, __u32 pid,
		const char *kind)
{
	time_t t = wall_ns / 1000000000ull;
	char when[32] = "00000000T000000Z", c[32], j[SPOOL_JOB_LEN], k[32];
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	clean(c, sizeof(c), comm[0] ? comm : "unknown");
	clean(j, sizeof(j), job);
	clean(k, sizeof(k), kind);
	snprintf(buf, len, "%s-%s%s%s-%u-%s.gctx", when, j, j[0] ? "-" : "", c, pid, k);
}

bool spool_is_dump(const char *name)
{
	size_t n = strlen(name);

	if (n < 24 || strcmp(name + n - 5, ".gctx") || name[8] != 'T' || name[15] != 'Z' ||
	    name[16] != '-')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && !isdigit((unsigned char)name[i]))
			return false;
	return true;
}

struct dump_file {
	char name[256];
	__u64 size;
	struct timespec mtime;
};

static int by_age(const void *a, const void *b)
{
	const struct dump_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The dumps in the spool: regular files named as dumps (never a symlink followed). */
static struct dump_file *list_dumps(int dirfd, __u32 *n)
{
	struct dump_file *v = NULL, *p;
	__u32 cap = 0;
	struct dirent *de;
	DIR *d;
	/* a new open of the directory, not a dup: a dup shares its read position with the
	 * other thread's listing (spool_sync.c) */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*n = 0;
	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!spool_is_dump(de->d_name) || strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(v, cap * sizeof(*v));
			if (!p)
				break;
			v = p;
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", de->d_name);
		v[*n].size = st.st_size;
		v[*n].mtime = st.st_mtim;
		(*n)++;
	}
	closedir(d);
	return v;
}

void spool_usage(int dirfd, struct spool_usage *u)
{
	__u32 n;
	struct dump_file *v = list_dumps(dirfd, &n);

	u->bytes = 0;
	u->files = n;
	for (__u32 i = 0; i < n; i++)
		u->bytes += v[i].size;
	free(v);
}

void spool_prune(int dirfd, __u64 max_bytes, __u32 max_files, const char *keep)
{
	__u32 n, files;
	struct dump_file *v = list_dumps(dirfd, &n);
	__u64 bytes = 0;

	if (!v)
		return;
	qsort(v, n, sizeof(*v), by_age);
	for (__u32 i = 0; i < n; i++)
		bytes += v[i].size;
	files = n;
	for (__u32 i = 0; i < n && (files > max_files || bytes > max_bytes); i++) {
		if (keep && !strcmp(v[i].name, keep))
			continue;
		if (!unlinkat(dirfd, v[i].name, 0)) {
			files--;
			bytes -= v[i].size;
		}
	}
	free(v);
}
