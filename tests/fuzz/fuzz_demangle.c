// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The frame-name demangler on symbol names a traced process's libraries may have crafted:
 * never a crash, and never past its time budget (issue 27: a 536-byte name took 27 s). */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "fuzz_common.h"
#include "lib/demangle.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char small[8], out[96];
	double t0 = now_s();

	gctx_demangle((const char *)data, size, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		__builtin_trap();
	/* the budget, and a margin for a loaded machine (a new helper is forked) */
	if (now_s() - t0 > 4 * GCTX_DEMANGLE_BUDGET_MS / 1000.0 + 1.0)
		__builtin_trap();
	gctx_demangle((const char *)data, size, small, sizeof(small));
	gctx_demangle((const char *)data, size, small, 1);
	return 0;
}
