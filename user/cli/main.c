// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpuctx: which process made this GPU context, who inherited it through fork, who used it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "output/export.h"
#include "model/model.h"
#include "cli/record.h"
#include "output/report.h"
#include "trace/tracefile.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: gpuctx COMMAND [OPTIONS]\n"
		"\n"
		"Commands:\n"
		"  record   trace a command, PIDs, a cgroup or the system into a trace file\n"
		"  report   print the process tree, GPU files, objects and findings of a trace\n"
		"  export   write a trace as a timeline for ui.perfetto.dev or chrome://tracing\n"
		"  version  print the version\n"
		"\n"
		"EXAMPLES:\n"
		"  gpuctx record -o job.gctx -- python train.py\n"
		"  gpuctx report job.gctx\n"
		"  gpuctx report --json job.gctx\n"
		"  gpuctx export -f perfetto -o job.pftrace job.gctx\n"
		"\n"
		"Run 'gpuctx COMMAND --help' for the options of a command.\n");
}

/* Read a whole trace into a model. Returns 0, or 1 with a one-line error printed. */
static int load_trace(const char *path, struct gctx_model **out,
		      struct gctx_trace_meta *meta)
{
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *data;
	__u32 type, len;
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
		if (gctx_model__feed(m, type, data, len) == -EINVAL) {
			fprintf(stderr, "gpuctx: %s: malformed record (type %u, %u bytes) at offset "
				"%llu\n", path, type, len,
				(unsigned long long)gctx_trace_reader__offset(r));
			ret = -1;
			break;
		}
	}
	if (ret < 0) {
		if (gctx_trace_reader__error(r))
			fprintf(stderr, "gpuctx: %s\n", gctx_trace_reader__error(r));
		gctx_model__free(m);
		gctx_trace_reader__free(r);
		return 1;
	}
	if (gctx_trace_reader__truncated(r))
		fprintf(stderr, "gpuctx: warning: %s ends inside a record (recording killed?): "
			"reporting the %llu complete records before it\n", path,
			(unsigned long long)gctx_model__total_events(m));
	gctx_model__finish(m);
	gctx_trace_reader__free(r);
	*out = m;
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct gctx_trace_meta meta;
	struct gctx_model *m = NULL;
	bool json = false;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("Usage: gpuctx report [--json] FILE\n");
			return 0;
		default:
			fprintf(stderr, "Usage: gpuctx report [--json] FILE\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "gpuctx: report needs exactly one trace file\n");
		return 2;
	}
	if (load_trace(argv[optind], &m, &meta))
		return 1;
	ret = json ? gctx_report__json(stdout, m, &meta) : gctx_report__text(stdout, m, &meta);
	if (fflush(stdout) || ret) {
		fprintf(stderr, "gpuctx: writing the report: %s\n", strerror(ret ? -ret : errno));
		ret = 1;
	}
	gctx_model__free(m);
	return ret ? 1 : 0;
}

static int cmd_version(int argc, char **argv)
{
	printf("gpuctx %s (libbpf %s)\n", GPUCTX_VERSION, libbpf_version_string());
	return 0;
}

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "record", cmd_record },
	{ "report", cmd_report },
	{ "export", cmd_export },
	{ "version", cmd_version },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version(argc, argv);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gpuctx: unknown command '%s' (see gpuctx --help)\n", argv[1]);
	return 2;
}
