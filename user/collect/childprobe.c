// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Probes for one forked child alone (see childprobe.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include "decode/api.h"
#include "lib/elfsyms.h"
#include "lib/procmaps.h"
#include "lib/strtab.h"
#include "collect/childprobe.h"
#include "collect/libfile.h"
#include "collect/pyprobe.h"

#define MAX_LIBS      16 /* API library files looked at */
#define MAX_CHILD_LIB 4	 /* API libraries one child has probes on */
#define MAX_PY	      16 /* interpreter files looked at */
#define PY_RAISE_FN   "_PyErr_SetObject"

static const __u8 endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};

/* A CPython interpreter file (python3.X or libpython3.X.so): where its exception-setting
 * function is (0: not found, not CPython), through the fd kept open. */
struct cp_py {
	__u32 kdev;
	__u64 ino;
	int fd;
	char at[32];
	__u64 raise_off;
	__u64 cookie; /* where a str's data starts, for the message (pyraise.bpf.c py_message) */
};

/* The functions of one API library file, read once: probe offset and cookie of each. */
struct cp_lib {
	__u32 kdev;
	__u64 ino;
	__u64 *offs, *cookies;
	__u32 n;
	__u64 over; /* exports past GCTX_CHILDPROBE_MAX_FNS */
};

struct cp_child {
	__u32 pid;
	int pidfd; /* readable once it has exited: its end is seen even if its record is lost */
	int fds[2 * MAX_CHILD_LIB + 1]; /* the API links, and the Python one */
	__u32 nfds;
};

/* Attach runs on the ring's look ahead thread and in the main loop; forget in the main loop:
 * mu orders them. */
