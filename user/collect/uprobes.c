// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * API probes. Per library file: resolve the exported functions we know from .dynsym (a
 * versioned symbol such as hipInit@@hip_4.2 is the plain name there), turn each address into
 * a file offset through the PT_LOAD headers, look at the first instruction (a probe on endbr64
 * is single-stepped, ~10 us here; the next instruction is emulated or rewritten, so we probe
 * there), and attach the generic entry/return programs with a cookie naming the function.
 * The addresses cuGetProcAddress hands out are followed in procaddr.c.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "decode/api.h"
#include "api.skel.h"
#include "lib/grow.h"
#include "lib/elfsyms.h"
#include "lib/esc.h"
#include "lib/procmaps.h"
#include "collect/libfile.h"
#include "collect/resolver.h"
#include "collect/collector.h"
#include "collect/uprobes_priv.h"

/* From the kernel's UAPI (Linux 6.6), as ATTACH_UPROBE_MULTI (uprobes_priv.h). */
#define UPROBE_MULTI_RETURN 1  /* BPF_F_UPROBE_MULTI_RETURN */
#define CMD_LINK_CREATE	    28 /* BPF_LINK_CREATE */

const __u8 uprb_endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};

/* The shared ring buffer's size, for the wakeup threshold (the default when unreadable). */
static __u32 ring_size(int events_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(events_fd, &info, &len) || !info.max_entries)
		return GCTX_RING_DEFAULT;
	return info.max_entries;
}

static bool is_gpu_lib(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10) || !strncmp(base, "libamdhip64.so", 14);
}

void uprb_lock(struct gctx_uprobes *u)
{
	pthread_mutex_lock(&u->mu);
	u->depth++;
}

void uprb_unlock(struct gctx_uprobes *u)
{
	struct gctx_rec_probe *q = NULL;
	__u32 n = 0;

	if (!--u->depth && u->noutq) {
		q = u->outq;
		n = u->noutq;
		u->outq = NULL;
		u->noutq = u->cap_outq = 0;
	}
	pthread_mutex_unlock(&u->mu);
	for (__u32 i = 0; i < n; i++)
		u->o.cb(u->o.cb_ctx, GCTX_REC_PROBE, &q[i], sizeof(q[i]));
	free(q);
}

void uprb_emit(struct gctx_uprobes *u, const struct gctx_rec_probe *r)
{
	if (!u->o.cb)
		return;
	if (!u->depth || gctx_grow(&u->outq, &u->cap_outq, u->noutq + 1, sizeof(*u->outq))) {
		u->o.cb(u->o.cb_ctx, GCTX_REC_PROBE, r, sizeof(*r)); /* no memory: at once */
		return;
	}
	u->outq[u->noutq++] = *r;
}

static void mu_init(pthread_mutex_t *mu)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(mu, &a);
	pthread_mutexattr_destroy(&a);
}

