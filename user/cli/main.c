// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpuctx: which process made this GPU context, who inherited it through fork, who used it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cli/cli.h"
#include "output/timeline/export.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gpuctx COMMAND [OPTIONS]\n"
	    "\n"
	    "Commands:\n"
	    "  record   trace a command, PIDs, a cgroup or the system into a trace file\n"
	    "  report   print the verdict, incidents, process tree, GPU files and findings\n"
	    "  check    run a command (or read a trace) and fail when GPU state was misused\n"
	    "  export   write a trace as a timeline for ui.perfetto.dev or chrome://tracing\n"
	    "  agent    always on: keep every poison fork's and GPU crash's evidence on a node\n"
	    "  merge    merge the traces of a job's hosts into one trace\n"
	    "  version  print the version\n"
	    "\n"
	    "EXAMPLES:\n"
	    "  gpuctx record -o job.gctx -- python train.py\n"
	    "  gpuctx report job.gctx\n"
	    "  gpuctx report --json job.gctx\n"
	    "  gpuctx check -- python -m pytest tests/\n"
	    "  gpuctx export -f perfetto -o job.pftrace job.gctx\n"
	    "\n"
	    "Run 'gpuctx COMMAND --help' for the options of a command.\n");
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
    {"record", cmd_record}, {"report", cmd_report}, {"export", cmd_export},   {"check", cmd_check},
    {"merge", cmd_merge},   {"agent", cmd_agent},   {"version", cmd_version},
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
