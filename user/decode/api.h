/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CUDA driver API and HIP runtime functions gpuctx probes: names, arguments, result codes. */
#ifndef __GPUCTX_API_H
#define __GPUCTX_API_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"

enum gctx_api_vendor {
	GCTX_VENDOR_CUDA = 0,
	GCTX_VENDOR_HIP = 1,
};

/* One exported symbol gpuctx knows. */
struct gctx_api_sym {
	const char *name; /* exported name (dynsym name, without @version) */
	enum gctx_api_fn fn;
	__s8 out;    /* index of an output-pointer argument read at return, -1 none */
	__s8 str;    /* index of a string argument read at entry, -1 none */
	bool launch; /* per-launch function: probed only with --launches */
};

const struct gctx_api_sym *gctx_api_syms(__u32 *n);
const struct gctx_api_sym *gctx_api_sym_lookup(const char *name);
/* The function cuGetProcAddress hands out for (symbol, cudaVersion, flags). */
enum gctx_api_fn gctx_api_procaddr_fn(const char *symbol, __u64 version, __u64 flags);
/* Attach cookie for a function (see GCTX_COOKIE_* in gpuctx_events.h). */
__u64 gctx_api_cookie(const struct gctx_api_sym *s, bool entry_only);

const char *gctx_api_fn_name(enum gctx_api_fn fn); /* "cuCtxCreate", "hipMalloc", "?" */
/* The called function's name: its exported name for GCTX_*_OTHER (written into buf, len >=
 * GCTX_API_STR_LEN), else gctx_api_fn_name(). */
const char *gctx_api_ev_name(const struct gctx_ev_api *ev, char *buf, size_t len);
enum gctx_api_vendor gctx_api_vendor(enum gctx_api_fn fn);
bool gctx_api_is_launch(enum gctx_api_fn fn);
/* "CUDA_ERROR_NOT_INITIALIZED" / "hipErrorNotInitialized"; NULL when unknown. */
const char *gctx_api_result_name(enum gctx_api_fn fn, __s64 ret);
/* Device argument of a context-creating call, -1 when the call has none. */
int gctx_api_device_arg(enum gctx_api_fn fn);
/* Size argument of an allocation, -1 when none. */
int gctx_api_size_arg(enum gctx_api_fn fn);

#endif /* __GPUCTX_API_H */