struct gctx_uprobes *gctx_uprobes__new(const struct gctx_uprobes_opts *o, char *err, size_t errlen)
{
	struct gctx_uprobes *u = calloc(1, sizeof(*u));
	int ret;

	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	u->o = *o;
	mu_init(&u->mu);
	pthread_mutex_init(&u->py_mu, NULL);
	/* uprobe_multi programs first; a kernel before 6.6 refuses them: load without */
	/* GPUCTX_NO_UPROBE_MULTI=1 takes the older kernels' path here too (tests use it) */
	for (int multi = !getenv("GPUCTX_NO_UPROBE_MULTI"); multi >= 0; multi--) {
		u->skel = api_bpf__open();
		if (!u->skel) {
			snprintf(err, errlen, "cannot open the API probe object: %s",
				 strerror(errno));
			goto err_free;
		}
		u->skel->rodata->follow_all = o->follow_all;
		u->skel->rodata->self_tgid = o->self_tgid;
		bpf_program__set_autoload(u->skel->progs.api_enter_multi, multi);
		bpf_program__set_autoload(u->skel->progs.api_return_multi, multi);
		bpf_program__set_expected_attach_type(u->skel->progs.api_enter_multi,
						      ATTACH_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(u->skel->progs.api_return_multi,
						      ATTACH_UPROBE_MULTI);
		u->skel->rodata->stacks_on = o->pyinfo_fd >= 0;
		u->skel->rodata->wakeup_bytes = gctx_ring_wakeup_bytes(ring_size(o->events_fd));
		u->skel->rodata->task_fsbase_off = o->task_fsbase_off;
		if (bpf_map__reuse_fd(u->skel->maps.events, o->events_fd) ||
		    bpf_map__reuse_fd(u->skel->maps.followed, o->followed_fd) ||
		    bpf_map__reuse_fd(u->skel->maps.own_procs, o->own_fd) ||
		    (o->stk_state_fd >= 0 &&
		     bpf_map__reuse_fd(u->skel->maps.stk_state, o->stk_state_fd)) ||
		    (o->pyinfo_fd >= 0 && bpf_map__reuse_fd(u->skel->maps.pyinfo, o->pyinfo_fd))) {
			snprintf(err, errlen, "cannot share maps with the API probes: %s",
				 strerror(errno));
			goto err_destroy;
		}
		ret = api_bpf__load(u->skel);
		if (!ret) {
			u->multi = multi;
			break;
		}
		api_bpf__destroy(u->skel);
		u->skel = NULL;
	}
	if (!u->skel) {
		snprintf(err, errlen, "cannot load the API probes: %s", strerror(-ret));
		goto err_free;
	}
	return u;

err_destroy:
	api_bpf__destroy(u->skel);
err_free:
	free(u);
	return NULL;
}

/* union bpf_attr, link_create with its uprobe_multi member */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
	__u32 pad;
};

/* One link for many offsets of one file (pid: that process's address space alone, 0 every
 * process's). Returns its fd or -errno. */
int gctx_uprobe_multi_link(int prog_fd, const char *path, const __u64 *offs, const __u64 *cookies,
			   __u32 cnt, bool ret, __u32 pid)
{
	struct uprobe_multi_attr a = {
	    .prog_fd = prog_fd,
	    .attach_type = ATTACH_UPROBE_MULTI,
	    .path = (__u64)(unsigned long)path,
	    .offsets = (__u64)(unsigned long)offs,
	    .cookies = (__u64)(unsigned long)cookies,
	    .cnt = cnt,
	    .um_flags = ret ? UPROBE_MULTI_RETURN : 0,
	    .pid = pid,
	};
	long fd = syscall(__NR_bpf, CMD_LINK_CREATE, &a, sizeof(a));

	return fd < 0 ? -errno : (int)fd;
}

