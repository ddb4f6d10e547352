// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Our own reader of the events ring buffer. libbpf's publishes the consumer position after
 * every record: each store pulls that cache line to the collector's CPU, and the next
 * bpf_ringbuf_reserve() on the traced process's CPU (which reads it to check free space)
 * takes a cache miss for it. This one publishes it every PUBLISH_BYTES and at the end of a
 * batch, and reads the producer position only when it has caught up with the last one.
 * Layout (kernel/bpf/ringbuf.c): page 0 consumer position (read-write), page 1 producer
 * position, then the data pages mapped twice, so a record that wraps reads contiguously.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "gpuctx_events.h"
#include "collect/ringread.h"

/* Free space the kernel sees lags the reader by at most this much, or an eighth of the ring. */
#define PUBLISH_BYTES (256 << 10)

struct gctx_ringread {
	gctx_ringread_fn fn;
	void *ctx;
	int epfd;
	size_t page;
	__u64 mask;
	__u64 publish;		 /* bytes read between two stores of the position */
	unsigned long *cons_pos; /* page 0, ours to write */
	void *ro;		 /* producer page + data twice */
	const unsigned long *prod_pos;
	const __u8 *data;
	gctx_ringread_fn early; /* sees each record once ahead of its turn, or NULL */
	void *early_ctx;
	unsigned long scan; /* where the look ahead stopped */
};

struct gctx_ringread *gctx_ringread__new(int map_fd, gctx_ringread_fn fn, void *ctx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct epoll_event ev = {.events = EPOLLIN};
	struct gctx_ringread *r;
	int err;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return NULL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->page = sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	r->publish = info.max_entries / 8 < PUBLISH_BYTES ? info.max_entries / 8 : PUBLISH_BYTES;
	r->epfd = -1;
	r->cons_pos = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (r->cons_pos == MAP_FAILED) {
		r->cons_pos = NULL;
		goto err;
	}
	r->ro = mmap(NULL, r->page + 2 * (size_t)info.max_entries, PROT_READ, MAP_SHARED, map_fd,
		     r->page);
	if (r->ro == MAP_FAILED) {
		r->ro = NULL;
		goto err;
	}
	r->prod_pos = r->ro;
	r->data = (const __u8 *)r->ro + r->page;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0 || epoll_ctl(r->epfd, EPOLL_CTL_ADD, map_fd, &ev))
		goto err;
	return r;
err:
	err = errno;
	gctx_ringread__free(r);
	errno = err;
	return NULL;
}

void gctx_ringread__set_early(struct gctx_ringread *r, gctx_ringread_fn fn, void *ctx)
{
	r->early = fn;
	r->early_ctx = ctx;
}

/* Hand every submitted record past cons, up to the first one still reserved, to the early
 * callback, each once: a record that must not wait (a process held until the collector acts)
 * is acted on before the slow work of the records in front of it. */
static void look_ahead(struct gctx_ringread *r, unsigned long cons)
{
	unsigned long pos = r->scan > cons ? r->scan : cons,
		      prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);

	while (pos < prod) {
		const __u32 *hdr = (const __u32 *)(r->data + (pos & r->mask));
		__u32 len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		if (!(len & BPF_RINGBUF_DISCARD_BIT))
			r->early(r->early_ctx, (void *)(hdr + 2), len);
		pos += ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
	}
	r->scan = pos;
}

/* Records whose handling may take milliseconds (a stack, a process's end, a library): the
 * look ahead runs again after each. */
static bool slow_record(const void *data, __u32 len)
{
	__u32 type = len >= sizeof(type) ? *(const __u32 *)data : 0;

	return type == GCTX_EV_STACK || type == GCTX_EV_VMAS || type == GCTX_EV_EXIT ||
	       type == GCTX_EV_EXEC || type == GCTX_EV_LIBMAP || type == GCTX_EV_APIMAP;
}

int gctx_ringread__consume(struct gctx_ringread *r)
{
	unsigned long cons = *r->cons_pos, prod, published = cons;
	int n = 0, ret = 0;

	prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);
	if (r->early)
		look_ahead(r, cons);
	for (;;) {
		const __u32 *hdr;
		__u32 len;

		if (cons >= prod) {
			/* caught up: look once more, the producer may have gone on meanwhile */
			prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);
			if (cons >= prod)
				break;
		}
		hdr = (const __u32 *)(r->data + (cons & r->mask));
		len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet submitted: the next batch reads it */
		cons += ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			n++;
			ret = r->fn(r->ctx, (void *)(hdr + 2), len & ~BPF_RINGBUF_DISCARD_BIT);
			if (r->early && slow_record(hdr + 2, len & ~BPF_RINGBUF_DISCARD_BIT))
				look_ahead(r, cons);
		}
		if (ret < 0 || cons - published >= r->publish) {
			__atomic_store_n(r->cons_pos, cons, __ATOMIC_RELEASE);
			published = cons;
		}
		if (ret < 0)
			return ret;
	}
	if (cons != published)
		__atomic_store_n(r->cons_pos, cons, __ATOMIC_RELEASE);
	return n;
}

int gctx_ringread__poll(struct gctx_ringread *r, int timeout_ms)
{
	struct epoll_event ev;

	if (epoll_wait(r->epfd, &ev, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return gctx_ringread__consume(r);
}

void gctx_ringread__free(struct gctx_ringread *r)
{
	if (!r)
		return;
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->ro)
		munmap(r->ro, r->page + 2 * (r->mask + 1));
	if (r->cons_pos)
		munmap(r->cons_pos, r->page);
	free(r);
}
