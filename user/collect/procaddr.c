// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The addresses cuGetProcAddress hands out (uprobes_priv.h): a call through one is seen only
 * if that address is probed. Probed when it is a function entry of a library that defines the
 * API, within caps per library, process, user and in all; the probes a process's answers
 * caused go, and their shares come back, once no process maps their library. What is
 * refused is counted and reported.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/libbpf.h>
#include "lib/elfsyms.h"
#include "lib/esc.h"
#include "collect/discover.h"
#include "collect/uprobes_priv.h"

/* Probes an address cuGetProcAddress hands out may cause: a library answering with a new
 * address each call must not make gpuctx hold thousands of links (each costs fds and a
 * uprobe every process on the machine runs). Over the caps an address is refused, counted
 * and reported. The double hands out 2 non-exported addresses; real drivers export what
 * they hand out (gpu-facts 6.1). */
#define PROCADDR_MAX_LIB   128 /* per library file */
#define PROCADDR_MAX_PROC  64  /* per process asking */
#define PROCADDR_MAX_TOTAL 256 /* at once: at most 512 link fds */
/* per user at once (the uid of the process asking), so that one user's crafted library never
 * spends what later jobs need: their probes go, and their share comes back, once no process
 * maps the library any more (looked for when a cap is reached, every RECLAIM_EVERY_NS) */
#define PROCADDR_MAX_USER 64
#define RECLAIM_EVERY_NS  (2 * 1000000000ull)
#define REFUSED_RECORDS	  32 /* refusals recorded one by one; the rest only counted */

static const struct gctx_api_sym *sym_for_fn(enum gctx_api_fn fn)
{
	const struct gctx_api_sym *syms;
	__u32 n;

	syms = gctx_api_syms(&n);
	for (__u32 i = 0; i < n; i++)
		if (syms[i].fn == fn)
			return &syms[i];
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void on_func(void *ctx, const char *name, __u64 off)
{
	struct lib *l = ctx;
	__u64 *e;

	if (l->nentries % 1024 == 0) {
		e = realloc(l->entries, (l->nentries + 1024) * sizeof(*e));
		if (!e)
			return;
		l->entries = e;
	}
	l->entries[l->nentries++] = off;
}

/* Is off the first byte of a function, as the library's own .dynsym or .symtab says? */
static bool is_func_entry(struct lib *l, __u64 off)
{
	char why[128];

	if (!l->entries_read) {
		l->entries_read = true;
		if (gctx_elf_funcs_fd(l->fd, l->size, on_func, l, why, sizeof(why)) < 0)
			l->nentries = 0; /* a table we cannot trust: no entry at all */
		else if (l->nentries)
			qsort(l->entries, l->nentries, sizeof(*l->entries), cmp_u64);
	}
	return l->nentries && bsearch(&off, l->entries, l->nentries, sizeof(*l->entries), cmp_u64);
}

/* An address not probed: counted, and the first ones recorded (the report lists them). */
static void refuse(struct gctx_uprobes *u, const char *lib, enum gctx_api_fn fn, const char *name,
		   __u64 off, int why)
{
	struct gctx_rec_probe r = {
	    .fn = fn, .how = GCTX_PROBE_REFUSED, .offset = off, .sym_offset = off, .err = why};
	__u64 all = ++u->refused[why == -EPERM ? 0 : 1];

	all += u->refused[why == -EPERM ? 1 : 0];
	if (u->o.verbose) {
		char esc[GCTX_ESC_SIZE(256)];

		gctx_format_str(esc, sizeof(esc), lib, 256);
		fprintf(stderr, "gpuctx: not probed: %s+0x%llx for %s: %s\n", esc,
			(unsigned long long)off, gctx_api_fn_name(fn),
			why == -EPERM ? "not a function entry of a library defining the API"
				      : "over the probe cap");
	}
	if (all > REFUSED_RECORDS)
		return;
	snprintf(r.symbol, sizeof(r.symbol), "%.*s", (int)sizeof(r.symbol) - 1, name);
	snprintf(r.lib, sizeof(r.lib), "%.*s", (int)sizeof(r.lib) - 1, lib);
	uprb_emit(u, &r);
}

/* Whose share a process's probes take: its uid ((__u32)-1 when it is gone: one share). */
static __u32 uid_of(__u32 pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) ? (__u32)-1 : (__u32)st.st_uid;
}

