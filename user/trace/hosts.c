// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Traces of several hosts: taking merged traces apart, merging, aligning clocks (hosts.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/types.h>

#include "gpuctx_events.h"
#include "lib/grow.h"
#include "lib/tsmath.h"
#include "trace/hosts.h"

#define APART_SLACK_NS 1000000000ull /* recordings this far apart still count as one job's */
#define SAME_BOOT_NS   2000000000ll  /* boots this close by the wall clock are one boot */

static void errf(char *err, size_t len, const char *fmt, const char *a, const char *b)
{
	if (err && len)
		snprintf(err, len, fmt, a, b);
}

/* A host's meta from its GCTX_REC_HOST record: what an older, shorter meta lacks is 0. */
static void host_meta(struct gctx_trace_meta *m, const void *data, __u32 len)
{
	const unsigned char *p = data;
	size_t n = len - 8 < sizeof(*m) ? len - 8 : sizeof(*m);

	memset(m, 0, sizeof(*m));
	memcpy(m, p + 8, n);
	m->hostname[sizeof(m->hostname) - 1] = '\0';
	m->kernel[sizeof(m->kernel) - 1] = '\0';
	m->version[sizeof(m->version) - 1] = '\0';
	m->cmdline[sizeof(m->cmdline) - 1] = '\0';
}

static struct gctx_host_file *host_add(struct gctx_host_file **hosts, __u32 *n, __u32 *cap,
				       const char *source, const struct gctx_trace_meta *meta)
{
	struct gctx_host_file *h;

	if (gctx_grow(hosts, cap, *n + 1, sizeof(**hosts)))
		return NULL;
	h = &(*hosts)[(*n)++];
	memset(h, 0, sizeof(*h));
	h->meta = *meta;
	h->source = source;
	h->fd = -1;
	return h;
}

/* A host read from the trace at path itself. */
static struct gctx_host_file *host_at(struct gctx_host_file **hosts, __u32 *n, __u32 *cap,
				      const char *path, const struct gctx_trace_meta *meta,
				      char *err, size_t errlen)
{
	struct gctx_host_file *h = host_add(hosts, n, cap, path, meta);

	if (!h || strlen(path) >= sizeof(h->path)) {
		errf(err, errlen, "%s: %s", path, h ? "path too long" : "out of memory");
		return NULL;
	}
	snprintf(h->path, sizeof(h->path), "%s", path);
	return h;
}

/* The hosts of a merged trace r (its first record, a GCTX_REC_HOST, already read), each
 * copied into a memory file. */
static int split(struct gctx_trace_reader *r, const char *path, const void *data, __u32 len,
		 struct gctx_host_file **hosts, __u32 *n, __u32 *cap, char *err, size_t errlen)
{
	struct gctx_trace_writer *w = NULL;
	struct gctx_host_file *h;
	__u32 type = GCTX_REC_HOST;
	int ret = 1, werr = 0;

	do {
		if (type != GCTX_REC_HOST) {
			if (w && !werr)
				werr = gctx_trace_writer__append(w, type, data, len);
			continue;
		}
		if (len < GCTX_REC_HOST_MIN_LEN)
			continue; /* malformed: its records join the previous host's */
		if (w && (werr = gctx_trace_writer__free(w)))
			break;
		w = NULL;
		h = host_add(hosts, n, cap, path, &(struct gctx_trace_meta){});
		if (!h) {
			werr = -ENOMEM;
			break;
		}
		host_meta(&h->meta, data, len);
		h->fd = memfd_create("gpuctx-host", MFD_CLOEXEC);
		if (h->fd < 0) {
			werr = -errno;
			break;
		}
		snprintf(h->path, sizeof(h->path), "/proc/self/fd/%d", h->fd);
		w = gctx_trace_writer__new_fd(dup(h->fd), &h->meta, &werr);
		if (!w)
			break;
	} while ((ret = gctx_trace_reader__next(r, &type, &data, &len)) == 1);
	if (w) {
		int e = gctx_trace_writer__free(w);

		if (!werr)
			werr = e;
	}
	if (werr) {
		errf(err, errlen, "%s: taking the hosts apart: %s", path, strerror(-werr));
		return -1;
	}
	if (ret < 0) {
		errf(err, errlen, "%s", gctx_trace_reader__error(r), "");
		return -1;
	}
	return 0;
}

