/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * JUnit XML of a diagnosis, for CI systems: one testcase per incident, failing when the
 * incident is at or above fail_on; one passing testcase when there is none.
 */
#ifndef __GPUCTX_JUNIT_H
#define __GPUCTX_JUNIT_H

#include <stdio.h>
#include "model/analysis.h"

/* fail_on beyond GCTX_SEV_ERROR: nothing fails. Returns 0 or -errno of the write. */
int gctx_junit__write(FILE *out, const struct gctx_analysis *an, enum gctx_severity fail_on,
		      const char *suite);

/* Write to path as every output is written (lib/outfile.h): refused when path is a symlink,
 * a device, a FIFO or a directory; a private file renamed over it once complete. 0, or -1
 * with a one-line reason in err. */
int gctx_junit__write_file(const char *path, const struct gctx_analysis *an,
			   enum gctx_severity fail_on, const char *suite, char *err, size_t errlen);

#endif /* __GPUCTX_JUNIT_H */
