// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record's command line: the options, their defaults, and the checks made before
 * anything is loaded (one mode of following, the processes exist, values in range).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collect/collector.h"
#include "collect/discover.h"
#include "cli/record.h"

#define MAX_DURATION_S (366.0 * 24 * 3600) /* --duration: a year at most */

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gpuctx record [-o FILE] [-p PID[,PID...]] [--cgroup DIR] [-a]\n"
	    "                     [--device PATH:KIND]... [--duration SECONDS] [-q] [-v]\n"
	    "                     [-- CMD [ARG...]]\n"
	    "\n"
	    "Trace process lineage and GPU device file use; write a trace file.\n"
	    "\n"
	    "  -o, --output FILE       trace file to write (default gpuctx.gctx)\n"
	    "  -p, --pid PID[,PID...]  attach to running processes and their descendants\n"
	    "      --cgroup DIR        follow every process in a cgroup v2 directory\n"
	    "  -a, --all               follow every process on the system\n"
	    "      --device PATH:KIND  treat PATH as a GPU device file; KIND is one of\n"
	    "                          nvidiactl, nvidia, nvidia-uvm, kfd, drm-render\n"
	    "      --duration SECONDS  stop after this long (at most a year)\n"
	    "      --libcuda PATH      probe this CUDA driver library (libcuda.so.1) too\n"
	    "      --libhip PATH       probe this HIP runtime library (libamdhip64.so) too\n"
	    "      --launches          also count kernel launches (a probe per launch)\n"
	    "      --no-api            do not probe the CUDA/HIP libraries\n"
	    "      --no-stacks         no call stacks at GPU init, fork, inherited use, crash\n"
	    "      --no-hold           never stop a process that maps a CUDA/HIP library not\n"
	    "                          probed yet (its first calls may then be missed: reported)\n"
	    "      --hold-timeout MS   resume such a process after MS at most (default 500)\n"
	    "      --ring-size SIZE    kernel-to-gpuctx buffer, a power of two from 256K to\n"
	    "                          1G (default 8M): larger if events are lost\n"
	    "      --from-agent        with -p or --cgroup: take the trace from the running\n"
	    "                          gpuctx agent (its history, then live), load nothing\n"
	    "      --run-dir DIR       with --from-agent: the agent started with this --run-dir\n"
	    "                          (default /run/gpuctx, the node's)\n"
	    "      --perfetto FILE     also export the timeline for ui.perfetto.dev at the end\n"
	    "      --chrome FILE       also export a Chrome JSON timeline at the end\n"
	    "  -q, --quiet             do not print events as they happen\n"
	    "  -v, --verbose           libbpf debug output\n"
	    "\n"
	    "With -- CMD, SIGINT and SIGTERM are passed on to the command and recording goes on\n"
	    "until it exits (at most 10 s; a second signal stops at once).\n"
	    "\n"
	    "EXAMPLES:\n"
	    "  gpuctx record -o job.gctx -- python train.py\n"
	    "  gpuctx record -p 1234 --duration 60\n");
}

static int parse_pids(struct record_env *env, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(tok, &end, 10);
		if (errno || *end || pid <= 0 || pid > 0x3fffffff) {
			fprintf(stderr, "gpuctx: bad pid '%s'\n", tok);
			ret = -1;
			break;
		}
		gctx_pidset__add(&env->pids, pid);
	}
	free(copy);
	return ret;
}

enum {
	OPT_CGROUP = 1000,
	OPT_DEVICE,
	OPT_DURATION,
	OPT_LIB,
	OPT_LAUNCHES,
	OPT_NO_API,
	OPT_NO_STACKS,
	OPT_PERFETTO,
	OPT_CHROME,
	OPT_SILENT,
	OPT_NO_HOLD,
	OPT_HOLD_TIMEOUT,
	OPT_RING_SIZE,
	OPT_FROM_AGENT,
	OPT_RUN_DIR,
};

