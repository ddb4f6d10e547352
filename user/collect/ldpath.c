// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Predict and pre-probe (see ldpath.h). The parsing is pure (lib/ldso.c); this file reads the
 * process's files and probes what it finds. Over-approximates on purpose: a library probed and
 * never loaded costs a probe, one loaded and not probed costs a hold.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/elfsyms.h"
#include "lib/hmap.h"
#include "lib/ldso.h"
#include "lib/esc.h"
#include "collect/libfile.h"
#include "collect/ldpath.h"

#define MAX_ROOTS	64
#define MAX_DIR_ENTRIES 65536	    /* names read from one directory */
#define MAX_CACHE_BYTES (16u << 20) /* ld.so.cache larger than this is not read */
#define MAX_ENV_BYTES	(1u << 20)
#define ROOT_LEN	64
#define MAX_DONE	65536 /* objects and search paths remembered as predicted */
#define KIND_OBJECT	1
#define KIND_LLP	2

struct root_id {
	dev_t dev;
	ino_t ino;
};

struct gctx_ldpath {
	struct gctx_uprobes *u;
	bool verbose;
	struct root_id roots[MAX_ROOTS]; /* roots whose cache and default dirs were probed */
	__u32 nroots;
	/* (object dev/ino or search-path hash, root) done: an exec storm reads each once */
	struct gctx_hmap done;
};

/* Where the loader looks when nothing else names the library (x86-64 Debian/Fedora/Ubuntu). */
static const char *const default_dirs[] = {
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
};

struct gctx_ldpath *gctx_ldpath__new(struct gctx_uprobes *u, bool verbose)
{
	struct gctx_ldpath *p = calloc(1, sizeof(*p));

	if (p) {
		p->u = u;
		p->verbose = verbose;
	}
	return p;
}

void gctx_ldpath__free(struct gctx_ldpath *p)
{
	if (!p)
		return;
	gctx_hmap__free(&p->done);
	free(p);
}

/* First time this (kind, key) is seen: remember it. */
static bool first_time(struct gctx_ldpath *p, __u32 kind, __u64 k1, __u64 k2)
{
	__u32 v;

	if (gctx_hmap__get(&p->done, k1, k2 ^ ((__u64)kind << 56), &v))
		return false;
	if (p->done.n < MAX_DONE)
		gctx_hmap__put(&p->done, k1, k2 ^ ((__u64)kind << 56), 1);
	return true;
}

