// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Find CPython in a process and hand its layout to the kernel (interface in pyprobe.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>

#include "collect/pyprobe.h"
#include "collect/unwind.h"
#include "decode/pystack.h"
#include "lib/elfpeek.h"
#include "lib/grow.h"

#define PENDING_NS  (3ull * 1000000000) /* give ld.so this long to map libpython */
#define MAX_PENDING 1024
#define RETRY_NS    (20ull * 1000000)

struct pending {
	__u32 pid;
	__u64 deadline;
	__u64 next; /* not before: ld.so maps libpython within milliseconds */
};

struct gctx_pyprobe {
	int fd;
	int exe_fd; /* pyexe: interpreter executables, for the kernel to place at exec; or -1 */
	void (*found)(void *ctx, __u32 pid);
	void *found_ctx;
	bool verbose;
	struct pending *pend;
	__u32 npend, cap;
	struct gctx_maps maps;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct gctx_pyprobe *gctx_pyprobe__new(int pyinfo_fd, int pyexe_fd, bool verbose)
{
	struct gctx_pyprobe *p;

	if (pyinfo_fd < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = pyinfo_fd;
	p->exe_fd = pyexe_fd;
	p->verbose = verbose;
	return p;
}

void gctx_pyprobe__free(struct gctx_pyprobe *p)
{
	if (!p)
		return;
	gctx_maps__clear(&p->maps);
	free(p->pend);
	free(p);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* 3.minor from a path naming the interpreter ("python3.12", "libpython3.12.so.1.0"). */
static int path_minor(const char *path)
{
	const char *b = strrchr(path, '/'), *q;
	unsigned minor;

	b = b ? b + 1 : path;
	q = strstr(b, "python3.");
	if (!q || sscanf(q + 8, "%u", &minor) != 1 || minor > 99)
		return -1;
	return minor;
}

/* Address of .PyRuntime (== _PyRuntime) in the file, and the 3.13+ debug-offsets version.
 * Read, never mapped: the file may be the traced user's, who may truncate it. */
static bool find_runtime(int fd, __u64 *addr, __u64 *dbg_version, bool *free_threaded)
{
	struct gctx_elf_src src;
	__u64 off = 0, size = 0;
	__u32 type = 0;
	char hdr[24];

	*dbg_version = 0;
	*free_threaded = false;
	if (!gctx_elfpeek_fd_src(fd, &src) ||
	    !gctx_elfpeek_section(&src, ".PyRuntime", addr, &off, &size, &type))
		return false;
	/* _Py_DebugOffsets leads _PyRuntime from 3.13: "xdebugpy", version, free_threaded */
	if (type == SHT_PROGBITS && size >= sizeof(hdr) &&
	    pread(fd, hdr, sizeof(hdr), off) == sizeof(hdr) && !memcmp(hdr, "xdebugpy", 8)) {
		memcpy(dbg_version, hdr + 8, 8);
		*free_threaded = hdr[16] != 0;
	}
	return true;
}

/* The layout of Python 3.minor (named by the file; 3.13+'s debug offsets say it themselves),
 * runtime left to the caller. */
static void layout_of(int minor, __u64 dbg, bool free_threaded, struct gctx_py_layout *l)
{
	if (dbg)
		minor = (dbg >> 16) & 0xff;
	if (!gctx_py_layout_for(minor, l) || free_threaded)
		l->supported = 0;
	if (dbg)
		l->version = dbg;
}

bool gctx_pyprobe_file_layout(int fd, const char *path, struct gctx_py_layout *l)
{
	__u64 addr = 0, dbg = 0;
	int minor = path_minor(path);
	bool ft = false;

	if (minor < 0 || !find_runtime(fd, &addr, &dbg, &ft)) {
		memset(l, 0, sizeof(*l));
		return false;
	}
	layout_of(minor, dbg, ft, l);
	return l->supported;
}

/* The interpreter executable open at fd, whose _PyRuntime is at addr (its sh_addr) and
 * whose layout is l: tell the kernel, once per file, so that later execs of it get their
 * layout at exec (bpf/stack.bpf.h stack_py_exec). */
static void learn_exe(struct gctx_pyprobe *p, int fd, __u64 addr, const struct gctx_py_layout *l)
{
	struct gctx_py_exe_key k = {};
	struct gctx_py_layout v = *l;
	struct gctx_elf_src src;
	__u64 text = 0;
	struct stat st;

	if (p->exe_fd < 0 || fstat(fd, &st) || !gctx_elfpeek_fd_src(fd, &src) ||
	    !gctx_elfpeek_text_vaddr(&src, &text) || addr < text)
		return;
	k.dev = (major(st.st_dev) << 20) | minor(st.st_dev);
	k.ino = st.st_ino;
	v.runtime = addr - text;
	bpf_map_update_elem(p->exe_fd, &k, &v, BPF_ANY);
}

/* True when done with this process (found, or it has no interpreter to wait for). */
static bool check(struct gctx_pyprobe *p, __u32 pid, bool last_try)
{
	struct gctx_py_layout l;
	bool looks_python = false;

	if (gctx_maps__read(&p->maps, pid))
		return true; /* gone */
	for (__u32 i = 0; i < p->maps.n; i++) {
		const struct gctx_map *mp = &p->maps.v[i];
		__u64 addr = 0, dbg = 0, bias = 0;
		bool ft = false, is_exec = false, seen = false;
		int minor = path_minor(mp->path), fd;

		if (minor < 0)
			continue;
		looks_python = true;
		for (__u32 j = 0; j < i && !seen; j++)
			seen = !strcmp(p->maps.v[j].path, mp->path);
		if (seen)
			continue;
		fd = gctx_map_open(&p->maps, mp);
		if (fd < 0)
			continue;
		if (!find_runtime(fd, &addr, &dbg, &ft) ||
		    !gctx_map_bias(fd, mp, &bias, &is_exec)) {
			close(fd);
			/* an interpreter we cannot read (e.g. 3.9: no .PyRuntime section): say so
			 * in its stacks rather than leave them silently without Python frames */
			if (!strncmp(base_name(mp->path), "libpython", 9) || last_try) {
				gctx_py_layout_for(minor, &l);
				l.supported = 0;
				bpf_map_update_elem(p->fd, &pid, &l, BPF_ANY);
				return true;
			}
			continue;
		}
		layout_of(minor, dbg, ft, &l);
		l.runtime = bias + addr;
		if (strncmp(base_name(mp->path), "libpython", 9))
			learn_exe(p, fd, addr, &l);
		close(fd);
		if (p->found)
			p->found(p->found_ctx, pid);
		if (bpf_map_update_elem(p->fd, &pid, &l, BPF_ANY) == 0 && p->verbose)
			fprintf(stderr,
				"gpuctx: pid %u runs Python 3.%d (%s), _PyRuntime at 0x%llx\n", pid,
				minor, l.supported ? "frames on" : "layout unknown",
				(unsigned long long)l.runtime);
		return true;
	}
	/* an interpreter binary whose libpython is not mapped yet: look again later */
	return looks_python ? last_try : true;
}

void gctx_pyprobe__set_found_cb(struct gctx_pyprobe *p, void (*cb)(void *ctx, __u32 pid), void *ctx)
{
	if (!p)
		return;
	p->found = cb;
	p->found_ctx = ctx;
}

static bool looks_python(const struct gctx_ev_exec *e)
{
	char fn[GCTX_PATH_LEN + 1], a0[GCTX_ARGS_LEN + 1], comm[GCTX_COMM_LEN + 1];
	size_t n = e->args_len < GCTX_ARGS_LEN ? e->args_len : GCTX_ARGS_LEN;

	/* fixed-size fields of a record: terminate before searching them */
	memcpy(fn, e->filename, GCTX_PATH_LEN);
	fn[GCTX_PATH_LEN] = 0;
	memcpy(a0, e->args, n);
	a0[n] = 0;
	memcpy(comm, e->hdr.comm, GCTX_COMM_LEN);
	comm[GCTX_COMM_LEN] = 0;
	return strstr(base_name(fn), "python") || strstr(base_name(a0), "python") ||
	       strstr(comm, "python");
}

static void learn_file(struct gctx_pyprobe *p, const char *path)
{
	struct gctx_py_layout l;
	char real[PATH_MAX];
	__u64 addr, dbg;
	int minor, fd;
	bool ft;

	if (!p || !realpath(path, real) || (minor = path_minor(real)) < 0 ||
	    !strncmp(base_name(real), "libpython", 9))
		return;
	/* O_NONBLOCK: a FIFO named like an interpreter must not hang us */
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (find_runtime(fd, &addr, &dbg, &ft)) {
		layout_of(minor, dbg, ft, &l);
		learn_exe(p, fd, addr, &l);
	}
	close(fd);
}

void gctx_pyprobe__learn_cmd(struct gctx_pyprobe *p, const char *cmd)
{
	const char *path = getenv("PATH"), *end;
	char full[PATH_MAX];

	if (!p || !cmd || !*cmd)
		return;
	if (strchr(cmd, '/')) {
		learn_file(p, cmd);
		return;
	}
	/* as execvp looks it up: the first executable file of that name on PATH */
	for (; path && *path; path = *end ? end + 1 : end) {
		struct stat st;
		int n;

		end = strchrnul(path, ':');
		n = snprintf(full, sizeof(full), "%.*s/%s", (int)(end - path),
			     end > path ? path : ".", cmd);
		if (n < 0 || n >= (int)sizeof(full))
			continue;
		if (!stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK)) {
			learn_file(p, full);
			return;
		}
	}
}

void gctx_pyprobe__scan_pid(struct gctx_pyprobe *p, __u32 pid)
{
	if (p)
		check(p, pid, true);
}

void gctx_pyprobe__on_record(struct gctx_pyprobe *p, __u32 type, const void *data, __u32 len)
{
	const struct gctx_ev_exec *e = data;

	if (!p || type != GCTX_EV_EXEC || len < GCTX_EV_EXEC_V3_LEN)
		return;
	/* Only what looks like an interpreter is looked at: no work per exec of anything else
	 * (process churn). A program embedding libpython under another name is found only
	 * when it is present at attach. */
	if (!looks_python(e))
		return;
	if (check(p, e->hdr.tgid, false))
		return;
	if (p->npend >= MAX_PENDING || gctx_grow(&p->pend, &p->cap, p->npend + 1, sizeof(*p->pend)))
		return;
	p->pend[p->npend].pid = e->hdr.tgid;
	p->pend[p->npend].deadline = now_ns() + PENDING_NS;
	p->pend[p->npend].next = now_ns() + RETRY_NS;
	p->npend++;
}

void gctx_pyprobe__tick(struct gctx_pyprobe *p)
{
	__u64 now;

	if (!p || !p->npend)
		return;
	now = now_ns();
	for (__u32 i = 0; i < p->npend;) {
		if (now < p->pend[i].next) {
			i++;
			continue;
		}
		p->pend[i].next = now + RETRY_NS;
		if (check(p, p->pend[i].pid, now >= p->pend[i].deadline)) {
			p->pend[i] = p->pend[--p->npend];
			continue;
		}
		i++;
	}
}