static int add_link(struct gctx_uprobes *u, struct bpf_link *l)
{
	if (u->nlinks == u->caplinks) {
		__u32 cap = u->caplinks ? u->caplinks * 2 : 64;
		struct bpf_link **p = realloc(u->links, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		u->links = p;
		u->caplinks = cap;
	}
	u->links[u->nlinks++] = l;
	return 0;
}

bool uprb_lib_has_probe(const struct lib *l, __u64 off)
{
	for (__u32 i = 0; i < l->nprobes; i++)
		if (l->probes[i].off == off)
			return true;
	return false;
}

static void lib_add_probe(struct lib *l, __u64 off, enum gctx_api_fn fn)
{
	struct probe_at *p = realloc(l->probes, (l->nprobes + 1) * sizeof(*p));

	if (p) {
		l->probes = p;
		l->probes[l->nprobes++] = (struct probe_at){off, fn};
	}
}

/* Queue entry (and return) probes at a function's file offset, past an endbr64. */
void uprb_probe_one(struct gctx_uprobes *u, struct lib *l, const struct gctx_api_sym *s,
		    const char *symbol, __u64 sym_off, __u32 how)
{
	struct pending *p;

	for (__u32 i = 0; i < u->npend; i++)
		if (u->pend[i].r.sym_offset == sym_off)
			return;
	if (u->npend == u->cappend) {
		__u32 cap = u->cappend ? u->cappend * 2 : 64;
		struct pending *np = realloc(u->pend, cap * sizeof(*np));

		if (!np)
			return;
		u->pend = np;
		u->cappend = cap;
	}
	p = &u->pend[u->npend];
	memset(p, 0, sizeof(*p));
	p->r.fn = s->fn;
	p->r.how = how;
	p->r.sym_offset = sym_off;
	if (pread(l->fd, p->r.insn, sizeof(p->r.insn), sym_off) != sizeof(p->r.insn))
		memset(p->r.insn, 0, sizeof(p->r.insn));
	p->r.offset = memcmp(p->r.insn, uprb_endbr64, sizeof(uprb_endbr64)) ? sym_off : sym_off + 4;
	if (uprb_lib_has_probe(l, p->r.offset))
		return;
	snprintf(p->r.symbol, sizeof(p->r.symbol), "%s", symbol);
	snprintf(p->r.lib, sizeof(p->r.lib), "%.*s", (int)sizeof(p->r.lib) - 1, l->path);
	p->entry_only = s->launch;
	p->cookie_entry = gctx_api_cookie(s, p->entry_only);
	p->cookie_ret = gctx_api_cookie(s, false);
	u->npend++;
}

/* One probe on its own (perf-event uprobe): the fallback, and the precise error. */
static void attach_single(struct gctx_uprobes *u, struct lib *l, struct pending *p)
{
	struct bpf_link *link;

	LIBBPF_OPTS(bpf_uprobe_opts, eo, .bpf_cookie = p->cookie_entry);
	link =
	    bpf_program__attach_uprobe_opts(u->skel->progs.api_enter, -1, l->at, p->r.offset, &eo);
	if (!link) {
		p->r.err = -errno;
		return;
	}
	if (add_link(u, link)) {
		bpf_link__destroy(link);
		p->r.err = -ENOMEM;
		return;
	}
	if (p->entry_only)
		return;
	LIBBPF_OPTS(bpf_uprobe_opts, ro, .bpf_cookie = p->cookie_ret, .retprobe = true);
	link =
	    bpf_program__attach_uprobe_opts(u->skel->progs.api_return, -1, l->at, p->r.offset, &ro);
	if (!link)
		p->r.err = -errno;
	else if (add_link(u, link))
		bpf_link__destroy(link);
	else
		p->r.retprobe = 1;
}

static bool add_mfd(struct gctx_uprobes *u, int fd)
{
	int *n = realloc(u->mfds, (u->nmfds + 1) * sizeof(*n));

	if (!n) {
		close(fd);
		return false;
	}
	u->mfds = n;
	u->mfds[u->nmfds++] = fd;
	return true;
}

/* The queued probes of a library as two uprobe_multi links (entries, returns). */
static bool attach_multi(struct gctx_uprobes *u, struct lib *l)
{
	__u64 *offs = calloc(u->npend, sizeof(*offs)),
	      *cookies = calloc(u->npend, sizeof(*cookies));
	__u32 n = 0;
	bool ok = false;
	int fd;

	if (!offs || !cookies)
		goto out;
	for (__u32 i = 0; i < u->npend; i++) {
		offs[n] = u->pend[i].r.offset;
		cookies[n++] = u->pend[i].cookie_entry;
	}
	fd = gctx_uprobe_multi_link(bpf_program__fd(u->skel->progs.api_enter_multi), l->at, offs,
				    cookies, n, false, 0);
	if (fd < 0 || !add_mfd(u, fd))
		goto out;
	n = 0;
	for (__u32 i = 0; i < u->npend; i++) {
		if (u->pend[i].entry_only)
			continue;
		offs[n] = u->pend[i].r.offset;
		cookies[n++] = u->pend[i].cookie_ret;
	}
	ok = true;
	if (n) {
		fd = gctx_uprobe_multi_link(bpf_program__fd(u->skel->progs.api_return_multi), l->at,
					    offs, cookies, n, true, 0);
		if (fd < 0 || !add_mfd(u, fd)) {
			/* entries are live, returns are not: say so on each probe */
			for (__u32 i = 0; i < u->npend; i++)
				if (!u->pend[i].entry_only)
					u->pend[i].r.err = fd < 0 ? fd : -ENOMEM;
			goto out;
		}
		for (__u32 i = 0; i < u->npend; i++)
			u->pend[i].r.retprobe = !u->pend[i].entry_only;
	}
out:
	free(offs);
	free(cookies);
	return ok;
}

/* Attach what probe_one queued for this library; emit a probe record for each. Returns how
 * many are attached. */
int uprb_flush_probes(struct gctx_uprobes *u, struct lib *l)
{
	__u32 mfd_from = u->nmfds, link_from = u->nlinks;
	int nok = 0;

	if (!u->npend)
		return 0;
	if (!u->multi || !attach_multi(u, l))
		for (__u32 i = 0; i < u->npend; i++)
			attach_single(u, l, &u->pend[i]);
	if (u->rt_armed)
		uprb_keep_rt(u, l, mfd_from, link_from);
	for (__u32 i = 0; i < u->npend; i++) {
		struct gctx_rec_probe *r = &u->pend[i].r;

		lib_add_probe(l, r->offset, r->fn);
		if (!r->err)
			nok++;
		if (u->o.verbose) {
			char esc[GCTX_ESC_SIZE(256)], sym[GCTX_ESC_SIZE(sizeof(r->symbol))];

			gctx_format_str(esc, sizeof(esc), l->path, 256);
			gctx_format_str(sym, sizeof(sym), r->symbol, sizeof(r->symbol));
			fprintf(stderr, "gpuctx: probe %s+0x%llx %s%s\n", esc,
				(unsigned long long)r->offset, sym, r->err ? " FAILED" : "");
		}
		uprb_emit(u, r);
	}
	u->npend = 0;
	return nok;
}

struct sym_ctx {
	struct gctx_uprobes *u;
	struct lib *l;
};

static void on_elf_sym(void *ctx, const char *name, __u64 off)
{
	struct sym_ctx *c = ctx;
	const struct gctx_api_sym *s = gctx_api_sym_lookup(name);

	if (!s || (s->launch && !c->u->o.launches))
		return;
	if (!strcmp(name, "cuGetProcAddress_v2"))
		c->l->has_getproc = true;
	c->l->nexports++;
	uprb_probe_one(c->u, c->l, s, name, off, GCTX_PROBE_SYMBOL);
}

static int probe_symbols(struct gctx_uprobes *u, struct lib *l, char *err, size_t errlen)
{
	struct sym_ctx c = {u, l};
	char why[128];

	/* a crafted library is skipped with a reason, never trusted field by field */
	if (gctx_elf_dynsyms_fd(l->fd, l->size, on_elf_sym, &c, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s: skipped", l->path, why);
		u->npend = 0;
		return -ENOEXEC;
	}
	return uprb_flush_probes(u, l);
}

struct lib *uprb_find_lib(const struct gctx_uprobes *u, dev_t dev, ino_t ino)
{
	for (__u32 i = 0; i < u->nlibs; i++)
		if (u->libs[i].dev == dev && u->libs[i].ino == ino)
			return &u->libs[i];
	return NULL;
}

/* The library's cuGetProcAddress could not be asked ahead: said in the trace (the report
 * lists it under the library's probes) and, with -v, here. */
static void not_preresolved(struct gctx_uprobes *u, struct lib *l, int err, const char *why)
{
	struct gctx_rec_probe r = {
	    .fn = GCTX_CU_GET_PROC_ADDRESS, .how = GCTX_PROBE_NOT_PRERESOLVED, .err = err};

	snprintf(r.symbol, sizeof(r.symbol), "%.*s", (int)sizeof(r.symbol) - 1, why);
	snprintf(r.lib, sizeof(r.lib), "%.*s", (int)sizeof(r.lib) - 1, l->path);
	if (u->o.verbose) {
		char esc[GCTX_ESC_SIZE(256)], w[GCTX_ESC_SIZE(128)];

		gctx_format_str(esc, sizeof(esc), l->path, 256);
		gctx_format_str(w, sizeof(w), why, 128);
		fprintf(stderr,
			"gpuctx: %s: cuGetProcAddress not pre-resolved (%s): its addresses are "
			"followed at run time only\n",
			esc, w);
	}
	uprb_emit(u, &r);
}

/* Ask a library that only root could have written what cuGetProcAddress hands out, in an
 * unprivileged child (resolver.h); any other library's code never runs. */
static void preresolve(struct gctx_uprobes *u, struct lib *l, const char *root, const char *inpath)
{
	struct gctx_procaddr *recs;
	char why[128];
	__u32 n;
	int ret;

	if (!gctx_libfile_trusted(l->fd, root, inpath)) {
		not_preresolved(u, l, -EPERM,
				"not root's alone (others may write it or a directory above)");
		return;
	}
	ret = gctx_resolve_procaddrs(l->fd, l->dev, l->ino, &recs, &n, why, sizeof(why));
	if (ret) {
		not_preresolved(u, l, ret, why);
		return;
	}
	if (why[0])
		not_preresolved(u, l, 0, why); /* answers cut short */
	for (__u32 i = 0; i < n; i++)
		uprb_probe_procaddr(u, l, 0, recs[i].fn, recs[i].name, recs[i].off);
	uprb_flush_probes(u, l);
	free(recs);
}

/* The library open at fd (kept open from now on, or closed here when already known).
 * root and inpath say where it lives, for the trust check. */
static int add_lib_fd(struct gctx_uprobes *u, int fd, const struct stat *st, const char *shown,
		      const char *root, const char *inpath, char *err, size_t errlen)
{
	struct lib *libs, *l;
	int ret;

	if (uprb_find_lib(u, st->st_dev, st->st_ino)) {
		close(fd);
		return 0;
	}
	libs = realloc(u->libs, (u->nlibs + 1) * sizeof(*libs));
	if (!libs) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	u->libs = libs;
	l = &u->libs[u->nlibs++];
	memset(l, 0, sizeof(*l));
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->fd = fd;
	l->size = (__u64)st->st_size;
	snprintf(l->at, sizeof(l->at), "/proc/self/fd/%d", fd);
	snprintf(l->path, sizeof(l->path), "%s", shown);
	ret = probe_symbols(u, l, err, errlen);
	if (ret > 0 && l->has_getproc)
		preresolve(u, l, root, inpath);
	if (ret <= 0) {
		/* remembered as looked at, but nothing of it is kept, read or probed again */
		close(l->fd);
		l->fd = -1;
		l->nexports = 0;
	}
	if (ret == 0) {
		snprintf(err, errlen, "%s exports none of the CUDA/HIP functions gpuctx probes",
			 shown);
		ret = -ENOENT;
	}
	ret = ret < 0 ? ret : 0;
	if (u->o.on_lib)
		u->o.on_lib(u->o.on_lib_ctx, shown, st->st_dev, st->st_ino, ret);
	return ret;
}

int gctx_uprobes__add_lib_fd(struct gctx_uprobes *u, int fd, const struct stat *st,
			     const char *shown, const char *root, const char *inpath, char *err,
			     size_t errlen)
{
	int ret;

	uprb_lock(u);
	ret = add_lib_fd(u, fd, st, shown, root, inpath, err, errlen);
	uprb_unlock(u);
	return ret;
}

int gctx_uprobes__add_lib(struct gctx_uprobes *u, const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct stat st;
	int fd;

	/* a path the user (root) gave, or a system library: its symlinks are root's */
	fd = gctx_libfile_open(path, true, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (!realpath(path, real))
		real[0] = '\0';
	return gctx_uprobes__add_lib_fd(u, fd, &st, path, "/", real, err, errlen);
}

void gctx_uprobes__add_system_libs(struct gctx_uprobes *u)
{
	static const char *const dirs[] = {
	    "/usr/lib/x86_64-linux-gnu", "/usr/lib64",	   "/usr/lib",
	    "/lib/x86_64-linux-gnu",	 "/usr/local/lib", "/opt/rocm/lib",
	};
	static const char *const names[] = {"libcuda.so.1", "libamdhip64.so", "libamdhip64.so.5",
					    "libamdhip64.so.6", "libamdhip64.so.7"};
	char path[GCTX_PATH_LEN], err[256];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++) {
			snprintf(path, sizeof(path), "%s/%s", dirs[i], names[j]);
			if (!access(path, R_OK))
				gctx_uprobes__add_lib(u, path, err, sizeof(err));
		}
}

static void mark_seen(struct gctx_uprobes *u, __u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < u->nseen; i++)
		if (u->seen[i].dev == dev && u->seen[i].ino == ino)
			return;
	if (u->nseen < MAX_SEEN)
		u->seen[u->nseen++] = (struct file_id){dev, ino};
}

static bool was_seen(const struct gctx_uprobes *u, __u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < u->nseen; i++)
		if (u->seen[i].dev == dev && u->seen[i].ino == ino)
			return true;
	return false;
}

