// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One trace file read whole into a finished model: what report, check, list and the hosts of
 * a command line (hosts.c) start from. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli/cli.h"
#include "model/model.h"
#include "trace/tracefile.h"

int cli_load_trace(const char *path, struct gctx_model **out, struct gctx_trace_meta *meta)
{
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *data;
	__u32 type, len;
	__u32 malformed = 0;
	char err[512];
	int ret;

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	*meta = *gctx_trace_reader__meta(r);
	m = gctx_model__new();
	if (!m) {
		fprintf(stderr, "gpuctx: out of memory\n");
		gctx_trace_reader__free(r);
		return 1;
	}
	while ((ret = gctx_trace_reader__next(r, &type, &data, &len)) == 1) {
		if (gctx_model__feed(m, type, data, len) == -EINVAL && !malformed++)
			fprintf(stderr,
				"gpuctx: warning: %s: malformed record (type %u, %u bytes) "
				"at offset %llu skipped\n",
				path, type, len, (unsigned long long)gctx_trace_reader__offset(r));
	}
	gctx_trace_reader__describe_skips(r, err, sizeof(err));
	if (err[0])
		fprintf(stderr, "gpuctx: warning: %s\n", err);
	if (ret < 0 || (!gctx_model__total_events(m) && (err[0] || malformed))) {
		/* only when nothing at all could be read is the trace refused */
		if (ret < 0)
			fprintf(stderr, "gpuctx: %s\n", gctx_trace_reader__error(r));
		else
			fprintf(stderr, "gpuctx: %s: no readable record\n", path);
		gctx_model__free(m);
		gctx_trace_reader__free(r);
		return 1;
	}
	if (malformed > 1)
		fprintf(stderr, "gpuctx: warning: %s: %u malformed records skipped\n", path,
			malformed);
	if (gctx_trace_reader__truncated(r))
		fprintf(stderr,
			"gpuctx: warning: %s ends inside a record (recording killed?): "
			"reporting the %llu complete records before it\n",
			path, (unsigned long long)gctx_model__total_events(m));
	gctx_model__finish(m);
	gctx_trace_reader__free(r);
	*out = m;
	return 0;
}
