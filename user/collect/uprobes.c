// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * API probes. Per library file: resolve the exported functions we know from .dynsym (a
 * versioned symbol such as hipInit@@hip_4.2 is the plain name there), turn each address into
 * a file offset through the PT_LOAD headers, look at the first instruction (a probe on endbr64
 * is single-stepped, ~10 us here; the next instruction is emulated or rewritten, so we probe
 * there), and attach the generic entry/return programs with a cookie naming the function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "decode/api.h"
#include "api.skel.h"
#include "collect/uprobes.h"

#define MAX_SEEN 4096

/* From the kernel's UAPI (Linux 6.6), newer than the headers libbpf 1.1 builds against. */
#define ATTACH_UPROBE_MULTI	 48 /* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN	 1  /* BPF_F_UPROBE_MULTI_RETURN */
#define CMD_LINK_CREATE		 28 /* BPF_LINK_CREATE */

struct probe_at {
	__u64 off; /* probed file offset */
	enum gctx_api_fn fn;
};

struct lib {
	dev_t dev;
	ino_t ino;
	char path[4096 + 64];
	struct probe_at *probes;
	__u32 nprobes;
	bool has_getproc; /* exports cuGetProcAddress_v2 */
};

struct file_id {
	__u32 dev; /* kernel encoding */
	__u64 ino;
};

/* A probe waiting to be attached with the others of its library. */
struct pending {
	struct gctx_rec_probe r;
	__u64 cookie_entry;
	__u64 cookie_ret;
	bool entry_only;
};

struct gctx_uprobes {
	struct api_bpf *skel;
	struct gctx_uprobes_opts o;
	bool multi;		/* uprobe_multi links work here */
	struct bpf_link **links;	/* one-probe links (fallback) */
	__u32 nlinks, caplinks;
	int *mfds;			/* uprobe_multi link fds */
	__u32 nmfds;
	struct pending *pend;
	__u32 npend, cappend;
	struct lib *libs;
	__u32 nlibs;
	struct file_id seen[MAX_SEEN]; /* executable files already looked at */
	__u32 nseen;
};

static const __u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

static bool is_gpu_lib(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10) || !strncmp(base, "libamdhip64.so", 14);
}

struct gctx_uprobes *gctx_uprobes__new(const struct gctx_uprobes_opts *o, char *err,
				       size_t errlen)
{
	struct gctx_uprobes *u = calloc(1, sizeof(*u));
	int ret;

	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	u->o = *o;
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
		u->skel->rodata->stacks_on = o->stk_state_fd >= 0 && o->pyinfo_fd >= 0;
		if (bpf_map__reuse_fd(u->skel->maps.events, o->events_fd) ||
		    bpf_map__reuse_fd(u->skel->maps.followed, o->followed_fd) ||
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
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf is unusable");
		goto err_destroy;
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

/* One link for many offsets of one file. Returns its fd or -errno. */
static int uprobe_multi_link(int prog_fd, const char *path, const __u64 *offs,
			     const __u64 *cookies, __u32 cnt, bool ret)
{
	struct uprobe_multi_attr a = {
		.prog_fd = prog_fd,
		.attach_type = ATTACH_UPROBE_MULTI,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offs,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = cnt,
		.um_flags = ret ? UPROBE_MULTI_RETURN : 0,
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

static bool lib_has_probe(const struct lib *l, __u64 off)
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
		l->probes[l->nprobes++] = (struct probe_at){ off, fn };
	}
}

/* Queue entry (and return) probes at a function's file offset, past an endbr64. */
static void probe_one(struct gctx_uprobes *u, struct lib *l, const struct gctx_api_sym *s,
		      const char *symbol, __u64 sym_off, __u32 how)
{
	struct pending *p;
	int fd;

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
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, p->r.insn, sizeof(p->r.insn), sym_off) != sizeof(p->r.insn))
			memset(p->r.insn, 0, sizeof(p->r.insn));
		close(fd);
	}
	p->r.offset = memcmp(p->r.insn, endbr64, sizeof(endbr64)) ? sym_off : sym_off + 4;
	if (lib_has_probe(l, p->r.offset))
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
	link = bpf_program__attach_uprobe_opts(u->skel->progs.api_enter, -1, l->path, p->r.offset,
					       &eo);
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
	link = bpf_program__attach_uprobe_opts(u->skel->progs.api_return, -1, l->path, p->r.offset,
					       &ro);
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
	__u64 *offs = calloc(u->npend, sizeof(*offs)), *cookies = calloc(u->npend, sizeof(*cookies));
	__u32 n = 0;
	bool ok = false;
	int fd;

	if (!offs || !cookies)
		goto out;
	for (__u32 i = 0; i < u->npend; i++) {
		offs[n] = u->pend[i].r.offset;
		cookies[n++] = u->pend[i].cookie_entry;
	}
	fd = uprobe_multi_link(bpf_program__fd(u->skel->progs.api_enter_multi), l->path, offs,
			       cookies, n, false);
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
		fd = uprobe_multi_link(bpf_program__fd(u->skel->progs.api_return_multi), l->path,
				       offs, cookies, n, true);
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
static int flush_probes(struct gctx_uprobes *u, struct lib *l)
{
	int nok = 0;

	if (!u->npend)
		return 0;
	if (!u->multi || !attach_multi(u, l))
		for (__u32 i = 0; i < u->npend; i++)
			attach_single(u, l, &u->pend[i]);
	for (__u32 i = 0; i < u->npend; i++) {
		struct gctx_rec_probe *r = &u->pend[i].r;

		lib_add_probe(l, r->offset, r->fn);
		if (!r->err)
			nok++;
		if (u->o.verbose)
			fprintf(stderr, "gpuctx: probe %s+0x%llx %s%s\n", l->path,
				(unsigned long long)r->offset, r->symbol, r->err ? " FAILED" : "");
		if (u->o.cb)
			u->o.cb(u->o.cb_ctx, GCTX_REC_PROBE, r, sizeof(*r));
	}
	u->npend = 0;
	return nok;
}

