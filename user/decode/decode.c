// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Decoding of GPU driver ioctls (see decode.h): the entry point, which hands each record to
 * the decoder of its driver family (nvidia_rm.c, nvidia_uvm.c, amd_kfd.c, drm.c), the reading
 * of the captured parameters and the building of the description those decoders share, and the
 * name helpers. ABI facts come from shared/reference/gpu-facts.md: §1.2-1.5 for NVIDIA RM and
 * UVM, §2.1 for KFD, §2.4 for amdgpu.
 *
 * Every parameter field is read at its ABI offset, little-endian, and only when it lies inside
 * the captured bytes (ev->len, capped at the array and at the parameter size the driver sees).
 * A short or truncated capture decodes what fits and nothing else. An object effect (op) is
 * reported only when the call's verdict and the object's handle were both read.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "lib/errcode.h"
#include "decode/decode.h"
#include "decode/decode_priv.h"

/* ---- reading the captured parameters ---- */

const __u8 *dec_field(const struct ioc *c, enum src s, __u32 off, __u32 n)
{
	const struct gctx_ev_ioctl *ev = c->ev;

	if (off > c->avail || n > c->avail - off)
		return NULL;
	if (s == ARG && (ev->flags & GCTX_IOCTL_IN_OK))
		return ev->in + off;
	if (s == RES && ev->ret < 0)
		return NULL;
	if (ev->flags & GCTX_IOCTL_OUT_OK)
		return ev->out + off;
	return NULL;
}

/* The n-byte little-endian unsigned field at off (n <= 8). */
static bool get_le(const struct ioc *c, enum src s, __u32 off, __u32 n, __u64 *v)
{
	const __u8 *p = dec_field(c, s, off, n);
	__u64 x = 0;

	if (!p)
		return false;
	while (n--)
		x = x << 8 | p[n];
	*v = x;
	return true;
}

/* dec_get_u8(), dec_get_u16(), dec_get_u32(), dec_get_u64(): get_le() at the type's width. */
#define DEFINE_GET(bits)                                                                           \
	bool dec_get_u##bits(const struct ioc *c, enum src s, __u32 off, __u##bits *v)             \
	{                                                                                          \
		__u64 x;                                                                           \
                                                                                                   \
		if (!get_le(c, s, off, sizeof(*v), &x))                                            \
			return false;                                                              \
		*v = (__u##bits)x;                                                                 \
		return true;                                                                       \
	}

DEFINE_GET(8)
DEFINE_GET(16)
DEFINE_GET(32)
DEFINE_GET(64)

bool dec_get_s32(const struct ioc *c, enum src s, __u32 off, int *v)
{
	__u32 x;

	if (!dec_get_u32(c, s, off, &x))
		return false;
	*v = (int)x;
	return true;
}

/*
 * Read a fixed-size char array up to its NUL into buf (non-printables and '"' become '?').
 * False when not even its first byte was captured.
 */
bool dec_get_string(const struct ioc *c, enum src s, __u32 off, __u32 max, char *buf, size_t bufsz)
{
	__u32 i;
	__u8 ch;

	if (!dec_get_u8(c, s, off, &ch))
		return false;
	for (i = 0; i < max && i + 1 < bufsz; i++) {
		if (!dec_get_u8(c, s, off + i, &ch) || !ch)
			break;
		buf[i] = (ch < 0x20 || ch >= 0x7f || ch == '"') ? '?' : (char)ch;
	}
	buf[i] = '\0';
	return true;
}

/* ---- building the description ---- */

void dec_set_name(struct gctx_ioctl_desc *d, const char *name)
{
	if (!d->no_text)
		snprintf(d->name, sizeof(d->name), "%s", name);
	d->known = true;
}

void dec_raw_name(struct gctx_ioctl_desc *d, __u32 type, __u32 nr, __u32 size)
{
	if (!d->no_text)
		snprintf(d->name, sizeof(d->name), "ioctl(type=0x%02x nr=0x%02x size=%u)", type, nr,
			 size);
	d->known = false;
}

/* The raw name of a cmd as issued. */
void dec_raw_cmd(struct gctx_ioctl_desc *d, __u32 cmd)
{
	dec_raw_name(d, _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd));
}

/* Append one space-separated item to d->detail; silently truncated when full. */
void dec_add(struct gctx_ioctl_desc *d, const char *fmt, ...)
{
	size_t used = strlen(d->detail);
	va_list ap;

	if (d->no_text || used + 1 >= sizeof(d->detail))
		return;
	if (used)
		d->detail[used++] = ' ';
	va_start(ap, fmt);
	vsnprintf(d->detail + used, sizeof(d->detail) - used, fmt, ap);
	va_end(ap);
}

