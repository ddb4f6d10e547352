// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the RM control command names (user/decode/nvidia_rmctrl.c), and the decoder
 * regression on the ioctl sequences the real libcuda 535 issued over the emulated driver
 * (the .ioctls files in tests/realdriver/fixtures/, recorded by tests/realdriver/nvidia.sh): every
 * one of them must have a name.
 */
#include <dirent.h>
#include <stdio.h>

#include "decode_test.h"

#define FIXTURES "tests/realdriver/fixtures"

/* The table is sorted (the lookup is a binary search), without duplicates, and each name
 * belongs to its command's class (bits 31:16): a mistyped number or name shows here. */
static void test_ctrl_table(void **state)
{
	size_t i, n = gctx_nv_ctrl_count();
	char want[16];

	(void)state;
	assert_true(n >= 50);
	for (i = 0; i < n; i++) {
		__u32 cmd = gctx_nv_ctrl_at(i), cls = cmd >> 16;
		const char *name = gctx_nv_ctrl_name(cmd);

		if (i)
			assert_true(gctx_nv_ctrl_at(i - 1) < cmd);
		assert_non_null(name);
		if (cls == 0xcb33)
			snprintf(want, sizeof(want), "NV_CONF_COMPUTE");
		else
			snprintf(want, sizeof(want), "NV%04X", cls);
		if (strncmp(name, want, strlen(want)))
			fail_msg("0x%08x named %s, not %s...", cmd, name, want);
	}
	assert_null(gctx_nv_ctrl_name(0x20809999));
	assert_null(gctx_nv_ctrl_name(0));
	assert_null(gctx_nv_ctrl_name(0xffffffff));
}

static void rm_control(struct gctx_ev_ioctl *ev, __u32 cmd)
{
	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, cmd);
	arg64(ev, 0x10, 0x7ffc00001000ull);
	arg32(ev, 0x18, 40);
	put32(ev->out, 0x1c, 0);
}

static void test_ctrl_named(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	struct gctx_ioctl_desc d;

	rm_control(ev, 0x00000101);
	decode(ev, &d);
	assert_string_equal(d.name, "RM_CONTROL");
	assert_string_equal(d.detail, "cmd=NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION(0x00000101) "
				      "client=0xc1d00001 object=0x5c000002 params_size=40");
	assert_string_equal(d.status_name, "NV_OK");
}

static void test_ctrl_unknown_raw(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	struct gctx_ioctl_desc d;

	rm_control(ev, 0x20809999);
	decode(ev, &d);
	assert_string_equal(d.name, "RM_CONTROL");
	assert_true(d.known);
	assert_contains(d.detail, "cmd=0x20809999 ");
}

/* What bpf/gpuctx.bpf.c copies after the NVOS54 of a client control: the version string behind
 * GET_BUILD_VERSION's pDriverVersionBuffer after its 40 bytes; the GPU ids of ATTACH_IDS. */
static void test_ctrl_params_build_version(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	struct gctx_ioctl_desc d;

	rm_control(ev, 0x00000101);
	ev->len = GCTX_IOCTL_BYTES;
	put32(ev->out, 0x20, 64);		  /* sizeOfStrings */
	put64(ev->out, 0x28, 0x7ffc00002000ull);  /* pDriverVersionBuffer */
	memcpy(ev->out + 0x48, "535.261.03", 11); /* the string, read by BPF */
	decode(ev, &d);
	assert_string_equal(d.detail, "cmd=NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION(0x00000101) "
				      "client=0xc1d00001 object=0x5c000002 params_size=40 "
				      "version=\"535.261.03\"");
}