/* Virtual address in the ELF file -> file offset, through the executable PT_LOADs. */
static int vaddr_to_off(Elf *e, GElf_Addr va, __u64 *off)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va >= ph.p_vaddr && va < ph.p_vaddr + ph.p_memsz) {
			*off = va - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

static int probe_symbols(struct gctx_uprobes *u, struct lib *l, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	int fd, nprobed = 0;
	Elf *e;

	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", l->path, strerror(errno));
		return -errno;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s is not an ELF file", l->path);
		if (e)
			elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const struct gctx_api_sym *s;
			const char *name;
			GElf_Sym sym;
			__u64 off;

			if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			s = name ? gctx_api_sym_lookup(name) : NULL;
			if (!s || (s->launch && !u->o.launches))
				continue;
			if (vaddr_to_off(e, sym.st_value, &off))
				continue;
			if (!strcmp(name, "cuGetProcAddress_v2"))
				l->has_getproc = true;
			probe_one(u, l, s, name, off, GCTX_PROBE_SYMBOL);
		}
	}
	elf_end(e);
	close(fd);
	nprobed = flush_probes(u, l);
	return nprobed;
}

/* What a cuGetProcAddress call in the resolver child returned. */
struct procaddr_rec {
	__u32 fn;
	__u32 pad;
	__u64 off;
	char name[48];
};

static void strip_variant(const char *name, char *out, size_t len)
{
	static const char *const sfx[] = { "_v2", "_v3", "_v4", "_ptsz" };
	size_t n;

	snprintf(out, len, "%s", name);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		n = strlen(out);
		if (n > strlen(sfx[i]) && !strcmp(out + n - strlen(sfx[i]), sfx[i]))
			out[n - strlen(sfx[i])] = 0;
	}
}

/* In the child: the file offset of addr if it lies in our mapping of (dev, ino). */
static int self_offset(__u64 addr, dev_t dev, ino_t ino, __u64 *off)
{
	char line[4352], path[4096];
	unsigned long long s, e, pgoff, fino;
	unsigned int maj, min;
	char perms[8];
	int ret = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perms, &pgoff, &maj,
			   &min, &fino, path) != 8)
			continue;
		if (addr >= s && addr < e && makedev(maj, min) == dev && fino == ino) {
			*off = addr - s + pgoff;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

typedef int (*getproc_v2_fn)(const char *, void **, int, unsigned long long, int *);

static void resolver_child(const struct lib *l, int out)
{
	static const int versions[] = { 3020, 4000, 11040, 12000, 12050, 13000 };
	const struct gctx_api_sym *syms;
	getproc_v2_fn gpa;
	__u32 nsyms;
	void *h;

	h = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
	gpa = h ? (getproc_v2_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gpa)
		_exit(1);
	syms = gctx_api_syms(&nsyms);
	for (__u32 i = 0; i < nsyms; i++) {
		struct procaddr_rec r = {};
		char base[48];

		if (gctx_api_vendor(syms[i].fn) != GCTX_VENDOR_CUDA)
			continue;
		strip_variant(syms[i].name, base, sizeof(base));
		for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
			for (unsigned long long flags = 0; flags <= 2; flags += 2) {
				void *pfn = NULL;
				int st = 0;

				if (gpa(base, &pfn, versions[v], flags, &st) || !pfn)
					continue;
				if (self_offset((__u64)pfn, l->dev, l->ino, &r.off))
					continue;
				r.fn = gctx_api_procaddr_fn(base, versions[v], flags);
				if (r.fn == GCTX_API_NONE)
					continue;
				snprintf(r.name, sizeof(r.name), "%s", base);
				if (write(out, &r, sizeof(r)) != sizeof(r))
					_exit(1);
			}
		}
	}
	_exit(0);
}