/* The hostname as a label: printable ASCII only, "#2" after a name already taken. */
static void label(struct gctx_host_file *hosts, __u32 i)
{
	struct gctx_host_file *h = &hosts[i];
	char name[64];
	__u32 same = 0;
	size_t k;

	for (k = 0; h->meta.hostname[k] && k < sizeof(name) - 1; k++) {
		char c = h->meta.hostname[k];

		name[k] = c > ' ' && c < 127 ? c : '?';
	}
	name[k] = '\0';
	if (!k)
		snprintf(name, sizeof(name), "?");
	for (__u32 j = 0; j < i; j++)
		same += !strcmp(hosts[j].meta.hostname, h->meta.hostname);
	if (same)
		snprintf(h->label, sizeof(h->label), "%s#%u", name, same + 1);
	else
		snprintf(h->label, sizeof(h->label), "%s", name);
}

int gctx_hosts__open(char *const *paths, int npaths, struct gctx_host_file **hosts, __u32 *n,
		     char *err, size_t errlen)
{
	__u32 cap = 0;

	*hosts = NULL;
	*n = 0;
	for (int i = 0; i < npaths; i++) {
		struct gctx_trace_reader *r;
		struct gctx_host_file *h;
		const void *data;
		__u32 type, len;
		char rerr[512];
		int ret;

		struct stat st;

		/* a pipe is read once, by whoever reads its records: taken as one host's */
		if (stat(paths[i], &st) || !S_ISREG(st.st_mode)) {
			if (!host_at(hosts, n, &cap, paths[i], &(struct gctx_trace_meta){}, err,
				     errlen))
				goto fail;
			continue;
		}
		r = gctx_trace_reader__open(paths[i], rerr, sizeof(rerr));
		if (!r) {
			errf(err, errlen, "%s", rerr, "");
			goto fail;
		}
		ret = gctx_trace_reader__next(r, &type, &data, &len);
		if (ret == 1 && type == GCTX_REC_HOST) {
			ret = split(r, paths[i], data, len, hosts, n, &cap, err, errlen);
			gctx_trace_reader__free(r);
			if (ret)
				goto fail;
			continue;
		}
		h = host_add(hosts, n, &cap, paths[i], gctx_trace_reader__meta(r));
		gctx_trace_reader__free(r);
		if (!h || strlen(paths[i]) >= sizeof(h->path)) {
			errf(err, errlen, "%s: %s", paths[i],
			     h ? "path too long" : "out of memory");
			goto fail;
		}
		snprintf(h->path, sizeof(h->path), "%s", paths[i]);
	}
	for (__u32 i = 0; i < *n; i++)
		label(*hosts, i);
	return 0;
fail:
	gctx_hosts__free(*hosts, *n);
	*hosts = NULL;
	*n = 0;
	return -1;
}

void gctx_hosts__free(struct gctx_host_file *hosts, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		if (hosts[i].fd >= 0)
			close(hosts[i].fd);
	free(hosts);
}

long long gctx_hosts__append(struct gctx_trace_writer *w, __u32 index,
			     const struct gctx_host_file *h, char *err, size_t errlen)
{
	struct gctx_rec_host rec = {.index = index, .meta = h->meta};
	struct gctx_trace_reader *r;
	const void *data;
	__u32 type, len;
	long long n = 0;
	char rerr[512];
	int ret, werr;

	r = gctx_trace_reader__open(h->path, rerr, sizeof(rerr));
	if (!r) {
		errf(err, errlen, "%s", rerr, "");
		return -1;
	}
	werr = gctx_trace_writer__append(w, GCTX_REC_HOST, &rec, sizeof(rec));
	while (!werr && (ret = gctx_trace_reader__next(r, &type, &data, &len)) == 1) {
		if (type == GCTX_REC_HOST)
			continue; /* never nested */
		werr = gctx_trace_writer__append(w, type, data, len);
		n++;
	}
	if (!werr && ret < 0)
		errf(err, errlen, "%s: %s", h->source, gctx_trace_reader__error(r));
	else if (werr)
		errf(err, errlen, "writing the merged trace: %s%s", strerror(-werr), "");
	gctx_trace_reader__free(r);
	return werr || ret < 0 ? -1 : n;
}

/* ---- clocks ---- */