struct walk_ctx {
	__u32 pid;
	int (*fn)(void *ctx, const struct mapping *m);
	void *ctx;
};

static int walk_one(void *ctx, const struct gctx_procmap *pm)
{
	struct walk_ctx *w = ctx;
	struct mapping m = {w->pid,
			    pm->start,
			    pm->end,
			    pm->pgoff,
			    pm->ino,
			    gctx_procmap_kdev(pm),
			    pm->perms[2] == 'x',
			    pm->path};

	/* a file mapping: an inode, and a path (never trusted to name the file) */
	if (!pm->ino || pm->path[0] != '/')
		return 0;
	return w->fn(w->ctx, &m);
}

/* Walk /proc/PID/maps (procfs: never blocks), whole lines only: fn(ctx, m) for file mappings
 * until it returns nonzero. */
int uprb_walk_maps(__u32 pid, int (*fn)(void *ctx, const struct mapping *m), void *ctx)
{
	struct walk_ctx w = {pid, fn, ctx};
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = gctx_procmaps_read_fd(fd, walk_one, &w, NULL);
	close(fd);
	return ret;
}

/* Open a mapped GPU library through map_files and add it. */
void uprb_add_mapped_lib(struct gctx_uprobes *u, const struct mapping *m)
{
	char err[512], shown[4096 + 64], root[48];
	struct stat st;
	int fd;

	fd = gctx_libfile_open_mapping(m->pid, m->start, m->end, m->kdev, m->ino, &st, err,
				       sizeof(err));
	if (fd < 0) {
		if (u->o.verbose)
			gctx_warn_escaped("gpuctx: warning: ", err);
		return;
	}
	snprintf(root, sizeof(root), "/proc/%u/root", m->pid);
	snprintf(shown, sizeof(shown), "%s%s", root, m->path);
	/* a library that cannot be read (a crafted ELF) is skipped; recording goes on */
	if (add_lib_fd(u, fd, &st, shown, root, m->path, err, sizeof(err)) == -ENOEXEC)
		gctx_warn_escaped("gpuctx: warning: ", err);
}