/* Append "key=0x%08x" for a u32 handle that was captured; optionally keep it in *keep. */
bool dec_add_handle(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		    const char *key, __u64 *keep)
{
	__u32 v;

	if (!dec_get_u32(c, s, off, &v))
		return false;
	dec_add(d, "%s=0x%08x", key, v);
	if (keep)
		*keep = v;
	return true;
}

/*
 * Append "key=%u" for a u32 id (queue, context, GEM handle) that was captured; keep it in
 * d->handle.
 */
bool dec_add_id(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		const char *key)
{
	__u32 v;

	if (!dec_get_u32(c, s, off, &v))
		return false;
	dec_add(d, "%s=%u", key, v);
	d->handle = v;
	return true;
}

bool dec_add_fd(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		const char *key)
{
	int v;

	if (!dec_get_s32(c, s, off, &v))
		return false;
	dec_add(d, "%s=%d", key, v);
	return true;
}

/* The u64 byte size of an allocation, an input at off: "size=%llu", kept in d->size. */
void dec_add_size(struct gctx_ioctl_desc *d, const struct ioc *c, __u32 off)
{
	__u64 v;

	if (!dec_get_u64(c, ARG, off, &v))
		return;
	d->size = v;
	dec_add(d, "size=%llu", (unsigned long long)v);
}

/* Append "key=NAME" for a value that the name table t (n entries) names, else "key=%u". */
void dec_add_enum(struct gctx_ioctl_desc *d, const char *key, const char *const *t, size_t n,
		  __u32 v)
{
	const char *name = dec_name_at(t, n, v);

	if (name)
		dec_add(d, "%s=%s", key, name);
	else
		dec_add(d, "%s=%u", key, v);
}

/* Append "key=0x..(A|B|0x..)": known bits by name, the rest as hex. */
void dec_add_flags(struct gctx_ioctl_desc *d, const char *key, __u64 v, const struct flag_name *t,
		   size_t n)
{
	const char *sep;
	char buf[160];
	size_t used = 0;
	__u64 rest = v;
	size_t i;

	if (d->no_text)
		return;
	buf[0] = '\0';
	for (i = 0; i < n && used < sizeof(buf); i++) {
		if (!(v & t[i].bit))
			continue;
		sep = used ? "|" : "";
		used += snprintf(buf + used, sizeof(buf) - used, "%s%s", sep, t[i].name);
		rest &= ~t[i].bit;
	}
	if (rest && used < sizeof(buf))
		snprintf(buf + used, sizeof(buf) - used, "%s0x%llx", used ? "|" : "",
			 (unsigned long long)rest);
	if (v)
		dec_add(d, "%s=0x%llx(%s)", key, (unsigned long long)v, buf);
	else
		dec_add(d, "%s=0x0", key);
}

/* The object effect of the call (cleared again by the entry point when the call failed). */
void dec_effect(struct gctx_ioctl_desc *d, enum gctx_obj_op op, enum gctx_obj_kind kind)
{
	d->op = op;
	d->obj_kind = kind;
}

/* ---- entry point ---- */

/* A known NV_WARN_* status reports success with a remark, not a failure. */
static bool nv_status_is_warning(__u32 status)
{
	const char *n = gctx_nv_status_name(status);

	return n && !strncmp(n, "NV_WARN_", 8);
}

static void decode(const struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d, bool text)
{
	struct ioc c = {.ev = ev, .avail = ev->len};

	memset(d, 0, sizeof(*d));
	d->no_text = !text;
	if (c.avail > GCTX_IOCTL_BYTES)
		c.avail = GCTX_IOCTL_BYTES;
	if (ev->ret < 0)
		d->err = gctx_ret_errno(ev->ret);

	switch (ev->kind) {
	case GCTX_DEV_NVIDIACTL:
	case GCTX_DEV_NVIDIA:
		dec_rm(&c, d);
		break;
	case GCTX_DEV_NVIDIA_UVM:
	case GCTX_DEV_NVIDIA_UVM_TOOLS:
		dec_uvm(&c, d);
		break;
	case GCTX_DEV_KFD:
		dec_kfd(&c, d);
		break;
	case GCTX_DEV_DRM_RENDER:
		dec_drm(&c, d);
		break;
	default:
		dec_raw_cmd(d, ev->cmd);
		break;
	}

	if (d->has_status && text)
		dec_nv_status_str(d->status, d->status_name, sizeof(d->status_name));
	d->failed =
	    d->err != 0 || (d->has_status && d->status != 0 && !nv_status_is_warning(d->status));
	if (d->failed)
		dec_effect(d, GCTX_OP_NONE, GCTX_OBJ_NONE);
}

