// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shortened ring-buffer records back to full structs (see ring.h). */
#include <string.h>

#include "trace/ring.h"

/* Packed: [fixed][in: len bytes][out: the rest]. out[] absent with GCTX_IOCTL_OUT_OK set means
 * the driver does not write the parameters back (out[] is in[]). */
static const void *expand_ioctl(const void *data, __u32 len, struct gctx_ev_ioctl *ev,
				__u32 *out_len)
{
	const __u8 *p = data;
	__u32 in_len, out_bytes;

	if (len < GCTX_RING_IOCTL_FIXED)
		return data;
	memset(ev, 0, sizeof(*ev));
	memcpy(ev, p, GCTX_RING_IOCTL_FIXED);
	in_len = ev->len;
	if (in_len > GCTX_IOCTL_BYTES || len - GCTX_RING_IOCTL_FIXED < in_len)
		return data;
	out_bytes = len - GCTX_RING_IOCTL_FIXED - in_len;
	if (out_bytes > GCTX_IOCTL_BYTES)
		return data;
	memcpy(ev->in, p + GCTX_RING_IOCTL_FIXED, in_len);
	memcpy(ev->out, p + GCTX_RING_IOCTL_FIXED + in_len, out_bytes);
	if (out_bytes == 0 && (ev->flags & GCTX_IOCTL_OUT_OK))
		memcpy(ev->out, ev->in, in_len);
	else if (out_bytes && (!in_len || out_bytes < in_len))
		ev->len = out_bytes; /* len: bytes valid in both */
	*out_len = sizeof(*ev);
	return ev;
}

const void *gctx_ring__expand(__u32 type, const void *data, __u32 len, union gctx_record *buf,
			      __u32 *out_len)
{
	*out_len = len;
	if (type == GCTX_EV_IOCTL && len < sizeof(struct gctx_ev_ioctl))
		return expand_ioctl(data, len, &buf->ioctl, out_len);
	return data;
}
