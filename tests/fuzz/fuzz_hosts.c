// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Two traces (or merged ones) read as one job's hosts: taken apart, their clocks aligned, merged
 * into one trace and taken apart again, reported over all hosts and exported with each host a
 * Perfetto machine, as merge, report, check and export do. The input is the first trace's
 * length (4 bytes, little endian), the first trace, then the second.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include "fuzz_common.h"
#include "model/model.h"
#include "output/timeline/export.h"
#include "output/timeline/perfetto.h"
#include "output/report/report.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

#define MAX_HOSTS 8

static struct gctx_model *load(const char *path, struct gctx_trace_meta *meta)
{
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *data;
	__u32 type, len;
	char err[512];

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		return NULL;
	m = gctx_model__new();
	while (m && gctx_trace_reader__next(r, &type, &data, &len) == 1)
		gctx_model__feed(m, type, data, len);
	if (m)
		gctx_model__finish(m);
	*meta = *gctx_trace_reader__meta(r);
	gctx_trace_reader__free(r);
	return m;
}

static void export(const struct gctx_host_file *h, __u32 n, const struct gctx_host_clock *c,
		   __u32 ref)
{
	for (__u32 i = 0; i < n; i++) {
		struct gctx_trace_reader *r;
		struct gctx_tl_sink *s;
		char err[512];

		r = gctx_trace_reader__open(h[i].path, err, sizeof(err));
		if (!r)
			continue;
		s = gctx_perfetto__new_machine(
		    fuzz_null(), i, h[i].label,
		    gctx_hosts__boot_shift(&h[i].meta, &h[ref].meta, c[i].offset_ns));
		if (s) {
			gctx_export_stream(r, h[i].path, s, err, sizeof(err), NULL);
			s->ops->free(s);
		}
		gctx_trace_reader__free(r);
	}
}

/* Merge the hosts into a memory file, as gpuctx merge does, and read that back. */
static void merge(const struct gctx_host_file *h, __u32 n, __u32 ref)
{
	struct gctx_host_file *back;
	struct gctx_trace_writer *w;
	struct gctx_trace_meta meta = h[ref].meta;
	char path[64], err[768], *paths[1] = {path};
	int fd = memfd_create("fuzz-merged", 0), werr;
	__u32 nback;

	if (fd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	w = gctx_trace_writer__new_fd(fcntl(fd, F_DUPFD_CLOEXEC, 0), &meta, &werr);
	for (__u32 i = 0; w && i < n; i++)
		if (gctx_hosts__append(w, i, &h[i], err, sizeof(err)) < 0)
			break;
	if (w)
		gctx_trace_writer__free(w);
	if (!gctx_hosts__open(paths, 1, &back, &nback, err, sizeof(err)))
		gctx_hosts__free(back, nback);
	close(fd);
}

static void job(char **paths, int npaths)
{
	struct gctx_report_host rh[MAX_HOSTS];
	struct gctx_host_clock c[MAX_HOSTS];
	const struct gctx_trace_meta *metas[MAX_HOSTS];
	struct gctx_model *m[MAX_HOSTS] = {0};
	struct gctx_host_file *h;
	__u64 ends[MAX_HOSTS];
	char err[768];
	__u32 n, ref;
	bool all = true;

	if (gctx_hosts__open(paths, npaths, &h, &n, err, sizeof(err)))
		return;
	if (n > MAX_HOSTS)
		n = MAX_HOSTS;
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_rec_end *end;

		metas[i] = &h[i].meta;
		m[i] = load(h[i].path, &h[i].meta);
		end = m[i] ? gctx_model__end(m[i]) : NULL;
		ends[i] = end ? end->end_ns : 0;
	}
	gctx_hosts__align(metas, NULL, n, c);
	ref = gctx_hosts__align(metas, ends, n, c);
	for (__u32 i = 0; i + 1 < n; i++)
		gctx_hosts__same_boot(metas[i], metas[i + 1]);
	for (__u32 i = 0; i < n; i++)
		rh[i] = (struct gctx_report_host){.m = m[i],
						  .meta = metas[i],
						  .clock = &c[i],
						  .label = h[i].label,
						  .source = h[i].source};
	for (__u32 i = 0; i < n; i++)
		all &= m[i] != NULL;
	if (all) {
		gctx_report__hosts_text(fuzz_null(), rh, n);
		gctx_report__hosts_json(fuzz_null(), rh, n);
	}
	export(h, n, c, ref);
	merge(h, n, ref);
	for (__u32 i = 0; i < n; i++)
		gctx_model__free(m[i]);
	gctx_hosts__free(h, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *paths[2];
	__u32 first;

	if (size < 4)
		return 0;
	memcpy(&first, data, 4);
	first = le32toh(first);
	if (first > size - 4)
		first = size - 4;
	paths[0] = (char *)fuzz_as_file_n(0, data + 4, first);
	paths[1] = (char *)fuzz_as_file_n(1, data + 4 + first, size - 4 - first);
	job(paths, 2);
	job(paths, 1); /* one trace: a merged one is taken apart */
	return 0;
}
