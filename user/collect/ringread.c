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
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "gpuctx_events.h"
#include "collect/ringread.h"

/* Free space the kernel sees lags the reader by at most this much, or an eighth of the ring. */
#define PUBLISH_BYTES (256 << 10)
#define EARLY_MAX     512 /* bytes of a record the look ahead copies: the ones it wants are small */
#define EARLY_WAIT_MS 50  /* the look ahead's own poll, should a wakeup be missed */

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
	int map_fd;
	/* The look ahead (gctx_ringread__set_early): a thread of its own, so that a record that
	 * must not wait is acted on while the main loop is busy with a slow one (a stack, a
	 * library to probe, an agent's dump). ahead_mu orders it with the main loop: whoever
	 * moves scan past a wanted record owns it. */
	gctx_ringread_want_fn want;
	gctx_ringread_fn early;
	void *early_ctx;
	pthread_mutex_t ahead_mu;
	unsigned long scan; /* wanted records before this are the look ahead's or claimed */
	pthread_t ahead;
	bool ahead_on;
	int ahead_ep; /* its epoll: the ring (edge-triggered) and stop_fd */
	int stop_fd;  /* eventfd: ends the thread */
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
	r->map_fd = map_fd;
	r->stop_fd = -1;
	r->ahead_ep = -1;
	pthread_mutex_init(&r->ahead_mu, NULL);
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

/* Hand every wanted record past the scan position, up to the first one still reserved, to the
 * early callback, each once (under ahead_mu). Records behind the reader's published position
 * may be overwritten by now: a wanted one is copied, then kept only if the producer has not
 * come round to it since (and a header read meanwhile is not trusted either). */
static void look_ahead(struct gctx_ringread *r)
{
	unsigned long pos, prod, cons = __atomic_load_n(r->cons_pos, __ATOMIC_ACQUIRE);
	__u8 copy[EARLY_MAX];

	pos = r->scan > cons ? r->scan : cons;
	prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);
	while (pos < prod) {
		const __u32 *hdr = (const __u32 *)(r->data + (pos & r->mask));
		__u32 len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), n;
		bool copied = false;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		n = len & ~BPF_RINGBUF_DISCARD_BIT;
		/* only what is wanted is copied: asked of the record in place */
		if (!(len & BPF_RINGBUF_DISCARD_BIT) && n <= sizeof(copy) && r->want(hdr + 2, n)) {
			memcpy(copy, hdr + 2, n);
			copied = true;
		}
		/* the producer came round to it while we read: the main loop reads from here */
		if (n > r->mask ||
		    __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE) - pos > r->mask + 1)
			break;
		if (copied && r->want(copy, n))
			r->early(r->early_ctx, copy, n);
		pos += (n + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
	}
	r->scan = pos;
}

static void look_ahead_locked(struct gctx_ringread *r)
{
	pthread_mutex_lock(&r->ahead_mu);
	look_ahead(r);
	pthread_mutex_unlock(&r->ahead_mu);
}

static void *ahead_thread(void *arg)
{
	struct gctx_ringread *r = arg;

	for (;;) {
		struct epoll_event got[2];
		int n = epoll_wait(r->ahead_ep, got, 2, EARLY_WAIT_MS);

		for (int i = 0; i < n; i++)
			if (got[i].data.u32 == 1)
				return NULL;
		look_ahead_locked(r);
	}
}

static void ahead_close(struct gctx_ringread *r)
{
	if (r->ahead_ep >= 0)
		close(r->ahead_ep);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	r->ahead_ep = r->stop_fd = -1;
}

int gctx_ringread__set_early(struct gctx_ringread *r, gctx_ringread_want_fn want,
			     gctx_ringread_fn fn, void *ctx)
{
	/* edge-triggered: the ring stays readable while the main loop lags behind, and a level
	 * would spin; every wanted record is submitted with a wakeup */
	struct epoll_event ring = {.events = EPOLLIN | EPOLLET, .data.u32 = 0},
			   stop = {.events = EPOLLIN, .data.u32 = 1};
	int err;

	if (r->ahead_on)
		return -EBUSY;
	r->want = want;
	r->early = fn;
	r->early_ctx = ctx;
	r->scan = *r->cons_pos;
	/* without a thread, the main loop looks ahead between slow records alone */
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	r->ahead_ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->stop_fd < 0 || r->ahead_ep < 0 ||
	    epoll_ctl(r->ahead_ep, EPOLL_CTL_ADD, r->map_fd, &ring) ||
	    epoll_ctl(r->ahead_ep, EPOLL_CTL_ADD, r->stop_fd, &stop)) {
		err = -errno;
		ahead_close(r);
		return err;
	}
	err = pthread_create(&r->ahead, NULL, ahead_thread, r);
	if (err) {
		ahead_close(r);
		return -err;
	}
	r->ahead_on = true;
	return 0;
}

void gctx_ringread__stop_early(struct gctx_ringread *r)
{
	__u64 one = 1;

	if (!r)
		return;
	if (r->ahead_on) {
		/* an eventfd's count cannot overflow from one write: the thread sees it */
		(void)!write(r->stop_fd, &one, sizeof(one));
		pthread_join(r->ahead, NULL);
		r->ahead_on = false;
	}
	ahead_close(r);
	r->early = NULL;
}

/* A wanted record at pos, ending at next, in the main loop's turn: the look ahead's if it
 * got there first (it acted under the lock, before letting go), else the main loop's. */
static void claim(struct gctx_ringread *r, unsigned long pos, unsigned long next)
{
	pthread_mutex_lock(&r->ahead_mu);
	if (r->scan <= pos)
		r->scan = next;
	pthread_mutex_unlock(&r->ahead_mu);
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
	if (r->early && !r->ahead_on)
		look_ahead_locked(r);
	for (;;) {
		unsigned long at;
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
		at = cons;
		cons += ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			void *data = (void *)(hdr + 2);
			__u32 size = len & ~BPF_RINGBUF_DISCARD_BIT;

			n++;
			if (r->early && r->want(data, size))
				claim(r, at, cons);
			ret = r->fn(r->ctx, data, size);
			if (r->early && !r->ahead_on && slow_record(data, size))
				look_ahead_locked(r);
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
	gctx_ringread__stop_early(r);
	pthread_mutex_destroy(&r->ahead_mu);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->ro)
		munmap(r->ro, r->page + 2 * (r->mask + 1));
	if (r->cons_pos)
		munmap(r->cons_pos, r->page);
	free(r);
}