static int scan_one(void *ctx, const struct mapping *m)
{
	struct gctx_uprobes *u = ctx;

	mark_seen(u, m->kdev, m->ino);
	if (is_gpu_lib(m->path))
		uprb_add_mapped_lib(u, m);
	return 0;
}

void gctx_uprobes__scan_pid(struct gctx_uprobes *u, __u32 pid)
{
	uprb_lock(u);
	uprb_walk_maps(pid, scan_one, u);
	uprb_unlock(u);
}

void gctx_uprobes__on_record(struct gctx_uprobes *u, __u32 type, const void *data, __u32 len)
{
	if (type == GCTX_EV_LIBMAP && len >= sizeof(struct gctx_ev_libmap)) {
		const struct gctx_ev_libmap *m = data;

		uprb_lock(u);
		if (!was_seen(u, m->dev, m->ino))
			gctx_uprobes__scan_pid(u, m->hdr.tgid);
		mark_seen(u, m->dev, m->ino);
		uprb_unlock(u);
	} else if (type == GCTX_EV_API && len >= sizeof(struct gctx_ev_api)) {
		const struct gctx_ev_api *a = data;

		if (a->fn == GCTX_CU_GET_PROC_ADDRESS && a->ret == 0 &&
		    (a->flags & GCTX_API_OUT_OK) && (a->flags & GCTX_API_STR_OK) && a->out) {
			uprb_lock(u);
			uprb_follow_proc_address(u, a);
			uprb_unlock(u);
		}
	}
}

