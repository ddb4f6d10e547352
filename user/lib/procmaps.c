// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Whole-line /proc/PID/maps reader (interface in procmaps.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/procmaps.h"

/* Hex digits up to stop (at most 16 of them). */
static bool hex_field(const char **p, const char *end, char stop, __u64 *out, int maxd)
{
	const char *s = *p;
	__u64 v = 0;
	int n = 0;

	while (s < end && *s != stop) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			return false;
		if (++n > maxd)
			return false;
		v = v << 4 | (__u64)d;
		s++;
	}
	if (!n || s >= end)
		return false;
	*out = v;
	*p = s + 1;
	return true;
}

bool gctx_procmap_parse(const char *line, size_t len, struct gctx_procmap *m)
{
	const char *p = line, *end = line + len;
	__u64 maj, min, ino = 0;
	int nd = 0;

	memset(m, 0, sizeof(*m));
	if (!hex_field(&p, end, '-', &m->start, 16) || !hex_field(&p, end, ' ', &m->end, 16) ||
	    m->end < m->start || end - p < 5 || p[4] != ' ')
		return false;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return false;
	memcpy(m->perms, p, 4);
	p += 5;
	if (!hex_field(&p, end, ' ', &m->pgoff, 16) || !hex_field(&p, end, ':', &maj, 8) ||
	    !hex_field(&p, end, ' ', &min, 8) || maj > 0xfff || min > 0xfffff)
		return false;
	while (p < end && *p >= '0' && *p <= '9') {
		if (++nd > 20 || ino > (~0ull - 9) / 10)
			return false;
		ino = ino * 10 + (__u64)(*p++ - '0');
	}
	if (!nd || (p < end && *p != ' '))
		return false;
	while (p < end && *p == ' ')
		p++;
	m->major = (__u32)maj;
	m->minor = (__u32)min;
	m->ino = ino;
	m->path = p;
	m->path_len = (size_t)(end - p);
	/* a file mapping names a path; an anonymous one has inode 0 and no path, or [name] */
	return m->path_len < GCTX_PROCMAPS_LINE_MAX && strlen(p) == m->path_len;
}

void gctx_procmaps_rd__init(struct gctx_procmaps_rd *r)
{
	r->n = 0;
	r->skipping = false;
	r->dropped = 0;
}

int gctx_procmaps_rd__feed(struct gctx_procmaps_rd *r, const char *data, size_t len,
			   gctx_procmap_fn fn, void *ctx)
{
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t take = nl ? (size_t)(nl - data) : len;
		struct gctx_procmap m;
		int ret;

		if (!r->skipping && take > GCTX_PROCMAPS_LINE_MAX - r->n) {
			r->skipping = true; /* too long: never cut into lines of its own */
			r->dropped++;
		}
		if (!r->skipping) {
			memcpy(r->buf + r->n, data, take);
			r->n += take;
		}
		data += take;
		len -= take;
		if (!nl)
			break;
		data++;
		len--;
		if (r->skipping) {
			r->skipping = false;
			r->n = 0;
			continue;
		}
		r->buf[r->n] = '\0';
		ret = 0;
		if (gctx_procmap_parse(r->buf, r->n, &m))
			ret = fn(ctx, &m);
		else
			r->dropped++;
		r->n = 0;
		if (ret)
			return ret;
	}
	return 0;
}

void gctx_procmaps_rd__end(struct gctx_procmaps_rd *r)
{
	if (r->n || r->skipping)
		r->dropped++;
	r->n = 0;
	r->skipping = false;
}

int gctx_procmaps_read_fd(int fd, gctx_procmap_fn fn, void *ctx, __u64 *dropped)
{
	struct gctx_procmaps_rd *r = malloc(sizeof(*r));
	char chunk[8192];
	int ret = 0;

	if (!r)
		return -ENOMEM;
	gctx_procmaps_rd__init(r);
	while (!ret) {
		ssize_t got = read(fd, chunk, sizeof(chunk));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			break;
		}
		if (!got)
			break;
		ret = gctx_procmaps_rd__feed(r, chunk, (size_t)got, fn, ctx);
	}
	gctx_procmaps_rd__end(r);
	if (dropped)
		*dropped = r->dropped;
	free(r);
	return ret;
}