/*
 * The CUDA runtime reaches the driver through cuGetProcAddress, which may hand out entry
 * points that are not the exported symbols. Ask the library itself, in a throwaway child
 * (cuGetProcAddress needs no cuInit and opens no device), and return what it hands out, so
 * those addresses are probed before any traced process can call them.
 */
static int preresolve(const struct lib *l, struct procaddr_rec **recs, __u32 *n)
{
	struct procaddr_rec r;
	struct pollfd pfd;
	int p[2], status;
	pid_t pid;

	*recs = NULL;
	*n = 0;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[0]);
		resolver_child(l, p[1]);
	}
	close(p[1]);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	while (poll(&pfd, 1, 5000) > 0 && read(p[0], &r, sizeof(r)) == sizeof(r)) {
		struct procaddr_rec *nr = realloc(*recs, (*n + 1) * sizeof(*nr));

		if (!nr)
			break;
		*recs = nr;
		(*recs)[(*n)++] = r;
	}
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}

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

/* Probe an address cuGetProcAddress hands out, unless it is a function already probed. */
static void probe_procaddr(struct gctx_uprobes *u, struct lib *l, enum gctx_api_fn fn,
			   const char *name, __u64 off)
{
	const struct gctx_api_sym *s = sym_for_fn(fn);
	__u8 insn[4];
	int fd;

	if (!s || (s->launch && !u->o.launches) || lib_has_probe(l, off))
		return;
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		bool skip = pread(fd, insn, sizeof(insn), off) == sizeof(insn) &&
			    !memcmp(insn, endbr64, sizeof(insn)) && lib_has_probe(l, off + 4);

		close(fd);
		if (skip)
			return; /* the exported function, already probed past its endbr64 */
	}
	probe_one(u, l, s, name, off, GCTX_PROBE_PROC_ADDRESS);
}

static struct lib *find_lib(struct gctx_uprobes *u, dev_t dev, ino_t ino)
{
	for (__u32 i = 0; i < u->nlibs; i++)
		if (u->libs[i].dev == dev && u->libs[i].ino == ino)
			return &u->libs[i];
	return NULL;
}

int gctx_uprobes__add_lib(struct gctx_uprobes *u, const char *path, char *err, size_t errlen)
{
	struct lib *libs, *l;
	struct stat st;
	int ret;

	if (stat(path, &st)) {
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		return -errno;
	}
	if (find_lib(u, st.st_dev, st.st_ino))
		return 0;
	libs = realloc(u->libs, (u->nlibs + 1) * sizeof(*libs));
	if (!libs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	u->libs = libs;
	l = &u->libs[u->nlibs++];
	memset(l, 0, sizeof(*l));
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	snprintf(l->path, sizeof(l->path), "%s", path);
	ret = probe_symbols(u, l, err, errlen);
	if (ret > 0 && l->has_getproc) {
		struct procaddr_rec *recs;
		__u32 n;

		if (!preresolve(l, &recs, &n)) {
			for (__u32 i = 0; i < n; i++)
				probe_procaddr(u, l, recs[i].fn, recs[i].name, recs[i].off);
			flush_probes(u, l);
			free(recs);
		}
	}
	if (ret == 0) {
		snprintf(err, errlen, "%s exports none of the CUDA/HIP functions gpuctx probes", path);
		ret = -ENOENT;
	}
	ret = ret < 0 ? ret : 0;
	if (u->o.on_lib)
		u->o.on_lib(u->o.on_lib_ctx, path, st.st_dev, st.st_ino, ret);
	return ret;
}

void gctx_uprobes__add_system_libs(struct gctx_uprobes *u)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu",
		"/usr/local/lib", "/opt/rocm/lib",
	};
	static const char *const names[] = { "libcuda.so.1", "libamdhip64.so", "libamdhip64.so.5",
					     "libamdhip64.so.6", "libamdhip64.so.7" };
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
		u->seen[u->nseen++] = (struct file_id){ dev, ino };
}

static bool was_seen(const struct gctx_uprobes *u, __u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < u->nseen; i++)
		if (u->seen[i].dev == dev && u->seen[i].ino == ino)
			return true;
	return false;
}

