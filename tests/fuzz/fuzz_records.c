// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One record of any type (4 bytes of type, then its bytes): the ioctl decoders, the live
 * printer and the model, as gpuctx record runs them on what the kernel sends. */
#include <stdint.h>
#include <string.h>
#include "fuzz_common.h"
#include "decode/decode.h"
#include "model/model.h"
#include "output/report/print.h"
#include "trace/records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gctx_model *m;
	__u32 type;

	if (size < 4)
		return 0;
	memcpy(&type, data, 4);
	type %= 128;
	data += 4;
	size -= 4;
	if (type == GCTX_EV_IOCTL && size >= sizeof(struct gctx_ev_ioctl)) {
		struct gctx_ev_ioctl ev;
		struct gctx_ioctl_desc d;

		memcpy(&ev, data, sizeof(ev));
		gctx_decode_ioctl(&ev, &d);
	}
	gctx_print_event(fuzz_null(), type, data, (__u32)size, 0);
	m = gctx_model__new();
	if (m) {
		gctx_model__feed(m, type, data, (__u32)size);
		gctx_model__feed(m, type, data, (__u32)size);
		gctx_model__finish(m);
	}
	gctx_model__free(m);
	return 0;
}