/* The wall clock at the host's boot, saturated to +-INT64_MAX (crafted clocks: tsmath.h). */
static __s64 boot_wall(const struct gctx_trace_meta *m)
{
	return gctx_ts_offset(m->start_mono_ns, m->start_wall_ns);
}

/* ts moved by off, saturated to [0, UINT64_MAX] */
static __u64 moved(__u64 ts, __s64 off)
{
	return off >= 0 ? gctx_ts_add(ts, (__u64)off) : gctx_ts_sub(ts, -(__u64)off);
}

__u32 gctx_hosts__align(const struct gctx_trace_meta *const *metas, const __u64 *end_mono, __u32 n,
			struct gctx_host_clock *out)
{
	__u32 ref = 0, i, j;

	for (i = 1; i < n; i++)
		if (boot_wall(metas[i]) < boot_wall(metas[ref]))
			ref = i;
	for (i = 0; i < n; i++) {
		const struct gctx_trace_meta *m = metas[i], *r = metas[ref];
		struct gctx_host_clock *c = &out[i];

		memset(c, 0, sizeof(*c));
		c->offset_ns = gctx_off_sub(boot_wall(m), boot_wall(r)); /* >= 0: r's is least */
		c->start_ns = moved(m->start_mono_ns, c->offset_ns);
		c->end_ns = end_mono && end_mono[i] > m->start_mono_ns
				? moved(end_mono[i], c->offset_ns)
				: c->start_ns;
		/* a clock that only saturated arithmetic could place is placed nowhere */
		if (boot_wall(m) == INT64_MAX || boot_wall(m) == -INT64_MAX ||
		    c->offset_ns == INT64_MAX || c->end_ns == UINT64_MAX)
			c->flags |= GCTX_CLK_APART;
		if (m->clock_state == GCTX_CLOCK_UNSYNC)
			c->flags |= GCTX_CLK_UNSYNC;
		else if (m->clock_state != GCTX_CLOCK_SYNCED)
			c->flags |= GCTX_CLK_NO_ESTIMATE;
		if (m->clock_state == GCTX_CLOCK_SYNCED && m->clock_maxerror_us > GCTX_CLK_LARGE_US)
			c->flags |= GCTX_CLK_LARGE_ERROR;
		if (i == ref) {
			c->error_us = 0;
			c->flags |= GCTX_CLK_REFERENCE;
		} else if (m->clock_state == GCTX_CLOCK_SYNCED &&
			   r->clock_state == GCTX_CLOCK_SYNCED)
			/* each clock within its maximum error of true time */
			c->error_us = gctx_ts_add(m->clock_maxerror_us, r->clock_maxerror_us);
		else
			c->error_us = ~0ull;
	}
	for (i = 0; i < n && n > 1; i++) {
		bool near = false;

		for (j = 0; j < n && !near; j++)
			near = j != i &&
			       out[i].start_ns <= gctx_ts_add(out[j].end_ns, APART_SLACK_NS) &&
			       out[j].start_ns <= gctx_ts_add(out[i].end_ns, APART_SLACK_NS);
		if (!near)
			out[i].flags |= GCTX_CLK_APART;
	}
	return ref;
}

/* The wall clock at the host's boot by its BOOTTIME (start_boot_ns; MONOTONIC in older
 * traces): the clock that suspend does not stop. */
static __s64 boot_wall_boottime(const struct gctx_trace_meta *m)
{
	return gctx_ts_offset(m->start_boot_ns ? m->start_boot_ns : m->start_mono_ns,
			      m->start_wall_ns);
}

bool gctx_hosts__same_boot(const struct gctx_trace_meta *a, const struct gctx_trace_meta *b)
{
	__s64 d = gctx_off_sub(boot_wall_boottime(a), boot_wall_boottime(b));

	return d <= SAME_BOOT_NS && d >= -SAME_BOOT_NS;
}

__s64 gctx_hosts__boot_shift(const struct gctx_trace_meta *m, const struct gctx_trace_meta *r,
			     __s64 offset_ns)
{
	/* each host's BOOTTIME - MONOTONIC at its start */
	__s64 own = gctx_ts_offset(m->start_mono_ns,
				   m->start_boot_ns ? m->start_boot_ns : m->start_mono_ns);
	__s64 ref = gctx_ts_offset(r->start_mono_ns,
				   r->start_boot_ns ? r->start_boot_ns : r->start_mono_ns);

	return gctx_off_add(offset_ns, gctx_off_sub(ref, own));
}
