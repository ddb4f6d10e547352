// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading the machine at start: /proc/devices, /proc/PID, cgroup.procs, --device PATH:KIND. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lib/ldso.h"
#include "decode/api.h"
#include "decode/decode.h"
#include "collect/discover.h"

int gctx_pidset__add(struct gctx_pidset *s, __u32 pid)
{
	if (gctx_pidset__has(s, pid))
		return 0;
	if (s->n == s->cap) {
		__u32 cap = s->cap ? s->cap * 2 : 64;
		__u32 *p = realloc(s->pids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pids = p;
		s->cap = cap;
	}
	s->pids[s->n++] = pid;
	return 1;
}

bool gctx_pidset__has(const struct gctx_pidset *s, __u32 pid)
{
	for (__u32 i = 0; i < s->n; i++)
		if (s->pids[i] == pid)
			return true;
	return false;
}

void gctx_pidset__clear(struct gctx_pidset *s)
{
	free(s->pids);
	memset(s, 0, sizeof(*s));
}

__u64 gctx_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void gctx_read_majors(__u32 *uvm_major, __u32 *kfd_major)
{
	FILE *f = fopen("/proc/devices", "r");
	char line[128], name[64];
	bool chr = false;
	unsigned int major;

	*uvm_major = *kfd_major = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character devices:", 18)) {
			chr = true;
			continue;
		}
		if (!strncmp(line, "Block devices:", 14))
			chr = false;
		if (!chr || sscanf(line, "%u %63s", &major, name) != 2)
			continue;
		if (!strcmp(name, "nvidia-uvm"))
			*uvm_major = major;
		else if (!strcmp(name, "kfd"))
			*kfd_major = major;
	}
	fclose(f);
}

static __u32 kdev(dev_t d)
{
	return (major(d) << 20) | minor(d);
}

int gctx_parse_device(const char *arg, struct gctx_rec_device *out, char *err, size_t errlen)
{
	const char *colon = strrchr(arg, ':');
	struct stat st;
	char path[GCTX_PATH_LEN];
	int kind;

	memset(out, 0, sizeof(*out));
	if (!colon || colon == arg || !colon[1]) {
		snprintf(err, errlen, "bad --device '%s': expected PATH:KIND", arg);
		return -1;
	}
	kind = gctx_dev_kind_parse(colon + 1);
	if (kind <= 0) {
		snprintf(err, errlen,
			 "bad --device '%s': unknown kind '%s' (one of nvidiactl, "
			 "nvidia, nvidia-uvm, kfd, drm-render)",
			 arg, colon + 1);
		return -1;
	}
	if ((size_t)(colon - arg) >= sizeof(path)) {
		snprintf(err, errlen, "bad --device '%s': path too long", arg);
		return -1;
	}
	memcpy(path, arg, colon - arg);
	path[colon - arg] = 0;
	if (stat(path, &st)) {
		snprintf(err, errlen, "bad --device '%s': cannot stat %s: %s", arg, path,
			 strerror(errno));
		return -1;
	}
	out->kind = kind;
	out->dev = kdev(st.st_dev);
	out->ino = st.st_ino;
	out->rdev = S_ISCHR(st.st_mode) ? kdev(st.st_rdev) : 0;
	snprintf(out->path, sizeof(out->path), "%s", path);
	return 0;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/* ppid and start time (clock ticks since boot) from /proc/PID/stat. */
static int proc_stat(__u32 pid, __u32 *ppid, __u64 *start_ticks, char *comm, size_t commlen)
{
	char path[64], buf[1024], *p, *q;
	unsigned long long st;
	int field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strchr(buf, '(');
	q = strrchr(buf, ')');
	if (!p || !q || q < p)
		return -EINVAL;
	if (comm) {
		size_t n = (size_t)(q - p - 1) < commlen - 1 ? (size_t)(q - p - 1) : commlen - 1;

		memcpy(comm, p + 1, n);
		comm[n] = 0;
	}
	/* fields after the comm: 3 state, 4 ppid, ... 22 starttime */
	p = q + 2;
	for (field = 3; field < 22 && p; field++) {
		if (field == 4)
			*ppid = strtoul(p, NULL, 10);
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &st) != 1)
		return -EINVAL;
	*start_ticks = st;
	return 0;
}

bool gctx_proc_alive(__u32 pid)
{
	char path[64], buf[1024], *q;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return false;
	q = strrchr(buf, ')');
	/* state Z (zombie) or X (dead): it has exited, only its parent has not reaped it */
	return q && q[1] == ' ' && q[2] && q[2] != 'Z' && q[2] != 'X';
}

