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

/* Keep what a file name can hold safely: letters, digits, '.', '_', and the characters of
 * keep ("-" for a job, none for a command: the name's fields stay apart). */
static void clean(char *dst, size_t len, const char *src, const char *keep)
{
	size_t i = 0;

	for (; *src && i + 1 < len; src++)
		dst[i++] = isalnum((unsigned char)*src) || strchr("._", *src) || strchr(keep, *src)
			       ? *src
			       : '_';
	dst[i] = 0;
}

/* The N of a "user-N.slice" component: everything under it is that user's (a session, their
 * user@N.service and what they make under it), whatever its units are named. */
static bool user_slice(const char *cgroup, unsigned long *uid)
{
	for (const char *c = cgroup; c && (c = strstr(c, "/user-")); c++) {
		char *end;

		if (!isdigit((unsigned char)c[6]))
			continue;
		*uid = strtoul(c + 6, &end, 10);
		if (!strncmp(end, ".slice", 6) && (end[6] == '/' || !end[6]))
			return true;
	}
	return false;
}

void spool_job_label(const char *cgroup, char *job, size_t len)
{
	char raw[160] = "";
	struct gctx_job_attr a;
	unsigned long uid;

	job[0] = 0;
	if (cgroup && user_slice(cgroup, &uid)) {
		snprintf(job, len, "uid%lu", uid);
		return;
	}
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
	clean(job, len, raw, "-");
}

void spool_owner(const char *job, char *owner, size_t len)
{
	size_t n = strlen(job);

	if (!strncmp(job, "slurm-", 6) && strchr(job, '.'))
		n = strchr(job, '.') - job; /* the job, all its steps */
	snprintf(owner, len, "%.*s", (int)n, job);
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
	clean(c, sizeof(c), comm[0] ? comm : "unknown", "");
	clean(j, sizeof(j), job, "-");
	clean(k, sizeof(k), kind, "-");
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

bool spool_name_job(const char *name, char *job, size_t len)
{
	size_t n = strlen(name), pid_end, pid_start, comm_start;

	job[0] = 0;
	if (!spool_is_dump(name))
		return false;
	/* ...-COMM-PID-KIND.gctx: the last "-digits-" is the pid's (a kind has no digit, a
	 * command no '-') */
	for (pid_end = n - 5; pid_end > 17; pid_end--) {
		if (name[pid_end] != '-')
			continue;
		for (pid_start = pid_end;
		     pid_start > 17 && isdigit((unsigned char)name[pid_start - 1]); pid_start--)
			;
		if (pid_start < pid_end && name[pid_start - 1] == '-')
			break;
	}
	if (pid_end <= 17)
		return false;
	for (comm_start = pid_start - 1; comm_start > 16 && name[comm_start - 1] != '-';
	     comm_start--)
		;
	if (comm_start > 17)
		snprintf(job, len, "%.*s", (int)(comm_start - 18), name + 17);
	return true;
}

struct dump_file {
	char name[256];
	char owner[48]; /* spool_owner of the job its name says */
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
	char job[SPOOL_JOB_LEN];
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
		spool_name_job(de->d_name, job, sizeof(job));
		spool_owner(job, v[*n].owner, sizeof(v[*n].owner));
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

/* The owner with the largest share of what is over the cap (files when there are too many,
 * else bytes) among those with a dump that may go; -1 when none may. */
static int biggest(const struct dump_file *v, const bool *gone, __u32 n, const char *keep,
		   bool by_files)
{
	__u64 best = 0;
	int pick = -1;

	for (__u32 i = 0; i < n; i++) {
		__u64 share = 0;

		if (gone[i] || (keep && !strcmp(v[i].name, keep)))
			continue;
		for (__u32 j = 0; j < n; j++)
			if (!gone[j] && !strcmp(v[j].owner, v[i].owner))
				share += by_files ? 1 : v[j].size;
		if (pick < 0 || share > best) {
			best = share;
			pick = i; /* v is oldest first: its oldest dump that may go */
		}
	}
	return pick;
}

void spool_prune(int dirfd, __u64 max_bytes, __u32 max_files, const char *keep)
{
	__u32 n, files;
	struct dump_file *v = list_dumps(dirfd, &n);
	__u64 bytes = 0;
	bool *gone;

	if (!v)
		return;
	gone = calloc(n + 1, sizeof(*gone));
	if (!gone) {
		free(v);
		return;
	}
	qsort(v, n, sizeof(*v), by_age);
	for (__u32 i = 0; i < n; i++)
		bytes += v[i].size;
	files = n;
	while (files > max_files || bytes > max_bytes) {
		int i = biggest(v, gone, n, keep, files > max_files);

		if (i < 0)
			break;
		gone[i] = true; /* also when it cannot be deleted: the next one is tried */
		if (!unlinkat(dirfd, v[i].name, 0)) {
			files--;
			bytes -= v[i].size;
		}
	}
	free(gone);
	free(v);
}

int spool_same_allow(struct spool_same *s, const char *owner, const char *kind, __u64 now)
{
	int match = -1, spare = -1;

	for (int i = 0; i < SPOOL_SAME_SLOTS && match < 0; i++) {
		if (s->v[i].n && !strcmp(s->v[i].owner, owner) && !strcmp(s->v[i].kind, kind))
			match = i;
		else if (spare < 0 ||
			 (s->v[spare].n && (!s->v[i].n || s->v[i].since < s->v[spare].since)))
			spare = i; /* a free slot, else the one whose window began first */
	}
	if (match >= 0 && now < s->v[match].since + SPOOL_SAME_WINDOW_NS) {
		if (s->v[match].n >= SPOOL_SAME_MAX) {
			s->folded++;
			if (s->v[match].told)
				return 0;
			s->v[match].told = true;
			return -1;
		}
		s->v[match].n++;
		return 1;
	}
	if (match < 0)
		match = spare;
	snprintf(s->v[match].owner, sizeof(s->v[match].owner), "%s", owner);
	snprintf(s->v[match].kind, sizeof(s->v[match].kind), "%s", kind);
	s->v[match].since = now;
	s->v[match].n = 1;
	s->v[match].told = false;
	return 1;
}