bool gctx_uprobes__lib(struct gctx_uprobes *u, __u32 kdev, __u64 ino, struct gctx_uprobes_lib *out)
{
	const struct lib *l;
	bool ret = false;

	if (!u)
		return false;
	uprb_lock(u);
	l = uprb_find_lib(u, makedev(kdev >> 20, kdev & 0xfffff), ino);
	if (l && l->fd >= 0 && l->nexports) {
		out->fd = l->fd;
		out->size = l->size;
		snprintf(out->at, sizeof(out->at), "%s", l->at);
		ret = true;
	}
	uprb_unlock(u);
	return ret;
}

bool gctx_uprobes__probed_at(struct gctx_uprobes *u, __u32 kdev, __u64 ino, __u64 off)
{
	const struct lib *l;
	bool ret;

	if (!u)
		return false;
	uprb_lock(u);
	l = uprb_find_lib(u, makedev(kdev >> 20, kdev & 0xfffff), ino);
	ret = l && uprb_lib_has_probe(l, off);
	uprb_unlock(u);
	return ret;
}

int gctx_uprobes__multi_progs(const struct gctx_uprobes *u, struct gctx_uprobes_multi *out)
{
	if (!u || !u->multi)
		return -EOPNOTSUPP;
	out->enter_fd = bpf_program__fd(u->skel->progs.api_enter_multi);
	out->ret_fd = bpf_program__fd(u->skel->progs.api_return_multi);
	out->names_fd = bpf_map__fd(u->skel->maps.api_names);
	return 0;
}