static bool is_pid_dir(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return *name != 0;
}

int gctx_add_descendants(struct gctx_pidset *s)
{
	struct {
		__u32 pid, ppid;
	} *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	bool grew = true;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		__u32 pid, ppid = 0;
		__u64 st;

		if (!is_pid_dir(de->d_name))
			continue;
		pid = strtoul(de->d_name, NULL, 10);
		if (proc_stat(pid, &ppid, &st, NULL, 0))
			continue; /* vanished meanwhile */
		if (n == cap) {
			void *p;

			cap = cap ? cap * 2 : 1024;
			p = realloc(all, cap * sizeof(*all));
			if (!p) {
				closedir(d);
				free(all);
				return -ENOMEM;
			}
			all = p;
		}
		all[n].pid = pid;
		all[n++].ppid = ppid;
	}
	closedir(d);
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++)
			if (!gctx_pidset__has(s, all[i].pid) && gctx_pidset__has(s, all[i].ppid) &&
			    gctx_pidset__add(s, all[i].pid) > 0)
				grew = true;
	}
	free(all);
	return 0;
}

int gctx_add_all_procs(struct gctx_pidset *s)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (is_pid_dir(de->d_name))
			gctx_pidset__add(s, strtoul(de->d_name, NULL, 10));
	closedir(d);
	return 0;
}

/* Pending sub-cgroup paths of the walk below: a stack on the heap, never the C stack. */
struct cg_todo {
	char **path;
	size_t n, cap, bytes;
};

static int cg_push(struct cg_todo *t, const char *dir, const char *name)
{
	size_t len = strlen(dir) + (name ? 1 + strlen(name) : 0) + 1;
	char *p;

	if (len > PATH_MAX || t->bytes + len > GCTX_CGROUP_WALK_BYTES)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **a = realloc(t->path, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		t->path = a;
		t->cap = cap;
	}
	p = malloc(len);
	if (!p)
		return -ENOMEM;
	snprintf(p, len, "%s%s%s", dir, name ? "/" : "", name ? name : "");
	t->path[t->n++] = p;
	t->bytes += len;
	return 0;
}

static void add_procs_file(struct gctx_pidset *s, FILE *f)
{
	unsigned int pid;

	while (fscanf(f, "%u", &pid) == 1)
		gctx_pidset__add(s, pid);
	fclose(f);
}

/*
 * Depth first over a stack of paths on the heap: a subtree a user can build (a delegated
 * cgroup nested thousands deep) costs heap bounded by GCTX_CGROUP_WALK_*, one open directory
 * at a time, and no recursion. What the bounds leave out is counted in *skipped.
 */
int gctx_add_cgroup_procs(struct gctx_pidset *s, const char *dir, __u32 *skipped)
{
	struct cg_todo t = {};
	char path[PATH_MAX + 16];
	struct dirent *de;
	__u32 visited = 0;
	FILE *f;
	DIR *d;

	*skipped = 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	add_procs_file(s, f);
	if (cg_push(&t, dir, NULL)) /* the top itself, listed below like any other */
		return -ENOMEM;
	while (t.n) {
		char *cur = t.path[--t.n];

		t.bytes -= strlen(cur) + 1;
		if (visited++ &&
		    snprintf(path, sizeof(path), "%s/cgroup.procs", cur) < (int)sizeof(path)) {
			f = fopen(path, "r");
			if (f)
				add_procs_file(s, f);
		}
		d = opendir(cur);
		while (d && (de = readdir(d))) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if (visited + t.n >= GCTX_CGROUP_WALK_MAX || cg_push(&t, cur, de->d_name))
				(*skipped)++;
		}
		if (d)
			closedir(d);
		free(cur);
	}
	free(t.path);
	return 0;
}

int gctx_proc_info(__u32 pid, struct gctx_rec_proc *out)
{
	char path[64];
	__u64 ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	ret = proc_stat(pid, &out->ppid, &ticks, out->comm, sizeof(out->comm));
	if (ret)
		return ret;
	out->start_ns = hz > 0 ? ticks * (1000000000ull / hz) : 0;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, out->exe, sizeof(out->exe) - 1);
	out->exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	ret = read_file(path, out->args, sizeof(out->args));
	out->args_len = ret > 0 ? ret : 0;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	{
		DIR *d = opendir(path);
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (is_pid_dir(de->d_name))
				out->nthreads++;
		if (d)
			closedir(d);
	}
	return 0;
}

