// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The string escapers: argv, fixed strings, JSON, as used on comms, paths and argv. */
#include <stdint.h>
#include "fuzz_common.h"
#include "lib/json.h"
#include "output/report/print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char small[16], big[2048];
	struct gctx_json *j;

	gctx_format_argv(small, sizeof(small), (const char *)data, (__u32)size);
	gctx_format_argv(big, sizeof(big), (const char *)data, (__u32)size);
	gctx_format_str(small, sizeof(small), (const char *)data, size);
	gctx_format_str(big, sizeof(big), (const char *)data, size);
	gctx_json_escape(small, sizeof(small), (const char *)data, size);
	gctx_json_escape(big, sizeof(big), (const char *)data, size);
	j = gctx_json__new(fuzz_null(), false);
	if (j) {
		gctx_json__obj_begin(j);
		gctx_json__key(j, "k");
		gctx_json__strn(j, (const char *)data, size);
		gctx_json__obj_end(j);
		gctx_json__free(j);
	}
	return 0;
}
