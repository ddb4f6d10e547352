/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the unit tests of the ioctl decoder (user/decode/), one test file per driver
 * family. Every event is built as the BPF side would capture it: the parameter bytes at their
 * ABI offsets (NVIDIA: gpu-facts.md §1.3 and §1.5; KFD: the structs of <linux/kfd_ioctl.h>;
 * amdgpu: amdgpu_drm.h) and the cmd as issued.
 *
 * decode() poisons every byte the decoder must not look at (past ev->len, or a whole array
 * whose capture flag is clear) and, under valgrind, marks it undefined: any use of it fails
 * the run with --error-exitcode=1.
 */
#ifndef __GPUCTX_TEST_DECODE_H
#define __GPUCTX_TEST_DECODE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"

#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_UNDEFINED(p, n) ((void)(p), (void)(n))
#endif

#include "kfd_compat.h"

/* NVIDIA RM cmds as issued: _IOWR('F', nr, size), gpu-facts.md §1.2 */
#define NV_RM_ALLOC_NVOS64   0xC030462Bu
#define NV_RM_ALLOC_NVOS21   0xC020462Bu
#define NV_RM_FREE	     0xC0104629u
#define NV_RM_CONTROL	     0xC020462Au
#define NV_RM_ALLOC_MEMORY   0xC0384627u
#define NV_RM_MAP_MEMORY     0xC038464Eu
#define NV_CARD_INFO	     0xC04846C8u
#define NV_REGISTER_FD	     0xC00446C9u
#define NV_CHECK_VERSION_STR 0xC04846D2u
#define NV_IOCTL_XFER_CMD    0xC01046D3u

/* UVM cmds are plain numbers, gpu-facts.md §1.5 */
#define UVM_INITIALIZE		 0x30000001u
#define UVM_DEINITIALIZE	 0x30000002u
#define UVM_CREATE_RANGE_GROUP	 0x17u
#define UVM_REGISTER_GPU_VASPACE 0x19u
#define UVM_REGISTER_CHANNEL	 0x1Bu
#define UVM_REGISTER_GPU	 0x25u
#define UVM_MM_INITIALIZE	 0x4Bu

/* amdgpu render-node cmds, gpu-facts.md §2.4 */
#define DRM_IOCTL_AMDGPU_GEM_CREATE 0xC0206440u
#define DRM_IOCTL_AMDGPU_CTX	    0xC0106442u

#define FIONREAD_CMD 0x541Bu /* _IO('T', 0x1b): not a GPU ioctl */

#define CLIENT 0xc1d00001u
#define DEVICE 0x5c000002u

#define assert_contains(hay, needle)                                                               \
	do {                                                                                       \
		if (!strstr((hay), (needle)))                                                      \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));               \
	} while (0)

#define assert_not_contains(hay, needle)                                                           \
	do {                                                                                       \
		if (strstr((hay), (needle)))                                                       \
			fail_msg("\"%s\" contains \"%s\"", (hay), (needle));                       \
	} while (0)

static inline void put32(__u8 *buf, unsigned int off, __u32 v)
{
	__u8 b[4] = {v, v >> 8, v >> 16, v >> 24};

	memcpy(buf + off, b, sizeof(b));
}

static inline void put64(__u8 *buf, unsigned int off, __u64 v)
{
	put32(buf, off, (__u32)v);
	put32(buf, off + 4, (__u32)(v >> 32));
}

/* An input the driver leaves unchanged: the same bytes at entry and at exit. */
static inline void arg32(struct gctx_ev_ioctl *ev, unsigned int off, __u32 v)
{
	put32(ev->in, off, v);
	put32(ev->out, off, v);
}

static inline void arg64(struct gctx_ev_ioctl *ev, unsigned int off, __u64 v)
{
	put64(ev->in, off, v);
	put64(ev->out, off, v);
}

/* A whole argument struct: entry bytes, then what the driver wrote back. */
static inline void args(struct gctx_ev_ioctl *ev, const void *in, const void *out, size_t n)
{
	memcpy(ev->in, in, n);
	memcpy(ev->out, out, n);
}

static inline int setup(void **state)
{
	*state = malloc(sizeof(struct gctx_ev_ioctl)); /* exact size: overruns hit valgrind */
	return *state ? 0 : -1;
}

static inline int teardown(void **state)
{
	free(*state);
	return 0;
}

/* A successful ioctl with both captures, len = the parameter size the cmd encodes. */
static inline struct gctx_ev_ioctl *ev_new(void **state, __u32 kind, __u32 cmd)
{
	struct gctx_ev_ioctl *ev = *state;

	memset(ev, 0, sizeof(*ev));
	ev->hdr.type = GCTX_EV_IOCTL;
	ev->hdr.tgid = ev->hdr.tid = 4242;
	ev->fd = 5;
	ev->kind = kind;
	ev->cmd = cmd;
	ev->flags = GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK;
	ev->size = _IOC_SIZE(cmd);
	ev->len = ev->size < GCTX_IOCTL_BYTES ? ev->size : GCTX_IOCTL_BYTES;
	return ev;
}

static inline void poison(__u8 *p, size_t n)
{
	memset(p, 0xa5, n);
	VALGRIND_MAKE_MEM_UNDEFINED(p, n);
}

/* The model's decoding (no text) finds the same facts as the full one, for every call the
 * decoder tests decode. */
static inline void check_facts(const struct gctx_ev_ioctl *ev, const struct gctx_ioctl_desc *d)
{
	struct gctx_ioctl_desc f;

	memset(&f, 0x5a, sizeof(f));
	gctx_decode_ioctl_facts(ev, &f);
	assert_true(f.no_text);
	assert_string_equal(f.name, "");
	assert_string_equal(f.status_name, "");
	assert_string_equal(f.detail, "");
	assert_int_equal(f.known, d->known);
	assert_int_equal(f.has_status, d->has_status);
	assert_int_equal(f.status, d->status);
	assert_int_equal(f.err, d->err);
	assert_int_equal(f.failed, d->failed);
	assert_int_equal(f.op, d->op);
	assert_int_equal(f.obj_kind, d->obj_kind);
	assert_int_equal(f.obj_class, d->obj_class);
	assert_int_equal(f.handle, d->handle);
	assert_int_equal(f.parent, d->parent);
	assert_int_equal(f.client, d->client);
	assert_int_equal(f.size, d->size);
}

static inline void decode(struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d)
{
	size_t len = ev->len < GCTX_IOCTL_BYTES ? ev->len : GCTX_IOCTL_BYTES;

	if (!(ev->flags & GCTX_IOCTL_IN_OK))
		poison(ev->in, GCTX_IOCTL_BYTES);
	else
		poison(ev->in + len, GCTX_IOCTL_BYTES - len);
	if (!(ev->flags & GCTX_IOCTL_OUT_OK))
		poison(ev->out, GCTX_IOCTL_BYTES);
	else
		poison(ev->out + len, GCTX_IOCTL_BYTES - len);
	memset(d, 0x5a, sizeof(*d)); /* the decoder must set every field */
	gctx_decode_ioctl(ev, d);
	assert_false(d->no_text);
	check_facts(ev, d);
}

/* What every call that did not fail at the syscall and had no object effect looks like. */
static inline void assert_plain(const struct gctx_ioctl_desc *d)
{
	assert_int_equal(d->err, 0);
	assert_false(d->failed);
	assert_int_equal(d->op, GCTX_OP_NONE);
	assert_int_equal(d->obj_kind, GCTX_OBJ_NONE);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

#endif /* __GPUCTX_TEST_DECODE_H */