int record_parse_args(struct record_env *env, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"pid", required_argument, NULL, 'p'},
	    {"cgroup", required_argument, NULL, OPT_CGROUP},
	    {"all", no_argument, NULL, 'a'},
	    {"device", required_argument, NULL, OPT_DEVICE},
	    {"duration", required_argument, NULL, OPT_DURATION},
	    {"libcuda", required_argument, NULL, OPT_LIB},
	    {"libhip", required_argument, NULL, OPT_LIB},
	    {"launches", no_argument, NULL, OPT_LAUNCHES},
	    {"no-api", no_argument, NULL, OPT_NO_API},
	    {"no-stacks", no_argument, NULL, OPT_NO_STACKS},
	    {"perfetto", required_argument, NULL, OPT_PERFETTO},
	    {"chrome", required_argument, NULL, OPT_CHROME},
	    {"no-hold", no_argument, NULL, OPT_NO_HOLD},
	    {"hold-timeout", required_argument, NULL, OPT_HOLD_TIMEOUT},
	    {"ring-size", required_argument, NULL, OPT_RING_SIZE},
	    {"from-agent", no_argument, NULL, OPT_FROM_AGENT},
	    {"run-dir", required_argument, NULL, OPT_RUN_DIR},
	    {"quiet", no_argument, NULL, 'q'},
	    {"silent", no_argument, NULL, OPT_SILENT},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	char err[256], *end;
	int c, modes;

	env->output = "gpuctx.gctx";
	env->hold_timeout_ms = 500;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:p:aqvh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!strcmp(optarg, "-")) {
				fprintf(stderr,
					"gpuctx: record writes a trace file, not standard "
					"output: give -o FILE (export -o - writes to stdout)\n");
				return -1;
			}
			env->output = optarg;
			break;
		case 'p':
			if (parse_pids(env, optarg))
				return -1;
			break;
		case OPT_CGROUP:
			env->cgroup = optarg;
			break;
		case 'a':
			env->all = true;
			break;
		case OPT_DEVICE:
			if (env->ndevs == GCTX_MAX_REGDEVS) {
				fprintf(stderr, "gpuctx: too many --device (max %d)\n",
					GCTX_MAX_REGDEVS);
				return -1;
			}
			if (gctx_parse_device(optarg, &env->devs[env->ndevs], err, sizeof(err))) {
				fprintf(stderr, "gpuctx: %s\n", err);
				return -1;
			}
			env->ndevs++;
			break;
		case OPT_DURATION:
			errno = 0;
			env->duration = strtod(optarg, &end);
			/* inf, nan and huge values would overflow the deadline in ns */
			if (errno || end == optarg || *end || !isfinite(env->duration) ||
			    env->duration <= 0 || env->duration > MAX_DURATION_S) {
				fprintf(stderr,
					"gpuctx: bad --duration '%s': want seconds, more than 0 "
					"and at most %.0f (a year)\n",
					optarg, MAX_DURATION_S);
				return -1;
			}
			break;
		case OPT_LIB:
			if (env->nlibs == sizeof(env->libs) / sizeof(env->libs[0])) {
				fprintf(stderr, "gpuctx: too many --libcuda/--libhip\n");
				return -1;
			}
			if (access(optarg, R_OK)) {
				fprintf(stderr, "gpuctx: cannot read library %s: %s\n", optarg,
					strerror(errno));
				return -1;
			}
			env->libs[env->nlibs++] = optarg;
			break;
		case OPT_LAUNCHES:
			env->launches = true;
			break;
		case OPT_NO_API:
			env->no_api = true;
			break;
		case OPT_NO_STACKS:
			env->no_stacks = true;
			break;
		case OPT_PERFETTO:
			env->perfetto = optarg;
			break;
		case OPT_CHROME:
			env->chrome = optarg;
			break;
		case OPT_NO_HOLD:
			env->no_hold = true;
			break;
		case OPT_HOLD_TIMEOUT: {
			long ms;

			errno = 0;
			ms = strtol(optarg, &end, 10);
			if (errno || *end || ms < 1 || ms > 10000) {
				fprintf(stderr,
					"gpuctx: bad --hold-timeout '%s': want 1 to 10000 "
					"milliseconds\n",
					optarg);
				return -1;
			}
			env->hold_timeout_ms = ms;
			break;
		}
		case OPT_RING_SIZE:
			if (gctx_ring_size_parse(optarg, &env->ring_bytes)) {
				fprintf(stderr,
					"gpuctx: bad --ring-size '%s': want a power of two "
					"from 256K to 1G, such as 64M (default 8M)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_FROM_AGENT:
			env->from_agent = true;
			break;
		case OPT_RUN_DIR:
			env->run_dir = optarg;
			break;
		case 'q':
			env->quiet = true;
			break;
		case OPT_SILENT:
			env->quiet = env->silent = true;
			break;
		case 'v':
			env->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		env->cmd = &argv[optind];
	if (env->run_dir && !env->from_agent) {
		fprintf(stderr, "gpuctx: --run-dir names the agent --from-agent asks\n");
		return -1;
	}
	if (env->from_agent && (env->cmd || env->all)) {
		fprintf(stderr, "gpuctx: --from-agent takes -p or --cgroup: the agent already "
				"follows every process\n");
		return -1;
	}
	/* the agent may still hold the history of one that exited: it answers for it */
	for (__u32 i = 0; !env->from_agent && i < env->pids.n; i++) {
		if (kill(env->pids.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "gpuctx: no such process: %u\n", env->pids.pids[i]);
			return -1;
		}
	}
	modes = !!env->cmd + !!env->pids.n + !!env->cgroup + env->all;
	if (modes == 0) {
		fprintf(stderr, "gpuctx: nothing to trace: give a command, -p PID, --cgroup DIR "
				"or -a (see gpuctx record --help)\n");
		return -1;
	}
	if (modes > 1) {
		fprintf(stderr, "gpuctx: choose one of a command, -p, --cgroup or -a\n");
		return -1;
	}
	return 0;
}