struct mapped_ctx {
	struct rt_probe *libs; /* the libraries asked about (dev, ino); noffs: 1 when mapped */
	__u32 n, left;
};

static int mapped_one(void *ctx, const struct mapping *m)
{
	struct mapped_ctx *c = ctx;
	dev_t dev = makedev(m->kdev >> 20, m->kdev & 0xfffff);

	for (__u32 i = 0; i < c->n; i++)
		if (!c->libs[i].noffs && c->libs[i].dev == dev && c->libs[i].ino == m->ino) {
			c->libs[i].noffs = 1;
			c->left--;
		}
	return !c->left;
}

/* Which of the libraries any process maps, in one walk of every process's maps (all of them
 * mapped when /proc cannot say). */
static void libs_mapped(struct mapped_ctx *c)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	c->left = c->n;
	for (__u32 i = 0; i < c->n; i++)
		c->libs[i].noffs = !d;
	if (!d)
		return;
	while (c->left && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			uprb_walk_maps(strtoul(de->d_name, NULL, 10), mapped_one, c);
	closedir(d);
}

static void lib_del_probe(struct lib *l, __u64 off)
{
	for (__u32 i = 0; i < l->nprobes; i++)
		if (l->probes[i].off == off) {
			l->probes[i] = l->probes[--l->nprobes];
			return;
		}
}

/* Detach a runtime probe and give its share back. */
static void release_rt(struct gctx_uprobes *u, __u32 i)
{
	struct rt_probe *r = &u->rt[i];
	struct lib *l = uprb_find_lib(u, r->dev, r->ino);
	__u32 n = 0;

	for (__u32 k = r->mfd_from; k < r->mfd_to; k++)
		if (u->mfds[k] >= 0) {
			close(u->mfds[k]);
			u->mfds[k] = -1;
		}
	for (__u32 k = r->link_from; k < r->link_to; k++) {
		bpf_link__destroy(u->links[k]);
		u->links[k] = NULL;
	}
	for (__u32 k = 0; l && k < r->noffs; k++)
		lib_del_probe(l, r->offs[k]);
	if (l && l->nprocaddr)
		l->nprocaddr--;
	if (u->nprocaddr)
		u->nprocaddr--;
	if (gctx_hmap__get(&u->per_user, r->uid, 0, &n) && n)
		gctx_hmap__put(&u->per_user, r->uid, 0, n - 1);
	/* its process maps the library no more: gone, or another program (a pid reused) */
	if (gctx_hmap__get(&u->per_proc, r->pid, 0, &n) && n > 1)
		gctx_hmap__put(&u->per_proc, r->pid, 0, n - 1);
	else
		gctx_hmap__del(&u->per_proc, r->pid, 0);
	u->rt[i] = u->rt[--u->nrt];
}

/* The runtime probes of libraries no process maps any more go (one walk of every process's
 * maps: only when a cap is reached, every RECLAIM_EVERY_NS at most). */
