// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names of NVIDIA RM control commands (NVOS54.cmd of NV_ESC_RM_CONTROL), as in NVIDIA's
 * open-gpu-kernel-modules 535 headers (src/common/sdk/nvidia/inc/ctrl/): at least every command
 * the real libcuda 535 issues in tests/realdriver/ runs, and those the project's workloads use.
 * A command is class << 16 | category << 8 | index (ctrlxxxx.h). The few that libcuda sends and
 * the open headers do not define are named NVxxxx_CTRL_CMD_UNPUBLISHED_<cmd>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "decode/decode_priv.h"

struct nv_ctrl {
	__u32 cmd;
	const char *name;
};

/* sorted by cmd (test_nvidia_rmctrl checks it) */
/* clang-format off */
static const struct nv_ctrl nv_ctrls[] = {
	{ 0x00000101, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION" },
	{ 0x0000013e, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2" },
	{ 0x00000201, "NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS" },
	{ 0x00000202, "NV0000_CTRL_CMD_GPU_GET_ID_INFO" },
	{ 0x00000205, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2" },
	{ 0x00000214, "NV0000_CTRL_CMD_GPU_GET_PROBED_IDS" },
	{ 0x00000215, "NV0000_CTRL_CMD_GPU_ATTACH_IDS" },
	{ 0x00000216, "NV0000_CTRL_CMD_GPU_DETACH_IDS" },
	{ 0x0000021b, "NV0000_CTRL_CMD_GPU_GET_PCI_INFO" },
	{ 0x0000027b, "NV0000_CTRL_CMD_GPU_GET_MEMOP_ENABLE" },
	{ 0x00000a04, "NV0000_CTRL_CMD_SYNC_GPU_BOOST_GROUP_INFO" },
	{ 0x00000d01, "NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE" },
	{ 0x00000d04, "NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY" },
	{ 0x00000d06, "NV0000_CTRL_CMD_CLIENT_SHARE_OBJECT" },
	{ 0x00800280, "NV0080_CTRL_CMD_GPU_GET_NUM_SUBDEVICES" },
	{ 0x00800289, "NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE" },
	{ 0x0080028b, "NV0080_CTRL_CMD_UNPUBLISHED_0080028B" },
	{ 0x00800292, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2" },
	{ 0x00801307, "NV0080_CTRL_CMD_FB_GET_CAPS_V2" },
	{ 0x00801402, "NV0080_CTRL_CMD_HOST_GET_CAPS_V2" },
	{ 0x0080170d, "NV0080_CTRL_CMD_FIFO_GET_CHANNELLIST" },
	{ 0x00809909, "NV0080_CTRL_CMD_UNPUBLISHED_00809909" },
	{ 0x20800102, "NV2080_CTRL_CMD_GPU_GET_INFO_V2" },
	{ 0x20800110, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING" },
	{ 0x20800111, "NV2080_CTRL_CMD_GPU_GET_SHORT_NAME_STRING" },
	{ 0x20800119, "NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO" },
	{ 0x20800124, "NV2080_CTRL_CMD_GPU_GET_ENGINE_CLASSLIST" },
	{ 0x2080012f, "NV2080_CTRL_CMD_GPU_QUERY_ECC_STATUS" },
	{ 0x20800131, "NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES" },
	{ 0x20800145, "NV2080_CTRL_CMD_UNPUBLISHED_20800145" },
	{ 0x20800146, "NV2080_CTRL_CMD_UNPUBLISHED_20800146" },
	{ 0x2080014a, "NV2080_CTRL_CMD_GPU_GET_GID_INFO" },
	{ 0x20800170, "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2" },
	{ 0x2080018b, "NV2080_CTRL_CMD_GPU_GET_ACTIVE_PARTITION_IDS" },
	{ 0x208001a3, "NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO" },
	{ 0x20801201, "NV2080_CTRL_CMD_GR_GET_INFO" },
	{ 0x20801210, "NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE" },
	{ 0x2080121b, "NV2080_CTRL_CMD_GR_GET_GLOBAL_SM_ORDER" },
	{ 0x20801227, "NV2080_CTRL_CMD_GR_GET_CAPS_V2" },
	{ 0x2080122a, "NV2080_CTRL_CMD_GR_GET_GPC_MASK" },
	{ 0x2080122b, "NV2080_CTRL_CMD_GR_GET_TPC_MASK" },
	{ 0x20801230, "NV2080_CTRL_CMD_GR_GET_SM_ISSUE_RATE_MODIFIER" },
	{ 0x20801303, "NV2080_CTRL_CMD_FB_GET_INFO_V2" },
	{ 0x20801701, "NV2080_CTRL_CMD_MC_GET_ARCH_INFO" },
	{ 0x20801702, "NV2080_CTRL_CMD_MC_SERVICE_INTERRUPTS" },
	{ 0x20801801, "NV2080_CTRL_CMD_BUS_GET_PCI_INFO" },
	{ 0x20801803, "NV2080_CTRL_CMD_BUS_GET_PCI_BAR_INFO" },
	{ 0x20801823, "NV2080_CTRL_CMD_BUS_GET_INFO_V2" },
	{ 0x2080182a, "NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS" },
	{ 0x2080182b, "NV2080_CTRL_CMD_BUS_GET_C2C_INFO" },
	{ 0x2080200a, "NV2080_CTRL_CMD_PERF_BOOST" },
	{ 0x2080220c, "NV2080_CTRL_CMD_RC_RELEASE_WATCHDOG_REQUESTS" },
	{ 0x20802210, "NV2080_CTRL_CMD_RC_SOFT_DISABLE_WATCHDOG" },
	{ 0x20802a0a, "NV2080_CTRL_CMD_CE_GET_ALL_CAPS" },
	{ 0x20803002, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS" },
	{ 0x20803601, "NV2080_CTRL_CMD_GSP_GET_FEATURES" },
	{ 0x20808159, "NV2080_CTRL_CMD_UNPUBLISHED_20808159" },
	{ 0x20808161, "NV2080_CTRL_CMD_UNPUBLISHED_20808161" },
	{ 0x83de0309, "NV83DE_CTRL_CMD_DEBUG_SET_EXCEPTION_MASK" },
	{ 0x906f0102, "NV906F_CTRL_CMD_RESET_CHANNEL" },
	{ 0xa06c0101, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE" },
	{ 0xa06c0103, "NVA06C_CTRL_CMD_SET_TIMESLICE" },
	{ 0xa06c0105, "NVA06C_CTRL_CMD_PREEMPT" },
	{ 0xc36f0101, "NVC36F_CTRL_GET_CLASS_ENGINEID" },
	{ 0xc36f0108, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN" },
	{ 0xcb330101, "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES" },
};
/* clang-format on */

static int ctrl_cmp(const void *key, const void *elem)
{
	__u32 k = *(const __u32 *)key, c = ((const struct nv_ctrl *)elem)->cmd;

	return k < c ? -1 : k > c;
}

const char *gctx_nv_ctrl_name(__u32 cmd)
{
	const struct nv_ctrl *c =
	    bsearch(&cmd, nv_ctrls, ARRAY_SIZE(nv_ctrls), sizeof(nv_ctrls[0]), ctrl_cmp);

	return c ? c->name : NULL;
}

size_t gctx_nv_ctrl_count(void)
{
	return ARRAY_SIZE(nv_ctrls);
}

__u32 gctx_nv_ctrl_at(size_t i)
{
	return i < ARRAY_SIZE(nv_ctrls) ? nv_ctrls[i].cmd : 0;
}

#define NVOS54_SIZE	 0x20
#define NV_INVALID_GPUID 0xffffffffu

/* "gpu_ids=0x1b00,..." from an array of gpu ids (NV0000_CTRL_GPU_INVALID_ID ends it). */
static void add_gpu_ids(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 n)
{
	char buf[100];
	size_t used = 0;
	__u32 i, id;

	buf[0] = '\0';
	for (i = 0; i < n && used < sizeof(buf) - 12; i++) {
		if (!dec_get_u32(c, RES, NVOS54_SIZE + 4 * i, &id) || id == NV_INVALID_GPUID)
			break;
		used += snprintf(buf + used, sizeof(buf) - used, "%s0x%x", i ? "," : "", id);
	}
	if (i)
		dec_add(d, "gpu_ids=%s", buf);
	else if (dec_get_u32(c, RES, NVOS54_SIZE, &id))
		dec_add(d, "gpu_ids=none");
}

/*
 * The parameters that identify a driver and its GPUs, for the client controls whose parameters
 * the BPF side copies after the NVOS54 (bpf/gpuctx.bpf.c, read_ctrl_params).
 */
void dec_nv_ctrl_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 cmd)
{
	char s[64];
	__u32 v, w;
	__u16 bus;

	if (d->no_text || c->avail <= NVOS54_SIZE)
		return;
	switch (cmd) {
	case 0x00000101: /* GET_BUILD_VERSION: the string behind pDriverVersionBuffer, after 40 */
		if (dec_get_string(c, RES, NVOS54_SIZE + 40, 24, s, sizeof(s)) && s[0])
			dec_add(d, "version=\"%s\"", s);
		break;
	case 0x0000013e: /* GET_BUILD_VERSION_V2: driverVersionBuffer[256] inline */
		if (dec_get_string(c, RES, NVOS54_SIZE, 64, s, sizeof(s)) && s[0])
			dec_add(d, "version=\"%s\"", s);
		break;
	case 0x00000201: /* GPU_GET_ATTACHED_IDS */
	case 0x00000214: /* GPU_GET_PROBED_IDS */
	case 0x00000215: /* GPU_ATTACH_IDS */
	case 0x00000216: /* GPU_DETACH_IDS */
		add_gpu_ids(c, d, 16);
		break;
	case 0x00000202: /* GPU_GET_ID_INFO */
	case 0x00000205: /* GPU_GET_ID_INFO_V2: gpuId, gpuFlags, deviceInstance */
		if (dec_get_u32(c, RES, NVOS54_SIZE, &v))
			dec_add(d, "gpu_id=0x%x", v);
		if (dec_get_u32(c, RES, NVOS54_SIZE + 8, &w))
			dec_add(d, "device_instance=%u", w);
		break;
	case 0x0000021b: /* GPU_GET_PCI_INFO: gpuId, domain, u16 bus, u16 slot */
		if (dec_get_u32(c, RES, NVOS54_SIZE, &v))
			dec_add(d, "gpu_id=0x%x", v);
		if (dec_get_u32(c, RES, NVOS54_SIZE + 4, &w) &&
		    dec_get_u16(c, RES, NVOS54_SIZE + 8, &bus))
			dec_add(d, "pci=%04x:%02x", w, bus);
		break;
	}
}
