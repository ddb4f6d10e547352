// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A trace file read through report (text and JSON) and both timeline exports. */
#include <errno.h>
#include <stdint.h>
#include "fuzz_common.h"
#include "model/model.h"
#include "output/timeline/chrome.h"
#include "output/timeline/export.h"
#include "output/timeline/perfetto.h"
#include "output/report/report.h"
#include "trace/tracefile.h"

static void report(const char *path)
{
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *data;
	__u32 type, len;
	char err[512];

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		return;
	m = gctx_model__new();
	while (m && gctx_trace_reader__next(r, &type, &data, &len) == 1)
		gctx_model__feed(m, type, data, len);
	gctx_trace_reader__describe_skips(r, err, sizeof(err));
	if (m) {
		gctx_model__finish(m);
		gctx_report__text(fuzz_null(), m, gctx_trace_reader__meta(r));
		gctx_report__json(fuzz_null(), m, gctx_trace_reader__meta(r));
	}
	gctx_model__free(m);
	gctx_trace_reader__free(r);
}

static void export(const char *path, bool perfetto)
{
	struct gctx_trace_reader *r;
	struct gctx_tl_sink *s;
	char err[512];

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		return;
	s = perfetto ? gctx_perfetto__new(fuzz_null()) : gctx_chrome__new(fuzz_null());
	if (s) {
		gctx_export_stream(r, path, s, err, sizeof(err), NULL);
		s->ops->free(s);
	}
	gctx_trace_reader__free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_as_file(data, size);

	report(path);
	export(path, true);
	export(path, false);
	return 0;
}
