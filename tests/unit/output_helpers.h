/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the output tests that check what is printed (output/test_report.c,
 * output/test_print.c): nvidiactl records as the kernel reports them, and capturing what a
 * writer prints into memory. Header-only, as builders.h: include it after builders.h.
 */
#ifndef __GPUCTX_TEST_OUTPUT_HELPERS_H
#define __GPUCTX_TEST_OUTPUT_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "gpuctx_events.h"
#include "builders.h"

#define CTL_FILE    0xffff888000a01000ULL
#define NV_CLIENT   0xc1d00001u
#define NV_DEVICE   0xcaf00001u
#define O_RDWR_K    02u
#define O_CLOEXEC_K 02000000u

/* ---- record builders ---- */

/* An open of /dev/nvidiactl, with the device number and inode the kernel reports. */
static inline struct gctx_ev_open ev_open(__u32 pid, __u64 ts, const char *comm, __u64 file, int fd,
					  __u32 flags)
{
	struct gctx_ev_open e = ev_open_dev(pid, ts, comm, file, fd, flags, GCTX_DEV_NVIDIACTL);

	e.rdev = NVIDIACTL_RDEV;
	e.ino = 42;
	return e;
}

/* RM_ALLOC with the 48-byte NVOS64 layout, captured at entry and exit. */
static inline struct gctx_ev_ioctl ev_rm_alloc(__u32 pid, __u64 ts, const char *comm, int fd,
					       __u32 root, __u32 parent, __u32 handle, __u32 cls,
					       __u32 status, __s64 ret)
{
	struct gctx_ev_ioctl e;

	ioctl_ev(&e, pid, pid, ts, comm, CTL_FILE, fd, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC, 48);
	e.ret = ret;
	e.arg = 0x7ffc00001000ULL;
	e.dur_ns = 1500;
	rm_alloc_params(&e, root, parent, handle, cls, status);
	return e;
}

/* ---- capture ---- */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static inline void capture_begin(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

static inline char *capture_end(struct capture *c)
{
	assert_int_equal(fclose(c->f), 0);
	return c->buf;
}

static inline void assert_contains(const char *hay, const char *needle)
{
	assert_non_null(hay);
	if (!strstr(hay, needle)) {
		print_error("missing \"%s\" in:\n%s\n", needle, hay);
		fail();
	}
}

#endif /* __GPUCTX_TEST_OUTPUT_HELPERS_H */
