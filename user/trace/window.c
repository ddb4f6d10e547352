// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder's window: one circular byte buffer of entries (header, record bytes,
 * padding to 8). The buffer is mapped once at its full size, so a busy node costs the agent a
 * fixed amount of memory however long it runs; what leaves by age (a quiet node's history)
 * goes back to the system a MiB at a time, so a quiet node costs what its history holds, not
 * the whole buffer once the ring has gone round. Every IDX_EVERY-th entry is also in a
 * small index (its offset and time), so a reader after one job's records starts near them
 * instead of walking millions of the node's older ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "trace/window.h"
#include "gpuctx_events.h"
#include "gpuctx_stack.h"

struct win_entry {
	__u64 ts_ns;
	__u32 type;
	__u32 len;
};

#define WIN_MIN_BYTES (64u << 10)
#define WIN_HDR	      sizeof(struct win_entry)
#define IDX_EVERY     1024	 /* entries between two index points */
#define WIN_RELEASE   (1u << 20) /* bytes left by age before they go back to the system */

struct win_mark {
	__u64 seq; /* the entry's number (pushes before it) */
	__u64 off;
	__u64 ts_ns;
};

struct gctx_window {
	__u8 *buf;
	__u64 cap;  /* bytes of buf */
	__u64 head; /* offset of the oldest entry */
	__u64 used; /* bytes from head, wrapping */
	__u64 max_age_ns;
	__u64 records, evicted;
	__u64 seq_head; /* the oldest entry's number (entries kept before it) */
	__u64 aged;	/* bytes just behind head that left by age, still resident */
	__u64 page;
	/* index points, oldest first, a ring of idx_cap: sized for a window of the smallest
	 * entries, it never fills; a point leaves with its entry */
	struct win_mark *idx;
	__u32 idx_cap, idx_first, idx_n;
};

static __u64 entry_size(__u32 len)
{
	return WIN_HDR + (((__u64)len + 7) & ~7ull);
}

struct gctx_window *gctx_window__new(__u64 max_bytes, __u64 max_age_ns)
{
	struct gctx_window *w;

	if (max_bytes < WIN_MIN_BYTES)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cap = max_bytes & ~7ull;
	/* its own mapping: pages given back (madvise) are never malloc's */
	w->buf = mmap(NULL, w->cap, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	w->idx_cap = w->cap / (WIN_HDR * IDX_EVERY) + 2;
	w->idx = malloc(sizeof(*w->idx) * w->idx_cap);
	if (w->buf == MAP_FAILED || !w->idx) {
		if (w->buf != MAP_FAILED)
			munmap(w->buf, w->cap);
		free(w->idx);
		free(w);
		return NULL;
	}
	w->page = sysconf(_SC_PAGESIZE);
	w->max_age_ns = max_age_ns;
	return w;
}

void gctx_window__free(struct gctx_window *w)
{
	if (!w)
		return;
	munmap(w->buf, w->cap);
	free(w->idx);
	free(w);
}

/* Copy n bytes to/from offset off of the ring, wrapping. */
static void ring_put(struct gctx_window *w, __u64 off, const void *src, __u64 n)
{
	__u64 first = n < w->cap - off ? n : w->cap - off;

	memcpy(w->buf + off, src, first);
	memcpy(w->buf, (const __u8 *)src + first, n - first);
}

static void ring_get(const struct gctx_window *w, __u64 off, void *dst, __u64 n)
{
	__u64 first = n < w->cap - off ? n : w->cap - off;

	memcpy(dst, w->buf + off, first);
	memcpy((__u8 *)dst + first, w->buf, n - first);
}

static __u64 evict_one(struct gctx_window *w)
{
	struct win_entry e;
	__u64 sz;

	ring_get(w, w->head, &e, sizeof(e));
	sz = entry_size(e.len);
	w->head = (w->head + sz) % w->cap;
	w->used -= sz;
	w->records--;
	w->evicted++;
	w->seq_head++;
	/* an index point leaves with its entry */
	if (w->idx_n && w->idx[w->idx_first].seq < w->seq_head) {
		w->idx_first = (w->idx_first + 1) % w->idx_cap;
		w->idx_n--;
	}
	return sz;
}

/* Give back the whole pages of [off, end) (within the buffer). */
static void release_range(struct gctx_window *w, __u64 off, __u64 end)
{
	__u64 a = (off + w->page - 1) & ~(w->page - 1), b = end & ~(w->page - 1);

	if (b > a)
		madvise(w->buf + a, b - a, MADV_DONTNEED);
}

/* The bytes that left by age, just behind head, as far as the free space goes back (the
 * tail may have written over their start since): their pages become zero-fill again. */
static void release_aged(struct gctx_window *w)
{
	__u64 len = w->aged < w->cap - w->used ? w->aged : w->cap - w->used;
	__u64 start = (w->head + w->cap - len) % w->cap;

	if (start + len <= w->cap) {
		release_range(w, start, start + len);
	} else {
		release_range(w, start, w->cap);
		release_range(w, 0, start + len - w->cap);
	}
	w->aged = 0;
}

void gctx_window__expire(struct gctx_window *w, __u64 now_ns)
{
	struct win_entry e;

	if (!w->max_age_ns)
		return;
	while (w->records) {
		ring_get(w, w->head, &e, sizeof(e));
		if (e.ts_ns + w->max_age_ns >= now_ns)
			break;
		w->aged += evict_one(w);
	}
	if (w->aged >= WIN_RELEASE)
		release_aged(w);
}

int gctx_window__push(struct gctx_window *w, __u64 now_ns, __u32 type, const void *data, __u32 len)
{
	struct win_entry e = {.ts_ns = now_ns, .type = type, .len = len};
	__u64 sz = entry_size(len), tail;
	static const __u8 zero[8];

	if (sz > w->cap) {
		w->evicted++;
		return -E2BIG;
	}
	gctx_window__expire(w, now_ns);
	while (w->used + sz > w->cap) {
		evict_one(w);
		w->aged = 0; /* full: the tail writes there next, keep it resident */
	}
	tail = (w->head + w->used) % w->cap;
	if (!((w->seq_head + w->records) % IDX_EVERY) && w->idx_n < w->idx_cap) {
		struct win_mark *k = &w->idx[(w->idx_first + w->idx_n++) % w->idx_cap];

		k->seq = w->seq_head + w->records;
		k->off = tail;
		k->ts_ns = now_ns;
	}
	ring_put(w, tail, &e, sizeof(e));
	ring_put(w, (tail + WIN_HDR) % w->cap, data, len);
	ring_put(w, (tail + WIN_HDR + len) % w->cap, zero, sz - WIN_HDR - len);
	w->used += sz;
	w->records++;
	return 0;
}

/* The entry to start from for entries taken at from_ns or later: the latest index point
 * before from_ns (times only grow), else the oldest entry. */
static void seek(const struct gctx_window *w, __u64 from_ns, __u64 *off, __u64 *left)
{
	__u32 lo = 0, hi = w->idx_n; /* the first point at or after from_ns is in [lo, hi] */

	*off = w->head;
	*left = w->records;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (w->idx[(w->idx_first + mid) % w->idx_cap].ts_ns < from_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct win_mark *k = &w->idx[(w->idx_first + lo - 1) % w->idx_cap];

		*off = k->off;
		*left = w->seq_head + w->records - k->seq;
	}
}

int gctx_window__foreach_from(const struct gctx_window *w, __u64 from_ns, gctx_window_cb cb,
			      void *ctx)
{
	__u64 off, left;
	void *copy = NULL;
	__u32 copy_cap = 0;
	int ret = 0;

	seek(w, from_ns, &off, &left);
	while (left--) {
		struct win_entry e;
		const void *data;

		ring_get(w, off, &e, sizeof(e));
		off = (off + WIN_HDR) % w->cap;
		if (e.ts_ns < from_ns) {
			off = (off + entry_size(e.len) - WIN_HDR) % w->cap;
			continue;
		}
		if (off + e.len <= w->cap) {
			data = w->buf + off;
		} else {
			/* a record cut by the end of the ring: read it whole */
			if (e.len > copy_cap) {
				void *p = realloc(copy, e.len);

				if (!p) {
					ret = -ENOMEM;
					break;
				}
				copy = p;
				copy_cap = e.len;
			}
			ring_get(w, off, copy, e.len);
			data = copy;
		}
		ret = cb(ctx, e.ts_ns, e.type, data, e.len);
		if (ret)
			break;
		off = (off + entry_size(e.len) - WIN_HDR) % w->cap;
	}
	free(copy);
	return ret;
}

int gctx_window__foreach(const struct gctx_window *w, gctx_window_cb cb, void *ctx)
{
	return gctx_window__foreach_from(w, 0, cb, ctx);
}

__u64 gctx_window__bytes(const struct gctx_window *w)
{
	return w->used;
}

__u64 gctx_window__records(const struct gctx_window *w)
{
	return w->records;
}

__u64 gctx_window__evicted(const struct gctx_window *w)
{
	return w->evicted;
}

__u64 gctx_window__oldest_ns(const struct gctx_window *w)
{
	struct win_entry e;

	if (!w->records)
		return 0;
	ring_get(w, w->head, &e, sizeof(e));
	return e.ts_ns;
}

static __u32 first_u32(const void *data, __u32 len, __u32 pids[2])
{
	if (len < sizeof(__u32))
		return 0;
	memcpy(&pids[0], data, sizeof(__u32));
	return 1;
}

__u32 gctx_record_pids(__u32 type, const void *data, __u32 len, __u32 pids[2])
{
	struct gctx_ev_hdr h;

	switch (type) {
	case GCTX_EV_FORK: {
		struct gctx_ev_fork f;

		if (len < sizeof(f))
			return 0;
		memcpy(&f, data, sizeof(f));
		pids[0] = f.hdr.tgid;
		pids[1] = f.child_tgid;
		return 2;
	}
	case GCTX_REC_PROC_PRESENT:
	case GCTX_REC_FILE_PRESENT:
	case GCTX_REC_THREAD_PRESENT:
	case GCTX_REC_API_PRESENT:
	case GCTX_REC_API_GAP:
	case GCTX_REC_HOLD:
	case GCTX_REC_STACK:
	case GCTX_REC_CALLER:
	case GCTX_REC_CGROUP:
		/* each of these starts with the pid it concerns */
		return first_u32(data, len, pids);
	default:
		break;
	}
	if (type >= GCTX_REC_PROC_PRESENT || len < sizeof(h))
		return 0; /* the collector's other records concern no process */
	memcpy(&h, data, sizeof(h));
	pids[0] = h.tgid;
	return 1;
}
