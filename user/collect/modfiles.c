// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Mapped files kept as mapped (interface in modfiles.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/libfile.h"
#include "collect/modfiles.h"
#include "gpuctx_events.h"
#include "lib/elfpeek.h"
#include "lib/grow.h"
#include "lib/procmaps.h"
#include "lib/str.h"

#define MAX_MAPS 4096 /* a hostile process cannot make us hold more */
#define MAX_KEPT 1024 /* files kept open (torch maps 300), the least recently used closed first */

static struct {
	__u64 dev, ino, used;
	int fd; /* 0: free slot (fds are kept > 0) */
	__u8 build_id_len;
	__u8 build_id[GCTX_BUILD_ID_MAX];
} kept[MAX_KEPT];
static __u64 kept_clock;
/* kept[] is shared by the thread that reads mappings and the one that unwinds (stacks.c) */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void gctx_modfiles_clear(void)
{
	pthread_mutex_lock(&kept_lock);
	for (int i = 0; i < MAX_KEPT; i++)
		if (kept[i].fd > 0)
			close(kept[i].fd);
	memset(kept, 0, sizeof(kept));
	pthread_mutex_unlock(&kept_lock);
}

static int kept_find(const struct gctx_map *mp)
{
	for (int i = 0; i < MAX_KEPT; i++)
		if (kept[i].fd > 0 && kept[i].dev == mp->dev && kept[i].ino == mp->ino) {
			kept[i].used = ++kept_clock;
			return i;
		}
	return -1;
}

/* The GNU build-id note of an ELF file (from its program headers, read, never mapped: the
 * file is the traced user's, who may truncate it), 0 if none. */
static int read_build_id(int fd, __u8 *out)
{
	struct gctx_elf_src src;

	return gctx_elfpeek_fd_src(fd, &src) ? gctx_elfpeek_build_id(&src, out, GCTX_BUILD_ID_MAX)
					     : 0;
}

/* Open path only if it is a regular file and the one mapped (its device and inode; inode 0,
 * unknown, matches nothing): never a FIFO or device, never another file put at the path. */
static int open_same(const char *path, const struct gctx_map *mp)
{
	struct stat want = {.st_dev = mp->dev, .st_ino = mp->ino}, st;
	char err[128];

	return gctx_file_open_checked(path, true, &want, &st, err, sizeof(err));
}

static int open_map_file(__u32 pid, const struct gctx_map *mp)
{
	char fn[96];

	snprintf(fn, sizeof(fn), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)mp->start,
		 (unsigned long long)mp->end);
	return open_same(fn, mp);
}

/* Keep the file of a live process's mapping (once per file) and note its build-id. */
static void keep(__u32 pid, struct gctx_map *mp)
{
	int i = kept_find(mp), slot = 0, fd;

	if (i < 0 && mp->ino) {
		fd = open_map_file(pid, mp);
		if (fd < 0)
			return;
		for (int j = 0; j < MAX_KEPT; j++) {
			if (kept[j].fd <= 0) {
				slot = j;
				break;
			}
			if (kept[j].used < kept[slot].used)
				slot = j;
		}
		if (kept[slot].fd > 0)
			close(kept[slot].fd);
		kept[slot].dev = mp->dev;
		kept[slot].ino = mp->ino;
		kept[slot].used = ++kept_clock;
		kept[slot].fd = fd;
		kept[slot].build_id_len = read_build_id(fd, kept[slot].build_id);
		i = slot;
	}
	if (i >= 0) {
		mp->build_id_len = kept[i].build_id_len;
		memcpy(mp->build_id, kept[i].build_id, sizeof(mp->build_id));
	}
}

void gctx_maps__clear(struct gctx_maps *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static int add_line(void *ctx, const struct gctx_procmap *pm)
{
	struct gctx_maps *m = ctx;
	struct gctx_map *mp;

	if (m->n >= MAX_MAPS)
		return 1;
	if (pm->perms[2] != 'x' || pm->path[0] != '/')
		return 0;
	if (gctx_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v)))
		return -ENOMEM;
	mp = &m->v[m->n++];
	memset(mp, 0, sizeof(*mp));
	mp->start = pm->start;
	mp->end = pm->end;
	mp->pgoff = pm->pgoff;
	mp->dev = makedev(pm->major, pm->minor);
	mp->ino = pm->ino;
	gctx_copy_str(mp->perms, sizeof(mp->perms), pm->perms, 4);
	gctx_copy_str(mp->path, sizeof(mp->path), pm->path, pm->path_len);
	return 0;
}