/* Walk /proc/PID/maps: fn(ctx, start, end, pgoff, path-through-root) for file mappings. */
static int walk_maps(__u32 pid, int (*fn)(void *ctx, __u64 s, __u64 e, __u64 pgoff,
					  unsigned int maj, unsigned int min, __u64 ino,
					  const char *path),
		     void *ctx)
{
	char line[4096 + 128], mpath[4096], full[4096 + 64];
	unsigned long long s, e, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	FILE *f;
	int ret = 0;

	snprintf(line, sizeof(line), "/proc/%u/maps", pid);
	f = fopen(line, "r");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perms, &pgoff,
			   &maj, &min, &ino, mpath) != 8 || mpath[0] != '/')
			continue;
		snprintf(full, sizeof(full), "/proc/%u/root%s", pid, mpath);
		ret = fn(ctx, s, e, pgoff, maj, min, ino, full);
	}
	fclose(f);
	return ret;
}

struct scan_ctx {
	struct gctx_uprobes *u;
};

static int scan_one(void *ctx, __u64 s, __u64 e, __u64 pgoff, unsigned int maj,
		    unsigned int min, __u64 ino, const char *path)
{
	struct gctx_uprobes *u = ((struct scan_ctx *)ctx)->u;
	char err[256];

	mark_seen(u, (maj << 20) | min, ino);
	if (is_gpu_lib(path))
		gctx_uprobes__add_lib(u, path, err, sizeof(err));
	return 0;
}

void gctx_uprobes__scan_pid(struct gctx_uprobes *u, __u32 pid)
{
	struct scan_ctx sc = { u };

	walk_maps(pid, scan_one, &sc);
}

struct addr_ctx {
	__u64 addr;
	char path[4096 + 64];
	__u64 off;
	bool found;
};

static int find_addr(void *ctx, __u64 s, __u64 e, __u64 pgoff, unsigned int maj,
		     unsigned int min, __u64 ino, const char *path)
{
	struct addr_ctx *a = ctx;

	if (a->addr < s || a->addr >= e)
		return 0;
	a->off = a->addr - s + pgoff;
	snprintf(a->path, sizeof(a->path), "%s", path);
	a->found = true;
	return 1;
}

/* cuGetProcAddress returned an address: make sure calls through it are seen. */
static void follow_proc_address(struct gctx_uprobes *u, const struct gctx_ev_api *ev)
{
	struct addr_ctx a = { .addr = ev->out };
	enum gctx_api_fn fn;
	struct stat st;
	struct lib *l;
	char err[256];

	fn = gctx_api_procaddr_fn(ev->str, ev->args[2], ev->args[3]);
	if (fn == GCTX_API_NONE)
		return;
	if (walk_maps(ev->hdr.tgid, find_addr, &a) <= 0 || !a.found)
		return; /* the process is gone: nothing left to probe for it */
	if (stat(a.path, &st))
		return;
	l = find_lib(u, st.st_dev, st.st_ino);
	if (!l) {
		/* a library we had not seen: probe its exports first */
		gctx_uprobes__add_lib(u, a.path, err, sizeof(err));
		l = find_lib(u, st.st_dev, st.st_ino);
	}
	if (l) {
		probe_procaddr(u, l, fn, ev->str, a.off);
		flush_probes(u, l);
	}
}

void gctx_uprobes__on_record(struct gctx_uprobes *u, __u32 type, const void *data, __u32 len)
{
	if (type == GCTX_EV_LIBMAP && len >= sizeof(struct gctx_ev_libmap)) {
		const struct gctx_ev_libmap *m = data;

		if (!was_seen(u, m->dev, m->ino))
			gctx_uprobes__scan_pid(u, m->hdr.tgid);
		mark_seen(u, m->dev, m->ino);
	} else if (type == GCTX_EV_API && len >= sizeof(struct gctx_ev_api)) {
		const struct gctx_ev_api *a = data;

		if (a->fn == GCTX_CU_GET_PROC_ADDRESS && a->ret == 0 &&
		    (a->flags & GCTX_API_OUT_OK) && (a->flags & GCTX_API_STR_OK) && a->out)
			follow_proc_address(u, a);
	}
}

__u32 gctx_uprobes__nlibs(const struct gctx_uprobes *u)
{
	return u ? u->nlibs : 0;
}

void gctx_uprobes__drops(const struct gctx_uprobes *u, __u64 *drops, __u64 *missed)
{
	*drops = u ? __atomic_load_n(&u->skel->bss->api_drops, __ATOMIC_RELAXED) : 0;
	*missed = u ? __atomic_load_n(&u->skel->bss->api_missed, __ATOMIC_RELAXED) : 0;
}

void gctx_uprobes__free(struct gctx_uprobes *u)
{
	if (!u)
		return;
	for (__u32 i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	for (__u32 i = 0; i < u->nmfds; i++)
		close(u->mfds[i]);
	free(u->mfds);
	free(u->pend);
	free(u->links);
	for (__u32 i = 0; i < u->nlibs; i++)
		free(u->libs[i].probes);
	free(u->libs);
	api_bpf__destroy(u->skel);
	free(u);
}