void gctx_decode_ioctl(const struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d)
{
	decode(ev, d, true);
}

void gctx_decode_ioctl_facts(const struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d)
{
	decode(ev, d, false);
}

/* ---- name helpers ---- */

/* clang-format off */
static const char *const dev_kind_names[GCTX_DEV_MAX] = {
	[GCTX_DEV_NVIDIACTL] = "nvidiactl",
	[GCTX_DEV_NVIDIA] = "nvidia",
	[GCTX_DEV_NVIDIA_UVM] = "nvidia-uvm",
	[GCTX_DEV_NVIDIA_UVM_TOOLS] = "nvidia-uvm-tools",
	[GCTX_DEV_KFD] = "kfd",
	[GCTX_DEV_DRM_RENDER] = "drm-render",
};
/* clang-format on */

const char *gctx_dev_kind_name(__u32 kind)
{
	const char *name = dec_name_at(dev_kind_names, ARRAY_SIZE(dev_kind_names), kind);

	return name ? name : "?";
}

int gctx_dev_kind_parse(const char *name)
{
	int k;

	if (!name)
		return -1;
	for (k = 0; k < GCTX_DEV_MAX; k++)
		if (dev_kind_names[k] && !strcmp(name, dev_kind_names[k]))
			return k;
	return -1;
}

/* clang-format off */
static const char *const obj_kind_names[GCTX_OBJ_MAX] = {
	[GCTX_OBJ_NONE] = "none",
	[GCTX_OBJ_RM_CLIENT] = "rm-client",
	[GCTX_OBJ_RM_DEVICE] = "rm-device",
	[GCTX_OBJ_RM_SUBDEVICE] = "rm-subdevice",
	[GCTX_OBJ_RM_VASPACE] = "rm-vaspace",
	[GCTX_OBJ_RM_CHANNEL_GROUP] = "rm-channel-group",
	[GCTX_OBJ_RM_CTXSHARE] = "rm-ctxshare",
	[GCTX_OBJ_RM_CHANNEL] = "rm-channel",
	[GCTX_OBJ_RM_COMPUTE] = "rm-compute",
	[GCTX_OBJ_RM_MEMORY] = "rm-memory",
	[GCTX_OBJ_RM_OTHER] = "rm-object",
	[GCTX_OBJ_UVM_SPACE] = "uvm-space",
	[GCTX_OBJ_KFD_PROCESS] = "kfd-process",
	[GCTX_OBJ_KFD_QUEUE] = "kfd-queue",
	[GCTX_OBJ_KFD_MEMORY] = "kfd-memory",
	[GCTX_OBJ_DRM_CTX] = "drm-ctx",
	[GCTX_OBJ_DRM_GEM] = "drm-gem",
};
/* clang-format on */

const char *gctx_obj_kind_name(enum gctx_obj_kind k)
{
	const char *name = dec_name_at(obj_kind_names, ARRAY_SIZE(obj_kind_names), (unsigned int)k);

	return name ? name : "?";
}

