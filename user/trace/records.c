// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Record sizes and kernel event names (interface in records.h). */
#include <stddef.h>
#include <string.h>

#include "trace/records.h"
#include "trace/ring.h"

/* Kernel event names, indexed by enum gctx_ev_type (the drop counters' and vmas). */
/* clang-format off */
static const char *const gctx_ev_names[GCTX_EV_VMAS + 1] = {
	[GCTX_EV_FORK] = "fork",   [GCTX_EV_EXEC] = "exec", [GCTX_EV_EXIT] = "exit",
	[GCTX_EV_OPEN] = "open",   [GCTX_EV_IOCTL] = "ioctl", [GCTX_EV_MMAP] = "mmap",
	[GCTX_EV_CLOSE] = "close", [GCTX_EV_FD_KEPT] = "fd_kept", [GCTX_EV_API] = "api",
	[GCTX_EV_LIBMAP] = "libmap", [GCTX_EV_VMAS] = "vmas",
};
/* clang-format on */

__u32 gctx_record_min_len(__u32 type)
{
	switch (type) {
	case GCTX_EV_FORK:
		return sizeof(struct gctx_ev_fork);
	case GCTX_EV_EXEC: /* older traces: without cgroup_id (read as 0) */
		return GCTX_EV_EXEC_V3_LEN;
	case GCTX_EV_EXIT:
		return sizeof(struct gctx_ev_exit);
	case GCTX_EV_OPEN:
		return sizeof(struct gctx_ev_open);
	case GCTX_EV_IOCTL: /* packed as the kernel sent it; expanded by gctx_record_copy */
		return GCTX_RING_IOCTL_FIXED;
	case GCTX_EV_MMAP:
		return sizeof(struct gctx_ev_mmap);
	case GCTX_EV_CLOSE: /* older records: no count of the fds left (read as 0, not counted) */
	case GCTX_EV_FD_KEPT:
	case GCTX_EV_FD_FORK:
		return GCTX_EV_FD_V3_LEN;
	case GCTX_EV_API:
		return GCTX_EV_API_V2_LEN;
	case GCTX_EV_LIBMAP:
		return sizeof(struct gctx_ev_libmap);
	case GCTX_REC_PROC_PRESENT:
		return sizeof(struct gctx_rec_proc);
	case GCTX_REC_FILE_PRESENT:
		return sizeof(struct gctx_rec_file);
	case GCTX_REC_DEVICE:
		return sizeof(struct gctx_rec_device);
	case GCTX_REC_DROPS:
		return GCTX_REC_DROPS_V1_LEN;
	case GCTX_REC_END:
		return sizeof(struct gctx_rec_end);
	case GCTX_REC_PROBE:
		return sizeof(struct gctx_rec_probe);
	case GCTX_REC_THREAD_PRESENT:
		return sizeof(struct gctx_rec_thread);
	case GCTX_REC_API_PRESENT:
		return sizeof(struct gctx_rec_api_present);
	case GCTX_REC_WRITE_LOSS:
		return sizeof(struct gctx_rec_write_loss);
	case GCTX_EV_APIMAP:
		return sizeof(struct gctx_ev_apimap);
	case GCTX_EV_PYEXC:
		return sizeof(struct gctx_ev_pyexc);
	case GCTX_EV_VMAS: /* the mappings of a stack: the collector's, kept in the trace */
		return GCTX_EV_VMAS_HDR_LEN;
	case GCTX_REC_API_GAP:
		return sizeof(struct gctx_rec_api_gap);
	case GCTX_REC_HOLD: /* older traces: without flags (read as 0) */
		return GCTX_REC_HOLD_V3_LEN;
	case GCTX_REC_CALLER:
		return sizeof(struct gctx_rec_caller);
	case GCTX_REC_CALLER_DROPS:
		return sizeof(struct gctx_rec_caller_drops);
	case GCTX_REC_CGROUP:
		return sizeof(struct gctx_rec_cgroup);
	default:
		return 0;
	}
}

__u32 gctx_record_copy(union gctx_record *r, __u32 type, const void *data, __u32 len)
{
	__u32 need = gctx_record_min_len(type), size = need, n;

	if (type == GCTX_EV_API)
		size = sizeof(struct gctx_ev_api);
	else if (type == GCTX_EV_EXEC)
		size = sizeof(struct gctx_ev_exec);
	else if (type == GCTX_EV_CLOSE || type == GCTX_EV_FD_KEPT || type == GCTX_EV_FD_FORK)
		size = sizeof(struct gctx_ev_fd);
	else if (type == GCTX_EV_IOCTL)
		size = sizeof(struct gctx_ev_ioctl);
	else if (type == GCTX_REC_DROPS)
		size = sizeof(struct gctx_rec_drops);
	else if (type == GCTX_REC_HOLD)
		size = sizeof(struct gctx_rec_hold);
	if (!need || len < need || !data)
		return 0;
	if (type == GCTX_EV_IOCTL && len < size) /* packed as the kernel sent it */
		return gctx_ring__expand(type, data, len, r, &n) == r ? n : 0;
	if (len < size)
		memset((char *)r + len, 0, size - len);
	memcpy(r, data, len < size ? len : size);
	/* an exec of an older trace: its program sent every kept GPU fd, but no count */
	if (type == GCTX_EV_EXEC && len <= GCTX_EV_EXEC_NOSCAN_LEN)
		r->exec.fd_scan = GCTX_EXEC_FDS_SCANNED | GCTX_EXEC_FDS_UNCOUNTED;
	return size;
}

const char *gctx_ev_type_name(__u32 type)
{
	return type < GCTX_EV_KERNEL_MAX || type == GCTX_EV_VMAS ? gctx_ev_names[type] : NULL;
}