struct gctx_childprobe {
	pthread_mutex_t mu;
	struct gctx_uprobes *u;
	bool verbose;
	struct gctx_uprobes_multi progs;
	struct cp_lib libs[MAX_LIBS];
	__u32 nlibs;
	struct cp_py py[MAX_PY];
	__u32 npy;
	struct gctx_strtab *names; /* id = index in api_names */
	struct cp_child kids[GCTX_CHILDPROBE_MAX_LIVE];
	__u32 nkids;
	int close_wr; /* link fds to the closer thread, -1 none (closed here) */
	struct gctx_childprobe_stats st;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Closing a uprobe link waits for grace periods (~100 ms each here): a child's exit must
 * not stop the collector that long, or the next children's holds wait behind it. A thread
 * closes them, in the order they come. */
static void *closer(void *arg)
{
	int rd = (int)(long)arg, fd;

	while (read(rd, &fd, sizeof(fd)) == sizeof(fd))
		close(fd);
	close(rd);
	return NULL;
}

static void closer_start(struct gctx_childprobe *c)
{
	pthread_t t;
	int p[2];

	c->close_wr = -1;
	if (pipe2(p, O_CLOEXEC))
		return;
	if (pthread_create(&t, NULL, closer, (void *)(long)p[0])) {
		close(p[0]);
		close(p[1]);
		return;
	}
	pthread_detach(t);
	c->close_wr = p[1];
}

static void link_close(struct gctx_childprobe *c, int fd)
{
	if (c->close_wr < 0 || write(c->close_wr, &fd, sizeof(fd)) != sizeof(fd))
		close(fd);
}

struct gctx_childprobe *gctx_childprobe__new(struct gctx_uprobes *u, bool verbose)
{
	struct gctx_childprobe *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->u = u;
	c->verbose = verbose;
	closer_start(c);
	c->names = gctx_strtab__new(GCTX_API_NAMES_MAX - 1, GCTX_API_STR_LEN - 1);
	if (!c->names || gctx_uprobes__multi_progs(u, &c->progs)) {
		gctx_childprobe__free(c);
		return NULL;
	}
	return c;
}

/* A CUDA driver API or HIP runtime function by its exported name: "cu" or "hip" and a capital
 * (cuDeviceGetCount, hipMalloc; not cudbg*, the debugger's, nor __hip*, the loader's). */
static enum gctx_api_fn api_family(const char *name)
{
	if (!strncmp(name, "cu", 2) && name[2] >= 'A' && name[2] <= 'Z')
		return GCTX_CU_OTHER;
	if (!strncmp(name, "hip", 3) && name[3] >= 'A' && name[3] <= 'Z')
		return GCTX_HIP_OTHER;
	return GCTX_API_NONE;
}

/* Exported HIP functions that return no hipError_t (a string, an int, a struct): their calls
 * are recorded at entry, with no result, so that no pointer is read as an error code. Every
 * exported cu* function returns a CUresult. From hip_runtime_api.h (ROCm 5.2). */
static bool no_result(const char *name)
{
	static const char *const names[] = {
	    "hipGetErrorName",	   "hipGetErrorString",	    "hipApiName",
	    "hipKernelNameRef",	   "hipKernelNameRefByPtr", "hipGetStreamDeviceId",
	    "hipCreateChannelDesc"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

struct read_ctx {
	struct gctx_childprobe *c;
	struct cp_lib *l;
	int fd;
};

static void on_sym(void *ctx, const char *name, __u64 off)
{
	struct read_ctx *r = ctx;
	struct cp_lib *l = r->l;
	const struct gctx_api_sym *s = gctx_api_sym_lookup(name);
	enum gctx_api_fn fn = api_family(name);
	__u64 cookie;
	bool added;
	__u32 id;
	__u8 insn[4];

	if (fn == GCTX_API_NONE)
		return;
	if (l->n >= GCTX_CHILDPROBE_MAX_FNS) {
		l->over++;
		return;
	}
	if (s) {
		cookie = gctx_api_cookie(s, false); /* a function the model knows */
	} else {
		id = gctx_strtab__intern(r->c->names, name, strlen(name), &added);
		if (!id) {
			l->over++;
			return;
		}
		if (added) {
			char v[GCTX_API_STR_LEN] = {0};

			snprintf(v, sizeof(v), "%s", name);
			if (bpf_map_update_elem(r->c->progs.names_fd, &id, v, BPF_ANY))
				return;
		}
		cookie = (__u64)fn | ((__u64)id << 32);
		if (no_result(name))
			cookie |= GCTX_COOKIE_ENTRY_ONLY;
	}
	/* past an endbr64, as the probes of every process (uprobes.c): 10x cheaper */
	if (pread(r->fd, insn, sizeof(insn), off) == sizeof(insn) &&
	    !memcmp(insn, endbr64, sizeof(insn)))
		off += 4;
	if (l->n % 256 == 0) {
		__u64 *o = realloc(l->offs, (l->n + 256) * sizeof(*o));
		__u64 *k = o ? realloc(l->cookies, (l->n + 256) * sizeof(*k)) : NULL;

		if (o)
			l->offs = o;
		if (!k)
			return;
		l->cookies = k;
	}
	l->offs[l->n] = off;
	l->cookies[l->n++] = cookie;
}

static struct cp_lib *lib_get(struct gctx_childprobe *c, __u32 kdev, __u64 ino,
			      const struct gctx_uprobes_lib *ul)
{
	struct read_ctx r = {.c = c, .fd = ul->fd};
	struct cp_lib *l;
	char why[128];

	for (__u32 i = 0; i < c->nlibs; i++)
		if (c->libs[i].kdev == kdev && c->libs[i].ino == ino)
			return &c->libs[i];
	if (c->nlibs == MAX_LIBS)
		return NULL;
	l = &c->libs[c->nlibs++];
	l->kdev = kdev;
	l->ino = ino;
	r.l = l;
	/* the file uprobes.c checked and probed already: a crafted one was refused there */
	if (gctx_elf_dynsyms_fd(ul->fd, ul->size, on_sym, &r, why, sizeof(why)) < 0)
		l->n = 0;
	return l;
}

/* The two links (entries, returns) of lib l for pid, on the functions not probed for every
 * process already. */
static int attach_lib(struct gctx_childprobe *c, struct cp_child *k, struct cp_lib *l,
		      const struct gctx_uprobes_lib *ul)
{
	__u64 *offs = calloc(l->n + 1, sizeof(*offs)),
	      *cookies = calloc(l->n + 1, sizeof(*cookies));
	__u32 n = 0, nret = 0;
	int fd, ret = -ENOMEM;

	if (!offs || !cookies || k->nfds + 2 > sizeof(k->fds) / sizeof(k->fds[0]))
		goto out;
	for (__u32 i = 0; i < l->n; i++) {
		if (gctx_uprobes__probed_at(c->u, l->kdev, l->ino, l->offs[i]))
			continue;
		offs[n] = l->offs[i];
		cookies[n++] = l->cookies[i];
	}
	ret = 0;
	if (!n)
		goto out;
	fd = gctx_uprobe_multi_link(c->progs.enter_fd, ul->at, offs, cookies, n, false, k->pid);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	k->fds[k->nfds++] = fd;
	/* the return probes: all but the entry-only ones, packed in front */
	for (__u32 i = 0; i < n; i++) {
		if (cookies[i] & GCTX_COOKIE_ENTRY_ONLY)
			continue;
		offs[nret] = offs[i];
		cookies[nret++] = cookies[i];
	}
	fd = nret ? gctx_uprobe_multi_link(c->progs.ret_fd, ul->at, offs, cookies, nret, true,
					   k->pid)
		  : -ENOENT;
	if (nret && fd < 0) {
		ret = fd; /* entries alone would stash calls that never return: none at all */
		close(k->fds[--k->nfds]);
		goto out;
	}
	if (fd >= 0)
		k->fds[k->nfds++] = fd;
	c->st.fns_over_cap += l->over;
	l->over = 0; /* counted once per library */
	ret = (int)n;
out:
	free(offs);
	free(cookies);
	return ret;
}

static void on_py_func(void *ctx, const char *name, __u64 off)
{
	struct cp_py *p = ctx;

	if (!p->raise_off && !strcmp(name, PY_RAISE_FN))
		p->raise_off = off;
}

/* The interpreter file mapped at pm by pid, looked at once: NULL when it is not one. */
static struct cp_py *py_get(struct gctx_childprobe *c, __u32 pid, const struct gctx_procmap *pm)
{
	__u32 kdev = gctx_procmap_kdev(pm);
	char err[256], why[128];
	struct gctx_py_layout l;
	struct cp_py *p;
	struct stat st;
	__u8 insn[4];

	for (__u32 i = 0; i < c->npy; i++)
		if (c->py[i].kdev == kdev && c->py[i].ino == pm->ino)
			return c->py[i].raise_off ? &c->py[i] : NULL;
	if (c->npy == MAX_PY)
		return NULL;
	p = &c->py[c->npy++];
	memset(p, 0, sizeof(*p));
	p->kdev = kdev;
	p->ino = pm->ino;
	/* the file the process maps (map_files, checked against dev and inode), never its
	 * path; its symbol tables read by the validated reader, its code never run */
	p->fd = gctx_libfile_open_mapping(pid, pm->start, pm->end, kdev, pm->ino, &st, err,
					  sizeof(err));
	if (p->fd < 0)
		return NULL;
	snprintf(p->at, sizeof(p->at), "/proc/self/fd/%d", p->fd);
	if (gctx_elf_funcs_fd(p->fd, (__u64)st.st_size, on_py_func, p, why, sizeof(why)) < 0)
		p->raise_off = 0;
	if (p->raise_off && pread(p->fd, insn, sizeof(insn), p->raise_off) == sizeof(insn) &&
	    !memcmp(insn, endbr64, sizeof(insn)))
		p->raise_off += 4;
	if (!p->raise_off) {
		close(p->fd);
		p->fd = -1;
		return NULL;
	}
	/* the kernel reads the process's own layout when stacks are on; this one is for
	 * --no-stacks, where nothing else knows it */
	if (gctx_pyprobe_file_layout(p->fd, pm->path, &l))
		p->cookie = l.str_ascii_data | (__u64)l.str_compact_data << 16;
	return p;
}

/* Named like an interpreter: python3.X, libpython3.X.so (the file is checked after). */
static bool py_named(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* Fault in, in the held child, the read-only data of its interpreter (the names of the
 * built-in exception types): fork copies no page table entry of a file mapping, and a BPF
 * program cannot fault a page in, so a child that never touched RuntimeError's name would
 * raise it unnamed. Read through /proc/PID/mem (the kernel faults the pages in for the
 * reader), at most PY_PREFAULT_MAX bytes per child. */
#define PY_PREFAULT_MAX (16u << 20)

static __u64 py_prefault(int mem_fd, __u64 start, __u64 end, __u64 budget)
{
	static char buf[64 << 10];
	__u64 done = 0;

	for (__u64 a = start; a < end && done < budget; a += sizeof(buf)) {
		size_t n = end - a < sizeof(buf) ? end - a : sizeof(buf);

		if (pread(mem_fd, buf, n, (off_t)a) <= 0)
			break;
		done += n;
	}
	return done;
}

struct walk {
	struct gctx_childprobe *c;
	struct cp_child *k;
	int nfns, err;
	bool py_done;
	/* the interpreter file probed (py_ino 0: none), its read-only data faulted in */
	__u32 py_kdev;
	__u64 py_ino;
	int mem_fd;
	__u64 prefaulted;
	struct {
		__u32 kdev;
		__u64 ino;
	} done[MAX_CHILD_LIB];
	__u32 ndone;
};

static int on_map(void *ctx, const struct gctx_procmap *pm)
{
	struct walk *w = ctx;
	struct gctx_uprobes_lib ul;
	__u32 kdev = gctx_procmap_kdev(pm);
	struct cp_lib *l;
	int ret;

	if (w->py_ino && pm->ino == w->py_ino && gctx_procmap_kdev(pm) == w->py_kdev &&
	    !strcmp(pm->perms, "r--p") && pm->pgoff && w->mem_fd >= 0 &&
	    w->prefaulted < PY_PREFAULT_MAX) {
		w->prefaulted +=
		    py_prefault(w->mem_fd, pm->start, pm->end, PY_PREFAULT_MAX - w->prefaulted);
		return 0;
	}
	if (pm->perms[2] != 'x' || !pm->ino)
		return 0;
	if (!w->py_done && py_named(pm->path)) {
		struct cp_py *p = py_get(w->c, w->k->pid, pm);
		int prog, fd;

		if (!p)
			return 0;
		w->py_done = true;
		/* loaded once Python or GPU state was seen, else here while this child is held;
		 * where it cannot load, the child has its API probes alone */
		prog = gctx_uprobes__raise_prog(w->c->u);
		if (prog < 0)
			return 0;
		w->py_kdev = p->kdev;
		w->py_ino = p->ino;
		fd = gctx_uprobe_multi_link(prog, p->at, &p->raise_off, &p->cookie, 1, false,
					    w->k->pid);
		if (fd >= 0)
			w->k->fds[w->k->nfds++] = fd;
		return 0;
	}
	if (w->ndone == MAX_CHILD_LIB)
		return 0;
	for (__u32 i = 0; i < w->ndone; i++)
		if (w->done[i].kdev == kdev && w->done[i].ino == pm->ino)
			return 0;
	/* only a file gpuctx has probed as an API library: the maps line names nothing else */
	if (!gctx_uprobes__lib(w->c->u, kdev, pm->ino, &ul))
		return 0;
	w->done[w->ndone].kdev = kdev;
	w->done[w->ndone++].ino = pm->ino;
	l = lib_get(w->c, kdev, pm->ino, &ul);
	if (!l)
		return 0;
	ret = attach_lib(w->c, w->k, l, &ul);
	if (ret < 0)
		w->err = ret;
	else
		w->nfns += ret;
	return 0;
}

static void forget_at(struct gctx_childprobe *c, __u32 i)
{
	for (__u32 j = 0; j < c->kids[i].nfds; j++)
		link_close(c, c->kids[i].fds[j]);
	if (c->kids[i].pidfd >= 0)
		close(c->kids[i].pidfd);
	c->kids[i] = c->kids[--c->nkids];
}

/* Children gone whose exit record never came (a ring buffer full in a busy agent): their
 * links would stay, and take the place of live children, for as long as gpuctx runs. */
static void reap(struct gctx_childprobe *c)
{
	struct pollfd p[GCTX_CHILDPROBE_MAX_LIVE];
	__u32 n = c->nkids;

	for (__u32 i = 0; i < n; i++)
		p[i] = (struct pollfd){.fd = c->kids[i].pidfd, .events = POLLIN};
	if (!n || poll(p, n, 0) <= 0)
		return;
	for (__u32 i = n; i-- > 0;) {
		if (!(p[i].revents & (POLLIN | POLLHUP)))
			continue;
		forget_at(c, i);
		c->st.reaped++;
	}
}

static int attach(struct gctx_childprobe *c, __u32 pid)
{
	struct walk w = {.c = c};
	__u64 t0 = mono_ns();
	char path[64];
	int fd, ret;

	reap(c);
	if (c->nkids == GCTX_CHILDPROBE_MAX_LIVE) {
		c->st.not_probed++;
		return -EDQUOT;
	}
	w.k = &c->kids[c->nkids];
	memset(w.k, 0, sizeof(*w.k));
	w.k->pid = pid;
	/* before the maps are read: a later pid of the same number is not this child */
	w.k->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	w.mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (w.mem_fd >= 0)
			close(w.mem_fd);
		if (w.k->pidfd >= 0)
			close(w.k->pidfd);
		c->st.not_probed++;
		return ret;
	}
	ret = gctx_procmaps_read_fd(fd, on_map, &w, NULL);
	close(fd);
	if (w.mem_fd >= 0)
		close(w.mem_fd);
	if (ret < 0 || (w.err && !w.nfns)) {
		for (__u32 i = 0; i < w.k->nfds; i++)
			close(w.k->fds[i]);
		if (w.k->pidfd >= 0)
			close(w.k->pidfd);
		c->st.not_probed++;
		return ret < 0 ? ret : w.err;
	}
	if (w.k->nfds) {
		c->nkids++;
		c->st.children++;
	} else if (w.k->pidfd >= 0) {
		close(w.k->pidfd);
	}
	c->st.attach_ns += mono_ns() - t0;
	if (c->verbose)
		fprintf(stderr,
			"gpuctx: forked child %u: %d API functions probed for it in %.2f ms\n", pid,
			w.nfns, (mono_ns() - t0) / 1e6);
	return w.nfns;
}

int gctx_childprobe__attach(struct gctx_childprobe *c, __u32 pid)
{
	int ret;

	if (!c)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&c->mu);
	ret = attach(c, pid);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

static void forget(struct gctx_childprobe *c, __u32 pid)
{
	for (__u32 i = 0; i < c->nkids; i++) {
		if (c->kids[i].pid == pid) {
			forget_at(c, i);
			return;
		}
	}
}

void gctx_childprobe__forget(struct gctx_childprobe *c, __u32 pid)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	forget(c, pid);
	pthread_mutex_unlock(&c->mu);
}

void gctx_childprobe__stats(struct gctx_childprobe *c, struct gctx_childprobe_stats *s)
{
	if (!c) {
		memset(s, 0, sizeof(*s));
		return;
	}
	pthread_mutex_lock(&c->mu);
	*s = c->st;
	pthread_mutex_unlock(&c->mu);
}

void gctx_childprobe__free(struct gctx_childprobe *c)
{
	if (!c)
		return;
	while (c->nkids)
		forget_at(c, 0);
	for (__u32 i = 0; i < c->nlibs; i++) {
		free(c->libs[i].offs);
		free(c->libs[i].cookies);
	}
	for (__u32 i = 0; i < c->npy; i++)
		if (c->py[i].fd >= 0)
			close(c->py[i].fd);
	gctx_strtab__free(c->names);
	if (c->close_wr >= 0)
		close(c->close_wr); /* the thread closes what it has, then ends */
	pthread_mutex_destroy(&c->mu);
	free(c);
}