void gctx_proc_threads(__u32 pid, void (*fn)(void *ctx, __u32 pid, __u32 tid, const char *comm),
		       void *ctx)
{
	char path[64], comm[GCTX_COMM_LEN + 2];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return; /* the process is gone */
	while ((de = readdir(d))) {
		__u32 tid;
		int n;

		if (!is_pid_dir(de->d_name))
			continue;
		tid = strtoul(de->d_name, NULL, 10);
		if (tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
		n = read_file(path, comm, sizeof(comm));
		if (n < 0)
			continue; /* the thread exited meanwhile */
		if (n > 0 && comm[n - 1] == '\n')
			comm[n - 1] = 0;
		fn(ctx, pid, tid, comm);
	}
	closedir(d);
}

/* A sort key and the record it belongs to (a pid, or a depth in the process tree). */
struct key_idx {
	__u32 key;
	__u32 idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key_idx *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

void gctx_sort_parents_first(struct gctx_rec_proc *procs, __u32 n)
{
	struct key_idx *byp = calloc(n ? n : 1, sizeof(*byp));
	struct key_idx *order = calloc(n ? n : 1, sizeof(*order));
	struct gctx_rec_proc *sorted = calloc(n ? n : 1, sizeof(*sorted));

	if (!byp || !order || !sorted)
		goto out;
	for (__u32 i = 0; i < n; i++)
		byp[i] = (struct key_idx){procs[i].pid, i};
	qsort(byp, n, sizeof(*byp), cmp_key);
	/* depth of each record within the set, capped at 255 */
	for (__u32 i = 0; i < n; i++) {
		__u32 depth = 0, ppid = procs[i].ppid;

		while (depth < 255) {
			struct key_idx key = {ppid, 0}, *hit;

			hit = bsearch(&key, byp, n, sizeof(*byp), cmp_key);
			if (!hit || hit->idx == i)
				break;
			depth++;
			ppid = procs[hit->idx].ppid;
		}
		order[i] = (struct key_idx){depth, i};
	}
	qsort(order, n, sizeof(*order), cmp_key);
	for (__u32 i = 0; i < n; i++)
		sorted[i] = procs[order[i].idx];
	memcpy(procs, sorted, n * sizeof(*procs));
out:
	free(byp);
	free(order);
	free(sorted);
}

void gctx_fd_info(__u32 pid, int fd, char *buf, size_t len, __u32 *cloexec)
{
	char path[64], info[512], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	*cloexec = 0;
	snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", pid, fd);
	if (read_file(path, info, sizeof(info)) > 0 && (p = strstr(info, "flags:")))
		*cloexec = (strtoul(p + 6, NULL, 8) & 02000000) != 0;
}

__u32 gctx_proc_api_libs(__u32 pid)
{
	char path[64], line[GCTX_PATH_LEN + 128];
	__u32 vendors = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* "start-end perms offset dev inode   path": the name after the last '/' */
	while (fgets(line, sizeof(line), f)) {
		char *slash = strrchr(line, '/'), *nl;

		if (!slash || !strchr(line, '\n'))
			continue; /* no path, or a long one's head (its tail, with the name, next)
				   */
		nl = strchr(slash, '\n');
		*nl = 0;
		if (!gctx_ldso_is_api_name(slash + 1))
			continue;
		vendors |= !strncmp(slash + 1, "libcuda.", 8) ? 1u << GCTX_VENDOR_CUDA
							      : 1u << GCTX_VENDOR_HIP;
	}
	fclose(f);
	return vendors;
}

void gctx_gpu_nodes_describe(const char *devdir, char *buf, size_t len)
{
	static const char *const names[] = {"nvidiactl", "kfd"};
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && off < len; i++) {
		char path[GCTX_PATH_LEN], state[96];
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", devdir, names[i]);
		if (lstat(path, &st)) {
			snprintf(state, sizeof(state), "absent");
		} else if (!S_ISCHR(st.st_mode)) {
			snprintf(state, sizeof(state), "dead (not a character device)");
		} else {
			fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
			if (fd >= 0) {
				close(fd);
				snprintf(state, sizeof(state), "working");
			} else {
				snprintf(state, sizeof(state), "dead (open: %s)", strerror(errno));
			}
		}
		off += snprintf(buf + off, len - off, "%s%s %s", i ? ", " : "", path, state);
	}
}