__u32 gctx_uprobes__nlibs(const struct gctx_uprobes *u)
{
	return u ? u->nlibs : 0;
}

void gctx_uprobes__drops(const struct gctx_uprobes *u, __u64 *drops, __u64 *missed)
{
	/* the Python exceptions lost (pyraise.c) are counted with the API records */
	*drops =
	    u ? __atomic_load_n(&u->skel->bss->api_drops, __ATOMIC_RELAXED) + uprb_raise_drops(u)
	      : 0;
	*missed = u ? __atomic_load_n(&u->skel->bss->api_missed, __ATOMIC_RELAXED) : 0;
}

void gctx_uprobes__free(struct gctx_uprobes *u)
{
	if (!u)
		return;
	uprb_raise_wait(u); /* it uses the API object */
	for (__u32 i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	for (__u32 i = 0; i < u->nmfds; i++)
		if (u->mfds[i] >= 0)
			close(u->mfds[i]);
	free(u->mfds);
	free(u->pend);
	free(u->links);
	for (__u32 i = 0; i < u->nlibs; i++) {
		free(u->libs[i].probes);
		free(u->libs[i].entries);
		if (u->libs[i].fd >= 0)
			close(u->libs[i].fd);
	}
	gctx_hmap__free(&u->per_proc);
	gctx_hmap__free(&u->per_user);
	free(u->rt);
	free(u->libs);
	free(u->outq);
	uprb_raise_free(u);
	api_bpf__destroy(u->skel);
	free(u);
}