/* clang-format off */
static const char *const errno_names[] = {
	[EPERM] = "EPERM",
	[ENOENT] = "ENOENT",
	[ESRCH] = "ESRCH",
	[EINTR] = "EINTR",
	[EIO] = "EIO",
	[ENXIO] = "ENXIO",
	[E2BIG] = "E2BIG",
	[ENOEXEC] = "ENOEXEC",
	[EBADF] = "EBADF",
	[ECHILD] = "ECHILD",
	[EAGAIN] = "EAGAIN",
	[ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES",
	[EFAULT] = "EFAULT",
	[ENOTBLK] = "ENOTBLK",
	[EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST",
	[EXDEV] = "EXDEV",
	[ENODEV] = "ENODEV",
	[ENOTDIR] = "ENOTDIR",
	[EISDIR] = "EISDIR",
	[EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE",
	[EMFILE] = "EMFILE",
	[ENOTTY] = "ENOTTY",
	[ETXTBSY] = "ETXTBSY",
	[EFBIG] = "EFBIG",
	[ENOSPC] = "ENOSPC",
	[ESPIPE] = "ESPIPE",
	[EROFS] = "EROFS",
	[EMLINK] = "EMLINK",
	[EPIPE] = "EPIPE",
	[EDOM] = "EDOM",
	[ERANGE] = "ERANGE",
	[EDEADLK] = "EDEADLK",
	[ENAMETOOLONG] = "ENAMETOOLONG",
	[ENOLCK] = "ENOLCK",
	[ENOSYS] = "ENOSYS",
	[ENOTEMPTY] = "ENOTEMPTY",
	[ELOOP] = "ELOOP",
	[ENOMSG] = "ENOMSG",
	[EIDRM] = "EIDRM",
	[ENODATA] = "ENODATA",
	[ETIME] = "ETIME",
	[ENOLINK] = "ENOLINK",
	[EPROTO] = "EPROTO",
	[EBADMSG] = "EBADMSG",
	[EOVERFLOW] = "EOVERFLOW",
	[EBADFD] = "EBADFD",
	[EILSEQ] = "EILSEQ",
	[ERESTART] = "ERESTART",
	[EUSERS] = "EUSERS",
	[ENOTSOCK] = "ENOTSOCK",
	[EMSGSIZE] = "EMSGSIZE",
	[EOPNOTSUPP] = "EOPNOTSUPP",
	[EADDRINUSE] = "EADDRINUSE",
	[ENETDOWN] = "ENETDOWN",
	[ECONNRESET] = "ECONNRESET",
	[ENOBUFS] = "ENOBUFS",
	[ENOTCONN] = "ENOTCONN",
	[ETIMEDOUT] = "ETIMEDOUT",
	[ECONNREFUSED] = "ECONNREFUSED",
	[EALREADY] = "EALREADY",
	[EINPROGRESS] = "EINPROGRESS",
	[ESTALE] = "ESTALE",
	[EREMOTEIO] = "EREMOTEIO",
	[EDQUOT] = "EDQUOT",
	[ENOMEDIUM] = "ENOMEDIUM",
	[ECANCELED] = "ECANCELED",
	[ENOKEY] = "ENOKEY",
	[EKEYEXPIRED] = "EKEYEXPIRED",
	[EKEYREVOKED] = "EKEYREVOKED",
	[EKEYREJECTED] = "EKEYREJECTED",
	[EOWNERDEAD] = "EOWNERDEAD",
	[ENOTRECOVERABLE] = "ENOTRECOVERABLE",
	[ERFKILL] = "ERFKILL",
	[EHWPOISON] = "EHWPOISON",
};
/* clang-format on */

const char *gctx_errno_name(int err)
{
	const char *name = err > 0 ? dec_name_at(errno_names, ARRAY_SIZE(errno_names), err) : NULL;

	if (name)
		return name;
	/* Kernel-internal codes (include/linux/errno.h) that drivers sometimes leak. */
	if (err == 512)
		return "ERESTARTSYS";
	if (err == 515)
		return "ENOIOCTLCMD";
	if (err == 524)
		return "ENOTSUPP";
	return NULL;
}

/* clang-format off */
static const char *const signal_names[] = {
	[SIGHUP] = "SIGHUP",
	[SIGINT] = "SIGINT",
	[SIGQUIT] = "SIGQUIT",
	[SIGILL] = "SIGILL",
	[SIGTRAP] = "SIGTRAP",
	[SIGABRT] = "SIGABRT",
	[SIGBUS] = "SIGBUS",
	[SIGFPE] = "SIGFPE",
	[SIGKILL] = "SIGKILL",
	[SIGUSR1] = "SIGUSR1",
	[SIGSEGV] = "SIGSEGV",
	[SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE",
	[SIGALRM] = "SIGALRM",
	[SIGTERM] = "SIGTERM",
	[SIGSTKFLT] = "SIGSTKFLT",
	[SIGCHLD] = "SIGCHLD",
	[SIGCONT] = "SIGCONT",
	[SIGSTOP] = "SIGSTOP",
	[SIGTSTP] = "SIGTSTP",
	[SIGTTIN] = "SIGTTIN",
	[SIGTTOU] = "SIGTTOU",
	[SIGURG] = "SIGURG",
	[SIGXCPU] = "SIGXCPU",
	[SIGXFSZ] = "SIGXFSZ",
	[SIGVTALRM] = "SIGVTALRM",
	[SIGPROF] = "SIGPROF",
	[SIGWINCH] = "SIGWINCH",
	[SIGIO] = "SIGIO",
	[SIGPWR] = "SIGPWR",
	[SIGSYS] = "SIGSYS",
};
/* clang-format on */

const char *gctx_signal_name(int sig)
{
	return sig > 0 ? dec_name_at(signal_names, ARRAY_SIZE(signal_names), sig) : NULL;
}
