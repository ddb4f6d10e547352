/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * decode/: the decode stage: one file per driver family (nvidia_rm.c, nvidia_uvm.c, amd_kfd.c,
 * drm.c; shared helpers in decode_priv.h) and the CUDA/HIP API tables (api.c). May include lib/
 * and trace/ only: it knows nothing of the model.
 *
 * Decoding of GPU driver ioctls captured by the BPF side: NVIDIA RM escapes and UVM commands,
 * AMD KFD and amdgpu render-node ioctls. Pure C: no BPF, no I/O. Facts come from
 * shared/reference/gpu-facts.md.
 */
#ifndef __GPUCTX_DECODE_H
#define __GPUCTX_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"

/* The GPU object an ioctl created or destroyed. */
enum gctx_obj_kind {
	GCTX_OBJ_NONE = 0,
	GCTX_OBJ_RM_CLIENT,	   /* NV01_ROOT_CLIENT (and ROOT / ROOT_NON_PRIV) */
	GCTX_OBJ_RM_DEVICE,	   /* NV01_DEVICE_0 */
	GCTX_OBJ_RM_SUBDEVICE,	   /* NV20_SUBDEVICE_0 */
	GCTX_OBJ_RM_VASPACE,	   /* FERMI_VASPACE_A */
	GCTX_OBJ_RM_CHANNEL_GROUP, /* KEPLER_CHANNEL_GROUP_A (TSG) */
	GCTX_OBJ_RM_CTXSHARE,	   /* FERMI_CONTEXT_SHARE_A */
	GCTX_OBJ_RM_CHANNEL,	   /* *_CHANNEL_GPFIFO_* */
	GCTX_OBJ_RM_COMPUTE,	   /* *_COMPUTE_* */
	GCTX_OBJ_RM_MEMORY,	   /* memory classes, RM_ALLOC_MEMORY */
	GCTX_OBJ_RM_OTHER,	   /* any other RM class */
	GCTX_OBJ_UVM_SPACE,	   /* UVM_INITIALIZE: a UVM VA space bound to the caller */
	GCTX_OBJ_KFD_PROCESS,	   /* created by opening /dev/kfd (the model makes it on open) */
	GCTX_OBJ_KFD_QUEUE,	   /* KFD CREATE_QUEUE / DESTROY_QUEUE (handle = queue_id) */
	GCTX_OBJ_KFD_MEMORY,	   /* KFD ALLOC/FREE_MEMORY_OF_GPU (handle = memory handle) */
	GCTX_OBJ_DRM_CTX,	   /* amdgpu CTX ALLOC/FREE (handle = ctx_id) */
	GCTX_OBJ_DRM_GEM,	   /* amdgpu GEM_CREATE (handle = gem handle) */
	GCTX_OBJ_MAX,
};

enum gctx_obj_op {
	GCTX_OP_NONE = 0,
	GCTX_OP_CREATE,
	GCTX_OP_DESTROY,
};

struct gctx_ioctl_desc {
	char name[48];	      /* "RM_ALLOC", "UVM_INITIALIZE", "KFD_CREATE_QUEUE", "AMDGPU_CTX";
			       * unknown: "ioctl(type=0x46 nr=0x99 size=16)" (or "uvm(0x1234)") */
	bool known;	      /* name came from a table, not the raw fallback */
	bool has_status;      /* status was read from the parameters (RM, UVM) */
	__u32 status;	      /* driver status (NV_OK = 0) */
	char status_name[40]; /* "NV_OK", "NV_ERR_INVALID_CLIENT", or "0x%x" */
	int err;	      /* errno when the syscall returned < 0, else 0 */
	bool failed;	      /* err != 0, or a status that is an error (NV_WARN_* is not) */
	enum gctx_obj_op op;  /* object effect, only when the call succeeded */
	enum gctx_obj_kind obj_kind;
	__u32 obj_class;  /* RM class id, or 0 */
	__u64 handle;	  /* object handle / queue id / ctx id / memory handle */
	__u64 parent;	  /* RM parent handle, KFD gpu_id, else 0 */
	__u64 client;	  /* RM hClient (hRoot), else 0 */
	__u64 size;	  /* bytes of a memory allocation, else 0 */
	char detail[192]; /* one line of decoded arguments, e.g.
			   * "class=KEPLER_CHANNEL_GROUP_A(0xa06c) client=0xc1d00001
			   * parent=0x5c000002 new=0x5c000010" */
	bool no_text;	  /* decoded by gctx_decode_ioctl_facts: name, status_name and
			   * detail are empty */
};

/* Decode one ioctl record. Never fails: unknown commands get the raw name. */
void gctx_decode_ioctl(const struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d);
/* The same without the text (name, status_name, detail): what the model needs of every call
 * while recording, where formatting the text of each was most of the collector's time. */
void gctx_decode_ioctl_facts(const struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d);

const char *gctx_dev_kind_name(__u32 kind);	      /* "nvidiactl", "nvidia", "nvidia-uvm",
						       * "nvidia-uvm-tools", "kfd", "drm-render", "?" */
int gctx_dev_kind_parse(const char *name);	      /* inverse of the above; -1 when unknown */
const char *gctx_obj_kind_name(enum gctx_obj_kind k); /* "rm-client", "rm-channel-group", ... */
const char *gctx_nv_class_name(__u32 cls);	      /* NULL when unknown */
const char *gctx_nv_status_name(__u32 status);	      /* NULL when unknown */
const char *gctx_nv_ctrl_name(__u32 cmd); /* "NV2080_CTRL_CMD_GPU_GET_INFO_V2"; NULL when unknown */
size_t gctx_nv_ctrl_count(void);	  /* the RM control table, in cmd order (tests) */
__u32 gctx_nv_ctrl_at(size_t i);
const char *gctx_errno_name(int err);  /* "EBADF", "EINVAL", ...; NULL when unknown */
const char *gctx_signal_name(int sig); /* "SIGSEGV", ...; NULL when unknown */

#endif /* __GPUCTX_DECODE_H */
