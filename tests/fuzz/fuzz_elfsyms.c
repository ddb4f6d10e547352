// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A library file a traced process could have crafted, through the .dynsym reader. */
#include <stdint.h>
#include <string.h>
#include "lib/elfsyms.h"

static void on_sym(void *ctx, const char *name, __u64 off)
{
	*(size_t *)ctx += strlen(name) + (off & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t total = 0;
	char err[128];

	gctx_elf_dynsyms_mem(data, size, on_sym, &total, err, sizeof(err));
	gctx_elf_funcs_mem(data, size, on_sym, &total, err, sizeof(err));
	return 0;
}
