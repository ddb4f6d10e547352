// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The frame-name demangler on symbol names a traced process's libraries may have crafted. */
#include <stdint.h>
#include <string.h>
#include "fuzz_common.h"
#include "lib/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char small[8], out[96];

	gctx_demangle((const char *)data, size, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		__builtin_trap();
	gctx_demangle((const char *)data, size, small, sizeof(small));
	gctx_demangle((const char *)data, size, small, 1);
	return 0;
}