static __u64 hash_str(const char *s)
{
	__u64 h = 1469598103934665603ull; /* FNV-1a */

	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

void gctx_ldpath__root(__u32 pid, char *out, size_t len)
{
	static struct stat ours; /* gpuctx never changes its root: one stat per run */
	static bool have_ours;
	struct stat theirs;
	char r[ROOT_LEN];

	if (!have_ours)
		have_ours = !stat("/", &ours);
	snprintf(r, sizeof(r), "/proc/%u/root", pid);
	if (have_ours && !stat(r, &theirs) && ours.st_dev == theirs.st_dev &&
	    ours.st_ino == theirs.st_ino)
		snprintf(out, len, "%s", "");
	else
		snprintf(out, len, "%s", r);
}

struct scan_ctx {
	struct gctx_ldpath *p;
	const char *root;
	struct gctx_cred *cred; /* the process's file access; NULL: gpuctx's own (its command) */
};

/* Look at files with the process's own access while the scope lasts (nothing if none). */
static bool as_process(struct scan_ctx *s)
{
	return !s->cred || !gctx_cred__enter(s->cred);
}

static void as_gpuctx(struct scan_ctx *s)
{
	if (s->cred)
		gctx_cred__leave(s->cred);
}

static void probe_file(struct scan_ctx *s, const char *path)
{
	char err[PATH_MAX + 64], real[PATH_MAX];
	struct stat st;
	int fd;

	/* a name in someone else's directory: opened as that process could, a regular file only
	 * (a FIFO blocks, a device acts), then probed by gpuctx through the fd */
	if (!as_process(s))
		return;
	fd = gctx_file_open_checked(path, true, NULL, &st, err, sizeof(err));
	if (fd >= 0 && !realpath(path, real))
		real[0] = '\0';
	as_gpuctx(s);
	if (fd >= 0 &&
	    !gctx_uprobes__add_lib_fd(s->p->u, fd, &st, path, "/", real, err, sizeof(err)))
		return;
	if (s->p->verbose && fd != -ENOENT && fd != -EACCES)
		gctx_warn_escaped("gpuctx: predicted: ", err);
}

/* A directory the loader will search: probe the CUDA/HIP libraries in it. */
static void scan_dir(void *ctx, const char *dir)
{
	struct scan_ctx *s = ctx;
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	if (snprintf(path, sizeof(path), "%s%s", s->root, dir) >= (int)sizeof(path) ||
	    !as_process(s))
		return;
	dp = opendir(path); /* listed only if the process may list it */
	as_gpuctx(s);
	if (!dp)
		return;
	while ((d = readdir(dp)) && n++ < MAX_DIR_ENTRIES) {
		if (!gctx_ldso_is_api_name(d->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s%s/%s", s->root, dir, d->d_name) <
		    (int)sizeof(path))
			probe_file(s, path);
	}
	closedir(dp);
}

static void cache_entry(void *ctx, const char *name, const char *lib)
{
	struct scan_ctx *s = ctx;
	char path[PATH_MAX];

	if (gctx_ldso_is_api_name(name) && lib[0] == '/' &&
	    snprintf(path, sizeof(path), "%s%s", s->root, lib) < (int)sizeof(path))
		probe_file(s, path);
}

/* Read a whole small file (NUL added); NULL if absent, not regular (unless procfs) or larger
 * than max. */
static char *read_small(const char *path, bool procfs, size_t max, size_t *len)
{
	char err[PATH_MAX + 64];
	struct stat st;
	int fd = procfs ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
			: gctx_file_open_checked(path, true, NULL, &st, err, sizeof(err));
	size_t cap = 4096, n = 0;
	char *buf = NULL, *nb;
	ssize_t got;

	if (fd < 0)
		return NULL;
	for (;;) {
		nb = realloc(buf, cap + 1);
		if (!nb)
			goto fail;
		buf = nb;
		got = read(fd, buf + n, cap - n);
		if (got < 0)
			goto fail;
		if (got == 0)
			break;
		n += got;
		if (n == cap) {
			if (cap >= max)
				goto fail;
			cap *= 2;
		}
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/* ld.so.cache and the default directories, once per mount namespace root. */
static void predict_system(struct gctx_ldpath *p, const char *root, struct gctx_cred *cred)
{
	struct scan_ctx s = {p, root, cred};
	char path[PATH_MAX];
	struct stat st;
	size_t len;
	char *buf;

	if (stat(root[0] ? root : "/", &st))
		return;
	for (__u32 i = 0; i < p->nroots; i++)
		if (p->roots[i].dev == st.st_dev && p->roots[i].ino == st.st_ino)
			return;
	if (p->nroots < MAX_ROOTS)
		p->roots[p->nroots++] = (struct root_id){st.st_dev, st.st_ino};
	snprintf(path, sizeof(path), "%s/etc/ld.so.cache", root);
	buf = NULL;
	if (as_process(&s)) {
		buf = read_small(path, false, MAX_CACHE_BYTES, &len);
		as_gpuctx(&s);
	}
	if (buf) {
		gctx_ldso_cache_each(buf, len, cache_entry, &s);
		free(buf);
	}
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		scan_dir(&s, default_dirs[i]);
}

/* gctx_elf_dynsyms callback: does the object define cuInit or hipInit? */
static void api_sym(void *ctx, const char *name, __u64 file_off)
{
	if (!strcmp(name, "cuInit") || !strcmp(name, "hipInit"))
		*(bool *)ctx = true;
}

/* DT_RUNPATH and DT_RPATH of an ELF object open at ofd (obj its path in root, for $ORIGIN;
 * both tags: either may apply to what it loads). True when the object itself defines cuInit
 * or hipInit (only the first time it is seen). */
static bool predict_elf(struct gctx_ldpath *p, const char *root, const char *obj, int ofd,
			struct gctx_cred *cred)
{
	struct scan_ctx s = {p, root, cred};
	char path[PATH_MAX], origin[PATH_MAX], *slash;
	Elf_Scn *scn = NULL;
	bool api = false;
	struct stat st;
	Elf *e;
	int fd;

	if (snprintf(path, sizeof(path), "%s%s", root, obj) >= (int)sizeof(path))
		return false;
	/* $ORIGIN is the object's own directory: the same file under another path is another
	 * prediction, so remember the path's hash with the file */
	if (fstat(ofd, &st) || !S_ISREG(st.st_mode) ||
	    !first_time(p, KIND_OBJECT, ((__u64)st.st_dev << 32) ^ st.st_ino,
			hash_str(path) ^ (cred ? cred->uid : 0)))
		return false;
	snprintf(origin, sizeof(origin), "%s", obj);
	slash = strrchr(origin, '/');
	if (!slash)
		return false;
	*(slash == origin ? slash + 1 : slash) = 0;
	fd = fcntl(ofd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return false;
	/* exports through the validated reader (the file is the traced process's) */
	gctx_elf_dynsyms_fd(fd, st.st_size, api_sym, &api, NULL, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && elf_kind(e) == ELF_K_ELF && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *list;
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
				continue;
			list = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (list)
				gctx_ldso_split(list, origin, scan_dir, &s);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return api;
}

bool gctx_ldpath__predict_object(struct gctx_ldpath *p, __u32 pid, const char *path, int fd)
{
	struct gctx_cred cred;
	char root[ROOT_LEN];

	if (!p || !path || path[0] != '/' || gctx_cred__of_pid(pid, &cred))
		return false;
	gctx_ldpath__root(pid, root, sizeof(root));
	return predict_elf(p, root, path, fd, &cred);
}

static void predict_env(struct gctx_ldpath *p, const char *root, const char *llp,
			struct gctx_cred *cred)
{
	struct scan_ctx s = {p, root, cred};

	/* per user too: a directory one user may list and another may not */
	if (llp && first_time(p, KIND_LLP, hash_str(llp) ^ (cred ? cred->uid : 0), hash_str(root)))
		gctx_ldso_split(llp, NULL, scan_dir, &s);
}

void gctx_ldpath__predict_pid(struct gctx_ldpath *p, __u32 pid)
{
	char root[ROOT_LEN], path[64], exe[PATH_MAX], llp[PATH_MAX], err[128];
	struct gctx_cred cred;
	struct stat st;
	size_t len;
	ssize_t n;
	char *env;
	int fd;

	if (!p || gctx_cred__of_pid(pid, &cred))
		return;
	gctx_ldpath__root(pid, root, sizeof(root));
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	env = read_small(path, true, MAX_ENV_BYTES, &len);
	if (env && gctx_ldso_env_get(env, len, "LD_LIBRARY_PATH", llp, sizeof(llp)))
		predict_env(p, root, llp, &cred);
	free(env);
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	/* the very file it runs (the magic link), whatever its path names now */
	fd = n > 0 ? gctx_file_open_checked(path, true, NULL, &st, err, sizeof(err)) : -1;
	if (fd >= 0) {
		exe[n] = 0;
		predict_elf(p, root, exe, fd, &cred);
		close(fd);
	}
	predict_system(p, root, &cred);
}

/* cmd[0] as execvp will find it. */
static bool which(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX];

	if (strchr(cmd, '/'))
		return realpath(cmd, out) != NULL;
	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n && n < sizeof(dir)) {
			memcpy(dir, path, n);
			dir[n] = 0;
			if (snprintf(out, len, "%s/%s", dir, cmd) < (int)len && !access(out, X_OK))
				return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

void gctx_ldpath__predict_cmd(struct gctx_ldpath *p, char *const *cmd)
{
	char exe[PATH_MAX];

	char err[PATH_MAX + 64];
	struct stat st;
	int fd;

	if (!p)
		return;
	/* gpuctx's own environment and command: the user running gpuctx chose them */
	predict_env(p, "", getenv("LD_LIBRARY_PATH"), NULL);
	if (cmd && cmd[0] && which(cmd[0], exe, sizeof(exe))) {
		fd = gctx_file_open_checked(exe, true, NULL, &st, err, sizeof(err));
		if (fd >= 0) {
			predict_elf(p, "", exe, fd, NULL);
			close(fd);
		}
	}
	predict_system(p, "", NULL);
}