static void test_ctrl_params_gpu_ids(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	struct gctx_ioctl_desc d;
	unsigned int i;

	rm_control(ev, 0x00000215); /* GPU_ATTACH_IDS {gpuIds[32]; failedId} */
	ev->len = GCTX_IOCTL_BYTES;
	for (i = 0x20; i < GCTX_IOCTL_BYTES; i += 4)
		put32(ev->out, i, 0xffffffff);
	put32(ev->out, 0x20, 0x1b00);
	put32(ev->out, 0x24, 0x4100);
	decode(ev, &d);
	assert_contains(d.detail, " gpu_ids=0x1b00,0x4100");
	/* without the copy (an older trace, or a control BPF does not copy): nothing invented */
	ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	rm_control(ev, 0x00000215);
	decode(ev, &d);
	assert_not_contains(d.detail, "gpu_ids");
	/* a failed control: its parameters are not a result */
	ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	rm_control(ev, 0x00000215);
	ev->len = GCTX_IOCTL_BYTES;
	put32(ev->out, 0x20, 0x1b00);
	put32(ev->out, 0x1c, 0x1f);
	decode(ev, &d);
	assert_not_contains(d.detail, "gpu_ids");
}

/* NVOS46 as libcuda 535 sends it (0x38 bytes): dmaOffset @0x28 out, status @0x30. */
static void test_map_memory_dma_535(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, 0xC0384657u);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, 0x5c0000ad);
	arg32(ev, 0xc, 0x5c0000ac);
	arg64(ev, 0x18, 2 << 20);
	put64(ev->out, 0x28, 0x7f0000200000ull);
	put32(ev->out, 0x30, 0x1f);
	decode(ev, &d);
	assert_string_equal(d.name, "RM_MAP_MEMORY_DMA");
	assert_string_equal(d.detail, "client=0xc1d00001 device=0x5c000002 dma=0x5c0000ad "
				      "memory=0x5c0000ac dma_offset=0x7f0000200000");
	assert_true(d.has_status);
	assert_string_equal(d.status_name, "NV_ERR_INVALID_ARGUMENT");
	assert_true(d.failed);
}

/*
 * One fixture line: "DEVICE CMD [CONTROL]": the device kind (nvidiactl, nvidia, nvidia-uvm),
 * the ioctl command as issued, and for RM_CONTROL the control command. Decodes it; false with
 * the reason in @why when it has no name.
 */
static bool fixture_call(void **state, const char *line, char *why, size_t whysz)
{
	char dev[32];
	unsigned int cmd, ctrl = 0;
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;
	int kind, n;

	n = sscanf(line, "%31s %x %x", dev, &cmd, &ctrl);
	assert_true(n >= 2);
	kind = gctx_dev_kind_parse(dev);
	assert_true(kind > 0);
	ev = ev_new(state, kind, cmd);
	memset(ev->in, 0, sizeof(ev->in));
	memset(ev->out, 0, sizeof(ev->out));
	if (n == 3)
		rm_control(ev, ctrl);
	decode(ev, &d);
	if (!d.known)
		snprintf(why, whysz, "no name: %s", d.name);
	else if (n == 3 && !gctx_nv_ctrl_name(ctrl))
		snprintf(why, whysz, "RM control 0x%08x has no name (%s)", ctrl, d.detail);
	else
		return true;
	return false;
}

static void test_fixtures_named(void **state)
{
	char line[256], why[256], path[512];
	int files = 0, calls = 0, bad = 0;
	struct dirent *e;
	DIR *dir;
	FILE *f;

	dir = opendir(FIXTURES);
	assert_non_null(dir);
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);

		if (len < 8 || strcmp(e->d_name + len - 7, ".ioctls"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", FIXTURES, e->d_name);
		f = fopen(path, "r");
		assert_non_null(f);
		files++;
		while (fgets(line, sizeof(line), f)) {
			if (line[0] == '#' || line[0] == '\n')
				continue;
			calls++;
			if (!fixture_call(state, line, why, sizeof(why))) {
				bad++;
				fprintf(stderr, "%s: %s", path, line);
				fprintf(stderr, "  %s\n", why);
			}
		}
		fclose(f);
	}
	closedir(dir);
	assert_true(files >= 1);
	assert_true(calls >= 100);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ctrl_table),
	    T(test_ctrl_named),
	    T(test_ctrl_unknown_raw),
	    T(test_ctrl_params_build_version),
	    T(test_ctrl_params_gpu_ids),
	    T(test_map_memory_dma_535),
	    T(test_fixtures_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