static void reclaim(struct gctx_uprobes *u)
{
	struct mapped_ctx c = {};
	__u64 now = gctx_now_mono();

	if (!u->nrt || (u->last_reclaim && now < u->last_reclaim + RECLAIM_EVERY_NS))
		return;
	u->last_reclaim = now;
	c.libs = calloc(u->nrt, sizeof(*c.libs));
	if (!c.libs)
		return;
	for (__u32 i = 0; i < u->nrt; i++) {
		bool seen = false;

		for (__u32 k = 0; k < c.n && !seen; k++)
			seen = c.libs[k].dev == u->rt[i].dev && c.libs[k].ino == u->rt[i].ino;
		if (!seen) {
			c.libs[c.n].dev = u->rt[i].dev;
			c.libs[c.n++].ino = u->rt[i].ino;
		}
	}
	libs_mapped(&c);
	for (__u32 k = 0; k < c.n; k++)
		for (__u32 i = u->nrt; !c.libs[k].noffs && i-- > 0;)
			if (u->rt[i].dev == c.libs[k].dev && u->rt[i].ino == c.libs[k].ino)
				release_rt(u, i);
	free(c.libs);
}

/* Probe an address cuGetProcAddress hands out (asked by pid, 0: pre-resolution), unless it is
 * a function already probed. Only a function entry of a library that defines the API (it
 * exports CUDA/HIP functions), as that library's own symbol tables name it: never an
 * arbitrary offset, never another library (a uprobe affects every process mapping the
 * file). 0 when probed or already probed, -EPERM or -EDQUOT (over a cap) when refused. */
int uprb_probe_procaddr(struct gctx_uprobes *u, struct lib *l, __u32 pid, enum gctx_api_fn fn,
			const char *name, __u64 off)
{
	const struct gctx_api_sym *s = sym_for_fn(fn);
	__u32 nproc = 0, nuser = 0, uid = 0;
	__u8 insn[4];

	if (!s || (s->launch && !u->o.launches))
		return 0;
	if (!l->nexports || !is_func_entry(l, off)) {
		refuse(u, l->path, fn, name, off, -EPERM);
		return -EPERM;
	}
	if (uprb_lib_has_probe(l, off))
		return 0;
	if (pread(l->fd, insn, sizeof(insn), off) == sizeof(insn) &&
	    !memcmp(insn, uprb_endbr64, sizeof(insn)) && uprb_lib_has_probe(l, off + 4))
		return 0; /* the exported function, already probed past its endbr64 */
	if (pid) {
		gctx_hmap__get(&u->per_proc, pid, 0, &nproc);
		uid = uid_of(pid);
		gctx_hmap__get(&u->per_user, uid, 0, &nuser);
		if (nuser >= PROCADDR_MAX_USER || u->nprocaddr >= PROCADDR_MAX_TOTAL ||
		    l->nprocaddr >= PROCADDR_MAX_LIB) {
			reclaim(u); /* what libraries no longer mapped hold comes back */
			nuser = 0;
			gctx_hmap__get(&u->per_user, uid, 0, &nuser);
		}
	}
	if (l->nprocaddr >= PROCADDR_MAX_LIB || nproc >= PROCADDR_MAX_PROC ||
	    u->nprocaddr >= PROCADDR_MAX_TOTAL || nuser >= PROCADDR_MAX_USER ||
	    (pid && (gctx_hmap__put(&u->per_proc, pid, 0, nproc + 1) ||
		     gctx_hmap__put(&u->per_user, uid, 0, nuser + 1)))) {
		refuse(u, l->path, fn, name, off, -EDQUOT);
		return -EDQUOT;
	}
	l->nprocaddr++;
	u->nprocaddr++;
	if (pid) {
		u->rt_armed = true; /* uprb_flush_probes keeps it (uprb_keep_rt) */
		u->next_rt.uid = uid;
		u->next_rt.pid = pid;
	}
	uprb_probe_one(u, l, s, name, off, GCTX_PROBE_PROC_ADDRESS);
	return 0;
}

/* The runtime probe just attached (probe_procaddr armed it), kept to be released once its
 * library is mapped no more. One that cannot be kept stays, its share taken. */
