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

int gctx_ringread__consume(struct gctx_ringread *r)
{
	unsigned long cons = *r->cons_pos, prod, published = cons;
	int n = 0, ret = 0;

	prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);
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