int gctx_maps__read(struct gctx_maps *m, __u32 pid)
{
	char fn[64], c;
	int fd, ret;

	snprintf(fn, sizeof(fn), "/proc/%u/maps", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	m->n = 0;
	m->pid = pid;
	/* whole lines only: a path long enough to overflow a line buffer forges nothing */
	ret = gctx_procmaps_read_fd(fd, add_line, m, NULL);
	if (ret < 0) {
		close(fd);
		m->n = 0;
		return ret;
	}
	/* Each read() of the file takes the address space anew, and one after the process let
	 * go of it (exit, exec) ends the list early: empty again from the start, the process has
	 * gone and what was read may be cut. Its callers fall back to the mappings the kernel
	 * sends at exit. */
	if (lseek(fd, 0, SEEK_SET) || read(fd, &c, 1) != 1) {
		close(fd);
		m->n = 0;
		return -ESRCH;
	}
	close(fd);
	gctx_maps__keep(m);
	return 0;
}

/* A path sent innermost component first, each NUL-terminated, as /a/b/c (".../b/c" when cut).
 * False when the components do not fill the bytes given. */
static bool vma_path(char *out, size_t cap, const char *p, __u32 len, bool cut)
{
	const char *comp[GCTX_VMA_STEPS];
	__u32 lens[GCTX_VMA_STEPS], n = 0, o = 0;
	size_t w = 0;

	while (o < len) {
		const char *end = memchr(p + o, 0, len - o);

		if (!end || end == p + o || n >= GCTX_VMA_STEPS)
			return false;
		comp[n] = p + o;
		lens[n++] = end - (p + o);
		o = end - p + 1;
	}
	out[0] = 0;
	if (cut)
		w = snprintf(out, cap, "...");
	else if (!n)
		w = snprintf(out, cap, "/");
	while (n-- > 0 && w < cap)
		w += snprintf(out + w, cap - w, "/%.*s", (int)lens[n], comp[n]);
	return true;
}

int gctx_maps__add_vmas(struct gctx_maps *m, __u32 pid, const void *rec, __u32 len)
{
	const struct gctx_ev_vmas *r = rec;
	const __u8 *data = (const __u8 *)rec + GCTX_EV_VMAS_HDR_LEN;
	__u32 nr, dlen, o = 0, old = m->n;

	if (len < GCTX_EV_VMAS_HDR_LEN)
		return -EINVAL;
	memcpy(&nr, &r->n, sizeof(nr));
	memcpy(&dlen, &r->len, sizeof(dlen));
	if (dlen > GCTX_VMAS_BYTES || dlen > len - GCTX_EV_VMAS_HDR_LEN)
		return -EINVAL;
	m->pid = pid;
	for (__u32 i = 0; i < nr && m->n < MAX_MAPS; i++) {
		struct gctx_vma v;
		struct gctx_map *mp;

		if (dlen - o < sizeof(v))
			goto bad;
		memcpy(&v, data + o, sizeof(v));
		o += sizeof(v);
		if (v.path_len > GCTX_VMA_PATH_MAX || v.path_len > dlen - o || v.end <= v.start)
			goto bad;
		if (gctx_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v)))
			return -ENOMEM;
		mp = &m->v[m->n];
		memset(mp, 0, sizeof(*mp));
		if (!vma_path(mp->path, sizeof(mp->path), (const char *)data + o, v.path_len,
			      v.flags & GCTX_VMA_PATH_CUT))
			goto bad;
		mp->start = v.start;
		mp->end = v.end;
		mp->pgoff = v.pgoff;
		mp->dev = makedev(v.dev >> 20, v.dev & 0xfffff); /* kernel dev_t to st_dev */
		mp->ino = v.ino;
		snprintf(mp->perms, sizeof(mp->perms), "%c%cx%c",
			 v.flags & GCTX_VMA_READ ? 'r' : '-', v.flags & GCTX_VMA_WRITE ? 'w' : '-',
			 v.flags & GCTX_VMA_SHARED ? 's' : 'p');
		o += (v.path_len + 7) & ~7u;
		if (o > dlen)
			o = dlen;
		m->n++;
	}
	return 0;
bad:
	m->n = old;
	return -EINVAL;
}

void gctx_maps__keep(struct gctx_maps *m)
{
	pthread_mutex_lock(&kept_lock);
	for (__u32 i = 0; i < m->n; i++)
		keep(m->pid, &m->v[i]);
	pthread_mutex_unlock(&kept_lock);
}

/* The separate debug file of a build-id (symbols and lines; its code and CFI are not there),
 * in root's /usr/lib/debug. */
static int open_debug_file(const struct gctx_map *mp)
{
	char fn[128], err[128];
	struct stat st;
	size_t o;

	if (!mp->build_id_len)
		return -1;
	o = snprintf(fn, sizeof(fn), "/usr/lib/debug/.build-id/%02x/", mp->build_id[0]);
	for (int i = 1; i < mp->build_id_len; i++)
		o += snprintf(fn + o, sizeof(fn) - o, "%02x", mp->build_id[i]);
	snprintf(fn + o, sizeof(fn) - o, ".debug");
	return gctx_file_open_checked(fn, true, NULL, &st, err, sizeof(err));
}

int gctx_map_open(const struct gctx_maps *maps, const struct gctx_map *mp)
{
	char fn[600];
	int i, fd = -1, err = -ENOENT;

	pthread_mutex_lock(&kept_lock);
	i = kept_find(mp);
	if (i >= 0)
		fd = fcntl(kept[i].fd, F_DUPFD_CLOEXEC, 3);
	pthread_mutex_unlock(&kept_lock);
	if (i >= 0)
		return fd;
	fd = open_map_file(maps->pid, mp);
	if (fd >= 0)
		return fd;
	/* By path, once the process is gone: only the very file mapped (device and inode), which
	 * the process could read; a file put there since, a copy or a symlink to another file,
	 * is never opened as root. */
	snprintf(fn, sizeof(fn), "/proc/%u/root%s", maps->pid, mp->path);
	for (int k = 0; k < 2 && mp->path[0] == '/' && mp->ino; k++) {
		fd = open_same(k ? mp->path : fn, mp);
		if (fd >= 0)
			return fd;
		if (fd == -ESTALE)
			err = -ESTALE;
	}
	fd = open_debug_file(mp);
	return fd >= 0 ? fd : err;
}

/* Load bias of an ET_DYN file mapped at mp: start minus the vaddr its page offset holds. */
bool gctx_map_bias(int fd, const struct gctx_map *mp, __u64 *bias, bool *is_exec)
{
	struct gctx_elf_src src;

	return gctx_elfpeek_fd_src(fd, &src) &&
	       gctx_elfpeek_bias(&src, mp->pgoff, mp->start, bias, is_exec);
}