void uprb_keep_rt(struct gctx_uprobes *u, struct lib *l, __u32 mfd_from, __u32 link_from)
{
	struct rt_probe *r = &u->next_rt, *v;

	u->rt_armed = false;
	if (u->npend > RT_OFFS)
		return;
	r->dev = l->dev;
	r->ino = l->ino;
	r->mfd_from = mfd_from;
	r->mfd_to = u->nmfds;
	r->link_from = link_from;
	r->link_to = u->nlinks;
	r->noffs = 0;
	for (__u32 i = 0; i < u->npend; i++)
		r->offs[r->noffs++] = u->pend[i].r.offset;
	v = realloc(u->rt, (u->nrt + 1) * sizeof(*v));
	if (!v)
		return;
	u->rt = v;
	u->rt[u->nrt++] = *r;
}

struct addr_ctx {
	struct gctx_uprobes *u;
	__u64 addr;
	struct mapping m;
	char path[GCTX_PATH_LEN];
	bool found;
};

static int find_addr(void *ctx, const struct mapping *m)
{
	struct addr_ctx *a = ctx;

	if (a->addr < m->start || a->addr >= m->end)
		return 0;
	a->m = *m;
	snprintf(a->path, sizeof(a->path), "%s", m->path);
	a->m.path = a->path;
	a->found = true;
	return 1;
}

/* cuGetProcAddress returned an address: make sure calls through it are seen, when it is a
 * function of a library that defines the API. */
void uprb_follow_proc_address(struct gctx_uprobes *u, const struct gctx_ev_api *ev)
{
	struct addr_ctx a = {.u = u, .addr = ev->out};
	char name[GCTX_API_STR_LEN];
	enum gctx_api_fn fn;
	struct lib *l;
	__u64 off;

	fn = gctx_api_procaddr_fn(ev->str, ev->args[2], ev->args[3]);
	if (fn == GCTX_API_NONE)
		return;
	if (uprb_walk_maps(ev->hdr.tgid, find_addr, &a) <= 0 || !a.found)
		return; /* the process is gone, or the address is in no file it maps */
	snprintf(name, sizeof(name), "%.*s", (int)sizeof(ev->str) - 1, ev->str);
	off = a.addr - a.m.start + a.m.pgoff;
	if (!a.m.exec) {
		refuse(u, a.m.path, fn, name, off, -EPERM);
		return;
	}
	l = uprb_find_lib(u, makedev(a.m.kdev >> 20, a.m.kdev & 0xfffff), a.m.ino);
	if (!l) {
		/* a library we had not seen: probe its exports first */
		uprb_add_mapped_lib(u, &a.m);
		l = uprb_find_lib(u, makedev(a.m.kdev >> 20, a.m.kdev & 0xfffff), a.m.ino);
	}
	if (!l) {
		refuse(u, a.m.path, fn, name, off, -EPERM);
		return;
	}
	if (!uprb_probe_procaddr(u, l, ev->hdr.tgid, fn, name, off))
		uprb_flush_probes(u, l);
}

void gctx_uprobes__finish(struct gctx_uprobes *u)
{
	__u64 all;

	if (!u)
		return;
	all = u->refused[0] + u->refused[1];
	if (!all)
		return;
	fprintf(stderr,
		"gpuctx: warning: %llu address(es) cuGetProcAddress handed out were not probed: "
		"%llu not a function entry of a library that defines the API, %llu over the "
		"probe caps (%u a library, %u a process, %u a user, %u in all at once)\n",
		(unsigned long long)all, (unsigned long long)u->refused[0],
		(unsigned long long)u->refused[1], PROCADDR_MAX_LIB, PROCADDR_MAX_PROC,
		PROCADDR_MAX_USER, PROCADDR_MAX_TOTAL);
	if (all > REFUSED_RECORDS) {
		struct gctx_rec_probe r = {.how = GCTX_PROBE_REFUSED, .err = -EDQUOT};

		snprintf(r.symbol, sizeof(r.symbol), "%llu more not probed",
			 (unsigned long long)(all - REFUSED_RECORDS));
		uprb_emit(u, &r);
	}
}
