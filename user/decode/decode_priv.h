/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to user/decode/: reading the captured parameters and building the description
 * (decode.c), shared by the decoder of each driver family, and those decoders' entry points,
 * which gctx_decode_ioctl() dispatches to by device kind.
 */
#ifndef __GPUCTX_DECODE_PRIV_H
#define __GPUCTX_DECODE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "decode/decode.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- reading the captured parameters (decode.c) ---- */

/* Where a field is read from. */
enum src {
	ARG,  /* an input the driver does not change: entry bytes, else exit bytes */
	RES,  /* a result: exit bytes of a call that did not fail with -errno */
	EXIT, /* exit bytes whatever the syscall returned */
};

struct ioc {
	const struct gctx_ev_ioctl *ev;
	__u32 avail; /* leading bytes of in[]/out[] that hold parameters */
};

/* The n bytes at off in the array s reads from; NULL when they were not captured. */
const __u8 *dec_field(const struct ioc *c, enum src s, __u32 off, __u32 n);
/* A little-endian field at off; false (and *v untouched) when it was not captured. */
bool dec_get_u8(const struct ioc *c, enum src s, __u32 off, __u8 *v);
bool dec_get_u16(const struct ioc *c, enum src s, __u32 off, __u16 *v);
bool dec_get_u32(const struct ioc *c, enum src s, __u32 off, __u32 *v);
bool dec_get_u64(const struct ioc *c, enum src s, __u32 off, __u64 *v);
bool dec_get_s32(const struct ioc *c, enum src s, __u32 off, int *v);
bool dec_get_string(const struct ioc *c, enum src s, __u32 off, __u32 max, char *buf, size_t bufsz);

/* The same capture, limited to the parameter size the driver sees. */
static inline struct ioc dec_sized(const struct ioc *c, __u32 size)
{
	struct ioc ic = *c;

	if (ic.avail > size)
		ic.avail = size;
	return ic;
}

/* Entry i of a sparse name table of n entries; NULL past its end or on a hole. */
static inline const char *dec_name_at(const char *const *t, size_t n, __u64 i)
{
	return i < n ? t[i] : NULL;
}

/* ---- building the description (decode.c) ---- */

struct flag_name {
	__u64 bit;
	const char *name;
};

void dec_set_name(struct gctx_ioctl_desc *d, const char *name);
void dec_raw_name(struct gctx_ioctl_desc *d, __u32 type, __u32 nr, __u32 size);
void dec_raw_cmd(struct gctx_ioctl_desc *d, __u32 cmd);
void dec_add(struct gctx_ioctl_desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool dec_add_handle(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		    const char *key, __u64 *keep);
bool dec_add_id(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		const char *key);
bool dec_add_fd(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		const char *key);
void dec_add_size(struct gctx_ioctl_desc *d, const struct ioc *c, __u32 off);
void dec_add_enum(struct gctx_ioctl_desc *d, const char *key, const char *const *t, size_t n,
		  __u32 v);
void dec_add_flags(struct gctx_ioctl_desc *d, const char *key, __u64 v, const struct flag_name *t,
		   size_t n);
void dec_effect(struct gctx_ioctl_desc *d, enum gctx_obj_op op, enum gctx_obj_kind kind);

/* ---- the decoders of each driver family ---- */

/* nvidia_rm.c: NV_STATUS, which UVM returns too */
bool dec_nv_status(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 off);
void dec_nv_status_str(__u32 status, char *buf, size_t bufsz);

void dec_rm(const struct ioc *c, struct gctx_ioctl_desc *d); /* nvidia_rm.c */
/* nvidia_rmctrl.c: what the BPF side copied of a client control's own parameters (c->avail
 * past the 32-byte NVOS54, exit bytes) */
void dec_nv_ctrl_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 cmd);
void dec_uvm(const struct ioc *c, struct gctx_ioctl_desc *d); /* nvidia_uvm.c */
void dec_kfd(const struct ioc *c, struct gctx_ioctl_desc *d); /* amd_kfd.c */
void dec_drm(const struct ioc *c, struct gctx_ioctl_desc *d); /* drm.c */

#endif /* __GPUCTX_DECODE_PRIV_H */
